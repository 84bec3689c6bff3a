//! Two-party generation of BGI keys with outputs in Z_2^64: the keys' full-domain evaluations
//! (handed back by the generation, and recomputed from the keys) share β·[x = α] mod 2^64 on
//! odd, power-of-two and one-point domains and for β of every size; transcripts depend on
//! neither α nor β; mismatched lengths are refused before anything is sent.
#![allow(clippy::unwrap_used)]

mod common;

use common::{mesh, run2};
use doram_dpf::{Bgi, SinglePointDpf};
use doram_field::Z64;
use doram_net::{Session, Transcript};
use doram_twopc::arith::Arith2;
use doram_twopc::dpf_gen::{gen_many_with_outputs_z64, path_bits};
use doram_twopc::{TwopcError, insecure_rng_for_tests};
use rand_core::RngCore;

/// `(α, β)` per key, both parties' shares (`P0` random).
fn share(points: &[(usize, u64)], n: usize, seed: u64) -> [Vec<(usize, u64)>; 2] {
    let mut g = insecure_rng_for_tests(seed);
    let mask = n.next_power_of_two() - 1;
    let mut out = [Vec::new(), Vec::new()];
    for &(alpha, beta) in points {
        let (a0, b0) = (usize::try_from(g.next_u64()).unwrap() & mask, g.next_u64());
        out[0].push((a0, b0));
        out[1].push((alpha ^ a0, beta.wrapping_sub(b0)));
    }
    out
}

type PartyOut = (Vec<Vec<Z64>>, Vec<doram_dpf::BgiKey<Z64>>, Transcript);

fn party(mut s: Session, n: usize, mine: &[(usize, u64)], seed: u64) -> PartyOut {
    let mut rng = insecure_rng_for_tests(seed * 2 + s.me().index() as u64);
    let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
    let bits: Vec<Vec<bool>> = mine.iter().map(|&(a, _)| path_bits(a, n)).collect();
    let betas: Vec<Z64> = mine.iter().map(|&(_, b)| Z64(b)).collect();
    // Refused before anything is sent: one β share short, one output buffer short.
    let mut outs = vec![Vec::new(); mine.len()];
    let e = gen_many_with_outputs_z64(
        &mut s,
        &mut engine,
        &bits,
        &betas[1..],
        n,
        &mut outs,
        &mut rng,
    );
    assert!(matches!(e, Err(TwopcError::LengthMismatch { .. })), "{e:?}");
    let e = gen_many_with_outputs_z64(
        &mut s,
        &mut engine,
        &bits,
        &betas,
        n,
        &mut outs[1..],
        &mut rng,
    );
    assert!(matches!(e, Err(TwopcError::LengthMismatch { .. })), "{e:?}");
    s.record_transcript(true);
    let keys =
        gen_many_with_outputs_z64(&mut s, &mut engine, &bits, &betas, n, &mut outs, &mut rng)
            .unwrap();
    (outs, keys, s.take_transcript().unwrap())
}

fn run(n: usize, points: &[(usize, u64)], seed: u64) -> (PartyOut, PartyOut) {
    let [s0, s1] = share(points, n, seed);
    run2(
        mesh(),
        |s| party(s, n, &s0, seed),
        |s| party(s, n, &s1, seed),
    )
}

#[test]
fn outputs_share_the_point_function() {
    for n in [1usize, 2, 5, 64, 100, 1000] {
        let points = [
            (n - 1, u64::MAX),
            (0, 1),
            (n / 2, 0x1234_5678_9abc_def0),
            (n / 3, 0),
        ];
        let ((o0, k0, _), (o1, k1, _)) = run(n, &points, 70 + n as u64);
        for (j, &(alpha, beta)) in points.iter().enumerate() {
            assert_eq!(o0[j], Bgi::eval_all(&k0[j]), "n = {n}");
            assert_eq!(o1[j], Bgi::eval_all(&k1[j]), "n = {n}");
            for x in 0..n {
                let want = if x == alpha { beta } else { 0 };
                assert_eq!((o0[j][x] + o1[j][x]).0, want, "n = {n}, key {j}, x = {x}");
            }
        }
    }
}

#[test]
fn transcripts_depend_on_neither_alpha_nor_beta() {
    let n = 37;
    let ((_, _, a0), (_, _, a1)) = run(n, &[(3, 5), (36, u64::MAX)], 1);
    let ((_, _, b0), (_, _, b1)) = run(n, &[(20, 0), (0, 1 << 40)], 2);
    assert_eq!(a0, b0);
    assert_eq!(a1, b1);
}
