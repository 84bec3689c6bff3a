//! The messages of the FJKW15 sub-protocols: one type per arrow, each with its exact size.
//!
//! On the wire a message is raw bytes with no length prefix and no tag: bit strings as
//! [`Strings`] lays them out, κ-bit PRF values as 16 little-endian bytes, indices as 4
//! little-endian bytes. The receiver computes the exact length from the public parameters of
//! the instance ([`WireMessage::wire_len`]) and [`receive`] rejects anything else, a set
//! padding bit or an index out of range as a [`PeerFault`] naming the sender. Sizes depend on
//! the parameters only, never on the secrets (tests/transcripts.rs checks this).
//!
//! | message | arrow | bytes |
//! |---|---|---|
//! | [`SeedCtoD`], [`SeedDtoE`], [`SeedEtoC`] | setup: C → D, D → E, E → C | 16 |
//! | [`CotFromE`] | FJKW15 Alg. 1, line 1: S = E → R = C | N·(⌈ℓ/8⌉ + 16) |
//! | [`CotFromD`] | FJKW15 Alg. 1, line 2: H = D → R = C | N·32 |
//! | [`IotFromE`] | SS-IOT (FJKW15 §3), S = E → R = C | 2^τ·(⌈ℓ/8⌉ + 16) |
//! | [`IotFromD`] | SS-IOT, H = D → R = C | 32 |
//! | [`XotFromSender`] | FJKW15 Alg. 2, line 1: S → R | N·⌈ℓ/8⌉ |
//! | [`XotFromIndicator`] | FJKW15 Alg. 2, line 2: I → R | k·(4 + ⌈ℓ/8⌉) |
//! | [`ShiftFromD`] | Shift, pre-computation: H = D → B = E | items·⌈ℓ/8⌉ |
//! | [`ShiftFromC`] | Shift, online: A = C → B = E | items·⌈ℓ/8⌉ |
//!
//! SS-XOT (FJKW15 §3) sends two [`XotFromSender`] (C → E and E → C) and two
//! [`XotFromIndicator`] (D → E and D → C). Payloads are shares or masked secrets: `Debug`
//! prints shapes only.

use core::fmt;

use doram_core::wire::{self, Blame, PeerFault};
use doram_core::{CodecError, PartyId, Seed};

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::shift::ShiftParams;
use crate::ss_cot::CotParams;
use crate::ss_iot::IotParams;
use crate::xot::XotParams;

/// A message with a parameter-determined size and a raw byte encoding.
pub trait WireMessage: Sized {
    /// The public parameters that fix the message's size.
    type Shape;

    /// Which arrow this is, for errors: e.g. `"SS-COT (Alg. 1, line 1)"`.
    const WHAT: &'static str;

    /// The exact encoded length under `shape`.
    fn wire_len(shape: &Self::Shape) -> usize;

    /// Whether this message has exactly the shape `shape` prescribes.
    fn fits(&self, shape: &Self::Shape) -> bool;

    /// The raw encoding.
    fn encode(&self) -> Vec<u8>;

    /// Decodes exactly [`wire_len`](WireMessage::wire_len) bytes.
    ///
    /// # Errors
    /// [`CodecError`] for another length, a set padding bit or an index out of range.
    fn decode(bytes: &[u8], shape: &Self::Shape) -> Result<Self, CodecError>;
}

/// Parses `from`'s message: the exact length first, then the contents.
///
/// # Errors
/// A [`PeerFault`] naming `from` and the message.
pub fn receive<M: WireMessage>(
    from: PartyId,
    bytes: &[u8],
    shape: &M::Shape,
) -> Result<M, PeerFault> {
    wire::exact_len(from, M::WHAT, bytes, M::wire_len(shape))?;
    M::decode(bytes, shape).blame(from, M::WHAT)
}

/// Checks that a message handed to a round function has the shape of the instance; one that
/// does not (decoded under other parameters) is reported as a wrong length from `from`.
pub(crate) fn check<M: WireMessage>(
    msg: &M,
    from: PartyId,
    shape: &M::Shape,
) -> Result<(), Fjkw15Error> {
    if msg.fits(shape) {
        Ok(())
    } else {
        let (expected, got) = (M::wire_len(shape), msg.encode().len());
        Err(PeerFault::wrong_length(from, M::WHAT, expected, got).into())
    }
}

fn encode_blocks(out: &mut Vec<u8>, xs: &[u128]) {
    for x in xs {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// 16-byte little-endian blocks (`bytes` is a whole number of them).
pub(crate) fn decode_blocks(bytes: &[u8]) -> Vec<u128> {
    bytes
        .chunks_exact(16)
        .map(|c| {
            let mut b = [0u8; 16];
            b.copy_from_slice(c);
            u128::from_le_bytes(b)
        })
        .collect()
}

/// [`CodecError::WrongLength`] unless `bytes` has `expected` bytes.
pub(crate) fn length(bytes: &[u8], expected: usize) -> Result<(), CodecError> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(CodecError::WrongLength {
            expected,
            got: bytes.len(),
        })
    }
}

/// Defines a setup message carrying one pairwise seed.
macro_rules! seed_message {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            pub(crate) seed: Seed,
        }

        impl WireMessage for $name {
            type Shape = ();
            const WHAT: &'static str = $what;

            fn wire_len(_: &()) -> usize {
                16
            }

            fn fits(&self, _: &()) -> bool {
                true
            }

            fn encode(&self) -> Vec<u8> {
                self.seed.0.to_vec()
            }

            fn decode(bytes: &[u8], _: &()) -> Result<Self, CodecError> {
                length(bytes, 16)?;
                let mut s = [0u8; 16];
                s.copy_from_slice(bytes);
                Ok($name { seed: Seed(s) })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(..)", stringify!($name))
            }
        }
    };
}

seed_message!(
    /// Setup: C → D, the seed of the PRG C and D share.
    SeedCtoD,
    "setup seed C–D"
);
seed_message!(
    /// Setup: D → E, the seed of the PRG D and E share.
    SeedDtoE,
    "setup seed D–E"
);
seed_message!(
    /// Setup: E → C, the seed of the PRG E and C share.
    SeedEtoC,
    "setup seed E–C"
);

/// Defines a message of N strings e_t and N PRF values v_t (SS-COT and SS-IOT from S).
macro_rules! masked_messages {
    ($(#[$doc:meta])* $name:ident, $shape:ty, $what:literal, count: |$p:ident| $count:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            pub(crate) e: Strings,
            pub(crate) v: Vec<u128>,
        }

        impl WireMessage for $name {
            type Shape = $shape;
            const WHAT: &'static str = $what;

            fn wire_len($p: &$shape) -> usize {
                $count * ($p.msg_bits().div_ceil(8) + 16)
            }

            fn fits(&self, $p: &$shape) -> bool {
                self.e.count() == $count && self.e.width() == $p.msg_bits() && self.v.len() == $count
            }

            fn encode(&self) -> Vec<u8> {
                let mut out = self.e.as_bytes().to_vec();
                encode_blocks(&mut out, &self.v);
                out
            }

            fn decode(bytes: &[u8], $p: &$shape) -> Result<Self, CodecError> {
                length(bytes, Self::wire_len($p))?;
                let (e, v) = bytes.split_at($count * $p.msg_bits().div_ceil(8));
                Ok($name {
                    e: Strings::decode(e, $count, $p.msg_bits())?,
                    v: decode_blocks(v),
                })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?}, ..)", stringify!($name), self.e)
            }
        }
    };
}

masked_messages!(
    /// FJKW15 Alg. 1, line 1: S → R, the pairs (e_t, v_t) = (G^ℓ(F_k(x_t)) ⊕ m_t, F_k′(x_t)),
    /// t = 1..N. In FJKW15's use S = E and R = C.
    CotFromE,
    CotParams,
    "SS-COT (Alg. 1, line 1) (e_t, v_t)",
    count: |p| p.n()
);

masked_messages!(
    /// SS-IOT (FJKW15 §3): S → R, the pairs (e_t, v_t) = (G^ℓ(F_k(r ⊕ j_S ⊕ t)) ⊕ m_t,
    /// F_k′(r ⊕ j_S ⊕ t)), t = 0..2^τ − 1. In FJKW15's use S = E and R = C.
    IotFromE,
    IotParams,
    "SS-IOT (e_t, v_t)",
    count: |p| p.n()
);

/// FJKW15 Alg. 1, line 2: H → R, the pairs (p_t, w_t) = (F_k(y_t), F_k′(y_t)), t = 1..N. In
/// FJKW15's use H = D and R = C.
#[derive(Clone, PartialEq, Eq)]
pub struct CotFromD {
    pub(crate) p: Vec<u128>,
    pub(crate) w: Vec<u128>,
}

impl WireMessage for CotFromD {
    type Shape = CotParams;
    const WHAT: &'static str = "SS-COT (Alg. 1, line 2) (p_t, w_t)";

    fn wire_len(p: &CotParams) -> usize {
        p.n() * 32
    }

    fn fits(&self, p: &CotParams) -> bool {
        self.p.len() == p.n() && self.w.len() == p.n()
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 * self.p.len());
        encode_blocks(&mut out, &self.p);
        encode_blocks(&mut out, &self.w);
        out
    }

    fn decode(bytes: &[u8], p: &CotParams) -> Result<Self, CodecError> {
        length(bytes, Self::wire_len(p))?;
        let (a, b) = bytes.split_at(16 * p.n());
        Ok(CotFromD {
            p: decode_blocks(a),
            w: decode_blocks(b),
        })
    }
}

impl fmt::Debug for CotFromD {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CotFromD({} pairs, ..)", self.p.len())
    }
}

/// SS-IOT (FJKW15 §3): H → R, the pair (p, v) = (F_k(r ⊕ j_H), F_k′(r ⊕ j_H)). In FJKW15's
/// use H = D and R = C.
#[derive(Clone, PartialEq, Eq)]
pub struct IotFromD {
    pub(crate) p: u128,
    pub(crate) v: u128,
}

impl WireMessage for IotFromD {
    type Shape = IotParams;
    const WHAT: &'static str = "SS-IOT (p, v)";

    fn wire_len(_: &IotParams) -> usize {
        32
    }

    fn fits(&self, _: &IotParams) -> bool {
        true
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        encode_blocks(&mut out, &[self.p, self.v]);
        out
    }

    fn decode(bytes: &[u8], _: &IotParams) -> Result<Self, CodecError> {
        length(bytes, 32)?;
        let b = decode_blocks(bytes);
        Ok(IotFromD { p: b[0], v: b[1] })
    }
}

impl fmt::Debug for IotFromD {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IotFromD(..)")
    }
}

/// FJKW15 Alg. 2, line 1: S → R, (a_1, …, a_N) = (m_π(1) ⊕ r_1, …, m_π(N) ⊕ r_N). In
/// SS-XOT it goes C → E (C's shares) and E → C (E's shares).
#[derive(Clone, PartialEq, Eq)]
pub struct XotFromSender {
    pub(crate) a: Strings,
}

impl WireMessage for XotFromSender {
    type Shape = XotParams;
    const WHAT: &'static str = "XOT (Alg. 2, line 1) a";

    fn wire_len(p: &XotParams) -> usize {
        p.n() * p.msg_bits().div_ceil(8)
    }

    fn fits(&self, p: &XotParams) -> bool {
        self.a.count() == p.n() && self.a.width() == p.msg_bits()
    }

    fn encode(&self) -> Vec<u8> {
        self.a.as_bytes().to_vec()
    }

    fn decode(bytes: &[u8], p: &XotParams) -> Result<Self, CodecError> {
        Ok(XotFromSender {
            a: Strings::decode(bytes, p.n(), p.msg_bits())?,
        })
    }
}

impl fmt::Debug for XotFromSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "XotFromSender({:?})", self.a)
    }
}

/// FJKW15 Alg. 2, line 2: I → R, the positions j_σ = π^−1(i_σ) and the pads
/// p_σ = r_{j_σ} ⊕ δ_σ, σ = 1..k. On the wire: k indices of 4 bytes, then the k pads. In SS-XOT
/// it goes D → E and D → C.
#[derive(Clone, PartialEq, Eq)]
pub struct XotFromIndicator {
    pub(crate) j: Vec<u32>,
    pub(crate) p: Strings,
}

impl WireMessage for XotFromIndicator {
    type Shape = XotParams;
    const WHAT: &'static str = "XOT (Alg. 2, line 2) (j, p)";

    fn wire_len(p: &XotParams) -> usize {
        p.k() * (4 + p.msg_bits().div_ceil(8))
    }

    fn fits(&self, p: &XotParams) -> bool {
        self.j.len() == p.k()
            && self.p.count() == p.k()
            && self.p.width() == p.msg_bits()
            && self.j.iter().all(|&j| (j as usize) < p.n())
    }

    fn encode(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.j.iter().flat_map(|j| j.to_le_bytes()).collect();
        out.extend_from_slice(self.p.as_bytes());
        out
    }

    fn decode(bytes: &[u8], p: &XotParams) -> Result<Self, CodecError> {
        length(bytes, Self::wire_len(p))?;
        let (j, pads) = bytes.split_at(4 * p.k());
        let j: Vec<u32> = j
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if j.iter().any(|&j| j as usize >= p.n()) {
            return Err(CodecError::OutOfRange {
                what: "an XOT index is not below N",
            });
        }
        Ok(XotFromIndicator {
            j,
            p: Strings::decode(pads, p.k(), p.msg_bits())?,
        })
    }
}

impl fmt::Debug for XotFromIndicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "XotFromIndicator({:?})", self.p)
    }
}

/// Defines a Shift message: one string per item.
macro_rules! shift_message {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            pub(crate) x: Strings,
        }

        impl WireMessage for $name {
            type Shape = ShiftParams;
            const WHAT: &'static str = $what;

            fn wire_len(p: &ShiftParams) -> usize {
                p.items() * p.item_bits().div_ceil(8)
            }

            fn fits(&self, p: &ShiftParams) -> bool {
                self.x.count() == p.items() && self.x.width() == p.item_bits()
            }

            fn encode(&self) -> Vec<u8> {
                self.x.as_bytes().to_vec()
            }

            fn decode(bytes: &[u8], p: &ShiftParams) -> Result<Self, CodecError> {
                Ok($name {
                    x: Strings::decode(bytes, p.items(), p.item_bits())?,
                })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.x)
            }
        }
    };
}

shift_message!(
    /// Shift, pre-computation (our design, notes §4.6): H = D → B = E, Π(q) ⊕ q′.
    ShiftFromD,
    "Shift pre-computation Π(q) ⊕ q′"
);

shift_message!(
    /// Shift, online (our design, notes §4.6): A = C → B = E, u = X_C ⊕ q.
    ShiftFromC,
    "Shift u = X_C ⊕ q"
);
