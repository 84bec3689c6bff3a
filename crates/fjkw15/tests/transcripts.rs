//! Transcript shapes: every sub-protocol sends the same messages, of the same sizes, whatever
//! the secret inputs (messages, keys, indices, shares, permutations) are, and those sizes are
//! the ones `WireMessage::wire_len` announces from the public parameters.
#![allow(clippy::unwrap_used)]

mod common;

use common::{distinct_indices, parties, random_key, rng, test_seed};
use doram_fjkw15::bits::Strings;
use doram_fjkw15::msgs::WireMessage;
use doram_fjkw15::party::{C, D, E, Role};
use doram_fjkw15::sample::permutation;
use doram_fjkw15::shift::{CellFlip, ShiftMap, ShiftParams};
use doram_fjkw15::ss_cot::CotParams;
use doram_fjkw15::ss_iot::IotParams;
use doram_fjkw15::xot::XotParams;
use rand::Rng;
use rand_chacha::ChaCha12Rng;

/// One message: who sent it to whom, and its encoded length.
type Shape = (Role, Role, usize);

/// One protocol run on fresh parties and inputs, returning its messages' shapes.
type Run = fn(&mut (C, D, E), &mut ChaCha12Rng) -> Vec<Shape>;

/// The encoded length of `msg`, checked against its announced length.
fn sized<M: WireMessage>(msg: &M, shape: &M::Shape) -> usize {
    let len = msg.encode().len();
    assert_eq!(len, M::wire_len(shape), "{}", M::WHAT);
    len
}

fn cot_run(p: &mut (C, D, E), rng: &mut ChaCha12Rng) -> Vec<Shape> {
    let params = CotParams::new(23, 45, 11).unwrap();
    let m = Strings::random(23, 45, rng);
    let a: Vec<u128> = (0..23).map(|_| random_key(rng, 11)).collect();
    let b: Vec<u128> = (0..23)
        .map(|t| {
            if rng.random_bool(0.5) {
                a[t]
            } else {
                random_key(rng, 11)
            }
        })
        .collect();
    let from_e = p.2.cot_send(&params, &m, &a).unwrap();
    let from_d = p.1.cot_help(&params, &b).unwrap();
    p.0.cot_receive(&params, &from_e, &from_d).unwrap();
    vec![
        (Role::E, Role::C, sized(&from_e, &params)),
        (Role::D, Role::C, sized(&from_d, &params)),
    ]
}

fn iot_run(p: &mut (C, D, E), rng: &mut ChaCha12Rng) -> Vec<Shape> {
    let params = IotParams::new(4, 23).unwrap();
    let m = Strings::random(16, 23, rng);
    let from_e = p.2.iot_send(&params, &m, rng.random_range(0..16)).unwrap();
    let from_d = p.1.iot_help(&params, rng.random_range(0..16)).unwrap();
    p.0.iot_receive(&params, &from_e, &from_d).unwrap();
    vec![
        (Role::E, Role::C, sized(&from_e, &params)),
        (Role::D, Role::C, sized(&from_d, &params)),
    ]
}

fn ss_xot_run(p: &mut (C, D, E), rng: &mut ChaCha12Rng) -> Vec<Shape> {
    let params = XotParams::new(38, 36, 70).unwrap();
    let (s_c, s_e) = (Strings::random(38, 70, rng), Strings::random(38, 70, rng));
    let i = distinct_indices(rng, 38, 36);
    let c_to_e = p.0.ss_xot_send(&params, &s_c).unwrap();
    let e_to_c = p.2.ss_xot_send(&params, &s_e).unwrap();
    let (d_to_e, d_to_c) = p.1.ss_xot_index(&params, &i).unwrap();
    p.0.ss_xot_finish(&params, &e_to_c, &d_to_c).unwrap();
    p.2.ss_xot_finish(&params, &c_to_e, &d_to_e).unwrap();
    vec![
        (Role::C, Role::E, sized(&c_to_e, &params)),
        (Role::E, Role::C, sized(&e_to_c, &params)),
        (Role::D, Role::E, sized(&d_to_e, &params)),
        (Role::D, Role::C, sized(&d_to_c, &params)),
    ]
}

fn shift_run(p: &mut (C, D, E), rng: &mut ChaCha12Rng) -> Vec<Shape> {
    let params = ShiftParams::new(28, 53);
    let flip = CellFlip {
        offset: 5,
        cell_bits: 12,
        cells: 4,
        rho: rng.random_range(0..4),
    };
    let map = ShiftMap::new(permutation(28, rng)).unwrap().with_flip(flip);
    let (x_c, x_e) = (Strings::random(28, 53, rng), Strings::random(28, 53, rng));
    let pre = p.1.shift_prepare(&params, &map).unwrap();
    let (_, u) = p.0.shift_send(&params, &x_c).unwrap();
    p.2.shift_finish(&params, &map, &x_e, &pre, &u).unwrap();
    vec![
        (Role::D, Role::E, sized(&pre, &params)),
        (Role::C, Role::E, sized(&u, &params)),
    ]
}

#[test]
fn shapes_do_not_depend_on_the_secrets() {
    let seed = test_seed();
    let runs: [Run; 4] = [cot_run, iot_run, ss_xot_run, shift_run];
    for (k, run) in runs.into_iter().enumerate() {
        let shapes: Vec<Vec<Shape>> = (0..4u64)
            .map(|r| {
                let mut p = parties(seed.wrapping_add(r));
                run(&mut p, &mut rng(seed, 100 * k as u64 + r))
            })
            .collect();
        assert!(shapes.windows(2).all(|w| w[0] == w[1]), "{shapes:?}");
    }
}

#[test]
fn announced_sizes() {
    // SS-COT: N·(⌈ℓ/8⌉ + 16) from E, 32·N from D.
    let cot = CotParams::new(23, 45, 11).unwrap();
    assert_eq!(doram_fjkw15::msgs::CotFromE::wire_len(&cot), 23 * (6 + 16));
    assert_eq!(doram_fjkw15::msgs::CotFromD::wire_len(&cot), 23 * 32);
    // SS-XOT: N·⌈ℓ/8⌉ per sender message, k·(4 + ⌈ℓ/8⌉) per indicator message.
    let xot = XotParams::new(38, 36, 70).unwrap();
    assert_eq!(doram_fjkw15::msgs::XotFromSender::wire_len(&xot), 38 * 9);
    assert_eq!(
        doram_fjkw15::msgs::XotFromIndicator::wire_len(&xot),
        36 * 13
    );
    let iot = IotParams::new(4, 23).unwrap();
    assert_eq!(doram_fjkw15::msgs::IotFromD::wire_len(&iot), 32);
}
