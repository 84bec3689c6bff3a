//! The generic bench runner over Ramen: verified runs over several epochs at an odd size, with
//! the per-step times, and a corrupted opening caught by the verification.
#![allow(clippy::unwrap_used)]

use doram_core::Entropy;
use doram_net::Shaping;
use doram_oram::bench::{BenchConfig, run_local};
use doram_ramen::{Params, Ramen};

fn cfg(n: usize, accesses: usize) -> BenchConfig {
    let mut c = BenchConfig::new(n, accesses);
    c.seed = 5;
    c.entropy = Entropy::InsecureSeed(2);
    c
}

#[test]
fn verified_runs_over_several_epochs() {
    let epoch = Params::new(101).unwrap().epoch();
    let mut c = cfg(101, 2 * epoch + 3);
    let r = run_local::<Ramen>(&c, Shaping::NONE).unwrap();
    assert!(r.verified);
    assert_eq!(
        (r.protocol.as_str(), r.word.as_str(), r.ops.as_str()),
        ("ramen", "Fp", "hidden")
    );
    assert!(r.per_access.online.bytes > 0.0 && r.per_access.preprocessing.bytes > 0.0);
    // Ramen's own steps appear with their times and their messages.
    let p0 = &r.parties[0];
    let step = |name: &str| p0.steps.iter().find(|s| s.name == name).unwrap();
    assert!(step("stash-read").ms.is_some() && step("stash-read").bytes_sent > 0);
    assert!(step("preprocess").bytes_sent > 0);
    c.preprocess_first = true;
    c.zero_memory = true;
    c.writes_only = true;
    c.threads = 2;
    let r = run_local::<Ramen>(&c, Shaping::NONE).unwrap();
    assert!(r.parties.iter().all(|p| p.preprocessing.bytes_sent > 0));
}

/// A bit flipped in the last frame P1 sends P2 — its opening of the results and the final
/// memory — makes P2's verification fail at the first result.
#[test]
fn a_corrupted_opening_fails_verification() {
    doram_oram::testkit::assert_bench_catches_a_corrupted_opening::<Ramen>(&cfg(100, 13));
}
