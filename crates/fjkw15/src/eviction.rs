//! Eviction\[i\] (FJKW15 §4, Algorithm 5; notes §5.5) without its garbled circuits: the data
//! movement around them, as round functions of C, D and E.
//!
//! 1. Shift (C, E, D) undoes Access's rotation on the path P* and on (T_i)′ together (buckets
//!    back by σ, tuples back by δ, A fields flipped back by ρ; notes Q1); C and E then permute
//!    every internal bucket by π_j and the leaf node's 4w tuples by π_{d_i+1} (drawn from their
//!    shared PRG), giving P** ([`D::evict_shift`], [`C::evict_shift`], [`E::evict_shift`]).
//! 2. (Alg. 5, steps 2–3) D learns two slots per internal bucket (F2FT) and two empty slots of
//!    the leaf node (F2ET). **The garbled circuits that compute them are not built yet**: D's
//!    round function takes the picks ([`Picks`]) as its input, the output those circuits will
//!    give it; tests compute them with [`plain::f2ft`](crate::plain::f2ft) on the opened path.
//! 3. (Steps 4–6) D turns the picks into the index list β and runs SS-XOT\[k+2 choose k\] on
//!    C's and E's items (P** rows, (T_i)′, an empty dummy); C and E XOR a shared pad ξ
//!    ([`D::evict_move`], [`C::evict_move`], [`E::evict_move`], `*::evict_finish`).
//! 4. (Step 7) C sends its share of the new path to D; D and E write their shares back.
//!
//! For i = 0 only the last step runs (FJKW15 §4: "For i = 0 protocol Eviction\[i\] skips all
//! the steps in Algorithm 5 except the last one"), after a Shift of (T_0)′ alone that flips
//! its A field back by ρ_0.

use doram_prim::AesPrg;

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::gc::{GcFromC, GcFromE, GcPairs, GcShape};
use crate::msgs::{ShiftFromC, ShiftFromD, XotFromIndicator, XotFromSender};
use crate::params::{LEAF_BUCKETS, Params};
use crate::party::{C, D, E, instance};
use crate::rotation::Rotation;
use crate::sample::permutation;
use crate::shift::{ShiftMap, ShiftParams};
use crate::xot::XotParams;

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

/// Splits the shifted sequence and applies π_j to every bucket of the path (C–E PRG).
fn permute(s: &EvictShape, shifted: &Strings, pair: &mut AesPrg) -> EvictShare {
    let k = s.tuples();
    let mut prg = instance(pair);
    let mut order: Vec<usize> = Vec::with_capacity(k);
    if s.i > 0 {
        for g in s.groups() {
            let pi = permutation(g.len(), &mut prg);
            order.extend(pi.into_iter().map(|p| g.start + p));
        }
    }
    EvictShare {
        path: shifted.gather(&order),
        tuple: shifted.gather(&[k]),
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

impl D {
    /// FJKW15 Alg. 5, step 1, at H = D: Shift's pre-computation message Π(q) ⊕ q′ for E, Π
    /// the inverse of Access's `rotation` on P* ‖ (T_i)′.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `rotation` is not of OT_i.
    pub fn evict_shift(
        &mut self,
        s: &EvictShape,
        rotation: &Rotation,
    ) -> Result<ShiftFromD, Fjkw15Error> {
        self.shift_prepare(&s.shift(), &shift_map(s, rotation))
    }

    /// FJKW15 Alg. 5, steps 4 and 6, at D: β from the circuits' `picks`, then SS-XOT's
    /// indicator messages (to E, to C).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0 or picks that are not two distinct slots per
    /// bucket.
    pub fn evict_move(
        &mut self,
        s: &EvictShape,
        picks: &Picks,
    ) -> Result<(XotFromIndicator, XotFromIndicator), Fjkw15Error> {
        no_moves(s)?;
        let beta = beta(s, picks, &mut self.local)?;
        self.ss_xot_index(&s.xot(), &beta)
    }
}

impl C {
    /// FJKW15 Alg. 5, step 1, at A = C: Shift's message u for E; C's new shares, with every
    /// bucket permuted by π_j (P**). `path` is s_C\[P*\] (no rows for i = 0), `tuple` is
    /// s_C[(T_i)′].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if the shares have the wrong shape.
    pub fn evict_shift(
        &mut self,
        s: &EvictShape,
        path: &Strings,
        tuple: &Strings,
    ) -> Result<(EvictShare, ShiftFromC), Fjkw15Error> {
        let x = joined(s, path, tuple)?;
        let (q_prime, u) = self.shift_send(&s.shift(), &x)?;
        Ok((permute(s, &q_prime, &mut self.with_e), u))
    }

    /// FJKW15 Alg. 5, steps 5–6, at C: SS-XOT's sender message (to E) on C's items.
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

    /// FJKW15 Alg. 5, steps 6–7, at C: its share of P′ (SS-XOT output ⊕ ξ), for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] for messages of the wrong shape; [`Fjkw15Error::InvalidInput`]
    /// for i = 0.
    pub fn evict_finish(
        &mut self,
        s: &EvictShape,
        from_e: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<EvictFromC, Fjkw15Error> {
        no_moves(s)?;
        let out = self.ss_xot_finish(&s.xot(), from_e, from_d)?;
        Ok(EvictFromC {
            path: out.xor(&xi(s, &mut self.with_e)),
        })
    }

    /// Eviction\[0\], step 7: C's share of the new OT_0 tuple, s_C[(T_0)′] ⊕ ξ, for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless i = 0.
    pub fn evict_root(
        &mut self,
        s: &EvictShape,
        share: &EvictShare,
    ) -> Result<EvictFromC, Fjkw15Error> {
        if s.i != 0 {
            return Err(Fjkw15Error::InvalidInput("evict_root is Eviction[0]"));
        }
        Ok(EvictFromC {
            path: share.tuple.xor(&xi(s, &mut self.with_e)),
        })
    }
}

impl E {
    /// FJKW15 Alg. 5, step 1, at B = E: its new shares Π(u ⊕ X_E) ⊕ Π(q) ⊕ q′, every bucket
    /// permuted by π_j (P**). `path` is s_E\[P*\] (no rows for i = 0), `tuple` s_E[(T_i)′].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for shares of the wrong shape; [`Fjkw15Error::Peer`] for
    /// messages of the wrong shape.
    pub fn evict_shift(
        &mut self,
        s: &EvictShape,
        rotation: &Rotation,
        (path, tuple): (&Strings, &Strings),
        from_d: &ShiftFromD,
        from_c: &ShiftFromC,
    ) -> Result<EvictShare, Fjkw15Error> {
        let x = joined(s, path, tuple)?;
        let shifted = self.shift_finish(&s.shift(), &shift_map(s, rotation), &x, from_d, from_c)?;
        Ok(permute(s, &shifted, &mut self.with_c))
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

    /// FJKW15 Alg. 5, steps 6–7, at E: its share of P′ (SS-XOT output ⊕ ξ), to write back.
    ///
    /// # Errors
    /// As [`C::evict_finish`].
    pub fn evict_finish(
        &mut self,
        s: &EvictShape,
        from_c: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<Strings, Fjkw15Error> {
        no_moves(s)?;
        let out = self.ss_xot_finish(&s.xot(), from_c, from_d)?;
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
    let ft = crate::circuits::f2ft(w);
    let et = crate::circuits::f2et(LEAF_BUCKETS * w);
    let ft_c: Vec<usize> = (0..w).flat_map(|l| [4 * l + 1, 4 * l + 3]).collect();
    let et_c: Vec<usize> = (0..LEAF_BUCKETS * w).map(|l| 2 * l + 1).collect();
    let ft_shape = GcShape::new(&ft, &ft_c)?;
    let et_shape = GcShape::new(&et, &et_c)?;
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

impl E {
    /// FJKW15 Alg. 5, steps 2–3, at the garbler E: one GC\[F2FT\] per internal bucket of P**
    /// on E's shares s_E\[fb\] and B = s_E\[L\[j+1\]\] ⊕ 1 ⊕ L_i\[j+1\] and its random offsets
    /// λ_0, λ_1, then one GC\[F2ET\] for the leaf node. Returns the messages to D and to C,
    /// bucket by bucket. `label` is L_i.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0.
    pub fn evict_garble(
        &mut self,
        s: &EvictShape,
        label: u64,
        share: &EvictShare,
    ) -> Result<(Vec<GcFromE>, Vec<GcPairs>), Fjkw15Error> {
        no_moves(s)?;
        let [(ft, ft_shape), (et, et_shape)] = circuits(s)?;
        let (d, w) = (s.params.depth(s.i) as usize, s.params.w());
        let mut out = (Vec::with_capacity(d + 1), Vec::with_capacity(d + 1));
        for j in 0..=d {
            let (slots, circuit, shape) = if j < d {
                (w * j..w * (j + 1), &ft, &ft_shape)
            } else {
                (w * d..w * (d + LEAF_BUCKETS), &et, &et_shape)
            };
            let n = slots.len();
            let mut bits = Vec::with_capacity(3 * n);
            for t in slots {
                let (fb, dir) = slot_bits(s, &share.path, t, (j < d).then_some(j));
                bits.push(fb);
                if j < d {
                    // B = s_E[L[j+1]] ⊕ 1 ⊕ L_i[j+1].
                    let path_bit = (label >> (d - 1 - j)) & 1 == 1;
                    bits.push(dir ^ true ^ path_bit);
                }
            }
            for _ in 0..2 {
                let lambda = crate::sample::uniform_below(&mut self.local, n as u64) as usize;
                bits.extend(crate::circuits::one_hot(lambda, n));
            }
            let (to_d, to_c) = self.gc_garble(circuit, shape, &bits)?;
            out.0.push(to_d);
            out.1.push(to_c);
        }
        Ok(out)
    }
}

impl C {
    /// FJKW15 Alg. 5, steps 2–3, at C: its labels for every circuit, from its shares
    /// s_C\[fb\] and s_C\[L\[j+1\]\] of P**.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for i = 0; [`Fjkw15Error::Peer`] naming E for messages of
    /// the wrong count or shape.
    pub fn evict_choose(
        &self,
        s: &EvictShape,
        share: &EvictShare,
        pairs: &[GcPairs],
    ) -> Result<Vec<GcFromC>, Fjkw15Error> {
        no_moves(s)?;
        let [(_, ft_shape), (_, et_shape)] = circuits(s)?;
        let (d, w) = (s.params.depth(s.i) as usize, s.params.w());
        if pairs.len() != d + 1 {
            let e = self.roles.party(crate::party::Role::E);
            return Err(doram_core::wire::PeerFault::malformed(
                e,
                "GC label pairs",
                "one instance per bucket",
            )
            .into());
        }
        (0..=d)
            .map(|j| {
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
                self.gc_choose(shape, &pairs[j], &bits)
            })
            .collect()
    }
}

impl D {
    /// FJKW15 Alg. 5, steps 2–3, at the evaluator D: α¹_j, α²_j per bucket, the two output
    /// wires of each circuit that carry 1.
    ///
    /// # Errors
    /// [`Fjkw15Error::Overflow`] if a circuit has fewer than two 1s (the bucket has no room);
    /// [`Fjkw15Error::Peer`] for messages of the wrong count or shape;
    /// [`Fjkw15Error::Inconsistent`] for more than two 1s.
    pub fn evict_picks(
        &self,
        s: &EvictShape,
        from_e: &[GcFromE],
        from_c: &[GcFromC],
    ) -> Result<Picks, Fjkw15Error> {
        no_moves(s)?;
        let [(ft, ft_shape), (et, et_shape)] = circuits(s)?;
        let d = s.params.depth(s.i) as usize;
        for (n, peer) in [
            (from_e.len(), crate::party::Role::E),
            (from_c.len(), crate::party::Role::C),
        ] {
            if n != d + 1 {
                let p = self.roles.party(peer);
                return Err(doram_core::wire::PeerFault::malformed(
                    p,
                    "GC messages",
                    "one instance per bucket",
                )
                .into());
            }
        }
        let mut two = |j: usize| -> Result<[usize; 2], Fjkw15Error> {
            let (c, shape) = if j < d {
                (&ft, &ft_shape)
            } else {
                (&et, &et_shape)
            };
            let out = self.gc_evaluate(c, shape, &from_e[j], &from_c[j])?;
            let ones: Vec<usize> = (0..out.len()).filter(|&k| out[k]).collect();
            match ones.len() {
                2 => Ok([ones[0], ones[1]]),
                0 | 1 => Err(Fjkw15Error::Overflow { tree: s.i }),
                _ => Err(Fjkw15Error::Inconsistent(
                    "a pick circuit gave more than two slots",
                )),
            }
        };
        let internal = (0..d).map(&mut two).collect::<Result<Vec<_>, _>>()?;
        let leaf = two(d)?;
        Ok(Picks { internal, leaf })
    }
}
