//! A Merkle tree over the records, so that a record received in the clear (the fallback of
//! Algorithm 2, step 18) can be checked against the database the servers agreed on.
//!
//! The paper's fallback outputs whatever the trusted server returns; that is safe only if the
//! server really is honest. Here every server announces the tree's root in its database
//! description, the client takes the root at least two servers announce (at most one is
//! corrupt, so it is the honest database's root), and a clear record must come with its
//! authentication path. A lying server cannot produce a path for a wrong record (BLAKE3
//! collision resistance), so the fallback never outputs an unverified record, even when the
//! client trusted a server on the paper's synchronous-network rule.
//!
//! Leaves: `H(0x00 ‖ i (u64 LE) ‖ record_i)` for i < count, `H(0x02 ‖ i)` for the padding
//! leaves up to 2^n; inner nodes `H(0x01 ‖ left ‖ right)`; H is BLAKE3. The server keeps the
//! levels from [`LOW`] upward and rebuilds the 2^[`LOW`]-leaf subtree of a record when asked for
//! its path.

use rayon::prelude::*;

/// A 32-byte hash.
pub type Hash = [u8; 32];

/// Height of the subtrees that are rebuilt per path instead of stored.
pub const LOW: u8 = 8;

fn leaf(i: u64, record: Option<&[u8]>) -> Hash {
    let mut h = blake3::Hasher::new();
    match record {
        Some(r) => {
            h.update(&[0]);
            h.update(&i.to_le_bytes());
            h.update(r);
        }
        None => {
            h.update(&[2]);
            h.update(&i.to_le_bytes());
        }
    }
    *h.finalize().as_bytes()
}

fn node(l: &Hash, r: &Hash) -> Hash {
    let mut h = blake3::Hasher::new();
    h.update(&[1]);
    h.update(l);
    h.update(r);
    *h.finalize().as_bytes()
}

/// The tree's stored upper levels.
#[derive(Clone, Debug)]
pub struct Tree {
    /// n.
    bits: u8,
    /// Height of the rebuilt subtrees: min(n, LOW).
    low: u8,
    /// `upper[k]` holds the 2^(n−low−k) nodes at height low + k; the last level is the root.
    upper: Vec<Vec<Hash>>,
}

/// The leaves of the subtree of height `low` whose first leaf is `first`.
fn leaves(first: u64, low: u8, count: u64, record: &(dyn Fn(u64) -> Vec<u8> + Sync)) -> Vec<Hash> {
    (first..first + (1u64 << low))
        .map(|i| leaf(i, (i < count).then(|| record(i)).as_deref()))
        .collect()
}

/// The level above `level`.
fn parents(level: &[Hash]) -> Vec<Hash> {
    level.chunks_exact(2).map(|p| node(&p[0], &p[1])).collect()
}

/// The root of the subtree of height `low` whose first leaf is `first`.
fn subtree(first: u64, low: u8, count: u64, record: &(dyn Fn(u64) -> Vec<u8> + Sync)) -> Hash {
    let mut level = leaves(first, low, count, record);
    while level.len() > 1 {
        level = parents(&level);
    }
    level[0]
}

impl Tree {
    /// Builds the tree over `count` records (`record(i)` gives record i) in a domain of 2^bits.
    pub fn build(bits: u8, count: u64, record: &(dyn Fn(u64) -> Vec<u8> + Sync)) -> Tree {
        let low = bits.min(LOW);
        let subtrees = 1u64 << (bits - low);
        let bottom: Vec<Hash> = (0..subtrees)
            .into_par_iter()
            .map(|s| subtree(s << low, low, count, record))
            .collect();
        let mut upper = vec![bottom];
        while let Some(top) = upper.last().filter(|l| l.len() > 1) {
            let next = parents(top);
            upper.push(next);
        }
        Tree { bits, low, upper }
    }

    /// The root.
    pub fn root(&self) -> Hash {
        self.upper
            .last()
            .and_then(|l| l.first())
            .copied()
            .unwrap_or([0; 32])
    }

    /// The authentication path of leaf `i` (siblings from the leaf upward, n hashes).
    pub fn path(&self, i: u64, count: u64, record: &(dyn Fn(u64) -> Vec<u8> + Sync)) -> Vec<Hash> {
        let low = self.low;
        let first = (i >> low) << low;
        let mut level = leaves(first, low, count, record);
        let mut path = Vec::with_capacity(usize::from(self.bits));
        let mut pos = (i - first) as usize;
        while level.len() > 1 {
            path.push(level[pos ^ 1]);
            level = parents(&level);
            pos /= 2;
        }
        let mut pos = (i >> low) as usize;
        for l in &self.upper[..self.upper.len() - 1] {
            path.push(l[pos ^ 1]);
            pos /= 2;
        }
        path
    }
}

/// Whether `record` at index `i` with authentication `path` leads to `root` in a tree of
/// depth `bits`.
pub fn verify(root: &Hash, bits: u8, i: u64, record: &[u8], path: &[Hash]) -> bool {
    if path.len() != usize::from(bits) || (bits < 64 && i >> bits != 0) {
        return false;
    }
    let mut h = leaf(i, Some(record));
    for (k, sib) in path.iter().enumerate() {
        h = if (i >> k) & 1 == 0 {
            node(&h, sib)
        } else {
            node(sib, &h)
        };
    }
    h == *root
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn paths_verify_and_lies_do_not() {
        for (bits, count) in [(1u8, 1u64), (1, 2), (3, 5), (9, 300), (10, 1024)] {
            let rec = |i: u64| (i * 7).to_le_bytes().to_vec();
            let t = Tree::build(bits, count, &rec);
            for i in 0..count {
                let p = t.path(i, count, &rec);
                assert!(verify(&t.root(), bits, i, &rec(i), &p), "{bits} {i}");
                assert!(!verify(&t.root(), bits, i, &rec(i + 1), &p));
                if count > 1 {
                    let j = (i + 1) % count;
                    assert!(!verify(&t.root(), bits, j, &rec(i), &p));
                }
                assert!(!verify(&t.root(), bits, i, &rec(i), &p[1..]));
            }
        }
    }
}
