//! The tree DPF of Boyle, Gilboa and Ishai ("Function Secret Sharing: Improvements and
//! Extensions", CCS 2016, Fig. 1), with a length-doubling PRG from fixed-key AES.
//!
//! # Construction
//!
//! The domain `[0, n)` is the leaf set of a binary tree of depth `d = ⌈log2 n⌉`, path bits taken
//! most significant first. A node is a 127-bit seed `s` (lsb 0) and a control bit `t`, stored
//! together as the block `s | t`.
//!
//! * PRG: `G(s) = (MMO(s), MMO(s | 1))` with `MMO(x) = π(x) ⊕ x` on fixed-key AES (the
//!   correlation-robust hash of Guo–Katz–Wang–Yu 2020): two AES calls per node; each half splits
//!   into a child seed (bits 1..128) and a child control bit (bit 0).
//! * Gen (Fig. 1): roots `s_0, s_1` uniform, `t_0 = 0`, `t_1 = 1`. At each level with path bit
//!   `a` ("keep" = `a`, "lose" = `1 − a`): `s_CW = s_0^lose ⊕ s_1^lose`,
//!   `t_CW^L = t_0^L ⊕ t_1^L ⊕ a ⊕ 1`, `t_CW^R = t_0^R ⊕ t_1^R ⊕ a`; then
//!   `s_b ← s_b^keep ⊕ t_b·s_CW`, `t_b ← t_b^keep ⊕ t_b·t_CW^keep`.
//! * Output: `OCW = (−1)^{t_1}·(β − Convert(s_0) + Convert(s_1))` at the leaf of `α`, and party
//!   `b` outputs `(−1)^b·(Convert(s) + t·OCW)` (the crate's output conversion, tweak slot 0).
//!
//! # Key layout (`to_bytes`)
//!
//! `party (1 byte) ‖ s_b (16) ‖ s_CW,0 … s_CW,d−1 (16 each) ‖ control-bit corrections
//! (⌈2d/8⌉ bytes: bit 2i is t_CW^L of level i, bit 2i+1 is t_CW^R, least significant bit first)
//! ‖ OCW (G::BYTES)`. Size: `17 + 16·d + ⌈d/4⌉ + |G|` bytes. Seeds and `s_CW` have lsb 0 and unused
//! bits are 0; decoding rejects anything else. For `n = 1` the key is `party ‖ share`
//! (`1 + |G|` bytes).
//!
//! # Generation by the two key holders
//!
//! Two parties can generate a key pair together, without a dealer, in the manner of
//! Doerner–shelat (each expands its whole tree level by level and the correction words come out
//! of a small secure computation per level; `doram_twopc::dpf_gen` runs it). That protocol
//! needs three local pieces from here, so that its keys are ordinary [`BgiKey`]s that evaluate
//! with this module's PRG and output conversion: [`expand_uncorrected`] (the PRG on a whole
//! level, before any correction, with the XOR of all left and of all right halves),
//! [`leaf_sums`] (`Σ Convert(s)` and `Σ t` over a party's leaves) and [`BgiKey::from_parts`].

use crate::convert::{LeafSource, convert, tweak};
use crate::tree::{self, LeafStream, Tree};
use crate::{DpfKey, SinglePointDpf, TwoParty, check_gen_args, check_len, depth, take};
use doram_core::{CodecError, Seed};
use doram_field::Group;
use doram_prim::aes::{
    AesKernel, BATCH, Block, WithAes, batches, batches_mut, fixed_key, lsb, mask,
};
use doram_prim::prg::AesPrg;
use std::marker::PhantomData;

const SEED_MASK: Block = !1;

/// The BGI tree DPF (marker type; see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bgi;

/// One party's BGI key.
#[derive(Clone, PartialEq, Eq)]
pub struct BgiKey<G> {
    party: TwoParty,
    domain_size: usize,
    /// Root seed (lsb 0; the root control bit is the party index).
    seed: Block,
    /// Per level: `s_CW | t_CW^L` and `s_CW | t_CW^R`, ready to XOR onto the two PRG halves.
    cws: Vec<[Block; 2]>,
    /// Output correction word; for `n = 1` the share.
    ocw: G,
}

impl<G> std::fmt::Debug for BgiKey<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BgiKey")
            .field("party", &self.party)
            .field("domain_size", &self.domain_size)
            .finish_non_exhaustive()
    }
}

impl<G: Group> BgiKey<G> {
    /// The serialized length of a key for `domain_size` points (see the module docs).
    pub fn key_size(domain_size: usize) -> usize {
        if domain_size <= 1 {
            1 + G::BYTES
        } else {
            let d = depth(domain_size);
            17 + 16 * d + d.div_ceil(4) + G::BYTES
        }
    }

    /// Decodes a key for `domain_size` points.
    pub fn from_bytes(bytes: &[u8], domain_size: usize) -> Result<Self, CodecError> {
        if domain_size == 0 || domain_size > crate::MAX_DOMAIN {
            return Err(CodecError::OutOfRange {
                what: "DPF domain size",
            });
        }
        check_len(bytes, Self::key_size(domain_size))?;
        let party = TwoParty::from_byte(bytes[0])?;
        let mut pos = 1;
        if domain_size == 1 {
            let ocw = G::read_le(&bytes[pos..])?;
            return Ok(BgiKey {
                party,
                domain_size,
                seed: 0,
                cws: vec![],
                ocw,
            });
        }
        let d = depth(domain_size);
        let seed = u128::from_le_bytes(take(bytes, &mut pos));
        if lsb(seed) {
            return Err(CodecError::OutOfRange {
                what: "BGI root seed has its lsb set",
            });
        }
        let mut scws = Vec::with_capacity(d);
        for _ in 0..d {
            let s = u128::from_le_bytes(take(bytes, &mut pos));
            if lsb(s) {
                return Err(CodecError::OutOfRange {
                    what: "BGI seed correction has its lsb set",
                });
            }
            scws.push(s);
        }
        let bits = &bytes[pos..pos + d.div_ceil(4)];
        pos += bits.len();
        let bit = |i: usize| (bits[i / 8] >> (i % 8)) & 1 == 1;
        if (2 * d..bits.len() * 8).any(bit) {
            return Err(CodecError::OutOfRange {
                what: "BGI key padding bits are not zero",
            });
        }
        let cws = scws
            .iter()
            .enumerate()
            .map(|(i, &s)| [s | u128::from(bit(2 * i)), s | u128::from(bit(2 * i + 1))])
            .collect();
        let ocw = G::read_le(&bytes[pos..])?;
        Ok(BgiKey {
            party,
            domain_size,
            seed,
            cws,
            ocw,
        })
    }

    /// A key from its parts, for key generation outside this module (see the
    /// [module docs](self#generation-by-the-two-key-holders)): the root `seed`, per level
    /// `(s_CW, t_CW^L, t_CW^R)` (root level first), and the output correction word `ocw` (for
    /// `domain_size = 1`, with no levels, the party's share: party 0 outputs it, party 1 its
    /// negation). The lsb of `seed` and of every `s_CW` is cleared, as the layout requires.
    ///
    /// # Panics
    /// If `domain_size` is 0 or above 2^62, or `cws.len()` is not `⌈log2 domain_size⌉` (caller
    /// bugs, not peer input).
    pub fn from_parts(
        party: TwoParty,
        domain_size: usize,
        seed: Block,
        cws: &[(Block, bool, bool)],
        ocw: G,
    ) -> Self {
        check_gen_args(domain_size, 0);
        assert_eq!(
            cws.len(),
            depth(domain_size),
            "one correction word per tree level"
        );
        let seed = if domain_size == 1 {
            0
        } else {
            seed & SEED_MASK
        };
        let cws = cws
            .iter()
            .map(|&(s, l, r)| {
                let s = s & SEED_MASK;
                [s | u128::from(l), s | u128::from(r)]
            })
            .collect();
        BgiKey {
            party,
            domain_size,
            seed,
            cws,
            ocw,
        }
    }

    /// The root node `s | t` with `t` the party index.
    fn root_node(&self) -> Block {
        self.seed | self.party.index() as u128
    }

    #[inline(always)]
    fn finish(&self, conv: G, t: bool) -> G {
        let y = if t { conv + self.ocw } else { conv };
        if self.party == TwoParty::P1 { -y } else { y }
    }
}

impl<G: Group> DpfKey for BgiKey<G> {
    fn party(&self) -> TwoParty {
        self.party
    }

    fn domain_size(&self) -> usize {
        self.domain_size
    }

    fn size_bytes(&self) -> usize {
        Self::key_size(self.domain_size)
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes());
        out.push(self.party.to_byte());
        if self.domain_size > 1 {
            out.extend_from_slice(&self.seed.to_le_bytes());
            for cw in &self.cws {
                out.extend_from_slice(&(cw[0] & SEED_MASK).to_le_bytes());
            }
            let mut bits = vec![0u8; self.cws.len().div_ceil(4)];
            for (i, cw) in self.cws.iter().enumerate() {
                for (side, c) in cw.iter().enumerate() {
                    let k = 2 * i + side;
                    bits[k / 8] |= ((c & 1) as u8) << (k % 8);
                }
            }
            out.extend_from_slice(&bits);
        }
        let start = out.len();
        out.resize(start + G::BYTES, 0);
        self.ocw.write_le(&mut out[start..]);
        out
    }
}

impl<G: Group> Tree<G> for BgiKey<G> {
    fn constant(&self) -> Option<G> {
        (self.domain_size == 1).then(|| self.finish(self.ocw, false))
    }

    fn levels(&self) -> usize {
        self.cws.len()
    }

    fn out_bits(&self) -> usize {
        0
    }

    fn root(&self) -> Block {
        self.root_node()
    }

    /// Fig. 1 evaluation of one level: `τ = G(s) ⊕ t·(s_CW, t_CW^L, s_CW, t_CW^R)`.
    fn expand(&self, level: usize, src: &[Block], dst: &mut [Block]) {
        fixed_key().with_aes(Expand {
            cws: self.cws[level],
            src,
            dst,
        })
    }

    /// Leaves: `±(Convert(s) + t·OCW)`, branch-free: party 0 adds `t·OCW`, party 1 computes
    /// `(−t·OCW) − Convert(s)`.
    fn output(&self, nodes: &[Block], out: &mut [G]) {
        fixed_key().with_aes(Output {
            key: self,
            nodes,
            out,
        })
    }
}

/// [`Tree::expand`]'s loop for [`BgiKey`], with fixed-key AES in hand.
struct Expand<'a> {
    cws: [Block; 2],
    src: &'a [Block],
    dst: &'a mut [Block],
}

impl WithAes for Expand<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, fk: &mut K) {
        let [cwl, cwr] = self.cws;
        let (whole, rest) = batches(self.src);
        let mut dst_chunks = self.dst.chunks_exact_mut(2 * BATCH);
        for (p, d) in whole.zip(&mut dst_chunks) {
            let mut h = [0u128; 2 * BATCH];
            for k in 0..BATCH {
                let s = p[k] & SEED_MASK;
                h[2 * k] = s;
                h[2 * k + 1] = s | 1;
            }
            let (halves, _) = batches_mut(&mut h);
            for c in halves {
                fk.cr8(c);
            }
            for k in 0..BATCH {
                let m = mask(lsb(p[k]));
                d[2 * k] = h[2 * k] ^ (m & cwl);
                d[2 * k + 1] = h[2 * k + 1] ^ (m & cwr);
            }
        }
        let d = dst_chunks.into_remainder();
        for (k, &v) in rest.iter().enumerate() {
            let s = v & SEED_MASK;
            let (l, r) = (fk.cr(s), fk.cr(s | 1));
            let m = mask(lsb(v));
            d[2 * k] = l ^ (m & cwl);
            d[2 * k + 1] = r ^ (m & cwr);
        }
    }
}

/// [`Tree::output`]'s loop for [`BgiKey`], with fixed-key AES in hand.
struct Output<'a, G> {
    key: &'a BgiKey<G>,
    nodes: &'a [Block],
    out: &'a mut [G],
}

impl<G: Group> WithAes for Output<'_, G> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        // The rare further blocks of an output (rejection sampling) come from `fk`.
        let fk = fixed_key();
        let negate = self.key.party == TwoParty::P1;
        let ocw = self.key.ocw;
        let sel = [G::ZERO, if negate { -ocw } else { ocw }];
        for (group, outs) in self.nodes.chunks(BATCH).zip(self.out.chunks_mut(BATCH)) {
            let mut blocks = [0u128; BATCH];
            for (b, &v) in blocks.iter_mut().zip(group) {
                *b = (v & SEED_MASK) ^ tweak(0, 0);
            }
            if group.len() == BATCH {
                aes.ccr8(&mut blocks);
            } else {
                for b in &mut blocks[..group.len()] {
                    *b = aes.ccr(*b);
                }
            }
            for ((y, &v), &b) in outs.iter_mut().zip(group).zip(blocks.iter()) {
                let conv = G::random_from(&mut LeafSource::with_first(fk, v & SEED_MASK, 0, b));
                let corr = sel[usize::from(lsb(v))];
                *y = if negate { corr - conv } else { conv + corr };
            }
        }
    }
}

impl<G: Group> SinglePointDpf<G> for Bgi {
    type Key = BgiKey<G>;

    fn key_size(domain_size: usize) -> usize {
        BgiKey::<G>::key_size(domain_size)
    }

    /// `seeds[b]` (lsb cleared) is party `b`'s root seed. For `n = 1`, party 0's share is
    /// expanded from `seeds[0]` with [`AesPrg`].
    fn gen_with_seeds(
        domain_size: usize,
        alpha: usize,
        beta: G,
        seeds: [Seed; 2],
    ) -> (Self::Key, Self::Key) {
        check_gen_args(domain_size, alpha);
        let key = |party, seed, cws: &Vec<[Block; 2]>, ocw: G| BgiKey {
            party,
            domain_size,
            seed,
            cws: cws.clone(),
            ocw,
        };
        if domain_size == 1 {
            let r: G = AesPrg::new(seeds[0]).random();
            return (
                key(TwoParty::P0, 0, &vec![], r),
                key(TwoParty::P1, 0, &vec![], r - beta),
            );
        }
        let fk = fixed_key();
        let d = depth(domain_size);
        let root = seeds.map(|s| u128::from_le_bytes(s.0) & SEED_MASK);
        let (cws, s, t) = fk.with_aes(GenLevels { alpha, d, root });
        let v = beta - convert::<G>(fk, s[0], 0) + convert::<G>(fk, s[1], 0);
        let ocw = if t[1] { -v } else { v };
        (
            key(TwoParty::P0, root[0], &cws, ocw),
            key(TwoParty::P1, root[1], &cws, ocw),
        )
    }

    fn eval(key: &Self::Key, x: usize) -> G {
        let n = key.domain_size;
        assert!(x < n, "DPF input {x} outside domain of {n} points");
        if n == 1 {
            return key.finish(key.ocw, false);
        }
        let fk = fixed_key();
        let d = depth(n);
        let mut v = key.root_node();
        for (i, cw) in key.cws.iter().enumerate() {
            let side = (x >> (d - 1 - i)) & 1;
            let s = (v & SEED_MASK) | side as u128;
            v = fk.cr(s) ^ (mask(lsb(v)) & cw[side]);
        }
        key.finish(convert::<G>(fk, v & SEED_MASK, 0), lsb(v))
    }

    fn eval_all_into(key: &Self::Key, out: &mut [G]) {
        tree::eval_domain(key, key.domain_size, out, false);
    }

    fn eval_all_par_into(key: &Self::Key, out: &mut [G]) {
        tree::eval_domain(key, key.domain_size, out, true);
    }

    fn stream(key: &Self::Key, start: usize) -> LeafStream<'_, G> {
        LeafStream::new(key, key.domain_size, start)
    }

    fn key_from_bytes(bytes: &[u8], domain_size: usize) -> Result<Self::Key, CodecError> {
        BgiKey::from_bytes(bytes, domain_size)
    }
}

/// The PRG on a whole level, in place: replaces the nodes `s_j | t_j` of `level` (the control
/// bits ignored) by their children before any correction, `level[2j] ‖ level[2j+1] = G(s_j)`,
/// and returns the XOR of all left halves and the XOR of all right halves. With the level's
/// correction word, the children that evaluation computes are
/// `level[2j + side] ⊕ t_j·(s_CW | t_CW^side)`, so a caller that corrects afterwards keeps the
/// `t_j` first. Working in place, a whole level of `m` nodes needs `2m` blocks, not `3m`.
pub fn expand_uncorrected(level: &mut Vec<Block>) -> [Block; 2] {
    let m = level.len();
    level.resize(2 * m, 0);
    fixed_key().with_aes(ExpandInPlace { level, m })
}

/// [`expand_uncorrected`]'s loop: [`Expand`]'s hashing without the corrections, XORing the
/// halves as they are written. The nodes are taken from the last down, so node j's children
/// (at 2j and 2j + 1 ≥ j) overwrite only nodes already taken; each group of nodes is read out
/// before its children are written.
struct ExpandInPlace<'a> {
    level: &'a mut [Block],
    m: usize,
}

impl WithAes for ExpandInPlace<'_> {
    type Output = [Block; 2];

    #[inline(always)]
    fn run<K: AesKernel>(self, fk: &mut K) -> [Block; 2] {
        let ExpandInPlace { level, m } = self;
        let whole = m / BATCH;
        let mut sums = [0u128; 2];
        let tail: Vec<Block> = level[whole * BATCH..m].to_vec();
        for (k, &v) in tail.iter().enumerate() {
            let s = v & SEED_MASK;
            let (l, r) = (fk.cr(s), fk.cr(s | 1));
            let j = whole * BATCH + k;
            level[2 * j] = l;
            level[2 * j + 1] = r;
            sums[0] ^= l;
            sums[1] ^= r;
        }
        let mut acc = [[0u128; 2]; BATCH];
        for b in (0..whole).rev() {
            let mut h = [0u128; 2 * BATCH];
            for k in 0..BATCH {
                let s = level[b * BATCH + k] & SEED_MASK;
                h[2 * k] = s;
                h[2 * k + 1] = s | 1;
            }
            let (halves, _) = batches_mut(&mut h);
            for c in halves {
                fk.cr8(c);
            }
            level[2 * BATCH * b..2 * BATCH * (b + 1)].copy_from_slice(&h);
            for k in 0..BATCH {
                acc[k][0] ^= h[2 * k];
                acc[k][1] ^= h[2 * k + 1];
            }
        }
        acc.iter().fold(sums, |[l, r], a| [l ^ a[0], r ^ a[1]])
    }
}

/// The outputs of `key` at its corrected leaves `s | t`, one per point of the domain, into
/// `out`: `(−1)^b·(Convert(s) + t·OCW)`, what full-domain evaluation computes after expanding the
/// tree. A generation by the two key holders ends with exactly these leaves, so they get the
/// evaluation of their keys for one output conversion per leaf instead of a second expansion.
/// For a one-point domain `leaves` is ignored (the key is its output).
///
/// # Panics
/// If `out` does not have one entry per point of the domain, or `leaves` (for a domain of more
/// than one point) as many entries as `out`.
pub fn outputs_from_leaves<G: Group>(key: &BgiKey<G>, leaves: &[Block], out: &mut [G]) {
    assert_eq!(out.len(), key.domain_size, "one output per point");
    if let Some(y) = key.constant() {
        out[0] = y;
        return;
    }
    assert_eq!(leaves.len(), out.len(), "one leaf per output");
    key.output(leaves, out);
}

/// A party's sums over its leaves `s | t` (one per point of the domain, corrected with every
/// level's correction word): `Σ Convert(s)`, the conversion that evaluation applies (output
/// slot 0), and the number of leaves with `t = 1`. In a generation by the two key holders, the
/// off-path leaves of the two trees are equal, so the differences of the two parties' sums are
/// `Convert(s_0) − Convert(s_1)` and `t_0 − t_1 = (−1)^{t_1}` at the point, which is what the
/// output correction word needs.
pub fn leaf_sums<G: Group>(leaves: &[Block]) -> (G, u64) {
    fixed_key().with_aes(LeafSums {
        leaves,
        out: PhantomData,
    })
}

/// [`leaf_sums`]'s loop, with fixed-key AES in hand (the hashing as in [`Output`]).
struct LeafSums<'a, G> {
    leaves: &'a [Block],
    out: PhantomData<G>,
}

impl<G: Group> WithAes for LeafSums<'_, G> {
    type Output = (G, u64);

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> (G, u64) {
        let fk = fixed_key();
        let mut sum = G::ZERO;
        let mut ones = 0u64;
        for group in self.leaves.chunks(BATCH) {
            let mut blocks = [0u128; BATCH];
            for (b, &v) in blocks.iter_mut().zip(group) {
                *b = (v & SEED_MASK) ^ tweak(0, 0);
            }
            if group.len() == BATCH {
                aes.ccr8(&mut blocks);
            } else {
                for b in &mut blocks[..group.len()] {
                    *b = aes.ccr(*b);
                }
            }
            for (&v, &b) in group.iter().zip(blocks.iter()) {
                sum += G::random_from(&mut LeafSource::with_first(fk, v & SEED_MASK, 0, b));
                ones += u64::from(lsb(v));
            }
        }
        (sum, ones)
    }
}

/// The level loop of key generation, run with fixed-key AES in hand: the seeds, control bits
/// and one correction word per level, walking down the path to `alpha`.
struct GenLevels {
    alpha: usize,
    d: usize,
    root: [Block; 2],
}

impl WithAes for GenLevels {
    type Output = (Vec<[Block; 2]>, [Block; 2], [bool; 2]);

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        let GenLevels { alpha, d, root } = self;
        let mut s = root;
        let mut t = [false, true];
        let mut cws = Vec::with_capacity(d);
        for i in 0..d {
            let a = (alpha >> (d - 1 - i)) & 1 == 1;
            // The two PRG halves of each seed (lsb 0): `(MMO(s), MMO(s | 1))`. (Written out:
            // through `array::map` the closure, and so the cipher, may stay out of line.)
            let halves = [
                (aes.cr(s[0]), aes.cr(s[0] | 1)),
                (aes.cr(s[1]), aes.cr(s[1] | 1)),
            ];
            // (seed, bit) of each party's left and right child before correction.
            let split = |x: Block| (x & SEED_MASK, lsb(x));
            let (l0, r0) = (split(halves[0].0), split(halves[0].1));
            let (l1, r1) = (split(halves[1].0), split(halves[1].1));
            let s_cw = if a { l0.0 ^ l1.0 } else { r0.0 ^ r1.0 };
            let tl_cw = l0.1 ^ l1.1 ^ a ^ true;
            let tr_cw = r0.1 ^ r1.1 ^ a;
            let keep = if a { [r0, r1] } else { [l0, l1] };
            let t_keep_cw = if a { tr_cw } else { tl_cw };
            for b in 0..2 {
                let (ks, kt) = keep[b];
                s[b] = ks ^ (mask(t[b]) & s_cw);
                t[b] = kt ^ (t[b] & t_keep_cw);
            }
            cws.push([s_cw | u128::from(tl_cw), s_cw | u128::from(tr_cw)]);
        }
        (cws, s, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Fp;

    /// Both trees in one place, generated the way two key holders do it with
    /// [`expand_uncorrected`], [`leaf_sums`] and [`BgiKey::from_parts`] (whole levels, XOR sums,
    /// levels cut to the nodes that meet `[0, n)`): the keys are exactly `gen_with_seeds`'s, and
    /// [`outputs_from_leaves`] on the final leaves is their full-domain evaluation.
    #[test]
    fn level_by_level_generation_matches_gen_with_seeds() {
        let roots = [
            0x1234_5678_9abc_def0_1122_3344_5566_7788u128 & SEED_MASK,
            0xfeed_beef_u128 << 40,
        ];
        for (n, alpha) in [
            (2usize, 1usize),
            (3, 2),
            (5, 4),
            (8, 3),
            (100, 57),
            (1000, 999),
        ] {
            let d = depth(n);
            let beta = Fp::from_u64(424_242);
            let mut nodes = [vec![roots[0]], vec![roots[1] | 1]];
            let mut cws = Vec::new();
            for i in 0..d {
                let a = (alpha >> (d - 1 - i)) & 1 == 1;
                let mut kids = nodes.clone();
                let [l0, r0] = expand_uncorrected(&mut kids[0]);
                let [l1, r1] = expand_uncorrected(&mut kids[1]);
                let s = if a { l0 ^ l1 } else { r0 ^ r1 } & SEED_MASK;
                let (tl, tr) = (lsb(l0 ^ l1) ^ a ^ true, lsb(r0 ^ r1) ^ a);
                let keep = n.div_ceil(1 << (d - i - 1));
                for b in 0..2 {
                    for (j, &p) in nodes[b].iter().enumerate() {
                        let m = mask(lsb(p));
                        kids[b][2 * j] ^= m & (s | u128::from(tl));
                        kids[b][2 * j + 1] ^= m & (s | u128::from(tr));
                    }
                    kids[b].truncate(keep);
                }
                nodes = kids;
                cws.push((s, tl, tr));
            }
            let (c0, t0): (Fp, u64) = leaf_sums(&nodes[0]);
            let (c1, t1): (Fp, u64) = leaf_sums(&nodes[1]);
            let sign = Fp::from_u64(t0) - Fp::from_u64(t1);
            let ocw = sign * (beta - c0 + c1);
            let k0 = BgiKey::from_parts(TwoParty::P0, n, roots[0], &cws, ocw);
            let k1 = BgiKey::from_parts(TwoParty::P1, n, roots[1], &cws, ocw);
            let seeds = roots.map(|r| Seed(r.to_le_bytes()));
            let (g0, g1) = <Bgi as SinglePointDpf<Fp>>::gen_with_seeds(n, alpha, beta, seeds);
            assert!(k0 == g0 && k1 == g1, "n = {n}, alpha = {alpha}");
            // The leaves give the full-domain evaluation without a second expansion.
            for (k, leaves) in [(&k0, &nodes[0]), (&k1, &nodes[1])] {
                let mut out = vec![Fp::ZERO; n];
                outputs_from_leaves(k, leaves, &mut out);
                assert_eq!(
                    out,
                    <Bgi as SinglePointDpf<Fp>>::eval_all(k),
                    "n = {n}, alpha = {alpha}"
                );
            }
        }
        let one = BgiKey::from_parts(TwoParty::P1, 1, 0, &[], Fp::from_u64(9));
        let mut out = [Fp::ZERO];
        outputs_from_leaves(&one, &[], &mut out);
        assert_eq!(out[0], <Bgi as SinglePointDpf<Fp>>::eval(&one, 0));
    }

    /// In place, every node's children are its PRG halves, for levels with and without a
    /// partial group of 8.
    #[test]
    fn expand_uncorrected_is_the_prg_on_every_node() {
        let fk = fixed_key();
        for m in [1usize, 7, 8, 9, 16, 21] {
            let nodes: Vec<Block> = (0..m as u128)
                .map(|i| (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
                .collect();
            let mut level = nodes.clone();
            let sums = expand_uncorrected(&mut level);
            assert_eq!(level.len(), 2 * m);
            let mut want = [0, 0];
            for (j, &v) in nodes.iter().enumerate() {
                let s = v & SEED_MASK;
                assert_eq!([level[2 * j], level[2 * j + 1]], [fk.cr(s), fk.cr(s | 1)]);
                want = [want[0] ^ level[2 * j], want[1] ^ level[2 * j + 1]];
            }
            assert_eq!(sums, want, "m = {m}");
        }
    }

    #[test]
    fn one_point_keys_from_parts_are_shares() {
        let (b0, b1) = (Fp::from_u64(5), Fp::from_u64(9));
        let k0 = BgiKey::from_parts(TwoParty::P0, 1, 77, &[], b0);
        let k1 = BgiKey::from_parts(TwoParty::P1, 1, 77, &[], -b1);
        assert_eq!(Bgi::eval(&k0, 0) + Bgi::eval(&k1, 0), b0 + b1);
        assert_eq!(BgiKey::<Fp>::from_bytes(&k1.to_bytes(), 1).ok(), Some(k1));
    }
}
