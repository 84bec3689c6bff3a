//! Every program between two parties ([`Machine2`]) against its plaintext reference: binary
//! and linear search over odd sizes, BFS in both forms, Dijkstra and stable matching on random
//! inputs; roles in both directions; transcripts that do not depend on the data; a role
//! outside the two parties refused.
#![allow(clippy::unwrap_used)]

use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_programs::input::{Edge, Prefs};
use doram_programs::{
    BfsDense, BfsQueue, BinarySearch, Dijkstra, LinearSearch, PartyRun, Program, ProgramError,
    Roles, StableMatching, run_local2,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn output<T: Clone>(runs: &[PartyRun<T>; 2], roles: Roles) -> T {
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    runs[roles.receiver.index()].output.clone().unwrap()
}

fn check<P: Program>(roles: Roles, data: P::Data<'_>, query: P::Query, seed: u64) -> P::Output
where
    P::Output: Clone + PartialEq + std::fmt::Debug,
{
    let runs = run_local2::<P>(roles, data, query, Entropy::InsecureSeed(seed))
        .unwrap_or_else(|e| panic!("{}: {e}", P::NAME));
    let got = output(&runs, roles);
    assert_eq!(got, P::reference(data, query), "{}", P::NAME);
    got
}

fn graph(rng: &mut ChaCha12Rng, v: u64, e: usize, max_w: u64) -> Vec<Edge> {
    (0..e)
        .map(|_| Edge {
            from: rng.random_range(0..v),
            to: rng.random_range(0..v),
            weight: rng.random_range(0..=max_w),
        })
        .collect()
}

#[test]
fn searches_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let flipped = Roles {
        owner: PartyId::P1,
        querier: PartyId::P0,
        receiver: PartyId::P0,
    };
    for (n, roles) in [
        (1usize, Roles::two_party()),
        (2, flipped),
        (7, Roles::two_party()),
        (33, flipped),
        (100, Roles::two_party()),
    ] {
        let mut data: Vec<u64> = (0..n).map(|_| rng.random_range(0..200)).collect();
        data.sort_unstable();
        for key in [0, data[n / 2], 201, rng.random_range(0..200)] {
            check::<BinarySearch>(roles, &data, key, seed);
        }
        check::<LinearSearch>(roles, &data, data[0], seed);
    }
}

#[test]
fn graphs_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 1);
    let roles = Roles::two_party();
    for (v, e) in [(1u64, 0usize), (2, 1), (5, 7), (9, 20)] {
        let unit = graph(&mut rng, v, e, 1);
        let weighted = graph(&mut rng, v, e, 9);
        let source = rng.random_range(0..v);
        check::<BfsQueue>(roles, (v, &unit), source, seed);
        check::<BfsDense>(roles, (v, &unit), source, seed);
        check::<Dijkstra>(roles, (v, &weighted), source, seed);
    }
}

#[test]
fn matching_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 2);
    for k in [1usize, 2, 5] {
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
}

/// Each party's transcript of one run of `P` between two parties.
fn transcripts<P: Program>(data: P::Data<'_>, query: P::Query) -> Vec<doram_net::Transcript> {
    let roles = Roles::two_party();
    let seed = test_seed();
    let runs = doram_net::run_parties(
        doram_net::LocalMesh::new(2).build(),
        "program",
        |mut session| {
            session.record_transcript(true);
            let me = session.me();
            let s = Entropy::InsecureSeed(seed).party_seed(me, "program");
            let d = (me == roles.owner).then_some(data);
            let q = (me == roles.querier).then_some(query);
            doram_programs::run_party2::<P>(session, s, roles, d, q).unwrap()
        },
    );
    runs.into_iter()
        .map(|r| r.unwrap().transcript.unwrap())
        .collect()
}

#[test]
fn transcripts_do_not_depend_on_the_data() {
    let a = transcripts::<BinarySearch>(&[1, 5, 9, 12, 40, 41, 90], 0);
    let b = transcripts::<BinarySearch>(&[0, 0, 0, 3, 3, 70, 99], 99);
    assert_eq!(a, b);
}

#[test]
fn dijkstra_transcripts_do_not_depend_on_the_graph() {
    let e = |from, to, weight| Edge { from, to, weight };
    let path = [e(0, 1, 1), e(1, 2, 1), e(2, 3, 1), e(3, 4, 1), e(4, 5, 1)];
    let star = [e(5, 0, 9), e(5, 1, 0), e(5, 2, 7), e(5, 3, 3), e(5, 4, 1)];
    assert_eq!(
        transcripts::<Dijkstra>((6, &path), 0),
        transcripts::<Dijkstra>((6, &star), 5)
    );
}

#[test]
fn roles_outside_two_parties_are_refused() {
    let data = [1u64, 2, 3];
    let err = run_local2::<BinarySearch>(Roles::default(), &data, 2, Entropy::InsecureSeed(1))
        .unwrap_err();
    assert!(matches!(err, ProgramError::BadRoles), "{err}");
}

/// Random reads, writes and conditional writes at secret addresses on the two-party memory,
/// against a plain array; odd sizes; the whole memory compared at the end.
#[test]
fn memory_matches_an_array() {
    use doram_field::Fp;
    use doram_programs::{Machine2, Ram};
    let seed = test_seed();
    for n in [1usize, 2, 5, 64, 65, 130] {
        let mut rng = ChaCha12Rng::seed_from_u64(seed ^ n as u64);
        let init: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        // (op, address, value, condition): 0 read, 1 write, 2 conditional write.
        let ops: Vec<(u8, usize, u64, bool)> = (0..40)
            .map(|_| {
                (
                    rng.random_range(0..3),
                    rng.random_range(0..n),
                    rng.random(),
                    rng.random(),
                )
            })
            .collect();
        let mut plain = init.clone();
        let mut want_reads = Vec::new();
        for &(op, a, v, c) in &ops {
            match op {
                0 => want_reads.push(Fp::from_u64(plain[a])),
                1 => plain[a] = v,
                _ if c => plain[a] = v,
                _ => {}
            }
        }
        let runs = doram_net::run_parties(doram_net::LocalMesh::new(2).build(), "mem", |s| {
            let me = s.me();
            let mut m =
                Machine2::setup(s, Entropy::InsecureSeed(seed).party_seed(me, "mem")).unwrap();
            let own = (me == PartyId::P0).then_some(&init[..]);
            let array = m.alloc_input(PartyId::P0, own, n).unwrap();
            m.boot().unwrap();
            // Addresses and values are P1's secret inputs.
            let flat: Vec<u64> = ops.iter().flat_map(|&(_, a, v, _)| [a as u64, v]).collect();
            let mine = (me == PartyId::P1).then_some(&flat[..]);
            let secret = m.input_vector(PartyId::P1, mine, flat.len()).unwrap();
            let mut reads = Vec::new();
            for (k, &(op, _, _, c)) in ops.iter().enumerate() {
                let (addr, val) = (secret[2 * k], secret[2 * k + 1]);
                match op {
                    0 => reads.push(m.read_addr(addr).unwrap()),
                    1 => m.write_addr(addr, val).unwrap(),
                    _ => {
                        let c = m.public_bit(c);
                        m.cond_write_addr(addr, c, val, None).unwrap();
                    }
                }
            }
            let all = m.snapshot(&[array]).unwrap().remove(0);
            reads.extend(all);
            m.open_to(PartyId::P1, &reads).unwrap()
        });
        let got = runs.into_iter().nth(1).unwrap().unwrap().unwrap();
        let mut want = want_reads;
        want.extend(plain.iter().map(|&x| Fp::from_u64(x)));
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn a_memory_beyond_the_scan_limit_is_refused_before_sending() {
    use doram_programs::Machine2;
    use doram_programs::two::MAX_SCAN_WORDS;
    let runs = doram_net::run_parties(doram_net::LocalMesh::new(2).build(), "big", |s| {
        let me = s.me();
        let mut m = Machine2::setup(s, Entropy::InsecureSeed(5).party_seed(me, "big")).unwrap();
        m.alloc_fill(MAX_SCAN_WORDS + 1, 0).unwrap();
        let sent = m.session().stats().total().sum().bytes_sent;
        let err = m.boot().unwrap_err();
        (err, m.session().stats().total().sum().bytes_sent - sent)
    });
    for r in runs {
        let (err, sent) = r.unwrap();
        assert!(matches!(err, ProgramError::Misuse(_)), "{err}");
        assert_eq!(sent, 0);
    }
}

/// A frame one byte short, at several points of a two-party Dijkstra and binary search (over
/// the scanned memory) in each direction: the
/// receiving party's run ends with an error naming the sender (or the closed link), never a
/// panic, a hang or an output.
#[test]
fn a_short_frame_is_named_at_every_step() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let e = |from, to, weight| Edge { from, to, weight };
    let graph = [e(0, 1, 4), e(1, 2, 1), e(0, 2, 9), e(2, 3, 2), e(3, 4, 7)];
    let sorted = [1u64, 3, 3, 12, 40, 41, 90];
    let roles = Roles::two_party();
    let mut cases = 0;
    for search in [false, true] {
        for (from, to) in [(PartyId::P0, PartyId::P1), (PartyId::P1, PartyId::P0)] {
            for frame in [1u64, 2, 4, 8, 16, 24] {
                let hit = Arc::new(AtomicBool::new(false));
                let seen = Arc::clone(&hit);
                let mesh = doram_net::LocalMesh::new(2)
                    .timeout(std::time::Duration::from_secs(10))
                    .tamper(move |a, b, seq, payload| {
                        if a == from && b == to && seq == frame && !payload.is_empty() {
                            payload.pop();
                            seen.store(true, Ordering::SeqCst);
                        }
                        doram_net::Tamper::Pass
                    });
                let runs = doram_net::run_parties(mesh.build(), "program", |session| {
                    let me = session.me();
                    let s = Entropy::InsecureSeed(9).party_seed(me, "program");
                    if search {
                        // The memory's accesses: A2B, the scan, B2A.
                        let d = (me == roles.owner).then_some(&sorted[..]);
                        let q = (me == roles.querier).then_some(12);
                        doram_programs::run_party2::<BinarySearch>(session, s, roles, d, q)
                            .map(|r| r.output.is_some())
                    } else {
                        let d = (me == roles.owner).then_some((5u64, &graph[..]));
                        let q = (me == roles.querier).then_some(0);
                        doram_programs::run_party2::<Dijkstra>(session, s, roles, d, q)
                            .map(|r| r.output.is_some())
                    }
                });
                if !hit.load(Ordering::SeqCst) {
                    continue;
                }
                cases += 1;
                let at_receiver = runs.into_iter().nth(to.index()).unwrap().expect("no panic");
                match at_receiver {
                    Err(err) => assert!(
                        err.peer() == Some(from) || matches!(err, ProgramError::Net(_)),
                        "{from}→{to} frame {frame}: {err}"
                    ),
                    Ok(_) => panic!("{from}→{to} frame {frame}: a short frame went unnoticed"),
                }
            }
        }
    }
    // Every chosen frame exists in both directions (a run has over twenty-four each way).
    assert_eq!(cases, 24);
}
