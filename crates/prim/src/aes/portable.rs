//! AES-128 through the `aes` crate, which selects AES-NI at run time when the CPU has it: the
//! backend of builds without the `aes` target feature (the default build). Same interface as
//! the `ni` module.
//!
//! Every function runs its whole loop inside one [`BlockEncrypt::encrypt_with_backend`] call.
//! The `aes` crate calls the closure from a function compiled with the `aes` target feature
//! when the CPU has AES-NI, so the closure's code gets the AES-NI backend's eight-block kernel
//! inlined: blocks stay in registers between the cipher and the surrounding XORs and sums, and
//! the feature checks and the call into the crate happen once per function rather than once
//! per block. On x86-64 the closure's code runs in a function compiled for AVX-512 or AVX2
//! together with AES-NI (a `pulp` feature context chosen at run time), so that it gets 32
//! vector registers and three-operand instructions where the CPU has them. For one block or
//! one batch, the context is entered first and the crate's function inlined into it; for a
//! loop ([`super::WithAes`], the node-word kernels) the crate's function comes first and the
//! loop enters the context from there, as a function that large is not inlined (see
//! `RoundKeys::run_loop`). Without AES-NI the same code runs on the crate's bitsliced software
//! backend.
//!
//! A call that hashes one block or one batch of eight pays the entry (about 2 ns), so loops
//! should not call [`super::FixedKeyAes::ccr8`] or [`super::FixedKeyAes::ccr`] per batch but
//! run through [`super::FixedKeyAes::with_aes`].

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::typenum::Unsigned;
use aes::cipher::{BlockBackend, BlockClosure, BlockEncrypt, BlockSizeUser, KeyInit};

use doram_field::Z64;

use super::{AesKernel, BATCH, Block, NODE_SLOTS, WithAes, sigma};
#[cfg(not(target_arch = "x86_64"))]
use super::{hi, lo};
#[cfg(target_arch = "x86_64")]
use safe_arch::m128i;

#[cfg(target_arch = "x86_64")]
pulp::simd_type!({
    /// x86-64-v4 (AVX-512) with AES-NI: the context the kernels run in where the CPU has both,
    /// so that the inlined cipher code may use all 32 vector registers and three-operand
    /// instructions.
    struct AesV4 {
        sse: f!("sse"),
        sse2: f!("sse2"),
        fxsr: f!("fxsr"),
        sse3: f!("sse3"),
        ssse3: f!("ssse3"),
        sse4_1: f!("sse4.1"),
        sse4_2: f!("sse4.2"),
        popcnt: f!("popcnt"),
        avx: f!("avx"),
        avx2: f!("avx2"),
        bmi1: f!("bmi1"),
        bmi2: f!("bmi2"),
        fma: f!("fma"),
        lzcnt: f!("lzcnt"),
        avx512f: f!("avx512f"),
        avx512bw: f!("avx512bw"),
        avx512cd: f!("avx512cd"),
        avx512dq: f!("avx512dq"),
        avx512vl: f!("avx512vl"),
        aes: f!("aes"),
    }
});

#[cfg(target_arch = "x86_64")]
pulp::simd_type!({
    /// x86-64-v3 (AVX2) with AES-NI: the context where the CPU has no AVX-512.
    struct AesV3 {
        sse: f!("sse"),
        sse2: f!("sse2"),
        fxsr: f!("fxsr"),
        sse3: f!("sse3"),
        ssse3: f!("ssse3"),
        sse4_1: f!("sse4.1"),
        sse4_2: f!("sse4.2"),
        popcnt: f!("popcnt"),
        avx: f!("avx"),
        avx2: f!("avx2"),
        bmi1: f!("bmi1"),
        bmi2: f!("bmi2"),
        fma: f!("fma"),
        lzcnt: f!("lzcnt"),
        aes: f!("aes"),
    }
});

/// Runs `f` inside a function compiled with AES-NI and the widest vector extension the CPU
/// has, or directly on a CPU without AES-NI or AVX2.
#[inline(always)]
fn with_context<R>(f: impl FnMut() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(simd) = AesV4::try_new() {
            return simd.vectorize(Body(f));
        }
        if let Some(simd) = AesV3::try_new() {
            return simd.vectorize(Body(f));
        }
    }
    let mut f = f;
    f()
}

/// A closure as `pulp` runs it. Called through `FnMut`, so that the closure's own body (and
/// its `#[inline(always)]`) is what gets inlined; `FnOnce::call_once` of a closure is a shim
/// that the compiler may leave out of line, compiled without the features.
struct Body<F>(F);

impl<R, F: FnMut() -> R> pulp::NullaryFnOnce for Body<F> {
    type Output = R;

    #[inline(always)]
    fn call(mut self) -> R {
        (self.0)()
    }
}

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

/// The [`BlockClosure`] that runs a [`Kernel`] and keeps its result; with `CONTEXT`, inside
/// [`with_context`].
struct Call<'a, K: Kernel, const CONTEXT: bool> {
    kernel: K,
    out: &'a mut Option<K::Out>,
}

impl<K: Kernel, const CONTEXT: bool> BlockSizeUser for Call<'_, K, CONTEXT> {
    type BlockSize = U16;
}

impl<K: Kernel, const CONTEXT: bool> BlockClosure for Call<'_, K, CONTEXT> {
    #[inline(always)]
    fn call<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        if CONTEXT {
            let mut kernel = Some(self.kernel);
            *self.out = Some(with_context(
                #[inline(always)]
                || {
                    kernel
                        .take()
                        .expect("the context runs its body once")
                        .run(backend)
                },
            ));
        } else {
            *self.out = Some(self.kernel.run(backend));
        }
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

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]) {
        *xs = enc8(self.0, *xs);
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        *xs = ccr8(self.0, *xs);
    }

    // On x86-64 the blocks go to the cipher as vector registers, and σ and the XORs stay in
    // them (as `u128` values they would travel through pairs of general registers).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]) {
        *xs = sse2::enc8(self.0, xs.map(m128i::from)).map(u128::from);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn cr8(&mut self, xs: &mut [Block; BATCH]) {
        let x = xs.map(m128i::from);
        let c = sse2::enc8(self.0, x);
        *xs = std::array::from_fn(|i| u128::from(c[i] ^ x[i]));
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        let s = xs.map(|x| sse2::sigma(m128i::from(x)));
        let c = sse2::enc8(self.0, s);
        *xs = std::array::from_fn(|i| u128::from(c[i] ^ s[i]));
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

/// The node-word kernels on x86-64: those of the `ni` module, with the cipher from the
/// backend; σ and the lane sums use SSE2 registers (lane 0 the low, lane 1 the high word).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use aes::cipher::BlockBackend;
    use aes::cipher::consts::U16;
    use doram_field::Z64;
    use safe_arch::{
        add_i64_m128i, byte_shl_imm_u128_m128i, m128i, shuffle_ai_f32_all_m128i,
        unpack_high_i64_m128i, unpack_low_i64_m128i,
    };

    use aes::cipher::generic_array::GenericArray;

    use super::{BATCH, Block, Ga, Kernel, NODE_SLOTS, proc8};

    /// Encrypts eight blocks held in vector registers with `backend`.
    #[inline(always)]
    pub(super) fn enc8<B: BlockBackend<BlockSize = U16>>(
        backend: &mut B,
        xs: [m128i; BATCH],
    ) -> [m128i; BATCH] {
        let mut b: [Ga; BATCH] = xs.map(|x| GenericArray::from(<[u8; 16]>::from(x)));
        proc8(backend, &mut b);
        b.map(|y| m128i::from(<[u8; 16]>::from(y)))
    }

    /// σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi on a vector register: `[hi, hi] ⊕ [0, lo]`.
    #[inline(always)]
    pub(super) fn sigma(x: m128i) -> m128i {
        shuffle_ai_f32_all_m128i::<0b11_10_11_10>(x) ^ byte_shl_imm_u128_m128i::<8>(x)
    }

    /// `CCR(x ⊕ t_i)` for eight tweaks, from `σ(x)` and the `σ(t_i)`.
    #[inline(always)]
    fn ccr8_sigma<B: BlockBackend<BlockSize = U16>>(
        backend: &mut B,
        sx: m128i,
        st: &[m128i; BATCH],
    ) -> [m128i; BATCH] {
        let s: [m128i; BATCH] = std::array::from_fn(|i| sx ^ st[i]);
        let c = enc8(backend, s);
        std::array::from_fn(|i| c[i] ^ s[i])
    }

    pub(super) struct NodeWordsSplit<'a> {
        pub(super) nodes: &'a [Block],
        pub(super) tweaks: &'a [Block; NODE_SLOTS],
        pub(super) a: &'a mut [Z64],
        pub(super) v: &'a mut [Z64],
        pub(super) sum_a: &'a mut [Z64; NODE_SLOTS],
        pub(super) sum_v: &'a mut [Z64; NODE_SLOTS],
    }

    impl Kernel for NodeWordsSplit<'_> {
        type Out = ();
        #[inline(always)]
        fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
            let st: [m128i; NODE_SLOTS] = self.tweaks.map(|t| sigma(m128i::from(t)));
            let st0: [m128i; BATCH] = std::array::from_fn(|i| st[i]);
            let st1: [m128i; BATCH] = std::array::from_fn(|i| st[BATCH + i]);
            let mut acc0 = [m128i::default(); BATCH];
            let mut acc1 = [m128i::default(); BATCH];
            let pairs = self
                .a
                .chunks_exact_mut(NODE_SLOTS)
                .zip(self.v.chunks_exact_mut(NODE_SLOTS));
            for (&q, (ac, vc)) in self.nodes.iter().zip(pairs) {
                let sq = sigma(m128i::from(q));
                for (half, (st, acc)) in [(&st0, &mut acc0), (&st1, &mut acc1)]
                    .into_iter()
                    .enumerate()
                {
                    let o = ccr8_sigma(backend, sq, st);
                    for i in 0..BATCH {
                        acc[i] = add_i64_m128i(acc[i], o[i]);
                    }
                    let at = half * BATCH;
                    for p in 0..BATCH / 2 {
                        let lo: [u64; 2] = unpack_low_i64_m128i(o[2 * p], o[2 * p + 1]).into();
                        let hi: [u64; 2] = unpack_high_i64_m128i(o[2 * p], o[2 * p + 1]).into();
                        ac[at + 2 * p] = Z64(lo[0]);
                        ac[at + 2 * p + 1] = Z64(lo[1]);
                        vc[at + 2 * p] = Z64(hi[0]);
                        vc[at + 2 * p + 1] = Z64(hi[1]);
                    }
                }
            }
            for (j, x) in acc0.iter().chain(&acc1).enumerate() {
                let [l, h]: [u64; 2] = (*x).into();
                self.sum_a[j] += Z64(l);
                self.sum_v[j] += Z64(h);
            }
        }
    }

    pub(super) struct NodeWordsPairs<'a> {
        pub(super) nodes: &'a [Block],
        pub(super) first_node: u64,
        pub(super) tweaks: &'a [Block; BATCH],
        pub(super) a: &'a mut [Z64],
        pub(super) sum_a: &'a mut [Z64; NODE_SLOTS],
    }

    impl Kernel for NodeWordsPairs<'_> {
        type Out = Z64;
        #[inline(always)]
        fn run<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) -> Z64 {
            let st: [m128i; BATCH] = self.tweaks.map(|t| sigma(m128i::from(t)));
            let mut acc = [m128i::default(); BATCH];
            // Σ_r r·T_r over the node totals T_r, as N·P − Σ_r P_r with the prefix sums P_r.
            let mut prefix = m128i::default();
            let mut prefix_sum = m128i::default();
            let rows = self.nodes.iter().zip(self.a.chunks_exact_mut(NODE_SLOTS));
            for (&q, ac) in rows {
                let o = ccr8_sigma(backend, sigma(m128i::from(q)), &st);
                let mut total = m128i::default();
                for i in 0..BATCH {
                    acc[i] = add_i64_m128i(acc[i], o[i]);
                    total = add_i64_m128i(total, o[i]);
                    let [l, h]: [u64; 2] = o[i].into();
                    ac[2 * i] = Z64(l);
                    ac[2 * i + 1] = Z64(h);
                }
                prefix = add_i64_m128i(prefix, total);
                prefix_sum = add_i64_m128i(prefix_sum, prefix);
            }
            for (i, x) in acc.iter().enumerate() {
                let [l, h]: [u64; 2] = (*x).into();
                self.sum_a[2 * i] += Z64(l);
                self.sum_a[2 * i + 1] += Z64(h);
            }
            let [pl, ph]: [u64; 2] = prefix.into();
            let [sl, sh]: [u64; 2] = prefix_sum.into();
            let (p, s) = (Z64(pl) + Z64(ph), Z64(sl) + Z64(sh));
            let n = self.nodes.len().min(self.a.len() / NODE_SLOTS) as u64;
            Z64(n.wrapping_add(self.first_node)) * p - s
        }
    }
}
#[cfg(target_arch = "x86_64")]
use sse2::{NodeWordsPairs, NodeWordsSplit};

/// The node-word kernels elsewhere, on `u128` values.
#[cfg(not(target_arch = "x86_64"))]
struct NodeWordsSplit<'a> {
    nodes: &'a [Block],
    tweaks: &'a [Block; NODE_SLOTS],
    a: &'a mut [Z64],
    v: &'a mut [Z64],
    sum_a: &'a mut [Z64; NODE_SLOTS],
    sum_v: &'a mut [Z64; NODE_SLOTS],
}
#[cfg(not(target_arch = "x86_64"))]
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

#[cfg(not(target_arch = "x86_64"))]
struct NodeWordsPairs<'a> {
    nodes: &'a [Block],
    first_node: u64,
    tweaks: &'a [Block; BATCH],
    a: &'a mut [Z64],
    sum_a: &'a mut [Z64; NODE_SLOTS],
}
#[cfg(not(target_arch = "x86_64"))]
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

    /// Runs a small `kernel` (one block or one batch) with the cipher's backend, in a context
    /// compiled with AES-NI and AVX-512 or AVX2 when the CPU has them: the crate's function
    /// that hands out the backend is small enough then to be inlined into the context.
    #[inline(always)]
    fn run<K: Kernel>(&self, kernel: K) -> K::Out {
        let mut kernel = Some(kernel);
        with_context(
            #[inline(always)]
            || self.call::<K, false>(kernel.take().expect("the context runs its body once")),
        )
    }

    /// Runs a `kernel` that loops with the cipher's backend: the other way round from
    /// [`Self::run`], the crate's function hands out the backend and the kernel enters the
    /// context from there. (A loop inside the crate's function makes it too large to be
    /// inlined into a context around it, and the loop would then be compiled for AES-NI
    /// alone: 16 vector registers, too few for the eleven round keys and eight blocks.)
    #[inline(always)]
    fn run_loop<K: Kernel>(&self, kernel: K) -> K::Out {
        self.call::<K, true>(kernel)
    }

    /// Runs `kernel` with the cipher's backend (see [`Call`]).
    #[inline(always)]
    fn call<K: Kernel, const CONTEXT: bool>(&self, kernel: K) -> K::Out {
        let mut out = None;
        self.0.encrypt_with_backend(Call::<K, CONTEXT> {
            kernel,
            out: &mut out,
        });
        out.expect("the aes crate calls the closure exactly once")
    }

    /// Runs `work` with the cipher's backend in hand (see [`Self::run_loop`]).
    #[inline(always)]
    pub(super) fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        self.run_loop(Work(work))
    }

    /// Encrypts one block.
    #[inline(always)]
    pub(super) fn encrypt(&self, x: Block) -> Block {
        self.run(Encrypt1(x))
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
        self.run_loop(NodeWordsSplit {
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
        self.run_loop(NodeWordsPairs {
            nodes,
            first_node,
            tweaks,
            a,
            sum_a,
        })
    }
}
