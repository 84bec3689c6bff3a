//! Output conversion: from a tree node's 128-bit seed to a pseudorandom element of `G`.
//!
//! `Convert(s, j)` is [`Group::random_from`] on the block stream
//! `CCR(s ⊕ T(j, 0)), CCR(s ⊕ T(j, 1)), …` where CCR is the circular correlation-robust hash
//! `π(σ(x)) ⊕ σ(x)` on fixed-key AES and `T(j, k) = (2^32·k + j + 1)·2^64` a tweak that is never
//! zero. `j` numbers the outputs taken from one node (Half-Tree's output stage takes up to four),
//! `k` the blocks of one output (one for a 128-bit group unless rejection sampling asks for more).
//! The tweaks keep these hash inputs apart from the plain `CCR(s)` used to expand internal nodes.
//! Correlation robustness matters because in Half-Tree the two parties' seeds at on-path nodes
//! differ by the secret global offset Δ.

use doram_field::{BlockSource, Group};
use doram_prim::aes::{Block, FixedKeyAes};

/// The tweak of output `j`, block `k`.
#[inline(always)]
pub(crate) const fn tweak(j: usize, k: u64) -> Block {
    (((k as u128) << 32) | (j as u128 + 1)) << 64
}

/// The block stream of `Convert(node, j)`, possibly with its first block precomputed.
pub(crate) struct LeafSource<'a> {
    fk: &'a FixedKeyAes,
    node: Block,
    j: usize,
    first: Option<Block>,
    k: u64,
}

impl<'a> LeafSource<'a> {
    /// The stream from its start.
    #[inline(always)]
    pub(crate) fn new(fk: &'a FixedKeyAes, node: Block, j: usize) -> Self {
        LeafSource {
            fk,
            node,
            j,
            first: None,
            k: 0,
        }
    }

    /// The stream whose first block, `CCR(node ⊕ T(j, 0))`, the caller already computed.
    #[inline(always)]
    pub(crate) fn with_first(fk: &'a FixedKeyAes, node: Block, j: usize, first: Block) -> Self {
        LeafSource {
            fk,
            node,
            j,
            first: Some(first),
            k: 1,
        }
    }
}

impl BlockSource for LeafSource<'_> {
    #[inline(always)]
    fn next_block(&mut self) -> [u8; 16] {
        if let Some(b) = self.first.take() {
            return b.to_le_bytes();
        }
        let b = ccr_out_of_line(self.fk, self.node ^ tweak(self.j, self.k));
        self.k += 1;
        b.to_le_bytes()
    }
}

/// `fk.ccr(x)` for a block that is not precomputed: for the output stages, which precompute the
/// first block in their batched hash loops, only after a rejection, so kept out of line (and
/// taking values, so that the stream stays in registers).
#[cold]
#[inline(never)]
fn ccr_out_of_line(fk: &FixedKeyAes, x: Block) -> Block {
    fk.ccr(x)
}

/// `Convert(node, j)`.
#[inline]
pub(crate) fn convert<G: Group>(fk: &FixedKeyAes, node: Block, j: usize) -> G {
    G::random_from(&mut LeafSource::new(fk, node, j))
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::{Fp, Vector};
    use doram_prim::aes::fixed_key;

    #[test]
    fn convert_is_ccr_stream() {
        let fk = fixed_key();
        let node = 0x1234_5678_9abc_def0_0fed_cba9_8765_4321u128;
        let y: Fp = convert(fk, node, 2);
        assert_eq!(y.to_u128(), fk.ccr(node ^ tweak(2, 0)));
        let v: Vector<Fp, 2> = convert(fk, node, 0);
        assert_eq!(v.0[0].to_u128(), fk.ccr(node ^ tweak(0, 0)));
        assert_eq!(v.0[1].to_u128(), fk.ccr(node ^ tweak(0, 1)));
        let first = fk.ccr(node ^ tweak(1, 0));
        let w: Vector<Fp, 2> = G2::random_from(&mut LeafSource::with_first(fk, node, 1, first));
        assert_eq!(w, convert(fk, node, 1));
        assert!(tweak(0, 0) != 0 && tweak(3, 0) != tweak(0, 1));
    }

    type G2 = Vector<Fp, 2>;
}
