//! [`LinearScanOram`]: a three-party DORAM that touches every word on every access — the
//! baseline for the sublinear protocols and a second oracle, with real secret sharing and real
//! messages, for small memories.
//!
//! # Protocol
//! Three parties in a ring, honest majority, one passive corruption, over the word ring `W`
//! (`Fp` or `Z64`). Notation as in [`doram_mpc`]: ⟨x⟩ additive, ⟦x⟧ replicated shares.
//!
//! **State.** The memory is held as replicated shares ⟦M⟧, so that the inner product of two
//! replicated vectors is a local computation (each party's three cross terms) and needs no
//! message.
//!
//! **Preprocessing, per access** (input-independent, batched: a batch of any size costs 4
//! rounds).
//! 1. *Deal.* The access's dealer `D = P_{j mod 3}` (rotating, so the dealer's extra message is
//!    spread over the parties) samples a mask `R₁ = s₁ + n·q₁` (`s₁` uniform in `0..n`, `q₁` in
//!    `0..2^σ`, σ = [`STAT_SEC`]) and splits the unit vector `e_{−R₁ mod n}` between its two
//!    neighbours: the successor's half comes from their common PRG, the predecessor's half is
//!    sent (`n` elements, `D → D−1`). The two neighbours sample a second mask `R₂` from *their*
//!    common PRG and both rotate their halves by `−R₂ mod n`. Now `f = e_{−R mod n}` for
//!    `R = R₁ + R₂` is additively shared by the two non-dealers, and ⟨R⟩ by `D` (holding `R₁`)
//!    and its successor (holding `R₂`). The dealer knows `R₁`, the others `R₂`; nobody knows `R`
//!    or the position of `f`'s one.
//! 2. *Replicate* ⟨f⟩ → ⟦f⟧ (one round, `n` elements to the successor).
//! 3. *Beaver vectors.* Random ⟦a⟧, ⟦b⟧ (no communication); ⟦a·f⟧, ⟦b·f⟧ (one round, `2n`), then
//!    ⟦a·b·f⟧ = ⟦a⟧·⟦b·f⟧ (one round, `n`).
//!
//! **Access** (op, addr, val), two rounds:
//! 1. Open `c = addr + R` and `x = op − a` to all parties (one round, 2 elements to each peer).
//!    `e = f` rotated right by `k = c mod n` is the unit vector at `addr`, as `addr = c − R` over
//!    the integers. ⟨old⟩ = Σ_j ⟦e_j⟧·⟦M_j⟧ + ⟨0⟩, computed locally.
//! 2. Open `y = (val − old) − b` (one round, 1 element to each peer). The update
//!    `δ = op·(val − old) = (x + a)(y + b)` times `e` is then linear in the preprocessed vectors:
//!    `M += x·y·e + x·(b·e) + y·(a·e) + a·b·e`, computed locally — a read (op = 0) adds 0. The
//!    access returns ⟨old⟩.
//!
//! **Init** replicates the input shares (one round, `n` elements to the successor); **Get
//! Memory** re-randomises the own components with F_Zero (no communication).
//!
//! # Why this design
//! The one-hot vector must be shared without any party learning the address. An MPC equality
//! test of `addr` against every index would need bit decompositions; instead the address is
//! masked with a random offset whose unit vector was shared in preprocessing, and the opened
//! offset rotates it (the technique Duoram uses with DPFs). A single dealer could deal `e_R`
//! only if it never sees `c`; opening `c` to all three parties — so that all three can rotate
//! their replicated components — requires that nobody knows `R`, hence the two-part mask. The
//! dealt vector is sent in full rather than compressed with a DPF: replication and the Beaver
//! products already cost `4n` elements per access, so a DPF would save at most a fifth of the
//! preprocessing bytes. With the Beaver vectors, the online phase is two rounds and six
//! elements per party, independent of `n`.
//!
//! Masking is statistical: each party knows at most one of `R₁` (the dealer) and `R₂` (the
//! other two), and the other alone is uniform in `0..n·2^σ`, so the opened `c = addr + R₁ + R₂`
//! is within statistical distance `n / (n·2^σ) = 2^−σ` of a value independent of `addr` in
//! `0..n`. This needs `n·(2^{σ+1} + 1) ≤ 2^CAPACITY_BITS` so that the sum never wraps: any
//! practical `n` for `Fp`, `n < 2^23` for `Z64` ([`OramError::InvalidSize`] otherwise).
//!
//! # Costs
//! Per party, in elements of `W` (16 bytes for `Fp`, 8 for `Z64`); the `costs` test measures
//! every row.
//!
//! | phase | rounds | elements sent |
//! |---|---|---|
//! | setup ([`LinearScanOram::setup`]) | 1 | 16 bytes to each neighbour |
//! | preprocess, batch of `k` accesses | 4 | `4kn`, plus `n` per access this party deals (every third) |
//! | init | 1 | `n` |
//! | access | 2 | 6 (2 to each peer, then 1 to each peer) |
//! | memory | 0 | 0 |
//!
//! Work is `O(n)` ring operations per access online and `O(n)` per access in preprocessing;
//! storage is `8n` elements per preprocessed access plus `2n` for the memory.
//!
//! # Structure
//! The local computations (masks, dealing, rotation, the inner product and the update) are
//! I/O-free functions in `local`, unit-tested on dealt shares without a network. The rounds
//! themselves are the engine's ([`Mpc3`], whose round functions are already I/O-free) plus one
//! message of the protocol's own, the dealt vector; this module sequences them over the
//! session. Splitting that sequencing into per-round state machines as well would add types
//! without adding a test that the engine's own round tests and the conformance kit do not
//! already give.
//!
//! # Out-of-range addresses and op values
//! An address whose integer representative `a ≥ n` accesses cell `a mod n` as long as
//! `a + 2n·2^σ` stays below the ring's order, and an unspecified cell otherwise; in both cases
//! the opened `c` no longer hides `a`. A shared op other than 0 or 1 adds `op·(val − old)` to
//! the cell. Neither is detected.

pub(crate) mod local;

use std::collections::VecDeque;

use doram_core::wire::PeerFault;
use doram_core::{PartyId, Seed};
use doram_mpc::{Additive, Mpc3, Replicated};
use doram_net::Session;

use crate::error::OramError;
use crate::instruction::{InstructionShare, OpVisibility};
use crate::interface::{DistributedOram, SharedMemory};
use crate::word::IntegerWord;
use local::{DealRole, Material, Params};

pub use local::STAT_SEC;

/// The most elements (summed over accesses) one preprocessing batch handles; larger requests
/// are split into batches of `max(1, BATCH_ELEMS / n)` accesses, 4 rounds each.
const BATCH_ELEMS: usize = 1 << 18;

/// Where an instance is in its life.
enum State<W> {
    /// Constructed; `init` not yet called.
    Fresh,
    /// Initialised: this party's replicated shares of the memory.
    Ready(Vec<Replicated<W>>),
    /// An operation failed half-way; the parties are out of step.
    Poisoned,
}

/// One party of the linear-scan DORAM over `n` words of `W` (see the [module
/// documentation](self) for the protocol and its costs).
///
/// It owns an [`Mpc3`] engine, which owns the party's [`Session`].
pub struct LinearScanOram<W> {
    mpc: Mpc3,
    params: Params,
    state: State<W>,
    pool: VecDeque<Material<W>>,
    /// Accesses preprocessed so far (the index of the next one), for the dealer rotation.
    dealt: u64,
}

impl<W> core::fmt::Debug for LinearScanOram<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let state = match self.state {
            State::Fresh => "fresh",
            State::Ready(_) => "ready",
            State::Poisoned => "poisoned",
        };
        f.debug_struct("LinearScanOram")
            .field("me", &self.mpc.me())
            .field("n", &self.params.n())
            .field("state", &state)
            .field("preprocessed", &self.pool.len())
            .finish()
    }
}

/// This party's half of an access's dealt unit vector f, in preprocessing step 1.
enum Half<W> {
    /// The dealer's: zero (its share went to its predecessor).
    Zero,
    /// The dealer's successor's: expanded from the seed it shares with the dealer, rotated.
    Own(Vec<W>),
    /// The dealer's predecessor's: received from the dealer, to be rotated by `shift`.
    Received { shift: usize },
}

/// Every access's ⟨R⟩ and the batch's ⟨f⟩ (n words per access), after preprocessing step 1.
type Dealt<W> = (Vec<Additive<W>>, Vec<Additive<W>>);

/// The products of preprocessing step 3 for a batch: per access ⟦a⟧, ⟦b⟧; per word ⟦a·f⟧,
/// ⟦b·f⟧, ⟦a·b·f⟧.
struct MaskProducts<W> {
    a: Vec<Replicated<W>>,
    b: Vec<Replicated<W>>,
    af: Vec<Replicated<W>>,
    bf: Vec<Replicated<W>>,
    abf: Vec<Replicated<W>>,
}

impl<W: IntegerWord> LinearScanOram<W> {
    /// An instance over `n` words on an engine that is already set up. No communication.
    ///
    /// # Errors
    /// [`OramError::InvalidSize`] if `n = 0` or `n` is too large for `W` (see the [module
    /// documentation](self)).
    pub fn new(mpc: Mpc3, n: usize) -> Result<Self, OramError> {
        let params = Params::new::<W>(n)?;
        Ok(LinearScanOram {
            mpc,
            params,
            state: State::Fresh,
            pool: VecDeque::new(),
            dealt: 0,
        })
    }

    /// Sets up the three-party engine over `session` with this party's randomness derived from
    /// `seed` (one round, [`Mpc3::setup`]) and returns an instance over `n` words.
    ///
    /// # Errors
    /// [`OramError::InvalidSize`] as [`new`](Self::new), checked before anything is sent; a
    /// peer fault during the setup.
    pub fn setup(session: Session, n: usize, seed: Seed) -> Result<Self, OramError> {
        Params::new::<W>(n)?;
        let mpc = Mpc3::setup(session, seed)?;
        Self::new(mpc, n)
    }

    /// The engine (e.g. for its session's statistics).
    pub fn mpc(&self) -> &Mpc3 {
        &self.mpc
    }

    /// Gives the engine back, dropping the memory and any preprocessed material.
    pub fn into_mpc(self) -> Mpc3 {
        self.mpc
    }

    fn check_usable(&self) -> Result<(), OramError> {
        match self.state {
            State::Poisoned => Err(OramError::Poisoned),
            _ => Ok(()),
        }
    }

    /// Runs `f`; if it fails, the parties may be out of step, so the instance is poisoned.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, OramError>,
    ) -> Result<T, OramError> {
        let r = f(self);
        if r.is_err() {
            self.state = State::Poisoned;
        }
        r
    }

    /// Preprocesses one batch of `k ≥ 1` accesses (four rounds).
    fn preprocess_batch(&mut self, k: usize) -> Result<(), OramError> {
        let (plan, to_prev) = self.deal_locally(k);
        let (r_shares, f_add) = self.exchange_dealt(plan, &to_prev)?;
        // Preprocessing step 2: ⟨f⟩ → ⟦f⟧.
        let f = self.mpc.to_replicated(&f_add)?;
        drop(f_add);
        let masks = self.mask_products(&f, k)?;
        self.store_batch(&r_shares, &f, &masks);
        self.dealt += k as u64;
        Ok(())
    }

    /// Preprocessing step 1 (deal), the local part. Per access: this party's additive share of
    /// R and of f, or (for a dealer's predecessor) the rotation of the half it will receive;
    /// and, for the accesses this party deals, the halves it sends its predecessor.
    fn deal_locally(&mut self, k: usize) -> (Vec<(W, Half<W>)>, Vec<W>) {
        let n = self.params.n();
        let me = self.mpc.me();
        let (next, prev) = (me.next(3), me.prev(3));
        let mut plan: Vec<(W, Half<W>)> = Vec::with_capacity(k);
        let mut to_prev: Vec<W> = Vec::new();
        for j in 0..k {
            let dealer = local::dealer_of(self.dealt + j as u64);
            let party = self.mpc.party_mut();
            match local::deal_role(me, dealer) {
                DealRole::Dealer => {
                    let mask = local::sample_mask(self.params, party.local_rng());
                    let y_next: Vec<W> = party.pairwise().with(next).expand(n);
                    // D → D−1: its half e_{−R₁} − y_next of the unit vector.
                    to_prev.extend(local::unit_minus(&y_next, mask.shift));
                    plan.push((W::from_u128(mask.value), Half::Zero));
                }
                DealRole::DealerNext => {
                    let y: Vec<W> = party.pairwise().with(dealer).expand(n);
                    // R₂ is common to this party and the dealer's predecessor, its successor.
                    let mask = local::sample_mask(self.params, party.pairwise().with(next));
                    let half = local::rotated(y, mask.shift);
                    plan.push((W::from_u128(mask.value), Half::Own(half)));
                }
                DealRole::DealerPrev => {
                    let mask = local::sample_mask(self.params, party.pairwise().with(prev));
                    plan.push((W::ZERO, Half::Received { shift: mask.shift }));
                }
            }
        }
        (plan, to_prev)
    }

    /// Preprocessing step 1 (deal), the round: sends the dealt halves to the predecessor,
    /// receives the successor's, and returns every access's ⟨R⟩ and the ⟨f⟩ of the batch.
    fn exchange_dealt(
        &mut self,
        plan: Vec<(W, Half<W>)>,
        to_prev: &[W],
    ) -> Result<Dealt<W>, OramError> {
        let n = self.params.n();
        let me = self.mpc.me();
        let (next, prev) = (me.next(3), me.prev(3));
        let from_next_count = plan
            .iter()
            .filter(|(_, h)| matches!(h, Half::Received { .. }))
            .count()
            * n;
        let session = self.mpc.session_mut();
        if !to_prev.is_empty() {
            doram_mpc::send_framed(session, prev, to_prev)?;
        }
        let received: Vec<W> = if from_next_count > 0 {
            doram_mpc::recv_framed(session, next, from_next_count, "dealt unit vectors")?
        } else {
            Vec::new()
        };
        let mut received = received.chunks_exact(n.max(1));
        let mut f_add: Vec<Additive<W>> = Vec::with_capacity(plan.len() * n);
        let mut r_shares: Vec<Additive<W>> = Vec::with_capacity(plan.len());
        for (r, half) in plan {
            r_shares.push(Additive::from_share(r));
            match half {
                Half::Zero => f_add.extend(std::iter::repeat_n(Additive::ZERO, n)),
                Half::Own(v) => f_add.extend(v.into_iter().map(Additive::from_share)),
                Half::Received { shift } => {
                    let chunk = received.next().ok_or_else(|| {
                        PeerFault::malformed(next, "dealt unit vectors", "fewer than dealt")
                    })?;
                    let v = local::rotated(chunk.to_vec(), shift);
                    f_add.extend(v.into_iter().map(Additive::from_share));
                }
            }
        }
        Ok((r_shares, f_add))
    }

    /// Preprocessing step 3: ⟦a⟧, ⟦b⟧ random per access; ⟦a·f⟧ ‖ ⟦b·f⟧ in one round, then
    /// ⟦a·b·f⟧.
    fn mask_products(
        &mut self,
        f: &[Replicated<W>],
        k: usize,
    ) -> Result<MaskProducts<W>, OramError> {
        let n = self.params.n();
        let a = self.mpc.random_replicated::<W>(k);
        let b = self.mpc.random_replicated::<W>(k);
        let spread = |s: &[Replicated<W>]| -> Vec<Replicated<W>> {
            s.iter().flat_map(|&x| std::iter::repeat_n(x, n)).collect()
        };
        let a_wide = spread(&a);
        let mut left = a_wide.clone();
        left.extend(spread(&b));
        let mut right = f.to_vec();
        right.extend_from_slice(f);
        let mut af = self.mpc.mul(&left, &right)?;
        let bf = af.split_off(k * n);
        drop((left, right));
        let abf = self.mpc.mul(&a_wide, &bf)?;
        Ok(MaskProducts { a, b, af, bf, abf })
    }

    /// Puts the batch's material into the pool, one access at a time.
    fn store_batch(&mut self, r_shares: &[Additive<W>], f: &[Replicated<W>], m: &MaskProducts<W>) {
        let n = self.params.n();
        let chunks = |v: &[Replicated<W>]| -> Vec<Vec<Replicated<W>>> {
            v.chunks_exact(n).map(<[_]>::to_vec).collect()
        };
        let parts = chunks(f)
            .into_iter()
            .zip(chunks(&m.af))
            .zip(chunks(&m.bf))
            .zip(chunks(&m.abf));
        for (j, (((f, af), bf), abf)) in parts.enumerate() {
            self.pool.push_back(Material {
                r: r_shares[j],
                a: m.a[j].to_additive(),
                b: m.b[j].to_additive(),
                f,
                af,
                bf,
                abf,
            });
        }
    }

    fn preprocess_all(&mut self, accesses: usize) -> Result<(), OramError> {
        let per_batch = (BATCH_ELEMS / self.params.n()).max(1);
        let mut left = accesses;
        while left > 0 {
            let k = left.min(per_batch);
            self.preprocess_batch(k)?;
            left -= k;
        }
        Ok(())
    }

    /// The two online rounds of an access (see the [module documentation](self)).
    fn access_online(
        &mut self,
        op: Additive<W>,
        ins: &InstructionShare<W>,
    ) -> Result<Additive<W>, OramError> {
        if self.pool.is_empty() {
            self.preprocess_batch(1)?;
        }
        // Non-empty: filled just above if it was empty.
        let m = self.pool.pop_front().ok_or(OramError::Poisoned)?;
        let State::Ready(memory) = &mut self.state else {
            return Err(OramError::NotInitialized);
        };

        // Access round 1: open c = addr + R and x = op − a.
        let opened = self.mpc.open(&[ins.addr + m.r, op - m.a])?;
        let (c, x) = (opened[0], opened[1]);
        let k = self.params.offset(c);
        let old =
            Additive::from_share(local::rotated_dot(&m.f, memory, k)) + self.mpc.zero::<W>(1)[0];

        // Access round 2: open y = (val − old) − b; then M += δ·e locally.
        let y = self.mpc.open(&[ins.value - old - m.b])?[0];
        local::rotated_update(memory, k, x, y, &m);
        Ok(old)
    }
}

impl<W: IntegerWord> SharedMemory for LinearScanOram<W> {
    type Word = W;
    const OP_VISIBILITY: OpVisibility = OpVisibility::Hidden;

    fn len(&self) -> usize {
        self.params.n()
    }

    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.check_usable()?;
        self.guarded(|o| o.preprocess_all(accesses))
    }

    fn preprocessed(&self) -> usize {
        self.pool.len()
    }

    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
        match self.state {
            State::Poisoned => return Err(OramError::Poisoned),
            State::Ready(_) => return Err(OramError::AlreadyInitialized),
            State::Fresh => {}
        }
        if memory.len() != self.params.n() {
            return Err(OramError::WrongMemoryLength {
                expected: self.params.n(),
                got: memory.len(),
            });
        }
        self.guarded(|o| {
            // Ramen Fig. 13, Init: ⟨M⟩ → ⟦M⟧.
            let replicated = o.mpc.to_replicated(memory)?;
            o.state = State::Ready(replicated);
            Ok(())
        })
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        match self.state {
            State::Poisoned => return Err(OramError::Poisoned),
            State::Fresh => return Err(OramError::NotInitialized),
            State::Ready(_) => {}
        }
        let op = ins.op.to_additive(self.mpc.me());
        self.guarded(|o| o.access_online(op, ins))
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        let State::Ready(memory) = &self.state else {
            return Err(match self.state {
                State::Poisoned => OramError::Poisoned,
                _ => OramError::NotInitialized,
            });
        };
        // Ramen Fig. 13, Get Memory: the own components, re-randomised with F_Zero.
        let own = Replicated::to_additive_vec(memory);
        Ok(self.mpc.reshare(&own))
    }

    fn parties(&self) -> usize {
        3
    }
}

impl<W: IntegerWord> DistributedOram for LinearScanOram<W> {
    fn me(&self) -> PartyId {
        self.mpc.me()
    }

    /// Every message goes through the engine's framing ([`doram_mpc::send_framed`]), so no
    /// frame exceeds [`doram_mpc::MAX_FRAME_BYTES`] (1 MiB) at any size; the largest messages
    /// (the first product of a preprocessing batch, 2·k·n words with k·n ≤ max(n, 2^18), and
    /// Init's n words) span several frames.
    fn max_message_bytes(&self) -> usize {
        doram_mpc::MAX_FRAME_BYTES
    }

    fn session(&self) -> &Session {
        self.mpc.session()
    }

    fn session_mut(&mut self) -> &mut Session {
        self.mpc.session_mut()
    }
}
