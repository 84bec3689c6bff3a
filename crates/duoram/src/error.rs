//! [`DuoramError`]: everything that can go wrong in Duoram, with the peer named wherever a peer
//! is to blame.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::NetError;
use doram_oram::OramError;
use doram_twopc::TwopcError;

/// Errors of the Duoram protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DuoramError {
    /// The transport failed (closed link, timeout, oversized frame, …); names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer's message had the wrong size (every size follows from the public parameters) or
    /// did not decode (a field element ≥ p, an index share ≥ 2^h, a bit other than 0 or 1).
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// Preprocessing material was about to be used a second time (or out of order).
    #[error("preprocessing material {id} was already consumed (last consumed: {last})")]
    MaterialReused {
        /// The id of the material.
        id: u64,
        /// The id consumed last.
        last: u64,
    },
    /// The session does not have three parties.
    #[error("Duoram needs a session of three parties, got {0}")]
    WrongSession(usize),
    /// The memory size is not supported (detected before anything is sent).
    #[error("a memory of {n} words is not supported: {reason}")]
    InvalidSize {
        /// The requested size.
        n: usize,
        /// Why not.
        reason: &'static str,
    },
    /// `access`, `read`, `update`, `write` or `memory` before `init` (detected before anything
    /// is sent).
    #[error("the memory has not been initialised: call init() first")]
    NotInitialized,
    /// A second `init` (detected before anything is sent).
    #[error("the memory has already been initialised")]
    AlreadyInitialized,
    /// `init` with a number of shares other than n (detected before anything is sent).
    #[error("init() got {got} shares for a memory of {expected} words")]
    WrongMemoryLength {
        /// n.
        expected: usize,
        /// Shares passed.
        got: usize,
    },
    /// A secret-shared operation type was passed: Duoram reveals the type of each access.
    #[error("Duoram reveals the operation type: pass OpShare::Public")]
    HiddenOpUnsupported,
    /// A benchmark run with verification found a result that differs from the plaintext mirror.
    #[error("verification failed: {what} at index {index} differs from the plaintext mirror")]
    VerificationFailed {
        /// What differed.
        what: &'static str,
        /// Which operation or cell.
        index: usize,
    },
    /// A local failure (e.g. a party thread of a local run panicked).
    #[error("local failure: {0}")]
    Local(&'static str),
    /// An earlier peer fault left the parties out of step; the instance cannot be used.
    #[error("an earlier error left the parties out of step; this instance cannot be used any more")]
    Poisoned,
    /// The caller used the two-party API in a way the protocol does not allow (detected
    /// before anything is sent).
    #[error("API misuse: {0}")]
    ApiMisuse(&'static str),
    /// The two-party engine failed in a way that is neither a transport failure nor a peer's
    /// malformed message (those map to [`DuoramError::Net`] and [`DuoramError::Peer`]), e.g. a
    /// session without exactly two parties.
    #[error(transparent)]
    Twopc(TwopcError),
}

/// Transport failures and peer faults of the two-party engine keep their own variants, so
/// that [`DuoramError::peer`] names the peer whichever layer found the fault.
impl From<TwopcError> for DuoramError {
    fn from(e: TwopcError) -> Self {
        match e {
            TwopcError::Net(e) => DuoramError::Net(e),
            TwopcError::Peer(f) => DuoramError::Peer(f),
            other => DuoramError::Twopc(other),
        }
    }
}

impl DuoramError {
    /// The peer this error blames, if any.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            DuoramError::Net(e) => e.peer(),
            DuoramError::Peer(f) => Some(f.peer),
            _ => None,
        }
    }

    /// Whether this is misuse of the API, detected before anything was sent (the instance is
    /// still usable).
    pub fn is_misuse(&self) -> bool {
        matches!(
            self,
            DuoramError::NotInitialized
                | DuoramError::AlreadyInitialized
                | DuoramError::WrongMemoryLength { .. }
                | DuoramError::HiddenOpUnsupported
                | DuoramError::InvalidSize { .. }
                | DuoramError::ApiMisuse(_)
        )
    }
}

/// Misuse maps to the interface's misuse variants, transport errors to [`OramError::Net`],
/// protocol faults of a peer to [`OramError::Peer`] (keeping the peer); the rest is
/// [`OramError::Protocol`].
impl From<DuoramError> for OramError {
    fn from(e: DuoramError) -> Self {
        match e {
            DuoramError::Net(e) => OramError::Net(e),
            DuoramError::NotInitialized => OramError::NotInitialized,
            DuoramError::AlreadyInitialized => OramError::AlreadyInitialized,
            DuoramError::WrongMemoryLength { expected, got } => {
                OramError::WrongMemoryLength { expected, got }
            }
            DuoramError::HiddenOpUnsupported => OramError::HiddenOpUnsupported,
            DuoramError::InvalidSize { n, reason } => OramError::InvalidSize { n, reason },
            DuoramError::Poisoned => OramError::Poisoned,
            DuoramError::Peer(f) => OramError::Peer(f),
            other => OramError::Protocol(Box::new(other)),
        }
    }
}
