//! [`TwopcError`]: what can go wrong in a two-party protocol.
//!
//! Faults caused by the peer name the peer (through [`PeerFault`] or the transport's
//! [`NetError`]); mistakes of the calling code are [`TwopcError::ApiMisuse`] or
//! [`TwopcError::LengthMismatch`] and are detected before anything is sent.

use doram_core::wire::PeerFault;
use doram_net::NetError;

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
