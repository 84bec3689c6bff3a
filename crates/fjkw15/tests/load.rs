//! The shared initial load (`doram_fjkw15::load`) over an in-process three-party mesh: D and E
//! start from XOR shares of random records, load, and then run random reads and writes checked
//! against a plain array; the load's messages (count, sizes, rounds) do not depend on the
//! records.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{random_words, rng, test_seed};
use doram_core::Entropy;
use doram_fjkw15::Params;
use doram_fjkw15::driver::{Party, access_c, access_d, access_e, load_c, load_d, load_e, setup};
use doram_fjkw15::party::Roles;
use doram_net::{LocalMesh, Session, Transcript};
use rand::Rng;

/// Per access after the load: the address, D's share of it, and for a write the new record
/// and D's share of it. Access k writes when k mod 3 = 1.
type Plan = Vec<(u64, u64, Option<(Vec<u64>, Vec<u64>)>)>;

fn plan(seed: u64, params: &Params, items: u64, accesses: usize) -> Plan {
    let mut rng = rng(seed, 17);
    let mask = (1u64 << params.m()) - 1;
    (0..accesses)
        .map(|k| {
            let addr = rng.random_range(0..items);
            let n_d = rng.random::<u64>() & mask;
            let write = (k % 3 == 1).then(|| {
                let v = random_words(&mut rng, params.record_bits());
                let v_d = random_words(&mut rng, params.record_bits());
                (v, v_d)
            });
            (addr, n_d, write)
        })
        .collect()
}

/// The records and D's shares of them.
fn records(seed: u64, params: &Params, items: u64) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut rng = rng(seed, 23);
    let bits = params.record_bits();
    (0..items)
        .map(|_| (random_words(&mut rng, bits), random_words(&mut rng, bits)))
        .unzip()
}

fn xor(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// One party's run: setup, load, then the plan's accesses. Returns its shares of the records
/// read (C and E) and its transcript up to the end of the load.
fn run(
    mut s: Session,
    seeds: (u64, u64),
    params: Params,
    items: u64,
    accesses: usize,
) -> (Vec<Vec<u64>>, Transcript) {
    let (party_seed, data_seed) = seeds;
    let me = s.me();
    s.record_transcript(true);
    let seed = Entropy::InsecureSeed(party_seed).party_seed(me, "fjkw15");
    let mut party = setup(&mut s, Roles::default(), seed).unwrap();
    let (data, shares_d) = records(data_seed, &params, items);
    let mut forest = match &mut party {
        Party::C(c) => {
            load_c(&mut s, c, &params, items).unwrap();
            None
        }
        Party::D(d) => Some(load_d(&mut s, d, &params, &shares_d).unwrap()),
        Party::E(e) => {
            let shares_e: Vec<_> = data.iter().zip(&shares_d).map(|(a, b)| xor(a, b)).collect();
            Some(load_e(&mut s, e, &params, &shares_e).unwrap())
        }
    };
    let transcript = s.transcript().cloned().unwrap();
    let mut out = Vec::new();
    for (addr, n_d, write) in plan(data_seed, &params, items, accesses) {
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
    (out, transcript)
}

fn mesh(
    seeds: (u64, u64),
    params: Params,
    items: u64,
    accesses: usize,
) -> Vec<(Vec<Vec<u64>>, Transcript)> {
    let sessions = LocalMesh::new(3).timeout(Duration::from_secs(60)).build();
    std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|s| scope.spawn(move || run(s, seeds, params, items, accesses)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn check(seed: u64, params: Params, items: u64, accesses: usize) {
    let mut runs = mesh((seed, seed), params, items, accesses);
    let (from_e, from_c) = (runs.pop().unwrap().0, runs.remove(0).0);
    let mut array = records(seed, &params, items).0;
    for (k, (addr, _, write)) in plan(seed, &params, items, accesses).into_iter().enumerate() {
        let got = xor(&from_c[k], &from_e[k]);
        assert_eq!(
            got, array[addr as usize],
            "{params:?}, {items} items: access {k} to {addr}"
        );
        if let Some((v, _)) = write {
            array[addr as usize] = v;
        }
    }
}

#[test]
fn loaded_memories_answer_reads_and_writes() {
    let seed = test_seed();
    // Odd sizes, a single item, a full memory; records of 1, 20 and 64 bits.
    check(seed, Params::new(9, 3, 32, 20).unwrap(), 301, 60);
    check(seed, Params::new(6, 3, 32, 64).unwrap(), 1, 10);
    check(seed, Params::new(12, 4, 32, 1).unwrap(), 37, 40);
    check(seed, Params::new(8, 4, 24, 64).unwrap(), 256, 60);
}

#[test]
fn the_load_sends_the_same_messages_whatever_the_records() {
    // Other records, other party coins: every party sends and receives the same number of
    // messages of the same sizes in the same rounds during the load.
    let seed = test_seed();
    let params = Params::new(9, 3, 32, 64).unwrap();
    let shape = |seeds| -> Vec<Transcript> {
        mesh(seeds, params, 77, 0)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    };
    let a = shape((seed, seed));
    let b = shape((seed, seed.wrapping_add(1)));
    let c = shape((seed.wrapping_add(2), seed.wrapping_add(3)));
    assert!(!a[0].events.is_empty());
    assert_eq!(a, b, "other records");
    assert_eq!(a, c, "other records and coins");
}
