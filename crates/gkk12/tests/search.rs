//! Binary search between the two parties on a securely loaded ORAM agrees with `bisect_left`
//! (`partition_point`) on sorted keys, odd sizes included, for keys below, between, on and
//! above the entries; the messages do not depend on the key.
#![allow(clippy::unwrap_used)]

mod common;

use common::{load3, random_words, run2};
use doram_gkk12::Params;
use doram_gkk12::driver::{Client, Server};
use doram_gkk12::load;
use doram_gkk12::search::{lower_bound, serve_search};
use doram_net::{Session, Transcript};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Loads `entries` (sorted keys in the first 64 bits), then searches `keys`; returns the
/// client's answers and both parties' transcripts of the searches.
fn searches(
    params: Params,
    entries: &[Vec<u64>],
    keys: &[u64],
    seed: u64,
) -> (Vec<u64>, (Transcript, Transcript)) {
    let (s, c, h, _) = load3(params, entries, seed, |s| {
        load::help(s, &params, &mut insecure_rng_for_tests(seed + 1))
    });
    h.unwrap();
    let (sl, cl) = (s.unwrap(), c.unwrap());
    let n = keys.len();
    let (ts, (answers, tc)) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let delta = random_delta(&mut rng);
            let mut ot =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            let state = sl.finish(&mut s, &mut ot, &mut rng).unwrap();
            let mut server = Server::new(state, ot, insecure_rng_for_tests(seed + 3)).unwrap();
            s.record_transcript(true);
            for _ in 0..n {
                serve_search(&mut server, &mut s).unwrap();
            }
            s.take_transcript().unwrap()
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 4);
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let state = cl.finish(&mut s, &mut ot).unwrap();
            let mut client = Client::new(state, ot, insecure_rng_for_tests(seed + 5)).unwrap();
            s.record_transcript(true);
            let answers = keys
                .iter()
                .map(|&k| lower_bound(&mut client, &mut s, k).unwrap())
                .collect();
            (answers, s.take_transcript().unwrap())
        },
    );
    (answers, (ts, tc))
}

#[test]
fn searches_agree_with_bisect_left() {
    let mut rng = ChaCha12Rng::seed_from_u64(12);
    for (n, bits, bucket, trees) in [
        (1, 64, 2, 1),
        (2, 70, 2, 1),
        (5, 64, 4, 1),
        (100, 90, 6, 2),
        (257, 64, 8, 2),
    ] {
        let params = Params::new(n, bits, bucket, trees).unwrap();
        // Sorted keys with repeats and gaps.
        let mut keys: Vec<u64> = (0..n).map(|_| rng.random_range(10..10 + 3 * n)).collect();
        keys.sort_unstable();
        let entries: Vec<Vec<u64>> = keys
            .iter()
            .map(|&k| {
                let mut e = random_words(&mut rng, bits);
                e[0] = k;
                e
            })
            .collect();
        let mut probes = vec![
            0,
            9,
            keys[0],
            keys[(n / 2) as usize],
            keys[(n - 1) as usize],
        ];
        probes.extend([keys[(n - 1) as usize] + 1, u64::MAX]);
        probes.push(rng.random_range(10..10 + 3 * n));
        let (answers, _) = searches(params, &entries, &probes, 70 + n);
        let want: Vec<u64> = probes
            .iter()
            .map(|&p| keys.partition_point(|&k| k < p) as u64)
            .collect();
        assert_eq!(answers, want, "n = {n}");
    }
}

#[test]
fn search_messages_do_not_depend_on_the_key() {
    let params = Params::new(60, 64, 6, 2).unwrap();
    let entries: Vec<Vec<u64>> = (0..60).map(|v| vec![3 * v]).collect();
    let (a, ta) = searches(params, &entries, &[0, 500], 1);
    let (b, tb) = searches(params, &entries, &[91, 92], 1);
    assert_eq!((a, b), (vec![0, 60], vec![31, 31]));
    assert_eq!(ta, tb);
}
