//! Three-party runs shared by the program tests.

// Each test binary uses a subset of these helpers.
#![allow(dead_code)]

use doram_core::Entropy;
use doram_net::{Session, Transcript};
use doram_programs::{BackendKind, PartyRun, ProgramError, Roles, RunConfig, run_three};

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
