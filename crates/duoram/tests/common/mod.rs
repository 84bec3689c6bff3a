//! Shared helpers of the integration tests: a plaintext program of READs, UPDATEs and WRITEs,
//! dealt to three parties and run on three Duoram instances over an in-process mesh.

#![allow(dead_code, missing_docs, clippy::needless_range_loop)]

use doram_core::{PartyId, Seed};
use doram_duoram::{DuoWord, Duoram, DuoramError};
use doram_mpc::testkit::{party_seed, run3_on};
use doram_mpc::{Additive, deal_additive, reconstruct_additive};
use doram_net::{LocalMesh, Session, Transcript};
use doram_prim::AesPrg;
use rand_core::RngCore;
use std::time::Duration;

/// One plaintext operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum POp<W> {
    Read(u64),
    Update(u64, W),
    Write(u64, W),
}

pub fn rng(seed: u64, tag: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..].copy_from_slice(&tag.to_le_bytes());
    AesPrg::new(Seed(s))
}

/// `ops` random operations (reads, updates, writes in equal parts) on `n` words.
pub fn random_ops<W: DuoWord>(n: usize, ops: usize, r: &mut AesPrg) -> Vec<POp<W>> {
    (0..ops)
        .map(|_| {
            let a = r.next_u64() % n as u64;
            let v: W = r.random();
            match r.next_u32() % 3 {
                0 => POp::Read(a),
                1 => POp::Update(a, v),
                _ => POp::Write(a, v),
            }
        })
        .collect()
}

/// The oracle: the result of every operation (the old value for reads and writes, zero for
/// updates) and the final memory.
pub fn oracle<W: DuoWord>(initial: &[W], ops: &[POp<W>]) -> (Vec<W>, Vec<W>) {
    let mut m = initial.to_vec();
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        match *op {
            POp::Read(a) => out.push(m[a as usize]),
            POp::Update(a, v) => {
                out.push(W::ZERO);
                m[a as usize] += v;
            }
            POp::Write(a, v) => {
                out.push(m[a as usize]);
                m[a as usize] = v;
            }
        }
    }
    (out, m)
}

/// One party's view of a run.
pub struct View<W> {
    pub outputs: Vec<Additive<W>>,
    pub memory: Vec<Additive<W>>,
    pub transcript: Transcript,
    pub stats: doram_net::Stats,
}

/// How a run preprocesses: `chunks[i]` operations before the i-th stretch of operations of the
/// same length (0 = inline for that stretch).
pub fn run<W: DuoWord>(
    n: usize,
    initial: &[W],
    ops: &[POp<W>],
    chunks: &[usize],
    seed: u64,
    sessions: Vec<Session>,
) -> [Result<View<W>, DuoramError>; 3] {
    let mut r = rng(seed, 0xdea1);
    let mut mem: [Vec<Additive<W>>; 3] = Default::default();
    for &x in initial {
        for (v, s) in mem.iter_mut().zip(deal_additive(x, &mut r)) {
            v.push(s);
        }
    }
    let mut sh: [Vec<(Additive<W>, Additive<W>)>; 3] = Default::default();
    for op in ops {
        let (a, v) = match *op {
            POp::Read(a) => (a, W::ZERO),
            POp::Update(a, v) | POp::Write(a, v) => (a, v),
        };
        let a = deal_additive(W::from_u64(a), &mut r);
        let v = deal_additive(v, &mut r);
        for i in 0..3 {
            sh[i].push((a[i], v[i]));
        }
    }
    run3_on(sessions, |mut session| {
        let me = session.me();
        let i = me.index();
        session.record_transcript(true);
        let mut o = Duoram::<W>::setup(session, n, party_seed(seed, me))?;
        o.init(&mem[i])?;
        let mut outputs = Vec::new();
        let mut k = 0;
        for &c in chunks.iter().chain(std::iter::repeat(&0)) {
            if k >= ops.len() {
                break;
            }
            let len = if c == 0 { 1 } else { c };
            if c > 0 {
                o.preprocess(c)?;
            }
            for j in k..(k + len).min(ops.len()) {
                let (a, v) = sh[i][j];
                outputs.push(match ops[j] {
                    POp::Read(_) => o.read(a)?,
                    POp::Update(..) => {
                        o.update(a, v)?;
                        Additive::ZERO
                    }
                    POp::Write(..) => o.write(a, v)?,
                });
            }
            k += len;
        }
        let memory = o.memory()?;
        Ok(View {
            outputs,
            memory,
            transcript: o.session().transcript().cloned().unwrap_or_default(),
            stats: o.session().stats().clone(),
        })
    })
}

pub fn mesh() -> Vec<Session> {
    LocalMesh::new(3).timeout(Duration::from_secs(20)).build()
}

/// Unwraps the three views, panicking with `ctx` on any error.
pub fn ok3<W>(r: [Result<View<W>, DuoramError>; 3], ctx: &str) -> [View<W>; 3] {
    r.map(|v| v.unwrap_or_else(|e| panic!("{ctx}: {e}")))
}

/// Checks reconstructed outputs and memory against the oracle.
pub fn check<W: DuoWord>(views: &[View<W>; 3], initial: &[W], ops: &[POp<W>], ctx: &str) {
    let (want, mem) = oracle(initial, ops);
    for (t, w) in want.iter().enumerate() {
        let got = reconstruct_additive(&[
            views[0].outputs[t],
            views[1].outputs[t],
            views[2].outputs[t],
        ]);
        assert_eq!(got, *w, "{ctx}: operation {t} ({:?})", ops[t]);
    }
    for (a, w) in mem.iter().enumerate() {
        let got =
            reconstruct_additive(&[views[0].memory[a], views[1].memory[a], views[2].memory[a]]);
        assert_eq!(got, *w, "{ctx}: final memory at {a}");
    }
}

pub const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];
