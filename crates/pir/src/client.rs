//! The client (PIR-GOD Algorithm 2, steps 11–18, with the blame rules of spec §8), made safe
//! for a network that may delay, drop or cut any message.
//!
//! # Evidence, not lateness
//! A [`Deviation`] is *evidence*: a failed check (views, G-oracle, payload, MAC, a record's
//! Merkle path) or an authenticated message that contradicts the protocol (malformed, for
//! another instance, a refusal an honest server never sends to this client). Every deviation
//! names a server that is certainly honest if at most one server is corrupt
//! ([`Deviation::trusted`]); the client sends it i in the clear and outputs its record after
//! checking the record against the database's Merkle root (step 18 plus [`crate::merkle`]).
//!
//! Silence is not evidence: a server that does not answer within the deadline, a closed or
//! failed connection, a refusal an honest but slow server may send ("instance not ready") can
//! all be caused by the network, which may be the corrupt server's accomplice. The paper's
//! rule treats the silent server as the corrupt one, which holds only on a synchronous
//! network. So by default ([`Network::Asynchronous`]) the client **fails closed**:
//! [`PirError::Unreachable`] names the silent server and no server learns i. With
//! [`Network::AssumeSynchronous`] (an explicit choice) it applies the paper's rule and reveals
//! i to the server that rule names — honest only if the network really was synchronous; the
//! record is still checked against the Merkle root, and a record that fails the check proves
//! that server corrupt, so the client then asks one of the others.
//!
//! # Deadlines
//! [`ClientOptions::timeout`] bounds the whole protocol run of a query — connecting,
//! every message, every wait — not each read. A fallback after a failed check gets at most
//! the same again, so a query ends (with the record or an error) within twice the timeout.
//! Connections are made in parallel; a link that timed out or failed is dropped and made
//! afresh at the next query (when the client was built with a way to connect).
//!
//! # Freshness
//! Each request carries a fresh random nonce that the reply must echo; a reply with the nonce
//! of an earlier request on that link (a late answer the client gave up on) is skipped, one
//! with a nonce the client never sent is evidence. Instance ids are random 128-bit values
//! chosen by S_2; the holders' replies are bound to the instance through the nonce of the
//! fetch that named it.
//!
//! Messages of one query (n = domain bits, m' = chunks per record):
//! 1. C → S_2: begin; S_2 → C: instance id and both views (step 11);
//! 2. C → S_0, S_1: fetch(id, time left); S_b → C: its full view (step 11);
//! 3. checks (steps 12–13 and the payload check of spec §11 P1);
//! 4. C → S_0, S_1: shift(id, Δ = i − r mod 2^n) (step 14); S_b → C: 2m' shares (step 15);
//! 5. MAC check per chunk (steps 16–17), reconstruction of the record (spec §7).
//!
//! The id round (2) is not in the paper: S_2 picks the instance, so S_0 and S_1 learn which
//! one to use from the client (spec §2 leaves instance coordination open).

use std::sync::Arc;
use std::time::{Duration, Instant};

use doram_field::Fp64;
use doram_net::service::{SERVICE_SIDE, connect_service};
use doram_net::{Config, NetError, Session};
use rand::RngCore;

use crate::PirError;
use crate::db::{DbInfo, reconstruct_record};
use crate::dpf::{self, FullView};
use crate::merkle;
use crate::proto::{self, Nonce, PROTOCOL_VERSION, Refusal, Reply, Request, ServerId};

/// Whom the evidence of a deviation implicates. At most one server is corrupt, so the
/// corrupt one is among the suspects and every other server is honest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Suspects {
    /// Only this server can have deviated.
    Certain(ServerId),
    /// One of these two deviated; the evidence does not say which.
    OneOf(ServerId, ServerId),
    /// This server was silent. It is the corrupt one only if the network was synchronous
    /// (the client's explicit [`Network::AssumeSynchronous`]); it is not blamed.
    Presumed(ServerId),
}

impl Suspects {
    /// Whether `s` is a suspect.
    pub fn contains(&self, s: ServerId) -> bool {
        match *self {
            Suspects::Certain(a) | Suspects::Presumed(a) => a == s,
            Suspects::OneOf(a, b) => a == s || b == s,
        }
    }
}

/// A protocol stage, for silence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Connecting and the database description.
    Connect,
    /// The views (step 11).
    Views,
    /// The answers (step 15).
    Answer,
}

/// A deviation the client observed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deviation {
    /// A server's database description was malformed or differed from the one the other two
    /// agree on (found when connecting; every later query falls back).
    Description {
        /// The odd server.
        server: ServerId,
        /// What was wrong.
        detail: String,
    },
    /// S_2's reply to begin was malformed or a refusal an honest S_2 never sends.
    DealerViews {
        /// What was wrong.
        detail: String,
    },
    /// S_b's view was malformed or a refusal an honest S_b never sends (S_b or S_2, which
    /// might have sent it something wrong, deviated).
    HolderView {
        /// S_0 or S_1.
        holder: ServerId,
        /// What was wrong.
        detail: String,
    },
    /// S_b reports that S_2 sent it a partial view repeating an earlier one's randomness:
    /// S_2 replayed it, or S_b lies.
    Replay {
        /// S_0 or S_1.
        holder: ServerId,
    },
    /// view_b from S_2 differs from S_b's view (step 13, first rule).
    ViewMismatch {
        /// S_0 or S_1.
        holder: ServerId,
    },
    /// The G-oracle output of call `call` (1-based, n+1 for γ) does not match its inputs
    /// (step 13, second rule): only S_2 can cause this.
    GOracle {
        /// The failing call.
        call: usize,
    },
    /// The payload's first component is not 1 (spec §11 P1): only S_2 can cause this.
    Payload,
    /// S_b's answer was malformed or a refusal an honest S_b never sends: S_b deviated.
    Answer {
        /// S_0 or S_1.
        holder: ServerId,
        /// What was wrong.
        detail: String,
    },
    /// α·z ≠ y on chunk `chunk`, or the opened chunks are no valid record (step 17): S_0 or
    /// S_1 deviated.
    Mac {
        /// The first failing chunk.
        chunk: usize,
    },
    /// A server asked in the clear (step 18) returned a record that fails its Merkle check, or
    /// no record: it deviated.
    FalseRecord {
        /// The server.
        server: ServerId,
        /// What was wrong.
        detail: String,
    },
    /// Not evidence: `server` was silent at `stage` (no reply within the deadline, a lost
    /// connection, or "not ready"). Acted on only under [`Network::AssumeSynchronous`].
    Silent {
        /// The silent server.
        server: ServerId,
        /// Where.
        stage: Stage,
        /// What happened.
        detail: String,
    },
}

impl Deviation {
    /// The server that is certainly honest given this evidence (the S_T of step 13/17); for
    /// [`Deviation::Silent`], the server the paper's rule names.
    pub fn trusted(&self) -> ServerId {
        match self {
            Deviation::Description { server, .. } | Deviation::FalseRecord { server, .. } => {
                if *server == ServerId::S2 {
                    ServerId::S0
                } else {
                    ServerId::S2
                }
            }
            Deviation::DealerViews { .. } | Deviation::GOracle { .. } | Deviation::Payload => {
                ServerId::S0
            }
            Deviation::HolderView { holder, .. }
            | Deviation::ViewMismatch { holder }
            | Deviation::Replay { holder } => other_holder(*holder),
            Deviation::Answer { .. } | Deviation::Mac { .. } => ServerId::S2,
            Deviation::Silent { server, stage, .. } => match (server, stage) {
                (ServerId::S2, _) => ServerId::S0,
                (h, Stage::Views) => other_holder(*h),
                (_, Stage::Connect | Stage::Answer) => ServerId::S2,
            },
        }
    }

    /// Whom the evidence implicates.
    pub fn suspects(&self) -> Suspects {
        match self {
            Deviation::Description { server, .. } | Deviation::FalseRecord { server, .. } => {
                Suspects::Certain(*server)
            }
            Deviation::DealerViews { .. } | Deviation::GOracle { .. } | Deviation::Payload => {
                Suspects::Certain(ServerId::S2)
            }
            Deviation::HolderView { holder, .. }
            | Deviation::ViewMismatch { holder }
            | Deviation::Replay { holder } => Suspects::OneOf(*holder, ServerId::S2),
            Deviation::Answer { holder, .. } => Suspects::Certain(*holder),
            Deviation::Mac { .. } => Suspects::OneOf(ServerId::S0, ServerId::S1),
            Deviation::Silent { server, .. } => Suspects::Presumed(*server),
        }
    }

    /// Whether this is evidence (everything but [`Deviation::Silent`]).
    pub fn is_evidence(&self) -> bool {
        !matches!(self, Deviation::Silent { .. })
    }
}

fn other_holder(h: ServerId) -> ServerId {
    if h == ServerId::S0 {
        ServerId::S1
    } else {
        ServerId::S0
    }
}

/// A fallback (step 18) the client took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// What the client observed.
    pub deviation: Deviation,
    /// Whom it implicates.
    pub suspects: Suspects,
    /// The server that received i in the clear and supplied the (verified) record.
    pub trusted: ServerId,
}

/// Client-side timings of one query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// End to end, including the network and any fallback.
    pub total: Duration,
    /// The client's own computation: view comparison, G check, reconstruction, MAC check
    /// (spec §11 P15: excludes waiting for the network).
    pub client_compute: Duration,
}

/// Payload bytes exchanged with one server during a query (frame headers excluded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkBytes {
    /// Client → server.
    pub sent: u64,
    /// Server → client.
    pub received: u64,
}

/// The result of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryOutcome {
    /// The record `D[i]`.
    pub value: Vec<u8>,
    /// `None` if the protocol completed; otherwise the deviation and the fallback taken.
    pub fallback: Option<Fallback>,
    /// Timings.
    pub timings: Timings,
    /// Bytes per server (index = server index), over the links that lasted the query.
    pub bytes: [LinkBytes; 3],
}

impl QueryOutcome {
    /// The server that certainly deviated, if the evidence pins it down (never a server
    /// that was only silent).
    pub fn blamed(&self) -> Option<ServerId> {
        match self.fallback.as_ref()?.suspects {
            Suspects::Certain(s) => Some(s),
            Suspects::OneOf(..) | Suspects::Presumed(_) => None,
        }
    }

    /// Total payload bytes of the query.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().map(|b| b.sent + b.received).sum()
    }
}

/// What silence means to the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Network {
    /// Silence is no evidence: a query that needs a silent server fails closed with
    /// [`PirError::Unreachable`]; i goes only to a server the evidence proves honest.
    #[default]
    Asynchronous,
    /// The paper's rule: a silent server is the corrupt one, and the fallback goes to the
    /// server that rule names. That server learns i, and it is honest only if the network
    /// really delivered every honest message within the timeout.
    AssumeSynchronous,
}

/// Client settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientOptions {
    /// Deadline for the whole protocol run of a query (connecting included); a fallback gets
    /// at most as long again.
    pub timeout: Duration,
    /// What silence means.
    pub network: Network,
}

impl ClientOptions {
    /// `timeout`, failing closed on silence.
    pub fn new(timeout: Duration) -> ClientOptions {
        ClientOptions {
            timeout,
            network: Network::Asynchronous,
        }
    }
}

/// Makes a new connection to a server within a time budget (the client's end of a service
/// session). The client uses it to connect in parallel and to replace failed links.
pub type Connector = dyn Fn(ServerId, Duration) -> Result<Session, String> + Send + Sync;

/// A new link and the server's database description (or why not), or why there is no link.
type Connected = Result<(Session, Result<DbInfo, Fault>), String>;

/// Why a server's reply was not usable.
#[derive(Clone, Debug)]
enum Fault {
    /// Nothing usable arrived in time, or the link failed: no evidence.
    Silent(String),
    /// An authenticated reply that contradicts the protocol: evidence.
    Bad(String),
}

impl Fault {
    fn is_silent(&self) -> bool {
        matches!(self, Fault::Silent(_))
    }

    /// The deviation of `server` at `stage` this is: silence, or the evidence `bad` makes of
    /// the detail.
    fn at(
        self,
        server: ServerId,
        stage: Stage,
        bad: impl FnOnce(String) -> Deviation,
    ) -> Deviation {
        match self {
            Fault::Silent(detail) => Deviation::Silent {
                server,
                stage,
                detail,
            },
            Fault::Bad(detail) => bad(detail),
        }
    }
}

/// A client connected to the three servers.
pub struct Client {
    links: [Option<Session>; 3],
    info: DbInfo,
    distrusted: Option<Deviation>,
    options: ClientOptions,
    connector: Option<Arc<Connector>>,
    /// Links to drop and make afresh before the next query.
    stale: [bool; 3],
    /// The nonces of the requests sent on each link (the last [`NONCE_MEMORY`]): a reply
    /// carrying one of them but the current is stale; one carrying none is made up.
    sent: [std::collections::VecDeque<Nonce>; 3],
    /// When each link was last used (or made).
    used: [Option<Instant>; 3],
}

/// A link idle for longer than this is replaced before a query rather than reused (far below
/// the servers' idle timeouts, so that a server never closes a link the client is about to
/// use).
pub const MAX_IDLE_REUSE: Duration = Duration::from_secs(5);

/// Nonces remembered per link.
const NONCE_MEMORY: usize = 64;

/// The key holders, S_b at index b.
const HOLDERS: [ServerId; 2] = [ServerId::S0, ServerId::S1];

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("info", &self.info)
            .field("options", &self.options)
            .field("connected", &self.links.each_ref().map(|l| l.is_some()))
            .field("distrusted", &self.distrusted)
            .finish_non_exhaustive()
    }
}

/// Connects to every server in `which` at once, each within `deadline`; a server's result
/// is its session and its database description (or why not).
fn connect_all(
    connector: &Connector,
    which: [bool; 3],
    deadline: Instant,
) -> [Option<Connected>; 3] {
    std::thread::scope(|sc| {
        let handles = ServerId::ALL.map(|s| {
            which[s.index()].then(|| {
                sc.spawn(move || -> Connected {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err("the deadline passed before connecting".into());
                    }
                    let mut session = connector(s, left)?;
                    let info = hello(&mut session, s, deadline);
                    Ok((session, info))
                })
            })
        });
        handles.map(|h| {
            h.map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the connecting thread panicked".into()))
            })
        })
    })
}

/// The hello exchange on a new link: the server's database description.
fn hello(s: &mut Session, server: ServerId, deadline: Instant) -> Result<DbInfo, Fault> {
    s.set_phase("setup");
    let hello = proto::encode_request(Request::Hello(PROTOCOL_VERSION));
    s.send_bytes(SERVICE_SIDE, &hello)
        .map_err(|e| Fault::Silent(e.to_string()))?;
    s.set_timeout(deadline.saturating_duration_since(Instant::now()));
    let bytes = s
        .recv_bytes(SERVICE_SIDE)
        .map_err(|e| Fault::Silent(e.to_string()))?;
    s.set_phase("query");
    let (role, info) = proto::decode_info(&bytes).map_err(|e| Fault::Bad(e.to_string()))?;
    if usize::from(role) != server.index() {
        return Err(Fault::Bad(format!("claims to be S{role}")));
    }
    Ok(info)
}

/// Bounds the frames `s` accepts to the largest reply a server of the database `info` sends,
/// so that a server cannot make the client buffer more than a legitimate reply.
fn bound_replies(s: &mut Session, info: &DbInfo) {
    s.limit_frame_bytes(u32::try_from(proto::largest_reply(info)).unwrap_or(u32::MAX));
}

impl Client {
    /// Connects to the three servers' client addresses (`addresses[i]` for S_i) in parallel
    /// over server-authenticated TLS, trusting the CA of `net` and the servers' configured
    /// names, and agrees on the database description; fails closed on silence (see
    /// [`Client::connect_with`]).
    pub fn connect(
        net: &Config,
        addresses: [&str; 3],
        timeout: Duration,
    ) -> Result<Client, PirError> {
        Client::connect_with(net, addresses, ClientOptions::new(timeout))
    }

    /// [`Client::connect`] with options. A server that cannot be reached is not blamed: the
    /// client tries it again at each query. Fails if two servers that answered announce
    /// different databases and the third does not settle it.
    pub fn connect_with(
        net: &Config,
        addresses: [&str; 3],
        options: ClientOptions,
    ) -> Result<Client, PirError> {
        let net = net.clone();
        let addresses: [String; 3] = addresses.map(str::to_string);
        let connector: Arc<Connector> = Arc::new(move |s: ServerId, budget: Duration| {
            connect_service(&addresses[s.index()], &net, s.party(), budget)
                .map_err(|e| e.to_string())
        });
        Client::with_connector(connector, options)
    }

    /// A client that makes its connections with `connector` (in parallel, now and whenever a
    /// link has to be replaced).
    pub fn with_connector(
        connector: Arc<Connector>,
        options: ClientOptions,
    ) -> Result<Client, PirError> {
        let deadline = Instant::now() + options.timeout;
        let results = connect_all(&*connector, [true; 3], deadline);
        let mut links: [Option<Session>; 3] = [None, None, None];
        let mut answers: [Result<DbInfo, Fault>; 3] =
            std::array::from_fn(|_| Err(Fault::Silent("not connected".into())));
        for (k, r) in results.into_iter().enumerate() {
            match r {
                Some(Ok((s, info))) => {
                    // A link whose hello went unanswered is dropped (a late answer would
                    // otherwise arrive in the middle of a query).
                    if !info.as_ref().is_err_and(Fault::is_silent) {
                        links[k] = Some(s);
                    }
                    answers[k] = info;
                }
                Some(Err(e)) => answers[k] = Err(Fault::Silent(e)),
                None => {}
            }
        }
        Client::agree(links, answers, options, Some(connector))
    }

    /// Uses established sessions (`links[i]` with S_i, this side being the client of a
    /// service session); failed links cannot be replaced. Fails closed on silence.
    pub fn from_links(links: [Option<Session>; 3], timeout: Duration) -> Result<Client, PirError> {
        Client::from_links_with(links, ClientOptions::new(timeout))
    }

    /// [`Client::from_links`] with options.
    pub fn from_links_with(
        mut links: [Option<Session>; 3],
        options: ClientOptions,
    ) -> Result<Client, PirError> {
        let deadline = Instant::now() + options.timeout;
        let answers: [Result<DbInfo, Fault>; 3] = std::array::from_fn(|k| match &mut links[k] {
            Some(s) => hello(s, ServerId::ALL[k], deadline),
            None => Err(Fault::Silent("not connected".into())),
        });
        for k in 0..3 {
            if answers[k].as_ref().is_err_and(Fault::is_silent) {
                links[k] = None;
            }
        }
        Client::agree(links, answers, options, None)
    }

    /// Settles the database description: the one at least two servers announce.
    fn agree(
        mut links: [Option<Session>; 3],
        answers: [Result<DbInfo, Fault>; 3],
        options: ClientOptions,
        connector: Option<Arc<Connector>>,
    ) -> Result<Client, PirError> {
        let agreed = answers.iter().flatten().find(|i| {
            answers
                .iter()
                .filter(|a| a.as_ref().ok() == Some(*i))
                .count()
                >= 2
        });
        let Some(info) = agreed.copied() else {
            let silent: Vec<(ServerId, &str)> = ServerId::ALL
                .into_iter()
                .filter_map(|s| match &answers[s.index()] {
                    Err(Fault::Silent(why)) => Some((s, why.as_str())),
                    _ => None,
                })
                .collect();
            if let Some(&(server, _)) = silent.first() {
                let all: Vec<String> = silent
                    .iter()
                    .map(|(s, why)| format!("{s}: {why}"))
                    .collect();
                return Err(PirError::Unreachable {
                    server,
                    detail: format!(
                        "no two servers could be heard agreeing on the database; unreachable: {}",
                        all.join("; ")
                    ),
                });
            }
            return Err(PirError::Unrecoverable(format!(
                "no two servers announce the same database: {answers:?}"
            )));
        };
        let distrusted = ServerId::ALL
            .iter()
            .find_map(|&srv| match &answers[srv.index()] {
                Ok(i) if *i == info => None,
                Ok(_) => Some(Deviation::Description {
                    server: srv,
                    detail: "announces another database".into(),
                }),
                Err(Fault::Silent(_)) => None,
                Err(Fault::Bad(e)) => Some(Deviation::Description {
                    server: srv,
                    detail: e.clone(),
                }),
            });
        for l in links.iter_mut().flatten() {
            bound_replies(l, &info);
        }
        let used = links.each_ref().map(|l| l.as_ref().map(|_| Instant::now()));
        Ok(Client {
            links,
            info,
            distrusted,
            options,
            connector,
            stale: [false; 3],
            sent: Default::default(),
            used,
        })
    }

    /// The agreed database description.
    pub fn info(&self) -> DbInfo {
        self.info
    }

    /// The server found deviating at connection time, if any.
    pub fn distrusted(&self) -> Option<&Deviation> {
        self.distrusted.as_ref()
    }

    /// The client's options.
    pub fn options(&self) -> ClientOptions {
        self.options
    }

    /// Retrieves record `index`. Returns the record, checked by the protocol (or, after a
    /// deviation, by its Merkle path), or an error: the index is out of range,
    /// [`PirError::Unreachable`] (a server needed was silent; nobody is blamed and no server
    /// that might be corrupt learned i), or [`PirError::Unrecoverable`] (more than one server
    /// misbehaved).
    pub fn query(&mut self, index: u64) -> Result<QueryOutcome, PirError> {
        if index >= self.info.count {
            return Err(PirError::Invalid(format!(
                "index {index} out of range (the database has {} records)",
                self.info.count
            )));
        }
        let start = Instant::now();
        let timeout = self.options.timeout;
        let deadline = start + timeout;
        self.refresh_links(deadline);
        let before = self.link_bytes();
        let mut compute = Duration::ZERO;
        let result = self.run(index, deadline, &mut compute);
        let (value, fallback) = match result {
            Ok(v) => (v, None),
            // Fail closed: silence is no evidence.
            Err(Deviation::Silent { server, detail, .. })
                if self.options.network == Network::Asynchronous =>
            {
                return Err(PirError::Unreachable { server, detail });
            }
            Err(deviation) => {
                // The fallback gets at most one more timeout: the query ends within 2×.
                let fb_deadline = (Instant::now() + timeout).min(start + 2 * timeout);
                let (v, fb) = self.fall_back(deviation, index, fb_deadline)?;
                (v, Some(fb))
            }
        };
        let after = self.link_bytes();
        let bytes = std::array::from_fn(|k| LinkBytes {
            sent: after[k].sent.saturating_sub(before[k].sent),
            received: after[k].received.saturating_sub(before[k].received),
        });
        Ok(QueryOutcome {
            value,
            fallback,
            timings: Timings {
                total: start.elapsed(),
                client_compute: compute,
            },
            bytes,
        })
    }

    /// Before a query: drops links that failed or timed out (and anything stale waiting on
    /// the live ones) and, when the client can reconnect, links idle for longer than
    /// [`MAX_IDLE_REUSE`] (a server may be closing them for idleness just now, and that race
    /// would look like silence); then reconnects the missing ones in parallel.
    fn refresh_links(&mut self, deadline: Instant) {
        let now = Instant::now();
        for server in ServerId::ALL {
            let k = server.index();
            let idle = self.connector.is_some()
                && self.used[k].is_some_and(|t| now.duration_since(t) > MAX_IDLE_REUSE);
            let mut dead = std::mem::take(&mut self.stale[k]) || idle;
            if let Some(s) = &mut self.links[k] {
                s.set_timeout(Duration::ZERO);
                while !dead {
                    match s.recv_bytes(SERVICE_SIDE) {
                        Ok(_) => continue, // a late reply to an earlier query
                        Err(NetError::Timeout { .. }) => break,
                        Err(_) => dead = true,
                    }
                }
            }
            if dead {
                self.set_link(server, None);
            }
        }
        self.reconnect(std::array::from_fn(|k| self.links[k].is_none()), deadline);
        for k in 0..3 {
            self.used[k] = self.links[k].as_ref().map(|_| now);
        }
    }

    /// Reconnects the servers in `which` (in parallel); a server announcing another database
    /// than the agreed one is distrusted from then on.
    fn reconnect(&mut self, which: [bool; 3], deadline: Instant) {
        let Some(connector) = self.connector.clone() else {
            return;
        };
        if !which.contains(&true) {
            return;
        }
        let results = connect_all(&*connector, which, deadline);
        for (k, r) in results.into_iter().enumerate() {
            let Some(Ok((s, info))) = r else {
                continue;
            };
            let detail = match info {
                Ok(i) if i == self.info => {
                    self.set_link(ServerId::ALL[k], Some(s));
                    continue;
                }
                Err(Fault::Silent(_)) => continue,
                Ok(_) => "announces another database".to_string(),
                Err(Fault::Bad(e)) => e,
            };
            if self.distrusted.is_none() {
                self.distrusted = Some(Deviation::Description {
                    server: ServerId::ALL[k],
                    detail,
                });
            }
        }
    }

    fn link_bytes(&self) -> [LinkBytes; 3] {
        std::array::from_fn(|k| {
            self.links[k].as_ref().map_or(LinkBytes::default(), |s| {
                let t = s.stats().total();
                let l = t.link(SERVICE_SIDE);
                LinkBytes {
                    sent: l.bytes_sent,
                    received: l.bytes_received,
                }
            })
        })
    }

    fn send(&mut self, to: ServerId, req: Request) -> Result<(), Fault> {
        let Some(s) = self.links[to.index()].as_mut() else {
            return Err(Fault::Silent("not connected".into()));
        };
        let sent = &mut self.sent[to.index()];
        sent.push_back(req.nonce());
        if sent.len() > NONCE_MEMORY {
            sent.pop_front();
        }
        s.send_bytes(SERVICE_SIDE, &proto::encode_request(req))
            .map_err(|e| {
                self.stale[to.index()] = true;
                Fault::Silent(e.to_string())
            })
    }

    /// Replaces the link with `s` (or removes it).
    fn set_link(&mut self, s: ServerId, mut link: Option<Session>) {
        if let Some(l) = &mut link {
            bound_replies(l, &self.info);
        }
        self.used[s.index()] = link.as_ref().map(|_| Instant::now());
        self.links[s.index()] = link;
        self.sent[s.index()].clear();
    }

    /// The reply to the request with `nonce` from `from`, waiting until `deadline` at most;
    /// replies to earlier requests on this link (late answers) are skipped, and a reply to
    /// no request of ours is evidence. A reply that has already arrived is taken even once
    /// the deadline has passed (another server's wait may have used up the time), so that
    /// evidence in hand is not mistaken for silence.
    fn recv(&mut self, from: ServerId, nonce: Nonce, deadline: Instant) -> Result<Vec<u8>, Fault> {
        let Some(s) = self.links[from.index()].as_mut() else {
            return Err(Fault::Silent("not connected".into()));
        };
        loop {
            // A zero timeout still takes a frame that is already queued.
            s.set_timeout(deadline.saturating_duration_since(Instant::now()));
            match s.recv_bytes(SERVICE_SIDE) {
                Ok(b) => match proto::reply_nonce(&b) {
                    Some(n) if n == nonce => return Ok(b),
                    // Stale replies are skipped only while there is time, so that a server
                    // streaming them cannot hold the client past its deadline.
                    Some(n) if self.sent[from.index()].contains(&n) => {
                        if Instant::now() >= deadline {
                            self.stale[from.index()] = true;
                            return Err(Fault::Silent("no reply before the deadline".into()));
                        }
                    }
                    Some(_) => {
                        return Err(Fault::Bad(
                            "a reply to a request this client never sent".into(),
                        ));
                    }
                    None => return Ok(b),
                },
                // An oversized frame was announced inside the authenticated channel.
                Err(e @ NetError::FrameTooLarge { .. }) => {
                    self.stale[from.index()] = true;
                    return Err(Fault::Bad(e.to_string()));
                }
                // Anything else (timeout, closed, cut inside a frame, a TLS failure) may be
                // the network's doing.
                Err(e) => {
                    self.stale[from.index()] = true;
                    return Err(Fault::Silent(e.to_string()));
                }
            }
        }
    }

    /// Sends `req` to `to` and returns its reply (see [`Client::recv`]).
    fn ask(&mut self, to: ServerId, req: Request, deadline: Instant) -> Result<Vec<u8>, Fault> {
        self.send(to, req)?;
        self.recv(to, req.nonce(), deadline)
    }

    /// Sends `reqs[b]` to S_b (b = 0, 1), both before either reply is awaited, and returns
    /// their replies.
    fn ask_holders(
        &mut self,
        reqs: [Request; 2],
        deadline: Instant,
    ) -> [Result<Vec<u8>, Fault>; 2] {
        let [s0, s1] = [0, 1].map(|b| self.send(HOLDERS[b], reqs[b]));
        [
            s0.and_then(|()| self.recv(ServerId::S0, reqs[0].nonce(), deadline)),
            s1.and_then(|()| self.recv(ServerId::S1, reqs[1].nonce(), deadline)),
        ]
    }

    /// Steps 11–17 within `deadline`; `Err` is what sends the client to step 18 (or, for
    /// silence, to an error unless the network is assumed synchronous).
    fn run(
        &mut self,
        i: u64,
        deadline: Instant,
        compute: &mut Duration,
    ) -> Result<Vec<u8>, Deviation> {
        if let Some(d) = &self.distrusted {
            return Err(d.clone());
        }
        self.check_connected()?;
        let (id, pair) = self.dealer_views(deadline)?;
        let views = self.holder_views(id, deadline);
        let t = Instant::now();
        let checked = check_views(&pair, views);
        *compute += t.elapsed();
        let (r, alpha) = checked?;
        let mask = (1u64 << self.info.domain_bits) - 1;
        let delta = (i.wrapping_sub(u64::from(r)) & mask) as u32;
        let [a0, a1] = self.answers(delta, deadline)?;
        let t = Instant::now();
        let record = verify_answers(&self.info, alpha, &a0, &a1);
        *compute += t.elapsed();
        record
    }

    /// A server that could not be (re)connected is silent.
    fn check_connected(&self) -> Result<(), Deviation> {
        for s in [ServerId::S2, ServerId::S0, ServerId::S1] {
            if self.links[s.index()].is_none() {
                return Err(Deviation::Silent {
                    server: s,
                    stage: Stage::Connect,
                    detail: "not connected".into(),
                });
            }
        }
        Ok(())
    }

    /// Step 11: S_2 sends (view_0, view_1) of an offline instance, and its id.
    fn dealer_views(&mut self, deadline: Instant) -> Result<(u128, [FullView; 2]), Deviation> {
        let n = usize::from(self.info.domain_bits);
        let dealer = |detail: String| Deviation::DealerViews { detail };
        let begin = Request::Begin {
            nonce: rand::rng().next_u64(),
        };
        let bytes = self
            .ask(ServerId::S2, begin, deadline)
            .map_err(|f| f.at(ServerId::S2, Stage::Views, dealer))?;
        match proto::decode_pair(&bytes, n) {
            Ok(Reply::Ok(v)) => Ok(v),
            Ok(Reply::Refused(Some(Refusal::Unavailable))) => Err(Deviation::Silent {
                server: ServerId::S2,
                stage: Stage::Views,
                detail: "no offline instance ready".into(),
            }),
            Ok(Reply::Refused(code)) => Err(dealer(format!("refused ({code:?})"))),
            Err(e) => Err(dealer(e.to_string())),
        }
    }

    /// Step 11: each S_b sends its regenerated view of instance `id`; it holds the instance for
    /// the shift as long as this query may last.
    fn holder_views(&mut self, id: u128, deadline: Instant) -> [Result<FullView, Deviation>; 2] {
        let n = usize::from(self.info.domain_bits);
        let hold_ms = u32::try_from(
            deadline
                .saturating_duration_since(Instant::now())
                .as_millis(),
        )
        .unwrap_or(u32::MAX);
        let mut rng = rand::rng();
        let fetch = [0, 1].map(|_| Request::Fetch {
            nonce: rng.next_u64(),
            id,
            hold_ms,
        });
        let [r0, r1] = self.ask_holders(fetch, deadline);
        [(ServerId::S0, r0), (ServerId::S1, r1)].map(|(holder, reply)| {
            let bad = |detail: String| Deviation::HolderView { holder, detail };
            let bytes = reply.map_err(|f| f.at(holder, Stage::Views, bad))?;
            match proto::decode_view(&bytes, n) {
                Ok(Reply::Ok(view)) => Ok(view),
                Ok(Reply::Refused(Some(Refusal::Replayed))) => Err(Deviation::Replay { holder }),
                Ok(Reply::Refused(Some(
                    r @ (Refusal::Unavailable | Refusal::NotFetched | Refusal::Reused),
                ))) => Err(Deviation::Silent {
                    server: holder,
                    stage: Stage::Views,
                    detail: format!("could not serve ({r:?})"),
                }),
                Ok(Reply::Refused(code)) => Err(bad(format!("refused ({code:?})"))),
                Err(e) => Err(bad(e.to_string())),
            }
        })
    }

    /// Steps 14–15: Δ = i − r to S_0 and S_1 only (spec §11 P3); their answer shares. Evidence
    /// against either holder comes before silence of the other.
    fn answers(&mut self, delta: u32, deadline: Instant) -> Result<[Vec<Fp64>; 2], Deviation> {
        let chunks = self.info.chunks();
        let mut rng = rand::rng();
        let shift = [0, 1].map(|_| Request::Shift {
            nonce: rng.next_u64(),
            delta,
        });
        let [r0, r1] = self.ask_holders(shift, deadline);
        let answers = [(ServerId::S0, r0), (ServerId::S1, r1)].map(|(holder, reply)| {
            let bad = |detail: String| Deviation::Answer { holder, detail };
            let bytes = reply.map_err(|f| f.at(holder, Stage::Answer, bad))?;
            match proto::decode_answer(&bytes, chunks) {
                Ok(Reply::Ok(vals)) => Ok(vals),
                Ok(Reply::Refused(Some(r @ (Refusal::NotFetched | Refusal::Unavailable)))) => {
                    Err(Deviation::Silent {
                        server: holder,
                        stage: Stage::Answer,
                        detail: format!("could not serve ({r:?})"),
                    })
                }
                Ok(Reply::Refused(code)) => Err(bad(format!("refused ({code:?})"))),
                Err(e) => Err(bad(e.to_string())),
            }
        });
        for a in &answers {
            if let Err(d) = a
                && d.is_evidence()
            {
                return Err(d.clone());
            }
        }
        let [a0, a1] = answers;
        Ok([a0?, a1?])
    }
    /// Step 18 after `deviation`, within `deadline`: i in the clear to the server it names,
    /// and the record only if its Merkle path checks out. A server that returns a record that
    /// does not check out has proved itself corrupt; if it was trusted only on the
    /// synchronous-network rule, the others are honest and the client asks one of them.
    fn fall_back(
        &mut self,
        deviation: Deviation,
        i: u64,
        deadline: Instant,
    ) -> Result<(Vec<u8>, Fallback), PirError> {
        let trusted = deviation.trusted();
        let suspects = deviation.suspects();
        tracing::info!(?deviation, %trusted, "falling back");
        match self.clear(trusted, i, deadline) {
            Ok(v) => Ok((
                v,
                Fallback {
                    deviation,
                    suspects,
                    trusted,
                },
            )),
            Err(Fault::Silent(detail)) => Err(PirError::Unreachable {
                server: trusted,
                detail: format!("the server chosen for the fallback was silent: {detail}"),
            }),
            Err(Fault::Bad(detail)) => {
                let Deviation::Silent { server: silent, .. } = deviation else {
                    return Err(PirError::Unrecoverable(format!(
                        "{trusted}, identified as honest, returned a record that fails its \
                         check: {detail}"
                    )));
                };
                // `trusted` (chosen by the synchronous rule) is now proven corrupt, so the
                // silent server and the third one are honest: ask the one that was not silent.
                let liar = trusted;
                let next = ServerId::ALL
                    .into_iter()
                    .find(|&s| s != liar && s != silent)
                    .unwrap_or(ServerId::S2);
                tracing::warn!(%liar, %next, "the fallback record failed its check: {detail}");
                let second = Deviation::FalseRecord {
                    server: liar,
                    detail,
                };
                match self.clear(next, i, deadline) {
                    Ok(v) => Ok((
                        v,
                        Fallback {
                            suspects: second.suspects(),
                            deviation: second,
                            trusted: next,
                        },
                    )),
                    Err(Fault::Silent(d)) => Err(PirError::Unreachable {
                        server: next,
                        detail: format!(
                            "{liar} returned a false record and {next} was silent: {d}"
                        ),
                    }),
                    Err(Fault::Bad(d)) => Err(PirError::Unrecoverable(format!(
                        "{liar} and {next} both returned records that fail their checks: {d}"
                    ))),
                }
            }
        }
    }

    /// Step 18: i in the clear to `to`; the record must come with a Merkle path to the agreed
    /// root.
    fn clear(&mut self, to: ServerId, i: u64, deadline: Instant) -> Result<Vec<u8>, Fault> {
        if self.links[to.index()].is_none() {
            self.reconnect(std::array::from_fn(|k| k == to.index()), deadline);
        }
        let nonce = rand::rng().next_u64();
        let bytes = self.ask(to, Request::Clear { nonce, index: i }, deadline)?;
        let bits = self.info.domain_bits;
        let rec =
            match proto::decode_record(&bytes, self.info.record_size as usize, usize::from(bits)) {
                Ok(Reply::Ok(rec)) => rec,
                Ok(Reply::Refused(code)) => return Err(Fault::Bad(format!("refused ({code:?})"))),
                Err(e) => return Err(Fault::Bad(e.to_string())),
            };
        if rec.index != i {
            return Err(Fault::Bad(format!("record {} instead of {i}", rec.index)));
        }
        if !merkle::verify(&self.info.root, bits, i, &rec.record, &rec.path) {
            return Err(Fault::Bad(
                "the Merkle path does not lead to the agreed root".into(),
            ));
        }
        Ok(rec.record)
    }
}

/// One query over the network: connects to the servers (see [`Client::connect`]), retrieves
/// record `index` and disconnects.
pub fn query(
    net: &Config,
    addresses: [&str; 3],
    index: u64,
    timeout: Duration,
) -> Result<QueryOutcome, PirError> {
    query_with(net, addresses, index, ClientOptions::new(timeout))
}

/// [`query`] with options. The connections count against the query's deadline.
pub fn query_with(
    net: &Config,
    addresses: [&str; 3],
    index: u64,
    options: ClientOptions,
) -> Result<QueryOutcome, PirError> {
    let start = Instant::now();
    let mut client = Client::connect_with(net, addresses, options)?;
    // The query itself gets what is left of the deadline.
    let left = options.timeout.saturating_sub(start.elapsed());
    client.options.timeout = left.max(Duration::from_millis(1));
    let mut out = client.query(index)?;
    out.timings.total = start.elapsed();
    Ok(out)
}

/// Steps 13–14, local: each holder's view must equal the dealer's copy (evidence from either
/// holder before silence of the other), G re-run on the recorded inputs must match, and the
/// payload must be (1, α) (spec §11 P1). Returns (r, α).
fn check_views(
    pair: &[FullView; 2],
    views: [Result<FullView, Deviation>; 2],
) -> Result<(u32, Fp64), Deviation> {
    for b in 0..2 {
        match &views[b] {
            Err(d) if d.is_evidence() => return Err(d.clone()),
            Ok(v) if *v != pair[b] => {
                return Err(Deviation::ViewMismatch { holder: HOLDERS[b] });
            }
            _ => {}
        }
    }
    let [v0, v1] = views;
    v0.and(v1)?;
    if let Some(call) = dpf::check_g([&pair[0], &pair[1]]) {
        return Err(Deviation::GOracle { call });
    }
    let (r, v) = dpf::reconstruct([&pair[0], &pair[1]]);
    if v[0] != Fp64::ONE {
        return Err(Deviation::Payload);
    }
    Ok((r, v[1]))
}

/// Steps 16–17 (and §4.3): z^j = Σ_b ⟨z⟩^j_b, y^j likewise; accept iff α·z^j = y^j for every
/// chunk j, then the record from the z^j.
fn verify_answers(
    info: &DbInfo,
    alpha: Fp64,
    a0: &[Fp64],
    a1: &[Fp64],
) -> Result<Vec<u8>, Deviation> {
    let chunks = info.chunks();
    let mut z = Vec::with_capacity(chunks);
    for j in 0..chunks {
        let zj = a0[2 * j] + a1[2 * j];
        let yj = a0[2 * j + 1] + a1[2 * j + 1];
        if alpha * zj != yj {
            return Err(Deviation::Mac { chunk: j });
        }
        z.push(zj);
    }
    reconstruct_record(info, &z).ok_or(Deviation::Mac { chunk: chunks })
}
