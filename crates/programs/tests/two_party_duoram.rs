//! Every program between two parties on 2P-Duoram ([`Machine2Duoram`]) against its plaintext
//! reference: binary and linear search, BFS in both forms, Dijkstra and stable matching on
//! random inputs; transcripts of binary search that do not depend on the data.
#![allow(clippy::unwrap_used)]

use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_net::LocalMesh;
use doram_programs::input::{Edge, Prefs};
use doram_programs::{
    BfsDense, BfsQueue, BinarySearch, Dijkstra, LinearSearch, Machine2Duoram, Program, Roles,
    StableMatching, run_local_host,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn check<P: Program>(roles: Roles, data: P::Data<'_>, query: P::Query, seed: u64)
where
    P::Output: Clone + PartialEq + std::fmt::Debug,
{
    let runs = run_local_host::<P, Machine2Duoram>(
        LocalMesh::new(2),
        roles,
        data,
        query,
        Entropy::InsecureSeed(seed),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", P::NAME));
    assert_eq!(runs.len(), 2);
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    let got = runs[roles.receiver.index()].output.clone().unwrap();
    assert_eq!(got, P::reference(data, query), "{}", P::NAME);
}

#[test]
fn programs_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let flipped = Roles {
        owner: PartyId::P1,
        querier: PartyId::P0,
        receiver: PartyId::P0,
    };
    for (n, roles) in [
        (1usize, Roles::two_party()),
        (7, flipped),
        (100, Roles::two_party()),
    ] {
        let mut data: Vec<u64> = (0..n).map(|_| rng.random_range(0..200)).collect();
        data.sort_unstable();
        for key in [data[n / 2], 201] {
            check::<BinarySearch>(roles, &data, key, seed);
        }
        check::<LinearSearch>(roles, &data, data[0], seed);
    }
    let edge = |rng: &mut ChaCha12Rng, v: u64, w: u64| Edge {
        from: rng.random_range(0..v),
        to: rng.random_range(0..v),
        weight: rng.random_range(0..=w),
    };
    let v = 6u64;
    let unit: Vec<Edge> = (0..9).map(|_| edge(&mut rng, v, 1)).collect();
    let weighted: Vec<Edge> = (0..9).map(|_| edge(&mut rng, v, 9)).collect();
    check::<BfsQueue>(Roles::two_party(), (v, &unit), 0, seed);
    check::<BfsDense>(Roles::two_party(), (v, &unit), 1, seed);
    check::<Dijkstra>(Roles::two_party(), (v, &weighted), 2, seed);
    let k = 3usize;
    let mut list = |_| {
        let mut l: Vec<u64> = (0..k as u64).collect();
        l.shuffle(&mut rng);
        l
    };
    let prefs = Prefs {
        proposers: (0..k).map(&mut list).collect(),
        acceptors: (0..k).map(&mut list).collect(),
    };
    check::<StableMatching>(Roles::two_party(), &prefs, (), seed);
}

/// Each party's transcript of one binary search.
fn transcripts(data: &[u64], key: u64) -> Vec<doram_net::Transcript> {
    let roles = Roles::two_party();
    let seed = test_seed();
    let runs = doram_net::run_parties(LocalMesh::new(2).build(), "program", |mut session| {
        session.record_transcript(true);
        let me = session.me();
        let s = Entropy::InsecureSeed(seed).party_seed(me, "program");
        let d = (me == roles.owner).then_some(data);
        let q = (me == roles.querier).then_some(key);
        BinarySearch::run_on::<Machine2Duoram>(session, s, roles, d, q).unwrap()
    });
    runs.into_iter()
        .map(|r| r.unwrap().transcript.unwrap())
        .collect()
}

#[test]
fn binary_search_transcripts_do_not_depend_on_the_data() {
    let a = transcripts(&[1, 5, 9, 12, 40, 41, 90], 0);
    let b = transcripts(&[0, 0, 0, 3, 3, 70, 99], 99);
    assert_eq!(a, b);
}
