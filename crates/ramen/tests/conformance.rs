//! The `doram-oram` kit against Ramen: conformance with the plaintext oracle over several
//! epochs (n = 16, 17, 128, 1000), transcript shapes independent of the secrets (reads vs
//! writes, addresses, values), misuse, and faults in the middle of an access.

use doram_ramen::Ramen;

doram_oram::oram_conformance!(
    ramen,
    |session, _me, n, seed| Ramen::setup(session, n, seed).map_err(Into::into),
    sizes = [16, 17, 128],
    ops = 60
);

doram_oram::oram_conformance!(
    ramen_1000,
    |session, _me, n, seed| Ramen::setup(session, n, seed).map_err(Into::into),
    sizes = [1000],
    ops = 100
);
