//! One binary tree of buckets, in plaintext: the storage layout, paths, first-empty-slot
//! insertion and the eviction schedule of Shi et al.'s tree ORAM as GKK12 §4 uses it.
//!
//! Buckets are numbered in heap order: the root is 0 and bucket `k`'s children are `2k + 1`
//! and `2k + 2`, so the bucket at depth ℓ on the path to leaf L is `2^ℓ − 1 + (L >> (h − ℓ))`.
//! Slot `s` of bucket `k` is slot `k·B + s` of the tree.
//!
//! **Eviction schedule** (public, independent of the data; the paper's "two nodes are chosen at
//! random from each level", with the choice it leaves open made here, [spec P6]): at depth 0
//! the root, twice; at every depth 1 ≤ ℓ < h two distinct buckets chosen uniformly (at depth 1
//! that is both); leaves are never evicted from. Buckets are handled in that order, top down,
//! so a bucket written at depth ℓ may be evicted from at depth ℓ + 1. Evicting from a bucket
//! takes its first valid slot, if any, and moves it into the first empty slot of the child on
//! the path to its leaf; both children are rewritten (one of them unchanged). If that child is
//! full the item stays where it is: nothing is lost, and the event is counted
//! ([`EvictStats::stuck`]); it is what the paper's overflow experiment (Figure 4) counts as an
//! overflow.

use rand_core::RngCore;

use crate::params::TreeGeometry;

/// A slot's metadata: whether it holds an item, its address in the tree and its leaf.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slot {
    /// The slot holds an item.
    pub valid: bool,
    /// The item's address in this tree.
    pub addr: u64,
    /// The leaf the item is assigned to: it lies on the path to this leaf.
    pub leaf: u64,
}

/// What evictions did, summed over a tree's lifetime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvictStats {
    /// Evictions from a bucket that held an item.
    pub moved: u64,
    /// Evictions whose item stayed because the child was full.
    pub stuck: u64,
    /// The most items seen in one bucket, after any insertion.
    pub max_load: usize,
}

/// A uniform value below `bound` (> 0), by rejection.
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    debug_assert!(bound > 0);
    if bound.is_power_of_two() {
        return rng.next_u64() & (bound - 1);
    }
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// Depth `level`'s bucket number `index` (from the left) in heap order.
pub fn bucket_at(level: u32, index: u64) -> usize {
    ((1u64 << level) - 1 + index) as usize
}

/// The buckets on the path from the root to `leaf` in a tree of height `height`, root first.
pub fn path(height: u32, leaf: u64) -> impl Iterator<Item = usize> {
    (0..=height).map(move |level| bucket_at(level, leaf >> (height - level)))
}

/// The buckets to evict from after one access, in order ([module docs](self)).
pub fn eviction_schedule<R: RngCore + ?Sized>(height: u32, rng: &mut R) -> Vec<(u32, usize)> {
    let mut out = Vec::with_capacity(2 * height as usize);
    for level in 0..height {
        let width = 1u64 << level;
        let (a, b) = if width == 1 {
            (0, 0)
        } else {
            let a = uniform_below(rng, width);
            let mut b = uniform_below(rng, width - 1);
            if b >= a {
                b += 1;
            }
            (a, b)
        };
        out.push((level, bucket_at(level, a)));
        out.push((level, bucket_at(level, b)));
    }
    out
}

/// A tree's slots in plaintext, with `words` payload words per slot.
#[derive(Clone, Debug)]
pub struct PlainTree {
    geom: TreeGeometry,
    meta: Vec<Slot>,
    payload: Vec<u64>,
    words: usize,
    stats: EvictStats,
}

impl PlainTree {
    /// An empty tree; `words` payload words per slot (0 for metadata only).
    pub fn new(geom: TreeGeometry, words: usize) -> PlainTree {
        let slots = geom.slots();
        PlainTree {
            geom,
            meta: vec![Slot::default(); slots],
            payload: vec![0; slots * words],
            words,
            stats: EvictStats::default(),
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> &TreeGeometry {
        &self.geom
    }

    /// Eviction statistics so far.
    pub fn stats(&self) -> EvictStats {
        self.stats
    }

    /// The metadata of every slot, bucket by bucket.
    pub fn slots(&self) -> &[Slot] {
        &self.meta
    }

    /// Slot `slot`'s payload words.
    pub fn payload(&self, slot: usize) -> &[u64] {
        &self.payload[slot * self.words..(slot + 1) * self.words]
    }

    fn payload_mut(&mut self, slot: usize) -> &mut [u64] {
        &mut self.payload[slot * self.words..(slot + 1) * self.words]
    }

    fn bucket_slots(&self, bucket: usize) -> std::ops::Range<usize> {
        bucket * self.geom.bucket..(bucket + 1) * self.geom.bucket
    }

    fn load(&self, bucket: usize) -> usize {
        self.meta[self.bucket_slots(bucket)]
            .iter()
            .filter(|s| s.valid)
            .count()
    }

    /// Puts an item into the first empty slot of `bucket`; `false` (and nothing written) if the
    /// bucket is full.
    pub fn insert(&mut self, bucket: usize, slot: Slot, payload: &[u64]) -> bool {
        let range = self.bucket_slots(bucket);
        let Some(free) = range.clone().find(|&s| !self.meta[s].valid) else {
            return false;
        };
        self.meta[free] = Slot {
            valid: true,
            ..slot
        };
        self.payload_mut(free).copy_from_slice(payload);
        self.stats.max_load = self.stats.max_load.max(self.load(bucket));
        true
    }

    /// Places an item as low as possible on the path to its leaf (the initial load): the leaf
    /// bucket, or the first bucket above it with room. `false` if the whole path is full.
    pub fn place(&mut self, slot: Slot, payload: &[u64]) -> bool {
        let buckets: Vec<usize> = path(self.geom.height, slot.leaf).collect();
        buckets
            .into_iter()
            .rev()
            .any(|bucket| self.insert(bucket, slot, payload))
    }

    /// Finds the item with address `addr` on the path to `leaf`, empties its slot and returns
    /// it with its payload.
    pub fn take(&mut self, leaf: u64, addr: u64) -> Option<(Slot, Vec<u64>)> {
        let found = path(self.geom.height, leaf)
            .flat_map(|bucket| self.bucket_slots(bucket))
            .find(|&s| self.meta[s].valid && self.meta[s].addr == addr)?;
        let slot = self.meta[found];
        self.meta[found].valid = false;
        Some((slot, self.payload(found).to_vec()))
    }

    /// Evicts from `bucket` at depth `level` ([module docs](self)).
    pub fn evict_from(&mut self, level: u32, bucket: usize) {
        let Some(from) = self.bucket_slots(bucket).find(|&s| self.meta[s].valid) else {
            return;
        };
        let slot = self.meta[from];
        let dir = (slot.leaf >> (self.geom.height - level - 1)) & 1;
        let child = 2 * bucket + 1 + dir as usize;
        let payload = self.payload(from).to_vec();
        if self.insert(child, slot, &payload) {
            self.meta[from].valid = false;
            self.stats.moved += 1;
        } else {
            self.stats.stuck += 1;
        }
    }

    /// One access's evictions, with buckets drawn from `rng`.
    pub fn evict<R: RngCore + ?Sized>(&mut self, rng: &mut R) {
        for (level, bucket) in eviction_schedule(self.geom.height, rng) {
            self.evict_from(level, bucket);
        }
    }
}
