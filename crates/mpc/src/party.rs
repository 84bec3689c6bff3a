//! [`Party`]: one party's I/O-free three-party engine — its id, the PRGs it shares with each
//! neighbour, and a local PRG — with every operation as a local function or a round function;
//! and [`Setup`], the round that creates it.
//!
//! # Lockstep
//! Every operation that draws correlated randomness advances the pairwise PRG streams, and the
//! two ends of each stream must advance it identically. All three parties must therefore call
//! the same operations, with the same batch lengths, element types and dealers/receivers, in the
//! same order — as any SPMD protocol does. Each method says which streams it advances.

use doram_core::{PartyId, Seed};
use doram_field::{Group, Ring};
use doram_prim::{AesPrg, PairwisePrgs, PairwiseSeeds};

use crate::error::{MpcError, same_len};
use crate::msgs::{Expected, MsgKind, Outgoing};
use crate::rounds::local_product;
use crate::rounds::{InputRound, InputState, OpenRound, OpenToRound, ProductRound, Rereplicate};
use crate::share::{Additive, Replicated};

/// Number of parties of the engine.
pub const N_PARTIES: usize = 3;

/// A round start: the pending round and the messages to send before waiting for it.
pub type Start<R, F> = (R, Vec<Outgoing<F>>);

/// Who shares an input, and what.
#[derive(Clone, Copy)]
pub enum Input<'a, F> {
    /// This party is the dealer and shares these values.
    Own(&'a [F]),
    /// Party `dealer` (another party) shares `count` values.
    Peer {
        /// The dealer.
        dealer: PartyId,
        /// How many values it shares.
        count: usize,
    },
}

impl<F> core::fmt::Debug for Input<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Input::Own(v) => write!(f, "Input::Own(len = {})", v.len()),
            Input::Peer { dealer, count } => {
                write!(f, "Input::Peer {{ dealer: {dealer}, count: {count} }}")
            }
        }
    }
}

/// Setup of the pairwise PRG seeds (Ramen Fig. 9, Init: "parties sample pairwise PRG seeds";
/// F_Zero, Fig. 25, is built on them). Each party sends a fresh 16-byte seed to both
/// neighbours, and each pair derives its PRG seed from both contributions ([`PairwiseSeeds`]),
/// so neither member chooses it alone. One round; 16 bytes to each neighbour.
#[derive(Debug)]
pub struct Setup {
    me: PartyId,
    master: AesPrg,
    sent: [Option<Seed>; PartyId::MAX_PARTIES],
}

/// One seed contribution of [`Setup`]: `P_i → to` ([`MsgKind::SetupSeed`], 16 bytes).
#[derive(Clone, Copy, Debug)]
pub struct SeedMsg {
    /// The receiver.
    pub to: PartyId,
    /// The contribution.
    pub seed: Seed,
}

impl Setup {
    /// Starts the setup of party `me` in a session of `n_parties` parties with the local `seed`
    /// (all of this party's randomness derives from it). Returns the two seed messages, to the
    /// successor and to the predecessor.
    ///
    /// # Errors
    /// [`MpcError::WrongPartyCount`] unless `n_parties == 3` and `me` is one of them.
    pub fn start(
        me: PartyId,
        n_parties: usize,
        seed: Seed,
    ) -> Result<(Setup, [SeedMsg; 2]), MpcError> {
        if n_parties != N_PARTIES || me.index() >= N_PARTIES {
            return Err(MpcError::WrongPartyCount { n_parties });
        }
        let mut master = AesPrg::new(seed);
        let sent = PairwiseSeeds::sample_outgoing(me, N_PARTIES, &mut master);
        let msg = |to: PartyId| -> Result<SeedMsg, MpcError> {
            let seed = sent[to.index()].ok_or(MpcError::ApiMisuse("no seed for a neighbour"))?;
            Ok(SeedMsg { to, seed })
        };
        let msgs = [msg(me.next(N_PARTIES))?, msg(me.prev(N_PARTIES))?];
        Ok((Setup { me, master, sent }, msgs))
    }

    /// The parties whose seeds [`finish`](Setup::finish) needs: successor, then predecessor.
    pub fn expected(&self) -> [PartyId; 2] {
        [self.me.next(N_PARTIES), self.me.prev(N_PARTIES)]
    }

    /// Completes the setup with the seeds received from the successor and the predecessor.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if the senders are not the two neighbours.
    pub fn finish(self, received: [(PartyId, Seed); 2]) -> Result<Party, MpcError> {
        let mut from = [None; PartyId::MAX_PARTIES];
        for (peer, seed) in received {
            if peer == self.me || peer.index() >= N_PARTIES || from[peer.index()].is_some() {
                return Err(MpcError::ApiMisuse(
                    "setup needs one seed from each of the two other parties",
                ));
            }
            from[peer.index()] = Some(seed);
        }
        let seeds =
            PairwiseSeeds::from_exchange(self.me, N_PARTIES, &self.sent, &from).map_err(|_| {
                MpcError::ApiMisuse("setup needs one seed from each of the two other parties")
            })?;
        Ok(Party {
            me: self.me,
            prgs: seeds.into_prgs(),
            local: self.master,
        })
    }
}

/// One party's state of the three-party engine, without I/O.
///
/// Local operations return their result directly; one-round operations are split into a
/// `*_start` function returning the pending round and the outgoing messages, and
/// [`Round::finish`](crate::Round::finish). [`Mpc3`](crate::Mpc3) runs them over a session.
#[derive(Debug)]
pub struct Party {
    me: PartyId,
    prgs: PairwisePrgs,
    local: AesPrg,
}

impl Party {
    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// The successor `P_{i+1}`.
    pub fn next(&self) -> PartyId {
        self.me.next(N_PARTIES)
    }

    /// The predecessor `P_{i−1}`.
    pub fn prev(&self) -> PartyId {
        self.me.prev(N_PARTIES)
    }

    /// The PRGs shared with each neighbour, for protocols that need common randomness beyond
    /// this crate's operations (see the lockstep rule in the [module docs](self)).
    pub fn pairwise(&mut self) -> &mut PairwisePrgs {
        &mut self.prgs
    }

    /// This party's private PRG.
    pub fn local_rng(&mut self) -> &mut AesPrg {
        &mut self.local
    }

    fn check_party(p: PartyId, what: &'static str) -> Result<(), MpcError> {
        if p.index() < N_PARTIES {
            Ok(())
        } else {
            Err(MpcError::ApiMisuse(what))
        }
    }

    /// A message to `to`, or nothing for an empty batch.
    fn msg<F>(to: PartyId, kind: MsgKind, elems: Vec<F>) -> Vec<Outgoing<F>> {
        if elems.is_empty() {
            Vec::new()
        } else {
            vec![Outgoing { to, kind, elems }]
        }
    }

    /// The expectation of `count` elements from `from`, or nothing for an empty batch.
    fn expect(from: PartyId, kind: MsgKind, count: usize) -> Option<Expected> {
        (count > 0).then_some(Expected { from, kind, count })
    }

    // ---------------------------------------------------------------------------------------
    // Local operations.

    /// Ramen Fig. 25 (F_Zero): `k` fresh additive sharings of 0, z_i = PRG_{i,i+1} − PRG_{i−1,i}.
    /// No communication. Advances both neighbour streams by `k` elements.
    pub fn zero<F: Group>(&mut self, k: usize) -> Vec<Additive<F>> {
        (0..k)
            .map(|_| Additive::from_share(self.prgs.zero_share()))
            .collect()
    }

    /// Fresh additive shares of the same values: ⟨x⟩ + ⟨0⟩ with ⟨0⟩ from
    /// [`zero`](Party::zero) (the "randomize additive shares" steps of Ramen Fig. 4, steps 7
    /// and 11; Fig. 5, steps 8–11; Fig. 7, steps 2–3). No communication.
    pub fn reshare<F: Group>(&mut self, x: &[Additive<F>]) -> Vec<Additive<F>> {
        let z = self.zero::<F>(x.len());
        x.iter().zip(z).map(|(&x, z)| x + z).collect()
    }

    /// `k` additive sharings of independent uniformly random values that nobody knows: each
    /// share is drawn from the local PRG. No communication; no pairwise stream advances.
    pub fn random_additive<F: Group>(&mut self, k: usize) -> Vec<Additive<F>> {
        (0..k)
            .map(|_| Additive::from_share(self.local.random()))
            .collect()
    }

    /// `k` replicated sharings of independent uniformly random values that nobody knows:
    /// x_i = PRG_{i,i+1}, so `P_i` and `P_{i+1}` both derive it. No communication. Advances
    /// both neighbour streams by `k` elements.
    pub fn random_replicated<F: Group>(&mut self, k: usize) -> Vec<Replicated<F>> {
        let (next, prev) = (self.next(), self.prev());
        let own: Vec<F> = self.prgs.with(next).expand(k);
        let from_prev: Vec<F> = self.prgs.with(prev).expand(k);
        own.into_iter()
            .zip(from_prev)
            .map(|(o, p)| Replicated::from_parts(o, p))
            .collect()
    }

    fn resolve_input<'a, F>(
        &self,
        input: Input<'a, F>,
    ) -> Result<(PartyId, usize, Option<&'a [F]>), MpcError> {
        match input {
            Input::Own(v) => Ok((self.me, v.len(), Some(v))),
            Input::Peer { dealer, .. } if dealer == self.me => Err(MpcError::ApiMisuse(
                "Input::Peer names this party; the dealer passes Input::Own",
            )),
            Input::Peer { dealer, count } => {
                Self::check_party(dealer, "the dealer is not a party of the session")?;
                Ok((dealer, count, None))
            }
        }
    }

    /// Additive input: the dealer `P_d` shares its values with no communication. `P_{d+1}`'s
    /// share is PRG_{d,d+1}, `P_{d−1}`'s is PRG_{d−1,d}, and the dealer keeps
    /// x − both. Advances the streams between the dealer and each other party by `k` elements.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if a non-dealer passes `Input::Own` or names itself as dealer.
    pub fn input_additive<F: Group>(
        &mut self,
        input: Input<'_, F>,
    ) -> Result<Vec<Additive<F>>, MpcError> {
        let (dealer, k, values) = self.resolve_input(input)?;
        let (next, prev) = (self.next(), self.prev());
        let shares = match values {
            Some(values) => {
                let to_next: Vec<F> = self.prgs.with(next).expand(k);
                let to_prev: Vec<F> = self.prgs.with(prev).expand(k);
                values
                    .iter()
                    .zip(to_next)
                    .zip(to_prev)
                    .map(|((&v, a), b)| v - a - b)
                    .collect()
            }
            None => self.prgs.with(dealer).expand(k),
        };
        Ok(Additive::from_shares(shares))
    }

    /// The local half of ⟦x⟧·⟦y⟧: additive shares of x·y, namely
    /// x_i·y_i + x_i·y_{i−1} + x_{i−1}·y_i + z_i with z from [`zero`](Party::zero).
    /// No communication (Ramen's F_MPC, Fig. 24, for f = product).
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn mul_local<F: Ring>(
        &mut self,
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        same_len("mul", x.len(), y.len())?;
        let z = self.zero::<F>(x.len());
        Ok(x.iter()
            .zip(y)
            .zip(z)
            .map(|((&a, &b), z)| local_product(a, b) + z)
            .collect())
    }

    /// Σ_i x_i·y_i as an additive share: the local cross terms of every product, summed, and
    /// one zero share for the whole sum (the mask of one output, as for one product; a share
    /// per term would mask nothing more). No communication.
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn dot_local<F: Ring>(
        &mut self,
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Additive<F>, MpcError> {
        same_len("dot", x.len(), y.len())?;
        // Σ x_own·(y_own + y_prev) + x_prev·y_own: the local products of every term, summed
        // with one reduction where the ring allows it.
        let terms = x
            .iter()
            .zip(y)
            .flat_map(|(a, b)| [(a.own(), b.own() + b.prev()), (a.prev(), b.own())]);
        let sum = F::sum_of_products(terms);
        Ok(Additive::from_share(self.prgs.zero_share()) + Additive::from_share(sum))
    }

    /// Ramen Fig. 23 (F_Select) on replicated inputs with additive output:
    /// ⟨y + flag·(x − y)⟩, which is x where flag = 1 and y where flag = 0. No communication.
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn select_local<F: Ring>(
        &mut self,
        flag: &[Replicated<F>],
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        same_len("select", flag.len(), x.len())?;
        same_len("select", x.len(), y.len())?;
        let diff: Vec<Replicated<F>> = x.iter().zip(y).map(|(&a, &b)| a - b).collect();
        let prod = self.mul_local(flag, &diff)?;
        Ok(prod
            .into_iter()
            .zip(y)
            .map(|(p, y)| p + y.to_additive())
            .collect())
    }

    // ---------------------------------------------------------------------------------------
    // One-round operations.

    /// Sends fresh additive shares c_i to `P_{i+1}`; the result is ⟦c⟧ = (c_i, c_{i−1}).
    /// The caller guarantees that `c` is already re-randomised.
    fn rereplicate<F: Group>(
        &self,
        c: Vec<Additive<F>>,
        kind: MsgKind,
    ) -> Start<Rereplicate<F>, F> {
        let k = c.len();
        // [Ramen Fig. 4, step 8] P_i → P_{i+1}: ⟨c⟩_i.
        let out = Self::msg(self.next(), kind, Additive::shares(&c));
        let expect = Self::expect(self.prev(), kind, k);
        (Rereplicate { own: c, expect }, out)
    }

    /// Ramen Fig. 4, step 8: ⟨x⟩ → ⟦x⟧. Each party re-randomises its share with F_Zero and sends
    /// it to its successor: one round, `k` elements from each party to its successor
    /// ([`MsgKind::ReplicateShares`]).
    pub fn to_replicated_start<F: Group>(&mut self, x: &[Additive<F>]) -> Start<Rereplicate<F>, F> {
        let fresh = self.reshare(x);
        self.rereplicate(fresh, MsgKind::ReplicateShares)
    }

    /// ⟦x⟧·⟦y⟧ → ⟦xy⟧: [`mul_local`](Party::mul_local), then the product shares go to the
    /// successor. One round, `k` elements from each party to its successor
    /// ([`MsgKind::ProductShares`]).
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn mul_start<F: Ring>(
        &mut self,
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Start<Rereplicate<F>, F>, MpcError> {
        let c = self.mul_local(x, y)?;
        Ok(self.rereplicate(c, MsgKind::ProductShares))
    }

    /// Ramen Fig. 23 (F_Select) with replicated inputs and output:
    /// [`select_local`](Party::select_local), then re-replication. One round, `k` elements from
    /// each party to its successor ([`MsgKind::ProductShares`]).
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn select_replicated_start<F: Ring>(
        &mut self,
        flag: &[Replicated<F>],
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Start<Rereplicate<F>, F>, MpcError> {
        let c = self.select_local(flag, x, y)?;
        Ok(self.rereplicate(c, MsgKind::ProductShares))
    }

    /// ⟨x⟩, ⟨y⟩ → ⟨x·y⟩ + ⟨offset⟩: both operands are replicated in one message, then multiplied
    /// locally.
    fn product_start<F: Ring>(
        &mut self,
        x: &[Additive<F>],
        y: &[Additive<F>],
        offset: Vec<Additive<F>>,
    ) -> Start<ProductRound<F>, F> {
        let k = x.len();
        let left = self.reshare(x);
        let right = self.reshare(y);
        let mut payload = Additive::shares(&left);
        payload.extend(right.iter().map(|r| r.share()));
        // P_i → P_{i+1}: the fresh shares ⟨x⟩_i ‖ ⟨y⟩_i.
        let out = Self::msg(self.next(), MsgKind::OperandShares, payload);
        let expect = Self::expect(self.prev(), MsgKind::OperandShares, 2 * k);
        let offset = offset
            .into_iter()
            .zip(self.zero::<F>(k))
            .map(|(o, z)| o + z)
            .collect();
        (
            ProductRound {
                left,
                right,
                offset,
                expect,
            },
            out,
        )
    }

    /// ⟨x⟩·⟨y⟩ → ⟨xy⟩ (Ramen's F_MPC, Fig. 24, for f = product, on additive shares): both
    /// operands are converted to replicated shares in one message, multiplied locally and
    /// re-randomised. One round, `2k` elements from each party to its successor
    /// ([`MsgKind::OperandShares`]).
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn mul_additive_start<F: Ring>(
        &mut self,
        x: &[Additive<F>],
        y: &[Additive<F>],
    ) -> Result<Start<ProductRound<F>, F>, MpcError> {
        same_len("mul_additive", x.len(), y.len())?;
        Ok(self.product_start(x, y, vec![Additive::ZERO; x.len()]))
    }

    /// Ramen Fig. 23 (F_Select) on additive shares: ⟨y + flag·(x − y)⟩ for a shared bit flag
    /// (x where flag = 1, y where flag = 0). ⟨flag⟩ and ⟨x − y⟩ are replicated in one message
    /// and multiplied locally. One round, `2k` elements from each party to its successor
    /// ([`MsgKind::OperandShares`]).
    ///
    /// # Errors
    /// [`MpcError::LengthMismatch`] if the operands differ in length.
    pub fn select_start<F: Ring>(
        &mut self,
        flag: &[Additive<F>],
        x: &[Additive<F>],
        y: &[Additive<F>],
    ) -> Result<Start<ProductRound<F>, F>, MpcError> {
        same_len("select", flag.len(), x.len())?;
        same_len("select", x.len(), y.len())?;
        let diff: Vec<Additive<F>> = x.iter().zip(y).map(|(&a, &b)| a - b).collect();
        Ok(self.product_start(flag, &diff, y.to_vec()))
    }

    /// Opens ⟨x⟩ to all parties: each party re-randomises its share with F_Zero (so the shares
    /// reveal nothing beyond x) and sends it to both others. One round, `k` elements to each
    /// other party ([`MsgKind::OpenAdditive`]).
    pub fn open_start<F: Group>(&mut self, x: &[Additive<F>]) -> Start<OpenRound<F>, F> {
        let k = x.len();
        let fresh = Additive::shares(&self.reshare(x));
        let (next, prev) = (self.next(), self.prev());
        let mut out = Self::msg(next, MsgKind::OpenAdditive, fresh.clone());
        out.extend(Self::msg(prev, MsgKind::OpenAdditive, fresh.clone()));
        let expect = [next, prev]
            .into_iter()
            .filter_map(|p| Self::expect(p, MsgKind::OpenAdditive, k))
            .collect();
        (
            OpenRound {
                partial: fresh,
                expect,
            },
            out,
        )
    }

    /// Opens ⟨x⟩ to `to` only: the two other parties send their re-randomised shares to it.
    /// One round; `k` elements from each of the two others to `to`
    /// ([`MsgKind::OpenAdditive`]). The receiver gets `Some(x)`, the others `None`.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if `to` is not a party of the session.
    pub fn open_to_start<F: Group>(
        &mut self,
        to: PartyId,
        x: &[Additive<F>],
    ) -> Result<Start<OpenToRound<F>, F>, MpcError> {
        Self::check_party(
            to,
            "the receiver of an opening is not a party of the session",
        )?;
        let k = x.len();
        let fresh = Additive::shares(&self.reshare(x));
        if to == self.me {
            let expect = [self.next(), self.prev()]
                .into_iter()
                .filter_map(|p| Self::expect(p, MsgKind::OpenAdditive, k))
                .collect();
            let round = OpenRound {
                partial: fresh,
                expect,
            };
            Ok((OpenToRound(Some(round)), Vec::new()))
        } else {
            Ok((
                OpenToRound(None),
                Self::msg(to, MsgKind::OpenAdditive, fresh),
            ))
        }
    }

    /// Opens ⟦x⟧ to all parties: each party sends x_i to its predecessor, which lacks exactly
    /// that component. One round, `k` elements from each party to its predecessor
    /// ([`MsgKind::OpenReplicated`]). Advances no PRG stream.
    pub fn open_replicated_start<F: Group>(
        &mut self,
        x: &[Replicated<F>],
    ) -> Start<OpenRound<F>, F> {
        let own: Vec<F> = x.iter().map(|s| s.own()).collect();
        let out = Self::msg(self.prev(), MsgKind::OpenReplicated, own);
        let expect = Self::expect(self.next(), MsgKind::OpenReplicated, x.len());
        let partial = x.iter().map(|s| s.own() + s.prev()).collect();
        (
            OpenRound {
                partial,
                expect: expect.into_iter().collect(),
            },
            out,
        )
    }

    /// Opens ⟦x⟧ to `to` only: its successor sends the missing component x_{to+1}. One round;
    /// `k` elements from `to`'s successor, nothing from the others (the third party is idle)
    /// ([`MsgKind::OpenReplicated`]). The receiver gets `Some(x)`, the others `None`.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if `to` is not a party of the session.
    pub fn open_replicated_to_start<F: Group>(
        &mut self,
        to: PartyId,
        x: &[Replicated<F>],
    ) -> Result<Start<OpenToRound<F>, F>, MpcError> {
        Self::check_party(
            to,
            "the receiver of an opening is not a party of the session",
        )?;
        if to == self.me {
            let expect = Self::expect(self.next(), MsgKind::OpenReplicated, x.len());
            let partial = x.iter().map(|s| s.own() + s.prev()).collect();
            let round = OpenRound {
                partial,
                expect: expect.into_iter().collect(),
            };
            Ok((OpenToRound(Some(round)), Vec::new()))
        } else if to == self.prev() {
            let own = x.iter().map(|s| s.own()).collect();
            Ok((
                OpenToRound(None),
                Self::msg(to, MsgKind::OpenReplicated, own),
            ))
        } else {
            Ok((OpenToRound(None), Vec::new()))
        }
    }

    /// Replicated input from dealer `P_d`: x_d = PRG_{d,d+1} and x_{d−1} = PRG_{d−1,d} need no
    /// communication; the dealer sends the third component x_{d+1} = x − x_d − x_{d−1} to both
    /// others, who each hold it. One round; `k` elements from the dealer to each other party
    /// ([`MsgKind::InputShares`]), nothing from the others. Advances the streams between the
    /// dealer and each other party by `k` elements.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if a non-dealer passes `Input::Own` or names itself as dealer.
    pub fn input_replicated_start<F: Group>(
        &mut self,
        input: Input<'_, F>,
    ) -> Result<Start<InputRound<F>, F>, MpcError> {
        let (dealer, k, values) = self.resolve_input(input)?;
        let (next, prev) = (self.next(), self.prev());
        match values {
            Some(values) => {
                let own: Vec<F> = self.prgs.with(next).expand(k);
                let from_prev: Vec<F> = self.prgs.with(prev).expand(k);
                let third: Vec<F> = values
                    .iter()
                    .zip(&own)
                    .zip(&from_prev)
                    .map(|((&v, &a), &b)| v - a - b)
                    .collect();
                let mut out = Self::msg(next, MsgKind::InputShares, third.clone());
                out.extend(Self::msg(prev, MsgKind::InputShares, third));
                let done = own
                    .into_iter()
                    .zip(from_prev)
                    .map(|(o, p)| Replicated::from_parts(o, p))
                    .collect();
                let round = InputRound {
                    state: InputState::Dealer(done),
                    expect: None,
                };
                Ok((round, out))
            }
            None => {
                // x_d at P_{d+1} (its prev component), x_{d−1} at P_{d−1} (its own component):
                // both from the stream shared with the dealer.
                let known: Vec<F> = self.prgs.with(dealer).expand(k);
                let state = if dealer == prev {
                    InputState::WireIsOwn(known)
                } else {
                    InputState::WireIsPrev(known)
                };
                let expect = Self::expect(dealer, MsgKind::InputShares, k);
                Ok((InputRound { state, expect }, Vec::new()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The round functions driven by hand in one thread, with no session: the messages are
    //! moved between the three parties by [`route`].
    use super::*;
    use crate::msgs::Inbound;
    use crate::rounds::Round;
    use crate::share::{deal_additive, reconstruct_additive, reconstruct_replicated};
    use doram_core::CodecError;
    use doram_core::wire::PeerFault;
    use doram_field::{Fp, Z64};
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

    fn setup3(tag: u8) -> [Party; 3] {
        let started: Vec<(Setup, [SeedMsg; 2])> = ALL
            .iter()
            .map(|&p| Setup::start(p, 3, Seed([tag ^ (p.index() as u8); 16])).expect("3 parties"))
            .collect();
        let mut inbox: [Vec<(PartyId, Seed)>; 3] = Default::default();
        for (i, (_, msgs)) in started.iter().enumerate() {
            for m in msgs {
                inbox[m.to.index()].push((ALL[i], m.seed));
            }
        }
        let mut parties = started.into_iter().zip(inbox).map(|((setup, _), got)| {
            let received = [got[0], got[1]];
            setup.finish(received).expect("valid exchange")
        });
        std::array::from_fn(|_| parties.next().expect("three parties"))
    }

    /// Delivers every outgoing message to its receiver and finishes the three rounds.
    fn route<F: Group, R: Round<F>>(starts: [Start<R, F>; 3]) -> [R::Output; 3] {
        let mut mailbox: Vec<(PartyId, Outgoing<F>)> = Vec::new();
        let rounds: Vec<R> = starts
            .into_iter()
            .enumerate()
            .map(|(i, (round, out))| {
                mailbox.extend(out.into_iter().map(|m| (ALL[i], m)));
                round
            })
            .collect();
        let mut outputs = rounds.into_iter().enumerate().map(|(i, round)| {
            let inbound: Vec<Inbound<F>> = round
                .expected()
                .iter()
                .map(|e| {
                    let pos = mailbox
                        .iter()
                        .position(|(from, m)| *from == e.from && m.to == ALL[i] && m.kind == e.kind)
                        .expect("message was sent");
                    let (from, m) = mailbox.remove(pos);
                    m.deliver(from)
                })
                .collect();
            round.finish(inbound).expect("round completes")
        });
        let out = std::array::from_fn(|_| outputs.next().expect("three outputs"));
        assert!(mailbox.is_empty(), "every message sent was expected");
        out
    }

    fn product_in_memory<F: Ring>(tag: u8) {
        let mut parties = setup3(tag);
        let mut rng = ChaCha12Rng::seed_from_u64(u64::from(tag));
        let (x, y) = (
            crate::share::random_element::<F, _>(&mut rng),
            crate::share::random_element::<F, _>(&mut rng),
        );
        let (ax, ay) = (deal_additive(x, &mut rng), deal_additive(y, &mut rng));

        let [a, b, c] = &mut parties;
        let rx = route([
            a.to_replicated_start(&[ax[0]]),
            b.to_replicated_start(&[ax[1]]),
            c.to_replicated_start(&[ax[2]]),
        ]);
        let ry = route([
            a.to_replicated_start(&[ay[0]]),
            b.to_replicated_start(&[ay[1]]),
            c.to_replicated_start(&[ay[2]]),
        ]);
        let rep =
            |v: &[Vec<Replicated<F>>; 3]| reconstruct_replicated(&[v[0][0], v[1][0], v[2][0]]);
        assert_eq!(rep(&rx), Some(x));
        let xy = route([
            a.mul_start(&rx[0], &ry[0]).expect("same lengths"),
            b.mul_start(&rx[1], &ry[1]).expect("same lengths"),
            c.mul_start(&rx[2], &ry[2]).expect("same lengths"),
        ]);
        assert_eq!(rep(&xy), Some(x * y));
        let opened = route([
            a.open_start(&[ax[0]]),
            b.open_start(&[ax[1]]),
            c.open_start(&[ax[2]]),
        ]);
        assert!(opened.iter().all(|o| o == &vec![x]));
        let add = |v: &[Vec<Additive<F>>; 3]| reconstruct_additive(&[v[0][0], v[1][0], v[2][0]]);
        let prod = route([
            a.mul_additive_start(&[ax[0]], &[ay[0]])
                .expect("same lengths"),
            b.mul_additive_start(&[ax[1]], &[ay[1]])
                .expect("same lengths"),
            c.mul_additive_start(&[ax[2]], &[ay[2]])
                .expect("same lengths"),
        ]);
        assert_eq!(add(&prod), x * y);
        let zeros = [a.zero::<F>(1), b.zero::<F>(1), c.zero::<F>(1)];
        assert_eq!(add(&zeros), F::ZERO);
    }

    #[test]
    fn round_functions_run_without_a_network() {
        product_in_memory::<Fp>(1);
        product_in_memory::<Z64>(2);
    }

    #[test]
    fn setup_checks_the_session() {
        assert!(matches!(
            Setup::start(PartyId::P0, 2, Seed([0; 16])),
            Err(MpcError::WrongPartyCount { n_parties: 2 })
        ));
        assert!(matches!(
            Setup::start(PartyId::P3, 3, Seed([0; 16])),
            Err(MpcError::WrongPartyCount { n_parties: 3 })
        ));
        let (setup, msgs) = Setup::start(PartyId::P1, 3, Seed([0; 16])).expect("3 parties");
        assert_eq!(setup.expected(), [PartyId::P2, PartyId::P0]);
        assert_eq!([msgs[0].to, msgs[1].to], [PartyId::P2, PartyId::P0]);
        assert_ne!(msgs[0].seed, msgs[1].seed);
        let dup = [(PartyId::P2, Seed([1; 16])), (PartyId::P2, Seed([2; 16]))];
        assert!(matches!(setup.finish(dup), Err(MpcError::ApiMisuse(_))));
    }

    #[test]
    fn finish_rejects_wrong_messages() {
        let [mut a, ..] = setup3(3);
        let x = [Additive::from_share(Fp::ONE); 4];
        let (round, out) = a.to_replicated_start(&x);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].to, PartyId::P1);
        let e = round.expected()[0];
        assert_eq!((e.from, e.count, e.bytes::<Fp>()), (PartyId::P2, 4, 64));
        let short = Inbound {
            from: PartyId::P2,
            kind: MsgKind::ReplicateShares,
            elems: vec![Fp::ONE; 3],
        };
        assert!(matches!(
            round.finish(vec![short]),
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P2,
                fault: CodecError::WrongLength {
                    expected: 64,
                    got: 48
                },
                ..
            }))
        ));
        let (round, _) = a.to_replicated_start(&x);
        let wrong_sender = Inbound {
            from: PartyId::P1,
            kind: MsgKind::ReplicateShares,
            elems: vec![Fp::ONE; 4],
        };
        assert!(matches!(
            round.finish(vec![wrong_sender]),
            Err(MpcError::ApiMisuse(_))
        ));
        let (round, _) = a.to_replicated_start(&x);
        assert!(matches!(round.finish(vec![]), Err(MpcError::ApiMisuse(_))));
    }

    #[test]
    fn empty_batches_send_nothing() {
        let [mut a, ..] = setup3(4);
        let (round, out) = a.to_replicated_start::<Fp>(&[]);
        assert!(out.is_empty() && round.expected().is_empty());
        assert!(round.finish(vec![]).expect("empty").is_empty());
        let (round, out) = a.open_start::<Z64>(&[]);
        assert!(out.is_empty() && round.expected().is_empty());
        let (round, out) = a.select_start::<Fp>(&[], &[], &[]).expect("same lengths");
        assert!(out.is_empty() && round.expected().is_empty());
        let (round, out) = a
            .input_replicated_start::<Fp>(Input::Own(&[]))
            .expect("dealer");
        assert!(out.is_empty() && round.expected().is_empty());
    }

    #[test]
    fn api_misuse_is_reported_before_sending() {
        let [mut a, ..] = setup3(5);
        let one = [Replicated::from_parts(Fp::ONE, Fp::ONE)];
        assert!(matches!(
            a.mul_start(&one, &[]),
            Err(MpcError::LengthMismatch {
                op: "mul",
                left: 1,
                right: 0
            })
        ));
        assert!(matches!(
            a.input_additive::<Fp>(Input::Peer {
                dealer: PartyId::P0,
                count: 1
            }),
            Err(MpcError::ApiMisuse(_))
        ));
        assert!(matches!(
            a.input_replicated_start::<Fp>(Input::Peer {
                dealer: PartyId::P3,
                count: 1
            }),
            Err(MpcError::ApiMisuse(_))
        ));
        assert!(matches!(
            a.open_to_start(PartyId::P3, &[Additive::from_share(Fp::ONE)]),
            Err(MpcError::ApiMisuse(_))
        ));
        assert_eq!(
            format!("{:?}", Input::Own(&[Fp::ONE, Fp::ONE])),
            "Input::Own(len = 2)"
        );
    }
}
