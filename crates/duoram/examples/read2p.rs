//! `cargo run --release -p doram-duoram --example read2p -- LOG_N READS [LATENCY_MS MBIT] [u64]`:
//! 2P-Duoram's READ ([`doram_duoram::two_party::read`]) on a memory of `2^LOG_N` random words
//! of F_p (or, with `u64` last, of 64-bit words: [`doram_duoram::two_party::read_u64`]), two
//! parties as threads of one process over in-process channels (shaped with a one-way latency
//! and a bandwidth if given).
//!
//! After the set-up (engine, SPIRAL keys, public parameters exchanged: reported apart), each
//! READ is preprocessed on its own (random OTs, the query, its expansion) and then run; both
//! are timed, per READ, as the slowest party's wall-clock time (the online step from a
//! one-byte exchange that lines the two parties up after the preprocessing), and the figures are medians
//! over the READs, with the per-party CPU time of the online step beside them. Every READ's
//! two output shares are opened at the end and compared with the plaintext memory. Bytes and
//! rounds are per party, from the sessions' counters.

use std::time::{Duration, Instant};

use doram_duoram::two_party::{
    MemoryShare, MemoryShare64, prepare_reads, read, read_u64, setup_reads, setup_reads_u64,
};
use doram_duoram::{DuoramError, thread_cpu_time};
use doram_field::{Fp, Z64};
use doram_net::{Comm, LocalMesh, Session, Shaping};
use doram_prim::AesPrg;
use doram_twopc::arith::Arith2;
use rand_core::RngCore;

const WORKLOAD_SEED: [u8; 16] = *b"read2p-example!!";

#[derive(Default)]
struct Report {
    setup: Duration,
    prep: Vec<Duration>,
    online: Vec<Duration>,
    online_cpu: Duration,
    setup_comm: Comm,
    prep_comm: Comm,
    online_comm: Comm,
    outputs: Vec<Fp>,
    outputs_u64: Vec<u64>,
}

/// One party's share of the memory.
#[derive(Clone)]
enum Words {
    Field(Vec<Fp>),
    U64(Vec<u64>),
}

fn party(mut s: Session, memory: Words, indices: &[u64]) -> Result<Report, DuoramError> {
    let mut rng = doram_twopc::os_rng();
    let mut r = Report::default();
    s.set_phase("setup");
    let t = Instant::now();
    let mut engine = Arith2::setup(&mut s, &mut rng)?;
    let (field, words) = match memory {
        Words::Field(m) => (Some(MemoryShare::from_shares(m)?), None),
        Words::U64(w) => (
            None,
            Some(MemoryShare64::from_shares(
                w.into_iter().map(Z64).collect(),
            )?),
        ),
    };
    let mut setup = match (&field, &words) {
        (Some(m), _) => setup_reads(&mut s, m.len())?,
        (_, Some(w)) => setup_reads_u64(&mut s, w.len())?,
        _ => return Err(DuoramError::ApiMisuse("no memory")),
    };
    r.setup = t.elapsed();
    for &i in indices {
        s.set_phase("preprocess");
        let t = Instant::now();
        let mat = prepare_reads(&mut s, &mut engine, &setup, 1, &mut rng)?;
        r.prep.push(t.elapsed());
        // Both parties start the online step together: the preprocessing ends at slightly
        // different times at the two parties (the query expansion runs on a thread pool), and
        // that skew is not the READ's.
        s.set_phase("sync");
        let other = s.peers().next().ok_or(DuoramError::ApiMisuse("no peer"))?;
        s.send_bytes(other, &[0])?;
        s.recv_bytes(other)?;
        s.set_phase("online");
        let (t, c) = (Instant::now(), thread_cpu_time().unwrap_or_default());
        let mat = mat
            .into_iter()
            .next()
            .ok_or(DuoramError::ApiMisuse("no material"))?;
        match (&field, &words) {
            (Some(m), _) => r.outputs.push(read(&mut s, m, &mut setup, mat, i)?),
            (_, Some(w)) => r
                .outputs_u64
                .push(read_u64(&mut s, w, &mut setup, mat, i)?.0),
            _ => {}
        }
        r.online.push(t.elapsed());
        r.online_cpu += thread_cpu_time().unwrap_or_default() - c;
    }
    r.setup_comm = s.stats().comm(["setup"]);
    r.prep_comm = s.stats().comm(["preprocess"]);
    r.online_comm = s.stats().comm(["online"]);
    Ok(r)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

fn slowest(reports: &[Report], f: impl Fn(&Report) -> &Vec<Duration>) -> Duration {
    let k = f(&reports[0]).len();
    median(
        (0..k)
            .map(|i| reports.iter().map(|r| f(r)[i]).max().unwrap_or_default())
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: read2p LOG_N READS [LATENCY_MS MBIT] [u64]";
    let mut args = args;
    let u64_words = args.last().is_some_and(|a| a == "u64");
    if u64_words {
        args.pop();
    }
    let log_n: u32 = args.first().ok_or(usage)?.parse()?;
    let reads: usize = args.get(1).ok_or(usage)?.parse()?;
    let shaping = match (args.get(2), args.get(3)) {
        (Some(l), Some(b)) => Shaping {
            latency: Duration::from_secs_f64(l.parse::<f64>()? / 1e3),
            bandwidth_bits_per_sec: Some(b.parse::<f64>()? * 1e6),
        },
        _ => Shaping::NONE,
    };
    let n = 1usize << log_n;
    let mut g = AesPrg::new(doram_core::Seed(WORKLOAD_SEED));
    let plain: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
    let share0: Vec<Fp> = (0..n).map(|_| Fp::random(&mut g)).collect();
    let share1: Vec<Fp> = plain.iter().zip(&share0).map(|(x, a)| *x - *a).collect();
    let plain_u64: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
    let w0: Vec<u64> = (0..n).map(|_| g.next_u64()).collect();
    let w1: Vec<u64> = plain_u64
        .iter()
        .zip(&w0)
        .map(|(x, a)| x.wrapping_sub(*a))
        .collect();
    let (m0, m1) = if u64_words {
        (Words::U64(w0), Words::U64(w1))
    } else {
        (Words::Field(share0), Words::Field(share1))
    };
    let targets: Vec<u64> = (0..reads).map(|_| g.next_u64() % n as u64).collect();
    let i0: Vec<u64> = (0..reads).map(|_| g.next_u64() % n as u64).collect();
    let i1: Vec<u64> = targets
        .iter()
        .zip(&i0)
        .map(|(t, a)| t.wrapping_sub(*a) & (n as u64 - 1))
        .collect();
    let sessions = LocalMesh::new(2)
        .timeout(Duration::from_secs(600))
        .shaping(shaping)
        .build();
    let inputs = [(m0, i0), (m1, i1)];
    let reports: Vec<Report> = std::thread::scope(|sc| {
        let handles: Vec<_> = sessions
            .into_iter()
            .zip(&inputs)
            .map(|(s, (m, i))| sc.spawn(move || party(s, m.clone(), i)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a party thread panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let verified = (0..reads).all(|k| {
        let t = targets[k] as usize;
        if u64_words {
            reports[0].outputs_u64[k].wrapping_add(reports[1].outputs_u64[k]) == plain_u64[t]
        } else {
            reports[0].outputs[k] + reports[1].outputs[k] == plain[t]
        }
    });
    let k = reads.max(1) as f64;
    let per = |c: &dyn Fn(&Report) -> &Comm| -> String {
        reports
            .iter()
            .map(|r| {
                let c = c(r);
                format!(
                    "{:.0} B/{:.1} rounds",
                    c.bytes as f64 / k,
                    c.rounds as f64 / k
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "2P-Duoram READ, n = 2^{log_n} words of {}, {reads} reads, net {:?} latency {:?} bit/s, all correct: {verified}",
        if u64_words { "64 bits" } else { "F_p" },
        shaping.latency,
        shaping.bandwidth_bits_per_sec
    );
    println!(
        "  setup (once): {:.1} ms; sent per party {:?} B",
        ms(reports.iter().map(|r| r.setup).max().unwrap_or_default()),
        reports
            .iter()
            .map(|r| r.setup_comm.bytes)
            .collect::<Vec<_>>()
    );
    println!(
        "  preprocessing / READ: median {:.1} ms; per party [{}]",
        ms(slowest(&reports, |r| &r.prep)),
        per(&|r| &r.prep_comm)
    );
    println!(
        "  online / READ: median {:.1} ms; CPU per party [{}] ms; per party [{}]",
        ms(slowest(&reports, |r| &r.online)),
        reports
            .iter()
            .map(|r| format!("{:.1}", ms(r.online_cpu) / k))
            .collect::<Vec<_>>()
            .join(", "),
        per(&|r| &r.online_comm)
    );
    let total: Vec<Duration> = (0..reads)
        .map(|i| {
            reports.iter().map(|r| r.prep[i]).max().unwrap_or_default()
                + reports
                    .iter()
                    .map(|r| r.online[i])
                    .max()
                    .unwrap_or_default()
        })
        .collect();
    println!(
        "  preprocessing + online / READ: median {:.1} ms",
        ms(median(total))
    );
    if !verified {
        return Err("a READ returned a wrong value".into());
    }
    Ok(())
}
