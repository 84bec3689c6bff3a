//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::hash::{BuildHasher, Hasher};

use doram_core::Entropy;
use doram_fjkw15::party::{C, D, E, Roles, setup_in_process};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// The environment variable that fixes a test run's seed.
pub const SEED_VAR: &str = "DORAM_TEST_SEED";

/// The run's seed: `DORAM_TEST_SEED` if set, else a fresh one; printed, so that a failure can
/// be replayed.
pub fn test_seed() -> u64 {
    let seed = match std::env::var(SEED_VAR) {
        Ok(s) => s.trim().parse().unwrap(),
        Err(_) => {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(0xf1c5);
            h.finish()
        }
    };
    eprintln!("{SEED_VAR}={seed}");
    seed
}

/// A test RNG for inputs, from the run's seed and a label.
pub fn rng(seed: u64, label: u64) -> ChaCha12Rng {
    ChaCha12Rng::seed_from_u64(seed ^ label.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The three parties, set up in process from the run's seed.
pub fn parties(seed: u64) -> (C, D, E) {
    setup_in_process(Roles::default(), Entropy::InsecureSeed(seed))
}

/// A random `bits`-bit value (bits ≤ 128).
pub fn random_key(rng: &mut impl Rng, bits: usize) -> u128 {
    let x: u128 = rng.random();
    if bits >= 128 {
        x
    } else {
        x & ((1u128 << bits) - 1)
    }
}

/// `k` distinct random indices below `n`, in random order.
pub fn distinct_indices(rng: &mut impl Rng, n: usize, k: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for j in 0..k {
        let pick = rng.random_range(j..n);
        all.swap(j, pick);
    }
    all.truncate(k);
    all
}

/// A random record of `bits` bits, in words.
pub fn random_words(rng: &mut impl Rng, bits: usize) -> Vec<u64> {
    (0..bits.div_ceil(64))
        .map(|k| {
            let used = bits - 64 * k;
            let w: u64 = rng.random();
            if used >= 64 { w } else { w & ((1 << used) - 1) }
        })
        .collect()
}
