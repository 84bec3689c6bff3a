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
            "ab9a007b985a664a613642f1117a58fa3e1b01ce98368663597899b5444221d6",
            "bcebdf4f55df7382802b08192973cfa4c8c930f2e5075ecbe2f5460b56ccdfdd",
            "2565e9d75e2106712629af0f359258be5245cac2f92465a94432d0152d7205d9",
        ],
    );
    digests::<Fp>(
        "duoram Fp n = 77",
        77,
        [
            "4e5a4c00993f6c41b827e2ccf0a51bd93bbd90dad7c436e2c00831206a2557d9",
            "6a49f68673f4270453f78aef94e1d53dcdbecb3d28e467941cc440a1c12bfe97",
            "84134015c81350fd2dfff6483d5b2beebdcbfea8870a7761ee6d732aba7639de",
        ],
    );
}
