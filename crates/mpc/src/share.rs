//! Share types: [`Additive`] ⟨x⟩ and [`Replicated`] ⟦x⟧ over any [`Ring`], their local linear
//! operations, and dealer-side helpers ([`deal_additive`], [`reconstruct_additive`], …) for
//! ideal functionalities and tests.
//!
//! # Conventions
//! A value x is split into three additive shares x₀ + x₁ + x₂ = x, share `i` belonging to party
//! `P_i`.
//!
//! * **Additive** ⟨x⟩: `P_i` holds x_i.
//! * **Replicated** ⟦x⟧: `P_i` holds (x_i, x_{i−1}), i.e. its own share and that of its
//!   predecessor. This is the paper's convention: converting ⟨x⟩ to ⟦x⟧ is "each `P_i` sends
//!   its share to `P_{i+1}`" (Ramen Fig. 4, step 8), so every share x_i is held by `P_i` and
//!   `P_{i+1}`, and any two parties together hold all three.
//!
//! Linear operations are local: `+`, `−`, negation and multiplication by a public scalar act
//! share-wise on both types. Adding a public constant is not share-wise — only the holders of
//! x₀ may add it — so it takes the party id ([`Additive::add_public`],
//! [`Replicated::add_public`]).
//!
//! Shares are secrets: their `Debug` prints `Additive(..)` / `Replicated(..)` only.

use core::fmt;
use core::iter::Sum;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use doram_core::PartyId;
use doram_field::{BlockSource, Group, Ring};
use rand_core::{CryptoRng, RngCore};

/// This party's additive share ⟨x⟩_i of a value x: the three parties' shares sum to x.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Additive<F>(F);

/// This party's replicated share ⟦x⟧ of a value x: `P_i` holds the pair (x_i, x_{i−1}) of the
/// additive shares x₀ + x₁ + x₂ = x (see the [module documentation](self)).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Replicated<F> {
    own: F,
    prev: F,
}

impl<F> fmt::Debug for Additive<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Additive(..)")
    }
}

impl<F> fmt::Debug for Replicated<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Replicated(..)")
    }
}

impl<F: Group> Additive<F> {
    /// The share 0 (a valid sharing of 0 when every party holds it).
    pub const ZERO: Self = Additive(F::ZERO);

    /// Wraps a raw share, e.g. one computed by a protocol from DPF evaluations.
    #[inline]
    pub const fn from_share(share: F) -> Self {
        Additive(share)
    }

    /// The raw share.
    #[inline]
    pub const fn share(self) -> F {
        self.0
    }

    /// This party's share of the public constant `c`: `c` at `P0`, 0 elsewhere (e.g. ⟨c+n⟩ in
    /// Ramen Fig. 14, Access step 2).
    #[inline]
    pub fn public(c: F, me: PartyId) -> Self {
        Additive(if me == PartyId::P0 { c } else { F::ZERO })
    }

    /// ⟨x + c⟩ for a public `c`: only `P0` adds it.
    #[inline]
    #[must_use]
    pub fn add_public(self, c: F, me: PartyId) -> Self {
        self + Self::public(c, me)
    }

    /// Wraps a vector of raw shares.
    pub fn from_shares(shares: Vec<F>) -> Vec<Self> {
        shares.into_iter().map(Additive).collect()
    }

    /// The raw shares of a slice.
    pub fn shares(xs: &[Self]) -> Vec<F> {
        xs.iter().map(|x| x.0).collect()
    }
}

impl<F: Group> Replicated<F> {
    /// The share (0, 0) (a valid sharing of 0 when every party holds it).
    pub const ZERO: Self = Replicated {
        own: F::ZERO,
        prev: F::ZERO,
    };

    /// Assembles `P_i`'s replicated share from x_i (`own`) and x_{i−1} (`prev`).
    #[inline]
    pub const fn from_parts(own: F, prev: F) -> Self {
        Replicated { own, prev }
    }

    /// x_i, the component this party `P_i` shares with its successor `P_{i+1}`.
    #[inline]
    pub const fn own(self) -> F {
        self.own
    }

    /// x_{i−1}, the component this party `P_i` shares with its predecessor `P_{i−1}`.
    #[inline]
    pub const fn prev(self) -> F {
        self.prev
    }

    /// The additive share x_i contained in this replicated share (local, no communication).
    ///
    /// The result is not re-randomised: `P_{i+1}` knows it. Add a zero-sharing
    /// ([`Party::reshare`](crate::Party::reshare)) before revealing it to anybody.
    #[inline]
    pub const fn to_additive(self) -> Additive<F> {
        Additive(self.own)
    }

    /// This party's share of the public constant `c`: x₀ = c, x₁ = x₂ = 0, so `P0` holds (c, 0),
    /// `P1` holds (0, c) and `P2` holds (0, 0).
    #[inline]
    pub fn public(c: F, me: PartyId) -> Self {
        match me {
            PartyId::P0 => Replicated::from_parts(c, F::ZERO),
            PartyId::P1 => Replicated::from_parts(F::ZERO, c),
            _ => Self::ZERO,
        }
    }

    /// ⟦x + c⟧ for a public `c`: the two holders of x₀ (`P0` and `P1`) add it.
    #[inline]
    #[must_use]
    pub fn add_public(self, c: F, me: PartyId) -> Self {
        self + Self::public(c, me)
    }

    /// The additive shares contained in a slice of replicated shares (see
    /// [`to_additive`](Self::to_additive)).
    pub fn to_additive_vec(xs: &[Self]) -> Vec<Additive<F>> {
        xs.iter().map(|x| x.to_additive()).collect()
    }
}

impl<F: Copy> Additive<F> {
    #[inline]
    fn map(self, f: impl Fn(F) -> F) -> Self {
        Additive(f(self.0))
    }

    #[inline]
    fn zip(self, rhs: Self, f: impl Fn(F, F) -> F) -> Self {
        Additive(f(self.0, rhs.0))
    }
}

impl<F: Copy> Replicated<F> {
    #[inline]
    fn map(self, f: impl Fn(F) -> F) -> Self {
        Replicated {
            own: f(self.own),
            prev: f(self.prev),
        }
    }

    #[inline]
    fn zip(self, rhs: Self, f: impl Fn(F, F) -> F) -> Self {
        Replicated {
            own: f(self.own, rhs.own),
            prev: f(self.prev, rhs.prev),
        }
    }
}

/// Share-wise linear operations; both share types are F-modules.
macro_rules! impl_linear {
    ($ty:ident) => {
        impl<F: Group> Add for $ty<F> {
            type Output = Self;
            #[inline]
            fn add(self, rhs: Self) -> Self {
                self.zip(rhs, |a, b| a + b)
            }
        }
        impl<F: Group> Sub for $ty<F> {
            type Output = Self;
            #[inline]
            fn sub(self, rhs: Self) -> Self {
                self.zip(rhs, |a, b| a - b)
            }
        }
        impl<F: Group> Neg for $ty<F> {
            type Output = Self;
            #[inline]
            fn neg(self) -> Self {
                self.map(|a| -a)
            }
        }
        /// Multiplication by a public scalar.
        impl<F: Ring> Mul<F> for $ty<F> {
            type Output = Self;
            #[inline]
            fn mul(self, c: F) -> Self {
                self.map(|a| a * c)
            }
        }
        impl<F: Group> AddAssign for $ty<F> {
            #[inline]
            fn add_assign(&mut self, rhs: Self) {
                *self = *self + rhs;
            }
        }
        impl<F: Group> SubAssign for $ty<F> {
            #[inline]
            fn sub_assign(&mut self, rhs: Self) {
                *self = *self - rhs;
            }
        }
        impl<F: Ring> MulAssign<F> for $ty<F> {
            #[inline]
            fn mul_assign(&mut self, c: F) {
                *self = *self * c;
            }
        }
        impl<F: Group> Sum for $ty<F> {
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold(Self::ZERO, |acc, x| acc + x)
            }
        }
        impl<'a, F: Group> Sum<&'a $ty<F>> for $ty<F> {
            fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.fold(Self::ZERO, |acc, x| acc + *x)
            }
        }
    };
}

impl_linear!(Additive);
impl_linear!(Replicated);

/// Adapts a [`RngCore`] to a [`BlockSource`], so [`Group::random_from`] can draw from it.
pub(crate) struct RngBlocks<'a, R: ?Sized>(pub &'a mut R);

impl<R: RngCore + ?Sized> BlockSource for RngBlocks<'_, R> {
    fn next_block(&mut self) -> [u8; 16] {
        let mut b = [0u8; 16];
        self.0.fill_bytes(&mut b);
        b
    }
}

/// A uniformly random element of `F` drawn from `rng`.
pub fn random_element<F: Group, R: RngCore + CryptoRng + ?Sized>(rng: &mut R) -> F {
    F::random_from(&mut RngBlocks(rng))
}

/// Dealer-side: a fresh additive sharing of `x`, share `i` for party `P_i`.
///
/// For ideal functionalities, trusted-dealer setups and tests; inside a protocol, use
/// [`Party::input_additive`](crate::Party::input_additive).
pub fn deal_additive<F: Group, R: RngCore + CryptoRng + ?Sized>(
    x: F,
    rng: &mut R,
) -> [Additive<F>; 3] {
    let x1: F = random_element(rng);
    let x2: F = random_element(rng);
    [Additive(x - x1 - x2), Additive(x1), Additive(x2)]
}

/// Dealer-side: a fresh replicated sharing of `x`, share `i` for party `P_i`.
pub fn deal_replicated<F: Group, R: RngCore + CryptoRng + ?Sized>(
    x: F,
    rng: &mut R,
) -> [Replicated<F>; 3] {
    replicate(&deal_additive(x, rng))
}

/// Dealer-side: the replicated sharing with the given additive components (`P_i` gets
/// (x_i, x_{i−1})).
pub fn replicate<F: Group>(x: &[Additive<F>; 3]) -> [Replicated<F>; 3] {
    std::array::from_fn(|i| Replicated::from_parts(x[i].0, x[(i + 2) % 3].0))
}

/// Dealer-side: x₀ + x₁ + x₂.
pub fn reconstruct_additive<F: Group>(shares: &[Additive<F>; 3]) -> F {
    shares[0].0 + shares[1].0 + shares[2].0
}

/// Dealer-side: the value of a replicated sharing, or `None` if the parties' shares are
/// inconsistent (`P_i`'s second component differs from `P_{i−1}`'s first).
pub fn reconstruct_replicated<F: Group>(shares: &[Replicated<F>; 3]) -> Option<F> {
    let consistent = (0..3).all(|i| shares[i].prev == shares[(i + 2) % 3].own);
    consistent.then(|| shares[0].own + shares[1].own + shares[2].own)
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::{Fp, Z64};
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    const PARTIES: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

    fn linear_ops<F: Ring>(rng: &mut ChaCha12Rng) {
        for _ in 0..50 {
            let (x, y, c): (F, F, F) = (
                random_element(rng),
                random_element(rng),
                random_element(rng),
            );
            let (ax, ay) = (deal_additive(x, rng), deal_additive(y, rng));
            let (rx, ry) = (deal_replicated(x, rng), deal_replicated(y, rng));
            let add =
                |f: &dyn Fn(usize) -> Additive<F>| reconstruct_additive(&std::array::from_fn(f));
            let rep = |f: &dyn Fn(usize) -> Replicated<F>| {
                reconstruct_replicated(&std::array::from_fn(f)).expect("consistent")
            };
            assert_eq!(add(&|i| ax[i] + ay[i]), x + y);
            assert_eq!(add(&|i| ax[i] - ay[i]), x - y);
            assert_eq!(add(&|i| -ax[i]), -x);
            assert_eq!(add(&|i| ax[i] * c), x * c);
            assert_eq!(add(&|i| ax[i].add_public(c, PARTIES[i])), x + c);
            assert_eq!(add(&|i| Additive::public(c, PARTIES[i])), c);
            assert_eq!(add(&|i| [ax[i], ay[i]].iter().sum()), x + y);
            assert_eq!(rep(&|i| rx[i] + ry[i]), x + y);
            assert_eq!(rep(&|i| rx[i] - ry[i]), x - y);
            assert_eq!(rep(&|i| -rx[i]), -x);
            assert_eq!(rep(&|i| rx[i] * c), x * c);
            assert_eq!(rep(&|i| rx[i].add_public(c, PARTIES[i])), x + c);
            assert_eq!(rep(&|i| Replicated::public(c, PARTIES[i])), c);
            assert_eq!(rep(&|i| [rx[i], ry[i]].into_iter().sum()), x + y);
            assert_eq!(add(&|i| rx[i].to_additive()), x);
            let mut acc = ax;
            for i in 0..3 {
                acc[i] += ay[i];
                acc[i] -= ax[i];
                acc[i] *= c;
            }
            assert_eq!(reconstruct_additive(&acc), y * c);
        }
    }

    #[test]
    fn linear_ops_match_plaintext() {
        let mut rng = ChaCha12Rng::seed_from_u64(11);
        linear_ops::<Fp>(&mut rng);
        linear_ops::<Z64>(&mut rng);
    }

    #[test]
    fn inconsistent_replicated_shares_are_detected() {
        let mut rng = ChaCha12Rng::seed_from_u64(12);
        let mut r = deal_replicated(Fp::from_u64(5), &mut rng);
        assert_eq!(reconstruct_replicated(&r), Some(Fp::from_u64(5)));
        r[1] = Replicated::from_parts(r[1].own(), r[1].prev() + Fp::ONE);
        assert_eq!(reconstruct_replicated(&r), None);
    }

    #[test]
    fn debug_is_redacted() {
        let a = Additive::from_share(Fp::from_u64(123_456));
        let r = Replicated::from_parts(Z64(77), Z64(88));
        assert_eq!(format!("{a:?}"), "Additive(..)");
        assert_eq!(format!("{r:?}"), "Replicated(..)");
        assert_eq!(format!("{:?}", vec![a, a]), "[Additive(..), Additive(..)]");
    }

    #[test]
    fn vector_wrappers_round_trip() {
        let v = vec![Z64(1), Z64(2), Z64(3)];
        let w = Additive::from_shares(v.clone());
        assert_eq!(Additive::shares(&w), v);
        let r: Vec<_> = v.iter().map(|&x| Replicated::from_parts(x, -x)).collect();
        assert_eq!(Additive::shares(&Replicated::to_additive_vec(&r)), v);
    }
}
