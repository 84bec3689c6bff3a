//! Parameters ([`Params`]: the output length ℓ and a thread count) and the assignment of the
//! three roles of Ramen Fig. 8 to session parties ([`Roles`]).

use core::fmt;

use doram_core::PartyId;
use doram_field::Fp;

use crate::error::DoprfError;

/// The statistical security parameter `stat` of Ramen §4.5 ("Collision Resistance").
pub const STAT_SEC: usize = 40;

/// The largest supported output length ℓ: outputs are `u128` bit strings.
///
/// ℓ = 2·⌈log2 m⌉ + 40 stays within 128 bits for domains of up to m = 2^44 elements.
pub const MAX_BITS: usize = 128;

/// The fixed quadratic non-residue α of Ramen Fig. 9, Init: 7, which generates F_p^*.
///
/// Ramen §4.5: "α can be reused in all Π^m_DOPRF instantiations as it is always masked by s,
/// which is sampled freshly in each instantiation".
pub const ALPHA: Fp = Fp::GENERATOR;

/// The smallest number of Legendre symbols worth a parallel chunk (about a quarter of a
/// millisecond of work, against a few microseconds to hand a chunk to a rayon worker): smaller
/// batches stay on the calling thread even when more threads are allowed.
pub const MIN_SYMBOLS_PER_THREAD: usize = 1024;

/// Public parameters of one DOPRF instance.
///
/// All three parties must use the same [`bits`](Params::bits); the thread count is local and
/// only affects speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    bits: usize,
    threads: usize,
}

impl Params {
    /// An output length of ℓ = `bits` (1 ≤ ℓ ≤ [`MAX_BITS`]), evaluated on one thread.
    ///
    /// # Errors
    /// [`DoprfError::InvalidParams`] if `bits` is 0 or above [`MAX_BITS`].
    pub fn new(bits: usize) -> Result<Params, DoprfError> {
        if bits == 0 {
            return Err(DoprfError::InvalidParams(
                "the output length ℓ must be at least 1",
            ));
        }
        if bits > MAX_BITS {
            return Err(DoprfError::InvalidParams(
                "the output length ℓ is at most 128 bits",
            ));
        }
        Ok(Params { bits, threads: 1 })
    }

    /// The output length for tags of a domain of `m` elements: ℓ = 2·⌈log2 m⌉ + [`STAT_SEC`].
    ///
    /// For m distinct inputs the probability that two tags collide is at most
    /// m²/2^(ℓ+1) < 2^−40 (birthday bound; Ramen §4.5 writes log2 m + stat, which bounds the
    /// collision probability of one fixed pair only). In Ramen's memory m = n + √n; for the
    /// stash list the domain is the √n addresses of one epoch.
    ///
    /// # Errors
    /// [`DoprfError::InvalidParams`] if ℓ would exceed [`MAX_BITS`] (m > 2^44).
    pub fn for_domain(m: u64) -> Result<Params, DoprfError> {
        Params::new(2 * ceil_log2(m) + STAT_SEC)
    }

    /// The same parameters with Legendre-symbol batches split into up to `threads` parallel
    /// chunks on the ambient rayon pool (0 is treated as 1). Batches below
    /// [`MIN_SYMBOLS_PER_THREAD`] symbols per chunk use fewer chunks.
    #[must_use]
    pub fn with_threads(self, threads: usize) -> Params {
        Params {
            threads: threads.max(1),
            ..self
        }
    }

    /// The output length ℓ in bits.
    pub const fn bits(&self) -> usize {
        self.bits
    }

    /// The thread count for Legendre-symbol batches.
    pub const fn threads(&self) -> usize {
        self.threads
    }

    /// The `u128` with the low ℓ bits set: every output lies below it.
    pub const fn output_mask(&self) -> u128 {
        if self.bits == MAX_BITS {
            u128::MAX
        } else {
            (1u128 << self.bits) - 1
        }
    }

    /// Bytes of one ℓ-bit string on the wire (the masks r of Ramen Fig. 9, step 3).
    pub const fn bit_string_bytes(&self) -> usize {
        self.bits.div_ceil(8)
    }
}

/// ⌈log2 m⌉ (0 for m ≤ 1).
fn ceil_log2(m: u64) -> usize {
    if m <= 1 {
        0
    } else {
        (u64::BITS - (m - 1).leading_zeros()) as usize
    }
}

/// A role of Ramen Fig. 8/9/22: the key holder K and the receivers R1 and R2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// K: holds the key k; in the masked mode it learns PRF(k, x) ⊕ r.
    KeyHolder,
    /// R1: shares PRG seeds with K and with R2; in the masked mode it learns r.
    R1,
    /// R2: in the unmasked mode it learns PRF(k, x); in the masked mode it learns r.
    R2,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::KeyHolder => "K",
            Role::R1 => "R1",
            Role::R2 => "R2",
        })
    }
}

/// Which session party plays which role in one DOPRF instance (three distinct parties among
/// `P0`, `P1`, `P2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roles {
    key_holder: PartyId,
    r1: PartyId,
    r2: PartyId,
}

impl Roles {
    /// K = `key_holder`, R1 = `r1`, R2 = `r2`.
    ///
    /// # Errors
    /// [`DoprfError::InvalidRoles`] unless the three are distinct parties of a three-party
    /// session.
    pub fn new(key_holder: PartyId, r1: PartyId, r2: PartyId) -> Result<Roles, DoprfError> {
        let all = [key_holder, r1, r2];
        if all.iter().any(|p| p.index() >= 3) {
            return Err(DoprfError::InvalidRoles(
                "roles must be played by P0, P1 or P2",
            ));
        }
        if key_holder == r1 || key_holder == r2 || r1 == r2 {
            return Err(DoprfError::InvalidRoles(
                "K, R1 and R2 must be distinct parties",
            ));
        }
        Ok(Roles { key_holder, r1, r2 })
    }

    /// The instance of Ramen Fig. 6 (Π_r-M) whose key `key_holder` holds.
    ///
    /// Fig. 6, Access step 2(a): for i ∈ {1, 2, 3}, P_{i−1} acts as K with key k_i and P_i acts
    /// as R2 (it learns adr' = PRF(k_i, adr)); the remaining party P_{i+1} is R1. So K's
    /// successor is R2 and its predecessor is R1. (Fig. 6, Init step 2 also hands k_i to
    /// P_{i+1} = R1, which receives no message in either protocol; P_i = R2 must never learn
    /// it.) In Ramen every party is K of exactly one of these three instances.
    ///
    /// # Errors
    /// [`DoprfError::InvalidRoles`] if `key_holder` is not P0, P1 or P2.
    pub fn ramen_memory(key_holder: PartyId) -> Result<Roles, DoprfError> {
        Roles::new(key_holder, key_holder.prev(3), key_holder.next(3))
    }

    /// The stash instance of Ramen Fig. 4, step 1: P_1 acts as K (key k_stash), P_2 and P_3
    /// as R1 and R2; with our zero-based ids K = P0, R1 = P1, R2 = P2.
    ///
    /// Fig. 5, step 1 calls P_2 "R_2" for the unmasked evaluation of the same key; the
    /// assignment is fixed once, at KeyGen (Fig. 4, step 1), and the value reaches both
    /// receivers either way (Fig. 5, step 2 forwards it), so this follows Fig. 4.
    pub fn ramen_stash() -> Roles {
        Roles {
            key_holder: PartyId::P0,
            r1: PartyId::P1,
            r2: PartyId::P2,
        }
    }

    /// All six assignments of the roles to P0, P1, P2.
    pub fn all() -> [Roles; 6] {
        use PartyId::{P0, P1, P2};
        [
            (P0, P1, P2),
            (P0, P2, P1),
            (P1, P0, P2),
            (P1, P2, P0),
            (P2, P0, P1),
            (P2, P1, P0),
        ]
        .map(|(key_holder, r1, r2)| Roles { key_holder, r1, r2 })
    }

    /// The party playing `role`.
    pub const fn party(&self, role: Role) -> PartyId {
        match role {
            Role::KeyHolder => self.key_holder,
            Role::R1 => self.r1,
            Role::R2 => self.r2,
        }
    }

    /// K.
    pub const fn key_holder(&self) -> PartyId {
        self.key_holder
    }

    /// R1.
    pub const fn r1(&self) -> PartyId {
        self.r1
    }

    /// R2.
    pub const fn r2(&self) -> PartyId {
        self.r2
    }

    /// The role `party` plays, if it plays one.
    pub fn role_of(&self, party: PartyId) -> Option<Role> {
        [Role::KeyHolder, Role::R1, Role::R2]
            .into_iter()
            .find(|&r| self.party(r) == party)
    }
}

impl fmt::Display for Roles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "K = {}, R1 = {}, R2 = {}",
            self.key_holder, self.r1, self.r2
        )
    }
}

/// The two evaluation types of Ramen Fig. 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// R2 learns PRF(k, x) (Fig. 22).
    Unmasked,
    /// K learns PRF(k, x) ⊕ r, R1 and R2 learn r (Fig. 9).
    Masked,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Unmasked => "unmasked",
            Mode::Masked => "masked",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_bounds() {
        assert!(Params::new(0).is_err());
        assert!(Params::new(129).is_err());
        assert_eq!(Params::new(128).unwrap().output_mask(), u128::MAX);
        assert_eq!(Params::new(80).unwrap().output_mask(), (1 << 80) - 1);
        assert_eq!(Params::new(80).unwrap().bit_string_bytes(), 10);
        assert_eq!(Params::new(81).unwrap().bit_string_bytes(), 11);
        assert_eq!(Params::new(8).unwrap().with_threads(0).threads(), 1);
    }

    #[test]
    fn domain_sizes() {
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(2), 1);
        assert_eq!(ceil_log2(1024), 10);
        assert_eq!(ceil_log2(1025), 11);
        // n = 2^16, m = n + √n = 65792 → ⌈log2 m⌉ = 17.
        assert_eq!(Params::for_domain(65_792).unwrap().bits(), 74);
        assert_eq!(Params::for_domain(1 << 44).unwrap().bits(), 128);
        assert!(Params::for_domain((1 << 44) + 1).is_err());
    }

    #[test]
    fn ramen_assignments() {
        use PartyId::{P0, P1, P2};
        let r = Roles::ramen_memory(P1).unwrap();
        assert_eq!((r.key_holder(), r.r1(), r.r2()), (P1, P0, P2));
        let r = Roles::ramen_memory(P0).unwrap();
        assert_eq!((r.key_holder(), r.r1(), r.r2()), (P0, P2, P1));
        assert!(Roles::ramen_memory(PartyId::P3).is_err());
        let s = Roles::ramen_stash();
        assert_eq!(s.role_of(P0), Some(Role::KeyHolder));
        assert_eq!(s.role_of(P2), Some(Role::R2));
        assert_eq!(s.role_of(PartyId::P3), None);
        assert!(Roles::new(P0, P0, P1).is_err());
        // Every party is K of exactly one memory instance.
        let ks: Vec<_> = [P0, P1, P2]
            .map(|p| Roles::ramen_memory(p).unwrap().key_holder())
            .into();
        assert_eq!(ks, vec![P0, P1, P2]);
        let all = Roles::all();
        for (i, a) in all.iter().enumerate() {
            assert!(Roles::new(a.key_holder(), a.r1(), a.r2()).is_ok());
            assert!(all[..i].iter().all(|b| b != a));
        }
    }

    #[test]
    fn alpha_is_a_non_residue() {
        assert_eq!(ALPHA.legendre(), -1);
    }
}
