//! `doram`: run parties, demos and benchmarks of doram's protocols.
//!
//! The binary is thin: argument parsing and validation live here (raw clap arguments are turned
//! into validated settings before anything runs), the work lives in the library crates.

mod bench;
mod certs;
mod compare;
mod demo;
mod duoram;
mod netarg;
mod oram;
mod party;
mod pir;
mod processes;
mod program;
mod progress;
mod ramen;
mod randomness;
mod report;
mod run;
mod twopc;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Secure computation over secret-shared memory for two to four parties.
///
/// doram runs distributed ORAM protocols, distributed point functions and private lookups
/// between parties on separate hosts, connected by mutually authenticated TLS 1.3.
#[derive(Debug, Parser)]
#[command(name = "doram", version, propagate_version = true)]
struct Cli {
    /// Print one JSON document on stdout instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// No progress bars.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a CA, a certificate and key per party, and a ready config for local runs; or,
    /// with `ca`, `request` and `sign`, certificates for a deployment where each party makes
    /// its own key on its own host.
    ///
    /// Example: `doram certs --out local --parties 3` writes local/ca.pem, local/party<i>.pem,
    /// local/party<i>.key and local/doram.toml (free ports on 127.0.0.1).
    Certs(certs::CertsArgs),
    /// Run one party of a session as this process (the other parties run elsewhere).
    ///
    /// Example, three terminals: `doram party --config local/doram.toml --id 0 lookup`,
    /// `... --id 1 lookup`, `... --id 2 lookup --index 42`.
    Party(party::PartyArgs),
    /// The main job: three local parties over mutually authenticated TLS run a private lookup
    /// and print what each one sent.
    Demo(demo::DemoArgs),
    /// Three-server private information retrieval with guaranteed output: build a database,
    /// serve it, query it.
    ///
    /// Example: `doram pir query --config local/doram.toml --index 42`.
    Pir(pir::PirArgs),
    /// Run a secure RAM program (binary search, BFS, Dijkstra, stable matching) between three
    /// local parties: the data owner's input, the querier's key or source, the output only to
    /// the receiver.
    ///
    /// Example: `doram run binary-search --data sorted.csv --key 42`.
    Run(run::LocalRunArgs),
    /// Measure primitives and protocols (release builds only give meaningful figures).
    Bench(bench::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let result: Result<()> = match cli.command {
        Command::Certs(a) => certs::run(&a, cli.json),
        Command::Party(a) => party::run(&a, cli.json),
        Command::Demo(a) => demo::run(&a, cli.json, cli.quiet),
        Command::Pir(a) => pir::run(&a, cli.json),
        Command::Run(a) => run::run(&a, cli.json),
        Command::Bench(a) => bench::run(&a, cli.json, cli.quiet),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("doram: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::{EnvFilter, fmt};
    let filter = EnvFilter::try_from_env("DORAM_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    // A second initialisation (never happens in the binary) would only be ignored.
    let _ = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// A path argument that must name an existing file.
fn existing_file(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("no such file: {s}"))
    }
}
