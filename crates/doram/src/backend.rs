//! Choosing the DORAM backend at run time. The programs crate is generic over any
//! [`Backend`](crate::programs::Backend); this module is the one place that lists the concrete
//! ones: [`BackendKind`] names them, [`with_backend!`](crate::with_backend) turns a kind into
//! a type, and the entry points below ([`run_party`], [`run_local`], [`run_local_on`],
//! [`bench_program`], [`crossover`]) dispatch through it. The command-line tool and the fuzz
//! targets use them too.

use doram_core::{Entropy, Seed};
use doram_net::{LocalMesh, Session, Shaping};
use doram_programs::bench::{BenchConfig, BenchReport, CrossoverPoint};
use doram_programs::binary_search::{self, SearchOutput};
use doram_programs::{PartyRun, Program, ProgramError, Roles};

/// The backends, for choosing one at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// [`LinearScanOram<Fp>`](crate::oram::LinearScanOram): O(n) per access, small memories,
    /// second oracle.
    LinearScan,
    /// [`Ramen`](crate::ramen::Ramen): O(√n·log n) per access amortised, hides the op type.
    Ramen,
    /// [`Duoram<Fp>`](crate::duoram::Duoram): O(log n) communication and O(n) local work per
    /// access, free Init, reveals the op type.
    Duoram,
    /// [`Fjkw15FpMemory`](crate::fjkw15::backend::Fjkw15FpMemory): FJKW15's tree ORAM,
    /// polylogarithmic communication and local work per access, Init by n accesses, reveals
    /// the op type; addresses outside the memory stop every party with a typed error.
    Fjkw15,
}

impl BackendKind {
    /// Every backend.
    pub const ALL: [BackendKind; 4] = [
        BackendKind::LinearScan,
        BackendKind::Ramen,
        BackendKind::Duoram,
        BackendKind::Fjkw15,
    ];

    /// The name used on command lines and in reports: the backend's
    /// [`Protocol::NAME`](crate::oram::Protocol::NAME).
    pub fn name(self) -> &'static str {
        crate::with_backend!(self, B => <B as doram_oram::Protocol>::NAME)
    }

    /// The backend called `name`.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Runs `$body` with the type alias `$b` set to the backend the [`BackendKind`] `$kind`
/// names.
///
/// ```
/// use doram::{BackendKind, with_backend};
/// use doram::oram::Protocol;
///
/// let name = with_backend!(BackendKind::Ramen, B => <B as Protocol>::NAME);
/// assert_eq!(name, "ramen");
/// ```
#[macro_export]
macro_rules! with_backend {
    ($kind:expr, $b:ident => $body:expr) => {
        match $kind {
            $crate::BackendKind::LinearScan => {
                type $b = $crate::oram::LinearScanOram<$crate::field::Fp>;
                $body
            }
            $crate::BackendKind::Ramen => {
                type $b = $crate::ramen::Ramen;
                $body
            }
            $crate::BackendKind::Duoram => {
                type $b = $crate::duoram::Duoram<$crate::field::Fp>;
                $body
            }
            $crate::BackendKind::Fjkw15 => {
                type $b = $crate::fjkw15::backend::Fjkw15FpMemory;
                $body
            }
        }
    };
}

/// One party's configuration of a program run.
#[derive(Clone, Copy, Debug)]
pub struct RunConfig {
    /// The DORAM backend (all parties must agree).
    pub backend: BackendKind,
    /// The roles (all parties must agree).
    pub roles: Roles,
    /// This party's local seed, from which all of its randomness derives: uniform and known to
    /// nobody else ([`RunConfig::new`] draws it from the OS).
    pub seed: Seed,
}

impl RunConfig {
    /// A configuration with a fresh seed from the operating system: the secure way for a
    /// library user to run one party.
    pub fn new(backend: BackendKind, roles: Roles) -> RunConfig {
        RunConfig {
            backend,
            roles,
            seed: Seed::from_os_entropy(),
        }
    }
}

/// One party's run of `P` with the backend chosen at run time
/// ([`doram_programs::run_party`] on it).
///
/// # Errors
/// As [`Program::run_with`].
pub fn run_party<P: Program>(
    session: Session,
    config: &RunConfig,
    data: Option<P::Data<'_>>,
    query: Option<P::Query>,
) -> Result<PartyRun<P::Output>, ProgramError> {
    crate::with_backend!(config.backend, B => doram_programs::run_party::<P, B>(
        session,
        config.seed,
        config.roles,
        data,
        query
    ))
}

/// One party's batched binary search (many keys over one setup) with the backend chosen at
/// run time ([`doram_programs::binary_search::run_many_with`] on it).
///
/// # Errors
/// As [`doram_programs::binary_search::run_many_with`].
pub fn run_party_many(
    session: Session,
    config: &RunConfig,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
) -> Result<PartyRun<Vec<SearchOutput>>, ProgramError> {
    crate::with_backend!(config.backend, B => binary_search::run_many_with::<B>(
        session,
        config.seed,
        config.roles,
        data,
        keys
    ))
}

/// The batched binary search on `backend` on three threads over an in-process mesh
/// ([`doram_programs::binary_search::run_local_many`] on it).
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local_many(
    backend: BackendKind,
    roles: Roles,
    sorted: &[u64],
    keys: &[u64],
    entropy: Entropy,
) -> Result<[PartyRun<Vec<SearchOutput>>; 3], ProgramError> {
    crate::with_backend!(backend, B => binary_search::run_local_many::<B>(roles, sorted, keys, entropy))
}

/// Runs `P` on `backend` on three threads over an in-process mesh
/// ([`doram_programs::run_local`] on it).
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local<P: Program>(
    backend: BackendKind,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    run_local_on::<P>(LocalMesh::new(3), backend, roles, data, query, entropy)
}

/// [`run_local`] on the given mesh (e.g. with traffic shaping or a tamper hook).
///
/// # Errors
/// As [`run_local`].
pub fn run_local_on<P: Program>(
    mesh: LocalMesh,
    backend: BackendKind,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    crate::with_backend!(backend, B => doram_programs::run_local_on::<P, B>(
        mesh, roles, data, query, entropy
    ))
}

/// One program benchmark on `backend` ([`doram_programs::bench::run`] on it).
///
/// # Errors
/// The first party's error.
pub fn bench_program(
    backend: BackendKind,
    config: &BenchConfig,
) -> Result<BenchReport, ProgramError> {
    crate::with_backend!(backend, B => doram_programs::bench::run::<B>(config))
}

/// Binary search on `backend` against the linear scan in the engine, for each size
/// ([`doram_programs::bench::crossover`] on it).
///
/// # Errors
/// As [`bench_program`].
pub fn crossover(
    sizes: &[usize],
    backend: BackendKind,
    shaping: Option<Shaping>,
    seed: u64,
    entropy: Entropy,
) -> Result<Vec<CrossoverPoint>, ProgramError> {
    crate::with_backend!(backend, B => doram_programs::bench::crossover::<B>(
        sizes, shaping, seed, entropy
    ))
}
