//! The client (PIR-GOD Algorithm 2, steps 11–18, with the blame rules of spec §8).
//!
//! The client never aborts while at most one server misbehaves: every missing, late (past the
//! timeout), malformed or inconsistent message and every failed check is a [`Deviation`],
//! which names a server that is certainly honest ([`Deviation::trusted`]); the client sends it
//! i in the clear and outputs its record (step 18). [`QueryOutcome::fallback`] says what
//! happened, whom the evidence implicates ([`Suspects`]) and whom it trusted.
//!
//! Messages of one query (n = domain bits, m' = chunks per record):
//! 1. C → S_2: begin; S_2 → C: instance id and both views (step 11);
//! 2. C → S_0, S_1: fetch(id); S_b → C: its full view (step 11);
//! 3. checks (steps 12–13 and the payload check of spec §11 P1);
//! 4. C → S_0, S_1: shift(id, Δ = i − r mod 2^n) (step 14); S_b → C: 2m' shares (step 15);
//! 5. MAC check per chunk (steps 16–17), reconstruction of the record (spec §7).
//!
//! The id round (2) is not in the paper: S_2 picks the instance, so S_0 and S_1 learn which
//! one to use from the client (spec §2 leaves instance coordination open).

use std::time::{Duration, Instant};

use doram_field::Fp64;
use doram_net::service::{SERVICE_SIDE, connect_service};
use doram_net::{Config, Session};

use crate::PirError;
use crate::db::{DbInfo, reconstruct_record};
use crate::dpf::{self, FullView};
use crate::proto::{self, PROTOCOL_VERSION, Request, ServerId};

/// Whom the evidence of a deviation implicates. At most one server is corrupt, so the
/// corrupt one is among the suspects and every other server is honest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suspects {
    /// Only this server can have deviated.
    Certain(ServerId),
    /// One of these two deviated; the evidence does not say which.
    OneOf(ServerId, ServerId),
}

impl Suspects {
    /// Whether `s` is a suspect.
    pub fn contains(&self, s: ServerId) -> bool {
        match *self {
            Suspects::Certain(a) => a == s,
            Suspects::OneOf(a, b) => a == s || b == s,
        }
    }
}

/// A deviation the client observed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deviation {
    /// A server's database description was missing, malformed, or differed from the one the
    /// other two agree on (found when connecting; every later query falls back).
    Description {
        /// The odd server.
        server: ServerId,
        /// What was wrong.
        detail: String,
    },
    /// S_2's views were missing, late, malformed or refused.
    DealerViews {
        /// What was wrong.
        detail: String,
    },
    /// S_b's view was missing, late, malformed, refused or for another instance (S_b or S_2,
    /// which might not have sent it the partial view).
    HolderView {
        /// S_0 or S_1.
        holder: ServerId,
        /// What was wrong.
        detail: String,
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
    /// S_b's answer was missing, late, malformed or refused: S_b deviated.
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
}

impl Deviation {
    /// The server that is certainly honest given this evidence (the S_T of step 13/17).
    pub fn trusted(&self) -> ServerId {
        match self {
            Deviation::Description { server, .. } => {
                if *server == ServerId::S2 {
                    ServerId::S0
                } else {
                    ServerId::S2
                }
            }
            Deviation::DealerViews { .. } | Deviation::GOracle { .. } | Deviation::Payload => {
                ServerId::S0
            }
            Deviation::HolderView { holder, .. } | Deviation::ViewMismatch { holder } => {
                other_holder(*holder)
            }
            Deviation::Answer { .. } | Deviation::Mac { .. } => ServerId::S2,
        }
    }

    /// Whom the evidence implicates.
    pub fn suspects(&self) -> Suspects {
        match self {
            Deviation::Description { server, .. } => Suspects::Certain(*server),
            Deviation::DealerViews { .. } | Deviation::GOracle { .. } | Deviation::Payload => {
                Suspects::Certain(ServerId::S2)
            }
            Deviation::HolderView { holder, .. } | Deviation::ViewMismatch { holder } => {
                Suspects::OneOf(*holder, ServerId::S2)
            }
            Deviation::Answer { holder, .. } => Suspects::Certain(*holder),
            Deviation::Mac { .. } => Suspects::OneOf(ServerId::S0, ServerId::S1),
        }
    }
}

fn other_holder(h: ServerId) -> ServerId {
    if h == ServerId::S0 {
        ServerId::S1
    } else {
        ServerId::S0
    }
}

/// The fallback a query took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// What the client observed.
    pub deviation: Deviation,
    /// Whom it implicates.
    pub suspects: Suspects,
    /// The server that received i in the clear and supplied the record.
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
    /// Bytes per server (index = server index).
    pub bytes: [LinkBytes; 3],
}

impl QueryOutcome {
    /// The server that certainly deviated, if the evidence pins it down.
    pub fn blamed(&self) -> Option<ServerId> {
        match self.fallback.as_ref()?.suspects {
            Suspects::Certain(s) => Some(s),
            Suspects::OneOf(..) => None,
        }
    }

    /// Total payload bytes of the query.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().map(|b| b.sent + b.received).sum()
    }
}

/// A client connected to the three servers.
#[derive(Debug)]
pub struct Client {
    links: [Option<Session>; 3],
    info: DbInfo,
    distrusted: Option<Deviation>,
}

impl Client {
    /// Connects to the three servers' client addresses (`addresses[i]` for S_i) over
    /// server-authenticated TLS, trusting the CA of `net` and the servers' configured names,
    /// and agrees on the database description. A server that cannot be reached is treated
    /// like one that deviates (every query then falls back to an honest server).
    pub fn connect(
        net: &Config,
        addresses: [&str; 3],
        timeout: Duration,
    ) -> Result<Client, PirError> {
        let links = ServerId::ALL.map(|s| {
            connect_service(addresses[s.index()], net, s.party(), timeout)
                .map_err(|e| tracing::warn!(server = %s, "cannot connect: {e}"))
                .ok()
        });
        Client::from_links(links, timeout)
    }

    /// Uses established sessions (`links[i]` with S_i, this side being the client of a
    /// service session) with receive timeout `timeout`, and agrees on the database
    /// description: the one at least two servers announce. Fails only if no two servers agree.
    pub fn from_links(
        mut links: [Option<Session>; 3],
        timeout: Duration,
    ) -> Result<Client, PirError> {
        let hello = proto::encode_request(Request::Hello(PROTOCOL_VERSION));
        for s in links.iter_mut().flatten() {
            s.set_timeout(timeout);
            s.set_phase("setup");
            if s.send_bytes(SERVICE_SIDE, &hello).is_err() {
                continue;
            }
        }
        let answers: Vec<Result<DbInfo, String>> = ServerId::ALL
            .iter()
            .map(|&srv| {
                let s = links[srv.index()].as_mut().ok_or("not connected")?;
                let bytes = s.recv_bytes(SERVICE_SIDE).map_err(|e| e.to_string())?;
                let (role, info) = proto::decode_info(&bytes).map_err(|e| e.to_string())?;
                if usize::from(role) != srv.index() {
                    return Err(format!("claims to be S{role}"));
                }
                Ok(info)
            })
            .collect();
        let agreed = answers.iter().flatten().find(|i| {
            answers
                .iter()
                .filter(|a| a.as_ref().ok() == Some(*i))
                .count()
                >= 2
        });
        let Some(info) = agreed.copied() else {
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
                Err(e) => Some(Deviation::Description {
                    server: srv,
                    detail: e.clone(),
                }),
            });
        for s in links.iter_mut().flatten() {
            s.set_phase("query");
        }
        Ok(Client {
            links,
            info,
            distrusted,
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

    /// Retrieves record `index`. Errors only for an index out of range or when more than one
    /// server misbehaves.
    pub fn query(&mut self, index: u64) -> Result<QueryOutcome, PirError> {
        if index >= self.info.count {
            return Err(PirError::Invalid(format!(
                "index {index} out of range (the database has {} records)",
                self.info.count
            )));
        }
        let before = self.link_bytes();
        let start = Instant::now();
        let mut compute = Duration::ZERO;
        let (value, fallback) = match self.run(index, &mut compute) {
            Ok(v) => (v, None),
            Err(deviation) => {
                let trusted = deviation.trusted();
                let suspects = deviation.suspects();
                tracing::info!(?deviation, %trusted, "falling back");
                let v = self.clear(trusted, index)?;
                (
                    v,
                    Some(Fallback {
                        deviation,
                        suspects,
                        trusted,
                    }),
                )
            }
        };
        let after = self.link_bytes();
        let bytes = std::array::from_fn(|k| LinkBytes {
            sent: after[k].sent - before[k].sent,
            received: after[k].received - before[k].received,
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

    fn send(&mut self, to: ServerId, msg: &[u8]) -> Result<(), String> {
        let s = self.links[to.index()].as_mut().ok_or("not connected")?;
        s.send_bytes(SERVICE_SIDE, msg).map_err(|e| e.to_string())
    }

    fn recv(&mut self, from: ServerId) -> Result<Vec<u8>, String> {
        let s = self.links[from.index()].as_mut().ok_or("not connected")?;
        s.recv_bytes(SERVICE_SIDE).map_err(|e| e.to_string())
    }

    /// Steps 11–17; `Err` is the deviation that sends the client to step 18.
    fn run(&mut self, i: u64, compute: &mut Duration) -> Result<Vec<u8>, Deviation> {
        if let Some(d) = &self.distrusted {
            return Err(d.clone());
        }
        let n = usize::from(self.info.domain_bits);
        let chunks = self.info.chunks();
        // Step 11: S_2 sends (view_0, view_1).
        let dealer = |detail: String| Deviation::DealerViews { detail };
        self.send(ServerId::S2, &proto::encode_request(Request::Begin))
            .map_err(dealer)?;
        let (id, pair) = self
            .recv(ServerId::S2)
            .and_then(|b| proto::decode_pair(&b, n).map_err(|e| e.to_string()))
            .map_err(dealer)?;
        // Step 11: each S_b sends its regenerated view for the same instance.
        let holders = [ServerId::S0, ServerId::S1];
        let fetch = proto::encode_request(Request::Fetch(id));
        let sent: [Result<(), String>; 2] = holders.map(|h| self.send(h, &fetch));
        let mut views: [Result<FullView, String>; 2] = [0, 1].map(|b| {
            sent[b].clone()?;
            let bytes = self.recv(holders[b])?;
            let (vid, view) = proto::decode_view(&bytes, n).map_err(|e| e.to_string())?;
            if vid != id {
                return Err(format!("view for instance {vid}, expected {id}"));
            }
            Ok(view)
        });
        let t = Instant::now();
        // Step 13, first rule: compare view_b with \overline{view}_b, b = 0 then 1.
        let mut own: Vec<FullView> = Vec::with_capacity(2);
        for b in 0..2 {
            match std::mem::replace(&mut views[b], Err(String::new())) {
                Err(detail) => {
                    *compute += t.elapsed();
                    return Err(Deviation::HolderView {
                        holder: holders[b],
                        detail,
                    });
                }
                Ok(v) if v != pair[b] => {
                    *compute += t.elapsed();
                    return Err(Deviation::ViewMismatch { holder: holders[b] });
                }
                Ok(v) => own.push(v),
            }
        }
        // Step 13, second rule: re-run G on the recorded inputs.
        if let Some(call) = dpf::check_g([&pair[0], &pair[1]]) {
            *compute += t.elapsed();
            return Err(Deviation::GOracle { call });
        }
        // Step 14: (α, r) from the views; the payload must be (1, α) (spec §11 P1).
        let (r, v) = dpf::reconstruct([&pair[0], &pair[1]]);
        if v[0] != Fp64::ONE {
            *compute += t.elapsed();
            return Err(Deviation::Payload);
        }
        let alpha = v[1];
        let mask = (1u64 << n) - 1;
        let delta = (i.wrapping_sub(u64::from(r)) & mask) as u32;
        *compute += t.elapsed();
        // Step 14: Δ = i − r to S_0 and S_1 only (spec §11 P3).
        let shift = proto::encode_request(Request::Shift(id, delta));
        let sent: [Result<(), String>; 2] = holders.map(|h| self.send(h, &shift));
        let answers: [Result<Vec<Fp64>, String>; 2] = [0, 1].map(|b| {
            sent[b].clone()?;
            let bytes = self.recv(holders[b])?;
            let (aid, vals) = proto::decode_answer(&bytes, chunks).map_err(|e| e.to_string())?;
            if aid != id {
                return Err(format!("answer for instance {aid}, expected {id}"));
            }
            Ok(vals)
        });
        let [a0, a1] = answers;
        let a0 = a0.map_err(|detail| Deviation::Answer {
            holder: ServerId::S0,
            detail,
        })?;
        let a1 = a1.map_err(|detail| Deviation::Answer {
            holder: ServerId::S1,
            detail,
        })?;
        let t = Instant::now();
        // Steps 16–17 (and §4.3): z^j = Σ_b ⟨z⟩^j_b, y^j likewise; accept iff α·z^j = y^j ∀j.
        let mut z = Vec::with_capacity(chunks);
        for j in 0..chunks {
            let zj = a0[2 * j] + a1[2 * j];
            let yj = a0[2 * j + 1] + a1[2 * j + 1];
            if alpha * zj != yj {
                *compute += t.elapsed();
                return Err(Deviation::Mac { chunk: j });
            }
            z.push(zj);
        }
        let record = reconstruct_record(&self.info, &z);
        *compute += t.elapsed();
        record.ok_or(Deviation::Mac { chunk: chunks })
    }

    /// Step 18: i in the clear to the trusted server.
    fn clear(&mut self, trusted: ServerId, i: u64) -> Result<Vec<u8>, PirError> {
        let rs = self.info.record_size as usize;
        self.send(trusted, &proto::encode_request(Request::Clear(i)))
            .and_then(|()| self.recv(trusted))
            .and_then(|b| proto::decode_record(&b, rs).map_err(|e| e.to_string()))
            .map_err(|e| {
                PirError::Unrecoverable(format!(
                    "{trusted}, identified as honest, did not supply the record: {e}"
                ))
            })
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
    Client::connect(net, addresses, timeout)?.query(index)
}
