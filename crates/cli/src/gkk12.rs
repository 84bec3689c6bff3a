//! `doram bench gkk12`: Gordon et al.'s secure two-party RAM computation on this host. Per
//! size: the secure load (by default the three-party load with a setup helper; with `--load
//! two-parties` the server and the client alone, `doram_gkk12::sortload`, the server holding
//! the array), then reads of random addresses and binary searches for random keys between the
//! server and the client, every result checked; times, bytes per party and the AND gates of
//! one access beside the paper's Table 2. The parties are threads of this process over the
//! chosen transport.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use doram_core::PartyId;
use doram_gkk12::driver::{AccessLabels, Client, Server};
use doram_gkk12::load::{self, ClientLoad, ServerLoad};
use doram_gkk12::search::{lower_bound, serve_search};
use doram_gkk12::sortload::{self, Holding};
use doram_gkk12::{OT_CHUNK, Params, bits::Circuits};
use doram_net::{Session, run_parties};
use doram_prim::prg::AesPrg;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use rand::RngCore;
use serde::Serialize;

use crate::bench::{Backend, sessions_n};
use crate::oram::value_name;
use crate::randomness::Randomness;
use crate::report::{peak_memory_bytes, print_json};

/// Arguments of `doram bench gkk12`.
#[derive(Debug, Args)]
pub struct BenchGkk12Args {
    /// Sizes: 2^N entries, a comma-separated list (a size whose estimated memory exceeds
    /// what the host has available is refused before anything runs).
    #[arg(long, value_delimiter = ',', default_value = "16",
          value_parser = clap::value_parser!(u32).range(1..=22))]
    pub log_n: Vec<u32>,
    /// Bits per entry (d); a binary search reads its key from the first 64.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(64..=4096))]
    pub payload_bits: u32,
    /// Reads of random addresses after the load.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub accesses: u32,
    /// Binary searches for random keys after the reads.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub searches: u32,
    /// Transport between the parties (threads of this process).
    #[arg(long, value_enum, default_value_t = Backend::Tls)]
    pub backend: Backend,
    /// Who loads the array.
    #[arg(long, value_enum, default_value_t = LoadBy::Helper)]
    pub load: LoadBy,
    #[command(flatten)]
    pub randomness: Randomness,
}

/// Who runs `doram bench gkk12`'s load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBy {
    /// Server, client and a setup helper that sees no data and must not collude with either
    /// (`doram_gkk12::load`): the fastest.
    Helper,
    /// The server and the client alone (`doram_gkk12::sortload`: an oblivious bin sort of
    /// every item's leaf, then the payloads gathered to their slots).
    TwoParties,
}

/// Table 2 of the paper: non-free gates per ORAM operation, d = 512, B = 2 log N.
const TABLE2_AND: [(u32, u64); 5] = [
    (16, 1_954_042),
    (17, 2_302_208),
    (18, 2_700_966),
    (19, 3_166_420),
    (20, 3_730_546),
];

/// Median, minimum and maximum of some times, in ms.
#[derive(Debug, Serialize)]
struct Times {
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    count: usize,
}

impl Times {
    fn of(mut xs: Vec<Duration>) -> Option<Times> {
        xs.sort();
        let ms = |d: &Duration| d.as_secs_f64() * 1e3;
        Some(Times {
            median_ms: ms(xs.get(xs.len() / 2)?),
            min_ms: ms(xs.first()?),
            max_ms: ms(xs.last()?),
            count: xs.len(),
        })
    }
}

/// One size's report.
#[derive(Debug, Serialize)]
struct SizeReport {
    log_n: u32,
    n: u64,
    payload_bits: u32,
    trees: usize,
    buckets: Vec<usize>,
    and_per_access: u64,
    xor_per_access: u64,
    /// The paper's Table 2 (non-free gates per operation), where it has the size.
    table2_and: Option<u64>,
    /// Who loaded the array.
    load_by: LoadBy,
    load_ms: f64,
    /// Bytes each of server, client and helper sent in the load (the helper 0 when the two
    /// parties load alone).
    load_bytes_sent: [u64; 3],
    access: Option<Times>,
    /// Per access: server → client, client → server.
    access_bytes: [f64; 2],
    search: Option<Times>,
    /// Per search: server → client, client → server.
    search_bytes: [f64; 2],
    reads_per_search: usize,
    peak_memory_bytes: Option<u64>,
    /// The estimate the size was checked against before it ran (bytes).
    memory_needed_bytes: u64,
    /// Every read and search result was checked against the array (a wrong one fails the
    /// command, so a report says `true`).
    verified: bool,
}

/// `doram bench gkk12`'s report.
#[derive(Debug, Serialize)]
struct Gkk12Report {
    schema: &'static str,
    benchmark: &'static str,
    parties_as: String,
    randomness: String,
    sizes: Vec<SizeReport>,
}

/// `doram bench gkk12`.
pub fn bench(a: &BenchGkk12Args, json: bool) -> Result<()> {
    let mut sizes = Vec::new();
    for &log_n in &a.log_n {
        let r = one_size(a, log_n).with_context(|| format!("at 2^{log_n}"))?;
        if !json {
            print_size(&r);
        }
        sizes.push(r);
    }
    if json {
        print_json(&Gkk12Report {
            schema: "doram-gkk12-bench/1",
            benchmark: "gkk12",
            parties_as: format!("threads over {}", value_name(a.backend)),
            randomness: a.randomness.label(),
            sizes,
        })?;
    }
    Ok(())
}

fn print_size(r: &SizeReport) {
    let t = |x: &Option<Times>| {
        x.as_ref().map_or("—".into(), |t| {
            format!("{:.1} ms (min {:.1})", t.median_ms, t.min_ms)
        })
    };
    println!(
        "2^{} × {} bits ({} trees, B {:?}): {} AND per access{}; load {:.1} s ({}); read {}, \
         {:.1} MB + {:.1} MB; search ({} reads) {}",
        r.log_n,
        r.payload_bits,
        r.trees,
        r.buckets,
        r.and_per_access,
        r.table2_and
            .map_or(String::new(), |x| format!(" (paper's Table 2: {x})")),
        r.load_ms / 1e3,
        match r.load_by {
            LoadBy::Helper => "with a helper",
            LoadBy::TwoParties => "two parties alone",
        },
        t(&r.access),
        r.access_bytes[0] / 1e6,
        r.access_bytes[1] / 1e6,
        r.reads_per_search,
        t(&r.search),
    );
}

/// The entry at address `v`: the key `v` in the first 64 bits, then `v` again.
fn entry(v: u64, words: usize) -> Vec<u64> {
    vec![v; words]
}

/// Memory besides the ORAM's state: both parties' circuits, the garbled tables on their way,
/// the process itself.
const MARGIN: u64 = 1 << 30;

/// What a run at `params` makes resident at its peak, in bytes, and what for: the load (its
/// three parties in one process) or the access phase (the placement levels and every bucket
/// `accesses` accesses write), whichever is larger, plus [`MARGIN`].
fn memory_needed(params: &Params, accesses: u64) -> (u64, String) {
    let m = load::memory(params);
    let access_phase = m.placement + accesses * m.per_access;
    if m.load_peak >= access_phase {
        let why = "during the load: the trees' placement levels and the load's buffers";
        (m.load_peak + MARGIN, why.into())
    } else {
        let why =
            format!("after {accesses} reads: the trees' placement levels and the buckets written");
        (access_phase + MARGIN, why)
    }
}

/// Memory the system says is available (`MemAvailable`), if it says.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn one_size(a: &BenchGkk12Args, log_n: u32) -> Result<SizeReport> {
    let params = Params::paper(1 << log_n, a.payload_bits as usize)?;
    // Only the placement levels and the buckets accesses write become resident (the trees'
    // other buckets are never allocated): refuse what cannot fit before anything runs.
    let reads = u64::from(a.accesses) + u64::from(a.searches) * (u64::from(log_n) + 1);
    let (need, when) = memory_needed(&params, reads);
    if let Some(have) = available_memory()
        && need > have
    {
        bail!(
            "2^{log_n} entries of {} bits need about {:.1} GB at their peak ({when}, and 1 GiB \
             for circuits); this host has {:.1} GB available",
            a.payload_bits,
            need as f64 / 1e9,
            have as f64 / 1e9
        );
    }
    let counts = Circuits::new(&params)?.per_access();
    let entropy = a.randomness.entropy();
    let words = (a.payload_bits as usize).div_ceil(64);
    let t = Instant::now();
    let (sl, cl, helper_bytes) = match a.load {
        LoadBy::Helper => {
            let (sl, cl, bytes) = secure_load(&params, a, words)?;
            (Start::Helper(sl), Start::Helper(cl), Some(bytes))
        }
        LoadBy::TwoParties => (Start::TwoParties, Start::TwoParties, None),
    };
    let helper_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut rng = AesPrg::new(entropy.party_seed(PartyId::P1, "bench-gkk12-workload"));
    let n = params.items();
    let addrs: Vec<u64> = (0..a.accesses).map(|_| rng.next_u64() % n).collect();
    let keys: Vec<u64> = (0..a.searches).map(|_| rng.next_u64() % (n + 1)).collect();
    let (ss, _dir) = sessions_n(a.backend, 2)?;
    let starts = Mutex::new((Some(sl), Some(cl)));
    let out = run_parties(ss, "bench-gkk12", |mut s| -> Result<PartyOut> {
        let me = s.me();
        let mut rng = AesPrg::new(entropy.party_seed(me, "bench-gkk12"));
        if me == PartyId::P0 {
            let sl = starts.lock().map_err(|_| anyhow::anyhow!("lock"))?.0.take();
            server_side(
                &mut s,
                (sl.context("no state")?, &params, words),
                &mut rng,
                addrs.len(),
                keys.len(),
            )
        } else {
            let cl = starts.lock().map_err(|_| anyhow::anyhow!("lock"))?.1.take();
            client_side(
                &mut s,
                (cl.context("no state")?, &params),
                &mut rng,
                &addrs,
                &keys,
            )
        }
    });
    let mut outs = Vec::new();
    for r in out {
        outs.push(r.map_err(|_| anyhow::anyhow!("a party panicked"))??);
    }
    let [server, client] =
        <[PartyOut; 2]>::try_from(outs).map_err(|_| anyhow::anyhow!("two parties expected"))?;
    let per = |x: u64, k: usize| if k == 0 { 0.0 } else { x as f64 / k as f64 };
    let (load_ms, load_bytes_sent) = match helper_bytes {
        Some(bytes) => (helper_ms, bytes),
        None => (
            server.load_ms.max(client.load_ms),
            [server.load_bytes, client.load_bytes, 0],
        ),
    };
    Ok(SizeReport {
        log_n,
        n,
        payload_bits: a.payload_bits,
        trees: params.trees(),
        buckets: (0..params.trees()).map(|i| params.tree(i).bucket).collect(),
        and_per_access: counts.and as u64,
        xor_per_access: counts.xor as u64,
        table2_and: (a.payload_bits == 512)
            .then(|| TABLE2_AND.iter().find(|(l, _)| *l == log_n).map(|x| x.1))
            .flatten(),
        load_by: a.load,
        load_ms,
        load_bytes_sent,
        access: Times::of(server.access_times),
        access_bytes: [
            per(server.access_bytes, addrs.len()),
            per(client.access_bytes, addrs.len()),
        ],
        search: Times::of(server.search_times),
        search_bytes: [
            per(server.search_bytes, keys.len()),
            per(client.search_bytes, keys.len()),
        ],
        reads_per_search: doram_gkk12::search::steps(n),
        peak_memory_bytes: peak_memory_bytes(),
        memory_needed_bytes: need,
        verified: true,
    })
}

/// The three-party load over `a.backend`: the server's and client's parts and each party's
/// bytes sent.
fn secure_load(
    params: &Params,
    a: &BenchGkk12Args,
    words: usize,
) -> Result<(ServerLoad, ClientLoad, [u64; 3])> {
    let (ss, _dir) = sessions_n(a.backend, 3)?;
    let entropy = a.randomness.entropy();
    Ok(load::run_threads(
        ss,
        params,
        |v| entry(v, words),
        |p| AesPrg::new(entropy.party_seed(p, "bench-gkk12-load")),
    )?)
}

/// How a party's ORAM starts: from its part of the helper's load, or loaded by the two
/// parties alone in the run.
enum Start<L> {
    Helper(L),
    TwoParties,
}

/// One party's times and bytes.
#[derive(Default)]
struct PartyOut {
    /// The two parties' own load, when they ran it: its time at this party and its bytes.
    load_ms: f64,
    load_bytes: u64,
    access_times: Vec<Duration>,
    access_bytes: u64,
    search_times: Vec<Duration>,
    search_bytes: u64,
}

fn sent(s: &Session) -> u64 {
    s.stats().total().sum().bytes_sent
}

fn server_side(
    s: &mut Session,
    (start, params, words): (Start<ServerLoad>, &Params, usize),
    rng: &mut AesPrg,
    accesses: usize,
    searches: usize,
) -> Result<PartyOut> {
    let mut out = PartyOut::default();
    let delta = random_delta(rng);
    let mut ot = softspoken_sender_setup(s, OT_CHUNK, delta, rng)?;
    let state = match start {
        Start::Helper(sl) => sl.finish(s, &mut ot, rng)?,
        Start::TwoParties => {
            let (t, before) = (Instant::now(), sent(s));
            // The server holds the array, entry v at v.
            let db = params.payload_bits().div_ceil(8);
            let data: Vec<u8> = (0..params.items())
                .flat_map(|v| {
                    entry(v, words)
                        .into_iter()
                        .flat_map(u64::to_le_bytes)
                        .take(db)
                })
                .collect();
            let mut send = softspoken_sender_setup(s, OT_CHUNK, random_delta(rng), rng)?;
            let mut recv = softspoken_receiver_setup(s, OT_CHUNK, rng)?;
            let state = sortload::load_server(
                s,
                params,
                &data,
                Holding::Server,
                &mut ot,
                &mut send,
                &mut recv,
                rng,
            )?;
            (out.load_ms, out.load_bytes) = (t.elapsed().as_secs_f64() * 1e3, sent(s) - before);
            state
        }
    };
    let mut server = Server::new(state, ot, AesPrg::from_rng(rng))?;
    let (abits, d) = (
        server.params().address_bits(),
        server.params().payload_bits(),
    );
    let zero = server.public_bits(&[false])[0];
    let before = sent(s);
    for _ in 0..accesses {
        let t = Instant::now();
        let addr = server.peer_input(s, abits)?;
        let res = server.access(s, &AccessLabels::read(addr, zero, d))?;
        server.reveal_to_client(s, &res)?;
        out.access_times.push(t.elapsed());
    }
    out.access_bytes = sent(s) - before;
    let before = sent(s);
    for _ in 0..searches {
        let t = Instant::now();
        serve_search(&mut server, s)?;
        out.search_times.push(t.elapsed());
    }
    out.search_bytes = sent(s) - before;
    Ok(out)
}

fn client_side(
    s: &mut Session,
    (start, params): (Start<ClientLoad>, &Params),
    rng: &mut AesPrg,
    addrs: &[u64],
    keys: &[u64],
) -> Result<PartyOut> {
    let mut out = PartyOut::default();
    let mut ot = softspoken_receiver_setup(s, OT_CHUNK, rng)?;
    let state = match start {
        Start::Helper(cl) => cl.finish(s, &mut ot)?,
        Start::TwoParties => {
            let (t, before) = (Instant::now(), sent(s));
            let mut recv = softspoken_receiver_setup(s, OT_CHUNK, rng)?;
            let mut send = softspoken_sender_setup(s, OT_CHUNK, random_delta(rng), rng)?;
            let state = sortload::load_client(
                s,
                params,
                &[],
                Holding::Server,
                &mut ot,
                &mut send,
                &mut recv,
                rng,
            )?;
            (out.load_ms, out.load_bytes) = (t.elapsed().as_secs_f64() * 1e3, sent(s) - before);
            state
        }
    };
    let mut client = Client::new(state, ot, AesPrg::from_rng(rng))?;
    let (abits, d) = (
        client.params().address_bits(),
        client.params().payload_bits(),
    );
    let zero = client.zero();
    let words = d.div_ceil(64);
    let before = sent(s);
    for &v in addrs {
        let bits: Vec<bool> = (0..abits).map(|k| (v >> k) & 1 == 1).collect();
        let addr = client.input(s, &bits)?;
        let res = client.access(s, &AccessLabels::read(addr, zero, d))?;
        let got = client.reveal(s, &res)?;
        let want = entry(v, words);
        let ok = got
            .iter()
            .enumerate()
            .all(|(k, &b)| b == ((want[k / 64] >> (k % 64)) & 1 == 1));
        if !ok {
            bail!("read of address {v} returned the wrong entry");
        }
    }
    out.access_bytes = sent(s) - before;
    let before = sent(s);
    for &k in keys {
        let got = lower_bound(&mut client, s, k)?;
        if got != k {
            bail!("the search for {k} returned {got}");
        }
    }
    out.search_bytes = sent(s) - before;
    Ok(out)
}
