//! Client–server connections: a service (one of the configured parties) accepts many clients
//! over **server-authenticated** TLS 1.3; clients have no certificate and pin the
//! configuration's CA.
//!
//! Each connection becomes an ordinary two-party [`Session`] — the client is
//! [`SERVICE_CLIENT`] (P0) and the service [`SERVICE_SIDE`] (P1) — so protocol code, statistics,
//! timeouts and transcripts work exactly as between parties. Unlike the party mesh, both
//! directions share one TCP connection.
//!
//! # Setup
//! 1. The service binds its client-facing address ([`ServiceListener::bind`]) and either
//!    [`accept`](ServiceListener::accept)s TCP connections itself, running the TLS handshake of
//!    each in [`PendingClient::handshake`] on whatever thread it chooses, or hands the listener
//!    to a [`ServiceGate`], which runs the handshakes under [`HandshakeLimits`] and yields only
//!    connections whose handshake completed.
//! 2. The client ([`connect_service`]) checks that the service's certificate chains to the CA of
//!    the configuration and is valid for the service party's DNS name.
//! 3. The client sends an 8-byte hello (`"DRSV"`, version 1, the party id it meant to reach,
//!    zeros) and the service answers with an 8-byte acknowledgement (`"DRSV"`, version, status
//!    0 = accepted, 1 = wrong party, 2 = bad hello). After that, frames flow in both directions
//!    in TLS records sealed and opened by rustls (`crate::stream`); the service never sends
//!    before the client's first frame.
//!
//! # Deadlines and hostile clients
//! Clients are anonymous, so anyone can open connections. Both sides bound the *whole* setup
//! (TCP connect, TLS handshake, hello exchange) by one deadline: every socket read and write
//! gets only the time left, so a peer that trickles bytes cannot stretch it. A [`ServiceGate`]
//! holds at most [`HandshakeLimits::max_pending`] unfinished handshakes and
//! [`HandshakeLimits::max_pending_per_address`] per client IP address (a newcomer beyond
//! either cuts off the oldest), so idle TCP sockets cannot take the places of real clients; a
//! connection counts against the caller's client limit only once it is
//! [`Established`].

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use doram_core::PartyId;
use rustls::client::Resumption;
use rustls::server::NoServerSessionStorage;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use rustls_pki_types::ServerName;

use crate::NetError;
use crate::config::Config;
use crate::error::ConfigError;
use crate::session::{Limits, Link, Outgoing, ReaderThread, Session, TransportKind, spawn_reader};
use crate::shaping::Shaping;
use crate::tls::{
    TlsIo, ca_roots, check_sole_name, describe_handshake_error, provider, rustls_config_error,
};

/// The client's id in a service session.
pub const SERVICE_CLIENT: PartyId = PartyId::P0;
/// The service's id in a service session.
pub const SERVICE_SIDE: PartyId = PartyId::P1;

const MAGIC: &[u8; 4] = b"DRSV";
const VERSION: u8 = 1;
const ACCEPT_POLL: Duration = Duration::from_millis(5);

/// A service's listening socket for clients.
pub struct ServiceListener {
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    me: PartyId,
    limits: Limits,
}

impl std::fmt::Debug for ServiceListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceListener")
            .field("me", &self.me)
            .field("addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

/// An accepted TCP connection whose TLS handshake has not run yet.
#[derive(Debug)]
pub struct PendingClient {
    sock: TcpStream,
    addr: SocketAddr,
    tls: Arc<ServerConfig>,
    me: PartyId,
    limits: Limits,
    handshake_timeout: Duration,
    /// When the TCP connection was accepted: the handshake deadline counts from here.
    accepted: Instant,
    /// The largest frame the client may send, if lower than the configuration's.
    max_request: Option<u32>,
}

impl ServiceListener {
    /// Binds `address` for clients of party `me`, which presents its configured certificate.
    /// Receive and send timeouts of accepted sessions are the configuration's timeout.
    pub fn bind(address: &str, config: &Config, me: PartyId) -> Result<ServiceListener, NetError> {
        let listener = TcpListener::bind(address).map_err(|e| NetError::Listen {
            address: address.to_string(),
            source: Arc::new(e),
        })?;
        ServiceListener::from_listener(listener, config, me)
    }

    /// Uses an already bound listener (e.g. on port 0 in tests).
    pub fn from_listener(
        listener: TcpListener,
        config: &Config,
        me: PartyId,
    ) -> Result<ServiceListener, NetError> {
        let own = config
            .party(me)
            .ok_or_else(|| ConfigError::Invalid(format!("{me} is not in the configuration")))?;
        let (chain, key, key_path) = crate::certs::load_identity(own)?;
        let mut server = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| rustls_config_error(&key_path, e))?;
        server.send_tls13_tickets = 0;
        server.session_storage = Arc::new(NoServerSessionStorage {});
        listener
            .set_nonblocking(true)
            .map_err(|e| NetError::Listen {
                address: format!("{:?}", listener.local_addr().ok()),
                source: Arc::new(e),
            })?;
        Ok(ServiceListener {
            listener,
            tls: Arc::new(server),
            me,
            limits: Limits {
                timeout: config.timeout,
                send_timeout: config.timeout,
                max_frame: config.max_frame_bytes,
            },
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Waits up to `wait` for a TCP connection. `Ok(None)` if none arrived.
    pub fn accept(&self, wait: Duration) -> Result<Option<PendingClient>, NetError> {
        let deadline = Instant::now() + wait;
        loop {
            match self.listener.accept() {
                Ok((sock, addr)) => {
                    return Ok(Some(PendingClient {
                        sock,
                        addr,
                        tls: Arc::clone(&self.tls),
                        me: self.me,
                        limits: self.limits,
                        handshake_timeout: self.limits.timeout,
                        accepted: Instant::now(),
                        max_request: None,
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Ok(None);
                    }
                    std::thread::sleep(ACCEPT_POLL.min(wait));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(NetError::Listen {
                        address: format!("{:?}", self.listener.local_addr().ok()),
                        source: Arc::new(e),
                    });
                }
            }
        }
    }
}

impl PendingClient {
    /// The client's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The handshake deadline, counted from when the connection was accepted (default: the
    /// configured timeout).
    pub fn set_handshake_timeout(&mut self, timeout: Duration) {
        self.handshake_timeout = timeout;
    }

    /// The largest frame the client may send on the established session (default: the
    /// configuration's frame limit). A service whose requests are small should lower it; the
    /// service's own frames keep the configuration's limit.
    pub fn set_max_frame_bytes(&mut self, max: u32) {
        self.max_request = Some(max);
    }

    /// Runs the TLS handshake and the hello exchange, all of it within the handshake timeout
    /// counted from the accept, and returns the service's end of the session (`me` =
    /// [`SERVICE_SIDE`]).
    pub fn handshake(self) -> Result<Session, NetError> {
        let peer = SERVICE_CLIENT;
        let fail = |reason: String| NetError::Handshake { peer, reason };
        let io_fail = |e: io::Error| fail(format!("{}: {e}", self.addr));
        self.sock.set_nonblocking(false).map_err(io_fail)?;
        self.sock.set_nodelay(true).map_err(io_fail)?;
        let conn = ServerConnection::new(Arc::clone(&self.tls)).map_err(|e| fail(e.to_string()))?;
        let mut io = TlsIo::new(conn, self.sock);
        io.set_deadline(self.accepted + self.handshake_timeout);
        io.handshake()
            .map_err(|e| fail(format!("{}: {}", self.addr, describe_handshake_error(&e))))?;
        let mut h = [0u8; 8];
        io.read_exact(&mut h)
            .map_err(|e| fail(format!("{}: {}", self.addr, describe_handshake_error(&e))))?;
        let status = if &h[..4] != MAGIC || h[4] != VERSION {
            2
        } else if usize::from(h[5]) != self.me.index() {
            1
        } else {
            0
        };
        io.send(&[
            MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], VERSION, status, 0, 0,
        ])
        .map_err(|e| fail(e.to_string()))?;
        if status != 0 {
            return Err(fail(format!(
                "{}: refused the client's hello (status {status})",
                self.addr
            )));
        }
        let recv_max = self.max_request.unwrap_or(self.limits.max_frame);
        // Replies wait for the client to read them: a client that sends requests without
        // reading cannot make the service queue more than two largest frames.
        let send_cap = Some(crate::inbox::queue_bytes(self.limits.max_frame));
        session_from(io, SERVICE_SIDE, peer, self.limits, recv_max, send_cap)
            .map_err(|e| fail(e.to_string()))
    }
}

/// Connects to the service of party `server` at `address` as an anonymous client, trusting
/// the configuration's CA and expecting the party's configured DNS name. The whole setup (TCP
/// connect, TLS handshake, hello exchange) must finish within `timeout`; the session's
/// timeouts are `timeout` too; `me` = [`SERVICE_CLIENT`].
pub fn connect_service(
    address: &str,
    config: &Config,
    server: PartyId,
    timeout: Duration,
) -> Result<Session, NetError> {
    let deadline = Instant::now() + timeout;
    let peer = SERVICE_SIDE;
    let conn = service_client_connection(config, server)?;
    let sock = connect_by(address, deadline)?;
    sock.set_nodelay(true).map_err(|e| NetError::Connect {
        peer,
        reason: format!("{address}: {e}"),
    })?;
    let mut io = TlsIo::new(conn, sock);
    io.set_deadline(deadline);
    client_handshake(&mut io, address, config, server)?;
    let limits = Limits {
        timeout,
        send_timeout: timeout,
        max_frame: config.max_frame_bytes,
    };
    session_from(io, SERVICE_CLIENT, peer, limits, limits.max_frame, None).map_err(|e| {
        NetError::Handshake {
            peer,
            reason: e.to_string(),
        }
    })
}

/// An anonymous TLS 1.3 client connection (no resumption) to party `server`'s service,
/// trusting the configuration's CA (which it must have) and expecting the party's name.
fn service_client_connection(
    config: &Config,
    server: PartyId,
) -> Result<ClientConnection, NetError> {
    let fail = |reason: String| NetError::Connect {
        peer: SERVICE_SIDE,
        reason,
    };
    let tls = config.tls.as_ref().ok_or(ConfigError::NoTls)?;
    if tls.ca_certs.is_empty() {
        return Err(ConfigError::Invalid(
            "clients of a service need a [tls] ca to trust (pinned peers are for parties)".into(),
        )
        .into());
    }
    let name = config
        .party(server)
        .ok_or_else(|| ConfigError::Invalid(format!("{server} is not in the configuration")))?
        .name
        .clone();
    let roots = ca_roots(tls)?;
    let mut client = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.resumption = Resumption::disabled();
    let server_name =
        ServerName::try_from(name.clone()).map_err(|e| fail(format!("bad server name: {e}")))?;
    ClientConnection::new(Arc::new(client), server_name).map_err(|e| fail(e.to_string()))
}

/// A TCP connection to the first of `address`'s socket addresses that accepts one before
/// `deadline`.
fn connect_by(address: &str, deadline: Instant) -> Result<TcpStream, NetError> {
    let fail = |reason: String| NetError::Connect {
        peer: SERVICE_SIDE,
        reason,
    };
    let mut last = String::from("no address");
    let addrs: Vec<SocketAddr> = address
        .to_socket_addrs()
        .map_err(|e| fail(format!("cannot resolve {address}: {e}")))?
        .collect();
    for a in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            last = format!("{a}: the connect deadline passed");
            break;
        }
        match TcpStream::connect_timeout(&a, left) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    Err(fail(last))
}

/// The TLS handshake with the service's certificate checked to name party `server` alone,
/// then the client's hello and the service's acknowledgement.
fn client_handshake(
    io: &mut TlsIo,
    address: &str,
    config: &Config,
    server: PartyId,
) -> Result<(), NetError> {
    let handshake = |reason: String| NetError::Handshake {
        peer: SERVICE_SIDE,
        reason,
    };
    io.handshake()
        .map_err(|e| handshake(format!("{address}: {}", describe_handshake_error(&e))))?;
    // rustls checked the chain and the service's name; the certificate must name no other
    // party as well.
    let names: Vec<String> = config.parties.iter().map(|p| p.name.clone()).collect();
    match io.conn.peer_certificates().and_then(|c| c.first()) {
        Some(cert) => check_sole_name(cert, &names, server),
        None => Err("no server certificate".into()),
    }
    .map_err(|why| handshake(format!("{address}: {why}")))?;
    io.send(&[
        MAGIC[0],
        MAGIC[1],
        MAGIC[2],
        MAGIC[3],
        VERSION,
        server.index() as u8,
        0,
        0,
    ])
    .map_err(|e| handshake(describe_handshake_error(&e)))?;
    let mut a = [0u8; 8];
    io.read_exact(&mut a)
        .map_err(|e| handshake(format!("{address}: {}", describe_handshake_error(&e))))?;
    if &a[..4] != MAGIC || a[4] != VERSION || a[5] != 0 {
        return Err(handshake(format!(
            "{address} refused the connection (status {})",
            a[5]
        )));
    }
    Ok(())
}

/// Splits an established connection into a two-party session; frames from the peer may carry
/// at most `recv_max` bytes, and sends wait while `send_cap` payload bytes are queued (if
/// given; the cap shrinks with the session's frame limit).
fn session_from(
    io: TlsIo,
    me: PartyId,
    peer: PartyId,
    limits: Limits,
    recv_max: u32,
    send_cap: Option<usize>,
) -> io::Result<Session> {
    let shutdown = io.socket().try_clone()?;
    shutdown.set_read_timeout(None)?;
    shutdown.set_write_timeout(Some(limits.send_timeout))?;
    let (writer, reader) = io.into_duplex()?;
    let read_limits = Limits {
        max_frame: recv_max.min(limits.max_frame),
        ..limits
    };
    let (tx, rx) = crate::inbox::channel(read_limits.max_frame);
    let thread = spawn_reader(me, peer, reader, read_limits, Shaping::default(), tx)?;
    let out = Outgoing::stream(me, peer, Box::new(writer), send_cap, limits.send_timeout)?;
    let mut links: Vec<Option<Link>> = (0..PartyId::MAX_PARTIES).map(|_| None).collect();
    links[peer.index()] = Some(Link::new(
        out,
        rx,
        Some(ReaderThread {
            sock: shutdown,
            thread,
        }),
    ));
    Ok(Session::from_links(
        me,
        2,
        TransportKind::Tls,
        links,
        limits,
    ))
}

/// Bounds on connections whose handshake has not completed (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeLimits {
    /// The whole handshake (TLS and hello) must finish this long after the accept.
    pub timeout: Duration,
    /// Unfinished handshakes at once; a new connection beyond this cuts off the oldest.
    pub max_pending: usize,
    /// Unfinished handshakes per client IP address; a new connection beyond this cuts off
    /// the oldest from that address.
    pub max_pending_per_address: usize,
    /// The largest frame a client may send on an established session (`None`: the
    /// configuration's frame limit).
    pub max_frame_bytes: Option<u32>,
}

impl Default for HandshakeLimits {
    /// 10 s per handshake, 64 pending, 8 per address, the configured frame limit.
    fn default() -> Self {
        HandshakeLimits {
            timeout: Duration::from_secs(10),
            max_pending: 64,
            max_pending_per_address: 8,
            max_frame_bytes: None,
        }
    }
}

/// A client connection whose handshake completed.
#[derive(Debug)]
pub struct Established {
    /// The service's end of the session.
    pub session: Session,
    /// The client's address.
    pub peer: SocketAddr,
}

/// An unfinished handshake the gate keeps track of.
struct Pending {
    key: u64,
    ip: IpAddr,
    accepted: Instant,
    /// Shutting this clone down ends the handshake thread's blocking I/O.
    sock: TcpStream,
}

/// Runs client handshakes off the accept loop, within [`HandshakeLimits`], and yields only
/// connections whose handshake completed ([`ServiceGate::accept`]).
pub struct ServiceGate {
    listener: ServiceListener,
    limits: HandshakeLimits,
    pending: Vec<Pending>,
    next_key: u64,
    done_tx: mpsc::Sender<(u64, SocketAddr, Result<Session, NetError>)>,
    done_rx: mpsc::Receiver<(u64, SocketAddr, Result<Session, NetError>)>,
    /// Handshakes that failed or were cut off (for tests and logs).
    failed: u64,
}

impl std::fmt::Debug for ServiceGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceGate")
            .field("listener", &self.listener)
            .field("limits", &self.limits)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl ServiceGate {
    /// A gate over `listener` with `limits`.
    pub fn new(listener: ServiceListener, limits: HandshakeLimits) -> ServiceGate {
        let (done_tx, done_rx) = mpsc::channel();
        ServiceGate {
            listener,
            limits,
            pending: Vec::new(),
            next_key: 0,
            done_tx,
            done_rx,
            failed: 0,
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Handshakes currently running.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Handshakes that failed, timed out or were cut off so far.
    pub fn failed_handshakes(&self) -> u64 {
        self.failed
    }

    /// Waits up to `wait` for a connection whose handshake completed; `Ok(None)` if none did.
    /// Meanwhile accepts new TCP connections and starts their handshakes (each on its own
    /// thread, within the limits). An error means the listening socket failed.
    pub fn accept(&mut self, wait: Duration) -> Result<Option<Established>, NetError> {
        let deadline = Instant::now() + wait;
        loop {
            while let Ok(done) = self.done_rx.try_recv() {
                if let Some(e) = self.finished(done) {
                    return Ok(Some(e));
                }
            }
            self.cut_overdue();
            match self.listener.accept(Duration::ZERO)? {
                Some(p) => self.start(p),
                None => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(None);
                    }
                    // Wake for a finished handshake or, at the latest, to poll the listener.
                    if let Ok(done) = self.done_rx.recv_timeout(ACCEPT_POLL.min(deadline - now))
                        && let Some(e) = self.finished(done)
                    {
                        return Ok(Some(e));
                    }
                }
            }
        }
    }

    /// Takes a finished handshake off the pending list: the client if it succeeded.
    fn finished(
        &mut self,
        (key, peer, result): (u64, SocketAddr, Result<Session, NetError>),
    ) -> Option<Established> {
        let listed = self.pending.len();
        self.pending.retain(|p| p.key != key);
        match result {
            Ok(session) => Some(Established { session, peer }),
            Err(e) => {
                // A handshake that `cut_oldest` took off the list was counted there.
                if self.pending.len() < listed {
                    self.failed += 1;
                }
                tracing::debug!(%peer, "client handshake failed: {e}");
                None
            }
        }
    }

    /// Shuts down handshakes past their deadline (their threads also stop on their own; this
    /// is the backstop).
    fn cut_overdue(&mut self) {
        let limit = self.limits.timeout + ACCEPT_POLL * 20;
        for p in &self.pending {
            if p.accepted.elapsed() > limit {
                let _ = p.sock.shutdown(Shutdown::Both);
            }
        }
    }

    /// Cuts off the oldest unfinished handshake (from `ip`, if given). A real client's
    /// handshake takes a round trip or two, so a newcomer displacing the oldest lets it
    /// through while idle sockets are cut off.
    fn cut_oldest(&mut self, ip: Option<IpAddr>) {
        let oldest = self
            .pending
            .iter()
            .filter(|q| ip.is_none_or(|a| q.ip == a))
            .min_by_key(|q| q.accepted);
        if let Some(oldest) = oldest {
            let _ = oldest.sock.shutdown(Shutdown::Both);
            let key = oldest.key;
            self.pending.retain(|q| q.key != key);
            self.failed += 1;
        }
    }

    fn start(&mut self, mut p: PendingClient) {
        let ip = p.addr.ip();
        let from_ip = self.pending.iter().filter(|q| q.ip == ip).count();
        if from_ip >= self.limits.max_pending_per_address.max(1) {
            // One address holds its share at most: its oldest unfinished handshake goes.
            tracing::debug!(peer = %p.addr, "too many unfinished handshakes from this address");
            self.cut_oldest(Some(ip));
        } else if self.pending.len() >= self.limits.max_pending.max(1) {
            self.cut_oldest(None);
        }
        let Ok(sock) = p.sock.try_clone() else {
            self.failed += 1;
            return;
        };
        p.set_handshake_timeout(self.limits.timeout);
        if let Some(m) = self.limits.max_frame_bytes {
            p.set_max_frame_bytes(m);
        }
        let key = self.next_key;
        self.next_key += 1;
        let (accepted, addr) = (p.accepted, p.addr);
        let tx = self.done_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("doram-net handshake".into())
            .spawn(move || {
                let _ = tx.send((key, addr, p.handshake()));
            });
        match spawned {
            Ok(_) => self.pending.push(Pending {
                key,
                ip,
                accepted,
                sock,
            }),
            Err(e) => {
                self.failed += 1;
                tracing::warn!("cannot start a handshake thread: {e}");
            }
        }
    }
}

/// Counts per IP address, for callers that limit established connections per address.
#[derive(Debug, Default)]
pub struct PerAddress {
    counts: HashMap<IpAddr, usize>,
}

impl PerAddress {
    /// Connections counted for `ip`.
    pub fn count(&self, ip: IpAddr) -> usize {
        self.counts.get(&ip).copied().unwrap_or(0)
    }

    /// Counts one more connection from `ip`.
    pub fn add(&mut self, ip: IpAddr) {
        *self.counts.entry(ip).or_insert(0) += 1;
    }

    /// Counts one connection from `ip` less.
    pub fn remove(&mut self, ip: IpAddr) {
        if let Some(c) = self.counts.get_mut(&ip) {
            *c = c.saturating_sub(1);
            if *c == 0 {
                self.counts.remove(&ip);
            }
        }
    }
}
