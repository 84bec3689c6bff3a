//! Throughput of the two-party engine, both parties in this process: base OTs; OTs per second
//! and bytes per OT of IKNP and of SoftSpoken for several `k`; half-gates AND gates per
//! second; AND and F_p multiplication triples per second. Prints the median of several runs
//! and the load average before and after.
//!
//! `cargo run --release -p doram-twopc --example twopc_throughput [runs]`
//!
//! Randomness comes from public seeds (`insecure_rng_for_tests`): the figures are for speed
//! only.

use std::time::{Duration, Instant};

use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::gc::{Circuit, Evaluator, Garbler, random_delta};
use doram_twopc::{
    ChunkBits, CotExtReceiver, CotExtSender, driver, insecure_rng_for_tests, triples,
};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Runs `f` on both parties of a fresh mesh; the time is the slower party's, measured by each
/// party from after its setup (`f` returns its own measured duration).
fn both(f: impl Fn(Session) -> Duration + Sync) -> Duration {
    run_parties(LocalMesh::new(2).build(), "bench", f)
        .into_iter()
        .map(|r| r.expect("party thread"))
        .max()
        .unwrap_or_default()
}

/// An OT extension to measure.
#[derive(Clone, Copy)]
enum Ext {
    Iknp,
    SoftSpoken(usize),
}

impl std::fmt::Display for Ext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ext::Iknp => write!(f, "IKNP"),
            Ext::SoftSpoken(k) => write!(f, "SoftSpoken k={k}"),
        }
    }
}

/// The SoftSpoken chunk sizes measured.
const SOFTSPOKEN_KS: [usize; 6] = [1, 2, 3, 4, 5, 8];

/// `m` OTs of `kind` on the sender's side, timed: (wall, CPU) from after setup.
fn send_ots(s: &mut Session, ot: &mut impl CotExtSender, kind: &str, m: usize) -> Timing {
    s.reset_stats();
    let cpu = thread_cpu();
    let t = Instant::now();
    if kind == "random" {
        std::hint::black_box(driver::rot_send(s, ot, m).expect("extend"));
    } else {
        std::hint::black_box(driver::cot_send(s, ot, m).expect("extend"));
    }
    (t.elapsed(), thread_cpu() - cpu)
}

/// `m` OTs of `kind` on the receiver's side, timed: (wall, CPU) from after setup.
fn receive_ots(s: &mut Session, ot: &mut impl CotExtReceiver, kind: &str, m: usize) -> Timing {
    let mut rng = insecure_rng_for_tests(5);
    let choices = vec![true; m];
    s.reset_stats();
    let cpu = thread_cpu();
    let t = Instant::now();
    if kind == "random" {
        std::hint::black_box(driver::rot_receive(s, ot, m, &mut rng).expect("extend"));
    } else {
        std::hint::black_box(driver::cot_receive(s, ot, &choices).expect("extend"));
    }
    (t.elapsed(), thread_cpu() - cpu)
}

type Timing = (Duration, Duration);

/// Times `m` OTs of `kind` ("correlated" or "random") after setup: wall time (the slower
/// party's), the larger of the two parties' CPU times, and the payload bytes both parties
/// exchanged for them (after setup).
fn ot_run(ext: Ext, kind: &str, m: usize) -> (Duration, Duration, u64) {
    let out = run_parties(LocalMesh::new(2).build(), "bench", |mut s| {
        let mut rng = insecure_rng_for_tests(s.me().index() as u64);
        let (wall, cpu) = match (s.me().index(), ext) {
            (0, Ext::Iknp) => {
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).expect("setup");
                send_ots(&mut s, &mut ot, kind, m)
            }
            (0, Ext::SoftSpoken(k)) => {
                let (k, delta) = (ChunkBits::new(k).expect("k"), random_delta(&mut rng));
                let mut ot =
                    driver::softspoken_sender_setup(&mut s, k, delta, &mut rng).expect("setup");
                send_ots(&mut s, &mut ot, kind, m)
            }
            (_, Ext::Iknp) => {
                let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                receive_ots(&mut s, &mut ot, kind, m)
            }
            (_, Ext::SoftSpoken(k)) => {
                let k = ChunkBits::new(k).expect("k");
                let mut ot = driver::softspoken_receiver_setup(&mut s, k, &mut rng).expect("setup");
                receive_ots(&mut s, &mut ot, kind, m)
            }
        };
        let l = s.stats().total().sum();
        (wall, cpu, l.bytes_sent + l.bytes_received)
    });
    let out: Vec<(Duration, Duration, u64)> =
        out.into_iter().map(|r| r.expect("party thread")).collect();
    // The slower party's times; each party counts both directions, so take one party's bytes.
    (out[0].0.max(out[1].0), out[0].1.max(out[1].1), out[0].2)
}

/// This thread's time on a CPU, from `/proc/thread-self/schedstat` (nanoseconds); zero where
/// that file does not exist.
fn thread_cpu() -> Duration {
    let ns = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    Duration::from_nanos(ns)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let m = 1 << 22;
    let ands = 1 << 22;
    println!("load average at start: {}", load_average());

    let base: Vec<Duration> = (0..runs)
        .map(|_| {
            both(|mut s| {
                let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                let t = Instant::now();
                if s.me().index() == 0 {
                    driver::base_ot_send(&mut s, 128, &mut rng).map(|_| ())
                } else {
                    driver::base_ot_receive(&mut s, &[true; 128], &mut rng).map(|_| ())
                }
                .expect("base OT");
                t.elapsed()
            })
        })
        .collect();
    let base = median(base);
    println!(
        "base OT: 128 OTs in {:.2} ms (median of {runs})",
        base.as_secs_f64() * 1e3
    );

    let mut exts = vec![Ext::Iknp];
    exts.extend(SOFTSPOKEN_KS.iter().map(|&k| Ext::SoftSpoken(k)));
    for ext in exts {
        for kind in ["correlated", "random"] {
            let runs_out: Vec<(Duration, Duration, u64)> =
                (0..runs).map(|_| ot_run(ext, kind, m)).collect();
            let bytes = runs_out[0].2;
            let cpu = median(runs_out.iter().map(|r| r.1).collect());
            let t = median(runs_out.into_iter().map(|r| r.0).collect());
            println!(
                "{ext} {kind} OT: {m} OTs in {:.1} ms = {:.2} M OTs/s ({:.2} M OTs per CPU-second \
                 of the busier party), {:.3} bytes/OT (both directions)",
                t.as_secs_f64() * 1e3,
                m as f64 / t.as_secs_f64() / 1e6,
                m as f64 / cpu.as_secs_f64().max(1e-3) / 1e6,
                bytes as f64 / m as f64,
            );
        }
    }

    let c = Circuit::and_chain(ands).expect("a chain of AND gates");
    let mut rng = insecure_rng_for_tests(9);
    let delta = random_delta(&mut rng);
    let mut tables = Vec::with_capacity(32 * ands);
    let garble_ts: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut g = Garbler::new(delta, c.wires()).expect("delta");
            tables.clear();
            let t = Instant::now();
            g.garble_batch(c.gates(), &mut tables).expect("garble");
            t.elapsed()
        })
        .collect();
    let eval_ts: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut e = Evaluator::new(c.wires());
            let mut pos = 0;
            let t = Instant::now();
            let n = e.eval_batch(c.gates(), &tables, &mut pos).expect("eval");
            assert_eq!(n, c.gates().len(), "a table for every AND gate");
            t.elapsed()
        })
        .collect();
    for (what, ts) in [("garble", garble_ts), ("evaluate", eval_ts)] {
        let t = median(ts);
        println!(
            "half-gates {what} (one thread, no I/O): {:.2} M AND gates/s",
            ands as f64 / t.as_secs_f64() / 1e6
        );
    }

    let ts: Vec<Duration> = (0..runs)
        .map(|_| {
            both(|mut s| {
                let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                if s.me().index() == 0 {
                    let delta = random_delta(&mut rng);
                    let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).expect("setup");
                    let mut g = Garbler::new(delta, c.wires()).expect("delta");
                    let t = Instant::now();
                    driver::garble(&mut s, &mut ot, &mut g, &c, &[true], &mut rng).expect("gc");
                    t.elapsed()
                } else {
                    let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                    let mut e = Evaluator::new(c.wires());
                    let t = Instant::now();
                    driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true]).expect("gc");
                    t.elapsed()
                }
            })
        })
        .collect();
    let t = median(ts);
    println!(
        "2PC over the in-process mesh: {ands} AND gates in {:.1} ms = {:.2} M AND gates/s, 32 bytes/AND",
        t.as_secs_f64() * 1e3,
        ands as f64 / t.as_secs_f64() / 1e6
    );
    for (kind, count) in [("AND", 1usize << 22), ("F_p", 1 << 13)] {
        let out: Vec<(Duration, u64)> = (0..runs).map(|_| triples_run(kind, count)).collect();
        let bytes = out[0].1;
        let t = median(out.into_iter().map(|r| r.0).collect());
        println!(
            "{kind} triples (SoftSpoken k=4, both directions): {count} in {:.1} ms = {:.3} M/s, \
             {:.1} bytes per triple (both parties)",
            t.as_secs_f64() * 1e3,
            count as f64 / t.as_secs_f64() / 1e6,
            bytes as f64 / count as f64,
        );
    }
    println!("load average at end: {}", load_average());
}

/// `count` triples of `kind` ("AND" or "F_p") after both directions' setup: the slower
/// party's time and the bytes both sent.
fn triples_run(kind: &str, count: usize) -> (Duration, u64) {
    let out = run_parties(LocalMesh::new(2).build(), "triples", |mut s| {
        let mut rng = insecure_rng_for_tests(7 + s.me().index() as u64);
        let (mut snd, mut rcv) =
            driver::softspoken_both_setup(&mut s, ChunkBits::default(), &mut rng).expect("setup");
        let before = s.stats().total().sum().bytes_sent;
        let t = Instant::now();
        if kind == "AND" {
            triples::bit_triples(&mut s, &mut snd, &mut rcv, count, &mut rng).map(drop)
        } else {
            triples::fp_triples(&mut s, &mut snd, &mut rcv, count, &mut rng).map(drop)
        }
        .expect("triples");
        (t.elapsed(), s.stats().total().sum().bytes_sent - before)
    });
    let out: Vec<(Duration, u64)> = out.into_iter().map(|r| r.expect("party")).collect();
    (
        out.iter().map(|r| r.0).max().unwrap_or_default(),
        out.iter().map(|r| r.1).sum(),
    )
}
