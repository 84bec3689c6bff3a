//! The servers S_0, S_1 (key holders) and S_2 (dealer): offline pools and client handling.
//!
//! # Offline material (PIR-GOD Algorithm 2, steps 1–10)
//! * S_2 keeps a pool of [`ServerConfig::pool_size`] instances. For each, it runs
//!   [`dpf::generate`], sends S_0 and S_1 their partial views over the servers' mesh (tag
//!   0x21, with a fresh random 128-bit instance id), and only then makes the instance
//!   available to clients, keeping both full views (spec §11 P12).
//! * S_b regenerates its full view and evaluates its key on the whole domain as soon as a
//!   partial view arrives, and stores the result under the instance id. It remembers the
//!   seeds of the partial views it received (the last [`SEEN_MEMORY`]): a partial view that
//!   repeats one is a replay by S_2 (an honest S_2 draws fresh 127-bit seeds) and is not used;
//!   a fetch of its instance is refused as [`Refusal::Replayed`].
//! * An instance is handed out at most once. At S_2 it leaves the pool when a client begins a
//!   query; at S_b the material moves out of the store into the connection that fetched it and
//!   is consumed by the answer (or dropped). A second request for the same id is refused
//!   ([`PirError::InstanceReused`]). Refills run in the background ([`Server::serve`]) or are
//!   driven by the caller ([`Server::deal_one`] / [`Server::receive_one`], as the benchmark
//!   does between queries).
//!
//! # Clients
//! Every client connection runs on its own thread once its TLS handshake has completed (the
//! handshakes run in a [`ServiceGate`] under [`ServerConfig::handshake`]: a whole-handshake
//! deadline, bounded pending handshakes in all and per address). At most
//! [`ServerConfig::max_clients`] connections are served, at most
//! [`ServerConfig::max_clients_per_address`] from one IP address; a new connection beyond
//! either limit takes the place of the connection (of that address) that has been idle the
//! longest, so idle connections cannot lock clients out. A connection is served until the
//! client closes it, it sends no complete request for [`ServerConfig::idle_timeout`] (which
//! also cuts off clients that trickle a request), it is displaced, or the server is shut
//! down hard. Requests are at most [`MAX_REQUEST_BYTES`]; bad ones are refused with a code,
//! never a panic. Every reply echoes the nonce of the request it answers.
//!
//! # Holding an instance for the shift
//! S_b keeps an instance fetched on a connection until the shift for it, for as long as the
//! fetch asked (the client's time left), capped by [`ServerConfig::max_hold`]. A holder that
//! dropped the instance earlier (as a fixed wait did before) would refuse the shift of a
//! client still within its deadline — and a malicious other holder could arrange exactly
//! that by answering late.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use doram_field::Fp64;
use doram_net::service::{
    Established, HandshakeLimits, SERVICE_CLIENT, ServiceGate, ServiceListener,
};
use doram_net::{Config, NetError, Session};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use tracing::{debug, warn};

use crate::PirError;
use crate::answer::answer;
use crate::behaviour::{Act, Behaviour, Stage};
use crate::db::{Database, DbInfo};
use crate::dpf::{self, Evaluation, FullView, Holder};
#[cfg(test)]
use crate::proto::Reply;
use crate::proto::{self, Refusal, Request, ServerId};

/// How often blocking waits re-check for shutdown.
const POLL: Duration = Duration::from_millis(25);
/// Consumed instance ids remembered per key holder (to report reuse precisely).
const CONSUMED_MEMORY: usize = 1 << 16;
/// Partial-view seeds remembered per key holder (to refuse replays by S_2).
pub const SEEN_MEMORY: usize = 1 << 20;
/// The largest request a client may send (a shift is 37 bytes).
pub const MAX_REQUEST_BYTES: u32 = 256;

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Which server this is.
    pub role: ServerId,
    /// Offline instances S_2 keeps ready (S_0/S_1 hold what S_2 sent them, up to
    /// `pool_size + max_clients + 4`, evicting the oldest beyond that). Each instance at a key
    /// holder takes 16·2^n bytes (256 MiB at n = 24): size the pool and `max_clients`
    /// accordingly.
    pub pool_size: usize,
    /// How long a request waits for offline material before it is refused.
    pub instance_wait: Duration,
    /// A client connection silent for this long is closed.
    pub idle_timeout: Duration,
    /// Concurrent client connections; a new one beyond this displaces the longest-idle one.
    pub max_clients: usize,
    /// Concurrent client connections from one IP address; a new one beyond this displaces
    /// the longest-idle one from that address.
    pub max_clients_per_address: usize,
    /// How long S_b holds a fetched instance for its shift at most (the fetch asks for the
    /// client's time left).
    pub max_hold: Duration,
    /// Limits on client handshakes ([`serve_tls`]).
    pub handshake: HandshakeLimits,
    /// Stop accepting clients (and producing offline material) after this many queries
    /// (S_2 counts begun queries, S_0/S_1 answered shifts; fallback requests count too).
    pub max_queries: Option<u64>,
}

impl ServerConfig {
    /// Defaults for `role`: pool of 4, 10 s instance wait, 60 s idle timeout, 64 clients,
    /// 16 per address, instances held for at most 300 s, [`HandshakeLimits::default`].
    pub fn new(role: ServerId) -> ServerConfig {
        ServerConfig {
            role,
            pool_size: 4,
            instance_wait: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_clients: 64,
            max_clients_per_address: 16,
            max_hold: Duration::from_secs(300),
            handshake: HandshakeLimits::default(),
            max_queries: None,
        }
    }
}

/// Stops a running [`Server::serve`].
#[derive(Clone, Debug, Default)]
pub struct ShutdownHandle {
    flags: Arc<Flags>,
}

#[derive(Debug, Default)]
struct Flags {
    /// Stop accepting clients and producing offline material.
    stop: AtomicBool,
    /// Also end client connections at their next idle moment.
    hard: AtomicBool,
}

impl ShutdownHandle {
    /// Stops accepting clients, stops the offline loop and closes client connections when
    /// they are next idle; [`Server::serve`] then returns.
    pub fn shutdown(&self) {
        self.flags.stop.store(true, Ordering::SeqCst);
        self.flags.hard.store(true, Ordering::SeqCst);
    }

    fn stopping(&self) -> bool {
        self.flags.stop.load(Ordering::SeqCst)
    }

    fn hard(&self) -> bool {
        self.flags.hard.load(Ordering::SeqCst)
    }
}

/// What [`Server::serve`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeReport {
    /// Queries served (see [`ServerConfig::max_queries`]).
    pub queries: u64,
    /// Fallback requests answered in the clear.
    pub clear_answers: u64,
    /// Client connections accepted.
    pub connections: u64,
    /// Offline instances produced (S_2) or received (S_0/S_1).
    pub instances: u64,
}

/// One offline instance at S_2: the views it reports to the client.
struct DealerInstance {
    id: u128,
    views: [FullView; 2],
}

#[derive(Default)]
struct HolderStore {
    available: BTreeMap<u128, Evaluation>,
    /// Arrival order of `available` (exactly its ids), for evicting the oldest.
    order: VecDeque<u128>,
    /// Instances handed out.
    consumed: Recent<CONSUMED_MEMORY>,
    /// Seeds of the partial views received (replay detection).
    seen: Recent<SEEN_MEMORY>,
    /// Instances whose partial view was a replay.
    replayed: Recent<CONSUMED_MEMORY>,
    link_down: bool,
}

/// The last `CAP` distinct values remembered, for membership tests; the oldest is forgotten
/// first.
#[derive(Default)]
struct Recent<const CAP: usize> {
    set: HashSet<u128>,
    order: VecDeque<u128>,
}

impl<const CAP: usize> Recent<CAP> {
    fn contains(&self, x: &u128) -> bool {
        self.set.contains(x)
    }

    /// Remembers `x`; `false` if it was remembered already.
    fn insert(&mut self, x: u128) -> bool {
        if !self.set.insert(x) {
            return false;
        }
        self.order.push_back(x);
        if self.order.len() > CAP
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        true
    }
}

/// A served connection, as the acceptor sees it.
struct Slot {
    ip: Option<IpAddr>,
    state: Arc<SlotState>,
}

#[derive(Default)]
struct SlotState {
    /// When the connection last completed a request (or started).
    last: Mutex<Option<Instant>>,
    /// Set by the acceptor to make the handler close the connection before its next request.
    kick: AtomicBool,
    /// The handler has ended.
    done: AtomicBool,
}

impl SlotState {
    fn idle_since(&self) -> Instant {
        lock(&self.last).unwrap_or_else(Instant::now)
    }

    fn touch(&self) {
        *lock(&self.last) = Some(Instant::now());
    }
}

/// What one client connection carries from one request to the next.
#[derive(Default)]
struct Connection {
    /// S_b: the instance fetched on this connection (material, held until), consumed by the
    /// next shift.
    fetched: Option<(Evaluation, Instant)>,
    /// This connection's previous replies per stage, views then answer (for the stale-reply
    /// behaviours).
    previous: [Option<Vec<u8>>; 2],
}

/// What one poll of a client connection brought.
enum Inbound {
    /// A request frame, not yet decoded.
    Request(Vec<u8>),
    /// Nothing yet; keep waiting.
    Idle,
    /// Close the connection.
    End,
}

enum Pool {
    Dealer(Mutex<VecDeque<DealerInstance>>),
    Holder(Box<Mutex<HolderStore>>),
}

struct Shared {
    config: ServerConfig,
    db: Arc<Database>,
    behaviour: Behaviour,
    pool: Pool,
    ready: Condvar,
    shutdown: ShutdownHandle,
    rng: Mutex<ChaCha20Rng>,
    /// S_2 with [`Behaviour::ReplayPartialView`]: the first partial views it sent.
    first_partials: Mutex<Option<[dpf::PartialView; 2]>>,
    queries: AtomicU64,
    clears: AtomicU64,
    connections: AtomicU64,
    instances: AtomicU64,
    active: AtomicUsize,
}

/// A server: its database, behaviour and offline pool. Cloning shares the same server.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("role", &self.shared.config.role)
            .field("pool", &self.pool_len())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The protected data stays consistent even if a holder panicked.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A client connection to serve.
#[derive(Debug)]
pub enum Incoming {
    /// An established session (in-process).
    Session(Session),
    /// A TLS connection whose handshake has completed, with the client's address.
    Established(Established),
}

/// A source of client connections.
pub trait Acceptor {
    /// Waits up to `wait` for the next connection; `Ok(None)` if none arrived. An error ends
    /// [`Server::serve`].
    fn accept(&mut self, wait: Duration) -> Result<Option<Incoming>, PirError>;
}

impl Acceptor for ServiceGate {
    fn accept(&mut self, wait: Duration) -> Result<Option<Incoming>, PirError> {
        Ok(ServiceGate::accept(self, wait)?.map(Incoming::Established))
    }
}

impl Acceptor for Receiver<Session> {
    fn accept(&mut self, wait: Duration) -> Result<Option<Incoming>, PirError> {
        match self.recv_timeout(wait) {
            Ok(s) => Ok(Some(Incoming::Session(s))),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                thread::sleep(wait);
                Ok(None)
            }
        }
    }
}

impl Server {
    /// A server with an empty pool. `db` is the database it announces (and, unless
    /// `behaviour` says otherwise, computes on).
    pub fn new(config: ServerConfig, db: Arc<Database>, behaviour: Behaviour) -> Server {
        let pool = match config.role {
            ServerId::S2 => Pool::Dealer(Mutex::new(VecDeque::new())),
            _ => Pool::Holder(Box::new(Mutex::new(HolderStore::default()))),
        };
        let rng = ChaCha20Rng::from_rng(&mut rand::rng());
        Server {
            shared: Arc::new(Shared {
                config,
                db,
                behaviour,
                pool,
                ready: Condvar::new(),
                shutdown: ShutdownHandle::default(),
                rng: Mutex::new(rng),
                first_partials: Mutex::new(None),
                queries: AtomicU64::new(0),
                clears: AtomicU64::new(0),
                connections: AtomicU64::new(0),
                instances: AtomicU64::new(0),
                active: AtomicUsize::new(0),
            }),
        }
    }

    /// This server's role.
    pub fn role(&self) -> ServerId {
        self.shared.config.role
    }

    /// The handle that stops [`serve`](Server::serve).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shared.shutdown.clone()
    }

    /// Offline instances ready (S_2) or stored (S_0/S_1).
    pub fn pool_len(&self) -> usize {
        match &self.shared.pool {
            Pool::Dealer(q) => lock(q).len(),
            Pool::Holder(h) => lock(h).available.len(),
        }
    }

    fn domain_bits(&self) -> u8 {
        self.shared.db.info().domain_bits
    }

    /// S_2, one offline instance (PIR-GOD Algorithm 2, steps 1–4): generates it, sends the
    /// partial views to S_0 and S_1 on `mesh`, then adds it to the pool. A failed send is
    /// logged and the instance is still pooled (the holder then cannot serve it).
    pub fn deal_one(&self, mesh: &mut Session) -> Result<u128, PirError> {
        let sh = &self.shared;
        let Pool::Dealer(queue) = &sh.pool else {
            return Err(PirError::Invalid("only S2 deals offline material".into()));
        };
        let n = self.domain_bits();
        // Steps 1–3.
        let (generated, id) = {
            let mut rng = lock(&sh.rng);
            let g = match sh.behaviour {
                Behaviour::WrongPayload => {
                    dpf::generate_with_payload(n, Some(Fp64::from_u64(2)), &mut *rng)
                }
                _ => dpf::generate(n, &mut *rng),
            };
            // A fresh random 128-bit instance id.
            let mut id = [0u8; 16];
            rng.fill_bytes(&mut id);
            (g, u128::from_le_bytes(id))
        };
        let mut views = generated.views;
        if matches!(sh.behaviour, Behaviour::TamperGOutput) {
            // A consistent liar: flips τ^{1,0} and reports the views the holders will
            // regenerate from the tampered partial views, so that the views agree.
            views = Holder::BOTH.map(|h| {
                let mut p = views[h.index()].partial();
                p.outputs.cws[0].tau[0] ^= true;
                dpf::regenerate(h, p).view
            });
        }
        if matches!(sh.behaviour, Behaviour::ReplayPartialView) {
            // A replaying dealer: every instance after the first re-sends the first one's
            // partial views under a fresh id, and reports the matching views.
            let mut first = lock(&sh.first_partials);
            match &*first {
                Some(p) => {
                    views = Holder::BOTH.map(|h| dpf::regenerate(h, p[h.index()].clone()).view);
                }
                None => *first = Some(Holder::BOTH.map(|h| views[h.index()].partial())),
            }
        }
        // Step 4: partial views to S_0 and S_1.
        for h in Holder::BOTH {
            let mut partial = views[h.index()].partial();
            if h == Holder::Zero && matches!(sh.behaviour, Behaviour::TamperPartialView) {
                partial.outputs.cws[0].sigma ^= 1 << 64;
            }
            let msg = proto::encode_offline(id, &partial);
            let to = ServerId::of_holder(h).party();
            let act = if h == Holder::Zero {
                sh.behaviour.at(Stage::Offline)
            } else {
                Act::Send
            };
            let sent = match act {
                Act::Send | Act::Stale { .. } => mesh.send_bytes(to, &msg),
                Act::Garbage => mesh.send_bytes(to, &garbage(msg.len())),
                Act::Drop | Act::Close => Ok(()),
            };
            if let Err(e) = sent {
                warn!(%id, holder = ?h, "partial view not delivered: {e}");
            }
        }
        lock(queue).push_back(DealerInstance { id, views });
        sh.instances.fetch_add(1, Ordering::SeqCst);
        sh.ready.notify_all();
        Ok(id)
    }

    /// S_0/S_1, one offline message (PIR-GOD Algorithm 2, steps 5–10): receives a partial
    /// view from S_2 on `mesh` (waiting up to the session's timeout), regenerates the full
    /// view, evaluates the key on the whole domain and stores the result. A partial view
    /// whose seed this holder has seen before is a replay: it is refused
    /// ([`PirError::ReplayedOffline`]) and its instance marked as such.
    pub fn receive_one(&self, mesh: &mut Session) -> Result<u128, PirError> {
        let sh = &self.shared;
        let Some(holder) = sh.config.role.holder() else {
            return Err(PirError::Invalid(
                "only S0 and S1 receive offline material".into(),
            ));
        };
        let Pool::Holder(store) = &sh.pool else {
            return Err(PirError::Invalid("not a key holder".into()));
        };
        let bytes = mesh.recv_bytes(ServerId::S2.party())?;
        let (id, partial) = proto::decode_offline(&bytes, usize::from(self.domain_bits()))?;
        {
            let mut st = lock(store);
            if st.consumed.contains(&id)
                || st.available.contains_key(&id)
                || st.replayed.contains(&id)
            {
                return Err(PirError::InstanceReused { id });
            }
            if !st.seen.insert(partial.inputs.seed) {
                st.replayed.insert(id);
                drop(st);
                sh.ready.notify_all();
                return Err(PirError::ReplayedOffline { id });
            }
        }
        let evaluation = dpf::regenerate(holder, partial);
        let mut st = lock(store);
        st.available.insert(id, evaluation);
        st.order.push_back(id);
        let cap = sh.config.pool_size + sh.config.max_clients + 4;
        while st.available.len() > cap {
            let Some(old) = st.order.pop_front() else {
                break;
            };
            st.available.remove(&old);
            debug!(%old, "evicting unused offline instance");
        }
        drop(st);
        sh.instances.fetch_add(1, Ordering::SeqCst);
        sh.ready.notify_all();
        Ok(id)
    }

    /// Runs the offline loop on its own thread until shutdown: S_2 keeps the pool full, S_b
    /// receives and evaluates partial views as they come.
    pub fn spawn_offline(&self, mut mesh: Session) -> Result<JoinHandle<()>, PirError> {
        // Partial views are the only messages on the mesh.
        let largest = proto::offline_bytes(usize::from(self.domain_bits()));
        mesh.limit_frame_bytes(u32::try_from(largest).unwrap_or(u32::MAX));
        let server = self.clone();
        thread::Builder::new()
            .name(format!("pir {} offline", self.role()))
            .spawn(move || server.offline_loop(&mut mesh))
            .map_err(|e| PirError::Invalid(format!("cannot spawn the offline thread: {e}")))
    }

    fn offline_loop(&self, mesh: &mut Session) {
        let sh = &self.shared;
        match &sh.pool {
            Pool::Dealer(q) => {
                while !sh.shutdown.stopping() {
                    let need = lock(q).len() < sh.config.pool_size.max(1);
                    if need {
                        if let Err(e) = self.deal_one(mesh) {
                            warn!("offline generation failed: {e}");
                            thread::sleep(POLL);
                        }
                    } else {
                        let g = lock(q);
                        let _ = sh.ready.wait_timeout(g, POLL);
                    }
                }
            }
            Pool::Holder(store) => {
                mesh.set_timeout(POLL);
                while !sh.shutdown.stopping() {
                    match self.receive_one(mesh) {
                        Ok(_) => {}
                        Err(PirError::Net(NetError::Timeout { .. })) => {}
                        Err(PirError::Net(e)) => {
                            warn!("offline link to S2 failed: {e}");
                            lock(store).link_down = true;
                            sh.ready.notify_all();
                            return;
                        }
                        Err(e) => warn!("offline message rejected: {e}"),
                    }
                }
            }
        }
    }

    /// S_2: takes the next instance for a client, waiting up to the instance wait.
    fn take_dealer(&self) -> Option<DealerInstance> {
        let sh = &self.shared;
        let Pool::Dealer(q) = &sh.pool else {
            return None;
        };
        let deadline = Instant::now() + sh.config.instance_wait;
        let mut g = lock(q);
        loop {
            if let Some(inst) = g.pop_front() {
                sh.ready.notify_all();
                return Some(inst);
            }
            let now = Instant::now();
            if now >= deadline || sh.shutdown.hard() {
                return None;
            }
            g = sh
                .ready
                .wait_timeout(g, (deadline - now).min(POLL))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// S_b: takes instance `id` out of the store (never twice), waiting for it up to `wait`.
    fn take_holder(&self, id: u128, wait: Duration) -> Result<Evaluation, PirError> {
        let sh = &self.shared;
        let Pool::Holder(store) = &sh.pool else {
            return Err(PirError::Invalid("not a key holder".into()));
        };
        let deadline = Instant::now() + wait;
        let mut st = lock(store);
        loop {
            if let Some(e) = st.available.remove(&id) {
                st.order.retain(|&x| x != id);
                st.consumed.insert(id);
                return Ok(e);
            }
            if st.consumed.contains(&id) {
                return Err(PirError::InstanceReused { id });
            }
            if st.replayed.contains(&id) {
                return Err(PirError::ReplayedOffline { id });
            }
            let now = Instant::now();
            if st.link_down || now >= deadline || sh.shutdown.hard() {
                return Err(PirError::InstanceUnavailable { id });
            }
            st = sh
                .ready
                .wait_timeout(st, (deadline - now).min(POLL))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    fn count_query(&self) {
        let sh = &self.shared;
        let q = sh.queries.fetch_add(1, Ordering::SeqCst) + 1;
        if sh.config.max_queries.is_some_and(|m| q >= m) {
            sh.shutdown.flags.stop.store(true, Ordering::SeqCst);
        }
    }

    /// Sends `msg` at `stage` as the behaviour dictates; `false` means: close the connection.
    /// `previous` is this connection's last reply at the stage (for the stale-reply
    /// behaviours).
    fn reply(&self, s: &mut Session, stage: Stage, msg: &[u8], previous: Option<&[u8]>) -> bool {
        match self.shared.behaviour.at(stage) {
            Act::Send => s.send_bytes(SERVICE_CLIENT, msg).is_ok(),
            Act::Drop => true,
            Act::Garbage => s.send_bytes(SERVICE_CLIENT, &garbage(msg.len())).is_ok(),
            Act::Close => false,
            Act::Stale { then_real } => {
                let stale = previous.map_or(Ok(()), |p| s.send_bytes(SERVICE_CLIENT, p));
                stale.is_ok() && (!then_real || s.send_bytes(SERVICE_CLIENT, msg).is_ok())
            }
        }
    }

    fn refuse(s: &mut Session, nonce: proto::Nonce, why: Refusal) -> bool {
        s.send_bytes(SERVICE_CLIENT, &proto::encode_refused(nonce, why))
            .is_ok()
    }

    /// Serves one client connection until it closes, idles out, or a hard shutdown.
    pub fn handle_client(&self, s: Session) {
        self.handle_client_in(s, &SlotState::default());
    }

    fn handle_client_in(&self, mut s: Session, slot: &SlotState) {
        s.set_timeout(POLL);
        slot.touch();
        let mut conn = Connection::default();
        loop {
            // Displaced by a newer connection: this ends it even if it keeps sending, so that
            // busy connections cannot outnumber the client limits.
            if slot.kick.load(Ordering::SeqCst) {
                return;
            }
            let bytes = match self.recv_request(&mut s, slot, &mut conn) {
                Inbound::Request(b) => b,
                Inbound::Idle => continue,
                Inbound::End => return,
            };
            slot.touch();
            let keep = match proto::decode_request(&bytes) {
                Ok(req) => self.serve_request(&mut s, req, &mut conn),
                Err(_) => Self::refuse(&mut s, 0, Refusal::BadRequest),
            };
            if !keep {
                return;
            }
        }
    }

    /// Waits one poll interval for the connection's next request frame. On a quiet poll,
    /// drops a fetched instance whose hold has run out and says whether to go on waiting.
    fn recv_request(&self, s: &mut Session, slot: &SlotState, conn: &mut Connection) -> Inbound {
        let sh = &self.shared;
        match s.recv_bytes(SERVICE_CLIENT) {
            Ok(b) => Inbound::Request(b),
            Err(NetError::Timeout { .. }) => {
                if sh.shutdown.hard() || slot.idle_since().elapsed() >= sh.config.idle_timeout {
                    return Inbound::End;
                }
                // A fetched instance whose shift does not come in the time the client asked
                // for is dropped (unused, never reused), so idle connections do not pin 16N
                // bytes each.
                if conn.fetched.as_ref().is_some_and(|f| Instant::now() >= f.1) {
                    conn.fetched = None;
                }
                Inbound::Idle
            }
            Err(NetError::FrameTooLarge { .. } | NetError::Peer(_)) => {
                // The request cannot be read (past the size cap, or cut): say so, then end the
                // connection, whose stream can no longer be trusted to be in step.
                let _ = Self::refuse(s, 0, Refusal::BadRequest);
                Inbound::End
            }
            Err(_) => Inbound::End,
        }
    }

    /// Answers one decoded request as this server's role allows; `false` means: close the
    /// connection.
    fn serve_request(&self, s: &mut Session, req: Request, conn: &mut Connection) -> bool {
        let role = self.shared.config.role;
        let nonce = req.nonce();
        match (req, role) {
            (Request::Hello(_), _) => {
                let info = proto::encode_info(role, &self.shared.db.info());
                self.reply(s, Stage::Info, &info, None)
            }
            (Request::Begin { .. }, ServerId::S2) => self.serve_begin(s, nonce, conn),
            (Request::Fetch { id, hold_ms, .. }, ServerId::S0 | ServerId::S1) => {
                self.serve_fetch(s, nonce, id, hold_ms, conn)
            }
            (Request::Shift { delta, .. }, ServerId::S0 | ServerId::S1) => {
                self.serve_shift(s, nonce, delta, conn)
            }
            (Request::Clear { index, .. }, _) => self.serve_clear(s, nonce, index),
            _ => Self::refuse(s, nonce, Refusal::WrongRole),
        }
    }

    /// [`reply`](Self::reply), then remembers `msg` as the connection's last reply at `stage`.
    fn reply_and_keep(
        &self,
        s: &mut Session,
        stage: Stage,
        msg: Vec<u8>,
        previous: &mut Option<Vec<u8>>,
    ) -> bool {
        let ok = self.reply(s, stage, &msg, previous.as_deref());
        *previous = Some(msg);
        ok
    }

    /// PIR-GOD Algorithm 2, step 11 at S_2: both views, one copy of the G outputs.
    fn serve_begin(&self, s: &mut Session, nonce: proto::Nonce, conn: &mut Connection) -> bool {
        let Some(mut inst) = self.take_dealer() else {
            return Self::refuse(s, nonce, Refusal::Unavailable);
        };
        self.count_query();
        if matches!(self.shared.behaviour, Behaviour::TamperView) {
            inst.views[0].inputs.seed ^= 1 << 100;
        }
        let msg = proto::encode_pair(nonce, inst.id, [&inst.views[0], &inst.views[1]]);
        self.reply_and_keep(s, Stage::Views, msg, &mut conn.previous[0])
    }

    /// PIR-GOD Algorithm 2, step 11 at S_b: its regenerated full view, held for the shift
    /// until the time the client asked for (capped by the configuration).
    fn serve_fetch(
        &self,
        s: &mut Session,
        nonce: proto::Nonce,
        id: u128,
        hold_ms: u32,
        conn: &mut Connection,
    ) -> bool {
        let sh = &self.shared;
        conn.fetched = None;
        let hold = Duration::from_millis(u64::from(hold_ms)).min(sh.config.max_hold);
        let held_until = Instant::now() + hold;
        match self.take_holder(id, sh.config.instance_wait.min(hold)) {
            Ok(mut e) => {
                let mut view = e.view.clone();
                if matches!(sh.behaviour, Behaviour::TamperView) {
                    view.g_inputs.levels[0][1] ^= 1 << 9;
                }
                let msg = proto::encode_view(nonce, &view);
                e.view = view;
                conn.fetched = Some((e, held_until));
                self.reply_and_keep(s, Stage::Views, msg, &mut conn.previous[0])
            }
            Err(PirError::InstanceReused { .. }) => Self::refuse(s, nonce, Refusal::Reused),
            Err(PirError::ReplayedOffline { .. }) => Self::refuse(s, nonce, Refusal::Replayed),
            Err(_) => Self::refuse(s, nonce, Refusal::Unavailable),
        }
    }

    /// PIR-GOD Algorithm 2, step 15 at S_b: the inner products of the fetched instance with
    /// the database rotated by `delta`.
    fn serve_shift(
        &self,
        s: &mut Session,
        nonce: proto::Nonce,
        delta: u32,
        conn: &mut Connection,
    ) -> bool {
        let Some((e, _)) = conn.fetched.take() else {
            return Self::refuse(s, nonce, Refusal::NotFetched);
        };
        self.count_query();
        let msg = proto::encode_answer(nonce, &self.answer(&e, delta));
        self.reply_and_keep(s, Stage::Answer, msg, &mut conn.previous[1])
    }

    /// PIR-GOD Algorithm 2, step 18: D[i] in the clear, with its Merkle path, for a client
    /// that identified this server as honest (or, on its explicit choice, as the one that was
    /// not silent).
    fn serve_clear(&self, s: &mut Session, nonce: proto::Nonce, index: u64) -> bool {
        let sh = &self.shared;
        self.count_query();
        sh.clears.fetch_add(1, Ordering::SeqCst);
        let Some((mut rec, path)) = self.compute_db().record_with_path(index) else {
            return Self::refuse(s, nonce, Refusal::OutOfRange);
        };
        if matches!(sh.behaviour, Behaviour::LyingClear)
            && let Some(b) = rec.first_mut()
        {
            *b ^= 1;
        }
        s.send_bytes(
            SERVICE_CLIENT,
            &proto::encode_record(nonce, index, &rec, &path),
        )
        .is_ok()
    }

    /// The database the answers are computed on (differs only for a lying server).
    fn compute_db(&self) -> &Database {
        let sh = &self.shared;
        match &sh.behaviour {
            Behaviour::LyingDatabase(d) if d.info().domain_bits == sh.db.info().domain_bits => d,
            _ => &sh.db,
        }
    }

    /// S_b's shares for shift Δ, with the behaviour's deviations.
    fn answer(&self, e: &Evaluation, delta: u32) -> Vec<Fp64> {
        let db = self.compute_db();
        let delta = match self.shared.behaviour {
            Behaviour::WrongShift => u64::from(delta) + 1,
            _ => u64::from(delta),
        };
        let mut v = answer(db, &e.shares, delta);
        let k = v.len();
        match self.shared.behaviour {
            Behaviour::WrongZ => v[0] += Fp64::ONE,
            Behaviour::WrongY => v[1] += Fp64::ONE,
            Behaviour::WrongLastChunk if k >= 2 => {
                v[k - 2] += Fp64::ONE;
                v[k - 1] += Fp64::ONE;
            }
            _ => {}
        }
        v
    }

    /// Serves clients from `acceptor` until shutdown (or the query limit), running the
    /// offline loop on `mesh` in the background if given (without a mesh the caller feeds the
    /// pool with [`deal_one`](Server::deal_one) / [`receive_one`](Server::receive_one)).
    /// Returns once every connection has ended.
    pub fn serve<A: Acceptor>(
        &self,
        mesh: Option<Session>,
        mut acceptor: A,
    ) -> Result<ServeReport, PirError> {
        let sh = &self.shared;
        let offline = mesh.map(|m| self.spawn_offline(m)).transpose()?;
        let mut handlers: Vec<JoinHandle<()>> = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        let mut result = Ok(());
        while !sh.shutdown.stopping() {
            let incoming = match acceptor.accept(POLL) {
                Ok(Some(i)) => i,
                Ok(None) => continue,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            handlers.retain(|h| !h.is_finished());
            slots.retain(|s| !s.state.done.load(Ordering::SeqCst));
            let (session, ip) = match incoming {
                Incoming::Session(s) => (s, None),
                Incoming::Established(e) => (e.session, Some(e.peer.ip())),
            };
            self.make_room(&slots, ip);
            sh.connections.fetch_add(1, Ordering::SeqCst);
            sh.active.fetch_add(1, Ordering::SeqCst);
            let state = Arc::new(SlotState::default());
            state.touch();
            slots.push(Slot {
                ip,
                state: Arc::clone(&state),
            });
            let server = self.clone();
            let spawned = thread::Builder::new()
                .name(format!("pir {} client", self.role()))
                .spawn(move || {
                    server.handle_client_in(session, &state);
                    state.done.store(true, Ordering::SeqCst);
                    server.shared.active.fetch_sub(1, Ordering::SeqCst);
                });
            match spawned {
                Ok(h) => handlers.push(h),
                Err(e) => {
                    sh.active.fetch_sub(1, Ordering::SeqCst);
                    if let Some(s) = slots.pop() {
                        s.state.done.store(true, Ordering::SeqCst);
                    }
                    warn!("cannot spawn a client thread: {e}");
                }
            }
        }
        sh.shutdown.flags.stop.store(true, Ordering::SeqCst);
        sh.ready.notify_all();
        if let Some(h) = offline {
            let _ = h.join();
        }
        for h in handlers {
            let _ = h.join();
        }
        result?;
        Ok(ServeReport {
            queries: sh.queries.load(Ordering::SeqCst),
            clear_answers: sh.clears.load(Ordering::SeqCst),
            connections: sh.connections.load(Ordering::SeqCst),
            instances: sh.instances.load(Ordering::SeqCst),
        })
    }

    /// Before a new connection from `ip` is served: if its address or the server is at its
    /// limit, asks the longest-idle connection (of that address, or of all) to close. Idle
    /// connections thus cannot keep a client out.
    fn make_room(&self, slots: &[Slot], ip: Option<IpAddr>) {
        let cfg = &self.shared.config;
        let live: Vec<&Slot> = slots
            .iter()
            .filter(|s| !s.state.kick.load(Ordering::SeqCst))
            .collect();
        let oldest = |same_ip: bool| {
            live.iter()
                .filter(|s| !same_ip || s.ip == ip)
                .min_by_key(|s| s.state.idle_since())
                .map(|s| &s.state)
        };
        if let Some(a) = ip
            && live.iter().filter(|s| s.ip == ip).count() >= cfg.max_clients_per_address.max(1)
        {
            if let Some(st) = oldest(true) {
                debug!(%a, "per-address limit: displacing the longest-idle connection");
                st.kick.store(true, Ordering::SeqCst);
            }
            return;
        }
        if live.len() >= cfg.max_clients.max(1)
            && let Some(st) = oldest(false)
        {
            debug!("client limit: displacing the longest-idle connection");
            st.kick.store(true, Ordering::SeqCst);
        }
    }
}

fn garbage(len: usize) -> Vec<u8> {
    let mut g = vec![0u8; len.max(1)];
    rand::rng().fill_bytes(&mut g);
    g
}

/// Runs a server over the network, blocking until it stops: connects to the other two
/// servers over mutually authenticated TLS (the party mesh of `net`, where party i is S_i),
/// listens for clients on `client_address` with server-authenticated TLS, and serves them.
/// Stop it with the handle from `server` ([`Server::shutdown_handle`]) or a query limit.
pub fn serve_tls(
    server: &Server,
    net: &Config,
    client_address: &str,
) -> Result<ServeReport, PirError> {
    let listener = std::net::TcpListener::bind(client_address).map_err(|e| {
        PirError::Net(NetError::Listen {
            address: client_address.to_string(),
            source: Arc::new(e),
        })
    })?;
    serve_tls_on(server, net, listener)
}

/// Warns when a stalled holder link could outlast the instance wait (see the crate's
/// limitations).
fn check_timeouts(server: &Server, net: &Config) {
    if server.shared.config.instance_wait <= net.timeout {
        warn!(
            instance_wait = ?server.shared.config.instance_wait,
            mesh_timeout = ?net.timeout,
            "the instance wait should exceed the mesh timeout (plus one key generation)"
        );
    }
}

/// [`serve_tls`] with an already bound client listener (e.g. on port 0 in tests).
pub fn serve_tls_on(
    server: &Server,
    net: &Config,
    client_listener: std::net::TcpListener,
) -> Result<ServeReport, PirError> {
    check_timeouts(server, net);
    let me = server.role().party();
    let listener = ServiceListener::from_listener(client_listener, net, me)?;
    let mut limits = server.shared.config.handshake;
    limits.max_frame_bytes = Some(
        limits
            .max_frame_bytes
            .map_or(MAX_REQUEST_BYTES, |m| m.min(MAX_REQUEST_BYTES)),
    );
    let gate = ServiceGate::new(listener, limits);
    let mesh = Session::connect(net, me)?;
    server.serve(Some(mesh), gate)
}

impl Server {
    /// The database description this server announces.
    pub fn info(&self) -> DbInfo {
        self.shared.db.info()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use doram_net::LocalMesh;
    use doram_net::service::SERVICE_SIDE;

    fn refused(nonce: proto::Nonce, why: Refusal) -> Vec<u8> {
        proto::encode_refused(nonce, why)
    }

    /// Offline material is handed out once: a second fetch of the same instance is refused
    /// as reused, a shift without a fetch is refused, S_2 never hands out an id twice, and
    /// every reply echoes the request's nonce.
    #[test]
    fn instances_are_single_use() {
        let db = Arc::new(Database::from_u64s(&(0..64).collect::<Vec<u64>>()).unwrap());
        let mut mesh = LocalMesh::new(3).build();
        let servers: Vec<Server> = ServerId::ALL
            .iter()
            .map(|&id| Server::new(ServerConfig::new(id), db.clone(), Behaviour::Honest))
            .collect();
        let id = servers[2].deal_one(&mut mesh[2]).unwrap();
        let id2 = servers[2].deal_one(&mut mesh[2]).unwrap();
        assert_ne!(id, id2);
        assert_eq!(servers[0].receive_one(&mut mesh[0]).unwrap(), id);
        assert_eq!(servers[0].receive_one(&mut mesh[0]).unwrap(), id2);
        assert!(servers[2].take_dealer().is_some());
        assert!(servers[2].take_dealer().is_some());

        let mut pair = LocalMesh::new(2).build();
        let server_side = pair.pop().unwrap();
        let mut client = pair.pop().unwrap();
        let s0 = servers[0].clone();
        let t = thread::spawn(move || s0.handle_client(server_side));
        let mut ask = |r: Request| {
            client
                .send_bytes(SERVICE_SIDE, &proto::encode_request(r))
                .unwrap();
            client.recv_bytes(SERVICE_SIDE).unwrap()
        };
        let shift = |nonce| Request::Shift { nonce, delta: 3 };
        let fetch = |nonce| Request::Fetch {
            nonce,
            id,
            hold_ms: 10_000,
        };
        assert_eq!(ask(shift(1)), refused(1, Refusal::NotFetched));
        let view = ask(fetch(2));
        assert_eq!(view[0], proto::VIEW);
        assert_eq!(proto::reply_nonce(&view), Some(2));
        let answer = ask(shift(3));
        assert_eq!(answer[0], proto::ANSWER);
        assert_eq!(proto::reply_nonce(&answer), Some(3));
        assert_eq!(ask(fetch(4)), refused(4, Refusal::Reused));
        assert_eq!(ask(shift(5)), refused(5, Refusal::NotFetched));
        assert_eq!(
            ask(Request::Begin { nonce: 6 }),
            refused(6, Refusal::WrongRole)
        );
        assert_eq!(
            ask(Request::Clear {
                nonce: 7,
                index: 64
            }),
            refused(7, Refusal::OutOfRange)
        );
        let rec = ask(Request::Clear { nonce: 8, index: 5 });
        let Ok(Reply::Ok(rec)) = proto::decode_record(&rec, 8, 6) else {
            panic!("no record");
        };
        assert_eq!(rec.record, 5u64.to_le_bytes());
        assert!(crate::merkle::verify(
            &db.info().root,
            6,
            5,
            &rec.record,
            &rec.path
        ));
        client.send_bytes(SERVICE_SIDE, &[0xee, 1, 2]).unwrap();
        assert_eq!(
            client.recv_bytes(SERVICE_SIDE).unwrap(),
            refused(0, Refusal::BadRequest)
        );
        drop(client);
        t.join().unwrap();
        assert!(matches!(
            servers[0].take_holder(id, Duration::ZERO),
            Err(PirError::InstanceReused { .. })
        ));
    }

    #[test]
    fn recent_forgets_the_oldest_first() {
        let mut r = Recent::<2>::default();
        assert!(r.insert(1) && r.insert(2));
        assert!(!r.insert(1));
        assert!(r.insert(3));
        assert!(!r.contains(&1) && r.contains(&2) && r.contains(&3));
    }

    /// The holder's store keeps only what it holds: consumed instances leave its eviction
    /// order too, however many queries it serves.
    #[test]
    fn the_holder_store_does_not_grow_with_queries() {
        let db = Arc::new(Database::from_u64s(&(0..16).collect::<Vec<u64>>()).unwrap());
        let mut mesh = LocalMesh::new(3).build();
        let dealer = Server::new(
            ServerConfig::new(ServerId::S2),
            db.clone(),
            Behaviour::Honest,
        );
        let holder = Server::new(ServerConfig::new(ServerId::S0), db, Behaviour::Honest);
        let Pool::Holder(store) = &holder.shared.pool else {
            panic!("not a holder");
        };
        for _ in 0..50 {
            dealer.deal_one(&mut mesh[2]).unwrap();
            let id = holder.receive_one(&mut mesh[0]).unwrap();
            holder.take_holder(id, Duration::ZERO).unwrap();
            let st = lock(store);
            assert!(st.available.is_empty());
            assert!(st.order.is_empty(), "{} ids in the order", st.order.len());
        }
    }

    /// A dealer that re-sends an earlier partial view under a fresh id is caught by the key
    /// holders: the replay is not stored and a fetch of its id is refused as replayed.
    #[test]
    fn replayed_partial_views_are_refused() {
        let db = Arc::new(Database::from_u64s(&(0..16).collect::<Vec<u64>>()).unwrap());
        let mut mesh = LocalMesh::new(3).build();
        let dealer = Server::new(
            ServerConfig::new(ServerId::S2),
            db.clone(),
            Behaviour::ReplayPartialView,
        );
        let holder = Server::new(ServerConfig::new(ServerId::S1), db, Behaviour::Honest);
        let first = dealer.deal_one(&mut mesh[2]).unwrap();
        let second = dealer.deal_one(&mut mesh[2]).unwrap();
        assert_ne!(first, second);
        assert_eq!(holder.receive_one(&mut mesh[1]).unwrap(), first);
        assert!(matches!(
            holder.receive_one(&mut mesh[1]),
            Err(PirError::ReplayedOffline { id }) if id == second
        ));
        assert!(matches!(
            holder.take_holder(second, Duration::ZERO),
            Err(PirError::ReplayedOffline { .. })
        ));
        assert!(holder.take_holder(first, Duration::ZERO).is_ok());
    }
}
