//! The ring Z/2^64 (wrapping 64-bit arithmetic).

use crate::{BlockSource, Group, Ring};
use core::fmt;
use core::iter::{Product, Sum};
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use doram_core::CodecError;

/// An element of Z/2^64: a `u64` with wrapping addition, subtraction and multiplication.
///
/// Encoded as 8 little-endian bytes; every byte string of that length is canonical.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Z64(pub u64);

impl Z64 {
    /// Zero.
    pub const ZERO: Z64 = Z64(0);
    /// One.
    pub const ONE: Z64 = Z64(1);

    /// A uniformly random element.
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Z64 {
        Z64(rng.next_u64())
    }

    /// The element −v mod 2^64 for negative `v`, `v` otherwise (two's complement).
    pub const fn from_i64(v: i64) -> Z64 {
        Z64(v as u64)
    }

    /// The representative in `[0, 2^64)`.
    pub const fn to_u64(self) -> u64 {
        self.0
    }

    /// The representative in `[−2^63, 2^63)`.
    pub const fn to_i64(self) -> i64 {
        self.0 as i64
    }

    /// `self^e` by square-and-multiply.
    pub const fn pow(self, mut e: u64) -> Z64 {
        let mut base = self.0;
        let mut acc = 1u64;
        while e != 0 {
            if e & 1 == 1 {
                acc = acc.wrapping_mul(base);
            }
            base = base.wrapping_mul(base);
            e >>= 1;
        }
        Z64(acc)
    }
}

impl Add for Z64 {
    type Output = Z64;
    #[inline(always)]
    fn add(self, rhs: Z64) -> Z64 {
        Z64(self.0.wrapping_add(rhs.0))
    }
}

impl Sub for Z64 {
    type Output = Z64;
    #[inline(always)]
    fn sub(self, rhs: Z64) -> Z64 {
        Z64(self.0.wrapping_sub(rhs.0))
    }
}

impl Neg for Z64 {
    type Output = Z64;
    #[inline(always)]
    fn neg(self) -> Z64 {
        Z64(self.0.wrapping_neg())
    }
}

impl Mul for Z64 {
    type Output = Z64;
    #[inline(always)]
    fn mul(self, rhs: Z64) -> Z64 {
        Z64(self.0.wrapping_mul(rhs.0))
    }
}

impl AddAssign for Z64 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Z64) {
        *self = *self + rhs;
    }
}

impl SubAssign for Z64 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Z64) {
        *self = *self - rhs;
    }
}

impl MulAssign for Z64 {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Z64) {
        *self = *self * rhs;
    }
}

impl Sum for Z64 {
    fn sum<I: Iterator<Item = Z64>>(iter: I) -> Z64 {
        iter.fold(Z64::ZERO, |a, b| a + b)
    }
}

impl<'a> Sum<&'a Z64> for Z64 {
    fn sum<I: Iterator<Item = &'a Z64>>(iter: I) -> Z64 {
        iter.fold(Z64::ZERO, |a, b| a + *b)
    }
}

impl Product for Z64 {
    fn product<I: Iterator<Item = Z64>>(iter: I) -> Z64 {
        iter.fold(Z64::ONE, |a, b| a * b)
    }
}

impl<'a> Product<&'a Z64> for Z64 {
    fn product<I: Iterator<Item = &'a Z64>>(iter: I) -> Z64 {
        iter.fold(Z64::ONE, |a, b| a * *b)
    }
}

impl From<u64> for Z64 {
    fn from(v: u64) -> Z64 {
        Z64(v)
    }
}

impl From<Z64> for u64 {
    fn from(v: Z64) -> u64 {
        v.0
    }
}

impl Group for Z64 {
    const ZERO: Z64 = Z64(0);
    const BYTES: usize = 8;

    /// Takes the first 8 bytes (little-endian) of one block and discards the other 8, so each
    /// element consumes exactly one block; 2^64 divides 2^128, so the result is uniform.
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Z64 {
        let block = src.next_block();
        let mut low = [0u8; 8];
        low.copy_from_slice(&block[..8]);
        Z64(u64::from_le_bytes(low))
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Z64, CodecError> {
        let arr: [u8; 8] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 8,
            got: bytes.len(),
        })?;
        Ok(Z64(u64::from_le_bytes(arr)))
    }
}

impl Ring for Z64 {
    const ONE: Z64 = Z64(1);
    fn from_u64(v: u64) -> Z64 {
        Z64(v)
    }
}

impl fmt::Display for Z64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Z64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Z64({})", self.0)
    }
}
