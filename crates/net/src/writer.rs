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
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, s: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cond.wait(s).unwrap_or_else(|p| p.into_inner())
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
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
            cap: AtomicUsize::new(cap.unwrap_or(usize::MAX)),
            peer,
            send_timeout,
        });
        let thread = thread::Builder::new()
            .name(format!("doram-net {me}->{peer}"))
            .spawn({
                let shared = Arc::clone(&shared);
                move || write_loop(&shared, sink)
            })?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues one frame. Fails with the link's error once a write has failed, and with
    /// [`NetError::Timeout`] if a bounded queue stays full for the send timeout.
    pub fn send(&self, header: [u8; FRAME_HEADER_BYTES], payload: Vec<u8>) -> Result<(), NetError> {
        let shared = &*self.shared;
        let mut s = shared.lock();
        let deadline = Instant::now() + shared.send_timeout;
        loop {
            let cap = shared.cap.load(Ordering::Acquire);
            if s.failed.is_some() || s.bytes == 0 || s.bytes.saturating_add(payload.len()) <= cap {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(NetError::Timeout {
                    peer: shared.peer,
                    after: shared.send_timeout,
                });
            }
            s = shared
                .cond
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if let Some(e) = &s.failed {
            return Err(e.clone());
        }
        s.bytes += payload.len();
        s.frames.push_back(Pending { header, payload });
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

/// The writer thread: writes frames in order until closed, then ends the connection.
fn write_loop(shared: &Shared, mut sink: Box<dyn FrameSink>) {
    let mut s = shared.lock();
    loop {
        let Some(frame) = s.frames.pop_front() else {
            if s.closing {
                break;
            }
            s = shared.wait(s);
            continue;
        };
        drop(s);
        let result = sink.write_frame(&frame.header, &frame.payload);
        s = shared.lock();
        s.bytes -= frame.payload.len();
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
    sink.close();
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
            w.send([0; FRAME_HEADER_BYTES], vec![i; 1000])
                .expect("send");
        }
        drop(held);
        for i in 0..100u8 {
            assert_eq!(recv(&rx), vec![i; 1000]);
        }
        w.send([0; FRAME_HEADER_BYTES], b"last".to_vec())
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
        w.send([0; FRAME_HEADER_BYTES], vec![1; 60]).expect("send");
        while !w.shared.lock().frames.is_empty() {
            thread::yield_now();
        }
        w.send([0; FRAME_HEADER_BYTES], vec![2; 40]).expect("send");
        assert!(matches!(
            w.send([0; FRAME_HEADER_BYTES], vec![3; 1]),
            Err(NetError::Timeout { .. })
        ));
        // A lowered cap holds back what would have fitted before.
        w.restrict(50);
        drop(held);
        assert_eq!(recv(&rx), vec![1; 60]);
        assert_eq!(recv(&rx), vec![2; 40]);
        w.send([0; FRAME_HEADER_BYTES], vec![4; 30]).expect("send");
        assert_eq!(recv(&rx), vec![4; 30]);
    }

    #[test]
    fn a_failed_write_fails_later_sends_and_drops_the_queue() {
        let (mut w, rx, gate) = probe(None);
        let held = gate.lock().expect("gate");
        w.send([0; FRAME_HEADER_BYTES], vec![0xff]).expect("send");
        w.send([0; FRAME_HEADER_BYTES], b"lost".to_vec())
            .expect("send");
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(10);
        let err = loop {
            match w.send([0; FRAME_HEADER_BYTES], b"x".to_vec()) {
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
}
