//! The refactoring safety net for the RAM programs: under a fixed seed, each program on each
//! backend exchanges exactly the bytes recorded here — one digest of the three parties'
//! content digests per case. A change to any message must say why in its commit and update
//! the table (`DORAM_PRINT_DIGESTS=1` prints the new one).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use common::{BackendKind, RunConfig, run_party, run_program};
use doram_net::Session;
use doram_programs::input::{Edge, Prefs};
use doram_programs::{Bfs, BinarySearch, Dijkstra, StableMatching};
use doram_programs::{PartyRun, ProgramError, Roles};

const SEED: u64 = 0x5afe_7e57;

/// One digest over the three parties' content digests of a run of `party`.
fn digest<T>(
    backend: BackendKind,
    party: impl Fn(Session, &RunConfig) -> Result<PartyRun<T>, ProgramError> + Sync,
) -> String {
    let runs = run_program(SEED, backend, Roles::default(), |mut session, config| {
        session.record_content_digest(true);
        Ok(party(session, config)?.content_digest.unwrap())
    });
    let mut h = blake3::Hasher::new();
    for r in runs {
        h.update(&r.unwrap());
    }
    h.finalize().to_hex()[..32].to_string()
}

fn graph() -> (u64, Vec<Edge>) {
    let edges = [
        (0, 1, 4),
        (1, 2, 1),
        (0, 2, 7),
        (2, 3, 2),
        (3, 0, 9),
        (1, 4, 3),
    ]
    .map(|(from, to, weight)| Edge { from, to, weight })
    .to_vec();
    (5, edges)
}

/// Every program on `backend`, by name.
fn cases(backend: BackendKind) -> Vec<(&'static str, String)> {
    let roles = Roles::default();
    let data: Vec<u64> = (0..23).map(|i| 3 * i + 1).collect();
    let (v, edges) = graph();
    let prefs = Prefs {
        proposers: vec![vec![0, 1, 2], vec![1, 0, 2], vec![0, 2, 1]],
        acceptors: vec![vec![2, 1, 0], vec![0, 1, 2], vec![1, 2, 0]],
    };
    let mut out = vec![(
        "binary search",
        digest(backend, |s, c| {
            let me = s.me();
            let d = (me == roles.owner).then_some(&data[..]);
            run_party::<BinarySearch>(s, c, d, (me == roles.querier).then_some(40))
        }),
    )];
    out.push((
        "bfs",
        digest(backend, |s, c| {
            let me = s.me();
            let g = (me == roles.owner).then_some((v, &edges[..]));
            run_party::<Bfs>(s, c, g, (me == roles.querier).then_some(0))
        }),
    ));
    out.push((
        "dijkstra",
        digest(backend, |s, c| {
            let me = s.me();
            let g = (me == roles.owner).then_some((v, &edges[..]));
            run_party::<Dijkstra>(s, c, g, (me == roles.querier).then_some(0))
        }),
    ));
    out.push((
        "matching",
        digest(backend, |s, c| {
            let p = (s.me() == roles.owner).then_some(&prefs);
            run_party::<StableMatching>(s, c, p, None)
        }),
    ));
    out
}

#[test]
fn program_messages_are_unchanged() {
    let expected: &[(&str, &str, &str)] = &[
        (
            "linear-scan",
            "binary search",
            "ba9b030e510e26c2d74032d55ffeb633",
        ),
        ("linear-scan", "bfs", "78ffbac44a8551780beb3e4f4f4390f1"),
        (
            "linear-scan",
            "dijkstra",
            "41a4806ac84589501d7747e3137ba0d7",
        ),
        (
            "linear-scan",
            "matching",
            "5a7a7b9e863668dafae96640907c6709",
        ),
        ("ramen", "binary search", "c0874a79513a54c529765c85e434e212"),
        ("ramen", "bfs", "823c95835bb2f53356ef6b76739f4d0c"),
        ("ramen", "dijkstra", "2ebced48215d12975a3e5170ac7c6dea"),
        ("ramen", "matching", "a78fcdd3aa7a029260db56a7acef0da7"),
        (
            "duoram",
            "binary search",
            "2ec65657965e680b54c66c120f16c9e5",
        ),
        ("duoram", "bfs", "7afb5d218b07b38c41c3fa14940c7faa"),
        ("duoram", "dijkstra", "93f4bfe4f679d07e6d722a2fd5fbea28"),
        ("duoram", "matching", "f01b97e839cacc84bf90ef9407970b64"),
    ];
    let mut got = Vec::new();
    for backend in BackendKind::ALL {
        for (program, d) in cases(backend) {
            got.push((backend.name(), program, d));
        }
    }
    if std::env::var_os("DORAM_PRINT_DIGESTS").is_some() {
        for (b, p, d) in &got {
            println!("        (\"{b}\", \"{p}\", \"{d}\"),");
        }
        return;
    }
    assert_eq!(got.len(), expected.len(), "cases");
    for ((b, p, d), (eb, ep, ed)) in got.iter().zip(expected) {
        assert_eq!((*b, *p), (*eb, *ep));
        assert_eq!(
            d, ed,
            "{p} on {b}: messages changed; if intended, explain why in the commit and update \
             the table (DORAM_PRINT_DIGESTS=1 prints it)"
        );
    }
}
