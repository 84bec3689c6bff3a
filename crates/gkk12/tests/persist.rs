//! Saving and resuming an ORAM (`doram_gkk12::persist`): accesses in three runs, each over a
//! fresh session and fresh OT extensions, the state saved and read back between them, against
//! a plain array; and a damaged, truncated or foreign state file refused with an error.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Op, client_ops, random_words, run2, serve_ops};
use doram_gkk12::Params;
use doram_gkk12::driver::{Client, Gkk12Error, Server};
use doram_gkk12::empty::{client_state, server_state};
use doram_gkk12::persist::{StateError, read_client, read_server};
use doram_net::Session;
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// The server's and the client's state files.
type Files = (Vec<u8>, Vec<u8>);

/// One run: the server and client resumed from `files` (or started empty), `ops` applied,
/// the states saved again. Returns the results and the new files.
fn run_once(params: Params, files: Option<Files>, ops: &[Op], seed: u64) -> (Vec<Vec<u64>>, Files) {
    let n_ops = ops.len();
    let (sf, cf) = match files {
        Some((s, c)) => (Some(s), Some(c)),
        None => (None, None),
    };
    let (server_file, (results, client_file)) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed);
            let mut server = match sf {
                Some(f) => {
                    let saved = read_server(&mut &f[..]).unwrap();
                    let ot = softspoken_sender_setup(
                        &mut s,
                        ChunkBits::default(),
                        saved.delta(),
                        &mut rng,
                    )
                    .unwrap();
                    Server::resume(saved, ot, insecure_rng_for_tests(seed + 1)).unwrap()
                }
                None => {
                    let delta = random_delta(&mut rng);
                    let mut ot =
                        softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng)
                            .unwrap();
                    let state = server_state(&mut s, &params, &mut ot, &mut rng).unwrap();
                    Server::new(state, ot, insecure_rng_for_tests(seed + 1)).unwrap()
                }
            };
            serve_ops(&mut server, &mut s, n_ops);
            let mut out = Vec::new();
            server.save(&mut out).unwrap();
            out
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let mut client = match cf {
                Some(f) => {
                    let saved = read_client(&mut &f[..]).unwrap();
                    let ot =
                        softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
                    Client::resume(saved, ot, insecure_rng_for_tests(seed + 3)).unwrap()
                }
                None => {
                    let mut ot =
                        softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
                    let state = client_state(&mut s, &params, &mut ot, &mut rng).unwrap();
                    Client::new(state, ot, insecure_rng_for_tests(seed + 3)).unwrap()
                }
            };
            let results = client_ops(&mut client, &mut s, ops);
            let mut out = Vec::new();
            client.save(&mut out).unwrap();
            (results, out)
        },
    );
    (results, (server_file, client_file))
}

#[test]
fn a_saved_oram_resumes_across_runs() {
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    for (items, bits, bucket, trees) in [(1, 3, 2, 1), (37, 9, 4, 2), (300, 70, 6, 3)] {
        let params = Params::new(items, bits, bucket, trees).unwrap();
        let mut array = vec![vec![0u64; bits.div_ceil(64)]; items as usize];
        let mut files = None;
        for epoch in 0..3u64 {
            let mut ops = Vec::new();
            let mut expect = Vec::new();
            for _ in 0..25 {
                let v = rng.random_range(0..items);
                expect.push(array[v as usize].clone());
                if rng.random_bool(0.6) {
                    let new = random_words(&mut rng, bits);
                    array[v as usize] = new.clone();
                    ops.push((v, Some(new)));
                } else {
                    ops.push((v, None));
                }
            }
            let (results, f) = run_once(params, files.take(), &ops, 10 * epoch + items);
            assert_eq!(results, expect, "{params:?}, run {epoch}");
            files = Some(f);
        }
    }
}

#[test]
fn tweaks_run_on_across_runs() {
    // Under one Δ every AND gate needs a tweak of its own: a resumed garbler continues the
    // count. Two runs of the same accesses garble the same number of gates.
    let params = Params::new(40, 8, 4, 2).unwrap();
    let ops: Vec<Op> = (0..4).map(|v| (v, Some(vec![v]))).collect();
    let (_, first) = run_once(params, None, &ops, 21);
    let g1 = read_server(&mut &first.0[..]).unwrap().and_gates();
    assert!(g1 > 0);
    assert_eq!(read_client(&mut &first.1[..]).unwrap().and_gates(), g1);
    let (_, second) = run_once(params, Some(first), &ops, 22);
    assert_eq!(read_server(&mut &second.0[..]).unwrap().and_gates(), 2 * g1);
    assert_eq!(read_client(&mut &second.1[..]).unwrap().and_gates(), 2 * g1);
}

#[test]
fn a_resumed_server_refuses_another_delta() {
    let params = Params::new(20, 8, 4, 2).unwrap();
    let (_, (sf, _)) = run_once(params, None, &[(3, Some(vec![7]))], 1);
    let saved = read_server(&mut &sf[..]).unwrap();
    let (err, ()) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(9);
            let other = random_delta(&mut rng) ^ (saved.delta() & !1) ^ 2;
            let ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), other | 1, &mut rng).unwrap();
            Server::resume(saved, ot, insecure_rng_for_tests(10)).err()
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(11);
            softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
        },
    );
    assert!(matches!(err, Some(Gkk12Error::Misuse(_))), "{err:?}");
}

#[test]
fn damaged_state_files_are_refused() {
    let params = Params::new(50, 16, 4, 2).unwrap();
    let ops: Vec<Op> = (0..6).map(|v| (v, Some(vec![v + 1]))).collect();
    let (_, (sf, cf)) = run_once(params, None, &ops, 3);
    assert!(read_server(&mut &sf[..]).is_ok());
    assert!(read_client(&mut &cf[..]).is_ok());
    // The other party's file.
    assert!(matches!(
        read_server(&mut &cf[..]),
        Err(StateError::Corrupt(_))
    ));
    assert!(matches!(
        read_client(&mut &sf[..]),
        Err(StateError::Corrupt(_))
    ));
    // Every truncation and a flipped bit anywhere (sampled), and bytes appended.
    let mut rng = ChaCha12Rng::seed_from_u64(8);
    for f in [&sf, &cf] {
        let read = |b: &[u8]| {
            if std::ptr::eq(f, &sf) {
                read_server(&mut &b[..]).map(|_| ())
            } else {
                read_client(&mut &b[..]).map(|_| ())
            }
        };
        for cut in (0..f.len()).step_by(f.len() / 97 + 1) {
            assert!(read(&f[..cut]).is_err(), "cut at {cut}");
        }
        for _ in 0..200 {
            let mut g = f.clone();
            let at = rng.random_range(0..g.len());
            g[at] ^= 1 << rng.random_range(0..8);
            assert!(read(&g).is_err(), "bit flipped at {at}");
        }
        let mut g = f.clone();
        g.push(0);
        assert!(read(&g).is_err(), "a byte appended");
    }
}

#[test]
fn a_header_claiming_more_than_the_file_holds_fails_without_reserving_it() {
    // A header that claims an ORAM of 2^30 items (a base map of about 27 GB) over a file
    // that ends after the count: the read fails for the missing bytes, having allocated
    // at most a piece of them, instead of reserving what the header claims.
    let params = Params::new(1 << 30, 16, 4, 2).unwrap();
    let base = params.base_entries() * u64::from(params.base_entry_bits());
    let mut f = b"doram-gkk12-srv1".to_vec();
    for x in [1u64 << 30, 16, 4, 2] {
        f.extend_from_slice(&x.to_le_bytes());
    }
    f.push(0); // not sparse
    f.extend_from_slice(&3u128.to_le_bytes()); // Δ, lowest bit set
    f.extend_from_slice(&0u64.to_le_bytes()); // AND gates
    f.extend_from_slice(&1u64.to_le_bytes()); // next nonce
    f.extend_from_slice(&0u128.to_le_bytes()); // zero label
    f.extend_from_slice(&base.to_le_bytes());
    f.extend_from_slice(&[7u8; 4096]);
    match read_server(&mut &f[..]) {
        Err(StateError::Corrupt(m)) => assert!(m.contains("ends early"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
