//! Cost of generating BGI DPF keys by the two key holders (`doram_twopc::dpf_gen`), both
//! parties in this process on an in-memory mesh, one thread each.
//!
//! `cargo run --release -p doram-twopc --example dpf_gen -- LOG_N KEYS [RUNS]`
//!
//! Per run, after the set-up (base OTs and SoftSpoken in both directions): first the `KEYS`
//! Beaver triples the output correction words take (`Arith2::preprocess`, phase `triples`),
//! then the keys themselves (`gen_many`, phase `dpf_gen`), each timed as the slower party's
//! wall time. Prints the median of the runs for both, per party the payload bytes and
//! messages it sent and the rounds (the session's Lamport count) of each phase — the same in
//! every run — and, for scale, one full-domain evaluation of a generated key. The load
//! average before and after shows whether the machine was otherwise busy.
//!
//! Randomness comes from public seeds (`insecure_rng_for_tests`): the figures are for cost
//! only.

use std::time::{Duration, Instant};

use doram_dpf::{Bgi, SinglePointDpf};
use doram_field::Fp;
use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::arith::Arith2;
use doram_twopc::dpf_gen::{PointShare, gen_many};
use doram_twopc::insecure_rng_for_tests;

/// What one party measured in one run.
struct PartyRun {
    triples: Duration,
    keygen: Duration,
    eval: Duration,
    comm: [doram_net::Comm; 2],
}

fn one_run(log_n: u32, keys: usize, seed: u64) -> Vec<PartyRun> {
    let n = 1usize << log_n;
    run_parties(LocalMesh::new(2).build(), "dpf_gen", |mut s: Session| {
        let me = s.me().index() as u64;
        let mut rng = insecure_rng_for_tests(seed * 2 + me);
        let mut engine = Arith2::setup(&mut s, &mut rng).expect("setup");
        let points: Vec<PointShare> = (0..keys)
            .map(|j| {
                let alpha = (j * 7919 + seed as usize * 104_729) % n;
                let beta = engine.constant(Fp::from_u64(j as u64 + 1));
                PointShare::from_xor_share(alpha, n, beta)
            })
            .collect();
        s.reset_stats();
        s.set_phase("triples");
        let t = Instant::now();
        engine.preprocess(&mut s, keys).expect("triples");
        let triples = t.elapsed();
        s.set_phase("dpf_gen");
        let t = Instant::now();
        let out = gen_many(&mut s, &mut engine, &points, n, &mut rng).expect("keys");
        let keygen = t.elapsed();
        let t = Instant::now();
        std::hint::black_box(Bgi::eval_all(&out[0]));
        let eval = t.elapsed();
        let stats = s.stats();
        PartyRun {
            triples,
            keygen,
            eval,
            comm: [stats.comm(["triples"]), stats.comm(["dpf_gen"])],
        }
    })
    .into_iter()
    .map(|r| r.expect("party thread"))
    .collect()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let log_n = arg(1, 16).min(30) as u32;
    let keys = arg(2, 1).max(1);
    let runs = arg(3, 5).max(1);
    println!("load average at start: {}", load_average());
    let mut triples = Vec::with_capacity(runs);
    let mut keygen = Vec::with_capacity(runs);
    let mut evals = Vec::with_capacity(runs);
    let mut last = Vec::new();
    for r in 0..runs {
        let parties = one_run(log_n, keys, r as u64);
        let slower = |f: fn(&PartyRun) -> Duration| parties.iter().map(f).max().unwrap_or_default();
        triples.push(slower(|p| p.triples));
        keygen.push(slower(|p| p.keygen));
        evals.push(slower(|p| p.eval));
        last = parties;
    }
    let (tri, gen_t, ev) = (median(triples), median(keygen), median(evals));
    println!(
        "n = 2^{log_n}, {keys} key(s), median of {runs} runs: keys {:.1} ms ({:.1} ms per key), \
         triples {:.1} ms; one full-domain eval {:.1} ms",
        ms(gen_t),
        ms(gen_t) / keys as f64,
        ms(tri),
        ms(ev),
    );
    for (i, p) in last.iter().enumerate() {
        for (phase, c) in ["dpf_gen", "triples"].iter().zip([p.comm[1], p.comm[0]]) {
            println!(
                "  P{i} {phase}: sent {} bytes ({:.1} per key) in {} messages; {} rounds",
                c.bytes,
                c.bytes as f64 / keys as f64,
                c.messages,
                c.rounds
            );
        }
    }
    println!("load average at end: {}", load_average());
}
