//! The prime field F_p with p = 2^128 − 28·2^64 + 1.
//!
//! Elements are stored as their canonical representative, a `u128` in `[0, p)`.
//!
//! # Why this prime is fast
//!
//! Write B = 2^64. Then p = B² − 28·B + 1, so
//!
//! ```text
//!     B² ≡ 28·B − 1          (mod p)
//!     B³ ≡ 28·B² − B ≡ 783·B − 28   (mod p)
//! ```
//!
//! A 256-bit product r0 + r1·B + r2·B² + r3·B³ (64-bit limbs) therefore folds with a handful of
//! small-constant multiplications into a value of about 2^138, and a second, tiny fold brings it
//! below 2^128, after which one conditional subtraction of p finishes (the derivation and the
//! bounds are in the comments of the private `reduce_wide`). No division and no Montgomery
//! form: elements stay canonical, so encoding, comparison and the Legendre symbol work on the
//! plain integer.
//!
//! Montgomery multiplication would also be cheap for this p (p ≡ 1 mod 2^64, so −p⁻¹ ≡ −1 mod
//! 2^64 and the reduction needs no multiplication by p⁻¹), but its reduction has the same
//! two-round shape as the fold above, and it would add conversions in and out of Montgomery
//! form to every encode, decode and Legendre evaluation; it is not implemented.
//!
//! # Facts used elsewhere
//!
//! * p ≡ 1 (mod 8), so 2 is a quadratic residue and (−1) is one too.
//! * p − 1 = 2^66 · (2^62 − 7); 7 generates F_p^* and is a quadratic non-residue.

use crate::{BlockSource, Group, Ring};
use core::fmt;
use core::iter::{Product, Sum};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use core::str::FromStr;
use doram_core::CodecError;

/// The modulus p = 2^128 − 28·2^64 + 1 = 340282366920938462946865773367900766209.
pub const MODULUS: u128 = 0xffff_ffff_ffff_ffe4_0000_0000_0000_0001;

/// 2^128 − p = 28·2^64 − 1, which is also 2^128 mod p.
const C: u128 = (28u128 << 64) - 1;

/// An element of F_p, p = 2^128 − 28·2^64 + 1, in canonical form (`0 ≤ value < p`).
///
/// Arithmetic is constant-time with respect to the values except where a method says
/// `vartime`. `Display` and `Debug` print the decimal value; serde uses a decimal string for
/// human-readable formats and the 16-byte little-endian encoding otherwise.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Fp(u128);

impl Fp {
    /// The additive identity.
    pub const ZERO: Fp = Fp(0);
    /// The multiplicative identity.
    pub const ONE: Fp = Fp(1);
    /// The modulus p as an integer.
    pub const MODULUS: u128 = MODULUS;
    /// A generator of the multiplicative group F_p^* (7); it is a quadratic non-residue.
    pub const GENERATOR: Fp = Fp(7);
    /// The 2-adic valuation of p − 1: p − 1 = 2^66 · (2^62 − 7).
    pub const TWO_ADICITY: u32 = 66;

    /// The element `v mod p`, for any 128-bit `v`.
    #[inline(always)]
    pub const fn from_u128(v: u128) -> Fp {
        // 2^128 < 2p, so one conditional subtraction suffices.
        let (t, borrow) = v.overflowing_sub(MODULUS);
        Fp(if borrow { v } else { t })
    }

    /// The element `v` (always below p).
    #[inline(always)]
    pub const fn from_u64(v: u64) -> Fp {
        Fp(v as u128)
    }

    /// The element `v mod p` for a signed `v` (negative values map to p − |v|).
    #[inline]
    pub const fn from_i64(v: i64) -> Fp {
        if v < 0 {
            Fp(MODULUS - v.unsigned_abs() as u128)
        } else {
            Fp(v as u128)
        }
    }

    /// The element with canonical value `v`, or `None` if `v ≥ p`.
    #[inline]
    pub const fn from_canonical(v: u128) -> Option<Fp> {
        if v < MODULUS { Some(Fp(v)) } else { None }
    }

    /// The canonical representative in `[0, p)`.
    #[inline(always)]
    pub const fn to_u128(self) -> u128 {
        self.0
    }

    /// Whether this is the zero element.
    #[inline(always)]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// The 16-byte little-endian encoding of the canonical value.
    #[inline]
    pub const fn to_le_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// Decodes 16 little-endian bytes, rejecting values ≥ p.
    #[inline]
    pub fn from_le_bytes(bytes: [u8; 16]) -> Result<Fp, CodecError> {
        Fp::from_canonical(u128::from_le_bytes(bytes)).ok_or(CodecError::OutOfRange {
            what: "field element is not below p",
        })
    }

    /// A uniformly random element, by rejection sampling of 128-bit values (the rejection
    /// probability is (28·2^64 − 1)/2^128 < 2^−59).
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Fp {
        loop {
            let lo = rng.next_u64() as u128;
            let hi = rng.next_u64() as u128;
            if let Some(x) = Fp::from_canonical(lo | (hi << 64)) {
                return x;
            }
        }
    }

    /// `2·self`.
    #[inline(always)]
    pub const fn double(self) -> Fp {
        Fp(add_mod(self.0, self.0))
    }

    /// `self²`.
    #[inline(always)]
    pub const fn square(self) -> Fp {
        let (lo, hi) = square_wide(self.0);
        Fp(reduce_wide(lo, hi))
    }

    /// `self^(2^k)`, by `k` squarings.
    #[inline]
    pub const fn square_n(self, k: u32) -> Fp {
        let mut x = self;
        let mut i = 0;
        while i < k {
            x = x.square();
            i += 1;
        }
        x
    }

    /// `self^e`, by a fixed 128-step square-and-multiply that always multiplies and then selects
    /// without branching, so the running time depends neither on `e` nor on `self`.
    pub fn pow(self, e: u128) -> Fp {
        let mut acc = Fp::ONE;
        let mut i = 128;
        while i > 0 {
            i -= 1;
            acc = acc.square();
            let m = acc * self;
            // Branch-free select of m when bit i of e is set.
            let mask = 0u128.wrapping_sub((e >> i) & 1);
            acc = Fp((m.0 & mask) | (acc.0 & !mask));
        }
        acc
    }

    /// One addition-chain step on `t_k = x^(2^k − 1)`: `t_{a+b} = t_a^(2^b) · t_b`.
    #[inline(always)]
    fn chain(t_a: Fp, b: u32, t_b: Fp) -> Fp {
        t_a.square_n(b) * t_b
    }

    /// Returns (t2, t5, t59) where t_k = self^(2^k − 1); shared by inversion and Euler's
    /// criterion (58 squarings, 9 multiplications).
    fn pow_chain(self) -> (Fp, Fp, Fp) {
        let t1 = self;
        let t2 = Fp::chain(t1, 1, t1);
        let t3 = Fp::chain(t2, 1, t1);
        let t5 = Fp::chain(t3, 2, t2);
        let t6 = Fp::chain(t5, 1, t1);
        let t12 = Fp::chain(t6, 6, t6);
        let t24 = Fp::chain(t12, 12, t12);
        let t48 = Fp::chain(t24, 24, t24);
        let t53 = Fp::chain(t48, 5, t5);
        let t59 = Fp::chain(t53, 6, t6);
        (t2, t5, t59)
    }

    /// The multiplicative inverse, or `None` for zero.
    ///
    /// Computed as `self^(p−2)` with a fixed addition chain (constant time): in binary,
    /// p − 2 = 1^59 0^3 1^66, so `self^(p−2) = t59^(2^69) · t66` with `t_k = self^(2^k − 1)`.
    /// Cost: 134 squarings and 12 multiplications.
    pub fn inverse(self) -> Option<Fp> {
        if self.is_zero() {
            return None;
        }
        Some(self.inverse_or_zero())
    }

    /// The multiplicative inverse, mapping zero to zero (constant time).
    pub fn inverse_or_zero(self) -> Fp {
        let (t2, t5, t59) = self.pow_chain();
        let t64 = Fp::chain(t59, 5, t5);
        let t66 = Fp::chain(t64, 2, t2);
        t59.square_n(69) * t66
    }

    /// Inverts every non-zero element of `xs` in place (zeros stay zero), with one inversion and
    /// three multiplications per element (Montgomery's trick).
    pub fn batch_inverse(xs: &mut [Fp]) {
        // prefix[i] = product of the non-zero xs[..i]
        let mut prefix = Vec::with_capacity(xs.len());
        let mut acc = Fp::ONE;
        for x in xs.iter() {
            prefix.push(acc);
            if !x.is_zero() {
                acc *= *x;
            }
        }
        let mut inv = acc.inverse_or_zero();
        for (x, pre) in xs.iter_mut().zip(prefix).rev() {
            if !x.is_zero() {
                let xi = inv * pre;
                inv *= *x;
                *x = xi;
            }
        }
    }

    /// The Legendre symbol (self / p) by Euler's criterion, `self^((p−1)/2)`: 0 for zero, 1 for a
    /// non-zero square, −1 otherwise.
    ///
    /// Constant time (fixed addition chain: (p−1)/2 = (2^62 − 7)·2^65 and 2^62 − 7 = 1^59 001 in
    /// binary, so the power is `(t59^(2^3) · self)^(2^65)`; 126 squarings, 10 multiplications).
    /// See [`Fp::legendre_vartime`] for a much faster variable-time version.
    pub fn legendre(self) -> i8 {
        let (_, _, t59) = self.pow_chain();
        let r = (t59.square_n(3) * self).square_n(65);
        // r ∈ {0, 1, p − 1}.
        let is_one = (r.0 == 1) as i8;
        let is_minus_one = (r.0 == MODULUS - 1) as i8;
        is_one - is_minus_one
    }

    /// The Legendre symbol (self / p): 0 for zero, 1 for a non-zero square, −1 otherwise.
    ///
    /// Variable time: a binary-GCD Jacobi-symbol computation (see [`crate::legendre`]).
    #[inline]
    pub fn legendre_vartime(self) -> i8 {
        crate::legendre::jacobi_vartime(self.0, MODULUS)
    }
}

// ---------------------------------------------------------------------------------------------
// Core arithmetic on canonical u128 values.

/// `(a + b) mod p` for `a, b < p`.
#[inline(always)]
const fn add_mod(a: u128, b: u128) -> u128 {
    // a + b < 2p < 2^129. If the 128-bit addition carries, the true sum s + 2^128 lies in
    // [2^128, 2p) and s + 2^128 − p = s − p (mod 2^128) is the result. Otherwise the sum is s and
    // we subtract p exactly when s ≥ p, i.e. when s − p does not borrow.
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(MODULUS);
    if carry | !borrow { t } else { s }
}

/// `(a − b) mod p` for `a, b < p`.
#[inline(always)]
const fn sub_mod(a: u128, b: u128) -> u128 {
    // a − b ∈ (−p, p): add p back on borrow (the wrapping addition cancels the borrow's 2^128).
    let (d, borrow) = a.overflowing_sub(b);
    if borrow { d.wrapping_add(MODULUS) } else { d }
}

/// The full 256-bit product `a·b` as (low, high) 128-bit halves.
#[inline(always)]
pub(crate) const fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let (b0, b1) = (b as u64 as u128, b >> 64);
    // Each partial product is < 2^128.
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    // mid = p01 + p10 < 2^129: keep its carry, worth 2^192 overall (2^64 in `hi`).
    let (mid, mid_carry) = p01.overflowing_add(p10);
    let (lo, lo_carry) = p00.overflowing_add(mid << 64);
    // hi < 2^128 because the whole product is < 2^256.
    let hi = p11 + (mid >> 64) + ((mid_carry as u128) << 64) + lo_carry as u128;
    (lo, hi)
}

/// The full 256-bit square `a²` as (low, high) halves; one word multiplication fewer than
/// [`mul_wide`].
#[inline(always)]
const fn square_wide(a: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let p00 = a0 * a0;
    let p01 = a0 * a1;
    let p11 = a1 * a1;
    // 2·p01 < 2^129: its top bit goes to 2^192.
    let mid_carry = p01 >> 127;
    let mid = p01 << 1;
    let (lo, lo_carry) = p00.overflowing_add(mid << 64);
    let hi = p11 + (mid >> 64) + (mid_carry << 64) + lo_carry as u128;
    (lo, hi)
}

/// Reduces the 256-bit integer `lo + hi·2^128` (any value) modulo p, to `[0, p)`.
///
/// With limbs r0..r3 (base B = 2^64) and B² ≡ 28B − 1, B³ ≡ 783B − 28:
///
/// ```text
///   V ≡ r0 − N + H·B,   N = r2 + 28·r3 < 29·B,   H = r1 + 28·r2 + 783·r3 < 812·B.
/// ```
///
/// Writing H = h0 + h1·B (h1 ≤ 811) and folding h1·B² ≡ h1·(28B − 1) once more,
///
/// ```text
///   V ≡ X − Y,   X = r0 + h0·B + 28·h1·B < 2^128 + 2^79,   Y = N + h1 < 2^69.
/// ```
///
/// X is assembled from the limbs (r0, h0) plus one addition, which may carry (k); X − Y is one
/// subtraction, which may borrow (b). So X − Y = s + (k − b)·2^128 with s the 128-bit result,
/// and 2^128 ≡ C = 2^128 − p:
///
/// * k = 1, b = 0: X − Y < 2^128 + 2^79, so s < 2^79 and s + C < p;
/// * k = 0, b = 1: X − Y > −2^70, so s − C = (X − Y) + p lies in [p − 2^70, p);
/// * otherwise s = X − Y ∈ [0, 2^128), and one conditional subtraction of p finishes
///   (2^128 < 2p).
#[inline(always)]
pub(crate) const fn reduce_wide(lo: u128, hi: u128) -> u128 {
    let r0 = lo as u64;
    let r1 = (lo >> 64) as u64;
    let r2 = hi as u64;
    let r3 = (hi >> 64) as u64;

    let n = r2 as u128 + 28 * (r3 as u128);
    let h = r1 as u128 + 28 * (r2 as u128) + 783 * (r3 as u128);
    let h0 = h as u64;
    let h1 = (h >> 64) as u64; // ≤ 811, so 28·h1 fits easily in a u64

    let x = ((h0 as u128) << 64) | r0 as u128;
    let (x, k) = x.overflowing_add(((28 * h1) as u128) << 64);
    let (s, b) = x.overflowing_sub(n + h1 as u128);
    // Branch-free application of (k − b)·C.
    let s = s.wrapping_add(C & 0u128.wrapping_sub(k as u128));
    let s = s.wrapping_sub(C & 0u128.wrapping_sub(b as u128));
    let (t, borrow) = s.overflowing_sub(MODULUS);
    if borrow { s } else { t }
}

#[inline(always)]
const fn mul_mod(a: u128, b: u128) -> u128 {
    let (lo, hi) = mul_wide(a, b);
    reduce_wide(lo, hi)
}

// ---------------------------------------------------------------------------------------------
// Operators.

impl Add for Fp {
    type Output = Fp;
    #[inline(always)]
    fn add(self, rhs: Fp) -> Fp {
        Fp(add_mod(self.0, rhs.0))
    }
}

impl Sub for Fp {
    type Output = Fp;
    #[inline(always)]
    fn sub(self, rhs: Fp) -> Fp {
        Fp(sub_mod(self.0, rhs.0))
    }
}

impl Neg for Fp {
    type Output = Fp;
    #[inline(always)]
    fn neg(self) -> Fp {
        Fp(sub_mod(0, self.0))
    }
}

impl Mul for Fp {
    type Output = Fp;
    #[inline(always)]
    fn mul(self, rhs: Fp) -> Fp {
        Fp(mul_mod(self.0, rhs.0))
    }
}

impl AddAssign for Fp {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Fp) {
        *self = *self + rhs;
    }
}

impl SubAssign for Fp {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Fp) {
        *self = *self - rhs;
    }
}

impl MulAssign for Fp {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Fp) {
        *self = *self * rhs;
    }
}

impl<'a> Add<&'a Fp> for Fp {
    type Output = Fp;
    #[inline(always)]
    fn add(self, rhs: &'a Fp) -> Fp {
        self + *rhs
    }
}

impl<'a> Sub<&'a Fp> for Fp {
    type Output = Fp;
    #[inline(always)]
    fn sub(self, rhs: &'a Fp) -> Fp {
        self - *rhs
    }
}

impl<'a> Mul<&'a Fp> for Fp {
    type Output = Fp;
    #[inline(always)]
    fn mul(self, rhs: &'a Fp) -> Fp {
        self * *rhs
    }
}

impl Sum for Fp {
    fn sum<I: Iterator<Item = Fp>>(iter: I) -> Fp {
        let mut acc = SumAccumulator::new();
        for x in iter {
            acc.add(x);
        }
        acc.finish()
    }
}

impl<'a> Sum<&'a Fp> for Fp {
    fn sum<I: Iterator<Item = &'a Fp>>(iter: I) -> Fp {
        iter.copied().sum()
    }
}

impl Product for Fp {
    fn product<I: Iterator<Item = Fp>>(iter: I) -> Fp {
        iter.fold(Fp::ONE, |a, b| a * b)
    }
}

impl<'a> Product<&'a Fp> for Fp {
    fn product<I: Iterator<Item = &'a Fp>>(iter: I) -> Fp {
        iter.fold(Fp::ONE, |a, b| a * *b)
    }
}

impl From<u64> for Fp {
    fn from(v: u64) -> Fp {
        Fp::from_u64(v)
    }
}

impl From<u32> for Fp {
    fn from(v: u32) -> Fp {
        Fp::from_u64(v as u64)
    }
}

impl From<bool> for Fp {
    fn from(v: bool) -> Fp {
        Fp(v as u128)
    }
}

impl From<Fp> for u128 {
    fn from(v: Fp) -> u128 {
        v.0
    }
}

impl TryFrom<u128> for Fp {
    type Error = CodecError;
    /// Accepts only canonical values (< p); use [`Fp::from_u128`] to reduce.
    fn try_from(v: u128) -> Result<Fp, CodecError> {
        Fp::from_canonical(v).ok_or(CodecError::OutOfRange {
            what: "field element is not below p",
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Group / Ring.

impl Group for Fp {
    const ZERO: Fp = Fp(0);
    const BYTES: usize = 16;

    /// Rejection sampling: draws 128-bit blocks until one is below p.
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Fp {
        loop {
            if let Some(x) = Fp::from_canonical(u128::from_le_bytes(src.next_block())) {
                return x;
            }
        }
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Fp, CodecError> {
        let arr: [u8; 16] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 16,
            got: bytes.len(),
        })?;
        Fp::from_le_bytes(arr)
    }
}

impl Ring for Fp {
    const ONE: Fp = Fp(1);
    fn from_u64(v: u64) -> Fp {
        Fp::from_u64(v)
    }

    /// Through a [`DotAccumulator`]: one reduction for the whole sum.
    fn sum_of_products(pairs: impl Iterator<Item = (Fp, Fp)>) -> Fp {
        let mut acc = DotAccumulator::new();
        for (a, b) in pairs {
            acc.add_product(a, b);
        }
        acc.finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting, parsing, serde.

impl fmt::Display for Fp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Fp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fp({})", self.0)
    }
}

/// Error of [`Fp::from_str`]: not a decimal integer, or not below p.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFpError;

impl fmt::Display for ParseFpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a decimal integer below p")
    }
}

impl std::error::Error for ParseFpError {}

impl FromStr for Fp {
    type Err = ParseFpError;
    /// Parses a canonical decimal value (`0 ≤ v < p`).
    fn from_str(s: &str) -> Result<Fp, ParseFpError> {
        let v: u128 = s.parse().map_err(|_| ParseFpError)?;
        Fp::from_canonical(v).ok_or(ParseFpError)
    }
}

impl serde::Serialize for Fp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(&self.0)
        } else {
            self.0.to_le_bytes().serialize(serializer)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Fp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Fp, D::Error> {
        use serde::de::Error;
        if deserializer.is_human_readable() {
            let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
            s.parse().map_err(D::Error::custom)
        } else {
            let bytes = <[u8; 16]>::deserialize(deserializer)?;
            Fp::from_le_bytes(bytes).map_err(D::Error::custom)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lazy accumulation: sums and inner products.

/// Accumulates a sum of field elements without reducing at every step.
///
/// Each addition is one 128-bit add plus a carry count; [`SumAccumulator::finish`] reduces once
/// (2^128 ≡ 2^128 − p mod p).
#[derive(Clone, Copy, Debug, Default)]
pub struct SumAccumulator {
    acc: u128,
    carries: u64,
}

impl SumAccumulator {
    /// An empty (zero) sum.
    pub const fn new() -> Self {
        SumAccumulator { acc: 0, carries: 0 }
    }

    /// Adds `x`.
    #[inline(always)]
    pub fn add(&mut self, x: Fp) {
        let (s, c) = self.acc.overflowing_add(x.0);
        self.acc = s;
        self.carries += c as u64;
    }

    /// The reduced sum: acc + carries·2^128 ≡ acc + carries·(2^128 − p).
    pub fn finish(self) -> Fp {
        Fp::from_u128(self.acc) + Fp(self.carries as u128) * Fp(C)
    }
}

/// Accumulates an inner product Σ aᵢ·bᵢ with a single reduction at the end.
///
/// Each product aᵢ·bᵢ = p00 + (p01 + p10)·2^64 + p11·2^128 (64-bit halves) is added into three
/// 128-bit accumulators with carry counters, which cannot overflow before 2^64 terms; the costly
/// reduction of [`Fp`] multiplication is paid once, in [`DotAccumulator::finish`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DotAccumulator {
    lo: u128,
    mid: u128,
    hi: u128,
    c_lo: u64,
    c_mid: u64,
    c_hi: u64,
}

impl DotAccumulator {
    /// An empty (zero) inner product.
    pub const fn new() -> Self {
        DotAccumulator {
            lo: 0,
            mid: 0,
            hi: 0,
            c_lo: 0,
            c_mid: 0,
            c_hi: 0,
        }
    }

    /// Adds the product `a·b`.
    #[inline(always)]
    pub fn add_product(&mut self, a: Fp, b: Fp) {
        let (a0, a1) = (a.0 as u64 as u128, a.0 >> 64);
        let (b0, b1) = (b.0 as u64 as u128, b.0 >> 64);
        let (s, c) = self.lo.overflowing_add(a0 * b0);
        self.lo = s;
        self.c_lo += c as u64;
        let (s, c) = self.mid.overflowing_add(a0 * b1);
        let (s, c2) = s.overflowing_add(a1 * b0);
        self.mid = s;
        self.c_mid += c as u64 + c2 as u64;
        let (s, c) = self.hi.overflowing_add(a1 * b1);
        self.hi = s;
        self.c_hi += c as u64;
    }

    /// Adds `a` (as the product a·1).
    #[inline(always)]
    pub fn add(&mut self, a: Fp) {
        let (s, c) = self.lo.overflowing_add(a.0);
        self.lo = s;
        self.c_lo += c as u64;
    }

    /// The reduced inner product.
    pub fn finish(self) -> Fp {
        // Total = L + M·2^64 + H·2^128 with L = lo + c_lo·2^128 etc.; 2^128 ≡ C (mod p).
        let c = Fp(C);
        let l = Fp::from_u128(self.lo) + Fp(self.c_lo as u128) * c;
        let m = Fp::from_u128(self.mid) + Fp(self.c_mid as u128) * c;
        let h = Fp::from_u128(self.hi) + Fp(self.c_hi as u128) * c;
        l + m * Fp(1u128 << 64) + h * c
    }
}

/// The inner product Σ aᵢ·bᵢ, with lazy reduction (see [`DotAccumulator`]).
///
/// # Panics
/// If the slices have different lengths.
pub fn dot(a: &[Fp], b: &[Fp]) -> Fp {
    assert_eq!(a.len(), b.len(), "dot: slices of different lengths");
    // Two independent accumulators let the CPU overlap the carry chains.
    let mut acc0 = DotAccumulator::new();
    let mut acc1 = DotAccumulator::new();
    let mut ca = a.chunks_exact(2);
    let mut cb = b.chunks_exact(2);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc0.add_product(x[0], y[0]);
        acc1.add_product(x[1], y[1]);
    }
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        acc0.add_product(*x, *y);
    }
    acc0.finish() + acc1.finish()
}

/// The sum of a slice, with lazy reduction (see [`SumAccumulator`]).
pub fn sum(xs: &[Fp]) -> Fp {
    let mut acc = SumAccumulator::new();
    for x in xs {
        acc.add(*x);
    }
    acc.finish()
}

/// `acc[i] += s · x[i]` for all i.
///
/// # Panics
/// If the slices have different lengths.
pub fn axpy(acc: &mut [Fp], s: Fp, x: &[Fp]) {
    assert_eq!(acc.len(), x.len(), "axpy: slices of different lengths");
    for (a, x) in acc.iter_mut().zip(x) {
        *a += s * *x;
    }
}

/// `acc[i] += y[i] + s·x[i]` for all i, with one reduction per element: the 256-bit product
/// plus the two addends (each below p) stays below 2^256, and the reduction takes any 256-bit
/// value.
///
/// # Panics
/// If the slices have different lengths.
pub fn add_axpy(acc: &mut [Fp], s: Fp, x: &[Fp], y: &[Fp]) {
    assert!(
        acc.len() == x.len() && acc.len() == y.len(),
        "add_axpy: slices of different lengths"
    );
    for ((a, x), y) in acc.iter_mut().zip(x).zip(y) {
        let (lo, hi) = mul_wide(s.0, x.0);
        let (lo, c0) = lo.overflowing_add(a.0);
        let (lo, c1) = lo.overflowing_add(y.0);
        *a = Fp(reduce_wide(lo, hi + c0 as u128 + c1 as u128));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!(
            MODULUS,
            (1u128 << 127) - (28u128 << 64) + 1 + (1u128 << 127)
        );
        assert_eq!(MODULUS.wrapping_add(C), 0);
        assert_eq!(
            MODULUS.to_string(),
            "340282366920938462946865773367900766209"
        );
        // p − 1 = 2^66 · (2^62 − 7)
        assert_eq!((MODULUS - 1) >> 66, (1u128 << 62) - 7);
        assert_eq!((MODULUS - 1).trailing_zeros(), Fp::TWO_ADICITY);
    }

    #[test]
    fn reduce_extremes() {
        // The largest possible 256-bit input and the largest product of canonical values.
        let max = reduce_wide(u128::MAX, u128::MAX);
        // 2^256 − 1 ≡ C² − 1 (mod p)
        assert_eq!(Fp(max), Fp(C) * Fp(C) - Fp::ONE);
        let m1 = Fp(MODULUS - 1);
        assert_eq!(m1 * m1, Fp::ONE);
        assert_eq!(m1.square(), Fp::ONE);
        assert_eq!(reduce_wide(0, 0), 0);
        assert_eq!(reduce_wide(MODULUS, 0), 0);
        assert_eq!(reduce_wide(0, 1), C);
    }

    /// The fused kernel equals `acc + y + s·x` element by element, extremes included.
    #[test]
    fn add_axpy_matches_the_operators() {
        let m1 = Fp(MODULUS - 1);
        let mut state = 0x1234_5678_9abc_def0_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let hi = u128::from(state) << 64;
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Fp::from_u128(hi | u128::from(state))
        };
        let mut cols: [Vec<Fp>; 3] = [(); 3].map(|_| Vec::new());
        for c in &mut cols {
            c.extend([Fp::ZERO, Fp::ONE, m1, m1]);
            c.extend((0..60).map(|_| next()));
        }
        let [acc, x, y] = cols;
        for s in [Fp::ZERO, Fp::ONE, m1, next()] {
            let mut fused = acc.clone();
            add_axpy(&mut fused, s, &x, &y);
            for i in 0..acc.len() {
                assert_eq!(fused[i], acc[i] + y[i] + s * x[i], "s = {s:?}, i = {i}");
            }
        }
    }

    #[test]
    fn wide_products() {
        assert_eq!(mul_wide(u128::MAX, u128::MAX), (1, u128::MAX - 1));
        assert_eq!(square_wide(u128::MAX), (1, u128::MAX - 1));
        assert_eq!(mul_wide(1 << 64, 1 << 64), (0, 1));
    }
}
