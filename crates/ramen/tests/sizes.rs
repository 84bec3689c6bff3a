//! Larger memories: one conformance run each for n = 1024 and n = 4096 (two epochs and a bit,
//! random mixed workload, checked against the plaintext oracle), and an odd size whose stash
//! is not a power of two.

use doram_oram::testkit::{run_conformance, test_seed};
use doram_ramen::Ramen;

fn make(
    session: doram_net::Session,
    _me: doram_core::PartyId,
    n: usize,
    seed: doram_core::Seed,
) -> Result<Ramen, doram_oram::OramError> {
    Ramen::setup(session, n, seed).map_err(Into::into)
}

#[test]
fn n_1024_over_two_epochs() {
    run_conformance(make, 1024, 2 * 32 + 7, test_seed());
}

#[test]
fn n_4096_over_two_epochs() {
    run_conformance(make, 4096, 2 * 64 + 3, test_seed());
}

#[test]
fn n_3000_odd_stash() {
    // s = round(√3000) = 55.
    run_conformance(make, 3000, 2 * 55 + 1, test_seed());
}
