//! [`DoprfError`]: what can go wrong in a DOPRF instance.
//!
//! Faults caused by a peer name that peer. Mistakes of the calling code (bad parameters, a role
//! the party does not play, evaluating more than was preprocessed) are detected before anything
//! is sent, and every party detects them at the same point of the protocol, so a misusing
//! caller never leaves its peers waiting in the middle of a round.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::NetError;

use crate::params::{Mode, Role};

/// Errors of the DOPRF.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DoprfError {
    /// The transport failed (closed link, timeout, oversized frame, …); the error names the
    /// peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer's message had the wrong size (sizes follow from the parameters and the batch
    /// length, never from the wire) or did not decode (a field element ≥ p, or a mask with bits
    /// at or above ℓ); `what` is the message's
    /// [`WireMessage::WHAT`](crate::msgs::WireMessage::WHAT).
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// More evaluations were requested than are preprocessed. Nothing was consumed or sent;
    /// the other parties, whose pools have the same size, fail at the same call.
    #[error("{mode} DOPRF: {requested} evaluations requested but only {available} preprocessed")]
    PreprocessingExhausted {
        /// The evaluation type.
        mode: Mode,
        /// Evaluations requested.
        requested: usize,
        /// Evaluations preprocessed and not yet used.
        available: usize,
    },
    /// The session does not have exactly three parties.
    #[error("the DOPRF needs a session of exactly 3 parties, got {n_parties}")]
    WrongPartyCount {
        /// Parties in the session.
        n_parties: usize,
    },
    /// The parameters are out of range.
    #[error("invalid parameters: {0}")]
    InvalidParams(&'static str),
    /// The role assignment is not three distinct parties among P0, P1, P2.
    #[error("invalid role assignment: {0}")]
    InvalidRoles(&'static str),
    /// The party was asked to act in a role it does not play in this instance.
    #[error("{me} is not {role} in this DOPRF instance")]
    WrongRole {
        /// This party.
        me: PartyId,
        /// The role the call needs.
        role: Role,
    },
    /// The caller used the API in a way the protocol does not allow.
    #[error("API misuse: {0}")]
    ApiMisuse(&'static str),
}
