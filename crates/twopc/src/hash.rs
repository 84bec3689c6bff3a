//! The hash functions of the engine, all from the fixed-key permutation π of
//! [`doram_prim::aes`]:
//!
//! * [`ot_hash`]: the tweakable circular correlation-robust hash `π(π(x) ⊕ i) ⊕ π(x)` of
//!   GKWY20 §7.4 ([`FixedKeyAes::tccr`]), tweaked by the OT index. It breaks the correlation
//!   `q_i ⊕ t_i ∈ {0, Δ}` of IKNP (IKNP03 §3, "H(j, q_j)"; GKWY20 §7.4 on why TCCR suffices).
//! * [`gc_hash`]: `H(x, i) = π(σ(x) ⊕ i) ⊕ σ(x)` with the linear orthomorphism
//!   `σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi` ([`doram_prim::aes::sigma`]), the tweakable circular
//!   correlation-robust hash GKWY20 §7.3 builds for half-gates garbling (one call of π per hash,
//!   where the §7.4 construction needs two).
//!
//! GKWY20 = Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from Fixed-Key
//! Block Ciphers", IEEE S&P 2020. IKNP03 = Ishai, Kilian, Nissim, Petrank, CRYPTO 2003.

use doram_prim::FixedKeyAes;
use doram_prim::aes::{BATCH, Block, batches, sigma};

pub use doram_prim::aes::sigma as orthomorphism;

/// The OT hash `TCCR(i, x) = π(π(x) ⊕ i) ⊕ π(x)` (GKWY20 §7.4).
#[inline]
pub fn ot_hash(aes: &FixedKeyAes, index: u64, x: Block) -> Block {
    aes.tccr(Block::from(index), x)
}

/// [`ot_hash`] of `xs[k]` with tweak `first + k`, in place, [`BATCH`] blocks at a time.
pub fn ot_hash_in_place(aes: &FixedKeyAes, first: u64, xs: &mut [Block]) {
    let mut tweaks = [0 as Block; BATCH];
    let mut i = first;
    let mut chunks = xs.chunks_exact_mut(BATCH);
    for c in &mut chunks {
        for t in tweaks.iter_mut() {
            *t = Block::from(i);
            i += 1;
        }
        aes.tccr_in_place(&tweaks, c);
    }
    for x in chunks.into_remainder() {
        *x = ot_hash(aes, i, *x);
        i += 1;
    }
}

/// The random-OT sender's messages `(ot_hash(first + i, q_i), ot_hash(first + i, q_i ⊕ Δ))`
/// in one pass over `q`, [`BATCH`] OTs at a time (the same values as two calls of
/// [`ot_hash_in_place`], without the intermediate vectors).
pub fn ot_hash_pairs(aes: &FixedKeyAes, first: u64, delta: Block, q: &[Block]) -> Vec<[Block; 2]> {
    let mut out = Vec::with_capacity(q.len());
    ot_hash_pairs_into(aes, first, delta, q, &mut out);
    out
}

/// [`ot_hash_pairs`], appending to `out`.
pub fn ot_hash_pairs_into(
    aes: &FixedKeyAes,
    first: u64,
    delta: Block,
    q: &[Block],
    out: &mut Vec<[Block; 2]>,
) {
    out.reserve(q.len());
    let mut i = first;
    let (chunks, rest) = batches(q);
    for c in chunks {
        let mut a = *c;
        let mut b = c.map(|x| x ^ delta);
        aes.pi8(&mut a);
        aes.pi8(&mut b);
        let (pa, pb) = (a, b);
        for ((x, y), t) in a.iter_mut().zip(b.iter_mut()).zip(i..) {
            let t = Block::from(t);
            *x ^= t;
            *y ^= t;
        }
        aes.pi8(&mut a);
        aes.pi8(&mut b);
        for k in 0..BATCH {
            out.push([a[k] ^ pa[k], b[k] ^ pb[k]]);
        }
        i += BATCH as u64;
    }
    for &x in rest {
        out.push([ot_hash(aes, i, x), ot_hash(aes, i, x ^ delta)]);
        i += 1;
    }
}

/// The garbling hash `H(x, i) = π(σ(x) ⊕ i) ⊕ σ(x)` (GKWY20 §7.3, used by half-gates).
#[inline]
pub fn gc_hash(aes: &FixedKeyAes, tweak: Block, x: Block) -> Block {
    let [h] = aes.ccr_tweaked_n([x], [tweak]);
    h
}

/// [`gc_hash`] on [`BATCH`] blocks with their tweaks, in place.
#[inline]
pub fn gc_hash8(aes: &FixedKeyAes, tweaks: &[Block; BATCH], xs: &mut [Block; BATCH]) {
    let mut s = [0 as Block; BATCH];
    for ((x, si), t) in xs.iter_mut().zip(s.iter_mut()).zip(tweaks) {
        *si = sigma(*x);
        *x = *si ^ t;
    }
    aes.pi8(xs);
    for (x, si) in xs.iter_mut().zip(s) {
        *x ^= si;
    }
}
