//! The bench runner over the linear scan: verified runs at odd sizes, a corrupted opening
//! caught by the verification, the JSON report round trip, per-access figures without Init.
#![allow(clippy::unwrap_used)]

use doram_core::Entropy;
use doram_field::{Fp, Z64};
use std::time::{Duration, Instant};

use doram_net::Shaping;
use doram_oram::LinearScanOram;
use doram_oram::bench::{BenchConfig, BenchReport, run_local};

fn cfg(n: usize, accesses: usize) -> BenchConfig {
    let mut c = BenchConfig::new(n, accesses);
    c.seed = 11;
    c.entropy = Entropy::InsecureSeed(3);
    c
}

#[test]
fn verified_runs_at_odd_sizes() {
    for (n, first, writes) in [(13, false, false), (1, true, false), (33, true, true)] {
        let mut c = cfg(n, 9);
        c.preprocess_first = first;
        c.writes_only = writes;
        let r = run_local::<LinearScanOram<Z64>>(&c, Shaping::NONE).unwrap();
        assert!(r.verified);
        assert_eq!(
            (r.protocol.as_str(), r.word.as_str()),
            ("linear-scan", "Z64")
        );
        assert_eq!(r.parties.len(), 3);
        assert!(r.per_access.online.bytes > 0.0 && r.per_access.online.rounds > 0.0);
        assert!(r.parties.iter().all(|p| p.preprocessing.bytes_sent > 0));
    }
    let r = run_local::<LinearScanOram<Fp>>(&cfg(7, 5), Shaping::NONE).unwrap();
    assert_eq!((r.word.as_str(), r.ops.as_str()), ("Fp", "hidden"));
}

/// Init sends the whole memory in some protocols; per-access bytes must not include it: they
/// are the preprocessing and online bytes over the accesses, with Init and setup apart.
#[test]
fn per_access_figures_exclude_init_and_setup() {
    let c = cfg(21, 4);
    let r = run_local::<LinearScanOram<Z64>>(&c, Shaping::NONE).unwrap();
    let sum =
        |f: fn(&doram_oram::bench::PartyBench) -> u64| r.parties.iter().map(f).sum::<u64>() as f64;
    let online = sum(|p| p.online.bytes_sent);
    let prep = sum(|p| p.preprocessing.bytes_sent);
    assert!(sum(|p| p.init.bytes_sent) + sum(|p| p.setup.bytes_sent) > 0.0);
    assert_eq!(r.per_access.bytes, (online + prep) / 4.0);
    assert_eq!(r.per_access.online.bytes, online / 4.0);
    assert_eq!(r.init.bytes, sum(|p| p.init.bytes_sent));
}

#[test]
fn the_report_round_trips_through_json() {
    let mut r = run_local::<LinearScanOram<Z64>>(&cfg(5, 3), Shaping::lan()).unwrap();
    r.command = Some("doram bench oram --protocol linear-scan --n 5".into());
    let text = serde_json::to_string(&r).unwrap();
    let back: BenchReport = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], doram_oram::bench::SCHEMA);
    assert_eq!(v["parties_as"], "threads");
    assert!(v["latency_ms"].as_f64().unwrap() > 0.0);
    assert!(v["per_access"]["online"]["bytes"].as_f64().unwrap() > 0.0);
}

/// Verification is a real check: a bit flipped in the last frame P1 sends P2 — its shares of
/// the results and the final memory, opened for the check — makes P2's verification fail at
/// the first result.
#[test]
fn a_corrupted_opening_fails_verification() {
    doram_oram::testkit::assert_bench_catches_a_corrupted_opening::<LinearScanOram<Z64>>(&cfg(
        9, 4,
    ));
}

#[cfg(unix)]
#[test]
fn the_thread_cpu_clock_counts_this_thread_s_work() {
    let (c0, t0) = (
        doram_oram::bench::thread_cpu_time().expect("a thread CPU clock"),
        Instant::now(),
    );
    let mut x = 1u64;
    while t0.elapsed() < Duration::from_millis(20) {
        x = std::hint::black_box(x.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 7);
    }
    let (busy, wall) = (
        doram_oram::bench::thread_cpu_time().expect("a clock") - c0,
        t0.elapsed(),
    );
    // Spinning counts (unless the thread never got a core), and only this thread's time.
    assert!(
        busy > Duration::ZERO && busy <= wall + Duration::from_millis(1),
        "{busy:?} of CPU in {wall:?}"
    );
    // Sleeping uses no CPU: the clock moves by far less than the wall time.
    let t = doram_oram::bench::thread_cpu_time().expect("a thread CPU clock");
    std::thread::sleep(Duration::from_millis(30));
    let slept = doram_oram::bench::thread_cpu_time().expect("a thread CPU clock") - t;
    assert!(
        slept < Duration::from_millis(20),
        "{slept:?} of CPU while asleep"
    );
}
