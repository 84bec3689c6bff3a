//! Client–server service connections: server-authenticated TLS, many clients, wrong identity.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::service::{
    HandshakeLimits, SERVICE_CLIENT, SERVICE_SIDE, ServiceGate, ServiceListener, connect_service,
};
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

/// A gate over a service listener on port 0 with the given limits.
fn gate(config: &Config, limits: HandshakeLimits) -> (ServiceGate, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let service = ServiceListener::from_listener(listener, config, PartyId::P1).unwrap();
    (ServiceGate::new(service, limits), addr)
}

#[test]
fn idle_sockets_do_not_keep_a_client_out_of_the_gate() {
    let (_dir, config) = setup();
    let limits = HandshakeLimits {
        timeout: Duration::from_secs(5),
        max_pending: 4,
        max_pending_per_address: 2,
        max_frame_bytes: Some(64),
    };
    let (mut gate, addr) = gate(&config, limits);
    let idle: Vec<_> = (0..12)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    // Let the gate take them all in (each newcomer beyond the limits cuts the oldest).
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        assert!(gate.accept(Duration::from_millis(20)).unwrap().is_none());
    }
    assert!(gate.pending() <= 2, "{} pending", gate.pending());
    assert!(gate.failed_handshakes() >= 10);
    // Each cut handshake counts once, not again when its thread reports.
    assert!(
        gate.failed_handshakes() <= 12,
        "{}",
        gate.failed_handshakes()
    );
    let client = {
        let (addr, config) = (addr.clone(), config.clone());
        thread::spawn(move || {
            let mut s = connect_service(&addr, &config, PartyId::P1, TIMEOUT).unwrap();
            s.send(SERVICE_SIDE, &7u64).unwrap();
            // A frame over the service's request limit ends the session.
            s.send_bytes(SERVICE_SIDE, &[0u8; 100]).unwrap();
        })
    };
    let established = loop {
        if let Some(e) = gate.accept(Duration::from_millis(50)).unwrap() {
            break e;
        }
        assert!(start.elapsed() < TIMEOUT, "the client never got through");
    };
    let mut s = established.session;
    assert!(established.peer.ip().is_loopback());
    assert_eq!(s.recv::<u64>(SERVICE_CLIENT).unwrap(), 7);
    assert!(matches!(
        s.recv_bytes(SERVICE_CLIENT),
        Err(NetError::FrameTooLarge { .. })
    ));
    client.join().unwrap();
    drop(idle);
}

#[test]
fn a_trickling_client_is_cut_at_the_handshake_deadline() {
    let (_dir, config) = setup();
    let limits = HandshakeLimits {
        timeout: Duration::from_millis(300),
        ..HandshakeLimits::default()
    };
    let (mut gate, addr) = gate(&config, limits);
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let start = Instant::now();
    // A TLS record header, then one byte every 40 ms: every read makes progress, the
    // handshake never completes.
    let mut cut = false;
    for b in [0x16u8, 3, 1, 0x40, 0]
        .into_iter()
        .chain(std::iter::repeat(1))
    {
        assert!(gate.accept(Duration::from_millis(20)).unwrap().is_none());
        if sock.write_all(&[b]).is_err() {
            cut = true;
            break;
        }
        let mut buf = [0u8; 64];
        match sock.read(&mut buf) {
            Ok(0) => {
                cut = true;
                break;
            }
            Err(e) if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                cut = true;
                break;
            }
            _ => {}
        }
        if start.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    assert!(cut, "the trickling client was not cut off");
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn the_client_setup_has_one_deadline() {
    let (_dir, config) = setup();
    // A "service" that trickles a TLS record: the header of a 16 KiB handshake record, then
    // one byte every 30 ms. Each read makes progress, the record never completes.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let record = [0x16u8, 3, 3, 0x40, 0]
            .into_iter()
            .chain(std::iter::repeat(1));
        for b in record.take(100) {
            if s.write_all(&[b]).is_err() {
                break;
            }
            thread::sleep(Duration::from_millis(30));
        }
    });
    let start = Instant::now();
    let r = connect_service(&addr, &config, PartyId::P1, Duration::from_millis(300));
    assert!(r.is_err());
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    drop(r);
    server.join().unwrap();
}
