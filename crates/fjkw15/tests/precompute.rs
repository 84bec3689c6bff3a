//! The pre-computed forms of the sub-protocols that Access and Eviction run: the tagged
//! SS-COT, GC on shared inputs garbled ahead (C's labels from the C–E PRG, E's late labels
//! online), the unmasked SS-XOT with D's pads drawn ahead and the Shift with C's correlation drawn ahead,
//! each against its plaintext functionality (`doram_fjkw15::ideal`), with its messages'
//! announced sizes and parsers. (Whole accesses on material preprocessed ahead and inline run
//! in tests/conformance.rs: the oram kit preprocesses half of its accesses up front.)
#![allow(clippy::unwrap_used)]

mod common;

use common::{distinct_indices, parties, random_key, rng, test_seed};
use doram_core::PartyId;
use doram_fjkw15::Fjkw15Error;
use doram_fjkw15::bits::Strings;
use doram_fjkw15::ideal;
use doram_fjkw15::msgs::{WireMessage, receive};
use doram_fjkw15::party::Role;
use doram_fjkw15::shift::{ShiftMap, ShiftParams};
use doram_fjkw15::ss_cot::{CotParams, TagCotFromD, TagCotFromE};
use doram_fjkw15::xot::XotParams;
use doram_prim::AesPrg;
use rand::Rng;

#[test]
fn tagged_ss_cot_outputs_the_single_match() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 11);
    for (n, msg_bits, key_bits) in [(1, 1, 1), (7, 13, 5), (40, 100, 13), (480, 240, 17)] {
        let params = CotParams::new(n, msg_bits, key_bits).unwrap();
        for matches in [0usize, 1, 2] {
            let matches = matches.min(n);
            let m = Strings::random(n, msg_bits, &mut rng);
            let a: Vec<u128> = (0..n).map(|_| random_key(&mut rng, key_bits)).collect();
            let hits = distinct_indices(&mut rng, n, matches);
            let b: Vec<u128> = (0..n)
                .map(|t| if hits.contains(&t) { a[t] } else { a[t] ^ 1 })
                .collect();
            let from_e = e.cot_send_tagged(&params, &m, &a).unwrap();
            let from_d = d.cot_help_tagged(&params, &b).unwrap();
            assert_eq!(from_e.encode().len(), n * (msg_bits.div_ceil(8) + 8));
            assert_eq!(from_d.encode().len(), 16 * n);
            let got = c.cot_receive_tagged_one(&params, &from_e, &from_d);
            let want = ideal::ss_cot(&m, &a, &b);
            match matches {
                1 => assert_eq!(vec![got.unwrap()], want, "n = {n}"),
                found => assert_eq!(got, Err(Fjkw15Error::Matches { found })),
            }
        }
    }
}

#[test]
fn tagged_ss_cot_messages_are_parsed_and_bounded() {
    let params = CotParams::new(5, 13, 4).unwrap();
    let (e_len, d_len) = (
        TagCotFromE::wire_len(&params),
        TagCotFromD::wire_len(&params),
    );
    assert_eq!((e_len, d_len), (5 * (2 + 8), 5 * 16));
    for len in [0, e_len - 1, e_len + 1] {
        assert!(receive::<TagCotFromE>(PartyId::P2, &vec![0; len], &params).is_err());
    }
    assert!(receive::<TagCotFromD>(PartyId::P1, &vec![0; d_len + 16], &params).is_err());
    // A padding bit above ℓ = 13 in an e_t is refused.
    let mut bytes = vec![0u8; e_len];
    bytes[1] = 0x80;
    assert!(receive::<TagCotFromE>(PartyId::P2, &bytes, &params).is_err());
    assert!(receive::<TagCotFromE>(PartyId::P2, &vec![0; e_len], &params).is_ok());
}

#[test]
fn pregarbled_gc_on_shared_inputs_computes_the_circuit() {
    use doram_fjkw15::gc::{GcLate, GcShape, GcTables};
    let seed = test_seed();
    let (c, d, mut e) = parties(seed);
    let mut rng = rng(seed, 12);
    // F2FT of w slots: C owns 4l+1 and 4l+3, E's shares 4l and 4l+2 come late, λ early.
    for w in [2usize, 5, 32] {
        let circuit = doram_fjkw15::circuits::f2ft(w);
        let c_wires: Vec<usize> = (0..w).flat_map(|l| [4 * l + 1, 4 * l + 3]).collect();
        let late: Vec<usize> = (0..w).flat_map(|l| [4 * l, 4 * l + 2]).collect();
        let shape = GcShape::pregarbled(&circuit, &c_wires, &late).unwrap();
        assert!(GcShape::pregarbled(&circuit, &c_wires, &[1]).is_err());
        for _ in 0..4 {
            let fb: Vec<bool> = (0..w).map(|_| rng.random_bool(0.7)).collect();
            let agree: Vec<bool> = (0..w).map(|_| rng.random()).collect();
            let lambda = [rng.random_range(0..w), rng.random_range(0..w)];
            let (mut e_late, mut c_bits, mut plain) = (Vec::new(), Vec::new(), Vec::new());
            for l in 0..w {
                let (s1, s2): (bool, bool) = (rng.random(), rng.random());
                e_late.extend([fb[l] ^ s1, agree[l] ^ s2]);
                c_bits.extend([s1, s2]);
                plain.extend([fb[l], false, agree[l], false]);
            }
            let mut early = Vec::new();
            for &x in &lambda {
                early.extend(doram_fjkw15::circuits::one_hot(x, w));
            }
            plain.extend(early.iter().copied());
            // C and E draw Δ and C's zero labels from one sub-seed of their PRG.
            let sub = doram_core::Seed(rng.random::<[u8; 16]>());
            let (tables, keys) = e
                .gc_pregarble(&circuit, &shape, &early, &mut AesPrg::new(sub))
                .unwrap();
            let from_c = c
                .gc_prelabels(&shape, &c_bits, &mut AesPrg::new(sub))
                .unwrap();
            let late_msg = e.gc_late(&keys, &e_late).unwrap();
            // Through the parsers, as the driver receives them.
            let tables: GcTables = receive(PartyId::P2, &tables.encode(), &shape).unwrap();
            let late_msg: GcLate = receive(PartyId::P2, &late_msg.encode(), &shape).unwrap();
            let out = d
                .gc_evaluate_pre(&circuit, &shape, (&tables, &from_c), &late_msg)
                .unwrap();
            assert_eq!(out, circuit.eval_plain(&plain, &[]).unwrap(), "w = {w}");
            // Wrong counts are refused, naming the sender.
            assert!(e.gc_late(&keys, &e_late[1..]).is_err());
            assert!(
                c.gc_prelabels(&shape, &c_bits[1..], &mut AesPrg::new(sub))
                    .is_err()
            );
        }
    }
}

#[test]
fn unmasked_ss_xot_with_pads_drawn_ahead_reshares_the_picked_items() {
    use doram_fjkw15::xot::XotIndices;
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 13);
    for (n, k, bits) in [(3, 1, 1), (13, 11, 13), (100, 98, 301), (300, 298, 9)] {
        let params = XotParams::new(n, k, bits).unwrap();
        let (share_c, share_e) = (
            Strings::random(n, bits, &mut rng),
            Strings::random(n, bits, &mut rng),
        );
        let i = distinct_indices(&mut rng, n, k);
        // Ahead: C's sender message and D's pads of the same instance.
        let c_to_e = c.ss_xot_send(&params, &share_c).unwrap();
        let pads = d.xot_pads(&params, Role::C).unwrap();
        assert!(d.xot_pads(&params, Role::D).is_err());
        // Online: D's positions and its share, E's sender message.
        let (to_e, to_c, share_d) = d.ss_xot_positions(&params, &pads, &i).unwrap();
        // Positions take one byte below N = 256, two above.
        let width = if n <= 256 { 1 } else { 2 };
        assert_eq!(to_e.encode().len(), k * width);
        assert_eq!(XotIndices::wire_len(&params), k * width);
        let to_e: XotIndices = receive(PartyId::P1, &to_e.encode(), &params).unwrap();
        let e_to_c = e.ss_xot_send(&params, &share_e).unwrap();
        let out_c = c.xot_receive_positions(&params, &e_to_c, &to_c).unwrap();
        let out_e = e.xot_receive_positions(&params, &c_to_e, &to_e).unwrap();
        let three = out_c.xor(&out_e).xor(&share_d);
        assert_eq!(three, ideal::ss_xot(&share_c, &share_e, &i));
        let other = XotParams::new(n + 1, k, bits).unwrap();
        assert!(d.ss_xot_positions(&other, &pads, &i).is_err());
        // A position not below N is refused.
        if n < 256 {
            let mut bad = vec![0u8; k];
            bad[0] = n as u8;
            assert!(receive::<XotIndices>(PartyId::P1, &bad, &params).is_err());
        }
    }
}

#[test]
fn shift_with_keys_drawn_ahead_applies_the_map() {
    let seed = test_seed();
    let (mut c, mut d, e) = parties(seed);
    let mut rng = rng(seed, 14);
    for (items, bits) in [(1, 5), (6, 33), (97, 200)] {
        let params = ShiftParams::new(items, bits);
        let mut source: Vec<usize> = (0..items).collect();
        source.rotate_left(rng.random_range(0..items));
        let map = ShiftMap::new(source).unwrap();
        let (x_c, x_e) = (
            Strings::random(items, bits, &mut rng),
            Strings::random(items, bits, &mut rng),
        );
        let keys = c.shift_keys(&params);
        let from_d = d.shift_prepare(&params, &map).unwrap();
        let u = c.shift_send_keyed(&params, &keys, &x_c).unwrap();
        let y_e = e.shift_finish(&params, &map, &x_e, &from_d, &u).unwrap();
        assert_eq!(keys.share().xor(&y_e), ideal::shift(&map, &x_c, &x_e));
        let short = Strings::random(items + 1, bits, &mut rng);
        assert!(c.shift_send_keyed(&params, &keys, &short).is_err());
    }
}
