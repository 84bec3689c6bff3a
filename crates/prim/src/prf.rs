//! A keyed PRF from BLAKE3 in keyed mode, with output in any [`Group`].
//!
//! `Prf::eval::<G>(input)` hashes `input` under the 32-byte key, reads the extendable output
//! (XOF) stream 16 bytes at a time and hands the blocks to [`Group::random_from`], which does the
//! rejection sampling for groups whose order is not a power of two (for `Fp`: reject 128-bit
//! little-endian values ≥ p and read the next block).

use doram_field::{BlockSource, Group};

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
    use crate::test_group::TestZ;

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
        let v: TestZ = prf.eval(b"input");
        assert_eq!(
            v.0,
            u64::from_le_bytes(expected[..8].try_into().expect("8"))
        );
    }

    #[test]
    fn keys_and_inputs_separate() {
        let a = Prf::new([1; 32]);
        let b = Prf::new([2; 32]);
        assert_ne!(a.eval::<TestZ>(b"x"), b.eval::<TestZ>(b"x"));
        assert_ne!(a.eval::<TestZ>(b"x"), a.eval::<TestZ>(b"y"));
        assert_eq!(a.eval::<TestZ>(b"x"), a.clone().eval::<TestZ>(b"x"));
        let mut v = [TestZ(0); 3];
        a.eval_into(b"x", &mut v);
        assert_eq!(v[0], a.eval::<TestZ>(b"x"));
        assert_ne!(v[1], v[0]);
    }
}
