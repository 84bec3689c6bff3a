//! [`ProgramError`]: what can go wrong in a program run; [`InputError`]: what is wrong with an
//! input file.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_mpc::MpcError;
use doram_net::NetError;
use doram_oram::OramError;

/// Errors of a program run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramError {
    /// The transport failed (closed link, timeout, malformed frame); names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The compute engine was misused.
    #[error(transparent)]
    Mpc(MpcError),
    /// A peer's message had the wrong size or did not decode, whichever layer (engine or ORAM)
    /// noticed it.
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The distributed ORAM failed.
    #[error(transparent)]
    Oram(OramError),
    /// This party's own input is missing, present where it must not be, or invalid; detected
    /// before this party sends anything of the run.
    #[error("input: {0}")]
    Input(#[from] InputError),
    /// The data owner announced public sizes outside the supported bounds.
    #[error("{peer} announced unsupported sizes: {reason}")]
    BadSizes {
        /// The data owner.
        peer: PartyId,
        /// What is out of bounds.
        reason: String,
    },
    /// An opened output is not what the program can produce (e.g. an index beyond the array):
    /// a peer deviated or the inputs broke the program's bounds.
    #[error("an opened output is out of range: {0}")]
    BadOutput(&'static str),
    /// The program used the machine in a way it does not allow (e.g. an access before the
    /// memory is loaded, or a public index out of range); detected before anything is sent.
    #[error("misuse: {0}")]
    Misuse(&'static str),
    /// A peer runs a different program, backend or role assignment.
    #[error("{peer} runs {theirs:?}, this party {ours:?}")]
    ConfigMismatch {
        /// The peer.
        peer: PartyId,
        /// This party's run description.
        ours: String,
        /// The peer's (truncated to 200 bytes).
        theirs: String,
    },
    /// The two-party engine or memory failed (misuse, or a failure it does not say more
    /// about than this).
    #[error(transparent)]
    TwoParty(doram_twopc::TwopcError),
    /// The two-party memory failed (e.g. a bucket overflow of the tree ORAM).
    #[error(transparent)]
    Gkk12(doram_gkk12::driver::Gkk12Error),
    /// A binary-search database kept between runs cannot be used: missing, damaged, not
    /// the peer's, or left by a run that did not finish ([`crate::stored`]).
    #[error("stored database: {0}")]
    Store(String),
    /// The roles name a party outside the session (P0–P2 with three parties, P0–P1 with
    /// two).
    #[error("roles must name parties of the session (P0, P1, and P2 with three parties)")]
    BadRoles,
}

impl From<MpcError> for ProgramError {
    fn from(e: MpcError) -> Self {
        match e {
            MpcError::Net(e) => ProgramError::Net(e),
            MpcError::Peer(f) => ProgramError::Peer(f),
            other => ProgramError::Mpc(other),
        }
    }
}

impl From<doram_twopc::TwopcError> for ProgramError {
    fn from(e: doram_twopc::TwopcError) -> Self {
        match e {
            doram_twopc::TwopcError::Net(e) => ProgramError::Net(e),
            doram_twopc::TwopcError::Peer(f) => ProgramError::Peer(f),
            other => ProgramError::TwoParty(other),
        }
    }
}

impl From<doram_gkk12::driver::Gkk12Error> for ProgramError {
    fn from(e: doram_gkk12::driver::Gkk12Error) -> Self {
        match e {
            doram_gkk12::driver::Gkk12Error::Twopc(e) => ProgramError::from(e),
            other => ProgramError::Gkk12(other),
        }
    }
}

impl From<OramError> for ProgramError {
    fn from(e: OramError) -> Self {
        match e {
            OramError::Net(e) => ProgramError::Net(e),
            OramError::Mpc(e) => ProgramError::from(e),
            OramError::Peer(f) => ProgramError::Peer(f),
            other => ProgramError::Oram(other),
        }
    }
}

impl ProgramError {
    /// The peer this error blames, if any.
    pub fn peer(&self) -> Option<PartyId> {
        match self {
            ProgramError::Net(e) => e.peer(),
            ProgramError::Peer(f) => Some(f.peer),
            ProgramError::BadSizes { peer, .. } | ProgramError::ConfigMismatch { peer, .. } => {
                Some(*peer)
            }
            ProgramError::Oram(e) => e.peer(),
            _ => None,
        }
    }
}

/// A problem with an input file or value; lines are numbered from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// A field is not a non-negative integer of the allowed range.
    #[error(
        "line {line}: {field:?} is not an integer in 0..={max} (non-negative integers \
         only; vertices are numbered from 0)"
    )]
    NotAnInteger {
        /// The line.
        line: usize,
        /// The offending text.
        field: String,
        /// The largest allowed value.
        max: u64,
    },
    /// A weight has more decimal places than the fixed-point scale allows.
    #[error(
        "line {line}: weight {field:?} has {places} decimal places but weights are read with \
         {allowed}: allow more decimal places (fixed point)"
    )]
    TooManyDecimals {
        /// The line.
        line: usize,
        /// The offending text.
        field: String,
        /// Its decimal places (trailing zeros not counted).
        places: u32,
        /// The decimal places allowed.
        allowed: u32,
    },
    /// A weight exceeds the largest weight once scaled to fixed point.
    #[error(
        "line {line}: weight {field:?} times 10^{decimals} exceeds the largest weight \
         2^32 − 1: use fewer decimal places or smaller weights"
    )]
    WeightTooLarge {
        /// The line.
        line: usize,
        /// The offending text.
        field: String,
        /// The decimal places of the fixed-point scale.
        decimals: u32,
    },
    /// An edge names a vertex that the names list does not hold.
    #[error("line {line}: vertex {name:?} is not one of the vertex names")]
    UnknownVertex {
        /// The line.
        line: usize,
        /// The name.
        name: String,
    },
    /// A names list holds an unusable name.
    #[error("vertex names, line {line}: {name:?}: {reason}")]
    BadName {
        /// The line.
        line: usize,
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A weight is negative.
    #[error("line {line}: negative weight {field:?}")]
    NegativeWeight {
        /// The line.
        line: usize,
        /// The offending text.
        field: String,
    },
    /// The sorted array is not sorted.
    #[error("line {line}: {value} is smaller than the previous entry {previous}")]
    Unsorted {
        /// The line.
        line: usize,
        /// The entry.
        value: u64,
        /// The entry before it.
        previous: u64,
    },
    /// An edge line has the wrong number of fields.
    #[error(
        "line {line}: expected {expected} fields (from, to[, weight]) separated by commas, \
         spaces or tabs, got {got}"
    )]
    FieldCount {
        /// The line.
        line: usize,
        /// Fields expected ("2", "3" or "2 or 3").
        expected: &'static str,
        /// Fields found.
        got: usize,
    },
    /// A vertex id is not below the vertex count.
    #[error("line {line}: vertex {vertex} is out of range for {vertices} vertices")]
    VertexOutOfRange {
        /// The line (0 for a query).
        line: usize,
        /// The vertex.
        vertex: u64,
        /// The vertex count.
        vertices: u64,
    },
    /// Preference lists are not valid JSON of the expected shape.
    #[error("preferences: {0}")]
    Json(String),
    /// A preference list is not a permutation of 0..k.
    #[error("preferences: {side} {index}: {reason}")]
    NotAPermutation {
        /// "proposer" or "acceptor".
        side: &'static str,
        /// Whose list.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// An input is larger than the programs support.
    #[error("{what} is {got}, more than the supported {max}")]
    TooLarge {
        /// What.
        what: &'static str,
        /// The size.
        got: u64,
        /// The bound.
        max: u64,
    },
    /// A party has an input although its role has none, or lacks one its role needs.
    #[error("{0}")]
    Role(&'static str),
}

impl From<doram_duoram::DuoramError> for ProgramError {
    fn from(e: doram_duoram::DuoramError) -> Self {
        ProgramError::from(OramError::from(e))
    }
}
