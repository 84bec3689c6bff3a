//! Plaintext TCP: messaging, setup, shaping, and faults injected by a raw socket playing a
//! peer.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use common::{
    TIMEOUT, connect_in_thread, fake_peer, frame, frame_at, listeners, run, tcp_config,
    tcp_sessions,
};
use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::{ConnectOptions, NetError, Session, Transport, TransportKind};

const P0: PartyId = PartyId::P0;
const P1: PartyId = PartyId::P1;

#[test]
fn three_parties_exchange_over_plaintext() {
    let sessions = tcp_sessions(3, "");
    let out = run(sessions, |mut s| {
        assert_eq!(s.transport(), TransportKind::Tcp);
        let me = s.me();
        for round in 0..3u32 {
            for p in s.peers() {
                s.send(p, &(me.index() as u32, round)).unwrap();
            }
            for p in s.peers() {
                assert_eq!(s.recv::<(u32, u32)>(p).unwrap(), (p.index() as u32, round));
            }
        }
        (s.rounds(), s.stats().total().sum().msgs_received)
    });
    assert_eq!(out, vec![(3, 6); 3]);
}

#[test]
fn simultaneous_large_messages_do_not_deadlock() {
    const SIZE: usize = 24 << 20;
    let sessions = tcp_sessions(2, "");
    run(sessions, |mut s| {
        let other = s.me().next(2);
        let mine: Vec<u8> = (0..SIZE)
            .map(|i| (i % 251) as u8 ^ s.me().index() as u8)
            .collect();
        s.send_bytes(other, &mine).unwrap();
        s.send_bytes(other, &mine[..1000]).unwrap();
        let theirs = s.recv_bytes(other).unwrap();
        assert_eq!(theirs.len(), SIZE);
        assert!(
            theirs
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i % 251) as u8 ^ other.index() as u8)
        );
        assert_eq!(s.recv_bytes(other).unwrap().len(), 1000);
    });
}

/// A real party P0 and a raw-socket fake P1.
fn real_and_fake() -> (
    thread::JoinHandle<Result<Session, NetError>>,
    common::FakePeer,
) {
    let (mut ls, addrs) = listeners(2);
    let mut config = tcp_config(&addrs, "");
    config.max_frame_bytes = 65536;
    let l1 = ls.pop().unwrap();
    let l0 = ls.pop().unwrap();
    let real = connect_in_thread(config, P0, l0, Transport::DangerousPlaintext);
    let fake = fake_peer(2, 1, 0, &l1, &addrs[0], None);
    (real, fake)
}

#[test]
fn garbage_from_a_raw_peer_is_malformed() {
    let (real, mut fake) = real_and_fake();
    let mut s = real.join().unwrap().unwrap();
    fake.out.write_all(&frame(1, &[0xff; 6])).unwrap(); // not a postcard u32
    fake.out.write_all(&frame_at(1, 1, 0, b"\x05")).unwrap();
    // A frame header with Lamport timestamp 0 is invalid.
    fake.out.write_all(&frame(0, b"xyz")).unwrap();
    fake.out.flush().unwrap();
    let e = s.recv::<u32>(P1).unwrap_err();
    assert!(
        matches!(e, NetError::Peer(PeerFault { peer: P1, .. })),
        "{e}"
    );
    assert_eq!(s.recv::<u8>(P1).unwrap(), 5);
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(e, NetError::Peer(PeerFault { peer: P1, .. })),
        "{e}"
    );
    // What P0 sends still reaches the fake.
    s.send_bytes(P1, b"hi").unwrap();
    let mut got = [0u8; 14];
    fake.incoming.read_exact(&mut got).unwrap();
    assert_eq!(&got[12..], b"hi");
}

#[test]
fn huge_length_from_a_raw_peer_is_rejected() {
    let (real, mut fake) = real_and_fake();
    let mut s = real.join().unwrap().unwrap();
    fake.out
        .write_all(&[0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(
            e,
            NetError::FrameTooLarge {
                peer: P1,
                len: 0xffff_ffff,
                limit: 65536
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("P1"));
}

#[test]
fn raw_peer_closing_mid_frame_or_between_frames() {
    let (real, mut fake) = real_and_fake();
    let mut s = real.join().unwrap().unwrap();
    let f = frame(1, &[7; 100]);
    fake.out.write_all(&f[..50]).unwrap();
    drop(fake);
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(e, NetError::Peer(PeerFault { peer: P1, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("inside a frame"), "{e}");

    let (real, mut fake) = real_and_fake();
    let mut s = real.join().unwrap().unwrap();
    fake.out.write_all(&frame(1, &[7; 100])).unwrap();
    drop(fake);
    assert_eq!(s.recv_bytes(P1).unwrap().len(), 100);
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Closed { peer: P1 })
    ));
    assert!(matches!(
        s.recv_bytes(P1),
        Err(NetError::Closed { peer: P1 })
    ));
    // Sending to the vanished peer fails too (once the reset has come back).
    let deadline = Instant::now() + Duration::from_secs(5);
    let e = loop {
        match s.send_bytes(P1, &[0; 4096]) {
            Err(e) => break e,
            Ok(()) if Instant::now() < deadline => thread::sleep(Duration::from_millis(1)),
            Ok(()) => panic!("sends to a closed peer kept succeeding"),
        }
    };
    assert!(matches!(e, NetError::Closed { peer: P1 }), "{e}");
}

#[test]
fn silent_raw_peer_times_out() {
    let (real, fake) = real_and_fake();
    let mut s = real.join().unwrap().unwrap();
    let start = Instant::now();
    let e = s.recv_bytes(P1).unwrap_err();
    assert!(
        matches!(e, NetError::Timeout { peer: P1, after } if after == TIMEOUT),
        "{e}"
    );
    assert!(start.elapsed() >= TIMEOUT);
    // Not sticky: a late message is still received.
    let mut out = fake.out;
    out.write_all(&frame(1, b"\x01")).unwrap();
    assert_eq!(s.recv::<u8>(P1).unwrap(), 1);
}

#[test]
fn dropping_a_session_gives_closed_not_a_hang() {
    let mut sessions = tcp_sessions(3, "");
    sessions[1].send(P0, &1u8).unwrap();
    let p1 = sessions.remove(1);
    drop(p1);
    assert_eq!(sessions[0].recv::<u8>(P1).unwrap(), 1);
    assert!(matches!(
        sessions[0].recv::<u8>(P1),
        Err(NetError::Closed { peer: P1 })
    ));
    assert!(matches!(
        sessions[1].recv::<u8>(P1),
        Err(NetError::Closed { peer: P1 })
    ));
    sessions[0].send(PartyId::P2, &5u8).unwrap();
    assert_eq!(sessions[1].recv::<u8>(P0).unwrap(), 5);
}

#[test]
fn parties_starting_late_are_retried() {
    // P1's port is free but unbound until it starts, so P0's first dials are refused.
    let (mut ls, addrs) = listeners(2);
    let l0 = ls.remove(0);
    drop(ls);
    let config = tcp_config(&addrs, "");
    let c0 = config.clone();
    let p0 = connect_in_thread(c0, P0, l0, Transport::DangerousPlaintext);
    thread::sleep(Duration::from_millis(300));
    let mut p1 = Session::connect_insecure_plaintext(&config, P1).unwrap();
    let mut p0 = p0.join().unwrap().unwrap();
    p0.send(P1, &"late").unwrap();
    assert_eq!(p1.recv::<String>(P0).unwrap(), "late");
}

#[test]
fn missing_peer_fails_after_the_connect_timeout() {
    let (mut ls, addrs) = listeners(3);
    let mut config = tcp_config(&addrs, "");
    config.connect_timeout = Duration::from_millis(400);
    drop(ls.split_off(1));
    let start = Instant::now();
    let e = Session::connect_with(
        &config,
        P0,
        ConnectOptions::new()
            .transport(Transport::DangerousPlaintext)
            .listener(ls.remove(0)),
    )
    .unwrap_err();
    assert!(matches!(e, NetError::Connect { .. }), "{e}");
    assert!(start.elapsed() >= Duration::from_millis(400));
}

#[test]
fn hello_for_another_session_is_refused() {
    let (mut ls, addrs) = listeners(2);
    let mut config = tcp_config(&addrs, "");
    config.connect_timeout = Duration::from_secs(2);
    let l0 = ls.remove(0);
    let real = connect_in_thread(config, P0, l0, Transport::DangerousPlaintext);
    // Claims to be P1 of a 3-party session.
    let mut sock = TcpStream::connect(&addrs[0]).unwrap();
    sock.write_all(b"DRMN\x01\x03\x01\x00").unwrap();
    let mut ack = [0u8; 8];
    sock.read_exact(&mut ack).unwrap();
    assert_eq!(&ack[..5], b"DRMN\x01");
    assert_ne!(ack[5], 0, "must not be accepted");
    let e = real.join().unwrap().unwrap_err();
    assert!(matches!(e, NetError::Connect { peer: P1, .. }), "{e}");
    assert!(e.to_string().contains("different number of parties"), "{e}");
}

#[test]
fn shaping_over_tcp_delays_round_trips_and_caps_bandwidth() {
    let sessions = tcp_sessions(2, "[shaping]\nlatency_ms = 20\nbandwidth_mbit = 80\n");
    let out = run(sessions, |mut s| {
        let other = s.me().next(2);
        let start = Instant::now();
        if s.me() == P0 {
            s.send(other, &1u8).unwrap();
            let _: u8 = s.recv(other).unwrap();
        } else {
            let x: u8 = s.recv(other).unwrap();
            s.send(other, &x).unwrap();
        }
        let rtt = start.elapsed();
        // 1 MB at 80 Mbit/s: at least 100 ms (plus latency).
        let start = Instant::now();
        if s.me() == P0 {
            s.send_bytes(other, &vec![1u8; 1_000_000]).unwrap();
            let _ = s.recv_bytes(other).unwrap();
        } else {
            let _ = s.recv_bytes(other).unwrap();
            s.send_bytes(other, &[]).unwrap();
        }
        (rtt, start.elapsed())
    });
    assert!(out[0].0 >= Duration::from_millis(40), "{:?}", out[0].0);
    assert!(out[0].1 >= Duration::from_millis(100), "{:?}", out[0].1);
}

#[test]
fn binding_the_configured_address_works() {
    // Free ports are picked, released and bound again by the sessions themselves.
    let (ls, addrs) = listeners(2);
    drop(ls);
    let config = tcp_config(&addrs, "");
    let out = thread::scope(|s| {
        let h: Vec<_> = [P0, P1]
            .into_iter()
            .map(|id| {
                let config = &config;
                s.spawn(move || {
                    let mut sess = Session::connect_insecure_plaintext(config, id).unwrap();
                    let other = id.next(2);
                    sess.send(other, &id).unwrap();
                    sess.recv::<PartyId>(other).unwrap()
                })
            })
            .collect();
        h.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    assert_eq!(out, vec![P1, P0]);
}

#[test]
fn an_address_in_use_is_reported() {
    let (ls, addrs) = listeners(2);
    let config = tcp_config(&addrs, "");
    // `ls[0]` still holds P0's address.
    let e = Session::connect_insecure_plaintext(&config, P0).unwrap_err();
    assert!(
        matches!(&e, NetError::Listen { address, .. } if *address == addrs[0]),
        "{e}"
    );
    drop(ls);
}

#[test]
fn the_listener_is_closed_when_connect_returns() {
    // A session that reuses the addresses of the one before it (the next run on the same
    // configuration) must not meet the old listener: it would take the new connections into
    // its backlog and reset them when it closes.
    let (ls, addrs) = listeners(3);
    drop(ls);
    let config = tcp_config(&addrs, "");
    for run in 0..5u32 {
        let out = thread::scope(|s| {
            let h: Vec<_> = PartyId::first(3)
                .iter()
                .map(|&id| {
                    let (config, addrs) = (&config, &addrs);
                    s.spawn(move || {
                        let mut sess = Session::connect_insecure_plaintext(config, id).unwrap();
                        // Our address is free again as soon as setup has returned.
                        drop(std::net::TcpListener::bind(&addrs[id.index()]).unwrap());
                        for p in sess.peers() {
                            sess.send(p, &(id, run)).unwrap();
                        }
                        sess.peers()
                            .map(|p| sess.recv::<(PartyId, u32)>(p).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            h.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
        });
        for (id, got) in PartyId::first(3).iter().zip(out) {
            let want: Vec<_> = PartyId::first(3)
                .iter()
                .filter(|&p| p != id)
                .map(|&p| (p, run))
                .collect();
            assert_eq!(got, want);
        }
    }
}
