//! [`IntegerWord`]: word rings whose small elements are integers, so that an opened masked
//! address can be reduced mod `n`.

use doram_field::{Fp, Ring, Z64};

/// A word ring in which the integers `0..2^CAPACITY_BITS` embed injectively (`x ↦ x·1`) and
/// every element has a canonical non-negative integer representative.
///
/// [`LinearScanOram`](crate::LinearScanOram) needs this to turn an opened `addr + r` back into
/// an integer: as long as the sum of integers stays below `2^CAPACITY_BITS` it does not wrap
/// around the ring's modulus.
pub trait IntegerWord: Ring {
    /// Integers below `2^CAPACITY_BITS` are distinct elements (64 for Z/2^64; 127 for `Fp`,
    /// whose modulus lies between 2^127 and 2^128).
    const CAPACITY_BITS: u32;

    /// The canonical representative in `[0, order)`.
    fn to_u128(self) -> u128;

    /// The image of the integer `v`, for `v < 2^CAPACITY_BITS`.
    fn from_u128(v: u128) -> Self;
}

impl IntegerWord for Z64 {
    const CAPACITY_BITS: u32 = 64;

    fn to_u128(self) -> u128 {
        u128::from(self.0)
    }

    fn from_u128(v: u128) -> Self {
        // Reduction mod 2^64 is the ring's own; callers pass v < 2^64.
        Z64(v as u64)
    }
}

impl IntegerWord for Fp {
    const CAPACITY_BITS: u32 = 127;

    fn to_u128(self) -> u128 {
        Fp::to_u128(self)
    }

    fn from_u128(v: u128) -> Self {
        Fp::from_u128(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<W: IntegerWord>() {
        let top = (1u128 << W::CAPACITY_BITS) - 1;
        for v in [0, 1, 2, 1 << 40, top - 1, top] {
            assert_eq!(W::from_u128(v).to_u128(), v);
        }
        assert_eq!(W::from_u128(5) + W::from_u128(7), W::from_u128(12));
        assert_eq!(W::from_u128(1), W::ONE);
    }

    #[test]
    fn integers_embed() {
        round_trip::<Z64>();
        round_trip::<Fp>();
        const { assert!(Fp::MODULUS > 1u128 << Fp::CAPACITY_BITS) };
    }
}
