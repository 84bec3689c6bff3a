//! Faulty peers and misuse: typed errors naming the peer, no panics, no hangs.

use std::time::Duration;

use doram_core::wire::PeerFault;
use doram_core::{CodecError, PartyId};
use doram_field::{Fp, Z64};
use doram_mpc::testkit::{party_seed, run_mpc3_on, run3, run3_on};
use doram_mpc::{Additive, Input, Mpc3, MpcError};
use doram_net::{LocalMesh, NetError, Session, Tamper};

/// Frame index of the first operation message on a link (frame 0 carries the setup seed).
const FIRST_OP_FRAME: u64 = 1;

fn ones(me: PartyId, k: usize) -> Vec<Additive<Fp>> {
    vec![Additive::public(Fp::ONE, me); k]
}

#[test]
fn sessions_of_other_sizes_are_rejected() {
    for n in [2, 4] {
        for session in Session::local_mesh(n) {
            assert!(matches!(
                Mpc3::setup(session, party_seed(0, PartyId::P0)),
                Err(MpcError::WrongPartyCount { n_parties }) if n_parties == n
            ));
        }
    }
}

/// Runs `to_replicated` on 7 elements with the P1 → P2 message edited by `edit`; returns what
/// P2 got.
fn tampered_to_replicated(edit: fn(&mut Vec<u8>)) -> Result<(), MpcError> {
    let sessions = Session::mesh_with(3, move |from, to, index, payload| {
        if (from, to, index) == (PartyId::P1, PartyId::P2, FIRST_OP_FRAME) {
            edit(payload);
        }
        Tamper::Pass
    });
    let [r0, r1, r2] = run_mpc3_on(sessions, 7, |mpc| {
        let x = ones(mpc.me(), 7);
        mpc.to_replicated(&x).map(drop)
    });
    assert!(r0.is_ok() && r1.is_ok(), "the untouched parties finish");
    r2
}

#[test]
fn short_message_names_the_sender() {
    let got = tampered_to_replicated(|p| {
        p.pop();
    });
    assert!(
        matches!(
            got,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P1,
                what: "replicate shares",
                fault: CodecError::WrongLength {
                    expected: 112,
                    got: 111,
                },
            }))
        ),
        "{got:?}"
    );
}

#[test]
fn long_message_names_the_sender() {
    let got = tampered_to_replicated(|p| p.extend_from_slice(&[0; 16]));
    assert!(
        matches!(
            got,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P1,
                fault: CodecError::WrongLength { got: 128, .. },
                ..
            }))
        ),
        "{got:?}"
    );
}

#[test]
fn non_canonical_element_names_the_sender() {
    // 2^128 − 1 ≥ p is not a field element.
    let got = tampered_to_replicated(|p| p[..16].fill(0xff));
    assert!(
        matches!(
            got,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P1,
                fault: CodecError::OutOfRange { .. },
                ..
            }))
        ),
        "{got:?}"
    );
}

#[test]
fn bad_setup_seed_names_the_sender() {
    let sessions = Session::mesh_with(3, |from, to, index, payload| {
        if (from, to, index) == (PartyId::P0, PartyId::P1, 0) {
            payload.truncate(15);
        }
        Tamper::Pass
    });
    let [r0, r1, r2] = run3_on(sessions, |session| {
        let me = session.me();
        Mpc3::setup(session, party_seed(1, me)).map(drop)
    });
    assert!(r0.is_ok() && r2.is_ok());
    assert!(
        matches!(
            r1,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P0,
                what: "setup seed",
                fault: CodecError::WrongLength {
                    expected: 16,
                    got: 15
                }
            }))
        ),
        "{r1:?}"
    );
}

#[test]
fn silent_peer_times_out_with_its_name() {
    let sessions = LocalMesh::new(3)
        .timeout(Duration::from_millis(200))
        .tamper(|from, to, index, _| {
            if (from, to, index) == (PartyId::P2, PartyId::P0, FIRST_OP_FRAME) {
                Tamper::Silence
            } else {
                Tamper::Pass
            }
        })
        .build();
    let [r0, r1, r2] = run_mpc3_on(sessions, 2, |mpc| {
        let x = vec![Additive::public(Z64(5), mpc.me()); 3];
        let r = mpc.open(&x).map(drop);
        if mpc.me() != PartyId::P0 {
            // Stay connected past P0's timeout: a peer that left would be `Closed` instead.
            std::thread::sleep(Duration::from_millis(600));
        }
        r
    });
    assert!(r1.is_ok() && r2.is_ok());
    assert!(
        matches!(
            r0,
            Err(MpcError::Net(NetError::Timeout {
                peer: PartyId::P2,
                ..
            }))
        ),
        "{r0:?}"
    );
}

#[test]
fn a_party_that_leaves_is_reported_as_closed() {
    let [r0, r1, r2] = run3(|session| {
        let me = session.me();
        let mut mpc = Mpc3::setup(session, party_seed(3, me))?;
        if me == PartyId::P1 {
            return Ok(()); // drops its session before the operation
        }
        mpc.open(&ones(me, 2)).map(drop)
    });
    assert!(r1.is_ok());
    // P0 talks to P1 first (sending or receiving), so it names P1. P2 names P1 or, if P0 gave
    // up on P1 before sending to P2, P0.
    assert!(
        matches!(
            r0,
            Err(MpcError::Net(NetError::Closed { peer: PartyId::P1 }))
        ),
        "{r0:?}"
    );
    assert!(
        matches!(
            r2,
            Err(MpcError::Net(NetError::Closed {
                peer: PartyId::P0 | PartyId::P1
            }))
        ),
        "{r2:?}"
    );
}

#[test]
fn misuse_is_an_error_at_every_party_and_sends_nothing() {
    let results = run3(|session| {
        let me = session.me();
        let mut mpc = Mpc3::setup(session, party_seed(4, me))?;
        let x = ones(me, 3);
        let mismatch = mpc.mul_additive(&x, &x[..2]);
        assert!(matches!(
            mismatch,
            Err(MpcError::LengthMismatch {
                op: "mul_additive",
                left: 3,
                right: 2
            })
        ));
        let select = mpc.select(&x[..1], &x, &x);
        assert!(matches!(
            select,
            Err(MpcError::LengthMismatch { op: "select", .. })
        ));
        let self_dealer = mpc.input_replicated::<Fp>(Input::Peer {
            dealer: me,
            count: 1,
        });
        assert!(matches!(self_dealer, Err(MpcError::ApiMisuse(_))));
        let outside = mpc.open_to(PartyId::P3, &x);
        assert!(matches!(outside, Err(MpcError::ApiMisuse(_))));
        // Nothing was sent, so the engine is still in lockstep and works.
        let sent = mpc.session().stats().total().sum().msgs_sent;
        assert_eq!(sent, 2, "only the setup seeds were sent");
        mpc.open(&x)
    });
    for r in results {
        assert_eq!(r.expect("engine still usable"), vec![Fp::ONE; 3]);
    }
}

#[test]
fn errors_display_the_peer() {
    let e = MpcError::Peer(PeerFault::wrong_length(
        PartyId::P2,
        "product shares",
        16,
        8,
    ));
    assert_eq!(
        e.to_string(),
        "P2 sent product shares: wrong length: expected 16 bytes, got 8"
    );
}

/// Runs a batch of 5 comparisons at 46 bits with the `from` → `to` frame `index` edited by
/// `edit`, a 2 s timeout; returns the three parties' results.
fn tampered_comparison(
    from: PartyId,
    to: PartyId,
    index: u64,
    edit: fn(&mut Vec<u8>),
) -> [Result<(), MpcError>; 3] {
    let sessions = LocalMesh::new(3)
        .timeout(Duration::from_secs(2))
        .tamper(move |f, t, i, payload| {
            if (f, t, i) == (from, to, index) {
                edit(payload);
            }
            Tamper::Pass
        })
        .build();
    run3_on(sessions, |mut session| {
        let me = session.me();
        let mut engine = doram_mpc::Engine::setup(&mut session, party_seed(4, me))?;
        let mut on = engine.on(&mut session);
        let x = on.constant(7);
        let y = on.constant(9);
        on.lt_many(&[(x, y); 5], 46).map(drop)
    })
}

/// A short dealing message from the helper `P2` is a fault of `P2` at `P1`; `P0` (and `P2`, if
/// it is still sending) then see `P1` leave, and nobody hangs or panics.
#[test]
fn comparison_dealing_faults_name_the_helper() {
    // P2's frames to P1: 0 = setup seed, 1 = the packed dealing, 2 = its F_p corrections.
    let [r0, r1, r2] = tampered_comparison(PartyId::P2, PartyId::P1, 1, |p| {
        p.truncate(p.len() - 8);
    });
    // The helper only sends: it finishes, or finds P1 gone if P1 failed before its last frame.
    assert!(
        matches!(
            r2,
            Ok(()) | Err(MpcError::Net(NetError::Closed { peer: PartyId::P1 }))
        ),
        "{r2:?}"
    );
    assert!(
        matches!(
            r1,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P2,
                what: "comparison dealing",
                ..
            }))
        ),
        "{r1:?}"
    );
    assert!(r0.is_err(), "P0 cannot finish without P1: {r0:?}");
}

/// A malformed opening from `P0` is a fault of `P0` at `P1`.
#[test]
fn comparison_opening_faults_name_the_sender() {
    let [_, r1, _] = tampered_comparison(PartyId::P0, PartyId::P1, 1, |p| {
        p.push(0);
    });
    assert!(
        matches!(
            r1,
            Err(MpcError::Peer(PeerFault {
                peer: PartyId::P0,
                what: "comparison opening",
                ..
            }))
        ),
        "{r1:?}"
    );
}
