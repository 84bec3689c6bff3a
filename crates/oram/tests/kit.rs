//! The kit itself: it accepts a protocol that reveals the op type (through its public-op
//! paths), and it catches a protocol that returns wrong values and one whose communication
//! depends on a secret address.

use doram_core::{PartyId, Seed};
use doram_field::Z64;
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::testkit;
use doram_oram::{
    DistributedOram, InstructionShare, LinearScanOram, OpShare, OpVisibility, OramError,
    SharedMemory,
};

/// The linear scan behind an interface that reveals the op type, as Duoram does.
struct PublicOps(LinearScanOram<Z64>);

impl SharedMemory for PublicOps {
    type Word = Z64;
    const OP_VISIBILITY: OpVisibility = OpVisibility::Public;

    fn len(&self) -> usize {
        self.0.len()
    }
    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.0.preprocess(accesses)
    }
    fn preprocessed(&self) -> usize {
        self.0.preprocessed()
    }
    fn init(&mut self, memory: &[Additive<Z64>]) -> Result<(), OramError> {
        self.0.init(memory)
    }
    fn access(&mut self, ins: &InstructionShare<Z64>) -> Result<Additive<Z64>, OramError> {
        match ins.op {
            OpShare::Hidden(_) => Err(OramError::HiddenOpUnsupported),
            OpShare::Public(_) => self.0.access(ins),
        }
    }
    fn memory(&mut self) -> Result<Vec<Additive<Z64>>, OramError> {
        self.0.memory()
    }

    fn parties(&self) -> usize {
        3
    }
}

impl DistributedOram for PublicOps {
    fn max_message_bytes(&self) -> usize {
        self.0.max_message_bytes()
    }
    fn session(&self) -> &Session {
        self.0.session()
    }
    fn session_mut(&mut self) -> &mut Session {
        self.0.session_mut()
    }
}

doram_oram::oram_conformance!(
    public_ops,
    |session, _me, n, seed| LinearScanOram::<Z64>::setup(session, n, seed).map(PublicOps),
    sizes = [1, 4, 9],
    ops = 30
);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `P0` adds 1 to its output share.
    WrongResult,
    /// After each access the parties open the address and exchange a message one byte longer
    /// when it is odd.
    LeakyAddress,
}

/// The linear scan with a planted bug.
struct Mutant {
    inner: LinearScanOram<Z64>,
    mode: Mode,
}

fn mutant(
    mode: Mode,
) -> impl Fn(Session, PartyId, usize, Seed) -> Result<Mutant, OramError> + Sync {
    move |session, _me, n, seed| {
        Ok(Mutant {
            inner: LinearScanOram::setup(session, n, seed)?,
            mode,
        })
    }
}

impl SharedMemory for Mutant {
    type Word = Z64;
    const OP_VISIBILITY: OpVisibility = OpVisibility::Hidden;

    fn len(&self) -> usize {
        self.inner.len()
    }
    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.inner.preprocess(accesses)
    }
    fn preprocessed(&self) -> usize {
        self.inner.preprocessed()
    }
    fn init(&mut self, memory: &[Additive<Z64>]) -> Result<(), OramError> {
        self.inner.init(memory)
    }
    fn access(&mut self, ins: &InstructionShare<Z64>) -> Result<Additive<Z64>, OramError> {
        let me = self.me();
        let out = self.inner.access(ins)?;
        match self.mode {
            Mode::WrongResult => Ok(out.add_public(Z64::ONE, me)),
            Mode::LeakyAddress => {
                let s = self.inner.session_mut();
                let (next, prev) = (me.next(3), me.prev(3));
                s.send_elems(next, &[ins.addr.share()])?;
                s.send_elems(prev, &[ins.addr.share()])?;
                let a: Vec<Z64> = s.recv_elems(next, 1)?;
                let b: Vec<Z64> = s.recv_elems(prev, 1)?;
                let addr = ins.addr.share() + a[0] + b[0];
                s.send_bytes(next, &vec![0; 1 + (addr.0 % 2) as usize])?;
                s.recv_bytes(prev)?;
                Ok(out)
            }
        }
    }
    fn memory(&mut self) -> Result<Vec<Additive<Z64>>, OramError> {
        self.inner.memory()
    }

    fn parties(&self) -> usize {
        3
    }
}

impl DistributedOram for Mutant {
    fn max_message_bytes(&self) -> usize {
        self.inner.max_message_bytes()
    }
    fn session(&self) -> &Session {
        self.inner.session()
    }
    fn session_mut(&mut self) -> &mut Session {
        self.inner.session_mut()
    }
}

#[test]
#[should_panic(expected = "returned a wrong value")]
fn conformance_catches_wrong_results() {
    testkit::run_conformance(mutant(Mode::WrongResult), 5, 10, testkit::test_seed());
}

#[test]
fn the_leaky_mutant_is_correct() {
    testkit::run_conformance(mutant(Mode::LeakyAddress), 5, 20, testkit::test_seed());
}

#[test]
#[should_panic(expected = "differs")]
fn leakage_catches_address_dependent_messages() {
    // Size 5: the random base workload reads or writes an odd address with overwhelming
    // probability, the all-writes variant only address 0.
    testkit::run_leakage(mutant(Mode::LeakyAddress), 5, 40, testkit::test_seed());
}
