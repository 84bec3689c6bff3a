//! Client–server service connections: server-authenticated TLS, many clients, wrong identity.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::service::{SERVICE_CLIENT, SERVICE_SIDE, ServiceListener, connect_service};
use doram_net::{Config, NetError, TransportKind};

const TIMEOUT: Duration = Duration::from_secs(10);

fn setup() -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    let path = generate_local(dir.path(), 3, Addresses::FreeLocalPorts).unwrap();
    (dir, Config::load(path).unwrap())
}

#[test]
fn several_clients_exchange_with_one_service() {
    let (_dir, config) = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let service = ServiceListener::from_listener(listener, &config, PartyId::P2).unwrap();
    let server = thread::spawn(move || {
        let mut handlers = Vec::new();
        for _ in 0..3 {
            let pending = loop {
                if let Some(p) = service.accept(Duration::from_millis(50)).unwrap() {
                    break p;
                }
            };
            handlers.push(thread::spawn(move || {
                let mut s = pending.handshake().unwrap();
                assert_eq!(s.me(), SERVICE_SIDE);
                let x: u64 = s.recv(SERVICE_CLIENT).unwrap();
                let big = vec![x as u8; 1 << 20];
                s.send(SERVICE_CLIENT, &(x * 2)).unwrap();
                s.send_bytes(SERVICE_CLIENT, &big).unwrap();
            }));
        }
        for h in handlers {
            h.join().unwrap();
        }
    });
    let clients: Vec<_> = (0..3u64)
        .map(|k| {
            let addr = addr.clone();
            let config = config.clone();
            thread::spawn(move || {
                let mut s = connect_service(&addr, &config, PartyId::P2, TIMEOUT).unwrap();
                assert_eq!(s.transport(), TransportKind::Tls);
                s.send(SERVICE_SIDE, &(k + 10)).unwrap();
                assert_eq!(s.recv::<u64>(SERVICE_SIDE).unwrap(), 2 * (k + 10));
                let big = s.recv_bytes(SERVICE_SIDE).unwrap();
                assert_eq!(big.len(), 1 << 20);
                assert!(big.iter().all(|&b| b == (k + 10) as u8));
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    server.join().unwrap();
}

#[test]
fn client_rejects_a_service_with_another_identity() {
    let (_dir, config) = setup();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // P0's certificate behind the address where the client expects P1.
    let service = ServiceListener::from_listener(listener, &config, PartyId::P0).unwrap();
    let server = thread::spawn(move || {
        let pending = loop {
            if let Some(p) = service.accept(Duration::from_millis(50)).unwrap() {
                break p;
            }
        };
        pending.handshake().is_err()
    });
    let err = connect_service(&addr, &config, PartyId::P1, TIMEOUT).unwrap_err();
    assert!(matches!(err, NetError::Handshake { .. }), "{err}");
    assert!(server.join().unwrap());
}

#[test]
fn silent_client_times_out_without_blocking_accept() {
    let (_dir, mut config) = setup();
    config.timeout = Duration::from_millis(200);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let service = ServiceListener::from_listener(listener, &config, PartyId::P0).unwrap();
    let _silent = std::net::TcpStream::connect(addr).unwrap();
    let pending = service.accept(TIMEOUT).unwrap().unwrap();
    assert!(pending.handshake().is_err());
    assert!(service.accept(Duration::from_millis(20)).unwrap().is_none());
}
