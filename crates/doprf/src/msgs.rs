//! The messages of the DOPRF: one type per arrow of Ramen Fig. 9 and Fig. 22 (and of their
//! shared Init and KeyGen phases).
//!
//! On the wire a message is raw little-endian bytes with no length prefix and no tag: field
//! elements are 16 bytes each ([`doram_field::encode_vec`]); the ℓ-bit masks r are
//! ⌈ℓ/8⌉ bytes each. The receiver computes the exact length from the [`Params`] and the batch
//! length `count` ([`WireMessage::wire_len`]) and rejects anything else before decoding. A
//! batch of zero evaluations sends nothing at all.
//!
//! | message | arrow | elements for `count` evaluations |
//! |---|---|---|
//! | [`KeyHolderSeed`] | Init: K → R1 | 16 bytes |
//! | [`ReceiverSeed`] | Init: R1 → R2 | 16 bytes |
//! | [`KeyShare1`] | KeyGen: R1 → K | ℓ |
//! | [`KeyShare2`] | KeyGen: R2 → K | ℓ |
//! | [`UnmaskedC1`] | Fig. 22, step 3: R1 → K | count·ℓ |
//! | [`UnmaskedY2`] | Fig. 22, step 4: R1 → K | count |
//! | [`UnmaskedE`] | Fig. 22, step 5: R2 → K | count |
//! | [`UnmaskedZ1`] | Fig. 22, step 6: K → R2 | count·ℓ |
//! | [`MaskedC3`] | Fig. 9, steps 3 and 5: R1 → R2 | count·ℓ, plus count·⌈ℓ/8⌉ bytes |
//! | [`MaskedY2`] | Fig. 9, step 6: R1 → R2 | count |
//! | [`MaskedD`] | Fig. 9, step 7: K → R2 | count·ℓ |
//! | [`MaskedZ3`] | Fig. 9, step 8: R2 → K | count·ℓ |
//!
//! Payloads are secrets or masked secrets: `Debug` prints the message name and lengths only.

use core::fmt;

use doram_core::{CodecError, Seed};
use doram_field::{Fp, Group, decode_vec, encode_vec};

use crate::params::Params;

/// A message with a fixed, parameter-determined size and a raw byte encoding.
pub trait WireMessage: Sized {
    /// Which arrow this is, for errors: e.g. `"Fig. 9 step 7 (d)"`.
    const WHAT: &'static str;

    /// The exact encoded length for a batch of `count` evaluations under `params`.
    fn wire_len(params: &Params, count: usize) -> usize;

    /// Whether this message has exactly the shape the protocol prescribes for `count`
    /// evaluations (checked by the round functions, for messages built in memory).
    fn well_formed(&self, params: &Params, count: usize) -> bool;

    /// The raw encoding.
    fn encode(&self) -> Vec<u8>;

    /// Decodes exactly [`wire_len`](WireMessage::wire_len)`(params, count)` bytes.
    ///
    /// # Errors
    /// [`CodecError::WrongLength`] for any other length, [`CodecError::OutOfRange`] for a
    /// field element ≥ p or a mask with bits at or above ℓ.
    fn decode(bytes: &[u8], params: &Params, count: usize) -> Result<Self, CodecError>;
}

/// Defines a message carrying one vector of field elements.
macro_rules! fp_message {
    (
        $(#[$doc:meta])*
        $name:ident {
            $(#[$fdoc:meta])*
            $field:ident
        },
        what: $what:literal,
        elems: |$p:ident, $c:ident| $elems:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            $(#[$fdoc])*
            pub $field: Vec<Fp>,
        }

        impl $name {
            /// The element count for `count` evaluations under `params`.
            #[allow(unused_variables)]
            pub fn elems(params: &Params, count: usize) -> usize {
                let ($p, $c) = (params, count);
                $elems
            }
        }

        impl WireMessage for $name {
            const WHAT: &'static str = $what;

            fn wire_len(params: &Params, count: usize) -> usize {
                Self::elems(params, count) * Fp::BYTES
            }

            fn well_formed(&self, params: &Params, count: usize) -> bool {
                self.$field.len() == Self::elems(params, count)
            }

            fn encode(&self) -> Vec<u8> {
                encode_vec(&self.$field)
            }

            fn decode(bytes: &[u8], params: &Params, count: usize) -> Result<Self, CodecError> {
                Ok($name {
                    $field: decode_vec(bytes, Self::elems(params, count))?,
                })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({} elements, ..)", stringify!($name), self.$field.len())
            }
        }
    };
}

/// Defines a message carrying one 16-byte PRG seed.
macro_rules! seed_message {
    ($(#[$doc:meta])* $name:ident, what: $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            /// The seed.
            pub seed: Seed,
        }

        impl WireMessage for $name {
            const WHAT: &'static str = $what;

            fn wire_len(_: &Params, _: usize) -> usize {
                16
            }

            fn well_formed(&self, _: &Params, _: usize) -> bool {
                true
            }

            fn encode(&self) -> Vec<u8> {
                self.seed.0.to_vec()
            }

            fn decode(bytes: &[u8], _: &Params, _: usize) -> Result<Self, CodecError> {
                let seed: [u8; 16] = bytes.try_into().map_err(|_| CodecError::WrongLength {
                    expected: 16,
                    got: bytes.len(),
                })?;
                Ok($name { seed: Seed(seed) })
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
    /// Ramen Fig. 9/22, Init: K → R1, the PRG seed k_{k,1} that K and R1 share.
    KeyHolderSeed,
    what: "Init (seed k_{k,1})"
);

seed_message!(
    /// Ramen Fig. 9/22, Init: R1 → R2, the PRG seed k_{1,2} that R1 and R2 share.
    ReceiverSeed,
    what: "Init (seed k_{1,2})"
);

fp_message!(
    /// Ramen Fig. 9/22, KeyGen: R1 → K, R1's random key share k_1 ∈ F_p^ℓ.
    KeyShare1 {
        /// k_1.
        k1
    },
    what: "KeyGen (key share k_1)",
    elems: |p, c| p.bits()
);

fp_message!(
    /// Ramen Fig. 9/22, KeyGen: R2 → K, R2's random key share k_2 ∈ F_p^ℓ.
    KeyShare2 {
        /// k_2.
        k2
    },
    what: "KeyGen (key share k_2)",
    elems: |p, c| p.bits()
);

fp_message!(
    /// Ramen Fig. 22, step 3: R1 → K, c_1 = b·a − c_3 with a = s∘s − d, ℓ elements per
    /// evaluation (preprocessing).
    UnmaskedC1 {
        /// c_1 of each evaluation, ℓ elements each, evaluation after evaluation.
        c1
    },
    what: "Fig. 22 step 3 (c_1)",
    elems: |p, c| c * p.bits()
);

fp_message!(
    /// Ramen Fig. 22, step 4: R1 → K, y_2 = ⟨x⟩_{R1} + m, one element per evaluation.
    UnmaskedY2 {
        /// y_2 of each evaluation.
        y2
    },
    what: "Fig. 22 step 4 (y_2)",
    elems: |p, c| c
);

fp_message!(
    /// Ramen Fig. 22, step 5: R2 → K, e = y_3 − b with y_3 = ⟨x⟩_{R2} − m, one element per
    /// evaluation.
    UnmaskedE {
        /// e of each evaluation.
        e
    },
    what: "Fig. 22 step 5 (e)",
    elems: |p, c| c
);

fp_message!(
    /// Ramen Fig. 22, step 6: K → R2, z_1 = e·(s∘s) + c_1 + (s∘s)·(k + ⟨x⟩_K + y_2), ℓ
    /// elements per evaluation.
    UnmaskedZ1 {
        /// z_1 of each evaluation, ℓ elements each.
        z1
    },
    what: "Fig. 22 step 6 (z_1)",
    elems: |p, c| c * p.bits()
);

fp_message!(
    /// Ramen Fig. 9, step 6: R1 → R2, y_2 = ⟨x⟩_{R1} + m, one element per evaluation.
    MaskedY2 {
        /// y_2 of each evaluation.
        y2
    },
    what: "Fig. 9 step 6 (y_2)",
    elems: |p, c| c
);

fp_message!(
    /// Ramen Fig. 9, step 7: K → R2, d = k + y_1 − a with y_1 = ⟨x⟩_K − m, ℓ elements per
    /// evaluation.
    MaskedD {
        /// d of each evaluation, ℓ elements each.
        d
    },
    what: "Fig. 9 step 7 (d)",
    elems: |p, c| c * p.bits()
);

fp_message!(
    /// Ramen Fig. 9, step 8: R2 → K, z_3 = d∘t + c_3 + t·(y_2 + y_3), ℓ elements per
    /// evaluation.
    MaskedZ3 {
        /// z_3 of each evaluation, ℓ elements each.
        z3
    },
    what: "Fig. 9 step 8 (z_3)",
    elems: |p, c| c * p.bits()
);

/// Ramen Fig. 9, steps 3 and 5: R1 → R2, the mask r ∈ {0, 1}^ℓ and c_3 = a∘b − c_1 of each
/// evaluation (preprocessing).
///
/// In the figure R1 and R2 each send a random r_1, r_2 and use r = r_1 ⊕ r_2; here R1 samples
/// r alone and sends it with c_3 (see "Optimisations" in the crate documentation). On the wire:
/// the count·ℓ elements of c_3, then count masks of ⌈ℓ/8⌉ little-endian bytes each.
#[derive(Clone, PartialEq, Eq)]
pub struct MaskedC3 {
    /// r of each evaluation (bits 0..ℓ).
    pub r: Vec<u128>,
    /// c_3 of each evaluation, ℓ elements each.
    pub c3: Vec<Fp>,
}

impl WireMessage for MaskedC3 {
    const WHAT: &'static str = "Fig. 9 steps 3 and 5 (r, c_3)";

    fn wire_len(params: &Params, count: usize) -> usize {
        count * (params.bits() * Fp::BYTES + params.bit_string_bytes())
    }

    fn well_formed(&self, params: &Params, count: usize) -> bool {
        self.r.len() == count
            && self.c3.len() == count * params.bits()
            && self.r.iter().all(|&r| r & !params.output_mask() == 0)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = encode_vec(&self.c3);
        // Every mask is below 2^ℓ, so its ⌈ℓ/8⌉ low bytes carry it; the length is recovered
        // from c_3 (ℓ elements per mask).
        let bytes = if self.r.is_empty() {
            0
        } else {
            (self.c3.len() / self.r.len()).div_ceil(8)
        };
        for r in &self.r {
            out.extend_from_slice(&r.to_le_bytes()[..bytes]);
        }
        out
    }

    fn decode(bytes: &[u8], params: &Params, count: usize) -> Result<Self, CodecError> {
        let expected = Self::wire_len(params, count);
        if bytes.len() != expected {
            return Err(CodecError::WrongLength {
                expected,
                got: bytes.len(),
            });
        }
        let (c3_bytes, r_bytes) = bytes.split_at(count * params.bits() * Fp::BYTES);
        let c3 = decode_vec(c3_bytes, count * params.bits())?;
        let per = params.bit_string_bytes();
        let r = r_bytes
            .chunks_exact(per)
            .map(|chunk| {
                let mut buf = [0u8; 16];
                buf[..per].copy_from_slice(chunk);
                let r = u128::from_le_bytes(buf);
                if r & !params.output_mask() == 0 {
                    Ok(r)
                } else {
                    Err(CodecError::OutOfRange {
                        what: "mask has bits at or above ℓ",
                    })
                }
            })
            .collect::<Result<Vec<u128>, CodecError>>()?;
        Ok(MaskedC3 { r, c3 })
    }
}

impl fmt::Debug for MaskedC3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MaskedC3({} masks, {} elements, ..)",
            self.r.len(),
            self.c3.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(bits: usize) -> Params {
        Params::new(bits).unwrap()
    }

    #[test]
    fn fp_messages_round_trip_and_reject_wrong_sizes() {
        let p = params(5);
        let m = MaskedD {
            d: (0..15).map(Fp::from_u64).collect(),
        };
        assert!(m.well_formed(&p, 3));
        assert!(!m.well_formed(&p, 2));
        let bytes = m.encode();
        assert_eq!(bytes.len(), MaskedD::wire_len(&p, 3));
        assert_eq!(MaskedD::decode(&bytes, &p, 3).unwrap(), m);
        assert!(matches!(
            MaskedD::decode(&bytes[1..], &p, 3),
            Err(CodecError::WrongLength { .. })
        ));
        let mut bad = bytes.clone();
        bad[..16].fill(0xff);
        assert!(matches!(
            MaskedD::decode(&bad, &p, 3),
            Err(CodecError::OutOfRange { .. })
        ));
        assert_eq!(format!("{m:?}"), "MaskedD(15 elements, ..)");
        // Per-evaluation and fixed sizes.
        assert_eq!(UnmaskedY2::wire_len(&p, 7), 7 * 16);
        assert_eq!(KeyShare1::wire_len(&p, 7), 5 * 16);
        assert_eq!(KeyHolderSeed::wire_len(&p, 7), 16);
    }

    #[test]
    fn masked_c3_round_trip() {
        for bits in [1, 8, 9, 80, 128] {
            let p = params(bits);
            let mask = p.output_mask();
            let m = MaskedC3 {
                r: vec![mask, 0, mask / 3],
                c3: (0..3 * bits as u64).map(Fp::from_u64).collect(),
            };
            assert!(m.well_formed(&p, 3));
            let bytes = m.encode();
            assert_eq!(bytes.len(), MaskedC3::wire_len(&p, 3));
            assert_eq!(MaskedC3::decode(&bytes, &p, 3).unwrap(), m);
            assert!(MaskedC3::decode(&bytes[..bytes.len() - 1], &p, 3).is_err());
            if bits % 8 != 0 {
                // A set padding bit is rejected.
                let mut bad = bytes.clone();
                let last = bad.len() - 1;
                bad[last] |= 0x80;
                assert!(matches!(
                    MaskedC3::decode(&bad, &p, 3),
                    Err(CodecError::OutOfRange { .. })
                ));
            }
        }
        let empty = MaskedC3 {
            r: Vec::new(),
            c3: Vec::new(),
        };
        assert!(empty.encode().is_empty());
        assert_eq!(MaskedC3::decode(&[], &params(80), 0).unwrap(), empty);
    }

    #[test]
    fn seeds_round_trip() {
        let m = ReceiverSeed {
            seed: Seed([9; 16]),
        };
        let p = params(3);
        assert_eq!(ReceiverSeed::decode(&m.encode(), &p, 0).unwrap(), m);
        assert!(ReceiverSeed::decode(&[0; 15], &p, 0).is_err());
        assert_eq!(format!("{m:?}"), "ReceiverSeed(..)");
    }
}
