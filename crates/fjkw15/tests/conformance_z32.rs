//! FJKW15 over words of Z/2^32 (4-byte records, the authors' record size) through the
//! conformance kit of `doram-oram`: results against the plaintext oracle after the shared
//! load, transcripts independent of secrets, misuse, faults; and the insecure dealt load the
//! benchmarks use.

use doram_field::Z32;
use doram_fjkw15::backend::{Fjkw15Z32Memory, InsecureDealtFjkw15Oram};

doram_oram::oram_conformance!(
    fjkw15_z32,
    |session, _me, n, seed| Fjkw15Z32Memory::setup(session, n, seed),
    sizes = [1, 2, 5, 17, 100],
    ops = 50
);

doram_oram::oram_conformance!(
    fjkw15_z32_insecure_dealt_load,
    |session, _me, n, seed| InsecureDealtFjkw15Oram::<Z32>::setup(session, n, seed),
    sizes = [17, 100],
    ops = 30
);

/// A Z/2^32 memory holds at most 2^32 words (an address is one word); the parameters say so
/// before anything is set up.
#[test]
fn z32_memories_stop_at_2_to_the_32_words() {
    assert!(Fjkw15Z32Memory::params_for(1 << 24, 32).is_ok());
    assert!(Fjkw15Z32Memory::params_for(1 << 32, 32).is_ok());
    assert!(Fjkw15Z32Memory::params_for((1 << 32) + 1, 32).is_err());
}
