//! AES-128 through the `aes` crate: the backend of CPUs without AES-NI (its bitsliced software
//! implementation) and of other architectures (where the crate picks the ARMv8 instructions at
//! run time). On x86-64 with AES-NI the `ni` module runs instead. Same interface as `ni`.
//!
//! Every function runs its whole loop inside one [`BlockEncrypt::encrypt_with_backend`] call,
//! so the crate's backend check happens once per loop, not once per block.

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::typenum::Unsigned;
use aes::cipher::{BlockBackend, BlockClosure, BlockEncrypt, BlockSizeUser, KeyInit};

use doram_field::Z64;

use super::{AesKernel, BATCH, Block, NODE_SLOTS, WithAes, hi, lo, sigma};

/// AES-128 under one key.
#[derive(Clone)]
pub(super) struct RoundKeys(Aes128Enc);

/// One cipher block as the `aes` crate takes it.
type Ga = GenericArray<u8, U16>;

#[inline(always)]
fn to_ga(x: Block) -> Ga {
    GenericArray::from(x.to_le_bytes())
}

#[inline(always)]
fn from_ga(b: &Ga) -> Block {
    u128::from_le_bytes((*b).into())
}

/// Work that runs with a cipher backend in hand (see the module documentation).
trait Kernel {
    type Out;
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) -> Self::Out;
}

/// The [`BlockClosure`] that runs a [`Kernel`] and keeps its result.
struct Call<'a, K: Kernel> {
    kernel: K,
    out: &'a mut Option<K::Out>,
}

impl<K: Kernel> BlockSizeUser for Call<'_, K> {
    type BlockSize = U16;
}

impl<K: Kernel> BlockClosure for Call<'_, K> {
    #[inline(always)]
    fn call<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        *self.out = Some(self.kernel.run(backend));
    }
}

/// Encrypts eight blocks with `backend` (one call of its parallel kernel when it takes eight
/// blocks at a time, as the AES-NI backend does).
#[inline(always)]
fn enc8<B: BlockBackend<BlockSize = U16>>(backend: &mut B, xs: [Block; BATCH]) -> [Block; BATCH] {
    let mut b: [Ga; BATCH] = xs.map(to_ga);
    proc8(backend, &mut b);
    b.map(|y| from_ga(&y))
}

/// Encrypts eight blocks in place with `backend`.
#[inline(always)]
fn proc8<B: BlockBackend<BlockSize = U16>>(backend: &mut B, b: &mut [Ga; BATCH]) {
    let par = B::ParBlocksSize::USIZE;
    if par > 1 && BATCH.is_multiple_of(par) {
        for c in b.chunks_exact_mut(par) {
            backend.proc_par_blocks_inplace(GenericArray::from_mut_slice(c));
        }
    } else {
        backend.proc_tail_blocks_inplace(b);
    }
}

/// `CCR(x_i) = π(σ(x_i)) ⊕ σ(x_i)` on eight blocks.
#[inline(always)]
fn ccr8<B: BlockBackend<BlockSize = U16>>(backend: &mut B, xs: [Block; BATCH]) -> [Block; BATCH] {
    let s = xs.map(sigma);
    let c = enc8(backend, s);
    std::array::from_fn(|i| c[i] ^ s[i])
}

/// The [`AesKernel`] of a cipher backend.
struct InHand<'a, B>(&'a mut B);

impl<B: BlockBackend<BlockSize = U16>> AesKernel for InHand<'_, B> {
    #[inline(always)]
    fn encrypt(&mut self, x: Block) -> Block {
        let mut b = to_ga(x);
        self.0.proc_block_inplace(&mut b);
        from_ga(&b)
    }

    #[inline(always)]
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]) {
        *xs = enc8(self.0, *xs);
    }

    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        *xs = ccr8(self.0, *xs);
    }
}

/// A [`WithAes`] as a [`Kernel`].
struct Work<W>(W);

impl<W: WithAes> Kernel for Work<W> {
    type Out = W::Output;
    #[inline(always)]
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) -> W::Output {
        self.0.run(&mut InHand(backend))
    }
}

struct Encrypt1(Block);
impl Kernel for Encrypt1 {
    type Out = Block;
    #[inline(always)]
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) -> Block {
        let mut b = to_ga(self.0);
        backend.proc_block_inplace(&mut b);
        from_ga(&b)
    }
}

/// Which function of the eight blocks [`Batch8`] computes.
#[derive(Clone, Copy)]
enum Op {
    Encrypt,
    Cr,
    Ccr,
}

struct Batch8<'a>(Op, &'a mut [Block; BATCH]);
impl Kernel for Batch8<'_> {
    type Out = ();
    #[inline(always)]
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        let xs = *self.1;
        *self.1 = match self.0 {
            Op::Encrypt => enc8(backend, xs),
            Op::Cr => {
                let c = enc8(backend, xs);
                std::array::from_fn(|i| c[i] ^ xs[i])
            }
            Op::Ccr => ccr8(backend, xs),
        };
    }
}

/// The node-word kernels elsewhere, on `u128` values.
struct NodeWordsSplit<'a> {
    nodes: &'a [Block],
    tweaks: &'a [Block; NODE_SLOTS],
    a: &'a mut [Z64],
    v: &'a mut [Z64],
    sum_a: &'a mut [Z64; NODE_SLOTS],
    sum_v: &'a mut [Z64; NODE_SLOTS],
}
impl Kernel for NodeWordsSplit<'_> {
    type Out = ();
    /// σ is applied once per node and once per tweak (`σ(q ⊕ t) = σ(q) ⊕ σ(t)`); the sums
    /// stay in local arrays.
    #[inline(always)]
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        let st: [Block; NODE_SLOTS] = self.tweaks.map(sigma);
        let mut sa = *self.sum_a;
        let mut sv = *self.sum_v;
        let pairs = self
            .a
            .chunks_exact_mut(NODE_SLOTS)
            .zip(self.v.chunks_exact_mut(NODE_SLOTS));
        for (&q, (ac, vc)) in self.nodes.iter().zip(pairs) {
            let sq = sigma(q);
            for half in 0..2 {
                let s: [Block; BATCH] = std::array::from_fn(|i| sq ^ st[half * BATCH + i]);
                let c = enc8(backend, s);
                for i in 0..BATCH {
                    let (j, x) = (half * BATCH + i, c[i] ^ s[i]);
                    ac[j] = Z64(lo(x));
                    vc[j] = Z64(hi(x));
                    sa[j] += Z64(lo(x));
                    sv[j] += Z64(hi(x));
                }
            }
        }
        *self.sum_a = sa;
        *self.sum_v = sv;
    }
}

struct NodeWordsPairs<'a> {
    nodes: &'a [Block],
    first_node: u64,
    tweaks: &'a [Block; BATCH],
    a: &'a mut [Z64],
    sum_a: &'a mut [Z64; NODE_SLOTS],
}
impl Kernel for NodeWordsPairs<'_> {
    type Out = Z64;
    /// As [`NodeWordsSplit`]; the index-weighted sum is `N·P − Σ_r P_r` over the prefix sums
    /// `P_r` of the node totals.
    #[inline(always)]
    fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) -> Z64 {
        let st: [Block; BATCH] = self.tweaks.map(sigma);
        let mut sa = *self.sum_a;
        let (mut prefix, mut prefix_sum) = (Z64(0), Z64(0));
        let rows = self.nodes.iter().zip(self.a.chunks_exact_mut(NODE_SLOTS));
        for (&q, ac) in rows {
            let sq = sigma(q);
            let s: [Block; BATCH] = std::array::from_fn(|i| sq ^ st[i]);
            let c = enc8(backend, s);
            let mut total = Z64(0);
            for m in 0..BATCH {
                let x = c[m] ^ s[m];
                for (j, w) in [(2 * m, lo(x)), (2 * m + 1, hi(x))] {
                    ac[j] = Z64(w);
                    sa[j] += Z64(w);
                    total += Z64(w);
                }
            }
            prefix += total;
            prefix_sum += prefix;
        }
        *self.sum_a = sa;
        let n = self.nodes.len().min(self.a.len() / NODE_SLOTS) as u64;
        Z64(n.wrapping_add(self.first_node)) * prefix - prefix_sum
    }
}

impl RoundKeys {
    /// The key schedule of `key` (16 bytes as in FIPS-197).
    pub(super) fn new(key: [u8; 16]) -> RoundKeys {
        RoundKeys(Aes128Enc::new(&GenericArray::from(key)))
    }

    /// Runs `kernel` with the cipher's backend (see [`Call`]).
    #[inline(always)]
    fn run<K: Kernel>(&self, kernel: K) -> K::Out {
        let mut out = None;
        self.0.encrypt_with_backend(Call {
            kernel,
            out: &mut out,
        });
        out.expect("the aes crate calls the closure exactly once")
    }

    /// Runs `work` with the cipher's backend in hand (see [`Self::run`]).
    #[inline(always)]
    pub(super) fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        self.run(Work(work))
    }

    /// Encrypts one block.
    #[inline(always)]
    pub(super) fn encrypt(&self, x: Block) -> Block {
        self.run(Encrypt1(x))
    }

    /// `E(s ⊕ t) ⊕ s` for `s = x` (`ccr` false) or `s = σ(x)` (`ccr` true) and the tweaks `t`.
    #[inline(always)]
    pub(super) fn hash_few<const N: usize>(
        &self,
        xs: [Block; N],
        tweaks: [Block; N],
        ccr: bool,
    ) -> [Block; N] {
        let mut out = [0; N];
        for ((o, &x), &t) in out.iter_mut().zip(&xs).zip(&tweaks) {
            let s = if ccr { sigma(x) } else { x };
            *o = self.encrypt(s ^ t) ^ s;
        }
        out
    }

    /// `E(E(x) ⊕ t) ⊕ E(x)`.
    #[inline(always)]
    pub(super) fn tccr(&self, t: Block, x: Block) -> Block {
        let p = self.encrypt(x);
        self.encrypt(p ^ t) ^ p
    }

    /// Encrypts [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn encrypt8(&self, xs: &mut [Block; BATCH]) {
        self.run(Batch8(Op::Encrypt, xs))
    }

    /// `π(x) ⊕ x` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn cr8(&self, xs: &mut [Block; BATCH]) {
        self.run(Batch8(Op::Cr, xs))
    }

    /// `π(σ(x)) ⊕ σ(x)` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn ccr8(&self, xs: &mut [Block; BATCH]) {
        self.run(Batch8(Op::Ccr, xs))
    }

    /// See [`super::FixedKeyAes::node_words_split`].
    pub(super) fn node_words_split(
        &self,
        nodes: &[Block],
        tweaks: &[Block; NODE_SLOTS],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) {
        self.run(NodeWordsSplit {
            nodes,
            tweaks,
            a,
            v,
            sum_a,
            sum_v,
        })
    }

    /// See [`super::FixedKeyAes::node_words_pairs`].
    pub(super) fn node_words_pairs(
        &self,
        nodes: &[Block],
        first_node: u64,
        tweaks: &[Block; BATCH],
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        self.run(NodeWordsPairs {
            nodes,
            first_node,
            tweaks,
            a,
            sum_a,
        })
    }
}
