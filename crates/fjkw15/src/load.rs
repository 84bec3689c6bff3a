//! The shared initial load (FJKW15 leaves it open, notes Q15; our design): D and E start from
//! XOR shares of the records and end with a forest in the state of a normal run — every item
//! on an i.i.d. uniform leaf that no party knows — without any party ever seeing the layout.
//!
//! # Requirement
//! Every party learns the labels of the paths an access reads (C learns L_{i+1} and sends it
//! to D and E, notes Q12). A tree ORAM is secure only if the label an access reveals is
//! uniform and independent of everything seen before, so at the end of the load each item's
//! label must be i.i.d. uniform **and the number of items per leaf unknown to every party**.
//! A load in which a party knows the layout, or in which the layout or its histogram is public,
//! leaks: with a public balanced layout, say, the labels revealed by the first accesses of
//! distinct items are a draw without replacement from a known multiset (a scan of all items
//! reproduces the known histogram exactly, repeated accesses to one item do not), which tells
//! access patterns apart.
//!
//! # Design: a public forest and a refresh pass
//! 1. **Public forest** ([`public_forest`]). Every prefix N_i in use sits in OT_i at the
//!    public leaf [`public_label`]`(i, N_i)` = N_i mod 2^d_i, placed as
//!    [`PlainTree::place`](crate::plain::PlainTree::place) does (in its leaf node: at most
//!    2^⌊log₂ w⌋ ≤ w of the leaf node's 4w slots are used, so nothing overflows). The A fields
//!    of OT_0..OT_{h−1} are these public labels; only the records, the A fields of OT_h, are
//!    secret. D's share is the public forest with D's record shares in OT_h's A fields, E's
//!    share is zero but for E's record shares there ([`initial_share`]). No message.
//! 2. **A secret permutation π of the addresses** (steps 1–3 of the load, [`D::load_perm_start`],
//!    [`C::load_perm`], [`E::load_perm`], [`D::load_perm_finish`]). π = σ₂∘σ₁∘σ₀ with σ₀
//!    drawn by C and D, σ₁ by D and E and σ₂ by C and E, each from the pair's PRG: every party
//!    misses one factor, so π is uniform to each. With v = (0, 1, …, n − 1):
//!    * D computes x₀ = σ₀(v) and, with r and z from the D–E PRG, sends C
//!      u = σ₁(x₀ ⊕ r) ⊕ z (uniform to C: z); E holds σ₁(r) ⊕ z.
//!    * C sends D σ₂(u) ⊕ y, with y from the C–E PRG (uniform to D); E's share is
//!      σ₂(σ₁(r) ⊕ z) ⊕ y. The two shares XOR to σ₂(σ₁(σ₀(v))) = π(v).
//!
//!    Two messages of n·⌈m/8⌉ bytes, one after the other.
//! 3. **Refresh pass.** The parties read every address once, in the order π(0), π(1), …,
//!    π(n − 1), with the ordinary access of [`crate::driver`] on D's and E's shares of π(k).
//!    The first access touching a prefix N_i finds it at its public leaf; Access removes it and
//!    PostProcess gives it a fresh label that no party learns, and Eviction moves it down from
//!    the root as in any run. The labels revealed during the pass are, tree by tree, the public
//!    labels of the prefixes in the order of their first touch under π — and fresh labels for
//!    later touches of the same prefix — a distribution fixed by the public n and the uniform π,
//!    whatever the records. After the pass every tuple of every tree has been accessed at least
//!    once, so its label is a fresh i.i.d. uniform one that has never been revealed, and its
//!    position is the result of evictions of uniformly random paths: the state of a normal run.
//!    The public leaves never matter again (the pass empties them of their initial tuples).
//!
//! **Cost**: n accesses (plus the two permutation messages): the load is as expensive as n
//! reads. A cheaper design — an oblivious three-party sort of dummy-padded items by fresh
//! labels, then compaction (Asharov et al., CCS 2022) — would meet the same requirement in
//! O(n log n) local work, but is not built.
//!
//! **Security**: semi-honest, one corruption, as the rest of the crate. The pass is a sequence
//! of accesses whose addresses are shared and uniformly permuted, so its transcript is that of
//! n accesses (sizes fixed by the parameters); tests/load.rs checks that message counts and
//! sizes do not depend on the records.

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::msgs::{WireMessage, check};
use crate::params::Params;
use crate::party::{C, D, E, Role, instance};
use crate::plain::{PlainForest, record_fits, words_for};
use crate::sample::permutation;
use crate::storage::{ForestShare, TreeShare, encode_tree};

/// The public leaf of prefix `n` = N_i in OT_i before the refresh pass: N_i mod 2^d_i
/// (0 for OT_0). At most 2^(iτ − d_i) ≤ 2^⌊log₂ w⌋ ≤ w prefixes share a leaf node.
pub fn public_label(params: &Params, i: usize, n: u64) -> u64 {
    n & (params.leaves(i) - 1)
}

/// The forest holding addresses 0..`items` at their [`public_label`]s, every record 0.
///
/// # Errors
/// [`Fjkw15Error::InvalidInput`] unless 1 ≤ `items` ≤ 2^m.
pub fn public_forest(params: Params, items: u64) -> Result<PlainForest, Fjkw15Error> {
    if items == 0 || items > 1 << params.m() {
        return Err(Fjkw15Error::InvalidInput("1 ≤ items ≤ 2^m"));
    }
    let words = words_for(params.record_bits());
    PlainForest::load_with_labels(
        params,
        items,
        |_| vec![0; words],
        |i, n| public_label(&params, i, n),
    )
    // At most w tuples per leaf node of 4w slots: the public layout cannot overflow.
    .map_err(|o| Fjkw15Error::Overflow { tree: o.tree })
}

/// Step 0 of the load, at D (`with_public`) or E: this party's share of the public forest
/// `forest` ([`public_forest`]) with its shares of the records, `records[N]` for address N,
/// in the A fields of OT_h. D's share carries the public fields, E's is zero there.
///
/// # Errors
/// [`Fjkw15Error::InvalidInput`] unless there is one d-bit record share (in words) per item.
pub fn initial_share(
    forest: &PlainForest,
    records: &[Vec<u64>],
    with_public: bool,
) -> Result<ForestShare, Fjkw15Error> {
    let p = *forest.params();
    let bits = p.record_bits();
    if records.len() as u64 != forest.items() || !records.iter().all(|r| record_fits(r, bits)) {
        return Err(Fjkw15Error::InvalidInput(
            "one d-bit record share per item, in words",
        ));
    }
    let encode = |i: usize| {
        if with_public {
            encode_tree(forest, i)
        } else {
            let tuples = if i == 0 { 1 } else { forest.tree(i).slots() };
            Strings::zeros(tuples, p.tuple_bits(i))
        }
    };
    let h = p.h();
    let root = encode(0);
    let mut trees = Vec::with_capacity(h);
    for i in 1..=h {
        let mut rows = encode(i);
        if i == h {
            let layout = TupleLayout::new(&p, h);
            let tree = forest.tree(h);
            for (n, record) in records.iter().enumerate() {
                let n = n as u64;
                let slot =
                    tree.find(public_label(&p, h, n), n)
                        .ok_or(Fjkw15Error::InvalidInput(
                            "every item is in the public forest",
                        ))?;
                // The public record is 0: D's and E's rows get their shares as they are.
                let mut bytes = vec![0u8; bits.div_ceil(8)];
                for (k, &word) in record.iter().enumerate() {
                    crate::bits::set_bits(&mut bytes, 64 * k, (bits - 64 * k).min(64), word);
                }
                rows.set_bit_range(slot, layout.a_offset(), bits, &bytes);
            }
        }
        trees.push(TreeShare::from_rows(&p, i, rows)?);
    }
    ForestShare::new(p, root, trees)
}

/// The public shape of the load's permutation: `items` addresses of m bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PermShape {
    params: Params,
    items: usize,
}

impl PermShape {
    /// The permutation of addresses 0..`items`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless 1 ≤ `items` ≤ 2^m.
    pub fn new(params: Params, items: u64) -> Result<PermShape, Fjkw15Error> {
        if items == 0 || items > 1 << params.m() {
            return Err(Fjkw15Error::InvalidInput("1 ≤ items ≤ 2^m"));
        }
        let items = usize::try_from(items)
            .map_err(|_| Fjkw15Error::InvalidInput("the items fit in memory"))?;
        Ok(PermShape { params, items })
    }

    /// The number of addresses.
    pub fn items(&self) -> usize {
        self.items
    }

    fn width(&self) -> usize {
        self.params.m() as usize
    }

    /// v = (0, 1, …, n − 1) as m-bit strings.
    fn identity(&self) -> Strings {
        let mut v = Strings::zeros(self.items, self.width());
        for k in 0..self.items {
            v.set_field(k, 0, self.width(), k as u64);
        }
        v
    }

    fn values(&self, s: &Strings) -> Vec<u64> {
        (0..self.items)
            .map(|k| s.field(k, 0, self.width()))
            .collect()
    }
}

macro_rules! addresses_message {
    ($(#[$doc:meta])* $name:ident, $what:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            addrs: Strings,
        }

        impl WireMessage for $name {
            type Shape = PermShape;
            const WHAT: &'static str = $what;

            fn wire_len(s: &PermShape) -> usize {
                s.items * s.width().div_ceil(8)
            }

            fn fits(&self, s: &PermShape) -> bool {
                self.addrs.count() == s.items && self.addrs.width() == s.width()
            }

            fn encode(&self) -> Vec<u8> {
                self.addrs.as_bytes().to_vec()
            }

            fn decode(bytes: &[u8], s: &PermShape) -> Result<Self, doram_core::CodecError> {
                Ok($name {
                    addrs: Strings::decode(bytes, s.items, s.width())?,
                })
            }
        }
    };
}

addresses_message!(
    /// Load, step 1: D → C, u = σ₁(σ₀(v) ⊕ r) ⊕ z ([module docs](self)).
    PermFromD,
    "load: the permuted addresses from D"
);

addresses_message!(
    /// Load, step 2: C → D, σ₂(u) ⊕ y, D's share of π(v) ([module docs](self)).
    PermFromC,
    "load: the permuted addresses from C"
);

/// σ(x): string k of the result is string σ\[k\] of `x`.
fn apply(sigma: &[usize], x: &Strings) -> Strings {
    x.gather(sigma)
}

impl D {
    /// Load, step 1 (D): σ₀ from the C–D PRG, σ₁, r and z from the D–E PRG; returns the
    /// message u = σ₁(σ₀(v) ⊕ r) ⊕ z for C.
    pub fn load_perm_start(&mut self, s: &PermShape) -> PermFromD {
        let mut cd = instance(&mut self.with_c);
        let mut de = instance(&mut self.with_e);
        let sigma0 = permutation(s.items, &mut cd);
        let sigma1 = permutation(s.items, &mut de);
        let r = Strings::random(s.items, s.width(), &mut de);
        let z = Strings::random(s.items, s.width(), &mut de);
        // [Load, step 1] x₀ = σ₀(v); D → C: σ₁(x₀ ⊕ r) ⊕ z.
        let x0 = apply(&sigma0, &s.identity());
        let addrs = apply(&sigma1, &x0.xor(&r)).xor(&z);
        PermFromD { addrs }
    }

    /// Load, step 3 (D): D's shares of π(0), …, π(n − 1), C's message as it is.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming C for a message of the wrong shape.
    pub fn load_perm_finish(
        &self,
        s: &PermShape,
        from_c: &PermFromC,
    ) -> Result<Vec<u64>, Fjkw15Error> {
        check(from_c, self.roles.party(Role::C), s)?;
        Ok(s.values(&from_c.addrs))
    }
}

impl C {
    /// Load, step 2 (C): σ₀ from the C–D PRG (unused by C but drawn in lockstep), σ₂ and y
    /// from the C–E PRG; returns σ₂(u) ⊕ y for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D for a message of the wrong shape.
    pub fn load_perm(
        &mut self,
        s: &PermShape,
        from_d: &PermFromD,
    ) -> Result<PermFromC, Fjkw15Error> {
        check(from_d, self.roles.party(Role::D), s)?;
        // The C–D instance carries σ₀ only, which D has applied already.
        let _cd = instance(&mut self.with_d);
        let mut ce = instance(&mut self.with_e);
        let sigma2 = permutation(s.items, &mut ce);
        let y = Strings::random(s.items, s.width(), &mut ce);
        // [Load, step 2] C → D: σ₂(u) ⊕ y.
        Ok(PermFromC {
            addrs: apply(&sigma2, &from_d.addrs).xor(&y),
        })
    }
}

impl E {
    /// Load, steps 1–2 (E, no message): σ₁, r, z from the D–E PRG and σ₂, y from the C–E
    /// PRG; returns E's shares σ₂(σ₁(r) ⊕ z) ⊕ y of π(0), …, π(n − 1).
    pub fn load_perm(&mut self, s: &PermShape) -> Vec<u64> {
        let mut de = instance(&mut self.with_d);
        let mut ce = instance(&mut self.with_c);
        let sigma1 = permutation(s.items, &mut de);
        let r = Strings::random(s.items, s.width(), &mut de);
        let z = Strings::random(s.items, s.width(), &mut de);
        let sigma2 = permutation(s.items, &mut ce);
        let y = Strings::random(s.items, s.width(), &mut ce);
        let share = apply(&sigma2, &apply(&sigma1, &r).xor(&z)).xor(&y);
        s.values(&share)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::party::{Roles, setup_in_process};
    use doram_core::Entropy;

    #[test]
    fn the_shares_are_a_permutation_of_the_addresses() {
        for (seed, items) in [(1, 1), (2, 5), (3, 64), (4, 100)] {
            let params = Params::new(9, 3, 8, 16).unwrap();
            let (mut c, mut d, mut e) =
                setup_in_process(Roles::default(), Entropy::InsecureSeed(seed));
            let s = PermShape::new(params, items).unwrap();
            let to_c = d.load_perm_start(&s);
            let to_d = c.load_perm(&s, &to_c).unwrap();
            let at_d = d.load_perm_finish(&s, &to_d).unwrap();
            let at_e = e.load_perm(&s);
            let pi: Vec<usize> = at_d
                .iter()
                .zip(&at_e)
                .map(|(a, b)| (a ^ b) as usize)
                .collect();
            assert!(crate::sample::is_permutation(&pi), "{pi:?}");
            // The pairs stay in lockstep: the next instances agree.
            assert_eq!(
                instance(&mut c.with_d).next_u128(),
                instance(&mut d.with_c).next_u128()
            );
            assert_eq!(
                instance(&mut d.with_e).next_u128(),
                instance(&mut e.with_d).next_u128()
            );
            assert_eq!(
                instance(&mut e.with_c).next_u128(),
                instance(&mut c.with_e).next_u128()
            );
        }
    }

    #[test]
    fn the_public_forest_holds_every_item_at_its_public_leaf() {
        for (params, items) in [
            (Params::new(9, 3, 8, 16).unwrap(), 300),
            (Params::new(6, 3, 32, 64).unwrap(), 1),
            (Params::new(8, 4, 4, 20).unwrap(), 256),
        ] {
            let f = public_forest(params, items).unwrap();
            for i in 1..=params.h() {
                let shift = params.m() - params.prefix_bits(i);
                for n in 0..=((items - 1) >> shift) {
                    let leaf = public_label(&params, i, n);
                    assert!(
                        f.tree(i).find(leaf, n).is_some(),
                        "{params:?} OT_{i} N_i = {n}"
                    );
                }
            }
        }
    }
}

/// **Insecure** load for benchmarks of accesses at sizes where the refresh pass is too slow:
/// every party sends its additive shares of the memory to D and E
/// ([`InsecureOpenedShares`]), D and E reconstruct it and build the same forest with labels
/// from their pairwise PRG, D keeps it masked by R and E keeps R (R from the same PRG). D and
/// E learn the whole memory and the layout: a trusted-dealer stand-in, never for real data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsecureOpenedShares {
    words: Vec<u64>,
}

impl InsecureOpenedShares {
    /// The message carrying `words`.
    pub fn new(words: Vec<u64>) -> InsecureOpenedShares {
        InsecureOpenedShares { words }
    }

    /// The words carried.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

impl WireMessage for InsecureOpenedShares {
    /// The number of words.
    type Shape = usize;
    const WHAT: &'static str = "insecure load: opened additive shares";

    fn wire_len(count: &usize) -> usize {
        8 * count
    }

    fn fits(&self, count: &usize) -> bool {
        self.words.len() == *count
    }

    fn encode(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8], count: &usize) -> Result<Self, doram_core::CodecError> {
        crate::msgs::length(bytes, 8 * count)?;
        let words = bytes
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        Ok(InsecureOpenedShares { words })
    }
}

/// **Insecure** ([`InsecureOpenedShares`]): D's (`with_public`) or E's share of a forest
/// holding the plaintext records `memory`, from one instance of the D–E PRG `pair`.
fn insecure_dealt_share(
    params: Params,
    memory: &[Vec<u64>],
    pair: &mut doram_prim::AesPrg,
    with_public: bool,
) -> Result<ForestShare, Fjkw15Error> {
    let mut prg = instance(pair);
    let bits = params.record_bits();
    if memory.is_empty() || !memory.iter().all(|r| record_fits(r, bits)) {
        return Err(Fjkw15Error::InvalidInput("one d-bit record per item"));
    }
    let forest = PlainForest::load(
        params,
        memory.len() as u64,
        |n| memory[n as usize].clone(),
        &mut prg,
    )
    .map_err(|o| Fjkw15Error::Overflow { tree: o.tree })?;
    let mut share = |i: usize| {
        let plain = encode_tree(&forest, i);
        let mask = Strings::random(plain.count(), plain.width(), &mut prg);
        if with_public { plain.xor(&mask) } else { mask }
    };
    let root = share(0);
    let trees = (1..=params.h())
        .map(|i| TreeShare::from_rows(&params, i, share(i)))
        .collect::<Result<Vec<_>, _>>()?;
    ForestShare::new(params, root, trees)
}

impl D {
    /// **Insecure** load at D ([`InsecureOpenedShares`]): D's share of a forest holding
    /// `memory`, which D knows.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for malformed records.
    pub fn insecure_dealt_share(
        &mut self,
        params: Params,
        memory: &[Vec<u64>],
    ) -> Result<ForestShare, Fjkw15Error> {
        insecure_dealt_share(params, memory, &mut self.with_e, true)
    }
}

impl E {
    /// **Insecure** load at E ([`InsecureOpenedShares`]): E's share (the mask R).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for malformed records.
    pub fn insecure_dealt_share(
        &mut self,
        params: Params,
        memory: &[Vec<u64>],
    ) -> Result<ForestShare, Fjkw15Error> {
        insecure_dealt_share(params, memory, &mut self.with_d, false)
    }
}
