//! The load by the two parties alone (`doram_gkk12::sortload`): afterwards every item of every
//! tree is on the path to its leaf exactly once, the position maps and the base map hold the
//! leaves, accesses return the loaded data (shared between the parties or held by the server)
//! and the last writes, and the load's transcript does not depend on the data.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Op, check_invariants, client_ops, open_both, random_words, run2, serve_ops};
use doram_gkk12::Params;
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::sortload::{Holding, load_client, load_server, sort_placement};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

struct Run {
    results: Vec<Vec<u64>>,
    opened: common::Opened,
    base: Vec<u64>,
    load: (Transcript, Transcript),
}

fn pack(words: &[Vec<u64>], bits: usize) -> Vec<u8> {
    let db = bits.div_ceil(8);
    let mut out = vec![0u8; words.len() * db];
    for (v, w) in words.iter().enumerate() {
        for k in 0..bits {
            if (w[k / 64] >> (k % 64)) & 1 == 1 {
                out[v * db + k / 8] |= 1 << (k % 8);
            }
        }
    }
    out
}

/// Loads `data` (split into XOR shares if `shared`, else held by the server, the client's
/// share zeros) and runs `ops`.
fn run(params: Params, data: &[Vec<u64>], shared: bool, ops: &[Op], seed: u64) -> Run {
    run_with(params, data, shared, Holding::Shared, ops, seed)
}

/// [`run`] with the load told who holds the data; with `Holding::Server` (and `shared`
/// false) the client passes no share at all.
fn run_with(
    params: Params,
    data: &[Vec<u64>],
    shared: bool,
    holding: Holding,
    ops: &[Op],
    seed: u64,
) -> Run {
    let bits = params.payload_bits();
    let packed = pack(data, bits);
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let mask: Vec<u8> = if shared {
        let mut m: Vec<u8> = (0..packed.len()).map(|_| rng.random()).collect();
        // Keep the padding bits of each payload zero.
        let db = bits.div_ceil(8);
        if !bits.is_multiple_of(8) {
            for c in m.chunks_mut(db) {
                c[db - 1] &= (1u8 << (bits % 8)) - 1;
            }
        }
        m
    } else {
        vec![0u8; packed.len()]
    };
    let server_share: Vec<u8> = packed.iter().zip(&mask).map(|(x, y)| x ^ y).collect();
    // With `Holding::Server` the client passes nothing.
    let mask = if holding == Holding::Server {
        Vec::new()
    } else {
        mask
    };
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let n_ops = ops.len();
    let (server, client) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            let load_delta = random_delta(&mut rng);
            let mut send =
                softspoken_sender_setup(&mut s, ChunkBits::default(), load_delta, &mut rng)
                    .unwrap();
            let mut recv =
                softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let state = load_server(
                &mut s,
                &params,
                &server_share,
                holding,
                &mut ot,
                &mut send,
                &mut recv,
                &mut rng,
            )
            .unwrap();
            let t = s.take_transcript().unwrap();
            let mut server = Server::new(state, ot, insecure_rng_for_tests(seed + 2)).unwrap();
            serve_ops(&mut server, &mut s, n_ops);
            (server, t)
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 3);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let mut recv =
                softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let mut send = softspoken_sender_setup(
                &mut s,
                ChunkBits::default(),
                random_delta(&mut rng),
                &mut rng,
            )
            .unwrap();
            s.record_transcript(true);
            let state = load_client(
                &mut s, &params, &mask, holding, &mut ot, &mut send, &mut recv, &mut rng,
            )
            .unwrap();
            let t = s.take_transcript().unwrap();
            let mut client = Client::new(state, ot, insecure_rng_for_tests(seed + 4)).unwrap();
            let results = client_ops(&mut client, &mut s, ops);
            (client, results, t)
        },
    );
    let (server, t0) = server;
    let (client, results, t1) = client;
    let (opened, base) = open_both(&params, &server, &client);
    Run {
        results,
        opened,
        base,
        load: (t0, t1),
    }
}

#[test]
fn the_sorted_load_places_every_item_and_accesses_read_it() {
    let mut rng = ChaCha12Rng::seed_from_u64(71);
    for (items, bits, bucket, trees, shared) in [
        (1u64, 5usize, 2usize, 1usize, false),
        (41, 7, 8, 2, true),
        (300, 70, 12, 3, false),
        (1000, 13, 16, 3, true),
    ] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        // Check the state right after the load.
        let fresh = run(params, &data, shared, &[], 80 + items);
        check_invariants(&params, &fresh.opened, &fresh.base);
        for (v, want) in data.iter().enumerate() {
            let (_, payload) = fresh.opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want, "item {v} of {params:?}");
        }
        // Then accesses.
        let mut array = data.clone();
        let mut ops = Vec::new();
        let mut expect = Vec::new();
        for _ in 0..30 {
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
        let out = run(params, &data, shared, &ops, 90 + items);
        assert_eq!(out.results, expect, "{params:?}");
        check_invariants(&params, &out.opened, &out.base);
    }
}

#[test]
fn a_load_that_splits_its_bins_places_every_item_and_reads_it() {
    // 2^16 items in buckets of 32: the data tree's bins are split between two levels.
    let params = Params::new(1 << 16, 8, 32, 2).unwrap();
    assert!(sort_placement(&params.tree(0)).edge.is_some());
    let mut rng = ChaCha12Rng::seed_from_u64(72);
    let data: Vec<Vec<u64>> = (0..1 << 16).map(|_| random_words(&mut rng, 8)).collect();
    let mut array = data.clone();
    let (mut ops, mut expect) = (Vec::new(), Vec::new());
    for _ in 0..6 {
        let v = rng.random_range(0..1u64 << 16);
        expect.push(array[v as usize].clone());
        let new = random_words(&mut rng, 8);
        array[v as usize] = new.clone();
        ops.push((v, Some(new)));
    }
    let out = run(params, &data, true, &ops, 73);
    assert_eq!(out.results, expect);
    check_invariants(&params, &out.opened, &out.base);
    let mut got = vec![None; 1 << 16];
    for (slot, payload) in out.opened[0].iter().filter(|(s, _)| s.valid) {
        assert!(got[slot.addr as usize].replace(payload.clone()).is_none());
    }
    for (v, want) in array.iter().enumerate() {
        assert_eq!(got[v].as_ref(), Some(want), "item {v}");
    }
}

#[test]
fn the_loads_transcript_does_not_depend_on_the_data() {
    let params = Params::new(300, 16, 12, 3).unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    let a: Vec<Vec<u64>> = (0..300).map(|_| random_words(&mut rng, 16)).collect();
    let b: Vec<Vec<u64>> = (0..300).map(|_| vec![0]).collect();
    let ra = run(params, &a, false, &[], 1);
    let rb = run(params, &b, true, &[], 2);
    assert_eq!(ra.load.0, rb.load.0, "server");
    assert_eq!(ra.load.1, rb.load.1, "client");
}

#[test]
fn data_the_server_holds_is_gathered_once_and_read_back() {
    let mut rng = ChaCha12Rng::seed_from_u64(91);
    for (items, bits, bucket, trees) in [
        (1u64, 5usize, 2usize, 1usize),
        (300, 70, 12, 3),
        (1000, 13, 16, 3),
    ] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let reads: Vec<Op> = (0..6).map(|_| (rng.random_range(0..items), None)).collect();
        let held = run_with(params, &data, false, Holding::Server, &reads, 40 + items);
        check_invariants(&params, &held.opened, &held.base);
        for (v, want) in data.iter().enumerate() {
            let (_, payload) = held.opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want, "item {v} of {items}");
        }
        for ((v, _), got) in reads.iter().zip(&held.results) {
            assert_eq!(got, &data[*v as usize], "read of {v}");
        }
        // One gather fewer than shared data: fewer bytes each way.
        let shared = run(params, &data, false, &[], 40 + items);
        let bytes = |t: &Transcript| t.events.iter().map(|e| e.bytes).sum::<u64>();
        assert!(bytes(&held.load.0) < bytes(&shared.load.0), "{items} items");
        assert!(bytes(&held.load.1) < bytes(&shared.load.1), "{items} items");
    }
}

#[test]
fn a_server_held_loads_transcript_does_not_depend_on_the_data() {
    let params = Params::new(300, 16, 12, 3).unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(6);
    let a: Vec<Vec<u64>> = (0..300).map(|_| random_words(&mut rng, 16)).collect();
    let b: Vec<Vec<u64>> = (0..300).map(|_| vec![0]).collect();
    let ra = run_with(params, &a, false, Holding::Server, &[], 1);
    let rb = run_with(params, &b, false, Holding::Server, &[], 2);
    assert_eq!(ra.load.0, rb.load.0, "server");
    assert_eq!(ra.load.1, rb.load.1, "client");
}
