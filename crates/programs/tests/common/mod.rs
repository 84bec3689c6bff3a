//! Three-party runs shared by the program tests, and the tests' own choice of backend: the
//! library is generic over the backend, and the tests that loop over every backend dispatch
//! here ([`BackendKind`], [`with_backend!`]), on the protocols they have as dev-dependencies.

// Each test binary uses a subset of these helpers.
#![allow(dead_code, unused_macros, unused_imports)]

use doram_core::{Entropy, Seed};
use doram_net::{Session, Transcript};
use doram_programs::{PartyRun, Program, ProgramError, Roles, run_three};

/// The backends the tests run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// `LinearScanOram<Fp>`.
    LinearScan,
    /// `Ramen`.
    Ramen,
    /// `Duoram<Fp>`.
    Duoram,
    /// `Fjkw15FpMemory` (FJKW15 over F_p words). Not in [`BackendKind::ALL`]: its Init is a
    /// shared load of n accesses, so tests/fjkw15.rs runs it at small sizes on its own.
    Fjkw15,
}

/// Runs `$body` with the type alias `$b` set to the backend `$kind` names.
macro_rules! with_backend {
    ($kind:expr, $b:ident => $body:expr) => {
        match $kind {
            $crate::common::BackendKind::LinearScan => {
                type $b = ::doram_oram::LinearScanOram<::doram_field::Fp>;
                $body
            }
            $crate::common::BackendKind::Ramen => {
                type $b = ::doram_ramen::Ramen;
                $body
            }
            $crate::common::BackendKind::Duoram => {
                type $b = ::doram_duoram::Duoram<::doram_field::Fp>;
                $body
            }
            $crate::common::BackendKind::Fjkw15 => {
                type $b = ::doram_fjkw15::backend::Fjkw15FpMemory;
                $body
            }
        }
    };
}
pub(crate) use with_backend;

impl BackendKind {
    /// Every backend.
    pub const ALL: [BackendKind; 3] = [
        BackendKind::LinearScan,
        BackendKind::Ramen,
        BackendKind::Duoram,
    ];

    /// The backend's protocol name.
    pub fn name(self) -> &'static str {
        with_backend!(self, B => <B as doram_oram::Protocol>::NAME)
    }
}

/// One party's configuration of a test run.
#[derive(Clone, Copy, Debug)]
pub struct RunConfig {
    /// The backend.
    pub backend: BackendKind,
    /// The roles.
    pub roles: Roles,
    /// This party's seed.
    pub seed: Seed,
}

/// One party's run of `P` on the configured backend.
pub fn run_party<P: Program>(
    session: Session,
    config: &RunConfig,
    data: Option<P::Data<'_>>,
    query: Option<P::Query>,
) -> Result<PartyRun<P::Output>, ProgramError> {
    with_backend!(config.backend, B => doram_programs::run_party::<P, B>(
        session,
        config.seed,
        config.roles,
        data,
        query
    ))
}

/// The three parties' runs of `P` on `backend`, as threads over an in-process mesh.
pub fn run_local<P: Program>(
    backend: BackendKind,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    with_backend!(backend, B => doram_programs::run_local::<P, B>(roles, data, query, entropy))
}

/// Runs `party` at each of three parties of an in-process mesh with `backend` and `roles`,
/// each party's seed derived from the test seed; returns the three results in party order.
pub fn run_program<T: Send>(
    seed: u64,
    backend: BackendKind,
    roles: Roles,
    party: impl Fn(Session, &RunConfig) -> Result<T, ProgramError> + Sync,
) -> [Result<T, ProgramError>; 3] {
    run_three(Entropy::InsecureSeed(seed), |session, s| {
        let config = RunConfig {
            backend,
            roles,
            seed: s,
        };
        party(session, &config)
    })
}

/// [`run_program`] with every session recording; returns the three transcripts.
pub fn transcripts<T>(
    seed: u64,
    backend: BackendKind,
    roles: Roles,
    party: impl Fn(Session, &RunConfig) -> Result<PartyRun<T>, ProgramError> + Sync,
) -> [Transcript; 3] {
    run_program(seed, backend, roles, |mut session, config| {
        session.record_transcript(true);
        // The machine owns the session; recording continues inside.
        Ok(party(session, config)?.transcript.expect("recording"))
    })
    .map(|r| r.expect("run"))
}

// ---------------------------------------------------------------------------------------------
// Two parties.

/// Runs `P` on the two-party host `H` between two threads and checks the receiver's output
/// (and only the receiver's) against the plaintext reference; returns both parties' runs.
pub fn check_two<P: Program, H: doram_programs::Host>(
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    seed: u64,
) -> Vec<PartyRun<P::Output>>
where
    P::Output: Clone + PartialEq + std::fmt::Debug,
{
    let runs = doram_programs::run_local_host::<P, H>(
        doram_net::LocalMesh::new(2),
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
    let got = runs[roles.receiver.index()]
        .output
        .clone()
        .expect("the receiver's output");
    assert_eq!(got, P::reference(data, query), "{}", P::NAME);
    runs
}

/// Each party's transcript of one binary search of `key` in `data` on the two-party host `H`
/// (owner `P0`, querier and receiver `P1`).
pub fn binary_search_transcripts_two<H: doram_programs::Host>(
    data: &[u64],
    key: u64,
    seed: u64,
) -> Vec<Transcript> {
    let roles = Roles::two_party();
    let runs = doram_net::run_parties(doram_net::LocalMesh::new(2).build(), "program", |mut s| {
        s.record_transcript(true);
        let me = s.me();
        let ps = Entropy::InsecureSeed(seed).party_seed(me, "program");
        let d = (me == roles.owner).then_some(data);
        let q = (me == roles.querier).then_some(key);
        doram_programs::BinarySearch::run_on::<H>(s, ps, roles, d, q).expect("the search runs")
    });
    runs.into_iter()
        .map(|r| r.expect("no panic").transcript.expect("recording"))
        .collect()
}

/// Runs `party` between two threads once per (direction, frame) with that frame one byte
/// short; where the frame exists, the receiving party's run must end with an error naming the
/// sender (or the closed link), never a panic, a hang or an output. Returns how many cases hit
/// a frame.
pub fn short_frames_two(
    frames: &[u64],
    party: impl Fn(Session) -> Result<bool, ProgramError> + Sync,
) -> usize {
    use doram_core::PartyId;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut cases = 0;
    for (from, to) in [(PartyId::P0, PartyId::P1), (PartyId::P1, PartyId::P0)] {
        for &frame in frames {
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
            let runs = doram_net::run_parties(mesh.build(), "program", &party);
            if !hit.load(Ordering::SeqCst) {
                continue;
            }
            cases += 1;
            let at_receiver = runs
                .into_iter()
                .nth(to.index())
                .expect("two parties")
                .expect("no panic");
            match at_receiver {
                Err(err) => assert!(
                    err.peer() == Some(from) || matches!(err, ProgramError::Net(_)),
                    "{from}→{to} frame {frame}: {err}"
                ),
                Ok(_) => panic!("{from}→{to} frame {frame}: a short frame went unnoticed"),
            }
        }
    }
    cases
}

/// Every program on the two-party host `H` against its plaintext reference, on random inputs
/// from `seed`: binary and linear search on sorted arrays of each of `search_sizes` entries
/// (the middle key and one above every entry; with the roles flipped for the second size),
/// BFS in both forms, Dijkstra and stable matching.
pub fn every_program_two<H: doram_programs::Host>(search_sizes: &[usize], seed: u64) {
    use doram_core::PartyId;
    use doram_programs::input::{Edge, Prefs};
    use doram_programs::{
        BfsDense, BfsQueue, BinarySearch, Dijkstra, LinearSearch, StableMatching,
    };
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let flipped = Roles {
        owner: PartyId::P1,
        querier: PartyId::P0,
        receiver: PartyId::P0,
    };
    for (k, &n) in search_sizes.iter().enumerate() {
        let roles = if k == 1 { flipped } else { Roles::two_party() };
        let mut data: Vec<u64> = (0..n).map(|_| rng.random_range(0..200)).collect();
        data.sort_unstable();
        for key in [data[n / 2], 201] {
            check_two::<BinarySearch, H>(roles, &data, key, seed);
        }
        check_two::<LinearSearch, H>(roles, &data, data[0], seed);
    }
    let edge = |rng: &mut rand_chacha::ChaCha12Rng, v: u64, w: u64| Edge {
        from: rng.random_range(0..v),
        to: rng.random_range(0..v),
        weight: rng.random_range(0..=w),
    };
    let v = 6u64;
    let unit: Vec<Edge> = (0..9).map(|_| edge(&mut rng, v, 1)).collect();
    let weighted: Vec<Edge> = (0..9).map(|_| edge(&mut rng, v, 9)).collect();
    check_two::<BfsQueue, H>(Roles::two_party(), (v, &unit), 0, seed);
    check_two::<BfsDense, H>(Roles::two_party(), (v, &unit), 1, seed);
    check_two::<Dijkstra, H>(Roles::two_party(), (v, &weighted), 2, seed);
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
    check_two::<StableMatching, H>(Roles::two_party(), &prefs, (), seed);
}
