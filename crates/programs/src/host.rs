//! [`Host`]: what a program's entry point needs from a machine besides [`Ram`] — set-up on a
//! session, inputs, the memory's layout and load, the output's opening and the run record. A
//! program's run is written once against it and runs on the three-party [`Machine`] over any
//! [`Backend`] and on the two-party [`Machine2`](crate::Machine2).

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_mpc::Secret;
use doram_net::Session;

use crate::binary_search::AccessWork;
use crate::error::ProgramError;
use crate::machine::{Backend, Machine, OArray, Part};
use crate::ram::Ram;
use crate::roles::PartyRun;
use crate::two::{Machine2With, Memory2};

/// A machine a program's run can set up and drive: see the [module documentation](self).
pub trait Host: Ram + Sized {
    /// The memory's name, as the parties agree on it before a run.
    const BACKEND: &'static str;
    /// The parties of a session.
    const PARTIES: usize;

    /// What one memory access costs beside engine work.
    fn access_work() -> AccessWork;

    /// Sets the machine up on `session` with randomness derived from `seed`.
    ///
    /// # Errors
    /// Transport failures; the peers' malformed set-up messages.
    fn setup(session: Session, seed: Seed) -> Result<Self, ProgramError>;

    /// This party.
    fn me(&self) -> PartyId;

    /// One value input by `dealer`, who passes `Some(value)`, the others `None`.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] for a wrong role input; transport and engine errors.
    fn input_scalar(
        &mut self,
        dealer: PartyId,
        value: Option<u64>,
    ) -> Result<Self::Word, ProgramError>;

    /// `len` values input by `dealer`, who passes `Some(values)`, the others `None`.
    ///
    /// # Errors
    /// As [`input_scalar`](Host::input_scalar).
    fn input_vector(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<Vec<Self::Word>, ProgramError>;

    /// A new memory array of `len` values owned by `dealer` (before boot).
    ///
    /// # Errors
    /// As [`input_vector`](Host::input_vector); [`ProgramError::Misuse`] after boot.
    fn alloc_input(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<OArray, ProgramError>;

    /// A new memory array of `len` copies of the public `value` (before boot).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] after boot.
    fn alloc_fill(&mut self, len: usize, value: u64) -> Result<OArray, ProgramError>;

    /// A new memory array holding secret words (before boot).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] after boot.
    fn alloc_secret(&mut self, values: &[Self::Word]) -> Result<OArray, ProgramError>;

    /// Creates and loads the memory, for a program that makes `accesses` accesses.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if already booted; the memory's errors.
    fn boot(&mut self, accesses: usize) -> Result<(), ProgramError>;

    /// Opens `values` to `receiver` alone, who gets `Some(values)`.
    ///
    /// # Errors
    /// Transport and engine errors; the peers' malformed shares.
    fn open_to(
        &mut self,
        receiver: PartyId,
        values: &[Self::Word],
    ) -> Result<Option<Vec<Fp>>, ProgramError>;

    /// This party's run record with `output` (at the receiver).
    fn finish<T>(&mut self, output: Option<T>) -> PartyRun<T>;
}

impl<D: Backend> Host for Machine<D> {
    const BACKEND: &'static str = D::NAME;
    const PARTIES: usize = 3;

    fn access_work() -> AccessWork {
        AccessWork::of::<D>()
    }

    fn setup(session: Session, seed: Seed) -> Result<Self, ProgramError> {
        Machine::setup(session, seed)
    }

    fn me(&self) -> PartyId {
        Machine::me(self)
    }

    fn input_scalar(
        &mut self,
        dealer: PartyId,
        value: Option<u64>,
    ) -> Result<Secret, ProgramError> {
        Machine::input_scalar(self, dealer, value)
    }

    fn input_vector(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<Vec<Secret>, ProgramError> {
        Machine::input_vector(self, dealer, values, len)
    }

    fn alloc_input(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<OArray, ProgramError> {
        Machine::alloc_input(self, dealer, values, len)
    }

    fn alloc_fill(&mut self, len: usize, value: u64) -> Result<OArray, ProgramError> {
        Machine::alloc_fill(self, len, value)
    }

    fn alloc_secret(&mut self, values: &[Secret]) -> Result<OArray, ProgramError> {
        Machine::alloc_secret(self, values)
    }

    fn boot(&mut self, accesses: usize) -> Result<(), ProgramError> {
        Machine::boot(self, accesses)
    }

    fn open_to(
        &mut self,
        receiver: PartyId,
        values: &[Secret],
    ) -> Result<Option<Vec<Fp>>, ProgramError> {
        self.engine_in(Part::Output, |on| on.open_to(receiver, values))
    }

    fn finish<T>(&mut self, output: Option<T>) -> PartyRun<T> {
        PartyRun::from_machine(self, output)
    }
}

impl<M: Memory2> Host for Machine2With<M> {
    const BACKEND: &'static str = M::BACKEND;
    const PARTIES: usize = 2;

    fn access_work() -> AccessWork {
        M::ACCESS_WORK
    }

    fn setup(session: Session, seed: Seed) -> Result<Self, ProgramError> {
        Machine2With::setup(session, seed)
    }

    fn me(&self) -> PartyId {
        Machine2With::me(self)
    }

    fn input_scalar(
        &mut self,
        dealer: PartyId,
        value: Option<u64>,
    ) -> Result<Self::Word, ProgramError> {
        Machine2With::input_scalar(self, dealer, value)
    }

    fn input_vector(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<Vec<Self::Word>, ProgramError> {
        Machine2With::input_vector(self, dealer, values, len)
    }

    fn alloc_input(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<OArray, ProgramError> {
        Machine2With::alloc_input(self, dealer, values, len)
    }

    fn alloc_fill(&mut self, len: usize, value: u64) -> Result<OArray, ProgramError> {
        Machine2With::alloc_fill(self, len, value)
    }

    fn alloc_secret(&mut self, values: &[Self::Word]) -> Result<OArray, ProgramError> {
        Machine2With::alloc_secret(self, values)
    }

    fn boot(&mut self, accesses: usize) -> Result<(), ProgramError> {
        Machine2With::boot_for(self, accesses)
    }

    fn open_to(
        &mut self,
        receiver: PartyId,
        values: &[Self::Word],
    ) -> Result<Option<Vec<Fp>>, ProgramError> {
        Machine2With::open_to(self, receiver, values)
    }

    fn finish<T>(&mut self, output: Option<T>) -> PartyRun<T> {
        Machine2With::finish(self, output)
    }
}
