//! The frame limit Ramen derives from its parameters (`Params::max_message_bytes`) is the
//! largest message it sends: the conformance kit runs every instance under that limit (a larger
//! message would fail the run), and here, over whole epochs with write-back and refresh, and a
//! Get Memory with one access into an epoch (the write-back key of one point has the most
//! cuckoo buckets) or a few, the largest message sent is at least half the bound (or the bound is below 64 KiB, the
//! smallest queue a link has anyway).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_oram::testkit::{self, run_conformance, test_seed};
use doram_ramen::{Params, Ramen};

/// Below this a tighter bound would not lower what a peer can make a party buffer: a link's
/// queue holds at least 64 KiB.
const FLOOR: u64 = 64 << 10;

#[test]
fn the_derived_frame_limit_is_tight() {
    let seed = test_seed();
    for n in [16, 100, 300, 1000, 4096, 10_000] {
        let p = Params::new(n).unwrap();
        for ops in [p.epoch() + 1, 2 * p.epoch() + 3] {
            let make = |s, _me, n, seed| Ramen::setup(s, n, seed).map_err(Into::into);
            let runs = run_conformance(make, n, ops, seed);
            let (got, bound) = (
                testkit::largest_message(&runs),
                p.max_message_bytes() as u64,
            );
            assert!(
                got <= bound,
                "n = {n}, {ops} ops: sent {got} > bound {bound}"
            );
            assert!(
                bound <= (2 * got).max(FLOOR),
                "n = {n}, {ops} ops: bound {bound} for at most {got}"
            );
        }
    }
}
