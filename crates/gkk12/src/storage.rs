//! What each party keeps between accesses: the server's encrypted trees and the client's pad
//! key (GKK12 §4.2, "Enc(m; r) = (F_K(r) ⊕ m, r)").
//!
//! A bucket is stored as the XOR of its slots' bits ([`SlotCodec`](crate::circuits::SlotCodec),
//! slot after slot) and a pad: `c = m ⊕ F_K(tree, nonce)`, where F_K is AES-128 under the
//! client's key K in counter mode and `nonce` is a number the server gives each bucket every
//! time it is written, never twice (it counts up from 1; the client refuses a nonce that does
//! not). Nonce 0 marks a bucket never written: zero pad, zero ciphertext, the empty bucket.
//! So randomness is bound to a bucket's write, not to its content, as the paper requires of
//! evictions (§4.2: a dummy and a real write must be indistinguishable, spec P1). The server
//! never sees a pad, the client never a ciphertext (spec P13).

use doram_prim::aes::{Aes128Cipher, Block};

use crate::persist::{StateError, StateReader, StateWriter};

/// Largest allocation of a tree's ciphertexts, in bytes: a tree is stored in chunks of whole
/// buckets, each allocated (zeroed) when a bucket in it is first written.
pub const CHUNK_BYTES: usize = 1 << 26;

/// The server's copy of one tree: every bucket's ciphertext bits and nonce.
///
/// # Buckets never written
/// Nonce 0 means "never written": such a bucket's pad is all zeros ([`PadKey::pad_bytes`]) and
/// its ciphertext is all zeros, so it decrypts to the empty bucket (every slot's valid bit 0).
/// Every write uses a nonzero nonce. The ciphertexts are kept in chunks of at most
/// [`CHUNK_BYTES`] bytes, allocated only when a bucket in them is first written; a chunk not
/// yet allocated reads as zeros. So a fresh tree costs its nonces only, and a loaded one its
/// placement level and the paths written since. This reveals nothing new (semi-honest): the
/// server sees every nonce anyway, the client receives the nonces of the buckets it reads, and
/// which buckets the load writes (one level per tree) follows from the public parameters.
#[derive(Clone)]
pub struct EncTree {
    bucket_bits: usize,
    bucket_bytes: usize,
    buckets: usize,
    /// Buckets per chunk.
    per_chunk: usize,
    /// Ciphertexts, `per_chunk` buckets a chunk; an empty chunk was never written.
    chunks: Vec<Vec<u8>>,
    nonce: Vec<u64>,
    /// One bucket of zeros: what an unwritten bucket reads.
    zeros: Vec<u8>,
}

impl std::fmt::Debug for EncTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncTree")
            .field("buckets", &self.buckets)
            .field("bucket_bits", &self.bucket_bits)
            .field("allocated_bytes", &self.allocated_bytes())
            .finish_non_exhaustive()
    }
}

impl EncTree {
    /// A tree of `buckets` buckets of `bucket_bits` bits, none written yet: every bucket has
    /// nonce 0 and decrypts to the empty bucket. Allocates the nonces only.
    pub fn new(buckets: usize, bucket_bits: usize) -> EncTree {
        let bucket_bytes = bucket_bits.div_ceil(8);
        let per_chunk = (CHUNK_BYTES / bucket_bytes.max(1)).max(1);
        EncTree {
            bucket_bits,
            bucket_bytes,
            buckets,
            per_chunk,
            chunks: vec![Vec::new(); buckets.div_ceil(per_chunk)],
            nonce: vec![0; buckets],
            zeros: vec![0; bucket_bytes],
        }
    }

    /// Bits per bucket.
    pub fn bucket_bits(&self) -> usize {
        self.bucket_bits
    }

    /// Buckets of the tree.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Bucket `b`'s nonce; 0 if it was never written.
    pub fn nonce(&self, b: usize) -> u64 {
        self.nonce[b]
    }

    /// Bucket `b`'s ciphertext bit `k`.
    pub fn bit(&self, b: usize, k: usize) -> bool {
        (self.bucket(b)[k / 8] >> (k % 8)) & 1 == 1
    }

    /// Bucket `b`'s ciphertext bits, packed little-endian (zeros if never written).
    pub fn bucket(&self, b: usize) -> &[u8] {
        let (c, at) = (b / self.per_chunk, b % self.per_chunk);
        let chunk = &self.chunks[c];
        if chunk.is_empty() {
            // Still bounds-checks `b`.
            let _ = self.nonce[b];
            &self.zeros
        } else {
            &chunk[at * self.bucket_bytes..(at + 1) * self.bucket_bytes]
        }
    }

    /// Replaces bucket `b` by `bits` (packed) written under `nonce`.
    ///
    /// # Panics
    /// If `nonce` is 0, the nonce of buckets never written, or `bits` is not one bucket.
    pub fn store(&mut self, b: usize, nonce: u64, bits: &[u8]) {
        self.bucket_mut(b, nonce).copy_from_slice(bits);
    }

    /// Bucket `b`'s ciphertext bits to overwrite in place, its nonce set to `nonce`.
    ///
    /// # Panics
    /// If `nonce` is 0, the nonce of buckets never written.
    pub fn bucket_mut(&mut self, b: usize, nonce: u64) -> &mut [u8] {
        assert_ne!(nonce, 0, "nonce 0 marks a bucket never written");
        self.nonce[b] = nonce;
        let (c, at) = (b / self.per_chunk, b % self.per_chunk);
        let len = self.per_chunk.min(self.buckets - c * self.per_chunk) * self.bucket_bytes;
        let chunk = &mut self.chunks[c];
        if chunk.is_empty() {
            *chunk = vec![0; len];
        }
        &mut chunk[at * self.bucket_bytes..(at + 1) * self.bucket_bytes]
    }

    /// Bytes of ciphertext allocated: the chunks holding some bucket written so far.
    pub fn allocated_bytes(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Writes the tree to a state file: its nonces, then each chunk (a flag, and its bytes if
    /// allocated).
    pub(crate) fn write_state(&self, w: &mut StateWriter<'_>) -> std::io::Result<()> {
        w.u64(self.buckets as u64)?;
        w.u64(self.bucket_bits as u64)?;
        let mut buf = Vec::with_capacity(8 * 4096);
        for ns in self.nonce.chunks(4096) {
            buf.clear();
            for n in ns {
                buf.extend_from_slice(&n.to_le_bytes());
            }
            w.bytes(&buf)?;
        }
        for chunk in &self.chunks {
            w.u8(u8::from(!chunk.is_empty()))?;
            w.bytes(chunk)?;
        }
        Ok(())
    }

    /// Reads a tree written by [`write_state`](EncTree::write_state), which must have
    /// `buckets` buckets of `bucket_bits` bits, every nonce below `next_nonce`.
    pub(crate) fn read_state(
        r: &mut StateReader<'_>,
        buckets: usize,
        bucket_bits: usize,
        next_nonce: u64,
    ) -> Result<EncTree, StateError> {
        if r.u64()? != buckets as u64 || r.u64()? != bucket_bits as u64 {
            return Err(StateError::Corrupt("a tree's shape is not its parameters'"));
        }
        let mut tree = EncTree::new(0, bucket_bits);
        tree.buckets = buckets;
        tree.nonce = r.u64_vec(buckets)?;
        if tree.nonce.iter().any(|&n| n >= next_nonce.max(1)) {
            return Err(StateError::Corrupt(
                "a bucket's nonce is not below the next nonce",
            ));
        }
        tree.chunks = Vec::new();
        let count = buckets.div_ceil(tree.per_chunk);
        for c in 0..count {
            let first = c * tree.per_chunk;
            let here = tree.per_chunk.min(buckets - first);
            tree.chunks.push(match r.u8()? {
                0 if tree.nonce[first..first + here].iter().all(|&n| n == 0) => Vec::new(),
                0 => return Err(StateError::Corrupt("a written bucket has no ciphertext")),
                1 => r.byte_vec(here * tree.bucket_bytes)?,
                _ => return Err(StateError::Corrupt("a chunk flag is neither 0 nor 1")),
            });
        }
        Ok(tree)
    }
}

/// The client's pad function F_K.
pub struct PadKey {
    key: [u8; 16],
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
            key,
            cipher: Aes128Cipher::new(key),
        }
    }

    /// The key, for the client's state file ([`crate::persist`]).
    pub(crate) fn key_bytes(&self) -> [u8; 16] {
        self.key
    }

    /// Appends the `bits`-bit pad of tree `tree`'s bucket written under `nonce`, packed
    /// little-endian, to `out`: AES_K(nonce ‖ tree ‖ counter) for counter = 0, 1, …; all
    /// zeros for nonce 0, the nonce of a bucket never written ([`EncTree`]).
    pub fn pad_bytes(&self, tree: usize, nonce: u64, bits: usize, out: &mut Vec<u8>) {
        let bytes = bits.div_ceil(8);
        if nonce == 0 {
            out.resize(out.len() + bytes, 0);
            return;
        }
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
