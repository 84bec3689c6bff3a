//! TLS records on established links, by rustls.
//!
//! After the handshake and the hello exchange, rustls keeps running each connection: it seals
//! and opens the records, checks their limits and order, answers a `KeyUpdate`, reports alerts,
//! and tells a `close_notify` from a cut connection. Two shapes:
//!
//! * A party-to-party link uses each TCP connection in one direction (the dialling side only
//!   writes, the listening side only reads), so each end owns its connection outright:
//!   [`TlsWriter`] writes frames, and the reader is the setup's [`TlsIo`] itself, which reads
//!   plaintext through rustls.
//! * A service connection carries both directions, written by the session and read by its
//!   reader thread: [`DuplexWriter`] and [`DuplexReader`] share the rustls connection under a
//!   lock that is never held during socket I/O. Records leave in the order rustls sealed them
//!   because the socket's write lock is taken before the connection's lock is released.
//!
//! Plaintext goes to rustls in pieces of [`CHUNK`] bytes, so a large frame never sits sealed
//! in memory all at once; a frame's 12-byte header rides in its first record, copied with at
//! most one record's worth of the payload.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rustls::Connection;

use crate::frame::{FRAME_HEADER_BYTES, PayloadSource};
use crate::session::FrameSink;
use crate::tls::{TlsIo, flush_tls as flush};

/// Plaintext handed to rustls at once (sixteen full records), and what a link's writer lets
/// rustls hold sealed: each socket write then takes up to this much.
pub(crate) const CHUNK: usize = 16 << 14;
/// The first piece of a frame: its header and the payload's first bytes, one full record.
const FIRST_PIECE: usize = 1 << 14;
/// Ciphertext read from a shared socket at once.
const READ_PIECE: usize = 1 << 14;

/// The sealed records rustls holds, taken out.
fn take_sealed(conn: &mut Connection) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flush(conn, &mut out)?;
    Ok(out)
}

/// Calls `send` on the frame's bytes in pieces of at most [`CHUNK`], the header joined to the
/// first piece (of at most [`FIRST_PIECE`]).
fn in_chunks(
    header: &[u8; FRAME_HEADER_BYTES],
    payload: &[u8],
    scratch: &mut Vec<u8>,
    mut send: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let first = payload.len().min(FIRST_PIECE - FRAME_HEADER_BYTES);
    scratch.clear();
    scratch.extend_from_slice(header);
    scratch.extend_from_slice(&payload[..first]);
    send(scratch)?;
    payload[first..].chunks(CHUNK).try_for_each(send)
}

/// The writing end of a one-direction link.
pub(crate) struct TlsWriter {
    conn: Connection,
    sock: TcpStream,
    scratch: Vec<u8>,
    /// Plaintext of a frame not yet handed to rustls because the socket was full.
    pending: Vec<u8>,
}

impl TlsWriter {
    pub fn new(mut conn: Connection, sock: TcpStream) -> TlsWriter {
        conn.set_buffer_limit(Some(CHUNK));
        TlsWriter {
            conn,
            sock,
            scratch: Vec::with_capacity(FIRST_PIECE),
            pending: Vec::new(),
        }
    }
}

/// A socket writer that never waits: a full socket is [`io::ErrorKind::WouldBlock`].
struct NoWait<'a>(&'a TcpStream);

impl Write for NoWait<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match crate::writer::send_nowait(self.0, &[buf])? {
            Some(0) => Err(io::ErrorKind::WouldBlock.into()),
            Some(n) => Ok(n),
            None => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes the records rustls has sealed as far as the socket takes them without waiting;
/// `false` if some are left.
fn drain_nowait(conn: &mut Connection, sock: &TcpStream) -> io::Result<bool> {
    while conn.wants_write() {
        match conn.write_tls(&mut NoWait(sock)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Hands `data` to rustls and writes what it seals, until all of it is on the socket.
fn send_all(conn: &mut Connection, sock: &mut TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let n = conn.writer().write(data)?;
        if n == 0 && !conn.wants_write() {
            return Err(io::ErrorKind::WriteZero.into());
        }
        data = &data[n..];
        flush(conn, sock)?;
    }
    Ok(())
}

impl FrameSink for TlsWriter {
    fn write_frame(&mut self, header: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()> {
        let (conn, sock) = (&mut self.conn, &mut self.sock);
        in_chunks(header, payload, &mut self.scratch, |d| {
            send_all(conn, sock, d)
        })
    }

    fn write_frame_nowait(
        &mut self,
        header: &[u8; FRAME_HEADER_BYTES],
        payload: &[u8],
    ) -> io::Result<Option<bool>> {
        if crate::writer::send_nowait(&self.sock, &[])?.is_none() {
            return Ok(None);
        }
        let TlsWriter {
            conn,
            sock,
            scratch,
            pending,
        } = self;
        // The pieces of `in_chunks`: the header with the first payload bytes, then CHUNKs.
        let first = payload.len().min(FIRST_PIECE - FRAME_HEADER_BYTES);
        scratch.clear();
        scratch.extend_from_slice(header);
        scratch.extend_from_slice(&payload[..first]);
        let mut piece: &[u8] = scratch;
        let mut next = first;
        loop {
            while !piece.is_empty() {
                let n = conn.writer().write(piece)?;
                if n == 0 && !conn.wants_write() {
                    return Err(io::ErrorKind::WriteZero.into());
                }
                piece = &piece[n..];
                if !drain_nowait(conn, sock)? {
                    // The socket is full: rustls keeps what it sealed, the rest waits here.
                    pending.clear();
                    pending.extend_from_slice(piece);
                    pending.extend_from_slice(&payload[next..]);
                    return Ok(Some(false));
                }
            }
            if next == payload.len() {
                return Ok(Some(true));
            }
            let end = payload.len().min(next + CHUNK);
            piece = &payload[next..end];
            next = end;
        }
    }

    fn finish_pending(&mut self) -> io::Result<()> {
        flush(&mut self.conn, &mut self.sock)?;
        let pending = std::mem::take(&mut self.pending);
        pending
            .chunks(CHUNK)
            .try_for_each(|c| send_all(&mut self.conn, &mut self.sock, c))
    }

    fn close(&mut self) {
        self.conn.send_close_notify();
        let _ = self
            .sock
            .set_write_timeout(Some(Duration::from_millis(100)));
        let _ = flush(&mut self.conn, &mut self.sock);
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

/// The reading end of a one-direction link is the setup's connection itself. Plaintext is
/// copied once, from rustls's buffer to the frame's, with no zero-fill of the frame first.
impl PayloadSource for TlsIo {
    fn append_to(&mut self, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        self.with_plaintext(|r| {
            let chunk = r.fill_buf()?;
            let n = chunk.len().min(max);
            out.extend_from_slice(&chunk[..n]);
            r.consume(n);
            Ok(n)
        })
    }
}

/// A connection shared by the two halves of a duplex link.
struct Shared {
    conn: Mutex<Connection>,
    /// Taken before the connection's lock is released, so records leave in sealing order.
    sock: Mutex<TcpStream>,
}

impl Shared {
    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A poisoned lock means the other half panicked; the connection is still consistent
        // for an orderly shutdown.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes what `conn` has sealed, in order, releasing the connection before the I/O.
    fn write_sealed(&self, mut conn: MutexGuard<'_, Connection>) -> io::Result<()> {
        if !conn.wants_write() {
            return Ok(());
        }
        let sealed = take_sealed(&mut conn)?;
        let mut sock = self.sock.lock().unwrap_or_else(|p| p.into_inner());
        drop(conn);
        sock.write_all(&sealed)
    }
}

/// Splits an established connection into its two halves. `io` must be past the hello
/// exchange.
pub(crate) fn duplex(io: TlsIo) -> io::Result<(DuplexWriter, DuplexReader)> {
    let (conn, sock) = io.into_parts();
    let write_sock = sock.get_ref().try_clone()?;
    let shared = Arc::new(Shared {
        conn: Mutex::new(conn),
        sock: Mutex::new(write_sock),
    });
    Ok((
        DuplexWriter {
            shared: Arc::clone(&shared),
            scratch: Vec::with_capacity(FIRST_PIECE),
        },
        DuplexReader {
            shared,
            sock,
            piece: vec![0; READ_PIECE],
            fed: 0,
            got: 0,
        },
    ))
}

/// The writing half of a duplex link.
pub(crate) struct DuplexWriter {
    shared: Arc<Shared>,
    scratch: Vec<u8>,
}

/// [`send_all`] for a shared connection.
fn send_shared(shared: &Shared, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let mut conn = shared.conn();
        let n = conn.writer().write(data)?;
        if n == 0 && !conn.wants_write() {
            return Err(io::ErrorKind::WriteZero.into());
        }
        data = &data[n..];
        shared.write_sealed(conn)?;
    }
    Ok(())
}

impl FrameSink for DuplexWriter {
    fn write_frame(&mut self, header: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()> {
        let shared = &self.shared;
        in_chunks(header, payload, &mut self.scratch, |d| {
            send_shared(shared, d)
        })
    }

    fn close(&mut self) {
        let mut conn = self.shared.conn();
        conn.send_close_notify();
        if let Ok(sealed) = take_sealed(&mut conn) {
            let mut sock = self.shared.sock.lock().unwrap_or_else(|p| p.into_inner());
            drop(conn);
            let _ = sock.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = sock.write_all(&sealed);
            let _ = sock.shutdown(Shutdown::Both);
        }
    }
}

/// The reading half of a duplex link.
pub(crate) struct DuplexReader {
    shared: Arc<Shared>,
    /// The socket, with what the setup had already read.
    sock: BufReader<TcpStream>,
    /// Ciphertext read from the socket, `piece[fed..got]` not yet given to rustls.
    piece: Vec<u8>,
    fed: usize,
    got: usize,
}

impl Read for DuplexReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.shared.conn().reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            let at_end = self.fed == self.got;
            if at_end {
                // Blocks without the lock, so the writer goes on meanwhile.
                self.got = self.sock.read(&mut self.piece)?;
                self.fed = 0;
            }
            let mut conn = self.shared.conn();
            // One call at a time, taking plaintext out in between, so rustls's receive
            // buffer stays within its limit. An empty piece is the end of the stream: rustls
            // then reports a clean end after a close_notify and an error otherwise.
            let mut rest = &self.piece[self.fed..self.got];
            let n = conn.read_tls(&mut rest)?;
            self.fed += n;
            if let Err(e) = conn.process_new_packets() {
                let _ = self.shared.write_sealed(conn);
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            // Whatever rustls must answer (a key update, an alert) goes out now.
            self.shared.write_sealed(conn)?;
        }
    }
}

impl PayloadSource for DuplexReader {}
