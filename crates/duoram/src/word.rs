//! [`DuoWord`]: the word rings Duoram runs over (`Z64`, the paper's and the benchmarked case,
//! and `Fp`), with the two per-ring decisions the protocol needs: how a DPF leaf label becomes
//! words, and how a masked index is opened.

use doram_field::{BlockSource, Fp, Group, Z64};
use doram_oram::IntegerWord;
use doram_prim::aes::{BATCH, Block, FixedKeyAes, NODE_SLOTS};

/// The tweak of leaf output `j`, block `k` (never zero, so leaf hashes are domain-separated
/// from the internal-node hashes `H(s)` of the tree; the same tweaks as the DPF crate's output
/// conversion).
#[inline(always)]
pub(crate) const fn tweak(j: u64, k: u64) -> Block {
    ((((k as u128) << 32) | (j as u128 + 1)) << 64) as Block
}

/// Added to a slot's number for the stream of its value word when that word needs its own
/// stream (`Fp`): far above every slot number, so that no two streams of a node coincide.
const VALUE_STREAM: u64 = 1 << 31;

/// The block stream `CCR(leaf ⊕ T(j, k))`, k = 0, 1, …, with the first block precomputed.
struct LeafStream<'a> {
    fk: &'a FixedKeyAes,
    leaf: Block,
    j: u64,
    k: u64,
    first: Option<Block>,
}

impl BlockSource for LeafStream<'_> {
    fn next_block(&mut self) -> [u8; 16] {
        if let Some(b) = self.first.take() {
            return b.to_le_bytes();
        }
        let b = self.fk.ccr(self.leaf ^ tweak(self.j, self.k));
        self.k += 1;
        b.to_le_bytes()
    }
}

/// A word ring for Duoram.
///
/// Every output node `s` of a DPF tree gives, for each of its output slots `j`, two words: the
/// *flag word* `a_j(s)` and the *value word* `v_j(s)`, as a deterministic function of the whole
/// node label (so that equal labels — all nodes off the path — give equal words) that is uniform
/// in the ring for a random label: they are drawn with [`Group::random_from`] from the circular
/// correlation-robust hash stream `CCR(s ⊕ T(j, k))`, k = 0, 1, …. For `Z64` one hash block is
/// split in two (`a` = low 64 bits, `v` = high 64 bits), one AES call per output; `Fp` draws
/// each from its own stream (slot `j` and slot `j + 2^31`; rejection sampling needs one block
/// almost always).
pub trait DuoWord: IntegerWord {
    /// Whether reducing every additive share mod `2^h` gives additive shares mod `2^h` (true for
    /// Z/2^64): then a masked index is opened exactly, share by share. Otherwise (a prime field)
    /// it is opened as an integer under a statistical mask (see the crate documentation).
    const SHARES_REDUCE_MOD_POW2: bool;

    /// Whether [`leaf_words`](Self::leaf_words) takes its two words from one hash block without
    /// further hashing (true for Z/2^64: the two halves). Then a DPF that needs only flag words
    /// (DPF #1) takes the flag words of two slots from one block: half the hashing.
    const TWO_PER_BLOCK: bool;

    /// `(a_j(s), v_j(s))` for output slot `j < 2^o` of the output node `s`, given
    /// `first = CCR(s ⊕ T(j, 0))`.
    fn leaf_words(fk: &FixedKeyAes, node: Block, j: u64, first: Block) -> (Self, Self);

    /// The output stage on full-width output nodes (16 slots each): with `v`, slot `j` of node
    /// `s = nodes[r]` gives `leaf_words(s, j, CCR(s ⊕ T(j, 0)))` into `a[16r + j]` and
    /// `v[16r + j]`; without, only the flag words, and with
    /// [`TWO_PER_BLOCK`](Self::TWO_PER_BLOCK) slots `2m` and `2m + 1` take the two words of
    /// `CCR(s ⊕ T(m, 0))`. Adds each slot's words into `sa[j]` (and `sv[j]`). Without `v` it
    /// returns `Σ_r (first_node + r)·T_r` over the nodes' flag-word totals `T_r` (the node part
    /// of `Σ_x x·a[x]`); with `v` the return value is not used. This default hashes eight slots
    /// per call; rings override it with a faster kernel computing the same words.
    fn node_kernel(
        fk: &FixedKeyAes,
        nodes: &[Block],
        first_node: u64,
        a: &mut [Self],
        mut v: Option<&mut [Self]>,
        sa: &mut [Self; NODE_SLOTS],
        sv: &mut [Self; NODE_SLOTS],
    ) -> Self {
        let pairs = v.is_none() && Self::TWO_PER_BLOCK;
        let calls = if pairs { 1 } else { 2 };
        let mut weighted = Self::ZERO;
        for (r, (&q, ac)) in nodes.iter().zip(a.chunks_exact_mut(NODE_SLOTS)).enumerate() {
            let mut total = Self::ZERO;
            for c in 0..calls {
                let mut blk: [Block; BATCH] =
                    std::array::from_fn(|i| q ^ tweak((c * BATCH + i) as u64, 0));
                fk.ccr8(&mut blk);
                for (i, &b) in blk.iter().enumerate() {
                    let j = c * BATCH + i;
                    let (x, y) = Self::leaf_words(fk, q, j as u64, b);
                    if pairs {
                        (ac[2 * j], ac[2 * j + 1]) = (x, y);
                        sa[2 * j] += x;
                        sa[2 * j + 1] += y;
                        total += x + y;
                    } else {
                        ac[j] = x;
                        sa[j] += x;
                        total += x;
                        if let Some(v) = v.as_deref_mut() {
                            v[NODE_SLOTS * r + j] = y;
                            sv[j] += y;
                        }
                    }
                }
            }
            weighted += Self::from_u64(first_node.wrapping_add(r as u64)) * total;
        }
        weighted
    }

    /// `Σ a[i]·b[i]`.
    ///
    /// # Panics
    /// If the lengths differ.
    fn dot(a: &[Self], b: &[Self]) -> Self {
        assert_eq!(a.len(), b.len(), "dot: slices of different lengths");
        a.iter()
            .zip(b)
            .fold(Self::ZERO, |acc, (&x, &y)| acc + x * y)
    }

    /// `Σ a[i]·t[i] − z[i]·u[i]`, the primaries' READ sum (Duoram Protocol 1, steps 9–10, with
    /// the state `A = D_b + D̃_{1−b} + ζ_b`) over one contiguous segment.
    ///
    /// # Panics
    /// If the lengths differ.
    fn read_sum(a: &[Self], z: &[Self], t: &[Self], u: &[Self]) -> Self {
        let len = a.len();
        assert!(z.len() == len && t.len() == len && u.len() == len);
        let mut acc = Self::ZERO;
        for i in 0..len {
            acc += a[i] * t[i] - z[i] * u[i];
        }
        acc
    }
}

impl DuoWord for Z64 {
    const SHARES_REDUCE_MOD_POW2: bool = true;
    const TWO_PER_BLOCK: bool = true;

    #[inline(always)]
    fn leaf_words(_fk: &FixedKeyAes, _node: Block, _j: u64, first: Block) -> (Z64, Z64) {
        (Z64(first as u64), Z64((first >> 64) as u64))
    }

    fn node_kernel(
        fk: &FixedKeyAes,
        nodes: &[Block],
        first_node: u64,
        a: &mut [Z64],
        v: Option<&mut [Z64]>,
        sa: &mut [Z64; NODE_SLOTS],
        sv: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        let tweaks: [Block; NODE_SLOTS] = std::array::from_fn(|j| tweak(j as u64, 0));
        match v {
            Some(v) => {
                fk.node_words_split(nodes, &tweaks, a, v, sa, sv);
                // Not used with value words (see the trait).
                Z64(0)
            }
            None => {
                let pairs: [Block; BATCH] = std::array::from_fn(|m| tweaks[m]);
                fk.node_words_pairs(nodes, first_node, &pairs, a, sa)
            }
        }
    }

    fn dot(a: &[Z64], b: &[Z64]) -> Z64 {
        assert_eq!(a.len(), b.len(), "dot: slices of different lengths");
        // Eight independent lanes, so that the compiler keeps them in one vector register.
        let mut acc = [0u64; 8];
        let mut ca = a.chunks_exact(8);
        let mut cb = b.chunks_exact(8);
        for (x, y) in (&mut ca).zip(&mut cb) {
            for k in 0..8 {
                acc[k] = acc[k].wrapping_add(x[k].0.wrapping_mul(y[k].0));
            }
        }
        let mut s = acc.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
            s = s.wrapping_add(x.0.wrapping_mul(y.0));
        }
        Z64(s)
    }

    fn read_sum(a: &[Z64], z: &[Z64], t: &[Z64], u: &[Z64]) -> Z64 {
        let len = a.len();
        assert!(z.len() == len && t.len() == len && u.len() == len);
        let mut acc = [0u64; 8];
        let whole = len / 8 * 8;
        for c in (0..whole).step_by(8) {
            for k in 0..8 {
                let i = c + k;
                acc[k] = acc[k]
                    .wrapping_add(a[i].0.wrapping_mul(t[i].0))
                    .wrapping_sub(z[i].0.wrapping_mul(u[i].0));
            }
        }
        let mut s = acc.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        for i in whole..len {
            s = s
                .wrapping_add(a[i].0.wrapping_mul(t[i].0))
                .wrapping_sub(z[i].0.wrapping_mul(u[i].0));
        }
        Z64(s)
    }
}

impl DuoWord for Fp {
    const SHARES_REDUCE_MOD_POW2: bool = false;
    const TWO_PER_BLOCK: bool = false;

    fn leaf_words(fk: &FixedKeyAes, node: Block, j: u64, first: Block) -> (Fp, Fp) {
        let a = Fp::random_from(&mut LeafStream {
            fk,
            leaf: node,
            j,
            k: 1,
            first: Some(first),
        });
        // The value word's stream: the tweaks of slot j + 2^31, which no slot has.
        let v = Fp::random_from(&mut LeafStream {
            fk,
            leaf: node,
            j: j + VALUE_STREAM,
            k: 0,
            first: None,
        });
        (a, v)
    }

    fn dot(a: &[Fp], b: &[Fp]) -> Fp {
        doram_field::fp::dot(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_prim::aes::fixed_key;

    #[test]
    fn leaf_words_are_functions_of_the_label() {
        let fk = fixed_key();
        let leaf = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3211u128;
        let first = fk.ccr(leaf ^ tweak(0, 0));
        let (a, v) = Z64::leaf_words(fk, leaf, 0, first);
        assert_eq!(a.0, first as u64);
        assert_eq!(v.0, (first >> 64) as u64);
        let (fa, fv) = Fp::leaf_words(fk, leaf, 0, first);
        assert_eq!(Fp::leaf_words(fk, leaf, 0, first), (fa, fv));
        assert_ne!(fa, fv);
        let other = Fp::leaf_words(fk, leaf ^ 2, 0, fk.ccr((leaf ^ 2) ^ tweak(0, 0)));
        assert_ne!(other.0, fa);
    }

    #[test]
    fn fast_sums_match_the_generic_ones() {
        let w = |i: u64| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7));
        for len in [0usize, 1, 7, 8, 9, 31] {
            let v: Vec<Vec<Z64>> = (0..4)
                .map(|k| (0..len as u64).map(|i| w(i * 5 + k)).collect())
                .collect();
            let mut want = Z64(0);
            for i in 0..len {
                want += v[0][i] * v[2][i] - v[1][i] * v[3][i];
            }
            assert_eq!(Z64::read_sum(&v[0], &v[1], &v[2], &v[3]), want);
            let d: Z64 = (0..len)
                .map(|i| v[0][i] * v[1][i])
                .fold(Z64(0), |a, b| a + b);
            assert_eq!(<Z64 as DuoWord>::dot(&v[0], &v[1]), d);
        }
    }

    #[test]
    fn the_z64_node_kernel_gives_the_trait_s_words() {
        let fk = fixed_key();
        let nodes: Vec<Block> = (0..5u128)
            .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15))
            .collect();
        let len = NODE_SLOTS * nodes.len();
        for with_v in [true, false] {
            let (mut a, mut v) = (vec![Z64(0); len], vec![Z64(0); len]);
            let (mut sa, mut sv) = ([Z64(0); NODE_SLOTS], [Z64(0); NODE_SLOTS]);
            let vs = with_v.then_some(&mut v[..]);
            let weighted = Z64::node_kernel(fk, &nodes, 40, &mut a, vs, &mut sa, &mut sv);
            let (mut wa, mut wv) = ([Z64(0); NODE_SLOTS], [Z64(0); NODE_SLOTS]);
            let mut want_weighted = Z64(0);
            for (r, &q) in nodes.iter().enumerate() {
                for j in 0..NODE_SLOTS {
                    // With value words slot j has its own block; without, two slots share one.
                    let (m, half) = if with_v { (j, 0) } else { (j / 2, j % 2) };
                    let (x, y) = Z64::leaf_words(fk, q, m as u64, fk.ccr(q ^ tweak(m as u64, 0)));
                    let want_a = if half == 0 { x } else { y };
                    assert_eq!(
                        a[NODE_SLOTS * r + j],
                        want_a,
                        "with_v {with_v}, node {r}, slot {j}"
                    );
                    wa[j] += want_a;
                    want_weighted += Z64(40 + r as u64) * want_a;
                    if with_v {
                        assert_eq!(v[NODE_SLOTS * r + j], y, "node {r}, slot {j}");
                        wv[j] += y;
                    }
                }
            }
            assert_eq!((sa, sv), (wa, wv), "with_v {with_v}");
            if !with_v {
                assert_eq!(weighted, want_weighted);
            }
        }
    }
}
