//! Ramen as a [`DistributedOram`] (`doram-oram`'s interface): words are `Fp`, the operation is
//! hidden ([`OpVisibility::Hidden`]: a public op is passed as a constant sharing of its bit and
//! costs the same), the preprocessing unit is an epoch of s accesses.

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::{
    DistributedOram, InstructionShare, OpVisibility, OramError, Protocol, SharedMemory,
};

use crate::doram::Ramen;
use crate::error::RamenError;
use crate::params::Params;
use crate::steps::Step;

impl Ramen {
    /// [`Ramen::new`] with [`Params::new`]`(n)`: the constructor the `doram-oram` test kit and
    /// generic programs use.
    ///
    /// # Errors
    /// As [`Params::new`] and [`Ramen::new`].
    pub fn setup(session: Session, n: usize, seed: Seed) -> Result<Ramen, RamenError> {
        Ramen::new(session, Params::new(n)?, seed)
    }
}

/// Ramen's errors as the interface's: transport errors stay [`OramError::Net`], a peer's
/// fault [`OramError::Peer`], misuse becomes the interface's misuse variants, and everything
/// else is wrapped in [`OramError::Protocol`].
impl From<RamenError> for OramError {
    fn from(e: RamenError) -> Self {
        match e {
            RamenError::Net(e) => OramError::Net(e),
            RamenError::Mpc(e) => OramError::from(e),
            RamenError::Doprf(doram_doprf::DoprfError::Net(e)) => OramError::Net(e),
            RamenError::Doprf(doram_doprf::DoprfError::Peer(f)) | RamenError::Peer(f) => {
                OramError::Peer(f)
            }
            RamenError::NotInitialized => OramError::NotInitialized,
            RamenError::AlreadyInitialized => OramError::AlreadyInitialized,
            RamenError::WrongMemoryLength { expected, got } => {
                OramError::WrongMemoryLength { expected, got }
            }
            RamenError::Poisoned => OramError::Poisoned,
            other => OramError::Protocol(Box::new(other)),
        }
    }
}

impl SharedMemory for Ramen {
    type Word = Fp;
    const OP_VISIBILITY: OpVisibility = OpVisibility::Hidden;

    fn len(&self) -> usize {
        self.params().n()
    }

    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        Ok(self.prepare(accesses)?)
    }

    fn preprocessed(&self) -> usize {
        Ramen::preprocessed(self)
    }

    fn init(&mut self, memory: &[Additive<Fp>]) -> Result<(), OramError> {
        Ok(self.load(memory)?)
    }

    fn access(&mut self, ins: &InstructionShare<Fp>) -> Result<Additive<Fp>, OramError> {
        let op = ins.op.to_additive(Ramen::me(self));
        Ok(self.access_shared(op, ins.addr, ins.value)?)
    }

    fn memory(&mut self) -> Result<Vec<Additive<Fp>>, OramError> {
        Ok(self.memory_shares()?)
    }

    fn parties(&self) -> usize {
        3
    }
}

impl DistributedOram for Ramen {
    fn me(&self) -> PartyId {
        Ramen::me(self)
    }

    fn max_message_bytes(&self) -> usize {
        self.params().max_message_bytes()
    }

    fn session(&self) -> &Session {
        Ramen::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        Ramen::session_mut(self)
    }
}

/// Ramen for the generic drivers: `threads` is [`Params::with_threads`]; the step times are
/// [`Step`]'s, under their session phase names.
impl Protocol for Ramen {
    const NAME: &'static str = "ramen";
    const MIN_LEN: usize = crate::params::MIN_N;
    const SUBLINEAR_ACCESS: bool = true;

    fn setup(session: Session, n: usize, threads: usize, seed: Seed) -> Result<Self, OramError> {
        let params = Params::new(n)?.with_threads(threads);
        Ok(Ramen::new(session, params, seed)?)
    }

    fn step_times(&self) -> Vec<(&'static str, std::time::Duration)> {
        Step::ALL
            .iter()
            .map(|&s| (s.phase(), Ramen::step_times(self).get(s)))
            .collect()
    }
}
