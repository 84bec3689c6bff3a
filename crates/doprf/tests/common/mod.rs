//! Shared helpers of the integration tests: deterministic shared inputs and a three-party run
//! of one DOPRF instance.

#![allow(dead_code)]

use doram_core::PartyId;
use doram_doprf::{Doprf, DoprfError, Params, Roles};
use doram_field::Fp;
use doram_mpc::Additive;
use doram_mpc::testkit::{party_seed, run3_on};
use doram_net::Session;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

/// `count` random values and a random additive sharing of them: `shares[i]` is `P_i`'s.
pub fn shared_inputs(seed: u64, count: usize) -> ([Vec<Additive<Fp>>; 3], Vec<Fp>) {
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x1a9u64);
    let x: Vec<Fp> = (0..count).map(|_| Fp::random(&mut rng)).collect();
    let s0: Vec<Fp> = (0..count).map(|_| Fp::random(&mut rng)).collect();
    let s1: Vec<Fp> = (0..count).map(|_| Fp::random(&mut rng)).collect();
    let s2: Vec<Fp> = (0..count).map(|i| x[i] - s0[i] - s1[i]).collect();
    ([s0, s1, s2].map(Additive::from_shares), x)
}

/// Runs `f` at each party of `sessions` after setting up the instance (`params`, `roles`,
/// seeds from `test_seed`); returns the three results in party order.
pub fn run_instance<T: Send>(
    sessions: Vec<Session>,
    test_seed: u64,
    params: Params,
    roles: Roles,
    f: impl Fn(&mut Session, &mut Doprf) -> Result<T, DoprfError> + Sync,
) -> [Result<T, DoprfError>; 3] {
    run3_on(sessions, |mut session| {
        let seed = party_seed(test_seed, session.me());
        let mut doprf = Doprf::setup(&mut session, params, roles, seed)?;
        f(&mut session, &mut doprf)
    })
}

/// The three parties, in order.
pub const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];
