//! Arithmetic on additive shares mod 2^64 between two parties: Z_2^64 triples by Gilboa's
//! product multiply once the shares are added (at sizes around the message batching), the
//! engine's Beaver products and openings give x·y and x for random and edge-case words, and
//! the messages depend on the counts only.
#![allow(clippy::unwrap_used)]

use doram_field::Z64;
use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::arith::Arith2;
use doram_twopc::driver::softspoken_both_setup;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use doram_twopc::triples::z64_triples;
use rand_core::RngCore;

#[test]
fn z64_triples_multiply() {
    for count in [0usize, 1, 77, 1100] {
        let r = run_parties(
            LocalMesh::new(2).build(),
            "z64 triples",
            |mut s: Session| {
                let mut rng = insecure_rng_for_tests(count as u64 * 2 + s.me().index() as u64);
                let (mut snd, mut rcv) =
                    softspoken_both_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
                z64_triples(&mut s, &mut snd, &mut rcv, count, &mut rng).unwrap()
            },
        );
        let (t0, t1) = (r[0].as_ref().unwrap(), r[1].as_ref().unwrap());
        assert_eq!(t0.c.len(), count);
        for i in 0..count {
            let (a, b) = (t0.a[i] + t1.a[i], t0.b[i] + t1.b[i]);
            assert_eq!(t0.c[i] + t1.c[i], a * b, "triple {i}");
        }
        if count >= 1000 {
            // b is random: its top bit is set about half the time.
            let high = (0..count)
                .filter(|&i| (t0.b[i] + t1.b[i]).0 >> 63 == 1)
                .count();
            assert!(
                high > count / 3 && high < 2 * count / 3,
                "{high} of {count}"
            );
        }
    }
}

/// Each party's shares of x and y for `xs`, `ys` (P0 random, P1 the rest), the products and
/// openings, and the (messages, bytes) sent by the products.
fn products(xs: &[u64], ys: &[u64], seed: u64) -> (Vec<u64>, Vec<u64>, [(u64, u64); 2]) {
    let shares: Vec<(u64, u64)> = {
        let mut g = insecure_rng_for_tests(seed);
        xs.iter()
            .zip(ys)
            .map(|_| (g.next_u64(), g.next_u64()))
            .collect()
    };
    let r = run_parties(
        LocalMesh::new(2).build(),
        "z64 products",
        |mut s: Session| {
            let me = s.me().index();
            let mut rng = insecure_rng_for_tests(seed * 2 + me as u64 + 1);
            let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
            let pairs: Vec<(Z64, Z64)> = shares
                .iter()
                .zip(xs.iter().zip(ys))
                .map(|(&(a, b), (&x, &y))| {
                    if me == 0 {
                        (Z64(a), Z64(b))
                    } else {
                        (Z64(x.wrapping_sub(a)), Z64(y.wrapping_sub(b)))
                    }
                })
                .collect();
            let before = s.stats().total().sum();
            let z = engine.mul_many_z64(&mut s, &pairs).unwrap();
            let after = s.stats().total().sum();
            let opened = engine.open_many_z64(&mut s, &z).unwrap();
            let xs_opened = engine
                .open_many_z64(&mut s, &pairs.iter().map(|p| p.0).collect::<Vec<_>>())
                .unwrap();
            (
                opened.iter().map(|z| z.0).collect::<Vec<u64>>(),
                xs_opened.iter().map(|z| z.0).collect::<Vec<u64>>(),
                (
                    after.msgs_sent - before.msgs_sent,
                    after.bytes_sent - before.bytes_sent,
                ),
            )
        },
    );
    let r: Vec<_> = r.into_iter().map(Result::unwrap).collect();
    assert_eq!(r[0].0, r[1].0, "both parties open the same products");
    (r[0].0.clone(), r[0].1.clone(), [r[0].2, r[1].2])
}

#[test]
fn beaver_products_and_openings() {
    let mut g = insecure_rng_for_tests(9);
    let mut xs: Vec<u64> = vec![0, 1, u64::MAX, 1 << 63, 3];
    let mut ys: Vec<u64> = vec![u64::MAX, u64::MAX, u64::MAX, 2, 0];
    for _ in 0..40 {
        xs.push(g.next_u64());
        ys.push(g.next_u64());
    }
    let (z, x, _) = products(&xs, &ys, 4);
    let want: Vec<u64> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| a.wrapping_mul(*b))
        .collect();
    assert_eq!(z, want);
    assert_eq!(x, xs);
}

#[test]
fn messages_depend_on_the_count_only() {
    let (_, _, a) = products(&[1, 2, 3], &[4, 5, 6], 11);
    let (_, _, b) = products(&[u64::MAX, 0, 7], &[9, u64::MAX, 0], 12);
    assert_eq!(a, b);
}
