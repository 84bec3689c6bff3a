//! A benchmark runner for Ramen, for the command-line tool and the benchmarks: three parties
//! run a random workload, either as three threads over an in-process mesh ([`run_local`]) or
//! each over its own connected [`Session`] — in-process, TCP or TLS ([`run_party`], what
//! `doram party` calls on every host).
//!
//! Every party derives the same plaintext workload from the public seed (standing in for the
//! program that would produce the instructions) and takes its shares of it from a synthetic
//! dealer keyed by that seed ([`SYNTHETIC_DEALER`]: the shares protect nothing, which the
//! reports say); each party's own randomness comes from [`BenchConfig::entropy`] (the OS
//! unless a reproducible run asks otherwise): a random memory
//! (or an all-zero one, as in the reference implementation's benchmark) and `accesses`
//! instructions with random addresses, values and secret-shared ops (random reads and writes,
//! or only writes). The timed part covers everything after setup — preprocessing (just in time
//! or up front), Init, the accesses, the epoch refreshes and write-backs — and is reported per
//! access, split into steps ([`StepTimes`]); bytes, messages and rounds come from the session's
//! counters ([`Session::stats`]) by the step's phase. With `verify`, the parties afterwards open
//! every result and the final memory to each other (outside the measured phases) and compare
//! them with a plaintext mirror.

use std::time::{Duration, Instant};

use doram_core::{Entropy, PartyId, Seed};
use doram_field::Fp;
use doram_mpc::{Additive, deal_additive};
use doram_net::{LocalMesh, Session, Shaping, Stats, run_parties_ok};
use doram_prim::AesPrg;
use rand_core::RngCore;

use crate::doram::Ramen;
use crate::error::RamenError;
use crate::params::Params;
use crate::steps::{Step, StepTimes};

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchConfig {
    /// Memory size, threads, tag lengths.
    pub params: Params,
    /// Number of accesses (e.g. one epoch: `params.epoch()`).
    pub accesses: usize,
    /// Public seed of the synthetic workload (memory and instructions) and of the synthetic
    /// dealer that shares it: benchmark data, public to anyone who knows the seed.
    pub seed: u64,
    /// Where each party's own secret randomness comes from (OS entropy unless a reproducible
    /// run asks for [`Entropy::InsecureSeed`]).
    pub entropy: Entropy,
    /// Preprocess all accesses before Init instead of just in time.
    pub preprocess_first: bool,
    /// Open and check every result and the final memory afterwards.
    pub verify: bool,
    /// Start from an all-zero memory (the reference benchmark's choice) instead of a random one.
    pub zero_memory: bool,
    /// Only writes (the reference benchmark's choice) instead of a random mix.
    pub writes_only: bool,
    /// Receive timeout of the sessions [`run_local`] creates.
    pub timeout: Duration,
}

impl BenchConfig {
    /// One epoch of random reads and writes on a random memory of `params.n()` words,
    /// preprocessed just in time, not verified.
    pub fn new(params: Params) -> BenchConfig {
        BenchConfig {
            params,
            accesses: params.epoch(),
            seed: 1,
            entropy: Entropy::Os,
            preprocess_first: false,
            verify: false,
            zero_memory: false,
            writes_only: false,
            timeout: doram_net::DEFAULT_TIMEOUT,
        }
    }
}

/// Communication of one party in some phases (re-exported from `doram-net`).
pub use doram_net::Comm;

/// What `stats` records as sent in `steps`.
fn comm(stats: &Stats, steps: &[Step]) -> Comm {
    stats.comm(steps.iter().map(|s| s.phase()))
}

/// The steps whose messages are counted as online.
const ONLINE: [Step; 6] = [
    Step::Refresh,
    Step::StashRead,
    Step::MemoryRead,
    Step::StashWrite,
    Step::WriteBack,
    Step::GetMemory,
];

/// One party's measurements.
#[derive(Clone, Debug)]
pub struct PartyReport {
    /// The party.
    pub party: PartyId,
    /// Setup time (pairwise seeds, DOPRF Init), not part of `elapsed`.
    pub setup: Duration,
    /// Wall time from the end of setup to the end of the last access: preprocessing, Init,
    /// accesses, refreshes and write-backs.
    pub elapsed: Duration,
    /// Time per step (inside `elapsed`, plus setup).
    pub steps: StepTimes,
    /// Online communication: refresh, stash and memory accesses, write-back.
    pub online: Comm,
    /// Preprocessing communication.
    pub preprocessing: Comm,
    /// Setup communication.
    pub setup_comm: Comm,
    /// Per-step communication, in [`Step::ALL`] order.
    pub per_step: Vec<(Step, Comm)>,
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct BenchOutcome {
    /// What ran.
    pub config: BenchConfig,
    /// Each party's report, in party order (one entry for [`run_party`]'s caller).
    pub parties: Vec<PartyReport>,
    /// Whether the results were verified (and matched; a mismatch is an error).
    pub verified: bool,
}

impl BenchOutcome {
    fn per_access(&self, d: impl Fn(&PartyReport) -> Duration) -> Duration {
        let worst = self.parties.iter().map(d).max().unwrap_or_default();
        worst / self.config.accesses.max(1) as u32
    }

    /// Amortized time per access, preprocessing and refreshes included (the slowest party).
    pub fn amortized_per_access(&self) -> Duration {
        self.per_access(|p| p.elapsed)
    }

    /// Preprocessing time per access (the slowest party).
    pub fn preprocessing_per_access(&self) -> Duration {
        self.per_access(|p| p.steps.preprocessing())
    }

    /// Online time per access (the slowest party).
    pub fn online_per_access(&self) -> Duration {
        self.per_access(|p| p.steps.online())
    }

    /// Online payload bytes per access, summed over the parties.
    pub fn online_bytes_per_access(&self) -> f64 {
        let total: u64 = self.parties.iter().map(|p| p.online.bytes).sum();
        total as f64 / self.config.accesses.max(1) as f64
    }

    /// Preprocessing payload bytes per access, summed over the parties.
    pub fn preprocessing_bytes_per_access(&self) -> f64 {
        let total: u64 = self.parties.iter().map(|p| p.preprocessing.bytes).sum();
        total as f64 / self.config.accesses.max(1) as f64
    }

    /// A JSON object with the configuration, per-access figures and per-party details.
    pub fn to_json(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let comm = |c: &Comm| {
            format!(
                "{{\"bytes\":{},\"overhead\":{},\"messages\":{},\"rounds\":{}}}",
                c.bytes, c.overhead, c.messages, c.rounds
            )
        };
        let parties: Vec<String> = self
            .parties
            .iter()
            .map(|p| {
                let steps: Vec<String> = Step::ALL
                    .iter()
                    .map(|&s| format!("\"{}\":{:.3}", s.phase(), ms(p.steps.get(s))))
                    .collect();
                let step_comm: Vec<String> = p
                    .per_step
                    .iter()
                    .map(|(s, c)| format!("\"{}\":{}", s.phase(), comm(c)))
                    .collect();
                format!(
                    "{{\"party\":{},\"setup_ms\":{:.3},\"elapsed_ms\":{:.3},\"steps_ms\":{{{}}},\
                     \"online\":{},\"preprocessing\":{},\"setup\":{},\"steps_comm\":{{{}}}}}",
                    p.party.index(),
                    ms(p.setup),
                    ms(p.elapsed),
                    steps.join(","),
                    comm(&p.online),
                    comm(&p.preprocessing),
                    comm(&p.setup_comm),
                    step_comm.join(",")
                )
            })
            .collect();
        let c = &self.config;
        format!(
            "{{\"protocol\":\"ramen\",\"n\":{},\"stash\":{},\"tag_bits\":{},\"stash_tag_bits\":{},\
             \"threads\":{},\"accesses\":{},\"seed\":{},\"randomness\":\"{}\",\"dealer\":\"{}\",\"preprocess_first\":{},\"verified\":{},\
             \"amortized_ms_per_access\":{:.4},\"online_ms_per_access\":{:.4},\
             \"preprocessing_ms_per_access\":{:.4},\"online_bytes_per_access\":{:.1},\
             \"preprocessing_bytes_per_access\":{:.1},\"parties\":[{}]}}",
            c.params.n(),
            c.params.stash(),
            c.params.tag_bits(),
            c.params.stash_tag_bits(),
            c.params.threads(),
            c.accesses,
            c.seed,
            c.entropy,
            SYNTHETIC_DEALER,
            c.preprocess_first,
            self.verified,
            ms(self.amortized_per_access()),
            ms(self.online_per_access()),
            ms(self.preprocessing_per_access()),
            self.online_bytes_per_access(),
            self.preprocessing_bytes_per_access(),
            parties.join(",")
        )
    }
}

/// The plaintext workload of a run: initial memory and instructions (op, addr, value).
struct Workload {
    memory: Vec<Fp>,
    instructions: Vec<(bool, u64, Fp)>,
}

fn workload(cfg: &BenchConfig) -> Workload {
    let mut rng = dealer(cfg.seed, 0);
    let n = cfg.params.n();
    let memory = if cfg.zero_memory {
        vec![Fp::ZERO; n]
    } else {
        (0..n).map(|_| rng.random()).collect()
    };
    let instructions = (0..cfg.accesses)
        .map(|_| {
            let write = cfg.writes_only || rng.next_u32() & 1 == 1;
            let addr = crate::tags::uniform_below(&mut rng, n as u64);
            (write, addr, rng.random())
        })
        .collect();
    Workload {
        memory,
        instructions,
    }
}

/// What the reports say of the input shares (the parties' own randomness is
/// [`BenchConfig::entropy`]).
pub use doram_core::SYNTHETIC_DEALER;

fn dealer(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// Runs this party's side of the benchmark `cfg` on `session` (three connected parties, each
/// calling this with the same `cfg`).
///
/// # Errors
/// A peer fault; [`RamenError::VerificationFailed`] if `cfg.verify` and a result differs from
/// the plaintext mirror.
pub fn run_party(session: Session, cfg: &BenchConfig) -> Result<PartyReport, RamenError> {
    let me = session.me();
    let w = workload(cfg);
    // The dealer's sharing: every party draws all three shares and keeps its own.
    let mut rng = dealer(cfg.seed, 1);
    let i = me.index();
    let memory: Vec<Additive<Fp>> = w
        .memory
        .iter()
        .map(|&x| deal_additive(x, &mut rng)[i])
        .collect();
    let instructions: Vec<[Additive<Fp>; 3]> = w
        .instructions
        .iter()
        .map(|&(write, addr, value)| {
            [
                deal_additive(Fp::from(write), &mut rng)[i],
                deal_additive(Fp::from_u64(addr), &mut rng)[i],
                deal_additive(value, &mut rng)[i],
            ]
        })
        .collect();

    let mut ramen = Ramen::new(session, cfg.params, cfg.entropy.party_seed(me, "ramen"))?;
    // No frame beyond the protocol's largest message (or the verification's opening of the
    // outputs and the memory).
    let opening = if cfg.verify {
        (cfg.accesses + cfg.params.n()) * <Fp as doram_field::Group>::BYTES
    } else {
        0
    };
    let limit = cfg.params.max_message_bytes().max(opening);
    ramen
        .session_mut()
        .limit_frame_bytes(u32::try_from(limit).unwrap_or(u32::MAX));
    let setup = ramen.step_times().get(Step::Setup);
    let start = Instant::now();
    if cfg.preprocess_first {
        ramen.prepare(cfg.accesses)?;
    }
    ramen.load(&memory)?;
    drop(memory);
    let mut outputs = Vec::with_capacity(if cfg.verify { cfg.accesses } else { 0 });
    for [op, addr, value] in &instructions {
        let out = ramen.access_shared(*op, *addr, *value)?;
        if cfg.verify {
            outputs.push(out);
        }
    }
    let elapsed = start.elapsed();
    let stats = ramen.session().stats().clone();
    if cfg.verify {
        verify(&mut ramen, &w, &outputs)?;
    }
    Ok(PartyReport {
        party: me,
        setup,
        elapsed,
        steps: *ramen.step_times(),
        online: comm(&stats, &ONLINE),
        preprocessing: comm(&stats, &[Step::Preprocess]),
        setup_comm: comm(&stats, &[Step::Setup]),
        per_step: Step::ALL.iter().map(|&s| (s, comm(&stats, &[s]))).collect(),
    })
}

/// Opens the outputs and the final memory to every party (phase `verify`) and compares them
/// with the plaintext mirror.
fn verify(ramen: &mut Ramen, w: &Workload, outputs: &[Additive<Fp>]) -> Result<(), RamenError> {
    let final_memory = ramen.memory_shares()?;
    let session = ramen.session_mut();
    session.set_phase("verify");
    let me = session.me();
    let mut mine: Vec<Fp> = Additive::shares(outputs);
    mine.extend(Additive::shares(&final_memory));
    let peers = [me.next(3), me.prev(3)];
    for &p in &peers {
        session.send_elems(p, &mine)?;
    }
    let mut total = mine;
    for &p in &peers {
        let theirs: Vec<Fp> = session.recv_elems(p, total.len())?;
        for (t, x) in total.iter_mut().zip(theirs) {
            *t += x;
        }
    }
    let mut plain = w.memory.clone();
    for (t, &(write, addr, value)) in w.instructions.iter().enumerate() {
        let cell = &mut plain[addr as usize];
        if total[t] != *cell {
            return Err(RamenError::VerificationFailed {
                what: "an access result",
                index: t,
            });
        }
        if write {
            *cell = value;
        }
    }
    let opened = &total[w.instructions.len()..];
    if let Some(j) = (0..plain.len()).find(|&j| opened[j] != plain[j]) {
        return Err(RamenError::VerificationFailed {
            what: "the final memory",
            index: j,
        });
    }
    Ok(())
}

/// Runs the benchmark `cfg` with the three parties as threads of this process over an
/// in-process mesh (with `shaping` on every link).
///
/// # Errors
/// The first party's error, if any party fails.
pub fn run_local(cfg: &BenchConfig, shaping: Shaping) -> Result<BenchOutcome, RamenError> {
    let sessions = LocalMesh::new(3)
        .timeout(cfg.timeout)
        .shaping(shaping)
        .build();
    let parties = run_parties_ok(
        sessions,
        "ramen",
        |session| run_party(session, cfg),
        || RamenError::Local("a party thread panicked or could not start"),
    )?;
    Ok(BenchOutcome {
        config: *cfg,
        parties,
        verified: cfg.verify,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verified_run_over_two_epochs() {
        let params = Params::new(100).unwrap();
        let mut cfg = BenchConfig::new(params);
        cfg.accesses = 2 * params.epoch() + 3;
        cfg.verify = true;
        cfg.seed = 5;
        let out = run_local(&cfg, Shaping::NONE).unwrap();
        assert_eq!(out.parties.len(), 3);
        assert!(out.online_bytes_per_access() > 0.0);
        assert!(out.to_json().starts_with("{\"protocol\":\"ramen\""));
        cfg.preprocess_first = true;
        cfg.zero_memory = true;
        cfg.writes_only = true;
        let out = run_local(&cfg, Shaping::NONE).unwrap();
        assert!(out.parties.iter().all(|p| p.preprocessing.bytes > 0));
    }

    /// Verification is a real check: a bit flipped in the last frame P1 sends P2 — its shares
    /// of the results and the final memory, opened for the check — makes P2's verification
    /// fail at the first result.
    #[test]
    fn a_corrupted_opening_fails_verification() {
        let params = Params::new(100).unwrap();
        let mut cfg = BenchConfig::new(params);
        cfg.accesses = params.epoch() + 3;
        cfg.verify = true;
        cfg.seed = 7;
        let [clean, results] =
            doram_oram::testkit::corrupt_last_frame(PartyId::P1, PartyId::P2, |s| {
                run_party(s, &cfg)
            });
        for r in clean {
            assert!(matches!(r, Ok(Ok(_))), "{r:?}");
        }
        assert!(
            matches!(
                &results[2],
                Ok(Err(RamenError::VerificationFailed {
                    what: "an access result",
                    index: 0
                }))
            ),
            "{:?}",
            results[2]
        );
    }

    #[test]
    fn a_verified_run_with_preprocessing_threads() {
        let params = Params::new(300).unwrap().with_threads(2);
        let mut cfg = BenchConfig::new(params);
        cfg.accesses = params.epoch() + 1;
        cfg.verify = true;
        cfg.seed = 6;
        run_local(&cfg, Shaping::NONE).unwrap();
    }
}
