//! `cargo run --release -p doram-ramen --example bench -- <log2 n> [accesses] [threads] [--prep]`:
//! three parties in one process, one epoch of writes on a zero memory by default, through the
//! bench runner of `doram-oram`; prints the per-access figures.

use doram_net::Shaping;
use doram_oram::bench::{BenchConfig, run_local};
use doram_ramen::{Params, Ramen};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log_n: u32 = args.first().map_or(Ok(10), |a| a.parse())?;
    let params = Params::new(1 << log_n)?;
    let accesses = args.get(1).map_or(Ok(params.epoch()), |a| a.parse())?;
    let mut cfg = BenchConfig::new(params.n(), accesses);
    cfg.threads = args.get(2).map_or(Ok(1), |a| a.parse())?;
    cfg.preprocess_first = args.iter().any(|a| a == "--prep");
    cfg.verify = args.iter().any(|a| a == "--verify");
    cfg.zero_memory = true;
    cfg.writes_only = true;
    let r = run_local::<Ramen>(&cfg, Shaping::NONE)?;
    let a = &r.per_access;
    println!(
        "n = 2^{log_n}: {:.3} ms/access amortized ({:.3} online, {:.3} preprocessing), \
         {:.1} KiB/access online, {:.1} KiB/access preprocessing",
        a.amortized_ms,
        a.online.ms,
        a.preprocessing.ms,
        a.online.bytes / 1024.0,
        a.preprocessing.bytes / 1024.0,
    );
    Ok(())
}
