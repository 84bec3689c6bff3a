//! The two-party access protocol against a plain array, its stored state against the tree
//! ORAM's invariants, and its transcript's shape against the data.
#![allow(clippy::unwrap_used)]

mod common;

use common::{random_words, run2};
use doram_gkk12::driver::{AccessLabels, Client, Server};
use doram_gkk12::plain::words_for;
use doram_gkk12::testkit::{deal_insecurely, open_insecurely};
use doram_gkk12::tree::path;
use doram_gkk12::{Params, PlainTreeOram};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::softspoken::ChunkBits;
use doram_twopc::{insecure_rng_for_tests, os_rng};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// One access as the test drives it: address, and the data to write (None: read).
type Op = (u64, Option<Vec<u64>>);

fn bits_of(words: &[u64], n: usize) -> Vec<bool> {
    (0..n)
        .map(|k| (words[k / 64] >> (k % 64)) & 1 == 1)
        .collect()
}

fn words_of(bits: &[bool]) -> Vec<u64> {
    bits.chunks(64)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |a, (k, &b)| a | (u64::from(b) << k))
        })
        .collect()
}

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
    let bits = params.payload_bits();
    let abits = params.address_bits();
    let n_ops = ops.len();
    let (server, client) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            s.record_transcript(true);
            let mut server =
                Server::new(server_state, ot, insecure_rng_for_tests(seed + 2)).unwrap();
            for _ in 0..n_ops {
                let inputs = server.peer_input(&mut s, abits + 1 + bits).unwrap();
                let labels = AccessLabels {
                    addr: inputs[..abits].to_vec(),
                    write: inputs[abits],
                    data: inputs[abits + 1..].to_vec(),
                };
                let out = server.access(&mut s, &labels).unwrap();
                server.reveal_to_client(&mut s, &out).unwrap();
            }
            (server, s.take_transcript().unwrap())
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 3);
            let ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            s.record_transcript(true);
            let mut client =
                Client::new(client_state, ot, insecure_rng_for_tests(seed + 4)).unwrap();
            let mut results = Vec::new();
            for (v, write) in ops {
                let mut input: Vec<bool> = (0..abits).map(|k| (v >> k) & 1 == 1).collect();
                input.push(write.is_some());
                let zeros = vec![0; words_for(bits)];
                input.extend(bits_of(write.as_ref().unwrap_or(&zeros), bits));
                let labels = client.input(&mut s, &input).unwrap();
                let labels = AccessLabels {
                    addr: labels[..abits].to_vec(),
                    write: labels[abits],
                    data: labels[abits + 1..].to_vec(),
                };
                let out = client.access(&mut s, &labels).unwrap();
                results.push(words_of(&client.reveal(&mut s, &out).unwrap()));
            }
            (client, results, s.take_transcript().unwrap())
        },
    );
    let (server, t0) = server;
    let (client, results, t1) = client;
    let opened = open_insecurely(&params, server.trees(), client.key_insecurely());
    let w = params.base_entry_bits() as usize;
    let base_bits: Vec<bool> = server
        .base_labels()
        .iter()
        .zip(client.base_labels())
        .map(|(&z, &a)| (z ^ a) & 1 == 1)
        .collect();
    let base = base_bits
        .chunks(w.max(1))
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |a, (k, &b)| a | (u64::from(b) << k))
        })
        .collect::<Vec<u64>>();
    let base = if w == 0 {
        vec![0; params.base_entries() as usize]
    } else {
        base
    };
    Run {
        results,
        opened,
        base,
        transcripts: (t0, t1),
    }
}

/// Every item of every tree is on the path to its leaf exactly once; the position maps and
/// the base map hold the items' leaves.
fn check_invariants(
    params: &Params,
    opened: &[Vec<(doram_gkk12::tree::Slot, Vec<u64>)>],
    base: &[u64],
) {
    for (i, slots) in opened.iter().enumerate() {
        let g = params.tree(i);
        let mut leaf_of = vec![None; g.items as usize];
        for (s, (slot, _)) in slots.iter().enumerate() {
            if !slot.valid {
                continue;
            }
            assert!(
                leaf_of[slot.addr as usize].is_none(),
                "tree {i}: item {} twice",
                slot.addr
            );
            leaf_of[slot.addr as usize] = Some(slot.leaf);
            assert!(
                path(g.height, slot.leaf).any(|b| b == s / g.bucket),
                "tree {i}: off path"
            );
        }
        let leaves: Vec<u64> = leaf_of
            .into_iter()
            .map(|l| l.expect("an item is missing"))
            .collect();
        if i + 1 < params.trees() {
            for (addr, &leaf) in leaves.iter().enumerate() {
                let holder = opened[i + 1]
                    .iter()
                    .find(|(s, _)| s.valid && s.addr == (addr >> 4) as u64)
                    .unwrap();
                assert_eq!(
                    holder.1[addr & 15],
                    leaf,
                    "tree {} entry for item {addr}",
                    i + 1
                );
            }
        } else {
            assert_eq!(base, &leaves[..], "base map");
        }
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
