//! Out-of-range addresses on the F_p backend: the address conversion checks the whole
//! address against the memory size, and every party — not only C — stops with
//! `Fjkw15Error::AddressOutOfRange`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{rng, test_seed};
use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_fjkw15::Fjkw15Error;
use doram_fjkw15::backend::Fjkw15FpMemory;
use doram_mpc::{Additive, deal_additive};
use doram_net::Session;
use doram_net::testkit::run;
use doram_oram::{InstructionShare, OramError, SharedMemory};

/// Loads `n` random words, reads an in-range address, then accesses `bad`: each party's
/// in-range read result share and the out-of-range access's result.
fn run_with(n: usize, bad: Fp, write: bool, seed: u64) -> Vec<(Additive<Fp>, OramError)> {
    let mut r = rng(seed, 5);
    let memory: Vec<[Additive<Fp>; 3]> = (0..n)
        .map(|_| deal_additive(Fp::random(&mut r), &mut r))
        .collect();
    let good = deal_additive(Fp::from_u64((n - 1) as u64), &mut r);
    let addr = deal_additive(bad, &mut r);
    let value = deal_additive(Fp::from_u64(7), &mut r);
    let out = run(Session::local_mesh(3), |session| {
        let i = session.me().index();
        let mut o = Fjkw15FpMemory::setup(session, n, Seed([i as u8 + 1; 16])).unwrap();
        let mine: Vec<Additive<Fp>> = memory.iter().map(|m| m[i]).collect();
        o.init(&mine).unwrap();
        let ok = o.access(&InstructionShare::read(good[i])).unwrap();
        let ins = if write {
            InstructionShare::write(addr[i], value[i])
        } else {
            InstructionShare::read(addr[i])
        };
        let err = o.access(&ins).unwrap_err();
        // Poisoned afterwards.
        assert!(matches!(
            o.access(&InstructionShare::read(good[i])),
            Err(OramError::Poisoned)
        ));
        (ok, err)
    });
    let sum = out.iter().fold(Fp::ZERO, |s, (ok, _)| s + ok.share());
    let last = memory[n - 1].iter().fold(Fp::ZERO, |s, x| s + x.share());
    assert_eq!(sum, last, "the in-range read before");
    out
}

fn is_out_of_range(e: &OramError) -> bool {
    match e {
        OramError::Protocol(b) => {
            b.downcast_ref::<Fjkw15Error>() == Some(&Fjkw15Error::AddressOutOfRange)
        }
        _ => false,
    }
}

#[test]
fn an_out_of_range_address_stops_every_party_with_a_typed_error() {
    let seed = test_seed();
    // n = 5 has m = 3: 5, 7 are in the forest's address space but not the memory; 8 and
    // 13 alias in range in their low 3 bits; p − 1 is a negative index.
    for (bad, write) in [
        (Fp::from_u64(5), false),
        (Fp::from_u64(7), true),
        (Fp::from_u64(8), false),
        (Fp::from_u64(13), true),
        (-Fp::ONE, false),
        (Fp::from_u128(1 << 100), true),
    ] {
        let out = run_with(5, bad, write, seed);
        for (p, (_, e)) in out.iter().enumerate() {
            assert!(is_out_of_range(e), "{:?}: {bad:?}: {e}", PartyId::ALL[p]);
        }
    }
}
