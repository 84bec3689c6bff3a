//! Fixed-length vectors of group elements with component-wise operations.
//!
//! Rust's orphan rule forbids implementing `Add` (a foreign trait) for `[G; N]` (a foreign
//! type), and [`Group`] requires `Add`, so the group structure lives on the thin wrapper
//! [`Vector`] instead of on bare arrays. It converts to and from `[G; N]` for free, and
//! dereferences to the array.

use crate::{BlockSource, Group, Ring};
use core::fmt;
use core::ops::{
    Add, AddAssign, Deref, DerefMut, Index, IndexMut, Mul, MulAssign, Neg, Sub, SubAssign,
};
use doram_core::CodecError;

/// An element of G^N with component-wise operations, e.g. a DPF payload (1, α) ∈ F_p².
///
/// As a [`Group`]: `BYTES = N·G::BYTES` (components back to back), `random_from` draws the N
/// components in order, and decoding rejects the vector if any component is rejected. If `G`
/// is a [`Ring`], so is `Vector<G, N>` (the product ring: component-wise multiplication).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Vector<G, const N: usize>(pub [G; N]);

impl<G: Group, const N: usize> Vector<G, N> {
    /// The zero vector.
    pub const ZERO: Self = Vector([G::ZERO; N]);

    /// Wraps an array.
    pub const fn new(components: [G; N]) -> Self {
        Vector(components)
    }

    /// The components.
    pub const fn into_inner(self) -> [G; N] {
        self.0
    }

    /// Multiplies every component by the scalar `s`.
    pub fn scale(self, s: G) -> Self
    where
        G: Ring,
    {
        Vector(self.0.map(|x| x * s))
    }
}

impl<G: Group, const N: usize> Default for Vector<G, N> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<G: fmt::Debug, const N: usize> fmt::Debug for Vector<G, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl<G, const N: usize> From<[G; N]> for Vector<G, N> {
    fn from(a: [G; N]) -> Self {
        Vector(a)
    }
}

impl<G, const N: usize> From<Vector<G, N>> for [G; N] {
    fn from(v: Vector<G, N>) -> [G; N] {
        v.0
    }
}

impl<G, const N: usize> Deref for Vector<G, N> {
    type Target = [G; N];
    fn deref(&self) -> &[G; N] {
        &self.0
    }
}

impl<G, const N: usize> DerefMut for Vector<G, N> {
    fn deref_mut(&mut self) -> &mut [G; N] {
        &mut self.0
    }
}

impl<G, const N: usize> Index<usize> for Vector<G, N> {
    type Output = G;
    fn index(&self, i: usize) -> &G {
        &self.0[i]
    }
}

impl<G, const N: usize> IndexMut<usize> for Vector<G, N> {
    fn index_mut(&mut self, i: usize) -> &mut G {
        &mut self.0[i]
    }
}

impl<G: Group, const N: usize> Add for Vector<G, N> {
    type Output = Self;
    #[inline]
    fn add(mut self, rhs: Self) -> Self {
        self += rhs;
        self
    }
}

impl<G: Group, const N: usize> Sub for Vector<G, N> {
    type Output = Self;
    #[inline]
    fn sub(mut self, rhs: Self) -> Self {
        self -= rhs;
        self
    }
}

impl<G: Group, const N: usize> Neg for Vector<G, N> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Vector(self.0.map(|x| -x))
    }
}

impl<G: Group, const N: usize> AddAssign for Vector<G, N> {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        for (a, b) in self.0.iter_mut().zip(rhs.0) {
            *a += b;
        }
    }
}

impl<G: Group, const N: usize> SubAssign for Vector<G, N> {
    #[inline]
    fn sub_assign(&mut self, rhs: Self) {
        for (a, b) in self.0.iter_mut().zip(rhs.0) {
            *a -= b;
        }
    }
}

impl<G: Ring, const N: usize> Mul for Vector<G, N> {
    type Output = Self;
    #[inline]
    fn mul(mut self, rhs: Self) -> Self {
        self *= rhs;
        self
    }
}

impl<G: Ring, const N: usize> MulAssign for Vector<G, N> {
    #[inline]
    fn mul_assign(&mut self, rhs: Self) {
        for (a, b) in self.0.iter_mut().zip(rhs.0) {
            *a *= b;
        }
    }
}

impl<G: Group, const N: usize> core::iter::Sum for Vector<G, N> {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

impl<G: Group, const N: usize> Group for Vector<G, N> {
    const ZERO: Self = Vector([G::ZERO; N]);
    const BYTES: usize = N * G::BYTES;

    fn random_from<S: BlockSource + ?Sized>(src: &mut S) -> Self {
        Vector(core::array::from_fn(|_| G::random_from(src)))
    }

    fn write_le(&self, out: &mut [u8]) {
        assert_eq!(out.len(), Self::BYTES, "write_le: wrong output length");
        for (x, chunk) in self.0.iter().zip(out.chunks_exact_mut(G::BYTES)) {
            x.write_le(chunk);
        }
    }

    fn read_le(bytes: &[u8]) -> Result<Self, CodecError> {
        if bytes.len() != Self::BYTES {
            return Err(CodecError::WrongLength {
                expected: Self::BYTES,
                got: bytes.len(),
            });
        }
        let mut out = Self::ZERO;
        for (x, chunk) in out.0.iter_mut().zip(bytes.chunks_exact(G::BYTES.max(1))) {
            *x = G::read_le(chunk)?;
        }
        Ok(out)
    }
}

impl<G: Ring, const N: usize> Ring for Vector<G, N> {
    const ONE: Self = Vector([G::ONE; N]);
    /// The constant vector (v, …, v).
    fn from_u64(v: u64) -> Self {
        Vector([G::from_u64(v); N])
    }
}

impl<G: serde::Serialize, const N: usize> serde::Serialize for Vector<G, N> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = serializer.serialize_tuple(N)?;
        for x in &self.0 {
            t.serialize_element(x)?;
        }
        t.end()
    }
}

impl<'de, G: Group + serde::Deserialize<'de>, const N: usize> serde::Deserialize<'de>
    for Vector<G, N>
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<G, const N: usize>(core::marker::PhantomData<G>);
        impl<'de, G: Group + serde::Deserialize<'de>, const N: usize> serde::de::Visitor<'de> for V<G, N> {
            type Value = Vector<G, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a sequence of {N} elements")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vector<G, N>, A::Error> {
                let mut out = Vector::<G, N>::ZERO;
                for (i, x) in out.0.iter_mut().enumerate() {
                    *x = seq
                        .next_element()?
                        .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(serde::de::Error::invalid_length(N + 1, &self));
                }
                Ok(out)
            }
        }
        deserializer.deserialize_tuple(N, V::<G, N>(core::marker::PhantomData))
    }
}
