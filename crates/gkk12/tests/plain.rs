//! The plaintext tree ORAM against a plain array, and its structural invariants.
#![allow(clippy::unwrap_used)]

mod common;

use common::random_words;
use doram_gkk12::plain::payload_fits;
use doram_gkk12::tree::path;
use doram_gkk12::{AccessError, Op, Params, PlainTreeOram, overflow_experiment};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Every item of every tree sits on the path to its leaf exactly once, and the leaves stored
/// one tree up (or in the base map) are the items' leaves.
fn check_invariants(oram: &PlainTreeOram) {
    let p = *oram.params();
    for i in 0..p.trees() {
        let tree = oram.tree(i);
        let g = *tree.geometry();
        let mut seen = vec![false; g.items as usize];
        for (s, slot) in tree.slots().iter().enumerate() {
            if !slot.valid {
                continue;
            }
            assert!(slot.addr < g.items && slot.leaf < g.leaves());
            assert!(
                !seen[slot.addr as usize],
                "tree {i}: item {} twice",
                slot.addr
            );
            seen[slot.addr as usize] = true;
            let bucket = s / g.bucket;
            assert!(
                path(g.height, slot.leaf).any(|b| b == bucket),
                "tree {i}: item {} off its path",
                slot.addr
            );
            if i + 1 < p.trees() {
                let up = oram.tree(i + 1);
                let (holder, _) = up
                    .slots()
                    .iter()
                    .enumerate()
                    .find(|(_, u)| u.valid && u.addr == slot.addr >> 4)
                    .unwrap();
                assert_eq!(up.payload(holder)[(slot.addr & 15) as usize], slot.leaf);
            }
        }
        assert!(seen.iter().all(|&x| x), "tree {i} lost an item");
    }
}

fn run_against_array(params: Params, accesses: usize, seed: u64) {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let bits = params.payload_bits();
    let mut array: Vec<Vec<u64>> = (0..params.items())
        .map(|_| random_words(&mut rng, bits))
        .collect();
    let init = array.clone();
    let mut oram = PlainTreeOram::load(params, |v| init[v as usize].clone(), &mut rng).unwrap();
    check_invariants(&oram);
    for step in 0..accesses {
        let v = rng.random_range(0..params.items());
        let expect = array[v as usize].clone();
        let got = if rng.random_bool(0.5) {
            oram.access(v, Op::Read, &mut rng).unwrap()
        } else {
            let new = random_words(&mut rng, bits);
            let old = oram.access(v, Op::Write(&new), &mut rng).unwrap();
            array[v as usize] = new;
            old
        };
        assert_eq!(got, expect, "access {step} to {v}");
        if step % 997 == 0 {
            check_invariants(&oram);
        }
    }
    check_invariants(&oram);
    for v in 0..params.items() {
        assert_eq!(
            oram.access(v, Op::Read, &mut rng).unwrap(),
            array[v as usize]
        );
    }
}

#[test]
fn reads_return_the_last_write() {
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for (items, bits, bucket, trees) in [
        (1, 8, 2, 1),
        (2, 1, 2, 1),
        (17, 70, 8, 2),
        (1000, 64, 20, 3),
        (1000, 512, 20, 4),
        (4097, 13, 24, 2),
    ] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let mut array: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let init = array.clone();
        let mut oram = PlainTreeOram::load(params, |v| init[v as usize].clone(), &mut rng).unwrap();
        check_invariants(&oram);
        for step in 0..3 * items as usize + 200 {
            let v = rng.random_range(0..items);
            let expect = array[v as usize].clone();
            let got = if rng.random_bool(0.5) {
                oram.access(v, Op::Read, &mut rng).unwrap()
            } else {
                let new = random_words(&mut rng, bits);
                let old = oram.access(v, Op::Write(&new), &mut rng).unwrap();
                array[v as usize] = new;
                old
            };
            assert_eq!(got, expect, "{params:?}: access {step} to {v}");
            if step % 61 == 0 {
                check_invariants(&oram);
            }
        }
        check_invariants(&oram);
        for v in 0..items {
            assert_eq!(
                oram.access(v, Op::Read, &mut rng).unwrap(),
                array[v as usize]
            );
        }
    }
}

#[test]
fn paper_parameters_hold_a_long_run() {
    run_against_array(Params::paper(1 << 12, 32).unwrap(), 20_000, 2);
}

#[test]
fn bad_accesses_are_refused_without_change() {
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    let params = Params::new(10, 12, 4, 1).unwrap();
    let mut oram = PlainTreeOram::load(params, |v| vec![v], &mut rng).unwrap();
    assert_eq!(
        oram.access(10, Op::Read, &mut rng),
        Err(AccessError::Address {
            addr: 10,
            items: 10
        })
    );
    for bad in [&[1u64 << 12][..], &[1, 2][..], &[][..]] {
        assert!(matches!(
            oram.access(3, Op::Write(bad), &mut rng),
            Err(AccessError::Payload { words: 1, bits: 12 })
        ));
    }
    assert!(payload_fits(&[(1 << 12) - 1], 12));
    assert_eq!(oram.access(3, Op::Read, &mut rng).unwrap(), vec![3]);
}

#[test]
fn a_full_root_fails_closed() {
    // One slot per bucket: the root is full as soon as an eviction leaves an item in it.
    let mut rng = ChaCha12Rng::seed_from_u64(4);
    let params = Params::new(64, 8, 1, 1).unwrap();
    let mut oram = PlainTreeOram::load(params, |v| vec![v], &mut rng).unwrap_or_else(|_| {
        panic!("the load places items bottom up and finds room for 64 items in 127 buckets")
    });
    let mut failed = None;
    for _ in 0..10_000 {
        let v = rng.random_range(0..64);
        if let Err(e) = oram.access(v, Op::Read, &mut rng) {
            failed = Some(e);
            break;
        }
    }
    assert!(
        matches!(failed, Some(AccessError::Overflow(_))),
        "{failed:?}"
    );
    assert_eq!(
        oram.access(0, Op::Read, &mut rng),
        Err(AccessError::Poisoned)
    );
}

#[test]
fn overflow_falls_with_the_bucket_size() {
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    let small = overflow_experiment(1 << 8, 2, 1 << 8, 20, &mut rng).unwrap();
    let paper = overflow_experiment(1 << 8, 16, 1 << 8, 20, &mut rng).unwrap();
    assert_eq!(small.trials, 20);
    assert!(small.trials_with_stuck > 0, "{small:?}");
    assert_eq!(paper.trials_with_stuck, 0, "{paper:?}");
    assert_eq!(paper.trials_with_loss, 0, "{paper:?}");
    assert!(paper.max_load <= 16);
}
