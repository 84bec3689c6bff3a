//! `doram-fuzz`: runs the fuzz harnesses for a while and saves what fails.
//!
//! ```text
//! doram-fuzz [--seconds S] [--execs N] [--seed N] [--out DIR] [TARGET ...]
//! ```
//! Without targets, runs every target in turn with the same budget each. Findings are written
//! to `DIR/<target>/<hash>` (default `crates/fuzz/regressions`), which the smoke test replays.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use doram_fuzz::{Budget, fuzz, target, targets};

/// Fuzz doram's decoders of peer, client and file input.
#[derive(Debug, Parser)]
struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Executions per target at most.
    #[arg(long, default_value_t = u64::MAX)]
    execs: u64,
    /// Seed of the mutations (default: random).
    #[arg(long)]
    seed: Option<u64>,
    /// Where to write failing inputs.
    #[arg(long, default_value = "crates/fuzz/regressions")]
    out: PathBuf,
    /// Targets to run (default: all); `--list` prints them.
    targets: Vec<String>,
    /// Print the targets and exit.
    #[arg(long)]
    list: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.list {
        for t in targets::ALL {
            println!("{:<20} {}", t.name, t.what);
        }
        return Ok(());
    }
    let chosen: Vec<_> = if args.targets.is_empty() {
        targets::ALL.iter().collect()
    } else {
        args.targets
            .iter()
            .map(|n| target(n).with_context(|| format!("no target {n:?} (see --list)")))
            .collect::<Result<_>>()?
    };
    let seed = args.seed.unwrap_or_else(rand::random);
    println!("seed {seed}");
    let budget = Budget {
        execs: args.execs,
        time: Duration::from_secs(args.seconds),
    };
    let mut failed = 0;
    for t in chosen {
        // Findings are reported below; the default hook would print every caught panic.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = fuzz(t, budget, seed);
        std::panic::set_hook(hook);
        println!(
            "{:<20} {:>10} execs in {:>7.1} s ({:>8.0}/s), {} findings",
            r.target,
            r.execs,
            r.elapsed.as_secs_f64(),
            r.execs as f64 / r.elapsed.as_secs_f64().max(1e-9),
            r.findings.len()
        );
        for f in &r.findings {
            let dir = args.out.join(r.target);
            std::fs::create_dir_all(&dir)?;
            let name = format!("{:016x}", fnv1a(&f.input));
            std::fs::write(dir.join(&name), &f.input)?;
            println!("  {}: {}", dir.join(&name).display(), f.message);
            let hex: String = f.input.iter().map(|b| format!("{b:02x}")).collect();
            println!("  input (hex): {hex}");
            failed += 1;
        }
    }
    if failed > 0 {
        bail!("{failed} findings");
    }
    Ok(())
}

/// A short name for an input (64-bit FNV-1a).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
