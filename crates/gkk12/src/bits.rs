//! The two-party protocol's computation in the clear: the ORAM held as bit strings and every
//! access run through the [circuits](crate::circuits) by plaintext evaluation.
//!
//! [`BitOram`] performs exactly the steps, circuits and random choices of the two-party
//! protocol, with bits in place of wire labels, and draws its randomness in the same order
//! as [`PlainTreeOram`]: started from the same state with the same random source, both hold
//! the same bits after every access. That equality is what checks the circuits against the
//! paper's algorithm.

use doram_twopc::TwopcError;
use doram_twopc::builder::GateCounts;
use rand_core::RngCore;

use crate::circuits::{
    SlotCodec, StepCircuit, base_circuit, evict_circuit, lookup_circuit_with, value,
};
use crate::params::Params;
use crate::plain::{AccessError, Op, Overflow, PlainTreeOram, check_access, words_for};
use crate::tree::{eviction_schedule, path, uniform_below};

/// Every circuit one ORAM needs, built once.
#[derive(Clone, Debug)]
pub struct Circuits {
    /// The base-map scan.
    pub base: StepCircuit,
    /// The path lookup of each tree.
    pub lookup: Vec<StepCircuit>,
    /// The eviction circuits of each tree, one per depth 0 … h − 1.
    pub evict: Vec<Vec<StepCircuit>>,
}

impl Circuits {
    /// Builds them.
    ///
    /// # Errors
    /// Only if a circuit cannot be built (more than 2^32 wires).
    pub fn new(params: &Params) -> Result<Circuits, TwopcError> {
        Circuits::with_sparse(params, false)
    }

    /// The circuits of an ORAM whose blocks may be absent if `sparse`
    /// ([`lookup_circuit_with`]); [`Circuits::new`] otherwise.
    ///
    /// # Errors
    /// As [`Circuits::new`].
    pub fn with_sparse(params: &Params, sparse: bool) -> Result<Circuits, TwopcError> {
        let mut lookup = Vec::with_capacity(params.trees());
        let mut evict = Vec::with_capacity(params.trees());
        for i in 0..params.trees() {
            lookup.push(lookup_circuit_with(params, i, sparse)?);
            let g = params.tree(i);
            evict.push(
                (0..g.height)
                    .map(|l| evict_circuit(&g, l))
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(Circuits {
            base: base_circuit(params)?,
            lookup,
            evict,
        })
    }

    /// Gates of one access: the base scan, every tree's lookup and its 2h evictions.
    pub fn per_access(&self) -> GateCounts {
        let mut total = GateCounts::of(&self.base.circuit);
        for c in self.per_tree() {
            add(&mut total, c);
        }
        total
    }

    /// Gates of one access in each tree: its lookup and its 2h evictions.
    pub fn per_tree(&self) -> Vec<GateCounts> {
        self.lookup
            .iter()
            .zip(&self.evict)
            .map(|(lookup, evict)| {
                let mut total = GateCounts::of(&lookup.circuit);
                for e in evict {
                    let c = GateCounts::of(&e.circuit);
                    add(&mut total, c);
                    add(&mut total, c);
                }
                total
            })
            .collect()
    }
}

fn add(total: &mut GateCounts, c: GateCounts) {
    total.and += c.and;
    total.xor += c.xor;
    total.inv += c.inv;
}

/// The ORAM as bit strings, accessed through the circuits ([module docs](self)).
#[derive(Clone, Debug)]
pub struct BitOram {
    params: Params,
    codecs: Vec<SlotCodec>,
    trees: Vec<Vec<bool>>,
    base: Vec<bool>,
    circuits: Circuits,
    poisoned: bool,
}

fn bits_of(x: u64, n: usize) -> impl Iterator<Item = bool> {
    (0..n).map(move |k| (x >> k) & 1 == 1)
}

impl BitOram {
    /// The state of `plain`, as bits.
    ///
    /// # Errors
    /// Only if a circuit cannot be built.
    pub fn new(plain: &PlainTreeOram) -> Result<BitOram, TwopcError> {
        let params = *plain.params();
        let codecs: Vec<SlotCodec> = (0..params.trees())
            .map(|i| SlotCodec::new(&params, i))
            .collect();
        let trees = codecs
            .iter()
            .enumerate()
            .map(|(i, codec)| {
                let tree = plain.tree(i);
                let mut bits = Vec::with_capacity(tree.slots().len() * codec.slot_bits());
                for (s, slot) in tree.slots().iter().enumerate() {
                    codec.encode(slot, tree.payload(s), &mut bits);
                }
                bits
            })
            .collect();
        let w = params.base_entry_bits() as usize;
        let base = plain.base().iter().flat_map(|&l| bits_of(l, w)).collect();
        Ok(BitOram {
            params,
            codecs,
            trees,
            base,
            circuits: Circuits::new(&params)?,
            poisoned: false,
        })
    }

    /// The circuits.
    pub fn circuits(&self) -> &Circuits {
        &self.circuits
    }

    /// Whether it holds the same bits as `plain`.
    pub fn same_state_as(&self, plain: &PlainTreeOram) -> bool {
        let Ok(other) = BitOram::new(plain) else {
            return false;
        };
        self.trees == other.trees && self.base == other.base
    }

    /// One access, as [`PlainTreeOram::access`].
    ///
    /// # Errors
    /// As [`PlainTreeOram::access`].
    pub fn access<R: RngCore + ?Sized>(
        &mut self,
        v: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, AccessError> {
        check_access(&self.params, self.poisoned, v, op)?;
        let out = self.access_checked(v, op, rng);
        self.poisoned = out.is_err();
        Ok(out?)
    }

    fn access_checked<R: RngCore + ?Sized>(
        &mut self,
        v: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, Overflow> {
        let p = self.params;
        let last = p.trees() - 1;
        // [GKK12 §4.1, step 4].
        let fresh = uniform_below(rng, p.tree(last).leaves());
        let c = &self.circuits.base;
        let mut input = self.base.clone();
        input.extend(bits_of(p.address_in(v, last), p.tree(last).height as usize));
        input.extend(bits_of(fresh, p.base_entry_bits() as usize));
        let out = eval(c, &input);
        self.base = out[c.layout.output("map")].to_vec();
        let mut leaf = value(&out[c.layout.output("leaf")]);
        let mut fresh = fresh;
        for i in (0..=last).rev() {
            let below = (i > 0).then(|| uniform_below(rng, p.tree(i - 1).leaves()));
            let g = p.tree(i);
            let h = g.height as usize;
            let s = self.codecs[i].slot_bits();
            let slots: Vec<usize> = path(g.height, leaf)
                .flat_map(|bucket| bucket * g.bucket..(bucket + 1) * g.bucket)
                .collect();
            let mut input = Vec::new();
            for &slot in &slots {
                input.extend_from_slice(&self.trees[i][slot * s..(slot + 1) * s]);
            }
            input.extend(bits_of(p.address_in(v, i), h));
            input.extend(bits_of(fresh, h));
            if let Some(below) = below {
                input.extend(bits_of(p.entry_in(v, i) as u64, 4));
                input.extend(bits_of(below, p.tree(i - 1).height as usize));
            } else {
                input.push(matches!(op, Op::Write(_)));
                let data = match op {
                    Op::Read => vec![0; words_for(g.payload_bits)],
                    Op::Write(d) => d.to_vec(),
                };
                input.extend((0..g.payload_bits).map(|k| (data[k / 64] >> (k % 64)) & 1 == 1));
            }
            let c = &self.circuits.lookup[i];
            let out = eval(c, &input);
            if out[c.layout.output("overflow")][0] {
                return Err(Overflow { tree: i });
            }
            for (k, &slot) in slots.iter().enumerate() {
                let new = &out[c.layout.output("path")][k * s..(k + 1) * s];
                self.trees[i][slot * s..(slot + 1) * s].copy_from_slice(new);
            }
            let result = match below {
                Some(_) => value(&out[c.layout.output("leaf")]),
                None => 0,
            };
            let data: Vec<u64> = match below {
                Some(_) => Vec::new(),
                None => out[c.layout.output("data")].chunks(64).map(value).collect(),
            };
            self.evict(i, rng);
            match below {
                Some(below) => {
                    leaf = result;
                    fresh = below;
                }
                None => return Ok(data),
            }
        }
        unreachable!("the loop returns at tree 0")
    }

    fn evict<R: RngCore + ?Sized>(&mut self, i: usize, rng: &mut R) {
        let g = self.params.tree(i);
        let s = self.codecs[i].slot_bits();
        let width = g.bucket * s;
        for (level, bucket) in eviction_schedule(g.height, rng) {
            let buckets = [bucket, 2 * bucket + 1, 2 * bucket + 2];
            let mut input = Vec::with_capacity(3 * width);
            for k in buckets {
                input.extend_from_slice(&self.trees[i][k * width..(k + 1) * width]);
            }
            let c = &self.circuits.evict[i][level as usize];
            let out = eval(c, &input);
            for (k, name) in buckets.into_iter().zip(["parent", "left", "right"]) {
                self.trees[i][k * width..(k + 1) * width]
                    .copy_from_slice(&out[c.layout.output(name)]);
            }
        }
    }
}

fn eval(c: &StepCircuit, input: &[bool]) -> Vec<bool> {
    c.circuit
        .eval_plain(&[], input)
        .expect("inputs are laid out as the circuit declares them")
}
