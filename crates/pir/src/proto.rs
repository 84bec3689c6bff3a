//! Roles and wire messages.
//!
//! Every message is one frame; its first byte is a tag. Client → server:
//!
//! | tag | message | body | to |
//! | --- | --- | --- | --- |
//! | 0x01 | hello | protocol version (u8) | all |
//! | 0x02 | begin | nonce (u64) | S_2 |
//! | 0x03 | fetch | nonce, instance id (u128), hold (u32, ms) | S_0, S_1 |
//! | 0x04 | shift | nonce, Δ (u32), for the instance fetched on the connection | S_0, S_1 |
//! | 0x05 | clear | nonce, index i (u64) | S_T only (fallback) |
//!
//! Server → client: 0x11 info (role, [`DbInfo`]), 0x12 view pair (S_2: nonce, instance id,
//! both views with one copy of the G outputs), 0x13 view (S_b: nonce, full view), 0x14 answer
//! (nonce, ⟨z⟩^j_b, ⟨y⟩^j_b for every chunk j), 0x15 record (nonce, i, the record in the
//! clear, its authentication path in the database's Merkle tree), 0x1f refused (nonce, reason
//! code).
//! Server → server (offline, S_2 → S_b only): 0x21 partial view (id, partial view).
//!
//! # Freshness
//! The client draws a random 64-bit nonce per request and every reply but the info echoes the
//! nonce of the request it answers, so a reply to an earlier request (one that arrived after the
//! client gave up on it) is recognised as stale and skipped. Instance ids are random 128-bit
//! values drawn by S_2; a fetch names the instance, and S_b answers only for that instance.
//! The fetch also says how long S_b must hold the instance for the shift (the client's time
//! left), so a slow other holder cannot make an honest one drop it. The view and the answer
//! carry no instance id: their nonce binds them to the fetch and shift, and the shift is for
//! the instance fetched on the same connection (a holder answering for another instance fails
//! the view comparison or the MAC check).

use std::fmt;

use doram_core::PartyId;
use doram_field::Fp64;

use crate::PirError;
use crate::codec::{
    Reader, Writer, full_view_bytes, get_full, get_pair, pair_bytes, partial_view_bytes, put_full,
    put_pair,
};
use crate::db::{DB_INFO_BYTES, DbInfo};
use crate::dpf::{FullView, Holder, PartialView};

/// Protocol version carried in the hello.
pub const PROTOCOL_VERSION: u8 = 2;

pub(crate) const HELLO: u8 = 0x01;
pub(crate) const BEGIN: u8 = 0x02;
pub(crate) const FETCH: u8 = 0x03;
pub(crate) const SHIFT: u8 = 0x04;
pub(crate) const CLEAR: u8 = 0x05;
pub(crate) const INFO: u8 = 0x11;
pub(crate) const PAIR: u8 = 0x12;
pub(crate) const VIEW: u8 = 0x13;
pub(crate) const ANSWER: u8 = 0x14;
pub(crate) const RECORD: u8 = 0x15;
pub(crate) const REFUSED: u8 = 0x1f;
pub(crate) const OFFLINE: u8 = 0x21;

/// One of the three servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerId {
    /// S_0, first DPF key holder.
    S0,
    /// S_1, second DPF key holder.
    S1,
    /// S_2, the dealer that generates the keys in its head.
    S2,
}

impl ServerId {
    /// All three, in order.
    pub const ALL: [ServerId; 3] = [ServerId::S0, ServerId::S1, ServerId::S2];

    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            ServerId::S0 => 0,
            ServerId::S1 => 1,
            ServerId::S2 => 2,
        }
    }

    /// The server with index `i`.
    pub fn from_index(i: usize) -> Option<ServerId> {
        ServerId::ALL.get(i).copied()
    }

    /// The party id of this server in the servers' mesh and in the configuration.
    pub fn party(self) -> PartyId {
        PartyId::ALL[self.index()]
    }

    /// The DPF key holder this server is, if it is S_0 or S_1.
    pub fn holder(self) -> Option<Holder> {
        match self {
            ServerId::S0 => Some(Holder::Zero),
            ServerId::S1 => Some(Holder::One),
            ServerId::S2 => None,
        }
    }

    /// The server holding key `h`.
    pub fn of_holder(h: Holder) -> ServerId {
        match h {
            Holder::Zero => ServerId::S0,
            Holder::One => ServerId::S1,
        }
    }
}

impl fmt::Display for ServerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S{}", self.index())
    }
}

/// Why a server refused a request (code of a refused message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Refusal {
    /// The request is not one this server serves (e.g. begin sent to S_0).
    WrongRole = 1,
    /// The offline instance is not available.
    Unavailable = 2,
    /// The offline instance was already used.
    Reused = 3,
    /// A shift for an instance that was not fetched on this connection.
    NotFetched = 4,
    /// The index is out of range.
    OutOfRange = 5,
    /// The request did not decode.
    BadRequest = 6,
    /// S_b: the partial view for this instance repeats the randomness of an earlier one (S_2
    /// replayed it), so it was not used.
    Replayed = 7,
}

impl Refusal {
    /// The refusal with code `c`.
    pub fn from_code(c: u8) -> Option<Refusal> {
        Some(match c {
            1 => Refusal::WrongRole,
            2 => Refusal::Unavailable,
            3 => Refusal::Reused,
            4 => Refusal::NotFetched,
            5 => Refusal::OutOfRange,
            6 => Refusal::BadRequest,
            7 => Refusal::Replayed,
            _ => return None,
        })
    }
}

/// A request nonce: drawn at random by the client per request, echoed by the reply. It only
/// has to be unique among the requests on one connection (it is no secret; TLS already stops
/// replays by the network), so 64 bits suffice.
pub(crate) type Nonce = u64;

/// A decoded client request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Hello(u8),
    Begin {
        nonce: Nonce,
    },
    Fetch {
        nonce: Nonce,
        id: u128,
        hold_ms: u32,
    },
    Shift {
        nonce: Nonce,
        delta: u32,
    },
    Clear {
        nonce: Nonce,
        index: u64,
    },
}

impl Request {
    /// The request's nonce (0 for the hello).
    pub(crate) fn nonce(&self) -> Nonce {
        match *self {
            Request::Hello(_) => 0,
            Request::Begin { nonce }
            | Request::Fetch { nonce, .. }
            | Request::Shift { nonce, .. }
            | Request::Clear { nonce, .. } => nonce,
        }
    }
}

pub(crate) fn encode_request(r: Request) -> Vec<u8> {
    let mut w = Writer::with_capacity(32);
    match r {
        Request::Hello(v) => w.u8(HELLO).u8(v),
        Request::Begin { nonce } => w.u8(BEGIN).u64(nonce),
        Request::Fetch { nonce, id, hold_ms } => w.u8(FETCH).u64(nonce).u128(id).u32(hold_ms),
        Request::Shift { nonce, delta } => w.u8(SHIFT).u64(nonce).u32(delta),
        Request::Clear { nonce, index } => w.u8(CLEAR).u64(nonce).u64(index),
    };
    w.0
}

pub(crate) fn decode_request(bytes: &[u8]) -> Result<Request, PirError> {
    let mut r = Reader::new(bytes, "request");
    let req = match r.u8()? {
        HELLO => Request::Hello(r.u8()?),
        BEGIN => Request::Begin { nonce: r.u64()? },
        FETCH => Request::Fetch {
            nonce: r.u64()?,
            id: r.u128()?,
            hold_ms: r.u32()?,
        },
        SHIFT => Request::Shift {
            nonce: r.u64()?,
            delta: r.u32()?,
        },
        CLEAR => Request::Clear {
            nonce: r.u64()?,
            index: r.u64()?,
        },
        t => return Err(r.err(format!("unknown tag {t:#x}"))),
    };
    r.finish()?;
    Ok(req)
}

pub(crate) fn encode_info(role: ServerId, info: &DbInfo) -> Vec<u8> {
    let mut w = Writer::with_capacity(128);
    w.u8(INFO).u8(role.index() as u8);
    info.put(&mut w);
    w.0
}

pub(crate) fn encode_pair(nonce: Nonce, id: u128, views: [&FullView; 2]) -> Vec<u8> {
    let mut w = Writer::with_capacity(4096);
    w.u8(PAIR).u64(nonce).u128(id);
    put_pair(&mut w, views);
    w.0
}

pub(crate) fn encode_view(nonce: Nonce, view: &FullView) -> Vec<u8> {
    let mut w = Writer::with_capacity(2048);
    w.u8(VIEW).u64(nonce);
    put_full(&mut w, view);
    w.0
}

pub(crate) fn encode_answer(nonce: Nonce, values: &[Fp64]) -> Vec<u8> {
    let mut w = Writer::with_capacity(9 + 8 * values.len());
    w.u8(ANSWER).u64(nonce);
    for v in values {
        w.fp(*v);
    }
    w.0
}

pub(crate) fn encode_record(nonce: Nonce, index: u64, record: &[u8], path: &[[u8; 32]]) -> Vec<u8> {
    let mut w = Writer::with_capacity(18 + record.len() + 32 * path.len());
    w.u8(RECORD).u64(nonce).u64(index).bytes(record);
    w.u8(path.len() as u8);
    for h in path {
        w.bytes(h);
    }
    w.0
}

pub(crate) fn encode_refused(nonce: Nonce, code: Refusal) -> Vec<u8> {
    let mut w = Writer::with_capacity(10);
    w.u8(REFUSED).u64(nonce).u8(code as u8);
    w.0
}

pub(crate) fn encode_offline(id: u128, partial: &PartialView) -> Vec<u8> {
    let mut w = Writer::with_capacity(1024);
    w.u8(OFFLINE).u128(id);
    crate::codec::put_inputs(&mut w, &partial.inputs);
    crate::codec::put_outputs(&mut w, &partial.outputs);
    w.0
}

pub(crate) fn decode_offline(bytes: &[u8], n: usize) -> Result<(u128, PartialView), PirError> {
    let mut r = Reader::new(bytes, "offline message");
    if r.u8()? != OFFLINE {
        return Err(r.err("not a partial view"));
    }
    let id = r.u128()?;
    let partial = PartialView {
        inputs: crate::codec::get_inputs(&mut r, n)?,
        outputs: crate::codec::get_outputs(&mut r, n)?,
    };
    r.finish()?;
    Ok((id, partial))
}

/// The size of an offline message (tag, instance id, partial view) for a domain of 2^n: the
/// largest frame on the servers' mesh.
pub(crate) fn offline_bytes(n: usize) -> usize {
    17 + partial_view_bytes(n)
}

/// The largest message a server sends to a client of the database `info`: the description,
/// the view pair, a view, an answer, a record with its authentication path, or a refusal.
/// The client bounds its links to this once the database is agreed.
pub(crate) fn largest_reply(info: &DbInfo) -> usize {
    let n = usize::from(info.domain_bits);
    let description = 2 + DB_INFO_BYTES;
    let pair = 25 + pair_bytes(n);
    let view = 9 + full_view_bytes(n);
    let answer = 9 + 16 * info.chunks();
    let record = 18 + info.record_size as usize + 32 * n;
    let refusal = 10;
    description
        .max(pair)
        .max(view)
        .max(answer)
        .max(record)
        .max(refusal)
}

/// The nonce a server reply answers, if it is a reply that carries one (everything but the
/// info) and is long enough to hold it.
pub(crate) fn reply_nonce(bytes: &[u8]) -> Option<Nonce> {
    match bytes.first() {
        Some(&(PAIR | VIEW | ANSWER | RECORD | REFUSED)) => {
            let n: [u8; 8] = bytes.get(1..9)?.try_into().ok()?;
            Some(Nonce::from_le_bytes(n))
        }
        _ => None,
    }
}

/// A server's reply: the expected message, or a refusal.
#[derive(Debug)]
pub(crate) enum Reply<T> {
    Ok(T),
    Refused(Option<Refusal>),
}

/// Opens a server reply, expecting `tag` and skipping the nonce (checked by the caller with
/// [`reply_nonce`]); `Ok(None)` for a refusal (its code in the second element).
fn open<'a>(
    bytes: &'a [u8],
    tag: u8,
    what: &'static str,
) -> Result<Result<Reader<'a>, Option<Refusal>>, PirError> {
    let mut r = Reader::new(bytes, what);
    match r.u8()? {
        t if t == tag => {
            r.u64()?;
            Ok(Ok(r))
        }
        REFUSED => {
            r.u64()?;
            let code = r.u8()?;
            r.finish()?;
            Ok(Err(Refusal::from_code(code)))
        }
        t => Err(r.err(format!("unexpected tag {t:#x}"))),
    }
}

pub(crate) fn decode_info(bytes: &[u8]) -> Result<(u8, DbInfo), PirError> {
    let mut r = Reader::new(bytes, "database description");
    match r.u8()? {
        INFO => {}
        t => return Err(r.err(format!("unexpected tag {t:#x}"))),
    }
    let role = r.u8()?;
    let info = DbInfo::get(&mut r)?;
    r.finish()?;
    Ok((role, info))
}

pub(crate) fn decode_pair(
    bytes: &[u8],
    n: usize,
) -> Result<Reply<(u128, [FullView; 2])>, PirError> {
    let mut r = match open(bytes, PAIR, "view pair")? {
        Ok(r) => r,
        Err(code) => return Ok(Reply::Refused(code)),
    };
    let id = r.u128()?;
    let views = get_pair(&mut r, n)?;
    r.finish()?;
    Ok(Reply::Ok((id, views)))
}

pub(crate) fn decode_view(bytes: &[u8], n: usize) -> Result<Reply<FullView>, PirError> {
    let mut r = match open(bytes, VIEW, "full view")? {
        Ok(r) => r,
        Err(code) => return Ok(Reply::Refused(code)),
    };
    let view = get_full(&mut r, n)?;
    r.finish()?;
    Ok(Reply::Ok(view))
}

pub(crate) fn decode_answer(bytes: &[u8], chunks: usize) -> Result<Reply<Vec<Fp64>>, PirError> {
    let mut r = match open(bytes, ANSWER, "answer")? {
        Ok(r) => r,
        Err(code) => return Ok(Reply::Refused(code)),
    };
    let values = (0..2 * chunks)
        .map(|_| r.fp())
        .collect::<Result<Vec<_>, _>>()?;
    r.finish()?;
    Ok(Reply::Ok(values))
}

/// A record in the clear with its authentication path.
pub(crate) struct ClearRecord {
    pub index: u64,
    pub record: Vec<u8>,
    pub path: Vec<[u8; 32]>,
}

pub(crate) fn decode_record(
    bytes: &[u8],
    record_size: usize,
    max_path: usize,
) -> Result<Reply<ClearRecord>, PirError> {
    let mut r = match open(bytes, RECORD, "record")? {
        Ok(r) => r,
        Err(code) => return Ok(Reply::Refused(code)),
    };
    let index = r.u64()?;
    let record = r.take(record_size)?.to_vec();
    let len = usize::from(r.u8()?);
    if len > max_path {
        return Err(r.err(format!("authentication path of {len} hashes")));
    }
    let mut path = Vec::with_capacity(len);
    for _ in 0..len {
        let mut h = [0u8; 32];
        h.copy_from_slice(r.take(32)?);
        path.push(h);
    }
    r.finish()?;
    Ok(Reply::Ok(ClearRecord {
        index,
        record,
        path,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Database;
    use crate::dpf;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Every message fits the frame bound derived for it, and the bound is reached.
    #[test]
    fn frame_bounds_are_exact() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let dbs = [
            Database::from_u64s(&[u64::MAX, 1, 2]).unwrap(),
            Database::from_bytes(1, &[7]).unwrap(),
            Database::from_bytes(20, &[3; 20 * 100]).unwrap(),
            Database::from_bytes(1000, &[0xff; 1000 * 5]).unwrap(),
            Database::from_bytes(4, &[1; 4 * 1500]).unwrap(),
        ];
        for db in dbs {
            let info = db.info();
            let n = info.domain_bits;
            let g = dpf::generate(n, &mut rng);
            let [v0, v1] = &g.views;
            let offline = encode_offline(u128::MAX, &v0.partial());
            assert_eq!(offline.len(), offline_bytes(usize::from(n)));
            let (rec, path) = db.record_with_path(db.len() - 1).unwrap();
            let replies = [
                encode_info(ServerId::S2, &info),
                encode_pair(1, u128::MAX, [v0, v1]),
                encode_view(1, v1),
                encode_answer(1, &vec![Fp64::ZERO; 2 * info.chunks()]),
                encode_record(1, db.len() - 1, &rec, &path),
                encode_refused(1, Refusal::NotFetched),
            ];
            let largest = replies.iter().map(Vec::len).max().unwrap();
            assert_eq!(largest, largest_reply(&info), "{info:?}");
        }
    }
}
