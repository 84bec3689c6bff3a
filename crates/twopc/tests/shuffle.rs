//! The two-party shuffle of additive shares against plaintext: σ₁ ∘ σ₀ applied, its inverse,
//! fresh shares, transcripts that depend on neither the values nor the permutations, and a
//! truncated or malformed correction message named.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::{mesh, run2, tampered};
use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_field::Fp;
use doram_net::{LocalMesh, Session, Tamper, Transcript};
use doram_twopc::driver::softspoken_both_setup;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::shuffle::{Perm, shuffle_shares};
use doram_twopc::{ChunkBits, SoftSpokenReceiver, SoftSpokenSender, TwopcError};

/// What one party ends with.
struct Out {
    own: Vec<usize>,
    input: Vec<Fp>,
    forward: Vec<Fp>,
    back: Vec<Fp>,
    inverse: Vec<Fp>,
    transcript: Transcript,
}

fn setup(s: &mut Session, seed: u64) -> (SoftSpokenSender, SoftSpokenReceiver) {
    let mut rng = insecure_rng_for_tests(seed);
    softspoken_both_setup(s, ChunkBits::default(), &mut rng).unwrap()
}

/// One party: a random σ, then the forward shuffle (recorded), the inverse on its output and
/// the inverse on the input.
fn party(mut s: Session, seed: u64, n: usize, width: usize, input: Vec<Fp>) -> Out {
    let seed = seed * 2 + s.me().index() as u64;
    let (mut snd, mut rcv) = setup(&mut s, seed);
    let perm = Perm::random(n, &mut insecure_rng_for_tests(seed + 1000));
    s.record_transcript(true);
    let forward = shuffle_shares(
        &mut s,
        &mut snd,
        &mut rcv,
        &perm,
        input.clone(),
        width,
        false,
    )
    .unwrap();
    let transcript = s.take_transcript().unwrap();
    let back = shuffle_shares(
        &mut s,
        &mut snd,
        &mut rcv,
        &perm,
        forward.clone(),
        width,
        true,
    )
    .unwrap();
    let inverse = shuffle_shares(
        &mut s,
        &mut snd,
        &mut rcv,
        &perm,
        input.clone(),
        width,
        true,
    )
    .unwrap();
    Out {
        own: perm.own().to_vec(),
        input,
        forward,
        back,
        inverse,
        transcript,
    }
}

/// Shares `values` (a random share for `P0`), runs both parties.
fn run(seed: u64, n: usize, width: usize, values: &[Fp]) -> (Out, Out) {
    let mut rng = insecure_rng_for_tests(seed + 5000);
    let s0: Vec<Fp> = (0..values.len()).map(|_| Fp::random(&mut rng)).collect();
    let s1: Vec<Fp> = values.iter().zip(&s0).map(|(&v, &r)| v - r).collect();
    run2(
        mesh(),
        |s| party(s, seed, n, width, s0.clone()),
        |s| party(s, seed, n, width, s1.clone()),
    )
}

fn open(a: &[Fp], b: &[Fp]) -> Vec<Fp> {
    a.iter().zip(b).map(|(&x, &y)| x + y).collect()
}

fn entry(v: &[Fp], width: usize, i: usize) -> &[Fp] {
    &v[i * width..(i + 1) * width]
}

fn values(seed: u64, m: usize) -> Vec<Fp> {
    let mut rng = insecure_rng_for_tests(seed + 9000);
    (0..m).map(|_| Fp::random(&mut rng)).collect()
}

#[test]
fn the_shuffle_applies_sigma1_after_sigma0_and_its_inverse() {
    for width in [1usize, 3] {
        for n in [0usize, 1, 2, 3, 5, 8, 100, 257] {
            let v = values(n as u64, n * width);
            let (p0, p1) = run(n as u64 + 10 * width as u64, n, width, &v);
            let pi: Vec<usize> = (0..n).map(|i| p1.own[p0.own[i]]).collect();
            let forward = open(&p0.forward, &p1.forward);
            let inverse = open(&p0.inverse, &p1.inverse);
            assert_eq!(forward.len(), n * width);
            for (i, &to) in pi.iter().enumerate() {
                // out entry π(i) = entry i; the inverse puts entry π(i) at i.
                assert_eq!(entry(&forward, width, to), entry(&v, width, i), "n {n}");
                assert_eq!(entry(&inverse, width, i), entry(&v, width, to), "n {n}");
            }
            assert_eq!(open(&p0.back, &p1.back), v, "n {n}, width {width}: back");
            if n > 1 {
                // Fresh shares: every element's share changed on both sides.
                for p in [&p0, &p1] {
                    for (i, &to) in pi.iter().enumerate() {
                        let (new, old) = (entry(&p.forward, width, to), entry(&p.input, width, i));
                        assert!(new.iter().zip(old).all(|(a, b)| a != b), "n {n}");
                    }
                }
            } else {
                assert!(p0.transcript.is_empty() && p1.transcript.is_empty());
            }
        }
    }
}

#[test]
fn the_transcript_depends_on_neither_values_nor_permutations() {
    let (n, width) = (37, 2);
    let (a0, a1) = run(1, n, width, &values(1, n * width));
    let (b0, b1) = run(2, n, width, &vec![Fp::ONE; n * width]);
    assert_ne!(a0.own, b0.own);
    assert_ne!(a1.own, b1.own);
    assert!(!a0.transcript.is_empty());
    assert_eq!(a0.transcript, b0.transcript);
    assert_eq!(a1.transcript, b1.transcript);
}

#[test]
fn wrong_lengths_are_refused_before_sending() {
    let (r0, r1) = run2(
        mesh(),
        |mut s| {
            let (mut snd, mut rcv) = setup(&mut s, 1);
            let perm = Perm::random(4, &mut insecure_rng_for_tests(2));
            s.record_transcript(true);
            let r = shuffle_shares(
                &mut s,
                &mut snd,
                &mut rcv,
                &perm,
                vec![Fp::ONE; 7],
                2,
                false,
            );
            (r, s.take_transcript().unwrap())
        },
        |mut s| {
            let (mut snd, mut rcv) = setup(&mut s, 3);
            let perm = Perm::random(4, &mut insecure_rng_for_tests(4));
            s.record_transcript(true);
            let r = shuffle_shares(
                &mut s,
                &mut snd,
                &mut rcv,
                &perm,
                vec![Fp::ONE; 9],
                2,
                false,
            );
            (r, s.take_transcript().unwrap())
        },
    );
    for (r, t) in [r0, r1] {
        assert!(matches!(r, Err(TwopcError::LengthMismatch { .. })), "{r:?}");
        assert!(t.is_empty());
    }
}

/// n = 8, width 7: `P1`'s first correction message (its first frame of 8·7 elements after
/// the set-up) edited by `edit`; `P0`'s error and whether `P1` also stopped with an error.
fn with_edited_correction(edit: fn(&mut Vec<u8>)) -> (Result<Vec<Fp>, TwopcError>, bool) {
    let (n, width) = (8, 7);
    let done = AtomicBool::new(false);
    let sessions: LocalMesh = tampered(move |from, _, _, payload| {
        if from == PartyId::P1
            && payload.len() == n * width * 16
            && !done.swap(true, Ordering::SeqCst)
        {
            edit(payload);
        }
        Tamper::Pass
    });
    let body = |mut s: Session| {
        let seed = 20 + s.me().index() as u64;
        let (mut snd, mut rcv) = setup(&mut s, seed);
        let perm = Perm::random(n, &mut insecure_rng_for_tests(seed + 100));
        shuffle_shares(
            &mut s,
            &mut snd,
            &mut rcv,
            &perm,
            vec![Fp::ONE; n * width],
            width,
            false,
        )
    };
    let (r0, r1) = run2(sessions, body, body);
    (r0, r1.is_err())
}

#[test]
fn a_truncated_correction_message_names_the_holder() {
    let (r0, p1_failed) = with_edited_correction(|p| {
        p.truncate(p.len() - 5);
    });
    assert!(
        matches!(
            r0,
            Err(TwopcError::Peer(PeerFault {
                peer: PartyId::P1,
                what: "switch corrections",
                ..
            }))
        ),
        "{r0:?}"
    );
    assert!(p1_failed);
}

#[test]
fn a_non_canonical_element_names_the_holder() {
    let (r0, p1_failed) = with_edited_correction(|p| p[..16].fill(0xff));
    assert!(
        matches!(
            r0,
            Err(TwopcError::Peer(PeerFault {
                peer: PartyId::P1,
                what: "switch corrections",
                ..
            }))
        ),
        "{r0:?}"
    );
    assert!(p1_failed);
}
