//! Gale–Shapley stable matching on secret preference lists.
//!
//! **Inputs**: the data owner's [`Prefs`]: k proposers' and k acceptors' complete preference
//! lists (permutations). The querier role is unused. **Output**: the proposer-optimal stable
//! matching, as the proposer matched to each acceptor and the acceptor matched to each
//! proposer ([`Matching`]); it is unique, so it equals the plaintext algorithm's whatever the
//! order of proposals.
//!
//! **Algorithm** (the proposal loop with a fixed iteration count, as in the oblivious
//! stable-matching literature, e.g. Doerner, Evans, shelat, CCS 2016): at most k² − k + 1
//! proposals ever happen (Gusfield and Irving, "The Stable Marriage Problem", 1989, §1.2), so
//! the loop runs exactly T = k² − k + 1 iterations (0 for k = 0) and idles once everybody is
//! matched. The memory holds `PREF` ((k + 1)·k words: row p is p's list, row k a dummy),
//! `RANK` (k² + 1 words: RANK[a·k + p] is p's position in a's list — inverted by the owner in
//! plaintext — plus a padding word), `NEXT` (k + 1 words, the next list position of each
//! proposer) and `PARTNER` (k words, the sentinel k for "free"). The engine holds `cur`, the
//! proposer about to propose (the sentinel k when nobody is free), and `fresh`, the next
//! proposer who has never proposed. Each iteration:
//! 1. i = NEXT\[cur\], a = PREF[cur·k + i] (two dependent reads);
//! 2. q = PARTNER\[a\] and r_new = RANK[a·k + cur] (one batch), then r_old = RANK[a·k + q];
//! 3. active = [cur ≠ k], free = [q = k], better = \[r_new < r_old\] (one batch of
//!    comparisons), accept = active ∧ (free ∨ better);
//! 4. NEXT\[cur\] := i + active; PARTNER\[a\] := accept ? cur : q (plain writes: the new values
//!    are computed, so no conditional write is needed and the op sequence is the same on
//!    every backend);
//! 5. cur := accept ? (free ? fresh : q) : cur, fresh += accept ∧ free. A rejected proposer
//!    proposes again next; a jilted one takes its place; an accepted free acceptor lets the
//!    next fresh proposer start (fresh = k once all have started, which makes cur the
//!    sentinel when the last free proposer is accepted by a free acceptor).
//!
//! **Costs**: 7T DORAM accesses (5 reads, 2 writes) on a memory of 2k² + 2k + 2 words; 3T
//! comparisons at ⌈log₂(k + 1)⌉ bits; rounds per iteration: the accesses' own, 3 conversion
//! rounds, 1 + ⌈log₂⌈b/4⌉⌉ for the comparisons and 3 product rounds. Time and access pattern
//! depend on k only.

use doram_core::Seed;
use doram_field::Fp;
use doram_mpc::engine::bits_per_comparison;
use doram_net::Session;

use crate::error::{InputError, ProgramError};
use crate::input::{MAX_PREFS, Prefs};
use crate::machine::{Backend, Machine, OArray, Part, Plan, bits_for, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, agree_on_run, announce_size};

/// A stable matching between k proposers and k acceptors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Matching {
    /// `acceptor_partner[a]` is the proposer matched to acceptor a.
    pub acceptor_partner: Vec<u64>,
    /// `proposer_partner[p]` is the acceptor matched to proposer p.
    pub proposer_partner: Vec<u64>,
}

impl Matching {
    /// The matching from the acceptors' side.
    ///
    /// # Errors
    /// [`ProgramError::BadOutput`] if it is not a perfect matching.
    pub fn from_acceptors(acceptor_partner: Vec<u64>) -> Result<Matching, ProgramError> {
        let k = acceptor_partner.len();
        let mut proposer_partner = vec![u64::MAX; k];
        for (a, &p) in acceptor_partner.iter().enumerate() {
            let slot = proposer_partner
                .get_mut(p as usize)
                .ok_or(ProgramError::BadOutput("partner out of range"))?;
            if *slot != u64::MAX {
                return Err(ProgramError::BadOutput("a proposer matched twice"));
            }
            *slot = a as u64;
        }
        Ok(Matching {
            acceptor_partner,
            proposer_partner,
        })
    }

    /// Whether no proposer and acceptor prefer each other to their partners (false if the
    /// matching or the lists are not of the same valid shape).
    pub fn is_stable(&self, prefs: &Prefs) -> bool {
        let k = prefs.k();
        if prefs.validate().is_err()
            || self.proposer_partner.len() != k
            || self.acceptor_partner.len() != k
            || self
                .proposer_partner
                .iter()
                .chain(&self.acceptor_partner)
                .any(|&x| x >= k as u64)
        {
            return false;
        }
        let rank = |list: &[u64], x: u64| list.iter().position(|&y| y == x).unwrap_or(k);
        (0..k).all(|p| {
            let mine = self.proposer_partner[p];
            let list = &prefs.proposers[p];
            list.iter().take(rank(list, mine)).all(|&a| {
                let theirs = self.acceptor_partner[a as usize];
                let alist = &prefs.acceptors[a as usize];
                rank(alist, theirs) < rank(alist, p as u64)
            })
        })
    }
}

/// Plaintext Gale–Shapley, proposers proposing (the reference); `prefs` must be valid
/// ([`Prefs::validate`]), otherwise the result is empty.
pub fn plain(prefs: &Prefs) -> Matching {
    let k = prefs.k();
    if prefs.validate().is_err() {
        return Matching {
            acceptor_partner: Vec::new(),
            proposer_partner: Vec::new(),
        };
    }
    let mut rank = vec![vec![0usize; k]; k];
    for (a, list) in prefs.acceptors.iter().enumerate() {
        for (r, &p) in list.iter().enumerate() {
            rank[a][p as usize] = r;
        }
    }
    let mut next = vec![0usize; k];
    let mut partner: Vec<Option<usize>> = vec![None; k];
    let mut free: Vec<usize> = (0..k).rev().collect();
    while let Some(p) = free.pop() {
        let a = prefs.proposers[p][next[p]] as usize;
        next[p] += 1;
        match partner[a] {
            None => partner[a] = Some(p),
            Some(q) if rank[a][p] < rank[a][q] => {
                partner[a] = Some(p);
                free.push(q);
            }
            Some(_) => free.push(p),
        }
    }
    let acceptor_partner = partner.iter().map(|p| p.unwrap_or(k) as u64).collect();
    Matching::from_acceptors(acceptor_partner).unwrap_or(Matching {
        acceptor_partner: Vec::new(),
        proposer_partner: Vec::new(),
    })
}

/// The number of iterations for k proposers: k² − k + 1 (0 for k = 0).
pub fn iterations(k: usize) -> usize {
    if k == 0 { 0 } else { k * k - k + 1 }
}

/// Accesses, comparisons and random bits for k proposers.
pub fn plan(k: usize) -> Plan {
    let t = iterations(k);
    let b = bits_for(k as u64) as usize;
    Plan {
        accesses: 7 * t,
        comparisons: 3 * t,
        bits: 3 * t * bits_per_comparison(b as u32),
    }
}

/// The memory of a matching run.
#[derive(Clone, Copy, Debug)]
pub struct MatchingMemory {
    /// Proposers' lists and a dummy row, (k + 1)·k words.
    pub pref: OArray,
    /// Acceptors' ranks of proposers and a padding word, k² + 1 words.
    pub rank: OArray,
    /// Next list position per proposer (and the sentinel), k + 1 words.
    pub next: OArray,
    /// Partner per acceptor (k = free), k words.
    pub partner: OArray,
}

/// The program: runs the T iterations; the matching is in `mem.partner` afterwards.
///
/// # Errors
/// The machine's errors.
pub fn gale_shapley<R: Ram>(m: &mut R, mem: &MatchingMemory, k: usize) -> Result<(), ProgramError> {
    if k == 0 {
        return Ok(());
    }
    let kf = Fp::from_u64(k as u64);
    let b = bits_for(k as u64);
    let sentinel = m.int(k as u64);
    let (mut cur, mut fresh) = (m.int(0), m.int(1));
    for _ in 0..iterations(k) {
        // Step 1.
        let i = m.read(mem.next, cur)?;
        let a = m.read(mem.pref, cur * kf + i)?;
        // Step 2.
        let row = a * kf;
        let r = m.read_many(&[(mem.partner, a), (mem.rank, row + cur)])?;
        let (q, r_new) = (r[0], r[1]);
        let r_old = m.read(mem.rank, row + q)?;
        // Step 3.
        let cmp = m.cmp_many(&[(cur, sentinel), (q, sentinel), (r_new, r_old)], b)?;
        let active = m.not(cmp[0].1);
        let free = cmp[1].1;
        let better = cmp[2].0;
        let or = m.or_many(&[(free, better)])?[0];
        // x = free ? fresh : q, in the same round as the AND.
        let mut p = m.mul_many(&[
            (R::value(active), R::value(or)),
            (R::value(free), fresh - q),
        ])?;
        let x = q + p.remove(1);
        let accept = R::assume_bit(p[0]);
        // Step 4 and 5.
        let p = m.mul_many(&[
            (R::value(accept), cur - q),
            (R::value(accept), x - cur),
            (R::value(accept), R::value(free)),
        ])?;
        m.write(mem.next, cur, i + R::value(active))?;
        m.write(mem.partner, a, q + p[0])?;
        cur += p[1];
        fresh += p[2];
    }
    Ok(())
}

/// Runs the program on the plaintext machine [`PlainRam`] with the memory layout of
/// [`Program::run_with`]: the matching and what the run did.
///
/// # Errors
/// [`InputError`]s of the preferences; [`ProgramError::Misuse`] if the program breaks a bound
/// (a comparison operand beyond its bit length, an address outside the memory).
pub fn run_plain(
    prefs: &Prefs,
    hides_op_type: bool,
) -> Result<(Matching, PlainCounts), ProgramError> {
    prefs.validate()?;
    let k = prefs.k();
    let (pref, rank) = tables(prefs);
    let mut m = PlainRam::new(hides_op_type);
    let mem = MatchingMemory {
        pref: m.alloc_ints(&pref)?,
        rank: m.alloc_ints(&rank)?,
        next: m.alloc_ints(&vec![0; k + 1])?,
        partner: m.alloc_ints(&vec![k as u64; k])?,
    };
    m.boot()?;
    gale_shapley(&mut m, &mem, k)?;
    let partners = m
        .snapshot(&[mem.partner])?
        .remove(0)
        .into_iter()
        .map(|x| to_int(x, k as u128, "partner"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((Matching::from_acceptors(partners)?, m.counts()))
}

fn tables(prefs: &Prefs) -> (Vec<u64>, Vec<u64>) {
    let k = prefs.k();
    let mut pref: Vec<u64> = prefs.proposers.iter().flatten().copied().collect();
    pref.extend(std::iter::repeat_n(0, k));
    let mut rank = vec![0u64; k * k + 1];
    for (a, list) in prefs.acceptors.iter().enumerate() {
        for (r, &p) in list.iter().enumerate() {
            rank[a * k + p as usize] = r as u64;
        }
    }
    (pref, rank)
}

/// One party's run with the backend `D`: the owner passes `Some(prefs)`, the others `None`.
/// The owner announces k.
///
/// # Errors
/// [`ProgramError::Input`] for a wrong role input or invalid preferences (at the owner,
/// before it sends); [`ProgramError::BadSizes`] for k above [`MAX_PREFS`]; transport, engine
/// and DORAM errors.
fn run_with<D: Backend>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    prefs: Option<&Prefs>,
) -> Result<PartyRun<Matching>, ProgramError> {
    roles.check()?;
    if (session.me() == roles.owner) != prefs.is_some() {
        return Err(InputError::Role("the data owner, and only it, provides preferences").into());
    }
    if let Some(p) = prefs {
        p.validate()?;
    }
    agree_on_run(&mut session, "matching", D::NAME, &roles)?;
    let k = announce_size(
        &mut session,
        roles.owner,
        prefs.map(|p| p.k()),
        MAX_PREFS as u64,
        "k",
    )?;
    let mut m = Machine::<D>::setup(session, seed)?;
    let p = plan(k);
    m.preprocess_bits(p.bits)?;
    let t = prefs.map(tables);
    let pref = m.alloc_input(roles.owner, t.as_ref().map(|t| &t.0[..]), (k + 1) * k)?;
    let rank = m.alloc_input(roles.owner, t.as_ref().map(|t| &t.1[..]), k * k + 1)?;
    let next = m.alloc_fill(k + 1, 0)?;
    let partner = m.alloc_fill(k, k as u64)?;
    let mem = MatchingMemory {
        pref,
        rank,
        next,
        partner,
    };
    m.boot(p.accesses)?;
    gale_shapley(&mut m, &mem, k)?;
    let output = if k == 0 {
        (m.me() == roles.receiver).then(|| Matching {
            acceptor_partner: Vec::new(),
            proposer_partner: Vec::new(),
        })
    } else {
        let shares = m.snapshot(&[mem.partner])?.remove(0);
        let out = m.engine_in(Part::Output, |on| on.open_to(roles.receiver, &shares))?;
        out.map(|vals| {
            let partners = vals
                .into_iter()
                .map(|x| to_int(x, k as u128, "partner"))
                .collect::<Result<Vec<_>, _>>()?;
            Matching::from_acceptors(partners)
        })
        .transpose()?
    };
    Ok(PartyRun::from_machine(&mut m, output))
}

/// Stable matching by Gale–Shapley ([`gale_shapley`]). Owner: the preference lists; no query;
/// output: the matching.
#[derive(Clone, Copy, Debug)]
pub struct StableMatching;

impl Program for StableMatching {
    const NAME: &'static str = "matching";
    type Data<'a> = &'a Prefs;
    type Query = ();
    type Output = Matching;

    fn reference(prefs: &Prefs, (): ()) -> Matching {
        plain(prefs)
    }

    fn run_with<D: Backend>(
        session: Session,
        seed: Seed,
        roles: Roles,
        prefs: Option<&Prefs>,
        _query: Option<()>,
    ) -> Result<PartyRun<Matching>, ProgramError> {
        run_with::<D>(session, seed, roles, prefs)
    }
}
