//! Benchmarks of Fp arithmetic and the Legendre symbol.
//!
//! Run with `cargo bench -p doram-field --bench field -- --warm-up-time 1 --measurement-time 3`.
//!
//! Per-element operations cycle through 1024 random inputs so that branch predictors cannot
//! learn one input; reported times are per operation. In the `legendre` group every figure is
//! the time per symbol: `single` is one [`Fp::legendre_vartime`] call, `single_loop_1024` and
//! `batch_1024` evaluate 1024 symbols (a loop of single calls, and one
//! [`legendre_batch_vartime`] call) and report the total divided by 1024.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use doram_field::{Fp, fp, legendre_batch_vartime};
use rand::SeedableRng;
use std::hint::black_box;
use std::time::{Duration, Instant};

const N: usize = 1024;

fn inputs(seed: u64) -> Vec<Fp> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    (0..N).map(|_| Fp::random(&mut rng)).collect()
}

fn bench_arith(c: &mut Criterion) {
    let xs = inputs(1);
    let ys = inputs(2);
    let mut g = c.benchmark_group("fp");

    g.bench_function("mul", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]) * black_box(ys[i])
        })
    });
    g.bench_function("mul_latency_chain", |b| {
        // A dependent chain: every multiplication waits for the previous one.
        let mut acc = xs[0];
        b.iter(|| {
            acc = black_box(acc * ys[7]);
            acc
        })
    });
    g.bench_function("square", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]).square()
        })
    });
    g.bench_function("add", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]) + black_box(ys[i])
        })
    });
    g.bench_function("inverse", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]).inverse()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("fp_1024");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("dot", |b| {
        b.iter(|| fp::dot(black_box(&xs), black_box(&ys)))
    });
    g.bench_function("dot_naive", |b| {
        b.iter(|| {
            black_box(&xs)
                .iter()
                .zip(black_box(&ys))
                .fold(Fp::ZERO, |acc, (x, y)| acc + *x * *y)
        })
    });
    g.bench_function("sum", |b| b.iter(|| fp::sum(black_box(&xs))));
    g.bench_function("batch_inverse", |b| {
        b.iter_batched_ref(
            || xs.clone(),
            |v| Fp::batch_inverse(v),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Runs `f` (which evaluates `N` symbols) `iters` times and returns the time per symbol.
fn per_symbol(iters: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed() / N as u32
}

fn bench_legendre(c: &mut Criterion) {
    let xs = inputs(1);
    let mut g = c.benchmark_group("legendre");
    g.bench_function("euler", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]).legendre()
        })
    });
    g.bench_function("single", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) & (N - 1);
            black_box(xs[i]).legendre_vartime()
        })
    });
    g.bench_function("single_loop_1024", |b| {
        let mut out = vec![0i8; N];
        b.iter_custom(|iters| {
            per_symbol(iters, || {
                for (x, o) in black_box(&xs).iter().zip(out.iter_mut()) {
                    *o = x.legendre_vartime();
                }
                black_box(&mut out);
            })
        })
    });
    g.bench_function("batch_1024", |b| {
        let mut out = vec![0i8; N];
        b.iter_custom(|iters| {
            per_symbol(iters, || {
                legendre_batch_vartime(black_box(&xs), &mut out);
                black_box(&mut out);
            })
        })
    });
    g.finish();
}

/// The benchmark group (a private module, so the generated function needs no docs).
mod groups {
    use super::*;
    criterion_group!(benches, bench_arith, bench_legendre);
}
criterion_main!(groups::benches);
