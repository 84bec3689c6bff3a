//! Bits under XOR: the field GF(2) ([`Bit`]) and the vector space GF(2)^128 ([`Bits128`]).

// In GF(2) addition *is* XOR and multiplication *is* AND; these are not typos.
#![allow(clippy::suspicious_arithmetic_impl, clippy::suspicious_op_assign_impl)]

use crate::{BlockSource, Group, Ring};
use core::fmt;
use core::iter::{Product, Sum};
use core::ops::{
    Add, AddAssign, BitAnd, BitAndAssign, BitXor, BitXorAssign, Mul, MulAssign, Neg, Not, Sub,
    SubAssign,
};
use doram_core::CodecError;

/// One bit, the field GF(2): addition (and subtraction) is XOR, multiplication is AND, and
/// negation is the identity.
///
/// Encoded as a single byte, 0 or 1; other byte values are rejected.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Bit(pub bool);

impl Bit {
    /// The zero bit.
    pub const ZERO: Bit = Bit(false);
    /// The one bit.
    pub const ONE: Bit = Bit(true);

    /// A uniformly random bit.
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Bit {
        Bit(rng.next_u32() & 1 == 1)
    }

    /// The bit as 0 or 1.
    pub const fn to_u8(self) -> u8 {
        self.0 as u8
    }
}

impl Add for Bit {
    type Output = Bit;
    #[inline(always)]
    fn add(self, rhs: Bit) -> Bit {
        Bit(self.0 ^ rhs.0)
    }
}

impl Sub for Bit {
    type Output = Bit;
    #[inline(always)]
    fn sub(self, rhs: Bit) -> Bit {
        Bit(self.0 ^ rhs.0)
    }
}

impl Neg for Bit {
    type Output = Bit;
    /// The identity: every bit is its own inverse under XOR.
    #[inline(always)]
    fn neg(self) -> Bit {
        self
    }
}

impl Mul for Bit {
    type Output = Bit;
    #[inline(always)]
    fn mul(self, rhs: Bit) -> Bit {
        Bit(self.0 & rhs.0)
    }
}

impl AddAssign for Bit {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Bit) {
        self.0 ^= rhs.0;
    }
}

impl SubAssign for Bit {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Bit) {
        self.0 ^= rhs.0;
    }
}

impl MulAssign for Bit {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Bit) {
        self.0 &= rhs.0;
    }
}

impl BitXor for Bit {
    type Output = Bit;
    #[inline(always)]
    fn bitxor(self, rhs: Bit) -> Bit {
        Bit(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Bit {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Bit) {
        self.0 ^= rhs.0;
    }
}

impl BitAnd for Bit {
    type Output = Bit;
    #[inline(always)]
    fn bitand(self, rhs: Bit) -> Bit {
        Bit(self.0 & rhs.0)
    }
}

impl BitAndAssign for Bit {
    #[inline(always)]
    fn bitand_assign(&mut self, rhs: Bit) {
        self.0 &= rhs.0;
    }
}

impl Not for Bit {
    type Output = Bit;
    #[inline(always)]
    fn not(self) -> Bit {
        Bit(!self.0)
    }
}

impl Sum for Bit {
    fn sum<I: Iterator<Item = Bit>>(iter: I) -> Bit {
        iter.fold(Bit::ZERO, |a, b| a + b)
    }
}

impl Product for Bit {
    fn product<I: Iterator<Item = Bit>>(iter: I) -> Bit {
        iter.fold(Bit::ONE, |a, b| a * b)
    }
}

impl From<bool> for Bit {
    fn from(b: bool) -> Bit {
        Bit(b)
    }
}

impl From<Bit> for bool {
    fn from(b: Bit) -> bool {
        b.0
    }
}

impl From<Bit> for u8 {
    fn from(b: Bit) -> u8 {
        b.0 as u8
    }
}

impl Group for Bit {
    const ZERO: Bit = Bit(false);
    const BYTES: usize = 1;

    /// The lowest bit of one block (the rest of the block is discarded).
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Bit {
        Bit(src.next_block()[0] & 1 == 1)
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&[self.0 as u8]);
    }

    fn read_le(bytes: &[u8]) -> Result<Bit, CodecError> {
        match bytes {
            [0] => Ok(Bit(false)),
            [1] => Ok(Bit(true)),
            [_] => Err(CodecError::OutOfRange {
                what: "bit byte is neither 0 nor 1",
            }),
            _ => Err(CodecError::WrongLength {
                expected: 1,
                got: bytes.len(),
            }),
        }
    }
}

impl Ring for Bit {
    const ONE: Bit = Bit(true);
    /// `v mod 2`.
    fn from_u64(v: u64) -> Bit {
        Bit(v & 1 == 1)
    }
}

impl fmt::Display for Bit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0 as u8)
    }
}

impl fmt::Debug for Bit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bit({})", self.0 as u8)
    }
}

/// 128 bits under component-wise XOR (GF(2)^128), e.g. a DPF output in XOR-shared form.
///
/// As a [`Ring`] the product is component-wise AND and one is the all-ones word (the product
/// ring GF(2)^128). Bit i is `(value >> i) & 1`; the encoding is the 16-byte little-endian form
/// of the value, and every 16-byte string is canonical.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Bits128(pub u128);

impl Bits128 {
    /// All bits clear.
    pub const ZERO: Bits128 = Bits128(0);
    /// All bits set.
    pub const ONES: Bits128 = Bits128(u128::MAX);

    /// A uniformly random value.
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Bits128 {
        let mut b = [0u8; 16];
        rng.fill_bytes(&mut b);
        Bits128(u128::from_le_bytes(b))
    }

    /// From the 16-byte little-endian encoding.
    pub const fn from_bytes(b: [u8; 16]) -> Bits128 {
        Bits128(u128::from_le_bytes(b))
    }

    /// The 16-byte little-endian encoding.
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// Bit `i` (0 = least significant).
    ///
    /// # Panics
    /// If `i ≥ 128`.
    pub const fn get(self, i: usize) -> bool {
        assert!(i < 128, "bit index out of range");
        (self.0 >> i) & 1 == 1
    }

    /// Sets bit `i` to `v`.
    ///
    /// # Panics
    /// If `i ≥ 128`.
    pub fn set(&mut self, i: usize, v: bool) {
        assert!(i < 128, "bit index out of range");
        self.0 = (self.0 & !(1u128 << i)) | ((v as u128) << i);
    }

    /// The number of set bits.
    pub const fn count_ones(self) -> u32 {
        self.0.count_ones()
    }
}

impl Add for Bits128 {
    type Output = Bits128;
    #[inline(always)]
    fn add(self, rhs: Bits128) -> Bits128 {
        Bits128(self.0 ^ rhs.0)
    }
}

impl Sub for Bits128 {
    type Output = Bits128;
    #[inline(always)]
    fn sub(self, rhs: Bits128) -> Bits128 {
        Bits128(self.0 ^ rhs.0)
    }
}

impl Neg for Bits128 {
    type Output = Bits128;
    /// The identity: every value is its own inverse under XOR.
    #[inline(always)]
    fn neg(self) -> Bits128 {
        self
    }
}

impl Mul for Bits128 {
    type Output = Bits128;
    /// Component-wise AND.
    #[inline(always)]
    fn mul(self, rhs: Bits128) -> Bits128 {
        Bits128(self.0 & rhs.0)
    }
}

impl AddAssign for Bits128 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Bits128) {
        self.0 ^= rhs.0;
    }
}

impl SubAssign for Bits128 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Bits128) {
        self.0 ^= rhs.0;
    }
}

impl MulAssign for Bits128 {
    #[inline(always)]
    fn mul_assign(&mut self, rhs: Bits128) {
        self.0 &= rhs.0;
    }
}

impl BitXor for Bits128 {
    type Output = Bits128;
    #[inline(always)]
    fn bitxor(self, rhs: Bits128) -> Bits128 {
        Bits128(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Bits128 {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Bits128) {
        self.0 ^= rhs.0;
    }
}

impl BitAnd for Bits128 {
    type Output = Bits128;
    #[inline(always)]
    fn bitand(self, rhs: Bits128) -> Bits128 {
        Bits128(self.0 & rhs.0)
    }
}

impl BitAndAssign for Bits128 {
    #[inline(always)]
    fn bitand_assign(&mut self, rhs: Bits128) {
        self.0 &= rhs.0;
    }
}

impl Not for Bits128 {
    type Output = Bits128;
    #[inline(always)]
    fn not(self) -> Bits128 {
        Bits128(!self.0)
    }
}

impl Sum for Bits128 {
    fn sum<I: Iterator<Item = Bits128>>(iter: I) -> Bits128 {
        iter.fold(Bits128::ZERO, |a, b| a + b)
    }
}

impl From<[u8; 16]> for Bits128 {
    fn from(b: [u8; 16]) -> Bits128 {
        Bits128::from_bytes(b)
    }
}

impl From<Bits128> for [u8; 16] {
    fn from(b: Bits128) -> [u8; 16] {
        b.to_bytes()
    }
}

impl From<u128> for Bits128 {
    fn from(v: u128) -> Bits128 {
        Bits128(v)
    }
}

impl Group for Bits128 {
    const ZERO: Bits128 = Bits128(0);
    const BYTES: usize = 16;

    /// One whole block, read little-endian.
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Bits128 {
        Bits128::from_bytes(src.next_block())
    }

    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Bits128, CodecError> {
        let arr: [u8; 16] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 16,
            got: bytes.len(),
        })?;
        Ok(Bits128::from_bytes(arr))
    }
}

impl Ring for Bits128 {
    const ONE: Bits128 = Bits128(u128::MAX);
    /// The image of `v` under Z → GF(2)^128: all ones if `v` is odd, zero otherwise.
    fn from_u64(v: u64) -> Bits128 {
        Bits128(0u128.wrapping_sub((v & 1) as u128))
    }
}

impl fmt::Display for Bits128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for Bits128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bits128({:032x})", self.0)
    }
}

impl serde::Serialize for Bits128 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_bytes().serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Bits128 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Bits128, D::Error> {
        Ok(Bits128::from_bytes(<[u8; 16]>::deserialize(deserializer)?))
    }
}
