//! [`MpcError`]: what can go wrong in a three-party operation.
//!
//! Faults caused by a peer name that peer; mistakes of the calling code are
//! [`MpcError::ApiMisuse`] or [`MpcError::LengthMismatch`] and are detected before anything is
//! sent, so a misusing caller never leaves its peers half-way through a round.

use doram_core::wire::PeerFault;
use doram_net::NetError;

/// Errors of the three-party engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpcError {
    /// The transport failed (closed link, timeout, oversized frame, …); the error names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer's message had the wrong size (sizes are fixed by the operation and the batch
    /// length, never read from the wire) or did not decode (e.g. a field element ≥ p); `what`
    /// is the message's [`MsgKind::name`](crate::MsgKind::name).
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The session does not have exactly three parties.
    #[error("the three-party engine needs a session of exactly 3 parties, got {n_parties}")]
    WrongPartyCount {
        /// Parties in the session.
        n_parties: usize,
    },
    /// Two operands of a batched operation have different lengths.
    #[error("{op}: operands of lengths {left} and {right}")]
    LengthMismatch {
        /// The operation.
        op: &'static str,
        /// Length of the first operand.
        left: usize,
        /// Length of the other operand.
        right: usize,
    },
    /// The caller used the API in a way the protocol does not allow.
    #[error("API misuse: {0}")]
    ApiMisuse(&'static str),
}

/// Checks that two operands of `op` have equal lengths.
pub(crate) fn same_len(op: &'static str, left: usize, right: usize) -> Result<(), MpcError> {
    if left == right {
        Ok(())
    } else {
        Err(MpcError::LengthMismatch { op, left, right })
    }
}
