//! Duoram through the conformance kit of `doram-oram`: results against the plaintext oracle,
//! transcripts independent of secrets, misuse, faults — over `Z64` (the paper's words) and `Fp`.

use doram_duoram::Duoram;
use doram_field::{Fp, Z64};

doram_oram::oram_conformance!(
    duoram_z64,
    |session, _me, n, seed| Duoram::<Z64>::setup(session, n, seed).map_err(Into::into),
    sizes = [1, 2, 3, 17, 100, 1024],
    ops = 300
);

doram_oram::oram_conformance!(
    duoram_fp,
    |session, _me, n, seed| Duoram::<Fp>::setup(session, n, seed).map_err(Into::into),
    sizes = [1, 5, 64, 100],
    ops = 60
);
