//! One corrupt server at a time, every deviation class: the client outputs D[i] or, when the
//! deviation is only silence, fails closed naming the silent server; it never trusts (or
//! sends i to) the corrupt server and never blames an honest one. Under the explicit
//! synchronous-network assumption, silence too ends in D[i] (the paper's rule).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use doram_pir::client::{Deviation, Network, Suspects};
use doram_pir::local::{Direction, LocalCluster, LocalOptions};
use doram_pir::{Behaviour, Database, PirError, QueryOutcome, ServerId, Stage};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const TIMEOUT: Duration = Duration::from_millis(400);
const LATE: Duration = Duration::from_millis(900);

struct Fixture {
    db: Arc<Database>,
    /// Same shape, different contents.
    other: Arc<Database>,
}

fn fixture(record_size: usize, count: usize, seed: u64) -> Fixture {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut bytes = vec![0u8; record_size * count];
    rng.fill_bytes(&mut bytes);
    // A word ≥ p, so that the mask chunk is part of every answer.
    bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut other = bytes.clone();
    for b in other.iter_mut().step_by(5) {
        *b ^= 0x5a;
    }
    Fixture {
        db: Arc::new(Database::from_bytes(record_size, &bytes).unwrap()),
        other: Arc::new(Database::from_bytes(record_size, &other).unwrap()),
    }
}

/// The deviations that a server in role `s` can commit, with whether the client must detect
/// them (a deviation in a message the protocol does not use need not be detected).
fn deviations(s: ServerId, f: &Fixture) -> Vec<(String, Behaviour, bool)> {
    let mut v: Vec<(String, Behaviour, bool)> = Vec::new();
    let all_stages = [Stage::Info, Stage::Views];
    for st in all_stages {
        v.push((format!("drop {st:?}"), Behaviour::Drop(st), true));
        v.push((format!("delay {st:?}"), Behaviour::Delay(st, LATE), true));
        v.push((format!("garbage {st:?}"), Behaviour::Garbage(st), true));
        v.push((format!("close {st:?}"), Behaviour::Close(st), true));
    }
    v.push(("stale views".into(), Behaviour::Stale(Stage::Views), true));
    v.push((
        "stale views, then the real ones".into(),
        Behaviour::StaleFirst(Stage::Views),
        false,
    ));
    v.push(("tampered full view".into(), Behaviour::TamperView, true));
    if s == ServerId::S2 {
        v.push((
            "tampered partial view".into(),
            Behaviour::TamperPartialView,
            true,
        ));
        v.push(("tampered G output".into(), Behaviour::TamperGOutput, true));
        v.push(("payload (2, α)".into(), Behaviour::WrongPayload, true));
        v.push((
            "replayed partial views".into(),
            Behaviour::ReplayPartialView,
            true,
        ));
        v.push((
            "drop partial view".into(),
            Behaviour::Drop(Stage::Offline),
            true,
        ));
        v.push((
            "garbage partial view".into(),
            Behaviour::Garbage(Stage::Offline),
            true,
        ));
        // S2's database only matters if it is asked in the clear, which must not happen.
        v.push((
            "lying database".into(),
            Behaviour::LyingDatabase(f.other.clone()),
            false,
        ));
    } else {
        let st = Stage::Answer;
        v.push((format!("drop {st:?}"), Behaviour::Drop(st), true));
        v.push((format!("delay {st:?}"), Behaviour::Delay(st, LATE), true));
        v.push((format!("garbage {st:?}"), Behaviour::Garbage(st), true));
        v.push((format!("close {st:?}"), Behaviour::Close(st), true));
        v.push(("wrong z share".into(), Behaviour::WrongZ, true));
        v.push(("wrong y share".into(), Behaviour::WrongY, true));
        v.push(("wrong last chunk".into(), Behaviour::WrongLastChunk, true));
        v.push(("wrong shift".into(), Behaviour::WrongShift, true));
        v.push(("stale answer".into(), Behaviour::Stale(st), true));
        v.push((
            "lying database".into(),
            Behaviour::LyingDatabase(f.other.clone()),
            true,
        ));
    }
    v
}

/// Runs `queries` queries with server `corrupt` behaving as `behaviour` (and, with
/// `own_db`, holding a different database version) and checks the guarantees, once failing
/// closed on silence (the default) and once under the synchronous-network assumption.
#[allow(clippy::too_many_arguments)]
fn run_case(
    f: &Fixture,
    corrupt: ServerId,
    name: &str,
    behaviour: Behaviour,
    own_db: bool,
    must_detect: bool,
    queries: usize,
    rng: &mut ChaCha20Rng,
) {
    for network in [Network::Asynchronous, Network::AssumeSynchronous] {
        run_case_on(
            f,
            corrupt,
            name,
            behaviour.clone(),
            own_db,
            must_detect,
            queries,
            rng,
            network,
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn run_case_on(
    f: &Fixture,
    corrupt: ServerId,
    name: &str,
    behaviour: Behaviour,
    own_db: bool,
    must_detect: bool,
    queries: usize,
    rng: &mut ChaCha20Rng,
    network: Network,
) {
    let clear_to: Arc<Mutex<Vec<ServerId>>> = Arc::default();
    let sink = clear_to.clone();
    let options = LocalOptions {
        pool_size: 2,
        instance_wait: Duration::from_millis(250),
        client_timeout: TIMEOUT,
        network,
        tap: Some(Arc::new(move |s, d, b: &[u8]| {
            if d == Direction::ToServer && b.first() == Some(&0x05) {
                sink.lock().unwrap().push(s);
            }
        })),
        ..LocalOptions::default()
    };
    let mut dbs = [f.db.clone(), f.db.clone(), f.db.clone()];
    if own_db {
        dbs[corrupt.index()] = f.other.clone();
    }
    let mut behaviours = [Behaviour::Honest, Behaviour::Honest, Behaviour::Honest];
    behaviours[corrupt.index()] = behaviour;
    let cluster = LocalCluster::start(dbs, behaviours, options).unwrap();
    let ctx = format!("corrupt {corrupt}, {name}, {network:?}");
    let mut client = cluster.client().unwrap();
    let mut detected = client.distrusted().is_some();
    for _ in 0..queries {
        let i = rng.next_u64() % f.db.len();
        let started = std::time::Instant::now();
        let result = client.query(i);
        assert!(
            started.elapsed() <= 2 * TIMEOUT + Duration::from_millis(300),
            "{ctx}: the query took {:?}",
            started.elapsed()
        );
        detected |= check_query(&ctx, f, corrupt, network, i, result) != Ended::Clean;
    }
    assert!(!must_detect || detected, "{ctx}: deviation went unnoticed");
    assert!(
        !clear_to.lock().unwrap().contains(&corrupt),
        "{ctx}: the index was sent to the corrupt server"
    );
    cluster.shutdown();
}

/// How a query ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// With the record and no fallback.
    Clean,
    /// With the record, after a fallback.
    Fallback,
    /// Failed closed, naming this server.
    Unreachable(ServerId),
}

/// Checks the result of a query for record `i` with `corrupt` the only corrupt server: the
/// right record or (by default only) a fail-closed error; a fallback that never trusts the
/// corrupt server, never blames an honest one, counts the corrupt one among the suspects of
/// its evidence, and acts on silence only under the synchronous assumption.
fn check_query(
    ctx: &str,
    f: &Fixture,
    corrupt: ServerId,
    network: Network,
    i: u64,
    result: Result<QueryOutcome, PirError>,
) -> Ended {
    let out = match result {
        Ok(out) => out,
        Err(PirError::Unreachable { server, detail }) => {
            // Fail closed: allowed only by default.
            assert_eq!(
                network,
                Network::Asynchronous,
                "{ctx}: {server} unreachable ({detail}) under the synchronous assumption"
            );
            return Ended::Unreachable(server);
        }
        Err(e) => panic!("{ctx}: query failed: {e}"),
    };
    assert_eq!(out.value, f.db.record(i).unwrap(), "{ctx}: wrong record");
    let Some(fb) = &out.fallback else {
        return Ended::Clean;
    };
    assert_ne!(fb.trusted, corrupt, "{ctx}: trusted the corrupt server");
    if fb.deviation.is_evidence() {
        assert!(
            fb.suspects.contains(corrupt),
            "{ctx}: corrupt server not among the suspects {fb:?}"
        );
    } else {
        assert_eq!(
            network,
            Network::AssumeSynchronous,
            "{ctx}: acted on silence"
        );
        assert!(matches!(fb.suspects, Suspects::Presumed(_)), "{ctx}");
    }
    if let Some(b) = out.blamed() {
        assert_eq!(b, corrupt, "{ctx}: blamed an honest server");
    }
    Ended::Fallback
}

fn sweep(corrupt: ServerId, seed: u64) {
    let f = fixture(20, 100, seed);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for (name, behaviour, must_detect) in deviations(corrupt, &f) {
        run_case(
            &f,
            corrupt,
            &name,
            behaviour,
            false,
            must_detect,
            3,
            &mut rng,
        );
    }
    run_case(
        &f,
        corrupt,
        "different database version",
        Behaviour::Honest,
        true,
        true,
        3,
        &mut rng,
    );
}

#[test]
fn corrupt_s0() {
    sweep(ServerId::S0, 100);
}

#[test]
fn corrupt_s1() {
    sweep(ServerId::S1, 101);
}

#[test]
fn corrupt_s2() {
    sweep(ServerId::S2, 102);
}

#[test]
fn blame_follows_the_evidence() {
    // Specific deviations lead to the specific rules of spec §8.
    let f = fixture(8, 64, 7);
    let cases = [
        (ServerId::S2, Behaviour::TamperGOutput, "G"),
        (ServerId::S2, Behaviour::WrongPayload, "payload"),
        (ServerId::S2, Behaviour::TamperPartialView, "mismatch0"),
        (ServerId::S1, Behaviour::TamperView, "mismatch1"),
        (ServerId::S0, Behaviour::WrongY, "mac"),
        (ServerId::S1, Behaviour::Garbage(Stage::Answer), "answer1"),
        (ServerId::S2, Behaviour::ReplayPartialView, "replay"),
    ];
    for (corrupt, behaviour, want) in cases {
        let mut behaviours = [Behaviour::Honest, Behaviour::Honest, Behaviour::Honest];
        behaviours[corrupt.index()] = behaviour;
        let options = LocalOptions {
            client_timeout: TIMEOUT,
            ..LocalOptions::default()
        };
        let cluster = LocalCluster::start(
            [f.db.clone(), f.db.clone(), f.db.clone()],
            behaviours,
            options,
        )
        .unwrap();
        let mut client = cluster.client().unwrap();
        if want == "replay" {
            // The first instance is genuine; the replays come after it.
            assert!(client.query(4).unwrap().fallback.is_none());
        }
        let out = client.query(5).unwrap();
        assert_eq!(out.value, f.db.record(5).unwrap());
        let fb = out.fallback.clone().unwrap();
        let ok = match (want, &fb.deviation) {
            ("G", Deviation::GOracle { call: 1 }) => fb.trusted == ServerId::S0,
            ("payload", Deviation::Payload) => out.blamed() == Some(ServerId::S2),
            (
                "mismatch0",
                Deviation::ViewMismatch {
                    holder: ServerId::S0,
                },
            ) => fb.trusted == ServerId::S1,
            (
                "mismatch1",
                Deviation::ViewMismatch {
                    holder: ServerId::S1,
                },
            ) => fb.trusted == ServerId::S0,
            ("mac", Deviation::Mac { chunk: 0 }) => fb.trusted == ServerId::S2,
            (
                "answer1",
                Deviation::Answer {
                    holder: ServerId::S1,
                    ..
                },
            ) => out.blamed() == Some(ServerId::S1) && fb.trusted == ServerId::S2,
            (
                "replay",
                Deviation::Replay {
                    holder: ServerId::S0,
                },
            ) => fb.trusted == ServerId::S1 && out.blamed().is_none(),
            _ => false,
        };
        assert!(ok, "{want}: got {fb:?}");
        cluster.shutdown();
    }
}

#[test]
fn silence_is_not_evidence() {
    // A key holder that never answers the shift: by default the query fails closed naming
    // it (nobody learns i, nobody is blamed); under the synchronous assumption the paper's
    // rule sends i to S_2 without blaming anyone.
    let f = fixture(8, 64, 8);
    for network in [Network::Asynchronous, Network::AssumeSynchronous] {
        let options = LocalOptions {
            client_timeout: TIMEOUT,
            network,
            ..LocalOptions::default()
        };
        let cluster = LocalCluster::start(
            [f.db.clone(), f.db.clone(), f.db.clone()],
            [
                Behaviour::Honest,
                Behaviour::Drop(Stage::Answer),
                Behaviour::Honest,
            ],
            options,
        )
        .unwrap();
        let mut client = cluster.client().unwrap();
        match (network, client.query(5)) {
            (Network::Asynchronous, Err(PirError::Unreachable { server, .. })) => {
                assert_eq!(server, ServerId::S1);
            }
            (Network::AssumeSynchronous, Ok(out)) => {
                assert_eq!(out.value, f.db.record(5).unwrap());
                let fb = out.fallback.clone().unwrap();
                assert_eq!(fb.trusted, ServerId::S2);
                assert_eq!(fb.suspects, Suspects::Presumed(ServerId::S1));
                assert_eq!(out.blamed(), None);
            }
            (n, r) => panic!("{n:?}: {r:?}"),
        }
        cluster.shutdown();
    }
}

#[test]
fn transport_faults_from_one_server() {
    // Broken frames at the transport level (not just bad payloads): an oversized announcement,
    // a garbage header, a frame cut short by a closing connection.
    use doram_net::Tamper;
    let f = fixture(8, 32, 9);
    // Frames S_i → client: 0 = info, then per query: S2 1 view pair; S_b view, answer.
    let cases: Vec<(ServerId, u64, Tamper)> = vec![
        (ServerId::S2, 1, Tamper::Oversize),
        (ServerId::S2, 1, Tamper::Truncate(7)),
        (ServerId::S0, 1, Tamper::Replace(vec![0xff; 40])),
        (ServerId::S1, 2, Tamper::Oversize),
        (ServerId::S1, 2, Tamper::Truncate(30)),
        (ServerId::S0, 2, Tamper::Silence),
        (ServerId::S1, 0, Tamper::Close),
    ];
    for (corrupt, frame, fault) in cases {
        let ctx = format!("{corrupt} frame {frame} {fault:?}");
        let fault2 = fault.clone();
        let options = LocalOptions {
            client_timeout: TIMEOUT,
            inject: Some(Arc::new(move |s, d, k, _p: &mut Vec<u8>| {
                if s == corrupt && d == Direction::ToClient && k == frame {
                    fault2.clone()
                } else {
                    Tamper::Pass
                }
            })),
            ..LocalOptions::default()
        };
        for network in [Network::Asynchronous, Network::AssumeSynchronous] {
            let options = LocalOptions {
                network,
                ..options.clone()
            };
            let cluster = LocalCluster::honest(f.db.clone(), options).unwrap();
            let mut client = match cluster.client() {
                Ok(c) => c,
                Err(e) => panic!("{ctx}: {e}"),
            };
            let ctx = format!("{ctx} {network:?}");
            let mut noticed = client.distrusted().is_some();
            for i in [3u64, 17, 31] {
                let ended = check_query(&ctx, &f, corrupt, network, i, client.query(i));
                // A fault that looks like the network's (a cut, silence) fails closed by
                // default, naming the server.
                if let Ended::Unreachable(server) = ended {
                    assert_eq!(server, corrupt, "{ctx}");
                }
                noticed |= ended != Ended::Clean;
            }
            assert!(noticed, "{ctx}: fault not noticed");
            cluster.shutdown();
        }
    }
}

#[test]
fn evidence_in_hand_comes_before_the_other_holders_silence() {
    // S0's view never arrives while a corrupt S1 sends a garbage one. S1's view has arrived
    // by the time the client gives up waiting for S0: that evidence, not S0's silence,
    // decides the fallback, so S0 (silent, never caught lying) gets i and S1 never does, in
    // either mode. S0 withholds its view itself: a frame lost on the way would fail S0's
    // link at its next frame (the transport's sequence check), and S0 could not serve the
    // fallback.
    let f = fixture(8, 32, 10);
    for network in [Network::Asynchronous, Network::AssumeSynchronous] {
        let clear_to: Arc<Mutex<Vec<ServerId>>> = Arc::default();
        let sink = clear_to.clone();
        let options = LocalOptions {
            client_timeout: TIMEOUT,
            network,
            tap: Some(Arc::new(move |s, d, b: &[u8]| {
                if d == Direction::ToServer && b.first() == Some(&0x05) {
                    sink.lock().unwrap().push(s);
                }
            })),
            ..LocalOptions::default()
        };
        let cluster = LocalCluster::start(
            [f.db.clone(), f.db.clone(), f.db.clone()],
            [
                Behaviour::Drop(Stage::Views),
                Behaviour::Garbage(Stage::Views),
                Behaviour::Honest,
            ],
            options,
        )
        .unwrap();
        let mut client = cluster.client().unwrap();
        let out = client
            .query(3)
            .unwrap_or_else(|e| panic!("{network:?}: {e}"));
        assert_eq!(out.value, f.db.record(3).unwrap(), "{network:?}");
        let fb = out.fallback.clone().unwrap();
        assert!(
            matches!(
                fb.deviation,
                Deviation::HolderView {
                    holder: ServerId::S1,
                    ..
                }
            ),
            "{network:?}: {fb:?}"
        );
        assert_eq!(fb.trusted, ServerId::S0, "{network:?}");
        assert!(!clear_to.lock().unwrap().contains(&ServerId::S1));
        cluster.shutdown();
    }
}

#[test]
fn replies_are_bounded_by_the_largest_legitimate_one() {
    // A corrupt S1 pads its view to 64 KiB, far below the configured frame limit but beyond
    // any reply for this database: the client refuses the frame at its header (evidence
    // against S1) instead of buffering it.
    let f = fixture(8, 32, 11);
    let options = LocalOptions {
        client_timeout: TIMEOUT,
        // Frames S_i → client: 0 = info, then S_b's view (1) and answer (2).
        inject: Some(Arc::new(|s, d, k, p: &mut Vec<u8>| {
            if s == ServerId::S1 && d == Direction::ToClient && k == 1 {
                p.resize(64 << 10, 0);
            }
            doram_net::Tamper::Pass
        })),
        ..LocalOptions::default()
    };
    let cluster = LocalCluster::honest(f.db.clone(), options).unwrap();
    let mut client = cluster.client().unwrap();
    let out = client.query(3).unwrap();
    assert_eq!(out.value, f.db.record(3).unwrap());
    let fb = out.fallback.clone().unwrap();
    match &fb.deviation {
        Deviation::HolderView {
            holder: ServerId::S1,
            detail,
        } => assert!(detail.contains("exceeds the limit"), "{detail}"),
        d => panic!("{d:?}"),
    }
    assert_eq!(fb.trusted, ServerId::S0);
    cluster.shutdown();
}
