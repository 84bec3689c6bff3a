//! Throughput of the two-party engine, both parties in this process: base OTs, IKNP OTs per
//! second and half-gates AND gates per second. Prints the median of several runs.
//!
//! `cargo run --release -p doram-twopc --example twopc_throughput [runs]`
//!
//! Randomness comes from public seeds (`insecure_rng_for_tests`): the figures are for speed
//! only.

use std::time::{Duration, Instant};

use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::gc::{Circuit, Evaluator, Garbler, Gate, random_delta};
use doram_twopc::{driver, insecure_rng_for_tests};

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

fn chain_circuit(ands: usize) -> Circuit {
    // w ← (w ⊕ y) ∧ x, repeated: one AND and one XOR per step.
    let mut gates = Vec::with_capacity(2 * ands);
    let mut w = 2u32;
    gates.push(Gate::And { a: 0, b: 1, out: 2 });
    for _ in 1..ands {
        gates.push(Gate::Xor {
            a: w,
            b: 1,
            out: w + 1,
        });
        gates.push(Gate::And {
            a: w + 1,
            b: 0,
            out: w + 2,
        });
        w += 2;
    }
    Circuit::new(1, 1, w as usize + 1, gates, vec![w]).expect("well-formed chain")
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let m = 1 << 22;
    let ands = 1 << 22;

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

    for kind in ["correlated", "random"] {
        let ts: Vec<Duration> = (0..runs)
            .map(|_| {
                both(|mut s| {
                    let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                    if s.me().index() == 0 {
                        let mut ot =
                            driver::iknp_sender_setup(&mut s, random_delta(&mut rng), &mut rng)
                                .expect("setup");
                        let t = Instant::now();
                        let c = driver::cot_send(&mut s, &mut ot, m).expect("extend");
                        if kind == "random" {
                            std::hint::black_box(c.into_random());
                        }
                        t.elapsed()
                    } else {
                        let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                        let choices = vec![true; m];
                        let t = Instant::now();
                        let c = driver::cot_receive(&mut s, &mut ot, &choices).expect("extend");
                        if kind == "random" {
                            std::hint::black_box(c.into_random());
                        }
                        t.elapsed()
                    }
                })
            })
            .collect();
        let t = median(ts);
        println!(
            "IKNP {kind} OT: {m} OTs in {:.1} ms = {:.2} M OTs/s, 16 bytes/OT receiver→sender",
            t.as_secs_f64() * 1e3,
            m as f64 / t.as_secs_f64() / 1e6
        );
    }

    let c = chain_circuit(ands);
    let mut rng = insecure_rng_for_tests(9);
    let delta = random_delta(&mut rng);
    let mut tables = Vec::with_capacity(32 * ands);
    let garble_ts: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut g = Garbler::new(delta, c.wires()).expect("delta");
            tables.clear();
            let t = Instant::now();
            for gate in c.gates() {
                g.garble(gate, &mut tables).expect("garble");
            }
            t.elapsed()
        })
        .collect();
    let eval_ts: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut e = Evaluator::new(c.wires());
            let mut pos = 0;
            let t = Instant::now();
            for gate in c.gates() {
                e.eval(gate, &tables, &mut pos).expect("eval");
            }
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
}
