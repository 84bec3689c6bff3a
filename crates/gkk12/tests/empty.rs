//! An ORAM started empty by the two parties alone (`doram_gkk12::empty`): random accesses
//! against a plain array of zeros, the stored state against the tree ORAM's invariants for the
//! blocks that exist, the leaves a never-written position-map block reads, and the
//! transcript's shape against addresses, data, operations and whether a block existed.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Op, Opened, client_ops, open_both, random_words, run2, serve_ops};
use doram_gkk12::Params;
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::empty::{client_state, server_state};
use doram_gkk12::tree::path;
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

struct Run {
    results: Vec<Vec<u64>>,
    opened: Opened,
    base: Vec<u64>,
    transcripts: (Transcript, Transcript),
}

/// Starts an empty ORAM between a server and a client and runs `ops` (the client supplies
/// each access and learns its result).
fn run(params: Params, ops: &[Op], seed: u64) -> Run {
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let n_ops = ops.len();
    let (server, client) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            s.record_transcript(true);
            let state = server_state(&mut s, &params, &mut ot, &mut rng).unwrap();
            let mut server = Server::new(state, ot, insecure_rng_for_tests(seed + 2)).unwrap();
            serve_ops(&mut server, &mut s, n_ops);
            (server, s.take_transcript().unwrap())
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 3);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let state = client_state(&mut s, &params, &mut ot, &mut rng).unwrap();
            let mut client = Client::new(state, ot, insecure_rng_for_tests(seed + 4)).unwrap();
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

/// Every item that exists is on the path to its leaf, once; the position-map block of every
/// existing item exists and holds its leaf (the base map, for the last tree). Returns the
/// addresses present in the data tree.
fn check_sparse_invariants(params: &Params, opened: &Opened, base: &[u64]) -> Vec<u64> {
    let mut leaves = Vec::new();
    for (i, slots) in opened.iter().enumerate() {
        let g = params.tree(i);
        let mut leaf_of = vec![None; g.items as usize];
        for (s, (slot, _)) in slots.iter().enumerate() {
            if !slot.valid {
                continue;
            }
            assert!(leaf_of[slot.addr as usize].is_none(), "tree {i}: twice");
            leaf_of[slot.addr as usize] = Some(slot.leaf);
            assert!(
                path(g.height, slot.leaf).any(|b| b == s / g.bucket),
                "off path"
            );
        }
        for (addr, leaf) in leaf_of.iter().enumerate() {
            let Some(leaf) = *leaf else { continue };
            if i + 1 < params.trees() {
                let holder = opened[i + 1]
                    .iter()
                    .find(|(s, _)| s.valid && s.addr == (addr >> 4) as u64)
                    .expect("an existing item's position-map block is missing");
                assert_eq!(holder.1[addr & 15], leaf, "tree {} entry {addr}", i + 1);
            } else {
                assert_eq!(base[addr], leaf, "base map entry {addr}");
            }
        }
        leaves.push(leaf_of);
    }
    leaves[0]
        .iter()
        .enumerate()
        .filter_map(|(a, l)| l.map(|_| a as u64))
        .collect()
}

#[test]
fn an_empty_oram_reads_zero_until_written_and_stays_sound() {
    let mut rng = ChaCha12Rng::seed_from_u64(31);
    for (items, bits, bucket, trees, accesses) in [
        (1, 5, 2, 1, 5),
        (41, 7, 4, 2, 70),
        (300, 70, 6, 3, 60),
        (1000, 13, 8, 3, 40),
    ] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let zero = vec![0u64; bits.div_ceil(64)];
        let mut array = vec![zero.clone(); items as usize];
        let mut touched = std::collections::BTreeSet::new();
        let mut ops = Vec::new();
        let mut expect = Vec::new();
        for _ in 0..accesses {
            // Half the accesses go to a few addresses, so that items are found again.
            let v = if rng.random_bool(0.5) {
                rng.random_range(0..items.min(5))
            } else {
                rng.random_range(0..items)
            };
            touched.insert(v);
            expect.push(array[v as usize].clone());
            if rng.random_bool(0.5) {
                let new = random_words(&mut rng, bits);
                array[v as usize] = new.clone();
                ops.push((v, Some(new)));
            } else {
                ops.push((v, None));
            }
        }
        let out = run(params, &ops, 100 + items);
        assert_eq!(out.results, expect, "{params:?}");
        let present = check_sparse_invariants(&params, &out.opened, &out.base);
        // Exactly the addresses accessed exist, each holding the array's word.
        assert_eq!(
            present,
            touched.iter().copied().collect::<Vec<_>>(),
            "{params:?}"
        );
        for &v in &present {
            let (_, payload) = out.opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v)
                .unwrap();
            assert_eq!(payload, &array[v as usize], "item {v}");
        }
    }
}

#[test]
fn a_never_written_position_map_block_reads_fresh_random_leaves() {
    // One access to address 0 creates position-map block 0: its entry 0 is the item's fresh
    // leaf; entries 1..16 come from the sparse lookup's default, random bits neither party
    // knows. Without the default they would all be 0.
    let params = Params::new(4096, 8, 6, 2).unwrap();
    let h = params.tree(0).height;
    let mut entries = Vec::new();
    for seed in 0..6 {
        let out = run(params, &[(0, None)], 900 + 10 * seed);
        let (_, block) = out.opened[1]
            .iter()
            .find(|(s, _)| s.valid && s.addr == 0)
            .unwrap();
        entries.extend_from_slice(&block[1..16]);
    }
    assert!(entries.iter().all(|&l| l < 1 << h));
    let zeros = entries.iter().filter(|&&l| l == 0).count();
    let distinct: std::collections::BTreeSet<_> = entries.iter().collect();
    // 90 draws from 2^12 leaves: a zero is already unlikely, many repeats impossible.
    assert!(zeros <= 2, "{zeros} zero leaves of 90");
    assert!(distinct.len() >= 80, "{} distinct of 90", distinct.len());
    // Every bit position takes both values.
    for k in 0..h {
        let ones = entries.iter().filter(|&&l| (l >> k) & 1 == 1).count();
        assert!((20..=70).contains(&ones), "bit {k}: {ones} of 90");
    }
}

#[test]
fn the_transcript_does_not_depend_on_whether_blocks_exist() {
    let params = Params::new(300, 16, 6, 3).unwrap();
    // Fresh addresses only, written; against one address read again and again.
    let ops_a: Vec<Op> = (0..8).map(|k| (k * 37 % 300, Some(vec![k + 1]))).collect();
    let ops_b: Vec<Op> = (0..8).map(|_| (5, None)).collect();
    let ra = run(params, &ops_a, 1);
    let rb = run(params, &ops_b, 2);
    assert_eq!(ra.transcripts.0, rb.transcripts.0, "server");
    assert_eq!(ra.transcripts.1, rb.transcripts.1, "client");
}
