//! The circular correlation-robust hash `H(x) = π(σ(x)) ⊕ σ(x)` of `doram_prim::aes` (π =
//! AES-128 under the public `FIXED_KEY`), computed over runs of [`RUN`] blocks with one cipher
//! call per run. It is the same function as `FixedKeyAes::ccr` (a test checks it), so keys and
//! outputs agree with the DPF crate's; the longer runs keep the AES pipeline full with less
//! per-call overhead than batches of eight, which matters because hashing is most of the
//! preprocessing's work.

use std::sync::LazyLock;

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};
use doram_prim::aes::{Block, FIXED_KEY, sigma};

/// Blocks per cipher call.
pub(crate) const RUN: usize = 64;

static PI: LazyLock<Aes128Enc> = LazyLock::new(|| Aes128Enc::new(&GenericArray::from(FIXED_KEY)));

/// `xs[i] ← H(xs[i])` for every block.
pub(crate) fn ccr_in_place(xs: &mut [Block]) {
    let pi: &Aes128Enc = &PI;
    let mut buf: [GenericArray<u8, U16>; RUN] = std::array::from_fn(|_| GenericArray::default());
    for chunk in xs.chunks_mut(RUN) {
        let m = chunk.len();
        for (b, x) in buf.iter_mut().zip(chunk.iter_mut()) {
            *x = sigma(*x);
            *b = GenericArray::from(x.to_le_bytes());
        }
        pi.encrypt_blocks(&mut buf[..m]);
        for (x, b) in chunk.iter_mut().zip(buf.iter()) {
            let mut y = [0u8; 16];
            y.copy_from_slice(b);
            *x ^= u128::from_le_bytes(y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_prim::aes::fixed_key;

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
