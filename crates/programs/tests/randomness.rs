//! Secret randomness comes from the operating system: two runs with identical public inputs
//! exchange different bytes and hold different shares, and a party that knows everything
//! public (and its own seed and input) cannot rebuild another party's randomness to learn its
//! input. The same attack succeeds against a run that asked for an insecure seed, which shows
//! that the checks can fail.

use doram_core::{Entropy, PartyId, Seed};
use doram_duoram::Duoram;
use doram_field::Fp;
use doram_mpc::testkit::run3;
use doram_mpc::{Input, Secret};
use doram_oram::LinearScanOram;
use doram_programs::binary_search::SearchOutput;
use doram_programs::{BinarySearch, run_party};
use doram_programs::{Machine, Part, PartyRun, ProgramError, Roles};

const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

/// Each party's seed as `entropy` gives it (what `doram run` and `doram party` do).
fn seeds(entropy: Entropy) -> [Seed; 3] {
    ALL.map(|p| entropy.party_seed(p, "program"))
}

/// A binary search over 3P-Duoram with the given seeds; every party hashes its whole view.
fn search(seeds: [Seed; 3], data: &[u64], key: u64) -> [PartyRun<SearchOutput>; 3] {
    let roles = Roles::default();
    run3(|mut session| {
        let me = session.me();
        session.record_content_digest(true);
        let seed = seeds[me.index()];
        let d = (me == roles.owner).then_some(data);
        let k = (me == roles.querier).then_some(key);
        run_party::<BinarySearch, Duoram<Fp>>(session, seed, roles, d, k)
    })
    .map(|r| r.expect("the search runs"))
}

fn digest(run: &PartyRun<SearchOutput>) -> [u8; 32] {
    run.content_digest.expect("the session hashed its view")
}

#[test]
fn identical_public_inputs_give_different_views() {
    let data = [2u64, 3, 5, 7, 11, 13, 17];
    let a = search(seeds(Entropy::Os), &data, 7);
    let b = search(seeds(Entropy::Os), &data, 7);
    let out = |r: &[PartyRun<SearchOutput>; 3]| r[2].output.expect("P2 receives");
    assert_eq!(
        out(&a),
        SearchOutput {
            index: 3,
            found: true
        }
    );
    assert_eq!(out(&a), out(&b));
    for i in 0..3 {
        assert_ne!(digest(&a[i]), digest(&b[i]), "{}'s view repeated", ALL[i]);
    }
    // The same public seed twice replays every view byte for byte.
    let c = search(seeds(Entropy::InsecureSeed(3)), &data, 7);
    let d = search(seeds(Entropy::InsecureSeed(3)), &data, 7);
    for i in 0..3 {
        assert_eq!(digest(&c[i]), digest(&d[i]), "{}'s insecure view", ALL[i]);
    }
}

/// P0 inputs `values`; each party returns its shares of them.
fn input_shares(entropy: Entropy, values: &[u64]) -> [Vec<Secret>; 3] {
    run3(|session| -> Result<_, ProgramError> {
        let me = session.me();
        let mut m = Machine::<LinearScanOram<Fp>>::setup(session, entropy.party_seed(me, "x"))?;
        m.engine_in(Part::Input, |on| {
            on.input(match me {
                PartyId::P0 => Input::Own(values),
                _ => Input::Peer {
                    dealer: PartyId::P0,
                    count: values.len(),
                },
            })
        })
    })
    .map(|r| r.expect("the input runs"))
}

#[test]
fn identical_inputs_get_fresh_shares() {
    let values = [0u64, 1, 42, u64::MAX];
    let a = input_shares(Entropy::Os, &values);
    let b = input_shares(Entropy::Os, &values);
    for i in 0..3 {
        assert_eq!(a[i].len(), values.len());
        assert_eq!(b[i].len(), values.len());
        for (x, y) in a[i].iter().zip(&b[i]) {
            assert_ne!(x, y, "{} holds a repeated share", ALL[i]);
        }
    }
    let c = input_shares(Entropy::InsecureSeed(9), &values);
    let d = input_shares(Entropy::InsecureSeed(9), &values);
    assert_eq!(c, d);
}

/// P1 (the querier) knows its own seed and key and everything public: the array's length, the
/// roles, the program, and the public number the parties would have derived their seeds from.
/// It tries every candidate for P0's secret one-entry array and re-runs all three parties with
/// the seeds it can derive, looking for the run whose view equals the one it observed. Returns
/// the candidates that match.
fn replay_attack(real: [Seed; 3], secret: u64, public_seed: u64) -> Vec<u64> {
    let key = 6;
    let observed = digest(&search(real, &[secret], key)[1]);
    let guessed = seeds(Entropy::InsecureSeed(public_seed));
    let attacker_seeds = [guessed[0], real[1], guessed[2]];
    (0..12u64)
        .filter(|&x| digest(&search(attacker_seeds, &[x], key)[1]) == observed)
        .collect()
}

#[test]
fn a_party_knowing_everything_public_cannot_replay_another() {
    // With OS randomness no candidate reproduces P1's view.
    let matches = replay_attack(seeds(Entropy::Os), 9, 1);
    assert!(matches.is_empty(), "P1 rebuilt P0's input: {matches:?}");
    // With a public seed the attack recovers P0's input exactly.
    assert_eq!(
        replay_attack(seeds(Entropy::InsecureSeed(1)), 9, 1),
        vec![9]
    );
}
