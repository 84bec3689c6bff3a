//! `doram demo`: the main job. Three local parties connect over mutually authenticated TLS 1.3
//! and run a private lookup: P0 and P1 serve a table, P2 reads entries at secret indices. Then
//! the same three parties run a secure RAM program on a distributed ORAM: a binary search in
//! which P0 owns a secret sorted array, P1 a secret key, and only P2 learns where the key is.
//! The demo checks both results in the clear and prints what every party sent.

use crate::randomness::Randomness;
use anyhow::{Context, Result, bail};
use clap::Args;
use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, Session};
use doram_services::lookup::Table;
use serde::Serialize;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::party::{LookupArgs, LookupPartyReport, print_lookup_report, run_lookup};
use crate::report::print_json;

/// Arguments of `doram demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Table of 2^N words.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=26))]
    pub log_n: u32,
    /// Number of private lookups.
    #[arg(long, default_value_t = 4)]
    pub queries: usize,
    /// Entries of the sorted array of the binary search.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub search_n: u64,
    /// Run the parties as three `doram party` processes instead of threads of this one.
    #[arg(long)]
    pub processes: bool,
}

#[derive(Debug, Serialize)]
struct DemoReport {
    transport: &'static str,
    parties_as: &'static str,
    n: usize,
    queries: usize,
    correct: bool,
    total_ms: f64,
    parties: Vec<LookupPartyReport>,
    search: SearchReport,
}

/// The binary search act of the demo.
#[derive(Debug, Serialize)]
struct SearchReport {
    backend: &'static str,
    n: usize,
    key: u64,
    index: u64,
    found: bool,
    correct: bool,
    total_ms: f64,
    parties: Vec<crate::run::PartyOutcome>,
}

/// Runs `doram demo`.
pub fn run(args: &DemoArgs, json: bool, quiet: bool) -> Result<()> {
    if args.queries == 0 {
        bail!("--queries must be at least 1");
    }
    let dir =
        tempfile::tempdir().context("cannot create a temporary directory for certificates")?;
    let config_path = generate_local(dir.path(), 3, Addresses::FreeLocalPorts)?;
    let lookup = LookupArgs {
        log_n: args.log_n,
        db_seed: rand::random(),
        queries: args.queries,
        index: Vec::new(),
    };
    if !json && !quiet {
        println!(
            "doram demo: 3 parties on 127.0.0.1 over mutually authenticated TLS 1.3 \
             (certificates in a temporary directory)"
        );
        println!(
            "  P0, P1 serve a public table of 2^{} words; P2 looks up {} secret indices with DPF keys",
            args.log_n, args.queries
        );
    }
    let start = Instant::now();
    let parties = if args.processes {
        run_processes(&config_path, &lookup)?
    } else {
        run_threads(&config_path, &lookup)?
    };
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    let search = binary_search(
        args,
        dir.path(),
        &config_path,
        lookup.db_seed,
        json || quiet,
    )?;

    // Check the client's answers against the table in the clear.
    let table = Table::synthetic(1usize << args.log_n, lookup.db_seed);
    let client = &parties[2];
    let (Some(indices), Some(values)) = (&client.indices, &client.values) else {
        bail!("the client reported no result");
    };
    let correct = indices.len() == values.len()
        && indices
            .iter()
            .zip(values)
            .all(|(&i, &v)| table.words().get(i).map(|w| w.0) == Some(v));
    let report = DemoReport {
        transport: "tls1.3-mutual",
        parties_as: if args.processes {
            "processes"
        } else {
            "threads"
        },
        n: 1usize << args.log_n,
        queries: args.queries,
        correct,
        total_ms,
        parties,
        search,
    };
    if json {
        print_json(&report)?;
    } else {
        for (p, r) in PartyId::first(3).iter().zip(&report.parties) {
            print_lookup_report(*p, r);
        }
        println!(
            "every answer equals the table entry: {} (total {:.1} ms including TLS handshakes)",
            if correct { "yes" } else { "NO" },
            total_ms
        );
        println!("neither server saw an index: each received only pseudorandom DPF keys");
        let s = &report.search;
        println!(
            "binary search on {}: P2 learns that the first entry >= P1's key is at index {} (found: {}); \
             correct: {} ({:.1} ms)",
            s.backend,
            s.index,
            s.found,
            if s.correct { "yes" } else { "NO" },
            s.total_ms
        );
        for p in &s.parties {
            let bytes: u64 = p.parts.iter().map(|c| c.bytes_sent).sum();
            let accesses: u64 = p.parts.iter().map(|c| c.accesses).sum();
            println!(
                "  {}: sent {} in {accesses} DORAM accesses and the comparisons between them",
                p.party,
                crate::report::human_bytes(bytes)
            );
        }
        println!(
            "P0 learned nothing of the key, P1 nothing of the array, and neither the probed \
             positions nor the answer"
        );
    }
    if !correct {
        bail!("the private lookup returned a wrong value");
    }
    if !report.search.correct {
        bail!("the binary search returned a wrong answer");
    }
    Ok(())
}

/// The second act: a binary search over 3P-Duoram between the same three parties (over TLS).
fn binary_search(
    args: &DemoArgs,
    dir: &Path,
    config_path: &Path,
    data_seed: u64,
    quiet: bool,
) -> Result<SearchReport> {
    use crate::run::{Common, Inputs, Program, Querier, SearchArgs};
    // P0's sorted array: distinct multiples of 7 starting from a seed-dependent offset; P1's
    // key: one of them, or one above.
    let n = args.search_n as usize;
    let base = data_seed % 1000;
    let data: Vec<u64> = (0..n as u64).map(|i| base + 7 * i).collect();
    let key = data[(data_seed as usize / 7) % n] + (data_seed % 2);
    let expect_index = data.partition_point(|&x| x < key) as u64;
    let expect_found = data.binary_search(&key).is_ok();
    if !quiet {
        println!(
            "  then a secure binary search: P0 owns a secret sorted array of {n} entries, \
             P1 a secret key, only P2 learns the answer"
        );
    }
    let csv: String = data.iter().map(|x| format!("{x}\n")).collect();
    let data_path = dir.join("sorted.csv");
    std::fs::write(&data_path, csv).context("cannot write the demo's array")?;
    // The parties' randomness comes from the OS.
    let randomness = Randomness::default();
    let program = Program::BinarySearch(SearchArgs {
        data: Some(data_path),
        key: Some(key),
        keys: None,
        store: None,
        query: Querier { querier: 1 },
        common: Common {
            backend: crate::run::Backend::Duoram,
            owner: 0,
            receiver: Some(2),
            randomness,
        },
    });
    let start = Instant::now();
    let parties = if args.processes {
        crate::run::run_processes(&program)?
    } else {
        on_threads(config_path, move |me, session| {
            let own = Inputs::Search {
                data: (me == PartyId::P0).then(|| data.clone()),
                keys: (me == PartyId::P1).then(|| vec![key]),
                store: None,
            };
            let s = crate::run::party_seed(&randomness, me);
            crate::run::run_one(session, s, &program, &own)
        })?
    };
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    let output = parties
        .iter()
        .find_map(|p| p.output.clone())
        .context("the receiver reported no output")?;
    let index = output["index"].as_u64().context("no index in the output")?;
    let found = output["found"]
        .as_bool()
        .context("no found bit in the output")?;
    Ok(SearchReport {
        backend: "duoram",
        n,
        key,
        index,
        found,
        correct: index == expect_index && found == expect_found,
        total_ms,
        parties,
    })
}

fn run_threads(config_path: &Path, lookup: &LookupArgs) -> Result<Vec<LookupPartyReport>> {
    let lookup = lookup.clone();
    on_threads(config_path, move |me, mut session| {
        run_lookup(&mut session, &lookup).with_context(|| format!("{me} failed"))
    })
}

/// Runs `f` for each of the three parties of the config at `config_path` as a thread of this
/// process, each over its own TLS session, and returns their results in party order.
fn on_threads<T: Send + 'static>(
    config_path: &Path,
    f: impl Fn(PartyId, Session) -> Result<T> + Clone + Send + 'static,
) -> Result<Vec<T>> {
    let config = Config::load(config_path)?;
    let handles: Vec<_> = PartyId::first(3)
        .iter()
        .map(|&me| {
            let config = config.clone();
            let f = f.clone();
            std::thread::spawn(move || -> Result<T> {
                let session = Session::connect(&config, me)
                    .with_context(|| format!("{me} could not connect"))?;
                f(me, session)
            })
        })
        .collect();
    // Join every party before judging, so that an error names each party's own reason (the
    // first party's is often only the echo of another's).
    let results: Vec<Result<T>> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a party thread panicked")))
        })
        .collect();
    if results.iter().all(Result::is_ok) {
        return Ok(results.into_iter().filter_map(Result::ok).collect());
    }
    let reasons: Vec<String> = results
        .into_iter()
        .filter_map(|r| r.err().map(|e| format!("{e:#}")))
        .collect();
    bail!("{}", reasons.join("; "))
}

fn run_processes(config_path: &Path, lookup: &LookupArgs) -> Result<Vec<LookupPartyReport>> {
    let exe = std::env::current_exe().context("cannot find the doram executable")?;
    let children: Vec<_> = (0..3u8)
        .map(|id| {
            Command::new(&exe)
                .arg("--json")
                .arg("party")
                .arg("--config")
                .arg(config_path)
                .arg("--id")
                .arg(id.to_string())
                .arg("lookup")
                .arg("--log-n")
                .arg(lookup.log_n.to_string())
                .arg("--db-seed")
                .arg(lookup.db_seed.to_string())
                .arg("--queries")
                .arg(lookup.queries.to_string())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .with_context(|| format!("cannot start party {id}"))
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (id, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output()?;
        if !o.status.success() {
            bail!("party {id} exited with {}", o.status);
        }
        let report: LookupPartyReport = serde_json::from_slice(&o.stdout)
            .with_context(|| format!("party {id} printed no readable report"))?;
        out.push(report);
    }
    Ok(out)
}
