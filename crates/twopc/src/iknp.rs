//! IKNP OT extension, semi-honest (IKNP03 §3, without the KOS15 consistency check): random,
//! correlated and chosen-message OT for any number of OTs from 128 base OTs.
//!
//! IKNP03 = Ishai, Kilian, Nissim, Petrank, "Extending Oblivious Transfers Efficiently",
//! CRYPTO 2003. Symbols as in the paper, with κ = 128:
//!
//! * Setup: the extension's *sender* plays the base-OT receiver with choice bits `s = Δ`
//!   (its global correlation) and gets `k_j^{s_j}`; the extension's *receiver* plays the base-OT
//!   sender and gets both `k_j^0, k_j^1`, for `j < κ`. The seeds key AES-128 in counter mode,
//!   `G(k)`; the counter runs on across batches, so a setup serves any number of OTs.
//! * Extension of `m` OTs with choice bits `r` (IKNP03 Fig. 1, steps 1–3), `m` rounded up to a
//!   multiple of 128: the receiver takes `t^j = G(k_j^0)` and sends
//!   `u^j = t^j ⊕ G(k_j^1) ⊕ r` for every column `j` (16 bytes per OT); the sender computes
//!   `q^j = G(k_j^{s_j}) ⊕ s_j·u^j = t^j ⊕ s_j·r`. Transposing (see [`crate::transpose`])
//!   gives rows with `q_i = t_i ⊕ r_i·Δ`.
//! * Correlated OT (COT) with global Δ: the sender holds `q_i` (its messages are `q_i` and
//!   `q_i ⊕ Δ`), the receiver `t_i = q_i ⊕ r_i·Δ`.
//! * Random OT: both sides hash with the correlation-robust [`ot_hash`](crate::hash::ot_hash) tweaked by the OT's
//!   index `i` (counted across batches): the sender's messages are `H(i, q_i)`, `H(i, q_i ⊕ Δ)`,
//!   the receiver gets `H(i, t_i)`.
//! * Chosen-message OT by Beaver's derandomisation (Beaver95; GKK12 §7.7 uses it to move all
//!   hashing offline): given random OTs `(m_{i,0}, m_{i,1})` and `(r_i, m_{i,r_i})`, the receiver
//!   with choice `c_i` sends `d_i = c_i ⊕ r_i`, the sender answers
//!   `y_{i,b} = x_{i,b} ⊕ m_{i, b ⊕ d_i}`, and the receiver outputs `y_{i,c_i} ⊕ m_{i,r_i}`.
//!
//! Everything here is I/O-free; [`crate::driver`] moves the messages.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_prim::aes::{Aes128Cipher, Block, fixed_key, mask};

use crate::hash::{ot_hash_in_place, ot_hash_pairs, ot_hash_pairs_into};
use crate::transpose::{column_stride, transpose_strided_into};

/// κ: the number of base OTs and the width of the correlation Δ.
pub const KAPPA: usize = 128;

/// Bytes the receiver sends per 128 extended OTs.
pub const EXTEND_BYTES_PER_BLOCK: usize = KAPPA * 16;

const EXTEND_MSG: &str = "IKNP extension matrix";
const FLIP_MSG: &str = "OT derandomisation bits";
const MASKED_MSG: &str = "OT masked messages";

/// Blocks of 128 OTs needed for `m` OTs.
pub fn blocks_for(m: usize) -> usize {
    m.div_ceil(128)
}

/// The bytes of the receiver's extension message for `m` OTs.
pub fn extend_msg_len(m: usize) -> usize {
    blocks_for(m) * EXTEND_BYTES_PER_BLOCK
}

/// Counter-mode AES keyed by a base-OT seed: block `b` is `AES_k(b)`.
fn expand(cipher: &Aes128Cipher, counter: u64, out: &mut [Block]) {
    for (x, c) in out.iter_mut().zip(Block::from(counter)..) {
        *x = c;
    }
    cipher.encrypt_in_place(out);
}

fn seed_cipher(k: Block) -> Aes128Cipher {
    Aes128Cipher::new(k.to_le_bytes())
}

/// Packs bits into blocks, 128 per block, least significant bit first; padding bits are 0.
pub fn pack_bits(bits: &[bool]) -> Vec<Block> {
    bits.chunks(128)
        .map(|c| {
            c.chunks(8)
                .enumerate()
                .fold(0, |w, (k, b)| w | Block::from(pack8(b)) << (8 * k))
        })
        .collect()
}

/// Up to eight bools as the bits of a byte, the first the least significant: their bytes
/// (each 0 or 1) as one word, gathered by one multiplication. Byte `i`'s bit lands at bit
/// `56 + i` through the constant's byte `7 − i` (`8i + 7(7 − i) + 7 = 56 + i`); every other
/// product is a distinct lower power of two, so nothing carries into the top byte.
fn pack8(b: &[bool]) -> u8 {
    let mut w = [0u8; 8];
    for (d, &s) in w.iter_mut().zip(b) {
        *d = u8::from(s);
    }
    (u64::from_le_bytes(w).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// The extension's sender after setup: Δ and the seeds `k_j^{Δ_j}`.
pub struct IknpSender {
    delta: Block,
    seeds: Vec<Aes128Cipher>,
    /// Blocks of `G(k)` used so far per column.
    counter: u64,
    /// Index of the next OT (the hash tweak).
    next_ot: u64,
}

impl std::fmt::Debug for IknpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IknpSender")
            .field("next_ot", &self.next_ot)
            .finish_non_exhaustive()
    }
}

/// The extension's receiver after setup: both seeds of every base OT.
pub struct IknpReceiver {
    seeds: Vec<[Aes128Cipher; 2]>,
    counter: u64,
    next_ot: u64,
}

impl std::fmt::Debug for IknpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IknpReceiver")
            .field("next_ot", &self.next_ot)
            .finish_non_exhaustive()
    }
}

/// The bits of Δ as base-OT choices (bit `j` of Δ is choice `j`).
pub fn delta_bits(delta: Block) -> Vec<bool> {
    (0..KAPPA).map(|j| (delta >> j) & 1 == 1).collect()
}

/// The sender's side of `m` correlated OTs: `q_i`, and the receiver's `t_i = q_i ⊕ r_i·Δ`.
#[derive(Clone)]
pub struct CotSender {
    /// Index of the first OT (across batches).
    pub first: u64,
    /// Δ, the global correlation.
    pub delta: Block,
    /// `q_i`: the message for choice 0 (choice 1's is `q_i ⊕ Δ`).
    pub q: Vec<Block>,
}

/// The receiver's side of `m` correlated OTs.
#[derive(Clone)]
pub struct CotReceiver {
    /// Index of the first OT (across batches).
    pub first: u64,
    /// The choice bits `r_i`.
    pub choices: Vec<bool>,
    /// `t_i = q_i ⊕ r_i·Δ`.
    pub t: Vec<Block>,
}

/// The sender's side of `m` random OTs: `(m_{i,0}, m_{i,1})`.
#[derive(Clone)]
pub struct RotSender {
    /// The message pairs.
    pub msgs: Vec<[Block; 2]>,
}

/// The receiver's side of `m` random OTs: `r_i` and `m_{i,r_i}`.
#[derive(Clone)]
pub struct RotReceiver {
    /// The (random) choice bits.
    pub choices: Vec<bool>,
    /// The chosen messages.
    pub msgs: Vec<Block>,
}

macro_rules! redacted_debug {
    ($($t:ty),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($t), "({} OTs, ..)"), self.len())
            }
        }
    )*};
}
redacted_debug!(CotSender, CotReceiver, RotSender, RotReceiver);

impl CotSender {
    /// Number of OTs.
    pub fn len(&self) -> usize {
        self.q.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    /// Random OT by hashing: `(H(i, q_i), H(i, q_i ⊕ Δ))`.
    pub fn into_random(self) -> RotSender {
        RotSender {
            msgs: ot_hash_pairs(fixed_key(), self.first, self.delta, &self.q),
        }
    }

    /// The messages of [`into_random`](Self::into_random), appended to `out`.
    pub fn random_into(&self, out: &mut Vec<[Block; 2]>) {
        ot_hash_pairs_into(fixed_key(), self.first, self.delta, &self.q, out);
    }
}

impl CotReceiver {
    /// Number of OTs.
    pub fn len(&self) -> usize {
        self.t.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
    /// Random OT by hashing: `H(i, t_i)`.
    pub fn into_random(self) -> RotReceiver {
        let mut t = self.t;
        ot_hash_in_place(fixed_key(), self.first, &mut t);
        RotReceiver {
            choices: self.choices,
            msgs: t,
        }
    }
}

impl IknpSender {
    /// The sender after setup, from Δ and the base-OT keys it received for the bits of Δ
    /// ([`delta_bits`]). Δ must be secret and uniformly random (for garbling, uniform with its
    /// lsb set: [`crate::gc::random_delta`]); random and chosen-message OTs rely on it.
    ///
    /// # Panics
    /// If `keys` does not hold exactly [`KAPPA`] keys (the driver runs exactly that many base
    /// OTs).
    pub fn new(delta: Block, keys: &[Block]) -> Self {
        assert_eq!(keys.len(), KAPPA, "one base-OT key per bit of Δ");
        IknpSender {
            delta,
            seeds: keys.iter().map(|&k| seed_cipher(k)).collect(),
            counter: 0,
            next_ot: 0,
        }
    }

    /// Δ, the global correlation.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// [IKNP03 Fig. 1, step 3] Consumes the receiver's extension message for `m` OTs.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `msg` is not [`extend_msg_len`]`(m)` bytes.
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
        wire::exact_len(peer, EXTEND_MSG, msg, extend_msg_len(m))?;
        let blocks = blocks_for(m);
        let stride = column_stride(blocks);
        let mut cols = vec![0 as Block; KAPPA * stride];
        if blocks > 0 {
            for (j, (col, u)) in cols
                .chunks_exact_mut(stride)
                .zip(msg.chunks_exact(16 * blocks))
                .enumerate()
            {
                let col = &mut col[..blocks];
                expand(&self.seeds[j], self.counter, col);
                let s = mask((self.delta >> j) & 1 == 1);
                for (q, u) in col.iter_mut().zip(u.chunks_exact(16)) {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(u);
                    *q ^= Block::from_le_bytes(b) & s;
                }
            }
        }
        transpose_strided_into(&cols, stride, blocks, m, q);
        let first = self.next_ot;
        self.counter += blocks as u64;
        self.next_ot += (blocks * 128) as u64;
        Ok(first)
    }
}

impl IknpReceiver {
    /// The receiver after setup, from the key pairs of the [`KAPPA`] base OTs it sent.
    ///
    /// # Panics
    /// If `keys` does not hold exactly [`KAPPA`] pairs.
    pub fn new(keys: &[[Block; 2]]) -> Self {
        assert_eq!(keys.len(), KAPPA, "one base-OT key pair per bit of Δ");
        IknpReceiver {
            seeds: keys
                .iter()
                .map(|[k0, k1]| [seed_cipher(*k0), seed_cipher(*k1)])
                .collect(),
            counter: 0,
            next_ot: 0,
        }
    }

    /// [IKNP03 Fig. 1, steps 1–2] Extends to `choices.len()` correlated OTs: the receiver's
    /// outputs and the message `u^0 ‖ … ‖ u^{κ−1}` for the sender.
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
        let m = choices.len();
        let blocks = blocks_for(m);
        let r = pack_bits(choices);
        let stride = column_stride(blocks);
        let mut cols = vec![0 as Block; KAPPA * stride];
        let mut other = vec![0 as Block; blocks];
        let mut msg = Vec::with_capacity(extend_msg_len(m));
        if blocks > 0 {
            for (j, col) in cols.chunks_exact_mut(stride).enumerate() {
                let col = &mut col[..blocks];
                let [k0, k1] = &self.seeds[j];
                expand(k0, self.counter, col);
                expand(k1, self.counter, &mut other);
                for ((t, g1), rb) in col.iter().zip(&other).zip(&r) {
                    msg.extend_from_slice(&(t ^ g1 ^ rb).to_le_bytes());
                }
            }
        }
        transpose_strided_into(&cols, stride, blocks, m, t);
        let first = self.next_ot;
        self.counter += blocks as u64;
        self.next_ot += (blocks * 128) as u64;
        (first, msg)
    }
}

/// Bytes of the receiver's derandomisation message for `m` OTs.
pub fn flip_msg_len(m: usize) -> usize {
    m.div_ceil(8)
}

/// Bytes of the sender's masked messages for `m` OTs.
pub fn masked_msg_len(m: usize) -> usize {
    32 * m
}

impl RotReceiver {
    /// Number of OTs.
    pub fn len(&self) -> usize {
        self.msgs.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// [Beaver95, derandomisation, receiver's message] `d_i = c_i ⊕ r_i`, packed 8 per byte.
    ///
    /// # Errors
    /// [`crate::TwopcError::LengthMismatch`] if `choices` does not have one bit per OT.
    pub fn flip_bits(&self, choices: &[bool]) -> Result<Vec<u8>, crate::TwopcError> {
        crate::error::same_len("chosen-message OT choices", self.len(), choices.len())?;
        let mut d = vec![0u8; flip_msg_len(choices.len())];
        for (i, (&c, &r)) in choices.iter().zip(&self.choices).enumerate() {
            d[i / 8] |= u8::from(c ^ r) << (i % 8);
        }
        Ok(d)
    }

    /// [Beaver95, derandomisation, receiver's output] `x_{i,c_i} = y_{i,c_i} ⊕ m_{i,r_i}`.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `masked` is not [`masked_msg_len`] bytes;
    /// [`crate::TwopcError::LengthMismatch`] if `choices` has the wrong length.
    pub fn unmask(
        &self,
        peer: PartyId,
        choices: &[bool],
        masked: &[u8],
    ) -> Result<Vec<Block>, crate::TwopcError> {
        crate::error::same_len("chosen-message OT choices", self.len(), choices.len())?;
        wire::exact_len(peer, MASKED_MSG, masked, masked_msg_len(self.len()))?;
        Ok(masked
            .chunks_exact(32)
            .zip(choices)
            .zip(&self.msgs)
            .map(|((y, &c), m)| {
                let mut y0 = [0u8; 16];
                let mut y1 = [0u8; 16];
                y0.copy_from_slice(&y[..16]);
                y1.copy_from_slice(&y[16..]);
                let (y0, y1) = (Block::from_le_bytes(y0), Block::from_le_bytes(y1));
                // y_{c}, selected without a branch on the choice bit.
                (y0 ^ ((y0 ^ y1) & mask(c))) ^ m
            })
            .collect())
    }
}

impl RotSender {
    /// Number of OTs.
    pub fn len(&self) -> usize {
        self.msgs.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// [Beaver95, derandomisation, sender's message] `y_{i,b} = x_{i,b} ⊕ m_{i, b ⊕ d_i}` for
    /// the receiver's bits `flips`, as `y_{i,0} ‖ y_{i,1}` per OT.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `flips` has the wrong length or nonzero padding bits;
    /// [`crate::TwopcError::LengthMismatch`] if `inputs` does not have one pair per OT.
    pub fn mask(
        &self,
        peer: PartyId,
        inputs: &[[Block; 2]],
        flips: &[u8],
    ) -> Result<Vec<u8>, crate::TwopcError> {
        crate::error::same_len("chosen-message OT inputs", self.len(), inputs.len())?;
        let m = self.len();
        wire::exact_len(peer, FLIP_MSG, flips, flip_msg_len(m))?;
        if !m.is_multiple_of(8) && flips[m / 8] >> (m % 8) != 0 {
            return Err(PeerFault::malformed(peer, FLIP_MSG, "nonzero padding bits").into());
        }
        let mut out = Vec::with_capacity(masked_msg_len(m));
        for (i, (x, r)) in inputs.iter().zip(&self.msgs).enumerate() {
            let d = (flips[i / 8] >> (i % 8)) & 1 == 1;
            let s = mask(d);
            // m_{b ⊕ d}: swap the pair when d = 1, without a branch.
            let diff = (r[0] ^ r[1]) & s;
            let (m0, m1) = (r[0] ^ diff, r[1] ^ diff);
            out.extend_from_slice(&(x[0] ^ m0).to_le_bytes());
            out.extend_from_slice(&(x[1] ^ m1).to_le_bytes());
        }
        Ok(out)
    }
}

/// How many OTs one extension message covers at most in the driver: 2^16 OTs, a 1 MiB message.
pub const MAX_OTS_PER_MSG: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// [`pack_bits`] agrees with packing bit by bit, for lengths around every word and block
    /// boundary; padding bits stay 0.
    #[test]
    fn packed_bits_are_the_bits_in_order() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        for n in (0..=300).chain([1023, 1024, 1025, 4099]) {
            let bits: Vec<bool> = (0..n).map(|_| rng.random()).collect();
            let mut want = vec![0 as Block; blocks_for(n)];
            for (i, &b) in bits.iter().enumerate() {
                want[i / 128] |= Block::from(b) << (i % 128);
            }
            assert_eq!(pack_bits(&bits), want, "n = {n}");
        }
    }
}
