//! ChaCha12 expansion of DPF output nodes into 64-bit words: a PRG keyed by the node's seed.
//!
//! # The function
//!
//! `G(s)` for a 128-bit node seed `s` is the first 256 bytes of the ChaCha12 keystream under the
//! 256-bit key `s ‖ 0^128` (little-endian), block counter 0, 1, 2, 3 and the 64-bit stream
//! (nonce) [`STREAM`], read as 32 little-endian `u64` words `w_0 … w_31` — exactly what
//! `rand_chacha::ChaCha12Rng::from_seed(s ‖ 0)` with `set_stream(STREAM)` gives from 32
//! `next_u64` calls, which the tests check. A DPF output node with sixteen output slots takes
//! slot `j`'s *flag word* from `w_j` and its *value word* from `w_{16+j}`
//! ([`node_words`], and the two kernels [`flag_words`] and [`flag_and_value_words`]).
//!
//! # Why ChaCha, and why it is sound here
//!
//! The output stage of a DPF with sixteen leaves per output node hashes every output node of
//! the tree; over a whole domain that is the bulk of a distributed ORAM's preprocessing. The
//! fixed-key AES hash `CCR(s ⊕ T_j)` needs one AES call (ten rounds at one `AESENC` per cycle on
//! this machine's one AES unit) per slot and per 128 bits of output. ChaCha12 keyed by the node
//! runs sixteen nodes in the sixteen 32-bit lanes of AVX-512 registers and has no key schedule:
//! measured on the target machine (Cascade Lake) over 2^16 slots, 2.8–2.9 ns per slot for both
//! words against 4.5–5.8 ns for the AES kernel (`FixedKeyAes::node_words_split`) in the same
//! runs (the prim crate's criterion group `output_stage_64k_leaves`).
//!
//! Security: in a Half-Tree DPF both parties hold equal seeds at output nodes off the path and
//! seeds differing by the secret global offset Δ (lsb 1) at the one node on it. Half-Tree's
//! analysis treats the tree's hashes in the random-permutation model and shows that a party's
//! view hides Δ; the other party's on-path seed `s ⊕ Δ` then has 127 bits of entropy given the
//! view, and keyed by it, ChaCha12 is a pseudorandom function: its output stays pseudorandom
//! given the view. That is the plain PRG assumption of the original tree DPFs (Boyle–Gilboa–
//! Ishai), applied to the leaves, rather than a correlation-robustness assumption on a fixed
//! permutation. ChaCha12 is the round count of `rand`'s `StdRng`; the best published attacks
//! reach seven rounds.
//!
//! # Implementation
//!
//! On x86-64 with AVX-512 (detected at run time) sixteen nodes are expanded at once, one per
//! lane, with the vector code written against the safe intrinsic wrappers of the `pulp` crate;
//! each 64-byte block is transposed in registers (a 16×16 transpose of 32-bit words, four passes
//! of shuffles) so that every node's words are stored contiguously, and the per-slot sums and
//! the index-weighted sum stay in vector accumulators. Other machines, and the nodes left over
//! after the last group of sixteen, use `rand_chacha`.

use doram_field::Z64;
use rand_chacha::ChaCha12Rng;
use rand_core::{RngCore, SeedableRng};

use crate::aes::{Block, NODE_SLOTS};

/// The ChaCha stream (nonce) of the output-node expansion: the bytes `"doramdpf"`, so that this
/// use of a key never meets another.
pub const STREAM: u64 = u64::from_le_bytes(*b"doramdpf");

/// Words per output node: sixteen flag words, then sixteen value words.
pub const NODE_WORDS: usize = 2 * NODE_SLOTS;

/// The first `N` words of node `s`'s keystream (ChaCha12, key `s ‖ 0`, stream [`STREAM`], from
/// block 0), through `rand_chacha`.
fn first_words<const N: usize>(node: Block) -> [u64; N] {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&node.to_le_bytes());
    let mut rng = ChaCha12Rng::from_seed(key);
    rng.set_stream(STREAM);
    std::array::from_fn(|_| rng.next_u64())
}

/// `G(s)`: the 32 words of node `s` (see the module documentation).
pub fn node_words(node: Block) -> [u64; NODE_WORDS] {
    first_words(node)
}

/// Flag words only: slot `j` of node `q = nodes[r]` gets `w_j(q)` in `a[16r + j]`, added into
/// `sum_a[j]`. Returns `Σ_r (first_node + r)·T_r` with `T_r` the sum of node `r`'s sixteen
/// words (the node-level part of an index-weighted sum `Σ_x x·a[x]`).
///
/// Nodes beyond `a.len() / 16` are ignored.
pub fn flag_words(
    nodes: &[Block],
    first_node: u64,
    a: &mut [Z64],
    sum_a: &mut [Z64; NODE_SLOTS],
) -> Z64 {
    let count = nodes.len().min(a.len() / NODE_SLOTS);
    let (nodes, a) = (&nodes[..count], &mut a[..count * NODE_SLOTS]);
    #[cfg(target_arch = "x86_64")]
    let (weighted, done) = match avx512::token() {
        Some(simd) => avx512::flag_words(simd, nodes, first_node, a, sum_a),
        None => (Z64(0), 0),
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (weighted, done) = (Z64(0), 0);
    let mut weighted = weighted;
    for (r, (&q, ac)) in nodes
        .iter()
        .zip(a.chunks_exact_mut(NODE_SLOTS))
        .enumerate()
        .skip(done)
    {
        let w: [u64; NODE_SLOTS] = first_words(q);
        let mut total = Z64(0);
        for j in 0..NODE_SLOTS {
            ac[j] = Z64(w[j]);
            sum_a[j] += Z64(w[j]);
            total += Z64(w[j]);
        }
        weighted += Z64(first_node.wrapping_add(r as u64)) * total;
    }
    weighted
}

/// Flag and value words: slot `j` of node `q = nodes[r]` gets `w_j(q)` in `a[16r + j]` and
/// `w_{16+j}(q)` in `v[16r + j]`, added into `sum_a[j]` and `sum_v[j]`.
///
/// Nodes beyond `a.len() / 16` or `v.len() / 16` are ignored.
pub fn flag_and_value_words(
    nodes: &[Block],
    a: &mut [Z64],
    v: &mut [Z64],
    sum_a: &mut [Z64; NODE_SLOTS],
    sum_v: &mut [Z64; NODE_SLOTS],
) {
    let count = nodes
        .len()
        .min(a.len() / NODE_SLOTS)
        .min(v.len() / NODE_SLOTS);
    let nodes = &nodes[..count];
    let (a, v) = (&mut a[..count * NODE_SLOTS], &mut v[..count * NODE_SLOTS]);
    #[cfg(target_arch = "x86_64")]
    let done = match avx512::token() {
        Some(simd) => avx512::flag_and_value_words(simd, nodes, a, v, sum_a, sum_v),
        None => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    let outs = a
        .chunks_exact_mut(NODE_SLOTS)
        .zip(v.chunks_exact_mut(NODE_SLOTS));
    for (&q, (ac, vc)) in nodes.iter().zip(outs).skip(done) {
        let w = node_words(q);
        for j in 0..NODE_SLOTS {
            ac[j] = Z64(w[j]);
            vc[j] = Z64(w[NODE_SLOTS + j]);
            sum_a[j] += Z64(w[j]);
            sum_v[j] += Z64(w[NODE_SLOTS + j]);
        }
    }
}

/// Whether the sixteen-lane AVX-512 kernels run on this machine (otherwise every node goes
/// through `rand_chacha`).
pub fn vectorized() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx512::token().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! The sixteen-lane kernels. Every helper is `#[inline(always)]`, so that it is compiled
    //! inside [`V4::vectorize`] with the AVX-512 features enabled.

    use core::arch::x86_64::__m512i;

    use doram_field::Z64;
    use pulp::x86::V4;

    use super::{NODE_SLOTS, STREAM};
    use crate::aes::Block;

    /// Nodes per kernel call: one per 32-bit lane.
    const LANES: usize = 16;

    /// "expand 32-byte k".
    const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

    /// Double rounds: ChaCha12.
    const DOUBLE_ROUNDS: usize = 6;

    /// The AVX-512 token if this machine has the features (checked once, then cached by `pulp`).
    #[inline]
    pub(super) fn token() -> Option<V4> {
        V4::try_new()
    }

    type State = [__m512i; 16];

    /// One ChaCha double round on sixteen states at once (a column round, then a diagonal one).
    #[inline(always)]
    fn double_round(simd: V4, x: &mut State) {
        let f = simd.avx512f;
        macro_rules! quarter {
            ($a:expr, $b:expr, $c:expr, $d:expr) => {
                x[$a] = f._mm512_add_epi32(x[$a], x[$b]);
                x[$d] = f._mm512_rol_epi32::<16>(f._mm512_xor_si512(x[$d], x[$a]));
                x[$c] = f._mm512_add_epi32(x[$c], x[$d]);
                x[$b] = f._mm512_rol_epi32::<12>(f._mm512_xor_si512(x[$b], x[$c]));
                x[$a] = f._mm512_add_epi32(x[$a], x[$b]);
                x[$d] = f._mm512_rol_epi32::<8>(f._mm512_xor_si512(x[$d], x[$a]));
                x[$c] = f._mm512_add_epi32(x[$c], x[$d]);
                x[$b] = f._mm512_rol_epi32::<7>(f._mm512_xor_si512(x[$b], x[$c]));
            };
        }
        quarter!(0, 4, 8, 12);
        quarter!(1, 5, 9, 13);
        quarter!(2, 6, 10, 14);
        quarter!(3, 7, 11, 15);
        quarter!(0, 5, 10, 15);
        quarter!(1, 6, 11, 12);
        quarter!(2, 7, 8, 13);
        quarter!(3, 4, 9, 14);
    }

    /// Transposes a 16×16 matrix of 32-bit words: lane `p` of `x[k]` becomes lane `k` of
    /// `out[p]`.
    #[inline(always)]
    fn transpose(simd: V4, x: &State) -> State {
        let f = simd.avx512f;
        let zero = f._mm512_setzero_si512();
        // Pass 1: interleave 32-bit words of row pairs.
        let mut t = [zero; 16];
        for i in 0..8 {
            t[2 * i] = f._mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]);
            t[2 * i + 1] = f._mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]);
        }
        // Pass 2: interleave 64-bit words; within each 128-bit lane L, u[4i + q] now holds
        // rows 4i … 4i + 3 of column 4L + q.
        let mut u = [zero; 16];
        for i in 0..4 {
            for h in 0..2 {
                u[4 * i + 2 * h] = f._mm512_unpacklo_epi64(t[4 * i + h], t[4 * i + 2 + h]);
                u[4 * i + 2 * h + 1] = f._mm512_unpackhi_epi64(t[4 * i + h], t[4 * i + 2 + h]);
            }
        }
        // Passes 3 and 4: move the 128-bit lanes into place.
        let mut w = [zero; 16];
        for q in 0..4 {
            for i in 0..2 {
                w[8 * i + q] = f._mm512_shuffle_i32x4::<0x88>(u[8 * i + q], u[8 * i + 4 + q]);
                w[8 * i + 4 + q] = f._mm512_shuffle_i32x4::<0xdd>(u[8 * i + q], u[8 * i + 4 + q]);
            }
        }
        let mut out = [zero; 16];
        for q in 0..4 {
            for i in 0..2 {
                let (lo, hi) = (w[4 * i + q], w[8 + 4 * i + q]);
                out[q + 4 * i] = f._mm512_shuffle_i32x4::<0x88>(lo, hi);
                out[q + 4 * i + 8] = f._mm512_shuffle_i32x4::<0xdd>(lo, hi);
            }
        }
        out
    }

    /// The initial states of sixteen nodes (block counter 0): lane `p` is `nodes[p]`.
    #[inline(always)]
    fn init(simd: V4, nodes: &[Block; LANES]) -> State {
        let f = simd.avx512f;
        let mut key = [[0u32; LANES]; 4];
        for (p, &q) in nodes.iter().enumerate() {
            for (w, k) in key.iter_mut().enumerate() {
                k[p] = (q >> (32 * w)) as u32;
            }
        }
        let zero = f._mm512_setzero_si512();
        let mut st = [zero; 16];
        for i in 0..4 {
            st[i] = f._mm512_set1_epi32(SIGMA[i] as i32);
            st[4 + i] = pulp::cast(key[i]);
        }
        // st[8..12]: the zero upper half of the key; st[12], st[13]: the block counter.
        st[14] = f._mm512_set1_epi32(STREAM as u32 as i32);
        st[15] = f._mm512_set1_epi32((STREAM >> 32) as u32 as i32);
        st
    }

    /// Block `counter` of the sixteen nodes whose block-0 state is `st`, transposed: `out[p]` is
    /// node `p`'s 64 bytes, i.e. its words `w_{8·counter} … w_{8·counter+7}` as 64-bit lanes.
    #[inline(always)]
    fn block(simd: V4, st: &State, counter: u32) -> State {
        let f = simd.avx512f;
        let mut s0 = *st;
        s0[12] = f._mm512_set1_epi32(counter as i32);
        let mut x = s0;
        for _ in 0..DOUBLE_ROUNDS {
            double_round(simd, &mut x);
        }
        for k in 0..16 {
            x[k] = f._mm512_add_epi32(x[k], s0[k]);
        }
        transpose(simd, &x)
    }

    /// Stores the eight 64-bit lanes of `x` into `dst`.
    #[inline(always)]
    fn store(x: __m512i, dst: &mut [Z64]) {
        let w: [u64; 8] = pulp::cast(x);
        for (d, w) in dst.iter_mut().zip(w) {
            *d = Z64(w);
        }
    }

    /// Adds the 64-bit lanes of `acc` into `sums`.
    #[inline(always)]
    fn add_lanes(acc: __m512i, sums: &mut [Z64]) {
        let w: [u64; 8] = pulp::cast(acc);
        for (s, w) in sums.iter_mut().zip(w) {
            *s += Z64(w);
        }
    }

    /// [`super::flag_words`] on the whole groups of sixteen nodes; returns the weighted sum
    /// over them and the number of nodes done. `a` holds exactly 16 words per node.
    pub(super) fn flag_words(
        simd: V4,
        nodes: &[Block],
        first_node: u64,
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> (Z64, usize) {
        simd.vectorize(FlagWords {
            simd,
            nodes,
            first_node,
            a,
            sum_a,
        })
    }

    /// The arguments of [`flag_words`], run by [`V4::vectorize`] (a named type rather than a
    /// closure, so that the body is inlined into the function compiled with the features).
    struct FlagWords<'a> {
        simd: V4,
        nodes: &'a [Block],
        first_node: u64,
        a: &'a mut [Z64],
        sum_a: &'a mut [Z64; NODE_SLOTS],
    }

    impl pulp::NullaryFnOnce for FlagWords<'_> {
        type Output = (Z64, usize);

        #[inline(always)]
        fn call(self) -> (Z64, usize) {
            let FlagWords {
                simd,
                nodes,
                first_node,
                a,
                sum_a,
            } = self;
            let f = simd.avx512f;
            let zero = f._mm512_setzero_si512();
            let mut acc = [zero; 2];
            // Σ_r r·T_r over the node totals T_r, as N·P − Σ_r P_r with the prefix sums
            // P_r (lane-wise; the lanes are added up at the end).
            let (mut prefix, mut prefix_sum) = (zero, zero);
            let groups = nodes.chunks_exact(LANES);
            let done = groups.len() * LANES;
            for (group, out) in groups.zip(a.chunks_exact_mut(LANES * NODE_SLOTS)) {
                let Ok(group) = <&[Block; LANES]>::try_from(group) else {
                    continue;
                };
                let st = init(simd, group);
                let b0 = block(simd, &st, 0);
                let b1 = block(simd, &st, 1);
                for p in 0..LANES {
                    let at = p * NODE_SLOTS;
                    store(b0[p], &mut out[at..at + 8]);
                    store(b1[p], &mut out[at + 8..at + 16]);
                    acc[0] = f._mm512_add_epi64(acc[0], b0[p]);
                    acc[1] = f._mm512_add_epi64(acc[1], b1[p]);
                    prefix = f._mm512_add_epi64(prefix, f._mm512_add_epi64(b0[p], b1[p]));
                    prefix_sum = f._mm512_add_epi64(prefix_sum, prefix);
                }
            }
            add_lanes(acc[0], &mut sum_a[..8]);
            add_lanes(acc[1], &mut sum_a[8..]);
            let total = Z64(f._mm512_reduce_add_epi64(prefix) as u64);
            let total_prefix = Z64(f._mm512_reduce_add_epi64(prefix_sum) as u64);
            let count = Z64(done as u64);
            let weighted = Z64(first_node) * total + count * total - total_prefix;
            (weighted, done)
        }
    }

    /// [`super::flag_and_value_words`] on the whole groups of sixteen nodes; returns the number
    /// of nodes done. `a` and `v` hold exactly 16 words per node.
    pub(super) fn flag_and_value_words(
        simd: V4,
        nodes: &[Block],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) -> usize {
        simd.vectorize(FlagAndValueWords {
            simd,
            nodes,
            a,
            v,
            sum_a,
            sum_v,
        })
    }

    /// The arguments of [`flag_and_value_words`], run by [`V4::vectorize`] (a named type rather than a
    /// closure, so that the body is inlined into the function compiled with the features).
    struct FlagAndValueWords<'a> {
        simd: V4,
        nodes: &'a [Block],
        a: &'a mut [Z64],
        v: &'a mut [Z64],
        sum_a: &'a mut [Z64; NODE_SLOTS],
        sum_v: &'a mut [Z64; NODE_SLOTS],
    }

    impl pulp::NullaryFnOnce for FlagAndValueWords<'_> {
        type Output = usize;

        #[inline(always)]
        fn call(self) -> usize {
            let FlagAndValueWords {
                simd,
                nodes,
                a,
                v,
                sum_a,
                sum_v,
            } = self;
            let f = simd.avx512f;
            let mut acc = [f._mm512_setzero_si512(); 4];
            let groups = nodes.chunks_exact(LANES);
            let done = groups.len() * LANES;
            let outs = a
                .chunks_exact_mut(LANES * NODE_SLOTS)
                .zip(v.chunks_exact_mut(LANES * NODE_SLOTS));
            for (group, (oa, ov)) in groups.zip(outs) {
                let Ok(group) = <&[Block; LANES]>::try_from(group) else {
                    continue;
                };
                let st = init(simd, group);
                for (c, acc) in acc.iter_mut().enumerate() {
                    let b = block(simd, &st, c as u32);
                    let out: &mut [Z64] = if c < 2 { &mut *oa } else { &mut *ov };
                    let off = 8 * (c & 1);
                    for (p, &x) in b.iter().enumerate() {
                        let at = p * NODE_SLOTS + off;
                        store(x, &mut out[at..at + 8]);
                        *acc = f._mm512_add_epi64(*acc, x);
                    }
                }
            }
            add_lanes(acc[0], &mut sum_a[..8]);
            add_lanes(acc[1], &mut sum_a[8..]);
            add_lanes(acc[2], &mut sum_v[..8]);
            add_lanes(acc[3], &mut sum_v[8..]);
            done
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random_nodes(n: usize, seed: u64) -> Vec<Block> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| rng.random()).collect()
    }

    /// The words, sums and weighted sum of the plain definition.
    fn oracle(nodes: &[Block], first_node: u64) -> (Vec<Z64>, Vec<Z64>, [Z64; 16], [Z64; 16], Z64) {
        let (mut a, mut v) = (Vec::new(), Vec::new());
        let (mut sa, mut sv) = ([Z64(0); 16], [Z64(0); 16]);
        let mut weighted = Z64(0);
        for (r, &q) in nodes.iter().enumerate() {
            let w = node_words(q);
            let mut total = Z64(0);
            for j in 0..16 {
                a.push(Z64(w[j]));
                v.push(Z64(w[16 + j]));
                sa[j] += Z64(w[j]);
                sv[j] += Z64(w[16 + j]);
                total += Z64(w[j]);
            }
            weighted += Z64(first_node + r as u64) * total;
        }
        (a, v, sa, sv, weighted)
    }

    #[test]
    fn node_words_match_an_independent_chacha12() {
        // Words 0, 1, 15, 16 and 31 of G(s) for this s, computed by a separate implementation
        // of the ChaCha12 block function (state: "expand 32-byte k", the key s ‖ 0 as
        // little-endian words, the 64-bit block counter, then the stream).
        let w = node_words(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        assert_eq!(w[0], 0xb826_9df9_c704_6b1e);
        assert_eq!(w[1], 0xbec0_4816_f345_9e36);
        assert_eq!(w[15], 0xbe45_40c0_c3fc_bfcc);
        assert_eq!(w[16], 0x4852_e8a9_75b5_8d6c);
        assert_eq!(w[31], 0xb2f7_ff47_6cb9_0f55);
    }

    #[test]
    fn node_words_are_the_chacha12_stream_of_the_key_s_and_zero() {
        // An independent statement of the definition: ChaCha12 as a stream cipher over zero
        // bytes, the keystream read as little-endian words.
        let node = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(&node.to_le_bytes());
        let mut rng = ChaCha12Rng::from_seed(key);
        rng.set_stream(STREAM);
        let mut bytes = [0u8; 256];
        rng.fill_bytes(&mut bytes);
        let w = node_words(node);
        for (i, chunk) in bytes.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            assert_eq!(w[i], u64::from_le_bytes(b));
        }
        // Different seeds give different words, and the words are not the zero-stream ones.
        assert_ne!(node_words(node ^ 1), w);
        assert_ne!(node_words(node)[0], node_words(node)[1]);
    }

    #[test]
    fn the_kernels_match_the_definition_on_every_length() {
        for (n, first) in [
            (0, 0),
            (1, 5),
            (15, 0),
            (16, 7),
            (17, 1),
            (33, 100),
            (64, 3),
            (77, 9),
        ] {
            let nodes = random_nodes(n, n as u64);
            let (a, v, sa, sv, weighted) = oracle(&nodes, first);

            let (mut ka, mut kv) = (vec![Z64(0); 16 * n], vec![Z64(0); 16 * n]);
            let (mut ksa, mut ksv) = ([Z64(1); 16], [Z64(2); 16]);
            flag_and_value_words(&nodes, &mut ka, &mut kv, &mut ksa, &mut ksv);
            assert_eq!(ka, a, "flag words, {n} nodes");
            assert_eq!(kv, v, "value words, {n} nodes");
            for j in 0..16 {
                assert_eq!(ksa[j], sa[j] + Z64(1), "flag sum {j}, {n} nodes");
                assert_eq!(ksv[j], sv[j] + Z64(2), "value sum {j}, {n} nodes");
            }

            let mut fa = vec![Z64(0); 16 * n];
            let mut fsa = [Z64(3); 16];
            let w = flag_words(&nodes, first, &mut fa, &mut fsa);
            assert_eq!(fa, a, "flag words only, {n} nodes");
            for j in 0..16 {
                assert_eq!(fsa[j], sa[j] + Z64(3), "flag-only sum {j}, {n} nodes");
            }
            assert_eq!(w, weighted, "weighted sum, {n} nodes");
        }
    }

    #[test]
    fn the_kernels_ignore_nodes_without_room_for_their_words() {
        let nodes = random_nodes(40, 1);
        let (a, v, ..) = oracle(&nodes[..20], 0);
        // Room for 20 nodes' flag words and 32 nodes' value words: 20 nodes are expanded.
        let (mut ka, mut kv) = (vec![Z64(0); 16 * 20 + 5], vec![Z64(0); 16 * 32]);
        let (mut sa, mut sv) = ([Z64(0); 16], [Z64(0); 16]);
        flag_and_value_words(&nodes, &mut ka, &mut kv, &mut sa, &mut sv);
        assert_eq!(&ka[..320], &a[..]);
        assert!(ka[320..].iter().all(|&x| x == Z64(0)));
        assert_eq!(&kv[..320], &v[..]);
        assert!(kv[320..].iter().all(|&x| x == Z64(0)));
        let mut fa = vec![Z64(0); 16 * 20 + 15];
        let mut fsa = [Z64(0); 16];
        flag_words(&nodes, 0, &mut fa, &mut fsa);
        assert_eq!(&fa[..320], &a[..]);
    }

    #[test]
    fn this_machine_runs_the_vector_kernels_if_it_has_avx512() {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            vectorized(),
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512cd")
        );
    }
}
