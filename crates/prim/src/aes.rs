//! AES-128 on 128-bit blocks, fixed-key AES as a public random permutation π, and the
//! correlation-robust hash functions of Guo–Katz–Wang–Yu (2020) built from it.
//!
//! Blocks are handled as `u128` values ([`Block`]); the byte order is little-endian, so that the
//! block `x` is encrypted as the 16 bytes `x.to_le_bytes()`. The default build runs on any
//! x86-64: where the CPU has AES-NI (checked at run time) the AES-NI instructions run (private
//! module `ni`), two blocks per instruction where it also has VAES; elsewhere the `aes` crate's
//! software backend (private module `portable`). A build for the host CPU
//! (`RUSTFLAGS="-C target-cpu=native"`) compiles the same code without the run-time choice. The
//! batch functions feed the cipher [`BATCH`] blocks at a time, which keeps the hardware pipeline
//! full (AES has a latency of several cycles per round, and the CPU can start one or two rounds
//! per cycle).
//!
//! Loops over many blocks run with the cipher in hand: a [`WithAes`] value passed to
//! [`Aes128Cipher::with_aes`] or [`FixedKeyAes::with_aes`] gets an [`AesKernel`], and its loop
//! is compiled inside the code of the backend chosen at run time, so that the CPU check and the
//! entry into that code happen once per loop rather than once per batch.
//!
//! Hash functions, with π = AES-128 under the public key [`FIXED_KEY`]
//! (GKWY20 = Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from Fixed-Key
//! Block Ciphers", IEEE S&P 2020):
//!
//! * [`FixedKeyAes::cr`]: `π(x) ⊕ x`, the Matyas–Meyer–Oseas construction, a correlation-robust
//!   hash (GKWY20 §7.1).
//! * [`FixedKeyAes::ccr`]: `π(σ(x)) ⊕ σ(x)` with the linear orthomorphism
//!   `σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi`, a circular correlation-robust hash (GKWY20 §7.3).
//! * [`FixedKeyAes::tccr`]: `π(π(x) ⊕ i) ⊕ π(x)`, a tweakable circular correlation-robust hash
//!   with tweak `i` (GKWY20 §7.4).

use std::sync::LazyLock;

use doram_field::Z64;

// The backends: AES-NI when the CPU has it (x86-64), else the `aes` crate. Both modules have
// the same interface, and `RoundKeys` picks one when a cipher is keyed.
#[cfg(target_arch = "x86_64")]
mod context;
#[cfg(target_arch = "x86_64")]
mod ni;
#[cfg(not(all(target_arch = "x86_64", target_feature = "aes")))]
mod portable;

/// The key schedule in the backend this CPU runs.
// The software variant is the larger (the `aes` crate keeps its bitsliced schedule too); one per
// cipher, so no box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
enum RoundKeys {
    #[cfg(target_arch = "x86_64")]
    Ni(ni::RoundKeys),
    #[cfg(not(all(target_arch = "x86_64", target_feature = "aes")))]
    Soft(portable::RoundKeys),
}

/// Calls the same method on whichever backend `$keys` holds.
macro_rules! on_backend {
    ($keys:expr, $k:ident => $body:expr) => {
        match $keys {
            #[cfg(target_arch = "x86_64")]
            RoundKeys::Ni($k) => $body,
            #[cfg(not(all(target_arch = "x86_64", target_feature = "aes")))]
            RoundKeys::Soft($k) => $body,
        }
    };
}

impl RoundKeys {
    fn new(key: [u8; 16]) -> RoundKeys {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = ni::RoundKeys::new(key) {
            return RoundKeys::Ni(k);
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "aes")))]
        return RoundKeys::Soft(portable::RoundKeys::new(key));
        #[cfg(all(target_arch = "x86_64", target_feature = "aes"))]
        unreachable!("a build with the aes target feature runs on CPUs with AES-NI")
    }

    #[inline(always)]
    fn encrypt(&self, x: Block) -> Block {
        on_backend!(self, k => k.encrypt(x))
    }

    #[inline(always)]
    fn encrypt8(&self, xs: &mut [Block; BATCH]) {
        on_backend!(self, k => k.encrypt8(xs))
    }

    #[inline(always)]
    fn hash_few<const N: usize>(
        &self,
        xs: [Block; N],
        tweaks: [Block; N],
        ccr: bool,
    ) -> [Block; N] {
        on_backend!(self, k => k.hash_few(xs, tweaks, ccr))
    }

    #[inline(always)]
    fn tccr(&self, t: Block, x: Block) -> Block {
        on_backend!(self, k => k.tccr(t, x))
    }

    #[inline(always)]
    fn cr8(&self, xs: &mut [Block; BATCH]) {
        on_backend!(self, k => k.cr8(xs))
    }

    #[inline(always)]
    fn ccr8(&self, xs: &mut [Block; BATCH]) {
        on_backend!(self, k => k.ccr8(xs))
    }

    #[inline(always)]
    fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        on_backend!(self, k => k.with_aes(work))
    }

    fn node_words_split(
        &self,
        nodes: &[Block],
        tweaks: &[Block; NODE_SLOTS],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) {
        on_backend!(self, k => k.node_words_split(nodes, tweaks, a, v, sum_a, sum_v))
    }

    fn node_words_pairs(
        &self,
        nodes: &[Block],
        first_node: u64,
        tweaks: &[Block; BATCH],
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        on_backend!(self, k => k.node_words_pairs(nodes, first_node, tweaks, a, sum_a))
    }
}

/// A 128-bit block, little-endian: bit 0 (the "lsb") is bit 0 of byte 0.
pub type Block = u128;

/// How many blocks the batch functions hand to the cipher at once.
pub const BATCH: usize = 8;

/// Slots (leaves) per output node in the node-word kernels
/// ([`FixedKeyAes::node_words_split`], [`FixedKeyAes::node_words_pairs`]).
pub const NODE_SLOTS: usize = 2 * BATCH;

/// The public key of the fixed-key permutation π: the first 128 fractional bits of π (the
/// number), as a nothing-up-my-sleeve constant.
pub const FIXED_KEY: [u8; 16] = 0x243F_6A88_85A3_08D3_1319_8A2E_0370_7344_u128.to_be_bytes();

/// The low 64 bits of a block.
#[inline(always)]
pub const fn lo(x: Block) -> u64 {
    x as u64
}

/// The high 64 bits of a block.
#[inline(always)]
pub const fn hi(x: Block) -> u64 {
    (x >> 64) as u64
}

/// The least significant bit of a block (the control bit of DPF tree nodes).
#[inline(always)]
pub const fn lsb(x: Block) -> bool {
    x & 1 == 1
}

/// The block whose every bit equals `bit` (all zeros or all ones), for branch-free selection.
#[inline(always)]
pub const fn mask(bit: bool) -> Block {
    0u128.wrapping_sub(bit as u128)
}

/// The orthomorphism σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi of GKWY20 §7.3: linear, a permutation, and
/// `x ↦ σ(x) ⊕ x` is a permutation too.
#[inline(always)]
pub const fn sigma(x: Block) -> Block {
    let h = hi(x) as u128;
    let l = lo(x) as u128;
    ((h ^ l) << 64) | h
}

/// AES-128 under one key, in hand: what the loop of a [`WithAes`] sees.
///
/// A loop that hashes or encrypts block after block should run inside one
/// [`Aes128Cipher::with_aes`] (or [`FixedKeyAes::with_aes`]) call and use these methods, rather
/// than call [`Aes128Cipher::encrypt8`] or [`FixedKeyAes::ccr8`] per batch: in a build without
/// the `aes` target feature (the default) each of those calls checks the CPU and enters code
/// compiled for AES-NI, while inside `with_aes` the whole loop is compiled in that code, once per
/// backend, with the cipher inlined into it.
///
/// Under [`FixedKeyAes`] the cipher is the permutation π, so [`encrypt8`](Self::encrypt8) is
/// [`FixedKeyAes::pi8`], [`cr8`](Self::cr8) is [`FixedKeyAes::cr8`] and so on.
pub trait AesKernel {
    /// Encrypts one block.
    fn encrypt(&mut self, x: Block) -> Block;

    /// Encrypts [`BATCH`] blocks in place.
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]);

    /// `E(x) ⊕ x` on [`BATCH`] blocks in place (for π: [`FixedKeyAes::cr8`]).
    #[inline(always)]
    fn cr8(&mut self, xs: &mut [Block; BATCH]) {
        let x = *xs;
        self.encrypt8(xs);
        for (c, x) in xs.iter_mut().zip(x) {
            *c ^= x;
        }
    }

    /// `E(σ(x)) ⊕ σ(x)` on [`BATCH`] blocks in place (for π: [`FixedKeyAes::ccr8`]).
    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        let s = xs.map(sigma);
        *xs = s;
        self.encrypt8(xs);
        for (c, s) in xs.iter_mut().zip(s) {
            *c ^= s;
        }
    }

    /// `E(σ(x_k)) ⊕ σ(x_k)` for `x_k = nodes[k >> O] ⊕ tweaks[k]`, `k < BATCH`: the hashes of
    /// `2^O` tweaked leaves per node (`nodes` has at least `BATCH >> O` entries). The inputs are
    /// formed in vector registers from the slices; built as `u128` values in a batch array
    /// instead, they would be stored as 64-bit halves and reloaded as vectors, which the CPU
    /// cannot forward from the stores.
    #[inline(always)]
    fn ccr8_spread<const O: usize>(
        &mut self,
        nodes: &[Block],
        tweaks: &[Block; BATCH],
    ) -> [Block; BATCH] {
        let mut x: [Block; BATCH] = std::array::from_fn(|k| nodes[k >> O] ^ tweaks[k]);
        self.ccr8(&mut x);
        x
    }

    /// `E(x_k) ⊕ x_k` for `x_k = xs[k] & mask` (the Matyas–Meyer–Oseas hash of masked
    /// seeds), with the masking in vector registers.
    #[inline(always)]
    fn cr8_masked(&mut self, xs: &[Block; BATCH], mask: Block) -> [Block; BATCH] {
        let mut x = [0; BATCH];
        for (x, &y) in x.iter_mut().zip(xs) {
            *x = y & mask;
        }
        self.cr8(&mut x);
        x
    }

    /// `E(σ(x_i) ⊕ t_i) ⊕ σ(x_i)` on a few blocks with their tweaks, interleaved (for π:
    /// [`FixedKeyAes::ccr_tweaked_n`], the half-gates garbling hash).
    #[inline(always)]
    fn ccr_tweaked<const N: usize>(&mut self, xs: [Block; N], tweaks: [Block; N]) -> [Block; N] {
        let mut out = [0; N];
        for ((o, &x), &t) in out.iter_mut().zip(&xs).zip(&tweaks) {
            let s = sigma(x);
            *o = self.encrypt(s ^ t) ^ s;
        }
        out
    }

    /// `a ⊕ b`, in a vector register where the kernel has one: labels that the kernel's
    /// [`garble_and`](Self::garble_and) and [`eval_and`](Self::eval_and) load whole are then
    /// stored whole (a 128-bit load of a value stored as two 64-bit halves is not forwarded
    /// from the stores and waits for them to reach the cache).
    #[inline(always)]
    fn xor(&mut self, a: Block, b: Block) -> Block {
        a ^ b
    }

    /// Half-gates garbling of one AND gate under π (ZRE15 Fig. 2, GbAnd) with input zero
    /// labels `a0`, `b0`, global offset `delta` and gate index `j` (its hashes take tweaks
    /// `2j` and `2j + 1`): the output zero label and the table `(T_G, T_E)`.
    #[inline(always)]
    fn garble_and(&mut self, a0: Block, b0: Block, delta: Block, j: u64) -> [Block; 3] {
        let j0 = Block::from(j) << 1;
        let j1 = j0 | 1;
        let [ha0, ha1, hb0, hb1] =
            self.ccr_tweaked([a0, a0 ^ delta, b0, b0 ^ delta], [j0, j0, j1, j1]);
        let (pa, pb) = (mask(lsb(a0)), mask(lsb(b0)));
        let tg = ha0 ^ ha1 ^ (pb & delta);
        let wg = ha0 ^ (pa & tg);
        let te = hb0 ^ hb1 ^ a0;
        let we = hb0 ^ (pb & (te ^ a0));
        [wg ^ we, tg, te]
    }

    /// Half-gates evaluation of one AND gate under π (ZRE15 Fig. 2, EvAnd): the output label
    /// from the input labels `a`, `b`, the table `T_G ‖ T_E` (little-endian) and the gate
    /// index `j`.
    #[inline(always)]
    fn eval_and(&mut self, a: Block, b: Block, table: &[u8; 32], j: u64) -> Block {
        let (halves, _) = table.as_chunks::<16>();
        let (tg, te) = (
            Block::from_le_bytes(halves[0]),
            Block::from_le_bytes(halves[1]),
        );
        let j0 = Block::from(j) << 1;
        let [ha, hb] = self.ccr_tweaked([a, b], [j0, j0 | 1]);
        let wg = ha ^ (mask(lsb(a)) & tg);
        let we = hb ^ (mask(lsb(b)) & (te ^ a));
        wg ^ we
    }

    /// `E(x) ⊕ x` on one block (for π: [`FixedKeyAes::cr`]).
    #[inline(always)]
    fn cr(&mut self, x: Block) -> Block {
        self.encrypt(x) ^ x
    }

    /// `E(σ(x)) ⊕ σ(x)` on one block (for π: [`FixedKeyAes::ccr`]).
    #[inline(always)]
    fn ccr(&mut self, x: Block) -> Block {
        let s = sigma(x);
        self.encrypt(s) ^ s
    }
}

/// A loop to run with the cipher in hand ([`AesKernel`]), through [`Aes128Cipher::with_aes`] or
/// [`FixedKeyAes::with_aes`].
///
/// `run` is generic over the kernel, so that it is compiled once per backend inside the code the
/// backend runs in; mark it `#[inline(always)]`, as the point is that it is inlined there.
pub trait WithAes {
    /// What the loop returns.
    type Output;

    /// The loop, with the cipher in hand.
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output;
}

/// Splits `xs` into whole batches of [`BATCH`] elements and the remainder.
#[inline]
pub fn batches_mut<T>(xs: &mut [T]) -> (impl Iterator<Item = &mut [T; BATCH]>, &mut [T]) {
    let whole = xs.len() / BATCH * BATCH;
    let (head, tail) = xs.split_at_mut(whole);
    let it = head
        .chunks_exact_mut(BATCH)
        .map(|c| <&mut [T; BATCH]>::try_from(c).expect("chunks_exact_mut yields whole batches"));
    (it, tail)
}

/// Splits `xs` into whole batches of [`BATCH`] elements and the remainder.
#[inline]
pub fn batches<T>(xs: &[T]) -> (impl Iterator<Item = &[T; BATCH]>, &[T]) {
    let whole = xs.len() / BATCH * BATCH;
    let (head, tail) = xs.split_at(whole);
    let it = head
        .chunks_exact(BATCH)
        .map(|c| <&[T; BATCH]>::try_from(c).expect("chunks_exact yields whole batches"));
    (it, tail)
}

/// AES-128 encryption under one key (hardware AES when available).
///
/// On a CPU with AES-NI (checked when the cipher is keyed) blocks go straight through the
/// AES-NI instructions (module `ni`); otherwise through the `aes` crate's software backend.
#[derive(Clone)]
pub struct Aes128Cipher {
    keys: RoundKeys,
}

impl std::fmt::Debug for Aes128Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys may be secret (PRG seeds): never print them.
        f.write_str("Aes128Cipher(..)")
    }
}

impl Aes128Cipher {
    /// The cipher keyed with `key`.
    pub fn new(key: [u8; 16]) -> Self {
        Aes128Cipher {
            keys: RoundKeys::new(key),
        }
    }

    /// Encrypts one block.
    #[inline]
    pub fn encrypt(&self, x: Block) -> Block {
        self.keys.encrypt(x)
    }

    /// Encrypts exactly [`BATCH`] blocks in place; the unit every other batch function uses.
    #[inline]
    pub fn encrypt8(&self, xs: &mut [Block; BATCH]) {
        self.keys.encrypt8(xs)
    }

    /// Runs `work` with the cipher in hand (see [`AesKernel`]): the CPU is checked once, and the
    /// loop runs in code compiled for the backend chosen.
    #[inline]
    pub fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        self.keys.with_aes(work)
    }

    /// Encrypts every block of `xs` in place, [`BATCH`] at a time.
    pub fn encrypt_in_place(&self, xs: &mut [Block]) {
        self.with_aes(InPlace(Hash::Encrypt, xs))
    }
}

/// Which function of the blocks [`InPlace`] applies.
#[derive(Clone, Copy)]
enum Hash {
    Encrypt,
    Cr,
    Ccr,
}

/// A hash applied to every block of a slice, [`BATCH`] at a time.
struct InPlace<'a>(Hash, &'a mut [Block]);

impl WithAes for InPlace<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        let (chunks, rest) = batches_mut(self.1);
        for c in chunks {
            match self.0 {
                Hash::Encrypt => aes.encrypt8(c),
                Hash::Cr => aes.cr8(c),
                Hash::Ccr => aes.ccr8(c),
            }
        }
        for x in rest {
            *x = match self.0 {
                Hash::Encrypt => aes.encrypt(*x),
                Hash::Cr => aes.cr(*x),
                Hash::Ccr => aes.ccr(*x),
            };
        }
    }
}

/// [`FixedKeyAes::tccr_in_place`]'s loop.
struct TccrInPlace<'a> {
    tweaks: &'a [Block],
    xs: &'a mut [Block],
}

impl WithAes for TccrInPlace<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        let (chunks, rest) = batches_mut(self.xs);
        let (tw, tw_rest) = batches(self.tweaks);
        for (arr, t) in chunks.zip(tw) {
            aes.encrypt8(arr);
            let p = *arr;
            for (a, ti) in arr.iter_mut().zip(t) {
                *a ^= ti;
            }
            aes.encrypt8(arr);
            for (a, pi) in arr.iter_mut().zip(p) {
                *a ^= pi;
            }
        }
        for (x, t) in rest.iter_mut().zip(tw_rest) {
            let p = aes.encrypt(*x);
            *x = aes.encrypt(p ^ t) ^ p;
        }
    }
}

/// Fixed-key AES: the public permutation π = AES-128(FIXED_KEY, ·) and the hashes built on it.
#[derive(Clone, Debug)]
pub struct FixedKeyAes {
    pi: Aes128Cipher,
}

static FIXED: LazyLock<FixedKeyAes> = LazyLock::new(|| FixedKeyAes {
    pi: Aes128Cipher::new(FIXED_KEY),
});

/// The process-wide fixed-key AES instance (its key schedule is computed once).
///
/// Hot loops should call this once and keep the reference.
pub fn fixed_key() -> &'static FixedKeyAes {
    &FIXED
}

impl FixedKeyAes {
    /// π(x): the fixed-key permutation.
    #[inline]
    pub fn pi(&self, x: Block) -> Block {
        self.pi.encrypt(x)
    }

    /// π on [`BATCH`] blocks in place.
    #[inline]
    pub fn pi8(&self, xs: &mut [Block; BATCH]) {
        self.pi.encrypt8(xs)
    }

    /// π on every block of `xs`, in place.
    pub fn pi_in_place(&self, xs: &mut [Block]) {
        self.pi.encrypt_in_place(xs)
    }

    /// Runs `work` with π in hand (see [`AesKernel`]).
    #[inline]
    pub fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        self.pi.with_aes(work)
    }

    /// The correlation-robust hash `π(x) ⊕ x` (MMO; GKWY20 §7.1).
    #[inline]
    pub fn cr(&self, x: Block) -> Block {
        let [h] = self.pi.keys.hash_few([x], [0], false);
        h
    }

    /// The circular correlation-robust hash `π(σ(x)) ⊕ σ(x)` (GKWY20 §7.3).
    #[inline]
    pub fn ccr(&self, x: Block) -> Block {
        let [h] = self.pi.keys.hash_few([x], [0], true);
        h
    }

    /// The tweakable circular correlation-robust hash `π(σ(x) ⊕ i) ⊕ σ(x)` (GKWY20 §7.3, one
    /// call of π; the half-gates garbling hash) of a few blocks with their tweaks, in one entry
    /// into the cipher's code, the calls interleaved.
    #[inline]
    pub fn ccr_tweaked_n<const N: usize>(&self, xs: [Block; N], tweaks: [Block; N]) -> [Block; N] {
        self.pi.keys.hash_few(xs, tweaks, true)
    }

    /// The tweakable circular correlation-robust hash `π(π(x) ⊕ i) ⊕ π(x)` (GKWY20 §7.4).
    #[inline]
    pub fn tccr(&self, tweak: Block, x: Block) -> Block {
        self.pi.keys.tccr(tweak, x)
    }

    /// [`cr`](Self::cr) on [`BATCH`] blocks in place.
    #[inline]
    pub fn cr8(&self, xs: &mut [Block; BATCH]) {
        self.pi.keys.cr8(xs)
    }

    /// [`ccr`](Self::ccr) on [`BATCH`] blocks in place.
    #[inline]
    pub fn ccr8(&self, xs: &mut [Block; BATCH]) {
        self.pi.keys.ccr8(xs)
    }

    /// [`cr`](Self::cr) on every block of `xs`, in place.
    pub fn cr_in_place(&self, xs: &mut [Block]) {
        self.with_aes(InPlace(Hash::Cr, xs))
    }

    /// [`ccr`](Self::ccr) on every block of `xs`, in place.
    pub fn ccr_in_place(&self, xs: &mut [Block]) {
        self.with_aes(InPlace(Hash::Ccr, xs))
    }

    /// The words of DPF output nodes over `Z_2^64`, two per slot: slot `j` of node `q =
    /// nodes[r]` hashes to the block `CCR(q ⊕ tweaks[j])`, whose low half is written to
    /// `a[16r + j]` and added into `sum_a[j]`, and whose high half goes to `v[16r + j]` and
    /// `sum_v[j]`. (The Half-Tree output stage of a DPF with 16 leaves per output node; σ is
    /// applied once per node, as `σ(q ⊕ t) = σ(q) ⊕ σ(t)`, and the sums stay in registers.)
    ///
    /// Nodes beyond `a.len() / 16` or `v.len() / 16` are ignored.
    pub fn node_words_split(
        &self,
        nodes: &[Block],
        tweaks: &[Block; NODE_SLOTS],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) {
        self.pi
            .keys
            .node_words_split(nodes, tweaks, a, v, sum_a, sum_v)
    }

    /// The words of DPF output nodes over `Z_2^64`, one per slot, two slots per hash: block `m`
    /// of node `q = nodes[r]`, `CCR(q ⊕ tweaks[m])`, gives slot `2m` (low half) and slot `2m + 1`
    /// (high half), written to `a[16r + 2m]`, `a[16r + 2m + 1]` and added into `sum_a`. Returns
    /// `Σ_r (first_node + r)·T_r` with `T_r` the sum of node `r`'s sixteen words (the
    /// node-level part of an index-weighted sum `Σ_x x·a[x]`).
    ///
    /// Nodes beyond `a.len() / 16` are ignored.
    pub fn node_words_pairs(
        &self,
        nodes: &[Block],
        first_node: u64,
        tweaks: &[Block; BATCH],
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        self.pi
            .keys
            .node_words_pairs(nodes, first_node, tweaks, a, sum_a)
    }

    /// [`tccr`](Self::tccr) with `tweaks[i]` applied to `xs[i]`, in place.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn tccr_in_place(&self, tweaks: &[Block], xs: &mut [Block]) {
        assert_eq!(tweaks.len(), xs.len(), "one tweak per block");
        self.with_aes(TccrInPlace { tweaks, xs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::Aes128;
    use aes::cipher::generic_array::GenericArray;
    use aes::cipher::{BlockEncrypt, KeyInit};

    /// AES-128 straight from the `aes` crate, as the reference for every definition here.
    fn reference_pi(x: Block) -> Block {
        let c = Aes128::new(&GenericArray::from(FIXED_KEY));
        let mut b = GenericArray::from(x.to_le_bytes());
        c.encrypt_block(&mut b);
        u128::from_le_bytes(b.into())
    }

    fn samples() -> Vec<Block> {
        let mut v = vec![0, 1, u128::MAX, 1 << 64, (1 << 64) - 1];
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for _ in 0..43 {
            x = x
                .wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15)
                .wrapping_add(12345);
            v.push(x);
        }
        v
    }

    /// On a CPU with AES-NI the default backend is `ni`; the software one (what a CPU without
    /// AES-NI, or another architecture, runs) must give the same results for every function.
    #[cfg(all(target_arch = "x86_64", not(target_feature = "aes")))]
    #[test]
    fn software_backend_matches_the_default_one() {
        let soft = FixedKeyAes {
            pi: Aes128Cipher {
                keys: RoundKeys::Soft(portable::RoundKeys::new(FIXED_KEY)),
            },
        };
        let hw = fixed_key();
        let xs = samples();
        for &x in &xs {
            assert_eq!(soft.pi(x), reference_pi(x));
            assert_eq!(soft.ccr(x), hw.ccr(x));
            assert_eq!(soft.tccr(x ^ 5, x), hw.tccr(x ^ 5, x));
        }
        let mut b8: [Block; BATCH] = std::array::from_fn(|i| xs[i]);
        let mut h8 = b8;
        soft.ccr8(&mut b8);
        hw.ccr8(&mut h8);
        assert_eq!(b8, h8);
        soft.cr8(&mut b8);
        hw.cr8(&mut h8);
        assert_eq!(b8, h8);
        let (mut s, mut h) = (xs.clone(), xs.clone());
        soft.tccr_in_place(&xs, &mut s);
        hw.tccr_in_place(&xs, &mut h);
        assert_eq!(s, h);
        let tweaks: [Block; NODE_SLOTS] = std::array::from_fn(|j| (j as u128 + 1) << 70);
        let n = xs.len();
        let run = |f: &FixedKeyAes| {
            let (mut a, mut v) = (vec![Z64(0); NODE_SLOTS * n], vec![Z64(0); NODE_SLOTS * n]);
            let (mut sa, mut sv) = ([Z64(1); NODE_SLOTS], [Z64(2); NODE_SLOTS]);
            f.node_words_split(&xs, &tweaks, &mut a, &mut v, &mut sa, &mut sv);
            let t8: [Block; BATCH] = std::array::from_fn(|m| tweaks[m]);
            let mut b = vec![Z64(0); NODE_SLOTS * n];
            let w = f.node_words_pairs(&xs, 3, &t8, &mut b, &mut sa);
            (a, v, b, sa, sv, w)
        };
        assert!(run(&soft) == run(hw));
    }

    #[test]
    fn node_word_kernels_match_the_hash_definition() {
        let h = fixed_key();
        let nodes = samples();
        let n = nodes.len() - 3;
        let tweaks: [Block; NODE_SLOTS] =
            std::array::from_fn(|j| ((j as u128 + 1) << 64) ^ (j as u128 * 0x1234_5678));
        // Two calls over a split of the nodes, with sums carried over.
        let mut a = vec![Z64(0); NODE_SLOTS * n];
        let mut v = vec![Z64(0); NODE_SLOTS * n];
        let (mut sa, mut sv) = ([Z64(7); NODE_SLOTS], [Z64(9); NODE_SLOTS]);
        let (a0, a1) = a.split_at_mut(NODE_SLOTS * 5);
        let (v0, v1) = v.split_at_mut(NODE_SLOTS * 5);
        h.node_words_split(&nodes[..5], &tweaks, a0, v0, &mut sa, &mut sv);
        h.node_words_split(&nodes[5..], &tweaks, a1, v1, &mut sa, &mut sv);
        let (mut wa, mut wv) = ([Z64(7); NODE_SLOTS], [Z64(9); NODE_SLOTS]);
        for (r, &q) in nodes[..n].iter().enumerate() {
            for j in 0..NODE_SLOTS {
                let x = h.ccr(q ^ tweaks[j]);
                assert_eq!(
                    a[NODE_SLOTS * r + j],
                    Z64(lo(x)),
                    "split, node {r} slot {j}"
                );
                assert_eq!(
                    v[NODE_SLOTS * r + j],
                    Z64(hi(x)),
                    "split, node {r} slot {j}"
                );
                wa[j] += Z64(lo(x));
                wv[j] += Z64(hi(x));
            }
        }
        assert_eq!((sa, sv), (wa, wv));

        let t8: [Block; BATCH] = std::array::from_fn(|m| tweaks[m]);
        let mut a = vec![Z64(0); NODE_SLOTS * n];
        let mut sa = [Z64(3); NODE_SLOTS];
        let (a0, a1) = a.split_at_mut(NODE_SLOTS * 4);
        let w0 = h.node_words_pairs(&nodes[..4], 100, &t8, a0, &mut sa);
        let w1 = h.node_words_pairs(&nodes[4..], 104, &t8, a1, &mut sa);
        let mut wa = [Z64(3); NODE_SLOTS];
        let mut weighted = Z64(0);
        for (r, &q) in nodes[..n].iter().enumerate() {
            for (m, &t) in t8.iter().enumerate() {
                let x = h.ccr(q ^ t);
                for (j, w) in [(2 * m, lo(x)), (2 * m + 1, hi(x))] {
                    assert_eq!(a[NODE_SLOTS * r + j], Z64(w), "pairs, node {r} slot {j}");
                    wa[j] += Z64(w);
                    weighted += Z64(100 + r as u64) * Z64(w);
                }
            }
        }
        assert_eq!(sa, wa);
        assert_eq!(w0 + w1, weighted);
    }

    #[test]
    fn fips197_known_answer() {
        // FIPS-197 Appendix C.1: key 000102…0f, plaintext 00112233…ff.
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let pt = u128::from_be_bytes([
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff,
        ]);
        // Our blocks are little-endian, so the byte string is reversed into the u128.
        let pt_le = u128::from_le_bytes(pt.to_be_bytes());
        let ct = Aes128Cipher::new(key).encrypt(pt_le);
        assert_eq!(
            ct.to_le_bytes(),
            [
                0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
                0xc5, 0x5a
            ]
        );
    }

    #[test]
    fn sigma_is_orthomorphism_on_samples() {
        for x in samples() {
            let s = sigma(x);
            // σ(hi‖lo) = (hi⊕lo)‖hi, and σ(x)⊕x = lo‖(hi⊕lo).
            assert_eq!(hi(s), hi(x) ^ lo(x));
            assert_eq!(lo(s), hi(x));
            assert_eq!(s ^ x, ((lo(x) as u128) << 64) | (hi(x) ^ lo(x)) as u128);
        }
        // Linear: σ(a ⊕ b) = σ(a) ⊕ σ(b).
        let v = samples();
        for w in v.windows(2) {
            assert_eq!(sigma(w[0] ^ w[1]), sigma(w[0]) ^ sigma(w[1]));
        }
    }

    #[test]
    fn hashes_match_direct_aes() {
        let h = fixed_key();
        for x in samples() {
            assert_eq!(h.pi(x), reference_pi(x));
            assert_eq!(h.cr(x), reference_pi(x) ^ x);
            let s = sigma(x);
            assert_eq!(h.ccr(x), reference_pi(s) ^ s);
            let tweak = x.rotate_left(17) ^ 5;
            let p = reference_pi(x);
            assert_eq!(h.tccr(tweak, x), reference_pi(p ^ tweak) ^ p);
        }
    }

    #[test]
    fn batches_match_single_calls() {
        let h = fixed_key();
        let xs = samples(); // 48 blocks: 6 full batches, then test a ragged length too
        for len in [xs.len(), xs.len() - 3, 5, 0] {
            let xs = &xs[..len];
            let mut a = xs.to_vec();
            h.cr_in_place(&mut a);
            assert_eq!(a, xs.iter().map(|&x| h.cr(x)).collect::<Vec<_>>());
            let mut a = xs.to_vec();
            h.ccr_in_place(&mut a);
            assert_eq!(a, xs.iter().map(|&x| h.ccr(x)).collect::<Vec<_>>());
            for (&x, &t) in xs.iter().zip(xs.iter().rev()) {
                let s = sigma(x);
                let want = reference_pi(s ^ t) ^ s;
                assert_eq!(h.ccr_tweaked_n([x], [t]), [want]);
                assert_eq!(h.ccr_tweaked_n([x, x, 0], [t, 0, t])[0], want);
            }
            let mut a = xs.to_vec();
            h.pi_in_place(&mut a);
            assert_eq!(a, xs.iter().map(|&x| reference_pi(x)).collect::<Vec<_>>());
            let tweaks: Vec<Block> = xs.iter().map(|x| x.wrapping_mul(3)).collect();
            let mut a = xs.to_vec();
            h.tccr_in_place(&tweaks, &mut a);
            assert_eq!(
                a,
                xs.iter()
                    .zip(&tweaks)
                    .map(|(&x, &t)| h.tccr(t, x))
                    .collect::<Vec<_>>()
            );
        }
    }

    /// π on every backend this CPU runs: the default one and, where the build does not
    /// assume AES-NI, the software one.
    fn backends() -> Vec<FixedKeyAes> {
        #[cfg_attr(all(target_arch = "x86_64", target_feature = "aes"), allow(unused_mut))]
        let mut backends = vec![fixed_key().clone()];
        #[cfg(not(all(target_arch = "x86_64", target_feature = "aes")))]
        backends.push(FixedKeyAes {
            pi: Aes128Cipher {
                keys: RoundKeys::Soft(portable::RoundKeys::new(FIXED_KEY)),
            },
        });
        backends
    }

    /// `ccr8_spread::<O>` on every backend this CPU runs (the default one, and the software
    /// one) against one `ccr` call per leaf.
    #[test]
    fn spread_hashes_match_single_calls() {
        struct Spread<'a, const O: usize>(&'a [Block], &'a [Block; BATCH]);
        impl<const O: usize> WithAes for Spread<'_, O> {
            type Output = [Block; BATCH];
            fn run<K: AesKernel>(self, aes: &mut K) -> [Block; BATCH] {
                aes.ccr8_spread::<O>(self.0, self.1)
            }
        }
        fn check<const O: usize>(h: &FixedKeyAes, nodes: &[Block], tweaks: &[Block; BATCH]) {
            let want: Vec<Block> = (0..BATCH)
                .map(|k| h.ccr(nodes[k >> O] ^ tweaks[k]))
                .collect();
            assert_eq!(
                h.with_aes(Spread::<O>(nodes, tweaks)).to_vec(),
                want,
                "O = {O}"
            );
        }
        let xs = samples();
        let tweaks: [Block; BATCH] = std::array::from_fn(|k| xs[40 + k]);
        let backends = backends();
        for h in &backends {
            check::<0>(h, &xs[..8], &tweaks);
            check::<1>(h, &xs[8..12], &tweaks);
            check::<2>(h, &xs[12..14], &tweaks);
            check::<3>(h, &xs[14..15], &tweaks);
        }
    }

    /// `garble_and`, `eval_and` and `xor` on every backend this CPU runs against the
    /// half-gates formulas (ZRE15 Fig. 2) written with `ccr_tweaked_n`, and evaluation of
    /// every input pair giving the AND of the bits.
    #[test]
    fn half_gates_match_their_formulas() {
        struct Gate<'a>(&'a [Block], Block);
        impl WithAes for Gate<'_> {
            type Output = Vec<(Block, [Block; 3], [Block; 4])>;
            fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
                let d = self.1;
                let mut out = Vec::new();
                for (j, w) in self.0.windows(2).enumerate() {
                    let (a0, b0) = (w[0], w[1]);
                    let g = aes.garble_and(a0, b0, d, j as u64 * 977);
                    let mut table = [0u8; 32];
                    table[..16].copy_from_slice(&g[1].to_le_bytes());
                    table[16..].copy_from_slice(&g[2].to_le_bytes());
                    let mut ev = [0; 4];
                    for (k, e) in ev.iter_mut().enumerate() {
                        let (x, y) = (mask(k & 1 == 1), mask(k & 2 == 2));
                        *e = aes.eval_and(a0 ^ (x & d), b0 ^ (y & d), &table, j as u64 * 977);
                    }
                    out.push((aes.xor(a0, b0), g, ev));
                }
                out
            }
        }
        let xs = samples();
        // Δ with its last bit set, as the point-and-permute bits need.
        let d = xs[7] | 1;
        let backends = backends();
        for h in &backends {
            for (j, (w, (x, [c, tg, te], ev))) in
                xs.windows(2).zip(h.with_aes(Gate(&xs, d))).enumerate()
            {
                let (a0, b0) = (w[0], w[1]);
                let j0 = (j as u128 * 977) << 1;
                let [ha0, ha1, hb0, hb1] =
                    h.ccr_tweaked_n([a0, a0 ^ d, b0, b0 ^ d], [j0, j0, j0 | 1, j0 | 1]);
                let (pa, pb) = (mask(lsb(a0)), mask(lsb(b0)));
                let want_tg = ha0 ^ ha1 ^ (pb & d);
                let want_te = hb0 ^ hb1 ^ a0;
                let want_c = ha0 ^ (pa & want_tg) ^ hb0 ^ (pb & (want_te ^ a0));
                assert_eq!((c, tg, te), (want_c, want_tg, want_te), "gate {j}");
                assert_eq!(x, a0 ^ b0, "gate {j}");
                for (k, e) in ev.iter().enumerate() {
                    assert_eq!(*e, c ^ mask(k == 3) & d, "gate {j}, inputs {k}");
                }
            }
        }
    }

    #[test]
    fn hashes_differ_from_each_other() {
        let h = fixed_key();
        for x in samples().into_iter().filter(|&x| sigma(x) != x) {
            assert_ne!(h.cr(x), h.ccr(x));
            assert_ne!(h.ccr(x), h.ccr(x ^ 1));
            assert_ne!(h.tccr(0, x), h.tccr(1, x));
        }
    }
}
