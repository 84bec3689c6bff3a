//! [`Duoram`]: one party's endpoint of 3P-Duoram — setup, preprocessing, Init, the online READ
//! (Protocol 1), UPDATE with REFRESHBLINDS (Protocol 2) and WRITE, and Get Memory.

use std::ops::Range;

use doram_core::wire::PeerFault;
use doram_core::{PartyId, Seed};
use doram_mpc::Additive;
use doram_net::{Phase, Session};
use doram_oram::STAT_SEC;
use doram_prim::{AesPrg, PairwisePrgs, PairwiseSeeds};
use rand_core::RngCore;

use crate::error::DuoramError;
use crate::material::{Half, Material, Pool};
use crate::msgs::{In, Out, material_phase};
use crate::prep::{self, Ctx};
use crate::role::{Role, Side};
use crate::word::DuoWord;

/// The largest supported `⌈log2 n⌉`.
pub const MAX_LOG_N: usize = 40;

/// Preprocessing batches hold at most this many DPF leaves per DPF position, summed over the
/// batch's operations (`2^20 / 2^h` operations per batch, at least 1 and at most
/// [`BATCH_OPS`]), bounding the batch's memory and message sizes; each batch costs
/// `h − min(4, h) + 4` rounds.
pub const BATCH_LEAVES: usize = 1 << 20;

/// The most operations in one preprocessing batch (for small memories).
pub const BATCH_OPS: usize = 1024;

/// A batch of reads ([`Duoram::read_batch`]) holds the material of at most this many DPF
/// leaves per position, summed over its reads: `2^21 / 2^h` reads (at least 1, at most
/// [`BATCH_OPS`]), so that the material held at once stays in the hundreds of MiB however many
/// reads a caller batches (one read's material is a few vectors of `2^h` words).
pub const READ_BATCH_LEAVES: usize = 1 << 21;

/// Words per frame when a whole vector is sent (Init): well below the transport's frame limit.
const CHUNK_WORDS: usize = 1 << 18;

/// This party's share of the memory state, each vector of length `2^h`. Duoram §3: "P0 holds
/// (D0, D̃1, ζ0, …), P1 holds (D1, D̃0, ζ1, …), and P2 holds (ζ0, ζ1)". A primary only ever uses
/// `D_b + D̃_{1−b} + ζ_b = D + ζ_0 + ζ_1` (the memory under both blinds, the same vector at both
/// primaries) and `ζ_b`, so that is what it keeps (see the crate documentation, decision 6).
enum Memory<W> {
    Primary {
        /// `A = D_b + D̃_{1−b} + ζ_b = D + ζ_0 + ζ_1`.
        a: Vec<W>,
        /// ζ_b.
        z: Vec<W>,
    },
    Helper {
        /// ζ_0.
        z0: Vec<W>,
        /// ζ_1.
        z1: Vec<W>,
    },
}

/// Where an instance is in its life.
enum State<W> {
    /// Constructed; `init` not yet called.
    Fresh,
    /// Initialised.
    Ready(Memory<W>),
    /// An operation failed half-way; the parties are out of step.
    Poisoned,
}

/// What an operation does after the offsets are exchanged.
#[derive(Clone, Copy)]
enum Kind<W> {
    /// READ (Protocol 1).
    Read,
    /// UPDATE by this party's share of a delta (Protocol 2).
    Update(W),
    /// WRITE of this party's share of a value: READ, then UPDATE by `value − old` with the
    /// same material.
    Write(W),
}

/// One party of 3P-Duoram over a memory of `n` words of `W` (see the [crate documentation]
/// (crate) for the protocol, its costs and the decisions taken).
pub struct Duoram<W: DuoWord> {
    session: Session,
    role: Role,
    n: usize,
    h: usize,
    prgs: PairwisePrgs,
    rng: AesPrg,
    pool: Pool<W>,
    state: State<W>,
    /// Vectors of consumed material, kept for the next preprocessing (see [`spare_limit`]).
    spare: Vec<Vec<W>>,
    /// The most vectors of `2^h` words one preprocessing call has asked for so far: consumed
    /// vectors are kept up to this many too, so that preprocessing in equal chunks reuses the
    /// last chunk's memory however large the chunks (never more than that chunk held).
    spare_peak: usize,
    /// The level buffers of the last preprocessing batch, kept for the next one.
    blocks: Vec<Vec<u128>>,
}

/// Vectors of consumed material kept for reuse, at least: one operation's worth at a primary.
const SPARE: usize = 6;

/// Vectors of `2^h` words one operation's material holds at most (a primary's: flag words of
/// three DPFs, value words of two).
const VECTORS_PER_OP: usize = 5;

/// Bytes of consumed material kept for reuse, at most (beyond [`SPARE`] vectors and the
/// largest preprocessing call's).
const SPARE_BYTES: usize = 64 << 20;

/// How many consumed vectors of `2^h` words to keep: [`SPARE`], or more while they fit in
/// [`SPARE_BYTES`], so that preprocessing in chunks of operations reuses the memory of the last
/// chunk (no page faults, no zeroing) instead of asking the allocator for fresh pages.
fn spare_limit<W: DuoWord>(h: usize) -> usize {
    SPARE.max(SPARE_BYTES / ((W::BYTES << h).max(1)))
}

impl<W: DuoWord> std::fmt::Debug for Duoram<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Fresh => "fresh",
            State::Ready(_) => "ready",
            State::Poisoned => "poisoned",
        };
        f.debug_struct("Duoram")
            .field("role", &self.role)
            .field("n", &self.n)
            .field("state", &state)
            .field("preprocessed", &self.pool.len())
            .finish()
    }
}

/// `⌈log2 n⌉` for `n ≥ 1`.
fn log2_ceil(n: usize) -> usize {
    (usize::BITS - (n - 1).leading_zeros()) as usize
}

/// The two contiguous segments of the cyclic shift by `s` on a domain of `len` (Duoram §4.2.1:
/// the shifted vector at `i` is the original at `i − s mod len`): state `s..len` with material
/// `0..len − s`, and state `0..s` with material `len − s..len`.
fn segments(len: usize, s: usize) -> [(Range<usize>, Range<usize>); 2] {
    [(s..len, 0..len - s), (0..s, len - s..len)]
}

impl<W: DuoWord> Duoram<W> {
    /// Sets up this party's endpoint for a memory of `n` words: checks the size and exchanges
    /// the pairwise PRG seeds with both peers (one round, 16 bytes to each). `seed` is this
    /// party's private randomness.
    ///
    /// # Errors
    /// [`DuoramError::InvalidSize`] for `n = 0`, `n > 2^40`, or (for a prime-field word) an `n`
    /// too large for the statistical index mask; [`DuoramError::WrongSession`] unless the
    /// session has three parties; a peer fault.
    pub fn setup(mut session: Session, n: usize, seed: Seed) -> Result<Self, DuoramError> {
        if n == 0 {
            return Err(DuoramError::InvalidSize {
                n,
                reason: "the memory must have at least one word",
            });
        }
        let h = log2_ceil(n);
        if h > MAX_LOG_N {
            return Err(DuoramError::InvalidSize {
                n,
                reason: "at most 2^40 words",
            });
        }
        if !W::SHARES_REDUCE_MOD_POW2 && h as u32 + STAT_SEC + 3 > W::CAPACITY_BITS {
            return Err(DuoramError::InvalidSize {
                n,
                reason: "the word ring cannot hold the statistically masked index",
            });
        }
        if session.n_parties() != 3 {
            return Err(DuoramError::WrongSession(session.n_parties()));
        }
        let me = session.me();
        let role = Role::of(me).ok_or(DuoramError::WrongSession(session.n_parties()))?;
        let mut rng = AesPrg::new(seed);
        let sent = PairwiseSeeds::sample_outgoing(me, 3, &mut rng);
        for p in session.peers() {
            if let Some(s) = sent[p.index()] {
                session.send_bytes(p, &s.0)?;
            }
        }
        let mut received = [None; PartyId::MAX_PARTIES];
        for p in session.peers() {
            let bytes = session.recv_bytes(p)?;
            let s: [u8; 16] = bytes
                .as_slice()
                .try_into()
                .map_err(|_| PeerFault::wrong_length(p, "a pairwise PRG seed", 16, bytes.len()))?;
            received[p.index()] = Some(Seed(s));
        }
        let prgs = PairwiseSeeds::from_exchange(me, 3, &sent, &received)
            .map_err(|_| DuoramError::Local("pairwise seed exchange"))?
            .into_prgs();
        Ok(Duoram {
            session,
            role,
            n,
            h,
            prgs,
            rng,
            pool: Pool::new(),
            state: State::Fresh,
            spare: Vec::new(),
            spare_peak: 0,
            blocks: Vec::new(),
        })
    }

    /// This party's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The memory size n.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Never true for a constructed instance.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `⌈log2 n⌉`: the DPF depth; the DPF domain and the state vectors have `2^h` entries.
    pub fn depth(&self) -> usize {
        self.h
    }

    /// The session (statistics, transcript, timeout).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, mutably (phase labels, transcripts, timeouts — not for sending).
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Operations the preprocessed material covers (one DPF triple each).
    pub fn preprocessed(&self) -> usize {
        self.pool.len()
    }

    fn check_usable(&self) -> Result<(), DuoramError> {
        match self.state {
            State::Poisoned => Err(DuoramError::Poisoned),
            _ => Ok(()),
        }
    }

    /// Runs `f`; if it fails, the parties may be out of step, so the instance is poisoned.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, DuoramError>,
    ) -> Result<T, DuoramError> {
        let r = f(self);
        if r.is_err() {
            self.state = State::Poisoned;
        }
        r
    }

    /// The largest message (frame payload) any party sends in an instance of `n` words, in
    /// bytes: the largest of an Init chunk (`min(n, 2^18)` words), a
    /// preprocessing message of a full batch, and a batch of [`BATCH_OPS`] reads
    /// ([`read_batch`](Self::read_batch) splits longer ones). The transport's frame limit can
    /// be lowered to this ([`Session::limit_frame_bytes`]).
    pub fn max_message_bytes(n: usize) -> usize {
        let h = log2_ceil(n);
        let per_batch = (BATCH_LEAVES >> h).clamp(1, BATCH_OPS);
        let words = n.clamp(BATCH_OPS, CHUNK_WORDS);
        (words * W::BYTES).max(prep::max_payload::<W>(h, per_batch))
    }

    /// Preprocesses `ops` further operations (one DPF triple each), in batches of up to
    /// `2^20 / 2^h` operations (at least 1, at most [`BATCH_OPS`]) of `h − min(4, h) + 4` rounds
    /// each. Every party must call it with the same `ops`.
    ///
    /// # Errors
    /// A peer fault (the instance is then poisoned), or [`DuoramError::Poisoned`].
    pub fn preprocess(&mut self, ops: usize) -> Result<(), DuoramError> {
        self.check_usable()?;
        self.guarded(|s| s.preprocess_inner(ops))
    }

    fn preprocess_inner(&mut self, ops: usize) -> Result<(), DuoramError> {
        let per_batch = (BATCH_LEAVES >> self.h).clamp(1, BATCH_OPS);
        self.spare_peak = self.spare_peak.max(ops.saturating_mul(VECTORS_PER_OP));
        let mut ctx = Ctx {
            session: &mut self.session,
            prgs: &mut self.prgs,
            rng: &mut self.rng,
            h: self.h,
            spare: &mut self.spare,
            blocks: &mut self.blocks,
        };
        let mut batches = Vec::new();
        let mut left = ops;
        while left > 0 {
            let m = left.min(per_batch);
            left -= m;
            batches.push((self.pool.reserve(m), m));
        }
        match self.role {
            Role::Primary(side) => {
                for &(first, m) in &batches {
                    for mat in prep::primary_batch(&mut ctx, side, first, m)? {
                        self.pool.push(mat);
                    }
                }
            }
            Role::Helper => {
                // All batches' correlations first (they are small), so that P1 never waits for
                // them; then each batch's halves, expanded while the primaries run their output
                // stage and finished while they generate the next batch.
                for &(first, m) in &batches {
                    prep::helper_deal::<W>(&mut ctx, first, m)?;
                }
                for &(first, m) in &batches {
                    let raw = prep::helper_expand(&mut ctx, first, m)?;
                    for mat in prep::helper_finish(&mut ctx, raw)? {
                        self.pool.push(mat);
                    }
                }
            }
        }
        Ok(())
    }

    /// Drops up to `ops` preprocessed operations without using them (e.g. to free memory) and
    /// returns how many were dropped. All parties must drop the same number: if they do not,
    /// the next operation fails at once with `NetError::WrongPhase` (every message is sent in
    /// the wire phase of its material, see [`crate::msgs`]), never silently.
    pub fn discard_preprocessed(&mut self, ops: usize) -> usize {
        self.pool.discard(ops)
    }

    /// Init: loads the memory from this party's additive shares (one per word; P2's share may
    /// be non-zero). One round: with ζ_0 (shared by P0 and P2) and ζ_1 (shared by P1 and P2)
    /// drawn from the pairwise PRGs, P2's share is folded into the primaries' shares and each
    /// primary obtains the other's blinded share D̃ (`n` words on each of the four links
    /// P0 → P1, P1 → P0, P2 → P0, P2 → P1). See the crate documentation for why the blinds
    /// must be random here.
    ///
    /// # Errors
    /// [`DuoramError::WrongMemoryLength`], [`DuoramError::AlreadyInitialized`] (before anything
    /// is sent); a peer fault.
    pub fn init(&mut self, memory: &[Additive<W>]) -> Result<(), DuoramError> {
        self.check_usable()?;
        if !matches!(self.state, State::Fresh) {
            return Err(DuoramError::AlreadyInitialized);
        }
        if memory.len() != self.n {
            return Err(DuoramError::WrongMemoryLength {
                expected: self.n,
                got: memory.len(),
            });
        }
        let mem = self.guarded(|s| s.init_inner(memory))?;
        self.state = State::Ready(mem);
        Ok(())
    }

    fn send_words(&mut self, to: PartyId, v: &[W]) -> Result<(), DuoramError> {
        for chunk in v.chunks(CHUNK_WORDS) {
            let mut out = Out::new(chunk.len() * W::BYTES);
            for &w in chunk {
                out.word(w);
            }
            self.session.send_bytes(to, &out.buf)?;
        }
        Ok(())
    }

    fn recv_words(
        &mut self,
        from: PartyId,
        count: usize,
        what: &'static str,
    ) -> Result<Vec<W>, DuoramError> {
        let mut v = Vec::with_capacity(count);
        while v.len() < count {
            let len = (count - v.len()).min(CHUNK_WORDS);
            let bytes = self.session.recv_bytes(from)?;
            let mut m = In::open(bytes, from, what, len * W::BYTES)?;
            for _ in 0..len {
                v.push(m.word()?);
            }
        }
        Ok(v)
    }

    fn init_inner(&mut self, memory: &[Additive<W>]) -> Result<Memory<W>, DuoramError> {
        // Init consumes no material.
        self.session.set_wire_phase(Phase::DEFAULT);
        let (n, big) = (self.n, 1usize << self.h);
        let shares: Vec<W> = Additive::shares(memory);
        let padded = |mut v: Vec<W>| {
            v.resize(big, W::ZERO);
            v
        };
        match self.role {
            Role::Primary(Side::Zero) => {
                let p2 = self.prgs.with(PartyId::P2);
                let z: Vec<W> = p2.expand(n);
                let rho: Vec<W> = p2.expand(n);
                let d: Vec<W> = shares.iter().zip(&rho).map(|(&m, &r)| m + r).collect();
                let dt0: Vec<W> = d.iter().zip(&z).map(|(&d, &z)| d + z).collect();
                self.send_words(PartyId::P1, &dt0)?;
                let u = self.recv_words(PartyId::P1, n, "P1's masked share (Init)")?;
                let w = self.recv_words(PartyId::P2, n, "P2's masked share (Init)")?;
                // A = D0 + D̃1 + ζ0 with D̃1 = u + w.
                let a: Vec<W> = (0..n).map(|i| d[i] + u[i] + w[i] + z[i]).collect();
                Ok(Memory::Primary {
                    a: padded(a),
                    z: padded(z),
                })
            }
            Role::Primary(Side::One) => {
                let p2 = self.prgs.with(PartyId::P2);
                let z: Vec<W> = p2.expand(n);
                let sigma: Vec<W> = p2.expand(n);
                let u: Vec<W> = (0..n).map(|i| shares[i] + z[i] + sigma[i]).collect();
                self.send_words(PartyId::P0, &u)?;
                let x = self.recv_words(PartyId::P2, n, "P2's masked share (Init)")?;
                let d: Vec<W> = shares.iter().zip(&x).map(|(&m, &x)| m + x).collect();
                let dt = self.recv_words(PartyId::P0, n, "P0's blinded share D̃0 (Init)")?;
                // A = D1 + D̃0 + ζ1.
                let a: Vec<W> = (0..n).map(|i| d[i] + dt[i] + z[i]).collect();
                Ok(Memory::Primary {
                    a: padded(a),
                    z: padded(z),
                })
            }
            Role::Helper => {
                let p0 = self.prgs.with(PartyId::P0);
                let z0: Vec<W> = p0.expand(n);
                let rho: Vec<W> = p0.expand(n);
                let p1 = self.prgs.with(PartyId::P1);
                let z1: Vec<W> = p1.expand(n);
                let sigma: Vec<W> = p1.expand(n);
                let to1: Vec<W> = (0..n).map(|i| shares[i] - rho[i]).collect();
                let to0: Vec<W> = (0..n).map(|i| to1[i] - sigma[i]).collect();
                self.send_words(PartyId::P1, &to1)?;
                self.send_words(PartyId::P0, &to0)?;
                Ok(Memory::Helper {
                    z0: padded(z0),
                    z1: padded(z1),
                })
            }
        }
    }

    /// Get Memory: fresh additive shares of the first `n` words of the current memory (P0's
    /// `A − ζ_0`, P1's `−ζ_1`, plus a three-party zero-sharing from the pairwise PRGs; no
    /// communication).
    ///
    /// # Errors
    /// [`DuoramError::NotInitialized`]; [`DuoramError::Poisoned`].
    pub fn memory(&mut self) -> Result<Vec<Additive<W>>, DuoramError> {
        self.check_usable()?;
        let State::Ready(mem) = &self.state else {
            return Err(DuoramError::NotInitialized);
        };
        let n = self.n;
        let zero: Vec<W> = self.prgs.zero_shares(n);
        let zeta_only = self.role == Role::Primary(Side::One);
        Ok(match mem {
            Memory::Primary { a, z } => (0..n)
                .map(|i| {
                    let mine = if zeta_only { -z[i] } else { a[i] - z[i] };
                    Additive::from_share(mine + zero[i])
                })
                .collect(),
            Memory::Helper { .. } => zero.into_iter().map(Additive::from_share).collect(),
        })
    }

    /// READ (Duoram Protocol 1): this party's share of the word at the shared address `addr`
    /// (additive shares among all three parties). Two sequential messages.
    ///
    /// # Errors
    /// [`DuoramError::NotInitialized`] (before anything is sent); a peer fault.
    pub fn read(&mut self, addr: Additive<W>) -> Result<Additive<W>, DuoramError> {
        self.operate(addr.share(), Kind::Read)
    }

    /// UPDATE (Duoram Protocol 2, with REFRESHBLINDS): adds the shared `delta` to the word at
    /// `addr`. One message.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn update(&mut self, addr: Additive<W>, delta: Additive<W>) -> Result<(), DuoramError> {
        self.operate(addr.share(), Kind::Update(delta.share()))
            .map(drop)
    }

    /// WRITE: READ, then UPDATE by `value − old` with the same preprocessing material (the
    /// offset is revealed once); returns this party's share of the old value. Three sequential
    /// messages.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn write(
        &mut self,
        addr: Additive<W>,
        value: Additive<W>,
    ) -> Result<Additive<W>, DuoramError> {
        self.operate(addr.share(), Kind::Write(value.share()))
    }

    fn operate(&mut self, addr: W, kind: Kind<W>) -> Result<Additive<W>, DuoramError> {
        self.check_usable()?;
        if !matches!(self.state, State::Ready(_)) {
            return Err(DuoramError::NotInitialized);
        }
        self.guarded(|s| {
            if s.pool.len() == 0 {
                // An operation without material preprocesses it inline, labelled as such.
                let phase = s.session.phase().to_owned();
                s.session.set_phase("preprocess");
                let r = s.preprocess_inner(1);
                s.session.set_phase(&phase);
                r?;
            }
            let mat = s
                .pool
                .take()?
                .ok_or(DuoramError::Local("no preprocessing material"))?;
            let r = s.run_op(addr, kind, &mat).map(Additive::from_share);
            s.recycle(mat);
            r
        })
    }

    /// This party's offset share (Protocol 1, step 5): `i_b − ri_b` for a primary, `i_2` for the
    /// helper, reduced mod 2^h (Z/2^64) or under a statistical mask (prime field).
    fn offset_share(&mut self, addr: W, ri: Option<W>) -> W {
        let big = 1u128 << self.h;
        if W::SHARES_REDUCE_MOD_POW2 {
            let x = addr - ri.unwrap_or(W::ZERO);
            W::from_u128(x.to_u128() & (big - 1))
        } else {
            match ri {
                Some(ri) => {
                    let q = 1 + (self.rng.next_u64() & ((1u64 << STAT_SEC) - 1));
                    addr - ri + W::from_u128(big * u128::from(q))
                }
                None => addr,
            }
        }
    }

    /// Reads an offset share from a peer's message.
    fn read_offset(&self, m: &mut In) -> Result<W, DuoramError> {
        let o: W = m.word()?;
        if W::SHARES_REDUCE_MOD_POW2 {
            m.bounded(o.to_u128(), 1u128 << self.h)?;
        }
        Ok(o)
    }

    /// Keeps the vectors of consumed material for the next preprocessing, up to
    /// [`spare_limit`].
    fn recycle(&mut self, mat: Material<W>) {
        let halves: Vec<Half<W>> = match mat {
            Material::Primary { dpf, .. } => dpf.into(),
            Material::Helper { from0, from1, .. } => vec![from0, from1],
        };
        let big = 1usize << self.h;
        let limit = spare_limit::<W>(self.h).max(self.spare_peak);
        for h in halves {
            for v in [h.a, h.v] {
                // DPF #1's halves have no value words: keep only full-length vectors.
                if v.len() == big && self.spare.len() < limit {
                    self.spare.push(v);
                }
            }
        }
    }

    fn run_op(&mut self, addr: W, kind: Kind<W>, mat: &Material<W>) -> Result<W, DuoramError> {
        let id = mat.id();
        // Every message of the operation is checked to belong to this material.
        self.session.set_wire_phase(material_phase(id));
        let big = 1usize << self.h;
        let bare_update = matches!(kind, Kind::Update(_));
        let me = self.session.me();
        let others = [me.next(3), me.prev(3)];

        // Protocol 1, step 5 / Protocol 2, step 5: everybody sends its offset share to both
        // others (for a bare UPDATE together with the masked deltas M_b + F_b^(k)).
        let ri = match mat {
            Material::Primary { ri, .. } => Some(*ri),
            Material::Helper { .. } => None,
        };
        let my_off = self.offset_share(addr, ri);
        let delta0 = match kind {
            Kind::Update(m) => m,
            _ => W::ZERO,
        };
        let masked = |mat: &Material<W>, m: W| match mat {
            Material::Primary { f, .. } => f.map(|f| m + f),
            Material::Helper { .. } => [m; 3],
        };
        let my_masked = masked(mat, delta0);
        for &p in &others {
            let words = Self::flight_words(self.role, p, bare_update, true);
            let mut out = Out::new(words * W::BYTES);
            out.word(my_off);
            if bare_update {
                self.push_deltas(&mut out, p, &my_masked);
            }
            self.session.send_bytes(p, &out.buf)?;
        }
        let mut offsets = my_off;
        let mut fsum = my_masked;
        for &p in &others {
            let words = Self::flight_words(role_of(p)?, me, bare_update, true);
            let what = if bare_update {
                "the offset and masked deltas (Duoram Protocol 2, step 5)"
            } else {
                "the offset (Duoram Protocol 1, step 5)"
            };
            let bytes = self.session.recv_bytes(p)?;
            let mut m = In::open(bytes, p, what, words * W::BYTES)?;
            offsets += self.read_offset(&mut m)?;
            if bare_update {
                self.pull_deltas(&mut m, p, &mut fsum)?;
            }
        }
        // Protocol 1, step 6: S = Σ offsets mod 2^h.
        let shift = (offsets.to_u128() % big as u128) as usize;

        let mut out = W::ZERO;
        if matches!(kind, Kind::Read | Kind::Write(_)) {
            out = self.read_part(shift, mat)?;
        }
        if let Kind::Write(value) = kind {
            // The UPDATE of a WRITE: delta = value − old, one more message.
            let mine = masked(mat, value - out);
            for &p in &others {
                let words = Self::flight_words(self.role, p, true, false);
                let mut o = Out::new(words * W::BYTES);
                self.push_deltas(&mut o, p, &mine);
                self.session.send_bytes(p, &o.buf)?;
            }
            fsum = mine;
            for &p in &others {
                let words = Self::flight_words(role_of(p)?, me, true, false);
                let bytes = self.session.recv_bytes(p)?;
                let what = "the masked deltas of a WRITE (Duoram Protocol 2, step 5)";
                let mut m = In::open(bytes, p, what, words * W::BYTES)?;
                self.pull_deltas(&mut m, p, &mut fsum)?;
            }
        }
        if matches!(kind, Kind::Update(_) | Kind::Write(_)) {
            self.update_part(shift, mat, fsum);
        }
        Ok(out)
    }

    /// Words in an offset/delta message from `from` to `to`: 1 for the offset (if `offset`),
    /// plus the masked deltas: `M_b + F_b^(2)` and `M_b + F_b^(3)` from a primary (to the other
    /// primary and to P2 alike; `M_b + F_b^(1)` is never needed, see decision 6 of the crate
    /// documentation), and P2's own delta share (one word) to each primary.
    fn flight_words(from: Role, _to: PartyId, deltas: bool, offset: bool) -> usize {
        let d = match (from, deltas) {
            (_, false) => 0,
            (Role::Helper, true) => 1,
            (Role::Primary(_), true) => 2,
        };
        usize::from(offset) + d
    }

    fn push_deltas(&self, out: &mut Out, _to: PartyId, masked: &[W; 3]) {
        match self.role {
            Role::Helper => out.word(masked[0]),
            Role::Primary(_) => {
                out.word(masked[1]);
                out.word(masked[2]);
            }
        }
    }

    /// Adds a peer's masked deltas into `fsum` (F^(k) = Σ_b (M_b + F_b^(k)) + M_2, k = 2, 3).
    fn pull_deltas(&self, m: &mut In, from: PartyId, fsum: &mut [W; 3]) -> Result<(), DuoramError> {
        if from == PartyId::P2 {
            let m2: W = m.word()?;
            for f in fsum.iter_mut() {
                *f += m2;
            }
        } else {
            fsum[1] += m.word()?;
            fsum[2] += m.word()?;
        }
        Ok(())
    }

    /// Protocol 1, steps 7–10, local part: the dot products over the shifted vectors. P2 gets
    /// `(−⟨ζ0, t1^(3)⟩, −⟨ζ1, t0^(2)⟩)` (step 8 before ρ), a primary
    /// `(⟨D_b + D̃_{1−b}, t^(1)⟩ − ⟨ζ_b, t^(cross) − t^(1)⟩, 0)` (steps 9–10 before γ_b).
    fn read_local(&self, shift: usize, mat: &Material<W>) -> Result<(W, W), DuoramError> {
        let big = 1usize << self.h;
        let State::Ready(mem) = &self.state else {
            return Err(DuoramError::NotInitialized);
        };
        let segs = segments(big, shift);
        match (mem, mat) {
            (Memory::Helper { z0, z1 }, Material::Helper { from0, from1, .. }) => {
                let mut g0 = W::ZERO;
                let mut g1 = W::ZERO;
                let mut buf = [W::ZERO; CHUNK];
                for (st, mt) in &segs {
                    for (s0, m0, len) in chunks(st, mt) {
                        let b = &mut buf[..len];
                        from1.decode_t(m0, b);
                        g0 -= W::dot(&z0[s0..s0 + len], b);
                        from0.decode_t(m0, b);
                        g1 -= W::dot(&z1[s0..s0 + len], b);
                    }
                }
                Ok((g0, g1))
            }
            (Memory::Primary { a, z }, Material::Primary { dpf, .. }) => {
                let Role::Primary(side) = self.role else {
                    return Err(DuoramError::Local("role and memory disagree"));
                };
                // Steps 9–10: ⟨D_b + D̃_{1−b}, t^(1)⟩ − ⟨ζ_b, t^(cross) − t^(1)⟩
                // = ⟨A, t^(1)⟩ − ⟨ζ_b, t^(cross)⟩.
                let (h1, hc) = (&dpf[0], &dpf[side.cross_dpf()]);
                let mut acc = W::ZERO;
                let mut b1 = [W::ZERO; CHUNK];
                let mut bc = [W::ZERO; CHUNK];
                for (st, mt) in &segs {
                    for (s0, m0, len) in chunks(st, mt) {
                        let (b1, bc) = (&mut b1[..len], &mut bc[..len]);
                        h1.decode_t(m0, b1);
                        hc.decode_t(m0, bc);
                        let r = s0..s0 + len;
                        acc += W::read_sum(&a[r.clone()], &z[r], b1, bc);
                    }
                }
                Ok((acc, W::ZERO))
            }
            _ => Err(DuoramError::Local("role and material disagree")),
        }
    }

    /// Protocol 1, steps 7–10 for a batch of reads (in the wire phase of their first
    /// material): the local sums, then P2's message of the γ's (one per read), and fresh output
    /// shares.
    fn read_parts(&mut self, locals: &[(W, W)]) -> Result<Vec<W>, DuoramError> {
        let k = locals.len();
        let mut outs = Vec::with_capacity(k);
        match self.role {
            Role::Helper => {
                // Step 8: γ0 = −⟨ζ0, t1^(3)⟩ + ρ to P0, γ1 = −⟨ζ1, t0^(2)⟩ − ρ to P1.
                let mut m0 = Out::new(k * W::BYTES);
                let mut m1 = Out::new(k * W::BYTES);
                for &(g0, g1) in locals {
                    let rho: W = self.rng.random();
                    m0.word(g0 + rho);
                    m1.word(g1 - rho);
                    outs.push(W::ZERO);
                }
                self.session.send_bytes(PartyId::P0, &m0.buf)?;
                self.session.send_bytes(PartyId::P1, &m1.buf)?;
            }
            Role::Primary(_) => {
                let bytes = self.session.recv_bytes(PartyId::P2)?;
                let what = "γ (Duoram Protocol 1, step 8)";
                let mut m = In::open(bytes, PartyId::P2, what, k * W::BYTES)?;
                for &(acc, _) in locals {
                    outs.push(acc + m.word()?);
                }
            }
        }
        // Fresh output shares among all three: add a zero-sharing.
        for o in &mut outs {
            *o += self.prgs.zero_share::<W>();
        }
        Ok(outs)
    }

    fn read_part(&mut self, shift: usize, mat: &Material<W>) -> Result<W, DuoramError> {
        let local = self.read_local(shift, mat)?;
        let outs = self.read_parts(&[local])?;
        outs.first()
            .copied()
            .ok_or(DuoramError::Local("no read output"))
    }

    /// `k` independent READs (Duoram §1.2: "doing k reads in parallel takes one round of
    /// communication"): all offsets in one message to each peer, all γ's in one message from P2
    /// — two sequential messages for the batch, `k` triples of material (missing ones are
    /// preprocessed inline first). Larger batches than [`BATCH_OPS`] reads or
    /// [`READ_BATCH_LEAVES`] leaves of material run as consecutive batches.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_batch(&mut self, addrs: &[Additive<W>]) -> Result<Vec<Additive<W>>, DuoramError> {
        self.check_usable()?;
        if !matches!(self.state, State::Ready(_)) {
            return Err(DuoramError::NotInitialized);
        }
        let k = addrs.len();
        if k == 0 {
            return Ok(Vec::new());
        }
        let most = (READ_BATCH_LEAVES >> self.h).clamp(1, BATCH_OPS);
        if k > most {
            // Bounded messages and material: batches of at most `most` reads, one after the
            // other.
            let mut out = Vec::with_capacity(k);
            for part in addrs.chunks(most) {
                out.extend(self.read_batch(part)?);
            }
            return Ok(out);
        }
        self.guarded(|s| {
            if s.pool.len() < k {
                let phase = s.session.phase().to_owned();
                s.session.set_phase("preprocess");
                let r = s.preprocess_inner(k - s.pool.len());
                s.session.set_phase(&phase);
                r?;
            }
            let mut mats = Vec::with_capacity(k);
            for _ in 0..k {
                mats.push(
                    s.pool
                        .take()?
                        .ok_or(DuoramError::Local("no preprocessing material"))?,
                );
            }
            let id = mats[0].id();
            s.session.set_wire_phase(material_phase(id));
            let big = 1u128 << s.h;
            let me = s.session.me();
            // Protocol 1, step 5, for every read at once.
            let mut offsets = Vec::with_capacity(k);
            for (a, m) in addrs.iter().zip(&mats) {
                let ri = match m {
                    Material::Primary { ri, .. } => Some(*ri),
                    Material::Helper { .. } => None,
                };
                offsets.push(s.offset_share(a.share(), ri));
            }
            let mut out = Out::new(k * W::BYTES);
            for &o in &offsets {
                out.word(o);
            }
            for p in [me.next(3), me.prev(3)] {
                s.session.send_bytes(p, &out.buf)?;
            }
            for p in [me.next(3), me.prev(3)] {
                let bytes = s.session.recv_bytes(p)?;
                let what = "the offsets of a batch of reads (Duoram Protocol 1, step 5)";
                let mut m = In::open(bytes, p, what, k * W::BYTES)?;
                for o in offsets.iter_mut() {
                    *o += s.read_offset(&mut m)?;
                }
            }
            // Steps 6–10.
            let mut locals = Vec::with_capacity(k);
            for (o, m) in offsets.iter().zip(&mats) {
                locals.push(s.read_local((o.to_u128() % big) as usize, m)?);
            }
            let outs = s.read_parts(&locals)?;
            for m in mats {
                s.recycle(m);
            }
            Ok(outs.into_iter().map(Additive::from_share).collect())
        })
    }

    /// Protocol 2, steps 6–10: the local updates, with `fsum[k] = F^(k+1)` (P2 only uses
    /// k = 2, 3).
    fn update_part(&mut self, shift: usize, mat: &Material<W>, fsum: [W; 3]) {
        let big = 1usize << self.h;
        let segs = segments(big, shift);
        let State::Ready(mem) = &mut self.state else {
            return;
        };
        match (mem, mat) {
            (Memory::Helper { z0, z1 }, Material::Helper { from0, from1, .. }) => {
                // Step 10: ζ0 −= V0^(2), ζ1 −= V1^(3).
                for (st, mt) in &segs {
                    sub_v(&mut z0[st.clone()], from0, mt.start, fsum[1]);
                    sub_v(&mut z1[st.clone()], from1, mt.start, fsum[2]);
                }
            }
            (Memory::Primary { a, z }, Material::Primary { dpf, .. }) => {
                let Role::Primary(side) = self.role else {
                    return;
                };
                let (kb, kc) = (side.blind_dpf(), side.cross_dpf());
                let (hb, hc) = (&dpf[kb], &dpf[kc]);
                let (fb, fc) = (fsum[kb], fsum[kc]);
                let mut buf = [[W::ZERO; CHUNK]; 4];
                // Steps 8–9 (labels as in §3.1.2): D_b += V^(1), ζ_b −= V^(blind),
                // D̃_{1−b} += V^(cross) − V^(1); on A = D_b + D̃_{1−b} + ζ_b the V^(1) terms
                // cancel: A += V^(cross) − V^(blind).
                for (st, mt) in &segs {
                    for (s0, m0, len) in chunks(st, mt) {
                        let [tb, vb, tc, vc] = &mut buf;
                        for (h, t, v) in [(hb, &mut *tb, &mut *vb), (hc, tc, vc)] {
                            h.decode_t(m0, &mut t[..len]);
                            h.decode_v(m0, &mut v[..len]);
                        }
                        let (a, z) = (&mut a[s0..s0 + len], &mut z[s0..s0 + len]);
                        for i in 0..len {
                            let vb = vb[i] + fb * tb[i];
                            let vc = vc[i] + fc * tc[i];
                            z[i] -= vb;
                            a[i] += vc - vb;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Words decoded from the material at a time in the online loops (they stay in L1).
const CHUNK: usize = 256;

/// The chunks `(state start, material start, length)` of one shift segment.
fn chunks(
    st: &Range<usize>,
    mt: &Range<usize>,
) -> impl Iterator<Item = (usize, usize, usize)> + use<> {
    let (s0, m0, len) = (st.start, mt.start, st.len());
    (0..len)
        .step_by(CHUNK)
        .map(move |off| (s0 + off, m0 + off, CHUNK.min(len - off)))
}

fn role_of(p: PartyId) -> Result<Role, DuoramError> {
    Role::of(p).ok_or(DuoramError::WrongSession(4))
}

/// `z[i] −= v[m0 + i] + f·t[m0 + i]` (REFRESHBLINDS at P2).
fn sub_v<W: DuoWord>(z: &mut [W], half: &Half<W>, m0: usize, f: W) {
    let mut t = [W::ZERO; CHUNK];
    let mut v = [W::ZERO; CHUNK];
    for (c, zc) in z.chunks_mut(CHUNK).enumerate() {
        let len = zc.len();
        half.decode_t(m0 + c * CHUNK, &mut t[..len]);
        half.decode_v(m0 + c * CHUNK, &mut v[..len]);
        for i in 0..len {
            zc[i] -= v[i] + f * t[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Z64;
    use doram_mpc::deal_additive;

    /// After Init and a mix of operations the state satisfies the invariants of Lemma 3 at
    /// every party: both primaries hold the same `A = D_b + D̃_{1−b} + ζ_b = D + ζ_0 + ζ_1`, P2's
    /// blinds equal the primaries', and `A − ζ_0 − ζ_1` is the memory (zero on the padding).
    #[test]
    fn blinded_shares_stay_consistent() {
        let n = 13;
        let initial: Vec<Z64> = (0..n as u64).map(|i| Z64(i * 1000 + 1)).collect();
        let mut rng = AesPrg::new(Seed([9; 16]));
        let mut mem: [Vec<Additive<Z64>>; 3] = Default::default();
        for &x in &initial {
            for (v, s) in mem.iter_mut().zip(deal_additive(x, &mut rng)) {
                v.push(s);
            }
        }
        // (addr, value, kind): 0 read, 1 update, 2 write.
        let program = [
            (3u64, 5u64, 1u8),
            (3, 0, 0),
            (12, 77, 2),
            (0, 9, 1),
            (12, 1, 1),
        ];
        let mut shares: [Vec<(Additive<Z64>, Additive<Z64>)>; 3] = Default::default();
        for &(a, v, _) in &program {
            let a = deal_additive(Z64(a), &mut rng);
            let v = deal_additive(Z64(v), &mut rng);
            for i in 0..3 {
                shares[i].push((a[i], v[i]));
            }
        }
        let states: Vec<Memory<Z64>> = std::thread::scope(|s| {
            let handles: Vec<_> = Session::local_mesh(3)
                .into_iter()
                .map(|session| {
                    let (mem, shares) = (&mem, &shares);
                    s.spawn(move || {
                        let me = session.me();
                        let seed = Seed([me.index() as u8 + 1; 16]);
                        let mut o = Duoram::<Z64>::setup(session, n, seed).unwrap();
                        o.init(&mem[me.index()]).unwrap();
                        for (&(_, _, kind), &(a, v)) in program.iter().zip(&shares[me.index()]) {
                            match kind {
                                0 => drop(o.read(a).unwrap()),
                                1 => o.update(a, v).unwrap(),
                                _ => drop(o.write(a, v).unwrap()),
                            }
                        }
                        match std::mem::replace(&mut o.state, State::Fresh) {
                            State::Ready(m) => m,
                            _ => panic!("not ready"),
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let [p0, p1, p2] = <[Memory<Z64>; 3]>::try_from(states).ok().unwrap();
        let (Memory::Primary { a: a0, z: z0 }, Memory::Primary { a: a1, z: z1 }) = (p0, p1) else {
            panic!("roles")
        };
        let Memory::Helper { z0: h0, z1: h1 } = p2 else {
            panic!("roles")
        };
        let mut want = initial.clone();
        want.resize(16, Z64(0));
        want[3] += Z64(5);
        want[12] = Z64(77);
        want[0] += Z64(9);
        want[12] += Z64(1);
        for i in 0..16 {
            // Lemma 3 on the kept state: both primaries hold A = D + ζ0 + ζ1.
            assert_eq!(a0[i], a1[i], "A at {i}");
            assert_eq!((h0[i], h1[i]), (z0[i], z1[i]), "P2's blinds at {i}");
            assert_eq!(a0[i] - z0[i] - z1[i], want[i], "memory at {i}");
        }
    }

    /// The preprocessed material satisfies §4.1.1 and App. D: for each of the three DPFs,
    /// `t_0 + t_1 = e_ri` and `v_0 + v_1 = −(F_0 + F_1)·e_ri` at one point ri whose additive
    /// shares the primaries hold, and P2's halves equal the primaries' (P0's DPF #2, P1's #3).
    #[test]
    fn preprocessed_material_is_a_unit_vector_triple() {
        for n in [1usize, 2, 5, 8, 37, 300] {
            let mats: Vec<Vec<Material<Z64>>> = std::thread::scope(|s| {
                let handles: Vec<_> = Session::local_mesh(3)
                    .into_iter()
                    .map(|session| {
                        s.spawn(move || {
                            let seed = Seed([session.me().index() as u8 + 7; 16]);
                            let mut o = Duoram::<Z64>::setup(session, n, seed).unwrap();
                            o.preprocess(3).unwrap();
                            (0..3).map(|_| o.pool.take().unwrap().unwrap()).collect()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let big = 1usize << log2_ceil(n);
            for op in 0..3 {
                let (
                    Material::Primary {
                        ri: r0,
                        dpf: a,
                        f: f0,
                        ..
                    },
                    Material::Primary {
                        ri: r1,
                        dpf: b,
                        f: f1,
                        ..
                    },
                    Material::Helper { from0, from1, .. },
                ) = (&mats[0][op], &mats[1][op], &mats[2][op])
                else {
                    panic!("roles")
                };
                let ri = (*r0 + *r1).0 as usize;
                assert!(ri < big, "n = {n}: ri = {ri}");
                for k in 0..3 {
                    for i in 0..big {
                        let e = Z64(u64::from(i == ri));
                        assert_eq!(a[k].t_at(i) + b[k].t_at(i), e, "n = {n}, DPF {k}, t at {i}");
                        // DPF #1 keeps no value words (only READs use it).
                        if k > 0 {
                            let v = a[k].v_at(i) + b[k].v_at(i);
                            assert_eq!(v, -(f0[k] + f1[k]) * e, "n = {n}, DPF {k}, v at {i}");
                        }
                    }
                }
                for i in 0..big {
                    let same0 = from0.t_at(i) == a[1].t_at(i) && from0.v_at(i) == a[1].v_at(i);
                    let same1 = from1.t_at(i) == b[2].t_at(i) && from1.v_at(i) == b[2].v_at(i);
                    assert!(same0 && same1, "n = {n}: P2's halves at {i}");
                }
            }
        }
    }
}
