//! `doram bench fjkw15`: the FJKW15 access itself on XOR-shared records of d bytes, the setting
//! of the authors' Java implementation (`oram3pc`) and of the anchors. The three
//! parties are threads of this process over the chosen transport. The forest is dealt
//! **insecurely**: D and E each build their share from the public synthetic records (as
//! `--insecure-dealt-load` does after opening the memory to them); the secure load is n
//! accesses and is not what is measured here. Then reads of random addresses, each
//! pre-computed just before it runs, with its pre-computation timed and counted apart (session
//! phases `pre` and `online`); every record read is checked against the records.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use doram_core::PartyId;
use doram_fjkw15::Params;
use doram_fjkw15::driver::{
    self, Party, Pre, access_c_with, access_d_with, access_e_with, precompute,
};
use doram_fjkw15::party::{Role, Roles};
use doram_fjkw15::plain::words_for;
use doram_net::{Session, run_parties};
use doram_prim::prg::AesPrg;
use rand::RngCore;
use serde::Serialize;

use crate::bench::{Backend, sessions_n};
use crate::oram::value_name;
use crate::randomness::Randomness;
use crate::report::{peak_memory_bytes, print_json};

/// Arguments of `doram bench fjkw15`.
#[derive(Debug, Args)]
pub struct BenchFjkw15Args {
    /// Sizes: 2^N records, a comma-separated list (2^24 × 4 bytes needs about 9 GB: D's and
    /// E's forest shares in this one process).
    #[arg(long, value_delimiter = ',', default_value = "12,20",
          value_parser = clap::value_parser!(u32).range(3..=26))]
    pub log_n: Vec<u32>,
    /// Bytes per record, a comma-separated list.
    #[arg(long, value_delimiter = ',', default_value = "4",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub record_bytes: Vec<u32>,
    /// Bucket size w (32: the paper's fast runs and the anchors).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(2..=256))]
    pub w: u32,
    /// τ, address bits per recursion level (a divisor of N in 3..=6 by default: the one with
    /// the shortest paths).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub tau: Option<u32>,
    /// Reads of random addresses per point.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub accesses: u32,
    /// Transport between the parties (threads of this process).
    #[arg(long, value_enum, default_value_t = Backend::Tls)]
    pub backend: Backend,
    #[command(flatten)]
    pub randomness: Randomness,
}

/// The anchors: the Java implementation at w = 32 with 4-byte records, on this
/// machine class over loopback with Nagle off (ms, kB per access).
const ANCHORS: [(u32, f64, f64); 3] = [(12, 68.0, 129.0), (20, 153.0, 370.0), (24, 186.0, 493.0)];

/// What one party measured.
struct PartyOut {
    /// Per access: (pre-computation, online).
    times: Vec<(Duration, Duration)>,
    /// Payload bytes sent: pre-computation, online.
    sent: [u64; 2],
    /// Messages sent online.
    online_msgs: u64,
    /// Online rounds.
    online_rounds: u64,
    /// C's or E's shares of the records read (D: none).
    records: Vec<Vec<u64>>,
}

/// One point of the report.
#[derive(Debug, Serialize)]
struct PointReport {
    log_n: u32,
    record_bytes: u32,
    w: usize,
    tau: u32,
    accesses: u32,
    /// Per read, the slowest party; median over the reads.
    online_ms: f64,
    pre_ms: f64,
    /// Payload bytes per read, all parties, and per party (C, D, E).
    online_bytes: f64,
    online_bytes_by_party: [f64; 3],
    pre_bytes: f64,
    online_msgs: f64,
    online_rounds: f64,
    /// The anchors at this point, if any: (ms, kB).
    anchor_ms: Option<f64>,
    anchor_kb: Option<f64>,
    /// From generating the records to the end of the deal (setup included), the slowest
    /// party, ms.
    deal_ms: f64,
    peak_memory_bytes: Option<u64>,
    verified: bool,
}

#[derive(Serialize)]
struct Report {
    schema: &'static str,
    benchmark: &'static str,
    parties_as: String,
    randomness: String,
    load: &'static str,
    points: Vec<PointReport>,
}

/// Runs `doram bench fjkw15`.
///
/// # Errors
/// Unsupported parameters, a transport or protocol failure, or a record read wrong.
pub fn bench(a: &BenchFjkw15Args, json: bool) -> Result<()> {
    let mut points = Vec::new();
    for &log_n in &a.log_n {
        for &d in &a.record_bytes {
            let r = one_point(a, log_n, d).with_context(|| format!("at 2^{log_n}, {d} B"))?;
            if !json {
                print_point(&r);
            }
            points.push(r);
        }
    }
    if json {
        print_json(&Report {
            schema: "doram-fjkw15-bench/1",
            benchmark: "fjkw15",
            parties_as: format!("threads over {}", value_name(a.backend)),
            randomness: a.randomness.label(),
            load: "insecure: D and E build the forest from the public records",
            points,
        })?;
    }
    Ok(())
}

fn print_point(r: &PointReport) {
    let anchor = match (r.anchor_ms, r.anchor_kb) {
        (Some(ms), Some(kb)) => format!(
            "; anchors {ms:.0} ms, {kb:.0} kB: ×{:.3} time, ×{:.2} bytes",
            r.online_ms / ms,
            r.online_bytes / 1e3 / kb
        ),
        _ => String::new(),
    };
    println!(
        "2^{} × {} B (w {}, τ {}): online {:.2} ms, {:.1} kB (C {:.1}, D {:.1}, E {:.1}), \
         {:.1} rounds; pre-computation {:.2} ms, {:.1} kB{anchor}",
        r.log_n,
        r.record_bytes,
        r.w,
        r.tau,
        r.online_ms,
        r.online_bytes / 1e3,
        r.online_bytes_by_party[0] / 1e3,
        r.online_bytes_by_party[1] / 1e3,
        r.online_bytes_by_party[2] / 1e3,
        r.online_rounds,
        r.pre_ms,
        r.pre_bytes / 1e3,
    );
}

/// The public synthetic record of item `n`: `bits` bits in words.
fn record(n: u64, bits: usize) -> Vec<u64> {
    (0..words_for(bits))
        .map(|k| {
            let v = (n ^ (k as u64).rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ n;
            let b = (bits - 64 * k).min(64);
            v & (u64::MAX >> (64 - b))
        })
        .collect()
}

fn one_point(a: &BenchFjkw15Args, log_n: u32, d: u32) -> Result<PointReport> {
    let bits = 8 * d as usize;
    let params = match a.tau {
        Some(t) => Params::new(log_n, t, a.w as usize, bits)?,
        None => Params::smallest_paths(log_n, a.w as usize, bits)?,
    };
    let n = 1u64 << log_n;
    let t = Instant::now();
    let memory: Vec<Vec<u64>> = (0..n).map(|i| record(i, bits)).collect();
    let entropy = a.randomness.entropy();
    let mut rng = AesPrg::new(entropy.party_seed(PartyId::P0, "bench-fjkw15-workload"));
    // Addresses, and D's share of each (E's is the XOR): public to the bench, not to C.
    let addrs: Vec<(u64, u64)> = (0..a.accesses)
        .map(|_| (rng.next_u64() % n, rng.next_u64() % n))
        .collect();
    let (ss, _dir) = sessions_n(a.backend, 3)?;
    let deal_start = t;
    let out = run_parties(
        ss,
        "bench-fjkw15",
        |mut s| -> Result<(PartyOut, Duration)> {
            party_side(&mut s, &params, &memory, &addrs, &a.randomness, deal_start)
        },
    );
    let mut outs = Vec::new();
    for r in out {
        outs.push(r.map_err(|_| anyhow::anyhow!("a party panicked"))??);
    }
    let deal_ms = outs
        .iter()
        .map(|o| o.1.as_secs_f64() * 1e3)
        .fold(0.0, f64::max);
    let outs: Vec<PartyOut> = outs.into_iter().map(|o| o.0).collect();
    let [c, dd, e] = <[PartyOut; 3]>::try_from(outs).map_err(|_| anyhow::anyhow!("3 parties"))?;
    for (k, &(addr, _)) in addrs.iter().enumerate() {
        let got: Vec<u64> = c.records[k]
            .iter()
            .zip(&e.records[k])
            .map(|(x, y)| x ^ y)
            .collect();
        if got != memory[addr as usize] {
            bail!("read {k} of address {addr} returned a wrong record");
        }
    }
    let parties = [&c, &dd, &e];
    let median = |pick: fn(&(Duration, Duration)) -> Duration| {
        let mut v: Vec<Duration> = (0..addrs.len())
            .map(|k| {
                parties
                    .iter()
                    .map(|p| pick(&p.times[k]))
                    .max()
                    .unwrap_or_default()
            })
            .collect();
        v.sort();
        v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let k = addrs.len() as f64;
    let by_party = parties.map(|p| p.sent[1] as f64 / k);
    let anchor = (a.w == 32 && d == 4)
        .then(|| ANCHORS.iter().find(|x| x.0 == log_n))
        .flatten();
    Ok(PointReport {
        log_n,
        record_bytes: d,
        w: params.w(),
        tau: params.tau(),
        accesses: a.accesses,
        online_ms: median(|t| t.1),
        pre_ms: median(|t| t.0),
        online_bytes: by_party.iter().sum(),
        online_bytes_by_party: by_party,
        pre_bytes: parties.iter().map(|p| p.sent[0] as f64).sum::<f64>() / k,
        online_msgs: parties.iter().map(|p| p.online_msgs as f64).sum::<f64>() / k,
        online_rounds: parties.iter().map(|p| p.online_rounds).max().unwrap_or(0) as f64 / k,
        anchor_ms: anchor.map(|x| x.1),
        anchor_kb: anchor.map(|x| x.2),
        deal_ms,
        peak_memory_bytes: peak_memory_bytes(),
        verified: true,
    })
}

/// One party: setup, its share of the dealt forest (D, E), then the reads.
fn party_side(
    s: &mut Session,
    params: &Params,
    memory: &[Vec<u64>],
    addrs: &[(u64, u64)],
    randomness: &Randomness,
    deal_start: Instant,
) -> Result<(PartyOut, Duration)> {
    let seed = randomness.entropy().party_seed(s.me(), "bench-fjkw15");
    let mut party = driver::setup(s, Roles::default(), seed)?;
    let mut forest = match &mut party {
        Party::C(_) => None,
        Party::D(d) => Some(d.insecure_dealt_share(*params, memory)?),
        Party::E(e) => Some(e.insecure_dealt_share(*params, memory)?),
    };
    // Building a share is silent for long at 2^24 (about 30 s): D says when it is done, and
    // C and E wait for that with a timeout that allows for it (20 µs per record).
    let d = Roles::default().party(Role::D);
    if s.me() == d {
        for peer in [Role::C, Role::E] {
            s.send_bytes(Roles::default().party(peer), &[])?;
        }
    } else {
        let timeout = s.timeout();
        let allowance = Duration::from_micros(20 * memory.len() as u64);
        s.set_timeout(timeout + allowance);
        let done = s.recv_bytes(d);
        s.set_timeout(timeout);
        if !done?.is_empty() {
            bail!("D's end-of-deal message is not empty");
        }
    }
    let dealt = deal_start.elapsed();
    s.reset_stats();
    let (mut times, mut records) = (Vec::new(), Vec::new());
    for &(addr, n_d) in addrs {
        s.set_phase("pre");
        let t = Instant::now();
        let pre = precompute(s, &mut party, params)?;
        let t_pre = t.elapsed();
        s.set_phase("online");
        let t = Instant::now();
        let record = match (&mut party, pre, forest.as_mut()) {
            (Party::C(c), Pre::C(pre), _) => access_c_with(s, c, params, false, pre)?,
            (Party::D(d), Pre::D(pre), Some(f)) => {
                access_d_with(s, d, f, (n_d, None), pre)?;
                Vec::new()
            }
            (Party::E(e), Pre::E(pre), Some(f)) => {
                access_e_with(s, e, f, (addr ^ n_d, None), (pre, false))?
            }
            _ => bail!("pre-computation of another role"),
        };
        times.push((t_pre, t.elapsed()));
        records.push(record);
    }
    let phase = |name: &str| s.stats().phase(name).map(|p| p.sum());
    let (pre, online) = (phase("pre"), phase("online"));
    let online_rounds = s.stats().phase("online").map_or(0, |p| p.rounds);
    Ok((
        PartyOut {
            times,
            sent: [
                pre.map_or(0, |p| p.bytes_sent),
                online.as_ref().map_or(0, |p| p.bytes_sent),
            ],
            online_msgs: online.map_or(0, |p| p.msgs_sent),
            online_rounds,
            records,
        },
        dealt,
    ))
}
