//! The frame limit Duoram derives from its size (`Duoram::max_message_bytes`) is the largest
//! message it sends: the conformance kit runs every instance under that limit (a larger message
//! would fail the run), and here, with a full preprocessing batch, Init and accesses, the
//! largest message sent is at least half the bound (or the bound is below 64 KiB, the
//! smallest queue a link has anyway).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_duoram::{BATCH_LEAVES, BATCH_OPS, Duoram};
use doram_field::{Fp, Z64};
use doram_net::LocalMesh;
use doram_oram::OpVisibility;
use doram_oram::testkit;
use doram_oram::testkit::Plan;

/// Below this a tighter bound would not lower what a peer can make a party buffer: a link's
/// queue holds at least 64 KiB.
const FLOOR: u64 = 64 << 10;

fn check<W: doram_duoram::DuoWord>(n: usize) {
    let h = n.next_power_of_two().trailing_zeros();
    let batch = (BATCH_LEAVES >> h).clamp(1, BATCH_OPS);
    let mut plan: Plan<W> =
        testkit::standard_plan(OpVisibility::Public, n, 12, testkit::test_seed());
    plan.preprocess = batch;
    let make = |s, _me, n, seed| Duoram::<W>::setup(s, n, seed).map_err(Into::into);
    let runs = testkit::execute(&make, &plan, LocalMesh::new(3).build())
        .map(|r| r.unwrap_or_else(|e| panic!("n = {n}: {e}")));
    let (got, bound) = (
        testkit::largest_message(&runs),
        Duoram::<W>::max_message_bytes(n) as u64,
    );
    assert!(got <= bound, "n = {n}: sent {got} > bound {bound}");
    assert!(
        bound <= (2 * got).max(FLOOR),
        "n = {n}: bound {bound} for at most {got}"
    );
}

#[test]
fn the_derived_frame_limit_is_tight() {
    for n in [1, 100, 4096, 10_000, 70_000] {
        check::<Z64>(n);
    }
    check::<Fp>(3000);
}
