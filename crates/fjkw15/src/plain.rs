//! The client-server binary-tree ORAM of FJKW15 §2 in plaintext (notes §3): the reference the
//! three-party protocol is checked against, and the simulator of the overflow experiment.
//!
//! The forest is OT_0 (one tuple: the 2^τ labels L_1) and the trees OT_1..OT_h
//! ([`PlainTree`]). An access to address N (FJKW15 §2, "Access Procedure") reads L_1 from
//! OT_0 and, for i = 1..h, finds on the path to L_i the unique tuple (1, N_i, L_i, A_i), reads
//! L_{i+1} = A_i[N^(i+1)] (or the record, for i = h), erases the tuple (fb := 0), gives it the
//! fresh label (L_i)′ and A_i[N^(i+1)] := (L_{i+1})′, puts it into the root and evicts on the
//! path just read.
//!
//! **Constrained eviction** (FJKW15 §2, "Constrained Eviction Strategy", as the three-party
//! protocol computes it, Alg. 5 and notes §5.5–5.6): on the path to leaf L, each internal
//! bucket's tuples are first shuffled by a random permutation π_j (the four leaf buckets by one
//! permutation of their 4w tuples); then, with two random offsets λ_0, λ_1 per bucket,
//! * in the internal bucket at depth j, pick 1 is the first *moveable* tuple (fb = 1 and label
//!   bit d_i − 1 − j equal to L's) cyclically at or after λ_0, pick 2 the first moveable one
//!   other than pick 1 at or after λ_1, each falling back to the first empty tuple (not
//!   already picked) after its offset when there is no moveable one (F2FT);
//! * in the leaf node, the two picks are empty tuples by the same rule (F2ET);
//! * every bucket's two picks move one level down into the two slots picked in the bucket
//!   below, the root's two slots receive the looked-up tuple (T_i)′ and an empty dummy, and the
//!   two empty tuples picked in the leaf are overwritten.
//!
//! An internal bucket with fewer than two moveable-or-empty tuples, or a leaf node with fewer
//! than two empty ones, is an **overflow** (FJKW15 §2, "Eviction fails in case of a bucket
//! overflow"). There is no stash: the access fails with [`Overflow`], the looked-up tuple is
//! lost (nothing else moves), and the ORAM refuses later accesses ([`AccessError::Poisoned`]), as the three-party protocol
//! must (notes Q8).

use rand_core::RngCore;
use thiserror::Error;

use crate::params::{LEAF_BUCKETS, Params};
use crate::sample::{permutation, uniform_below};

/// Which kind of node had no room for an eviction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverflowAt {
    /// The internal bucket at this depth had fewer than two moveable-or-empty tuples.
    Internal(u32),
    /// The leaf node had fewer than two empty tuples.
    Leaf,
}

/// An eviction found a bucket overflowing (FJKW15 §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("bucket overflow in tree {tree}: {at:?}")]
pub struct Overflow {
    /// The tree (1..=h).
    pub tree: usize,
    /// Where.
    pub at: OverflowAt,
}

/// Why an access to a [`PlainForest`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AccessError {
    /// An eviction overflowed: the access did not complete.
    #[error(transparent)]
    Overflow(#[from] Overflow),
    /// An earlier access overflowed; the ORAM refuses further accesses.
    #[error("an earlier access overflowed a bucket; the ORAM refuses further accesses")]
    Poisoned,
    /// The address is not below the number of records.
    #[error("address {addr} is out of range (the ORAM holds {items} records)")]
    Address {
        /// The address asked for.
        addr: u64,
        /// Records in the ORAM.
        items: u64,
    },
    /// A written record has the wrong number of words or bits beyond d.
    #[error("a record must be {words} words of which only the low {bits} bits are set")]
    Record {
        /// Words expected.
        words: usize,
        /// Record bits d.
        bits: usize,
    },
}

/// One access to the ORAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// Read the record.
    Read,
    /// Replace the record (words beyond d bits must be zero).
    Write(&'a [u64]),
}

/// Words of a `bits`-bit record.
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// Whether `words` is a well-formed record of `bits` bits.
pub fn record_fits(words: &[u64], bits: usize) -> bool {
    words.len() == words_for(bits)
        && words.iter().enumerate().all(|(k, &w)| {
            let used = bits.saturating_sub(64 * k);
            used >= 64 || w >> used == 0
        })
}

/// A tuple (fb, N, L, A) outside the tree: A is 2^τ labels or the record's words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuple {
    /// The full bit.
    pub fb: bool,
    /// The address prefix N_i.
    pub n: u64,
    /// The leaf label L_i.
    pub label: u64,
    /// The A field.
    pub a: Vec<u64>,
}

/// What evictions of one tree did, summed over its lifetime.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvictStats {
    /// Evictions run.
    pub evictions: u64,
    /// Real tuples moved one level down (into a lower internal bucket or the leaf).
    pub moved: u64,
    /// `internal_loads[s]`: internal buckets on an eviction path that held s tuples after it.
    pub internal_loads: Vec<u64>,
    /// `leaf_loads[s]`: leaf nodes on an eviction path that held s tuples after it.
    pub leaf_loads: Vec<u64>,
}

/// One tree OT_i, i ≥ 1, in plaintext: 2^d − 1 internal buckets of w tuples in heap order
/// (the root is bucket 0, bucket b's children are 2b + 1 and 2b + 2), then 2^d leaf nodes of
/// 4w tuples. Tuples are stored field by field; `words` words of A per tuple.
#[derive(Clone, Debug)]
pub struct PlainTree {
    d: u32,
    w: usize,
    words: usize,
    fb: Vec<bool>,
    n: Vec<u64>,
    label: Vec<u64>,
    a: Vec<u64>,
    stats: EvictStats,
}

/// The offsets λ_0, λ_1 of one bucket (the paper's rule).
type Offsets = [usize; 2];

/// The offsets λ_0, λ_1, λ_2 (λ_2 ≠ λ_1) of one bucket ([`f2ft_uniform`]).
type UniformOffsets = [usize; 3];

impl PlainTree {
    /// An empty tree of height `d` with buckets of `w` tuples and `words` words of A per
    /// tuple (0 keeps metadata only, for the overflow experiment).
    pub fn new(d: u32, w: usize, words: usize) -> PlainTree {
        let slots = tree_slots(d, w);
        PlainTree {
            d,
            w,
            words,
            fb: vec![false; slots],
            n: vec![0; slots],
            label: vec![0; slots],
            a: vec![0; slots * words],
            stats: EvictStats {
                internal_loads: vec![0; w + 1],
                leaf_loads: vec![0; LEAF_BUCKETS * w + 1],
                ..EvictStats::default()
            },
        }
    }

    /// Height d.
    pub fn depth(&self) -> u32 {
        self.d
    }

    /// Slots in the tree.
    pub fn slots(&self) -> usize {
        self.fb.len()
    }

    /// Eviction statistics so far.
    pub fn stats(&self) -> &EvictStats {
        &self.stats
    }

    /// The slots of the internal bucket at depth `j < d` on the path to `leaf`.
    fn bucket(&self, j: u32, leaf: u64) -> std::ops::Range<usize> {
        bucket_slots(self.d, self.w, j, leaf)
    }

    /// The 4w slots of leaf node `leaf`.
    fn leaf_node(&self, leaf: u64) -> std::ops::Range<usize> {
        leaf_slots(self.d, self.w, leaf)
    }

    /// The (d + 4)·w slots of the path to `leaf`, root first ([`path_slots`]).
    pub fn path(&self, leaf: u64) -> Vec<usize> {
        path_slots(self.d, self.w, leaf)
    }

    /// Slot `s` as a tuple.
    pub fn tuple(&self, s: usize) -> Tuple {
        Tuple {
            fb: self.fb[s],
            n: self.n[s],
            label: self.label[s],
            a: self.a[s * self.words..(s + 1) * self.words].to_vec(),
        }
    }

    fn put(&mut self, s: usize, t: &Tuple) {
        self.fb[s] = t.fb;
        self.n[s] = t.n;
        self.label[s] = t.label;
        self.a[s * self.words..(s + 1) * self.words].copy_from_slice(&t.a);
    }

    /// The slot on the path to `leaf` holding the full tuple with prefix `n`, if any.
    pub fn find(&self, leaf: u64, n: u64) -> Option<usize> {
        self.path(leaf)
            .into_iter()
            .find(|&s| self.fb[s] && self.n[s] == n)
    }

    /// Places a full tuple for the initial load: into the first empty slot of its leaf node,
    /// else of the lowest internal bucket on its path with room. `false` if the path is full.
    pub fn place(&mut self, t: &Tuple) -> bool {
        let mut ranges = vec![self.leaf_node(t.label)];
        ranges.extend((0..self.d).rev().map(|j| self.bucket(j, t.label)));
        let free = ranges.into_iter().flatten().find(|&s| !self.fb[s]);
        if let Some(s) = free {
            self.put(s, t);
        }
        free.is_some()
    }

    /// Erases slot `s` (fb := 0; the other fields are cleared too) and returns its tuple.
    pub fn take(&mut self, s: usize) -> Tuple {
        let t = self.tuple(s);
        self.put(s, &Tuple::default_with(self.words));
        t
    }

    /// Whether the tuple in `s` is moveable out of the internal bucket at depth `j` towards
    /// `leaf`: full, and its label's bit d − 1 − j equals `leaf`'s.
    fn moveable(&self, s: usize, j: u32, leaf: u64) -> bool {
        let bit = self.d - 1 - j;
        self.fb[s] && (self.label[s] >> bit) & 1 == (leaf >> bit) & 1
    }

    /// Shuffles the tuples of `slots` by a random permutation (FJKW15 Alg. 5, step 1: π_j).
    fn shuffle<R: RngCore + ?Sized>(&mut self, slots: &[usize], rng: &mut R) {
        let before: Vec<Tuple> = slots.iter().map(|&s| self.tuple(s)).collect();
        for (k, p) in permutation(slots.len(), rng).into_iter().enumerate() {
            self.put(slots[k], &before[p]);
        }
    }

    /// Constrained eviction on the path to `leaf` with `new` going into the root ([module
    /// docs](self)). On overflow nothing has moved, though the buckets have been shuffled.
    ///
    /// # Errors
    /// [`OverflowAt`] for the first bucket from the root without room.
    pub fn evict<R: RngCore + ?Sized>(
        &mut self,
        leaf: u64,
        new: &Tuple,
        rng: &mut R,
    ) -> Result<(), OverflowAt> {
        let picks = self.pick_all(leaf, rng)?;
        // Bottom up, so that every source is read before it is overwritten: the leaf's picks
        // take bucket d − 1's, …, bucket 1's take the root's, the root's take (T_i)′ and the
        // dummy. With d = 0 the leaf node is the root.
        for level in (1..picks.len()).rev() {
            for (from, to) in picks[level - 1].into_iter().zip(picks[level]) {
                let moving = self.tuple(from);
                self.stats.moved += u64::from(moving.fb);
                self.put(to, &moving);
            }
        }
        self.put(picks[0][0], new);
        self.put(picks[0][1], &Tuple::default_with(self.words));
        self.record_loads(leaf);
        Ok(())
    }

    /// Shuffles every bucket of the path and picks two slots in each, root first, leaf last.
    fn pick_all<R: RngCore + ?Sized>(
        &mut self,
        leaf: u64,
        rng: &mut R,
    ) -> Result<Vec<[usize; 2]>, OverflowAt> {
        let mut picks = Vec::with_capacity(self.d as usize + 1);
        for j in 0..self.d {
            let slots: Vec<usize> = self.bucket(j, leaf).collect();
            self.shuffle(&slots, rng);
            let lambda = uniform_offsets(slots.len(), rng);
            let moveable: Vec<bool> = slots.iter().map(|&s| self.moveable(s, j, leaf)).collect();
            let empty: Vec<bool> = slots.iter().map(|&s| !self.fb[s]).collect();
            let pick = f2ft_uniform(&moveable, &empty, lambda).ok_or(OverflowAt::Internal(j))?;
            picks.push(pick.map(|k| slots[k]));
        }
        let slots: Vec<usize> = self.leaf_node(leaf).collect();
        self.shuffle(&slots, rng);
        let lambda = uniform_offsets(slots.len(), rng);
        let empty: Vec<bool> = slots.iter().map(|&s| !self.fb[s]).collect();
        let pick = f2et_uniform(&empty, lambda).ok_or(OverflowAt::Leaf)?;
        picks.push(pick.map(|k| slots[k]));
        Ok(picks)
    }

    fn record_loads(&mut self, leaf: u64) {
        self.stats.evictions += 1;
        for j in 0..self.d {
            let load = self.bucket(j, leaf).filter(|&s| self.fb[s]).count();
            self.stats.internal_loads[load] += 1;
        }
        let load = self.leaf_node(leaf).filter(|&s| self.fb[s]).count();
        self.stats.leaf_loads[load] += 1;
    }
}

/// The slots of the internal bucket at depth `j < d` on the path to `leaf`, in a tree of
/// height `d` with buckets of `w` slots laid out as [`PlainTree`] does (heap order, then the
/// leaf nodes).
fn bucket_slots(d: u32, w: usize, j: u32, leaf: u64) -> std::ops::Range<usize> {
    let b = (1usize << j) - 1 + (leaf >> (d - j)) as usize;
    b * w..(b + 1) * w
}

/// The 4w slots of leaf node `leaf` in that layout.
fn leaf_slots(d: u32, w: usize, leaf: u64) -> std::ops::Range<usize> {
    let start = ((1usize << d) - 1) * w + leaf as usize * LEAF_BUCKETS * w;
    start..start + LEAF_BUCKETS * w
}

/// The (d + 4)·w slots of the path to `leaf` in a tree of height `d` and buckets of `w`
/// slots, root first: the d internal buckets, then the leaf node's four buckets. The order of
/// a path everywhere (plaintext trees, shares, messages).
pub fn path_slots(d: u32, w: usize, leaf: u64) -> Vec<usize> {
    let mut out: Vec<usize> = (0..d).flat_map(|j| bucket_slots(d, w, j, leaf)).collect();
    out.extend(leaf_slots(d, w, leaf));
    out
}

/// Slots of a tree of height `d` with buckets of `w` slots: (2^d − 1)·w + 4w·2^d.
pub fn tree_slots(d: u32, w: usize) -> usize {
    ((1usize << d) - 1) * w + (LEAF_BUCKETS << d) * w
}

impl Tuple {
    /// The empty tuple (fb = 0, every field zero) with `words` words of A.
    pub fn default_with(words: usize) -> Tuple {
        Tuple {
            a: vec![0; words],
            ..Tuple::default()
        }
    }
}

/// λ_0, λ_1 uniform below `len` (≥ 2) and λ_2 uniform below `len` other than λ_1: the
/// offsets of [`f2ft_uniform`] and [`f2et_uniform`].
pub fn uniform_offsets<R: RngCore + ?Sized>(len: usize, rng: &mut R) -> UniformOffsets {
    let l0 = uniform_below(rng, len as u64) as usize;
    let l1 = uniform_below(rng, len as u64) as usize;
    let l2 = (l1 + 1 + uniform_below(rng, len as u64 - 1) as usize) % len;
    [l0, l1, l2]
}

/// The pick rule Eviction runs (notes §5.6, with its caveat resolved): pick 1 as in
/// [`f2ft`], from λ_0; pick 2 the first moveable slot other than pick 1 cyclically at or
/// after λ_1 — or after λ_2 (≠ λ_1) if λ_1 is pick 1's slot — else the first such empty one.
/// With λ_0, λ_1 uniform, λ_2 uniform other than λ_1 ([`uniform_offsets`]) and the bucket's
/// slots in a uniformly random order (π_j), the two picked positions are a uniformly random
/// pair of slots whatever the bucket holds: D, who sees them, learns nothing of how many
/// slots were moveable or empty. The paper's rule ([`f2ft`]) makes some pairs more likely
/// than others: adjacent ones when every slot is a candidate, and pick 2's start on pick 1
/// favours the slot after it. `None` (an overflow) as [`f2ft`].
pub fn f2ft_uniform(
    moveable: &[bool],
    empty: &[bool],
    lambda: UniformOffsets,
) -> Option<[usize; 2]> {
    pick_two_uniform(moveable, empty, lambda)
}

/// [`f2ft_uniform`] in the leaf node: two empty slots.
pub fn f2et_uniform(empty: &[bool], lambda: UniformOffsets) -> Option<[usize; 2]> {
    pick_two_uniform(&vec![false; empty.len()], empty, lambda)
}

fn pick_two_uniform(
    preferred: &[bool],
    fallback: &[bool],
    [l0, l1, l2]: UniformOffsets,
) -> Option<[usize; 2]> {
    let pick = |start, skip| {
        first_from(preferred, start, skip).or_else(|| first_from(fallback, start, skip))
    };
    let first = pick(l0, None)?;
    let start = if l1 == first { l2 } else { l1 };
    let second = pick(start, Some(first))?;
    Some([first, second])
}

/// The first slot cyclically at or after `start` that `want` marks, other than `skip`.
fn first_from(want: &[bool], start: usize, skip: Option<usize>) -> Option<usize> {
    (0..want.len())
        .map(|k| (start + k) % want.len())
        .find(|&s| want[s] && Some(s) != skip)
}

/// F2FT by the paper's rule (FJKW15 Alg. 5, step 2, notes §5.6) in one internal bucket, in
/// plaintext: pick 1 is the first moveable slot cyclically at or after λ_0, else the first
/// empty one; pick 2 likewise from λ_1, other than pick 1. `None` (an overflow) if the bucket
/// has fewer than two moveable-or-empty slots. The reference for
/// [`circuits::f2ft`](crate::circuits::f2ft); Eviction runs [`f2ft_uniform`], whose picks D
/// cannot tell apart.
pub fn f2ft(moveable: &[bool], empty: &[bool], lambda: [usize; 2]) -> Option<[usize; 2]> {
    pick_two(moveable, empty, lambda)
}

/// F2ET, the choice of FJKW15 Alg. 5, step 3 in the leaf node's 4w slots: two empty slots by
/// the rule of [`f2ft`] with no slot moveable. `None` (an overflow) if fewer than two are
/// empty.
pub fn f2et(empty: &[bool], lambda: [usize; 2]) -> Option<[usize; 2]> {
    pick_two(&vec![false; empty.len()], empty, lambda)
}

/// The F2FT/F2ET rule (notes §5.6): pick 1 is the first `preferred` slot at or after λ_0,
/// else the first `fallback` one; pick 2 likewise from λ_1, other than pick 1. `None` if there
/// are not two candidates: an overflow.
fn pick_two(preferred: &[bool], fallback: &[bool], lambda: Offsets) -> Option<[usize; 2]> {
    let pick = |start, skip| {
        first_from(preferred, start, skip).or_else(|| first_from(fallback, start, skip))
    };
    let first = pick(lambda[0], None)?;
    let second = pick(lambda[1], Some(first))?;
    Some([first, second])
}

/// The whole forest OT_0..OT_h in plaintext.
#[derive(Clone, Debug)]
pub struct PlainForest {
    params: Params,
    items: u64,
    root: Vec<u64>,
    trees: Vec<PlainTree>,
    poisoned: bool,
}

impl PlainForest {
    /// A forest holding `data(N)` (a record of [`words_for`]`(d)` words) at every address
    /// N < `items` ≤ 2^m; OT_i holds the ⌈items / 2^(m − iτ)⌉ prefixes N_i in use, each tuple
    /// on a uniformly random leaf and placed as low as possible on its path.
    ///
    /// # Errors
    /// [`Overflow`] if some path fills up during the load (leaves have room for four times
    /// the tuples they receive on average: not seen in practice).
    ///
    /// # Panics
    /// If `items` is 0 or above 2^m, or `data` returns a malformed record (a caller's bug).
    pub fn load<R: RngCore + ?Sized>(
        params: Params,
        items: u64,
        data: impl FnMut(u64) -> Vec<u64>,
        rng: &mut R,
    ) -> Result<PlainForest, Overflow> {
        PlainForest::load_with_labels(params, items, data, |i, _| {
            uniform_below(rng, params.leaves(i))
        })
    }

    /// As [`PlainForest::load`], with the leaf label of prefix N_i in OT_i given by
    /// `label(i, N_i)` (below 2^d_i), called tree by tree and prefix by prefix in increasing
    /// order. The shared initial load ([`crate::load`]) builds its public forest this way.
    ///
    /// # Errors
    /// [`Overflow`] if some path fills up.
    ///
    /// # Panics
    /// As [`PlainForest::load`], and if a label is out of range.
    pub fn load_with_labels(
        params: Params,
        items: u64,
        mut data: impl FnMut(u64) -> Vec<u64>,
        mut label: impl FnMut(usize, u64) -> u64,
    ) -> Result<PlainForest, Overflow> {
        assert!(items >= 1 && items <= 1 << params.m(), "1 ≤ items ≤ 2^m");
        let h = params.h();
        let in_use = |i: usize| (items - 1).checked_shr(params.m() - params.prefix_bits(i));
        let labels: Vec<Vec<u64>> = (0..=h)
            .map(|i| match i {
                0 => Vec::new(),
                _ => (0..=in_use(i).unwrap_or(0))
                    .map(|n| {
                        let l = label(i, n);
                        assert!(l < params.leaves(i), "a label of OT_{i} has d_i bits");
                        l
                    })
                    .collect(),
            })
            .collect();
        let fan = params.fanout() as u64;
        let a_of = |i: usize, n: u64| -> Vec<u64> {
            (0..fan)
                .map(|t| labels[i + 1].get((n * fan + t) as usize).copied())
                .map(|l| l.unwrap_or(0))
                .collect()
        };
        let root = a_of(0, 0);
        let mut trees = Vec::with_capacity(h);
        for (i, tree_labels) in labels.iter().enumerate().skip(1) {
            let words = if i < h {
                params.fanout()
            } else {
                words_for(params.record_bits())
            };
            let mut tree = PlainTree::new(params.depth(i), params.w(), words);
            for (n, &label) in tree_labels.iter().enumerate() {
                let n = n as u64;
                let a = if i < h { a_of(i, n) } else { data(n) };
                assert!(i < h || record_fits(&a, params.record_bits()), "record {n}");
                let t = Tuple {
                    fb: true,
                    n,
                    label,
                    a,
                };
                if !tree.place(&t) {
                    return Err(Overflow {
                        tree: i,
                        at: OverflowAt::Leaf,
                    });
                }
            }
            trees.push(tree);
        }
        Ok(PlainForest {
            params,
            items,
            root,
            trees,
            poisoned: false,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Records held (addresses 0..items).
    pub fn items(&self) -> u64 {
        self.items
    }

    /// OT_0's A field: the labels L_1 of the 2^τ prefixes N_1.
    pub fn root(&self) -> &[u64] {
        &self.root
    }

    /// Tree OT_i, 1 ≤ i ≤ h.
    ///
    /// # Panics
    /// If i is 0 or above h (a caller's bug).
    pub fn tree(&self, i: usize) -> &PlainTree {
        &self.trees[i - 1]
    }

    /// One access to address `addr`: returns the record held before the access and, for a
    /// write, replaces it.
    ///
    /// # Errors
    /// [`AccessError`]: a bad address or record (nothing changes), or an overflow (the ORAM
    /// then refuses every later access).
    pub fn access<R: RngCore + ?Sized>(
        &mut self,
        addr: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, AccessError> {
        if self.poisoned {
            return Err(AccessError::Poisoned);
        }
        if addr >= self.items {
            return Err(AccessError::Address {
                addr,
                items: self.items,
            });
        }
        let bits = self.params.record_bits();
        if let Op::Write(new) = op
            && !record_fits(new, bits)
        {
            return Err(AccessError::Record {
                words: words_for(bits),
                bits,
            });
        }
        let out = self.access_checked(addr, op, rng);
        self.poisoned = out.is_err();
        Ok(out?)
    }

    fn access_checked<R: RngCore + ?Sized>(
        &mut self,
        addr: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, Overflow> {
        let p = self.params;
        let h = p.h();
        // [FJKW15 §2, Access] L_1 = A_0[N^(1)]; [Remap] A_0[N^(1)] := (L_1)′.
        let mut fresh = uniform_below(rng, p.leaves(1));
        let mut label = std::mem::replace(&mut self.root[p.chunk(addr, 1)], fresh);
        for i in 1..h {
            // [FJKW15 §2, Access] L_{i+1} = A_i[N^(i+1)]; [Remap] A_i[N^(i+1)] := (L_{i+1})′.
            let next_fresh = uniform_below(rng, p.leaves(i + 1));
            let chunk = p.chunk(addr, i + 1);
            let mut next = 0;
            self.visit(i, addr, (label, fresh), rng, |a| {
                next = std::mem::replace(&mut a[chunk], next_fresh);
            })?;
            (label, fresh) = (next, next_fresh);
        }
        // [FJKW15 §2, Access] i = h: A_h is the record D[N]; a write replaces it.
        let mut record = Vec::new();
        self.visit(h, addr, (label, fresh), rng, |a| {
            record = a.clone();
            if let Op::Write(new) = op {
                a.copy_from_slice(new);
            }
        })?;
        Ok(record)
    }

    /// Tree i's part of an access: finds the tuple of `addr`'s prefix on the path to
    /// `labels.0`, erases it, lets `edit` read and change its A field, gives it the fresh
    /// label `labels.1` and evicts with it on that path.
    fn visit<R: RngCore + ?Sized>(
        &mut self,
        i: usize,
        addr: u64,
        (label, fresh): (u64, u64),
        rng: &mut R,
        edit: impl FnOnce(&mut Vec<u64>),
    ) -> Result<(), Overflow> {
        let n = self.params.prefix(addr, i);
        let tree = &mut self.trees[i - 1];
        // [FJKW15 §2, Access] the unique tuple (1, N_i, L_i, A_i) on the path to L_i.
        let slot = tree
            .find(label, n)
            .expect("the forest invariant: every prefix in use is on the path to its label");
        // [FJKW15 §2, Remap] erase it (fb := 0), edit A, relabel: (T_i)′.
        let mut t = tree.take(slot);
        edit(&mut t.a);
        t.label = fresh;
        // [FJKW15 §2, Constrained Eviction] (T_i)′ into the root, evict on the path to L_i.
        tree.evict(label, &t, rng)
            .map_err(|at| Overflow { tree: i, at })
    }
}

/// The outcome of [`overflow_experiment`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OverflowReport {
    /// Trials run.
    pub trials: u64,
    /// Accesses run, over all trials (a trial stops at its first overflow).
    pub accesses: u64,
    /// Trials that ended in an internal bucket's overflow.
    pub internal_overflows: u64,
    /// `internal_by_depth[j]`: of those, the trials whose bucket was at depth j.
    pub internal_by_depth: Vec<u64>,
    /// Trials that ended in a leaf node's overflow.
    pub leaf_overflows: u64,
    /// Load histograms summed over the trials (see [`EvictStats`]).
    pub stats: EvictStats,
}

/// The overflow experiment on one tree: a tree of height `d` with buckets of `w` tuples
/// holding `tuples` tuples; per trial, load them on random leaves, then run `accesses`
/// accesses to random tuples (each erased, relabelled, put back into the root and evicted on
/// its old path), stopping at the first overflow. Metadata only, no A fields.
pub fn overflow_experiment<R: RngCore + ?Sized>(
    d: u32,
    w: usize,
    tuples: u64,
    accesses: u64,
    trials: u64,
    rng: &mut R,
) -> OverflowReport {
    let mut report = OverflowReport {
        trials,
        stats: PlainTree::new(0, w, 0).stats().clone(),
        internal_by_depth: vec![0; d as usize],
        ..OverflowReport::default()
    };
    for _ in 0..trials {
        let (stats, run, failed) = overflow_trial(d, w, tuples, accesses, rng);
        report.accesses += run;
        match failed {
            Some(OverflowAt::Internal(j)) => {
                report.internal_overflows += 1;
                report.internal_by_depth[j as usize] += 1;
            }
            Some(OverflowAt::Leaf) => report.leaf_overflows += 1,
            None => {}
        }
        let sum = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        sum(&mut report.stats.internal_loads, &stats.internal_loads);
        sum(&mut report.stats.leaf_loads, &stats.leaf_loads);
        report.stats.evictions += stats.evictions;
        report.stats.moved += stats.moved;
    }
    report
}

/// One trial of [`overflow_experiment`]: the tree's statistics, the accesses run and the
/// overflow that ended it, if any.
fn overflow_trial<R: RngCore + ?Sized>(
    d: u32,
    w: usize,
    tuples: u64,
    accesses: u64,
    rng: &mut R,
) -> (EvictStats, u64, Option<OverflowAt>) {
    let mut tree = PlainTree::new(d, w, 0);
    let mut labels: Vec<u64> = (0..tuples).map(|_| uniform_below(rng, 1 << d)).collect();
    for (n, &label) in labels.iter().enumerate() {
        let t = Tuple {
            fb: true,
            n: n as u64,
            label,
            a: Vec::new(),
        };
        if !tree.place(&t) {
            return (tree.stats, 0, Some(OverflowAt::Leaf));
        }
    }
    for run in 0..accesses {
        let n = uniform_below(rng, tuples);
        let old = labels[n as usize];
        let slot = tree
            .find(old, n)
            .expect("every tuple is on the path to its label");
        let mut t = tree.take(slot);
        t.label = uniform_below(rng, 1 << d);
        labels[n as usize] = t.label;
        if let Err(at) = tree.evict(old, &t, rng) {
            return (tree.stats, run + 1, Some(at));
        }
    }
    (tree.stats, accesses, None)
}

/// Arrivals per visit in the Markov chain of FJKW15 §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrivals {
    /// The root: one tuple per access ("The Markov Chain for the root (level 0) always
    /// receives 1 entry").
    Root,
    /// Any other bucket, worst case: "with probability 1/2 the node receives 0 entries and with
    /// probability 1/2 the node receives 2 entries".
    ZeroOrTwo,
}

/// The Markov-chain approximation of FJKW15 §5 (notes §7) for one bucket of `w` tuples,
/// initially empty: the probability that it has overflowed within `visits` eviction visits.
///
/// Per visit, with s tuples: each is moveable with probability 1/2 (M ~ Bin(s, 1/2)); the
/// bucket overflows (the sink) if it has fewer than two moveable-or-empty tuples,
/// (w − s) + M < 2, as [`PlainTree::evict`] decides; otherwise min(2, M) tuples leave and the
/// arrivals come in.
pub fn markov_overflow(w: usize, visits: u64, arrivals: Arrivals) -> f64 {
    let binom = binomial_halves(w);
    let mut dist = vec![0.0f64; w + 1];
    dist[0] = 1.0;
    let mut sink = 0.0;
    for _ in 0..visits {
        let mut next = vec![0.0f64; w + 1];
        for (s, &p) in dist.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            for (m, &pm) in binom[s].iter().enumerate() {
                if w - s + m < 2 {
                    sink += p * pm;
                    continue;
                }
                let stay = s - m.min(2);
                match arrivals {
                    Arrivals::Root => next[stay + 1] += p * pm,
                    Arrivals::ZeroOrTwo => {
                        next[stay] += p * pm / 2.0;
                        next[stay + 2] += p * pm / 2.0;
                    }
                }
            }
        }
        dist = next;
    }
    sink
}

/// A refinement of [`markov_overflow`] (ours, not the paper's): every tuple's direction at the
/// bucket's level is fixed when it arrives (uniform and independent, as its fresh label is),
/// and each visit comes from a uniformly random side. The state is the pair (tuples going
/// left, tuples going right); a visit from one side can move only that side's tuples, so the
/// tuples left behind are exactly those that point away, which [`markov_overflow`]'s fresh
/// Bin(s, 1/2) per visit forgets. Overflow and moves are decided as in [`PlainTree::evict`].
pub fn markov_overflow_sided(w: usize, visits: u64, arrivals: Arrivals) -> f64 {
    let idx = |a: usize, b: usize| a * (w + 1) + b;
    let mut dist = vec![0.0f64; (w + 1) * (w + 1)];
    dist[0] = 1.0;
    let mut sink = 0.0;
    // (left, right, probability) of the tuples arriving in one visit.
    let incoming: &[(usize, usize, f64)] = match arrivals {
        Arrivals::Root => &[(1, 0, 0.5), (0, 1, 0.5)],
        Arrivals::ZeroOrTwo => &[(0, 0, 0.5), (2, 0, 0.125), (1, 1, 0.25), (0, 2, 0.125)],
    };
    for _ in 0..visits {
        let mut next = vec![0.0f64; dist.len()];
        for a in 0..=w {
            for b in 0..=w - a {
                let p = dist[idx(a, b)];
                if p == 0.0 {
                    continue;
                }
                // The visit comes from the left (moving left-going tuples) or the right.
                for (toward, away, left) in [(a, b, true), (b, a, false)] {
                    if w - a - b + toward < 2 {
                        sink += p / 2.0;
                        continue;
                    }
                    let rest = toward - toward.min(2);
                    let (l, r) = if left { (rest, away) } else { (away, rest) };
                    for &(dl, dr, q) in incoming {
                        next[idx(l + dl, r + dr)] += p / 2.0 * q;
                    }
                }
            }
        }
        dist = next;
    }
    sink
}

/// `b[s][m]` = P(Bin(s, 1/2) = m) for s ≤ w.
fn binomial_halves(w: usize) -> Vec<Vec<f64>> {
    let mut b = vec![vec![1.0]];
    for s in 1..=w {
        let prev = &b[s - 1];
        let row = (0..=s)
            .map(|m| {
                let left = if m > 0 { prev[m - 1] } else { 0.0 };
                let right = prev.get(m).copied().unwrap_or(0.0);
                (left + right) / 2.0
            })
            .collect();
        b.push(row);
    }
    b
}
