//! Protocol messages as a faulty or hostile peer sends them: three parties run a protocol over
//! an in-process mesh in which one frame on one link is replaced, edited, cut, dropped or
//! followed by a closed link, as the input says. Every party must end with a result or an
//! error, never a panic, and the run must end (every wait has a deadline).

use std::sync::Arc;
use std::time::{Duration, Instant};

use doram::{BackendKind, run_local_on};
use doram_core::{Entropy, PartyId};
use doram_net::{LocalMesh, Session, Tamper, run_parties};
use doram_programs::{BinarySearch, Roles};
use doram_services::lookup::{self, LookupParams, Table};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::Target;

/// The receive timeout of the fuzzed sessions: a silenced link ends in an error quickly.
const TIMEOUT: Duration = Duration::from_millis(300);
/// A run that takes longer than this has hung.
const DEADLINE: Duration = Duration::from_secs(30);
/// Every fuzzed protocol runs three parties.
const PARTIES: usize = 3;

/// What to do to one frame: `from ‖ to ‖ frame index (u16) ‖ action ‖ action bytes`.
#[derive(Clone, Debug)]
struct Plan {
    from: PartyId,
    to: PartyId,
    frame: u64,
    action: Action,
}

#[derive(Clone, Debug)]
enum Action {
    /// Replace the payload, keep the framing.
    Payload(Vec<u8>),
    /// XOR bytes into the payload at positions (taken modulo its length).
    Flip(Vec<(u16, u8)>),
    /// Cut the payload to this length.
    Shorten(usize),
    /// Append bytes to the payload.
    Extend(Vec<u8>),
    /// Any other frame-level fault.
    Wire(Tamper),
}

fn plan(data: &[u8]) -> Plan {
    let at = |i: usize| data.get(i).copied().unwrap_or(0);
    let from = PartyId::ALL[usize::from(at(0)) % PARTIES];
    let to = PartyId::ALL[(from.index() + 1 + usize::from(at(1)) % (PARTIES - 1)) % PARTIES];
    let frame = u64::from(u16::from_le_bytes([at(2), at(3)]) % 64);
    let rest = data.get(5..).unwrap_or(&[]).to_vec();
    let action = match at(4) % 9 {
        0 => Action::Payload(rest),
        1 => Action::Flip(
            rest.chunks(3)
                .map(|c| {
                    let pos = u16::from_le_bytes([c[0], c.get(1).copied().unwrap_or(0)]);
                    (pos, c.get(2).copied().unwrap_or(1).max(1))
                })
                .collect(),
        ),
        2 => Action::Shorten(usize::from(u16::from_le_bytes([
            rest.first().copied().unwrap_or(0),
            rest.get(1).copied().unwrap_or(0),
        ]))),
        3 => Action::Extend(rest),
        4 => Action::Wire(Tamper::Replace(rest)),
        5 => Action::Wire(Tamper::Drop),
        6 => Action::Wire(Tamper::Close),
        7 => Action::Wire(Tamper::Oversize),
        _ => Action::Wire(Tamper::Truncate(usize::from(
            rest.first().copied().unwrap_or(0),
        ))),
    };
    Plan {
        from,
        to,
        frame,
        action,
    }
}

/// A mesh of three sessions that applies the plan in `data`.
fn mesh(data: &[u8]) -> LocalMesh {
    let p = Arc::new(plan(data));
    LocalMesh::new(PARTIES)
        .timeout(TIMEOUT)
        .tamper(move |from, to, index, payload| {
            if (from, to, index) != (p.from, p.to, p.frame) {
                return Tamper::Pass;
            }
            match &p.action {
                Action::Payload(b) => *payload = b.clone(),
                Action::Flip(edits) => {
                    if !payload.is_empty() {
                        let n = payload.len();
                        for &(pos, x) in edits {
                            payload[usize::from(pos) % n] ^= x;
                        }
                    }
                }
                Action::Shorten(k) => payload.truncate(*k),
                Action::Extend(b) => payload.extend_from_slice(b),
                Action::Wire(t) => return t.clone(),
            }
            Tamper::Pass
        })
}

/// Runs `f` at every party of the [`mesh`] of `data`; a panicking party or a run past
/// [`DEADLINE`] is a finding.
fn parties<T: Send>(data: &[u8], f: impl Fn(Session) -> T + Sync) -> Result<(), String> {
    let start = Instant::now();
    let results = run_parties(mesh(data).build(), "fuzz", f);
    if let Some(p) = results.iter().find_map(|r| r.as_ref().err()) {
        return Err(format!("a party {}", crate::panic_message(p.as_ref())));
    }
    within_deadline(start)
}

/// A run that started at `start` and has ended: a finding if it took past [`DEADLINE`].
fn within_deadline(start: Instant) -> Result<(), String> {
    let took = start.elapsed();
    if took > DEADLINE {
        return Err(format!("the run took {took:?}"));
    }
    Ok(())
}

/// Seeds: one plan of each action on a few links and frames.
fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for action in 0u8..9 {
        for (from, frame) in [(0u8, 0u8), (1, 1), (2, 3)] {
            let mut v = vec![from, action % 2, frame, 0, action];
            v.extend([4u8, 0, 0xff, 0x10, 0, 1, 2, 3]);
            out.push(v);
        }
    }
    out
}

/// Ramen at n = 16 over five accesses (past the end of the first epoch), with verification.
pub const RAMEN: Target = Target {
    name: "ramen-peer",
    what: "every message of Ramen's setup, preprocessing, accesses and refresh from a faulty peer",
    run: |data| {
        let mut cfg = doram_oram::bench::BenchConfig::new(16, 5);
        cfg.entropy = Entropy::InsecureSeed(1);
        parties(data, |s| {
            doram_oram::bench::run_party::<doram_ramen::Ramen>(s, &cfg).is_ok()
        })
    },
    seeds,
};

/// 3P-Duoram at n = 8 over four random operations, with verification.
pub const DUORAM: Target = Target {
    name: "duoram-peer",
    what: "every message of 3P-Duoram's setup, preprocessing, reads, updates and writes from a faulty peer",
    run: |data| {
        let mut cfg = doram_duoram::BenchConfig::new(8, 4);
        cfg.verify = true;
        cfg.entropy = Entropy::InsecureSeed(1);
        parties(data, |s| doram_duoram::run_party(s, &cfg).is_ok())
    },
    seeds,
};

/// The binary search program on the linear-scan and Duoram backends.
pub const BINARY_SEARCH: Target = Target {
    name: "binary-search-peer",
    what: "the compute engine's and the RAM machine's messages (inputs, comparisons, DORAM) in a binary search",
    run: |data| {
        let backend = if data.get(5).is_some_and(|b| b & 1 == 1) {
            BackendKind::Duoram
        } else {
            BackendKind::LinearScan
        };
        let start = Instant::now();
        let _ = run_local_on::<BinarySearch>(
            mesh(data),
            backend,
            Roles::default(),
            &[2, 3, 5, 7, 11],
            6,
            Entropy::InsecureSeed(1),
        );
        within_deadline(start)
    },
    seeds,
};

/// The DPF private lookup: two servers, one client.
pub const LOOKUP: Target = Target {
    name: "lookup-peer",
    what: "the private lookup's DPF keys and answers from a faulty server or client",
    run: |data| {
        let params = LookupParams::new(64, 2).map_err(|e| e.to_string())?;
        let table = Table::synthetic(64, 3);
        parties(data, |mut s| {
            if s.me() == lookup::CLIENT {
                let mut rng = ChaCha8Rng::seed_from_u64(2);
                lookup::query(&mut s, params, &[5, 63], &mut rng).is_ok()
            } else {
                lookup::serve(&mut s, params, &table).is_ok()
            }
        })
    },
    seeds,
};
