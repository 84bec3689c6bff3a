//! [`Strings`]: a sequence of equal-width bit strings, the unit every sub-protocol moves
//! (messages m_t, pads r_t, tuples of a path), with XOR, permutation and bit-field access.
//!
//! A string of `width` bits occupies ⌈width/8⌉ bytes; bit b of a string is bit b mod 8 of its
//! byte b/8, and the bits at and above `width` in the last byte are always zero, so that two
//! strings are equal exactly when their bytes are. The encoding on the wire is these bytes,
//! string after string, with no length prefix; [`Strings::decode`] is told the count and the
//! width and refuses any other length or a set padding bit.

use core::fmt;

use doram_core::CodecError;
use rand_core::RngCore;

/// `count` bit strings of `width` bits each ([module docs](self) for the layout).
#[derive(Clone, PartialEq, Eq)]
pub struct Strings {
    width: usize,
    count: usize,
    data: Vec<u8>,
}

impl fmt::Debug for Strings {
    /// Shape only: the contents are shares or secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Strings({} × {} bits, ..)", self.count, self.width)
    }
}

/// The mask of the used bits of the last byte of a `width`-bit string (0xff if it is full).
fn tail_mask(width: usize) -> u8 {
    match width % 8 {
        0 => 0xff,
        r => (1u8 << r) - 1,
    }
}

impl Strings {
    /// `count` all-zero strings of `width` bits.
    pub fn zeros(count: usize, width: usize) -> Strings {
        Strings {
            width,
            count,
            data: vec![0; count * width.div_ceil(8)],
        }
    }

    /// `count` uniformly random strings of `width` bits from `rng`.
    pub fn random<R: RngCore + ?Sized>(count: usize, width: usize, rng: &mut R) -> Strings {
        let mut s = Strings::zeros(count, width);
        rng.fill_bytes(&mut s.data);
        s.clear_padding();
        s
    }

    /// Strings built from `rows`, each exactly ⌈width/8⌉ bytes; padding bits are cleared.
    ///
    /// # Panics
    /// If a row has another length (a caller's bug).
    pub fn from_rows<'a>(width: usize, rows: impl IntoIterator<Item = &'a [u8]>) -> Strings {
        let stride = width.div_ceil(8);
        let mut data = Vec::new();
        let mut count = 0;
        for row in rows {
            assert_eq!(row.len(), stride, "a {width}-bit string is {stride} bytes");
            data.extend_from_slice(row);
            count += 1;
        }
        let mut s = Strings { width, count, data };
        s.clear_padding();
        s
    }

    fn clear_padding(&mut self) {
        let stride = self.stride();
        if stride == 0 {
            return;
        }
        let mask = tail_mask(self.width);
        for row in self.data.chunks_exact_mut(stride) {
            row[stride - 1] &= mask;
        }
    }

    /// Bits per string.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of strings.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes per string: ⌈width/8⌉.
    pub fn stride(&self) -> usize {
        self.width.div_ceil(8)
    }

    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// String `i`'s bytes.
    ///
    /// # Panics
    /// If `i ≥ count` (a caller's bug).
    pub fn get(&self, i: usize) -> &[u8] {
        let s = self.stride();
        &self.data[i * s..(i + 1) * s]
    }

    /// Replaces string `i` by `row` (⌈width/8⌉ bytes; padding bits are cleared).
    ///
    /// # Panics
    /// If `i ≥ count` or `row` has another length (a caller's bug).
    pub fn set(&mut self, i: usize, row: &[u8]) {
        let s = self.stride();
        let dst = &mut self.data[i * s..(i + 1) * s];
        dst.copy_from_slice(row);
        if s > 0 {
            dst[s - 1] &= tail_mask(self.width);
        }
    }

    /// XORs `row` into string `i`.
    ///
    /// # Panics
    /// If `i ≥ count` or `row` has another length (a caller's bug).
    pub fn xor_row(&mut self, i: usize, row: &[u8]) {
        let s = self.stride();
        xor_into(&mut self.data[i * s..(i + 1) * s], row);
        if s > 0 {
            self.data[(i + 1) * s - 1] &= tail_mask(self.width);
        }
    }

    /// XORs `other` (of the same shape) into `self`, string by string.
    ///
    /// # Panics
    /// If the shapes differ (a caller's bug).
    pub fn xor_assign(&mut self, other: &Strings) {
        assert_eq!(
            (self.count, self.width),
            (other.count, other.width),
            "XOR of strings of different shapes"
        );
        xor_into(&mut self.data, &other.data);
    }

    /// `self ⊕ other`.
    ///
    /// # Panics
    /// If the shapes differ (a caller's bug).
    #[must_use]
    pub fn xor(&self, other: &Strings) -> Strings {
        let mut out = self.clone();
        out.xor_assign(other);
        out
    }

    /// The strings `self[map[0]], self[map[1]], …`: string j of the result is string `map[j]`.
    ///
    /// # Panics
    /// If an index is out of range (a caller's bug).
    #[must_use]
    pub fn gather(&self, map: &[usize]) -> Strings {
        Strings::from_rows(self.width, map.iter().map(|&i| self.get(i)))
    }

    /// All bytes, string after string: the wire encoding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }

    /// Decodes exactly `count` strings of `width` bits.
    ///
    /// # Errors
    /// [`CodecError::WrongLength`] for any length other than count·⌈width/8⌉,
    /// [`CodecError::OutOfRange`] if a padding bit is set.
    pub fn decode(bytes: &[u8], count: usize, width: usize) -> Result<Strings, CodecError> {
        let expected = count * width.div_ceil(8);
        if bytes.len() != expected {
            return Err(CodecError::WrongLength {
                expected,
                got: bytes.len(),
            });
        }
        let s = Strings {
            width,
            count,
            data: bytes.to_vec(),
        };
        let stride = s.stride();
        let mask = tail_mask(width);
        if stride > 0
            && s.data
                .chunks_exact(stride)
                .any(|r| r[stride - 1] & !mask != 0)
        {
            return Err(CodecError::OutOfRange {
                what: "a bit string has a bit set beyond its width",
            });
        }
        Ok(s)
    }

    /// Bits `offset..offset + len` (len ≤ 64) of string `i`, bit `offset` lowest.
    ///
    /// # Panics
    /// If the range leaves the string or len > 64 (a caller's bug).
    pub fn field(&self, i: usize, offset: usize, len: usize) -> u64 {
        assert!(
            len <= 64 && offset + len <= self.width,
            "field out of range"
        );
        get_bits(self.get(i), offset, len)
    }

    /// Sets bits `offset..offset + len` (len ≤ 64) of string `i` to the low `len` bits of `v`.
    ///
    /// # Panics
    /// If the range leaves the string or len > 64 (a caller's bug).
    pub fn set_field(&mut self, i: usize, offset: usize, len: usize, v: u64) {
        assert!(
            len <= 64 && offset + len <= self.width,
            "field out of range"
        );
        let s = self.stride();
        set_bits(&mut self.data[i * s..(i + 1) * s], offset, len, v);
    }
}

impl Strings {
    /// Bits `offset..offset + len` of string `i` as a `len`-bit string (⌈len/8⌉ bytes, bit
    /// `offset` first).
    ///
    /// # Panics
    /// If the range leaves the string (a caller's bug).
    pub fn bit_range(&self, i: usize, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.width, "bit range out of range");
        let row = self.get(i);
        let mut out = vec![0u8; len.div_ceil(8)];
        for start in (0..len).step_by(64) {
            let l = (len - start).min(64);
            set_bits(&mut out, start, l, get_bits(row, offset + start, l));
        }
        out
    }

    /// Sets bits `offset..offset + len` of string `i` to the `len`-bit string `bits`.
    ///
    /// # Panics
    /// If the range leaves the string or `bits` is not ⌈len/8⌉ bytes (a caller's bug).
    pub fn set_bit_range(&mut self, i: usize, offset: usize, len: usize, bits: &[u8]) {
        assert!(offset + len <= self.width, "bit range out of range");
        assert_eq!(bits.len(), len.div_ceil(8), "a {len}-bit string");
        let s = self.stride();
        let row = &mut self.data[i * s..(i + 1) * s];
        for start in (0..len).step_by(64) {
            let l = (len - start).min(64);
            set_bits(row, offset + start, l, get_bits(bits, start, l));
        }
    }
}

/// `dst ^= src`, byte by byte.
///
/// # Panics
/// If the lengths differ (a caller's bug).
pub fn xor_into(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "XOR of byte strings of different lengths"
    );
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// The low `len` (≤ 64) bits set.
fn low_mask(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// The (at most 9) bytes holding bits `offset..offset + len`, len in 1..=64, as a `u128`
/// window starting at byte offset/8, and how many bytes that is.
fn window(bytes: &[u8], offset: usize, len: usize) -> (u128, usize) {
    let (first, last) = (offset / 8, (offset + len - 1) / 8);
    let n = last - first + 1;
    let mut buf = [0u8; 16];
    buf[..n].copy_from_slice(&bytes[first..=last]);
    (u128::from_le_bytes(buf), n)
}

/// Bits `offset..offset + len` (len ≤ 64) of `bytes` (bit b is bit b mod 8 of byte b/8).
///
/// # Panics
/// If the range leaves `bytes` (a caller's bug).
pub fn get_bits(bytes: &[u8], offset: usize, len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    let (v, _) = window(bytes, offset, len);
    (v >> (offset % 8)) as u64 & low_mask(len)
}

/// Sets bits `offset..offset + len` (len ≤ 64) of `bytes` to the low `len` bits of `v`.
///
/// # Panics
/// If the range leaves `bytes` (a caller's bug).
pub fn set_bits(bytes: &mut [u8], offset: usize, len: usize, v: u64) {
    if len == 0 {
        return;
    }
    let (cur, n) = window(bytes, offset, len);
    let shift = offset % 8;
    let mask = u128::from(low_mask(len)) << shift;
    let new = (cur & !mask) | (u128::from(v & low_mask(len)) << shift);
    let first = offset / 8;
    bytes[first..first + n].copy_from_slice(&new.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn padding_is_kept_clear_and_checked() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
        for width in [0, 1, 7, 8, 9, 13, 64, 129] {
            let s = Strings::random(5, width, &mut rng);
            let back = Strings::decode(s.as_bytes(), 5, width).unwrap();
            assert_eq!(back, s);
            assert!(Strings::decode(s.as_bytes(), 4, width).is_err() || width == 0);
            if width % 8 != 0 {
                let mut bad = s.as_bytes().to_vec();
                let stride = width.div_ceil(8);
                bad[stride - 1] |= 0x80;
                assert!(matches!(
                    Strings::decode(&bad, 5, width),
                    Err(CodecError::OutOfRange { .. })
                ));
            }
        }
        let mut s = Strings::zeros(2, 5);
        s.set(1, &[0xff]);
        assert_eq!(s.get(1), &[0x1f]);
        s.xor_row(0, &[0xe3]);
        assert_eq!(s.get(0), &[0x03]);
        assert_eq!(format!("{s:?}"), "Strings(2 × 5 bits, ..)");
    }

    #[test]
    fn bit_fields_match_bit_by_bit() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
        let mut bytes = vec![0u8; 24];
        rand_core::RngCore::fill_bytes(&mut rng, &mut bytes);
        for offset in [0, 1, 7, 8, 13, 63, 64, 100] {
            for len in [0, 1, 5, 8, 9, 31, 57, 63, 64] {
                let slow = (0..len).fold(0u64, |v, k| {
                    let b = offset + k;
                    v | u64::from((bytes[b / 8] >> (b % 8)) & 1) << k
                });
                assert_eq!(get_bits(&bytes, offset, len), slow, "{offset} {len}");
                let mut copy = bytes.clone();
                let v = rand_core::RngCore::next_u64(&mut rng);
                set_bits(&mut copy, offset, len, v);
                assert_eq!(get_bits(&copy, offset, len), v & low_mask(len));
                for b in (0..192).filter(|&b| b < offset || b >= offset + len) {
                    assert_eq!((copy[b / 8] >> (b % 8)) & 1, (bytes[b / 8] >> (b % 8)) & 1);
                }
            }
        }
    }

    #[test]
    fn fields_and_gather() {
        let mut s = Strings::zeros(3, 21);
        s.set_field(2, 3, 13, 0x1abc);
        assert_eq!(s.field(2, 3, 13), 0x1abc);
        assert_eq!(s.field(2, 0, 3), 0);
        assert_eq!(s.field(2, 16, 5), 0);
        let g = s.gather(&[2, 0, 2]);
        assert_eq!(g.count(), 3);
        assert_eq!(g.get(0), s.get(2));
        assert_eq!(g.get(1), s.get(0));
        assert_eq!(g.xor(&g).as_bytes(), Strings::zeros(3, 21).as_bytes());
        let mut wide = Strings::zeros(2, 200);
        let bits: Vec<u8> = (0..17u8).map(|k| k.wrapping_mul(37)).collect();
        let bits = Strings::from_rows(130, [bits.as_slice()]);
        wide.set_bit_range(1, 61, 130, bits.get(0));
        assert_eq!(wide.bit_range(1, 61, 130), bits.get(0));
        assert_eq!(wide.field(1, 0, 61), 0);
        assert_eq!(wide.field(1, 191, 9), 0);
        assert!(wide.bit_range(0, 0, 200).iter().all(|&b| b == 0));
    }
}
