//! The sorted load's batches in frames of bounded size (`hold_blocks_framed`,
//! `permute_blocks_framed`, `place_framed`): with a frame forced small, a batch spans several
//! frames cut from its byte stream, the results are unchanged, no frame of a batch is longer
//! than the frame size, the rounds are those of one message per batch, and a frame of the
//! wrong length is the sender's fault, not a panic.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::{check_bins, layout, place_records as place, run2};
use doram_core::{CodecError, PartyId};
use doram_gkk12::driver::Gkk12Error;
use doram_gkk12::shuffle::{
    FRAME_BYTES, Shares, hold_blocks, hold_blocks_framed, permute_blocks, permute_blocks_framed,
    route_blocks, stage_bits,
};
use doram_net::{LocalMesh, Session, Transcript};
use doram_twopc::TwopcError;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// One party's side of a run: its result, its transcript and its rounds.
type Side<T> = (Result<T, Gkk12Error>, Transcript, u64);

/// The lengths of the frames of `len` bytes in frames of at most `frame`: full ones, then
/// the rest; one empty frame for no bytes.
fn expected_frames(len: usize, frame: usize) -> Vec<u64> {
    let mut out = vec![frame as u64; len / frame];
    if !len.is_multiple_of(frame) || len == 0 {
        out.push((len % frame) as u64);
    }
    out
}

/// The transcript with every run of frames sent back to back on one link (same direction,
/// phase and round) taken as one message: what it would be with frames of unbounded size.
fn merged(t: &Transcript) -> Vec<(PartyId, PartyId, u64, u64)> {
    let mut out: Vec<(PartyId, PartyId, u64, u64)> = Vec::new();
    let mut phase = None;
    for e in &t.events {
        match out.last_mut() {
            Some(last)
                if (last.0, last.1, last.3) == (e.from, e.to, e.round)
                    && phase.as_ref() == Some(&e.phase) =>
            {
                last.2 += e.bytes;
            }
            _ => out.push((e.from, e.to, e.bytes, e.round)),
        }
        phase = Some(e.phase.clone());
    }
    out
}

/// Shares `v` as `w ⊕ a` and permutes every block of `block` entries by `dests`, the holder
/// with frames of `hold_frame` bytes and the permuter with `permute_frame`.
fn shuffle(
    v: &[u8],
    bytes: usize,
    block: usize,
    dests: &[Vec<usize>],
    (hold_frame, permute_frame): (usize, usize),
    seed: u64,
) -> (Side<Shares>, Side<Shares>) {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let w: Vec<u8> = (0..v.len()).map(|_| rng.random()).collect();
    let a: Vec<u8> = v.iter().zip(&w).map(|(x, y)| x ^ y).collect();
    let controls = route_blocks(dests).unwrap();
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    run2(
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            s.record_transcript(true);
            let before = s.rounds();
            let mut w = Shares { bytes, data: w };
            let r = hold_blocks_framed(&mut s, &mut ot, &mut w, block, false, hold_frame);
            let rounds = s.rounds() - before;
            (r.map(|()| w), s.take_transcript().unwrap(), rounds)
        },
        |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let before = s.rounds();
            let mut a = Shares { bytes, data: a };
            let r = permute_blocks_framed(
                &mut s,
                &mut ot,
                &mut a,
                block,
                &controls,
                false,
                permute_frame,
            );
            let rounds = s.rounds() - before;
            (r.map(|()| a), s.take_transcript().unwrap(), rounds)
        },
    )
}

fn random_dests(rng: &mut ChaCha12Rng, blocks: usize, m: usize) -> Vec<Vec<usize>> {
    (0..blocks)
        .map(|_| {
            let mut d: Vec<usize> = (0..m).collect();
            d.shuffle(rng);
            d
        })
        .collect()
}

#[test]
fn a_shuffle_in_small_frames_permutes_every_block_in_the_same_rounds() {
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    // (blocks, log₂ block, entry bytes, frame): frames shorter than a switch's corrections,
    // frames that do not divide a stage, frames that do, and one frame for the whole stage.
    for (blocks, k, bytes, frame) in [
        (4usize, 3u32, 5usize, 7usize),
        (2, 2, 9, 1),
        (8, 4, 21, 100),
        (4, 4, 8, 64),
        (3, 7, 26, 1000),
        (2, 3, 3, 48),
        (1, 1, 3, 5),
    ] {
        let m = 1usize << k;
        let n = blocks * m;
        let v: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
        let dests = random_dests(&mut rng, blocks, m);
        let seed = 20 + n as u64;
        let ((w, th, rh), (a, tp, rp)) = shuffle(&v, bytes, m, &dests, (frame, frame), seed);
        let (w, a) = (w.unwrap(), a.unwrap());
        let out: Vec<u8> = w.data.iter().zip(&a.data).map(|(x, y)| x ^ y).collect();
        for (j, d) in dests.iter().enumerate() {
            for (x, &to) in d.iter().enumerate() {
                let (src, dst) = (j * m + x, j * m + to);
                assert_eq!(
                    out[dst * bytes..(dst + 1) * bytes],
                    v[src * bytes..(src + 1) * bytes],
                    "frame {frame}: block {j}, entry {x}"
                );
            }
        }
        // The holder sends the corrections only: every stage's stream cut every `frame`
        // bytes, no frame longer.
        let sent: Vec<u64> = th
            .events
            .iter()
            .filter(|e| e.from == PartyId::P0)
            .map(|e| e.bytes)
            .collect();
        let stages = stage_bits(k).len();
        let want: Vec<u64> = (0..stages)
            .flat_map(|_| expected_frames(n * bytes, frame))
            .collect();
        assert_eq!(sent, want, "frame {frame}: the holder's frames");
        assert!(sent.iter().all(|&b| b <= frame as u64));
        if n * bytes > frame {
            assert!(
                sent.len() > stages,
                "frame {frame}: a stage in several frames"
            );
        }
        // The same messages and rounds as in one frame per stage, only cut.
        let ((_, uh, urh), (_, up, urp)) =
            shuffle(&v, bytes, m, &dests, (FRAME_BYTES, FRAME_BYTES), seed);
        assert_eq!(merged(&th), merged(&uh), "frame {frame}: holder");
        assert_eq!(merged(&tp), merged(&up), "frame {frame}: permuter");
        assert_eq!((rh, rp), (urh, urp), "frame {frame}: rounds");
    }
}

#[test]
fn the_framed_transcripts_do_not_depend_on_the_permutations() {
    let mut rng = ChaCha12Rng::seed_from_u64(6);
    let (blocks, m, bytes, frame) = (4, 16, 9, 50);
    let v: Vec<u8> = (0..blocks * m * bytes).map(|_| rng.random()).collect();
    let id: Vec<Vec<usize>> = (0..blocks).map(|_| (0..m).collect()).collect();
    let shuffled = random_dests(&mut rng, blocks, m);
    let ((_, h1, _), (_, p1, _)) = shuffle(&v, bytes, m, &id, (frame, frame), 8);
    let ((_, h2, _), (_, p2, _)) = shuffle(&v, bytes, m, &shuffled, (frame, frame), 8);
    assert_eq!(h1, h2, "holder");
    assert_eq!(p1, p2, "permuter");
}

#[test]
fn a_frame_of_the_wrong_length_is_the_holders_fault() {
    // One stage (blocks of two) of 4 · 2 · 9 = 72 bytes. The permuter expects frames of
    // 12 bytes; the holder sends frames of 10 (short) or of 16 (long).
    let mut rng = ChaCha12Rng::seed_from_u64(7);
    let (blocks, m, bytes) = (4, 2, 9);
    let v: Vec<u8> = (0..blocks * m * bytes).map(|_| rng.random()).collect();
    let dests = random_dests(&mut rng, blocks, m);
    for (hold_frame, got) in [(10usize, 10usize), (16, 16)] {
        // The holder's sends may meet a link the permuter has already closed: its result is
        // not looked at.
        let (_, (permuted, _, _)) = shuffle(&v, bytes, m, &dests, (hold_frame, 12), 9);
        match permuted {
            Err(Gkk12Error::Twopc(TwopcError::Peer(f))) => {
                assert_eq!(f.peer, PartyId::P0);
                assert_eq!(f.what, "switch corrections");
                assert!(
                    matches!(f.fault, CodecError::WrongLength { expected: 12, got: g } if g == got),
                    "{:?}",
                    f.fault
                );
            }
            other => panic!("holder frames of {hold_frame}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn frames_of_zero_bytes_are_refused_before_sending() {
    let v = vec![0u8; 4 * 5];
    let dests = vec![vec![0, 1], vec![1, 0]];
    let ((held, th, _), (permuted, tp, _)) = shuffle(&v, 5, 2, &dests, (0, 0), 10);
    assert!(
        matches!(held, Err(Gkk12Error::Misuse(_))),
        "{:?}",
        held.map(|_| ())
    );
    assert!(
        matches!(permuted, Err(Gkk12Error::Misuse(_))),
        "{:?}",
        permuted.map(|_| ())
    );
    assert!(th.is_empty() && tp.is_empty());
}

#[test]
fn a_bin_sort_in_small_frames_places_every_record_in_the_same_rounds() {
    let mut rng = ChaCha12Rng::seed_from_u64(12);
    // Frames of one byte (the overflow bits and destinations span frames too), of a few, and
    // of more than a destination batch but less than a shuffle stage.
    for (log_bins, log_slots, bytes, n, frame) in [
        (3u32, 2u32, 9usize, 20usize, 1usize),
        (4, 3, 12, 60, 7),
        (5, 4, 26, 100, 1000),
    ] {
        let l = layout(log_bins, log_slots, bytes);
        let labels: Vec<u64> = (0..n)
            .map(|_| rng.random_range(0..1u64 << log_bins))
            .collect();
        let seed = 50 + n as u64;
        let (v, (r0, t0, q0), (r1, t1, q1)) = place(l, &labels, frame, seed);
        check_bins(&l, &v, &labels, &r0.unwrap(), &r1.unwrap());
        let (_, (u0, ut0, uq0), (u1, ut1, uq1)) = place(l, &labels, FRAME_BYTES, seed);
        assert!(u0.is_ok() && u1.is_ok());
        assert!(
            t0.len() > ut0.len(),
            "frame {frame}: batches in several frames"
        );
        assert_eq!(merged(&t0), merged(&ut0), "frame {frame}: P0");
        assert_eq!(merged(&t1), merged(&ut1), "frame {frame}: P1");
        assert_eq!((q0, q1), (uq0, uq1), "frame {frame}: rounds");
    }
}

#[test]
fn no_message_of_a_bin_sort_is_longer_than_its_frame() {
    // Records of 200 bytes: a shuffle stage's corrections (512 entries of 201 bytes) are
    // longer than the garbled tables of a block and the OT messages, and the frame is
    // between them.
    let mut rng = ChaCha12Rng::seed_from_u64(13);
    let (l, n, frame) = (layout(5, 4, 200), 100, 48 << 10);
    let labels: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << 5)).collect();
    let (v, (r0, t0, _), (r1, t1, _)) = place(l, &labels, frame, 60);
    check_bins(&l, &v, &labels, &r0.unwrap(), &r1.unwrap());
    for t in [&t0, &t1] {
        let largest = t.events.iter().map(|e| e.bytes).max().unwrap();
        assert!(largest <= frame as u64, "a message of {largest} bytes");
    }
    let (_, (_, u0, _), _) = place(l, &labels, FRAME_BYTES, 60);
    let largest = u0.events.iter().map(|e| e.bytes).max().unwrap();
    assert!(largest > frame as u64, "the batch spans frames");
}

#[test]
fn a_stage_longer_than_a_frame_passes_a_transport_capped_at_one_frame() {
    // 2^16 entries of 129 bytes: a stage's corrections are 8.06 MiB, one frame more than
    // FRAME_BYTES; the transport refuses any message longer than FRAME_BYTES.
    let (n, bytes, m) = (1usize << 16, 129usize, 256usize);
    assert!(n * bytes > FRAME_BYTES);
    let mut rng = ChaCha12Rng::seed_from_u64(14);
    let v: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
    let w: Vec<u8> = (0..n * bytes).map(|_| rng.random()).collect();
    let a: Vec<u8> = v.iter().zip(&w).map(|(x, y)| x ^ y).collect();
    let dests = random_dests(&mut rng, n / m, m);
    let controls = route_blocks(&dests).unwrap();
    let delta = random_delta(&mut insecure_rng_for_tests(15));
    let mesh = LocalMesh::new(2)
        .timeout(Duration::from_secs(60))
        .max_frame_bytes(u32::try_from(FRAME_BYTES).unwrap());
    let shares = Mutex::new([Some(w), Some(a)]);
    let out = doram_net::testkit::run(mesh.build(), |mut s: Session| {
        let me = s.me().index();
        let data = shares.lock().unwrap()[me].take().unwrap();
        let mut rng = insecure_rng_for_tests(16 + me as u64);
        let mut x = Shares { bytes, data };
        if me == 0 {
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            hold_blocks(&mut s, &mut ot, &mut x, m, false).unwrap();
        } else {
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            permute_blocks(&mut s, &mut ot, &mut x, m, &controls, false).unwrap();
        }
        (x, s.stats().total().sum().largest_sent)
    });
    assert!(
        out.iter()
            .all(|(_, largest)| *largest <= FRAME_BYTES as u64)
    );
    let open: Vec<u8> = out[0]
        .0
        .data
        .iter()
        .zip(&out[1].0.data)
        .map(|(x, y)| x ^ y)
        .collect();
    for (j, d) in dests.iter().enumerate() {
        for (x, &to) in d.iter().enumerate() {
            let (src, dst) = (j * m + x, j * m + to);
            assert_eq!(
                open[dst * bytes..(dst + 1) * bytes],
                v[src * bytes..(src + 1) * bytes],
                "block {j}, entry {x}"
            );
        }
    }
}
