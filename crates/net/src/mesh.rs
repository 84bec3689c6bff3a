//! The in-process backend: a full mesh of sessions connected by channels, with a tamper hook
//! for fault tests.
//!
//! Without a tamper hook a frame is handed to the receiver's queue directly. With one, every
//! frame is encoded exactly as on a socket (header and payload), passed through the hook, and
//! the resulting bytes are decoded by the same frame decoder a socket reader uses, so injected
//! faults surface as the same errors they would over TCP.

use crate::inbox::{self, InboxRx, InboxTx};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doram_core::PartyId;

use crate::NetError;
use crate::frame::{FRAME_HEADER_BYTES, Header, Stamp, StreamDecoder};
use crate::session::{Incoming, Limits, Link, Outgoing, Session, TransportKind};
use crate::shaping::{Shaper, Shaping};

/// Runs `f` on every session, each in a thread of its own named `{name}-{party}` (so that
/// profiles, panics and thread lists name the party), waits for all of them, and returns what
/// each returned in the order of `sessions`: `Err` with the panic's payload where a thread
/// panicked (its session was dropped, so its peers saw a closed link rather than hang), or with
/// the error's message where a thread could not be started.
pub fn run_parties<R: Send>(
    sessions: Vec<Session>,
    name: &str,
    f: impl Fn(Session) -> R + Sync,
) -> Vec<std::thread::Result<R>> {
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|session| {
                std::thread::Builder::new()
                    .name(format!("{name}-{}", session.me()))
                    .spawn_scoped(scope, move || f(session))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join(),
                Err(e) => Err(Box::new(format!("could not start a party thread: {e}")) as _),
            })
            .collect()
    })
}

/// [`run_parties`] for party functions that return a `Result`: every party's output in the
/// order of `sessions`, or the first error in that order, where a thread that panicked or
/// could not be started counts as the error `failed()`.
///
/// # Errors
/// The first party's error, as above.
pub fn run_parties_ok<T: Send, E: Send>(
    sessions: Vec<Session>,
    name: &str,
    f: impl Fn(Session) -> Result<T, E> + Sync,
    failed: impl Fn() -> E,
) -> Result<Vec<T>, E> {
    run_parties(sessions, name, f)
        .into_iter()
        .map(|r| r.unwrap_or_else(|_| Err(failed())))
        .collect()
}

/// What the tamper hook of an in-process mesh does with one frame.
///
/// The hook is called with `(from, to, frame_index, &mut payload)`, where `frame_index` counts
/// the frames sent on the link `from → to` from 0. It may also edit the payload in place.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tamper {
    /// Deliver the (possibly edited) payload in a well-formed frame.
    Pass,
    /// Lose this frame; later frames are delivered, and the receiver refuses the first of
    /// them with [`NetError::OutOfSequence`].
    Drop,
    /// Lose this frame and every later frame on the link: the sender goes silent, and the
    /// receiver eventually gets [`NetError::Timeout`].
    Silence,
    /// Deliver only the first `n` bytes of the encoded frame (12-byte header, then payload)
    /// and close the link, as a peer dying mid-frame would.
    Truncate(usize),
    /// Deliver these raw bytes instead of the encoded frame (header included); the link stays
    /// open, so a partial frame waits for more bytes.
    Replace(Vec<u8>),
    /// Replace the frame by a header announcing one byte more than the frame limit.
    Oversize,
    /// Drop this frame and close the link `from → to`; the receiver gets
    /// [`NetError::Closed`] after the frames before it, and the sender's later sends to that
    /// peer fail with [`NetError::Closed`].
    Close,
}

/// The signature of a tamper hook: `(from, to, frame_index, payload) -> action`.
pub type TamperFn = dyn Fn(PartyId, PartyId, u64, &mut Vec<u8>) -> Tamper + Send + Sync;

/// Builder for an in-process mesh of sessions.
///
/// ```
/// use doram_net::{LocalMesh, Shaping};
/// use std::time::Duration;
/// let sessions = LocalMesh::new(3)
///     .timeout(Duration::from_secs(5))
///     .shaping(Shaping::lan())
///     .build();
/// assert_eq!(sessions.len(), 3);
/// ```
#[derive(Clone)]
pub struct LocalMesh {
    n: usize,
    timeout: Duration,
    max_frame: u32,
    shaping: Shaping,
    tamper: Option<Arc<TamperFn>>,
}

impl std::fmt::Debug for LocalMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMesh")
            .field("n", &self.n)
            .field("timeout", &self.timeout)
            .field("max_frame", &self.max_frame)
            .field("shaping", &self.shaping)
            .field("tamper", &self.tamper.is_some())
            .finish()
    }
}

/// Default receive timeout of every backend.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default maximum frame payload (256 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 256 << 20;

impl LocalMesh {
    /// A mesh of `n` parties with the default timeout and frame limit, no shaping and no
    /// tampering.
    ///
    /// # Panics
    /// If `n` is not 2, 3 or 4 (a protocol constant, never peer input).
    pub fn new(n: usize) -> LocalMesh {
        assert!(
            (2..=PartyId::MAX_PARTIES).contains(&n),
            "a session has 2 to 4 parties, not {n}"
        );
        LocalMesh {
            n,
            timeout: DEFAULT_TIMEOUT,
            max_frame: DEFAULT_MAX_FRAME_BYTES,
            shaping: Shaping::NONE,
            tamper: None,
        }
    }

    /// Sets the receive timeout of every session.
    pub fn timeout(mut self, timeout: Duration) -> LocalMesh {
        self.timeout = timeout;
        self
    }

    /// Sets the maximum frame payload.
    pub fn max_frame_bytes(mut self, limit: u32) -> LocalMesh {
        self.max_frame = limit;
        self
    }

    /// Shapes every link.
    pub fn shaping(mut self, shaping: Shaping) -> LocalMesh {
        self.shaping = shaping;
        self
    }

    /// Installs a tamper hook called for every frame on every link.
    pub fn tamper<F>(mut self, f: F) -> LocalMesh
    where
        F: Fn(PartyId, PartyId, u64, &mut Vec<u8>) -> Tamper + Send + Sync + 'static,
    {
        self.tamper = Some(Arc::new(f));
        self
    }

    /// Creates the sessions; element `i` belongs to party `i`.
    pub fn build(self) -> Vec<Session> {
        let n = self.n;
        let limits = Limits {
            timeout: self.timeout,
            send_timeout: self.timeout,
            max_frame: self.max_frame,
        };
        // senders[from][to] / receivers[to][from]
        let mut senders: Vec<Vec<Option<InboxTx>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        let mut receivers: Vec<Vec<Option<InboxRx>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        for from in 0..n {
            for to in (0..n).filter(|&to| to != from) {
                let (tx, rx) = inbox::channel(limits.max_frame);
                senders[from][to] = Some(tx);
                receivers[to][from] = Some(rx);
            }
        }
        let ids = PartyId::first(n);
        ids.iter()
            .map(|&me| {
                let links = (0..PartyId::MAX_PARTIES)
                    .map(|peer| {
                        let tx = senders.get_mut(me.index())?.get_mut(peer)?.take()?;
                        let rx = receivers.get_mut(me.index())?.get_mut(peer)?.take()?;
                        let out = LocalOut {
                            me,
                            peer: ids[peer],
                            tx: Some(tx),
                            shaper: Shaper::new(self.shaping),
                            tamper: self.tamper.clone(),
                            frames: 0,
                            silenced: false,
                            decoder: StreamDecoder::new(self.max_frame),
                            limits,
                        };
                        Some(Link::new(Outgoing::Local(out), rx, None))
                    })
                    .collect();
                Session::from_links(me, n, TransportKind::InProcess, links, limits)
            })
            .collect()
    }
}

impl Session {
    /// `n` in-process sessions connected by channels (element `i` is party `i`), with default
    /// settings; see [`LocalMesh`] for options.
    ///
    /// # Panics
    /// If `n` is not 2, 3 or 4.
    pub fn local_mesh(n: usize) -> Vec<Session> {
        LocalMesh::new(n).build()
    }

    /// `n` in-process sessions whose every frame passes through `tamper` (see [`Tamper`]).
    ///
    /// # Panics
    /// If `n` is not 2, 3 or 4.
    pub fn mesh_with<F>(n: usize, tamper: F) -> Vec<Session>
    where
        F: Fn(PartyId, PartyId, u64, &mut Vec<u8>) -> Tamper + Send + Sync + 'static,
    {
        LocalMesh::new(n).tamper(tamper).build()
    }
}

/// The sending half of an in-process link `me → peer`. It also owns the link's shaping state,
/// since for a channel the send time is the arrival time.
pub(crate) struct LocalOut {
    me: PartyId,
    peer: PartyId,
    tx: Option<InboxTx>,
    shaper: Shaper,
    tamper: Option<Arc<TamperFn>>,
    frames: u64,
    silenced: bool,
    decoder: StreamDecoder,
    limits: Limits,
}

fn encode_wire(stamp: Stamp, payload: &[u8]) -> Vec<u8> {
    // In-process payloads were checked against the frame limit, which is a u32.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let mut w = Vec::with_capacity(FRAME_HEADER_BYTES + payload.len());
    w.extend_from_slice(&Header { len, stamp }.encode());
    w.extend_from_slice(payload);
    w
}

impl LocalOut {
    pub(crate) fn send(&mut self, stamp: Stamp, payload: Vec<u8>) -> Result<(), NetError> {
        let Some(tx) = &self.tx else {
            return Err(NetError::Closed { peer: self.peer });
        };
        let limit = tx.frame_limit();
        let index = self.frames;
        self.frames += 1;
        let Some(tamper) = self.tamper.clone() else {
            if payload.len() > limit as usize {
                // The receiver refuses it as a reader thread would refuse the header.
                let e = NetError::FrameTooLarge {
                    peer: self.me,
                    len: payload.len() as u64,
                    limit: limit.into(),
                };
                let r = self.queue(Incoming::Failed(e));
                self.tx = None;
                return r;
            }
            let deliver_at = self
                .shaper
                .schedule(Instant::now(), FRAME_HEADER_BYTES + payload.len());
            let event = Incoming::Frame {
                stamp,
                payload,
                deliver_at,
            };
            return self.queue(event);
        };
        if self.silenced {
            return Ok(());
        }
        let mut bytes = payload;
        match tamper(self.me, self.peer, index, &mut bytes) {
            Tamper::Pass => self.push_wire(&encode_wire(stamp, &bytes)),
            Tamper::Drop => Ok(()),
            Tamper::Silence => {
                self.silenced = true;
                Ok(())
            }
            Tamper::Truncate(n) => {
                let mut wire = encode_wire(stamp, &bytes);
                wire.truncate(n);
                let r = self.push_wire(&wire);
                self.close();
                r
            }
            Tamper::Replace(raw) => self.push_wire(&raw),
            Tamper::Oversize => {
                let len = self.limits.max_frame.saturating_add(1);
                self.push_wire(&Header { len, stamp }.encode())
            }
            Tamper::Close => {
                self.close();
                Ok(())
            }
        }
    }

    /// Feeds wire bytes through the receiver-side decoder and queues what it yields.
    fn push_wire(&mut self, wire: &[u8]) -> Result<(), NetError> {
        let Some(tx) = &self.tx else {
            return Err(NetError::Closed { peer: self.peer });
        };
        self.decoder.lower_limit(tx.frame_limit());
        let now = Instant::now();
        for item in self.decoder.feed(wire) {
            let event = match item {
                Ok(f) => Incoming::Frame {
                    deliver_at: self
                        .shaper
                        .schedule(now, FRAME_HEADER_BYTES + f.payload.len()),
                    stamp: f.stamp,
                    payload: f.payload,
                },
                Err(e) => Incoming::Failed(e.into_net(self.me, self.limits.timeout)),
            };
            self.queue(event)?;
        }
        Ok(())
    }

    /// Queues `event` at the receiver. It never waits: the parties share one process, so
    /// the receiver's bound would protect nothing, and a sender that waited could stall a
    /// receiver that is itself sending.
    fn queue(&self, event: Incoming) -> Result<(), NetError> {
        let Some(tx) = &self.tx else {
            return Err(NetError::Closed { peer: self.peer });
        };
        tx.push(event)
            .map_err(|_| NetError::Closed { peer: self.peer })
    }

    /// Ends the link: a partial frame becomes a truncation error, then the channel closes.
    fn close(&mut self) {
        if let (Some(tx), Some(e)) = (&self.tx, self.decoder.finish()) {
            let _ = tx.send(
                Incoming::Failed(e.into_net(self.me, self.limits.timeout)),
                None,
            );
        }
        self.tx = None;
    }
}
