//! Binary search against the plaintext search on random sorted arrays (empty, single, odd
//! sizes, duplicates, keys at and beyond both ends), on the linear-scan and Ramen backends and
//! as a linear scan in the engine; transcripts independent of the secrets; input errors.

mod common;

use common::{BackendKind, run_local, run_party, run_program, transcripts};
use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_programs::binary_search::{self, SearchOutput, plain};
use doram_programs::{BinarySearch, LinearSearch};
use doram_programs::{InputError, ProgramError, Roles, run_three};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn sorted(rng: &mut ChaCha12Rng, n: usize, spread: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).map(|_| rng.random_range(0..spread)).collect();
    v.sort_unstable();
    v
}

fn keys(rng: &mut ChaCha12Rng, data: &[u64]) -> Vec<u64> {
    let mut k = vec![0, u64::MAX, rng.random()];
    if let (Some(&a), Some(&b)) = (data.first(), data.last()) {
        k.extend([a, b, a.saturating_sub(1), b.saturating_add(1)]);
        k.push(data[rng.random_range(0..data.len())]);
    }
    k
}

fn receiver_output(
    runs: &[doram_programs::PartyRun<SearchOutput>; 3],
    roles: Roles,
) -> SearchOutput {
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    runs[roles.receiver.index()]
        .output
        .expect("receiver output")
}

#[test]
fn matches_plaintext_on_linear_scan_and_duoram() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let roles = Roles::default();
    for n in [0usize, 1, 2, 3, 5, 8, 13, 33, 64, 300, 1000] {
        let spread = if n % 2 == 0 { 10 } else { u64::MAX };
        let data = sorted(&mut rng, n, spread);
        for (i, key) in keys(&mut rng, &data).into_iter().enumerate() {
            let backend = if i % 2 == 0 {
                BackendKind::LinearScan
            } else {
                BackendKind::Duoram
            };
            let runs =
                run_local::<BinarySearch>(backend, roles, &data, key, Entropy::InsecureSeed(seed))
                    .unwrap_or_else(|e| panic!("{}: n = {n}, key = {key}: {e}", backend.name()));
            assert_eq!(
                receiver_output(&runs, roles),
                plain(&data, key),
                "n = {n}, key = {key}, data = {data:?}"
            );
            // Exactly the planned random bits were used, all preprocessed.
            for r in &runs {
                assert_eq!(r.counters.inline_refills, 0);
                assert_eq!(r.counters.bits_used, binary_search::plan(n).bits as u64);
                assert_eq!(
                    r.meter.get(doram_programs::Part::Oram).accesses,
                    binary_search::plan(n).accesses as u64
                );
            }
        }
    }
}

#[test]
fn matches_plaintext_on_ramen_with_other_roles() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 1);
    // The owner also receives; the querier is P0.
    let roles = Roles {
        owner: PartyId::P2,
        querier: PartyId::P0,
        receiver: PartyId::P2,
    };
    for n in [0usize, 1, 17, 40, 200] {
        let data = sorted(&mut rng, n, 50);
        for key in keys(&mut rng, &data).into_iter().take(4) {
            let runs = run_local::<BinarySearch>(
                BackendKind::Ramen,
                roles,
                &data,
                key,
                Entropy::InsecureSeed(seed),
            )
            .unwrap();
            assert_eq!(
                receiver_output(&runs, roles),
                plain(&data, key),
                "n = {n}, key = {key}"
            );
        }
    }
}

#[test]
fn linear_scan_in_the_engine_matches_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 2);
    let roles = Roles::default();
    for n in [0usize, 1, 6, 21] {
        let data = sorted(&mut rng, n, 12);
        for key in keys(&mut rng, &data) {
            let runs = run_local::<LinearSearch>(
                BackendKind::LinearScan,
                roles,
                &data,
                key,
                Entropy::InsecureSeed(seed),
            )
            .unwrap();
            assert_eq!(
                receiver_output(&runs, roles),
                plain(&data, key),
                "n = {n}, key = {key}"
            );
        }
    }
}

/// Each party's transcript for fixed n is the same for different arrays and keys.
#[test]
fn transcripts_depend_on_n_only() {
    let seed = test_seed();
    let roles = Roles::default();
    for backend in BackendKind::ALL {
        let run = |data: Vec<u64>, key: u64| {
            transcripts(seed, backend, roles, |session, config| {
                let me = session.me();
                let d = (me == roles.owner).then_some(&data[..]);
                let k = (me == roles.querier).then_some(key);
                run_party::<BinarySearch>(session, config, d, k)
            })
        };
        let a = run(vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0);
        let b = run(
            vec![
                0,
                0,
                0,
                5,
                9,
                100,
                1000,
                1 << 40,
                u64::MAX - 1,
                u64::MAX,
                u64::MAX,
            ],
            u64::MAX,
        );
        let c = run(vec![7; 11], 7);
        assert_eq!(a, b, "{}", backend.name());
        assert_eq!(a, c, "{}", backend.name());
        // With engine tables (n = 130: two levels).
        let ramp: Vec<u64> = (0..130).collect();
        let a = run(ramp.clone(), 0);
        assert_eq!(a, run(ramp, 129), "{}", backend.name());
        assert_eq!(a, run(vec![u64::MAX; 130], 3), "{}", backend.name());
    }
}

#[test]
fn role_input_errors_are_typed_and_local() {
    let seed = test_seed();
    let roles = Roles::default();
    let backend = BackendKind::LinearScan;
    // Unsorted data: the owner fails before sending; the others see the link close.
    let r = run_program(seed, backend, roles, |session, config| {
        let me = session.me();
        let d = (me == roles.owner).then_some(&[3u64, 1][..]);
        let k = (me == roles.querier).then_some(1);
        run_party::<BinarySearch>(session, config, d, k)
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::Input(InputError::Unsorted {
            line: 2,
            value: 1,
            previous: 3
        }))
    ));
    assert!(r[1].is_err() && r[2].is_err());
    // A missing key at the querier.
    let r = run_program(seed, backend, roles, |session, config| {
        let me = session.me();
        let d = (me == roles.owner).then_some(&[1u64][..]);
        run_party::<BinarySearch>(session, config, d, None)
    });
    assert!(matches!(
        r[1],
        Err(ProgramError::Input(InputError::Role(_)))
    ));
}

/// Every loop probe from engine tables, at small sizes (the entry points use tables only from
/// n = 64 on).
#[test]
fn all_table_levels_match_plaintext() {
    use doram_field::Fp;
    use doram_mpc::Input;
    use doram_oram::LinearScanOram;
    use doram_programs::{Machine, Part, to_int};
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 4);
    for n in [1usize, 2, 3, 5, 9, 16, 23] {
        let data = sorted(&mut rng, n, 30);
        let t = binary_search::schedule(n).len();
        let tables = binary_search::probe_tables(&data, t);
        assert_eq!(tables.iter().map(Vec::len).sum::<usize>(), (1 << t) - 1);
        for key in keys(&mut rng, &data) {
            let r = run_three(Entropy::InsecureSeed(seed), |session, s| {
                let me = session.me();
                let mut m = Machine::<LinearScanOram<Fp>>::setup(session, s)?;
                let flat: Vec<u64> = tables.concat();
                let k = [key];
                let (v, key) = m.engine_in(Part::Input, |on| {
                    let v = on.input(if me == PartyId::P0 {
                        Input::Own(&flat[..])
                    } else {
                        Input::Peer {
                            dealer: PartyId::P0,
                            count: flat.len(),
                        }
                    })?;
                    let key = on.input(if me == PartyId::P0 {
                        Input::Own(&k[..])
                    } else {
                        Input::Peer {
                            dealer: PartyId::P0,
                            count: 1,
                        }
                    })?;
                    Ok((v, key[0]))
                })?;
                let tabs: Vec<Vec<_>> = (0..t)
                    .map(|j| v[(1 << j) - 1..(1 << (j + 1)) - 1].to_vec())
                    .collect();
                let owned = (me == PartyId::P0).then_some(&data[..]);
                let array = m.alloc_input(PartyId::P0, owned, n)?;
                m.boot(0)?;
                let (i, f) = binary_search::search(&mut m, array, key, &tabs)?;
                let o = m.cpu(|on| on.open_many(&[i, f.value()]))?;
                assert_eq!(m.meter().get(Part::Oram).accesses, 2);
                Ok(SearchOutput {
                    index: to_int(o[0], n as u128 + 1, "index")?,
                    found: to_int(o[1], 2, "found")? == 1,
                })
            });
            for out in r {
                assert_eq!(out.expect("run"), plain(&data, key), "n = {n}, key = {key}");
            }
        }
    }
}
