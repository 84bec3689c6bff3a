//! Where a party's secret randomness comes from.
//!
//! Every secret a party holds — its shares, masks, DPF seeds, triples and the pairwise PRG seeds
//! it contributes — derives from one local [`Seed`]. [`Entropy::Os`], the default, draws that
//! seed from the operating system for every run, so no other party and nobody reading a command
//! line can rebuild it. [`Entropy::InsecureSeed`] derives it from a public number instead, so
//! that tests and benchmarks can be replayed exactly; its name says what it is, and every tool
//! that offers it warns and records the choice in its output.

use std::fmt;

use rand_core::{OsRng, TryRngCore};
use serde::{Deserialize, Serialize};

use crate::{PartyId, Seed};

/// What a benchmark's report says of its input shares when every party derives them from the
/// public workload seed (a synthetic dealer): they protect nothing.
pub const SYNTHETIC_DEALER: &str = "synthetic dealer, not secure";

/// The source of a party's secret randomness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Entropy {
    /// A fresh seed from the operating system's entropy source for every call: the secure
    /// choice, and the default everywhere.
    #[default]
    Os,
    /// **Insecure.** Every party's seed is derived from this public number (and the party and
    /// a domain label). Anyone who knows it can rebuild every party's randomness and so every
    /// secret of the run. For tests and reproducible benchmarks only.
    InsecureSeed(u64),
}

impl Entropy {
    /// `Some(n)` gives [`Entropy::InsecureSeed`]`(n)`, `None` gives [`Entropy::Os`]: how an
    /// optional `--insecure-seed N` flag maps to a source.
    pub fn from_insecure_seed(seed: Option<u64>) -> Entropy {
        seed.map_or(Entropy::Os, Entropy::InsecureSeed)
    }

    /// Whether the randomness is derived from a public number.
    pub fn is_insecure(self) -> bool {
        matches!(self, Entropy::InsecureSeed(_))
    }

    /// The seed of party `me` for the purpose named by `domain` (e.g. `"program"`): fresh OS
    /// entropy for [`Entropy::Os`]; for [`Entropy::InsecureSeed`] a fixed function of the
    /// number, the party and the domain, distinct across parties and domains.
    ///
    /// # Panics
    /// If the operating system cannot supply entropy (`getrandom` fails), which on a running
    /// system does not happen; going on without it would be worse.
    pub fn party_seed(self, me: PartyId, domain: &str) -> Seed {
        match self {
            Entropy::Os => Seed::from_os_entropy(),
            Entropy::InsecureSeed(n) => insecure_seed(n, me, domain),
        }
    }

    /// The warning a tool prints (to standard error) when it runs with this source, if any.
    pub fn warning(self) -> Option<String> {
        match self {
            Entropy::Os => None,
            Entropy::InsecureSeed(n) => Some(format!(
                "warning: --insecure-seed {n}: every party's secret randomness is derived from \
                 this public number; anyone who knows it can recover every secret of the run. \
                 Use it only for tests and reproducible benchmarks."
            )),
        }
    }
}

impl fmt::Display for Entropy {
    /// `os` or `insecure-seed N`, as reports and JSON outputs record it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entropy::Os => f.write_str("os"),
            Entropy::InsecureSeed(n) => write!(f, "insecure-seed {n}"),
        }
    }
}

impl Seed {
    /// A seed from the operating system's entropy source.
    ///
    /// # Panics
    /// If the operating system cannot supply entropy (see [`Entropy::party_seed`]).
    pub fn from_os_entropy() -> Seed {
        let mut s = [0u8; 16];
        OsRng
            .try_fill_bytes(&mut s)
            .expect("the operating system's entropy source failed");
        Seed(s)
    }
}

/// `n` (8 bytes) ‖ party index (1 byte) ‖ 7 bytes of the FNV-1a hash of `domain`.
fn insecure_seed(n: u64, me: PartyId, domain: &str) -> Seed {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in domain.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[8] = me.index() as u8;
    s[9..].copy_from_slice(&h.to_le_bytes()[..7]);
    Seed(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_seeds_are_fresh_per_call_and_party() {
        let a = Entropy::Os.party_seed(PartyId::P0, "x");
        let b = Entropy::Os.party_seed(PartyId::P0, "x");
        let c = Entropy::Os.party_seed(PartyId::P1, "x");
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert!(!Entropy::Os.is_insecure());
        assert!(Entropy::Os.warning().is_none());
        assert_eq!(Entropy::default(), Entropy::Os);
    }

    #[test]
    fn insecure_seeds_replay_and_differ_by_party_and_domain() {
        let e = Entropy::from_insecure_seed(Some(5));
        assert!(e.is_insecure());
        assert_eq!(e.to_string(), "insecure-seed 5");
        assert!(e.warning().is_some_and(|w| w.contains("insecure-seed 5")));
        let s = |p, d| e.party_seed(p, d);
        assert_eq!(s(PartyId::P0, "a"), s(PartyId::P0, "a"));
        assert_ne!(s(PartyId::P0, "a"), s(PartyId::P1, "a"));
        assert_ne!(s(PartyId::P0, "a"), s(PartyId::P0, "b"));
        assert_ne!(
            s(PartyId::P0, "a"),
            Entropy::InsecureSeed(6).party_seed(PartyId::P0, "a")
        );
        assert_eq!(Entropy::from_insecure_seed(None), Entropy::Os);
    }
}
