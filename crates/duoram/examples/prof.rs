//! `cargo run --release -p doram-duoram --example prof -- <log2 n>`: single-thread timings of
//! the preprocessing's local pieces (level hashing and correction, leaf conversion) on this
//! machine, to compare with the protocol's per-operation figures.

use std::time::Instant;

use doram_dpf::levels::{correct_level, expand_level, hash_level};

fn main() {
    let log_n: u32 = std::env::args()
        .nth(1)
        .map_or(20, |a| a.parse().unwrap_or(20));
    let n = 1usize << log_n;
    let src: Vec<u128> = (0..n as u128 / 2)
        .map(|i| i * 0x9e37_79b9_7f4a_7c15)
        .collect();
    let mut h = vec![0u128; n / 2];
    let mut dst = vec![0u128; n];
    for _ in 0..3 {
        let t = Instant::now();
        let x = hash_level(&src, &mut h);
        let t_hash = t.elapsed();
        let t = Instant::now();
        correct_level(x, &src, &h, &mut dst);
        let t_corr = t.elapsed();
        let t = Instant::now();
        expand_level(x, &src, &mut dst);
        let t_exp = t.elapsed();
        println!(
            "2^{log_n} leaves from 2^{} nodes: hash {:.2} ms ({:.2} ns/node), correct {:.2} ms, fused expand {:.2} ms",
            log_n - 1,
            t_hash.as_secs_f64() * 1e3,
            t_hash.as_secs_f64() * 1e9 / (n / 2) as f64,
            t_corr.as_secs_f64() * 1e3,
            t_exp.as_secs_f64() * 1e3
        );
    }
}
