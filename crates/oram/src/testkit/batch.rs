//! Batches, updates and memories of any party count.
//!
//! [`run_batches`] checks a protocol's [`access_many`](SharedMemory::access_many),
//! [`read_many`](SharedMemory::read_many) and [`update`](SharedMemory::update) — whether it
//! overrides them or keeps the trait's defaults — against [`PlainMemory`], and that its
//! transcripts for them do not depend on the secrets. [`run_shared`] runs the kit's standard
//! plan and the batch plan on a memory driven without any transport (the one-party case, e.g.
//! [`PlainMemory`] itself or a [`Counting`](crate::Counting) wrapper around it), through the
//! same per-party driver the protocols' runs use.

use doram_core::Seed;
use doram_field::{Group, Ring};
use doram_mpc::testkit::{party_seed, run3_on};
use doram_mpc::{Additive, deal_additive, random_element};
use doram_net::{Session, Transcript};
use doram_prim::AesPrg;

use super::{
    ALL, KIT_TIMEOUT, SEED_VAR, Workload, assert_same_shape, below, kit_rng, mesh, standard_plan,
    workload,
};
use crate::error::OramError;
use crate::instruction::{Instruction, InstructionShare, Op, OpShare, OpVisibility};
use crate::interface::{DistributedOram, SharedMemory};
use crate::plain::PlainMemory;

/// One step of a [`BatchPlan`].
#[derive(Clone, Debug)]
pub enum BatchStep<W> {
    /// One [`access_many`](SharedMemory::access_many) of these instructions (each with the
    /// visibility its op is dealt with).
    Accesses(Vec<(Instruction<W>, OpVisibility)>),
    /// One [`read_many`](SharedMemory::read_many) of these addresses.
    Reads(Vec<u64>),
    /// One [`update`](SharedMemory::update): add the delta to the word at the address.
    Update(u64, W),
}

/// A run of batches and updates: initial memory, steps, accesses preprocessed up front.
#[derive(Clone, Debug)]
pub struct BatchPlan<W> {
    /// Memory size.
    pub n: usize,
    /// Initial memory (`n` words).
    pub initial: Vec<W>,
    /// The steps, in order.
    pub steps: Vec<BatchStep<W>>,
    /// Accesses preprocessed before `init`.
    pub preprocess: usize,
    /// Seed of the parties' local randomness.
    pub party_seed: u64,
    /// Seed of the dealer's sharing of the inputs.
    pub dealer_seed: u64,
}

/// The kit's batch plan over `n` words with about `ops` accesses: a mixed batch, two updates,
/// a batch of reads, a batch hammering one address, an update of that address and two reads of
/// it in one batch, and two empty batches. Ops are dealt hidden (every third public) when the
/// protocol hides them.
pub fn batch_plan<W: Ring>(
    visibility: OpVisibility,
    n: usize,
    ops: usize,
    seed: u64,
) -> BatchPlan<W> {
    let tag = 0xba7c_0000 ^ n as u64;
    let mut rng = kit_rng(seed, tag);
    let initial: Vec<W> = (0..n).map(|_| W::random_from(&mut rng)).collect();
    let dealt = |ins: Vec<Instruction<W>>| -> Vec<(Instruction<W>, OpVisibility)> {
        ins.into_iter()
            .enumerate()
            .map(|(t, i)| {
                let vis = match visibility {
                    OpVisibility::Hidden if t % 3 != 2 => OpVisibility::Hidden,
                    _ => OpVisibility::Public,
                };
                (i, vis)
            })
            .collect()
    };
    let k = (ops / 3).max(1);
    let mixed = dealt(workload(Workload::Mixed, n, k, &mut rng));
    let reads: Vec<u64> = (0..k).map(|_| below(&mut rng, n)).collect();
    let hammer = dealt(workload(Workload::Hammer, n, k, &mut rng));
    let spot = hammer[0].0.addr;
    let steps = vec![
        BatchStep::Accesses(mixed),
        BatchStep::Update(below(&mut rng, n), W::random_from(&mut rng)),
        BatchStep::Update(below(&mut rng, n), W::random_from(&mut rng)),
        BatchStep::Reads(reads),
        BatchStep::Accesses(hammer),
        BatchStep::Update(spot, W::random_from(&mut rng)),
        BatchStep::Reads(vec![spot, spot]),
        BatchStep::Accesses(Vec::new()),
        BatchStep::Reads(Vec::new()),
    ];
    BatchPlan {
        n,
        initial,
        steps,
        preprocess: k,
        party_seed: seed ^ tag.rotate_left(32),
        dealer_seed: seed ^ tag,
    }
}

impl<W: Ring> BatchPlan<W> {
    /// The same public shape with other secrets: a fresh memory, fresh addresses, values and
    /// deltas, and (where ops are hidden) the opposite op of every hidden one.
    pub fn with_other_secrets(&self, seed: u64) -> BatchPlan<W> {
        let mut rng = kit_rng(seed, 0x07e5);
        let n = self.n;
        let mut other = self.clone();
        other.initial = (0..n).map(|_| W::random_from(&mut rng)).collect();
        other.dealer_seed ^= 0x5ec;
        for step in &mut other.steps {
            match step {
                BatchStep::Accesses(v) => {
                    for (ins, vis) in v {
                        ins.addr = below(&mut rng, n);
                        ins.value = W::random_from(&mut rng);
                        if *vis == OpVisibility::Hidden {
                            ins.op = match ins.op {
                                Op::Read => Op::Write,
                                Op::Write => Op::Read,
                            };
                        }
                    }
                }
                BatchStep::Reads(v) => v.iter_mut().for_each(|a| *a = below(&mut rng, n)),
                BatchStep::Update(a, d) => {
                    *a = below(&mut rng, n);
                    *d = W::random_from(&mut rng);
                }
            }
        }
        other
    }

    /// The plan's results on [`PlainMemory`]: every value the steps return, in order, and the
    /// final memory.
    ///
    /// # Panics
    /// If the plan has an address out of range.
    pub fn oracle(&self) -> (Vec<W>, Vec<W>) {
        let mut m = PlainMemory::new(self.initial.clone());
        let mut out = Vec::new();
        for step in &self.steps {
            match step {
                BatchStep::Accesses(v) => {
                    for (ins, _) in v {
                        out.push(m.access(ins).expect("plan addresses are in range"));
                    }
                }
                BatchStep::Reads(v) => {
                    for &a in v {
                        out.push(m.read(a).expect("plan addresses are in range"));
                    }
                }
                BatchStep::Update(a, d) => {
                    let old = m.read(*a).expect("plan addresses are in range");
                    m.write(*a, old + *d).expect("plan addresses are in range");
                }
            }
        }
        (out, m.into_vec())
    }
}

/// One party's shares of a step.
#[derive(Clone, Debug)]
enum StepShare<W> {
    Accesses(Vec<InstructionShare<W>>),
    Reads(Vec<Additive<W>>),
    Update(Additive<W>, Additive<W>),
}

/// A fresh additive sharing of `x` among `parties` parties (for three, exactly
/// [`deal_additive`]).
fn deal<W: Group>(x: W, parties: usize, rng: &mut AesPrg) -> Vec<Additive<W>> {
    if parties == 3 {
        return deal_additive(x, rng).to_vec();
    }
    let mut shares: Vec<W> = (1..parties).map(|_| random_element(rng)).collect();
    let first = shares.iter().fold(x, |acc, &s| acc - s);
    shares.insert(0, first);
    Additive::from_shares(shares)
}

fn deal_ins<W: Ring>(
    ins: &Instruction<W>,
    vis: OpVisibility,
    parties: usize,
    rng: &mut AesPrg,
) -> Vec<InstructionShare<W>> {
    let op: Vec<OpShare<W>> = match vis {
        OpVisibility::Hidden => deal(ins.op.bit::<W>(), parties, rng)
            .into_iter()
            .map(OpShare::Hidden)
            .collect(),
        OpVisibility::Public => vec![OpShare::Public(ins.op); parties],
    };
    let addr = deal(W::from_u64(ins.addr), parties, rng);
    let value = deal(ins.value, parties, rng);
    (0..parties)
        .map(|i| InstructionShare {
            op: op[i],
            addr: addr[i],
            value: value[i],
        })
        .collect()
}

/// Each party's shares: of the initial memory, and of every step.
#[allow(clippy::type_complexity)]
fn deal_plan<W: Ring>(
    plan: &BatchPlan<W>,
    parties: usize,
) -> (Vec<Vec<Additive<W>>>, Vec<Vec<StepShare<W>>>) {
    let mut rng = kit_rng(plan.dealer_seed, 0xdea1);
    let mut memory = vec![Vec::with_capacity(plan.n); parties];
    for &x in &plan.initial {
        for (m, s) in memory.iter_mut().zip(deal(x, parties, &mut rng)) {
            m.push(s);
        }
    }
    let mut steps: Vec<Vec<StepShare<W>>> = vec![Vec::new(); parties];
    for step in &plan.steps {
        let mut per: Vec<StepShare<W>> = match step {
            BatchStep::Accesses(_) => vec![StepShare::Accesses(Vec::new()); parties],
            BatchStep::Reads(_) => vec![StepShare::Reads(Vec::new()); parties],
            BatchStep::Update(a, d) => {
                let a = deal(W::from_u64(*a), parties, &mut rng);
                let d = deal(*d, parties, &mut rng);
                (0..parties)
                    .map(|i| StepShare::Update(a[i], d[i]))
                    .collect()
            }
        };
        match step {
            BatchStep::Accesses(v) => {
                for (ins, vis) in v {
                    for (p, s) in per.iter_mut().zip(deal_ins(ins, *vis, parties, &mut rng)) {
                        if let StepShare::Accesses(list) = p {
                            list.push(s);
                        }
                    }
                }
            }
            BatchStep::Reads(v) => {
                for &a in v {
                    for (p, s) in per.iter_mut().zip(deal(W::from_u64(a), parties, &mut rng)) {
                        if let StepShare::Reads(list) = p {
                            list.push(s);
                        }
                    }
                }
            }
            BatchStep::Update(..) => {}
        }
        for (all, s) in steps.iter_mut().zip(per) {
            all.push(s);
        }
    }
    (memory, steps)
}

/// What one party's instance returned: every step's values in order, and `memory()`.
type Returned<W> = (Vec<Additive<W>>, Vec<Additive<W>>);

/// The per-party driver, the same for every party count: preprocess, init, the steps,
/// `memory()`.
fn drive<M: SharedMemory>(
    o: &mut M,
    preprocess: usize,
    memory: &[Additive<M::Word>],
    steps: &[StepShare<M::Word>],
) -> Result<Returned<M::Word>, OramError> {
    o.preprocess(preprocess)?;
    o.init(memory)?;
    let mut out = Vec::new();
    for step in steps {
        match step {
            StepShare::Accesses(v) => {
                let got = o.access_many(v)?;
                check_count(got.len(), v.len(), "access_many")?;
                out.extend(got);
            }
            StepShare::Reads(v) => {
                let got = o.read_many(v)?;
                check_count(got.len(), v.len(), "read_many")?;
                out.extend(got);
            }
            StepShare::Update(a, d) => o.update(*a, *d)?,
        }
    }
    let final_memory = o.memory()?;
    Ok((out, final_memory))
}

fn check_count(got: usize, want: usize, what: &'static str) -> Result<(), OramError> {
    if got == want {
        Ok(())
    } else {
        Err(OramError::Protocol(
            format!("{what} returned {got} values for {want} inputs").into(),
        ))
    }
}

/// Sums each position of the parties' vectors and compares with `want`.
fn check_sums<W: Ring>(got: &[&[Additive<W>]], want: &[W], what: &str, context: &str) {
    for (p, g) in got.iter().enumerate() {
        assert_eq!(
            g.len(),
            want.len(),
            "{context}: party {p}'s {what} has the wrong length"
        );
    }
    for (t, w) in want.iter().enumerate() {
        let sum = got.iter().fold(W::ZERO, |acc, g| acc + g[t].share());
        assert_eq!(sum, *w, "{context}: {what} {t} differs from the oracle");
    }
}

/// Runs `plan` on three instances made by `make` and returns each party's results and
/// transcript, panicking with `context` on any error.
fn execute_batches<O, F>(
    make: &F,
    plan: &BatchPlan<O::Word>,
    context: &str,
) -> Vec<(Returned<O::Word>, Transcript)>
where
    O: DistributedOram,
    F: Fn(Session, doram_core::PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let (memory, steps) = deal_plan(plan, 3);
    let results = run3_on(mesh(KIT_TIMEOUT), |mut session| {
        let me = session.me();
        let i = me.index();
        session.record_transcript(true);
        let mut o = make(session, me, plan.n, party_seed(plan.party_seed, me))?;
        let limit = u32::try_from(o.max_message_bytes()).unwrap_or(u32::MAX);
        o.session_mut().limit_frame_bytes(limit);
        let r = drive(&mut o, plan.preprocess, &memory[i], &steps[i])?;
        Ok::<_, OramError>((r, o.session().transcript().cloned().unwrap_or_default()))
    });
    let mut out = Vec::with_capacity(3);
    for (p, r) in ALL.iter().zip(results) {
        match r {
            Ok(v) => out.push(v),
            Err(e) => panic!("{context}: {p}: {e}"),
        }
    }
    out
}

fn check_runs<W: Ring>(plan: &BatchPlan<W>, runs: &[(Returned<W>, Transcript)], context: &str) {
    let (want_out, want_mem) = plan.oracle();
    let outs: Vec<&[Additive<W>]> = runs.iter().map(|((o, _), _)| &o[..]).collect();
    let mems: Vec<&[Additive<W>]> = runs.iter().map(|((_, m), _)| &m[..]).collect();
    check_sums(&outs, &want_out, "returned value", context);
    check_sums(&mems, &want_mem, "memory() word", context);
}

/// Batches and updates: runs [`batch_plan`] over `n` words with three instances made by `make`,
/// checks every returned value and the final memory against [`PlainMemory`], then runs the same
/// public shape with other secrets ([`BatchPlan::with_other_secrets`]) and asserts that each
/// party's transcript is identical.
///
/// # Panics
/// On any failure or difference, naming `DORAM_TEST_SEED`.
pub fn run_batches<O, F>(make: F, n: usize, ops: usize, seed: u64)
where
    O: DistributedOram,
    F: Fn(Session, doram_core::PartyId, usize, Seed) -> Result<O, OramError> + Sync,
{
    let context = format!("batches, n = {n}, {ops} ops, {SEED_VAR}={seed}");
    let plan = batch_plan::<O::Word>(O::OP_VISIBILITY, n, ops, seed);
    let a = execute_batches(&make, &plan, &context);
    check_runs(&plan, &a, &context);
    let other = plan.with_other_secrets(seed);
    let ctx = format!("{context}, other secrets");
    let b = execute_batches(&make, &other, &ctx);
    check_runs(&other, &b, &ctx);
    for (p, (x, y)) in ALL.iter().zip(a.iter().zip(&b)) {
        assert_same_shape(&x.1, &y.1, &format!("{ctx}: {p}'s transcript"));
    }
}

/// Conformance of a memory driven without a transport by one party (`parties() == 1`, a share
/// is the value): the kit's standard plan (single accesses, half of them preprocessed) and
/// [`batch_plan`], each on a fresh instance made by `make(n)`, checked against
/// [`PlainMemory`].
///
/// # Panics
/// On any failure, naming `DORAM_TEST_SEED`.
pub fn run_shared<M, F>(make: F, n: usize, ops: usize, seed: u64)
where
    M: SharedMemory,
    F: Fn(usize) -> M,
{
    let context = format!("one-party memory, n = {n}, {ops} ops, {SEED_VAR}={seed}");
    let mut o = make(n);
    assert_eq!(
        o.parties(),
        1,
        "{context}: run_shared is for one-party memories"
    );
    assert_eq!(o.len(), n, "{context}: len()");

    // The standard plan, one access at a time.
    let plan = standard_plan::<M::Word>(M::OP_VISIBILITY, n, ops, seed);
    let mut rng = kit_rng(plan.dealer_seed, 0xdea1);
    let memory: Vec<Additive<M::Word>> = plan
        .initial
        .iter()
        .map(|&x| deal(x, 1, &mut rng)[0])
        .collect();
    let steps: Vec<StepShare<M::Word>> = plan
        .instructions
        .iter()
        .map(|(ins, vis)| StepShare::Accesses(deal_ins(ins, *vis, 1, &mut rng)))
        .collect();
    let (out, mem) = drive(&mut o, plan.preprocess, &memory, &steps)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let mut oracle = PlainMemory::new(plan.initial.clone());
    let want: Vec<M::Word> = plan
        .instructions
        .iter()
        .map(|(ins, _)| oracle.access(ins).expect("plan addresses are in range"))
        .collect();
    check_sums(&[&out], &want, "access result", &context);
    check_sums(&[&mem], oracle.as_slice(), "memory() word", &context);

    // The batch plan.
    let plan = batch_plan::<M::Word>(M::OP_VISIBILITY, n, ops, seed);
    let (memory, steps) = deal_plan(&plan, 1);
    let mut o = make(n);
    let (out, mem) = drive(&mut o, plan.preprocess, &memory[0], &steps[0])
        .unwrap_or_else(|e| panic!("{context}, batches: {e}"));
    let (want_out, want_mem) = plan.oracle();
    check_sums(&[&out], &want_out, "returned value", &context);
    check_sums(&[&mem], &want_mem, "memory() word", &context);
}
