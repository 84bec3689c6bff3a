//! The sequence and phase check of every link, on every backend: a lost, repeated or
//! reordered frame, or a frame of another phase, is refused at the receive that would have
//! taken it for the next message, with an error naming the sender; the link then stays failed.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;

use common::{FakeTls, connect_in_thread, fake_peer, frame_at, listeners, tcp_config, tls_config};
use doram_core::PartyId;
use doram_net::{LocalMesh, NetError, Phase, Session, Tamper, Transport};

const P0: PartyId = PartyId::P0;
const P1: PartyId = PartyId::P1;

/// What a faulty link from P1 delivers to P0 and what P0 must report.
struct Case {
    name: &'static str,
    /// Frames as they arrive (all carry postcard `u8` payloads); the first one is good.
    wire: Vec<u8>,
    /// Whether `e` is the expected error for the second receive.
    expect: fn(&NetError) -> bool,
}

fn cases() -> Vec<Case> {
    let f = |seq: u8, phase: u16| frame_at(1, seq, phase, &[seq]);
    vec![
        Case {
            name: "lost",
            wire: [f(0, 0), f(2, 0)].concat(),
            expect: |e| {
                matches!(
                    e,
                    NetError::OutOfSequence {
                        peer: P1,
                        expected: 1,
                        got: 2
                    }
                )
            },
        },
        Case {
            name: "repeated",
            wire: [f(0, 0), f(0, 0), f(1, 0)].concat(),
            expect: |e| {
                matches!(
                    e,
                    NetError::OutOfSequence {
                        peer: P1,
                        expected: 1,
                        got: 0
                    }
                )
            },
        },
        Case {
            name: "reordered",
            wire: [f(0, 0), f(2, 0), f(1, 0)].concat(),
            expect: |e| {
                matches!(
                    e,
                    NetError::OutOfSequence {
                        peer: P1,
                        expected: 1,
                        got: 2
                    }
                )
            },
        },
        Case {
            name: "wrong phase",
            wire: [f(0, 0), f(1, 0x107)].concat(),
            expect: |e| {
                matches!(
                    e,
                    NetError::WrongPhase {
                        peer: P1,
                        expected: Phase(0),
                        got: Phase(0x107)
                    }
                )
            },
        },
    ]
}

/// P0's view of `case`: the good frame, then the error, twice (the link stays failed).
fn check(s: &mut Session, case: &Case, backend: &str) {
    assert_eq!(s.recv::<u8>(P1).unwrap(), 0, "{backend}, {}", case.name);
    for _ in 0..2 {
        let e = s.recv::<u8>(P1).unwrap_err();
        assert!((case.expect)(&e), "{backend}, {}: {e}", case.name);
        assert_eq!(e.peer(), Some(P1));
    }
}

#[test]
fn sequence_and_phase_faults_in_process() {
    for case in cases() {
        let wire = case.wire.clone();
        let mut s = LocalMesh::new(2)
            .tamper(move |_, _, _, _| Tamper::Replace(wire.clone()))
            .build();
        s[1].send(P0, &0u8).unwrap();
        check(&mut s[0], &case, "in-process");
    }
}

#[test]
fn sequence_and_phase_faults_over_tcp() {
    for case in cases() {
        let (mut ls, addrs) = listeners(2);
        let config = tcp_config(&addrs, "");
        let (l1, l0) = (ls.pop().unwrap(), ls.pop().unwrap());
        let real = connect_in_thread(config, P0, l0, Transport::DangerousPlaintext);
        let mut fake = fake_peer(2, 1, 0, &l1, &addrs[0], None);
        let mut s = real.join().unwrap().unwrap();
        fake.out.write_all(&case.wire).unwrap();
        fake.out.flush().unwrap();
        check(&mut s, &case, "TCP");
    }
}

#[test]
fn sequence_and_phase_faults_over_tls() {
    for case in cases() {
        let (mut ls, addrs) = listeners(2);
        let (dir, config) = tls_config(2, addrs.clone());
        let (l1, l0) = (ls.pop().unwrap(), ls.pop().unwrap());
        let real = connect_in_thread(config, P0, l0, Transport::Tls);
        let tls = FakeTls::party(dir.path(), 1);
        let mut fake = fake_peer(2, 1, 0, &l1, &addrs[0], Some(&tls));
        let mut s = real.join().unwrap().unwrap();
        fake.out.write_all(&case.wire).unwrap();
        fake.out.flush().unwrap();
        check(&mut s, &case, "TLS");
    }
}

/// A frame lost by the transport itself (the in-process hook drops it) is caught likewise.
#[test]
fn a_dropped_frame_is_caught_at_the_next_receive() {
    let mut s = LocalMesh::new(2)
        .tamper(|_, _, i, _| if i == 1 { Tamper::Drop } else { Tamper::Pass })
        .build();
    for v in 0..3u8 {
        s[1].send(P0, &v).unwrap();
    }
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 0);
    let e = s[0].recv::<u8>(P1).unwrap_err();
    assert!(
        matches!(
            e,
            NetError::OutOfSequence {
                peer: P1,
                expected: 1,
                got: 2
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("P1"), "{e}");
}

/// Honest parties: sequence numbers wrap around, and frames a peer sends early in its next
/// phase wait until the receiver has entered that phase.
#[test]
fn honest_links_wrap_and_change_phase() {
    let mut s = LocalMesh::new(2).build();
    for v in 0..600u32 {
        s[1].send(P0, &v).unwrap();
        assert_eq!(s[0].recv::<u32>(P1).unwrap(), v);
    }
    const PREP: Phase = Phase(1);
    const ONLINE: Phase = Phase(2);
    s[1].set_wire_phase(PREP);
    s[1].send(P0, &1u8).unwrap();
    s[1].set_wire_phase(ONLINE);
    s[1].send(P0, &2u8).unwrap();
    s[0].set_wire_phase(PREP);
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 1);
    s[0].set_wire_phase(ONLINE);
    assert_eq!(s[0].wire_phase(), ONLINE);
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 2);
    // Phases need not be symmetric in time: P0 answers in its own current phase.
    s[0].send(P1, &3u8).unwrap();
    assert_eq!(s[1].recv::<u8>(P0).unwrap(), 3);
}
