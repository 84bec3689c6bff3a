//! The TLS 1.3 record layer (RFC 8446 §5) for established links.
//!
//! rustls runs the handshake and the hello exchange; then the traffic secrets are taken out of
//! rustls (its documented "kernel connection" hand-off, as used for kTLS) and each direction of
//! the link is driven by this module. That lets each side encrypt and decrypt in place in its
//! own buffers: the sender copies plaintext once into its output buffer, seals it there and
//! hands it to the socket; the receiver reads ciphertext straight into a large buffer, opens it
//! in place and copies the plaintext once into the frame being assembled. This is what brings
//! TLS to over 1 GB/s on loopback.
//!
//! Records are ordinary TLS 1.3 application-data records: 5-byte header `17 03 03 len`, then
//! the AEAD encryption of `content ‖ content_type` under the nonce `iv ⊕ seq` with the header
//! as associated data. Content per record is at most 2^14 bytes. The receiver accepts
//! application data and a `close_notify` alert; any other alert or a post-handshake handshake
//! message (the listener never sends session tickets or key updates) ends the link with an
//! error. A sender stops after 2^24 records under one AES-GCM key (about 275 GB), well below
//! the cipher's confidentiality limit.

use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use ring::aead::{
    AES_128_GCM, AES_256_GCM, Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey,
};
use rustls::ConnectionTrafficSecrets;

use crate::frame::{FRAME_HEADER_BYTES, PayloadSource};
use crate::session::FrameSink;

const HEADER: usize = 5;
const TAG: usize = 16;
const MAX_CONTENT: usize = 1 << 14;
/// Largest ciphertext a peer may send (RFC 8446: 2^14 + 256).
const MAX_CIPHERTEXT: usize = MAX_CONTENT + 256;
const APPLICATION_DATA: u8 = 23;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
/// Sealed records buffered before one socket write (16 records).
const WRITE_BATCH: usize = 16 * (HEADER + MAX_CONTENT + 1 + TAG);
/// Receive buffer: many records per read system call.
const READ_BUFFER: usize = 512 << 10;

/// One direction's AEAD key, IV and record sequence number.
pub(crate) struct Keys {
    key: LessSafeKey,
    iv: [u8; 12],
    seq: u64,
    limit: u64,
}

impl Keys {
    pub fn new(seq: u64, secrets: ConnectionTrafficSecrets) -> io::Result<Keys> {
        let (alg, key, iv, limit) = match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&AES_128_GCM, key, iv, 1 << 24),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&AES_256_GCM, key, iv, 1 << 24),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&CHACHA20_POLY1305, key, iv, u64::MAX)
            }
            _ => return Err(io::Error::other("negotiated cipher suite is not supported")),
        };
        let key = UnboundKey::new(alg, key.as_ref())
            .map_err(|_| io::Error::other("bad traffic key length"))?;
        let iv: [u8; 12] = iv
            .as_ref()
            .try_into()
            .map_err(|_| io::Error::other("bad traffic IV length"))?;
        Ok(Keys {
            key: LessSafeKey::new(key),
            iv,
            seq,
            limit,
        })
    }

    /// The nonce of the next record (`iv ⊕ seq`), advancing the sequence number.
    fn next_nonce(&mut self) -> io::Result<Nonce> {
        if self.seq >= self.limit {
            return Err(io::Error::other(
                "record limit of the traffic key reached; reconnect",
            ));
        }
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        self.seq += 1;
        Ok(Nonce::assume_unique_for_key(nonce))
    }
}

fn record_header(len: usize) -> [u8; HEADER] {
    // `len` ≤ MAX_CONTENT + 1 + TAG < 2^16.
    let [hi, lo] = (len as u16).to_be_bytes();
    [APPLICATION_DATA, 3, 3, hi, lo]
}

/// The sending half of a TLS link.
pub(crate) struct RecordWriter {
    keys: Keys,
    sock: TcpStream,
    buf: Vec<u8>,
}

impl RecordWriter {
    pub fn new(keys: Keys, sock: TcpStream) -> RecordWriter {
        RecordWriter {
            keys,
            sock,
            buf: Vec::with_capacity(WRITE_BATCH),
        }
    }

    /// Appends one sealed record carrying `parts` (≤ MAX_CONTENT bytes in total) of type `ty`.
    fn seal(&mut self, parts: &[&[u8]], ty: u8) -> io::Result<()> {
        let content: usize = parts.iter().map(|p| p.len()).sum();
        let start = self.buf.len();
        self.buf
            .extend_from_slice(&record_header(content + 1 + TAG));
        for p in parts {
            self.buf.extend_from_slice(p);
        }
        self.buf.push(ty);
        let nonce = self.keys.next_nonce()?;
        let (header, body) = self.buf[start..].split_at_mut(HEADER);
        let tag = self
            .keys
            .key
            .seal_in_place_separate_tag(nonce, Aad::from(&*header), body)
            .map_err(|_| io::Error::other("record encryption failed"))?;
        self.buf.extend_from_slice(tag.as_ref());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        use std::io::Write;
        let r = self.sock.write_all(&self.buf);
        self.buf.clear();
        r
    }
}

impl FrameSink for RecordWriter {
    fn write_frame(&mut self, header: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()> {
        // The first record carries the frame header and the start of the payload.
        let first = payload.len().min(MAX_CONTENT - FRAME_HEADER_BYTES);
        let (head, rest) = payload.split_at(first);
        self.seal(&[header, head], APPLICATION_DATA)?;
        for chunk in rest.chunks(MAX_CONTENT) {
            if self.buf.len() + HEADER + chunk.len() + 1 + TAG > WRITE_BATCH {
                self.flush()?;
            }
            self.seal(&[chunk], APPLICATION_DATA)?;
        }
        self.flush()
    }

    fn close(&mut self) {
        // close_notify (warning level), best effort and quick.
        if self.seal(&[&[1, 0]], ALERT).is_ok() {
            let _ = self
                .sock
                .set_write_timeout(Some(Duration::from_millis(100)));
            let _ = self.flush();
        }
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, TlsRecordError(msg.into()))
}

/// A record-layer protocol violation (surfaced as [`NetError::Tls`](crate::NetError::Tls)).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TlsRecordError(pub String);

/// The receiving half of a TLS link: a byte stream of decrypted application data.
pub(crate) struct RecordReader {
    keys: Keys,
    sock: TcpStream,
    buf: Vec<u8>,
    /// Unprocessed ciphertext is `buf[start..end]`.
    start: usize,
    end: usize,
    /// Decrypted, not yet consumed plaintext is `buf[plain..plain_end]`.
    plain: usize,
    plain_end: usize,
    eof: bool,
}

impl RecordReader {
    /// `pending` holds bytes already read from `sock` (after the handshake) but not processed.
    pub fn new(keys: Keys, sock: TcpStream, pending: &[u8]) -> RecordReader {
        let mut buf = vec![0u8; READ_BUFFER.max(pending.len())];
        buf[..pending.len()].copy_from_slice(pending);
        RecordReader {
            keys,
            sock,
            buf,
            start: 0,
            end: pending.len(),
            plain: 0,
            plain_end: 0,
            eof: false,
        }
    }

    /// Reads until `buf[start..end]` holds at least `need` bytes; false at a clean end of
    /// stream with nothing buffered.
    fn fill(&mut self, need: usize) -> io::Result<bool> {
        if self.start + need > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end - self.start < need {
            match self.sock.read(&mut self.buf[self.end..]) {
                Ok(0) if self.end == self.start => return Ok(false),
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection ended inside a TLS record",
                    ));
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Decrypts the next record in place; returns false at the end of the stream.
    fn next_record(&mut self) -> io::Result<bool> {
        if !self.fill(HEADER)? {
            return Ok(false);
        }
        let h = &self.buf[self.start..self.start + HEADER];
        let (ty, version, len) = (
            h[0],
            [h[1], h[2]],
            usize::from(u16::from_be_bytes([h[3], h[4]])),
        );
        if ty != APPLICATION_DATA || version != [3, 3] {
            return Err(invalid(format!(
                "unexpected TLS record type {ty} version {version:?}"
            )));
        }
        if !(TAG + 1..=MAX_CIPHERTEXT).contains(&len) {
            return Err(invalid(format!("TLS record length {len} out of range")));
        }
        if !self.fill(HEADER + len)? {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection ended inside a TLS record",
            ));
        }
        let nonce = self.keys.next_nonce()?;
        let body_start = self.start + HEADER;
        let (header, rest) = self.buf[self.start..].split_at_mut(HEADER);
        let opened = self
            .keys
            .key
            .open_in_place(nonce, Aad::from(&*header), &mut rest[..len])
            .map_err(|_| invalid("TLS record failed authentication"))?;
        // Strip padding; the last non-zero byte is the content type.
        let Some(type_at) = opened.iter().rposition(|&b| b != 0) else {
            return Err(invalid("TLS record without content type"));
        };
        let inner_type = opened[type_at];
        self.start += HEADER + len;
        match inner_type {
            APPLICATION_DATA => {
                self.plain = body_start;
                self.plain_end = body_start + type_at;
                Ok(true)
            }
            ALERT if self.buf[body_start..body_start + type_at] == [1, 0] => Ok(false),
            ALERT => Err(invalid(format!(
                "peer sent TLS alert {:?}",
                &self.buf[body_start..body_start + type_at]
            ))),
            HANDSHAKE => Err(invalid("unexpected post-handshake message")),
            t => Err(invalid(format!("unexpected TLS content type {t}"))),
        }
    }
}

impl RecordReader {
    /// The decrypted bytes not yet consumed (empty at the end of the stream).
    fn plaintext(&mut self) -> io::Result<&[u8]> {
        while self.plain == self.plain_end {
            if self.eof || !self.next_record()? {
                self.eof = true;
                break;
            }
        }
        Ok(&self.buf[self.plain..self.plain_end])
    }
}

impl Read for RecordReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.plaintext()?;
        let n = out.len().min(avail.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.plain += n;
        Ok(n)
    }
}

impl PayloadSource for RecordReader {
    fn append_to(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let avail = self.plaintext()?;
        let n = max.min(avail.len());
        out.extend_from_slice(&avail[..n]);
        self.plain += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::crypto::cipher::{AeadKey, Iv};
    use std::net::TcpListener;

    fn keys() -> Keys {
        let secrets = ConnectionTrafficSecrets::Aes256Gcm {
            key: AeadKey::from([7u8; 32]),
            iv: Iv::from([9; 12]),
        };
        Keys::new(5, secrets).unwrap()
    }

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn frames_roundtrip_across_record_boundaries() {
        let (a, b) = pair();
        let mut w = RecordWriter::new(keys(), a);
        let payload: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let hdr = [1u8; FRAME_HEADER_BYTES];
        let t = std::thread::spawn(move || {
            w.write_frame(&hdr, &payload).unwrap();
            w.write_frame(&hdr, &[]).unwrap();
            w.close();
        });
        let mut r = RecordReader::new(keys(), b, &[]);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        t.join().unwrap();
        assert_eq!(got.len(), 2 * FRAME_HEADER_BYTES + 100_000);
        assert_eq!(&got[..FRAME_HEADER_BYTES], &[1u8; FRAME_HEADER_BYTES]);
        assert!(
            got[FRAME_HEADER_BYTES..][..100_000]
                .iter()
                .enumerate()
                .all(|(i, &b)| b == i as u8)
        );
    }

    #[test]
    fn tampered_or_foreign_records_are_rejected() {
        let (a, b) = pair();
        let mut w = RecordWriter::new(keys(), a.try_clone().unwrap());
        w.seal(&[b"hello"], APPLICATION_DATA).unwrap();
        let last = w.buf.len() - 1;
        w.buf[last] ^= 1;
        w.flush().unwrap();
        let mut r = RecordReader::new(keys(), b, &[]);
        let e = r.read(&mut [0u8; 8]).unwrap_err();
        assert!(e.to_string().contains("authentication"), "{e}");

        let (a, b) = pair();
        let mut a2 = a;
        use std::io::Write;
        a2.write_all(&[22, 3, 3, 0, 40]).unwrap();
        let mut r = RecordReader::new(keys(), b, &[]);
        assert!(
            r.read(&mut [0u8; 8])
                .unwrap_err()
                .to_string()
                .contains("record type 22")
        );

        // A record replayed out of order fails (the sequence number is in the nonce).
        let (a, b) = pair();
        let mut w = RecordWriter::new(keys(), a);
        w.seal(&[b"one"], APPLICATION_DATA).unwrap();
        let first = w.buf.clone();
        w.buf.extend_from_slice(&first);
        w.flush().unwrap();
        let mut r = RecordReader::new(keys(), b, &[]);
        let mut got = [0u8; 3];
        r.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"one");
        assert!(r.read(&mut got).is_err());
    }
}
