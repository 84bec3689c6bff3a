//! Half-gates garbling and evaluation alone (one thread, no I/O), per AND gate, on circuits
//! of different shapes: a chain of dependent AND gates (no two can be hashed together), the
//! selection `⊕ᵢ sᵢ ∧ xᵢ` and the bitwise multiplexer the ORAM circuits are made of (many
//! independent AND gates), and AES-128 from its Bristol file.
//!
//! Run with
//! `cargo bench -p doram-twopc --bench gc -- --warm-up-time 1 --measurement-time 3`
//! (append a filter such as `garble/select` to run a subset).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use doram_twopc::builder::compact_wires;
use doram_twopc::gc::{AND_TABLE_BYTES, random_delta};
use doram_twopc::{Builder, Circuit, Evaluator, Garbler, bristol};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use std::hint::black_box;

/// Slots and bits per slot of the selection and multiplexer circuits.
const SLOTS: usize = 32;
const BITS: usize = 512;

/// `⊕ᵢ sᵢ ∧ xᵢ` over [`SLOTS`] garbler bits `sᵢ` and evaluator words `xᵢ` of [`BITS`] bits.
fn select() -> Circuit {
    let mut b = Builder::new();
    let s = b.garbler_bits(SLOTS);
    let xs = b.evaluator_bits(SLOTS * BITS);
    let mut acc = vec![doram_twopc::Bit::ZERO; BITS];
    for (&si, x) in s.iter().zip(xs.chunks(BITS)) {
        for (a, &xb) in acc.iter_mut().zip(x) {
            let t = b.and(si, xb);
            *a = b.xor(*a, t);
        }
    }
    b.output_bits(&acc);
    compact_wires(&b.finish().expect("select circuit"))
}

/// [`SLOTS`] multiplexers of [`BITS`] bits in a row, each choosing between the last result
/// and a fresh evaluator word by a garbler bit.
fn mux() -> Circuit {
    let mut b = Builder::new();
    let s = b.garbler_bits(SLOTS);
    let xs = b.evaluator_bits((SLOTS + 1) * BITS);
    let mut acc = xs[..BITS].to_vec();
    for (&si, x) in s.iter().zip(xs[BITS..].chunks(BITS)) {
        for (a, &xb) in acc.iter_mut().zip(x) {
            *a = b.mux_bit(si, *a, xb);
        }
    }
    b.output_bits(&acc);
    compact_wires(&b.finish().expect("mux circuit"))
}

/// AES-128 from its Bristol file.
fn aes() -> Circuit {
    let text = include_bytes!("../tests/data/aes_128.txt");
    let parsed = bristol::parse(text).expect("the AES-128 Bristol file");
    compact_wires(&parsed.two_party(1).expect("two parties"))
}

fn circuits() -> Vec<(&'static str, Circuit)> {
    vec![
        ("chain", Circuit::and_chain(1 << 14).expect("chain")),
        ("select", select()),
        ("mux", mux()),
        ("aes128", aes()),
    ]
}

fn garble_and_evaluate(c: &mut Criterion) {
    let mut rng = ChaCha12Rng::seed_from_u64(7);
    for (name, circuit) in circuits() {
        let inputs = circuit.garbler_inputs() + circuit.evaluator_inputs();
        let delta = random_delta(&mut rng);
        let zero: Vec<u128> = (0..inputs).map(|_| rng.random()).collect();
        let bits: Vec<bool> = (0..inputs).map(|_| rng.random()).collect();
        let active: Vec<u128> = zero
            .iter()
            .zip(&bits)
            .map(|(&z, &b)| if b { z ^ delta } else { z })
            .collect();
        let mut garbler = Garbler::new(delta, circuit.wires()).expect("delta");
        garbler.set_input_labels(&zero).expect("inputs");
        let mut tables = Vec::with_capacity(AND_TABLE_BYTES * circuit.and_gates());
        garbler
            .garble_batch(circuit.gates(), &mut tables)
            .expect("garble");

        let mut g = c.benchmark_group(format!("garble/{name}"));
        g.throughput(Throughput::Elements(circuit.and_gates() as u64));
        g.bench_function("half_gates", |b| {
            b.iter(|| {
                tables.clear();
                garbler.resume_at(0);
                garbler.set_input_labels(&zero).expect("inputs");
                garbler
                    .garble_batch(black_box(circuit.gates()), &mut tables)
                    .expect("garble");
            })
        });
        g.finish();

        let mut g = c.benchmark_group(format!("evaluate/{name}"));
        g.throughput(Throughput::Elements(circuit.and_gates() as u64));
        let mut evaluator = Evaluator::new(circuit.wires());
        g.bench_function("half_gates", |b| {
            b.iter(|| {
                evaluator.resume_at(0);
                evaluator.set_input_labels(&active).expect("inputs");
                let mut pos = 0;
                let done = evaluator
                    .eval_batch(black_box(circuit.gates()), &tables, &mut pos)
                    .expect("evaluate");
                assert_eq!(done, circuit.gates().len());
            })
        });
        g.finish();
    }
}

/// The benchmark group (a private module, so the generated function needs no docs).
mod groups {
    use super::*;
    criterion_group!(benches, garble_and_evaluate);
}
criterion_main!(groups::benches);
