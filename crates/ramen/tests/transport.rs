//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_oram::bench::BenchConfig;
use doram_oram::testkit::bench_over_tls;
use doram_ramen::{Params, Ramen};

#[test]
fn verified_run_over_tls() {
    let params = Params::new(200).unwrap();
    let mut cfg = BenchConfig::new(200, params.epoch() + 5);
    cfg.seed = 11;
    let r = bench_over_tls::<Ramen>(&cfg);
    assert!(r.verified);
    for (i, p) in r.parties.iter().enumerate() {
        assert_eq!(p.party, format!("P{i}"));
        assert!(p.online.bytes_sent > 0 && p.online.rounds > 0);
    }
}
