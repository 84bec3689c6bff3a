//! Legendre symbols of 16 independent field elements at once: the binary Jacobi algorithm of
//! the parent module run in lock-step on vectors of lanes, written so that the compiler turns
//! it into SIMD code (AVX-512 on the target machine) without `unsafe` or intrinsics.
//!
//! # The step
//!
//! Every lane holds a pair (a, b) of odd integers with 0 < a, b ≤ p and a sign parity s such
//! that the wanted symbol is (x / p) = (−1)^s · (a / b). It starts from a = x / 2^tz(x) and
//! b = p: since p ≡ 1 (mod 8), (2 / p) = 1 and dropping the factors of two of x does not change
//! the symbol. (x = 0 starts from a = b = p, a finished lane whose gcd is not 1: symbol 0.)
//! One step replaces (a, b) by (|a − b| / 2^k, min(a, b)) with k = tz(a − b) ≥ 1:
//!
//! * if a > b, (a / b) = ((a − b) / b) = (2 / b)^k · (|a − b|/2^k / b);
//! * if a < b, reciprocity gives (a / b) = (−1)^[a ≡ b ≡ 3 mod 4] · (b / a), and then the same
//!   identity with the roles exchanged, so b becomes min(a, b) = a.
//!
//! The parity bits are the ones the single-symbol code uses: bit 1 of `a & b` is set exactly
//! when a ≡ b ≡ 3 (mod 4), and bit 1 of `b ^ (b >> 1)` exactly when b ≡ ±3 (mod 8), that is
//! when (2 / b) = −1. Both are XORed into bit 1 of `sign` (the other bits are junk).
//!
//! A lane is *frozen* when the low words of a and b are equal. Usually that means a = b, the
//! gcd, and the lane is finished: the symbol is (−1)^s if b = 1 and 0 otherwise. Otherwise
//! a ≠ b but a ≡ b (mod 2^64), where the shift would need k ≥ 64 (probability about 2^−64 per
//! step on random inputs, but easy to provoke, e.g. x = 2^64 + 1). Frozen lanes are left
//! unchanged by every later step; after the loop the rare ones are finished by the scalar
//! [`jacobi_vartime`] from their current pair, multiplied by their sign.
//!
//! # Iteration bound
//!
//! A step that does not freeze the lane maps (a, b) to (a', b') with a' ≤ (max − min)/2 and
//! b' = min, so a'·b' < a·b/2: the product at least halves, and since it starts below p² <
//! 2^256 and stays ≥ 1, a lane takes at most 255 steps before it freezes. The loops below
//! run until every lane is frozen (checking every [`UNROLL`] steps; checking every second step
//! was about 5 % slower), so they always stop, and
//! the cost is that of the slowest lane: on random inputs a lane needs about 90 steps (46 while
//! a value exceeds 64 bits), the slowest of 16 about 97 (52). A fixed count at the bound would
//! do 2.6 times more work. Refilling finished lanes with new inputs would remove the wait for
//! the slowest lane, but a group would then almost always hold some lane with a two-word value,
//! so nearly all of a symbol's 90 steps would run as the two-word step (31 instructions for
//! eight lanes, against 17 for the single-word step): about 2790 instructions per eight symbols
//! against about 52 · 31 + 45 · 17 ≈ 2380 now, before the refill bookkeeping.
//!
//! # Vectorisation
//!
//! Each lane operation is a loop over a fixed-size array of eight `u64` (or `bool` masks), one
//! 512-bit register; the compiler's SLP vectoriser maps them to single AVX-512 instructions
//! (unsigned compares into mask registers, masked moves for the selects, `vplzcntq` for the
//! trailing-zero count, variable shifts `vpsrlvq`/`vpsllvq`). Details that matter, measured on
//! the target machine (Cascade Lake):
//!
//! * While values may exceed 64 bits a step costs about 31 vector instructions for eight lanes
//!   and one step of a lane depends on the previous one through about 15 cycles of latency; two
//!   independent vectors of eight lanes are therefore stepped alternately, which keeps both
//!   vector ports busy (16 lanes per group; three vectors run out of registers and spill).
//! * Once no unfrozen lane has a high word left, a cheaper single-word step (17 instructions)
//!   takes over.
//! * The borrow of the two-word subtraction is folded into b's high word (b_hi + borrow cannot
//!   wrap, since every value is at most p and p's high word is below 2^64 − 1), so a < b is a
//!   single compare of high words.
//! * `k = tz(d)` is computed as 63 − lzcnt(d & −d); OR-ing 1 into the isolated bit keeps the
//!   count in 0..=63 for frozen lanes too, so the shifts need no range fix-ups.
//! * The (2 / b) parity is taken from `b ^ (b >> 1)`. Cheaper-looking forms (bit 2 of b + 2,
//!   or bit 3 of b² in a second accumulator) leave only additions, multiplications and logic
//!   operations between the lanes and the final use of two sign bits, and the compiler then
//!   narrows the accumulators to bytes and shuffles them around, which is slower.
//!
//! With AVX2 only (four lanes per register, no vector leading-zero count) the same code is
//! still faster than the scalar loop (≈ 185 ns against ≈ 270 ns per symbol); without AVX2 it
//! is slower, and the caller uses the scalar loop instead. The parent module compiles this
//! code once for each of the two instruction sets, inside `pulp`'s `vectorize`, and picks one
//! at run time.

use super::jacobi_vartime;
use crate::fp::MODULUS;

/// Lanes per vector: eight `u64`, one AVX-512 register.
pub(crate) const LANES: usize = 8;

/// Symbols per call of [`legendre_group`]: two vectors of lanes, stepped alternately.
pub(crate) const GROUP: usize = 2 * LANES;

/// Steps between two checks of the loop condition.
const UNROLL: usize = 4;

/// Bits 1, 3, 5, …: `2^k & ODD_BITS != 0` iff k is odd.
const ODD_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;

/// One `u64` per lane.
#[derive(Clone, Copy)]
struct Lanes([u64; LANES]);

/// One flag per lane.
#[derive(Clone, Copy)]
struct Mask([bool; LANES]);

/// `lanes!(|i| expr)`: the vector whose lane i is `expr`, as a loop over the lanes that the
/// compiler unrolls and vectorises. (A helper function taking a closure instead defeats the
/// vectoriser: the step then runs about four times slower.)
macro_rules! lanes {
    (|$i:ident| $e:expr) => {{
        let mut r = [0u64; LANES];
        #[allow(clippy::needless_range_loop)]
        for $i in 0..LANES {
            r[$i] = $e;
        }
        Lanes(r)
    }};
}

/// `mask!(|i| expr)`: the mask whose lane i is `expr`.
macro_rules! mask {
    (|$i:ident| $e:expr) => {{
        let mut r = [false; LANES];
        #[allow(clippy::needless_range_loop)]
        for $i in 0..LANES {
            r[$i] = $e;
        }
        Mask(r)
    }};
}

impl Lanes {
    #[inline(always)]
    const fn splat(v: u64) -> Lanes {
        Lanes([v; LANES])
    }
    #[inline(always)]
    fn add(self, o: Lanes) -> Lanes {
        lanes!(|i| self.0[i].wrapping_add(o.0[i]))
    }
    #[inline(always)]
    fn sub(self, o: Lanes) -> Lanes {
        lanes!(|i| self.0[i].wrapping_sub(o.0[i]))
    }
    #[inline(always)]
    fn and(self, o: Lanes) -> Lanes {
        lanes!(|i| self.0[i] & o.0[i])
    }
    #[inline(always)]
    fn or(self, o: Lanes) -> Lanes {
        lanes!(|i| self.0[i] | o.0[i])
    }
    #[inline(always)]
    fn xor(self, o: Lanes) -> Lanes {
        lanes!(|i| self.0[i] ^ o.0[i])
    }
    #[inline(always)]
    fn not(self) -> Lanes {
        lanes!(|i| !self.0[i])
    }
    /// `self >> k` lane by lane (the `& 63` is free when the compiler knows k < 64).
    #[inline(always)]
    fn shr(self, k: Lanes) -> Lanes {
        lanes!(|i| self.0[i] >> (k.0[i] & 63))
    }
    /// `self << k` lane by lane.
    #[inline(always)]
    fn shl(self, k: Lanes) -> Lanes {
        lanes!(|i| self.0[i] << (k.0[i] & 63))
    }
    #[inline(always)]
    fn shr1(self) -> Lanes {
        lanes!(|i| self.0[i] >> 1)
    }
    #[inline(always)]
    fn shl1(self) -> Lanes {
        lanes!(|i| self.0[i] << 1)
    }
    #[inline(always)]
    fn leading_zeros(self) -> Lanes {
        lanes!(|i| self.0[i].leading_zeros() as u64)
    }
    #[inline(always)]
    fn lt(self, o: Lanes) -> Mask {
        mask!(|i| self.0[i] < o.0[i])
    }
    #[inline(always)]
    fn ne(self, o: Lanes) -> Mask {
        mask!(|i| self.0[i] != o.0[i])
    }
    /// Lanes where `self & o` is non-zero.
    #[inline(always)]
    fn test(self, o: Lanes) -> Mask {
        mask!(|i| self.0[i] & o.0[i] != 0)
    }
}

impl Mask {
    /// `if self { x } else { y }` lane by lane.
    #[inline(always)]
    fn select(self, x: Lanes, y: Lanes) -> Lanes {
        lanes!(|i| if self.0[i] { x.0[i] } else { y.0[i] })
    }
    #[inline(always)]
    fn and(self, o: Mask) -> Mask {
        mask!(|i| self.0[i] & o.0[i])
    }
}

const ZERO: Lanes = Lanes::splat(0);
const ONE: Lanes = Lanes::splat(1);
const SIXTY_THREE: Lanes = Lanes::splat(63);

/// The pairs (a, b) as two-word integers, and the sign parity, of eight lanes.
#[derive(Clone, Copy)]
struct State {
    a_lo: Lanes,
    a_hi: Lanes,
    b_lo: Lanes,
    b_hi: Lanes,
    /// Bit 1 is the parity of the number of sign flips so far.
    sign: Lanes,
}

impl State {
    /// The starting pairs (x / 2^tz(x), p), and (p, p) for x = 0.
    #[inline(always)]
    fn new(xs: &[u128; LANES]) -> State {
        let a = xs.map(|x| {
            if x == 0 {
                MODULUS
            } else {
                x >> x.trailing_zeros()
            }
        });
        State {
            a_lo: lanes!(|i| a[i] as u64),
            a_hi: lanes!(|i| (a[i] >> 64) as u64),
            b_lo: Lanes::splat(MODULUS as u64),
            b_hi: Lanes::splat((MODULUS >> 64) as u64),
            sign: ZERO,
        }
    }

    /// One step on all lanes, on two-word values.
    #[inline(always)]
    fn wide_step(self) -> State {
        let State {
            a_lo,
            a_hi,
            b_lo,
            b_hi,
            sign,
        } = self;
        // d = a − b, with the borrow added to b's high word (it cannot wrap, see the module
        // documentation), which also makes a < b a comparison of high words.
        let d_lo = a_lo.sub(b_lo);
        let borrow = a_lo.lt(b_lo);
        let b_hi_borrow = borrow.select(b_hi.add(ONE), b_hi);
        let d_hi = a_hi.sub(b_hi_borrow);
        let swap = a_hi.lt(b_hi_borrow);
        let live = d_lo.ne(ZERO);
        // |d|; in live lanes d_lo ≠ 0, so −d = (−d_lo, !d_hi).
        let neg_lo = ZERO.sub(d_lo);
        let abs_lo = swap.select(neg_lo, d_lo);
        let abs_hi = swap.select(d_hi.not(), d_hi);
        // 2^k, the lowest set bit of d_lo; lz = 63 − k (63 in frozen lanes, whose results are
        // discarded).
        let low_bit = d_lo.and(neg_lo);
        let lz = low_bit.or(ONE).leading_zeros();
        let k = SIXTY_THREE.sub(lz);
        // |d| >> k on two words: 1 ≤ k ≤ 63, and abs_hi << (64 − k) = (abs_hi << 1) << lz.
        let new_a_lo = abs_lo.shr(k).or(abs_hi.shl1().shl(lz));
        let new_a_hi = abs_hi.shr(k);
        let swap = swap.and(live);
        let new_b_lo = swap.select(a_lo, b_lo);
        let new_b_hi = swap.select(a_hi, b_hi);
        let sign = swap.select(sign.xor(a_lo.and(b_lo)), sign);
        let k_odd = low_bit.test(Lanes::splat(ODD_BITS));
        let sign = k_odd.select(sign.xor(new_b_lo.xor(new_b_lo.shr1())), sign);
        State {
            a_lo: live.select(new_a_lo, a_lo),
            a_hi: live.select(new_a_hi, a_hi),
            b_lo: new_b_lo,
            b_hi: new_b_hi,
            sign,
        }
    }

    /// One step on all lanes, valid once every unfrozen lane has a, b < 2^64 (the high words
    /// are then zero and stay untouched).
    #[inline(always)]
    fn narrow_step(self) -> State {
        let State {
            a_lo: a,
            b_lo: b,
            sign,
            ..
        } = self;
        let d = a.sub(b);
        let swap = a.lt(b); // never set in frozen lanes, where a = b
        let live = d.ne(ZERO);
        let neg = ZERO.sub(d);
        let abs = swap.select(neg, d);
        let low_bit = d.and(neg);
        let k = SIXTY_THREE.sub(low_bit.or(ONE).leading_zeros());
        let new_b = swap.select(a, b);
        let sign = swap.select(sign.xor(a.and(b)), sign);
        let k_odd = low_bit.test(Lanes::splat(ODD_BITS));
        let sign = k_odd.select(sign.xor(new_b.xor(new_b.shr1())), sign);
        State {
            a_lo: live.select(abs.shr(k), a),
            b_lo: new_b,
            sign,
            ..self
        }
    }

    /// Whether every lane is frozen or has both values below 2^64.
    #[inline(always)]
    fn all_narrow(&self) -> bool {
        let high = lanes!(|i| {
            let frozen = self.a_lo.0[i] == self.b_lo.0[i];
            if frozen {
                0
            } else {
                self.a_hi.0[i] | self.b_hi.0[i]
            }
        });
        high.0.iter().fold(0, |acc, h| acc | h) == 0
    }

    /// Whether every lane is frozen.
    #[inline(always)]
    fn all_frozen(&self) -> bool {
        let diff = self.a_lo.xor(self.b_lo);
        diff.0.iter().fold(0, |acc, d| acc | d) == 0
    }

    /// The symbols of frozen lanes.
    #[inline(always)]
    fn finish(&self, out: &mut [i8; LANES]) {
        for (i, o) in out.iter_mut().enumerate() {
            let sign = 1 - 2 * ((self.sign.0[i] >> 1) & 1) as i8;
            let a = (self.a_hi.0[i] as u128) << 64 | self.a_lo.0[i] as u128;
            let b = (self.b_hi.0[i] as u128) << 64 | self.b_lo.0[i] as u128;
            *o = if a == b {
                if b == 1 { sign } else { 0 }
            } else {
                // Rare: a ≡ b (mod 2^64) but a ≠ b.
                sign * jacobi_vartime(a, b)
            };
        }
    }
}

/// `out[j][i] = (xs[j][i] / p)` for 16 canonical field elements (`xs[j][i] < p`), in
/// variable time. Inlined into callers compiled with the vector features (see the parent
/// module's run-time dispatch).
#[inline(always)]
pub(crate) fn legendre_group(xs: &[[u128; LANES]; 2], out: &mut [[i8; LANES]; 2]) {
    let mut u = State::new(&xs[0]);
    let mut v = State::new(&xs[1]);
    loop {
        for _ in 0..UNROLL {
            u = u.wide_step();
            v = v.wide_step();
        }
        if u.all_narrow() & v.all_narrow() {
            break;
        }
    }
    loop {
        for _ in 0..UNROLL {
            u = u.narrow_step();
            v = v.narrow_step();
        }
        if u.all_frozen() & v.all_frozen() {
            break;
        }
    }
    u.finish(&mut out[0]);
    v.finish(&mut out[1]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (splitmix64) for these unit tests.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Runs one group on `xs` (padded with zeros) and compares with the scalar symbol.
    fn check(xs: &[u128]) {
        assert!(xs.len() <= GROUP);
        let mut x = [[0u128; LANES]; 2];
        x.as_flattened_mut()[..xs.len()].copy_from_slice(xs);
        let mut out = [[7i8; LANES]; 2];
        legendre_group(&x, &mut out);
        for (x, got) in x.as_flattened().iter().zip(out.as_flattened()) {
            assert_eq!(*got, jacobi_vartime(*x, MODULUS), "({x} / p)");
        }
    }

    #[test]
    fn random_groups() {
        let mut st = 3u64;
        for _ in 0..2_000 {
            let xs: Vec<u128> = (0..GROUP)
                .map(|_| {
                    // Mixed bit lengths, so lanes finish their phases at different steps.
                    let len = 1 + (next(&mut st) % 128) as u32;
                    let x = ((next(&mut st) as u128) << 64 | next(&mut st) as u128) >> (128 - len);
                    x % MODULUS
                })
                .collect();
            check(&xs);
        }
    }

    #[test]
    fn edge_values() {
        let p = MODULUS;
        let edges = [
            0,
            1,
            2,
            3,
            4,
            7,
            p - 1,
            p - 2,
            p - 7,
            (1 << 64) - 1,
            1 << 64,
            (1 << 64) + 1,
            (1 << 127) - 1,
            1 << 127,
            (1 << 127) + 1,
            p >> 1,
            (p >> 1) + 1,
            u64::MAX as u128,
            p - (1 << 64),
        ];
        for chunk in edges.chunks(GROUP) {
            check(chunk);
        }
        // Lanes that are all padding but one, and a full group of one value.
        for &e in &edges {
            check(&[e]);
            check(&[e; GROUP]);
        }
    }

    #[test]
    fn equal_low_words_take_the_scalar_completion() {
        // x ≡ p ≡ 1 (mod 2^64) but x ≠ p: the lane freezes at its first step with a ≠ b and
        // is finished by the scalar code. Mixed with ordinary lanes.
        let mut st = 5u64;
        for _ in 0..500 {
            let xs: Vec<u128> = (0..GROUP)
                .map(|i| {
                    let hi = (next(&mut st) as u128 % (MODULUS >> 64)) << 64;
                    if i % 3 == 0 {
                        hi | 1
                    } else if i % 3 == 1 {
                        // Odd multiples of 2^64 + 1 also share their low word with others.
                        ((next(&mut st) as u128 >> 2) * ((1 << 64) + 1)) % MODULUS
                    } else {
                        (hi | next(&mut st) as u128) % MODULUS
                    }
                })
                .collect();
            check(&xs);
        }
    }
}
