//! The driver: runs [`Setup`] and the round functions of [`Party`] over a [`Session`]. This is
//! the only module that performs I/O.
//!
//! Each one-round operation sends all its messages, then receives the expected ones in the
//! order [`Round::expected`] lists them. Sizes are fixed by the operation and the batch length:
//! a message of any other size is rejected before it is decoded, and a non-canonical element
//! after, each as [`MpcError::Peer`] naming the sender. A lost, repeated or reordered frame is
//! refused by the transport's per-link sequence check (`NetError::OutOfSequence` naming the
//! sender, see `doram_net`), so a frame is never taken for the next one of the same size; the
//! engine adds no framing of its own.
//!
//! A message longer than [`MAX_FRAME_BYTES`] goes out as consecutive frames of whole elements,
//! each at most that size, sent back to back (one round): every frame the engine sends or
//! accepts is at most [`MAX_FRAME_BYTES`] long, however large the batch, so a session that runs
//! only the engine can lower its frame limit to it. The receiver knows each message's element
//! count, hence its frames' sizes, and checks each one.
//!
//! The driver changes neither the session's phase ([`Session::set_phase`]) nor its wire phase
//! ([`Session::set_wire_phase`]): callers attribute costs to, and check, their own protocol
//! steps.

use doram_core::wire::{self, Blame, PeerFault};
use doram_core::{PartyId, Seed};
use doram_field::{Group, Ring, decode_vec};
use doram_net::Session;

use crate::error::MpcError;
use crate::msgs::{Inbound, MsgKind};
use crate::party::{Input, Party, Setup, Start};
use crate::rounds::Round;
use crate::share::{Additive, Replicated};

/// The largest frame payload the engine sends or accepts (1 MiB): longer messages are split.
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// How many elements of `F` one frame carries.
fn per_frame<F: Group>() -> usize {
    (MAX_FRAME_BYTES / F::BYTES).max(1)
}

/// The frames of a message of `count` elements of `F`: `(first element, elements)` each; a message
/// with no elements is one empty frame.
pub fn frames<F: Group>(count: usize) -> impl Iterator<Item = (usize, usize)> {
    let per = per_frame::<F>();
    let n = count.div_ceil(per).max(1);
    (0..n).map(move |i| (i * per, per.min(count - (i * per).min(count))))
}

/// Sends `elems` to `to` as one message of [`frames`]: back to back, each at most
/// [`MAX_FRAME_BYTES`].
///
/// # Errors
/// [`MpcError::Net`] if the transport fails.
pub fn send_framed<F: Group>(
    session: &mut Session,
    to: PartyId,
    elems: &[F],
) -> Result<(), MpcError> {
    for (start, len) in frames::<F>(elems.len()) {
        session.send_elems(to, &elems[start..start + len])?;
    }
    Ok(())
}

/// Receives a message of exactly `count` elements sent by [`send_framed`], checking the size
/// of each frame before decoding it; `what` names the message in errors.
///
/// # Errors
/// [`MpcError::Net`] if the transport fails; [`MpcError::Peer`] (naming `from`) if a frame
/// has the wrong size or does not decode.
pub fn recv_framed<F: Group>(
    session: &mut Session,
    from: PartyId,
    count: usize,
    what: &'static str,
) -> Result<Vec<F>, MpcError> {
    let mut elems = Vec::with_capacity(count);
    for (_, len) in frames::<F>(count) {
        let bytes = session.recv_bytes(from)?;
        wire::exact_len(from, what, &bytes, len * F::BYTES)?;
        let part: Vec<F> = decode_vec(&bytes, len).blame(from, what)?;
        elems.extend(part);
    }
    Ok(elems)
}

/// Runs [`Setup`] over `session`: one round, 16 bytes to and from each neighbour.
///
/// # Errors
/// [`MpcError::WrongPartyCount`] unless the session has exactly three parties (checked before
/// anything is sent); [`MpcError::Net`] or [`MpcError::Peer`] if a neighbour fails.
pub fn setup_party(session: &mut Session, seed: Seed) -> Result<Party, MpcError> {
    let (setup, msgs) = Setup::start(session.me(), session.n_parties(), seed)?;
    for m in &msgs {
        session.send_bytes(m.to, &m.seed.0)?;
    }
    let [a, b] = setup.expected();
    let received = [(a, recv_seed(session, a)?), (b, recv_seed(session, b)?)];
    setup.finish(received)
}

fn recv_seed(session: &mut Session, from: PartyId) -> Result<Seed, MpcError> {
    let bytes = session.recv_bytes(from)?;
    let seed: [u8; 16] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| PeerFault::wrong_length(from, MsgKind::SetupSeed.name(), 16, bytes.len()))?;
    Ok(Seed(seed))
}

/// Runs one round over `session`: sends `start`'s messages, receives the expected ones and
/// finishes the round. For protocol crates that keep their own [`Session`] next to a [`Party`].
///
/// # Errors
/// [`MpcError::Net`] if the transport fails; [`MpcError::Peer`] (naming the sender) if a
/// message has the wrong size or does not
/// decode.
pub fn run_round<F: Group, R: Round<F>>(
    session: &mut Session,
    start: Start<R, F>,
) -> Result<R::Output, MpcError> {
    let (round, outgoing) = start;
    send_outgoing(session, &outgoing)?;
    finish_round(session, round)
}

/// Sends the messages of a round start (the first half of [`run_round`]). With
/// [`finish_round`], several independent rounds can share one communication round: send the
/// messages of all of them, then finish each in the same order on every party.
///
/// # Errors
/// [`MpcError::Net`] if the transport fails.
pub fn send_outgoing<F: Group>(
    session: &mut Session,
    outgoing: &[crate::Outgoing<F>],
) -> Result<(), MpcError> {
    for m in outgoing {
        send_framed(session, m.to, &m.elems)?;
    }
    Ok(())
}

/// Receives the messages `round` expects, checks their sizes and decodes them, and finishes
/// the round (the second half of [`run_round`]).
///
/// # Errors
/// As [`run_round`].
pub fn finish_round<F: Group, R: Round<F>>(
    session: &mut Session,
    round: R,
) -> Result<R::Output, MpcError> {
    let mut inbound = Vec::with_capacity(round.expected().len());
    for e in round.expected() {
        let elems = recv_framed(session, e.from, e.count, e.kind.name())?;
        inbound.push(Inbound {
            from: e.from,
            kind: e.kind,
            elems,
        });
    }
    round.finish(inbound)
}

/// One party of the three-party engine over a [`Session`]: a [`Party`] plus the session.
///
/// Every method is batched — a slice of `k` operations costs the rounds of one — and all three
/// parties must call the same methods with the same batch lengths in the same order (see
/// [`Party`]'s lockstep rule). See the [crate documentation](crate) for the cost of each
/// operation.
#[derive(Debug)]
pub struct Mpc3 {
    session: Session,
    party: Party,
}

impl Mpc3 {
    /// Sets up the engine over a three-party `session`, with this party's randomness derived
    /// from `seed`: exchanges pairwise PRG seeds with both neighbours (one round, 16 bytes each
    /// way).
    ///
    /// # Errors
    /// As [`setup_party`].
    pub fn setup(mut session: Session, seed: Seed) -> Result<Mpc3, MpcError> {
        let party = setup_party(&mut session, seed)?;
        Ok(Mpc3 { session, party })
    }

    /// Reassembles an engine from its parts (see [`into_parts`](Mpc3::into_parts)).
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if the session and the party belong to different parties or the
    /// session is not a three-party one.
    pub fn from_parts(session: Session, party: Party) -> Result<Mpc3, MpcError> {
        if session.n_parties() != crate::N_PARTIES {
            return Err(MpcError::WrongPartyCount {
                n_parties: session.n_parties(),
            });
        }
        if session.me() != party.me() {
            return Err(MpcError::ApiMisuse("session and party have different ids"));
        }
        Ok(Mpc3 { session, party })
    }

    /// The session and the I/O-free party state.
    pub fn into_parts(self) -> (Session, Party) {
        (self.session, self.party)
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.party.me()
    }

    /// The I/O-free party state.
    pub fn party(&self) -> &Party {
        &self.party
    }

    /// The I/O-free party state, e.g. for its PRGs.
    pub fn party_mut(&mut self) -> &mut Party {
        &mut self.party
    }

    /// The session (statistics, transcript).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, for protocol messages of the caller's own.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Runs one round started on [`party_mut`](Mpc3::party_mut) (see [`run_round`]).
    ///
    /// # Errors
    /// As [`run_round`].
    pub fn run<F: Group, R: Round<F>>(
        &mut self,
        start: Start<R, F>,
    ) -> Result<R::Output, MpcError> {
        run_round(&mut self.session, start)
    }

    // -------------------------------------------------------------------------------------------
    // Local operations (no communication), forwarded to the party.

    /// Ramen Fig. 25 (F_Zero): `k` fresh additive sharings of 0. See [`Party::zero`].
    pub fn zero<F: Group>(&mut self, k: usize) -> Vec<Additive<F>> {
        self.party.zero(k)
    }

    /// Fresh additive shares of the same values. See [`Party::reshare`].
    pub fn reshare<F: Group>(&mut self, x: &[Additive<F>]) -> Vec<Additive<F>> {
        self.party.reshare(x)
    }

    /// Additive sharings of `k` random values nobody knows. See [`Party::random_additive`].
    pub fn random_additive<F: Group>(&mut self, k: usize) -> Vec<Additive<F>> {
        self.party.random_additive(k)
    }

    /// Replicated sharings of `k` random values nobody knows. See
    /// [`Party::random_replicated`].
    pub fn random_replicated<F: Group>(&mut self, k: usize) -> Vec<Replicated<F>> {
        self.party.random_replicated(k)
    }

    /// Additive input from a dealer, without communication. See [`Party::input_additive`].
    ///
    /// # Errors
    /// As [`Party::input_additive`].
    pub fn input_additive<F: Group>(
        &mut self,
        input: Input<'_, F>,
    ) -> Result<Vec<Additive<F>>, MpcError> {
        self.party.input_additive(input)
    }

    /// ⟦x⟧ → ⟨x⟩ (local; not re-randomised). See [`Replicated::to_additive`].
    pub fn to_additive<F: Group>(&self, x: &[Replicated<F>]) -> Vec<Additive<F>> {
        Replicated::to_additive_vec(x)
    }

    /// ⟦x⟧·⟦y⟧ → ⟨xy⟩, locally. See [`Party::mul_local`].
    ///
    /// # Errors
    /// As [`Party::mul_local`].
    pub fn mul_local<F: Ring>(
        &mut self,
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        self.party.mul_local(x, y)
    }

    /// Ramen Fig. 23 (F_Select) from replicated to additive shares, locally. See
    /// [`Party::select_local`].
    ///
    /// # Errors
    /// As [`Party::select_local`].
    pub fn select_local<F: Ring>(
        &mut self,
        flag: &[Replicated<F>],
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        self.party.select_local(flag, x, y)
    }

    // -------------------------------------------------------------------------------------------
    // One-round operations.

    /// Ramen Fig. 4, step 8: ⟨x⟩ → ⟦x⟧. See [`Party::to_replicated_start`].
    ///
    /// # Errors
    /// As [`run_round`].
    pub fn to_replicated<F: Group>(
        &mut self,
        x: &[Additive<F>],
    ) -> Result<Vec<Replicated<F>>, MpcError> {
        let start = self.party.to_replicated_start(x);
        self.run(start)
    }

    /// Replicated input from a dealer. See [`Party::input_replicated_start`].
    ///
    /// # Errors
    /// As [`Party::input_replicated_start`] and [`run_round`].
    pub fn input_replicated<F: Group>(
        &mut self,
        input: Input<'_, F>,
    ) -> Result<Vec<Replicated<F>>, MpcError> {
        let start = self.party.input_replicated_start(input)?;
        self.run(start)
    }

    /// ⟦x⟧·⟦y⟧ → ⟦xy⟧. See [`Party::mul_start`].
    ///
    /// # Errors
    /// As [`Party::mul_start`] and [`run_round`].
    pub fn mul<F: Ring>(
        &mut self,
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Replicated<F>>, MpcError> {
        let start = self.party.mul_start(x, y)?;
        self.run(start)
    }

    /// ⟨x⟩·⟨y⟩ → ⟨xy⟩. See [`Party::mul_additive_start`].
    ///
    /// # Errors
    /// As [`Party::mul_additive_start`] and [`run_round`].
    pub fn mul_additive<F: Ring>(
        &mut self,
        x: &[Additive<F>],
        y: &[Additive<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        let start = self.party.mul_additive_start(x, y)?;
        self.run(start)
    }

    /// Ramen Fig. 23 (F_Select) on additive shares: flag ? x : y. See
    /// [`Party::select_start`].
    ///
    /// # Errors
    /// As [`Party::select_start`] and [`run_round`].
    pub fn select<F: Ring>(
        &mut self,
        flag: &[Additive<F>],
        x: &[Additive<F>],
        y: &[Additive<F>],
    ) -> Result<Vec<Additive<F>>, MpcError> {
        let start = self.party.select_start(flag, x, y)?;
        self.run(start)
    }

    /// Ramen Fig. 23 (F_Select) on replicated shares. See
    /// [`Party::select_replicated_start`].
    ///
    /// # Errors
    /// As [`Party::select_replicated_start`] and [`run_round`].
    pub fn select_replicated<F: Ring>(
        &mut self,
        flag: &[Replicated<F>],
        x: &[Replicated<F>],
        y: &[Replicated<F>],
    ) -> Result<Vec<Replicated<F>>, MpcError> {
        let start = self.party.select_replicated_start(flag, x, y)?;
        self.run(start)
    }

    /// Opens ⟨x⟩ to all parties. See [`Party::open_start`].
    ///
    /// # Errors
    /// As [`run_round`].
    pub fn open<F: Group>(&mut self, x: &[Additive<F>]) -> Result<Vec<F>, MpcError> {
        let start = self.party.open_start(x);
        self.run(start)
    }

    /// Opens ⟨x⟩ to `to` only (`Some(x)` there, `None` elsewhere). See
    /// [`Party::open_to_start`].
    ///
    /// # Errors
    /// As [`Party::open_to_start`] and [`run_round`].
    pub fn open_to<F: Group>(
        &mut self,
        to: PartyId,
        x: &[Additive<F>],
    ) -> Result<Option<Vec<F>>, MpcError> {
        let start = self.party.open_to_start(to, x)?;
        self.run(start)
    }

    /// Opens ⟦x⟧ to all parties. See [`Party::open_replicated_start`].
    ///
    /// # Errors
    /// As [`run_round`].
    pub fn open_replicated<F: Group>(&mut self, x: &[Replicated<F>]) -> Result<Vec<F>, MpcError> {
        let start = self.party.open_replicated_start(x);
        self.run(start)
    }

    /// Opens ⟦x⟧ to `to` only (`Some(x)` there, `None` elsewhere). See
    /// [`Party::open_replicated_to_start`].
    ///
    /// # Errors
    /// As [`Party::open_replicated_to_start`] and [`run_round`].
    pub fn open_replicated_to<F: Group>(
        &mut self,
        to: PartyId,
        x: &[Replicated<F>],
    ) -> Result<Option<Vec<F>>, MpcError> {
        let start = self.party.open_replicated_to_start(to, x)?;
        self.run(start)
    }
}
