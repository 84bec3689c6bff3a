//! 2P-Duoram's UPDATE between two parties: random sequences of updates at random indices on
//! memories of odd and power-of-two sizes, preprocessed in several batches, against a
//! plaintext array (the memory is opened at the end); a batch of UPDATEs in one message;
//! transcripts that depend on neither the indices nor the values; a malformed online message
//! named; misuse refused before sending.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use doram_core::{PartyId, Seed};
use doram_duoram::DuoramError;
use doram_duoram::two_party::{
    MaskedUpdate, MemoryShare, UpdateMaterial, check_against_plain, open_memory, padded_len,
    prepare, prepare_reusing, update, update_many,
};
use doram_field::Fp;
use doram_mpc::testkit::test_seed;
use doram_net::{LocalMesh, Session, Tamper, Transcript};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use doram_twopc::insecure_rng_for_tests;
use rand_core::RngCore;

/// A deterministic generator for the public workload and the dealt input shares.
fn workload_rng(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// One UPDATE in the clear.
#[derive(Clone, Copy, Debug)]
struct Op {
    index: usize,
    delta: Fp,
}

/// One party's inputs: its share of the initial memory and of every UPDATE (index mod N,
/// delta in F_p).
#[derive(Clone)]
struct Inputs {
    memory: Vec<Fp>,
    ops: Vec<(u64, Fp)>,
}

/// Random shares of the initial memory and of the operations: `P0`'s uniform, `P1`'s the rest.
fn share(initial: &[Fp], ops: &[Op], g: &mut AesPrg) -> [Inputs; 2] {
    let big = padded_len(initial.len()) as u64;
    let mut out = [(); 2].map(|_| Inputs {
        memory: Vec::new(),
        ops: Vec::new(),
    });
    for &x in initial {
        let a = Fp::random(g);
        out[0].memory.push(a);
        out[1].memory.push(x - a);
    }
    for op in ops {
        let i0 = g.next_u64() & (big - 1);
        let i1 = (op.index as u64).wrapping_sub(i0) & (big - 1);
        let d0 = Fp::random(g);
        out[0].ops.push((i0, d0));
        out[1].ops.push((i1, op.delta - d0));
    }
    out
}

fn random_ops(n: usize, count: usize, g: &mut AesPrg) -> Vec<Op> {
    (0..count)
        .map(|k| Op {
            // Every fifth update hits cell 0 or n − 1 again, to hammer one address.
            index: match k % 5 {
                3 => 0,
                4 => n - 1,
                _ => usize::try_from(g.next_u64() % n as u64).unwrap(),
            },
            delta: Fp::random(g),
        })
        .collect()
}

fn plain(initial: &[Fp], ops: &[Op]) -> Vec<Fp> {
    let mut m = initial.to_vec();
    for op in ops {
        m[op.index] += op.delta;
    }
    m
}

/// What one party ends with.
struct Out {
    opened: Vec<Fp>,
    transcript: Transcript,
}

fn mesh() -> LocalMesh {
    LocalMesh::new(2).timeout(Duration::from_secs(30))
}

/// One party: engine set-up, then the batches (`batches[k]` UPDATEs prepared together, then
/// applied), then the memory opened. The transcript covers everything after the set-up.
fn party(mut s: Session, seed: u64, n: usize, batches: &[usize], inputs: &Inputs) -> Out {
    let me = s.me().index() as u64;
    let mut rng = insecure_rng_for_tests(seed.wrapping_mul(2).wrapping_add(me));
    let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
    let mut memory = MemoryShare::from_shares(inputs.memory.clone()).unwrap();
    s.record_transcript(true);
    let mut ops = inputs.ops.iter();
    // Every other batch reuses the buffers of the material consumed before.
    let mut spare = Vec::new();
    for (b, &k) in batches.iter().enumerate() {
        let mats = if b % 2 == 0 {
            prepare(&mut s, &mut engine, k, n, &mut rng).unwrap()
        } else {
            prepare_reusing(&mut s, &mut engine, k, n, &mut spare, &mut rng).unwrap()
        };
        assert_eq!(mats.len(), k);
        for mat in mats {
            let &(i, d) = ops.next().unwrap();
            spare.push(update(&mut s, &mut memory, mat, i, d).unwrap());
        }
    }
    assert!(ops.next().is_none(), "batches cover the operations");
    let opened = open_memory(&mut s, &memory).unwrap();
    Out {
        opened,
        transcript: s.take_transcript().unwrap(),
    }
}

fn run(mesh: LocalMesh, seed: u64, n: usize, batches: &[usize], inputs: &[Inputs; 2]) -> [Out; 2] {
    let outs = doram_net::testkit::run(mesh.build(), |s| {
        let i = s.me().index();
        party(s, seed, n, batches, &inputs[i])
    });
    let mut it = outs.into_iter();
    [it.next().unwrap(), it.next().unwrap()]
}

#[test]
fn random_updates_match_a_plaintext_array() {
    let seed = test_seed();
    let batches = [3usize, 1, 5];
    let count: usize = batches.iter().sum();
    for n in [1usize, 2, 3, 5, 64, 100, 1000] {
        let mut g = workload_rng(seed, n as u64);
        let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
        let ops = random_ops(n, count, &mut g);
        let inputs = share(&initial, &ops, &mut g);
        let [o0, o1] = run(mesh(), seed, n, &batches, &inputs);
        let want = plain(&initial, &ops);
        assert_eq!(o0.opened, want, "n = {n}, DORAM_TEST_SEED={seed}");
        assert_eq!(o1.opened, want, "n = {n}, DORAM_TEST_SEED={seed}");
    }
}

/// Shares of an index may sum to it plus any multiple of N, and a share may be N or more
/// (it is reduced mod N).
#[test]
fn index_shares_wrap_mod_the_padded_domain() {
    let seed = test_seed();
    let n = 5;
    let big = padded_len(n) as u64;
    let initial = vec![Fp::ZERO; n];
    let ops = random_ops(n, 8, &mut workload_rng(seed, 76));
    let mut inputs = share(&initial, &ops, &mut workload_rng(seed, 77));
    for (k, (i0, _)) in inputs[0].ops.iter_mut().enumerate() {
        *i0 += k as u64 * big;
    }
    for (i1, _) in inputs[1].ops.iter_mut().step_by(3) {
        *i1 = u64::MAX - (u64::MAX - *i1) % big;
    }
    let [o0, _] = run(mesh(), seed, n, &[8], &inputs);
    assert_eq!(o0.opened, plain(&initial, &ops), "DORAM_TEST_SEED={seed}");
}

/// Transcripts (who sends how many bytes when) are the same for different indices, values,
/// memory contents and party randomness.
#[test]
fn transcripts_do_not_depend_on_indices_or_values() {
    let seed = test_seed();
    let n = 100;
    let batches = [2usize, 3];
    let mut transcripts = Vec::new();
    for (run_seed, tag) in [(seed, 1u64), (seed ^ 0x5555, 2)] {
        let mut g = workload_rng(run_seed, tag);
        let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
        let ops = random_ops(n, 5, &mut g);
        let inputs = share(&initial, &ops, &mut g);
        let [o0, o1] = run(mesh(), run_seed, n, &batches, &inputs);
        assert_eq!(o0.opened, plain(&initial, &ops));
        transcripts.push([o0.transcript, o1.transcript]);
    }
    assert_eq!(transcripts[0], transcripts[1], "DORAM_TEST_SEED={seed}");
    // Each online UPDATE is one message of 24 bytes each way.
    let online = transcripts[0][0]
        .events
        .iter()
        .filter(|e| e.bytes == MaskedUpdate::LEN as u64)
        .count();
    assert!(online >= 2 * 5, "{online}");
}

/// `P1`'s online message is damaged after the preprocessing: `P0` names `P1` and does not
/// panic; `P1`, which got a good message, finishes.
fn damaged_online_message(
    edit: fn(&mut Vec<u8>),
) -> (Result<(), DuoramError>, Result<(), DuoramError>) {
    let seed = test_seed();
    let n = 5;
    let armed = Arc::new(AtomicBool::new(false));
    let hook_armed = Arc::clone(&armed);
    let mesh = mesh().tamper(move |from, to, _, payload| {
        if from == PartyId::P1 && to == PartyId::P0 && hook_armed.load(Ordering::SeqCst) {
            edit(payload);
        }
        Tamper::Pass
    });
    let outs = doram_net::testkit::run(mesh.build(), |mut s| {
        let me = s.me();
        let mut rng = insecure_rng_for_tests(seed ^ me.index() as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mut memory = MemoryShare::zeros(n).unwrap();
        let mat: UpdateMaterial = prepare(&mut s, &mut engine, 1, n, &mut rng)
            .unwrap()
            .pop()
            .unwrap();
        if me == PartyId::P1 {
            armed.store(true, Ordering::SeqCst);
        }
        update(&mut s, &mut memory, mat, 1, Fp::ONE).map(drop)
    });
    let mut it = outs.into_iter();
    (it.next().unwrap(), it.next().unwrap())
}

#[test]
fn a_truncated_online_message_names_the_peer() {
    let (r0, r1) = damaged_online_message(|p| {
        p.pop();
    });
    let e = r0.unwrap_err();
    assert_eq!(e.peer(), Some(PartyId::P1), "{e}");
    assert!(
        matches!(&e, DuoramError::Peer(f) if f.lengths() == Some((24, 23))),
        "{e}"
    );
    r1.unwrap();
}

#[test]
fn an_out_of_range_offset_or_element_names_the_peer() {
    for edit in [
        (|p: &mut Vec<u8>| p[..8].copy_from_slice(&u64::MAX.to_le_bytes())) as fn(&mut Vec<u8>),
        |p: &mut Vec<u8>| p[8..].copy_from_slice(&[0xff; 16]),
    ] {
        let (r0, r1) = damaged_online_message(edit);
        let e = r0.unwrap_err();
        assert!(
            matches!(&e, DuoramError::Peer(f) if f.peer == PartyId::P1),
            "{e}"
        );
        r1.unwrap();
    }
}

/// UPDATEs known together go in one message of 24 bytes each per UPDATE, each way, and give
/// the same memory as one by one; mismatched inputs are refused before sending.
#[test]
fn a_batch_of_updates_goes_in_one_message() {
    let seed = test_seed();
    let n = 100;
    let mut g = workload_rng(seed, 5);
    let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
    let ops = random_ops(n, 4, &mut g);
    let inputs = share(&initial, &ops, &mut g);
    let outs = doram_net::testkit::run(mesh().build(), |mut s| {
        let me = s.me().index();
        let mut rng = insecure_rng_for_tests(seed ^ me as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mut memory = MemoryShare::from_shares(inputs[me].memory.clone()).unwrap();
        let mats = prepare(&mut s, &mut engine, 4, n, &mut rng).unwrap();
        let e = update_many(&mut s, &mut memory, Vec::new(), &inputs[me].ops[..1]).unwrap_err();
        assert!(e.is_misuse(), "{e}");
        s.record_transcript(true);
        let spent = update_many(&mut s, &mut memory, mats, &inputs[me].ops).unwrap();
        assert_eq!(spent.len(), 4);
        let transcript = s.take_transcript().unwrap();
        (open_memory(&mut s, &memory).unwrap(), transcript)
    });
    for (opened, transcript) in outs {
        assert_eq!(opened, plain(&initial, &ops), "DORAM_TEST_SEED={seed}");
        let sizes: Vec<u64> = transcript.events.iter().map(|e| e.bytes).collect();
        assert_eq!(sizes, [4 * MaskedUpdate::LEN as u64; 2]);
    }
}

/// The checking helper accepts the right plaintext array and names the first wrong cell.
#[test]
fn the_plaintext_check_names_the_first_wrong_cell() {
    let seed = test_seed();
    let n = 3;
    let ops = [Op {
        index: 2,
        delta: Fp::from_u64(5),
    }];
    let inputs = share(&[Fp::ZERO; 3], &ops, &mut workload_rng(seed, 3));
    let outs = doram_net::testkit::run(mesh().build(), |mut s| {
        let me = s.me().index();
        let mut rng = insecure_rng_for_tests(seed ^ me as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mut memory = MemoryShare::from_shares(inputs[me].memory.clone()).unwrap();
        let mat = prepare(&mut s, &mut engine, 1, n, &mut rng)
            .unwrap()
            .pop()
            .unwrap();
        let (i, d) = inputs[me].ops[0];
        update(&mut s, &mut memory, mat, i, d).unwrap();
        let right = [Fp::ZERO, Fp::ZERO, Fp::from_u64(5)];
        let wrong = [Fp::ZERO, Fp::ONE, Fp::ONE];
        (
            check_against_plain(&mut s, &memory, &right),
            check_against_plain(&mut s, &memory, &wrong),
            check_against_plain(&mut s, &memory, &right[..2]),
        )
    });
    for (right, wrong, short) in outs {
        right.unwrap();
        assert!(matches!(
            wrong,
            Err(DuoramError::VerificationFailed { index: 1, .. })
        ));
        assert!(matches!(
            short,
            Err(DuoramError::VerificationFailed { index: 2, .. })
        ));
    }
}

/// Material for another memory size is refused before anything is sent.
#[test]
fn material_of_another_size_is_refused() {
    let seed = test_seed();
    let outs = doram_net::testkit::run(mesh().build(), |mut s| {
        let mut rng = insecure_rng_for_tests(seed ^ s.me().index() as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mat = prepare(&mut s, &mut engine, 1, 8, &mut rng)
            .unwrap()
            .pop()
            .unwrap();
        let mut memory = MemoryShare::zeros(9).unwrap();
        let e = update(&mut s, &mut memory, mat, 0, Fp::ONE).unwrap_err();
        (e.is_misuse(), memory.words().to_vec())
    });
    for (misuse, words) in outs {
        assert!(misuse);
        assert_eq!(words, vec![Fp::ZERO; 9]);
    }
    assert!(matches!(
        MemoryShare::zeros(0),
        Err(DuoramError::InvalidSize { n: 0, .. })
    ));
}
