//! The two-party access protocol against a plain array, its stored state against the tree
//! ORAM's invariants, and its transcript's shape against the data.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Op, check_invariants, client_ops, open_both, random_words, run2, serve_ops};
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::testkit::{deal_insecurely, open_insecurely};
use doram_gkk12::{Params, PlainTreeOram};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::softspoken::ChunkBits;
use doram_twopc::{insecure_rng_for_tests, os_rng};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

struct Run {
    results: Vec<Vec<u64>>,
    opened: Vec<Vec<(doram_gkk12::tree::Slot, Vec<u64>)>>,
    base: Vec<u64>,
    transcripts: (Transcript, Transcript),
}

/// Loads `data` with the insecure dealer, runs `ops` between a server and a client (the
/// client supplies each access and learns its result).
fn run(params: Params, data: &[Vec<u64>], ops: &[Op], seed: u64) -> Run {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let plain = PlainTreeOram::load(params, |v| data[v as usize].clone(), &mut rng).unwrap();
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let (server_state, client_state) = deal_insecurely(&plain, delta, &mut rng);
    let n_ops = ops.len();
    let (server, client) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            s.record_transcript(true);
            let mut server =
                Server::new(server_state, ot, insecure_rng_for_tests(seed + 2)).unwrap();
            serve_ops(&mut server, &mut s, n_ops);
            (server, s.take_transcript().unwrap())
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 3);
            let ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let mut client =
                Client::new(client_state, ot, insecure_rng_for_tests(seed + 4)).unwrap();
            let results = client_ops(&mut client, &mut s, ops);
            (client, results, s.take_transcript().unwrap())
        },
    );
    let (server, t0) = server;
    let (client, results, t1) = client;
    let (opened, base) = open_both(&params, &server, &client);
    Run {
        results,
        opened,
        base,
        transcripts: (t0, t1),
    }
}

#[test]
fn accesses_return_the_last_write_and_keep_the_tree_sound() {
    let mut rng = ChaCha12Rng::seed_from_u64(21);
    for (items, bits, bucket, trees, accesses) in
        [(1, 5, 2, 1, 6), (40, 7, 4, 2, 60), (300, 70, 6, 3, 40)]
    {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let mut array = data.clone();
        let mut ops = Vec::new();
        let mut expect = Vec::new();
        for _ in 0..accesses {
            let v = rng.random_range(0..items);
            expect.push(array[v as usize].clone());
            if rng.random_bool(0.5) {
                let new = random_words(&mut rng, bits);
                array[v as usize] = new.clone();
                ops.push((v, Some(new)));
            } else {
                ops.push((v, None));
            }
        }
        let out = run(params, &data, &ops, 7 + items);
        assert_eq!(out.results, expect, "{params:?}");
        check_invariants(&params, &out.opened, &out.base);
        // The stored items are the array's.
        for (v, want) in array.iter().enumerate() {
            let (_, payload) = out.opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want, "item {v}");
        }
    }
}

#[test]
fn transcripts_do_not_depend_on_data_addresses_or_operations() {
    let params = Params::new(100, 16, 4, 2).unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    let a: Vec<Vec<u64>> = (0..100).map(|_| random_words(&mut rng, 16)).collect();
    let b: Vec<Vec<u64>> = (0..100).map(|_| random_words(&mut rng, 16)).collect();
    let ops_a: Vec<Op> = (0..8).map(|k| (k * 7 % 100, None)).collect();
    let ops_b: Vec<Op> = (0..8).map(|k| (99 - k, Some(vec![k]))).collect();
    let ra = run(params, &a, &ops_a, 1);
    let rb = run(params, &b, &ops_b, 2);
    assert_eq!(ra.transcripts.0, rb.transcripts.0, "server");
    assert_eq!(ra.transcripts.1, rb.transcripts.1, "client");
    let _ = os_rng;
}

#[test]
fn the_lean_dealer_places_every_item_on_its_path() {
    let mut rng = ChaCha12Rng::seed_from_u64(8);
    for (items, bits, bucket, trees) in [(1, 5, 2, 1), (300, 70, 6, 3), (4096, 64, 24, 2)] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let delta = random_delta(&mut insecure_rng_for_tests(1));
        let (s, c) = doram_gkk12::testkit::deal_random_insecurely(
            params,
            |v| data[v as usize].clone(),
            delta,
            &mut rng,
        )
        .unwrap();
        let opened = open_insecurely(&params, &s.trees, &c.key);
        let w = params.base_entry_bits() as usize;
        let base: Vec<u64> = s
            .base
            .chunks(w.max(1))
            .zip(c.base.chunks(w.max(1)))
            .map(|(z, a)| {
                z.iter()
                    .zip(a)
                    .enumerate()
                    .fold(0, |acc, (k, (&z, &a))| acc | ((((z ^ a) & 1) as u64) << k))
            })
            .collect();
        let base = if w == 0 {
            vec![0; params.base_entries() as usize]
        } else {
            base
        };
        check_invariants(&params, &opened, &base);
        for (v, want) in data.iter().enumerate() {
            let (_, payload) = opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want);
        }
    }
}
