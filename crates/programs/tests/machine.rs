//! The machine's array operations against a plaintext memory on every backend: reads, writes,
//! conditional writes (both conditions), updates, public-index reads, addresses across arrays
//! and snapshots, with random indices and values; the same transcript whatever the secret
//! indices, values and conditions; misuse detected before anything is sent.

use doram_core::{Entropy, PartyId, Seed};
use doram_duoram::Duoram;
use doram_field::Fp;
use doram_mpc::testkit::test_seed;
use doram_mpc::{Input, Secret, SecretBit};
use doram_net::Transcript;
use doram_oram::LinearScanOram;
use doram_programs::{Backend, Machine, Part, ProgramError, run_three, to_int};
use doram_ramen::Ramen;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// One operation of the random workload (indices relative to array `a` or `b`).
#[derive(Clone, Copy, Debug)]
enum Op {
    Read { b: bool, i: u64 },
    Write { b: bool, i: u64, v: u64 },
    CondWrite { b: bool, i: u64, cond: bool, v: u64 },
    Update { b: bool, i: u64, add: u64 },
    ReadPublic { b: bool, i: usize },
}

const LA: usize = 5;
const LB: usize = 12;

fn workload(rng: &mut ChaCha12Rng, len: usize) -> Vec<Op> {
    (0..len)
        .map(|_| {
            let b = rng.random_bool(0.5);
            let n = if b { LB } else { LA } as u64;
            let i = rng.random_range(0..n);
            let v = rng.random::<u64>();
            match rng.random_range(0..5) {
                0 => Op::Read { b, i },
                1 => Op::Write { b, i, v },
                2 => Op::CondWrite {
                    b,
                    i,
                    cond: rng.random_bool(0.5),
                    v,
                },
                3 => Op::Update {
                    b,
                    i,
                    add: rng.random_range(0..1000),
                },
                _ => Op::ReadPublic { b, i: i as usize },
            }
        })
        .collect()
}

/// The plaintext expectation: each op's returned value (the value read, or the old value).
fn plain(ops: &[Op], a0: &[u64], b0: &[u64]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let (mut a, mut b) = (a0.to_vec(), b0.to_vec());
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::Read { b: sel, i } => out.push(if sel { b[i as usize] } else { a[i as usize] }),
            Op::ReadPublic { b: sel, i } => out.push(if sel { b[i] } else { a[i] }),
            Op::Write { b: sel, i, v } => {
                let m = if sel { &mut b } else { &mut a };
                m[i as usize] = v;
            }
            Op::CondWrite { b: sel, i, cond, v } => {
                let m = if sel { &mut b } else { &mut a };
                if cond {
                    m[i as usize] = v;
                }
            }
            Op::Update { b: sel, i, add } => {
                let m = if sel { &mut b } else { &mut a };
                out.push(m[i as usize]);
                m[i as usize] = m[i as usize].wrapping_add(add) & (u64::MAX >> 1);
            }
        }
    }
    (out, a, b)
}

/// One party's opened outputs, final arrays a and b, and transcript.
type PartyOut = (Vec<u64>, Vec<u64>, Vec<u64>, Transcript);

/// Runs the workload on backend `D`; P0 deals every secret (array a, indices, values,
/// conditions), array b is public. Returns P0's opened outputs and final arrays, and every
/// party's transcript.
fn run<D: Backend>(seed: u64, ops: &[Op], a0: &[u64], b0: &[u64]) -> [PartyOut; 3] {
    let r = run_three(Entropy::InsecureSeed(seed), |mut session, s: Seed| {
        session.record_transcript(true);
        let me = session.me();
        let mut m = Machine::<D>::setup(session, s)?;
        // Every secret of the workload, dealt by P0 in one input.
        let mut secrets = Vec::new();
        for op in ops {
            match *op {
                Op::Read { i, .. } => secrets.push(i),
                Op::Write { i, v, .. } => secrets.extend([i, v]),
                Op::CondWrite { i, cond, v, .. } => secrets.extend([i, u64::from(cond), v]),
                Op::Update { i, add, .. } => secrets.extend([i, add]),
                Op::ReadPublic { .. } => {}
            }
        }
        let count = secrets.len();
        let sec = m.engine_in(Part::Input, |on| {
            on.input(if me == PartyId::P0 {
                Input::Own(&secrets[..])
            } else {
                Input::Peer {
                    dealer: PartyId::P0,
                    count,
                }
            })
        })?;
        let a = m.alloc_input(PartyId::P0, (me == PartyId::P0).then_some(a0), LA)?;
        let b = m.alloc_public(b0.iter().copied())?;
        m.boot(ops.len() * 2)?;
        let mut it = sec.into_iter();
        let mut next = || it.next().ok_or(ProgramError::Misuse("secrets"));
        let mut outs: Vec<Secret> = Vec::new();
        for op in ops {
            let arr = |sel: bool| if sel { b } else { a };
            match *op {
                Op::Read { b: sel, .. } => {
                    let i = next()?;
                    if sel {
                        // Through a computed address in the whole memory.
                        outs.push(m.read_addr(b.addr(i, me))?);
                    } else {
                        outs.push(m.read(a, i)?);
                    }
                }
                Op::ReadPublic { b: sel, i } => outs.push(m.read_public(arr(sel), i)?),
                Op::Write { b: sel, .. } => {
                    let (i, v) = (next()?, next()?);
                    m.write(arr(sel), i, v)?;
                }
                Op::CondWrite { b: sel, .. } => {
                    let (i, c, v) = (next()?, next()?, next()?);
                    m.cond_write(arr(sel), i, SecretBit::assume_bit(c), v)?;
                }
                Op::Update { b: sel, .. } => {
                    let (i, add) = (next()?, next()?);
                    // new = (old + add) mod 2^63: a comparison-free stand-in for any CPU step
                    // (values are below 2^64 and add below 1000, so the sum stays in range
                    // of the truncation by one bit below).
                    let mask = u64::MAX >> 1;
                    let old = m.update(arr(sel), i, |on, old| {
                        let sum = old + add;
                        let limit = on.constant(mask);
                        let top = on.lt_many(&[(limit, sum)], 65)?[0];
                        Ok(sum - top.value() * Fp::from_u128(1 << 63))
                    })?;
                    outs.push(old);
                }
            }
        }
        let snap = m.snapshot(&[a, b])?;
        let opened = m.engine_in(Part::Output, |on| {
            let mut all = outs.clone();
            all.extend(snap.concat());
            on.open_many(&all)
        })?;
        let ints: Vec<u64> = opened
            .into_iter()
            .map(|x| to_int(x, 1 << 64, "value"))
            .collect::<Result<_, _>>()?;
        let (o, rest) = ints.split_at(outs.len());
        let (fa, fb) = rest.split_at(LA);
        let t = m
            .session_mut()
            .and_then(|s| s.take_transcript())
            .unwrap_or_default();
        Ok((o.to_vec(), fa.to_vec(), fb.to_vec(), t))
    });
    r.map(|x| x.expect("machine run"))
}

fn check<D: Backend>(name: &str) {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    // Values below 2^63 so that updates stay in range.
    let a0: Vec<u64> = (0..LA).map(|_| rng.random::<u64>() >> 1).collect();
    let b0: Vec<u64> = (0..LB).map(|_| rng.random::<u64>() >> 1).collect();
    let ops = workload(&mut rng, 30);
    let ops: Vec<Op> = ops
        .into_iter()
        .map(|op| match op {
            Op::Write { b, i, v } => Op::Write { b, i, v: v >> 1 },
            Op::CondWrite { b, i, cond, v } => Op::CondWrite {
                b,
                i,
                cond,
                v: v >> 1,
            },
            other => other,
        })
        .collect();
    let want = plain(&ops, &a0, &b0);
    let got = run::<D>(seed, &ops, &a0, &b0);
    assert_eq!(
        (&got[0].0, &got[0].1, &got[0].2),
        (&want.0, &want.1, &want.2),
        "{name}: {ops:?}"
    );
    // The same op sequence on other secrets: other indices, values, conditions.
    let mut rng2 = ChaCha12Rng::seed_from_u64(seed ^ 99);
    let other: Vec<Op> = ops
        .iter()
        .map(|op| match *op {
            Op::Read { b, .. } => Op::Read {
                b,
                i: rng2.random_range(0..if b { LB } else { LA } as u64),
            },
            Op::Write { b, .. } => Op::Write { b, i: 0, v: 7 },
            Op::CondWrite { b, cond, .. } => Op::CondWrite {
                b,
                i: 1,
                cond: !cond,
                v: 9,
            },
            Op::Update { b, .. } => Op::Update { b, i: 2, add: 999 },
            other => other,
        })
        .collect();
    let a1: Vec<u64> = (0..LA as u64).collect();
    let got2 = run::<D>(seed, &other, &a1, &b0);
    for p in 0..3 {
        assert_eq!(got[p].3, got2[p].3, "{name}: transcript of P{p}");
    }
}

#[test]
fn linear_scan_machine_matches_plaintext() {
    check::<LinearScanOram<Fp>>("linear-scan");
}

#[test]
fn ramen_machine_matches_plaintext() {
    check::<Ramen>("ramen");
}

#[test]
fn duoram_machine_matches_plaintext() {
    check::<Duoram<Fp>>("duoram");
}

#[test]
fn misuse_is_detected_before_sending() {
    let seed = test_seed();
    let r = run_three(Entropy::InsecureSeed(seed), |session, s| {
        let me = session.me();
        let mut m = Machine::<LinearScanOram<Fp>>::setup(session, s)?;
        let a = m.alloc_fill(3, 1)?;
        let sent = |m: &Machine<LinearScanOram<Fp>>| {
            m.session().map_or(0, |s| s.stats().total().sum().msgs_sent)
        };
        let before = sent(&m);
        assert!(matches!(m.read_public(a, 0), Err(ProgramError::Misuse(_))));
        assert!(matches!(
            m.write(a, Secret::ZERO, Secret::ZERO),
            Err(ProgramError::Misuse(_))
        ));
        assert!(matches!(m.snapshot(&[a]), Err(ProgramError::Misuse(_))));
        // The dealer (P1) with the wrong count, the others with values: misuse everywhere.
        let wrong = [1u64, 2];
        let r = m.alloc_input(PartyId::P1, Some(&wrong[..]), 3);
        assert!(matches!(r, Err(ProgramError::Misuse(_))), "{me}");
        assert_eq!(sent(&m), before);
        m.boot(0)?;
        assert!(matches!(m.read_public(a, 3), Err(ProgramError::Misuse(_))));
        assert!(matches!(m.alloc_fill(1, 0), Err(ProgramError::Misuse(_))));
        assert!(matches!(m.boot(0), Err(ProgramError::Misuse(_))));
        // Still usable.
        let v = m.read_public(a, 2)?;
        let o = m.cpu(|on| on.open_many(&[v]))?;
        Ok(o[0])
    });
    for x in r {
        assert_eq!(x.expect("usable after misuse"), Fp::ONE);
    }
}
