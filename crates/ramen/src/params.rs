//! Public parameters of one Ramen instance ([`Params`]): memory size n, stash size s = round(√n),
//! memory with dummies m = n + s, epoch length s, and the output lengths of the two Legendre
//! PRFs (memory tags and stash tags).
//!
//! # How many PRF bits the memory tags need
//!
//! Ramen (§4.5, "Collision Resistance") needs the tags PRF(k_i, j), j ∈ \[m\], of one epoch to be
//! pairwise distinct: a collision would make two memory cells indistinguishable to the party
//! that looks them up (Fig. 6, Access step 2(c)). The reference implementation uses
//! ℓ = 2·⌈log2 m⌉ + 40 bits, which bounds the collision probability by the birthday bound
//! m²/2^(ℓ+1) < 2^−40 and makes a collision a correctness failure with statistical probability.
//!
//! Fewer bits are safe here because the key holder of each memory key can *detect* a collision:
//! it computes all m tags itself (Fig. 6, Init step 3) and, if two coincide, discards the key and
//! draws a fresh one (see [`crate::tags`]). Nothing else changes:
//! * correctness: every key in use has m distinct tags, with certainty;
//! * security: the key in use is uniform among the keys without collision, and the tags are the
//!   outputs of a (pseudo)random *injective* function on \[m\] — exactly the distribution the
//!   simulator of Ramen's Theorem 3 samples ("sample without replacement a list L_2", Fig. 15,
//!   Init step 3). Each output bit is an independent Legendre PRF instance with its own key
//!   element, so the number of bits does not affect the PRF's security, only the collision
//!   probability. Whether a key was redrawn depends on the key alone (never on data), and the
//!   only party that sees it is the key holder, which knows the key anyway;
//! * cost: a redraw repeats the m·ℓ Legendre symbols of one key. With
//!   ℓ = ⌈log2 m²⌉ + [`TAG_SLACK_BITS`] a redraw happens with probability below
//!   m²/2^(ℓ+1) ≤ 2^−9, so it costs 0.2 % on average.
//!
//! So [`Params::new`] uses ℓ = ⌈log2 m²⌉ + 8 (41 bits for n = 2^16, against the reference's
//! 74), which cuts the dominant cost of Ramen — the m·ℓ Legendre symbols per key and epoch —
//! by 45 %, and keeps tags within a `u64` up to n = 2^27. [`Params::with_tag_bits`] selects any
//! other length up to 64 bits (e.g. the reference's, when it fits).
//!
//! # Stash tags
//! The stash key k_stash (Ramen Fig. 4, step 1) cannot use the same trick: its key holder never
//! sees the addresses it is evaluated on. Its tags must be distinct among the ≤ 2s addresses of
//! one epoch (the s queried addresses of Fig. 4 and the s addresses read from memory in Fig. 5),
//! about s² pairs, so ℓ_stash = 2·⌈log2 s⌉ + 40 bounds the failure probability per epoch by
//! 2^−40. The flag lookup of Fig. 4, step 4 uses a DPF on the domain {0, 1}^ℓ_stash, and the
//! DPFs of `doram-dpf` support domains of up to 2^62 points, so ℓ_stash is capped at
//! [`MAX_STASH_TAG_BITS`] = 62: for n ≥ 2^21 the bound degrades to s²/2^62 (2^−38 at n = 2^24).

use crate::error::RamenError;

/// The statistical security parameter `stat` of Ramen §4.5.
pub const STAT_SEC: u32 = 40;

/// Bits added to ⌈log2 m²⌉ for the memory tags: a key is redrawn with probability below 2^−9.
pub const TAG_SLACK_BITS: u32 = 8;

/// The smallest memory Ramen is defined for here (the stash needs at least 4 slots).
pub const MIN_N: usize = 16;

/// The largest memory: tags must fit into 64 bits and positions into 32.
pub const MAX_N: usize = 1 << 27;

/// The largest stash-tag length: the largest DPF domain of `doram-dpf` is 2^62.
pub const MAX_STASH_TAG_BITS: u32 = 62;

/// The largest memory-tag length: tags are `u64`.
pub const MAX_TAG_BITS: u32 = 64;

/// Public parameters of a Ramen instance. All three parties must use equal parameters (the
/// thread count excepted: it is local and only affects speed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    n: usize,
    stash: usize,
    tag_bits: u32,
    stash_tag_bits: u32,
    threads: usize,
}

/// ⌈log2 x⌉ for x ≥ 1.
pub(crate) fn ceil_log2(x: u128) -> u32 {
    if x <= 1 {
        0
    } else {
        u128::BITS - (x - 1).leading_zeros()
    }
}

/// round(√n) for n ≥ 1: the integer r minimising |r − √n| (ties cannot occur for integers n).
fn round_sqrt(n: usize) -> usize {
    // Integer square root, then round: r = ⌊√n⌋ rounds up iff n > r² + r (since (r + ½)² =
    // r² + r + ¼).
    let mut r = (n as f64).sqrt() as usize;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    if n > r * r + r { r + 1 } else { r }
}

impl Params {
    /// The parameters for a memory of `n` words: s = round(√n), m = n + s, epochs of s
    /// accesses, ℓ = ⌈log2 m²⌉ + [`TAG_SLACK_BITS`] bits for memory tags (see the
    /// [module docs](self) for why this suffices), ℓ_stash = min(2⌈log2 s⌉ + 40, 62), one
    /// thread.
    ///
    /// # Errors
    /// [`RamenError::InvalidParams`] unless [`MIN_N`] ≤ n ≤ [`MAX_N`].
    pub fn new(n: usize) -> Result<Params, RamenError> {
        if n < MIN_N {
            return Err(RamenError::InvalidParams(
                "Ramen needs a memory of at least 16 words",
            ));
        }
        if n > MAX_N {
            return Err(RamenError::InvalidParams(
                "Ramen supports memories of up to 2^27 words",
            ));
        }
        let stash = round_sqrt(n);
        let m = (n + stash) as u128;
        let tag_bits = ceil_log2(m * m) + TAG_SLACK_BITS;
        let stash_tag_bits = (2 * ceil_log2(stash as u128) + STAT_SEC).min(MAX_STASH_TAG_BITS);
        Ok(Params {
            n,
            stash,
            tag_bits,
            stash_tag_bits,
            threads: 1,
        })
    }

    /// The same parameters with memory tags of `bits` bits.
    ///
    /// # Errors
    /// [`RamenError::InvalidParams`] if `bits` exceeds 64, or is so small that a key would have
    /// to be redrawn more often than not (below ⌈log2 m²⌉).
    pub fn with_tag_bits(self, bits: u32) -> Result<Params, RamenError> {
        let m = self.memory() as u128;
        if bits > MAX_TAG_BITS {
            return Err(RamenError::InvalidParams(
                "memory tags have at most 64 bits",
            ));
        }
        if bits < ceil_log2(m * m) {
            return Err(RamenError::InvalidParams(
                "memory tags need at least ⌈log2 m²⌉ bits (else most keys collide)",
            ));
        }
        Ok(Params {
            tag_bits: bits,
            ..self
        })
    }

    /// The reference implementation's memory-tag length 2·⌈log2 m⌉ + 40, if it fits in 64 bits.
    pub fn reference_tag_bits(&self) -> u32 {
        2 * ceil_log2(self.memory() as u128) + STAT_SEC
    }

    /// The same parameters with the input-independent preprocessing (Legendre tags, position
    /// maps, p-OT vectors) spread over `threads` threads (0 is treated as 1).
    #[must_use]
    pub fn with_threads(self, threads: usize) -> Params {
        Params {
            threads: threads.max(1),
            ..self
        }
    }

    /// The number of words n.
    pub const fn n(&self) -> usize {
        self.n
    }

    /// The stash size s = round(√n): the number of accesses per epoch.
    pub const fn stash(&self) -> usize {
        self.stash
    }

    /// The epoch length: s accesses, then the stash is written back (Ramen Fig. 14, step 6).
    pub const fn epoch(&self) -> usize {
        self.stash
    }

    /// The memory size with the dummy cells, m = n + s.
    pub const fn memory(&self) -> usize {
        self.n + self.stash
    }

    /// ℓ: bits of a memory tag PRF(k_i, j).
    pub const fn tag_bits(&self) -> u32 {
        self.tag_bits
    }

    /// ℓ_stash: bits of a stash tag PRF(k_stash, adr).
    pub const fn stash_tag_bits(&self) -> u32 {
        self.stash_tag_bits
    }

    /// Threads for the preprocessing.
    pub const fn threads(&self) -> usize {
        self.threads
    }

    /// The largest message any party of an instance with these parameters sends, in bytes
    /// ([`msgs::max_message_bytes`](crate::msgs::max_message_bytes)): the frame limit a
    /// session running only this instance needs.
    pub fn max_message_bytes(&self) -> usize {
        crate::msgs::max_message_bytes(self)
    }

    /// Bits of a position in [0, m): ⌈log2 m⌉.
    pub fn position_bits(&self) -> u32 {
        ceil_log2(self.memory() as u128).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let p = Params::new(16).unwrap();
        assert_eq!((p.stash(), p.memory(), p.epoch()), (4, 20, 4));
        let p = Params::new(17).unwrap();
        assert_eq!(p.stash(), 4);
        let p = Params::new(1000).unwrap();
        assert_eq!((p.stash(), p.memory()), (32, 1032));
        let p = Params::new(1 << 16).unwrap();
        assert_eq!((p.stash(), p.memory()), (256, 65_792));
        // m² = 65792² ≈ 2^32.01 → 33 bits, plus 8.
        assert_eq!(p.tag_bits(), 41);
        assert_eq!(p.reference_tag_bits(), 74);
        assert_eq!(p.stash_tag_bits(), 56);
        assert_eq!(Params::new(1 << 20).unwrap().tag_bits(), 49);
        assert_eq!(Params::new(1 << 24).unwrap().tag_bits(), 57);
        assert_eq!(Params::new(1 << 24).unwrap().stash_tag_bits(), 62);
        assert_eq!(Params::new(MAX_N).unwrap().tag_bits(), 63);
        assert!(Params::new(15).is_err());
        assert!(Params::new(MAX_N + 1).is_err());
        assert!(p.with_tag_bits(65).is_err());
        assert!(p.with_tag_bits(32).is_err());
        assert_eq!(p.with_tag_bits(64).unwrap().tag_bits(), 64);
        assert_eq!(p.with_threads(0).threads(), 1);
    }

    #[test]
    fn rounding() {
        for (n, r) in [
            (16, 4),
            (20, 4),
            (21, 5),
            (30, 5),
            (31, 6),
            (1000, 32),
            (1024, 32),
        ] {
            assert_eq!(round_sqrt(n), r, "n = {n}");
        }
        for n in 16..5000usize {
            let r = round_sqrt(n) as f64;
            let s = (n as f64).sqrt();
            assert!((r - s).abs() <= 0.5, "n = {n}");
        }
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(2), 1);
        assert_eq!(ceil_log2(5), 3);
        assert_eq!(ceil_log2(1 << 40), 40);
    }
}
