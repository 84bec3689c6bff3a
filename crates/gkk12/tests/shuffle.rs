//! The Beneš routing and the shared permutation protocol.
#![allow(clippy::unwrap_used)]

mod common;

use common::run2;
use doram_gkk12::shuffle::{Shares, apply_plain, hold, permute, route};
use doram_net::Session;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

#[test]
fn every_permutation_routes() {
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for k in 0..=10 {
        for _ in 0..20 {
            let n = 1usize << k;
            let mut dest: Vec<usize> = (0..n).collect();
            dest.shuffle(&mut rng);
            let controls = route(&dest).unwrap();
            assert_eq!(controls.len(), if k == 0 { 0 } else { 2 * k - 1 });
            let mut v: Vec<usize> = (0..n).collect();
            apply_plain(&mut v, &controls, false);
            for (x, &d) in dest.iter().enumerate() {
                assert_eq!(v[d], x, "k = {k}");
            }
            apply_plain(&mut v, &controls, true);
            assert_eq!(v, (0..n).collect::<Vec<_>>());
        }
    }
    assert!(route(&[0, 0]).is_err());
    assert!(route(&[0, 1, 2]).is_err());
}

#[test]
fn a_shared_vector_is_permuted_and_back() {
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    for (k, bytes) in [(0, 3), (1, 5), (6, 17), (9, 70)] {
        let n = 1usize << k;
        let v: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
        let w: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
        let a: Vec<u8> = v.iter().zip(&w).map(|(x, y)| x ^ y).collect();
        let mut dest: Vec<usize> = (0..n).collect();
        dest.shuffle(&mut rng);
        let controls = route(&dest).unwrap();
        let delta = random_delta(&mut insecure_rng_for_tests(5));
        let (w1, a1) = run2(
            |mut s: Session| {
                let mut ot = softspoken_sender_setup(
                    &mut s,
                    ChunkBits::default(),
                    delta,
                    &mut insecure_rng_for_tests(6),
                )
                .unwrap();
                let mut w = Shares { bytes, data: w };
                hold(&mut s, &mut ot, &mut w, false).unwrap();
                let forward = w.clone();
                hold(&mut s, &mut ot, &mut w, true).unwrap();
                (forward, w)
            },
            |mut s: Session| {
                let mut ot = softspoken_receiver_setup(
                    &mut s,
                    ChunkBits::default(),
                    &mut insecure_rng_for_tests(7),
                )
                .unwrap();
                let mut a = Shares { bytes, data: a };
                permute(&mut s, &mut ot, &mut a, &controls, false).unwrap();
                let forward = a.clone();
                permute(&mut s, &mut ot, &mut a, &controls, true).unwrap();
                (forward, a)
            },
        );
        let open = |w: &Shares, a: &Shares| -> Vec<u8> {
            w.data.iter().zip(&a.data).map(|(x, y)| x ^ y).collect()
        };
        let forward = open(&w1.0, &a1.0);
        for (x, &d) in dest.iter().enumerate() {
            assert_eq!(
                forward[d * bytes..(d + 1) * bytes],
                v[x * bytes..(x + 1) * bytes],
                "k = {k}"
            );
        }
        assert_eq!(open(&w1.1, &a1.1), v, "k = {k}: back");
        if n > 1 {
            // Each party's shares alone look nothing like the data.
            assert_ne!(w1.0.data, forward);
            assert_ne!(a1.0.data, forward);
        }
    }
}
