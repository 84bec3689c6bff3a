//! The ring Z/2^32 (wrapping 32-bit arithmetic): words of 4 bytes, the record size of the
//! FJKW15 authors' implementation.

use crate::{BlockSource, Group, Ring};
use core::fmt;
use core::iter::Sum;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};
use doram_core::CodecError;

/// An element of Z/2^32: a `u32` with wrapping addition, subtraction and multiplication.
///
/// Encoded as 4 little-endian bytes; every byte string of that length is canonical.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Z32(pub u32);

impl Z32 {
    /// Zero.
    pub const ZERO: Z32 = Z32(0);
    /// One.
    pub const ONE: Z32 = Z32(1);

    /// A uniformly random element.
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Z32 {
        Z32(rng.next_u32())
    }

    /// The representative in `[0, 2^32)`.
    pub const fn to_u32(self) -> u32 {
        self.0
    }
}

impl Add for Z32 {
    type Output = Z32;
    #[inline(always)]
    fn add(self, rhs: Z32) -> Z32 {
        Z32(self.0.wrapping_add(rhs.0))
    }
}

impl Sub for Z32 {
    type Output = Z32;
    #[inline(always)]
    fn sub(self, rhs: Z32) -> Z32 {
        Z32(self.0.wrapping_sub(rhs.0))
    }
}

impl Neg for Z32 {
    type Output = Z32;
    #[inline(always)]
    fn neg(self) -> Z32 {
        Z32(self.0.wrapping_neg())
    }
}

impl Mul for Z32 {
    type Output = Z32;
    #[inline(always)]
    fn mul(self, rhs: Z32) -> Z32 {
        Z32(self.0.wrapping_mul(rhs.0))
    }
}

impl AddAssign for Z32 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Z32) {
        *self = *self + rhs;
    }
}

impl SubAssign for Z32 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Z32) {
        *self = *self - rhs;
    }
}

impl MulAssign for Z32 {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Z32) {
        *self = *self * rhs;
    }
}

impl Sum for Z32 {
    fn sum<I: Iterator<Item = Z32>>(iter: I) -> Z32 {
        iter.fold(Z32::ZERO, |a, b| a + b)
    }
}

impl From<u32> for Z32 {
    fn from(v: u32) -> Z32 {
        Z32(v)
    }
}

impl From<Z32> for u32 {
    fn from(v: Z32) -> u32 {
        v.0
    }
}

impl Group for Z32 {
    const ZERO: Z32 = Z32(0);
    const BYTES: usize = 4;

    /// Takes the first 4 bytes (little-endian) of one block and discards the rest, so each
    /// element consumes exactly one block; 2^32 divides 2^128, so the result is uniform.
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Z32 {
        let block = src.next_block();
        let mut low = [0u8; 4];
        low.copy_from_slice(&block[..4]);
        Z32(u32::from_le_bytes(low))
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Z32, CodecError> {
        let arr: [u8; 4] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 4,
            got: bytes.len(),
        })?;
        Ok(Z32(u32::from_le_bytes(arr)))
    }
}

impl Ring for Z32 {
    const ONE: Z32 = Z32(1);

    /// `v` mod 2^32.
    fn from_u64(v: u64) -> Z32 {
        Z32(v as u32)
    }
}

impl fmt::Display for Z32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Z32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Z32({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode_vec, encode_vec};

    struct Counter(u8);

    impl BlockSource for Counter {
        fn next_block(&mut self) -> [u8; 16] {
            self.0 = self.0.wrapping_add(1);
            core::array::from_fn(|i| self.0.wrapping_mul(16).wrapping_add(i as u8))
        }
    }

    #[test]
    fn arithmetic_wraps_mod_2_32() {
        let top = Z32(u32::MAX);
        assert_eq!(top + Z32::ONE, Z32::ZERO);
        assert_eq!(Z32::ZERO - Z32::ONE, top);
        assert_eq!(-Z32(5) + Z32(5), Z32::ZERO);
        assert_eq!(Z32(0x1_0001) * Z32(0x1_0001), Z32(0x2_0001));
        assert_eq!(Z32::from_u64((1 << 32) + 7), Z32(7));
        assert_eq!([Z32(u32::MAX), Z32(2)].into_iter().sum::<Z32>(), Z32(1));
    }

    #[test]
    fn encodes_four_little_endian_bytes() {
        let v = [Z32(0x0403_0201), Z32(u32::MAX), Z32::ZERO];
        let bytes = encode_vec(&v);
        assert_eq!(&bytes[..4], &[1, 2, 3, 4]);
        assert_eq!(decode_vec::<Z32>(&bytes, 3).unwrap(), v);
        assert!(decode_vec::<Z32>(&bytes[..11], 3).is_err());
        assert!(Z32::read_le(&[0; 5]).is_err());
    }

    #[test]
    fn draws_the_low_four_bytes_of_one_block() {
        let mut src = Counter(0);
        assert_eq!(Z32::random_from(&mut src), Z32(0x1312_1110));
        assert_eq!(Z32::random_from(&mut src), Z32(0x2322_2120));
    }
}
