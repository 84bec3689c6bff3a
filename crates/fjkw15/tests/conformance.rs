//! FJKW15 as a doram shared memory (`doram_fjkw15::backend`) through the conformance kit of
//! `doram-oram`: results against the plaintext oracle (after the shared load), transcripts
//! independent of secrets, batches and updates, misuse, faults.

use doram_fjkw15::backend::Fjkw15Memory;

doram_oram::oram_conformance!(
    fjkw15,
    |session, _me, n, seed| Fjkw15Memory::setup(session, n, seed),
    sizes = [1, 2, 5, 17, 100, 300],
    ops = 60
);

// The insecure dealt load (D and E open the memory) behind the same accesses: for the
// benchmarks only, checked here so that its figures are of a correct run.
doram_oram::oram_conformance!(
    fjkw15_insecure_dealt_load,
    |session, _me, n, seed| doram_fjkw15::backend::InsecureDealtFjkw15::setup(session, n, seed),
    sizes = [1, 17, 100],
    ops = 30
);

// Words of F_p (records of 128 bits, conversions mod p, addresses range-checked): the
// backend the three-party program machine runs on.
doram_oram::oram_conformance!(
    fjkw15_fp,
    |session, _me, n, seed| doram_fjkw15::backend::Fjkw15FpMemory::setup(session, n, seed),
    sizes = [1, 2, 5, 17, 100],
    ops = 40
);

doram_oram::oram_conformance!(
    fjkw15_fp_insecure_dealt_load,
    |session, _me, n, seed| {
        doram_fjkw15::backend::InsecureDealtFjkw15Oram::<doram_field::Fp>::setup(session, n, seed)
    },
    sizes = [17],
    ops = 20
);
