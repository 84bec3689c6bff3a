//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doram_net::{Session, Transport, loopback_mesh};
use doram_oram::bench::{BenchConfig, run_party};
use doram_ramen::{Params, Ramen};

fn tls_sessions() -> Vec<Session> {
    let dir = tempfile::tempdir().unwrap();
    loopback_mesh(dir.path(), 3, Transport::Tls, Duration::from_secs(20)).unwrap()
}

#[test]
fn verified_run_over_tls() {
    let sessions = tls_sessions();
    let params = Params::new(200).unwrap();
    let mut cfg = BenchConfig::new(200, params.epoch() + 5);
    cfg.seed = 11;
    let reports: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|session| s.spawn(|| run_party::<Ramen>(session, &cfg)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r.party, format!("P{i}"));
        assert!(r.online.bytes_sent > 0 && r.online.rounds > 0);
    }
}
