//! The three roles' I/O-free states — [`KeyHolder`], [`Receiver1`], [`Receiver2`] — and the
//! round functions of the Init and KeyGen phases that create them (Ramen Fig. 9 and Fig. 22,
//! "KeyGen" and "Init"; both figures share them).
//!
//! The evaluation steps live next to their figure: [`crate::unmasked`] (Fig. 22) and
//! [`crate::masked`] (Fig. 9) add methods to these types.
//!
//! # Setup: Init and KeyGen in one round
//! * Ramen Fig. 9/22, Init: K samples the PRG seed k_{k,1} and sends it to R1; R1 samples
//!   k_{1,2} and sends it to R2. (The figures also have R2 send a seed k_{2,k} to K; neither
//!   protocol ever uses it, so it is not sent.)
//! * Ramen Fig. 9/22, KeyGen: R1 samples k_1 ← F_p^ℓ and R2 samples k_2 ← F_p^ℓ; both send
//!   them to K, which sets k := k_1 + k_2.
//!
//! All four messages are independent, so setup is a single round. KeyGen can be repeated on
//! its own ([`Receiver1::rekey`], [`Receiver2::rekey`], [`KeyHolder::rekey`]), e.g. once per
//! Ramen epoch (Fig. 6, Init step 1), keeping the PRG streams and the preprocessed material:
//! the preprocessing is independent of the key.
//!
//! # PRG streams
//! Each shared seed keys a master [`AesPrg`] from which two sub-seeds are drawn: one stream for
//! the unmasked protocol and one for the masked protocol, so that the two pools can be filled
//! in any interleaving (both ends of a stream still advance it in lockstep: the same
//! preprocessing calls with the same counts in the same order). The draws per evaluation are
//! listed in [`crate::unmasked`] and [`crate::masked`].

use doram_core::wire::PeerFault;
use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_prim::AesPrg;

use crate::error::DoprfError;
use crate::msgs::{KeyHolderSeed, KeyShare1, KeyShare2, ReceiverSeed, WireMessage};
use crate::params::{Mode, Params, Role, Roles};
use crate::pool::Pool;
use crate::prf::LegendreKey;

/// The unmasked and masked PRG streams of one shared seed.
pub(crate) struct Streams {
    pub(crate) unmasked: AesPrg,
    pub(crate) masked: AesPrg,
}

impl Streams {
    fn from_seed(seed: Seed) -> Streams {
        let mut master = AesPrg::new(seed);
        Streams {
            unmasked: AesPrg::new(master.next_seed()),
            masked: AesPrg::new(master.next_seed()),
        }
    }
}

/// A uniformly random non-zero element from `prg`: the squares s² must be non-zero, or the
/// product s²·(k + x) would lose the symbol (the failure case Ramen's correctness proof of
/// Theorem 7 notes; rejecting zero removes it at a cost of one extra draw with probability
/// 1/p).
pub(crate) fn nonzero(prg: &mut AesPrg) -> Fp {
    loop {
        let x: Fp = prg.random();
        if !x.is_zero() {
            return x;
        }
    }
}

/// Checks that `me` plays `role` under `roles` in a three-party session.
fn check_role(roles: &Roles, me: PartyId, role: Role) -> Result<(), DoprfError> {
    if roles.role_of(me) == Some(role) {
        Ok(())
    } else {
        Err(DoprfError::WrongRole { me, role })
    }
}

/// Checks a received message's shape; a wrong one is reported as coming from `peer`.
pub(crate) fn check_msg<M: WireMessage>(
    msg: &M,
    peer: PartyId,
    params: &Params,
    count: usize,
) -> Result<(), DoprfError> {
    if msg.well_formed(params, count) {
        Ok(())
    } else {
        Err(PeerFault::wrong_length(
            peer,
            M::WHAT,
            M::wire_len(params, count),
            msg.encode().len(),
        )
        .into())
    }
}

/// A fresh key share k_j ← F_p^ℓ.
fn key_share(params: &Params, rng: &mut AesPrg) -> Vec<Fp> {
    (0..params.bits()).map(|_| rng.random()).collect()
}

// -------------------------------------------------------------------------------------------
// K

/// The key holder K: the key k, the PRG streams shared with R1, and K's preprocessed material.
pub struct KeyHolder {
    pub(crate) params: Params,
    pub(crate) roles: Roles,
    pub(crate) key: LegendreKey,
    /// Shared with R1 (seed k_{k,1}).
    pub(crate) with_r1: Streams,
    /// Fig. 22: s∘s and c_1, ℓ elements each per evaluation.
    pub(crate) unmasked: Pool<2>,
    /// Fig. 9: a + m and z_1 = c_1 + a∘e, ℓ elements each per evaluation.
    pub(crate) masked: Pool<2>,
}

/// K after sending its Init seed, waiting for the KeyGen shares k_1 (from R1) and k_2 (from
/// R2).
pub struct AwaitingKeyShares {
    params: Params,
    roles: Roles,
    with_r1: Streams,
}

impl KeyHolder {
    /// Ramen Fig. 9/22, Init and KeyGen, at K: samples the seed k_{k,1} from `seed` (all of
    /// K's randomness) and returns it as the message to R1.
    ///
    /// # Errors
    /// [`DoprfError::WrongRole`] if `me` is not K under `roles`.
    pub fn setup_start(
        params: Params,
        roles: Roles,
        me: PartyId,
        seed: Seed,
    ) -> Result<(AwaitingKeyShares, KeyHolderSeed), DoprfError> {
        check_role(&roles, me, Role::KeyHolder)?;
        let mut local = AesPrg::new(seed);
        // [Ramen Fig. 9/22, Init] K samples k_{k,1} and sends it to R1.
        let k_k1 = local.next_seed();
        let pending = AwaitingKeyShares {
            params,
            roles,
            with_r1: Streams::from_seed(k_k1),
        };
        Ok((pending, KeyHolderSeed { seed: k_k1 }))
    }

    /// Ramen Fig. 9/22, KeyGen at K, again: replaces the key by k_1 + k_2 from fresh shares
    /// ([`Receiver1::rekey`], [`Receiver2::rekey`]). Preprocessed material is kept.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming the sender if a share does not have ℓ elements.
    pub fn rekey(&mut self, k1: KeyShare1, k2: KeyShare2) -> Result<(), DoprfError> {
        self.key = combine_key(&self.params, &self.roles, &k1, &k2)?;
        Ok(())
    }

    /// The key k (K's own secret; Ramen Fig. 6, Init step 2 has K hand it to R1, and K
    /// evaluates the PRF on the whole domain with it in Init step 3).
    pub fn key(&self) -> &LegendreKey {
        &self.key
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The role assignment.
    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    /// Preprocessed evaluations not yet used, per mode.
    pub fn available(&self, mode: Mode) -> usize {
        match mode {
            Mode::Unmasked => self.unmasked.available(),
            Mode::Masked => self.masked.available(),
        }
    }
}

/// [Ramen Fig. 9/22, KeyGen] K sets k := k_1 + k_2.
fn combine_key(
    params: &Params,
    roles: &Roles,
    k1: &KeyShare1,
    k2: &KeyShare2,
) -> Result<LegendreKey, DoprfError> {
    check_msg(k1, roles.r1(), params, 0)?;
    check_msg(k2, roles.r2(), params, 0)?;
    Ok(LegendreKey::sum(&k1.k1, &k2.k2))
}

impl AwaitingKeyShares {
    /// Ramen Fig. 9/22, KeyGen: K sets k := k_1 + k_2; setup is complete.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming the sender if a share does not have ℓ elements.
    pub fn finish(self, k1: KeyShare1, k2: KeyShare2) -> Result<KeyHolder, DoprfError> {
        let key = combine_key(&self.params, &self.roles, &k1, &k2)?;
        let l = self.params.bits();
        Ok(KeyHolder {
            params: self.params,
            roles: self.roles,
            key,
            with_r1: self.with_r1,
            unmasked: Pool::new(Mode::Unmasked, [l, l], false),
            masked: Pool::new(Mode::Masked, [l, l], false),
        })
    }
}

// -------------------------------------------------------------------------------------------
// R1

/// The receiver R1: the PRG streams shared with K and with R2, a local PRG, and R1's
/// preprocessed material.
pub struct Receiver1 {
    pub(crate) params: Params,
    pub(crate) roles: Roles,
    pub(crate) local: AesPrg,
    /// Shared with K (seed k_{k,1}).
    pub(crate) with_k: Streams,
    /// Shared with R2 (seed k_{1,2}).
    pub(crate) with_r2: Streams,
    /// Fig. 22: m, one element per evaluation.
    pub(crate) unmasked: Pool<1>,
    /// Fig. 9: m, one element per evaluation, and the mask r.
    pub(crate) masked: Pool<1>,
}

/// R1 after sending its Init seed and key share, waiting for K's seed k_{k,1}.
pub struct AwaitingKeyHolderSeed {
    params: Params,
    roles: Roles,
    local: AesPrg,
    with_r2: Streams,
}

impl Receiver1 {
    /// Ramen Fig. 9/22, Init and KeyGen, at R1: samples the seed k_{1,2} (for R2) and the key
    /// share k_1 (for K) from `seed` (all of R1's randomness).
    ///
    /// # Errors
    /// [`DoprfError::WrongRole`] if `me` is not R1 under `roles`.
    pub fn setup_start(
        params: Params,
        roles: Roles,
        me: PartyId,
        seed: Seed,
    ) -> Result<(AwaitingKeyHolderSeed, ReceiverSeed, KeyShare1), DoprfError> {
        check_role(&roles, me, Role::R1)?;
        let mut local = AesPrg::new(seed);
        // [Ramen Fig. 9/22, Init] R1 samples k_{1,2} and sends it to R2.
        let k_12 = local.next_seed();
        // [Ramen Fig. 9/22, KeyGen] R1 samples k_1 ← F_p^ℓ and sends it to K.
        let k1 = key_share(&params, &mut local);
        let pending = AwaitingKeyHolderSeed {
            params,
            roles,
            local,
            with_r2: Streams::from_seed(k_12),
        };
        Ok((pending, ReceiverSeed { seed: k_12 }, KeyShare1 { k1 }))
    }

    /// Ramen Fig. 9/22, KeyGen at R1, again: a fresh key share k_1 for K.
    pub fn rekey(&mut self) -> KeyShare1 {
        KeyShare1 {
            k1: key_share(&self.params, &mut self.local),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The role assignment.
    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    /// Preprocessed evaluations not yet used, per mode.
    pub fn available(&self, mode: Mode) -> usize {
        match mode {
            Mode::Unmasked => self.unmasked.available(),
            Mode::Masked => self.masked.available(),
        }
    }
}

impl AwaitingKeyHolderSeed {
    /// Ramen Fig. 9/22, Init: R1 receives k_{k,1}; setup is complete.
    pub fn finish(self, seed: KeyHolderSeed) -> Receiver1 {
        Receiver1 {
            params: self.params,
            roles: self.roles,
            local: self.local,
            with_k: Streams::from_seed(seed.seed),
            with_r2: self.with_r2,
            unmasked: Pool::new(Mode::Unmasked, [1], false),
            masked: Pool::new(Mode::Masked, [1], true),
        }
    }
}

// -------------------------------------------------------------------------------------------
// R2

/// The receiver R2: the PRG streams shared with R1, a local PRG, and R2's preprocessed
/// material.
pub struct Receiver2 {
    pub(crate) params: Params,
    pub(crate) roles: Roles,
    pub(crate) local: AesPrg,
    /// Shared with R1 (seed k_{1,2}).
    pub(crate) with_r1: Streams,
    /// Fig. 22: m + b (one element) and b·d + c_3 (ℓ elements) per evaluation.
    pub(crate) unmasked: Pool<2>,
    /// Fig. 9: t and c_3 (ℓ elements each) per evaluation, and the mask r.
    pub(crate) masked: Pool<2>,
}

/// R2 after sending its key share, waiting for R1's seed k_{1,2}.
pub struct AwaitingReceiverSeed {
    params: Params,
    roles: Roles,
    local: AesPrg,
}

impl Receiver2 {
    /// Ramen Fig. 9/22, KeyGen at R2: samples the key share k_2 (for K) from `seed` (all of
    /// R2's randomness).
    ///
    /// # Errors
    /// [`DoprfError::WrongRole`] if `me` is not R2 under `roles`.
    pub fn setup_start(
        params: Params,
        roles: Roles,
        me: PartyId,
        seed: Seed,
    ) -> Result<(AwaitingReceiverSeed, KeyShare2), DoprfError> {
        check_role(&roles, me, Role::R2)?;
        let mut local = AesPrg::new(seed);
        // [Ramen Fig. 9/22, KeyGen] R2 samples k_2 ← F_p^ℓ and sends it to K.
        let k2 = key_share(&params, &mut local);
        let pending = AwaitingReceiverSeed {
            params,
            roles,
            local,
        };
        Ok((pending, KeyShare2 { k2 }))
    }

    /// Ramen Fig. 9/22, KeyGen at R2, again: a fresh key share k_2 for K.
    pub fn rekey(&mut self) -> KeyShare2 {
        KeyShare2 {
            k2: key_share(&self.params, &mut self.local),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The role assignment.
    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    /// Preprocessed evaluations not yet used, per mode.
    pub fn available(&self, mode: Mode) -> usize {
        match mode {
            Mode::Unmasked => self.unmasked.available(),
            Mode::Masked => self.masked.available(),
        }
    }
}

impl AwaitingReceiverSeed {
    /// Ramen Fig. 9/22, Init: R2 receives k_{1,2}; setup is complete.
    pub fn finish(self, seed: ReceiverSeed) -> Receiver2 {
        let l = self.params.bits();
        Receiver2 {
            params: self.params,
            roles: self.roles,
            local: self.local,
            with_r1: Streams::from_seed(seed.seed),
            unmasked: Pool::new(Mode::Unmasked, [1, l], false),
            masked: Pool::new(Mode::Masked, [l, l], true),
        }
    }
}

// Secrets everywhere: print the public parts only.
macro_rules! redacted_debug {
    ($($ty:ident),*) => {$(
        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("params", &self.params)
                    .field("roles", &self.roles)
                    .finish_non_exhaustive()
            }
        }
    )*};
}
redacted_debug!(
    KeyHolder,
    Receiver1,
    Receiver2,
    AwaitingKeyShares,
    AwaitingKeyHolderSeed,
    AwaitingReceiverSeed
);
