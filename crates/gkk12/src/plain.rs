//! The recursive tree ORAM in plaintext: the reference the two-party protocol is checked
//! against, and the simulator of the paper's overflow experiment (GKK12 Figure 4).
//!
//! It runs exactly the steps of one access of GKK12 §4.1 (spec §6.2) without any
//! cryptography: look up the base map, then for each tree from the last to the data tree
//! fetch the path to the item's leaf, take the item out, read (tree i ≥ 1: the leaf of the
//! next tree's item, replaced by a fresh one; tree 0: the payload, replaced on a write), give
//! it a fresh leaf, put it into the root's first empty slot and evict. A full root loses the
//! item: [`PlainTreeOram::access`] then fails with [`Overflow`], and the ORAM must not be used
//! again (the two-party protocol reveals the same event and stops).

use rand_core::RngCore;
use thiserror::Error;

use crate::params::{Params, RADIX};
use crate::tree::{EvictStats, PlainTree, Slot, uniform_below};

/// The root of a tree had no empty slot for the item just accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("bucket overflow: the root of tree {tree} is full")]
pub struct Overflow {
    /// The tree (0 = data).
    pub tree: usize,
}

/// Why an access to a [`PlainTreeOram`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum AccessError {
    /// A root overflowed during this access: an item is lost.
    #[error(transparent)]
    Overflow(#[from] Overflow),
    /// An earlier access overflowed; the ORAM refuses further accesses.
    #[error("an earlier access overflowed a bucket; the ORAM has lost an item")]
    Poisoned,
    /// The address is not below the item count.
    #[error("address {addr} is out of range (the ORAM holds {items} items)")]
    Address {
        /// The address asked for.
        addr: u64,
        /// Items in the ORAM.
        items: u64,
    },
    /// A written payload has the wrong number of words or bits beyond the payload width.
    #[error("a payload must be {words} words of which only the low {bits} bits are set")]
    Payload {
        /// Words expected.
        words: usize,
        /// Payload bits.
        bits: usize,
    },
}

/// Whether `words` is a well-formed payload of `bits` bits.
pub fn payload_fits(words: &[u64], bits: usize) -> bool {
    words.len() == words_for(bits)
        && words.iter().enumerate().all(|(k, &w)| {
            let used = bits.saturating_sub(64 * k);
            used >= 64 || w >> used == 0
        })
}

/// One access to the ORAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// Read the item.
    Read,
    /// Replace the item's payload (words beyond the payload bits must be zero).
    Write(&'a [u64]),
}

/// The checks before an access, alike for every form of the ORAM: not poisoned, the address
/// in range, a written payload well formed.
///
/// # Errors
/// The [`AccessError`] that applies; nothing has changed then.
pub fn check_access(
    params: &Params,
    poisoned: bool,
    v: u64,
    op: Op<'_>,
) -> Result<(), AccessError> {
    if poisoned {
        return Err(AccessError::Poisoned);
    }
    let items = params.items();
    if v >= items {
        return Err(AccessError::Address { addr: v, items });
    }
    let bits = params.payload_bits();
    if let Op::Write(new) = op
        && !payload_fits(new, bits)
    {
        let words = words_for(bits);
        return Err(AccessError::Payload { words, bits });
    }
    Ok(())
}

/// Payload words of a `bits`-bit payload.
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// The recursive tree ORAM, in plaintext.
#[derive(Clone, Debug)]
pub struct PlainTreeOram {
    params: Params,
    trees: Vec<PlainTree>,
    base: Vec<u64>,
    poisoned: bool,
}

impl PlainTreeOram {
    /// An ORAM holding `data(v)` at every address v (payload words of
    /// [`words_for`]`(params.payload_bits())`), every item of every tree on a uniformly random
    /// leaf and placed as low as possible on its path.
    ///
    /// # Errors
    /// [`Overflow`] if some path fills up entirely during the load (never seen in practice:
    /// leaf buckets receive about one item each).
    pub fn load<R: RngCore + ?Sized>(
        params: Params,
        mut data: impl FnMut(u64) -> Vec<u64>,
        rng: &mut R,
    ) -> Result<PlainTreeOram, Overflow> {
        let mut trees = Vec::with_capacity(params.trees());
        // Leaves of the previous tree's items, to store in this tree's payloads.
        let mut below: Vec<u64> = Vec::new();
        for i in 0..params.trees() {
            let geom = params.tree(i);
            let words = if i == 0 {
                words_for(params.payload_bits())
            } else {
                RADIX
            };
            let mut tree = PlainTree::new(geom, words);
            let mut leaves = Vec::with_capacity(geom.items as usize);
            for addr in 0..geom.items {
                let leaf = uniform_below(rng, geom.leaves());
                let payload = if i == 0 {
                    data(addr)
                } else {
                    (0..RADIX as u64)
                        .map(|j| below.get((addr * RADIX as u64 + j) as usize).copied())
                        .map(|l| l.unwrap_or(0))
                        .collect()
                };
                let slot = Slot {
                    valid: true,
                    addr,
                    leaf,
                };
                if !tree.place(slot, &payload) {
                    return Err(Overflow { tree: i });
                }
                leaves.push(leaf);
            }
            trees.push(tree);
            below = leaves;
        }
        Ok(PlainTreeOram {
            params,
            trees,
            base: below,
            poisoned: false,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Tree `i` (0 = data).
    pub fn tree(&self, i: usize) -> &PlainTree {
        &self.trees[i]
    }

    /// The base map: the leaf of every item of the last tree.
    pub fn base(&self) -> &[u64] {
        &self.base
    }

    /// Eviction statistics of every tree.
    pub fn stats(&self) -> Vec<EvictStats> {
        self.trees.iter().map(PlainTree::stats).collect()
    }

    /// One access to address `v < items`: returns the payload held before the access.
    ///
    /// # Errors
    /// [`AccessError`]: a bad address or payload (nothing changes), or an overflow (the ORAM
    /// has then lost an item and refuses every later access).
    pub fn access<R: RngCore + ?Sized>(
        &mut self,
        v: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, AccessError> {
        check_access(&self.params, self.poisoned, v, op)?;
        let out = self.access_checked(v, op, rng);
        self.poisoned = out.is_err();
        Ok(out?)
    }

    fn access_checked<R: RngCore + ?Sized>(
        &mut self,
        v: u64,
        op: Op<'_>,
        rng: &mut R,
    ) -> Result<Vec<u64>, Overflow> {
        let last = self.params.trees() - 1;
        // [GKK12 §4.1, step 4]: the base map gives the last tree's leaf; it gets a fresh one.
        let base_addr = self.params.address_in(v, last) as usize;
        let fresh = uniform_below(rng, self.params.tree(last).leaves());
        let mut leaf = std::mem::replace(&mut self.base[base_addr], fresh);
        let mut fresh = fresh;
        for i in (1..=last).rev() {
            // [GKK12 §4.1, step 5a, 5b]: fetch the path, take the item out, read the leaf of
            // the next tree's item; [step 5c]: replace it by a fresh one.
            let (slot, mut payload) = self.take(i, leaf, v);
            let below = uniform_below(rng, self.params.tree(i - 1).leaves());
            leaf = std::mem::replace(&mut payload[self.params.entry_in(v, i)], below);
            // [step 5d]: tag the item with its fresh leaf, insert it into the root; evict.
            self.reinsert(i, slot, fresh, &payload, rng)?;
            fresh = below;
        }
        // [step 6]: the data tree; the payload is read, and replaced on a write.
        let (slot, payload) = self.take(0, leaf, v);
        let new = match op {
            Op::Read => &payload,
            Op::Write(new) => new,
        };
        self.reinsert(0, slot, fresh, new, rng)?;
        Ok(payload)
    }

    fn take(&mut self, i: usize, leaf: u64, v: u64) -> (Slot, Vec<u64>) {
        let addr = self.params.address_in(v, i);
        self.trees[i]
            .take(leaf, addr)
            .expect("every item is on the path to its leaf")
    }

    fn reinsert<R: RngCore + ?Sized>(
        &mut self,
        i: usize,
        slot: Slot,
        leaf: u64,
        payload: &[u64],
        rng: &mut R,
    ) -> Result<(), Overflow> {
        let tree = &mut self.trees[i];
        if !tree.insert(0, Slot { leaf, ..slot }, payload) {
            return Err(Overflow { tree: i });
        }
        tree.evict(rng);
        Ok(())
    }
}

/// The outcome of [`overflow_experiment`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverflowReport {
    /// Trials run.
    pub trials: u64,
    /// Trials in which some eviction found its child full (the paper's overflow event).
    pub trials_with_stuck: u64,
    /// Trials in which a root was full when an item was put back (an item would be lost).
    pub trials_with_loss: u64,
    /// The largest bucket load seen.
    pub max_load: usize,
}

/// GKK12 Figure 4's experiment on one tree of `items` items with buckets of `bucket` slots:
/// per trial, load every item, then run `accesses` accesses to uniformly random addresses,
/// counting the trials in which an eviction got stuck or a root overflowed.
pub fn overflow_experiment<R: RngCore + ?Sized>(
    items: u64,
    bucket: usize,
    accesses: u64,
    trials: u64,
    rng: &mut R,
) -> Result<OverflowReport, crate::params::ParamsError> {
    let params = Params::new(items, 1, bucket, 1)?;
    let geom = params.tree(0);
    let mut report = OverflowReport {
        trials,
        ..OverflowReport::default()
    };
    let mut leaves = vec![0u64; items as usize];
    for _ in 0..trials {
        let mut tree = PlainTree::new(geom, 0);
        let mut lost = false;
        for (addr, leaf) in leaves.iter_mut().enumerate() {
            *leaf = uniform_below(rng, geom.leaves());
            let slot = Slot {
                valid: true,
                addr: addr as u64,
                leaf: *leaf,
            };
            lost |= !tree.place(slot, &[]);
        }
        for _ in 0..accesses {
            let addr = uniform_below(rng, items);
            let leaf = &mut leaves[addr as usize];
            let Some((slot, _)) = tree.take(*leaf, addr) else {
                lost = true;
                break;
            };
            *leaf = uniform_below(rng, geom.leaves());
            if !tree.insert(
                0,
                Slot {
                    leaf: *leaf,
                    ..slot
                },
                &[],
            ) {
                lost = true;
                break;
            }
            tree.evict(rng);
        }
        let stats = tree.stats();
        report.trials_with_stuck += u64::from(stats.stuck > 0);
        report.trials_with_loss += u64::from(lost);
        report.max_load = report.max_load.max(stats.max_load);
    }
    Ok(report)
}
