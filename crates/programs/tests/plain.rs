//! Every program's one text on the plaintext machine: on many random inputs — larger and more
//! of them than the secure runs can afford — its output equals the independent plaintext
//! reference, every comparison operand fits its bit length and every address lies in the
//! memory (the plaintext machine checks both), and the accesses and comparisons it makes are
//! exactly what the program's plan predicts, for both access sequences (op type hidden or
//! revealed).
#![allow(clippy::unwrap_used)]

use doram_mpc::testkit::test_seed;
use doram_programs::input::{Edge, MAX_WEIGHT, Prefs};
use doram_programs::{bfs, binary_search, dijkstra, matching};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn random_edges(rng: &mut ChaCha12Rng, v: u64, e: usize, max_w: u64) -> Vec<Edge> {
    (0..e)
        .map(|_| Edge {
            from: rng.random_range(0..v),
            to: rng.random_range(0..v),
            weight: rng.random_range(0..=max_w),
        })
        .collect()
}

#[test]
fn bfs_on_the_plaintext_machine() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for round in 0..60 {
        let v = rng.random_range(1..40u64);
        let e = rng.random_range(0..3 * v as usize);
        let edges = random_edges(&mut rng, v, e, 1);
        let source = rng.random_range(0..v);
        for (hides, form) in [
            (true, bfs::Form::Queue),
            (false, bfs::Form::Queue),
            (true, bfs::Form::Dense),
        ] {
            let (out, counts) = bfs::run_plain(v, &edges, source, hides, form)
                .unwrap_or_else(|err| panic!("round {round}, seed {seed}: {err}"));
            assert_eq!(out, bfs::plain(v, &edges, source), "seed {seed}, {edges:?}");
            let plan = bfs::plan(v as usize, e, hides, form);
            assert_eq!(counts.accesses, plan.accesses, "seed {seed}");
            assert_eq!(counts.comparisons, plan.comparisons, "seed {seed}");
        }
    }
}

#[test]
fn dijkstra_on_the_plaintext_machine() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for round in 0..30 {
        let v = rng.random_range(1..30u64);
        let e = rng.random_range(0..4 * v as usize);
        // Small weights make ties; the largest make the longest paths.
        let max_w = if round % 2 == 0 { 3 } else { MAX_WEIGHT };
        let edges = random_edges(&mut rng, v, e, max_w);
        let source = rng.random_range(0..v);
        for hides in [true, false] {
            let (out, counts) = dijkstra::run_plain(v, &edges, source, hides)
                .unwrap_or_else(|err| panic!("round {round}, seed {seed}: {err}"));
            assert_eq!(out, dijkstra::plain(v, &edges, source), "seed {seed}");
            let plan = dijkstra::plan(v as usize);
            assert_eq!(counts.accesses, plan.accesses, "seed {seed}");
            assert_eq!(counts.comparisons, plan.comparisons, "seed {seed}");
        }
    }
}

#[test]
fn binary_search_on_the_plaintext_machine() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for n in (1..70).chain([127, 128, 129, 1000, 4097]) {
        let mut sorted: Vec<u64> = (0..n).map(|_| rng.random_range(0..3 * n as u64)).collect();
        if n % 3 == 0 {
            // The extremes of the key range.
            sorted[0] = 0;
            sorted[n - 1] = u64::MAX;
        }
        sorted.sort_unstable();
        let keys = [
            0,
            u64::MAX,
            sorted[rng.random_range(0..n)],
            rng.random_range(0..3 * n as u64 + 2),
        ];
        for key in keys {
            let hides = key % 2 == 0;
            let (out, counts) = binary_search::run_plain(&sorted, key, hides)
                .unwrap_or_else(|err| panic!("n = {n}, seed {seed}: {err}"));
            assert_eq!(
                out,
                binary_search::plain(&sorted, key),
                "n = {n}, key {key}"
            );
            let plan = binary_search::plan(n);
            assert_eq!(counts.accesses, plan.accesses, "n = {n}");
            assert_eq!(counts.comparisons, plan.comparisons, "n = {n}");
        }
    }
}

#[test]
fn matching_on_the_plaintext_machine() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for k in (0..12).chain([20, 33]) {
        let list = |rng: &mut ChaCha12Rng| {
            let mut l: Vec<u64> = (0..k as u64).collect();
            l.shuffle(rng);
            l
        };
        let prefs = Prefs {
            proposers: (0..k).map(|_| list(&mut rng)).collect(),
            acceptors: (0..k).map(|_| list(&mut rng)).collect(),
        };
        for hides in [true, false] {
            let (out, counts) = matching::run_plain(&prefs, hides)
                .unwrap_or_else(|err| panic!("k = {k}, seed {seed}: {err}"));
            assert_eq!(out, matching::plain(&prefs), "k = {k}, seed {seed}");
            assert!(out.is_stable(&prefs));
            let plan = matching::plan(k);
            assert_eq!(counts.accesses, plan.accesses, "k = {k}");
            assert_eq!(counts.comparisons, plan.comparisons, "k = {k}");
        }
    }
}
