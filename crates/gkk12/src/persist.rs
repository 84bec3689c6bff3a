//! A loaded ORAM kept between runs (GKK12's setting: the data loaded once, many programs run
//! on it): each party writes its own state to a file and resumes from it later.
//!
//! The server's file holds its encrypted trees with their nonces, the base map's zero labels,
//! Δ and the number of AND gates garbled under Δ so far; the client's holds the pad key, the
//! base map's active labels and its count of AND gates evaluated. Either file alone shows
//! nothing of the data (ciphertexts and labels at the server, a key and labels at the client);
//! both together open everything, so each belongs to its party alone.
//!
//! A resumed garbler continues the AND counter
//! ([`resume_at`](doram_twopc::gc::Garbler::resume_at)): every gate under one Δ keeps a tweak
//! of its own across runs. Whether the two files belong together (same load, same number of
//! runs) is the caller's to check before resuming: parties that resume different states
//! decrypt garbage, and a party that resumes an older state than the one it last used reveals
//! again leaves it revealed before.
//!
//! # Format
//! Little-endian: a 16-byte magic with the role, the parameters, the role's fields, the trees
//! (server), then a BLAKE3 digest of everything before it. Reading checks every size against
//! the parameters, the digest, and that nothing follows; vectors grow piece by piece as the
//! file delivers them, so a damaged header cannot reserve more than the file holds.

use std::io::{self, Read, Write};

use doram_prim::aes::Block;
use thiserror::Error;

use crate::params::Params;

/// Magic of a server's state file.
const SERVER_MAGIC: &[u8; 16] = b"doram-gkk12-srv1";
/// Magic of a client's state file.
const CLIENT_MAGIC: &[u8; 16] = b"doram-gkk12-cli1";

/// Why a state could not be saved or resumed.
#[derive(Debug, Error)]
pub enum StateError {
    /// Reading or writing the file failed.
    #[error("state file: {0}")]
    Io(#[from] io::Error),
    /// The file is not a state of this kind, or is damaged.
    #[error("state file: {0}")]
    Corrupt(&'static str),
    /// The file asks for more memory than this host can allocate.
    #[error("state file: {what} does not fit in memory here")]
    TooLarge {
        /// What could not be allocated.
        what: &'static str,
    },
    /// An access failed: the state is no longer consistent between the parties.
    #[error("an access failed; this ORAM's state is not saved")]
    Poisoned,
}

/// Which party's state a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// The server (stores the trees, garbles).
    Server,
    /// The client (holds the pad key, evaluates).
    Client,
}

impl Role {
    fn magic(self) -> &'static [u8; 16] {
        match self {
            Role::Server => SERVER_MAGIC,
            Role::Client => CLIENT_MAGIC,
        }
    }
}

/// Writes a state file, hashing as it goes.
pub(crate) struct StateWriter<'a> {
    out: &'a mut dyn Write,
    hash: blake3::Hasher,
}

impl<'a> StateWriter<'a> {
    /// Starts `role`'s file with the parameters and whether the ORAM is sparse.
    pub(crate) fn new(
        out: &'a mut dyn Write,
        role: Role,
        params: &Params,
        sparse: bool,
    ) -> io::Result<StateWriter<'a>> {
        let mut w = StateWriter {
            out,
            hash: blake3::Hasher::new(),
        };
        w.bytes(role.magic())?;
        w.u64(params.items())?;
        w.u64(params.payload_bits() as u64)?;
        w.u64(params.bucket() as u64)?;
        w.u64(params.trees() as u64)?;
        w.u8(u8::from(sparse))?;
        Ok(w)
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.hash.update(b);
        self.out.write_all(b)
    }

    pub(crate) fn u8(&mut self, x: u8) -> io::Result<()> {
        self.bytes(&[x])
    }

    pub(crate) fn u64(&mut self, x: u64) -> io::Result<()> {
        self.bytes(&x.to_le_bytes())
    }

    pub(crate) fn block(&mut self, x: Block) -> io::Result<()> {
        self.bytes(&x.to_le_bytes())
    }

    /// A count, then the blocks.
    pub(crate) fn blocks(&mut self, xs: &[Block]) -> io::Result<()> {
        self.u64(xs.len() as u64)?;
        let mut buf = Vec::with_capacity(16 * 4096);
        for c in xs.chunks(4096) {
            buf.clear();
            for x in c {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            self.bytes(&buf)?;
        }
        Ok(())
    }

    /// Appends the digest and flushes.
    pub(crate) fn finish(self) -> io::Result<()> {
        let digest = self.hash.finalize();
        self.out.write_all(digest.as_bytes())?;
        self.out.flush()
    }
}

/// Reads a state file, hashing as it goes.
pub(crate) struct StateReader<'a> {
    input: &'a mut dyn Read,
    hash: blake3::Hasher,
}

/// Values read per piece: a vector read from a file grows piece by piece as the file delivers
/// them, so sizes the file does not back (a damaged header) allocate at most one piece more
/// than it holds before the read fails.
const PIECE_BYTES: usize = 1 << 20;

impl<'a> StateReader<'a> {
    /// Opens `role`'s file: the magic, then the parameters and whether the ORAM is sparse.
    pub(crate) fn new(
        input: &'a mut dyn Read,
        role: Role,
    ) -> Result<(StateReader<'a>, Params, bool), StateError> {
        let mut r = StateReader {
            input,
            hash: blake3::Hasher::new(),
        };
        let mut magic = [0u8; 16];
        r.fill(&mut magic)?;
        if &magic != role.magic() {
            let other = match role {
                Role::Server => CLIENT_MAGIC,
                Role::Client => SERVER_MAGIC,
            };
            return Err(StateError::Corrupt(if &magic == other {
                "the file holds the other party's state"
            } else {
                "not a GKK12 ORAM state (or a version this build does not read)"
            }));
        }
        let items = r.u64()?;
        let payload_bits = r.usize()?;
        let bucket = r.usize()?;
        let trees = r.usize()?;
        let params = Params::new(items, payload_bits, bucket, trees)
            .map_err(|_| StateError::Corrupt("parameters out of range"))?;
        let sparse = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err(StateError::Corrupt("the sparse flag is neither 0 nor 1")),
        };
        Ok((r, params, sparse))
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), StateError> {
        self.input.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                StateError::Corrupt("the file ends early")
            } else {
                StateError::Io(e)
            }
        })?;
        self.hash.update(buf);
        Ok(())
    }

    pub(crate) fn u8(&mut self) -> Result<u8, StateError> {
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    pub(crate) fn u64(&mut self) -> Result<u64, StateError> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn usize(&mut self) -> Result<usize, StateError> {
        usize::try_from(self.u64()?).map_err(|_| StateError::Corrupt("a size beyond this host"))
    }

    pub(crate) fn block(&mut self) -> Result<Block, StateError> {
        let mut b = [0u8; 16];
        self.fill(&mut b)?;
        Ok(Block::from_le_bytes(b))
    }

    /// A count that must be `len`, then that many blocks.
    pub(crate) fn blocks(&mut self, len: usize) -> Result<Vec<Block>, StateError> {
        if self.u64()? != len as u64 {
            return Err(StateError::Corrupt(
                "the base map's size is not its parameters'",
            ));
        }
        self.values(len, "the base map", Block::from_le_bytes)
    }

    /// `len` numbers.
    pub(crate) fn u64_vec(&mut self, len: usize) -> Result<Vec<u64>, StateError> {
        self.values(len, "a tree's nonces", u64::from_le_bytes)
    }

    /// `len` bytes.
    pub(crate) fn byte_vec(&mut self, len: usize) -> Result<Vec<u8>, StateError> {
        let mut out: Vec<u8> = Vec::new();
        while out.len() < len {
            let k = PIECE_BYTES.min(len - out.len());
            out.try_reserve(k).map_err(|_| StateError::TooLarge {
                what: "a tree's ciphertexts",
            })?;
            let at = out.len();
            out.resize(at + k, 0);
            self.fill(&mut out[at..])?;
        }
        Ok(out)
    }

    /// `len` values of `W` bytes each, decoded by `decode`, read piece by piece.
    fn values<const W: usize, T>(
        &mut self,
        len: usize,
        what: &'static str,
        decode: impl Fn([u8; W]) -> T,
    ) -> Result<Vec<T>, StateError> {
        let per = PIECE_BYTES / W;
        let mut out = Vec::new();
        let mut buf = vec![0u8; W * per.min(len)];
        while out.len() < len {
            let k = per.min(len - out.len());
            let b = &mut buf[..W * k];
            self.fill(b)?;
            out.try_reserve(k)
                .map_err(|_| StateError::TooLarge { what })?;
            out.extend(b.chunks_exact(W).map(|c| {
                let mut a = [0u8; W];
                a.copy_from_slice(c);
                decode(a)
            }));
        }
        Ok(out)
    }

    /// Checks the digest and that the file ends there.
    pub(crate) fn finish(self) -> Result<(), StateError> {
        let digest = self.hash.finalize();
        let mut stored = [0u8; 32];
        self.input.read_exact(&mut stored).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                StateError::Corrupt("the file ends early")
            } else {
                StateError::Io(e)
            }
        })?;
        if digest.as_bytes() != &stored {
            return Err(StateError::Corrupt(
                "the digest does not match: the file is damaged",
            ));
        }
        let mut more = [0u8; 1];
        if self.input.read(&mut more)? != 0 {
            return Err(StateError::Corrupt("data after the digest"));
        }
        Ok(())
    }
}

/// A server's state read back from its file: resume it with
/// [`Server::resume`](crate::driver::Server::resume).
pub struct SavedServer {
    pub(crate) state: crate::driver::ServerState,
    pub(crate) delta: Block,
    pub(crate) and_gates: u64,
}

impl std::fmt::Debug for SavedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedServer")
            .field("params", &self.state.params)
            .finish_non_exhaustive()
    }
}

impl SavedServer {
    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.state.params
    }

    /// Δ: the resumed server's OT extension must be set up with it.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// AND gates garbled under Δ before the save: the resumed garbler's next tweak index.
    pub fn and_gates(&self) -> u64 {
        self.and_gates
    }
}

/// A client's state read back from its file: resume it with
/// [`Client::resume`](crate::driver::Client::resume).
pub struct SavedClient {
    pub(crate) state: crate::driver::ClientState,
    pub(crate) and_gates: u64,
}

impl std::fmt::Debug for SavedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedClient")
            .field("params", &self.state.params)
            .finish_non_exhaustive()
    }
}

impl SavedClient {
    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.state.params
    }

    /// AND gates evaluated before the save (the server's count, if the files belong together).
    pub fn and_gates(&self) -> u64 {
        self.and_gates
    }
}

/// Bits of the base map.
pub(crate) fn base_len(params: &Params) -> usize {
    params.base_entries() as usize * params.base_entry_bits() as usize
}

/// Reads a server's state file ([`Server::save`](crate::driver::Server::save)).
///
/// # Errors
/// [`StateError`]: an unreadable, damaged or foreign file, or one too large for this host.
pub fn read_server(input: &mut dyn Read) -> Result<SavedServer, StateError> {
    let (mut r, params, sparse) = StateReader::new(input, Role::Server)?;
    let delta = r.block()?;
    if delta & 1 == 0 {
        return Err(StateError::Corrupt("Δ's lowest bit is not set"));
    }
    let and_gates = r.u64()?;
    let next_nonce = r.u64()?;
    let zero = r.block()?;
    let base = r.blocks(base_len(&params))?;
    let mut trees = Vec::with_capacity(params.trees());
    for i in 0..params.trees() {
        let g = params.tree(i);
        let bits = g.bucket * crate::circuits::SlotCodec::new(&params, i).slot_bits();
        trees.push(crate::storage::EncTree::read_state(
            &mut r,
            g.buckets(),
            bits,
            next_nonce,
        )?);
    }
    r.finish()?;
    Ok(SavedServer {
        state: crate::driver::ServerState {
            params,
            trees,
            base,
            zero,
            next_nonce,
            sparse,
        },
        delta,
        and_gates,
    })
}

/// Reads a client's state file ([`Client::save`](crate::driver::Client::save)).
///
/// # Errors
/// As [`read_server`].
pub fn read_client(input: &mut dyn Read) -> Result<SavedClient, StateError> {
    let (mut r, params, sparse) = StateReader::new(input, Role::Client)?;
    let mut key = [0u8; 16];
    for k in &mut key {
        *k = r.u8()?;
    }
    let and_gates = r.u64()?;
    let last_nonce = r.u64()?;
    let zero = r.block()?;
    let base = r.blocks(base_len(&params))?;
    r.finish()?;
    Ok(SavedClient {
        state: crate::driver::ClientState {
            params,
            key: crate::storage::PadKey::new(key),
            base,
            zero,
            last_nonce,
            sparse,
        },
        and_gates,
    })
}
