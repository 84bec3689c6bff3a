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
//! matched. Everything lives in the engine, indexed by one-hot vectors
//! ([`Ram::onehot_many`]); no DORAM access is made. The owner inputs, besides each proposer's
//! first choice, two k × k tables: `RANK[a][p]`, p's position in a's list, and
//! `NEXT[a][p]`, the acceptor after a in p's list (both computed by the owner in plaintext).
//! The state: `cur`, the proposer about to propose, as a one-hot vector over k + 1 slots (slot
//! k is the idle sentinel, whose rank at every acceptor is k + 1, so it is never accepted);
//! `fresh`, the next proposer who has never proposed, one-hot over the same slots; per
//! proposer `target[p]`, the acceptor p proposes to next; per acceptor `partner[a]` (k when
//! free) and `held[a]`, the partner's rank (k when free). Each iteration:
//! 1. a = ⟨cur, target⟩, the column `RANK[·][cur]` and the row `NEXT[·][cur]` (2k + 1 inner
//!    products over the proposers, one round; the previous iteration's update of `partner`
//!    and `held` rides along);
//! 2. the one-hot vector of a;
//! 3. q = partner\[a\], r_old = held\[a\], r_new = RANK\[a\]\[cur\], a' = NEXT\[a\]\[cur\]
//!    (four inner products, one round);
//! 4. the one-hot vectors of q, r_new and r_old (one batch); free = \[q = k\];
//! 5. accept = \[r_new < r_old\] = Σ_j \[r_old = j\]·\[r_new < j\] (one inner product with
//!    the prefix sums of r_new's one-hot vector). A free acceptor always accepts a real
//!    proposer (r_old = k > r_new), and once everybody is matched no acceptor is free, so
//!    free implies accept;
//! 6. one round of products: target\[cur\] := a'; cur := accept ? (free ? fresh : q) : cur,
//!    i.e. cur + accept·(q − cur) + free·(fresh − q) on the one-hot vectors; fresh moves up by
//!    free; u = accept·(cur − q) and v = accept·(r_new − r_old), so that partner\[a\] += u and
//!    held\[a\] += v (products with a's one-hot vector, in the next iteration's first round).
//!
//! A rejected proposer proposes again next, to its next choice; a jilted one takes its place;
//! an accepted free acceptor lets the next fresh proposer start (fresh = k, the sentinel, once
//! all have started, which makes cur the sentinel when the last free proposer is accepted).
//!
//! **Costs**: the owner inputs 2k² + k words (one round). Per iteration: one one-hot vector
//! of k entries at ⌈log₂ k⌉ bits and three of k + 2 entries at ⌈log₂(k + 2)⌉ bits (each
//! ⌈b/4⌉ units of pool bits, and [`rounds_per_onehot`] rounds); 2k inner products of length k
//! (2k² local products), 2k + 6 short ones and 4k + 5 products; rounds
//! ([`rounds_per_iteration`]): 4 plus those of the two one-hot batches — 6 for k ≤ 14, 8 for
//! 17 ≤ k ≤ 254. No DORAM access: the backend only names the run. Time and
//! communication depend on k only.
//!
//! **Why not the DORAM**: the former form kept the tables and the small arrays in the DORAM
//! and made 7 dependent-in-part accesses per proposal (4 dependent read rounds, each with a
//! conversion round, then comparisons and products). An access costs far more than a one-hot
//! conversion (0.4–0.7 ms on Ramen, 0.6–3.5 ms on Duoram at these sizes, against a few tens of
//! microseconds), and the O(k²) local inner products of step 1 stay below an access's cost up
//! to k in the hundreds (docs/notes/stable-matching.md has the measurements).

use doram_core::Seed;
use doram_field::Fp;
use doram_mpc::engine::{bits_per_onehot, rounds_per_onehot};
use doram_net::Session;

use crate::error::{InputError, ProgramError};
use crate::host::Host;
use crate::input::{MAX_PREFS, Prefs};
use crate::machine::{Plan, bits_for, to_int};
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

/// Bit length of the one-hot conversion of an acceptor (values 0..k).
fn acceptor_bits(k: usize) -> u32 {
    bits_for(k.saturating_sub(1) as u64)
}

/// Bit length of the one-hot conversions of partners and ranks (values 0..=k + 1).
fn rank_bits(k: usize) -> u32 {
    bits_for(k as u64 + 1)
}

/// Accesses (none), one-hot conversions (counted as comparisons) and their pool bits for k
/// proposers.
pub fn plan(k: usize) -> Plan {
    let t = iterations(k);
    let per = bits_per_onehot(acceptor_bits(k)) + 3 * bits_per_onehot(rank_bits(k));
    Plan {
        accesses: 0,
        comparisons: 4 * t,
        bits: t * per,
    }
}

/// Rounds of one iteration on a secure machine: three rounds of inner products, one of
/// products, and the two batches of one-hot vectors.
pub fn rounds_per_iteration(k: usize) -> u64 {
    4 + rounds_per_onehot(acceptor_bits(k)) + rounds_per_onehot(rank_bits(k))
}

/// The owner's tables as words of the machine (see the [module documentation](self)).
#[derive(Clone, Debug)]
pub struct MatchingTables<W> {
    /// `rank[a·k + p]`: p's position in a's list.
    pub rank: Vec<W>,
    /// `next[a·k + p]`: the acceptor after a in p's list (0 after the last).
    pub next: Vec<W>,
    /// `first[p]`: p's first choice.
    pub first: Vec<W>,
}

/// The update left by an iteration: partner\[a\] += u and held\[a\] += v, with a's one-hot
/// vector `hot`.
struct Pending<W> {
    hot: Vec<W>,
    u: W,
    v: W,
}

/// The program: runs the T iterations on the owner's tables for k proposers; returns
/// `partner`, the proposer matched to each acceptor.
///
/// # Errors
/// [`ProgramError::Misuse`] if the tables are not of the sizes k² and k; the machine's errors.
pub fn gale_shapley<R: Ram>(
    m: &mut R,
    tables: &MatchingTables<R::Word>,
    k: usize,
) -> Result<Vec<R::Word>, ProgramError> {
    if tables.rank.len() != k * k || tables.next.len() != k * k || tables.first.len() != k {
        return Err(ProgramError::Misuse("matching tables of the wrong size"));
    }
    if k == 0 {
        return Ok(Vec::new());
    }
    let (ab, rb) = (acceptor_bits(k), rank_bits(k));
    let mut st = GsState::new(m, tables, k);
    for _ in 0..iterations(k) {
        let fetched = st.fetch(m, tables)?;
        let answer = st.answer(m, &fetched, ab, rb)?;
        st.advance(m, &fetched, &answer)?;
    }
    st.finish(m)
}

/// Gale–Shapley's state in the engine ([module docs](self)).
struct GsState<W> {
    k: usize,
    zero: W,
    /// One-hot over k + 1 slots (slot k: the idle sentinel).
    cur: Vec<W>,
    /// One-hot over the same slots.
    fresh: Vec<W>,
    /// Per proposer, the acceptor it proposes to next (plus the sentinel's 0).
    target: Vec<W>,
    partner: Vec<W>,
    held: Vec<W>,
    /// The last iteration's update of `partner` and `held`, applied in the next one's first
    /// round.
    pending: Option<Pending<W>>,
}

/// What step 1 fetched.
struct Fetched<W> {
    a: W,
    rank_col: Vec<W>,
    next_col: Vec<W>,
}

/// What steps 2–5 computed.
struct Answer<W> {
    hot_a: Vec<W>,
    q: W,
    r_old: W,
    r_new: W,
    a_next: W,
    hot_q: Vec<W>,
    accept: W,
}

impl<
    W: Copy
        + std::ops::Add<Output = W>
        + std::ops::AddAssign
        + std::ops::Sub<Output = W>
        + std::ops::Mul<Fp, Output = W>
        + std::iter::Sum,
> GsState<W>
{
    fn new<R: Ram<Word = W>>(m: &R, tables: &MatchingTables<W>, k: usize) -> GsState<W> {
        let (zero, one) = (m.int(0), m.int(1));
        let unit =
            |i: usize| -> Vec<W> { (0..=k).map(|j| if j == i { one } else { zero }).collect() };
        let mut target = tables.first.clone();
        target.push(zero);
        // `fresh` starts at proposer 1 (k = 1: the sentinel).
        GsState {
            k,
            zero,
            cur: unit(0),
            fresh: unit(1),
            target,
            partner: vec![m.int(k as u64); k],
            held: vec![m.int(k as u64); k],
            pending: None,
        }
    }

    /// Step 1: a, RANK[·][cur], NEXT[·][cur] (one round), the pending update riding along.
    fn fetch<R: Ram<Word = W>>(
        &mut self,
        m: &mut R,
        tables: &MatchingTables<W>,
    ) -> Result<Fetched<W>, ProgramError> {
        let k = self.k;
        let proposers = &self.cur[..k];
        let mut dots = Vec::with_capacity(4 * k + 1);
        dots.push((&self.cur[..], &self.target[..]));
        dots.extend(tables.rank.chunks_exact(k).map(|row| (proposers, row)));
        dots.extend(tables.next.chunks_exact(k).map(|row| (proposers, row)));
        let upd: Vec<[W; 3]> = match &self.pending {
            Some(Pending { hot, u, v }) => hot.iter().map(|&h| [h, *u, *v]).collect(),
            None => Vec::new(),
        };
        for x in &upd {
            dots.push((&x[0..1], &x[1..2]));
            dots.push((&x[0..1], &x[2..3]));
        }
        let r = m.dot_many(&dots)?;
        // The sentinel's rank is k + 1 at every acceptor.
        let idle_rank = Fp::from_u64(k as u64 + 1);
        let rank_col = r[1..=k]
            .iter()
            .map(|&x| x + self.cur[k] * idle_rank)
            .collect();
        for (j, d) in r[2 * k + 1..].chunks_exact(2).enumerate() {
            self.partner[j] += d[0];
            self.held[j] += d[1];
        }
        Ok(Fetched {
            a: r[0],
            rank_col,
            next_col: r[k + 1..2 * k + 1].to_vec(),
        })
    }

    /// Steps 2–5: a's one-hot vector; q, r_old, r_new, a' (one round); the one-hot vectors of
    /// q, r_new, r_old; accept = [r_new < r_old].
    fn answer<R: Ram<Word = W>>(
        &self,
        m: &mut R,
        f: &Fetched<W>,
        ab: u32,
        rb: u32,
    ) -> Result<Answer<W>, ProgramError> {
        let k = self.k;
        let hot_a = m.onehot_many(&[f.a], ab, k)?.remove(0);
        let r = m.dot_many(&[
            (&hot_a, &self.partner),
            (&hot_a, &self.held),
            (&hot_a, &f.rank_col),
            (&hot_a, &f.next_col),
        ])?;
        let (q, r_old, r_new, a_next) = (r[0], r[1], r[2], r[3]);
        let mut hots = m.onehot_many(&[q, r_new, r_old], rb, k + 2)?;
        let hot_old = hots.pop().unwrap_or_default();
        let hot_new = hots.pop().unwrap_or_default();
        let hot_q = hots.pop().unwrap_or_default();
        // below[j] = [r_new < j].
        let mut below = Vec::with_capacity(k + 2);
        let mut acc = self.zero;
        for &h in &hot_new {
            below.push(acc);
            acc += h;
        }
        let accept = m.dot_many(&[(&hot_old, &below)])?[0];
        Ok(Answer {
            hot_a,
            q,
            r_old,
            r_new,
            a_next,
            hot_q,
            accept,
        })
    }

    /// Step 6: one round of products updates target, cur and fresh; partner and held are
    /// updated in the next iteration's first round.
    fn advance<R: Ram<Word = W>>(
        &mut self,
        m: &mut R,
        f: &Fetched<W>,
        x: &Answer<W>,
    ) -> Result<(), ProgramError> {
        let k = self.k;
        let free = x.hot_q[k];
        let cur_id: W = self
            .cur
            .iter()
            .zip(0..)
            .map(|(&h, j)| h * Fp::from_u64(j))
            .sum();
        let (cur, fresh, hot_q) = (&self.cur, &self.fresh, &x.hot_q);
        let mut pairs = Vec::with_capacity(4 * k + 6);
        pairs.extend(cur[..k].iter().map(|&h| (h, x.a_next - f.a)));
        pairs.extend((0..=k).map(|j| (x.accept, hot_q[j] - cur[j])));
        pairs.extend((0..=k).map(|j| (free, fresh[j] - hot_q[j])));
        pairs.extend((0..=k).map(|j| {
            let below_j = if j == 0 { self.zero } else { fresh[j - 1] };
            (free, below_j - fresh[j])
        }));
        pairs.push((x.accept, cur_id - x.q));
        pairs.push((x.accept, x.r_new - x.r_old));
        let p = m.mul_many(&pairs)?;
        let (p_target, rest) = p.split_at(k);
        let (p_cur, rest) = rest.split_at(k + 1);
        let (p_free, rest) = rest.split_at(k + 1);
        let (p_fresh, rest) = rest.split_at(k + 1);
        for (t, &d) in self.target.iter_mut().zip(p_target) {
            *t += d;
        }
        for j in 0..=k {
            self.cur[j] += p_cur[j] + p_free[j];
            self.fresh[j] += p_fresh[j];
        }
        self.pending = Some(Pending {
            hot: x.hot_a.clone(),
            u: rest[0],
            v: rest[1],
        });
        Ok(())
    }

    /// Applies the last iteration's update of `partner`: the acceptors' partners.
    fn finish<R: Ram<Word = W>>(mut self, m: &mut R) -> Result<Vec<W>, ProgramError> {
        if let Some(Pending { hot, u, .. }) = self.pending.take() {
            let pairs: Vec<_> = hot.iter().map(|&h| (h, u)).collect();
            for (x, d) in self.partner.iter_mut().zip(m.mul_many(&pairs)?) {
                *x += d;
            }
        }
        Ok(self.partner)
    }
}

/// Runs the program on the plaintext machine [`PlainRam`]: the matching and what the run did.
/// `hides_op_type` is that of the machine (the program makes no access, so it changes
/// nothing).
///
/// # Errors
/// [`InputError`]s of the preferences; [`ProgramError::Misuse`] if the program breaks a bound
/// (a one-hot operand beyond its bit length).
pub fn run_plain(
    prefs: &Prefs,
    hides_op_type: bool,
) -> Result<(Matching, PlainCounts), ProgramError> {
    prefs.validate()?;
    let k = prefs.k();
    let t = tables(prefs);
    let mut m = PlainRam::new(hides_op_type);
    let words = |v: &[u64]| v.iter().map(|&x| Fp::from_u64(x)).collect::<Vec<_>>();
    let tables = MatchingTables {
        rank: words(&t.rank),
        next: words(&t.next),
        first: words(&t.first),
    };
    let partners = gale_shapley(&mut m, &tables, k)?
        .into_iter()
        .map(|x| to_int(x, k as u128, "partner"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((Matching::from_acceptors(partners)?, m.counts()))
}

/// The owner's tables in plaintext: `rank` and `next` (k² words each, acceptor-major) and
/// `first` (k words).
fn tables(prefs: &Prefs) -> MatchingTables<u64> {
    let k = prefs.k();
    let mut rank = vec![0u64; k * k];
    for (a, list) in prefs.acceptors.iter().enumerate() {
        for (r, &p) in list.iter().enumerate() {
            rank[a * k + p as usize] = r as u64;
        }
    }
    let mut next = vec![0u64; k * k];
    let mut first = vec![0u64; k];
    for (p, list) in prefs.proposers.iter().enumerate() {
        first[p] = list.first().copied().unwrap_or(0);
        for w in list.windows(2) {
            next[w[0] as usize * k + p] = w[1];
        }
    }
    MatchingTables { rank, next, first }
}

/// One party's run with the backend `D`: the owner passes `Some(prefs)`, the others `None`.
/// The owner announces k.
///
/// # Errors
/// [`ProgramError::Input`] for a wrong role input or invalid preferences (at the owner,
/// before it sends); [`ProgramError::BadSizes`] for k above [`MAX_PREFS`]; transport and
/// engine errors.
fn run_on<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    prefs: Option<&Prefs>,
) -> Result<PartyRun<Matching>, ProgramError> {
    roles.check_for(H::PARTIES)?;
    if (session.me() == roles.owner) != prefs.is_some() {
        return Err(InputError::Role("the data owner, and only it, provides preferences").into());
    }
    if let Some(p) = prefs {
        p.validate()?;
    }
    agree_on_run(&mut session, "matching", H::BACKEND, &roles)?;
    let k = announce_size(
        &mut session,
        roles.owner,
        prefs.map(|p| p.k()),
        MAX_PREFS as u64,
        "k",
    )?;
    let mut m = H::setup(session, seed)?;
    m.preprocess_bits(plan(k).bits)?;
    // One input round for the three tables.
    let t = prefs.map(tables);
    let flat = t.as_ref().map(|t| {
        let mut v = t.rank.clone();
        v.extend_from_slice(&t.next);
        v.extend_from_slice(&t.first);
        v
    });
    let mut words = m.input_vector(roles.owner, flat.as_deref(), 2 * k * k + k)?;
    let first = words.split_off(2 * k * k);
    let next = words.split_off(k * k);
    let tables = MatchingTables {
        rank: words,
        next,
        first,
    };
    let partner = gale_shapley(&mut m, &tables, k)?;
    let output = if k == 0 {
        (m.me() == roles.receiver).then(|| Matching {
            acceptor_partner: Vec::new(),
            proposer_partner: Vec::new(),
        })
    } else {
        let out = m.open_to(roles.receiver, &partner)?;
        out.map(|vals| {
            let partners = vals
                .into_iter()
                .map(|x| to_int(x, k as u128, "partner"))
                .collect::<Result<Vec<_>, _>>()?;
            Matching::from_acceptors(partners)
        })
        .transpose()?
    };
    Ok(m.finish(output))
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

    fn run_on<H: Host>(
        session: Session,
        seed: Seed,
        roles: Roles,
        prefs: Option<&Prefs>,
        _query: Option<()>,
    ) -> Result<PartyRun<Matching>, ProgramError> {
        run_on::<H>(session, seed, roles, prefs)
    }
}
