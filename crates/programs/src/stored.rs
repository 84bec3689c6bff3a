//! A binary-search database loaded once by two parties and searched in many later runs:
//! GKK12's amortised setting over its tree ORAM ([`crate::two_tree`]), the ORAM's state kept
//! by each party in a directory of its own between runs.
//!
//! # Runs
//! [`run_search`] with the same [`Store`] at each party:
//! * **No database stored at either party**: the owner gives the sorted array; it is loaded
//!   (the sorted load, or GKK12 Figure 1 for up to 64 words not 0), the keys are searched,
//!   and each party stores its state: generation 1.
//! * **The same database stored at both** (same identity, same generation): the owner gives
//!   no array; each party resumes its ORAM over fresh OT extensions, the keys are searched,
//!   and each stores the new state: generation + 1.
//! * Anything else is refused at both parties before an access: one party without a
//!   database, different databases or generations, the owner giving an array while one is
//!   stored, a store left marked in use, or a store another run holds (each run takes an OS
//!   lock on its store's `lock` file for its whole length; the OS drops it with the process).
//!
//! # Why a store is never used twice from the same generation
//! An access reveals to `P0` the leaf its item was mapped to, then maps it to a fresh one. A
//! party that went back to an older state (say, after the peer had already saved the next
//! one, or after a run that failed midway) would reveal those leaves again, and `P0` would
//! see which items the two runs share. So before its first access a run marks its store in
//! use (a file `in-use`, synced), and only a saved new generation clears the mark. A run that
//! stops in between leaves the mark, and both parties refuse that database from then on
//! (fail closed): load it again into fresh stores.
//!
//! # Files
//! `search.db`: a header (magic, party, the database's 16-byte identity, generation, n, this
//! party's additive shares of the engine's probe tables, a BLAKE3 digest), then the ORAM's
//! state ([`doram_gkk12::persist`]). A new generation is written to `search.db.new`, synced
//! and renamed over the old one. The directory is created with mode 0700 and the files with
//! 0600 on Unix: `P0`'s holds ciphertexts, Δ and labels, `P1`'s the pad key and labels; each
//! alone shows nothing of the data, both together everything.

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_net::Session;
use doram_twopc::arith::Share;

use crate::binary_search::{
    MAX_KEYS, MAX_N, SearchOutput, check_batch_inputs, engine_levels, input_tables,
    open_many_output, plan_many, search_many,
};
use crate::error::ProgramError;
use crate::host::Host;
use crate::ram::Ram;
use crate::roles::{PartyRun, Roles, agree_on_run, announce_size};
use crate::two_tree::{Machine2Tree, TreeMemory};

/// The program name the parties agree on.
pub const STORED_NAME: &str = "binary-search-stored";

const MAGIC: &[u8; 16] = b"doram-search-db1";
const FILE: &str = "search.db";
const NEW_FILE: &str = "search.db.new";
const IN_USE: &str = "in-use";
/// Locked (an OS file lock, released when the process ends) while a run uses the store.
const LOCK: &str = "lock";
/// Bytes of a status message: flags, identity, generation, n, nonce.
const STATUS_BYTES: usize = 1 + 16 + 8 + 8 + 16;

/// One party's directory holding its side of a stored database.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// What a store's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Header {
    me: PartyId,
    id: [u8; 16],
    generation: u64,
    n: u64,
    tables: Vec<Fp>,
}

/// What each party tells the other before the run: its store and whether it gives data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Status {
    stored: bool,
    in_use: bool,
    /// The store holds the other party's side.
    foreign: bool,
    /// Another run holds the store's lock.
    busy: bool,
    has_data: bool,
    id: [u8; 16],
    generation: u64,
    n: u64,
    nonce: [u8; 16],
}

fn store_err(msg: impl Into<String>) -> ProgramError {
    ProgramError::Store(msg.into())
}

fn io_err(path: &Path, e: std::io::Error) -> ProgramError {
    store_err(format!("{}: {e}", path.display()))
}

impl Store {
    /// The store in `dir`, created (mode 0700 on Unix) if it does not exist.
    ///
    /// # Errors
    /// [`ProgramError::Store`] if the directory cannot be created or is not a directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Store, ProgramError> {
        let dir = dir.into();
        if !dir.exists() {
            let mut b = fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            b.create(&dir).map_err(|e| io_err(&dir, e))?;
        }
        if !dir.is_dir() {
            return Err(store_err(format!("{} is not a directory", dir.display())));
        }
        Ok(Store { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The stored generation, if a database is stored (its header read and checked).
    ///
    /// # Errors
    /// [`ProgramError::Store`] for an unreadable or damaged header.
    pub fn generation(&self) -> Result<Option<u64>, ProgramError> {
        Ok(self.header()?.map(|h| h.generation))
    }

    /// Whether a run left the store marked in use.
    pub fn in_use(&self) -> bool {
        self.path(IN_USE).exists()
    }

    /// The header, if a database is stored.
    fn header(&self) -> Result<Option<Header>, ProgramError> {
        let path = self.path(FILE);
        match File::open(&path) {
            Ok(f) => {
                Ok(Some(read_header(&mut BufReader::new(f)).map_err(|e| {
                    store_err(format!("{}: {e}", path.display()))
                })?))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&path, e)),
        }
    }

    /// Takes the store's lock for this run: `None` if another run holds it. The OS releases
    /// it when the file is closed or the process ends, so a crash leaves no stale lock.
    fn lock(&self) -> Result<Option<File>, ProgramError> {
        let path = self.path(LOCK);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        match f.try_lock() {
            Ok(()) => Ok(Some(f)),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(io_err(&path, e)),
        }
    }

    /// Marks the store in use (synced) before a run's first access.
    fn mark_in_use(&self, generation: u64) -> Result<(), ProgramError> {
        let path = self.path(IN_USE);
        let mut f = private_file(&path)?;
        f.write_all(format!("generation {generation}\n").as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| io_err(&path, e))?;
        sync_dir(&self.dir)
    }

    /// Writes the header and the ORAM's state as the new generation, then clears the mark.
    fn save(&self, header: &Header, memory: &TreeMemory) -> Result<(), ProgramError> {
        let tmp = self.path(NEW_FILE);
        let file = private_file(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write_header(&mut w, header).map_err(|e| io_err(&tmp, e))?;
        memory
            .save(&mut w)
            .map_err(|e| store_err(format!("{}: {e}", tmp.display())))?;
        let file = w.into_inner().map_err(|e| io_err(&tmp, e.into_error()))?;
        file.sync_all().map_err(|e| io_err(&tmp, e))?;
        drop(file);
        let path = self.path(FILE);
        fs::rename(&tmp, &path).map_err(|e| io_err(&path, e))?;
        sync_dir(&self.dir)?;
        let mark = self.path(IN_USE);
        match fs::remove_file(&mark) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&mark, e)),
        }
        sync_dir(&self.dir)
    }
}

/// A new file readable by its owner only (0600 on Unix), truncated if it exists.
fn private_file(path: &Path) -> Result<File, ProgramError> {
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).map_err(|e| io_err(path, e))
}

/// Makes a rename or a new file in `dir` durable (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> Result<(), ProgramError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn write_header(w: &mut dyn Write, h: &Header) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(64 + 16 * h.tables.len());
    buf.extend_from_slice(MAGIC);
    buf.push(h.me.index() as u8);
    buf.extend_from_slice(&h.id);
    buf.extend_from_slice(&h.generation.to_le_bytes());
    buf.extend_from_slice(&h.n.to_le_bytes());
    buf.extend_from_slice(&(h.tables.len() as u64).to_le_bytes());
    for t in &h.tables {
        buf.extend_from_slice(&t.to_le_bytes());
    }
    let digest = blake3::hash(&buf);
    w.write_all(&buf)?;
    w.write_all(digest.as_bytes())
}

/// The most table entries a header may hold: the tables of [`engine_levels`] levels.
const MAX_TABLE_ENTRIES: u64 = 1 << 15;

fn read_header(r: &mut dyn Read) -> Result<Header, String> {
    let mut buf = Vec::new();
    let take = |r: &mut dyn Read, n: usize, buf: &mut Vec<u8>| -> Result<Vec<u8>, String> {
        let mut b = vec![0u8; n];
        r.read_exact(&mut b).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "the file ends early".to_string()
            } else {
                e.to_string()
            }
        })?;
        buf.extend_from_slice(&b);
        Ok(b)
    };
    let u64_at = |b: &[u8]| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        u64::from_le_bytes(a)
    };
    let fixed = take(r, 16 + 1 + 16 + 8 + 8 + 8, &mut buf)?;
    if &fixed[..16] != MAGIC {
        return Err(
            "not a stored binary-search database (or a version this build does not read)".into(),
        );
    }
    let me = match fixed[16] {
        0 => PartyId::P0,
        1 => PartyId::P1,
        _ => return Err("the party is neither P0 nor P1".into()),
    };
    let mut id = [0u8; 16];
    id.copy_from_slice(&fixed[17..33]);
    let generation = u64_at(&fixed[33..41]);
    let n = u64_at(&fixed[41..49]);
    let count = u64_at(&fixed[49..57]);
    if n == 0 || n > MAX_N || count > MAX_TABLE_ENTRIES {
        return Err("sizes out of range".into());
    }
    let raw = take(r, 16 * count as usize, &mut buf)?;
    let mut tables = Vec::with_capacity(count as usize);
    for c in raw.chunks_exact(16) {
        let mut a = [0u8; 16];
        a.copy_from_slice(c);
        tables.push(Fp::from_le_bytes(a).map_err(|_| "a table share is not below p")?);
    }
    let mut digest = [0u8; 32];
    r.read_exact(&mut digest)
        .map_err(|_| "the header ends early".to_string())?;
    if blake3::hash(&buf).as_bytes() != &digest {
        return Err("the header's digest does not match: the file is damaged".into());
    }
    Ok(Header {
        me,
        id,
        generation,
        n,
        tables,
    })
}

impl Status {
    fn encode(&self) -> [u8; STATUS_BYTES] {
        let mut b = [0u8; STATUS_BYTES];
        b[0] = u8::from(self.stored)
            | u8::from(self.in_use) << 1
            | u8::from(self.has_data) << 2
            | u8::from(self.foreign) << 3
            | u8::from(self.busy) << 4;
        b[1..17].copy_from_slice(&self.id);
        b[17..25].copy_from_slice(&self.generation.to_le_bytes());
        b[25..33].copy_from_slice(&self.n.to_le_bytes());
        b[33..49].copy_from_slice(&self.nonce);
        b
    }

    fn decode(peer: PartyId, b: &[u8]) -> Result<Status, ProgramError> {
        let bad = |what| doram_core::wire::PeerFault::malformed(peer, "store status", what);
        if b.len() != STATUS_BYTES {
            return Err(bad("wrong length").into());
        }
        if b[0] >> 5 != 0 {
            return Err(bad("unknown flags").into());
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(&b[1..17]);
        let mut g = [0u8; 8];
        g.copy_from_slice(&b[17..25]);
        let mut n = [0u8; 8];
        n.copy_from_slice(&b[25..33]);
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&b[33..49]);
        Ok(Status {
            stored: b[0] & 1 == 1,
            in_use: b[0] & 2 == 2,
            has_data: b[0] & 4 == 4,
            foreign: b[0] & 8 == 8,
            busy: b[0] & 16 == 16,
            id,
            generation: u64::from_le_bytes(g),
            n: u64::from_le_bytes(n),
            nonce,
        })
    }
}

/// What the run does, decided alike at both parties from the two statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    /// Load the owner's array, then store generation 1.
    Load,
    /// Resume the stored generation.
    Resume,
}

/// What to do with the two statuses: both parties hold both whole, so both decide alike (and
/// both refuse alike).
fn decide(me: PartyId, ours: &Status, theirs: &Status, owner: PartyId) -> Result<Decision, String> {
    let (p0, p1) = if me == PartyId::P0 {
        (ours, theirs)
    } else {
        (theirs, ours)
    };
    let owner_has_data = if owner == PartyId::P0 {
        p0.has_data
    } else {
        p1.has_data
    };
    for (p, s) in [("P0", p0), ("P1", p1)] {
        if s.busy {
            return Err(format!("{p}'s store is in use by another run"));
        }
        if s.foreign {
            return Err(format!("{p}'s store holds the other party's side"));
        }
        if s.in_use {
            return Err(format!(
                "a run on {p}'s store did not finish: its state may have been used and cannot \
                 be resumed safely; load the database again into fresh stores"
            ));
        }
    }
    match (p0.stored, p1.stored) {
        (false, false) if owner_has_data => Ok(Decision::Load),
        (false, false) => Err("no database is stored and the owner gives no array".into()),
        (true, true) if (p0.id, p0.generation, p0.n) == (p1.id, p1.generation, p1.n) => {
            if owner_has_data {
                Err(
                    "a database is stored; the owner's array would not be used (load new \
                     data into fresh stores)"
                        .into(),
                )
            } else {
                Ok(Decision::Resume)
            }
        }
        (true, true) if p0.id != p1.id => Err("P0 and P1 store different databases".into()),
        (true, true) => Err(format!(
            "the stores are at different generations (P0 {}, P1 {}): one party saved a run \
             the other did not; neither may go back, so load the database again",
            p0.generation, p1.generation
        )),
        (true, false) => Err("only P0 has a stored database".into()),
        (false, true) => Err("only P1 has a stored database".into()),
    }
}

/// Sends this party's status and receives the peer's: one round.
fn exchange(session: &mut Session, ours: &Status) -> Result<Status, ProgramError> {
    let peer = if session.me() == PartyId::P0 {
        PartyId::P1
    } else {
        PartyId::P0
    };
    session.send_bytes(peer, &ours.encode())?;
    let got = session.recv_bytes(peer)?;
    Status::decode(peer, &got)
}

/// One party's run of the batched binary search on a stored database ([module docs](self)):
/// the owner passes `Some(sorted entries)` to load a database into empty stores, `None` to
/// search a stored one; the querier `Some(keys)`. The receiver gets one output per key.
///
/// # Errors
/// [`ProgramError::Store`] at both parties for the cases the module docs list, and for a
/// store that cannot be read or written; [`ProgramError::Input`] for wrong role inputs (before
/// sending); transport, engine and ORAM errors. After an error past the first access the
/// store stays marked in use.
pub fn run_search(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    store: &Store,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
) -> Result<PartyRun<Vec<SearchOutput>>, ProgramError> {
    let me = session.me();
    if data.is_some() {
        check_batch_inputs(me, &roles, data, keys, 2)?;
    } else {
        check_batch_inputs(me, &roles, (me == roles.owner).then_some(&[1]), keys, 2)?;
    }
    if data.is_some_and(<[u64]>::is_empty) {
        return Err(store_err("a stored database holds at least one entry"));
    }
    agree_on_run(&mut session, STORED_NAME, Machine2Tree::BACKEND, &roles)?;
    // Held until the run returns: no other run reads or writes the store meanwhile.
    let lock = store.lock()?;
    let busy = lock.is_none();
    let header = if busy { None } else { store.header()? };
    let foreign = header.as_ref().is_some_and(|h| h.me != me);
    // Public: a one-way function of the seed, apart from everything the machine draws.
    let mut nonce = [0u8; 16];
    nonce.copy_from_slice(
        &blake3::keyed_hash(
            &blake3::derive_key("doram stored database nonce", &seed.0),
            &[],
        )
        .as_bytes()[..16],
    );
    let ours = Status {
        stored: header.is_some(),
        in_use: !busy && store.in_use(),
        foreign,
        busy,
        has_data: data.is_some(),
        id: header.as_ref().map_or([0; 16], |h| h.id),
        generation: header.as_ref().map_or(0, |h| h.generation),
        n: header.as_ref().map_or(0, |h| h.n),
        nonce,
    };
    let theirs = exchange(&mut session, &ours)?;
    let decision = decide(me, &ours, &theirs, roles.owner).map_err(store_err)?;
    let (id, generation, n) = match (&decision, &header) {
        (Decision::Resume, Some(h)) => (h.id, h.generation, h.n as usize),
        _ => {
            let n = announce_size(
                &mut session,
                roles.owner,
                data.map(<[u64]>::len),
                MAX_N,
                "n",
            )?;
            if n == 0 {
                return Err(store_err("a stored database holds at least one entry"));
            }
            let (a, b) = if me == PartyId::P0 {
                (ours.nonce, theirs.nonce)
            } else {
                (theirs.nonce, ours.nonce)
            };
            let mut h = blake3::Hasher::new();
            h.update(b"doram stored database id");
            h.update(&a);
            h.update(&b);
            let mut id = [0u8; 16];
            id.copy_from_slice(&h.finalize().as_bytes()[..16]);
            (id, 0, n)
        }
    };
    let k = announce_size(
        &mut session,
        roles.querier,
        keys.map(<[u64]>::len),
        MAX_KEYS,
        "the number of keys",
    )?;
    let mut m = Machine2Tree::setup(session, seed)?;
    let work = Machine2Tree::access_work();
    let p = plan_many(n, k, work);
    m.preprocess_bits(p.bits)?;
    let keys = Host::input_vector(&mut m, roles.querier, keys, k)?;
    let levels = engine_levels(n);
    let (tables, array) = match (decision, header) {
        (Decision::Resume, Some(h)) => {
            if h.tables.len() != (1 << levels) - 1 {
                return Err(store_err("the stored probe tables do not fit the database"));
            }
            let flat: Vec<Share> = h.tables.iter().map(|&x| Share::from_raw(x)).collect();
            let tables = (0..levels)
                .map(|j| flat[(1 << j) - 1..(1 << (j + 1)) - 1].to_vec())
                .collect::<Vec<_>>();
            store.mark_in_use(generation)?;
            let path = store.path(FILE);
            let file = File::open(&path).map_err(|e| io_err(&path, e))?;
            let mut r = BufReader::with_capacity(1 << 20, file);
            let again = read_header(&mut r).map_err(store_err)?;
            if again != h {
                return Err(store_err("the store changed during the run"));
            }
            let array = m.boot_resumed(|ctx| TreeMemory::resume(ctx, &mut r, n))?;
            (tables, array)
        }
        _ => {
            let tables = input_tables(&mut m, roles.owner, data, levels)?;
            let array = Host::alloc_input(&mut m, roles.owner, data, n)?;
            Host::boot(&mut m, p.accesses)?;
            (tables, array)
        }
    };
    let results = search_many(&mut m, array, &keys, &tables)?;
    let output = open_many_output(&mut m, roles.receiver, n, &results)?;
    let header = Header {
        me,
        id,
        generation: generation + 1,
        n: n as u64,
        tables: tables.iter().flatten().map(|s| s.raw()).collect(),
    };
    let memory = m
        .memory()
        .ok_or(ProgramError::Misuse("the memory is not booted"))?;
    store.save(&header, memory)?;
    Ok(m.finish(output))
}
