//! Conformance, leakage and fault kit for [`DistributedOram`] implementations (feature
//! `testkit`).
//!
//! Every check runs the three parties of a protocol in three threads over an in-process mesh
//! ([`Session::local_mesh`]-style, with a short timeout so that a bug fails instead of hanging),
//! shares the inputs with a dealer, and compares the reconstructed outputs with [`PlainMemory`].
//!
//! * [`run_conformance`]: a random memory and a composite random workload (mixed reads and
//!   writes, same-address hammering, an all-read and an all-write stretch; for protocols that
//!   hide the op, some instructions with public ops too); checks every access result and the
//!   final [`memory`](DistributedOram::memory). Half the accesses are preprocessed up front, the
//!   rest run their preprocessing inline.
//! * [`run_leakage`]: the same number of operations on different secrets (memory contents,
//!   addresses, values, and op types when hidden); each party's [`Transcript`] — who sent how
//!   many bytes to whom in which round, phase by phase — must be identical across the runs.
//! * [`run_misuse`]: API misuse is reported before anything is sent, and the instance still
//!   works afterwards.
//! * [`run_fault`]: a [`Fault`] injected into a message in the middle of an access makes every
//!   party return an error, within a few timeouts.
//!
//! A protocol crate adds all of them with one line (see [`oram_conformance!`](crate::oram_conformance)):
//! ```ignore
//! doram_oram::oram_conformance!(linear_fp, |session, _me, n, seed| {
//!     doram_oram::LinearScanOram::<doram_field::Fp>::setup(session, n, seed)
//! });
//! ```
//!
//! Randomized checks take a `u64` seed: [`test_seed`] reads `DORAM_TEST_SEED` or picks one and
//! prints it, and every failure message repeats it, so a failing run can be replayed.
//!
//! The kit labels the phases of each session `setup`, `preprocess`, `init`, `access` and
//! `memory` ([`Session::set_phase`]) around its calls; an implementation may set finer phases of
//! its own inside, as long as their names do not depend on secrets.

use std::time::{Duration, Instant};

use doram_core::{PartyId, Seed};
use doram_field::{Group, Ring};
use doram_mpc::testkit::{party_seed, run3_on};
use doram_mpc::{Additive, reconstruct_additive};
use doram_net::{LocalMesh, Session, Stats, Tamper, Transcript};
use doram_prim::AesPrg;
use rand_core::RngCore;

use crate::error::OramError;
use crate::instruction::{
    Instruction, InstructionShare, Op, OpVisibility, deal_instruction, deal_memory,
    merge_instruction_shares,
};
use crate::interface::DistributedOram;
use crate::plain::PlainMemory;

pub use doram_mpc::testkit::{SEED_VAR, test_seed};

mod batch;
pub use batch::{BatchPlan, BatchStep, batch_plan, run_batches, run_shared};

/// The receive timeout of the kit's meshes: long enough for any test-sized access on a loaded
/// machine, short enough that a deadlock fails the test instead of hanging it.
pub const KIT_TIMEOUT: Duration = Duration::from_secs(20);

/// The receive timeout of [`run_fault`]'s meshes.
pub const FAULT_TIMEOUT: Duration = Duration::from_millis(500);

const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

/// The kit's phase labels, in the order the kit enters them.
pub const PHASES: [&str; 5] = ["setup", "preprocess", "init", "access", "memory"];

/// A dealer-side PRG for the run `(seed, tag)`.
fn kit_rng(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

fn below(rng: &mut AesPrg, bound: usize) -> u64 {
    // Test inputs only: the modulo bias of a 64-bit draw is irrelevant here.
    rng.next_u64() % bound.max(1) as u64
}

/// A kind of instruction sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Random ops, addresses and values.
    Mixed,
    /// Reads of random addresses.
    AllReads,
    /// Writes of random values to random addresses.
    AllWrites,
    /// Random reads and writes, all to one random address.
    Hammer,
    /// Stretches of all the above, in a random order, covering all four.
    Composite,
}

/// `ops` plaintext instructions of kind `kind` over a memory of `n` words. Reads carry random
/// values too (they must be ignored).
pub fn workload<W: Group>(
    kind: Workload,
    n: usize,
    ops: usize,
    rng: &mut AesPrg,
) -> Vec<Instruction<W>> {
    let random_op = |rng: &mut AesPrg| {
        if rng.next_u32() & 1 == 0 {
            Op::Read
        } else {
            Op::Write
        }
    };
    let make = |rng: &mut AesPrg, op: Option<Op>, addr: Option<u64>| Instruction {
        op: op.unwrap_or_else(|| random_op(rng)),
        addr: addr.unwrap_or_else(|| below(rng, n)),
        value: W::random_from(rng),
    };
    match kind {
        Workload::Mixed => (0..ops).map(|_| make(rng, None, None)).collect(),
        Workload::AllReads => (0..ops).map(|_| make(rng, Some(Op::Read), None)).collect(),
        Workload::AllWrites => (0..ops).map(|_| make(rng, Some(Op::Write), None)).collect(),
        Workload::Hammer => {
            let addr = below(rng, n);
            (0..ops).map(|_| make(rng, None, Some(addr))).collect()
        }
        Workload::Composite => {
            let mut kinds = [
                Workload::Mixed,
                Workload::Hammer,
                Workload::AllReads,
                Workload::AllWrites,
            ];
            // A random order of the four stretches (Fisher–Yates).
            for i in (1..kinds.len()).rev() {
                kinds.swap(i, below(rng, i + 1) as usize);
            }
            // The mixed stretch gets the remainder: the first third of the others, a sixth each.
            let sixth = ops / 6;
            let mut out = Vec::with_capacity(ops);
            for k in kinds {
                let len = if k == Workload::Mixed {
                    ops - 3 * sixth
                } else {
                    sixth
                };
                out.extend(workload(k, n, len, rng));
            }
            out
        }
    }
}

/// Everything one run of the kit needs: the memory size, the initial memory, the instructions
/// (each with the visibility its op is dealt with), how many accesses to preprocess up front,
/// the seed of the parties' randomness and the mesh's timeout.
#[derive(Clone, Debug)]
pub struct Plan<W> {
    /// Memory size.
    pub n: usize,
    /// Initial memory (`n` words).
    pub initial: Vec<W>,
    /// The instructions, each with how its op is passed. A protocol with
    /// [`OpVisibility::Public`] must only get public ops.
    pub instructions: Vec<(Instruction<W>, OpVisibility)>,
    /// Accesses preprocessed before `init`.
    pub preprocess: usize,
    /// Seed of the parties' local randomness ([`party_seed`]).
    pub party_seed: u64,
    /// Seed of the dealer's sharing of the inputs.
    pub dealer_seed: u64,
    /// Receive timeout of every session.
    pub timeout: Duration,
}

/// What one party saw in a run of [`execute`].
#[derive(Clone, Debug)]
pub struct PartyRun<W> {
    /// `len()` of its instance.
    pub len: usize,
    /// Its share of each access's result.
    pub outputs: Vec<Additive<W>>,
    /// Its shares from `memory()` at the end.
    pub memory: Vec<Additive<W>>,
    /// Its transcript, from before setup to the end.
    pub transcript: Transcript,
    /// Its session's statistics, by the kit's phases.
    pub stats: Stats,
    /// Transcript length when each access started, and at the end of the last one.
    pub access_marks: Vec<usize>,
    /// BLAKE3 digest of every message it sent and received, in order
    /// ([`Session::content_digest`]).
    pub content_digest: [u8; 32],
}

/// Runs `plan` with three instances made by `make` on `sessions` (three sessions of one mesh),
/// and returns each party's view or its first error.
///
/// Each party: records its transcript, makes its instance (phase `setup`), preprocesses
/// `plan.preprocess` accesses, inits, runs every instruction, and calls `memory()`.
///
/// # Panics
/// If a party thread panics.
pub fn execute<O, F>(
    make: &F,
    plan: &Plan<O::Word>,
    sessions: Vec<Session>,
) -> [Result<PartyRun<O::Word>, OramError>; 3]
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    assert_eq!(sessions.len(), 3, "execute runs three parties");
    let mut it = execute_for(make, plan, sessions).into_iter();
    std::array::from_fn(|_| it.next().expect("three results"))
}

/// Folds the dealer's three-party sharing into `parties` shares: for two parties, `P0` gets
/// `x₀ + x₂` and `P1` gets `x₁` (the same dealing, so three-party runs are unchanged).
fn fold_shares<T: Clone>(parties: usize, three: [T; 3], add: impl Fn(T, T) -> T) -> Vec<T> {
    let [a, b, c] = three;
    match parties {
        2 => vec![add(a, c), b],
        _ => vec![a, b, c],
    }
}

fn fold_instruction<W: Ring>(
    parties: usize,
    three: [InstructionShare<W>; 3],
) -> Vec<InstructionShare<W>> {
    fold_shares(parties, three, merge_instruction_shares)
}

/// [`execute`] for a protocol of two or three parties (`sessions.len()` of them, one mesh):
/// the dealer's three-party shares are folded into two for two parties.
///
/// # Panics
/// If `sessions` are not two or three, or a party thread panics.
pub fn execute_for<O, F>(
    make: &F,
    plan: &Plan<O::Word>,
    sessions: Vec<Session>,
) -> Vec<Result<PartyRun<O::Word>, OramError>>
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let parties = sessions.len();
    assert!(
        parties == 2 || parties == 3,
        "the kit runs two or three parties"
    );
    let mut rng = kit_rng(plan.dealer_seed, 0xdea1);
    let [m0, m1, m2] = deal_memory(&plan.initial, &mut rng);
    let memory: Vec<Vec<Additive<O::Word>>> = if parties == 2 {
        vec![m0.iter().zip(&m2).map(|(a, c)| *a + *c).collect(), m1]
    } else {
        vec![m0, m1, m2]
    };
    let mut instructions: Vec<Vec<InstructionShare<O::Word>>> = vec![Vec::new(); parties];
    for (ins, vis) in &plan.instructions {
        let shares = fold_instruction(parties, deal_instruction(ins, *vis, &mut rng));
        for (v, s) in instructions.iter_mut().zip(shares) {
            v.push(s);
        }
    }
    doram_net::testkit::run(sessions, |mut session| {
        let me = session.me();
        let i = me.index();
        session.record_transcript(true);
        session.record_content_digest(true);
        session.set_phase(PHASES[0]);
        let mut o = make(session, me, plan.n, party_seed(plan.party_seed, me))?;
        // Every run is bounded by the instance's own frame limit: a message larger than
        // `max_message_bytes` fails the run.
        let limit = u32::try_from(o.max_message_bytes()).unwrap_or(u32::MAX);
        o.session_mut().limit_frame_bytes(limit);
        o.session_mut().set_phase(PHASES[1]);
        o.preprocess(plan.preprocess)?;
        o.session_mut().set_phase(PHASES[2]);
        o.init(&memory[i])?;
        o.session_mut().set_phase(PHASES[3]);
        let mark = |o: &O| o.session().transcript().map_or(0, Transcript::len);
        let mut outputs = Vec::with_capacity(instructions[i].len());
        let mut access_marks = vec![mark(&o)];
        for ins in &instructions[i] {
            outputs.push(o.access(ins)?);
            access_marks.push(mark(&o));
        }
        o.session_mut().set_phase(PHASES[4]);
        let final_memory = o.memory()?;
        Ok(PartyRun {
            len: o.len(),
            outputs,
            memory: final_memory,
            transcript: o.session().transcript().cloned().unwrap_or_default(),
            stats: o.session().stats().clone(),
            access_marks,
            content_digest: o.session().content_digest().unwrap_or_default(),
        })
    })
}

/// Checks the parties' content digests against `expected` (hex, party order): the
/// refactoring safety net. Runs under fixed seeds exchange the same bytes until a change to
/// the protocol's messages, which must then say why and update `expected`; with the
/// environment variable `DORAM_PRINT_DIGESTS` set the digests are printed instead.
///
/// # Panics
/// If a digest differs (and `DORAM_PRINT_DIGESTS` is not set).
pub fn check_digests<W>(name: &str, runs: &[PartyRun<W>], expected: [&str; 3]) {
    let got: Vec<String> = runs
        .iter()
        .map(|r| {
            r.content_digest
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect();
    if std::env::var_os("DORAM_PRINT_DIGESTS").is_some() {
        println!("{name}: {got:#?}");
        return;
    }
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(
            g, e,
            "{name}: P{i}'s messages changed; if intended, explain why in the commit and update \
             the digests (DORAM_PRINT_DIGESTS=1 prints them)"
        );
    }
}

/// Runs `run` on a three-party in-process mesh twice: untouched, then with bit 8 of the last
/// frame `from` sends `to` flipped (its byte 1). Frame counts do not depend on the data or the
/// randomness, so the first run finds that frame. Returns both runs' per-party results — for
/// checking that a run's own verification catches a corrupted opening.
pub fn corrupt_last_frame<R: Send>(
    from: PartyId,
    to: PartyId,
    run: impl Fn(Session) -> R + Sync,
) -> [Vec<std::thread::Result<R>>; 2] {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let go = |flip: Option<u64>, frames: Arc<AtomicU64>| {
        let sessions = Session::mesh_with(3, move |f, t, i, payload| {
            if (f, t) == (from, to) {
                frames.fetch_max(i + 1, Ordering::SeqCst);
                if Some(i) == flip && payload.len() > 1 {
                    payload[1] ^= 1;
                }
            }
            Tamper::Pass
        });
        doram_net::run_parties(sessions, "corrupt", &run)
    };
    let frames = Arc::new(AtomicU64::new(0));
    let clean = go(None, Arc::clone(&frames));
    let last = frames.load(Ordering::SeqCst).saturating_sub(1);
    [clean, go(Some(last), Arc::new(AtomicU64::new(0)))]
}

/// Checks that the generic bench runner's verification is a real check for `P`: a bit flipped
/// in the last frame P1 sends P2 — its shares of the results and the final memory, opened for
/// the check — makes P2's verification fail at the first result, while an untouched run passes.
///
/// # Panics
/// If the untouched run fails, or the corrupted one is not caught as described.
pub fn assert_bench_catches_a_corrupted_opening<P: crate::protocol::Protocol>(
    config: &crate::bench::BenchConfig,
) {
    use crate::bench::{BenchError, run_party};
    let [clean, results] =
        corrupt_last_frame(PartyId::P1, PartyId::P2, |s| run_party::<P>(s, config));
    for r in clean {
        assert!(matches!(r, Ok(Ok(_))), "{r:?}");
    }
    assert!(
        matches!(
            &results[2],
            Ok(Err(BenchError::VerificationFailed {
                what: "access result",
                index: 0
            }))
        ),
        "{:?}",
        results[2]
    );
}

/// The generic bench runner ([`run_on`](crate::bench::run_on)) over three sessions connected by
/// mutually authenticated TLS 1.3 on loopback ([`doram_net::testkit::loopback_sessions`]), as
/// `doram party` runs it on three hosts; returns the report.
///
/// # Panics
/// If a party fails, in particular if the run's own verification
/// ([`BenchConfig::verify`](crate::bench::BenchConfig::verify): every result and the final
/// memory against the plaintext memory) does not pass.
pub fn bench_over_tls<P: crate::Protocol>(
    cfg: &crate::bench::BenchConfig,
) -> crate::bench::BenchReport {
    let sessions = doram_net::testkit::loopback_sessions(3, doram_net::Transport::Tls);
    let env = crate::bench::RunEnv::new("tls-loopback", doram_net::Shaping::NONE);
    crate::bench::run_on::<P>(sessions, cfg, env)
        .unwrap_or_else(|e| panic!("{} over TLS: {e}", P::NAME))
}

/// The largest message any party sent in `runs` (for checking a derived frame limit,
/// [`DistributedOram::max_message_bytes`]).
pub fn largest_message<W>(runs: &[PartyRun<W>]) -> u64 {
    runs.iter()
        .flat_map(|r| r.stats.total().links)
        .map(|l| l.largest_sent)
        .max()
        .unwrap_or(0)
}

fn mesh(timeout: Duration) -> Vec<Session> {
    mesh_of(3, timeout)
}

fn mesh_of(parties: usize, timeout: Duration) -> Vec<Session> {
    LocalMesh::new(parties).timeout(timeout).build()
}

/// Reconstructs the three parties' outputs and memories and compares them with the oracle;
/// returns the runs. Panics with `context` (which names the seed) on any difference or error.
fn check_against_oracle<W: Ring>(
    plan: &Plan<W>,
    runs: [Result<PartyRun<W>, OramError>; 3],
    context: &str,
) -> [PartyRun<W>; 3] {
    let mut it = check_runs(plan, runs.into_iter().collect(), context).into_iter();
    std::array::from_fn(|_| it.next().expect("three runs"))
}

/// [`check_against_oracle`] for any number of parties.
fn check_runs<W: Ring>(
    plan: &Plan<W>,
    runs: Vec<Result<PartyRun<W>, OramError>>,
    context: &str,
) -> Vec<PartyRun<W>> {
    let runs = unwrap_all(runs, context);
    let sum = |f: &dyn Fn(&PartyRun<W>) -> W| runs.iter().fold(W::ZERO, |acc, r| acc + f(r));
    let mut oracle = PlainMemory::new(plan.initial.clone());
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.len, plan.n, "{context}: P{i} reports len() = {}", r.len);
        assert_eq!(r.outputs.len(), plan.instructions.len(), "{context}");
        assert_eq!(r.memory.len(), plan.n, "{context}: P{i}'s memory() length");
    }
    for (t, (ins, vis)) in plan.instructions.iter().enumerate() {
        let want = oracle
            .access(ins)
            .unwrap_or_else(|e| panic!("{context}: the plan has a bad instruction {t}: {e}"));
        let got = sum(&|r| r.outputs[t].share());
        assert_eq!(
            got, want,
            "{context}: access {t} ({:?} of address {} with a {vis:?} op) returned a wrong value",
            ins.op, ins.addr
        );
    }
    for (a, want) in oracle.as_slice().iter().enumerate() {
        let got = sum(&|r| r.memory[a].share());
        assert_eq!(
            got, *want,
            "{context}: memory() differs from the oracle at address {a}"
        );
    }
    runs
}

fn unwrap_all<W>(runs: Vec<Result<PartyRun<W>, OramError>>, context: &str) -> Vec<PartyRun<W>> {
    if runs.iter().any(Result::is_err) {
        let errors: Vec<String> = runs
            .iter()
            .zip(ALL)
            .filter_map(|(r, p)| r.as_ref().err().map(|e| format!("{p}: {e}")))
            .collect();
        panic!("{context}: the run failed: {}", errors.join("; "));
    }
    runs.into_iter().flatten().collect()
}

/// The kit's standard plan: a random memory and a composite workload of `ops` instructions
/// (ops dealt hidden — except every fifth, dealt public — if `O` hides ops; all public
/// otherwise), half of them preprocessed up front.
pub fn standard_plan<W: Ring>(
    visibility: OpVisibility,
    n: usize,
    ops: usize,
    seed: u64,
) -> Plan<W> {
    let tag = n as u64;
    let mut rng = kit_rng(seed, tag);
    let initial: Vec<W> = (0..n).map(|_| W::random_from(&mut rng)).collect();
    let instructions = workload(Workload::Composite, n, ops, &mut rng)
        .into_iter()
        .enumerate()
        .map(|(t, ins)| {
            let vis = match visibility {
                OpVisibility::Hidden if t % 5 != 4 => OpVisibility::Hidden,
                _ => OpVisibility::Public,
            };
            (ins, vis)
        })
        .collect();
    Plan {
        n,
        initial,
        instructions,
        preprocess: ops.div_ceil(2),
        party_seed: seed ^ tag.rotate_left(32),
        dealer_seed: seed ^ tag,
        timeout: KIT_TIMEOUT,
    }
}

/// Conformance: runs [`standard_plan`] over a memory of `n` words with `ops` instructions and
/// checks every access result and the final memory against [`PlainMemory`]. Returns the three
/// parties' runs (statistics, transcripts).
///
/// # Panics
/// On any failure, with a message naming `DORAM_TEST_SEED`.
pub fn run_conformance<O, F>(make: F, n: usize, ops: usize, seed: u64) -> [PartyRun<O::Word>; 3]
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let mut it = run_conformance_for(3, make, n, ops, seed).into_iter();
    std::array::from_fn(|_| it.next().expect("three runs"))
}

/// [`run_conformance`] for a protocol of `parties` (two or three) parties; the dealer's
/// shares are folded as [`execute_for`] does.
///
/// # Panics
/// As [`run_conformance`].
pub fn run_conformance_for<O, F>(
    parties: usize,
    make: F,
    n: usize,
    ops: usize,
    seed: u64,
) -> Vec<PartyRun<O::Word>>
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let plan = standard_plan::<O::Word>(O::OP_VISIBILITY, n, ops, seed);
    let context = format!("conformance, n = {n}, {ops} ops, {SEED_VAR}={seed}");
    let sessions = mesh_of(parties, plan.timeout);
    check_runs(&plan, execute_for(&make, &plan, sessions), &context)
}

/// Leakage: runs `ops` instructions over `n` words on several sets of secrets — a random memory
/// with a composite workload; a zero memory written at address 0 over and over; a random memory
/// read at address `n − 1` over and over; and, for protocols that hide the op, the first
/// workload with all ops public — with the same party randomness, checks each against the
/// oracle, and asserts that each party's transcript (and so its message count, sizes and rounds
/// per phase) is identical in all runs.
///
/// For a protocol with [`OpVisibility::Public`] the op sequence is public and kept the same in
/// every run; only the memory, addresses and values change.
///
/// # Panics
/// On any difference, naming the first differing message and `DORAM_TEST_SEED`.
pub fn run_leakage<O, F>(make: F, n: usize, ops: usize, seed: u64)
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    run_leakage_for(3, make, n, ops, seed)
}

/// [`run_leakage`] for a protocol of `parties` (two or three) parties.
///
/// # Panics
/// As [`run_leakage`].
pub fn run_leakage_for<O, F>(parties: usize, make: F, n: usize, ops: usize, seed: u64)
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let base = standard_plan::<O::Word>(O::OP_VISIBILITY, n, ops, seed);
    let mut rng = kit_rng(seed, 0x1ea4);
    let hidden = O::OP_VISIBILITY == OpVisibility::Hidden;
    let same_ops = |plan: &Plan<O::Word>, op: Op, addr: u64, rng: &mut AesPrg| {
        plan.instructions
            .iter()
            .map(|(ins, vis)| {
                let op = if hidden { op } else { ins.op };
                let vis = if hidden { OpVisibility::Hidden } else { *vis };
                (
                    Instruction {
                        op,
                        addr,
                        value: O::Word::random_from(rng),
                    },
                    vis,
                )
            })
            .collect::<Vec<_>>()
    };
    let mut variants = Vec::new();
    let mut writes = base.clone();
    writes.initial = vec![O::Word::ZERO; n];
    writes.instructions = same_ops(&base, Op::Write, 0, &mut rng);
    writes.dealer_seed ^= 1;
    variants.push(("all writes to address 0, zero memory", writes));
    let mut reads = base.clone();
    reads.initial = (0..n).map(|_| O::Word::random_from(&mut rng)).collect();
    reads.instructions = same_ops(&base, Op::Read, n as u64 - 1, &mut rng);
    reads.dealer_seed ^= 2;
    variants.push(("all reads of the last address", reads));
    if hidden {
        let mut public = base.clone();
        for (_, vis) in &mut public.instructions {
            *vis = OpVisibility::Public;
        }
        public.dealer_seed ^= 3;
        variants.push(("the base workload with public ops", public));
    }

    let context = format!("leakage, n = {n}, {ops} ops, {SEED_VAR}={seed}");
    let run = |plan: &Plan<O::Word>| execute_for(&make, plan, mesh_of(parties, plan.timeout));
    let reference = check_runs(&base, run(&base), &context);
    for (what, plan) in variants {
        let ctx = format!("{context}, variant \"{what}\"");
        let runs = check_runs(&plan, run(&plan), &ctx);
        for (p, (a, b)) in ALL.iter().zip(reference.iter().zip(&runs)) {
            assert_same_shape(
                &a.transcript,
                &b.transcript,
                &format!("{ctx}: {p}'s transcript"),
            );
        }
    }
}

/// Asserts that two transcripts are equal, naming the first difference.
///
/// # Panics
/// If they differ.
pub fn assert_same_shape(a: &Transcript, b: &Transcript, context: &str) {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a.events[i] != b.events[i]) {
        panic!(
            "{context}: message {i} differs: {:?} vs {:?}",
            a.events[i], b.events[i]
        );
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{context}: {} vs {} messages (equal up to the shorter)",
        a.len(),
        b.len()
    );
}

/// Misuse: on each party, `access` and `memory` before `init`, `init` with the wrong number of
/// shares, a second `init`, and (for protocols with [`OpVisibility::Public`]) a hidden op must
/// return their typed errors without sending anything; the instance must then still execute a
/// write and two reads correctly.
///
/// # Panics
/// On any failure, naming `DORAM_TEST_SEED`.
pub fn run_misuse<O, F>(make: F, n: usize, seed: u64)
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let context = format!("misuse, n = {n}, {SEED_VAR}={seed}");
    let mut rng = kit_rng(seed, 0x0bad);
    let initial: Vec<O::Word> = (0..n).map(|_| O::Word::random_from(&mut rng)).collect();
    let memory = deal_memory(&initial, &mut rng);
    let addr = below(&mut rng, n);
    let value = O::Word::random_from(&mut rng);
    let program = [
        Instruction::write(addr, value),
        Instruction::read(addr),
        Instruction::read(0),
    ];
    let mut shares: [Vec<InstructionShare<O::Word>>; 3] = Default::default();
    for ins in &program {
        for (v, s) in shares
            .iter_mut()
            .zip(deal_instruction(ins, O::OP_VISIBILITY, &mut rng))
        {
            v.push(s);
        }
    }
    let hidden_op = deal_instruction(&Instruction::read(0), OpVisibility::Hidden, &mut rng);
    let results = run3_on(
        mesh(KIT_TIMEOUT),
        |mut session| -> Result<Vec<Additive<O::Word>>, String> {
            let me = session.me();
            let i = me.index();
            session.record_transcript(true);
            let mut o =
                make(session, me, n, party_seed(seed, me)).map_err(|e| format!("setup: {e}"))?;
            let sent = |o: &O| o.session().transcript().map_or(0, Transcript::len);
            let before = sent(&o);
            let expect =
                |what: &str, got: Result<(), OramError>, ok: fn(&OramError) -> bool| match got {
                    Err(e) if ok(&e) && e.is_misuse() => Ok(()),
                    other => Err(format!("{what}: got {other:?}")),
                };
            expect(
                "access before init",
                o.access(&shares[i][1]).map(drop),
                |e| matches!(e, OramError::NotInitialized),
            )?;
            expect("memory before init", o.memory().map(drop), |e| {
                matches!(e, OramError::NotInitialized)
            })?;
            let mut long = memory[i].clone();
            long.push(Additive::ZERO);
            expect("init with n + 1 shares", o.init(&long), |e| {
                matches!(e, OramError::WrongMemoryLength { .. })
            })?;
            expect("init with n − 1 shares", o.init(&memory[i][1..]), |e| {
                matches!(e, OramError::WrongMemoryLength { .. })
            })?;
            if sent(&o) != before {
                return Err("a misuse error was reported after sending messages".into());
            }
            o.init(&memory[i]).map_err(|e| format!("init: {e}"))?;
            let before = sent(&o);
            expect("a second init", o.init(&memory[i]), |e| {
                matches!(e, OramError::AlreadyInitialized)
            })?;
            if O::OP_VISIBILITY == OpVisibility::Public {
                expect("a hidden op", o.access(&hidden_op[i]).map(drop), |e| {
                    matches!(e, OramError::HiddenOpUnsupported)
                })?;
            }
            if sent(&o) != before {
                return Err("a misuse error was reported after sending messages".into());
            }
            shares[i]
                .iter()
                .map(|s| o.access(s).map_err(|e| format!("access after misuse: {e}")))
                .collect()
        },
    );
    let mut outs = Vec::new();
    for (p, r) in ALL.iter().zip(results) {
        match r {
            Ok(v) => outs.push(v),
            Err(e) => panic!("{context}: {p}: {e}"),
        }
    }
    let mut oracle = PlainMemory::new(initial);
    for (t, ins) in program.iter().enumerate() {
        let want = oracle
            .access(ins)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        let got = reconstruct_additive(&[outs[0][t], outs[1][t], outs[2][t]]);
        assert_eq!(got, want, "{context}: access {t} after the misuse errors");
    }
}

/// A fault injected into one message by [`run_fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The message is lost; later ones are delivered.
    Drop,
    /// The message is lost and the link closes.
    Close,
    /// The message and everything after it on the link are lost.
    Silence,
    /// The message loses its last byte.
    Truncate,
    /// The message is replaced by junk of a different length.
    Garbage,
    /// The frame header announces more than the frame limit.
    Oversize,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 6] = [
        Fault::Drop,
        Fault::Close,
        Fault::Silence,
        Fault::Truncate,
        Fault::Garbage,
        Fault::Oversize,
    ];

    fn apply(self, payload: &mut Vec<u8>) -> Tamper {
        match self {
            Fault::Drop => Tamper::Drop,
            Fault::Close => Tamper::Close,
            Fault::Silence => Tamper::Silence,
            Fault::Truncate => {
                payload.pop();
                Tamper::Pass
            }
            Fault::Garbage => {
                let len = payload.len() + 5;
                payload.clear();
                payload.resize(len, 0xa5);
                Tamper::Pass
            }
            Fault::Oversize => Tamper::Oversize,
        }
    }
}

/// The outcome of [`run_fault`].
#[derive(Debug)]
pub struct FaultOutcome {
    /// The tampered message: sender, receiver, and its index among the frames on that link.
    pub target: (PartyId, PartyId, u64),
    /// Each party's error.
    pub errors: [OramError; 3],
    /// How long the faulty run took.
    pub elapsed: Duration,
}

/// Faults: runs `ops ≥ 2` instructions over `n` words once cleanly to locate the first message
/// `from` sends in the middle access (index `ops / 2`), then again on a mesh whose hook applies
/// `fault` to that message, with receive timeout [`FAULT_TIMEOUT`]. Every party must return an
/// error (none may finish, panic or hang), within a few timeouts.
///
/// # Panics
/// If a party succeeds, the run takes longer than 40 timeouts, or `from` sends nothing during
/// that access; the message names `DORAM_TEST_SEED`.
pub fn run_fault<O, F>(
    make: F,
    n: usize,
    ops: usize,
    seed: u64,
    from: PartyId,
    fault: Fault,
) -> FaultOutcome
where
    O: DistributedOram,
    F: Fn(Session, PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let ops = ops.max(2);
    let context = format!("fault {fault:?} from {from}, n = {n}, {ops} ops, {SEED_VAR}={seed}");
    let plan = standard_plan::<O::Word>(O::OP_VISIBILITY, n, ops, seed);
    let clean = check_against_oracle(&plan, execute(&make, &plan, mesh(plan.timeout)), &context);
    let run = &clean[from.index()];
    let middle = ops / 2;
    let (start, end) = (run.access_marks[middle], run.access_marks[middle + 1]);
    let events = &run.transcript.events;
    let Some(pos) = (start..end).find(|&e| events[e].from == from) else {
        panic!("{context}: {from} sends nothing during access {middle}");
    };
    let to = events[pos].to;
    let index = events[..pos]
        .iter()
        .filter(|e| e.from == from && e.to == to)
        .count() as u64;
    let sessions = LocalMesh::new(3)
        .timeout(FAULT_TIMEOUT)
        .tamper(move |f, t, i, payload| {
            if (f, t, i) == (from, to, index) {
                fault.apply(payload)
            } else {
                Tamper::Pass
            }
        })
        .build();
    let mut faulty = plan.clone();
    faulty.timeout = FAULT_TIMEOUT;
    let started = Instant::now();
    let results = execute(&make, &faulty, sessions);
    let elapsed = started.elapsed();
    assert!(
        elapsed < FAULT_TIMEOUT * 40,
        "{context}: the faulty run took {elapsed:?}"
    );
    let mut errors = Vec::with_capacity(3);
    for (p, r) in ALL.iter().zip(results) {
        match r {
            Err(e) => errors.push(e),
            Ok(_) => panic!("{context}: {p} finished the faulty run without an error"),
        }
    }
    let mut it = errors.into_iter();
    let errors = std::array::from_fn(|_| it.next().expect("three errors"));
    FaultOutcome {
        target: (from, to, index),
        errors,
        elapsed,
    }
}

/// Adds the kit's tests for a protocol, in a module `$name`: conformance against
/// [`PlainMemory`](crate::PlainMemory) for several sizes, transcript leakage, misuse and faults.
///
/// `$make` is an expression of type `Fn(Session, PartyId, usize, Seed) -> Result<O, OramError>`
/// (usually a closure calling the protocol's constructor); it is evaluated once per run.
///
/// ```ignore
/// doram_oram::oram_conformance!(linear_z64, |session, _me, n, seed| {
///     doram_oram::LinearScanOram::<doram_field::Z64>::setup(session, n, seed)
/// });
/// // Or with explicit sizes and operation count:
/// doram_oram::oram_conformance!(linear_fp, |s, _, n, seed| LinearScanOram::<Fp>::setup(s, n, seed),
///     sizes = [1, 2, 3, 16, 17, 100], ops = 60);
/// ```
#[macro_export]
macro_rules! oram_conformance {
    ($name:ident, $make:expr) => {
        $crate::oram_conformance!($name, $make, sizes = [1, 2, 3, 5, 13, 16, 17, 100], ops = 60);
    };
    ($name:ident, $make:expr, sizes = [$($n:expr),+ $(,)?], ops = $ops:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn matches_plain_memory() {
                let seed = $crate::testkit::test_seed();
                for n in [$($n),+] {
                    $crate::testkit::run_conformance($make, n, $ops, seed);
                }
            }

            #[test]
            fn transcripts_do_not_depend_on_secrets() {
                let seed = $crate::testkit::test_seed();
                for n in [$($n),+] {
                    $crate::testkit::run_leakage($make, n, $ops, seed);
                }
            }

            #[test]
            fn batches_and_updates_match_plain_memory() {
                let seed = $crate::testkit::test_seed();
                for n in [$($n),+] {
                    $crate::testkit::run_batches($make, n, $ops, seed);
                }
            }

            #[test]
            fn misuse_is_reported_before_sending() {
                let seed = $crate::testkit::test_seed();
                for n in [$($n),+] {
                    $crate::testkit::run_misuse($make, n, seed);
                }
            }

            #[test]
            fn faults_give_errors_at_every_party() {
                let seed = $crate::testkit::test_seed();
                let n = [$($n),+].into_iter().max().unwrap_or(1).min(16);
                for (i, fault) in $crate::testkit::Fault::ALL.into_iter().enumerate() {
                    let from = [
                        $crate::__private::PartyId::P0,
                        $crate::__private::PartyId::P1,
                        $crate::__private::PartyId::P2,
                    ][i % 3];
                    $crate::testkit::run_fault($make, n, 6, seed, from, fault);
                }
            }
        }
    };
}
