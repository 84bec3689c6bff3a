//! [`TwopcError`]: what can go wrong in a two-party protocol.
//!
//! Faults caused by the peer name the peer (through [`PeerFault`] or the transport's
//! [`NetError`]); mistakes of the calling code are [`TwopcError::ApiMisuse`] or
//! [`TwopcError::LengthMismatch`] and are detected before anything is sent.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::NetError;

use crate::scheme::GarblingScheme;

/// The scheme a garbler's first message names, or the unknown tag it sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TheirScheme {
    /// A scheme this crate knows.
    Known(GarblingScheme),
    /// A tag no scheme has.
    Unknown(u8),
}

impl std::fmt::Display for TheirScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TheirScheme::Known(s) => write!(f, "{s}"),
            TheirScheme::Unknown(t) => write!(f, "an unknown scheme (tag {t})"),
        }
    }
}

/// Errors of the two-party engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TwopcError {
    /// The transport failed (closed link, timeout, oversized frame, …); the error names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer's message had the wrong size (sizes follow from the public parameters, never from
    /// the wire) or did not decode (e.g. an invalid or identity Ristretto point).
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The session does not have exactly two parties.
    #[error("the two-party engine needs a session of exactly 2 parties, got {n_parties}")]
    WrongPartyCount {
        /// Parties in the session.
        n_parties: usize,
    },
    /// Two inputs of a call have different lengths.
    #[error("{op}: inputs of lengths {left} and {right}")]
    LengthMismatch {
        /// The operation.
        op: &'static str,
        /// Length of the first input.
        left: usize,
        /// Length of the other input.
        right: usize,
    },
    /// The garbler garbles with another scheme than this evaluator evaluates.
    #[error("{peer} garbles with {theirs}, this party evaluates {ours}")]
    SchemeMismatch {
        /// The garbler.
        peer: PartyId,
        /// This evaluator's scheme.
        ours: GarblingScheme,
        /// The garbler's scheme, as its first message names it (`None`: an unknown tag).
        theirs: TheirScheme,
    },
    /// The caller used the API in a way the protocol does not allow.
    #[error("API misuse: {0}")]
    ApiMisuse(&'static str),
}

/// Checks that two inputs of `op` have equal lengths.
pub(crate) fn same_len(op: &'static str, left: usize, right: usize) -> Result<(), TwopcError> {
    if left == right {
        Ok(())
    } else {
        Err(TwopcError::LengthMismatch { op, left, right })
    }
}
