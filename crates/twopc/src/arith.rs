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
//!   the garbling Δ. A Beaver product turns the XOR shares into additive ones. 383 AND gates
//!   at k = 46 (12 KiB of half-gates tables) and 256 input labels per comparison.
//!
//! Semi-honest, as the OT extension and the triples. Message sizes depend only on the batch
//! sizes.

use std::collections::VecDeque;
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_net::Session;
use doram_prim::aes::Block;
use doram_prim::prg::AesPrg;
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::builder::{Bit, Builder, Word};
use crate::driver::{
    cot_receive, cot_send, evaluate_on_labels, garble_on_labels, peer, softspoken_both_setup,
};
use crate::gc::{Circuit, Evaluator, Garbler};
use crate::softspoken::{ChunkBits, SoftSpokenReceiver, SoftSpokenSender};
use crate::triples::{fp_triples, recv_fps, send_fps};

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

/// One Beaver triple's shares.
#[derive(Clone, Copy)]
struct Triple {
    a: Fp,
    b: Fp,
    c: Fp,
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
    pool: VecDeque<Triple>,
    counters: Counters,
}

impl core::fmt::Debug for Arith2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Arith2({}, {} triples pooled)", self.me, self.pool.len())
    }
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
        Ok(Arith2 {
            me,
            peer: other,
            sender,
            receiver,
            common: AesPrg::new(Seed(common)),
            rng: AesPrg::new(Seed::random(rng)),
            pool: VecDeque::new(),
            counters: Counters::default(),
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
        let t = fp_triples(
            session,
            &mut self.sender,
            &mut self.receiver,
            count,
            &mut self.rng,
        )?;
        self.counters.triples_made += count as u64;
        self.pool.extend((0..count).map(|i| Triple {
            a: t.a[i],
            b: t.b[i],
            c: t.c[i],
        }));
        Ok(())
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
        let m = pairs.len();
        if m == 0 {
            return Ok(Vec::new());
        }
        if self.pool.len() < m {
            self.counters.inline_refills += 1;
            let missing = m - self.pool.len();
            self.preprocess(session, missing)?;
        }
        let triples: Vec<Triple> = self.pool.drain(..m).collect();
        // [Beaver] d = x − a and e = y − b, opened in one round.
        let mut masked = Vec::with_capacity(2 * m);
        for (&(x, y), t) in pairs.iter().zip(&triples) {
            masked.push(x.0 - t.a);
            masked.push(y.0 - t.b);
        }
        send_fps(session, self.peer, &masked)?;
        let theirs = recv_fps(session, self.peer, 2 * m, "Beaver openings")?;
        self.counters.products += m as u64;
        Ok(triples
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let d = masked[2 * i] + theirs[2 * i];
                let e = masked[2 * i + 1] + theirs[2 * i + 1];
                let mut z = t.c + d * t.b + e * t.a;
                if self.me == PartyId::P0 {
                    z += d * e;
                }
                Share(z)
            })
            .collect())
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
        send_fps(session, self.peer, &mine)?;
        let theirs = recv_fps(session, self.peer, xs.len(), "opened shares")?;
        Ok(mine.iter().zip(&theirs).map(|(&a, &b)| a + b).collect())
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
        self.compare(session, pairs, k, [false, true])
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
    ) -> Result<Vec<Share>, TwopcError> {
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
        let circuit = compare_circuit(pairs.len(), k as usize, want)?;
        let xor = self.garbled_bits(session, &circuit, &z)?;
        self.bits_to_shares(session, &xor)
    }

    /// Runs `circuit` (garbler inputs: `P0`'s values' bits, evaluator inputs: `P1`'s) on this
    /// party's `values` and returns its XOR shares of the outputs.
    fn garbled_bits(
        &mut self,
        session: &mut Session,
        circuit: &Circuit,
        values: &[Fp],
    ) -> Result<Vec<bool>, TwopcError> {
        let bits: Vec<bool> = values
            .iter()
            .flat_map(|x| {
                let v = x.to_u128();
                (0..128).map(move |j| (v >> j) & 1 == 1)
            })
            .collect();
        let n = bits.len();
        let labels = if self.me == PartyId::P0 {
            let delta = self.sender.delta();
            let zero: Vec<Block> = (0..n).map(|_| self.rng.next_u128()).collect();
            let active: Vec<u8> = zero
                .iter()
                .zip(&bits)
                .flat_map(|(&z, &b)| (if b { z ^ delta } else { z }).to_le_bytes())
                .collect();
            for chunk in active.chunks(LABELS_PER_MSG * 16) {
                session.send_bytes(self.peer, chunk)?;
            }
            let theirs = cot_send(session, &mut self.sender, n)?;
            let mut inputs = zero;
            inputs.extend_from_slice(&theirs.q);
            let mut g = Garbler::new(delta, circuit.wires())?;
            garble_on_labels(session, &mut g, circuit, &inputs)?
        } else {
            let mut inputs = Vec::with_capacity(2 * n);
            for start in (0..n).step_by(LABELS_PER_MSG) {
                let len = (n - start).min(LABELS_PER_MSG);
                let bytes = session.recv_bytes(self.peer)?;
                doram_core::wire::exact_len(self.peer, "garbler input labels", &bytes, 16 * len)?;
                inputs.extend(bytes.chunks_exact(16).map(|c| {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(c);
                    Block::from_le_bytes(b)
                }));
            }
            let mine = cot_receive(session, &mut self.receiver, &bits)?;
            inputs.extend_from_slice(&mine.t);
            let mut e = Evaluator::new(circuit.wires());
            evaluate_on_labels(session, &mut e, circuit, &inputs)?
        };
        Ok(labels.iter().map(|&l| l & 1 == 1).collect())
    }

    /// XOR-shared bits u = u₀ ⊕ u₁ as additive shares: u₀ + u₁ − 2·u₀·u₁, one product.
    fn bits_to_shares(
        &mut self,
        session: &mut Session,
        xor: &[bool],
    ) -> Result<Vec<Share>, TwopcError> {
        let mine: Vec<Fp> = xor.iter().map(|&b| Fp::from_u64(u64::from(b))).collect();
        let m = xor.len();
        let p0 = (self.me == PartyId::P0).then_some(&mine[..]);
        let p1 = (self.me == PartyId::P1).then_some(&mine[..]);
        let u0 = self.input(PartyId::P0, p0, m)?;
        let u1 = self.input(PartyId::P1, p1, m)?;
        let pairs: Vec<(Share, Share)> = u0.iter().copied().zip(u1.iter().copied()).collect();
        let prod = self.mul_many(session, &pairs)?;
        Ok((0..m)
            .map(|i| u0[i] + u1[i] - prod[i] * Fp::from_u64(2))
            .collect())
    }
}

/// Garbler input labels per message (1 MiB).
const LABELS_PER_MSG: usize = 1 << 16;

/// The comparison circuit for `m` pairs: garbler inputs z₀ (128 bits each), evaluator inputs
/// z₁; per pair, with z = z₀ + z₁ mod p, the outputs `want` asks for: 1 − bit k of z (a < b),
/// then whether z's low k bits are all 0 (a = b).
fn compare_circuit(m: usize, k: usize, want: [bool; 2]) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let z0: Vec<Word<128>> = (0..m).map(|_| b.garbler_word::<128>()).collect();
    let z1: Vec<Word<128>> = (0..m).map(|_| b.evaluator_word::<128>()).collect();
    let p = Word::<128>::constant(Fp::MODULUS);
    for (x, y) in z0.iter().zip(&z1) {
        let (sum, carry) = b.add_with_carry(x, y, Bit::ZERO);
        let ge = b.ge(&sum, &p);
        let reduce = b.or(carry, ge);
        let diff = b.sub(&sum, &p);
        let mut bit = |j: usize| b.mux_bit(reduce, sum.bits()[j], diff.bits()[j]);
        let top = want[0].then(|| bit(k));
        let low: Vec<Bit> = if want[1] {
            (0..k).map(bit).collect()
        } else {
            Vec::new()
        };
        if let Some(t) = top {
            let lt = b.not(t);
            b.output(lt);
        }
        if want[1] {
            let any = b.or_all(&low);
            let eq = b.not(any);
            b.output(eq);
        }
    }
    b.finish()
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
