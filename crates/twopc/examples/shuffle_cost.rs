//! Cost of one two-party shuffle of additive shares (`doram_twopc::shuffle`), both parties in
//! this process on an in-memory mesh: wall time (the slower party's, from after the OT
//! extension set-up), and per party the payload bytes and messages it sent and the rounds the
//! shuffle took (the session's Lamport count). Prints the median time of several runs (bytes
//! and messages are the same in every run) and the load average before and after.
//!
//! `cargo run --release -p doram-twopc --example shuffle_cost [runs]`
//!
//! Randomness comes from public seeds (`insecure_rng_for_tests`): the figures are for cost
//! only.

use std::time::{Duration, Instant};

use doram_field::Fp;
use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::shuffle::{Perm, shuffle_shares};
use doram_twopc::{ChunkBits, driver, insecure_rng_for_tests};

/// What one party measured in one run.
struct PartyRun {
    wall: Duration,
    bytes: u64,
    messages: u64,
    rounds: u64,
}

fn one_run(n: usize, width: usize, seed: u64) -> Vec<PartyRun> {
    run_parties(LocalMesh::new(2).build(), "shuffle", |mut s: Session| {
        let me = s.me().index() as u64;
        let mut rng = insecure_rng_for_tests(seed * 2 + me);
        let (mut snd, mut rcv) =
            driver::softspoken_both_setup(&mut s, ChunkBits::default(), &mut rng).expect("setup");
        let perm = Perm::random(n, &mut rng);
        let shares: Vec<Fp> = (0..n * width).map(|_| Fp::random(&mut rng)).collect();
        s.reset_stats();
        let rounds_before = s.rounds();
        let t = Instant::now();
        let out = shuffle_shares(&mut s, &mut snd, &mut rcv, &perm, shares, width, false)
            .expect("shuffle");
        let wall = t.elapsed();
        std::hint::black_box(out);
        let c = s.stats().comm(s.stats().phases().map(|(name, _)| name));
        PartyRun {
            wall,
            bytes: c.bytes,
            messages: c.messages,
            rounds: s.rounds() - rounds_before,
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

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    println!("load average at start: {}", load_average());
    for (n, width) in [(1000usize, 1usize), (300, 300)] {
        let mut walls = Vec::with_capacity(runs);
        let mut last = Vec::new();
        for r in 0..runs {
            let parties = one_run(n, width, r as u64);
            walls.push(parties.iter().map(|p| p.wall).max().unwrap_or_default());
            last = parties;
        }
        walls.sort();
        let median = walls[walls.len() / 2];
        println!(
            "n = {n}, width = {width}: median {:.1} ms of {runs} runs (min {:.1}, max {:.1})",
            median.as_secs_f64() * 1e3,
            walls[0].as_secs_f64() * 1e3,
            walls[walls.len() - 1].as_secs_f64() * 1e3,
        );
        for (i, p) in last.iter().enumerate() {
            println!(
                "  P{i} sent {} bytes ({:.2} MiB) in {} messages; {} rounds",
                p.bytes,
                p.bytes as f64 / (1 << 20) as f64,
                p.messages,
                p.rounds
            );
        }
    }
    println!("load average at end: {}", load_average());
}
