//! [`Machine`]: one party's secure RAM machine — the compute engine ([`Engine`]) for the CPU
//! step and one distributed ORAM ([`Backend`]) holding every [`OArray`] of the program.
//!
//! # One memory, many arrays
//! A program's arrays are regions of a single DORAM memory (the RAM model of Gordon et al.
//! §2.1 has one memory too): [`Machine::alloc_input`] and friends lay them out one after the
//! other before [`Machine::boot`] creates the DORAM over the whole memory and loads it with one
//! Init (Ramen Fig. 13). An [`OArray`] is a public (base, length) pair; a secret index i of an
//! array becomes the secret address base + i by a local addition, so a program may also compute
//! an address that lies in one array or another depending on a secret
//! ([`OArray::addr`], [`Machine::read_addr`]) and pay for one access instead of two. The
//! price: every access pays for the whole memory's size (sublinear for Ramen, linear for the
//! linear scan).
//!
//! # One session
//! A party has one [`Session`] with its two peers. The DORAM owns it
//! ([`DistributedOram`]'s contract) and the engine borrows it between accesses
//! ([`DistributedOram::session_mut`]): every engine batch and every access runs to completion —
//! all of its messages sent and received — before the next starts, so their messages never
//! interleave on a link, and the engine's extra pairwise PRG streams (set up on the same
//! session before the DORAM) are independent of the DORAM's. Before [`boot`](Machine::boot) the
//! engine talks over the session directly (public sizes, inputs, preprocessing). One session
//! means one TLS connection per pair of parties and one place for statistics.
//!
//! # Share conversions
//! The engine holds replicated shares ⟦x⟧ ([`Secret`]); DORAMs take and return additive shares
//! ⟨x⟩. Engine → DORAM: the own component of ⟦x⟧ plus an F_Zero sharing of 0 (local,
//! [`Online::to_additive`]). DORAM → engine: ⟨x⟩ → ⟦x⟧ by sending the own share to the
//! successor (Ramen Fig. 4, step 8; one round, batched over the reads of
//! [`read_many`](Machine::read_many)). The data owner's array is shared without any message
//! ([`Party::input_additive`](doram_mpc::Party::input_additive): the two other parties' shares
//! come from the PRGs they share with the owner) directly in the DORAM's additive form.
//!
//! # Word type
//! The engine computes in F_p, so every backend is used with words of F_p: Ramen natively,
//! [`LinearScanOram<Fp>`](doram_oram::LinearScanOram), Duoram as the generic `Duoram<Fp>`,
//! and FJKW15 as `Fjkw15FpMemory` (128-bit records, conversions by garbled adders mod p).
//! Using the backend over F_p, rather than Duoram over Z_2^64 with a share conversion at every
//! access, keeps every access conversion-free (a Z_2^64 → F_p conversion needs a
//! comparison-like protocol per value).
//!
//! # Reads, writes and the operation type
//! Backends with [`OpVisibility::Hidden`] (Ramen, linear scan) do not reveal whether an access
//! reads or writes; with [`OpVisibility::Public`] (Duoram) every party sees it. A program
//! whose choice between reading and writing depends on a secret must therefore always do both.
//! [`cond_write`](Machine::cond_write) is the natural path: on a hiding backend it is one access
//! whose op is the secret condition; on a revealing one it is a read, a select in the engine and
//! a write, always in that order. [`update`](Machine::update) is read–compute–write on every
//! backend. Programs written with these run the same public access sequence on every backend.

use std::time::{Duration, Instant};

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_mpc::{Additive, Engine, Input, MpcError, Online, Secret, SecretBit};
use doram_net::Session;
use doram_oram::{DistributedOram, InstructionShare, OpVisibility, OramError, Protocol};
use doram_prim::AesPrg;

use crate::error::ProgramError;

/// A distributed ORAM over F_p words that a [`Machine`] can create on a session: any
/// [`Protocol`] (its name, constructor, smallest memory and up-front preprocessing bound) with
/// F_p words. The machine is generic over it; which backends exist, and how one is chosen at
/// run time, is the business of the layer above (the `doram` facade's `BackendKind`).
pub trait Backend: Protocol + DistributedOram<Word = Fp> {}

impl<D: Protocol + DistributedOram<Word = Fp>> Backend for D {}

/// An array in the machine's memory: a public base address and length. Copy it freely; it
/// holds no shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OArray {
    base: usize,
    len: usize,
}

impl OArray {
    /// The array of `len` words from address `base`.
    pub(crate) fn new(base: usize, len: usize) -> OArray {
        OArray { base, len }
    }

    /// Number of elements.
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The address of the first element in the machine's memory.
    pub fn base(self) -> usize {
        self.base
    }

    /// The array made of `self` followed by `next`, if `next` starts where `self` ends.
    pub fn join(self, next: OArray) -> Option<OArray> {
        (self.base + self.len == next.base).then_some(OArray {
            base: self.base,
            len: self.len + next.len,
        })
    }

    /// The secret address of element `idx` (base + idx, local). The index must be below
    /// [`len`](OArray::len): it is secret, so nothing checks it.
    pub fn addr(self, idx: Secret, me: PartyId) -> Secret {
        idx.add_public(Fp::from_u64(self.base as u64), me)
    }
}

/// Where a party's costs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// Engine and DORAM setup (pairwise seeds), public sizes.
    Setup,
    /// Sharing the inputs.
    Input,
    /// The engine's input-independent preprocessing: random bits for one-hot vectors.
    Bits,
    /// The DORAM's input-independent preprocessing (when run up front).
    Preprocess,
    /// DORAM Init.
    Init,
    /// DORAM accesses (with the conversion of their results to engine shares).
    Oram,
    /// The CPU step: engine work between accesses.
    Cpu,
    /// Opening the outputs.
    Output,
}

impl Part {
    /// Every part, in report order.
    pub const ALL: [Part; 8] = [
        Part::Setup,
        Part::Input,
        Part::Bits,
        Part::Preprocess,
        Part::Init,
        Part::Oram,
        Part::Cpu,
        Part::Output,
    ];

    /// The part's name, also the session phase its messages are counted under (a backend may
    /// set finer phases of its own inside an access).
    pub fn name(self) -> &'static str {
        match self {
            Part::Setup => "setup",
            Part::Input => "input",
            Part::Bits => "bits",
            Part::Preprocess => "preprocess",
            Part::Init => "init",
            Part::Oram => "oram",
            Part::Cpu => "cpu",
            Part::Output => "output",
        }
    }
}

/// One party's cost of one [`Part`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Wall-clock time spent in it.
    pub time: Duration,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Messages sent.
    pub msgs_sent: u64,
    /// Rounds (advance of the session's Lamport clock).
    pub rounds: u64,
    /// DORAM accesses.
    pub accesses: u64,
}

impl Cost {
    fn add(&mut self, o: &Cost) {
        self.time += o.time;
        self.bytes_sent += o.bytes_sent;
        self.msgs_sent += o.msgs_sent;
        self.rounds += o.rounds;
        self.accesses += o.accesses;
    }
}

/// One party's costs, per [`Part`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    parts: [Cost; 8],
}

impl Meter {
    /// The cost of `part`.
    pub fn get(&self, part: Part) -> Cost {
        self.parts[part as usize]
    }

    /// Adds what happened between two snapshots to `part`.
    pub(crate) fn charge(&mut self, part: Part, t0: &Snapshot, t1: &Snapshot, accesses: u64) {
        self.parts[part as usize].add(&Cost {
            time: t1.at - t0.at,
            bytes_sent: t1.bytes - t0.bytes,
            msgs_sent: t1.msgs - t0.msgs,
            rounds: t1.rounds - t0.rounds,
            accesses,
        });
    }

    /// The sum over all parts.
    pub fn total(&self) -> Cost {
        let mut t = Cost::default();
        for c in &self.parts {
            t.add(c);
        }
        t
    }
}

impl Snapshot {
    /// The session's counters now.
    pub(crate) fn of(session: &Session) -> Snapshot {
        let s = session.stats().total().sum();
        Snapshot {
            at: Instant::now(),
            bytes: s.bytes_sent,
            msgs: s.msgs_sent,
            rounds: session.rounds(),
        }
    }
}

enum Link<D> {
    Direct(Box<Session>),
    Oram(D),
    Lost,
}

/// One party's secure RAM machine: the engine, the DORAM (after [`boot`](Machine::boot)) and
/// the memory layout. See the [module documentation](self) and the guide in the
/// [crate documentation](crate).
pub struct Machine<D> {
    engine: Engine,
    link: Link<D>,
    cells: Vec<Additive<Fp>>,
    oram_seed: Seed,
    meter: Meter,
    poisoned: bool,
}

impl<D> core::fmt::Debug for Machine<D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let state = match self.link {
            Link::Direct(_) => "building",
            Link::Oram(_) => "booted",
            Link::Lost => "lost",
        };
        f.debug_struct("Machine")
            .field("me", &self.engine.me())
            .field("state", &state)
            .field("cells", &self.cells.len())
            .finish_non_exhaustive()
    }
}

pub(crate) struct Snapshot {
    at: Instant,
    bytes: u64,
    msgs: u64,
    rounds: u64,
}

impl<D: Backend> Machine<D> {
    /// Sets up the engine on `session` (one round) with randomness derived from `seed`; the
    /// DORAM is created later by [`boot`](Machine::boot), on the same session.
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn setup(mut session: Session, seed: Seed) -> Result<Self, ProgramError> {
        let mut prg = AesPrg::new(seed);
        let engine_seed = prg.next_seed();
        let oram_seed = prg.next_seed();
        let t0 = Self::snap(&session);
        session.set_phase(Part::Setup.name());
        let engine = Engine::setup(&mut session, engine_seed)?;
        let mut m = Machine {
            engine,
            link: Link::Direct(Box::new(session)),
            cells: Vec::new(),
            oram_seed,
            meter: Meter::default(),
            poisoned: false,
        };
        m.charge(Part::Setup, t0, 0);
        Ok(m)
    }

    fn snap(session: &Session) -> Snapshot {
        Snapshot::of(session)
    }

    fn charge(&mut self, part: Part, t0: Snapshot, accesses: u64) {
        let Some(session) = self.session() else {
            return;
        };
        let t1 = Self::snap(session);
        self.meter.charge(part, &t0, &t1, accesses);
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.engine.me()
    }

    /// The session (statistics, transcript), if it has not been lost to a failed boot.
    pub fn session(&self) -> Option<&Session> {
        match &self.link {
            Link::Direct(s) => Some(s),
            Link::Oram(d) => Some(d.session()),
            Link::Lost => None,
        }
    }

    /// The session, mutably (transcript recording, timeouts) — not for messages of the
    /// program's own.
    pub fn session_mut(&mut self) -> Option<&mut Session> {
        match &mut self.link {
            Link::Direct(s) => Some(s),
            Link::Oram(d) => Some(d.session_mut()),
            Link::Lost => None,
        }
    }

    /// The engine (pool size, counters).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The costs so far, per [`Part`].
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Whether the backend hides the type of each access ([`OpVisibility::Hidden`]).
    pub fn hides_op_type() -> bool {
        D::OP_VISIBILITY == OpVisibility::Hidden
    }

    /// Whether [`boot`](Machine::boot) has run.
    pub fn is_booted(&self) -> bool {
        matches!(self.link, Link::Oram(_))
    }

    /// Runs `f` under `part`: phase label, costs, poisoning on failure.
    fn run<T>(
        &mut self,
        part: Part,
        accesses: u64,
        f: impl FnOnce(&mut Self) -> Result<T, ProgramError>,
    ) -> Result<T, ProgramError> {
        if self.poisoned {
            return Err(ProgramError::Oram(OramError::Poisoned));
        }
        let Some(session) = self.session_mut() else {
            return Err(ProgramError::Oram(OramError::Poisoned));
        };
        session.set_phase(part.name());
        let t0 = Self::snap(session);
        let r = f(self);
        match &r {
            Err(e) if !is_misuse(e) => self.poisoned = true,
            _ => {}
        }
        self.charge(part, t0, accesses);
        r
    }

    /// Runs a batch of engine operations (the CPU step) over the machine's session; costs go
    /// to [`Part::Cpu`].
    ///
    /// # Errors
    /// The engine's errors.
    pub fn cpu<T>(
        &mut self,
        f: impl FnOnce(&mut Online<'_>) -> Result<T, MpcError>,
    ) -> Result<T, ProgramError> {
        self.engine_in(Part::Cpu, f)
    }

    /// As [`cpu`](Machine::cpu), with the costs charged to `part` (e.g. [`Part::Input`] or
    /// [`Part::Output`]).
    ///
    /// # Errors
    /// The engine's errors.
    pub fn engine_in<T>(
        &mut self,
        part: Part,
        f: impl FnOnce(&mut Online<'_>) -> Result<T, MpcError>,
    ) -> Result<T, ProgramError> {
        self.run(part, 0, |m| {
            let Machine { engine, link, .. } = m;
            let session = match link {
                Link::Direct(s) => s,
                Link::Oram(d) => d.session_mut(),
                Link::Lost => return Err(ProgramError::Oram(OramError::Poisoned)),
            };
            Ok(f(&mut engine.on(session))?)
        })
    }

    /// One value input to the engine by `dealer`, who passes `Some(value)` (the others pass
    /// `None`): one round; costs go to [`Part::Input`].
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if a non-dealer passes a value or the dealer none; transport
    /// and engine errors.
    pub fn input_scalar(
        &mut self,
        dealer: PartyId,
        value: Option<u64>,
    ) -> Result<Secret, ProgramError> {
        if (dealer == self.me()) != value.is_some() {
            return Err(ProgramError::Misuse(
                "the dealer, and only it, passes the value",
            ));
        }
        let own = value.map(|v| [v]);
        let v = self.engine_in(Part::Input, |on| {
            on.input(match &own {
                Some(v) => Input::Own(&v[..]),
                None => Input::Peer { dealer, count: 1 },
            })
        })?;
        Ok(v[0])
    }

    /// `len` values input to the engine by `dealer`, who passes `Some(values)` (the others
    /// pass `None`): one round; costs go to [`Part::Input`].
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if a non-dealer passes values or the dealer's count is not
    /// `len`; transport and engine errors.
    pub fn input_vector(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<Vec<Secret>, ProgramError> {
        match (dealer == self.me(), values) {
            (true, Some(v)) if v.len() == len => {}
            (false, None) => {}
            _ => {
                return Err(ProgramError::Misuse(
                    "the dealer passes exactly `len` values, the others none",
                ));
            }
        }
        self.engine_in(Part::Input, |on| {
            on.input(match values {
                Some(v) => Input::Own(v),
                None => Input::Peer { dealer, count: len },
            })
        })
    }

    /// Makes `bits` random shared bits for the engine's one-hot vectors (see
    /// [`Engine::preprocess`]); costs go to [`Part::Bits`].
    ///
    /// # Errors
    /// A transport fault or a peer's malformed message.
    pub fn preprocess_bits(&mut self, bits: usize) -> Result<(), ProgramError> {
        self.run(Part::Bits, 0, |m| {
            let Machine { engine, link, .. } = m;
            let session = match link {
                Link::Direct(s) => s,
                Link::Oram(d) => d.session_mut(),
                Link::Lost => return Err(ProgramError::Oram(OramError::Poisoned)),
            };
            Ok(engine.preprocess(session, bits)?)
        })
    }

    // ---------------------------------------------------------------------------------------
    // Memory layout (before boot).

    fn alloc(&mut self, shares: Vec<Additive<Fp>>) -> Result<OArray, ProgramError> {
        if self.is_booted() {
            return Err(ProgramError::Misuse("arrays must be allocated before boot"));
        }
        let a = OArray {
            base: self.cells.len(),
            len: shares.len(),
        };
        self.cells.extend(shares);
        Ok(a)
    }

    /// A new array holding public values (no communication).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] after [`boot`](Machine::boot).
    pub fn alloc_public(
        &mut self,
        values: impl IntoIterator<Item = u64>,
    ) -> Result<OArray, ProgramError> {
        let me = self.me();
        let shares = values
            .into_iter()
            .map(|v| Additive::public(Fp::from_u64(v), me))
            .collect();
        self.alloc(shares)
    }

    /// A new array holding public field elements (e.g. sentinels above 2^64).
    ///
    /// # Errors
    /// As [`alloc_public`](Machine::alloc_public).
    pub fn alloc_public_fp(
        &mut self,
        values: impl IntoIterator<Item = Fp>,
    ) -> Result<OArray, ProgramError> {
        let me = self.me();
        let shares = values
            .into_iter()
            .map(|v| Additive::public(v, me))
            .collect();
        self.alloc(shares)
    }

    /// A new array of `len` copies of the public `value`.
    ///
    /// # Errors
    /// As [`alloc_public`](Machine::alloc_public).
    pub fn alloc_fill(&mut self, len: usize, value: u64) -> Result<OArray, ProgramError> {
        self.alloc_public(std::iter::repeat_n(value, len))
    }

    /// A new array of `len` values owned by `dealer`, who passes `Some(values)`; the others
    /// pass `None`. No communication: the dealer's share is the value minus the two shares the
    /// others derive from the PRGs they share with it.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if the dealer's value count is not `len`, or a non-dealer passes
    /// values; as [`alloc_public`](Machine::alloc_public).
    pub fn alloc_input(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<OArray, ProgramError> {
        if self.is_booted() {
            return Err(ProgramError::Misuse("arrays must be allocated before boot"));
        }
        let me = self.me();
        let own: Vec<Fp>;
        let input = match (dealer == me, values) {
            (true, Some(v)) if v.len() == len => {
                own = v.iter().map(|&x| Fp::from_u64(x)).collect();
                Input::Own(&own[..])
            }
            (false, None) => Input::Peer { dealer, count: len },
            _ => {
                return Err(ProgramError::Misuse(
                    "the dealer passes exactly `len` values, the others none",
                ));
            }
        };
        let shares = self.engine.party_mut().input_additive(input)?;
        self.alloc(shares)
    }

    /// A new array holding secret values of the engine (local conversion).
    ///
    /// # Errors
    /// As [`alloc_public`](Machine::alloc_public).
    pub fn alloc_secret(&mut self, values: &[Secret]) -> Result<OArray, ProgramError> {
        let add = Secret::to_additive_vec(values);
        let shares = self.engine.party_mut().reshare(&add);
        self.alloc(shares)
    }

    /// Creates the DORAM over the whole memory (at least [`Protocol::MIN_LEN`] words; padding
    /// is zero), preprocesses `accesses` accesses if [`Protocol::preprocess_upfront`] agrees,
    /// and loads the memory (DORAM Init). From then on the session's frame limit is the larger
    /// of the backend's [`max_message_bytes`](DistributedOram::max_message_bytes) and the
    /// engine's [`MAX_FRAME_BYTES`](doram_mpc::MAX_FRAME_BYTES).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if already booted; the backend's errors.
    pub fn boot(&mut self, accesses: usize) -> Result<(), ProgramError> {
        if self.poisoned {
            return Err(ProgramError::Oram(OramError::Poisoned));
        }
        let session = match std::mem::replace(&mut self.link, Link::Lost) {
            Link::Direct(s) => *s,
            other => {
                self.link = other;
                return Err(ProgramError::Misuse("boot runs once"));
            }
        };
        let n = self.cells.len().max(D::MIN_LEN);
        self.cells.resize(n, Additive::ZERO);
        let mut session = session;
        session.set_phase(Part::Setup.name());
        let t0 = Self::snap(&session);
        // One thread per party: the machine's parties share the host with the engine.
        let oram = D::setup(session, n, 1, self.oram_seed);
        let oram = match oram {
            Ok(o) => o,
            Err(e) => {
                self.poisoned = true;
                return Err(e.into());
            }
        };
        // From here on every frame is an engine frame or a backend message: a peer can no
        // longer make this party buffer a frame beyond the larger of the two.
        let limit = oram.max_message_bytes().max(doram_mpc::MAX_FRAME_BYTES);
        let mut oram = oram;
        oram.session_mut()
            .limit_frame_bytes(u32::try_from(limit).unwrap_or(u32::MAX));
        self.link = Link::Oram(oram);
        self.charge(Part::Setup, t0, 0);
        if accesses > 0 && D::preprocess_upfront(n, accesses) {
            self.run(Part::Preprocess, 0, |m| {
                m.with_oram(|d| d.preprocess(accesses))
            })?;
        }
        let cells = std::mem::take(&mut self.cells);
        self.run(Part::Init, 0, |m| m.with_oram(|d| d.init(&cells)))
    }

    fn with_oram<T>(
        &mut self,
        f: impl FnOnce(&mut D) -> Result<T, OramError>,
    ) -> Result<T, ProgramError> {
        match &mut self.link {
            Link::Oram(d) => Ok(f(d)?),
            _ => Err(ProgramError::Misuse("the memory is not booted")),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Accesses.

    /// Fresh additive shares of secret values, for the DORAM.
    fn additive(&mut self, x: &[Secret]) -> Vec<Additive<Fp>> {
        let add = Secret::to_additive_vec(x);
        self.engine.party_mut().reshare(&add)
    }

    /// Reads the words at the secret addresses, one access each, as one batch
    /// ([`SharedMemory::read_many`](doram_oram::SharedMemory::read_many): Duoram shares its
    /// rounds), and converts the results in one round. Costs go to [`Part::Oram`].
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] before [`boot`](Machine::boot); the backend's and engine's
    /// errors.
    pub fn read_addrs(&mut self, addrs: &[Secret]) -> Result<Vec<Secret>, ProgramError> {
        if !self.is_booted() {
            return Err(ProgramError::Misuse("the memory is not booted"));
        }
        self.run(Part::Oram, addrs.len() as u64, |m| {
            let add = m.additive(addrs);
            // One batch: a backend that shares rounds between reads (Duoram) does so.
            let out = m.with_oram(|d| d.read_many(&add))?;
            let Machine { engine, link, .. } = m;
            let Link::Oram(d) = link else {
                return Err(ProgramError::Misuse("the memory is not booted"));
            };
            Ok(engine.on(d.session_mut()).from_additive(&out)?)
        })
    }

    /// Reads the word at a secret address of the machine's memory (see [`OArray::addr`]).
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn read_addr(&mut self, addr: Secret) -> Result<Secret, ProgramError> {
        Ok(self.read_addrs(&[addr])?[0])
    }

    /// Reads `a[idx]` for a secret `idx < a.len()`: one access and one round.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn read(&mut self, a: OArray, idx: Secret) -> Result<Secret, ProgramError> {
        self.read_addr(a.addr(idx, self.me()))
    }

    /// Reads several elements, one access each, converting the results in one round.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn read_many(&mut self, reads: &[(OArray, Secret)]) -> Result<Vec<Secret>, ProgramError> {
        let me = self.me();
        let addrs: Vec<Secret> = reads.iter().map(|&(a, i)| a.addr(i, me)).collect();
        self.read_addrs(&addrs)
    }

    /// Reads `a[i]` for a public `i`. The DORAM still performs a full access (the memory lives
    /// only there); what is public is only the address.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if `i ≥ a.len()` (before anything is sent); as
    /// [`read_addrs`](Machine::read_addrs).
    pub fn read_public(&mut self, a: OArray, i: usize) -> Result<Secret, ProgramError> {
        if i >= a.len {
            return Err(ProgramError::Misuse("public index out of range"));
        }
        let me = self.me();
        self.read_addr(Secret::public(Fp::from_u64((a.base + i) as u64), me))
    }

    fn access(&mut self, ins: InstructionShare<Fp>) -> Result<(), ProgramError> {
        if !self.is_booted() {
            return Err(ProgramError::Misuse("the memory is not booted"));
        }
        self.run(Part::Oram, 1, |m| {
            // The returned old value is not needed: drop it unopened.
            m.with_oram(|d| d.access(&ins)).map(|_| ())
        })
    }

    /// Writes `val` to the secret address `addr`: one access.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn write_addr(&mut self, addr: Secret, val: Secret) -> Result<(), ProgramError> {
        let v = self.additive(&[addr, val]);
        self.access(InstructionShare::write(v[0], v[1]))
    }

    /// `a[idx] := val` for a secret `idx < a.len()`: one access.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn write(&mut self, a: OArray, idx: Secret, val: Secret) -> Result<(), ProgramError> {
        self.write_addr(a.addr(idx, self.me()), val)
    }

    /// `if cond { a[idx] := val }`, with the same public access sequence whatever `cond`
    /// is: one access with a secret op on a backend that hides the op type; a read, a select
    /// (one round) and a write on one that reveals it.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn cond_write(
        &mut self,
        a: OArray,
        idx: Secret,
        cond: SecretBit,
        val: Secret,
    ) -> Result<(), ProgramError> {
        self.cond_write_addr(a.addr(idx, self.me()), cond, val, None)
    }

    /// [`cond_write`](Machine::cond_write) when the program already holds the current value
    /// `old` of `a[idx]`: on a revealing backend the read is skipped (a select and a write).
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn cond_write_known(
        &mut self,
        a: OArray,
        idx: Secret,
        cond: SecretBit,
        val: Secret,
        old: Secret,
    ) -> Result<(), ProgramError> {
        self.cond_write_addr(a.addr(idx, self.me()), cond, val, Some(old))
    }

    /// `if cond { M[addr] := val }` at a secret address of the machine's memory: one access
    /// with a secret op on a backend that hides the op type; on one that reveals it, a read
    /// (unless the current value is passed as `old`), a select and a write.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn cond_write_addr(
        &mut self,
        addr: Secret,
        cond: SecretBit,
        val: Secret,
        old: Option<Secret>,
    ) -> Result<(), ProgramError> {
        if Self::hides_op_type() {
            let v = self.additive(&[cond.value(), addr, val]);
            return self.access(InstructionShare::hidden(v[0], v[1], v[2]));
        }
        let old = match old {
            Some(o) => o,
            None => self.read_addr(addr)?,
        };
        let new = self.cpu(|on| on.select_many(&[(cond, val, old)]))?;
        self.write_addr(addr, new[0])
    }

    /// `a[idx] := f(a[idx])`: a read, the CPU step `f`, and a write, on every backend. Returns
    /// the old value.
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs), and `f`'s.
    pub fn update(
        &mut self,
        a: OArray,
        idx: Secret,
        f: impl FnOnce(&mut Online<'_>, Secret) -> Result<Secret, MpcError>,
    ) -> Result<Secret, ProgramError> {
        let old = self.read(a, idx)?;
        let new = self.cpu(|on| f(on, old))?;
        self.write(a, idx, new)?;
        Ok(old)
    }

    /// Fresh shares of whole arrays, by one DORAM Get Memory (Ramen Fig. 13); costs go to
    /// [`Part::Output`].
    ///
    /// # Errors
    /// As [`read_addrs`](Machine::read_addrs).
    pub fn snapshot(&mut self, arrays: &[OArray]) -> Result<Vec<Vec<Secret>>, ProgramError> {
        if !self.is_booted() {
            return Err(ProgramError::Misuse("the memory is not booted"));
        }
        self.run(Part::Output, 0, |m| {
            let mem = m.with_oram(|d| d.memory())?;
            let mut flat = Vec::new();
            for a in arrays {
                let part = mem
                    .get(a.base..a.base + a.len)
                    .ok_or(ProgramError::Misuse("array outside the memory"))?;
                flat.extend_from_slice(part);
            }
            let Machine { engine, link, .. } = m;
            let Link::Oram(d) = link else {
                return Err(ProgramError::Misuse("the memory is not booted"));
            };
            let rep = engine.on(d.session_mut()).from_additive(&flat)?;
            let mut out = Vec::with_capacity(arrays.len());
            let mut it = rep.into_iter();
            for a in arrays {
                out.push(it.by_ref().take(a.len).collect());
            }
            Ok(out)
        })
    }
}

fn is_misuse(e: &ProgramError) -> bool {
    match e {
        ProgramError::Misuse(_) => true,
        ProgramError::Mpc(MpcError::ApiMisuse(_)) => true,
        ProgramError::Oram(o) => o.is_misuse(),
        _ => false,
    }
}

/// What a program needs, computed from its public sizes before it runs: DORAM accesses,
/// comparisons, and the pool bits its one-hot vectors consume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// DORAM accesses.
    pub accesses: usize,
    /// Comparisons (`lt`, `eq` or `cmp`).
    pub comparisons: usize,
    /// Random bits of the engine's pool that one-hot vectors consume (comparisons take
    /// none).
    pub bits: usize,
}

/// The number of bits of `x` (at least 1): values `0..=x` fit in this many bits.
pub fn bits_for(x: u64) -> u32 {
    (64 - x.leading_zeros()).max(1)
}

/// An opened field element as an integer below `bound`.
///
/// # Errors
/// [`ProgramError::BadOutput`] if it is not.
pub fn to_int(x: Fp, bound: u128, what: &'static str) -> Result<u64, ProgramError> {
    let v = x.to_u128();
    if v < bound {
        u64::try_from(v).map_err(|_| ProgramError::BadOutput(what))
    } else {
        Err(ProgramError::BadOutput(what))
    }
}
