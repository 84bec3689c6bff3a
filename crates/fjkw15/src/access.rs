//! Access\[i\], oblivious retrieval of the next label (FJKW15 §4, Algorithm 3; notes §5.3), as
//! round functions of D, E (senders) and C (receiver): one round, D → C and E → C.
//!
//! Inputs: D and E hold XOR shares of the forest ([`ForestShare`](crate::storage::ForestShare))
//! and of the address N; everybody knows the label L_i (C learnt it from Access[i − 1] and
//! sends it to D and E, notes Q12). Outputs:
//! * C learns L_{i+1} = A_i[N^(i+1)] (i < h), and j_2 = N^(i+1) ⊕ ρ_i for PostProcess;
//! * C and E share T_i = (1, N_i, L_i, Rot\[ρ\](A_i)) and the rotated path without it,
//!   P*_{L_i} = Rot[σ, δ, ρ](P′_{L_i}); for i = h, the A field of T_h is the record D\[N\];
//! * D and E keep the rotation (σ, δ, ρ) for Eviction's Shift.
//!
//! Pre-computation: D and E draw (σ, δ, ρ) and the pad p of |P^i_L| bits from a fresh sub-seed
//! of their PRG ([`AccessPre`], which the driver draws with the rest of an access's
//! pre-computation); E draws the pad y of |A_i| bits from its own. Then the SS-COT (i ≥ 1) and
//! the SS-IOT (i < h) instances take their sub-seeds, in that order. The SS-COT is the tagged
//! variant of [`crate::ss_cot`] (24 bytes per tuple besides e_t, against 48 in Alg. 1).
//!
//! Boundary cases (FJKW15 §4, "Boundary Cases"): for i = 0 the path is OT_0's one tuple, σ and
//! δ are 0, SS-COT is skipped, and C's and E's shares of A_0 are D's and E's rotated shares
//! (notes §5.3, \[INF\]: E's share plays the role of y); for i = h SS-IOT is skipped and the
//! A shares (z, y) share the record.

use crate::bits::{Strings, get_bits};
use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::msgs::{IotFromD, IotFromE, WireMessage, check, length};
use crate::params::Params;
use crate::party::{C, D, E, Role, instance};
use crate::rotation::Rotation;
use crate::ss_cot::CotParams;
use crate::ss_cot::{TagCotFromD, TagCotFromE};
use crate::ss_iot::IotParams;

/// The public parameters of Access\[i\]: the forest's and the tree index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AccessShape {
    params: Params,
    i: usize,
}

impl AccessShape {
    /// Access\[i\] in a forest of `params`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if i > h.
    pub fn new(params: Params, i: usize) -> Result<AccessShape, Fjkw15Error> {
        if i > params.h() {
            return Err(Fjkw15Error::InvalidInput("trees are OT_0..OT_h"));
        }
        Ok(AccessShape { params, i })
    }

    fn layout(&self) -> TupleLayout {
        TupleLayout::new(&self.params, self.i)
    }

    fn tuples(&self) -> usize {
        self.params.path_tuples(self.i)
    }

    fn tuple_bits(&self) -> usize {
        self.params.tuple_bits(self.i)
    }

    /// Bits of the prefix share D sends C: N_{i+1} for i < h, N_h for i = h.
    fn prefix_bits(&self) -> usize {
        self.params.prefix_bits((self.i + 1).min(self.params.h())) as usize
    }

    /// SS-COT\[n\] on (fb‖N_i, A): for i ≥ 1.
    fn cot(&self) -> Option<CotParams> {
        let key_bits = 1 + self.params.prefix_bits(self.i) as usize;
        let a_bits = self.params.a_bits(self.i);
        (self.i > 0).then(|| CotParams::new(self.tuples(), a_bits, key_bits).expect("ℓ′ ≤ 63"))
    }

    /// SS-IOT[2^τ] on the labels L_{i+1}: for i < h.
    fn iot(&self) -> Option<IotParams> {
        let label_bits = |i: usize| self.params.depth(i + 1) as usize;
        (self.i < self.params.h())
            .then(|| IotParams::new(self.params.tau(), label_bits(self.i)).expect("τ ≤ 16"))
    }
}

/// FJKW15 Alg. 3, steps 2–4: D → C, D's rotated and masked path share
/// s_D[Rot[σ, δ, ρ](P_{L_i})], its share of N_{i+1} (N_h for i = h), and D's SS-COT (i ≥ 1)
/// and SS-IOT (i < h) messages. On the wire in that order; the prefix as ⌈(i+1)τ/8⌉
/// little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessFromD {
    path: Strings,
    prefix: u64,
    prefix_bytes: usize,
    cot: Option<TagCotFromD>,
    iot: Option<IotFromD>,
}

/// FJKW15 Alg. 3, steps 3–4: E → C, E's SS-COT (i ≥ 1) and SS-IOT (i < h) messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessFromE {
    cot: Option<TagCotFromE>,
    iot: Option<IotFromE>,
}

/// Decodes an optional part (present iff `shape` is) from the front of `bytes`, which the
/// caller has length-checked.
fn take<M: WireMessage>(
    bytes: &mut &[u8],
    shape: Option<&M::Shape>,
) -> Result<Option<M>, doram_core::CodecError> {
    let Some(shape) = shape else { return Ok(None) };
    let (head, rest) = bytes.split_at(M::wire_len(shape));
    *bytes = rest;
    M::decode(head, shape).map(Some)
}

/// The encoded length of an optional part.
fn part_len<M: WireMessage>(shape: Option<&M::Shape>) -> usize {
    shape.map_or(0, M::wire_len)
}

/// Whether an optional part is present exactly when the instance has it, with its shape.
fn part_fits<M: WireMessage>(msg: &Option<M>, shape: Option<&M::Shape>) -> bool {
    match (msg, shape) {
        (Some(m), Some(s)) => m.fits(s),
        (None, None) => true,
        _ => false,
    }
}

impl WireMessage for AccessFromD {
    type Shape = AccessShape;
    const WHAT: &'static str = "Access (Alg. 3, steps 2–4) from D";

    fn wire_len(s: &AccessShape) -> usize {
        s.tuples() * s.tuple_bits().div_ceil(8)
            + s.prefix_bits().div_ceil(8)
            + part_len::<TagCotFromD>(s.cot().as_ref())
            + part_len::<IotFromD>(s.iot().as_ref())
    }

    fn fits(&self, s: &AccessShape) -> bool {
        self.path.count() == s.tuples()
            && self.path.width() == s.tuple_bits()
            && self.prefix >> s.prefix_bits() == 0
            && self.prefix_bytes == s.prefix_bits().div_ceil(8)
            && part_fits(&self.cot, s.cot().as_ref())
            && part_fits(&self.iot, s.iot().as_ref())
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = self.path.as_bytes().to_vec();
        out.extend_from_slice(&self.prefix.to_le_bytes()[..self.prefix_bytes]);
        out.extend(self.cot.iter().flat_map(WireMessage::encode));
        out.extend(self.iot.iter().flat_map(WireMessage::encode));
        out
    }

    fn decode(bytes: &[u8], s: &AccessShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let path_len = s.tuples() * s.tuple_bits().div_ceil(8);
        let (path, mut rest) = bytes.split_at(path_len);
        let path = Strings::decode(path, s.tuples(), s.tuple_bits())?;
        let prefix_bytes = s.prefix_bits().div_ceil(8);
        let (prefix, tail) = rest.split_at(prefix_bytes);
        rest = tail;
        let mut buf = [0u8; 8];
        buf[..prefix.len()].copy_from_slice(prefix);
        let prefix = u64::from_le_bytes(buf);
        if prefix >> s.prefix_bits() != 0 {
            return Err(doram_core::CodecError::OutOfRange {
                what: "an address prefix share has bits above (i+1)τ",
            });
        }
        let cot = take::<TagCotFromD>(&mut rest, s.cot().as_ref())?;
        let iot = take::<IotFromD>(&mut rest, s.iot().as_ref())?;
        Ok(AccessFromD {
            path,
            prefix,
            prefix_bytes,
            cot,
            iot,
        })
    }
}

impl WireMessage for AccessFromE {
    type Shape = AccessShape;
    const WHAT: &'static str = "Access (Alg. 3, steps 3–4) from E";

    fn wire_len(s: &AccessShape) -> usize {
        part_len::<TagCotFromE>(s.cot().as_ref()) + part_len::<IotFromE>(s.iot().as_ref())
    }

    fn fits(&self, s: &AccessShape) -> bool {
        part_fits(&self.cot, s.cot().as_ref()) && part_fits(&self.iot, s.iot().as_ref())
    }

    fn encode(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.cot.iter().flat_map(WireMessage::encode).collect();
        out.extend(self.iot.iter().flat_map(WireMessage::encode));
        out
    }

    fn decode(bytes: &[u8], s: &AccessShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let mut rest = bytes;
        let cot = take::<TagCotFromE>(&mut rest, s.cot().as_ref())?;
        let iot = take::<IotFromE>(&mut rest, s.iot().as_ref())?;
        Ok(AccessFromE { cot, iot })
    }
}

/// What D keeps after Access\[i\]: the rotation, for Eviction's Shift (Alg. 3: "D and E output
/// (σ, ρ)").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessAtD {
    /// (σ, δ, ρ).
    pub rotation: Rotation,
}

/// What E keeps after Access\[i\].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessAtE {
    /// (σ, δ, ρ).
    pub rotation: Rotation,
    /// s_E\[T_i\] = (0, s_E\[N_i\], L_i, y): one |T_i|-bit row.
    pub tuple: Strings,
    /// s_E[P*_{L_i}] = s_E[Rot[σ, δ, ρ](P_{L_i})] (i ≥ 1; OT_0's path is T_0 itself).
    pub path: Option<Strings>,
}

/// C's output of Access\[i\].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessAtC {
    /// L_{i+1} = A_i[N^(i+1)], for i < h.
    pub next_label: Option<u64>,
    /// j_2 = N^(i+1) ⊕ ρ_i, the position of L_{i+1} in the flipped A field (for
    /// PostProcessT\[i\]), for i < h.
    pub j2: Option<usize>,
    /// s_C\[T_i\] = (1, s_D\[N_i\], 0^d_i, z): one |T_i|-bit row.
    pub tuple: Strings,
    /// s_C[P*_{L_i}]: D's rotated share with the j_1-th tuple's fb flipped and its other bits
    /// random (i ≥ 1).
    pub path: Option<Strings>,
}

/// Access\[i\]'s pre-computation at D and E (Alg. 3, "D & E's input"): (σ, δ, ρ) and the pad
/// p, drawn from a fresh sub-seed of their PRG ([`D::access_pre`], [`E::access_pre`]).
#[derive(Clone)]
pub struct AccessPre {
    rotation: Rotation,
    pad: Strings,
}

impl core::fmt::Debug for AccessPre {
    /// Shape only: (σ, δ, ρ) and p are secret from C.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "AccessPre({:?}, ..)", self.pad)
    }
}

impl AccessPre {
    /// (σ, δ, ρ).
    pub fn rotation(&self) -> &Rotation {
        &self.rotation
    }
}

fn shared_pre(pair: &mut doram_prim::AesPrg, s: &AccessShape) -> AccessPre {
    let mut prg = instance(pair);
    let rotation = Rotation::random(&s.params, s.i, &mut prg);
    let pad = Strings::random(s.tuples(), s.tuple_bits(), &mut prg);
    AccessPre { rotation, pad }
}

fn check_pre(s: &AccessShape, pre: &AccessPre) -> Result<(), Fjkw15Error> {
    if pre.pad.count() != s.tuples() || pre.pad.width() != s.tuple_bits() {
        return Err(Fjkw15Error::InvalidInput(
            "Access pre-computation of another tree",
        ));
    }
    Ok(())
}

/// [FJKW15 Alg. 3, step 1] Rot[σ, δ, ρ](share ⊕ p).
fn rotate(rotation: &Rotation, p: &Strings, share: &Strings) -> Strings {
    rotation.forward().apply(&share.xor(p))
}

fn check_inputs(s: &AccessShape, path: &Strings, n: u64) -> Result<(), Fjkw15Error> {
    if path.count() != s.tuples() || path.width() != s.tuple_bits() {
        return Err(Fjkw15Error::InvalidInput(
            "a path share of OT_i has (d_i + 4)·w tuples",
        ));
    }
    if n >> s.params.m() != 0 {
        return Err(Fjkw15Error::InvalidInput("an address share has m bits"));
    }
    Ok(())
}

/// The A fields of every row of `path` (|A_i| bits each).
fn a_fields(s: &AccessShape, path: &Strings) -> Strings {
    let (off, bits) = (s.layout().a_offset(), s.params.a_bits(s.i));
    let rows: Vec<Vec<u8>> = (0..path.count())
        .map(|t| path.bit_range(t, off, bits))
        .collect();
    Strings::from_rows(bits, rows.iter().map(Vec::as_slice))
}

/// The 2^τ labels of a flipped A field `a` (one |A_i|-bit row) as SS-IOT messages.
fn labels(iot: &IotParams, a: &Strings) -> Strings {
    let d = iot.msg_bits();
    let rows: Vec<Vec<u8>> = (0..iot.n()).map(|t| a.bit_range(0, t * d, d)).collect();
    Strings::from_rows(d, rows.iter().map(Vec::as_slice))
}

/// A tuple share (fb, n, label, a) as one row.
fn tuple_row(s: &AccessShape, fb: bool, n: u64, label: u64, a: &Strings) -> Strings {
    let layout = s.layout();
    let mut row = Strings::zeros(1, layout.bits());
    row.set_field(0, 0, 1, u64::from(fb));
    row.set_field(
        0,
        layout.prefix_offset(),
        s.params.prefix_bits(s.i) as usize,
        n,
    );
    row.set_field(
        0,
        layout.label_offset(),
        s.params.depth(s.i) as usize,
        label,
    );
    row.set_bit_range(0, layout.a_offset(), a.width(), a.get(0));
    row
}

impl D {
    /// FJKW15 Alg. 3 at D: rotates and masks its path share (step 1), and sends it with its
    /// share of N_{i+1} (step 2) and its SS-COT (step 3) and SS-IOT (step 4) messages to C.
    /// `path` is s_D[P_{L_i}] ([`ForestShare::read_path`](crate::storage::ForestShare)), `n`
    /// is s_D\[N\].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `path` or `n` has the wrong shape; nothing is consumed
    /// then.
    pub fn access(
        &mut self,
        s: &AccessShape,
        path: &Strings,
        n: u64,
    ) -> Result<(AccessAtD, AccessFromD), Fjkw15Error> {
        check_inputs(s, path, n)?;
        let pre = self.access_pre(s);
        self.access_with(s, pre, path, n)
    }

    /// Access\[i\]'s pre-computation at D: (σ, δ, ρ) and p from the D–E PRG.
    pub fn access_pre(&mut self, s: &AccessShape) -> AccessPre {
        shared_pre(&mut self.with_e, s)
    }

    /// [`D::access`] with its pre-computation `pre` ([`D::access_pre`]) drawn earlier.
    ///
    /// # Errors
    /// As [`D::access`]; [`Fjkw15Error::InvalidInput`] if `pre` is of another tree.
    pub fn access_with(
        &mut self,
        s: &AccessShape,
        pre: AccessPre,
        path: &Strings,
        n: u64,
    ) -> Result<(AccessAtD, AccessFromD), Fjkw15Error> {
        check_inputs(s, path, n)?;
        check_pre(s, &pre)?;
        let (p, i) = (&s.params, s.i);
        let AccessPre { rotation, pad } = pre;
        // [FJKW15 Alg. 3, step 1] s_D[Rot[σ, δ, ρ](P_{L_i})] from s_D[P_{L_i}] ⊕ p.
        let rotated = rotate(&rotation, &pad, path);
        // [FJKW15 Alg. 3, step 3] b_t = s_D[fb_t | N_t] ⊕ [1 | s_D[N_i]].
        let cot = match s.cot() {
            Some(cot) => {
                let layout = s.layout();
                let mine = u128::from(p.prefix(n, i)) << 1 | 1;
                let b: Vec<u128> = (0..s.tuples())
                    .map(|t| layout.key(rotated.get(t)) ^ mine)
                    .collect();
                Some(self.cot_help_tagged(&cot, &b)?)
            }
            None => None,
        };
        // [FJKW15 Alg. 3, step 4] D's index share s_D[N^(i+1)] ⊕ ρ_i.
        let iot = match s.iot() {
            Some(iot) => Some(self.iot_help(&iot, p.chunk(n, i + 1) ^ rotation.rho())?),
            None => None,
        };
        // [FJKW15 Alg. 3, step 2] D → C: the rotated share and s_D[N_{i+1}].
        let prefix = p.prefix(n, (i + 1).min(p.h()));
        let prefix_bytes = s.prefix_bits().div_ceil(8);
        let msg = AccessFromD {
            path: rotated,
            prefix,
            prefix_bytes,
            cot,
            iot,
        };
        Ok((AccessAtD { rotation }, msg))
    }
}

impl E {
    /// FJKW15 Alg. 3 at E: rotates and masks its path share (step 1) and sends its SS-COT
    /// (step 3) and SS-IOT (step 4) messages to C; keeps its shares of T_i and P*_{L_i}.
    /// `path` is s_E[P_{L_i}], `n` is s_E\[N\], `label` is L_i (0 for i = 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if an input has the wrong shape; nothing is consumed then.
    pub fn access(
        &mut self,
        s: &AccessShape,
        path: &Strings,
        n: u64,
        label: u64,
    ) -> Result<(AccessAtE, AccessFromE), Fjkw15Error> {
        check_inputs(s, path, n)?;
        if label >= s.params.leaves(s.i) {
            return Err(Fjkw15Error::InvalidInput("L_i has d_i bits"));
        }
        let pre = self.access_pre(s);
        self.access_with(s, pre, path, n, label)
    }

    /// Access\[i\]'s pre-computation at E: (σ, δ, ρ) and p from the D–E PRG.
    pub fn access_pre(&mut self, s: &AccessShape) -> AccessPre {
        shared_pre(&mut self.with_d, s)
    }

    /// [`E::access`] with its pre-computation `pre` ([`E::access_pre`]) drawn earlier.
    ///
    /// # Errors
    /// As [`E::access`]; [`Fjkw15Error::InvalidInput`] if `pre` is of another tree.
    pub fn access_with(
        &mut self,
        s: &AccessShape,
        pre: AccessPre,
        path: &Strings,
        n: u64,
        label: u64,
    ) -> Result<(AccessAtE, AccessFromE), Fjkw15Error> {
        check_inputs(s, path, n)?;
        check_pre(s, &pre)?;
        let (p, i) = (&s.params, s.i);
        if label >= p.leaves(i) {
            return Err(Fjkw15Error::InvalidInput("L_i has d_i bits"));
        }
        let AccessPre { rotation, pad } = pre;
        // [FJKW15 Alg. 3, step 1] s_E[Rot[σ, δ, ρ](P_{L_i})] from s_E[P_{L_i}] ⊕ p.
        let rotated = rotate(&rotation, &pad, path);
        let a = a_fields(s, &rotated);
        let (y, cot) = match s.cot() {
            Some(cot) => {
                // [FJKW15 Alg. 3, step 3] m_t = s_E[Rot[ρ](A_t)] ⊕ y and
                // a_t = s_E[fb_t | N_t] ⊕ [0 | s_E[N_i]].
                let y = Strings::random(1, a.width(), &mut self.local);
                let mut m = a.clone();
                for t in 0..m.count() {
                    m.xor_row(t, y.get(0));
                }
                let layout = s.layout();
                let mine = u128::from(p.prefix(n, i)) << 1;
                let keys: Vec<u128> = (0..s.tuples())
                    .map(|t| layout.key(rotated.get(t)) ^ mine)
                    .collect();
                (y, Some(self.cot_send_tagged(&cot, &m, &keys)?))
            }
            // [FJKW15 Alg. 3, boundary case i = 0] E's share of Rot[ρ](A_0) plays y.
            None => (a.gather(&[0]), None),
        };
        // [FJKW15 Alg. 3, step 4] SS-IOT on (y_0, …, y_{2^τ−1}) and s_E[N^(i+1)].
        let iot = match s.iot() {
            Some(iot) => Some(self.iot_send(&iot, &labels(&iot, &y), p.chunk(n, i + 1))?),
            None => None,
        };
        // [FJKW15 Alg. 3, step 5] s_E[T_i] = (0, s_E[N_i], L_i, y); s_E[P*] = E's rotated share.
        let tuple = tuple_row(s, false, p.prefix(n, i), label, &y);
        let path = (i > 0).then_some(rotated);
        Ok((
            AccessAtE {
                rotation,
                tuple,
                path,
            },
            AccessFromE { cot, iot },
        ))
    }
}

impl C {
    /// FJKW15 Alg. 3 at C: the matching tuple j_1 and its masked A field from SS-COT (step 3),
    /// j_2 and y_{j_2} from SS-IOT (step 4), and the outputs of step 5.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D or E for a message of the wrong shape;
    /// [`Fjkw15Error::Matches`] if not exactly one tuple matches (a broken forest, or a peer
    /// that deviated); [`Fjkw15Error::Inconsistent`] if SS-IOT has no unique match.
    pub fn access(
        &mut self,
        s: &AccessShape,
        from_d: &AccessFromD,
        from_e: &AccessFromE,
    ) -> Result<AccessAtC, Fjkw15Error> {
        check(from_d, self.roles.party(Role::D), s)?;
        check(from_e, self.roles.party(Role::E), s)?;
        let (p, i) = (&s.params, s.i);
        let d_a = a_fields(s, &from_d.path);
        // [FJKW15 Alg. 3, step 3] (j_1, ē), and z = ē ⊕ d̄ with d̄ the A field of D's j_1-th
        // tuple (i = 0: z is D's share of Rot[ρ](A_0)).
        let (j1, z) = match (s.cot(), &from_e.cot, &from_d.cot) {
            (Some(cot), Some(e), Some(d)) => {
                let (j1, e_bar) = self.cot_receive_tagged_one(&cot, e, d)?;
                let mut z = Strings::from_rows(d_a.width(), [e_bar.as_slice()]);
                z.xor_row(0, d_a.get(j1));
                (j1, z)
            }
            _ => (0, d_a.gather(&[0])),
        };
        // [FJKW15 Alg. 3, steps 4–5] (j_2, y_{j_2}); L_{i+1} = y_{j_2} ⊕ z_{j_2}.
        let (next_label, j2) = match (s.iot(), &from_e.iot, &from_d.iot) {
            (Some(iot), Some(e), Some(d)) => {
                let (j2, y_j2) = self.iot_receive(&iot, e, d)?;
                let bits = iot.msg_bits();
                let z_j2 = z.field(0, j2 * bits, bits);
                (Some(get_bits(&y_j2, 0, bits) ^ z_j2), Some(j2))
            }
            _ => (None, None),
        };
        // [FJKW15 Alg. 3, step 5] s_C[T_i] = (1, s_D[N_i], 0^d_i, z).
        let n_i = from_d.prefix >> (s.prefix_bits() - p.prefix_bits(i) as usize);
        let tuple = tuple_row(s, true, n_i, 0, &z);
        // [FJKW15 Alg. 3, step 5] s_C[P*]: D's share, tuple j_1 with fb flipped, rest random.
        let path = (i > 0).then(|| {
            let mut path = from_d.path.clone();
            let fb = path.field(j1, 0, 1);
            let mut row = Strings::random(1, path.width(), &mut self.local);
            row.set_field(0, 0, 1, fb ^ 1);
            path.set(j1, row.get(0));
            path
        });
        Ok(AccessAtC {
            next_label,
            j2,
            tuple,
            path,
        })
    }
}
