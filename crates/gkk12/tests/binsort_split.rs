//! A bin placement followed by a split of every bin (`binsort::place_split`): every real record
//! is in its label's bin, the first `edge` slots hold only records whose split bit is clear,
//! the last `edge` only records whose bit is set, dummies are all zero; a side with more than
//! Z − edge records is an overflow at both parties; transcripts do not depend on the labels or
//! the split bits; splits that do not fit are refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Placed, check_bins, layout, place_records_split};
use doram_gkk12::binsort::{Layout, Split};
use doram_gkk12::driver::Gkk12Error;
use doram_gkk12::shuffle::FRAME_BYTES;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn split_run(
    l: Layout,
    labels: &[u64],
    sp: Split,
    bits: &[bool],
    seed: u64,
) -> (Vec<u8>, Placed, Placed) {
    place_records_split(l, labels, Some((sp, bits)), FRAME_BYTES, seed)
}

/// The opened bins' edges: only records with the split bit clear in the first `edge` slots,
/// only records with it set in the last `edge`.
fn check_edges(l: &Layout, sp: Split, s0: &[u8], s1: &[u8]) {
    let (z, rb) = (l.slots(), l.bytes);
    let open: Vec<u8> = s0.iter().zip(s1).map(|(x, y)| x ^ y).collect();
    let mut seen = [0usize; 2];
    for (k, e) in open.chunks_exact(rb).enumerate() {
        let slot = k % z;
        if e[0] & 1 == 0 {
            continue;
        }
        let bit = (e[sp.bit / 8] >> (sp.bit % 8)) & 1 == 1;
        if slot < sp.edge {
            assert!(
                !bit,
                "slot {slot} of bin {}: a record with the bit set",
                k / z
            );
            seen[0] += 1;
        }
        if slot >= z - sp.edge {
            assert!(
                bit,
                "slot {slot} of bin {}: a record with the bit clear",
                k / z
            );
            seen[1] += 1;
        }
    }
    // The records fill each side from its end: with this many, both ends hold some.
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
}

#[test]
fn a_split_keeps_every_record_in_its_bin_and_each_side_at_its_end() {
    let mut rng = ChaCha12Rng::seed_from_u64(31);
    // (log bins, log slots, bytes, records, edge)
    for (log_bins, log_slots, bytes, n, edge) in [
        (2u32, 3u32, 8usize, 12usize, 2usize),
        (3, 4, 9, 50, 5),
        (4, 5, 12, 200, 8),
        (0, 4, 8, 9, 8),
    ] {
        let l = layout(log_bins, log_slots, bytes);
        let labels: Vec<u64> = (0..n)
            .map(|_| rng.random_range(0..1u64 << log_bins))
            .collect();
        let bits: Vec<bool> = (0..n).map(|_| rng.random()).collect();
        let sp = Split {
            bit: 1 + log_bins as usize,
            edge,
        };
        let (v, (r0, _, _), (r1, _, _)) = split_run(l, &labels, sp, &bits, 40 + n as u64);
        let (s0, s1) = (r0.unwrap(), r1.unwrap());
        check_bins(&l, &v, &labels, &s0, &s1);
        check_edges(&l, sp, &s0.data, &s1.data);
    }
}

#[test]
fn the_split_transcripts_do_not_depend_on_labels_or_bits() {
    let l = layout(3, 4, 8);
    let sp = Split { bit: 4, edge: 4 };
    let mut rng = ChaCha12Rng::seed_from_u64(32);
    let labels_a: Vec<u64> = (0..40).map(|_| rng.random_range(0..8)).collect();
    let bits_a: Vec<bool> = (0..40).map(|_| rng.random()).collect();
    let labels_b: Vec<u64> = (0..40).map(|i| i % 8).collect();
    let bits_b = vec![true; 40];
    let (_, (ra, ta0, qa0), (_, ta1, qa1)) = split_run(l, &labels_a, sp, &bits_a, 5);
    let (_, (rb, tb0, qb0), (_, tb1, qb1)) = split_run(l, &labels_b, sp, &bits_b, 5);
    assert!(ra.is_ok() && rb.is_ok());
    assert_eq!(ta0, tb0, "P0");
    assert_eq!(ta1, tb1, "P1");
    assert_eq!((qa0, qa1), (qb0, qb1), "rounds");
}

#[test]
fn a_side_beyond_its_limit_is_an_overflow_at_both_parties() {
    // One bin of 16 slots, an edge of 4: at most 12 records a side. Thirteen with the bit
    // set overflow; twelve do not.
    let l = layout(0, 4, 8);
    let sp = Split { bit: 1, edge: 4 };
    for (n, over) in [(13usize, true), (12, false)] {
        let labels = vec![0u64; n];
        let bits = vec![true; n];
        let (_, (r0, _, _), (r1, _, _)) = split_run(l, &labels, sp, &bits, 7);
        for r in [&r0, &r1] {
            match r {
                Err(Gkk12Error::LoadOverflow { tree: 0 }) => assert!(over, "{n}: {r:?}"),
                Ok(_) => assert!(!over, "{n}: no overflow"),
                Err(e) => panic!("{n}: {e:?}"),
            }
        }
    }
}

#[test]
fn a_split_that_does_not_fit_is_refused() {
    let l = layout(2, 3, 8);
    let labels = vec![0u64, 1, 2];
    let bits = vec![false; 3];
    for sp in [
        Split { bit: 0, edge: 1 },  // the valid bit
        Split { bit: 2, edge: 1 },  // a label bit
        Split { bit: 64, edge: 1 }, // beyond the record
        Split { bit: 5, edge: 5 },  // an edge beyond half a bin of 8
    ] {
        let (_, (r0, t0, _), (r1, _, _)) = split_run(l, &labels, sp, &bits, 9);
        for r in [r0, r1] {
            assert!(matches!(r, Err(Gkk12Error::Misuse(_))), "{sp:?}: {r:?}");
        }
        assert!(t0.events.is_empty(), "{sp:?}: refused before sending");
    }
}
