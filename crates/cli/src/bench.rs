//! `doram bench`: measurements with bytes, messages and rounds next to times.
//!
//! Each protocol adds a subcommand; all of them print the same report shape (see
//! [`crate::report`]) and medians over repetitions.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use doram_core::PartyId;
use doram_dpf::{Bgi, BgiMpDpf, DpfKey, HalfTree, HalfTreeMpDpf, MultiPointDpf, SinglePointDpf};
use doram_field::Fp;
use doram_net::{Session, Transport, loopback_mesh};
use serde::Serialize;
use std::time::{Duration, Instant};

use crate::progress::bar;
use crate::report::{PartyFigures, human_bytes, print_json};

/// Arguments of `doram bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub what: BenchWhat,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchWhat {
    /// Distributed point functions: key generation and full-domain evaluation into Fp.
    Dpf(DpfArgs),
    /// Transport: round-trip latency and bulk throughput between two parties on loopback.
    Net(NetArgs),
    /// Any three-party DORAM through one runner: time, bytes, messages and rounds per party
    /// for setup, Init, preprocessing and online apart, every result checked against a
    /// plaintext memory.
    ///
    /// Example: `doram bench oram --protocol ramen --log-n 16 --preprocess --net lan`.
    Oram(crate::oram::BenchOramArgs),
    /// Markdown table rows (protocol, size, phase times, bytes, rounds, the command) from JSON
    /// reports of `doram --json bench oram`, as BENCHMARKS.md shows them; with `--figures`, a
    /// table of figures from any bench JSON as a manifest says, as README shows them.
    ///
    /// Example: `doram bench report bench-results/2026-11-26-epyc`, or
    /// `doram bench report --figures bench-results/figures.toml`.
    Report(crate::oram::ReportArgs),
    /// The Ramen three-party DORAM (`bench oram --protocol ramen` with Ramen's defaults).
    Ramen(crate::ramen::BenchRamenArgs),
    /// The three-party Duoram DORAM: time, bytes, messages and rounds per READ, UPDATE and
    /// WRITE, preprocessing apart from online.
    Duoram(crate::duoram::BenchDuoramArgs),
    /// Sweep several DORAM protocols over sizes and networks: CSV, JSON, SVG plots and the
    /// crossover sizes.
    ///
    /// Example: `doram bench compare --protocols ramen,duoram --log-n 10..20:2 --net lan,wan`.
    Compare(crate::compare::CompareArgs),
    /// Secure RAM programs on random instances: time, bytes and rounds per party, DORAM
    /// accesses apart from the CPU step; `--crossover` for binary search against a linear scan.
    ///
    /// Example: `doram bench program --program binary-search --sizes 1024,65536 --crossover`.
    Program(crate::program::BenchProgramArgs),
    /// Three-server PIR with guaranteed output: offline, online and client time and bytes per
    /// query against the paper's formulas (all four parties on this host).
    ///
    /// Example: `doram bench pir --log-n 16,20 --record-size 8`.
    Pir(crate::pir::BenchPirArgs),
    /// Oblivious transfer extension (IKNP or SoftSpoken) between two parties: OTs per second
    /// and bytes per OT per party, after setup.
    ///
    /// Example: `doram bench ot --ext softspoken --k 4 --kind random --backend tls`.
    Ot(crate::twopc::BenchOtArgs),
    /// Garbled circuits, half-gates or three-halves (`--scheme`): garbling and evaluation
    /// alone, and two parties over the transport (inputs by OT): AND gates per second and bytes
    /// per AND gate per party.
    ///
    /// Example: `doram bench gc --circuit bristol --file crates/twopc/tests/data/aes_128.txt`.
    Gc(crate::twopc::BenchGcArgs),
    /// Gordon et al.'s secure two-party RAM computation (GKK12): the three-party secure load
    /// (server, client and a setup helper that never sees the data), then ORAM reads and
    /// binary searches between the two parties; times, bytes per party and AND gates per
    /// access beside the paper's Table 2, every result checked.
    ///
    /// Example: `doram bench gkk12 --log-n 16,20 --payload-bits 512 --searches 3`.
    Gkk12(crate::gkk12::BenchGkk12Args),
    /// The FJKW15 access itself on XOR-shared records of d bytes (the setting of the authors'
    /// Java implementation): three parties over the transport, a forest dealt insecurely, then
    /// reads with each one's pre-computation timed and counted apart, every record checked;
    /// the anchors beside at w = 32 with 4-byte records.
    ///
    /// Example: `doram bench fjkw15 --log-n 12,20,24 --record-bytes 4,8`.
    Fjkw15(crate::fjkw15::BenchFjkw15Args),
}

/// Single-point DPF constructions.
#[derive(Debug, Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Construction {
    /// Guo et al. 2022: one hash call per tree node.
    HalfTree,
    /// Boyle–Gilboa–Ishai 2016: two hash calls per node.
    Bgi,
}

/// Arguments of `doram bench dpf`.
#[derive(Debug, Args)]
pub struct DpfArgs {
    /// Domain of 2^N points.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=28))]
    pub log_n: u32,
    /// Single-point construction.
    #[arg(long, value_enum, default_value_t = Construction::HalfTree)]
    pub construction: Construction,
    /// Points of a multi-point DPF (cuckoo hashing); 0 measures a single-point DPF.
    #[arg(long, default_value_t = 0)]
    pub points: usize,
    /// Threads for full-domain evaluation (1 = the single-thread path).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Repetitions; the median is reported.
    #[arg(long, default_value_t = 11)]
    pub repeat: usize,
}

/// Transport backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// In-process channels.
    Local,
    /// Plain TCP (no authentication, no encryption).
    Tcp,
    /// Mutually authenticated TLS 1.3.
    Tls,
}

/// Arguments of `doram bench net`.
#[derive(Debug, Args)]
pub struct NetArgs {
    /// Backend.
    #[arg(long, value_enum, default_value_t = Backend::Tls)]
    pub backend: Backend,
    /// MiB sent one way for the throughput figure.
    #[arg(long, default_value_t = 256)]
    pub mib: usize,
    /// Frame size in KiB.
    #[arg(long, default_value_t = 1024)]
    pub frame_kib: usize,
    /// Ping-pong round trips for the latency figure.
    #[arg(long, default_value_t = 1000)]
    pub round_trips: usize,
}

/// Runs `doram bench`.
pub fn run(args: &BenchArgs, json: bool, quiet: bool) -> Result<()> {
    match &args.what {
        BenchWhat::Dpf(a) => bench_dpf(a, json, quiet),
        BenchWhat::Net(a) => bench_net(a, json, quiet),
        BenchWhat::Oram(a) => crate::oram::bench(a, json),
        BenchWhat::Report(a) => crate::oram::report(a, json),
        BenchWhat::Ramen(a) => crate::ramen::bench(a, json),
        BenchWhat::Duoram(a) => crate::duoram::bench(a, json),
        BenchWhat::Compare(a) => crate::compare::run(a, json, quiet),
        BenchWhat::Program(a) => crate::program::run(a, json, quiet),
        BenchWhat::Pir(a) => crate::pir::bench(a, json, quiet),
        BenchWhat::Ot(a) => crate::twopc::bench_ot(a, json),
        BenchWhat::Gc(a) => crate::twopc::bench_gc(a, json),
        BenchWhat::Gkk12(a) => crate::gkk12::bench(a, json),
        BenchWhat::Fjkw15(a) => crate::fjkw15::bench(a, json),
    }
}

/// A prepared full-domain evaluation writing into its argument.
type EvalFn = Box<dyn Fn(&mut [Fp]) + Send + Sync>;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[derive(Debug, Serialize)]
struct DpfReport {
    benchmark: &'static str,
    construction: Construction,
    log_n: u32,
    points: usize,
    threads: usize,
    repeat: usize,
    key_bytes: usize,
    gen_ms: f64,
    eval_all_ms: f64,
    ns_per_point: f64,
}

fn bench_dpf(a: &DpfArgs, json: bool, quiet: bool) -> Result<()> {
    if a.repeat == 0 || a.threads == 0 {
        bail!("--repeat and --threads must be at least 1");
    }
    let n = 1usize << a.log_n;
    if a.points > n {
        bail!("--points {} exceeds the domain 2^{}", a.points, a.log_n);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads)
        .build()?;
    let mut rng = rand::rng();
    let mut out = vec![Fp::ZERO; n];
    let pb = bar(a.repeat as u64, "dpf eval_all", json || quiet);
    let (mut gens, mut evals) = (Vec::new(), Vec::new());
    let mut key_bytes = 0;
    for _ in 0..a.repeat {
        use rand::Rng;
        let t = Instant::now();
        let par = a.threads > 1;
        let eval: EvalFn = if a.points > 0 {
            let pts = rand::seq::index::sample(&mut rng, n, a.points).into_vec();
            let vals: Vec<Fp> = pts.iter().map(|_| Fp::random(&mut rng)).collect();
            match a.construction {
                Construction::HalfTree => {
                    let (k0, _k1) = HalfTreeMpDpf::gen_keys(n, &pts, &vals, &mut rng)?;
                    gens.push(ms(t.elapsed()));
                    key_bytes = k0.size_bytes();
                    Box::new(move |o: &mut [Fp]| {
                        if par {
                            o.copy_from_slice(&HalfTreeMpDpf::eval_all_par(&k0));
                        } else {
                            HalfTreeMpDpf::eval_all_into(&k0, o);
                        }
                    })
                }
                Construction::Bgi => {
                    let (k0, _k1) = BgiMpDpf::gen_keys(n, &pts, &vals, &mut rng)?;
                    gens.push(ms(t.elapsed()));
                    key_bytes = k0.size_bytes();
                    Box::new(move |o: &mut [Fp]| {
                        if par {
                            o.copy_from_slice(&BgiMpDpf::eval_all_par(&k0));
                        } else {
                            BgiMpDpf::eval_all_into(&k0, o);
                        }
                    })
                }
            }
        } else {
            let alpha = rng.random_range(0..n);
            let beta = Fp::random(&mut rng);
            match a.construction {
                Construction::HalfTree => {
                    let (k0, _k1) = HalfTree::gen_keys(n, alpha, beta, &mut rng);
                    gens.push(ms(t.elapsed()));
                    key_bytes = k0.size_bytes();
                    Box::new(move |o: &mut [Fp]| {
                        if par {
                            HalfTree::eval_all_par_into(&k0, o);
                        } else {
                            HalfTree::eval_all_into(&k0, o);
                        }
                    })
                }
                Construction::Bgi => {
                    let (k0, _k1) = Bgi::gen_keys(n, alpha, beta, &mut rng);
                    gens.push(ms(t.elapsed()));
                    key_bytes = k0.size_bytes();
                    Box::new(move |o: &mut [Fp]| {
                        if par {
                            Bgi::eval_all_par_into(&k0, o);
                        } else {
                            Bgi::eval_all_into(&k0, o);
                        }
                    })
                }
            }
        };
        let t = Instant::now();
        pool.install(|| eval(&mut out));
        evals.push(ms(t.elapsed()));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let eval_all_ms = median(evals);
    let r = DpfReport {
        benchmark: "dpf",
        construction: a.construction,
        log_n: a.log_n,
        points: a.points,
        threads: a.threads,
        repeat: a.repeat,
        key_bytes,
        gen_ms: median(gens),
        eval_all_ms,
        ns_per_point: eval_all_ms * 1e6 / n as f64,
    };
    if json {
        print_json(&r)?;
    } else {
        let what = if a.points > 0 {
            format!("cuckoo multi-point DPF ({} points)", a.points)
        } else {
            format!("{:?} single-point DPF", a.construction)
        };
        println!(
            "{what} over 2^{} points into Fp, {} thread(s), median of {}:",
            a.log_n, a.threads, a.repeat
        );
        println!(
            "  gen {:.3} ms, key {}, full-domain eval {:.3} ms ({:.2} ns/point)",
            r.gen_ms,
            human_bytes(r.key_bytes as u64),
            r.eval_all_ms,
            r.ns_per_point
        );
    }
    Ok(())
}

#[derive(Debug, Serialize)]
struct NetReport {
    benchmark: &'static str,
    backend: Backend,
    bytes: usize,
    frame_bytes: usize,
    throughput_gb_per_s: f64,
    round_trip_us: f64,
    parties: Vec<PartyFigures>,
}

pub(crate) fn sessions(backend: Backend) -> Result<(Vec<Session>, Option<tempfile::TempDir>)> {
    sessions_n(backend, 2)
}

/// Sessions of `n` parties connected over `backend` on loopback (and the directory of their
/// certificates, to keep while they run).
pub(crate) fn sessions_n(
    backend: Backend,
    n: usize,
) -> Result<(Vec<Session>, Option<tempfile::TempDir>)> {
    let transport = match backend {
        Backend::Local => return Ok((Session::local_mesh(n), None)),
        Backend::Tcp => Transport::DangerousPlaintext,
        Backend::Tls => Transport::Tls,
    };
    let dir = tempfile::tempdir()?;
    let sessions = loopback_mesh(dir.path(), n, transport, doram_net::DEFAULT_TIMEOUT)
        .context("could not connect the parties")?;
    Ok((sessions, Some(dir)))
}

fn bench_net(a: &NetArgs, json: bool, quiet: bool) -> Result<()> {
    if a.frame_kib == 0 || a.mib == 0 || a.round_trips == 0 {
        bail!("--mib, --frame-kib and --round-trips must be positive");
    }
    let frame = a.frame_kib * 1024;
    let frames = (a.mib * 1024 * 1024).div_ceil(frame);
    let (mut ss, _dir) = sessions(a.backend)?;
    let mut s1 = ss.pop().context("two sessions")?;
    let mut s0 = ss.pop().context("two sessions")?;
    let rt = a.round_trips;
    let pb = bar(frames as u64, "bulk", json || quiet);
    let receiver = std::thread::spawn(move || -> Result<Session> {
        // Ping-pong, then drain the bulk transfer and acknowledge it.
        for _ in 0..rt {
            let m = s1.recv_bytes(PartyId::P0)?;
            s1.send_bytes(PartyId::P0, &m)?;
        }
        for _ in 0..frames {
            s1.recv_bytes(PartyId::P0)?;
        }
        s1.send_bytes(PartyId::P0, &[1])?;
        Ok(s1)
    });
    let t = Instant::now();
    for _ in 0..rt {
        s0.send_bytes(PartyId::P1, &[0u8; 8])?;
        s0.recv_bytes(PartyId::P1)?;
    }
    let round_trip_us = t.elapsed().as_secs_f64() * 1e6 / rt as f64;
    let payload = vec![0xa5u8; frame];
    let t = Instant::now();
    for _ in 0..frames {
        s0.send_bytes(PartyId::P1, &payload)?;
        pb.inc(1);
    }
    s0.recv_bytes(PartyId::P1)?;
    let secs = t.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let s1 = match receiver.join() {
        Ok(r) => r?,
        Err(_) => bail!("the receiving party panicked"),
    };
    let bytes = frames * frame;
    let r = NetReport {
        benchmark: "net",
        backend: a.backend,
        bytes,
        frame_bytes: frame,
        throughput_gb_per_s: bytes as f64 / secs / 1e9,
        round_trip_us,
        parties: vec![
            PartyFigures::from_stats(PartyId::P0, s0.stats()),
            PartyFigures::from_stats(PartyId::P1, s1.stats()),
        ],
    };
    if json {
        print_json(&r)?;
    } else {
        println!(
            "{:?} on loopback: {:.2} GB/s one way ({} in {} KiB frames), round trip {:.1} µs",
            a.backend,
            r.throughput_gb_per_s,
            human_bytes(bytes as u64),
            a.frame_kib,
            r.round_trip_us
        );
    }
    Ok(())
}
