//! Setting up a session over TCP or TLS (see [`Session::connect`]).

use std::cell::Cell;
use std::collections::VecDeque;
use std::io::{self, BufReader, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use doram_core::PartyId;
use tracing::{debug, warn};

use crate::NetError;
use crate::config::Config;
use crate::error::ConfigError;
use crate::frame::{FRAME_HEADER_BYTES, PayloadSource};
use crate::session::{
    FrameSink, Limits, Link, Outgoing, ReaderThread, Session, TransportKind, spawn_reader,
};
use crate::tls::{TlsIo, TlsSetup, describe_handshake_error};

/// Which transport [`Session::connect_with`] sets up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// TLS 1.3 with mutual authentication; requires a `[tls]` section.
    #[default]
    Tls,
    /// Plaintext TCP: no confidentiality, no integrity, no authentication — any process that
    /// can reach the listening port can impersonate a party. For tests and benchmarks on a
    /// trusted host only.
    DangerousPlaintext,
}

/// Options for [`Session::connect_with`].
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ConnectOptions {
    /// The transport; TLS unless explicitly changed.
    pub transport: Transport,
    /// A listener already bound to this party's address (e.g. on port 0 in tests, then written
    /// into the configuration); when `None` the configured address is bound.
    pub listener: Option<TcpListener>,
}

impl ConnectOptions {
    /// TLS, binding the configured address.
    pub fn new() -> ConnectOptions {
        ConnectOptions::default()
    }

    /// Uses `transport`.
    pub fn transport(mut self, transport: Transport) -> ConnectOptions {
        self.transport = transport;
        self
    }

    /// Accepts connections on `listener` instead of binding the configured address.
    pub fn listener(mut self, listener: TcpListener) -> ConnectOptions {
        self.listener = Some(listener);
        self
    }
}

const MAGIC: &[u8; 4] = b"DRMN";
const VERSION: u8 = 1;
const INITIAL_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_millis(200);
const ACCEPT_POLL: Duration = Duration::from_millis(2);
/// Incoming connections authenticated at once during setup. A connection beyond this cuts off
/// the oldest unfinished one (a real peer's handshake takes milliseconds, and it retries until
/// the connect timeout), so a flood of idle connections neither starts threads without bound
/// nor locks the peers out.
pub(crate) const MAX_GREETS: usize = 16;
/// Read buffer of a plaintext reader.
const READ_BUFFER: usize = 256 << 10;

/// Listener verdicts on a hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Verdict {
    Accepted = 0,
    WrongSessionSize = 1,
    WrongRecipient = 2,
    NotAPeer = 3,
    IdentityMismatch = 4,
    Duplicate = 5,
    BadHello = 6,
}

impl Verdict {
    fn from_byte(b: u8) -> Option<Verdict> {
        use Verdict::*;
        [
            Accepted,
            WrongSessionSize,
            WrongRecipient,
            NotAPeer,
            IdentityMismatch,
            Duplicate,
            BadHello,
        ]
        .into_iter()
        .find(|v| *v as u8 == b)
    }

    fn describe(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::WrongSessionSize => "it runs a session with a different number of parties",
            Verdict::WrongRecipient => {
                "it is not the party we meant to reach (check the addresses)"
            }
            Verdict::NotAPeer => "our party id is not a peer in its session",
            Verdict::IdentityMismatch => "our certificate does not belong to our party id",
            Verdict::Duplicate => "it already has a connection from our party id",
            Verdict::BadHello => "it did not understand our hello",
        }
    }
}

fn hello(n: usize, from: PartyId, to: PartyId) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(MAGIC);
    h[4] = VERSION;
    h[5] = n as u8;
    h[6] = from.index() as u8;
    h[7] = to.index() as u8;
    h
}

fn ack(v: Verdict) -> [u8; 8] {
    let mut a = [0u8; 8];
    a[..4].copy_from_slice(MAGIC);
    a[4] = VERSION;
    a[5] = v as u8;
    a
}

/// The listener's reading of a hello: the claimed sender (if parseable) and the verdict before
/// identity and duplicate checks.
fn judge_hello(h: &[u8; 8], me: PartyId, n: usize) -> (Option<PartyId>, Verdict) {
    if &h[..4] != MAGIC || h[4] != VERSION {
        return (None, Verdict::BadHello);
    }
    if usize::from(h[5]) != n {
        return (None, Verdict::WrongSessionSize);
    }
    let Ok(from) = PartyId::from_index(usize::from(h[6]), n) else {
        return (None, Verdict::NotAPeer);
    };
    if from == me {
        return (None, Verdict::NotAPeer);
    }
    if usize::from(h[7]) != me.index() {
        return (Some(from), Verdict::WrongRecipient);
    }
    (Some(from), Verdict::Accepted)
}

fn remaining(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

fn set_timeouts(sock: &TcpStream, t: Duration) -> io::Result<()> {
    sock.set_read_timeout(Some(t))?;
    sock.set_write_timeout(Some(t))
}

/// Writes all buffers, with as few system calls as the socket allows.
fn write_all_vectored(w: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The sending half of a plaintext link.
struct TcpSink {
    sock: TcpStream,
    /// The part of a frame the socket did not take without waiting.
    pending: Vec<u8>,
}

impl FrameSink for TcpSink {
    fn write_frame(&mut self, header: &[u8; FRAME_HEADER_BYTES], payload: &[u8]) -> io::Result<()> {
        write_all_vectored(
            &mut self.sock,
            &mut [IoSlice::new(header), IoSlice::new(payload)],
        )
    }

    fn write_frame_nowait(
        &mut self,
        header: &[u8; FRAME_HEADER_BYTES],
        payload: &[u8],
    ) -> io::Result<Option<bool>> {
        let Some(sent) = crate::writer::send_nowait(&self.sock, &[header, payload])? else {
            return Ok(None);
        };
        let rest = |from: usize| {
            let h = &header[from.min(FRAME_HEADER_BYTES)..];
            let p = &payload[from.saturating_sub(FRAME_HEADER_BYTES)..];
            [h, p].concat()
        };
        if sent == FRAME_HEADER_BYTES + payload.len() {
            return Ok(Some(true));
        }
        self.pending = rest(sent);
        Ok(Some(false))
    }

    fn finish_pending(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.sock.write_all(&pending)
    }

    fn close(&mut self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

/// A connection accepted from an authenticated peer.
struct Accepted {
    reader: Box<dyn PayloadSource + Send>,
    sock: TcpStream,
}

/// Everything the setup threads share.
struct Shared {
    me: PartyId,
    n: usize,
    tls: Option<TlsSetup>,
    deadline: Instant,
    connect_timeout: Duration,
    timeout: Duration,
    abort: AtomicBool,
    claimed: Mutex<[bool; PartyId::MAX_PARTIES]>,
    /// Incoming connections being authenticated now, oldest first (at most [`MAX_GREETS`]):
    /// id, a handle to cut it off, and whether it was.
    greeting: Mutex<VecDeque<(u64, TcpStream, bool)>>,
    /// Signalled when a greeting thread ends.
    greeting_done: Condvar,
}

type Greetings = VecDeque<(u64, TcpStream, bool)>;

impl Shared {
    fn greetings(&self) -> MutexGuard<'_, Greetings> {
        // A poisoned lock only means a greeting thread panicked; the list stays valid.
        self.greeting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers greeting `id` on `sock`. With [`MAX_GREETS`] under way, cuts off the oldest
    /// and waits for its thread to end, so that at most that many run at once.
    fn start_greeting(&self, id: u64, sock: &TcpStream) -> io::Result<()> {
        let handle = sock.try_clone()?;
        let mut g = self.greetings();
        while g.len() >= MAX_GREETS {
            if remaining(self.deadline).is_none() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "setup deadline passed while handshakes were under way",
                ));
            }
            if let Some(oldest) = g.iter_mut().find(|(_, _, cut)| !cut) {
                debug!("cut off the oldest of {MAX_GREETS} unfinished handshakes");
                let _ = oldest.1.shutdown(Shutdown::Both);
                oldest.2 = true;
            }
            g = self
                .greeting_done
                .wait_timeout(g, GREET_WAIT)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        g.push_back((id, handle, false));
        Ok(())
    }
}

/// How long the acceptor waits for a cut-off handshake's thread to end before looking again.
const GREET_WAIT: Duration = Duration::from_millis(50);

/// Removes a greeting from the list when its thread ends.
struct Greeting<'a>(&'a Shared, u64);

impl Drop for Greeting<'_> {
    fn drop(&mut self) {
        self.0.greetings().retain(|(id, _, _)| *id != self.1);
        self.0.greeting_done.notify_all();
    }
}

enum SetupEvent {
    Outgoing(PartyId, Result<Box<dyn FrameSink>, NetError>),
    Incoming(Result<(PartyId, Accepted), String>),
}

impl Session {
    /// Connects to every other party of `config` over mutually authenticated TLS 1.3, as party
    /// `me`, binding `me`'s configured address.
    ///
    /// Blocks until every peer is connected in both directions or the connect timeout expires.
    ///
    /// # Topology
    /// Every ordered pair of parties has its own connection: party `i` sends to party `j` on the
    /// connection that `i` opened to `j`'s listening address, and receives from `j` on the one
    /// `j` opened to it. So every party listens, and connects to every other party; there is no
    /// election of who dials whom, no race when two parties dial each other, and each connection
    /// has a single owner in each process (a sending caller on one end, a reader thread on the
    /// other), so TLS state is never shared between threads.
    ///
    /// # Setup
    /// 1. The party binds its address (or uses a listener the caller bound), then concurrently
    ///    accepts connections and dials every peer, retrying refused connections with exponential
    ///    backoff (5 ms doubling to 200 ms) until the connect timeout, so processes may start in
    ///    any order.
    /// 2. With TLS, the TLS 1.3 handshake authenticates both ends (see [`TlsConfig`](crate::TlsConfig)).
    /// 3. The dialling party sends an 8-byte hello: `"DRMN"`, protocol version 1, the number of
    ///    parties, its own id and the id it believes it reached. The listener checks the session
    ///    size, that it is the intended recipient, that the id is a peer not yet connected and,
    ///    with TLS, that the client certificate belongs to that id. It answers with an 8-byte
    ///    acknowledgement (`"DRMN"`, version, status, two zero bytes); a rejection is reported to
    ///    the dialling party with its reason.
    /// 4. After the acknowledgement the listener never writes on that connection again (TLS session
    ///    tickets are disabled), and the dialler never reads from it.
    pub fn connect(config: &Config, me: PartyId) -> Result<Session, NetError> {
        Session::connect_with(config, me, ConnectOptions::new())
    }

    /// Like [`connect`](Session::connect) but over plaintext TCP: **insecure** (no encryption,
    /// no authentication of peers); see [`Transport::DangerousPlaintext`].
    pub fn connect_insecure_plaintext(config: &Config, me: PartyId) -> Result<Session, NetError> {
        Session::connect_with(
            config,
            me,
            ConnectOptions::new().transport(Transport::DangerousPlaintext),
        )
    }

    /// Connects with explicit options (transport, pre-bound listener).
    pub fn connect_with(
        config: &Config,
        me: PartyId,
        options: ConnectOptions,
    ) -> Result<Session, NetError> {
        let n = config.n_parties();
        let own = config.party(me).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "{me} is not a party of this {n}-party configuration"
            ))
        })?;
        let (tls, kind) = match options.transport {
            Transport::Tls => (Some(TlsSetup::new(config, me)?), TransportKind::Tls),
            Transport::DangerousPlaintext => (None, TransportKind::Tcp),
        };
        let listener = match options.listener {
            Some(l) => l,
            None => TcpListener::bind(&own.address).map_err(|e| NetError::Listen {
                address: own.address.clone(),
                source: Arc::new(e),
            })?,
        };
        let limits = Limits {
            timeout: config.timeout,
            send_timeout: config.timeout,
            max_frame: config.max_frame_bytes,
        };
        let shared = Arc::new(Shared {
            me,
            n,
            tls,
            deadline: Instant::now() + config.connect_timeout,
            connect_timeout: config.connect_timeout,
            timeout: config.timeout,
            abort: AtomicBool::new(false),
            claimed: Mutex::new([false; PartyId::MAX_PARTIES]),
            greeting: Mutex::new(VecDeque::new()),
            greeting_done: Condvar::new(),
        });
        // `establish` stops the acceptor and any connector still retrying before it returns.
        let (outgoing, incoming) = establish(config, &shared, listener)?;

        let mut links: Vec<Option<Link>> = (0..PartyId::MAX_PARTIES).map(|_| None).collect();
        for (peer, (sink, acc)) in outgoing.into_iter().zip(incoming).enumerate() {
            let (Some(sink), Some(acc)) = (sink, acc) else {
                continue;
            };
            let peer_id = PartyId::ALL[peer];
            let (tx, rx) = crate::inbox::channel(limits.max_frame);
            let shutdown = acc.sock;
            let io_error = |e| NetError::Io {
                peer: peer_id,
                source: Arc::new(e),
            };
            let thread = spawn_reader(me, peer_id, acc.reader, limits, config.shaping, tx)
                .map_err(io_error)?;
            let out =
                Outgoing::stream(me, peer_id, sink, None, limits.send_timeout).map_err(io_error)?;
            links[peer] = Some(Link::new(
                out,
                rx,
                Some(ReaderThread {
                    sock: shutdown,
                    thread,
                }),
            ));
        }
        Ok(Session::from_links(me, n, kind, links, limits))
    }
}

type Halves = (Vec<Option<Box<dyn FrameSink>>>, Vec<Option<Accepted>>);

/// Runs the acceptor and one connector per peer until every link is up.
fn establish(
    config: &Config,
    shared: &Arc<Shared>,
    listener: TcpListener,
) -> Result<Halves, NetError> {
    let (tx, rx) = mpsc::channel();
    let me = shared.me;
    let (stop, stopped) = mpsc::channel::<()>();
    let acceptor = {
        let shared = Arc::clone(shared);
        let tx = tx.clone();
        thread::Builder::new()
            .name(format!("doram-net {me} accept"))
            .spawn(move || accept_loop(&shared, &listener, &tx, &stopped))
            .map_err(|e| NetError::Connect {
                peer: me,
                reason: format!("cannot spawn: {e}"),
            })?
    };
    let result = run_setup(config, shared, tx, &rx);
    // Stop the connectors still retrying, and close the listener before returning, whatever
    // the outcome: a listener left open for a moment would take (and reset) the connections of
    // a session that reuses this address right after, e.g. the next run on the same
    // configuration.
    shared.abort.store(true, Ordering::SeqCst);
    drop(stop);
    if acceptor.join().is_err() {
        warn!(%me, "the accepting thread panicked");
    }
    result
}

/// The dialling half of [`establish`] and the wait for every link.
fn run_setup(
    config: &Config,
    shared: &Arc<Shared>,
    tx: mpsc::Sender<SetupEvent>,
    rx: &mpsc::Receiver<SetupEvent>,
) -> Result<Halves, NetError> {
    let me = shared.me;
    let peers: Vec<PartyId> = PartyId::first(shared.n)
        .iter()
        .copied()
        .filter(|&p| p != me)
        .collect();
    for &peer in &peers {
        let shared = Arc::clone(shared);
        let tx = tx.clone();
        let address = config.parties[peer.index()].address.clone();
        thread::Builder::new()
            .name(format!("doram-net {me} dial {peer}"))
            .spawn(move || {
                let r = dial(&shared, peer, &address);
                let _ = tx.send(SetupEvent::Outgoing(peer, r));
            })
            .map_err(|e| NetError::Connect {
                peer,
                reason: format!("cannot spawn: {e}"),
            })?;
    }
    drop(tx);

    let mut outgoing: Vec<Option<Box<dyn FrameSink>>> =
        (0..PartyId::MAX_PARTIES).map(|_| None).collect();
    let mut incoming: Vec<Option<Accepted>> = (0..PartyId::MAX_PARTIES).map(|_| None).collect();
    let mut last_rejection: Option<String> = None;
    loop {
        let done_out = peers.iter().all(|p| outgoing[p.index()].is_some());
        let done_in = peers.iter().all(|p| incoming[p.index()].is_some());
        if done_out && done_in {
            return Ok((outgoing, incoming));
        }
        let event = match remaining(shared.deadline) {
            Some(left) => rx.recv_timeout(left).ok(),
            None => None,
        };
        match event {
            Some(SetupEvent::Outgoing(peer, Ok(sink))) => outgoing[peer.index()] = Some(sink),
            Some(SetupEvent::Outgoing(_, Err(e))) => return Err(e),
            Some(SetupEvent::Incoming(Ok((peer, acc)))) => {
                debug!(%me, %peer, "incoming link authenticated");
                incoming[peer.index()] = Some(acc);
            }
            Some(SetupEvent::Incoming(Err(reason))) => {
                warn!(%me, %reason, "rejected an incoming connection");
                last_rejection = Some(reason);
            }
            None => {
                // Deadline: report the first peer with a missing direction.
                let timeout = shared.connect_timeout;
                let peer = peers
                    .iter()
                    .copied()
                    .find(|p| outgoing[p.index()].is_none() || incoming[p.index()].is_none())
                    .unwrap_or(me);
                let out_state = match outgoing[peer.index()] {
                    Some(_) => "our connection to it is up",
                    None => "our connection to it was not established",
                };
                let in_state = match incoming[peer.index()] {
                    Some(_) => "its connection to us is up",
                    None => "no authenticated connection came from it",
                };
                let mut reason = format!("no link within {timeout:?}: {out_state}, {in_state}");
                if let Some(r) = last_rejection {
                    reason.push_str(&format!("; last rejected incoming connection: {r}"));
                }
                return Err(NetError::Connect { peer, reason });
            }
        }
    }
}

/// Accepts connections until setup ends, authenticating each on its own thread so that a slow
/// or hostile connection cannot hold up the others.
/// Returns (dropping the listener) as soon as `stop` is dropped.
fn accept_loop(
    shared: &Arc<Shared>,
    listener: &TcpListener,
    tx: &mpsc::Sender<SetupEvent>,
    stop: &mpsc::Receiver<()>,
) {
    // Waits between polls; false once setup has ended.
    let pause = || {
        matches!(
            stop.recv_timeout(ACCEPT_POLL),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    };
    if let Err(e) = listener.set_nonblocking(true) {
        let _ = tx.send(SetupEvent::Incoming(Err(format!("listener unusable: {e}"))));
        return;
    }
    let mut greets = 0u64;
    while !shared.abort.load(Ordering::SeqCst) && remaining(shared.deadline).is_some() {
        match listener.accept() {
            Ok((sock, addr)) => {
                greets += 1;
                let id = greets;
                if let Err(e) = shared.start_greeting(id, &sock) {
                    debug!("connection from {addr} unusable: {e}");
                    continue;
                }
                let mine = Arc::clone(shared);
                let tx = tx.clone();
                let spawned = thread::Builder::new()
                    .name(format!("doram-net {} greet", shared.me))
                    .spawn(move || {
                        let _listed = Greeting(&mine, id);
                        let r = greet(&mine, sock, addr);
                        let _ = tx.send(SetupEvent::Incoming(r));
                    });
                if let Err(e) = spawned {
                    drop(Greeting(shared, id));
                    warn!("cannot spawn a handshake thread: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !pause() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                debug!("accept failed: {e}");
                if !pause() {
                    return;
                }
            }
        }
    }
}

/// Authenticates one incoming connection (listener side).
fn greet(
    shared: &Shared,
    sock: TcpStream,
    addr: SocketAddr,
) -> Result<(PartyId, Accepted), String> {
    let slot = Cell::new(None);
    let result = greet_claiming(shared, sock, addr, &slot);
    if let (Err(_), Some(peer)) = (&result, slot.get()) {
        // Accepted but failed afterwards: let the peer try again.
        let mut claimed = shared.claimed.lock().unwrap_or_else(|p| p.into_inner());
        claimed[peer.index()] = false;
    }
    result
}

/// [`greet`], recording in `slot` the party whose place this connection claimed.
fn greet_claiming(
    shared: &Shared,
    sock: TcpStream,
    addr: SocketAddr,
    slot: &Cell<Option<PartyId>>,
) -> Result<(PartyId, Accepted), String> {
    let left = remaining(shared.deadline).ok_or("setup deadline passed")?;
    let setup = |e: io::Error| format!("connection from {addr}: {e}");
    sock.set_nonblocking(false).map_err(setup)?;
    sock.set_nodelay(true).map_err(setup)?;
    set_timeouts(&sock, left).map_err(setup)?;
    let shutdown = sock.try_clone().map_err(setup)?;
    let (from, reader) = match &shared.tls {
        None => greet_plain(shared, sock, addr, slot)?,
        Some(tls) => greet_tls(shared, tls, sock, addr, slot)?,
    };
    // The reader blocks until data or the end of the stream; silence is detected by `recv`.
    shutdown.set_read_timeout(None).map_err(setup)?;
    shutdown
        .set_write_timeout(Some(shared.timeout))
        .map_err(setup)?;
    Ok((
        from,
        Accepted {
            reader,
            sock: shutdown,
        },
    ))
}

/// The payload reader of an accepted link.
type AcceptedReader = Box<dyn PayloadSource + Send>;

/// The hello and its acknowledgement over plain TCP (listener side).
fn greet_plain(
    shared: &Shared,
    mut sock: TcpStream,
    addr: SocketAddr,
    slot: &Cell<Option<PartyId>>,
) -> Result<(PartyId, AcceptedReader), String> {
    let setup = |e: io::Error| format!("connection from {addr}: {e}");
    let mut h = [0u8; 8];
    sock.read_exact(&mut h).map_err(setup)?;
    let (from, verdict) = judge_hello(&h, shared.me, shared.n);
    let verdict = claim_place(shared, slot, from, verdict);
    sock.write_all(&ack(verdict)).map_err(setup)?;
    let from = accepted_or_refused(addr, from, verdict)?;
    Ok((from, Box::new(BufReader::with_capacity(READ_BUFFER, sock))))
}

/// The TLS handshake, then the hello, checked against the client certificate, and its
/// acknowledgement (listener side).
fn greet_tls(
    shared: &Shared,
    tls: &TlsSetup,
    sock: TcpStream,
    addr: SocketAddr,
    slot: &Cell<Option<PartyId>>,
) -> Result<(PartyId, AcceptedReader), String> {
    let me = shared.me;
    let conn = tls.server().map_err(|e| e.to_string())?;
    let mut io = TlsIo::new(conn, sock);
    // The whole exchange, not each read, ends with setup: a trickling peer cannot
    // hold this thread past it.
    io.set_deadline(shared.deadline);
    io.handshake().map_err(|e| {
        format!(
            "TLS handshake with {addr} failed: {}",
            describe_handshake_error(&e)
        )
    })?;
    let mut h = [0u8; 8];
    io.read_exact(&mut h)
        .map_err(|e| format!("connection from {addr}: {}", describe_handshake_error(&e)))?;
    let (from, mut verdict) = judge_hello(&h, me, shared.n);
    if let (Some(f), Verdict::Accepted) = (from, verdict) {
        let cert = io.conn.peer_certificates().and_then(|c| c.first());
        let check = match cert {
            Some(cert) => tls.check_identity(cert, f),
            None => Err("no client certificate".into()),
        };
        if let Err(why) = check {
            warn!(%me, claimed = %f, %addr, "{why}");
            verdict = Verdict::IdentityMismatch;
        }
    }
    let verdict = claim_place(shared, slot, from, verdict);
    io.send(&ack(verdict))
        .map_err(|e| format!("connection from {addr}: {e}"))?;
    let from = accepted_or_refused(addr, from, verdict)?;
    Ok((from, Box::new(io.into_reader())))
}

/// Claims the place of the party `from` for an accepted hello, recording it in `slot`:
/// [`Verdict::Duplicate`] if that party is already connected; other verdicts pass unchanged.
fn claim_place(
    shared: &Shared,
    slot: &Cell<Option<PartyId>>,
    from: Option<PartyId>,
    verdict: Verdict,
) -> Verdict {
    let Some(from) = from else {
        return verdict;
    };
    if verdict != Verdict::Accepted {
        return verdict;
    }
    // A poisoned lock only means another greeting thread panicked; the flags stay valid.
    let mut claimed = shared.claimed.lock().unwrap_or_else(|p| p.into_inner());
    if std::mem::replace(&mut claimed[from.index()], true) {
        Verdict::Duplicate
    } else {
        slot.set(Some(from));
        Verdict::Accepted
    }
}

/// The party of an accepted hello, or why the connection from `addr` was refused.
fn accepted_or_refused(
    addr: SocketAddr,
    from: Option<PartyId>,
    verdict: Verdict,
) -> Result<PartyId, String> {
    match (from, verdict) {
        (Some(from), Verdict::Accepted) => Ok(from),
        (from, v) => Err(format!(
            "connection from {addr}{} refused: {}",
            from.map(|f| format!(" claiming to be {f}"))
                .unwrap_or_default(),
            match v {
                Verdict::IdentityMismatch => "its certificate does not belong to that party",
                Verdict::Duplicate => "that party is already connected",
                Verdict::WrongRecipient => "it meant to reach another party",
                Verdict::WrongSessionSize => "it runs a session with a different number of parties",
                Verdict::NotAPeer => "its party id is not a peer",
                Verdict::BadHello | Verdict::Accepted => "malformed hello",
            }
        )),
    }
}

/// Opens the link to `peer` (dialling side), retrying until the deadline.
fn dial(shared: &Shared, peer: PartyId, address: &str) -> Result<Box<dyn FrameSink>, NetError> {
    let sock = connect_retrying(shared, peer, address)?;
    let left = remaining(shared.deadline).unwrap_or(Duration::from_millis(1));
    let io_fail = |e: io::Error| NetError::Connect {
        peer,
        reason: format!("{address}: {e}"),
    };
    sock.set_nodelay(true).map_err(io_fail)?;
    set_timeouts(&sock, left).map_err(io_fail)?;
    let sink = match &shared.tls {
        None => dial_plain(shared, peer, address, sock)?,
        Some(tls) => dial_tls(shared, tls, peer, address, sock)?,
    };
    debug!(me = %shared.me, %peer, "outgoing link up");
    Ok(sink)
}

/// A TCP connection to `address`, tried with growing pauses until the setup deadline or an
/// abort.
fn connect_retrying(shared: &Shared, peer: PartyId, address: &str) -> Result<TcpStream, NetError> {
    let fail = |reason: String| NetError::Connect { peer, reason };
    let mut backoff = INITIAL_BACKOFF;
    let mut last_error = String::from("no attempt made");
    loop {
        if shared.abort.load(Ordering::SeqCst) {
            return Err(fail("setup aborted".into()));
        }
        let Some(left) = remaining(shared.deadline) else {
            return Err(fail(format!(
                "nothing accepted connections at {address} within {:?} (last error: {last_error})",
                shared.connect_timeout
            )));
        };
        match address.to_socket_addrs() {
            Ok(addrs) => {
                for a in addrs {
                    match TcpStream::connect_timeout(&a, left.min(Duration::from_secs(1))) {
                        Ok(s) => return Ok(s),
                        Err(e) => last_error = format!("{a}: {e}"),
                    }
                }
            }
            Err(e) => last_error = format!("cannot resolve {address}: {e}"),
        }
        thread::sleep(backoff.min(remaining(shared.deadline).unwrap_or_default()));
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Our hello and the peer's acknowledgement over plain TCP (dialling side).
fn dial_plain(
    shared: &Shared,
    peer: PartyId,
    address: &str,
    mut sock: TcpStream,
) -> Result<Box<dyn FrameSink>, NetError> {
    let io_fail = |e: io::Error| NetError::Connect {
        peer,
        reason: format!("{address}: {e}"),
    };
    let handshake = |reason: String| NetError::Handshake { peer, reason };
    let mut answer = [0u8; 8];
    sock.write_all(&hello(shared.n, shared.me, peer))
        .map_err(io_fail)?;
    sock.read_exact(&mut answer)
        .map_err(|e| handshake(format!("{address} did not acknowledge our hello: {e}")))?;
    check_answer(&answer, address).map_err(handshake)?;
    sock.set_write_timeout(Some(shared.timeout))
        .map_err(io_fail)?;
    Ok(Box::new(TcpSink {
        sock,
        pending: Vec::new(),
    }))
}

/// The TLS handshake with `peer`'s identity checked, then our hello and its acknowledgement
/// (dialling side).
fn dial_tls(
    shared: &Shared,
    tls: &TlsSetup,
    peer: PartyId,
    address: &str,
    sock: TcpStream,
) -> Result<Box<dyn FrameSink>, NetError> {
    let handshake = |reason: String| NetError::Handshake { peer, reason };
    let mut answer = [0u8; 8];
    let mut io = TlsIo::new(tls.client(peer)?, sock);
    io.set_deadline(shared.deadline);
    io.handshake()
        .map_err(|e| handshake(format!("{address}: {}", describe_handshake_error(&e))))?;
    // rustls checked the chain and `peer`'s name; the certificate must name no other
    // party as well.
    match io.conn.peer_certificates().and_then(|c| c.first()) {
        Some(cert) => tls.check_identity(cert, peer),
        None => Err("no server certificate".into()),
    }
    .map_err(|why| handshake(format!("{address}: {why}")))?;
    io.send(&hello(shared.n, shared.me, peer))
        .map_err(|e| handshake(describe_handshake_error(&e)))?;
    io.read_exact(&mut answer)
        .map_err(|e| handshake(format!("{address}: {}", describe_handshake_error(&e))))?;
    check_answer(&answer, address).map_err(handshake)?;
    io.socket()
        .set_write_timeout(Some(shared.timeout))
        .map_err(|e| NetError::Connect {
            peer,
            reason: format!("{address}: {e}"),
        })?;
    Ok(Box::new(io.into_writer()))
}

fn check_answer(a: &[u8; 8], address: &str) -> Result<(), String> {
    if &a[..4] != MAGIC || a[4] != VERSION {
        return Err(format!(
            "{address} is not a doram party (bad acknowledgement)"
        ));
    }
    match Verdict::from_byte(a[5]) {
        Some(Verdict::Accepted) => Ok(()),
        Some(v) => Err(format!("{address} refused us: {}", v.describe())),
        None => Err(format!("{address} answered with unknown status {}", a[5])),
    }
}
