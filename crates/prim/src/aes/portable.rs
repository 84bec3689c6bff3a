//! AES-128 through the `aes` crate (which selects AES-NI at run time when the CPU has it): the
//! backend of builds without the `aes` target feature. Same interface as the `ni` module.

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};

use doram_field::Z64;

use super::{BATCH, Block, NODE_SLOTS, hi, lo, sigma};

/// AES-128 under one key.
#[derive(Clone)]
pub(super) struct RoundKeys(Aes128Enc);

#[inline(always)]
fn to_ga(x: Block) -> GenericArray<u8, U16> {
    GenericArray::from(x.to_le_bytes())
}

#[inline(always)]
fn from_ga(b: &GenericArray<u8, U16>) -> Block {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(b.as_slice());
    u128::from_le_bytes(bytes)
}

impl RoundKeys {
    /// The key schedule of `key` (16 bytes as in FIPS-197).
    pub(super) fn new(key: [u8; 16]) -> RoundKeys {
        RoundKeys(Aes128Enc::new(&GenericArray::from(key)))
    }

    /// Encrypts one block.
    #[inline(always)]
    pub(super) fn encrypt(&self, x: Block) -> Block {
        let mut b = to_ga(x);
        self.0.encrypt_block(&mut b);
        from_ga(&b)
    }

    /// Encrypts [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn encrypt8(&self, xs: &mut [Block; BATCH]) {
        let mut b: [GenericArray<u8, U16>; BATCH] = std::array::from_fn(|i| to_ga(xs[i]));
        self.0.encrypt_blocks(&mut b);
        for (x, y) in xs.iter_mut().zip(b.iter()) {
            *x = from_ga(y);
        }
    }

    /// `π(x) ⊕ x` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn cr8(&self, xs: &mut [Block; BATCH]) {
        let orig = *xs;
        self.encrypt8(xs);
        for (y, x) in xs.iter_mut().zip(orig) {
            *y ^= x;
        }
    }

    /// `π(σ(x)) ⊕ σ(x)` on [`BATCH`] blocks in place.
    #[inline(always)]
    pub(super) fn ccr8(&self, xs: &mut [Block; BATCH]) {
        for x in xs.iter_mut() {
            *x = sigma(*x);
        }
        self.cr8(xs);
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
        let pairs = a
            .chunks_exact_mut(NODE_SLOTS)
            .zip(v.chunks_exact_mut(NODE_SLOTS));
        for (&q, (ac, vc)) in nodes.iter().zip(pairs) {
            for half in 0..2 {
                let mut b: [Block; BATCH] = std::array::from_fn(|i| q ^ tweaks[half * BATCH + i]);
                self.ccr8(&mut b);
                for (i, &x) in b.iter().enumerate() {
                    let j = half * BATCH + i;
                    ac[j] = Z64(lo(x));
                    vc[j] = Z64(hi(x));
                    sum_a[j] += ac[j];
                    sum_v[j] += vc[j];
                }
            }
        }
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
        let mut weighted = Z64(0);
        for (r, (&q, ac)) in nodes.iter().zip(a.chunks_exact_mut(NODE_SLOTS)).enumerate() {
            let mut b: [Block; BATCH] = tweaks.map(|t| q ^ t);
            self.ccr8(&mut b);
            let mut total = Z64(0);
            for (m, &x) in b.iter().enumerate() {
                for (j, w) in [(2 * m, lo(x)), (2 * m + 1, hi(x))] {
                    ac[j] = Z64(w);
                    sum_a[j] += Z64(w);
                    total += Z64(w);
                }
            }
            weighted += Z64(first_node.wrapping_add(r as u64)) * total;
        }
        weighted
    }
}
