//! Whole accesses among C, D and E on a dealt forest: Access[0..=h], PostProcessT, Eviction,
//! written back into D's and E's shares, again and again, every record checked against a plain
//! array. Eviction's garbled circuits (F2FT, F2ET) are not built yet: their output, D's picks,
//! is computed here with `plain::f2ft`/`f2et` on the opened path (the ideal functionality).
#![allow(clippy::unwrap_used)]

mod common;

use common::{parties, rng, test_seed};
use doram_core::PartyId;
use doram_fjkw15::access::{AccessAtC, AccessAtD, AccessAtE, AccessShape};
use doram_fjkw15::bits::Strings;
use doram_fjkw15::eviction::{EvictFromC, EvictShape, Picks};
use doram_fjkw15::layout::TupleLayout;
use doram_fjkw15::msgs::{WireMessage, receive};
use doram_fjkw15::plain::{PlainForest, f2et, f2ft, words_for};
use doram_fjkw15::postprocess::PostShape;
use doram_fjkw15::storage::ForestShare;
use doram_fjkw15::testkit::deal;
use doram_fjkw15::{C, D, E, Params};
use rand::Rng;

/// The picks of F2FT and F2ET on the opened P** of tree i, path to `leaf`, random offsets.
fn ideal_picks(p: &Params, i: usize, leaf: u64, opened: &Strings, rng: &mut impl Rng) -> Picks {
    let (d, w) = (p.depth(i) as usize, p.w());
    let layout = TupleLayout::new(p, i);
    let fb = |t: usize| opened.field(t, 0, 1) == 1;
    let bit = |t: usize, j: usize| {
        let label = opened.field(t, layout.label_offset(), d);
        (label >> (d - 1 - j)) & 1 == (leaf >> (d - 1 - j)) & 1
    };
    let internal = (0..d)
        .map(|j| {
            let slots: Vec<usize> = (w * j..w * (j + 1)).collect();
            let moveable: Vec<bool> = slots.iter().map(|&t| fb(t) && bit(t, j)).collect();
            let empty: Vec<bool> = slots.iter().map(|&t| !fb(t)).collect();
            let lambda = [rng.random_range(0..w), rng.random_range(0..w)];
            f2ft(&moveable, &empty, lambda).expect("no overflow at this w")
        })
        .collect();
    let empty: Vec<bool> = (w * d..w * (d + 4)).map(|t| !fb(t)).collect();
    let lambda = [rng.random_range(0..4 * w), rng.random_range(0..4 * w)];
    let leaf = f2et(&empty, lambda).expect("no leaf overflow at this w");
    Picks { internal, leaf }
}

/// One whole access to `addr`; returns the record read.
fn access(
    (c, d, e): &mut (C, D, E),
    (fd, fe): (&mut ForestShare, &mut ForestShare),
    addr: u64,
    rng: &mut impl Rng,
) -> Vec<u64> {
    let p = *fd.params();
    let n_d = rng.random_range(0..1u64 << p.m());
    let n_e = addr ^ n_d;
    let c_fresh = c.fresh_labels(&p);
    let (e_fresh, to_d) = e.fresh_labels(&p);
    let to_d = receive(PartyId::P2, &to_d.encode(), &p).unwrap();
    let share = |v: &[u64], i: usize| if i == 0 { 0 } else { v[i - 1] };
    // [FJKW15 Alg. 3] Access[i], i = 0..h, in sequence; labels[i] = L_i.
    let mut labels = vec![0u64];
    let mut outs: Vec<(AccessAtC, AccessAtD, AccessAtE)> = Vec::new();
    for i in 0..=p.h() {
        let s = AccessShape::new(p, i).unwrap();
        let l = labels[i];
        let (at_d, from_d) = d.access(&s, &fd.read_path(i, l).unwrap(), n_d).unwrap();
        let (at_e, from_e) = e.access(&s, &fe.read_path(i, l).unwrap(), n_e, l).unwrap();
        let at_c = c.access(&s, &from_d, &from_e).unwrap();
        labels.push(at_c.next_label.unwrap_or(0));
        outs.push((at_c, at_d, at_e));
    }
    let layout = TupleLayout::new(&p, p.h());
    let (at_c, _, at_e) = &outs[p.h()];
    let t_h = at_c.tuple.xor(&at_e.tuple);
    let record = t_h.bit_range(0, layout.a_offset(), p.record_bits());
    let record: Vec<u64> = (0..words_for(p.record_bits()))
        .map(|k| {
            let bits = (p.record_bits() - 64 * k).min(64);
            doram_fjkw15::bits::get_bits(&record, 64 * k, bits)
        })
        .collect();
    // [FJKW15 Alg. 4] PostProcessT[i], and T_h's new label.
    let mut tuples = Vec::new();
    for (i, (at_c, _, at_e)) in outs.iter().enumerate() {
        if i == p.h() {
            let t_c = c
                .relabel_last(&p, &at_c.tuple, labels[i], share(&c_fresh, i))
                .unwrap();
            tuples.push((
                t_c,
                e.relabel_last(&p, &at_e.tuple, share(&e_fresh, i)).unwrap(),
            ));
            continue;
        }
        let ps = PostShape::new(p, i).unwrap();
        let (to_c, to_e) = d.post_prepare(&ps, &to_d).unwrap();
        let j2 = at_c.j2.unwrap();
        let delta = c.post_send(&ps, &to_c, j2).unwrap();
        let l = (labels[i], labels[i + 1]);
        let cs = (share(&c_fresh, i), c_fresh[i]);
        let t_c = c.post_finish(&ps, &to_c, j2, &at_c.tuple, l, cs).unwrap();
        let t_e = e
            .post_finish(&ps, &to_e, &delta, &at_e.tuple, share(&e_fresh, i))
            .unwrap();
        tuples.push((t_c, t_e));
    }
    // [FJKW15 Alg. 5] Eviction[i], written back.
    for (i, ((at_c, at_d, at_e), (t_c, t_e))) in outs.iter().zip(&tuples).enumerate() {
        let s = EvictShape::new(p, i).unwrap();
        let empty = Strings::zeros(0, p.tuple_bits(i));
        let (path_c, path_e) = (
            at_c.path.as_ref().unwrap_or(&empty),
            at_e.path.as_ref().unwrap_or(&empty),
        );
        let pre = d.evict_shift(&s, &at_d.rotation).unwrap();
        let (share_c, u) = c.evict_shift(&s, path_c, t_c).unwrap();
        let share_e = e
            .evict_shift(&s, &at_e.rotation, (path_e, t_e), &pre, &u)
            .unwrap();
        let (new_c, new_e) = if i == 0 {
            (
                c.evict_root(&s, &share_c).unwrap(),
                e.evict_root(&s, &share_e).unwrap(),
            )
        } else {
            let opened = share_c.path().xor(share_e.path());
            let picks = ideal_picks(&p, i, labels[i], &opened, rng);
            let (to_e, to_c) = d.evict_move(&s, &picks).unwrap();
            let c_to_e = c.evict_move(&s, &share_c).unwrap();
            let e_to_c = e.evict_move(&s, &share_e).unwrap();
            let new_c = c.evict_finish(&s, &e_to_c, &to_c).unwrap();
            (new_c, e.evict_finish(&s, &c_to_e, &to_e).unwrap())
        };
        let new_c: EvictFromC = receive(PartyId::P0, &new_c.encode(), &s).unwrap();
        fd.write_path(i, labels[i], new_c.path()).unwrap();
        fe.write_path(i, labels[i], &new_e).unwrap();
    }
    record
}

#[test]
fn repeated_accesses_read_every_record_and_keep_the_forest() {
    let seed = test_seed();
    let mut parties = parties(seed);
    let mut rng = rng(seed, 1);
    // w ≥ 32 keeps overflows below 10^−5 in these runs (docs/notes/fjkw15.md).
    for (params, accesses) in [
        (Params::new(6, 3, 32, 20).unwrap(), 150),
        (Params::new(9, 3, 32, 20).unwrap(), 150),
        (Params::new(8, 4, 40, 70).unwrap(), 60),
        (Params::new(4, 4, 32, 9).unwrap(), 40),
    ] {
        let items = 1u64 << params.m();
        let words = words_for(params.record_bits());
        let array: Vec<Vec<u64>> = (0..items)
            .map(|n| [vec![n], vec![n & 1; words - 1]].concat())
            .collect();
        let forest =
            PlainForest::load(params, items, |n| array[n as usize].clone(), &mut rng).unwrap();
        let (mut fd, mut fe) = deal(&forest, &mut rng);
        for k in 0..accesses {
            // Hammer a few addresses as well as random ones.
            let addr = if k % 3 == 0 {
                k as u64 % 3
            } else {
                rng.random_range(0..items)
            };
            let got = access(&mut parties, (&mut fd, &mut fe), addr, &mut rng);
            assert_eq!(
                got, array[addr as usize],
                "{params:?}: access {k} to {addr}"
            );
        }
    }
}
