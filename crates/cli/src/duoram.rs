//! `doram bench duoram` and the `duoram` job of `doram party`: the 3P-Duoram benchmark.
//!
//! The options and the report follow `doram bench ramen` (see [`crate::ramen`]): the same
//! `amortized_ms`, `online_ms` and `preprocessing_ms` per operation and per-party figures, plus
//! online time, bytes, messages and rounds per READ, UPDATE and WRITE, since Duoram reveals the
//! operation type and their costs differ.

use crate::randomness::Randomness;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use doram_duoram::{BenchConfig, Kind, MAX_LOG_N, OpMix, PartyReport, run_local, run_party};
use doram_net::{Session, Shaping};
use serde::{Deserialize, Serialize};
use std::time::Duration;

use crate::report::{OramParty, OramSummary, human_bytes, peak_memory_bytes, print_json};

/// Operation mixes, as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mix {
    /// Only READs (Duoram Protocol 1).
    Reads,
    /// Only UPDATEs (Protocol 2: add a secret delta).
    Updates,
    /// Only WRITEs (a READ, then an UPDATE by the difference).
    Writes,
    /// Each operation a READ, UPDATE or WRITE uniformly at random.
    Random,
}

impl From<Mix> for OpMix {
    fn from(m: Mix) -> OpMix {
        match m {
            Mix::Reads => OpMix::Reads,
            Mix::Updates => OpMix::Updates,
            Mix::Writes => OpMix::Writes,
            Mix::Random => OpMix::Random,
        }
    }
}

/// Options shared by `doram bench duoram` and `doram party … duoram`.
#[derive(Debug, Clone, Args)]
pub struct DuoramArgs {
    /// Memory of 2^N words of Z_2^64.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=30))]
    pub log_n: u32,
    /// Memory of exactly this many words (any n ≥ 1); overrides --log-n.
    #[arg(long)]
    pub n: Option<usize>,
    /// Number of operations.
    #[arg(long, default_value_t = 128)]
    pub accesses: usize,
    /// Which operations.
    #[arg(long, value_enum, default_value_t = Mix::Random)]
    pub mix: Mix,
    /// Preprocess every operation before the online phase instead of just before each
    /// operation (either way preprocessing is timed and counted separately).
    #[arg(long)]
    pub preprocess: bool,
    /// With --preprocess: operations per preprocessing batch, bounding the memory held (each
    /// preprocessed operation holds a few n-word vectors); 0 = all at once.
    #[arg(long, default_value_t = 16)]
    pub chunk: usize,
    /// Threads per party (3P-Duoram runs one thread per party; only 1 is accepted).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Open and check every result and the final memory against a plaintext mirror.
    #[arg(long)]
    pub verify: bool,
    /// Public seed of the synthetic workload (random memory and operations) and of the
    /// synthetic dealer that shares it: benchmark data, not secret.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where each party's own secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
    /// The workload Ramen's comparison measured: only WRITEs, preprocessed up front.
    #[arg(long)]
    pub reference_workload: bool,
}

impl DuoramArgs {
    fn config(&self) -> Result<BenchConfig> {
        if self.threads != 1 {
            bail!(
                "--threads: 3P-Duoram runs one thread per party (got {})",
                self.threads
            );
        }
        if self.accesses == 0 {
            bail!("--accesses must be at least 1");
        }
        let n = match self.n {
            Some(n) => n,
            None => {
                if self.log_n as usize > MAX_LOG_N {
                    bail!("--log-n: at most {MAX_LOG_N}");
                }
                1usize << self.log_n
            }
        };
        if n == 0 || n > 1usize << MAX_LOG_N {
            bail!("--n must lie in 1..=2^{MAX_LOG_N}");
        }
        let mut cfg = BenchConfig::new(n, self.accesses);
        cfg.seed = self.seed;
        cfg.entropy = self.randomness.entropy();
        cfg.preprocess_first = self.preprocess || self.reference_workload;
        cfg.chunk = self.chunk;
        cfg.verify = self.verify;
        cfg.mix = if self.reference_workload {
            OpMix::Writes
        } else {
            self.mix.into()
        };
        Ok(cfg)
    }
}

/// Arguments of `doram bench duoram`.
#[derive(Debug, Args)]
pub struct BenchDuoramArgs {
    #[command(flatten)]
    pub run: DuoramArgs,
    /// Network to emulate on every link: `none`, `lan` (1 ms RTT, 10 Gbit/s), `wan` (30 ms one
    /// way, 100 Mbit/s) or `latency=MS,bandwidth=MBIT`.
    #[arg(long, default_value = "none", value_parser = crate::netarg::parse_net)]
    pub net: Shaping,
    /// Run the parties as three `doram party` processes over mutually authenticated TLS
    /// instead of threads of this process over in-process channels.
    #[arg(long)]
    pub processes: bool,
}

/// Online figures of one operation kind, per operation.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct KindFigures {
    /// Operations of this kind.
    pub count: usize,
    /// Online time (this party, or the slowest party in the run's report), ms per operation.
    pub ms: f64,
    /// Payload bytes sent per operation (this party, or all parties together).
    pub bytes: f64,
    /// Messages sent per operation (this party, or all parties together).
    pub messages: f64,
    /// Rounds per operation (this party, or the most of any party).
    pub rounds: f64,
}

/// One party's figures: the shared ones and the online figures per operation kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DuoramParty {
    /// Bytes, messages, rounds and times (Init apart).
    #[serde(flatten)]
    pub figures: OramParty,
    /// Online figures per READ, UPDATE and WRITE.
    pub read: KindFigures,
    /// See `read`.
    pub update: KindFigures,
    /// See `read`.
    pub write: KindFigures,
}

impl DuoramParty {
    fn from_report(r: &PartyReport) -> DuoramParty {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let online = r.online_comm.iter().fold((0, 0, 0), |acc, c| {
            (acc.0 + c.bytes, acc.1 + c.messages, acc.2 + c.rounds)
        });
        // Positions in the runner's per-kind arrays (`Kind::ALL` order).
        let kind = |k: Kind| {
            let i = match k {
                Kind::Read => 0,
                Kind::Update => 1,
                Kind::Write => 2,
            };
            let c = r.counts[i].max(1) as f64;
            KindFigures {
                count: r.counts[i],
                ms: ms(r.online[i]) / c,
                bytes: r.online_comm[i].bytes as f64 / c,
                messages: r.online_comm[i].messages as f64 / c,
                rounds: r.online_comm[i].rounds as f64 / c,
            }
        };
        let online_time: Duration = r.online.iter().sum();
        DuoramParty {
            figures: OramParty {
                party: r.party.to_string(),
                // Init (the whole memory, once) is apart from the per-operation figures.
                bytes_sent: r.preprocessing_comm.bytes + online.0,
                online_bytes_sent: online.0,
                messages_sent: r.preprocessing_comm.messages + online.1,
                rounds: r.preprocessing_comm.rounds + online.2,
                online_rounds: online.2,
                elapsed_ms: ms(r.preprocessing + online_time),
                init_bytes_sent: r.init_comm.bytes,
                init_ms: ms(r.init),
                online_ms: ms(online_time),
                preprocessing_ms: ms(r.preprocessing),
                peak_memory_bytes: peak_memory_bytes(),
            },
            read: kind(Kind::Read),
            update: kind(Kind::Update),
            write: kind(Kind::Write),
        }
    }
}

/// The `doram bench duoram` report.
#[derive(Debug, Serialize)]
pub struct DuoramReport {
    /// Always `duoram`.
    pub protocol: &'static str,
    /// Memory size (words of Z_2^64).
    pub n: usize,
    /// Operations run.
    pub accesses: usize,
    /// `reads`, `updates`, `writes` or `random`.
    pub mix: &'static str,
    /// Threads per party.
    pub threads: usize,
    /// Whether preprocessing ran before the online phase.
    pub preprocess_first: bool,
    /// Whether every result was checked against the plaintext mirror.
    pub verified: bool,
    /// Times and bytes per operation (preprocessing and online; Init apart).
    #[serde(flatten)]
    pub summary: OramSummary,
    /// Per READ: slowest party's ms, bytes and messages of all parties, most rounds.
    pub read: KindFigures,
    /// Per UPDATE, as `read`.
    pub update: KindFigures,
    /// Per WRITE, as `read`.
    pub write: KindFigures,
    /// Per party.
    pub parties: Vec<DuoramParty>,
}

fn report(
    cfg: &BenchConfig,
    parties: Vec<DuoramParty>,
    verified: bool,
    shaping: Shaping,
    processes: bool,
) -> DuoramReport {
    let kind = |f: fn(&DuoramParty) -> &KindFigures| KindFigures {
        count: parties.first().map_or(0, |p| f(p).count),
        ms: parties.iter().map(|p| f(p).ms).fold(0.0, f64::max),
        bytes: parties.iter().map(|p| f(p).bytes).sum(),
        messages: parties.iter().map(|p| f(p).messages).sum(),
        rounds: parties.iter().map(|p| f(p).rounds).fold(0.0, f64::max),
    };
    DuoramReport {
        protocol: "duoram",
        n: cfg.n,
        accesses: cfg.ops,
        mix: cfg.mix.name(),
        threads: 1,
        preprocess_first: cfg.preprocess_first,
        verified,
        summary: OramSummary::of(
            parties.iter().map(|p| &p.figures),
            cfg.ops,
            shaping,
            processes,
            cfg.entropy,
        ),
        read: kind(|p| &p.read),
        update: kind(|p| &p.update),
        write: kind(|p| &p.write),
        parties,
    }
}

/// Runs `doram bench duoram`.
pub fn bench(a: &BenchDuoramArgs, json: bool) -> Result<()> {
    let cfg = a.run.config()?;
    let r = if a.processes {
        let parties = run_processes(&a.run, a.net)?;
        report(&cfg, parties, cfg.verify, a.net, true)
    } else {
        let out = run_local(&cfg, a.net)?;
        let parties = out.parties.iter().map(DuoramParty::from_report).collect();
        report(&cfg, parties, out.verified, a.net, false)
    };
    if json {
        print_json(&r)?;
        return Ok(());
    }
    println!(
        "3P-Duoram, n = {}, {} operations ({}), {}{}:",
        r.n,
        r.accesses,
        r.mix,
        r.summary.parties_as,
        if r.verified {
            ", every result verified"
        } else {
            ""
        }
    );
    r.summary.print("op");
    for (name, k) in [
        ("READ", &r.read),
        ("UPDATE", &r.update),
        ("WRITE", &r.write),
    ] {
        if k.count > 0 {
            println!(
                "  {name:<6} ×{:<5} {:.3} ms online, {:.0} B in {:.1} messages (all parties), {:.1} rounds",
                k.count, k.ms, k.bytes, k.messages, k.rounds
            );
        }
    }
    for p in &r.parties {
        p.figures.print();
    }
    Ok(())
}

/// The `duoram` job of `doram party`: this party's side over a connected session; prints this
/// party's figures.
pub fn party_job(session: Session, a: &DuoramArgs, json: bool) -> Result<()> {
    let cfg = a.config()?;
    let me = session.me();
    let r = run_party(session, &cfg).with_context(|| format!("{me} failed"))?;
    let p = DuoramParty::from_report(&r);
    if json {
        crate::report::print_party_json(&p, cfg.entropy)?;
    } else {
        let f = &p.figures;
        println!(
            "{me}: {:.3} ms/op amortized ({:.3} online), sent {} in {} messages, {} rounds \
             (randomness: {}; inputs: {})",
            f.elapsed_ms / cfg.ops.max(1) as f64,
            f.online_ms / cfg.ops.max(1) as f64,
            human_bytes(f.bytes_sent),
            f.messages_sent,
            f.rounds,
            cfg.entropy,
            doram_core::SYNTHETIC_DEALER
        );
    }
    Ok(())
}

fn run_processes(a: &DuoramArgs, shaping: Shaping) -> Result<Vec<DuoramParty>> {
    let mut args = vec![
        "--log-n".to_string(),
        a.log_n.to_string(),
        "--seed".into(),
        a.seed.to_string(),
        "--accesses".into(),
        a.accesses.to_string(),
        "--chunk".into(),
        a.chunk.to_string(),
        "--mix".into(),
        a.mix
            .to_possible_value()
            .map_or("random".into(), |v| v.get_name().to_string()),
    ];
    args.extend(a.randomness.args());
    if let Some(n) = a.n {
        args.extend(["--n".into(), n.to_string()]);
    }
    for (flag, on) in [
        ("--preprocess", a.preprocess),
        ("--verify", a.verify),
        ("--reference-workload", a.reference_workload),
    ] {
        if on {
            args.push(flag.into());
        }
    }
    crate::processes::run_parties("duoram", &args, shaping)
}
