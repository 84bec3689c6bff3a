//! [`OramError`]: what can go wrong in a distributed ORAM.
//!
//! Three kinds of failure, told apart by the variant:
//!
//! * **Peer faults** — a closed link, a silent peer, a message of the wrong size or one that
//!   does not decode, or one the protocol can tell is wrong: [`OramError::Net`] and
//!   [`OramError::Peer`].
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
use doram_core::wire::PeerFault;
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
    /// The engine was misused by the protocol implementation (peer faults the engine finds are
    /// [`OramError::Peer`]).
    #[error(transparent)]
    Mpc(MpcError),
    /// A peer's message had the wrong size, did not decode, or was something the protocol can
    /// tell is wrong; whichever layer noticed it (the engine's faults are unwrapped into this
    /// variant).
    #[error(transparent)]
    Peer(PeerFault),
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
            OramError::Mpc(MpcError::Peer(f)) | OramError::Peer(f) => Some(f.peer),
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

/// Transport errors and peer faults surfacing through the engine become [`OramError::Net`] and
/// [`OramError::Peer`], so that callers match on one variant whatever layer noticed the fault.
impl From<MpcError> for OramError {
    fn from(e: MpcError) -> Self {
        match e {
            MpcError::Net(e) => OramError::Net(e),
            MpcError::Peer(f) => OramError::Peer(f),
            other => OramError::Mpc(other),
        }
    }
}

impl From<PeerFault> for OramError {
    fn from(f: PeerFault) -> Self {
        OramError::Peer(f)
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
        let e: OramError = MpcError::Peer(PeerFault::wrong_length(PartyId::P1, "x", 16, 15)).into();
        assert!(matches!(e, OramError::Peer(_)));
        assert_eq!(e.peer(), Some(PartyId::P1));
        assert!(!e.is_misuse());
        assert!(OramError::NotInitialized.is_misuse());
        assert_eq!(OramError::Poisoned.peer(), None);
    }
}
