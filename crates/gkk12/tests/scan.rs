//! The linear-scan baseline against a plain array, and its transcript's shape.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Mutex;

use common::run2;
use doram_gkk12::driver::{AccessLabels, garbler_input, garbler_input_labels};
use doram_gkk12::scan::{ScanCircuits, ScanClient, ScanServer};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{
    cot_receive, cot_send, softspoken_receiver_setup, softspoken_sender_setup,
};
use doram_twopc::gc::{Evaluator, Garbler, random_delta};
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

const ENTRIES: usize = 150;
const WIDTH: usize = 11;
const ABITS: usize = 8;

fn bits(x: u64, n: usize) -> Vec<bool> {
    (0..n).map(|k| (x >> k) & 1 == 1).collect()
}

fn value(b: &[bool]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0, |a, (k, &x)| a | (u64::from(x) << k))
}

/// The server's data loaded as its input; the client makes each access (address, write?) and
/// learns the entry before it.
fn run(data: &[u64], ops: &[(u64, Option<u64>)], seed: u64) -> (Vec<u64>, Transcript, Transcript) {
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let n_ops = ops.len();
    let data = data.to_vec();
    let ((), (results, t1, t0)) = {
        let t0 = Mutex::new(None);
        let (a, (r, t1)) = run2(
            |mut s: Session| {
                let mut rng = insecure_rng_for_tests(seed + 1);
                let mut ot =
                    softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
                s.record_transcript(true);
                let mem_bits: Vec<bool> = data.iter().flat_map(|&x| bits(x, WIDTH)).collect();
                let memory = garbler_input(&mut s, delta, &mem_bits, &mut rng).unwrap();
                let zero = garbler_input(&mut s, delta, &[false], &mut rng).unwrap()[0];
                let circuits = ScanCircuits::new(ENTRIES, WIDTH, ABITS).unwrap();
                let mut server = ScanServer::new(circuits, memory, zero).unwrap();
                let mut garbler = Garbler::new(delta, 0).unwrap();
                for _ in 0..n_ops {
                    let q = cot_send(&mut s, &mut ot, ABITS + 1 + WIDTH).unwrap().q;
                    let labels = AccessLabels {
                        addr: q[..ABITS].to_vec(),
                        write: q[ABITS],
                        data: q[ABITS + 1..].to_vec(),
                    };
                    let out = server.access(&mut s, &mut garbler, &labels).unwrap();
                    let lsbs: Vec<u8> = out.iter().map(|&w| (w & 1) as u8).collect();
                    s.send_bytes(s.peers().next().unwrap(), &lsbs).unwrap();
                }
                *t0.lock().unwrap() = s.take_transcript();
            },
            |mut s: Session| {
                let mut rng = insecure_rng_for_tests(seed + 2);
                let mut ot =
                    softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
                s.record_transcript(true);
                let memory = garbler_input_labels(&mut s, ENTRIES * WIDTH).unwrap();
                let zero = garbler_input_labels(&mut s, 1).unwrap()[0];
                let circuits = ScanCircuits::new(ENTRIES, WIDTH, ABITS).unwrap();
                let mut client = ScanClient::new(circuits, memory, zero).unwrap();
                let mut evaluator = Evaluator::new(0);
                let mut results = Vec::new();
                for &(v, write) in ops {
                    let mut input = bits(v, ABITS);
                    input.push(write.is_some());
                    input.extend(bits(write.unwrap_or(0), WIDTH));
                    let t = cot_receive(&mut s, &mut ot, &input).unwrap().t;
                    let labels = AccessLabels {
                        addr: t[..ABITS].to_vec(),
                        write: t[ABITS],
                        data: t[ABITS + 1..].to_vec(),
                    };
                    let out = client.access(&mut s, &mut evaluator, &labels).unwrap();
                    let lsbs = s.recv_bytes(s.peers().next().unwrap()).unwrap();
                    let got: Vec<bool> = out
                        .iter()
                        .zip(lsbs)
                        .map(|(&w, z)| ((w & 1) as u8 ^ z) == 1)
                        .collect();
                    results.push(value(&got));
                }
                (results, s.take_transcript().unwrap())
            },
        );
        (a, (r, t1, t0.into_inner().unwrap().unwrap()))
    };
    (results, t0, t1)
}

#[test]
fn scans_return_the_last_write() {
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    let data: Vec<u64> = (0..ENTRIES)
        .map(|_| rng.random_range(0..1 << WIDTH))
        .collect();
    let mut array = data.clone();
    let mut ops = Vec::new();
    let mut expect = Vec::new();
    for _ in 0..30 {
        let v = rng.random_range(0..ENTRIES as u64);
        expect.push(array[v as usize]);
        if rng.random_bool(0.5) {
            let x = rng.random_range(0..1 << WIDTH);
            array[v as usize] = x;
            ops.push((v, Some(x)));
        } else {
            ops.push((v, None));
        }
    }
    let (results, _, _) = run(&data, &ops, 9);
    assert_eq!(results, expect);
    assert_eq!(
        ScanCircuits::new(ENTRIES, WIDTH, ABITS)
            .unwrap()
            .and_gates(),
        (1 << (ABITS + 1)) - 4 + ENTRIES.div_ceil(64) * 64 * (2 * WIDTH + 1)
    );
}

#[test]
fn scan_transcripts_do_not_depend_on_the_accesses() {
    let data = vec![5; ENTRIES];
    let a = run(&data, &[(3, None), (7, Some(1)), (149, None)], 1);
    let b = run(&data, &[(0, Some(9)), (0, Some(2)), (1, Some(0))], 2);
    assert_eq!((a.1, a.2), (b.1, b.2));
}
