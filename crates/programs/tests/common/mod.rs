//! Three-party runs shared by the program tests, and the tests' own choice of backend: the
//! library is generic over the backend, and the tests that loop over every backend dispatch
//! here ([`BackendKind`], [`with_backend!`]), on the protocols they have as dev-dependencies.

// Each test binary uses a subset of these helpers.
#![allow(dead_code, unused_macros, unused_imports)]

use doram_core::{Entropy, Seed};
use doram_net::{Session, Transcript};
use doram_programs::{PartyRun, Program, ProgramError, Roles, run_three};

/// The backends the tests run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// `LinearScanOram<Fp>`.
    LinearScan,
    /// `Ramen`.
    Ramen,
    /// `Duoram<Fp>`.
    Duoram,
    /// `Fjkw15FpMemory` (FJKW15 over F_p words). Not in [`BackendKind::ALL`]: its Init is a
    /// shared load of n accesses, so tests/fjkw15.rs runs it at small sizes on its own.
    Fjkw15,
}

/// Runs `$body` with the type alias `$b` set to the backend `$kind` names.
macro_rules! with_backend {
    ($kind:expr, $b:ident => $body:expr) => {
        match $kind {
            $crate::common::BackendKind::LinearScan => {
                type $b = ::doram_oram::LinearScanOram<::doram_field::Fp>;
                $body
            }
            $crate::common::BackendKind::Ramen => {
                type $b = ::doram_ramen::Ramen;
                $body
            }
            $crate::common::BackendKind::Duoram => {
                type $b = ::doram_duoram::Duoram<::doram_field::Fp>;
                $body
            }
            $crate::common::BackendKind::Fjkw15 => {
                type $b = ::doram_fjkw15::backend::Fjkw15FpMemory;
                $body
            }
        }
    };
}
pub(crate) use with_backend;

impl BackendKind {
    /// Every backend.
    pub const ALL: [BackendKind; 3] = [
        BackendKind::LinearScan,
        BackendKind::Ramen,
        BackendKind::Duoram,
    ];

    /// The backend's protocol name.
    pub fn name(self) -> &'static str {
        with_backend!(self, B => <B as doram_oram::Protocol>::NAME)
    }
}

/// One party's configuration of a test run.
#[derive(Clone, Copy, Debug)]
pub struct RunConfig {
    /// The backend.
    pub backend: BackendKind,
    /// The roles.
    pub roles: Roles,
    /// This party's seed.
    pub seed: Seed,
}

/// One party's run of `P` on the configured backend.
pub fn run_party<P: Program>(
    session: Session,
    config: &RunConfig,
    data: Option<P::Data<'_>>,
    query: Option<P::Query>,
) -> Result<PartyRun<P::Output>, ProgramError> {
    with_backend!(config.backend, B => doram_programs::run_party::<P, B>(
        session,
        config.seed,
        config.roles,
        data,
        query
    ))
}

/// The three parties' runs of `P` on `backend`, as threads over an in-process mesh.
pub fn run_local<P: Program>(
    backend: BackendKind,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    with_backend!(backend, B => doram_programs::run_local::<P, B>(roles, data, query, entropy))
}

/// Runs `party` at each of three parties of an in-process mesh with `backend` and `roles`,
/// each party's seed derived from the test seed; returns the three results in party order.
pub fn run_program<T: Send>(
    seed: u64,
    backend: BackendKind,
    roles: Roles,
    party: impl Fn(Session, &RunConfig) -> Result<T, ProgramError> + Sync,
) -> [Result<T, ProgramError>; 3] {
    run_three(Entropy::InsecureSeed(seed), |session, s| {
        let config = RunConfig {
            backend,
            roles,
            seed: s,
        };
        party(session, &config)
    })
}

/// [`run_program`] with every session recording; returns the three transcripts.
pub fn transcripts<T>(
    seed: u64,
    backend: BackendKind,
    roles: Roles,
    party: impl Fn(Session, &RunConfig) -> Result<PartyRun<T>, ProgramError> + Sync,
) -> [Transcript; 3] {
    run_program(seed, backend, roles, |mut session, config| {
        session.record_transcript(true);
        // The machine owns the session; recording continues inside.
        Ok(party(session, config)?.transcript.expect("recording"))
    })
    .map(|r| r.expect("run"))
}
