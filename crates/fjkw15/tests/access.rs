//! Access[i] (FJKW15 Alg. 3) among C, D and E on a dealt forest, tree by tree along an
//! address's labels, against the plaintext forest: C's labels and the record, the C/E shares of
//! T_i and of the rotated path without it, and message sizes independent of the address.
#![allow(clippy::unwrap_used)]

mod common;

use common::{parties, rng, test_seed};
use doram_core::{CodecError, PartyId};
use doram_fjkw15::access::{AccessAtC, AccessAtE, AccessFromD, AccessFromE, AccessShape};
use doram_fjkw15::bits::Strings;
use doram_fjkw15::layout::TupleLayout;
use doram_fjkw15::msgs::{WireMessage, receive};
use doram_fjkw15::plain::{Op, PlainForest, words_for};
use doram_fjkw15::postprocess::{FreshLabels, PostFromC, PostFromDtoC, PostFromDtoE, PostShape};
use doram_fjkw15::storage::ForestShare;
use doram_fjkw15::testkit::deal;
use doram_fjkw15::{C, D, E};
use doram_fjkw15::{Fjkw15Error, Params};
use rand::Rng;

/// One access to `addr` through Access[0..=h]; checks every output against `forest` and
/// returns the sizes of the messages sent.
fn access_all_trees(
    (c, d, e): &mut (C, D, E),
    forest: &PlainForest,
    (fd, fe): (&ForestShare, &ForestShare),
    addr: u64,
    rng: &mut impl Rng,
) -> Vec<usize> {
    let p = *forest.params();
    let n_d = rng.random_range(0..1u64 << p.m());
    let n_e = addr ^ n_d;
    let mut label = 0;
    let mut sizes = Vec::new();
    for i in 0..=p.h() {
        let s = AccessShape::new(p, i).unwrap();
        let (at_d, from_d) = d.access(&s, &fd.read_path(i, label).unwrap(), n_d).unwrap();
        let (at_e, from_e) = e
            .access(&s, &fe.read_path(i, label).unwrap(), n_e, label)
            .unwrap();
        let (from_d, from_e) = (from_d.encode(), from_e.encode());
        sizes.extend([from_d.len(), from_e.len()]);
        let from_d: AccessFromD = receive(PartyId::P1, &from_d, &s).unwrap();
        let from_e: AccessFromE = receive(PartyId::P2, &from_e, &s).unwrap();
        let out = c.access(&s, &from_d, &from_e).unwrap();
        assert_eq!(at_d.rotation, at_e.rotation);
        let rho = at_e.rotation.rho();
        // The plaintext tuple T_i and its A field.
        let (a, path) = if i == 0 {
            (forest.root().to_vec(), None)
        } else {
            let tree = forest.tree(i);
            let slot = tree.find(label, p.prefix(addr, i)).unwrap();
            (tree.tuple(slot).a, Some((tree.path(label), slot)))
        };
        // C's label L_{i+1} and j_2 = N^(i+1) ⊕ ρ.
        if i < p.h() {
            assert_eq!(out.next_label, Some(a[p.chunk(addr, i + 1)]), "tree {i}");
            assert_eq!(out.j2, Some(p.chunk(addr, i + 1) ^ rho));
        } else {
            assert_eq!((out.next_label, out.j2), (None, None));
        }
        // T_i = (1, N_i, L_i, Rot[ρ](A_i)), shared by C and E.
        let layout = TupleLayout::new(&p, i);
        let t = layout.decode(out.tuple.xor(&at_e.tuple).get(0));
        assert!(t.fb);
        assert_eq!((t.n, t.label), (p.prefix(addr, i), label));
        if i < p.h() {
            assert!((0..p.fanout()).all(|k| t.a[k ^ rho] == a[k]));
        } else {
            assert_eq!(t.a, a, "the record");
        }
        // P* = Rot[σ, δ, ρ](P′): the rotated path with T_i's slot emptied.
        if let Some((slots, slot)) = path {
            let star = out.path.unwrap().xor(&at_e.path.unwrap());
            let plain = at_e
                .rotation
                .forward()
                .apply(&layout.encode_slots(forest.tree(i), &slots));
            let differ: Vec<usize> = (0..star.count())
                .filter(|&k| star.get(k) != plain.get(k))
                .collect();
            assert_eq!(differ.len(), 1, "tree {i}");
            assert_eq!(
                layout.decode(plain.get(differ[0])).n,
                forest.tree(i).tuple(slot).n
            );
            assert_eq!(star.field(differ[0], 0, 1), 0, "T_i's slot is empty in P*");
        }
        label = out.next_label.unwrap_or(0);
    }
    sizes
}

#[test]
fn access_follows_the_labels_and_shares_the_tuples() {
    let seed = test_seed();
    let mut parties = parties(seed);
    let mut rng = rng(seed, 1);
    // w = 32 or more: an overflow in the 40 plaintext accesses is below 10^−6.
    for params in [
        Params::new(9, 3, 32, 20).unwrap(),
        Params::bench(12).unwrap(),
        Params::new(8, 4, 40, 70).unwrap(),
        Params::new(6, 6, 32, 9).unwrap(),
    ] {
        let items = 1 << params.m();
        let words = words_for(params.record_bits());
        let record = |n: u64| [vec![n], vec![n & 1; words - 1]].concat();
        let mut forest = PlainForest::load(params, items, record, &mut rng).unwrap();
        for _ in 0..40 {
            let addr = rng.random_range(0..items);
            let new = record(addr ^ 5);
            forest.access(addr, Op::Write(&new), &mut rng).unwrap();
        }
        let (fd, fe) = deal(&forest, &mut rng);
        for _ in 0..6 {
            let addr = rng.random_range(0..items);
            access_all_trees(&mut parties, &forest, (&fd, &fe), addr, &mut rng);
        }
    }
}

#[test]
fn access_messages_do_not_depend_on_the_address() {
    let seed = test_seed();
    let mut parties = parties(seed);
    let mut rng = rng(seed, 2);
    let params = Params::bench(12).unwrap();
    let forest = PlainForest::load(params, 1 << 12, |n| vec![n], &mut rng).unwrap();
    let (fd, fe) = deal(&forest, &mut rng);
    let sizes: Vec<Vec<usize>> = [0, 4095, 1234, 1234]
        .into_iter()
        .map(|addr| access_all_trees(&mut parties, &forest, (&fd, &fe), addr, &mut rng))
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}");
    let expected: Vec<usize> = (0..=params.h())
        .flat_map(|i| {
            let s = AccessShape::new(params, i).unwrap();
            [AccessFromD::wire_len(&s), AccessFromE::wire_len(&s)]
        })
        .collect();
    assert_eq!(sizes[0], expected);
}

#[test]
fn access_messages_are_parsed_and_checked() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 3);
    let params = Params::new(9, 3, 32, 20).unwrap();
    let forest = PlainForest::load(params, 512, |n| vec![n], &mut rng).unwrap();
    let (fd, fe) = deal(&forest, &mut rng);
    let (s, other) = (
        AccessShape::new(params, 2).unwrap(),
        AccessShape::new(params, 3).unwrap(),
    );
    assert!(AccessShape::new(params, 4).is_err());
    // Inputs of the wrong shape are refused before anything is drawn.
    let root = fd.read_path(0, 0).unwrap();
    assert!(matches!(
        d.access(&s, &root, 7),
        Err(Fjkw15Error::InvalidInput(_))
    ));
    let path_e = fe.read_path(2, 0).unwrap();
    assert!(matches!(
        e.access(&s, &path_e, 7, 2),
        Err(Fjkw15Error::InvalidInput(_))
    ));
    assert!(matches!(
        e.access(&s, &path_e, 512, 0),
        Err(Fjkw15Error::InvalidInput(_))
    ));
    let (_, from_d) = d.access(&s, &fd.read_path(2, 0).unwrap(), 7).unwrap();
    let (_, from_e) = e.access(&s, &path_e, 7, 0).unwrap();
    let bytes = from_d.encode();
    let f = receive::<AccessFromD>(PartyId::P1, &bytes[..bytes.len() - 1], &s).unwrap_err();
    assert_eq!(
        (f.peer, f.lengths()),
        (PartyId::P1, Some((bytes.len(), bytes.len() - 1)))
    );
    assert!(receive::<AccessFromD>(PartyId::P1, &bytes, &other).is_err());
    // The 9-bit prefix share N_3 follows the 160 rows of 5 bytes: a bit above it is refused.
    let mut bad = bytes.clone();
    bad[160 * 5 + 1] |= 0x80;
    let f = receive::<AccessFromD>(PartyId::P1, &bad, &s).unwrap_err();
    assert!(matches!(f.fault, CodecError::OutOfRange { .. }), "{f}");
    let f = receive::<AccessFromE>(PartyId::P2, &from_e.encode()[1..], &s).unwrap_err();
    assert_eq!(f.peer, PartyId::P2);
    // A message of another tree's Access handed to C names its sender.
    let (_, from_d3) = d.access(&other, &fd.read_path(3, 0).unwrap(), 7).unwrap();
    match c.access(&s, &from_d3, &from_e) {
        Err(Fjkw15Error::Peer(f)) => assert_eq!(f.peer, PartyId::P1),
        other => panic!("{other:?}"),
    }
}

/// PostProcessT[i] (i < h) on C's and E's outputs of Access[i], every message through the
/// wire; returns C's and E's shares of (T_i)′.
fn post(
    (c, d, e): (&mut C, &mut D, &mut E),
    (params, i): (Params, usize),
    (at_c, at_e): (&AccessAtC, &AccessAtE),
    (label, to_d): (u64, &FreshLabels),
    (c_shares, e_shares): (&[u64], &[u64]),
) -> (Strings, Strings) {
    let share = |v: &[u64], i: usize| if i == 0 { 0 } else { v[i - 1] };
    let ps = PostShape::new(params, i).unwrap();
    let (to_c, to_e) = d.post_prepare(&ps, to_d).unwrap();
    let to_c: PostFromDtoC = receive(PartyId::P1, &to_c.encode(), &ps).unwrap();
    let to_e: PostFromDtoE = receive(PartyId::P1, &to_e.encode(), &ps).unwrap();
    let j2 = at_c.j2.unwrap();
    let delta = c.post_send(&ps, &to_c, j2).unwrap().encode();
    let delta: PostFromC = receive(PartyId::P0, &delta, &ps).unwrap();
    let labels = (label, at_c.next_label.unwrap());
    let shares = (share(c_shares, i), c_shares[i]);
    let t_c = c
        .post_finish(&ps, &to_c, j2, &at_c.tuple, labels, shares)
        .unwrap();
    let e_share = share(e_shares, i);
    let t_e = e
        .post_finish(&ps, &to_e, &delta, &at_e.tuple, e_share)
        .unwrap();
    (t_c, t_e)
}

#[test]
fn postprocess_inserts_the_fresh_labels() {
    let seed = test_seed();
    let (mut c, mut d, mut e) = parties(seed);
    let mut rng = rng(seed, 4);
    for params in [
        Params::new(9, 3, 32, 20).unwrap(),
        Params::new(8, 4, 40, 70).unwrap(),
    ] {
        let items = 1 << params.m();
        let words = words_for(params.record_bits());
        let record = |n: u64| [vec![n], vec![0; words - 1]].concat();
        let forest = PlainForest::load(params, items, record, &mut rng).unwrap();
        let (fd, fe) = deal(&forest, &mut rng);
        let addr = rng.random_range(0..items);
        let n_d = rng.random_range(0..items);
        let n_e = addr ^ n_d;
        // Fresh labels: C's and E's shares, E's forwarded to D through the wire.
        let c_shares = c.fresh_labels(&params);
        let (e_shares, to_d) = e.fresh_labels(&params);
        let to_d: FreshLabels = receive(PartyId::P2, &to_d.encode(), &params).unwrap();
        let fresh = |i: usize| {
            if i == 0 {
                0
            } else {
                c_shares[i - 1] ^ e_shares[i - 1]
            }
        };
        let mut label = 0;
        for i in 0..=params.h() {
            let s = AccessShape::new(params, i).unwrap();
            let (_, from_d) = d.access(&s, &fd.read_path(i, label).unwrap(), n_d).unwrap();
            let path_e = fe.read_path(i, label).unwrap();
            let (at_e, from_e) = e.access(&s, &path_e, n_e, label).unwrap();
            let out = c.access(&s, &from_d, &from_e).unwrap();
            let layout = TupleLayout::new(&params, i);
            let before = layout.decode(out.tuple.xor(&at_e.tuple).get(0));
            let (t_c, t_e) = if i < params.h() {
                let parties = (&mut c, &mut d, &mut e);
                let shares = (c_shares.as_slice(), e_shares.as_slice());
                post(parties, (params, i), (&out, &at_e), (label, &to_d), shares)
            } else {
                let (cs, es) = (c_shares[i - 1], e_shares[i - 1]);
                let t_c = c.relabel_last(&params, &out.tuple, label, cs).unwrap();
                (t_c, e.relabel_last(&params, &at_e.tuple, es).unwrap())
            };
            // (T_i)′ = (1, N_i, (L_i)′, A′): A′[j_2] = (L_{i+1})′, the rest as in T_i.
            let after = layout.decode(t_c.xor(&t_e).get(0));
            assert!(after.fb);
            let want = (params.prefix(addr, i), fresh(i));
            assert_eq!((after.n, after.label), want, "tree {i}");
            if i < params.h() {
                let j2 = params.chunk(addr, i + 1) ^ at_e.rotation.rho();
                assert_eq!(after.a[j2], fresh(i + 1), "tree {i}");
                let others = (0..params.fanout()).filter(|&t| t != j2);
                assert!(others.into_iter().all(|t| after.a[t] == before.a[t]));
            } else {
                assert_eq!(after.a, before.a, "the record");
            }
            label = out.next_label.unwrap_or(0);
        }
    }
}
