//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doram_net::{Shaping, Transport, loopback_mesh};
use doram_oram::bench::{BenchConfig, RunEnv, run_on};
use doram_ramen::{Params, Ramen};

#[test]
fn verified_run_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = loopback_mesh(dir.path(), 3, Transport::Tls, Duration::from_secs(20)).unwrap();
    let params = Params::new(200).unwrap();
    let mut cfg = BenchConfig::new(200, params.epoch() + 5);
    cfg.seed = 11;
    let r = run_on::<Ramen>(sessions, &cfg, RunEnv::new("tls-loopback", Shaping::NONE)).unwrap();
    assert!(r.verified);
    for (i, p) in r.parties.iter().enumerate() {
        assert_eq!(p.party, format!("P{i}"));
        assert!(p.online.bytes_sent > 0 && p.online.rounds > 0);
    }
}
