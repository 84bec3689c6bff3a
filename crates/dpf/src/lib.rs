//! Distributed point functions for doram: two single-point constructions (Half-Tree and BGI) and
//! a multi-point DPF from cuckoo hashing.
//!
//! Brief overview: a (2-party) DPF for the point function `f(x) = β·[x = α]` on the domain
//! `[0, n)` with outputs in a [`Group`] `G` consists of two keys; each key alone hides `α` and `β`,
//! and the two evaluations at any `x` are additive shares of `f(x)`:
//! `eval(k0, x) + eval(k1, x) = f(x)`.
//!
//! * [`HalfTree`] ([`halftree`]): the Half-Tree DPF of Guo, Yang, Wang, Zhang, Xie, Liu, Zhao
//!   (ePrint 2022/1431, Fig. 8): one circular correlation-robust hash call per tree node, one
//!   128-bit correction word per level. The fastest full-domain evaluation; the default.
//! * [`Bgi`] ([`bgi`]): the classic tree DPF of Boyle, Gilboa, Ishai (CCS 2016, Fig. 1) with
//!   control bits and a length-doubling PRG made of two fixed-key AES hash calls.
//! * [`CuckooMpDpf`] ([`mpdpf`]): the multi-point DPF of Schoppmann, Gascón, Reichert, Raykova
//!   (CCS 2019, §5) over either single-point DPF.
//!
//! Domain sizes need not be powers of two (the tree has depth `⌈log2 n⌉` and only `[0, n)` is
//! evaluated); `n = 1` is plain additive sharing of `β`. Keys carry their party ([`TwoParty`]) and
//! serialize to raw bytes whose length is fixed by the domain size and `G` (see each
//! construction's `key_size`); decoding takes the expected domain size from the protocol and
//! returns [`CodecError`] on any mismatch.
//!
//! Full-domain evaluation expands the top of the tree breadth-first and then each subtree of
//! 2^10 nodes breadth-first in two small buffers that stay in L1/L2, hashing 8 blocks per AES
//! call and writing outputs straight into the result slice; `eval_all_par` hands the subtrees to
//! rayon. [`SinglePointDpf::stream`] evaluates in order, one small batch at a time.

pub mod bgi;
mod convert;
pub mod halftree;
pub mod levels;
pub mod mpdpf;
mod tree;

pub use bgi::{Bgi, BgiKey};
pub use halftree::{HalfTree, HalfTreeKey};
pub use levels::HalfTreeLevels;
pub use mpdpf::{BgiMpDpf, CuckooMpDpf, HalfTreeMpDpf, MpDpfKey};
pub use tree::{LeafStream, STREAM_BATCH_BITS, StreamScratch};

use doram_core::{CodecError, PartyId, Seed};
use doram_field::Group;
use rand_core::{CryptoRng, RngCore};
use std::fmt::Debug;

/// The holder of one of the two keys of a DPF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TwoParty {
    /// The holder of the first key (outputs are added).
    P0,
    /// The holder of the second key (outputs are negated).
    P1,
}

impl TwoParty {
    /// Both parties, in order.
    pub const BOTH: [TwoParty; 2] = [TwoParty::P0, TwoParty::P1];

    /// 0 or 1.
    pub const fn index(self) -> usize {
        match self {
            TwoParty::P0 => 0,
            TwoParty::P1 => 1,
        }
    }

    /// The other party.
    pub const fn other(self) -> TwoParty {
        match self {
            TwoParty::P0 => TwoParty::P1,
            TwoParty::P1 => TwoParty::P0,
        }
    }

    /// The key holder that a session party plays, given the session's (ordered) pair of key
    /// holders; `None` if `me` is neither.
    pub fn of(me: PartyId, holders: [PartyId; 2]) -> Option<TwoParty> {
        if me == holders[0] {
            Some(TwoParty::P0)
        } else if me == holders[1] {
            Some(TwoParty::P1)
        } else {
            None
        }
    }

    /// The encoding byte (0 or 1).
    pub(crate) const fn to_byte(self) -> u8 {
        self.index() as u8
    }

    /// Decodes the party byte of a key.
    pub(crate) fn from_byte(b: u8) -> Result<TwoParty, CodecError> {
        match b {
            0 => Ok(TwoParty::P0),
            1 => Ok(TwoParty::P1),
            _ => Err(CodecError::OutOfRange {
                what: "DPF key party byte is neither 0 nor 1",
            }),
        }
    }
}

/// What every DPF key offers besides evaluation.
pub trait DpfKey: Clone + Debug + Send + Sync {
    /// Which of the two keys this is.
    fn party(&self) -> TwoParty;
    /// The domain size `n`; the key evaluates on `[0, n)`.
    fn domain_size(&self) -> usize;
    /// The length of [`to_bytes`](Self::to_bytes).
    fn size_bytes(&self) -> usize;
    /// The key as raw bytes (the construction's `from_bytes` reads it back).
    fn to_bytes(&self) -> Vec<u8>;
}

/// A two-party distributed point function with outputs in `G`.
///
/// Implemented by the marker types [`HalfTree`] and [`Bgi`] for every [`Group`].
pub trait SinglePointDpf<G: Group> {
    /// One party's key.
    type Key: DpfKey + PartialEq + Eq;

    /// The serialized key length for a domain of `domain_size` points.
    fn key_size(domain_size: usize) -> usize;

    /// Keys for `f(x) = beta·[x = alpha]` on `[0, domain_size)`, with fresh randomness from
    /// `rng` (two seeds, then [`gen_with_seeds`](Self::gen_with_seeds)).
    ///
    /// # Panics
    /// If `domain_size` is 0 or above 2^62, or `alpha ≥ domain_size` (caller bugs, not peer
    /// input).
    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        domain_size: usize,
        alpha: usize,
        beta: G,
        rng: &mut R,
    ) -> (Self::Key, Self::Key) {
        let seeds = [Seed::random(rng), Seed::random(rng)];
        Self::gen_with_seeds(domain_size, alpha, beta, seeds)
    }

    /// The deterministic twin of [`gen_keys`](Self::gen_keys): all randomness comes from `seeds`, which
    /// must be uniformly random and secret for the keys to be secure (use it for known-answer
    /// tests and for dealers that derive seeds themselves).
    ///
    /// # Panics
    /// As [`gen_keys`](Self::gen_keys).
    fn gen_with_seeds(
        domain_size: usize,
        alpha: usize,
        beta: G,
        seeds: [Seed; 2],
    ) -> (Self::Key, Self::Key);

    /// This party's share of `f(x)`.
    ///
    /// # Panics
    /// If `x ≥ domain_size`.
    fn eval(key: &Self::Key, x: usize) -> G;

    /// This party's shares of `f(0), …, f(n − 1)` written into `out`.
    ///
    /// # Panics
    /// If `out.len() != domain_size`.
    fn eval_all_into(key: &Self::Key, out: &mut [G]);

    /// This party's shares of `f(0), …, f(n − 1)`.
    fn eval_all(key: &Self::Key) -> Vec<G> {
        let mut out = vec![G::ZERO; key.domain_size()];
        Self::eval_all_into(key, &mut out);
        out
    }

    /// [`eval_all_into`](Self::eval_all_into) with the subtrees spread over rayon's thread pool.
    ///
    /// # Panics
    /// If `out.len() != domain_size`.
    fn eval_all_par_into(key: &Self::Key, out: &mut [G]);

    /// [`eval_all`](Self::eval_all) with the subtrees spread over rayon's thread pool.
    fn eval_all_par(key: &Self::Key) -> Vec<G> {
        let mut out = vec![G::ZERO; key.domain_size()];
        Self::eval_all_par_into(key, &mut out);
        out
    }

    /// In-order evaluation from output `start` on, one aligned batch of at most
    /// `2^`[`STREAM_BATCH_BITS`] outputs at a time (see [`LeafStream`]): for consumers that
    /// interleave many keys or cannot hold the whole domain.
    fn stream(key: &Self::Key, start: usize) -> LeafStream<'_, G>;

    /// Decodes a key for a domain of `domain_size` points (the size comes from the protocol).
    fn key_from_bytes(bytes: &[u8], domain_size: usize) -> Result<Self::Key, CodecError>;
}

/// A two-party DPF for functions that are non-zero on several points.
pub trait MultiPointDpf<G: Group> {
    /// One party's key.
    type Key: DpfKey;

    /// Keys for `f(x) = Σ_i values[i]·[x = points[i]]` on `[0, domain_size)`. The points must be
    /// distinct; the number of points is public (it fixes the key size).
    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        domain_size: usize,
        points: &[usize],
        values: &[G],
        rng: &mut R,
    ) -> Result<(Self::Key, Self::Key), DpfError>;

    /// The deterministic twin of [`gen_keys`](Self::gen_keys): all randomness is expanded from `seed`.
    fn gen_with_seed(
        domain_size: usize,
        points: &[usize],
        values: &[G],
        seed: Seed,
    ) -> Result<(Self::Key, Self::Key), DpfError>;

    /// This party's share of `f(x)`.
    ///
    /// # Panics
    /// If `x ≥ domain_size`.
    fn eval(key: &Self::Key, x: usize) -> G;

    /// This party's shares of `f` on the whole domain, written into `out`.
    ///
    /// # Panics
    /// If `out.len() != domain_size`.
    fn eval_all_into(key: &Self::Key, out: &mut [G]);

    /// This party's shares of `f` on the whole domain.
    fn eval_all(key: &Self::Key) -> Vec<G> {
        let mut out = vec![G::ZERO; key.domain_size()];
        Self::eval_all_into(key, &mut out);
        out
    }

    /// [`eval_all`](Self::eval_all) using rayon's thread pool.
    fn eval_all_par(key: &Self::Key) -> Vec<G>;

    /// Decodes a key for `num_points` points on a domain of `domain_size` points (both from the
    /// protocol).
    fn key_from_bytes(
        bytes: &[u8],
        domain_size: usize,
        num_points: usize,
    ) -> Result<Self::Key, CodecError>;
}

/// Why keys could not be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DpfError {
    /// `points` and `values` differ in length.
    #[error("{points} points but {values} values")]
    LengthMismatch {
        /// Number of points.
        points: usize,
        /// Number of values.
        values: usize,
    },
    /// A point is outside the domain.
    #[error("point {point} is outside the domain of {domain_size} points")]
    PointOutOfRange {
        /// The point.
        point: usize,
        /// The domain size.
        domain_size: usize,
    },
    /// A point occurs twice.
    #[error("point {point} occurs more than once")]
    DuplicatePoint {
        /// The point.
        point: usize,
    },
    /// The domain is empty or too large for the construction.
    #[error("unsupported domain size {domain_size}")]
    BadDomain {
        /// The domain size.
        domain_size: usize,
    },
    /// Cuckoo hashing failed with every hash key tried (probability about 2^−40 per try).
    #[error("cuckoo hashing failed {attempts} times")]
    CuckooFailed {
        /// Hash keys tried.
        attempts: usize,
    },
}

/// The largest supported domain size (2^62 on 64-bit targets; keeps every shift in range).
pub const MAX_DOMAIN: usize = 1 << (usize::BITS - 2);

/// Tree depth for a domain of `n ≥ 1` points: `⌈log2 n⌉`.
pub(crate) fn depth(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

pub(crate) fn check_gen_args(domain_size: usize, alpha: usize) {
    assert!(
        (1..=MAX_DOMAIN).contains(&domain_size),
        "DPF domain size must be in 1..=2^62, got {domain_size}"
    );
    assert!(
        alpha < domain_size,
        "DPF point {alpha} outside domain of {domain_size} points"
    );
}

/// Reads `N` bytes at `*pos` and advances it (the caller checked the total length).
pub(crate) fn take<const N: usize>(bytes: &[u8], pos: &mut usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[*pos..*pos + N]);
    *pos += N;
    a
}

pub(crate) fn check_len(bytes: &[u8], expected: usize) -> Result<(), CodecError> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(CodecError::WrongLength {
            expected,
            got: bytes.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths() {
        assert_eq!(depth(1), 0);
        assert_eq!(depth(2), 1);
        assert_eq!(depth(3), 2);
        assert_eq!(depth(4), 2);
        assert_eq!(depth(5), 3);
        assert_eq!(depth(1 << 20), 20);
        assert_eq!(depth((1 << 20) + 1), 21);
    }

    #[test]
    fn parties() {
        assert_eq!(TwoParty::P0.other(), TwoParty::P1);
        assert_eq!(TwoParty::from_byte(1), Ok(TwoParty::P1));
        assert!(TwoParty::from_byte(2).is_err());
        assert_eq!(
            TwoParty::of(PartyId::P2, [PartyId::P0, PartyId::P2]),
            Some(TwoParty::P1)
        );
        assert_eq!(TwoParty::of(PartyId::P1, [PartyId::P0, PartyId::P2]), None);
    }
}
