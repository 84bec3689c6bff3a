//! The PIR-compatible DPF: Doerner–shelat distributed key generation with arithmetic payload
//! (spec §5.1, paper Algorithm 1), its G-oracle (Functionality 2), views (Definition 3.4) and
//! the regeneration of a full view from a partial view, which is also the full-domain
//! evaluation (Proposition 3.5, "Remark" after Algorithm 1).
//!
//! # Conventions
//! * A tree node is a [`Block`] = "127-bit seed ‖ control bit t" (bit 0 is t); see
//!   the `prg` module. The root of party b is `seed_b | b` (Algorithm 1, step 1: t̂^{0,0}_b = b).
//! * Levels are numbered j = 1..n; node ℓ at level j−1 has children 2ℓ and 2ℓ+1, so the bit
//!   of r used at level j is bit n−j of the integer r (MSB first, spec §11 P5). Leaf x is the
//!   evaluation point x.
//! * A level XOR `z^{j,c}` (Algorithm 1, step 4) is kept packed: bits 1..127 are the XOR of the
//!   raw c-children's seeds, bit 0 (ẑ^{j,c}) the XOR of their control bits.
//! * The payload is v = (1, α) ∈ F_p², p = 2^64 − 59.
//!
//! # Cost
//! Regeneration plus full-domain evaluation at S_b is one pass over the tree: 2(N − 1) AES
//! calls for the inner nodes and N for `Convert`. S_2 simulates both parties; because CW^j
//! depends on all of level j, it re-walks the tree from the root for every level (geometric
//! sum: about 2N node expansions per party) instead of keeping a whole level in memory.

use doram_field::{Fp64, Fp64Acc};
use doram_prim::aes::{AesKernel, BATCH, Block, WithAes, batches};
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;

use crate::prg::{Expander, SEED, WithExpand, convert, convert8, halves, prg};

/// Largest supported domain: N = 2^28 points.
pub const MAX_DOMAIN_BITS: u8 = 28;

/// Levels expanded inside one cache-resident subtree.
const CHUNK: usize = 10;
/// Trees of at least this depth are walked on rayon's pool.
const PAR_MIN_DEPTH: usize = 13;

/// One of the two DPF key holders (S_0 and S_1 of the PIR protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    /// Party P_0 of Algorithm 1 (server S_0).
    Zero,
    /// Party P_1 of Algorithm 1 (server S_1).
    One,
}

impl Holder {
    /// Both holders, in order.
    pub const BOTH: [Holder; 2] = [Holder::Zero, Holder::One];

    /// 0 or 1.
    pub fn index(self) -> usize {
        match self {
            Holder::Zero => 0,
            Holder::One => 1,
        }
    }

    /// The other holder.
    pub fn other(self) -> Holder {
        match self {
            Holder::Zero => Holder::One,
            Holder::One => Holder::Zero,
        }
    }
}

/// The output of G-oracle call j ≤ n: the correction word CW^j = (σ^j, τ^{j,0}, τ^{j,1}).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cw {
    /// σ^j, a seed (bit 0 is always clear).
    pub sigma: Block,
    /// τ^{j,0} and τ^{j,1}.
    pub tau: [bool; 2],
}

impl Cw {
    /// The packed correction applied to a c-child of a node with t̂ = 1 (Algorithm 1, steps 6–7).
    #[inline(always)]
    fn corr(&self, c: usize) -> Block {
        self.sigma | Block::from(self.tau[c])
    }
}

/// The G-oracle outputs, identical in both parties' views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// CW^1..CW^n (calls 1..n).
    pub cws: Vec<Cw>,
    /// γ ∈ F², the output of call n+1.
    pub gamma: [Fp64; 2],
}

/// A party's private input and private randomness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// ⟨r⟩^B_b, an n-bit integer.
    pub r_share: u32,
    /// ⟨v⟩_b ∈ F².
    pub v_share: [Fp64; 2],
    /// Ŝ^{0,0}_b (bit 0 clear).
    pub seed: Block,
}

/// A party's inputs to the G-oracle calls (besides the bits of its input shares).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GInputs {
    /// For levels j = 1..n: the packed level XORs (z^{j,0} ‖ ẑ^{j,0}, z^{j,1} ‖ ẑ^{j,1}).
    pub levels: Vec<[Block; 2]>,
    /// T_b = Σ_ℓ t̂^{n,ℓ}_b, an integer in [0, 2^n].
    pub t_sum: u32,
    /// W_b = Σ_ℓ Convert(Ŝ^{n,ℓ}_b) ∈ F².
    pub w_sum: [Fp64; 2],
}

/// What S_2 sends S_b offline: private input, private randomness and G outputs
/// (PIR-GOD Algorithm 2, step 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialView {
    /// Input shares and seed.
    pub inputs: Inputs,
    /// G outputs.
    pub outputs: Outputs,
}

/// A party's full view: the partial view plus every G input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FullView {
    /// Input shares and seed.
    pub inputs: Inputs,
    /// G inputs.
    pub g_inputs: GInputs,
    /// G outputs.
    pub outputs: Outputs,
}

impl FullView {
    /// The domain size exponent n.
    pub fn domain_bits(&self) -> usize {
        self.outputs.cws.len()
    }

    /// The partial view contained in this view.
    pub fn partial(&self) -> PartialView {
        PartialView {
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
        }
    }
}

/// Bit of ⟨r⟩ used at level j (1-based) of an n-level tree.
#[inline]
fn level_bit(r: u32, n: usize, j: usize) -> bool {
    (r >> (n - j)) & 1 == 1
}

/// G-oracle call j ≤ n (Functionality 2; Algorithm 1, step 5): from both parties' shares of
/// r_j and their packed level XORs, CW^j.
pub fn g_level(r_bits: [bool; 2], xors: [[Block; 2]; 2]) -> Cw {
    let r = r_bits[0] ^ r_bits[1];
    let z = [xors[0][0] ^ xors[1][0], xors[0][1] ^ xors[1][1]];
    // σ^j ← z^{j, r̄_j}; τ^{j,0} ← ẑ^{j,0} ⊕ r_j ⊕ 1; τ^{j,1} ← ẑ^{j,1} ⊕ r_j.
    let off = usize::from(!r);
    Cw {
        sigma: z[off] & SEED,
        tau: [(z[0] & 1 == 1) ^ r ^ true, (z[1] & 1 == 1) ^ r],
    }
}

/// G-oracle call n+1 (Functionality 2; Algorithm 1, step 10): q = 1 if T_1 > T_0 (else 0) and
/// γ = (−1)^q (v − W_0 + W_1), componentwise.
pub fn g_final(t: [u32; 2], w: [[Fp64; 2]; 2], v_shares: [[Fp64; 2]; 2]) -> [Fp64; 2] {
    let q = t[1] > t[0];
    std::array::from_fn(|k| {
        let v = v_shares[0][k] + v_shares[1][k];
        let g = v - w[0][k] + w[1][k];
        if q { -g } else { g }
    })
}

/// Re-executes every G-oracle call on the inputs recorded in two full views and compares with
/// the recorded outputs (PIR-GOD Algorithm 2, step 13, second rule). The views must have the
/// same outputs (checked before, step 13 first rule); returns the first failing call (1-based,
/// n+1 for γ) or `None`.
pub fn check_g(views: [&FullView; 2]) -> Option<usize> {
    let n = views[0].domain_bits();
    if views[1].domain_bits() != n
        || views[0].g_inputs.levels.len() != n
        || views[1].g_inputs.levels.len() != n
    {
        return Some(1);
    }
    for j in 1..=n {
        let cw = g_level(
            [
                level_bit(views[0].inputs.r_share, n, j),
                level_bit(views[1].inputs.r_share, n, j),
            ],
            [
                views[0].g_inputs.levels[j - 1],
                views[1].g_inputs.levels[j - 1],
            ],
        );
        if cw != views[0].outputs.cws[j - 1] {
            return Some(j);
        }
    }
    let gamma = g_final(
        [views[0].g_inputs.t_sum, views[1].g_inputs.t_sum],
        [views[0].g_inputs.w_sum, views[1].g_inputs.w_sum],
        [views[0].inputs.v_share, views[1].inputs.v_share],
    );
    (gamma != views[0].outputs.gamma).then_some(n + 1)
}

/// r and v = ⟨v⟩_0 + ⟨v⟩_1 from two views.
pub fn reconstruct(views: [&FullView; 2]) -> (u32, [Fp64; 2]) {
    let r = views[0].inputs.r_share ^ views[1].inputs.r_share;
    let v = std::array::from_fn(|k| views[0].inputs.v_share[k] + views[1].inputs.v_share[k]);
    (r, v)
}

/// Expands one level (Algorithm 1, steps 3, 4, 6, 7): raw children of `src` into `dst`
/// (`dst.len() == 2·src.len()`), XOR of the raw left and right children into `xor`, then the
/// correction of children of nodes with t̂ = 1 when `cw` is known.
fn expand_level(src: &[Block], dst: &mut [Block], cw: Option<&Cw>, xor: &mut [Block; 2]) {
    let corr = cw.map_or((0, 0), |c| (c.corr(0), c.corr(1)));
    prg().with_expand(ExpandLevel {
        src,
        dst,
        corr,
        xor,
    })
}

/// [`expand_level`]'s loop, with the PRG's ciphers in hand.
struct ExpandLevel<'a> {
    src: &'a [Block],
    dst: &'a mut [Block],
    corr: (Block, Block),
    xor: &'a mut [Block; 2],
}

impl WithExpand for ExpandLevel<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: AesKernel, R: AesKernel>(self, p: &mut Expander<'_, L, R>) {
        let ExpandLevel {
            src,
            dst,
            corr: (cl, cr),
            xor,
        } = self;
        let (mut xl, mut xr) = (0, 0);
        let (whole, rest) = batches(src);
        let mut out = dst.chunks_exact_mut(2 * BATCH);
        for b in whole {
            let (l, r) = p.expand8(b);
            let Some(d) = out.next() else { break };
            for i in 0..BATCH {
                xl ^= l[i];
                xr ^= r[i];
                let m = 0u128.wrapping_sub(b[i] & 1);
                d[2 * i] = l[i] ^ (m & cl);
                d[2 * i + 1] = r[i] ^ (m & cr);
            }
        }
        let start = src.len() - rest.len();
        for (k, &x) in rest.iter().enumerate() {
            let (l, r) = p.expand(x);
            xl ^= l;
            xr ^= r;
            let m = 0u128.wrapping_sub(x & 1);
            dst[2 * (start + k)] = l ^ (m & cl);
            dst[2 * (start + k) + 1] = r ^ (m & cr);
        }
        xor[0] ^= xl;
        xor[1] ^= xr;
    }
}

/// Expands `root`, a node at depth `d0`, by `k` levels inside `a` and `b` (each ≥ 2^k blocks),
/// accumulating level XORs into `xors` (indexed by level − 1); returns the nodes at depth
/// `d0 + k`.
fn subtree<'a>(
    root: Block,
    d0: usize,
    k: usize,
    cws: &[Cw],
    a: &'a mut [Block],
    b: &'a mut [Block],
    xors: &mut [[Block; 2]],
) -> &'a [Block] {
    a[0] = root;
    let mut len = 1;
    let (mut src, mut dst) = (a, b);
    for step in 0..k {
        let level = d0 + step + 1;
        expand_level(
            &src[..len],
            &mut dst[..2 * len],
            cws.get(level - 1),
            &mut xors[level - 1],
        );
        std::mem::swap(&mut src, &mut dst);
        len *= 2;
    }
    &src[..len]
}

/// Walks the tree of `root` down to `depth`, correcting each level j with `cws[j − 1]` when
/// present (at least levels 1..depth−1 must be known). Returns the raw level XORs of levels
/// 1..=depth and the fold of `leaf` over the depth-`depth` nodes (meaningful only if all
/// `depth` correction words are known). `leaf(acc, first, nodes, out)` gets consecutive nodes
/// starting at index `first` and their `stride`-element slice of `out`.
#[allow(clippy::too_many_arguments)]
fn walk<A, I, F, M>(
    root: Block,
    cws: &[Cw],
    depth: usize,
    out: &mut [u64],
    stride: usize,
    init: I,
    leaf: F,
    merge: M,
) -> (Vec<[Block; 2]>, A)
where
    A: Send,
    I: Fn() -> A + Sync + Send,
    F: Fn(&mut A, usize, &[Block], &mut [u64]) + Sync + Send,
    M: Fn(A, A) -> A + Sync + Send,
{
    let k = CHUNK.min(depth);
    let top = depth - k;
    let mut xors = vec![[0 as Block; 2]; depth];
    let mut nodes = vec![root];
    for level in 1..=top {
        let mut next = vec![0; 2 * nodes.len()];
        expand_level(&nodes, &mut next, cws.get(level - 1), &mut xors[level - 1]);
        nodes = next;
    }
    let per = 1usize << k;
    let chunks: Vec<&mut [u64]> = if stride == 0 {
        nodes.iter().map(|_| <&mut [u64]>::default()).collect()
    } else {
        out.chunks_mut(per * stride).collect()
    };
    let run = |state: &mut (Vec<[Block; 2]>, A, Vec<Block>, Vec<Block>),
               (i, (node, chunk)): (usize, (&Block, &mut [u64]))| {
        let (x, acc, a, b) = state;
        let leaves = subtree(*node, top, k, cws, a, b, x);
        leaf(acc, i * per, leaves, chunk);
    };
    let fresh = || {
        (
            vec![[0 as Block; 2]; depth],
            init(),
            vec![0; per],
            vec![0; per],
        )
    };
    let (sub_xors, acc) = if depth >= PAR_MIN_DEPTH && nodes.len() > 1 {
        nodes
            .par_iter()
            .zip(chunks.into_par_iter())
            .enumerate()
            .fold(fresh, |mut s, item| {
                run(&mut s, item);
                s
            })
            .map(|(x, acc, _, _)| (x, acc))
            .reduce(
                || (vec![[0 as Block; 2]; depth], init()),
                |(mut x1, a1), (x2, a2)| {
                    for (u, v) in x1.iter_mut().zip(&x2) {
                        u[0] ^= v[0];
                        u[1] ^= v[1];
                    }
                    (x1, merge(a1, a2))
                },
            )
    } else {
        let mut s = fresh();
        for item in nodes.iter().zip(chunks).enumerate() {
            run(&mut s, item);
        }
        (s.0, s.1)
    };
    for (u, v) in xors.iter_mut().zip(&sub_xors) {
        u[0] ^= v[0];
        u[1] ^= v[1];
    }
    (xors, acc)
}

/// Leaf statistics: T_b (count of t̂ = 1) and the unreduced sum of Convert halves.
#[derive(Clone, Copy, Default)]
struct LeafSums {
    t: u64,
    w: [Fp64Acc; 2],
}

impl LeafSums {
    fn merge(mut self, o: LeafSums) -> LeafSums {
        self.t += o.t;
        self.w[0].merge(o.w[0]);
        self.w[1].merge(o.w[1]);
        self
    }
}

/// Algorithm 1, step 9, for the leaves `nodes`; with `out` non-empty also the evaluation
/// (spec §5.3): out = (−1)^b (Convert(ŝ) + t̂·γ), interleaved (z, y) per leaf.
fn leaf_pass(acc: &mut LeafSums, nodes: &[Block], out: &mut [u64], gamma: [Fp64; 2], neg: bool) {
    prg().with_convert(LeafPass {
        acc,
        nodes,
        out,
        gamma,
        neg,
    })
}

/// [`leaf_pass`]'s loop, with the `Convert` cipher in hand.
struct LeafPass<'a> {
    acc: &'a mut LeafSums,
    nodes: &'a [Block],
    out: &'a mut [u64],
    gamma: [Fp64; 2],
    neg: bool,
}

impl WithAes for LeafPass<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, p: &mut K) {
        let LeafPass {
            acc,
            nodes,
            out,
            gamma,
            neg,
        } = self;
        leaf_pass_with(p, acc, nodes, out, gamma, neg)
    }
}

/// The body of [`leaf_pass`] with the `Convert` cipher `p` in hand.
#[inline(always)]
fn leaf_pass_with<K: AesKernel>(
    p: &mut K,
    acc: &mut LeafSums,
    nodes: &[Block],
    out: &mut [u64],
    gamma: [Fp64; 2],
    neg: bool,
) {
    let write = !out.is_empty();
    let mut one = |i: usize, node: Block, c: Block, acc: &mut LeafSums| {
        let h = halves(c);
        let t = node & 1 == 1;
        acc.t += u64::from(t);
        acc.w[0].add(h[0].value());
        acc.w[1].add(h[1].value());
        if write {
            let mut z = h[0];
            let mut y = h[1];
            if t {
                z += gamma[0];
                y += gamma[1];
            }
            if neg {
                z = -z;
                y = -y;
            }
            out[2 * i] = z.value();
            out[2 * i + 1] = y.value();
        }
    };
    let (whole, rest) = batches(nodes);
    let mut i = 0;
    for b in whole {
        let c = convert8(p, b);
        for k in 0..BATCH {
            one(i + k, b[k], c[k], acc);
        }
        i += BATCH;
    }
    for &node in rest {
        one(i, node, convert(p, node), acc);
        i += 1;
    }
}

/// What S_2 obtains by running Algorithm 1 in its head (PIR-GOD Algorithm 2, steps 1–3).
#[derive(Clone, Debug)]
pub struct Generated {
    /// The special point r ∈ [0, 2^n).
    pub r: u32,
    /// The MAC key α.
    pub alpha: Fp64,
    /// view_0 and view_1.
    pub views: [FullView; 2],
}

/// PIR-GOD Algorithm 2, steps 1–3: samples r and α, shares r (Boolean) and v = (1, α)
/// (arithmetic), samples both seeds and runs Algorithm 1 for both parties, answering the G
/// calls itself. `domain_bits` must be in 1..=[`MAX_DOMAIN_BITS`].
pub fn generate<R: RngCore + CryptoRng>(domain_bits: u8, rng: &mut R) -> Generated {
    generate_with_payload(domain_bits, None, rng)
}

/// [`generate`] with an explicit first payload component instead of 1. Only a corrupt S_2
/// would do this (spec §11 P1); the adversarial tests use it.
pub fn generate_with_payload<R: RngCore + CryptoRng>(
    domain_bits: u8,
    first: Option<Fp64>,
    rng: &mut R,
) -> Generated {
    let n = usize::from(domain_bits.clamp(1, MAX_DOMAIN_BITS));
    let Sampled {
        r,
        alpha,
        r_shares,
        v_shares,
        seeds,
    } = sample_inputs(n, first, rng);
    let roots = [seeds[0], seeds[1] | 1];
    let (cws, [l0, l1]) = level_corrections(n, roots, r_shares);
    let (t, w) = leaf_sums(n, roots, &cws);
    // Step 10: G call n+1.
    let gamma = g_final(t, w, v_shares);
    let outputs = Outputs { cws, gamma };
    let views = [(0, l0), (1, l1)].map(|(b, lv)| FullView {
        inputs: Inputs {
            r_share: r_shares[b],
            v_share: v_shares[b],
            seed: seeds[b],
        },
        g_inputs: GInputs {
            levels: lv,
            t_sum: t[b],
            w_sum: w[b],
        },
        outputs: outputs.clone(),
    });
    Generated { r, alpha, views }
}

/// What [`sample_inputs`] draws.
struct Sampled {
    r: u32,
    alpha: Fp64,
    r_shares: [u32; 2],
    v_shares: [[Fp64; 2]; 2],
    seeds: [Block; 2],
}

/// PIR-GOD Algorithm 2, steps 1–3: r ← [N] and α ← F, Boolean shares of r, arithmetic shares
/// of v = (first or 1, α), and the two seeds (Algorithm 1, step 1).
fn sample_inputs<R: RngCore + CryptoRng>(n: usize, first: Option<Fp64>, rng: &mut R) -> Sampled {
    let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    // Step 1: r ← [N], α ← F.
    let r = rng.next_u32() & mask;
    let alpha = Fp64::random(rng);
    // Step 2: Boolean shares of r, arithmetic shares of (1, α).
    let v = [first.unwrap_or(Fp64::ONE), alpha];
    let r0 = rng.next_u32() & mask;
    let v0 = [Fp64::random(rng), Fp64::random(rng)];
    // Step 3 (Algorithm 1, step 1): seeds Ŝ^{0,0}_b (t̂^{0,0}_b = b is set on the roots).
    let seeds = [random_seed(rng), random_seed(rng)];
    Sampled {
        r,
        alpha,
        r_shares: [r0, r ^ r0],
        v_shares: [v0, [v[0] - v0[0], v[1] - v0[1]]],
        seeds,
    }
}

/// Algorithm 1, steps 3–5 for every level at both parties: the XOR sums of level `j` (levels
/// below it corrected) and the correction word of G call `j`. Returns the correction words
/// and each party's per-level sums (its G inputs).
fn level_corrections(
    n: usize,
    roots: [Block; 2],
    r_shares: [u32; 2],
) -> (Vec<Cw>, [Vec<[Block; 2]>; 2]) {
    let mut cws: Vec<Cw> = Vec::with_capacity(n);
    let mut levels: [Vec<[Block; 2]>; 2] = [Vec::with_capacity(n), Vec::with_capacity(n)];
    for j in 1..=n {
        let x: [[Block; 2]; 2] = std::array::from_fn(|b| {
            let (xors, ()) = walk(
                roots[b],
                &cws,
                j,
                &mut [],
                0,
                || (),
                |_, _, _, _| {},
                |_, _| (),
            );
            xors[j - 1]
        });
        // Step 5: G call j.
        let cw = g_level(
            [level_bit(r_shares[0], n, j), level_bit(r_shares[1], n, j)],
            x,
        );
        cws.push(cw);
        levels[0].push(x[0]);
        levels[1].push(x[1]);
    }
    (cws, levels)
}

/// Algorithm 2, step 9: each party's control-bit count T_b and payload sums W_b over its
/// leaves.
fn leaf_sums(n: usize, roots: [Block; 2], cws: &[Cw]) -> ([u32; 2], [[Fp64; 2]; 2]) {
    let sums: [LeafSums; 2] = std::array::from_fn(|b| {
        walk(
            roots[b],
            cws,
            n,
            &mut [],
            0,
            LeafSums::default,
            |acc, _, nodes, _| leaf_pass(acc, nodes, &mut [], [Fp64::ZERO; 2], false),
            LeafSums::merge,
        )
        .1
    });
    let t = [sums[0].t as u32, sums[1].t as u32];
    let w = [
        [sums[0].w[0].finish(), sums[0].w[1].finish()],
        [sums[1].w[0].finish(), sums[1].w[1].finish()],
    ];
    (t, w)
}

fn random_seed<R: RngCore>(rng: &mut R) -> Block {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    Block::from_le_bytes(b) & SEED
}

/// S_b's offline result: its regenerated full view and its shares of the point function
/// f_{r,(1,α)} on the whole domain.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The full view \overline{view}_b.
    pub view: FullView,
    /// Interleaved shares (⟨z^x⟩_b, ⟨y^x⟩_b) for x = 0..2^n, canonical values below p.
    pub shares: Vec<u64>,
}

/// PIR-GOD Algorithm 2, steps 5–10 at S_b: regenerates the full view from the partial view by
/// running Algorithm 1 locally with the supplied G outputs, and evaluates the key on the whole
/// domain in the same pass (no separate Π_Eval, spec §11 P11).
pub fn regenerate(holder: Holder, partial: PartialView) -> Evaluation {
    let n = partial.outputs.cws.len();
    let root = (partial.inputs.seed & SEED) | Block::from(holder == Holder::One);
    let gamma = partial.outputs.gamma;
    let neg = holder == Holder::One;
    let mut shares = vec![0u64; 2usize << n];
    let (levels, sums) = walk(
        root,
        &partial.outputs.cws,
        n,
        &mut shares,
        2,
        LeafSums::default,
        |acc, _, nodes, out| leaf_pass(acc, nodes, out, gamma, neg),
        LeafSums::merge,
    );
    let view = FullView {
        inputs: partial.inputs,
        g_inputs: GInputs {
            levels,
            t_sum: sums.t as u32,
            w_sum: [sums.w[0].finish(), sums.w[1].finish()],
        },
        outputs: partial.outputs,
    };
    Evaluation { view, shares }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn keygen_is_a_correct_dpf_exhaustively() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for n in 1..=12u8 {
            for _ in 0..6 {
                let g = generate(n, &mut rng);
                let e0 = regenerate(Holder::Zero, g.views[0].partial());
                let e1 = regenerate(Holder::One, g.views[1].partial());
                assert_eq!(e0.view, g.views[0], "n = {n}: view 0 regenerated");
                assert_eq!(e1.view, g.views[1], "n = {n}: view 1 regenerated");
                for x in 0..1usize << n {
                    let z = Fp64::from_u64(e0.shares[2 * x]) + Fp64::from_u64(e1.shares[2 * x]);
                    let y =
                        Fp64::from_u64(e0.shares[2 * x + 1]) + Fp64::from_u64(e1.shares[2 * x + 1]);
                    if x == g.r as usize {
                        assert_eq!((z, y), (Fp64::ONE, g.alpha), "n = {n}, x = r = {x}");
                    } else {
                        assert_eq!((z, y), (Fp64::ZERO, Fp64::ZERO), "n = {n}, x = {x}");
                    }
                }
                assert!(check_g([&g.views[0], &g.views[1]]).is_none());
                assert_eq!(reconstruct([&g.views[0], &g.views[1]]).0, g.r);
                let t = [g.views[0].g_inputs.t_sum, g.views[1].g_inputs.t_sum];
                assert_eq!(t[0].abs_diff(t[1]), 1, "T_1 − T_0 = ±1 (spec §11 P7)");
            }
        }
    }

    #[test]
    fn parallel_walk_matches_serial_depth() {
        // Depth 14 crosses PAR_MIN_DEPTH: spot-check the point and a few others.
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let g = generate(14, &mut rng);
        let e0 = regenerate(Holder::Zero, g.views[0].partial());
        let e1 = regenerate(Holder::One, g.views[1].partial());
        assert_eq!(e0.view, g.views[0]);
        assert_eq!(e1.view, g.views[1]);
        let mut nonzero = 0;
        for x in 0..1usize << 14 {
            let z = Fp64::from_u64(e0.shares[2 * x]) + Fp64::from_u64(e1.shares[2 * x]);
            if z != Fp64::ZERO {
                nonzero += 1;
                assert_eq!(x, g.r as usize);
            }
        }
        assert_eq!(nonzero, 1);
    }

    #[test]
    fn g_oracle_detects_every_tampered_output() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let g = generate(6, &mut rng);
        let base = [g.views[0].clone(), g.views[1].clone()];
        for j in 0..6 {
            for what in 0..3 {
                let mut v = base.clone();
                for view in &mut v {
                    let cw = &mut view.outputs.cws[j];
                    match what {
                        0 => cw.sigma ^= 1 << 77,
                        1 => cw.tau[0] ^= true,
                        _ => cw.tau[1] ^= true,
                    }
                }
                assert_eq!(check_g([&v[0], &v[1]]), Some(j + 1));
            }
        }
        let mut v = base.clone();
        for view in &mut v {
            view.outputs.gamma[1] += Fp64::ONE;
        }
        assert_eq!(check_g([&v[0], &v[1]]), Some(7));
        // A tampered G input changes what G computes.
        let mut v = base.clone();
        v[0].g_inputs.levels[2][0] ^= 1 << 40;
        v[0].g_inputs.levels[2][1] ^= 1 << 40;
        assert_eq!(check_g([&v[0], &v[1]]), Some(3));
        let mut v = base;
        v[1].g_inputs.w_sum[0] += Fp64::ONE;
        assert_eq!(check_g([&v[0], &v[1]]), Some(7));
    }

    #[test]
    fn g_final_sign_rule() {
        let v = [[Fp64::from_u64(3), Fp64::from_u64(5)], [Fp64::ZERO; 2]];
        let w = [
            [Fp64::from_u64(10), Fp64::ZERO],
            [Fp64::from_u64(4), Fp64::ONE],
        ];
        // q = 0: γ = v − W_0 + W_1.
        let g = g_final([2, 1], w, v);
        assert_eq!(
            g,
            [Fp64::from_u64(3) - Fp64::from_u64(6), Fp64::from_u64(6)]
        );
        // q = 1: negated.
        let g1 = g_final([1, 2], w, v);
        assert_eq!(g1, [-g[0], -g[1]]);
    }
}
