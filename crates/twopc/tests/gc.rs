//! Garbled evaluation against plaintext: random circuits, a hand-built adder and comparator,
//! transcript shapes, and faulty peers.
#![allow(clippy::unwrap_used)]

mod common;

use common::{blamed, mesh, random_bits, run2, tampered, test_rng};
use doram_core::PartyId;
use doram_net::Tamper;
use doram_twopc::gc::{
    AND_TABLE_BYTES, Circuit, CircuitShape, Evaluator, Garbler, Gate, WireId, random_delta,
};
use doram_twopc::{TwopcError, driver, insecure_rng_for_tests};
use rand::Rng;

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
    fn fresh(&mut self) -> WireId {
        self.wires += 1;
        self.wires - 1
    }
    fn xor(&mut self, a: WireId, b: WireId) -> WireId {
        let out = self.fresh();
        self.gates.push(Gate::Xor { a, b, out });
        out
    }
    fn and(&mut self, a: WireId, b: WireId) -> WireId {
        let out = self.fresh();
        self.gates.push(Gate::And { a, b, out });
        out
    }
    fn inv(&mut self, a: WireId) -> WireId {
        let out = self.fresh();
        self.gates.push(Gate::Inv { a, out });
        out
    }
    /// majority(x, y, z) = x ⊕ ((x ⊕ y) ∧ (x ⊕ z)): one AND gate.
    fn maj(&mut self, x: WireId, y: WireId, z: WireId) -> WireId {
        let xy = self.xor(x, y);
        let xz = self.xor(x, z);
        let t = self.and(xy, xz);
        self.xor(x, t)
    }
    fn finish(self, g: usize, e: usize, outputs: Vec<WireId>) -> Circuit {
        Circuit::new(g, e, self.wires as usize, self.gates, outputs).unwrap()
    }
}

/// n-bit adder: garbler's a (wires 0..n), evaluator's b (n..2n), n + 1 output bits. n ANDs.
fn adder(n: usize) -> Circuit {
    let mut b = Builder::new(2 * n);
    let zero = b.xor(0, 0);
    let mut carry = zero;
    let mut out = Vec::new();
    for i in 0..n as WireId {
        let (x, y) = (i, n as WireId + i);
        let xy = b.xor(x, y);
        out.push(b.xor(xy, carry));
        carry = b.maj(x, y, carry);
    }
    out.push(carry);
    b.finish(n, n, out)
}

/// n-bit unsigned comparator a < b: the borrow of a − b, majority(¬a, b, borrow). n ANDs.
fn less_than(n: usize) -> Circuit {
    let mut b = Builder::new(2 * n);
    let mut borrow = b.xor(0, 0);
    for i in 0..n as WireId {
        let na = b.inv(i);
        borrow = b.maj(na, n as WireId + i, borrow);
    }
    b.finish(n, n, vec![borrow])
}

fn to_bits(x: u64, n: usize) -> Vec<bool> {
    (0..n).map(|i| (x >> i) & 1 == 1).collect()
}

fn from_bits(b: &[bool]) -> u64 {
    b.iter().rev().fold(0, |acc, &x| (acc << 1) | u64::from(x))
}

fn random_circuit(rng: &mut impl Rng, g: usize, e: usize, gates: usize) -> Circuit {
    let mut b = Builder::new(g + e);
    for _ in 0..gates {
        let x = rng.random_range(0..b.wires);
        let y = rng.random_range(0..b.wires);
        match rng.random_range(0..5) {
            0 | 1 => b.and(x, y),
            2 | 3 => b.xor(x, y),
            _ => b.inv(x),
        };
    }
    let outputs = (0..16).map(|_| rng.random_range(0..b.wires)).collect();
    b.finish(g, e, outputs)
}

/// Garbles and evaluates in one thread, no OT: the evaluator is handed its labels directly.
fn garble_locally(
    garbler: &mut Garbler,
    evaluator: &mut Evaluator,
    c: &Circuit,
    x: &[bool],
    y: &[bool],
    rng: &mut impl Rng,
) -> Vec<bool> {
    garbler.reset_wires(c.wires());
    evaluator.reset_wires(c.wires());
    for (w, &bit) in (0..).zip(x.iter().chain(y)) {
        garbler.set_zero_label(w, rng.random()).unwrap();
        evaluator
            .set_label(w, garbler.label(w, bit).unwrap())
            .unwrap();
    }
    let mut tables = Vec::new();
    for gate in c.gates() {
        garbler.garble(gate, &mut tables).unwrap();
    }
    assert_eq!(tables.len(), AND_TABLE_BYTES * c.and_gates());
    let mut pos = 0;
    for gate in c.gates() {
        evaluator.eval(gate, &tables, &mut pos).unwrap();
    }
    assert_eq!(pos, tables.len());
    // Every wire carries the label of its plaintext value.
    let d = garbler.decoding_bits(c.outputs()).unwrap();
    evaluator.decode(c.outputs(), &d).unwrap()
}

#[test]
fn random_circuits_evaluate_as_in_plaintext() {
    let mut rng = test_rng("random circuits");
    let delta = random_delta(&mut rng);
    // One garbler and evaluator for all circuits: the AND counter (the tweak) runs on.
    let mut garbler = Garbler::new(delta, 0).unwrap();
    let mut evaluator = Evaluator::new(0);
    for round in 0..200 {
        let (g, e) = (rng.random_range(1..10), rng.random_range(0..10));
        let n_gates = rng.random_range(1..300);
        let c = random_circuit(&mut rng, g, e, n_gates);
        let x = random_bits(&mut rng, g);
        let y = random_bits(&mut rng, e);
        let got = garble_locally(&mut garbler, &mut evaluator, &c, &x, &y, &mut rng);
        assert_eq!(got, c.eval_plain(&x, &y).unwrap(), "circuit {round}");
    }
}

/// The single-gate API (`and_table`, `and_eval`) gives the tables and labels of AND gates
/// garbled and evaluated in a batch, the AND counter running on in both.
#[test]
fn single_and_gates_match_batches() {
    let mut rng = test_rng("single gates");
    let delta = random_delta(&mut rng);
    let (mut batch_g, mut single_g) = (
        Garbler::new(delta, 3).unwrap(),
        Garbler::new(delta, 0).unwrap(),
    );
    let (mut batch_e, mut single_e) = (Evaluator::new(3), Evaluator::new(0));
    let gate = Gate::And { a: 0, b: 1, out: 2 };
    for round in 0..20 {
        let (a0, b0): (u128, u128) = (rng.random(), rng.random());
        let (x, y): (bool, bool) = (rng.random(), rng.random());
        batch_g.set_zero_label(0, a0).unwrap();
        batch_g.set_zero_label(1, b0).unwrap();
        let mut tables = Vec::new();
        batch_g.garble_batch(&[gate], &mut tables).unwrap();
        let (c0, [tg, te]) = single_g.and_table(a0, b0);
        assert_eq!(
            c0,
            batch_g.zero_label(2).unwrap(),
            "round {round}: output label"
        );
        assert_eq!(tables[..16], tg.to_le_bytes(), "round {round}: T_G");
        assert_eq!(tables[16..], te.to_le_bytes(), "round {round}: T_E");
        let (a, b) = (batch_g.label(0, x).unwrap(), batch_g.label(1, y).unwrap());
        batch_e.set_label(0, a).unwrap();
        batch_e.set_label(1, b).unwrap();
        let mut pos = 0;
        assert_eq!(batch_e.eval_batch(&[gate], &tables, &mut pos).unwrap(), 1);
        let c = single_e.and_eval(a, b, [tg, te]);
        assert_eq!(
            c,
            batch_e.label(2).unwrap(),
            "round {round}: evaluated label"
        );
        assert_eq!(
            c,
            batch_g.label(2, x & y).unwrap(),
            "round {round}: the AND's label"
        );
    }
}

/// Garbling and evaluating a circuit in batches (split at random points, the tables handed
/// over in random pieces) gives the same tables and outputs as gate by gate.
#[test]
fn batches_match_gate_by_gate() {
    let mut rng = test_rng("batches");
    let delta = random_delta(&mut rng);
    for round in 0..50 {
        let (g, e) = (rng.random_range(1..10), rng.random_range(0..10));
        let n_gates = rng.random_range(1..400);
        let c = random_circuit(&mut rng, g, e, n_gates);
        let x = random_bits(&mut rng, g);
        let y = random_bits(&mut rng, e);
        let labels: Vec<u128> = (0..g + e).map(|_| rng.random()).collect();
        let setup = |garbler: &mut Garbler, evaluator: &mut Evaluator| {
            for (w, (&bit, &l)) in (0..).zip(x.iter().chain(&y).zip(&labels)) {
                garbler.set_zero_label(w, l).unwrap();
                evaluator
                    .set_label(w, garbler.label(w, bit).unwrap())
                    .unwrap();
            }
        };
        // Gate by gate.
        let (mut g1, mut e1) = (
            Garbler::new(delta, c.wires()).unwrap(),
            Evaluator::new(c.wires()),
        );
        setup(&mut g1, &mut e1);
        let mut t1 = Vec::new();
        for gate in c.gates() {
            g1.garble(gate, &mut t1).unwrap();
        }
        let mut pos = 0;
        for gate in c.gates() {
            e1.eval(gate, &t1, &mut pos).unwrap();
        }
        // In batches.
        let (mut g2, mut e2) = (
            Garbler::new(delta, c.wires()).unwrap(),
            Evaluator::new(c.wires()),
        );
        setup(&mut g2, &mut e2);
        let mut t2 = Vec::new();
        let gates = c.gates();
        let mut i = 0;
        while i < gates.len() {
            let j = rng.random_range(i + 1..=gates.len());
            g2.garble_batch(&gates[i..j], &mut t2).unwrap();
            i = j;
        }
        assert_eq!(t1, t2, "circuit {round}: tables");
        // The evaluator gets the tables in pieces of whole tables and resumes where it stopped.
        let (mut done, mut avail, mut pos) = (0, 0, 0);
        while done < gates.len() {
            done += e2
                .eval_batch(&gates[done..], &t2[..avail], &mut pos)
                .unwrap();
            avail = (avail + AND_TABLE_BYTES * rng.random_range(1..4)).min(t2.len());
        }
        assert_eq!(pos, t2.len());
        let d = g2.decoding_bits(c.outputs()).unwrap();
        let out = e2.decode(c.outputs(), &d).unwrap();
        assert_eq!(out, e1.decode(c.outputs(), &d).unwrap(), "circuit {round}");
        assert_eq!(out, c.eval_plain(&x, &y).unwrap(), "circuit {round}");
    }
}

#[test]
fn wrong_labels_do_not_decode_to_the_right_output() {
    // An evaluator holding a label that is neither of its wire's labels gets a label that is
    // neither output label (with overwhelming probability), so decoding is garbage: check the
    // output label is not one of the garbler's.
    let mut rng = test_rng("wrong labels");
    let c = adder(8);
    let mut garbler = Garbler::new(random_delta(&mut rng), c.wires()).unwrap();
    let mut evaluator = Evaluator::new(c.wires());
    let x = random_bits(&mut rng, 8);
    let y = random_bits(&mut rng, 8);
    for (w, &bit) in (0..).zip(x.iter().chain(&y)) {
        garbler.set_zero_label(w, rng.random()).unwrap();
        let l = garbler.label(w, bit).unwrap();
        evaluator
            .set_label(w, if w == 0 { l ^ 2 } else { l })
            .unwrap();
    }
    let mut tables = Vec::new();
    for gate in c.gates() {
        garbler.garble(gate, &mut tables).unwrap();
    }
    let mut pos = 0;
    for gate in c.gates() {
        evaluator.eval(gate, &tables, &mut pos).unwrap();
    }
    let carry = *c.outputs().last().unwrap();
    let l = evaluator.label(carry).unwrap();
    let l0 = garbler.zero_label(carry).unwrap();
    assert!(l != l0 && l != l0 ^ garbler.delta());
}

fn run_2pc(c: &Circuit, x: &[bool], y: &[bool]) -> (Vec<bool>, Vec<bool>) {
    run2(
        mesh(),
        |mut s| {
            let mut rng = insecure_rng_for_tests(30);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
            let mut g = Garbler::new(delta, c.wires()).unwrap();
            driver::garble(&mut s, &mut ot, &mut g, c, x, &mut rng).unwrap()
        },
        |mut s| {
            let mut ot =
                driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(31)).unwrap();
            let mut e = Evaluator::new(c.wires());
            driver::evaluate(&mut s, &mut ot, &mut e, c, y).unwrap()
        },
    )
}

#[test]
fn adder_over_the_mesh() {
    let mut rng = test_rng("adder");
    for n in [1, 8, 32, 63] {
        let c = adder(n);
        assert_eq!(c.and_gates(), n);
        for _ in 0..3 {
            let mask = if n == 64 { u64::MAX } else { (1 << n) - 1 };
            let (a, b) = (rng.random::<u64>() & mask, rng.random::<u64>() & mask);
            let (g_out, e_out) = run_2pc(&c, &to_bits(a, n), &to_bits(b, n));
            assert_eq!(from_bits(&e_out), a + b, "{a} + {b} on {n} bits");
            assert_eq!(g_out, e_out);
        }
    }
}

#[test]
fn comparator_over_the_mesh() {
    let mut rng = test_rng("comparator");
    let n = 16;
    let c = less_than(n);
    let mut cases: Vec<(u64, u64)> = vec![(0, 0), (0, 1), (1, 0), (65535, 65535), (65534, 65535)];
    cases.extend((0..5).map(|_| (rng.random_range(0..1 << 16), rng.random_range(0..1 << 16))));
    for (a, b) in cases {
        let (_, out) = run_2pc(&c, &to_bits(a, n), &to_bits(b, n));
        assert_eq!(out, vec![a < b], "{a} < {b}");
    }
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

fn chain_shape(steps: usize, and_gates: usize) -> CircuitShape {
    CircuitShape {
        garbler_inputs: 1,
        evaluator_inputs: 1,
        wires: 3 + 2 * steps,
        and_gates,
        outputs: vec![2 + 2 * steps as WireId],
    }
}

fn run_stream(
    steps: usize,
    garbler_ands: usize,
    evaluator_ands: usize,
    x: bool,
    y: bool,
) -> (Result<Vec<bool>, TwopcError>, Result<Vec<bool>, TwopcError>) {
    run2(
        mesh().timeout(std::time::Duration::from_millis(2000)),
        |mut s| {
            let mut rng = insecure_rng_for_tests(30);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng)?;
            let shape = chain_shape(steps, garbler_ands);
            let mut g = Garbler::new(delta, shape.wires)?;
            driver::garble_stream(
                &mut s,
                &mut ot,
                &mut g,
                &shape,
                chain_gates(steps),
                &[x],
                &mut rng,
            )
        },
        |mut s| {
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(31))?;
            let shape = chain_shape(steps, evaluator_ands);
            let mut e = Evaluator::new(shape.wires);
            driver::evaluate_stream(&mut s, &mut ot, &mut e, &shape, chain_gates(steps), &[y])
        },
    )
}

#[test]
fn generated_gates_stream_in_several_chunks() {
    // More AND gates than one table message holds, produced by an iterator: no gate list and
    // no table buffer beyond one message.
    let steps = driver::ANDS_PER_MSG + 100;
    let shape = chain_shape(steps, steps + 1);
    let c = Circuit::new(
        1,
        1,
        shape.wires,
        chain_gates(steps).collect(),
        shape.outputs,
    )
    .unwrap();
    for (x, y) in [(false, false), (true, false), (true, true)] {
        let (g, e) = run_stream(steps, steps + 1, steps + 1, x, y);
        let want = c.eval_plain(&[x], &[y]).unwrap();
        assert_eq!(g.unwrap(), want);
        assert_eq!(e.unwrap(), want);
    }
}

#[test]
fn a_wrong_and_count_is_an_api_misuse() {
    // The chain of 10 steps has 11 AND gates. A garbler told another count refuses its own
    // gates; an evaluator told another count sees tables of a size it does not expect (it
    // cannot tell whose count is wrong). Both fail, neither panics.
    for (ga, ea) in [(10, 11), (12, 11), (10, 10), (12, 12), (11, 10), (11, 12)] {
        let (g, e) = run_stream(10, ga, ea, true, true);
        assert!(g.is_err() && e.is_err(), "{ga} {ea}: {g:?} {e:?}");
        if ga != 11 {
            assert!(
                matches!(g, Err(TwopcError::ApiMisuse(_))),
                "{ga} {ea}: {g:?}"
            );
        }
    }
}

#[test]
fn transcripts_do_not_depend_on_inputs() {
    let c = adder(16);
    let shape = |a: u64, b: u64| {
        run2(
            mesh(),
            |mut s| {
                s.record_transcript(true);
                let mut rng = insecure_rng_for_tests(a);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
                let mut g = Garbler::new(delta, c.wires()).unwrap();
                driver::garble(&mut s, &mut ot, &mut g, &c, &to_bits(a, 16), &mut rng).unwrap();
                s.take_transcript().unwrap()
            },
            |mut s| {
                s.record_transcript(true);
                let mut ot =
                    driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(b)).unwrap();
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut s, &mut ot, &mut e, &c, &to_bits(b, 16)).unwrap();
                s.take_transcript().unwrap()
            },
        )
    };
    let (g1, e1) = shape(1, 2);
    let (g2, e2) = shape(40000, 65535);
    assert_eq!(g1, g2);
    assert_eq!(e1, e2);
    // At the garbler: base OT (A received, 128 points sent), the scheme tag and input labels
    // 1 + 16·16, COT of 16 (one 128-block), tables 16·32, decoding bits 3, output 3.
    let bytes: Vec<u64> = g1.events.iter().map(|e| e.bytes).collect();
    assert_eq!(bytes, [32, 4096, 1 + 256, 2048, 512, 3, 3]);
}

#[test]
fn short_tables_and_labels_are_blamed_on_the_garbler() {
    let c = adder(8);
    // The garbler (P0) is the IKNP sender, hence the base-OT receiver: its frame 0 is its
    // base-OT points, 1 its input labels, 2 the tables.
    for (frame, what) in [(1u64, "garbler input labels"), (2, "garbled tables")] {
        let (_, e) = run2(
            tampered(move |from, _, idx, payload| {
                if from == PartyId::P0 && idx == frame {
                    payload.pop();
                }
                Tamper::Pass
            })
            .timeout(std::time::Duration::from_millis(500)),
            |mut s| -> Result<Vec<bool>, TwopcError> {
                let mut rng = insecure_rng_for_tests(1);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng)?;
                let mut g = Garbler::new(delta, c.wires())?;
                driver::garble(&mut s, &mut ot, &mut g, &c, &[false; 8], &mut rng)
            },
            |mut s| -> Result<Vec<bool>, TwopcError> {
                let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(2))?;
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true; 8])
            },
        );
        let e = e.unwrap_err();
        assert_eq!(blamed(&e), Some(PartyId::P0), "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
}

#[test]
fn malformed_circuits_and_deltas_are_refused() {
    let and = |a, b, out| Gate::And { a, b, out };
    assert!(Circuit::new(1, 1, 3, vec![and(0, 2, 2)], vec![2]).is_err());
    assert!(Circuit::new(1, 1, 3, vec![and(0, 1, 3)], vec![2]).is_err());
    assert!(Circuit::new(1, 1, 3, vec![and(0, 1, 2)], vec![5]).is_err());
    assert!(Circuit::new(2, 2, 3, vec![], vec![]).is_err());
    assert!(matches!(Garbler::new(2, 4), Err(TwopcError::ApiMisuse(_))));
    let mut e = Evaluator::new(3);
    assert!(matches!(
        e.eval(&and(0, 1, 2), &[0; 31], &mut 0),
        Err(TwopcError::ApiMisuse(_))
    ));
    assert!(matches!(
        e.eval(&and(0, 9, 2), &[0; 32], &mut 0),
        Err(TwopcError::ApiMisuse(_))
    ));
}

#[test]
fn padding_bits_of_decoding_and_output_messages_are_checked() {
    // adder(8) has 9 outputs: two bytes, the last with 7 padding bits. P0's frame 3 is the
    // decoding bits; P1's frame 2 is the output it returns.
    let c = adder(8);
    for (culprit, frame, what) in [
        (PartyId::P0, 3u64, "output decoding bits"),
        (PartyId::P1, 2, "circuit output"),
    ] {
        let (g, e) = run2(
            tampered(move |from, _, idx, payload| {
                if from == culprit && idx == frame {
                    payload[1] |= 0x80;
                }
                Tamper::Pass
            })
            .timeout(std::time::Duration::from_millis(500)),
            |mut s| -> Result<Vec<bool>, TwopcError> {
                let mut rng = insecure_rng_for_tests(1);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng)?;
                let mut g = Garbler::new(delta, c.wires())?;
                driver::garble(&mut s, &mut ot, &mut g, &c, &[false; 8], &mut rng)
            },
            |mut s| -> Result<Vec<bool>, TwopcError> {
                let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(2))?;
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true; 8])
            },
        );
        let victim = if culprit == PartyId::P0 { e } else { g };
        let err = victim.unwrap_err();
        assert_eq!(blamed(&err), Some(culprit), "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
}

#[test]
fn a_session_of_three_is_refused() {
    let out = doram_net::run_parties(doram_net::LocalMesh::new(3).build(), "three", |mut s| {
        driver::base_ot_send(&mut s, 1, &mut insecure_rng_for_tests(0)).map(|_| ())
    });
    for r in out {
        assert!(matches!(
            r.unwrap(),
            Err(TwopcError::WrongPartyCount { n_parties: 3 })
        ));
    }
}

#[test]
fn and_chain_has_its_gates_and_value() {
    assert!(Circuit::and_chain(0).is_err());
    for ands in [1usize, 2, 5, 64] {
        let c = Circuit::and_chain(ands).unwrap();
        assert_eq!(c.and_gates(), ands);
        assert_eq!(c.gates().len(), 2 * ands - 1);
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            // w ← x ∧ y, then w ← (w ⊕ y) ∧ x.
            let mut w = x & y;
            for _ in 1..ands {
                w = (w ^ y) & x;
            }
            assert_eq!(c.eval_plain(&[x], &[y]).unwrap(), vec![w], "{ands} {x} {y}");
        }
    }
}

/// Random circuits on labels, their inputs handed over in parts of every shape: the outputs
/// read back with `zero_labels_into` / `labels_into` decode to the plaintext; parts that do not
/// add up to the inputs are refused before anything is sent.
#[test]
fn labels_in_parts_evaluate_as_in_plaintext() {
    let mut rng = test_rng("parts");
    for round in 0..6 {
        let (g, e) = (rng.random_range(0..7), rng.random_range(1..9));
        let c = random_circuit(&mut rng, g, e, 200);
        let bits: Vec<bool> = random_bits(&mut rng, g + e);
        // Cut the inputs at random places (empty parts included).
        let mut cuts: Vec<usize> = (0..3).map(|_| rng.random_range(0..=g + e)).collect();
        cuts.sort_unstable();
        let delta = random_delta(&mut insecure_rng_for_tests(round));
        let zero: Vec<u128> = (0..g + e).map(|_| rng.random()).collect();
        let active: Vec<u128> = zero
            .iter()
            .zip(&bits)
            .map(|(&z, &b)| if b { z ^ delta } else { z })
            .collect();
        let split = |v: &[u128]| -> Vec<Vec<u128>> {
            let mut at = 0;
            let mut parts: Vec<Vec<u128>> = cuts
                .iter()
                .map(|&k| {
                    let p = v[at..k].to_vec();
                    at = k;
                    p
                })
                .collect();
            parts.push(v[at..].to_vec());
            parts
        };
        let (zp, ap) = (split(&zero), split(&active));
        let (zero_out, active_out) = run2(
            mesh(),
            |mut s| {
                let mut garbler = Garbler::new(delta, c.wires()).unwrap();
                let parts: Vec<&[u128]> = zp.iter().map(Vec::as_slice).collect();
                // One label short: refused, nothing sent.
                let short = [&zero[..zero.len() - 1]];
                assert!(driver::garble_on_parts(&mut s, &mut garbler, &c, &short).is_err());
                driver::garble_on_parts(&mut s, &mut garbler, &c, &parts).unwrap();
                let mut out = vec![0; c.outputs().len()];
                garbler.zero_labels_into(c.outputs(), &mut out).unwrap();
                assert!(
                    garbler
                        .zero_labels_into(c.outputs(), &mut out[1..])
                        .is_err()
                );
                out
            },
            |mut s| {
                let mut evaluator = Evaluator::new(c.wires());
                let parts: Vec<&[u128]> = ap.iter().map(Vec::as_slice).collect();
                driver::evaluate_on_parts(&mut s, &mut evaluator, &c, &parts).unwrap();
                let mut out = vec![0; c.outputs().len()];
                evaluator.labels_into(c.outputs(), &mut out).unwrap();
                out
            },
        );
        let mut g_ = Garbler::new(delta, c.wires()).unwrap();
        let mut e_ = Evaluator::new(c.wires());
        let want = garble_locally(&mut g_, &mut e_, &c, &bits[..g], &bits[g..], &mut rng);
        let got: Vec<bool> = zero_out
            .iter()
            .zip(&active_out)
            .map(|(&z, &a)| {
                assert!(a == z || a == z ^ delta, "an output label is neither");
                a != z
            })
            .collect();
        assert_eq!(got, want, "round {round}");
    }
}
