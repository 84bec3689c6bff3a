//! Base OT: Chou–Orlandi "simplest OT" over Ristretto, with the published fix.
//!
//! CO15 = Chou, Orlandi, "The Simplest Protocol for Oblivious Transfer", LATINCRYPT 2015
//! (ePrint 2015/267). The fix follows Hauck, Loss, "Efficient and Universally Composable
//! Protocols for Oblivious Transfer from the CDH Assumption" (ePrint 2017/1011) and Genç, Iovino,
//! Rial, "The simplest protocol for oblivious transfer revisited" (ePrint 2017/370): every key
//! is derived from the whole transcript of its OT — the sender's point `A`, the receiver's point
//! `B_i` and the index `i` — not from the shared point alone, and points that fail to decode or
//! are the identity are refused. The group is ristretto255 (prime order, canonical encodings:
//! a point decodes only from its one encoding).
//!
//! `n` random OTs in one message each way (CO15 Fig. 1, batched with one `a` for all):
//!
//! 1. sender: `a ← Z_ℓ`, `A = a·G`; sender → receiver: `A` (32 bytes).
//! 2. receiver, for each `i` with choice `c_i`: `b_i ← Z_ℓ`, `B_i = b_i·G + c_i·A`, key
//!    `k_i = KDF(i, A, B_i, b_i·A)`; receiver → sender: `B_0 ‖ … ‖ B_{n−1}` (32n bytes).
//! 3. sender: `k_{i,0} = KDF(i, A, B_i, a·B_i)`, `k_{i,1} = KDF(i, A, B_i, a·B_i − a·A)`.
//!
//! The receiver's `k_i` equals `k_{i,c_i}`. KDF is BLAKE3 in key-derivation mode with a
//! context string of this crate, truncated to one 128-bit [`Block`].
//!
//! The types are the two roles, I/O-free: [`BaseOtSender::start`] → message →
//! [`BaseOtReceiver::respond`] → message → [`BaseOtSender::finish`]. The driver
//! ([`crate::driver`]) moves the messages.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_prim::aes::Block;
use rand_core::{CryptoRng, RngCore};
use subtle::{Choice, ConditionallySelectable};

/// Bytes of an encoded Ristretto point.
pub const POINT_BYTES: usize = 32;

/// The message names peer faults report.
const SENDER_MSG: &str = "base OT sender point";
const RECEIVER_MSG: &str = "base OT receiver points";

const KDF_CONTEXT: &str = "doram-twopc 2026 base OT (Chou-Orlandi, transcript-bound) v1";

fn random_scalar<R: RngCore + CryptoRng + ?Sized>(rng: &mut R) -> Scalar {
    let mut wide = [0u8; 64];
    rng.fill_bytes(&mut wide);
    Scalar::from_bytes_mod_order_wide(&wide)
}

/// Decodes a point a peer sent: canonical encoding, not the identity.
fn decode_point(
    peer: PartyId,
    what: &'static str,
    bytes: &[u8],
) -> Result<RistrettoPoint, PeerFault> {
    let compressed = CompressedRistretto::from_slice(bytes)
        .map_err(|_| PeerFault::wrong_length(peer, what, POINT_BYTES, bytes.len()))?;
    let point = compressed
        .decompress()
        .ok_or_else(|| PeerFault::malformed(peer, what, "not a valid Ristretto encoding"))?;
    if point == RistrettoPoint::identity() {
        return Err(PeerFault::malformed(peer, what, "the identity point"));
    }
    Ok(point)
}

fn kdf(index: usize, a: &[u8; 32], b: &[u8], shared: &RistrettoPoint) -> Block {
    let mut h = blake3::Hasher::new_derive_key(KDF_CONTEXT);
    h.update(&(index as u64).to_le_bytes());
    h.update(a);
    h.update(b);
    h.update(shared.compress().as_bytes());
    let mut out = [0u8; 16];
    h.finalize_xof().fill(&mut out);
    Block::from_le_bytes(out)
}

/// The sender of a batch of base OTs, between its first message and the receiver's reply.
pub struct BaseOtSender {
    n: usize,
    a: Scalar,
    a_bytes: [u8; 32],
    /// a·A, subtracted from a·B_i to get the key of choice 1.
    aa: RistrettoPoint,
}

impl std::fmt::Debug for BaseOtSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseOtSender")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl BaseOtSender {
    /// [CO15 Fig. 1, step 1] Starts `n` random OTs: the state and the message `A` for the
    /// receiver.
    pub fn start<R: RngCore + CryptoRng + ?Sized>(n: usize, rng: &mut R) -> (Self, [u8; 32]) {
        let a = random_scalar(rng);
        let big_a = RistrettoPoint::mul_base(&a);
        let a_bytes = big_a.compress().to_bytes();
        let aa = a * big_a;
        (BaseOtSender { n, a, a_bytes, aa }, a_bytes)
    }

    /// How many OTs this batch has.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// [CO15 Fig. 1, step 3] The sender's key pairs `(k_{i,0}, k_{i,1})` from the receiver's
    /// points `msg` (`32n` bytes).
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `msg` has the wrong length or holds a point that does not
    /// decode or is the identity.
    pub fn finish(self, peer: PartyId, msg: &[u8]) -> Result<Vec<[Block; 2]>, PeerFault> {
        wire::exact_len(peer, RECEIVER_MSG, msg, self.n * POINT_BYTES)?;
        msg.chunks_exact(POINT_BYTES)
            .enumerate()
            .map(|(i, enc)| {
                let b = decode_point(peer, RECEIVER_MSG, enc)?;
                let ab = self.a * b;
                Ok([
                    kdf(i, &self.a_bytes, enc, &ab),
                    kdf(i, &self.a_bytes, enc, &(ab - self.aa)),
                ])
            })
            .collect()
    }
}

/// The receiver of a batch of base OTs.
#[derive(Debug)]
pub struct BaseOtReceiver;

impl BaseOtReceiver {
    /// [CO15 Fig. 1, step 2] Answers the sender's point `a_msg` for the choice bits `choices`:
    /// the keys `k_{i,c_i}` and the message `B_0 ‖ … ‖ B_{n−1}` for the sender.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `a_msg` is not 32 bytes, or not a valid non-identity
    /// point.
    pub fn respond<R: RngCore + CryptoRng + ?Sized>(
        peer: PartyId,
        a_msg: &[u8],
        choices: &[bool],
        rng: &mut R,
    ) -> Result<(Vec<Block>, Vec<u8>), PeerFault> {
        wire::exact_len(peer, SENDER_MSG, a_msg, POINT_BYTES)?;
        let big_a = decode_point(peer, SENDER_MSG, a_msg)?;
        let mut a_bytes = [0u8; 32];
        a_bytes.copy_from_slice(a_msg);
        let mut out = Vec::with_capacity(choices.len() * POINT_BYTES);
        let keys = choices
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let b = random_scalar(rng);
                let bg = &b * RISTRETTO_BASEPOINT_TABLE;
                // B = b·G + c·A, selected without a branch on c.
                let big_b = RistrettoPoint::conditional_select(
                    &bg,
                    &(bg + big_a),
                    Choice::from(u8::from(c)),
                );
                let enc = big_b.compress().to_bytes();
                out.extend_from_slice(&enc);
                kdf(i, &a_bytes, &enc, &(b * big_a))
            })
            .collect();
        Ok((keys, out))
    }
}
