//! TLS 1.3 with mutual authentication: messaging, certificate binding, configuration errors,
//! and faults injected by a fake peer that holds a valid identity.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{
    FakeTls, TIMEOUT, ca_deployment, connect_all, connect_in_thread, fake_peer, frame, frame_at,
    listeners, run, tls_config, tls_sessions,
};
use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::service::{ServiceListener, connect_service};
use doram_net::{Config, ConfigError, ConnectOptions, NetError, Session, Transport, TransportKind};
use rustls_pki_types::ServerName;

const P0: PartyId = PartyId::P0;
const P1: PartyId = PartyId::P1;
const P2: PartyId = PartyId::P2;

#[test]
fn three_parties_exchange_over_tls() {
    let (_dir, sessions) = tls_sessions(3);
    let out = run(sessions, |mut s| {
        assert_eq!(s.transport(), TransportKind::Tls);
        let me = s.me();
        // Large messages both ways at once, then small ones.
        let big: Vec<u8> = (0..(6 << 20))
            .map(|i| (i as u8).wrapping_mul(me.index() as u8 + 1))
            .collect();
        for p in s.peers() {
            s.send_bytes(p, &big).unwrap();
            s.send(p, &format!("{me} to {p}")).unwrap();
        }
        for p in s.peers() {
            let got = s.recv_bytes(p).unwrap();
            assert_eq!(got.len(), 6 << 20);
            assert!(
                got.iter()
                    .enumerate()
                    .all(|(i, &b)| b == (i as u8).wrapping_mul(p.index() as u8 + 1))
            );
            assert_eq!(s.recv::<String>(p).unwrap(), format!("{p} to {me}"));
        }
        s.rounds()
    });
    assert_eq!(out, vec![1, 1, 1]);
}

#[test]
fn pinned_certificates_without_a_ca() {
    let (ls, addrs) = listeners(2);
    let (dir, _) = tls_config(2, addrs);
    let path = dir.path().join("doram.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("ca = \"ca.pem\"", "");
    std::fs::write(&path, text).unwrap();
    let config = Config::load(&path).unwrap();
    assert_eq!(config.tls.as_ref().unwrap().ca, None);
    let sessions: Vec<Session> = connect_all(&config, ls, Transport::Tls)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let out = run(sessions, |mut s| {
        let other = s.me().next(2);
        s.send(other, &s.me()).unwrap();
        s.recv::<PartyId>(other).unwrap()
    });
    assert_eq!(out, vec![P1, P0]);
}

#[test]
fn certificates_from_another_ca_are_rejected() {
    let (mut ls, addrs) = listeners(2);
    let (_a, config_a) = tls_config(2, addrs.clone());
    let (_b, config_b) = tls_config(2, addrs);
    let l1 = ls.pop().unwrap();
    let l0 = ls.pop().unwrap();
    let (r0, r1) = thread::scope(|s| {
        let h0 =
            s.spawn(|| Session::connect_with(&config_a, P0, ConnectOptions::new().listener(l0)));
        let h1 =
            s.spawn(|| Session::connect_with(&config_b, P1, ConnectOptions::new().listener(l1)));
        (h0.join().unwrap(), h1.join().unwrap())
    });
    // Each side fails naming the other. The first to detect the foreign certificate says so;
    // the other may instead see its connection dropped by a party that has already given up.
    let mut texts = Vec::new();
    for (r, peer) in [(r0, P1), (r1, P0)] {
        let e = r.unwrap_err();
        assert!(
            matches!(&e, NetError::Handshake { peer: p, .. } | NetError::Connect { peer: p, .. } if *p == peer),
            "{e}"
        );
        texts.push(e.to_string());
    }
    assert!(
        texts.iter().any(|t| t.contains("certificate was rejected")),
        "{texts:?}"
    );
}

#[test]
fn a_party_using_another_partys_certificate_is_rejected() {
    let (mut ls, addrs) = listeners(3);
    let (dir, config) = tls_config(3, addrs.clone());
    let mut config = config;
    config.connect_timeout = Duration::from_secs(2);
    let l0 = ls.remove(0);
    let real = connect_in_thread(config.clone(), P0, l0, Transport::Tls);
    // The fake holds P2's (valid, CA-signed) certificate but claims to be P1.
    let fake = FakeTls::party(dir.path(), 2);
    let name = ServerName::try_from("party0.doram").unwrap();
    let conn = rustls::ClientConnection::new(Arc::clone(&fake.client), name).unwrap();
    let mut stream = rustls::StreamOwned::new(conn, TcpStream::connect(&addrs[0]).unwrap());
    stream.write_all(b"DRMN\x01\x03\x01\x00").unwrap();
    let mut ack = [0u8; 8];
    stream.read_exact(&mut ack).unwrap();
    assert_eq!(&ack[..5], b"DRMN\x01");
    assert_ne!(ack[5], 0, "P0 must refuse a P2 certificate claiming P1");
    // P0 itself also refuses to talk to a listener at P1's address that presents P2's
    // certificate (its name is party2.doram, not party1.doram).
    let l1 = &ls[0];
    thread::spawn({
        let l1 = l1.try_clone().unwrap();
        let server = Arc::clone(&fake.server);
        move || {
            if let Ok((sock, _)) = l1.accept() {
                let conn = rustls::ServerConnection::new(server).unwrap();
                let mut s = rustls::StreamOwned::new(conn, sock);
                let _ = s.read(&mut [0u8; 8]);
            }
        }
    });
    let e = real.join().unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            NetError::Handshake { peer: P1, .. } | NetError::Connect { peer: P1, .. }
        ),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("party1.doram") || text.contains("certificate"),
        "{text}"
    );
}

#[test]
fn a_certificate_that_also_names_another_party_is_rejected() {
    let (mut ls, addrs) = listeners(3);
    let dir = tempfile::tempdir().unwrap();
    // Party 2's request also names party1.doram, as the host of an extra address.
    let config = ca_deployment(dir.path(), &addrs, (2, "party1.doram:7001"));
    let l0 = ls.remove(0);
    let real = connect_in_thread(config.clone(), P0, l0, Transport::Tls);
    // The fake holds P2's CA-signed certificate, which is valid for party1.doram as well, and
    // claims to be P1.
    let fake = FakeTls::party(dir.path(), 2);
    let name = ServerName::try_from("party0.doram").unwrap();
    let conn = rustls::ClientConnection::new(Arc::clone(&fake.client), name).unwrap();
    let mut stream = rustls::StreamOwned::new(conn, TcpStream::connect(&addrs[0]).unwrap());
    stream.write_all(b"DRMN\x01\x03\x01\x00").unwrap();
    let mut ack = [0u8; 8];
    stream.read_exact(&mut ack).unwrap();
    assert_eq!(&ack[..5], b"DRMN\x01");
    assert_ne!(
        ack[5], 0,
        "P0 must refuse a certificate that names P1 and P2"
    );
    // P0 also refuses a listener at P1's address that presents that certificate.
    thread::spawn({
        let l1 = ls[0].try_clone().unwrap();
        let server = Arc::clone(&fake.server);
        move || {
            if let Ok((sock, _)) = l1.accept() {
                let conn = rustls::ServerConnection::new(server).unwrap();
                let mut s = rustls::StreamOwned::new(conn, sock);
                let _ = s.read(&mut [0u8; 8]);
            }
        }
    });
    let e = real.join().unwrap().unwrap_err();
    assert!(matches!(e, NetError::Handshake { peer: P1, .. }), "{e}");
    assert!(e.to_string().contains("also valid for P2's name"), "{e}");
}

#[test]
fn a_service_certificate_that_also_names_another_party_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let addrs: Vec<String> = (7000..7003).map(|p| format!("127.0.0.1:{p}")).collect();
    // P1's request also names party0.doram, as the host of an extra address.
    let config = ca_deployment(dir.path(), &addrs, (1, "party0.doram:7000"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let service = ServiceListener::from_listener(listener, &config, P1).unwrap();
    let wait = Duration::from_secs(10);
    let server = thread::spawn(move || service.accept(wait).unwrap().unwrap().handshake());
    let e = connect_service(&addr, &config, P1, wait).unwrap_err();
    assert!(e.to_string().contains("also valid for P0's name"), "{e}");
    assert!(server.join().unwrap().is_err());
}

#[test]
fn plaintext_client_at_a_tls_listener_is_rejected() {
    let (mut ls, addrs) = listeners(2);
    let (_dir, mut config) = tls_config(2, addrs.clone());
    config.connect_timeout = Duration::from_secs(2);
    let l0 = ls.remove(0);
    let real = connect_in_thread(config, P0, l0, Transport::Tls);
    let mut sock = TcpStream::connect(&addrs[0]).unwrap();
    sock.write_all(b"DRMN\x01\x02\x01\x00").unwrap();
    let mut buf = Vec::new();
    let _ = sock.read_to_end(&mut buf); // an alert, then the connection closes
    let e = real.join().unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            NetError::Connect { peer: P1, .. } | NetError::Handshake { peer: P1, .. }
        ),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("TLS handshake") || text.contains("not established"),
        "{text}"
    );
}

/// A real TLS party P0 and a fake P1 holding P1's genuine identity.
fn real_and_fake() -> (Session, common::FakePeer, tempfile::TempDir) {
    let (mut ls, addrs) = listeners(2);
    let (dir, mut config) = tls_config(2, addrs.clone());
    config.max_frame_bytes = 1 << 20;
    let l1 = ls.pop().unwrap();
    let l0 = ls.pop().unwrap();
    let real = connect_in_thread(config, P0, l0, Transport::Tls);
    let fake = fake_peer(
        2,
        1,
        0,
        &l1,
        &addrs[0],
        Some(&FakeTls::party(dir.path(), 1)),
    );
    (real.join().unwrap().unwrap(), fake, dir)
}

#[test]
fn rustls_runs_the_records_key_updates_and_close_notify() {
    // A peer that updates its keys mid-stream: both frames arrive.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out.write_all(&frame(1, b"\x05")).unwrap();
    fake.out.flush().unwrap();
    fake.out.tls().conn.refresh_traffic_keys().unwrap();
    fake.out.write_all(&frame_at(2, 1, 0, b"\x06")).unwrap();
    fake.out.flush().unwrap();
    assert_eq!(s.recv::<u8>(P1).unwrap(), 5);
    assert_eq!(s.recv::<u8>(P1).unwrap(), 6);
    // An orderly end (close_notify between frames) is a clean close.
    fake.out.tls().conn.send_close_notify();
    fake.out.flush().unwrap();
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Closed { peer: P1 })
    ));

    // A fatal alert from the peer ends the link with a TLS error.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out_raw
        .write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])
        .unwrap();
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(matches!(e, NetError::Tls { peer: P1, .. }), "{e}");
}

#[test]
fn tls_faults_from_an_authenticated_peer() {
    // Oversized frame announced inside TLS.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out.write_all(&frame(1, b"\x03")).unwrap();
    fake.out
        .write_all(&[0, 0, 0x20, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    fake.out.flush().unwrap();
    assert_eq!(s.recv::<u8>(P1).unwrap(), 3);
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(
            e,
            NetError::FrameTooLarge {
                peer: P1,
                len: 0x20_0000,
                limit: 0x10_0000
            }
        ),
        "{e}"
    );

    // Malformed frame header.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out.write_all(&frame(0, b"abc")).unwrap();
    fake.out.flush().unwrap();
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Peer(PeerFault { peer: P1, .. }))
    ));

    // Bytes that are not TLS records, written below TLS.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out_raw
        .write_all(&[0x17, 0x03, 0x03, 0x00, 0x20])
        .unwrap();
    fake.out_raw.write_all(&[0xab; 0x20]).unwrap();
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(matches!(e, NetError::Tls { peer: P1, .. }), "{e}");

    // Closing mid-frame and between frames.
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out.write_all(&frame(1, &[1; 10])[..15]).unwrap();
    fake.out.flush().unwrap();
    drop(fake);
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Peer(PeerFault { peer: P1, .. }))
    ));
    let (mut s, mut fake, _d) = real_and_fake();
    fake.out.write_all(&frame(1, &[1; 10])).unwrap();
    fake.out.flush().unwrap();
    drop(fake);
    assert_eq!(s.recv_bytes(P1).unwrap(), [1; 10]);
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Closed { peer: P1 })
    ));

    // Silence past the timeout.
    let (mut s, fake, _d) = real_and_fake();
    let start = Instant::now();
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(e, NetError::Timeout { peer: P1, after } if after == TIMEOUT),
        "{e}"
    );
    assert!(start.elapsed() >= TIMEOUT);
    // The real party's messages reach the fake, decrypted, framed.
    s.send_bytes(P1, b"ok").unwrap();
    let mut incoming = fake.incoming;
    let mut got = [0u8; 14];
    incoming.read_exact(&mut got).unwrap();
    assert_eq!(got, frame(1, b"ok")[..]);
}

#[test]
fn dropping_a_tls_session_gives_closed() {
    let (_dir, mut sessions) = tls_sessions(3);
    sessions[2].send(P0, &9u32).unwrap();
    let p2 = sessions.pop().unwrap();
    drop(p2);
    assert_eq!(sessions[0].recv::<u32>(P2).unwrap(), 9);
    assert!(matches!(
        sessions[0].recv::<u32>(P2),
        Err(NetError::Closed { peer: P2 })
    ));
    assert!(matches!(
        sessions[1].recv::<u32>(P2),
        Err(NetError::Closed { peer: P2 })
    ));
}

#[test]
fn tls_configuration_errors_are_clear() {
    let (_ls, addrs) = listeners(2);
    let (dir, config) = tls_config(2, addrs.clone());
    let connect = |config: &Config| {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Session::connect_with(config, P0, ConnectOptions::new().listener(l)).unwrap_err()
    };
    // Missing key file.
    std::fs::rename(dir.path().join("party0.key"), dir.path().join("moved.key")).unwrap();
    let e = connect(&config);
    assert!(
        matches!(e, NetError::Config(ConfigError::Read { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("party0.key"), "{e}");
    // Not a key.
    std::fs::write(dir.path().join("party0.key"), "hello\n").unwrap();
    let e = connect(&config);
    assert!(
        matches!(e, NetError::Config(ConfigError::Pem { .. })),
        "{e}"
    );
    // Another party's key.
    std::fs::copy(dir.path().join("party1.key"), dir.path().join("party0.key")).unwrap();
    let e = connect(&config);
    assert!(e.to_string().contains("does not match"), "{e}");
    // Bad certificate file.
    std::fs::rename(dir.path().join("moved.key"), dir.path().join("party0.key")).unwrap();
    std::fs::write(
        dir.path().join("party0.pem"),
        "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let e = connect(&config);
    assert!(
        matches!(e, NetError::Config(ConfigError::Pem { .. })),
        "{e}"
    );
    // No [tls] section: TLS is refused, plaintext must be asked for by name.
    let plain = common::tcp_config(&addrs, "");
    assert!(matches!(
        connect(&plain),
        NetError::Config(ConfigError::NoTls)
    ));
    // A party that is not in the configuration.
    let e = Session::connect(&plain, PartyId::P3).unwrap_err();
    assert!(
        matches!(e, NetError::Config(ConfigError::Invalid(_))),
        "{e}"
    );
}
