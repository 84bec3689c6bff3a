//! The front door: local runs on every backend and with other roles, and per-party runs over
//! connected sessions, against the plaintext references.
#![allow(clippy::unwrap_used)]

use doram::backend::bench_program;
use doram::net::Session;
use doram::programs::bench::{BenchConfig, Program};
use doram::programs::{bfs, binary_search, matching};
use doram::{BackendKind, Edge, Local, Party, PartyId, Prefs, Roles};
use doram_net::testkit::run;

#[test]
fn local_runs_on_every_backend() {
    let sorted = [1u64, 4, 4, 9, 16, 25];
    for backend in BackendKind::ALL {
        let local = Local::new(backend).insecure_seed(7);
        for key in [0, 4, 10, 99] {
            assert_eq!(
                local.binary_search(&sorted, key).unwrap(),
                binary_search::plain(&sorted, key),
                "{}",
                backend.name()
            );
        }
    }
}

#[test]
fn local_runs_with_other_roles() {
    let roles = Roles {
        owner: PartyId::P2,
        querier: PartyId::P0,
        receiver: PartyId::P1,
    };
    let prefs = Prefs {
        proposers: vec![vec![1, 0, 2], vec![0, 1, 2], vec![0, 2, 1]],
        acceptors: vec![vec![2, 1, 0], vec![0, 1, 2], vec![1, 0, 2]],
    };
    let local = Local::new(BackendKind::Duoram).roles(roles);
    assert_eq!(
        local.stable_matching(&prefs).unwrap(),
        matching::plain(&prefs)
    );
    let edges = [Edge::new(0, 1, 1), Edge::new(1, 3, 1), Edge::new(3, 0, 1)];
    assert_eq!(local.bfs(4, &edges, 1).unwrap(), bfs::plain(4, &edges, 1));
}

#[test]
fn parties_over_connected_sessions() {
    let edges = [Edge::new(0, 1, 2), Edge::new(1, 2, 2), Edge::new(2, 0, 2)];
    let outputs = run(Session::local_mesh(3), |session| {
        let me = session.me();
        let party = Party::over(session, BackendKind::LinearScan);
        let graph = (me == PartyId::P0).then_some((3, &edges[..]));
        let source = (me == PartyId::P1).then_some(2);
        party.bfs(graph, source).unwrap()
    });
    assert_eq!(outputs[0], None);
    assert_eq!(outputs[1], None);
    assert_eq!(outputs[2], Some(bfs::plain(3, &edges, 2)));
}

#[test]
fn backends_are_chosen_by_name() {
    for kind in BackendKind::ALL {
        assert_eq!(BackendKind::from_name(kind.name()), Some(kind));
    }
    assert_eq!(BackendKind::from_name("engine"), None);
    let config = BenchConfig::new(Program::BinarySearch, 20);
    for kind in BackendKind::ALL {
        let report = bench_program(kind, &config).unwrap();
        assert!(report.verified, "{}", kind.name());
        assert_eq!(report.backend, kind.name());
    }
    let linear = BenchConfig::new(Program::LinearSearch, 20);
    assert_eq!(
        bench_program(BackendKind::Ramen, &linear).unwrap().backend,
        "engine"
    );
}
