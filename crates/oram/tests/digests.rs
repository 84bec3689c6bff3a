//! The refactoring safety net for the linear scan: under fixed seeds, every party sends and
//! receives exactly the bytes recorded here (see `testkit::check_digests`).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_field::{Fp, Z64};
use doram_net::LocalMesh;
use doram_oram::testkit::{self, Plan};
use doram_oram::{LinearScanOram, OpVisibility};

fn digests<W: doram_oram::IntegerWord>(name: &str, n: usize, expected: [&str; 3]) {
    let plan: Plan<W> = testkit::standard_plan(OpVisibility::Hidden, n, 9, 0x5afe_7e57);
    let make = |s, _me, n, seed| LinearScanOram::<W>::setup(s, n, seed);
    let runs = testkit::execute(&make, &plan, LocalMesh::new(3).build()).map(Result::unwrap);
    testkit::check_digests(name, &runs, expected);
}

#[test]
fn linear_scan_messages_are_unchanged() {
    digests::<Z64>(
        "linear scan Z64 n = 37",
        37,
        [
            "65d191c2e8fbb4c0819bc0c118b7674192ac2f0e1f9e147449da121b1969aa06",
            "1a4fb778536877641d42d906931d13ca515bbcf3697c96fd27ff27abb414f189",
            "9f39d9136cfa555ec782382b3ad0ca5b8b63ef9aad485a42b5e380b93c8930fc",
        ],
    );
    digests::<Fp>(
        "linear scan Fp n = 300",
        300,
        [
            "8200d1784cd29226e6e525637621591ebf064347e7af8a643840d7c079bf877c",
            "74c9b2276cb7b28302c0208df7e26c99f36ab5b9cdcd3f0cdef33b547cf0acf0",
            "4e3d277ddb484cd2c1a8126fb77b01adecc4d6bf4483be1906f153879ce62dd0",
        ],
    );
}
