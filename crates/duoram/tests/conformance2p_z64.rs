//! 2P-Duoram on 64-bit words (`Duoram2Z64`) through the conformance kit of `doram-oram`, two
//! parties: results against the plaintext oracle on odd and power-of-two sizes, and
//! transcripts independent of the memory, addresses, values and (hidden) operation types.

use doram_duoram::two_party::Duoram2Z64;
use doram_mpc::testkit::test_seed;
use doram_oram::testkit::{run_conformance_for, run_leakage_for};

fn make(
    session: doram_net::Session,
    _me: doram_core::PartyId,
    n: usize,
    seed: doram_core::Seed,
) -> Result<Duoram2Z64, doram_oram::OramError> {
    Duoram2Z64::setup(session, n, seed).map_err(Into::into)
}

#[test]
fn conformance() {
    let seed = test_seed();
    for (n, ops) in [(1usize, 12usize), (6, 24), (100, 24), (1024, 12)] {
        let runs = run_conformance_for(2, make, n, ops, seed);
        assert_eq!(runs.len(), 2);
    }
}

#[test]
fn leakage() {
    let seed = test_seed();
    run_leakage_for(2, make, 37, 12, seed);
}
