//! Malformed, short, long and mismatched messages, and misuse: typed errors naming the peer,
//! never a panic.
#![allow(clippy::unwrap_used)]

mod common;

use common::{parties, random_key, rng, test_seed};
use doram_core::wire::PeerFault;
use doram_core::{CodecError, PartyId};
use doram_fjkw15::Fjkw15Error;
use doram_fjkw15::bits::Strings;
use doram_fjkw15::msgs::{
    CotFromD, CotFromE, IotFromD, IotFromE, SeedCtoD, ShiftFromC, ShiftFromD, WireMessage,
    XotFromIndicator, XotFromSender, receive,
};
use doram_fjkw15::party::Role;
use doram_fjkw15::shift::{ShiftMap, ShiftParams};
use doram_fjkw15::ss_cot::CotParams;
use doram_fjkw15::ss_iot::IotParams;
use doram_fjkw15::xot::XotParams;

/// Every cut and extension of `bytes` by one byte fails with a length fault naming `peer`.
fn wrong_lengths_rejected<M: WireMessage + std::fmt::Debug>(
    peer: PartyId,
    bytes: &[u8],
    shape: &M::Shape,
) {
    assert!(receive::<M>(peer, bytes, shape).is_ok(), "{}", M::WHAT);
    let mut long = bytes.to_vec();
    long.push(0);
    let cuts = [
        &bytes[..0],
        &bytes[..bytes.len().saturating_sub(1)],
        &long[..],
    ];
    for cut in cuts.into_iter().filter(|c| c.len() != bytes.len()) {
        let e: PeerFault = receive::<M>(peer, cut, shape).unwrap_err();
        assert_eq!(e.peer, peer);
        assert_eq!(e.what, M::WHAT);
        assert_eq!(e.lengths(), Some((bytes.len(), cut.len())));
    }
}

#[test]
fn short_and_long_messages_are_length_faults() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 1);
    let (pc, pd, pe) = (PartyId::P0, PartyId::P1, PartyId::P2);

    let cot = CotParams::new(5, 13, 9).unwrap();
    let m = Strings::random(5, 13, &mut rng);
    let keys: Vec<u128> = (0..5).map(|_| random_key(&mut rng, 9)).collect();
    wrong_lengths_rejected::<CotFromE>(pe, &e.cot_send(&cot, &m, &keys).unwrap().encode(), &cot);
    wrong_lengths_rejected::<CotFromD>(pd, &d.cot_help(&cot, &keys).unwrap().encode(), &cot);

    let iot = IotParams::new(2, 13).unwrap();
    let m4 = Strings::random(4, 13, &mut rng);
    wrong_lengths_rejected::<IotFromE>(pe, &e.iot_send(&iot, &m4, 1).unwrap().encode(), &iot);
    wrong_lengths_rejected::<IotFromD>(pd, &d.iot_help(&iot, 2).unwrap().encode(), &iot);

    let xot = XotParams::new(5, 3, 13).unwrap();
    wrong_lengths_rejected::<XotFromSender>(pc, &c.xot_send(&xot, &m).unwrap().encode(), &xot);
    let delta = Strings::random(3, 13, &mut rng);
    let ind = d.xot_index(&xot, Role::C, &[4, 0, 2], &delta).unwrap();
    wrong_lengths_rejected::<XotFromIndicator>(pd, &ind.encode(), &xot);

    let shift = ShiftParams::new(5, 13);
    let map = ShiftMap::rotate_back(5, 1, 2);
    wrong_lengths_rejected::<ShiftFromD>(
        pd,
        &d.shift_prepare(&shift, &map).unwrap().encode(),
        &shift,
    );
    let (_, u) = c.shift_send(&shift, &m).unwrap();
    wrong_lengths_rejected::<ShiftFromC>(pc, &u.encode(), &shift);

    wrong_lengths_rejected::<SeedCtoD>(pc, &[7; 16], &());
}

#[test]
fn malformed_contents_are_faults() {
    let seed = test_seed();
    let (_, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 2);
    let xot = XotParams::new(5, 3, 13).unwrap();
    let delta = Strings::random(3, 13, &mut rng);
    let mut bytes = d
        .xot_index(&xot, Role::E, &[1, 2, 3], &delta)
        .unwrap()
        .encode();
    // An index ≥ N.
    bytes[..4].copy_from_slice(&5u32.to_le_bytes());
    let f = receive::<XotFromIndicator>(PartyId::P1, &bytes, &xot).unwrap_err();
    assert_eq!(f.peer, PartyId::P1);
    assert!(matches!(f.fault, CodecError::OutOfRange { .. }), "{f}");
    // A padding bit set in a 13-bit string (byte 1 of the first e_t).
    let cot = CotParams::new(2, 13, 4).unwrap();
    let m = Strings::random(2, 13, &mut rng);
    let mut bytes = e.cot_send(&cot, &m, &[1, 2]).unwrap().encode();
    bytes[1] |= 0x80;
    let f = receive::<CotFromE>(PartyId::P2, &bytes, &cot).unwrap_err();
    assert!(matches!(f.fault, CodecError::OutOfRange { .. }), "{f}");
}

#[test]
fn messages_of_another_instance_shape_name_the_sender() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 3);
    let small = CotParams::new(3, 8, 8).unwrap();
    let big = CotParams::new(4, 8, 8).unwrap();
    let m = Strings::random(3, 8, &mut rng);
    let from_e = e.cot_send(&small, &m, &[1, 2, 3]).unwrap();
    let from_d = d.cot_help(&big, &[1, 2, 3, 4]).unwrap();
    match c.cot_receive(&big, &from_e, &from_d) {
        Err(Fjkw15Error::Peer(f)) => assert_eq!(f.peer, PartyId::P2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn inconsistent_senders_are_an_error_not_a_panic() {
    let seed = test_seed();
    let (c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 4);
    let iot = IotParams::new(3, 10).unwrap();
    let m = Strings::random(8, 10, &mut rng);
    let from_e = e.iot_send(&iot, &m, 3).unwrap();
    // D's message of the next instance: its keys do not match E's.
    let _ = d.iot_help(&iot, 1).unwrap();
    let stale = d.iot_help(&iot, 1).unwrap();
    assert!(matches!(
        c.iot_receive(&iot, &from_e, &stale),
        Err(Fjkw15Error::Inconsistent(_))
    ));
}

#[test]
fn misuse_is_refused_before_anything_is_produced() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 5);
    assert!(CotParams::new(3, 8, 129).is_err());
    assert!(XotParams::new(3, 4, 8).is_err());
    assert!(IotParams::new(17, 8).is_err());
    let cot = CotParams::new(3, 8, 4).unwrap();
    let m = Strings::random(3, 8, &mut rng);
    let bad = [
        e.cot_send(&cot, &m, &[1, 2, 16]).map(drop),
        e.cot_send(&cot, &m, &[1, 2]).map(drop),
        e.cot_send(&cot, &Strings::random(3, 9, &mut rng), &[1, 2, 3])
            .map(drop),
        d.cot_help(&cot, &[1, 2, 3, 4]).map(drop),
        e.iot_send(
            &IotParams::new(1, 8).unwrap(),
            &Strings::random(2, 8, &mut rng),
            2,
        )
        .map(drop),
    ];
    assert!(
        bad.iter()
            .all(|r| matches!(r, Err(Fjkw15Error::InvalidInput(_)))),
        "{bad:?}"
    );
    let xot = XotParams::new(5, 2, 8).unwrap();
    let delta = Strings::random(2, 8, &mut rng);
    for (sender, i) in [(Role::C, [1, 1]), (Role::E, [1, 5]), (Role::D, [0, 1])] {
        let r = d.xot_index(&xot, sender, &i, &delta);
        assert!(matches!(r, Err(Fjkw15Error::InvalidInput(_))), "{r:?}");
    }
    assert!(d.ss_xot_index(&xot, &[3, 3]).is_err());
    assert!(c.xot_send(&xot, &m).is_err());
    let shift = ShiftParams::new(3, 8);
    assert!(
        d.shift_prepare(&shift, &ShiftMap::rotate_back(4, 1, 0))
            .is_err()
    );
    assert!(
        c.shift_send(&shift, &Strings::random(2, 8, &mut rng))
            .is_err()
    );
    // After all that, the pairs are still in lockstep: a fresh instance works.
    let from_e = e.cot_send(&cot, &m, &[1, 2, 3]).unwrap();
    let from_d = d.cot_help(&cot, &[0, 2, 0]).unwrap();
    assert_eq!(
        c.cot_receive_one(&cot, &from_e, &from_d).unwrap(),
        (1, m.get(1).to_vec())
    );
}
