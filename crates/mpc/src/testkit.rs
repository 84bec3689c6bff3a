//! Test harness (feature `testkit`): runs three parties on an in-process mesh, one thread each,
//! with deterministic seeds, for the tests of this crate and of the protocol crates built on it.
//!
//! ```
//! use doram_core::PartyId;
//! use doram_field::Fp;
//! use doram_mpc::{Input, testkit};
//!
//! let seed = testkit::test_seed();
//! let six = [Fp::from_u64(6)];
//! let [a, b, c] = testkit::run_mpc3(seed, |mpc| {
//!     let input = match mpc.me() {
//!         PartyId::P0 => Input::Own(&six),
//!         _ => Input::Peer { dealer: PartyId::P0, count: 1 },
//!     };
//!     let x = mpc.input_replicated(input)?;
//!     let square = mpc.mul(&x, &x)?;
//!     mpc.open_replicated(&square)
//! });
//! assert_eq!(a.unwrap(), vec![Fp::from_u64(36)]);
//! assert_eq!(b.unwrap(), c.unwrap());
//! ```

use std::hash::{BuildHasher, Hasher};

use doram_core::{PartyId, Seed};
use doram_net::Session;

use crate::driver::Mpc3;
use crate::error::MpcError;

/// The environment variable that fixes the seed of randomized tests (a decimal `u64`).
pub const SEED_VAR: &str = "DORAM_TEST_SEED";

/// The seed of a randomized test: `DORAM_TEST_SEED` if set, else a fresh random one. It is
/// printed to stderr, which the test runner shows when the test fails, so that the run can be
/// replayed.
///
/// # Panics
/// If `DORAM_TEST_SEED` is set but is not a decimal `u64`.
pub fn test_seed() -> u64 {
    let seed = match std::env::var(SEED_VAR) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{SEED_VAR}={s:?} is not a u64: {e}")),
        Err(_) => {
            // The standard library's per-process random hash keys: enough entropy for picking
            // a test seed, with no extra dependency.
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(0x5eed);
            h.finish()
        }
    };
    eprintln!("{SEED_VAR}={seed}");
    seed
}

/// The local seed of `party` in the test run `test_seed` (distinct for each party and run).
pub fn party_seed(test_seed: u64, party: PartyId) -> Seed {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&test_seed.to_le_bytes());
    s[8] = party.index() as u8;
    s[9..].copy_from_slice(b"mpc-tst");
    Seed(s)
}

/// Runs `f` on the three sessions of a fresh [`Session::local_mesh`], one thread per party, and
/// returns the three results in party order.
///
/// # Panics
/// If a party's thread panics (the panic is propagated after all threads have ended; the
/// panicking party's session is dropped, so its peers see a closed link rather than hang).
pub fn run3<T: Send>(f: impl Fn(Session) -> T + Sync) -> [T; 3] {
    run3_on(Session::local_mesh(3), f)
}

/// [`run3`] on the given three sessions, e.g. a mesh with a tamper hook
/// ([`doram_net::LocalMesh`]).
///
/// # Panics
/// If `sessions` are not three, or as [`run3`].
pub fn run3_on<T: Send>(sessions: Vec<Session>, f: impl Fn(Session) -> T + Sync) -> [T; 3] {
    assert_eq!(sessions.len(), 3, "run3_on needs exactly three sessions");
    let mut it = doram_net::testkit::run(sessions, f).into_iter();
    std::array::from_fn(|_| it.next().expect("three results"))
}

/// Sets up an [`Mpc3`] on each party of a fresh local mesh with the seeds
/// [`party_seed`]`(test_seed, ·)` and runs `f` on it; returns the three results in party order.
///
/// # Panics
/// As [`run3`].
pub fn run_mpc3<T: Send>(
    test_seed: u64,
    f: impl Fn(&mut Mpc3) -> Result<T, MpcError> + Sync,
) -> [Result<T, MpcError>; 3] {
    run_mpc3_on(Session::local_mesh(3), test_seed, f)
}

/// [`run_mpc3`] on the given three sessions.
///
/// # Panics
/// As [`run3_on`].
pub fn run_mpc3_on<T: Send>(
    sessions: Vec<Session>,
    test_seed: u64,
    f: impl Fn(&mut Mpc3) -> Result<T, MpcError> + Sync,
) -> [Result<T, MpcError>; 3] {
    run3_on(sessions, |session| {
        let seed = party_seed(test_seed, session.me());
        let mut mpc = Mpc3::setup(session, seed)?;
        f(&mut mpc)
    })
}
