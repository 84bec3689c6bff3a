//! [`Machine2`]: one party's secure RAM machine between **two** parties, with no third party
//! anywhere — the setting of Gordon et al. (CCS 2012). Programs written against [`Ram`] run on
//! it unchanged.
//!
//! # Words and the CPU step
//! Words are additive shares over F_p between `P0` and `P1` ([`doram_twopc::arith`]): linear
//! arithmetic is local, products are Beaver products with triples from OT extension,
//! comparisons and one-hot vectors are garbled circuits (`P0` garbles, `P1` evaluates) on the
//! two shares whose outputs stay labels and become shares by one product each.
//!
//! # The memory
//! The whole memory lives as wire labels under the engine's garbling Δ: `P0` holds each bit's
//! zero label, `P1` its active label. An access converts the address (and, for a write, the
//! condition and the value) from shares to labels (A2B: one circuit that adds the two shares
//! mod p), runs GKK12's linear-scan memory ([`doram_gkk12::scan`], the paper's Yao baseline:
//! every entry selected and conditionally overwritten, 2·n·128 + n AND gates) and converts the
//! entry read back to shares (B2A: `P0` inputs a random r, one circuit computes v − r mod p and
//! `P0` decodes it to `P1` alone). The write bit is an input of the circuit, so an access never
//! reveals whether it reads or writes ([`Ram::hides_op_type`] is true).
//!
//! Memories up to [`MAX_SCAN_WORDS`] words; the scan's cost grows with the memory, so the
//! dense programs (Dijkstra, dense BFS), which keep their data in the engine rather than in
//! memory, are the ones that run at practical sizes on it. The same machine holds its memory
//! in 2P-Duoram ([`crate::two_duoram`]) or in GKK12's tree ORAM ([`crate::two_tree`]).
//!
//! # Shuffles
//! [`Ram::shuffle`] composes two permutations, one drawn by each party, each applied through a
//! Beneš network of OT switches on the additive shares ([`doram_twopc::shuffle`]): neither
//! party knows the composition.
//!
//! Semi-honest, as every part it is built from. Every message's size follows from public
//! sizes and is checked before it is used.

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_gkk12::driver::AccessLabels;
use doram_gkk12::scan::ScanCircuits;
use doram_mpc::Counters;
use doram_net::Session;
use doram_prim::AesPrg;
use doram_prim::aes::Block;
use doram_twopc::arith::{Arith2, DualBit, Share};
use doram_twopc::shuffle::{Perm, shuffle_shares};

use crate::binary_search::AccessWork;
use crate::error::ProgramError;
use crate::machine::{Meter, OArray, Part, Snapshot};
use crate::ram::Ram;
use crate::roles::PartyRun;

/// The largest memory [`Machine2::boot`] accepts: 2^14 words (an access then garbles about
/// 4.2 M AND gates, 134 MB of tables).
pub const MAX_SCAN_WORDS: usize = 1 << 14;

/// Values converted to labels per call when the memory is loaded (bounds the labels in flight).
const LOAD_CHUNK: usize = 1024;

/// Bits of a word in memory: a whole element of F_p.
const WORD_BITS: usize = 128;

/// A secret bit of the two-party machine: an additive share of 0 or 1, with its XOR share
/// where the machine has one (comparison results, public bits and their negations), which
/// makes a select on it two oblivious transfers instead of a Beaver product.
#[derive(Clone, Copy, Debug)]
pub struct ShareBit {
    add: Share,
    dual: Option<DualBit>,
}

impl ShareBit {
    /// The bit as a word.
    pub fn value(self) -> Share {
        self.add
    }

    fn plain(add: Share) -> ShareBit {
        ShareBit { add, dual: None }
    }

    fn dual(d: DualBit) -> ShareBit {
        ShareBit {
            add: d.share(),
            dual: Some(d),
        }
    }
}

/// What a memory of the two-party machine works with: the engine, the session and the
/// machine's randomness.
pub struct Ctx<'a> {
    arith: &'a mut Arith2,
    session: &'a mut Session,
    rng: &'a mut AesPrg,
}

impl Ctx<'_> {
    /// `b ? x : y` for each triple (see [`Machine2`]'s select).
    pub(crate) fn select(
        &mut self,
        triples: &[(ShareBit, Share, Share)],
    ) -> Result<Vec<Share>, ProgramError> {
        select_with(self.arith, self.session, triples)
    }

    /// The engine, the session and the randomness, borrowed apart.
    pub(crate) fn parts(&mut self) -> (&mut Arith2, &mut Session, &mut AesPrg) {
        (self.arith, self.session, self.rng)
    }
}

/// The memory of a [`Machine2`]: how it is loaded, read and written between the two parties.
/// [`ScanMemory`] (wire labels and a garbled linear scan, GKK12's baseline) and
/// [`crate::two_duoram::DuoramMemory`] (2P-Duoram) and [`crate::two_tree::TreeMemory`] (GKK12's
/// tree ORAM) implement it.
pub trait Memory2: Sized {
    /// The backend's name in reports.
    const BACKEND: &'static str;
    /// The work of one access.
    const ACCESS_WORK: AccessWork;

    /// Loads the memory from the machine's cells (this party's shares), for a program that
    /// makes `accesses` accesses.
    ///
    /// # Errors
    /// A memory the backend does not support; transport and engine failures.
    fn boot(ctx: &mut Ctx<'_>, cells: Vec<Share>, accesses: usize) -> Result<Self, ProgramError>;

    /// [`boot`](Memory2::boot), told which cells are publicly 0 (`public_zero[i]`: cell `i`
    /// was allocated as the public value 0), which a memory may then leave out of its load.
    ///
    /// # Errors
    /// As [`boot`](Memory2::boot).
    fn boot_cells(
        ctx: &mut Ctx<'_>,
        cells: Vec<Share>,
        public_zero: &[bool],
        accesses: usize,
    ) -> Result<Self, ProgramError> {
        let _ = public_zero;
        Self::boot(ctx, cells, accesses)
    }

    /// The number of words.
    fn len(&self) -> usize;

    /// Whether the memory has no words (never, once booted).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the words at `addrs`, in order.
    ///
    /// # Errors
    /// Transport and engine failures; the peer's malformed messages.
    fn read(&mut self, ctx: &mut Ctx<'_>, addrs: &[Share]) -> Result<Vec<Share>, ProgramError>;

    /// Writes `val` at `addr` if `cond` (always if `None`); `old` is the word there if the
    /// program knows it.
    ///
    /// # Errors
    /// As [`read`](Memory2::read).
    fn write(
        &mut self,
        ctx: &mut Ctx<'_>,
        addr: Share,
        cond: Option<ShareBit>,
        val: Share,
        old: Option<Share>,
    ) -> Result<(), ProgramError>;

    /// This party's shares of the words of each array.
    ///
    /// # Errors
    /// As [`read`](Memory2::read).
    fn snapshot(
        &mut self,
        ctx: &mut Ctx<'_>,
        arrays: &[OArray],
    ) -> Result<Vec<Vec<Share>>, ProgramError>;
}

/// The memory after boot: the scan's circuits and this party's labels of every bit.
pub struct ScanMemory {
    circuits: ScanCircuits,
    labels: Vec<Block>,
    addr_bits: usize,
    len: usize,
}

/// The two-party machine with the garbled linear scan as its memory (GKK12's baseline).
pub type Machine2 = Machine2With<ScanMemory>;

/// One party's two-party RAM machine: see the [module documentation](self). `M` is its memory:
/// the garbled linear scan ([`Machine2`]) or 2P-Duoram
/// ([`crate::two_duoram::Machine2Duoram`]) or GKK12's tree ORAM
/// ([`crate::two_tree::Machine2Tree`]).
pub struct Machine2With<M: Memory2> {
    me: PartyId,
    arith: Arith2,
    session: Session,
    rng: AesPrg,
    cells: Vec<Share>,
    /// Whether each cell was allocated as the public value 0.
    public_zero: Vec<bool>,
    memory: Option<M>,
    meter: Meter,
    counters: Counters,
    poisoned: bool,
}

impl<M: Memory2> core::fmt::Debug for Machine2With<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Machine2")
            .field("me", &self.me)
            .field("booted", &self.memory.is_some())
            .field("cells", &self.cells.len())
            .finish_non_exhaustive()
    }
}

/// The number of address bits of a memory of `n` words (at least 1).
fn address_bits(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1) as usize
}

impl<M: Memory2> Machine2With<M> {
    /// Sets up the engine on a two-party `session` (a common seed and OT extension both ways)
    /// with randomness derived from `seed`.
    ///
    /// # Errors
    /// [`ProgramError::TwoParty`] unless the session has two parties; transport failures; the
    /// peer's malformed set-up messages.
    pub fn setup(mut session: Session, seed: Seed) -> Result<Machine2With<M>, ProgramError> {
        let mut prg = AesPrg::new(seed);
        let mut engine_rng = AesPrg::new(prg.next_seed());
        let t0 = Snapshot::of(&session);
        session.set_phase(Part::Setup.name());
        let arith = Arith2::setup(&mut session, &mut engine_rng)?;
        let mut m = Machine2With {
            me: session.me(),
            arith,
            session,
            rng: prg,
            cells: Vec::new(),
            public_zero: Vec::new(),
            memory: None,
            meter: Meter::default(),
            counters: Counters::default(),
            poisoned: false,
        };
        let t1 = Snapshot::of(&m.session);
        m.meter.charge(Part::Setup, &t0, &t1, 0);
        Ok(m)
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// The session (statistics, transcript).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, mutably (transcript recording, timeouts) — not for messages of the
    /// program's own.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// The costs so far, per [`Part`].
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// What the engine has done: products (including those of comparisons and one-hot
    /// vectors) and comparisons.
    pub fn counters(&self) -> Counters {
        let a = self.arith.counters();
        Counters {
            products: a.products,
            inline_refills: a.inline_refills,
            ..self.counters
        }
    }

    /// Whether [`boot`](Machine2::boot) has run.
    pub fn is_booted(&self) -> bool {
        self.memory.is_some()
    }

    /// Runs `f` under `part`: phase label, costs, poisoning on failure.
    fn run<T>(
        &mut self,
        part: Part,
        accesses: u64,
        f: impl FnOnce(&mut Self) -> Result<T, ProgramError>,
    ) -> Result<T, ProgramError> {
        if self.poisoned {
            return Err(ProgramError::Misuse(
                "an earlier step failed; this machine can no longer be used",
            ));
        }
        self.session.set_phase(part.name());
        let t0 = Snapshot::of(&self.session);
        let r = f(self);
        if let Err(e) = &r
            && !matches!(e, ProgramError::Misuse(_))
        {
            self.poisoned = true;
        }
        let t1 = Snapshot::of(&self.session);
        self.meter.charge(part, &t0, &t1, accesses);
        r
    }

    // ---------------------------------------------------------------------------------------
    // Inputs and outputs.

    /// `len` values input by `dealer`, who passes `Some(values)` (the other passes `None`):
    /// no message (the shares come from the PRG both parties share).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if the dealer's count is not `len`, the other passes values or
    /// the dealer is not one of the two parties.
    pub fn input_vector(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<Vec<Share>, ProgramError> {
        let own: Option<Vec<Fp>> = values.map(|v| v.iter().map(|&x| Fp::from_u64(x)).collect());
        self.run(Part::Input, 0, |m| {
            m.arith.input(dealer, own.as_deref(), len).map_err(|_| {
                ProgramError::Misuse(
                    "the dealer (P0 or P1) passes exactly `len` values, the other none",
                )
            })
        })
    }

    /// One value input by `dealer` (see [`input_vector`](Machine2::input_vector)).
    ///
    /// # Errors
    /// As [`input_vector`](Machine2::input_vector).
    pub fn input_scalar(
        &mut self,
        dealer: PartyId,
        value: Option<u64>,
    ) -> Result<Share, ProgramError> {
        let v = value.map(|x| [x]);
        Ok(self.input_vector(dealer, v.as_ref().map(|v| &v[..]), 1)?[0])
    }

    /// Opens `values` to `receiver` only (one message from the other party); the receiver
    /// gets `Some(values)`.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] for a receiver outside the two parties; transport failures;
    /// the peer's malformed shares.
    pub fn open_to(
        &mut self,
        receiver: PartyId,
        values: &[Share],
    ) -> Result<Option<Vec<Fp>>, ProgramError> {
        if receiver.index() > 1 {
            return Err(ProgramError::Misuse("the receiver must be P0 or P1"));
        }
        self.run(Part::Output, 0, |m| {
            Ok(m.arith.open_to(&mut m.session, receiver, values)?)
        })
    }

    /// This party's run record: `output` at the receiver, costs, counters and the session's
    /// transcript and content digest if they were recorded.
    pub fn finish<T>(&mut self, output: Option<T>) -> PartyRun<T> {
        PartyRun {
            output,
            meter: self.meter.clone(),
            counters: self.counters(),
            transcript: self.session.take_transcript(),
            content_digest: self.session.content_digest(),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Memory layout (before boot).

    fn alloc(&mut self, shares: Vec<Share>) -> Result<OArray, ProgramError> {
        let secret = vec![false; shares.len()];
        self.alloc_marked(shares, secret)
    }

    /// [`alloc`](Machine2With::alloc) with which cells are the public value 0.
    fn alloc_marked(
        &mut self,
        shares: Vec<Share>,
        public_zero: Vec<bool>,
    ) -> Result<OArray, ProgramError> {
        if self.is_booted() {
            return Err(ProgramError::Misuse("arrays must be allocated before boot"));
        }
        let a = OArray::new(self.cells.len(), shares.len());
        self.cells.extend(shares);
        self.public_zero.extend(public_zero);
        Ok(a)
    }

    /// A new array holding public values (no communication).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] after [`boot`](Machine2::boot).
    pub fn alloc_public(
        &mut self,
        values: impl IntoIterator<Item = u64>,
    ) -> Result<OArray, ProgramError> {
        let me = self.me;
        let (shares, zero): (Vec<Share>, Vec<bool>) = values
            .into_iter()
            .map(|v| (Share::public(Fp::from_u64(v), me), v == 0))
            .unzip();
        self.alloc_marked(shares, zero)
    }

    /// A new array of `len` copies of the public `value`.
    ///
    /// # Errors
    /// As [`alloc_public`](Machine2::alloc_public).
    pub fn alloc_fill(&mut self, len: usize, value: u64) -> Result<OArray, ProgramError> {
        self.alloc_public(std::iter::repeat_n(value, len))
    }

    /// A new array of `len` values owned by `dealer` (no communication).
    ///
    /// # Errors
    /// As [`input_vector`](Machine2::input_vector); as [`alloc_public`](Machine2::alloc_public).
    pub fn alloc_input(
        &mut self,
        dealer: PartyId,
        values: Option<&[u64]>,
        len: usize,
    ) -> Result<OArray, ProgramError> {
        if self.is_booted() {
            return Err(ProgramError::Misuse("arrays must be allocated before boot"));
        }
        let shares = self.input_vector(dealer, values, len)?;
        self.alloc(shares)
    }

    /// A new array holding secret words.
    ///
    /// # Errors
    /// As [`alloc_public`](Machine2::alloc_public).
    pub fn alloc_secret(&mut self, values: &[Share]) -> Result<OArray, ProgramError> {
        self.alloc(values.to_vec())
    }

    /// Loads the memory ([`Memory2::boot`]).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if already booted; the memory's errors.
    pub fn boot(&mut self) -> Result<(), ProgramError> {
        self.boot_for(0)
    }

    /// Loads the memory ([`Memory2::boot`]) for a program that makes `accesses` accesses.
    ///
    /// # Errors
    /// As [`boot`](Machine2::boot).
    pub fn boot_for(&mut self, accesses: usize) -> Result<(), ProgramError> {
        if self.is_booted() {
            return Err(ProgramError::Misuse("boot runs once"));
        }
        let cells = std::mem::take(&mut self.cells);
        let public_zero = std::mem::take(&mut self.public_zero);
        let memory = self.run(Part::Init, 0, |m| {
            let mut ctx = m.ctx();
            M::boot_cells(&mut ctx, cells, &public_zero, accesses)
        })?;
        self.memory = Some(memory);
        Ok(())
    }

    /// Installs a memory made by `resume` (a state kept from an earlier run) in place of
    /// [`boot`](Machine2With::boot): nothing may be allocated before. Returns the whole
    /// memory as one array.
    pub(crate) fn boot_resumed(
        &mut self,
        resume: impl FnOnce(&mut Ctx<'_>) -> Result<M, ProgramError>,
    ) -> Result<OArray, ProgramError> {
        if self.is_booted() || !self.cells.is_empty() {
            return Err(ProgramError::Misuse(
                "a resumed memory replaces every allocation and the boot",
            ));
        }
        let memory = self.run(Part::Init, 0, |m| resume(&mut m.ctx()))?;
        let array = OArray::new(0, memory.len());
        self.memory = Some(memory);
        Ok(array)
    }

    /// The booted memory.
    pub(crate) fn memory(&self) -> Option<&M> {
        self.memory.as_ref()
    }

    fn ctx(&mut self) -> Ctx<'_> {
        Ctx {
            arith: &mut self.arith,
            session: &mut self.session,
            rng: &mut self.rng,
        }
    }

    /// Runs `f` on the booted memory.
    fn with_memory<T>(
        &mut self,
        part: Part,
        accesses: u64,
        f: impl FnOnce(&mut M, &mut Ctx<'_>) -> Result<T, ProgramError>,
    ) -> Result<T, ProgramError> {
        self.run(part, accesses, |m| {
            let Machine2With {
                arith,
                session,
                rng,
                memory,
                ..
            } = m;
            let mem = memory
                .as_mut()
                .ok_or(ProgramError::Misuse("the memory is not booted"))?;
            let mut ctx = Ctx {
                arith,
                session,
                rng,
            };
            f(mem, &mut ctx)
        })
    }

    fn ops<T>(
        &mut self,
        f: impl FnOnce(&mut Arith2, &mut Session) -> Result<T, doram_twopc::TwopcError>,
    ) -> Result<T, ProgramError> {
        self.run(Part::Cpu, 0, |m| Ok(f(&mut m.arith, &mut m.session)?))
    }

    /// `b ? x : y`: by oblivious transfers for the bits with an XOR share, by Beaver products
    /// for the others (which bits have one follows from the program's public operations).
    fn select(&mut self, triples: &[(ShareBit, Share, Share)]) -> Result<Vec<Share>, ProgramError> {
        self.run(Part::Cpu, 0, |m| {
            select_with(&mut m.arith, &mut m.session, triples)
        })
    }
}

/// [`Machine2`]'s select on an engine and session.
fn select_with(
    arith: &mut Arith2,
    session: &mut Session,
    triples: &[(ShareBit, Share, Share)],
) -> Result<Vec<Share>, ProgramError> {
    let (dual, plain): (Vec<usize>, Vec<usize>) =
        (0..triples.len()).partition(|&i| triples[i].0.dual.is_some());
    let d: Vec<(DualBit, Share, Share)> = dual
        .iter()
        .filter_map(|&i| triples[i].0.dual.map(|b| (b, triples[i].1, triples[i].2)))
        .collect();
    let p: Vec<(Share, Share, Share)> = plain
        .iter()
        .map(|&i| (triples[i].0.add, triples[i].1, triples[i].2))
        .collect();
    let rd = arith.select_dual_many(session, &d)?;
    let rp = arith.select_many(session, &p)?;
    let mut out = vec![Share::default(); triples.len()];
    for (i, v) in dual.into_iter().zip(rd).chain(plain.into_iter().zip(rp)) {
        out[i] = v;
    }
    Ok(out)
}

impl<M: Memory2> Ram for Machine2With<M> {
    type Word = Share;
    type Bit = ShareBit;

    fn constant(&self, x: Fp) -> Share {
        self.arith.constant(x)
    }

    fn public_bit(&self, b: bool) -> ShareBit {
        ShareBit::dual(DualBit::public(b, self.me))
    }

    fn value(b: ShareBit) -> Share {
        b.add
    }

    fn assume_bit(x: Share) -> ShareBit {
        ShareBit::plain(x)
    }

    fn not(&self, b: ShareBit) -> ShareBit {
        match b.dual {
            Some(d) => ShareBit::dual(d.not(self.me)),
            None => ShareBit::plain(self.arith.constant(Fp::ONE) - b.add),
        }
    }

    fn mul_many(&mut self, pairs: &[(Share, Share)]) -> Result<Vec<Share>, ProgramError> {
        self.ops(|a, s| a.mul_many(s, pairs))
    }

    fn dot_many(&mut self, pairs: &[(&[Share], &[Share])]) -> Result<Vec<Share>, ProgramError> {
        let mut flat = Vec::new();
        for (x, y) in pairs {
            if x.len() != y.len() {
                return Err(ProgramError::Misuse(
                    "inner products of vectors of different lengths",
                ));
            }
            flat.extend(x.iter().copied().zip(y.iter().copied()));
        }
        let products = self.mul_many(&flat)?;
        let mut it = products.into_iter();
        Ok(pairs
            .iter()
            .map(|(x, _)| it.by_ref().take(x.len()).sum())
            .collect())
    }

    fn select_many(
        &mut self,
        triples: &[(ShareBit, Share, Share)],
    ) -> Result<Vec<Share>, ProgramError> {
        self.select(triples)
    }

    fn and_many(&mut self, pairs: &[(ShareBit, ShareBit)]) -> Result<Vec<ShareBit>, ProgramError> {
        let t: Vec<(ShareBit, Share, Share)> = pairs
            .iter()
            .map(|&(x, y)| (x, y.add, self.arith.constant(Fp::ZERO)))
            .collect();
        Ok(self.select(&t)?.into_iter().map(ShareBit::plain).collect())
    }

    fn or_many(&mut self, pairs: &[(ShareBit, ShareBit)]) -> Result<Vec<ShareBit>, ProgramError> {
        // x ∨ y = x ? 1 : y.
        let t: Vec<(ShareBit, Share, Share)> = pairs
            .iter()
            .map(|&(x, y)| (x, self.arith.constant(Fp::ONE), y.add))
            .collect();
        Ok(self.select(&t)?.into_iter().map(ShareBit::plain).collect())
    }

    fn lt_many(&mut self, pairs: &[(Share, Share)], k: u32) -> Result<Vec<ShareBit>, ProgramError> {
        self.counters.comparisons += pairs.len() as u64;
        let c = self.ops(|a, s| a.lt_many_dual(s, pairs, k))?;
        Ok(c.into_iter().map(ShareBit::dual).collect())
    }

    fn eq_many(&mut self, pairs: &[(Share, Share)], k: u32) -> Result<Vec<ShareBit>, ProgramError> {
        self.counters.comparisons += pairs.len() as u64;
        let c = self.ops(|a, s| a.eq_many_dual(s, pairs, k))?;
        Ok(c.into_iter().map(ShareBit::dual).collect())
    }

    fn cmp_many(
        &mut self,
        pairs: &[(Share, Share)],
        k: u32,
    ) -> Result<Vec<(ShareBit, ShareBit)>, ProgramError> {
        self.counters.comparisons += pairs.len() as u64;
        let c = self.ops(|a, s| a.cmp_many_dual(s, pairs, k))?;
        Ok(c.into_iter()
            .map(|(l, e)| (ShareBit::dual(l), ShareBit::dual(e)))
            .collect())
    }

    fn onehot_many(
        &mut self,
        xs: &[Share],
        k: u32,
        len: usize,
    ) -> Result<Vec<Vec<Share>>, ProgramError> {
        self.ops(|a, s| a.onehot_many(s, xs, k, len))
    }

    type Shuffle = Perm;

    fn new_shuffle(&mut self, n: usize) -> Result<Perm, ProgramError> {
        Ok(Perm::random(n, &mut self.rng))
    }

    fn shuffle(
        &mut self,
        sh: &Perm,
        vectors: Vec<Vec<Share>>,
        matrices: Vec<Vec<Share>>,
        inverse: bool,
    ) -> Result<(Vec<Vec<Share>>, Vec<Vec<Share>>), ProgramError> {
        let n = sh.len();
        if vectors.iter().any(|v| v.len() != n) || matrices.iter().any(|m| m.len() != n * n) {
            return Err(ProgramError::Misuse(
                "a shuffled vector has n entries and a matrix n²",
            ));
        }
        self.run(Part::Cpu, 0, |m| {
            let (nv, nm) = (vectors.len(), matrices.len());
            // Pass 1: entry i = (each vector's element i, each matrix's row i).
            let width = nv + nm * n;
            let mut entries = Vec::with_capacity(n * width);
            for i in 0..n {
                entries.extend(vectors.iter().map(|v| v[i].raw()));
                for mat in &matrices {
                    entries.extend(mat[i * n..(i + 1) * n].iter().map(|s| s.raw()));
                }
            }
            let moved = m.shuffle_entries(sh, entries, width, inverse)?;
            let mut vectors: Vec<Vec<Share>> = vec![Vec::with_capacity(n); nv];
            let mut rows: Vec<Vec<Fp>> = vec![Vec::with_capacity(n * n); nm];
            for e in moved.chunks_exact(width.max(1)).take(n) {
                for (v, &x) in vectors.iter_mut().zip(e) {
                    v.push(Share::from_raw(x));
                }
                for (k, r) in rows.iter_mut().enumerate() {
                    r.extend_from_slice(&e[nv + k * n..nv + (k + 1) * n]);
                }
            }
            if nm == 0 {
                return Ok((vectors, Vec::new()));
            }
            // Pass 2: the columns, as the rows of the transposes.
            let width = nm * n;
            let mut entries = Vec::with_capacity(n * width);
            for j in 0..n {
                for r in &rows {
                    entries.extend((0..n).map(|i| r[i * n + j]));
                }
            }
            let moved = m.shuffle_entries(sh, entries, width, inverse)?;
            let mut mats: Vec<Vec<Share>> = vec![vec![Share::default(); n * n]; nm];
            for (j, e) in moved.chunks_exact(width).enumerate() {
                for (k, mat) in mats.iter_mut().enumerate() {
                    for i in 0..n {
                        mat[i * n + j] = Share::from_raw(e[k * n + i]);
                    }
                }
            }
            Ok((vectors, mats))
        })
    }

    fn reveal_many(&mut self, xs: &[Share]) -> Result<Vec<Fp>, ProgramError> {
        self.ops(|a, s| a.open_many(s, xs))
    }

    fn hides_op_type(&self) -> bool {
        true
    }

    fn read_addrs(&mut self, addrs: &[Share]) -> Result<Vec<Share>, ProgramError> {
        self.with_memory(Part::Oram, addrs.len() as u64, |mem, ctx| {
            mem.read(ctx, addrs)
        })
    }

    fn write_addr(&mut self, addr: Share, val: Share) -> Result<(), ProgramError> {
        self.with_memory(Part::Oram, 1, |mem, ctx| {
            mem.write(ctx, addr, None, val, None)
        })
    }

    fn cond_write_addr(
        &mut self,
        addr: Share,
        cond: ShareBit,
        val: Share,
        old: Option<Share>,
    ) -> Result<(), ProgramError> {
        self.with_memory(Part::Oram, 1, |mem, ctx| {
            mem.write(ctx, addr, Some(cond), val, old)
        })
    }

    fn snapshot(&mut self, arrays: &[OArray]) -> Result<Vec<Vec<Share>>, ProgramError> {
        let len = self
            .memory
            .as_ref()
            .map(Memory2::len)
            .ok_or(ProgramError::Misuse("the memory is not booted"))?;
        if arrays.iter().any(|a| a.base() + a.len() > len) {
            return Err(ProgramError::Misuse("array outside the memory"));
        }
        self.with_memory(Part::Output, 0, |mem, ctx| mem.snapshot(ctx, arrays))
    }
}

impl Memory2 for ScanMemory {
    const BACKEND: &'static str = "gkk12";
    const ACCESS_WORK: AccessWork = AccessWork::Linear;

    /// Every word's bits into labels (A2B in circuits of 1024 words).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if the memory has more than [`MAX_SCAN_WORDS`] words;
    /// transport failures; the peer's malformed messages.
    fn boot(
        ctx: &mut Ctx<'_>,
        mut cells: Vec<Share>,
        _accesses: usize,
    ) -> Result<Self, ProgramError> {
        let len = cells.len().max(1);
        if len > MAX_SCAN_WORDS {
            return Err(ProgramError::Misuse(
                "the scanned memory holds at most 2^14 words (MAX_SCAN_WORDS); GKK12's tree \
                 ORAM (backend gkk12-tree) or 2P-Duoram (duoram2p) holds more",
            ));
        }
        let addr_bits = address_bits(len);
        let circuits = ScanCircuits::new(len, WORD_BITS, addr_bits)?;
        cells.resize(len, Share::default());
        let mut labels = Vec::with_capacity(len * WORD_BITS);
        for chunk in cells.chunks(LOAD_CHUNK) {
            labels.extend(ctx.arith.to_labels(ctx.session, chunk, WORD_BITS)?);
        }
        Ok(ScanMemory {
            circuits,
            labels,
            addr_bits,
            len,
        })
    }

    fn len(&self) -> usize {
        self.len
    }

    fn read(&mut self, ctx: &mut Ctx<'_>, addrs: &[Share]) -> Result<Vec<Share>, ProgramError> {
        let labels = ctx.arith.to_labels(ctx.session, addrs, self.addr_bits)?;
        let zero = ctx.arith.public_labels(&[false])[0];
        let mut out = Vec::with_capacity(addrs.len() * WORD_BITS);
        for a in labels.chunks_exact(self.addr_bits) {
            out.extend(self.scan_access(ctx, &AccessLabels::read(a.to_vec(), zero, WORD_BITS))?);
        }
        Ok(ctx.arith.from_labels(ctx.session, &out)?)
    }

    /// A conditional write on labels: address, condition and value converted in one circuit
    /// each, then one access.
    fn write(
        &mut self,
        ctx: &mut Ctx<'_>,
        addr: Share,
        cond: Option<ShareBit>,
        val: Share,
        _old: Option<Share>,
    ) -> Result<(), ProgramError> {
        let addr = ctx.arith.to_labels(ctx.session, &[addr], self.addr_bits)?;
        let write = match cond {
            Some(c) => ctx.arith.to_labels(ctx.session, &[c.add], 1)?[0],
            None => ctx.arith.public_labels(&[true])[0],
        };
        let data = ctx.arith.to_labels(ctx.session, &[val], WORD_BITS)?;
        self.scan_access(ctx, &AccessLabels { addr, write, data })?;
        Ok(())
    }

    fn snapshot(
        &mut self,
        ctx: &mut Ctx<'_>,
        arrays: &[OArray],
    ) -> Result<Vec<Vec<Share>>, ProgramError> {
        let mut labels = Vec::new();
        for a in arrays {
            labels.extend_from_slice(
                &self.labels[a.base() * WORD_BITS..(a.base() + a.len()) * WORD_BITS],
            );
        }
        let flat = ctx.arith.from_labels(ctx.session, &labels)?;
        let mut it = flat.into_iter();
        Ok(arrays
            .iter()
            .map(|a| it.by_ref().take(a.len()).collect())
            .collect())
    }
}

impl ScanMemory {
    /// One access of the scan on labels; returns the labels of the word before it.
    fn scan_access(
        &mut self,
        ctx: &mut Ctx<'_>,
        input: &AccessLabels,
    ) -> Result<Vec<Block>, ProgramError> {
        let zero = ctx.arith.public_labels(&[false])[0];
        let (arith, session) = (&mut *ctx.arith, &mut *ctx.session);
        Ok(self
            .circuits
            .run_access(&mut self.labels, zero, input, |c, x| {
                arith.run_circuit(session, c, x)
            })?)
    }
}

impl<M: Memory2> Machine2With<M> {
    /// Moves entries by the composed permutation (see [`Ram::shuffle`]).
    fn shuffle_entries(
        &mut self,
        sh: &Perm,
        entries: Vec<Fp>,
        width: usize,
        inverse: bool,
    ) -> Result<Vec<Fp>, ProgramError> {
        let (sender, receiver) = self.arith.ots_mut();
        Ok(shuffle_shares(
            &mut self.session,
            sender,
            receiver,
            sh,
            entries,
            width,
            inverse,
        )?)
    }
}
