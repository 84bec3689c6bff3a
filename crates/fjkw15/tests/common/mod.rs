//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::hash::{BuildHasher, Hasher};

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
