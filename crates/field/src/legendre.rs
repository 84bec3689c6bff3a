//! Fast variable-time Jacobi symbols on 128-bit integers, hence Legendre symbols modulo p.
//!
//! # Algorithm
//!
//! The core is the binary GCD in its "subtract, then strip all factors of two" form, on a pair
//! (a, b) of odd integers. Writing J = (a / |b|) for the Jacobi symbol, one step is
//!
//! ```text
//!   if a < b:  (a, b) ← (b, a)      J flips iff a ≡ b ≡ 3 (mod 4)      (reciprocity)
//!   a ← a − b                        J unchanged                         (periodicity)
//!   a ← a / 2^k, k = tz(a)           J flips iff k is odd and b ≡ ±3 (mod 8)   ((2/b) rule)
//! ```
//!
//! and ends when a = b (= gcd; the symbol is J if that is 1, else 0). The symbol updates only
//! read the low three bits of a and b, and `tz(a − b)` does not depend on the sign of a − b, so
//! the trailing-zero count runs in parallel with the comparison and the dependency chain of one
//! step is subtract → count trailing zeros → shift.
//!
//! With 128-bit values every operation costs two words, so (following T. Pornin's optimised
//! binary GCD) while a value exceeds 64 bits we work on 64-bit *approximations*:
//!
//! ```text
//!   xa = (top 33 bits of a, aligned on max(len a, len b)) · 2^31 + (a mod 2^31)
//! ```
//!
//! and likewise xb. A batch of steps runs on (xa, xb) with plain 64-bit arithmetic, recording
//! the linear map it applies, until exactly [`BATCH`] = 29 factors of two have been removed:
//! then (a', b') = ((f0·a + g0·b) / 2^29, (f1·a + g1·b) / 2^29) with |f|, |g| ≤ 2^29, which costs
//! a few word multiplications on the full values.
//!
//! Why the symbol stays correct when approximations are used:
//!
//! * **Low bits are exact.** xa ≡ a and xb ≡ b (mod 2^31) at the start of a batch, and every
//!   operation of the batch is an integer linear combination followed by exact division by
//!   2^k, so after removing s factors of two, xa ≡ a and xb ≡ b (mod 2^(31−s)). A step starts
//!   with s ≤ 28, so the three low bits that the symbol updates read are exact, and so are the
//!   trailing zeros counted (a step never shifts by more than 29 − s < 31 − s).
//! * **Comparisons may be wrong**, when the top bits of a and b agree; the true a or b may
//!   then become negative. The rules above still hold with J = (a / |b|) as long as a and b are
//!   never *both* negative: reciprocity for odd coprime m, n reads
//!   (m/|n|)(n/|m|) = (−1)^((m−1)/2·(n−1)/2) whenever m > 0 or n > 0 (with the residues mod 4
//!   taken in two's complement), periodicity holds modulo |b|, and (2/|b|) depends on
//!   b mod 8 only through ±3 vs ±1, which negation preserves. A step maps (a, b) to
//!   (a − b, b) or (b − a, a) with b odd; from two non-negative values, or from one positive
//!   and one negative value, the result again has at most one negative component. So at most
//!   one value is ever negative.
//! * **At the end of a batch** we take absolute values: replacing b by |b| leaves J unchanged,
//!   and replacing a by −a multiplies J by (−1/|b|), i.e. flips it iff |b| ≡ 3 (mod 4).
//!
//! Magnitudes never grow: each step keeps |f| + |g| ≤ 2^s for both rows of the map, so
//! |a'|, |b'| ≤ max(a, b). In practice each batch shrinks the pair by about 40 bits, so a
//! 128-bit input needs three or four batches before both values fit in 64 bits, where the
//! exact 64-bit loop finishes. A cap on the number of batches (never reached in practice)
//! falls back to the exact 128-bit loop, so termination never depends on the approximations.

use crate::fp::Fp;
use core::num::NonZeroU64;

/// Number of factors of two removed per approximated batch (see the module documentation).
pub const BATCH: u32 = 29;

/// Batches allowed before falling back to the exact 128-bit loop (typical inputs need ≤ 5).
const MAX_BATCHES: u32 = 32;

const LOW31: u64 = (1 << 31) - 1;

/// Bit 0 is 1 iff b ≡ ±3 (mod 8), i.e. iff (2/b) = −1, for odd b.
#[inline(always)]
const fn two_is_nonresidue(b: u64) -> u64 {
    (b >> 1) ^ (b >> 2)
}

/// Maps the parity bit of accumulated sign flips to ±1.
#[inline(always)]
const fn sign(flips: u64) -> i8 {
    1 - 2 * (flips & 1) as i8
}

/// The Jacobi symbol (a / n) for odd `n`, in variable time.
///
/// Returns 0 when gcd(a, n) > 1, otherwise ±1. For prime `n` this is the Legendre symbol.
///
/// # Panics
/// If `n` is even.
pub fn jacobi_vartime(a: u128, n: u128) -> i8 {
    assert!(n & 1 == 1, "the Jacobi symbol needs an odd modulus");
    let mut b = n;
    let mut flips = 0u64;
    if a == 0 {
        return (b == 1) as i8;
    }
    let k = a.trailing_zeros();
    let mut a = a >> k;
    flips ^= k as u64 & two_is_nonresidue(b as u64);

    let mut batches = 0;
    while (a | b) >> 64 != 0 {
        if batches == MAX_BATCHES {
            return jacobi_exact_u128(a, b, flips);
        }
        batches += 1;

        // Approximations: top 33 bits of the common length, low 31 bits exact.
        let len = 128 - (a | b).leading_zeros(); // 65..=128
        let sh = len - 33;
        let xa = (((a >> sh) as u64) << 31) | (a as u64 & LOW31);
        let xb = (((b >> sh) as u64) << 31) | (b as u64 & LOW31);
        let m = batch(xa, xb, &mut flips);

        let (na, a_neg) = lincomb(a, b, m.f0, m.g0);
        let (nb, _) = lincomb(a, b, m.f1, m.g1);
        // J = (a/|b|): b → |b| is free; a → −a multiplies by (−1/|b|).
        b = nb;
        a = na;
        flips ^= a_neg as u64 & (b as u64 >> 1);
        if a == 0 {
            // a = 0 means b = gcd(a, n).
            return if b == 1 { sign(flips) } else { 0 };
        }
        let k = a.trailing_zeros();
        a >>= k;
        flips ^= k as u64 & two_is_nonresidue(b as u64);
    }
    jacobi_exact_u64(a as u64, b as u64, flips)
}

/// The linear map of one batch: a' = (f0·a + g0·b)/2^29, b' = (f1·a + g1·b)/2^29.
struct Matrix {
    f0: i64,
    g0: i64,
    f1: i64,
    g1: i64,
}

/// Runs steps on the odd approximations (xa, xb) until exactly [`BATCH`] factors of two have
/// been removed, updating the symbol's flip parity, and returns the applied map.
#[inline(always)]
fn batch(mut xa: u64, mut xb: u64, flips: &mut u64) -> Matrix {
    // The coefficient pairs (f, g) are packed as f + g·2^32 in one wrapping u64: subtraction
    // and left shifts act on both halves at once, and since |f|, |g| ≤ 2^29 the halves are
    // recovered exactly below. Row 0 describes a (initially a = 1·a + 0·b), row 1 describes b.
    // Both rows carry the common denominator 2^s: instead of dividing a's row by 2^k we
    // multiply b's row by 2^k.
    let mut fg0: u64 = 1;
    let mut fg1: u64 = 1 << 32;
    let mut fl = *flips;
    let mut s = 0u32;
    loop {
        let d = xa.wrapping_sub(xb);
        let swap = xa < xb;
        // tz(d) = tz(|d|); 64 if the approximations coincide (handled as a final step).
        let k = d.trailing_zeros();
        fl ^= swap as u64 & ((xa & xb) >> 1);
        let (na, nb) = if swap {
            (d.wrapping_neg(), xa)
        } else {
            (d, xb)
        };
        let (nfg0, nfg1) = if swap {
            (fg1.wrapping_sub(fg0), fg0)
        } else {
            (fg0.wrapping_sub(fg1), fg1)
        };
        let rem = BATCH - s;
        if k >= rem {
            // Last step of the batch: remove only the remaining factors of two. The true
            // difference is divisible by 2^rem because its low 31 − s > rem bits equal d's.
            fl ^= rem as u64 & two_is_nonresidue(nb);
            fg0 = nfg0;
            fg1 = nfg1 << rem;
            break;
        }
        xa = na >> k;
        xb = nb;
        fg0 = nfg0;
        fg1 = nfg1 << k;
        fl ^= k as u64 & two_is_nonresidue(nb);
        s += k;
    }
    *flips = fl;
    // Unpack: adding 2^31 − 1 to both halves makes them non-negative, so no borrow crosses
    // from the low half into the high one.
    const BIAS: u64 = 0x7fff_ffff_7fff_ffff;
    let u0 = fg0.wrapping_add(BIAS);
    let u1 = fg1.wrapping_add(BIAS);
    Matrix {
        f0: (u0 & 0xffff_ffff) as i64 - 0x7fff_ffff,
        g0: (u0 >> 32) as i64 - 0x7fff_ffff,
        f1: (u1 & 0xffff_ffff) as i64 - 0x7fff_ffff,
        g1: (u1 >> 32) as i64 - 0x7fff_ffff,
    }
}

/// (|f·a + g·b| / 2^29, f·a + g·b < 0) for |f|, |g| ≤ 2^29 such that the division is exact and
/// the quotient is below 2^128 in absolute value (both guaranteed by [`batch`]).
#[inline(always)]
fn lincomb(a: u128, b: u128, f: i64, g: i64) -> (u128, bool) {
    let (a0, a1) = (a as u64 as i128, (a >> 64) as i128);
    let (b0, b1) = (b as u64 as i128, (b >> 64) as i128);
    let (f, g) = (f as i128, g as i128);
    // |lo|, |hi| < 2·2^29·2^64 = 2^94: no overflow.
    let lo = f * a0 + g * b0;
    let hi = f * a1 + g * b1;
    // total = hi·2^64 + lo = t·2^64 + t0 with 0 ≤ t0 < 2^64; total < 0 iff t < 0.
    let t = hi + (lo >> 64);
    let t0 = lo as u64;
    debug_assert!(
        t0 & ((1 << BATCH) - 1) == 0,
        "inexact division in a Jacobi batch"
    );
    // total / 2^29 modulo 2^128; it is the true quotient's two's complement since
    // |quotient| < 2^128.
    let q = ((t as u128) << (64 - BATCH)).wrapping_add((t0 >> BATCH) as u128);
    let neg = t < 0;
    (if neg { q.wrapping_neg() } else { q }, neg)
}

/// Finishes a Jacobi computation on exact 64-bit values: a odd or zero, b odd; `flips` is the
/// parity of sign changes so far.
#[inline]
fn jacobi_exact_u64(mut a: u64, mut b: u64, mut flips: u64) -> i8 {
    if a == 0 {
        return if b == 1 { sign(flips) } else { 0 };
    }
    while let Some(d) = NonZeroU64::new(a.wrapping_sub(b)) {
        let k = d.trailing_zeros();
        let d = d.get();
        let swap = a < b;
        flips ^= swap as u64 & ((a & b) >> 1);
        let ad = if swap { d.wrapping_neg() } else { d };
        b = if swap { a } else { b };
        a = ad >> k;
        flips ^= k as u64 & two_is_nonresidue(b);
    }
    // a = b = gcd.
    if b == 1 { sign(flips) } else { 0 }
}

/// The same loop on exact 128-bit values (a odd or zero, b odd): the fallback of
/// [`jacobi_vartime`], and a reference for tests.
fn jacobi_exact_u128(mut a: u128, mut b: u128, mut flips: u64) -> i8 {
    if a == 0 {
        return if b == 1 { sign(flips) } else { 0 };
    }
    while a != b {
        let swap = a < b;
        flips ^= swap as u64 & ((a & b) as u64 >> 1);
        let d = if swap { b - a } else { a - b };
        if swap {
            b = a;
        }
        let k = d.trailing_zeros();
        a = d >> k;
        flips ^= k as u64 & two_is_nonresidue(b as u64);
    }
    if b == 1 { sign(flips) } else { 0 }
}

/// Legendre symbols of many elements: `out[i] = xs[i].legendre_vartime()`.
///
/// # Panics
/// If the slices have different lengths.
pub fn legendre_batch_vartime(xs: &[Fp], out: &mut [i8]) {
    assert_eq!(
        xs.len(),
        out.len(),
        "legendre_batch_vartime: slices of different lengths"
    );
    for (x, o) in xs.iter().zip(out.iter_mut()) {
        *o = x.legendre_vartime();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference Jacobi symbol by the textbook (division-based) algorithm.
    fn jacobi_reference(mut a: u128, mut n: u128) -> i8 {
        assert!(n & 1 == 1);
        a %= n;
        let mut t = 1i8;
        while a != 0 {
            while a & 1 == 0 {
                a >>= 1;
                if n & 7 == 3 || n & 7 == 5 {
                    t = -t;
                }
            }
            core::mem::swap(&mut a, &mut n);
            if a & 3 == 3 && n & 3 == 3 {
                t = -t;
            }
            a %= n;
        }
        if n == 1 { t } else { 0 }
    }

    /// A small deterministic generator (splitmix64) for these unit tests.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn small_cases_match_reference() {
        for n in (1u128..200).step_by(2) {
            for a in 0u128..300 {
                assert_eq!(jacobi_vartime(a, n), jacobi_reference(a, n), "({a}/{n})");
            }
        }
    }

    #[test]
    fn random_wide_cases_match_reference() {
        let mut st = 1u64;
        for i in 0..20_000 {
            // Mix of bit lengths, to exercise every phase and the batch boundaries.
            let la = 1 + (next(&mut st) % 128) as u32;
            let ln = 1 + (next(&mut st) % 128) as u32;
            let mut a = ((next(&mut st) as u128) << 64 | next(&mut st) as u128) >> (128 - la);
            let mut n = (((next(&mut st) as u128) << 64 | next(&mut st) as u128) >> (128 - ln)) | 1;
            if i % 7 == 0 {
                // A common odd factor, to exercise the zero results.
                let f = (next(&mut st) % 50) as u128 * 2 + 3;
                a = (a >> 8) * f;
                n = (n >> 8 | 1) * f;
            }
            assert_eq!(jacobi_vartime(a, n), jacobi_reference(a, n), "({a}/{n})");
            let k = a.trailing_zeros().min(127);
            if a != 0 && n > 1 {
                assert_eq!(
                    jacobi_exact_u128(a >> k, n, k as u64 & two_is_nonresidue(n as u64)),
                    jacobi_reference(a, n)
                );
            }
        }
    }

    #[test]
    fn near_equal_tops() {
        // Values sharing their top bits force wrong approximate comparisons.
        let mut st = 7u64;
        for _ in 0..20_000 {
            let base = (next(&mut st) as u128) << 64 | next(&mut st) as u128;
            let delta = (next(&mut st) as u128) >> (next(&mut st) % 64);
            let n = base | 1;
            let a = base.wrapping_sub(delta) | 1;
            assert_eq!(jacobi_vartime(a, n), jacobi_reference(a, n), "({a}/{n})");
            assert_eq!(jacobi_vartime(n, a), jacobi_reference(n, a), "({n}/{a})");
        }
    }
}
