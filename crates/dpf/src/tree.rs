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

#[cfg(doc)]
use crate::SinglePointDpf;

/// Levels expanded inside one cache-resident subtree.
pub(crate) const CHUNK_BITS: usize = 10;

/// A DPF key seen as a tree to expand.
pub(crate) trait Tree<G: Group>: Sync {
    /// For a domain of one point (no tree): this party's output.
    fn constant(&self) -> Option<G>;
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
pub(crate) fn subtree<G: Group, T: Tree<G> + ?Sized>(
    t: &T,
    c: usize,
    root: Block,
    out: &mut [G],
    a: &mut [Block],
    b: &mut [Block],
) {
    let first_level = t.levels() - c;
    let needed_outputs = out.len().div_ceil(1 << t.out_bits());
    a[0] = root;
    let mut len = 1;
    let (mut src, mut dst) = (a, b);
    for k in 0..c {
        t.expand(first_level + k, &src[..len], &mut dst[..2 * len]);
        std::mem::swap(&mut src, &mut dst);
        len = needed_outputs.div_ceil(1 << (c - k - 1));
    }
    t.output(&src[..len], out);
}

/// Full-domain evaluation as every tree DPF's `eval_all_into` / `eval_all_par_into` does it:
/// checks that `out` covers the domain of `domain_size` points, answers a one-point domain
/// from [`Tree::constant`], and otherwise expands the tree on this thread or on rayon's pool.
///
/// # Panics
/// If `out.len() != domain_size` (a caller bug, not peer input).
pub(crate) fn eval_domain<G: Group, T: Tree<G>>(
    t: &T,
    domain_size: usize,
    out: &mut [G],
    parallel: bool,
) {
    assert_eq!(
        out.len(),
        domain_size,
        "output length must equal the domain size"
    );
    if let Some(y) = t.constant() {
        out[0] = y;
    } else if parallel {
        eval_all_par(t, out);
    } else {
        eval_all(t, out);
    }
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

/// Log2 of the number of outputs a [`LeafStream`] produces per batch (at most).
pub const STREAM_BATCH_BITS: usize = 6;

/// Working memory of [`LeafStream::next_batch`], shared by any number of streams.
#[derive(Clone, Debug)]
pub struct StreamScratch {
    a: Vec<Block>,
    b: Vec<Block>,
}

impl StreamScratch {
    /// Scratch space for batches of up to `2^STREAM_BATCH_BITS` outputs.
    pub fn new() -> Self {
        StreamScratch {
            a: vec![0; 1 << STREAM_BATCH_BITS],
            b: vec![0; 1 << STREAM_BATCH_BITS],
        }
    }
}

impl Default for StreamScratch {
    fn default() -> Self {
        Self::new()
    }
}

/// In-order evaluation of one DPF key, a batch of consecutive outputs at a time, from any
/// starting point; obtained from [`crate::SinglePointDpf::stream`].
///
/// Batches are aligned subtrees of `2^STREAM_BATCH_BITS` leaves (fewer for small domains). The
/// stream keeps the path from the root to the current batch's subtree, so moving to the next
/// batch re-expands only the levels below the lowest common ancestor (two nodes on average):
/// a full pass costs what [`SinglePointDpf::eval_all`](crate::SinglePointDpf::eval_all) costs,
/// while holding only one batch of outputs. The multi-point DPF interleaves one stream per
/// bucket this way.
pub struct LeafStream<'a, G> {
    tree: &'a dyn Tree<G>,
    n: usize,
    /// Tree levels inside one batch subtree.
    c: usize,
    /// log2 of the outputs per batch.
    batch_bits: usize,
    /// Nodes from the root (depth 0) to the current batch root (depth `levels − c`).
    path: Vec<Block>,
    /// Batch index whose root `path` ends at, if any.
    path_index: Option<usize>,
    /// The next output to produce.
    pos: usize,
}

impl<G> std::fmt::Debug for LeafStream<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeafStream")
            .field("n", &self.n)
            .field("pos", &self.pos)
            .finish()
    }
}

impl<'a, G: Group> LeafStream<'a, G> {
    /// A stream over the `n` outputs of `tree`, positioned at output `start`.
    pub(crate) fn new(tree: &'a dyn Tree<G>, n: usize, start: usize) -> Self {
        let ob = if tree.constant().is_some() {
            0
        } else {
            tree.out_bits()
        };
        let c = tree.levels().min(STREAM_BATCH_BITS.saturating_sub(ob));
        let depth = tree.levels() - c;
        LeafStream {
            tree,
            n,
            c,
            batch_bits: c + ob,
            path: vec![tree.root(); depth + 1],
            path_index: None,
            pos: start.min(n),
        }
    }

    /// Outputs in a full batch (the length `next_batch` needs).
    pub fn batch_len(&self) -> usize {
        1 << self.batch_bits
    }

    /// Outputs not produced yet.
    pub fn remaining(&self) -> usize {
        self.n - self.pos
    }

    /// Moves `path` to the root of batch `i`.
    fn walk_to(&mut self, i: usize) {
        let depth = self.path.len() - 1;
        let from = match self.path_index {
            None => 0,
            Some(p) if p == i => return,
            Some(p) => depth - (usize::BITS - (p ^ i).leading_zeros()) as usize,
        };
        let mut two = [0; 2];
        for d in from..depth {
            self.tree.expand(d, &self.path[d..d + 1], &mut two);
            self.path[d + 1] = two[(i >> (depth - 1 - d)) & 1];
        }
        self.path_index = Some(i);
    }

    /// Writes the next outputs (up to the end of the current batch) to the front of `out` and
    /// returns how many; 0 once the stream is exhausted.
    ///
    /// # Panics
    /// If `out.len() < self.batch_len()`.
    pub fn next_batch(&mut self, out: &mut [G], scratch: &mut StreamScratch) -> usize {
        assert!(
            out.len() >= self.batch_len(),
            "output buffer shorter than a batch"
        );
        if self.pos >= self.n {
            return 0;
        }
        if let Some(y) = self.tree.constant() {
            out[0] = y;
            self.pos = self.n;
            return 1;
        }
        let i = self.pos >> self.batch_bits;
        let lo = i << self.batch_bits;
        let hi = self.n.min(lo + self.batch_len());
        self.walk_to(i);
        let root = self.path[self.path.len() - 1];
        let skip = self.pos - lo;
        subtree(
            self.tree,
            self.c,
            root,
            &mut out[..hi - lo],
            &mut scratch.a,
            &mut scratch.b,
        );
        if skip > 0 {
            out.copy_within(skip..hi - lo, 0);
        }
        self.pos = hi;
        hi - lo - skip
    }
}
