//! The refactoring safety net for Ramen: under fixed seeds, every party sends and receives
//! exactly the bytes recorded here (see `doram_oram::testkit::check_digests`).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_net::LocalMesh;
use doram_oram::OpVisibility;
use doram_oram::testkit::{self, Plan};
use doram_ramen::{Params, Ramen};

#[test]
fn ramen_messages_are_unchanged() {
    // Two epochs and a bit at n = 300: write-back, refresh and a Get Memory mid-epoch.
    let n = 300;
    let ops = 2 * Params::new(n).unwrap().epoch() + 3;
    let plan: Plan<doram_field::Fp> =
        testkit::standard_plan(OpVisibility::Hidden, n, ops, 0x5afe_7e57);
    let make = |s, _me, n, seed| Ramen::setup(s, n, seed).map_err(Into::into);
    let runs = testkit::execute(&make, &plan, LocalMesh::new(3).build()).map(Result::unwrap);
    testkit::check_digests(
        "ramen n = 300",
        &runs,
        [
            "89e6b2c1a6294a1bb703353f47542c9cfece965379998feec0de215eb406a326",
            "0b1bed826966c79eb06f060601fd16222acdce0fdf46e6b194917837f5ae6fe9",
            "21dfcc05ca767464c0ba68232b2766518bb83300b3466fa2d7b0e6efb200bf9d",
        ],
    );
}
