//! `doram bench ot` and `doram bench gc`: the two-party engine's throughput, both parties in
//! this process (one thread each) over the chosen transport, mutually authenticated TLS by
//! default. Times start after each party's setup (base OTs, OT-extension setup); the figures
//! are the slower party's, the median over repetitions.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use doram_core::PartyId;
use doram_net::Shaping;
use doram_net::{Session, run_parties};
use doram_prim::prg::AesPrg;
use doram_twopc::gc::random_delta;
use doram_twopc::{ChunkBits, Circuit, CotExtReceiver, CotExtSender, Evaluator, Garbler};
use doram_twopc::{GarblingScheme, GcEvaluator, GcGarbler, bristol, driver, three_halves};
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::bench::{Backend, sessions};
use crate::oram::value_name;
use crate::randomness::Randomness;
use crate::report::{PartyFigures, print_json};

/// OT extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OtExt {
    /// Ishai–Kilian–Nissim–Petrank 2003: 16 bytes per OT.
    Iknp,
    /// Roy 2022 (SoftSpoken OT): 128/k bits per OT for the chunk size k of `--k`.
    Softspoken,
}

/// Kinds of OT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OtKind {
    /// Random OT: the sender gets two random messages, the receiver one and its random choice.
    Random,
    /// Correlated OT: the sender's messages differ by its global Δ (what garbling needs).
    Correlated,
}

/// How `doram bench ot` and `doram bench gc` run their two parties.
#[derive(Debug, Args)]
pub struct TwoPartyRun {
    /// Transport between the two parties (threads of this process).
    #[arg(long, value_enum, default_value_t = Backend::Tls)]
    pub backend: Backend,
    /// Run the two parties as two `doram party` processes over mutually authenticated TLS
    /// (`--backend` does not apply).
    #[arg(long)]
    pub processes: bool,
    /// Repetitions; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    #[command(flatten)]
    pub randomness: Randomness,
}

impl TwoPartyRun {
    /// The options a `doram party … ot|gc` child needs (it is one party on its own session).
    fn to_args(&self) -> Vec<String> {
        let mut args = vec!["--repeat".to_string(), self.repeat.to_string()];
        args.extend(self.randomness.args());
        args
    }

    /// How the parties ran, as reports record it.
    fn parties_as(&self) -> String {
        if self.processes {
            "processes over TLS".to_string()
        } else {
            format!("threads over {}", value_name(self.backend))
        }
    }
}

/// Arguments of `doram bench ot`.
#[derive(Debug, Args)]
pub struct BenchOtArgs {
    /// The OT extension.
    #[arg(long, value_enum, default_value_t = OtExt::Softspoken)]
    pub ext: OtExt,
    /// SoftSpoken's chunk size in bits (1 to 8): fewer bytes per OT as it grows, 2^k work.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub k: u8,
    /// Random or correlated OT.
    #[arg(long, value_enum, default_value_t = OtKind::Random)]
    pub kind: OtKind,
    /// 2^N OTs per repetition.
    #[arg(long, default_value_t = 22, value_parser = clap::value_parser!(u32).range(10..=26))]
    pub log_count: u32,
    #[command(flatten)]
    pub run: TwoPartyRun,
}

impl BenchOtArgs {
    /// The options as a `doram party … ot` child's arguments.
    fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--ext".to_string(),
            value_name(self.ext),
            "--k".into(),
            self.k.to_string(),
            "--kind".into(),
            value_name(self.kind),
            "--log-count".into(),
            self.log_count.to_string(),
        ];
        args.extend(self.run.to_args());
        args
    }
}

/// Circuits for `doram bench gc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcCircuit {
    /// A chain of 2^N AND gates, each after one XOR gate (`--log-ands`).
    Chain,
    /// A Bristol Fashion file (`--file`), the first input value the garbler's, the rest the
    /// evaluator's; random inputs.
    Bristol,
}

/// Garbling schemes for `doram bench gc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScheme {
    /// Zahur–Rosulek–Evans 2015 (half-gates): 32 bytes per AND gate.
    HalfGates,
    /// Rosulek–Roy 2021 (three-halves): 1.5κ + 5 = 197 bits per AND gate.
    ThreeHalves,
}

impl From<GcScheme> for GarblingScheme {
    fn from(s: GcScheme) -> GarblingScheme {
        match s {
            GcScheme::HalfGates => GarblingScheme::HalfGates,
            GcScheme::ThreeHalves => GarblingScheme::ThreeHalves,
        }
    }
}

/// Arguments of `doram bench gc`.
#[derive(Debug, Args)]
pub struct BenchGcArgs {
    /// The circuit.
    #[arg(long, value_enum, default_value_t = GcCircuit::Chain)]
    pub circuit: GcCircuit,
    /// The garbling scheme (both parties use it).
    #[arg(long, value_enum, default_value_t = GcScheme::HalfGates)]
    pub scheme: GcScheme,
    /// For `--circuit chain`: 2^N AND gates.
    #[arg(long, default_value_t = 22, value_parser = clap::value_parser!(u32).range(4..=26))]
    pub log_ands: u32,
    /// For `--circuit bristol`: the circuit file (e.g. `crates/twopc/tests/data/aes_128.txt`).
    #[arg(long, required_if_eq("circuit", "bristol"))]
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub run: TwoPartyRun,
}

impl BenchGcArgs {
    /// The options as a `doram party … gc` child's arguments.
    fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--circuit".to_string(),
            value_name(self.circuit),
            "--scheme".into(),
            value_name(self.scheme),
            "--log-ands".into(),
            self.log_ands.to_string(),
        ];
        if let Some(f) = &self.file {
            args.extend(["--file".into(), f.display().to_string()]);
        }
        args.extend(self.run.to_args());
        args
    }
}

/// One party's repetitions of `ot` or `gc`, as `doram --json party … ot|gc` prints them.
#[derive(Debug, Serialize, Deserialize)]
pub struct PartyRuns {
    party: String,
    runs: Vec<PartyRun>,
}

/// One repetition at one party: its time after setup (ms) and its traffic.
#[derive(Debug, Serialize, Deserialize)]
struct PartyRun {
    ms: f64,
    figures: PartyFigures,
}

/// The JSON report of `doram bench ot`.
#[derive(Debug, Serialize)]
struct OtReport {
    benchmark: &'static str,
    ext: OtExt,
    k: Option<u8>,
    kind: OtKind,
    count: usize,
    parties_as: String,
    repeat: u32,
    randomness: String,
    /// Median wall time of one repetition after setup (the slower party), in ms.
    median_ms: f64,
    ots_per_s: f64,
    /// Bytes both parties exchanged per OT after setup (both directions).
    bytes_per_ot: f64,
    /// Each party's traffic in the median repetition (setup excluded).
    parties: Vec<PartyFigures>,
}

/// The JSON report of `doram bench gc`.
#[derive(Debug, Serialize)]
struct GcReport {
    benchmark: &'static str,
    circuit: String,
    scheme: GcScheme,
    and_gates: usize,
    xor_gates: usize,
    parties_as: String,
    repeat: u32,
    randomness: String,
    /// Garbling alone, one thread, no I/O: AND gates per second (median).
    garble_and_per_s: f64,
    /// Evaluation alone, one thread, no I/O: AND gates per second (median).
    evaluate_and_per_s: f64,
    /// Both parties over the transport, after OT setup (input labels, tables, outputs):
    /// median wall time in ms and AND gates per second.
    two_party_ms: f64,
    two_party_and_per_s: f64,
    /// Bytes both parties exchanged per AND gate in the two-party run (both directions).
    bytes_per_and: f64,
    /// Bytes of garbled tables per AND gate (the scheme's table encoding).
    table_bytes_per_and: f64,
    parties: Vec<PartyFigures>,
}

/// A party's side of one repetition, after its setup: its time.
type PartyFn<'a> = dyn Fn(&mut Session, &mut AesPrg) -> Result<Duration> + Sync + 'a;

/// One repetition of `f` at this party, with its own randomness.
fn one_run(
    s: &mut Session,
    rep: u32,
    f: &PartyFn<'_>,
    randomness: &Randomness,
) -> Result<PartyRun> {
    let me = s.me();
    let domain = format!("bench-twopc-{rep}");
    let mut rng = AesPrg::new(randomness.entropy().party_seed(me, &domain));
    let t = f(s, &mut rng)?;
    Ok(PartyRun {
        ms: t.as_secs_f64() * 1e3,
        figures: PartyFigures::from_stats(me, s.stats()),
    })
}

/// Runs `f` at both parties `run.repeat` times, as threads over `run.backend` or as two processes
/// (`job` with `job_args`); returns the repetitions as (slower party's time, both parties'
/// figures), sorted by time.
fn repetitions(
    run: &TwoPartyRun,
    f: &PartyFn<'_>,
    (job, job_args): (&str, Vec<String>),
) -> Result<Vec<(Duration, Vec<PartyFigures>)>> {
    let (repeat, randomness) = (run.repeat, &run.randomness);
    let per_party: Vec<PartyRuns> = if run.processes {
        crate::processes::run_n_parties_with(2, job, |_| job_args.clone(), Shaping::NONE)?
    } else {
        let mut parties: Vec<PartyRuns> = PartyId::first(2)
            .iter()
            .map(|p| PartyRuns {
                party: p.to_string(),
                runs: Vec::new(),
            })
            .collect();
        for rep in 0..repeat {
            let (ss, _dir) = sessions(run.backend)?;
            let out = run_parties(ss, "bench", |mut s| one_run(&mut s, rep, f, randomness));
            for (p, r) in parties.iter_mut().zip(out) {
                p.runs
                    .push(r.map_err(|_| anyhow::anyhow!("a party panicked"))??);
            }
        }
        parties
    };
    let [p0, p1] = <[PartyRuns; 2]>::try_from(per_party)
        .map_err(|_| anyhow::anyhow!("two party reports expected"))?;
    if p0.runs.len() != p1.runs.len() || p0.runs.is_empty() {
        bail!("the parties reported different numbers of repetitions");
    }
    let mut runs: Vec<(Duration, Vec<PartyFigures>)> = p0
        .runs
        .into_iter()
        .zip(p1.runs)
        .map(|(a, b)| {
            let t = Duration::from_secs_f64(a.ms.max(b.ms) / 1e3);
            (t, vec![a.figures, b.figures])
        })
        .collect();
    runs.sort_by_key(|r| r.0);
    Ok(runs)
}

/// `doram party … ot|gc`: this party's `repeat` repetitions of `f` on one session, printed as
/// a [`PartyRuns`] report.
fn party_runs(
    mut s: Session,
    repeat: u32,
    f: &PartyFn<'_>,
    randomness: &Randomness,
    json: bool,
) -> Result<()> {
    let runs = (0..repeat)
        .map(|rep| one_run(&mut s, rep, f, randomness))
        .collect::<Result<Vec<_>>>()?;
    let r = PartyRuns {
        party: s.me().to_string(),
        runs,
    };
    if json {
        return print_json(&r);
    }
    for (i, run) in r.runs.iter().enumerate() {
        println!(
            "{} repetition {i}: {:.2} ms, sent {} B",
            r.party, run.ms, run.figures.bytes_sent
        );
    }
    Ok(())
}

/// `doram party … ot`.
pub fn party_ot(s: Session, a: &BenchOtArgs, json: bool) -> Result<()> {
    let f = ot_party(a)?;
    party_runs(s, a.run.repeat, &f, &a.run.randomness, json)
}

/// `doram party … gc`.
pub fn party_gc(s: Session, a: &BenchGcArgs, json: bool) -> Result<()> {
    let (_, c) = gc_circuit(a)?;
    let f = gc_party(&c, a.scheme);
    party_runs(s, a.run.repeat, &f, &a.run.randomness, json)
}

/// The median repetition.
fn median<T>(mut runs: Vec<(Duration, T)>) -> Result<(Duration, T)> {
    let mid = runs.len() / 2;
    if runs.is_empty() {
        bail!("no repetitions");
    }
    Ok(runs.swap_remove(mid))
}

fn total_bytes(parties: &[PartyFigures]) -> u64 {
    // Each party counts what it sent; both directions are the sum of the senders.
    parties.iter().map(|p| p.bytes_sent).sum()
}

/// A party's side of `doram bench ot`: setup, then the timed OTs.
fn ot_party(
    a: &BenchOtArgs,
) -> Result<impl Fn(&mut Session, &mut AesPrg) -> Result<Duration> + Sync> {
    let m = 1usize << a.log_count;
    let k = ChunkBits::new(usize::from(a.k)).context("SoftSpoken chunk size")?;
    let (ext, kind) = (a.ext, a.kind);
    Ok(
        move |s: &mut Session, rng: &mut AesPrg| -> Result<Duration> {
            if s.me() == PartyId::P0 {
                let delta = random_delta(rng);
                match ext {
                    OtExt::Iknp => {
                        let mut ot = driver::iknp_sender_setup(s, delta, rng)?;
                        send_ots(s, &mut ot, kind, m)
                    }
                    OtExt::Softspoken => {
                        let mut ot = driver::softspoken_sender_setup(s, k, delta, rng)?;
                        send_ots(s, &mut ot, kind, m)
                    }
                }
            } else {
                match ext {
                    OtExt::Iknp => {
                        let mut ot = driver::iknp_receiver_setup(s, rng)?;
                        receive_ots(s, &mut ot, kind, m, rng)
                    }
                    OtExt::Softspoken => {
                        let mut ot = driver::softspoken_receiver_setup(s, k, rng)?;
                        receive_ots(s, &mut ot, kind, m, rng)
                    }
                }
            }
        },
    )
}

/// Runs `doram bench ot`.
pub fn bench_ot(a: &BenchOtArgs, json: bool) -> Result<()> {
    let m = 1usize << a.log_count;
    let ext = a.ext;
    let f = ot_party(a)?;
    let runs = repetitions(&a.run, &f, ("ot", a.to_args()))?;
    let (t, parties) = median(runs)?;
    let r = OtReport {
        benchmark: "ot",
        ext,
        k: (ext == OtExt::Softspoken).then_some(a.k),
        kind: a.kind,
        count: m,
        parties_as: a.run.parties_as(),
        repeat: a.run.repeat,
        randomness: a.run.randomness.label(),
        median_ms: t.as_secs_f64() * 1e3,
        ots_per_s: m as f64 / t.as_secs_f64(),
        bytes_per_ot: total_bytes(&parties) as f64 / m as f64,
        parties,
    };
    if json {
        return print_json(&r);
    }
    let name = match ext {
        OtExt::Iknp => "IKNP".to_string(),
        OtExt::Softspoken => format!("SoftSpoken k = {}", a.k),
    };
    println!(
        "{name}, {:?} OT, {}: {m} OTs in {:.1} ms = {:.2} M OTs/s, {:.3} bytes/OT \
         (both directions; median of {})",
        a.kind,
        r.parties_as,
        r.median_ms,
        r.ots_per_s / 1e6,
        r.bytes_per_ot,
        a.run.repeat
    );
    for p in &r.parties {
        println!(
            "  {}: sent {} B in {} messages",
            p.party, p.bytes_sent, p.messages_sent
        );
    }
    Ok(())
}

/// `m` OTs of `kind` as the sender, timed after setup (the statistics restart here too).
fn send_ots(
    s: &mut Session,
    ot: &mut impl CotExtSender,
    kind: OtKind,
    m: usize,
) -> Result<Duration> {
    s.reset_stats();
    let t = Instant::now();
    match kind {
        OtKind::Random => {
            std::hint::black_box(driver::rot_send(s, ot, m)?);
        }
        OtKind::Correlated => {
            std::hint::black_box(driver::cot_send(s, ot, m)?);
        }
    }
    Ok(t.elapsed())
}

/// `m` OTs of `kind` as the receiver (random choices), timed after setup.
fn receive_ots(
    s: &mut Session,
    ot: &mut impl CotExtReceiver,
    kind: OtKind,
    m: usize,
    rng: &mut AesPrg,
) -> Result<Duration> {
    let choices: Vec<bool> = (0..m).map(|_| rng.next_u32() & 1 == 1).collect();
    s.reset_stats();
    let t = Instant::now();
    match kind {
        OtKind::Random => {
            std::hint::black_box(driver::rot_receive(s, ot, m, rng)?);
        }
        OtKind::Correlated => {
            std::hint::black_box(driver::cot_receive(s, ot, &choices)?);
        }
    }
    Ok(t.elapsed())
}

/// The circuit of `doram bench gc`, with its name.
fn gc_circuit(a: &BenchGcArgs) -> Result<(String, Circuit)> {
    match a.circuit {
        GcCircuit::Chain => Ok((
            format!("chain of 2^{} AND", a.log_ands),
            Circuit::and_chain(1 << a.log_ands)?,
        )),
        GcCircuit::Bristol => {
            let path = a.file.as_ref().context("--circuit bristol needs --file")?;
            let text =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let b = bristol::parse(&text).with_context(|| format!("parsing {}", path.display()))?;
            let c = b
                .two_party(1)
                .context("a Bristol circuit for two parties needs at least one input value")?;
            Ok((path.display().to_string(), c))
        }
    }
}

/// A party's side of `doram bench gc`: OT setup, then the timed two-party run of `c` on
/// random inputs with `scheme`.
fn gc_party(
    c: &Circuit,
    scheme: GcScheme,
) -> impl Fn(&mut Session, &mut AesPrg) -> Result<Duration> + Sync + '_ {
    let (g_in, e_in) = (c.shape().garbler_inputs, c.shape().evaluator_inputs);
    move |s: &mut Session, rng: &mut AesPrg| -> Result<Duration> {
        if s.me() == PartyId::P0 {
            let delta = random_delta(rng);
            let mut ot = driver::softspoken_sender_setup(s, ChunkBits::default(), delta, rng)?;
            let inputs: Vec<bool> = (0..g_in).map(|_| rng.next_u32() & 1 == 1).collect();
            match scheme {
                GcScheme::HalfGates => {
                    let mut g = Garbler::new(delta, c.wires())?;
                    timed_garble(s, &mut ot, &mut g, c, &inputs, rng)
                }
                GcScheme::ThreeHalves => {
                    let mut g = three_halves::Garbler::new(delta, c.wires(), rng)?;
                    timed_garble(s, &mut ot, &mut g, c, &inputs, rng)
                }
            }
        } else {
            let mut ot = driver::softspoken_receiver_setup(s, ChunkBits::default(), rng)?;
            let inputs: Vec<bool> = (0..e_in).map(|_| rng.next_u32() & 1 == 1).collect();
            match scheme {
                GcScheme::HalfGates => {
                    timed_evaluate(s, &mut ot, &mut Evaluator::new(c.wires()), c, &inputs)
                }
                GcScheme::ThreeHalves => {
                    let mut e = three_halves::Evaluator::new(c.wires());
                    timed_evaluate(s, &mut ot, &mut e, c, &inputs)
                }
            }
        }
    }
}

/// The garbler's timed run of `c` (traffic counted from here).
fn timed_garble(
    s: &mut Session,
    ot: &mut impl CotExtSender,
    g: &mut impl GcGarbler,
    c: &Circuit,
    inputs: &[bool],
    rng: &mut AesPrg,
) -> Result<Duration> {
    s.reset_stats();
    let t = Instant::now();
    driver::garble(s, ot, g, c, inputs, rng)?;
    Ok(t.elapsed())
}

/// The evaluator's timed run of `c` (traffic counted from here).
fn timed_evaluate(
    s: &mut Session,
    ot: &mut impl CotExtReceiver,
    e: &mut impl GcEvaluator,
    c: &Circuit,
    inputs: &[bool],
) -> Result<Duration> {
    s.reset_stats();
    let t = Instant::now();
    driver::evaluate(s, ot, e, c, inputs)?;
    Ok(t.elapsed())
}

/// Runs `doram bench gc`.
pub fn bench_gc(a: &BenchGcArgs, json: bool) -> Result<()> {
    let (name, c) = gc_circuit(a)?;
    let ands = c.and_gates();
    if ands == 0 {
        bail!("the circuit has no AND gate: nothing to measure");
    }
    let xors = c.gates().len() - ands;
    let (garble, evaluate) = local_rates(&c, a.scheme, a.run.repeat, &a.run.randomness)?;
    let f = gc_party(&c, a.scheme);
    let runs = repetitions(&a.run, &f, ("gc", a.to_args()))?;
    let (t, parties) = median(runs)?;
    let r = GcReport {
        benchmark: "gc",
        circuit: name,
        scheme: a.scheme,
        and_gates: ands,
        xor_gates: xors,
        parties_as: a.run.parties_as(),
        repeat: a.run.repeat,
        randomness: a.run.randomness.label(),
        garble_and_per_s: garble,
        evaluate_and_per_s: evaluate,
        two_party_ms: t.as_secs_f64() * 1e3,
        two_party_and_per_s: ands as f64 / t.as_secs_f64(),
        bytes_per_and: total_bytes(&parties) as f64 / ands as f64,
        table_bytes_per_and: GarblingScheme::from(a.scheme).table_bytes(ands) as f64 / ands as f64,
        parties,
    };
    if json {
        return print_json(&r);
    }
    println!(
        "{}, {}: {ands} AND and {xors} XOR/INV gates, {:.3} table bytes per AND gate. Garble \
         {:.2} M AND/s, evaluate {:.2} M AND/s (one thread each, no I/O); two parties, {}: \
         {:.1} ms = {:.2} M AND/s, {:.1} bytes per AND gate (both directions, inputs and \
         outputs included; median of {})",
        r.circuit,
        GarblingScheme::from(a.scheme),
        r.table_bytes_per_and,
        r.garble_and_per_s / 1e6,
        r.evaluate_and_per_s / 1e6,
        r.parties_as,
        r.two_party_ms,
        r.two_party_and_per_s / 1e6,
        r.bytes_per_and,
        a.run.repeat
    );
    Ok(())
}

/// Garbling and evaluation alone with `scheme` (one thread, no I/O, labels and tables handed
/// over directly): the median AND gates per second of each.
fn local_rates(
    c: &Circuit,
    scheme: GcScheme,
    repeat: u32,
    randomness: &Randomness,
) -> Result<(f64, f64)> {
    let mut rng = AesPrg::new(
        randomness
            .entropy()
            .party_seed(PartyId::P0, "bench-gc-local"),
    );
    let delta = random_delta(&mut rng);
    let (mut g_ts, mut e_ts) = (Vec::new(), Vec::new());
    for _ in 0..repeat {
        let (g, e) = match scheme {
            GcScheme::HalfGates => local_run(
                c,
                &mut Garbler::new(delta, c.wires())?,
                &mut Evaluator::new(c.wires()),
                &mut rng,
            )?,
            GcScheme::ThreeHalves => {
                let mut g = three_halves::Garbler::new(delta, c.wires(), &mut rng)?;
                let mut e = three_halves::Evaluator::new(c.wires());
                local_run(c, &mut g, &mut e, &mut rng)?
            }
        };
        g_ts.push(g);
        e_ts.push(e);
    }
    g_ts.sort();
    e_ts.sort();
    let rate = |ts: &[Duration]| c.and_gates() as f64 / ts[ts.len() / 2].as_secs_f64();
    Ok((rate(&g_ts), rate(&e_ts)))
}

/// Gates garbled at a time by [`local_run`].
const LOCAL_BATCH: usize = 1 << 15;

/// One local garbling and evaluation of `c` on random inputs: the time of each.
fn local_run<G: GcGarbler, E: GcEvaluator>(
    c: &Circuit,
    g: &mut G,
    e: &mut E,
    rng: &mut AesPrg,
) -> Result<(Duration, Duration)> {
    let shape = c.shape();
    for w in 0..(shape.garbler_inputs + shape.evaluator_inputs) as u32 {
        let mut l = [0u8; 16];
        rng.fill_bytes(&mut l);
        g.set_zero_label(w, u128::from_le_bytes(l))?;
        e.set_label(w, g.label(w, rng.next_u32() & 1 == 1)?)?;
    }
    // Garble as the driver does, in batches into one bounded buffer emptied after each, and
    // run everything twice, timing the second run: the first touches the buffers' pages, so
    // that page faults do not count as garbling (they dominate a circuit of a few thousand
    // gates). The second run's AND gates follow the first's on both sides.
    let ands = c.and_gates();
    let mut tables = G::tables_with_capacity(LOCAL_BATCH.min(ands));
    let mut runs = Vec::with_capacity(2);
    for _ in 0..2 {
        let mut bytes = Vec::new();
        let mut garble = Duration::ZERO;
        let batches = c.gates().chunks(LOCAL_BATCH);
        let n_batches = batches.len();
        for (i, batch) in batches.enumerate() {
            let t = Instant::now();
            g.garble_batch(batch, &mut tables)?;
            garble += t.elapsed();
            let held = G::tables_held(&tables);
            // Whole groups of 8 until the end (three-halves packs 8 gates' control bits).
            let take = if i + 1 == n_batches {
                held
            } else {
                held / 8 * 8
            };
            bytes.extend_from_slice(G::tables_front(&mut tables, take)?);
            G::drop_tables_front(&mut tables, take)?;
        }
        runs.push((E::read_tables(PartyId::P0, bytes, ands)?, garble));
    }
    let mut evaluate = Duration::ZERO;
    let mut garble = Duration::ZERO;
    for (tables, g_time) in &runs {
        let mut pos = 0;
        let t = Instant::now();
        let done = e.eval_batch(c.gates(), tables, &mut pos)?;
        evaluate = t.elapsed();
        garble = *g_time;
        if done != c.gates().len() {
            bail!("evaluation stopped early: a table is missing");
        }
    }
    Ok((garble, evaluate))
}
