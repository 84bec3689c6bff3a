//! Whole accesses among C, D and E on a dealt forest — Access[0..=h], PostProcessT, the write
//! of a new record, Eviction with its garbled circuits, written back into D's and E's shares —
//! random reads and writes again and again, every record checked against a plain array.
#![allow(clippy::unwrap_used)]

mod common;

use common::{parties, random_words, rng, test_seed};
use doram_fjkw15::plain::{Op, PlainForest, words_for};
use doram_fjkw15::testkit::{access_in_process, deal};
use doram_fjkw15::{Fjkw15Error, Params};
use rand::Rng;

#[test]
fn reads_return_the_last_write() {
    let seed = test_seed();
    let mut parties = parties(seed);
    let mut rng = rng(seed, 1);
    // w ≥ 32 keeps overflows below 10^−5 in these runs (docs/notes/fjkw15.md).
    for (params, accesses) in [
        (Params::new(6, 3, 32, 20).unwrap(), 150),
        (Params::new(9, 3, 32, 20).unwrap(), 150),
        (Params::new(8, 4, 40, 70).unwrap(), 60),
        (Params::new(4, 4, 32, 9).unwrap(), 40),
    ] {
        let items = 1u64 << params.m();
        let words = words_for(params.record_bits());
        let mut array: Vec<Vec<u64>> = (0..items)
            .map(|n| [vec![n], vec![n & 1; words - 1]].concat())
            .collect();
        let forest =
            PlainForest::load(params, items, |n| array[n as usize].clone(), &mut rng).unwrap();
        let (mut fd, mut fe) = deal(&forest, &mut rng);
        for k in 0..accesses {
            // Hammer a few addresses as well as random ones.
            let addr = if k % 3 == 0 {
                k as u64 % 3
            } else {
                rng.random_range(0..items)
            };
            let expect = array[addr as usize].clone();
            let shares = (&mut fd, &mut fe);
            let got = if rng.random_bool(0.5) {
                access_in_process(&mut parties, shares, addr, Op::Read, &mut rng)
            } else {
                let new = random_words(&mut rng, params.record_bits());
                let old = access_in_process(&mut parties, shares, addr, Op::Write(&new), &mut rng);
                array[addr as usize] = new;
                old
            };
            assert_eq!(got.unwrap(), expect, "{params:?}: access {k} to {addr}");
        }
    }
}

#[test]
fn an_overflow_is_an_error() {
    // w = 2: the first bucket holding two tuples that point away from the path overflows.
    let seed = test_seed();
    let mut parties = parties(seed);
    let mut rng = rng(seed, 2);
    let params = Params::new(8, 4, 2, 8).unwrap();
    let forest = PlainForest::load(params, 256, |n| vec![n], &mut rng).unwrap();
    let (mut fd, mut fe) = deal(&forest, &mut rng);
    let mut failure = None;
    for _ in 0..10_000 {
        let addr = rng.random_range(0..256);
        match access_in_process(&mut parties, (&mut fd, &mut fe), addr, Op::Read, &mut rng) {
            Ok(record) => assert_eq!(record, vec![addr]),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    assert!(
        matches!(failure, Some(Fjkw15Error::Overflow { .. })),
        "{failure:?}"
    );
    assert!(access_in_process(&mut parties, (&mut fd, &mut fe), 256, Op::Read, &mut rng).is_err());
}
