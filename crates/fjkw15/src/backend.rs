//! [`Fjkw15Oram`]: FJKW15 as a doram shared memory (`doram_oram::SharedMemory` and
//! `DistributedOram`), one instance per party, owning its session, over words of Z/2^64
//! ([`Fjkw15Memory`]), of Z/2^32 ([`Fjkw15Z32Memory`], the 4-byte records of the authors'
//! implementation) or of F_p ([`Fjkw15FpMemory`]).
//!
//! # Three word types, one protocol
//! FJKW15 itself stores bit strings XOR-shared by D and E; the word type only decides the
//! records' width and the ring of the conversions at the interface ([`crate::convert`],
//! [`Fjkw15Word`]). Z/2^64 and Z/2^32: 64- or 32-bit records, ripple-carry adders mod 2^64 or
//! 2^32. F_p (the word of
//! the three-party program machine, whose engine computes in F_p and hands the DORAM additive
//! F_p shares): 128-bit records (the field's byte width) holding canonical representatives,
//! and the same garbled circuits with an adder mod p (a + b, then − p unless that borrows:
//! three ANDs per bit). This is the least invasive way to run every RAM program on FJKW15:
//! the access protocol is untouched, no value is ever opened, and the conversions stay the
//! one-circuit A2B/B2A of the Z/2^64 backend. The alternatives cost more: keeping Z/2^64
//! words under an F_p machine would need an F_p ↔ Z/2^64 conversion in the engine at every
//! access (a comparison-like protocol per value, see `doram_programs::machine`), and
//! engine-side bit decomposition of F_p shares would cost more rounds than one garbled
//! circuit. Costs over F_p: A2B of an address 512 ANDs (the mod-p sum, its reduction and
//! the range check below), of a written value 384, B2A 384: the conversions send 47 kB per
//! read and 70 kB per write (all parties, m = 11) where Z/2^64's send 8.4 and 15.5 kB, and
//! the records in T_h are twice as wide (docs/notes/fjkw15.md has measurements).
//!
//! * **Roles**: C = P0, D = P1, E = P2 for the instance's life ([`Roles::default`]).
//! * **Parameters** ([`Fjkw15Memory::params_for`]): records of one word, buckets of
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
//! * **Preprocess**: each access's input-independent part ahead of it
//!   ([`driver::precompute`]: Access's rotation and pad, Shift's and the SS-XOT's messages,
//!   the buckets' permutations, E's garbled F2FT/F2ET circuits and C's labels for them);
//!   an access without such material computes its own first, counted under the
//!   `preprocess` phase. The conversions' circuits still run online.
//!
//! **Costs** (by message sizes): the conversions add ≈ 8.4 kB to a read and ≈ 16 kB to a
//! write; `init` costs n accesses plus 2·n·⌈m/8⌉ bytes and ≈ 7 kB per word of A2B, and
//! `memory` two copies of OT_h, the openings and ≈ 7 kB per word of B2A (docs/notes/fjkw15.md
//! has measurements). [`InsecureDealtFjkw15`]
//! replaces the load by an opening of the memory to D and E, for benchmarks only.
//!
//! **Out-of-range addresses**. Over F_p ([`Fjkw15Word::CHECK_RANGE`]) the address's A2B
//! circuit also computes [x ≥ n] over the whole reduced address and outputs it to D in
//! the clear; D sends a one-byte [`RangeStatus`](crate::convert::RangeStatus) to C and E
//! after every address conversion, and on an out-of-range address all three stop with
//! [`Fjkw15Error::AddressOutOfRange`] (C before its access, E after its first messages, D at
//! once; no added round). D learns one bit that is 0 in every correct run; the run stops
//! when it is 1, so it reveals only that the program was wrong. Over Z/2^64 and Z/2^32 the
//! address is reduced mod 2^m by the conversion, without a check: an address in 2^m..n is
//! not in the forest, C's SS-COT finds no match and C fails with [`Fjkw15Error::Matches`];
//! the other parties then fail on the closed or silent link; an address ≥ 2^m aliases its
//! low m bits. Either way the instance is poisoned.
//!
//! **Bucket overflow** ([`Fjkw15Error::Overflow`]) also poisons the instance: there is no stash
//! (FJKW15 §2); w = 32 overflows about once in 10^7–10^8 accesses at 2^20 (docs/notes/fjkw15.md,
//! "Bucket overflow").

use doram_core::Seed;
use doram_field::{Fp, Ring, Z32, Z64};
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::{
    DistributedOram, InstructionShare, Op, OpVisibility, OramError, Protocol, SharedMemory,
};

use crate::convert::{A2b, B2a, ShareRing};
use crate::driver::{self, DriverError, Party};
use crate::error::Fjkw15Error;
use crate::extract::ExtractShape;
use crate::params::{MAX_ADDRESS_BITS, Params, ParamsError, W_STOCHASTIC};
use crate::party::{Role, Roles};
use crate::plain::words_for;
use crate::storage::ForestShare;

/// The session phase that pre-computation is counted under (the label `doram_oram`'s bench
/// and the other backends use for preprocessing).
const PREPROCESS_PHASE: &str = "preprocess";

/// Bytes of pre-computed material one party may hold for accesses preprocessed up front.
const UPFRONT_BYTES: usize = 1 << 28;

/// Whether `accesses` pre-computed accesses of an `n`-word memory of words `W` fit
/// [`UPFRONT_BYTES`] (the material is about the pre-computation's messages).
fn upfront<W: Fjkw15Word>(n: usize, accesses: usize) -> bool {
    Fjkw15Oram::<W>::params_for(n, W_STOCHASTIC)
        .ok()
        .and_then(|p| driver::precompute_bytes(&p).ok())
        .is_some_and(|b| b.saturating_mul(accesses) <= UPFRONT_BYTES)
}

/// Words of Z/2^64 converted per A2B (at init) or B2A (in `memory`) message: 256 words make
/// GC messages of about 1 MB ([`convert_batch`] for F_p).
pub const INIT_BATCH: usize = 256;

/// Record bits of [`Fjkw15Memory`]: one word of Z/2^64.
pub const RECORD_BITS: usize = 64;

/// Values converted per A2B or B2A message of the load and of `memory` in the ring `R`:
/// [`INIT_BATCH`] for Z/2^64, half as many for F_p (a value's circuit is about six times
/// larger there, so messages stay within a few MB).
pub fn convert_batch<R: ShareRing>() -> usize {
    INIT_BATCH * 64 / R::BITS
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for doram_field::Z32 {}
    impl Sealed for doram_field::Z64 {}
    impl Sealed for doram_field::Fp {}
}

/// A word type [`Fjkw15Oram`] stores: [`Z32`], [`Z64`] or [`Fp`], with the ring its
/// conversions work in and whether they check the address's range ([module docs](self)).
pub trait Fjkw15Word: Ring + sealed::Sealed {
    /// The ring of the conversions ([`crate::convert`]): `u32` for Z/2^32, `u64` for Z/2^64,
    /// [`Fp`] for F_p.
    type Share: ShareRing;
    /// The protocol's name in reports: `fjkw15`, or `fjkw15-z32` for 4-byte words.
    const NAME: &'static str;
    /// The name of the insecure-load variant ([`InsecureDealtFjkw15Oram`]).
    const INSECURE_NAME: &'static str;
    /// Whether the address conversion checks the whole address against the memory size, so
    /// that every party stops with [`Fjkw15Error::AddressOutOfRange`] on an address outside
    /// it (F_p: yes; Z/2^64: no, see the [module docs](self)).
    const CHECK_RANGE: bool;
    /// The word as a ring element.
    fn to_share(self) -> Self::Share;
    /// The word of a ring element.
    fn from_share(x: Self::Share) -> Self;
}

impl Fjkw15Word for Z32 {
    type Share = u32;
    const NAME: &'static str = "fjkw15-z32";
    const INSECURE_NAME: &'static str = "fjkw15-z32-insecure-dealt-load";
    const CHECK_RANGE: bool = false;

    fn to_share(self) -> u32 {
        self.0
    }

    fn from_share(x: u32) -> Z32 {
        Z32(x)
    }
}

impl Fjkw15Word for Z64 {
    type Share = u64;
    const NAME: &'static str = "fjkw15";
    const INSECURE_NAME: &'static str = "fjkw15-insecure-dealt-load";
    const CHECK_RANGE: bool = false;

    fn to_share(self) -> u64 {
        self.0
    }

    fn from_share(x: u64) -> Z64 {
        Z64(x)
    }
}

impl Fjkw15Word for Fp {
    type Share = Fp;
    const NAME: &'static str = "fjkw15";
    const INSECURE_NAME: &'static str = "fjkw15-insecure-dealt-load";
    const CHECK_RANGE: bool = true;

    fn to_share(self) -> Fp {
        self
    }

    fn from_share(x: Fp) -> Fp {
        x
    }
}

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

/// One party's instance of the FJKW15 ORAM as a doram shared memory over words `W`
/// ([module docs](self)): [`Fjkw15Memory`] (Z/2^64) or [`Fjkw15FpMemory`] (F_p).
pub struct Fjkw15Oram<W: Fjkw15Word> {
    load: Load,
    session: Session,
    params: Params,
    n: usize,
    party: Party,
    forest: Option<ForestShare>,
    state: State,
    a2b_read: A2b<W::Share>,
    a2b_write: A2b<W::Share>,
    b2a_one: B2a<W::Share>,
    /// Pre-computed accesses ([`driver::precompute`]), oldest first.
    pre: std::collections::VecDeque<driver::Pre>,
}

/// FJKW15 over words of Z/2^64 (records of 64 bits).
pub type Fjkw15Memory = Fjkw15Oram<Z64>;

/// FJKW15 over words of F_p (records of 128 bits, addresses range-checked): the backend of
/// the three-party program machine (`doram_programs::Machine`).
pub type Fjkw15FpMemory = Fjkw15Oram<Fp>;

/// FJKW15 over words of Z/2^32 (records of 32 bits): the 4-byte records of the authors'
/// implementation.
pub type Fjkw15Z32Memory = Fjkw15Oram<Z32>;

impl<W: Fjkw15Word> core::fmt::Debug for Fjkw15Oram<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Fjkw15Oram({:?}, n = {}, ..)", self.params, self.n)
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

/// An XOR share of a record as the driver's words.
fn xor_words<R: ShareRing>(x: R::Xor) -> Vec<u64> {
    let v: u128 = x.into();
    (0..words_for(R::BITS))
        .map(|k| (v >> (64 * k)) as u64)
        .collect()
}

/// The XOR share of a record from the driver's words.
fn xor_of_words<R: ShareRing>(words: &[u64]) -> R::Xor {
    let v = words
        .iter()
        .take(2)
        .enumerate()
        .fold(0u128, |v, (k, &w)| v | u128::from(w) << (64 * k));
    R::xor_of(v)
}

impl<W: Fjkw15Word> Fjkw15Oram<W> {
    /// The parameters for a memory of `n` words with buckets of `w` tuples ([module
    /// docs](self)); records are the word's bits.
    ///
    /// # Errors
    /// [`ParamsError`] if `n` is 0, above 2^[`MAX_ADDRESS_BITS`] (2^32 over Z/2^32) or
    /// w < 2.
    pub fn params_for(n: usize, w: usize) -> Result<Params, ParamsError> {
        if n == 0 {
            return Err(ParamsError::AddressBits(0));
        }
        let bits = usize::BITS - (n - 1).leading_zeros();
        let mut last = ParamsError::AddressBits(bits);
        // An address is one word: at most 32 bits over Z/2^32.
        let top = MAX_ADDRESS_BITS.min(W::Share::BITS as u32);
        for m in bits.max(3)..=top {
            match Params::smallest_paths(m, w, W::Share::BITS) {
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
    pub fn setup(session: Session, n: usize, seed: Seed) -> Result<Fjkw15Oram<W>, OramError> {
        Fjkw15Oram::setup_with(session, n, W_STOCHASTIC, seed)
    }

    /// As [`Fjkw15Oram::setup`] with buckets of `w` tuples.
    ///
    /// # Errors
    /// As [`Fjkw15Oram::setup`].
    pub fn setup_with(
        mut session: Session,
        n: usize,
        w: usize,
        seed: Seed,
    ) -> Result<Fjkw15Oram<W>, OramError> {
        let params = Fjkw15Oram::<W>::params_for(n, w).map_err(|e| size_error(n, e))?;
        let invalid = |_| OramError::InvalidSize {
            n,
            reason: "the conversion circuits",
        };
        let m = params.m() as usize;
        let bound = W::CHECK_RANGE.then_some(n as u128);
        let a2b_read = A2b::build(&[m], bound).map_err(invalid)?;
        let a2b_write = A2b::build(&[m, W::Share::BITS], bound).map_err(invalid)?;
        let b2a_one = B2a::build(1).map_err(invalid)?;
        let party = driver::setup(&mut session, Roles::default(), seed).map_err(oram_error)?;
        Ok(Fjkw15Oram {
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
            pre: std::collections::VecDeque::new(),
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
        f: impl FnOnce(&mut Fjkw15Oram<W>) -> Result<T, DriverError>,
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

    /// A2B of `x` (this party's additive shares) under `a`: D's and E's XOR shares (C:
    /// empty). With a range check, D tells C and E the result: C takes it here, E in the
    /// access ([`driver::access_e_checked`]).
    fn a2b(
        &mut self,
        a: &A2b<W::Share>,
        x: &[W::Share],
    ) -> Result<Vec<<W::Share as ShareRing>::Xor>, DriverError> {
        let s = &mut self.session;
        let checked = a.bound().is_some();
        match &mut self.party {
            Party::C(c) => {
                driver::a2b_c(s, c, a, x)?;
                if checked {
                    driver::range_status_recv(s, c.roles().party(Role::D))?;
                }
                Ok(Vec::new())
            }
            Party::D(d) if checked => driver::a2b_d_checked(s, d, a, x),
            Party::D(d) => driver::a2b_d(s, d, a, x),
            Party::E(e) => driver::a2b_e(s, e, a, x),
        }
    }

    /// B2A of `y` (C's and E's XOR shares; D passes nothing) under `b`: additive shares.
    fn b2a(
        &mut self,
        b: &B2a<W::Share>,
        y: &[<W::Share as ShareRing>::Xor],
    ) -> Result<Vec<W::Share>, DriverError> {
        let s = &mut self.session;
        match &mut self.party {
            Party::C(c) => driver::b2a_c(s, c, b, y),
            Party::D(d) => driver::b2a_d(s, d, b),
            Party::E(e) => driver::b2a_e(s, e, b, y),
        }
    }

    /// One FJKW15 access with D's and E's XOR shares `n` of the address and `write` of the
    /// new record (words); C's and E's XOR shares of the record read (D: 0).
    fn access_xor(
        &mut self,
        n: u64,
        write: Option<&[u64]>,
        is_write: bool,
    ) -> Result<<W::Share as ShareRing>::Xor, DriverError> {
        let pre = self
            .pre
            .pop_front()
            .ok_or(DriverError::Protocol(Fjkw15Error::InvalidInput(
                "an access needs its pre-computation",
            )))?;
        let (s, p) = (&mut self.session, &self.params);
        let record = match (&mut self.party, pre) {
            (Party::C(c), driver::Pre::C(pre)) => driver::access_c_with(s, c, p, is_write, pre)?,
            (Party::D(d), driver::Pre::D(pre)) => {
                let forest = Self::forest(&mut self.forest)?;
                driver::access_d_with(s, d, forest, (n, write), pre)?;
                Vec::new()
            }
            (Party::E(e), driver::Pre::E(pre)) => {
                let forest = Self::forest(&mut self.forest)?;
                driver::access_e_with(s, e, forest, (n, write), (pre, W::CHECK_RANGE))?
            }
            _ => {
                return Err(DriverError::Protocol(Fjkw15Error::InvalidInput(
                    "pre-computation of another role",
                )));
            }
        };
        Ok(xor_of_words::<W::Share>(&record))
    }

    fn load(&mut self, memory: &[W::Share]) -> Result<(), DriverError> {
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
        let bits = W::Share::BITS;
        let mut xor = Vec::with_capacity(memory.len());
        for chunk in memory.chunks(convert_batch::<W::Share>()) {
            let a = A2b::build(&vec![bits; chunk.len()], None)?;
            xor.extend(self.a2b(&a, chunk)?.into_iter().map(xor_words::<W::Share>));
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

    fn access_shares(
        &mut self,
        op: Op,
        addr: W::Share,
        value: W::Share,
    ) -> Result<W::Share, DriverError> {
        let a = match op {
            Op::Read => self.a2b_read.clone(),
            Op::Write => self.a2b_write.clone(),
        };
        let x: &[W::Share] = match op {
            Op::Read => &[addr],
            Op::Write => &[addr, value],
        };
        if self.pre.is_empty() {
            // An access without material pre-computes it inline, labelled as such; before the
            // conversion, whose range status E takes inside the access.
            let phase = self.session.phase().to_owned();
            self.session.set_phase(PREPROCESS_PHASE);
            let r = self.precompute_one();
            self.session.set_phase(&phase);
            r?;
        }
        let xor = self.a2b(&a, x)?;
        // The address has m ≤ MAX_ADDRESS_BITS < 64 bits.
        let n = xor.first().map_or(0, |&v| Into::<u128>::into(v) as u64);
        let write = xor.get(1).map(|&v| xor_words::<W::Share>(v));
        let record = self.access_xor(n, write.as_deref(), op == Op::Write)?;
        let b = self.b2a_one.clone();
        Ok(self
            .b2a(&b, &[record])?
            .first()
            .copied()
            .unwrap_or_default())
    }

    fn precompute_one(&mut self) -> Result<(), DriverError> {
        let pre = driver::precompute(&mut self.session, &mut self.party, &self.params)?;
        self.pre.push_back(pre);
        Ok(())
    }

    fn read_all(&mut self) -> Result<Vec<W::Share>, DriverError> {
        let shape = ExtractShape::new(self.params, self.n)?;
        let s = &mut self.session;
        match &mut self.party {
            Party::C(c) => driver::extract_c(s, c, &shape),
            Party::D(d) => driver::extract_d(s, d, &shape, Self::forest(&mut self.forest)?),
            Party::E(e) => driver::extract_e(s, e, &shape, Self::forest(&mut self.forest)?),
        }
    }
}

impl<W: Fjkw15Word> SharedMemory for Fjkw15Oram<W> {
    type Word = W;

    const OP_VISIBILITY: OpVisibility = OpVisibility::Public;

    fn parties(&self) -> usize {
        3
    }

    fn len(&self) -> usize {
        self.n
    }

    /// Pre-computes `accesses` accesses ([`driver::precompute`]: the garbled pick circuits,
    /// Shift's and the XOT's pre-computation messages); an access without material does its
    /// own first.
    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        if matches!(self.state, State::Poisoned) {
            return Err(OramError::Poisoned);
        }
        self.guarded(|o| (0..accesses).try_for_each(|_| o.precompute_one()))
    }

    fn preprocessed(&self) -> usize {
        self.pre.len()
    }

    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
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
        let words: Vec<W::Share> = memory.iter().map(|x| x.share().to_share()).collect();
        self.guarded(|o| o.load(&words))?;
        self.state = State::Ready;
        Ok(())
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        let op = ins.op.public().ok_or(OramError::HiddenOpUnsupported)?;
        self.ready()?;
        let (addr, value) = (ins.addr.share().to_share(), ins.value.share().to_share());
        let out = self.guarded(|o| o.access_shares(op, addr, value))?;
        Ok(Additive::from_share(W::from_share(out)))
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        self.ready()?;
        let out = self.guarded(Fjkw15Oram::read_all)?;
        Ok(out
            .into_iter()
            .map(|w| Additive::from_share(W::from_share(w)))
            .collect())
    }
}

impl<W: Fjkw15Word> DistributedOram for Fjkw15Oram<W> {
    fn max_message_bytes(&self) -> usize {
        let access = driver::max_access_message(&self.params).unwrap_or(usize::MAX);
        let load = driver::max_load_message(&self.params, self.n as u64).unwrap_or(usize::MAX);
        let batch = convert_batch::<W::Share>().min(self.n);
        let convert = match (
            A2b::<W::Share>::build(&vec![W::Share::BITS; batch], None),
            B2a::<W::Share>::build(batch),
        ) {
            (Ok(a), Ok(b)) => driver::max_convert_message(&a, &b)
                .max(driver::max_convert_message(&self.a2b_write, &self.b2a_one)),
            _ => usize::MAX,
        };
        let opened = match self.load {
            Load::Shared => 0,
            Load::InsecureDealt => driver::insecure_opened_bytes::<W::Share>(self.n),
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
impl<W: Fjkw15Word> Protocol for Fjkw15Oram<W> {
    const NAME: &'static str = W::NAME;

    const SUBLINEAR_ACCESS: bool = true;

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        Fjkw15Oram::setup(session, n, seed)
    }

    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        upfront::<W>(n, accesses)
    }
}

/// **Insecure** FJKW15 for benchmarks of accesses at sizes where the shared load (n accesses)
/// is too slow: `init` opens the memory to D and E, which build the forest themselves
/// ([`crate::load::InsecureOpenedShares`]); accesses, `memory` and everything else are those
/// of [`Fjkw15Memory`]. D and E learn the initial memory and the layout. Its name, in reports
/// too, says so.
#[derive(Debug)]
pub struct InsecureDealtFjkw15Oram<W: Fjkw15Word>(Fjkw15Oram<W>);

/// The insecure-load variant over words of Z/2^64.
pub type InsecureDealtFjkw15 = InsecureDealtFjkw15Oram<Z64>;

impl<W: Fjkw15Word> InsecureDealtFjkw15Oram<W> {
    /// As [`Fjkw15Oram::setup`], with the insecure load.
    ///
    /// # Errors
    /// As [`Fjkw15Oram::setup`].
    pub fn setup(
        session: Session,
        n: usize,
        seed: Seed,
    ) -> Result<InsecureDealtFjkw15Oram<W>, OramError> {
        let mut inner = Fjkw15Oram::setup(session, n, seed)?;
        inner.load = Load::InsecureDealt;
        Ok(InsecureDealtFjkw15Oram(inner))
    }
}

impl<W: Fjkw15Word> SharedMemory for InsecureDealtFjkw15Oram<W> {
    type Word = W;

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
    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
        self.0.init(memory)
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        self.0.access(ins)
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        self.0.memory()
    }
}

impl<W: Fjkw15Word> DistributedOram for InsecureDealtFjkw15Oram<W> {
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
impl<W: Fjkw15Word> Protocol for InsecureDealtFjkw15Oram<W> {
    const NAME: &'static str = W::INSECURE_NAME;

    const SUBLINEAR_ACCESS: bool = true;

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        InsecureDealtFjkw15Oram::setup(session, n, seed)
    }

    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        upfront::<W>(n, accesses)
    }
}
