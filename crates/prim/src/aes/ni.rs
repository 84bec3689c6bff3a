//! AES-128 on x86-64 with the AES-NI instructions: the cipher rounds through the token of
//! `doram-arch` (which proves the CPU has them), the SSE2 operations around them through the
//! safe wrappers of `safe_arch`. Chosen when the CPU has AES-NI; every entry point runs its
//! work inside the feature context of [`Context`] (in a portable build, a function compiled for
//! the CPU's vector extensions with AES-NI, entered once per call).
//!
//! Why not only the `aes` crate: its block API takes byte arrays, so every `u128` block we hash
//! is converted on the way in and out, and on this project's hot paths (fixed-key hashing of DPF
//! nodes and leaves, eight blocks at a time) those conversions cost more than half as much again
//! as the cipher itself (measured: CCR on eight blocks 5.6–7.3 ns per block through the `aes`
//! crate, 3.7–5.5 through this module, bare cipher 3.4–3.7). Here blocks stay in vector
//! registers from load to store, including σ and the final XOR of the hashes. The key schedule
//! is FIPS-197's; the tests in the parent module check every function against the `aes` crate.

use doram_arch::{AesNi, Vaes, Wide};
use doram_field::Z64;
use safe_arch::{
    add_i64_m128i, byte_shl_imm_u128_m128i, m128i, shl_imm_u32_m128i, shr_imm_i32_m128i,
    shuffle_ai_f32_all_m128i, unpack_high_i64_m128i, unpack_low_i64_m128i,
};

use super::context::Context;
use super::{AesKernel, BATCH, Block, NODE_SLOTS, WithAes};

/// The eleven round keys of AES-128, with the proof that this CPU has AES-NI and the context
/// the code runs in.
///
/// Each entry into the context works on a copy of the keys: the context is entered through a
/// function that takes its closure's captures as plain words, so the compiler no longer knows
/// that the keys behind a reference cannot change when the loop stores its output; a local
/// copy it can keep in registers.
#[derive(Clone, Copy)]
pub(super) struct RoundKeys {
    k: [m128i; 11],
    ni: AesNi,
    ctx: Context,
}

/// One step of the AES-128 key schedule: the next round key from the previous one and the
/// output of `AESKEYGENASSIST` on it (with the round constant).
#[inline(always)]
fn next_key(prev: m128i, assist: m128i) -> m128i {
    // Broadcast RotWord(SubWord(w3)) ⊕ rcon to all four words, then fold the previous key's
    // words in: w'_i = w_i ⊕ w_{i−1} ⊕ … ⊕ w_0 ⊕ t.
    let t = shuffle_ai_f32_all_m128i::<0xff>(assist);
    let mut k = prev;
    k = k ^ byte_shl_imm_u128_m128i::<4>(k);
    k = k ^ byte_shl_imm_u128_m128i::<4>(k);
    k = k ^ byte_shl_imm_u128_m128i::<4>(k);
    k ^ t
}

impl RoundKeys {
    /// The key schedule of `key` (16 bytes as in FIPS-197), if this CPU has AES-NI.
    pub(super) fn new(key: [u8; 16]) -> Option<RoundKeys> {
        let ni = AesNi::detect()?;
        let ctx = Context::detect()?;
        let mut k = [m128i::from(u128::from_le_bytes(key)); 11];
        ctx.run(|| {
            k[1] = next_key(k[0], ni.key_gen_assist::<0x01>(k[0]));
            k[2] = next_key(k[1], ni.key_gen_assist::<0x02>(k[1]));
            k[3] = next_key(k[2], ni.key_gen_assist::<0x04>(k[2]));
            k[4] = next_key(k[3], ni.key_gen_assist::<0x08>(k[3]));
            k[5] = next_key(k[4], ni.key_gen_assist::<0x10>(k[4]));
            k[6] = next_key(k[5], ni.key_gen_assist::<0x20>(k[5]));
            k[7] = next_key(k[6], ni.key_gen_assist::<0x40>(k[6]));
            k[8] = next_key(k[7], ni.key_gen_assist::<0x80>(k[7]));
            k[9] = next_key(k[8], ni.key_gen_assist::<0x1b>(k[8]));
            k[10] = next_key(k[9], ni.key_gen_assist::<0x36>(k[9]));
        });
        Some(RoundKeys { k, ni, ctx })
    }

    /// Encrypts one block (in the context of the caller).
    #[inline(always)]
    fn encrypt_here(&self, x: Block) -> Block {
        let (k, ni) = (&self.k, self.ni);
        let mut b = m128i::from(x) ^ k[0];
        for rk in &k[1..10] {
            b = ni.enc(b, *rk);
        }
        u128::from(ni.enc_last(b, k[10]))
    }

    /// Encrypts [`BATCH`] blocks, round by round across the blocks (the cipher's latency is
    /// several cycles per round, its throughput one round per cycle).
    #[inline(always)]
    fn encrypt8_regs(&self, x: [m128i; BATCH]) -> [m128i; BATCH] {
        let (k, ni) = (&self.k, self.ni);
        let mut b = x;
        for v in b.iter_mut() {
            *v ^= k[0];
        }
        for rk in &k[1..10] {
            for v in b.iter_mut() {
                *v = ni.enc(*v, *rk);
            }
        }
        // A loop, not `map`: an AES instruction inside a closure the compiler leaves out of
        // line would be a call (see `VaesKernel`).
        for v in b.iter_mut() {
            *v = ni.enc_last(*v, k[10]);
        }
        b
    }

    /// Encrypts [`BATCH`] blocks in place (in the context of the caller).
    #[inline(always)]
    fn encrypt8_here(&self, xs: &mut [Block; BATCH]) {
        let c = self.encrypt8_regs(xs.map(m128i::from));
        *xs = c.map(u128::from);
    }

    /// `π(x) ⊕ x` on [`BATCH`] blocks in place (in the context of the caller).
    #[inline(always)]
    fn cr8_here(&self, xs: &mut [Block; BATCH]) {
        let x = xs.map(m128i::from);
        let c = self.encrypt8_regs(x);
        *xs = std::array::from_fn(|i| u128::from(c[i] ^ x[i]));
    }

    /// `π(σ(x)) ⊕ σ(x)` on [`BATCH`] blocks in place (in the context of the caller).
    #[inline(always)]
    fn ccr8_here(&self, xs: &mut [Block; BATCH]) {
        let s = xs.map(|x| sigma(m128i::from(x)));
        let c = self.encrypt8_regs(s);
        *xs = std::array::from_fn(|i| u128::from(c[i] ^ s[i]));
    }

    /// `CCR(x ⊕ t_i)` for eight tweaks, from `σ(x)` and the `σ(t_i)` (σ is linear, so one σ
    /// per node serves all its slots).
    #[inline(always)]
    fn ccr8_sigma(&self, sx: m128i, st: &[m128i; BATCH]) -> [m128i; BATCH] {
        let s: [m128i; BATCH] = std::array::from_fn(|i| sx ^ st[i]);
        let c = self.encrypt8_regs(s);
        std::array::from_fn(|i| c[i] ^ s[i])
    }

    /// Encrypts one block.
    #[inline(always)]
    pub(super) fn encrypt(&self, x: Block) -> Block {
        // `move`: the block travels into the context in registers. Captured by reference, it
        // would be stored as two words and loaded as one vector, which the CPU cannot forward
        // from the stores, and consecutive calls would no longer overlap.
        // No copy of the keys for one block: loading them through `self` costs less.
        self.ctx.run(
            #[inline(always)]
            move || self.encrypt_here(x),
        )
    }

    /// `E(s ⊕ t) ⊕ s` for `s = x` (`ccr` false) or `s = σ(x)` (`ccr` true) and the tweaks `t`,
    /// on `N` blocks, interleaved, in one entry into the context.
    #[inline(always)]
    pub(super) fn hash_few<const N: usize>(
        &self,
        xs: [Block; N],
        tweaks: [Block; N],
        ccr: bool,
    ) -> [Block; N] {
        self.ctx.run(
            #[inline(always)]
            move || self.hash_few_here(xs, tweaks, ccr),
        )
    }

    /// [`Self::hash_few`] in the context of the caller, with σ and the XORs in vector
    /// registers.
    #[inline(always)]
    fn hash_few_here<const N: usize>(
        &self,
        xs: [Block; N],
        tweaks: [Block; N],
        ccr: bool,
    ) -> [Block; N] {
        let (k, ni) = (&self.k, self.ni);
        let mut s = [m128i::default(); N];
        for (s, &x) in s.iter_mut().zip(&xs) {
            let x = m128i::from(x);
            *s = if ccr { sigma(x) } else { x };
        }
        let mut b = s;
        for (v, &t) in b.iter_mut().zip(&tweaks) {
            *v = *v ^ m128i::from(t) ^ k[0];
        }
        for rk in &k[1..10] {
            for v in b.iter_mut() {
                *v = ni.enc(*v, *rk);
            }
        }
        let mut out = [0; N];
        for ((o, b), s) in out.iter_mut().zip(b).zip(s) {
            *o = u128::from(ni.enc_last(b, k[10]) ^ s);
        }
        out
    }

    /// `E(σ(x_i) ⊕ t_i) ⊕ σ(x_i)` on vector registers, interleaved: the half-gates kernels'
    /// hash. (The same steps as [`Self::hash_few_here`]; routing that one through this
    /// function, `σ` behind a flag, made `bench gc`'s garbling a third slower.)
    #[inline(always)]
    fn ccr_regs<const N: usize>(&self, xs: [m128i; N], tweaks: [m128i; N]) -> [m128i; N] {
        let (k, ni) = (&self.k, self.ni);
        let mut s = xs;
        for s in s.iter_mut() {
            *s = sigma(*s);
        }
        let mut b = s;
        for (v, &t) in b.iter_mut().zip(&tweaks) {
            *v = *v ^ t ^ k[0];
        }
        for rk in &k[1..10] {
            for v in b.iter_mut() {
                *v = ni.enc(*v, *rk);
            }
        }
        for (v, s) in b.iter_mut().zip(s) {
            *v = ni.enc_last(*v, k[10]) ^ s;
        }
        b
    }

    /// [`AesKernel::garble_and`] with the labels' arithmetic in vector registers.
    #[inline(always)]
    fn garble_and_here(&self, a0: Block, b0: Block, delta: Block, j: u64) -> [Block; 3] {
        let (a, b, d) = (m128i::from(a0), m128i::from(b0), m128i::from(delta));
        let j0 = m128i::from(Block::from(j) << 1);
        let j1 = m128i::from((Block::from(j) << 1) | 1);
        let [ha0, ha1, hb0, hb1] = self.ccr_regs([a, a ^ d, b, b ^ d], [j0, j0, j1, j1]);
        let (pa, pb) = (lsb_mask(a), lsb_mask(b));
        let tg = ha0 ^ ha1 ^ (pb & d);
        let wg = ha0 ^ (pa & tg);
        let h = hb0 ^ hb1;
        let we = hb0 ^ (pb & h);
        [u128::from(wg ^ we), u128::from(tg), u128::from(h ^ a)]
    }

    /// [`AesKernel::eval_and`] with the labels' arithmetic in vector registers.
    #[inline(always)]
    fn eval_and_here(&self, a: Block, b: Block, table: &[u8; 32], j: u64) -> Block {
        let (halves, _) = table.as_chunks::<16>();
        let (tg, te) = (m128i::from(halves[0]), m128i::from(halves[1]));
        let (a, b) = (m128i::from(a), m128i::from(b));
        let j0 = m128i::from(Block::from(j) << 1);
        let j1 = m128i::from((Block::from(j) << 1) | 1);
        let [ha, hb] = self.ccr_regs([a, b], [j0, j1]);
        let wg = ha ^ (lsb_mask(a) & tg);
        let we = hb ^ (lsb_mask(b) & (te ^ a));
        u128::from(wg ^ we)
    }

    /// `E(E(x) ⊕ t) ⊕ E(x)` in one entry into the context.
    #[inline(always)]
    pub(super) fn tccr(&self, t: Block, x: Block) -> Block {
        self.ctx.run(
            #[inline(always)]
            move || {
                let p = self.encrypt_here(x);
                self.encrypt_here(p ^ t) ^ p
            },
        )
    }

    /// Encrypts [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn encrypt8(&self, xs: &mut [Block; BATCH]) {
        self.ctx.run(
            #[inline(always)]
            || {
                let keys = *self;
                keys.encrypt8_here(xs)
            },
        )
    }

    /// `π(x) ⊕ x` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn cr8(&self, xs: &mut [Block; BATCH]) {
        self.ctx.run(
            #[inline(always)]
            || {
                let keys = *self;
                keys.cr8_here(xs)
            },
        )
    }

    /// `π(σ(x)) ⊕ σ(x)` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn ccr8(&self, xs: &mut [Block; BATCH]) {
        self.ctx.run(
            #[inline(always)]
            || {
                let keys = *self;
                keys.ccr8_here(xs)
            },
        )
    }

    /// Runs `work` with these keys in hand, inside the context: with two blocks per AES
    /// instruction where the CPU has VAES, one otherwise.
    #[inline(always)]
    pub(super) fn with_aes<W: WithAes>(&self, work: W) -> W::Output {
        self.ctx.run_either(
            work,
            #[inline(always)]
            |work| {
                let keys = *self;
                work.run(&mut NiKernel(&keys))
            },
            #[inline(always)]
            |work, vaes| {
                let keys = *self;
                work.run(&mut VaesKernel::new(&keys, vaes))
            },
        )
    }

    /// See [`super::FixedKeyAes::node_words_split`]; the lane sums stay in vector registers
    /// (lane 0 the `a` word, lane 1 the `v` word of a slot).
    #[inline(always)]
    fn node_words_split_here(
        &self,
        nodes: &[Block],
        tweaks: &[Block; NODE_SLOTS],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) {
        let st: [m128i; NODE_SLOTS] = tweaks.map(|t| sigma(m128i::from(t)));
        let st0: [m128i; BATCH] = std::array::from_fn(|i| st[i]);
        let st1: [m128i; BATCH] = std::array::from_fn(|i| st[BATCH + i]);
        let mut acc0 = [m128i::default(); BATCH];
        let mut acc1 = [m128i::default(); BATCH];
        let pairs = a
            .chunks_exact_mut(NODE_SLOTS)
            .zip(v.chunks_exact_mut(NODE_SLOTS));
        for (&q, (ac, vc)) in nodes.iter().zip(pairs) {
            let sq = sigma(m128i::from(q));
            for (half, (st, acc)) in [(&st0, &mut acc0), (&st1, &mut acc1)]
                .into_iter()
                .enumerate()
            {
                let o = self.ccr8_sigma(sq, st);
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
            sum_a[j] += Z64(l);
            sum_v[j] += Z64(h);
        }
    }

    /// See [`super::FixedKeyAes::node_words_pairs`].
    #[inline(always)]
    fn node_words_pairs_here(
        &self,
        nodes: &[Block],
        first_node: u64,
        tweaks: &[Block; BATCH],
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        let st: [m128i; BATCH] = tweaks.map(|t| sigma(m128i::from(t)));
        let mut acc = [m128i::default(); BATCH];
        // Σ_r r·T_r over the node totals T_r, as N·P − Σ_r P_r with the prefix sums P_r.
        let mut prefix = m128i::default();
        let mut prefix_sum = m128i::default();
        for (&q, ac) in nodes.iter().zip(a.chunks_exact_mut(NODE_SLOTS)) {
            let o = self.ccr8_sigma(sigma(m128i::from(q)), &st);
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
            sum_a[2 * i] += Z64(l);
            sum_a[2 * i + 1] += Z64(h);
        }
        let [pl, ph]: [u64; 2] = prefix.into();
        let [sl, sh]: [u64; 2] = prefix_sum.into();
        let (p, s) = (Z64(pl) + Z64(ph), Z64(sl) + Z64(sh));
        let n = nodes.len().min(a.len() / NODE_SLOTS) as u64;
        Z64(n.wrapping_add(first_node)) * p - s
    }

    /// [`Self::node_words_split_here`] inside the context.
    pub(super) fn node_words_split(
        &self,
        nodes: &[Block],
        tweaks: &[Block; NODE_SLOTS],
        a: &mut [Z64],
        v: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
        sum_v: &mut [Z64; NODE_SLOTS],
    ) {
        self.ctx.run(
            #[inline(always)]
            || {
                let keys = *self;
                keys.node_words_split_here(nodes, tweaks, a, v, sum_a, sum_v)
            },
        )
    }

    /// [`Self::node_words_pairs_here`] inside the context.
    pub(super) fn node_words_pairs(
        &self,
        nodes: &[Block],
        first_node: u64,
        tweaks: &[Block; BATCH],
        a: &mut [Z64],
        sum_a: &mut [Z64; NODE_SLOTS],
    ) -> Z64 {
        self.ctx.run(
            #[inline(always)]
            || {
                let keys = *self;
                keys.node_words_pairs_here(nodes, first_node, tweaks, a, sum_a)
            },
        )
    }
}

/// The [`AesKernel`] of these keys: the functions above.
struct NiKernel<'a>(&'a RoundKeys);

impl AesKernel for NiKernel<'_> {
    #[inline(always)]
    fn ccr_tweaked<const N: usize>(&mut self, xs: [Block; N], tweaks: [Block; N]) -> [Block; N] {
        self.0.hash_few_here(xs, tweaks, true)
    }

    #[inline(always)]
    fn garble_and(&mut self, a0: Block, b0: Block, delta: Block, j: u64) -> [Block; 3] {
        self.0.garble_and_here(a0, b0, delta, j)
    }

    #[inline(always)]
    fn eval_and(&mut self, a: Block, b: Block, table: &[u8; 32], j: u64) -> Block {
        self.0.eval_and_here(a, b, table, j)
    }

    #[inline(always)]
    fn xor(&mut self, a: Block, b: Block) -> Block {
        u128::from(m128i::from(a) ^ m128i::from(b))
    }

    #[inline(always)]
    fn cr8_masked(&mut self, xs: &[Block; BATCH], mask: Block) -> [Block; BATCH] {
        let m = m128i::from(mask);
        let mut s = [m; BATCH];
        for (s, &x) in s.iter_mut().zip(xs) {
            *s = m128i::from(x) & m;
        }
        let c = self.0.encrypt8_regs(s);
        let mut out = [0; BATCH];
        for ((o, c), s) in out.iter_mut().zip(c).zip(s) {
            *o = u128::from(c ^ s);
        }
        out
    }

    #[inline(always)]
    fn ccr8_spread<const O: usize>(
        &mut self,
        nodes: &[Block],
        tweaks: &[Block; BATCH],
    ) -> [Block; BATCH] {
        let s: [m128i; BATCH] =
            std::array::from_fn(|k| sigma(m128i::from(nodes[k >> O]) ^ m128i::from(tweaks[k])));
        let c = self.0.encrypt8_regs(s);
        std::array::from_fn(|i| u128::from(c[i] ^ s[i]))
    }

    #[inline(always)]
    fn encrypt(&mut self, x: Block) -> Block {
        self.0.encrypt_here(x)
    }

    #[inline(always)]
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]) {
        self.0.encrypt8_here(xs)
    }

    #[inline(always)]
    fn cr8(&mut self, xs: &mut [Block; BATCH]) {
        self.0.cr8_here(xs)
    }

    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        self.0.ccr8_here(xs)
    }
}

/// The [`AesKernel`] of these keys on a CPU with VAES: the batches of [`BATCH`] blocks go
/// through the cipher as four pairs, two blocks per instruction, which doubles the rounds the
/// AES units start per cycle; single blocks take the one-block path.
///
/// The loops here are written out rather than through `array::from_fn` or `map`: those take
/// closures the compiler may leave out of line, and out of line the vector instructions are
/// calls (outside the function compiled for the CPU's features), several times slower.
struct VaesKernel<'a> {
    keys: &'a RoundKeys,
    vaes: Vaes,
    /// The round keys, each in both lanes.
    wide: [Wide; 11],
}

/// Blocks per batch as pairs.
const PAIRS: usize = BATCH / 2;

impl<'a> VaesKernel<'a> {
    #[inline(always)]
    fn new(keys: &'a RoundKeys, vaes: Vaes) -> Self {
        let mut wide = [vaes.splat(keys.k[0]); 11];
        for (w, &k) in wide.iter_mut().zip(&keys.k) {
            *w = vaes.splat(k);
        }
        VaesKernel { keys, vaes, wide }
    }

    /// Encrypts four pairs in place, round by round across them.
    #[inline(always)]
    fn encrypt_pairs(&self, b: &mut [Wide; PAIRS]) {
        let (k, v) = (&self.wide, self.vaes);
        for w in b.iter_mut() {
            *w = v.xor(*w, k[0]);
        }
        for rk in &k[1..10] {
            for w in b.iter_mut() {
                *w = v.enc(*w, *rk);
            }
        }
        for w in b.iter_mut() {
            *w = v.enc_last(*w, k[10]);
        }
    }

    /// `E(s) ⊕ s` on four pairs, stored to `out`.
    #[inline(always)]
    fn hash_pairs(&self, s: &[Wide; PAIRS], out: &mut [Block; BATCH]) {
        let v = self.vaes;
        let mut c = *s;
        self.encrypt_pairs(&mut c);
        for (c, s) in c.iter_mut().zip(s) {
            *c = v.xor(*c, *s);
        }
        self.store(&c, out);
    }

    /// The batch as pairs, each assembled from two 128-bit values rather than loaded as one
    /// 256-bit vector: callers often have just computed the blocks as `u128` (two 64-bit
    /// halves), and a wide load of fresh narrower stores cannot be forwarded from them.
    #[inline(always)]
    fn load(&self, xs: &[Block; BATCH]) -> [Wide; PAIRS] {
        let mut w = [self.wide[0]; PAIRS];
        for (i, w) in w.iter_mut().enumerate() {
            *w = self
                .vaes
                .pair(m128i::from(xs[2 * i]), m128i::from(xs[2 * i + 1]));
        }
        w
    }

    /// Stores the pairs to `xs` (wide stores: narrower loads of them are forwarded).
    #[inline(always)]
    fn store(&self, w: &[Wide; PAIRS], xs: &mut [Block; BATCH]) {
        let (pairs, _) = xs.as_chunks_mut::<2>();
        for (p, w) in pairs.iter_mut().zip(w) {
            self.vaes.store(*w, p);
        }
    }
}

impl AesKernel for VaesKernel<'_> {
    #[inline(always)]
    fn ccr_tweaked<const N: usize>(&mut self, xs: [Block; N], tweaks: [Block; N]) -> [Block; N] {
        self.keys.hash_few_here(xs, tweaks, true)
    }

    #[inline(always)]
    fn garble_and(&mut self, a0: Block, b0: Block, delta: Block, j: u64) -> [Block; 3] {
        self.keys.garble_and_here(a0, b0, delta, j)
    }

    #[inline(always)]
    fn eval_and(&mut self, a: Block, b: Block, table: &[u8; 32], j: u64) -> Block {
        self.keys.eval_and_here(a, b, table, j)
    }

    #[inline(always)]
    fn xor(&mut self, a: Block, b: Block) -> Block {
        u128::from(m128i::from(a) ^ m128i::from(b))
    }

    #[inline(always)]
    fn cr8_masked(&mut self, xs: &[Block; BATCH], mask: Block) -> [Block; BATCH] {
        let v = self.vaes;
        let m = v.splat(m128i::from(mask));
        let mut s = self.load(xs);
        for s in s.iter_mut() {
            *s = v.and(*s, m);
        }
        let mut out = [0; BATCH];
        self.hash_pairs(&s, &mut out);
        out
    }

    #[inline(always)]
    fn ccr8_spread<const O: usize>(
        &mut self,
        nodes: &[Block],
        tweaks: &[Block; BATCH],
    ) -> [Block; BATCH] {
        let v = self.vaes;
        let mut s = self.load(tweaks);
        for (i, s) in s.iter_mut().enumerate() {
            let (a, b) = ((2 * i) >> O, (2 * i + 1) >> O);
            let x = if a == b {
                v.splat(m128i::from(nodes[a]))
            } else {
                v.pair(m128i::from(nodes[a]), m128i::from(nodes[b]))
            };
            *s = v.sigma(v.xor(x, *s));
        }
        let mut out = [0; BATCH];
        self.hash_pairs(&s, &mut out);
        out
    }

    #[inline(always)]
    fn encrypt(&mut self, x: Block) -> Block {
        self.keys.encrypt_here(x)
    }

    #[inline(always)]
    fn encrypt8(&mut self, xs: &mut [Block; BATCH]) {
        let mut c = self.load(xs);
        self.encrypt_pairs(&mut c);
        self.store(&c, xs);
    }

    #[inline(always)]
    fn cr8(&mut self, xs: &mut [Block; BATCH]) {
        let x = self.load(xs);
        self.hash_pairs(&x, xs);
    }

    #[inline(always)]
    fn ccr8(&mut self, xs: &mut [Block; BATCH]) {
        let mut s = self.load(xs);
        for s in s.iter_mut() {
            *s = self.vaes.sigma(*s);
        }
        self.hash_pairs(&s, xs);
    }
}

/// All ones if bit 0 of `x` is set, else all zeros: bit 0 moved to the top of every 32-bit
/// lane and shifted back arithmetically.
#[inline(always)]
fn lsb_mask(x: m128i) -> m128i {
    shr_imm_i32_m128i::<31>(shl_imm_u32_m128i::<31>(shuffle_ai_f32_all_m128i::<0>(x)))
}

/// σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi on a vector register (lane 0 = lo): `[hi, hi] ⊕ [0, lo]`.
#[inline(always)]
fn sigma(x: m128i) -> m128i {
    shuffle_ai_f32_all_m128i::<0b11_10_11_10>(x) ^ byte_shl_imm_u128_m128i::<8>(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-block-per-instruction kernel and (on a CPU with VAES) the two-block one agree
    /// with each other and with one-block encryption, whichever the dispatch picks here.
    #[test]
    fn both_kernels_match_single_blocks() {
        let Some(keys) = RoundKeys::new(super::super::FIXED_KEY) else {
            return;
        };
        let xs: [Block; BATCH] = std::array::from_fn(|i| {
            (i as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834)
        });
        let tw: [Block; BATCH] = std::array::from_fn(|i| xs[i].rotate_left(17) ^ 3);
        let e = |x: Block| keys.encrypt_here(x);
        let ccr = |x: Block| {
            let s = super::super::sigma(x);
            e(s) ^ s
        };
        let want_enc = xs.map(e);
        let want_cr = xs.map(|x| e(x) ^ x);
        let want_ccr = xs.map(ccr);
        let want_spread: [Block; BATCH] = std::array::from_fn(|k| ccr(xs[k >> 1] ^ tw[k]));
        let check = |k: &mut dyn FnMut(&mut [Block; BATCH], u8) -> [Block; BATCH]| {
            let mut a = xs;
            k(&mut a, 0);
            assert_eq!(a, want_enc);
            let mut a = xs;
            k(&mut a, 1);
            assert_eq!(a, want_cr);
            let mut a = xs;
            k(&mut a, 2);
            assert_eq!(a, want_ccr);
            assert_eq!(k(&mut xs.clone(), 3), want_spread);
        };
        fn run(
            k: &mut impl AesKernel,
            a: &mut [Block; BATCH],
            op: u8,
            tw: &[Block; BATCH],
        ) -> [Block; BATCH] {
            match op {
                0 => k.encrypt8(a),
                1 => k.cr8(a),
                2 => k.ccr8(a),
                _ => return k.ccr8_spread::<1>(&a[..], tw),
            }
            *a
        }
        check(&mut |a, op| run(&mut NiKernel(&keys), a, op, &tw));
        if let Some(v) = Vaes::detect() {
            check(&mut |a, op| run(&mut VaesKernel::new(&keys, v), a, op, &tw));
        }
    }

    #[test]
    fn sigma_matches_the_scalar_definition() {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for _ in 0..64 {
            assert_eq!(u128::from(sigma(m128i::from(x))), super::super::sigma(x));
            x = x.wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15) ^ (x >> 3);
        }
    }
}
