//! A byte-stream link's sending side: the frames this party has sent and a thread that writes
//! them to the socket.
//!
//! [`Session::send_bytes`](crate::Session::send_bytes) hands a frame to the queue and returns;
//! the writer thread writes the frames in order. So a party never waits for a peer to read
//! before it can go on to read from that peer itself, and two parties that each send a burst of
//! frames before receiving cannot stall each other, whatever the bound on each receiver's queue.
//! What a party queues is what its own protocol sends to the peer before it next needs the
//! peer's reply: the peer cannot make it larger. A service's session towards an anonymous
//! client, whose requests would otherwise make the service queue replies the client never
//! reads, bounds the queue instead ([`Writer::spawn`]'s `cap`): its sends wait for space, up to
//! the send timeout.
//!
//! A write that fails (or times out) fails the link's sending side for good: the queued frames
//! are dropped and the next send returns the error. Closing the writer writes what is queued,
//! then ends the connection.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use doram_core::PartyId;

use crate::NetError;
use crate::frame::FRAME_HEADER_BYTES;
use crate::session::FrameSink;

struct Pending {
    header: [u8; FRAME_HEADER_BYTES],
    payload: Vec<u8>,
}

#[derive(Default)]
struct State {
    frames: VecDeque<Pending>,
    /// Payload bytes queued, the frame being written included.
    bytes: usize,
    /// The thread has work: a frame a direct write left unfinished, or queued frames. While
    /// it is set, only the thread touches the sink.
    busy: bool,
    /// Whether the sink can write without waiting.
    direct: bool,
    /// Frames the thread has written.
    written: u64,
    /// The thread made no progress for [`STALL`] while a sender was paced: pacing is off
    /// until the queue empties.
    stalled: bool,
    closing: bool,
    failed: Option<NetError>,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
    /// The most payload bytes queued before a send waits (`usize::MAX`: sends never wait);
    /// only ever lowered.
    cap: AtomicUsize,
    peer: PartyId,
    send_timeout: Duration,
    /// Used by a sender while the thread is idle, by the thread while it is busy.
    sink: Mutex<Box<dyn FrameSink>>,
}

impl Shared {
    /// Waits until a frame of `len` bytes fits the queue (an empty queue takes any frame) or
    /// the link has failed; [`NetError::Timeout`] after the send timeout.
    fn wait_for_room<'a>(
        &self,
        mut s: MutexGuard<'a, State>,
        len: usize,
    ) -> Result<MutexGuard<'a, State>, NetError> {
        let deadline = Instant::now() + self.send_timeout;
        loop {
            let cap = self.cap.load(Ordering::Acquire);
            if s.failed.is_some() || s.bytes == 0 || s.bytes.saturating_add(len) <= cap {
                return Ok(s);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(NetError::Timeout {
                    peer: self.peer,
                    after: self.send_timeout,
                });
            }
            s = self
                .cond
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Pacing: a sender far ahead of a socket that is draining waits for it, which keeps the
    /// queue (and its copies) small. It never waits on a writer that has stopped moving — the
    /// peer may itself be sending to this party before it reads — so two parties that each
    /// send a burst before receiving still both go on.
    fn pace<'a>(&self, mut s: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let mut seen = s.written;
        let mut patience = Instant::now() + STALL;
        while s.failed.is_none() && !s.stalled && s.bytes > PACE_BYTES {
            let now = Instant::now();
            if s.written != seen {
                seen = s.written;
                patience = now + STALL;
            } else if now >= patience {
                s.stalled = true;
                break;
            }
            s = self
                .cond
                .wait_timeout(s, patience - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        s
    }
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sink(&self) -> MutexGuard<'_, Box<dyn FrameSink>> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, s: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cond.wait(s).unwrap_or_else(|p| p.into_inner())
    }
}

/// Above this many queued bytes a sender waits while the thread makes progress (pacing).
const PACE_BYTES: usize = 8 << 20;
/// How long a paced sender waits for the thread to finish a frame before it stops waiting.
const STALL: Duration = Duration::from_millis(5);

/// `send(2)` flags for a write that never waits (and raises no `SIGPIPE`).
#[cfg(target_os = "linux")]
const NOWAIT: Option<libc::c_int> = Some(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL);
#[cfg(all(unix, not(target_os = "linux")))]
const NOWAIT: Option<libc::c_int> = Some(libc::MSG_DONTWAIT);
#[cfg(not(unix))]
const NOWAIT: Option<i32> = None;

/// Sends from `parts` (one byte string, cut in pieces) what `sock` takes without waiting and
/// returns how many bytes it took; `None` where the platform cannot send without waiting.
pub(crate) fn send_nowait(sock: &TcpStream, parts: &[&[u8]]) -> io::Result<Option<usize>> {
    let Some(flags) = NOWAIT else {
        return Ok(None);
    };
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let sock = socket2::SockRef::from(sock);
    let mut sent = 0;
    while sent < total {
        // The pieces from byte `sent` on.
        let mut skip = sent;
        let slices: Vec<IoSlice<'_>> = parts
            .iter()
            .filter_map(|p| {
                if skip >= p.len() {
                    skip -= p.len();
                    None
                } else {
                    let s = IoSlice::new(&p[skip..]);
                    skip = 0;
                    Some(s)
                }
            })
            .collect();
        match sock.send_vectored_with_flags(&slices, flags) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(sent))
}

/// A frame's payload, borrowed while it can still be written at once, owned once queued.
pub(crate) enum Payload<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Payload<'_> {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::Borrowed(b) => b,
            Payload::Owned(v) => v,
        }
    }

    pub fn into_owned(self) -> Vec<u8> {
        match self {
            Payload::Borrowed(b) => b.to_vec(),
            Payload::Owned(v) => v,
        }
    }
}

/// The sending side of a byte-stream link.
pub(crate) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread that writes frames to `sink`, a socket whose writes time out after
    /// `send_timeout`. With `cap`, a send waits while the queue is not empty and the frame
    /// would take it past `cap` payload bytes.
    pub fn spawn(
        me: PartyId,
        peer: PartyId,
        sink: Box<dyn FrameSink>,
        cap: Option<usize>,
        send_timeout: Duration,
    ) -> std::io::Result<Writer> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                direct: true,
                ..State::default()
            }),
            cond: Condvar::new(),
            cap: AtomicUsize::new(cap.unwrap_or(usize::MAX)),
            peer,
            send_timeout,
            sink: Mutex::new(sink),
        });
        let thread = thread::Builder::new()
            .name(format!("doram-net {me}->{peer}"))
            .spawn({
                let shared = Arc::clone(&shared);
                move || write_loop(&shared)
            })?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Writes one frame, or queues it for the writer thread: while the thread has nothing to
    /// do, the frame goes straight to the socket as far as the socket takes it without
    /// waiting, and only the rest is left to the thread. Fails with the link's error once a
    /// write has failed, and with [`NetError::Timeout`] if a bounded queue stays full for the
    /// send timeout.
    pub fn send(
        &self,
        header: [u8; FRAME_HEADER_BYTES],
        payload: Payload<'_>,
    ) -> Result<(), NetError> {
        let shared = &*self.shared;
        let len = payload.bytes().len();
        let s = shared.wait_for_room(shared.lock(), len)?;
        let mut s = shared.pace(s);
        if let Some(e) = &s.failed {
            return Err(e.clone());
        }
        if !s.busy && s.direct {
            // Nothing is ahead of this frame, and the thread does not touch the sink.
            let written = shared.sink().write_frame_nowait(&header, payload.bytes());
            match written {
                Ok(Some(true)) => return Ok(()),
                Ok(Some(false)) => {
                    s.busy = true;
                    drop(s);
                    shared.cond.notify_all();
                    return Ok(());
                }
                Ok(None) => s.direct = false,
                Err(e) => {
                    let e = NetError::from_io(shared.peer, e, shared.send_timeout);
                    s.failed = Some(e.clone());
                    drop(s);
                    shared.cond.notify_all();
                    return Err(e);
                }
            }
        }
        s.bytes += len;
        s.frames.push_back(Pending {
            header,
            payload: payload.into_owned(),
        });
        s.busy = true;
        drop(s);
        shared.cond.notify_all();
        Ok(())
    }

    /// Lowers a bounded queue's capacity to `cap` bytes; an unbounded queue stays unbounded.
    pub fn restrict(&self, cap: usize) {
        let c = &self.shared.cap;
        let _ = c.fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
            (now != usize::MAX && cap < now).then_some(cap)
        });
    }

    /// Writes what is queued, ends the connection and waits for the thread.
    pub fn close(&mut self) {
        self.shared.lock().closing = true;
        self.shared.cond.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

/// The writer thread: while busy, finishes the frame a direct write left and writes the
/// queued frames in order; once closed and idle, ends the connection.
fn write_loop(shared: &Shared) {
    let mut s = shared.lock();
    loop {
        if !s.busy {
            if s.closing {
                break;
            }
            s = shared.wait(s);
            continue;
        }
        drop(s);
        let mut result = shared.sink().finish_pending();
        s = shared.lock();
        while result.is_ok() {
            let Some(frame) = s.frames.pop_front() else {
                break;
            };
            drop(s);
            result = shared.sink().write_frame(&frame.header, &frame.payload);
            s = shared.lock();
            s.bytes -= frame.payload.len();
            s.written += 1;
            shared.cond.notify_all();
        }
        s.busy = false;
        s.stalled = false;
        if let Err(e) = result {
            // A stream that failed (or timed out) inside a frame cannot be resynchronised.
            s.failed = Some(NetError::from_io(shared.peer, e, shared.send_timeout));
            s.frames.clear();
            s.bytes = 0;
            shared.cond.notify_all();
            while !s.closing {
                s = shared.wait(s);
            }
            break;
        }
        shared.cond.notify_all();
    }
    drop(s);
    shared.sink().close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::mpsc;

    /// A sink that hands each frame's payload to a channel, failing on a payload `[0xff]`;
    /// while `gate` holds a value, writes wait for it.
    struct Probe {
        out: mpsc::Sender<Vec<u8>>,
        gate: Arc<Mutex<()>>,
    }

    impl FrameSink for Probe {
        fn write_frame(&mut self, _: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()> {
            let _held = self.gate.lock().unwrap_or_else(|p| p.into_inner());
            if payload == [0xff] {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let _ = self.out.send(payload.to_vec());
            Ok(())
        }

        fn close(&mut self) {
            let _ = self.out.send(b"closed".to_vec());
        }
    }

    fn probe(cap: Option<usize>) -> (Writer, mpsc::Receiver<Vec<u8>>, Arc<Mutex<()>>) {
        let (out, rx) = mpsc::channel();
        let gate = Arc::new(Mutex::new(()));
        let sink = Box::new(Probe {
            out,
            gate: Arc::clone(&gate),
        });
        let w = Writer::spawn(
            PartyId::P0,
            PartyId::P1,
            sink,
            cap,
            Duration::from_millis(50),
        )
        .expect("spawn");
        (w, rx, gate)
    }

    fn recv(rx: &mpsc::Receiver<Vec<u8>>) -> Vec<u8> {
        rx.recv_timeout(Duration::from_secs(10)).expect("a frame")
    }

    #[test]
    fn frames_are_written_in_order_and_flushed_by_close() {
        let (mut w, rx, gate) = probe(None);
        let held = gate.lock().expect("gate");
        // The sink is stalled: an unbounded queue still takes every frame at once.
        for i in 0..100u8 {
            w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![i; 1000]))
                .expect("send");
        }
        drop(held);
        for i in 0..100u8 {
            assert_eq!(recv(&rx), vec![i; 1000]);
        }
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(b"last".to_vec()))
            .expect("send");
        w.close();
        assert_eq!(recv(&rx), b"last");
        assert_eq!(recv(&rx), b"closed");
    }

    #[test]
    fn a_bounded_queue_makes_sends_wait_and_time_out() {
        let (w, rx, gate) = probe(Some(100));
        let held = gate.lock().expect("gate");
        // The thread takes the first frame and stalls writing it: it still counts.
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![1; 60]))
            .expect("send");
        while !w.shared.lock().frames.is_empty() {
            thread::yield_now();
        }
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![2; 40]))
            .expect("send");
        assert!(matches!(
            w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![3; 1])),
            Err(NetError::Timeout { .. })
        ));
        // A lowered cap holds back what would have fitted before.
        w.restrict(50);
        drop(held);
        assert_eq!(recv(&rx), vec![1; 60]);
        assert_eq!(recv(&rx), vec![2; 40]);
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![4; 30]))
            .expect("send");
        assert_eq!(recv(&rx), vec![4; 30]);
    }

    #[test]
    fn a_failed_write_fails_later_sends_and_drops_the_queue() {
        let (mut w, rx, gate) = probe(None);
        let held = gate.lock().expect("gate");
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(vec![0xff]))
            .expect("send");
        w.send([0; FRAME_HEADER_BYTES], Payload::Owned(b"lost".to_vec()))
            .expect("send");
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(10);
        let err = loop {
            match w.send([0; FRAME_HEADER_BYTES], Payload::Owned(b"x".to_vec())) {
                Err(e) => break e,
                Ok(()) => {
                    assert!(Instant::now() < deadline, "the failure never surfaced");
                    thread::sleep(Duration::from_millis(1));
                }
            }
        };
        assert!(
            matches!(err, NetError::Closed { peer: PartyId::P1 }),
            "{err:?}"
        );
        w.close();
        // Nothing after the failed frame was written; the connection was still ended.
        assert_eq!(recv(&rx), b"closed");
    }
    /// A sink whose socket takes `room` bytes without waiting, then nothing until the thread
    /// writes; every byte written goes to `wire` in order.
    struct Partial {
        wire: Arc<Mutex<Vec<u8>>>,
        room: Arc<AtomicUsize>,
        pending: Vec<u8>,
    }

    impl FrameSink for Partial {
        fn write_frame(&mut self, h: &[u8; FRAME_HEADER_BYTES], p: &[u8]) -> io::Result<()> {
            let mut wire = self.wire.lock().unwrap_or_else(|e| e.into_inner());
            wire.extend_from_slice(h);
            wire.extend_from_slice(p);
            Ok(())
        }

        fn write_frame_nowait(
            &mut self,
            h: &[u8; FRAME_HEADER_BYTES],
            p: &[u8],
        ) -> io::Result<Option<bool>> {
            let frame = [&h[..], p].concat();
            let room = self.room.swap(0, Ordering::SeqCst);
            let now = room.min(frame.len());
            self.room.store(room - now, Ordering::SeqCst);
            self.wire
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(&frame[..now]);
            self.pending = frame[now..].to_vec();
            Ok(Some(self.pending.is_empty()))
        }

        fn finish_pending(&mut self) -> io::Result<()> {
            let pending = std::mem::take(&mut self.pending);
            self.wire
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(&pending);
            Ok(())
        }

        fn close(&mut self) {}
    }

    #[test]
    fn direct_writes_and_the_thread_keep_the_frames_in_order() {
        let wire = Arc::new(Mutex::new(Vec::new()));
        let room = Arc::new(AtomicUsize::new(3 * (FRAME_HEADER_BYTES + 100) + 50));
        let sink = Box::new(Partial {
            wire: Arc::clone(&wire),
            room: Arc::clone(&room),
            pending: Vec::new(),
        });
        let mut w = Writer::spawn(PartyId::P0, PartyId::P1, sink, None, Duration::from_secs(5))
            .expect("spawn");
        let mut expected = Vec::new();
        for i in 0..20u8 {
            let header = [i; FRAME_HEADER_BYTES];
            expected.extend_from_slice(&header);
            expected.extend_from_slice(&[i; 100]);
            w.send(header, Payload::Borrowed(&[i; 100])).expect("send");
            if i == 10 {
                // Room again: once the thread is idle, sends go direct once more.
                while w.shared.lock().busy {
                    thread::yield_now();
                }
                room.store(1000, Ordering::SeqCst);
            }
        }
        w.close();
        assert_eq!(*wire.lock().expect("wire"), expected);
    }
    #[test]
    fn a_stalled_writer_does_not_hold_senders_back() {
        let (mut w, rx, gate) = probe(None);
        let held = gate.lock().expect("gate");
        // Far past the pacing threshold with the sink stalled: every send still returns.
        let frame = 1 << 20;
        let count = 3 * PACE_BYTES / frame;
        for i in 0..count {
            w.send(
                [0; FRAME_HEADER_BYTES],
                Payload::Owned(vec![i as u8; frame]),
            )
            .expect("send");
        }
        assert!(w.shared.lock().stalled);
        drop(held);
        for i in 0..count {
            assert_eq!(recv(&rx)[0], i as u8);
        }
        w.close();
    }
}
