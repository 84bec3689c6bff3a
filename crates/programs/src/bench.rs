//! Benchmarks: each program on a random instance of a given size, three parties on threads
//! over an in-process mesh, with each party's time, bytes, messages and rounds split by
//! [`Part`] — in particular DORAM accesses ([`Part::Oram`]) against the CPU step
//! ([`Part::Cpu`]) — and the output checked against the plaintext program.
//!
//! The backend is a type parameter; the `doram` facade (and `doram bench program`) chooses it
//! at run time by name.
//! ```
//! use doram_field::Fp;
//! use doram_oram::LinearScanOram;
//! use doram_programs::bench::{BenchConfig, Program, run};
//!
//! let report = run::<LinearScanOram<Fp>>(&BenchConfig::new(Program::BinarySearch, 100))?;
//! assert_eq!(report.verified, true);
//! let json = report.to_json();
//! assert_eq!(json["program"], "binary-search");
//! assert_eq!(json["backend"], "linear-scan");
//! # Ok::<(), doram_programs::ProgramError>(())
//! ```
//!
//! # Measured
//! `cargo run --release -p doram --example programs_bench -- …` (and `doram bench
//! program …`) print each run's figures; the recorded ones, with the commands and the load
//! they ran under, are in BENCHMARKS.md (Secure RAM programs section) and the README's table. The
//! shape of the results, which does not change with the machine: on Duoram a binary search
//! over 2^20 entries is dominated by its 8 DORAM accesses, on Ramen by its first epoch's
//! preprocessing; without network shaping the DORAM binary search beats the engine's linear
//! scan from n = 64, while under [`Shaping::wan`] the linear scan's 14 rounds beat the DORAM
//! search's ~110 up to n ≈ 2000.
//!
//! Instances: binary search — n random sorted 64-bit entries and a key drawn from them half of
//! the time; BFS — V vertices and 2V random edges; Dijkstra — V vertices, 4V random edges with
//! weights below 2^16; matching — k random preference lists per side. [`crossover`] runs the
//! DORAM binary search and the linear scan in the engine ([`Program::LinearSearch`]) side by
//! side.

use std::time::{Duration, Instant};

use doram_core::{Entropy, PartyId, Seed};
use doram_mpc::Counters;
use doram_net::{LocalMesh, Shaping};
use doram_prim::AesPrg;
use rand_core::RngCore;
use serde_json::{Value, json};

use crate::error::ProgramError;
use crate::host::Host;
use crate::input::{Edge, Prefs};
use crate::machine::{Backend, Cost, Machine, Meter, Part};
use crate::roles::{PartyRun, Roles};

/// A program to benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// [`binary_search`](crate::binary_search) on a DORAM; size n.
    BinarySearch,
    /// [`binary_search::linear_search`](crate::binary_search::linear_search), a linear scan in the engine; size n.
    LinearSearch,
    /// [`bfs`](crate::bfs); size V, with E = 2V.
    Bfs,
    /// [`dijkstra`](crate::dijkstra); size V, with E = 4V.
    Dijkstra,
    /// [`matching`](crate::matching); size k.
    Matching,
}

impl Program {
    /// Every program.
    pub const ALL: [Program; 5] = [
        Program::BinarySearch,
        Program::LinearSearch,
        Program::Bfs,
        Program::Dijkstra,
        Program::Matching,
    ];

    /// The name used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Program::BinarySearch => "binary-search",
            Program::LinearSearch => "linear-search",
            Program::Bfs => "bfs",
            Program::Dijkstra => "dijkstra",
            Program::Matching => "matching",
        }
    }

    /// The program called `name`.
    pub fn from_name(name: &str) -> Option<Program> {
        Program::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// The program.
    pub program: Program,
    /// n, V or k (see [`Program`]).
    pub size: usize,
    /// Seed of the random instance (public benchmark data, not a secret).
    pub seed: u64,
    /// Where the parties' secret randomness comes from.
    pub entropy: Entropy,
    /// The roles.
    pub roles: Roles,
    /// Traffic shaping of the in-process links (none: as fast as the threads go).
    pub shaping: Option<Shaping>,
}

impl BenchConfig {
    /// A configuration with instance seed 1, OS randomness and the default roles.
    pub fn new(program: Program, size: usize) -> BenchConfig {
        BenchConfig {
            program,
            size,
            seed: 1,
            entropy: Entropy::Os,
            roles: Roles::default(),
            shaping: None,
        }
    }
}

/// One party's measurements.
#[derive(Clone, Debug)]
pub struct PartyReport {
    /// The party.
    pub party: PartyId,
    /// Costs per part.
    pub meter: Meter,
    /// Engine counters.
    pub counters: Counters,
}

/// The result of one benchmark run.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// The configuration.
    pub config: BenchConfig,
    /// The backend's name ([`Protocol::NAME`](doram_oram::Protocol::NAME)), or `engine` for
    /// [`Program::LinearSearch`], which uses no DORAM.
    pub backend: &'static str,
    /// Public sizes, by name.
    pub sizes: Vec<(&'static str, u64)>,
    /// Wall-clock time of the whole run (all three parties, end to end).
    pub wall: Duration,
    /// Whether the receiver's output matched the plaintext program.
    pub verified: bool,
    /// Per-party measurements, in party order.
    pub parties: Vec<PartyReport>,
}

fn cost_json(c: &Cost) -> Value {
    json!({
        "time_s": c.time.as_secs_f64(),
        "bytes_sent": c.bytes_sent,
        "msgs_sent": c.msgs_sent,
        "rounds": c.rounds,
        "accesses": c.accesses,
    })
}

impl BenchReport {
    /// The largest per-party cost of `part` (time, bytes and rounds maximised separately).
    pub fn max_part(&self, part: Part) -> Cost {
        let mut m = Cost::default();
        for p in &self.parties {
            let c = p.meter.get(part);
            m.time = m.time.max(c.time);
            m.bytes_sent = m.bytes_sent.max(c.bytes_sent);
            m.msgs_sent = m.msgs_sent.max(c.msgs_sent);
            m.rounds = m.rounds.max(c.rounds);
            m.accesses = m.accesses.max(c.accesses);
        }
        m
    }

    /// The report as JSON: configuration, sizes, wall time, verification, and per party the
    /// costs of every part, the total and the engine counters.
    pub fn to_json(&self) -> Value {
        let parties: Vec<Value> = self
            .parties
            .iter()
            .map(|p| {
                let parts: serde_json::Map<String, Value> = Part::ALL
                    .iter()
                    .map(|&part| (part.name().to_string(), cost_json(&p.meter.get(part))))
                    .collect();
                json!({
                    "party": p.party.to_string(),
                    "parts": parts,
                    "total": cost_json(&p.meter.total()),
                    "counters": {
                        "comparisons": p.counters.comparisons,
                        "products": p.counters.products,
                        "bits_made": p.counters.bits_made,
                        "bits_used": p.counters.bits_used,
                        "inline_refills": p.counters.inline_refills,
                    },
                })
            })
            .collect();
        let sizes: serde_json::Map<String, Value> = self
            .sizes
            .iter()
            .map(|&(k, v)| (k.to_string(), json!(v)))
            .collect();
        json!({
            "program": self.config.program.name(),
            "backend": self.backend,
            "sizes": sizes,
            "seed": self.config.seed,
            "randomness": self.config.entropy.to_string(),
            "net": net_name(self.config.shaping),
            "wall_s": self.wall.as_secs_f64(),
            "verified": self.verified,
            "parties": parties,
        })
    }
}

fn net_name(s: Option<Shaping>) -> String {
    match s {
        None => "none".into(),
        Some(s) => format!("{:?}", s),
    }
}

fn reports<T>(runs: &[PartyRun<T>]) -> Vec<PartyReport> {
    runs.iter()
        .zip(PartyId::ALL)
        .map(|(r, party)| PartyReport {
            party,
            meter: r.meter.clone(),
            counters: r.counters,
        })
        .collect()
}

fn rng_for(seed: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(b"instance");
    AesPrg::new(Seed(s))
}

fn below(rng: &mut AesPrg, n: u64) -> u64 {
    // Multiply-shift; the tiny bias is irrelevant for benchmark instances.
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

fn random_edges(rng: &mut AesPrg, v: u64, e: usize, max_w: u64) -> Vec<Edge> {
    (0..e)
        .map(|_| Edge {
            from: below(rng, v),
            to: below(rng, v),
            weight: below(rng, max_w + 1),
        })
        .collect()
}

fn random_prefs(rng: &mut AesPrg, k: usize) -> Prefs {
    let list = |rng: &mut AesPrg| {
        let mut v: Vec<u64> = (0..k as u64).collect();
        for i in (1..k).rev() {
            let j = below(rng, i as u64 + 1) as usize;
            v.swap(i, j);
        }
        v
    };
    Prefs {
        proposers: (0..k).map(|_| list(rng)).collect(),
        acceptors: (0..k).map(|_| list(rng)).collect(),
    }
}

/// Runs one benchmark on the backend `B` (unused by [`Program::LinearSearch`]).
///
/// # Errors
/// The first party's error.
pub fn run<B: Backend>(config: &BenchConfig) -> Result<BenchReport, ProgramError> {
    run_on::<Machine<B>>(config)
}

/// [`run`] on any machine: the three-party [`Machine`] over a backend, or the two-party
/// [`Machine2`](crate::Machine2) (with roles among `P0` and `P1`).
///
/// # Errors
/// The first party's error.
pub fn run_on<H: Host>(config: &BenchConfig) -> Result<BenchReport, ProgramError> {
    let mut rng = rng_for(config.seed);
    let n = config.size;
    let mesh = || match config.shaping {
        Some(s) => LocalMesh::new(H::PARTIES).shaping(s),
        None => LocalMesh::new(H::PARTIES),
    };
    let t0 = Instant::now();
    let (sizes, verified, parties) = match config.program {
        Program::BinarySearch | Program::LinearSearch => {
            let mut data: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            data.sort_unstable();
            let key = if n > 0 && rng.next_u64().is_multiple_of(2) {
                data[below(&mut rng, n as u64) as usize]
            } else {
                rng.next_u64()
            };
            let (ok, parties) = if config.program == Program::BinarySearch {
                measure::<crate::BinarySearch, H>(mesh(), config, &data[..], key)?
            } else {
                measure::<crate::LinearSearch, H>(mesh(), config, &data[..], key)?
            };
            (vec![("n", n as u64)], ok, parties)
        }
        Program::Bfs => {
            let v = n.max(1) as u64;
            let edges = random_edges(&mut rng, v, 2 * n, 1);
            let source = below(&mut rng, v);
            let (ok, parties) = measure::<crate::Bfs, H>(mesh(), config, (v, &edges[..]), source)?;
            (vec![("V", v), ("E", edges.len() as u64)], ok, parties)
        }
        Program::Dijkstra => {
            let v = n.max(1) as u64;
            let edges = random_edges(&mut rng, v, 4 * n, (1 << 16) - 1);
            let source = below(&mut rng, v);
            let (ok, parties) =
                measure::<crate::Dijkstra, H>(mesh(), config, (v, &edges[..]), source)?;
            (vec![("V", v), ("E", edges.len() as u64)], ok, parties)
        }
        Program::Matching => {
            let prefs = random_prefs(&mut rng, n);
            let (ok, parties) = measure::<crate::StableMatching, H>(mesh(), config, &prefs, ())?;
            (vec![("k", n as u64)], ok, parties)
        }
    };
    let backend = if config.program == Program::LinearSearch {
        "engine"
    } else {
        H::BACKEND
    };
    Ok(BenchReport {
        config: *config,
        backend,
        sizes,
        wall: t0.elapsed(),
        verified,
        parties,
    })
}

/// Runs `P` locally and checks the receiver's output against the plaintext reference.
fn measure<P: crate::program::Program, H: Host>(
    mesh: LocalMesh,
    config: &BenchConfig,
    data: P::Data<'_>,
    query: P::Query,
) -> Result<(bool, Vec<PartyReport>), ProgramError>
where
    P::Output: PartialEq,
{
    let runs =
        crate::program::run_local_host::<P, H>(mesh, config.roles, data, query, config.entropy)?;
    let want = P::reference(data, query);
    let ok = runs[config.roles.receiver.index()].output.as_ref() == Some(&want);
    Ok((ok, reports(&runs)))
}

/// One size of a [`crossover`] comparison.
#[derive(Clone, Debug)]
pub struct CrossoverPoint {
    /// n.
    pub n: usize,
    /// Binary search on the DORAM.
    pub oram: BenchReport,
    /// Linear scan in the engine.
    pub linear: BenchReport,
}

impl CrossoverPoint {
    /// The point as JSON: n, both wall times and per-party bytes sent (maximum over parties).
    pub fn to_json(&self) -> Value {
        let bytes = |r: &BenchReport| {
            r.parties
                .iter()
                .map(|p| p.meter.total().bytes_sent)
                .max()
                .unwrap_or(0)
        };
        let rounds = |r: &BenchReport| {
            r.parties
                .iter()
                .map(|p| p.meter.total().rounds)
                .max()
                .unwrap_or(0)
        };
        json!({
            "n": self.n,
            "net": net_name(self.oram.config.shaping),
            "backend": self.oram.backend,
            "oram_wall_s": self.oram.wall.as_secs_f64(),
            "linear_wall_s": self.linear.wall.as_secs_f64(),
            "oram_bytes": bytes(&self.oram),
            "linear_bytes": bytes(&self.linear),
            "oram_rounds": rounds(&self.oram),
            "linear_rounds": rounds(&self.linear),
        })
    }
}

/// Binary search on the backend `B` against the linear scan in the engine, for each size.
///
/// # Errors
/// As [`run`].
pub fn crossover<B: Backend>(
    sizes: &[usize],
    shaping: Option<Shaping>,
    seed: u64,
    entropy: Entropy,
) -> Result<Vec<CrossoverPoint>, ProgramError> {
    sizes
        .iter()
        .map(|&n| {
            let mut c = BenchConfig::new(Program::BinarySearch, n);
            c.seed = seed;
            c.entropy = entropy;
            c.shaping = shaping;
            let oram = run::<B>(&c)?;
            c.program = Program::LinearSearch;
            let linear = run::<B>(&c)?;
            Ok(CrossoverPoint { n, oram, linear })
        })
        .collect()
}
