//! The two interfaces of a secret-shared memory: [`SharedMemory`], what a program sees — init,
//! access, batches, update, preprocessing — with no transport in sight, implemented by the
//! plaintext oracle [`PlainMemory`](crate::PlainMemory) as well as by every protocol; and
//! [`DistributedOram`], a [`SharedMemory`] that is one party's endpoint of a protocol instance
//! realising F_DORAM (Ramen Fig. 13) over a [`Session`], for drivers that need the session
//! (statistics, frame limits, phase labels).

use doram_core::PartyId;
use doram_field::Ring;
use doram_mpc::Additive;
use doram_net::Session;

use crate::error::OramError;
use crate::instruction::{InstructionShare, OpVisibility};

/// One party's share of a memory of [`len`](SharedMemory::len) words of
/// [`Word`](SharedMemory::Word), additively shared among [`parties`](SharedMemory::parties)
/// parties: Ramen Fig. 13 (F_DORAM) with Init, Access and Get Memory, plus an explicit
/// input-independent [`preprocess`](SharedMemory::preprocess) phase, batches and updates.
///
/// The trait says nothing about how the parties talk: [`PlainMemory`](crate::PlainMemory) is
/// the one-party case (a share is the value), every protocol of doram is a two- or three-party
/// case that owns its transport ([`DistributedOram`]). A RAM program written against this
/// trait runs unchanged on the plaintext oracle and on every protocol.
///
/// # Lockstep
/// The parties run the same program: they call the same methods in the same order with the
/// same public arguments (sizes, batch lengths, public ops). Methods that communicate block until
/// the round's messages have arrived.
///
/// # Contract
/// For a sequence of calls on the parties' instances, with `M` the memory that the
/// reconstructed `init` shares define:
/// * [`init`](SharedMemory::init) takes one additive share per word (`len()` of them) and
///   must be called exactly once, before any access. It may come before or after preprocessing.
/// * [`access`](SharedMemory::access) on an instruction (op, addr, val) with `addr < len()`
///   returns a fresh additive sharing of `M[addr]` **as it was before the access**, for reads
///   and writes alike (Ramen Fig. 13, Access, steps 1–2); a write then sets `M[addr] := val`.
///   The returned shares are independent of every share the caller has seen.
/// * [`access_many`](SharedMemory::access_many) is the same as the accesses one after the
///   other, in order; a protocol may share rounds between them.
/// * [`update`](SharedMemory::update) adds a shared delta to `M[addr]` and returns nothing.
/// * [`memory`](SharedMemory::memory) returns fresh additive shares of the current `M` (Get
///   Memory). The instance stays usable afterwards.
/// * [`preprocess`](SharedMemory::preprocess)`(k)` performs the input-independent work for at
///   least `k` further accesses (rounded up to the protocol's unit: one access for
///   [`LinearScanOram`](crate::LinearScanOram), an epoch for Ramen). It may be called at any
///   time and any number of times. An access for which nothing was preprocessed runs the missing
///   preprocessing inline: the results are the same, its cost is then counted in the access.
///   A batch counts as its length; an update as the accesses it makes (one for a native
///   update such as Duoram's, two for the default read and write).
///
/// # Out-of-range addresses
/// An address is secret-shared, so no party can tell whether it lies in `0..len()`, and no
/// protocol returns an error for it. For an address outside the range the value returned, the
/// cell written (if any) and what the communication reveals about that address are unspecified
/// — each protocol documents its own behaviour ([`PlainMemory`](crate::PlainMemory), which sees
/// the address, returns [`OramError::AddressOutOfRange`]). Programs must keep addresses in
/// range; every guarantee below is for in-range addresses.
///
/// # What leaks
/// All parties know the public parameters — the memory size `len()`, the word type, the number
/// of preprocessing, init, access (single or batched), update and memory calls and their order,
/// batch lengths — and, for protocols with [`OpVisibility::Public`], the type of each access.
/// Nothing else: the messages each party sends and receives (count, sizes, rounds) are a
/// function of this public information only, and their contents are simulatable from it (one
/// passive corruption, honest majority for three parties). The leakage check of the
/// [`testkit`](crate#testing-a-protocol) tests the first half of this claim.
///
/// # Errors
/// See [`OramError`]: misuse is detected before anything is sent and leaves the instance usable;
/// a failure in the middle of a protocol (a peer's fault) poisons it.
pub trait SharedMemory {
    /// The ring of addresses and values: `Fp` for Ramen, `Z64` for Duoram.
    type Word: Ring;

    /// Whether the parties learn the type of each access (see [`OpVisibility`]).
    const OP_VISIBILITY: OpVisibility;

    /// The number of parties that hold shares: 1 for the plaintext oracle, 2 or 3 for a
    /// protocol.
    fn parties(&self) -> usize;

    /// The number of words of memory, `n ≥ 1`.
    fn len(&self) -> usize;

    /// Whether the memory has no words (never, for a constructed instance).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs the input-independent work of at least `accesses` further accesses (rounded up to
    /// the protocol's unit).
    ///
    /// # Errors
    /// A peer fault (the instance is then poisoned), or [`OramError::Poisoned`].
    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError>;

    /// How many further accesses the preprocessed material covers.
    fn preprocessed(&self) -> usize;

    /// Ramen Fig. 13, Init: loads the memory from this party's additive shares, one per word.
    ///
    /// # Errors
    /// [`OramError::WrongMemoryLength`] if `memory.len() != self.len()`,
    /// [`OramError::AlreadyInitialized`] on a second call (both before anything is sent); a
    /// peer fault.
    fn init(&mut self, memory: &[Additive<Self::Word>]) -> Result<(), OramError>;

    /// Ramen Fig. 13, Access: executes the instruction and returns this party's share of the
    /// value at the address before the access (for reads and writes).
    ///
    /// # Errors
    /// [`OramError::NotInitialized`] before `init`, [`OramError::HiddenOpUnsupported`] for a
    /// hidden op on an [`OpVisibility::Public`] protocol (both before anything is sent); a peer
    /// fault.
    fn access(
        &mut self,
        ins: &InstructionShare<Self::Word>,
    ) -> Result<Additive<Self::Word>, OramError>;

    /// The accesses `ins` in order; returns the share of each one's old value. Protocols that
    /// can share rounds between the accesses of a batch override it.
    ///
    /// # Errors
    /// As [`access`](SharedMemory::access); on a misuse error nothing was sent.
    fn access_many(
        &mut self,
        ins: &[InstructionShare<Self::Word>],
    ) -> Result<Vec<Additive<Self::Word>>, OramError> {
        ins.iter().map(|i| self.access(i)).collect()
    }

    /// Ramen Fig. 13, Get Memory: fresh additive shares of the whole current memory.
    ///
    /// # Errors
    /// [`OramError::NotInitialized`] before `init`; a peer fault.
    fn memory(&mut self) -> Result<Vec<Additive<Self::Word>>, OramError>;

    /// Reads `addr` (an access with the public op [`Op::Read`](crate::Op::Read)).
    ///
    /// # Errors
    /// As [`access`](SharedMemory::access).
    fn read(&mut self, addr: Additive<Self::Word>) -> Result<Additive<Self::Word>, OramError> {
        self.access(&InstructionShare::read(addr))
    }

    /// Reads every address of `addrs`, in order (one batch of public reads).
    ///
    /// # Errors
    /// As [`access`](SharedMemory::access).
    fn read_many(
        &mut self,
        addrs: &[Additive<Self::Word>],
    ) -> Result<Vec<Additive<Self::Word>>, OramError> {
        let ins: Vec<_> = addrs.iter().map(|&a| InstructionShare::read(a)).collect();
        self.access_many(&ins)
    }

    /// Writes `value` to `addr` (an access with the public op [`Op::Write`](crate::Op::Write));
    /// returns the share of the old value.
    ///
    /// # Errors
    /// As [`access`](SharedMemory::access).
    fn write(
        &mut self,
        addr: Additive<Self::Word>,
        value: Additive<Self::Word>,
    ) -> Result<Additive<Self::Word>, OramError> {
        self.access(&InstructionShare::write(addr, value))
    }

    /// Adds `delta` to the word at `addr`. By default a read followed by a write of the old
    /// value plus `delta` (two accesses, a local addition between them); protocols with a
    /// native update (Duoram's UPDATE) override it with one.
    ///
    /// # Errors
    /// As [`access`](SharedMemory::access).
    fn update(
        &mut self,
        addr: Additive<Self::Word>,
        delta: Additive<Self::Word>,
    ) -> Result<(), OramError> {
        let old = self.read(addr)?;
        self.write(addr, old + delta)?;
        Ok(())
    }
}

/// One party's endpoint of a distributed ORAM: a [`SharedMemory`] whose instance owns the
/// party's [`Session`] with its peers.
///
/// # Ownership
/// An instance owns its party's [`Session`] (directly or inside an engine such as
/// [`Mpc3`](doram_mpc::Mpc3)) for its whole life; it is created from a session by the protocol's
/// constructor and drops it when dropped, which closes the links to the peers.
/// [`session`](DistributedOram::session) and [`session_mut`](DistributedOram::session_mut) lend
/// it out for statistics, transcripts, timeouts and phase labels — never for sending messages of
/// the caller's own in the middle of the protocol.
pub trait DistributedOram: SharedMemory {
    /// This party.
    fn me(&self) -> PartyId {
        self.session().me()
    }

    /// The largest message (frame payload) this party's instance can legitimately send or
    /// receive, in bytes, derived from its public parameters. A driver lowers the session's
    /// frame limit to it ([`Session::limit_frame_bytes`]) — raised to whatever else it runs on
    /// the same session needs — so that no peer can make this party buffer a larger frame.
    fn max_message_bytes(&self) -> usize;

    /// The session this instance owns: statistics, transcript, timeout.
    fn session(&self) -> &Session;

    /// The session, mutably: for phase labels ([`Session::set_phase`]), transcript recording
    /// and timeouts. Sending or receiving on it in the middle of a protocol breaks the protocol.
    fn session_mut(&mut self) -> &mut Session;
}
