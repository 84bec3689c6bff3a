//! Two-party multiplication triples from OT extension: XOR-shared AND triples and additively
//! shared F_p triples, the preprocessing a two-party arithmetic or Boolean engine multiplies
//! with (Beaver, CRYPTO 1991).
//!
//! Both parties run OT extension in both directions (each is the sender of one instance and
//! the receiver of the other), since a triple's cross terms a₀·b₁ and a₁·b₀ need one of each.
//!
//! * **AND triples**, two random OTs per triple: from a random OT (s₀, s₁) → (x, s_x), the
//!   sender's bit v = lsb(s₀) ⊕ lsb(s₁) and the receiver's choice x give
//!   x·v = lsb(s₀) ⊕ lsb(s_x), an XOR sharing of the product of a bit of each party. With
//!   a₀ = v and b₁ = x in one direction and a₁, b₀ likewise in the other,
//!   c = a₀b₀ ⊕ a₁b₁ ⊕ a₀b₁ ⊕ a₁b₀ is shared without any further message.
//! * **F_p triples**, Gilboa's product (CRYPTO 1999) on random OTs: for the sender's x and the
//!   receiver's b with bits b_j (its random choices), the sender sends
//!   u_j = F(s_{j,0}) − F(s_{j,1}) + x·2^j and keeps −Σ F(s_{j,0}); the receiver takes
//!   Σ (F(s_{j,b_j}) + b_j·u_j). F maps a hashed 128-bit OT message into F_p by one
//!   reduction (statistical distance 2^128 mod p / 2^128 < 2^−58 from uniform), and b is
//!   Σ b_j 2^j mod p for 128 random bits (the same distance). 128 OTs and 128 elements per
//!   cross term, so 256 OTs and 4 KiB each way per triple.
//! * **Z_2^64 triples**, the same product over the ring of 64-bit words ([`GilboaRing`]): F
//!   takes the low 64 bits of the hashed message (exactly uniform), b is Σ b_j 2^j for 64
//!   random bits; 64 OTs and 64 words per cross term, so 128 OTs and 512 bytes each way per
//!   triple.
//!
//! Semi-honest, as the OT extension it runs on. Every message's length is fixed by the count.

use doram_core::PartyId;
use doram_core::wire;
use doram_field::{Fp, Group, Ring, Z64, decode_vec};
use doram_net::Session;
use doram_prim::aes::Block;
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::driver::{peer, rot_receive, rot_send};
use crate::iknp::{RotReceiver, RotSender};
use crate::ot_ext::{CotExtReceiver, CotExtSender};

/// Bits of an F_p element's representative: the OTs per cross term of an F_p triple.
pub const FP_BITS: usize = 128;

/// This party's shares of XOR-shared AND triples: a = a₀ ⊕ a₁, b = b₀ ⊕ b₁, c = a·b.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BitTriples {
    /// Shares of a.
    pub a: Vec<bool>,
    /// Shares of b.
    pub b: Vec<bool>,
    /// Shares of c.
    pub c: Vec<bool>,
}

/// This party's shares of additively shared F_p triples: c = a·b.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct FpTriples {
    /// Shares of a.
    pub a: Vec<Fp>,
    /// Shares of b.
    pub b: Vec<Fp>,
    /// Shares of c.
    pub c: Vec<Fp>,
}

impl core::fmt::Debug for BitTriples {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "BitTriples({} triples, shares redacted)", self.a.len())
    }
}

impl core::fmt::Debug for FpTriples {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FpTriples({} triples, shares redacted)", self.a.len())
    }
}

fn lsb(b: Block) -> bool {
    b & 1 == 1
}

/// \[AND triples\] The sender's side of one direction: its bits v and its shares of x·v.
fn bit_cross_sender(rot: &RotSender) -> (Vec<bool>, Vec<bool>) {
    rot.msgs
        .iter()
        .map(|&[s0, s1]| (lsb(s0) ^ lsb(s1), lsb(s0)))
        .unzip()
}

/// \[AND triples\] The receiver's side of one direction: its bits x and its shares of x·v.
fn bit_cross_receiver(rot: &RotReceiver) -> (Vec<bool>, Vec<bool>) {
    (
        rot.choices.clone(),
        rot.msgs.iter().map(|&m| lsb(m)).collect(),
    )
}

/// \[AND triples\] Assembles this party's triples from its own direction as sender (a-bits)
/// and as receiver (b-bits).
fn bit_triples_from(sent: &RotSender, received: &RotReceiver) -> BitTriples {
    let (a, share_ab) = bit_cross_sender(sent);
    let (b, share_ba) = bit_cross_receiver(received);
    let c = (0..a.len())
        .map(|i| (a[i] & b[i]) ^ share_ab[i] ^ share_ba[i])
        .collect();
    BitTriples { a, b, c }
}

/// A ring Gilboa's product runs over: F, a hashed OT message as an element, and the number of
/// bits of the receiver's random factor (one OT each).
pub trait GilboaRing: Ring {
    /// Bits of the receiver's factor: OTs per cross term.
    const BITS: usize;
    /// F: a hashed OT message as an element.
    fn from_block(b: Block) -> Self;
    /// A uniformly random element (a triple's `a`).
    fn random_elem<R: RngCore + ?Sized>(rng: &mut R) -> Self;
}

impl GilboaRing for Fp {
    const BITS: usize = FP_BITS;
    fn from_block(b: Block) -> Fp {
        Fp::from_u128(b)
    }
    fn random_elem<R: RngCore + ?Sized>(rng: &mut R) -> Fp {
        Fp::random(rng)
    }
}

impl GilboaRing for Z64 {
    const BITS: usize = 64;
    fn from_block(b: Block) -> Z64 {
        Z64(b as u64)
    }
    fn random_elem<R: RngCore + ?Sized>(rng: &mut R) -> Z64 {
        Z64(rng.next_u64())
    }
}

/// \[Gilboa\] The sender's corrections u_j and its share, for its inputs `xs` (one per
/// product, [`GilboaRing::BITS`] OTs each).
fn gilboa_sender<W: GilboaRing>(rot: &RotSender, xs: &[W]) -> (Vec<W>, Vec<W>) {
    let mut corrections = Vec::with_capacity(xs.len() * W::BITS);
    let mut shares = Vec::with_capacity(xs.len());
    for (x, msgs) in xs.iter().zip(rot.msgs.chunks_exact(W::BITS)) {
        let mut share = W::ZERO;
        let mut pow = *x;
        for &[s0, s1] in msgs {
            let (f0, f1) = (W::from_block(s0), W::from_block(s1));
            corrections.push(f0 - f1 + pow);
            share -= f0;
            pow = pow + pow;
        }
        shares.push(share);
    }
    (corrections, shares)
}

/// \[Gilboa\] The receiver's value b (from its choices) and its share, per product.
fn gilboa_receiver<W: GilboaRing>(rot: &RotReceiver, corrections: &[W]) -> (Vec<W>, Vec<W>) {
    let mut bs = Vec::new();
    let mut shares = Vec::new();
    for ((choices, msgs), us) in rot
        .choices
        .chunks_exact(W::BITS)
        .zip(rot.msgs.chunks_exact(W::BITS))
        .zip(corrections.chunks_exact(W::BITS))
    {
        let mut b = W::ZERO;
        let mut pow = W::ONE;
        let mut share = W::ZERO;
        for ((&c, &m), &u) in choices.iter().zip(msgs).zip(us) {
            share += W::from_block(m);
            if c {
                share += u;
                b += pow;
            }
            pow = pow + pow;
        }
        bs.push(b);
        shares.push(share);
    }
    (bs, shares)
}

/// Bytes per message of [`send_ring`] (64 KiB: 4096 F_p elements).
const RING_BYTES_PER_MSG: usize = 1 << 16;

/// Sends group elements as raw little-endian bytes in messages of at most 64 KiB.
pub(crate) fn send_ring<W: Group>(
    session: &mut Session,
    to: PartyId,
    v: &[W],
) -> Result<(), TwopcError> {
    for chunk in v.chunks(RING_BYTES_PER_MSG / W::BYTES) {
        session.send_elems(to, chunk)?;
    }
    Ok(())
}

/// Receives `n` elements sent by [`send_ring`]; a message of the wrong length or with a
/// non-canonical element is a fault of `from`.
pub(crate) fn recv_ring<W: Group>(
    session: &mut Session,
    from: PartyId,
    n: usize,
    what: &'static str,
) -> Result<Vec<W>, TwopcError> {
    let per = RING_BYTES_PER_MSG / W::BYTES;
    let mut out = Vec::with_capacity(n);
    for start in (0..n).step_by(per) {
        let len = (n - start).min(per);
        let bytes = session.recv_bytes(from)?;
        let part = decode_vec::<W>(&bytes, len).map_err(|fault| wire::PeerFault {
            peer: from,
            what,
            fault,
        })?;
        out.extend(part);
    }
    Ok(out)
}

/// This party's shares of additively shared triples over a ring: c = a·b.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RingTriples<W> {
    /// Shares of a.
    pub a: Vec<W>,
    /// Shares of b.
    pub b: Vec<W>,
    /// Shares of c.
    pub c: Vec<W>,
}

impl<W> core::fmt::Debug for RingTriples<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "RingTriples({} triples, shares redacted)", self.a.len())
    }
}

/// `count` additively shared Z_2^64 triples (Gilboa in both directions: 2·64·count random OTs
/// and 64·count words each way).
///
/// # Errors
/// As [`bit_triples`]; a correction message of the wrong length is a fault of the peer.
pub fn z64_triples<S, R, G>(
    session: &mut Session,
    sender: &mut S,
    receiver: &mut R,
    count: usize,
    rng: &mut G,
) -> Result<RingTriples<Z64>, TwopcError>
where
    S: CotExtSender,
    R: CotExtReceiver,
    G: RngCore + CryptoRng + ?Sized,
{
    ring_triples(session, sender, receiver, count, rng)
}

/// `count` additively shared triples over `W` (Gilboa in both directions:
/// `2·W::BITS·count` random OTs and `W::BITS·count` elements each way).
pub(crate) fn ring_triples<W, S, R, G>(
    session: &mut Session,
    sender: &mut S,
    receiver: &mut R,
    count: usize,
    rng: &mut G,
) -> Result<RingTriples<W>, TwopcError>
where
    W: GilboaRing,
    S: CotExtSender,
    R: CotExtReceiver,
    G: RngCore + CryptoRng + ?Sized,
{
    let other = peer(session)?;
    if count == 0 {
        return Ok(RingTriples {
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
        });
    }
    let (sent, received) = both_directions(session, sender, receiver, count * W::BITS, rng)?;
    let a: Vec<W> = (0..count).map(|_| W::random_elem(rng)).collect();
    // This party's a against the peer's b, and the peer's a against this party's b.
    let (corrections, share_ab) = gilboa_sender(&sent, &a);
    send_ring(session, other, &corrections)?;
    let theirs: Vec<W> = recv_ring(session, other, corrections.len(), "Gilboa corrections")?;
    let (b, share_ba) = gilboa_receiver(&received, &theirs);
    let c = (0..count)
        .map(|i| a[i] * b[i] + share_ab[i] + share_ba[i])
        .collect();
    Ok(RingTriples { a, b, c })
}

/// Runs the two OT directions: `P0` is the sender first, `P1` the receiver first.
fn both_directions<S, R, G>(
    session: &mut Session,
    sender: &mut S,
    receiver: &mut R,
    m: usize,
    rng: &mut G,
) -> Result<(RotSender, RotReceiver), TwopcError>
where
    S: CotExtSender,
    R: CotExtReceiver,
    G: RngCore + CryptoRng + ?Sized,
{
    if session.me() == PartyId::P0 {
        let sent = rot_send(session, sender, m)?;
        let received = rot_receive(session, receiver, m, rng)?;
        Ok((sent, received))
    } else {
        let received = rot_receive(session, receiver, m, rng)?;
        let sent = rot_send(session, sender, m)?;
        Ok((sent, received))
    }
}

/// `count` XOR-shared AND triples (2·count random OTs, one direction each).
///
/// # Errors
/// [`TwopcError::WrongPartyCount`] unless the session has two parties; transport failures and
/// the peer's malformed extension messages.
pub fn bit_triples<S, R, G>(
    session: &mut Session,
    sender: &mut S,
    receiver: &mut R,
    count: usize,
    rng: &mut G,
) -> Result<BitTriples, TwopcError>
where
    S: CotExtSender,
    R: CotExtReceiver,
    G: RngCore + CryptoRng + ?Sized,
{
    peer(session)?;
    if count == 0 {
        return Ok(BitTriples::default());
    }
    let (sent, received) = both_directions(session, sender, receiver, count, rng)?;
    Ok(bit_triples_from(&sent, &received))
}

/// `count` additively shared F_p triples (Gilboa in both directions: 2·128·count random OTs
/// and 128·count elements each way).
///
/// # Errors
/// As [`bit_triples`]; a correction message of the wrong length or with a non-canonical
/// element is a fault of the peer.
pub fn fp_triples<S, R, G>(
    session: &mut Session,
    sender: &mut S,
    receiver: &mut R,
    count: usize,
    rng: &mut G,
) -> Result<FpTriples, TwopcError>
where
    S: CotExtSender,
    R: CotExtReceiver,
    G: RngCore + CryptoRng + ?Sized,
{
    let t = ring_triples(session, sender, receiver, count, rng)?;
    Ok(FpTriples {
        a: t.a,
        b: t.b,
        c: t.c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The I/O-free parts on OTs made up in memory.
    #[test]
    fn cross_terms_share_the_products() {
        let mut rng = crate::insecure_rng_for_tests(5);
        let n = 3;
        let pairs: Vec<[Block; 2]> = (0..n * FP_BITS)
            .map(|_| {
                [
                    rng.next_u64() as u128 | (u128::from(rng.next_u64()) << 64),
                    rng.next_u64() as u128,
                ]
            })
            .collect();
        let choices: Vec<bool> = (0..n * FP_BITS).map(|_| rng.next_u32() & 1 == 1).collect();
        let sent = RotSender {
            msgs: pairs.clone(),
        };
        let received = RotReceiver {
            msgs: pairs
                .iter()
                .zip(&choices)
                .map(|(p, &c)| p[usize::from(c)])
                .collect(),
            choices,
        };
        let xs: Vec<Fp> = (0..n).map(|_| Fp::random(&mut rng)).collect();
        let (u, sa) = gilboa_sender(&sent, &xs);
        let (bs, sb) = gilboa_receiver(&received, &u);
        for i in 0..n {
            assert_eq!(sa[i] + sb[i], xs[i] * bs[i]);
        }
        let (v, share_s) = bit_cross_sender(&sent);
        let (x, share_r) = bit_cross_receiver(&received);
        for i in 0..v.len() {
            assert_eq!(share_s[i] ^ share_r[i], v[i] & x[i]);
        }
    }
}
