//! D's and E's shares of the forest: dealt from the plaintext forest, paths read and written
//! back in the order Access and Eviction use.
#![allow(clippy::unwrap_used)]

mod common;

use common::{rng, test_seed};
use doram_fjkw15::Fjkw15Error;
use doram_fjkw15::Params;
use doram_fjkw15::bits::Strings;
use doram_fjkw15::layout::TupleLayout;
use doram_fjkw15::plain::{Op, PlainForest};
use doram_fjkw15::testkit::{deal, encode_tree};
use rand::Rng;

#[test]
fn dealt_paths_open_to_the_plaintext_paths() {
    let seed = test_seed();
    let mut rng = rng(seed, 1);
    // w = 32: an overflow in these 50 accesses has a probability below 10^−6.
    for params in [
        Params::new(9, 3, 32, 20).unwrap(),
        Params::bench(12).unwrap(),
    ] {
        let items = 1 << params.m();
        let mut forest = PlainForest::load(params, items, |n| vec![n], &mut rng).unwrap();
        for _ in 0..50 {
            let addr = rng.random_range(0..items);
            forest
                .access(addr, Op::Write(&[addr ^ 1]), &mut rng)
                .unwrap();
        }
        let (d, e) = deal(&forest, &mut rng);
        assert_ne!(d, e);
        let root = d.read_path(0, 0).unwrap().xor(&e.read_path(0, 0).unwrap());
        assert_eq!(root, encode_tree(&forest, 0));
        assert_eq!(
            TupleLayout::new(&params, 0).decode(root.get(0)).a,
            forest.root()
        );
        for i in 1..=params.h() {
            let layout = TupleLayout::new(&params, i);
            for _ in 0..5 {
                let leaf = rng.random_range(0..params.leaves(i));
                let opened = d
                    .read_path(i, leaf)
                    .unwrap()
                    .xor(&e.read_path(i, leaf).unwrap());
                let tree = forest.tree(i);
                assert_eq!(opened, layout.encode_slots(tree, &tree.path(leaf)));
                assert_eq!(opened.count(), params.path_tuples(i));
            }
        }
    }
}

#[test]
fn written_paths_are_read_back_and_nothing_else_changes() {
    let seed = test_seed();
    let mut rng = rng(seed, 2);
    let params = Params::new(9, 3, 4, 20).unwrap();
    let forest = PlainForest::load(params, 512, |n| vec![n], &mut rng).unwrap();
    let (mut d, _) = deal(&forest, &mut rng);
    let before = d.clone();
    let (i, leaf) = (3, rng.random_range(0..params.leaves(3)));
    let new = Strings::random(params.path_tuples(i), params.tuple_bits(i), &mut rng);
    d.write_path(i, leaf, &new).unwrap();
    assert_eq!(d.read_path(i, leaf).unwrap(), new);
    // Another path shares the root bucket with it, and nothing else outside it.
    let other = leaf ^ (params.leaves(i) - 1);
    let (a, b) = (
        d.read_path(i, other).unwrap(),
        before.read_path(i, other).unwrap(),
    );
    let w = params.w();
    assert_eq!(a.get(0), new.get(0));
    assert_eq!(
        &a.as_bytes()[w * a.stride()..],
        &b.as_bytes()[w * b.stride()..]
    );
    // Other trees are untouched.
    assert_eq!(d.read_path(2, 0).unwrap(), before.read_path(2, 0).unwrap());
    let root = Strings::random(1, params.tuple_bits(0), &mut rng);
    d.write_path(0, 0, &root).unwrap();
    assert_eq!(d.read_path(0, 0).unwrap(), root);
}

#[test]
fn bad_paths_are_refused() {
    let mut rng = rng(test_seed(), 3);
    let params = Params::new(9, 3, 4, 20).unwrap();
    let forest = PlainForest::load(params, 512, |n| vec![n], &mut rng).unwrap();
    let (mut d, _) = deal(&forest, &mut rng);
    let before = d.clone();
    let path = Strings::random(params.path_tuples(2), params.tuple_bits(2), &mut rng);
    let bad = [
        d.read_path(2, params.leaves(2)).map(drop),
        d.read_path(4, 0).map(drop),
        d.read_path(0, 1).map(drop),
        d.write_path(2, params.leaves(2), &path),
        d.write_path(3, 0, &path),
        d.write_path(0, 0, &path),
        d.tree(0).map(drop),
    ];
    assert!(
        bad.iter()
            .all(|r| matches!(r, Err(Fjkw15Error::InvalidInput(_)))),
        "{bad:?}"
    );
    assert_eq!(d, before);
}
