//! Full-domain evaluation of a binary-tree DPF, shared by both constructions.
//!
//! A tree of `levels` expansion levels whose depth-`levels` nodes ("output nodes") each yield
//! `2^out_bits` consecutive outputs. Evaluating the domain `[0, n)`:
//!
//! 1. Expand the root breadth-first down to depth `levels − c` (with `c = min(CHUNK_BITS,
//!    levels)`), keeping only nodes whose subtree meets `[0, n)`.
//! 2. For each of those subtree roots, in order, expand `c` more levels breadth-first inside two
//!    buffers of `2^c` blocks (32 KiB together for `c = 10`, so they stay in L1/L2), then run the
//!    output stage straight into the subtree's slice of the result.
//!
//! Every level of a subtree is one pass over a contiguous array, hashed 8 blocks per AES call.
//! The parallel variant hands the subtrees of step 2 to rayon.

use doram_field::Group;
use doram_prim::aes::Block;
use rayon::prelude::*;

/// Levels expanded inside one cache-resident subtree.
pub(crate) const CHUNK_BITS: usize = 10;

/// A DPF key seen as a tree to expand.
pub(crate) trait Tree<G: Group>: Sync {
    /// Expansion levels above the output nodes.
    fn levels(&self) -> usize;
    /// Each output node yields `2^out_bits` outputs.
    fn out_bits(&self) -> usize;
    /// The root node.
    fn root(&self) -> Block;
    /// Children of the nodes `src` at depth `level`, in order (`dst.len() == 2 · src.len()`).
    fn expand(&self, level: usize, src: &[Block], dst: &mut [Block]);
    /// Outputs of the output nodes `nodes`, in order, truncated to `out.len()` (which is more
    /// than `(nodes.len() − 1) · 2^out_bits` and at most `nodes.len() · 2^out_bits`).
    fn output(&self, nodes: &[Block], out: &mut [G]);
}

/// Step 1: the subtree roots covering `[0, n)` and the number of levels inside a subtree.
fn subtree_roots<G: Group, T: Tree<G>>(t: &T, n: usize) -> (Vec<Block>, usize) {
    let levels = t.levels();
    let needed_outputs = n.div_ceil(1 << t.out_bits());
    let c = CHUNK_BITS.min(levels);
    let mut nodes = vec![t.root()];
    for level in 0..levels - c {
        let mut next = vec![0; 2 * nodes.len()];
        t.expand(level, &nodes, &mut next);
        next.truncate(needed_outputs.div_ceil(1 << (levels - level - 1)));
        nodes = next;
    }
    (nodes, c)
}

/// Step 2 for one subtree rooted at depth `levels − c`.
fn subtree<G: Group, T: Tree<G>>(
    t: &T,
    c: usize,
    root: Block,
    out: &mut [G],
    a: &mut Vec<Block>,
    b: &mut Vec<Block>,
) {
    let first_level = t.levels() - c;
    let needed_outputs = out.len().div_ceil(1 << t.out_bits());
    a[0] = root;
    let mut len = 1;
    for k in 0..c {
        t.expand(first_level + k, &a[..len], &mut b[..2 * len]);
        std::mem::swap(a, b);
        len = needed_outputs.div_ceil(1 << (c - k - 1));
    }
    t.output(&a[..len], out);
}

/// Evaluates the whole domain `[0, out.len())` on the current thread.
pub(crate) fn eval_all<G: Group, T: Tree<G>>(t: &T, out: &mut [G]) {
    let (roots, c) = subtree_roots(t, out.len());
    let per = 1usize << (c + t.out_bits());
    let mut a = vec![0; 1 << c];
    let mut b = vec![0; 1 << c];
    for (root, chunk) in roots.iter().zip(out.chunks_mut(per)) {
        subtree(t, c, *root, chunk, &mut a, &mut b);
    }
}

/// Evaluates the whole domain `[0, out.len())`, one subtree per rayon task.
pub(crate) fn eval_all_par<G: Group, T: Tree<G>>(t: &T, out: &mut [G]) {
    let (roots, c) = subtree_roots(t, out.len());
    let per = 1usize << (c + t.out_bits());
    out.par_chunks_mut(per).zip(roots.par_iter()).for_each_init(
        || (vec![0; 1 << c], vec![0; 1 << c]),
        |(a, b), (chunk, root)| subtree(t, c, *root, chunk, a, b),
    );
}
