//! Peer faults end every party's run with a typed error naming the peer, never a panic or a
//! hang: announced sizes out of bounds, and a party that leaves in the middle of a program.

use std::time::Duration;

use doram_core::{PartyId, Seed};
use doram_duoram::Duoram;
use doram_field::Fp;
use doram_mpc::Secret;
use doram_mpc::testkit::test_seed;
use doram_net::{LocalMesh, Session};
use doram_oram::LinearScanOram;
use doram_programs::{Bfs, BinarySearch, run_party};
use doram_programs::{Machine, ProgramError, Roles, agree_on_run};

fn run_on_mesh<T: Send>(
    f: impl Fn(Session, Seed) -> Result<T, ProgramError> + Sync,
) -> Vec<Result<T, ProgramError>> {
    let sessions = LocalMesh::new(3).timeout(Duration::from_secs(10)).build();
    doram_net::testkit::run(sessions, |session| {
        let seed = Seed([session.me().index() as u8; 16]);
        f(session, seed)
    })
}

#[test]
fn oversized_announcements_blame_the_owner() {
    let _ = test_seed();
    let roles = Roles::default();
    let r = run_on_mesh(|mut session, seed| {
        let me = session.me();
        if me == roles.owner {
            // A deviating owner announces n = 2^40.
            agree_on_run(&mut session, "binary-search", "linear-scan", &roles)?;
            for p in [PartyId::P1, PartyId::P2] {
                session.send(p, &vec![1u64 << 40])?;
            }
            return Ok(None);
        }
        let key = (me == roles.querier).then_some(5);
        run_party::<BinarySearch, LinearScanOram<Fp>>(session, seed, roles, None, key)
            .map(|r| r.output)
    });
    for res in &r[1..] {
        match res {
            Err(
                e @ ProgramError::BadSizes {
                    peer: PartyId::P0, ..
                },
            ) => {
                assert_eq!(e.peer(), Some(PartyId::P0));
            }
            other => panic!("expected BadSizes from P0, got {other:?}"),
        }
    }
    // A wrong number of sizes, too.
    let r = run_on_mesh(|mut session, seed| {
        let me = session.me();
        if me == roles.owner {
            agree_on_run(&mut session, "bfs", "linear-scan", &roles)?;
            for p in [PartyId::P1, PartyId::P2] {
                session.send(p, &vec![3u64])?;
            }
            return Ok(None);
        }
        let src = (me == roles.querier).then_some(0);
        run_party::<Bfs, LinearScanOram<Fp>>(session, seed, roles, None, src).map(|r| r.output)
    });
    assert!(r[1..].iter().all(|x| matches!(
        x,
        Err(ProgramError::BadSizes {
            peer: PartyId::P0,
            ..
        })
    )));
}

#[test]
fn a_party_leaving_mid_program_is_a_typed_error_elsewhere() {
    let _ = test_seed();
    let r = run_on_mesh(|session, seed| {
        let me = session.me();
        let mut m = Machine::<LinearScanOram<Fp>>::setup(session, seed)?;
        let a = m.alloc_fill(8, 3)?;
        m.boot(0)?;
        let mut i = Secret::ZERO;
        for step in 0..4 {
            if me == PartyId::P2 && step == 2 {
                return Ok(()); // leaves: its session is dropped
            }
            let v = m.read(a, i)?;
            let lt = m.cpu(|on| on.lt_many(&[(v, i)], 8))?;
            i += lt[0].value();
        }
        Ok(())
    });
    assert!(r[2].is_ok());
    // P0 and P1 fail with a transport error naming a peer: P2, or the other one of them if it
    // failed (and dropped its session) first.
    for (i, res) in r[..2].iter().enumerate() {
        match res {
            Err(e @ ProgramError::Net(_)) => {
                let peer = e.peer().expect("a transport error names the peer");
                assert_ne!(peer.index(), i, "{e}");
            }
            Err(e) => panic!("expected a transport error, got {e}"),
            Ok(()) => panic!("the run cannot complete without P2"),
        }
    }
}

#[test]
fn parties_running_different_backends_stop_at_once() {
    let _ = test_seed();
    let roles = Roles::default();
    let r = run_on_mesh(|session, seed| {
        let me = session.me();
        let data = [1u64, 2, 3];
        let d = (me == roles.owner).then_some(&data[..]);
        let key = (me == roles.querier).then_some(2);
        let run = if me == PartyId::P0 {
            run_party::<BinarySearch, LinearScanOram<Fp>>(session, seed, roles, d, key)
        } else {
            run_party::<BinarySearch, Duoram<Fp>>(session, seed, roles, d, key)
        };
        run.map(|r| r.output)
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::ConfigMismatch {
            peer: PartyId::P1,
            ..
        })
    ));
    assert!(matches!(
        r[1],
        Err(ProgramError::ConfigMismatch {
            peer: PartyId::P0,
            ..
        })
    ));
    assert!(matches!(
        r[2],
        Err(ProgramError::ConfigMismatch {
            peer: PartyId::P0,
            ..
        })
    ));
}
