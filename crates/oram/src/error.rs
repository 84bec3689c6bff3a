//! [`OramError`]: what can go wrong in a distributed ORAM.
//!
//! Three kinds of failure, told apart by the variant:
//!
//! * **Peer faults** — a closed link, a silent peer, a message of the wrong size or one that
//!   does not decode: [`OramError::Net`], [`OramError::Mpc`] and [`OramError::PeerMisbehaved`].
//!   They name the peer ([`OramError::peer`]). A peer fault in the middle of an operation leaves
//!   the parties out of step, so the instance is *poisoned*: every later call returns
//!   [`OramError::Poisoned`].
//! * **Misuse** by the calling program — [`OramError::NotInitialized`],
//!   [`OramError::AlreadyInitialized`], [`OramError::WrongMemoryLength`],
//!   [`OramError::HiddenOpUnsupported`], [`OramError::InvalidSize`]. These are detected from
//!   public information before anything is sent, so the three parties (running the same program)
//!   all get the same error, stay in step, and the instance remains usable.
//! * **Plaintext errors** of the oracle [`PlainMemory`](crate::PlainMemory):
//!   [`OramError::AddressOutOfRange`]. A protocol never returns it: an address is secret-shared,
//!   so no party can tell that it is out of range (see the [crate documentation](crate)).

use doram_core::PartyId;
use doram_mpc::MpcError;
use doram_net::NetError;

/// Errors of a distributed ORAM (and of the plaintext oracle).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OramError {
    /// The transport failed (closed link, timeout, oversized or malformed frame, …); the error
    /// names the peer. Transport errors raised inside the three-party engine are unwrapped into
    /// this variant too (see the `From<MpcError>` conversion).
    #[error(transparent)]
    Net(NetError),
    /// The three-party engine rejected a peer's message (wrong size, non-canonical element) or
    /// the engine was misused by the protocol implementation.
    #[error(transparent)]
    Mpc(MpcError),
    /// A peer sent something the protocol can tell is wrong (beyond the engine's checks).
    #[error("{peer} misbehaved: {what}")]
    PeerMisbehaved {
        /// The peer.
        peer: PartyId,
        /// What was wrong.
        what: &'static str,
    },
    /// `access` or `memory` was called before `init`.
    #[error("the memory has not been initialised: call init() first")]
    NotInitialized,
    /// `init` was called a second time.
    #[error("the memory has already been initialised")]
    AlreadyInitialized,
    /// `init` got a number of shares different from the memory size.
    #[error("init() got {got} shares for a memory of {expected} words")]
    WrongMemoryLength {
        /// The memory size.
        expected: usize,
        /// Shares passed.
        got: usize,
    },
    /// A protocol that reveals the operation type ([`OpVisibility::Public`]) was given a
    /// secret-shared operation ([`OpShare::Hidden`]); pass [`OpShare::Public`] instead.
    ///
    /// [`OpVisibility::Public`]: crate::OpVisibility::Public
    /// [`OpShare::Hidden`]: crate::OpShare::Hidden
    /// [`OpShare::Public`]: crate::OpShare::Public
    #[error("this protocol reveals the operation type: pass OpShare::Public")]
    HiddenOpUnsupported,
    /// The memory size is not supported by the protocol or its word type.
    #[error("a memory of {n} words is not supported: {reason}")]
    InvalidSize {
        /// The requested size.
        n: usize,
        /// Why not.
        reason: &'static str,
    },
    /// An earlier error interrupted an operation and left the parties out of step; the instance
    /// cannot be used any more.
    #[error("an earlier error left the parties out of step; this instance cannot be used any more")]
    Poisoned,
    /// The plaintext oracle was given an address outside its memory.
    #[error("address {addr} is outside a memory of {len} words")]
    AddressOutOfRange {
        /// The address.
        addr: u64,
        /// The memory size.
        len: usize,
    },
    /// A protocol-specific failure of a protocol crate built on this interface.
    #[error(transparent)]
    Protocol(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl OramError {
    /// The peer this error blames, if it blames one.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            OramError::Net(e) => e.peer(),
            OramError::Mpc(MpcError::Net(e)) => e.peer(),
            OramError::Mpc(MpcError::WrongLength { peer, .. })
            | OramError::Mpc(MpcError::Malformed { peer, .. })
            | OramError::PeerMisbehaved { peer, .. } => Some(*peer),
            _ => None,
        }
    }

    /// Whether this error comes from the calling program's misuse of the API (detected before
    /// anything was sent, so the instance is still usable).
    pub fn is_misuse(&self) -> bool {
        matches!(
            self,
            OramError::NotInitialized
                | OramError::AlreadyInitialized
                | OramError::WrongMemoryLength { .. }
                | OramError::HiddenOpUnsupported
                | OramError::InvalidSize { .. }
        )
    }
}

impl From<NetError> for OramError {
    fn from(e: NetError) -> Self {
        OramError::Net(e)
    }
}

/// Transport errors surfacing through the engine become [`OramError::Net`], so that callers
/// match on one variant whatever layer noticed the fault.
impl From<MpcError> for OramError {
    fn from(e: MpcError) -> Self {
        match e {
            MpcError::Net(e) => OramError::Net(e),
            other => OramError::Mpc(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_transport_errors_are_flattened() {
        let e: OramError = MpcError::Net(NetError::Closed { peer: PartyId::P2 }).into();
        assert!(matches!(
            e,
            OramError::Net(NetError::Closed { peer: PartyId::P2 })
        ));
        assert_eq!(e.peer(), Some(PartyId::P2));
        let e: OramError = MpcError::WrongLength {
            peer: PartyId::P1,
            what: "x",
            expected_bytes: 16,
            got_bytes: 15,
        }
        .into();
        assert_eq!(e.peer(), Some(PartyId::P1));
        assert!(!e.is_misuse());
        assert!(OramError::NotInitialized.is_misuse());
        assert_eq!(OramError::Poisoned.peer(), None);
    }
}
