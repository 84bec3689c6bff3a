//! A keyed PRF from BLAKE3 in keyed mode, with output in any [`Group`].
//!
//! `Prf::eval::<G>(input)` hashes `input` under the 32-byte key, reads the extendable output
//! (XOF) stream 16 bytes at a time and hands the blocks to [`Group::random_from`], which does the
//! rejection sampling for groups whose order is not a power of two (for `Fp`: reject 128-bit
//! little-endian values ≥ p and read the next block).

use doram_field::{BlockSource, Fp, Group};

/// The BLAKE3 XOF stream of one PRF evaluation, as a [`BlockSource`].
pub struct XofBlocks {
    reader: blake3::OutputReader,
    buf: [u8; 64],
    pos: usize,
}

impl XofBlocks {
    fn new(reader: blake3::OutputReader) -> Self {
        XofBlocks {
            reader,
            buf: [0; 64],
            pos: 64,
        }
    }
}

impl BlockSource for XofBlocks {
    fn next_block(&mut self) -> [u8; 16] {
        if self.pos == 64 {
            self.reader.fill(&mut self.buf);
            self.pos = 0;
        }
        let mut b = [0u8; 16];
        b.copy_from_slice(&self.buf[self.pos..self.pos + 16]);
        self.pos += 16;
        b
    }
}

/// A pseudorandom function keyed with 32 bytes: BLAKE3 in keyed-hash mode.
#[derive(Clone)]
pub struct Prf {
    keyed: blake3::Hasher,
}

impl std::fmt::Debug for Prf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prf(..)")
    }
}

impl Prf {
    /// The PRF with key `key`.
    pub fn new(key: [u8; 32]) -> Self {
        Prf {
            keyed: blake3::Hasher::new_keyed(&key),
        }
    }

    /// The output stream for `input`, as 16-byte blocks.
    pub fn stream(&self, input: &[u8]) -> XofBlocks {
        let mut h = self.keyed.clone();
        h.update(input);
        XofBlocks::new(h.finalize_xof())
    }

    /// `F_k(input)` as a uniformly distributed element of `G` (rejection sampling over the XOF
    /// stream where `G` needs it).
    pub fn eval<G: Group>(&self, input: &[u8]) -> G {
        G::random_from(&mut self.stream(input))
    }

    /// `F_k(input)` as a uniformly distributed field element: 128-bit little-endian blocks of the
    /// XOF stream are read until one is below p (each block is rejected with probability
    /// ≈ 2^−59.2).
    pub fn eval_fp(&self, input: &[u8]) -> Fp {
        self.eval::<Fp>(input)
    }

    /// `F_k(input)` as `out.len()` group elements read from one stream, in order.
    pub fn eval_into<G: Group>(&self, input: &[u8], out: &mut [G]) {
        let mut s = self.stream(input);
        for x in out {
            *x = G::random_from(&mut s);
        }
    }

    /// `F_k(input)` truncated to `N` bytes.
    pub fn eval_bytes<const N: usize>(&self, input: &[u8]) -> [u8; N] {
        let mut h = self.keyed.clone();
        h.update(input);
        let mut out = [0u8; N];
        h.finalize_xof().fill(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Z64;

    #[test]
    fn matches_blake3_keyed_xof() {
        let key = [42u8; 32];
        let prf = Prf::new(key);
        let mut expected = [0u8; 80];
        let mut h = blake3::Hasher::new_keyed(&key);
        h.update(b"input");
        h.finalize_xof().fill(&mut expected);

        let mut s = prf.stream(b"input");
        for i in 0..5 {
            assert_eq!(s.next_block(), expected[16 * i..16 * i + 16]);
        }
        assert_eq!(prf.eval_bytes::<80>(b"input"), expected);
        let v: Z64 = prf.eval(b"input");
        assert_eq!(
            v.0,
            u64::from_le_bytes(expected[..8].try_into().expect("8"))
        );
    }

    /// A block source that first yields blocks ≥ p, to exercise the rejection path.
    struct Scripted(Vec<[u8; 16]>);
    impl BlockSource for Scripted {
        fn next_block(&mut self) -> [u8; 16] {
            self.0.remove(0)
        }
    }

    #[test]
    fn fp_output_is_rejection_sampled() {
        let prf = Prf::new([7; 32]);
        let mut expected = [0u8; 16];
        let mut h = blake3::Hasher::new_keyed(&[7; 32]);
        h.update(b"tag");
        h.finalize_xof().fill(&mut expected);
        let v = prf.eval_fp(b"tag");
        // The first block is below p except with probability 2^-59.
        assert_eq!(v.to_u128(), u128::from_le_bytes(expected));
        // The rejection path: u128::MAX and p itself are skipped.
        let p = Fp::MODULUS;
        let mut s = Scripted(vec![
            u128::MAX.to_le_bytes(),
            p.to_le_bytes(),
            5u128.to_le_bytes(),
        ]);
        assert_eq!(Fp::random_from(&mut s), Fp::from_u128(5));
    }

    #[test]
    fn keys_and_inputs_separate() {
        let a = Prf::new([1; 32]);
        let b = Prf::new([2; 32]);
        assert_ne!(a.eval::<Z64>(b"x"), b.eval::<Z64>(b"x"));
        assert_ne!(a.eval::<Z64>(b"x"), a.eval::<Z64>(b"y"));
        assert_eq!(a.eval::<Z64>(b"x"), a.clone().eval::<Z64>(b"x"));
        let mut v = [Z64(0); 3];
        a.eval_into(b"x", &mut v);
        assert_eq!(v[0], a.eval::<Z64>(b"x"));
        assert_ne!(v[1], v[0]);
    }
}
