//! Half-Tree levels without an output stage: the pieces that a *distributed* generation of
//! Half-Tree keys needs, and the full-domain evaluation of such keys down to the leaf labels.
//!
//! In a distributed generation (Doerner–shelat, as used by Duoram's preprocessing) the two key
//! holders expand every level of their trees in full: the correction word of a level is the XOR,
//! over all nodes of both trees, of the hashes `H(s)`, plus a secret-shared multiple of `Δ`, so
//! each holder first hashes the level ([`hash_level`], which also returns the XOR of the hashes),
//! then learns the correction word from the other holder and derives the children
//! ([`correct_level`]). [`expand_level`] does both for a known correction word (the plain
//! Half-Tree evaluation of one level, Guo et al., ePrint 2022/1431, Fig. 8, Eval), and
//! [`HalfTreeLevels::for_each_leaf_chunk`] evaluates a whole tree whose key is a root seed and one
//! correction word per level, handing the 128-bit leaf labels (control bit in the lsb) to the
//! caller one cache-sized subtree at a time.
//!
//! The hash is `H(x) = π(σ(x)) ⊕ σ(x)` (fixed-key AES, circular correlation-robust, see
//! `doram_prim::aes`); the left child of `s` is `H(s) ⊕ lsb(s)·CW` and the right child is
//! `left ⊕ s`, exactly as in [`HalfTree`](crate::HalfTree).

use doram_prim::aes::{
    AesKernel, BATCH, Block, WithAes, batches, batches_mut, fixed_key, lsb, mask,
};

use crate::tree::CHUNK_BITS;

/// Hashes every node of a level: `hashes[j] = H(src[j])`; returns the XOR of all hashes.
///
/// # Panics
/// If `hashes.len() != src.len()`.
pub fn hash_level(src: &[Block], hashes: &mut [Block]) -> Block {
    assert_eq!(src.len(), hashes.len(), "one hash per node");
    hashes.copy_from_slice(src);
    fixed_key().with_aes(HashLevel(hashes))
}

/// [`hash_level`]'s loop over the nodes (copied into the hash buffer).
struct HashLevel<'a>(&'a mut [Block]);

impl WithAes for HashLevel<'_> {
    type Output = Block;

    #[inline(always)]
    fn run<K: AesKernel>(self, fk: &mut K) -> Block {
        let (whole, rest) = batches_mut(self.0);
        let mut acc = [0u128; BATCH];
        for c in whole {
            fk.ccr8(c);
            for k in 0..BATCH {
                acc[k] ^= c[k];
            }
        }
        let mut x = acc.iter().fold(0, |a, b| a ^ b);
        for h in rest {
            *h = fk.ccr(*h);
            x ^= *h;
        }
        x
    }
}

/// The children of the nodes `src` whose hashes are `hashes`, under the level's correction word
/// `cw`: `dst[2j] = H(s_j) ⊕ lsb(s_j)·cw`, `dst[2j+1] = dst[2j] ⊕ s_j`.
///
/// # Panics
/// If the lengths do not match (`dst.len() == 2·src.len() == 2·hashes.len()`).
pub fn correct_level(cw: Block, src: &[Block], hashes: &[Block], dst: &mut [Block]) {
    assert_eq!(src.len(), hashes.len(), "one hash per node");
    assert_eq!(dst.len(), 2 * src.len(), "two children per node");
    for ((d, &s), &h) in dst.chunks_exact_mut(2).zip(src).zip(hashes) {
        let l = h ^ (mask(lsb(s)) & cw);
        d[0] = l;
        d[1] = l ^ s;
    }
}

/// One level of Half-Tree evaluation (Fig. 8, Eval): the children of `src` under `cw`.
///
/// # Panics
/// If `dst.len() != 2·src.len()`.
pub fn expand_level(cw: Block, src: &[Block], dst: &mut [Block]) {
    assert_eq!(dst.len(), 2 * src.len(), "two children per node");
    fixed_key().with_aes(ExpandLevel { cw, src, dst })
}

/// [`expand_level`]'s loop over the nodes.
struct ExpandLevel<'a> {
    cw: Block,
    src: &'a [Block],
    dst: &'a mut [Block],
}

impl WithAes for ExpandLevel<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, fk: &mut K) {
        let cw = self.cw;
        let (whole, rest) = batches(self.src);
        let mut dst_chunks = self.dst.chunks_exact_mut(2 * BATCH);
        for (p, d) in whole.zip(&mut dst_chunks) {
            let mut h = *p;
            fk.ccr8(&mut h);
            for k in 0..BATCH {
                let l = h[k] ^ (mask(lsb(p[k])) & cw);
                d[2 * k] = l;
                d[2 * k + 1] = l ^ p[k];
            }
        }
        let d = dst_chunks.into_remainder();
        for (k, &s) in rest.iter().enumerate() {
            let l = fk.ccr(s) ^ (mask(lsb(s)) & cw);
            d[2 * k] = l;
            d[2 * k + 1] = l ^ s;
        }
    }
}

/// A Half-Tree key without an output stage: a root seed (its lsb is the holder's root control
/// bit) and one correction word per level. Its `2^cws.len()` leaves are 128-bit labels whose
/// lsb is the leaf's control bit; the two holders' labels are equal off the point and differ by
/// the global offset `Δ` (lsb 1) on it.
#[derive(Clone, PartialEq, Eq)]
pub struct HalfTreeLevels {
    /// The root seed.
    pub root: Block,
    /// The correction words, root level first.
    pub cws: Vec<Block>,
}

impl std::fmt::Debug for HalfTreeLevels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HalfTreeLevels")
            .field("depth", &self.cws.len())
            .finish_non_exhaustive()
    }
}

impl HalfTreeLevels {
    /// The tree depth (number of correction words).
    pub fn depth(&self) -> usize {
        self.cws.len()
    }

    /// The label of leaf `x` (`x < 2^depth`), walking one path.
    ///
    /// # Panics
    /// If `x` is outside the domain.
    pub fn leaf(&self, x: usize) -> Block {
        let d = self.depth();
        assert!(x >> d == 0, "leaf {x} outside a tree of depth {d}");
        let fk = fixed_key();
        let mut s = self.root;
        for (i, &cw) in self.cws.iter().enumerate() {
            let l = fk.ccr(s) ^ (mask(lsb(s)) & cw);
            s = if (x >> (d - 1 - i)) & 1 == 1 {
                l ^ s
            } else {
                l
            };
        }
        s
    }

    /// Evaluates all `2^depth` leaves in order and calls `f(first, labels)` for consecutive
    /// chunks of them (`first` is the index of `labels[0]`). The top of the tree is expanded
    /// breadth-first, then each subtree of `2^10` leaves inside two buffers that stay in L1/L2,
    /// as the crate's own full-domain evaluation does.
    pub fn for_each_leaf_chunk(&self, mut f: impl FnMut(usize, &[Block])) {
        let d = self.depth();
        let c = CHUNK_BITS.min(d);
        let mut tops = vec![self.root];
        for &cw in &self.cws[..d - c] {
            let mut next = vec![0; 2 * tops.len()];
            expand_level(cw, &tops, &mut next);
            tops = next;
        }
        let mut a = vec![0u128; 1 << c];
        let mut b = vec![0u128; 1 << c];
        for (i, &root) in tops.iter().enumerate() {
            a[0] = root;
            let mut len = 1;
            let (mut src, mut dst) = (&mut a, &mut b);
            for &cw in &self.cws[d - c..] {
                expand_level(cw, &src[..len], &mut dst[..2 * len]);
                std::mem::swap(&mut src, &mut dst);
                len *= 2;
            }
            f(i << c, &src[..len]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain (dealer-side) generation with this module's pieces: the leaves of the two trees
    /// agree everywhere except at `alpha`, where they differ by `Δ`.
    fn generate(d: usize, alpha: usize, seeds: [u128; 2]) -> [HalfTreeLevels; 2] {
        let r0 = seeds[0] & !1;
        let r1 = seeds[1] | 1;
        let delta = r0 ^ r1;
        let mut level = [vec![r0], vec![r1]];
        let mut cws = Vec::new();
        for i in 0..d {
            let a = (alpha >> (d - 1 - i)) & 1 == 1;
            let mut hashes = [vec![0; level[0].len()], vec![0; level[1].len()]];
            let x0 = hash_level(&level[0], &mut hashes[0]);
            let x1 = hash_level(&level[1], &mut hashes[1]);
            let cw = x0 ^ x1 ^ (mask(!a) & delta);
            cws.push(cw);
            for b in 0..2 {
                let mut next = vec![0; 2 * level[b].len()];
                correct_level(cw, &level[b], &hashes[b], &mut next);
                level[b] = next;
            }
        }
        [
            HalfTreeLevels {
                root: r0,
                cws: cws.clone(),
            },
            HalfTreeLevels { root: r1, cws },
        ]
    }

    #[test]
    fn distributed_style_generation_gives_a_point() {
        for (d, alpha) in [(1, 1), (3, 5), (11, 1234), (12, 0)] {
            let keys = generate(d, alpha, [0x1234_5678_9abc, 0xfeed_beef_0000_1111]);
            let mut leaves = [vec![], vec![]];
            for b in 0..2 {
                keys[b].for_each_leaf_chunk(|first, chunk| {
                    assert_eq!(first, leaves[b].len());
                    leaves[b].extend_from_slice(chunk);
                });
                assert_eq!(leaves[b].len(), 1 << d);
            }
            let delta = keys[0].root ^ keys[1].root;
            for (x, (l0, l1)) in leaves[0].iter().zip(&leaves[1]).enumerate() {
                let diff = l0 ^ l1;
                assert_eq!(diff, if x == alpha { delta } else { 0 }, "d = {d}, x = {x}");
                assert_eq!(keys[0].leaf(x), *l0);
            }
        }
    }

    #[test]
    fn expand_level_matches_hash_then_correct() {
        let src: Vec<Block> = (0..21u128).map(|i| i * 0x9e37_79b9_7f4a_7c15).collect();
        let cw = 0xdead_beef_u128 << 40 | 7;
        let mut direct = vec![0; 42];
        expand_level(cw, &src, &mut direct);
        let mut h = vec![0; 21];
        let x = hash_level(&src, &mut h);
        assert_eq!(x, h.iter().fold(0, |a, b| a ^ b));
        let mut two = vec![0; 42];
        correct_level(cw, &src, &h, &mut two);
        assert_eq!(direct, two);
    }
}
