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
//! * comparisons: p + 2 at 64 bits (no preprocessing; [`doram_mpc::compare`]): p − 1 less-than, the last probe's
//!   combined less-than/equality with [base = n − 1], the final equality;
//! * rounds: per probe, the access's own, one to convert its result, and 7 for the
//!   comparison; 2 product rounds at the end; one round for the key's input and one to open
//!   the output.
//!
//! The access pattern (addresses are secret; the sequence of operations is public) and the
//! running time depend on n only.
//!
//! **Many keys, one setup** ([`search_many`], run by [`run_many_with`] / [`run_local_many`]):
//! the querier's k keys are searched in lock step over one DORAM loaded once. Step j of every
//! key is one batch: the k probe addresses are one [`read_many`](Ram::read_many) (Duoram
//! shares the rounds of a batch of reads), the k comparisons one [`lt_many`](Ram::lt_many),
//! a table level one batch of products and one of inner products. The owner's tables serve
//! all keys, so on a backend whose accesses do O(n) local work (Duoram, the linear scan) a
//! batch takes more levels from them ([`table_levels`]: 2^t − 1 ≤ k·⌊n/64⌋, at most 20
//! levels, up to every loop probe and the last probe — at n = 2^17 + 1 and k = 1000 all 19
//! probes, leaving the final read A\[index\] as each key's only DORAM access); Ramen, whose
//! accesses are cheap amortised, keeps the tables of one key. Beyond
//! [`onehot_split`] a table is read as a matrix: the one-hot vector of the first s bits
//! picks a row and that of the later bits a column, so a key holds 2^s + 2^{j−s} one-hot
//! words instead of 2^j, and a level costs it 2^{j−s} inner products of length 2^s, 2^{j−s−1}
//! products and one more inner product (two rounds, as below the split). For k keys and t
//! table levels:
//! * DORAM accesses: k·(p + 1 − t), in p + 2 − t batches;
//! * comparisons: k·(p + 2), in p + 2 batches; table levels: about k·2^t local
//!   multiplications and k·2^{t−s} + k·2^s products and inner products;
//! * rounds: the engine's (conversions, comparisons, products) are those of one key — they
//!   grow with log n, not with k — plus one round in which the querier announces k. On Duoram
//!   a batch of reads shares its two messages up to min(1024, 2^21 / 2^⌈log₂ n⌉) reads (the
//!   material of a read is O(n) words; `doram_duoram::READ_BATCH_LEAVES`),
//!   so at large n a batch runs as ⌈k / that⌉ consecutive batches, each with its inline
//!   preprocessing. Ramen and the linear scan run the reads of a batch one after the other;
//! * once for all keys: setup, the owner's tables (2^t − 1 inputs, one round) and DORAM
//!   Init.
//!
//! k is public (like n); the keys and the results are not, and the receiver alone learns the
//! k results. With one key the operation sequence is exactly that of [`search`].
//!
//! [`linear_search`] is the same search as a linear scan in the engine (n comparisons in one
//! batch, no DORAM), for finding the size where the DORAM pays off ([`crate::bench`]).

use doram_core::{Entropy, PartyId, Seed};
use doram_field::Fp;
use doram_net::Session;

use crate::error::{InputError, ProgramError};
use crate::host::Host;
use crate::machine::{Backend, Machine, OArray, Plan, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, agree_on_run, all_ok, announce_size, run_three};

/// Bit length of the comparisons: 64-bit entries and keys.
pub const KEY_BITS: u32 = 64;

/// The largest array the entry points accept.
pub const MAX_N: u64 = 1 << 27;

/// The most keys one batched run ([`run_many_with`]) accepts.
pub const MAX_KEYS: u64 = 1 << 12;

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

/// The plaintext search for every key, in order.
pub fn plain_many(sorted: &[u64], keys: &[u64]) -> Vec<SearchOutput> {
    keys.iter().map(|&k| plain(sorted, k)).collect()
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

/// The owner's probe tables of the first `levels` probes: entry c of table j is the entry
/// probed at step j when the earlier comparison bits b_0 … b_{j−1} spell c (b_0 most
/// significant); table j has 2^j entries. Probe j < L = [`schedule`]`(n).len()` is loop probe
/// j; probe L is the last probe (A\[base\], which only a batch of keys takes from a table,
/// see [`table_levels`]). Every position is in range, because base + len ≤ n holds for every
/// bit pattern.
pub fn probe_tables(sorted: &[u64], levels: usize) -> Vec<Vec<u64>> {
    let halves = schedule(sorted.len());
    let probes = if sorted.is_empty() {
        0
    } else {
        halves.len() + 1
    };
    (0..levels.min(probes))
        .map(|j| {
            // The last probe reads A[base]: offset 0.
            let offset = halves.get(j).map_or(0, |h| h - 1);
            (0..1usize << j)
                .map(|c| {
                    let base: usize = (0..j)
                        .filter(|&i| (c >> (j - 1 - i)) & 1 == 1)
                        .map(|i| halves[i])
                        .sum();
                    sorted[base + offset]
                })
                .collect()
        })
        .collect()
}

/// The most table levels a batch uses: the largest table has 2^19 entries.
pub const MAX_TABLE_LEVELS: usize = 20;

/// How the local work of one DORAM access grows with the memory: what decides how many
/// probes a batch of keys takes from the owner's tables ([`table_levels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessWork {
    /// O(n) per access: Duoram (DPF evaluation over the memory) and the linear scan.
    Linear,
    /// Sublinear per access, amortised: Ramen (O(√n·log n)).
    Sublinear,
}

impl AccessWork {
    /// The access work of the backend `D`.
    pub fn of<D: Backend>() -> AccessWork {
        if D::SUBLINEAR_ACCESS {
            AccessWork::Sublinear
        } else {
            AccessWork::Linear
        }
    }
}

/// How many of the first probes of [`search_many`] with `k` keys read an engine table (see
/// [`probe_tables`]). For one key, or a backend with [`AccessWork::Sublinear`] accesses,
/// [`engine_levels`]`(n)`. With [`AccessWork::Linear`] accesses and k > 1 the owner's tables
/// serve every key, so the budget grows with k: the largest t with 2^t − 1 ≤ k·⌊n/64⌋, at
/// most [`MAX_TABLE_LEVELS`] and at most the number of probes (the loop probes and the last
/// one). A table level j costs each key about 2^j local multiplications and 2^{j/2} products
/// (see [`onehot_split`]), less than an access that does O(n) local work (on a 2-core machine
/// at n = 2^17 + 1: a level of 2^17 entries ≈ 10 ms per key, a Duoram read 15–45 ms by load) but far
/// more than a Ramen access amortised (< 1 ms). The rule depends on public values only.
pub fn table_levels(n: usize, k: usize, work: AccessWork) -> usize {
    if k <= 1 || n == 0 || work == AccessWork::Sublinear {
        return engine_levels(n);
    }
    let budget = (k as u64)
        .saturating_mul(n as u64 / 64)
        .saturating_add(1)
        .ilog2() as usize;
    budget.min(MAX_TABLE_LEVELS).min(schedule(n).len() + 1)
}

/// The level from which a table probe of [`search_many`] with `k` keys and `t` table levels
/// reads its table as a 2^s × 2^{j−s} matrix: the one-hot vector of the first s comparison
/// bits selects a row, that of the later bits a column. Below it, a key's one-hot vector over
/// all its bits so far is kept (2^j words). s = min(t, 14, 20 − ⌈log₂ k⌉): one key keeps the
/// plain one-hot vector for every level it uses, and k keys keep at most 2^20 words of
/// one-hot vectors.
pub fn onehot_split(t: usize, k: usize) -> usize {
    let log_k = k.max(1).next_power_of_two().trailing_zeros() as usize;
    t.min(14).min(20usize.saturating_sub(log_k))
}

/// Accesses, comparisons and random bits of a search over `n` entries with
/// [`engine_levels`]`(n)` table levels.
pub fn plan(n: usize) -> Plan {
    plan_many(n, 1, AccessWork::Linear)
}

/// Accesses, comparisons and random bits of [`search_many`] with `k` keys over `n` entries
/// with [`table_levels`]`(n, k, work)` table levels: k times those of one key with as many
/// levels.
pub fn plan_many(n: usize, k: usize, work: AccessWork) -> Plan {
    if n == 0 {
        return Plan::default();
    }
    let comparisons = k * (probes(n) + 2);
    Plan {
        accesses: k * (probes(n) + 1 - table_levels(n, k, work)),
        comparisons,
        bits: 0,
    }
}

/// The program: searches `key` in `array`, whose n words are the sorted entries. The first
/// `tables.len()` loop probes read the engine tables of [`probe_tables`] (as secrets) by an
/// inner product with the one-hot vector of the comparison bits so far, the others read the
/// DORAM. Returns the secret index of the first entry ≥ key (n if none) and the bit "found".
/// It is [`search_many`] with one key.
///
/// # Errors
/// [`ProgramError::Misuse`] if the tables do not have the sizes 1, 2, 4, … or there are more
/// of them than probes (loop probes and the last one); the machine's errors.
pub fn search<R: Ram>(
    m: &mut R,
    array: OArray,
    key: R::Word,
    tables: &[Vec<R::Word>],
) -> Result<(R::Word, R::Bit), ProgramError> {
    search_many(m, array, &[key], tables)?
        .pop()
        .ok_or(ProgramError::Misuse("one key gives one result"))
}

/// The program for k keys at once: [`search`] run for every key in lock step, so that each
/// step is one batch for all keys — the k probes of a step are one
/// [`read_many`](Ram::read_many) and the k comparisons one [`lt_many`](Ram::lt_many), and an
/// engine-table level is one batch of products and one of inner products. Returns one (index,
/// found) per key, in the order of `keys`.
///
/// **Costs** for k keys (p and t as in the [module documentation](self)): k·(p + 1 − t)
/// DORAM accesses in p + 2 − t batches of k reads, k·(p + 2) comparisons in p + 2 batches,
/// k·(2^t − 2) products for the one-hot vectors of the table levels; the rounds are those of
/// one key — they grow with log n, not with k. The owner's tables are input once for all
/// keys.
///
/// # Errors
/// As [`search`].
#[allow(clippy::type_complexity)]
pub fn search_many<R: Ram>(
    m: &mut R,
    array: OArray,
    keys: &[R::Word],
    tables: &[Vec<R::Word>],
) -> Result<Vec<(R::Word, R::Bit)>, ProgramError> {
    let split = onehot_split(tables.len(), keys.len());
    search_many_split(m, array, keys, tables, split)
}

/// [`search_many`] with the table probes beyond level `split` reading their tables as
/// matrices (see [`onehot_split`], which the entry points use). Every split gives the same
/// results; it changes the products and rounds a table probe costs.
///
/// # Errors
/// As [`search`].
#[allow(clippy::type_complexity)]
pub fn search_many_split<R: Ram>(
    m: &mut R,
    array: OArray,
    keys: &[R::Word],
    tables: &[Vec<R::Word>],
    split: usize,
) -> Result<Vec<(R::Word, R::Bit)>, ProgramError> {
    let n = array.len();
    let halves = schedule(n);
    let levels = halves.len();
    let probes = if n == 0 { 0 } else { levels + 1 };
    if tables.len() > probes || tables.iter().enumerate().any(|(j, t)| t.len() != 1 << j) {
        return Err(ProgramError::Misuse(
            "probe tables must have sizes 1, 2, 4, …",
        ));
    }
    let k = keys.len();
    if n == 0 || k == 0 {
        return Ok(vec![(m.int(0), m.public_bit(false)); k]);
    }
    let mut base = vec![m.int(0); k];
    let mut onehot = OneHot::new(m, k, split);
    let mut last = vec![m.public_bit(false); k];
    for (j, &half) in halves.iter().enumerate() {
        let v: Vec<R::Word> = if let Some(table) = tables.get(j) {
            onehot.probe(m, j, table, &last)?
        } else {
            let off = m.int(half as u64 - 1);
            let reads: Vec<_> = base.iter().map(|&b| (array, b + off)).collect();
            m.read_many(&reads)?
        };
        let pairs: Vec<_> = v.into_iter().zip(keys.iter().copied()).collect();
        let below = m.lt_many(&pairs, KEY_BITS)?;
        for ((b, l), &bit) in base.iter_mut().zip(last.iter_mut()).zip(&below) {
            *b += R::value(bit) * Fp::from_u64(half as u64);
            *l = bit;
        }
    }
    // The last probe: A[base] against the key, and [base = n − 1].
    let v = if let Some(table) = tables.get(levels) {
        onehot.probe(m, levels, table, &last)?
    } else {
        let reads: Vec<_> = base.iter().map(|&b| (array, b)).collect();
        m.read_many(&reads)?
    };
    let end = m.int(n as u64 - 1);
    let pairs: Vec<_> = (0..k)
        .flat_map(|i| [(v[i], keys[i]), (base[i], end)])
        .collect();
    let r = m.cmp_many(&pairs, KEY_BITS)?;
    let (lt, eq): (Vec<R::Bit>, Vec<R::Bit>) = r.chunks(2).map(|c| c[0]).unzip();
    // lt·[base = n − 1]: the index is n.
    let ends: Vec<_> = (0..k)
        .map(|i| (R::value(lt[i]), R::value(r[2 * i + 1].1)))
        .collect();
    let last_lt = m.mul_many(&ends)?;
    let index: Vec<R::Word> = (0..k).map(|i| base[i] + R::value(lt[i])).collect();
    // Read A[index − [index = n]]; it matters only if lt = 1 and index < n.
    let reads: Vec<_> = (0..k).map(|i| (array, index[i] - last_lt[i])).collect();
    let w = m.read_many(&reads)?;
    let pairs: Vec<_> = w.into_iter().zip(keys.iter().copied()).collect();
    let e = m.eq_many(&pairs, KEY_BITS)?;
    let pairs: Vec<_> = (0..k)
        .map(|i| (R::value(lt[i]) - last_lt[i], R::value(e[i])))
        .collect();
    let p = m.mul_many(&pairs)?;
    Ok((0..k)
        .map(|i| (index[i], R::assume_bit(R::value(eq[i]) + p[i])))
        .collect())
}

/// Each key's one-hot vectors of its comparison bits so far, for reading the probe tables:
/// `high` over the first `split` bits (b_0 most significant), `low` over the later ones.
struct OneHot<W> {
    split: usize,
    high: Vec<Vec<W>>,
    low: Vec<Vec<W>>,
}

impl<W: Copy + core::ops::Sub<Output = W>> OneHot<W> {
    fn new<R: Ram<Word = W>>(m: &R, k: usize, split: usize) -> Self {
        OneHot {
            split,
            high: vec![vec![m.int(1)]; k],
            low: vec![vec![m.int(1)]; k],
        }
    }

    /// Every key's entry of `table` (probe `j`, 2^j entries) at its bits so far, `last`
    /// being bit j − 1. Up to the split: the one-hot vector is extended by the last bit (one
    /// batch of products) and multiplied with the table (one batch of inner products). Beyond
    /// it, with c = a·2^{j−s} + r: in one batch, the low vector is extended and the inner
    /// products w_r = Σ_a high\[a\]·T\[a·2^{j−s} + r\] are taken; then ⟨low, w⟩ (one more
    /// batch).
    fn probe<R: Ram<Word = W>>(
        &mut self,
        m: &mut R,
        j: usize,
        table: &[W],
        last: &[R::Bit],
    ) -> Result<Vec<W>, ProgramError> {
        let k = self.high.len();
        if j == 0 {
            return Ok(vec![table[0]; k]);
        }
        let bits: Vec<W> = last.iter().map(|&b| R::value(b)).collect();
        if j <= self.split {
            // Extend each one-hot vector by its last bit (one batch of products for all
            // keys), then take the inner products with the table (one batch).
            let pairs: Vec<_> = self
                .high
                .iter()
                .zip(&bits)
                .flat_map(|(h, &b)| h.iter().map(move |&x| (x, b)))
                .collect();
            let right = m.mul_many(&pairs)?;
            extend(&mut self.high, right);
            let dots: Vec<_> = self.high.iter().map(|h| (&h[..], table)).collect();
            return m.dot_many(&dots);
        }
        let cols = 1usize << (j - self.split);
        // The table's columns, each of 2^s entries.
        let columns: Vec<Vec<W>> = (0..cols)
            .map(|r| table.iter().skip(r).step_by(cols).copied().collect())
            .collect();
        let mut dots: Vec<(&[W], &[W])> = Vec::with_capacity(k * (cols / 2 + cols));
        for (l, b) in self.low.iter().zip(&bits) {
            dots.extend(
                l.iter()
                    .map(|x| (std::slice::from_ref(x), std::slice::from_ref(b))),
            );
        }
        for h in &self.high {
            dots.extend(columns.iter().map(|c| (&h[..], &c[..])));
        }
        let mut out = m.dot_many(&dots)?;
        let w = out.split_off(k * cols / 2);
        extend(&mut self.low, out);
        let dots: Vec<_> = self
            .low
            .iter()
            .zip(w.chunks(cols))
            .map(|(l, w)| (&l[..], w))
            .collect();
        m.dot_many(&dots)
    }
}

/// Replaces each one-hot vector h by its extension by one bit b, given the products h·b in
/// order: entry 2i is h_i − h_i·b, entry 2i + 1 is h_i·b.
fn extend<W: Copy + core::ops::Sub<Output = W>>(vectors: &mut [Vec<W>], products: Vec<W>) {
    let mut right = products.into_iter();
    for h in vectors.iter_mut() {
        let mut next = Vec::with_capacity(2 * h.len());
        for (&x, r) in h.iter().zip(right.by_ref()) {
            next.push(x - r);
            next.push(r);
        }
        *h = next;
    }
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
    let (mut out, counts) = run_plain_many(sorted, &[key], hides_op_type, AccessWork::Linear)?;
    let one = out
        .pop()
        .ok_or(ProgramError::Misuse("one key gives one result"))?;
    Ok((one, counts))
}

/// [`run_plain`] for k keys at once: [`search_many`] on the plaintext machine with the table
/// levels of a backend with `work` ([`table_levels`]), the outputs in the order of `keys`.
///
/// # Errors
/// As [`run_plain`].
pub fn run_plain_many(
    sorted: &[u64],
    keys: &[u64],
    hides_op_type: bool,
    work: AccessWork,
) -> Result<(Vec<SearchOutput>, PlainCounts), ProgramError> {
    check_sorted(sorted)?;
    let n = sorted.len();
    let mut m = PlainRam::new(hides_op_type);
    let tables: Vec<Vec<Fp>> = probe_tables(sorted, table_levels(n, keys.len(), work))
        .into_iter()
        .map(|t| t.into_iter().map(Fp::from_u64).collect())
        .collect();
    let array = m.alloc_ints(sorted)?;
    m.boot()?;
    let keys: Vec<Fp> = keys.iter().map(|&k| Fp::from_u64(k)).collect();
    let outputs = search_many(&mut m, array, &keys, &tables)?
        .into_iter()
        .map(|(index, found)| {
            Ok(SearchOutput {
                index: to_int(index, n as u128 + 1, "search index")?,
                found,
            })
        })
        .collect::<Result<Vec<_>, ProgramError>>()?;
    Ok((outputs, m.counts()))
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
    parties: usize,
) -> Result<(), ProgramError> {
    roles.check_for(parties)?;
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

/// The batched search's checks at this party before anything is sent.
pub(crate) fn check_batch_inputs(
    me: PartyId,
    roles: &Roles,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
    parties: usize,
) -> Result<(), ProgramError> {
    roles.check_for(parties)?;
    if (me == roles.querier) != keys.is_some() {
        return Err(InputError::Role("the querier, and only it, provides the keys").into());
    }
    if (me == roles.owner) != data.is_some() {
        return Err(InputError::Role("the data owner, and only it, provides the array").into());
    }
    if let Some(k) = keys
        && k.len() as u64 > MAX_KEYS
    {
        return Err(InputError::TooLarge {
            what: "the number of keys",
            got: k.len() as u64,
            max: MAX_KEYS,
        }
        .into());
    }
    if let Some(d) = data {
        check_sorted(d)?;
    }
    Ok(())
}

fn open_output<H: Host>(
    m: &mut H,
    roles: &Roles,
    n: usize,
    index: H::Word,
    found: H::Bit,
) -> Result<Option<SearchOutput>, ProgramError> {
    let out = m.open_to(roles.receiver, &[index, H::value(found)])?;
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
fn run_on<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    key: Option<u64>,
) -> Result<PartyRun<SearchOutput>, ProgramError> {
    check_inputs(session.me(), &roles, data, key, H::PARTIES)?;
    agree_on_run(&mut session, "binary-search", H::BACKEND, &roles)?;
    let n = announce_size(
        &mut session,
        roles.owner,
        data.map(<[u64]>::len),
        MAX_N,
        "n",
    )?;
    let mut m = H::setup(session, seed)?;
    let p = plan(n);
    m.preprocess_bits(p.bits)?;
    let key = m.input_scalar(roles.querier, key)?;
    let tables = input_tables(&mut m, roles.owner, data, engine_levels(n))?;
    let array = m.alloc_input(roles.owner, data, n)?;
    m.boot(p.accesses)?;
    let (index, found) = search(&mut m, array, key, &tables)?;
    let output = open_output(&mut m, &roles, n, index, found)?;
    Ok(m.finish(output))
}

/// The owner's probe tables of the `t` first probes, input to the engine in one round: the
/// owner passes `Some(sorted entries)`, the others `None`.
pub(crate) fn input_tables<H: Host>(
    m: &mut H,
    owner: PartyId,
    data: Option<&[u64]>,
    t: usize,
) -> Result<Vec<Vec<H::Word>>, ProgramError> {
    let flat: Option<Vec<u64>> = data.map(|d| probe_tables(d, t).concat());
    let flat_tables = m.input_vector(owner, flat.as_deref(), (1 << t) - 1)?;
    Ok((0..t)
        .map(|j| flat_tables[(1 << j) - 1..(1 << (j + 1)) - 1].to_vec())
        .collect())
}

/// One party's run of the batched search ([`search_many`]) with the backend `D`: the owner
/// passes `Some(sorted entries)`, the querier `Some(keys)`, everybody else `None`. The owner
/// announces n and the querier k (the number of keys is public, the keys are not); the array
/// is loaded into the DORAM once and the k keys are searched in lock step. The receiver gets
/// `Some(one output per key)`, in the order of the keys.
///
/// Costs: those of [`search_many`] with [`plan_many`]`(n, k, `[`AccessWork::of`]`::<D>())`,
/// plus one setup, one Init and the owner's tables once; rounds: those of one search plus one for announcing k.
///
/// # Errors
/// [`ProgramError::Input`] for a wrong role input, an unsorted array or more than
/// [`MAX_KEYS`] keys (before sending); [`ProgramError::BadSizes`] if the owner announces
/// n > [`MAX_N`] or the querier k > [`MAX_KEYS`]; transport, engine and DORAM errors.
pub fn run_many_with<D: Backend>(
    session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
) -> Result<PartyRun<Vec<SearchOutput>>, ProgramError> {
    run_many_on::<Machine<D>>(session, seed, roles, data, keys)
}

/// [`run_many_with`] on any machine `H` (the two-party [`Machine2`](crate::two::Machine2)
/// too).
///
/// # Errors
/// As [`run_many_with`].
pub fn run_many_on<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    keys: Option<&[u64]>,
) -> Result<PartyRun<Vec<SearchOutput>>, ProgramError> {
    let me = session.me();
    check_batch_inputs(me, &roles, data, keys, H::PARTIES)?;
    agree_on_run(&mut session, BATCH_NAME, H::BACKEND, &roles)?;
    let n = announce_size(
        &mut session,
        roles.owner,
        data.map(<[u64]>::len),
        MAX_N,
        "n",
    )?;
    let k = announce_size(
        &mut session,
        roles.querier,
        keys.map(<[u64]>::len),
        MAX_KEYS,
        "the number of keys",
    )?;
    let mut m = H::setup(session, seed)?;
    let work = H::access_work();
    let p = plan_many(n, k, work);
    m.preprocess_bits(p.bits)?;
    let keys = m.input_vector(roles.querier, keys, k)?;
    let tables = input_tables(&mut m, roles.owner, data, table_levels(n, k, work))?;
    let array = m.alloc_input(roles.owner, data, n)?;
    m.boot(p.accesses)?;
    let results = search_many(&mut m, array, &keys, &tables)?;
    let output = open_many_output(&mut m, roles.receiver, n, &results)?;
    Ok(m.finish(output))
}

/// Opens a batch's results (index, found) to `receiver`, who gets one output per key, each
/// checked to be in range for an array of `n` entries.
///
/// # Errors
/// [`ProgramError::BadOutput`] for an opened value out of range; the machine's errors.
pub(crate) fn open_many_output<H: Host>(
    m: &mut H,
    receiver: PartyId,
    n: usize,
    results: &[(H::Word, H::Bit)],
) -> Result<Option<Vec<SearchOutput>>, ProgramError> {
    let flat: Vec<H::Word> = results
        .iter()
        .flat_map(|&(index, found)| [index, H::value(found)])
        .collect();
    m.open_to(receiver, &flat)?
        .map(|v| {
            v.chunks(2)
                .map(|c| {
                    Ok(SearchOutput {
                        index: to_int(c[0], n as u128 + 1, "search index")?,
                        found: to_int(c[1], 2, "found bit")? == 1,
                    })
                })
                .collect::<Result<Vec<_>, ProgramError>>()
        })
        .transpose()
}

/// The name the parties agree on for the batched search ([`run_many_with`]).
pub const BATCH_NAME: &str = "binary-search-batch";

/// The batched search on three threads over an in-process mesh with backend `D`, each
/// party's seed from `entropy`: the owner gets `sorted`, the querier `keys`. Returns the three
/// runs (the receiver's has the outputs).
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local_many<D: Backend>(
    roles: Roles,
    sorted: &[u64],
    keys: &[u64],
    entropy: Entropy,
) -> Result<[PartyRun<Vec<SearchOutput>>; 3], ProgramError> {
    all_ok(run_three(entropy, |session, seed| {
        let me = session.me();
        let d = (me == roles.owner).then_some(sorted);
        let q = (me == roles.querier).then_some(keys);
        run_many_with::<D>(session, seed, roles, d, q)
    }))
}

/// The linear-scan search ([`linear_search`]) as one party's run: the owner's entries and the
/// querier's key are input to the engine (one round each), no DORAM.
///
/// # Errors
/// As [`Program::run_with`].
fn run_linear<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<&[u64]>,
    key: Option<u64>,
) -> Result<PartyRun<SearchOutput>, ProgramError> {
    check_inputs(session.me(), &roles, data, key, H::PARTIES)?;
    agree_on_run(&mut session, "linear-search", "engine", &roles)?;
    let n = announce_size(
        &mut session,
        roles.owner,
        data.map(<[u64]>::len),
        MAX_N,
        "n",
    )?;
    // The engine only; the memory is never booted.
    let mut m = H::setup(session, seed)?;
    let key = m.input_scalar(roles.querier, key)?;
    let entries = m.input_vector(roles.owner, data, n)?;
    let (index, found) = linear_search(&mut m, &entries, key)?;
    let output = open_output(&mut m, &roles, n, index, found)?;
    Ok(m.finish(output))
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

    fn run_on<H: Host>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<&[u64]>,
        key: Option<u64>,
    ) -> Result<PartyRun<SearchOutput>, ProgramError> {
        run_on::<H>(session, seed, roles, data, key)
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

    fn run_on<H: Host>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<&[u64]>,
        key: Option<u64>,
    ) -> Result<PartyRun<SearchOutput>, ProgramError> {
        run_linear::<H>(session, seed, roles, data, key)
    }
}
