//! Peer input: exact-length checks and the one taxonomy of peer faults.
//!
//! Every protocol receives messages whose size it knows from its public parameters before it
//! reads them. A message that is not exactly that size, or that does not decode, is a
//! [`PeerFault`]: the sender, which message, and the [`CodecError`] that says what was wrong.
//! Protocol errors wrap it (one `Peer` variant each) instead of defining length and
//! malformed-message errors of their own, so every fault a peer can cause reads the same and
//! names the peer the same way.
//!
//! ```
//! use doram_core::wire::{self, Blame, PeerFault};
//! use doram_core::{CodecError, PartyId};
//!
//! let msg = [0u8; 15];
//! let e = wire::exact_len(PartyId::P1, "setup seed", &msg, 16).unwrap_err();
//! assert_eq!(e.to_string(), "P1 sent setup seed: wrong length: expected 16 bytes, got 15");
//!
//! let parsed: Result<u8, CodecError> = Err(CodecError::OutOfRange { what: "bit" });
//! let e: PeerFault = parsed.blame(PartyId::P2, "product shares").unwrap_err();
//! assert_eq!(e.peer, PartyId::P2);
//! ```

use crate::{CodecError, PartyId};

/// A peer's message that could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{peer} sent {what}: {fault}")]
pub struct PeerFault {
    /// The sender.
    pub peer: PartyId,
    /// Which message (a short noun phrase, e.g. "product shares").
    pub what: &'static str,
    /// What was wrong with it.
    pub fault: CodecError,
}

impl PeerFault {
    /// A fault of `peer`'s message `what`.
    pub fn new(peer: PartyId, what: &'static str, fault: CodecError) -> PeerFault {
        PeerFault { peer, what, fault }
    }

    /// `peer`'s message `what` was `got` bytes long instead of `expected`.
    pub fn wrong_length(peer: PartyId, what: &'static str, expected: usize, got: usize) -> Self {
        PeerFault::new(peer, what, CodecError::WrongLength { expected, got })
    }

    /// `peer`'s message `what` broke the protocol in a way its size and encoding do not show.
    pub fn malformed(peer: PartyId, what: &'static str, reason: impl Into<String>) -> Self {
        PeerFault::new(peer, what, CodecError::Malformed(reason.into()))
    }

    /// The bytes the message should have had and those it had, if its length was wrong.
    pub fn lengths(&self) -> Option<(usize, usize)> {
        match self.fault {
            CodecError::WrongLength { expected, got } => Some((expected, got)),
            _ => None,
        }
    }
}

/// Checks that `peer`'s message `what` is exactly `expected` bytes long.
///
/// # Errors
/// [`PeerFault`] with [`CodecError::WrongLength`] otherwise.
pub fn exact_len(
    peer: PartyId,
    what: &'static str,
    bytes: &[u8],
    expected: usize,
) -> Result<(), PeerFault> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(PeerFault::wrong_length(peer, what, expected, bytes.len()))
    }
}

/// Attributes a decoding error to the peer and message it came from.
pub trait Blame<T> {
    /// `Err(e)` becomes `Err(PeerFault { peer, what, fault: e })`.
    ///
    /// # Errors
    /// The attributed fault.
    fn blame(self, peer: PartyId, what: &'static str) -> Result<T, PeerFault>;
}

impl<T> Blame<T> for Result<T, CodecError> {
    fn blame(self, peer: PartyId, what: &'static str) -> Result<T, PeerFault> {
        self.map_err(|fault| PeerFault::new(peer, what, fault))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_name_the_peer_the_message_and_the_reason() {
        assert_eq!(exact_len(PartyId::P0, "x", &[1, 2], 2), Ok(()));
        let e = exact_len(PartyId::P2, "product shares", &[0; 8], 16).unwrap_err();
        assert_eq!(e.lengths(), Some((16, 8)));
        assert_eq!(
            e.to_string(),
            "P2 sent product shares: wrong length: expected 16 bytes, got 8"
        );
        let e = PeerFault::malformed(PartyId::P1, "a key", "level 3 out of order");
        assert_eq!(e.lengths(), None);
        assert_eq!(
            e.to_string(),
            "P1 sent a key: malformed message: level 3 out of order"
        );
    }
}
