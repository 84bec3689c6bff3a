//! The benchmark runner over real sockets: three parties connected by mutually authenticated
//! TLS 1.3 on loopback (listeners on port 0, certificates generated per test), as `doram party`
//! runs it on three hosts; every result and the final memory are verified.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::time::Duration;

use doram_core::PartyId;
use doram_duoram::{BenchConfig, Kind, OpMix, run_party};
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, ConnectOptions, Session, Transport};

fn tls_sessions() -> (tempfile::TempDir, Vec<Session>) {
    let listeners: Vec<TcpListener> = (0..3)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = generate_local(dir.path(), 3, Addresses::Explicit(addrs)).unwrap();
    let mut config = Config::load(path).unwrap();
    config.timeout = Duration::from_secs(20);
    let config = &config;
    let sessions = std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                s.spawn(move || {
                    Session::connect_with(
                        config,
                        PartyId::ALL[i],
                        ConnectOptions::new().transport(Transport::Tls).listener(l),
                    )
                    .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (dir, sessions)
}

#[test]
fn verified_run_over_tls() {
    let (_dir, sessions) = tls_sessions();
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
