//! Both protocols over in-process sessions agree with the plaintext Legendre PRF (through the
//! relations of the ideal functionality, Ramen Fig. 8) for every assignment of the roles, on
//! batches of 0, 1 and many, across preprocessing batches and a rekey.

mod common;

use common::{ALL, run_instance, shared_inputs};
use doram_core::PartyId;
use doram_doprf::ideal::{IdealOutputs, consistent};
use doram_doprf::{Doprf, DoprfError, LegendreKey, LegendrePrf, Mode, Params, Role, Roles};
use doram_mpc::testkit::{party_seed, test_seed};
use doram_net::Session;

const BATCHES: [usize; 4] = [0, 1, 9, 0];

/// What one party saw: its key if it is K, then per batch its unmasked and masked outputs.
type PartyResult = (Vec<LegendreKey>, Vec<(Option<Vec<u128>>, Vec<u128>)>);

fn run(seed: u64, params: Params, roles: Roles) -> [PartyResult; 3] {
    let total: usize = BATCHES.iter().sum();
    let results = run_instance(
        Session::local_mesh(3),
        seed,
        params,
        roles,
        |session, doprf| {
            let me = session.me();
            let mut keys = Vec::new();
            let mut outs = Vec::new();
            // Preprocessing in uneven chunks, masked and unmasked interleaved.
            doprf.preprocess(session, Mode::Masked, 4)?;
            doprf.preprocess(session, Mode::Unmasked, total)?;
            doprf.preprocess(session, Mode::Masked, total - 4)?;
            keys.extend(doprf.key().cloned());
            for (i, &count) in BATCHES.iter().enumerate() {
                if i == 2 {
                    // A new key half-way; the preprocessed material stays usable.
                    doprf.rekey(session)?;
                    keys.extend(doprf.key().cloned());
                }
                let (shares, _) = shared_inputs(seed + i as u64, count);
                let x = &shares[me.index()];
                let unmasked = doprf.eval_unmasked(session, x)?;
                let masked = doprf.eval_masked(session, x)?;
                outs.push((unmasked, masked));
            }
            assert_eq!(doprf.available(Mode::Masked), 0);
            assert_eq!(doprf.available(Mode::Unmasked), 0);
            Ok((keys, outs))
        },
    );
    results.map(|r| r.expect("every party finishes"))
}

fn check(seed: u64, params: Params, roles: Roles) {
    let results = run(seed, params, roles);
    let keys = &results[roles.key_holder().index()].0;
    assert_eq!(
        keys.len(),
        2,
        "K reports its key before and after the rekey"
    );
    assert!(
        results[roles.r1().index()].0.is_empty() && results[roles.r2().index()].0.is_empty(),
        "only K has the key"
    );
    assert_ne!(keys[0].elements(), keys[1].elements());
    for (i, &count) in BATCHES.iter().enumerate() {
        let prf = LegendrePrf::new(keys[usize::from(i >= 2)].clone());
        let (_, x) = shared_inputs(seed + i as u64, count);
        let y = prf.eval_batch(&x);
        let unmasked: IdealOutputs = std::array::from_fn(|p| results[p].1[i].0.clone());
        let masked: IdealOutputs = std::array::from_fn(|p| Some(results[p].1[i].1.clone()));
        assert!(
            consistent(Mode::Unmasked, &roles, &params, &y, &unmasked),
            "unmasked, {roles}, batch {i} of {count}"
        );
        assert!(
            consistent(Mode::Masked, &roles, &params, &y, &masked),
            "masked, {roles}, batch {i} of {count}"
        );
    }
}

#[test]
fn every_role_assignment_matches_the_plaintext_prf() {
    let seed = test_seed();
    for (n, roles) in Roles::all().into_iter().enumerate() {
        check(seed + 100 * n as u64, Params::new(80).unwrap(), roles);
    }
}

#[test]
fn extreme_output_lengths_and_threads() {
    let seed = test_seed();
    check(seed, Params::new(1).unwrap(), Roles::ramen_stash());
    check(
        seed,
        Params::new(128).unwrap().with_threads(2),
        Roles::ramen_memory(PartyId::P2).unwrap(),
    );
}

#[test]
fn ramen_memory_instances_each_party_is_key_holder_once() {
    let roles: Vec<Roles> = ALL
        .iter()
        .map(|&p| Roles::ramen_memory(p).unwrap())
        .collect();
    for p in ALL {
        let as_k = roles
            .iter()
            .filter(|r| r.role_of(p) == Some(Role::KeyHolder))
            .count();
        let as_r2 = roles
            .iter()
            .filter(|r| r.role_of(p) == Some(Role::R2))
            .count();
        assert_eq!((as_k, as_r2), (1, 1), "{p}");
    }
    // Three instances side by side on one session, as Ramen's memory read runs them.
    let seed = test_seed();
    let params = Params::for_domain(1 << 10).unwrap();
    let (shares, x) = shared_inputs(seed, 3);
    let out = doram_mpc::testkit::run3(|mut session| -> Result<_, DoprfError> {
        let me = session.me();
        let mut instances = Vec::new();
        for (i, r) in roles.iter().enumerate() {
            let mut s = party_seed(seed, me);
            s.0[15] ^= i as u8;
            instances.push(Doprf::setup(&mut session, params, *r, s)?);
        }
        let mut seen = Vec::new();
        for d in &mut instances {
            d.preprocess(&mut session, Mode::Unmasked, 3)?;
            seen.push((
                d.key().cloned(),
                d.eval_unmasked(&mut session, &shares[me.index()])?,
            ));
        }
        Ok(seen)
    })
    .map(|r| r.unwrap());
    for (i, r) in roles.iter().enumerate() {
        let key = out[r.key_holder().index()][i].0.clone().unwrap();
        let y = LegendrePrf::new(key).eval_batch(&x);
        assert_eq!(out[r.r2().index()][i].1.as_ref(), Some(&y));
        assert_eq!(out[r.r1().index()][i].1, None);
    }
}
