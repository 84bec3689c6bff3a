//! Whole accesses over an in-process three-party mesh, each party on its own thread with its
//! own session: setup, then random reads and writes on a dealt forest, every record checked.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{random_words, rng, test_seed};
use doram_core::{Entropy, PartyId};
use doram_fjkw15::Params;
use doram_fjkw15::driver::{Party, access_c, access_d, access_e, setup};
use doram_fjkw15::party::Roles;
use doram_fjkw15::plain::PlainForest;
use doram_fjkw15::storage::ForestShare;
use doram_fjkw15::testkit::deal;
use doram_net::{LinkStats, LocalMesh};
use rand::Rng;

/// The test's plan, derived alike by every thread from the run's seed: per access, the
/// address, D's share of it, and for a write the new record and D's share of it. Access k
/// writes when k mod 3 = 1 (the operation is public; addresses and values are not).
type Plan = Vec<(u64, u64, Option<(Vec<u64>, Vec<u64>)>)>;

fn plan(seed: u64, params: &Params, accesses: usize) -> Plan {
    let mut rng = rng(seed, 7);
    let items = 1u64 << params.m();
    (0..accesses)
        .map(|k| {
            let addr = rng.random_range(0..items);
            let n_d = rng.random_range(0..items);
            let write = (k % 3 == 1).then(|| {
                let v = random_words(&mut rng, params.record_bits());
                let v_d = random_words(&mut rng, params.record_bits());
                (v, v_d)
            });
            (addr, n_d, write)
        })
        .collect()
}

/// One party's whole run; returns its shares of the records read (C and E), in order, and
/// what it sent to each peer.
fn run(
    mut s: doram_net::Session,
    seed: u64,
    params: Params,
    forest: Option<ForestShare>,
    accesses: usize,
) -> (Vec<Vec<u64>>, Vec<LinkStats>) {
    let entropy = Entropy::InsecureSeed(seed);
    let me = s.me();
    let mut party = setup(&mut s, Roles::default(), entropy.party_seed(me, "fjkw15")).unwrap();
    let mut forest = forest;
    let mut out = Vec::new();
    for (addr, n_d, write) in plan(seed, &params, accesses) {
        let xor = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(x, y)| x ^ y).collect::<Vec<u64>>();
        match &mut party {
            Party::C(c) => out.push(access_c(&mut s, c, &params, write.is_some()).unwrap()),
            Party::D(d) => {
                let v_d = write.as_ref().map(|(_, v_d)| v_d.as_slice());
                access_d(&mut s, d, forest.as_mut().unwrap(), n_d, v_d).unwrap();
            }
            Party::E(e) => {
                let v_e = write.as_ref().map(|(v, v_d)| xor(v, v_d));
                let f = forest.as_mut().unwrap();
                out.push(access_e(&mut s, e, f, addr ^ n_d, v_e.as_deref()).unwrap());
            }
        }
    }
    let total = s.stats().total();
    let links = PartyId::first(3)
        .iter()
        .filter(|&&p| p != me)
        .map(|&p| *total.link(p))
        .collect();
    (out, links)
}

/// The three parties' runs on a mesh; per party, its record shares and link statistics.
fn mesh(seed: u64, params: Params, accesses: usize) -> Vec<(Vec<Vec<u64>>, Vec<LinkStats>)> {
    let mut rng = rng(seed, 1);
    let items = 1u64 << params.m();
    let forest = PlainForest::load(params, items, |n| vec![n], &mut rng).unwrap();
    let (fd, fe) = deal(&forest, &mut rng);
    let sessions = LocalMesh::new(3).timeout(Duration::from_secs(60)).build();
    std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|s| {
                let f = match s.me() {
                    PartyId::P1 => Some(fd.clone()),
                    PartyId::P2 => Some(fe.clone()),
                    _ => None,
                };
                scope.spawn(move || run(s, seed, params, f, accesses))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn reads_and_writes_over_a_mesh() {
    let seed = test_seed();
    let params = Params::new(9, 3, 32, 20).unwrap();
    let accesses = 40;
    let mut runs = mesh(seed, params, accesses);
    let (from_e, from_c) = (runs.pop().unwrap().0, runs.remove(0).0);
    let mut array: Vec<Vec<u64>> = (0..1u64 << params.m()).map(|n| vec![n]).collect();
    for (k, (addr, _, write)) in plan(seed, &params, accesses).into_iter().enumerate() {
        let got: Vec<u64> = from_c[k]
            .iter()
            .zip(&from_e[k])
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(got, array[addr as usize], "access {k} to {addr}");
        if let Some((v, _)) = write {
            array[addr as usize] = v;
        }
    }
}

#[test]
fn traffic_does_not_depend_on_addresses_or_values() {
    // Same parameters and operation pattern, other addresses, values, shares and coins: every
    // party sends the same number of messages of the same sizes in the same rounds.
    let seed = test_seed();
    let params = Params::bench(12).unwrap();
    let shape = |seed| -> Vec<Vec<LinkStats>> {
        mesh(seed, params, 6)
            .into_iter()
            .map(|(_, links)| links)
            .collect()
    };
    assert_eq!(shape(seed), shape(seed.wrapping_add(1)));
}

#[test]
fn a_short_message_is_blamed_on_its_sender_and_nobody_hangs() {
    use doram_fjkw15::Fjkw15Error;
    use doram_fjkw15::driver::DriverError;
    use doram_net::Tamper;

    let seed = test_seed();
    let params = Params::new(6, 3, 32, 20).unwrap();
    let mut rng = rng(seed, 3);
    let forest = PlainForest::load(params, 64, |n| vec![n], &mut rng).unwrap();
    let (fd, fe) = deal(&forest, &mut rng);
    // D's first message to C (Access[0]) loses its last byte.
    let sessions = LocalMesh::new(3)
        .timeout(Duration::from_secs(5))
        .tamper(|from, to, index, payload| {
            if (from, to, index) == (PartyId::P1, PartyId::P0, 0) {
                payload.pop();
            }
            Tamper::Pass
        })
        .build();
    let results: Vec<Result<(), DriverError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|mut s| {
                let mut f = match s.me() {
                    PartyId::P1 => Some(fd.clone()),
                    PartyId::P2 => Some(fe.clone()),
                    _ => None,
                };
                scope.spawn(move || -> Result<(), DriverError> {
                    let seed = Entropy::InsecureSeed(seed).party_seed(s.me(), "fjkw15");
                    match setup(&mut s, Roles::default(), seed)? {
                        Party::C(mut c) => access_c(&mut s, &mut c, &params, false).map(drop),
                        Party::D(mut d) => access_d(&mut s, &mut d, f.as_mut().unwrap(), 0, None),
                        Party::E(mut e) => {
                            access_e(&mut s, &mut e, f.as_mut().unwrap(), 5, None).map(drop)
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    match &results[0] {
        Err(DriverError::Protocol(Fjkw15Error::Peer(f))) => {
            assert_eq!(f.peer, PartyId::P1);
            assert_eq!(f.what, "Access (Alg. 3, steps 2–4) from D");
        }
        other => panic!("C: {other:?}"),
    }
    assert!(results[1].is_err() && results[2].is_err(), "{results:?}");
}
