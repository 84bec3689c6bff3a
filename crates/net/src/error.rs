//! The error types of the transport: [`NetError`] for everything a session does and
//! [`ConfigError`] for reading a session description.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use doram_core::PartyId;
use doram_core::wire::PeerFault;

/// Why a network operation failed.
///
/// Every variant caused by a peer names that peer. Errors are `Clone` so that a failed link can
/// report the same error to every later call.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The peer closed its connection (or its session was dropped) before the expected message
    /// arrived, or the connection was reset while sending to it.
    #[error("connection with {peer} closed")]
    Closed {
        /// The peer whose connection closed.
        peer: PartyId,
    },
    /// No message from the peer arrived within the configured timeout (when receiving), or the
    /// peer did not accept data for that long (when sending).
    #[error("no progress on the link with {peer} for {after:?}")]
    Timeout {
        /// The silent peer.
        peer: PartyId,
        /// The timeout that expired.
        after: Duration,
    },
    /// A frame larger than the configured maximum. When receiving, the peer announced it (and
    /// nothing was allocated for it); when sending, `peer` is the destination and nothing was
    /// sent.
    #[error("frame of {len} bytes on the link with {peer} exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The peer on the other end of the link.
        peer: PartyId,
        /// The announced (or attempted) frame length.
        len: u64,
        /// The configured maximum frame length.
        limit: u64,
    },
    /// A frame from the peer carries another sequence number than the next one on its link: a
    /// frame was lost, repeated or reordered between the two sessions. The link fails (this
    /// error is sticky), since nothing after the gap can be trusted to be what the protocol
    /// expects.
    #[error(
        "frame out of sequence from {peer}: expected frame {expected} (mod 256), got {got}; \
         a frame was lost, repeated or reordered"
    )]
    OutOfSequence {
        /// The sender of the frame.
        peer: PartyId,
        /// The sequence number (mod 256) the receiver expected.
        expected: u8,
        /// The sequence number the frame carried.
        got: u8,
    },
    /// A frame from the peer was sent in another [`Phase`](crate::Phase) than the one this
    /// party receives in: the two parties are not at the same step of the protocol. Sticky,
    /// like [`OutOfSequence`](NetError::OutOfSequence).
    #[error("{peer} sent a frame in {got} while this party receives in {expected}")]
    WrongPhase {
        /// The sender of the frame.
        peer: PartyId,
        /// The phase this party receives in.
        expected: crate::Phase,
        /// The phase the frame was sent in.
        got: crate::Phase,
    },
    /// The peer sent bytes that do not decode: a broken frame header, a frame cut short by the
    /// end of the connection, a timestamp that went backwards, an undecodable message, or the
    /// wrong number of elements.
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The TLS layer rejected data on an established connection (e.g. a record that fails
    /// authentication) or received a fatal alert from the peer.
    #[error("TLS error on the link with {peer}: {reason}")]
    Tls {
        /// The peer on the other end of the link.
        peer: PartyId,
        /// The TLS layer's description.
        reason: String,
    },
    /// Any other I/O error on an established link.
    #[error("I/O error on the link with {peer}: {source}")]
    Io {
        /// The peer on the other end of the link.
        peer: PartyId,
        /// The underlying error.
        #[source]
        source: Arc<io::Error>,
    },
    /// Setting up the link with the peer failed: nothing listened at its address before the
    /// connect timeout, or it never connected to us.
    #[error("could not connect with {peer}: {reason}")]
    Connect {
        /// The peer that could not be reached.
        peer: PartyId,
        /// What happened.
        reason: String,
    },
    /// The peer could not be authenticated, or it refused us: a wrong or unknown certificate, a
    /// certificate that does not belong to the party it claims to be, a mismatched session.
    #[error("handshake with {peer} failed: {reason}")]
    Handshake {
        /// The peer (claimed or expected) of the failed handshake.
        peer: PartyId,
        /// What was rejected, and by whom.
        reason: String,
    },
    /// This party could not listen on its configured address.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The configured address.
        address: String,
        /// The underlying error.
        #[source]
        source: Arc<io::Error>,
    },
    /// A party that is not a peer of this session was named (the session's own id, or an id at
    /// or above the number of parties). This is a caller bug, not peer input.
    #[error("{party} is not a peer of {me} in a session of {n_parties} parties")]
    NotAPeer {
        /// The id that was named.
        party: PartyId,
        /// This session's own id.
        me: PartyId,
        /// Parties in the session.
        n_parties: usize,
    },
    /// A message could not be serialized (a caller bug, e.g. a type postcard does not support).
    #[error("cannot encode message: {0}")]
    Encode(String),
    /// The session description is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Generating certificates failed.
    #[error("certificate generation failed: {0}")]
    Certs(String),
}

impl NetError {
    /// The peer this error is about, if it is about one.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            NetError::Closed { peer }
            | NetError::Timeout { peer, .. }
            | NetError::FrameTooLarge { peer, .. }
            | NetError::OutOfSequence { peer, .. }
            | NetError::WrongPhase { peer, .. }
            | NetError::Tls { peer, .. }
            | NetError::Io { peer, .. }
            | NetError::Connect { peer, .. }
            | NetError::Handshake { peer, .. } => Some(*peer),
            NetError::Peer(f) => Some(f.peer),
            NetError::NotAPeer { .. }
            | NetError::Listen { .. }
            | NetError::Encode(_)
            | NetError::Config(_)
            | NetError::Certs(_) => None,
        }
    }

    /// Classifies an I/O error on an established link with `peer`.
    pub(crate) fn from_io(peer: PartyId, err: io::Error, timeout: Duration) -> NetError {
        use io::ErrorKind as K;
        if let Some(tls) = err
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return NetError::Tls {
                peer,
                reason: tls.to_string(),
            };
        }
        match err.kind() {
            K::BrokenPipe
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::NotConnected
            | K::UnexpectedEof => NetError::Closed { peer },
            K::WouldBlock | K::TimedOut => NetError::Timeout {
                peer,
                after: timeout,
            },
            _ => NetError::Io {
                peer,
                source: Arc::new(err),
            },
        }
    }
}

/// Why a session description could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file (the configuration itself, a certificate or a key) could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Arc<io::Error>,
    },
    /// A file could not be written (when generating certificates and configurations).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Arc<io::Error>,
    },
    /// The configuration is not valid TOML or has unknown, missing or mistyped fields.
    #[error("{origin}: {reason}")]
    Parse {
        /// The file the text came from (or a description of where it came from).
        origin: String,
        /// The parser's message.
        reason: String,
    },
    /// A PEM file holds no usable certificate or key.
    #[error("{}: {reason}", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Two `[[party]]` entries have the same id.
    #[error("party id {id} is listed twice")]
    DuplicateParty {
        /// The repeated id.
        id: u64,
    },
    /// A party id is not below the number of parties.
    #[error(
        "party id {id} is out of range: the session has {n_parties} parties (ids 0..{n_parties})"
    )]
    PartyOutOfRange {
        /// The offending id.
        id: u64,
        /// The number of `[[party]]` entries.
        n_parties: usize,
    },
    /// The number of parties is not between 2 and 4.
    #[error("a session needs 2 to 4 parties, the configuration lists {0}")]
    PartyCount(usize),
    /// A party's address is not `host:port`.
    #[error("party {id}: bad address {address:?}: {reason}")]
    BadAddress {
        /// The party.
        id: u64,
        /// The address as written.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value is outside its allowed range, or a required value is missing.
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// A TLS session was requested from a configuration without a `[tls]` section.
    #[error(
        "the configuration has no [tls] section; add one, or use the explicitly insecure plaintext transport"
    )]
    NoTls,
}

impl ConfigError {
    pub(crate) fn read(path: impl Into<PathBuf>, err: io::Error) -> ConfigError {
        ConfigError::Read {
            path: path.into(),
            source: Arc::new(err),
        }
    }

    pub(crate) fn write(path: impl Into<PathBuf>, err: io::Error) -> ConfigError {
        ConfigError::Write {
            path: path.into(),
            source: Arc::new(err),
        }
    }
}
