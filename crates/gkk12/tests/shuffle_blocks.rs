//! Independent Beneš networks on consecutive blocks of a shared vector, in the rounds of one
//! (`hold_blocks`, `permute_blocks`, `route_blocks`): every block permuted by its own
//! permutation, the holder's transcript independent of the permutations, and settings that do
//! not fit refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::run2;
use doram_gkk12::shuffle::{Shares, apply_plain, hold_blocks, permute_blocks, route, route_blocks};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Shares `v` as `w ⊕ a`, permutes every block of `block` entries by `dests` (the permuter
/// holds `a`) and returns the opened result with both transcripts.
fn run(
    v: &[u8],
    bytes: usize,
    block: usize,
    dests: &[Vec<usize>],
    seed: u64,
) -> (Vec<u8>, Transcript, Transcript) {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let w: Vec<u8> = (0..v.len()).map(|_| rng.random()).collect();
    let a: Vec<u8> = v.iter().zip(&w).map(|(x, y)| x ^ y).collect();
    let controls = route_blocks(dests).unwrap();
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let (w, a) = run2(
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            s.record_transcript(true);
            let mut w = Shares { bytes, data: w };
            hold_blocks(&mut s, &mut ot, &mut w, block, false).unwrap();
            (w, s.take_transcript().unwrap())
        },
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let mut a = Shares { bytes, data: a };
            permute_blocks(&mut s, &mut ot, &mut a, block, &controls, false).unwrap();
            (a, s.take_transcript().unwrap())
        },
    );
    let open = w.0.data.iter().zip(&a.0.data).map(|(x, y)| x ^ y).collect();
    (open, w.1, a.1)
}

fn random_dests(rng: &mut ChaCha12Rng, blocks: usize, m: usize) -> Vec<Vec<usize>> {
    (0..blocks)
        .map(|_| {
            let mut d: Vec<usize> = (0..m).collect();
            d.shuffle(rng);
            d
        })
        .collect()
}

#[test]
fn every_block_is_permuted_by_its_own_permutation() {
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    for (blocks, k, bytes) in [(1usize, 3u32, 5usize), (4, 1, 3), (8, 4, 21), (3, 7, 26)] {
        let m = 1usize << k;
        let n = blocks * m;
        let v: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
        let dests = random_dests(&mut rng, blocks, m);
        let (out, _, _) = run(&v, bytes, m, &dests, 10 + n as u64);
        for (j, d) in dests.iter().enumerate() {
            for (x, &to) in d.iter().enumerate() {
                let (src, dst) = (j * m + x, j * m + to);
                assert_eq!(
                    out[dst * bytes..(dst + 1) * bytes],
                    v[src * bytes..(src + 1) * bytes],
                    "blocks {blocks}, block {j}, entry {x}"
                );
            }
        }
        // The settings agree with each block's own routing applied in the clear.
        let controls = route_blocks(&dests).unwrap();
        let mut all: Vec<usize> = (0..n).collect();
        let mut each = all.clone();
        for (j, d) in dests.iter().enumerate() {
            apply_plain(&mut each[j * m..(j + 1) * m], &route(d).unwrap(), false);
        }
        apply_blocks_plain(&mut all, m, &controls);
        assert_eq!(all, each);
    }
}

/// The whole vector through the blocks' stages in the clear.
fn apply_blocks_plain(values: &mut [usize], m: usize, controls: &[Vec<bool>]) {
    let bits = doram_gkk12::shuffle::stage_bits(m.trailing_zeros());
    for (b, c) in bits.into_iter().zip(controls) {
        let lower = (0..values.len()).filter(|x| (x >> b) & 1 == 0);
        for (x, &swap) in lower.zip(c) {
            if swap {
                values.swap(x, x | (1 << b));
            }
        }
    }
}

#[test]
fn the_transcripts_do_not_depend_on_the_permutations() {
    let mut rng = ChaCha12Rng::seed_from_u64(4);
    let (blocks, m, bytes) = (4, 16, 9);
    let v: Vec<u8> = (0..blocks * m * bytes).map(|_| rng.random()).collect();
    let id: Vec<Vec<usize>> = (0..blocks).map(|_| (0..m).collect()).collect();
    let shuffled = random_dests(&mut rng, blocks, m);
    let (_, h1, p1) = run(&v, bytes, m, &id, 7);
    let (_, h2, p2) = run(&v, bytes, m, &shuffled, 7);
    assert_eq!(h1, h2, "holder");
    assert_eq!(p1, p2, "permuter");
}

#[test]
fn settings_that_do_not_fit_are_refused() {
    assert!(route_blocks(&[vec![0, 1], vec![0, 1, 2, 3]]).is_err());
    assert!(route_blocks(&[vec![0, 0]]).is_err());
    assert!(route_blocks(&[vec![0, 1, 2]]).is_err());
}
