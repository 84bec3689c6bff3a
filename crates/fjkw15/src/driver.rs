//! The only I/O of the crate: one whole access (FJKW15 §4: Access, PostProcess, Eviction) run
//! by each party over a [`doram_net::Session`], sending and receiving the messages of the
//! round functions in a fixed order; and the shared initial load ([`load_c`], [`load_d`],
//! [`load_e`]; [`crate::load`]).
//!
//! An access starts from its pre-computation ([`precompute_c`], [`precompute_d`],
//! [`precompute_e`]: C → D, E and E → D, then D → E; it depends on no input, so it may run
//! any time before, e.g. for many accesses ahead); [`access_c`] and its siblings run it just
//! before, [`access_c_with`] and its siblings take it made earlier. Then, per tree i, in
//! order: Access\[i\] (D → C, E → C, then C → D, E: L_{i+1}); PostProcessT for every tree and
//! the write; Eviction of all trees at once (notes Q12: they are independent), each step for
//! every tree before the next. Sends never wait,
//! and every party sends what a peer needs before it waits on that peer, so the order has no
//! cycle. Access is sequential over the trees (each needs the previous tree's label).
//!
//! Inputs: D and E hold their shares of the forest ([`ForestShare`]), of the address N and,
//! for a write, of the new record. Outputs: C and E get their shares of the record read
//! (before the write).

use doram_core::{PartyId, Seed};
use doram_net::{NetError, Session};

use crate::access::{AccessFromD, AccessFromE, AccessPre, AccessShape};
use crate::bits::{Strings, get_bits};
use crate::convert::{A2b, A2bFromD, B2a, RangeStatus, ShareRing};
use crate::error::Fjkw15Error;
use crate::eviction::{EvictFromC, EvictPreC, EvictPreD, EvictPreE, EvictShape};
use crate::extract::{ExtractShape, ROWS_PER_MESSAGE, Rows, addresses, full_rows};
use crate::gc::{GcFromC, GcFromE, GcLate, GcPairs, GcTables};
use crate::layout::TupleLayout;
use crate::load::{
    InsecureOpenedShares, PermFromC, PermFromD, PermShape, initial_share, public_forest,
};
use crate::msgs::{
    SeedCtoD, SeedDtoE, SeedEtoC, ShiftFromC, ShiftFromD, WireMessage, XotFromSender, receive,
};
use crate::params::Params;
use crate::party::{C, D, E, Role, Roles};
use crate::plain::words_for;
use crate::postprocess::{
    FreshLabels, PostFromC, PostFromDtoC, PostFromDtoE, PostShape, WriteFromD,
};
use crate::storage::ForestShare;
use crate::xot::XotIndices;

/// A failed access: the transport, or the protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The transport failed; the error names the peer.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A round function failed (a peer's malformed message, an overflow, misuse).
    #[error(transparent)]
    Protocol(#[from] Fjkw15Error),
}

impl From<doram_core::wire::PeerFault> for DriverError {
    fn from(f: doram_core::wire::PeerFault) -> DriverError {
        DriverError::Protocol(f.into())
    }
}

/// FJKW15 Alg. 3 (notes Q12): C → D and C → E, the label L_{i+1} it learnt, in ⌈d_{i+1}/8⌉
/// little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextLabel {
    label: Strings,
}

impl WireMessage for NextLabel {
    type Shape = (Params, usize);
    const WHAT: &'static str = "Access: the next label L_{i+1}";

    fn wire_len((p, i): &(Params, usize)) -> usize {
        (p.depth(i + 1) as usize).div_ceil(8)
    }

    fn fits(&self, (p, i): &(Params, usize)) -> bool {
        self.label.count() == 1 && self.label.width() == p.depth(i + 1) as usize
    }

    fn encode(&self) -> Vec<u8> {
        self.label.as_bytes().to_vec()
    }

    fn decode(bytes: &[u8], (p, i): &(Params, usize)) -> Result<Self, doram_core::CodecError> {
        Ok(NextLabel {
            label: Strings::decode(bytes, 1, p.depth(i + 1) as usize)?,
        })
    }
}

impl NextLabel {
    fn new(p: &Params, i: usize, label: u64) -> NextLabel {
        let mut s = Strings::zeros(1, p.depth(i + 1) as usize);
        s.set_field(0, 0, s.width(), label);
        NextLabel { label: s }
    }

    fn value(&self) -> u64 {
        self.label.field(0, 0, self.label.width())
    }
}

/// One party after setup, in the role the session's [`Roles`] give it.
#[derive(Debug)]
pub enum Party {
    /// C.
    C(C),
    /// D.
    D(D),
    /// E.
    E(E),
}

/// The setup round over `s`: this party's pairwise seed out, the other in
/// ([`crate::party`]); `seed` is all of this party's randomness.
///
/// # Errors
/// [`Fjkw15Error::InvalidRoles`] if this party plays no role; the transport's errors.
pub fn setup(s: &mut Session, roles: Roles, seed: Seed) -> Result<Party, DriverError> {
    let party = |r: Role| roles.party(r);
    match roles.role_of(s.me()) {
        Some(Role::C) => {
            let (pending, msg) = C::setup_start(roles, seed);
            send(s, party(Role::D), &msg)?;
            Ok(Party::C(pending.finish(recv::<SeedEtoC>(
                s,
                party(Role::E),
                &(),
            )?)))
        }
        Some(Role::D) => {
            let (pending, msg) = D::setup_start(roles, seed);
            send(s, party(Role::E), &msg)?;
            Ok(Party::D(pending.finish(recv::<SeedCtoD>(
                s,
                party(Role::C),
                &(),
            )?)))
        }
        Some(Role::E) => {
            let (pending, msg) = E::setup_start(roles, seed);
            send(s, party(Role::C), &msg)?;
            Ok(Party::E(pending.finish(recv::<SeedDtoE>(
                s,
                party(Role::D),
                &(),
            )?)))
        }
        None => Err(Fjkw15Error::InvalidRoles.into()),
    }
}

fn send<M: WireMessage>(s: &mut Session, to: PartyId, m: &M) -> Result<(), DriverError> {
    Ok(s.send_bytes(to, &m.encode())?)
}

fn recv<M: WireMessage>(
    s: &mut Session,
    from: PartyId,
    shape: &M::Shape,
) -> Result<M, DriverError> {
    let bytes = s.recv_bytes(from)?;
    Ok(receive::<M>(from, &bytes, shape)?)
}

/// The record share in the A field of a share of T_h, as words.
fn record_share(p: &Params, tuple: &Strings) -> Vec<u64> {
    let layout = TupleLayout::new(p, p.h());
    let bits = p.record_bits();
    let row = tuple.bit_range(0, layout.a_offset(), bits);
    (0..words_for(bits))
        .map(|k| get_bits(&row, 64 * k, (bits - 64 * k).min(64)))
        .collect()
}

/// C's share of the record, labels L_0..L_h and Access outputs, tree by tree.
type AtC = (Vec<crate::access::AccessAtC>, Vec<u64>);

fn c_access(s: &mut Session, c: &mut C, p: &Params) -> Result<AtC, DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let (mut outs, mut labels) = (Vec::new(), vec![0u64]);
    for i in 0..=p.h() {
        let shape = AccessShape::new(*p, i)?;
        let from_d: AccessFromD = recv(s, pd, &shape)?;
        let from_e: AccessFromE = recv(s, pe, &shape)?;
        let out = c.access(&shape, &from_d, &from_e)?;
        if let Some(next) = out.next_label {
            // [FJKW15 Alg. 3, notes Q12] C → D, E: L_{i+1}.
            send(s, pd, &NextLabel::new(p, i, next))?;
            send(s, pe, &NextLabel::new(p, i, next))?;
        }
        labels.push(out.next_label.unwrap_or(0));
        outs.push(out);
    }
    Ok((outs, labels))
}

/// Eviction at C for every tree at once (notes Q12: the trees' evictions are independent): the
/// Shift messages of all trees, OT_0's write-back, then per tree its SS-XOT output and
/// write-back.
fn c_evict_all(
    s: &mut Session,
    c: &mut C,
    p: &Params,
    pre: &[EvictPreC],
    shares: &[(&Strings, &Strings)],
) -> Result<(), DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    for (i, (pre, &(path, tuple))) in pre.iter().zip(shares).enumerate() {
        let es = EvictShape::new(*p, i)?;
        send(s, pe, &c.evict_shift(&es, pre, path, tuple)?)?;
    }
    for (i, pre) in pre.iter().enumerate() {
        let es = EvictShape::new(*p, i)?;
        let new = if i == 0 {
            c.evict_root(&es, pre)?
        } else {
            let xot = es.xot_params();
            let to_c: XotIndices = recv(s, pd, &xot)?;
            let e_to_c: XotFromSender = recv(s, pe, &xot)?;
            c.evict_finish(&es, &e_to_c, &to_c)?
        };
        send(s, pd, &new)?;
    }
    Ok(())
}

/// C's pre-computation of one access ([`precompute_c`]).
#[derive(Debug)]
pub struct PreC {
    evict: Vec<EvictPreC>,
}

/// D's pre-computation of one access ([`precompute_d`]).
#[derive(Debug)]
pub struct PreD {
    access: Vec<AccessPre>,
    evict: Vec<EvictPreD>,
}

/// E's pre-computation of one access ([`precompute_e`]).
#[derive(Debug)]
pub struct PreE {
    access: Vec<AccessPre>,
    evict: Vec<EvictPreE>,
}

/// The pre-computation of one access at C (FJKW15 §1: "a pre-computation (off-line) phase";
/// which steps run here is our scheduling, [`crate::eviction`]): per tree, C's labels of the
/// pick circuits (to D) and the XOT on its shares (to E). C only sends. Its material serves
/// the next access run with it ([`access_c_with`]); parties must pre-compute the same
/// number of accesses at the same points.
///
/// # Errors
/// The transport's.
pub fn precompute_c(s: &mut Session, c: &mut C, p: &Params) -> Result<PreC, DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let mut evict = Vec::with_capacity(p.h() + 1);
    for i in 0..=p.h() {
        let (pre, labels, xot) = c.evict_pre(&EvictShape::new(*p, i)?)?;
        for m in &labels {
            send(s, pd, m)?;
        }
        if let Some(x) = &xot {
            send(s, pe, x)?;
        }
        evict.push(pre);
    }
    Ok(PreC { evict })
}

/// The pre-computation of one access at D: per tree, Access's rotation and pad, Shift's
/// message to E and the XOT pads; then E's garbled circuits and C's labels.
///
/// # Errors
/// The transport's; a peer's malformed message.
pub fn precompute_d(s: &mut Session, d: &mut D, p: &Params) -> Result<PreD, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    let (mut access, mut pending) = (Vec::new(), Vec::new());
    for i in 0..=p.h() {
        let pre = d.access_pre(&AccessShape::new(*p, i)?);
        let (pend, shift) = d.evict_pre(&EvictShape::new(*p, i)?, pre.rotation())?;
        send(s, pe, &shift)?;
        access.push(pre);
        pending.push(pend);
    }
    let mut evict = Vec::with_capacity(pending.len());
    for (i, pend) in pending.into_iter().enumerate() {
        let shapes = EvictShape::new(*p, i)?.gc_shapes()?;
        let tables = shapes
            .iter()
            .map(|g| recv::<GcTables>(s, pe, g))
            .collect::<Result<Vec<_>, _>>()?;
        let labels = shapes
            .iter()
            .map(|g| recv::<GcFromC>(s, pc, g))
            .collect::<Result<Vec<_>, _>>()?;
        evict.push(pend.finish(tables, labels));
    }
    Ok(PreD { access, evict })
}

/// The pre-computation of one access at E: per tree, Access's rotation and pad, the
/// buckets' permutations and the garbled pick circuits (to D); then D's Shift messages and
/// C's XOT messages.
///
/// # Errors
/// The transport's; a peer's malformed message.
pub fn precompute_e(s: &mut Session, e: &mut E, p: &Params) -> Result<PreE, DriverError> {
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    let (mut access, mut pending) = (Vec::new(), Vec::new());
    for i in 0..=p.h() {
        let pre = e.access_pre(&AccessShape::new(*p, i)?);
        let (pend, tables) = e.evict_pre(&EvictShape::new(*p, i)?)?;
        for t in &tables {
            send(s, pd, t)?;
        }
        access.push(pre);
        pending.push(pend);
    }
    let mut evict = Vec::with_capacity(pending.len());
    for (i, pend) in pending.into_iter().enumerate() {
        let es = EvictShape::new(*p, i)?;
        let shift: ShiftFromD = recv(s, pd, &es.shift_params())?;
        let xot = if i > 0 {
            Some(recv::<XotFromSender>(s, pc, &es.xot_params())?)
        } else {
            None
        };
        evict.push(pend.finish(shift, xot));
    }
    Ok(PreE { access, evict })
}

/// One party's pre-computation of one access, in its role.
#[derive(Debug)]
pub enum Pre {
    /// C's.
    C(PreC),
    /// D's.
    D(PreD),
    /// E's.
    E(PreE),
}

/// The pre-computation of one access at `party` ([`precompute_c`], [`precompute_d`],
/// [`precompute_e`]).
///
/// # Errors
/// As those.
pub fn precompute(s: &mut Session, party: &mut Party, p: &Params) -> Result<Pre, DriverError> {
    Ok(match party {
        Party::C(c) => Pre::C(precompute_c(s, c, p)?),
        Party::D(d) => Pre::D(precompute_d(s, d, p)?),
        Party::E(e) => Pre::E(precompute_e(s, e, p)?),
    })
}

/// Payload bytes of one access's pre-computation under `p`, over all parties.
///
/// # Errors
/// [`Fjkw15Error::InvalidInput`] if a tree's shapes cannot be built (not for valid `p`).
pub fn precompute_bytes(p: &Params) -> Result<usize, Fjkw15Error> {
    let mut bytes = 0;
    for i in 0..=p.h() {
        let es = EvictShape::new(*p, i)?;
        bytes += ShiftFromD::wire_len(&es.shift_params());
        if i > 0 {
            bytes += XotFromSender::wire_len(&es.xot_params());
            for g in es.gc_shapes()? {
                bytes += GcTables::wire_len(&g) + GcFromC::wire_len(&g);
            }
        }
    }
    Ok(bytes)
}

fn mismatch(p: &Params, trees: usize) -> Result<(), DriverError> {
    if trees == p.h() + 1 {
        Ok(())
    } else {
        Err(Fjkw15Error::InvalidInput("pre-computation of another forest").into())
    }
}

/// One access at C. Returns C's share of the record read.
///
/// # Errors
/// [`DriverError`]: the transport, a peer's malformed message, an overflow.
pub fn access_c(
    s: &mut Session,
    c: &mut C,
    p: &Params,
    write: bool,
) -> Result<Vec<u64>, DriverError> {
    let pre = precompute_c(s, c, p)?;
    access_c_with(s, c, p, write, pre)
}

/// [`access_c`] on material pre-computed earlier ([`precompute_c`]).
///
/// # Errors
/// As [`access_c`]; [`Fjkw15Error::InvalidInput`] for material of another forest.
pub fn access_c_with(
    s: &mut Session,
    c: &mut C,
    p: &Params,
    write: bool,
    pre: PreC,
) -> Result<Vec<u64>, DriverError> {
    mismatch(p, pre.evict.len())?;
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let c_fresh = c.fresh_labels(p);
    let (outs, labels) = c_access(s, c, p)?;
    let record = record_share(p, &outs[p.h()].tuple);
    let share = |i: usize| if i == 0 { 0 } else { c_fresh[i - 1] };
    let mut tuples = Vec::with_capacity(outs.len());
    for (i, out) in outs.iter().enumerate() {
        if i == p.h() {
            let mut t = c.relabel_last(p, &out.tuple, labels[i], share(i))?;
            if write {
                let from_d: WriteFromD = recv(s, pd, p)?;
                t = c.write_record(p, &t, &from_d)?;
            }
            tuples.push(t);
            continue;
        }
        let ps = PostShape::new(*p, i)?;
        let to_c: PostFromDtoC = recv(s, pd, &ps)?;
        let j2 = out
            .j2
            .ok_or(Fjkw15Error::InvalidInput("Access[i < h] gives j_2"))?;
        send(s, pe, &c.post_send(&ps, &to_c, j2)?)?;
        let l = (labels[i], labels[i + 1]);
        tuples.push(c.post_finish(&ps, &to_c, j2, &out.tuple, l, (share(i), c_fresh[i]))?);
    }
    let empty: Vec<Strings> = (0..=p.h())
        .map(|i| Strings::zeros(0, p.tuple_bits(i)))
        .collect();
    let shares: Vec<(&Strings, &Strings)> = outs
        .iter()
        .zip(&tuples)
        .enumerate()
        .map(|(i, (out, t))| (out.path.as_ref().unwrap_or(&empty[i]), t))
        .collect();
    c_evict_all(s, c, p, &pre.evict, &shares)?;
    Ok(record)
}

/// One access at D, on its share of the forest, of the address (`n`) and of a written record.
///
/// # Errors
/// As [`access_c`].
pub fn access_d(
    s: &mut Session,
    d: &mut D,
    forest: &mut ForestShare,
    n: u64,
    write: Option<&[u64]>,
) -> Result<(), DriverError> {
    let pre = precompute_d(s, d, forest.params())?;
    access_d_with(s, d, forest, (n, write), pre)
}

/// [`access_d`] on material pre-computed earlier ([`precompute_d`]).
///
/// # Errors
/// As [`access_c`].
pub fn access_d_with(
    s: &mut Session,
    d: &mut D,
    forest: &mut ForestShare,
    (n, write): (u64, Option<&[u64]>),
    pre: PreD,
) -> Result<(), DriverError> {
    let p = *forest.params();
    mismatch(&p, pre.access.len())?;
    mismatch(&p, pre.evict.len())?;
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    let fresh: FreshLabels = recv(s, pe, &p)?;
    let mut labels = vec![0u64];
    for (i, ap) in pre.access.into_iter().enumerate() {
        let shape = AccessShape::new(p, i)?;
        let (_, msg) = d.access_with(&shape, ap, &forest.read_path(i, labels[i])?, n)?;
        send(s, pc, &msg)?;
        let next = if i < p.h() {
            recv::<NextLabel>(s, pc, &(p, i))?.value()
        } else {
            0
        };
        labels.push(next);
    }
    for i in 0..p.h() {
        let (to_c, to_e) = d.post_prepare(&PostShape::new(p, i)?, &fresh)?;
        send(s, pc, &to_c)?;
        send(s, pe, &to_e)?;
    }
    if let Some(v_d) = write {
        send(s, pc, &d.write_send(&p, v_d)?)?;
    }
    // Eviction of every tree at once (notes Q12): the picks and SS-XOT positions of all trees,
    // then every tree's write-back.
    let mut mine = vec![None];
    for (i, ev) in pre.evict.iter().enumerate().skip(1) {
        let es = EvictShape::new(p, i)?;
        let late = es
            .gc_shapes()?
            .iter()
            .map(|g| recv::<GcLate>(s, pe, g))
            .collect::<Result<Vec<_>, _>>()?;
        let picks = d.evict_picks(&es, ev, &late)?;
        let (to_e, to_c, share) = d.evict_move(&es, ev, &picks)?;
        send(s, pe, &to_e)?;
        send(s, pc, &to_c)?;
        mine.push(Some(share));
    }
    for (i, share) in mine.iter().enumerate() {
        let es = EvictShape::new(p, i)?;
        let new_c: EvictFromC = recv(s, pc, &es)?;
        forest.write_path(i, labels[i], &d.evict_write(&es, share.as_ref(), &new_c)?)?;
    }
    Ok(())
}

/// One access at E, on its share of the forest, of the address (`n`) and of a written record.
/// Returns E's share of the record read.
///
/// # Errors
/// As [`access_c`].
pub fn access_e(
    s: &mut Session,
    e: &mut E,
    forest: &mut ForestShare,
    n: u64,
    write: Option<&[u64]>,
) -> Result<Vec<u64>, DriverError> {
    let pre = precompute_e(s, e, forest.params())?;
    access_e_with(s, e, forest, (n, write), (pre, false))
}

/// [`access_e`] after an A2B of the address with a range check ([`A2b::build`]): E takes
/// D's [`RangeStatus`] after its first messages (which depend on its own shares only) and
/// before it waits on anyone, so the check adds no round; an out-of-range address stops E
/// with [`Fjkw15Error::AddressOutOfRange`] as it stops C and D.
///
/// # Errors
/// As [`access_e`]; [`Fjkw15Error::AddressOutOfRange`].
pub fn access_e_checked(
    s: &mut Session,
    e: &mut E,
    forest: &mut ForestShare,
    n: u64,
    write: Option<&[u64]>,
) -> Result<Vec<u64>, DriverError> {
    let pre = precompute_e(s, e, forest.params())?;
    access_e_with(s, e, forest, (n, write), (pre, true))
}

/// [`access_e`] (`checked` false) or [`access_e_checked`] (true) on material pre-computed
/// earlier ([`precompute_e`]).
///
/// # Errors
/// As [`access_e_checked`]; [`Fjkw15Error::InvalidInput`] for material of another forest.
pub fn access_e_with(
    s: &mut Session,
    e: &mut E,
    forest: &mut ForestShare,
    (n, write): (u64, Option<&[u64]>),
    (pre, checked): (PreE, bool),
) -> Result<Vec<u64>, DriverError> {
    let p = *forest.params();
    mismatch(&p, pre.access.len())?;
    mismatch(&p, pre.evict.len())?;
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    let (e_fresh, to_d) = e.fresh_labels(&p);
    send_before_status(s, pd, &to_d, checked.then_some(pd))?;
    let (mut outs, mut labels) = (Vec::new(), vec![0u64]);
    for (i, ap) in pre.access.into_iter().enumerate() {
        let shape = AccessShape::new(p, i)?;
        let path = forest.read_path(i, labels[i])?;
        let (at_e, msg) = e.access_with(&shape, ap, &path, n, labels[i])?;
        let pending = (checked && i == 0).then_some(pd);
        send_before_status(s, pc, &msg, pending)?;
        if pending.is_some() {
            range_status_recv(s, pd)?;
        }
        outs.push(at_e);
        let next = if i < p.h() {
            recv::<NextLabel>(s, pc, &(p, i))?.value()
        } else {
            0
        };
        labels.push(next);
    }
    let record = record_share(&p, &outs[p.h()].tuple);
    let share = |i: usize| if i == 0 { 0 } else { e_fresh[i - 1] };
    let mut tuples = Vec::with_capacity(outs.len());
    for (i, out) in outs.iter().enumerate() {
        let t = if i == p.h() {
            let t = e.relabel_last(&p, &out.tuple, share(i))?;
            match write {
                Some(v_e) => e.write_record(&p, &t, v_e)?,
                None => t,
            }
        } else {
            let ps = PostShape::new(p, i)?;
            let to_e: PostFromDtoE = recv(s, pd, &ps)?;
            let delta: PostFromC = recv(s, pc, &ps)?;
            e.post_finish(&ps, &to_e, &delta, &out.tuple, share(i))?
        };
        tuples.push(t);
    }
    // Eviction of every tree at once (notes Q12): Shift, the circuits' labels and the SS-XOT
    // message of all trees, then every tree's SS-XOT output.
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    for (i, ((out, t), ev)) in outs.iter().zip(&tuples).zip(&pre.evict).enumerate() {
        let es = EvictShape::new(p, i)?;
        let empty = Strings::zeros(0, p.tuple_bits(i));
        let u: ShiftFromC = recv(s, pc, &es.shift_params())?;
        let path = out.path.as_ref().unwrap_or(&empty);
        let share = e.evict_shift(&es, &out.rotation, ev, (path, t), &u)?;
        if i == 0 {
            forest.write_path(0, labels[0], &e.evict_root(&es, &share)?)?;
            continue;
        }
        for m in e.evict_late(&es, labels[i], ev, &share)? {
            send(s, pd, &m)?;
        }
        send(s, pc, &e.evict_move(&es, &share)?)?;
    }
    for (i, ev) in pre.evict.iter().enumerate().skip(1) {
        let es = EvictShape::new(p, i)?;
        let to_e: XotIndices = recv(s, pd, &es.xot_params())?;
        forest.write_path(i, labels[i], &e.evict_finish(&es, ev, &to_e)?)?;
    }
    Ok(record)
}

/// The shared initial load at C ([`crate::load`]): step 2 of the permutation, then C's part
/// of the refresh pass, one read per item.
///
/// # Errors
/// As [`access_c`]; [`Fjkw15Error::InvalidInput`] unless 1 ≤ `items` ≤ 2^m.
pub fn load_c(s: &mut Session, c: &mut C, p: &Params, items: u64) -> Result<(), DriverError> {
    let pd = c.roles().party(Role::D);
    let shape = PermShape::new(*p, items)?;
    let from_d: PermFromD = recv(s, pd, &shape)?;
    send(s, pd, &c.load_perm(&shape, &from_d)?)?;
    for _ in 0..shape.items() {
        access_c(s, c, p, false)?;
    }
    Ok(())
}

/// The shared initial load at D ([`crate::load`]) from D's XOR shares of the records
/// (`records[N]`, d bits in words, for every address N < `items`): the public forest with
/// D's record shares, steps 1 and 3 of the permutation, D's part of the refresh pass. Returns
/// D's share of the loaded forest.
///
/// # Errors
/// As [`access_d`]; [`Fjkw15Error::InvalidInput`] for a wrong number or size of records.
pub fn load_d(
    s: &mut Session,
    d: &mut D,
    p: &Params,
    records: &[Vec<u64>],
) -> Result<ForestShare, DriverError> {
    let pc = d.roles().party(Role::C);
    let items = records.len() as u64;
    let shape = PermShape::new(*p, items)?;
    let mut forest = initial_share(&public_forest(*p, items)?, records, true)?;
    send(s, pc, &d.load_perm_start(&shape))?;
    let from_c: PermFromC = recv(s, pc, &shape)?;
    for n in d.load_perm_finish(&shape, &from_c)? {
        access_d(s, d, &mut forest, n, None)?;
    }
    Ok(forest)
}

/// The shared initial load at E ([`crate::load`]) from E's XOR shares of the records: the
/// (public) forest's shape with E's record shares, E's shares of the permuted addresses (no
/// message), E's part of the refresh pass. Returns E's share of the loaded forest.
///
/// # Errors
/// As [`access_e`]; [`Fjkw15Error::InvalidInput`] for a wrong number or size of records.
pub fn load_e(
    s: &mut Session,
    e: &mut E,
    p: &Params,
    records: &[Vec<u64>],
) -> Result<ForestShare, DriverError> {
    let items = records.len() as u64;
    let shape = PermShape::new(*p, items)?;
    let mut forest = initial_share(&public_forest(*p, items)?, records, false)?;
    for n in e.load_perm(&shape) {
        access_e(s, e, &mut forest, n, None)?;
    }
    Ok(forest)
}

/// A2B at C ([`crate::convert`]): C's additive shares in, nothing out (the XOR shares are D's
/// and E's).
///
/// # Errors
/// The transport's errors; a peer's malformed message.
pub fn a2b_c<R: ShareRing>(
    s: &mut Session,
    c: &mut C,
    a: &A2b<R>,
    x_c: &[R],
) -> Result<(), DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let from_d: A2bFromD<R> = recv(s, pd, &a.values())?;
    let pairs: GcPairs = recv(s, pe, a.gc_shape())?;
    send(s, pd, &c.a2b_choose(a, x_c, &from_d, &pairs)?)
}

/// A2B at D: D's additive shares in, D's XOR shares out.
///
/// # Errors
/// As [`a2b_c`].
pub fn a2b_d<R: ShareRing>(
    s: &mut Session,
    d: &mut D,
    a: &A2b<R>,
    x_d: &[R],
) -> Result<Vec<R::Xor>, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    send(s, pc, &d.a2b_send(a, x_d)?)?;
    let from_e: GcFromE = recv(s, pe, a.gc_shape())?;
    let from_c: GcFromC = recv(s, pc, a.gc_shape())?;
    Ok(d.a2b_finish(a, &from_e, &from_c)?)
}

/// A2B at E: E's additive shares in, E's XOR shares out.
///
/// # Errors
/// As [`a2b_c`].
pub fn a2b_e<R: ShareRing>(
    s: &mut Session,
    e: &mut E,
    a: &A2b<R>,
    x_e: &[R],
) -> Result<Vec<R::Xor>, DriverError> {
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    let (masks, to_d, to_c) = e.a2b_garble(a, x_e)?;
    send(s, pd, &to_d)?;
    send(s, pc, &to_c)?;
    Ok(masks)
}

/// D's half of an A2B with a range check ([`A2b::build`] with a bound): the A2B, then
/// [`RangeStatus`] to C and E, sent also when the address is out of range, before D fails
/// with [`Fjkw15Error::AddressOutOfRange`].
///
/// # Errors
/// As [`a2b_c`]; [`Fjkw15Error::AddressOutOfRange`].
pub fn a2b_d_checked<R: ShareRing>(
    s: &mut Session,
    d: &mut D,
    a: &A2b<R>,
    x_d: &[R],
) -> Result<Vec<R::Xor>, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    let out = a2b_d(s, d, a, x_d);
    let in_range = !matches!(
        out,
        Err(DriverError::Protocol(Fjkw15Error::AddressOutOfRange))
    );
    if out.is_ok() || !in_range {
        let status = RangeStatus::new(in_range);
        send(s, pc, &status)?;
        send(s, pe, &status)?;
    }
    out
}

/// E's send of a message it makes before it takes D's [`RangeStatus`] (`status` names D, or
/// is `None` when there is none to take). On an out-of-range address, D — and C, once it has
/// the status — stop as soon as they know, so they may have closed their links before E's
/// message goes out; a failed send then takes D's status, which D sent before it stopped, and
/// fails with [`Fjkw15Error::AddressOutOfRange`] if that is what it says. Any other failure is
/// the send's own.
fn send_before_status<M: WireMessage>(
    s: &mut Session,
    to: PartyId,
    m: &M,
    status: Option<PartyId>,
) -> Result<(), DriverError> {
    match (send(s, to, m), status) {
        (Err(err), Some(d)) => match range_status_recv(s, d) {
            Err(out_of_range @ DriverError::Protocol(Fjkw15Error::AddressOutOfRange)) => {
                Err(out_of_range)
            }
            _ => Err(err),
        },
        (r, _) => r,
    }
}

/// D's [`RangeStatus`] at C or E.
///
/// # Errors
/// The transport's errors; a malformed status; [`Fjkw15Error::AddressOutOfRange`].
pub fn range_status_recv(s: &mut Session, d: PartyId) -> Result<(), DriverError> {
    Ok(recv::<RangeStatus>(s, d, &())?.check()?)
}

/// B2A at C ([`crate::convert`]): C's XOR shares in, C's additive shares out.
///
/// # Errors
/// As [`a2b_c`].
pub fn b2a_c<R: ShareRing>(
    s: &mut Session,
    c: &mut C,
    b: &B2a<R>,
    y_c: &[R::Xor],
) -> Result<Vec<R>, DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let pairs: GcPairs = recv(s, pe, b.gc_shape())?;
    let (shares, to_d) = c.b2a_choose(b, y_c, &pairs)?;
    send(s, pd, &to_d)?;
    Ok(shares)
}

/// B2A at D: D's additive shares out.
///
/// # Errors
/// As [`a2b_c`].
pub fn b2a_d<R: ShareRing>(s: &mut Session, d: &mut D, b: &B2a<R>) -> Result<Vec<R>, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    let from_e: GcFromE = recv(s, pe, b.gc_shape())?;
    let from_c: GcFromC = recv(s, pc, b.gc_shape())?;
    Ok(d.b2a_finish(b, &from_e, &from_c)?)
}

/// B2A at E: E's XOR shares in, E's additive shares out.
///
/// # Errors
/// As [`a2b_c`].
pub fn b2a_e<R: ShareRing>(
    s: &mut Session,
    e: &mut E,
    b: &B2a<R>,
    y_e: &[R::Xor],
) -> Result<Vec<R>, DriverError> {
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    let (shares, to_d, to_c) = e.b2a_garble(b, y_e)?;
    send(s, pd, &to_d)?;
    send(s, pc, &to_c)?;
    Ok(shares)
}

/// The largest message one access under `p` sends (payload bytes), over every tree and arrow
/// of [`access_c`], [`access_d`] and [`access_e`] and their pre-computation (reads and writes
/// alike).
///
/// # Errors
/// [`Fjkw15Error::InvalidInput`] if a tree's shapes cannot be built (not for valid `p`).
pub fn max_access_message(p: &Params) -> Result<usize, Fjkw15Error> {
    let mut max = FreshLabels::wire_len(p).max(WriteFromD::wire_len(p));
    for i in 0..=p.h() {
        let shape = AccessShape::new(*p, i)?;
        max = max
            .max(AccessFromD::wire_len(&shape))
            .max(AccessFromE::wire_len(&shape));
        if i < p.h() {
            max = max.max(NextLabel::wire_len(&(*p, i)));
            let ps = PostShape::new(*p, i)?;
            max = max
                .max(PostFromDtoC::wire_len(&ps))
                .max(PostFromDtoE::wire_len(&ps))
                .max(PostFromC::wire_len(&ps));
        }
        let es = EvictShape::new(*p, i)?;
        let shift = es.shift_params();
        max = max
            .max(ShiftFromD::wire_len(&shift))
            .max(ShiftFromC::wire_len(&shift))
            .max(EvictFromC::wire_len(&es));
        if i > 0 {
            let xot = es.xot_params();
            max = max
                .max(XotFromSender::wire_len(&xot))
                .max(XotIndices::wire_len(&xot));
            for g in es.gc_shapes()? {
                max = max
                    .max(GcTables::wire_len(&g))
                    .max(GcLate::wire_len(&g))
                    .max(GcFromC::wire_len(&g));
            }
        }
    }
    Ok(max)
}

/// The largest message of the load of `items` addresses under `p` other than its accesses:
/// the permutation's ([`crate::load`]).
pub fn max_load_message(p: &Params, items: u64) -> Result<usize, Fjkw15Error> {
    let shape = PermShape::new(*p, items)?;
    Ok(PermFromD::wire_len(&shape).max(PermFromC::wire_len(&shape)))
}

/// The largest message of an A2B `a` or a B2A `b`.
pub fn max_convert_message<R: ShareRing>(a: &A2b<R>, b: &B2a<R>) -> usize {
    [a.gc_shape(), b.gc_shape()]
        .into_iter()
        .map(|g| {
            GcFromE::wire_len(g)
                .max(GcPairs::wire_len(g))
                .max(GcFromC::wire_len(g))
        })
        .max()
        .unwrap_or(0)
        .max(A2bFromD::<R>::wire_len(&a.values()))
}

/// **Insecure** load at C ([`InsecureOpenedShares`]): C sends its additive shares (of
/// Z/2^64 or F_p, [`ShareRing::BITS`]/64 words each) to D and E.
///
/// # Errors
/// The transport's errors.
pub fn insecure_dealt_load_c<R: ShareRing>(
    s: &mut Session,
    c: &C,
    x_c: &[R],
) -> Result<(), DriverError> {
    let msg = InsecureOpenedShares::new(ring_words(x_c));
    let pd = c.roles().party(Role::D);
    send(s, pd, &msg)?;
    send(s, c.roles().party(Role::E), &msg)?;
    built_recv(s, pd, x_c.len())
}

/// How long a party may wait on D's [`built_send`] for a forest of `items` items, beyond the
/// session's timeout: building it is silent (20 µs per item: 5.6 min at 2^24; measured about
/// 2 µs per item).
fn build_allowance(items: usize) -> std::time::Duration {
    std::time::Duration::from_micros(20u64.saturating_mul(items as u64))
}

/// D → C, E after building its share of a dealt forest: an empty message, so that the others,
/// idle meanwhile, wait with a timeout that allows for the building.
fn built_send(s: &mut Session, d: &D) -> Result<(), DriverError> {
    let done = InsecureOpenedShares::new(Vec::new());
    send(s, d.roles().party(Role::C), &done)?;
    send(s, d.roles().party(Role::E), &done)
}

/// Waits on D's [`built_send`] for `items` items, the session's timeout extended by
/// [`build_allowance`] meanwhile.
fn built_recv(s: &mut Session, d: PartyId, items: usize) -> Result<(), DriverError> {
    let timeout = s.timeout();
    s.set_timeout(timeout.saturating_add(build_allowance(items)));
    let r = recv::<InsecureOpenedShares>(s, d, &0);
    s.set_timeout(timeout);
    r.map(drop)
}

/// The size of C's [`InsecureOpenedShares`] message of `items` elements of `R` in
/// [`insecure_dealt_load_c`] (each element as whole 64-bit words, [`ring_words`]).
pub fn insecure_opened_bytes<R: ShareRing>(items: usize) -> usize {
    8 * words_for(R::BITS) * items
}

/// The words of each element's canonical representative, least significant first.
fn ring_words<R: ShareRing>(x: &[R]) -> Vec<u64> {
    x.iter()
        .flat_map(|v| {
            let c = v.canonical();
            (0..words_for(R::BITS)).map(move |k| (c >> (64 * k)) as u64)
        })
        .collect()
}

/// The elements [`ring_words`] encodes, from `from`.
fn ring_of_words<R: ShareRing>(from: PartyId, words: &[u64]) -> Result<Vec<R>, DriverError> {
    words
        .chunks_exact(words_for(R::BITS))
        .map(|w| {
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            R::read_le(&bytes[..R::BYTES]).map_err(|e| {
                DriverError::from(doram_core::wire::PeerFault::new(
                    from,
                    InsecureOpenedShares::WHAT,
                    e,
                ))
            })
        })
        .collect()
}

/// The plaintext values from `own` and the two opened shares, as records of words.
fn opened<R: ShareRing>(
    own: &[R],
    (pa, a): (PartyId, &InsecureOpenedShares),
    (pb, b): (PartyId, &InsecureOpenedShares),
) -> Result<Vec<Vec<u64>>, DriverError> {
    let (a, b) = (
        ring_of_words::<R>(pa, a.words())?,
        ring_of_words::<R>(pb, b.words())?,
    );
    Ok(own
        .iter()
        .zip(a)
        .zip(b)
        .map(|((x, y), z)| ring_words(&[x.plus(y).plus(z)]))
        .collect())
}

/// **Insecure** load at D ([`InsecureOpenedShares`]): D opens the memory from the three
/// parties' additive shares and returns its share of a forest holding it, then tells C and E
/// it has built it (an empty message: they wait with a timeout that allows for the building).
///
/// # Errors
/// The transport's errors; a peer's malformed message.
pub fn insecure_dealt_load_d<R: ShareRing>(
    s: &mut Session,
    d: &mut D,
    p: &Params,
    x_d: &[R],
) -> Result<ForestShare, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    send(s, pe, &InsecureOpenedShares::new(ring_words(x_d)))?;
    let count = x_d.len() * words_for(R::BITS);
    let from_c: InsecureOpenedShares = recv(s, pc, &count)?;
    let from_e: InsecureOpenedShares = recv(s, pe, &count)?;
    let memory = opened(x_d, (pc, &from_c), (pe, &from_e))?;
    let share = d.insecure_dealt_share(*p, &memory)?;
    built_send(s, d)?;
    Ok(share)
}

/// **Insecure** load at E ([`InsecureOpenedShares`]): as [`insecure_dealt_load_d`].
///
/// # Errors
/// As [`insecure_dealt_load_d`].
pub fn insecure_dealt_load_e<R: ShareRing>(
    s: &mut Session,
    e: &mut E,
    p: &Params,
    x_e: &[R],
) -> Result<ForestShare, DriverError> {
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    send(s, pd, &InsecureOpenedShares::new(ring_words(x_e)))?;
    let count = x_e.len() * words_for(R::BITS);
    let from_c: InsecureOpenedShares = recv(s, pc, &count)?;
    let from_d: InsecureOpenedShares = recv(s, pd, &count)?;
    let memory = opened(x_e, (pc, &from_c), (pd, &from_d))?;
    let share = e.insecure_dealt_share(*p, &memory)?;
    built_recv(s, pd, x_e.len())?;
    Ok(share)
}

/// Sends `x` to `to` in [`Rows`] messages of at most [`ROWS_PER_MESSAGE`] rows.
fn send_rows(s: &mut Session, to: PartyId, x: &Strings) -> Result<(), DriverError> {
    let mut start = 0;
    for (count, _) in ExtractShape::chunks(x.count(), x.width()) {
        let rows: Vec<usize> = (start..start + count).collect();
        send(s, to, &Rows::new(x.gather(&rows)))?;
        start += count;
    }
    Ok(())
}

/// Receives `count` rows of `width` bits from `from`, as [`send_rows`] sends them.
fn recv_rows(
    s: &mut Session,
    from: PartyId,
    count: usize,
    width: usize,
) -> Result<Strings, DriverError> {
    let mut chunks = Vec::new();
    for shape in ExtractShape::chunks(count, width) {
        chunks.push(recv::<Rows>(s, from, &shape)?);
    }
    Ok(Strings::from_rows(
        width,
        chunks
            .iter()
            .flat_map(|c| (0..c.rows().count()).map(move |i| c.rows().get(i))),
    ))
}

/// `shares[j]` at position `order[j]`.
fn in_order<R: ShareRing>(order: &[usize], shares: &[R]) -> Vec<R> {
    let mut out = vec![R::default(); order.len()];
    for (&n, &x) in order.iter().zip(shares) {
        out[n] = x;
    }
    out
}

/// Get Memory at C ([`crate::extract`]): C's additive shares of the records, by address.
///
/// # Errors
/// The transport's errors; a peer's malformed message; [`Fjkw15Error::Inconsistent`] if the
/// openings do not fit.
pub fn extract_c<R: ShareRing>(
    s: &mut Session,
    c: &mut C,
    shape: &ExtractShape,
) -> Result<Vec<R>, DriverError> {
    let (pd, pe) = (c.roles().party(Role::D), c.roles().party(Role::E));
    let from_e = recv_rows(s, pe, shape.rows(), shape.width())?;
    let sh = c.extract_finish(shape, from_e);
    let fb = sh.full_bits();
    send_rows(s, pe, &fb)?;
    send_rows(s, pd, &fb)?;
    let full = full_rows(shape, &fb, &recv_rows(s, pe, shape.rows(), 1)?)?;
    let addrs = sh.addresses(shape, &full);
    send_rows(s, pe, &addrs)?;
    send_rows(s, pd, &addrs)?;
    let order = addresses(
        shape,
        &addrs,
        &recv_rows(s, pe, shape.items(), addrs.width())?,
    )?;
    let records: Vec<R::Xor> = sh
        .records_wide(shape, &full)
        .into_iter()
        .map(R::xor_of)
        .collect();
    let mut shares = Vec::with_capacity(records.len());
    for chunk in records.chunks(crate::backend::convert_batch::<R>()) {
        shares.extend(b2a_c(s, c, &B2a::<R>::build(chunk.len())?, chunk)?);
    }
    Ok(in_order(&order, &shares))
}

/// Get Memory at D ([`crate::extract`]) from D's share of the forest.
///
/// # Errors
/// As [`extract_c`].
pub fn extract_d<R: ShareRing>(
    s: &mut Session,
    d: &mut D,
    shape: &ExtractShape,
    forest: &ForestShare,
) -> Result<Vec<R>, DriverError> {
    let (pc, pe) = (d.roles().party(Role::C), d.roles().party(Role::E));
    let x_d = forest.tree(forest.params().h())?.rows();
    send_rows(s, pe, &d.extract_send(shape, x_d))?;
    let fb_c = recv_rows(s, pc, shape.rows(), 1)?;
    let fb_e = recv_rows(s, pe, shape.rows(), 1)?;
    full_rows(shape, &fb_c, &fb_e)?;
    let m = forest.params().m() as usize;
    let a_c = recv_rows(s, pc, shape.items(), m)?;
    let a_e = recv_rows(s, pe, shape.items(), m)?;
    let order = addresses(shape, &a_c, &a_e)?;
    let mut shares = Vec::with_capacity(shape.items());
    let mut left = shape.items();
    while left > 0 {
        let count = left.min(crate::backend::convert_batch::<R>());
        shares.extend(b2a_d(s, d, &B2a::<R>::build(count)?)?);
        left -= count;
    }
    Ok(in_order(&order, &shares))
}

/// Get Memory at E ([`crate::extract`]) from E's share of the forest.
///
/// # Errors
/// As [`extract_c`].
pub fn extract_e<R: ShareRing>(
    s: &mut Session,
    e: &mut E,
    shape: &ExtractShape,
    forest: &ForestShare,
) -> Result<Vec<R>, DriverError> {
    let (pc, pd) = (e.roles().party(Role::C), e.roles().party(Role::D));
    let x_e = forest.tree(forest.params().h())?.rows();
    send_rows(s, pc, &e.extract_send(shape, x_e))?;
    let from_d = recv_rows(s, pd, shape.rows(), shape.width())?;
    let sh = e.extract_finish(shape, from_d);
    let fb = sh.full_bits();
    send_rows(s, pc, &fb)?;
    send_rows(s, pd, &fb)?;
    let full = full_rows(shape, &fb, &recv_rows(s, pc, shape.rows(), 1)?)?;
    let addrs = sh.addresses(shape, &full);
    send_rows(s, pc, &addrs)?;
    send_rows(s, pd, &addrs)?;
    let order = addresses(
        shape,
        &addrs,
        &recv_rows(s, pc, shape.items(), addrs.width())?,
    )?;
    let records: Vec<R::Xor> = sh
        .records_wide(shape, &full)
        .into_iter()
        .map(R::xor_of)
        .collect();
    let mut shares = Vec::with_capacity(records.len());
    for chunk in records.chunks(crate::backend::convert_batch::<R>()) {
        shares.extend(b2a_e(s, e, &B2a::<R>::build(chunk.len())?, chunk)?);
    }
    Ok(in_order(&order, &shares))
}

/// The largest message of an extraction ([`crate::extract`]), other than its B2A's.
pub fn max_extract_message(shape: &ExtractShape) -> usize {
    Rows::wire_len(&(shape.rows().min(ROWS_PER_MESSAGE), shape.width()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame bound of the insecure dealt load is the size of the message C sends, for
    /// every ring (a Z/2^32 element goes as one 64-bit word, not as 4 bytes).
    #[test]
    fn insecure_opened_bytes_is_the_message_size() {
        fn check<R: ShareRing>(x: &[R]) {
            let msg = InsecureOpenedShares::new(ring_words(x));
            assert_eq!(msg.encode().len(), insecure_opened_bytes::<R>(x.len()));
        }
        check::<u32>(&[1, u32::MAX, 7]);
        check::<u64>(&[1, u64::MAX]);
        check::<doram_field::Fp>(&[doram_field::Fp::ONE; 5]);
    }
}
