//! A binary-search database loaded once and searched in later runs (`doram_programs::stored`):
//! results against plaintext over several runs (both loads, roles swapped between runs); every
//! inconsistent pair of stores refused at both parties; a run that stops midway leaves its
//! stores refused; transcripts of a resumed run independent of the keys.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use doram_core::{Entropy, PartyId};
use doram_net::{LocalMesh, Session, Transcript};
use doram_programs::binary_search::{SearchOutput, plain_many};
use doram_programs::stored::{Store, run_search};
use doram_programs::{ProgramError, Roles};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// A fresh directory for the two parties' stores.
fn dirs() -> (PathBuf, PathBuf) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir().join(format!(
        "doram-stored-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&base);
    (base.join("p0"), base.join("p1"))
}

type Outcome = Result<(Option<Vec<SearchOutput>>, Transcript), ProgramError>;

/// One run between two threads: each party on its store; the owner gives `data` if any.
fn run(
    stores: &(PathBuf, PathBuf),
    roles: Roles,
    data: Option<&[u64]>,
    keys: &[u64],
    seed: u64,
) -> Vec<Outcome> {
    doram_net::run_parties(LocalMesh::new(2).build(), "stored", |mut s: Session| {
        s.record_transcript(true);
        let me = s.me();
        let dir = if me == PartyId::P0 {
            &stores.0
        } else {
            &stores.1
        };
        let store = Store::open(dir)?;
        let ps = Entropy::InsecureSeed(seed).party_seed(me, "program");
        let d = if me == roles.owner { data } else { None };
        let q = (me == roles.querier).then_some(keys);
        let r = run_search(s, ps, roles, &store, d, q)?;
        Ok((r.output, r.transcript.expect("recording")))
    })
    .into_iter()
    .map(|r| r.expect("no panic"))
    .collect()
}

/// The receiver's outputs, both parties having succeeded.
fn outputs(out: Vec<Outcome>, roles: Roles) -> Vec<SearchOutput> {
    let mut got = None;
    for (i, r) in out.into_iter().enumerate() {
        let (o, _) = r.unwrap_or_else(|e| panic!("P{i}: {e}"));
        assert_eq!(o.is_some(), i == roles.receiver.index());
        got = got.or(o);
    }
    got.unwrap()
}

/// Both parties refused the run with a store error containing `what`.
fn refused(out: Vec<Outcome>, what: &str) {
    for (i, r) in out.into_iter().enumerate() {
        match r {
            Err(ProgramError::Store(m)) => assert!(m.contains(what), "P{i}: {m}"),
            Err(e) => panic!("P{i}: another error: {e}"),
            Ok(_) => panic!("P{i}: ran"),
        }
    }
}

fn sorted(rng: &mut ChaCha12Rng, n: usize) -> Vec<u64> {
    let mut d: Vec<u64> = (0..n).map(|_| rng.random_range(0..4 * n as u64)).collect();
    d.sort_unstable();
    d
}

fn keys(rng: &mut ChaCha12Rng, n: usize, k: usize) -> Vec<u64> {
    (0..k)
        .map(|_| rng.random_range(0..4 * n as u64 + 2))
        .collect()
}

#[test]
fn one_load_serves_many_runs() {
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    // 5 and 40 words: Figure 1's load; 200: the sorted load.
    for n in [5usize, 40, 200] {
        let stores = dirs();
        let data = sorted(&mut rng, n);
        let roles = Roles::two_party();
        let swapped = Roles {
            owner: PartyId::P1,
            querier: PartyId::P0,
            receiver: PartyId::P0,
        };
        let k = keys(&mut rng, n, 3);
        let got = outputs(run(&stores, roles, Some(&data), &k, 10), roles);
        assert_eq!(got, plain_many(&data, &k), "n = {n}, load");
        for (run_no, r) in [roles, swapped, roles].into_iter().enumerate() {
            let k = keys(&mut rng, n, 1 + run_no);
            let got = outputs(run(&stores, r, None, &k, 20 + run_no as u64), r);
            assert_eq!(got, plain_many(&data, &k), "n = {n}, run {run_no}");
        }
        for d in [&stores.0, &stores.1] {
            let s = Store::open(d).unwrap();
            assert_eq!(s.generation().unwrap(), Some(4));
            assert!(!s.in_use());
        }
    }
}

#[test]
fn inconsistent_stores_are_refused_at_both_parties() {
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    let roles = Roles::two_party();
    let data = sorted(&mut rng, 30);
    let k = [7u64];

    // No database and no array.
    refused(run(&dirs(), roles, None, &k, 1), "no database is stored");

    // An array while a database is stored.
    let stores = dirs();
    outputs(run(&stores, roles, Some(&data), &k, 2), roles);
    refused(run(&stores, roles, Some(&data), &k, 3), "would not be used");

    // One party without its store.
    let other = dirs();
    refused(
        run(&(stores.0.clone(), other.1.clone()), roles, None, &k, 4),
        "only P0",
    );

    // Different databases.
    let second = dirs();
    outputs(run(&second, roles, Some(&data), &k, 5), roles);
    refused(
        run(&(stores.0.clone(), second.1.clone()), roles, None, &k, 6),
        "different databases",
    );

    // A party gone back to an older generation.
    let old = dirs().1;
    copy_dir(&stores.1, &old);
    outputs(run(&stores, roles, None, &k, 7), roles);
    refused(
        run(&(stores.0.clone(), old), roles, None, &k, 8),
        "different generations",
    );

    // A store another run holds.
    let held = std::fs::File::open(stores.1.join("lock")).unwrap();
    held.try_lock().unwrap();
    refused(run(&stores, roles, None, &k, 11), "in use by another run");
    drop(held);

    // The stores swapped.
    refused(
        run(&(stores.1.clone(), stores.0.clone()), roles, None, &k, 9),
        "other party",
    );

    // The consistent pair still runs.
    let got = outputs(run(&stores, roles, None, &k, 10), roles);
    assert_eq!(got, plain_many(&data, &k));
}

#[test]
fn a_run_that_stops_midway_leaves_its_stores_refused() {
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    let roles = Roles::two_party();
    let data = sorted(&mut rng, 30);
    let stores = dirs();
    outputs(run(&stores, roles, Some(&data), &[1], 1), roles);
    // P1's store damaged: P1 fails while reading its ORAM state, after both marked in use.
    let file = stores.1.join("search.db");
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let out = run(&stores, roles, None, &[2], 2);
    assert!(out.iter().all(Result::is_err));
    assert!(Store::open(&stores.0).unwrap().in_use());
    // Even with P1's file mended, the pair is refused: P0's state may have been used.
    bytes[last] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    refused(run(&stores, roles, None, &[2], 3), "did not finish");
}

#[test]
fn a_resumed_run_sends_the_same_whatever_the_keys() {
    let mut rng = ChaCha12Rng::seed_from_u64(4);
    let roles = Roles::two_party();
    let data = sorted(&mut rng, 100);
    let stores = dirs();
    outputs(run(&stores, roles, Some(&data), &[0, 0], 1), roles);
    let mut shapes = Vec::new();
    for (i, k) in [[0u64, 0], [399, 3], [55, 1000]].iter().enumerate() {
        let out = run(&stores, roles, None, k, 10 + i as u64);
        let ts: Vec<Transcript> = out.into_iter().map(|r| r.unwrap().1).collect();
        shapes.push(ts);
    }
    assert_eq!(shapes[0], shapes[1]);
    assert_eq!(shapes[0], shapes[2]);
}

fn copy_dir(from: &PathBuf, to: &PathBuf) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}
