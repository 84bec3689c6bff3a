//! The secure load: three parties build the ORAM from the server's array; the result holds
//! every item once on its path, the position maps and base map agree, accesses after it return
//! the array, and no message depends on the data.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Op, Opened, check_invariants, client_ops, load3, open_both, random_words, run2, serve_ops,
};
use doram_gkk12::Params;
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::load::{self, placement};
use doram_net::Session;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Loads `data` securely, then runs `ops`; returns what they read and the opened state.
fn load_and_run(
    params: Params,
    data: &[Vec<u64>],
    ops: &[Op],
    seed: u64,
) -> (Vec<Vec<u64>>, Opened, Vec<u64>) {
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
    let (opened, base) = open_both(&params, &server, &client);
    (results, opened, base)
}

#[test]
fn the_load_places_every_item_and_accesses_read_the_array() {
    let mut rng = ChaCha12Rng::seed_from_u64(31);
    for (items, bits, bucket, trees, accesses) in [
        (1, 5, 2, 1, 4),
        (40, 7, 4, 2, 30),
        (300, 70, 6, 3, 30),
        (1000, 13, 8, 2, 10),
    ] {
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
        // The state right after the load: no access yet.
        let (_, opened, base) = load_and_run(params, &data, &[], 40 + items);
        check_invariants(&params, &opened, &base);
        for (i, tree) in opened.iter().enumerate() {
            let pl = placement(&params.tree(i));
            let g = params.tree(i);
            for (s, (slot, _)) in tree.iter().enumerate() {
                let b = s / g.bucket;
                let on_level = (pl.first_bucket..pl.first_bucket + pl.buckets).contains(&b);
                assert!(
                    !slot.valid || on_level,
                    "{params:?}: tree {i} item off its level"
                );
            }
        }
        for (v, want) in data.iter().enumerate() {
            let (_, payload) = opened[0]
                .iter()
                .find(|(s, _)| s.valid && s.addr == v as u64)
                .unwrap();
            assert_eq!(payload, want, "{params:?}: item {v}");
        }
        // Accesses on the loaded state.
        let (results, opened, base) = load_and_run(params, &data, &ops, 50 + items);
        assert_eq!(results, expect, "{params:?}");
        check_invariants(&params, &opened, &base);
    }
}

#[test]
fn load_messages_do_not_depend_on_the_data() {
    let params = Params::new(200, 33, 6, 2).unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    let a: Vec<Vec<u64>> = (0..200).map(|_| random_words(&mut rng, 33)).collect();
    let b: Vec<Vec<u64>> = (0..200).map(|_| vec![0]).collect();
    let shapes = |data: &[Vec<u64>], seed: u64| {
        let (s, c, h, t) = load3(params, data, seed, |s| {
            load::help(s, &params, &mut insecure_rng_for_tests(seed))
        });
        s.unwrap();
        c.unwrap();
        h.unwrap();
        t
    };
    assert_eq!(shapes(&a, 1), shapes(&b, 2));
}

#[test]
fn the_client_refuses_a_helper_map_that_is_not_a_permutation() {
    let params = Params::new(50, 8, 4, 1).unwrap();
    let data: Vec<Vec<u64>> = (0..50).map(|v| vec![v]).collect();
    let slots = placement(&params.tree(0)).slots();
    let (_, c, _, _) = load3(params, &data, 3, |s| {
        s.send_bytes(load::SERVER, &[0u8; 64])?;
        // Slot 0 twice.
        let l2: Vec<u8> = (0..slots as u32)
            .map(|x| x.max(1) - 1)
            .flat_map(u32::to_le_bytes)
            .collect();
        s.send_bytes(load::CLIENT, &l2)?;
        Ok(())
    });
    let err = c.unwrap_err();
    assert!(err.to_string().contains("permutation"), "{err}");
}

#[test]
fn run_threads_takes_three_sessions_and_counts_each_party() {
    let params = Params::new(40, 16, 4, 2).unwrap();
    let rng = |p: doram_core::PartyId| insecure_rng_for_tests(p.index() as u64);
    let two = doram_net::LocalMesh::new(2).build();
    assert!(load::run_threads(two, &params, |v| vec![v], rng).is_err());
    let three = doram_net::LocalMesh::new(3).build();
    let (_, _, sent) = load::run_threads(three, &params, |v| vec![v], rng).unwrap();
    // The helper deals, the server sends its masked array, the client the placement levels
    // (whole slots: more than the server's payloads).
    assert!(sent.iter().all(|&b| b > 0), "{sent:?}");
    assert!(sent[1] > sent[0], "{sent:?}");
}
