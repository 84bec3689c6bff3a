//! `AesPrg`: a pseudorandom generator from AES-128 in counter mode, keyed by a [`Seed`].
//!
//! Output block `i` (counting from 0) is `AES_seed(i)`, with `i` encoded as a little-endian
//! 128-bit block; the byte stream is the concatenation of the blocks' little-endian bytes. Every
//! consumer (bytes, words, blocks, group elements) reads from that one stream, so two generators
//! with the same seed produce the same values as long as they are asked the same things in the
//! same order.

use crate::aes::{Aes128Cipher, AesKernel, BATCH, Block, WithAes};
use doram_core::Seed;
use doram_field::{BlockSource, Group};
use rand_core::{CryptoRng, RngCore, SeedableRng};

const BUF_BYTES: usize = 16 * BATCH;

/// AES-128-CTR pseudorandom generator. Implements [`BlockSource`] (so [`Group::random_from`]
/// draws from it, with rejection sampling where needed) and [`RngCore`] + [`CryptoRng`].
///
/// Deliberately not `Clone`: a copied generator would repeat its stream.
pub struct AesPrg {
    cipher: Aes128Cipher,
    /// Index of the next block to encrypt.
    counter: u128,
    buf: [u8; BUF_BYTES],
    /// Bytes of `buf` already handed out (`BUF_BYTES` = empty).
    pos: usize,
}

impl std::fmt::Debug for AesPrg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AesPrg(..)")
    }
}

impl AesPrg {
    /// The generator for `seed`, positioned at the start of its stream.
    pub fn new(seed: Seed) -> Self {
        AesPrg {
            cipher: Aes128Cipher::new(seed.0),
            counter: 0,
            buf: [0; BUF_BYTES],
            pos: BUF_BYTES,
        }
    }

    /// A generator with a fresh random seed drawn from `rng`.
    pub fn from_rng<R: RngCore + CryptoRng + ?Sized>(rng: &mut R) -> Self {
        Self::new(Seed::random(rng))
    }

    fn refill(&mut self) {
        let mut blocks: [Block; BATCH] = std::array::from_fn(|i| self.counter + i as u128);
        self.counter += BATCH as u128;
        self.cipher.encrypt8(&mut blocks);
        for (chunk, b) in self.buf.chunks_exact_mut(16).zip(blocks) {
            chunk.copy_from_slice(&b.to_le_bytes());
        }
        self.pos = 0;
    }

    /// Fills `out` with the next bytes of the stream.
    pub fn fill(&mut self, mut out: &mut [u8]) {
        while !out.is_empty() {
            if self.pos == BUF_BYTES {
                if out.len() >= BUF_BYTES {
                    // Whole buffers straight into `out`, all in one cipher call.
                    let whole = out.len() / BUF_BYTES * BUF_BYTES;
                    let (head, tail) = out.split_at_mut(whole);
                    self.cipher.with_aes(Counter {
                        counter: &mut self.counter,
                        out: head,
                    });
                    out = tail;
                    continue;
                }
                self.refill();
            }
            let n = out.len().min(BUF_BYTES - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            out = &mut out[n..];
        }
    }

    /// The next 16 bytes of the stream as a little-endian block.
    #[inline]
    pub fn next_u128(&mut self) -> Block {
        let mut b = [0u8; 16];
        self.fill(&mut b);
        u128::from_le_bytes(b)
    }

    /// A fresh [`Seed`] from the stream (e.g. to key a sub-generator).
    pub fn next_seed(&mut self) -> Seed {
        let mut s = [0u8; 16];
        self.fill(&mut s);
        Seed(s)
    }

    /// One uniformly random group element ([`Group::random_from`] on this stream).
    pub fn random<G: Group>(&mut self) -> G {
        G::random_from(self)
    }

    /// `count` uniformly random group elements, in stream order.
    pub fn expand<G: Group>(&mut self, count: usize) -> Vec<G> {
        (0..count).map(|_| G::random_from(self)).collect()
    }

    /// Fills `out` with uniformly random group elements, in stream order.
    pub fn expand_into<G: Group>(&mut self, out: &mut [G]) {
        for x in out {
            *x = G::random_from(self);
        }
    }
}

/// Counter-mode output for [`AesPrg::fill`]: `out` (whole multiples of [`BUF_BYTES`]) gets
/// the encryptions of the blocks from `counter` on, and `counter` moves past them.
struct Counter<'a> {
    counter: &'a mut u128,
    out: &'a mut [u8],
}

impl WithAes for Counter<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        let mut counter = *self.counter;
        for chunk in self.out.chunks_exact_mut(BUF_BYTES) {
            let mut blocks: [Block; BATCH] = std::array::from_fn(|i| counter + i as u128);
            counter += BATCH as u128;
            aes.encrypt8(&mut blocks);
            for (bytes, b) in chunk.chunks_exact_mut(16).zip(blocks) {
                bytes.copy_from_slice(&b.to_le_bytes());
            }
        }
        *self.counter = counter;
    }
}

impl BlockSource for AesPrg {
    #[inline]
    fn next_block(&mut self) -> [u8; 16] {
        let mut b = [0u8; 16];
        self.fill(&mut b);
        b
    }
}

impl RngCore for AesPrg {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.fill(dst)
    }
}

impl CryptoRng for AesPrg {}

impl SeedableRng for AesPrg {
    type Seed = [u8; 16];

    fn from_seed(seed: [u8; 16]) -> Self {
        AesPrg::new(Seed(seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::Aes128Cipher;
    use doram_field::Z64;

    #[test]
    fn stream_is_aes_ctr() {
        let seed = Seed([0x5a; 16]);
        let c = Aes128Cipher::new(seed.0);
        let mut prg = AesPrg::new(seed);
        for i in 0..20u128 {
            assert_eq!(prg.next_u128(), c.encrypt(i), "block {i}");
        }
    }

    #[test]
    fn long_reads_after_a_partial_buffer_continue_the_stream() {
        // 5 bytes from the buffer, then 300: 11 more from the buffer, 256 in whole buffers
        // straight into the output, 33 from a refilled buffer.
        let seed = Seed([0x17; 16]);
        let c = Aes128Cipher::new(seed.0);
        let want: Vec<u8> = (0..21u128)
            .flat_map(|i| c.encrypt(i).to_le_bytes())
            .collect();
        let mut prg = AesPrg::new(seed);
        let mut got = vec![0u8; 305];
        let (a, b) = got.split_at_mut(5);
        prg.fill(a);
        prg.fill(b);
        assert_eq!(got, want[..305]);
        assert_eq!(prg.next_u128().to_le_bytes(), want[305..321]);
    }

    #[test]
    fn deterministic_and_read_size_independent() {
        let seed = Seed([3; 16]);
        let mut a = AesPrg::new(seed);
        let mut whole = vec![0u8; 1000];
        a.fill_bytes(&mut whole);

        // The same stream read in odd-sized pieces through every interface.
        let mut b = AesPrg::new(seed);
        let mut pieces = Vec::new();
        pieces.extend_from_slice(&b.next_u32().to_le_bytes());
        pieces.extend_from_slice(&b.next_block());
        pieces.extend_from_slice(&b.next_u64().to_le_bytes());
        let mut odd = [0u8; 333];
        b.fill_bytes(&mut odd);
        pieces.extend_from_slice(&odd);
        while pieces.len() < 1000 {
            pieces.extend_from_slice(&b.next_u128().to_le_bytes());
        }
        assert_eq!(&pieces[..1000], &whole[..]);
    }

    #[test]
    fn distinct_seeds_give_distinct_streams() {
        let mut streams = Vec::new();
        for i in 0..16u8 {
            let mut s = [0u8; 16];
            s[(i as usize) % 16] = 1 + i;
            let mut prg = AesPrg::new(Seed(s));
            let mut out = [0u8; 64];
            prg.fill_bytes(&mut out);
            streams.push(out);
        }
        for i in 0..streams.len() {
            for j in 0..i {
                assert_ne!(streams[i], streams[j]);
            }
        }
    }

    #[test]
    fn stream_bytes_look_balanced() {
        // 2^16 bytes: the number of one bits is Binomial(2^19, 1/2), sd ≈ 362; allow 6 sd.
        let mut prg = AesPrg::new(Seed([9; 16]));
        let mut out = vec![0u8; 1 << 16];
        prg.fill_bytes(&mut out);
        let ones: u64 = out.iter().map(|b| u64::from(b.count_ones())).sum();
        let mean = (out.len() * 8 / 2) as f64;
        assert!(((ones as f64) - mean).abs() < 6.0 * 362.0, "ones = {ones}");
    }

    #[test]
    fn expand_matches_random_from() {
        let seed = Seed([1; 16]);
        let v: Vec<Z64> = AesPrg::new(seed).expand(50);
        let mut p = AesPrg::new(seed);
        let w: Vec<Z64> = (0..50).map(|_| p.random()).collect();
        assert_eq!(v, w);
        let mut buf = [Z64::default(); 50];
        AesPrg::new(seed).expand_into(&mut buf);
        assert_eq!(&buf[..], &v[..]);
        assert!(v.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn seedable_matches_new() {
        let mut a = AesPrg::from_seed([7; 16]);
        let mut b = AesPrg::new(Seed([7; 16]));
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
