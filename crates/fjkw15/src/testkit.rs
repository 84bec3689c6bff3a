//! **Insecure** fixtures for tests and test benches: a dealer that sees the whole plaintext
//! forest and XOR-shares it between D and E ([`deal`]), and whole accesses run in one process
//! from an address the harness knows ([`access_in_process`]). The secure three-party load is
//! [`crate::load`]; the dealer is for tests and benchmarks where the secret does not matter.

use rand_core::RngCore;

use crate::access::{AccessAtC, AccessAtD, AccessAtE, AccessShape};
use crate::bits::{Strings, get_bits};
use crate::error::Fjkw15Error;
use crate::eviction::EvictShape;
use crate::layout::TupleLayout;
use crate::params::Params;
use crate::party::{C, D, E};
use crate::plain::{Op, PlainForest, record_fits, words_for};
use crate::postprocess::{FreshLabels, PostShape};
use crate::storage::{ForestShare, TreeShare};

pub use crate::storage::encode_tree;

/// **Insecure**: D's and E's shares of `forest`, a uniformly random XOR-sharing of every tree
/// in the protocols' layout, dealt by someone who sees it all.
pub fn deal<R: RngCore + ?Sized>(forest: &PlainForest, rng: &mut R) -> (ForestShare, ForestShare) {
    let params = *forest.params();
    let mut shares = |i: usize| {
        let plain = encode_tree(forest, i);
        let d = Strings::random(plain.count(), plain.width(), rng);
        let e = plain.xor(&d);
        (d, e)
    };
    let (root_d, root_e) = shares(0);
    let (mut trees_d, mut trees_e) = (Vec::new(), Vec::new());
    for i in 1..=params.h() {
        let (d, e) = shares(i);
        let tree = |rows| TreeShare::from_rows(&params, i, rows).expect("OT_i's shape");
        trees_d.push(tree(d));
        trees_e.push(tree(e));
    }
    let forest = |root, trees| ForestShare::new(params, root, trees).expect("the forest's shape");
    (forest(root_d, trees_d), forest(root_e, trees_e))
}

/// The outputs of Access\[0..=h\] for one address: per tree, C's, D's and E's outputs, and
/// the labels L_0 = 0, L_1, …, L_h.
type Accessed = (Vec<(AccessAtC, AccessAtD, AccessAtE)>, Vec<u64>);

/// FJKW15 Alg. 3 on every tree in turn, following the labels C learns.
fn access_trees(
    (c, d, e): &mut (C, D, E),
    (fd, fe): (&ForestShare, &ForestShare),
    (n_d, n_e): (u64, u64),
) -> Result<Accessed, Fjkw15Error> {
    let p = *fd.params();
    let mut labels = vec![0u64];
    let mut outs = Vec::with_capacity(p.trees());
    for i in 0..=p.h() {
        let s = AccessShape::new(p, i)?;
        let l = labels[i];
        let (at_d, from_d) = d.access(&s, &fd.read_path(i, l)?, n_d)?;
        let (at_e, from_e) = e.access(&s, &fe.read_path(i, l)?, n_e, l)?;
        let at_c = c.access(&s, &from_d, &from_e)?;
        labels.push(at_c.next_label.unwrap_or(0));
        outs.push((at_c, at_d, at_e));
    }
    Ok((outs, labels))
}

/// FJKW15 Alg. 4 on trees 0..h−1 and T_h's relabelling: C's and E's shares of every (T_i)′.
fn postprocess_trees(
    p: Params,
    (c, d, e): &mut (C, D, E),
    (outs, labels): &Accessed,
    (c_fresh, e_fresh, to_d): (&[u64], &[u64], &FreshLabels),
    write: Option<(&[u64], &[u64])>,
) -> Result<Vec<(Strings, Strings)>, Fjkw15Error> {
    let share = |v: &[u64], i: usize| if i == 0 { 0 } else { v[i - 1] };
    let mut tuples = Vec::with_capacity(outs.len());
    for (i, (at_c, _, at_e)) in outs.iter().enumerate() {
        if i == p.h() {
            let mut t_c = c.relabel_last(&p, &at_c.tuple, labels[i], share(c_fresh, i))?;
            let mut t_e = e.relabel_last(&p, &at_e.tuple, share(e_fresh, i))?;
            if let Some((v_d, v_e)) = write {
                let from_d = d.write_send(&p, v_d)?;
                t_c = c.write_record(&p, &t_c, &from_d)?;
                t_e = e.write_record(&p, &t_e, v_e)?;
            }
            tuples.push((t_c, t_e));
            continue;
        }
        let ps = PostShape::new(p, i)?;
        let (to_c, to_e) = d.post_prepare(&ps, to_d)?;
        let j2 = at_c
            .j2
            .ok_or(Fjkw15Error::InvalidInput("Access[i < h] gives j_2"))?;
        let delta = c.post_send(&ps, &to_c, j2)?;
        let l = (labels[i], labels[i + 1]);
        let cs = (share(c_fresh, i), c_fresh[i]);
        let t_c = c.post_finish(&ps, &to_c, j2, &at_c.tuple, l, cs)?;
        tuples.push((
            t_c,
            e.post_finish(&ps, &to_e, &delta, &at_e.tuple, share(e_fresh, i))?,
        ));
    }
    Ok(tuples)
}

/// FJKW15 Alg. 5 on every tree, written back into `fd`, `fe`: the pre-computation of every
/// tree first (as the driver runs it before the access), then the online steps.
fn evict_trees(
    (c, d, e): &mut (C, D, E),
    (fd, fe): (&mut ForestShare, &mut ForestShare),
    (outs, labels): &Accessed,
    tuples: &[(Strings, Strings)],
) -> Result<(), Fjkw15Error> {
    let p = *fd.params();
    let mut pres = Vec::with_capacity(outs.len());
    for (i, (_, at_d, _)) in outs.iter().enumerate() {
        let s = EvictShape::new(p, i)?;
        let (pre_d, shift) = d.evict_pre(&s, &at_d.rotation)?;
        let (pre_c, c_labels, xot) = c.evict_pre(&s)?;
        let (pre_e, tables) = e.evict_pre(&s)?;
        pres.push((
            pre_c,
            pre_d.finish(tables, c_labels),
            pre_e.finish(shift, xot),
        ));
    }
    for (i, ((at_c, _, at_e), (t_c, t_e))) in outs.iter().zip(tuples).enumerate() {
        let (pre_c, pre_d, pre_e) = &pres[i];
        let s = EvictShape::new(p, i)?;
        let empty = Strings::zeros(0, p.tuple_bits(i));
        let path_c = at_c.path.as_ref().unwrap_or(&empty);
        let path_e = at_e.path.as_ref().unwrap_or(&empty);
        let u = c.evict_shift(&s, pre_c, path_c, t_c)?;
        let share_e = e.evict_shift(&s, &at_e.rotation, pre_e, (path_e, t_e), &u)?;
        let (new_d, new_e) = if i == 0 {
            let new_c = c.evict_root(&s, pre_c)?;
            (
                d.evict_write(&s, None, &new_c)?,
                e.evict_root(&s, &share_e)?,
            )
        } else {
            // [FJKW15 Alg. 5, steps 2–3] GC[F2FT] per internal bucket, GC[F2ET] for the leaf.
            let late = e.evict_late(&s, labels[i], pre_e, &share_e)?;
            let picks = d.evict_picks(&s, pre_d, &late)?;
            let (to_e, to_c, share_d) = d.evict_move(&s, pre_d, &picks)?;
            let e_to_c = e.evict_move(&s, &share_e)?;
            let new_c = c.evict_finish(&s, &e_to_c, &to_c)?;
            let new_d = d.evict_write(&s, Some(&share_d), &new_c)?;
            (new_d, e.evict_finish(&s, pre_e, &to_e)?)
        };
        fd.write_path(i, labels[i], &new_d)?;
        fe.write_path(i, labels[i], &new_e)?;
    }
    Ok(())
}

/// One whole access to `addr` among the three parties in one process — fresh labels,
/// Access\[0..=h\], PostProcessT (and, for [`Op::Write`], the new record,
/// [`WriteFromD`](crate::postprocess::WriteFromD)), Eviction with its garbled circuits and the
/// write-back into D's and E's shares `fd`, `fe` — returning the record held before (words of
/// [`words_for`]`(d)`). D's and E's shares of the address and of a written record are drawn
/// from `rng` (**insecure**: a test harness that knows them). Messages pass in memory, in the
/// order a driver will send them.
///
/// # Errors
/// [`Fjkw15Error::Overflow`] if an eviction overflows (the shares are then partly written
/// back and must not be used further), or any error of the round functions.
pub fn access_in_process<R: RngCore + ?Sized>(
    parties: &mut (C, D, E),
    (fd, fe): (&mut ForestShare, &mut ForestShare),
    addr: u64,
    op: Op<'_>,
    rng: &mut R,
) -> Result<Vec<u64>, Fjkw15Error> {
    let p = *fd.params();
    if addr >> p.m() != 0 {
        return Err(Fjkw15Error::InvalidInput("an address has m bits"));
    }
    // D's and E's shares of a written record: v_D random, v_E = v ⊕ v_D.
    let write = match op {
        Op::Read => None,
        Op::Write(v) if record_fits(v, p.record_bits()) => {
            let v_d: Vec<u64> = v
                .iter()
                .enumerate()
                .map(|(k, _)| {
                    let bits = (p.record_bits() - 64 * k).min(64);
                    rng.next_u64() & (u64::MAX >> (64 - bits))
                })
                .collect();
            let v_e: Vec<u64> = v.iter().zip(&v_d).map(|(a, b)| a ^ b).collect();
            Some((v_d, v_e))
        }
        Op::Write(_) => return Err(Fjkw15Error::InvalidInput("a record is d bits in words")),
    };
    let n_d = rng.next_u64() & ((1u64 << p.m()) - 1);
    let c_fresh = parties.0.fresh_labels(&p);
    let (e_fresh, to_d) = parties.2.fresh_labels(&p);
    let accessed = access_trees(parties, (fd, fe), (n_d, addr ^ n_d))?;
    let record = record_of(&p, &accessed)?;
    let fresh = (c_fresh.as_slice(), e_fresh.as_slice(), &to_d);
    let write = write.as_ref().map(|(a, b)| (a.as_slice(), b.as_slice()));
    let tuples = postprocess_trees(p, parties, &accessed, fresh, write)?;
    evict_trees(parties, (fd, fe), &accessed, &tuples)?;
    Ok(record)
}

/// The record D\[N\]: the A field of T_h, from C's and E's shares.
fn record_of(p: &Params, (outs, _): &Accessed) -> Result<Vec<u64>, Fjkw15Error> {
    let (at_c, _, at_e) = outs.last().ok_or(Fjkw15Error::InvalidInput("no trees"))?;
    let layout = TupleLayout::new(p, p.h());
    let bits = p.record_bits();
    let record = at_c
        .tuple
        .xor(&at_e.tuple)
        .bit_range(0, layout.a_offset(), bits);
    let words = (0..words_for(bits)).map(|k| get_bits(&record, 64 * k, (bits - 64 * k).min(64)));
    Ok(words.collect())
}
