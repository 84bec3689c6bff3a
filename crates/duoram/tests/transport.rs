//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_duoram::{BenchConfig, Kind, OpMix, run_party};
use doram_net::Transport;
use doram_net::testkit::{loopback_sessions, run};
use doram_oram::testkit::bench_over_tls;

#[test]
fn verified_run_over_tls() {
    let mut cfg = BenchConfig::new(300, 24);
    cfg.mix = OpMix::Random;
    cfg.verify = true;
    cfg.preprocess_first = true;
    cfg.chunk = 10;
    cfg.seed = 11;
    let reports = run(loopback_sessions(3, Transport::Tls), |session| {
        run_party(session, &cfg).unwrap()
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
    let r = bench_over_tls::<doram_duoram::Duoram<doram_field::Z64>>(&cfg);
    assert!(r.verified && r.per_access.online.rounds > 0.0);
}
