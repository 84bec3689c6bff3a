//! The length-doubling PRG of the DPF tree and the leaf conversion into F_p², both from
//! fixed-key AES (one cipher per use, so the three uses are domain-separated).
//!
//! A tree node is a 128-bit block whose least significant bit is the control bit t and whose
//! other 127 bits are the seed. For a node `x` with seed `s = x & !1`:
//! * left child (raw) `= AES_L(s) ⊕ s`, right child (raw) `= AES_R(s) ⊕ s`; each raw child is
//!   again "127-bit seed ‖ control bit" (the 2λ+2 output bits of the paper's `Prg`, λ = 127);
//! * `Convert(x) = AES_C(s) ⊕ s`, split into two 64-bit halves, each reduced mod p
//!   (statistical distance from uniform 59/2^64 per half).

use std::sync::LazyLock;

use doram_field::Fp64;
use doram_prim::aes::{Aes128Cipher, BATCH, Block};

/// Clears the control bit of a node, leaving its seed.
pub(crate) const SEED: Block = !1;

const KEY_LEFT: u128 = 0x2B7E_1516_28AE_D2A6_ABF7_1588_09CF_4F3C;
const KEY_RIGHT: u128 = 0x3243_F6A8_885A_308D_3131_98A2_E037_0734;
const KEY_CONVERT: u128 = 0xB7E1_5162_8AED_2A6A_BF71_5880_9CF4_F3C7;

pub(crate) struct Prg {
    left: Aes128Cipher,
    right: Aes128Cipher,
    convert: Aes128Cipher,
}

static PRG: LazyLock<Prg> = LazyLock::new(|| Prg {
    left: Aes128Cipher::new(KEY_LEFT.to_le_bytes()),
    right: Aes128Cipher::new(KEY_RIGHT.to_le_bytes()),
    convert: Aes128Cipher::new(KEY_CONVERT.to_le_bytes()),
});

pub(crate) fn prg() -> &'static Prg {
    &PRG
}

impl Prg {
    /// Raw children of 8 nodes.
    #[inline]
    pub fn expand8(&self, nodes: &[Block; BATCH]) -> ([Block; BATCH], [Block; BATCH]) {
        let seeds: [Block; BATCH] = std::array::from_fn(|i| nodes[i] & SEED);
        let mut l = seeds;
        let mut r = seeds;
        self.left.encrypt8(&mut l);
        self.right.encrypt8(&mut r);
        for i in 0..BATCH {
            l[i] ^= seeds[i];
            r[i] ^= seeds[i];
        }
        (l, r)
    }

    /// Raw children of one node.
    #[inline]
    pub fn expand(&self, node: Block) -> (Block, Block) {
        let s = node & SEED;
        (self.left.encrypt(s) ^ s, self.right.encrypt(s) ^ s)
    }

    /// `Convert` of 8 nodes: for each, the two 64-bit halves (not yet reduced).
    #[inline]
    pub fn convert8(&self, nodes: &[Block; BATCH]) -> [Block; BATCH] {
        let seeds: [Block; BATCH] = std::array::from_fn(|i| nodes[i] & SEED);
        let mut c = seeds;
        self.convert.encrypt8(&mut c);
        for i in 0..BATCH {
            c[i] ^= seeds[i];
        }
        c
    }

    /// `Convert` of one node (unreduced halves).
    #[inline]
    pub fn convert(&self, node: Block) -> Block {
        let s = node & SEED;
        self.convert.encrypt(s) ^ s
    }
}

/// The two field elements of a `Convert` output.
#[inline(always)]
pub(crate) fn halves(c: Block) -> [Fp64; 2] {
    [Fp64::from_u64(c as u64), Fp64::from_u64((c >> 64) as u64)]
}
