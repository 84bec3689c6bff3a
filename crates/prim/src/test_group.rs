//! A tiny group for unit tests of generic code: Z_2^64 under addition.

use core::ops::{Add, AddAssign, Neg, Sub, SubAssign};
use doram_core::CodecError;
use doram_field::{BlockSource, Group};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestZ(pub u64);

impl Add for TestZ {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        TestZ(self.0.wrapping_add(o.0))
    }
}
impl Sub for TestZ {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        TestZ(self.0.wrapping_sub(o.0))
    }
}
impl Neg for TestZ {
    type Output = Self;
    fn neg(self) -> Self {
        TestZ(self.0.wrapping_neg())
    }
}
impl AddAssign for TestZ {
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl SubAssign for TestZ {
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}
impl Group for TestZ {
    const ZERO: Self = TestZ(0);
    const BYTES: usize = 8;
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Self {
        let b = src.next_block();
        TestZ(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")))
    }
    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }
    fn read_le(bytes: &[u8]) -> Result<Self, CodecError> {
        let a: [u8; 8] = bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 8,
            got: bytes.len(),
        })?;
        Ok(TestZ(u64::from_le_bytes(a)))
    }
}
