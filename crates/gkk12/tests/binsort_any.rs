//! Bin placement through phases whose bins may have any size (`binsort::place_bins`): every
//! real record lands in its label's bin and every other slot is an all-zero dummy, with and
//! without a last split; transcripts do not depend on the labels or the split bits; an
//! overflow is an error at both parties.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Placed, check_bins_of, place_records_bins};
use doram_gkk12::binsort::{Bins, Split, bin_phases, cost, phases};
use doram_gkk12::driver::Gkk12Error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn bins(log_bins: u32, slots: usize, bytes: usize) -> Bins {
    Bins {
        log_bins,
        slots,
        bytes,
        valid: 0,
        label: 1,
    }
}

fn labels(n: usize, log_bins: u32, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| rng.random_range(0..1u64 << log_bins))
        .collect()
}

fn open(p: &Placed) -> &doram_gkk12::shuffle::Shares {
    p.0.as_ref().unwrap()
}

#[test]
fn records_through_phases_of_any_size_land_in_their_labels_bin() {
    // 8000 records into 2^10 bins of 27: the phases before take bins of sizes that are not
    // powers of two.
    let (b, n) = (bins(10, 27, 11), 8000);
    let plan = bin_phases(n, &b);
    assert!(plan.len() > 1, "{plan:?}");
    assert!(plan.iter().any(|&(_, z)| !z.is_power_of_two()), "{plan:?}");
    assert_eq!(plan.last(), Some(&(10, 27)));
    let (la, lb) = (labels(n, 10, 1), labels(n, 10, 2));
    let (va, pa0, pa1) = place_records_bins(b, &la, None, 3);
    check_bins_of(&b, &va, &la, open(&pa0), open(&pa1));
    let (vb, pb0, pb1) = place_records_bins(b, &lb, None, 4);
    check_bins_of(&b, &vb, &lb, open(&pb0), open(&pb1));
    assert_eq!(pa0.1, pb0.1, "P0's transcript depends on the labels");
    assert_eq!(pa1.1, pb1.1, "P1's transcript depends on the labels");
}

/// With a split: every bin's first `edge` slots hold only records whose split bit is clear,
/// its last `edge` only records whose bit is set, and the transcripts do not depend on the
/// labels or the bits.
#[test]
fn bins_of_any_size_split_with_each_side_at_its_end() {
    let (b, n) = (bins(5, 45, 10), 300);
    let sp = Split { bit: 70, edge: 7 };
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    let mut transcripts = Vec::new();
    for seed in [6, 7] {
        let l = labels(n, 5, seed);
        let bits: Vec<bool> = (0..n).map(|_| rng.random()).collect();
        let (v, p0, p1) = place_records_bins(b, &l, Some((sp, &bits)), 8);
        let (s0, s1) = (open(&p0), open(&p1));
        check_bins_of(&b, &v, &l, s0, s1);
        let (z, rb) = (b.slots, b.bytes);
        let opened: Vec<u8> = s0.data.iter().zip(&s1.data).map(|(x, y)| x ^ y).collect();
        for (k, e) in opened.chunks_exact(rb).enumerate() {
            if e[0] & 1 == 0 {
                continue;
            }
            let (slot, bit) = (k % z, (e[sp.bit / 8] >> (sp.bit % 8)) & 1 == 1);
            assert!(
                slot >= sp.edge || !bit,
                "slot {slot}: a record with the bit set"
            );
            assert!(
                slot < z - sp.edge || bit,
                "slot {slot}: a record with the bit clear"
            );
        }
        transcripts.push((p0.1, p1.1));
    }
    assert!(
        transcripts[0] == transcripts[1],
        "transcripts depend on the data"
    );
}

#[test]
fn an_overflow_of_bins_of_any_size_is_an_error_at_both_parties() {
    // 600 records all labelled 3: every phase's bin 3 gets all of them.
    let b = bins(6, 27, 9);
    let (_, p0, p1) = place_records_bins(b, &[3; 600], None, 9);
    for r in [p0.0, p1.0] {
        assert!(
            matches!(r, Err(Gkk12Error::LoadOverflow { tree: 0 })),
            "{r:?}"
        );
    }
}

/// At the sorted load's size the phases of any size cost less than those of powers of two
/// into the same bins, by the measure both minimise.
#[test]
fn phases_of_any_size_cost_less_than_powers_of_two() {
    let n = 1 << 20;
    let any = bins(17, 64, 1);
    let pow2 = doram_gkk12::binsort::Layout {
        log_bins: 17,
        log_slots: 6,
        bytes: 1,
        valid: 0,
        label: 1,
    };
    let pow2_plan = phases(n, &pow2);
    assert_eq!(pow2_plan.last(), Some(&(17, 6)));
    let plan = bin_phases(n, &any);
    assert_eq!(plan.last(), Some(&(17, 64)));
    assert!(plan.iter().any(|&(_, z)| !z.is_power_of_two()), "{plan:?}");
    // The powers of two's count: per stage, every entry through two Beneš networks on blocks
    // of 2Z, 4 log₂(2Z) − 2 switch ends each ((12, 512), (15, 128), (17, 64): 1.77·10^9).
    let mut prev = 0;
    let pow2_cost: f64 = pow2_plan
        .iter()
        .map(|&(level, log_slots)| {
            let stages = f64::from(level - std::mem::replace(&mut prev, level));
            stages * f64::from(1u32 << (level + log_slots)) * f64::from(4 * (log_slots + 1) - 2)
        })
        .sum();
    let c = cost(n, &any, false);
    assert!(c < 0.85 * pow2_cost, "{c:e} against {pow2_cost:e}");
}
