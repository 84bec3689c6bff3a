//! [`RamenError`]: everything that can go wrong in Ramen, with the peer named wherever a peer is
//! to blame.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
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
    /// The three-party engine was misused (its peer faults are [`RamenError::Peer`]).
    #[error(transparent)]
    Mpc(MpcError),
    /// The distributed OPRF was misused (its peer faults are [`RamenError::Peer`]).
    #[error(transparent)]
    Doprf(DoprfError),
    /// A peer's message had the wrong size (sizes are fixed by the parameters), did not decode
    /// (e.g. a field element ≥ p), or decoded to something impossible in an honest run (e.g.
    /// an index out of range) — whichever layer noticed it.
    #[error(transparent)]
    Peer(#[from] PeerFault),
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
            RamenError::Doprf(DoprfError::Net(e)) => e.peer(),
            RamenError::Mpc(MpcError::Peer(f))
            | RamenError::Doprf(DoprfError::Peer(f))
            | RamenError::Peer(f) => Some(f.peer),
            _ => None,
        }
    }
}

/// Transport errors and peer faults raised inside the engine surface as [`RamenError::Net`]
/// and [`RamenError::Peer`].
impl From<MpcError> for RamenError {
    fn from(e: MpcError) -> Self {
        match e {
            MpcError::Net(e) => RamenError::Net(e),
            MpcError::Peer(f) => RamenError::Peer(f),
            other => RamenError::Mpc(other),
        }
    }
}

/// Transport errors and peer faults raised inside the DOPRF surface as [`RamenError::Net`] and
/// [`RamenError::Peer`].
impl From<DoprfError> for RamenError {
    fn from(e: DoprfError) -> Self {
        match e {
            DoprfError::Net(e) => RamenError::Net(e),
            DoprfError::Peer(f) => RamenError::Peer(f),
            other => RamenError::Doprf(other),
        }
    }
}
