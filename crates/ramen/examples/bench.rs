//! `cargo run --release -p doram-ramen --example bench -- <log2 n> [accesses] [threads] [--prep]`:
//! three parties in one process, one epoch by default; prints the outcome as JSON.

use doram_net::Shaping;
use doram_ramen::{BenchConfig, Params, run_local};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log_n: u32 = args.first().map_or(Ok(10), |a| a.parse())?;
    let params = Params::new(1 << log_n)?;
    let accesses = args.get(1).map_or(Ok(params.epoch()), |a| a.parse())?;
    let threads = args.get(2).map_or(Ok(1), |a| a.parse())?;
    let mut cfg = BenchConfig::new(params.with_threads(threads));
    cfg.accesses = accesses;
    cfg.preprocess_first = args.iter().any(|a| a == "--prep");
    cfg.verify = args.iter().any(|a| a == "--verify");
    cfg.zero_memory = true;
    cfg.writes_only = true;
    let out = run_local(&cfg, Shaping::NONE)?;
    eprintln!(
        "n = 2^{log_n}: {:.3} ms/access amortized ({:.3} online, {:.3} preprocessing), \
         {:.1} KiB/access online, {:.1} KiB/access preprocessing",
        out.amortized_per_access().as_secs_f64() * 1e3,
        out.online_per_access().as_secs_f64() * 1e3,
        out.preprocessing_per_access().as_secs_f64() * 1e3,
        out.online_bytes_per_access() / 1024.0,
        out.preprocessing_bytes_per_access() / 1024.0,
    );
    println!("{}", out.to_json());
    Ok(())
}
