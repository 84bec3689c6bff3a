//! Throughput of the AES-CTR PRG, the fixed-key AES hashes, the output-node kernels (fixed-key
//! AES against ChaCha12), the BLAKE3 PRF and cuckoo hashing.
//!
//! Run with `cargo bench -p doram-prim --bench prim -- --warm-up-time 1 --measurement-time 3`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use doram_core::Seed;
use doram_field::Z64;
use doram_prim::aes::NODE_SLOTS;
use doram_prim::{AesPrg, CuckooHasher, Prf, chacha, fixed_key, num_buckets};
use rand_core::RngCore;
use std::hint::black_box;

fn prg(c: &mut Criterion) {
    let mut g = c.benchmark_group("aes_prg");
    let len = 1 << 20;
    g.throughput(Throughput::Bytes(len as u64));
    let mut buf = vec![0u8; len];
    g.bench_function("fill_bytes_1MiB", |b| {
        let mut prg = AesPrg::new(Seed([1; 16]));
        b.iter(|| {
            prg.fill_bytes(&mut buf);
            black_box(&buf);
        })
    });
    g.finish();
}

fn hashes(c: &mut Criterion) {
    let h = fixed_key();
    let n = 1 << 14;
    let mut g = c.benchmark_group("fixed_key_hash");
    g.throughput(Throughput::Bytes((16 * n) as u64));
    let mut xs: Vec<u128> = (0..n as u128).collect();
    g.bench_function("pi_in_place_16k_blocks", |b| {
        b.iter(|| h.pi_in_place(black_box(&mut xs)))
    });
    g.bench_function("cr_in_place_16k_blocks", |b| {
        b.iter(|| h.cr_in_place(black_box(&mut xs)))
    });
    g.bench_function("ccr_in_place_16k_blocks", |b| {
        b.iter(|| h.ccr_in_place(black_box(&mut xs)))
    });
    let tweaks: Vec<u128> = (0..n as u128).map(|i| i * 3).collect();
    g.bench_function("tccr_in_place_16k_blocks", |b| {
        b.iter(|| h.tccr_in_place(&tweaks, black_box(&mut xs)))
    });
    g.bench_function("ccr_single_calls_16k", |b| {
        b.iter(|| {
            for x in xs.iter_mut() {
                *x = h.ccr(*x);
            }
        })
    });
    g.finish();
}

/// The DPF output stage over 2^16 leaves (4096 output nodes of 16 slots): two words per leaf
/// and one, with the fixed-key AES kernels and the ChaCha12 ones. Throughput in leaves.
fn node_kernels(c: &mut Criterion) {
    let fk = fixed_key();
    let leaves = 1usize << 16;
    let nodes: Vec<u128> = (0..(leaves / NODE_SLOTS) as u128)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
        .collect();
    let tweaks: [u128; NODE_SLOTS] = std::array::from_fn(|j| (j as u128 + 1) << 64);
    let pairs: [u128; NODE_SLOTS / 2] = std::array::from_fn(|j| tweaks[j]);
    let (mut a, mut v) = (vec![Z64(0); leaves], vec![Z64(0); leaves]);
    let (mut sa, mut sv) = ([Z64(0); NODE_SLOTS], [Z64(0); NODE_SLOTS]);
    let mut g = c.benchmark_group("output_stage_64k_leaves");
    g.throughput(Throughput::Elements(leaves as u64));
    g.bench_function("aes_two_words", |b| {
        b.iter(|| fk.node_words_split(&nodes, &tweaks, &mut a, &mut v, &mut sa, &mut sv))
    });
    g.bench_function("chacha12_two_words", |b| {
        b.iter(|| chacha::flag_and_value_words(&nodes, &mut a, &mut v, &mut sa, &mut sv))
    });
    g.bench_function("aes_one_word", |b| {
        b.iter(|| fk.node_words_pairs(&nodes, 0, &pairs, &mut a, &mut sa))
    });
    g.bench_function("chacha12_one_word", |b| {
        b.iter(|| chacha::flag_words(&nodes, 0, &mut a, &mut sa))
    });
    g.finish();
    black_box((sa, sv));
}

fn prf(c: &mut Criterion) {
    let prf = Prf::new([5; 32]);
    let mut g = c.benchmark_group("blake3_prf");
    g.throughput(Throughput::Elements(1));
    g.bench_function("eval_16_bytes", |b| {
        b.iter(|| prf.eval_bytes::<16>(black_box(b"some input of modest length")))
    });
    g.finish();
}

fn cuckoo(c: &mut Criterion) {
    let mut g = c.benchmark_group("cuckoo");
    for log_n in [16u32, 20] {
        let n = 1usize << log_n;
        let h = CuckooHasher::new(Seed([2; 16]), num_buckets(1 << (log_n / 2)));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(10);
        g.bench_with_input(BenchmarkId::new("bucket_sizes", n), &n, |b, &n| {
            b.iter(|| h.bucket_sizes(n).expect("small domain"))
        });
        g.bench_with_input(BenchmarkId::new("simple_hash", n), &n, |b, &n| {
            b.iter(|| h.simple_hash(n).expect("small domain"))
        });
        let t = 1usize << (log_n / 2);
        let items: Vec<u64> = (0..t as u64).map(|i| i * 2654435761 % n as u64).collect();
        g.throughput(Throughput::Elements(t as u64));
        g.bench_with_input(BenchmarkId::new("insert", t), &t, |b, _| {
            b.iter(|| h.insert(&items).expect("cuckoo hashing succeeds"))
        });
    }
    g.finish();
}

/// The benchmark group (a private module, so the generated function needs no docs).
mod groups {
    use super::*;
    criterion_group!(benches, prg, hashes, node_kernels, prf, cuckoo);
}
criterion_main!(groups::benches);
