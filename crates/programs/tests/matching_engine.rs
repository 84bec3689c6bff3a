//! Stable matching in the engine (one-hot indexing, no DORAM access) against an independent
//! Gale–Shapley written here — rounds of simultaneous proposals by every free proposer, not
//! the library's one-at-a-time reference — for k = 1, 2, 5, 17 on the plaintext machine and
//! on every backend; transcripts of every backend independent of the preferences at fixed k.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use common::{BackendKind, run_local, run_party, transcripts};
use doram_core::Entropy;
use doram_mpc::testkit::test_seed;
use doram_programs::input::Prefs;
use doram_programs::matching::{self, Matching};
use doram_programs::{Part, Roles, StableMatching};
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

/// Proposer-optimal stable matching by rounds: every free proposer proposes to the best
/// acceptor that has not rejected it; each acceptor keeps the best proposer it has seen.
/// Returns the proposer held by each acceptor.
fn rounds_of_proposals(prefs: &Prefs) -> Vec<u64> {
    let k = prefs.k();
    let pos = |a: usize, p: usize| prefs.acceptors[a].iter().position(|&x| x == p as u64);
    let mut held: Vec<Option<usize>> = vec![None; k];
    let mut tried = vec![0usize; k];
    loop {
        let free: Vec<usize> = (0..k).filter(|p| !held.contains(&Some(*p))).collect();
        if free.is_empty() {
            break;
        }
        for p in free {
            let a = prefs.proposers[p][tried[p]] as usize;
            tried[p] += 1;
            if held[a].is_none_or(|q| pos(a, p) < pos(a, q)) {
                held[a] = Some(p);
            }
        }
    }
    held.into_iter().map(|p| p.unwrap() as u64).collect()
}

fn check(out: &Matching, prefs: &Prefs, what: &str) {
    assert_eq!(out.acceptor_partner, rounds_of_proposals(prefs), "{what}");
    assert!(out.is_stable(prefs), "{what}");
}

#[test]
fn plaintext_machine_agrees_with_rounds_of_proposals() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x6a1e);
    for k in [1, 2, 5, 17] {
        for _ in 0..4 {
            let prefs = random_prefs(&mut rng, k);
            for hides in [true, false] {
                let (out, counts) = matching::run_plain(&prefs, hides).unwrap();
                check(&out, &prefs, &format!("plain, k = {k}, seed {seed}"));
                assert_eq!(counts.accesses, 0);
                assert_eq!(counts.comparisons, matching::plan(k).comparisons);
            }
        }
    }
}

#[test]
fn every_backend_agrees_with_rounds_of_proposals() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x6a1f);
    let roles = Roles::default();
    for k in [1, 2, 5, 17] {
        let prefs = random_prefs(&mut rng, k);
        for backend in BackendKind::ALL {
            let what = format!("{}, k = {k}, seed {seed}", backend.name());
            let runs = run_local::<StableMatching>(
                backend,
                roles,
                &prefs,
                (),
                Entropy::InsecureSeed(seed),
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            let out = runs[roles.receiver.index()].output.clone().unwrap();
            check(&out, &prefs, &what);
            for r in &runs {
                // Everything runs in the engine: no DORAM work at all.
                for part in [Part::Preprocess, Part::Init, Part::Oram] {
                    assert_eq!(r.meter.get(part).bytes_sent, 0, "{what}");
                }
                assert_eq!(r.counters.bits_used, matching::plan(k).bits as u64);
                // T iterations and the last update of the partners.
                let t = matching::iterations(k) as u64;
                assert_eq!(
                    r.meter.get(Part::Cpu).rounds,
                    t * matching::rounds_per_iteration(k) + 1,
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn transcripts_of_every_backend_depend_on_k_only() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x6a20);
    let roles = Roles::default();
    let k = 5;
    let mut same: Vec<u64> = (0..k as u64).collect();
    let lists = [same.clone(), {
        same.reverse();
        same
    }];
    let identical = |i: usize| Prefs {
        proposers: vec![lists[i].clone(); k],
        acceptors: vec![lists[1 - i].clone(); k],
    };
    let cases = [identical(0), identical(1), random_prefs(&mut rng, k)];
    for backend in BackendKind::ALL {
        let run = |prefs: &Prefs| {
            transcripts(seed, backend, roles, |session, config| {
                let p = (session.me() == roles.owner).then_some(prefs);
                run_party::<StableMatching>(session, config, p, None)
            })
        };
        let first = run(&cases[0]);
        for prefs in &cases[1..] {
            assert_eq!(first, run(prefs), "{}: {prefs:?}", backend.name());
        }
    }
}
