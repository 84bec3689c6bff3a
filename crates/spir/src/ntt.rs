//! The forward negacyclic NTT of SPIRAL's ring (dimension 2048, per 28-bit CRT prime) on 32-bit
//! lanes, for the online encoding of the database and the folding.
//!
//! It computes exactly what `spiral_rs::ntt::ntt_forward` computes (the same Cooley–Tukey
//! decimation in time with bit-reversed root powers and Harvey's lazy butterflies, values kept
//! below 4q and reduced at the end), but on `u32` lanes: eight butterflies per AVX2 step where
//! `spiral-rs` does four on 64-bit lanes, and the last three layers (butterflies closer than
//! eight lanes apart) vectorised by lane shuffles where `spiral-rs` runs them scalar. Outputs
//! are fully reduced into `[0, q)`; `spiral-rs` may leave `q` for 0, so the two agree mod q (the
//! tests compare them).
//!
//! Without AVX2 in the build the same algorithm runs scalar.

use spiral_rs::params::Params;

/// The ring dimension the tables are built for.
pub(crate) const N: usize = 2048;
const LOG_N: usize = 11;
/// Butterflies per vector.
const LANES: usize = 8;

/// One CRT prime's tables.
#[derive(Clone)]
struct Prime {
    q: u32,
    /// `w[m + i]`, the root powers in bit-reversed order (as `spiral-rs`'s table).
    w: Vec<u32>,
    /// `⌊w · 2^32 / q⌋`.
    w_shoup: Vec<u32>,
    /// The last three layers' twiddles in lane order: `[layer][pair of vectors]`.
    small: [Vec<[u32; LANES]>; 3],
    small_shoup: [Vec<[u32; LANES]>; 3],
}

/// Forward NTT tables for the CRT primes of one parameter set.
#[derive(Clone)]
pub(crate) struct Ntt {
    primes: Vec<Prime>,
}

/// The twiddle index of lane `l` for the vector pair `k` in the layers with `t = 4, 2, 1` (see
/// [`small_layers`] for the shuffles these orders match).
fn lane_block(t: usize, k: usize, l: usize) -> usize {
    match t {
        // X = [A.lo, B.lo]: blocks 2k (A) and 2k + 1 (B), four lanes each.
        4 => 2 * k + l / 4,
        // X = [a0 a1 b0 b1 | a4 a5 b4 b5]: blocks 4k, 4k + 2, 4k + 1, 4k + 3.
        2 => 4 * k + [0, 0, 2, 2, 1, 1, 3, 3][l],
        // X = [a0 a2 b0 b2 | a4 a6 b4 b6]: blocks 8k + (0, 1, 4, 5, 2, 3, 6, 7).
        _ => 8 * k + [0, 1, 4, 5, 2, 3, 6, 7][l],
    }
}

impl Ntt {
    /// The tables of `params` (which must have ring dimension 2048 and 32-bit CRT primes).
    pub(crate) fn new(params: &Params) -> Ntt {
        assert_eq!(params.poly_len, N, "SPIRAL ring dimension");
        let primes = (0..params.crt_count)
            .map(|c| {
                let q = u32::try_from(params.moduli[c]).expect("a 32-bit CRT prime");
                assert!(q < 1 << 30, "lazy butterflies need 4q < 2^32");
                let w: Vec<u32> = params.get_ntt_forward_table(c)[..N]
                    .iter()
                    .map(|&x| x as u32)
                    .collect();
                let w_shoup: Vec<u32> = params.get_ntt_forward_prime_table(c)[..N]
                    .iter()
                    .map(|&x| x as u32)
                    .collect();
                let small = |table: &[u32]| -> [Vec<[u32; LANES]>; 3] {
                    [4usize, 2, 1].map(|t| {
                        let m = N / (2 * t);
                        (0..N / (2 * LANES))
                            .map(|k| std::array::from_fn(|l| table[m + lane_block(t, k, l)]))
                            .collect()
                    })
                };
                Prime {
                    q,
                    small: small(&w),
                    small_shoup: small(&w_shoup),
                    w,
                    w_shoup,
                }
            })
            .collect();
        Ntt { primes }
    }

    /// The number of CRT primes.
    pub(crate) fn primes(&self) -> usize {
        self.primes.len()
    }

    /// The CRT prime `c`.
    pub(crate) fn modulus(&self, c: usize) -> u32 {
        self.primes[c].q
    }

    /// Transforms `a` (coefficients below 4q) in place modulo CRT prime `c`, into `[0, q)`.
    pub(crate) fn forward(&self, c: usize, a: &mut [u32; N]) {
        let p = &self.primes[c];
        #[cfg(target_feature = "avx2")]
        avx2::forward(p, a);
        #[cfg(not(target_feature = "avx2"))]
        scalar_forward(p, a);
    }
}

/// One lazy butterfly: `x, y < 4q` become `x + wy, x − wy` (mod q), both below 4q.
#[inline(always)]
fn butterfly(q: u32, w: u32, w_shoup: u32, x: &mut u32, y: &mut u32) {
    let two_q = 2 * q;
    let xr = if *x >= two_q { *x - two_q } else { *x };
    let quot = ((u64::from(*y) * u64::from(w_shoup)) >> 32) as u32;
    let t = w.wrapping_mul(*y).wrapping_sub(quot.wrapping_mul(q));
    *x = xr + t;
    *y = xr + two_q - t;
}

/// The scalar algorithm (also the reference the vector path is tested against).
#[cfg_attr(target_feature = "avx2", allow(dead_code))]
fn scalar_forward(p: &Prime, a: &mut [u32; N]) {
    for mm in 0..LOG_N {
        let m = 1 << mm;
        let t = N >> (mm + 1);
        for (i, block) in a.chunks_exact_mut(2 * t).enumerate() {
            let (w, ws) = (p.w[m + i], p.w_shoup[m + i]);
            let (xs, ys) = block.split_at_mut(t);
            for (x, y) in xs.iter_mut().zip(ys) {
                butterfly(p.q, w, ws, x, y);
            }
        }
    }
    for x in a.iter_mut() {
        *x = reduce4(p.q, *x);
    }
}

/// `x < 4q` reduced into `[0, q)`.
#[inline(always)]
fn reduce4(q: u32, x: u32) -> u32 {
    let x = x.min(x.wrapping_sub(2 * q));
    x.min(x.wrapping_sub(q))
}

#[cfg(target_feature = "avx2")]
mod avx2 {
    use super::{LANES, LOG_N, N, Prime};
    use safe_arch::{
        add_i32_m256i, blend_imm_i32_m256i, m256i, min_u32_m256i, mul_i32_keep_low_m256i,
        mul_u64_low_bits_m256i, set_splat_i32_m256i, shr_imm_u64_m256i,
        shuffle_abi_i128z_all_m256i, shuffle_ai_i32_half_m256i, sub_i32_m256i,
        unpack_high_i64_m256i, unpack_low_i64_m256i,
    };

    #[inline(always)]
    fn load(a: &[u32]) -> m256i {
        let v: [u32; LANES] = a[..LANES].try_into().unwrap_or_default();
        m256i::from(v)
    }

    #[inline(always)]
    fn store(a: &mut [u32], v: m256i) {
        let v: [u32; LANES] = v.into();
        a[..LANES].copy_from_slice(&v);
    }

    #[inline(always)]
    fn splat(x: u32) -> m256i {
        set_splat_i32_m256i(x as i32)
    }

    /// The high halves of the eight 32 × 32-bit lane products.
    #[inline(always)]
    fn mul_hi(a: m256i, b: m256i) -> m256i {
        let even = shr_imm_u64_m256i::<32>(mul_u64_low_bits_m256i(a, b));
        let odd = mul_u64_low_bits_m256i(shr_imm_u64_m256i::<32>(a), shr_imm_u64_m256i::<32>(b));
        blend_imm_i32_m256i::<0b1010_1010>(even, odd)
    }

    /// Eight lazy butterflies (see [`super::butterfly`]).
    #[inline(always)]
    fn butterfly(
        q: m256i,
        two_q: m256i,
        w: m256i,
        ws: m256i,
        x: m256i,
        y: m256i,
    ) -> (m256i, m256i) {
        let xr = min_u32_m256i(x, sub_i32_m256i(x, two_q));
        let quot = mul_hi(y, ws);
        let t = sub_i32_m256i(
            mul_i32_keep_low_m256i(w, y),
            mul_i32_keep_low_m256i(quot, q),
        );
        (
            add_i32_m256i(xr, t),
            sub_i32_m256i(add_i32_m256i(xr, two_q), t),
        )
    }

    pub(super) fn forward(p: &Prime, a: &mut [u32; N]) {
        let q = splat(p.q);
        let two_q = splat(2 * p.q);
        // Layers with t ≥ 8: broadcast twiddles.
        for mm in 0..LOG_N - 3 {
            let m = 1 << mm;
            let t = N >> (mm + 1);
            for (i, block) in a.chunks_exact_mut(2 * t).enumerate() {
                let (w, ws) = (splat(p.w[m + i]), splat(p.w_shoup[m + i]));
                let (xs, ys) = block.split_at_mut(t);
                for (xc, yc) in xs.chunks_exact_mut(LANES).zip(ys.chunks_exact_mut(LANES)) {
                    let (x, y) = butterfly(q, two_q, w, ws, load(xc), load(yc));
                    store(xc, x);
                    store(yc, y);
                }
            }
        }
        // t = 4, 2, 1 on pairs of vectors (A, B), shuffled so that X holds the butterflies'
        // first operands and Y the second (lane orders in `super::lane_block`).
        for (k, pair) in a.chunks_exact_mut(2 * LANES).enumerate() {
            let (ac, bc) = pair.split_at_mut(LANES);
            let (mut va, mut vb) = (load(ac), load(bc));
            let tw = |layer: usize| {
                (
                    m256i::from(p.small[layer][k]),
                    m256i::from(p.small_shoup[layer][k]),
                )
            };
            // t = 4.
            let (w, ws) = tw(0);
            let x = shuffle_abi_i128z_all_m256i::<0x20>(va, vb);
            let y = shuffle_abi_i128z_all_m256i::<0x31>(va, vb);
            let (x, y) = butterfly(q, two_q, w, ws, x, y);
            va = shuffle_abi_i128z_all_m256i::<0x20>(x, y);
            vb = shuffle_abi_i128z_all_m256i::<0x31>(x, y);
            // t = 2.
            let (w, ws) = tw(1);
            let x = unpack_low_i64_m256i(va, vb);
            let y = unpack_high_i64_m256i(va, vb);
            let (x, y) = butterfly(q, two_q, w, ws, x, y);
            va = unpack_low_i64_m256i(x, y);
            vb = unpack_high_i64_m256i(x, y);
            // t = 1: [a0 a2 a1 a3 | ...] first.
            let (w, ws) = tw(2);
            let sa = shuffle_ai_i32_half_m256i::<0b11_01_10_00>(va);
            let sb = shuffle_ai_i32_half_m256i::<0b11_01_10_00>(vb);
            let x = unpack_low_i64_m256i(sa, sb);
            let y = unpack_high_i64_m256i(sa, sb);
            let (x, y) = butterfly(q, two_q, w, ws, x, y);
            va = shuffle_ai_i32_half_m256i::<0b11_01_10_00>(unpack_low_i64_m256i(x, y));
            vb = shuffle_ai_i32_half_m256i::<0b11_01_10_00>(unpack_high_i64_m256i(x, y));
            // Final reduction into [0, q).
            let reduce = |v: m256i| {
                let v = min_u32_m256i(v, sub_i32_m256i(v, two_q));
                min_u32_m256i(v, sub_i32_m256i(v, q))
            };
            store(ac, reduce(va));
            store(bc, reduce(vb));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Shape;
    use rand::{Rng, SeedableRng};

    fn spiral(params: &Params, c: usize, a: &[u32; N]) -> Vec<u64> {
        // spiral-rs's AVX2 path needs 32-byte alignment.
        let mut buf = spiral_rs::aligned_memory::AlignedMemory64::new(params.crt_count * N);
        let wide = buf.as_mut_slice();
        wide[c * N..(c + 1) * N]
            .iter_mut()
            .zip(a)
            .for_each(|(w, &x)| *w = u64::from(x));
        spiral_rs::ntt::ntt_forward(params, wide);
        wide[c * N..(c + 1) * N]
            .iter()
            .map(|&x| x % params.moduli[c])
            .collect()
    }

    #[test]
    fn matches_spiral_rs() {
        let params = Shape::new(1 << 12).unwrap().params;
        let ntt = Ntt::new(params);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for c in 0..ntt.primes() {
            let q = ntt.modulus(c);
            for round in 0..20 {
                // Inputs below q, and (lazy inputs) below 4q.
                let bound = if round % 2 == 0 { q } else { 4 * q };
                let a: [u32; N] = std::array::from_fn(|_| rng.random_range(0..bound));
                let want = spiral(params, c, &a.map(|x| x % q));
                let mut fast = a;
                ntt.forward(c, &mut fast);
                let mut slow = a;
                scalar_forward(&ntt.primes[c], &mut slow);
                assert!(fast.iter().all(|&x| x < q) && slow.iter().all(|&x| x < q));
                let fast: Vec<u64> = fast.iter().map(|&x| u64::from(x)).collect();
                let slow: Vec<u64> = slow.iter().map(|&x| u64::from(x)).collect();
                assert_eq!(fast, want, "prime {c}, round {round}");
                assert_eq!(slow, want, "prime {c}, round {round}");
            }
        }
    }
}
