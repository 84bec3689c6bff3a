//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doram_duoram::{BenchConfig, Kind, OpMix, run_party};
use doram_net::{Session, Shaping, Transport, loopback_mesh};
use doram_oram::bench::{RunEnv, run_on};

fn tls_sessions() -> Vec<Session> {
    let dir = tempfile::tempdir().unwrap();
    loopback_mesh(dir.path(), 3, Transport::Tls, Duration::from_secs(20)).unwrap()
}

#[test]
fn verified_run_over_tls() {
    let sessions = tls_sessions();
    let mut cfg = BenchConfig::new(300, 24);
    cfg.mix = OpMix::Random;
    cfg.verify = true;
    cfg.preprocess_first = true;
    cfg.chunk = 10;
    cfg.seed = 11;
    let reports: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|session| s.spawn(|| run_party(session, &cfg)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r.party.index(), i);
        assert!(r.preprocessing_comm.bytes > 0);
        assert_eq!(r.counts.iter().sum::<usize>(), 24);
        for k in Kind::ALL {
            let c = r.online_comm[k as usize];
            assert!(
                r.counts[k as usize] == 0 || (c.bytes > 0 && c.rounds > 0),
                "{k:?}"
            );
        }
    }
}

/// The generic runner over the same sockets: random reads and writes, verified.
#[test]
fn verified_generic_run_over_tls() {
    let mut cfg = doram_oram::bench::BenchConfig::new(300, 24);
    cfg.seed = 12;
    let env = RunEnv::new("tls-loopback", Shaping::NONE);
    let r = run_on::<doram_duoram::Duoram<doram_field::Z64>>(tls_sessions(), &cfg, env).unwrap();
    assert!(r.verified && r.per_access.online.rounds > 0.0);
}
