//! `doram run` and the `run` job of `doram party`: secure RAM programs (binary search, BFS,
//! Dijkstra, stable matching) between three distrustful parties.
//!
//! Each party holds only its role's input: the data owner the data file, the querier the key
//! or source vertex; only the output receiver learns the result. `doram run …` plays all three
//! parties on this host (threads over in-process channels, or with `--processes` three
//! `doram party` processes over mutually authenticated TLS, each given only its own role's
//! input); `doram party --config C --id I run …` plays one party on its own host.

use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use doram_core::{PartyId, Seed};

use crate::randomness::Randomness;
use doram::BackendKind;
use doram_net::{Session, Shaping, run_parties_ok};
use doram_programs::InputError;
use doram_programs::binary_search::MAX_KEYS;
use doram_programs::binary_search::SearchOutput;
use doram_programs::binary_search::run_many_on;
use doram_programs::input::{
    Edge, Prefs, VertexNames, format_fixed_point, parse_edges_fixed_point, parse_keys,
    parse_named_edges, parse_prefs, parse_sorted, vertices_of,
};
use doram_programs::machine::Part;
use doram_programs::stored::{Store, run_search};
use doram_programs::{
    Bfs, Dijkstra, Host, Machine, Machine2, Machine2Duoram, Machine2Tree, Program as _,
    StableMatching,
};
use doram_programs::{PartyRun, Roles};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::report::{human_bytes, print_json};

/// DORAM backends, as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// 3P-Duoram over Fp: free Init, O(n) local work per access, reveals reads vs writes
    /// (programs then always read and write back).
    Duoram,
    /// Ramen: O(√n log n) per access, hides reads vs writes, costly Init.
    Ramen,
    /// A linear scan of the whole memory per access: the baseline for small memories.
    LinearScan,
    /// FJKW15's three-party tree ORAM over Fp: polylogarithmic work per access, Init by n
    /// accesses (the secure shared load), reveals reads vs writes.
    Fjkw15,
    /// Two parties and no third (Gordon et al., CCS 2012): additive shares with OT-made
    /// triples and garbled-circuit comparisons; the memory is held as wire labels and scanned
    /// by a garbled circuit per access (the paper's Yao baseline; at most 2^14 words). Roles
    /// name parties 0 and 1 (the receiver defaults to 1).
    Gkk12,
    /// Two parties and no third, the memory in 2P-Duoram (Duoram §5): reads by symmetric PIR
    /// both ways, writes by DPF updates made by OT; the CPU step as for `gkk12`. Roles name
    /// parties 0 and 1.
    #[value(name = "duoram2p")]
    Duoram2p,
    /// Two parties and no third, the memory in GKK12's binary-tree ORAM (polylogarithmic
    /// accesses), loaded by the two parties alone (an oblivious bin sort of every word, or one
    /// ORAM write per word into an empty ORAM when few words are not publicly 0); the CPU step
    /// as for `gkk12`. Roles name parties 0 and 1.
    #[value(name = "gkk12-tree")]
    Gkk12Tree,
}

impl Backend {
    /// The three-party backend, if this is one.
    pub fn kind(self) -> Option<BackendKind> {
        match self {
            Backend::Duoram => Some(BackendKind::Duoram),
            Backend::Ramen => Some(BackendKind::Ramen),
            Backend::LinearScan => Some(BackendKind::LinearScan),
            Backend::Fjkw15 => Some(BackendKind::Fjkw15),
            Backend::Gkk12 | Backend::Duoram2p | Backend::Gkk12Tree => None,
        }
    }

    /// The name in reports (the protocol's name).
    pub fn name(self) -> &'static str {
        match self.kind() {
            Some(k) => k.name(),
            None if self == Backend::Duoram2p => <Machine2Duoram as Host>::BACKEND,
            None if self == Backend::Gkk12Tree => <Machine2Tree as Host>::BACKEND,
            None => <Machine2 as Host>::BACKEND,
        }
    }

    /// The parties of a run.
    pub fn parties(self) -> usize {
        if self.kind().is_none() { 2 } else { 3 }
    }

    fn arg(self) -> &'static str {
        match self {
            Backend::Duoram => "duoram",
            Backend::Ramen => "ramen",
            Backend::LinearScan => "linear-scan",
            Backend::Fjkw15 => "fjkw15",
            Backend::Gkk12 => "gkk12",
            Backend::Duoram2p => "duoram2p",
            Backend::Gkk12Tree => "gkk12-tree",
        }
    }
}

/// Options every program takes.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// The DORAM holding the program's memory (`--protocol` is the same option).
    #[arg(long, alias = "protocol", value_enum, default_value_t = Backend::Duoram)]
    pub backend: Backend,
    /// The party holding the data (0, 1 or 2).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub owner: u8,
    /// The party that learns the output (0, 1 or 2; by default 2, or 1 with two parties).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub receiver: Option<u8>,
    /// Where the parties' secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
}

impl Common {
    /// The roles, with `querier` holding the query (the owner for a program without one: the
    /// role is then unused).
    fn roles(&self, querier: Option<u8>) -> Result<Roles> {
        let n = self.backend.parties();
        let p = |i: u8| {
            PartyId::from_index(usize::from(i), n).with_context(|| {
                if n == 2 {
                    "roles must name parties 0 or 1 with two parties"
                } else {
                    "roles must name parties 0, 1 or 2"
                }
            })
        };
        Ok(Roles {
            owner: p(self.owner)?,
            querier: p(querier.unwrap_or(self.owner))?,
            receiver: p(self.receiver.unwrap_or(n as u8 - 1))?,
        })
    }

    fn args(&self) -> Vec<String> {
        let mut args = vec![
            "--backend".into(),
            self.backend.arg().into(),
            "--owner".into(),
            self.owner.to_string(),
        ];
        if let Some(r) = self.receiver {
            args.extend(["--receiver".into(), r.to_string()]);
        }
        args.extend(self.randomness.args());
        args
    }
}

/// The programs.
#[derive(Debug, Clone, Subcommand)]
pub enum Program {
    /// Binary search of secret keys in a secret sorted array: for each key, the index of the
    /// first entry ≥ key and whether it equals the key.
    ///
    /// Inputs: the owner's sorted array (`--data`); the querier's key (`--key N`) or keys
    /// (`--keys FILE`, one per line, searched together over one setup: the array is loaded
    /// into the DORAM once and every step of the search is one batch for all keys).
    /// Output (receiver): `results`, one `{"index", "found"}` per key in input order — `index`
    /// is the first position whose entry is ≥ the key (n if none, as Python's
    /// `bisect_left`), `found` whether that entry equals the key; with a single key also its
    /// `index` and `found` at the top level. The number of keys is public, the keys are not.
    /// Limits: n ≤ 2^27 entries, at most 4096 keys, entries and keys below 2^64. For many keys
    /// over a large array `--backend ramen` is often the fastest (BENCHMARKS.md).
    ///
    /// Example: `doram run binary-search --data sorted.csv --key 42` or `--keys keys.txt`.
    BinarySearch(SearchArgs),
    /// BFS distances (in edges) from a secret source in a secret graph.
    ///
    /// Output (receiver): `distances`, one per vertex, `null` where unreachable (with
    /// `--vertex-names`, an object from each name to its distance). Limits: V ≤ 2^20,
    /// E ≤ 2^22. Dense graphs up to V = 4096 run a shuffled dense form (O(V²) comparisons,
    /// about 2 s at V = 1000 on two cores); larger sparse ones an oblivious queue over the
    /// DORAM (6 accesses per vertex and edge, about 5 ms each step).
    /// Example: `doram run bfs --graph edges.csv --source 0` (lines `u,v`, directed edges).
    Bfs(GraphArgs),
    /// Dijkstra shortest-path distances from a secret source, secret non-negative weights.
    ///
    /// Output (receiver): `distances`, one per vertex, `null` where unreachable (with
    /// `--weight-decimals D`, in the weights' units; with `--vertex-names`, by name). Limits: V ≤ 4096,
    /// weights ≤ 2^32 − 1 once scaled by 10^D. Cost grows with V only (V² comparisons):
    /// about 0.1 s at V = 100, 0.5 s at V = 300, 2.5 s at V = 1000, 25 s and 3.7 GB (all
    /// three parties) at V = 4096 on two cores.
    /// Example: `doram run dijkstra --graph edges.csv --source 0` (lines `u,v,w`).
    Dijkstra(DijkstraArgs),
    /// Gale–Shapley stable matching on secret preference lists (k proposers, k acceptors).
    ///
    /// Output (receiver): the proposer-optimal stable matching — `proposer_partner[p]` is the
    /// acceptor matched to proposer p, `acceptor_partner[a]` the proposer matched to acceptor
    /// a. Limits: k ≤ 4096; the program runs k² − k + 1 proposals, so about 0.5 s at k = 33
    /// and half a minute at k = 100 (BENCHMARKS.md). It makes no DORAM access (its arrays
    /// live in the compute engine), so every `--backend` runs it alike.
    ///
    /// Example: `doram run stable-matching --prefs prefs.json` with
    /// `{"proposers": [[0,1],[1,0]], "acceptors": [[1,0],[0,1]]}`.
    StableMatching(MatchingArgs),
}

/// An unsigned 64-bit integer, with a message that says so for negative or other values.
fn unsigned(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| {
        format!(
            "{s:?} is not an unsigned integer (0 to 18446744073709551615; no sign, no decimals)"
        )
    })
}

/// The party holding the query, for the programs that have one.
#[derive(Debug, Clone, Args)]
pub struct Querier {
    /// The party holding the query: key or source vertex (0, 1 or 2).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub querier: u8,
}

/// Arguments of the binary search.
#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("query-keys").args(["key", "keys"]).multiple(false)))]
pub struct SearchArgs {
    /// The data owner's sorted array: one unsigned 64-bit integer per line (or the first
    /// column of a CSV file); `#` starts a comment.
    #[arg(long, value_parser = crate::existing_file)]
    pub data: Option<PathBuf>,
    /// The querier's key (an unsigned 64-bit integer); or give `--keys`.
    #[arg(long, allow_hyphen_values = true, value_parser = unsigned)]
    pub key: Option<u64>,
    /// The querier's keys, searched with one setup: one unsigned 64-bit integer per line (or
    /// the first column of a CSV file), in any order; an optional header line, blank lines and
    /// `#` comments are skipped as in `--data`; at most 4096 keys.
    #[arg(long, value_name = "FILE", value_parser = crate::existing_file)]
    pub keys: Option<PathBuf>,
    /// Keeps the database between runs (backend gkk12-tree): the first run loads `--data`
    /// and each party stores its side of the ORAM; later runs give no `--data` and search
    /// the stored database, each run saving the next state. With `doram run` the parties'
    /// stores are DIR/p0 and DIR/p1; with `doram party run`, DIR is this party's own. A run
    /// that stops midway leaves the stores refused (resuming them could reveal again what
    /// the ORAM revealed); load again into empty stores then.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    #[command(flatten)]
    pub query: Querier,
    #[command(flatten)]
    pub common: Common,
}

/// Arguments of BFS and Dijkstra.
#[derive(Debug, Clone, Args)]
pub struct GraphArgs {
    /// The data owner's directed edges, one `u v` (BFS) or `u v w` (Dijkstra) per line,
    /// fields separated by commas, spaces or tabs; an optional header line; networkx
    /// `write_edgelist` files work as written. Vertices are numbered from 0, weights are
    /// non-negative integers (decimals with Dijkstra's `--weight-decimals`). List both
    /// directions for an undirected graph.
    #[arg(long, value_parser = crate::existing_file)]
    pub graph: Option<PathBuf>,
    /// Number of vertices (default: the largest vertex id in the file plus one — give it when
    /// the highest-numbered vertices have no edges).
    #[arg(long, conflicts_with = "vertex_names")]
    pub vertices: Option<u64>,
    /// Named vertices: a file with one vertex name per line (ids are the positions, from 0;
    /// the count is V). The edge file and `--source` then use names, and distances are
    /// reported per name. The names are public, like V; every party reads this file.
    #[arg(long, value_parser = crate::existing_file)]
    pub vertex_names: Option<PathBuf>,
    /// The querier's source vertex: its number (from 0), or its name with `--vertex-names`.
    #[arg(long, allow_hyphen_values = true)]
    pub source: Option<String>,
    #[command(flatten)]
    pub query: Querier,
    #[command(flatten)]
    pub common: Common,
}

/// Arguments of Dijkstra: a graph with weights.
#[derive(Debug, Clone, Args)]
pub struct DijkstraArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Weights are decimals with up to this many decimal places (fixed point: each weight is
    /// computed on as the integer w·10^D, distances are printed back in the weights' units).
    /// Public, like the number of vertices.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub weight_decimals: u32,
}

/// Arguments of stable matching.
#[derive(Debug, Clone, Args)]
pub struct MatchingArgs {
    /// The data owner's preference lists (JSON: `proposers` and `acceptors`, each k lists
    /// that are permutations of 0..k, most preferred first).
    #[arg(long, value_parser = crate::existing_file)]
    pub prefs: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

/// Arguments of `doram run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program.
    #[command(subcommand)]
    pub program: Program,
}

/// Arguments of `doram run` with the local-run options.
#[derive(Debug, Args)]
pub struct LocalRunArgs {
    /// Run the parties as three `doram party` processes over mutually authenticated TLS
    /// (each given only its own role's input) instead of threads of this process.
    #[arg(long)]
    pub processes: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

impl Program {
    pub(crate) fn common(&self) -> &Common {
        match self {
            Program::BinarySearch(a) => &a.common,
            Program::Bfs(a) | Program::Dijkstra(DijkstraArgs { graph: a, .. }) => &a.common,
            Program::StableMatching(a) => &a.common,
        }
    }

    /// The querier, for the programs that have a query.
    fn querier(&self) -> Option<u8> {
        match self {
            Program::BinarySearch(a) => Some(a.query.querier),
            Program::Bfs(a) | Program::Dijkstra(DijkstraArgs { graph: a, .. }) => {
                Some(a.query.querier)
            }
            Program::StableMatching(_) => None,
        }
    }

    fn roles(&self) -> Result<Roles> {
        self.common().roles(self.querier())
    }

    /// The shared options, as arguments for a party process.
    fn common_args(&self) -> Vec<String> {
        let mut args = self.common().args();
        if let Some(q) = self.querier() {
            args.extend(["--querier".into(), q.to_string()]);
        }
        args
    }

    fn name(&self) -> &'static str {
        match self {
            Program::BinarySearch(_) => "binary-search",
            Program::Bfs(_) => "bfs",
            Program::Dijkstra(_) => "dijkstra",
            Program::StableMatching(_) => "stable-matching",
        }
    }
}

/// A party's inputs, read and checked before anything is sent.
pub(crate) enum Inputs {
    /// The querier's key or keys (`--key` is one key).
    Search {
        data: Option<Vec<u64>>,
        keys: Option<Vec<u64>>,
        /// This party's store (`--store`), if the database is kept between runs.
        store: Option<PathBuf>,
    },
    Graph {
        graph: Option<(u64, Vec<Edge>)>,
        source: Option<u64>,
        /// The public vertex names, if the vertices have names (every party holds them).
        names: Option<VertexNames>,
    },
    Matching {
        prefs: Option<Prefs>,
    },
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The graph of `path`: its vertex count and edges, weights in fixed point with `decimals`
/// places (0 for integers), vertices numbered or named by `names`.
fn load_graph(
    path: &Path,
    vertices: Option<u64>,
    names: Option<&VertexNames>,
    weighted: bool,
    decimals: u32,
) -> Result<(u64, Vec<Edge>)> {
    let text = read(path)?;
    let explain = |e: InputError| match e {
        InputError::TooManyDecimals { places, .. } => {
            anyhow::anyhow!("{}: {e}: give --weight-decimals {places}", path.display())
        }
        InputError::NotAnInteger { .. } if names.is_none() => anyhow::anyhow!(
            "{}: {e}; for named vertices give --vertex-names FILE (one name per line)",
            path.display()
        ),
        e => anyhow::Error::new(e).context(path.display().to_string()),
    };
    if let Some(names) = names {
        let edges = parse_named_edges(&text, names, weighted, decimals).map_err(explain)?;
        return Ok((names.len(), edges));
    }
    let parse = |v| parse_edges_fixed_point(&text, v, weighted, decimals).map_err(explain);
    let v = match vertices {
        Some(v) => v,
        // Ids are bounded only by u64 here; the program checks V against its own limit.
        None => vertices_of(&parse(u64::MAX)?),
    };
    Ok((v, parse(v)?))
}

/// The source vertex `s`: a name of `names`, or a vertex number.
fn source_id(s: &str, names: Option<&VertexNames>) -> Result<u64> {
    match names {
        Some(n) => n
            .id(s)
            .with_context(|| format!("--source {s:?} is not one of the vertex names")),
        None => unsigned(s).map_err(|e| {
            anyhow::anyhow!("--source: {e} (for named vertices give --vertex-names FILE)")
        }),
    }
}

/// This party's inputs: only those its roles hold (`me = None`: every role's, for a local
/// run of all three parties).
fn inputs(program: &Program, me: Option<PartyId>) -> Result<Inputs> {
    let roles = program.roles()?;
    let holds = |role: PartyId| me.is_none_or(|m| m == role);
    let need = |has: bool, role: PartyId, what: &str| -> Result<()> {
        match (holds(role), has) {
            (true, false) => bail!(
                "{} needs {what} (held by {role}, the {})",
                program.name(),
                if role == roles.owner {
                    "data owner"
                } else {
                    "querier"
                }
            ),
            (false, true) => bail!("{what} is held by {role}, not by this party"),
            _ => Ok(()),
        }
    };
    Ok(match program {
        Program::BinarySearch(a) => {
            if a.store.is_some() && a.common.backend != Backend::Gkk12Tree {
                bail!("--store keeps GKK12's tree ORAM between runs: give --backend gkk12-tree");
            }
            if a.store.is_none() {
                need(a.data.is_some(), roles.owner, "--data")?;
            } else if a.data.is_some() && !holds(roles.owner) {
                bail!("--data is held by {}, not by this party", roles.owner);
            }
            need(
                a.key.is_some() || a.keys.is_some(),
                roles.querier,
                "--key N or --keys FILE",
            )?;
            let data = match &a.data {
                Some(p) => {
                    Some(parse_sorted(&read(p)?).with_context(|| format!("{}", p.display()))?)
                }
                None => None,
            };
            let keys = match (&a.keys, a.key) {
                (Some(p), _) => {
                    let keys = parse_keys(&read(p)?, MAX_KEYS)
                        .with_context(|| format!("{}", p.display()))?;
                    if keys.is_empty() {
                        bail!("{}: no keys (one unsigned integer per line)", p.display());
                    }
                    Some(keys)
                }
                (None, key) => key.map(|k| vec![k]),
            };
            Inputs::Search {
                data,
                keys,
                store: a.store.clone(),
            }
        }
        Program::Bfs(a) | Program::Dijkstra(DijkstraArgs { graph: a, .. }) => {
            need(a.graph.is_some(), roles.owner, "--graph")?;
            need(a.source.is_some(), roles.querier, "--source")?;
            let weighted = matches!(program, Program::Dijkstra(_));
            let decimals = match program {
                Program::Dijkstra(d) => d.weight_decimals,
                _ => 0,
            };
            let names = match &a.vertex_names {
                Some(p) => Some(
                    VertexNames::parse(&read(p)?).with_context(|| format!("{}", p.display()))?,
                ),
                None => None,
            };
            let graph = match &a.graph {
                Some(p) => Some(load_graph(
                    p,
                    a.vertices,
                    names.as_ref(),
                    weighted,
                    decimals,
                )?),
                None => None,
            };
            let source = match &a.source {
                Some(s) => Some(source_id(s, names.as_ref())?),
                None => None,
            };
            let (max_v, max_e) = if weighted {
                (
                    doram_programs::dijkstra::MAX_V,
                    doram_programs::dijkstra::MAX_E,
                )
            } else {
                (doram_programs::bfs::MAX_V, doram_programs::bfs::MAX_E)
            };
            if let Some((v, edges)) = &graph {
                if *v > max_v {
                    bail!(
                        "{} supports at most {max_v} vertices; the graph has {v}",
                        program.name()
                    );
                }
                if edges.len() as u64 > max_e {
                    bail!(
                        "{} supports at most {max_e} edges; the graph has {}",
                        program.name(),
                        edges.len()
                    );
                }
            }
            if let (Some((v, _)), Some(s)) = (&graph, source)
                && s >= *v
            {
                bail!(
                    "--source {s} is not a vertex of the graph (0..{v}); give --vertices if the \
                     graph has vertices without edges above its largest id"
                );
            }
            Inputs::Graph {
                graph,
                source,
                names,
            }
        }
        Program::StableMatching(a) => {
            need(a.prefs.is_some(), roles.owner, "--prefs")?;
            let prefs = match &a.prefs {
                Some(p) => {
                    let prefs =
                        parse_prefs(&read(p)?).with_context(|| format!("{}", p.display()))?;
                    prefs
                        .validate()
                        .with_context(|| format!("{}", p.display()))?;
                    Some(prefs)
                }
                None => None,
            };
            Inputs::Matching { prefs }
        }
    })
}

/// What one party reports: its roles, the output if it is the receiver, and its costs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartyOutcome {
    /// `P0`, `P1`, `P2`.
    pub party: String,
    /// The program.
    pub program: String,
    /// The backend.
    pub backend: String,
    /// Where this party's secret randomness came from: `os` or `insecure-seed N`.
    #[serde(default)]
    pub randomness: String,
    /// The output (at the receiver only).
    pub output: Option<Value>,
    /// Costs per part: time (ms), bytes and messages sent, rounds, DORAM accesses.
    pub parts: Vec<PartCost>,
}

/// One part's costs at one party.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartCost {
    /// `setup`, `input`, `preprocess`, `init`, `oram`, `cpu`, `output`.
    pub part: String,
    /// Wall time, ms.
    pub ms: f64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Rounds.
    pub rounds: u64,
    /// DORAM accesses.
    pub accesses: u64,
}

fn outcome<T>(
    me: PartyId,
    program: &Program,
    run: &PartyRun<T>,
    out: Option<Value>,
) -> PartyOutcome {
    PartyOutcome {
        party: me.to_string(),
        program: program.name().into(),
        backend: program.common().backend.name().into(),
        randomness: program.common().randomness.label(),
        output: out,
        parts: Part::ALL
            .iter()
            .map(|&p| {
                let c = run.meter.get(p);
                PartCost {
                    part: format!("{p:?}").to_lowercase(),
                    ms: c.time.as_secs_f64() * 1e3,
                    bytes_sent: c.bytes_sent,
                    messages_sent: c.msgs_sent,
                    rounds: c.rounds,
                    accesses: c.accesses,
                }
            })
            .collect(),
    }
}

/// One `{"index", "found"}` per key under `results`; a single key's also at the top level.
fn search_json(results: &[SearchOutput]) -> Value {
    let list: Vec<Value> = results
        .iter()
        .map(|o| json!({ "index": o.index, "found": o.found }))
        .collect();
    match results {
        [o] => json!({ "index": o.index, "found": o.found, "results": list }),
        _ => json!({ "results": list }),
    }
}

/// `{"distances": [...]}`: integers, or with `decimals` places the weights' units as JSON
/// numbers (each the shortest decimal that reads back as the fixed-point value).
/// With `names`, `distances` is an object from each vertex name to its distance.
fn distances_json(d: &[Option<u64>], decimals: u32, names: Option<&VertexNames>) -> Value {
    let units: Vec<Value> = d
        .iter()
        .map(|x| match x {
            None => Value::Null,
            Some(v) if decimals == 0 => json!(v),
            Some(v) => {
                let text = format_fixed_point(*v, decimals);
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            }
        })
        .collect();
    let distances = match names {
        Some(n) => Value::Object(n.names().iter().cloned().zip(units).collect()),
        None => Value::Array(units),
    };
    let mut out = json!({ "distances": distances });
    if decimals > 0 {
        out["weight_decimals"] = json!(decimals);
    }
    out
}

/// Runs this party's side of `program` over `session`, with only the inputs its roles hold.
pub(crate) fn run_one(
    session: Session,
    seed: Seed,
    program: &Program,
    inputs: &Inputs,
) -> Result<PartyOutcome> {
    match program.common().backend.kind() {
        Some(kind) => doram::with_backend!(kind, B => {
            run_one_on::<Machine<B>>(session, seed, program, inputs)
        }),
        None if program.common().backend == Backend::Duoram2p => {
            run_one_on::<Machine2Duoram>(session, seed, program, inputs)
        }
        None if program.common().backend == Backend::Gkk12Tree => {
            run_one_on::<Machine2Tree>(session, seed, program, inputs)
        }
        None => run_one_on::<Machine2>(session, seed, program, inputs),
    }
}

/// [`run_one`] on the machine `H`.
fn run_one_on<H: Host>(
    session: Session,
    seed: Seed,
    program: &Program,
    inputs: &Inputs,
) -> Result<PartyOutcome> {
    let me = session.me();
    let roles = program.roles()?;
    let fail = || format!("{me}: {} failed", program.name());
    Ok(match inputs {
        Inputs::Search {
            data,
            keys,
            store: Some(dir),
        } => {
            let store = Store::open(dir).with_context(fail)?;
            let r = run_search(
                session,
                seed,
                roles,
                &store,
                data.as_deref(),
                keys.as_deref(),
            )
            .with_context(fail)?;
            let out = r.output.as_deref().map(search_json);
            outcome(me, program, &r, out)
        }
        Inputs::Search { data, keys, .. } => {
            let r = run_many_on::<H>(session, seed, roles, data.as_deref(), keys.as_deref())
                .with_context(fail)?;
            let out = r.output.as_deref().map(search_json);
            outcome(me, program, &r, out)
        }
        Inputs::Graph {
            graph,
            source,
            names,
        } => {
            let g = graph.as_ref().map(|(v, e)| (*v, &e[..]));
            let r = if matches!(program, Program::Dijkstra(_)) {
                Dijkstra::run_on::<H>(session, seed, roles, g, *source)
            } else {
                Bfs::run_on::<H>(session, seed, roles, g, *source)
            }
            .with_context(fail)?;
            let decimals = match program {
                Program::Dijkstra(d) => d.weight_decimals,
                _ => 0,
            };
            let out = r
                .output
                .as_deref()
                .map(|d| distances_json(d, decimals, names.as_ref()));
            outcome(me, program, &r, out)
        }
        Inputs::Matching { prefs } => {
            let r = StableMatching::run_on::<H>(session, seed, roles, prefs.as_ref(), None)
                .with_context(fail)?;
            let out = r.output.as_ref().map(|m| {
                json!({
                    "proposer_partner": m.proposer_partner,
                    "acceptor_partner": m.acceptor_partner,
                })
            });
            outcome(me, program, &r, out)
        }
    })
}

/// This party's local seed: fresh OS entropy, or derived from `--insecure-seed` when given.
pub(crate) fn party_seed(randomness: &Randomness, me: PartyId) -> Seed {
    randomness.entropy().party_seed(me, "program")
}

/// The `run` job of `doram party`: one party on its own host.
pub fn party_job(session: Session, a: &RunArgs, json: bool) -> Result<()> {
    let me = session.me();
    let inputs = inputs(&a.program, Some(me))?;
    let seed = party_seed(&a.program.common().randomness, me);
    let o = run_one(session, seed, &a.program, &inputs)?;
    if json {
        print_json(&o)?;
    } else {
        print_outcomes(&a.program, &[o]);
    }
    Ok(())
}

/// Runs `doram run`.
pub fn run(a: &LocalRunArgs, json: bool) -> Result<()> {
    let program = &a.run.program;
    let outcomes: Vec<PartyOutcome> = if a.processes {
        run_processes(program)?
    } else {
        let inputs = inputs(program, None)?;
        let roles = program.roles()?;
        // Each party thread gets only its own role's inputs.
        let mine = |me: PartyId| -> Inputs {
            match &inputs {
                Inputs::Search { data, keys, store } => Inputs::Search {
                    data: data.clone().filter(|_| me == roles.owner),
                    keys: keys.clone().filter(|_| me == roles.querier),
                    store: store.as_ref().map(|d| party_store(d, me)),
                },
                Inputs::Graph {
                    graph,
                    source,
                    names,
                } => Inputs::Graph {
                    graph: graph.clone().filter(|_| me == roles.owner),
                    source: source.filter(|_| me == roles.querier),
                    names: names.clone(),
                },
                Inputs::Matching { prefs } => Inputs::Matching {
                    prefs: prefs.clone().filter(|_| me == roles.owner),
                },
            }
        };
        let randomness = program.common().randomness;
        let sessions = Session::local_mesh(program.common().backend.parties());
        run_parties_ok(
            sessions,
            "party",
            |session| {
                let me = session.me();
                run_one(session, party_seed(&randomness, me), program, &mine(me))
            },
            || anyhow::anyhow!("a party thread panicked or could not start"),
        )?
    };
    if json {
        let output = outcomes.iter().find_map(|o| o.output.clone());
        print_json(&json!({
            "program": program.name(),
            "backend": program.common().backend.name(),
            "randomness": program.common().randomness.label(),
            "output": output,
            "parties": outcomes,
        }))?;
    } else {
        print_outcomes(program, &outcomes);
    }
    Ok(())
}

fn print_outcomes(program: &Program, outcomes: &[PartyOutcome]) {
    for o in outcomes {
        if let Some(out) = &o.output {
            println!(
                "{} (receiver) learns the output of {}: {out}",
                o.party,
                program.name()
            );
        }
    }
    for o in outcomes {
        let total = |f: fn(&PartCost) -> u64| o.parts.iter().map(f).sum::<u64>();
        let ms: f64 = o.parts.iter().map(|p| p.ms).sum();
        let part = |name: &str| o.parts.iter().find(|p| p.part == name);
        let (oram, cpu) = (part("oram"), part("cpu"));
        println!(
            "{} on {}: {:.1} ms, sent {} in {} messages, {} rounds, {} DORAM accesses; \
             accesses {:.1} ms / {}, CPU step {:.1} ms / {}",
            o.party,
            o.backend,
            ms,
            human_bytes(total(|p| p.bytes_sent)),
            total(|p| p.messages_sent),
            total(|p| p.rounds),
            total(|p| p.accesses),
            oram.map_or(0.0, |p| p.ms),
            human_bytes(oram.map_or(0, |p| p.bytes_sent)),
            cpu.map_or(0.0, |p| p.ms),
            human_bytes(cpu.map_or(0, |p| p.bytes_sent)),
        );
    }
}

/// Party `me`'s store under the directory given to `doram run --store`.
fn party_store(dir: &Path, me: PartyId) -> PathBuf {
    dir.join(format!("p{}", me.index()))
}

/// `doram run --processes`: three `doram party … run …` processes over TLS, each given only
/// its own role's input files and values.
pub(crate) fn run_processes(program: &Program) -> Result<Vec<PartyOutcome>> {
    let roles = program.roles()?;
    // Fail here, not in three children, on a bad or missing input.
    inputs(program, None)?;
    let path = |p: &Option<PathBuf>| -> Result<String> {
        let p = p.as_ref().context("missing input file")?;
        let abs = std::fs::canonicalize(p).with_context(|| format!("{}", p.display()))?;
        Ok(abs.display().to_string())
    };
    let n = program.common().backend.parties();
    let mut per_party: Vec<Vec<String>> = Vec::with_capacity(n);
    for &me in PartyId::first(n).iter() {
        let mut args = vec![program.name().to_string()];
        args.extend(program.common_args());
        match program {
            Program::BinarySearch(a) => {
                if me == roles.owner && (a.data.is_some() || a.store.is_none()) {
                    args.extend(["--data".into(), path(&a.data)?]);
                }
                if let Some(dir) = &a.store {
                    let dir = party_store(dir, me);
                    args.extend(["--store".into(), dir.display().to_string()]);
                }
                if me == roles.querier {
                    match (&a.keys, a.key) {
                        (Some(_), _) => args.extend(["--keys".into(), path(&a.keys)?]),
                        (None, key) => {
                            args.extend(["--key".into(), key.unwrap_or_default().to_string()]);
                        }
                    }
                }
            }
            Program::Bfs(a) | Program::Dijkstra(DijkstraArgs { graph: a, .. }) => {
                if let Program::Dijkstra(d) = program
                    && d.weight_decimals > 0
                {
                    args.extend(["--weight-decimals".into(), d.weight_decimals.to_string()]);
                }
                if a.vertex_names.is_some() {
                    args.extend(["--vertex-names".into(), path(&a.vertex_names)?]);
                }
                if me == roles.owner {
                    args.extend(["--graph".into(), path(&a.graph)?]);
                    if let Some(v) = a.vertices {
                        args.extend(["--vertices".into(), v.to_string()]);
                    }
                }
                if me == roles.querier {
                    args.extend(["--source".into(), a.source.clone().unwrap_or_default()]);
                }
            }
            Program::StableMatching(a) => {
                if me == roles.owner {
                    args.extend(["--prefs".into(), path(&a.prefs)?]);
                }
            }
        }
        per_party.push(args);
    }
    crate::processes::run_n_parties_with(n, "run", |p| per_party[p.index()].clone(), Shaping::NONE)
}
