//! [`Engine`]: the compute engine for the CPU step of RAM programs — secret values of `Fp` in
//! replicated shares with addition, multiplication, selection, bit operations, opening, and
//! equality and less-than of `k`-bit integers, every operation batched.
//!
//! # Model
//! Three parties, honest majority, one passive corruption, as the rest of this crate. A secret
//! value ([`Secret`]) is a replicated share ⟦x⟧ of x ∈ F_p; a secret bit ([`SecretBit`]) is a
//! secret value known to be 0 or 1. Linear operations are local (the operators of
//! [`Replicated`]); everything else is a batched method of [`Online`], the engine together with
//! the session it talks over, so that `k` independent operations cost the rounds of one.
//!
//! The engine does not own a session: [`Engine::on`] borrows one for the duration of a batch of
//! operations. A RAM program runs it over the session that its distributed ORAM owns, between
//! accesses (every engine operation and every ORAM access consumes all of its own messages
//! before it returns, so the two never interleave on a link).
//!
//! # Comparison (how `lt` and `eq` work)
//! For `k`-bit integers a, b (0 ≤ a, b < 2^k, k ≤ [`MAX_BITS`]) the engine computes
//! \[a < b\] and \[a = b\] by the masked-opening comparison of Catrina and de Hoogh (SCN 2010)
//! with `P2` as a helper that deals the correlated randomness from PRGs it shares with `P0`
//! and `P1`, and the bitwise part on XOR-shared bits between `P0` and `P1`: see
//! [`compare`](crate::compare). No preprocessing and no pool: a batch of comparisons costs
//! [`rounds_per_comparison`] rounds (6 at k = 46, 7 at k = 64). A 46-bit `lt` in a batch of
//! 1000 sends 34.4 bytes from each of `P0` and `P1` and 225 bytes from `P2` (to `P1`: 32
//! bytes of monomials per 8 bits compared, 32 of F_p corrections), by the byte formula the
//! `comparison_costs_and_no_pool` test asserts at other batch sizes.
//!
//! # One-hot vectors and the pool
//! [`Online::onehot_many`] masks and opens x as a comparison of the older, replicated form does:
//! shared random bits in units of [`GROUP_BITS`] = 4 with the products of each unit's bits, and
//! the equality polynomial of each group. Random bits are made in batches (Damgård et al.,
//! TCC 2006, "random bit" by XOR of bits the parties contribute): `P0` and `P1` each deal a
//! random bit as a replicated input (one round, both dealers at once), and
//! b = b₀ ⊕ b₁ = b₀ + b₁ − 2·b₀·b₁ (one product round). The 11 products of each unit's bits
//! of degree 2 to 4 take two more product rounds. Units go into a pool
//! ([`Engine::preprocess`]); a one-hot vector of a `k`-bit value takes ⌈k/4⌉ units
//! ([`bits_per_onehot`]), each used once, and if the pool runs short the missing units are
//! made inline (four extra rounds, counted in [`Counters::inline_refills`]).
//!
//! # Costs
//! Per batch of `m` operations, per party (elements are 16-byte `Fp`s, "products" are
//! replicated multiplications, one element to the successor each):
//!
//! | operation | rounds | elements sent per party | pool bits |
//! |---|---|---|---|
//! | [`preprocess`](Engine::preprocess) `m` bits (m/4 units) | 4 (per 2^16 units) | `P0`, `P1`: 2m + m + 11m/4; `P2`: m + 11m/4 | +m |
//! | linear ops, [`not`](Online::not), [`constant`](Online::constant), [`to_additive`](Online::to_additive) | 0 | 0 | 0 |
//! | [`input`](Online::input) | 1 | dealer: 2m | 0 |
//! | [`from_additive`](Online::from_additive) | 1 | m | 0 |
//! | [`mul_many`](Online::mul_many), [`select_many`](Online::select_many), [`and_many`](Online::and_many), [`or_many`](Online::or_many), [`xor_many`](Online::xor_many) | 1 | m | 0 |
//! | [`dot_many`](Online::dot_many) (m inner products of any length) | 1 | m | 0 |
//! | [`open_many`](Online::open_many) | 1 | m to the predecessor | 0 |
//! | [`open_to`](Online::open_to) | 1 | m from the receiver's successor | 0 |
//! | [`lt_many`](Online::lt_many), [`eq_many`](Online::eq_many), [`cmp_many`](Online::cmp_many) at `k` bits | [`rounds_per_comparison`] = 3 + ⌈log₂⌈k/8⌉⌉ | `P0`, `P1`: 2m (+ m for `cmp`) and packed bits; `P2`: to `P1` only (see [`compare`](crate::compare)) | 0 |
//! | [`onehot_many`](Online::onehot_many) at `k` bits, vectors of length `len` | [`rounds_per_onehot`] | 2m (opening) + m·len·(⌈k/4⌉ − 1) | m·4⌈k/4⌉ |
//! | [`shuffle`](Online::shuffle) of vectors and matrices holding m values | 3 | 2m in all (see [`shuffle`](crate::shuffle)) | 0 |
//!
//! # Security notes
//! * Inputs of a comparison must lie in [0, 2^k): outside it the result is unspecified and the
//!   opened c no longer hides the inputs. Programs bound their values (e.g. sentinels) so
//!   that this holds.
//! * Every opened value is either an output or masked as above; every product re-randomises
//!   its output with F_Zero (Ramen Fig. 25), and [`to_additive`](Online::to_additive)
//!   re-randomises the shares it hands out.

use std::collections::VecDeque;

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_net::Session;
use rand_core::RngCore;

use crate::compare::{DealerPrgs, Want};
use crate::driver::{finish_round, run_round, send_outgoing, setup_party};
use crate::error::MpcError;
use crate::party::{Input, Party};
use crate::share::{Additive, Replicated};
use crate::shuffle::Shuffle;

/// A secret value of the engine: this party's replicated share ⟦x⟧ of x ∈ F_p.
pub type Secret = Replicated<Fp>;

pub use crate::compare::{MAX_BITS, STAT_SEC, and_gates};

/// Bits per mask unit of the pool: a one-hot vector's first tree levels are evaluated inside
/// groups of this many bits without a round, from preprocessed products of the group's bits.
pub const GROUP_BITS: usize = 4;

/// Units made per preprocessing batch (four rounds each): 4 MiB messages at most.
const UNITS_PER_BATCH: usize = 1 << 16;

/// One preprocessed mask unit: shares of the products Π_{i∈S} r_i of [`GROUP_BITS`] random bits
/// for every non-empty subset S (index = the subset's bit mask; index 0 is unused).
type Unit = [Secret; 1 << GROUP_BITS];

/// Pool bits a one-hot vector of a `k`-bit value consumes ([`Online::onehot_many`]): `k`
/// rounded up to whole [`GROUP_BITS`]-bit units. Comparisons take none.
pub fn bits_per_onehot(k: u32) -> usize {
    (k as usize).div_ceil(GROUP_BITS) * GROUP_BITS
}

/// A secret bit: a [`Secret`] whose value is 0 or 1.
///
/// Bits come out of comparisons and bit operations, or from [`SecretBit::assume_bit`] when the
/// program knows a value is a bit. `Debug` shows no share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SecretBit(Secret);

impl SecretBit {
    /// The bit as a secret value (0 or 1).
    #[inline]
    pub const fn value(self) -> Secret {
        self.0
    }

    /// Treats `x` as a bit. The caller guarantees x ∈ {0, 1}; bit operations on any other value
    /// compute the arithmetic formulas of [`Online::and_many`] etc. on it.
    #[inline]
    pub const fn assume_bit(x: Secret) -> SecretBit {
        SecretBit(x)
    }

    /// The public bit `b` as a constant sharing.
    pub fn public(b: bool, me: PartyId) -> SecretBit {
        SecretBit(Replicated::public(Fp::from_u64(u64::from(b)), me))
    }
}

/// The outcome of one comparison by [`Online::cmp_many`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// \[a < b\].
    pub lt: SecretBit,
    /// \[a = b\].
    pub eq: SecretBit,
}

/// What the engine has done so far; all counts are functions of the public call sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Shared random bits made (in preprocessing or inline).
    pub bits_made: u64,
    /// Shared random bits consumed by comparisons.
    pub bits_used: u64,
    /// Times a comparison found the pool short and made the missing bits inline.
    pub inline_refills: u64,
    /// Comparisons (each `lt`, `eq` or `cmp` counts one).
    pub comparisons: u64,
    /// Replicated products (multiplications, selects, bit operations, one-hot trees,
    /// preprocessing).
    pub products: u64,
    /// AND gates of comparison trees (on XOR shares between `P0` and `P1`).
    pub ands: u64,
}

/// One party's compute engine: the I/O-free [`Party`] state, the pool of preprocessed random
/// bits and counters. See the [module documentation](self).
#[derive(Debug)]
pub struct Engine {
    party: Party,
    dealer: DealerPrgs,
    pool: VecDeque<Unit>,
    counters: Counters,
}

/// Rounds of one batch of comparisons of `k`-bit values at `P0` and `P1` (see
/// [`compare`](crate::compare)); `P2` sends in the first only.
pub fn rounds_per_comparison(k: u32) -> u64 {
    crate::compare::rounds(k)
}

/// Rounds of one batch of one-hot vectors of `k`-bit values: the opening and one product round
/// per tree level above the groups.
pub fn rounds_per_onehot(k: u32) -> u64 {
    let groups = (k as usize).div_ceil(GROUP_BITS);
    1 + u64::from(groups.next_power_of_two().trailing_zeros())
}

/// A multilinear polynomial in the bits of one unit: coefficient of Π_{i∈S} r_i at index S.
type Poly = [Fp; 1 << GROUP_BITS];

/// The product of two polynomials in disjoint sets of bits.
fn poly_mul(p: &Poly, q: &Poly) -> Poly {
    let mut r = [Fp::ZERO; 1 << GROUP_BITS];
    for (a, &pa) in p.iter().enumerate() {
        if pa.is_zero() {
            continue;
        }
        for (b, &qb) in q.iter().enumerate() {
            if !qb.is_zero() {
                r[a | b] += pa * qb;
            }
        }
    }
    r
}

fn poly_add(p: &Poly, q: &Poly) -> Poly {
    std::array::from_fn(|i| p[i] + q[i])
}

/// [Catrina–de Hoogh, BitLT] inside one unit: the polynomials of
/// (\[c_g < r_g\], \[c_g = r_g\]) for the public bits `c` of a group of `width` bits (lowest
/// first) and the unit's shared bits, built from the leaves l_i = (1 − c_i)·r_i and
/// e_i = 1 − c_i ⊕ r_i by the same combination as the tree, (l_H + e_H·l_L, e_H·e_L).
fn group_polys(c: u128, width: usize) -> (Poly, Poly) {
    let mut l = [Fp::ZERO; 1 << GROUP_BITS];
    let mut e = [Fp::ZERO; 1 << GROUP_BITS];
    e[0] = Fp::ONE;
    for i in 0..width {
        let bit = 1usize << i;
        let mut li = [Fp::ZERO; 1 << GROUP_BITS];
        let mut ei = [Fp::ZERO; 1 << GROUP_BITS];
        if (c >> i) & 1 == 1 {
            ei[bit] = Fp::ONE; // e = r
        } else {
            li[bit] = Fp::ONE; // l = r
            ei[0] = Fp::ONE; // e = 1 − r
            ei[bit] = -Fp::ONE;
        }
        l = poly_add(&li, &poly_mul(&ei, &l));
        e = poly_mul(&ei, &e);
    }
    (l, e)
}

/// The share of a polynomial's value from a unit's monomial shares.
fn eval_poly(p: &Poly, unit: &Unit, me: PartyId) -> Secret {
    let mut acc = Replicated::public(p[0], me);
    for (m, &coeff) in p.iter().enumerate().skip(1) {
        if !coeff.is_zero() {
            acc += unit[m] * coeff;
        }
    }
    acc
}

impl Engine {
    /// Sets up the engine over `session` (one round: pairwise PRG seeds, [`setup_party`]), with
    /// this party's randomness derived from `seed`.
    ///
    /// # Errors
    /// As [`setup_party`].
    pub fn setup(session: &mut Session, seed: Seed) -> Result<Engine, MpcError> {
        Ok(Engine::new(setup_party(session, seed)?))
    }

    /// An engine on a party state that is already set up.
    pub fn new(mut party: Party) -> Engine {
        let dealer = DealerPrgs::new(&mut party);
        Engine {
            party,
            dealer,
            pool: VecDeque::new(),
            counters: Counters::default(),
        }
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.party.me()
    }

    /// The I/O-free party state (e.g. for [`Party::input_additive`], which needs no session).
    pub fn party_mut(&mut self) -> &mut Party {
        &mut self.party
    }

    /// Shared random bits in the pool (a multiple of [`GROUP_BITS`]).
    pub fn pool_len(&self) -> usize {
        self.pool.len() * GROUP_BITS
    }

    /// What the engine has done so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Makes at least `bits` shared random bits, in units of [`GROUP_BITS`] with the products
    /// of each unit's bits, and adds them to the pool (4 rounds per 2^16 units; see the
    /// [module documentation](self)). `bits = 0` sends nothing.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn preprocess(&mut self, session: &mut Session, bits: usize) -> Result<(), MpcError> {
        let mut left = bits.div_ceil(GROUP_BITS);
        while left > 0 {
            let count = left.min(UNITS_PER_BATCH);
            let made = self.random_units(session, count)?;
            self.pool.extend(made);
            left -= count;
        }
        Ok(())
    }

    /// `count` units: random bits b = b₀ ⊕ b₁ (b₀ dealt by `P0`, b₁ by `P1`), then the products
    /// of every subset of each unit's bits (degree 2 in one round, degrees 3 and 4 in the next).
    fn random_units(&mut self, session: &mut Session, count: usize) -> Result<Vec<Unit>, MpcError> {
        let bits = self.random_bits(session, count * GROUP_BITS)?;
        let mut units: Vec<Unit> = bits
            .chunks_exact(GROUP_BITS)
            .map(|b| {
                let mut u = [Secret::ZERO; 1 << GROUP_BITS];
                for (i, &x) in b.iter().enumerate() {
                    u[1 << i] = x;
                }
                u
            })
            .collect();
        // Degree 2, then degrees 3 and 4 (each as a product of two lower-degree monomials).
        for degree in [2u32, 3] {
            let mut xs = Vec::new();
            let mut ys = Vec::new();
            let mut targets = Vec::new();
            for (ui, u) in units.iter().enumerate() {
                for m in 1usize..1 << GROUP_BITS {
                    let d = m.count_ones();
                    let wanted = if degree == 2 { d == 2 } else { d >= 3 };
                    if !wanted {
                        continue;
                    }
                    // Split off the lowest bit (degree 2, 3) or the lowest two (degree 4).
                    let low = if d == 4 {
                        m & 0b0011
                    } else {
                        m & m.wrapping_neg()
                    };
                    xs.push(u[low]);
                    ys.push(u[m ^ low]);
                    targets.push((ui, m));
                }
            }
            let start = self.party.mul_start(&xs, &ys)?;
            let prods = run_round(session, start)?;
            self.counters.products += prods.len() as u64;
            for ((ui, m), p) in targets.into_iter().zip(prods) {
                units[ui][m] = p;
            }
        }
        Ok(units)
    }

    /// One batch of shared random bits b = b₀ ⊕ b₁, b₀ dealt by `P0` and b₁ by `P1`.
    fn random_bits(
        &mut self,
        session: &mut Session,
        count: usize,
    ) -> Result<Vec<Secret>, MpcError> {
        let me = self.party.me();
        let mine: Vec<Fp> = if matches!(me, PartyId::P0 | PartyId::P1) {
            let rng = self.party.local_rng();
            let mut out = Vec::with_capacity(count);
            while out.len() < count {
                let word = rng.next_u64();
                let take = (count - out.len()).min(64);
                out.extend((0..take).map(|i| Fp::from_u64((word >> i) & 1)));
            }
            out
        } else {
            Vec::new()
        };
        let input = |dealer: PartyId| {
            if dealer == me {
                Input::Own(&mine)
            } else {
                Input::Peer { dealer, count }
            }
        };
        // Both dealers' inputs in one round: send both, then receive both.
        let (r0, out0) = self.party.input_replicated_start(input(PartyId::P0))?;
        let (r1, out1) = self.party.input_replicated_start(input(PartyId::P1))?;
        send_outgoing(session, &out0)?;
        send_outgoing(session, &out1)?;
        let b0 = finish_round(session, r0)?;
        let b1 = finish_round(session, r1)?;
        // b₀ ⊕ b₁ = b₀ + b₁ − 2·b₀·b₁.
        let start = self.party.mul_start(&b0, &b1)?;
        let prod = run_round(session, start)?;
        self.counters.products += count as u64;
        self.counters.bits_made += count as u64;
        Ok(b0
            .iter()
            .zip(&b1)
            .zip(prod)
            .map(|((&x, &y), p)| x + y - p * Fp::from_u64(2))
            .collect())
    }

    /// The engine over `session` for a batch of online operations.
    pub fn on<'a>(&'a mut self, session: &'a mut Session) -> Online<'a> {
        Online {
            engine: self,
            session,
        }
    }
}

/// The engine together with the session it talks over; every method is one batched operation
/// (see the cost table in the [module documentation](self)). All three parties call the same
/// methods with the same batch lengths and bit lengths in the same order.
#[derive(Debug)]
pub struct Online<'a> {
    engine: &'a mut Engine,
    session: &'a mut Session,
}

impl Online<'_> {
    /// This party.
    pub fn me(&self) -> PartyId {
        self.engine.party.me()
    }

    /// The session (e.g. for statistics).
    pub fn session(&self) -> &Session {
        self.session
    }

    /// The public constant `c` as a sharing.
    pub fn constant(&self, c: u64) -> Secret {
        Replicated::public(Fp::from_u64(c), self.me())
    }

    /// The public field element `c` as a sharing.
    pub fn constant_fp(&self, c: Fp) -> Secret {
        Replicated::public(c, self.me())
    }

    /// x + c for a public `c`.
    pub fn add_public(&self, x: Secret, c: u64) -> Secret {
        x.add_public(Fp::from_u64(c), self.me())
    }

    /// 1 − b (local).
    pub fn not(&self, b: SecretBit) -> SecretBit {
        SecretBit(Replicated::public(Fp::ONE, self.me()) - b.0)
    }

    /// Secret values from a dealer's integers: the dealer passes `Input::Own(values)`, the
    /// others `Input::Peer { dealer, count }`. One round (the dealer sends 2 elements per
    /// value).
    ///
    /// # Errors
    /// As [`Party::input_replicated_start`]; a transport fault.
    pub fn input(&mut self, input: Input<'_, u64>) -> Result<Vec<Secret>, MpcError> {
        let owned: Vec<Fp>;
        let input = match input {
            Input::Own(v) => {
                owned = v.iter().map(|&x| Fp::from_u64(x)).collect();
                Input::Own(&owned[..])
            }
            Input::Peer { dealer, count } => Input::Peer { dealer, count },
        };
        let start = self.engine.party.input_replicated_start(input)?;
        run_round(self.session, start)
    }

    /// Additive shares → secret values (Ramen Fig. 4, step 8: one round, one element per value
    /// to the successor), e.g. for the values a distributed ORAM returns.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn from_additive(&mut self, x: &[Additive<Fp>]) -> Result<Vec<Secret>, MpcError> {
        let start = self.engine.party.to_replicated_start(x);
        run_round(self.session, start)
    }

    /// Secret values → fresh additive shares (local: the contained share plus an F_Zero
    /// sharing of 0), e.g. for the address and value of an ORAM access.
    pub fn to_additive(&mut self, x: &[Secret]) -> Vec<Additive<Fp>> {
        let add = Replicated::to_additive_vec(x);
        self.engine.party.reshare(&add)
    }

    fn products(&mut self, x: &[Secret], y: &[Secret]) -> Result<Vec<Secret>, MpcError> {
        if x.is_empty() {
            return Ok(Vec::new());
        }
        self.engine.counters.products += x.len() as u64;
        let start = self.engine.party.mul_start(x, y)?;
        run_round(self.session, start)
    }

    /// x·y for each pair. One round.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn mul_many(&mut self, pairs: &[(Secret, Secret)]) -> Result<Vec<Secret>, MpcError> {
        let (x, y): (Vec<_>, Vec<_>) = pairs.iter().copied().unzip();
        self.products(&x, &y)
    }

    /// `b ? x : y` for each triple (y + b·(x − y), Ramen Fig. 23, F_Select). One round.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn select_many(
        &mut self,
        triples: &[(SecretBit, Secret, Secret)],
    ) -> Result<Vec<Secret>, MpcError> {
        let b: Vec<Secret> = triples.iter().map(|t| t.0.0).collect();
        let d: Vec<Secret> = triples.iter().map(|t| t.1 - t.2).collect();
        let p = self.products(&b, &d)?;
        Ok(p.into_iter().zip(triples).map(|(p, t)| t.2 + p).collect())
    }

    /// Inner products Σ_i x_i·y_i, one per pair of equal-length vectors: the parties'
    /// local cross terms are summed before anything is sent, so a batch costs one round and one
    /// element per inner product, whatever the vector lengths.
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the two vectors of a pair differ in length (before
    /// anything is sent); a transport fault or a peer's malformed message.
    pub fn dot_many(&mut self, pairs: &[(&[Secret], &[Secret])]) -> Result<Vec<Secret>, MpcError> {
        for (x, y) in pairs {
            if x.len() != y.len() {
                return Err(MpcError::LengthMismatch {
                    op: "dot",
                    left: x.len(),
                    right: y.len(),
                });
            }
        }
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let mut sums = Vec::with_capacity(pairs.len());
        for (x, y) in pairs {
            sums.push(self.engine.party.dot_local(x, y)?);
        }
        self.engine.counters.products += pairs.len() as u64;
        self.from_additive(&sums)
    }

    fn bitwise(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
        f: impl Fn(Secret, Secret, Secret) -> Secret,
    ) -> Result<Vec<SecretBit>, MpcError> {
        let (x, y): (Vec<Secret>, Vec<Secret>) = pairs.iter().map(|(a, b)| (a.0, b.0)).unzip();
        let p = self.products(&x, &y)?;
        Ok(x.iter()
            .zip(&y)
            .zip(p)
            .map(|((&a, &b), p)| SecretBit(f(a, b, p)))
            .collect())
    }

    /// a ∧ b = a·b for each pair. One round.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn and_many(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
    ) -> Result<Vec<SecretBit>, MpcError> {
        self.bitwise(pairs, |_, _, p| p)
    }

    /// a ∨ b = a + b − a·b for each pair. One round.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn or_many(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
    ) -> Result<Vec<SecretBit>, MpcError> {
        self.bitwise(pairs, |a, b, p| a + b - p)
    }

    /// a ⊕ b = a + b − 2·a·b for each pair. One round.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn xor_many(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
    ) -> Result<Vec<SecretBit>, MpcError> {
        self.bitwise(pairs, |a, b, p| a + b - p * Fp::from_u64(2))
    }

    /// Opens the values to all parties. One round (one element per value to the predecessor).
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn open_many(&mut self, x: &[Secret]) -> Result<Vec<Fp>, MpcError> {
        let start = self.engine.party.open_replicated_start(x);
        run_round(self.session, start)
    }

    /// Opens the values to `to` only: `Some` there, `None` at the others. One round.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if `to` is not one of the three parties; a transport fault.
    pub fn open_to(&mut self, to: PartyId, x: &[Secret]) -> Result<Option<Vec<Fp>>, MpcError> {
        let start = self.engine.party.open_replicated_to_start(to, x)?;
        run_round(self.session, start)
    }

    /// A fresh secret uniform permutation of `0..n` for [`shuffle`](Online::shuffle): each
    /// party draws the two of its three factors it knows ([`crate::shuffle`]). No
    /// communication.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if n ≥ 2^32.
    pub fn new_shuffle(&mut self, n: usize) -> Result<Shuffle, MpcError> {
        Shuffle::new(&mut self.engine.party, n)
    }

    /// Applies the secret permutation π of `sh` (π⁻¹ with `inverse`) to each vector
    /// (out\[π(i)\] = v\[i\]) and to the rows and columns of each row-major n × n matrix
    /// (out\[π(i)\]\[π(j)\] = m\[i\]\[j\]). Three rounds; each party sends two elements per
    /// value in all.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if a vector's length is not n or a matrix's not n² (before
    /// anything is sent); a transport fault or a peer's malformed message.
    #[allow(clippy::type_complexity)]
    pub fn shuffle(
        &mut self,
        sh: &Shuffle,
        vectors: Vec<Vec<Secret>>,
        matrices: Vec<Vec<Secret>>,
        inverse: bool,
    ) -> Result<(Vec<Vec<Secret>>, Vec<Vec<Secret>>), MpcError> {
        let n = sh.len();
        if vectors.iter().any(|v| v.len() != n) || matrices.iter().any(|m| m.len() != n * n) {
            return Err(MpcError::ApiMisuse(
                "shuffled vectors need n values, matrices n²",
            ));
        }
        let layout = crate::shuffle::Layout {
            vectors: vectors.len(),
            matrices: matrices.len(),
        };
        if n == 0 {
            return Ok((vectors, matrices));
        }
        let (nv, nm) = (vectors.len(), matrices.len());
        // Moved, not copied: a matrix may be most of a party's memory.
        let mut flat: Vec<Secret> = Vec::with_capacity(nv * n + nm * n * n);
        for v in vectors.into_iter().chain(matrices) {
            flat.extend(v);
        }
        let mut out = crate::shuffle::run(
            self.session,
            &mut self.engine.party,
            sh,
            flat,
            &layout,
            inverse,
        )?;
        let mut mats = Vec::with_capacity(nm);
        for _ in 0..nm {
            let tail = out.split_off(out.len() - n * n);
            mats.push(tail);
        }
        mats.reverse();
        out.shrink_to_fit();
        let vecs = out.chunks_exact(n).map(<[Secret]>::to_vec).collect();
        Ok((vecs, mats))
    }

    /// \[a < b\] for each pair of `k`-bit integers (0 ≤ a, b < 2^k), with `P2` as the
    /// helper ([`compare`](crate::compare)): [`rounds_per_comparison`] = 3 + ⌈log₂⌈k/8⌉⌉
    /// rounds, no pool bits.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] unless 1 ≤ k ≤ [`MAX_BITS`] (before anything is sent); a
    /// transport fault or a peer's malformed message.
    pub fn lt_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<SecretBit>, MpcError> {
        Ok(self
            .compare(pairs, k, Want::Lt)?
            .into_iter()
            .map(|c| c.lt)
            .collect())
    }

    /// \[a = b\] for each pair of `k`-bit integers. As [`lt_many`](Online::lt_many), with about
    /// half the products.
    ///
    /// # Errors
    /// As [`lt_many`](Online::lt_many).
    pub fn eq_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<SecretBit>, MpcError> {
        Ok(self
            .compare(pairs, k, Want::Eq)?
            .into_iter()
            .map(|c| c.eq)
            .collect())
    }

    /// Both \[a < b\] and \[a = b\] for each pair of `k`-bit integers, for the cost of one
    /// comparison.
    ///
    /// # Errors
    /// As [`lt_many`](Online::lt_many).
    pub fn cmp_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<Comparison>, MpcError> {
        self.compare(pairs, k, Want::Both)
    }

    /// The one-hot vector (\[x = j\])_{j < len} of each `k`-bit integer x (0 ≤ x < 2^k,
    /// 1 ≤ len ≤ 2^k): an oblivious index for reading and updating a vector by inner
    /// products. [`rounds_per_onehot`]`(k)` rounds and ⌈k/4⌉ pool units per value;
    /// `len·(⌈k/4⌉ − 1)` products per value.
    ///
    /// How: x is masked and opened as the pool-based comparison did (c' = (x + r') mod
    /// 2^k, with r' from the pool units), so x = j ⟺ r' = (c' − j) mod 2^k. Within each group
    /// of [`GROUP_BITS`] bits, \[r'_g = d\] for a public digit d is the equality polynomial of
    /// the group, a linear combination of the unit's monomials (no round); the groups' factors
    /// of each entry are multiplied in a tree, ⌈log₂⌈k/4⌉⌉ product rounds.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] unless 1 ≤ k ≤ [`MAX_BITS`] and 1 ≤ len ≤ 2^k (before anything
    /// is sent); a transport fault or a peer's malformed message.
    pub fn onehot_many(
        &mut self,
        xs: &[Secret],
        k: u32,
        len: usize,
    ) -> Result<Vec<Vec<Secret>>, MpcError> {
        if k == 0 || k > MAX_BITS {
            return Err(MpcError::ApiMisuse(
                "one-hot bit length must be in 1..=MAX_BITS",
            ));
        }
        if len == 0 || (k < 64 && len as u128 > 1u128 << k) {
            return Err(MpcError::ApiMisuse("one-hot length must be in 1..=2^k"));
        }
        let m = xs.len();
        if m == 0 {
            return Ok(Vec::new());
        }
        let me = self.me();
        let ku = k as usize;
        let groups = ku.div_ceil(GROUP_BITS);
        let units = self.take_units(m * groups)?;
        let zero = Secret::ZERO;
        let pairs: Vec<(Secret, Secret)> = xs.iter().map(|&x| (x, zero)).collect();
        let (_, masked) = self.mask_differences(&pairs, &units, k);
        let start = self.engine.party.open_start(&masked);
        let opened = run_round(self.session, start)?;
        let low_mask = (1u128 << k) - 1;
        let widths: Vec<usize> = (0..groups)
            .map(|g| (ku - g * GROUP_BITS).min(GROUP_BITS))
            .collect();
        // The equality polynomial of every digit of each group width.
        let polys: Vec<Vec<Poly>> = widths
            .iter()
            .map(|&w| (0..1u128 << w).map(|d| group_polys(d, w).1).collect())
            .collect();
        // factors[(v·len + j)·groups + g] = [r'_g = digit g of (c'_v − j) mod 2^k], looked up
        // in the table of [r'_g = d] for every digit d.
        let mut factors = Vec::with_capacity(m * len * groups);
        for (v, c) in opened.iter().enumerate() {
            let c_low = c.to_u128() & low_mask;
            let tables: Vec<Vec<Secret>> = (0..groups)
                .map(|g| {
                    let unit = &units[v * groups + g];
                    polys[g].iter().map(|p| eval_poly(p, unit, me)).collect()
                })
                .collect();
            for j in 0..len as u128 {
                let t = c_low.wrapping_sub(j) & low_mask;
                for (g, table) in tables.iter().enumerate() {
                    let digit = (t >> (g * GROUP_BITS)) as usize & (table.len() - 1);
                    factors.push(table[digit]);
                }
            }
        }
        let factors = self.row_products(factors, groups)?;
        Ok(factors.chunks_exact(len).map(<[Secret]>::to_vec).collect())
    }

    /// The product of each row of `width` consecutive factors, pairwise in ⌈log₂ width⌉
    /// rounds of [`Online::products`].
    fn row_products(
        &mut self,
        mut factors: Vec<Secret>,
        mut width: usize,
    ) -> Result<Vec<Secret>, MpcError> {
        while width > 1 {
            let next_width = width.div_ceil(2);
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for row in factors.chunks_exact(width) {
                for t in 0..width / 2 {
                    xs.push(row[2 * t]);
                    ys.push(row[2 * t + 1]);
                }
            }
            let prods = self.products(&xs, &ys)?;
            let mut it = prods.into_iter();
            let mut next = Vec::with_capacity(factors.len() / width * next_width);
            for row in factors.chunks_exact(width) {
                for _ in 0..width / 2 {
                    next.push(it.next().ok_or(MpcError::ApiMisuse("product count"))?);
                }
                if width % 2 == 1 {
                    next.push(row[width - 1]);
                }
            }
            factors = next;
            width = next_width;
        }
        Ok(factors)
    }

    /// Takes `count` units from the pool, making the missing ones inline.
    fn take_units(&mut self, count: usize) -> Result<Vec<Unit>, MpcError> {
        let missing = count.saturating_sub(self.engine.pool.len());
        if missing > 0 {
            self.engine.counters.inline_refills += 1;
            self.engine.preprocess(self.session, missing * GROUP_BITS)?;
        }
        self.engine.counters.bits_used += (count * GROUP_BITS) as u64;
        Ok(self.engine.pool.drain(..count).collect())
    }

    /// \[a < b\] and \[a = b\] for each pair of `k`-bit integers, with `P2` as the helper
    /// ([`compare`](crate::compare)).
    fn compare(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
        want: Want,
    ) -> Result<Vec<Comparison>, MpcError> {
        if k == 0 || k > MAX_BITS {
            return Err(MpcError::ApiMisuse(
                "comparison bit length must be in 1..=MAX_BITS",
            ));
        }
        let m = pairs.len();
        if m == 0 {
            return Ok(Vec::new());
        }
        self.engine.counters.comparisons += m as u64;
        let engine = &mut *self.engine;
        let results = if engine.party.me() == PartyId::P2 {
            crate::compare::help(self.session, &mut engine.dealer, m, k, want)?
        } else {
            let diffs: Vec<Secret> = pairs.iter().map(|&(a, b)| a - b).collect();
            engine.counters.ands += (m * and_gates(k)[want as usize]) as u64;
            crate::compare::evaluate(self.session, &mut engine.dealer, &diffs, k, want)?
        };
        let outs = usize::from(want.lt()) + usize::from(want.eq());
        Ok(results
            .chunks_exact(outs)
            .map(|r| Comparison {
                lt: SecretBit(if want.lt() { r[0] } else { Secret::ZERO }),
                eq: SecretBit(if want.eq() { r[outs - 1] } else { Secret::ZERO }),
            })
            .collect())
    }

    /// \[Catrina–de Hoogh, Mod2m, steps 1–3\] z + r' (replicated, with r' the mask's bits below
    /// 2^k from the pool units) and its additive share plus a statistical mask s·2^k, to open.
    fn mask_differences(
        &mut self,
        pairs: &[(Secret, Secret)],
        units: &[Unit],
        k: u32,
    ) -> (Vec<Secret>, Vec<Additive<Fp>>) {
        let me = self.me();
        let ku = k as usize;
        let groups = ku.div_ceil(GROUP_BITS);
        let two_k = Fp::from_u128(1u128 << k);
        let sec_mask = (1u64 << STAT_SEC) - 1;
        let mut zr = Vec::with_capacity(pairs.len());
        let mut masked = Vec::with_capacity(pairs.len());
        for (j, &(a, b)) in pairs.iter().enumerate() {
            let mut r = Secret::ZERO;
            for i in 0..ku {
                let unit = &units[j * groups + i / GROUP_BITS];
                r += unit[1 << (i % GROUP_BITS)] * Fp::from_u128(1u128 << i);
            }
            let z = (a - b).add_public(two_k, me) + r;
            zr.push(z);
            let s = self.engine.party.local_rng().next_u64() & sec_mask;
            masked.push(z.to_additive() + Additive::from_share(Fp::from_u64(s) * two_k));
        }
        (zr, masked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onehot_costs() {
        assert_eq!(rounds_per_onehot(64), 5);
        assert_eq!(rounds_per_onehot(3), 1);
        assert_eq!(rounds_per_onehot(5), 2);
        assert_eq!(bits_per_onehot(65), 68);
        assert_eq!(rounds_per_comparison(46), 6);
    }

    /// The group polynomials evaluated on every bit pattern are the comparison of the group.
    #[test]
    fn group_polynomials_compare() {
        for width in 1..=GROUP_BITS {
            for c in 0u128..1 << width {
                let (l, e) = group_polys(c, width);
                for r in 0u128..1 << width {
                    let eval = |p: &Poly| -> Fp {
                        p.iter()
                            .enumerate()
                            .filter(|&(m, _)| (m as u128) & !r == 0)
                            .map(|(_, &x)| x)
                            .sum()
                    };
                    assert_eq!(eval(&l), Fp::from_u64(u64::from(c < r)), "{width} {c} {r}");
                    assert_eq!(eval(&e), Fp::from_u64(u64::from(c == r)), "{width} {c} {r}");
                }
            }
        }
    }
}
