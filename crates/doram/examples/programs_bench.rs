//! Benchmarks of the RAM programs, three parties on threads over an in-process mesh.
//!
//! ```text
//! cargo run --release -p doram --example programs_bench -- [PROGRAM SIZE BACKEND]... [--json] [--net lan|wan]
//! cargo run --release -p doram --example programs_bench -- crossover BACKEND N1 N2 ... [--json] [--net lan|wan]
//! ```
//! PROGRAM is binary-search, linear-search, bfs, dijkstra or matching; SIZE is n, V or k;
//! BACKEND is linear-scan, ramen or duoram. Without arguments, a small sweep of every program
//! on every backend. Prints one line per run (or one JSON object per line with `--json`):
//! wall time, and per part the largest party's time, bytes sent and rounds.

use doram::BackendKind;
use doram::backend::{bench_program, crossover};
use doram::net::Shaping;
use doram::programs::Part;
use doram::programs::bench::{BenchConfig, BenchReport, Program};
use doram_core::Entropy;

fn line(r: &BenchReport) -> String {
    let sizes: Vec<String> = r.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let part = |p: Part| {
        let c = r.max_part(p);
        format!(
            "{} {:.3}s {:.1}KiB {}r {}a",
            p.name(),
            c.time.as_secs_f64(),
            c.bytes_sent as f64 / 1024.0,
            c.rounds,
            c.accesses
        )
    };
    format!(
        "{:<14} {:<11} {:<16} wall {:>8.3}s ok={} | {} | {} | {} | {} | {} | {}",
        r.config.program.name(),
        r.backend,
        sizes.join(","),
        r.wall.as_secs_f64(),
        r.verified,
        part(Part::Input),
        part(Part::Bits),
        part(Part::Preprocess),
        part(Part::Init),
        part(Part::Oram),
        part(Part::Cpu),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    args.retain(|a| a != "--json");
    let mut shaping = None;
    if let Some(i) = args.iter().position(|a| a == "--net") {
        shaping = match args.get(i + 1).map(String::as_str) {
            Some("lan") => Some(Shaping::lan()),
            Some("wan") => Some(Shaping::wan()),
            _ => return Err("--net lan|wan".into()),
        };
        args.drain(i..i + 2);
    }
    let emit = |r: &BenchReport| {
        if json {
            println!("{}", r.to_json());
        } else {
            println!("{}", line(r));
        }
    };
    if args.first().map(String::as_str) == Some("crossover") {
        let backend = args
            .get(1)
            .and_then(|b| BackendKind::from_name(b))
            .ok_or("crossover BACKEND N...")?;
        let sizes: Vec<usize> = args[2..]
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()?;
        for p in crossover(&sizes, backend, shaping, 1, Entropy::Os)? {
            if json {
                println!("{}", p.to_json());
            } else {
                println!("{}", line(&p.oram));
                println!("{}", line(&p.linear));
            }
        }
        return Ok(());
    }
    let mut runs = Vec::new();
    if args.is_empty() {
        for backend in BackendKind::ALL {
            runs.push((BenchConfig::new(Program::BinarySearch, 1000), backend));
            runs.push((BenchConfig::new(Program::Bfs, 16), backend));
            runs.push((BenchConfig::new(Program::Dijkstra, 8), backend));
            runs.push((BenchConfig::new(Program::Matching, 6), backend));
        }
        runs.push((
            BenchConfig::new(Program::LinearSearch, 1000),
            BackendKind::LinearScan,
        ));
    } else {
        for chunk in args.chunks(3) {
            let [p, n, b] = chunk else {
                return Err("arguments come in triples: PROGRAM SIZE BACKEND".into());
            };
            let program = Program::from_name(p).ok_or("unknown program")?;
            let backend = BackendKind::from_name(b).ok_or("unknown backend")?;
            runs.push((BenchConfig::new(program, n.parse()?), backend));
        }
    }
    for (mut c, backend) in runs {
        c.shaping = shaping;
        emit(&bench_program(backend, &c)?);
    }
    Ok(())
}
