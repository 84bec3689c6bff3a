//! `LinearScanOram` through the conformance kit (both word rings), plus its exact costs, share
//! freshness, size limits, fault attribution and poisoning.

use std::time::Duration;

use doram_core::{PartyId, Seed};
use doram_field::{Fp, Z64};
use doram_mpc::testkit::{party_seed, run3_on};
use doram_mpc::{Additive, reconstruct_additive};
use doram_net::{LocalMesh, NetError, Session, Tamper};
use doram_oram::testkit::{self, Fault, Plan};
use doram_oram::{Instruction, IntegerWord, LinearScanOram, OpVisibility, OramError, SharedMemory};

doram_oram::oram_conformance!(
    linear_fp,
    |session, _me, n, seed| LinearScanOram::<Fp>::setup(session, n, seed),
    sizes = [1, 2, 3, 16, 17, 100],
    ops = 60
);

doram_oram::oram_conformance!(
    linear_z64,
    |session, _me, n, seed| LinearScanOram::<Z64>::setup(session, n, seed),
    sizes = [1, 2, 3, 5, 16, 17, 100],
    ops = 50
);

fn make<W: IntegerWord>(
    session: Session,
    _me: PartyId,
    n: usize,
    seed: Seed,
) -> Result<LinearScanOram<W>, OramError> {
    LinearScanOram::<W>::setup(session, n, seed)
}

/// Per-party costs of each kit phase: (rounds, messages sent, payload bytes sent).
fn phase_costs<W>(run: &testkit::PartyRun<W>, phase: &str) -> (u64, u64, u64) {
    let s = run.stats.phase(phase).cloned().unwrap_or_default();
    let t = s.sum();
    (s.rounds, t.msgs_sent, t.bytes_sent)
}

/// Every row of the cost table in the `linear` module documentation, measured at every party.
fn costs<W: IntegerWord>(n: usize, accesses: usize) {
    let seed = testkit::test_seed();
    let mut plan: Plan<W> = testkit::standard_plan(OpVisibility::Hidden, n, accesses, seed);
    plan.preprocess = accesses;
    let runs = testkit::execute(&make::<W>, &plan, LocalMesh::new(3).build());
    let b = W::BYTES as u64;
    let (n64, k) = (n as u64, accesses as u64);
    for (p, run) in PartyId::first(3).iter().zip(runs) {
        let run = run.unwrap_or_else(|e| panic!("{p}: {e}"));
        assert_eq!(phase_costs(&run, "setup"), (1, 2, 32), "{p} setup");
        // Accesses 0, 3, 6, … are dealt by P0, 1, 4, … by P1, and so on.
        let dealt = (0..k).filter(|j| j % 3 == p.index() as u64).count() as u64;
        let deal_msgs = u64::from(dealt > 0);
        assert_eq!(
            phase_costs(&run, "preprocess"),
            (4, 3 + deal_msgs, (4 * k * n64 + dealt * n64) * b),
            "{p} preprocess"
        );
        assert_eq!(phase_costs(&run, "init"), (1, 1, n64 * b), "{p} init");
        let (rounds, msgs, bytes) = phase_costs(&run, "access");
        assert_eq!(
            (rounds, msgs, bytes),
            (2 * k, 4 * k, 6 * k * b),
            "{p} access"
        );
        assert_eq!(phase_costs(&run, "memory"), (0, 0, 0), "{p} memory");
        eprintln!(
            "{p}: n = {n}, {} bytes per word: per access {} rounds, {} messages, {} bytes sent \
             (+{} frame-header bytes); preprocessing {} bytes per access on average",
            W::BYTES,
            rounds / k,
            msgs / k,
            bytes / k,
            msgs / k * doram_net::FRAME_HEADER_BYTES as u64,
            phase_costs(&run, "preprocess").2 / k,
        );
    }
}

#[test]
fn costs_fp_n1024() {
    costs::<Fp>(1024, 6);
}

#[test]
fn costs_z64_n1024() {
    costs::<Z64>(1024, 4);
}

#[test]
fn costs_small_and_odd_sizes() {
    costs::<Fp>(1, 3);
    costs::<Z64>(17, 7);
}

/// Accesses without preprocessing run it inline and give the same results; preprocessing more
/// than one batch's worth splits into batches.
#[test]
fn inline_and_batched_preprocessing() {
    let seed = testkit::test_seed();
    for (n, pre) in [(4, 0), (300_000, 2)] {
        let mut plan: Plan<Z64> = testkit::standard_plan(OpVisibility::Hidden, n, 3, seed);
        plan.preprocess = pre;
        let runs = testkit::execute(&make::<Z64>, &plan, LocalMesh::new(3).build());
        let runs = runs.map(|r| r.unwrap_or_else(|e| panic!("n = {n}: {e}")));
        let mut oracle = doram_oram::PlainMemory::new(plan.initial.clone());
        for (t, (ins, _)) in plan.instructions.iter().enumerate() {
            let got =
                reconstruct_additive(&[runs[0].outputs[t], runs[1].outputs[t], runs[2].outputs[t]]);
            assert_eq!(got, oracle.access(ins).unwrap(), "n = {n}, access {t}");
        }
        if pre > 1 {
            // 2^18 elements per batch: one access of 300 000 words per batch, each batch three
            // engine messages per party (n, 2n and n words), plus the dealt vector of access 0
            // from its dealer P0; each message in frames of at most 1 MiB.
            let frames = |words: usize| doram_mpc::frames::<Z64>(words).count() as u64;
            let batch = 2 * frames(n) + frames(2 * n);
            assert_eq!(
                phase_costs(&runs[0], "preprocess").1,
                batch * pre as u64 + frames(n)
            );
        }
    }
}

/// The shares a party gets (outputs and memory) change with the parties' randomness, while
/// the values they reconstruct to do not.
#[test]
fn output_shares_are_fresh() {
    let seed = testkit::test_seed();
    let plan: Plan<Fp> = testkit::standard_plan(OpVisibility::Hidden, 5, 10, seed);
    let mut other = plan.clone();
    other.party_seed ^= 0xf00d;
    let a = testkit::execute(&make::<Fp>, &plan, LocalMesh::new(3).build());
    let b = testkit::execute(&make::<Fp>, &other, LocalMesh::new(3).build());
    for (p, (a, b)) in PartyId::first(3).iter().zip(a.iter().zip(&b)) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        for t in 0..a.outputs.len() {
            assert_ne!(a.outputs[t], b.outputs[t], "{p}'s share of access {t}");
        }
        for i in 0..a.memory.len() {
            assert_ne!(a.memory[i], b.memory[i], "{p}'s share of word {i}");
        }
    }
}

#[test]
fn unsupported_sizes_are_rejected_before_sending() {
    for session in Session::local_mesh(3) {
        assert!(matches!(
            LinearScanOram::<Z64>::setup(session, 1 << 23, Seed([0; 16])),
            Err(OramError::InvalidSize { n, .. }) if n == 1 << 23
        ));
    }
    for session in Session::local_mesh(3) {
        assert!(matches!(
            LinearScanOram::<Fp>::setup(session, 0, Seed([0; 16])),
            Err(OramError::InvalidSize { n: 0, .. })
        ));
    }
}

/// The receiver of a tampered message blames its sender.
#[test]
fn faults_name_the_sender() {
    let seed = testkit::test_seed();
    for fault in [
        Fault::Truncate,
        Fault::Garbage,
        Fault::Oversize,
        Fault::Close,
        Fault::Silence,
    ] {
        let out = testkit::run_fault(make::<Fp>, 7, 6, seed, PartyId::P1, fault);
        let (from, to, _) = out.target;
        let e = &out.errors[to.index()];
        assert_eq!(e.peer(), Some(from), "{fault:?}: {to} got {e}");
        if fault == Fault::Silence {
            // A timeout, or the link closing when the silent sender itself timed out first.
            assert!(
                matches!(
                    e,
                    OramError::Net(NetError::Timeout { .. } | NetError::Closed { .. })
                ),
                "{e}"
            );
        }
    }
}

/// After a failure in the middle of an access, every later call is refused.
#[test]
fn a_failed_access_poisons_the_instance() {
    // Frame 0 on each link is the setup seed, frame 1 the init message; frames 2.. are the
    // inline preprocessing and the access. Drop the first access-time frame P2 → P0.
    let sessions = LocalMesh::new(3)
        .timeout(Duration::from_millis(300))
        .tamper(|from, to, index, _| {
            if (from, to, index) == (PartyId::P2, PartyId::P0, 2) {
                Tamper::Drop
            } else {
                Tamper::Pass
            }
        })
        .build();
    let results = run3_on(sessions, |session| {
        let me = session.me();
        let mut o = LinearScanOram::<Z64>::setup(session, 4, party_seed(1, me))?;
        o.init(&[Additive::ZERO; 4])?;
        let c = |v: u64| Additive::public(Z64(v), me);
        let first = o.read(c(1));
        assert!(first.is_err(), "{me}: the tampered access must fail");
        assert!(matches!(o.read(c(1)), Err(OramError::Poisoned)));
        assert!(matches!(o.memory(), Err(OramError::Poisoned)));
        assert!(matches!(o.preprocess(1), Err(OramError::Poisoned)));
        assert!(matches!(
            o.init(&[Additive::ZERO; 4]),
            Err(OramError::Poisoned)
        ));
        assert!(format!("{o:?}").contains("poisoned"));
        first
    });
    assert!(results.iter().all(Result::is_err));
}

/// A program written against the trait, run on the linear scan and on the plaintext oracle
/// with the same inputs: a counting wrapper sees the same numbers of reads and writes.
#[test]
fn counting_wrapper_counts_protocol_calls() {
    let results = run3_on(Session::local_mesh(3), |session| {
        let me = session.me();
        let inner = LinearScanOram::<Z64>::setup(session, 3, party_seed(2, me))?;
        let mut o = doram_oram::Counting::new(inner);
        o.preprocess(2)?;
        o.init(&[Additive::public(Z64(4), me); 3])?;
        let c = |v: u64| Additive::public(Z64(v), me);
        let old = o.write(c(2), c(9))?;
        let new = o.read(c(2))?;
        let hidden = doram_oram::InstructionShare::hidden(c(0), c(1), c(5));
        let other = o.access(&hidden)?;
        let counts = o.counts();
        assert_eq!((counts.reads, counts.writes, counts.hidden), (1, 1, 1));
        assert_eq!((counts.inits, counts.preprocessed), (1, 2));
        o.memory()?;
        assert_eq!(o.counts().memory_reads, 1);
        assert_eq!(o.len(), 3);
        Ok::<_, OramError>([old, new, other])
    });
    let r = results.map(|r| r.unwrap());
    let open = |t: usize| reconstruct_additive(&[r[0][t], r[1][t], r[2][t]]);
    assert_eq!([open(0), open(1), open(2)], [Z64(4), Z64(9), Z64(4)]);
    let mut plain = doram_oram::Counting::new(doram_oram::PlainMemory::new(vec![Z64(4); 3]));
    assert_eq!(
        plain.access(&Instruction::write(2, Z64(9))).unwrap(),
        Z64(4)
    );
    assert_eq!(plain.access(&Instruction::read(2)).unwrap(), Z64(9));
    assert_eq!((plain.counts().reads, plain.counts().writes), (1, 1));
}
