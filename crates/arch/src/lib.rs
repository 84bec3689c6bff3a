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
