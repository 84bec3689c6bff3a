//! The frame limit Ramen derives from its parameters (`Params::max_message_bytes`) is the
//! largest message it sends: the conformance kit runs every instance under that limit (a larger
//! message would fail the run), and here, over whole epochs with write-back and refresh, the
//! largest message sent is at least half the bound (or the bound is below 64 KiB, the
//! smallest queue a link has anyway).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_oram::testkit::{self, run_conformance, test_seed};
use doram_ramen::{Params, Ramen};

fn make(
    session: doram_net::Session,
    _me: doram_core::PartyId,
    n: usize,
    seed: doram_core::Seed,
) -> Result<Ramen, doram_oram::OramError> {
    Ramen::setup(session, n, seed).map_err(Into::into)
}

/// Below this a tighter bound would not lower what a peer can make a party buffer: a link's
/// queue holds at least 64 KiB.
const FLOOR: u64 = 64 << 10;

#[test]
fn the_derived_frame_limit_is_tight() {
    let seed = test_seed();
    for n in [16, 100, 1000, 4096, 10_000] {
        let p = Params::new(n).unwrap();
        let runs = run_conformance(make, n, 2 * p.epoch() + 3, seed);
        let (got, bound) = (
            testkit::largest_message(&runs),
            p.max_message_bytes() as u64,
        );
        assert!(got <= bound, "n = {n}: sent {got} > bound {bound}");
        assert!(
            bound <= (2 * got).max(FLOOR),
            "n = {n}: bound {bound} for at most {got}"
        );
    }
}
