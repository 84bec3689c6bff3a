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
            "f46c731fa8bea5ce5f4d10b0714358a0ef401211010d11004ef76820a5e50f43",
            "ad9ce027e94baed8f608ee4ca1850713fc0dcb130e8f68815dad055ee106c846",
            "3d374cd77b1e1c358db7565e1b67471beee39855cb804bec7e63115c405b18fa",
        ],
    );
}
