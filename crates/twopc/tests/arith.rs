//! The two-party arithmetic engine against plaintext: inputs of either party, linear
//! combinations, batched products (pooled and inline triples) and openings; transcripts that
//! do not depend on the values; a peer's malformed opening named.
#![allow(clippy::unwrap_used)]

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_field::Fp;
use doram_net::{LocalMesh, Session, Tamper, Transcript, run_parties};
use doram_twopc::arith::{Arith2, Share};
use doram_twopc::{TwopcError, insecure_rng_for_tests};

/// x from P0 and y from P1 (m each): opens x·y + 3x − y for every pair, twice (with 5 pooled
/// triples, so the second batch refills inline); returns the openings, the counters and the
/// transcript of the products.
fn run(
    seed: u64,
    xs: &[u64],
    ys: &[u64],
) -> Vec<(Vec<Fp>, doram_twopc::arith::Counters, Transcript)> {
    let m = xs.len();
    run_parties(LocalMesh::new(2).build(), "arith", |mut s: Session| {
        let me = s.me();
        let mut rng = insecure_rng_for_tests(seed * 2 + me.index() as u64);
        let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
        let fx: Vec<Fp> = xs.iter().map(|&v| Fp::from_u64(v)).collect();
        let fy: Vec<Fp> = ys.iter().map(|&v| Fp::from_u64(v)).collect();
        let x = e
            .input(PartyId::P0, (me == PartyId::P0).then_some(&fx[..]), m)
            .unwrap();
        let y = e
            .input(PartyId::P1, (me == PartyId::P1).then_some(&fy[..]), m)
            .unwrap();
        e.preprocess(&mut s, 5).unwrap();
        s.record_transcript(true);
        let pairs: Vec<(Share, Share)> = x.iter().copied().zip(y.iter().copied()).collect();
        let mut out = Vec::new();
        for _ in 0..2 {
            let p = e.mul_many(&mut s, &pairs).unwrap();
            let z: Vec<Share> = p
                .iter()
                .zip(&x)
                .zip(&y)
                .map(|((&p, &x), &y)| p + x * Fp::from_u64(3) - y)
                .collect();
            out.extend(e.open_many(&mut s, &z).unwrap());
        }
        (out, e.counters(), s.take_transcript().unwrap())
    })
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn products_and_openings_match_plaintext() {
    let xs = [0u64, 1, 7, u64::MAX, 12345];
    let ys = [5u64, 0, 9, u64::MAX, 1 << 40];
    let r = run(1, &xs, &ys);
    let want: Vec<Fp> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| {
            let (x, y) = (Fp::from_u64(x), Fp::from_u64(y));
            x * y + x * Fp::from_u64(3) - y
        })
        .collect();
    for (out, c, _) in &r {
        assert_eq!(&out[..5], &want[..]);
        assert_eq!(&out[5..], &want[..]);
        assert_eq!(c.products, 10);
        assert_eq!(c.triples_made, 10);
        assert_eq!(c.inline_refills, 1);
    }
    // Other values, same seed: the same messages in shape.
    let other = run(1, &[3, 3, 3, 3, 3], &[1, 2, 3, 4, 5]);
    for (a, b) in r.iter().zip(&other) {
        assert_eq!(a.2, b.2);
    }
}

#[test]
fn misuse_and_a_malformed_opening() {
    let outs = run_parties(LocalMesh::new(2).build(), "misuse", |mut s: Session| {
        let mut rng = insecure_rng_for_tests(3 + s.me().index() as u64);
        let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
        // The owner must pass its values and the other must not; the count must match.
        let own = (s.me() == PartyId::P0).then_some(&[Fp::ONE][..]);
        let wrong = if s.me() == PartyId::P0 {
            None
        } else {
            Some(&[Fp::ONE][..])
        };
        e.input(PartyId::P0, wrong, 1).is_err()
            && (s.me() != PartyId::P0 || e.input(PartyId::P0, own, 2).is_err())
    });
    for o in outs {
        assert!(o.unwrap());
    }
    // P1's opening shortened by one byte: P0 names P1.
    let sessions = LocalMesh::new(2)
        .tamper(|from, _, index, payload| {
            // P1's frames: 0 = seed, then the OT set-up; its last frame is the opening.
            if from == PartyId::P1 && index >= 3 && payload.len() == 32 {
                payload.pop();
            }
            Tamper::Pass
        })
        .build();
    let outs = run_parties(sessions, "tamper", |mut s: Session| {
        let mut rng = insecure_rng_for_tests(4 + s.me().index() as u64);
        let mut e = Arith2::setup(&mut s, &mut rng)?;
        let x = e.constant(Fp::ONE);
        e.open_many(&mut s, &[x, x])
    });
    let r0 = outs.into_iter().next().unwrap().unwrap();
    assert!(
        matches!(
            r0,
            Err(TwopcError::Peer(PeerFault {
                peer: PartyId::P1,
                what: "opened shares",
                ..
            }))
        ),
        "{r0:?}"
    );
}

#[test]
fn comparisons_match_plaintext() {
    for k in [1u32, 8, 46, 64, 100] {
        let top: u128 = (1u128 << k) - 1;
        let mut pairs: Vec<(u128, u128)> = vec![(0, 0), (0, top), (top, 0), (top, top)];
        if top > 1 {
            pairs.extend([(top - 1, top), (top, top - 1), (1, 0), (0, 1)]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u128;
        for _ in 0..20 {
            x = x
                .wrapping_mul(0x5851_f42d_4c95_7f2d)
                .wrapping_add(k as u128);
            let a = x & top;
            let b = if x >> 100 & 1 == 1 {
                a
            } else {
                (x >> 13) & top
            };
            pairs.push((a, b));
        }
        let outs = run_parties(LocalMesh::new(2).build(), "lt", |mut s: Session| {
            let me = s.me();
            let mut rng = insecure_rng_for_tests(40 + u64::from(k) + me.index() as u64);
            let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
            let m = pairs.len();
            let a: Vec<Fp> = pairs.iter().map(|p| Fp::from_u128(p.0)).collect();
            let b: Vec<Fp> = pairs.iter().map(|p| Fp::from_u128(p.1)).collect();
            let sa = e
                .input(PartyId::P0, (me == PartyId::P0).then_some(&a[..]), m)
                .unwrap();
            let sb = e
                .input(PartyId::P1, (me == PartyId::P1).then_some(&b[..]), m)
                .unwrap();
            let sp: Vec<(Share, Share)> = sa.into_iter().zip(sb).collect();
            let mut out = e.lt_many(&mut s, &sp, k).unwrap();
            out.extend(e.eq_many(&mut s, &sp, k).unwrap());
            // select: a < b ? a : b, the minimum.
            let sel: Vec<(Share, Share, Share)> =
                sp.iter().zip(&out).map(|(&(a, b), &l)| (l, a, b)).collect();
            out.extend(e.select_many(&mut s, &sel).unwrap());
            e.open_many(&mut s, &out).unwrap()
        });
        let m = pairs.len();
        for o in outs {
            let o = o.unwrap();
            for (j, &(a, b)) in pairs.iter().enumerate() {
                assert_eq!(o[j], Fp::from_u64(u64::from(a < b)), "k = {k}: {a} < {b}");
                assert_eq!(
                    o[m + j],
                    Fp::from_u64(u64::from(a == b)),
                    "k = {k}: {a} = {b}"
                );
                assert_eq!(
                    o[2 * m + j],
                    Fp::from_u128(a.min(b)),
                    "k = {k}: min({a}, {b})"
                );
            }
        }
    }
}

/// A comparison batch's messages have the same shape whatever the compared values.
#[test]
fn comparison_transcripts_do_not_depend_on_values() {
    let run = |a: u64, b: u64| {
        run_parties(LocalMesh::new(2).build(), "lt-shape", |mut s: Session| {
            let me = s.me();
            let mut rng = insecure_rng_for_tests(70 + me.index() as u64);
            let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
            let x = e.input(
                PartyId::P0,
                (me == PartyId::P0).then_some(&[Fp::from_u64(a)][..]),
                1,
            );
            let y = e.input(
                PartyId::P1,
                (me == PartyId::P1).then_some(&[Fp::from_u64(b)][..]),
                1,
            );
            s.record_transcript(true);
            let lt = e
                .lt_many(&mut s, &[(x.unwrap()[0], y.unwrap()[0])], 46)
                .unwrap();
            e.open_many(&mut s, &lt).unwrap();
            s.take_transcript().unwrap()
        })
        .into_iter()
        .map(Result::unwrap)
        .collect::<Vec<_>>()
    };
    assert_eq!(run(1, 2), run((1 << 46) - 1, 0));
}

/// A refused input draws nothing: the next inputs still share correctly.
#[test]
fn a_refused_input_leaves_the_streams_in_step() {
    let outs = run_parties(LocalMesh::new(2).build(), "refused", |mut s: Session| {
        let me = s.me();
        let mut rng = insecure_rng_for_tests(90 + me.index() as u64);
        let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
        // P0 gets the count wrong, P1 names a third party as the owner: both refused.
        let refused = if me == PartyId::P0 {
            e.input(PartyId::P0, Some(&[Fp::ONE]), 2).is_err()
        } else {
            e.input(PartyId::P2, None, 2).is_err()
        };
        let v = [Fp::from_u64(41)];
        let x = e
            .input(PartyId::P0, (me == PartyId::P0).then_some(&v[..]), 1)
            .unwrap();
        (refused, e.open_many(&mut s, &x).unwrap())
    });
    for o in outs {
        let (refused, opened) = o.unwrap();
        assert!(refused);
        assert_eq!(opened, vec![Fp::from_u64(41)]);
    }
}

/// Runs `f` at both parties on an engine with x from P0 and y from P1 as inputs.
fn with_inputs<T: Send>(
    seed: u64,
    xs: &[Fp],
    ys: &[Fp],
    f: impl Fn(&mut Arith2, &mut Session, &[Share], &[Share]) -> T + Sync,
) -> Vec<T> {
    run_parties(LocalMesh::new(2).build(), "arith", |mut s: Session| {
        let me = s.me();
        let mut rng = insecure_rng_for_tests(seed * 2 + me.index() as u64);
        let mut e = Arith2::setup(&mut s, &mut rng).unwrap();
        let x = e
            .input(PartyId::P0, (me == PartyId::P0).then_some(xs), xs.len())
            .unwrap();
        let y = e
            .input(PartyId::P1, (me == PartyId::P1).then_some(ys), ys.len())
            .unwrap();
        f(&mut e, &mut s, &x, &y)
    })
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn cmp_many_gives_both_comparisons() {
    let xs: Vec<Fp> = [0u64, 5, 9, 1023, 1023, 512].map(Fp::from_u64).to_vec();
    let ys: Vec<Fp> = [0u64, 9, 5, 1023, 0, 513].map(Fp::from_u64).to_vec();
    let r = with_inputs(3, &xs, &ys, |e, s, x, y| {
        let pairs: Vec<(Share, Share)> = x.iter().copied().zip(y.iter().copied()).collect();
        let c = e.cmp_many(s, &pairs, 10).unwrap();
        let flat: Vec<Share> = c.iter().flat_map(|&(a, b)| [a, b]).collect();
        e.open_many(s, &flat).unwrap()
    });
    let want: Vec<Fp> = xs
        .iter()
        .zip(&ys)
        .flat_map(|(a, b)| {
            let (a, b) = (a.to_u128(), b.to_u128());
            [u64::from(a < b), u64::from(a == b)].map(Fp::from_u64)
        })
        .collect();
    assert_eq!(r[0], want);
    assert_eq!(r[1], want);
}

#[test]
fn onehot_vectors_match_plaintext() {
    for (k, len) in [(1u32, 1usize), (1, 2), (3, 5), (4, 16), (7, 100)] {
        let xs: Vec<Fp> = (0..len as u64).step_by(3).map(Fp::from_u64).collect();
        let ys = vec![Fp::ZERO; xs.len()];
        let r = with_inputs(4, &xs, &ys, |e, s, x, y| {
            // x + y − y: a value whose shares are not the input's.
            let v: Vec<Share> = x.iter().zip(y).map(|(&a, &b)| a + b).collect();
            let hot = e.onehot_many(s, &v, k, len).unwrap();
            e.open_many(s, &hot.concat()).unwrap()
        });
        let want: Vec<Fp> = xs
            .iter()
            .flat_map(|x| (0..len as u128).map(move |j| Fp::from_u64(u64::from(x.to_u128() == j))))
            .collect();
        assert_eq!(r[0], want, "k = {k}, len = {len}");
    }
    let r = with_inputs(5, &[Fp::ONE], &[Fp::ONE], |e, s, x, _| {
        e.onehot_many(s, x, 21, 4).is_err() && e.onehot_many(s, x, 2, 5).is_err()
    });
    assert!(r.iter().all(|&b| b));
}

#[test]
fn labels_round_trip_and_compute() {
    let xs: Vec<Fp> = [0u64, 1, 77, u64::MAX].map(Fp::from_u64).to_vec();
    let ys: Vec<Fp> = vec![Fp::ZERO - Fp::ONE, Fp::from_u64(3), Fp::ZERO, Fp::ONE];
    let r = with_inputs(6, &xs, &ys, |e, s, x, y| {
        let v: Vec<Share> = x.iter().zip(y).map(|(&a, &b)| a + b).collect();
        let labels = e.to_labels(s, &v, 128).unwrap();
        let back = e.from_labels(s, &labels).unwrap();
        // Public labels: the constant 5 as a value, converted back.
        let five: Vec<bool> = (0..128).map(|j| j == 0 || j == 2).collect();
        let c = e.public_labels(&five);
        let five = e.from_labels(s, &c).unwrap();
        let low = e.to_labels(s, &v, 3).unwrap().len();
        let mut all = back;
        all.extend(five);
        (e.open_many(s, &all).unwrap(), low)
    });
    let mut want: Vec<Fp> = xs.iter().zip(&ys).map(|(&a, &b)| a + b).collect();
    want.push(Fp::from_u64(5));
    assert_eq!(r[0].0, want);
    assert_eq!(r[1].0, want);
    assert_eq!(r[0].1, 3 * xs.len());
}

#[test]
fn selects_on_dual_bits_match_plaintext() {
    let xs: Vec<Fp> = [3u64, 9, 7, 0, 100].map(Fp::from_u64).to_vec();
    let ys: Vec<Fp> = [5u64, 2, 7, 1, 99].map(Fp::from_u64).to_vec();
    let r = with_inputs(7, &xs, &ys, |e, s, x, y| {
        let pairs: Vec<(Share, Share)> = x.iter().copied().zip(y.iter().copied()).collect();
        let lt = e.lt_many_dual(s, &pairs, 8).unwrap();
        let me = e.me();
        // min(x, y) with the bit, max(x, y) with its negation, and a public bit.
        let mut t: Vec<_> = lt
            .iter()
            .zip(&pairs)
            .map(|(&b, &(a, c))| (b, a, c))
            .collect();
        t.extend(lt.iter().zip(&pairs).map(|(&b, &(a, c))| (b.not(me), a, c)));
        t.push((doram_twopc::arith::DualBit::public(true, me), x[0], y[0]));
        let sel = e.select_dual_many(s, &t).unwrap();
        let bits: Vec<Share> = lt.iter().map(|b| b.share()).collect();
        let mut all = e.open_many(s, &sel).unwrap();
        all.extend(e.open_many(s, &bits).unwrap());
        all
    });
    let mut want: Vec<Fp> = Vec::new();
    let pairs: Vec<(u128, u128)> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| (a.to_u128(), b.to_u128()))
        .collect();
    want.extend(
        pairs
            .iter()
            .map(|&(a, b)| Fp::from_u128(if a < b { a } else { b })),
    );
    want.extend(
        pairs
            .iter()
            .map(|&(a, b)| Fp::from_u128(if a < b { b } else { a })),
    );
    want.push(xs[0]);
    want.extend(pairs.iter().map(|&(a, b)| Fp::from_u64(u64::from(a < b))));
    assert_eq!(r[0], want);
    assert_eq!(r[1], want);
}
