//! The benchmark: all four parties in one process (threads, in-process sessions, optional
//! traffic shaping), running the same server and client code as the service.
//!
//! Per query, offline and online are measured separately, so the offline work of the next
//! query never overlaps an online phase:
//! 1. **offline**: S_2 [`deal_one`](Server::deal_one) while S_0 and S_1
//!    [`receive_one`](Server::receive_one) (regeneration and full-domain evaluation), on three
//!    threads; the offline time is the wall time until both holders have stored the instance;
//! 2. **online**: one [`Client::query`] against the servers' client handlers: end-to-end time
//!    and the client's own computation (spec §11 P15).
//!
//! Communication is payload bytes (frame headers excluded), per party and per query; medians
//! are reported.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use doram_net::{LocalMesh, Session, Shaping};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use crate::PirError;
use crate::behaviour::Behaviour;
use crate::client::Client;
use crate::db::Database;
use crate::proto::{self, ServerId};
use crate::server::{Server, ServerConfig};

/// What to measure.
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// N = 2^domain_bits records.
    pub domain_bits: u8,
    /// Bytes per record.
    pub record_size: usize,
    /// Measured queries (after one warm-up query).
    pub queries: usize,
    /// Shaping of every link.
    pub shaping: Shaping,
    /// Seed of the random database and indices.
    pub seed: u64,
}

impl BenchConfig {
    /// `queries` queries on 2^`domain_bits` random records of `record_size` bytes, no shaping.
    pub fn new(domain_bits: u8, record_size: usize, queries: usize) -> BenchConfig {
        BenchConfig {
            domain_bits,
            record_size,
            queries,
            shaping: Shaping::default(),
            seed: 1,
        }
    }
}

/// Medians over the measured queries.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// n.
    pub domain_bits: u8,
    /// Bytes per record.
    pub record_size: usize,
    /// Measured queries.
    pub queries: usize,
    /// Offline wall time (S_2 generation, transfer, both holders' evaluation), ms.
    pub offline_ms: f64,
    /// S_2's generation alone, ms.
    pub dealer_ms: f64,
    /// The slower holder's regeneration and full-domain evaluation, ms.
    pub holder_ms: f64,
    /// Online end-to-end query time, ms.
    pub online_ms: f64,
    /// The client's own computation, ms.
    pub client_ms: f64,
    /// Offline bytes S_2 → S_0 and S_2 → S_1 (payload), per query.
    pub offline_bytes: [u64; 2],
    /// Online bytes client → S_i, per query.
    pub online_sent: [u64; 3],
    /// Online bytes S_i → client, per query.
    pub online_received: [u64; 3],
    /// Total online bytes per query.
    pub online_total: u64,
    /// Total offline bytes per query.
    pub offline_total: u64,
    /// Spec §9.3 formula for the online communication (λ = 128, 64-bit field), bytes.
    pub online_formula: f64,
    /// Spec §9.3 formula for the offline communication, bytes.
    pub offline_formula: f64,
    /// Every query returned the right record without fallback.
    pub verified: bool,
}

impl BenchReport {
    /// The report as a JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Spec §9.1/§9.3: online bits 11nλ + 28n + 4λ + 22 log|F| + 4k (k = record bits), offline
/// 2(n(λ+3) + λ + 4 log|F|) bits; in bytes.
pub fn formula_bytes(domain_bits: u8, record_size: usize) -> (f64, f64) {
    let n = f64::from(domain_bits);
    let (lambda, logf) = (128.0, 64.0);
    let k = 64.0 * (record_size as f64 / 8.0).ceil();
    let online = 11.0 * n * lambda + 28.0 * n + 4.0 * lambda + 22.0 * logf + 4.0 * k;
    let offline = 2.0 * (n * (lambda + 3.0) + lambda + 4.0 * logf);
    (online / 8.0, offline / 8.0)
}

/// The three honest servers, each serving client sessions on a thread of its own (no
/// background offline loop), and a client connected to them over shaped in-process links.
struct Deployment {
    servers: Vec<Server>,
    serving: Vec<thread::JoinHandle<Result<crate::server::ServeReport, PirError>>>,
    client: Client,
}

impl Deployment {
    fn start(db: &Arc<Database>, shaping: Shaping) -> Result<Deployment, PirError> {
        let servers: Vec<Server> = ServerId::ALL
            .iter()
            .map(|&id| {
                let mut c = ServerConfig::new(id);
                c.pool_size = 1;
                Server::new(c, db.clone(), Behaviour::Honest)
            })
            .collect();
        let mut serving = Vec::new();
        let mut links = Vec::new();
        for s in &servers {
            let (tx, rx) = mpsc::channel::<Session>();
            let s = s.clone();
            serving.push(thread::spawn(move || s.serve(None, rx)));
            let mut pair = LocalMesh::new(2)
                .timeout(Duration::from_secs(600))
                .shaping(shaping)
                .build();
            let (server_side, client_side) = (pair.pop(), pair.pop());
            if let (Some(srv), Some(c)) = (server_side, client_side) {
                tx.send(srv)
                    .map_err(|_| PirError::Invalid("server stopped".into()))?;
                links.push(Some(c));
            }
        }
        let links: [Option<Session>; 3] = links
            .try_into()
            .map_err(|_| PirError::Invalid("three links".into()))?;
        let client = Client::from_links(links, Duration::from_secs(600))?;
        Ok(Deployment {
            servers,
            serving,
            client,
        })
    }

    fn stop(self) {
        drop(self.client);
        for s in &self.servers {
            s.shutdown_handle().shutdown();
        }
        for t in self.serving {
            let _ = t.join();
        }
    }
}

/// One offline instance over `mesh` (the servers' sessions): the whole time, the dealer's and
/// the holders' own (their receive time minus the dealer's), and the bytes S_2 sent each holder.
fn offline_one(
    servers: &[Server],
    mesh: &mut [Session],
) -> Result<(Duration, Duration, Duration, [u64; 2]), PirError> {
    let [m0, m1, m2] = mesh else {
        return Err(PirError::Invalid("three mesh sessions".into()));
    };
    let sent = |m: &Session| {
        [ServerId::S0, ServerId::S1].map(|h| m.stats().total().link(h.party()).bytes_sent)
    };
    let before = sent(m2);
    let start = Instant::now();
    let (d, h) = thread::scope(|sc| {
        let dealer_t = sc.spawn(|| {
            let t = Instant::now();
            servers[2].deal_one(m2).map(|_| t.elapsed())
        });
        let h0 = sc.spawn(|| {
            let t = Instant::now();
            servers[0].receive_one(m0).map(|_| t.elapsed())
        });
        let h1 = sc.spawn(|| {
            let t = Instant::now();
            servers[1].receive_one(m1).map(|_| t.elapsed())
        });
        let join = |h: thread::ScopedJoinHandle<'_, Result<Duration, PirError>>| {
            h.join()
                .unwrap_or_else(|_| Err(PirError::Invalid("offline thread panicked".into())))
        };
        let d = join(dealer_t);
        let a = join(h0);
        let b = join(h1);
        (d, a.and_then(|a| b.map(|b| a.max(b))))
    });
    let (d, h) = (d?, h?);
    let off = start.elapsed();
    let after = sent(m2);
    // The holders' receive time includes waiting for the dealer.
    Ok((
        off,
        d,
        h.saturating_sub(d),
        [after[0] - before[0], after[1] - before[1]],
    ))
}

/// Runs the benchmark.
pub fn run(config: BenchConfig) -> Result<BenchReport, PirError> {
    let n = config.domain_bits;
    if !(1..=crate::dpf::MAX_DOMAIN_BITS).contains(&n) || config.queries == 0 {
        return Err(PirError::Invalid(format!(
            "domain bits {n} or query count {} out of range",
            config.queries
        )));
    }
    let count = 1usize << n;
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed);
    let mut bytes = vec![0u8; count * config.record_size];
    rng.fill_bytes(&mut bytes);
    let db = Arc::new(Database::from_bytes(config.record_size, &bytes)?);
    drop(bytes);
    let mut deployment = Deployment::start(&db, config.shaping)?;
    let mut mesh = LocalMesh::new(3)
        .timeout(Duration::from_secs(600))
        .shaping(config.shaping)
        .build();
    let (mut offline, mut dealer, mut holder) = (Vec::new(), Vec::new(), Vec::new());
    let (mut online, mut client_ms) = (Vec::new(), Vec::new());
    let mut off_bytes = Vec::new();
    let mut on_sent = Vec::new();
    let mut on_recv = Vec::new();
    let mut verified = true;
    for q in 0..=config.queries {
        let (off, d, holder_only, bytes) = offline_one(&deployment.servers, &mut mesh)?;
        let i = rng.next_u64() % db.len();
        let out = deployment.client.query(i)?;
        verified &= out.fallback.is_none() && db.record(i).is_some_and(|r| r == out.value);
        if q == 0 {
            continue; // warm-up
        }
        offline.push(ms(off));
        dealer.push(ms(d));
        holder.push(ms(holder_only));
        online.push(ms(out.timings.total));
        client_ms.push(ms(out.timings.client_compute));
        off_bytes.push(bytes);
        on_sent.push(out.bytes.map(|b| b.sent));
        on_recv.push(out.bytes.map(|b| b.received));
    }
    deployment.stop();
    let last = |v: &Vec<[u64; 2]>| v.last().copied().unwrap_or_default();
    let last3 = |v: &Vec<[u64; 3]>| v.last().copied().unwrap_or_default();
    let offline_bytes = last(&off_bytes);
    let online_sent = last3(&on_sent);
    let online_received = last3(&on_recv);
    let (online_formula, offline_formula) = formula_bytes(n, config.record_size);
    // Message sizes depend only on (n, record size): the last query stands for all.
    debug_assert_eq!(
        offline_bytes[0] as usize,
        proto::offline_bytes(usize::from(n))
    );
    Ok(BenchReport {
        domain_bits: n,
        record_size: config.record_size,
        queries: config.queries,
        offline_ms: median(offline),
        dealer_ms: median(dealer),
        holder_ms: median(holder),
        online_ms: median(online),
        client_ms: median(client_ms),
        offline_bytes,
        online_sent,
        online_received,
        online_total: online_sent.iter().sum::<u64>() + online_received.iter().sum::<u64>(),
        offline_total: offline_bytes.iter().sum(),
        online_formula,
        offline_formula,
        verified,
    })
}
