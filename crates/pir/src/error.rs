//! The error type of the PIR crate.

use std::path::PathBuf;
use std::sync::Arc;

use doram_net::{ConfigError, NetError};

/// Why a PIR operation failed.
///
/// A client query returns an error when a server it needs is silent ([`PirError::Unreachable`]:
/// fail closed, nobody blamed), when more than one server misbehaved, or when the caller's
/// arguments are invalid; a single server caught deviating is handled by the fallback and
/// shows up in [`QueryOutcome`](crate::client::QueryOutcome), not here.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PirError {
    /// The transport failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A message or file did not decode.
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// What was being decoded.
        what: &'static str,
        /// Why it failed.
        reason: String,
    },
    /// A database file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The database is unusable (bad header, digest mismatch, wrong record length, too large).
    #[error("database: {0}")]
    Database(String),
    /// Offline material was requested a second time (it is bound to one query).
    #[error("offline instance {id:#x} was already used")]
    InstanceReused {
        /// The instance id.
        id: u128,
    },
    /// Offline material that this server does not have (never received, or evicted).
    #[error("offline instance {id:#x} is not available")]
    InstanceUnavailable {
        /// The instance id.
        id: u128,
    },
    /// A partial view that repeats the randomness of an earlier one (replayed by S_2).
    #[error("the partial view of offline instance {id:#x} is a replay")]
    ReplayedOffline {
        /// The instance id.
        id: u128,
    },
    /// Fail closed: a server the query needed was silent (no reply within the deadline, a
    /// lost connection, or not ready). That is no evidence against it, so it is not blamed.
    /// The index went at most to a server the evidence proved honest (or, if the caller
    /// assumed a synchronous network, the server that assumption names); the query may
    /// succeed when retried.
    #[error(
        "no record: {server} was unreachable ({detail}); nobody is blamed, and the query may be \
         retried"
    )]
    Unreachable {
        /// The silent server.
        server: crate::proto::ServerId,
        /// What happened.
        detail: String,
    },
    /// The caller's arguments do not fit (index out of range, bad sizes).
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// More than one server misbehaved (outside the protocol's guarantee): no server could be
    /// identified as honest, or the server identified as honest did not answer.
    #[error("no guaranteed output: {0}")]
    Unrecoverable(String),
}

impl PirError {
    pub(crate) fn malformed(what: &'static str, reason: impl Into<String>) -> PirError {
        PirError::Malformed {
            what,
            reason: reason.into(),
        }
    }
}
