//! Party roles as types: the two primaries P0 and P1, which hold the memory shares, and the
//! helper P2, which holds the blinds and assists (Duoram §3: "Parties P0 and P1 are the two
//! primary parties. P2 is the helper party").

use doram_core::PartyId;

/// One of the two primary parties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// P0: holds D0, D̃1, ζ0 and adds its DPF outputs.
    Zero,
    /// P1: holds D1, D̃0, ζ1 and negates its DPF outputs (§4.1.1).
    One,
}

/// A party's role in 3P-Duoram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// P0 or P1.
    Primary(Side),
    /// P2.
    Helper,
}

impl Side {
    /// The session party.
    pub const fn party(self) -> PartyId {
        match self {
            Side::Zero => PartyId::P0,
            Side::One => PartyId::P1,
        }
    }

    /// The other primary.
    pub const fn other(self) -> Side {
        match self {
            Side::Zero => Side::One,
            Side::One => Side::Zero,
        }
    }

    /// 0 for P0, 1 for P1.
    pub const fn index(self) -> usize {
        match self {
            Side::Zero => 0,
            Side::One => 1,
        }
    }

    /// Which of the three DPFs of a triple (0-based: DPF #1 is 0) refreshes this party's blind
    /// ζ_b and whose half this party sends to P2: DPF #2 for P0, DPF #3 for P1 (Duoram
    /// Protocol 1, step 2).
    pub const fn blind_dpf(self) -> usize {
        match self {
            Side::Zero => 1,
            Side::One => 2,
        }
    }

    /// The low bit of this party's DPF roots: 0 at P0, 1 at P1, so that the two roots differ
    /// in it (App. C, setup).
    pub const fn root_lsb(self) -> bool {
        match self {
            Side::Zero => false,
            Side::One => true,
        }
    }

    /// `w` at P0, `−w` at P1: P1 negates its DPF outputs (§4.1.1).
    pub fn sign<W: core::ops::Neg<Output = W>>(self, w: W) -> W {
        match self {
            Side::Zero => w,
            Side::One => -w,
        }
    }

    /// This party's AND input from its path bit a_b (App. A): the AND computes (1 ⊕ α)·Δ with
    /// α = a_0 ⊕ a_1, so x_0 = 1 ⊕ a_0 and x_1 = a_1.
    pub const fn and_input(self, path_bit: bool) -> bool {
        match self {
            Side::Zero => !path_bit,
            Side::One => path_bit,
        }
    }

    /// Which of a DPF's three bilinear products carries this party's ρ_b (App. A): P0 inputs
    /// (u_0, u_0, ρ_0·u_0), P1 (u_1, ρ_1·u_1, u_1).
    pub const fn scaled_product(self) -> usize {
        match self {
            Side::Zero => 2,
            Side::One => 1,
        }
    }

    /// The DPF this party pairs with its blind in READ and adds to the blinded share D̃_{1−b} in
    /// UPDATE: DPF #3 for P0, DPF #2 for P1 (the other primary's blind DPF).
    pub const fn cross_dpf(self) -> usize {
        self.other().blind_dpf()
    }
}

impl Role {
    /// The role of a session party (`None` for a fourth party).
    pub const fn of(party: PartyId) -> Option<Role> {
        match party {
            PartyId::P0 => Some(Role::Primary(Side::Zero)),
            PartyId::P1 => Some(Role::Primary(Side::One)),
            PartyId::P2 => Some(Role::Helper),
            PartyId::P3 => None,
        }
    }

    /// The session party.
    pub const fn party(self) -> PartyId {
        match self {
            Role::Primary(s) => s.party(),
            Role::Helper => PartyId::P2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles() {
        for p in [PartyId::P0, PartyId::P1, PartyId::P2] {
            assert_eq!(Role::of(p).map(Role::party), Some(p));
        }
        assert_eq!(Role::of(PartyId::P3), None);
        assert_eq!(Side::Zero.blind_dpf(), 1);
        assert_eq!(Side::Zero.cross_dpf(), 2);
        assert_eq!(Side::One.blind_dpf(), 2);
        assert_eq!(Side::One.cross_dpf(), 1);
        assert_eq!(Side::One.other().party(), PartyId::P0);
    }
}
