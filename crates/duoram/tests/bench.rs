//! The generic bench runner over 3P-Duoram: verified runs at odd sizes over `Z64` and `Fp`,
//! and a corrupted opening caught by the verification.
#![allow(clippy::unwrap_used)]

use doram_core::Entropy;
use doram_duoram::Duoram;
use doram_field::{Fp, Z64};
use doram_net::Shaping;
use doram_oram::bench::{BenchConfig, run_local};

fn cfg(n: usize, accesses: usize) -> BenchConfig {
    let mut c = BenchConfig::new(n, accesses);
    c.seed = 9;
    c.entropy = Entropy::InsecureSeed(4);
    c
}

#[test]
fn verified_runs_at_odd_sizes() {
    for (n, first, writes) in [(101, false, false), (1, true, false), (33, true, true)] {
        let mut c = cfg(n, 10);
        c.preprocess_first = first;
        c.writes_only = writes;
        let r = run_local::<Duoram<Z64>>(&c, Shaping::NONE).unwrap();
        assert!(r.verified);
        assert_eq!((r.protocol.as_str(), r.ops.as_str()), ("duoram", "public"));
        assert!(r.parties.iter().all(|p| p.preprocessing.bytes_sent > 0));
        // Init sends nothing of the memory per access: it is apart from the per-access bytes.
        let online: u64 = r.parties.iter().map(|p| p.online.bytes_sent).sum();
        assert_eq!(r.per_access.online.bytes, online as f64 / 10.0);
    }
    let r = run_local::<Duoram<Fp>>(&cfg(13, 6), Shaping::NONE).unwrap();
    assert_eq!(r.word, "Fp");
}

/// A bit flipped in the last frame P1 sends P2 — its opening of the results and the final
/// memory — makes P2's verification fail at the first result.
#[test]
fn a_corrupted_opening_fails_verification() {
    doram_oram::testkit::assert_bench_catches_a_corrupted_opening::<Duoram<Z64>>(&cfg(50, 6));
}
