//! The in-process backend: messaging, statistics, rounds, transcripts, shaping and faults.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::run;
use doram_core::wire::PeerFault;
use doram_core::{CodecError, PartyId};
use doram_field::Group;
use doram_net::{Comm, FRAME_HEADER_BYTES, LocalMesh, NetError, Session, Shaping, Tamper};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

const P0: PartyId = PartyId::P0;
const P1: PartyId = PartyId::P1;
const P2: PartyId = PartyId::P2;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Msg {
    id: u32,
    body: Vec<u64>,
    note: String,
}

/// A minimal group for element transport: `u32` under wrapping addition, with only values
/// below 2^31 canonical (to exercise decoding errors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Small(u32);

/// Reduction modulo 2^31.
fn small(x: u32) -> Small {
    Small(x & 0x7fff_ffff)
}
impl std::ops::Add for Small {
    type Output = Small;
    fn add(self, o: Small) -> Small {
        small(self.0.wrapping_add(o.0))
    }
}
impl std::ops::Sub for Small {
    type Output = Small;
    fn sub(self, o: Small) -> Small {
        small(self.0.wrapping_sub(o.0))
    }
}
impl std::ops::Neg for Small {
    type Output = Small;
    fn neg(self) -> Small {
        small(self.0.wrapping_neg())
    }
}
impl std::ops::AddAssign for Small {
    fn add_assign(&mut self, o: Small) {
        *self = *self + o;
    }
}
impl std::ops::SubAssign for Small {
    fn sub_assign(&mut self, o: Small) {
        *self = *self - o;
    }
}
impl Group for Small {
    const ZERO: Small = Small(0);
    const BYTES: usize = 4;
    fn random_from<S: doram_field::BlockSource + ?Sized>(src: &mut S) -> Small {
        let b = src.next_block();
        small(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn write_le(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes());
    }
    fn read_le(bytes: &[u8]) -> Result<Small, CodecError> {
        let v = u32::from_le_bytes(bytes.try_into().map_err(|_| CodecError::WrongLength {
            expected: 4,
            got: bytes.len(),
        })?);
        if v >> 31 != 0 {
            return Err(CodecError::OutOfRange { what: "Small" });
        }
        Ok(Small(v))
    }
}

fn mesh(n: usize) -> Vec<Session> {
    LocalMesh::new(n)
        .timeout(Duration::from_millis(500))
        .build()
}

#[test]
fn messages_of_every_kind_arrive_in_order() {
    let out = run(mesh(3), |mut s| {
        let me = s.me();
        assert_eq!(s.n_parties(), 3);
        // Send everything to everybody first, then receive.
        for p in s.peers() {
            s.send(
                p,
                &Msg {
                    id: me.index() as u32,
                    body: vec![1, 2, 3],
                    note: format!("{me}->{p}"),
                },
            )?;
            s.send_bytes(p, b"raw")?;
            s.send_bytes(p, &[])?;
            s.send_elems(p, &[Small(me.index() as u32), Small(7)])?;
        }
        let mut got = Vec::new();
        for p in s.peers() {
            let m: Msg = s.recv(p)?;
            assert_eq!(m.note, format!("{p}->{me}"));
            assert_eq!(s.recv_bytes(p)?, b"raw");
            assert!(s.recv_bytes(p)?.is_empty());
            got.push(s.recv_elems::<Small>(p, 2)?);
        }
        Ok::<_, NetError>(got)
    });
    let got = out.into_iter().collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(
        got[0],
        vec![vec![Small(1), Small(7)], vec![Small(2), Small(7)]]
    );
    assert_eq!(
        got[2],
        vec![vec![Small(0), Small(7)], vec![Small(1), Small(7)]]
    );
}

#[test]
fn comm_sums_what_was_sent_in_the_phases_named() {
    // Two peers each: "a" sends 1 message of 1 byte to each, "b" 2 messages of 2 bytes to each.
    let comms = run(mesh(3), |mut s| {
        s.set_phase("a");
        for p in s.peers() {
            s.send(p, &1u8).unwrap();
        }
        for p in s.peers() {
            s.recv::<u8>(p).unwrap();
        }
        s.set_phase("b");
        for p in s.peers() {
            s.send(p, &300u16).unwrap(); // two postcard bytes
            s.send(p, &300u16).unwrap();
        }
        for p in s.peers() {
            s.recv::<u16>(p).unwrap();
            s.recv::<u16>(p).unwrap();
        }
        let st = s.stats();
        (st.comm(["a"]), st.comm(["a", "b", "never"]), st.comm([]))
    });
    let header = FRAME_HEADER_BYTES as u64;
    for (a, ab, none) in comms {
        let want_a = Comm {
            bytes: 2,
            overhead: 2 * header,
            messages: 2,
            rounds: 1,
        };
        assert_eq!(a, want_a);
        let want_ab = Comm {
            bytes: 2 + 8,
            overhead: 6 * header,
            messages: 6,
            rounds: 2,
        };
        assert_eq!(ab, want_ab);
        assert_eq!(none, Comm::default());
    }
}

#[test]
fn lamport_rounds_count_dependent_steps_once() {
    // Three all-to-all steps: three rounds everywhere, whatever the number of messages.
    let rounds = run(mesh(3), |mut s| {
        for step in 0..3u64 {
            s.set_phase(if step == 0 { "first" } else { "rest" });
            for p in s.peers() {
                s.send(p, &step).unwrap();
                s.send(p, &step).unwrap(); // same step: same round
            }
            for p in s.peers() {
                assert_eq!(s.recv::<u64>(p).unwrap(), step);
                assert_eq!(s.recv::<u64>(p).unwrap(), step);
            }
        }
        let st = s.stats();
        assert_eq!(st.phase("first").unwrap().rounds, 1);
        assert_eq!(st.phase("rest").unwrap().rounds, 2);
        let total = st.total();
        assert_eq!(total.rounds, 3);
        for p in s.peers() {
            let l = total.link(p);
            assert_eq!((l.msgs_sent, l.msgs_received), (6, 6));
            assert_eq!((l.rounds_sent, l.rounds_received), (3, 3));
            assert_eq!(l.overhead_sent, 6 * FRAME_HEADER_BYTES as u64);
            assert_eq!(l.bytes_sent, 6); // postcard encodes 0, 1, 2 in one byte each
        }
        assert_eq!(*total.link(s.me()), Default::default());
        s.rounds()
    });
    assert_eq!(rounds, vec![3, 3, 3]);

    // A chain P0 → P1 → P2 → P0 → P1: four dependent messages, four rounds.
    let rounds = run(mesh(3), |mut s| {
        let me = s.me();
        let (next, prev) = (me.next(3), me.prev(3));
        let mut hops = 0u32;
        if me == P0 {
            s.send(next, &hops).unwrap();
        }
        loop {
            hops = s.recv(prev).unwrap();
            hops += 1;
            if hops == 4 {
                break;
            }
            s.send(next, &hops).unwrap();
            if hops >= 2 {
                break;
            }
        }
        s.rounds()
    });
    // P0 sent hop 0 (round 1) and hop 3 (round 4); P1 saw up to round 4; P2 sent round 3.
    assert_eq!(rounds, vec![4, 4, 3]);
}

#[test]
fn ping_pong_is_two_rounds_per_exchange() {
    let rounds = run(mesh(2), |mut s| {
        let other = s.me().next(2);
        for i in 0..5u8 {
            if s.me() == P0 {
                s.send(other, &i).unwrap();
                assert_eq!(s.recv::<u8>(other).unwrap(), i);
            } else {
                let x: u8 = s.recv(other).unwrap();
                s.send(other, &x).unwrap();
            }
        }
        s.rounds()
    });
    assert_eq!(rounds, vec![10, 10]);
}

fn transcript_of(values: [u64; 2]) -> Vec<doram_net::Transcript> {
    run(mesh(2), move |mut s| {
        s.record_transcript(true);
        let other = s.me().next(2);
        s.set_phase("share");
        s.send_elems(other, &[Small(values[s.me().index()] as u32); 4])
            .unwrap();
        let _ = s.recv_elems::<Small>(other, 4).unwrap();
        s.set_phase("open");
        s.send(other, &values[s.me().index()]).unwrap();
        let _: u64 = s.recv(other).unwrap();
        s.take_transcript().unwrap()
    })
}

#[test]
fn transcripts_capture_shape_not_content() {
    let a = transcript_of([1, 2]);
    let b = transcript_of([3, 4]);
    assert_eq!(a, b);
    assert_eq!(a[0].len(), 4);
    let e = &a[0].events[0];
    assert_eq!(
        (&*e.phase, e.from, e.to, e.bytes, e.round),
        ("share", P0, P1, 16, 1)
    );
    let e = &a[0].events[3];
    assert_eq!((&*e.phase, e.from, e.to, e.round), ("open", P1, P0, 2));
    // A value whose encoding is longer changes the shape (postcard varints).
    let c = transcript_of([1, 1 << 40]);
    assert_ne!(a, c);
}

#[test]
fn caller_errors_are_reported() {
    let mut s = mesh(2);
    let p0 = &mut s[0];
    assert!(matches!(
        p0.send_bytes(P0, b"x"),
        Err(NetError::NotAPeer { party: P0, .. })
    ));
    assert!(matches!(
        p0.recv_bytes(P2),
        Err(NetError::NotAPeer {
            party: P2,
            n_parties: 2,
            ..
        })
    ));
    let mut s = LocalMesh::new(2).max_frame_bytes(8).build();
    assert!(matches!(
        s[0].send_bytes(P1, &[0; 9]),
        Err(NetError::FrameTooLarge {
            peer: P1,
            len: 9,
            limit: 8
        })
    ));
    s[0].send_bytes(P1, &[0; 8]).unwrap();
    assert_eq!(s[1].recv_bytes(P0).unwrap().len(), 8);
}

#[test]
fn wrong_element_count_or_garbage_is_malformed() {
    let mut s = mesh(2);
    s[1].send_elems(P0, &[Small(1), Small(2), Small(3)])
        .unwrap();
    let e = s[0].recv_elems::<Small>(P1, 2).unwrap_err();
    assert!(
        matches!(
            e,
            NetError::Peer(PeerFault {
                peer: P1,
                fault: CodecError::WrongLength {
                    expected: 8,
                    got: 12
                },
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("P1"), "{e}");
    s[1].send_bytes(P0, &[0xff; 4]).unwrap();
    assert!(matches!(
        s[0].recv_elems::<Small>(P1, 1),
        Err(NetError::Peer(PeerFault {
            peer: P1,
            fault: CodecError::OutOfRange { .. },
            ..
        }))
    ));
    s[1].send_bytes(P0, &[0xff; 3]).unwrap();
    assert!(matches!(
        s[0].recv::<Msg>(P1),
        Err(NetError::Peer(PeerFault { peer: P1, .. }))
    ));
    s[1].send(P0, &(5u8, 6u8)).unwrap();
    let e = s[0].recv::<u8>(P1).unwrap_err();
    assert!(e.to_string().contains("trailing"), "{e}");
    // Message-level errors do not break the link.
    s[1].send(P0, &9u8).unwrap();
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 9);
}

fn tampered(action: Tamper) -> Vec<Session> {
    LocalMesh::new(3)
        .timeout(Duration::from_millis(300))
        .max_frame_bytes(1024)
        .tamper(move |from, to, index, payload| {
            if from == P1 && to == P0 && index == 1 {
                if action == Tamper::Pass {
                    payload.reverse();
                }
                action.clone()
            } else {
                Tamper::Pass
            }
        })
        .build()
}

/// P1 sends three messages to P0; the second is tampered with. Returns what P0 gets for each.
fn tamper_outcome(action: Tamper) -> Vec<Result<u32, NetError>> {
    let mut s = tampered(action);
    for i in 0..3u32 {
        let _ = s[1].send(P0, &(1000 + i));
    }
    // The unaffected link P2 → P0 keeps working whatever happens on P1 → P0.
    s[2].send(P0, &7u32).unwrap();
    let got = (0..3).map(|_| s[0].recv::<u32>(P1)).collect();
    assert_eq!(s[0].recv::<u32>(P2).unwrap(), 7);
    got
}

#[test]
fn tamper_drop_is_out_of_sequence_and_silence_times_out() {
    // The frame after the lost one is refused, naming the sender; the link stays failed.
    let r = tamper_outcome(Tamper::Drop);
    assert_eq!(r[0].as_ref().unwrap(), &1000);
    for e in &r[1..] {
        assert!(
            matches!(
                e,
                Err(NetError::OutOfSequence {
                    peer: P1,
                    expected: 1,
                    got: 2
                })
            ),
            "{e:?}"
        );
    }

    let start = Instant::now();
    let r = tamper_outcome(Tamper::Silence);
    assert_eq!(r[0].as_ref().unwrap(), &1000);
    assert!(
        matches!(r[1], Err(NetError::Timeout { peer: P1, after }) if after == Duration::from_millis(300))
    );
    assert!(matches!(r[2], Err(NetError::Timeout { peer: P1, .. })));
    assert!(start.elapsed() >= Duration::from_millis(600));
}

#[test]
fn tamper_pass_with_edited_payload_is_malformed_message() {
    // 1001 as a postcard varint is [0xe9, 0x07]; reversed it is an unterminated varint.
    let r = tamper_outcome(Tamper::Pass);
    assert!(
        matches!(r[1], Err(NetError::Peer(PeerFault { peer: P1, .. }))),
        "{:?}",
        r[1]
    );
    assert_eq!(r[2].as_ref().unwrap(), &1002);
}

#[test]
fn tamper_truncate_close_and_replace() {
    let r = tamper_outcome(Tamper::Truncate(FRAME_HEADER_BYTES + 1));
    assert_eq!(r[0].as_ref().unwrap(), &1000);
    let e = r[1].as_ref().unwrap_err();
    assert!(
        matches!(e, NetError::Peer(PeerFault { peer: P1, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("inside a frame"), "{e}");
    // Sticky: the same error again.
    assert!(matches!(
        r[2],
        Err(NetError::Peer(PeerFault { peer: P1, .. }))
    ));

    let r = tamper_outcome(Tamper::Truncate(FRAME_HEADER_BYTES + 100));
    assert_eq!(
        r[1].as_ref().unwrap(),
        &1001,
        "a cut beyond the frame delivers it whole"
    );
    assert!(matches!(r[2], Err(NetError::Closed { peer: P1 })));

    let r = tamper_outcome(Tamper::Close);
    assert_eq!(r[0].as_ref().unwrap(), &1000);
    assert!(matches!(r[1], Err(NetError::Closed { peer: P1 })));
    assert!(matches!(r[2], Err(NetError::Closed { peer: P1 })));

    // Garbage with a zero timestamp.
    let r = tamper_outcome(Tamper::Replace(vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]));
    assert!(
        matches!(r[1], Err(NetError::Peer(PeerFault { peer: P1, .. }))),
        "{:?}",
        r[1]
    );
    // A huge announced length.
    let r = tamper_outcome(Tamper::Replace(vec![0xff; 16]));
    assert!(matches!(
        r[1],
        Err(NetError::FrameTooLarge {
            peer: P1,
            len: 0xffff_ffff,
            limit: 1024
        })
    ));
    // A partial header waits for more bytes; the next frame then completes garbage.
    let r = tamper_outcome(Tamper::Replace(vec![3, 0]));
    assert!(r[1].is_err());
    // An injected extra frame is delivered as a message of its own.
    let mut extra = common::frame_at(1, 1, 0, &[42]);
    extra.extend(common::frame_at(1, 2, 0, &[43]));
    let r = tamper_outcome(Tamper::Replace(extra));
    assert_eq!((r[1].as_ref().unwrap(), r[2].as_ref().unwrap()), (&42, &43));
    // A timestamp going backwards is rejected.
    let r = tamper_outcome(Tamper::Replace(common::frame_at(1, 1, 0, &[1])));
    assert_eq!(r[1].as_ref().unwrap(), &1);
    let mut s = LocalMesh::new(2)
        .tamper(|_, _, i, _| {
            if i == 1 {
                Tamper::Replace(common::frame_at(1, 1, 0, &[5]))
            } else {
                Tamper::Pass
            }
        })
        .build();
    s[1].send(P0, &0u8).unwrap();
    let _: u8 = s[0].recv(P1).unwrap();
    s[0].send(P1, &0u8).unwrap();
    let _: u8 = s[1].recv(P0).unwrap();
    s[1].send(P0, &0u8).unwrap(); // replaced by a frame with timestamp 1 after timestamp 1: fine
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 5);
    s[1].send(P0, &0u8).unwrap();
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 0);
}

#[test]
fn tamper_oversize_is_rejected_without_allocation() {
    let r = tamper_outcome(Tamper::Oversize);
    assert_eq!(r[0].as_ref().unwrap(), &1000);
    assert!(matches!(
        r[1],
        Err(NetError::FrameTooLarge {
            peer: P1,
            len: 1025,
            limit: 1024
        })
    ));
    assert!(matches!(
        r[2],
        Err(NetError::FrameTooLarge { peer: P1, .. })
    ));
}

#[test]
fn run_parties_names_threads_and_survives_a_panicking_party() {
    // P1 panics before its message; P0 sees a closed link, not a hang, and every result comes
    // back in party order.
    let results = doram_net::run_parties(mesh(3), "probe", |mut s| {
        let name = std::thread::current().name().map(str::to_owned);
        match s.me() {
            P1 => panic!("party 1 fails"),
            P0 => s.recv::<u8>(P1).map(|_| name),
            _ => Ok(name),
        }
    });
    assert_eq!(results.len(), 3);
    let p0 = results[0].as_ref().unwrap();
    assert!(matches!(p0, Err(NetError::Closed { peer: P1 })), "{p0:?}");
    let payload = results[1].as_ref().err().unwrap();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"party 1 fails"));
    let p2 = results[2].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(p2.as_deref(), Some("probe-P2"));
}

#[test]
fn run_parties_ok_collects_outputs_or_the_first_error() {
    use doram_net::run_parties_ok;
    // All parties succeed: the outputs in party order.
    let ok = run_parties_ok(
        mesh(3),
        "ok",
        |s| Ok::<_, String>(s.me().index()),
        || "failed".to_owned(),
    );
    assert_eq!(ok, Ok(vec![0, 1, 2]));
    // P1 panics and P2 returns an error: P1 comes first, as `failed()`.
    let err = run_parties_ok(
        mesh(3),
        "mixed",
        |s| match s.me() {
            P1 => panic!("party 1 fails"),
            P2 => Err("P2's error".to_owned()),
            _ => Ok(0u8),
        },
        || "a party panicked".to_owned(),
    );
    assert_eq!(err, Err("a party panicked".to_owned()));
    // Without the panic, P2's own error is the first.
    let err = run_parties_ok(
        mesh(3),
        "error",
        |s| match s.me() {
            P2 => Err("P2's error".to_owned()),
            _ => Ok(0u8),
        },
        || "a party panicked".to_owned(),
    );
    assert_eq!(err, Err("P2's error".to_owned()));
}

#[test]
fn dropping_a_session_closes_its_links() {
    let mut s = mesh(3);
    s[1].send(P0, &1u8).unwrap();
    let p1 = s.remove(1);
    drop(p1);
    // Messages sent before the drop still arrive, then Closed; sends fail too.
    assert_eq!(s[0].recv::<u8>(P1).unwrap(), 1);
    assert!(matches!(
        s[0].recv::<u8>(P1),
        Err(NetError::Closed { peer: P1 })
    ));
    assert!(matches!(
        s[1].send(P1, &1u8),
        Err(NetError::Closed { peer: P1 })
    ));
    // The others are unaffected.
    s[1].send(P0, &2u8).unwrap();
    assert_eq!(s[0].recv::<u8>(P2).unwrap(), 2);
}

#[test]
fn shaping_adds_latency_to_round_trips() {
    let shaping = Shaping {
        latency: Duration::from_millis(20),
        bandwidth_bits_per_sec: None,
    };
    let elapsed = run(LocalMesh::new(2).shaping(shaping).build(), |mut s| {
        let start = Instant::now();
        if s.me() == P0 {
            s.send(P1, &1u8).unwrap();
            let _: u8 = s.recv(P1).unwrap();
        } else {
            let x: u8 = s.recv(P0).unwrap();
            s.send(P0, &x).unwrap();
        }
        start.elapsed()
    });
    assert!(elapsed[0] >= Duration::from_millis(40), "{:?}", elapsed[0]);
}

#[test]
fn shaping_caps_bandwidth() {
    // 1 MB at 80 Mbit/s takes at least 100 ms.
    let shaping = Shaping {
        latency: Duration::ZERO,
        bandwidth_bits_per_sec: Some(80e6),
    };
    let mut s = LocalMesh::new(2).shaping(shaping).build();
    let start = Instant::now();
    for _ in 0..4 {
        s[0].send_bytes(P1, &vec![7u8; 250_000]).unwrap();
    }
    for _ in 0..4 {
        assert_eq!(s[1].recv_bytes(P0).unwrap().len(), 250_000);
    }
    assert!(
        start.elapsed() >= Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn stats_reset_and_phase_names() {
    let mut s = mesh(2);
    assert_eq!(s[0].phase(), doram_net::DEFAULT_PHASE);
    s[0].set_phase("a");
    s[0].send_bytes(P1, &[1, 2, 3]).unwrap();
    s[0].set_phase("b");
    s[0].send_bytes(P1, &[1]).unwrap();
    s[0].set_phase("a");
    s[0].send_bytes(P1, &[1]).unwrap();
    let names: Vec<&str> = s[0].stats().phases().map(|(n, _)| n).collect();
    assert_eq!(names, ["default", "a", "b"]);
    assert_eq!(s[0].stats().phase("a").unwrap().link(P1).bytes_sent, 4);
    assert_eq!(s[0].stats().phase("a").unwrap().link(P1).rounds_sent, 1);
    assert_eq!(s[0].stats().total().sum().msgs_sent, 3);
    s[0].reset_stats();
    assert_eq!(s[0].stats().total().sum().msgs_sent, 0);
    assert_eq!(s[0].rounds(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Frames survive the wire encoding and the incremental decoder unchanged.
    #[test]
    fn payloads_roundtrip_through_the_wire_decoder(msgs in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..8)) {
        let mut s = LocalMesh::new(2).tamper(|_, _, _, _| Tamper::Pass).build();
        for m in &msgs {
            s[0].send_bytes(P1, m).unwrap();
        }
        for m in &msgs {
            prop_assert_eq!(&s[1].recv_bytes(P0).unwrap(), m);
        }
    }
}

#[test]
fn the_largest_message_sent_is_kept_per_link_and_across_phases() {
    let mut sessions = Session::local_mesh(2);
    let mut p1 = sessions.pop().unwrap();
    let mut p0 = sessions.pop().unwrap();
    p0.set_phase("a");
    p0.send_bytes(PartyId::P1, &[0; 3]).unwrap();
    p0.send_bytes(PartyId::P1, &[0; 10]).unwrap();
    p0.set_phase("b");
    p0.send_bytes(PartyId::P1, &[0; 1]).unwrap();
    for _ in 0..3 {
        p1.recv_bytes(PartyId::P0).unwrap();
    }
    let total = p0.stats().total();
    assert_eq!(total.link(PartyId::P1).largest_sent, 10);
    assert_eq!(p1.stats().total().link(PartyId::P0).largest_sent, 0);
}
