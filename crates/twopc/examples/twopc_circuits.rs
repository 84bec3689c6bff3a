//! AES-128 (and SHA-256) in 2PC, both parties in this process, and the builder's gate counts.
//!
//! `cargo run --release -p doram-twopc --example twopc_circuits [runs] [batch]`
//!
//! * one at a time: `driver::garble`/`driver::evaluate` per AES block, after one IKNP setup
//!   (each call: input labels, OTs for the 128 evaluator bits, tables, decoding: 4 messages
//!   garbler → evaluator, 2 back);
//! * batched: `batch` AES circuits (default 16) as one streamed circuit (`garble_stream`),
//!   the gates generated on the fly from the one parsed circuit; each party holds one label
//!   per wire of the whole batch (37k wires, 590 kB per AES).
//!
//! Prints medians of `runs` runs (default 5). Randomness comes from public seeds
//! (`insecure_rng_for_tests`): the figures are for speed only.

use std::time::{Duration, Instant};

use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::builder::{Builder, GateCounts, Word, compact_wires};
use doram_twopc::gc::{Circuit, CircuitShape, Evaluator, Garbler, Gate, WireId, random_delta};
use doram_twopc::{bristol, driver, insecure_rng_for_tests};

const AES_128: &[u8] = include_bytes!("../tests/data/aes_128.txt");
const SHA_256: &[u8] = include_bytes!("../tests/data/sha256.txt");
const ONE_AT_A_TIME: usize = 200;
const SHA_AT_A_TIME: usize = 50;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Runs `f` on both parties of a fresh mesh; the slower party's own measured time.
fn both(f: impl Fn(Session) -> Duration + Sync) -> Duration {
    run_parties(LocalMesh::new(2).build(), "bench", f)
        .into_iter()
        .map(|r| r.expect("party thread"))
        .max()
        .unwrap_or_default()
}

/// `copies` copies of `c` side by side: all garbler inputs first, then all evaluator inputs,
/// then each copy's gate wires.
fn replicate(c: &Circuit, copies: usize) -> (CircuitShape, impl Iterator<Item = Gate> + '_) {
    let (g, e) = (c.garbler_inputs(), c.evaluator_inputs());
    let inner = c.wires() - g - e;
    let map = move |i: usize, w: WireId| -> WireId {
        let w = w as usize;
        let x = if w < g {
            i * g + w
        } else if w < g + e {
            copies * g + i * e + (w - g)
        } else {
            copies * (g + e) + i * inner + (w - g - e)
        };
        WireId::try_from(x).expect("fewer than 2^32 wires")
    };
    let shape = CircuitShape {
        garbler_inputs: copies * g,
        evaluator_inputs: copies * e,
        wires: copies * c.wires(),
        and_gates: copies * c.and_gates(),
        outputs: (0..copies)
            .flat_map(|i| c.outputs().iter().map(move |&w| map(i, w)))
            .collect(),
    };
    let gates = (0..copies).flat_map(move |i| {
        c.gates().iter().map(move |g| match *g {
            Gate::Xor { a, b, out } => Gate::Xor {
                a: map(i, a),
                b: map(i, b),
                out: map(i, out),
            },
            Gate::And { a, b, out } => Gate::And {
                a: map(i, a),
                b: map(i, b),
                out: map(i, out),
            },
            Gate::Inv { a, out } => Gate::Inv {
                a: map(i, a),
                out: map(i, out),
            },
        })
    });
    (shape, gates)
}

fn builder_counts() {
    fn row<const N: usize, T>(what: &str, f: impl Fn(&mut Builder, &Word<N>, &Word<N>) -> T) {
        let mut b = Builder::new();
        let x: Word<N> = b.garbler_word();
        let y: Word<N> = b.evaluator_word();
        let _ = f(&mut b, &x, &y);
        let GateCounts { and, xor, inv } = b.counts();
        println!("  {what:<28} {N:>3} bits: {and:>5} AND {xor:>5} XOR {inv:>4} INV");
    }
    println!("builder gate counts:");
    row::<32, _>("add", |b, x, y| b.add(x, y));
    row::<32, _>("sub", |b, x, y| b.sub(x, y));
    row::<32, _>("lt (unsigned)", |b, x, y| b.lt(x, y));
    row::<32, _>("lt_signed", |b, x, y| b.lt_signed(x, y));
    row::<32, _>("eq", |b, x, y| b.eq(x, y));
    row::<32, _>("mux", |b, x, y| {
        let s = x.bits()[0];
        b.mux(s, x, y)
    });
    row::<32, _>("shl_var (5-bit amount)", |b, x, y| {
        b.shl_var(x, &y.resize::<5>())
    });
    row::<32, _>("rotr_var (5-bit amount)", |b, x, y| {
        b.rotr_var(x, &y.resize::<5>())
    });
    row::<32, _>("mul (mod 2^32)", |b, x, y| b.mul(x, y));
    row::<64, _>("mul (mod 2^64)", |b, x, y| b.mul(x, y));
    row::<32, _>("lookup (16 entries)", |b, x, y| {
        let table: Vec<Word<32>> = (0..16).map(|i| x.rotl(i)).collect();
        b.lookup(&table, &y.resize::<4>())
    });
}

/// `driver::garble`/`driver::evaluate` of `c`, `ONE_AT_A_TIME` times after one IKNP setup.
fn one_at_a_time(what: &str, c: &Circuit, runs: usize) {
    let key = [true; 128];
    let block = [false; 128];
    let counts = GateCounts::of(c);
    let single: Vec<Duration> = (0..runs)
        .map(|_| {
            both(|mut s| {
                let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                if s.me().index() == 0 {
                    let delta = random_delta(&mut rng);
                    let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).expect("setup");
                    let mut g = Garbler::new(delta, c.wires()).expect("delta");
                    let t = Instant::now();
                    for _ in 0..ONE_AT_A_TIME {
                        driver::garble(&mut s, &mut ot, &mut g, c, &key, &mut rng).expect("gc");
                    }
                    t.elapsed()
                } else {
                    let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                    let mut e = Evaluator::new(c.wires());
                    let t = Instant::now();
                    for _ in 0..ONE_AT_A_TIME {
                        driver::evaluate(&mut s, &mut ot, &mut e, c, &block).expect("gc");
                    }
                    t.elapsed()
                }
            })
        })
        .collect();
    let t = median(single);
    println!(
        "2PC, one AES at a time ({what}): {:.0} AES/s ({:.1} µs each, {:.2} M AND gates/s)",
        ONE_AT_A_TIME as f64 / t.as_secs_f64(),
        t.as_secs_f64() * 1e6 / ONE_AT_A_TIME as f64,
        (ONE_AT_A_TIME * counts.and) as f64 / t.as_secs_f64() / 1e6
    );
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let batch: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    builder_counts();

    let t = Instant::now();
    let aes = bristol::parse(AES_128).expect("AES-128 circuit");
    println!(
        "parse aes_128.txt: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let c = aes.two_party(1).expect("two values");
    let counts = GateCounts::of(&c);
    println!(
        "AES-128: {} AND, {} XOR, {} INV = {} table bytes",
        counts.and,
        counts.xor,
        counts.inv,
        counts.table_bytes()
    );
    let key = [true; 128];
    let block = [false; 128];

    let plain: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..ONE_AT_A_TIME {
                std::hint::black_box(c.eval_plain(&key, &block).expect("eval"));
            }
            t.elapsed()
        })
        .collect();
    let t = median(plain);
    println!(
        "plaintext evaluation: {:.0} AES/s",
        ONE_AT_A_TIME as f64 / t.as_secs_f64()
    );

    one_at_a_time("as read", &c, runs);
    let cc = compact_wires(&c);
    println!(
        "AES-128 wires: {} as read, {} compacted",
        c.wires(),
        cc.wires()
    );
    one_at_a_time("compacted", &cc, runs);

    let sha = compact_wires(
        &bristol::parse(SHA_256)
            .expect("SHA-256 circuit")
            .two_party(1)
            .expect("two values"),
    );
    let sha_runs: Vec<Duration> = (0..runs)
        .map(|_| {
            both(|mut s| {
                let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                if s.me().index() == 0 {
                    let delta = random_delta(&mut rng);
                    let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).expect("setup");
                    let mut g = Garbler::new(delta, sha.wires()).expect("delta");
                    let t = Instant::now();
                    for _ in 0..SHA_AT_A_TIME {
                        driver::garble(&mut s, &mut ot, &mut g, &sha, &[false; 512], &mut rng)
                            .expect("gc");
                    }
                    t.elapsed()
                } else {
                    let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                    let mut e = Evaluator::new(sha.wires());
                    let t = Instant::now();
                    for _ in 0..SHA_AT_A_TIME {
                        driver::evaluate(&mut s, &mut ot, &mut e, &sha, &[false; 256]).expect("gc");
                    }
                    t.elapsed()
                }
            })
        })
        .collect();
    let t = median(sha_runs);
    println!(
        "2PC, one SHA-256 compression at a time ({} AND, compacted): {:.0} per s",
        sha.and_gates(),
        SHA_AT_A_TIME as f64 / t.as_secs_f64()
    );

    let keys = vec![true; 128 * batch];
    let blocks = vec![false; 128 * batch];
    // The gates are listed before the clock starts, so that only garbling, evaluation and
    // the transport are timed (a lazily mapped iterator costs about as much as garbling).
    let (shape, gates) = replicate(&cc, batch);
    let gates: Vec<Gate> = gates.collect();
    let batched: Vec<Duration> = (0..runs)
        .map(|_| {
            both(|mut s| {
                let mut rng = insecure_rng_for_tests(s.me().index() as u64);
                let gates = gates.iter().copied();
                if s.me().index() == 0 {
                    let delta = random_delta(&mut rng);
                    let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).expect("setup");
                    let mut g = Garbler::new(delta, 0).expect("delta");
                    let t = Instant::now();
                    driver::garble_stream(&mut s, &mut ot, &mut g, &shape, gates, &keys, &mut rng)
                        .expect("gc");
                    t.elapsed()
                } else {
                    let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).expect("setup");
                    let mut e = Evaluator::new(0);
                    let t = Instant::now();
                    driver::evaluate_stream(&mut s, &mut ot, &mut e, &shape, gates, &blocks)
                        .expect("gc");
                    t.elapsed()
                }
            })
        })
        .collect();
    let t = median(batched);
    println!(
        "2PC, {batch} compacted AES in one streamed circuit: {:.0} AES/s ({:.2} M AND gates/s)",
        batch as f64 / t.as_secs_f64(),
        (batch * counts.and) as f64 / t.as_secs_f64() / 1e6
    );
}
