//! Binary search of a secret key in a secret sorted array.
//!
//! **Output**: the index of the first entry ≥ key (`n` if every entry is smaller), and whether
//! that entry equals the key ([`SearchOutput`]) — `slice::partition_point(|x| x < key)` and
//! `binary_search(key).is_ok()` of the plaintext array.
//!
//! **Algorithm** (fixed running time, Gordon et al. §2.1: "the running time on x, D is exactly
//! t"): the branch-free search with a public window length. `base` (secret) and `len`
//! (public, starts at n) keep the answer in [base, base + len] with base + len ≤ n; while
//! len > 1, probe A[base + ⌊len/2⌋ − 1] and add ⌊len/2⌋ to base if it is below the key;
//! len −= ⌊len/2⌋ either way. The base update base += ⌊len/2⌋·\[A < key\] is linear, so a probe
//! costs one read and one comparison and no select. The last probe reads A\[base\]
//! (base ≤ n − 1) and compares it with the key for both < and = (one comparison), together
//! with [base = n − 1]: the index is base + lt; if lt = 0, found = [A\[base\] = key]; otherwise
//! the entry at the index is read — at index − [index = n], so that the address stays in
//! range and the memory holds exactly n words (a sentinel word would push n = 2^20 to a
//! 2^21-word DORAM) — and found = \[index < n\]·[A\[index\] = key]. Comparisons run on 64 bits
//! ([`KEY_BITS`]).
//!
//! **Top levels in the engine.** The first t loop probes can only land on 1, 2, 4, …, 2^{t−1}
//! public positions, so the owner also inputs those 2^t − 1 entries into the engine
//! ([`probe_tables`]) and probe j reads its table by an inner product with the one-hot vector
//! of the comparison bits so far (two rounds, no DORAM access). [`engine_levels`] picks t from
//! n (2^t − 1 ≤ n/64, at most 14): at n = 2^20 that replaces 14 of the 22 accesses.
//!
//! **Costs** for n ≥ 1, with p = ⌈log₂ n⌉ + 1 probes and t table levels (n = 0: nothing at
//! all, the output is (0, false)):
//! * DORAM accesses: p + 1 − t reads on a memory of n words;
//! * engine tables: 2^t − 1 entries input by the owner (one round), 2^{t−1} products and one
//!   inner product per level;
//! * comparisons: p + 2 at 64 bits (64 random bits and 176 preprocessed products each): p − 1 less-than, the last probe's
//!   combined less-than/equality with [base = n − 1], the final equality;
//! * rounds: per probe, the access's own, one to convert its result, and 1 + 4 for the
//!   comparison; 2 product rounds at the end; one round for the key's input and one to open
//!   the output.
//!
//! The access pattern (addresses are secret; the sequence of operations is public) and the
//! running time depend on n only.
//!
//! [`linear_search`] is the same search as a linear scan in the engine (n comparisons in one
//! batch, no DORAM), for finding the size where the DORAM pays off ([`crate::bench`]).

use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_mpc::engine::bits_per_comparison;
use doram_mpc::{Input, Secret, SecretBit};
use doram_net::Session;

use crate::error::{InputError, ProgramError};
use crate::machine::{Backend, Machine, OArray, Part, Plan, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, agree_on_run, announce_sizes};

/// Bit length of the comparisons: 64-bit entries and keys.
pub const KEY_BITS: u32 = 64;

/// The largest array the entry points accept.
pub const MAX_N: u64 = 1 << 27;

/// The result of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SearchOutput {
    /// The index of the first entry ≥ the key (`n` if none).
    pub index: u64,
    /// Whether the entry at `index` equals the key.
    pub found: bool,
}

/// The plaintext search the secure one must match.
pub fn plain(sorted: &[u64], key: u64) -> SearchOutput {
    let index = sorted.partition_point(|&x| x < key);
    SearchOutput {
        index: index as u64,
        found: sorted.get(index) == Some(&key),
    }
}

/// Number of less-than probes for `n` entries: ⌈log₂ n⌉ + 1, or 0 for an empty array.
pub fn probes(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.next_power_of_two().trailing_zeros() as usize + 1
    }
}

/// The public halving schedule of the loop probes: ⌊len/2⌋ for len = n, n − ⌊n/2⌋, … > 1.
pub fn schedule(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut len = n;
    while len > 1 {
        out.push(len / 2);
        len -= len / 2;
    }
    out
}

/// How many of the first loop probes read an engine table instead of the DORAM (see
/// [`probe_tables`]): the largest t with 2^t − 1 ≤ n/64 entries, at most 14 and at most the
/// number of loop probes. The owner inputs the tables in one round; each level saves one DORAM
/// access. The rule depends on n only.
pub fn engine_levels(n: usize) -> usize {
    ((n / 64 + 1).ilog2() as usize)
        .min(14)
        .min(schedule(n).len())
}

/// The owner's probe tables of the first `levels` loop probes: entry c of table j is the
/// entry probed at step j when the earlier comparison bits b_0 … b_{j−1} spell c (b_0 most
/// significant); table j has 2^j entries. Every position is in range, because base + len ≤ n
/// holds for every bit pattern.
pub fn probe_tables(sorted: &[u64], levels: usize) -> Vec<Vec<u64>> {
    let halves = schedule(sorted.len());
    (0..levels.min(halves.len()))
        .map(|j| {
            (0..1usize << j)
                .map(|c| {
                    let base: usize = (0..j)
                        .filter(|&i| (c >> (j - 1 - i)) & 1 == 1)
                        .map(|i| halves[i])
                        .sum();
                    sorted[base + halves[j] - 1]
                })
                .collect()
        })
        .collect()
}

/// Accesses, comparisons and random bits of a search over `n` entries with
/// [`engine_levels`]`(n)` table levels.
pub fn plan(n: usize) -> Plan {
    if n == 0 {
        return Plan::default();
    }
    let comparisons = probes(n) + 2;
    Plan {
        accesses: probes(n) + 1 - engine_levels(n),
        comparisons,
        bits: comparisons * bits_per_comparison(KEY_BITS),
    }
}

/// The program: searches `key` in `array`, whose n words are the sorted entries. The first
/// `tables.len()` loop probes read the engine tables of [`probe_tables`] (as secrets) by an
/// inner product with the one-hot vector of the comparison bits so far, the others read the
/// DORAM. Returns the secret index of the first entry ≥ key (n if none) and the bit "found".
///
/// # Errors
/// [`ProgramError::Misuse`] if the tables do not have the sizes 1, 2, 4, … or there are more
/// of them than loop probes; the machine's errors.
pub fn search<R: Ram>(
    m: &mut R,
    array: OArray,
    key: R::Word,
    tables: &[Vec<R::Word>],
) -> Result<(R::Word, R::Bit), ProgramError> {
    let n = array.len();
    let halves = schedule(n);
    if tables.len() > halves.len() || tables.iter().enumerate().any(|(j, t)| t.len() != 1 << j) {
        return Err(ProgramError::Misuse(
            "probe tables must have sizes 1, 2, 4, …",
        ));
    }
    if n == 0 {
        return Ok((m.int(0), m.public_bit(false)));
    }
    let mut base = m.int(0);
    let mut onehot = vec![m.int(1)];
    let mut last = m.public_bit(false);
    for (j, &half) in halves.iter().enumerate() {
        let v = if let Some(table) = tables.get(j) {
            if j == 0 {
                table[0]
            } else {
                // Extend the one-hot vector by the last bit, then take the inner product.
                let pairs: Vec<_> = onehot.iter().map(|&h| (h, R::value(last))).collect();
                let right = m.mul_many(&pairs)?;
                let mut next = Vec::with_capacity(2 * onehot.len());
                for (&h, r) in onehot.iter().zip(right) {
                    next.push(h - r);
                    next.push(r);
                }
                let v = m.dot_many(&[(&next[..], &table[..])])?[0];
                onehot = next;
                v
            }
        } else {
            let probe = base + m.int(half as u64 - 1);
            m.read(array, probe)?
        };
        let below = m.lt_many(&[(v, key)], KEY_BITS)?[0];
        base += R::value(below) * Fp::from_u64(half as u64);
        last = below;
    }
    // The last probe: A[base] against the key, and [base = n − 1].
    let v = m.read(array, base)?;
    let end = m.int(n as u64 - 1);
    let r = m.cmp_many(&[(v, key), (base, end)], KEY_BITS)?;
    let (lt, eq) = r[0];
    // lt·[base = n − 1]: the index is n.
    let last_lt = m.mul_many(&[(R::value(lt), R::value(r[1].1))])?[0];
    let index = base + R::value(lt);
    // Read A[index − [index = n]]; it matters only if lt = 1 and index < n.
    let w = m.read(array, index - last_lt)?;
    let e = m.eq_many(&[(w, key)], KEY_BITS)?[0];
    let p = m.mul_many(&[(R::value(lt) - last_lt, R::value(e))])?[0];
    let found = R::assume_bit(R::value(eq) + p);
    Ok((index, found))
}

/// The same search as a linear scan in the engine over secret `entries` (no DORAM): the index
/// is the number of entries below the key, and `found` = Σ_i [i = index]·[A_i = key], where
/// [i = index] = [A_{i−1} < key] − \[A_i < key\] for a sorted array. One batch of n comparisons
/// (1 + 4 rounds) and one round of n products.
///
/// # Errors
/// The engine's errors.
pub fn linear_search<R: Ram>(
    m: &mut R,
    entries: &[R::Word],
    key: R::Word,
) -> Result<(R::Word, R::Bit), ProgramError> {
    let pairs: Vec<_> = entries.iter().map(|&a| (a, key)).collect();
    let c = m.cmp_many(&pairs, KEY_BITS)?;
    let index: R::Word = c.iter().map(|&(lt, _)| R::value(lt)).sum();
    let one = m.int(1);
    let firsts: Vec<_> = (0..c.len())
        .map(|i| {
            let prev = if i == 0 { one } else { R::value(c[i - 1].0) };
            (prev - R::value(c[i].0), R::value(c[i].1))
        })
        .collect();
    let found: R::Word = m.mul_many(&firsts)?.into_iter().sum();
    Ok((index, R::assume_bit(found)))
}

/// Runs the search on the plaintext machine [`PlainRam`], with the engine tables of
/// [`Program::run_with`] and the array in memory (the memory access sequence of a backend that
/// hides the op type if `hides_op_type`): the output and what the run did.
///
/// # Errors
/// [`InputError::Unsorted`] for an unsorted array; [`ProgramError::Misuse`] if the program
/// breaks a bound (a comparison operand beyond its bit length, an address outside the memory).
pub fn run_plain(
    sorted: &[u64],
    key: u64,
    hides_op_type: bool,
) -> Result<(SearchOutput, PlainCounts), ProgramError> {
    check_sorted(sorted)?;
    let n = sorted.len();
    let mut m = PlainRam::new(hides_op_type);
    let tables: Vec<Vec<Fp>> = probe_tables(sorted, engine_levels(n))
        .into_iter()
        .map(|t| t.into_iter().map(Fp::from_u64).collect())
        .collect();
    let array = m.alloc_ints(sorted)?;
    m.boot()?;
    let (index, found) = search(&mut m, array, Fp::from_u64(key), &tables)?;
    let output = SearchOutput {
        index: to_int(index, n as u128 + 1, "search index")?,
        found,
    };
    Ok((output, m.counts()))
}

/// The error for the first pair of entries out of order, if any.
fn check_sorted(data: &[u64]) -> Result<(), ProgramError> {
    if let Some(i) = data.windows(2).position(|w| w[1] < w[0]) {
        return Err(InputError::Unsorted {
            line: i + 2,
            value: data[i + 1],
            previous: data[i],
        }
        .into());
    }
    Ok(())
}

/// Checks the roles' inputs at this party before anything is sent.
fn check_inputs(
    me: PartyId,
    roles: &Roles,
    data: Option<&[u64]>,
    key: Option<u64>,
) -> Result<(), ProgramError> {
    roles.check()?;
    if (me == roles.querier) != key.is_some() {
        return Err(InputError::Role("the querier, and only it, provides the key").into());
    }
    if (me == roles.owner) != data.is_some() {
        return Err(InputError::Role("the data owner, and only it, provides the array").into());
    }
    if let Some(d) = data {
        check_sorted(d)?;
    }
    Ok(())
}

fn open_output<D: Backend>(
    m: &mut Machine<D>,
    roles: &Roles,
    n: usize,
    index: Secret,
    found: SecretBit,
) -> Result<Option<SearchOutput>, ProgramError> {
    let out = m.engine_in(Part::Output, |on| {
        on.open_to(roles.receiver, &[index, found.value()])
    })?;
    out.map(|v| {
        Ok(SearchOutput {
            index: to_int(v[0], n as u128 + 1, "search index")?,
            found: to_int(v[1], 2, "found bit")? == 1,
        })
    })
    .transpose()
}

/// One party's run with the backend `D`: the owner passes `Some(sorted entries)`, the querier
/// `Some(key)`, everybody else `None`. The owner announces n; the receiver gets
/// `Some(output)`.
///
/// # Errors
/// [`ProgramError::Input`] for a wrong role input or an unsorted array (before sending);
/// [`ProgramError::BadSizes`] if the owner announces n > [`MAX_N`]; transport, engine and
/// DORAM errors.
fn run_with<D: Backend>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    key: Option<u64>,
) -> Result<PartyRun<SearchOutput>, ProgramError> {
    check_inputs(session.me(), &roles, data, key)?;
    let sizes = data.map(|d| [d.len() as u64]);
    agree_on_run(&mut session, "binary-search", D::NAME, &roles)?;
    let n = announce_sizes(
        &mut session,
        roles.owner,
        sizes.as_ref().map(|s| &s[..]),
        &[MAX_N],
        &["n"],
    )?[0] as usize;
    let mut m = Machine::<D>::setup(session, seed)?;
    let p = plan(n);
    m.preprocess_bits(p.bits)?;
    let key = m.input_scalar(roles.querier, key)?;
    let t = engine_levels(n);
    let flat: Option<Vec<u64>> = data.map(|d| probe_tables(d, t).concat());
    let flat_tables = m.engine_in(Part::Input, |on| {
        on.input(match &flat {
            Some(f) => Input::Own(&f[..]),
            None => Input::Peer {
                dealer: roles.owner,
                count: (1 << t) - 1,
            },
        })
    })?;
    let tables: Vec<Vec<Secret>> = (0..t)
        .map(|j| flat_tables[(1 << j) - 1..(1 << (j + 1)) - 1].to_vec())
        .collect();
    let array = m.alloc_input(roles.owner, data, n)?;
    m.boot(p.accesses)?;
    let (index, found) = search(&mut m, array, key, &tables)?;
    let output = open_output(&mut m, &roles, n, index, found)?;
    Ok(PartyRun::from_machine(&mut m, output))
}

/// The linear-scan search ([`linear_search`]) as one party's run: the owner's entries and the
/// querier's key are input to the engine (one round each), no DORAM.
///
/// # Errors
/// As [`Program::run_with`].
fn run_linear(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    key: Option<u64>,
) -> Result<PartyRun<SearchOutput>, ProgramError> {
    check_inputs(session.me(), &roles, data, key)?;
    let sizes = data.map(|d| [d.len() as u64]);
    agree_on_run(&mut session, "linear-search", "engine", &roles)?;
    let n = announce_sizes(
        &mut session,
        roles.owner,
        sizes.as_ref().map(|s| &s[..]),
        &[MAX_N],
        &["n"],
    )?[0] as usize;
    // The engine only; the backend type is never booted.
    let mut m = Machine::<doram_oram::LinearScanOram<Fp>>::setup(session, seed)?;
    m.preprocess_bits(n * bits_per_comparison(KEY_BITS))?;
    let key = m.input_scalar(roles.querier, key)?;
    let entries = m.engine_in(Part::Input, |on| {
        let input = match data {
            Some(d) => Input::Own(d),
            None => Input::Peer {
                dealer: roles.owner,
                count: n,
            },
        };
        on.input(input)
    })?;
    let (index, found) = linear_search(&mut m, &entries, key)?;
    let output = open_output(&mut m, &roles, n, index, found)?;
    Ok(PartyRun::from_machine(&mut m, output))
}

/// The binary search of [`search`] (engine tables for the first probes, the DORAM for the
/// rest). Owner: the sorted entries; querier: the key.
#[derive(Clone, Copy, Debug)]
pub struct BinarySearch;

impl Program for BinarySearch {
    const NAME: &'static str = "binary-search";
    type Data<'a> = &'a [u64];
    type Query = u64;
    type Output = SearchOutput;

    fn reference(data: &[u64], key: u64) -> SearchOutput {
        plain(data, key)
    }

    fn run_with<D: Backend>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<&[u64]>,
        key: Option<u64>,
    ) -> Result<PartyRun<SearchOutput>, ProgramError> {
        run_with::<D>(session, seed, roles, data, key)
    }
}

/// The same search as a linear scan in the engine ([`linear_search`]): no DORAM, whichever
/// backend is chosen. Owner: the sorted entries; querier: the key.
#[derive(Clone, Copy, Debug)]
pub struct LinearSearch;

impl Program for LinearSearch {
    const NAME: &'static str = "linear-search";
    type Data<'a> = &'a [u64];
    type Query = u64;
    type Output = SearchOutput;

    fn reference(data: &[u64], key: u64) -> SearchOutput {
        plain(data, key)
    }

    fn run_with<D: Backend>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<&[u64]>,
        key: Option<u64>,
    ) -> Result<PartyRun<SearchOutput>, ProgramError> {
        run_linear(session, seed, roles, data, key)
    }
}
