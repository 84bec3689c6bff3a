//! Three-halves garbling (RR21): every input of one AND gate, random circuits against
//! plaintext, batches against gate by gate, the table encoding, wrong labels, and whole 2PC
//! runs (Bristol AES-128 and SHA-256 known answers, transcript shapes, scheme mismatch).
#![allow(clippy::unwrap_used)]

mod common;

use common::{mesh, random_bits, run2, test_rng};
use doram_twopc::gc::{Circuit, CircuitShape, Gate, WireId, random_delta};
use doram_twopc::three_halves::{Evaluator, Garbler, Tables, table_bytes};
use doram_twopc::{driver, insecure_rng_for_tests};
use rand::Rng;

/// Every input pair of one AND gate, for every value of the control matrices' random bits and
/// many labels and Δs (so both permute bits of each input take both values): the evaluator
/// gets the label of `x ∧ y`.
#[test]
fn one_and_gate_every_input() {
    let mut rng = test_rng("one AND gate");
    for _ in 0..256 {
        let delta = random_delta(&mut rng);
        let (a0, b0): (u128, u128) = (rng.random(), rng.random());
        for s in [(false, false), (false, true), (true, false), (true, true)] {
            let mut g = Garbler::new(delta, 0, &mut rng).unwrap();
            let (c0, t) = g.and_table(a0, b0, s);
            for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
                let a = a0 ^ if x { delta } else { 0 };
                let b = b0 ^ if y { delta } else { 0 };
                let c = Evaluator::new(0).and_eval(a, b, t);
                let want = c0 ^ if x & y { delta } else { 0 };
                assert_eq!(c, want, "s {s:?} x {x} y {y}");
            }
        }
    }
}

/// A small circuit builder for the tests.
struct Builder {
    wires: WireId,
    gates: Vec<Gate>,
}

impl Builder {
    fn new(inputs: usize) -> Self {
        Builder {
            wires: inputs as WireId,
            gates: Vec::new(),
        }
    }
    fn push(&mut self, gate: impl Fn(WireId) -> Gate) -> WireId {
        self.wires += 1;
        self.gates.push(gate(self.wires - 1));
        self.wires - 1
    }
}

fn random_circuit(rng: &mut impl Rng, g: usize, e: usize, gates: usize) -> Circuit {
    let mut b = Builder::new(g + e);
    for _ in 0..gates {
        let x = rng.random_range(0..b.wires);
        let y = rng.random_range(0..b.wires);
        match rng.random_range(0..5) {
            0 | 1 => b.push(|out| Gate::And { a: x, b: y, out }),
            2 | 3 => b.push(|out| Gate::Xor { a: x, b: y, out }),
            _ => b.push(|out| Gate::Inv { a: x, out }),
        };
    }
    let outputs = (0..16).map(|_| rng.random_range(0..b.wires)).collect();
    Circuit::new(g, e, b.wires as usize, b.gates, outputs).unwrap()
}

/// Sets random input labels: the garbler's false labels and the evaluator's active ones.
fn set_inputs(g: &mut Garbler, e: &mut Evaluator, bits: &[bool], rng: &mut impl Rng) {
    for (w, &bit) in (0..).zip(bits) {
        g.set_zero_label(w, rng.random()).unwrap();
        e.set_label(w, g.label(w, bit).unwrap()).unwrap();
    }
}

/// Garbles and evaluates in one thread, no OT; the tables go through their wire encoding.
fn garble_locally(
    g: &mut Garbler,
    e: &mut Evaluator,
    c: &Circuit,
    x: &[bool],
    y: &[bool],
    rng: &mut impl Rng,
) -> Vec<bool> {
    g.reset_wires(c.wires());
    e.reset_wires(c.wires());
    set_inputs(g, e, &[x, y].concat(), rng);
    let mut tables = Tables::new();
    for gate in c.gates() {
        g.garble(gate, &mut tables).unwrap();
    }
    let n = c.and_gates();
    let bytes = tables.front(n).unwrap().to_vec();
    assert_eq!(bytes.len(), table_bytes(n));
    let tables = Tables::decode(doram_core::PartyId::P0, "tables", bytes, n).unwrap();
    let mut pos = 0;
    for gate in c.gates() {
        e.eval(gate, &tables, &mut pos).unwrap();
    }
    assert_eq!(pos, n);
    // Every wire carries the label of its plaintext value.
    let d = g.decoding_bits(c.outputs()).unwrap();
    e.decode(c.outputs(), &d).unwrap()
}

#[test]
fn random_circuits_evaluate_as_in_plaintext() {
    let mut rng = test_rng("three-halves random circuits");
    let delta = random_delta(&mut rng);
    // One garbler and evaluator for all circuits: the AND counter (the tweaks) runs on.
    let mut g = Garbler::new(delta, 0, &mut rng).unwrap();
    let mut e = Evaluator::new(0);
    for round in 0..200 {
        let (gi, ei) = (rng.random_range(1..10), rng.random_range(0..10));
        let n_gates = rng.random_range(1..300);
        let c = random_circuit(&mut rng, gi, ei, n_gates);
        let x = random_bits(&mut rng, gi);
        let y = random_bits(&mut rng, ei);
        let got = garble_locally(&mut g, &mut e, &c, &x, &y, &mut rng);
        assert_eq!(got, c.eval_plain(&x, &y).unwrap(), "circuit {round}");
    }
}

/// Garbling in batches split at random points gives the tables of garbling gate by gate (the
/// same seed gives the same random control bits); the evaluator, handed the tables as whole
/// groups in several messages, resumes where it stopped and gets the same outputs.
#[test]
fn batches_and_messages_match_gate_by_gate() {
    use rand::SeedableRng;
    let mut rng = test_rng("three-halves batches");
    let delta = random_delta(&mut rng);
    for round in 0..50 {
        let (gi, ei) = (rng.random_range(1..10), rng.random_range(0..10));
        let n_gates = rng.random_range(1..400);
        let c = random_circuit(&mut rng, gi, ei, n_gates);
        let bits = random_bits(&mut rng, gi + ei);
        let labels: Vec<u128> = (0..gi + ei).map(|_| rng.random()).collect();
        let seed: u64 = rng.random();
        let start = |rng_seed: u64| {
            let mut coins = rand_chacha::ChaCha12Rng::seed_from_u64(rng_seed);
            let mut g = Garbler::new(delta, c.wires(), &mut coins).unwrap();
            let mut e = Evaluator::new(c.wires());
            for (w, (&bit, &l)) in (0..).zip(bits.iter().zip(&labels)) {
                g.set_zero_label(w, l).unwrap();
                e.set_label(w, g.label(w, bit).unwrap()).unwrap();
            }
            (g, e)
        };
        let (mut g1, mut e1) = start(seed);
        let mut t1 = Tables::new();
        for gate in c.gates() {
            g1.garble(gate, &mut t1).unwrap();
        }
        let (mut g2, mut e2) = start(seed);
        let mut t2 = Tables::new();
        let gates = c.gates();
        let mut i = 0;
        while i < gates.len() {
            let j = rng.random_range(i + 1..=gates.len());
            g2.garble_batch(&gates[i..j], &mut t2).unwrap();
            i = j;
        }
        let n = c.and_gates();
        assert_eq!(t1, t2, "circuit {round}: tables");
        // Gate by gate, all tables at once.
        let all = Tables::decode(
            doram_core::PartyId::P0,
            "t",
            t1.front(n).unwrap().to_vec(),
            n,
        )
        .unwrap();
        let mut pos = 0;
        for gate in gates {
            e1.eval(gate, &all, &mut pos).unwrap();
        }
        // In batches, the tables in messages of random whole numbers of groups.
        let (mut done, mut pos, mut left) = (0, 0, n);
        let mut msg = Tables::new();
        while done < gates.len() {
            done += e2.eval_batch(&gates[done..], &msg, &mut pos).unwrap();
            if done < gates.len() {
                assert_eq!(pos, msg.ands());
                let k = (8 * rng.random_range(1..4)).min(left);
                let bytes = t2.front(k).unwrap().to_vec();
                t2.drop_front(k).unwrap();
                msg = Tables::decode(doram_core::PartyId::P0, "t", bytes, k).unwrap();
                left -= k;
                pos = 0;
            }
        }
        assert_eq!((left, pos), (0, msg.ands()));
        let d = g2.decoding_bits(c.outputs()).unwrap();
        let out = e2.decode(c.outputs(), &d).unwrap();
        assert_eq!(out, e1.decode(c.outputs(), &d).unwrap(), "circuit {round}");
        assert_eq!(out, c.eval_plain(&x_of(&bits, gi), &bits[gi..]).unwrap());
    }
}

fn x_of(bits: &[bool], g: usize) -> Vec<bool> {
    bits[..g].to_vec()
}

#[test]
fn tables_take_one_and_a_half_labels_and_five_bits_per_and_gate() {
    // κ = 128: 1.5κ + 5 = 197 bits per AND gate, exactly, in whole groups of 8.
    assert_eq!(table_bytes(8), 197);
    assert_eq!(table_bytes(8 * 4096) * 8, 197 * 8 * 4096);
    assert_eq!(table_bytes(1), 25);
    assert_eq!(table_bytes(3), 3 * 24 + 2);
    assert_eq!(table_bytes(0), 0);
    let mut rng = test_rng("three-halves sizes");
    for ands in [1usize, 7, 8, 9, 16, 100] {
        let c = Circuit::and_chain(ands).unwrap();
        let mut g = Garbler::new(random_delta(&mut rng), c.wires(), &mut rng).unwrap();
        let mut t = Tables::new();
        g.garble_batch(c.gates(), &mut t).unwrap();
        assert_eq!(t.ands(), ands);
        assert_eq!(
            t.front(ands).unwrap().len(),
            table_bytes(ands),
            "{ands} AND gates"
        );
        // A short last group, once given out, takes no more gates.
        if ands % 8 != 0 {
            assert!(g.garble_batch(c.gates(), &mut t).is_err());
        }
        // Tables leave in whole groups or all at once.
        if ands > 8 {
            assert!(t.front(ands - 1).is_err());
        }
    }
}

#[test]
fn malformed_table_messages_are_refused() {
    use doram_core::PartyId;
    let mut rng = test_rng("three-halves malformed");
    let c = Circuit::and_chain(3).unwrap();
    let mut g = Garbler::new(random_delta(&mut rng), c.wires(), &mut rng).unwrap();
    let mut t = Tables::new();
    g.garble_batch(c.gates(), &mut t).unwrap();
    let good = t.front(3).unwrap().to_vec();
    assert_eq!(good.len(), 74);
    assert!(Tables::decode(PartyId::P0, "t", good.clone(), 3).is_ok());
    assert!(Tables::decode(PartyId::P0, "t", good[..73].to_vec(), 3).is_err());
    assert!(Tables::decode(PartyId::P0, "t", good.clone(), 2).is_err());
    // 15 control bits in two bytes: the last byte's top bit is padding.
    let mut bad = good.clone();
    bad[73] |= 0x80;
    let err = Tables::decode(PartyId::P0, "t", bad, 3).unwrap_err();
    assert_eq!(err.peer, PartyId::P0);
    // The evaluator stops at an AND gate without a table rather than read past the end.
    let mut e = Evaluator::new(c.wires());
    let one = Tables::decode(PartyId::P0, "t", good[..25].to_vec(), 0);
    assert!(one.is_err());
    assert!(e.eval(&c.gates()[0], &Tables::new(), &mut 0).is_err());
}

#[test]
fn wrong_labels_do_not_decode_to_the_right_output() {
    // An evaluator holding a label that is neither of its wire's labels gets an output label
    // that is neither of the output's labels (with overwhelming probability).
    let mut rng = test_rng("three-halves wrong labels");
    for flip in [1u128 << 1, 1 << 64, 1 << 127] {
        let c = Circuit::and_chain(16).unwrap();
        let delta = random_delta(&mut rng);
        let mut g = Garbler::new(delta, c.wires(), &mut rng).unwrap();
        let mut e = Evaluator::new(c.wires());
        for (w, bit) in [(0u32, true), (1, true)] {
            g.set_zero_label(w, rng.random()).unwrap();
            let l = g.label(w, bit).unwrap();
            e.set_label(w, if w == 0 { l ^ flip } else { l }).unwrap();
        }
        let mut t = Tables::new();
        g.garble_batch(c.gates(), &mut t).unwrap();
        let t = Tables::decode(
            doram_core::PartyId::P0,
            "t",
            t.front(16).unwrap().to_vec(),
            16,
        )
        .unwrap();
        assert_eq!(
            e.eval_batch(c.gates(), &t, &mut 0).unwrap(),
            c.gates().len()
        );
        let out = c.outputs()[0];
        let l = e.label(out).unwrap();
        let l0 = g.zero_label(out).unwrap();
        assert!(l != l0 && l != l0 ^ delta, "flip {flip:x}");
    }
}

/// A two-party run of `c` with three-halves garbling over IKNP, transcripts recorded; the
/// outputs and both transcripts.
fn run_2pc(
    c: &Circuit,
    x: &[bool],
    y: &[bool],
    seed: u64,
) -> (
    (Vec<bool>, doram_net::Transcript),
    (Vec<bool>, doram_net::Transcript),
) {
    run2(
        mesh(),
        |mut s| {
            s.record_transcript(true);
            let mut rng = insecure_rng_for_tests(seed);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
            let mut g = Garbler::new(delta, c.wires(), &mut rng).unwrap();
            let out = driver::garble(&mut s, &mut ot, &mut g, c, x, &mut rng).unwrap();
            (out, s.take_transcript().unwrap())
        },
        |mut s| {
            s.record_transcript(true);
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
            let mut e = Evaluator::new(c.wires());
            let out = driver::evaluate(&mut s, &mut ot, &mut e, c, y).unwrap();
            (out, s.take_transcript().unwrap())
        },
    )
}

#[test]
fn two_party_runs_compute_the_circuit_with_input_independent_transcripts() {
    let mut rng = test_rng("three-halves 2PC");
    let c = random_circuit(&mut rng, 8, 8, 400);
    let mut shapes = Vec::new();
    for seed in [10u64, 20, 30] {
        let x = random_bits(&mut rng, 8);
        let y = random_bits(&mut rng, 8);
        let ((gout, gt), (eout, et)) = run_2pc(&c, &x, &y, seed);
        let want = c.eval_plain(&x, &y).unwrap();
        assert_eq!(gout, want);
        assert_eq!(eout, want);
        shapes.push((gt, et));
    }
    assert!(shapes.windows(2).all(|w| w[0] == w[1]));
    // At the garbler: base OT (32 received, 128 points sent), the scheme tag and input labels
    // 1 + 8·16, the COT of 8 (one 128-block), the tables, decoding bits and output 2 bytes each.
    let bytes: Vec<u64> = shapes[0].0.events.iter().map(|e| e.bytes).collect();
    let tables = table_bytes(c.and_gates()) as u64;
    assert_eq!(bytes, [32, 4096, 1 + 128, 2048, tables, 2, 2]);
}

/// The gates of `w ← (w ⊕ y) ∧ x`, `steps` times after `w = x ∧ y`, generated on the fly.
fn chain_gates(steps: usize) -> impl Iterator<Item = Gate> + Clone {
    std::iter::once(Gate::And { a: 0, b: 1, out: 2 }).chain((0..steps as WireId).flat_map(|i| {
        let w = 2 + 2 * i;
        [
            Gate::Xor {
                a: w,
                b: 1,
                out: w + 1,
            },
            Gate::And {
                a: w + 1,
                b: 0,
                out: w + 2,
            },
        ]
    }))
}

#[test]
fn streams_of_several_table_messages() {
    // More AND gates than one table message holds, not a whole number of groups.
    let steps = driver::ANDS_PER_MSG + 100;
    let shape = CircuitShape {
        garbler_inputs: 1,
        evaluator_inputs: 1,
        wires: 3 + 2 * steps,
        and_gates: steps + 1,
        outputs: vec![2 + 2 * steps as WireId],
    };
    let c = Circuit::new(
        1,
        1,
        shape.wires,
        chain_gates(steps).collect(),
        shape.outputs.clone(),
    )
    .unwrap();
    for (x, y) in [(false, false), (true, false), (true, true)] {
        let (g, e) = run2(
            mesh(),
            |mut s| {
                let mut rng = insecure_rng_for_tests(40);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
                let mut g = Garbler::new(delta, 0, &mut rng).unwrap();
                driver::garble_stream(
                    &mut s,
                    &mut ot,
                    &mut g,
                    &shape,
                    chain_gates(steps),
                    &[x],
                    &mut rng,
                )
                .unwrap()
            },
            |mut s| {
                let mut ot =
                    driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(41)).unwrap();
                let mut e = Evaluator::new(0);
                driver::evaluate_stream(&mut s, &mut ot, &mut e, &shape, chain_gates(steps), &[y])
                    .unwrap()
            },
        );
        let want = c.eval_plain(&[x], &[y]).unwrap();
        assert_eq!(g, want);
        assert_eq!(e, want);
    }
}

#[test]
fn a_scheme_mismatch_is_a_clear_error() {
    use doram_twopc::{GarblingScheme, TheirScheme, TwopcError, gc};
    let c = Circuit::and_chain(20).unwrap();
    // A half-gates garbler and a three-halves evaluator, and the other way round.
    let (g, e) = run2(
        mesh().timeout(std::time::Duration::from_millis(500)),
        |mut s| -> Result<Vec<bool>, TwopcError> {
            let mut rng = insecure_rng_for_tests(50);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng)?;
            let mut g = gc::Garbler::new(delta, c.wires())?;
            driver::garble(&mut s, &mut ot, &mut g, &c, &[true], &mut rng)
        },
        |mut s| -> Result<Vec<bool>, TwopcError> {
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(51))?;
            let mut e = Evaluator::new(c.wires());
            driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true])
        },
    );
    assert!(g.is_err());
    match e {
        Err(TwopcError::SchemeMismatch { peer, ours, theirs }) => {
            assert_eq!(peer, doram_core::PartyId::P0);
            assert_eq!(ours, GarblingScheme::ThreeHalves);
            assert_eq!(theirs, TheirScheme::Known(GarblingScheme::HalfGates));
        }
        other => panic!("{other:?}"),
    }
    let (g, e) = run2(
        mesh().timeout(std::time::Duration::from_millis(500)),
        |mut s| -> Result<Vec<bool>, TwopcError> {
            let mut rng = insecure_rng_for_tests(52);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng)?;
            let mut g = Garbler::new(delta, c.wires(), &mut rng)?;
            driver::garble(&mut s, &mut ot, &mut g, &c, &[true], &mut rng)
        },
        |mut s| -> Result<Vec<bool>, TwopcError> {
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(53))?;
            let mut e = gc::Evaluator::new(c.wires());
            driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true])
        },
    );
    assert!(g.is_err());
    let e = e.unwrap_err();
    assert!(matches!(e, TwopcError::SchemeMismatch { .. }), "{e}");
    assert!(e.to_string().contains("three-halves"), "{e}");
}
