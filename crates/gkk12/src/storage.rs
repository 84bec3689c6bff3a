//! What each party keeps between accesses: the server's encrypted trees and the client's pad
//! key (GKK12 §4.2, "Enc(m; r) = (F_K(r) ⊕ m, r)").
//!
//! A bucket is stored as the XOR of its slots' bits ([`SlotCodec`](crate::circuits::SlotCodec),
//! slot after slot) and a pad: `c = m ⊕ F_K(tree, nonce)`, where F_K is AES-128 under the
//! client's key K in counter mode and `nonce` is a number the server gives each bucket every
//! time it is written, never twice (it counts up; the client refuses a nonce that does not).
//! So randomness is bound to a bucket's write, not to its content, as the paper requires of
//! evictions (§4.2: a dummy and a real write must be indistinguishable, spec P1). The server
//! never sees a pad, the client never a ciphertext (spec P13).

use doram_prim::aes::{Aes128Cipher, Block};

/// The server's copy of one tree: every bucket's ciphertext bits and nonce.
#[derive(Clone, Debug)]
pub struct EncTree {
    bucket_bits: usize,
    bucket_bytes: usize,
    cipher: Vec<u8>,
    nonce: Vec<u64>,
}

impl EncTree {
    /// A tree of `buckets` buckets of `bucket_bits` bits, all zero under nonce 0 (filled by
    /// the load).
    pub fn new(buckets: usize, bucket_bits: usize) -> EncTree {
        let bucket_bytes = bucket_bits.div_ceil(8);
        EncTree {
            bucket_bits,
            bucket_bytes,
            cipher: vec![0; buckets * bucket_bytes],
            nonce: vec![0; buckets],
        }
    }

    /// Bits per bucket.
    pub fn bucket_bits(&self) -> usize {
        self.bucket_bits
    }

    /// Bucket `b`'s nonce.
    pub fn nonce(&self, b: usize) -> u64 {
        self.nonce[b]
    }

    /// Bucket `b`'s ciphertext bit `k`.
    pub fn bit(&self, b: usize, k: usize) -> bool {
        (self.cipher[b * self.bucket_bytes + k / 8] >> (k % 8)) & 1 == 1
    }

    /// Bucket `b`'s ciphertext bits, packed little-endian.
    pub fn bucket(&self, b: usize) -> &[u8] {
        &self.cipher[b * self.bucket_bytes..(b + 1) * self.bucket_bytes]
    }

    /// Replaces bucket `b` by `bits` (packed) written under `nonce`.
    pub fn store(&mut self, b: usize, nonce: u64, bits: &[u8]) {
        self.cipher[b * self.bucket_bytes..(b + 1) * self.bucket_bytes].copy_from_slice(bits);
        self.nonce[b] = nonce;
    }
}

/// The client's pad function F_K.
pub struct PadKey {
    cipher: Aes128Cipher,
}

impl std::fmt::Debug for PadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PadKey(..)")
    }
}

impl PadKey {
    /// The pad function under key `key` (from OS entropy in any real use).
    pub fn new(key: [u8; 16]) -> PadKey {
        PadKey {
            cipher: Aes128Cipher::new(key),
        }
    }

    /// Appends the `bits`-bit pad of tree `tree`'s bucket written under `nonce`, packed
    /// little-endian, to `out`: AES_K(nonce ‖ tree ‖ counter) for counter = 0, 1, ….
    pub fn pad_bytes(&self, tree: usize, nonce: u64, bits: usize, out: &mut Vec<u8>) {
        let bytes = bits.div_ceil(8);
        let blocks = bytes.div_ceil(16);
        let mut xs: Vec<Block> = (0..blocks as u128)
            .map(|c| (u128::from(nonce) << 64) | ((tree as u128) << 32) | c)
            .collect();
        self.cipher.encrypt_in_place(&mut xs);
        let start = out.len();
        for x in xs {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.truncate(start + bytes);
        if !bits.is_multiple_of(8)
            && let Some(last) = out.last_mut()
        {
            *last &= (1u8 << (bits % 8)) - 1;
        }
    }
}

/// Bit `k` of little-endian packed `bytes`.
pub fn bit(bytes: &[u8], k: usize) -> bool {
    (bytes[k / 8] >> (k % 8)) & 1 == 1
}

/// Packs bits little-endian.
pub fn pack(bits: impl IntoIterator<Item = bool>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, b) in bits.into_iter().enumerate() {
        if k % 8 == 0 {
            out.push(0);
        }
        if b && let Some(last) = out.last_mut() {
            *last |= 1 << (k % 8);
        }
    }
    out
}
