//! Every message decoder on arbitrary bytes: an error naming the sender or a message that
//! re-encodes to exactly the bytes received; never a panic.
#![allow(clippy::unwrap_used)]

use doram_core::{CodecError, PartyId};
use doram_fjkw15::Params;
use doram_fjkw15::access::{AccessFromD, AccessFromE, AccessShape};
use doram_fjkw15::circuits;
use doram_fjkw15::gc::{GcFromC, GcFromE, GcPairs, GcShape};
use doram_fjkw15::msgs::{
    CotFromD, CotFromE, IotFromD, IotFromE, SeedCtoD, SeedDtoE, SeedEtoC, ShiftFromC, ShiftFromD,
    WireMessage, XotFromIndicator, XotFromSender, receive,
};
use doram_fjkw15::postprocess::{
    FreshLabels, PostFromC, PostFromDtoC, PostFromDtoE, PostShape, WriteFromD,
};
use doram_fjkw15::shift::ShiftParams;
use doram_fjkw15::ss_cot::CotParams;
use doram_fjkw15::ss_iot::IotParams;
use doram_fjkw15::xot::XotParams;
use proptest::prelude::*;
use rand::{RngCore, SeedableRng};

const FROM: PartyId = PartyId::P1;

/// `bytes` from `FROM`: rejected naming `FROM`, or accepted and canonical. With `exact`, only
/// a content fault (padding bit, index out of range) may reject it.
fn check<M: WireMessage>(bytes: &[u8], shape: &M::Shape, exact: bool) -> Result<(), TestCaseError> {
    match receive::<M>(FROM, bytes, shape) {
        Ok(m) => prop_assert_eq!(m.encode(), bytes),
        Err(f) => {
            prop_assert_eq!(f.peer, FROM);
            prop_assert_eq!(f.what, M::WHAT);
            if exact {
                prop_assert!(matches!(f.fault, CodecError::OutOfRange { .. }), "{}", f);
            }
        }
    }
    Ok(())
}

/// Runs `check` for every message type under shapes built from (n, k, bits, τ), on `bytes`
/// (exact = false) or on random bytes of each message's exact length (exact = true).
fn all(
    n: usize,
    k: usize,
    bits: usize,
    tau: u32,
    bytes: &[u8],
    seed: u64,
) -> Result<(), TestCaseError> {
    let cot = CotParams::new(n, bits, 8).unwrap();
    let iot = IotParams::new(tau, bits).unwrap();
    let xot = XotParams::new(n, k.min(n), bits).unwrap();
    let shift = ShiftParams::new(n, bits);
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let mut exact = |len: usize| {
        let mut b = vec![0u8; len];
        rng.fill_bytes(&mut b);
        b
    };
    macro_rules! both {
        ($m:ty, $shape:expr) => {
            check::<$m>(bytes, $shape, false)?;
            check::<$m>(&exact(<$m>::wire_len($shape)), $shape, true)?;
        };
    }
    both!(CotFromE, &cot);
    both!(CotFromD, &cot);
    both!(IotFromE, &iot);
    both!(IotFromD, &iot);
    both!(XotFromSender, &xot);
    both!(XotFromIndicator, &xot);
    both!(ShiftFromC, &shift);
    both!(ShiftFromD, &shift);
    both!(SeedCtoD, &());
    both!(SeedDtoE, &());
    both!(SeedEtoC, &());
    Ok(())
}

/// The same for the messages of Access and PostProcess, under the shapes of tree `i` of a few
/// forests (`which` picks one).
fn access_messages(which: usize, i: usize, bytes: &[u8], seed: u64) -> Result<(), TestCaseError> {
    let params = [
        Params::new(6, 3, 4, 9).unwrap(),
        Params::new(9, 3, 32, 20).unwrap(),
        Params::new(8, 4, 8, 70).unwrap(),
        Params::new(2, 2, 2, 1).unwrap(),
    ][which % 4];
    let i = i % (params.h() + 1);
    let access = AccessShape::new(params, i).unwrap();
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let mut exact = |len: usize| {
        let mut b = vec![0u8; len];
        rng.fill_bytes(&mut b);
        b
    };
    macro_rules! both {
        ($m:ty, $shape:expr) => {
            check::<$m>(bytes, $shape, false)?;
            check::<$m>(&exact(<$m>::wire_len($shape)), $shape, true)?;
        };
    }
    let circuit = if which.is_multiple_of(2) {
        circuits::f2ft(3)
    } else {
        circuits::f2et(4)
    };
    let c_wires: Vec<usize> = if which.is_multiple_of(2) {
        vec![1, 3, 5, 7, 9, 11]
    } else {
        vec![1, 3, 5, 7]
    };
    let gc = GcShape::new(&circuit, &c_wires).unwrap();
    both!(GcFromE, &gc);
    both!(GcPairs, &gc);
    both!(GcFromC, &gc);
    both!(AccessFromD, &access);
    both!(AccessFromE, &access);
    both!(FreshLabels, &params);
    both!(WriteFromD, &params);
    if let Ok(post) = PostShape::new(params, i) {
        both!(PostFromDtoC, &post);
        both!(PostFromDtoE, &post);
        both!(PostFromC, &post);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn access_messages_are_rejected_or_canonical(
        bytes in prop::collection::vec(any::<u8>(), 0..2000),
        which in 0usize..4,
        i in 0usize..5,
        seed in any::<u64>(),
    ) {
        access_messages(which, i, &bytes, seed)?;
    }

    #[test]
    fn arbitrary_bytes_are_rejected_or_canonical(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        n in 0usize..12,
        k in 0usize..12,
        bits in 0usize..70,
        tau in 0u32..4,
        seed in any::<u64>(),
    ) {
        all(n, k, bits, tau, &bytes, seed)?;
    }
}

#[test]
fn exact_lengths_with_set_padding_or_large_indices_are_rejected() {
    // Every shape from the generator's corners, exact lengths only.
    for (n, k, bits, tau) in [(0, 0, 0, 0), (1, 1, 1, 0), (11, 11, 69, 3), (5, 2, 8, 1)] {
        all(n, k, bits, tau, &[], 42).unwrap();
    }
}
