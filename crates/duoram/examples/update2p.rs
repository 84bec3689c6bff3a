//! `cargo run --release -p doram-duoram --example update2p -- LOG_N UPDATES [--no-3p] [--u64]`:
//! 2P-Duoram's UPDATE ([`doram_duoram::two_party`]) on a memory of `2^LOG_N` words of F_p (or
//! 64-bit words with `--u64`), two parties as threads of one process over in-process channels,
//! and beside it 3P-Duoram's online UPDATE at the same size and word (three threads,
//! [`doram_duoram::Duoram`] over the same ring).
//!
//! 2P: UPDATEs are preprocessed in batches of `max(1, 2^21 / n)` (the material of one UPDATE is
//! `2n` field elements), each batch then applied; the memory is opened at the end and checked
//! against a plaintext array. 3P: one operation preprocessed, then its UPDATE, repeated; only
//! the UPDATEs are timed. Per UPDATE, the time is the slowest party's wall-clock time of the
//! call; the figures are medians over the UPDATEs (and, as `duoram_bench` reports, the slowest
//! party's mean), with the per-party CPU time beside them.
//! Bytes are payload bytes sent, from the sessions' counters.

use std::time::{Duration, Instant};

use doram_core::Seed;
use doram_duoram::two_party::{
    MemoryShareOf, SpentMaterialOf, TwoPartyWord, UpdateMaterialOf, check_against_plain,
    padded_len, prepare_reusing, prepare_reusing_u64, update,
};
use doram_duoram::{DuoWord, Duoram, DuoramError, thread_cpu_time};
use doram_field::{Fp, Z64};
use doram_mpc::Additive;
use doram_net::{Comm, LocalMesh, Session};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use rand_core::RngCore;

/// The public workload's seed.
const WORKLOAD_SEED: [u8; 16] = *b"update2p-example";

/// The two word rings, with their preprocessing.
trait Word: TwoPartyWord + DuoWord {
    const NAME: &'static str;
    fn prepare(
        s: &mut Session,
        engine: &mut Arith2,
        count: usize,
        n: usize,
        spare: &mut Vec<SpentMaterialOf<Self>>,
        rng: &mut AesPrg,
    ) -> Result<Vec<UpdateMaterialOf<Self>>, DuoramError>;
}

impl Word for Fp {
    const NAME: &'static str = "F_p";
    fn prepare(
        s: &mut Session,
        engine: &mut Arith2,
        count: usize,
        n: usize,
        spare: &mut Vec<SpentMaterialOf<Fp>>,
        rng: &mut AesPrg,
    ) -> Result<Vec<UpdateMaterialOf<Fp>>, DuoramError> {
        prepare_reusing(s, engine, count, n, spare, rng)
    }
}

impl Word for Z64 {
    const NAME: &'static str = "Z_2^64";
    fn prepare(
        s: &mut Session,
        engine: &mut Arith2,
        count: usize,
        n: usize,
        spare: &mut Vec<SpentMaterialOf<Z64>>,
        rng: &mut AesPrg,
    ) -> Result<Vec<UpdateMaterialOf<Z64>>, DuoramError> {
        prepare_reusing_u64(s, engine, count, n, spare, rng)
    }
}

/// One UPDATE in the clear.
#[derive(Clone, Copy)]
struct Op<W> {
    index: u64,
    delta: W,
}

/// What one party of either protocol reports.
#[derive(Default)]
struct Report {
    /// Wall-clock time of each UPDATE call.
    online: Vec<Duration>,
    /// CPU time of this party's thread over all UPDATE calls.
    online_cpu: Duration,
    /// Wall-clock time of all preprocessing calls.
    prep: Duration,
    online_comm: Comm,
    prep_comm: Comm,
    /// Whether the memory opened at the end equalled the plaintext array (2P only).
    verified: bool,
}

fn cpu() -> Duration {
    thread_cpu_time().unwrap_or_default()
}

/// Random shares of the operations, `P0`'s uniform: index shares mod N, delta shares in W.
fn share_ops<W: Word>(ops: &[Op<W>], big: u64, g: &mut AesPrg) -> [Vec<(u64, W)>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for op in ops {
        let i0 = g.next_u64() & (big - 1);
        let d0 = W::random_word(g);
        out[0].push((i0, d0));
        out[1].push((op.index.wrapping_sub(i0) & (big - 1), op.delta - d0));
    }
    out
}

/// One party of 2P-Duoram: set-up, batches of preprocessing and UPDATEs, the memory opened
/// and compared with the plaintext array `want`.
fn party_2p<W: Word>(
    mut s: Session,
    n: usize,
    batch: usize,
    mine: &[(u64, W)],
    want: &[W],
) -> Result<Report, DuoramError> {
    let mut os = doram_twopc::os_rng();
    let mut rng = AesPrg::new(Seed::random(&mut os));
    let mut engine = Arith2::setup(&mut s, &mut rng)?;
    let mut memory = MemoryShareOf::<W>::zeros(n)?;
    let mut r = Report::default();
    let mut spare = Vec::new();
    for chunk in mine.chunks(batch) {
        s.set_phase("preprocess");
        let t = Instant::now();
        let mats = W::prepare(&mut s, &mut engine, chunk.len(), n, &mut spare, &mut rng)?;
        r.prep += t.elapsed();
        s.set_phase("online");
        for (mat, &(i, d)) in mats.into_iter().zip(chunk) {
            let (t, c) = (Instant::now(), cpu());
            let spent = update(&mut s, &mut memory, mat, i, d)?;
            r.online.push(t.elapsed());
            r.online_cpu += cpu() - c;
            spare.push(spent);
        }
    }
    s.set_phase("open");
    r.verified = match check_against_plain(&mut s, &memory, want) {
        Ok(()) => true,
        Err(DuoramError::VerificationFailed { .. }) => false,
        Err(e) => return Err(e),
    };
    r.prep_comm = s.stats().comm(["preprocess"]);
    r.online_comm = s.stats().comm(["online"]);
    Ok(r)
}

/// One party of 3P-Duoram over the same ring: set-up, Init of a zero memory, then per UPDATE
/// one operation preprocessed (untimed) and the UPDATE (timed).
fn party_3p<W: Word>(s: Session, n: usize, ops: &[Op<W>]) -> Result<Report, DuoramError> {
    let me = s.me();
    let mut seed = [0u8; 16];
    doram_twopc::os_rng().fill_bytes(&mut seed);
    let mut o = Duoram::<W>::setup(s, n, Seed(seed))?;
    let zero = Additive::public(W::ZERO, me);
    o.init(&vec![zero; n])?;
    let mut r = Report::default();
    for op in ops {
        o.session_mut().set_phase("preprocess");
        let t = Instant::now();
        o.preprocess(1)?;
        r.prep += t.elapsed();
        o.session_mut().set_phase("online");
        let addr = Additive::public(W::from_u64(op.index), me);
        let delta = Additive::public(op.delta, me);
        let (t, c) = (Instant::now(), cpu());
        o.update(addr, delta)?;
        r.online.push(t.elapsed());
        r.online_cpu += cpu() - c;
    }
    r.prep_comm = o.session().stats().comm(["preprocess"]);
    r.online_comm = o.session().stats().comm(["online"]);
    Ok(r)
}

fn run_parties<F>(sessions: Vec<Session>, f: F) -> Result<Vec<Report>, Box<dyn std::error::Error>>
where
    F: Fn(Session) -> Result<Report, DuoramError> + Sync,
{
    let out = std::thread::scope(|sc| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|s| {
                let f = &f;
                sc.spawn(move || f(s))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a party thread panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(out.into_iter().collect::<Result<Vec<_>, _>>()?)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// Per UPDATE, the slowest party's time; then the median, minimum and maximum over UPDATEs.
fn slowest(reports: &[Report]) -> (Duration, Duration, Duration) {
    let per_op: Vec<Duration> = (0..reports[0].online.len())
        .map(|i| {
            reports
                .iter()
                .map(|r| r.online[i])
                .max()
                .unwrap_or_default()
        })
        .collect();
    let min = per_op.iter().min().copied().unwrap_or_default();
    let max = per_op.iter().max().copied().unwrap_or_default();
    (median(per_op), min, max)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(name: &str, reports: &[Report], ops: usize) {
    let k = ops.max(1) as f64;
    let (med, min, max) = slowest(reports);
    let cpu: Vec<String> = reports
        .iter()
        .map(|r| format!("{:.3}", ms(r.online_cpu) / k))
        .collect();
    let bytes = |c: &dyn Fn(&Report) -> &Comm| -> Vec<String> {
        reports
            .iter()
            .map(|r| format!("{:.0}", c(r).bytes as f64 / k))
            .collect()
    };
    let prep = reports.iter().map(|r| r.prep).max().unwrap_or_default();
    let total = |r: &Report| r.online.iter().sum::<Duration>();
    let mean = reports.iter().map(total).max().unwrap_or_default();
    println!(
        "{name}: online UPDATE median {:.3} ms (min {:.3}, max {:.3}; slowest party's mean {:.3}); \
         CPU ms/UPDATE per party [{}]; online bytes sent/UPDATE per party [{}], rounds {}",
        ms(med),
        ms(min),
        ms(max),
        ms(mean) / k,
        cpu.join(", "),
        bytes(&|r| &r.online_comm).join(", "),
        reports
            .iter()
            .map(|r| r.online_comm.rounds)
            .max()
            .unwrap_or(0) as f64
            / k,
    );
    println!(
        "{name}: preprocessing {:.3} ms/UPDATE (slowest party, wall clock); bytes sent/UPDATE \
         per party [{}]; rounds {} in all",
        ms(prep) / k,
        bytes(&|r| &r.prep_comm).join(", "),
        reports
            .iter()
            .map(|r| r.prep_comm.rounds)
            .max()
            .unwrap_or(0),
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log_n: u32 = args.first().map_or(Ok(16), |a| a.parse())?;
    let count: usize = args.get(1).map_or(Ok(16), |a| a.parse())?;
    let with_3p = !args.iter().any(|a| a == "--no-3p");
    if args.iter().any(|a| a == "--u64") {
        run::<Z64>(log_n, count, with_3p)
    } else {
        run::<Fp>(log_n, count, with_3p)
    }
}

fn run<W: Word>(log_n: u32, count: usize, with_3p: bool) -> Result<(), Box<dyn std::error::Error>> {
    let n = 1usize << log_n;
    let big = padded_len(n) as u64;
    let batch = ((1usize << 21) / n).clamp(1, count.max(1));

    let mut g = AesPrg::new(Seed(WORKLOAD_SEED));
    let ops: Vec<Op<W>> = (0..count)
        .map(|_| Op {
            index: g.next_u64() % n as u64,
            delta: W::random_word(&mut g),
        })
        .collect();
    let shares = share_ops(&ops, big, &mut g);

    let mesh = |k: usize| LocalMesh::new(k).timeout(Duration::from_secs(600)).build();
    println!(
        "n = 2^{log_n}, {count} UPDATEs, words in {}; 2P batches of {batch}",
        W::NAME
    );
    let mut want = vec![W::ZERO; n];
    for op in &ops {
        want[usize::try_from(op.index)?] += op.delta;
    }
    let two = run_parties(mesh(2), |s| {
        let mine = &shares[s.me().index()];
        party_2p(s, n, batch, mine, &want)
    })?;
    let verified = two.iter().all(|r| r.verified);
    summary("2P", &two, count);
    println!("2P: memory opened and checked against the plaintext array: {verified}");
    if with_3p {
        let three = run_parties(mesh(3), |s| party_3p(s, n, &ops))?;
        summary("3P", &three, count);
    }
    if !verified {
        return Err("the opened memory differs from the plaintext array".into());
    }
    Ok(())
}
