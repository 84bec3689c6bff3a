//! Oblivious bin placement (`doram_gkk12::binsort`) against the plain grouping by label:
//! every real record lands in its label's bin exactly once, every other slot is an all-zero
//! dummy; the transcripts do not depend on the labels or the data; an overflowing bin is an
//! error at both parties.
#![allow(clippy::unwrap_used)]

mod common;

use common::{check_bins, layout, place_records, run2};
use doram_gkk12::binsort::{Layout, Role, phases, place};
use doram_gkk12::driver::Gkk12Error;
use doram_gkk12::shuffle::{FRAME_BYTES, Shares};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::{Garbler, random_delta};
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

type Out = (Result<Shares, Gkk12Error>, Transcript);

/// Records with bit 0 set (real), `labels[i]` in bits 1.., random bytes after; shared and
/// placed by the two parties (`common::place_records`, frames of the default size).
fn run(layout: Layout, labels: &[u64], seed: u64) -> (Vec<u8>, Out, Out) {
    let (v, (r0, t0, _), (r1, t1, _)) = place_records(layout, labels, FRAME_BYTES, seed);
    (v, (r0, t0), (r1, t1))
}

#[test]
fn every_record_lands_in_its_labels_bin() {
    let mut rng = ChaCha12Rng::seed_from_u64(11);
    for (log_bins, log_slots, bytes, n) in
        [(0, 2, 9, 3), (1, 2, 9, 5), (3, 3, 12, 20), (5, 4, 26, 100)]
    {
        let l = layout(log_bins, log_slots, bytes);
        let labels: Vec<u64> = (0..n)
            .map(|_| rng.random_range(0..1u64 << log_bins))
            .collect();
        let (v, (r0, _), (r1, _)) = run(l, &labels, 40 + n as u64);
        check_bins(&l, &v, &labels, &r0.unwrap(), &r1.unwrap());
    }
}

#[test]
fn the_transcripts_do_not_depend_on_labels_or_data() {
    let l = layout(3, 3, 12);
    let a: Vec<u64> = (0..20).map(|i| i % 8).collect();
    let b: Vec<u64> = (0..20).map(|i| (i * 5 + 3) % 8).collect();
    let (_, (ra, ta0), (_, ta1)) = run(l, &a, 1);
    let (_, (rb, tb0), (_, tb1)) = run(l, &b, 2);
    assert!(ra.is_ok() && rb.is_ok());
    assert_eq!(ta0, tb0, "P0");
    assert_eq!(ta1, tb1, "P1");
}

#[test]
fn an_overflowing_bin_is_an_error_at_both_parties() {
    // Twelve records all labelled 0, bins of four slots.
    let l = layout(2, 2, 9);
    let (_, (r0, _), (r1, _)) = run(l, &[0; 12], 3);
    for r in [r0, r1] {
        assert!(
            matches!(r, Err(Gkk12Error::LoadOverflow { tree: 0 })),
            "{r:?}"
        );
    }
}

#[test]
fn a_garbler_under_another_delta_is_refused_before_sending() {
    let l = layout(1, 2, 9);
    let ((err, bytes), ()) = run2(
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(30);
            let delta = random_delta(&mut rng);
            let mut send =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            let mut recv =
                softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let mut garbler = Garbler::new(random_delta(&mut rng), 0).unwrap();
            let before = s.stats().total().sum().bytes_sent;
            let shares = Shares {
                bytes: 9,
                data: vec![0; 18],
            };
            let r = place(
                &mut s,
                Role::Garbler(&mut garbler),
                &mut send,
                &mut recv,
                &shares,
                &l,
                0,
                &mut rng,
            );
            (r.unwrap_err(), s.stats().total().sum().bytes_sent - before)
        },
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(31);
            softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let delta = random_delta(&mut rng);
            softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
        },
    );
    assert!(matches!(err, Gkk12Error::Misuse(_)), "{err:?}");
    assert_eq!(bytes, 0);
}

#[test]
fn records_through_several_phases_land_in_their_labels_bin() {
    // 1000 records into 2^8 bins of 32: butterflies on fewer, larger bins first save work.
    let mut rng = ChaCha12Rng::seed_from_u64(17);
    let (l, n) = (layout(8, 5, 12), 1000);
    let plan = phases(n, &l);
    assert!(plan.len() > 1 && plan[0].1 > 5, "{plan:?}");
    assert_eq!(plan.last(), Some(&(8, 5)));
    let a: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << 8)).collect();
    let b: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << 8)).collect();
    let (va, (ra, ta0), (sa, ta1)) = run(l, &a, 5);
    check_bins(&l, &va, &a, &ra.unwrap(), &sa.unwrap());
    let (vb, (rb, tb0), (sb, tb1)) = run(l, &b, 6);
    check_bins(&l, &vb, &b, &rb.unwrap(), &sb.unwrap());
    assert_eq!(ta0, tb0, "P0");
    assert_eq!(ta1, tb1, "P1");
}

#[test]
fn an_overflow_in_a_first_phase_is_an_error_at_both_parties() {
    // 1000 records all labelled 0: the first phase's bin 0 gets all of them.
    let l = layout(8, 5, 12);
    assert!(phases(1000, &l).len() > 1);
    let (_, (r0, _), (r1, _)) = run(l, &[0; 1000], 7);
    for r in [r0, r1] {
        assert!(
            matches!(r, Err(Gkk12Error::LoadOverflow { tree: 0 })),
            "{r:?}"
        );
    }
}

#[test]
fn a_stage_in_several_batches_of_destinations_places_every_record() {
    // 2^14 bins of 32: the last phase's stages hold 2^19 entries, two batches of 2^18.
    let mut rng = ChaCha12Rng::seed_from_u64(19);
    let (l, n) = (layout(14, 5, 9), 1 << 15);
    assert_eq!(phases(n, &l).last(), Some(&(14, 5)));
    let labels: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << 14)).collect();
    let (v, (r0, _), (r1, _)) = run(l, &labels, 8);
    check_bins(&l, &v, &labels, &r0.unwrap(), &r1.unwrap());
}
