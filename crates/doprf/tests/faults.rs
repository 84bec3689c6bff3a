//! Faulty peers and misuse: typed errors naming the peer, no panics, no hangs.
//!
//! All tests use the stash roles: K = P0, R1 = P1, R2 = P2. Frame indices count the messages on
//! one link from 0; setup sends P0 → P1, P1 → P2, P1 → P0 and P2 → P0 one frame each.

mod common;

use std::time::{Duration, Instant};

use common::{run_instance, shared_inputs};
use doram_core::CodecError;
use doram_core::PartyId::{self, P0, P1, P2};
use doram_core::wire::PeerFault;
use doram_doprf::{Doprf, DoprfError, Mode, Params, Roles};
use doram_mpc::testkit::{party_seed, run3_on, test_seed};
use doram_net::{LocalMesh, NetError, Session, Tamper};

const TIMEOUT: Duration = Duration::from_millis(400);

fn mesh(
    tamper: impl Fn(PartyId, PartyId, u64, &mut Vec<u8>) -> Tamper + Send + Sync + 'static,
) -> Vec<Session> {
    LocalMesh::new(3).timeout(TIMEOUT).tamper(tamper).build()
}

/// Masked preprocessing of `count`, then one masked evaluation of `count`, on a tampered mesh.
fn masked_run(
    bits: usize,
    count: usize,
    tamper: impl Fn(PartyId, PartyId, u64, &mut Vec<u8>) -> Tamper + Send + Sync + 'static,
) -> [Result<Vec<u128>, DoprfError>; 3] {
    let seed = test_seed();
    let (shares, _) = shared_inputs(seed, count);
    let params = Params::new(bits).expect("valid ℓ");
    run_instance(
        mesh(tamper),
        seed,
        params,
        Roles::ramen_stash(),
        |session, doprf| {
            doprf.preprocess(session, Mode::Masked, count)?;
            doprf.eval_masked(session, &shares[session.me().index()])
        },
    )
}

fn names(err: &Result<impl std::fmt::Debug, DoprfError>, peer: PartyId) -> bool {
    match err {
        Err(DoprfError::Net(e)) => e.peer() == Some(peer),
        Err(DoprfError::Peer(f)) => f.peer == peer,
        _ => false,
    }
}

#[test]
fn silent_key_holder_is_reported_by_name_not_a_hang() {
    let start = Instant::now();
    // K's d (Fig. 9, step 7) is the first frame on P0 → P2; K goes silent there.
    let [k, r1, r2] = masked_run(80, 3, |from, to, i, _| match (from, to, i) {
        (P0, P2, _) => Tamper::Silence,
        _ => Tamper::Pass,
    });
    // R2 times out waiting for d (or sees K's link close, if K's own timeout fires first).
    assert!(
        matches!(
            r2,
            Err(DoprfError::Net(
                NetError::Timeout { peer: P0, .. } | NetError::Closed { peer: P0 }
            ))
        ),
        "{r2:?}"
    );
    // K waits for z_3 from R2, which never comes: timed out or closed, naming R2.
    assert!(names(&k, P2), "{k:?}");
    // R1 only sends in the online phase (a send fails only if R2 already gave up).
    assert!(r1.is_ok() || names(&r1, P2), "{r1:?}");
    assert!(start.elapsed() < 10 * TIMEOUT, "took {:?}", start.elapsed());
}

#[test]
fn truncated_c1_names_r1() {
    let seed = test_seed();
    // c_1 (Fig. 22, step 3) is the second frame on P1 → P0.
    let sessions = mesh(|from, to, i, payload| {
        if (from, to, i) == (P1, P0, 1) {
            payload.pop();
        }
        Tamper::Pass
    });
    let [k, r1, r2] = run_instance(
        sessions,
        seed,
        Params::new(80).unwrap(),
        Roles::ramen_stash(),
        |s, d| d.preprocess(s, Mode::Unmasked, 3),
    );
    assert!(
        matches!(
            k,
            Err(DoprfError::Peer(PeerFault {
                peer: P1,
                what: "Fig. 22 step 3 (c_1)",
                fault: CodecError::WrongLength {
                    expected: 3840,
                    got: 3839
                }
            }))
        ),
        "{k:?}"
    );
    assert!(r1.is_ok() && r2.is_ok());
}

#[test]
fn non_canonical_element_names_the_key_holder() {
    let [_, _, r2] = masked_run(80, 2, |from, to, i, payload| {
        if (from, to, i) == (P0, P2, 0) {
            payload[..16].fill(0xff);
        }
        Tamper::Pass
    });
    assert!(
        matches!(
            r2,
            Err(DoprfError::Peer(PeerFault {
                peer: P0,
                what: "Fig. 9 step 7 (d)",
                fault: CodecError::OutOfRange { .. },
            }))
        ),
        "{r2:?}"
    );
}

#[test]
fn mask_with_bits_beyond_l_names_r1() {
    // (r, c_3) (Fig. 9, steps 3 and 5) is the second frame on P1 → P2; ℓ = 77 leaves three
    // padding bits in the last byte of each mask.
    let [_, r1, r2] = masked_run(77, 2, |from, to, i, payload| {
        if (from, to, i) == (P1, P2, 1)
            && let Some(last) = payload.last_mut()
        {
            *last |= 0x80;
        }
        Tamper::Pass
    });
    // R1 only sends; its y_2 may find R2's link already closed.
    assert!(r1.is_ok() || names(&r1, P2), "{r1:?}");
    assert!(
        matches!(
            r2,
            Err(DoprfError::Peer(PeerFault {
                peer: P1,
                what: "Fig. 9 steps 3 and 5 (r, c_3)",
                fault: CodecError::OutOfRange { .. },
            }))
        ),
        "{r2:?}"
    );
}

#[test]
fn a_party_that_quits_in_the_middle_is_reported_by_the_others() {
    let seed = test_seed();
    let (shares, _) = shared_inputs(seed, 4);
    let sessions = LocalMesh::new(3).timeout(TIMEOUT).build();
    let start = Instant::now();
    let [k, r1, r2] = run_instance(
        sessions,
        seed,
        Params::new(80).unwrap(),
        Roles::ramen_stash(),
        |s, d| {
            d.preprocess(s, Mode::Masked, 4)?;
            d.preprocess(s, Mode::Unmasked, 4)?;
            let x = &shares[s.me().index()];
            d.eval_unmasked(s, x)?;
            if s.me() == P1 {
                // R1 stops here; its session closes when it returns.
                return Ok(());
            }
            d.eval_masked(s, x).map(drop)
        },
    );
    assert!(r1.is_ok());
    assert!(
        matches!(r2, Err(DoprfError::Net(NetError::Closed { peer: P1 }))),
        "{r2:?}"
    );
    assert!(names(&k, P2), "{k:?}");
    assert!(start.elapsed() < 10 * TIMEOUT);
}

#[test]
fn exhausted_preprocessing_is_an_error_everywhere_and_consumes_nothing() {
    let seed = test_seed();
    let (shares, _) = shared_inputs(seed, 3);
    let results = run_instance(
        Session::local_mesh(3),
        seed,
        Params::new(40).unwrap(),
        Roles::ramen_stash(),
        |s, d| {
            let x = &shares[s.me().index()];
            let exhausted = |r: Result<_, DoprfError>,
                             requested: usize,
                             available: usize,
                             mode: Mode| {
                matches!(
                    r,
                    Err(DoprfError::PreprocessingExhausted { mode: m, requested: q, available: a })
                        if m == mode && q == requested && a == available
                )
            };
            // Nothing preprocessed yet.
            assert!(exhausted(
                d.eval_unmasked(s, &x[..1]).map(drop),
                1,
                0,
                Mode::Unmasked
            ));
            d.preprocess(s, Mode::Masked, 2)?;
            d.preprocess(s, Mode::Unmasked, 2)?;
            assert!(exhausted(d.eval_masked(s, x).map(drop), 3, 2, Mode::Masked));
            assert!(exhausted(
                d.eval_unmasked(s, x).map(drop),
                3,
                2,
                Mode::Unmasked
            ));
            // The failed calls consumed nothing and sent nothing: two evaluations still work.
            let masked = d.eval_masked(s, &x[..2])?;
            let unmasked = d.eval_unmasked(s, &x[..2])?;
            assert!(exhausted(
                d.eval_masked(s, &x[..1]).map(drop),
                1,
                0,
                Mode::Masked
            ));
            // Refilling makes evaluation possible again.
            d.preprocess(s, Mode::Masked, 1)?;
            d.eval_masked(s, &x[2..])?;
            Ok((masked, unmasked, d.key().cloned()))
        },
    );
    let [k, r1, r2] = results.map(|r| r.expect("no party fails"));
    let key = k.2.expect("K has the key");
    let (_, plain) = shared_inputs(seed, 3);
    let y = doram_doprf::LegendrePrf::new(key).eval_batch(&plain[..2]);
    assert_eq!(r2.1, Some(y.clone()));
    assert_eq!(r1.0, r2.0);
    let joined: Vec<u128> = k.0.iter().zip(&r1.0).map(|(a, b)| a ^ b).collect();
    assert_eq!(joined, y);
}

#[test]
fn sessions_of_other_sizes_are_rejected() {
    for n in [2, 4] {
        for mut session in Session::local_mesh(n) {
            let me = session.me();
            assert!(matches!(
                Doprf::setup(&mut session, Params::new(8).unwrap(), Roles::ramen_stash(), party_seed(0, me)),
                Err(DoprfError::WrongPartyCount { n_parties }) if n_parties == n
            ));
        }
    }
}

#[test]
fn a_session_of_another_party_is_api_misuse() {
    let [a, _, _] = run3_on(Session::local_mesh(3), |mut session| {
        let me = session.me();
        let mut d = Doprf::setup(
            &mut session,
            Params::new(8).unwrap(),
            Roles::ramen_stash(),
            party_seed(1, me),
        )?;
        let mut other = Session::local_mesh(3).swap_remove(2);
        if me == P0 {
            let misuse = d.preprocess(&mut other, Mode::Masked, 1);
            assert!(
                matches!(misuse, Err(DoprfError::ApiMisuse(_))),
                "{misuse:?}"
            );
        }
        Ok::<_, DoprfError>(())
    });
    assert!(a.is_ok());
}
