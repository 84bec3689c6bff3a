//! Eviction\[i\] (FJKW15 §4, Algorithm 5; notes §5.5) as round functions of C, D and E, split
//! into a pre-computation and an online part (FJKW15 §1: "a pre-computation (off-line) phase
//! generates correlated randomness, PRF keys, permutations and garbled circuits"; which steps
//! move there is our scheduling, possible because C's share after the Shift is its own PRG
//! output q′):
//!
//! * **Pre-computation** ([`C::evict_pre`], [`D::evict_pre`], [`E::evict_pre`]): D's Shift
//!   message Π(q) ⊕ q′ (Π from Access's rotation, drawn in pre-computation too); the buckets'
//!   permutations π_j (C–E PRG); E's garbled F2FT per internal bucket and F2ET for the leaf
//!   node by the uniform pick rule ([`crate::plain::f2ft_uniform`]), with its random offsets
//!   λ_0, λ_1, λ_2 as early inputs, and C's labels for its share bits
//!   (π_j(q′)), both sent to D ([`crate::gc`]); C's SS-XOT sender message on its items, sent to
//!   E, and D's pads of that instance.
//! * **Online**: (step 1) C's Shift message u = X_C ⊕ q; E's new share Π(X) ⊕ q′ and its
//!   buckets permuted by π_j (P**); (steps 2–3) E's labels for its share bits, D evaluates and
//!   learns two slots per internal bucket and two empty slots of the leaf node ([`Picks`]);
//!   (steps 4–6) D's index list β and the SS-XOT on E's items, in the pad-free form of
//!   [`crate::xot`] (D keeps the pads as its share of the moved path); (step 7) C's part, with
//!   the pad ξ C and E share, goes to D, which folds in its own ([`D::evict_write`]); D and E
//!   write back.
//!
//! For i = 0 only the Shift of (T_0)′ (flipping its A field back by ρ_0) and the write-back run
//! (FJKW15 §4: "For i = 0 protocol Eviction\[i\] skips all the steps in Algorithm 5 except the
//! last one").

use doram_prim::AesPrg;

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::gc::{GcFromC, GcLate, GcLateKeys, GcShape, GcTables};
use crate::msgs::{ShiftFromC, ShiftFromD, XotFromSender, check};
use crate::params::{LEAF_BUCKETS, Params};
use crate::party::{C, D, E, Role, instance};
use crate::rotation::Rotation;
use crate::sample::permutation;
use crate::shift::{ShiftKeys, ShiftMap, ShiftParams};
use crate::xot::{XotIndices, XotPads, XotParams};

/// The public parameters of Eviction\[i\].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EvictShape {
    params: Params,
    i: usize,
}

impl EvictShape {
    /// Eviction\[i\] in a forest of `params`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if i > h.
    pub fn new(params: Params, i: usize) -> Result<EvictShape, Fjkw15Error> {
        if i > params.h() {
            return Err(Fjkw15Error::InvalidInput("trees are OT_0..OT_h"));
        }
        Ok(EvictShape { params, i })
    }

    /// Tuples of the path P* (0 for OT_0, whose only tuple is (T_0)′).
    fn tuples(&self) -> usize {
        if self.i == 0 {
            0
        } else {
            self.params.path_tuples(self.i)
        }
    }

    fn bits(&self) -> usize {
        self.params.tuple_bits(self.i)
    }

    fn shift(&self) -> ShiftParams {
        ShiftParams::new(self.tuples() + 1, self.bits())
    }

    /// The parameters of the Shift of P* ‖ (T_i)′ (for parsing its messages).
    pub fn shift_params(&self) -> ShiftParams {
        self.shift()
    }

    /// The parameters of SS-XOT\[k+2 choose k\] (for parsing its messages).
    pub fn xot_params(&self) -> XotParams {
        self.xot()
    }

    fn xot(&self) -> XotParams {
        let k = self.tuples();
        XotParams::new(k + 2, k, self.bits()).expect("k ≤ k + 2 < 2^32")
    }

    /// The GC shapes of this Eviction's circuits, bucket by bucket: F2FT for the d_i internal
    /// buckets, F2ET for the leaf node (none for i = 0).
    ///
    /// # Errors
    /// Never for a valid shape; [`Fjkw15Error::InvalidInput`] otherwise.
    pub fn gc_shapes(&self) -> Result<Vec<GcShape>, Fjkw15Error> {
        if self.i == 0 {
            return Ok(Vec::new());
        }
        let [(_, ft), (_, et)] = circuits(self)?;
        let d = self.params.depth(self.i) as usize;
        Ok((0..=d)
            .map(|j| if j < d { ft.clone() } else { et.clone() })
            .collect())
    }

    /// The bucket boundaries of P**: d_i internal buckets of w, then one leaf node of 4w.
    fn groups(&self) -> Vec<std::ops::Range<usize>> {
        let (d, w) = (self.params.depth(self.i) as usize, self.params.w());
        let mut out: Vec<_> = (0..d).map(|j| j * w..(j + 1) * w).collect();
        out.push(d * w..(d + LEAF_BUCKETS) * w);
        out
    }
}

/// What D learns from the garbled circuits of Alg. 5, steps 2–3: `internal\[j\]` = (α¹_j, α²_j)
/// in bucket j of P** (slots 0..w), and `leaf` = (α¹, α²) in the leaf node (slots 0..4w).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picks {
    /// Two distinct slots per internal bucket, root first.
    pub internal: Vec<[usize; 2]>,
    /// Two distinct empty slots of the leaf node.
    pub leaf: [usize; 2],
}

/// C's or E's state between the rounds of Eviction\[i\]: its share of P** and of (T_i)′.
#[derive(Clone, Debug)]
pub struct EvictShare {
    path: Strings,
    tuple: Strings,
}

impl EvictShare {
    /// The share of P** (after Shift and the bucket permutations): the input of the circuits.
    pub fn path(&self) -> &Strings {
        &self.path
    }
}

/// The Shift map of Eviction\[i\]: the inverse rotation on P*, and (T_i)′ kept last; both get
/// the flip back by ρ.
fn shift_map(s: &EvictShape, rotation: &Rotation) -> ShiftMap {
    if s.i == 0 {
        // OT_0: only (T_0)′, whose A field the inverse rotation flips back.
        return rotation.inverse();
    }
    rotation.inverse().append_fixed(1)
}

/// P* ‖ (T_i)′ as one sequence.
fn joined(s: &EvictShape, path: &Strings, tuple: &Strings) -> Result<Strings, Fjkw15Error> {
    if path.count() != s.tuples()
        || path.width() != s.bits()
        || tuple.count() != 1
        || tuple.width() != s.bits()
    {
        return Err(Fjkw15Error::InvalidInput(
            "Eviction takes shares of P* and of (T_i)′",
        ));
    }
    let rows = (0..path.count()).map(|t| path.get(t)).chain([tuple.get(0)]);
    Ok(Strings::from_rows(s.bits(), rows))
}

/// π_j for every bucket of the path as one gather order over P* (C–E PRG, a fresh sub-seed).
fn bucket_order(s: &EvictShape, pair: &mut AesPrg) -> Vec<usize> {
    let mut prg = instance(pair);
    let mut order: Vec<usize> = Vec::with_capacity(s.tuples());
    for g in s.groups() {
        let pi = permutation(g.len(), &mut prg);
        order.extend(pi.into_iter().map(|p| g.start + p));
    }
    order
}

/// Splits the shifted sequence P* ‖ (T_i)′ and applies the buckets' π_j (`order`) to P*.
fn split(s: &EvictShape, shifted: &Strings, order: &[usize]) -> EvictShare {
    EvictShare {
        path: shifted.gather(order),
        tuple: shifted.gather(&[s.tuples()]),
    }
}

/// β (Alg. 5, step 4, 0-based): slot x of the new path takes item β\[x\] of
/// P** ‖ (T_i)′ ‖ dummy; then each bucket's indices are permuted by D.
fn beta(s: &EvictShape, picks: &Picks, rng: &mut AesPrg) -> Result<Vec<usize>, Fjkw15Error> {
    let (d, w, k) = (s.params.depth(s.i) as usize, s.params.w(), s.tuples());
    let distinct = |p: &[usize; 2], n: usize| p[0] != p[1] && p[0] < n && p[1] < n;
    if picks.internal.len() != d
        || !picks.internal.iter().all(|p| distinct(p, w))
        || !distinct(&picks.leaf, LEAF_BUCKETS * w)
    {
        return Err(Fjkw15Error::InvalidInput(
            "two distinct slots per bucket of the path",
        ));
    }
    let mut beta: Vec<usize> = (0..k).collect();
    // The root's two slots receive (T_i)′ and the dummy; every other bucket's two slots the
    // two tuples picked in the bucket above; the leaf's two (empty) tuples are dropped.
    let mut incoming = [k, k + 1];
    for (j, pick) in picks.internal.iter().enumerate() {
        for b in 0..2 {
            beta[w * j + pick[b]] = incoming[b];
        }
        incoming = pick.map(|slot| w * j + slot);
    }
    for (b, slot) in picks.leaf.iter().enumerate() {
        beta[w * d + slot] = incoming[b];
    }
    // [FJKW15 Alg. 5, step 4] "divides I into d_i + 4 chunks … and permutes each chunk".
    for chunk in beta.chunks_mut(w) {
        let pi = permutation(chunk.len(), rng);
        let before = chunk.to_vec();
        for (x, p) in pi.into_iter().enumerate() {
            chunk[x] = before[p];
        }
    }
    Ok(beta)
}

/// C's or E's k + 2 items: P** rows, (T_i)′, and its share of the dummy (fb = 0, the rest
/// random; notes Q10).
fn items(share: &EvictShare, local: &mut AesPrg) -> Strings {
    let mut dummy = Strings::random(1, share.tuple.width(), local);
    dummy.set_field(0, 0, 1, 0);
    let rows = (0..share.path.count()).map(|t| share.path.get(t));
    Strings::from_rows(
        share.tuple.width(),
        rows.chain([share.tuple.get(0), dummy.get(0)]),
    )
}

/// FJKW15 Alg. 5, step 7: C → D, C's share of the new path P′ (or of the new OT_0 tuple).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictFromC {
    path: Strings,
}

impl EvictFromC {
    /// The share, for D to write back into its share of OT_i.
    pub fn path(&self) -> &Strings {
        &self.path
    }
}

impl crate::msgs::WireMessage for EvictFromC {
    type Shape = EvictShape;
    const WHAT: &'static str = "Eviction (Alg. 5, step 7) s_C[P′]";

    fn wire_len(s: &EvictShape) -> usize {
        s.tuples().max(1) * s.bits().div_ceil(8)
    }

    fn fits(&self, s: &EvictShape) -> bool {
        self.path.count() == s.tuples().max(1) && self.path.width() == s.bits()
    }

    fn encode(&self) -> Vec<u8> {
        self.path.as_bytes().to_vec()
    }

    fn decode(bytes: &[u8], s: &EvictShape) -> Result<Self, doram_core::CodecError> {
        Ok(EvictFromC {
            path: Strings::decode(bytes, s.tuples().max(1), s.bits())?,
        })
    }
}

/// ξ, the pad C and E XOR into their new shares (Alg. 5, step 6), from their shared PRG.
fn xi(s: &EvictShape, pair: &mut AesPrg) -> Strings {
    Strings::random(s.tuples().max(1), s.bits(), &mut instance(pair))
}

fn no_moves(s: &EvictShape) -> Result<(), Fjkw15Error> {
    if s.i == 0 {
        return Err(Fjkw15Error::InvalidInput(
            "Eviction[0] moves no tuples: use evict_root",
        ));
    }
    Ok(())
}

/// C's pre-computation of Eviction\[i\] ([`C::evict_pre`]): the Shift correlation, whose q′
/// is C's share of P** before its buckets' π_j.
#[derive(Clone, Debug)]
pub struct EvictPreC {
    keys: ShiftKeys,
}

/// D's pre-computation of Eviction\[i\] before its peers' messages ([`D::evict_pre`]).
#[derive(Clone, Debug)]
pub struct EvictPreDPending {
    xot: Option<XotPads>,
}

/// D's pre-computation of Eviction\[i\]: the pads of the XOT on C's shares, the garbled
/// circuits and C's labels.
#[derive(Clone, Debug)]
pub struct EvictPreD {
    xot: Option<XotPads>,
    tables: Vec<GcTables>,
    c_labels: Vec<GcFromC>,
}

impl EvictPreDPending {
    /// D's pre-computation with E's garbled circuits and C's labels, bucket by bucket (none
    /// for i = 0); their shapes are checked where D evaluates them.
    pub fn finish(self, tables: Vec<GcTables>, c_labels: Vec<GcFromC>) -> EvictPreD {
        EvictPreD {
            xot: self.xot,
            tables,
            c_labels,
        }
    }
}

/// E's pre-computation of Eviction\[i\] before its peers' messages ([`E::evict_pre`]).
#[derive(Clone)]
pub struct EvictPreEPending {
    order: Vec<usize>,
    keys: Vec<GcLateKeys>,
}

/// E's pre-computation of Eviction\[i\]: the buckets' π_j, the keys of its online labels,
/// D's Shift message and C's XOT message.
#[derive(Clone)]
pub struct EvictPreE {
    order: Vec<usize>,
    keys: Vec<GcLateKeys>,
    shift: ShiftFromD,
    xot: Option<XotFromSender>,
}

impl EvictPreEPending {
    /// E's pre-computation with D's Shift message and C's XOT message (none for i = 0).
    pub fn finish(self, shift: ShiftFromD, xot: Option<XotFromSender>) -> EvictPreE {
        EvictPreE {
            order: self.order,
            keys: self.keys,
            shift,
            xot,
        }
    }
}

/// D's share of the moved path between its SS-XOT round and C's write-back
/// ([`D::evict_move`], [`D::evict_write`]).
#[derive(Clone, Debug)]
pub struct EvictShareD(Strings);

impl core::fmt::Debug for EvictPreEPending {
    /// Shape only: the permutations and keys are secret.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "EvictPreEPending({} circuits, ..)", self.keys.len())
    }
}

impl core::fmt::Debug for EvictPreE {
    /// Shape only: the permutations and keys are secret.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "EvictPreE({} circuits, ..)", self.keys.len())
    }
}

/// A malformed count of pre-computed messages from `role`.
fn count_fault(roles: &crate::party::Roles, role: Role, what: &'static str) -> Fjkw15Error {
    doram_core::wire::PeerFault::malformed(roles.party(role), what, "one instance per bucket")
        .into()
}

impl C {
    /// FJKW15 Alg. 5 at C, pre-computation (our scheduling; [module docs](self)): the Shift
    /// correlation (C–D PRG), whose q′ is C's share of P* ‖ (T_i)′ after step 1; with the
    /// buckets' π_j (C–E PRG) that fixes C's circuit inputs, so C's labels go to D now
    /// (steps 2–3); and C's share as SS-XOT's items, so the XOT on C's shares sends now
    /// (steps 5–6, C → E). Returns (the material, C's labels for D bucket by bucket, the XOT
    /// message for E); none of the messages for i = 0.
    ///
    /// # Errors
    /// Never for a valid shape.
    pub fn evict_pre(
        &mut self,
        s: &EvictShape,
    ) -> Result<(EvictPreC, Vec<GcFromC>, Option<XotFromSender>), Fjkw15Error> {
        let keys = self.shift_keys(&s.shift());
        if s.i == 0 {
            return Ok((EvictPreC { keys }, Vec::new(), None));
        }
        let order = bucket_order(s, &mut self.with_e);
        let share = split(s, keys.share(), &order);
        let [(_, ft_shape), (_, et_shape)] = circuits(s)?;
        let (d, w) = (s.params.depth(s.i) as usize, s.params.w());
        let mut ce = instance(&mut self.with_e);
        let mut labels = Vec::with_capacity(d + 1);
        for j in 0..=d {
            let (slots, shape) = if j < d {
                (w * j..w * (j + 1), &ft_shape)
            } else {
                (w * d..w * (d + LEAF_BUCKETS), &et_shape)
            };
            let bits: Vec<bool> = slots
                .flat_map(|t| {
                    let (fb, dir) = slot_bits(s, &share.path, t, (j < d).then_some(j));
                    if j < d { vec![fb, dir] } else { vec![fb] }
                })
                .collect();
            labels.push(self.gc_prelabels(shape, &bits, &mut ce)?);
        }
        let items = items(&share, &mut self.local);
        let xot = self.ss_xot_send(&s.xot(), &items)?;
        Ok((EvictPreC { keys }, labels, Some(xot)))
    }

    /// FJKW15 Alg. 5, step 1, online at A = C: Shift's message u for E from C's shares of
    /// P* (no rows for i = 0) and (T_i)′.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if the shares have the wrong shape.
    pub fn evict_shift(
        &self,
        s: &EvictShape,
        pre: &EvictPreC,
        path: &Strings,
        tuple: &Strings,
    ) -> Result<ShiftFromC, Fjkw15Error> {
        let x = joined(s, path, tuple)?;
        self.shift_send_keyed(&s.shift(), &pre.keys, &x)
    }

    /// FJKW15 Alg. 5, steps 6–7, at C: its part of P′ (its SS-XOT output ⊕ ξ), for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] for messages of the wrong shape; [`Fjkw15Error::InvalidInput`]
    /// for i = 0.
    pub fn evict_finish(
        &mut self,
        s: &EvictShape,
        from_e: &XotFromSender,
        from_d: &XotIndices,
    ) -> Result<EvictFromC, Fjkw15Error> {
        no_moves(s)?;
        let out = self.xot_receive_positions(&s.xot(), from_e, from_d)?;
        Ok(EvictFromC {
            path: out.xor(&xi(s, &mut self.with_e)),
        })
    }

    /// Eviction\[0\], step 7: C's share of the new OT_0 tuple, q′ ⊕ ξ, for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless i = 0.
    pub fn evict_root(
        &mut self,
        s: &EvictShape,
        pre: &EvictPreC,
    ) -> Result<EvictFromC, Fjkw15Error> {
        if s.i != 0 {
            return Err(Fjkw15Error::InvalidInput("evict_root is Eviction[0]"));
        }
        let share = split(s, pre.keys.share(), &[]);
        Ok(EvictFromC {
            path: share.tuple.xor(&xi(s, &mut self.with_e)),
        })
    }
}

impl D {
    /// FJKW15 Alg. 5 at D, pre-computation: Shift's message Π(q) ⊕ q′ for E (step 1, Π the
    /// inverse of Access's `rotation` on P* ‖ (T_i)′), and the pads of the XOT on C's shares
    /// (steps 5–6); both from the C–D PRG.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `rotation` is not of OT_i.
    pub fn evict_pre(
        &mut self,
        s: &EvictShape,
        rotation: &Rotation,
    ) -> Result<(EvictPreDPending, ShiftFromD), Fjkw15Error> {
        let shift = self.shift_prepare(&s.shift(), &shift_map(s, rotation))?;
        let xot = if s.i > 0 {
            Some(self.xot_pads(&s.xot(), Role::C)?)
        } else {
            None
        };
        Ok((EvictPreDPending { xot }, shift))
    }

    /// FJKW15 Alg. 5, steps 2–3, at the evaluator D: α¹_j, α²_j per bucket, the two output
    /// wires of each circuit that carry 1, from the pre-computed circuits and C's labels and
    /// E's online labels `late`.
    ///
    /// # Errors
    /// [`Fjkw15Error::Overflow`] if a circuit has fewer than two 1s (the bucket has no room);
    /// [`Fjkw15Error::Peer`] for messages of the wrong count or shape;
    /// [`Fjkw15Error::Inconsistent`] for more than two 1s.
    pub fn evict_picks(
        &self,
        s: &EvictShape,
        pre: &EvictPreD,
        late: &[GcLate],
    ) -> Result<Picks, Fjkw15Error> {
        no_moves(s)?;
        let [(ft, ft_shape), (et, et_shape)] = circuits(s)?;
        let d = s.params.depth(s.i) as usize;
        if pre.tables.len() != d + 1 || late.len() != d + 1 {
            return Err(count_fault(&self.roles, Role::E, "GC messages"));
        }
        if pre.c_labels.len() != d + 1 {
            return Err(count_fault(&self.roles, Role::C, "GC labels"));
        }
        let two = |j: usize| -> Result<[usize; 2], Fjkw15Error> {
            let (c, shape) = if j < d {
                (&ft, &ft_shape)
            } else {
                (&et, &et_shape)
            };
            let out =
                self.gc_evaluate_pre(c, shape, (&pre.tables[j], &pre.c_labels[j]), &late[j])?;
            let ones: Vec<usize> = (0..out.len()).filter(|&k| out[k]).collect();
            match ones.len() {
                2 => Ok([ones[0], ones[1]]),
                0 | 1 => Err(Fjkw15Error::Overflow { tree: s.i }),
                _ => Err(Fjkw15Error::Inconsistent(
                    "a pick circuit gave more than two slots",
                )),
            }
        };
        let internal = (0..d).map(two).collect::<Result<Vec<_>, _>>()?;
        let leaf = two(d)?;
        Ok(Picks { internal, leaf })
    }

    /// FJKW15 Alg. 5, steps 4 and 6, at D: β from the circuits' `picks`, then the unmasked
    /// SS-XOT's positions (to E, to C; [`crate::xot`]) and D's share of the moved path, which
    /// [`D::evict_write`] folds into C's write-back.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0 or picks that are not two distinct slots per
    /// bucket.
    pub fn evict_move(
        &mut self,
        s: &EvictShape,
        pre: &EvictPreD,
        picks: &Picks,
    ) -> Result<(XotIndices, XotIndices, EvictShareD), Fjkw15Error> {
        no_moves(s)?;
        let pads = pre
            .xot
            .as_ref()
            .ok_or(Fjkw15Error::InvalidInput("Eviction[i ≥ 1] pre-computation"))?;
        let beta = beta(s, picks, &mut self.local)?;
        let (to_e, to_c, share) = self.ss_xot_positions(&s.xot(), pads, &beta)?;
        Ok((to_e, to_c, EvictShareD(share)))
    }

    /// FJKW15 Alg. 5, step 7, at D: its new share of P′ (OT_0's tuple for i = 0), C's
    /// write-back with D's SS-XOT share folded in (none for i = 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming C for a write-back of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] for a share of another tree.
    pub fn evict_write(
        &self,
        s: &EvictShape,
        share: Option<&EvictShareD>,
        from_c: &EvictFromC,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_c, self.roles.party(Role::C), s)?;
        match share {
            None if s.i == 0 => Ok(from_c.path.clone()),
            Some(EvictShareD(x)) if s.i > 0 && x.count() == s.tuples() => Ok(from_c.path.xor(x)),
            _ => Err(Fjkw15Error::InvalidInput(
                "D's SS-XOT share of another tree",
            )),
        }
    }
}

impl E {
    /// FJKW15 Alg. 5 at E, pre-computation: the buckets' π_j (C–E PRG), and one garbled
    /// GC\[F2FT\] per internal bucket and GC\[F2ET\] for the leaf node (steps 2–3), each
    /// with E's random offsets λ_0, λ_1, λ_2 as early inputs; E's shares are its late inputs.
    /// Returns the material and the circuits for D, bucket by bucket (none for i = 0).
    ///
    /// # Errors
    /// Never for a valid shape.
    pub fn evict_pre(
        &mut self,
        s: &EvictShape,
    ) -> Result<(EvictPreEPending, Vec<GcTables>), Fjkw15Error> {
        if s.i == 0 {
            let pending = EvictPreEPending {
                order: Vec::new(),
                keys: Vec::new(),
            };
            return Ok((pending, Vec::new()));
        }
        let order = bucket_order(s, &mut self.with_c);
        let [(ft, ft_shape), (et, et_shape)] = circuits(s)?;
        let (d, w) = (s.params.depth(s.i) as usize, s.params.w());
        let mut ce = instance(&mut self.with_c);
        let (mut tables, mut keys) = (Vec::with_capacity(d + 1), Vec::with_capacity(d + 1));
        for j in 0..=d {
            let (n, circuit, shape) = if j < d {
                (w, &ft, &ft_shape)
            } else {
                (LEAF_BUCKETS * w, &et, &et_shape)
            };
            let mut early = Vec::with_capacity(3 * n);
            for lambda in crate::plain::uniform_offsets(n, &mut self.local) {
                early.extend(crate::circuits::one_hot(lambda, n));
            }
            let (t, k) = self.gc_pregarble(circuit, shape, &early, &mut ce)?;
            tables.push(t);
            keys.push(k);
        }
        Ok((EvictPreEPending { order, keys }, tables))
    }

    /// FJKW15 Alg. 5, step 1, online at B = E: its new shares Π(u ⊕ X_E) ⊕ Π(q) ⊕ q′, every
    /// bucket permuted by π_j (P**). `path` is s_E\[P*\] (no rows for i = 0), `tuple`
    /// s_E[(T_i)′].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for shares of the wrong shape; [`Fjkw15Error::Peer`] for
    /// messages of the wrong shape.
    pub fn evict_shift(
        &mut self,
        s: &EvictShape,
        rotation: &Rotation,
        pre: &EvictPreE,
        (path, tuple): (&Strings, &Strings),
        from_c: &ShiftFromC,
    ) -> Result<EvictShare, Fjkw15Error> {
        let x = joined(s, path, tuple)?;
        let map = shift_map(s, rotation);
        let shifted = self.shift_finish(&s.shift(), &map, &x, &pre.shift, from_c)?;
        if pre.order.len() != s.tuples() {
            return Err(Fjkw15Error::InvalidInput(
                "Eviction pre-computation of another tree",
            ));
        }
        Ok(split(s, &shifted, &pre.order))
    }

    /// FJKW15 Alg. 5, steps 2–3, online at the garbler E: the labels of its shares s_E\[fb\]
    /// and B = s_E\[L\[j+1\]\] ⊕ 1 ⊕ L_i\[j+1\] for every circuit, bucket by bucket, for D.
    /// `label` is L_i.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0 or material of another tree.
    pub fn evict_late(
        &self,
        s: &EvictShape,
        label: u64,
        pre: &EvictPreE,
        share: &EvictShare,
    ) -> Result<Vec<GcLate>, Fjkw15Error> {
        no_moves(s)?;
        let (d, w) = (s.params.depth(s.i) as usize, s.params.w());
        if pre.keys.len() != d + 1 {
            return Err(Fjkw15Error::InvalidInput(
                "Eviction pre-computation of another tree",
            ));
        }
        (0..=d)
            .map(|j| {
                let slots = if j < d {
                    w * j..w * (j + 1)
                } else {
                    w * d..w * (d + LEAF_BUCKETS)
                };
                let mut bits = Vec::with_capacity(2 * slots.len());
                for t in slots {
                    let (fb, dir) = slot_bits(s, &share.path, t, (j < d).then_some(j));
                    bits.push(fb);
                    if j < d {
                        // B = s_E[L[j+1]] ⊕ 1 ⊕ L_i[j+1].
                        let path_bit = (label >> (d - 1 - j)) & 1 == 1;
                        bits.push(dir ^ true ^ path_bit);
                    }
                }
                self.gc_late(&pre.keys[j], &bits)
            })
            .collect()
    }

    /// FJKW15 Alg. 5, steps 5–6, at E: SS-XOT's sender message (to C) on E's items.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0.
    pub fn evict_move(
        &mut self,
        s: &EvictShape,
        share: &EvictShare,
    ) -> Result<XotFromSender, Fjkw15Error> {
        no_moves(s)?;
        let items = items(share, &mut self.local);
        self.ss_xot_send(&s.xot(), &items)
    }

    /// FJKW15 Alg. 5, steps 6–7, at E: its share of P′ (the output of the XOT on C's shares,
    /// whose message came in pre-computation, ⊕ ξ), to write back.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] for messages of the wrong shape; [`Fjkw15Error::InvalidInput`]
    /// for i = 0.
    pub fn evict_finish(
        &mut self,
        s: &EvictShape,
        pre: &EvictPreE,
        from_d: &XotIndices,
    ) -> Result<Strings, Fjkw15Error> {
        no_moves(s)?;
        let from_c = pre
            .xot
            .as_ref()
            .ok_or(Fjkw15Error::InvalidInput("Eviction[i ≥ 1] pre-computation"))?;
        let out = self.xot_receive_positions(&s.xot(), from_c, from_d)?;
        Ok(out.xor(&xi(s, &mut self.with_c)))
    }

    /// Eviction\[0\], step 7: E's share of the new OT_0 tuple, s_E[(T_0)′] ⊕ ξ.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless i = 0.
    pub fn evict_root(
        &mut self,
        s: &EvictShape,
        share: &EvictShare,
    ) -> Result<Strings, Fjkw15Error> {
        if s.i != 0 {
            return Err(Fjkw15Error::InvalidInput("evict_root is Eviction[0]"));
        }
        Ok(share.tuple.xor(&xi(s, &mut self.with_c)))
    }
}

/// The circuits of tree i's Eviction with their GC shapes: F2FT (with C's wires) for the
/// internal buckets, F2ET for the leaf node.
fn circuits(s: &EvictShape) -> Result<[(doram_twopc::Circuit, GcShape); 2], Fjkw15Error> {
    let w = s.params.w();
    let ft = crate::circuits::f2ft_uniform(w);
    let et = crate::circuits::f2et_uniform(LEAF_BUCKETS * w);
    let ft_c: Vec<usize> = (0..w).flat_map(|l| [4 * l + 1, 4 * l + 3]).collect();
    let et_c: Vec<usize> = (0..LEAF_BUCKETS * w).map(|l| 2 * l + 1).collect();
    let ft_late: Vec<usize> = (0..w).flat_map(|l| [4 * l, 4 * l + 2]).collect();
    let et_late: Vec<usize> = (0..LEAF_BUCKETS * w).map(|l| 2 * l).collect();
    let ft_shape = GcShape::pregarbled(&ft, &ft_c, &ft_late)?;
    let et_shape = GcShape::pregarbled(&et, &et_c, &et_late)?;
    Ok([(ft, ft_shape), (et, et_shape)])
}

/// A party's share bits of slot t of P**: fb and the direction bit of bucket depth j (if any).
fn slot_bits(s: &EvictShape, path: &Strings, t: usize, j: Option<usize>) -> (bool, bool) {
    let layout = crate::layout::TupleLayout::new(&s.params, s.i);
    let d = s.params.depth(s.i) as usize;
    let fb = path.field(t, 0, 1) == 1;
    let dir = j.is_some_and(|j| (path.field(t, layout.label_offset(), d) >> (d - 1 - j)) & 1 == 1);
    (fb, dir)
}
