//! Buckets never written: nonce 0, a zero pad and a zero ciphertext, read as the empty bucket.
//! The load writes the placement levels only; accesses still read the array, and every bucket
//! written carries a nonzero nonce.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Op, check_invariants, client_ops, load3, open_both, random_words, run2, serve_ops};
use doram_gkk12::Params;
use doram_gkk12::circuits::SlotCodec;
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::load::{self, placement};
use doram_gkk12::storage::{EncTree, PadKey};
use doram_gkk12::testkit::open_insecurely;
use doram_gkk12::tree::Slot;
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use doram_twopc::softspoken::{SoftSpokenReceiver, SoftSpokenSender};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

type Loaded = (
    Server<SoftSpokenSender>,
    Client<SoftSpokenReceiver>,
    Vec<Vec<u64>>,
);

/// Loads `data` with the three-party load, then runs `ops`; returns both parties and what the
/// ops read.
fn load_and_run(params: Params, data: &[Vec<u64>], ops: &[Op], seed: u64) -> Loaded {
    let (s, c, h, _) = load3(params, data, seed, |s| {
        load::help(s, &params, &mut insecure_rng_for_tests(seed + 1))
    });
    h.unwrap();
    let (server_load, client_load) = (s.unwrap(), c.unwrap());
    let n_ops = ops.len();
    let (server, (client, results)) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let delta = random_delta(&mut rng);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            let state = server_load.finish(&mut s, &mut ot, &mut rng).unwrap();
            let mut server = Server::new(state, ot, insecure_rng_for_tests(seed + 3)).unwrap();
            serve_ops(&mut server, &mut s, n_ops);
            server
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 4);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let state = client_load.finish(&mut s, &mut ot).unwrap();
            let mut client = Client::new(state, ot, insecure_rng_for_tests(seed + 5)).unwrap();
            let results = client_ops(&mut client, &mut s, ops);
            (client, results)
        },
    );
    (server, client, results)
}

fn bucket_bytes(params: &Params, i: usize) -> usize {
    (params.tree(i).bucket * SlotCodec::new(params, i).slot_bits()).div_ceil(8)
}

#[test]
fn an_unwritten_bucket_decrypts_to_the_empty_bucket() {
    let params = Params::new(300, 70, 6, 3).unwrap();
    let key = PadKey::new([7; 16]);
    let trees: Vec<EncTree> = (0..params.trees())
        .map(|i| {
            let g = params.tree(i);
            EncTree::new(
                g.buckets(),
                g.bucket * SlotCodec::new(&params, i).slot_bits(),
            )
        })
        .collect();
    for (i, t) in trees.iter().enumerate() {
        // Nothing but the nonces is allocated; every bucket reads as zeros under nonce 0.
        assert_eq!(t.allocated_bytes(), 0);
        for b in 0..t.buckets() {
            assert_eq!(t.nonce(b), 0);
            assert!(t.bucket(b).iter().all(|&x| x == 0));
        }
        let mut pad = Vec::new();
        key.pad_bytes(i, 0, t.bucket_bits(), &mut pad);
        assert_eq!(
            pad,
            vec![0; bucket_bytes(&params, i)],
            "tree {i}: pad of nonce 0"
        );
        // A written nonce has a pad that is not zero.
        pad.clear();
        key.pad_bytes(i, 1, t.bucket_bits(), &mut pad);
        assert!(pad.iter().any(|&x| x != 0));
    }
    for (i, slots) in open_insecurely(&params, &trees, &key).iter().enumerate() {
        assert_eq!(slots.len(), params.tree(i).slots());
        for (slot, payload) in slots {
            assert_eq!(*slot, Slot::default(), "tree {i}");
            assert!(payload.iter().all(|&w| w == 0), "tree {i}");
        }
    }
}

#[test]
fn storing_allocates_one_chunk_and_keeps_the_others_zero() {
    let bits = 8 * 1000 + 3;
    let mut t = EncTree::new(200_000, bits);
    let bytes = bits.div_ceil(8);
    let mut x = vec![0xa5u8; bytes];
    x[bytes - 1] = 0x05;
    t.store(150_000, 9, &x);
    assert_eq!(t.nonce(150_000), 9);
    assert_eq!(t.bucket(150_000), &x[..]);
    assert!(t.bit(150_000, 0) && !t.bit(150_000, 1));
    // One chunk of at most CHUNK_BYTES, not the tree's 200 MB.
    assert!(t.allocated_bytes() <= doram_gkk12::storage::CHUNK_BYTES);
    assert!(t.allocated_bytes() >= bytes);
    for b in [0, 149_999, 150_001, 199_999] {
        assert_eq!(t.nonce(b), 0);
        assert!(t.bucket(b).iter().all(|&v| v == 0), "bucket {b}");
    }
}

#[test]
#[should_panic(expected = "nonce 0")]
fn no_bucket_is_written_under_nonce_0() {
    let mut t = EncTree::new(7, 12);
    t.store(3, 0, &[1, 0]);
}

#[test]
fn after_the_load_only_the_placement_levels_are_written_and_accesses_read_the_array() {
    let mut rng = ChaCha12Rng::seed_from_u64(77);
    for (items, bits, bucket, trees, accesses) in [
        (1, 5, 2, 1, 3),
        (37, 9, 4, 2, 20),
        (333, 71, 6, 3, 25),
        (1023, 13, 8, 3, 12),
    ] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        // Right after the load: the placement level written under nonces 1, 2, …, in order;
        // every other bucket never written.
        let (server, client, _) = load_and_run(params, &data, &[], 500 + items);
        let mut next = 1;
        for (i, t) in server.trees().iter().enumerate() {
            let pl = placement(&params.tree(i));
            let level = pl.first_bucket..pl.first_bucket + pl.buckets;
            for b in 0..t.buckets() {
                if level.contains(&b) {
                    assert_eq!(t.nonce(b), next, "{params:?}: tree {i} bucket {b}");
                    next += 1;
                } else {
                    assert_eq!(t.nonce(b), 0, "{params:?}: tree {i} bucket {b}");
                    assert!(t.bucket(b).iter().all(|&x| x == 0));
                }
            }
            assert!(
                t.allocated_bytes()
                    <= pl.buckets * bucket_bytes(&params, i) + doram_gkk12::storage::CHUNK_BYTES,
                "{params:?}: tree {i}"
            );
        }
        let (opened, base) = open_both(&params, &server, &client);
        check_invariants(&params, &opened, &base);
        for (v, want) in data.iter().enumerate() {
            let (_, payload) = opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want, "{params:?}: item {v}");
        }
        // Accesses, reads and writes, then the state again.
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
        let (server, client, results) = load_and_run(params, &data, &ops, 600 + items);
        assert_eq!(results, expect, "{params:?}");
        let (opened, base) = open_both(&params, &server, &client);
        check_invariants(&params, &opened, &base);
        // Every bucket holding something was written under a nonzero nonce, each nonce once.
        let mut seen = std::collections::HashSet::new();
        for (i, t) in server.trees().iter().enumerate() {
            for b in 0..t.buckets() {
                let n = t.nonce(b);
                if n == 0 {
                    assert!(t.bucket(b).iter().all(|&x| x == 0), "tree {i} bucket {b}");
                    let g = params.tree(i);
                    assert!(
                        opened[i][b * g.bucket..(b + 1) * g.bucket]
                            .iter()
                            .all(|(s, _)| !s.valid)
                    );
                } else {
                    assert!(seen.insert((i, n)), "tree {i}: nonce {n} twice");
                }
            }
        }
    }
}

/// The load's bytes per sender: server, client, helper.
fn sent(t: &[Transcript; 3]) -> [u64; 3] {
    let mut out = [0; 3];
    for (k, tr) in t.iter().enumerate() {
        out[k] = tr
            .events
            .iter()
            .filter(|e| e.from.index() == k)
            .map(|e| e.bytes)
            .sum();
    }
    out
}

fn shapes(t: &[Transcript; 3]) -> Vec<Vec<(usize, usize, u64)>> {
    t.iter()
        .map(|tr| {
            tr.events
                .iter()
                .map(|e| (e.from.index(), e.to.index(), e.bytes))
                .collect()
        })
        .collect()
}

#[test]
fn the_client_sends_the_placement_levels_only_whatever_the_data() {
    for (items, bits, bucket, trees) in [(200, 33, 6, 2), (1500, 64, 10, 3)] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let mut rng = ChaCha12Rng::seed_from_u64(items);
        let a: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let b: Vec<Vec<u64>> = (0..items).map(|_| vec![0]).collect();
        let run = |data: &[Vec<u64>], seed: u64| {
            let (s, c, h, t) = load3(params, data, seed, |s| {
                load::help(s, &params, &mut insecure_rng_for_tests(seed))
            });
            s.unwrap();
            c.unwrap();
            h.unwrap();
            t
        };
        let (ta, tb) = (run(&a, 11), run(&b, 12));
        assert_eq!(shapes(&ta), shapes(&tb), "{params:?}");
        let level: u64 = (0..params.trees())
            .map(|i| (placement(&params.tree(i)).buckets * bucket_bytes(&params, i)) as u64)
            .sum();
        let all: u64 = (0..params.trees())
            .map(|i| (params.tree(i).buckets() * bucket_bytes(&params, i)) as u64)
            .sum();
        let s = sent(&ta);
        assert_eq!(
            s[1], level,
            "{params:?}: the client sends exactly the placement levels"
        );
        assert!(level < all, "{params:?}");
        // The server's bytes: its masked array, ⌈d/8⌉ a slot of the data tree's level.
        let slots = placement(&params.tree(0)).slots() as u64;
        assert_eq!(s[0], slots * bits.div_ceil(8) as u64);
        assert_eq!(load::memory(&params).placement, level);
    }
}
