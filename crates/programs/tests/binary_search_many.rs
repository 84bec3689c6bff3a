//! The batched binary search (many keys, one setup) against an independent `bisect_left` on
//! random sorted arrays with duplicates and odd sizes, k = 1, 2, 7 and 33 keys including keys
//! below the minimum and above the maximum: on the plaintext machine, and on every backend;
//! transcripts independent of the keys and the data; input errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::{BackendKind, RunConfig, run_program, transcripts, with_backend};
use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_net::Session;
use doram_programs::binary_search::{
    self, AccessWork, MAX_KEYS, SearchOutput, plan_many, run_plain_many,
};
use doram_programs::{InputError, Part, PartyRun, ProgramError, Roles};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// The batched search on `backend`, three threads.
fn run_local_many(
    backend: BackendKind,
    roles: Roles,
    sorted: &[u64],
    keys: &[u64],
    entropy: Entropy,
) -> Result<[PartyRun<Vec<SearchOutput>>; 3], ProgramError> {
    with_backend!(backend, B => binary_search::run_local_many::<B>(roles, sorted, keys, entropy))
}

/// One party's batched search on the configured backend.
fn run_party_many(
    session: Session,
    config: &RunConfig,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
) -> Result<PartyRun<Vec<SearchOutput>>, ProgramError> {
    with_backend!(config.backend, B => binary_search::run_many_with::<B>(
        session,
        config.seed,
        config.roles,
        data,
        keys
    ))
}

/// Python's `bisect.bisect_left`: the leftmost insertion point of `x` in the sorted `a`.
fn bisect_left(a: &[u64], x: u64) -> usize {
    let (mut lo, mut hi) = (0, a.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if a[mid] < x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The expected output for each key, from `bisect_left` alone.
fn oracle(a: &[u64], keys: &[u64]) -> Vec<SearchOutput> {
    keys.iter()
        .map(|&x| {
            let i = bisect_left(a, x);
            SearchOutput {
                index: i as u64,
                found: i < a.len() && a[i] == x,
            }
        })
        .collect()
}

/// A sorted array of `n` values below `spread` (small spreads give many duplicates).
fn sorted(rng: &mut ChaCha12Rng, n: usize, spread: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).map(|_| rng.random_range(0..spread)).collect();
    v.sort_unstable();
    v
}

/// `k` keys: below the minimum, above the maximum, present entries and random values.
fn keys(rng: &mut ChaCha12Rng, data: &[u64], k: usize) -> Vec<u64> {
    let (lo, hi) = match (data.first(), data.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (0, 0),
    };
    let mut out = Vec::with_capacity(k);
    for i in 0..k {
        out.push(match i % 5 {
            0 => lo.saturating_sub(1 + rng.random_range(0..3)),
            1 => hi.saturating_add(1 + rng.random_range(0..3)),
            2 if !data.is_empty() => data[rng.random_range(0..data.len())],
            3 => [0, u64::MAX][rng.random_range(0..2)],
            _ => rng.random_range(0..hi.saturating_add(2)),
        });
    }
    out
}

#[test]
fn bisect_oracle_agrees_with_the_library_reference() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for n in [0usize, 1, 2, 9, 100] {
        let data = sorted(&mut rng, n, 20);
        let k = keys(&mut rng, &data, 33);
        assert_eq!(oracle(&data, &k), binary_search::plain_many(&data, &k));
    }
}

#[test]
fn many_keys_on_the_plaintext_machine() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x21);
    for n in (0..40).chain([63, 64, 65, 127, 129, 131, 257, 1001, 4097]) {
        // Odd and even sizes; small spreads for duplicates, the full range for the extremes.
        let spread = if n % 3 == 0 {
            u64::MAX
        } else {
            1 + n as u64 / 2
        };
        let data = sorted(&mut rng, n, spread);
        for k in [1usize, 2, 7, 33] {
            let ks = keys(&mut rng, &data, k);
            for (hides, work) in [
                (true, AccessWork::Linear),
                (true, AccessWork::Sublinear),
                (false, AccessWork::Linear),
            ] {
                let (out, counts) = run_plain_many(&data, &ks, hides, work)
                    .unwrap_or_else(|e| panic!("n = {n}, k = {k}, seed {seed}: {e}"));
                assert_eq!(out, oracle(&data, &ks), "n = {n}, keys {ks:?}, seed {seed}");
                let plan = plan_many(n, k, work);
                assert_eq!(counts.accesses, plan.accesses, "n = {n}, k = {k}");
                assert_eq!(counts.comparisons, plan.comparisons, "n = {n}, k = {k}");
            }
        }
    }
}

/// One key in a batch is exactly the single-key search: same output, same counts.
#[test]
fn one_key_batch_is_the_single_search() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x22);
    for n in [1usize, 5, 64, 130, 1000] {
        let data = sorted(&mut rng, n, 50);
        for key in keys(&mut rng, &data, 5) {
            let single = binary_search::run_plain(&data, key, true).unwrap();
            let (many, counts) = run_plain_many(&data, &[key], true, AccessWork::Linear).unwrap();
            assert_eq!((vec![single.0], single.1), (many, counts), "n = {n}");
        }
    }
}

/// Every number of table levels, up to all loop probes and the last probe, for one and many
/// keys, with the one-hot vectors split at every level.
#[test]
fn every_table_level_count_on_the_plaintext_machine() {
    use doram_field::Fp;
    use doram_programs::PlainRam;
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x25);
    for n in (1..34).chain([64, 100, 129]) {
        let data = sorted(&mut rng, n, 1 + n as u64 / 3);
        let probes = binary_search::schedule(n).len() + 1;
        for k in [1usize, 2, 7, 33] {
            let ks = keys(&mut rng, &data, k);
            let want = oracle(&data, &ks);
            for (t, split) in (0..=probes).flat_map(|t| (0..=t).map(move |s| (t, s))) {
                let mut m = PlainRam::new(true);
                let array = m.alloc_ints(&data).unwrap();
                m.boot().unwrap();
                let tables: Vec<Vec<Fp>> = binary_search::probe_tables(&data, t)
                    .into_iter()
                    .map(|t| t.into_iter().map(Fp::from_u64).collect())
                    .collect();
                assert_eq!(tables.len(), t);
                let words: Vec<Fp> = ks.iter().map(|&x| Fp::from_u64(x)).collect();
                let got: Vec<SearchOutput> =
                    binary_search::search_many_split(&mut m, array, &words, &tables, split)
                        .unwrap()
                        .into_iter()
                        .map(|(i, f)| SearchOutput {
                            index: i.to_u128() as u64,
                            found: f,
                        })
                        .collect();
                assert_eq!(
                    got, want,
                    "n = {n}, k = {k}, t = {t}, split {split}, seed {seed}"
                );
                // Every probe from a table: only the final read touches the memory.
                if t == probes {
                    assert_eq!(m.counts().accesses, k, "n = {n}");
                }
                assert!(m.counts().accesses >= k);
            }
        }
    }
}

/// A batch large enough for the k-dependent rule to take every probe from the tables.
#[test]
fn large_batches_read_only_the_final_entry_from_the_memory() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x26);
    let roles = Roles::default();
    let n = 64;
    let k = 256;
    let probes = binary_search::schedule(n).len() + 1;
    assert_eq!(
        binary_search::table_levels(n, k, AccessWork::Linear),
        probes
    );
    assert_eq!(plan_many(n, k, AccessWork::Linear).accesses, k);
    let data = sorted(&mut rng, n, 40);
    let ks = keys(&mut rng, &data, k);
    let (out, _) = run_plain_many(&data, &ks, false, AccessWork::Linear).unwrap();
    assert_eq!(out, oracle(&data, &ks));
    for backend in [BackendKind::LinearScan, BackendKind::Duoram] {
        let runs = run_local_many(backend, roles, &data, &ks, Entropy::InsecureSeed(seed)).unwrap();
        assert_eq!(
            receiver(&runs, roles),
            oracle(&data, &ks),
            "{}",
            backend.name()
        );
        for r in &runs {
            assert_eq!(r.meter.get(Part::Oram).accesses, k as u64);
        }
    }
}

fn receiver(runs: &[PartyRun<Vec<SearchOutput>>; 3], roles: Roles) -> Vec<SearchOutput> {
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.output.is_some(), i == roles.receiver.index());
    }
    runs[roles.receiver.index()].output.clone().unwrap()
}

#[test]
fn many_keys_on_every_backend() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x23);
    let roles = Roles::default();
    // (n, k) per backend; n = 130 and 200 use engine tables for the first probes.
    let cases: [(BackendKind, &[(usize, usize)]); 3] = [
        (
            BackendKind::LinearScan,
            &[(0, 2), (1, 7), (13, 33), (130, 7)],
        ),
        (BackendKind::Ramen, &[(1, 2), (17, 7), (200, 2)]),
        (BackendKind::Duoram, &[(1, 1), (13, 33), (130, 7), (64, 2)]),
    ];
    for (backend, sizes) in cases {
        for &(n, k) in sizes {
            let data = sorted(&mut rng, n, 3 + n as u64);
            let ks = keys(&mut rng, &data, k);
            let runs = run_local_many(backend, roles, &data, &ks, Entropy::InsecureSeed(seed))
                .unwrap_or_else(|e| panic!("{}: n = {n}, k = {k}: {e}", backend.name()));
            assert_eq!(
                receiver(&runs, roles),
                oracle(&data, &ks),
                "{}: n = {n}, keys {ks:?}, data {data:?}",
                backend.name()
            );
            let work = match backend {
                BackendKind::Ramen => AccessWork::Sublinear,
                _ => AccessWork::Linear,
            };
            let plan = plan_many(n, k, work);
            for r in &runs {
                assert_eq!(r.counters.inline_refills, 0);
                assert_eq!(r.counters.bits_used, plan.bits as u64);
                assert_eq!(r.meter.get(Part::Oram).accesses, plan.accesses as u64);
            }
        }
    }
}

#[test]
fn many_keys_with_other_roles() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x24);
    // The querier also receives; the owner is P1.
    let roles = Roles {
        owner: PartyId::P1,
        querier: PartyId::P2,
        receiver: PartyId::P2,
    };
    let data = sorted(&mut rng, 21, 9);
    let ks = keys(&mut rng, &data, 7);
    let runs = run_local_many(
        BackendKind::Duoram,
        roles,
        &data,
        &ks,
        Entropy::InsecureSeed(seed),
    )
    .unwrap();
    assert_eq!(receiver(&runs, roles), oracle(&data, &ks));
}

/// The engine's rounds do not grow with k: on Duoram the whole run of 33 keys takes as many
/// rounds as that of 2 keys (the reads of a step share their rounds, up to 1024 reads).
#[test]
fn rounds_grow_with_n_not_with_k() {
    let seed = test_seed();
    let roles = Roles::default();
    let data: Vec<u64> = (0..40).map(|i| 2 * i).collect();
    let rounds = |k: usize| {
        let ks: Vec<u64> = (0..k as u64).collect();
        let runs = run_local_many(
            BackendKind::Duoram,
            roles,
            &data,
            &ks,
            Entropy::InsecureSeed(seed),
        )
        .unwrap();
        runs.map(|r| r.meter.total().rounds)
    };
    assert_eq!(rounds(2), rounds(33));
}

/// Each party's transcript for fixed n and k is the same whatever the array and the keys.
#[test]
fn transcripts_depend_on_n_and_k_only() {
    let seed = test_seed();
    let roles = Roles::default();
    for backend in BackendKind::ALL {
        let run = |data: Vec<u64>, keys: Vec<u64>| {
            transcripts(seed, backend, roles, |session, config| {
                let me = session.me();
                let d = (me == roles.owner).then_some(&data[..]);
                let k = (me == roles.querier).then_some(&keys[..]);
                run_party_many(session, config, d, k)
            })
        };
        let a = run((1..=11).collect(), vec![0, 5, 12]);
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
            vec![u64::MAX, u64::MAX, 3],
        );
        let c = run(vec![7; 11], vec![7, 7, 7]);
        assert_eq!(a, b, "{}", backend.name());
        assert_eq!(a, c, "{}", backend.name());
        // With engine tables (n = 130: two levels).
        let ramp: Vec<u64> = (0..130).collect();
        let a = run(ramp.clone(), vec![0, 129]);
        assert_eq!(a, run(ramp, vec![200, 64]), "{}", backend.name());
        assert_eq!(
            a,
            run(vec![u64::MAX; 130], vec![3, u64::MAX]),
            "{}",
            backend.name()
        );
    }
}

#[test]
fn batch_input_errors_are_typed_and_local() {
    let seed = test_seed();
    let roles = Roles::default();
    let backend = BackendKind::LinearScan;
    // Too many keys: the querier fails before sending.
    let many: Vec<u64> = (0..=MAX_KEYS).collect();
    let r = run_program(seed, backend, roles, |session, config| {
        let me = session.me();
        let d = (me == roles.owner).then_some(&[1u64, 2][..]);
        let k = (me == roles.querier).then_some(&many[..]);
        run_party_many(session, config, d, k)
    });
    assert!(matches!(
        r[1],
        Err(ProgramError::Input(InputError::TooLarge { got, max: MAX_KEYS, .. })) if got == MAX_KEYS + 1
    ));
    assert!(r[0].is_err() && r[2].is_err());
    // Keys at a party other than the querier.
    let r = run_program(seed, backend, roles, |session, config| {
        let me = session.me();
        let d = (me == roles.owner).then_some(&[1u64][..]);
        run_party_many(session, config, d, Some(&[1u64][..]))
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::Input(InputError::Role(_)))
    ));
    // Unsorted data at the owner.
    let r = run_program(seed, backend, roles, |session, config| {
        let me = session.me();
        let d = (me == roles.owner).then_some(&[3u64, 1][..]);
        let k = (me == roles.querier).then_some(&[1u64][..]);
        run_party_many(session, config, d, k)
    });
    assert!(matches!(
        r[0],
        Err(ProgramError::Input(InputError::Unsorted { line: 2, .. }))
    ));
}

/// The matrix reading of the tables on a secure machine: every probe from a table, the one-hot
/// vectors split after two bits.
#[test]
fn split_one_hot_tables_on_a_secure_machine() {
    use doram_duoram::Duoram;
    use doram_field::Fp;
    use doram_programs::{Machine, run_three, to_int};
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x27);
    let n = 40;
    let data = sorted(&mut rng, n, 25);
    let ks = keys(&mut rng, &data, 5);
    let t = binary_search::schedule(n).len() + 1;
    let tables = binary_search::probe_tables(&data, t);
    let r = run_three(Entropy::InsecureSeed(seed), |session, s| {
        let me = session.me();
        let mut m = Machine::<Duoram<Fp>>::setup(session, s)?;
        let owner = (me == PartyId::P0).then_some(&ks[..]);
        let keys = m.input_vector(PartyId::P0, owner, ks.len())?;
        let flat: Vec<u64> = tables.concat();
        let owned = (me == PartyId::P0).then_some(&flat[..]);
        let v = m.input_vector(PartyId::P0, owned, flat.len())?;
        let tabs: Vec<Vec<_>> = (0..t)
            .map(|j| v[(1 << j) - 1..(1 << (j + 1)) - 1].to_vec())
            .collect();
        let owned = (me == PartyId::P0).then_some(&data[..]);
        let array = m.alloc_input(PartyId::P0, owned, n)?;
        m.boot(0)?;
        let res = binary_search::search_many_split(&mut m, array, &keys, &tabs, 2)?;
        assert_eq!(m.meter().get(Part::Oram).accesses, ks.len() as u64);
        let flat: Vec<_> = res.iter().flat_map(|&(i, f)| [i, f.value()]).collect();
        let o = m.cpu(|on| on.open_many(&flat))?;
        o.chunks(2)
            .map(|c| {
                Ok(SearchOutput {
                    index: to_int(c[0], n as u128 + 1, "index")?,
                    found: to_int(c[1], 2, "found")? == 1,
                })
            })
            .collect::<Result<Vec<_>, ProgramError>>()
    });
    for out in r {
        assert_eq!(out.unwrap(), oracle(&data, &ks));
    }
}

/// Which backends take the large tables of a batch.
#[test]
fn access_work_of_each_backend() {
    use doram_duoram::Duoram;
    use doram_field::Fp;
    use doram_oram::LinearScanOram;
    use doram_ramen::Ramen;
    assert_eq!(AccessWork::of::<Ramen>(), AccessWork::Sublinear);
    assert_eq!(AccessWork::of::<Duoram<Fp>>(), AccessWork::Linear);
    assert_eq!(AccessWork::of::<LinearScanOram<Fp>>(), AccessWork::Linear);
    let (n, k) = (131_073, 1000);
    assert_eq!(
        binary_search::table_levels(n, k, AccessWork::Sublinear),
        binary_search::engine_levels(n)
    );
    assert_eq!(binary_search::table_levels(n, k, AccessWork::Linear), 19);
}
