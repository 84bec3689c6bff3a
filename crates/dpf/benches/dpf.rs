//! DPF benchmarks: key generation, single-point full-domain evaluation (single thread) for
//! Half-Tree and BGI into `Fp`, and multi-point full-domain evaluation.
//!
//! Run with
//! `cargo bench -p doram-dpf --bench dpf -- --warm-up-time 1 --measurement-time 3`
//! (append a filter such as `eval_all/half_tree` to run a subset).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use doram_dpf::{Bgi, HalfTree, HalfTreeMpDpf, MultiPointDpf, SinglePointDpf};
use doram_field::Fp;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use std::hint::black_box;

fn sp_eval_all<D: SinglePointDpf<Fp>>(c: &mut Criterion, name: &str) {
    let mut g = c.benchmark_group(format!("eval_all/{name}"));
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for log_n in [16u32, 20, 24] {
        let n = 1usize << log_n;
        let (k0, _) = D::gen_keys(n, rng.random_range(0..n), Fp::ONE, &mut rng);
        let mut out = vec![Fp::ZERO; n];
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(if log_n >= 20 { 10 } else { 30 });
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("2^{log_n}")),
            &n,
            |b, _| b.iter(|| D::eval_all_into(black_box(&k0), &mut out)),
        );
    }
    g.finish();
}

fn sp_gen<D: SinglePointDpf<Fp>>(c: &mut Criterion, name: &str) {
    let mut g = c.benchmark_group(format!("gen/{name}"));
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    for log_n in [16u32, 20, 24] {
        let n = 1usize << log_n;
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("2^{log_n}")),
            &n,
            |b, &n| b.iter(|| D::gen_keys(n, n / 3, Fp::ONE, &mut rng)),
        );
    }
    g.finish();
}

fn single_point(c: &mut Criterion) {
    sp_eval_all::<HalfTree>(c, "half_tree");
    sp_eval_all::<Bgi>(c, "bgi");
    sp_gen::<HalfTree>(c, "half_tree");
    sp_gen::<Bgi>(c, "bgi");
}

fn multi_point(c: &mut Criterion) {
    let mut g = c.benchmark_group("mp_dpf");
    g.sample_size(10);
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    for (log_n, t) in [(16u32, 256usize), (20, 1024)] {
        let n = 1usize << log_n;
        let mut points: Vec<usize> = Vec::with_capacity(t);
        while points.len() < t {
            let p = rng.random_range(0..n);
            if !points.contains(&p) {
                points.push(p);
            }
        }
        let values: Vec<Fp> = (0..t).map(|_| Fp::random(&mut rng)).collect();
        let id = format!("2^{log_n}_t{t}");
        g.bench_function(BenchmarkId::new("gen", &id), |b| {
            b.iter(|| HalfTreeMpDpf::gen_keys(n, &points, &values, &mut rng).expect("gen"))
        });
        let (k0, _) = HalfTreeMpDpf::gen_keys(n, &points, &values, &mut rng).expect("gen");
        let mut out = vec![Fp::ZERO; n];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("eval_all", &id), |b| {
            b.iter(|| HalfTreeMpDpf::eval_all_into(black_box(&k0), &mut out))
        });
    }
    g.finish();
}

/// The benchmark groups (a private module, so the generated functions need no docs).
mod groups {
    use super::*;
    criterion_group!(benches, single_point, multi_point);
}
criterion_main!(groups::benches);
