//! A peer that sends without the receiver asking cannot make it buffer more than the link's
//! queue (two largest frames) plus what is in flight: the sender's writer stalls, its link
//! fails with a timeout, and the frames that got through arrive whole and in order. Sends
//! never wait for the peer, so two parties that each send a burst far beyond the queues
//! before receiving both complete.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use common::{TIMEOUT, connect_all, connect_in_thread, listeners, run, tcp_sessions, tls_config};
use doram_core::PartyId;
use doram_net::{LocalMesh, NetError, Session, Transport};

const FRAME: usize = 1 << 20;
const ATTEMPTS: usize = 64;

/// Two TLS sessions with the common test settings and frames of at most `max_frame` bytes.
fn tls_sessions(max_frame: u32) -> Vec<Session> {
    let (ls, addrs) = listeners(2);
    let (_dir, mut config) = tls_config(2, addrs);
    config.max_frame_bytes = max_frame;
    connect_all(&config, ls, Transport::Tls)
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

/// P0 queues `ATTEMPTS` frames of 1 MiB for P1, which reads nothing until P0's link has
/// failed: P0 returns the error its next send got, P1 how many whole frames it then
/// received before the stream stalled.
fn flood(sessions: Vec<Session>) -> (NetError, usize) {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Mutex::new(rx);
    let out = run(sessions, |mut s| {
        if s.me() == PartyId::P0 {
            let frame = vec![7u8; FRAME];
            for _ in 0..ATTEMPTS {
                // Queued for the writer thread: nothing waits for P1.
                s.send_bytes(PartyId::P1, &frame).unwrap();
            }
            // The writer stalls once P1's queue and the socket buffers are full, and its
            // write times out after the send timeout.
            let deadline = Instant::now() + 20 * TIMEOUT;
            let err = loop {
                match s.send_bytes(PartyId::P1, b"probe") {
                    Err(e) => break e,
                    Ok(()) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Ok(()) => panic!("the stalled link never failed"),
                }
            };
            tx.send(()).unwrap();
            // Keep the connection open until P1 has read what arrived.
            let _ = s.recv_bytes(PartyId::P1);
            (Some(err), 0)
        } else {
            // P0's failure, or a panic there, ends the wait.
            let _ = rx.lock().unwrap().recv_timeout(30 * TIMEOUT);
            let mut whole = 0;
            while let Ok(got) = s.recv_bytes(PartyId::P0) {
                assert!(
                    got.len() == FRAME && got.iter().all(|&b| b == 7),
                    "frame {whole}"
                );
                whole += 1;
            }
            s.send_bytes(PartyId::P0, b"done").unwrap();
            (None, whole)
        }
    });
    let mut out = out.into_iter();
    let (err, _) = out.next().unwrap();
    let (_, whole) = out.next().unwrap();
    (err.unwrap(), whole)
}

#[test]
fn a_sender_that_is_not_read_fails_with_a_timeout_over_tcp_and_tls() {
    for sessions in [
        tcp_sessions(2, &format!("max_frame_bytes = {FRAME}")),
        tls_sessions(FRAME as u32),
    ] {
        let (err, whole) = flood(sessions);
        assert!(
            matches!(
                err,
                NetError::Timeout {
                    peer: PartyId::P1,
                    ..
                }
            ),
            "{err:?}"
        );
        // The queue (2 frames), the frame the reader holds, and the kernel's socket buffers
        // on both ends: far below the 64 MiB the peer tried to send.
        assert!(whole < ATTEMPTS / 4, "{whole} MiB buffered");
    }
}

/// Both parties lower their frame limit to 64 KiB, then each sends 200 frames of 64 KiB —
/// 100 times the receive queue — before reading any; both then read all 200 in order.
fn crossing_bursts(sessions: Vec<Session>) {
    const LIMIT: usize = 64 << 10;
    const COUNT: usize = 200;
    run(sessions, |mut s| {
        s.limit_frame_bytes(LIMIT as u32);
        let peer = s.peers().next().unwrap();
        for i in 0..COUNT {
            s.send_bytes(peer, &vec![i as u8; LIMIT]).unwrap();
        }
        for i in 0..COUNT {
            let got = s.recv_bytes(peer).unwrap();
            assert!(
                got.len() == LIMIT && got.iter().all(|&b| b == i as u8),
                "frame {i}"
            );
        }
    });
}

#[test]
fn crossing_bursts_beyond_the_queues_complete_on_every_backend() {
    crossing_bursts(LocalMesh::new(2).build());
    crossing_bursts(tcp_sessions(2, ""));
    crossing_bursts(tls_sessions(1 << 28));
}

/// Threads of this process whose name starts with `prefix` (names are cut to 15 bytes).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with(prefix))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn idle_connections_during_setup_neither_lock_out_peers_nor_pile_up_threads() {
    let (ls, addrs) = listeners(2);
    let (_dir, config) = tls_config(2, addrs.clone());
    // 100 connections to P0 that never say anything, made before the parties start.
    let idle: Vec<std::net::TcpStream> = (0..100)
        .map(|_| std::net::TcpStream::connect(&addrs[0]).unwrap())
        .collect();
    let most = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let sessions = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let n = threads_named("doram-net P0 gr");
                most.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let r = connect_all(&config, ls, Transport::Tls);
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    });
    for r in &sessions {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
    }
    // At most 16 handshakes run at once; a thread that has finished its handshake may still be
    // alive for a moment. Without the cap, every idle connection kept a thread until the
    // setup deadline: over a hundred.
    let most = most.into_inner();
    assert!(most <= 24, "{most} handshake threads at once");
    drop(idle);
}

#[test]
fn a_trickling_connection_is_cut_when_setup_ends() {
    let (mut ls, addrs) = listeners(2);
    let (_dir, mut config) = tls_config(2, addrs.clone());
    config.connect_timeout = Duration::from_millis(500);
    // P1 never starts, so P0's setup ends at its deadline.
    let l0 = ls.remove(0);
    let p0 = connect_in_thread(config, PartyId::P0, l0, Transport::Tls);
    let mut sock = std::net::TcpStream::connect(&addrs[0]).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let start = std::time::Instant::now();
    // The header of a 16 KiB handshake record, then one byte every 40 ms or so: every read
    // makes progress, the record never completes.
    let mut cut = false;
    for b in [0x16u8, 3, 1, 0x40, 0]
        .into_iter()
        .chain(std::iter::repeat(1))
    {
        if sock.write_all(&[b]).is_err() {
            cut = true;
            break;
        }
        match sock.read(&mut [0u8; 64]) {
            Ok(0) => cut = true,
            Err(e) if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                cut = true;
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
        if cut || start.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    assert!(p0.join().unwrap().is_err());
    assert!(cut, "the trickling connection outlived setup");
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
}

/// P1 lowers its frame limit to 1000 bytes while its link is idle (a reader thread waits for a
/// header), P0 does not: P0's 1000-byte frame arrives if `fitting_first`, its 1001-byte frame
/// fails P1's link with `FrameTooLarge`, and P1 cannot send 1001 bytes either.
fn lowered_limit(sessions: Vec<Session>, fitting_first: bool) {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Mutex::new(rx);
    run(sessions, |mut s| {
        if s.me() == PartyId::P0 {
            // Wait until P1 has lowered its limit.
            rx.lock().unwrap().recv().unwrap();
            if fitting_first {
                s.send_bytes(PartyId::P1, &[1; 1000]).unwrap();
            }
            // Over a socket the sender cannot tell; in process the link is closed afterwards.
            let _ = s.send_bytes(PartyId::P1, &[2; 1001]);
        } else {
            // Long enough for a reader thread to be waiting for the next header.
            std::thread::sleep(std::time::Duration::from_millis(50));
            s.limit_frame_bytes(1000);
            s.limit_frame_bytes(1 << 20); // never raised
            assert_eq!(s.max_frame_bytes(), 1000);
            tx.send(()).unwrap();
            if fitting_first {
                assert_eq!(s.recv_bytes(PartyId::P0).unwrap().len(), 1000);
            }
            match s.recv_bytes(PartyId::P0) {
                Err(NetError::FrameTooLarge {
                    peer: PartyId::P0,
                    len: 1001,
                    limit: 1000,
                }) => {}
                other => panic!("expected FrameTooLarge from P0, got {other:?}"),
            }
            assert!(matches!(
                s.send_bytes(PartyId::P0, &[3; 1001]),
                Err(NetError::FrameTooLarge { .. })
            ));
        }
    });
}

#[test]
fn a_lowered_frame_limit_refuses_larger_frames_in_process() {
    for fitting_first in [true, false] {
        lowered_limit(LocalMesh::new(2).build(), fitting_first);
        // Through the receiver-side decoder of a tampering mesh as well.
        lowered_limit(
            LocalMesh::new(2)
                .tamper(|_, _, _, _| doram_net::Tamper::Pass)
                .build(),
            fitting_first,
        );
    }
}

#[test]
fn a_lowered_frame_limit_refuses_larger_frames_over_tcp_and_tls() {
    for fitting_first in [true, false] {
        lowered_limit(tcp_sessions(2, ""), fitting_first);
        lowered_limit(tls_sessions(1 << 28), fitting_first);
    }
}
