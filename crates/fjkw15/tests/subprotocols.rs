//! Every sub-protocol of FJKW15 §3 run among C, D and E in one process on random inputs,
//! against its plaintext functionality (`doram_fjkw15::ideal`), at odd sizes too.
#![allow(clippy::unwrap_used)]

mod common;

use common::{distinct_indices, parties, random_key, rng, test_seed};
use doram_core::PartyId;
use doram_fjkw15::Fjkw15Error;
use doram_fjkw15::bits::Strings;
use doram_fjkw15::ideal;
use doram_fjkw15::msgs::{WireMessage, receive};
use doram_fjkw15::party::Role;
use doram_fjkw15::sample::permutation;
use doram_fjkw15::shift::{CellFlip, ShiftMap, ShiftParams};
use doram_fjkw15::ss_cot::CotParams;
use doram_fjkw15::ss_iot::IotParams;
use doram_fjkw15::xot::XotParams;
use rand::Rng;

/// Keys b that equal a exactly where `equal` says so.
fn keys_b(rng: &mut impl Rng, a: &[u128], bits: usize, equal: impl Fn(usize) -> bool) -> Vec<u128> {
    a.iter()
        .enumerate()
        .map(|(t, &a)| {
            if equal(t) {
                return a;
            }
            loop {
                let b = random_key(rng, bits);
                if b != a {
                    return b;
                }
            }
        })
        .collect()
}

#[test]
fn ss_cot_outputs_exactly_the_matching_messages() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 1);
    for (n, msg_bits, key_bits) in [
        (1, 1, 1),
        (2, 7, 2),
        (7, 13, 5),
        (33, 64, 19),
        (100, 322, 128),
        (57, 0, 9),
        (0, 8, 8),
    ] {
        let params = CotParams::new(n, msg_bits, key_bits).unwrap();
        for density in [0.0, 0.3, 1.0] {
            let m = Strings::random(n, msg_bits, &mut rng);
            let a: Vec<u128> = (0..n).map(|_| random_key(&mut rng, key_bits)).collect();
            // With 1-bit keys a differing b is forced; otherwise random agreement.
            let equal: Vec<bool> = (0..n).map(|_| rng.random_bool(density)).collect();
            let b = keys_b(&mut rng, &a, key_bits, |t| equal[t]);
            let from_e = e.cot_send(&params, &m, &a).unwrap();
            let from_d = d.cot_help(&params, &b).unwrap();
            let got = c.cot_receive(&params, &from_e, &from_d).unwrap();
            assert_eq!(got, ideal::ss_cot(&m, &a, &b), "n = {n}, ℓ = {msg_bits}");
        }
    }
}

#[test]
fn ss_cot_single_match_as_access_needs_it() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 2);
    let params = CotParams::new(40, 100, 13).unwrap();
    for matches in [0usize, 1, 2] {
        let m = Strings::random(40, 100, &mut rng);
        let a: Vec<u128> = (0..40).map(|_| random_key(&mut rng, 13)).collect();
        let hits = distinct_indices(&mut rng, 40, matches);
        let b = keys_b(&mut rng, &a, 13, |t| hits.contains(&t));
        let from_e = e.cot_send(&params, &m, &a).unwrap();
        let from_d = d.cot_help(&params, &b).unwrap();
        let got = c.cot_receive_one(&params, &from_e, &from_d);
        match matches {
            1 => assert_eq!(got.unwrap(), (hits[0], m.get(hits[0]).to_vec())),
            found => assert_eq!(got, Err(Fjkw15Error::Matches { found })),
        }
    }
}

#[test]
fn ss_iot_outputs_the_message_at_the_xor_of_the_index_shares() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 3);
    for (tau, msg_bits) in [(0, 5), (1, 1), (3, 9), (5, 40), (8, 77), (2, 0)] {
        let params = IotParams::new(tau, msg_bits).unwrap();
        let n = params.n();
        for _ in 0..4 {
            let m = Strings::random(n, msg_bits, &mut rng);
            let (j_s, j_h) = (rng.random_range(0..n), rng.random_range(0..n));
            let from_e = e.iot_send(&params, &m, j_s).unwrap();
            let from_d = d.iot_help(&params, j_h).unwrap();
            let got = c.iot_receive(&params, &from_e, &from_d).unwrap();
            assert_eq!(got, ideal::ss_iot(&m, j_s, j_h), "τ = {tau}");
        }
    }
    // Every index, for one small instance.
    let params = IotParams::new(3, 11).unwrap();
    let m = Strings::random(8, 11, &mut rng);
    for j_h in 0..8 {
        let from_e = e.iot_send(&params, &m, 5).unwrap();
        let from_d = d.iot_help(&params, j_h).unwrap();
        assert_eq!(
            c.iot_receive(&params, &from_e, &from_d).unwrap(),
            (5 ^ j_h, m.get(5 ^ j_h).to_vec())
        );
    }
}

#[test]
fn xot_delivers_the_indexed_messages_masked() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 4);
    for (n, k, bits) in [(1, 1, 1), (5, 0, 3), (5, 5, 8), (13, 7, 13), (100, 37, 301)] {
        let params = XotParams::new(n, k, bits).unwrap();
        let m = Strings::random(n, bits, &mut rng);
        let i = distinct_indices(&mut rng, n, k);
        let delta = Strings::random(k, bits, &mut rng);
        let want = ideal::xot(&m, &i, &delta);
        // C sends, E receives.
        let from_c = c.xot_send(&params, &m).unwrap();
        let from_d = d.xot_index(&params, Role::C, &i, &delta).unwrap();
        assert_eq!(e.xot_receive(&params, &from_c, &from_d).unwrap(), want);
        // E sends, C receives.
        let from_e = e.xot_send(&params, &m).unwrap();
        let from_d = d.xot_index(&params, Role::E, &i, &delta).unwrap();
        assert_eq!(c.xot_receive(&params, &from_e, &from_d).unwrap(), want);
    }
}

#[test]
fn ss_xot_reshares_the_indexed_messages() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 5);
    for (n, k, bits) in [(2, 1, 1), (9, 9, 7), (34, 32, 62), (130, 128, 722)] {
        let params = XotParams::new(n, k, bits).unwrap();
        let (s_c, s_e) = (
            Strings::random(n, bits, &mut rng),
            Strings::random(n, bits, &mut rng),
        );
        let i = distinct_indices(&mut rng, n, k);
        // [FJKW15 §3, SS-XOT]: four messages, C → E, E → C, D → E, D → C.
        let c_to_e = c.ss_xot_send(&params, &s_c).unwrap();
        let e_to_c = e.ss_xot_send(&params, &s_e).unwrap();
        let (d_to_e, d_to_c) = d.ss_xot_index(&params, &i).unwrap();
        let out_c = c.ss_xot_finish(&params, &e_to_c, &d_to_c).unwrap();
        let out_e = e.ss_xot_finish(&params, &c_to_e, &d_to_e).unwrap();
        assert_eq!(out_c.xor(&out_e), ideal::ss_xot(&s_c, &s_e, &i));
        if k > 0 && bits >= 32 {
            // Fresh shares: C's output is not E's input share gathered (δ masks it).
            assert_ne!(out_c, s_e.gather(&i));
        }
    }
}

#[test]
fn shift_reshares_the_permuted_sequence() {
    let seed = test_seed();
    let (mut c, mut d, e) = parties(seed);
    let mut rng = rng(seed, 6);
    for (items, bits) in [(1, 3), (5, 17), (12, 100), (44, 327)] {
        let params = ShiftParams::new(items, bits);
        let maps = [
            ShiftMap::new(permutation(items, &mut rng)).unwrap(),
            ShiftMap::rotate_back(items, 1, rng.random_range(0..items)),
            ShiftMap::new(permutation(items, &mut rng))
                .unwrap()
                .with_flip(CellFlip {
                    offset: 1,
                    cell_bits: ((bits - 1) / 2).min(64),
                    cells: 2,
                    rho: rng.random_range(0..2),
                }),
        ];
        for map in maps {
            let (x_c, x_e) = (
                Strings::random(items, bits, &mut rng),
                Strings::random(items, bits, &mut rng),
            );
            let pre = d.shift_prepare(&params, &map).unwrap();
            let (new_c, u) = c.shift_send(&params, &x_c).unwrap();
            let new_e = e.shift_finish(&params, &map, &x_e, &pre, &u).unwrap();
            assert_eq!(new_c.xor(&new_e), ideal::shift(&map, &x_c, &x_e));
            if items * bits >= 64 {
                // A fresh share, not C's old one (equal with probability 2^−(items·ℓ)).
                assert_ne!(new_c, x_c);
            }
        }
    }
}

#[test]
fn shift_rotates_buckets_back_and_flips_a_fields() {
    // A path of 6 buckets of 4 tuples of 1 + 3·2^2 bits: rotated clockwise by σ = 2 and the
    // A fields (four 3-bit cells from bit 1) flipped by ρ = 3, as Access leaves it; Shift with
    // the inverse map restores the original order and cells (notes §4.6, Q1).
    let seed = test_seed();
    let (mut c, mut d, e) = parties(seed);
    let mut rng = rng(seed, 7);
    let (buckets, w, sigma, rho) = (6, 4, 2, 3);
    let flip = CellFlip {
        offset: 1,
        cell_bits: 3,
        cells: 4,
        rho,
    };
    let path = Strings::random(buckets * w, 13, &mut rng);
    let rotate = (0..buckets * w)
        .map(|j| ((j / w + buckets - sigma) % buckets) * w + j % w)
        .collect();
    let rotated = ShiftMap::new(rotate).unwrap().with_flip(flip).apply(&path);
    let back = ShiftMap::rotate_back(buckets, w, sigma).with_flip(flip);
    let params = ShiftParams::new(buckets * w, 13);
    let x_c = Strings::random(buckets * w, 13, &mut rng);
    let x_e = rotated.xor(&x_c);
    let pre = d.shift_prepare(&params, &back).unwrap();
    let (new_c, u) = c.shift_send(&params, &x_c).unwrap();
    let new_e = e.shift_finish(&params, &back, &x_e, &pre, &u).unwrap();
    assert_eq!(new_c.xor(&new_e), path);
}

#[test]
fn instances_back_to_back_stay_in_lockstep_through_the_wire() {
    // Mixed instances on all three pairs, every message encoded and parsed as a peer would.
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 8);
    let roles = *c.roles();
    let (pd, pe) = (roles.party(Role::D), roles.party(Role::E));
    for round in 0..5 {
        let cot = CotParams::new(9 + round, 31, 7).unwrap();
        let m = Strings::random(cot.n(), 31, &mut rng);
        let a: Vec<u128> = (0..cot.n()).map(|_| random_key(&mut rng, 7)).collect();
        let b = keys_b(&mut rng, &a, 7, |t| t == round);
        let from_e = e.cot_send(&cot, &m, &a).unwrap().encode();
        let from_d = d.cot_help(&cot, &b).unwrap().encode();
        let from_e = receive(pe, &from_e, &cot).unwrap();
        let from_d = receive(pd, &from_d, &cot).unwrap();
        let (t, got) = c.cot_receive_one(&cot, &from_e, &from_d).unwrap();
        assert_eq!((t, got.as_slice()), (round, m.get(round)));

        let xot = XotParams::new(20, 3 + round, 9).unwrap();
        let (s_c, s_e) = (
            Strings::random(20, 9, &mut rng),
            Strings::random(20, 9, &mut rng),
        );
        let i = distinct_indices(&mut rng, 20, 3 + round);
        let c_to_e = receive(
            roles.party(Role::C),
            &c.ss_xot_send(&xot, &s_c).unwrap().encode(),
            &xot,
        )
        .unwrap();
        let e_to_c = receive(pe, &e.ss_xot_send(&xot, &s_e).unwrap().encode(), &xot).unwrap();
        let (d_to_e, d_to_c) = d.ss_xot_index(&xot, &i).unwrap();
        let d_to_e = receive(pd, &d_to_e.encode(), &xot).unwrap();
        let d_to_c = receive(pd, &d_to_c.encode(), &xot).unwrap();
        let out = c.ss_xot_finish(&xot, &e_to_c, &d_to_c).unwrap();
        let out = out.xor(&e.ss_xot_finish(&xot, &c_to_e, &d_to_e).unwrap());
        assert_eq!(out, ideal::ss_xot(&s_c, &s_e, &i));
    }
}

#[test]
fn shift_restores_a_plaintext_path_rotated_as_access_leaves_it() {
    // A path of OT_2 from the plaintext forest, encoded in the protocols' tuple layout and
    // rotated by (σ, δ, ρ) as Access leaves it (FJKW15 §4, "Data rotations"); Shift with the
    // inverse map gives back the path.
    use doram_fjkw15::Params;
    use doram_fjkw15::layout::TupleLayout;
    use doram_fjkw15::plain::PlainForest;
    use doram_fjkw15::rotation::Rotation;

    let seed = test_seed();
    let (mut c, mut d, e) = parties(seed);
    let mut rng = rng(seed, 9);
    let params = Params::new(9, 3, 4, 20).unwrap();
    let forest = PlainForest::load(params, 400, |n| vec![n], &mut rng).unwrap();
    let (i, buckets, w) = (2, params.path_buckets(2), params.w());
    let layout = TupleLayout::new(&params, i);
    let leaf = rng.random_range(0..params.leaves(i));
    let slots = forest.tree(i).path(leaf);
    let path = layout.encode_slots(forest.tree(i), &slots);
    // D and E's shifts, Access's rotation of the path, and Shift's inverse map.
    let rot = Rotation::random(&params, i, &mut rng);
    let rotated = rot.forward().apply(&path);
    let shift = ShiftParams::new(buckets * w, layout.bits());
    let back = rot.inverse();
    let x_c = Strings::random(buckets * w, layout.bits(), &mut rng);
    let pre = d.shift_prepare(&shift, &back).unwrap();
    let (new_c, u) = c.shift_send(&shift, &x_c).unwrap();
    let new_e = e
        .shift_finish(&shift, &back, &rotated.xor(&x_c), &pre, &u)
        .unwrap();
    let restored = new_c.xor(&new_e);
    assert_eq!(restored, path);
    for (k, &s) in slots.iter().enumerate() {
        assert_eq!(layout.decode(restored.get(k)), forest.tree(i).tuple(s));
    }
}

#[test]
fn gc_on_shared_inputs_gives_d_the_picks_of_f2ft_and_f2et() {
    use doram_fjkw15::circuits::{self, one_hot};
    use doram_fjkw15::gc::{GcFromC, GcFromE, GcPairs, GcShape};
    use doram_fjkw15::plain;

    let seed = test_seed();
    let (c, d, mut e) = parties(seed);
    let mut rng = rng(seed, 10);
    for (w, leaf) in [(2, false), (5, false), (32, false), (3, true), (128, true)] {
        let per = if leaf { 2 } else { 4 };
        let circuit = if leaf {
            circuits::f2et(w)
        } else {
            circuits::f2ft(w)
        };
        let c_wires: Vec<usize> = (0..w)
            .flat_map(|l| {
                if leaf {
                    vec![2 * l + 1]
                } else {
                    vec![4 * l + 1, 4 * l + 3]
                }
            })
            .collect();
        let shape = GcShape::new(&circuit, &c_wires).unwrap();
        for _ in 0..5 {
            let fb: Vec<bool> = (0..w).map(|_| rng.random_bool(0.7)).collect();
            let agree: Vec<bool> = (0..w).map(|_| rng.random()).collect();
            let lambda = [rng.random_range(0..w), rng.random_range(0..w)];
            let (mut e_bits, mut c_bits, mut all) = (Vec::new(), Vec::new(), Vec::new());
            for l in 0..w {
                let (e_fb, e_b): (bool, bool) = (rng.random(), rng.random());
                e_bits.push(e_fb);
                c_bits.push(e_fb ^ fb[l]);
                all.extend([e_fb, e_fb ^ fb[l]]);
                if !leaf {
                    e_bits.push(e_b);
                    c_bits.push(e_b ^ agree[l]);
                    all.extend([e_b, e_b ^ agree[l]]);
                }
            }
            for x in lambda {
                e_bits.extend(one_hot(x, w));
                all.extend(one_hot(x, w));
            }
            assert_eq!(all.len(), per * w + 2 * w);
            let (to_d, to_c) = e.gc_garble(&circuit, &shape, &e_bits).unwrap();
            // Through the wire, as D and C receive them.
            let to_d: GcFromE = receive(PartyId::P2, &to_d.encode(), &shape).unwrap();
            let to_c: GcPairs = receive(PartyId::P2, &to_c.encode(), &shape).unwrap();
            let from_c = c.gc_choose(&shape, &to_c, &c_bits).unwrap();
            let from_c: GcFromC = receive(PartyId::P0, &from_c.encode(), &shape).unwrap();
            let out = d.gc_evaluate(&circuit, &shape, &to_d, &from_c).unwrap();
            assert_eq!(out, circuit.eval_plain(&all, &[]).unwrap());
            let empty: Vec<bool> = fb.iter().map(|f| !f).collect();
            let moveable: Vec<bool> = (0..w).map(|l| fb[l] && agree[l] && !leaf).collect();
            let want = plain::f2ft(&moveable, &empty, lambda);
            let ones: Vec<usize> = (0..w).filter(|&k| out[k]).collect();
            match want {
                Some(mut p) => {
                    p.sort();
                    assert_eq!(ones, p.to_vec());
                }
                None => assert!(ones.len() < 2),
            }
        }
    }
}
