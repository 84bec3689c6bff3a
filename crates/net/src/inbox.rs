//! A link's queue of received frames, bounded in bytes.
//!
//! The producer — a link's reader thread, or the sender of an in-process link — waits while
//! the queue is not empty and adding the next frame would take it past its capacity; the
//! consumer, [`Session::recv_bytes`](crate::Session::recv_bytes), frees the space. A reader
//! thread that waits stops reading its socket, so TCP's flow control holds the sender back:
//! a peer can make this party hold at most the capacity ([`queue_bytes`]) plus the one frame
//! being read, however much it sends. A frame is always admitted into an empty queue, so any
//! frame within the frame limit passes. The capacity follows the frame limit down when a
//! protocol lowers it. An in-process link's sender does not wait ([`InboxTx::push`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::session::Incoming;

struct State {
    queue: VecDeque<Incoming>,
    bytes: usize,
    senders: usize,
    receiver: bool,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
    /// Capacity in payload bytes, [`queue_bytes`] of the frame limit; only ever lowered.
    cap: AtomicUsize,
    /// The largest frame payload the link accepts; only ever lowered.
    frame_limit: AtomicU32,
}

/// The capacity of a link's queue whose frames are at most `frame_limit` bytes: two frames of
/// the largest size, at least 64 KiB. With the frame being read, a peer can make this party
/// hold at most three largest frames per link.
pub(crate) fn queue_bytes(frame_limit: u32) -> usize {
    (2 * frame_limit as usize).max(64 << 10)
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Why a frame was not queued.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SendError {
    /// The receiving session is gone.
    Closed,
    /// The queue stayed full for the whole wait.
    Full,
}

fn size(ev: &Incoming) -> usize {
    match ev {
        Incoming::Frame { payload, .. } => payload.len(),
        Incoming::Failed(_) => 0,
    }
}

/// The queue of a link whose frames are at most `frame_limit` bytes, holding at most
/// [`queue_bytes`]`(frame_limit)` bytes of payload (plus one frame when it was empty).
pub(crate) fn channel(frame_limit: u32) -> (InboxTx, InboxRx) {
    channel_with(frame_limit, queue_bytes(frame_limit))
}

/// A queue of at most `cap` bytes of payload (plus one frame when it was empty).
fn channel_with(frame_limit: u32, cap: usize) -> (InboxTx, InboxRx) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            bytes: 0,
            senders: 1,
            receiver: true,
        }),
        cond: Condvar::new(),
        cap: AtomicUsize::new(cap),
        frame_limit: AtomicU32::new(frame_limit),
    });
    (
        InboxTx {
            shared: Arc::clone(&shared),
        },
        InboxRx { shared },
    )
}

/// The producing end.
pub(crate) struct InboxTx {
    shared: Arc<Shared>,
}

impl InboxTx {
    /// The largest frame payload the receiving session accepts now.
    pub fn frame_limit(&self) -> u32 {
        self.shared.frame_limit.load(Ordering::Acquire)
    }

    /// Queues `ev`, waiting for space at most `wait` (`None`: until there is space or the
    /// receiver is gone). A failure event never waits.
    pub fn send(&self, ev: Incoming, wait: Option<Duration>) -> Result<(), SendError> {
        let len = size(&ev);
        let deadline = wait.map(|w| Instant::now() + w);
        let mut s = self.shared.lock();
        loop {
            if !s.receiver {
                return Err(SendError::Closed);
            }
            let cap = self.shared.cap.load(Ordering::Acquire);
            let fits = s.bytes == 0 || s.bytes.saturating_add(len) <= cap;
            if fits || matches!(ev, Incoming::Failed(_)) {
                break;
            }
            s = match deadline {
                None => self.shared.cond.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(SendError::Full);
                    }
                    self.shared
                        .cond
                        .wait_timeout(s, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
        s.bytes += len;
        s.queue.push_back(ev);
        drop(s);
        self.shared.cond.notify_all();
        Ok(())
    }
}

impl InboxTx {
    /// Queues `ev` whatever the queue holds (an in-process link, whose sender shares the
    /// receiver's process).
    pub fn push(&self, ev: Incoming) -> Result<(), SendError> {
        let mut s = self.shared.lock();
        if !s.receiver {
            return Err(SendError::Closed);
        }
        s.bytes += size(&ev);
        s.queue.push_back(ev);
        drop(s);
        self.shared.cond.notify_all();
        Ok(())
    }
}

impl Clone for InboxTx {
    fn clone(&self) -> InboxTx {
        self.shared.lock().senders += 1;
        InboxTx {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for InboxTx {
    fn drop(&mut self) {
        self.shared.lock().senders -= 1;
        self.shared.cond.notify_all();
    }
}

/// The consuming end.
pub(crate) struct InboxRx {
    shared: Arc<Shared>,
}

impl InboxRx {
    /// Lowers the frame limit to `limit` (never raises it), and the capacity with it. Frames
    /// already queued, or whose header the reader has already checked, stay.
    pub fn restrict(&self, limit: u32) {
        self.shared.frame_limit.fetch_min(limit, Ordering::AcqRel);
        self.shared
            .cap
            .fetch_min(queue_bytes(limit), Ordering::AcqRel);
        // A waiting producer re-checks against the new capacity.
        self.shared.cond.notify_all();
    }

    /// The next event, waiting at most `timeout`; `Disconnected` once every sender is gone and
    /// the queue is empty.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Incoming, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        let mut s = self.shared.lock();
        loop {
            if let Some(ev) = s.queue.pop_front() {
                s.bytes -= size(&ev);
                drop(s);
                self.shared.cond.notify_all();
                return Ok(ev);
            }
            if s.senders == 0 {
                return Err(RecvTimeoutError::Disconnected);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(RecvTimeoutError::Timeout);
            }
            s = self
                .shared
                .cond
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Stops receiving: queued frames are freed and every waiting or later send fails.
    pub fn close(&self) {
        let mut s = self.shared.lock();
        s.receiver = false;
        s.queue.clear();
        s.bytes = 0;
        drop(s);
        self.shared.cond.notify_all();
    }
}

impl Drop for InboxRx {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NetError;
    use doram_core::PartyId;

    fn frame(len: usize) -> Incoming {
        Incoming::Frame {
            stamp: crate::frame::Stamp {
                ts: 1,
                seq: 0,
                phase: 0,
            },
            payload: vec![0; len],
            deliver_at: None,
        }
    }

    #[test]
    fn the_queue_holds_at_most_its_capacity_and_always_one_frame() {
        let (tx, rx) = channel_with(100, 100);
        tx.send(frame(60), None).unwrap();
        tx.send(frame(40), None).unwrap();
        let short = Some(Duration::from_millis(20));
        assert_eq!(tx.send(frame(1), short), Err(SendError::Full));
        // A failure is never held back.
        tx.send(
            Incoming::Failed(NetError::Closed { peer: PartyId::P1 }),
            short,
        )
        .unwrap();
        assert!(matches!(
            rx.recv_timeout(Duration::ZERO),
            Ok(Incoming::Frame { .. })
        ));
        tx.send(frame(50), short).unwrap();
        for _ in 0..3 {
            rx.recv_timeout(Duration::ZERO).unwrap();
        }
        // Empty: a frame larger than the capacity still passes.
        tx.send(frame(1000), short).unwrap();
        assert!(rx.recv_timeout(Duration::ZERO).is_ok());
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(5)).err(),
            Some(RecvTimeoutError::Timeout)
        );
        drop(tx);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)).err(),
            Some(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn a_waiting_sender_resumes_when_space_frees_and_stops_when_the_receiver_goes() {
        let (tx, rx) = channel_with(10, 10);
        tx.send(frame(10), None).unwrap();
        let (sent, first_done) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            // Waits until the receiver frees the queue.
            sent.send(tx.send(frame(10), None)).unwrap();
            // Waits until the receiver goes away.
            tx.send(frame(10), None)
        });
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(first_done.recv().unwrap(), Ok(()));
        rx.close();
        assert_eq!(t.join().unwrap(), Err(SendError::Closed));
    }
}
