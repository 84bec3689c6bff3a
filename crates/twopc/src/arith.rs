//! Two-party arithmetic over F_p: additive shares x = x₀ + x₁ held by `P0` and `P1`, inputs
//! without messages, products by Beaver triples that OT extension makes ([`crate::triples`]),
//! and openings. The arithmetic layer a two-party RAM machine and 2P-Duoram's conversions
//! build on.
//!
//! * **Input** of the owner's x: both parties draw r from a PRG they share (keyed by one seed
//!   from each at set-up); the owner holds x − r, the other r. No message; the other's share
//!   is independent of x.
//! * **Product** (Beaver): with a triple (a, b, c = ab), open d = x − a and e = y − b (one
//!   round, two elements each way per product); xy = c + d·b + e·a + d·e, the last term added
//!   by `P0`. Triples come from a pool ([`Arith2::preprocess`]) or are made inline when it runs
//!   short.
//! * **Opening**: one round, one element each way per value.
//! * **Less-than** of `k`-bit integers ([`Arith2::lt_many`]): z = a − b + 2^k is shared
//!   additively; a garbled circuit (`P0` garbles, `P1` evaluates) adds the two shares mod p
//!   and outputs 1 − bit k of z, left as labels: the lsb of `P0`'s zero label and of `P1`'s
//!   active label are XOR shares of it (Δ has its lsb set), with no decoding message. `P0`
//!   sends the active labels of its share's bits, `P1`'s come from correlated OTs whose Δ is
//!   the garbling Δ. One oblivious transfer turns each XOR-shared bit into additive shares
//!   (`P0` sends (u₀ ⊕ c) − r for c = 0, 1). 383 AND gates at k = 46 (12 KiB of half-gates
//!   tables) and 256 input labels per comparison.
//! * **Bits in both forms** ([`DualBit`]): a comparison's result keeps its XOR share beside the
//!   additive one, so that a select on it ([`Arith2::select_dual_many`]) costs two oblivious
//!   transfers instead of a Beaver product (a triple is 5 KiB of OT extension).
//!
//! Semi-honest, as the OT extension and the triples. Message sizes depend only on the batch
//! sizes.

use std::collections::{HashMap, VecDeque};
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};
use std::sync::Arc;

use doram_core::wire::PeerFault;
use doram_core::{PartyId, Seed};
use doram_field::{Fp, Ring, Z64};
use doram_net::Session;
use doram_prim::aes::Block;
use doram_prim::prg::AesPrg;
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::builder::{Bit, Builder, Word, compact_wires};
use crate::driver::{
    cot_receive, cot_send, evaluate_on_labels, garble_on_labels, ot_receive, ot_send, peer,
    softspoken_both_setup,
};
use crate::gc::{Circuit, Evaluator, Garbler};
use crate::softspoken::{ChunkBits, SoftSpokenReceiver, SoftSpokenSender};
use crate::triples::{GilboaRing, recv_ring, ring_triples, send_ring};
#[cfg(doc)]
use crate::triples::{fp_triples, z64_triples};

/// This party's additive share of a secret x ∈ F_p (x = x₀ + x₁). `Debug` shows no share.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Share(Fp);

impl core::fmt::Debug for Share {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Share(..)")
    }
}

impl Share {
    /// The share 0 (a sharing of 0 when both hold it).
    pub const ZERO: Share = Share(Fp::ZERO);

    /// The public constant `c` as a sharing (`P0` holds c, `P1` 0).
    pub fn public(c: Fp, me: PartyId) -> Share {
        Share(if me == PartyId::P0 { c } else { Fp::ZERO })
    }

    /// x + c for a public `c`.
    pub fn add_public(self, c: Fp, me: PartyId) -> Share {
        self + Share::public(c, me)
    }

    /// A share from its raw field element (e.g. after a protocol that moves shares, such as a
    /// shuffle).
    pub fn from_raw(x: Fp) -> Share {
        Share(x)
    }

    /// The raw share (to reveal only through an opening).
    pub fn raw(self) -> Fp {
        self.0
    }
}

impl Add for Share {
    type Output = Share;
    fn add(self, o: Share) -> Share {
        Share(self.0 + o.0)
    }
}

impl Sub for Share {
    type Output = Share;
    fn sub(self, o: Share) -> Share {
        Share(self.0 - o.0)
    }
}

impl Neg for Share {
    type Output = Share;
    fn neg(self) -> Share {
        Share(-self.0)
    }
}

impl Mul<Fp> for Share {
    type Output = Share;
    fn mul(self, c: Fp) -> Share {
        Share(self.0 * c)
    }
}

impl std::iter::Sum for Share {
    fn sum<I: Iterator<Item = Share>>(iter: I) -> Share {
        Share(iter.map(|s| s.0).sum())
    }
}

impl AddAssign for Share {
    fn add_assign(&mut self, o: Share) {
        self.0 += o.0;
    }
}

impl SubAssign for Share {
    fn sub_assign(&mut self, o: Share) {
        self.0 -= o.0;
    }
}

/// A shared bit in both forms: additive (b = a₀ + a₁ in F_p) and XOR (b = x₀ ⊕ x₁), as the
/// comparisons produce it. The XOR form lets a select or an AND with it cost two oblivious
/// transfers instead of a Beaver product. `Debug` shows no share.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct DualBit {
    add: Share,
    xor: bool,
}

impl core::fmt::Debug for DualBit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DualBit(..)")
    }
}

impl DualBit {
    /// The public bit `b` (`P0` holds it, `P1` zeros).
    pub fn public(b: bool, me: PartyId) -> DualBit {
        let mine = b && me == PartyId::P0;
        DualBit {
            add: Share::public(Fp::from_u64(u64::from(b)), me),
            xor: mine,
        }
    }

    /// The additive share.
    pub fn share(self) -> Share {
        self.add
    }

    /// The XOR share.
    pub fn xor_share(self) -> bool {
        self.xor
    }

    /// ¬b (local).
    pub fn not(self, me: PartyId) -> DualBit {
        DualBit {
            add: Share::public(Fp::ONE, me) - self.add,
            xor: self.xor ^ (me == PartyId::P0),
        }
    }
}

/// What the engine has done; all counts follow from the public call sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Triples made (in preprocessing or inline).
    pub triples_made: u64,
    /// Products computed.
    pub products: u64,
    /// Times a product batch found the pool short.
    pub inline_refills: u64,
}

/// One party's two-party arithmetic engine: see the [module documentation](self).
pub struct Arith2 {
    me: PartyId,
    peer: PartyId,
    sender: SoftSpokenSender,
    receiver: SoftSpokenReceiver,
    common: AesPrg,
    rng: AesPrg,
    /// F_p triples `[a, b, c]`.
    pool: VecDeque<[Fp; 3]>,
    /// Z_2^64 triples `[a, b, c]` ([`Arith2::mul_many_z64`]).
    pool64: VecDeque<[Z64; 3]>,
    counters: Counters,
    circuits: CircuitSide,
    zero: Block,
    /// Circuits built so far, by shape and number of items (powers of two).
    cache: HashMap<(Shape, usize), Arc<Circuit>>,
}

/// The per-item circuits the engine runs: each item has 128 garbler inputs and 128 other
/// inputs, and its outputs follow those of the item before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Shape {
    /// [`compare_circuit`].
    Compare { k: usize, want: [bool; 2] },
    /// [`onehot_circuit`].
    Onehot { k: usize, len: usize },
    /// [`sum_bits_circuit`].
    SumBits { bits: usize },
    /// [`difference_circuit`].
    Difference,
}

impl Shape {
    fn build(self, m: usize) -> Result<Circuit, TwopcError> {
        match self {
            Shape::Compare { k, want } => compare_circuit(m, k, want),
            Shape::Onehot { k, len } => onehot_circuit(m, k, len),
            Shape::SumBits { bits } => sum_bits_circuit(m, bits),
            Shape::Difference => difference_circuit(m),
        }
    }
}

/// The largest number of items one circuit of the cache holds.
const MAX_ITEMS_PER_CIRCUIT: usize = 256;

/// This party's side of every garbled circuit: one garbler (at `P0`) or evaluator (at `P1`)
/// for the engine's whole life, so that the half-gates tweaks (the AND counter) never repeat
/// under the one Δ.
enum CircuitSide {
    Garbler(Garbler),
    Evaluator(Evaluator),
}

impl core::fmt::Debug for Arith2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Arith2({}, {} triples pooled)", self.me, self.pool.len())
    }
}

/// The rings the engine keeps a triple pool for.
trait PooledRing: GilboaRing {
    /// The engine's pool of this ring's triples `[a, b, c]`.
    fn pool(engine: &mut Arith2) -> &mut VecDeque<[Self; 3]>;
}

impl PooledRing for Fp {
    fn pool(engine: &mut Arith2) -> &mut VecDeque<[Fp; 3]> {
        &mut engine.pool
    }
}

impl PooledRing for Z64 {
    fn pool(engine: &mut Arith2) -> &mut VecDeque<[Z64; 3]> {
        &mut engine.pool64
    }
}

/// \[Beaver\] This party's openings `d = x − a`, `e = y − b` for each pair, interleaved.
fn beaver_masked<W: Ring>(pairs: impl Iterator<Item = (W, W)>, triples: &[[W; 3]]) -> Vec<W> {
    let mut masked = Vec::with_capacity(2 * triples.len());
    for ((x, y), [a, b, _]) in pairs.zip(triples) {
        masked.push(x - *a);
        masked.push(y - *b);
    }
    masked
}

/// \[Beaver\] This party's shares `c + d·b + e·a` (and `d·e` at `P0`) of the products, from
/// both parties' openings.
fn beaver_products<W: Ring>(me: PartyId, triples: &[[W; 3]], mine: &[W], theirs: &[W]) -> Vec<W> {
    triples
        .iter()
        .enumerate()
        .map(|(i, &[a, b, c])| {
            let d = mine[2 * i] + theirs[2 * i];
            let e = mine[2 * i + 1] + theirs[2 * i + 1];
            let mut z = c + d * b + e * a;
            if me == PartyId::P0 {
                z += d * e;
            }
            z
        })
        .collect()
}

impl Arith2 {
    /// Sets up over a two-party `session`: a common PRG seed (one 16-byte contribution each
    /// way, combined) and SoftSpoken OT extension in both directions, every secret from `rng`.
    ///
    /// # Errors
    /// [`TwopcError::WrongPartyCount`] unless the session has two parties; transport failures
    /// and the peer's malformed set-up messages.
    pub fn setup<R: RngCore + CryptoRng + ?Sized>(
        session: &mut Session,
        rng: &mut R,
    ) -> Result<Arith2, TwopcError> {
        let other = peer(session)?;
        let me = session.me();
        let mine = Seed::random(rng);
        session.send_bytes(other, &mine.0)?;
        let theirs = session.recv_bytes(other)?;
        doram_core::wire::exact_len(other, "common seed", &theirs, 16)?;
        let mut common = [0u8; 16];
        for (i, c) in common.iter_mut().enumerate() {
            *c = mine.0[i] ^ theirs[i];
        }
        let (sender, receiver) = softspoken_both_setup(session, ChunkBits::default(), rng)?;
        let circuits = if me == PartyId::P0 {
            CircuitSide::Garbler(Garbler::new(sender.delta(), 0)?)
        } else {
            CircuitSide::Evaluator(Evaluator::new(0))
        };
        let mut common = AesPrg::new(Seed(common));
        // The constant 0's label: the garbler's zero label and the evaluator's active label
        // coincide, and both may know it.
        let zero = common.next_u128();
        Ok(Arith2 {
            me,
            peer: other,
            sender,
            receiver,
            common,
            rng: AesPrg::new(Seed::random(rng)),
            pool: VecDeque::new(),
            pool64: VecDeque::new(),
            counters: Counters::default(),
            circuits,
            zero,
            cache: HashMap::new(),
        })
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// Triples in the pool.
    pub fn pool_len(&self) -> usize {
        self.pool.len()
    }

    /// Z_2^64 triples ready for [`Arith2::mul_many_z64`].
    pub fn pool_len_z64(&self) -> usize {
        self.pool64.len()
    }

    /// What the engine has done so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The public constant `c` as a sharing.
    pub fn constant(&self, c: Fp) -> Share {
        Share::public(c, self.me)
    }

    /// Shares of the owner's values: the owner passes `Some(values)`, the other `None`, both
    /// the same `count`. No message.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if the owner is not one of the two parties, passes no values
    /// or not `count` of them, or the other party passes some; nothing is drawn then.
    pub fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[Fp]>,
        count: usize,
    ) -> Result<Vec<Share>, TwopcError> {
        // Checked before the common stream moves, so that a refused call leaves both parties'
        // streams in step.
        let mine = match (owner == self.me, values) {
            _ if owner != self.me && owner != self.peer => None,
            (true, Some(v)) if v.len() == count => Some(Some(v)),
            (false, None) => Some(None),
            _ => None,
        }
        .ok_or(TwopcError::ApiMisuse(
            "the owner (one of the two parties) inputs `count` values, the other party none",
        ))?;
        let r: Vec<Fp> = self.common.expand(count);
        Ok(match mine {
            Some(v) => v.iter().zip(&r).map(|(&x, &r)| Share(x - r)).collect(),
            None => r.into_iter().map(Share).collect(),
        })
    }

    /// Makes `count` triples for later products ([`crate::triples::fp_triples`]).
    ///
    /// # Errors
    /// As [`fp_triples`].
    pub fn preprocess(&mut self, session: &mut Session, count: usize) -> Result<(), TwopcError> {
        self.preprocess_ring::<Fp>(session, count)
    }

    /// x·y for each pair: one round after the triples (made inline if the pool is short).
    ///
    /// # Errors
    /// Transport failures; the peer's malformed openings.
    pub fn mul_many(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
    ) -> Result<Vec<Share>, TwopcError> {
        let raw: Vec<(Fp, Fp)> = pairs.iter().map(|&(x, y)| (x.0, y.0)).collect();
        Ok(self
            .mul_ring(session, &raw)?
            .into_iter()
            .map(Share)
            .collect())
    }

    /// Makes `count` Z_2^64 triples for later [`Arith2::mul_many_z64`]
    /// ([`crate::triples::z64_triples`]).
    ///
    /// # Errors
    /// As [`z64_triples`].
    pub fn preprocess_z64(
        &mut self,
        session: &mut Session,
        count: usize,
    ) -> Result<(), TwopcError> {
        self.preprocess_ring::<Z64>(session, count)
    }

    /// x·y mod 2^64 for each pair of additive Z_2^64 shares (Beaver, as [`Arith2::mul_many`]):
    /// one round after the triples, made inline if the pool is short.
    ///
    /// # Errors
    /// Transport failures; the peer's malformed openings.
    pub fn mul_many_z64(
        &mut self,
        session: &mut Session,
        pairs: &[(Z64, Z64)],
    ) -> Result<Vec<Z64>, TwopcError> {
        self.mul_ring(session, pairs)
    }

    /// `count` triples of `W` into its pool.
    fn preprocess_ring<W: PooledRing>(
        &mut self,
        session: &mut Session,
        count: usize,
    ) -> Result<(), TwopcError> {
        let t = ring_triples::<W, _, _, _>(
            session,
            &mut self.sender,
            &mut self.receiver,
            count,
            &mut self.rng,
        )?;
        self.counters.triples_made += count as u64;
        W::pool(self).extend((0..count).map(|i| [t.a[i], t.b[i], t.c[i]]));
        Ok(())
    }

    /// \[Beaver\] x·y for each pair of shares of `W`, triples made inline if the pool is short.
    fn mul_ring<W: PooledRing>(
        &mut self,
        session: &mut Session,
        pairs: &[(W, W)],
    ) -> Result<Vec<W>, TwopcError> {
        let m = pairs.len();
        if m == 0 {
            return Ok(Vec::new());
        }
        let pooled = W::pool(self).len();
        if pooled < m {
            self.counters.inline_refills += 1;
            self.preprocess_ring::<W>(session, m - pooled)?;
        }
        let triples: Vec<[W; 3]> = W::pool(self).drain(..m).collect();
        let masked = beaver_masked(pairs.iter().copied(), &triples);
        send_ring(session, self.peer, &masked)?;
        let theirs: Vec<W> = recv_ring(session, self.peer, 2 * m, "Beaver openings")?;
        self.counters.products += m as u64;
        Ok(beaver_products(self.me, &triples, &masked, &theirs))
    }

    /// Opens Z_2^64 shares to both parties: one round.
    ///
    /// # Errors
    /// Transport failures; the peer's malformed shares.
    pub fn open_many_z64(
        &mut self,
        session: &mut Session,
        xs: &[Z64],
    ) -> Result<Vec<Z64>, TwopcError> {
        if xs.is_empty() {
            return Ok(Vec::new());
        }
        send_ring(session, self.peer, xs)?;
        let theirs: Vec<Z64> = recv_ring(session, self.peer, xs.len(), "opened shares")?;
        Ok(xs.iter().zip(&theirs).map(|(&a, &b)| a + b).collect())
    }

    /// Opens the values to both parties: one round.
    ///
    /// # Errors
    /// Transport failures; the peer's malformed shares.
    pub fn open_many(
        &mut self,
        session: &mut Session,
        xs: &[Share],
    ) -> Result<Vec<Fp>, TwopcError> {
        if xs.is_empty() {
            return Ok(Vec::new());
        }
        let mine: Vec<Fp> = xs.iter().map(|s| s.0).collect();
        send_ring(session, self.peer, &mine)?;
        let theirs: Vec<Fp> = recv_ring(session, self.peer, xs.len(), "opened shares")?;
        Ok(mine.iter().zip(&theirs).map(|(&a, &b)| a + b).collect())
    }

    /// Opens the values to `receiver` alone: the other party sends its shares (one message);
    /// the receiver gets `Some(values)`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `receiver` is not one of the two parties; transport
    /// failures; the peer's malformed shares.
    pub fn open_to(
        &mut self,
        session: &mut Session,
        receiver: PartyId,
        xs: &[Share],
    ) -> Result<Option<Vec<Fp>>, TwopcError> {
        if receiver != self.me && receiver != self.peer {
            return Err(TwopcError::ApiMisuse(
                "the receiver must be one of the two parties",
            ));
        }
        let mine: Vec<Fp> = xs.iter().map(|s| s.0).collect();
        if receiver == self.me {
            let theirs: Vec<Fp> = recv_ring(session, self.peer, xs.len(), "output shares")?;
            Ok(Some(
                mine.iter().zip(&theirs).map(|(&a, &b)| a + b).collect(),
            ))
        } else {
            send_ring(session, self.peer, &mine)?;
            Ok(None)
        }
    }

    /// \[a < b\] for each pair of `k`-bit integers (0 ≤ a, b < 2^k, 1 ≤ k ≤ 120), as shares
    /// of 0 or 1: a garbled circuit on the shares, then one product (see the
    /// [module documentation](self)).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for k outside 1..=120 (before anything is sent); transport
    /// failures; the peer's malformed messages.
    pub fn lt_many(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<Share>, TwopcError> {
        Ok(shares(self.lt_many_dual(session, pairs, k)?))
    }

    /// [`lt_many`](Arith2::lt_many) with each result in both forms.
    ///
    /// # Errors
    /// As [`lt_many`](Arith2::lt_many).
    pub fn lt_many_dual(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<DualBit>, TwopcError> {
        self.compare(session, pairs, k, [true, false])
    }

    /// \[a = b\] for each pair of `k`-bit integers, as [`lt_many`](Arith2::lt_many) with
    /// the equality of the low k bits of z as the circuit's output.
    ///
    /// # Errors
    /// As [`lt_many`](Arith2::lt_many).
    pub fn eq_many(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<Share>, TwopcError> {
        Ok(shares(self.eq_many_dual(session, pairs, k)?))
    }

    /// [`eq_many`](Arith2::eq_many) with each result in both forms.
    ///
    /// # Errors
    /// As [`lt_many`](Arith2::lt_many).
    pub fn eq_many_dual(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<DualBit>, TwopcError> {
        self.compare(session, pairs, k, [false, true])
    }

    /// (\[a < b\], \[a = b\]) for each pair of `k`-bit integers: one circuit with both
    /// outputs, then one product per output.
    ///
    /// # Errors
    /// As [`lt_many`](Arith2::lt_many).
    pub fn cmp_many(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<(Share, Share)>, TwopcError> {
        let both = self.cmp_many_dual(session, pairs, k)?;
        Ok(both.into_iter().map(|(l, e)| (l.add, e.add)).collect())
    }

    /// [`cmp_many`](Arith2::cmp_many) with each result in both forms.
    ///
    /// # Errors
    /// As [`lt_many`](Arith2::lt_many).
    pub fn cmp_many_dual(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<(DualBit, DualBit)>, TwopcError> {
        let both = self.compare(session, pairs, k, [true, true])?;
        Ok(both.chunks_exact(2).map(|c| (c[0], c[1])).collect())
    }

    /// `b ? x : y` for bits in both forms: y + b·(x − y), where b·d for d = d₀ + d₁ is
    /// b·d₀ + b·d₁ and each term is one oblivious transfer on the XOR shares of b (the
    /// holder of dᵢ sends (xᵢ ⊕ c)·dᵢ − r for c = 0, 1; the other chooses with its x). Two
    /// OTs per select, no triple.
    ///
    /// # Errors
    /// Transport failures; the peer's malformed messages.
    pub fn select_dual_many(
        &mut self,
        session: &mut Session,
        triples: &[(DualBit, Share, Share)],
    ) -> Result<Vec<Share>, TwopcError> {
        let bits: Vec<bool> = triples.iter().map(|t| t.0.xor).collect();
        let d: Vec<Fp> = triples.iter().map(|&(_, x, y)| (x - y).0).collect();
        let prod = self.xor_bit_products(session, &bits, &d)?;
        Ok(prod
            .into_iter()
            .zip(triples)
            .map(|(p, t)| t.2 + p)
            .collect())
    }

    /// Shares of b·d for XOR-shared bits b and additively shared d: one OT with this party as
    /// sender for its own dᵢ, one as receiver for the peer's (`P0` sends first).
    fn xor_bit_products(
        &mut self,
        session: &mut Session,
        bits: &[bool],
        d: &[Fp],
    ) -> Result<Vec<Share>, TwopcError> {
        if bits.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = vec![Share::default(); bits.len()];
        let order = if self.me == PartyId::P0 {
            [true, false]
        } else {
            [false, true]
        };
        for send in order {
            if send {
                let mut inputs = Vec::with_capacity(bits.len());
                for ((&x, &di), o) in bits.iter().zip(d).zip(out.iter_mut()) {
                    let r = Fp::random(&mut self.rng);
                    let m = |c: bool| if x ^ c { di - r } else { Fp::ZERO - r };
                    inputs.push([m(false).to_u128(), m(true).to_u128()]);
                    o.0 += r;
                }
                ot_send(session, &mut self.sender, &inputs)?;
            } else {
                let got = ot_receive(session, &mut self.receiver, bits, &mut self.rng)?;
                for (g, o) in got.into_iter().zip(out.iter_mut()) {
                    o.0 += Fp::from_canonical(g).ok_or_else(|| {
                        PeerFault::malformed(self.peer, "bit products", "a value not below p")
                    })?;
                }
            }
        }
        Ok(out)
    }

    /// The one-hot vector (\[x = j\])_{j < len} of each `k`-bit x (0 ≤ x < 2^k, 1 ≤ k ≤ 20,
    /// len ≤ 2^k): one circuit adds the shares mod p and decodes the low k bits, whose `len`
    /// outputs stay labels (XOR shares), then one product per output makes them additive. A
    /// value of 2^k or more gives an unspecified vector.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for k or len out of range (before anything is sent);
    /// transport failures; the peer's malformed messages.
    pub fn onehot_many(
        &mut self,
        session: &mut Session,
        xs: &[Share],
        k: u32,
        len: usize,
    ) -> Result<Vec<Vec<Share>>, TwopcError> {
        if k == 0 || k > 20 || len == 0 || len > 1 << k {
            return Err(TwopcError::ApiMisuse(
                "one-hot vectors need 1 ≤ k ≤ 20 and 1 ≤ len ≤ 2^k",
            ));
        }
        if xs.is_empty() {
            return Ok(Vec::new());
        }
        let raw: Vec<Fp> = xs.iter().map(|s| s.0).collect();
        let shape = Shape::Onehot { k: k as usize, len };
        let xor = self.garbled_bits(session, shape, &raw)?;
        let flat = self.bits_to_shares(session, &xor)?;
        Ok(flat.chunks_exact(len).map(<[Share]>::to_vec).collect())
    }

    /// The two OT extensions (this party as sender, and as receiver), for protocols that run
    /// beside the engine on the same session (a shuffle).
    pub fn ots_mut(&mut self) -> (&mut SoftSpokenSender, &mut SoftSpokenReceiver) {
        (&mut self.sender, &mut self.receiver)
    }

    /// `b ? x : y` = y + b·(x − y) for shared bits b: one product round.
    ///
    /// # Errors
    /// As [`mul_many`](Arith2::mul_many).
    pub fn select_many(
        &mut self,
        session: &mut Session,
        triples: &[(Share, Share, Share)],
    ) -> Result<Vec<Share>, TwopcError> {
        let pairs: Vec<(Share, Share)> = triples.iter().map(|&(b, x, y)| (b, x - y)).collect();
        let p = self.mul_many(session, &pairs)?;
        Ok(p.into_iter().zip(triples).map(|(p, t)| t.2 + p).collect())
    }

    /// The comparisons `want` = \[lt, eq\] asks for, per pair in that order.
    fn compare(
        &mut self,
        session: &mut Session,
        pairs: &[(Share, Share)],
        k: u32,
        want: [bool; 2],
    ) -> Result<Vec<DualBit>, TwopcError> {
        if k == 0 || k > 120 {
            return Err(TwopcError::ApiMisuse(
                "comparison bit length must be in 1..=120",
            ));
        }
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let two_k = Fp::from_u128(1u128 << k);
        let z: Vec<Fp> = pairs
            .iter()
            .map(|&(a, b)| (a - b).add_public(two_k, self.me).0)
            .collect();
        let shape = Shape::Compare {
            k: k as usize,
            want,
        };
        let xor = self.garbled_bits(session, shape, &z)?;
        let add = self.bits_to_shares(session, &xor)?;
        Ok(add
            .into_iter()
            .zip(xor)
            .map(|(add, xor)| DualBit { add, xor })
            .collect())
    }

    /// Runs `circuit` (garbler inputs: `P0`'s values' bits, evaluator inputs: `P1`'s) on this
    /// party's `values` and returns its XOR shares of the outputs.
    fn garbled_bits(
        &mut self,
        session: &mut Session,
        shape: Shape,
        values: &[Fp],
    ) -> Result<Vec<bool>, TwopcError> {
        let inputs = self.share_bit_labels(session, values)?;
        let (g, e) = inputs.split_at(128 * values.len());
        let labels = self.run_items(session, shape, g, e)?;
        Ok(labels.iter().map(|&l| l & 1 == 1).collect())
    }

    /// Runs `shape` over the items whose garbler inputs are `g` and other inputs `e` (128 labels
    /// per item each) and returns the outputs, item after item. The items go through cached
    /// circuits of 256, 128, …, 1 items (the binary digits of their number), so that a batch
    /// builds no circuit of its own.
    fn run_items(
        &mut self,
        session: &mut Session,
        shape: Shape,
        g: &[Block],
        e: &[Block],
    ) -> Result<Vec<Block>, TwopcError> {
        let m = g.len() / 128;
        let mut out = Vec::new();
        let mut done = 0;
        while done < m {
            let left = m - done;
            let chunk = if left >= MAX_ITEMS_PER_CIRCUIT {
                MAX_ITEMS_PER_CIRCUIT
            } else {
                1 << left.ilog2()
            };
            let circuit = match self.cache.get(&(shape, chunk)) {
                Some(c) => Arc::clone(c),
                None => {
                    let c = Arc::new(shape.build(chunk)?);
                    self.cache.insert((shape, chunk), Arc::clone(&c));
                    c
                }
            };
            let range = 128 * done..128 * (done + chunk);
            let mut inputs = Vec::with_capacity(256 * chunk);
            inputs.extend_from_slice(&g[range.clone()]);
            inputs.extend_from_slice(&e[range]);
            out.extend(self.run_circuit(session, &circuit, &inputs)?);
            done += chunk;
        }
        Ok(out)
    }

    /// The labels of both parties' shares' bits (128 per share, least significant first):
    /// `P0`'s shares' labels, then `P1`'s, as a circuit built with `P0`'s words as garbler
    /// inputs and `P1`'s as evaluator inputs takes them. `P0` sends the active labels of its
    /// bits (16 bytes per bit), `P1`'s come by correlated OT. Zero labels at `P0`, active
    /// labels at `P1`.
    ///
    /// # Errors
    /// Transport failures; the peer's malformed messages.
    pub fn share_bit_labels(
        &mut self,
        session: &mut Session,
        values: &[Fp],
    ) -> Result<Vec<Block>, TwopcError> {
        let bits = value_bits(values);
        let n = bits.len();
        let mut inputs = self.p0_labels(session, (self.me == PartyId::P0).then_some(&bits), n)?;
        if self.me == PartyId::P0 {
            inputs.extend_from_slice(&cot_send(session, &mut self.sender, n)?.q);
        } else {
            inputs.extend_from_slice(&cot_receive(session, &mut self.receiver, &bits)?.t);
        }
        Ok(inputs)
    }

    /// Labels of `n` bits `P0` holds (it passes `Some(bits)`): it draws their zero labels and
    /// sends the active ones, 16 bytes per bit.
    fn p0_labels(
        &mut self,
        session: &mut Session,
        bits: Option<&Vec<bool>>,
        n: usize,
    ) -> Result<Vec<Block>, TwopcError> {
        if let Some(bits) = bits {
            let delta = self.sender.delta();
            let zero: Vec<Block> = (0..n).map(|_| self.rng.next_u128()).collect();
            let active: Vec<u8> = zero
                .iter()
                .zip(bits)
                .flat_map(|(&z, &b)| (if b { z ^ delta } else { z }).to_le_bytes())
                .collect();
            for chunk in active.chunks(LABELS_PER_MSG * 16) {
                session.send_bytes(self.peer, chunk)?;
            }
            Ok(zero)
        } else {
            let mut labels = Vec::with_capacity(n);
            for start in (0..n).step_by(LABELS_PER_MSG) {
                let len = (n - start).min(LABELS_PER_MSG);
                let bytes = session.recv_bytes(self.peer)?;
                doram_core::wire::exact_len(self.peer, "garbler input labels", &bytes, 16 * len)?;
                labels.extend(bytes.chunks_exact(16).map(|c| {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(c);
                    Block::from_le_bytes(b)
                }));
            }
            Ok(labels)
        }
    }

    /// Garbles (`P0`) or evaluates (`P1`) `circuit` on the labels `inputs` (zero labels at
    /// `P0`, active at `P1`) and returns its outputs' labels, which stay secret-shared: their
    /// lsbs are XOR shares of the values. One message of tables from `P0`.
    ///
    /// # Errors
    /// [`TwopcError::LengthMismatch`] for inputs that do not fit; transport failures; the
    /// peer's tables of the wrong size.
    pub fn run_circuit(
        &mut self,
        session: &mut Session,
        circuit: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, TwopcError> {
        match &mut self.circuits {
            CircuitSide::Garbler(g) => garble_on_labels(session, g, circuit, inputs),
            CircuitSide::Evaluator(e) => evaluate_on_labels(session, e, circuit, inputs),
        }
    }

    /// The labels of public bits: the constant 0's label for a 0, and for a 1 that label
    /// shifted by Δ at `P0` (the zero label of a wire whose active label is the constant 0's).
    pub fn public_labels(&self, bits: &[bool]) -> Vec<Block> {
        let shift = match &self.circuits {
            CircuitSide::Garbler(g) => g.delta(),
            CircuitSide::Evaluator(_) => 0,
        };
        bits.iter()
            .map(|&b| if b { self.zero ^ shift } else { self.zero })
            .collect()
    }

    /// The low `bits` bits of each shared value (A2B), as labels for later circuits
    /// ([`run_circuit`](Arith2::run_circuit)): one circuit that adds the shares mod p,
    /// `bits` labels per value, least significant first.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for `bits` above 128; as
    /// [`share_bit_labels`](Arith2::share_bit_labels).
    pub fn to_labels(
        &mut self,
        session: &mut Session,
        values: &[Share],
        bits: usize,
    ) -> Result<Vec<Block>, TwopcError> {
        if bits > 128 {
            return Err(TwopcError::ApiMisuse("a value has at most 128 bits"));
        }
        if values.is_empty() || bits == 0 {
            return Ok(Vec::new());
        }
        let raw: Vec<Fp> = values.iter().map(|s| s.0).collect();
        let inputs = self.share_bit_labels(session, &raw)?;
        let (g, e) = inputs.split_at(128 * values.len());
        self.run_items(session, Shape::SumBits { bits }, g, e)
    }

    /// Shares of values held as labels (B2A): `labels` has 128 per value, each the bits of an
    /// element of F_p (below p), least significant first. `P0` draws its share r and inputs
    /// it; one circuit computes v − r mod p, which `P0` decodes to `P1` alone (its permute
    /// bits, 16 bytes per value).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] unless `labels` holds whole values; transport failures; the
    /// peer's malformed messages, or a decoded value that is not below p.
    pub fn from_labels(
        &mut self,
        session: &mut Session,
        labels: &[Block],
    ) -> Result<Vec<Share>, TwopcError> {
        if !labels.len().is_multiple_of(128) {
            return Err(TwopcError::ApiMisuse("labels of whole 128-bit values"));
        }
        let m = labels.len() / 128;
        if m == 0 {
            return Ok(Vec::new());
        }
        let r: Vec<Fp> = if self.me == PartyId::P0 {
            (0..m).map(|_| Fp::random(&mut self.rng)).collect()
        } else {
            vec![Fp::ZERO; m]
        };
        let r_bits = value_bits(&r);
        let r_labels = self.p0_labels(
            session,
            (self.me == PartyId::P0).then_some(&r_bits),
            128 * m,
        )?;
        let out = self.run_items(session, Shape::Difference, &r_labels, labels)?;
        if self.me == PartyId::P0 {
            session.send_bytes(self.peer, &pack_lsbs(&out))?;
            Ok(r.into_iter().map(Share).collect())
        } else {
            let theirs = session.recv_bytes(self.peer)?;
            doram_core::wire::exact_len(self.peer, "decoding bits", &theirs, 16 * m)?;
            let mut shares = Vec::with_capacity(m);
            for (j, chunk) in out.chunks_exact(128).enumerate() {
                let mut v = 0u128;
                for (k, &w) in chunk.iter().enumerate() {
                    let bit = (w & 1) as u8 ^ ((theirs[16 * j + k / 8] >> (k % 8)) & 1);
                    v |= u128::from(bit) << k;
                }
                let x = Fp::from_canonical(v).ok_or_else(|| {
                    PeerFault::malformed(self.peer, "decoding bits", "a value not below p")
                })?;
                shares.push(Share(x));
            }
            Ok(shares)
        }
    }

    /// XOR-shared bits u = u₀ ⊕ u₁ as additive shares: one OT each (`P0` sends
    /// (u₀ ⊕ c) − r for c = 0, 1 and keeps r; `P1` chooses with u₁).
    fn bits_to_shares(
        &mut self,
        session: &mut Session,
        xor: &[bool],
    ) -> Result<Vec<Share>, TwopcError> {
        if xor.is_empty() {
            return Ok(Vec::new());
        }
        if self.me == PartyId::P0 {
            let mut mine = Vec::with_capacity(xor.len());
            let inputs: Vec<[Block; 2]> = xor
                .iter()
                .map(|&u| {
                    let r = Fp::random(&mut self.rng);
                    mine.push(Share(r));
                    let m = |c: bool| Fp::from_u64(u64::from(u ^ c)) - r;
                    [m(false).to_u128(), m(true).to_u128()]
                })
                .collect();
            ot_send(session, &mut self.sender, &inputs)?;
            Ok(mine)
        } else {
            let got = ot_receive(session, &mut self.receiver, xor, &mut self.rng)?;
            got.into_iter()
                .map(|g| {
                    Fp::from_canonical(g).map(Share).ok_or_else(|| {
                        PeerFault::malformed(self.peer, "bit conversion", "a value not below p")
                            .into()
                    })
                })
                .collect()
        }
    }
}

/// The additive shares of dual bits.
fn shares(bits: Vec<DualBit>) -> Vec<Share> {
    bits.into_iter().map(|b| b.add).collect()
}

/// Garbler input labels per message (1 MiB).
const LABELS_PER_MSG: usize = 1 << 16;

/// The 128 bits of each value, least significant first.
fn value_bits(values: &[Fp]) -> Vec<bool> {
    values
        .iter()
        .flat_map(|x| {
            let v = x.to_u128();
            (0..128).map(move |j| (v >> j) & 1 == 1)
        })
        .collect()
}

/// The permute bits of `labels`, packed little-endian.
fn pack_lsbs(labels: &[Block]) -> Vec<u8> {
    labels
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (k, &w)| acc | (((w & 1) as u8) << k))
        })
        .collect()
}

/// z₀ + z₁ mod p of two words below p, bit by bit on demand: the sum, the sum minus p, and
/// whether to reduce. Each bit asked for costs one multiplexer, so a circuit that needs a few
/// bits of the result pays for those only.
struct SumModP {
    sum: Word<128>,
    diff: Word<128>,
    reduce: Bit,
}

impl SumModP {
    fn new(b: &mut Builder, x: &Word<128>, y: &Word<128>) -> SumModP {
        let p = Word::<128>::constant(Fp::MODULUS);
        let (sum, carry) = b.add_with_carry(x, y, Bit::ZERO);
        let ge = b.ge(&sum, &p);
        let reduce = b.or(carry, ge);
        let diff = b.sub(&sum, &p);
        SumModP { sum, diff, reduce }
    }

    /// Bit `j` of the sum mod p.
    fn bit(&self, b: &mut Builder, j: usize) -> Bit {
        b.mux_bit(self.reduce, self.sum.bits()[j], self.diff.bits()[j])
    }

    /// The low `k` bits of the sum mod p.
    fn low(&self, b: &mut Builder, k: usize) -> Vec<Bit> {
        (0..k).map(|j| self.bit(b, j)).collect()
    }
}

/// A2B for `m` values: garbler words z₀, evaluator words z₁; outputs the low `bits` bits of
/// each z₀ + z₁ mod p.
fn sum_bits_circuit(m: usize, bits: usize) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let z0: Vec<Word<128>> = (0..m).map(|_| b.garbler_word::<128>()).collect();
    let z1: Vec<Word<128>> = (0..m).map(|_| b.evaluator_word::<128>()).collect();
    for (x, y) in z0.iter().zip(&z1) {
        let z = SumModP::new(&mut b, x, y);
        let out = z.low(&mut b, bits);
        b.output_bits(&out);
    }
    Ok(compact_wires(&b.finish()?))
}

/// One-hot vectors for `m` values: per value, the low `k` bits of z₀ + z₁ mod p decoded to
/// `len` outputs \[z = j\] (a tree of ANDs, 2 per output and level pair).
fn onehot_circuit(m: usize, k: usize, len: usize) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let z0: Vec<Word<128>> = (0..m).map(|_| b.garbler_word::<128>()).collect();
    let z1: Vec<Word<128>> = (0..m).map(|_| b.evaluator_word::<128>()).collect();
    for (x, y) in z0.iter().zip(&z1) {
        let z = SumModP::new(&mut b, x, y).low(&mut b, k);
        // Decode from the most significant bit, keeping only prefixes of indices below len.
        let mut level = vec![Bit::ONE];
        for d in (0..k).rev() {
            let bit = z[d];
            let nb = b.not(bit);
            let width = len.div_ceil(1 << d);
            let mut next = Vec::with_capacity(width);
            for (j, &e) in level.iter().enumerate() {
                if 2 * j < width {
                    next.push(b.and(e, nb));
                }
                if 2 * j + 1 < width {
                    next.push(b.and(e, bit));
                }
            }
            level = next;
        }
        level.truncate(len);
        b.output_bits(&level);
    }
    Ok(compact_wires(&b.finish()?))
}

/// B2A for `m` values: garbler words r, then the values v (below p) as the circuit's other
/// inputs; outputs v − r mod p.
fn difference_circuit(m: usize) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let r: Vec<Word<128>> = (0..m).map(|_| b.garbler_word::<128>()).collect();
    let v: Vec<Word<128>> = (0..m).map(|_| b.evaluator_word::<128>()).collect();
    let p = Word::<128>::constant(Fp::MODULUS);
    for (r, v) in r.iter().zip(&v) {
        let borrow = b.lt(v, r);
        let d = b.sub(v, r);
        let wrapped = b.add(&d, &p);
        let out: Vec<Bit> = (0..128)
            .map(|j| b.mux_bit(borrow, d.bits()[j], wrapped.bits()[j]))
            .collect();
        b.output_bits(&out);
    }
    Ok(compact_wires(&b.finish()?))
}

/// The comparison circuit for `m` pairs: garbler inputs z₀ (128 bits each), evaluator inputs
/// z₁; per pair, with z = z₀ + z₁ mod p, the outputs `want` asks for: 1 − bit k of z (a < b),
/// then whether z's low k bits are all 0 (a = b).
fn compare_circuit(m: usize, k: usize, want: [bool; 2]) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let z0: Vec<Word<128>> = (0..m).map(|_| b.garbler_word::<128>()).collect();
    let z1: Vec<Word<128>> = (0..m).map(|_| b.evaluator_word::<128>()).collect();
    for (x, y) in z0.iter().zip(&z1) {
        let z = SumModP::new(&mut b, x, y);
        if want[0] {
            let top = z.bit(&mut b, k);
            let lt = b.not(top);
            b.output(lt);
        }
        if want[1] {
            let low = z.low(&mut b, k);
            let any = b.or_all(&low);
            let eq = b.not(any);
            b.output(eq);
        }
    }
    Ok(compact_wires(&b.finish()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_circuit_size() {
        let c = compare_circuit(1, 46, [true, false]).unwrap();
        // The adder, the comparison with p and the subtraction's borrows up to bit k.
        assert!(c.and_gates() <= 400, "{}", c.and_gates());
        assert_eq!(
            compare_circuit(3, 46, [true, false]).unwrap().and_gates(),
            3 * c.and_gates()
        );
    }
}
