//! Ramen Fig. 14 (Π_DORAM): [`Ramen`], one party's endpoint of the distributed ORAM — setup,
//! preprocessing, Init, Access (reads and writes alike), the epoch refresh and Get Memory.
//!
//! # One access, round by round
//! Every round sends all of its messages before receiving any, so the sub-protocols that do not
//! depend on each other share rounds ("R" = round; P0, P1, P2 are the paper's P_1, P_2, P_3):
//!
//! | round | messages | figure |
//! |---|---|---|
//! | R1 | stash shares to the successor (replication); masked DOPRF y_2, d to P2 | Fig. 4, steps 3, 8 |
//! | R2 | masked DOPRF z_3 to P0 | Fig. 4, step 3 |
//! | R3 | flag shift adr' ⊕ α from P0 to P1, P2 | Fig. 4, step 4 |
//! | R4 | products flag·(n + c − adr), flag·op; location openings | Fig. 14, step 2; Fig. 4, step 10(b) |
//! | R5 | unmasked DOPRFs y_2, e (three memory keys and the stash key) | Fig. 6, step 2(a); Fig. 5, step 1 |
//! | R6 | unmasked DOPRFs z_1 | Fig. 6, step 2(a); Fig. 5, step 1 |
//! | R7 | p-OT accesses; stash tag from P2 to P1 | Fig. 6, step 2(e); Fig. 5, step 2 |
//! | R8 | products op·(val − val_M), op·flag·(val_st − val_M), flag·(val_st − val_M) | Fig. 5, step 5; Fig. 14, step 5 |
//! | R9 | write corrections γ | Fig. 5, step 7 |
//!
//! The output is known after R8; R9 completes the stash update. The product op·flag is computed
//! in R4 next to the address select, so that R8 computes Δ = op·(val − val_M) −
//! (op·flag)·(val_st − val_M) = val_new − val_old and val_old = val_M + flag·(val_st − val_M)
//! (Fig. 5, steps 5–6, and Fig. 14, step 5, whose output d equals val_old) in one round.
//!
//! In the code, an access borrows the parts of [`Ramen`] it works on as an `Access`, whose
//! methods `round1` … `round9` are the rounds of the table, grouped by `stash_read` (R1–R4),
//! `memory_read` (R5–R7) and `stash_write` (R8–R9); small structs carry the state from one
//! round to the next.
//!
//! # Lockstep and poisoning
//! The three parties must call the same methods in the same order. A peer fault in the middle
//! of a protocol leaves the parties out of step: the instance is then poisoned and every later
//! call fails with [`RamenError::Poisoned`]. Misuse (access before init, …) is detected before
//! anything is sent and leaves the instance usable.
//!
//! # State
//! [`Ramen`] holds the engine (pairwise PRGs, F_Zero, products), its ends of the four DOPRF
//! instances (K of its own memory key, R1 of the successor's, R2 of the predecessor's, and its
//! role for the stash key), a queue of prepared epochs ([`EpochPrep`]), the memory shares and the
//! live epoch (stash shares, L_stash, M'_i, the read positions). The phase is an enum rather than
//! a typestate because `doram_oram::DistributedOram` calls `init` on the same object.

use std::collections::VecDeque;
use std::time::Instant;

use doram_core::{PartyId, Seed};
use doram_doprf::msgs::{
    KeyHolderSeed, KeyShare1, KeyShare2, MaskedC3, MaskedD, MaskedY2, MaskedZ3, ReceiverSeed,
    UnmaskedC1, UnmaskedE, UnmaskedY2, UnmaskedZ1,
};
use doram_doprf::party::{AwaitingKeyHolderSeed, AwaitingKeyShares, AwaitingReceiverSeed};
use doram_doprf::{KeyHolder, Receiver1, Receiver2, Role, Roles};
use doram_field::Fp;
use doram_mpc::{Additive, Party, Replicated, Round, Setup};
use doram_net::Session;
use doram_prim::AesPrg;

use crate::driver::Channel;
use crate::error::RamenError;
use crate::msgs::{
    FlagKeys, FlagShift, LocKeys, LocOpening, LocOut, MaskedMemory, PositionMapMsg, PotAccess,
    PotChooserKeys, PotReceiverKey, StashTag, WriteBackKey, WriteCorrection,
};
use crate::params::Params;
use crate::pot;
use crate::read::{self, HelperEpoch, KeyHolderEpoch, ReaderEpoch};
use crate::refresh::{self, EpochPrep, FlagMaterial};
use crate::stash::{self, FlagDealt, LocDealt, StashShares};
use crate::steps::{Step, StepTimes};

/// One party's role state in one DOPRF instance.
enum RoleState {
    K(Box<KeyHolder>),
    R1(Box<Receiver1>),
    R2(Box<Receiver2>),
}

/// A DOPRF instance during setup.
enum PendingSetup {
    K(Box<AwaitingKeyShares>),
    R1(Box<AwaitingKeyHolderSeed>),
    R2(Box<AwaitingReceiverSeed>),
}

/// This party's ends of the four DOPRF instances of Ramen: the three memory keys (Fig. 6) and
/// the stash key (Fig. 4/5).
struct Doprfs {
    /// K of the memory key k_{me+1} (the successor reads with it).
    mem_k: KeyHolder,
    /// R1 of the memory key k_{me−1} (held by the successor).
    mem_r1: Receiver1,
    /// R2 of the memory key k_{me} (held by the predecessor): learns the tags.
    mem_r2: Receiver2,
    /// The stash key's instance: K = P0, R1 = P1, R2 = P2.
    stash: RoleState,
    mem_params: doram_doprf::Params,
    stash_params: doram_doprf::Params,
}

/// The live state of the current epoch.
struct Epoch {
    holder: KeyHolderEpoch,
    reader: ReaderEpoch,
    helper: HelperEpoch,
    flag: FlagMaterial,
    loc_dealt: LocDealt,
    loc_from_next: Vec<doram_dpf::HalfTreeKey<crate::msgs::LocOut>>,
    loc_from_prev: Vec<doram_dpf::HalfTreeKey<crate::msgs::LocOut>>,
    stash: StashShares,
    /// L_stash (P1 and P2 only; empty at P0).
    list: Vec<u64>,
}

impl Epoch {
    /// Accesses done in this epoch (the counter c of Fig. 14, from 0).
    fn count(&self) -> usize {
        self.stash.len()
    }
}

/// Whether the memory is loaded.
enum State {
    Uninit,
    Ready {
        /// ⟨M⟩: this party's additive shares of the n words.
        memory: Vec<Fp>,
        /// The current epoch, if started and not yet written back.
        epoch: Option<Box<Epoch>>,
    },
}

/// One party's endpoint of the Ramen distributed ORAM (Ramen Fig. 14) over a memory of n words
/// of `Fp`. Reads and writes exchange exactly the same messages: the operation is a secret bit.
pub struct Ramen {
    params: Params,
    chan: Channel,
    mpc: Party,
    doprf: Doprfs,
    local: AesPrg,
    /// PRG shared with the predecessor: σ of the key this party holds (the predecessor helps).
    sigma_with_prev: AesPrg,
    /// PRG shared with the successor: σ of the key the successor holds (this party helps).
    sigma_with_next: AesPrg,
    pool: Option<rayon::ThreadPool>,
    prepared: VecDeque<EpochPrep>,
    state: State,
    poisoned: bool,
    times: StepTimes,
    /// Intermediate shares recorded for the layer tests (see [`Probe`]), if enabled.
    probes: Option<Vec<Probe>>,
}

/// One party's shares of the outputs of each sub-protocol in one access, recorded only when
/// enabled ([`Ramen::record_probes`]), so that tests can reconstruct them and compare them with
/// the ideal functionalities of [`crate::ideal`]. They are this party's own shares (which it
/// holds anyway); recording them changes no message.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    /// F_Stash Read (Fig. 16): ⟨flag⟩.
    pub flag: Fp,
    /// F_Stash Read: ⟨loc⟩.
    pub loc: Fp,
    /// F_Stash Read: ⟨val_st⟩.
    pub val_st: Fp,
    /// Fig. 14, step 2: ⟨adr_M⟩.
    pub adr_m: Fp,
    /// F_r-M Access (Fig. 18): ⟨val_M⟩.
    pub val_m: Fp,
    /// F_Stash Write (Fig. 16): ⟨stash.val⟩ afterwards.
    pub stash_val: Vec<Fp>,
    /// F_Stash Write: ⟨stash.val_old⟩ afterwards.
    pub stash_old: Vec<Fp>,
    /// F_w-M (Fig. 20): ⟨M⟩ after the write-back, if this access ended an epoch.
    pub written_back: Option<Vec<Fp>>,
}

impl std::fmt::Debug for Ramen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ramen")
            .field("me", &self.chan.me())
            .field("params", &self.params)
            .field("prepared_epochs", &self.prepared.len())
            .finish_non_exhaustive()
    }
}

fn setup_send(
    chan: &mut Channel,
    roles: Roles,
    params: doram_doprf::Params,
    seed: Seed,
) -> Result<PendingSetup, RamenError> {
    let me = chan.me();
    match roles.role_of(me) {
        Some(Role::KeyHolder) => {
            let (pending, msg) = KeyHolder::setup_start(params, roles, me, seed)?;
            chan.send_doprf(roles.r1(), &msg)?;
            Ok(PendingSetup::K(Box::new(pending)))
        }
        Some(Role::R1) => {
            let (pending, seed_msg, k1) = Receiver1::setup_start(params, roles, me, seed)?;
            chan.send_doprf(roles.r2(), &seed_msg)?;
            chan.send_doprf(roles.key_holder(), &k1)?;
            Ok(PendingSetup::R1(Box::new(pending)))
        }
        Some(Role::R2) => {
            let (pending, k2) = Receiver2::setup_start(params, roles, me, seed)?;
            chan.send_doprf(roles.key_holder(), &k2)?;
            Ok(PendingSetup::R2(Box::new(pending)))
        }
        None => Err(RamenError::ApiMisuse(
            "this party plays no role in a DOPRF instance",
        )),
    }
}

fn setup_recv(
    chan: &mut Channel,
    roles: Roles,
    params: doram_doprf::Params,
    pending: PendingSetup,
) -> Result<RoleState, RamenError> {
    Ok(match pending {
        PendingSetup::K(p) => {
            let k1: KeyShare1 = chan.recv_doprf(roles.r1(), &params, 0)?;
            let k2: KeyShare2 = chan.recv_doprf(roles.r2(), &params, 0)?;
            RoleState::K(Box::new(p.finish(k1, k2)?))
        }
        PendingSetup::R1(p) => {
            let s: KeyHolderSeed = chan.recv_doprf(roles.key_holder(), &params, 0)?;
            RoleState::R1(Box::new(p.finish(s)))
        }
        PendingSetup::R2(p) => {
            let s: ReceiverSeed = chan.recv_doprf(roles.r1(), &params, 0)?;
            RoleState::R2(Box::new(p.finish(s)))
        }
    })
}

const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

/// The preprocessing threads, if `params` asks for more than one.
fn thread_pool(params: &Params) -> Result<Option<rayon::ThreadPool>, RamenError> {
    if params.threads() <= 1 {
        return Ok(None);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(params.threads())
        .build()
        .map(Some)
        .map_err(|_| RamenError::Local("could not start the preprocessing threads"))
}

/// The setup round: pairwise PRG seeds (F_Zero) and DOPRF Init + KeyGen of the four instances
/// (Ramen Fig. 9/22, Init and KeyGen), seeded from `master`.
fn setup_round(
    chan: &mut Channel,
    params: &Params,
    master: &mut AesPrg,
) -> Result<(Party, Doprfs), RamenError> {
    let me = chan.me();
    let mem_params = doram_doprf::Params::new(params.tag_bits() as usize)?;
    let stash_params = doram_doprf::Params::new(params.stash_tag_bits() as usize)?;

    // Pairwise PRG seeds (F_Zero) and DOPRF Init + KeyGen, all in one round.
    let (setup, seed_msgs) = Setup::start(me, 3, master.next_seed())?;
    for m in &seed_msgs {
        chan.send_raw(m.to, &m.seed.0)?;
    }
    let instances: Vec<(Roles, doram_doprf::Params)> = ALL
        .iter()
        .map(|&k| Ok((Roles::ramen_memory(k)?, mem_params)))
        .chain(std::iter::once(Ok((Roles::ramen_stash(), stash_params))))
        .collect::<Result<_, RamenError>>()?;
    let mut pending = Vec::with_capacity(4);
    for &(roles, p) in &instances {
        pending.push(setup_send(chan, roles, p, master.next_seed())?);
    }
    let mut got = Vec::with_capacity(2);
    for from in setup.expected() {
        let bytes = chan.recv_raw(from, 16, "a pairwise PRG seed (F_Zero setup)")?;
        let mut seed = [0u8; 16];
        seed.copy_from_slice(&bytes);
        got.push((from, Seed(seed)));
    }
    // `got` has one entry per expected sender: exactly two.
    let mpc = setup.finish([got[0], got[1]])?;
    let mut states = Vec::with_capacity(4);
    for (&(roles, p), pend) in instances.iter().zip(pending) {
        states.push(setup_recv(chan, roles, p, pend)?);
    }
    let doprf = Doprfs::from_states(me, states, mem_params, stash_params)?;
    Ok((mpc, doprf))
}

impl Doprfs {
    /// This party's ends of the four instances from their set-up states: the memory keys'
    /// instances k_0, k_1, k_2 (in this order), then the stash key's.
    fn from_states(
        me: PartyId,
        states: Vec<RoleState>,
        mem_params: doram_doprf::Params,
        stash_params: doram_doprf::Params,
    ) -> Result<Doprfs, RamenError> {
        let mut states = states.into_iter();
        let mut mem = [None, None, None];
        for (k, st) in ALL.iter().zip(states.by_ref()) {
            mem[k.index()] = Some(st);
        }
        let (next, prev) = (me.next(3), me.prev(3));
        let take = |s: Option<RoleState>| s.ok_or(RamenError::Local("missing DOPRF instance"));
        let mem_k = match take(mem[me.index()].take())? {
            RoleState::K(k) => *k,
            _ => return Err(RamenError::Local("wrong DOPRF role")),
        };
        let mem_r1 = match take(mem[next.index()].take())? {
            RoleState::R1(r) => *r,
            _ => return Err(RamenError::Local("wrong DOPRF role")),
        };
        let mem_r2 = match take(mem[prev.index()].take())? {
            RoleState::R2(r) => *r,
            _ => return Err(RamenError::Local("wrong DOPRF role")),
        };
        let stash = take(states.next())?;
        Ok(Doprfs {
            mem_k,
            mem_r1,
            mem_r2,
            stash,
            mem_params,
            stash_params,
        })
    }
}

impl Ramen {
    /// Sets up this party's endpoint on `session` (three parties): pairwise PRG seeds (F_Zero)
    /// and the four DOPRF instances, in one round. All of this party's randomness derives from
    /// `seed`.
    ///
    /// # Errors
    /// [`RamenError::InvalidParams`] unless the session has three parties (before anything is
    /// sent); a peer fault, naming the peer.
    pub fn new(session: Session, params: Params, seed: Seed) -> Result<Ramen, RamenError> {
        if session.n_parties() != 3 || session.me().index() >= 3 {
            return Err(RamenError::InvalidParams(
                "Ramen needs a session of three parties",
            ));
        }
        let pool = thread_pool(&params)?;
        let start = Instant::now();
        let mut chan = Channel::new(session);
        let me = chan.me();
        let caller_phase = chan.session().phase().to_owned();
        chan.session_mut().set_phase(Step::Setup.phase());
        let mut master = AesPrg::new(seed);
        let (mut mpc, doprf) = setup_round(&mut chan, &params, &mut master)?;
        let (next, prev) = (me.next(3), me.prev(3));
        let sigma_with_prev = AesPrg::new(mpc.pairwise().with(prev).next_seed());
        let sigma_with_next = AesPrg::new(mpc.pairwise().with(next).next_seed());
        let local = AesPrg::new(master.next_seed());
        let mut times = StepTimes::default();
        times.since(Step::Setup, start);
        chan.session_mut().set_phase(&caller_phase);
        Ok(Ramen {
            params,
            chan,
            mpc,
            doprf,
            local,
            sigma_with_prev,
            sigma_with_next,
            pool,
            prepared: VecDeque::new(),
            state: State::Uninit,
            poisoned: false,
            times,
            probes: None,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.chan.me()
    }

    /// The session (statistics, transcript, timeout).
    pub fn session(&self) -> &Session {
        self.chan.session()
    }

    /// The session, mutably (phase labels, transcripts, timeouts; never for sending).
    pub fn session_mut(&mut self) -> &mut Session {
        self.chan.session_mut()
    }

    /// Time spent per step so far.
    pub fn step_times(&self) -> &StepTimes {
        &self.times
    }

    /// Whether an earlier peer fault left this instance unusable.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// Whether [`load`](Ramen::load) has been called.
    pub fn is_initialized(&self) -> bool {
        matches!(self.state, State::Ready { .. })
    }

    /// Accesses covered by preprocessed material: the rest of the current epoch plus s per
    /// prepared epoch.
    pub fn preprocessed(&self) -> usize {
        let current = match &self.state {
            State::Ready { epoch: Some(e), .. } => self.params.epoch() - e.count(),
            _ => 0,
        };
        current + self.prepared.len() * self.params.epoch()
    }

    /// Accesses done in the current epoch (0 right after a write-back).
    pub fn epoch_position(&self) -> usize {
        match &self.state {
            State::Ready { epoch: Some(e), .. } => e.count(),
            _ => 0,
        }
    }

    /// Runs `f`, poisoning the instance if it fails (a failure mid-protocol leaves the parties
    /// out of step).
    /// The caller's session phase is restored afterwards (the steps set their own phases).
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, RamenError>,
    ) -> Result<T, RamenError> {
        if self.poisoned {
            return Err(RamenError::Poisoned);
        }
        let phase = self.chan.session().phase().to_owned();
        let r = f(self);
        self.chan.session_mut().set_phase(&phase);
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    /// Runs the input-independent preprocessing for at least `accesses` further accesses
    /// (whole epochs: one round of communication per epoch).
    ///
    /// # Errors
    /// A peer fault (the instance is then poisoned).
    pub fn prepare(&mut self, accesses: usize) -> Result<(), RamenError> {
        self.guarded(|r| {
            while r.preprocessed() < accesses {
                r.prepare_epoch()?;
            }
            Ok(())
        })
    }

    /// Ramen Fig. 14, Init: loads this party's additive shares of the n words. The epoch
    /// starts (and M'_i is sent, Fig. 6, Init step 5) at the first access.
    ///
    /// # Errors
    /// [`RamenError::ApiMisuse`] on a second call or a wrong length (nothing is sent).
    pub fn load(&mut self, memory: &[Additive<Fp>]) -> Result<(), RamenError> {
        if self.poisoned {
            return Err(RamenError::Poisoned);
        }
        if self.is_initialized() {
            return Err(RamenError::AlreadyInitialized);
        }
        if memory.len() != self.params.n() {
            return Err(RamenError::WrongMemoryLength {
                expected: self.params.n(),
                got: memory.len(),
            });
        }
        self.state = State::Ready {
            memory: Additive::shares(memory),
            epoch: None,
        };
        Ok(())
    }

    /// Ramen Fig. 14, Access: executes the shared instruction (op, addr, val), where op is a
    /// shared bit (0 = read, 1 = write), and returns this party's share of the value at addr
    /// before the access. Reads and writes send exactly the same messages.
    ///
    /// # Errors
    /// [`RamenError::ApiMisuse`] before [`load`](Ramen::load) (nothing is sent); a peer fault
    /// (the instance is then poisoned).
    pub fn access_shared(
        &mut self,
        op: Additive<Fp>,
        addr: Additive<Fp>,
        val: Additive<Fp>,
    ) -> Result<Additive<Fp>, RamenError> {
        if !self.is_initialized() {
            return Err(RamenError::NotInitialized);
        }
        self.guarded(|r| r.access_inner(op, addr, val))
    }

    /// Ramen Fig. 14, Get Memory: fresh additive shares of the whole memory, with the stash of
    /// the current epoch written back (into a copy: the epoch continues unchanged).
    ///
    /// # Errors
    /// [`RamenError::ApiMisuse`] before [`load`](Ramen::load); a peer fault.
    pub fn memory_shares(&mut self) -> Result<Vec<Additive<Fp>>, RamenError> {
        if !self.is_initialized() {
            return Err(RamenError::NotInitialized);
        }
        self.guarded(|r| r.memory_inner())
    }

    // -----------------------------------------------------------------------------------------
    // Preprocessing.

    /// Prepares one epoch (see [`EpochPrep`]): local work, then one round of messages.
    fn prepare_epoch(&mut self) -> Result<(), RamenError> {
        let start = Instant::now();
        self.chan.session_mut().set_phase(Step::Preprocess.phase());
        let local = self.prepare_local()?;
        // DOPRF preprocessing (Fig. 22, steps 1–3; Fig. 9, steps 1–5) and stash KeyGen.
        let doprf = doprf_prep_start(&mut self.doprf, self.params.stash());
        send_prep(&mut self.chan, &local, &doprf)?;
        let prep = recv_prep(&mut self.chan, &self.params, &mut self.doprf, local, doprf)?;
        self.prepared.push_back(prep);
        self.times.since(Step::Preprocess, start);
        Ok(())
    }

    /// The local, input-independent work of preparing one epoch: this party's memory key, tags,
    /// positions and p-OT (Fig. 6, Init steps 1–5; Fig. 2, Init), the helper's positions, the
    /// location DPF keys (Fig. 4, step 10(c)) and, at P0, the flag DPF keys (Fig. 4, step 4).
    fn prepare_local(&mut self) -> Result<LocalPrep, RamenError> {
        let params = self.params;
        let s = params.stash();
        let (holder, map_msg, to_chooser, to_receiver) = read::prepare_key_holder(
            &params,
            &mut self.local,
            &mut self.sigma_with_prev,
            self.pool.as_ref(),
        )?;
        let helper_sigma = read::helper_sigma(&params, &mut self.sigma_with_next);
        let (loc_dealt, loc_to_next, loc_to_prev) = stash::deal_loc_keys(s, s, &mut self.local);
        let flag_deal = (self.chan.me() == PartyId::P0)
            .then(|| stash::deal_flag_keys(s, params.stash_tag_bits(), &mut self.local));
        Ok(LocalPrep {
            holder,
            helper_sigma,
            loc_dealt,
            flag_deal,
            map_msg,
            to_chooser,
            to_receiver,
            loc_to_next,
            loc_to_prev,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Epochs.

    /// Starts an epoch: installs its keys and exchanges the masked memories (Ramen Fig. 6, Init
    /// step 5; the Refresh of Fig. 14). Prepares the epoch first if nothing is prepared.
    fn start_epoch(&mut self) -> Result<(), RamenError> {
        if self.prepared.is_empty() {
            self.prepare_epoch()?;
        }
        let start = Instant::now();
        self.chan.session_mut().set_phase(Step::Refresh.phase());
        let prep = self
            .prepared
            .pop_front()
            .ok_or(RamenError::Local("no prepared epoch"))?;
        let me = self.chan.me();
        let (next, prev) = (me.next(3), me.prev(3));
        let d = &mut self.doprf;
        // [Ramen Fig. 6, Init step 1] the key holder's key k_i for this epoch (drawn by the key
        // holder alone in preprocessing; the DOPRF only needs it to be unknown to R2).
        let l = d.mem_params.bits();
        d.mem_k.rekey(
            KeyShare1 {
                k1: prep.holder.key.elements().to_vec(),
            },
            KeyShare2 {
                k2: vec![Fp::ZERO; l],
            },
        )?;
        // [Ramen Fig. 4, step 1] a fresh stash key per epoch (KeyGen shares from preprocessing).
        if let (RoleState::K(k), Some((k1, k2))) = (&mut d.stash, prep.stash_key) {
            k.rekey(k1, k2)?;
        }
        let State::Ready { memory, epoch } = &mut self.state else {
            return Err(RamenError::ApiMisuse("no memory loaded"));
        };
        // [Ramen Fig. 6, Init step 5] P_{i−1} → P_i: M'_i.
        let masked = read::masked_memory(memory, &prep.holder);
        for msg in read::masked_memory_messages(&masked) {
            self.chan.send(next, &msg)?;
        }
        drop(masked);
        let m = self.params.memory();
        let mut m_prime = Vec::with_capacity(m);
        for len in read::masked_memory_chunks(m) {
            let chunk: MaskedMemory = self.chan.recv(prev, len)?;
            m_prime.extend_from_slice(&chunk.values);
        }
        *epoch = Some(Box::new(Epoch {
            holder: prep.holder,
            reader: ReaderEpoch {
                map: prep.map,
                chooser: prep.chooser,
                m_prime,
                positions: Vec::with_capacity(self.params.epoch()),
            },
            helper: prep.helper,
            flag: prep.flag,
            loc_dealt: prep.loc_dealt,
            loc_from_next: prep.loc_from_next,
            loc_from_prev: prep.loc_from_prev,
            stash: StashShares::default(),
            list: Vec::new(),
        }));
        self.times.since(Step::Refresh, start);
        Ok(())
    }

    /// Ramen Fig. 7 for the stash of `epoch`: exchanges the write-back keys and adds the
    /// updates into `memory`.
    fn write_back(
        chan: &mut Channel,
        params: &Params,
        rng: &mut AesPrg,
        pool: Option<&rayon::ThreadPool>,
        epoch: &Epoch,
        memory: &mut [Fp],
    ) -> Result<(), RamenError> {
        let me = chan.me();
        let (next, prev) = (me.next(3), me.prev(3));
        let c = epoch.count();
        // [Ramen Fig. 7, step 1(c)] P_i → P_{i−1}, P_{i+1}: mk_{i,i−1}, mk_{i,i+1}.
        // A sub-generator per write-back: the local generator advances by one seed whatever the
        // keys' generation consumes, so later draws do not depend on the data.
        let mut rng = AesPrg::new(rng.next_seed());
        let (to_next, to_prev) =
            refresh::write_back_keys(params, &epoch.reader.positions, &epoch.stash, &mut rng)?;
        chan.send(next, &to_next)?;
        chan.send(prev, &to_prev)?;
        let from_prev: WriteBackKey = chan.recv(prev, (params.memory(), c))?;
        let from_next: WriteBackKey = chan.recv(next, (params.memory(), c))?;
        // [Ramen Fig. 7, step 1(d)] evaluate both neighbours' keys at σ(j), j ∈ [n].
        refresh::apply_write_back(
            memory,
            &from_next,
            &epoch.holder,
            &from_prev,
            &epoch.helper,
            pool,
        );
        Ok(())
    }

    /// Ends the current epoch: write-back (Ramen Fig. 7) and F_Zero(n) (steps 2–3).
    fn finish_epoch(&mut self) -> Result<(), RamenError> {
        let start = Instant::now();
        self.chan.session_mut().set_phase(Step::WriteBack.phase());
        let State::Ready { memory, epoch } = &mut self.state else {
            return Err(RamenError::ApiMisuse("no memory loaded"));
        };
        let Some(e) = epoch.take() else {
            return Ok(());
        };
        Self::write_back(
            &mut self.chan,
            &self.params,
            &mut self.local,
            self.pool.as_ref(),
            &e,
            memory,
        )?;
        // [Ramen Fig. 7, steps 2–3] ⟨M⟩ := ⟨M⟩ + ⟨0⟩.
        let fresh = self
            .mpc
            .reshare(&Additive::from_shares(std::mem::take(memory)));
        *memory = Additive::shares(&fresh);
        self.times.since(Step::WriteBack, start);
        Ok(())
    }

    fn memory_inner(&mut self) -> Result<Vec<Additive<Fp>>, RamenError> {
        let start = Instant::now();
        self.chan.session_mut().set_phase(Step::GetMemory.phase());
        let State::Ready { memory, epoch } = &mut self.state else {
            return Err(RamenError::ApiMisuse("no memory loaded"));
        };
        let mut copy = memory.clone();
        if let Some(e) = epoch.as_deref()
            && e.count() > 0
        {
            Self::write_back(
                &mut self.chan,
                &self.params,
                &mut self.local,
                self.pool.as_ref(),
                e,
                &mut copy,
            )?;
        }
        let out = self.mpc.reshare(&Additive::from_shares(copy));
        self.times.since(Step::GetMemory, start);
        Ok(out)
    }

    // -----------------------------------------------------------------------------------------
    // Access.

    /// Ramen Fig. 14, Access: starts the epoch if none is live, runs rounds R1–R9 (see the
    /// module docs) as the methods of [`Access`], and writes the stash back once it is full.
    fn access_inner(
        &mut self,
        op: Additive<Fp>,
        addr: Additive<Fp>,
        val: Additive<Fp>,
    ) -> Result<Additive<Fp>, RamenError> {
        if matches!(self.state, State::Ready { epoch: None, .. }) {
            self.start_epoch()?;
        }
        let mut access = self.access_parts()?;
        let read = access.stash_read(op, addr)?;
        let val_m = access.memory_read(read.adr_m)?;
        let old = access.stash_write(op, val, &read, val_m)?;
        access.record_probe(&read, val_m);
        let full = access.epoch.count() == access.params.stash();
        // [Ramen Fig. 14, step 6] the stash is full: write it back.
        if full {
            self.finish_epoch()?;
            if let (Some(probes), State::Ready { memory, .. }) = (&mut self.probes, &self.state)
                && let Some(last) = probes.last_mut()
            {
                last.written_back = Some(memory.clone());
            }
        }
        Ok(old)
    }

    /// The parts of this party that an access works on, with the live epoch.
    fn access_parts(&mut self) -> Result<Access<'_>, RamenError> {
        let Ramen {
            params,
            chan,
            mpc,
            doprf,
            local,
            state,
            times,
            probes,
            ..
        } = self;
        let State::Ready {
            epoch: Some(epoch), ..
        } = state
        else {
            return Err(RamenError::Local("no active epoch"));
        };
        let me = chan.me();
        Ok(Access {
            params: *params,
            me,
            next: me.next(3),
            prev: me.prev(3),
            c: epoch.count(),
            chan,
            mpc,
            d: doprf,
            local,
            epoch,
            times,
            probes,
        })
    }

    /// Starts (or stops, discarding them) recording [`Probe`]s of every access, for tests and
    /// debugging.
    pub fn record_probes(&mut self, on: bool) {
        self.probes = on.then(Vec::new);
    }

    /// The probes recorded so far, one per access.
    pub fn probes(&self) -> &[Probe] {
        self.probes.as_deref().unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// The rounds of one access.

/// One access in progress (Ramen Fig. 14, Access): the parts of [`Ramen`] that its rounds work
/// on. Each round `roundK` sends all of its messages before it receives any (see the table in
/// the module docs).
struct Access<'a> {
    params: Params,
    me: PartyId,
    next: PartyId,
    prev: PartyId,
    /// The counter c of Fig. 14: the accesses done in this epoch before this one.
    c: usize,
    chan: &'a mut Channel,
    mpc: &'a mut Party,
    d: &'a mut Doprfs,
    local: &'a mut AesPrg,
    epoch: &'a mut Epoch,
    times: &'a mut StepTimes,
    probes: &'a mut Option<Vec<Probe>>,
}

/// This party's state in the stash key's masked DOPRF (Ramen Fig. 4, step 3) between rounds.
enum Masked {
    /// K, awaiting z_3 from R2.
    K(doram_doprf::masked::AwaitingZ3),
    /// R2, awaiting y_2 from R1 and d from K.
    R2(doram_doprf::masked::AwaitingY2AndD),
    /// A receiver's output share R.
    Output(u128),
}

/// This party's state in the stash key's unmasked DOPRF (Ramen Fig. 5, steps 1–2) between
/// rounds.
enum Unmasked {
    /// K, awaiting y_2 from R1 and e from R2.
    K(doram_doprf::unmasked::AwaitingY2AndE),
    /// R1, awaiting the tag from R2.
    R1,
    /// R2, awaiting z_1 from K.
    R2(doram_doprf::unmasked::AwaitingZ1),
    /// K, done.
    Done,
}

/// This party's unmasked DOPRFs on ⟨adr_M⟩ under the memory keys (Ramen Fig. 6, step 2(a))
/// after round R5.
struct MemoryDoprfs {
    /// As K of k_{me+1}, with R1's y_2 and R2's e.
    k: doram_doprf::unmasked::AwaitingY2AndE,
    y2: UnmaskedY2,
    e: UnmaskedE,
    /// As R2 of k_{me}, awaiting z_1.
    r2: doram_doprf::unmasked::AwaitingZ1,
}

/// This party's shares after the stash read (Ramen Fig. 4) and the address select (Fig. 14,
/// step 2), rounds R1–R4.
struct StashRead {
    flag: Additive<Fp>,
    loc: Additive<Fp>,
    adr_m: Additive<Fp>,
    /// op·flag, for the write (Fig. 5, step 5).
    op_flag: Additive<Fp>,
    val_st: Additive<Fp>,
    /// This party's outputs of the successor's location DPF at the entries 0..=c (Fig. 4,
    /// step 10(d); reused by the write, Fig. 5, step 7(e)).
    e_next: Vec<LocOut>,
    /// Likewise for the predecessor's location DPF.
    e_prev: Vec<LocOut>,
}

impl Access<'_> {
    /// Ramen Fig. 4 (stash read) with Fig. 14, step 2 (adr_M): rounds R1–R4.
    fn stash_read(
        &mut self,
        op: Additive<Fp>,
        addr: Additive<Fp>,
    ) -> Result<StashRead, RamenError> {
        let t0 = Instant::now();
        self.chan.session_mut().set_phase(Step::StashRead.phase());
        let (rep, masked) = self.round1(addr)?;
        let masked = self.round2(masked)?;
        let (flag, loc) = self.round3(masked)?;
        let read = self.round4(op, addr, flag, loc, &rep)?;
        self.times.since(Step::StashRead, t0);
        Ok(read)
    }

    /// Ramen Fig. 4, steps 3 and 8, round R1: replicates the stash values and starts the
    /// masked DOPRF on ⟨adr⟩.
    fn round1(&mut self, addr: Additive<Fp>) -> Result<(Vec<Replicated<Fp>>, Masked), RamenError> {
        // R1. [Ramen Fig. 4, step 8] ⟨stash.val⟩ → ⟦stash.val⟧: P_i → P_{i+1}.
        let (replicate, out) = self
            .mpc
            .to_replicated_start(&Additive::from_shares(self.epoch.stash.val.clone()));
        self.chan.send_mpc(&out)?;
        // [Ramen Fig. 4, step 3] masked DOPRF on ⟨adr⟩ under k_stash (K = P0, R1 = P1, R2 = P2).
        let masked = match &mut self.d.stash {
            RoleState::K(k) => {
                let (pending, dmsg) = k.masked_eval_start(&[addr])?;
                self.chan.send_doprf(PartyId::P2, &dmsg)?;
                Masked::K(pending)
            }
            RoleState::R1(r1) => {
                let (r, y2) = r1.masked_eval(&[addr])?;
                self.chan.send_doprf(PartyId::P2, &y2)?;
                Masked::Output(first(&r)?)
            }
            RoleState::R2(r2) => Masked::R2(r2.masked_eval_start(&[addr])?),
        };
        let inbound = self.chan.recv_mpc(replicate.expected())?;
        let rep: Vec<Replicated<Fp>> = replicate.finish(inbound)?;
        // The own components are fresh additive shares of the stash values.
        self.epoch.stash.val = rep.iter().map(|x| x.own()).collect();
        Ok((rep, masked))
    }

    /// Ramen Fig. 4, step 3, round R2 (P2 only): the masked DOPRF's z_3.
    fn round2(&mut self, masked: Masked) -> Result<Masked, RamenError> {
        let sp = self.d.stash_params;
        match masked {
            // R2. [Ramen Fig. 4, step 3] R2 → K: z_3.
            Masked::R2(pending) => {
                let y2: MaskedY2 = self.chan.recv_doprf(PartyId::P1, &sp, 1)?;
                let dmsg: MaskedD = self.chan.recv_doprf(PartyId::P0, &sp, 1)?;
                let (r, z3) = pending.finish(y2, dmsg)?;
                self.chan.send_doprf(PartyId::P0, &z3)?;
                Ok(Masked::Output(first(&r)?))
            }
            other => Ok(other),
        }
    }

    /// Ramen Fig. 4, steps 2 and 4–7, round R3: the flag shift, then ⟨flag⟩ and ⟨loc⟩.
    fn round3(&mut self, masked: Masked) -> Result<(Additive<Fp>, Additive<Fp>), RamenError> {
        let (c, sp) = (self.c, self.d.stash_params);
        // R3. [Ramen Fig. 4, step 4] P0 learns adr' = PRF(k_stash, adr) ⊕ R and sends
        // adr' ⊕ α to P1 and P2 (α: this access's preprocessed flag-DPF point).
        // [Ramen Fig. 4, step 2] ⟨flag⟩ = ⟨loc⟩ = 0 at P0; P1 and P2 sum DPF outputs (step 5).
        let (flag, loc) = match (masked, &self.epoch.flag) {
            (Masked::K(pending), FlagMaterial::Dealer(dealt)) => {
                let z3: MaskedZ3 = self.chan.recv_doprf(PartyId::P2, &sp, 1)?;
                let a = first(&pending.finish(z3)?)? as u64;
                let alpha = *dealt
                    .alphas
                    .get(c)
                    .ok_or(RamenError::Local("flag keys used up"))?;
                let shift = FlagShift { shift: a ^ alpha };
                self.chan.send(PartyId::P1, &shift)?;
                self.chan.send(PartyId::P2, &shift)?;
                (Fp::ZERO, Fp::ZERO)
            }
            (Masked::Output(r), FlagMaterial::Holder(keys)) => {
                let shift: FlagShift = self.chan.recv(PartyId::P0, sp.bits() as u32)?;
                let key = keys.get(c).ok_or(RamenError::Local("flag keys used up"))?;
                // [Ramen Fig. 4, step 5] evaluate at L_stash[j] ⊕ R ⊕ adr' ⊕ α.
                stash::flag_and_loc(key, &self.epoch.list, shift.shift ^ r as u64)
            }
            _ => return Err(RamenError::Local("inconsistent stash roles")),
        };
        // [Ramen Fig. 4, step 6] loc := Select(flag, loc, c) = loc + c·(1 − flag), linear since
        // loc = 0 whenever flag = 0.
        let cf = Fp::from_u64(c as u64);
        // [Ramen Fig. 4, step 7] no separate F_Zero: ⟨flag⟩ is only ever sent inside the
        // products below, which re-randomise their operands first.
        let flag = Additive::from_share(flag);
        let loc = Additive::from_share(loc - cf * flag.share()).add_public(cf, self.me);
        Ok((flag, loc))
    }

    /// Ramen Fig. 14, step 2 and Fig. 4, step 10, round R4: the address select and op·flag,
    /// and the location openings; then ⟨val_st⟩.
    fn round4(
        &mut self,
        op: Additive<Fp>,
        addr: Additive<Fp>,
        flag: Additive<Fp>,
        loc: Additive<Fp>,
        rep: &[Replicated<Fp>],
    ) -> Result<StashRead, RamenError> {
        let (n, c, me, next, prev) = (self.params.n(), self.c, self.me, self.next, self.prev);
        // R4. [Ramen Fig. 14, step 2] adr_M = Select(flag, n + c, adr) = adr + flag·(n + c − adr),
        // and op·flag for the write (Fig. 5, step 5).
        let w = Additive::public(Fp::from_u64((n + c) as u64), me) - addr;
        let (products, out) = self.mpc.mul_additive_start(&[flag, flag], &[w, op])?;
        self.chan.send_mpc(&out)?;
        let (z, to_next, to_prev) = self.loc_openings(loc)?;
        self.chan.send(next, &to_next)?;
        self.chan.send(prev, &to_prev)?;
        let inbound = self.chan.recv_mpc(products.expected())?;
        let prod = products.finish(inbound)?;
        let open_prev: LocOpening = self.chan.recv(prev, ())?;
        let open_next: LocOpening = self.chan.recv(next, ())?;
        let (e_next, e_prev) = self.loc_outputs(&z, &open_prev, &open_next)?;
        // [Ramen Fig. 4, step 10(d)] ⟨val_st⟩.
        // [Ramen Fig. 4, steps 9 and 11–12] ⟨val_st⟩ is only ever sent inside the products of
        // R8, which re-randomise their operands, so step 11's F_Zero is not needed.
        let val_st = stash::read_value(&e_next[..c], &e_prev[..c], rep);
        // The product round returns one product per operand pair (two here), or an error.
        Ok(StashRead {
            flag,
            loc,
            adr_m: addr + prod[0],
            op_flag: prod[1],
            val_st: Additive::from_share(val_st),
            e_next,
            e_prev,
        })
    }

    /// [Ramen Fig. 4, step 10(b)] openings of loc − α_i + s(μ + 1) for the three location
    /// DPFs, each from a fresh sharing of loc: the fresh shares z (one sharing per DPF, indexed
    /// by its generator) and this party's openings to the successor and the predecessor.
    fn loc_openings(
        &mut self,
        loc: Additive<Fp>,
    ) -> Result<([Fp; 3], LocOpening, LocOpening), RamenError> {
        let (me, next, prev) = (self.me, self.next, self.prev);
        // `reshare` returns one share per input: index 0 exists.
        let z: [Fp; 3] = std::array::from_fn(|_| self.mpc.reshare(&[loc])[0].share());
        let alpha = *self
            .epoch
            .loc_dealt
            .alphas
            .get(self.c)
            .ok_or(RamenError::Local("location keys used up"))?;
        let masked = stash::masked_loc_share(z[me.index()], alpha, &self.params, self.local);
        let to_next = LocOpening {
            masked,
            share: z[prev.index()],
        };
        let to_prev = LocOpening {
            masked,
            share: z[next.index()],
        };
        Ok((z, to_next, to_prev))
    }

    /// Ramen Fig. 4, step 10(b)–(d): the shifts opened from `z` and the neighbours' openings,
    /// and this party's outputs of the successor's and the predecessor's location DPFs at the
    /// stash entries 0..=c.
    fn loc_outputs(
        &self,
        z: &[Fp; 3],
        open_prev: &LocOpening,
        open_next: &LocOpening,
    ) -> Result<(Vec<LocOut>, Vec<LocOut>), RamenError> {
        let (s, c, next, prev) = (self.params.stash(), self.c, self.next, self.prev);
        // The successor's DPF: generator next, evaluators me and prev.
        let shift_next = stash::loc_shift(open_next.masked + z[next.index()] + open_prev.share, s);
        // The predecessor's DPF: generator prev, evaluators me and next.
        let shift_prev = stash::loc_shift(open_prev.masked + z[prev.index()] + open_next.share, s);
        let used_up = || RamenError::Local("location keys used up");
        let key_next = self.epoch.loc_from_next.get(c).ok_or_else(used_up)?;
        let key_prev = self.epoch.loc_from_prev.get(c).ok_or_else(used_up)?;
        let e_next = stash::shifted_outputs(key_next, shift_next, s, c + 1);
        let e_prev = stash::shifted_outputs(key_prev, shift_prev, s, c + 1);
        Ok((e_next, e_prev))
    }

    /// Ramen Fig. 6 (memory read) with Fig. 5, steps 1–2 (the stash tag of adr_M): rounds
    /// R5–R7. Returns ⟨val_M⟩.
    fn memory_read(&mut self, adr_m: Additive<Fp>) -> Result<Fp, RamenError> {
        let t0 = Instant::now();
        self.chan.session_mut().set_phase(Step::MemoryRead.phase());
        let (mem, stash_tag) = self.round5(adr_m)?;
        let (tag, stash_tag) = self.round6(mem, stash_tag)?;
        let val_m = self.round7(tag, stash_tag)?;
        self.times.since(Step::MemoryRead, t0);
        Ok(val_m)
    }

    /// Ramen Fig. 6, step 2(a) and Fig. 5, step 1, round R5: the first messages of the four
    /// unmasked DOPRFs on ⟨adr_M⟩.
    fn round5(&mut self, adr_m: Additive<Fp>) -> Result<(MemoryDoprfs, Unmasked), RamenError> {
        let (next, prev, mp) = (self.next, self.prev, self.d.mem_params);
        // R5. [Ramen Fig. 6, step 2(a)] unmasked DOPRFs on ⟨adr_M⟩ for the three memory keys,
        // and [Ramen Fig. 5, step 1] under k_stash.
        let x = [adr_m];
        let y2 = self.d.mem_r1.unmasked_eval(&x)?;
        self.chan.send_doprf(next, &y2)?;
        let (r2, e) = self.d.mem_r2.unmasked_eval_start(&x)?;
        self.chan.send_doprf(prev, &e)?;
        let k = self.d.mem_k.unmasked_eval_start(&x)?;
        let stash_tag = match &mut self.d.stash {
            RoleState::K(k) => Unmasked::K(k.unmasked_eval_start(&x)?),
            RoleState::R1(r1) => {
                self.chan.send_doprf(PartyId::P0, &r1.unmasked_eval(&x)?)?;
                Unmasked::R1
            }
            RoleState::R2(r2) => {
                let (pending, e) = r2.unmasked_eval_start(&x)?;
                self.chan.send_doprf(PartyId::P0, &e)?;
                Unmasked::R2(pending)
            }
        };
        let y2: UnmaskedY2 = self.chan.recv_doprf(prev, &mp, 1)?;
        let e: UnmaskedE = self.chan.recv_doprf(next, &mp, 1)?;
        Ok((MemoryDoprfs { k, y2, e, r2 }, stash_tag))
    }

    /// Ramen Fig. 6, step 2(a) and Fig. 5, step 1, round R6: z_1 of the key held here (and of
    /// the stash key at P0); the tag of adr_M under k_{me}.
    fn round6(
        &mut self,
        mem: MemoryDoprfs,
        stash_tag: Unmasked,
    ) -> Result<(u64, Unmasked), RamenError> {
        let (next, prev) = (self.next, self.prev);
        let (mp, sp) = (self.d.mem_params, self.d.stash_params);
        // R6. K → R2: z_1.
        let z1 = mem.k.finish(mem.y2, mem.e)?;
        self.chan.send_doprf(next, &z1)?;
        let stash_tag = match stash_tag {
            Unmasked::K(pending) => {
                let y2: UnmaskedY2 = self.chan.recv_doprf(PartyId::P1, &sp, 1)?;
                let e: UnmaskedE = self.chan.recv_doprf(PartyId::P2, &sp, 1)?;
                self.chan.send_doprf(PartyId::P2, &pending.finish(y2, e)?)?;
                Unmasked::Done
            }
            other => other,
        };
        let z1: UnmaskedZ1 = self.chan.recv_doprf(prev, &mp, 1)?;
        let tag = first(&mem.r2.finish(z1)?)? as u64;
        Ok((tag, stash_tag))
    }

    /// Ramen Fig. 6, step 2(b)–(f) and Fig. 5, step 2, round R7: the p-OT access and the stash
    /// tag; returns ⟨val_M⟩.
    fn round7(&mut self, tag: u64, stash_tag: Unmasked) -> Result<Fp, RamenError> {
        let (next, prev, sp) = (self.next, self.prev, self.d.stash_params);
        // [Ramen Fig. 6, step 2(b)–(d)] the position of the cell and ⟨x⟩ = M'_i[position].
        let (pos, x_reader) = self.epoch.reader.read(tag);
        // R7. [Ramen Fig. 6, step 2(e)] p-OT access: C → R.
        self.chan
            .send(next, &self.epoch.reader.chooser.access(pos)?)?;
        // [Ramen Fig. 5, step 2] P2 → P1: PRF(k_stash, adr_M); both append it to L_stash.
        match stash_tag {
            Unmasked::R2(pending) => {
                let z1: UnmaskedZ1 = self.chan.recv_doprf(PartyId::P0, &sp, 1)?;
                let tag = first(&pending.finish(z1)?)? as u64;
                self.chan.send(PartyId::P1, &StashTag { tag })?;
                self.epoch.list.push(tag);
            }
            Unmasked::R1 => {
                let t: StashTag = self.chan.recv(PartyId::P2, sp.bits() as u32)?;
                self.epoch.list.push(t.tag);
            }
            Unmasked::K(_) | Unmasked::Done => {}
        }
        let access: PotAccess = self.chan.recv(prev, ())?;
        // [Ramen Fig. 6, step 2(e)–(f)] the helper's share −r_i[position].
        let r = self.epoch.helper.receiver.receive(prev, &access)?;
        Ok(x_reader - r)
    }

    /// Ramen Fig. 5 (stash write) with Fig. 14, step 5 (the output): rounds R8–R9. Returns
    /// ⟨val_old⟩, the output of the access.
    fn stash_write(
        &mut self,
        op: Additive<Fp>,
        val: Additive<Fp>,
        read: &StashRead,
        val_m: Fp,
    ) -> Result<Additive<Fp>, RamenError> {
        let t0 = Instant::now();
        self.chan.session_mut().set_phase(Step::StashWrite.phase());
        // [Ramen Fig. 5, step 3] stash[c] := (adr_M, val_M, val_M).
        self.epoch.stash.push(val_m);
        let (delta, old) = self.round8(op, val, read, Additive::from_share(val_m))?;
        self.round9(delta, read)?;
        self.times.since(Step::StashWrite, t0);
        Ok(old)
    }

    /// Ramen Fig. 5, steps 5–6 and Fig. 14, step 5, round R8: ⟨Δ⟩ = ⟨val_new − val_old⟩ and
    /// ⟨val_old⟩.
    fn round8(
        &mut self,
        op: Additive<Fp>,
        val: Additive<Fp>,
        read: &StashRead,
        val_m: Additive<Fp>,
    ) -> Result<(Additive<Fp>, Additive<Fp>), RamenError> {
        // R8. [Ramen Fig. 5, steps 5–6; Fig. 14, step 5]
        let val_st = read.val_st;
        let (products, out) = self.mpc.mul_additive_start(
            &[op, read.op_flag, read.flag],
            &[val - val_m, val_st - val_m, val_st - val_m],
        )?;
        self.chan.send_mpc(&out)?;
        let inbound = self.chan.recv_mpc(products.expected())?;
        let prod = products.finish(inbound)?;
        // One product per operand pair: three here.
        let delta = prod[0] - prod[1];
        let old = val_m + prod[2];
        Ok((delta, old))
    }

    /// Ramen Fig. 5, steps 7–11, round R9: the write corrections γ, then the update of the
    /// stash shares.
    fn round9(&mut self, delta: Additive<Fp>, read: &StashRead) -> Result<(), RamenError> {
        let (next, prev) = (self.next, self.prev);
        // R9. [Ramen Fig. 5, step 7(d)] γ_i = ⟨Δ⟩_i·ρ_i^{−1} to both evaluators.
        let rho_inv = *self
            .epoch
            .loc_dealt
            .rho_inv
            .get(self.c)
            .ok_or(RamenError::Local("location keys used up"))?;
        let gamma = WriteCorrection {
            gamma: delta.share() * rho_inv,
        };
        self.chan.send(next, &gamma)?;
        self.chan.send(prev, &gamma)?;
        let g_prev: WriteCorrection = self.chan.recv(prev, ())?;
        let g_next: WriteCorrection = self.chan.recv(next, ())?;
        // [Ramen Fig. 5, steps 7(e), 9] stash.val += δ; [Ramen Fig. 5, steps 8, 10–11] no
        // F_Zero: the shares are re-randomised before they are next sent (Fig. 4, step 8).
        stash::apply_write(
            &mut self.epoch.stash.val,
            &read.e_next,
            &read.e_prev,
            g_next.gamma,
            g_prev.gamma,
        );
        Ok(())
    }

    /// Records this access's [`Probe`], if enabled (after the stash write).
    fn record_probe(&mut self, read: &StashRead, val_m: Fp) {
        if let Some(probes) = self.probes.as_mut() {
            probes.push(Probe {
                flag: read.flag.share(),
                loc: read.loc.share(),
                val_st: read.val_st.share(),
                adr_m: read.adr_m.share(),
                val_m,
                stash_val: self.epoch.stash.val.clone(),
                stash_old: self.epoch.stash.old.clone(),
                written_back: None,
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The round of preparing one epoch.

/// The local part of one epoch's preprocessing ([`Ramen::prepare_local`]): what this party
/// keeps, and the messages it sends.
struct LocalPrep {
    /// As key holder of the successor's reads (Fig. 6, P_{i−1}).
    holder: KeyHolderEpoch,
    /// As helper of the predecessor's reads (Fig. 6, P_{i+1}): σ of the predecessor's key.
    helper_sigma: Vec<u32>,
    /// Fig. 4, step 10: the points and ρ^{−1} of this party's location DPFs.
    loc_dealt: LocDealt,
    /// At P0 only (Fig. 4, step 4): the flag DPF points, and the keys for P1 and P2.
    flag_deal: Option<(FlagDealt, FlagKeys, FlagKeys)>,
    /// To the successor (the reader): the tag → position map (Fig. 6, Init step 5).
    map_msg: PositionMapMsg,
    /// To the successor: its p-OT chooser keys (Fig. 2, Init).
    to_chooser: PotChooserKeys,
    /// To the predecessor (the helper): its p-OT receiver key (Fig. 2, Init).
    to_receiver: PotReceiverKey,
    /// Fig. 4, step 10(c): the location DPF keys for the successor and the predecessor.
    loc_to_next: LocKeys,
    loc_to_prev: LocKeys,
}

/// This party's DOPRF preprocessing of one epoch, between its messages and the replies.
struct DoprfPrep {
    /// As R1 of k_{me−1}: c_1 for the key holder (the successor).
    c1_mem: UnmaskedC1,
    /// As K of k_{me+1}: awaiting c_1 from R1 (the predecessor).
    pending_k: doram_doprf::unmasked::AwaitingC1,
    /// The stash key's instance.
    stash: StashPrep,
}

/// The stash key's DOPRF instance (K = P0, R1 = P1, R2 = P2) during preprocessing.
enum StashPrep {
    /// K, awaiting R1's c_1.
    K(doram_doprf::unmasked::AwaitingC1),
    /// R1's messages: c_1 and the KeyGen share for K, c_3 for R2.
    R1(UnmaskedC1, MaskedC3, KeyShare1),
    /// R2, awaiting R1's c_3; its KeyGen share for K.
    R2(doram_doprf::masked::AwaitingC3, KeyShare2),
}

/// The DOPRF preprocessing of `s` evaluations per instance (Fig. 22, steps 1–3; Fig. 9, steps
/// 1–5) and the stash key's KeyGen shares (Fig. 4, step 1), up to the messages.
fn doprf_prep_start(d: &mut Doprfs, s: usize) -> DoprfPrep {
    let c1_mem = d.mem_r1.unmasked_preprocess(s);
    let pending_k = d.mem_k.unmasked_preprocess_start(s);
    d.mem_r2.unmasked_preprocess(s);
    let stash = match &mut d.stash {
        RoleState::K(k) => {
            k.masked_preprocess(s);
            StashPrep::K(k.unmasked_preprocess_start(s))
        }
        RoleState::R1(r1) => StashPrep::R1(
            r1.unmasked_preprocess(s),
            r1.masked_preprocess(s),
            r1.rekey(),
        ),
        RoleState::R2(r2) => {
            r2.unmasked_preprocess(s);
            StashPrep::R2(r2.masked_preprocess_start(s), r2.rekey())
        }
    };
    DoprfPrep {
        c1_mem,
        pending_k,
        stash,
    }
}

/// Sends this party's preprocessing messages of one epoch: the ring messages first, then the
/// stash instance's.
fn send_prep(chan: &mut Channel, local: &LocalPrep, doprf: &DoprfPrep) -> Result<(), RamenError> {
    let me = chan.me();
    let (next, prev) = (me.next(3), me.prev(3));
    chan.send_doprf(next, &doprf.c1_mem)?;
    chan.send(next, &local.map_msg)?;
    chan.send(next, &local.to_chooser)?;
    chan.send(next, &local.loc_to_next)?;
    chan.send(prev, &local.to_receiver)?;
    chan.send(prev, &local.loc_to_prev)?;
    match (&doprf.stash, &local.flag_deal) {
        (StashPrep::K(_), Some((_, to_p1, to_p2))) => {
            chan.send(PartyId::P1, to_p1)?;
            chan.send(PartyId::P2, to_p2)?;
        }
        (StashPrep::R1(c1, c3, k1), _) => {
            chan.send_doprf(PartyId::P0, c1)?;
            chan.send_doprf(PartyId::P0, k1)?;
            chan.send_doprf(PartyId::P2, c3)?;
        }
        (StashPrep::R2(_, k2), _) => {
            chan.send_doprf(PartyId::P0, k2)?;
        }
        (StashPrep::K(_), None) => return Err(RamenError::Local("P0 deals the flag keys")),
    }
    Ok(())
}

/// Receives the preprocessing messages of one epoch in the order they were sent, and completes
/// the epoch's material.
fn recv_prep(
    chan: &mut Channel,
    params: &Params,
    d: &mut Doprfs,
    local: LocalPrep,
    doprf: DoprfPrep,
) -> Result<EpochPrep, RamenError> {
    let me = chan.me();
    let (next, prev) = (me.next(3), me.prev(3));
    let (s, m, mp) = (params.stash(), params.memory(), d.mem_params);
    let c1: UnmaskedC1 = chan.recv_doprf(prev, &mp, s)?;
    let map: PositionMapMsg = chan.recv(prev, (m, params.position_bits()))?;
    let chooser_keys: PotChooserKeys = chan.recv(prev, ())?;
    let loc_from_prev: LocKeys = chan.recv(prev, (s, s))?;
    let receiver_key: PotReceiverKey = chan.recv(next, ())?;
    let loc_from_next: LocKeys = chan.recv(next, (s, s))?;
    d.mem_k.unmasked_preprocess_finish(doprf.pending_k, c1)?;
    let (flag, stash_key) = recv_stash_prep(chan, params, d, doprf.stash, local.flag_deal)?;
    Ok(EpochPrep {
        holder: local.holder,
        map: map.map,
        chooser: pot::Chooser::new(m, &chooser_keys),
        helper: HelperEpoch {
            sigma: local.helper_sigma,
            receiver: pot::Receiver::new(m, &receiver_key),
        },
        flag,
        loc_dealt: local.loc_dealt,
        loc_from_next: loc_from_next.keys,
        loc_from_prev: loc_from_prev.keys,
        stash_key,
    })
}

/// Receives the stash instance's preprocessing messages and completes its preprocessing:
/// returns this party's flag material (Fig. 4, step 4) and, at K, the KeyGen shares of the
/// epoch's stash key (Fig. 4, step 1).
fn recv_stash_prep(
    chan: &mut Channel,
    params: &Params,
    d: &mut Doprfs,
    prep: StashPrep,
    flag_deal: Option<(FlagDealt, FlagKeys, FlagKeys)>,
) -> Result<(FlagMaterial, Option<(KeyShare1, KeyShare2)>), RamenError> {
    let (s, sp) = (params.stash(), d.stash_params);
    let flag_shape = (s, params.stash_tag_bits());
    match (prep, &mut d.stash, flag_deal) {
        (StashPrep::K(pending), RoleState::K(k), Some((dealt, _, _))) => {
            let c1: UnmaskedC1 = chan.recv_doprf(PartyId::P1, &sp, s)?;
            let k1: KeyShare1 = chan.recv_doprf(PartyId::P1, &sp, 0)?;
            let k2: KeyShare2 = chan.recv_doprf(PartyId::P2, &sp, 0)?;
            k.unmasked_preprocess_finish(pending, c1)?;
            Ok((FlagMaterial::Dealer(dealt), Some((k1, k2))))
        }
        (StashPrep::R1(..), _, _) => {
            let keys: FlagKeys = chan.recv(PartyId::P0, flag_shape)?;
            Ok((FlagMaterial::Holder(keys.keys), None))
        }
        (StashPrep::R2(pending, _), RoleState::R2(r2), _) => {
            let keys: FlagKeys = chan.recv(PartyId::P0, flag_shape)?;
            let c3: MaskedC3 = chan.recv_doprf(PartyId::P1, &sp, s)?;
            r2.masked_preprocess_finish(pending, c3)?;
            Ok((FlagMaterial::Holder(keys.keys), None))
        }
        _ => Err(RamenError::Local("inconsistent stash roles")),
    }
}

/// The only output of a batch of one DOPRF evaluation.
fn first(v: &[u128]) -> Result<u128, RamenError> {
    v.first()
        .copied()
        .ok_or(RamenError::Local("a DOPRF batch of one returned nothing"))
}
