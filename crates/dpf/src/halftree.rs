//! The Half-Tree DPF of Guo, Yang, Wang, Zhang, Xie, Liu and Zhao ("Half-Tree: Halving the Cost
//! of Tree Expansion in COT and DPF", ePrint 2022/1431, Fig. 8), on the circular
//! correlation-robust hash `H(x) = π(σ(x)) ⊕ σ(x)` of fixed-key AES (Guo–Katz–Wang–Yu 2020).
//!
//! # Construction
//!
//! The domain `[0, n)` is the leaf set of a binary tree of depth `d = ⌈log2 n⌉`; `x`'s path
//! takes bit `d − 1` of `x` (the most significant) at the root and bit 0 last. A node is a
//! 128-bit seed `s` whose least significant bit is its control bit `t = lsb(s)`.
//!
//! * Fig. 8, Gen, setup: pick `Δ` uniformly with `lsb(Δ) = 1` and `s_0` uniformly; the roots
//!   are `s_0` and `s_1 = s_0 ⊕ Δ`, so `t_0 ⊕ t_1 = 1`.
//! * Fig. 8, Gen, levels `i = 1 … n − 1` (the paper's `n` is the depth `d` here, and this
//!   implementation runs these levels for `i = 1 … d − o`, see the output stage), with path bit
//!   `a`: `CW_i = H(s_0) ⊕ H(s_1) ⊕ (1 − a)·Δ`, and party `b` moves to
//!   `s_b ← H(s_b) ⊕ a·s_b ⊕ t_b·CW_i`. Invariant: on the path the two seeds differ by exactly
//!   `Δ`; off the path they are equal.
//! * Fig. 8, Eval, for a node `s` with `t = lsb(s)`: the left child is `H(s) ⊕ t·CW_i` and the
//!   right child is `left ⊕ s` (the children sum to the parent: one hash call per node, which is
//!   what halves the cost of a GGM tree).
//! * Output stage. Fig. 8 ends with a BGI-style last level (correction words `HCW`, `LCW^0`,
//!   `LCW^1`, giving leaf seeds and control bits) and the output correction `CW_{n+1}`. This
//!   implementation ends differently: the last `o = min(3, d)` levels are not expanded into
//!   seeds. An output node `q` at depth `d − o` yields its `2^o` leaves directly as
//!   `Convert(q, j)` (the crate's output conversion: one more hash call per leaf for a 128-bit
//!   group), and the key carries one output correction word per leaf slot `j`:
//!   `OCW_j = (−1)^{t_1}·(β·[j = α mod 2^o] − Convert(q_0, j) + Convert(q_1, j))`. Party `b`
//!   outputs `(−1)^b·(Convert(q, j) + t·OCW_j)`. Off the path `q_0 = q_1` and the shares cancel;
//!   on it `t_0 − t_1 = (−1)^{t_1}` makes them sum to `β` at `α` and to 0 at its siblings.
//!
//!   Why: a full expansion to the leaves plus conversion costs about `2n` hash calls for `n`
//!   outputs; with the last three levels folded into the output stage it costs `n/8 + n`, for
//!   seven extra output words (and two fewer level words) in the key. The output words are as
//!   pseudorandom as Fig. 8's: each is masked by `Convert(q_1, j)`, whose input `q_0 ⊕ Δ` is
//!   unknown to party 0 (and symmetrically), the same circular correlation robustness the tree
//!   levels rely on.
//!
//! # Key layout (`to_bytes`)
//!
//! `party (1 byte) ‖ s_b (16) ‖ CW_0 … CW_{d−o−1} (16 each) ‖ OCW_0 … OCW_{2^o − 1} (G::BYTES
//! each)`, blocks little-endian. Size: `1 + 16·(d − o + 1) + 2^o·|G|` bytes, i.e.
//! `16·d + 8·|G| − 31` for `n > 4` (o = 3), `17 + 4|G|` for `n ∈ {3, 4}`, `17 + 2|G|` for
//! `n = 2` (417 bytes for 2^20 points into `Fp`). For `n = 1` the key is
//! `party ‖ share` (`1 + |G|` bytes): plain additive sharing of `β`.

use crate::convert::{LeafSource, convert, tweak};
use crate::tree::{self, LeafStream, Tree};
use crate::{DpfKey, SinglePointDpf, TwoParty, check_gen_args, check_len, depth, take};
use doram_core::{CodecError, Seed};
use doram_field::Group;
use doram_prim::aes::{AesKernel, BATCH, Block, WithAes, fixed_key, lsb, mask};
use doram_prim::prg::AesPrg;

/// Levels folded into the output stage (at most; fewer for `n ≤ 2`).
pub const OUTPUT_BITS: usize = 3;

/// The Half-Tree DPF (marker type; see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct HalfTree;

/// One party's Half-Tree key.
#[derive(Clone, PartialEq, Eq)]
pub struct HalfTreeKey<G> {
    party: TwoParty,
    domain_size: usize,
    /// Root seed (0 for `n = 1`).
    seed: Block,
    /// One correction word per expanded level.
    cws: Vec<Block>,
    /// Output correction words, one per leaf slot of an output node; for `n = 1` the share.
    ocws: Vec<G>,
}

impl<G> std::fmt::Debug for HalfTreeKey<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HalfTreeKey")
            .field("party", &self.party)
            .field("domain_size", &self.domain_size)
            .finish_non_exhaustive()
    }
}

/// `(levels, out_bits)` for a domain of `n ≥ 2` points.
fn shape(n: usize) -> (usize, usize) {
    let d = depth(n);
    let o = OUTPUT_BITS.min(d);
    (d - o, o)
}

impl<G: Group> HalfTreeKey<G> {
    /// The serialized length of a key for `domain_size` points (see the module docs).
    pub fn key_size(domain_size: usize) -> usize {
        if domain_size <= 1 {
            1 + G::BYTES
        } else {
            let (levels, o) = shape(domain_size);
            1 + 16 * (levels + 1) + (G::BYTES << o)
        }
    }

    /// Decodes a key for `domain_size` points.
    pub fn from_bytes(bytes: &[u8], domain_size: usize) -> Result<Self, CodecError> {
        if domain_size == 0 || domain_size > crate::MAX_DOMAIN {
            return Err(CodecError::OutOfRange {
                what: "DPF domain size",
            });
        }
        check_len(bytes, Self::key_size(domain_size))?;
        let party = TwoParty::from_byte(bytes[0])?;
        let mut pos = 1;
        if domain_size == 1 {
            let share = G::read_le(&bytes[pos..])?;
            return Ok(HalfTreeKey {
                party,
                domain_size,
                seed: 0,
                cws: vec![],
                ocws: vec![share],
            });
        }
        let (levels, o) = shape(domain_size);
        let seed = u128::from_le_bytes(take(bytes, &mut pos));
        let cws = (0..levels)
            .map(|_| u128::from_le_bytes(take(bytes, &mut pos)))
            .collect();
        let mut ocws = Vec::with_capacity(1 << o);
        for chunk in bytes[pos..].chunks_exact(G::BYTES) {
            ocws.push(G::read_le(chunk)?);
        }
        Ok(HalfTreeKey {
            party,
            domain_size,
            seed,
            cws,
            ocws,
        })
    }

    #[inline(always)]
    fn finish(&self, conv: G, t: bool, j: usize) -> G {
        let y = if t { conv + self.ocws[j] } else { conv };
        if self.party == TwoParty::P1 { -y } else { y }
    }
}

impl<G: Group> DpfKey for HalfTreeKey<G> {
    fn party(&self) -> TwoParty {
        self.party
    }

    fn domain_size(&self) -> usize {
        self.domain_size
    }

    fn size_bytes(&self) -> usize {
        Self::key_size(self.domain_size)
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes());
        out.push(self.party.to_byte());
        if self.domain_size > 1 {
            out.extend_from_slice(&self.seed.to_le_bytes());
            for cw in &self.cws {
                out.extend_from_slice(&cw.to_le_bytes());
            }
        }
        let start = out.len();
        out.resize(start + self.ocws.len() * G::BYTES, 0);
        for (x, chunk) in self
            .ocws
            .iter()
            .zip(out[start..].chunks_exact_mut(G::BYTES))
        {
            x.write_le(chunk);
        }
        out
    }
}

impl<G: Group> Tree<G> for HalfTreeKey<G> {
    fn constant(&self) -> Option<G> {
        (self.domain_size == 1).then(|| {
            let y = self.ocws[0];
            if self.party == TwoParty::P1 { -y } else { y }
        })
    }

    fn levels(&self) -> usize {
        self.cws.len()
    }

    fn out_bits(&self) -> usize {
        self.ocws.len().trailing_zeros() as usize
    }

    fn root(&self) -> Block {
        self.seed
    }

    /// Fig. 8, Eval, one level: left = H(s) ⊕ t·CW_i, right = left ⊕ s.
    fn expand(&self, level: usize, src: &[Block], dst: &mut [Block]) {
        crate::levels::expand_level(self.cws[level], src, dst);
    }

    /// The output stage: leaf `j` of output node `q` is `±(Convert(q, j) + t·OCW_j)`.
    fn output(&self, nodes: &[Block], out: &mut [G]) {
        match self.out_bits() {
            0 => self.output_fixed::<0>(nodes, out),
            1 => self.output_fixed::<1>(nodes, out),
            2 => self.output_fixed::<2>(nodes, out),
            _ => self.output_fixed::<OUTPUT_BITS>(nodes, out),
        }
    }
}

impl<G: Group> HalfTreeKey<G> {
    /// [`Tree::output`] with the number of leaves per output node, `2^O`, known at compile time.
    ///
    /// Works in batches of [`BATCH`] leaves (`BATCH / 2^O` output nodes): one 8-block hash call,
    /// then the 8 outputs, so that the out-of-order core overlaps one batch's AES rounds with the
    /// previous batch's field arithmetic and stores.
    #[inline(always)]
    fn output_fixed<const O: usize>(&self, nodes: &[Block], out: &mut [G]) {
        debug_assert_eq!(self.ocws.len(), 1 << O);
        fixed_key().with_aes(OutputFixed::<G, O> {
            key: self,
            nodes,
            out,
        })
    }
}

/// [`HalfTreeKey::output_fixed`]'s loop, run with fixed-key AES in hand.
struct OutputFixed<'a, G, const O: usize> {
    key: &'a HalfTreeKey<G>,
    nodes: &'a [Block],
    out: &'a mut [G],
}

impl<G: Group, const O: usize> WithAes for OutputFixed<'_, G, O> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        output_loop::<G, O, K>(self.key, self.nodes, self.out, aes)
    }
}

/// [`OutputFixed`]'s loop. Its slices are parameters, not fields: inlined into the code that
/// holds the cipher, parameters keep what the compiler knows of them (`out` aliases nothing
/// else), which it needs to keep values in registers across the stores.
#[inline(always)]
fn output_loop<G: Group, const O: usize, K: AesKernel>(
    key: &HalfTreeKey<G>,
    nodes: &[Block],
    out: &mut [G],
    aes: &mut K,
) {
    // The rare further blocks of an output (rejection sampling) come from `fk`.
    let fk = fixed_key();
    let w = 1usize << O;
    // sel[t][j] = ±t·OCW_j, so that the correction is a table lookup rather than a branch,
    // and party 1's output −(Convert + t·OCW) is the single subtraction (−t·OCW) − Convert.
    let mut sel = [[G::ZERO; 1 << OUTPUT_BITS]; 2];
    let negate = key.party == TwoParty::P1;
    for (s, &c) in sel[1].iter_mut().zip(&key.ocws) {
        *s = if negate { -c } else { c };
    }
    let leaf = |q: Block, j: usize, first: Block| {
        let conv = G::random_from(&mut LeafSource::with_first(fk, q, j, first));
        let corr = sel[usize::from(lsb(q))][j];
        if negate { corr - conv } else { conv + corr }
    };
    let nodes_per_batch = BATCH >> O;
    let full = (nodes.len() / nodes_per_batch).min(out.len() / BATCH);
    let (head, tail) = out.split_at_mut(full * BATCH);
    let tweaks: [Block; BATCH] = std::array::from_fn(|k| tweak(k & (w - 1), 0));
    let mut hash_batch = |qs: &[Block]| aes.ccr8_spread::<O>(qs, &tweaks);
    // Software pipelining: the hash calls of batch i + 1 are issued before the outputs of
    // batch i are computed, so the AES unit and the integer units work side by side.
    let mut next = if full > 0 {
        hash_batch(&nodes[..nodes_per_batch])
    } else {
        [0; BATCH]
    };
    for (i, ys) in head.chunks_exact_mut(BATCH).enumerate() {
        let cur = next;
        let qs = &nodes[i * nodes_per_batch..(i + 1) * nodes_per_batch];
        if i + 1 < full {
            next = hash_batch(&nodes[(i + 1) * nodes_per_batch..(i + 2) * nodes_per_batch]);
        }
        for (k, y) in ys.iter_mut().enumerate() {
            *y = leaf(qs[k >> O], k & (w - 1), cur[k]);
        }
    }
    for (k, y) in tail.iter_mut().enumerate() {
        let (q, j) = (nodes[full * nodes_per_batch + (k >> O)], k & (w - 1));
        *y = leaf(q, j, aes.ccr(q ^ tweak(j, 0)));
    }
}

impl<G: Group> SinglePointDpf<G> for HalfTree {
    type Key = HalfTreeKey<G>;

    fn key_size(domain_size: usize) -> usize {
        HalfTreeKey::<G>::key_size(domain_size)
    }

    /// `seeds[0]` is party 0's root seed `s_0`; `seeds[1]` gives `Δ` (its lsb forced to 1).
    /// For `n = 1`, party 0's share is expanded from `seeds[0]` with [`AesPrg`].
    fn gen_with_seeds(
        domain_size: usize,
        alpha: usize,
        beta: G,
        seeds: [Seed; 2],
    ) -> (Self::Key, Self::Key) {
        check_gen_args(domain_size, alpha);
        let key = |party, seed, cws: &Vec<Block>, ocws: Vec<G>| HalfTreeKey {
            party,
            domain_size,
            seed,
            cws: cws.clone(),
            ocws,
        };
        if domain_size == 1 {
            let r: G = AesPrg::new(seeds[0]).random();
            return (
                key(TwoParty::P0, 0, &vec![], vec![r]),
                key(TwoParty::P1, 0, &vec![], vec![r - beta]),
            );
        }
        let fk = fixed_key();
        let d = depth(domain_size);
        let (levels, o) = shape(domain_size);
        // Fig. 8, Gen, setup: Δ with lsb 1, s_1 = s_0 ⊕ Δ (so t_0 ⊕ t_1 = 1 at the root).
        let delta = u128::from_le_bytes(seeds[1].0) | 1;
        let root0 = u128::from_le_bytes(seeds[0].0);
        let root1 = root0 ^ delta;
        let (cws, s0, s1) = fk.with_aes(GenLevels {
            alpha,
            d,
            levels,
            delta,
            roots: [root0, root1],
        });
        // Output correction words for the 2^o leaves of the on-path output node.
        let slot = alpha & ((1 << o) - 1);
        let t1 = lsb(s1);
        let ocws = (0..1usize << o)
            .map(|j| {
                let target = if j == slot { beta } else { G::ZERO };
                let v = target - convert::<G>(fk, s0, j) + convert::<G>(fk, s1, j);
                if t1 { -v } else { v }
            })
            .collect::<Vec<G>>();
        (
            key(TwoParty::P0, root0, &cws, ocws.clone()),
            key(TwoParty::P1, root1, &cws, ocws),
        )
    }

    fn eval(key: &Self::Key, x: usize) -> G {
        let n = key.domain_size;
        assert!(x < n, "DPF input {x} outside domain of {n} points");
        if let Some(y) = key.constant() {
            return y;
        }
        let fk = fixed_key();
        let d = depth(n);
        let (levels, o) = shape(n);
        let mut s = key.seed;
        for (i, &cw) in key.cws.iter().enumerate() {
            let l = fk.ccr(s) ^ (mask(lsb(s)) & cw);
            s = if (x >> (d - 1 - i)) & 1 == 1 {
                l ^ s
            } else {
                l
            };
        }
        debug_assert_eq!(levels, key.cws.len());
        let j = x & ((1 << o) - 1);
        key.finish(convert::<G>(fk, s, j), lsb(s), j)
    }

    fn eval_all_into(key: &Self::Key, out: &mut [G]) {
        tree::eval_domain(key, key.domain_size, out, false);
    }

    fn eval_all_par_into(key: &Self::Key, out: &mut [G]) {
        tree::eval_domain(key, key.domain_size, out, true);
    }

    fn stream(key: &Self::Key, start: usize) -> LeafStream<'_, G> {
        LeafStream::new(key, key.domain_size, start)
    }

    fn key_from_bytes(bytes: &[u8], domain_size: usize) -> Result<Self::Key, CodecError> {
        HalfTreeKey::from_bytes(bytes, domain_size)
    }
}

/// Fig. 8, Gen, levels 1 … d − o, run with fixed-key AES in hand: one correction word per
/// level; afterwards the two seeds still differ by exactly Δ.
struct GenLevels {
    alpha: usize,
    d: usize,
    levels: usize,
    delta: Block,
    roots: [Block; 2],
}

impl WithAes for GenLevels {
    type Output = (Vec<Block>, Block, Block);

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        let GenLevels {
            alpha,
            d,
            levels,
            delta,
            roots: [mut s0, mut s1],
        } = self;
        let mut cws = Vec::with_capacity(levels);
        for i in 0..levels {
            let a = (alpha >> (d - 1 - i)) & 1 == 1;
            let (h0, h1) = (aes.ccr(s0), aes.ccr(s1));
            let cw = h0 ^ h1 ^ (mask(!a) & delta);
            s0 = h0 ^ (mask(a) & s0) ^ (mask(lsb(s0)) & cw);
            s1 = h1 ^ (mask(a) & s1) ^ (mask(lsb(s1)) & cw);
            debug_assert_eq!(s0 ^ s1, delta);
            cws.push(cw);
        }
        (cws, s0, s1)
    }
}
