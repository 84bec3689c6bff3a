//! The circular correlation-robust hash `H(x) = π(σ(x)) ⊕ σ(x)` of `doram_prim::aes` (π =
//! AES-128 under the public `FIXED_KEY`), applied to runs of [`RUN`] blocks. It is
//! `FixedKeyAes::ccr` in the prim crate's batches of eight blocks, which keep the blocks in
//! registers around the cipher call; `examples/duoram_prof.rs` compares it with longer cipher calls
//! (slower here: the conversions to the cipher's byte arrays cost more than the calls save) and
//! with the bare cipher.

use doram_prim::aes::{Block, fixed_key};

/// Blocks per run in the output stage.
pub(crate) const RUN: usize = 64;

/// `xs[i] ← H(xs[i])` for every block.
pub(crate) fn ccr_in_place(xs: &mut [Block]) {
    fixed_key().ccr_in_place(xs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_function_as_the_prim_crate() {
        let fk = fixed_key();
        for len in [0usize, 1, 7, 8, 63, 64, 65, 200] {
            let xs: Vec<Block> = (0..len as u128)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ (i << 100))
                .collect();
            let mut ys = xs.clone();
            ccr_in_place(&mut ys);
            for (x, y) in xs.iter().zip(&ys) {
                assert_eq!(fk.ccr(*x), *y);
            }
        }
    }
}
