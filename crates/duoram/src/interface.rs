//! [`DistributedOram`] for [`Duoram`]: the operation type is public
//! ([`OpVisibility::Public`]); a WRITE returns the old value, as F_DORAM does.

use doram_core::Seed;
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::{
    DistributedOram, InstructionShare, Op, OpVisibility, OramError, Protocol, SharedMemory,
};

use crate::duoram::Duoram;
use crate::error::DuoramError;
use crate::word::DuoWord;

impl<W: DuoWord> SharedMemory for Duoram<W> {
    type Word = W;

    const OP_VISIBILITY: OpVisibility = OpVisibility::Public;

    fn len(&self) -> usize {
        Duoram::len(self)
    }

    /// Preprocesses `accesses` operations: one DPF triple each, for a read or a write alike.
    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        Duoram::preprocess(self, accesses).map_err(Into::into)
    }

    fn preprocessed(&self) -> usize {
        Duoram::preprocessed(self)
    }

    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
        Duoram::init(self, memory).map_err(Into::into)
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        let r = match ins.op.public() {
            None => Err(DuoramError::HiddenOpUnsupported),
            Some(Op::Read) => Duoram::read(self, ins.addr),
            Some(Op::Write) => Duoram::write(self, ins.addr, ins.value),
        };
        r.map_err(Into::into)
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        Duoram::memory(self).map_err(Into::into)
    }

    /// Duoram's batched READ ([`Duoram::read_batch`]): two sequential messages per batch of up
    /// to [`BATCH_OPS`](crate::BATCH_OPS) reads.
    fn read_many(&mut self, addrs: &[Additive<W>]) -> Result<Vec<Additive<W>>, OramError> {
        Duoram::read_batch(self, addrs).map_err(Into::into)
    }

    /// Duoram's UPDATE (Protocol 2): one message, one triple of material.
    fn update(&mut self, addr: Additive<W>, delta: Additive<W>) -> Result<(), OramError> {
        Duoram::update(self, addr, delta).map_err(Into::into)
    }

    fn parties(&self) -> usize {
        3
    }
}

impl<W: DuoWord> DistributedOram for Duoram<W> {
    fn max_message_bytes(&self) -> usize {
        Duoram::<W>::max_message_bytes(self.len())
    }

    fn session(&self) -> &Session {
        Duoram::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        Duoram::session_mut(self)
    }
}

/// 3P-Duoram for the generic drivers; it runs one thread per party, so `threads` is ignored.
impl<W: DuoWord> Protocol for Duoram<W> {
    const NAME: &'static str = "duoram";

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        Duoram::setup(session, n, seed).map_err(Into::into)
    }

    /// One DPF triple per access, 6·2^⌈log₂ n⌉ + 4 words of material at each primary (the
    /// `material` module): keep it under 2^24 words (256 MiB of `Fp`).
    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        n.next_power_of_two()
            .saturating_mul(6)
            .saturating_add(4)
            .saturating_mul(accesses)
            <= 1 << 24
    }
}
