//! Stable matching against plaintext Gale–Shapley on random and adversarial preference lists
//! (k = 0, 1, identical lists, reversed lists), on every backend; stability of the output;
//! transcripts independent of the preferences; invalid preferences.

mod common;

use common::{BackendKind, run_local, run_party, run_program, transcripts};
use doram_core::Entropy;
use doram_mpc::testkit::test_seed;
use doram_programs::StableMatching;
use doram_programs::input::Prefs;
use doram_programs::matching::{self, plain};
use doram_programs::{InputError, ProgramError, Roles};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha12Rng;

fn random_prefs(rng: &mut ChaCha12Rng, k: usize) -> Prefs {
    let mut list = || {
        let mut v: Vec<u64> = (0..k as u64).collect();
        v.shuffle(rng);
        v
    };
    Prefs {
        proposers: (0..k).map(|_| list()).collect(),
        acceptors: (0..k).map(|_| list()).collect(),
    }
}

fn identical(k: usize, reversed: bool) -> Prefs {
    let mut l: Vec<u64> = (0..k as u64).collect();
    if reversed {
        l.reverse();
    }
    Prefs {
        proposers: vec![l.clone(); k],
        acceptors: vec![l; k],
    }
}

#[test]
fn matches_plaintext_and_is_stable() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let roles = Roles::default();
    let mut cases: Vec<Prefs> = [0, 1, 2, 3, 5]
        .iter()
        .map(|&k| random_prefs(&mut rng, k))
        .collect();
    cases.push(identical(4, false));
    cases.push(identical(4, true));
    for (i, prefs) in cases.iter().enumerate() {
        let backend = BackendKind::ALL[i % 3];
        let runs =
            run_local::<StableMatching>(backend, roles, prefs, (), Entropy::InsecureSeed(seed))
                .unwrap_or_else(|e| panic!("{}: {prefs:?}: {e}", backend.name()));
        let out = runs[roles.receiver.index()]
            .output
            .clone()
            .expect("receiver output");
        assert!(
            runs.iter()
                .enumerate()
                .all(|(j, r)| r.output.is_some() == (j == roles.receiver.index()))
        );
        assert_eq!(out, plain(prefs), "{}: {prefs:?}", backend.name());
        assert!(out.is_stable(prefs));
        for r in &runs {
            let plan = matching::plan(prefs.k());
            assert_eq!(r.counters.bits_used, plan.bits as u64);
            assert_eq!(r.counters.inline_refills, 0);
            assert_eq!(
                r.meter.get(doram_programs::Part::Oram).accesses,
                plan.accesses as u64
            );
        }
    }
}

#[test]
fn transcripts_depend_on_k_only() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 3);
    let roles = Roles::default();
    for backend in [BackendKind::LinearScan, BackendKind::Duoram] {
        let run = |prefs: Prefs| {
            transcripts(seed, backend, roles, |session, config| {
                let p = (session.me() == roles.owner).then_some(&prefs);
                run_party::<StableMatching>(session, config, p, None)
            })
        };
        let a = run(identical(3, false));
        assert_eq!(a, run(identical(3, true)), "{}", backend.name());
        assert_eq!(a, run(random_prefs(&mut rng, 3)), "{}", backend.name());
    }
}

#[test]
fn invalid_preferences_fail_at_the_owner() {
    let seed = test_seed();
    let roles = Roles::default();
    let bad = Prefs {
        proposers: vec![vec![0, 0], vec![0, 1]],
        acceptors: vec![vec![0, 1], vec![1, 0]],
    };
    let r = run_program(seed, BackendKind::LinearScan, roles, |session, config| {
        let me = session.me();
        run_party::<StableMatching>(session, config, (me == roles.owner).then_some(&bad), None)
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::Input(InputError::NotAPermutation { .. }))
    ));
    assert!(r[1].is_err() && r[2].is_err());
}
