//! The wire format shared by every backend.
//!
//! A frame is a 12-byte header followed by the payload:
//!
//! | bytes | field | meaning |
//! |-------|-------|---------|
//! | 0..4   | `len`   | payload length, `u32` little-endian, at most the session's `max_frame_bytes` |
//! | 4..9   | `ts`    | the sender's Lamport timestamp, 40 bits little-endian, at least 1 |
//! | 9      | `seq`   | the frame's sequence number on its link `sender → receiver`, mod 256 |
//! | 10..12 | `phase` | the sender's [`Phase`](crate::Phase) when it sent the frame, `u16` little-endian |
//!
//! The receiver checks `seq` and `phase` in [`Session::recv_bytes`](crate::Session::recv_bytes);
//! see the crate documentation. A frame with sequence number 0 in phase 0 (the first frame of
//! every link of a protocol that declares no phases) has the same bytes as a frame of the
//! original 12-byte header of a `u32` length and a `u64` timestamp.
//!
//! The header is the only framing overhead counted in [`LinkStats`](crate::LinkStats); TLS record
//! overhead is not counted. A receiver rejects a header whose length exceeds its limit before
//! allocating anything for the payload.

use std::io::{self, Read};

use doram_core::PartyId;
use doram_core::wire::PeerFault;

use crate::NetError;

/// Bytes of framing added to every payload.
pub const FRAME_HEADER_BYTES: usize = 12;

/// A step of a protocol as the transport checks it: two bytes that every frame carries.
///
/// A protocol that declares phases gives each a value (usually a `const`) and calls
/// [`Session::set_wire_phase`](crate::Session::set_wire_phase) at each step; a frame received
/// in another phase than the one it was sent in is [`NetError::WrongPhase`] naming the sender.
/// A phase may also name the data a step works on (e.g. the preprocessing material it
/// consumes), so that two parties working on different data fail at once. Protocols that
/// declare none stay in [`Phase::DEFAULT`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Phase(pub u16);

impl Phase {
    /// The phase every session starts in.
    pub const DEFAULT: Phase = Phase(0);
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "phase {}", self.0)
    }
}

/// Upper bound on the payload buffer allocated up front for one frame; larger frames grow their
/// buffer as the bytes actually arrive, so an announced length alone commits at most this much.
const PREALLOC_LIMIT: usize = 16 << 20;

/// The largest Lamport timestamp a header carries (40 bits, 10^12 rounds); a sender's clock
/// saturates there.
pub(crate) const MAX_TS: u64 = (1 << 40) - 1;

/// What a frame header says about its frame besides the length: when it was sent (Lamport
/// timestamp), where it stands on its link (sequence number) and in which phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The sender's Lamport timestamp (at most [`MAX_TS`]).
    pub ts: u64,
    /// The frame's sequence number on its link, mod 256.
    pub seq: u8,
    /// The sender's phase.
    pub phase: u16,
}

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// Payload length in bytes.
    pub len: u32,
    /// Timestamp, sequence number and phase.
    pub stamp: Stamp,
}

impl Header {
    /// The wire encoding.
    pub fn encode(self) -> [u8; FRAME_HEADER_BYTES] {
        let Stamp { ts, seq, phase } = self.stamp;
        let mut out = [0u8; FRAME_HEADER_BYTES];
        out[..4].copy_from_slice(&self.len.to_le_bytes());
        out[4..9].copy_from_slice(&ts.min(MAX_TS).to_le_bytes()[..5]);
        out[9] = seq;
        out[10..].copy_from_slice(&phase.to_le_bytes());
        out
    }

    /// Parses and checks a header against the receiver's frame limit.
    pub fn decode(bytes: &[u8; FRAME_HEADER_BYTES], limit: u32) -> Result<Header, FrameError> {
        let [l0, l1, l2, l3, t0, t1, t2, t3, t4, seq, f0, f1] = *bytes;
        let len = u32::from_le_bytes([l0, l1, l2, l3]);
        let ts = u64::from_le_bytes([t0, t1, t2, t3, t4, 0, 0, 0]);
        let phase = u16::from_le_bytes([f0, f1]);
        if len > limit {
            return Err(FrameError::TooLarge { len, limit });
        }
        if ts == 0 {
            return Err(FrameError::Malformed(
                "frame carries Lamport timestamp 0".into(),
            ));
        }
        Ok(Header {
            len,
            stamp: Stamp { ts, seq, phase },
        })
    }
}

/// A frame as received: its stamp and the payload.
#[derive(Debug)]
pub(crate) struct RawFrame {
    pub stamp: Stamp,
    pub payload: Vec<u8>,
}

/// A frame-level failure, before the peer is attached.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// The header announced more than the limit.
    TooLarge { len: u32, limit: u32 },
    /// The stream ended inside a frame.
    Truncated { expected: usize, got: usize },
    /// The header is inconsistent.
    Malformed(String),
    /// The byte stream failed.
    Io(io::Error),
}

impl FrameError {
    /// The session-level error for a failure on the link from `peer`.
    pub fn into_net(self, peer: PartyId, timeout: std::time::Duration) -> NetError {
        match self {
            FrameError::TooLarge { len, limit } => NetError::FrameTooLarge {
                peer,
                len: len.into(),
                limit: limit.into(),
            },
            FrameError::Truncated { expected, got } => PeerFault::malformed(
                peer,
                "a frame",
                format!("connection ended inside a frame ({got} of {expected} bytes received)"),
            )
            .into(),
            FrameError::Malformed(reason) => PeerFault::malformed(peer, "a frame", reason).into(),
            FrameError::Io(err) => NetError::from_io(peer, err, timeout),
        }
    }
}

fn is_eof(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::UnexpectedEof
}

/// Reads into `buf` until it is full or the stream ends; returns the bytes read.
fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> Result<usize, FrameError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_eof(&e) => break,
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(got)
}

/// A byte stream that frames are read from.
pub(crate) trait PayloadSource: Read {
    /// Appends at most `max` bytes to `out`, returning how many (0 at the end of the stream).
    ///
    /// Goes through `Read::take(..).read_to_end`, which lets sockets write straight into the
    /// vector's spare capacity.
    fn append_to(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        Read::take(&mut *self, max as u64).read_to_end(out)
    }
}

impl PayloadSource for std::io::BufReader<std::net::TcpStream> {}
impl PayloadSource for &[u8] {}

impl<P: PayloadSource + ?Sized> PayloadSource for Box<P> {
    fn append_to(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        (**self).append_to(out, max)
    }
}

/// Reads one frame from a byte stream. `Ok(None)` is a clean end of stream at a frame boundary.
pub(crate) fn read_frame<R: PayloadSource + ?Sized>(
    r: &mut R,
    limit: u32,
) -> Result<Option<RawFrame>, FrameError> {
    read_frame_with(r, || limit)
}

/// [`read_frame`] with the limit asked for once the header has arrived, so that a limit lowered
/// while the reader waited applies to that frame.
pub(crate) fn read_frame_with<R: PayloadSource + ?Sized>(
    r: &mut R,
    limit: impl FnOnce() -> u32,
) -> Result<Option<RawFrame>, FrameError> {
    let mut hdr = [0u8; FRAME_HEADER_BYTES];
    let got = read_full(r, &mut hdr)?;
    if got == 0 {
        return Ok(None);
    }
    if got < FRAME_HEADER_BYTES {
        return Err(FrameError::Truncated {
            expected: FRAME_HEADER_BYTES,
            got,
        });
    }
    let header = Header::decode(&hdr, limit())?;
    let len = header.len as usize;
    // Capacity beyond PREALLOC_LIMIT is only added as bytes actually arrive.
    let mut payload = Vec::with_capacity(len.min(PREALLOC_LIMIT));
    while payload.len() < len {
        let missing = len - payload.len();
        match r.append_to(&mut payload, missing) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_eof(&e) => break,
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    let got = payload.len();
    if got < len {
        return Err(FrameError::Truncated {
            expected: FRAME_HEADER_BYTES + len,
            got: FRAME_HEADER_BYTES + got,
        });
    }
    Ok(Some(RawFrame {
        stamp: header.stamp,
        payload,
    }))
}

/// Incremental decoder for a byte stream delivered in arbitrary pieces (the in-process backend
/// feeds it tampered wire bytes so that faults surface exactly as they would over a socket).
#[derive(Debug)]
pub(crate) struct StreamDecoder {
    buf: Vec<u8>,
    limit: u32,
    failed: bool,
}

impl StreamDecoder {
    pub fn new(limit: u32) -> Self {
        StreamDecoder {
            buf: Vec::new(),
            limit,
            failed: false,
        }
    }

    /// Lowers the limit for frames whose header has not been decoded yet.
    pub fn lower_limit(&mut self, limit: u32) {
        self.limit = self.limit.min(limit);
    }

    /// Appends bytes and returns every frame (or the first error) they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Result<RawFrame, FrameError>> {
        let mut out = Vec::new();
        if self.failed {
            return out;
        }
        self.buf.extend_from_slice(bytes);
        let mut pos = 0;
        while let Some(hdr) = self.buf.get(pos..pos + FRAME_HEADER_BYTES) {
            let mut h = [0u8; FRAME_HEADER_BYTES];
            h.copy_from_slice(hdr);
            let header = match Header::decode(&h, self.limit) {
                Ok(header) => header,
                Err(e) => {
                    self.failed = true;
                    self.buf = Vec::new();
                    out.push(Err(e));
                    return out;
                }
            };
            let start = pos + FRAME_HEADER_BYTES;
            let Some(payload) = self.buf.get(start..start + header.len as usize) else {
                break;
            };
            out.push(Ok(RawFrame {
                stamp: header.stamp,
                payload: payload.to_vec(),
            }));
            pos = start + header.len as usize;
        }
        self.buf.drain(..pos);
        out
    }

    /// Ends the stream: an error if it stopped inside a frame.
    pub fn finish(&mut self) -> Option<FrameError> {
        if self.failed || self.buf.is_empty() {
            return None;
        }
        self.failed = true;
        let got = self.buf.len();
        let expected = match self.buf.get(..4) {
            Some(l) => FRAME_HEADER_BYTES + u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize,
            None => FRAME_HEADER_BYTES,
        };
        self.buf = Vec::new();
        Some(FrameError::Truncated { expected, got })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: u32, ts: u64) -> Header {
        Header {
            len,
            stamp: Stamp {
                ts,
                seq: 0,
                phase: 0,
            },
        }
    }

    fn wire(len: u32, ts: u64, payload: &[u8]) -> Vec<u8> {
        let mut v = header(len, ts).encode().to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn header_roundtrip_and_limits() {
        let h = header(5, 9);
        assert_eq!(Header::decode(&h.encode(), 5).unwrap(), h);
        // Sequence number 0 in phase 0: the bytes of a `u32` length and a `u64` timestamp.
        let mut old = 5u32.to_le_bytes().to_vec();
        old.extend_from_slice(&9u64.to_le_bytes());
        assert_eq!(h.encode()[..], old[..]);
        let full = Header {
            len: 7,
            stamp: Stamp {
                ts: MAX_TS,
                seq: 200,
                phase: 0x1234,
            },
        };
        assert_eq!(Header::decode(&full.encode(), 7).unwrap(), full);
        // A clock beyond 48 bits saturates.
        let big = Header {
            stamp: Stamp {
                ts: u64::MAX,
                ..full.stamp
            },
            ..full
        };
        assert_eq!(Header::decode(&big.encode(), 7).unwrap(), full);
        assert!(matches!(
            Header::decode(&h.encode(), 4),
            Err(FrameError::TooLarge { len: 5, limit: 4 })
        ));
        assert!(matches!(
            Header::decode(&header(1, 0).encode(), 4),
            Err(FrameError::Malformed(_))
        ));
    }

    #[test]
    fn read_frame_handles_eof_and_truncation() {
        let mut bytes = wire(3, 1, b"abc");
        bytes.extend(wire(0, 2, b""));
        let mut r = &bytes[..];
        let f = read_frame(&mut r, 10).unwrap().unwrap();
        assert_eq!((f.stamp.ts, f.payload.as_slice()), (1, &b"abc"[..]));
        let f = read_frame(&mut r, 10).unwrap().unwrap();
        assert_eq!((f.stamp.ts, f.payload.len()), (2, 0));
        assert!(read_frame(&mut r, 10).unwrap().is_none());

        let bytes = wire(3, 1, b"ab");
        assert!(matches!(
            read_frame(&mut &bytes[..], 10),
            Err(FrameError::Truncated {
                expected: 15,
                got: 14
            })
        ));
        assert!(matches!(
            read_frame(&mut &bytes[..5], 10),
            Err(FrameError::Truncated {
                expected: 12,
                got: 5
            })
        ));
    }

    #[test]
    fn stream_decoder_reassembles_pieces() {
        let mut all = wire(3, 1, b"abc");
        all.extend(wire(2, 1, b"de"));
        let mut dec = StreamDecoder::new(100);
        let mut frames = Vec::new();
        for piece in all.chunks(5) {
            frames.extend(dec.feed(piece).into_iter().map(|f| f.unwrap().payload));
        }
        assert_eq!(frames, vec![b"abc".to_vec(), b"de".to_vec()]);
        assert!(dec.finish().is_none());

        let mut dec = StreamDecoder::new(100);
        assert!(dec.feed(&wire(3, 1, b"a")).is_empty());
        assert!(matches!(
            dec.finish(),
            Some(FrameError::Truncated {
                expected: 15,
                got: 13
            })
        ));

        let mut dec = StreamDecoder::new(2);
        let out = dec.feed(&wire(3, 1, b"abc"));
        assert!(matches!(
            out.as_slice(),
            [Err(FrameError::TooLarge { len: 3, limit: 2 })]
        ));
        assert!(dec.feed(&wire(1, 1, b"a")).is_empty());
    }
}
