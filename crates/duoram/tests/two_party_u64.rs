//! 2P-Duoram on 64-bit words (additive shares mod 2^64): UPDATEs with Z_2^64 DPF keys made
//! between the two parties and READs by SPIR over 8-byte records, interleaved, against a
//! plaintext array on odd and power-of-two sizes, several batches of material; transcripts
//! that depend on neither indices nor data; a damaged UPDATE message named.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use doram_core::PartyId;
use doram_duoram::DuoramError;
use doram_duoram::two_party::{
    MemoryShare64, check_against_plain, padded_len, prepare_reads, prepare_u64, read_u64,
    setup_reads_u64, update,
};
use doram_field::Z64;
use doram_mpc::testkit::test_seed;
use doram_net::{LocalMesh, Session, Tamper, Transcript};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use doram_twopc::insecure_rng_for_tests;
use rand_core::RngCore;

#[derive(Clone, Copy, Debug)]
enum Op {
    Read(usize),
    Update(usize, u64),
}

/// One party's memory share and its shares of each operation `(is_read, i*, δ)`.
type Inputs = (Vec<u64>, Vec<(bool, u64, u64)>);

fn share(initial: &[u64], ops: &[Op], g: &mut AesPrg) -> [Inputs; 2] {
    let big = padded_len(initial.len()) as u64;
    let mut out = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
    for &x in initial {
        let a = g.next_u64();
        out[0].0.push(a);
        out[1].0.push(x.wrapping_sub(a));
    }
    for op in ops {
        let (is_read, i, d) = match *op {
            Op::Read(i) => (true, i, 0),
            Op::Update(i, d) => (false, i, d),
        };
        let (i0, d0) = (g.next_u64() & (big - 1), g.next_u64());
        out[0].1.push((is_read, i0, d0));
        out[1].1.push((
            is_read,
            (i as u64).wrapping_sub(i0) & (big - 1),
            d.wrapping_sub(d0),
        ));
    }
    out
}

fn plain(initial: &[u64], ops: &[Op]) -> (Vec<u64>, Vec<u64>) {
    let mut m = initial.to_vec();
    let mut reads = Vec::new();
    for op in ops {
        match *op {
            Op::Read(i) => reads.push(m[i]),
            Op::Update(i, d) => m[i] = m[i].wrapping_add(d),
        }
    }
    (reads, m)
}

fn mesh() -> LocalMesh {
    LocalMesh::new(2).timeout(Duration::from_secs(60))
}

/// One party: reads prepared in one batch, UPDATE material in two, the operations in order,
/// then the memory checked against `expect`.
fn party(
    mut s: Session,
    seed: u64,
    inputs: &Inputs,
    expect: &[u64],
) -> Result<(Vec<u64>, Transcript), DuoramError> {
    let me = s.me().index() as u64;
    let mut rng = insecure_rng_for_tests(seed.wrapping_mul(2).wrapping_add(me));
    let mut engine = Arith2::setup(&mut s, &mut rng)?;
    let n = inputs.0.len();
    let mut memory = MemoryShare64::from_shares(inputs.0.iter().map(|&x| Z64(x)).collect())?;
    let mut setup = setup_reads_u64(&mut s, n)?;
    s.record_transcript(true);
    let reads = inputs.1.iter().filter(|o| o.0).count();
    let updates = inputs.1.len() - reads;
    let mut read_mats = prepare_reads(&mut s, &mut engine, &setup, reads, &mut rng)?.into_iter();
    let mut update_mats = prepare_u64(&mut s, &mut engine, updates / 2, n, &mut rng)?;
    update_mats.extend(prepare_u64(
        &mut s,
        &mut engine,
        updates - updates / 2,
        n,
        &mut rng,
    )?);
    let mut update_mats = update_mats.into_iter();
    let mut out = Vec::new();
    for &(is_read, i, d) in &inputs.1 {
        if is_read {
            let mat = read_mats.next().unwrap();
            out.push(read_u64(&mut s, &memory, &mut setup, mat, i)?.0);
        } else {
            update(&mut s, &mut memory, update_mats.next().unwrap(), i, Z64(d))?;
        }
    }
    let transcript = s.take_transcript().unwrap();
    let expect: Vec<Z64> = expect.iter().map(|&x| Z64(x)).collect();
    check_against_plain(&mut s, &memory, &expect)?;
    Ok((out, transcript))
}

fn run(
    mesh: LocalMesh,
    seed: u64,
    initial: &[u64],
    ops: &[Op],
    tag: u64,
) -> [Result<(Vec<u64>, Transcript), DuoramError>; 2] {
    let mut g = common::rng(seed, tag);
    let inputs = share(initial, ops, &mut g);
    let (_, expect) = plain(initial, ops);
    let outs = doram_net::testkit::run(mesh.build(), |s| {
        let i = s.me().index();
        party(s, seed, &inputs[i], &expect)
    });
    let mut it = outs.into_iter();
    [it.next().unwrap(), it.next().unwrap()]
}

fn random_ops(n: usize, count: usize, g: &mut AesPrg) -> Vec<Op> {
    (0..count)
        .map(|k| {
            let i = match k % 4 {
                1 => n - 1,
                _ => usize::try_from(g.next_u64() % n as u64).unwrap(),
            };
            if k % 3 == 0 {
                Op::Update(i, g.next_u64())
            } else {
                Op::Read(i)
            }
        })
        .collect()
}

#[test]
fn reads_and_updates_match_a_plaintext_array() {
    let seed = test_seed();
    for (n, count) in [(1usize, 4usize), (6, 7), (1000, 8), (4096, 5)] {
        let mut g = common::rng(seed, 500 + n as u64);
        let initial: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
        let ops = random_ops(n, count, &mut g);
        let [o0, o1] = run(mesh(), seed, &initial, &ops, n as u64);
        let ((r0, _), (r1, _)) = (o0.unwrap(), o1.unwrap());
        let opened: Vec<u64> = r0
            .iter()
            .zip(&r1)
            .map(|(a, b)| a.wrapping_add(*b))
            .collect();
        assert_eq!(
            opened,
            plain(&initial, &ops).0,
            "n = {n}, DORAM_TEST_SEED={seed}"
        );
    }
}

#[test]
fn transcripts_do_not_depend_on_indices_or_data() {
    let seed = test_seed();
    let n = 50;
    let mut transcripts = Vec::new();
    for tag in [1u64, 2] {
        let mut g = common::rng(seed ^ tag, tag);
        let initial: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
        let ops: Vec<Op> = (0..4)
            .map(|k| {
                let i = usize::try_from(g.next_u64() % n as u64).unwrap();
                if k == 1 {
                    Op::Update(i, g.next_u64())
                } else {
                    Op::Read(i)
                }
            })
            .collect();
        let [o0, o1] = run(mesh(), seed ^ tag, &initial, &ops, tag);
        transcripts.push([o0.unwrap().1, o1.unwrap().1]);
    }
    assert_eq!(transcripts[0], transcripts[1], "DORAM_TEST_SEED={seed}");
}

/// An UPDATE message cut short is a fault naming the peer.
#[test]
fn a_damaged_update_message_names_the_peer() {
    let seed = test_seed();
    let initial = vec![5u64; 8];
    // The UPDATE's message is 16 bytes starting with an offset below N = 8 (the set-up's
    // 16-byte seed is random).
    let mesh = mesh().tamper(|from, to, _, payload| {
        let offset = payload
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()));
        if from == PartyId::P1 && to == PartyId::P0 && payload.len() == 16 && offset < Some(8) {
            payload.truncate(15);
        }
        Tamper::Pass
    });
    let [o0, _] = run(mesh, seed, &initial, &[Op::Update(3, 9)], 9);
    match o0 {
        Err(e @ DuoramError::Peer(_)) => {
            assert_eq!(e.peer(), Some(PartyId::P1), "{e}");
            // Not the set-up's 16-byte seed: the fault is the UPDATE's message.
            assert!(e.to_string().contains("masked UPDATE"), "{e}");
        }
        Err(e) => panic!("expected a peer fault, got {e}"),
        Ok(_) => panic!("a damaged UPDATE was accepted"),
    }
}
