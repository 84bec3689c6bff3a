//! `doram bench oram` and the `oram` job of `doram party`: every DORAM protocol through the one
//! bench runner of `doram-oram` ([`doram_oram::bench`]), with one report shape.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use doram_duoram::Duoram;
use doram_duoram::two_party::{Duoram2, Duoram2Z64};
use doram_field::{Fp, Z32, Z64};
use doram_fjkw15::backend::{InsecureDealtFjkw15, InsecureDealtFjkw15Oram};
use doram_fjkw15::{Fjkw15Memory, Fjkw15Z32Memory};
use doram_net::{Session, Shaping};
use doram_oram::bench::{BenchConfig, BenchReport, PartyBench, RunEnv, Totals};
use doram_oram::{LinearScanOram, Protocol};
use doram_ramen::{Params, Ramen};
use serde::Serialize;

use crate::randomness::Randomness;
use crate::report::{human_bytes, print_json};

/// The DORAM protocols of `doram bench oram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolArg {
    /// Ramen (words of Fp; hides reads from writes).
    Ramen,
    /// Three-party Duoram (words of Z64 or Fp; the access type is public).
    Duoram,
    /// Two-party Duoram, no helper (words of Fp; hides the access type).
    #[value(name = "duoram2p")]
    Duoram2p,
    /// Two-party Duoram on words of Z64, the paper's 8-byte words: half the READ's work.
    #[value(name = "duoram2p-z64")]
    Duoram2pZ64,
    /// The linear scan: every access touches every word (Fp or Z64; hides the access type).
    LinearScan,
    /// FJKW15's three-party tree ORAM (words of Z64; the access type is public); Init is the
    /// secure shared load (n accesses) unless `--insecure-dealt-load`.
    Fjkw15,
    /// FJKW15 on words of Z/2^32: the 4-byte records of the authors' implementation.
    #[value(name = "fjkw15-z32")]
    Fjkw15Z32,
}

impl ProtocolArg {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolArg::Ramen => "ramen",
            ProtocolArg::Duoram => "duoram",
            ProtocolArg::Duoram2p => "duoram2p",
            ProtocolArg::Duoram2pZ64 => "duoram2p-z64",
            ProtocolArg::LinearScan => "linear-scan",
            ProtocolArg::Fjkw15 => "fjkw15",
            ProtocolArg::Fjkw15Z32 => "fjkw15-z32",
        }
    }

    /// Whether this is FJKW15 (on either word), the protocol with an insecure dealt load.
    pub fn is_fjkw15(self) -> bool {
        matches!(self, ProtocolArg::Fjkw15 | ProtocolArg::Fjkw15Z32)
    }

    /// The name of its rows with `--insecure-dealt-load`.
    pub fn insecure_name(self) -> Option<&'static str> {
        match self {
            ProtocolArg::Fjkw15 => Some("fjkw15-insecure-dealt-load"),
            ProtocolArg::Fjkw15Z32 => Some("fjkw15-z32-insecure-dealt-load"),
            _ => None,
        }
    }
}

/// Word rings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WordArg {
    /// The 128-bit prime field.
    Fp,
    /// Integers modulo 2^64.
    Z64,
}

/// Runs `$body` with `$P` the protocol type `$proto`/`$word`/`$insecure_load` stand for.
macro_rules! with_protocol {
    ($proto:expr, $word:expr, $insecure_load:expr, $P:ident => $body:expr) => {
        match ($proto, $word) {
            (ProtocolArg::Fjkw15, _) if $insecure_load => {
                type $P = InsecureDealtFjkw15;
                $body
            }
            (ProtocolArg::Fjkw15, _) => {
                type $P = Fjkw15Memory;
                $body
            }
            (ProtocolArg::Fjkw15Z32, _) if $insecure_load => {
                type $P = InsecureDealtFjkw15Oram<Z32>;
                $body
            }
            (ProtocolArg::Fjkw15Z32, _) => {
                type $P = Fjkw15Z32Memory;
                $body
            }
            (ProtocolArg::Ramen, _) => {
                type $P = Ramen;
                $body
            }
            (ProtocolArg::Duoram, WordArg::Z64) => {
                type $P = Duoram<Z64>;
                $body
            }
            (ProtocolArg::Duoram, WordArg::Fp) => {
                type $P = Duoram<Fp>;
                $body
            }
            (ProtocolArg::Duoram2p, _) => {
                type $P = Duoram2;
                $body
            }
            (ProtocolArg::Duoram2pZ64, _) => {
                type $P = Duoram2Z64;
                $body
            }
            (ProtocolArg::LinearScan, WordArg::Fp) => {
                type $P = LinearScanOram<Fp>;
                $body
            }
            (ProtocolArg::LinearScan, WordArg::Z64) => {
                type $P = LinearScanOram<Z64>;
                $body
            }
        }
    };
}

/// Options shared by `doram bench oram` and `doram party … oram`.
#[derive(Debug, Clone, Args)]
pub struct OramArgs {
    /// The protocol.
    #[arg(long, value_enum)]
    pub protocol: ProtocolArg,
    /// The word ring (default: Fp for Ramen and the linear scan, Z64 for Duoram; Ramen and
    /// duoram2p only run over Fp, FJKW15 and duoram2p-z64 over Z64).
    #[arg(long, value_enum)]
    pub word: Option<WordArg>,
    /// Memory of 2^N words.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=30))]
    pub log_n: u32,
    /// Memory of exactly this many words; overrides --log-n.
    #[arg(long)]
    pub n: Option<usize>,
    /// Number of accesses (default: one epoch, √n, for Ramen; 128 otherwise).
    #[arg(long)]
    pub accesses: Option<usize>,
    /// Preprocess every access before Init instead of just in time (either way preprocessing
    /// is timed and counted apart).
    #[arg(long)]
    pub preprocess: bool,
    /// Worker threads per party (only Ramen's preprocessing uses more than one).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Skip opening and checking the results and the final memory afterwards.
    #[arg(long)]
    pub no_verify: bool,
    /// Public seed of the synthetic workload (random memory and instructions) and of the
    /// synthetic dealer that shares it: benchmark data, not secret.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where each party's own secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
    /// Start from an all-zero memory instead of a random one.
    #[arg(long)]
    pub zero_memory: bool,
    /// Only writes instead of random reads and writes.
    #[arg(long)]
    pub writes_only: bool,
    /// FJKW15 only, **insecure**: Init opens the memory to two parties, which build the
    /// forest themselves, instead of the secure shared load (n accesses). For benchmarking
    /// accesses at large sizes; the report names the protocol `fjkw15-insecure-dealt-load`
    /// (`fjkw15-z32-insecure-dealt-load`).
    #[arg(long)]
    pub insecure_dealt_load: bool,
}

impl OramArgs {
    /// The word ring, after checking that the protocol runs over it.
    fn word(&self) -> Result<WordArg> {
        match (self.protocol, self.word) {
            (ProtocolArg::Ramen, Some(WordArg::Z64)) => bail!("--word: Ramen runs over Fp only"),
            (ProtocolArg::Duoram2p, Some(WordArg::Z64)) => {
                bail!("--word: duoram2p runs over Fp only (duoram2p-z64 is the 64-bit version)")
            }
            (ProtocolArg::Duoram2pZ64, Some(WordArg::Fp)) => {
                bail!("--word: duoram2p-z64 runs over Z64 only")
            }
            (ProtocolArg::Fjkw15, Some(WordArg::Fp)) => bail!("--word: FJKW15 runs over Z64 only"),
            (ProtocolArg::Fjkw15Z32, Some(_)) => {
                bail!("--word: fjkw15-z32 runs over Z/2^32 only (fjkw15 is the 64-bit version)")
            }
            // Not read for fjkw15-z32: its word is in its name.
            (ProtocolArg::Fjkw15Z32, None) => Ok(WordArg::Z64),
            (ProtocolArg::Duoram | ProtocolArg::Fjkw15 | ProtocolArg::Duoram2pZ64, None) => {
                Ok(WordArg::Z64)
            }
            (_, w) => Ok(w.unwrap_or(WordArg::Fp)),
        }
    }

    /// The number of parties of the protocol.
    pub fn parties(&self) -> Result<usize> {
        Ok(with_protocol!(
            self.protocol,
            self.word()?,
            self.insecure_dealt_load,
            P => <P as Protocol>::PARTIES
        ))
    }

    /// The validated configuration.
    pub fn config(&self) -> Result<BenchConfig> {
        self.word()?;
        if self.insecure_dealt_load && !self.protocol.is_fjkw15() {
            bail!("--insecure-dealt-load is for --protocol fjkw15 or fjkw15-z32 only");
        }
        if self.threads == 0 {
            bail!("--threads must be at least 1");
        }
        let n = match self.n {
            Some(n) => n,
            None => 1usize << self.log_n,
        };
        if n == 0 {
            bail!("--n must be at least 1");
        }
        let accesses = match (self.accesses, self.protocol) {
            (Some(0), _) => bail!("--accesses must be at least 1"),
            (Some(k), _) => k,
            (None, ProtocolArg::Ramen) => Params::new(n)?.epoch(),
            (None, _) => 128,
        };
        let mut cfg = BenchConfig::new(n, accesses);
        cfg.threads = self.threads;
        cfg.seed = self.seed;
        cfg.entropy = self.randomness.entropy();
        cfg.preprocess_first = self.preprocess;
        cfg.verify = !self.no_verify;
        cfg.zero_memory = self.zero_memory;
        cfg.writes_only = self.writes_only;
        Ok(cfg)
    }

    /// The options as arguments of a child `doram party … oram`.
    fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--protocol".to_string(),
            value_name(self.protocol),
            "--log-n".into(),
            self.log_n.to_string(),
            "--threads".into(),
            self.threads.to_string(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        if let Some(w) = self.word {
            args.extend(["--word".into(), value_name(w)]);
        }
        if let Some(n) = self.n {
            args.extend(["--n".into(), n.to_string()]);
        }
        if let Some(k) = self.accesses {
            args.extend(["--accesses".into(), k.to_string()]);
        }
        args.extend(self.randomness.args());
        for (flag, on) in [
            ("--preprocess", self.preprocess),
            ("--no-verify", self.no_verify),
            ("--zero-memory", self.zero_memory),
            ("--writes-only", self.writes_only),
            ("--insecure-dealt-load", self.insecure_dealt_load),
        ] {
            if on {
                args.push(flag.into());
            }
        }
        args
    }
}

/// The command-line spelling of a value.
pub(crate) fn value_name<T: ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// Arguments of `doram bench oram`.
#[derive(Debug, Args)]
pub struct BenchOramArgs {
    #[command(flatten)]
    pub run: OramArgs,
    /// Network to emulate on every link: `none`, `lan` (1 ms RTT, 10 Gbit/s), `wan` (30 ms one
    /// way, 100 Mbit/s) or `latency=MS,bandwidth=MBIT`.
    #[arg(long, default_value = "none", value_parser = crate::netarg::parse_net)]
    pub net: Shaping,
    /// Run the parties as three `doram party` processes over mutually authenticated TLS
    /// instead of threads of this process over in-process channels.
    #[arg(long)]
    pub processes: bool,
}

/// Runs the benchmark `a` on `net`: as threads of this process, or as three processes.
pub fn measure(a: &OramArgs, net: Shaping, processes: bool) -> Result<BenchReport> {
    let cfg = a.config()?;
    let word = a.word()?;
    let report = if processes {
        let n_parties = a.parties()?;
        let args = a.to_args();
        let parties: Vec<PartyBench> =
            crate::processes::run_n_parties_with(n_parties, "oram", |_| args.clone(), net)?;
        with_protocol!(a.protocol, word, a.insecure_dealt_load, P => BenchReport::new::<P>(
            &cfg,
            RunEnv::new("processes", net),
            parties
        ))
    } else {
        with_protocol!(a.protocol, word, a.insecure_dealt_load, P => doram_oram::bench::run_local::<P>(&cfg, net)?)
    };
    Ok(report)
}

/// The command line of this process, as a report records it.
fn this_command() -> String {
    let mut args = std::env::args();
    args.next();
    std::iter::once("doram".to_string())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `doram bench oram`.
pub fn bench(a: &BenchOramArgs, json: bool) -> Result<()> {
    bench_with(&a.run, a.net, a.processes, json)
}

/// Runs the benchmark `a` on `net` and prints its report (`doram bench oram`, and the
/// protocol-named benches that share it).
pub fn bench_with(a: &OramArgs, net: Shaping, processes: bool, json: bool) -> Result<()> {
    let mut r = measure(a, net, processes)?;
    r.command = Some(this_command());
    if json {
        print_json(&r)
    } else {
        print_report(&r);
        Ok(())
    }
}

/// Prints a report for people: one line per phase, then one per party.
pub fn print_report(r: &BenchReport) {
    println!(
        "{} over {}, n = {}, {} accesses ({} ops), {} thread(s)/party, parties as {}{}:",
        r.protocol,
        r.word,
        r.n,
        r.accesses,
        r.ops,
        r.threads,
        r.env.parties_as,
        if r.verified {
            ", every result verified"
        } else {
            ""
        }
    );
    println!(
        "  {:<22} {:>11} {:>11} {:>9} {:>8}",
        "phase", "ms", "bytes", "messages", "rounds"
    );
    let line = |name: &str, t: &Totals| {
        println!(
            "  {name:<22} {:>11.3} {:>11} {:>9.1} {:>8.2}",
            t.ms,
            human_bytes(t.bytes as u64),
            t.messages,
            t.rounds
        );
    };
    line("online / access", &r.per_access.online);
    line("preprocessing / access", &r.per_access.preprocessing);
    line("Init (once)", &r.init);
    line("setup (once)", &r.setup);
    println!(
        "  amortized {:.3} ms/access, {}/access (preprocessing and online; Init apart)",
        r.per_access.amortized_ms,
        human_bytes(r.per_access.bytes as u64)
    );
    println!("  randomness: {}; inputs: {}", r.randomness, r.dealer);
    for p in &r.parties {
        print_party(p);
    }
}

fn print_party(p: &PartyBench) {
    let all = [&p.preprocessing, &p.init, &p.online];
    println!(
        "  {}: sent {} in {} messages, {} rounds ({} online), peak memory {}",
        p.party,
        human_bytes(all.iter().map(|f| f.bytes_sent).sum()),
        all.iter().map(|f| f.messages_sent).sum::<u64>(),
        all.iter().map(|f| f.rounds).sum::<u64>(),
        p.online.rounds,
        p.peak_memory_bytes.map_or("?".into(), human_bytes)
    );
    let timed: Vec<String> = p
        .steps
        .iter()
        .filter_map(|s| s.ms.map(|ms| format!("{} {ms:.1} ms", s.name)))
        .collect();
    if !timed.is_empty() {
        println!("      steps: {}", timed.join(", "));
    }
}

/// The `oram` job of `doram party`: this party's side over a connected session; prints this
/// party's figures (JSON: a [`PartyBench`]).
pub fn party_job(session: Session, a: &OramArgs, json: bool) -> Result<()> {
    let cfg = a.config()?;
    let me = session.me();
    let p = with_protocol!(a.protocol, a.word()?, a.insecure_dealt_load, P => doram_oram::bench::run_party::<P>(session, &cfg))
        .with_context(|| format!("{me} failed"))?;
    if json {
        print_json(&p)
    } else {
        print_party(&p);
        Ok(())
    }
}

/// One point of `doram bench compare`: protocol `p` at 2^`log_n` words on `net`, preprocessing
/// first where the protocol's material for all the accesses fits its bound, else each access's
/// just before it (timed apart either way). Ramen runs one epoch of random reads and writes (at most 1024 accesses); Duoram and
/// the linear scan run 128 writes (a Duoram write is a READ then an UPDATE, the operation
/// Ramen's comparison measured, since a Ramen access is both). `args.accesses` overrides the
/// count.
pub fn compare_point(
    p: ProtocolArg,
    log_n: u32,
    net: &crate::report::NamedNet,
    args: &crate::report::PointArgs,
) -> Result<crate::report::Row> {
    let n = 1usize << log_n;
    let insecure = args.insecure_dealt_load && p.is_fjkw15();
    let accesses = match (args.accesses, p) {
        (Some(k), _) => k,
        (None, ProtocolArg::Ramen) => Params::new(n)?.epoch().min(1024),
        (None, _) => 128,
    };
    let mut a = OramArgs {
        protocol: p,
        word: None,
        log_n,
        n: None,
        accesses: Some(accesses),
        preprocess: false,
        threads: if p == ProtocolArg::Ramen {
            args.threads
        } else {
            1
        },
        no_verify: !args.verify,
        seed: args.seed,
        randomness: args.randomness,
        zero_memory: false,
        writes_only: p != ProtocolArg::Ramen,
        insecure_dealt_load: insecure,
    };
    // Up front where the protocol's material for all the accesses stays within its bound
    // (`Protocol::preprocess_upfront`: 3P-Duoram's and 2P-Duoram's material is O(n) words
    // per access, about 100 GiB for 128 accesses at 2^24); otherwise each access is
    // preprocessed just before it, timed apart all the same.
    a.preprocess = with_protocol!(p, a.word()?, insecure, P => {
        <P as Protocol>::preprocess_upfront(n, accesses)
    });
    let r = measure(&a, net.shaping, false)?;
    Ok(crate::report::Row {
        protocol: match p.insecure_name() {
            Some(name) if insecure => name,
            _ => p.name(),
        },
        net: net.name.clone(),
        log_n,
        accesses: r.accesses,
        online_ms: r.per_access.online.ms,
        preprocessing_ms: r.per_access.preprocessing.ms,
        total_ms: r.per_access.amortized_ms,
        online_bytes: r.per_access.online.bytes,
        total_bytes: r.per_access.bytes,
        online_rounds: r.per_access.online.rounds,
        online_messages: r.per_access.online.messages,
        verified: r.verified,
    })
}

/// Arguments of `doram bench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// JSON reports of `doram --json bench oram` (or `bench ramen`), or directories holding
    /// them (their `*.json` files, in name order; files of other shapes are skipped with a
    /// note).
    #[arg(required_unless_present = "figures", conflicts_with = "figures")]
    pub paths: Vec<std::path::PathBuf>,
    /// One row per report instead of one per configuration (the median of its runs).
    #[arg(long, conflicts_with = "figures")]
    pub each: bool,
    /// Instead of DORAM rows, a table of figures computed from bench-results JSON as this
    /// manifest says (README's is `bench-results/figures.toml`).
    #[arg(long, value_name = "MANIFEST")]
    pub figures: Option<std::path::PathBuf>,
    /// The manifest's table to print (default: its first).
    #[arg(long, value_name = "NAME", requires = "figures")]
    pub table: Option<String>,
}

/// One row of `doram bench report`.
#[derive(Debug, Serialize)]
struct ReportRow {
    protocol: String,
    word: String,
    n: usize,
    accesses: usize,
    parties_as: String,
    online_ms: f64,
    preprocessing_ms: f64,
    amortized_ms: f64,
    online_bytes: f64,
    bytes: f64,
    online_rounds: f64,
    init_ms: f64,
    init_bytes: f64,
    verified: bool,
    command: String,
    file: String,
    runs: usize,
}

/// One row per configuration (protocol, word, size, accesses, how the parties ran, command),
/// in order of first appearance: each figure the median of its runs (the upper median for an
/// even count), `verified` only if every run verified.
fn medians(rows: Vec<ReportRow>) -> Vec<ReportRow> {
    let key = |r: &ReportRow| {
        (
            r.protocol.clone(),
            r.word.clone(),
            r.n,
            r.accesses,
            r.parties_as.clone(),
            r.command.clone(),
        )
    };
    let mut groups: Vec<Vec<ReportRow>> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|g| key(&g[0]) == key(&r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let med = |f: fn(&ReportRow) -> f64| {
                let mut v: Vec<f64> = g.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            ReportRow {
                online_ms: med(|r| r.online_ms),
                preprocessing_ms: med(|r| r.preprocessing_ms),
                amortized_ms: med(|r| r.amortized_ms),
                online_bytes: med(|r| r.online_bytes),
                bytes: med(|r| r.bytes),
                online_rounds: med(|r| r.online_rounds),
                init_ms: med(|r| r.init_ms),
                init_bytes: med(|r| r.init_bytes),
                verified: g.iter().all(|r| r.verified),
                runs: g.len(),
                file: g
                    .iter()
                    .map(|r| r.file.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                protocol: g[0].protocol.clone(),
                word: g[0].word.clone(),
                n: g[0].n,
                accesses: g[0].accesses,
                parties_as: g[0].parties_as.clone(),
                command: g[0].command.clone(),
            }
        })
        .collect()
}

/// The `*.json` files of `paths` (a directory's in name order).
fn report_files(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// `2^k` for a power of two, else the number.
fn size_label(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// Runs `doram bench report`: one markdown table row per report (or, with `--json`, the rows).
pub fn report(a: &ReportArgs, json: bool) -> Result<()> {
    if let Some(manifest) = &a.figures {
        return crate::figures::print(manifest, a.table.as_deref(), json);
    }
    let mut rows = Vec::new();
    for f in report_files(&a.paths)? {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let r: BenchReport = match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                eprintln!(
                    "doram: skipping {}: not a DORAM bench report ({e})",
                    f.display()
                );
                continue;
            }
        };
        if r.schema != doram_oram::bench::SCHEMA {
            eprintln!("doram: skipping {}: schema {}", f.display(), r.schema);
            continue;
        }
        let pa = &r.per_access;
        rows.push(ReportRow {
            protocol: r.protocol.clone(),
            word: r.word.clone(),
            n: r.n,
            accesses: r.accesses,
            parties_as: r.env.parties_as.clone(),
            online_ms: pa.online.ms,
            preprocessing_ms: pa.preprocessing.ms,
            amortized_ms: pa.amortized_ms,
            online_bytes: pa.online.bytes,
            bytes: pa.bytes,
            online_rounds: pa.online.rounds,
            init_ms: r.init.ms,
            init_bytes: r.init.bytes,
            verified: r.verified,
            command: r.command.clone().unwrap_or_default(),
            file: f.display().to_string(),
            runs: 1,
        });
    }
    if rows.is_empty() {
        bail!("no DORAM bench report among the files given");
    }
    if !a.each {
        rows = medians(rows);
    }
    if json {
        return print_json(&rows);
    }
    println!(
        "| protocol | n | accesses | online ms | preprocessing ms | amortized ms | online B | all B | online rounds | Init ms | Init B | verified | runs | command |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} ({}) | {} | {} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} | {:.2} | {:.1} | {} | {} | {} | `{}` |",
            r.protocol,
            r.word,
            size_label(r.n),
            r.accesses,
            r.online_ms,
            r.preprocessing_ms,
            r.amortized_ms,
            r.online_bytes,
            r.bytes,
            r.online_rounds,
            r.init_ms,
            human_bytes(r.init_bytes as u64),
            if r.verified { "yes" } else { "no" },
            r.runs,
            r.command
        );
    }
    Ok(())
}
