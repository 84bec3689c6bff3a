//! `doram pir …` and `doram bench pir`: three-server PIR with guaranteed output.
//!
//! * `doram pir build-db` turns a CSV column, lines of text or a raw file into a database file
//!   of fixed-size records (with a digest, so servers can tell database versions apart).
//! * `doram pir serve --config C --id I --db FILE` runs server S_I: mutually authenticated TLS
//!   to the other two servers (the `[[party]]` mesh of the config), server-authenticated TLS
//!   for clients on the party's `service_address`.
//! * `doram pir query --config C --index I` retrieves record I. With at most one misbehaving
//!   server it outputs the right record or, when a server is only silent or late (which the
//!   network can cause), fails closed naming that server; `--assume-synchronous-network`
//!   opts into the paper's rule instead (the silent server is taken for the corrupt one and
//!   another server learns i).
//!
//! # Timeouts, and why in this order
//! With `timeout_ms` = t from `doram.toml` (the servers' mesh, default 30 s):
//!
//! | what | default | must exceed |
//! |---|---|---|
//! | S_2's instance wait (pool refill after a stalled holder link) | t + 5 s | t + one key generation |
//! | the client's query deadline (`pir query --timeout`) | 2t | the instance wait, plus an inner product and a few round trips |
//! | the servers' handshake deadline (`pir serve --handshake-timeout`) | 2t | the client's deadline (a slow but honest handshake is not cut off) |
//! | the servers' idle timeout (`--idle-timeout`) | 4t | the client's deadline (a client waiting for another server keeps its connection) |
//! | how long S_0/S_1 hold a fetched instance (`--max-hold`) | 10t | the client's deadline (the client asks for its time left) |
//!
//! Lateness is never taken for evidence, so a wrong order cannot get an honest server blamed;
//! it can only make a query fail closed, or — under `--assume-synchronous-network` — send i to
//! the server the paper's rule names while the slow one was honest. `pir query` warns when
//! its deadline does not exceed the instance wait the config implies.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use doram_core::PartyId;
use doram_net::Config;
use doram_pir::bench::BenchConfig;
use doram_pir::client::{ClientOptions, Network, Suspects};
use doram_pir::server::serve_tls;
use doram_pir::{Behaviour, Database, PirError, Server, ServerConfig, ServerId, Stage};
use serde_json::json;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::report::{human_bytes, print_json};

/// Arguments of `doram pir`.
#[derive(Debug, Args)]
pub struct PirArgs {
    /// What to do.
    #[command(subcommand)]
    pub what: PirWhat,
}

/// The `doram pir` commands.
#[derive(Debug, Subcommand)]
pub enum PirWhat {
    /// Build a database file of fixed-size records.
    ///
    /// Example: `doram pir build-db --csv prices.csv --record-size 8 --out prices.db`.
    BuildDb(BuildDbArgs),
    /// Run one of the three servers (S0, S1 hold the key shares, S2 deals offline material).
    ///
    /// Example: `doram certs --out local --services`, then in three terminals
    /// `doram pir serve --config local/doram.toml --id I --db prices.db`.
    Serve(ServeArgs),
    /// Retrieve one record without any server learning which.
    ///
    /// Example: `doram pir query --config local/doram.toml --index 42`.
    Query(QueryArgs),
}

/// Input formats of `build-db`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The first column of CSV text: a decimal unsigned integer (stored little-endian) or
    /// `0x` and hexadecimal bytes, zero-padded to the record size.
    Csv,
    /// One record per line of text (UTF-8 bytes, zero-padded to the record size).
    Lines,
    /// The raw bytes of the file, cut into records (its length must be a multiple of the
    /// record size).
    Raw,
}

/// Arguments of `doram pir build-db`.
#[derive(Debug, Args)]
pub struct BuildDbArgs {
    /// The input file.
    #[arg(long = "in", value_parser = crate::existing_file)]
    pub input: PathBuf,
    /// How to read it.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    pub format: Format,
    /// Bytes per record.
    #[arg(long, default_value_t = 8)]
    pub record_size: usize,
    /// The database file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Deviations a server can be told to commit, to watch the client still get the right record
/// (for demonstrations and tests of a deployment; never use on a real service).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Misbehave {
    /// S2: a tampered partial view to S0.
    TamperPartialView,
    /// S2: consistently tampered G-oracle outputs.
    TamperGOutput,
    /// S2: the payload (2, α) instead of (1, α).
    WrongPayload,
    /// A tampered view to the client.
    TamperView,
    /// S0/S1: a wrong share of z.
    WrongZ,
    /// S0/S1: a wrong share of y.
    WrongY,
    /// S0/S1: a wrong rotation.
    WrongShift,
    /// Send nothing to the client in the answer stage.
    DropAnswer,
    /// Send the answer 30 s late.
    DelayAnswer,
    /// Send garbage instead of the answer.
    GarbageAnswer,
    /// Close the connection instead of answering.
    CloseAnswer,
    /// S2: re-send the first partial views under every later instance id.
    ReplayPartialView,
    /// Return a wrong record when asked in the clear.
    LyingClear,
}

impl From<Misbehave> for Behaviour {
    fn from(m: Misbehave) -> Behaviour {
        match m {
            Misbehave::TamperPartialView => Behaviour::TamperPartialView,
            Misbehave::TamperGOutput => Behaviour::TamperGOutput,
            Misbehave::WrongPayload => Behaviour::WrongPayload,
            Misbehave::TamperView => Behaviour::TamperView,
            Misbehave::WrongZ => Behaviour::WrongZ,
            Misbehave::WrongY => Behaviour::WrongY,
            Misbehave::WrongShift => Behaviour::WrongShift,
            Misbehave::DropAnswer => Behaviour::Drop(Stage::Answer),
            Misbehave::DelayAnswer => Behaviour::Delay(Stage::Answer, Duration::from_secs(30)),
            Misbehave::GarbageAnswer => Behaviour::Garbage(Stage::Answer),
            Misbehave::CloseAnswer => Behaviour::Close(Stage::Answer),
            Misbehave::ReplayPartialView => Behaviour::ReplayPartialView,
            Misbehave::LyingClear => Behaviour::LyingClear,
        }
    }
}

/// Arguments of `doram pir serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The session config; every party needs a `service_address` (`doram certs --services`).
    #[arg(long, value_parser = crate::existing_file)]
    pub config: PathBuf,
    /// This server: 0 or 1 (key holders) or 2 (dealer).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub id: u8,
    /// The database file (`doram pir build-db`); all three servers must hold the same one.
    #[arg(long, value_parser = crate::existing_file)]
    pub db: PathBuf,
    /// Stop after this many queries (default: serve until killed).
    #[arg(long)]
    pub queries: Option<u64>,
    /// Offline instances to keep ready (each takes 16·N bytes at S0 and S1).
    #[arg(long, default_value_t = 4)]
    pub pool: usize,
    /// Concurrent client connections (a new one beyond this displaces the longest idle).
    #[arg(long, default_value_t = 64)]
    pub max_clients: usize,
    /// Concurrent client connections from one IP address.
    #[arg(long, default_value_t = 16)]
    pub max_clients_per_address: usize,
    /// Seconds a client has to complete its TLS handshake (default: twice the config's
    /// timeout_ms; keep it at least the clients' --timeout).
    #[arg(long)]
    pub handshake_timeout: Option<f64>,
    /// Seconds a client connection may stay without a complete request (default: four times
    /// the config's timeout_ms).
    #[arg(long)]
    pub idle_timeout: Option<f64>,
    /// Seconds S0/S1 hold a fetched instance for a client at most (default: ten times the
    /// config's timeout_ms).
    #[arg(long)]
    pub max_hold: Option<f64>,
    /// Deliberately deviate from the protocol (demonstrations only).
    #[arg(long, value_enum)]
    pub misbehave: Option<Misbehave>,
}

/// Arguments of `doram pir query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The session config (the client needs the CA and the servers' service addresses only).
    #[arg(long, value_parser = crate::existing_file)]
    pub config: PathBuf,
    /// The record to retrieve.
    #[arg(long)]
    pub index: u64,
    /// Deadline for the whole query in seconds, connecting included (a fallback after a
    /// failed check gets at most as long again). Default: twice the config's timeout_ms.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Take a silent or late server for the corrupt one (the paper's rule) and fall back to
    /// the server that rule names, instead of failing closed. That server learns the index,
    /// and it is honest only if the network delivered every honest message within the
    /// deadline. The record is still checked against the database's Merkle root.
    #[arg(long)]
    pub assume_synchronous_network: bool,
}

/// Arguments of `doram bench pir`.
#[derive(Debug, Args)]
pub struct BenchPirArgs {
    /// Databases of 2^N records, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub log_n: Vec<u8>,
    /// Bytes per record.
    #[arg(long, default_value_t = 8)]
    pub record_size: usize,
    /// Measured queries per size (medians are reported).
    #[arg(long, default_value_t = 5)]
    pub queries: usize,
    /// Network to emulate on every link: `none`, `lan`, `wan` or `latency=MS,bandwidth=MBIT`.
    #[arg(long, default_value = "none", value_parser = crate::netarg::parse_net)]
    pub net: doram_net::Shaping,
    /// Seed of the random database and indices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs `doram pir`.
pub fn run(a: &PirArgs, json: bool) -> Result<()> {
    match &a.what {
        PirWhat::BuildDb(b) => build_db(b, json),
        PirWhat::Serve(s) => serve(s, json),
        PirWhat::Query(q) => query(q, json),
    }
}

fn build_db(a: &BuildDbArgs, json: bool) -> Result<()> {
    if a.record_size == 0 {
        bail!("--record-size must be at least 1");
    }
    let input = a.input.display();
    let db = match a.format {
        Format::Csv => {
            let f =
                std::fs::File::open(&a.input).with_context(|| format!("cannot open {input}"))?;
            Database::from_csv(BufReader::new(f), a.record_size)
        }
        Format::Lines => {
            let text = std::fs::read_to_string(&a.input)
                .with_context(|| format!("cannot read {input}"))?;
            Database::from_lines(text.lines(), a.record_size)
        }
        Format::Raw => {
            let bytes = std::fs::read(&a.input).with_context(|| format!("cannot read {input}"))?;
            Database::from_bytes(a.record_size, &bytes)
        }
    }
    .with_context(|| format!("{input}"))?;
    db.write_file(&a.out)
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    let digest: String = db
        .digest()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    if json {
        print_json(&json!({
            "out": a.out.display().to_string(),
            "records": db.len(),
            "record_size": db.record_size(),
            "digest_prefix": digest,
        }))?;
    } else {
        println!(
            "wrote {}: {} records of {} bytes (digest {digest}…)",
            a.out.display(),
            db.len(),
            db.record_size()
        );
    }
    Ok(())
}

fn load_config(path: &Path) -> Result<Config> {
    let c = Config::load(path).with_context(|| format!("cannot use config {}", path.display()))?;
    if c.n_parties() != 3 {
        bail!("PIR needs a three-party config (got {})", c.n_parties());
    }
    if c.tls.is_none() {
        bail!("PIR needs a [tls] section in {}", path.display());
    }
    Ok(c)
}

fn service_address(c: &Config, id: PartyId, path: &Path) -> Result<String> {
    c.party(id)
        .and_then(|p| p.service_address.clone())
        .with_context(|| {
            format!(
                "{id} has no service_address in {} (generate one with `doram certs --services`)",
                path.display()
            )
        })
}

fn serve(a: &ServeArgs, json: bool) -> Result<()> {
    let net = load_config(&a.config)?;
    let role = ServerId::ALL[usize::from(a.id)];
    let addr = service_address(&net, role.party(), &a.config)?;
    let db = Database::from_file(&a.db).with_context(|| format!("{}", a.db.display()))?;
    let mut config = ServerConfig::new(role);
    config.pool_size = a.pool.max(1);
    config.max_clients = a.max_clients.max(1);
    config.max_clients_per_address = a.max_clients_per_address.max(1);
    config.max_queries = a.queries;
    // The order of the module documentation: instance wait < client deadline ≤ handshake
    // deadline ≤ idle timeout ≤ hold.
    config.instance_wait = instance_wait(&net);
    config.handshake.timeout =
        seconds(a.handshake_timeout, "--handshake-timeout")?.unwrap_or(2 * net.timeout);
    config.idle_timeout = seconds(a.idle_timeout, "--idle-timeout")?.unwrap_or(4 * net.timeout);
    config.max_hold = seconds(a.max_hold, "--max-hold")?.unwrap_or(10 * net.timeout);
    if config.handshake.timeout <= config.instance_wait {
        eprintln!(
            "{role}: warning: the handshake deadline ({:?}) does not exceed the instance wait \
             ({:?}); clients with a longer deadline may be cut off",
            config.handshake.timeout, config.instance_wait
        );
    }
    let behaviour = a.misbehave.map_or(Behaviour::Honest, Behaviour::from);
    if a.misbehave.is_some() {
        eprintln!("{role}: deliberately misbehaving ({:?})", a.misbehave);
    }
    let records = db.len();
    let server = Server::new(config, Arc::new(db), behaviour);
    if !json {
        eprintln!("{role}: serving {records} records to clients on {addr}");
    }
    let report = serve_tls(&server, &net, &addr).with_context(|| format!("{role} failed"))?;
    if json {
        print_json(&json!({
            "server": role.to_string(),
            "queries": report.queries,
        }))?;
    } else {
        println!("{role}: served {report:?}");
    }
    Ok(())
}

/// S_2's instance wait for a mesh timeout: it must outlast a stalled holder link plus one
/// key generation.
fn instance_wait(net: &Config) -> Duration {
    net.timeout + Duration::from_secs(5)
}

/// A positive number of seconds from an option, if given.
fn seconds(v: Option<f64>, name: &str) -> Result<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
        Some(_) => bail!("{name} must be a positive number of seconds"),
    }
}

fn query(a: &QueryArgs, json: bool) -> Result<()> {
    let timeout = seconds(a.timeout, "--timeout")?;
    let net = load_config(&a.config)?;
    let timeout = timeout.unwrap_or(2 * net.timeout);
    let addrs: Vec<String> = ServerId::ALL
        .iter()
        .map(|s| service_address(&net, s.party(), &a.config))
        .collect::<Result<_>>()?;
    let network = if a.assume_synchronous_network {
        Network::AssumeSynchronous
    } else {
        Network::Asynchronous
    };
    if timeout <= instance_wait(&net) {
        eprintln!(
            "warning: --timeout {timeout:?} does not exceed the servers' instance wait ({:?}): \
             a query may fail{} while an honest server refills its pool",
            instance_wait(&net),
            if a.assume_synchronous_network {
                ", or reveal the index to the wrong server,"
            } else {
                ""
            }
        );
    }
    if a.assume_synchronous_network && !json {
        eprintln!(
            "note: --assume-synchronous-network: a silent server is taken for the corrupt one, \
             and the server the paper's rule names may learn index {}",
            a.index
        );
    }
    let result = doram_pir::client::query_with(
        &net,
        [&addrs[0], &addrs[1], &addrs[2]],
        a.index,
        ClientOptions { timeout, network },
    );
    let out = match result {
        Ok(out) => out,
        Err(PirError::Unreachable { server, detail }) if !a.assume_synchronous_network => {
            bail!(
                "no record: {server} was unreachable ({detail}). Nobody is blamed, and no \
                 server that might be corrupt learned the index. Retry; if the network is \
                 known to be synchronous, --assume-synchronous-network lets another server \
                 answer in the clear."
            );
        }
        Err(PirError::Unreachable { server, detail }) => {
            bail!(
                "no record: {server} was unreachable ({detail}). Nobody is blamed; the server \
                 the synchronous-network rule chose may have learned the index."
            );
        }
        Err(e) => return Err(e).context("the query failed"),
    };
    let hex: String = out.value.iter().map(|b| format!("{b:02x}")).collect();
    let as_u64 = <[u8; 8]>::try_from(&out.value[..])
        .ok()
        .map(u64::from_le_bytes);
    let fallback = out.fallback.as_ref().map(|f| {
        json!({
            "deviation": format!("{:?}", f.deviation),
            "suspects": format!("{:?}", f.suspects),
            "trusted": f.trusted.to_string(),
        })
    });
    if json {
        print_json(&json!({
            "index": a.index,
            "record_hex": hex,
            "record_u64": as_u64,
            "blamed": out.blamed().map(|s| s.to_string()),
            "fallback": fallback,
            "network": if a.assume_synchronous_network { "assume-synchronous" } else { "asynchronous" },
            "total_ms": out.timings.total.as_secs_f64() * 1e3,
            "client_compute_ms": out.timings.client_compute.as_secs_f64() * 1e3,
            "bytes": out.total_bytes(),
        }))?;
        return Ok(());
    }
    match as_u64 {
        Some(v) => println!("record {} = {v} (0x{hex})", a.index),
        None => println!("record {} = 0x{hex}", a.index),
    }
    match &out.fallback {
        None => println!("the protocol completed: no server deviated"),
        Some(f) => match f.suspects {
            Suspects::Presumed(s) => println!(
                "{s} was silent ({:?}); by the synchronous-network assumption the record came \
                 in the clear from {} (checked against the database's Merkle root); nobody is \
                 blamed",
                f.deviation, f.trusted
            ),
            _ => println!(
                "a server deviated ({:?}); suspects {:?}; the record came in the clear from {}, \
                 which is certainly honest, and was checked against the database's Merkle \
                 root{}",
                f.deviation,
                f.suspects,
                f.trusted,
                out.blamed()
                    .map_or(String::new(), |b| format!("; blamed: {b}"))
            ),
        },
    }
    println!(
        "{:.2} ms in all ({:.3} ms of client computation), {} exchanged",
        out.timings.total.as_secs_f64() * 1e3,
        out.timings.client_compute.as_secs_f64() * 1e3,
        human_bytes(out.total_bytes())
    );
    Ok(())
}

/// Runs `doram bench pir`.
pub fn bench(a: &BenchPirArgs, json: bool, quiet: bool) -> Result<()> {
    if a.queries == 0 || a.record_size == 0 {
        bail!("--queries and --record-size must be at least 1");
    }
    let mut reports = Vec::new();
    for &n in &a.log_n {
        if !quiet {
            eprintln!("PIR over 2^{n} records of {} bytes…", a.record_size);
        }
        let mut c = BenchConfig::new(n, a.record_size, a.queries);
        c.shaping = a.net;
        c.seed = a.seed;
        let r = doram_pir::bench::run(c).with_context(|| format!("PIR at 2^{n}"))?;
        if !r.verified {
            bail!("PIR at 2^{n}: a query returned a wrong record or fell back");
        }
        reports.push(r);
    }
    if json {
        print_json(&reports)?;
        return Ok(());
    }
    println!(
        "{:>5} {:>7} {:>11} {:>11} {:>11} {:>14} {:>14}",
        "log N", "record", "offline ms", "online ms", "client ms", "online B/fml", "offline B/fml"
    );
    for r in &reports {
        println!(
            "{:>5} {:>7} {:>11.2} {:>11.3} {:>11.4} {:>14} {:>14}",
            r.domain_bits,
            r.record_size,
            r.offline_ms,
            r.online_ms,
            r.client_ms,
            format!("{}/{:.0}", r.online_total, r.online_formula),
            format!("{}/{:.0}", r.offline_total, r.offline_formula),
        );
    }
    Ok(())
}
