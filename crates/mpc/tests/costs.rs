//! Rounds, messages and bytes of every operation, read from `Session::stats()`, against the
//! table in the crate documentation; and transcripts that do not depend on the secrets.
//!
//! `cargo test -p doram-mpc --test costs -- --nocapture` prints the measured table.

use doram_core::PartyId;
use doram_field::{Fp, Group, Ring, Z64};
use doram_mpc::testkit::{party_seed, run_mpc3, run3, test_seed};
use doram_mpc::{Additive, Input, Mpc3, MpcError, deal_additive, random_element, replicate};
use doram_net::Transcript;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Zero,
    Reshare,
    RandomReplicated,
    InputAdditive,
    MulLocal,
    SelectLocal,
    ToReplicated,
    InputReplicated(PartyId),
    Mul,
    MulAdditive,
    Select,
    SelectReplicated,
    Open,
    OpenTo(PartyId),
    OpenReplicated,
    OpenReplicatedTo(PartyId),
}

const OPS: [Op; 16] = [
    Op::Zero,
    Op::Reshare,
    Op::RandomReplicated,
    Op::InputAdditive,
    Op::MulLocal,
    Op::SelectLocal,
    Op::ToReplicated,
    Op::InputReplicated(PartyId::P1),
    Op::Mul,
    Op::MulAdditive,
    Op::Select,
    Op::SelectReplicated,
    Op::Open,
    Op::OpenTo(PartyId::P2),
    Op::OpenReplicated,
    Op::OpenReplicatedTo(PartyId::P0),
];

/// The documented cost at party `me` for a batch of `k`: (rounds, elements sent to each party).
fn documented(op: Op, me: PartyId, k: usize) -> (u64, [usize; 3]) {
    let (next, prev) = (me.next(3), me.prev(3));
    let mut to = [0usize; 3];
    let mut send = |p: PartyId, n: usize| to[p.index()] += n;
    match op {
        Op::Zero
        | Op::Reshare
        | Op::RandomReplicated
        | Op::InputAdditive
        | Op::MulLocal
        | Op::SelectLocal => {}
        Op::ToReplicated | Op::Mul | Op::SelectReplicated => send(next, k),
        Op::MulAdditive | Op::Select => send(next, 2 * k),
        Op::InputReplicated(dealer) => {
            if me == dealer {
                send(next, k);
                send(prev, k);
            }
        }
        Op::Open => {
            send(next, k);
            send(prev, k);
        }
        Op::OpenTo(t) => {
            if me != t {
                send(t, k);
            }
        }
        Op::OpenReplicated => send(prev, k),
        Op::OpenReplicatedTo(t) => {
            if me == t.next(3) {
                send(t, k);
            }
        }
    }
    let local = matches!(
        op,
        Op::Zero
            | Op::Reshare
            | Op::RandomReplicated
            | Op::InputAdditive
            | Op::MulLocal
            | Op::SelectLocal
    );
    // A party that neither sends nor receives (only in openings of ⟦x⟧ to one party) spends no
    // round.
    let idle = matches!(op, Op::OpenReplicatedTo(t) if me == t.prev(3));
    let rounds = u64::from(k > 0 && !local && !idle);
    (rounds, to)
}

fn run_op<F: Ring>(
    mpc: &mut Mpc3,
    op: Op,
    a: &[Additive<F>],
    b: &[Additive<F>],
) -> Result<(), MpcError> {
    let me = mpc.me();
    let k = a.len();
    // Replicated operands without communication (a stand-in for earlier protocol steps).
    let ra: Vec<_> = a
        .iter()
        .map(|&s| doram_mpc::Replicated::from_parts(s.share(), s.share()))
        .collect();
    let rb = ra.clone();
    let values = vec![F::ONE; k];
    let input = |dealer: PartyId| {
        if dealer == me {
            Input::Own(&values)
        } else {
            Input::Peer { dealer, count: k }
        }
    };
    mpc.session_mut().set_phase("op");
    let before = mpc.session().rounds();
    match op {
        Op::Zero => drop(mpc.zero::<F>(k)),
        Op::Reshare => drop(mpc.reshare(a)),
        Op::RandomReplicated => drop(mpc.random_replicated::<F>(k)),
        Op::InputAdditive => drop(mpc.input_additive(input(PartyId::P2))?),
        Op::MulLocal => drop(mpc.mul_local(&ra, &rb)?),
        Op::SelectLocal => drop(mpc.select_local(&ra, &rb, &ra)?),
        Op::ToReplicated => drop(mpc.to_replicated(a)?),
        Op::InputReplicated(d) => drop(mpc.input_replicated(input(d))?),
        Op::Mul => drop(mpc.mul(&ra, &rb)?),
        Op::MulAdditive => drop(mpc.mul_additive(a, b)?),
        Op::Select => drop(mpc.select(a, b, a)?),
        Op::SelectReplicated => drop(mpc.select_replicated(&ra, &rb, &ra)?),
        Op::Open => drop(mpc.open(a)?),
        Op::OpenTo(t) => drop(mpc.open_to(t, a)?),
        Op::OpenReplicated => drop(mpc.open_replicated(&ra)?),
        Op::OpenReplicatedTo(t) => drop(mpc.open_replicated_to(t, &ra)?),
    }
    let after = mpc.session().rounds();
    let phase = mpc
        .session()
        .stats()
        .phase("op")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        phase.rounds,
        after - before,
        "phase rounds agree with the session's clock"
    );
    Ok(())
}

fn measure<F: Ring>(op: Op, k: usize, seed: u64) -> [(u64, [(u64, u64); 3]); 3] {
    let a: Vec<Additive<F>> = (0..k)
        .map(|j| Additive::from_share(F::from_u64(j as u64)))
        .collect();
    let results = run_mpc3(seed, |mpc| {
        run_op(mpc, op, &a, &a)?;
        let phase = mpc
            .session()
            .stats()
            .phase("op")
            .cloned()
            .unwrap_or_default();
        let sent = ALL.map(|p| (phase.link(p).msgs_sent, phase.link(p).bytes_sent));
        Ok((phase.rounds, sent))
    });
    results.map(|r| r.unwrap_or_else(|e| panic!("{op:?}: {e}")))
}

fn check_costs<F: Ring>(name: &str) {
    let seed = test_seed();
    for k in [0usize, 1, 7, 1000] {
        for op in OPS {
            let measured = measure::<F>(op, k, seed);
            for me in ALL {
                let (rounds, sent) = measured[me.index()];
                let (doc_rounds, doc_elems) = documented(op, me, k);
                assert_eq!(rounds, doc_rounds, "{name} {op:?} k = {k}: rounds at {me}");
                for p in ALL {
                    let elems = doc_elems[p.index()];
                    let doc = (u64::from(elems > 0), (elems * F::BYTES) as u64);
                    assert_eq!(
                        sent[p.index()],
                        doc,
                        "{name} {op:?} k = {k}: {me} → {p} (msgs, bytes)"
                    );
                }
            }
            if k == 7 {
                let per_party: Vec<String> = ALL
                    .iter()
                    .map(|me| {
                        let (r, s) = measured[me.index()];
                        let bytes: u64 = s.iter().map(|x| x.1).sum();
                        let msgs: u64 = s.iter().map(|x| x.0).sum();
                        format!("{me}: {r} rd, {msgs} msg, {bytes} B")
                    })
                    .collect();
                eprintln!(
                    "{name} k=7 {:<28} {}",
                    format!("{op:?}"),
                    per_party.join(" | ")
                );
            }
        }
    }
}

#[test]
fn costs_match_the_documentation_fp() {
    check_costs::<Fp>("Fp");
}

#[test]
fn costs_match_the_documentation_z64() {
    check_costs::<Z64>("Z64");
}

#[test]
fn setup_is_one_round_of_16_bytes_each_way() {
    let seed = test_seed();
    let results = run3(|session| {
        let me = session.me();
        let mpc = Mpc3::setup(session, party_seed(seed, me))?;
        let total = mpc.session().stats().total();
        let link = |p: PartyId| total.link(p);
        let (next, prev) = (me.next(3), me.prev(3));
        Ok::<_, MpcError>((
            mpc.session().rounds(),
            [link(next).msgs_sent, link(prev).msgs_sent],
            [link(next).bytes_sent, link(prev).bytes_sent],
            [link(next).bytes_received, link(prev).bytes_received],
        ))
    });
    for r in results {
        assert_eq!(r.expect("setup"), (1, [1, 1], [16, 16], [16, 16]));
    }
}

/// A program using every communicating operation, on secret inputs chosen by `variant`.
fn leakage_program<F: Ring>(variant: u64) -> [Transcript; 3] {
    let k = 5;
    let mut rng = ChaCha12Rng::seed_from_u64(variant);
    let x: Vec<F> = (0..k).map(|_| random_element(&mut rng)).collect();
    let flags: Vec<F> = (0..k).map(|j| F::from_u64((variant >> j) & 1)).collect();
    let dealt = |v: &[F], rng: &mut ChaCha12Rng| -> [Vec<Additive<F>>; 3] {
        let mut out: [Vec<Additive<F>>; 3] = Default::default();
        for &x in v {
            for (o, s) in out.iter_mut().zip(deal_additive(x, rng)) {
                o.push(s);
            }
        }
        out
    };
    let (ax, af) = (dealt(&x, &mut rng), dealt(&flags, &mut rng));
    let seed = variant.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let results = run_mpc3(seed, |mpc| {
        mpc.session_mut().record_transcript(true);
        let me = mpc.me();
        let i = me.index();
        let (a, f) = (&ax[i], &af[i]);
        for dealer in ALL {
            let input = if dealer == me {
                Input::Own(&x)
            } else {
                Input::Peer { dealer, count: k }
            };
            mpc.input_replicated(input)?;
        }
        let ra = mpc.to_replicated(a)?;
        let rf = mpc.to_replicated(f)?;
        let m = mpc.mul(&ra, &rf)?;
        let s = mpc.select(f, a, a)?;
        mpc.select_replicated(&rf, &m, &ra)?;
        mpc.mul_additive(&s, a)?;
        mpc.open(&s)?;
        mpc.open_replicated(&m)?;
        for t in ALL {
            mpc.open_to(t, a)?;
            mpc.open_replicated_to(t, &ra)?;
        }
        Ok(mpc.session_mut().take_transcript().unwrap_or_default())
    });
    results.map(|r| r.expect("program runs"))
}

fn transcripts_independent_of_secrets<F: Ring>() {
    let base = test_seed();
    let a = leakage_program::<F>(base);
    let b = leakage_program::<F>(base ^ 0xffff_ffff);
    for i in 0..3 {
        assert!(!a[i].is_empty());
        assert_eq!(a[i], b[i], "transcript of P{i} depends on the inputs");
    }
}

#[test]
fn transcripts_do_not_depend_on_secrets_fp() {
    transcripts_independent_of_secrets::<Fp>();
}

#[test]
fn transcripts_do_not_depend_on_secrets_z64() {
    transcripts_independent_of_secrets::<Z64>();
}

/// `replicate` (dealer-side) agrees with the engine's convention: `P_i` holds (x_i, x_{i−1}).
#[test]
fn dealer_side_replication_matches_convention() {
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    let a = deal_additive(Fp::from_u64(3), &mut rng);
    let r = replicate(&a);
    for i in 0..3 {
        assert_eq!(r[i].own(), a[i].share());
        assert_eq!(r[i].prev(), a[(i + 2) % 3].share());
    }
    assert_eq!(Fp::BYTES, 16);
}
