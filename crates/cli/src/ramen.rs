//! `doram bench ramen` and the `ramen` job of `doram party`: `doram bench oram --protocol ramen`
//! with Ramen's defaults (2^10 words, one epoch) and the reference benchmark's workload as one
//! flag. The report is the generic one ([`doram_oram::bench::BenchReport`]); Ramen's own step
//! times (setup, preprocess, refresh, stash-read, memory-read, stash-write, write-back) are in
//! each party's `steps`.

use crate::oram::{OramArgs, ProtocolArg};
use crate::randomness::Randomness;
use anyhow::Result;
use clap::Args;
use doram_net::{Session, Shaping};

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
    /// Preprocess every access before Init (either way preprocessing is timed apart).
    #[arg(long)]
    pub preprocess: bool,
    /// Threads per party for preprocessing.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Accepted for old scripts: every result is verified unless --no-verify.
    #[arg(long, hide = true)]
    pub verify: bool,
    /// Skip opening and checking the results and the final memory afterwards.
    #[arg(long, conflicts_with = "verify")]
    pub no_verify: bool,
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
    /// The same run as `doram bench oram` options.
    pub fn to_oram(&self) -> OramArgs {
        OramArgs {
            protocol: ProtocolArg::Ramen,
            word: None,
            log_n: self.log_n,
            n: self.n,
            accesses: self.accesses,
            preprocess: self.preprocess,
            threads: self.threads,
            no_verify: self.no_verify,
            seed: self.seed,
            randomness: self.randomness,
            zero_memory: self.reference_workload,
            writes_only: self.reference_workload,
            insecure_dealt_load: false,
        }
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

/// Runs `doram bench ramen`.
pub fn bench(a: &BenchRamenArgs, json: bool) -> Result<()> {
    crate::oram::bench_with(&a.run.to_oram(), a.net, a.processes, json)
}

/// The `ramen` job of `doram party`: this party's side over a connected session.
pub fn party_job(session: Session, a: &RamenArgs, json: bool) -> Result<()> {
    crate::oram::party_job(session, &a.to_oram(), json)
}
