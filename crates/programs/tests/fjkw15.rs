//! Every RAM program on FJKW15 (`Fjkw15FpMemory`, the three-party tree ORAM over F_p words)
//! against its plaintext reference, through the same program text as on the other backends
//! (issue 19): binary search (one key and many), BFS in both forms, Dijkstra and stable
//! matching, at small sizes (FJKW15's Init is a shared load of n accesses); accesses and
//! random bits as planned (the op type is public, as on Duoram); transcripts independent of
//! the data and the query.
#![allow(clippy::unwrap_used)]

mod common;

use common::{BackendKind, run_local, run_party, transcripts, with_backend};
use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_programs::binary_search::{self, AccessWork, SearchOutput, plan_many};
use doram_programs::input::{Edge, Prefs};
use doram_programs::{
    BfsDense, BfsQueue, BinarySearch, Dijkstra, Part, PartyRun, Plan, Roles, StableMatching, bfs,
    dijkstra, matching,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

const B: BackendKind = BackendKind::Fjkw15;

fn output<T: Clone>(runs: &[PartyRun<T>; 3], roles: Roles) -> T {
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    runs[roles.receiver.index()].output.clone().unwrap()
}

fn as_planned<T>(runs: &[PartyRun<T>; 3], plan: Plan) {
    for r in runs {
        assert_eq!(r.counters.inline_refills, 0);
        assert_eq!(r.counters.bits_used, plan.bits as u64);
        assert_eq!(r.meter.get(Part::Oram).accesses, plan.accesses as u64);
    }
}

fn random_graph(rng: &mut ChaCha12Rng, v: u64, e: usize, max_w: u64) -> Vec<Edge> {
    (0..e)
        .map(|_| Edge {
            from: rng.random_range(0..v),
            to: rng.random_range(0..v),
            weight: rng.random_range(0..=max_w),
        })
        .collect()
}

#[test]
fn binary_search_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    // The owner also receives; the querier is P0.
    let other = Roles {
        owner: PartyId::P2,
        querier: PartyId::P0,
        receiver: PartyId::P2,
    };
    for (n, roles) in [
        (0usize, Roles::default()),
        (1, other),
        (5, Roles::default()),
        (13, other),
        (40, Roles::default()),
    ] {
        let mut data: Vec<u64> = (0..n).map(|_| rng.random_range(0..30)).collect();
        data.sort_unstable();
        let mut keys = vec![0, u64::MAX];
        if let Some(&x) = data.get(n / 2) {
            keys.extend([x, x + 1]);
        }
        for key in keys {
            let runs = run_local::<BinarySearch>(B, roles, &data, key, Entropy::InsecureSeed(seed))
                .unwrap_or_else(|e| panic!("n = {n}, key = {key}: {e}"));
            assert_eq!(
                output(&runs, roles),
                binary_search::plain(&data, key),
                "n = {n}, key = {key}, data = {data:?}"
            );
            as_planned(&runs, binary_search::plan(n));
        }
    }
}

#[test]
fn binary_search_of_many_keys_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 1);
    let roles = Roles::default();
    for (n, k) in [(1usize, 2usize), (17, 5)] {
        let mut data: Vec<u64> = (0..n).map(|_| rng.random_range(0..50)).collect();
        data.sort_unstable();
        let keys: Vec<u64> = (0..k).map(|_| rng.random_range(0..52)).collect();
        let runs = with_backend!(B, D => binary_search::run_local_many::<D>(
            roles,
            &data,
            &keys,
            Entropy::InsecureSeed(seed)
        ))
        .unwrap();
        let want: Vec<SearchOutput> = binary_search::plain_many(&data, &keys);
        assert_eq!(output(&runs, roles), want, "n = {n}, keys = {keys:?}");
        as_planned(&runs, plan_many(n, k, AccessWork::Sublinear));
    }
}

#[test]
fn bfs_matches_plaintext_in_both_forms() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 2);
    let roles = Roles::default();
    for (v, e) in [(1u64, 0usize), (5, 6), (7, 10)] {
        let edges = random_graph(&mut rng, v, e, 1);
        let source = rng.random_range(0..v);
        let data = (v, &edges[..]);
        for form in [bfs::Form::Queue, bfs::Form::Dense] {
            let entropy = Entropy::InsecureSeed(seed);
            let runs = match form {
                bfs::Form::Queue => run_local::<BfsQueue>(B, roles, data, source, entropy),
                bfs::Form::Dense => run_local::<BfsDense>(B, roles, data, source, entropy),
            }
            .unwrap_or_else(|err| panic!("V = {v}, E = {e}, {form:?}: {err}"));
            assert_eq!(
                output(&runs, roles),
                bfs::plain(v, &edges, source),
                "{form:?}: V = {v}, edges = {edges:?}, source = {source}"
            );
            // FJKW15 reveals the op type, as Duoram does.
            as_planned(&runs, bfs::plan(v as usize, e, false, form));
        }
    }
}

#[test]
fn dijkstra_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 3);
    let roles = Roles::default();
    for (v, e, max_w) in [(1u64, 0usize, 5u64), (4, 6, 0), (6, 12, u32::MAX as u64)] {
        let edges = random_graph(&mut rng, v, e, max_w);
        let source = rng.random_range(0..v);
        let runs =
            run_local::<Dijkstra>(B, roles, (v, &edges), source, Entropy::InsecureSeed(seed))
                .unwrap_or_else(|err| panic!("V = {v}, E = {e}: {err}"));
        assert_eq!(
            output(&runs, roles),
            dijkstra::plain(v, &edges, source),
            "V = {v}, edges = {edges:?}, source = {source}"
        );
        as_planned(&runs, dijkstra::plan(v as usize));
    }
}

#[test]
fn stable_matching_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 4);
    let roles = Roles::default();
    for k in [0usize, 1, 3, 4] {
        let mut list = || {
            let mut l: Vec<u64> = (0..k as u64).collect();
            l.shuffle(&mut rng);
            l
        };
        let prefs = Prefs {
            proposers: (0..k).map(|_| list()).collect(),
            acceptors: (0..k).map(|_| list()).collect(),
        };
        let runs = run_local::<StableMatching>(B, roles, &prefs, (), Entropy::InsecureSeed(seed))
            .unwrap_or_else(|e| panic!("{prefs:?}: {e}"));
        let out = output(&runs, roles);
        assert_eq!(out, matching::plain(&prefs), "{prefs:?}");
        assert!(out.is_stable(&prefs));
        as_planned(&runs, matching::plan(k));
    }
}

/// Each party's transcript of a binary search over 11 words is the same for different
/// arrays and keys.
#[test]
fn binary_search_transcripts_depend_on_n_only() {
    let seed = test_seed();
    let roles = Roles::default();
    let run = |data: Vec<u64>, key: u64| {
        transcripts(seed, B, roles, |session, config| {
            let me = session.me();
            let d = (me == roles.owner).then_some(&data[..]);
            let k = (me == roles.querier).then_some(key);
            run_party::<BinarySearch>(session, config, d, k)
        })
    };
    let a = run((1..=11).collect(), 0);
    let b = run(
        vec![
            0,
            0,
            5,
            9,
            100,
            1 << 40,
            u64::MAX - 1,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
        ],
        u64::MAX,
    );
    let c = run(vec![7; 11], 7);
    assert_eq!(a, b);
    assert_eq!(a, c);
}
