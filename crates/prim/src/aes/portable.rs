//! AES-128 through the `aes` crate (which selects AES-NI at run time when the CPU has it): the
//! backend of builds without the `aes` target feature. Same interface as the `ni` module.

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};

use super::{BATCH, Block, sigma};

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
}
