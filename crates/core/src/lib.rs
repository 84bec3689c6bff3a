//! Shared vocabulary of the doram workspace: party identities, seeds and the codec error.
//!
//! Brief overview: [`PartyId`] names a party of a 2–4 party session (never a bare integer),
//! [`Seed`] is a 128-bit PRG seed, and [`CodecError`] is what every decoder of peer-supplied bytes
//! returns instead of panicking.
//!
//! [`Entropy`] says where a party's secret randomness comes from: the operating system (the
//! default) or, for tests and reproducible benchmarks only, a public number.
//!
//! This crate has no I/O and no cryptography beyond reading OS entropy; everything else depends
//! on it.

use serde::{Deserialize, Serialize};
use std::fmt;

mod entropy;
pub mod wire;
pub use entropy::{Entropy, SYNTHETIC_DEALER};

/// Identity of one party in a session of at most [`PartyId::MAX_PARTIES`] parties.
///
/// Ids are parsed once (from a config file, a command line or a handshake) with
/// [`PartyId::try_from`] and are typed from then on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PartyId {
    /// Party 0.
    P0,
    /// Party 1.
    P1,
    /// Party 2.
    P2,
    /// Party 3 (four-party sessions only, e.g. three PIR servers plus a client).
    P3,
}

impl PartyId {
    /// The largest number of parties a session may have.
    pub const MAX_PARTIES: usize = 4;
    /// All ids, in order.
    pub const ALL: [PartyId; 4] = [PartyId::P0, PartyId::P1, PartyId::P2, PartyId::P3];

    /// Position of the party, `0..MAX_PARTIES`.
    pub const fn index(self) -> usize {
        match self {
            PartyId::P0 => 0,
            PartyId::P1 => 1,
            PartyId::P2 => 2,
            PartyId::P3 => 3,
        }
    }

    /// The first `n` ids (`n ≤ 4`), e.g. the members of an `n`-party session.
    ///
    /// # Panics
    /// If `n > 4`; `n` is a protocol constant, never peer input.
    pub fn first(n: usize) -> &'static [PartyId] {
        assert!(n <= Self::MAX_PARTIES, "at most four parties");
        &Self::ALL[..n]
    }

    /// The id at `index`, if it is below `n_parties` (≤ 4).
    pub fn from_index(index: usize, n_parties: usize) -> Result<PartyId, CodecError> {
        if index < n_parties.min(Self::MAX_PARTIES) {
            Ok(Self::ALL[index])
        } else {
            Err(CodecError::BadPartyId {
                got: index as u64,
                n_parties,
            })
        }
    }

    /// The successor of this party in the ring of `n` parties (`P_{i+1 mod n}`).
    pub fn next(self, n: usize) -> PartyId {
        Self::ALL[(self.index() + 1) % n]
    }

    /// The predecessor of this party in the ring of `n` parties (`P_{i-1 mod n}`).
    pub fn prev(self, n: usize) -> PartyId {
        Self::ALL[(self.index() + n - 1) % n]
    }
}

impl TryFrom<u8> for PartyId {
    type Error = CodecError;
    fn try_from(v: u8) -> Result<Self, CodecError> {
        PartyId::from_index(usize::from(v), Self::MAX_PARTIES)
    }
}

impl fmt::Display for PartyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.index())
    }
}

/// A 128-bit seed for a PRG or a DPF tree node.
///
/// `Debug` does not print the bytes: seeds are secrets. A party's local seed (the one all of
/// its randomness derives from) must be uniform and known to nobody else: take it from
/// [`Seed::from_os_entropy`] or [`Entropy::party_seed`].
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Seed(pub [u8; 16]);

impl Seed {
    /// A fresh uniformly random seed.
    pub fn random<R: rand_core::RngCore + rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Seed {
        let mut s = [0u8; 16];
        rng.fill_bytes(&mut s);
        Seed(s)
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(..)")
    }
}

/// Why bytes received from a peer (or read from a file) could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input had the wrong length for the expected element count.
    #[error("wrong length: expected {expected} bytes, got {got}")]
    WrongLength {
        /// Bytes expected.
        expected: usize,
        /// Bytes received.
        got: usize,
    },
    /// A value was out of its range (e.g. a field element ≥ p).
    #[error("value out of range: {what}")]
    OutOfRange {
        /// What was out of range.
        what: &'static str,
    },
    /// A party id outside the session.
    #[error("party id {got} is not in a session of {n_parties} parties")]
    BadPartyId {
        /// The id received.
        got: u64,
        /// Parties in the session.
        n_parties: usize,
    },
    /// A structured (postcard) message did not parse.
    #[error("malformed message: {0}")]
    Malformed(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_neighbours() {
        assert_eq!(PartyId::P0.next(3), PartyId::P1);
        assert_eq!(PartyId::P2.next(3), PartyId::P0);
        assert_eq!(PartyId::P0.prev(3), PartyId::P2);
        assert_eq!(PartyId::P1.prev(2), PartyId::P0);
        assert_eq!(PartyId::P3.next(4), PartyId::P0);
    }

    #[test]
    fn ids_parse_and_bound() {
        assert_eq!(PartyId::try_from(2u8), Ok(PartyId::P2));
        assert!(PartyId::try_from(4u8).is_err());
        assert!(PartyId::from_index(2, 2).is_err());
        assert_eq!(PartyId::first(3).len(), 3);
        assert_eq!(format!("{:?}", Seed([7; 16])), "Seed(..)");
    }
}
