//! The refactoring safety net for Duoram: under fixed seeds, every party sends and receives
//! exactly the bytes recorded here (see `doram_oram::testkit::check_digests`).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use doram_duoram::{DuoWord, Duoram};
use doram_field::{Fp, Z64};
use doram_net::LocalMesh;
use doram_oram::OpVisibility;
use doram_oram::testkit::{self, Plan};

fn digests<W: DuoWord>(name: &str, n: usize, expected: [&str; 3]) {
    let plan: Plan<W> = testkit::standard_plan(OpVisibility::Public, n, 13, 0x5afe_7e57);
    let make = |s, _me, n, seed| Duoram::<W>::setup(s, n, seed).map_err(Into::into);
    let runs = testkit::execute(&make, &plan, LocalMesh::new(3).build()).map(Result::unwrap);
    testkit::check_digests(name, &runs, expected);
}

#[test]
fn duoram_messages_are_unchanged() {
    digests::<Z64>(
        "duoram Z64 n = 1000",
        1000,
        [
            "e54aeb0d69ba80f2b6a3075f06805b122bb0e05b26cec2923aafa541c78a67b9",
            "3751703cbb1493d09ba7276262bd18c55a97ce743a32e9d08e9671372c46b83f",
            "5d94452bb8dc8dbd6ac8c3407cb869fd96b2e5ada6dd5aac15df67e2ff540e14",
        ],
    );
    digests::<Fp>(
        "duoram Fp n = 77",
        77,
        [
            "36532c1db62dd6e32d4461fd937c469b8a288800f2f67d4963f5417f944a8a67",
            "3a7a465e77552c134b709de471a941fddc96c18b9a5bfda38ebda3247f1251f4",
            "230bb81d32a6367ab3577ac7eeb4217e2cd6a74fccdf6013ea31245a6133a443",
        ],
    );
}
