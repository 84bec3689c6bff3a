//! 2P-Duoram's READ (SPIRAL + Naor–Pinkas masks) between two parties, interleaved with UPDATEs:
//! every read's shares sum to the plaintext array's word, on odd and power-of-two sizes;
//! transcripts that depend on neither the indices nor the data; a damaged response named;
//! material of another size refused.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doram_core::{PartyId, Seed};
use doram_duoram::DuoramError;
use doram_duoram::two_party::{
    MemoryShare, open_memory, padded_len, prepare, prepare_reads, read, setup_reads, update,
};
use doram_field::Fp;
use doram_mpc::testkit::test_seed;
use doram_net::{LocalMesh, Session, Tamper, Transcript};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use doram_twopc::insecure_rng_for_tests;
use rand_core::RngCore;

fn workload_rng(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// An operation in the clear: a read, or an update adding `delta`.
#[derive(Clone, Copy, Debug)]
enum Op {
    Read(usize),
    Update(usize, Fp),
}

/// One party's inputs: its memory share and its shares of every operation.
#[derive(Clone)]
struct Inputs {
    memory: Vec<Fp>,
    ops: Vec<(bool, u64, Fp)>,
}

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
        let (is_read, index, delta) = match *op {
            Op::Read(i) => (true, i, Fp::ZERO),
            Op::Update(i, d) => (false, i, d),
        };
        let i0 = g.next_u64() & (big - 1);
        let i1 = (index as u64).wrapping_sub(i0) & (big - 1);
        let d0 = Fp::random(g);
        out[0].ops.push((is_read, i0, d0));
        out[1].ops.push((is_read, i1, delta - d0));
    }
    out
}

fn random_ops(n: usize, count: usize, g: &mut AesPrg) -> Vec<Op> {
    (0..count)
        .map(|k| {
            let index = match k % 4 {
                2 => n - 1,
                _ => usize::try_from(g.next_u64() % n as u64).unwrap(),
            };
            if k % 3 == 1 {
                Op::Update(index, Fp::random(g))
            } else {
                Op::Read(index)
            }
        })
        .collect()
}

/// The plaintext run: the value of each read, and the final memory.
fn plain(initial: &[Fp], ops: &[Op]) -> (Vec<Fp>, Vec<Fp>) {
    let mut m = initial.to_vec();
    let mut reads = Vec::new();
    for op in ops {
        match *op {
            Op::Read(i) => reads.push(m[i]),
            Op::Update(i, d) => m[i] += d,
        }
    }
    (reads, m)
}

struct Out {
    reads: Vec<Fp>,
    opened: Vec<Fp>,
    transcript: Transcript,
}

fn mesh() -> LocalMesh {
    LocalMesh::new(2).timeout(Duration::from_secs(60))
}

/// One party: engine and read set-up, all material prepared in two batches, the operations in
/// order, then the memory opened.
fn party(mut s: Session, seed: u64, n: usize, inputs: &Inputs) -> Result<Out, DuoramError> {
    let me = s.me().index() as u64;
    let mut rng = insecure_rng_for_tests(seed.wrapping_mul(2).wrapping_add(me));
    let mut engine = Arith2::setup(&mut s, &mut rng)?;
    let mut memory = MemoryShare::from_shares(inputs.memory.clone())?;
    let mut setup = setup_reads(&mut s, n)?;
    s.record_transcript(true);
    let reads = inputs.ops.iter().filter(|o| o.0).count();
    let updates = inputs.ops.len() - reads;
    let mut read_mats = prepare_reads(&mut s, &mut engine, &setup, reads / 2, &mut rng)?;
    read_mats.extend(prepare_reads(
        &mut s,
        &mut engine,
        &setup,
        reads - reads / 2,
        &mut rng,
    )?);
    let mut update_mats = prepare(&mut s, &mut engine, updates, n, &mut rng)?.into_iter();
    let mut read_mats = read_mats.into_iter();
    let mut out = Vec::new();
    for &(is_read, i, d) in &inputs.ops {
        if is_read {
            let mat = read_mats.next().unwrap();
            out.push(read(&mut s, &memory, &mut setup, mat, i)?);
        } else {
            let mat = update_mats.next().unwrap();
            update(&mut s, &mut memory, mat, i, d)?;
        }
    }
    let opened = open_memory(&mut s, &memory)?;
    Ok(Out {
        reads: out,
        opened,
        transcript: s.take_transcript().unwrap(),
    })
}

fn run(
    mesh: LocalMesh,
    seed: u64,
    n: usize,
    inputs: &[Inputs; 2],
) -> [Result<Out, DuoramError>; 2] {
    let outs = doram_net::testkit::run(mesh.build(), |s| {
        let i = s.me().index();
        party(s, seed, n, &inputs[i])
    });
    let mut it = outs.into_iter();
    [it.next().unwrap(), it.next().unwrap()]
}

fn opened_reads(o0: &Out, o1: &Out) -> Vec<Fp> {
    o0.reads
        .iter()
        .zip(&o1.reads)
        .map(|(a, b)| *a + *b)
        .collect()
}

#[test]
fn reads_and_updates_match_a_plaintext_array() {
    let seed = test_seed();
    for (n, count) in [(1usize, 4usize), (5, 7), (100, 9), (3000, 6)] {
        let mut g = workload_rng(seed, n as u64);
        let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
        let ops = random_ops(n, count, &mut g);
        let inputs = share(&initial, &ops, &mut g);
        let [o0, o1] = run(mesh(), seed, n, &inputs);
        let (o0, o1) = (o0.unwrap(), o1.unwrap());
        let (reads, memory) = plain(&initial, &ops);
        assert_eq!(
            opened_reads(&o0, &o1),
            reads,
            "n = {n}, DORAM_TEST_SEED={seed}"
        );
        assert_eq!(o0.opened, memory, "n = {n}, DORAM_TEST_SEED={seed}");
    }
}

/// Transcripts (who sends how many bytes when) are the same for different indices, memory
/// contents and party randomness.
#[test]
fn transcripts_do_not_depend_on_indices_or_data() {
    let seed = test_seed();
    let n = 37;
    let mut transcripts = Vec::new();
    for (run_seed, tag) in [(seed, 1u64), (seed ^ 0x5555, 2)] {
        let mut g = workload_rng(run_seed, tag);
        let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
        // The same sequence of operation types, other indices and values.
        let ops: Vec<Op> = (0..5)
            .map(|k| {
                let i = usize::try_from(g.next_u64() % n as u64).unwrap();
                if k == 2 {
                    Op::Update(i, Fp::random(&mut g))
                } else {
                    Op::Read(i)
                }
            })
            .collect();
        let inputs = share(&initial, &ops, &mut g);
        let [o0, o1] = run(mesh(), run_seed, n, &inputs);
        let (o0, o1) = (o0.unwrap(), o1.unwrap());
        assert_eq!(opened_reads(&o0, &o1), plain(&initial, &ops).0);
        transcripts.push([o0.transcript, o1.transcript]);
    }
    assert_eq!(transcripts[0], transcripts[1], "DORAM_TEST_SEED={seed}");
}

/// A response cut short is a fault naming the peer, not a panic.
#[test]
fn a_damaged_response_names_the_peer() {
    let seed = test_seed();
    let n = 16;
    let mut g = workload_rng(seed, 9);
    let initial: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
    let inputs = share(&initial, &[Op::Read(3)], &mut g);
    // Only a frame of exactly the response's length from P1 to P0 is cut short.
    let mesh = mesh().tamper(|from, to, _, payload| {
        if from == PartyId::P1 && to == PartyId::P0 && payload.len() == 20_480 {
            payload.truncate(100);
        }
        Tamper::Pass
    });
    let [o0, _] = run(mesh, seed, n, &inputs);
    match o0 {
        Err(e @ DuoramError::Peer(_)) => assert_eq!(e.peer(), Some(PartyId::P1), "{e}"),
        Err(e) => panic!("expected a peer fault, got {e}"),
        Ok(_) => panic!("a damaged response was accepted"),
    }
}

#[test]
fn material_of_another_size_is_refused() {
    let seed = test_seed();
    let outs = doram_net::testkit::run(mesh().build(), |mut s| {
        let mut rng = insecure_rng_for_tests(seed ^ s.me().index() as u64);
        let mut engine = Arith2::setup(&mut s, &mut rng).unwrap();
        let mut setup = setup_reads(&mut s, 8).unwrap();
        let mat = prepare_reads(&mut s, &mut engine, &setup, 1, &mut rng).unwrap();
        let memory = MemoryShare::zeros(20).unwrap();
        let err = read(
            &mut s,
            &memory,
            &mut setup,
            mat.into_iter().next().unwrap(),
            0,
        );
        matches!(err, Err(DuoramError::ApiMisuse(_)))
    });
    assert!(outs.into_iter().all(|x| x));
}
