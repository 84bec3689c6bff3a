//! Preprocessing material is consumed exactly once and in step: one triple per operation,
//! inline preprocessing when the pool is empty, and a pool out of step at one party (material
//! discarded there only) is a typed error at the next operation — at every party, never a
//! silent wrong result.

mod common;

use common::*;
use doram_duoram::{Duoram, DuoramError};
use doram_field::Z64;
use doram_mpc::testkit::{party_seed, run3, run3_on, test_seed};
use doram_mpc::{Additive, reconstruct_additive};
use doram_net::{LocalMesh, NetError};
use std::time::Duration;

#[test]
fn one_triple_per_operation_and_inline_preprocessing() {
    let seed = test_seed();
    let out = run3(|session| {
        let me = session.me();
        let c = |v: u64| Additive::public(Z64(v), me);
        let mut o = Duoram::<Z64>::setup(session, 10, party_seed(seed, me)).unwrap();
        o.preprocess(2).unwrap();
        assert_eq!(o.preprocessed(), 2);
        o.init(&[c(3); 10]).unwrap();
        let a = o.write(c(4), c(40)).unwrap();
        assert_eq!(o.preprocessed(), 1);
        o.update(c(4), c(2)).unwrap();
        assert_eq!(o.preprocessed(), 0);
        // Nothing left: preprocessed inline, same results.
        let b = o.read(c(4)).unwrap();
        assert_eq!(o.preprocessed(), 0);
        [a, b]
    });
    let open = |t: usize| reconstruct_additive(&[out[0][t], out[1][t], out[2][t]]);
    assert_eq!(open(0), Z64(3));
    assert_eq!(open(1), Z64(42));
}

/// P1 drops one preprocessed triple that P0 and P2 keep: the next operation uses different
/// material at P1, which every party detects (P1 and its peers see a frame of another
/// material's phase, or the link closing behind the party that detected it first); nobody
/// returns a result.
#[test]
fn material_out_of_step_is_a_typed_error() {
    let seed = test_seed();
    for discarding in ALL {
        let sessions = LocalMesh::new(3).timeout(Duration::from_secs(5)).build();
        let results = run3_on(sessions, |session| {
            let me = session.me();
            let c = |v: u64| Additive::public(Z64(v), me);
            let mut o = Duoram::<Z64>::setup(session, 16, party_seed(seed, me))?;
            o.preprocess(3)?;
            o.init(&[c(1); 16])?;
            o.read(c(2))?;
            if me == discarding {
                assert_eq!(o.discard_preprocessed(1), 1);
            }
            let r = o.read(c(3));
            if r.is_err() {
                // A failed operation poisons the instance.
                assert!(matches!(o.read(c(3)), Err(DuoramError::Poisoned)));
            }
            r
        });
        let mut mismatches = 0;
        for (p, r) in ALL.iter().zip(results) {
            match r {
                Err(DuoramError::Net(NetError::WrongPhase {
                    peer,
                    expected,
                    got,
                })) => {
                    assert_ne!(expected, got);
                    assert_ne!(peer, *p);
                    mismatches += 1;
                }
                Err(DuoramError::Net(_)) => {}
                Err(e) => panic!("{p} (discarding {discarding}): unexpected error {e}"),
                Ok(_) => {
                    panic!("{p} (discarding {discarding}): finished with out-of-step material")
                }
            }
        }
        assert!(
            mismatches >= 1,
            "discarding at {discarding}: nobody saw the mismatch"
        );
    }
}
