//! `cargo run --release -p doram-duoram --example duoram_prof -- <log2 n>`: single-thread timings of
//! fixed-key CCR hashing on this machine — the prim crate's 8-block batches (what the
//! preprocessing's tree levels use), the `aes` crate's block API over runs of 64 blocks, and that
//! bare cipher — and of the output stage per leaf: the fixed-key AES node kernels against the
//! ChaCha12 ones the preprocessing uses.

use std::time::Instant;

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};
use doram_field::Z64;
use doram_prim::aes::{FIXED_KEY, NODE_SLOTS, fixed_key, sigma};
use doram_prim::chacha;

fn ccr_runs(pi: &Aes128Enc, xs: &mut [u128]) {
    let mut buf: [GenericArray<u8, U16>; 64] = std::array::from_fn(|_| GenericArray::default());
    for chunk in xs.chunks_mut(64) {
        let m = chunk.len();
        for (b, x) in buf.iter_mut().zip(chunk.iter_mut()) {
            *x = sigma(*x);
            *b = GenericArray::from(x.to_le_bytes());
        }
        pi.encrypt_blocks(&mut buf[..m]);
        for (x, b) in chunk.iter_mut().zip(buf.iter()) {
            let mut y = [0u8; 16];
            y.copy_from_slice(b);
            *x ^= u128::from_le_bytes(y);
        }
    }
}

fn main() {
    let log_n: u32 = std::env::args()
        .nth(1)
        .map_or(20, |a| a.parse().unwrap_or(20));
    let n = 1usize << log_n;
    let fk = fixed_key();
    let pi = Aes128Enc::new(&GenericArray::from(FIXED_KEY));
    let mut xs: Vec<u128> = (0..n as u128).map(|i| i * 0x9e37_79b9_7f4a_7c15).collect();
    let mut blocks: Vec<GenericArray<u8, U16>> = xs
        .iter()
        .map(|x| GenericArray::from(x.to_le_bytes()))
        .collect();
    let tweaks: [u128; NODE_SLOTS] = std::array::from_fn(|j| (j as u128 + 1) << 64);
    let tw8: [u128; 8] = std::array::from_fn(|j| tweaks[j]);
    let (mut wa, mut wv) = (vec![Z64(0); n], vec![Z64(0); n]);
    let ns = |t: std::time::Duration| t.as_secs_f64() * 1e9 / n as f64;
    for _ in 0..5 {
        let t = Instant::now();
        for c in xs.chunks_exact_mut(8) {
            let mut b: [u128; 8] = std::array::from_fn(|i| c[i]);
            fk.ccr8(&mut b);
            c.copy_from_slice(&b);
        }
        let t8 = t.elapsed();
        let t = Instant::now();
        ccr_runs(&pi, &mut xs);
        let t64 = t.elapsed();
        let t = Instant::now();
        for c in blocks.chunks_mut(64) {
            pi.encrypt_blocks(c);
        }
        let traw = t.elapsed();
        let t = Instant::now();
        let nodes = &xs[..n / NODE_SLOTS];
        let (mut sa, mut sv) = ([Z64(0); NODE_SLOTS], [Z64(0); NODE_SLOTS]);
        fk.node_words_split(nodes, &tweaks, &mut wa, &mut wv, &mut sa, &mut sv);
        let tsplit = t.elapsed();
        let t = Instant::now();
        let w = fk.node_words_pairs(nodes, 0, &tw8, &mut wa, &mut sa);
        let tpairs = t.elapsed();
        let t = Instant::now();
        chacha::flag_and_value_words(nodes, &mut wa, &mut wv, &mut sa, &mut sv);
        let tc_split = t.elapsed();
        let t = Instant::now();
        let wc = chacha::flag_words(nodes, 0, &mut wa, &mut sa);
        let tc_flags = t.elapsed();
        std::hint::black_box((sa, sv, w, wc));
        println!(
            "2^{log_n} blocks: ccr8 {:.2} ns/block, ccr over runs of 64 {:.2}, bare AES {:.2}; \
             output stage per leaf, AES: two words {:.2} ns, one word {:.2} ns; \
             ChaCha12 ({}): two words {:.2} ns, one word {:.2} ns",
            ns(t8),
            ns(t64),
            ns(traw),
            ns(tsplit),
            ns(tpairs),
            if chacha::vectorized() {
                "AVX-512"
            } else {
                "rand_chacha"
            },
            ns(tc_split),
            ns(tc_flags),
        );
    }
}
