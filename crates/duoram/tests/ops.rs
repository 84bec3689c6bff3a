//! Random sequences of READ, UPDATE and WRITE against a plaintext mirror, over both word rings,
//! with odd sizes, several preprocessing batches and inline preprocessing; dependent reads
//! (pointer chasing through the memory); fresh output shares.

#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use doram_duoram::{DuoWord, Duoram};
use doram_field::{Fp, Z64};
use doram_mpc::testkit::{party_seed, run3, test_seed};
use doram_mpc::{Additive, deal_additive, reconstruct_additive};

fn random_sequences<W: DuoWord>(sizes: &[usize], ops: usize) {
    let seed = test_seed();
    for &n in sizes {
        let mut r = rng(seed, n as u64);
        let initial: Vec<W> = (0..n).map(|_| r.random()).collect();
        let program = random_ops::<W>(n, ops, &mut r);
        // Preprocessing in three stretches of different sizes, then inline.
        let chunks = [ops / 3, 1, ops / 4];
        let ctx = format!("n = {n}, DORAM_TEST_SEED={seed}");
        let views = ok3(run(n, &initial, &program, &chunks, seed, mesh()), &ctx);
        check(&views, &initial, &program, &ctx);
    }
}

#[test]
fn random_sequences_z64() {
    random_sequences::<Z64>(&[1, 2, 7, 64, 100, 1000], 120);
}

#[test]
fn random_sequences_fp() {
    random_sequences::<Fp>(&[1, 3, 33, 256], 60);
}

#[test]
fn one_address_hammered_with_updates() {
    let seed = test_seed();
    let n = 37;
    let mut r = rng(seed, 1);
    let initial: Vec<Z64> = (0..n).map(|_| r.random()).collect();
    let program: Vec<_> = (0..60)
        .map(|k| match k % 4 {
            0 => common::POp::Update(5, Z64(k)),
            1 => common::POp::Read(5),
            2 => common::POp::Write(5, Z64(1000 + k)),
            _ => common::POp::Update(36, Z64(u64::MAX - k)),
        })
        .collect();
    let ctx = format!("hammer, DORAM_TEST_SEED={seed}");
    let views = ok3(run(n, &initial, &program, &[], seed, mesh()), &ctx);
    check(&views, &initial, &program, &ctx);
}

/// Dependent reads: the memory is a cyclic linked list, and each read's address is the previous
/// read's result, kept secret-shared.
#[test]
fn dependent_reads_follow_pointers() {
    let seed = test_seed();
    let n = 50usize;
    // next[i] = (i·7 + 3) mod n, a permutation.
    let next: Vec<u64> = (0..n as u64).map(|i| (i * 7 + 3) % n as u64).collect();
    let mut r = rng(seed, 2);
    let mut shares: [Vec<Additive<Z64>>; 3] = Default::default();
    for &x in &next {
        for (v, s) in shares.iter_mut().zip(deal_additive(Z64(x), &mut r)) {
            v.push(s);
        }
    }
    let steps = 12;
    let out = run3(|session| {
        let me = session.me();
        let mut o = Duoram::<Z64>::setup(session, n, party_seed(seed, me)).unwrap();
        o.preprocess(steps).unwrap();
        o.init(&shares[me.index()]).unwrap();
        let mut addr = Additive::public(Z64(0), me);
        let mut seen = Vec::new();
        for _ in 0..steps {
            addr = o.read(addr).unwrap();
            seen.push(addr);
        }
        seen
    });
    let mut want = 0u64;
    for t in 0..steps {
        want = next[want as usize];
        assert_eq!(
            reconstruct_additive(&[out[0][t], out[1][t], out[2][t]]),
            Z64(want),
            "step {t}, DORAM_TEST_SEED={seed}"
        );
    }
}

/// Two runs with different party randomness give different shares of the same values.
#[test]
fn output_shares_are_fresh() {
    let seed = test_seed();
    let n = 9;
    let mut r = rng(seed, 3);
    let initial: Vec<Z64> = (0..n).map(|_| r.random()).collect();
    let program = random_ops::<Z64>(n, 12, &mut r);
    let a = ok3(run(n, &initial, &program, &[], seed, mesh()), "a");
    let b = ok3(run(n, &initial, &program, &[], seed ^ 0xf00d, mesh()), "b");
    check(&a, &initial, &program, "a");
    check(&b, &initial, &program, "b");
    for p in 0..3 {
        for (t, op) in program.iter().enumerate() {
            if !matches!(op, common::POp::Update(..)) {
                assert_ne!(a[p].outputs[t], b[p].outputs[t], "P{p}, op {t}");
            }
        }
        for i in 0..n {
            assert_ne!(a[p].memory[i], b[p].memory[i], "P{p}, word {i}");
        }
    }
}

/// A batch of independent reads returns what single reads return, interleaved with updates.
#[test]
fn batched_reads_match_the_oracle() {
    let seed = test_seed();
    let n = 45usize;
    let mut r = rng(seed, 4);
    let initial: Vec<Z64> = (0..n).map(|_| r.random()).collect();
    let addrs: Vec<u64> = (0..9).map(|i| (i * 11 + 2) % n as u64).collect();
    let mut dealt: [Vec<Additive<Z64>>; 3] = Default::default();
    let mut mem: [Vec<Additive<Z64>>; 3] = Default::default();
    for &x in &initial {
        for (v, s) in mem.iter_mut().zip(deal_additive(x, &mut r)) {
            v.push(s);
        }
    }
    for &a in &addrs {
        for (v, s) in dealt.iter_mut().zip(deal_additive(Z64(a), &mut r)) {
            v.push(s);
        }
    }
    let out = run3(|session| {
        let me = session.me();
        let i = me.index();
        let mut o = Duoram::<Z64>::setup(session, n, party_seed(seed, me)).unwrap();
        o.preprocess(4).unwrap();
        o.init(&mem[i]).unwrap();
        // The first batch needs more material than preprocessed: the rest is made inline.
        let first = o.read_batch(&dealt[i][..6]).unwrap();
        o.update(dealt[i][0], Additive::public(Z64(100), me))
            .unwrap();
        let second = o.read_batch(&dealt[i][..3]).unwrap();
        assert!(o.read_batch(&[]).unwrap().is_empty());
        (first, second)
    });
    for t in 0..6 {
        let got = reconstruct_additive(&[out[0].0[t], out[1].0[t], out[2].0[t]]);
        assert_eq!(got, initial[addrs[t] as usize], "first batch, read {t}");
    }
    for t in 0..3 {
        let got = reconstruct_additive(&[out[0].1[t], out[1].1[t], out[2].1[t]]);
        let mut want = initial[addrs[t] as usize];
        if addrs[t] == addrs[0] {
            want += Z64(100);
        }
        assert_eq!(got, want, "second batch, read {t}");
    }
}
