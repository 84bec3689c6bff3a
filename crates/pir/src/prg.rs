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
use doram_prim::aes::{Aes128Cipher, AesKernel, BATCH, Block, WithAes};

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
    /// Runs `work` with the left and right ciphers in hand (one CPU check and one entry into
    /// the cipher code for the whole loop; see [`WithAes`]).
    #[inline]
    pub fn with_expand<W: WithExpand>(&self, work: W) -> W::Output {
        self.left.with_aes(TakeLeft {
            right: &self.right,
            work,
        })
    }

    /// Runs `work` with the `Convert` cipher in hand (use [`convert8`] and [`convert`] on it).
    #[inline]
    pub fn with_convert<W: WithAes>(&self, work: W) -> W::Output {
        self.convert.with_aes(work)
    }
}

/// A loop that runs with the left and right ciphers in hand ([`Prg::with_expand`]).
pub(crate) trait WithExpand {
    /// What the loop returns.
    type Output;

    /// The loop; mark it `#[inline(always)]` (see [`WithAes::run`]).
    fn run<L: AesKernel, R: AesKernel>(self, prg: &mut Expander<'_, L, R>) -> Self::Output;
}

/// The left and right ciphers in hand.
pub(crate) struct Expander<'a, L, R> {
    left: &'a mut L,
    right: &'a mut R,
}

impl<L: AesKernel, R: AesKernel> Expander<'_, L, R> {
    /// Raw children of 8 nodes.
    #[inline(always)]
    pub fn expand8(&mut self, nodes: &[Block; BATCH]) -> ([Block; BATCH], [Block; BATCH]) {
        (
            self.left.cr8_masked(nodes, SEED),
            self.right.cr8_masked(nodes, SEED),
        )
    }

    /// Raw children of one node.
    #[inline(always)]
    pub fn expand(&mut self, node: Block) -> (Block, Block) {
        let s = node & SEED;
        (self.left.encrypt(s) ^ s, self.right.encrypt(s) ^ s)
    }
}

/// The outer of [`Prg::with_expand`]'s two nested cipher calls: the left cipher in hand.
struct TakeLeft<'a, W> {
    right: &'a Aes128Cipher,
    work: W,
}

impl<W: WithExpand> WithAes for TakeLeft<'_, W> {
    type Output = W::Output;

    #[inline(always)]
    fn run<K: AesKernel>(self, left: &mut K) -> W::Output {
        self.right.with_aes(TakeRight {
            left,
            work: self.work,
        })
    }
}

/// The inner call: the right cipher in hand too, then the loop.
struct TakeRight<'a, L, W> {
    left: &'a mut L,
    work: W,
}

impl<L: AesKernel, W: WithExpand> WithAes for TakeRight<'_, L, W> {
    type Output = W::Output;

    #[inline(always)]
    fn run<K: AesKernel>(self, right: &mut K) -> W::Output {
        self.work.run(&mut Expander {
            left: self.left,
            right,
        })
    }
}

/// `Convert` of 8 nodes with the `Convert` cipher in hand: for each, the two 64-bit halves
/// (not yet reduced).
#[inline(always)]
pub(crate) fn convert8<K: AesKernel>(c: &mut K, nodes: &[Block; BATCH]) -> [Block; BATCH] {
    c.cr8_masked(nodes, SEED)
}

/// `Convert` of one node with the `Convert` cipher in hand (unreduced halves).
#[inline(always)]
pub(crate) fn convert<K: AesKernel>(c: &mut K, node: Block) -> Block {
    let s = node & SEED;
    c.encrypt(s) ^ s
}

/// The two field elements of a `Convert` output.
#[inline(always)]
pub(crate) fn halves(c: Block) -> [Fp64; 2] {
    [Fp64::from_u64(c as u64), Fp64::from_u64((c >> 64) as u64)]
}
