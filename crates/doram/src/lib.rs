//! # doram
//!
//! Secure computation over secret-shared memory: three parties jointly run a RAM program — a
//! binary search, BFS, Dijkstra, stable matching, or one of your own — over a memory that none
//! of them can read, at addresses none of them learns, on the distributed ORAM of your choice.
//!
//! Three local parties (threads over an in-process mesh) running Dijkstra on Ramen:
//! ```
//! use doram::{BackendKind, Edge, Local};
//!
//! let edges = [Edge::new(0, 1, 4), Edge::new(1, 2, 1), Edge::new(0, 2, 7)];
//! let dist = Local::new(BackendKind::Ramen).dijkstra(3, &edges, 0)?;
//! assert_eq!(dist, [Some(0), Some(4), Some(5)]);
//! # Ok::<(), doram::ProgramError>(())
//! ```
//!
//! On three real hosts each runs one [`Party`] over mutually authenticated TLS (the session
//! file and certificates come from `doram certs`); each passes only its own role's input, and
//! only the receiver gets the output:
//! ```no_run
//! use doram::{BackendKind, Edge, Party, PartyId, net::Config};
//!
//! let config = Config::load("session/doram.toml").expect("a session file");
//! let edges = [Edge::new(0, 1, 4), Edge::new(1, 2, 1), Edge::new(0, 2, 7)];
//! // On the data owner's host (P0 by default):
//! let party = Party::connect(&config, PartyId::P0, BackendKind::Ramen)?;
//! let out = party.dijkstra(Some((3, &edges[..])), None)?; // P1 passes Some(source), P2 nothing
//! assert!(out.is_none()); // P2 receives the distances
//! # Ok::<(), doram::ProgramError>(())
//! ```
//!
//! A program of your own is a function generic over [`Ram`]: it then runs in the clear on
//! [`PlainRam`] and securely on every backend (see [`programs`] for the guide). The programs
//! crate is generic over the backend; [`BackendKind`] and the functions of [`backend`] choose
//! one at run time. The layers below are re-exported for direct use: the memory interface
//! ([`SharedMemory`], [`DistributedOram`], [`PlainMemory`], [`oram`]), the protocols
//! ([`ramen`], [`duoram`], [`fjkw15`], [`pir`]), DPFs ([`dpf`]), fields ([`field`]) and the transport
//! ([`net`]).

pub mod backend;

use doram_core::Entropy;
use doram_net::Session;

pub use backend::{
    BackendKind, RunConfig, run_local, run_local_many, run_local_on, run_party, run_party_many,
};

pub use doram_core::{PartyId, Seed};
pub use doram_oram::{DistributedOram, PlainMemory, SharedMemory};
pub use doram_programs::binary_search::SearchOutput;
pub use doram_programs::input::{Edge, Prefs};
pub use doram_programs::matching::Matching;
pub use doram_programs::{Machine, OArray, PlainRam, Program, ProgramError, Ram, Roles, input};

/// The secure RAM programs and their machine (the guide to writing one is on this page).
pub use doram_programs as programs;

/// The memory interface and the generic DORAM layer: traits, the plaintext oracle, the linear
/// scan, the bench runner.
pub use doram_oram as oram;

/// Ramen, the three-party DORAM with a hidden operation type.
pub use doram_ramen as ramen;

/// 3P-Duoram, the three-party DORAM with O(1) online words per access.
pub use doram_duoram as duoram;

/// FJKW15, the three-party binary-tree ORAM (its F_p variant is a program backend).
pub use doram_fjkw15 as fjkw15;

/// Three-server PIR with guaranteed output against one malicious server.
pub use doram_pir as pir;

/// Distributed point functions.
pub use doram_dpf as dpf;

/// Fields and rings: `Fp`, `Z64`.
pub use doram_field as field;

/// Sessions between parties: in-process, TCP, mutually authenticated TLS; session files.
pub use doram_net as net;

/// Three parties as threads of this process, over an in-process mesh: for trying programs,
/// tests and benchmarks. Each method runs the whole protocol and returns the receiver's output.
#[derive(Clone, Copy, Debug)]
pub struct Local {
    backend: BackendKind,
    roles: Roles,
    entropy: Entropy,
}

impl Local {
    /// Three local parties on `backend`, with the default roles (P0 owns the data, P1 queries,
    /// P2 receives) and secret randomness from the operating system.
    pub fn new(backend: BackendKind) -> Local {
        Local {
            backend,
            roles: Roles::default(),
            entropy: Entropy::Os,
        }
    }

    /// Other roles.
    #[must_use]
    pub fn roles(mut self, roles: Roles) -> Local {
        self.roles = roles;
        self
    }

    /// **Insecure**: every party's randomness from the public `seed`, for reproducible tests
    /// and benchmarks only.
    #[must_use]
    pub fn insecure_seed(mut self, seed: u64) -> Local {
        self.entropy = Entropy::InsecureSeed(seed);
        self
    }

    /// Runs the program `P` (e.g. [`programs::Dijkstra`], or one of your own) and returns the
    /// receiver's output.
    ///
    /// # Errors
    /// Input errors before anything runs; the protocol's errors.
    pub fn run<P: Program>(
        &self,
        data: P::Data<'_>,
        query: P::Query,
    ) -> Result<P::Output, ProgramError> {
        let runs = run_local::<P>(self.backend, self.roles, data, query, self.entropy)?;
        runs.into_iter()
            .nth(self.roles.receiver.index())
            .and_then(|r| r.output)
            .ok_or(ProgramError::Misuse("the receiver got no output"))
    }

    /// The binary search of `key` in `sorted` ([`programs::binary_search`]).
    ///
    /// # Errors
    /// Input errors (an unsorted array) before anything runs; the protocol's errors.
    pub fn binary_search(&self, sorted: &[u64], key: u64) -> Result<SearchOutput, ProgramError> {
        self.run::<programs::BinarySearch>(sorted, key)
    }

    /// Breadth-first search from `source` over a directed graph of `vertices` vertices
    /// ([`programs::bfs`]): each vertex's distance in edges, `None` if unreachable.
    ///
    /// # Errors
    /// Input errors before anything runs; the protocol's errors.
    pub fn bfs(
        &self,
        vertices: u64,
        edges: &[Edge],
        source: u64,
    ) -> Result<Vec<Option<u64>>, ProgramError> {
        self.run::<programs::Bfs>((vertices, edges), source)
    }

    /// Shortest-path lengths from `source` over a directed, weighted graph
    /// ([`programs::dijkstra`]), `None` if unreachable.
    ///
    /// # Errors
    /// Input errors before anything runs; the protocol's errors.
    pub fn dijkstra(
        &self,
        vertices: u64,
        edges: &[Edge],
        source: u64,
    ) -> Result<Vec<Option<u64>>, ProgramError> {
        self.run::<programs::Dijkstra>((vertices, edges), source)
    }

    /// A stable matching by Gale–Shapley ([`programs::matching`]).
    ///
    /// # Errors
    /// Invalid preferences before anything runs; the protocol's errors.
    pub fn stable_matching(&self, prefs: &Prefs) -> Result<Matching, ProgramError> {
        self.run::<programs::StableMatching>(prefs, ())
    }
}

/// One party of a program run on its own host, over a connected [`Session`]. Every party
/// calls the same method with its own role's input (`None` where it has none); the receiver
/// gets `Some(output)`, the others `None`.
#[derive(Debug)]
pub struct Party {
    session: Session,
    config: RunConfig,
}

impl Party {
    /// Connects to the other parties of the session file `config` as `me` (mutually
    /// authenticated TLS unless the file says otherwise), with the default roles and secret
    /// randomness from the operating system.
    ///
    /// # Errors
    /// [`ProgramError::Net`] if the connection fails.
    pub fn connect(
        config: &net::Config,
        me: PartyId,
        backend: BackendKind,
    ) -> Result<Party, ProgramError> {
        let session = Session::connect(config, me)?;
        Ok(Party::over(session, backend))
    }

    /// A party over an already connected session.
    pub fn over(session: Session, backend: BackendKind) -> Party {
        Party {
            session,
            config: RunConfig::new(backend, Roles::default()),
        }
    }

    /// Other roles (every party must use the same).
    #[must_use]
    pub fn roles(mut self, roles: Roles) -> Party {
        self.config.roles = roles;
        self
    }

    /// Runs this party's side of the program `P`: the owner passes `Some(data)`, the querier
    /// `Some(query)`, the others `None`; the receiver gets `Some(output)`.
    ///
    /// # Errors
    /// Input errors at the party that holds the input, before it sends; the protocol's errors.
    pub fn run<P: Program>(
        self,
        data: Option<P::Data<'_>>,
        query: Option<P::Query>,
    ) -> Result<Option<P::Output>, ProgramError> {
        Ok(run_party::<P>(self.session, &self.config, data, query)?.output)
    }

    /// Binary search: the owner passes the sorted array, the querier the key.
    ///
    /// # Errors
    /// As [`run`](Party::run).
    pub fn binary_search(
        self,
        sorted: Option<&[u64]>,
        key: Option<u64>,
    ) -> Result<Option<SearchOutput>, ProgramError> {
        self.run::<programs::BinarySearch>(sorted, key)
    }

    /// BFS: the owner passes (V, edges), the querier the source.
    ///
    /// # Errors
    /// As [`run`](Party::run).
    pub fn bfs(
        self,
        graph: Option<(u64, &[Edge])>,
        source: Option<u64>,
    ) -> Result<Option<Vec<Option<u64>>>, ProgramError> {
        self.run::<programs::Bfs>(graph, source)
    }

    /// Dijkstra: the owner passes (V, edges), the querier the source.
    ///
    /// # Errors
    /// As [`run`](Party::run).
    pub fn dijkstra(
        self,
        graph: Option<(u64, &[Edge])>,
        source: Option<u64>,
    ) -> Result<Option<Vec<Option<u64>>>, ProgramError> {
        self.run::<programs::Dijkstra>(graph, source)
    }

    /// Stable matching: the owner passes the preferences.
    ///
    /// # Errors
    /// As [`run`](Party::run).
    pub fn stable_matching(self, prefs: Option<&Prefs>) -> Result<Option<Matching>, ProgramError> {
        self.run::<programs::StableMatching>(prefs, None)
    }
}

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
