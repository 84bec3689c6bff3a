//! SoftSpoken OT extension, semi-honest (Roy, "SoftSpoken OT: Quieter OT Extension from
//! Small-Field Silent VOLE in the Minicrypt Model", CRYPTO 2022, ePrint 2022/192): the same
//! correlated, random and chosen-message OTs as [`crate::iknp`] from the same 128 base OTs,
//! with `128/k` bits of communication per OT instead of 128, for a parameter `k ∈ 1..=8`.
//!
//! Symbols as in [`crate::iknp`] where they coincide: the extension's *sender* holds the global
//! correlation Δ ∈ F₂¹²⁸ and ends with `q_i`; the *receiver* holds choice bits `r_i` and ends
//! with `t_i = q_i ⊕ r_i·Δ`. The bits of Δ are cut into `⌈128/k⌉` chunks `Δ_j` of `k` bits (the
//! last chunk has `128 mod k` bits when `k` does not divide 128); bit `b` of chunk `j` is bit
//! `jk + b` of Δ and the choice of base OT `jk + b`.
//!
//! 1. **(2^k − 1)-out-of-2^k random OT by a punctured GGM tree** (from `k` random 1-out-of-2
//!    OTs). The receiver holds a GGM tree per chunk with leaves `s_{j,x}`, `x ∈ F₂^k`; bit
//!    `b` of a leaf's index is decided at depth `b + 1`, and the two nodes of depth 1 are the
//!    keys `k⁰, k¹` of base OT `jk`. For every deeper level `b ≥ 1` it sends `K_β ⊕ k^β`
//!    (β = 0, 1), where `K_β` is the XOR of the level's nodes with bit `b` = β and `k^β` the
//!    keys of base OT `jk + b`. The sender, which holds `k^{Δ_{jk+b}}`, rebuilds every node
//!    off the path to the leaf `x* = ¬Δ_j` (bitwise complement) and hence every leaf but
//!    `s_{j,x*}`. Nodes are expanded with the tweakable hash
//!    [`FixedKeyAes::tccr`](doram_prim::FixedKeyAes::tccr), tweaked by chunk, level and child
//!    bit. Setup message: `Σ_j 32·(k_j − 1)` bytes (none for `k = 1`).
//! 2. **Small-field subspace VOLE with the repetition code** (the semi-honest protocol).
//!    Every leaf seeds AES-128 in counter mode, `G(s)`, whose counter runs on across batches
//!    as in IKNP. For `m` OTs (rounded up to a multiple of 128) the receiver computes, per
//!    chunk, `u_j = Σ_x G(s_{j,x})` and `v_j[b] = Σ_{x: x_b = 0} G(s_{j,x})`; the sender
//!    computes `w_j[b] = Σ_{x: x_b = Δ_{jk+b}} G(s_{j,x})` (the sum avoids `x*`, as
//!    `x*_b ≠ Δ_{jk+b}`), so that `w_j[b] = v_j[b] ⊕ Δ_{jk+b}·u_j`. Indexing the sender's
//!    leaves by `y = x ⊕ x*` makes its sums run over `y_b = 1`: public loops, no branch on Δ.
//!    The receiver sends `c_j = u_j ⊕ r` for every chunk (the repetition code: every chunk
//!    carries the same `r`), `m/8` bytes per chunk, i.e. `128/k` bits per OT.
//! 3. **Conversion to correlated OT of 128-bit strings.** The sender sets
//!    `q^{jk+b} = w_j[b] ⊕ Δ_{jk+b}·c_j = v_j[b] ⊕ Δ_{jk+b}·r`: the IKNP column relation,
//!    with `t^{jk+b} = v_j[b]` at the receiver. Transposing (see [`crate::transpose`]) gives
//!    `q_i = t_i ⊕ r_i·Δ`, and random and chosen-message OT follow exactly as in
//!    [`crate::iknp`] (the same [`CotSender`]/[`CotReceiver`] outputs, the same TCCR hash
//!    tweaked by the OT index).
//!
//! With `k = 1` every chunk is one bit, the tree is the base OT itself, `u = G(k⁰) ⊕ G(k¹)`,
//! `v = G(k⁰)`: the protocol *is* IKNP, message for message (a test checks this).
//!
//! Per OT the receiver expands `2^k·⌈128/k⌉/128` AES blocks and the sender one fewer per chunk;
//! the sums over leaves are computed by folding the leaf array one index bit at a time (about
//! `2^{k+1}` XORs of blocks per chunk and 128 OTs). Leaves are processed in slices of a few
//! blocks so that one chunk's expanded leaves stay in cache.
//!
//! Semi-honest only: the malicious variant's consistency check is not implemented, so a
//! receiver that sends wrong corrections makes the OTs wrong without detection (as with IKNP
//! here). Peer messages of the wrong size are refused with a [`PeerFault`].
//!
//! Everything here is I/O-free; [`crate::driver`] moves the messages.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_prim::aes::{Aes128Cipher, Block, fixed_key, mask};

use crate::TwopcError;
use crate::iknp::{CotReceiver, CotSender, KAPPA, blocks_for, pack_bits};
use crate::transpose::{column_stride, transpose_strided_into};

/// The largest supported chunk size `k`.
pub const MAX_K: usize = 8;

/// The default chunk size, `k = 4`: 4 bytes per OT, a quarter of IKNP's. In the crate's
/// throughput example (both parties in one process, random OTs, CPU time of the busier party)
/// it costs about 25% more computation than IKNP; `k = 2` costs about 10% more for half of
/// IKNP's bytes, `k = 5` about 40% more for 3.25 bytes, `k = 8` about 3.3 times as much for
/// 2 bytes. Over a real network the bytes dominate, hence the larger default.
pub const DEFAULT_K: usize = 4;

const SETUP_MSG: &str = "SoftSpoken GGM tree corrections";
const EXTEND_MSG: &str = "SoftSpoken VOLE corrections";

/// Domain separation of the tree hash's tweak (high half).
const TREE_TAG: u64 = 0x736f_6674_7370_6b6e;

/// A validated chunk size `k ∈ 1..=8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkBits(usize);

impl ChunkBits {
    /// `k = 2`: half of IKNP's bytes per OT for about 10 % more computation than IKNP, where
    /// [`DEFAULT_K`] costs 25 % more. For OTs that each come with a message much longer than
    /// the extension's bytes per OT, so that computation, not those bytes, bounds the speed.
    pub const LIGHT: ChunkBits = ChunkBits(2);

    /// `k`, if it is in `1..=`[`MAX_K`].
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] otherwise.
    pub fn new(k: usize) -> Result<Self, TwopcError> {
        if (1..=MAX_K).contains(&k) {
            Ok(ChunkBits(k))
        } else {
            Err(TwopcError::ApiMisuse("SoftSpoken k must be in 1..=8"))
        }
    }

    /// `k`.
    pub fn get(self) -> usize {
        self.0
    }

    /// The number of chunks of Δ, `⌈128/k⌉`.
    pub fn chunks(self) -> usize {
        KAPPA.div_ceil(self.0)
    }

    /// Chunk `j`: its first bit of Δ and its size `k_j`.
    fn chunk(self, j: usize) -> (usize, usize) {
        let start = j * self.0;
        (start, self.0.min(KAPPA - start))
    }

    /// Bytes of the receiver's setup message (the tree corrections).
    pub fn setup_msg_len(self) -> usize {
        (0..self.chunks()).map(|j| 32 * (self.chunk(j).1 - 1)).sum()
    }

    /// Bytes of the receiver's extension message for `m` OTs: `⌈128/k⌉` corrections of
    /// `m` bits rounded up to a multiple of 128.
    pub fn extend_msg_len(self, m: usize) -> usize {
        self.chunks() * blocks_for(m) * 16
    }
}

impl Default for ChunkBits {
    fn default() -> Self {
        ChunkBits(DEFAULT_K)
    }
}

/// [SoftSpoken, tree] The GGM expansion of `node` at chunk `j`, into the level deciding index bit
/// `b`: its children with bit `b` = 0 and 1.
fn children(j: usize, b: usize, node: Block) -> [Block; 2] {
    let aes = fixed_key();
    let tweak = |beta: u64| {
        (Block::from(TREE_TAG) << 64) | Block::from((j as u64) << 16 | (b as u64) << 1 | beta)
    };
    [aes.tccr(tweak(0), node), aes.tccr(tweak(1), node)]
}

/// Counter-mode AES keyed by a leaf: block `c` is `AES_s(c)`.
fn expand(cipher: &Aes128Cipher, counter: u64, out: &mut [Block]) {
    for (x, c) in out.iter_mut().zip(Block::from(counter)..) {
        *x = c;
    }
    cipher.encrypt_in_place(out);
}

/// Blocks per leaf processed at once: the chunk's expanded leaves take `2^k · slice · 16`
/// bytes, 64 KiB.
fn slice_blocks(k: usize) -> usize {
    ((1usize << 12) >> k).max(8)
}

/// Folds the leaf array `leaves` (`2^{kj}` leaves of `len` blocks each, leaf `x` at
/// `x·len ..`), highest index bit first. For every bit `b` it stores in `out[b]` the XOR of the
/// leaves with bit `b` = `upper` (computed before the fold merges bit `b`). At the end leaf 0
/// holds the XOR of all leaves.
fn fold_sums(leaves: &mut [Block], kj: usize, len: usize, upper: bool, out: &mut [&mut [Block]]) {
    for b in (0..kj).rev() {
        let h = 1usize << b;
        let (lo, hi) = leaves[..2 * h * len].split_at_mut(h * len);
        let dst = &mut *out[b];
        dst.fill(0);
        for (l, u) in lo.chunks_exact_mut(len).zip(hi.chunks_exact(len)) {
            let side: &[Block] = if upper { u } else { l };
            for (d, s) in dst.iter_mut().zip(side) {
                *d ^= s;
            }
            for (l, u) in l.iter_mut().zip(u) {
                *l ^= u;
            }
        }
    }
}

/// The extension's receiver after setup: every leaf of every chunk's tree.
pub struct SoftSpokenReceiver {
    k: ChunkBits,
    /// Leaf ciphers, chunk by chunk, `2^{k_j}` per chunk in index order.
    leaves: Vec<Aes128Cipher>,
    counter: u64,
    next_ot: u64,
}

impl std::fmt::Debug for SoftSpokenReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftSpokenReceiver")
            .field("k", &self.k.0)
            .field("next_ot", &self.next_ot)
            .finish_non_exhaustive()
    }
}

/// The extension's sender after setup: Δ and every leaf but the punctured one of every chunk.
pub struct SoftSpokenSender {
    k: ChunkBits,
    delta: Block,
    /// Leaf ciphers, chunk by chunk, `2^{k_j} − 1` per chunk, in the order of `y = x ⊕ x*`
    /// from `y = 1`.
    leaves: Vec<Aes128Cipher>,
    counter: u64,
    next_ot: u64,
}

impl std::fmt::Debug for SoftSpokenSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftSpokenSender")
            .field("k", &self.k.0)
            .field("next_ot", &self.next_ot)
            .finish_non_exhaustive()
    }
}

fn block_at(bytes: &[u8], i: usize) -> Block {
    let mut b = [0u8; 16];
    b.copy_from_slice(&bytes[16 * i..16 * i + 16]);
    Block::from_le_bytes(b)
}

impl SoftSpokenReceiver {
    /// [SoftSpoken, tree] The receiver after setup, from the key pairs of the [`KAPPA`] base OTs
    /// it sent: the state and the tree corrections for the sender
    /// ([`ChunkBits::setup_msg_len`] bytes).
    ///
    /// # Panics
    /// If `keys` does not hold exactly [`KAPPA`] pairs.
    pub fn new(k: ChunkBits, keys: &[[Block; 2]]) -> (Self, Vec<u8>) {
        assert_eq!(keys.len(), KAPPA, "one base-OT key pair per bit of Δ");
        let mut msg = Vec::with_capacity(k.setup_msg_len());
        let mut leaves = Vec::new();
        for j in 0..k.chunks() {
            let (start, kj) = k.chunk(j);
            let mut nodes = vec![keys[start][0], keys[start][1]];
            for b in 1..kj {
                let h = 1usize << b;
                let mut next = vec![0 as Block; 2 * h];
                let mut sums = [0 as Block; 2];
                for (x, &node) in nodes.iter().enumerate() {
                    let c = children(j, b, node);
                    next[x] = c[0];
                    next[x + h] = c[1];
                    sums[0] ^= c[0];
                    sums[1] ^= c[1];
                }
                // [SoftSpoken, tree] K_β ⊕ k^β for base OT jk + b.
                for (s, key) in sums.iter().zip(keys[start + b]) {
                    msg.extend_from_slice(&(s ^ key).to_le_bytes());
                }
                nodes = next;
            }
            leaves.extend(nodes.iter().map(|s| Aes128Cipher::new(s.to_le_bytes())));
        }
        (
            SoftSpokenReceiver {
                k,
                leaves,
                counter: 0,
                next_ot: 0,
            },
            msg,
        )
    }

    /// The chunk size `k`.
    pub fn k(&self) -> ChunkBits {
        self.k
    }

    /// [SoftSpoken, VOLE, receiver] Extends to `choices.len()` correlated OTs: the receiver's
    /// outputs and the corrections `c_0 ‖ … ‖ c_{⌈128/k⌉−1}` for the sender.
    pub fn extend(&mut self, choices: &[bool]) -> (CotReceiver, Vec<u8>) {
        let mut t = Vec::new();
        let (first, msg) = self.extend_into(choices, &mut t);
        let ots = CotReceiver {
            first,
            choices: choices.to_vec(),
            t,
        };
        (ots, msg)
    }

    /// [`extend`](Self::extend) with the outputs `t_i` appended to `t`: returns the index of
    /// the first OT and the message.
    pub fn extend_into(&mut self, choices: &[bool], t: &mut Vec<Block>) -> (u64, Vec<u8>) {
        let blocks = blocks_for(choices.len());
        let (first, cols, msg) = self.columns(choices);
        transpose_strided_into(&cols, column_stride(blocks), blocks, choices.len(), t);
        (first, msg)
    }

    /// The receiver's columns `t^c` (bit matrix by columns, [`column_stride`] apart), the
    /// first OT's index and the message.
    fn columns(&mut self, choices: &[bool]) -> (u64, Vec<Block>, Vec<u8>) {
        let m = choices.len();
        let blocks = blocks_for(m);
        let stride = column_stride(blocks);
        let r = pack_bits(choices);
        let k = self.k;
        let mut cols = vec![0 as Block; KAPPA * stride];
        let mut msg = vec![0u8; k.extend_msg_len(m)];
        let slice = slice_blocks(k.get());
        let mut buf = vec![0 as Block; (1 << k.get()) * slice.min(blocks)];
        let mut first_leaf = 0;
        for j in 0..k.chunks() {
            let (start, kj) = k.chunk(j);
            let n = 1usize << kj;
            let leaves = &self.leaves[first_leaf..first_leaf + n];
            first_leaf += n;
            let mut off = 0;
            while off < blocks {
                let len = slice.min(blocks - off);
                let buf = &mut buf[..n * len];
                for (out, leaf) in buf.chunks_exact_mut(len).zip(leaves) {
                    expand(leaf, self.counter + off as u64, out);
                }
                // [SoftSpoken, VOLE] v_j[b] = Σ_{x_b = 0} G(s_x), straight into column jk + b.
                let mut outs: Vec<&mut [Block]> = cols[start * stride..(start + kj) * stride]
                    .chunks_exact_mut(stride)
                    .map(|c| &mut c[off..off + len])
                    .collect();
                fold_sums(buf, kj, len, false, &mut outs);
                // [SoftSpoken, VOLE] c_j = u_j ⊕ r, u_j = Σ_x G(s_x) now in leaf 0.
                let dst = &mut msg[16 * (j * blocks + off)..16 * (j * blocks + off + len)];
                for ((d, u), rb) in dst.chunks_exact_mut(16).zip(&buf[..len]).zip(&r[off..]) {
                    d.copy_from_slice(&(u ^ rb).to_le_bytes());
                }
                off += len;
            }
        }
        let first = self.next_ot;
        self.counter += blocks as u64;
        self.next_ot += (blocks * 128) as u64;
        (first, cols, msg)
    }
}

impl SoftSpokenSender {
    /// [SoftSpoken, tree] The sender after setup, from Δ, the base-OT keys it received for the
    /// bits of Δ ([`crate::iknp::delta_bits`]) and the receiver's tree corrections `msg`. Δ
    /// must be secret and uniformly random, as for [`crate::IknpSender::new`].
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `msg` is not [`ChunkBits::setup_msg_len`] bytes.
    ///
    /// # Panics
    /// If `keys` does not hold exactly [`KAPPA`] keys.
    pub fn new(
        peer: PartyId,
        k: ChunkBits,
        delta: Block,
        keys: &[Block],
        msg: &[u8],
    ) -> Result<Self, PeerFault> {
        assert_eq!(keys.len(), KAPPA, "one base-OT key per bit of Δ");
        wire::exact_len(peer, SETUP_MSG, msg, k.setup_msg_len())?;
        let mut leaves = Vec::new();
        let mut pos = 0;
        for j in 0..k.chunks() {
            let (start, kj) = k.chunk(j);
            // Nodes by y = x ⊕ x* (low bits); node 0 is on the punctured path, unknown.
            let mut nodes = vec![0, keys[start]];
            for b in 1..kj {
                let h = 1usize << b;
                let d = mask((delta >> (start + b)) & 1 == 1);
                let mut next = vec![0 as Block; 2 * h];
                let mut sum = 0 as Block;
                for (y, &node) in nodes.iter().enumerate().skip(1) {
                    let [c0, c1] = children(j, b, node);
                    // The child with bit b = Δ_{jk+b} is off the path (relative bit 1).
                    let swap = (c0 ^ c1) & d;
                    next[y] = c1 ^ swap;
                    next[y + h] = c0 ^ swap;
                    sum ^= next[y + h];
                }
                // [SoftSpoken, tree] K_{Δ} = (K_Δ ⊕ k^Δ) ⊕ k^Δ; minus the known nodes: the sibling.
                let (c0, c1) = (block_at(msg, pos), block_at(msg, pos + 1));
                pos += 2;
                let corr = c0 ^ ((c0 ^ c1) & d);
                next[h] = corr ^ keys[start + b] ^ sum;
                nodes = next;
            }
            leaves.extend(
                nodes[1..]
                    .iter()
                    .map(|s| Aes128Cipher::new(s.to_le_bytes())),
            );
        }
        Ok(SoftSpokenSender {
            k,
            delta,
            leaves,
            counter: 0,
            next_ot: 0,
        })
    }

    /// Δ, the global correlation.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The chunk size `k`.
    pub fn k(&self) -> ChunkBits {
        self.k
    }

    /// [SoftSpoken, VOLE and conversion, sender] Consumes the receiver's corrections for `m` OTs.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `msg` is not [`ChunkBits::extend_msg_len`]`(m)` bytes.
    pub fn extend(&mut self, peer: PartyId, m: usize, msg: &[u8]) -> Result<CotSender, PeerFault> {
        let mut q = Vec::new();
        let first = self.extend_into(peer, m, msg, &mut q)?;
        Ok(CotSender {
            first,
            delta: self.delta,
            q,
        })
    }

    /// [`extend`](Self::extend) with the outputs `q_i` appended to `q`: returns the index of
    /// the first OT.
    ///
    /// # Errors
    /// As [`extend`](Self::extend).
    pub fn extend_into(
        &mut self,
        peer: PartyId,
        m: usize,
        msg: &[u8],
        q: &mut Vec<Block>,
    ) -> Result<u64, PeerFault> {
        let (first, cols) = self.columns(peer, m, msg)?;
        let blocks = blocks_for(m);
        transpose_strided_into(&cols, column_stride(blocks), blocks, m, q);
        Ok(first)
    }

    /// The sender's columns `q^c` ([`column_stride`] apart) for the receiver's corrections
    /// `msg`, and the first OT's index.
    fn columns(
        &mut self,
        peer: PartyId,
        m: usize,
        msg: &[u8],
    ) -> Result<(u64, Vec<Block>), PeerFault> {
        let k = self.k;
        wire::exact_len(peer, EXTEND_MSG, msg, k.extend_msg_len(m))?;
        let blocks = blocks_for(m);
        let stride = column_stride(blocks);
        let mut cols = vec![0 as Block; KAPPA * stride];
        let slice = slice_blocks(k.get());
        let mut buf = vec![0 as Block; (1 << k.get()) * slice.min(blocks)];
        let mut first_leaf = 0;
        for j in 0..k.chunks() {
            let (start, kj) = k.chunk(j);
            let n = 1usize << kj;
            let leaves = &self.leaves[first_leaf..first_leaf + n - 1];
            first_leaf += n - 1;
            let mut off = 0;
            while off < blocks {
                let len = slice.min(blocks - off);
                let buf = &mut buf[..n * len];
                let (unknown, known) = buf.split_at_mut(len);
                unknown.fill(0);
                for (out, leaf) in known.chunks_exact_mut(len).zip(leaves) {
                    expand(leaf, self.counter + off as u64, out);
                }
                let cols_j = &mut cols[start * stride..(start + kj) * stride];
                {
                    // [SoftSpoken, VOLE] w_j[b] = Σ_{y_b = 1} G(s_{y ⊕ x*}).
                    let mut outs: Vec<&mut [Block]> = cols_j
                        .chunks_exact_mut(stride)
                        .map(|c| &mut c[off..off + len])
                        .collect();
                    fold_sums(buf, kj, len, true, &mut outs);
                }
                // [SoftSpoken, conversion] q^{jk+b} = w_j[b] ⊕ Δ_{jk+b}·c_j.
                let c = &msg[16 * (j * blocks + off)..16 * (j * blocks + off + len)];
                for (b, col) in cols_j.chunks_exact_mut(stride).enumerate() {
                    let s = mask((self.delta >> (start + b)) & 1 == 1);
                    for (i, q) in col[off..off + len].iter_mut().enumerate() {
                        *q ^= block_at(c, i) & s;
                    }
                }
                off += len;
            }
        }
        let first = self.next_ot;
        self.counter += blocks as u64;
        self.next_ot += (blocks * 128) as u64;
        Ok((first, cols))
    }
}
