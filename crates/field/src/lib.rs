//! Arithmetic for doram: the prime field `Fp` with p = 2^128 − 28·2^64 + 1, the rings Z_2^64
//! and Z_2^32, single bits under XOR, and fixed-length vectors of these.
//!
//! Brief overview: every DPF output type and every share type implements [`Group`]; [`Ring`]
//! adds multiplication. Elements are encoded as raw little-endian bytes (see [`Group::BYTES`]),
//! and vectors with [`encode_vec`] / [`decode_vec`], which take the expected count as a parameter
//! and reject wrong lengths and out-of-range values.
//!
//! | type | structure | bytes |
//! | --- | --- | --- |
//! | [`Fp`] | the prime field, p = 2^128 − 28·2^64 + 1 | 16 |
//! | [`Z64`] | the ring Z/2^64 | 8 |
//! | [`Z32`] | the ring Z/2^32 | 4 |
//! | [`Fp64`] | the prime field, p = 2^64 − 59 | 8 |
//! | [`Bit`] | GF(2): XOR and AND | 1 |
//! | [`Bits128`] | GF(2)^128: XOR and AND | 16 |
//! | [`Vector<G, N>`] | G^N, component-wise | N·G::BYTES |
//!
//! Protocol hot spots have dedicated helpers: [`fp::dot`] / [`fp::DotAccumulator`] (inner
//! products with one reduction at the end), [`fp::sum`], and [`Fp::legendre_vartime`] /
//! [`legendre_batch_vartime`] (a binary-GCD Jacobi symbol, several times faster than Euler's
//! criterion [`Fp::legendre`]; the batch version vectorises it across 16 inputs and is about
//! four times faster again per symbol).

pub mod bit;
pub mod fp;
pub mod fp64;
pub mod legendre;
pub mod vector;
pub mod z32;
pub mod z64;

pub use bit::{Bit, Bits128};
pub use fp::Fp;
pub use fp64::{Fp64, Fp64Acc};
pub use legendre::legendre_batch_vartime;
pub use vector::Vector;
pub use z32::Z32;
pub use z64::Z64;

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Neg, Sub, SubAssign};
use doram_core::CodecError;

/// A source of uniformly random 16-byte blocks: an AES-CTR PRG, a hash output stream, …
///
/// [`Group::random_from`] draws elements from it (with rejection sampling where the group's order
/// is not a power of two), so that both DPF conversion and seed expansion share one definition.
pub trait BlockSource {
    /// The next uniformly random block.
    fn next_block(&mut self) -> [u8; 16];
}

/// An abelian group with a fixed-size little-endian byte encoding.
pub trait Group:
    Copy
    + Clone
    + Default
    + PartialEq
    + Eq
    + Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
{
    /// The neutral element.
    const ZERO: Self;
    /// Length of the encoding in bytes.
    const BYTES: usize;
    /// A uniformly random element drawn from `src`.
    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Self;
    /// Writes the little-endian encoding into `out` (`out.len() == Self::BYTES`).
    fn write_le(&self, out: &mut [u8]);
    /// Reads an element from `bytes` (`bytes.len() == Self::BYTES`), rejecting non-canonical
    /// encodings.
    fn read_le(bytes: &[u8]) -> Result<Self, CodecError>;
}

/// A commutative ring with one (a field for `Fp`).
pub trait Ring: Group + core::ops::Mul<Output = Self> + core::ops::MulAssign {
    /// The multiplicative identity.
    const ONE: Self;
    /// The image of a small integer.
    fn from_u64(v: u64) -> Self;

    /// Σ aᵢ·bᵢ over `pairs`. Rings with a cheaper inner product than one reduced product per
    /// term (F_p: one reduction in all) override it; the value is the same.
    fn sum_of_products(pairs: impl Iterator<Item = (Self, Self)>) -> Self {
        let mut acc = Self::ZERO;
        for (a, b) in pairs {
            acc += a * b;
        }
        acc
    }
}

/// Encodes a slice of group elements as raw little-endian bytes, back to back.
pub fn encode_vec<G: Group>(v: &[G]) -> Vec<u8> {
    let mut out = vec![0u8; v.len() * G::BYTES];
    for (x, chunk) in v.iter().zip(out.chunks_exact_mut(G::BYTES)) {
        x.write_le(chunk);
    }
    out
}

/// Decodes exactly `count` elements from `bytes`; the count comes from the protocol, never from
/// the peer.
pub fn decode_vec<G: Group>(bytes: &[u8], count: usize) -> Result<Vec<G>, CodecError> {
    let expected = count * G::BYTES;
    if bytes.len() != expected {
        return Err(CodecError::WrongLength {
            expected,
            got: bytes.len(),
        });
    }
    bytes.chunks_exact(G::BYTES).map(G::read_le).collect()
}
