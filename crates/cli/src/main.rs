//! `doram`: run parties, demos and benchmarks of doram's protocols.
//!
//! The binary is thin: argument parsing and validation live here (raw clap arguments are turned
//! into validated settings before anything runs), the work lives in the library crates.

mod bench;
mod certs;
mod compare;
mod demo;
mod duoram;
mod figures;
mod fjkw15;
mod gkk12;
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

#[cfg(test)]
mod readme_usage {
    //! The README's usage block cannot drift from the parser: every subcommand it names exists
    //! where it stands, every `--option` belongs to the command it follows, and every listed
    //! choice `a|b|c` of an option with fixed values is one of them.

    #![allow(clippy::unwrap_used)]

    use super::Cli;
    use clap::CommandFactory;

    /// The README's ```text block under "## The CLI", one entry per `doram` line with its
    /// continuation lines (indented lines that start with `[` or `--`) joined.
    fn usage_lines() -> Vec<String> {
        let readme = include_str!("../../../README.md");
        let section = readme.split("## The CLI").nth(1).expect("a CLI section");
        let block = section.split("```text").nth(1).expect("a usage block");
        let block = block.split("```").next().expect("the block ends");
        let mut lines: Vec<String> = Vec::new();
        for l in block.lines() {
            let t = l.trim_start();
            if t.starts_with("doram ") {
                lines.push(t.to_string());
            } else if (t.starts_with('[') || t.starts_with("--")) && !lines.is_empty() {
                let last = lines.last_mut().unwrap();
                last.push(' ');
                last.push_str(t);
            }
        }
        lines
    }

    /// The option name of a usage token such as `[--net`, `--log-n`, `--seed=N]`.
    fn option_name(token: &str) -> Option<&str> {
        let t = token.trim_start_matches('[');
        let t = t.strip_prefix("--")?;
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(t.len());
        Some(&t[..end])
    }

    fn check_line(line: &str) {
        let root = Cli::command();
        // The commands descended into, innermost last; `|` between alternatives returns to the
        // command the last subcommand was chosen from.
        let mut path: Vec<clap::Command> = vec![root.clone()];
        let tokens: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i];
            let cur = path.last().unwrap().clone();
            if tok == "|" {
                if path.len() > 2 {
                    path.pop();
                }
            } else if let Some(name) = option_name(tok) {
                let arg = cur
                    .get_arguments()
                    .chain(root.get_arguments())
                    .find(|a| a.get_long() == Some(name));
                let arg = arg.unwrap_or_else(|| {
                    panic!(
                        "README: `{line}`: `--{name}` is not an option of `{}`",
                        cur.get_name()
                    )
                });
                // A listed choice `a|b|c` right after an option with fixed values.
                let values = arg.get_possible_values();
                if let Some(next) = tokens.get(i + 1).map(|n| n.trim_end_matches(']'))
                    && next.contains('|')
                    && !values.is_empty()
                {
                    for v in next.split('|') {
                        assert!(
                            values.iter().any(|p| p.matches(v, false)),
                            "README: `{line}`: `{v}` is not a value of `--{name}`"
                        );
                    }
                }
            } else if !tok.starts_with('[') && !tok.is_empty() {
                let names: Vec<&str> = tok.split('|').collect();
                let found: Vec<bool> = names
                    .iter()
                    .map(|n| cur.find_subcommand(n).is_some())
                    .collect();
                if found.iter().any(|&f| f) {
                    assert!(
                        found.iter().all(|&f| f),
                        "README: `{line}`: not every one of `{tok}` is a subcommand of `{}`",
                        cur.get_name()
                    );
                    path.push(cur.find_subcommand(names[0]).unwrap().clone());
                }
            }
            i += 1;
        }
    }

    #[test]
    fn readme_usage_matches_the_parser() {
        let lines = usage_lines();
        assert!(lines.len() > 20, "the usage block was not found");
        for l in &lines {
            check_line(l);
        }
    }

    #[test]
    fn a_misplaced_option_is_caught() {
        // `--processes` belongs to `run`, not to the program after it.
        let r = std::panic::catch_unwind(|| check_line("doram run bfs --graph g.csv --processes"));
        assert!(r.is_err());
        check_line("doram run --processes bfs --graph g.csv --source 0");
        let r = std::panic::catch_unwind(|| check_line("doram bench ot --ext iknp|nothing"));
        assert!(r.is_err());
    }
}
