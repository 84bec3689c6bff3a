//! The 64-bit prime field F_p with p = 2^64 − 59, the largest prime below 2^64.
//!
//! Because 2^64 ≡ 59 (mod p), a 128-bit value `h·2^64 + l` reduces to `59·h + l` and then
//! once more; [`Fp64::reduce_u128`] does this in a handful of instructions. Inner products
//! over many elements should not reduce every product: [`Fp64Acc`] accumulates the raw 128-bit
//! products with a carry counter and reduces once at the end (2^128 ≡ 59² mod p).
//!
//! Every `u64` below `p` is a canonical element; the 59 values `p..2^64` are not, and
//! [`Group::read_le`] rejects them. [`Fp64::from_u64`] reduces any `u64` (so `from_u64(p) = 0`).

use core::fmt;
use core::iter::Sum;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use doram_core::CodecError;

use crate::{BlockSource, Group, Ring};

/// The modulus p = 2^64 − 59.
pub const P64: u64 = u64::MAX - 58;
/// 2^64 mod p.
const C: u64 = 59;
/// 2^128 mod p = 59².
const C2: u64 = C * C;

/// An element of F_p, p = 2^64 − 59, stored canonically (`0 ≤ value < p`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fp64(u64);

impl Fp64 {
    /// Zero.
    pub const ZERO: Fp64 = Fp64(0);
    /// One.
    pub const ONE: Fp64 = Fp64(1);
    /// The modulus.
    pub const MODULUS: u64 = P64;

    /// The element `v`, if `v < p` (the canonical range); `None` otherwise.
    #[inline]
    pub const fn new(v: u64) -> Option<Fp64> {
        if v < P64 { Some(Fp64(v)) } else { None }
    }

    /// `v mod p`.
    #[inline]
    pub const fn from_u64(v: u64) -> Fp64 {
        Fp64(if v >= P64 { v - P64 } else { v })
    }

    /// The canonical representative in `[0, p)`.
    #[inline]
    pub const fn value(self) -> u64 {
        self.0
    }

    /// `x mod p` for any 128-bit `x`.
    #[inline]
    pub const fn reduce_u128(x: u128) -> Fp64 {
        // x = h·2^64 + l ≡ 59·h + l < 2^71.
        let t = (x >> 64) * C as u128 + (x as u64) as u128;
        // t = h'·2^64 + l' with h' < 2^7, so 59·h' < 2^13.
        let (s, carry) = (t as u64).overflowing_add((t >> 64) as u64 * C);
        // On carry the true value is s + 2^64 ≡ s + 59, and s < 2^13 then.
        let s = if carry { s + C } else { s };
        Fp64::from_u64(s)
    }

    /// `self^e` by square and multiply.
    pub fn pow(self, mut e: u64) -> Fp64 {
        let mut base = self;
        let mut acc = Fp64::ONE;
        while e > 0 {
            if e & 1 == 1 {
                acc *= base;
            }
            base *= base;
            e >>= 1;
        }
        acc
    }

    /// The multiplicative inverse (`None` for zero), by Fermat's little theorem.
    pub fn inverse(self) -> Option<Fp64> {
        if self.0 == 0 {
            None
        } else {
            Some(self.pow(P64 - 2))
        }
    }

    /// A uniform element from a random number generator (rejection sampling).
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Fp64 {
        loop {
            if let Some(x) = Fp64::new(rng.next_u64()) {
                return x;
            }
        }
    }
}

impl Add for Fp64 {
    type Output = Fp64;
    #[inline]
    fn add(self, rhs: Fp64) -> Fp64 {
        let (s, carry) = self.0.overflowing_add(rhs.0);
        // Both inputs are < p, so the sum is < 2p < 2^65; on carry, s + 2^64 ≡ s + 59.
        if carry {
            Fp64(s + C)
        } else {
            Fp64::from_u64(s)
        }
    }
}

impl Sub for Fp64 {
    type Output = Fp64;
    #[inline]
    fn sub(self, rhs: Fp64) -> Fp64 {
        let (d, borrow) = self.0.overflowing_sub(rhs.0);
        // On borrow, d = a − b + 2^64, and a − b + p = d − 59.
        if borrow { Fp64(d - C) } else { Fp64(d) }
    }
}

impl Neg for Fp64 {
    type Output = Fp64;
    #[inline]
    fn neg(self) -> Fp64 {
        if self.0 == 0 {
            self
        } else {
            Fp64(P64 - self.0)
        }
    }
}

impl Mul for Fp64 {
    type Output = Fp64;
    #[inline]
    fn mul(self, rhs: Fp64) -> Fp64 {
        Fp64::reduce_u128(self.0 as u128 * rhs.0 as u128)
    }
}

impl AddAssign for Fp64 {
    #[inline]
    fn add_assign(&mut self, rhs: Fp64) {
        *self = *self + rhs;
    }
}

impl SubAssign for Fp64 {
    #[inline]
    fn sub_assign(&mut self, rhs: Fp64) {
        *self = *self - rhs;
    }
}

impl MulAssign for Fp64 {
    #[inline]
    fn mul_assign(&mut self, rhs: Fp64) {
        *self = *self * rhs;
    }
}

impl Sum for Fp64 {
    fn sum<I: Iterator<Item = Fp64>>(iter: I) -> Fp64 {
        iter.fold(Fp64::ZERO, |a, b| a + b)
    }
}

impl fmt::Debug for Fp64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fp64({})", self.0)
    }
}

impl fmt::Display for Fp64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Group for Fp64 {
    const ZERO: Fp64 = Fp64(0);
    const BYTES: usize = 8;

    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Fp64 {
        loop {
            let b = src.next_block();
            for half in [&b[..8], &b[8..]] {
                let mut w = [0u8; 8];
                w.copy_from_slice(half);
                if let Some(x) = Fp64::new(u64::from_le_bytes(w)) {
                    return x;
                }
            }
        }
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Fp64, CodecError> {
        let arr: [u8; 8] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 8,
            got: bytes.len(),
        })?;
        Fp64::new(u64::from_le_bytes(arr))
            .ok_or_else(|| CodecError::Malformed("Fp64 value not below the modulus".into()))
    }
}

impl Ring for Fp64 {
    const ONE: Fp64 = Fp64(1);
    fn from_u64(v: u64) -> Fp64 {
        Fp64::from_u64(v)
    }
}

/// A lazily reduced sum of products of canonical elements (or of any `u64`s below 2^64).
///
/// Each [`add_mul`](Fp64Acc::add_mul) is one 64×64→128 multiplication and a 128-bit addition
/// whose carry is counted; [`finish`](Fp64Acc::finish) reduces once. It accepts up to 2^64
/// terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fp64Acc {
    low: u128,
    carries: u64,
}

impl Fp64Acc {
    /// An empty sum.
    pub const fn new() -> Fp64Acc {
        Fp64Acc { low: 0, carries: 0 }
    }

    /// Adds `a·b` (as integers).
    #[inline(always)]
    pub fn add_mul(&mut self, a: u64, b: u64) {
        let (s, c) = self.low.overflowing_add(a as u128 * b as u128);
        self.low = s;
        self.carries += c as u64;
    }

    /// Adds the integer `a`.
    #[inline(always)]
    pub fn add(&mut self, a: u64) {
        let (s, c) = self.low.overflowing_add(a as u128);
        self.low = s;
        self.carries += c as u64;
    }

    /// Merges another partial sum.
    #[inline]
    pub fn merge(&mut self, other: Fp64Acc) {
        let (s, c) = self.low.overflowing_add(other.low);
        self.low = s;
        self.carries += other.carries + c as u64;
    }

    /// The sum mod p.
    #[inline]
    pub fn finish(self) -> Fp64 {
        // carries·2^128 + low ≡ carries·59² + low.
        Fp64::reduce_u128(self.carries as u128 * C2 as u128) + Fp64::reduce_u128(self.low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(x: u128) -> u64 {
        (x % P64 as u128) as u64
    }

    #[test]
    fn reduce_matches_division() {
        let edge = [
            0u128,
            1,
            P64 as u128 - 1,
            P64 as u128,
            P64 as u128 + 1,
            u64::MAX as u128,
            1u128 << 64,
            (P64 as u128) * (P64 as u128),
            (P64 as u128 - 1) * (P64 as u128 - 1),
            u128::MAX,
            u128::MAX - 1,
            (u128::MAX / P64 as u128) * P64 as u128,
        ];
        for &x in &edge {
            assert_eq!(Fp64::reduce_u128(x).value(), reference(x), "{x}");
        }
        let mut s = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834u128;
        for _ in 0..100_000 {
            s = s
                .wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645)
                .wrapping_add(1);
            assert_eq!(Fp64::reduce_u128(s).value(), reference(s));
            let (a, b) = (Fp64::from_u64(s as u64), Fp64::from_u64((s >> 64) as u64));
            assert_eq!(
                (a + b).value(),
                reference(a.value() as u128 + b.value() as u128)
            );
            assert_eq!(
                (a - b).value(),
                reference(a.value() as u128 + P64 as u128 - b.value() as u128)
            );
            assert_eq!((a - b) + b, a);
            assert_eq!(-a + a, Fp64::ZERO);
        }
    }

    #[test]
    fn accumulator_handles_carries() {
        let big = P64 - 1;
        let mut acc = Fp64Acc::new();
        let mut naive = Fp64::ZERO;
        for k in 0..1000u64 {
            let b = big - k;
            acc.add_mul(big, b);
            naive += Fp64::from_u64(big) * Fp64::from_u64(b);
        }
        assert!(acc.carries > 0);
        assert_eq!(acc.finish(), naive);
        let mut raw = Fp64Acc::new();
        for _ in 0..10 {
            raw.add_mul(u64::MAX, u64::MAX);
        }
        let m = reference(u64::MAX as u128);
        let want = reference((m as u128 * m as u128) % P64 as u128 * 10);
        assert_eq!(raw.finish().value(), want);
    }

    #[test]
    fn inverse_and_encoding() {
        let x = Fp64::from_u64(123_456_789);
        assert_eq!(x * x.inverse().expect("nonzero"), Fp64::ONE);
        assert!(Fp64::ZERO.inverse().is_none());
        assert!(Fp64::read_le(&P64.to_le_bytes()).is_err());
        assert_eq!(
            Fp64::read_le(&(P64 - 1).to_le_bytes()).expect("canonical"),
            Fp64::from_u64(P64 - 1)
        );
        assert_eq!(Fp64::from_u64(u64::MAX).value(), 58);
    }
}
