//! PostProcessT\[i\], inserting the fresh labels into T_i (FJKW15 §4, Algorithm 4; notes §5.4),
//! and the fresh labels themselves.
//!
//! After Access, C and E share T_i = (1, N_i, L_i, A) with A = Rot\[ρ\](A_i), whose entry j_2
//! holds L_{i+1}. PostProcessT\[i\] (i < h) turns that into a sharing of
//! (T_i)′ = (1, N_i, (L_i)′, A′) with A′\[j_2\] = (L_{i+1})′ and A′\[t\] = A\[t\] elsewhere,
//! without E learning j_2 and with one message C → E online.
//!
//! * **Fresh labels** (Alg. 4, "Input known in pre-computation"): C and E each draw a random
//!   share of every (L_i)′, i = 1..h, from their own PRG; E sends its shares to D
//!   ([`E::fresh_labels`], [`C::fresh_labels`]). The text says "C/D secret-sharing", which
//!   notes §5.4 reads as C/E with E forwarding (notes §10.9). The same shares of (L_{i+1})′
//!   serve PostProcessT\[i\] (in A′) and PostProcessT\[i+1\] (as the L field), notes Q6.
//! * **Pre-computation** ([`D::post_prepare`]): D draws r_0..r_{2^τ−1} and α and sends α, r to
//!   C and s to E, with s_α = r_α ⊕ s_E\[(L_{i+1})′\] and s_t = r_t otherwise (0-based, notes
//!   §10.9).
//! * **Online**: C sends δ = α − j_2 mod 2^τ to E ([`C::post_send`]); C and E XOR their pads
//!   into their shares ([`C::post_finish`], [`E::post_finish`]).
//!
//! T_h is not part of Algorithm 4, but its label must be refreshed too (notes Q5):
//! [`C::relabel_last`] and [`E::relabel_last`] do that locally.

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::msgs::{WireMessage, check, length};
use crate::params::Params;
use crate::party::{C, D, E, Role};
use crate::sample::uniform_below;

/// Pre-computation: E → D, E's shares of the fresh labels (L_1)′..(L_h)′, ⌈d_i/8⌉
/// little-endian bytes each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreshLabels {
    shares: Vec<u64>,
    bytes: Vec<usize>,
}

/// ⌈d_i/8⌉ for i = 1..h: the bytes of each label share on the wire.
fn label_bytes(p: &Params) -> Vec<usize> {
    (1..=p.h())
        .map(|i| (p.depth(i) as usize).div_ceil(8))
        .collect()
}

/// FJKW15 Alg. 4, pre-computation: D → C, α and r_0..r_{2^τ−1}. On the wire: α in 2 bytes,
/// then the r_t as strings of d_{i+1} bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostFromDtoC {
    alpha: usize,
    r: Strings,
}

/// FJKW15 Alg. 4, pre-computation: D → E, s_0..s_{2^τ−1}.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostFromDtoE {
    s: Strings,
}

/// FJKW15 Alg. 4, step 1: C → E, δ = α − j_2 mod 2^τ, in 2 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostFromC {
    delta: usize,
}

/// The public parameters of PostProcessT\[i\], i < h.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PostShape {
    params: Params,
    i: usize,
}

impl PostShape {
    /// PostProcessT\[i\] in a forest of `params`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless i < h.
    pub fn new(params: Params, i: usize) -> Result<PostShape, Fjkw15Error> {
        if i >= params.h() {
            return Err(Fjkw15Error::InvalidInput("PostProcessT[i] is for i < h"));
        }
        Ok(PostShape { params, i })
    }

    fn fanout(&self) -> usize {
        self.params.fanout()
    }

    /// d_{i+1}, the bits of the labels in T_i's A field.
    fn label_bits(&self) -> usize {
        self.params.depth(self.i + 1) as usize
    }
}

fn two_bytes(bytes: &[u8]) -> usize {
    usize::from(u16::from_le_bytes([bytes[0], bytes[1]]))
}

fn index_in_range(v: usize, n: usize) -> Result<usize, doram_core::CodecError> {
    if v < n {
        Ok(v)
    } else {
        Err(doram_core::CodecError::OutOfRange {
            what: "a PostProcess index is not below 2^τ",
        })
    }
}

impl WireMessage for FreshLabels {
    type Shape = Params;
    const WHAT: &'static str = "fresh label shares (Alg. 4, pre-computation)";

    fn wire_len(p: &Params) -> usize {
        label_bytes(p).iter().sum()
    }

    fn fits(&self, p: &Params) -> bool {
        self.shares.len() == p.h()
            && self.bytes == label_bytes(p)
            && self
                .shares
                .iter()
                .enumerate()
                .all(|(k, &l)| l < p.leaves(k + 1))
    }

    fn encode(&self) -> Vec<u8> {
        // Every share is below 2^d_i, so its ⌈d_i/8⌉ low bytes carry it.
        let parts = self.shares.iter().zip(&self.bytes);
        parts
            .flat_map(|(l, &b)| l.to_le_bytes()[..b].to_vec())
            .collect()
    }

    fn decode(bytes: &[u8], p: &Params) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(p))?;
        let mut rest = bytes;
        let mut shares = Vec::with_capacity(p.h());
        for i in 1..=p.h() {
            let (head, tail) = rest.split_at((p.depth(i) as usize).div_ceil(8));
            rest = tail;
            let mut buf = [0u8; 8];
            buf[..head.len()].copy_from_slice(head);
            let l = u64::from_le_bytes(buf);
            if l >= p.leaves(i) {
                return Err(doram_core::CodecError::OutOfRange {
                    what: "a label share has d_i bits",
                });
            }
            shares.push(l);
        }
        Ok(FreshLabels {
            shares,
            bytes: label_bytes(p),
        })
    }
}

impl WireMessage for PostFromDtoC {
    type Shape = PostShape;
    const WHAT: &'static str = "PostProcessT (Alg. 4, pre-computation) α, r";

    fn wire_len(s: &PostShape) -> usize {
        2 + s.fanout() * s.label_bits().div_ceil(8)
    }

    fn fits(&self, s: &PostShape) -> bool {
        self.alpha < s.fanout() && self.r.count() == s.fanout() && self.r.width() == s.label_bits()
    }

    fn encode(&self) -> Vec<u8> {
        // α < 2^τ ≤ 2^16.
        let mut out = (self.alpha as u16).to_le_bytes().to_vec();
        out.extend_from_slice(self.r.as_bytes());
        out
    }

    fn decode(bytes: &[u8], s: &PostShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let alpha = index_in_range(two_bytes(bytes), s.fanout())?;
        let r = Strings::decode(&bytes[2..], s.fanout(), s.label_bits())?;
        Ok(PostFromDtoC { alpha, r })
    }
}

impl WireMessage for PostFromDtoE {
    type Shape = PostShape;
    const WHAT: &'static str = "PostProcessT (Alg. 4, pre-computation) s";

    fn wire_len(s: &PostShape) -> usize {
        s.fanout() * s.label_bits().div_ceil(8)
    }

    fn fits(&self, s: &PostShape) -> bool {
        self.s.count() == s.fanout() && self.s.width() == s.label_bits()
    }

    fn encode(&self) -> Vec<u8> {
        self.s.as_bytes().to_vec()
    }

    fn decode(bytes: &[u8], s: &PostShape) -> Result<Self, doram_core::CodecError> {
        Ok(PostFromDtoE {
            s: Strings::decode(bytes, s.fanout(), s.label_bits())?,
        })
    }
}

impl WireMessage for PostFromC {
    type Shape = PostShape;
    const WHAT: &'static str = "PostProcessT (Alg. 4, step 1) δ";

    fn wire_len(_: &PostShape) -> usize {
        2
    }

    fn fits(&self, s: &PostShape) -> bool {
        self.delta < s.fanout()
    }

    fn encode(&self) -> Vec<u8> {
        // δ < 2^τ ≤ 2^16.
        (self.delta as u16).to_le_bytes().to_vec()
    }

    fn decode(bytes: &[u8], s: &PostShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, 2)?;
        Ok(PostFromC {
            delta: index_in_range(two_bytes(bytes), s.fanout())?,
        })
    }
}

/// Random shares of (L_1)′..(L_h)′, each below 2^d_i.
fn label_shares(p: &Params, rng: &mut doram_prim::AesPrg) -> Vec<u64> {
    (1..=p.h())
        .map(|i| uniform_below(rng, p.leaves(i)))
        .collect()
}

/// XORs `v` into the L field and `a` into the A field of the one-row tuple share `t`.
fn xor_into_tuple(layout: &TupleLayout, t: &mut Strings, label_bits: usize, v: u64, a: &Strings) {
    let old = t.field(0, layout.label_offset(), label_bits);
    t.set_field(0, layout.label_offset(), label_bits, old ^ v);
    let mut field = Strings::from_rows(
        a.width(),
        [t.bit_range(0, layout.a_offset(), a.width()).as_slice()],
    );
    field.xor_assign(a);
    t.set_bit_range(0, layout.a_offset(), a.width(), field.get(0));
}

/// The 2^τ cells x_{t+δ mod 2^τ}, t = 0..2^τ − 1, as one row.
fn shifted(cells: &Strings, delta: usize) -> Strings {
    let n = cells.count();
    let order: Vec<usize> = (0..n).map(|t| (t + delta) % n).collect();
    let g = cells.gather(&order);
    let mut row = Strings::zeros(1, n * cells.width());
    for t in 0..n {
        row.set_bit_range(0, t * cells.width(), cells.width(), g.get(t));
    }
    row
}

fn check_tuple(s: &PostShape, t: &Strings) -> Result<(), Fjkw15Error> {
    if t.count() != 1 || t.width() != s.params.tuple_bits(s.i) {
        return Err(Fjkw15Error::InvalidInput(
            "a tuple share is one |T_i|-bit row",
        ));
    }
    Ok(())
}

impl C {
    /// C's shares c_i of the fresh labels (L_i)′, i = 1..h (index i − 1), from its own PRG.
    pub fn fresh_labels(&mut self, params: &Params) -> Vec<u64> {
        label_shares(params, &mut self.local)
    }

    /// FJKW15 Alg. 4, step 1: δ = α − j_2 mod 2^τ for E.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D if its message has the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] if j_2 ≥ 2^τ.
    pub fn post_send(
        &self,
        s: &PostShape,
        pre: &PostFromDtoC,
        j2: usize,
    ) -> Result<PostFromC, Fjkw15Error> {
        check(pre, self.roles.party(Role::D), s)?;
        if j2 >= s.fanout() {
            return Err(Fjkw15Error::InvalidInput("j_2 has τ bits"));
        }
        Ok(PostFromC {
            delta: (pre.alpha + s.fanout() - j2) % s.fanout(),
        })
    }

    /// FJKW15 Alg. 4, step 2: s_C\[(T_i)′\] = s_C\[T_i\] ⊕ (0, 0, L_i ⊕ c_i, (c_t)) with
    /// c_t = r_{t+δ} for t ≠ j_2 and c_{j_2} = r_{j_2+δ} ⊕ L_{i+1} ⊕ c_{i+1}. `labels` is
    /// (L_i, L_{i+1}) and `shares` is C's (c_i, c_{i+1}) (c_0 = 0: OT_0 has no label).
    ///
    /// # Errors
    /// As [`C::post_send`], and [`Fjkw15Error::InvalidInput`] if `tuple` is not a share of a
    /// tuple of OT_i.
    pub fn post_finish(
        &self,
        s: &PostShape,
        pre: &PostFromDtoC,
        j2: usize,
        tuple: &Strings,
        labels: (u64, u64),
        shares: (u64, u64),
    ) -> Result<Strings, Fjkw15Error> {
        let delta = self.post_send(s, pre, j2)?.delta;
        check_tuple(s, tuple)?;
        let mut pads = shifted(&pre.r, delta);
        let d = s.label_bits();
        let at = pads.field(0, j2 * d, d);
        pads.set_field(0, j2 * d, d, at ^ labels.1 ^ shares.1);
        let layout = TupleLayout::new(&s.params, s.i);
        let mut out = tuple.clone();
        let l_bits = s.params.depth(s.i) as usize;
        xor_into_tuple(&layout, &mut out, l_bits, labels.0 ^ shares.0, &pads);
        Ok(out)
    }

    /// T_h's new label (notes Q5): s_C\[(T_h)′\] = s_C\[T_h\] ⊕ (0, 0, L_h ⊕ c_h, 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `tuple` is not one |T_h|-bit row.
    pub fn relabel_last(
        &self,
        params: &Params,
        tuple: &Strings,
        label: u64,
        share: u64,
    ) -> Result<Strings, Fjkw15Error> {
        relabel(params, tuple, label ^ share)
    }
}

/// XORs `v` into the L field of a share of T_h.
fn relabel(p: &Params, tuple: &Strings, v: u64) -> Result<Strings, Fjkw15Error> {
    let h = p.h();
    if tuple.count() != 1 || tuple.width() != p.tuple_bits(h) {
        return Err(Fjkw15Error::InvalidInput(
            "a share of T_h is one |T_h|-bit row",
        ));
    }
    let layout = TupleLayout::new(p, h);
    let bits = p.depth(h) as usize;
    let mut out = tuple.clone();
    let old = out.field(0, layout.label_offset(), bits);
    out.set_field(0, layout.label_offset(), bits, old ^ v);
    Ok(out)
}

impl E {
    /// E's shares e_i of the fresh labels (L_i)′, i = 1..h, from its own PRG, and the message
    /// that forwards them to D (Alg. 4, "E forwards its shares to D").
    pub fn fresh_labels(&mut self, params: &Params) -> (Vec<u64>, FreshLabels) {
        let shares = label_shares(params, &mut self.local);
        let msg = FreshLabels {
            shares: shares.clone(),
            bytes: label_bytes(params),
        };
        (shares, msg)
    }

    /// FJKW15 Alg. 4, step 3: s_E\[(T_i)′\] = s_E\[T_i\] ⊕ (0, 0, e_i, (s_{t+δ})). `share` is E's
    /// e_i (0 for i = 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D or C for a message of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] if `tuple` is not a share of a tuple of OT_i.
    pub fn post_finish(
        &self,
        s: &PostShape,
        pre: &PostFromDtoE,
        from_c: &PostFromC,
        tuple: &Strings,
        share: u64,
    ) -> Result<Strings, Fjkw15Error> {
        check(pre, self.roles.party(Role::D), s)?;
        check(from_c, self.roles.party(Role::C), s)?;
        check_tuple(s, tuple)?;
        let pads = shifted(&pre.s, from_c.delta);
        let layout = TupleLayout::new(&s.params, s.i);
        let mut out = tuple.clone();
        xor_into_tuple(
            &layout,
            &mut out,
            s.params.depth(s.i) as usize,
            share,
            &pads,
        );
        Ok(out)
    }

    /// T_h's new label (notes Q5): s_E\[(T_h)′\] = s_E\[T_h\] ⊕ (0, 0, e_h, 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `tuple` is not one |T_h|-bit row.
    pub fn relabel_last(
        &self,
        params: &Params,
        tuple: &Strings,
        share: u64,
    ) -> Result<Strings, Fjkw15Error> {
        relabel(params, tuple, share)
    }
}

impl D {
    /// FJKW15 Alg. 4, pre-computation at D: draws r_0..r_{2^τ−1} and α and returns the
    /// messages (α, r) for C and s for E, with s_α = r_α ⊕ e_{i+1} and s_t = r_t otherwise.
    /// `labels` is E's [`FreshLabels`] message.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E if `labels` has the wrong shape.
    pub fn post_prepare(
        &mut self,
        s: &PostShape,
        labels: &FreshLabels,
    ) -> Result<(PostFromDtoC, PostFromDtoE), Fjkw15Error> {
        check(labels, self.roles.party(Role::E), &s.params)?;
        let e_next = labels.shares[s.i];
        let r = Strings::random(s.fanout(), s.label_bits(), &mut self.local);
        let alpha = uniform_below(&mut self.local, s.fanout() as u64) as usize;
        let mut pads = r.clone();
        let d = s.label_bits();
        let at = pads.field(alpha, 0, d);
        pads.set_field(alpha, 0, d, at ^ e_next);
        Ok((PostFromDtoC { alpha, r }, PostFromDtoE { s: pads }))
    }
}

/// A write (our design; the paper states the functionality, "writes v at index i", not the
/// protocol, notes §5.4 \[GAP\]): D → C, D's share v_D of the new record v = v_D ⊕ v_E, where
/// D and E hold the new record XOR-shared as they hold the address. On the wire ⌈d/8⌉
/// little-endian bytes.
///
/// C and E then replace the A fields of their shares of (T_h)′ by v_D and v_E
/// ([`C::write_record`], [`E::write_record`]): the old record's shares (z, y) are dropped,
/// and the new sharing is as fresh as (v_D, v_E). The parties learn that this access writes
/// (the operation is public here, as in 3P-Duoram); D learns nothing new and C only v_D.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteFromD {
    record: Strings,
}

impl WireMessage for WriteFromD {
    type Shape = Params;
    const WHAT: &'static str = "write: D's share of the new record";

    fn wire_len(p: &Params) -> usize {
        p.record_bits().div_ceil(8)
    }

    fn fits(&self, p: &Params) -> bool {
        self.record.count() == 1 && self.record.width() == p.record_bits()
    }

    fn encode(&self) -> Vec<u8> {
        self.record.as_bytes().to_vec()
    }

    fn decode(bytes: &[u8], p: &Params) -> Result<Self, doram_core::CodecError> {
        Ok(WriteFromD {
            record: Strings::decode(bytes, 1, p.record_bits())?,
        })
    }
}

/// A record's words ([`words_for`](crate::plain::words_for)) as one d-bit string.
fn record_row(p: &Params, words: &[u64]) -> Result<Strings, Fjkw15Error> {
    if !crate::plain::record_fits(words, p.record_bits()) {
        return Err(Fjkw15Error::InvalidInput(
            "a record share is d bits in 64-bit words",
        ));
    }
    let mut row = Strings::zeros(1, p.record_bits());
    for (k, &w) in words.iter().enumerate() {
        let len = (p.record_bits() - 64 * k).min(64);
        row.set_field(0, 64 * k, len, w);
    }
    Ok(row)
}

/// `tuple` (a share of T_h) with its A field replaced by `record`.
fn with_record(p: &Params, tuple: &Strings, record: &Strings) -> Result<Strings, Fjkw15Error> {
    let h = p.h();
    if tuple.count() != 1 || tuple.width() != p.tuple_bits(h) {
        return Err(Fjkw15Error::InvalidInput(
            "a share of T_h is one |T_h|-bit row",
        ));
    }
    let layout = TupleLayout::new(p, h);
    let mut out = tuple.clone();
    out.set_bit_range(0, layout.a_offset(), p.record_bits(), record.get(0));
    Ok(out)
}

impl D {
    /// A write, at D: its share `v_d` of the new record, for C ([`WriteFromD`]).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `v_d` is not a d-bit record.
    pub fn write_send(&self, p: &Params, v_d: &[u64]) -> Result<WriteFromD, Fjkw15Error> {
        Ok(WriteFromD {
            record: record_row(p, v_d)?,
        })
    }
}

impl C {
    /// A write, at C: its share of (T_h)′ with the record replaced by D's share v_D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D for a message of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] if `tuple` is not a share of T_h.
    pub fn write_record(
        &self,
        p: &Params,
        tuple: &Strings,
        from_d: &WriteFromD,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_d, self.roles.party(Role::D), p)?;
        with_record(p, tuple, &from_d.record)
    }
}

impl E {
    /// A write, at E: its share of (T_h)′ with the record replaced by its share `v_e`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `tuple` is not a share of T_h or `v_e` not a d-bit
    /// record.
    pub fn write_record(
        &self,
        p: &Params,
        tuple: &Strings,
        v_e: &[u64],
    ) -> Result<Strings, Fjkw15Error> {
        with_record(p, tuple, &record_row(p, v_e)?)
    }
}
