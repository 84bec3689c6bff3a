//! SoftSpoken OT extension: correctness of the three kinds of OT for several `k` and odd
//! counts, equality with IKNP at `k = 1`, exact message sizes independent of the choices, and
//! faulty peers.
#![allow(clippy::unwrap_used)]

mod common;

use common::{blamed, mesh, random_bits, random_block, run2, tampered, test_rng};
use doram_core::PartyId;
use doram_net::{Session, Tamper};
use doram_prim::aes::Block;
use doram_twopc::gc::{Circuit, Evaluator, Garbler, Gate, random_delta};
use doram_twopc::softspoken::{ChunkBits, DEFAULT_K};
use doram_twopc::{
    IknpReceiver, IknpSender, SoftSpokenReceiver, SoftSpokenSender, TwopcError, driver,
    insecure_rng_for_tests,
};

const KS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
const SIZES: [usize; 6] = [0, 1, 127, 129, 1001, (1 << 16) + 301];

fn k(k: usize) -> ChunkBits {
    ChunkBits::new(k).unwrap()
}

/// Runs SoftSpoken setup with chunk size `k`, then `f0` / `f1` on the sender (P0) and the
/// receiver (P1).
fn with_softspoken<A: Send, B: Send>(
    k: ChunkBits,
    delta: Block,
    f0: impl Fn(&mut Session, &mut SoftSpokenSender) -> A + Sync,
    f1: impl Fn(&mut Session, &mut SoftSpokenReceiver) -> B + Sync,
) -> (A, B) {
    run2(
        mesh(),
        |mut s| {
            let mut ot =
                driver::softspoken_sender_setup(&mut s, k, delta, &mut insecure_rng_for_tests(3))
                    .unwrap();
            f0(&mut s, &mut ot)
        },
        |mut s| {
            let mut ot =
                driver::softspoken_receiver_setup(&mut s, k, &mut insecure_rng_for_tests(4))
                    .unwrap();
            f1(&mut s, &mut ot)
        },
    )
}

#[test]
fn chunk_sizes_outside_1_to_8_are_refused() {
    for bad in [0, 9, 128] {
        assert!(matches!(ChunkBits::new(bad), Err(TwopcError::ApiMisuse(_))));
    }
    assert_eq!(ChunkBits::default().get(), DEFAULT_K);
}

#[test]
fn correlated_ots_satisfy_t_eq_q_xor_r_delta() {
    let mut rng = test_rng("SoftSpoken COT");
    for kk in KS {
        let delta = random_block(&mut rng);
        let sizes: &[usize] = if kk == 1 || kk == 4 || kk == 8 {
            &SIZES
        } else {
            &SIZES[..5]
        };
        let choices: Vec<Vec<bool>> = sizes.iter().map(|&m| random_bits(&mut rng, m)).collect();
        let (sent, recvd) = with_softspoken(
            k(kk),
            delta,
            |s, ot| {
                sizes
                    .iter()
                    .map(|&m| driver::cot_send(s, ot, m).unwrap())
                    .collect::<Vec<_>>()
            },
            |s, ot| {
                choices
                    .iter()
                    .map(|c| driver::cot_receive(s, ot, c).unwrap())
                    .collect::<Vec<_>>()
            },
        );
        for ((snd, rcv), c) in sent.iter().zip(&recvd).zip(&choices) {
            assert_eq!(snd.q.len(), c.len());
            assert_eq!(rcv.t.len(), c.len());
            assert_eq!(snd.delta, delta);
            assert_eq!(snd.first, rcv.first);
            for i in 0..c.len() {
                let want = snd.q[i] ^ if c[i] { delta } else { 0 };
                assert_eq!(rcv.t[i], want, "k = {kk}, OT {i} of {}", c.len());
            }
        }
        // The q_i are not all alike (the leaves differ).
        let big = &sent[sent.len() - 1].q;
        assert_ne!(big[0], big[big.len() - 1], "k = {kk}");
    }
}

#[test]
fn random_ots_deliver_the_chosen_message() {
    for kk in [1, 2, 4, 8] {
        let delta = random_block(&mut test_rng("SoftSpoken ROT"));
        let (sent, recvd) = with_softspoken(
            k(kk),
            delta,
            |s, ot| SIZES.map(|m| driver::rot_send(s, ot, m).unwrap()),
            |s, ot| {
                let mut rng = insecure_rng_for_tests(5);
                SIZES.map(|m| driver::rot_receive(s, ot, m, &mut rng).unwrap())
            },
        );
        for (snd, rcv) in sent.iter().zip(&recvd) {
            assert_eq!(snd.len(), rcv.len());
            let ones = rcv.choices.iter().filter(|&&c| c).count();
            assert!(rcv.len() < 100 || (ones > rcv.len() / 3 && ones < 2 * rcv.len() / 3));
            for i in 0..snd.len() {
                let c = usize::from(rcv.choices[i]);
                assert_eq!(snd.msgs[i][c], rcv.msgs[i], "k = {kk}, OT {i}");
                assert_ne!(snd.msgs[i][1 - c], rcv.msgs[i], "k = {kk}, OT {i}");
            }
        }
    }
}

#[test]
fn chosen_message_ots_deliver_the_chosen_input() {
    let mut rng = test_rng("SoftSpoken OT");
    for kk in [1, 2, 4, 8] {
        let delta = random_block(&mut rng);
        let sizes = [0, 1, 129, (1 << 15) + 5];
        let inputs: Vec<Vec<[Block; 2]>> = sizes
            .iter()
            .map(|&m| {
                (0..m)
                    .map(|_| [random_block(&mut rng), random_block(&mut rng)])
                    .collect()
            })
            .collect();
        let choices: Vec<Vec<bool>> = sizes.iter().map(|&m| random_bits(&mut rng, m)).collect();
        let ((), got) = with_softspoken(
            k(kk),
            delta,
            |s, ot| {
                for x in &inputs {
                    driver::ot_send(s, ot, x).unwrap();
                }
            },
            |s, ot| {
                let mut rng = insecure_rng_for_tests(6);
                choices
                    .iter()
                    .map(|c| driver::ot_receive(s, ot, c, &mut rng).unwrap())
                    .collect::<Vec<_>>()
            },
        );
        for ((x, c), y) in inputs.iter().zip(&choices).zip(&got) {
            assert_eq!(y.len(), c.len());
            for i in 0..c.len() {
                assert_eq!(y[i], x[i][usize::from(c[i])], "k = {kk}, OT {i}");
            }
        }
    }
}

#[test]
fn k_1_is_iknp_message_for_message() {
    let mut rng = test_rng("SoftSpoken k = 1");
    let delta = random_block(&mut rng);
    let pairs: Vec<[Block; 2]> = (0..128)
        .map(|_| [random_block(&mut rng), random_block(&mut rng)])
        .collect();
    let chosen: Vec<Block> = (0..128)
        .map(|j| pairs[j][usize::from((delta >> j) & 1 == 1)])
        .collect();
    let (mut ss_r, setup) = SoftSpokenReceiver::new(k(1), &pairs);
    assert!(setup.is_empty());
    let mut ss_s = SoftSpokenSender::new(PartyId::P1, k(1), delta, &chosen, &setup).unwrap();
    let mut ik_r = IknpReceiver::new(&pairs);
    let mut ik_s = IknpSender::new(delta, &chosen);
    for m in [1, 300, 4096] {
        let choices = random_bits(&mut rng, m);
        let (a, msg_a) = ss_r.extend(&choices);
        let (b, msg_b) = ik_r.extend(&choices);
        assert_eq!(msg_a, msg_b, "m = {m}");
        assert_eq!(a.t, b.t);
        let qa = ss_s.extend(PartyId::P1, m, &msg_a).unwrap();
        let qb = ik_s.extend(PartyId::P1, m, &msg_b).unwrap();
        assert_eq!(qa.q, qb.q);
        assert_eq!(qa.first, qb.first);
    }
}

/// One extension run over a sequence of sizes, smaller after larger and larger after smaller
/// (the first spanning two messages), still gives `t = q ⊕ r·Δ` every time.
#[test]
fn extensions_of_shrinking_and_growing_sizes_stay_correlated() {
    let mut rng = test_rng("SoftSpoken reuse");
    let sizes = [(1 << 16) + 4000, 300, 1, 4096, 129, 9000];
    for kk in [2, 4] {
        let delta = random_block(&mut rng);
        let choices: Vec<Vec<bool>> = sizes.iter().map(|&m| random_bits(&mut rng, m)).collect();
        let (sent, recvd) = with_softspoken(
            k(kk),
            delta,
            |s, ot| sizes.map(|m| driver::cot_send(s, ot, m).unwrap().q),
            |s, ot| {
                choices
                    .iter()
                    .map(|c| driver::cot_receive(s, ot, c).unwrap().t)
                    .collect::<Vec<_>>()
            },
        );
        for ((q, t), c) in sent.iter().zip(&recvd).zip(&choices) {
            assert_eq!((q.len(), t.len()), (c.len(), c.len()));
            for ((q, t), &r) in q.iter().zip(t).zip(c) {
                assert_eq!(
                    *t,
                    q ^ if r { delta } else { 0 },
                    "k = {kk}, {} OTs",
                    c.len()
                );
            }
        }
    }
}

#[test]
fn garbled_circuits_run_on_softspoken_ots() {
    // out = x ∧ y for all four inputs, the evaluator's labels from SoftSpoken COTs.
    let c = Circuit::new(1, 1, 3, vec![Gate::And { a: 0, b: 1, out: 2 }], vec![2]).unwrap();
    for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
        let (a, b) = run2(
            mesh(),
            |mut s| {
                let mut rng = insecure_rng_for_tests(7);
                let delta = random_delta(&mut rng);
                let mut ot =
                    driver::softspoken_sender_setup(&mut s, k(4), delta, &mut rng).unwrap();
                let mut g = Garbler::new(delta, c.wires()).unwrap();
                driver::garble(&mut s, &mut ot, &mut g, &c, &[x], &mut rng).unwrap()
            },
            |mut s| {
                let mut rng = insecure_rng_for_tests(8);
                let mut ot = driver::softspoken_receiver_setup(&mut s, k(4), &mut rng).unwrap();
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut s, &mut ot, &mut e, &c, &[y]).unwrap()
            },
        );
        assert_eq!(a, vec![x && y]);
        assert_eq!(b, vec![x && y]);
    }
}

/// The bytes of every message the sender (P0) sees, for COTs of 1000 and chosen OTs of 300,
/// with randomness from `seed`.
fn transcript_bytes(kk: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let mut rng = insecure_rng_for_tests(seed);
    let delta = random_block(&mut rng);
    let choices = random_bits(&mut rng, 1000);
    let inputs: Vec<[Block; 2]> = (0..300).map(|_| [random_block(&mut rng); 2]).collect();
    let (a, b) = run2(
        mesh(),
        |mut s| {
            s.record_transcript(true);
            let mut r = insecure_rng_for_tests(seed);
            let mut ot = driver::softspoken_sender_setup(&mut s, k(kk), delta, &mut r).unwrap();
            driver::cot_send(&mut s, &mut ot, 1000).unwrap();
            driver::ot_send(&mut s, &mut ot, &inputs).unwrap();
            s.take_transcript().unwrap()
        },
        |mut s| {
            s.record_transcript(true);
            let mut r = insecure_rng_for_tests(seed + 1);
            let mut ot = driver::softspoken_receiver_setup(&mut s, k(kk), &mut r).unwrap();
            driver::cot_receive(&mut s, &mut ot, &choices).unwrap();
            driver::ot_receive(&mut s, &mut ot, &choices[..300], &mut r).unwrap();
            s.take_transcript().unwrap()
        },
    );
    let bytes = |t: doram_net::Transcript| t.events.iter().map(|e| e.bytes).collect();
    (bytes(a), bytes(b))
}

#[test]
fn message_sizes_are_fixed_by_k_and_the_batch_size() {
    for kk in [1, 2, 4, 5, 8] {
        // Different choices, Δ and inputs: identical transcripts at both parties.
        let a = transcript_bytes(kk, 10);
        assert_eq!(a, transcript_bytes(kk, 20), "k = {kk}");
        let chunks = 128usize.div_ceil(kk) as u64;
        // Base OT; the tree corrections, 32 bytes per level below the first (none for k = 1);
        // COT of 1000: 8 blocks of 128 OTs, 16 bytes per chunk and block (128/k bits per OT);
        // chosen OT of 300: 3 blocks, 38 bytes of flips, 300 · 32 bytes of answers.
        let levels: u64 = (0..chunks)
            .map(|j| (128 - j * kk as u64).min(kk as u64) - 1)
            .sum();
        let mut want = vec![32, 128 * 32];
        if kk > 1 {
            want.push(32 * levels);
        }
        want.extend([8 * 16 * chunks, 3 * 16 * chunks, 38, 300 * 32]);
        assert_eq!(a.0, want, "k = {kk}");
        assert_eq!(a.1, want, "k = {kk}");
    }
    // Per OT: IKNP 16 bytes; SoftSpoken 16/k bytes, rounded up to whole chunks.
    let ext = |kk: usize| transcript_bytes(kk, 30).0[if kk == 1 { 2 } else { 3 }];
    assert_eq!(ext(1), 8 * 2048);
    assert_eq!(ext(2), 8 * 2048 / 2);
    assert_eq!(ext(4), 8 * 2048 / 4);
    assert_eq!(ext(8), 8 * 2048 / 8);
    assert_eq!(ext(5), 8 * 16 * 26);
}

#[test]
fn short_tree_corrections_are_blamed_on_the_receiver() {
    let (s, _) = run2(
        tampered(|from, _, idx, payload| {
            // P1's frame 1 is its tree corrections (frame 0 is its base-OT answer).
            if from == PartyId::P1 && idx == 1 {
                payload.pop();
            }
            Tamper::Pass
        })
        .timeout(std::time::Duration::from_millis(500)),
        |mut s| driver::softspoken_sender_setup(&mut s, k(4), 0x55, &mut insecure_rng_for_tests(3)),
        |mut s| driver::softspoken_receiver_setup(&mut s, k(4), &mut insecure_rng_for_tests(4)),
    );
    let e = s.unwrap_err();
    assert_eq!(blamed(&e), Some(PartyId::P1), "{e}");
    assert!(
        e.to_string().contains("expected 3072 bytes, got 3071"),
        "{e}"
    );
}

#[test]
fn a_short_extension_message_is_blamed_on_the_receiver() {
    for kk in [1, 4] {
        // P1's frames: base-OT answer, tree corrections (k > 1), extension.
        let ext_frame = if kk == 1 { 1 } else { 2 };
        let (s, _) = run2(
            tampered(move |from, _, idx, payload| {
                if from == PartyId::P1 && idx == ext_frame {
                    payload.truncate(payload.len() - 16);
                }
                Tamper::Pass
            })
            .timeout(std::time::Duration::from_millis(500)),
            |mut s| {
                let mut ot = driver::softspoken_sender_setup(
                    &mut s,
                    k(kk),
                    7,
                    &mut insecure_rng_for_tests(3),
                )?;
                driver::cot_send(&mut s, &mut ot, 200)
            },
            |mut s| {
                let mut ot = driver::softspoken_receiver_setup(
                    &mut s,
                    k(kk),
                    &mut insecure_rng_for_tests(4),
                )?;
                driver::cot_receive(&mut s, &mut ot, &[false; 200])
            },
        );
        let e = s.unwrap_err();
        assert_eq!(blamed(&e), Some(PartyId::P1), "k = {kk}: {e}");
    }
}

#[test]
fn mismatched_k_fails_with_a_typed_error() {
    // The sender expects k = 4 corrections, the receiver runs k = 2: wrong sizes, no panic.
    let (s, _) = run2(
        mesh().timeout(std::time::Duration::from_millis(500)),
        |mut s| {
            let mut ot =
                driver::softspoken_sender_setup(&mut s, k(4), 9, &mut insecure_rng_for_tests(3))?;
            driver::cot_send(&mut s, &mut ot, 100)
        },
        |mut s| {
            let mut ot =
                driver::softspoken_receiver_setup(&mut s, k(2), &mut insecure_rng_for_tests(4))?;
            driver::cot_receive(&mut s, &mut ot, &[true; 100])
        },
    );
    assert_eq!(blamed(&s.unwrap_err()), Some(PartyId::P1));
}

#[test]
fn random_delta_works_as_the_softspoken_correlation() {
    // Δ with its lsb set, as garbling uses, over an odd count and k = 7 (a short last chunk).
    let delta = random_delta(&mut insecure_rng_for_tests(11));
    let choices = random_bits(&mut test_rng("SoftSpoken k = 7"), 333);
    let (snd, rcv) = with_softspoken(
        k(7),
        delta,
        |s, ot| driver::cot_send(s, ot, 333).unwrap(),
        |s, ot| driver::cot_receive(s, ot, &choices).unwrap(),
    );
    for ((t, q), &c) in rcv.t.iter().zip(&snd.q).zip(&choices) {
        assert_eq!(*t, q ^ if c { delta } else { 0 });
    }
    assert_eq!(rcv.t.len(), 333);
}
