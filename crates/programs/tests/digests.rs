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
use doram_programs::{BfsDense, BfsQueue, BinarySearch, Dijkstra, StableMatching};
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
        "bfs queue",
        digest(backend, |s, c| {
            let me = s.me();
            let g = (me == roles.owner).then_some((v, &edges[..]));
            run_party::<BfsQueue>(s, c, g, (me == roles.querier).then_some(0))
        }),
    ));
    out.push((
        "bfs dense",
        digest(backend, |s, c| {
            let me = s.me();
            let g = (me == roles.owner).then_some((v, &edges[..]));
            run_party::<BfsDense>(s, c, g, (me == roles.querier).then_some(0))
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
            "8bb1471e065bd12357d36504b37bf8ba",
        ),
        (
            "linear-scan",
            "bfs queue",
            "b0a9c9313bcf0d76357975bb573080a9",
        ),
        (
            "linear-scan",
            "bfs dense",
            "80558bcb429840e6d84a7be947250ad9",
        ),
        (
            "linear-scan",
            "dijkstra",
            "80adfa31a5680795e58d911287d2838c",
        ),
        (
            "linear-scan",
            "matching",
            "3b8dfc8a9d9b2f8a803d2f2311203496",
        ),
        ("ramen", "binary search", "415381fd59f993359b4f7ac67bc23b7d"),
        ("ramen", "bfs queue", "6f53a8f77bb9915f6b5ed35500c320c6"),
        ("ramen", "bfs dense", "91dc6b1955287fbf020c6fa09d5a9898"),
        ("ramen", "dijkstra", "aee4deb8e86d1080dcbc76e9d99aa61c"),
        ("ramen", "matching", "e300d6b993e3dbe2ff9bbc5990bc9d40"),
        (
            "duoram",
            "binary search",
            "5b7940ef224bd5b8d41aefdfa97d3369",
        ),
        ("duoram", "bfs queue", "2090ec813fb1e161ebe44eaa1f7216d8"),
        ("duoram", "bfs dense", "7bd5c29ee0374620594299eb5912cdf6"),
        ("duoram", "dijkstra", "f420cde3565d29e4cde90226ae2ac966"),
        ("duoram", "matching", "cf023463bfbf9073df445cce38006d83"),
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
