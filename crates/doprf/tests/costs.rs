//! Communication of every phase against the table in the crate documentation (messages, bytes
//! and rounds per party, read from `Session::stats()`), and transcripts that do not depend on
//! the key, the inputs or the seeds.
//!
//! `cargo test -p doram-doprf --test costs -- --nocapture` prints the measured table.

mod common;

use common::{ALL, run_instance, shared_inputs};
use doram_core::PartyId;
use doram_doprf::{DoprfError, Mode, Params, Roles};
use doram_mpc::testkit::test_seed;
use doram_net::{Session, Transcript};

const FP: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Setup,
    Rekey,
    Preprocess(Mode),
    Online(Mode),
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Rekey => "rekey",
            Phase::Preprocess(Mode::Unmasked) => "unmasked-preprocess",
            Phase::Preprocess(Mode::Masked) => "masked-preprocess",
            Phase::Online(Mode::Unmasked) => "unmasked-online",
            Phase::Online(Mode::Masked) => "masked-online",
        }
    }
}

/// The documented cost of `phase` for a batch of `c` at ℓ = `l`: (rounds, bytes sent by each
/// party to each party, indexed [from][to]).
fn documented(phase: Phase, roles: &Roles, l: usize, c: usize) -> (u64, [[usize; 3]; 3]) {
    let (k, r1, r2) = (
        roles.key_holder().index(),
        roles.r1().index(),
        roles.r2().index(),
    );
    let mut bytes = [[0usize; 3]; 3];
    let rounds = match phase {
        Phase::Setup => {
            bytes[k][r1] = 16;
            bytes[r1][r2] = 16;
            bytes[r1][k] = l * FP;
            bytes[r2][k] = l * FP;
            1
        }
        Phase::Rekey => {
            bytes[r1][k] = l * FP;
            bytes[r2][k] = l * FP;
            1
        }
        Phase::Preprocess(Mode::Unmasked) => {
            bytes[r1][k] = c * l * FP;
            1
        }
        Phase::Preprocess(Mode::Masked) => {
            bytes[r1][r2] = c * (l * FP + l.div_ceil(8));
            1
        }
        Phase::Online(Mode::Unmasked) => {
            bytes[r1][k] = c * FP;
            bytes[r2][k] = c * FP;
            bytes[k][r2] = c * l * FP;
            2
        }
        Phase::Online(Mode::Masked) => {
            bytes[r1][r2] = c * FP;
            bytes[k][r2] = c * l * FP;
            bytes[r2][k] = c * l * FP;
            2
        }
    };
    if c == 0 && !matches!(phase, Phase::Setup | Phase::Rekey) {
        return (0, [[0; 3]; 3]);
    }
    (rounds, bytes)
}

/// Makes the three Lamport clocks equal: every party sends one byte to both others and
/// receives theirs (in a phase of its own).
fn sync(session: &mut Session) -> Result<(), DoprfError> {
    session.set_phase("sync");
    let peers: Vec<PartyId> = session.peers().collect();
    for &p in &peers {
        session.send_bytes(p, &[0])?;
    }
    for &p in &peers {
        session.recv_bytes(p)?;
    }
    Ok(())
}

#[test]
fn every_phase_costs_what_the_table_says() {
    let seed = test_seed();
    let l = 80;
    let params = Params::new(l).unwrap();
    for roles in Roles::all() {
        for c in [0usize, 1, 7] {
            let (shares, _) = shared_inputs(seed, c);
            let stats = run_instance(
                {
                    let mut s = Session::local_mesh(3);
                    for session in &mut s {
                        session.set_phase(Phase::Setup.name());
                    }
                    s
                },
                seed,
                params,
                roles,
                |session, doprf| {
                    let x = &shares[session.me().index()];
                    for phase in [
                        Phase::Rekey,
                        Phase::Preprocess(Mode::Unmasked),
                        Phase::Preprocess(Mode::Masked),
                        Phase::Online(Mode::Unmasked),
                        Phase::Online(Mode::Masked),
                    ] {
                        sync(session)?;
                        session.set_phase(phase.name());
                        match phase {
                            Phase::Setup => unreachable!(),
                            Phase::Rekey => doprf.rekey(session)?,
                            Phase::Preprocess(mode) => doprf.preprocess(session, mode, c)?,
                            Phase::Online(Mode::Unmasked) => {
                                doprf.eval_unmasked(session, x)?;
                            }
                            Phase::Online(Mode::Masked) => {
                                doprf.eval_masked(session, x)?;
                            }
                        }
                    }
                    Ok(session.stats().clone())
                },
            )
            .map(|r| r.expect("party finishes"));
            for phase in [
                Phase::Setup,
                Phase::Rekey,
                Phase::Preprocess(Mode::Unmasked),
                Phase::Preprocess(Mode::Masked),
                Phase::Online(Mode::Unmasked),
                Phase::Online(Mode::Masked),
            ] {
                let (rounds, bytes) = documented(phase, &roles, l, c);
                let mut max_rounds = 0;
                for from in ALL {
                    let st = stats[from.index()]
                        .phase(phase.name())
                        .cloned()
                        .unwrap_or_default();
                    max_rounds = max_rounds.max(st.rounds);
                    assert!(st.rounds <= rounds, "{phase:?} {roles} c={c} {from}");
                    for to in ALL {
                        let want = bytes[from.index()][to.index()];
                        let link = st.link(to);
                        assert_eq!(
                            link.bytes_sent as usize, want,
                            "{phase:?} {roles} c={c}: bytes {from} → {to}"
                        );
                        assert_eq!(
                            link.msgs_sent,
                            u64::from(want > 0),
                            "{phase:?} {roles} c={c}: messages {from} → {to}"
                        );
                        // And the receiver counted the same.
                        let back = stats[to.index()]
                            .phase(phase.name())
                            .cloned()
                            .unwrap_or_default();
                        assert_eq!(back.link(from).bytes_received as usize, want);
                    }
                }
                assert_eq!(max_rounds, rounds, "{phase:?} {roles} c={c}: rounds");
                if roles == Roles::ramen_stash() && c == 7 {
                    let sent: Vec<usize> = bytes.iter().map(|row| row.iter().sum()).collect();
                    println!(
                        "{:>20}: {rounds} rounds, bytes sent for 7 evaluations (K, R1, R2) = {sent:?}",
                        phase.name()
                    );
                }
            }
        }
    }
}

/// The transcript of every party for one run: setup, rekey, preprocessing and evaluations.
fn transcripts(seed: u64, inputs_seed: u64, roles: Roles) -> [Transcript; 3] {
    let params = Params::new(80).expect("valid ℓ");
    let counts = [1usize, 0, 6];
    let total: usize = counts.iter().sum();
    let sessions = {
        let mut s = Session::local_mesh(3);
        for session in &mut s {
            session.record_transcript(true);
        }
        s
    };
    run_instance(sessions, seed, params, roles, |session, doprf| {
        doprf.preprocess(session, Mode::Unmasked, total)?;
        doprf.preprocess(session, Mode::Masked, 2)?;
        doprf.preprocess(session, Mode::Masked, total - 2)?;
        for (i, &c) in counts.iter().enumerate() {
            let (shares, _) = shared_inputs(inputs_seed + i as u64, c);
            let x = &shares[session.me().index()];
            doprf.eval_masked(session, x)?;
            doprf.eval_unmasked(session, x)?;
            if i == 1 {
                doprf.rekey(session)?;
            }
        }
        Ok(session.take_transcript().expect("recording"))
    })
    .map(|r| r.expect("party finishes"))
}

#[test]
fn transcripts_do_not_depend_on_keys_inputs_or_seeds() {
    let seed = test_seed();
    for roles in Roles::all() {
        let a = transcripts(seed, 1, roles);
        let b = transcripts(seed.wrapping_add(12345), 999, roles);
        for p in ALL {
            assert!(!a[p.index()].is_empty());
            assert_eq!(a[p.index()], b[p.index()], "{roles}: transcript of {p}");
        }
    }
}
