//! A benchmark runner for 3P-Duoram, for the command-line tool and the benchmarks: three parties
//! run a random workload, either as three threads over an in-process mesh ([`run_local`]) or
//! each over its own connected [`Session`] — in-process, TCP or TLS ([`run_party`]).
//!
//! Every party derives the same plaintext workload from the public seed (standing in for the
//! program that would produce the instructions) and takes its shares of it from a synthetic
//! dealer keyed by that seed ([`SYNTHETIC_DEALER`]: the shares protect nothing, which the
//! reports say); each party's own randomness comes from [`BenchConfig::entropy`] (the OS
//! unless a reproducible run asks otherwise): a random memory of
//! `n` words and `ops` operations with random addresses and values, of the kinds `mix` asks for
//! (READ, UPDATE, WRITE, or a random mix of the three). The operation types are public, as in
//! Duoram. Preprocessing runs either up front ([`BenchConfig::preprocess_first`], in chunks of
//! [`BenchConfig::chunk`] operations to bound the memory held) or just in time, one operation's
//! triple right before the operation; either way it is timed and counted separately from the
//! online phase. Bytes, messages and rounds come from the session's counters by phase
//! (`setup`, `preprocess`, `init`, `read`, `update`, `write`). With `verify`, the parties
//! afterwards open every result and the final memory to each other (phase `verify`, outside the
//! measurements) and compare them with a `PlainMemory` run.
//!
//! Every DORAM, Duoram included, is measured by the generic runner `doram_oram::bench`
//! (`doram bench oram`); this runner remains for what only Duoram has: the UPDATE operation
//! (Protocol 2) and the online figures split by READ, UPDATE and WRITE.

use std::time::{Duration, Instant};

use doram_core::{Entropy, PartyId, Seed};
use doram_field::Z64;
use doram_mpc::{Additive, deal_additive};
use doram_net::{LocalMesh, Session, Shaping, run_parties_ok};
use doram_oram::PlainMemory;
use doram_prim::AesPrg;
use rand_core::RngCore;

use crate::duoram::Duoram;
use crate::error::DuoramError;

/// The kinds of operations a run executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpMix {
    /// Only READs.
    Reads,
    /// Only UPDATEs (the paper's benchmark "write").
    Updates,
    /// Only WRITEs (READ then UPDATE).
    Writes,
    /// Each operation a READ, UPDATE or WRITE uniformly at random.
    Random,
}

impl OpMix {
    /// The name used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OpMix::Reads => "reads",
            OpMix::Updates => "updates",
            OpMix::Writes => "writes",
            OpMix::Random => "random",
        }
    }
}

/// An operation kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// READ (Protocol 1).
    Read,
    /// UPDATE (Protocol 2).
    Update,
    /// WRITE (READ then UPDATE).
    Write,
}

impl Kind {
    /// All kinds, in report order.
    pub const ALL: [Kind; 3] = [Kind::Read, Kind::Update, Kind::Write];

    /// The session phase of the kind.
    pub fn phase(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Update => "update",
            Kind::Write => "write",
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Read => 0,
            Kind::Update => 1,
            Kind::Write => 2,
        }
    }
}

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchConfig {
    /// Memory size (words of `Z64`).
    pub n: usize,
    /// Number of operations.
    pub ops: usize,
    /// Public seed of the synthetic workload (memory and instructions) and of the synthetic
    /// dealer that shares it: benchmark data, public to anyone who knows the seed.
    pub seed: u64,
    /// Where each party's own secret randomness comes from (OS entropy unless a reproducible
    /// run asks for [`Entropy::InsecureSeed`]).
    pub entropy: Entropy,
    /// Preprocess up front (in chunks of `chunk` operations) instead of just in time.
    pub preprocess_first: bool,
    /// Operations per preprocessing chunk when `preprocess_first` (0: all at once).
    pub chunk: usize,
    /// Open and check every result and the final memory afterwards.
    pub verify: bool,
    /// Which operations.
    pub mix: OpMix,
    /// Receive timeout of the sessions [`run_local`] creates.
    pub timeout: Duration,
}

impl BenchConfig {
    /// `ops` random operations on `n` words, preprocessed just in time, not verified.
    pub fn new(n: usize, ops: usize) -> BenchConfig {
        BenchConfig {
            n,
            ops,
            seed: 1,
            entropy: Entropy::Os,
            preprocess_first: false,
            chunk: 0,
            verify: false,
            mix: OpMix::Random,
            timeout: doram_net::DEFAULT_TIMEOUT,
        }
    }
}

/// Communication of one party in some phases (re-exported from `doram-net`).
pub use doram_net::Comm;

/// The CPU time this thread has used so far (shared with the generic bench runner).
pub use doram_oram::bench::thread_cpu_time;

/// One party's measurements.
#[derive(Clone, Debug)]
pub struct PartyReport {
    /// The party.
    pub party: PartyId,
    /// Setup time (pairwise seeds).
    pub setup: Duration,
    /// Preprocessing time, all operations.
    pub preprocessing: Duration,
    /// Init time.
    pub init: Duration,
    /// Online time per kind (READ, UPDATE, WRITE), summed over the operations of that kind.
    pub online: [Duration; 3],
    /// Operations per kind.
    pub counts: [usize; 3],
    /// This party's CPU time in preprocessing (zero where not available).
    pub preprocessing_cpu: Duration,
    /// This party's CPU time online per kind (zero where not available).
    pub online_cpu: [Duration; 3],
    /// Preprocessing communication.
    pub preprocessing_comm: Comm,
    /// Init communication.
    pub init_comm: Comm,
    /// Setup communication.
    pub setup_comm: Comm,
    /// Online communication per kind.
    pub online_comm: [Comm; 3],
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct BenchOutcome {
    /// What ran.
    pub config: BenchConfig,
    /// Each party's report, in party order (one entry for [`run_party`]'s caller).
    pub parties: Vec<PartyReport>,
    /// Whether the results were verified (and matched; a mismatch is an error).
    pub verified: bool,
}

impl BenchOutcome {
    /// Preprocessing time per operation (the slowest party).
    pub fn preprocessing_per_op(&self) -> Duration {
        let worst = self.parties.iter().map(|p| p.preprocessing).max();
        worst.unwrap_or_default() / self.config.ops.max(1) as u32
    }

    /// Online time per operation of `kind` (the slowest party); `None` if none ran.
    pub fn online_per_op(&self, kind: Kind) -> Option<Duration> {
        let i = kind.index();
        let count = self.parties.first().map_or(0, |p| p.counts[i]);
        (count > 0).then(|| {
            let worst = self.parties.iter().map(|p| p.online[i]).max();
            worst.unwrap_or_default() / count as u32
        })
    }

    /// Online time per operation, all kinds together (the slowest party).
    pub fn online_total_per_op(&self) -> Duration {
        let worst = self
            .parties
            .iter()
            .map(|p| p.online.iter().sum::<Duration>())
            .max();
        worst.unwrap_or_default() / self.config.ops.max(1) as u32
    }

    /// Per operation of `kind`: payload bytes and messages summed over the parties, and the
    /// rounds of the party with the most.
    pub fn online_comm_per_op(&self, kind: Kind) -> Option<(f64, f64, f64)> {
        let i = kind.index();
        let count = self.parties.first().map_or(0, |p| p.counts[i]);
        (count > 0).then(|| {
            let c = count as f64;
            let bytes: u64 = self.parties.iter().map(|p| p.online_comm[i].bytes).sum();
            let msgs: u64 = self.parties.iter().map(|p| p.online_comm[i].messages).sum();
            let rounds = self.parties.iter().map(|p| p.online_comm[i].rounds).max();
            (
                bytes as f64 / c,
                msgs as f64 / c,
                rounds.unwrap_or(0) as f64 / c,
            )
        })
    }

    /// CPU time per operation summed over the three parties: preprocessing, and online per
    /// kind (`None` if no operation of that kind ran). With one core per party the wall time
    /// cannot be below the largest party's share; on two cores, not below half the sum.
    pub fn cpu_per_op(&self) -> (Duration, [Option<Duration>; 3]) {
        let ops = self.config.ops.max(1) as u32;
        let prep: Duration = self.parties.iter().map(|p| p.preprocessing_cpu).sum();
        let online = Kind::ALL.map(|k| {
            let i = k.index();
            let count = self.parties.first().map_or(0, |p| p.counts[i]);
            (count > 0).then(|| {
                self.parties
                    .iter()
                    .map(|p| p.online_cpu[i])
                    .sum::<Duration>()
                    / count as u32
            })
        });
        (prep / ops, online)
    }

    /// Preprocessing payload bytes per operation, summed over the parties.
    pub fn preprocessing_bytes_per_op(&self) -> f64 {
        let total: u64 = self
            .parties
            .iter()
            .map(|p| p.preprocessing_comm.bytes)
            .sum();
        total as f64 / self.config.ops.max(1) as f64
    }

    /// A JSON object with the configuration, per-operation figures and per-party details.
    pub fn to_json(&self) -> String {
        let per_kind: Vec<String> = Kind::ALL.iter().map(|&k| self.kind_json(k)).collect();
        let parties: Vec<String> = self.parties.iter().map(PartyReport::to_json).collect();
        let c = &self.config;
        let prep_rounds = self
            .parties
            .iter()
            .map(|p| p.preprocessing_comm.rounds)
            .max()
            .unwrap_or(0);
        format!(
            "{{\"protocol\":\"duoram\",\"n\":{},\"word\":\"Z64\",\"ops\":{},\"seed\":{},\"randomness\":\"{}\",\"dealer\":\"{}\",\"mix\":\"{}\",\
             \"preprocess_first\":{},\"chunk\":{},\"verified\":{},\
             \"preprocessing_ms_per_op\":{:.4},\"online_ms_per_op\":{:.4},\
             \"preprocessing_bytes_per_op\":{:.1},\"preprocessing_rounds\":{},{},\"parties\":[{}]}}",
            c.n,
            c.ops,
            c.seed,
            c.entropy,
            SYNTHETIC_DEALER,
            c.mix.name(),
            c.preprocess_first,
            c.chunk,
            self.verified,
            ms(self.preprocessing_per_op()),
            ms(self.online_total_per_op()),
            self.preprocessing_bytes_per_op(),
            prep_rounds,
            per_kind.join(","),
            parties.join(",")
        )
    }

    /// The JSON member of the per-operation figures of `kind` (`null` if none ran).
    fn kind_json(&self, k: Kind) -> String {
        match (self.online_per_op(k), self.online_comm_per_op(k)) {
            (Some(t), Some((b, m, r))) => format!(
                "\"{}\":{{\"count\":{},\"ms_per_op\":{:.4},\"bytes_per_op\":{:.1},\
                 \"messages_per_op\":{:.2},\"rounds_per_op\":{:.2}}}",
                k.phase(),
                self.parties.first().map_or(0, |p| p.counts[k.index()]),
                ms(t),
                b,
                m,
                r
            ),
            _ => format!("\"{}\":null", k.phase()),
        }
    }
}

impl PartyReport {
    /// A JSON object with this party's times and communication.
    fn to_json(&self) -> String {
        let online: Vec<String> = Kind::ALL
            .iter()
            .map(|&k| {
                format!(
                    "\"{}\":{{\"ms\":{:.3},\"count\":{},\"comm\":{}}}",
                    k.phase(),
                    ms(self.online[k.index()]),
                    self.counts[k.index()],
                    comm_json(&self.online_comm[k.index()])
                )
            })
            .collect();
        format!(
            "{{\"party\":{},\"setup_ms\":{:.3},\"preprocessing_ms\":{:.3},\
             \"preprocessing_cpu_ms\":{:.3},\"online_cpu_ms\":[{:.3},{:.3},{:.3}],\
             \"init_ms\":{:.3},\"online\":{{{}}},\"preprocessing\":{},\"init\":{},\
             \"setup\":{}}}",
            self.party.index(),
            ms(self.setup),
            ms(self.preprocessing),
            ms(self.preprocessing_cpu),
            ms(self.online_cpu[0]),
            ms(self.online_cpu[1]),
            ms(self.online_cpu[2]),
            ms(self.init),
            online.join(","),
            comm_json(&self.preprocessing_comm),
            comm_json(&self.init_comm),
            comm_json(&self.setup_comm)
        )
    }
}

/// Milliseconds, for the JSON reports.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A JSON object with the figures of `c`.
fn comm_json(c: &Comm) -> String {
    format!(
        "{{\"bytes\":{},\"overhead\":{},\"messages\":{},\"rounds\":{}}}",
        c.bytes, c.overhead, c.messages, c.rounds
    )
}

/// What the reports say of the input shares (the parties' own randomness is
/// [`BenchConfig::entropy`]).
pub use doram_core::SYNTHETIC_DEALER;

fn dealer(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// The plaintext workload: initial memory and (kind, addr, value) per operation.
struct Workload {
    memory: Vec<Z64>,
    ops: Vec<(Kind, u64, Z64)>,
}

fn workload(cfg: &BenchConfig) -> Workload {
    let mut rng = dealer(cfg.seed, 0);
    let memory = (0..cfg.n).map(|_| Z64(rng.next_u64())).collect();
    let ops = (0..cfg.ops)
        .map(|_| {
            let kind = match cfg.mix {
                OpMix::Reads => Kind::Read,
                OpMix::Updates => Kind::Update,
                OpMix::Writes => Kind::Write,
                OpMix::Random => Kind::ALL[(rng.next_u32() % 3) as usize],
            };
            // Test inputs only: the modulo bias of a 64-bit draw is irrelevant here.
            let addr = rng.next_u64() % cfg.n as u64;
            (kind, addr, Z64(rng.next_u64()))
        })
        .collect();
    Workload { memory, ops }
}

/// This party's shares from the synthetic dealer: of the memory, and of each operation's
/// address and value. The dealer draws all three shares of every word and keeps party `i`'s.
fn deal(w: &Workload, seed: u64, i: usize) -> (Vec<Additive<Z64>>, Vec<OpShares>) {
    let mut rng = dealer(seed, 1);
    let memory = w
        .memory
        .iter()
        .map(|&x| deal_additive(x, &mut rng)[i])
        .collect();
    let shares = w
        .ops
        .iter()
        .map(|&(_, addr, value)| {
            (
                deal_additive(Z64(addr), &mut rng)[i],
                deal_additive(value, &mut rng)[i],
            )
        })
        .collect();
    (memory, shares)
}

/// The shares of an operation's address and value.
type OpShares = (Additive<Z64>, Additive<Z64>);

/// Sets Duoram up on `session` (phase `setup`), with no frame allowed beyond the protocol's
/// largest message (or the verification's engine frames).
fn setup_duoram(session: Session, cfg: &BenchConfig) -> Result<Duoram<Z64>, DuoramError> {
    let me = session.me();
    let mut o = Duoram::<Z64>::setup(session, cfg.n, cfg.entropy.party_seed(me, "duoram"))?;
    let opening = if cfg.verify {
        doram_mpc::MAX_FRAME_BYTES
    } else {
        0
    };
    let limit = Duoram::<Z64>::max_message_bytes(cfg.n).max(opening);
    o.session_mut()
        .limit_frame_bytes(u32::try_from(limit).unwrap_or(u32::MAX));
    Ok(o)
}

/// The CPU time this thread has used so far, zero where not available.
fn cpu() -> Duration {
    thread_cpu_time().unwrap_or_default()
}

/// The times of the preprocessing and of the operations, summed over a run.
#[derive(Default)]
struct Clocks {
    preprocessing: Duration,
    preprocessing_cpu: Duration,
    online: [Duration; 3],
    online_cpu: [Duration; 3],
    counts: [usize; 3],
}

impl Clocks {
    /// Preprocesses `k` operations (phase `preprocess`), timed.
    fn preprocess(&mut self, o: &mut Duoram<Z64>, k: usize) -> Result<(), DuoramError> {
        o.session_mut().set_phase("preprocess");
        // The CPU clock is read outside the timed interval.
        let c = cpu();
        let t = Instant::now();
        o.preprocess(k)?;
        self.preprocessing += t.elapsed();
        self.preprocessing_cpu += cpu().saturating_sub(c);
        Ok(())
    }

    /// Runs one operation of `kind` (phase: the kind), timed; its output share (zero for an
    /// UPDATE).
    fn operate(
        &mut self,
        o: &mut Duoram<Z64>,
        kind: Kind,
        (addr, value): OpShares,
    ) -> Result<Additive<Z64>, DuoramError> {
        o.session_mut().set_phase(kind.phase());
        let c = cpu();
        let t = Instant::now();
        let out = match kind {
            Kind::Read => o.read(addr)?,
            Kind::Update => {
                o.update(addr, value)?;
                Additive::ZERO
            }
            Kind::Write => o.write(addr, value)?,
        };
        self.online[kind.index()] += t.elapsed();
        self.online_cpu[kind.index()] += cpu().saturating_sub(c);
        self.counts[kind.index()] += 1;
        Ok(out)
    }
}

/// Runs the operations of `w` in order, each after its preprocessing: just in time, or a chunk
/// of `cfg.chunk` operations up front; the outputs if `cfg.verify`.
fn run_ops(
    o: &mut Duoram<Z64>,
    cfg: &BenchConfig,
    w: &Workload,
    shares: &[OpShares],
    clocks: &mut Clocks,
) -> Result<Vec<Additive<Z64>>, DuoramError> {
    let chunk = if cfg.chunk == 0 {
        cfg.ops.max(1)
    } else {
        cfg.chunk
    };
    let mut outputs = Vec::with_capacity(if cfg.verify { cfg.ops } else { 0 });
    for (j, (&(kind, _, _), &op)) in w.ops.iter().zip(shares).enumerate() {
        if cfg.preprocess_first {
            if j % chunk == 0 {
                clocks.preprocess(o, chunk.min(cfg.ops - j))?;
            }
        } else {
            clocks.preprocess(o, 1)?;
        }
        let out = clocks.operate(o, kind, op)?;
        if cfg.verify {
            outputs.push(out);
        }
    }
    Ok(outputs)
}

/// Runs this party's side of the benchmark `cfg` on `session` (three connected parties, each
/// calling this with the same `cfg`).
///
/// # Errors
/// A peer fault; [`DuoramError::VerificationFailed`] if `cfg.verify` and a result differs
/// from the plaintext mirror.
pub fn run_party(mut session: Session, cfg: &BenchConfig) -> Result<PartyReport, DuoramError> {
    let me = session.me();
    let w = workload(cfg);
    let (memory, shares) = deal(&w, cfg.seed, me.index());

    session.set_phase("setup");
    let t = Instant::now();
    let mut o = setup_duoram(session, cfg)?;
    let setup = t.elapsed();
    o.session_mut().set_phase("init");
    let t = Instant::now();
    o.init(&memory)?;
    let init = t.elapsed();
    drop(memory);
    let mut clocks = Clocks::default();
    let outputs = run_ops(&mut o, cfg, &w, &shares, &mut clocks)?;
    let stats = o.session().stats().clone();
    if cfg.verify {
        verify(&mut o, &w, &outputs)?;
    }
    Ok(PartyReport {
        party: me,
        setup,
        preprocessing: clocks.preprocessing,
        init,
        online: clocks.online,
        counts: clocks.counts,
        preprocessing_cpu: clocks.preprocessing_cpu,
        online_cpu: clocks.online_cpu,
        preprocessing_comm: stats.comm(["preprocess"]),
        init_comm: stats.comm(["init"]),
        setup_comm: stats.comm(["setup"]),
        online_comm: Kind::ALL.map(|k| stats.comm([k.phase()])),
    })
}

/// Opens the outputs and the final memory to every party (phase `verify`, with the generic
/// runner's [`open_to_all`](doram_oram::bench::open_to_all)) and compares them with a
/// [`PlainMemory`] run of the workload; an UPDATE, which only Duoram has, is a read and a
/// write of the sum there.
fn verify(o: &mut Duoram<Z64>, w: &Workload, outputs: &[Additive<Z64>]) -> Result<(), DuoramError> {
    let final_memory = o.memory()?;
    let session = o.session_mut();
    session.set_phase("verify");
    let mut mine: Vec<Z64> = Additive::shares(outputs);
    mine.extend(Additive::shares(&final_memory));
    let total = doram_oram::bench::open_to_all(session, mine).map_err(|e| match e {
        doram_mpc::MpcError::Net(e) => DuoramError::Net(e),
        doram_mpc::MpcError::Peer(f) => DuoramError::Peer(f),
        _ => DuoramError::Local("the verification's opening"),
    })?;
    let mut plain = PlainMemory::new(w.memory.clone());
    // The workload's addresses lie below n by construction.
    let in_range = |_| DuoramError::Local("a workload address out of range");
    for (t, &(kind, addr, value)) in w.ops.iter().enumerate() {
        let old = plain.read(addr).map_err(in_range)?;
        if kind != Kind::Update && total[t] != old {
            return Err(DuoramError::VerificationFailed {
                what: "an operation's result",
                index: t,
            });
        }
        match kind {
            Kind::Read => {}
            Kind::Update => {
                plain.write(addr, old + value).map_err(in_range)?;
            }
            Kind::Write => {
                plain.write(addr, value).map_err(in_range)?;
            }
        }
    }
    let opened = &total[w.ops.len()..];
    if let Some(j) = (0..plain.len()).find(|&j| opened[j] != plain.as_slice()[j]) {
        return Err(DuoramError::VerificationFailed {
            what: "the final memory",
            index: j,
        });
    }
    Ok(())
}

/// Runs the benchmark `cfg` with the three parties as threads of this process over an
/// in-process mesh (with `shaping` on every link).
///
/// # Errors
/// The first party's error, if any party fails.
pub fn run_local(cfg: &BenchConfig, shaping: Shaping) -> Result<BenchOutcome, DuoramError> {
    let sessions = LocalMesh::new(3)
        .timeout(cfg.timeout)
        .shaping(shaping)
        .build();
    let parties = run_parties_ok(
        sessions,
        "duoram",
        |session| run_party(session, cfg),
        || DuoramError::Local("a party thread panicked or could not start"),
    )?;
    Ok(BenchOutcome {
        config: *cfg,
        parties,
        verified: cfg.verify,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_runs() {
        for (n, mix, first, chunk) in [
            (100, OpMix::Random, false, 0),
            (64, OpMix::Writes, true, 3),
            (33, OpMix::Updates, true, 0),
            (1, OpMix::Reads, false, 0),
        ] {
            let mut cfg = BenchConfig::new(n, 10);
            cfg.mix = mix;
            cfg.verify = true;
            cfg.preprocess_first = first;
            cfg.chunk = chunk;
            cfg.seed = 9;
            let out = run_local(&cfg, Shaping::NONE).unwrap();
            let json = out.to_json();
            assert!(json.starts_with("{\"protocol\":\"duoram\""), "{json}");
            assert!(out.parties.iter().all(|p| p.preprocessing_comm.bytes > 0));
        }
    }
    /// Verification is a real check: a bit flipped in the last frame P1 sends P2 — its shares
    /// of the results and the final memory, opened for the check — makes P2's verification
    /// fail at the first result.
    #[test]
    fn a_corrupted_opening_fails_verification() {
        let mut cfg = BenchConfig::new(50, 6);
        cfg.mix = OpMix::Reads;
        cfg.verify = true;
        cfg.seed = 7;
        let [clean, results] =
            doram_oram::testkit::corrupt_last_frame(PartyId::P1, PartyId::P2, |s| {
                run_party(s, &cfg)
            });
        for r in clean {
            assert!(matches!(r, Ok(Ok(_))), "{r:?}");
        }
        assert!(
            matches!(
                &results[2],
                Ok(Err(DuoramError::VerificationFailed {
                    what: "an operation's result",
                    index: 0
                }))
            ),
            "{:?}",
            results[2]
        );
    }
}
