//! The geometry of the recursive binary-tree ORAM: how many trees, how tall, how wide a slot.
//!
//! Tree 0 holds the data (n items of d bits). Tree i ≥ 1 holds the leaf labels of tree i − 1,
//! [`RADIX`] = 16 to an item: item a of tree i is the leaves of items 16a … 16a + 15 of tree
//! i − 1 (GKK12 §4, "every item in tree i > 1 stores the leaf nodes of 16 items"; the paper
//! counts trees from 1, this crate from 0). The leaves of the last tree's items form the
//! *base map*, which is not a tree: it is scanned linearly ([spec P18]: best below 2^12
//! entries, [`Params::paper`] picks the tree count accordingly).
//!
//! A tree of n_i items has height h_i = ⌈log₂ n_i⌉, 2^h_i leaves and 2^(h_i+1) − 1 buckets of
//! B_i slots: the data tree's B is a parameter, and each position-map tree applies the paper's
//! rule "B = 2 log N" to its own size, B_i = max(2, min(B, 2h_i)) (a tree of 2^8 items gets 16
//! slots; measured on 5000 runs of 2^8 accesses, no eviction into a full bucket, largest load 13). A slot is `valid ‖ addr ‖ leaf ‖ payload`: 1 + 2·h_i + payload bits, the payload
//! being d bits in tree 0 and 16·h_(i−1) bits (16 leaf labels of the tree below) in tree i ≥ 1.
//! Addresses in tree i are `v >> 4i` and the entry inside an item of tree i ≥ 1 is bits
//! 4(i − 1) … 4i − 1 of v ([spec §7.3]: both are bit deletions, so each party derives its
//! share of them from its share of v without any secure computation).

use thiserror::Error;

/// log₂ of the recursion factor r = 16.
pub const LOG_RADIX: u32 = 4;

/// The recursion factor r: leaf labels per position-map item.
pub const RADIX: usize = 1 << LOG_RADIX;

/// The largest item count accepted: 2^32 (addresses and leaves then fit comfortably in a
/// `u64`, and no memory of that size fits a host anyway).
pub const MAX_ITEMS: u64 = 1 << 32;

/// The largest payload accepted, in bits (64 KiB items).
pub const MAX_PAYLOAD_BITS: usize = 1 << 19;

/// The base map is scanned linearly; [`Params::paper`] keeps it below this many entries.
pub const BASE_MAP_TARGET: u64 = 1 << 12;

/// A parameter set that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParamsError {
    /// The item count is 0 or above [`MAX_ITEMS`].
    #[error("the ORAM must hold between 1 and 2^32 items, not {0}")]
    Items(u64),
    /// The payload is 0 bits or above [`MAX_PAYLOAD_BITS`].
    #[error("items must have between 1 and {MAX_PAYLOAD_BITS} bits, not {0}")]
    Payload(usize),
    /// The bucket size is 0.
    #[error("buckets must hold at least one slot")]
    Bucket,
    /// No trees, or more than needed to bring the last one down to one item.
    #[error("{trees} trees for {items} items: between 1 and {max} are possible")]
    Trees {
        /// Trees asked for.
        trees: usize,
        /// Items in the ORAM.
        items: u64,
        /// The most trees that still shrink at every step.
        max: usize,
    },
}

/// The parameters of one ORAM: its size and the paper's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    items: u64,
    payload_bits: usize,
    bucket: usize,
    trees: usize,
}

/// One tree's geometry, derived from [`Params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TreeGeometry {
    /// Items the tree holds (addresses `0..items`).
    pub items: u64,
    /// Height h: the tree has 2^h leaves and h + 1 levels; also the bits of an address and of
    /// a leaf label.
    pub height: u32,
    /// Slots per bucket (B).
    pub bucket: usize,
    /// Payload bits of a slot.
    pub payload_bits: usize,
}

impl TreeGeometry {
    /// Leaves: 2^h.
    pub fn leaves(&self) -> u64 {
        1 << self.height
    }

    /// Buckets: 2^(h+1) − 1.
    pub fn buckets(&self) -> usize {
        (1usize << (self.height + 1)) - 1
    }

    /// Slots in the whole tree.
    pub fn slots(&self) -> usize {
        self.buckets() * self.bucket
    }

    /// Bits of one slot: valid, address, leaf and payload.
    pub fn slot_bits(&self) -> usize {
        1 + 2 * self.height as usize + self.payload_bits
    }

    /// Slots on one root-to-leaf path: (h + 1)·B.
    pub fn path_slots(&self) -> usize {
        (self.height as usize + 1) * self.bucket
    }
}

/// ⌈log₂ x⌉ for x ≥ 1.
fn ceil_log2(x: u64) -> u32 {
    if x <= 1 {
        0
    } else {
        64 - (x - 1).leading_zeros()
    }
}

/// ⌈x / 16^i⌉.
fn shrink(x: u64, i: usize) -> u64 {
    let shift = LOG_RADIX as usize * i;
    if shift >= 64 {
        return 1;
    }
    let q = x >> shift;
    if q << shift == x { q } else { q + 1 }
}

impl Params {
    /// `items` items of `payload_bits` bits, buckets of `bucket` slots, `trees` trees (the data
    /// tree and `trees − 1` position-map trees).
    ///
    /// # Errors
    /// [`ParamsError`] if a value is out of range, or if a tree would hold a single item while
    /// another is still added (deeper recursion must shrink the base map).
    pub fn new(
        items: u64,
        payload_bits: usize,
        bucket: usize,
        trees: usize,
    ) -> Result<Params, ParamsError> {
        if items == 0 || items > MAX_ITEMS {
            return Err(ParamsError::Items(items));
        }
        if payload_bits == 0 || payload_bits > MAX_PAYLOAD_BITS {
            return Err(ParamsError::Payload(payload_bits));
        }
        if bucket == 0 {
            return Err(ParamsError::Bucket);
        }
        let max = Params::max_trees(items);
        if trees == 0 || trees > max {
            return Err(ParamsError::Trees { trees, items, max });
        }
        Ok(Params {
            items,
            payload_bits,
            bucket,
            trees,
        })
    }

    /// The most trees for `items` items: trees are added while the previous one has more than
    /// one position-map item to point at (1 for a single item).
    pub fn max_trees(items: u64) -> usize {
        let mut trees = 1;
        while shrink(items, trees - 1) > 1 {
            trees += 1;
        }
        trees
    }

    /// The paper's choice for `items` items of `payload_bits` bits: B = 2⌈log₂ n⌉ (at least 2;
    /// GKK12 §4.2) and the fewest trees that leave fewer than [`BASE_MAP_TARGET`] entries in
    /// the base map (GKK12 Table 1: "the best performance occurs when the bottom level …
    /// holds fewer than 2^12 items").
    ///
    /// # Errors
    /// As [`Params::new`].
    pub fn paper(items: u64, payload_bits: usize) -> Result<Params, ParamsError> {
        if items == 0 || items > MAX_ITEMS {
            return Err(ParamsError::Items(items));
        }
        let bucket = (2 * ceil_log2(items) as usize).max(2);
        let mut trees = 1;
        while shrink(items, trees - 1) >= BASE_MAP_TARGET && trees < Params::max_trees(items) {
            trees += 1;
        }
        Params::new(items, payload_bits, bucket, trees)
    }

    /// Items (virtual addresses `0..items`).
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Payload bits of a data item (d).
    pub fn payload_bits(&self) -> usize {
        self.payload_bits
    }

    /// Slots per bucket of the data tree (B; [module docs](self) for the other trees).
    pub fn bucket(&self) -> usize {
        self.bucket
    }

    /// Number of trees.
    pub fn trees(&self) -> usize {
        self.trees
    }

    /// The geometry of tree `i` (0 = data).
    ///
    /// # Panics
    /// Never for `i < trees()`; a larger `i` is a caller's bug and panics.
    pub fn tree(&self, i: usize) -> TreeGeometry {
        assert!(i < self.trees, "tree {i} of {}", self.trees);
        let items = shrink(self.items, i);
        let payload_bits = if i == 0 {
            self.payload_bits
        } else {
            RADIX * self.tree(i - 1).height as usize
        };
        let height = ceil_log2(items);
        let bucket = if i == 0 {
            self.bucket
        } else {
            self.bucket.min((2 * height as usize).max(2))
        };
        TreeGeometry {
            items,
            height,
            bucket,
            payload_bits,
        }
    }

    /// Entries of the base map: the items of the last tree.
    pub fn base_entries(&self) -> u64 {
        self.tree(self.trees - 1).items
    }

    /// Bits of one base-map entry: a leaf label of the last tree.
    pub fn base_entry_bits(&self) -> u32 {
        self.tree(self.trees - 1).height
    }

    /// Bits of a virtual address: ⌈log₂ n⌉, the data tree's height.
    pub fn address_bits(&self) -> usize {
        ceil_log2(self.items) as usize
    }

    /// Virtual address `v`'s address in tree `i`: `v >> 4i`.
    pub fn address_in(&self, v: u64, i: usize) -> u64 {
        let shift = LOG_RADIX as usize * i;
        if shift >= 64 { 0 } else { v >> shift }
    }

    /// Which of the 16 entries of tree `i`'s item (i ≥ 1) holds the leaf of `v`'s item of tree
    /// `i − 1`: bits 4(i − 1) … 4i − 1 of v.
    pub fn entry_in(&self, v: u64, i: usize) -> usize {
        (self.address_in(v, i - 1) as usize) & (RADIX - 1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn paper_parameters_match_table_1() {
        // Table 1's caption: with i trees the bottom level holds 2^(log n − 4i + 4) items.
        // 2^20 items: 4 trees (2^8 base entries; 3 would leave 2^12, not below it).
        let p = Params::paper(1 << 20, 512).unwrap();
        assert_eq!((p.bucket(), p.trees(), p.base_entries()), (40, 4, 1 << 8));
        let p = Params::paper(1 << 18, 512).unwrap();
        assert_eq!((p.bucket(), p.trees(), p.base_entries()), (36, 3, 1 << 10));
        let p = Params::paper(1 << 16, 512).unwrap();
        assert_eq!((p.bucket(), p.trees(), p.base_entries()), (32, 3, 1 << 8));
        let p = Params::paper(5, 8).unwrap();
        assert_eq!((p.bucket(), p.trees(), p.base_entries()), (6, 1, 5));
    }

    #[test]
    fn geometry_of_odd_sizes() {
        let p = Params::new(1000, 8, 4, 3).unwrap();
        let g: Vec<_> = (0..3).map(|i| p.tree(i)).collect();
        assert_eq!(g.iter().map(|t| t.items).collect::<Vec<_>>(), [1000, 63, 4]);
        assert_eq!(g.iter().map(|t| t.height).collect::<Vec<_>>(), [10, 6, 2]);
        assert_eq!(g[1].payload_bits, 16 * 10);
        assert_eq!(g[2].payload_bits, 16 * 6);
        assert_eq!(g[0].slot_bits(), 1 + 20 + 8);
        assert_eq!(g.iter().map(|t| t.bucket).collect::<Vec<_>>(), [4, 4, 4]);
        let p = Params::paper(1 << 20, 512).unwrap();
        let b: Vec<_> = (0..4).map(|i| p.tree(i).bucket).collect();
        assert_eq!(b, [40, 32, 24, 16]);
        assert_eq!(Params::max_trees(1000), 4);
        assert!(Params::new(1000, 8, 4, 5).is_err());
        assert_eq!(Params::max_trees(1), 1);
        assert_eq!(p.entry_in(0x2a7, 1), 7);
        assert_eq!(p.entry_in(0x2a7, 2), 0xa);
    }
}
