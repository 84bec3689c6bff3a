//! `doram party`: one party of a session as its own process.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use doram_core::PartyId;
use doram_net::{Config, Session};
use doram_services::lookup::{self, LookupParams, Table};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

use crate::report::{PartyFigures, print_json};

/// Arguments of `doram party`.
#[derive(Debug, Args)]
pub struct PartyArgs {
    /// The session config (from `doram certs`, or written by hand).
    #[arg(long, value_parser = crate::existing_file)]
    pub config: PathBuf,
    /// This party's id (0-based, as in the config).
    #[arg(long)]
    pub id: u8,
    /// What to run.
    #[command(subcommand)]
    pub job: Job,
}

/// What a party process runs.
#[derive(Debug, Subcommand)]
pub enum Job {
    /// Private lookup: parties 0 and 1 serve a table, party 2 looks up secret indices.
    Lookup(LookupArgs),
    /// One party of `doram bench oram` (the same options on every party).
    Oram(crate::oram::OramArgs),
    /// One party of the Ramen DORAM benchmark (the same options on every party).
    Ramen(crate::ramen::RamenArgs),
    /// One party of the 3P-Duoram benchmark (the same options on every party).
    Duoram(crate::duoram::DuoramArgs),
    /// One party of a secure RAM program; give only this party's role's inputs (the owner
    /// `--data`/`--graph`/`--prefs`, the querier `--key`/`--keys`/`--source`).
    Run(crate::run::RunArgs),
    /// One party of `doram bench ot --processes` (a two-party config).
    Ot(crate::twopc::BenchOtArgs),
    /// One party of `doram bench gc --processes` (a two-party config).
    Gc(crate::twopc::BenchGcArgs),
}

/// Arguments of the lookup job (the same on every party, except `--index` for the client).
#[derive(Debug, Clone, Args)]
pub struct LookupArgs {
    /// Table of 2^N words.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=30))]
    pub log_n: u32,
    /// Public seed the servers build their (synthetic) table from.
    #[arg(long, default_value_t = 1)]
    pub db_seed: u64,
    /// Number of queries in the batch.
    #[arg(long, default_value_t = 4)]
    pub queries: usize,
    /// Client only: the secret indices, comma separated (random if omitted).
    #[arg(long, value_delimiter = ',')]
    pub index: Vec<usize>,
}

/// What one party of a lookup reports.
#[derive(Debug, Serialize, Deserialize)]
pub struct LookupPartyReport {
    /// `server` or `client`.
    pub role: String,
    /// Table length.
    pub n: usize,
    /// Batch size.
    pub queries: usize,
    /// Client only: the indices looked up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indices: Option<Vec<usize>>,
    /// Client only: the words it obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<u64>>,
    /// Wall-clock time of the protocol, after connecting.
    pub online_ms: f64,
    /// Communication and memory.
    pub figures: PartyFigures,
}

/// Runs the lookup role of `session.me()`.
pub fn run_lookup(session: &mut Session, args: &LookupArgs) -> Result<LookupPartyReport> {
    let n = 1usize << args.log_n;
    let params = LookupParams::new(n, args.queries)?;
    let me = session.me();
    session.set_phase("lookup");
    let start = Instant::now();
    let (role, indices, values) = if me == lookup::CLIENT {
        let indices = if args.index.is_empty() {
            use rand::Rng;
            let mut rng = rand::rng();
            (0..args.queries).map(|_| rng.random_range(0..n)).collect()
        } else {
            args.index.clone()
        };
        let values = lookup::query(session, params, &indices, &mut rand::rng())?;
        (
            "client",
            Some(indices),
            Some(values.iter().map(|v| v.0).collect()),
        )
    } else {
        let table = Table::synthetic(n, args.db_seed);
        lookup::serve(session, params, &table)?;
        ("server", None, None)
    };
    let online_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(LookupPartyReport {
        role: role.to_string(),
        n,
        queries: args.queries,
        indices,
        values,
        online_ms,
        figures: PartyFigures::from_stats(me, session.stats()),
    })
}

/// Runs `doram party`.
pub fn run(args: &PartyArgs, json: bool) -> Result<()> {
    let config = Config::load(&args.config)
        .with_context(|| format!("cannot use config {}", args.config.display()))?;
    let me = PartyId::from_index(usize::from(args.id), config.n_parties()).with_context(|| {
        format!(
            "--id {} is not a party of {}",
            args.id,
            args.config.display()
        )
    })?;
    match &args.job {
        Job::Lookup(l) => {
            if config.n_parties() != 3 {
                bail!(
                    "the lookup job needs a three-party config (got {})",
                    config.n_parties()
                );
            }
            let mut session = Session::connect(&config, me)
                .with_context(|| format!("{me} could not connect to its peers"))?;
            let report = run_lookup(&mut session, l)?;
            if json {
                print_json(&report)?;
            } else {
                print_lookup_report(me, &report);
            }
        }
        Job::Oram(o) => {
            let want = o.parties()?;
            if config.n_parties() != want {
                bail!(
                    "{} runs with {want} parties, the config has {}",
                    o.protocol.name(),
                    config.n_parties()
                );
            }
            let session = Session::connect(&config, me)
                .with_context(|| format!("{me} could not connect to its peers"))?;
            crate::oram::party_job(session, o, json)?;
        }
        Job::Ramen(r) => {
            if config.n_parties() != 3 {
                bail!(
                    "Ramen needs a three-party config (got {})",
                    config.n_parties()
                );
            }
            let session = Session::connect(&config, me)
                .with_context(|| format!("{me} could not connect to its peers"))?;
            crate::ramen::party_job(session, r, json)?;
        }
        Job::Duoram(d) => {
            if config.n_parties() != 3 {
                bail!(
                    "3P-Duoram needs a three-party config (got {})",
                    config.n_parties()
                );
            }
            let session = Session::connect(&config, me)
                .with_context(|| format!("{me} could not connect to its peers"))?;
            crate::duoram::party_job(session, d, json)?;
        }
        Job::Run(r) => {
            let want = r.program.common().backend.parties();
            if config.n_parties() != want {
                bail!(
                    "{} runs with {want} parties, the config has {}",
                    r.program.common().backend.name(),
                    config.n_parties()
                );
            }
            let session = Session::connect(&config, me)
                .with_context(|| format!("{me} could not connect to its peers"))?;
            crate::run::party_job(session, r, json)?;
        }
        Job::Ot(o) => crate::twopc::party_ot(two_party_session(&config, me)?, o, json)?,
        Job::Gc(g) => crate::twopc::party_gc(two_party_session(&config, me)?, g, json)?,
    }
    Ok(())
}

/// This party's session of a two-party config.
fn two_party_session(config: &Config, me: PartyId) -> Result<Session> {
    if config.n_parties() != 2 {
        bail!(
            "the two-party engine needs a two-party config (got {})",
            config.n_parties()
        );
    }
    Session::connect(config, me).with_context(|| format!("{me} could not connect to its peer"))
}

/// Prints one party's lookup report for people.
pub fn print_lookup_report(me: PartyId, r: &LookupPartyReport) {
    use crate::report::human_bytes;
    println!(
        "{me} ({}): sent {} in {} messages, received {}, {} rounds, {:.2} ms",
        r.role,
        human_bytes(r.figures.bytes_sent),
        r.figures.messages_sent,
        human_bytes(r.figures.bytes_received),
        r.figures.rounds,
        r.online_ms
    );
    if let (Some(idx), Some(vals)) = (&r.indices, &r.values) {
        for (i, v) in idx.iter().zip(vals) {
            println!("    D[{i}] = {v:#018x}");
        }
    }
}
