//! A bucket overflow in the two-party access: both parties learn it in the same access, finish
//! that access's steps in step with each other, fail with the same error, and refuse every
//! later access; the accesses before it read what was written.
#![allow(clippy::unwrap_used)]

mod common;

use common::{bits_of, random_words, run2, words_of};
use doram_gkk12::driver::{AccessLabels, Client, Gkk12Error, Server};
use doram_gkk12::testkit::deal_insecurely;
use doram_gkk12::{Params, PlainTreeOram};
use doram_net::Session;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// What one party saw: the accesses that succeeded (the client's with their results), then
/// the first error and the error of the access after it.
struct Seen {
    results: Vec<Vec<u64>>,
    failed: Option<(usize, String, String)>,
}

fn failure(k: usize, first: &Gkk12Error, next: &Gkk12Error) -> Option<(usize, String, String)> {
    Some((k, format!("{first:?}"), format!("{next:?}")))
}

#[test]
fn an_overflow_fails_both_parties_at_the_same_access() {
    // Buckets of two slots overflow within a few hundred accesses; several trees, so that position-map
    // trees can be the ones that overflow, and odd sizes.
    let mut trees_seen = Vec::new();
    for (seed, items, bits, trees) in [(1u64, 37, 9, 2), (2, 300, 13, 3), (3, 61, 5, 1)] {
        let params = Params::new(items, bits, 2, trees).unwrap();
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let data: Vec<Vec<u64>> = (0..items).map(|_| random_words(&mut rng, bits)).collect();
        let plain = PlainTreeOram::load(params, |v| data[v as usize].clone(), &mut rng).unwrap();
        let delta = random_delta(&mut insecure_rng_for_tests(seed));
        let (server_state, client_state) = deal_insecurely(&plain, delta, &mut rng);
        let mut array = data.clone();
        let mut ops = Vec::new();
        for _ in 0..400 {
            let v = rng.random_range(0..items);
            let write = rng.random_bool(0.5).then(|| random_words(&mut rng, bits));
            ops.push((v, write));
        }
        let n = ops.len();
        let client_ops = ops.clone();
        let abits = params.address_bits();
        let (server, client) = run2(
            move |mut s: Session| {
                let mut rng = insecure_rng_for_tests(seed + 10);
                let ot =
                    softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
                let mut server =
                    Server::new(server_state, ot, insecure_rng_for_tests(seed + 11)).unwrap();
                let mut seen = Seen {
                    results: Vec::new(),
                    failed: None,
                };
                for k in 0..n {
                    let inputs = server.peer_input(&mut s, abits + 1 + bits).unwrap();
                    let labels = AccessLabels {
                        addr: inputs[..abits].to_vec(),
                        write: inputs[abits],
                        data: inputs[abits + 1..].to_vec(),
                    };
                    match server.access(&mut s, &labels) {
                        Ok(out) => server.reveal_to_client(&mut s, &out).unwrap(),
                        Err(e) => {
                            let next = server.access(&mut s, &labels).unwrap_err();
                            seen.failed = failure(k, &e, &next);
                            break;
                        }
                    }
                }
                seen
            },
            move |mut s: Session| {
                let mut rng = insecure_rng_for_tests(seed + 12);
                let ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
                let mut client =
                    Client::new(client_state, ot, insecure_rng_for_tests(seed + 13)).unwrap();
                let mut seen = Seen {
                    results: Vec::new(),
                    failed: None,
                };
                for (k, (v, write)) in client_ops.iter().enumerate() {
                    let mut input: Vec<bool> = (0..abits).map(|j| (v >> j) & 1 == 1).collect();
                    input.push(write.is_some());
                    let zeros = vec![0; bits.div_ceil(64)];
                    input.extend(bits_of(write.as_ref().unwrap_or(&zeros), bits));
                    let labels = client.input(&mut s, &input).unwrap();
                    let labels = AccessLabels {
                        addr: labels[..abits].to_vec(),
                        write: labels[abits],
                        data: labels[abits + 1..].to_vec(),
                    };
                    match client.access(&mut s, &labels) {
                        Ok(out) => seen
                            .results
                            .push(words_of(&client.reveal(&mut s, &out).unwrap())),
                        Err(e) => {
                            let next = client.access(&mut s, &labels).unwrap_err();
                            seen.failed = failure(k, &e, &next);
                            break;
                        }
                    }
                }
                seen
            },
        );
        let (k, err, next) = client
            .failed
            .clone()
            .expect("buckets of two slots overflow");
        assert_eq!(server.failed, client.failed, "{params:?}");
        assert!(err.starts_with("Overflow"), "{err}");
        assert_eq!(next, "Poisoned");
        trees_seen.push(err);
        // Every access before the overflow read the array.
        assert_eq!(client.results.len(), k);
        for (got, (v, write)) in client.results.iter().zip(&ops) {
            assert_eq!(got, &array[*v as usize], "{params:?}");
            if let Some(w) = write {
                array[*v as usize] = w.clone();
            }
        }
    }
    assert!(trees_seen.len() == 3, "{trees_seen:?}");
}
