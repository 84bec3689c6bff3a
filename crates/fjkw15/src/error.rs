//! [`Fjkw15Error`]: what can go wrong in the FJKW15 sub-protocols.
//!
//! A peer's message that has the wrong size or does not decode is a
//! [`PeerFault`] naming the peer, as everywhere in the workspace.
//! Messages that decode but do not fit together (an SS-IOT with no matching index, an SS-COT
//! with several matches where the caller needs one) cannot be blamed on one peer: honest parties
//! never produce them, but the receiver cannot tell which of its two senders deviated, so they
//! are [`Fjkw15Error::Inconsistent`]. Mistakes of the calling code (inputs out of range, a role
//! given to a protocol that does not have it) are [`Fjkw15Error::InvalidInput`] and are found
//! before anything is produced.

use doram_core::wire::PeerFault;

/// Errors of the FJKW15 sub-protocols.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Fjkw15Error {
    /// A peer's message had the wrong length or did not decode.
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The two senders' messages do not fit together.
    #[error("inconsistent messages: {0}")]
    Inconsistent(&'static str),
    /// SS-COT found `found` matching indices where the caller requires exactly one (in Access
    /// exactly one tuple of a path matches fb‖N_i).
    #[error("SS-COT found {found} matches where exactly one is required")]
    Matches {
        /// Matches found.
        found: usize,
    },
    /// An eviction found a bucket of tree `tree` with fewer than two slots it could use (an
    /// internal bucket without two moveable-or-empty tuples, or a leaf node without two empty
    /// ones; FJKW15 §2, "Eviction fails in case of a bucket overflow"). There is no stash: the
    /// ORAM must not be used further (notes Q8).
    #[error("bucket overflow in tree {tree}")]
    Overflow {
        /// The tree.
        tree: usize,
    },
    /// An address outside the memory, found by the conversion of the address (its whole
    /// value, not only the bits the forest uses) and reported to every party
    /// ([`crate::backend`]). The instance is poisoned.
    #[error("the address is outside the memory")]
    AddressOutOfRange,
    /// The caller's input is out of range for the parameters.
    #[error("invalid input: {0}")]
    InvalidInput(&'static str),
    /// The role assignment is not three distinct parties.
    #[error("invalid role assignment: C, D and E must be three distinct parties")]
    InvalidRoles,
}
