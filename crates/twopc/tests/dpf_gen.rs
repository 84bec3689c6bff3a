//! Two-party generation of BGI keys against the point function: keys that round-trip through
//! their bytes, evaluate to β·[x = α] on the whole domain and equal a dealer's keys from the
//! same root seeds, for odd and one-point domains and the extreme β; a batch with the rounds of one; transcripts that depend on neither α nor β;
//! a truncated or malformed level message named; misuse refused before sending.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::{mesh, run2, tampered};
use doram_core::wire::PeerFault;
use doram_core::{PartyId, Seed};
use doram_dpf::{Bgi, BgiKey, DpfKey, SinglePointDpf, TwoParty};
use doram_field::Fp;
use doram_net::{LocalMesh, Session, Tamper, Transcript};
use doram_twopc::arith::{Arith2, Share};
use doram_twopc::dpf_gen::{
    PointShare, depth, gen_many, gen_many_with_outputs, gen_one, offer_len, share_len,
};
use doram_twopc::{TwopcError, insecure_rng_for_tests};
use rand::{Rng, RngCore};

/// One point in the clear.
#[derive(Clone, Copy, Debug)]
struct Point {
    alpha: usize,
    beta: Fp,
}

/// What one party ends with.
struct Out {
    keys: Vec<BgiKey<Fp>>,
    transcript: Transcript,
    rounds: u64,
}

/// Both parties' shares of `points`: α as XOR shares (a random mask of ⌈log₂ n⌉ bits for `P0`),
/// β as additive shares (a random share for `P0`).
fn share(points: &[Point], n: usize, seed: u64) -> [Vec<(usize, Fp)>; 2] {
    let mut rng = insecure_rng_for_tests(seed + 7000);
    let d = depth(n);
    let mut out = [Vec::new(), Vec::new()];
    for p in points {
        let mask = if d == 0 {
            0
        } else {
            (rng.next_u64() as usize) & ((1 << d) - 1)
        };
        let b0 = Fp::random(&mut rng);
        out[0].push((mask, b0));
        out[1].push((p.alpha ^ mask, p.beta - b0));
    }
    out
}

/// Raw additive shares as engine shares: `P0` inputs its share, `P1` its own, summed.
fn engine_shares(engine: &mut Arith2, raw: &[Fp]) -> Vec<Share> {
    let me = engine.me();
    let m = raw.len();
    let a = engine
        .input(PartyId::P0, (me == PartyId::P0).then_some(raw), m)
        .unwrap();
    let b = engine
        .input(PartyId::P1, (me == PartyId::P1).then_some(raw), m)
        .unwrap();
    a.into_iter().zip(b).map(|(x, y)| x + y).collect()
}

/// One party: set-up, then the keys (transcript and rounds recorded around the generation).
fn party(mut s: Session, seed: u64, n: usize, mine: &[(usize, Fp)]) -> Out {
    let me = s.me().index() as u64;
    let mut rng = insecure_rng_for_tests(seed * 2 + me);
    let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
    let raw: Vec<Fp> = mine.iter().map(|&(_, b)| b).collect();
    let betas = engine_shares(&mut engine, &raw);
    let points: Vec<PointShare> = mine
        .iter()
        .zip(betas)
        .map(|(&(a, _), b)| PointShare::from_xor_share(a, n, b))
        .collect();
    s.record_transcript(true);
    let before = s.rounds();
    let keys = gen_many(&mut s, &mut engine, &points, n, &mut rng).unwrap();
    Out {
        keys,
        transcript: s.take_transcript().unwrap(),
        rounds: s.rounds() - before,
    }
}

fn run(seed: u64, n: usize, points: &[Point]) -> (Out, Out) {
    let [s0, s1] = share(points, n, seed);
    run2(
        mesh(),
        |s| party(s, seed, n, &s0),
        |s| party(s, seed, n, &s1),
    )
}

/// Each key pair: the parties and domain are right, both keys round-trip through their bytes,
/// and full-domain evaluation (and `eval` at α) sums to β·[x = α].
fn check(n: usize, points: &[Point], p0: &Out, p1: &Out) {
    assert_eq!(p0.keys.len(), points.len());
    assert_eq!(p1.keys.len(), points.len());
    for ((p, k0), k1) in points.iter().zip(&p0.keys).zip(&p1.keys) {
        assert_eq!((k0.party(), k1.party()), (TwoParty::P0, TwoParty::P1));
        for k in [k0, k1] {
            assert_eq!(k.domain_size(), n);
            let bytes = k.to_bytes();
            assert_eq!(bytes.len(), BgiKey::<Fp>::key_size(n));
            assert_eq!(&BgiKey::<Fp>::from_bytes(&bytes, n).unwrap(), k);
        }
        let (e0, e1) = (Bgi::eval_all(k0), Bgi::eval_all(k1));
        for x in 0..n {
            let want = if x == p.alpha { p.beta } else { Fp::ZERO };
            assert_eq!(e0[x] + e1[x], want, "n = {n}, {p:?}, x = {x}");
        }
        if p.alpha < n {
            assert_eq!(Bgi::eval(k0, p.alpha) + Bgi::eval(k1, p.alpha), p.beta);
        }
        if p.alpha < n && n > 1 {
            // The very keys a dealer makes from the same two root seeds (bytes 1..17).
            let root = |k: &BgiKey<Fp>| Seed(k.to_bytes()[1..17].try_into().unwrap());
            let dealt = Bgi::gen_with_seeds(n, p.alpha, p.beta, [root(k0), root(k1)]);
            assert!(dealt == (k0.clone(), k1.clone()), "n = {n}, {p:?}");
        }
    }
}

#[test]
fn keys_share_the_point_function_on_every_domain() {
    let mut rng = common::test_rng("dpf_gen sizes");
    for n in [1usize, 2, 3, 5, 64, 100, 1000, 4096] {
        let mut alpha = || rng.random_range(0..n);
        let points = [
            Point {
                alpha: alpha(),
                beta: Fp::from_u64(0x5eed) * Fp::from_u64(n as u64 + 3),
            },
            Point {
                alpha: alpha(),
                beta: Fp::ZERO,
            },
            Point {
                alpha: n - 1,
                beta: -Fp::ONE,
            },
        ];
        let (p0, p1) = run(n as u64, n, &points);
        check(n, &points, &p0, &p1);
        if n == 1 {
            assert!(p0.transcript.is_empty() && p1.transcript.is_empty());
        }
    }
}

#[test]
fn one_key_through_gen_one() {
    let (n, alpha, beta) = (37usize, 21usize, Fp::from_u64(1234));
    let [s0, s1] = share(&[Point { alpha, beta }], n, 3);
    let body = |mine: Vec<(usize, Fp)>| {
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(40 + s.me().index() as u64);
            let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
            let beta = engine_shares(&mut engine, &[mine[0].1])[0];
            let point = PointShare::from_xor_share(mine[0].0, n, beta);
            gen_one(&mut s, &mut engine, &point, n, &mut rng).unwrap()
        }
    };
    let (k0, k1) = run2(mesh(), body(s0), body(s1));
    let (e0, e1) = (Bgi::eval_all(&k0), Bgi::eval_all(&k1));
    for x in 0..n {
        assert_eq!(e0[x] + e1[x], if x == alpha { beta } else { Fp::ZERO });
    }
}

/// The evaluations `gen_many_with_outputs` hands back are the keys' full-domain evaluations,
/// on one-point, odd and power-of-two domains, into buffers of any prior length; a number of
/// buffers other than the number of points is refused before anything is sent.
#[test]
fn outputs_from_the_generation_are_the_full_domain_evaluations() {
    for n in [1usize, 3, 64, 100] {
        let points = [
            Point {
                alpha: n / 2,
                beta: Fp::from_u64(77),
            },
            Point {
                alpha: n - 1,
                beta: Fp::ONE,
            },
        ];
        let [s0, s1] = share(&points, n, 50 + n as u64);
        let body = |mine: Vec<(usize, Fp)>| {
            move |mut s: Session| {
                let mut rng = insecure_rng_for_tests(60 + s.me().index() as u64);
                let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
                let raw: Vec<Fp> = mine.iter().map(|&(_, b)| b).collect();
                let betas = engine_shares(&mut engine, &raw);
                let pts: Vec<PointShare> = mine
                    .iter()
                    .zip(betas)
                    .map(|(&(a, _), b)| PointShare::from_xor_share(a, n, b))
                    .collect();
                let mut refused = [Vec::new()];
                let e = gen_many_with_outputs(&mut s, &mut engine, &pts, n, &mut refused, &mut rng);
                assert!(matches!(e, Err(TwopcError::LengthMismatch { .. })));
                let mut outs = vec![vec![Fp::ONE; 2 * n + 1], Vec::new()];
                let keys = gen_many_with_outputs(&mut s, &mut engine, &pts, n, &mut outs, &mut rng)
                    .unwrap();
                (keys, outs)
            }
        };
        let ((k0, o0), (k1, o1)) = run2(mesh(), body(s0), body(s1));
        for (j, p) in points.iter().enumerate() {
            assert_eq!(o0[j], Bgi::eval_all(&k0[j]), "n = {n}");
            assert_eq!(o1[j], Bgi::eval_all(&k1[j]), "n = {n}");
            for x in 0..n {
                let want = if x == p.alpha { p.beta } else { Fp::ZERO };
                assert_eq!(o0[j][x] + o1[j][x], want, "n = {n}, {p:?}, x = {x}");
            }
        }
    }
}

#[test]
fn a_batch_of_five_takes_the_rounds_of_one() {
    let n = 300;
    let points: Vec<Point> = [(0usize, 1u64), (299, 2), (150, 3), (150, 4), (7, 0)]
        .iter()
        .map(|&(alpha, b)| Point {
            alpha,
            beta: Fp::from_u64(b) * Fp::from_u64(0x1_0000_0001),
        })
        .collect();
    let (p0, p1) = run(11, n, &points);
    check(n, &points, &p0, &p1);
    let (q0, q1) = run(12, n, &points[..1]);
    check(n, &points[..1], &q0, &q1);
    assert_eq!(p0.rounds, q0.rounds);
    assert_eq!(p1.rounds, q1.rounds);
    // 2 per level, and a handful for the OT extension, the triples, the product and the
    // opening.
    assert!(p0.rounds <= 2 * depth(n) as u64 + 8, "{} rounds", p0.rounds);
}

#[test]
fn transcripts_depend_on_neither_alpha_nor_beta() {
    let n = 100;
    let a = [
        Point {
            alpha: 3,
            beta: Fp::from_u64(17),
        },
        Point {
            alpha: 99,
            beta: Fp::ZERO,
        },
    ];
    let b = [
        Point {
            alpha: 64,
            beta: -Fp::ONE,
        },
        Point {
            alpha: 0,
            beta: Fp::from_u64(1 << 40),
        },
    ];
    let (a0, a1) = run(21, n, &a);
    let (b0, b1) = run(22, n, &b);
    check(n, &a, &a0, &a1);
    check(n, &b, &b0, &b1);
    assert!(!a0.transcript.is_empty());
    assert_eq!(a0.transcript, b0.transcript);
    assert_eq!(a1.transcript, b1.transcript);
}

#[test]
fn a_point_outside_an_odd_domain_gives_the_zero_function() {
    // n = 5: the path bits reach 0..8, so shares may combine to 5, 6 or 7.
    let n = 5;
    let points = [
        Point {
            alpha: 6,
            beta: Fp::from_u64(9),
        },
        Point {
            alpha: 4,
            beta: Fp::from_u64(9),
        },
    ];
    let (p0, p1) = run(31, n, &points);
    check(n, &points, &p0, &p1);
}

/// n = 64, `keys` keys: `P1`'s first frame of `len` bytes is edited by `edit`; `P0`'s result
/// and whether `P1` also stopped with an error.
fn with_edited_frame(
    keys: usize,
    len: usize,
    edit: fn(&mut Vec<u8>),
) -> (Result<Vec<BgiKey<Fp>>, TwopcError>, bool) {
    let n = 64;
    let done = AtomicBool::new(false);
    let sessions: LocalMesh = tampered(move |from, _, _, payload| {
        if from == PartyId::P1 && payload.len() == len && !done.swap(true, Ordering::SeqCst) {
            edit(payload);
        }
        Tamper::Pass
    });
    let body = |mut s: Session| {
        let mut rng = insecure_rng_for_tests(50 + s.me().index() as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng)?;
        let beta = engine.constant(Fp::ONE);
        let points = vec![PointShare::from_xor_share(5, n, beta); keys];
        gen_many(&mut s, &mut engine, &points, n, &mut rng)
    };
    let (r0, r1) = run2(sessions, body, body);
    (r0, r1.is_err())
}

fn names_p1(r: &Result<Vec<BgiKey<Fp>>, TwopcError>, message: &str) -> bool {
    matches!(
        r,
        Err(TwopcError::Peer(PeerFault {
            peer: PartyId::P1,
            what,
            ..
        })) if what.contains(message)
    )
}

#[test]
fn a_truncated_level_message_names_the_sender() {
    let (r0, p1_failed) = with_edited_frame(1, offer_len(1), |p| {
        p.truncate(p.len() - 1);
    });
    assert!(names_p1(&r0, "level offer"), "{r0:?}");
    assert!(p1_failed);
}

#[test]
fn stray_bits_in_a_level_message_name_the_sender() {
    for edit in [
        (|p: &mut Vec<u8>| p[0] |= 1) as fn(&mut Vec<u8>),
        |p: &mut Vec<u8>| p[16] |= 0x80,
    ] {
        let (r0, p1_failed) = with_edited_frame(1, offer_len(1), edit);
        assert!(names_p1(&r0, "level offer"), "{r0:?}");
        assert!(p1_failed);
    }
}

/// Three keys: the first frame of `share_len(3)` = 48 bytes from `P1` is its level-0 share
/// message (the opening of the three output correction words, also 48 bytes, comes last).
#[test]
fn a_faulty_seed_share_message_names_the_sender() {
    for edit in [
        (|p: &mut Vec<u8>| p[32] |= 1) as fn(&mut Vec<u8>),
        |p: &mut Vec<u8>| p.truncate(40),
    ] {
        let (r0, p1_failed) = with_edited_frame(3, share_len(3), edit);
        assert!(names_p1(&r0, "seed-correction shares"), "{r0:?}");
        assert!(p1_failed);
    }
}

#[test]
fn wrong_path_lengths_are_refused_before_sending() {
    let body = |bits: usize| {
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(60 + s.me().index() as u64);
            let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
            s.record_transcript(true);
            let point = PointShare::new(vec![false; bits], engine.constant(Fp::ONE));
            let r = gen_many(&mut s, &mut engine, &[point], 100, &mut rng);
            let zero = gen_many(&mut s, &mut engine, &[], 0, &mut rng);
            (r, zero, s.take_transcript().unwrap())
        }
    };
    let ((r0, z0, t0), (r1, z1, t1)) = run2(mesh(), body(6), body(8));
    for (r, z, t) in [(r0, z0, t0), (r1, z1, t1)] {
        assert!(matches!(r, Err(TwopcError::LengthMismatch { .. })), "{r:?}");
        assert!(matches!(z, Err(TwopcError::ApiMisuse(_))), "{z:?}");
        assert!(t.is_empty());
    }
}
