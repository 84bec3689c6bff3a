//! `cargo run --release -p doram-duoram --example prof -- <log2 n>`: single-thread timings of
//! fixed-key AES in batches of 8 blocks (as the DPF code calls it) and in longer runs, on this
//! machine, to compare with the per-leaf cost of the preprocessing.

use std::time::Instant;

use aes::Aes128Enc;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};
use doram_prim::aes::{FIXED_KEY, fixed_key};

fn main() {
    let log_n: u32 = std::env::args()
        .nth(1)
        .map_or(20, |a| a.parse().unwrap_or(20));
    let n = 1usize << log_n;
    let fk = fixed_key();
    let cipher = Aes128Enc::new(&GenericArray::from(FIXED_KEY));
    let mut xs: Vec<u128> = (0..n as u128).map(|i| i * 0x9e37_79b9_7f4a_7c15).collect();
    for _ in 0..3 {
        let t = Instant::now();
        for c in xs.chunks_exact_mut(8) {
            let mut b: [u128; 8] = std::array::from_fn(|i| c[i]);
            fk.ccr8(&mut b);
            c.copy_from_slice(&b);
        }
        let t8 = t.elapsed();
        let t = Instant::now();
        let mut blocks: Vec<GenericArray<u8, aes::cipher::consts::U16>> = xs
            .iter()
            .map(|x| GenericArray::from(x.to_le_bytes()))
            .collect();
        let tconv = t.elapsed();
        let t = Instant::now();
        for c in blocks.chunks_mut(256) {
            cipher.encrypt_blocks(c);
        }
        let t256 = t.elapsed();
        println!(
            "2^{log_n} blocks: ccr8 {:.2} ns/block; raw AES in runs of 256: {:.2} ns/block (+{:.2} to convert)",
            t8.as_secs_f64() * 1e9 / n as f64,
            t256.as_secs_f64() * 1e9 / n as f64,
            tconv.as_secs_f64() * 1e9 / n as f64,
        );
    }
}
