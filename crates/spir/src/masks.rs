//! The keys of the PIR-to-SPIR transform: one mask per record, derived from `d = log₂ N` pairs
//! of random OT messages so that the OT receiver, holding one message of each pair (its choice
//! bits `c`), can compute the mask of record `c` and of no other.
//!
//! This is Naor and Pinkas's 1-out-of-N OT from `log₂ N` 1-out-of-2 OTs (Naor–Pinkas, STOC
//! 1999), the transform Duoram §5 applies to SPIRAL, with the record keys chained through a
//! tree instead of combined per record: with `k_{j,b}` the sender's pair `j` (bit `j` of the
//! index, least significant first) and `H_j` the tweakable circular correlation-robust hash of
//! fixed-key AES with tweak `j` ([`doram_prim::FixedKeyAes::tccr`]),
//!
//! `s_ε = 0`, `s_{y + b·2^j} = H_j(s_y ⊕ k_{j,b})` for `y < 2^j`, and record `x`'s mask is
//! `s_x` at depth `d`.
//!
//! The sender's `2N` hashes replace the `N log₂ N` PRF calls of combining every key per record.
//! Security: for `x ≠ c`, let `j` be the lowest bit where they differ; `s` of `x`'s prefix at
//! depth `j + 1` is `H_j(s_y ⊕ k_{j,1−c_j})` with `k_{j,1−c_j}` unknown to the receiver and
//! uniform, i.e. a correlation-robust hash of a known or pseudorandom input offset by a secret
//! uniform key, which is pseudorandom; everything below it is hashed from pseudorandom values
//! the receiver does not know. The pairs must be fresh for every lookup.

use doram_prim::{Block, fixed_key};

/// Tweaks per hashing batch.
const CHUNK: usize = 1024;

/// Every record's mask, `out.len() == 2^pairs.len()` afterwards.
pub fn sender_masks(pairs: &[[Block; 2]], out: &mut Vec<Block>) {
    let aes = fixed_key();
    let big = 1usize << pairs.len();
    out.clear();
    out.resize(big, 0);
    let mut tweaks = [0 as Block; CHUNK];
    for (j, pair) in pairs.iter().enumerate() {
        let half = 1usize << j;
        tweaks.fill(j as Block);
        let (low, high) = out[..2 * half].split_at_mut(half);
        for (h, l) in high.iter_mut().zip(low.iter_mut()) {
            *h = *l ^ pair[1];
            *l ^= pair[0];
        }
        for part in out[..2 * half].chunks_mut(CHUNK) {
            aes.tccr_in_place(&tweaks[..part.len()], part);
        }
    }
}

/// The mask of the record whose index bits chose the messages `chosen[j] = k_{j, c_j}`.
pub fn receiver_mask(chosen: &[Block]) -> Block {
    let aes = fixed_key();
    chosen
        .iter()
        .enumerate()
        .fold(0, |s, (j, k)| aes.tccr(j as Block, s ^ k))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn receiver_gets_its_mask_and_masks_differ() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(7);
        for d in [0usize, 1, 2, 5, 11] {
            let pairs: Vec<[Block; 2]> = (0..d).map(|_| [rng.random(), rng.random()]).collect();
            let mut masks = Vec::new();
            sender_masks(&pairs, &mut masks);
            assert_eq!(masks.len(), 1 << d);
            for c in 0..(1usize << d) {
                let chosen: Vec<Block> = (0..d).map(|j| pairs[j][(c >> j) & 1]).collect();
                assert_eq!(receiver_mask(&chosen), masks[c]);
            }
            let mut sorted = masks.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), masks.len(), "masks collide at d = {d}");
        }
    }

    #[test]
    fn one_wrong_key_changes_the_mask() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(8);
        let pairs: Vec<[Block; 2]> = (0..10).map(|_| [rng.random(), rng.random()]).collect();
        let mut masks = Vec::new();
        sender_masks(&pairs, &mut masks);
        let c = 0b1011001110usize;
        let chosen: Vec<Block> = (0..10).map(|j| pairs[j][(c >> j) & 1]).collect();
        for j in 0..10 {
            let mut wrong = chosen.clone();
            wrong[j] = pairs[j][1 - ((c >> j) & 1)];
            // The wrong key yields the mask of the index with bit j flipped, not c's.
            assert_eq!(receiver_mask(&wrong), masks[c ^ (1 << j)]);
            assert_ne!(receiver_mask(&wrong), masks[c]);
        }
    }
}
