//! Ramen's own messages: one type per arrow of the figures (the DOPRF's arrows are the types
//! of `doram_doprf::msgs`, the engine's — replication and products — those of
//! `doram_mpc::msgs`).
//!
//! Every message has a fixed size determined by the public parameters ([`Message::Shape`]):
//! the receiver computes it, rejects any other length before decoding, and rejects
//! non-canonical contents (a field element ≥ p, a tag or shift with bits above its length, a
//! DPF key that does not parse). Field elements are 16 bytes little-endian, tags 8 bytes.
//!
//! | message | arrow | bytes |
//! |---|---|---|
//! | [`PotChooserKeys`] | Fig. 2, Init step 2: S → C | 32 |
//! | [`PotReceiverKey`] | Fig. 2, Init step 2: S → R | 16 |
//! | [`PotAccess`] | Fig. 2, Access step 2: C → R | 20 |
//! | [`PositionMapMsg`] | Fig. 6, Init step 5(c), tag column: P_{i−1} → P_i | 8 + ⌈3·seg·⌈log2 m⌉/8⌉ |
//! | [`MaskedMemory`] | Fig. 6, Init step 5(c), value column: P_{i−1} → P_i | 16·m, in chunks of ≤ 4 MiB |
//! | [`FlagKeys`] | Fig. 4, step 4 (preprocessed): P_1 → P_2, P_3 | count·key(2^ℓ_stash) |
//! | [`FlagShift`] | Fig. 4, step 4 (online): P_1 → P_2, P_3 | 8 |
//! | [`LocKeys`] | Fig. 4, step 10(c) and Fig. 5, step 7(d) (preprocessed): P_i → P_{i±1} | count·key(s) |
//! | [`LocOpening`] | Fig. 4, step 10(b) and Fig. 5, step 7(b): P_i → P_{i±1} | 32 |
//! | [`StashTag`] | Fig. 5, step 2: P_2 → P_3 | 8 |
//! | [`WriteCorrection`] | Fig. 5, step 7(d): P_i → P_{i±1} | 16 |
//! | [`WriteBackKey`] | Fig. 7, step 1(c): P_i → P_{i±1} | key(m, points) |
//!
//! (P_1, P_2, P_3 are the paper's names of our P0, P1, P2.) Payloads are secrets or masked
//! secrets: `Debug` prints the message name only.

use doram_core::{CodecError, Seed};
use doram_dpf::{
    DpfKey, HalfTree, HalfTreeKey, HalfTreeMpDpf, MpDpfKey, MultiPointDpf, SinglePointDpf,
};
use doram_field::{Fp, Group, Vector, decode_vec};

use crate::tags::PositionMap;

/// The output group of the stash-location DPFs: (β = 1, β = ρ) in one key (see
/// [`crate::stash`]).
pub type LocOut = Vector<Fp, 2>;

/// A message with a fixed, parameter-determined size.
pub trait Message: Sized {
    /// Which arrow this is, for errors.
    const WHAT: &'static str;
    /// What the size depends on.
    type Shape: Copy;
    /// The exact encoded length, or `None` if only the decoder can tell (it then checks the
    /// length exactly, as for [`WriteBackKey`]).
    fn wire_len(shape: Self::Shape) -> Option<usize>;
    /// Appends the encoding to `out`.
    fn encode_into(&self, out: &mut Vec<u8>);
    /// Decodes exactly [`wire_len`](Message::wire_len)`(shape)` bytes.
    ///
    /// # Errors
    /// [`CodecError`] for any other length or a non-canonical content.
    fn decode(bytes: &[u8], shape: Self::Shape) -> Result<Self, CodecError>;
    /// The encoding.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}

fn check_len(bytes: &[u8], expected: usize) -> Result<(), CodecError> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(CodecError::WrongLength {
            expected,
            got: bytes.len(),
        })
    }
}

fn seed_at(bytes: &[u8], at: usize) -> Seed {
    let mut s = [0u8; 16];
    s.copy_from_slice(&bytes[at..at + 16]);
    Seed(s)
}

fn fp_at(bytes: &[u8], at: usize) -> Result<Fp, CodecError> {
    let mut b = [0u8; 16];
    b.copy_from_slice(&bytes[at..at + 16]);
    Fp::from_le_bytes(b)
}

/// A `bits`-bit value (tag, shift) as 8 little-endian bytes.
fn bounded_u64(bytes: &[u8], bits: u32, what: &'static str) -> Result<u64, CodecError> {
    let mut b = [0u8; 8];
    b.copy_from_slice(bytes);
    let v = u64::from_le_bytes(b);
    if bits < 64 && v >> bits != 0 {
        return Err(CodecError::OutOfRange { what });
    }
    Ok(v)
}

macro_rules! redacted {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($t), "(..)"))
            }
        }
    )*};
}

/// Ramen Fig. 2, Init step 2: S → C, the PRF key k_C and the PRP key k_PRP.
#[derive(Clone, PartialEq, Eq)]
pub struct PotChooserKeys {
    /// k_C.
    pub k_c: Seed,
    /// k_PRP.
    pub k_prp: Seed,
}

/// Ramen Fig. 2, Init step 2: S → R, the PRF key k_R.
#[derive(Clone, PartialEq, Eq)]
pub struct PotReceiverKey {
    /// k_R.
    pub k_r: Seed,
}

/// Ramen Fig. 2, Access step 2: C → R, the permuted index π(indx) and a = PRF(k_C, π(indx)).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PotAccess {
    /// π(indx).
    pub index: u32,
    /// a.
    pub a: Fp,
}

impl Message for PotChooserKeys {
    const WHAT: &'static str = "the p-OT keys (k_C, k_PRP) (Ramen Fig. 2, Init step 2)";
    type Shape = ();
    fn wire_len(_: ()) -> Option<usize> {
        Some(32)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.k_c.0);
        out.extend_from_slice(&self.k_prp.0);
    }
    fn decode(bytes: &[u8], _: ()) -> Result<Self, CodecError> {
        check_len(bytes, 32)?;
        Ok(PotChooserKeys {
            k_c: seed_at(bytes, 0),
            k_prp: seed_at(bytes, 16),
        })
    }
}

impl Message for PotReceiverKey {
    const WHAT: &'static str = "the p-OT key k_R (Ramen Fig. 2, Init step 2)";
    type Shape = ();
    fn wire_len(_: ()) -> Option<usize> {
        Some(16)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.k_r.0);
    }
    fn decode(bytes: &[u8], _: ()) -> Result<Self, CodecError> {
        check_len(bytes, 16)?;
        Ok(PotReceiverKey {
            k_r: seed_at(bytes, 0),
        })
    }
}

impl Message for PotAccess {
    const WHAT: &'static str = "a p-OT access (π(indx), a) (Ramen Fig. 2, Access step 2)";
    type Shape = ();
    fn wire_len(_: ()) -> Option<usize> {
        Some(20)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.a.to_le_bytes());
    }
    fn decode(bytes: &[u8], _: ()) -> Result<Self, CodecError> {
        check_len(bytes, 20)?;
        let mut i = [0u8; 4];
        i.copy_from_slice(&bytes[..4]);
        Ok(PotAccess {
            index: u32::from_le_bytes(i),
            a: fp_at(bytes, 4)?,
        })
    }
}

/// Ramen Fig. 6, Init step 5(c), the tag column: P_{i−1} → P_i, the map from the tags
/// PRF(k_i, j) to the positions of the cells in M'_i (see [`crate::tags`]).
#[derive(Clone, PartialEq, Eq)]
pub struct PositionMapMsg {
    /// The map.
    pub map: PositionMap,
    /// Bits per position, ⌈log2 m⌉.
    pub width: u32,
}

impl Message for PositionMapMsg {
    const WHAT: &'static str = "the tag → position map (Ramen Fig. 6, Init step 5(c))";
    /// (m, bits per position).
    type Shape = (usize, u32);
    fn wire_len((m, width): (usize, u32)) -> Option<usize> {
        Some(PositionMap::wire_len(m, width))
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.map.encode(self.width));
    }
    fn decode(bytes: &[u8], (m, width): (usize, u32)) -> Result<Self, CodecError> {
        check_len(bytes, PositionMap::wire_len(m, width))?;
        PositionMap::decode(bytes, m, width)
            .map(|map| PositionMapMsg { map, width })
            .ok_or(CodecError::OutOfRange {
                what: "position-map entry or padding",
            })
    }
}

/// Ramen Fig. 6, Init step 5(c), the value column: P_{i−1} → P_i, the masked and permuted
/// memory share M'_i, m field elements, sent as ⌈m / [`MASKED_MEMORY_CHUNK`]⌉ messages of
/// consecutive entries (a memory of 2^24 words would exceed the transport's frame limit in one).
#[derive(Clone, PartialEq, Eq)]
pub struct MaskedMemory {
    /// A chunk of M'_i.
    pub values: Vec<Fp>,
}

/// Entries of M'_i per [`MaskedMemory`] message (4 MiB).
pub const MASKED_MEMORY_CHUNK: usize = 1 << 18;

impl Message for MaskedMemory {
    const WHAT: &'static str = "the masked memory M'_i (Ramen Fig. 6, Init step 5(c))";
    /// The chunk's length.
    type Shape = usize;
    fn wire_len(m: usize) -> Option<usize> {
        Some(m * Fp::BYTES)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.values.len() * 16);
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn decode(bytes: &[u8], m: usize) -> Result<Self, CodecError> {
        Ok(MaskedMemory {
            values: decode_vec(bytes, m)?,
        })
    }
}

/// Ramen Fig. 4, step 4, preprocessed: P_1 → P_2 and P_1 → P_3, one DPF key per access of the
/// epoch for the point function on {0, 1}^ℓ_stash that is 1 at a random point α (the online
/// step only reveals a shift, [`FlagShift`]; see [`crate::stash`]).
#[derive(Clone, PartialEq, Eq)]
pub struct FlagKeys {
    /// The keys, in access order.
    pub keys: Vec<HalfTreeKey<Fp>>,
}

impl Message for FlagKeys {
    const WHAT: &'static str = "the stash-flag DPF keys (Ramen Fig. 4, step 4)";
    /// (keys, domain bits ℓ_stash).
    type Shape = (usize, u32);
    fn wire_len((count, bits): (usize, u32)) -> Option<usize> {
        Some(count * <HalfTree as SinglePointDpf<Fp>>::key_size(1usize << bits))
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        for k in &self.keys {
            out.extend_from_slice(&k.to_bytes());
        }
    }
    fn decode(bytes: &[u8], (count, bits): (usize, u32)) -> Result<Self, CodecError> {
        check_len(
            bytes,
            count * <HalfTree as SinglePointDpf<Fp>>::key_size(1usize << bits),
        )?;
        let domain = 1usize << bits;
        let size = <HalfTree as SinglePointDpf<Fp>>::key_size(domain);
        let keys = bytes
            .chunks_exact(size.max(1))
            .take(count)
            .map(|b| <HalfTree as SinglePointDpf<Fp>>::key_from_bytes(b, domain))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FlagKeys { keys })
    }
}

/// Ramen Fig. 4, step 4, online: P_1 → P_2 and P_1 → P_3, adr' ⊕ α, the masked stash tag of
/// the address shifted by the random point of this access's flag DPF.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FlagShift {
    /// adr' ⊕ α, an ℓ_stash-bit string.
    pub shift: u64,
}

impl Message for FlagShift {
    const WHAT: &'static str = "the flag-DPF shift adr' ⊕ α (Ramen Fig. 4, step 4)";
    /// ℓ_stash.
    type Shape = u32;
    fn wire_len(_: u32) -> Option<usize> {
        Some(8)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.shift.to_le_bytes());
    }
    fn decode(bytes: &[u8], bits: u32) -> Result<Self, CodecError> {
        check_len(bytes, 8)?;
        Ok(FlagShift {
            shift: bounded_u64(bytes, bits, "flag shift wider than ℓ_stash")?,
        })
    }
}

/// Ramen Fig. 4, step 10(c) and Fig. 5, step 7(d), preprocessed: P_i → P_{i−1} and
/// P_i → P_{i+1}, one DPF key per access of the epoch on the stash domain [0, s), for the point
/// function with value (1, ρ) at a random point α (see [`crate::stash`]).
#[derive(Clone, PartialEq, Eq)]
pub struct LocKeys {
    /// The keys, in access order.
    pub keys: Vec<HalfTreeKey<LocOut>>,
}

impl Message for LocKeys {
    const WHAT: &'static str = "the stash-location DPF keys (Ramen Fig. 4, step 10(c))";
    /// (keys, stash size s).
    type Shape = (usize, usize);
    fn wire_len((count, s): (usize, usize)) -> Option<usize> {
        Some(count * <HalfTree as SinglePointDpf<LocOut>>::key_size(s))
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        for k in &self.keys {
            out.extend_from_slice(&k.to_bytes());
        }
    }
    fn decode(bytes: &[u8], (count, s): (usize, usize)) -> Result<Self, CodecError> {
        check_len(
            bytes,
            count * <HalfTree as SinglePointDpf<LocOut>>::key_size(s),
        )?;
        let size = <HalfTree as SinglePointDpf<LocOut>>::key_size(s);
        let keys = bytes
            .chunks_exact(size.max(1))
            .take(count)
            .map(|b| <HalfTree as SinglePointDpf<LocOut>>::key_from_bytes(b, s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LocKeys { keys })
    }
}

/// Ramen Fig. 4, step 10(b) (and Fig. 5, step 7(b), which reuses the opening): P_j → P_{j±1},
/// the two shares a party contributes to the openings of the masked stash location: its
/// masked share ⟨loc⟩ − α + s·(μ + 1) as the DPF's generator, and its plain (fresh) share as
/// one of the two evaluators of the neighbour's DPF.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LocOpening {
    /// The sender's masked share of its own instance.
    pub masked: Fp,
    /// The sender's share of the instance the receiver and the sender evaluate together.
    pub share: Fp,
}

impl Message for LocOpening {
    const WHAT: &'static str = "a stash-location opening (Ramen Fig. 4, step 10(b))";
    type Shape = ();
    fn wire_len(_: ()) -> Option<usize> {
        Some(32)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.masked.to_le_bytes());
        out.extend_from_slice(&self.share.to_le_bytes());
    }
    fn decode(bytes: &[u8], _: ()) -> Result<Self, CodecError> {
        check_len(bytes, 32)?;
        Ok(LocOpening {
            masked: fp_at(bytes, 0)?,
            share: fp_at(bytes, 16)?,
        })
    }
}

/// Ramen Fig. 5, step 2: P_2 → P_3, the stash tag PRF(k_stash, adr_M) that P_2 learnt.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StashTag {
    /// The ℓ_stash-bit tag.
    pub tag: u64,
}

impl Message for StashTag {
    const WHAT: &'static str = "the stash tag PRF(k_stash, adr_M) (Ramen Fig. 5, step 2)";
    /// ℓ_stash.
    type Shape = u32;
    fn wire_len(_: u32) -> Option<usize> {
        Some(8)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.tag.to_le_bytes());
    }
    fn decode(bytes: &[u8], bits: u32) -> Result<Self, CodecError> {
        check_len(bytes, 8)?;
        Ok(StashTag {
            tag: bounded_u64(bytes, bits, "stash tag wider than ℓ_stash")?,
        })
    }
}

/// Ramen Fig. 5, step 7(d): P_i → P_{i−1} and P_i → P_{i+1}, γ_i = ⟨Δ⟩_i·ρ_i^{−1}, which turns
/// the preprocessed DPF with value ρ_i into one with value ⟨Δ⟩_i (replacing the figure's fresh
/// DPF keys; see [`crate::stash`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WriteCorrection {
    /// γ_i.
    pub gamma: Fp,
}

impl Message for WriteCorrection {
    const WHAT: &'static str = "the stash-write correction γ (Ramen Fig. 5, step 7(d))";
    type Shape = ();
    fn wire_len(_: ()) -> Option<usize> {
        Some(16)
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.gamma.to_le_bytes());
    }
    fn decode(bytes: &[u8], _: ()) -> Result<Self, CodecError> {
        check_len(bytes, 16)?;
        Ok(WriteCorrection {
            gamma: fp_at(bytes, 0)?,
        })
    }
}

/// Ramen Fig. 7, step 1(c): P_i → P_{i−1} and P_i → P_{i+1}, a multi-point DPF key for f_i,
/// which is P_i's share of stash\[c\].val − stash\[c\].val_old at the position of the cell read in
/// access c.
#[derive(Clone, PartialEq, Eq)]
pub struct WriteBackKey {
    /// The key.
    pub key: MpDpfKey<HalfTreeKey<Fp>>,
}

impl Message for WriteBackKey {
    const WHAT: &'static str = "the write-back multi-point DPF key (Ramen Fig. 7, step 1(c))";
    /// (m, points).
    type Shape = (usize, usize);
    fn wire_len(_: (usize, usize)) -> Option<usize> {
        // The length depends on the bucket sizes, which follow from the key's hash key; the
        // decoder checks it exactly (`MultiPointDpf::key_from_bytes`).
        None
    }
    fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key.to_bytes());
    }
    fn decode(bytes: &[u8], (m, points): (usize, usize)) -> Result<Self, CodecError> {
        Ok(WriteBackKey {
            key: <HalfTreeMpDpf as MultiPointDpf<Fp>>::key_from_bytes(bytes, m, points)?,
        })
    }
}

redacted!(
    PotChooserKeys,
    PotReceiverKey,
    PotAccess,
    PositionMapMsg,
    MaskedMemory,
    FlagKeys,
    FlagShift,
    LocKeys,
    LocOpening,
    StashTag,
    WriteCorrection,
    WriteBackKey
);

/// The largest frame payload any party sends in an instance with parameters `p` (s = stash
/// size and accesses per epoch, m = n + s, ℓ and ℓ_stash the tag lengths): the maximum over
/// the message table above.
///
/// | frame | bytes |
/// |---|---|
/// | [`PositionMapMsg`] | `8 + ⌈3·seg(m)·⌈log2 m⌉/8⌉` |
/// | [`MaskedMemory`] chunk | `16·min(m, 2^18)` |
/// | [`FlagKeys`], [`LocKeys`] | `s` keys |
/// | [`WriteBackKey`] | at most `17 + B·key(m)`, `B` the most cuckoo buckets of `c ≤ s` points |
/// | a DOPRF message of an epoch | at most `s·(16ℓ + ⌈ℓ/8⌉)` (`MaskedC3`, the largest per evaluation) |
/// | an engine vector (stash read) | at most `16·(s + 4·max(ℓ, ℓ_stash) + 8)` |
///
/// Each term is at least what the protocol sends (the last one with slack); the transport's
/// frame limit can be lowered to this value ([`doram_net::Session::limit_frame_bytes`]).
pub fn max_message_bytes(p: &crate::Params) -> usize {
    let (s, m) = (p.stash(), p.memory());
    let doprf = |bits: u32| {
        let bits = bits as usize;
        s * (16 * bits + bits.div_ceil(8))
    };
    // A write-back (or Get Memory) key has c ≤ s points; the number of cuckoo buckets is not
    // monotone in c (1 point: 106 buckets, 16 points: 50), so take the largest.
    let buckets = (1..=s).map(doram_prim::num_buckets).max().unwrap_or(0);
    let write_back = 17 + buckets * <HalfTree as SinglePointDpf<Fp>>::key_size(m);
    let engine = 16 * (s + 4 * p.tag_bits().max(p.stash_tag_bits()) as usize + 8);
    [
        PositionMap::wire_len(m, p.position_bits()),
        16 * m.min(MASKED_MEMORY_CHUNK),
        s * <HalfTree as SinglePointDpf<Fp>>::key_size(1usize << p.stash_tag_bits()),
        s * <HalfTree as SinglePointDpf<LocOut>>::key_size(s),
        write_back,
        doprf(p.tag_bits()),
        doprf(p.stash_tag_bits()),
        engine,
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;
    use doram_prim::AesPrg;

    fn round_trip<M: Message + PartialEq + std::fmt::Debug>(msg: &M, shape: M::Shape) {
        let bytes = msg.encode();
        assert_eq!(M::decode(&bytes, shape).unwrap(), *msg, "{}", M::WHAT);
        assert!(M::decode(&bytes[..bytes.len() - 1], shape).is_err());
    }

    #[test]
    fn messages_round_trip() {
        let mut rng = AesPrg::new(Seed([5; 16]));
        round_trip(
            &PotChooserKeys {
                k_c: Seed([1; 16]),
                k_prp: Seed([2; 16]),
            },
            (),
        );
        round_trip(&PotReceiverKey { k_r: Seed([3; 16]) }, ());
        round_trip(
            &PotAccess {
                index: 77,
                a: Fp::from_u64(5),
            },
            (),
        );
        round_trip(
            &MaskedMemory {
                values: vec![Fp::ONE, Fp::from_u64(9)],
            },
            2,
        );
        round_trip(&FlagShift { shift: 0x3ff }, 10);
        assert!(FlagShift::decode(&0x400u64.to_le_bytes(), 10).is_err());
        round_trip(&StashTag { tag: 12 }, 40);
        round_trip(
            &LocOpening {
                masked: Fp::from_u64(3),
                share: Fp::from_u64(4),
            },
            (),
        );
        round_trip(
            &WriteCorrection {
                gamma: Fp::from_u64(8),
            },
            (),
        );
        assert!(WriteCorrection::decode(&[0xff; 16], ()).is_err());
        let (a, _) = <HalfTree as SinglePointDpf<Fp>>::gen_keys(1 << 20, 5, Fp::ONE, &mut rng);
        round_trip(
            &FlagKeys {
                keys: vec![a.clone(), a],
            },
            (2, 20),
        );
        let (a, _) = <HalfTree as SinglePointDpf<LocOut>>::gen_keys(
            33,
            5,
            Vector::new([Fp::ONE, Fp::ONE]),
            &mut rng,
        );
        round_trip(&LocKeys { keys: vec![a] }, (1, 33));
        let (k, _) = <HalfTreeMpDpf as MultiPointDpf<Fp>>::gen_keys(
            100,
            &[3, 50],
            &[Fp::ONE, Fp::ONE],
            &mut rng,
        )
        .unwrap();
        let msg = WriteBackKey { key: k };
        assert_eq!(WriteBackKey::decode(&msg.encode(), (100, 2)).unwrap(), msg);
    }
}
