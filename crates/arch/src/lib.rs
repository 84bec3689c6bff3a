//! The AES-NI instructions, safe to call: every other crate of the workspace forbids `unsafe`,
//! and this one holds the only unsafe code, a handful of calls to `core::arch` intrinsics.
//!
//! The default build runs on any x86-64 and cannot assume AES-NI, so the intrinsics are
//! `unsafe` to call from ordinary code. [`AesNi`] is a token that exists only once the CPU has
//! been checked for the instructions ([`AesNi::detect`]); its methods take `self`, so holding
//! one is the proof every call needs. The methods are `#[inline(always)]`: inlined into code
//! compiled with the `aes` target feature (a build for the host, or a function entered through
//! a run-time feature dispatch such as `pulp`'s), each becomes the single instruction.
//!
//! The vector type is `safe_arch`'s [`m128i`], so the SSE2 operations around the cipher (XOR,
//! shuffles, 64-bit lane adds) stay in that crate's safe API (SSE2 is part of x86-64).
//!
//! [`Vaes`] does the same for the 256-bit forms (VAES with AVX2, two blocks per instruction):
//! AVX2 is not part of baseline x86-64 either, so its few operations on [`Wide`] pairs are
//! methods of that token too.
//!
//! [`Gfni512`] is the token for AVX-512 (F, BW, VBMI) with GFNI, and its one method is a whole
//! 128 × 128 bit-matrix transpose (OT extension's), compiled for those features and entered
//! once per matrix: about 560 instructions executed (353 in its code, the qword transposes a
//! loop of 69 run four times) against about 1760 for the portable one, and a quarter of its
//! time on the Intel host of `docs/notes/gkk12.md`.

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    // The only module with unsafe code in the workspace.
    #![allow(unsafe_code)]

    use core::arch::x86_64::{_mm_aesenc_si128, _mm_aesenclast_si128, _mm_aeskeygenassist_si128};
    pub use safe_arch::m128i;

    /// Proof that the CPU executing the program has AES-NI (and SSE2, which every x86-64 has).
    ///
    /// Only [`AesNi::detect`] makes one, so code that holds a token may run the instructions.
    #[derive(Clone, Copy, Debug)]
    pub struct AesNi {
        _checked: (),
    }

    impl AesNi {
        /// The token, if this CPU has AES-NI (checked once by the standard library, then a
        /// cached flag; a build with the `aes` target feature knows it without a check).
        #[inline]
        pub fn detect() -> Option<AesNi> {
            if cfg!(target_feature = "aes") || std::arch::is_x86_feature_detected!("aes") {
                Some(AesNi { _checked: () })
            } else {
                None
            }
        }

        /// One AES encryption round (`AESENC`): ShiftRows, SubBytes, MixColumns, then the XOR
        /// of `round_key`.
        #[inline(always)]
        pub fn enc(self, block: m128i, round_key: m128i) -> m128i {
            // SAFETY: `self` exists only if `detect` found AES-NI on this CPU.
            m128i(unsafe { _mm_aesenc_si128(block.0, round_key.0) })
        }

        /// The last AES encryption round (`AESENCLAST`: no MixColumns).
        #[inline(always)]
        pub fn enc_last(self, block: m128i, round_key: m128i) -> m128i {
            // SAFETY: `self` exists only if `detect` found AES-NI on this CPU.
            m128i(unsafe { _mm_aesenclast_si128(block.0, round_key.0) })
        }

        /// `AESKEYGENASSIST` with round constant `RCON`, for the key schedule.
        #[inline(always)]
        pub fn key_gen_assist<const RCON: i32>(self, key: m128i) -> m128i {
            // SAFETY: `self` exists only if `detect` found AES-NI on this CPU.
            m128i(unsafe { _mm_aeskeygenassist_si128::<RCON>(key.0) })
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vaes {
    // The second module with unsafe code: the 256-bit forms (VAES with AVX2).
    #![allow(unsafe_code)]

    use core::arch::x86_64::{
        __m256i, _mm256_aesenc_epi128, _mm256_aesenclast_epi128, _mm256_and_si256,
        _mm256_bslli_epi128, _mm256_set_m128i, _mm256_shuffle_epi32, _mm256_storeu_si256,
        _mm256_xor_si256,
    };
    use safe_arch::m128i;

    /// Two 128-bit blocks side by side in a 256-bit register (lane 0 the first block).
    ///
    /// Only a [`Vaes`] token operates on it, so a value exists only on a CPU with the
    /// instructions. `Debug` is deliberately absent: blocks are often secret.
    #[derive(Clone, Copy)]
    #[repr(transparent)]
    pub struct Wide(__m256i);

    /// Proof that the CPU executing the program has the vector AES instructions (VAES) and
    /// AVX2, so that four AES rounds on two blocks each issue per instruction.
    #[derive(Clone, Copy, Debug)]
    pub struct Vaes {
        _checked: (),
    }

    impl Vaes {
        /// The token, if this CPU has VAES, AVX2 and AES-NI.
        #[inline]
        pub fn detect() -> Option<Vaes> {
            let has = |compiled: bool, found: fn() -> bool| compiled || found();
            let ok = has(cfg!(target_feature = "vaes"), || {
                std::arch::is_x86_feature_detected!("vaes")
            }) && has(cfg!(target_feature = "avx2"), || {
                std::arch::is_x86_feature_detected!("avx2")
            }) && has(cfg!(target_feature = "aes"), || {
                std::arch::is_x86_feature_detected!("aes")
            });
            ok.then_some(Vaes { _checked: () })
        }

        /// Stores the two blocks.
        #[inline(always)]
        pub fn store(self, w: Wide, out: &mut [u128; 2]) {
            // SAFETY: `self` exists only if `detect` found AVX2; the pointer is valid for 32
            // bytes of writes (an unaligned store).
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), w.0) }
        }

        /// The pair `(lo, hi)`.
        #[inline(always)]
        pub fn pair(self, lo: m128i, hi: m128i) -> Wide {
            // SAFETY: `self` exists only if `detect` found AVX2 (which implies AVX).
            Wide(unsafe { _mm256_set_m128i(hi.0, lo.0) })
        }

        /// Lane-wise AND.
        #[inline(always)]
        pub fn and(self, a: Wide, b: Wide) -> Wide {
            // SAFETY: `self` exists only if `detect` found AVX2.
            Wide(unsafe { _mm256_and_si256(a.0, b.0) })
        }

        /// The same block in both lanes.
        #[inline(always)]
        pub fn splat(self, x: m128i) -> Wide {
            self.pair(x, x)
        }

        /// Lane-wise XOR.
        #[inline(always)]
        pub fn xor(self, a: Wide, b: Wide) -> Wide {
            // SAFETY: `self` exists only if `detect` found AVX2.
            Wide(unsafe { _mm256_xor_si256(a.0, b.0) })
        }

        /// σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi on each block (the orthomorphism of the circular
        /// correlation-robust hash): `[hi, hi] ⊕ [0, lo]` per lane.
        #[inline(always)]
        pub fn sigma(self, x: Wide) -> Wide {
            // SAFETY: `self` exists only if `detect` found AVX2.
            unsafe {
                Wide(_mm256_xor_si256(
                    _mm256_shuffle_epi32::<0b11_10_11_10>(x.0),
                    _mm256_bslli_epi128::<8>(x.0),
                ))
            }
        }

        /// One AES encryption round on both blocks (`VAESENC`).
        #[inline(always)]
        pub fn enc(self, block: Wide, round_key: Wide) -> Wide {
            // SAFETY: `self` exists only if `detect` found VAES and AVX2.
            Wide(unsafe { _mm256_aesenc_epi128(block.0, round_key.0) })
        }

        /// The last AES encryption round on both blocks (`VAESENCLAST`).
        #[inline(always)]
        pub fn enc_last(self, block: Wide, round_key: Wide) -> Wide {
            // SAFETY: `self` exists only if `detect` found VAES and AVX2.
            Wide(unsafe { _mm256_aesenclast_epi128(block.0, round_key.0) })
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod gfni {
    // The third module with unsafe code: a bit-matrix transpose with AVX-512 (VBMI) and GFNI.
    #![allow(unsafe_code)]

    use core::arch::x86_64::{
        __m512i, _mm512_gf2p8affine_epi64_epi8, _mm512_loadu_si512, _mm512_permutex2var_epi8,
        _mm512_permutex2var_epi64, _mm512_set1_epi64, _mm512_storeu_si512,
    };

    /// Proof that the CPU has AVX-512 (F, BW, VBMI) and GFNI: a 128 × 128 bit transpose in a
    /// few hundred instructions ([`Gfni512::transpose128`]).
    #[derive(Clone, Copy, Debug)]
    pub struct Gfni512 {
        _checked: (),
    }

    impl Gfni512 {
        /// The token, if this CPU has the instructions (the standard library's cached check).
        #[inline]
        pub fn detect() -> Option<Gfni512> {
            let ok = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vbmi")
                && std::arch::is_x86_feature_detected!("gfni");
            ok.then_some(Gfni512 { _checked: () })
        }

        /// The transpose of a 128 × 128 bit matrix: bit `c` of `rows[r]` (least significant
        /// first) becomes bit `r` of `out[c]`.
        #[inline]
        pub fn transpose128(self, rows: &[u128; 128], out: &mut [u128; 128]) {
            // SAFETY: `self` exists only if `detect` found every feature `transpose` is
            // compiled with.
            unsafe { transpose(rows, out) }
        }
    }

    /// A 64-byte index vector into a 128-byte table, byte `p` being `f(p)`.
    fn byte_index(f: impl Fn(usize) -> usize) -> [u8; 64] {
        core::array::from_fn(|p| f(p) as u8)
    }

    /// A qword index vector into a 16-qword table, qword `c` being `f(c)`.
    fn qword_index(f: impl Fn(usize) -> usize) -> [u64; 8] {
        core::array::from_fn(|c| f(c) as u64)
    }

    /// Row group `R` (rows `8R .. 8R + 8`, 128 bytes): qword `q` of the gathered half `half`
    /// holds byte `B = 8·half + q` of row `8R + i` in its byte `7 − i`, the layout in which
    /// `GF2P8AFFINEQB` transposes an 8 × 8 block.
    fn gather_index(half: usize) -> [u8; 64] {
        byte_index(|p| {
            let (q, i) = (p / 8, 7 - p % 8);
            16 * i + 8 * half + q
        })
    }

    #[target_feature(enable = "avx512f")]
    fn load_rows(x: &[u128; 4]) -> __m512i {
        // SAFETY: `x` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    fn load_bytes(x: &[u8; 64]) -> __m512i {
        // SAFETY: `x` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    fn load_qwords(x: &[u64; 8]) -> __m512i {
        // SAFETY: `x` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(x.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    fn store_rows(x: &mut [u128; 4], v: __m512i) {
        // SAFETY: `x` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(x.as_mut_ptr().cast(), v) }
    }

    /// The transpose: for each row group, a byte shuffle into 8 × 8 blocks (one per qword) and
    /// the affine map that transposes each block; then, per half of the byte columns, 8 × 8
    /// qword transposes so that every output group's sixteen blocks lie in two registers, and
    /// a byte shuffle into the output rows.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn transpose(rows: &[u128; 128], out: &mut [u128; 128]) {
        // Byte b of every qword is the unit vector e_b: the affine map then gives, in byte b,
        // bit b of the matrix's byte 7 − i in bit i, i.e. column b of the block.
        let units = _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64);
        let gather = [load_bytes(&gather_index(0)), load_bytes(&gather_index(1))];
        // g[h][R]: qword q of g[h][R] (byte column B = 8h + q) holds in byte b the bits of
        // rows 8R .. 8R + 8 at column 8B + b, i.e. byte R of output row 8B + b.
        let mut g = [[units; 16]; 2];
        let (groups, _) = rows.as_chunks::<8>();
        for (r, group) in groups.iter().enumerate() {
            let (quads, _) = group.as_chunks::<4>();
            let (a, b) = (load_rows(&quads[0]), load_rows(&quads[1]));
            for (gh, idx) in g.iter_mut().zip(gather) {
                let blocks = _mm512_permutex2var_epi8(a, idx, b);
                gh[r] = _mm512_gf2p8affine_epi64_epi8::<0>(units, blocks);
            }
        }
        // Within each 8 × 8 array of qwords (R in one half of 0..16 by q), the transpose by
        // swapping the off-diagonal d × d blocks for d = 1, 2, 4: afterwards entry q of the
        // array holds qword q of each of its eight R, in order.
        let steps = [1usize, 2, 4].map(|d| {
            [
                load_qwords(&qword_index(|c| if c & d == 0 { c } else { 8 + c - d })),
                load_qwords(&qword_index(|c| if c & d != 0 { 8 + c } else { c + d })),
            ]
        });
        for m in g.iter_mut().flat_map(|gh| gh.chunks_exact_mut(8)) {
            for (s, [keep, take]) in steps.iter().enumerate() {
                let d = 1 << s;
                for r in (0..8).filter(|r| r & d == 0) {
                    let (x, y) = (m[r], m[r + d]);
                    m[r] = _mm512_permutex2var_epi64(x, *keep, y);
                    m[r + d] = _mm512_permutex2var_epi64(x, *take, y);
                }
            }
        }
        // Output rows 8B .. 8B + 8 (B = 8h + q) from (g[h][q], g[h][8 + q]), the blocks of
        // R = 0 .. 16 in order: byte 16b + R of the 128 output bytes is byte 8R + b.
        let place = [
            load_bytes(&byte_index(|p| 8 * (p % 16) + p / 16)),
            load_bytes(&byte_index(|p| 8 * (p % 16) + p / 16 + 4)),
        ];
        let (outs, _) = out.as_chunks_mut::<8>();
        let sources = g
            .iter()
            .flat_map(|gh| (0..8).map(move |q| (gh[q], gh[8 + q])));
        for (group, (lo, hi)) in outs.iter_mut().zip(sources) {
            let (quads, _) = group.as_chunks_mut::<4>();
            for (quad, idx) in quads.iter_mut().zip(place) {
                store_rows(quad, _mm512_permutex2var_epi8(lo, idx, hi));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use gfni::Gfni512;
#[cfg(target_arch = "x86_64")]
pub use vaes::{Vaes, Wide};
#[cfg(target_arch = "x86_64")]
pub use x86_64::{AesNi, m128i};

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// FIPS-197 Appendix C.1: the first round of AES-128 on the example block agrees with the
    /// state the standard lists at the start of round 2. (Skipped on a CPU without AES-NI, where
    /// no token exists; the AES tests of `doram-prim` then cover the software backend.)
    #[test]
    fn one_round_matches_fips_197() {
        let Some(ni) = AesNi::detect() else {
            return;
        };
        let pt = u128::from_le_bytes(
            *b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff",
        );
        let k0 = u128::from_le_bytes(
            *b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
        );
        // Round 1 key and the state after round 1 (FIPS-197 C.1, "round[ 1].k_sch" and
        // "round[ 2].start").
        let k1 = u128::from_le_bytes(0xd6aa74fdd2af72fadaa678f1d6ab76fe_u128.to_be_bytes());
        let want = u128::from_le_bytes(0x89d810e8855ace682d1843d8cb128fe4_u128.to_be_bytes());
        let s = ni.enc(m128i::from(pt ^ k0), m128i::from(k1));
        assert_eq!(u128::from(s), want);
        // AESKEYGENASSIST with rcon 1 on the cipher key gives RotWord(SubWord(w3)) ⊕ 1 in
        // word 3: w4 = w0 ⊕ that, and w4 is the first word of the round-1 key.
        let a: [u32; 4] = ni.key_gen_assist::<1>(m128i::from(k0)).into();
        let w0 = 0x0302_0100_u32;
        assert_eq!(w0 ^ a[3], (k1 as u32));
        // The last round differs from a full round only by MixColumns.
        assert_ne!(
            u128::from(ni.enc_last(m128i::from(pt), m128i::from(k0))),
            u128::from(ni.enc(m128i::from(pt), m128i::from(k0)))
        );
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod gfni_tests {
    use super::Gfni512;

    /// The AVX-512 transpose moves every bit (r, c) to (c, r), on single bits and on dense
    /// pseudo-random matrices (skipped on a CPU without the instructions).
    #[test]
    fn the_transpose_moves_every_bit() {
        let Some(g) = Gfni512::detect() else {
            return;
        };
        let naive = |m: &[u128; 128]| {
            let mut t = [0u128; 128];
            for (r, row) in m.iter().enumerate() {
                for (c, o) in t.iter_mut().enumerate() {
                    *o |= ((row >> c) & 1) << r;
                }
            }
            t
        };
        let mut out = [0u128; 128];
        for (r, c) in [(0, 0), (0, 127), (127, 0), (5, 77), (64, 63), (100, 9)] {
            let mut m = [0u128; 128];
            m[r] = 1 << c;
            g.transpose128(&m, &mut out);
            assert_eq!(out, naive(&m), "bit ({r}, {c})");
        }
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for _ in 0..20 {
            let m: [u128; 128] = core::array::from_fn(|_| {
                x = x
                    .wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15)
                    .wrapping_add(12345);
                x ^ (x >> 61)
            });
            g.transpose128(&m, &mut out);
            assert_eq!(out, naive(&m));
        }
    }
}
