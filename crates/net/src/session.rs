//! [`Session`]: one party's endpoint of a 2–4 party session, whatever the backend.

use std::fmt;
use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::RecvTimeoutError;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use doram_core::PartyId;
use doram_core::wire::{Blame, PeerFault};
use doram_field::Group;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::NetError;
use crate::frame::{
    FRAME_HEADER_BYTES, Header, MAX_TS, PayloadSource, Phase, Stamp, read_frame_with,
};
use crate::inbox::{InboxRx, InboxTx};
use crate::mesh::LocalOut;
use crate::shaping::{Shaper, Shaping};
use crate::stats::{Stats, Transcript, TranscriptEvent};
use crate::writer::{Payload, Writer};

/// What a link's receiving side hands to [`Session::recv_bytes`].
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A complete frame, not to be handed out before `deliver_at` (traffic shaping).
    Frame {
        stamp: Stamp,
        payload: Vec<u8>,
        deliver_at: Option<Instant>,
    },
    /// The link failed; nothing more will arrive.
    Failed(NetError),
}

/// The sending half of a byte-stream link (TCP or TLS).
pub(crate) trait FrameSink: Send {
    /// Writes one frame (header and payload) completely.
    fn write_frame(&mut self, header: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()>;

    /// Writes as much of one frame as the socket takes without waiting and keeps the rest:
    /// `Some(true)` if the whole frame was written, `Some(false)` if part of it is kept for
    /// [`finish_pending`](FrameSink::finish_pending). Called only when nothing is kept. A sink
    /// that cannot write without waiting returns `None` having written and kept nothing.
    fn write_frame_nowait(
        &mut self,
        _header: &[u8; FRAME_HEADER_BYTES],
        _payload: &[u8],
    ) -> io::Result<Option<bool>> {
        Ok(None)
    }

    /// Writes what [`write_frame_nowait`](FrameSink::write_frame_nowait) kept, waiting as
    /// needed.
    fn finish_pending(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Ends the connection, best effort.
    fn close(&mut self);
}

/// The sending half of a link.
pub(crate) enum Outgoing {
    /// In-process channel.
    Local(LocalOut),
    /// A socket, plaintext or TLS, written by a thread of its own.
    Stream(Writer),
}

impl Outgoing {
    /// The sending half of a socket link `me → peer`: frames are queued (at most `cap` payload
    /// bytes, if given) for a writer thread whose writes time out after `send_timeout`.
    pub fn stream(
        me: PartyId,
        peer: PartyId,
        sink: Box<dyn FrameSink>,
        cap: Option<usize>,
        send_timeout: Duration,
    ) -> io::Result<Outgoing> {
        Writer::spawn(me, peer, sink, cap, send_timeout).map(Outgoing::Stream)
    }
}

/// The background reader of a byte-stream link.
pub(crate) struct ReaderThread {
    /// A handle on the incoming socket, to unblock the thread at shutdown.
    pub sock: TcpStream,
    pub thread: JoinHandle<()>,
}

/// Both halves of the connection with one peer.
pub(crate) struct Link {
    pub out: Outgoing,
    pub inbox: InboxRx,
    pub reader: Option<ReaderThread>,
    pub in_failed: Option<NetError>,
    pub out_failed: Option<NetError>,
}

impl Link {
    pub fn new(out: Outgoing, inbox: InboxRx, reader: Option<ReaderThread>) -> Link {
        Link {
            out,
            inbox,
            reader,
            in_failed: None,
            out_failed: None,
        }
    }
}

/// Which backend a session runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// In-process channels ([`Session::local_mesh`]).
    InProcess,
    /// Plaintext TCP (explicitly insecure).
    Tcp,
    /// Mutually authenticated TLS 1.3 over TCP.
    Tls,
}

/// Session-wide settings shared by every backend.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Receive timeout.
    pub timeout: Duration,
    /// Socket send timeout, fixed when the link was set up.
    pub send_timeout: Duration,
    pub max_frame: u32,
}

/// One party's endpoint of a session of 2–4 parties.
///
/// A session offers a blocking, message-oriented API: [`send_bytes`](Session::send_bytes)
/// returns once the frame is queued for the link's writer (it never waits for the peer to call
/// `recv`), and [`recv_bytes`](Session::recv_bytes) returns the next frame from one peer, in the
/// order that peer sent them. Every link has a background reader (or is an in-process channel),
/// so any pattern of sends and receives that the protocol itself allows completes — parties may
/// send many messages to many peers before receiving, and two parties may send large messages to
/// each other at the same time.
///
/// # Rounds
/// Each session keeps a Lamport clock: `clock` is the largest timestamp received so far (0 at
/// the start). Every frame sent carries the timestamp `ts = clock + 1`; receiving a frame sets
/// `clock = max(clock, ts)`. [`rounds`](Session::rounds) is the larger of `clock` and the largest
/// timestamp sent, i.e. the length of the longest chain of causally dependent messages that this
/// party has taken part in. Consequently messages sent in the same step (with no receive in
/// between) share a timestamp and count as one round, and `k` sequential dependent messages
/// (each sent after receiving the previous one) count as `k` rounds: a ping-pong is two rounds,
/// and an all-to-all exchange followed by a second all-to-all exchange is two rounds at every
/// party.
///
/// # Sequence numbers and phases
/// Every frame carries its sequence number on its link (`from → to`, counted from 0, mod 256)
/// and the sender's [`Phase`]. [`recv_bytes`](Session::recv_bytes) checks both: a frame that
/// is not the next one on its link — because a frame before it was lost, or it was repeated or
/// reordered — is [`NetError::OutOfSequence`], and a frame sent in another phase than the one
/// this party receives in ([`set_wire_phase`](Session::set_wire_phase)) is
/// [`NetError::WrongPhase`]; both name the sender and fail the link. So a protocol never takes
/// a frame for another message of the same size: the check costs no message, no round and no
/// byte beyond the 12-byte header, and it is the only such check in doram (protocols check
/// only lengths and contents).
///
/// # Errors
/// A failure on a link (closed, malformed, oversized, out of sequence, TLS error) is sticky: every later `recv`
/// from that peer returns the same error, and likewise for sends. A [`NetError::Timeout`] is not
/// sticky; the caller may wait again.
///
/// Dropping a session closes all its connections; peers then get [`NetError::Closed`] after
/// the frames already sent to them.
///
/// # Memory
/// Frames that arrive before the protocol asks for them are queued up to two frames of the
/// largest size per link (at least 64 KiB; the size follows
/// [`limit_frame_bytes`](Session::limit_frame_bytes)); beyond that the link stops reading, and
/// flow control holds the sender back until this party receives. A peer can therefore make
/// this party hold at most three largest frames per link. A frame this party sends over a
/// socket goes straight to it as far as the socket takes it without waiting; the rest, and the
/// frames after it, are queued for the link's writer thread. That queue holds what this
/// party's own protocol sends before it next receives from the peer, and the first write that
/// fails or times out (after the send timeout) fails the link's sending side and frees it. A
/// service's session towards an anonymous client bounds that queue too (its sends wait).
/// In-process links have no bound: every party is in the one process.
pub struct Session {
    me: PartyId,
    n: usize,
    kind: TransportKind,
    links: Vec<Option<Link>>,
    limits: Limits,
    clock: u64,
    sent_high: u64,
    last_sent_ts: [u64; PartyId::MAX_PARTIES],
    last_recv_ts: [u64; PartyId::MAX_PARTIES],
    phase: Phase,
    next_seq_out: [u8; PartyId::MAX_PARTIES],
    next_seq_in: [u8; PartyId::MAX_PARTIES],
    stats: Stats,
    transcript: Option<Transcript>,
    content: Option<Box<blake3::Hasher>>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("me", &self.me)
            .field("n_parties", &self.n)
            .field("transport", &self.kind)
            .field("rounds", &self.rounds())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Assembles a session; `links[i]` is the link with party `i` (`None` for `me`).
    pub(crate) fn from_links(
        me: PartyId,
        n: usize,
        kind: TransportKind,
        links: Vec<Option<Link>>,
        limits: Limits,
    ) -> Session {
        Session {
            me,
            n,
            kind,
            links,
            limits,
            clock: 0,
            sent_high: 0,
            last_sent_ts: [0; PartyId::MAX_PARTIES],
            last_recv_ts: [0; PartyId::MAX_PARTIES],
            phase: Phase::DEFAULT,
            next_seq_out: [0; PartyId::MAX_PARTIES],
            next_seq_in: [0; PartyId::MAX_PARTIES],
            stats: Stats::default(),
            transcript: None,
            content: None,
        }
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// Number of parties in the session (2–4).
    pub fn n_parties(&self) -> usize {
        self.n
    }

    /// The other parties, in id order.
    pub fn peers(&self) -> impl Iterator<Item = PartyId> + use<> {
        let me = self.me;
        PartyId::first(self.n)
            .iter()
            .copied()
            .filter(move |&p| p != me)
    }

    /// The backend this session runs on.
    pub fn transport(&self) -> TransportKind {
        self.kind
    }

    /// How long [`recv_bytes`](Session::recv_bytes) waits for a peer before
    /// [`NetError::Timeout`].
    pub fn timeout(&self) -> Duration {
        self.limits.timeout
    }

    /// Changes the receive timeout (sockets keep the send timeout they were set up with).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    /// The largest payload a frame may carry, in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.limits.max_frame as usize
    }

    /// Lowers the frame limit of every link, for sending and receiving, to `limit` bytes; a
    /// limit above the current one changes nothing (a limit is never raised).
    ///
    /// A protocol calls this, once its public parameters are known, with the size of the
    /// largest message it can legitimately exchange, so that a peer can no longer make this
    /// party buffer a frame beyond that: a larger frame fails the link with
    /// [`NetError::FrameTooLarge`] as soon as its header arrives. Every party should lower its
    /// limit before its peers send anything larger than it; frames already queued, or whose
    /// header was read before the call, were checked against the old limit.
    ///
    /// Each link's queue of received frames shrinks with the limit, to two frames of the new
    /// size (at least 64 KiB); frames already queued stay.
    pub fn limit_frame_bytes(&mut self, limit: u32) {
        self.limits.max_frame = self.limits.max_frame.min(limit);
        for link in self.links.iter_mut().flatten() {
            link.inbox.restrict(limit);
            if let Outgoing::Stream(writer) = &link.out {
                writer.restrict(crate::inbox::queue_bytes(limit));
            }
        }
    }

    fn link_mut(&mut self, peer: PartyId) -> Result<&mut Link, NetError> {
        let (me, n) = (self.me, self.n);
        match self.links.get_mut(peer.index()) {
            Some(Some(link)) if peer.index() < n => Ok(link),
            _ => Err(NetError::NotAPeer {
                party: peer,
                me,
                n_parties: n,
            }),
        }
    }

    /// Sends `bytes` as one message to `to`.
    ///
    /// Returns once the frame is queued for the transport. Fails with
    /// [`NetError::FrameTooLarge`] (naming `to`) if `bytes` exceeds the frame limit, and with
    /// the link's error once an earlier frame could not be written.
    pub fn send_bytes(&mut self, to: PartyId, bytes: &[u8]) -> Result<(), NetError> {
        self.send_payload(to, Payload::Borrowed(bytes))
    }

    /// [`send_bytes`](Session::send_bytes) for a payload this session may keep: the transport
    /// queues the vector itself rather than a copy.
    pub fn send_vec(&mut self, to: PartyId, bytes: Vec<u8>) -> Result<(), NetError> {
        self.send_payload(to, Payload::Owned(bytes))
    }

    fn send_payload(&mut self, to: PartyId, payload: Payload<'_>) -> Result<(), NetError> {
        let bytes = payload.bytes();
        let max_frame = self.limits.max_frame;
        let stamp = Stamp {
            ts: self.clock.saturating_add(1).min(MAX_TS),
            seq: self.next_seq_out[to.index()],
            phase: self.phase.0,
        };
        // Checks the peer, then borrows the link and the digest apart.
        self.link_mut(to)?;
        let Some(Some(link)) = self.links.get_mut(to.index()) else {
            return Err(NetError::Closed { peer: to });
        };
        if let Some(e) = &link.out_failed {
            return Err(e.clone());
        }
        let len = match u32::try_from(bytes.len()) {
            Ok(len) if len <= max_frame => len,
            _ => {
                return Err(NetError::FrameTooLarge {
                    peer: to,
                    len: bytes.len() as u64,
                    limit: max_frame.into(),
                });
            }
        };
        let sent = bytes.len();
        // The digest covers what was handed to the transport; a failed link's last frame too.
        if let Some(h) = &mut self.content {
            hash_message(h, b'>', to, bytes);
        }
        let result = match &mut link.out {
            Outgoing::Local(local) => local.send(stamp, payload.into_owned()),
            Outgoing::Stream(writer) => writer.send(Header { len, stamp }.encode(), payload),
        };
        if let Err(e) = result {
            link.out_failed = Some(e.clone());
            return Err(e);
        }
        self.next_seq_out[to.index()] = stamp.seq.wrapping_add(1);
        self.on_sent(to, stamp.ts, sent);
        Ok(())
    }

    /// Receives the next message from `from`, waiting at most [`timeout`](Session::timeout).
    ///
    /// # Errors
    /// The link's failure; [`NetError::Timeout`]; [`NetError::OutOfSequence`] if the frame is
    /// not the next one `from` sent to this party, [`NetError::WrongPhase`] if it was sent in
    /// another phase than [`wire_phase`](Session::wire_phase) (see the type-level
    /// documentation).
    pub fn recv_bytes(&mut self, from: PartyId) -> Result<Vec<u8>, NetError> {
        let timeout = self.limits.timeout;
        let last_ts = self.last_recv_ts[from.index()];
        let expected_seq = self.next_seq_in[from.index()];
        let phase = self.phase;
        let link = self.link_mut(from)?;
        if let Some(e) = &link.in_failed {
            return Err(e.clone());
        }
        let event = match link.inbox.recv_timeout(timeout) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                return Err(NetError::Timeout {
                    peer: from,
                    after: timeout,
                });
            }
            Err(RecvTimeoutError::Disconnected) => {
                Incoming::Failed(NetError::Closed { peer: from })
            }
        };
        let (ts, payload, deliver_at) = match event {
            Incoming::Frame {
                stamp,
                payload,
                deliver_at,
            } => {
                let fault = if stamp.ts < last_ts {
                    Some(NetError::from(PeerFault::malformed(
                        from,
                        "a frame",
                        format!(
                            "Lamport timestamp went backwards ({} after {last_ts})",
                            stamp.ts
                        ),
                    )))
                } else if stamp.seq != expected_seq {
                    Some(NetError::OutOfSequence {
                        peer: from,
                        expected: expected_seq,
                        got: stamp.seq,
                    })
                } else if stamp.phase != phase.0 {
                    Some(NetError::WrongPhase {
                        peer: from,
                        expected: phase,
                        got: Phase(stamp.phase),
                    })
                } else {
                    None
                };
                if let Some(e) = fault {
                    link.in_failed = Some(e.clone());
                    return Err(e);
                }
                (stamp.ts, payload, deliver_at)
            }
            Incoming::Failed(e) => {
                link.in_failed = Some(e.clone());
                return Err(e);
            }
        };
        if let Some(at) = deliver_at {
            let now = Instant::now();
            if at > now {
                thread::sleep(at - now);
            }
        }
        self.next_seq_in[from.index()] = expected_seq.wrapping_add(1);
        self.hash_content(b'<', from, &payload);
        self.on_received(from, ts, payload.len());
        Ok(payload)
    }

    /// Sends a message serialized with postcard.
    pub fn send<M: Serialize + ?Sized>(&mut self, to: PartyId, msg: &M) -> Result<(), NetError> {
        match postcard::to_extend(msg, Vec::new()) {
            Ok(bytes) => self.send_vec(to, bytes),
            Err(e) => Err(NetError::Encode(e.to_string())),
        }
    }

    /// Receives a postcard-encoded message; bytes that do not decode to exactly one `M` are
    /// [`NetError::Peer`].
    pub fn recv<M: DeserializeOwned>(&mut self, from: PartyId) -> Result<M, NetError> {
        let bytes = self.recv_bytes(from)?;
        let malformed =
            |reason: String| NetError::from(PeerFault::malformed(from, "a message", reason));
        match postcard::take_from_bytes::<M>(&bytes) {
            Ok((msg, [])) => Ok(msg),
            Ok((_, rest)) => Err(malformed(format!(
                "{} trailing bytes after the message",
                rest.len()
            ))),
            Err(e) => Err(malformed(e.to_string())),
        }
    }

    /// Sends group elements as raw little-endian bytes, back to back, with no length prefix
    /// (the receiver knows the count from the protocol).
    pub fn send_elems<G: Group>(&mut self, to: PartyId, v: &[G]) -> Result<(), NetError> {
        let mut buf = vec![0; v.len() * G::BYTES];
        for (x, chunk) in v.iter().zip(buf.chunks_exact_mut(G::BYTES)) {
            x.write_le(chunk);
        }
        self.send_vec(to, buf)
    }

    /// Receives exactly `count` group elements from `from`; a message of the wrong length or
    /// with a non-canonical element is [`NetError::Peer`] naming the peer.
    pub fn recv_elems<G: Group>(
        &mut self,
        from: PartyId,
        count: usize,
    ) -> Result<Vec<G>, NetError> {
        let bytes = self.recv_bytes(from)?;
        doram_field::decode_vec(&bytes, count)
            .blame(from, "elements")
            .map_err(NetError::from)
    }

    /// Makes `phase` the phase this party sends and receives in: later frames it sends carry
    /// `phase`, and a frame it receives from now on must carry it too, or
    /// [`recv_bytes`](Session::recv_bytes) fails with [`NetError::WrongPhase`] naming the
    /// sender. A party enters a phase before it sends or receives the phase's first message;
    /// frames are checked when received, so frames a peer sent early in the next phase wait
    /// in the queue and pass once this party has entered it.
    ///
    /// This is independent of [`set_phase`](Session::set_phase), which only labels
    /// statistics.
    pub fn set_wire_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    /// The phase this party sends and receives in ([`Phase::DEFAULT`] until
    /// [`set_wire_phase`](Session::set_wire_phase) is called).
    pub fn wire_phase(&self) -> Phase {
        self.phase
    }

    /// Makes `phase` the current phase: later messages are counted under it in
    /// [`stats`](Session::stats) and the transcript. Re-entering a phase adds to its counters.
    pub fn set_phase(&mut self, phase: &str) {
        self.stats.set_phase(phase);
    }

    /// The current phase ([`DEFAULT_PHASE`](crate::DEFAULT_PHASE) until
    /// [`set_phase`](Session::set_phase) is called).
    pub fn phase(&self) -> &str {
        self.stats.current_phase()
    }

    /// Communication statistics, per phase and per peer.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Zeroes all statistics (the Lamport clock and the phase names are kept).
    pub fn reset_stats(&mut self) {
        self.stats.reset();
    }

    /// The number of communication rounds so far (see the type-level documentation for the
    /// exact rule).
    pub fn rounds(&self) -> u64 {
        self.clock.max(self.sent_high)
    }

    /// Starts (`true`) or stops (`false`) recording a [`Transcript`]. Starting while already
    /// recording keeps the events recorded so far; stopping discards them.
    pub fn record_transcript(&mut self, enabled: bool) {
        match (enabled, self.transcript.is_some()) {
            (true, false) => self.transcript = Some(Transcript::default()),
            (false, true) => self.transcript = None,
            _ => {}
        }
    }

    /// The transcript recorded so far, if recording is on.
    pub fn transcript(&self) -> Option<&Transcript> {
        self.transcript.as_ref()
    }

    /// Starts (`true`) or stops (`false`) hashing the contents of every message this party
    /// sends and receives (direction, peer, length and payload, in order) into a BLAKE3 digest
    /// of its view. Unlike the [`Transcript`], which records only the shape of the
    /// communication, the digest shows whether two runs exchanged the same bytes — e.g. that two
    /// runs with identical public inputs still differ because each party's randomness is fresh.
    /// Starting while on keeps the digest.
    pub fn record_content_digest(&mut self, enabled: bool) {
        match (enabled, self.content.is_some()) {
            (true, false) => self.content = Some(Box::default()),
            (false, true) => self.content = None,
            _ => {}
        }
    }

    fn hash_content(&mut self, direction: u8, peer: PartyId, bytes: &[u8]) {
        if let Some(h) = &mut self.content {
            hash_message(h, direction, peer, bytes);
        }
    }

    /// The digest of everything sent and received since [`record_content_digest`](Session::record_content_digest)
    /// started it, if it is on.
    pub fn content_digest(&self) -> Option<[u8; 32]> {
        self.content.as_ref().map(|h| *h.finalize().as_bytes())
    }

    /// Returns the transcript recorded so far and starts a fresh one (recording stays on).
    pub fn take_transcript(&mut self) -> Option<Transcript> {
        self.transcript.as_mut().map(std::mem::take)
    }

    fn on_sent(&mut self, to: PartyId, ts: u64, bytes: usize) {
        let before = self.rounds();
        self.sent_high = self.sent_high.max(ts);
        let new_round = std::mem::replace(&mut self.last_sent_ts[to.index()], ts) != ts;
        let advanced = self.rounds() - before;
        let phase = self.stats.cur();
        phase.rounds += advanced;
        let l = &mut phase.links[to.index()];
        l.msgs_sent += 1;
        l.bytes_sent += bytes as u64;
        l.largest_sent = l.largest_sent.max(bytes as u64);
        l.overhead_sent += FRAME_HEADER_BYTES as u64;
        l.rounds_sent += u64::from(new_round);
        self.record(self.me, to, bytes, ts);
    }

    fn on_received(&mut self, from: PartyId, ts: u64, bytes: usize) {
        let before = self.rounds();
        self.clock = self.clock.max(ts);
        let new_round = std::mem::replace(&mut self.last_recv_ts[from.index()], ts) != ts;
        let advanced = self.rounds() - before;
        let phase = self.stats.cur();
        phase.rounds += advanced;
        let l = &mut phase.links[from.index()];
        l.msgs_received += 1;
        l.bytes_received += bytes as u64;
        l.overhead_received += FRAME_HEADER_BYTES as u64;
        l.rounds_received += u64::from(new_round);
        self.record(from, self.me, bytes, ts);
    }

    fn record(&mut self, from: PartyId, to: PartyId, bytes: usize, round: u64) {
        if let Some(t) = &mut self.transcript {
            t.events.push(TranscriptEvent {
                phase: self.stats.current_name(),
                from,
                to,
                bytes: bytes as u64,
                round,
            });
        }
    }
}

/// Adds one message (direction, peer, length, payload) to a content digest.
fn hash_message(h: &mut blake3::Hasher, direction: u8, peer: PartyId, bytes: &[u8]) {
    h.update(&[direction, peer.index() as u8]);
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

impl Drop for Session {
    fn drop(&mut self) {
        let links: Vec<&mut Link> = self.links.iter_mut().filter_map(Option::as_mut).collect();
        // Received frames are freed, and each reader now reads and discards what still
        // arrives, so that a peer flushing its own frames to this party is not held up.
        for link in &links {
            link.inbox.close();
        }
        for link in links {
            // Writes what is still queued, then ends the connection.
            if let Outgoing::Stream(writer) = &mut link.out {
                writer.close();
            }
            if let Some(reader) = link.reader.take() {
                // Shutting the socket down wakes the reader thread out of its blocking read.
                let _ = reader.sock.shutdown(Shutdown::Both);
                let _ = reader.thread.join();
            }
        }
    }
}

/// Starts the background reader of a byte-stream link: it decodes frames from `stream` and
/// queues them (or the link's failure) for [`Session::recv_bytes`].
pub(crate) fn spawn_reader<R: PayloadSource + Send + 'static>(
    me: PartyId,
    peer: PartyId,
    mut stream: R,
    limits: Limits,
    shaping: Shaping,
    tx: InboxTx,
) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(format!("doram-net {me}<-{peer}"))
        .spawn(move || {
            let mut shaper = Shaper::new(shaping);
            loop {
                let event = match read_frame_with(&mut stream, || tx.frame_limit()) {
                    Ok(Some(f)) => Incoming::Frame {
                        deliver_at: shaper
                            .schedule(Instant::now(), FRAME_HEADER_BYTES + f.payload.len()),
                        stamp: f.stamp,
                        payload: f.payload,
                    },
                    Ok(None) => Incoming::Failed(NetError::Closed { peer }),
                    Err(e) => Incoming::Failed(e.into_net(peer, limits.timeout)),
                };
                let last = matches!(event, Incoming::Failed(_));
                // Waits for queue space as long as it takes: reading stops meanwhile. Once the
                // session is gone, frames are read and discarded until the stream ends.
                let _ = tx.send(event, None);
                if last {
                    break;
                }
            }
        })
}
