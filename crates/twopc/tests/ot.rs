//! OT correctness on an in-process two-party mesh, message sizes, and faulty peers.
#![allow(clippy::unwrap_used)]

mod common;

use common::{blamed, mesh, random_bits, random_block, run2, tampered, test_rng};
use doram_core::PartyId;
use doram_net::Tamper;
use doram_prim::aes::Block;
use doram_twopc::driver;
use doram_twopc::{TwopcError, insecure_rng_for_tests};

#[test]
fn base_ots_deliver_the_chosen_key() {
    let choices = random_bits(&mut test_rng("base OT"), 128);
    let (pairs, keys) = run2(
        mesh(),
        |mut s| driver::base_ot_send(&mut s, 128, &mut insecure_rng_for_tests(1)).unwrap(),
        |mut s| driver::base_ot_receive(&mut s, &choices, &mut insecure_rng_for_tests(2)).unwrap(),
    );
    for ((pair, key), &c) in pairs.iter().zip(&keys).zip(&choices) {
        assert_eq!(pair[usize::from(c)], *key);
        assert_ne!(pair[usize::from(!c)], *key);
    }
}

/// Runs IKNP setup then `f0` / `f1` on the sender (P0) and receiver (P1).
fn with_iknp<A: Send, B: Send>(
    delta: Block,
    f0: impl Fn(&mut doram_net::Session, &mut doram_twopc::IknpSender) -> A + Sync,
    f1: impl Fn(&mut doram_net::Session, &mut doram_twopc::IknpReceiver) -> B + Sync,
) -> (A, B) {
    run2(
        mesh(),
        |mut s| {
            let mut ot =
                driver::iknp_sender_setup(&mut s, delta, &mut insecure_rng_for_tests(3)).unwrap();
            f0(&mut s, &mut ot)
        },
        |mut s| {
            let mut ot =
                driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(4)).unwrap();
            f1(&mut s, &mut ot)
        },
    )
}

const SIZES: [usize; 6] = [0, 1, 127, 128, 1000, (1 << 16) + 300];

#[test]
fn correlated_ots_satisfy_t_eq_q_xor_r_delta() {
    let mut rng = test_rng("COT");
    let delta = random_block(&mut rng);
    let choices: Vec<Vec<bool>> = SIZES.iter().map(|&m| random_bits(&mut rng, m)).collect();
    let (sent, recvd) = with_iknp(
        delta,
        |s, ot| SIZES.map(|m| driver::cot_send(s, ot, m).unwrap()),
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
        for i in 0..c.len() {
            let want = snd.q[i] ^ if c[i] { delta } else { 0 };
            assert_eq!(rcv.t[i], want, "OT {i} of {}", c.len());
        }
    }
}

#[test]
fn random_ots_deliver_the_chosen_message() {
    let delta = random_block(&mut test_rng("ROT"));
    let (sent, recvd) = with_iknp(
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
            assert_eq!(snd.msgs[i][c], rcv.msgs[i]);
            assert_ne!(snd.msgs[i][1 - c], rcv.msgs[i]);
        }
    }
}

#[test]
fn chosen_message_ots_deliver_the_chosen_input() {
    let mut rng = test_rng("OT");
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
    let ((), got) = with_iknp(
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
            assert_eq!(y[i], x[i][usize::from(c[i])]);
        }
    }
}

#[test]
fn message_sizes_are_fixed_by_the_batch_size() {
    // Same sizes, different choices and Δ: identical transcripts at both parties.
    let shapes = |seed: u64| {
        let mut rng = insecure_rng_for_tests(seed);
        let delta = random_block(&mut rng);
        let choices = random_bits(&mut rng, 1000);
        let inputs: Vec<[Block; 2]> = (0..300).map(|_| [random_block(&mut rng); 2]).collect();
        run2(
            mesh(),
            |mut s| {
                s.record_transcript(true);
                let mut ot =
                    driver::iknp_sender_setup(&mut s, delta, &mut insecure_rng_for_tests(seed))
                        .unwrap();
                driver::cot_send(&mut s, &mut ot, 1000).unwrap();
                driver::ot_send(&mut s, &mut ot, &inputs).unwrap();
                s.take_transcript().unwrap()
            },
            |mut s| {
                s.record_transcript(true);
                let mut r = insecure_rng_for_tests(seed + 1);
                let mut ot = driver::iknp_receiver_setup(&mut s, &mut r).unwrap();
                driver::cot_receive(&mut s, &mut ot, &choices).unwrap();
                driver::ot_receive(&mut s, &mut ot, &choices[..300], &mut r).unwrap();
                s.take_transcript().unwrap()
            },
        )
    };
    let (a0, a1) = shapes(10);
    let (b0, b1) = shapes(20);
    assert_eq!(a0, b0);
    assert_eq!(a1, b1);
    // Base OT: 32 bytes, then 128 · 32; COT of 1000: 8 blocks of 128 · 16 bytes; chosen OT of
    // 300: 3 blocks, 38 bytes of flips, 300 · 32 bytes of answers.
    let bytes: Vec<u64> = a0.events.iter().map(|e| e.bytes).collect();
    assert_eq!(bytes, [32, 128 * 32, 8 * 2048, 3 * 2048, 38, 300 * 32]);
}

type BaseOtResults = (
    Result<Vec<[Block; 2]>, TwopcError>,
    Result<Vec<Block>, TwopcError>,
);

fn base_ot_fault(
    tamper: impl Fn(&mut Vec<u8>) + Send + Sync + 'static,
    sender_frame: bool,
) -> BaseOtResults {
    let choices = vec![true; 128];
    run2(
        tampered(move |from, _, idx, payload| {
            if idx == 0 && (from == PartyId::P0) == sender_frame {
                tamper(payload);
            }
            Tamper::Pass
        })
        .timeout(std::time::Duration::from_millis(500)),
        |mut s| driver::base_ot_send(&mut s, 128, &mut insecure_rng_for_tests(1)),
        |mut s| driver::base_ot_receive(&mut s, &choices, &mut insecure_rng_for_tests(2)),
    )
}

#[test]
fn invalid_points_and_lengths_are_blamed_on_the_sender_of_them() {
    // The sender's point: the identity (all zeros), a non-canonical encoding, a short message.
    for bad in [vec![0u8; 32], vec![0xff; 32], vec![1u8; 31]] {
        let (_, r) = base_ot_fault(move |p| *p = bad.clone(), true);
        assert_eq!(blamed(&r.unwrap_err()), Some(PartyId::P0));
    }
    // The receiver's points: one replaced by the identity, one invalid, one byte missing.
    let (s, _) = base_ot_fault(|p| p[64..96].fill(0), false);
    assert_eq!(blamed(&s.unwrap_err()), Some(PartyId::P1));
    let (s, _) = base_ot_fault(|p| p[..32].fill(0xff), false);
    assert_eq!(blamed(&s.unwrap_err()), Some(PartyId::P1));
    let (s, _) = base_ot_fault(
        |p| {
            p.pop();
        },
        false,
    );
    let e = s.unwrap_err();
    assert_eq!(blamed(&e), Some(PartyId::P1));
    assert!(
        e.to_string().contains("expected 4096 bytes, got 4095"),
        "{e}"
    );
}

#[test]
fn a_short_extension_message_is_blamed_on_the_receiver() {
    let delta = 0x1234;
    let (s, _) = run2(
        tampered(|from, _, idx, payload| {
            // P1's frame 1 is its extension message (frame 0 is its base-OT answer).
            if from == PartyId::P1 && idx == 1 {
                payload.truncate(payload.len() - 16);
            }
            Tamper::Pass
        }),
        |mut s| {
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut insecure_rng_for_tests(3))?;
            driver::cot_send(&mut s, &mut ot, 200)
        },
        |mut s| {
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut insecure_rng_for_tests(4))?;
            driver::cot_receive(&mut s, &mut ot, &[false; 200])
        },
    );
    let e = s.unwrap_err();
    assert_eq!(blamed(&e), Some(PartyId::P1), "{e}");
}

#[test]
fn chosen_ot_flip_bits_with_padding_set_are_refused() {
    let delta = 0x77;
    let (s, _) = run2(
        tampered(|from, _, idx, payload| {
            // P1's frame 2: the flips of 5 OTs (one byte); set a padding bit.
            if from == PartyId::P1 && idx == 2 {
                payload[0] |= 0x80;
            }
            Tamper::Pass
        })
        .timeout(std::time::Duration::from_millis(500)),
        |mut s| {
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut insecure_rng_for_tests(3))?;
            driver::ot_send(&mut s, &mut ot, &[[1, 2]; 5])
        },
        |mut s| {
            let mut r = insecure_rng_for_tests(4);
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut r)?;
            driver::ot_receive(&mut s, &mut ot, &[true; 5], &mut r)
        },
    );
    assert_eq!(blamed(&s.unwrap_err()), Some(PartyId::P1));
}
