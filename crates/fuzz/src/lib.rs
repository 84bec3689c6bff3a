//! Fuzz harnesses for every decoder that reads input from a peer, a client or a file, and a
//! mutational driver that runs them on stable Rust.
//!
//! A [`Target`] is a function from bytes to `Ok(())` or a finding: a panic (caught by the
//! driver), or a failure the target detects itself (a party thread that panicked, a run that
//! hung past its deadline). Every target reads a few leading bytes as parameters (a length
//! limit, a domain size, which link and frame to corrupt and how) and the rest as the input
//! proper, and starts from seed inputs that decode correctly, so that mutations reach past the
//! first length check.
//!
//! [`fuzz`] runs a target for a budget of executions and time: each execution takes a seed
//! or an earlier input, applies one to four random mutations ([`mutate`]: bit flips, bytes
//! set to boundary values, 32-bit little-endian fields set to boundary lengths, insertions,
//! deletions, duplications, truncation, splicing with another input) and runs the target. The
//! driver has no coverage feedback; it is a short smoke run for CI (`tests/smoke.rs`) and a
//! long run by hand (the `doram-fuzz` binary, see SECURITY.md). Every finding becomes a file
//! in `regressions/<target>/`, which the smoke test replays.
//!
//! The protocol targets ([`targets::protocols`]) run three parties over an in-process mesh in
//! which one frame on one link is replaced, edited, cut or dropped as the input says; the
//! other parties must end with an error or a result, never a panic or a hang.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub mod mutate;
pub mod targets;

/// One harness.
pub struct Target {
    /// Its name (also the directory of its regressions).
    pub name: &'static str,
    /// What it feeds, to what.
    pub what: &'static str,
    /// Runs one input: `Err` is a finding the target detected itself.
    pub run: fn(&[u8]) -> Result<(), String>,
    /// Inputs that decode correctly, to mutate from.
    pub seeds: fn() -> Vec<Vec<u8>>,
}

/// How long to fuzz one target: whichever limit comes first.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Executions.
    pub execs: u64,
    /// Wall time.
    pub time: Duration,
}

/// An input that made a target fail.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The input.
    pub input: Vec<u8>,
    /// The panic message or the target's own report.
    pub message: String,
}

/// What one fuzzing run did.
#[derive(Clone, Debug)]
pub struct Report {
    /// The target.
    pub target: &'static str,
    /// Executions run.
    pub execs: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Failing inputs (at most one per distinct message).
    pub findings: Vec<Finding>,
}

/// Runs `target` on `input`, turning a panic into a finding.
pub fn check(target: &Target, input: &[u8]) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(|| (target.run)(input))) {
        Ok(r) => r,
        Err(p) => Err(panic_message(p.as_ref())),
    }
}

/// The text of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = p.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic with a non-text payload".into()
    }
}

/// Fuzzes `target` within `budget`, with mutations drawn from `seed`.
pub fn fuzz(target: &Target, budget: Budget, seed: u64) -> Report {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut corpus = (target.seeds)();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let start = Instant::now();
    let mut findings: Vec<Finding> = Vec::new();
    let mut execs = 0;
    // Seeds first, unmutated: they must pass.
    for s in corpus.clone() {
        record(&mut findings, &s, check(target, &s));
        execs += 1;
    }
    while execs < budget.execs && start.elapsed() < budget.time {
        let base = &corpus[rng.random_range(0..corpus.len())];
        let other = &corpus[rng.random_range(0..corpus.len())];
        let input = mutate::mutate(base, other, &mut rng);
        let outcome = check(target, &input);
        record(&mut findings, &input, outcome);
        // Keep a few mutants so that mutations can stack over generations.
        if corpus.len() < 256 && rng.random_ratio(1, 16) {
            corpus.push(input);
        }
        execs += 1;
    }
    Report {
        target: target.name,
        execs,
        elapsed: start.elapsed(),
        findings,
    }
}

fn record(findings: &mut Vec<Finding>, input: &[u8], outcome: Result<(), String>) {
    if let Err(message) = outcome
        && !findings.iter().any(|f| f.message == message)
    {
        findings.push(Finding {
            input: input.to_vec(),
            message,
        });
    }
}

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    targets::ALL.iter().find(|t| t.name == name)
}
