//! The three parties C, D and E of FJKW15 §4 as types ([`C`], [`D`], [`E`]), the assignment of
//! them to session parties ([`Roles`]), and the one-round setup that gives every pair a shared
//! PRG seed.
//!
//! # Randomness
//! Each party has a local seed, all of its private randomness (in normal use from
//! [`Entropy::Os`], for tests from [`Entropy::InsecureSeed`]). Setup gives each pair a shared
//! seed: C picks the C–D seed and sends it to D, D picks the D–E seed for E, and E picks the
//! E–C seed for C (three messages, one round). FJKW15 §3: "all nonces derived via a PRG on a
//! seed shared by S and H", and "encryption overhead can be eliminated … using pairwise-shared
//! keys in PRG's and PRF's"; the pre-computation the paper has two parties "share" (PRF keys,
//! nonces, permutations, pads) is drawn from these pairwise PRGs, and needs no message.
//!
//! # Lockstep
//! Every sub-protocol instance takes one fresh 128-bit sub-seed from the PRG of each pair that
//! shares material in it, and both ends take it in the same call (e.g. SS-COT: E's
//! [`E::cot_send`](crate::ss_cot) and D's `cot_help`). Both ends of a pair must therefore run the
//! same instances in the same order; the sizes inside an instance do not matter.

use doram_core::{Entropy, PartyId, Seed};
use doram_prim::AesPrg;

use crate::error::Fjkw15Error;
use crate::msgs::{SeedCtoD, SeedDtoE, SeedEtoC};

/// One of the three parties of FJKW15 §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// C: the receiver in Access (it learns the next label), the sender of its share in
    /// Eviction.
    C,
    /// D: the helper in Access, PostProcess and Shift; the evaluator and indicator in Eviction.
    D,
    /// E: the sender in Access, the garbler in Eviction.
    E,
}

impl core::fmt::Display for Role {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Role::C => "C",
            Role::D => "D",
            Role::E => "E",
        })
    }
}

/// Which session party plays C, D and E.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roles {
    c: PartyId,
    d: PartyId,
    e: PartyId,
}

impl Default for Roles {
    /// C = P0, D = P1, E = P2.
    fn default() -> Roles {
        Roles {
            c: PartyId::P0,
            d: PartyId::P1,
            e: PartyId::P2,
        }
    }
}

impl Roles {
    /// C, D and E played by `c`, `d` and `e`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidRoles`] unless the three are distinct.
    pub fn new(c: PartyId, d: PartyId, e: PartyId) -> Result<Roles, Fjkw15Error> {
        if c == d || d == e || c == e {
            return Err(Fjkw15Error::InvalidRoles);
        }
        Ok(Roles { c, d, e })
    }

    /// The session party that plays `role`.
    pub fn party(&self, role: Role) -> PartyId {
        match role {
            Role::C => self.c,
            Role::D => self.d,
            Role::E => self.e,
        }
    }

    /// The role `party` plays, if any.
    pub fn role_of(&self, party: PartyId) -> Option<Role> {
        [Role::C, Role::D, Role::E]
            .into_iter()
            .find(|&r| self.party(r) == party)
    }
}

/// A fresh instance PRG from a pairwise PRG: one sub-seed per instance ([module docs](self)).
pub(crate) fn instance(pair: &mut AesPrg) -> AesPrg {
    AesPrg::new(pair.next_seed())
}

/// Defines one party type with its local PRG, its two pairwise PRGs and its setup round.
macro_rules! party {
    (
        $(#[$doc:meta])*
        $name:ident, $pending:ident, role: $role:expr,
        sends: $out:ident, receives: $in:ident,
        mine: $mine:ident, theirs: $theirs:ident
    ) => {
        $(#[$doc])*
        // Not every party reads every PRG yet: C's and E's local PRGs and the C–E PRG serve
        // Access (E's pad y), PostProcess and Eviction (π_j, ξ), which are not built yet.
        #[allow(dead_code)]
        pub struct $name {
            pub(crate) roles: Roles,
            pub(crate) local: AesPrg,
            pub(crate) $mine: AesPrg,
            pub(crate) $theirs: AesPrg,
        }

        /// The party after sending its setup seed, waiting for the one it receives.
        pub struct $pending {
            roles: Roles,
            local: AesPrg,
            $mine: AesPrg,
        }

        impl $name {
            /// Setup, first half: samples the pairwise seed this party picks (from `seed`, all
            /// of its randomness) and returns it as the message to send.
            pub fn setup_start(roles: Roles, seed: Seed) -> ($pending, $out) {
                let mut local = AesPrg::new(seed);
                let shared = local.next_seed();
                let pending = $pending {
                    roles,
                    local,
                    $mine: AesPrg::new(shared),
                };
                (pending, $out { seed: shared })
            }

            /// The role assignment.
            pub fn roles(&self) -> &Roles {
                &self.roles
            }

            /// This party's session id.
            pub fn me(&self) -> PartyId {
                self.roles.party($role)
            }
        }

        impl $pending {
            /// Setup, second half: keys the pairwise PRG with the seed received.
            pub fn finish(self, msg: $in) -> $name {
                $name {
                    roles: self.roles,
                    local: self.local,
                    $mine: self.$mine,
                    $theirs: AesPrg::new(msg.seed),
                }
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({}, ..)", stringify!($name), self.me())
            }
        }
    };
}

party!(
    /// Party C (FJKW15 §4): holds PRGs shared with D and with E.
    C, SetupC, role: Role::C, sends: SeedCtoD, receives: SeedEtoC, mine: with_d, theirs: with_e
);

party!(
    /// Party D (FJKW15 §4): holds PRGs shared with E and with C.
    D, SetupD, role: Role::D, sends: SeedDtoE, receives: SeedCtoD, mine: with_e, theirs: with_c
);

party!(
    /// Party E (FJKW15 §4): holds PRGs shared with C and with D.
    E, SetupE, role: Role::E, sends: SeedEtoC, receives: SeedDtoE, mine: with_c, theirs: with_d
);

/// Runs the setup of all three parties in one process, each seeded by
/// `entropy.party_seed(party, "fjkw15")`: for tests, examples and single-host benchmarks. The
/// setup messages pass in memory; with [`Entropy::Os`] each party's seed is still fresh and
/// private to it.
pub fn setup_in_process(roles: Roles, entropy: Entropy) -> (C, D, E) {
    let seed = |r: Role| entropy.party_seed(roles.party(r), "fjkw15");
    let (c, to_d) = C::setup_start(roles, seed(Role::C));
    let (d, to_e) = D::setup_start(roles, seed(Role::D));
    let (e, to_c) = E::setup_start(roles, seed(Role::E));
    (c.finish(to_c), d.finish(to_d), e.finish(to_e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn pairs_share_their_streams_and_only_theirs() {
        let (mut c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(3));
        assert_eq!(c.with_d.next_u128(), d.with_c.next_u128());
        assert_eq!(d.with_e.next_u128(), e.with_d.next_u128());
        assert_eq!(e.with_c.next_u128(), c.with_e.next_u128());
        assert_ne!(c.local.next_u128(), d.local.next_u128());
        assert_ne!(c.with_d.next_u128(), c.with_e.next_u128());
        assert_eq!(format!("{c:?}"), "C(P0, ..)");
        assert_eq!((d.me(), e.me()), (PartyId::P1, PartyId::P2));
    }

    #[test]
    fn roles_must_be_distinct() {
        use PartyId::*;
        assert!(Roles::new(P0, P0, P1).is_err());
        let r = Roles::new(P2, P0, P1).unwrap();
        assert_eq!(r.party(Role::C), P2);
        assert_eq!(r.role_of(P1), Some(Role::E));
        assert_eq!(r.role_of(P3), None);
    }
}
