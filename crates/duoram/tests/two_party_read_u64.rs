//! 2P-Duoram's READ on 64-bit words (SPIRAL over 8-byte records): every read's shares sum, mod
//! 2^64, to the plaintext word, on odd and power-of-two sizes and indices near both ends;
//! transcripts that depend on neither the indices nor the data; F_p material and 64-bit
//! material not interchangeable, nor material of another size.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use doram_duoram::DuoramError;
use doram_duoram::two_party::{
    MemoryShare, MemoryShare64, padded_len, prepare_reads, read, read_u64, setup_reads,
    setup_reads_u64,
};
use doram_field::Z64;
use doram_mpc::testkit::test_seed;
use doram_net::{LocalMesh, Session, Transcript};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use doram_twopc::insecure_rng_for_tests;
use rand_core::RngCore;

fn mesh() -> LocalMesh {
    LocalMesh::new(2).timeout(Duration::from_secs(60))
}

/// Additive shares mod 2^64 of `memory` (padded with zeros to N words) and of the indices mod N.
fn share(memory: &[u64], indices: &[usize], g: &mut AesPrg) -> [(Vec<u64>, Vec<u64>); 2] {
    let big = padded_len(memory.len());
    let mut out = [(); 2].map(|_| (Vec::new(), Vec::new()));
    for k in 0..big {
        let x = memory.get(k).copied().unwrap_or(0);
        let a = g.next_u64();
        out[0].0.push(a);
        out[1].0.push(x.wrapping_sub(a));
    }
    for &i in indices {
        let i0 = g.next_u64() & (big as u64 - 1);
        out[0].1.push(i0);
        out[1]
            .1
            .push((i as u64).wrapping_sub(i0) & (big as u64 - 1));
    }
    out
}

fn party(
    mut s: Session,
    seed: u64,
    words: &[u64],
    indices: &[u64],
) -> Result<(Vec<u64>, Transcript), DuoramError> {
    let me = s.me().index() as u64;
    let mut rng = insecure_rng_for_tests(seed.wrapping_mul(2).wrapping_add(me));
    let mut engine = Arith2::setup(&mut s, &mut rng)?;
    let memory = MemoryShare64::from_shares(words.iter().map(|&w| Z64(w)).collect())?;
    let mut setup = setup_reads_u64(&mut s, words.len())?;
    s.record_transcript(true);
    let mats = prepare_reads(&mut s, &mut engine, &setup, indices.len(), &mut rng)?;
    let mut out = Vec::new();
    for (mat, &i) in mats.into_iter().zip(indices) {
        out.push(read_u64(&mut s, &memory, &mut setup, mat, i)?.0);
    }
    Ok((out, s.take_transcript().unwrap()))
}

fn run(seed: u64, memory: &[u64], indices: &[usize], tag: u64) -> (Vec<u64>, [Transcript; 2]) {
    let mut g = common::rng(seed, tag);
    let shares = share(memory, indices, &mut g);
    let outs = doram_net::testkit::run(mesh().build(), |s| {
        let (words, idx) = &shares[s.me().index()];
        party(s, seed, words, idx)
    });
    let mut it = outs.into_iter();
    let (r0, t0) = it.next().unwrap().unwrap();
    let (r1, t1) = it.next().unwrap().unwrap();
    let opened = r0
        .iter()
        .zip(&r1)
        .map(|(a, b)| a.wrapping_add(*b))
        .collect();
    (opened, [t0, t1])
}

#[test]
fn reads_match_a_plaintext_array() {
    let seed = test_seed();
    for (n, count) in [(1usize, 2usize), (5, 3), (1000, 4), (5000, 3)] {
        let mut g = common::rng(seed, 100 + n as u64);
        let memory: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
        let indices: Vec<usize> = (0..count)
            .map(|k| match k {
                0 => n - 1,
                1 => 0,
                _ => usize::try_from(g.next_u64() % n as u64).unwrap(),
            })
            .collect();
        let (opened, _) = run(seed, &memory, &indices, n as u64);
        let want: Vec<u64> = indices.iter().map(|&i| memory[i]).collect();
        assert_eq!(opened, want, "n = {n}, DORAM_TEST_SEED={seed}");
    }
}

#[test]
fn transcripts_do_not_depend_on_indices_or_data() {
    let seed = test_seed();
    let n = 2000;
    let mut g = common::rng(seed, 7);
    let a: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
    let b: Vec<u64> = (0..n).map(|k| k as u64).collect();
    let (ra, ta) = run(seed, &a, &[3, 1999, 0], 1);
    let (rb, tb) = run(seed ^ 0x77, &b, &[1024, 5, 5], 2);
    assert_eq!(ra, vec![a[3], a[1999], a[0]]);
    assert_eq!(rb, vec![1024, 5, 5]);
    assert_eq!(ta, tb, "DORAM_TEST_SEED={seed}");
}

#[test]
fn field_and_word_material_are_not_interchangeable() {
    let seed = test_seed();
    let outs = doram_net::testkit::run(mesh().build(), |mut s| {
        let mut rng = insecure_rng_for_tests(seed ^ s.me().index() as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mut words = setup_reads_u64(&mut s, 8).unwrap();
        let mut field = setup_reads(&mut s, 8).unwrap();
        let wm = prepare_reads(&mut s, &mut engine, &words, 1, &mut rng).unwrap();
        let fm = prepare_reads(&mut s, &mut engine, &field, 1, &mut rng).unwrap();
        let memory = MemoryShare::zeros(8).unwrap();
        let a = read(
            &mut s,
            &memory,
            &mut field,
            wm.into_iter().next().unwrap(),
            0,
        );
        let zeros = MemoryShare64::zeros(8).unwrap();
        let b = read_u64(
            &mut s,
            &zeros,
            &mut words,
            fm.into_iter().next().unwrap(),
            0,
        );
        let m = prepare_reads(&mut s, &mut engine, &words, 1, &mut rng).unwrap();
        let small = MemoryShare64::zeros(3).unwrap();
        let c = read_u64(&mut s, &small, &mut words, m.into_iter().next().unwrap(), 0);
        [a.err(), b.err(), c.err()]
            .iter()
            .all(|e| matches!(e, Some(DuoramError::ApiMisuse(_))))
    });
    assert!(outs.into_iter().all(|x| x));
}
