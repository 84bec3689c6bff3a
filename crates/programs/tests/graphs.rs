//! BFS, Dijkstra against plaintext on random graphs (single vertex, no edges, disconnected
//! parts, self-loops, parallel edges, ties and equal weights), on both backends; transcripts
//! independent of the graph and the source; input errors.

mod common;

use common::{BackendKind, run_local, run_party, run_program, transcripts};
use doram_core::Entropy;
use doram_mpc::testkit::test_seed;
use doram_programs::input::Edge;
use doram_programs::{Bfs, BfsDense, BfsQueue, Dijkstra};
use doram_programs::{InputError, PartyRun, ProgramError, Roles, bfs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// A random graph whose upper half of vertices only points among itself.
pub fn random_graph(rng: &mut ChaCha12Rng, v: u64, e: usize, max_w: u64) -> Vec<Edge> {
    (0..e)
        .map(|_| {
            // Vertices in the upper half only point among themselves: disconnected parts.
            let from = rng.random_range(0..v);
            let to = if from >= v / 2 && v > 1 {
                rng.random_range(v / 2..v)
            } else {
                rng.random_range(0..v)
            };
            Edge {
                from,
                to,
                weight: rng.random_range(0..=max_w),
            }
        })
        .collect()
}

fn output<T: Clone>(runs: &[PartyRun<T>; 3], roles: Roles) -> T {
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    runs[roles.receiver.index()]
        .output
        .clone()
        .expect("receiver output")
}

#[test]
fn bfs_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let roles = Roles::default();
    for (v, e) in [(1u64, 0usize), (1, 2), (2, 1), (5, 0), (6, 9), (9, 14)] {
        for backend in BackendKind::ALL {
            let edges = random_graph(&mut rng, v, e, 1);
            let source = rng.random_range(0..v);
            let run = |form| {
                let data = (v, &edges[..]);
                let seed = Entropy::InsecureSeed(seed);
                match form {
                    bfs::Form::Queue => run_local::<BfsQueue>(backend, roles, data, source, seed),
                    bfs::Form::Dense => run_local::<BfsDense>(backend, roles, data, source, seed),
                }
                .unwrap_or_else(|err| panic!("V = {v}, E = {e}, {form:?}: {err}"))
            };
            for form in [bfs::Form::Queue, bfs::Form::Dense] {
                let runs = run(form);
                assert_eq!(
                    output(&runs, roles),
                    bfs::plain(v, &edges, source),
                    "{} {form:?}: V = {v}, edges = {edges:?}, source = {source}",
                    backend.name()
                );
                for r in &runs {
                    assert_eq!(r.counters.inline_refills, 0);
                    // Duoram reveals the op type, the others hide it.
                    let plan = bfs::plan(v as usize, e, backend != BackendKind::Duoram, form);
                    assert_eq!(r.counters.bits_used, plan.bits as u64);
                    assert_eq!(
                        r.meter.get(doram_programs::Part::Oram).accesses,
                        plan.accesses as u64
                    );
                }
            }
        }
    }
}

#[test]
fn bfs_transcripts_depend_on_sizes_only() {
    let seed = test_seed();
    let roles = Roles::default();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 5);
    let (v, e) = (5u64, 6usize);
    for backend in BackendKind::ALL {
        let run = |edges: Vec<Edge>, source: u64| {
            transcripts(seed, backend, roles, |session, config| {
                let me = session.me();
                let g = (me == roles.owner).then_some((v, &edges[..]));
                let src = (me == roles.querier).then_some(source);
                run_party::<BfsQueue>(session, config, g, src)
            })
        };
        let dense = |edges: Vec<Edge>, source: u64| {
            transcripts(seed, backend, roles, |session, config| {
                let me = session.me();
                let g = (me == roles.owner).then_some((v, &edges[..]));
                let src = (me == roles.querier).then_some(source);
                run_party::<BfsDense>(session, config, g, src)
            })
        };
        let chain: Vec<Edge> = (0..4)
            .map(|i| Edge {
                from: i,
                to: i + 1,
                weight: 1,
            })
            .chain([
                Edge {
                    from: 4,
                    to: 0,
                    weight: 1,
                },
                Edge {
                    from: 0,
                    to: 1,
                    weight: 1,
                },
            ])
            .collect();
        let star: Vec<Edge> = vec![
            Edge {
                from: 2,
                to: 2,
                weight: 1
            };
            6
        ];
        let random = random_graph(&mut rng, v, e, 1);
        let a = run(chain.clone(), 0);
        assert_eq!(a, run(star.clone(), 2), "{}", backend.name());
        assert_eq!(a, run(random.clone(), 4), "{}", backend.name());
        let d = dense(chain, 0);
        assert_eq!(d, dense(star, 2), "{}", backend.name());
        assert_eq!(d, dense(random, 4), "{}", backend.name());
    }
}

#[test]
fn bfs_input_errors() {
    let seed = test_seed();
    let roles = Roles::default();
    let r = run_program(seed, BackendKind::LinearScan, roles, |session, config| {
        let me = session.me();
        let edges = [Edge {
            from: 0,
            to: 1,
            weight: 1,
        }];
        let g = (me == roles.owner).then_some((2, &edges[..]));
        let src = (me == roles.querier).then_some(2);
        run_party::<Bfs>(session, config, g, src)
    });
    assert!(matches!(
        r[1],
        Err(ProgramError::Input(InputError::VertexOutOfRange {
            vertex: 2,
            vertices: 2,
            ..
        }))
    ));
    let r = run_program(seed, BackendKind::LinearScan, roles, |session, config| {
        let me = session.me();
        let edges = [Edge {
            from: 0,
            to: 5,
            weight: 1,
        }];
        let g = (me == roles.owner).then_some((2, &edges[..]));
        let src = (me == roles.querier).then_some(0);
        run_party::<Bfs>(session, config, g, src)
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::Input(InputError::VertexOutOfRange { .. }))
    ));
}

#[test]
fn dijkstra_matches_plaintext() {
    use doram_programs::dijkstra;
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 7);
    let roles = Roles {
        owner: doram_core::PartyId::P1,
        querier: doram_core::PartyId::P2,
        receiver: doram_core::PartyId::P0,
    };
    // (V, E, largest weight): equal weights (max 0 or 1) make ties.
    for (v, e, max_w) in [
        (1u64, 0usize, 5u64),
        (2, 3, 0),
        (4, 0, 3),
        (5, 9, 1),
        (7, 16, u32::MAX as u64),
    ] {
        for backend in BackendKind::ALL {
            let edges = random_graph(&mut rng, v, e, max_w);
            let source = rng.random_range(0..v);
            let runs = run_local::<Dijkstra>(
                backend,
                roles,
                (v, &edges),
                source,
                Entropy::InsecureSeed(seed),
            )
            .unwrap_or_else(|err| panic!("V = {v}, E = {e}: {err}"));
            assert_eq!(
                output(&runs, roles),
                dijkstra::plain(v, &edges, source),
                "{}: V = {v}, edges = {edges:?}, source = {source}",
                backend.name()
            );
            for r in &runs {
                let plan = dijkstra::plan(v as usize);
                assert_eq!(r.counters.inline_refills, 0);
                assert_eq!(r.counters.bits_used, plan.bits as u64);
                assert_eq!(r.counters.comparisons, plan.comparisons as u64);
                assert_eq!(
                    r.meter.get(doram_programs::Part::Oram).accesses,
                    plan.accesses as u64
                );
            }
        }
    }
}

#[test]
fn dijkstra_transcripts_depend_on_sizes_only() {
    let seed = test_seed();
    let roles = Roles::default();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 9);
    let v = 4u64;
    let run = |edges: Vec<Edge>, source: u64| {
        transcripts(seed, BackendKind::LinearScan, roles, |session, config| {
            let me = session.me();
            let g = (me == roles.owner).then_some((v, &edges[..]));
            let src = (me == roles.querier).then_some(source);
            run_party::<Dijkstra>(session, config, g, src)
        })
    };
    let a = run(random_graph(&mut rng, v, 5, 100), 0);
    assert_eq!(a, run(random_graph(&mut rng, v, 5, u32::MAX as u64), 3));
    assert_eq!(
        a,
        run(
            vec![
                Edge {
                    from: 1,
                    to: 1,
                    weight: 0
                };
                5
            ],
            1
        )
    );
}
