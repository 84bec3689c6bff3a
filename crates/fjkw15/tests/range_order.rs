//! An out-of-range address when C and D stop before E has sent its first access messages:
//! E's sends then meet closed links, and E must still stop with
//! `Fjkw15Error::AddressOutOfRange` (from D's status, sent before D stopped), not with the
//! closed link. The order is forced: E starts its access only after C and D have dropped
//! their sessions.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{rng, test_seed};
use doram_core::{Entropy, PartyId};
use doram_field::Fp;
use doram_fjkw15::convert::A2b;
use doram_fjkw15::driver::{self, DriverError, Party, Pre};
use doram_fjkw15::plain::PlainForest;
use doram_fjkw15::testkit::deal;
use doram_fjkw15::{Fjkw15Error, Fjkw15FpMemory, Roles};
use doram_mpc::deal_additive;
use doram_net::LocalMesh;

fn out_of_range(r: Result<(), DriverError>) -> bool {
    matches!(
        r,
        Err(DriverError::Protocol(Fjkw15Error::AddressOutOfRange))
    )
}

#[test]
fn e_stops_with_the_range_error_after_c_and_d_have_closed() {
    let seed = test_seed();
    let n = 5;
    let params = Fjkw15FpMemory::params_for(n, 32).unwrap();
    let mut r = rng(seed, 11);
    let forest = PlainForest::load(
        params,
        n as u64,
        |a| vec![a; params.record_bits().div_ceil(64)],
        &mut r,
    )
    .unwrap();
    let (_, fe) = deal(&forest, &mut r);
    let addr = deal_additive(Fp::from_u64(6), &mut r);
    let a = A2b::<Fp>::build(&[params.m() as usize], Some(n as u128)).unwrap();
    let entropy = Entropy::InsecureSeed(seed);
    let sessions = LocalMesh::new(3).timeout(Duration::from_secs(30)).build();
    let (closed_tx, closed_rx) = mpsc::channel::<PartyId>();
    let mut closed_rx = Some(closed_rx);
    let results: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|mut s| {
                let (a, closed_tx) = (&a, closed_tx.clone());
                let fe = fe.clone();
                let closed_rx = (s.me() == PartyId::P2).then(|| closed_rx.take().unwrap());
                scope.spawn(move || {
                    let me = s.me();
                    let seed = entropy.party_seed(me, "fjkw15");
                    let mut party = driver::setup(&mut s, Roles::default(), seed).unwrap();
                    let pre = driver::precompute(&mut s, &mut party, &params).unwrap();
                    let x = [addr[me.index()].share()];
                    match (&mut party, pre) {
                        (Party::C(c), _) => {
                            driver::a2b_c(&mut s, c, a, &x).unwrap();
                            let r = driver::range_status_recv(&mut s, PartyId::P1);
                            drop(s);
                            closed_tx.send(me).unwrap();
                            out_of_range(r)
                        }
                        (Party::D(d), _) => {
                            let r = driver::a2b_d_checked(&mut s, d, a, &x).map(drop);
                            drop(s);
                            closed_tx.send(me).unwrap();
                            out_of_range(r)
                        }
                        (Party::E(e), Pre::E(pre)) => {
                            let xor = driver::a2b_e(&mut s, e, a, &x).unwrap();
                            let rx = closed_rx.unwrap();
                            let (first, second) = (rx.recv().unwrap(), rx.recv().unwrap());
                            assert_ne!(first, second);
                            let mut fe = fe;
                            let v: u128 = xor[0];
                            let r = driver::access_e_with(
                                &mut s,
                                e,
                                &mut fe,
                                (v as u64, None),
                                (pre, true),
                            );
                            out_of_range(r.map(drop))
                        }
                        _ => unreachable!("E's pre-computation is E's"),
                    }
                })
            })
            .collect();
        drop(closed_tx);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results, vec![true; 3], "C, D, E stop with the range error");
}
