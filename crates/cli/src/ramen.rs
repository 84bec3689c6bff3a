//! `doram bench ramen` and the `ramen` job of `doram party`: the Ramen DORAM benchmark.
//!
//! The report uses the field names shared by every protocol's bench: `amortized_ms`,
//! `online_ms` and `preprocessing_ms` per access, and per party `bytes_sent`,
//! `messages_sent`, `rounds` and `peak_memory_bytes`.

use crate::randomness::Randomness;
use anyhow::{Context, Result, bail};
use clap::Args;
use doram_net::{Session, Shaping};
use doram_ramen::{BenchConfig, Params, PartyReport, run_local, run_party};
use serde::Serialize;
use std::time::Duration;

use crate::report::{OramParty, OramSummary, human_bytes, peak_memory_bytes, print_json};

/// Options shared by `doram bench ramen` and `doram party … ramen`.
#[derive(Debug, Clone, Args)]
pub struct RamenArgs {
    /// Memory of 2^N words (N ≥ 4).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(4..=26))]
    pub log_n: u32,
    /// Memory of exactly this many words (any n ≥ 16); overrides --log-n.
    #[arg(long)]
    pub n: Option<usize>,
    /// Number of accesses (default: one epoch, √n).
    #[arg(long)]
    pub accesses: Option<usize>,
    /// Preprocess every access before the online phase (reports online time separately).
    #[arg(long)]
    pub preprocess: bool,
    /// Threads per party for preprocessing.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Open and check every result and the final memory against a plaintext mirror.
    #[arg(long)]
    pub verify: bool,
    /// Public seed of the synthetic workload (random database and instructions) and of the
    /// synthetic dealer that shares it: benchmark data, not secret.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where each party's own secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
    /// The reference benchmark's workload: an all-zero memory and only writes.
    #[arg(long)]
    pub reference_workload: bool,
}

impl RamenArgs {
    fn config(&self) -> Result<BenchConfig> {
        if self.threads == 0 {
            bail!("--threads must be at least 1");
        }
        let n = self.n.unwrap_or(1usize << self.log_n);
        let params = Params::new(n)?.with_threads(self.threads);
        let mut cfg = BenchConfig::new(params);
        if let Some(a) = self.accesses {
            if a == 0 {
                bail!("--accesses must be at least 1");
            }
            cfg.accesses = a;
        }
        cfg.seed = self.seed;
        cfg.entropy = self.randomness.entropy();
        cfg.preprocess_first = self.preprocess;
        cfg.verify = self.verify;
        cfg.zero_memory = self.reference_workload;
        cfg.writes_only = self.reference_workload;
        Ok(cfg)
    }
}

/// Arguments of `doram bench ramen`.
#[derive(Debug, Args)]
pub struct BenchRamenArgs {
    #[command(flatten)]
    pub run: RamenArgs,
    /// Network to emulate on every link: `none`, `lan` (1 ms RTT, 10 Gbit/s), `wan` (30 ms one
    /// way, 100 Mbit/s) or `latency=MS,bandwidth=MBIT`.
    #[arg(long, default_value = "none", value_parser = crate::netarg::parse_net)]
    pub net: Shaping,
    /// Run the parties as three `doram party` processes over mutually authenticated TLS
    /// instead of threads of this process over in-process channels.
    #[arg(long)]
    pub processes: bool,
}

fn party_figures(r: &PartyReport) -> OramParty {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    OramParty {
        party: r.party.to_string(),
        bytes_sent: r.online.bytes + r.preprocessing.bytes,
        online_bytes_sent: r.online.bytes,
        messages_sent: r.online.messages + r.preprocessing.messages,
        rounds: r.online.rounds + r.preprocessing.rounds,
        online_rounds: r.online.rounds,
        elapsed_ms: ms(r.elapsed),
        online_ms: ms(r.steps.online()),
        preprocessing_ms: ms(r.steps.preprocessing()),
        peak_memory_bytes: peak_memory_bytes(),
    }
}

/// The `doram bench ramen` report.
#[derive(Debug, Serialize)]
pub struct RamenReport {
    /// Always `ramen`.
    pub protocol: &'static str,
    /// Memory size.
    pub n: usize,
    /// Stash size = accesses per epoch.
    pub stash: usize,
    /// Accesses run.
    pub accesses: usize,
    /// Threads per party.
    pub threads: usize,
    /// Whether preprocessing ran before the online phase.
    pub preprocess_first: bool,
    /// Whether every result was checked against the plaintext mirror.
    pub verified: bool,
    /// Times and bytes per access (amortized time includes preprocessing and refreshes).
    #[serde(flatten)]
    pub summary: OramSummary,
    /// Per party.
    pub parties: Vec<OramParty>,
}

fn report(
    cfg: &BenchConfig,
    parties: Vec<OramParty>,
    verified: bool,
    shaping: Shaping,
    processes: bool,
) -> RamenReport {
    RamenReport {
        protocol: "ramen",
        n: cfg.params.n(),
        stash: cfg.params.stash(),
        accesses: cfg.accesses,
        threads: cfg.params.threads(),
        preprocess_first: cfg.preprocess_first,
        verified,
        summary: OramSummary::of(
            parties.iter(),
            cfg.accesses,
            shaping,
            processes,
            cfg.entropy,
        ),
        parties,
    }
}

/// Runs `doram bench ramen`.
pub fn bench(a: &BenchRamenArgs, json: bool) -> Result<()> {
    let cfg = a.run.config()?;
    let r = if a.processes {
        let parties = run_processes(&a.run, a.net)?;
        report(&cfg, parties, cfg.verify, a.net, true)
    } else {
        let out = run_local(&cfg, a.net)?;
        let parties = out.parties.iter().map(party_figures).collect();
        report(&cfg, parties, out.verified, a.net, false)
    };
    if json {
        print_json(&r)?;
    } else {
        println!(
            "Ramen, n = {} (stash {}), {} accesses, {} thread(s)/party, {}{}:",
            r.n,
            r.stash,
            r.accesses,
            r.threads,
            r.summary.parties_as,
            if r.verified {
                ", every result verified"
            } else {
                ""
            }
        );
        r.summary.print("access");
        for p in &r.parties {
            p.print();
        }
    }
    Ok(())
}

/// The `ramen` job of `doram party`: this party's side over a connected session; prints this
/// party's figures.
pub fn party_job(session: Session, a: &RamenArgs, json: bool) -> Result<()> {
    let cfg = a.config()?;
    let me = session.me();
    let r = run_party(session, &cfg).with_context(|| format!("{me} failed"))?;
    let p = party_figures(&r);
    if json {
        crate::report::print_party_json(&p, cfg.entropy)?;
    } else {
        println!(
            "{me}: {:.3} ms/access amortized, sent {} in {} messages, {} rounds \
             (randomness: {}; inputs: {})",
            p.elapsed_ms / cfg.accesses.max(1) as f64,
            human_bytes(p.bytes_sent),
            p.messages_sent,
            p.rounds,
            cfg.entropy,
            doram_core::SYNTHETIC_DEALER
        );
    }
    Ok(())
}

fn run_processes(a: &RamenArgs, shaping: Shaping) -> Result<Vec<OramParty>> {
    let mut args = vec![
        "--log-n".to_string(),
        a.log_n.to_string(),
        "--seed".into(),
        a.seed.to_string(),
        "--threads".into(),
        a.threads.to_string(),
    ];
    args.extend(a.randomness.args());
    if let Some(n) = a.n {
        args.extend(["--n".into(), n.to_string()]);
    }
    if let Some(k) = a.accesses {
        args.extend(["--accesses".into(), k.to_string()]);
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
    crate::processes::run_parties("ramen", &args, shaping)
}

/// One point of `doram bench compare`: Ramen at 2^`log_n` words on `net`, preprocessing first,
/// one epoch of random reads and writes (or `--accesses`).
pub fn compare_point(
    log_n: u32,
    net: &crate::report::NamedNet,
    args: &crate::report::PointArgs,
) -> Result<crate::report::Row> {
    let params = Params::new(1usize << log_n)?.with_threads(args.threads);
    let mut cfg = BenchConfig::new(params);
    cfg.accesses = args.accesses.unwrap_or(params.epoch().min(1024));
    cfg.seed = args.seed;
    cfg.entropy = args.randomness.entropy();
    cfg.preprocess_first = true;
    cfg.verify = args.verify;
    let out = run_local(&cfg, net.shaping)?;
    let parties: Vec<OramParty> = out.parties.iter().map(party_figures).collect();
    let r = report(&cfg, parties, out.verified, net.shaping, false);
    Ok(r.summary
        .compare_row("ramen", &net.name, log_n, cfg.accesses, r.verified))
}
