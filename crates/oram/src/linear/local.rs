//! The local (I/O-free) computations of the linear scan: parameters, address masks, the dealt
//! unit vector, rotation by the public offset, the inner-product read and the rank-one update.
//! [`super`] moves the messages.

use core::fmt;

use doram_core::PartyId;
use doram_field::Ring;
use doram_mpc::{Additive, Replicated};
use rand_core::RngCore;

use crate::error::OramError;
use crate::word::IntegerWord;

/// Statistical security parameter σ of the address masking: an opened masked address is within
/// statistical distance 2^−σ of a value independent of the address.
pub const STAT_SEC: u32 = 40;

/// The public parameters of a linear scan over `n` words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    n: usize,
}

impl Params {
    /// Checks that `n ≥ 1` and that `addr + R₁ + R₂` (each mask below `n·2^σ`) cannot wrap
    /// around the word ring: `n·(2^{σ+1} + 1) ≤ 2^CAPACITY_BITS`.
    pub(crate) fn new<W: IntegerWord>(n: usize) -> Result<Params, OramError> {
        if n == 0 {
            return Err(OramError::InvalidSize {
                n,
                reason: "a memory needs at least one word",
            });
        }
        let bound = (n as u128).checked_mul((1u128 << (STAT_SEC + 1)) + 1);
        match bound {
            Some(b) if b <= 1u128 << W::CAPACITY_BITS => Ok(Params { n }),
            _ => Err(OramError::InvalidSize {
                n,
                reason: "masked addresses (n·2^41 + n) would wrap around the word ring; \
                         with Z64 the linear scan supports n < 2^23",
            }),
        }
    }

    pub(crate) fn n(self) -> usize {
        self.n
    }

    /// The offset by which the preprocessed unit vector is rotated, for the opened masked
    /// address `c`: `c mod n`.
    pub(crate) fn offset<W: IntegerWord>(self, c: W) -> usize {
        // The remainder is below n, a usize.
        (c.to_u128() % self.n as u128) as usize
    }
}

/// One party's contribution to the mask of an address: `R = s + n·q` with `s` uniform in
/// `0..n` and `q` uniform in `0..2^σ`, so `R` is uniform in `0..n·2^σ`; the unit vector it
/// pairs with sits at `shift = −s mod n = −R mod n`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mask {
    pub value: u128,
    pub shift: usize,
}

impl fmt::Debug for Mask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Mask(..)")
    }
}

/// A uniform integer in `0..bound` (`bound ≥ 1`) by rejection sampling: the number of draws
/// depends only on the stream, so two parties sampling from a common PRG stay in step.
fn uniform_below<R: RngCore + ?Sized>(bound: u64, rng: &mut R) -> u64 {
    let zone = (u64::MAX / bound) * bound;
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// Samples a [`Mask`] for `params` from `rng`.
pub(crate) fn sample_mask<R: RngCore + ?Sized>(params: Params, rng: &mut R) -> Mask {
    let n = params.n as u64;
    let s = uniform_below(n, rng);
    let q = rng.next_u64() & ((1u64 << STAT_SEC) - 1);
    Mask {
        value: u128::from(s) + u128::from(n) * u128::from(q),
        // (n − s) mod n < n.
        shift: ((n - s) % n) as usize,
    }
}

/// Which part a party plays in dealing the unit vector of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DealRole {
    /// Picks the first mask `R₁` and the unit vector `e_{−R₁}`, and splits it between the two
    /// others: its successor's half comes from their common PRG, its predecessor's half is sent.
    Dealer,
    /// The dealer's successor: its half of `e_{−R₁}` is the common PRG stream with the dealer.
    DealerNext,
    /// The dealer's predecessor: receives its half of `e_{−R₁}` from the dealer.
    DealerPrev,
}

/// The dealer of the `index`-th preprocessed access: `P_{index mod 3}`, so the dealer's extra
/// message rotates over the parties.
pub(crate) fn dealer_of(index: u64) -> PartyId {
    PartyId::ALL[(index % 3) as usize]
}

/// `me`'s role when `dealer` deals.
pub(crate) fn deal_role(me: PartyId, dealer: PartyId) -> DealRole {
    if me == dealer {
        DealRole::Dealer
    } else if me == dealer.next(3) {
        DealRole::DealerNext
    } else {
        DealRole::DealerPrev
    }
}

/// The dealer's message: `e_shift − y`, where `y` is the successor's half.
pub(crate) fn unit_minus<W: Ring>(y: &[W], shift: usize) -> Vec<W> {
    let mut v: Vec<W> = y.iter().map(|&x| -x).collect();
    v[shift] += W::ONE;
    v
}

/// The vector `v` rotated right by `k`: element `i` moves to `(i + k) mod n`.
pub(crate) fn rotated<T: Copy>(mut v: Vec<T>, k: usize) -> Vec<T> {
    if !v.is_empty() {
        let k = k % v.len();
        v.rotate_right(k);
    }
    v
}

/// The material one access consumes, preprocessed: shares of the mask `r` of the address, of
/// the Beaver pair `(a, b)`, and replicated shares of the unit vector `f = e_{−r mod n}` and of
/// `a·f`, `b·f`, `a·b·f` (all unknown to every party).
pub(crate) struct Material<W> {
    pub r: Additive<W>,
    pub a: Additive<W>,
    pub b: Additive<W>,
    pub f: Vec<Replicated<W>>,
    pub af: Vec<Replicated<W>>,
    pub bf: Vec<Replicated<W>>,
    pub abf: Vec<Replicated<W>>,
}

impl<W> fmt::Debug for Material<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Material(n = {})", self.f.len())
    }
}

/// This party's additive share (without re-randomisation) of the inner product
/// `Σ_j e[j]·M[j]`, where `e` is `f` rotated right by `k`: `Σ_i f[i]·M[(i + k) mod n]`. Each
/// replicated product contributes `x_i·y_i + x_i·y_{i−1} + x_{i−1}·y_i`.
pub(crate) fn rotated_dot<W: Ring>(f: &[Replicated<W>], memory: &[Replicated<W>], k: usize) -> W {
    let (lo, hi) = memory.split_at(k);
    hi.iter().chain(lo).zip(f).fold(W::ZERO, |acc, (m, f)| {
        acc + f.own() * (m.own() + m.prev()) + f.prev() * m.own()
    })
}

/// The rank-one update `M += δ·e` with `e` = `f` rotated right by `k` and
/// `δ = (x + a)(y + b) = x·y + x·b + y·a + a·b` for the opened `x = op − a`, `y = d − b`:
/// `M[(i + k) mod n] += x·y·f[i] + x·(b·f)[i] + y·(a·f)[i] + (a·b·f)[i]`. Local and linear.
pub(crate) fn rotated_update<W: Ring>(
    memory: &mut [Replicated<W>],
    k: usize,
    x: W,
    y: W,
    m: &Material<W>,
) {
    let xy = x * y;
    let (lo, hi) = memory.split_at_mut(k);
    let terms = m.f.iter().zip(&m.bf).zip(&m.af).zip(&m.abf);
    for (cell, (((&f, &bf), &af), &abf)) in hi.iter_mut().chain(lo).zip(terms) {
        *cell += f * xy + bf * x + af * y + abf;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;
    use doram_field::{Fp, Z64};
    use doram_mpc::{deal_replicated, reconstruct_additive, reconstruct_replicated};
    use doram_prim::AesPrg;

    #[test]
    fn params_bound_the_size() {
        assert!(Params::new::<Fp>(0).is_err());
        assert!(Params::new::<Z64>(1).is_ok());
        assert!(Params::new::<Z64>((1 << 23) - 1).is_ok());
        assert!(matches!(
            Params::new::<Z64>(1 << 23),
            Err(OramError::InvalidSize { n, .. }) if n == 1 << 23
        ));
        assert!(Params::new::<Fp>(1 << 40).is_ok());
        let p = Params::new::<Z64>(10).unwrap();
        assert_eq!(p.offset(Z64(1234)), 4);
    }

    #[test]
    fn masks_are_in_range_and_shift_cancels_the_residue() {
        let mut rng = AesPrg::new(Seed([1; 16]));
        for n in [1usize, 2, 3, 7, 100] {
            let p = Params::new::<Fp>(n).unwrap();
            let mut seen = vec![false; n];
            for _ in 0..200 * n {
                let m = sample_mask(p, &mut rng);
                assert!(m.value < (n as u128) << STAT_SEC);
                assert_eq!((m.value + m.shift as u128) % n as u128, 0);
                seen[m.shift] = true;
            }
            assert!(seen.iter().all(|&s| s), "every shift occurs for n = {n}");
        }
    }

    #[test]
    fn rotation_moves_right() {
        assert_eq!(rotated(vec![1, 2, 3, 4], 1), vec![4, 1, 2, 3]);
        assert_eq!(rotated(vec![1, 2, 3], 5), vec![2, 3, 1]);
        assert_eq!(rotated(Vec::<u8>::new(), 3), Vec::<u8>::new());
        let v = unit_minus(&[Z64(5), Z64(6), Z64(7)], 1);
        assert_eq!(v, vec![Z64(0) - Z64(5), Z64(1) - Z64(6), Z64(0) - Z64(7)]);
        assert_eq!(deal_role(PartyId::P1, PartyId::P1), DealRole::Dealer);
        assert_eq!(deal_role(PartyId::P2, PartyId::P1), DealRole::DealerNext);
        assert_eq!(deal_role(PartyId::P0, PartyId::P1), DealRole::DealerPrev);
        assert_eq!(dealer_of(5), PartyId::P2);
    }

    /// The read and the update on dealt replicated shares, against plaintext.
    #[test]
    fn read_and_update_match_plaintext() {
        let mut rng = AesPrg::new(Seed([2; 16]));
        let n = 7;
        let plain: Vec<Fp> = (0..n as u64).map(|i| Fp::from_u64(100 + i)).collect();
        let deal_vec = |v: &[Fp], rng: &mut AesPrg| -> [Vec<Replicated<Fp>>; 3] {
            let mut out: [Vec<Replicated<Fp>>; 3] = Default::default();
            for &x in v {
                for (o, s) in out.iter_mut().zip(deal_replicated(x, rng)) {
                    o.push(s);
                }
            }
            out
        };
        let (t, k) = (5usize, 4usize); // f = e_5, rotated by 4: e_2.
        let (a, b, x, y) = (
            Fp::from_u64(11),
            Fp::from_u64(13),
            Fp::from_u64(3),
            Fp::from_u64(9),
        );
        let e: Vec<Fp> = (0..n)
            .map(|i| if i == t { Fp::ONE } else { Fp::ZERO })
            .collect();
        let scaled = |c: Fp| e.iter().map(|&v| v * c).collect::<Vec<_>>();
        let mut memory = deal_vec(&plain, &mut rng);
        let f = deal_vec(&e, &mut rng);
        let af = deal_vec(&scaled(a), &mut rng);
        let bf = deal_vec(&scaled(b), &mut rng);
        let abf = deal_vec(&scaled(a * b), &mut rng);
        let dots: [Additive<Fp>; 3] =
            std::array::from_fn(|i| Additive::from_share(rotated_dot(&f[i], &memory[i], k)));
        assert_eq!(reconstruct_additive(&dots), plain[2]);
        for i in 0..3 {
            let m = Material {
                r: Additive::ZERO,
                a: Additive::ZERO,
                b: Additive::ZERO,
                f: f[i].clone(),
                af: af[i].clone(),
                bf: bf[i].clone(),
                abf: abf[i].clone(),
            };
            rotated_update(&mut memory[i], k, x, y, &m);
            assert_eq!(format!("{m:?}"), "Material(n = 7)");
        }
        let delta = (x + a) * (y + b);
        for j in 0..n {
            let got = reconstruct_replicated(&[memory[0][j], memory[1][j], memory[2][j]]);
            let want = if j == 2 { plain[j] + delta } else { plain[j] };
            assert_eq!(got, Some(want), "cell {j}");
        }
    }
}
