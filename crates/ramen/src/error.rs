//! [`RamenError`]: everything that can go wrong in Ramen, with the peer named wherever a peer is
//! to blame.

use doram_core::{CodecError, PartyId};
use doram_doprf::DoprfError;
use doram_dpf::DpfError;
use doram_mpc::MpcError;
use doram_net::NetError;

/// Errors of the Ramen protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RamenError {
    /// The transport failed (closed link, timeout, oversized frame, …); names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The three-party engine rejected a peer's message or was misused.
    #[error(transparent)]
    Mpc(MpcError),
    /// The distributed OPRF rejected a peer's message or was misused.
    #[error(transparent)]
    Doprf(DoprfError),
    /// A peer's message had the wrong size (sizes are fixed by the parameters).
    #[error("{peer} sent {what}: expected {expected} bytes, got {got}")]
    WrongLength {
        /// The sender.
        peer: PartyId,
        /// Which message.
        what: &'static str,
        /// The size the protocol prescribes.
        expected: usize,
        /// The size received.
        got: usize,
    },
    /// A peer's message had the right size but did not decode (e.g. a field element ≥ p).
    #[error("{peer} sent a malformed {what}: {source}")]
    Malformed {
        /// The sender.
        peer: PartyId,
        /// Which message.
        what: &'static str,
        /// Why it did not decode.
        source: CodecError,
    },
    /// A peer's message decoded but is impossible in an honest run (e.g. an index out of
    /// range).
    #[error("{peer} misbehaved: {what}")]
    PeerMisbehaved {
        /// The peer.
        peer: PartyId,
        /// What was wrong.
        what: &'static str,
    },
    /// Invalid public parameters (detected before anything is sent).
    #[error("invalid parameters: {0}")]
    InvalidParams(&'static str),
    /// A local failure that happens with negligible probability (e.g. cuckoo hashing failing
    /// with every hash key tried).
    #[error("local failure: {0}")]
    Local(&'static str),
    /// A DPF could not be generated (points out of range: an internal invariant broke).
    #[error(transparent)]
    Dpf(#[from] DpfError),
    /// The API was used against its contract (detected before anything is sent).
    #[error("API misuse: {0}")]
    ApiMisuse(&'static str),
    /// `access` or `memory` before `init` (detected before anything is sent).
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
    /// A benchmark run with verification found a result that differs from the plaintext mirror.
    #[error("verification failed: {what} at index {index} differs from the plaintext mirror")]
    VerificationFailed {
        /// What differed.
        what: &'static str,
        /// Which access or cell.
        index: usize,
    },
    /// An earlier peer fault left the parties out of step; the instance cannot be used.
    #[error("an earlier error left the parties out of step; this instance cannot be used any more")]
    Poisoned,
}

impl RamenError {
    /// The peer this error blames, if any.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            RamenError::Net(e) => e.peer(),
            RamenError::Mpc(MpcError::Net(e)) => e.peer(),
            RamenError::Mpc(MpcError::WrongLength { peer, .. })
            | RamenError::Mpc(MpcError::Malformed { peer, .. }) => Some(*peer),
            RamenError::Doprf(DoprfError::Net(e)) => e.peer(),
            RamenError::Doprf(DoprfError::WrongLength { peer, .. })
            | RamenError::Doprf(DoprfError::Malformed { peer, .. }) => Some(*peer),
            RamenError::WrongLength { peer, .. }
            | RamenError::Malformed { peer, .. }
            | RamenError::PeerMisbehaved { peer, .. } => Some(*peer),
            _ => None,
        }
    }
}

/// Transport errors raised inside the engine surface as [`RamenError::Net`].
impl From<MpcError> for RamenError {
    fn from(e: MpcError) -> Self {
        match e {
            MpcError::Net(e) => RamenError::Net(e),
            other => RamenError::Mpc(other),
        }
    }
}

/// Transport errors raised inside the DOPRF surface as [`RamenError::Net`].
impl From<DoprfError> for RamenError {
    fn from(e: DoprfError) -> Self {
        match e {
            DoprfError::Net(e) => RamenError::Net(e),
            other => RamenError::Doprf(other),
        }
    }
}
