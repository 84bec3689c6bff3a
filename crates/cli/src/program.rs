//! `doram bench program`: each RAM program on random instances of given sizes, with time,
//! bytes and rounds per party split into DORAM accesses and the CPU step (and setup, input,
//! preprocessing, Init, output), every output checked against the plaintext program; with
//! `--crossover`, the DORAM binary search against a linear scan in the same engine.

use crate::randomness::Randomness;
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use doram::backend::bench_program;
use doram_programs::bench::{BenchConfig, BenchReport, Program};
use doram_programs::machine::Part;
use doram_programs::{Machine2, Machine2Duoram, Machine2Tree, Roles};
use serde_json::{Value, json};

use crate::report::{human_bytes, print_json};
use crate::run::Backend;

/// Programs, as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Which {
    /// Binary search on a DORAM (size n).
    BinarySearch,
    /// The same search as a linear scan in the engine, no DORAM (size n).
    LinearSearch,
    /// BFS (size V, 2V random edges).
    Bfs,
    /// Dijkstra (size V, 4V random weighted edges).
    Dijkstra,
    /// Gale–Shapley stable matching (size k).
    StableMatching,
}

impl From<Which> for Program {
    fn from(w: Which) -> Program {
        match w {
            Which::BinarySearch => Program::BinarySearch,
            Which::LinearSearch => Program::LinearSearch,
            Which::Bfs => Program::Bfs,
            Which::Dijkstra => Program::Dijkstra,
            Which::StableMatching => Program::Matching,
        }
    }
}

/// Arguments of `doram bench program`.
#[derive(Debug, Args)]
pub struct BenchProgramArgs {
    /// The program.
    #[arg(long, value_enum, default_value_t = Which::BinarySearch)]
    pub program: Which,
    /// Instance sizes (n, V or k), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub sizes: Vec<usize>,
    /// The DORAM backend.
    #[arg(long, value_enum, default_value_t = Backend::Duoram)]
    pub backend: Backend,
    /// Binary search only: also run the linear scan in the engine at each size and report
    /// where the DORAM version overtakes it.
    #[arg(long)]
    pub crossover: bool,
    /// Seed of the random instances (public benchmark data, not secret).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where each party's own secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
}

fn secs(r: &BenchReport, part: Part) -> f64 {
    r.max_part(part).time.as_secs_f64()
}

fn line(r: &BenchReport) -> String {
    let oram = r.max_part(Part::Oram);
    let cpu = r.max_part(Part::Cpu);
    let total_bytes = r
        .parties
        .iter()
        .map(|p| p.meter.total().bytes_sent)
        .max()
        .unwrap_or(0);
    let rounds = r
        .parties
        .iter()
        .map(|p| p.meter.total().rounds)
        .max()
        .unwrap_or(0);
    format!(
        "{:>9} {:>9.3} s {:>9.3} s {:>9.3} s {:>11} {:>11} {:>11} {:>7} {:>8}{}",
        r.sizes.first().map_or(0, |s| s.1),
        r.wall.as_secs_f64(),
        secs(r, Part::Oram),
        secs(r, Part::Cpu),
        human_bytes(oram.bytes_sent),
        human_bytes(cpu.bytes_sent),
        human_bytes(total_bytes),
        rounds,
        oram.accesses,
        if r.verified { "" } else { "  NOT VERIFIED" }
    )
}

/// Runs `doram bench program`.
pub fn run(a: &BenchProgramArgs, json: bool, quiet: bool) -> Result<()> {
    if a.sizes.is_empty() {
        bail!("--sizes: give at least one size");
    }
    if a.crossover && a.program != Which::BinarySearch {
        bail!(
            "--crossover compares the binary search with a linear scan: use --program binary-search"
        );
    }
    let program = Program::from(a.program);
    let mut reports = Vec::new();
    let mut points = Vec::new();
    for &size in &a.sizes {
        if !quiet {
            eprintln!("running {} at size {size}…", program.name());
        }
        let mut c = BenchConfig::new(program, size);
        c.seed = a.seed;
        c.entropy = a.randomness.entropy();
        let bench = |c: &BenchConfig| match a.backend.kind() {
            Some(kind) => bench_program(kind, c),
            None if a.backend == crate::run::Backend::Duoram2p => {
                doram_programs::bench::run_on::<Machine2Duoram>(c)
            }
            None if a.backend == crate::run::Backend::Gkk12Tree => {
                doram_programs::bench::run_on::<Machine2Tree>(c)
            }
            None => doram_programs::bench::run_on::<Machine2>(c),
        };
        if a.backend.kind().is_none() {
            c.roles = Roles::two_party();
        }
        let r = bench(&c)?;
        if !r.verified {
            bail!(
                "{} at size {size}: the output differs from the plaintext program",
                program.name()
            );
        }
        if a.crossover {
            c.program = Program::LinearSearch;
            let l = bench(&c)?;
            if !l.verified {
                bail!(
                    "linear search at size {size}: the output differs from the plaintext program"
                );
            }
            points.push((size, r.wall.as_secs_f64(), l.wall.as_secs_f64()));
            reports.push(l);
        }
        reports.push(r);
    }
    // The crossover: the smallest size from which the DORAM search is faster at every larger
    // size measured.
    let mut crossover = None;
    for &(n, oram, linear) in points.iter().rev() {
        if oram >= linear {
            break;
        }
        crossover = Some(n);
    }
    if json {
        let runs: Vec<Value> = reports.iter().map(BenchReport::to_json).collect();
        let mut out = json!({ "runs": runs });
        if a.crossover {
            out["crossover"] = json!({
                "points": points.iter().map(|&(n, o, l)| json!({"n": n, "oram_wall_s": o, "linear_wall_s": l})).collect::<Vec<_>>(),
                "oram_faster_from": crossover,
            });
        }
        print_json(&out)?;
        return Ok(());
    }
    println!(
        "{:>9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7} {:>8}",
        "size",
        "wall",
        "accesses",
        "CPU step",
        "acc. bytes",
        "CPU bytes",
        "all bytes",
        "rounds",
        "accesses"
    );
    for r in &reports {
        let name = r.to_json()["program"].as_str().unwrap_or("?").to_string();
        println!(
            "{}  {name} on {}",
            line(r),
            r.to_json()["backend"].as_str().unwrap_or("?")
        );
    }
    println!("(times and bytes: the slowest / most-sending party; bytes are sent payload)");
    println!(
        "(randomness: {}; instances generated from the public --seed {})",
        a.randomness.label(),
        a.seed
    );
    if a.crossover {
        match crossover {
            Some(n) => {
                println!("the DORAM binary search is faster than the linear scan from n = {n} on")
            }
            None => println!("the linear scan was faster or equal at the largest size measured"),
        }
    }
    Ok(())
}
