//! [`Fjkw15Memory`]: FJKW15 as a doram shared memory (`doram_oram::SharedMemory` and
//! `DistributedOram`) over words of Z/2^64, one instance per party, owning its session.
//!
//! * **Roles**: C = P0, D = P1, E = P2 for the instance's life ([`Roles::default`]).
//! * **Parameters** ([`Fjkw15Memory::params_for`]): records of 64 bits (one word), buckets of
//!   [`W_STOCHASTIC`] = 32 tuples unless told otherwise, and the smallest m ≥ max(3,
//!   ⌈log₂ n⌉) with a chunk length τ in 3..=6 ([`Params::smallest_paths`]); the forest holds
//!   only the n addresses in use.
//! * **Init**: the parties' additive shares become XOR shares between D and E ([`A2b`], in
//!   batches of [`INIT_BATCH`] words), then the shared load of [`crate::load`] (a public
//!   forest and a refresh pass of n reads in a secret order).
//! * **Access** (the op is public, `OpVisibility::Public`): the address (m bits) and, for a
//!   write, the value become XOR shares between D and E (one A2B), then one FJKW15 access
//!   ([`crate::driver`]); the record read, XOR-shared by C and E, becomes additive shares of
//!   all three ([`B2a`]).
//! * **Memory** ([`crate::extract`]): OT_h's rows, shuffled by a permutation no party knows,
//!   have their full bits and then the full rows' addresses opened; the records of the full
//!   rows are converted by B2A and put in address order. No access, the forest unchanged.
//! * **Preprocess**: nothing to do (the paper's pre-computation is folded into the pairwise
//!   PRGs and the online messages); [`preprocessed`](doram_oram::SharedMemory::preprocessed)
//!   is unbounded.
//!
//! **Costs** (by message sizes): the conversions add ≈ 8.4 kB to a read and ≈ 16 kB to a
//! write; `init` costs n accesses plus 2·n·⌈m/8⌉ bytes and ≈ 7 kB per word of A2B, and
//! `memory` two copies of OT_h, the openings and ≈ 7 kB per word of B2A (docs/notes/fjkw15.md
//! has measurements). [`InsecureDealtFjkw15`]
//! replaces the load by an opening of the memory to D and E, for benchmarks only.
//!
//! **Out-of-range addresses** (≥ n, reduced mod 2^m by the conversion): the address is not in
//! the forest, C's SS-COT finds no match and C fails with [`Fjkw15Error::Matches`]; the other
//! parties then fail on the closed or silent link. The instance is poisoned. Programs must keep
//! addresses in range.
//!
//! **Bucket overflow** ([`Fjkw15Error::Overflow`]) also poisons the instance: there is no stash
//! (FJKW15 §2); w = 32 overflows about once in 10^7–10^8 accesses at 2^20 (docs/notes/fjkw15.md,
//! "Bucket overflow").

use doram_core::Seed;
use doram_field::Z64;
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::{
    DistributedOram, InstructionShare, Op, OpVisibility, OramError, Protocol, SharedMemory,
};

use crate::convert::{A2b, B2a};
use crate::driver::{self, DriverError, Party};
use crate::error::Fjkw15Error;
use crate::extract::ExtractShape;
use crate::params::{MAX_ADDRESS_BITS, Params, ParamsError, W_STOCHASTIC};
use crate::party::Roles;
use crate::storage::ForestShare;

/// Words converted per A2B (at init) or B2A (in `memory`) message: 256 words make GC
/// messages of about 1 MB.
pub const INIT_BATCH: usize = 256;

/// Record bits: one word of Z/2^64.
pub const RECORD_BITS: usize = 64;

/// Where an instance is.
enum State {
    /// Set up, not loaded.
    Setup,
    /// Loaded; D and E hold their forest shares.
    Ready,
    /// An error interrupted an operation: the parties are out of step.
    Poisoned,
}

/// How `init` builds the forest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    /// The shared load of [`crate::load`].
    Shared,
    /// **Insecure**: D and E open the memory ([`crate::load::InsecureOpenedShares`]).
    InsecureDealt,
}

/// One party's instance of the FJKW15 ORAM as a doram shared memory ([module docs](self)).
pub struct Fjkw15Memory {
    load: Load,
    session: Session,
    params: Params,
    n: usize,
    party: Party,
    forest: Option<ForestShare>,
    state: State,
    a2b_read: A2b,
    a2b_write: A2b,
    b2a_one: B2a,
}

impl core::fmt::Debug for Fjkw15Memory {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Fjkw15Memory({:?}, n = {}, ..)", self.params, self.n)
    }
}

fn oram_error(e: DriverError) -> OramError {
    match e {
        DriverError::Net(e) => OramError::Net(e),
        DriverError::Protocol(Fjkw15Error::Peer(f)) => OramError::Peer(f),
        DriverError::Protocol(e) => OramError::Protocol(Box::new(e)),
    }
}

fn size_error(n: usize, e: ParamsError) -> OramError {
    let _ = e;
    OramError::InvalidSize {
        n,
        reason: "no FJKW15 parameters for this size",
    }
}

impl Fjkw15Memory {
    /// The parameters for a memory of `n` words with buckets of `w` tuples ([module
    /// docs](self)).
    ///
    /// # Errors
    /// [`ParamsError`] if `n` is 0, above 2^[`MAX_ADDRESS_BITS`] or w < 2.
    pub fn params_for(n: usize, w: usize) -> Result<Params, ParamsError> {
        if n == 0 {
            return Err(ParamsError::AddressBits(0));
        }
        let bits = usize::BITS - (n - 1).leading_zeros();
        let mut last = ParamsError::AddressBits(bits);
        for m in bits.max(3)..=MAX_ADDRESS_BITS {
            match Params::smallest_paths(m, w, RECORD_BITS) {
                Ok(p) => return Ok(p),
                Err(e @ ParamsError::NoChunk(_)) => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Sets up this party's instance for `n` words over `session` (C = P0, D = P1, E = P2)
    /// with buckets of [`W_STOCHASTIC`] tuples; `seed` is all of this party's randomness.
    ///
    /// # Errors
    /// [`OramError::InvalidSize`] for an unsupported `n` (before anything is sent); the
    /// setup round's errors.
    pub fn setup(session: Session, n: usize, seed: Seed) -> Result<Fjkw15Memory, OramError> {
        Fjkw15Memory::setup_with(session, n, W_STOCHASTIC, seed)
    }

    /// As [`Fjkw15Memory::setup`] with buckets of `w` tuples.
    ///
    /// # Errors
    /// As [`Fjkw15Memory::setup`].
    pub fn setup_with(
        mut session: Session,
        n: usize,
        w: usize,
        seed: Seed,
    ) -> Result<Fjkw15Memory, OramError> {
        let params = Fjkw15Memory::params_for(n, w).map_err(|e| size_error(n, e))?;
        let invalid = |_| OramError::InvalidSize {
            n,
            reason: "the conversion circuits",
        };
        let a2b_read = A2b::new(&[params.m() as usize]).map_err(invalid)?;
        let a2b_write = A2b::new(&[params.m() as usize, RECORD_BITS]).map_err(invalid)?;
        let b2a_one = B2a::new(1).map_err(invalid)?;
        let party = driver::setup(&mut session, Roles::default(), seed).map_err(oram_error)?;
        Ok(Fjkw15Memory {
            load: Load::Shared,
            session,
            params,
            n,
            party,
            forest: None,
            state: State::Setup,
            a2b_read,
            a2b_write,
            b2a_one,
        })
    }

    /// The forest's parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    fn ready(&self) -> Result<(), OramError> {
        match self.state {
            State::Ready => Ok(()),
            State::Setup => Err(OramError::NotInitialized),
            State::Poisoned => Err(OramError::Poisoned),
        }
    }

    /// Runs `f`, poisoning the instance if it fails.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Fjkw15Memory) -> Result<T, DriverError>,
    ) -> Result<T, OramError> {
        f(self).map_err(|e| {
            self.state = State::Poisoned;
            oram_error(e)
        })
    }

    fn forest(forest: &mut Option<ForestShare>) -> Result<&mut ForestShare, DriverError> {
        forest
            .as_mut()
            .ok_or(DriverError::Protocol(Fjkw15Error::InvalidInput(
                "D and E hold the forest after init",
            )))
    }

    /// A2B of `x` (this party's additive shares) under `a`: D's and E's XOR shares (C: empty).
    fn a2b(&mut self, a: &A2b, x: &[u64]) -> Result<Vec<u64>, DriverError> {
        let s = &mut self.session;
        match &mut self.party {
            Party::C(c) => driver::a2b_c(s, c, a, x).map(|()| Vec::new()),
            Party::D(d) => driver::a2b_d(s, d, a, x),
            Party::E(e) => driver::a2b_e(s, e, a, x),
        }
    }

    /// B2A of `y` (C's and E's XOR shares; D passes nothing) under `b`: additive shares.
    fn b2a(&mut self, b: &B2a, y: &[u64]) -> Result<Vec<u64>, DriverError> {
        let s = &mut self.session;
        match &mut self.party {
            Party::C(c) => driver::b2a_c(s, c, b, y),
            Party::D(d) => driver::b2a_d(s, d, b),
            Party::E(e) => driver::b2a_e(s, e, b, y),
        }
    }

    /// One FJKW15 access with D's and E's XOR shares `n` of the address and `write` of the
    /// new record; C's and E's XOR shares of the record read (D: 0).
    fn access_xor(
        &mut self,
        n: u64,
        write: Option<u64>,
        is_write: bool,
    ) -> Result<u64, DriverError> {
        let (s, p) = (&mut self.session, &self.params);
        let v = write.map(|v| [v]);
        let record = match &mut self.party {
            Party::C(c) => driver::access_c(s, c, p, is_write)?,
            Party::D(d) => {
                driver::access_d(
                    s,
                    d,
                    Self::forest(&mut self.forest)?,
                    n,
                    v.as_ref().map(|v| &v[..]),
                )?;
                vec![0]
            }
            Party::E(e) => driver::access_e(
                s,
                e,
                Self::forest(&mut self.forest)?,
                n,
                v.as_ref().map(|v| &v[..]),
            )?,
        };
        Ok(record.first().copied().unwrap_or(0))
    }

    fn load(&mut self, memory: &[u64]) -> Result<(), DriverError> {
        if self.load == Load::InsecureDealt {
            let (s, p) = (&mut self.session, &self.params);
            self.forest = match &mut self.party {
                Party::C(c) => {
                    driver::insecure_dealt_load_c(s, c, memory)?;
                    None
                }
                Party::D(d) => Some(driver::insecure_dealt_load_d(s, d, p, memory)?),
                Party::E(e) => Some(driver::insecure_dealt_load_e(s, e, p, memory)?),
            };
            return Ok(());
        }
        let mut xor = Vec::with_capacity(memory.len());
        for chunk in memory.chunks(INIT_BATCH) {
            let a = A2b::new(&vec![RECORD_BITS; chunk.len()])?;
            xor.extend(self.a2b(&a, chunk)?.into_iter().map(|w| vec![w]));
        }
        let (s, p) = (&mut self.session, &self.params);
        self.forest = match &mut self.party {
            Party::C(c) => {
                driver::load_c(s, c, p, memory.len() as u64)?;
                None
            }
            Party::D(d) => Some(driver::load_d(s, d, p, &xor)?),
            Party::E(e) => Some(driver::load_e(s, e, p, &xor)?),
        };
        Ok(())
    }

    fn access_shares(&mut self, op: Op, addr: u64, value: u64) -> Result<u64, DriverError> {
        let a = match op {
            Op::Read => self.a2b_read.clone(),
            Op::Write => self.a2b_write.clone(),
        };
        let x: &[u64] = match op {
            Op::Read => &[addr],
            Op::Write => &[addr, value],
        };
        let xor = self.a2b(&a, x)?;
        let n = xor.first().copied().unwrap_or(0);
        let record = self.access_xor(n, xor.get(1).copied(), op == Op::Write)?;
        let b = self.b2a_one.clone();
        Ok(self.b2a(&b, &[record])?.first().copied().unwrap_or(0))
    }

    fn read_all(&mut self) -> Result<Vec<u64>, DriverError> {
        let shape = ExtractShape::new(self.params, self.n)?;
        let s = &mut self.session;
        match &mut self.party {
            Party::C(c) => driver::extract_c(s, c, &shape),
            Party::D(d) => driver::extract_d(s, d, &shape, Self::forest(&mut self.forest)?),
            Party::E(e) => driver::extract_e(s, e, &shape, Self::forest(&mut self.forest)?),
        }
    }
}

impl SharedMemory for Fjkw15Memory {
    type Word = Z64;

    const OP_VISIBILITY: OpVisibility = OpVisibility::Public;

    fn parties(&self) -> usize {
        3
    }

    fn len(&self) -> usize {
        self.n
    }

    /// Nothing to preprocess ([module docs](self)).
    fn preprocess(&mut self, _accesses: usize) -> Result<(), OramError> {
        match self.state {
            State::Poisoned => Err(OramError::Poisoned),
            _ => Ok(()),
        }
    }

    fn preprocessed(&self) -> usize {
        usize::MAX
    }

    fn init(&mut self, memory: &[Additive<Z64>]) -> Result<(), OramError> {
        match self.state {
            State::Setup => {}
            State::Ready => return Err(OramError::AlreadyInitialized),
            State::Poisoned => return Err(OramError::Poisoned),
        }
        if memory.len() != self.n {
            return Err(OramError::WrongMemoryLength {
                expected: self.n,
                got: memory.len(),
            });
        }
        let words: Vec<u64> = memory.iter().map(|x| x.share().0).collect();
        self.guarded(|o| o.load(&words))?;
        self.state = State::Ready;
        Ok(())
    }

    fn access(&mut self, ins: &InstructionShare<Z64>) -> Result<Additive<Z64>, OramError> {
        let op = ins.op.public().ok_or(OramError::HiddenOpUnsupported)?;
        self.ready()?;
        let (addr, value) = (ins.addr.share().0, ins.value.share().0);
        let out = self.guarded(|o| o.access_shares(op, addr, value))?;
        Ok(Additive::from_share(Z64(out)))
    }

    fn memory(&mut self) -> Result<Vec<Additive<Z64>>, OramError> {
        self.ready()?;
        let out = self.guarded(Fjkw15Memory::read_all)?;
        Ok(out
            .into_iter()
            .map(|w| Additive::from_share(Z64(w)))
            .collect())
    }
}

impl DistributedOram for Fjkw15Memory {
    fn max_message_bytes(&self) -> usize {
        let access = driver::max_access_message(&self.params).unwrap_or(usize::MAX);
        let load = driver::max_load_message(&self.params, self.n as u64).unwrap_or(usize::MAX);
        let batch = INIT_BATCH.min(self.n);
        let convert = match (A2b::new(&vec![RECORD_BITS; batch]), B2a::new(batch)) {
            (Ok(a), Ok(b)) => driver::max_convert_message(&a, &b)
                .max(driver::max_convert_message(&self.a2b_write, &self.b2a_one)),
            _ => usize::MAX,
        };
        let opened = match self.load {
            Load::Shared => 0,
            Load::InsecureDealt => 8 * self.n,
        };
        let extract = ExtractShape::new(self.params, self.n)
            .map_or(usize::MAX, |s| driver::max_extract_message(&s));
        access.max(load).max(convert).max(opened).max(extract)
    }

    fn session(&self) -> &Session {
        &self.session
    }

    fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

/// FJKW15 for the generic drivers; it runs one thread per party, so `threads` is ignored.
impl Protocol for Fjkw15Memory {
    const NAME: &'static str = "fjkw15";

    const SUBLINEAR_ACCESS: bool = true;

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        Fjkw15Memory::setup(session, n, seed)
    }
}

/// **Insecure** FJKW15 for benchmarks of accesses at sizes where the shared load (n accesses)
/// is too slow: `init` opens the memory to D and E, which build the forest themselves
/// ([`crate::load::InsecureOpenedShares`]); accesses, `memory` and everything else are those
/// of [`Fjkw15Memory`]. D and E learn the initial memory and the layout. Its name, in reports
/// too, says so.
#[derive(Debug)]
pub struct InsecureDealtFjkw15(Fjkw15Memory);

impl InsecureDealtFjkw15 {
    /// As [`Fjkw15Memory::setup`], with the insecure load.
    ///
    /// # Errors
    /// As [`Fjkw15Memory::setup`].
    pub fn setup(session: Session, n: usize, seed: Seed) -> Result<InsecureDealtFjkw15, OramError> {
        let mut inner = Fjkw15Memory::setup(session, n, seed)?;
        inner.load = Load::InsecureDealt;
        Ok(InsecureDealtFjkw15(inner))
    }
}

impl SharedMemory for InsecureDealtFjkw15 {
    type Word = Z64;

    const OP_VISIBILITY: OpVisibility = OpVisibility::Public;

    fn parties(&self) -> usize {
        3
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.0.preprocess(accesses)
    }

    fn preprocessed(&self) -> usize {
        self.0.preprocessed()
    }

    /// **Insecure**: D and E learn `memory`'s values ([`InsecureDealtFjkw15`]).
    fn init(&mut self, memory: &[Additive<Z64>]) -> Result<(), OramError> {
        self.0.init(memory)
    }

    fn access(&mut self, ins: &InstructionShare<Z64>) -> Result<Additive<Z64>, OramError> {
        self.0.access(ins)
    }

    fn memory(&mut self) -> Result<Vec<Additive<Z64>>, OramError> {
        self.0.memory()
    }
}

impl DistributedOram for InsecureDealtFjkw15 {
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

/// The insecure-load variant for the generic drivers (`threads` is ignored).
impl Protocol for InsecureDealtFjkw15 {
    const NAME: &'static str = "fjkw15-insecure-dealt-load";

    const SUBLINEAR_ACCESS: bool = true;

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        InsecureDealtFjkw15::setup(session, n, seed)
    }
}
