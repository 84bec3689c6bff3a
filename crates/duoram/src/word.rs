//! [`DuoWord`]: the word rings Duoram runs over (`Z64`, the paper's and the benchmarked case,
//! and `Fp`), with the two per-ring decisions the protocol needs: how a DPF leaf label becomes
//! words, and how a masked index is opened.

use doram_field::{BlockSource, Fp, Group, Z64};
use doram_oram::IntegerWord;
use doram_prim::aes::{BATCH, Block, FixedKeyAes, NODE_SLOTS};
use doram_prim::chacha;

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
/// node label (so that equal labels — all nodes off the path — give equal words) that is
/// pseudorandom in the ring for a random label ([`slot_words`](Self::slot_words)). For `Z64`
/// they are the words of ChaCha12 keyed by the label ([`doram_prim::chacha`]: `a_j = w_j`,
/// `v_j = w_{16+j}`), sixteen nodes at a time in AVX-512 registers; for `Fp` they are drawn with
/// [`Group::random_from`] from the circular correlation-robust hash streams `CCR(s ⊕ T(j, k))`,
/// k = 0, 1, … (slot `j` for the flag word, slot `j + 2^31` for the value word; rejection
/// sampling needs one block almost always).
pub trait DuoWord: IntegerWord {
    /// Whether reducing every additive share mod `2^h` gives additive shares mod `2^h` (true for
    /// Z/2^64): then a masked index is opened exactly, share by share. Otherwise (a prime field)
    /// it is opened as an integer under a statistical mask (see the crate documentation).
    const SHARES_REDUCE_MOD_POW2: bool;

    /// The words of output slots `0 … k − 1` of the output node `node`, `k = a.len() ≤ 16`:
    /// `a_j(node)` into `a[j]` and, if `v` is given (of length `k`), `v_j(node)` into `v[j]`.
    /// This is the definition the full-width kernel [`node_kernel`](Self::node_kernel) must
    /// agree with; the preprocessing calls it directly on trees of fewer than 16 leaves.
    fn slot_words(fk: &FixedKeyAes, node: Block, a: &mut [Self], v: Option<&mut [Self]>);

    /// The output stage on full-width output nodes (16 slots each): slot `j` of node
    /// `s = nodes[r]` gives `a_j(s)` into `a[16r + j]` and, with `v`, `v_j(s)` into
    /// `v[16r + j]`; each slot's words are added into `sa[j]` (and `sv[j]`). Without `v` it
    /// returns `Σ_r (first_node + r)·T_r` over the nodes' flag-word totals `T_r` (the node part
    /// of `Σ_x x·a[x]`); with `v` the return value is not used. This default calls
    /// [`slot_words`](Self::slot_words) node by node; `Z64` overrides it with vector kernels
    /// computing the same words.
    fn node_kernel(
        fk: &FixedKeyAes,
        nodes: &[Block],
        first_node: u64,
        a: &mut [Self],
        v: Option<&mut [Self]>,
        sa: &mut [Self; NODE_SLOTS],
        sv: &mut [Self; NODE_SLOTS],
    ) -> Self {
        by_slot_words(fk, nodes, first_node, a, v, sa, sv)
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

/// The output stage node by node with [`DuoWord::slot_words`], for output nodes of
/// `k = sa.len() ≤ 16` slots (`sv` as long): slot `j` of node `s = nodes[r]` gives `a_j(s)` into `a[k·r + j]` and, with `v`,
/// `v_j(s)` into `v[k·r + j]`; each slot's words are added into `sa[j]` (and `sv[j]`). Returns
/// `Σ_r (first_node + r)·T_r` over the nodes' flag-word totals `T_r`. Nodes without room for
/// their words in `a` (or `v`) are ignored. The default [`DuoWord::node_kernel`], and the
/// output stage of trees with fewer than 16 leaves.
pub(crate) fn by_slot_words<W: DuoWord>(
    fk: &FixedKeyAes,
    nodes: &[Block],
    first_node: u64,
    a: &mut [W],
    mut v: Option<&mut [W]>,
    sa: &mut [W],
    sv: &mut [W],
) -> W {
    let k = sa.len();
    debug_assert!(k > 0 && sv.len() == k);
    let room_v = v.as_deref().map_or(usize::MAX, |v| v.len() / k);
    let count = nodes.len().min(a.len() / k).min(room_v);
    let mut weighted = W::ZERO;
    for (r, &q) in nodes[..count].iter().enumerate() {
        let ac = &mut a[k * r..k * (r + 1)];
        let mut vc = v.as_deref_mut().map(|v| &mut v[k * r..k * (r + 1)]);
        W::slot_words(fk, q, ac, vc.as_deref_mut());
        let mut total = W::ZERO;
        for (s, &x) in sa.iter_mut().zip(ac.iter()) {
            *s += x;
            total += x;
        }
        if let Some(vc) = vc {
            for (s, &y) in sv.iter_mut().zip(vc.iter()) {
                *s += y;
            }
        }
        weighted += W::from_u64(first_node.wrapping_add(r as u64)) * total;
    }
    weighted
}

impl DuoWord for Z64 {
    const SHARES_REDUCE_MOD_POW2: bool = true;

    fn slot_words(_fk: &FixedKeyAes, node: Block, a: &mut [Z64], v: Option<&mut [Z64]>) {
        let w = chacha::node_words(node);
        for (j, x) in a.iter_mut().enumerate() {
            *x = Z64(w[j]);
        }
        if let Some(v) = v {
            for (j, y) in v.iter_mut().enumerate() {
                *y = Z64(w[NODE_SLOTS + j]);
            }
        }
    }

    fn node_kernel(
        _fk: &FixedKeyAes,
        nodes: &[Block],
        first_node: u64,
        a: &mut [Z64],
        v: Option<&mut [Z64]>,
        sa: &mut [Z64; NODE_SLOTS],
        sv: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        match v {
            Some(v) => {
                chacha::flag_and_value_words(nodes, a, v, sa, sv);
                // Not used with value words (see the trait).
                Z64(0)
            }
            None => chacha::flag_words(nodes, first_node, a, sa),
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

    fn slot_words(fk: &FixedKeyAes, node: Block, a: &mut [Fp], mut v: Option<&mut [Fp]>) {
        // The first blocks of the flag streams, eight slots per batched hash.
        for (c, chunk) in a.chunks_mut(BATCH).enumerate() {
            let mut first: [Block; BATCH] =
                std::array::from_fn(|i| node ^ tweak((c * BATCH + i) as u64, 0));
            fk.ccr8(&mut first);
            for (i, x) in chunk.iter_mut().enumerate() {
                let j = (c * BATCH + i) as u64;
                *x = Fp::random_from(&mut LeafStream {
                    fk,
                    leaf: node,
                    j,
                    k: 1,
                    first: Some(first[i]),
                });
                if let Some(y) = v.as_deref_mut().and_then(|v| v.get_mut(j as usize)) {
                    // The value word's stream: the tweaks of slot j + 2^31, which no slot has.
                    *y = Fp::random_from(&mut LeafStream {
                        fk,
                        leaf: node,
                        j: j + VALUE_STREAM,
                        k: 0,
                        first: None,
                    });
                }
            }
        }
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
    fn slot_words_are_functions_of_the_label() {
        let fk = fixed_key();
        let leaf = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3211u128;
        // Z64: the ChaCha12 words of the label, flag words first.
        let w = chacha::node_words(leaf);
        let (mut a, mut v) = ([Z64(0); NODE_SLOTS], [Z64(0); NODE_SLOTS]);
        Z64::slot_words(fk, leaf, &mut a, Some(&mut v));
        for j in 0..NODE_SLOTS {
            assert_eq!((a[j].0, v[j].0), (w[j], w[NODE_SLOTS + j]), "slot {j}");
        }
        let mut few = [Z64(0); 3];
        Z64::slot_words(fk, leaf, &mut few, None);
        assert_eq!(few, a[..3]);
        // Fp: the flag word from the stream CCR(s ⊕ T(j, k)), the value word from its own.
        let (mut fa, mut fv) = ([Fp::ZERO; 4], [Fp::ZERO; 4]);
        Fp::slot_words(fk, leaf, &mut fa, Some(&mut fv));
        let stream = |j: u64, first: Option<Block>| LeafStream {
            fk,
            leaf,
            j,
            k: u64::from(first.is_some()),
            first,
        };
        let first = fk.ccr(leaf ^ tweak(2, 0));
        assert_eq!(fa[2], Fp::random_from(&mut stream(2, Some(first))));
        assert_eq!(fv[2], Fp::random_from(&mut stream(2 + VALUE_STREAM, None)));
        assert_ne!(fa[0], fv[0]);
        let mut other = [Fp::ZERO; 4];
        Fp::slot_words(fk, leaf ^ 2, &mut other, None);
        assert_ne!(other[0], fa[0]);
        let mut again = [Fp::ZERO; 4];
        Fp::slot_words(fk, leaf, &mut again, None);
        assert_eq!(again, fa);
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

    /// `W::node_kernel` against `W::slot_words`, node by node, with and without value words.
    fn node_kernel_gives_the_slot_words<W: DuoWord>() {
        let fk = fixed_key();
        for count in [1usize, 5, 16, 21] {
            let nodes: Vec<Block> = (0..count as u128)
                .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15))
                .collect();
            let len = NODE_SLOTS * nodes.len();
            for with_v in [true, false] {
                let (mut a, mut v) = (vec![W::ZERO; len], vec![W::ZERO; len]);
                let (mut sa, mut sv) = ([W::ZERO; NODE_SLOTS], [W::ZERO; NODE_SLOTS]);
                let vs = with_v.then_some(&mut v[..]);
                let weighted = W::node_kernel(fk, &nodes, 40, &mut a, vs, &mut sa, &mut sv);
                let (mut wa, mut wv) = ([W::ZERO; NODE_SLOTS], [W::ZERO; NODE_SLOTS]);
                let mut want_weighted = W::ZERO;
                for (r, &q) in nodes.iter().enumerate() {
                    let (mut x, mut y) = ([W::ZERO; NODE_SLOTS], [W::ZERO; NODE_SLOTS]);
                    W::slot_words(fk, q, &mut x, Some(&mut y));
                    for j in 0..NODE_SLOTS {
                        let at = NODE_SLOTS * r + j;
                        assert_eq!(
                            a[at], x[j],
                            "{count} nodes, with_v {with_v}, node {r}, slot {j}"
                        );
                        wa[j] += x[j];
                        want_weighted += W::from_u64(40 + r as u64) * x[j];
                        if with_v {
                            assert_eq!(v[at], y[j], "{count} nodes, node {r}, slot {j}");
                            wv[j] += y[j];
                        }
                    }
                }
                assert_eq!(sa, wa, "{count} nodes, with_v {with_v}");
                if with_v {
                    assert_eq!(sv, wv, "{count} nodes");
                } else {
                    assert_eq!(weighted, want_weighted, "{count} nodes");
                }
            }
        }
    }

    #[test]
    fn the_z64_node_kernel_gives_the_slot_words() {
        node_kernel_gives_the_slot_words::<Z64>();
    }

    #[test]
    fn the_fp_node_kernel_gives_the_slot_words() {
        node_kernel_gives_the_slot_words::<Fp>();
    }
}
