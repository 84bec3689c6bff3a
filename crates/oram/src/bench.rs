//! The benchmark runner of every DORAM protocol: one workload, one measurement, one check and
//! one report shape for any [`Protocol`].
//!
//! Every party derives the same plaintext workload from the public seed
//! ([`BenchConfig::seed`], standing in for the program that would produce the instructions): a
//! random memory of `n` words (or an all-zero one) and `accesses` instructions with random
//! addresses and values, random reads and writes or only writes. It takes its shares from a
//! synthetic dealer keyed by the same seed ([`SYNTHETIC_DEALER`]: the shares protect nothing,
//! which the report says). The op of each instruction is secret-shared where the protocol hides
//! it ([`OpVisibility::Hidden`]) and public otherwise. Each party's own secret randomness comes
//! from [`BenchConfig::entropy`] (the OS unless a reproducible run asks otherwise).
//!
//! A party then runs, each phase under its own session phase label and its own clock:
//!
//! | phase | label | what |
//! |---|---|---|
//! | setup | `setup` | [`Protocol::setup`] |
//! | preprocessing | `preprocess` | [`DistributedOram::preprocess`](crate::DistributedOram::preprocess): all accesses before Init with [`BenchConfig::preprocess_first`], else just in time (whenever nothing is left, before an access) |
//! | Init | `init` | [`DistributedOram::init`](crate::DistributedOram::init) |
//! | online | `access` | the accesses |
//!
//! A protocol may label finer phases of its own inside these calls (Ramen's steps); bytes,
//! messages and rounds are attributed by label: `setup`, `preprocess` and `init` to their phase,
//! every other label entered before verification to the online phase. Per-access figures
//! ([`PerAccess`]) cover preprocessing and online only — Init (which sends the whole memory in
//! some protocols) and setup are reported apart.
//!
//! After the measured part, with [`BenchConfig::verify`], the parties call
//! [`memory`](crate::DistributedOram::memory), open every access result and the final memory to each
//! other (label `verify`, outside every figure) and compare them with a [`PlainMemory`] run of
//! the same workload; a difference is [`BenchError::VerificationFailed`].
//!
//! [`run_local`] runs the three parties as threads over an in-process mesh (optionally shaped),
//! [`run_on`] as threads over any three connected sessions (TLS on loopback in the protocols'
//! transport tests); [`run_party`] runs one party over a connected session (what `doram party` calls on each
//! host), and [`BenchReport::new`] joins the three parties' figures into the report.

use std::time::{Duration, Instant};

use doram_core::{Entropy, PartyId, SYNTHETIC_DEALER, Seed};
use doram_field::{Group, Ring};
use doram_mpc::{Additive, MpcError, deal_additive};
use doram_net::{LocalMesh, NetError, Session, Shaping, Stats, run_parties_ok};
use doram_prim::AesPrg;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::OramError;
use crate::instruction::{
    Instruction, InstructionShare, Op, OpVisibility, deal_instruction, merge_instruction_shares,
};
use crate::plain::PlainMemory;
use crate::protocol::Protocol;

/// The version tag of [`BenchReport`]'s JSON (`schema`).
pub const SCHEMA: &str = "doram-oram-bench/1";

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchConfig {
    /// Memory size in words.
    pub n: usize,
    /// Number of accesses.
    pub accesses: usize,
    /// Worker threads per party ([`Protocol::setup`]).
    pub threads: usize,
    /// Public seed of the synthetic workload (memory and instructions) and of the synthetic
    /// dealer that shares it: benchmark data, public to anyone who knows the seed.
    pub seed: u64,
    /// Where each party's own secret randomness comes from.
    pub entropy: Entropy,
    /// Preprocess all accesses before Init instead of just in time.
    pub preprocess_first: bool,
    /// Start from an all-zero memory instead of a random one.
    pub zero_memory: bool,
    /// Only writes instead of a random mix of reads and writes.
    pub writes_only: bool,
    /// Open and check every result and the final memory afterwards.
    pub verify: bool,
    /// Receive timeout of the sessions [`run_local`] creates.
    pub timeout: Duration,
}

impl BenchConfig {
    /// `accesses` random reads and writes on a random memory of `n` words, one thread per
    /// party, preprocessed just in time, verified, with OS randomness.
    pub fn new(n: usize, accesses: usize) -> BenchConfig {
        BenchConfig {
            n,
            accesses,
            threads: 1,
            seed: 1,
            entropy: Entropy::Os,
            preprocess_first: false,
            zero_memory: false,
            writes_only: false,
            verify: true,
            timeout: doram_net::DEFAULT_TIMEOUT,
        }
    }
}

/// A failed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// The protocol failed (misuse, a peer's fault, the transport).
    #[error(transparent)]
    Oram(#[from] OramError),
    /// The transport failed while the results were opened for verification.
    #[error(transparent)]
    Net(#[from] NetError),
    /// An opened result or word of the final memory differs from the plaintext run.
    #[error("verification failed: {what} {index} differs from the plaintext memory")]
    VerificationFailed {
        /// `access result` or `memory word`.
        what: &'static str,
        /// Its index.
        index: usize,
    },
    /// A party thread panicked or could not start.
    #[error("a party thread panicked or could not start")]
    Thread,
}

/// One phase of one party: its wall time and what it sent and received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// Wall time, ms.
    pub ms: f64,
    /// This party's thread CPU time, ms (absent where the platform has no thread clock).
    pub cpu_ms: Option<f64>,
    /// Payload bytes sent, all peers.
    pub bytes_sent: u64,
    /// Payload bytes received, all peers.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Messages received.
    pub messages_received: u64,
    /// Rounds: how far the party's Lamport round count advanced in the phase.
    pub rounds: u64,
}

impl PhaseFigures {
    fn add_comm(&mut self, stats: &Stats, phase: &str) {
        if let Some(p) = stats.phase(phase) {
            let s = p.sum();
            self.bytes_sent += s.bytes_sent;
            self.bytes_received += s.bytes_received;
            self.messages_sent += s.msgs_sent;
            self.messages_received += s.msgs_received;
            self.rounds += p.rounds;
        }
    }
}

/// A step of the protocol's own (a session phase label it set, or a step it timed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// The label.
    pub name: String,
    /// The protocol's own wall time for the step, ms, where it keeps one.
    pub ms: Option<f64>,
    /// Payload bytes sent under the label.
    pub bytes_sent: u64,
    /// Messages sent under the label.
    pub messages_sent: u64,
    /// Rounds under the label.
    pub rounds: u64,
}

/// One party's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartyBench {
    /// `P0`, `P1`, `P2`.
    pub party: String,
    /// Setup.
    pub setup: PhaseFigures,
    /// Preprocessing, all accesses.
    pub preprocessing: PhaseFigures,
    /// Init.
    pub init: PhaseFigures,
    /// Online, all accesses.
    pub online: PhaseFigures,
    /// The protocol's own steps and every session label, in the order first used (verification
    /// excluded).
    pub steps: Vec<StepFigures>,
    /// Peak resident memory of the process that ran the party (all three parties when they run
    /// as threads of one process), where the OS reports it.
    pub peak_memory_bytes: Option<u64>,
}

/// A phase's figures over the three parties: the slowest party's time, every party's bytes and
/// messages added up, the most rounds of any party.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Wall time of the slowest party, ms.
    pub ms: f64,
    /// Payload bytes sent, summed over the parties.
    pub bytes: f64,
    /// Messages sent, summed over the parties.
    pub messages: f64,
    /// Rounds of the party with the most.
    pub rounds: f64,
}

impl Totals {
    fn of(parties: &[PartyBench], phase: impl Fn(&PartyBench) -> &PhaseFigures) -> Totals {
        let mut t = Totals::default();
        for p in parties {
            let f = phase(p);
            t.ms = t.ms.max(f.ms);
            t.bytes += f.bytes_sent as f64;
            t.messages += f.messages_sent as f64;
            t.rounds = t.rounds.max(f.rounds as f64);
        }
        t
    }

    fn per(self, k: usize) -> Totals {
        let k = k.max(1) as f64;
        Totals {
            ms: self.ms / k,
            bytes: self.bytes / k,
            messages: self.messages / k,
            rounds: self.rounds / k,
        }
    }
}

/// Per-access figures: preprocessing and online, Init and setup excluded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerAccess {
    /// Online phase per access.
    pub online: Totals,
    /// Preprocessing per access.
    pub preprocessing: Totals,
    /// Preprocessing and online per access: the slowest party's summed time, all bytes.
    pub amortized_ms: f64,
    /// Preprocessing and online payload bytes per access, all parties.
    pub bytes: f64,
}

/// How the parties ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEnv {
    /// `threads` (one process), `processes` (one per party, TLS over loopback) or `hosts`.
    pub parties_as: String,
    /// Emulated one-way latency per link, ms.
    pub latency_ms: f64,
    /// Emulated bandwidth per link, Mbit/s (absent: unlimited).
    pub bandwidth_mbit: Option<f64>,
}

impl RunEnv {
    /// Parties run `parties_as`, with `shaping` on every link.
    pub fn new(parties_as: &str, shaping: Shaping) -> RunEnv {
        RunEnv {
            parties_as: parties_as.to_string(),
            latency_ms: shaping.latency.as_secs_f64() * 1e3,
            bandwidth_mbit: shaping.bandwidth_bits_per_sec.map(|b| b / 1e6),
        }
    }
}

/// The report of one run, the same shape for every protocol (documented field by field in
/// BENCHMARKS.md, "JSON report fields").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// [`SCHEMA`].
    pub schema: String,
    /// [`Protocol::NAME`].
    pub protocol: String,
    /// The word ring (`Fp`, `Z64`).
    pub word: String,
    /// `hidden` or `public`: whether the parties learn each access's type.
    pub ops: String,
    /// Memory size in words.
    pub n: usize,
    /// Accesses run.
    pub accesses: usize,
    /// Worker threads per party.
    pub threads: usize,
    /// Public seed of the workload and of the synthetic dealer.
    pub seed: u64,
    /// Whether the memory started all zero.
    pub zero_memory: bool,
    /// Whether every access was a write.
    pub writes_only: bool,
    /// Whether all preprocessing ran before Init.
    pub preprocess_first: bool,
    /// Where the parties' secret randomness came from: `os` or `insecure-seed N`.
    pub randomness: String,
    /// How the inputs were shared ([`SYNTHETIC_DEALER`]).
    pub dealer: String,
    /// How the parties ran.
    #[serde(flatten)]
    pub env: RunEnv,
    /// Whether every result and the final memory were checked against the plaintext memory.
    pub verified: bool,
    /// Per access: preprocessing and online.
    pub per_access: PerAccess,
    /// Init, all of it.
    pub init: Totals,
    /// Setup, all of it.
    pub setup: Totals,
    /// Per party, in party order.
    pub parties: Vec<PartyBench>,
    /// The command that reproduces the run, where the caller knows it.
    pub command: Option<String>,
}

impl BenchReport {
    /// The report of protocol `P` run as `cfg` in `env`, from the three parties' figures.
    pub fn new<P: Protocol>(cfg: &BenchConfig, env: RunEnv, parties: Vec<PartyBench>) -> Self {
        let online = Totals::of(&parties, |p| &p.online);
        let preprocessing = Totals::of(&parties, |p| &p.preprocessing);
        let amortized = parties
            .iter()
            .map(|p| p.online.ms + p.preprocessing.ms)
            .fold(0.0, f64::max);
        let k = cfg.accesses.max(1) as f64;
        BenchReport {
            schema: SCHEMA.to_string(),
            protocol: P::NAME.to_string(),
            word: word_name::<P::Word>(),
            ops: match P::OP_VISIBILITY {
                OpVisibility::Hidden => "hidden",
                OpVisibility::Public => "public",
            }
            .to_string(),
            n: cfg.n,
            accesses: cfg.accesses,
            threads: cfg.threads,
            seed: cfg.seed,
            zero_memory: cfg.zero_memory,
            writes_only: cfg.writes_only,
            preprocess_first: cfg.preprocess_first,
            randomness: cfg.entropy.to_string(),
            dealer: SYNTHETIC_DEALER.to_string(),
            env,
            verified: cfg.verify,
            per_access: PerAccess {
                online: online.per(cfg.accesses),
                preprocessing: preprocessing.per(cfg.accesses),
                amortized_ms: amortized / k,
                bytes: (online.bytes + preprocessing.bytes) / k,
            },
            init: Totals::of(&parties, |p| &p.init),
            setup: Totals::of(&parties, |p| &p.setup),
            parties,
            command: None,
        }
    }
}

/// The last path segment of the word type's name (`Fp`, `Z64`).
fn word_name<W>() -> String {
    let full = std::any::type_name::<W>();
    full.rsplit("::").next().unwrap_or(full).to_string()
}

/// The plaintext workload of `cfg`: initial memory and instructions.
pub fn workload<W: Ring>(cfg: &BenchConfig) -> (Vec<W>, Vec<Instruction<W>>) {
    let mut rng = dealer(cfg.seed, 0);
    let n = cfg.n;
    let memory = if cfg.zero_memory {
        vec![W::ZERO; n]
    } else {
        (0..n).map(|_| W::random_from(&mut rng)).collect()
    };
    let instructions = (0..cfg.accesses)
        .map(|_| {
            let write = cfg.writes_only || rng.next_u32() & 1 == 1;
            // Benchmark inputs only: the modulo bias of a 64-bit draw is irrelevant here.
            let addr = rng.next_u64() % n.max(1) as u64;
            Instruction {
                op: if write { Op::Write } else { Op::Read },
                addr,
                value: W::random_from(&mut rng),
            }
        })
        .collect();
    (memory, instructions)
}

fn dealer(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// This party's shares of the workload from the synthetic dealer (which draws all three shares
/// of everything and keeps party `me`'s; with two parties `P0` keeps the sum of the first and
/// the third).
fn deal<W: Ring>(
    memory: &[W],
    instructions: &[Instruction<W>],
    visibility: OpVisibility,
    seed: u64,
    me: PartyId,
    parties: usize,
) -> (Vec<Additive<W>>, Vec<InstructionShare<W>>) {
    let mut rng = dealer(seed, 1);
    let i = me.index();
    // Two parties: P0 takes the first and third of the dealer's three shares.
    let pick = |s: [Additive<W>; 3]| match (parties, i) {
        (2, 0) => s[0] + s[2],
        _ => s[i],
    };
    let memory = memory
        .iter()
        .map(|&x| pick(deal_additive(x, &mut rng)))
        .collect();
    let instructions = instructions
        .iter()
        .map(|ins| {
            let [a, b, c] = deal_instruction(ins, visibility, &mut rng);
            match (parties, i) {
                (2, 0) => merge_instruction_shares(a, c),
                (_, 0) => a,
                (_, 1) => b,
                _ => c,
            }
        })
        .collect();
    (memory, instructions)
}

/// The CPU time this thread has used so far (`CLOCK_THREAD_CPUTIME_ID`), or `None` where that
/// is not available.
#[cfg(unix)]
pub fn thread_cpu_time() -> Option<Duration> {
    use rustix::time::{ClockId, clock_gettime};
    let t = clock_gettime(ClockId::ThreadCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

/// The CPU time this thread has used so far: not available on this platform.
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}

/// Peak resident set size of this process (`VmHWM`), where the OS reports it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A wall clock and a CPU clock, summed over the intervals they time.
#[derive(Default)]
struct Clock {
    wall: Duration,
    cpu: Option<Duration>,
}

impl Clock {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        // The CPU clock is read outside the timed interval.
        let c = thread_cpu_time();
        let t = Instant::now();
        let out = f();
        self.wall += t.elapsed();
        if let (Some(c0), Some(c1)) = (c, thread_cpu_time()) {
            *self.cpu.get_or_insert_default() += c1.saturating_sub(c0);
        }
        out
    }

    fn figures(&self) -> PhaseFigures {
        PhaseFigures {
            ms: ms(self.wall),
            cpu_ms: self.cpu.map(ms),
            ..PhaseFigures::default()
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The labels of the generic phases.
const SETUP: &str = "setup";
const PREPROCESS: &str = "preprocess";
const INIT: &str = "init";
const ACCESS: &str = "access";
const VERIFY: &str = "verify";

/// Runs this party's side of the benchmark `cfg` of protocol `P` on `session` (three connected
/// parties, each calling this with the same `cfg`).
///
/// # Errors
/// A protocol or transport failure; [`BenchError::VerificationFailed`] if `cfg.verify` and a
/// result differs from the plaintext run.
pub fn run_party<P: Protocol>(
    mut session: Session,
    cfg: &BenchConfig,
) -> Result<PartyBench, BenchError> {
    let me = session.me();
    let (plain_memory, plain_instructions) = workload::<P::Word>(cfg);
    let (memory, instructions) = deal(
        &plain_memory,
        &plain_instructions,
        P::OP_VISIBILITY,
        cfg.seed,
        me,
        session.n_parties(),
    );

    let (mut setup, mut prep, mut init, mut online) = (
        Clock::default(),
        Clock::default(),
        Clock::default(),
        Clock::default(),
    );
    let seed = cfg.entropy.party_seed(me, P::NAME);
    session.set_phase(SETUP);
    let mut o = setup.time(|| P::setup(session, cfg.n, cfg.threads, seed))?;
    // No frame beyond the protocol's largest message (or the verification's engine frames).
    let opening = if cfg.verify {
        doram_mpc::MAX_FRAME_BYTES
    } else {
        0
    };
    let limit = o.max_message_bytes().max(opening);
    o.session_mut()
        .limit_frame_bytes(u32::try_from(limit).unwrap_or(u32::MAX));
    if cfg.preprocess_first {
        o.session_mut().set_phase(PREPROCESS);
        prep.time(|| o.preprocess(cfg.accesses))?;
    }
    o.session_mut().set_phase(INIT);
    init.time(|| o.init(&memory))?;
    drop(memory);
    let mut outputs = Vec::with_capacity(if cfg.verify { cfg.accesses } else { 0 });
    for ins in &instructions {
        if o.preprocessed() == 0 {
            o.session_mut().set_phase(PREPROCESS);
            prep.time(|| o.preprocess(1))?;
        }
        o.session_mut().set_phase(ACCESS);
        let out = online.time(|| o.access(ins))?;
        if cfg.verify {
            outputs.push(out);
        }
    }
    let stats = o.session().stats().clone();
    let steps = o.step_times();
    if cfg.verify {
        verify(&mut o, plain_memory, &plain_instructions, &outputs)?;
    }

    let mut figures = [setup, prep, init, online].map(|c| c.figures());
    let named = attribute(&stats, &steps, &mut figures);
    let [setup, preprocessing, init, online] = figures;
    Ok(PartyBench {
        party: me.to_string(),
        setup,
        preprocessing,
        init,
        online,
        steps: named,
        peak_memory_bytes: peak_memory_bytes(),
    })
}

/// Adds each session phase's communication to the generic phase it belongs to (`figures`:
/// setup, preprocessing, Init, online) and returns the protocol's steps (`steps`, with their
/// times) and every other label that saw traffic, each with its communication.
fn attribute(
    stats: &Stats,
    steps: &[(&'static str, Duration)],
    figures: &mut [PhaseFigures; 4],
) -> Vec<StepFigures> {
    let step = |name: &str, ms: Option<f64>| StepFigures {
        name: name.to_string(),
        ms,
        bytes_sent: 0,
        messages_sent: 0,
        rounds: 0,
    };
    let mut named: Vec<StepFigures> = steps
        .iter()
        .map(|&(name, d)| step(name, Some(self::ms(d))))
        .collect();
    for (name, phase) in stats.phases() {
        let slot = match name {
            SETUP => 0,
            PREPROCESS => 1,
            INIT => 2,
            doram_net::DEFAULT_PHASE | VERIFY => continue,
            _ => 3,
        };
        figures[slot].add_comm(stats, name);
        let s = phase.sum();
        if s.msgs_sent == 0 && s.msgs_received == 0 && phase.rounds == 0 {
            continue;
        }
        let i = match named.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                named.push(step(name, None));
                named.len() - 1
            }
        };
        named[i].bytes_sent = s.bytes_sent;
        named[i].messages_sent = s.msgs_sent;
        named[i].rounds = phase.rounds;
    }
    named
}

/// Opens the outputs and the final memory to every party (label `verify`) and compares them
/// with a [`PlainMemory`] run of the workload.
fn verify<P: Protocol>(
    o: &mut P,
    memory: Vec<P::Word>,
    instructions: &[Instruction<P::Word>],
    outputs: &[Additive<P::Word>],
) -> Result<(), BenchError> {
    o.session_mut().set_phase(VERIFY);
    let final_memory = o.memory()?;
    let session = o.session_mut();
    session.set_phase(VERIFY);
    let mut mine: Vec<P::Word> = Additive::shares(outputs);
    mine.extend(Additive::shares(&final_memory));
    let total = open_to_all(session, mine).map_err(OramError::from)?;
    let mut plain = PlainMemory::new(memory);
    for (t, ins) in instructions.iter().enumerate() {
        if plain.access(ins)? != total[t] {
            return Err(BenchError::VerificationFailed {
                what: "access result",
                index: t,
            });
        }
    }
    let opened = &total[instructions.len()..];
    if let Some(j) = (0..plain.len()).find(|&j| opened[j] != plain.as_slice()[j]) {
        return Err(BenchError::VerificationFailed {
            what: "memory word",
            index: j,
        });
    }
    Ok(())
}

/// Opens this party's additive shares `mine` to the two other parties of a three-party
/// session and returns the opened values (each party sends its shares to both peers): how a
/// benchmark checks its results, outside the measured phases. The shares travel in engine
/// frames of at most [`doram_mpc::MAX_FRAME_BYTES`], so the opening needs no larger frame
/// limit than the protocol's own.
///
/// # Errors
/// A transport failure or a peer's malformed frame.
pub fn open_to_all<W: Group>(session: &mut Session, mine: Vec<W>) -> Result<Vec<W>, MpcError> {
    let me = session.me();
    let peers: Vec<PartyId> = if session.n_parties() == 3 {
        vec![me.next(3), me.prev(3)]
    } else {
        session.peers().collect()
    };
    for &p in &peers {
        doram_mpc::send_framed(session, p, &mine)?;
    }
    let mut total = mine;
    for &p in &peers {
        let theirs: Vec<W> = doram_mpc::recv_framed(session, p, total.len(), "opened shares")?;
        for (t, x) in total.iter_mut().zip(theirs) {
            *t += x;
        }
    }
    Ok(total)
}

/// Runs the benchmark `cfg` of protocol `P` with the three parties as threads of this process
/// over an in-process mesh, with `shaping` on every link.
///
/// # Errors
/// The first party's error, if any party fails.
pub fn run_local<P: Protocol>(
    cfg: &BenchConfig,
    shaping: Shaping,
) -> Result<BenchReport, BenchError> {
    let sessions = LocalMesh::new(P::PARTIES)
        .timeout(cfg.timeout)
        .shaping(shaping)
        .build();
    run_on::<P>(sessions, cfg, RunEnv::new("threads", shaping))
}

/// Runs the benchmark `cfg` of protocol `P` with one thread per session of `sessions` (the
/// three connected sessions of one mesh: in-process, or TCP/TLS on loopback from
/// [`loopback_mesh`](doram_net::loopback_mesh)) and reports it as run in `env`.
///
/// # Errors
/// The first party's error, if any party fails.
pub fn run_on<P: Protocol>(
    sessions: Vec<Session>,
    cfg: &BenchConfig,
    env: RunEnv,
) -> Result<BenchReport, BenchError> {
    let parties = run_parties_ok(
        sessions,
        P::NAME,
        |session| run_party::<P>(session, cfg),
        || BenchError::Thread,
    )?;
    Ok(BenchReport::new::<P>(cfg, env, parties))
}
