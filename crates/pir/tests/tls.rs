//! The service over real TLS on loopback: servers meshed with mutual TLS, clients with
//! server-authenticated TLS; an honest run and a run with a corrupt key holder.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use doram_net::Config;
use doram_net::certs::{Addresses, generate_local};
use doram_net::testkit::listeners;
use doram_pir::server::serve_tls_on;
use doram_pir::{Behaviour, Client, Database, Server, ServerConfig, ServerId, Stage};

fn run(
    behaviours: [Behaviour; 3],
    queries: &[u64],
    db: &Arc<Database>,
) -> Vec<doram_pir::QueryOutcome> {
    let dir = tempfile::tempdir().unwrap();
    let path = generate_local(dir.path(), 3, Addresses::FreeLocalPorts).unwrap();
    let mut net = Config::load(path).unwrap();
    net.timeout = Duration::from_secs(5);
    let mut servers = Vec::new();
    let mut threads = Vec::new();
    let (ls, addresses) = listeners(3);
    let servers_and_listeners = ServerId::ALL.into_iter().zip(behaviours).zip(ls);
    for ((id, behaviour), listener) in servers_and_listeners {
        let mut config = ServerConfig::new(id);
        config.pool_size = 2;
        let server = Server::new(config, db.clone(), behaviour);
        servers.push(server.clone());
        let net = net.clone();
        threads.push(thread::spawn(move || serve_tls_on(&server, &net, listener)));
    }
    let addrs = [
        addresses[0].as_str(),
        addresses[1].as_str(),
        addresses[2].as_str(),
    ];
    let mut outcomes = Vec::new();
    {
        // Two clients at once.
        let mut a = Client::connect(&net, addrs, Duration::from_secs(2)).unwrap();
        let mut b = Client::connect(&net, addrs, Duration::from_secs(2)).unwrap();
        for &i in queries {
            outcomes.push(a.query(i).unwrap());
            outcomes.push(b.query(i).unwrap());
        }
    }
    for s in &servers {
        s.shutdown_handle().shutdown();
    }
    for t in threads {
        t.join().unwrap().unwrap();
    }
    outcomes
}

#[test]
fn queries_over_tls() {
    let values: Vec<u64> = (0..1000u64)
        .map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let db = Arc::new(Database::from_u64s(&values).unwrap());
    let queries = [0u64, 999, 500];
    let honest = run(
        [Behaviour::Honest, Behaviour::Honest, Behaviour::Honest],
        &queries,
        &db,
    );
    for (k, out) in honest.iter().enumerate() {
        assert_eq!(out.value, values[queries[k / 2] as usize].to_le_bytes());
        assert!(out.fallback.is_none(), "{:?}", out.fallback);
        assert!(out.total_bytes() > 0);
    }
    let attacked = run(
        [
            Behaviour::Honest,
            Behaviour::Garbage(Stage::Answer),
            Behaviour::Honest,
        ],
        &queries,
        &db,
    );
    for (k, out) in attacked.iter().enumerate() {
        assert_eq!(out.value, values[queries[k / 2] as usize].to_le_bytes());
        assert_eq!(out.blamed(), Some(ServerId::S1));
        assert_eq!(out.fallback.as_ref().unwrap().trusted, ServerId::S2);
    }
}
