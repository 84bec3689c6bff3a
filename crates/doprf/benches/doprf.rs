//! DOPRF benchmarks for ℓ = 80: batch Legendre throughput, the plaintext PRF, preprocessing
//! and online time per evaluation of both protocols (three parties on an in-process mesh, one
//! thread each).
//!
//! `cargo bench -p doram-doprf --bench doprf`; criterion prints the median of each benchmark
//! (the middle value of the "time:" line). For the three-party benchmarks each sample is the
//! time of the slowest party, from a common start after setup; `doprf_l80_compute` runs the
//! three roles' computation in one thread with the messages handed over in memory.
//!
//! The last step of both protocols and the plaintext PRF go through the batch Legendre kernel
//! (`doram_field::legendre_batch_vartime`). Against the previous code, which called
//! `Fp::legendre_vartime` once per symbol, old and new builds alternated twice on the 2-vCPU
//! development machine (2026-11-21, 22:32–22:34, a noisy phase), medians:
//!
//! | benchmark | unmasked, old → new | masked, old → new |
//! |---|---|---|
//! | online, one evaluation at a time, three parties | 52–57 → 28–40 µs | 57–69 → 43 µs |
//! | online, batches of 64, three parties, per evaluation | 35–38 → 13.7–15.7 µs | 38–41 → 14.2–17.1 µs |
//! | computation only, online, batches of 64, per evaluation | 25–30 → 10.5–15.5 µs | 26–29 → 10.9–16.7 µs |
//!
//! The plaintext PRF (`prf/eval_l80`, 80 symbols) took 7.2–9.3 µs per evaluation (was
//! 20.6–28.9), and `legendre/bits_batch` 75–86 ns per symbol on one thread (was 271–465) and
//! 55–60 ns on two (was 184–233). Preprocessing computes no symbols and was not re-measured;
//! an earlier loaded run gave about 30 µs per evaluation for both protocols.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use doram_core::Seed;
use doram_doprf::{
    Doprf, KeyHolder, LegendrePrf, Mode, Params, Receiver1, Receiver2, Roles, legendre_bits_vartime,
};
use doram_field::Fp;
use doram_mpc::Additive;
use doram_net::Session;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

/// Fixed seed of every benchmark, for reproducibility.
const RNG_SEED: u64 = 0x0d0a_f000;
const BITS: usize = 80;

fn params() -> Params {
    Params::new(BITS).expect("ℓ = 80 is valid")
}

fn bench_legendre(c: &mut Criterion) {
    let mut rng = ChaCha12Rng::seed_from_u64(RNG_SEED);
    let mut g = c.benchmark_group("legendre");
    let evals = 256;
    let values: Vec<Fp> = (0..evals * BITS).map(|_| Fp::random(&mut rng)).collect();
    g.throughput(Throughput::Elements((evals * BITS) as u64));
    for threads in [1, 2] {
        let p = params().with_threads(threads);
        g.bench_with_input(
            BenchmarkId::new("bits_batch", format!("{threads}t")),
            &values,
            |b, v| b.iter(|| legendre_bits_vartime(v, &p)),
        );
    }
    g.finish();

    let mut g = c.benchmark_group("prf");
    let prf = LegendrePrf::random(&params(), &mut rng);
    let x = Fp::random(&mut rng);
    g.bench_function("eval_l80", |b| b.iter(|| prf.eval(x)));
    g.finish();
}

/// The three roles' states, set up in memory (no session).
fn local_trio() -> (KeyHolder, Receiver1, Receiver2) {
    let (params, roles) = (params(), Roles::ramen_stash());
    let seed = |i: u8| Seed([i; 16]);
    let (k, k_seed) =
        KeyHolder::setup_start(params, roles, roles.key_holder(), seed(0)).expect("K plays K");
    let (r1, r_seed, k1) =
        Receiver1::setup_start(params, roles, roles.r1(), seed(1)).expect("R1 plays R1");
    let (r2, k2) = Receiver2::setup_start(params, roles, roles.r2(), seed(2)).expect("R2 plays R2");
    (
        k.finish(k1, k2).expect("well-formed key shares"),
        r1.finish(k_seed),
        r2.finish(r_seed),
    )
}

/// The computation of all three roles, run in one thread with the messages handed over in
/// memory: what the protocols cost without a network.
fn bench_local(c: &mut Criterion) {
    let mut g = c.benchmark_group("doprf_l80_compute");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let batch = 64;
    g.throughput(Throughput::Elements(batch as u64));
    let (mut k, mut r1, mut r2) = local_trio();
    g.bench_function(BenchmarkId::new("unmasked/preprocess", batch), |b| {
        b.iter(|| {
            let pending = k.unmasked_preprocess_start(batch);
            let c1 = r1.unmasked_preprocess(batch);
            r2.unmasked_preprocess(batch);
            k.unmasked_preprocess_finish(pending, c1)
                .expect("well-formed c_1");
        })
    });
    g.bench_function(BenchmarkId::new("masked/preprocess", batch), |b| {
        b.iter(|| {
            k.masked_preprocess(batch);
            let c3 = r1.masked_preprocess(batch);
            let pending = r2.masked_preprocess_start(batch);
            r2.masked_preprocess_finish(pending, c3)
                .expect("well-formed c_3");
        })
    });
    let x = vec![Additive::from_share(Fp::from_u64(7)); batch];
    g.bench_function(BenchmarkId::new("unmasked/online", batch), |b| {
        b.iter_custom(|iters| {
            let (mut k, mut r1, mut r2) = local_trio();
            let n = iters as usize * batch;
            let pending = k.unmasked_preprocess_start(n);
            let c1 = r1.unmasked_preprocess(n);
            r2.unmasked_preprocess(n);
            k.unmasked_preprocess_finish(pending, c1)
                .expect("well-formed c_1");
            let start = Instant::now();
            for _ in 0..iters {
                let kp = k.unmasked_eval_start(&x).expect("preprocessed");
                let y2 = r1.unmasked_eval(&x).expect("preprocessed");
                let (r2p, e) = r2.unmasked_eval_start(&x).expect("preprocessed");
                let z1 = kp.finish(y2, e).expect("well-formed");
                std::hint::black_box(r2p.finish(z1).expect("well-formed"));
            }
            start.elapsed()
        })
    });
    g.bench_function(BenchmarkId::new("masked/online", batch), |b| {
        b.iter_custom(|iters| {
            let (mut k, mut r1, mut r2) = local_trio();
            let n = iters as usize * batch;
            k.masked_preprocess(n);
            let c3 = r1.masked_preprocess(n);
            let pending = r2.masked_preprocess_start(n);
            r2.masked_preprocess_finish(pending, c3)
                .expect("well-formed c_3");
            let start = Instant::now();
            for _ in 0..iters {
                let (kp, d) = k.masked_eval_start(&x).expect("preprocessed");
                let (_, y2) = r1.masked_eval(&x).expect("preprocessed");
                let r2p = r2.masked_eval_start(&x).expect("preprocessed");
                let (_, z3) = r2p.finish(y2, d).expect("well-formed");
                std::hint::black_box(kp.finish(z3).expect("well-formed"));
            }
            start.elapsed()
        })
    });
    g.finish();
}

/// What each party does in one timed iteration.
#[derive(Clone, Copy)]
enum Task {
    Preprocess(Mode, usize),
    Online(Mode, usize),
}

/// Runs `iters` iterations of `task` on three fresh parties and returns the slowest party's
/// time for them.
fn run_three(task: Task, iters: u64) -> Duration {
    let params = params();
    let roles = Roles::ramen_stash();
    let barrier = Barrier::new(3);
    let times: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = Session::local_mesh(3)
            .into_iter()
            .map(|mut session| {
                let barrier = &barrier;
                s.spawn(move || {
                    let me = session.me();
                    let mut seed = [0u8; 16];
                    seed[..8].copy_from_slice(&RNG_SEED.to_le_bytes());
                    seed[8] = me.index() as u8;
                    let mut doprf =
                        Doprf::setup(&mut session, params, roles, Seed(seed)).expect("setup");
                    let share = Additive::from_share(Fp::from_u64(me.index() as u64 + 1));
                    if let Task::Online(mode, batch) = task {
                        doprf
                            .preprocess(&mut session, mode, iters as usize * batch)
                            .expect("preprocessing");
                    }
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        match task {
                            Task::Preprocess(mode, batch) => {
                                doprf
                                    .preprocess(&mut session, mode, batch)
                                    .expect("preprocess");
                            }
                            Task::Online(Mode::Unmasked, batch) => {
                                let x = vec![share; batch];
                                let out = doprf.eval_unmasked(&mut session, &x).expect("eval");
                                std::hint::black_box(out);
                            }
                            Task::Online(Mode::Masked, batch) => {
                                let x = vec![share; batch];
                                let out = doprf.eval_masked(&mut session, &x).expect("eval");
                                std::hint::black_box(out);
                            }
                        }
                    }
                    let elapsed = start.elapsed();
                    // Keep the session open until every party is done.
                    barrier.wait();
                    drop(session);
                    (me, elapsed)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("party thread").1)
            .collect()
    });
    times.into_iter().max().unwrap_or_default()
}

fn bench_protocols(c: &mut Criterion) {
    let mut g = c.benchmark_group("doprf_l80");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for mode in [Mode::Unmasked, Mode::Masked] {
        for batch in [1usize, 64] {
            g.throughput(Throughput::Elements(batch as u64));
            g.bench_function(BenchmarkId::new(format!("{mode}/online"), batch), |b| {
                b.iter_custom(|iters| run_three(Task::Online(mode, batch), iters))
            });
        }
        let batch = 64;
        g.throughput(Throughput::Elements(batch as u64));
        g.bench_function(BenchmarkId::new(format!("{mode}/preprocess"), batch), |b| {
            b.iter_custom(|iters| run_three(Task::Preprocess(mode, batch), iters))
        });
    }
    g.finish();
}

/// The benchmark group (a private module, so the generated function needs no docs).
mod groups {
    use super::*;
    criterion_group!(benches, bench_legendre, bench_local, bench_protocols);
}
criterion_main!(groups::benches);
