//! Roles and wire messages.
//!
//! Every message is one frame; its first byte is a tag. Client → server:
//!
//! | tag | message | body | to |
//! | --- | --- | --- | --- |
//! | 0x01 | hello | protocol version (u8) | all |
//! | 0x02 | begin | — | S_2 |
//! | 0x03 | fetch | instance id (u64) | S_0, S_1 |
//! | 0x04 | shift | instance id (u64), Δ (u32) | S_0, S_1 |
//! | 0x05 | clear | index i (u64) | S_T only (fallback) |
//!
//! Server → client: 0x11 info (role, [`DbInfo`]), 0x12 view pair (S_2: id, both views with one
//! copy of the G outputs), 0x13 view (S_b: id, full view), 0x14 answer (id, ⟨z⟩^j_b, ⟨y⟩^j_b
//! for every chunk j), 0x15 record (the record in the clear), 0x1f refused (reason code).
//! Server → server (offline, S_2 → S_b only): 0x21 partial view (id, partial view).

use std::fmt;

use doram_core::PartyId;
use doram_field::Fp64;

use crate::PirError;
use crate::codec::{Reader, Writer, get_full, get_pair, put_full, put_pair};
use crate::db::DbInfo;
use crate::dpf::{FullView, Holder, PartialView};

/// Protocol version carried in the hello.
pub const PROTOCOL_VERSION: u8 = 1;

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
}

/// A decoded client request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Hello(u8),
    Begin,
    Fetch(u64),
    Shift(u64, u32),
    Clear(u64),
}

pub(crate) fn encode_request(r: Request) -> Vec<u8> {
    let mut w = Writer::with_capacity(16);
    match r {
        Request::Hello(v) => w.u8(HELLO).u8(v),
        Request::Begin => w.u8(BEGIN),
        Request::Fetch(id) => w.u8(FETCH).u64(id),
        Request::Shift(id, d) => w.u8(SHIFT).u64(id).u32(d),
        Request::Clear(i) => w.u8(CLEAR).u64(i),
    };
    w.0
}

pub(crate) fn decode_request(bytes: &[u8]) -> Result<Request, PirError> {
    let mut r = Reader::new(bytes, "request");
    let req = match r.u8()? {
        HELLO => Request::Hello(r.u8()?),
        BEGIN => Request::Begin,
        FETCH => Request::Fetch(r.u64()?),
        SHIFT => Request::Shift(r.u64()?, r.u32()?),
        CLEAR => Request::Clear(r.u64()?),
        t => return Err(r.err(format!("unknown tag {t:#x}"))),
    };
    r.finish()?;
    Ok(req)
}

pub(crate) fn encode_info(role: ServerId, info: &DbInfo) -> Vec<u8> {
    let mut w = Writer::with_capacity(64);
    w.u8(INFO).u8(role.index() as u8);
    info.put(&mut w);
    w.0
}

pub(crate) fn encode_pair(id: u64, views: [&FullView; 2]) -> Vec<u8> {
    let mut w = Writer::with_capacity(4096);
    w.u8(PAIR).u64(id);
    put_pair(&mut w, views);
    w.0
}

pub(crate) fn encode_view(id: u64, view: &FullView) -> Vec<u8> {
    let mut w = Writer::with_capacity(2048);
    w.u8(VIEW).u64(id);
    put_full(&mut w, view);
    w.0
}

pub(crate) fn encode_answer(id: u64, values: &[Fp64]) -> Vec<u8> {
    let mut w = Writer::with_capacity(9 + 8 * values.len());
    w.u8(ANSWER).u64(id);
    for v in values {
        w.fp(*v);
    }
    w.0
}

pub(crate) fn encode_record(record: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(1 + record.len());
    w.u8(RECORD).bytes(record);
    w.0
}

pub(crate) fn encode_refused(code: Refusal) -> Vec<u8> {
    vec![REFUSED, code as u8]
}

pub(crate) fn encode_offline(id: u64, partial: &PartialView) -> Vec<u8> {
    let mut w = Writer::with_capacity(1024);
    w.u8(OFFLINE).u64(id);
    crate::codec::put_inputs(&mut w, &partial.inputs);
    crate::codec::put_outputs(&mut w, &partial.outputs);
    w.0
}

pub(crate) fn decode_offline(bytes: &[u8], n: usize) -> Result<(u64, PartialView), PirError> {
    let mut r = Reader::new(bytes, "offline message");
    if r.u8()? != OFFLINE {
        return Err(r.err("not a partial view"));
    }
    let id = r.u64()?;
    let partial = PartialView {
        inputs: crate::codec::get_inputs(&mut r, n)?,
        outputs: crate::codec::get_outputs(&mut r, n)?,
    };
    r.finish()?;
    Ok((id, partial))
}

/// Opens a server message, expecting `tag`; a refusal or another tag is an error.
fn open<'a>(bytes: &'a [u8], tag: u8, what: &'static str) -> Result<Reader<'a>, PirError> {
    let mut r = Reader::new(bytes, what);
    match r.u8()? {
        t if t == tag => Ok(r),
        REFUSED => {
            let code = r.u8().unwrap_or(0);
            Err(r.err(format!("refused (code {code})")))
        }
        t => Err(r.err(format!("unexpected tag {t:#x}"))),
    }
}

pub(crate) fn decode_info(bytes: &[u8]) -> Result<(u8, DbInfo), PirError> {
    let mut r = open(bytes, INFO, "database description")?;
    let role = r.u8()?;
    let info = DbInfo::get(&mut r)?;
    r.finish()?;
    Ok((role, info))
}

pub(crate) fn decode_pair(bytes: &[u8], n: usize) -> Result<(u64, [FullView; 2]), PirError> {
    let mut r = open(bytes, PAIR, "view pair")?;
    let id = r.u64()?;
    let views = get_pair(&mut r, n)?;
    r.finish()?;
    Ok((id, views))
}

pub(crate) fn decode_view(bytes: &[u8], n: usize) -> Result<(u64, FullView), PirError> {
    let mut r = open(bytes, VIEW, "full view")?;
    let id = r.u64()?;
    let view = get_full(&mut r, n)?;
    r.finish()?;
    Ok((id, view))
}

pub(crate) fn decode_answer(bytes: &[u8], chunks: usize) -> Result<(u64, Vec<Fp64>), PirError> {
    let mut r = open(bytes, ANSWER, "answer")?;
    let id = r.u64()?;
    let values = (0..2 * chunks)
        .map(|_| r.fp())
        .collect::<Result<Vec<_>, _>>()?;
    r.finish()?;
    Ok((id, values))
}

pub(crate) fn decode_record(bytes: &[u8], record_size: usize) -> Result<Vec<u8>, PirError> {
    let mut r = open(bytes, RECORD, "record")?;
    let rec = r.take(record_size)?.to_vec();
    r.finish()?;
    Ok(rec)
}
