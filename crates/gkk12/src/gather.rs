//! Payloads brought to the slots a bin placement chose, so that the placement itself sorts
//! only each item's (valid, address, leaf) and not its payload ([`crate::sortload`]).
//!
//! After [`crate::binsort`] every slot of the placement holds XOR shares of an item's valid
//! bit and address (or of a dummy's zeros); nobody knows which. One party, the *opener*,
//! holds a vector of payloads indexed by address (its share of the data, or the data itself);
//! the other, the *permuter*, draws a uniform permutation π of the slots.
//! 1. **Ids under π.** The slots' (valid, address) shares go through a Beneš network of OT
//!    switches (`shuffle::BlockNet::halves` on all the slots, one correction per switch,
//!    every sub-network a run of memory) that moves
//!    slot x to π(x), the opener holding, the permuter permuting. The permuter sends its
//!    shares: the opener learns which address sits at each position of the shuffled order.
//!    That is the public multiset (every address once, the rest dummies) in an order that π,
//!    uniform and unknown to the opener, makes uniform whatever the placement: nothing.
//! 2. **Payloads in that order**, by the opener alone: position k gets the payload of the
//!    address opened there, a dummy zeros.
//! 3. **Back by π⁻¹.** The payload vector goes through the same network run backwards (every
//!    switch, with its setting, in the opposite order), which moves position k to π⁻¹(k),
//!    the opener holding it and the permuter starting from zeros: both end with XOR
//!    shares of every slot's payload in slot order. The permuter's view is OT messages and
//!    corrections masked by pads it cannot open; the opener's, OT messages.
//!
//! Cost: two networks on all the slots, the first on entries of ⌈(1 + h)/8⌉ bytes, the second
//! on the payload's bytes, one correlated OT and one entry of corrections per switch; about
//! `S (log₂ S − 1/2)` switches each for S slots. Data shared between the parties is gathered
//! twice, once with each party as the opener, and the two results added.
//!
//! The network (a hundred million switches at 2^20 items) and π's routing depend on sizes
//! only; the load builds them in a thread while the placement runs (`prepare`).
//!
//! Every message's size follows from the number of slots, the entry sizes and the frame
//! size; the opener checks what it opens (every address below the item count exactly once,
//! every other entry zero) and refuses anything else as the peer's fault.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_net::Session;
use doram_twopc::driver::{cot_receive, cot_send, peer};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};

use crate::driver::Gkk12Error;
use doram_core::Seed;
use doram_prim::AesPrg;

use crate::shuffle::{
    BlockNet, NetScratch, RouteScratch, recv_framed, route_halves, send_framed, send_framed_vec,
    zeroed,
};

/// Switches per batch of a network on all the slots: one OT extension and one message of
/// corrections (at most `PART_BYTES`).
const PART_SWITCHES: usize = 1 << 16;

/// The most bytes of corrections in one batch.
const PART_BYTES: usize = 4 << 20;

/// What both sides agree on: the slots and the entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Slots of the placement.
    pub slots: usize,
    /// Bytes of a slot's id: bit 0 the valid bit, bits `1 .. 1 + address_bits` the address,
    /// the rest zero.
    pub id_bytes: usize,
    /// Bits of an address.
    pub address_bits: usize,
    /// Items: every address below this is placed exactly once.
    pub items: usize,
    /// Bytes of a payload.
    pub payload_bytes: usize,
    /// Frames of at most this many bytes.
    pub frame: usize,
}

impl Shape {
    fn check(&self) -> Result<(), Gkk12Error> {
        if self.slots == 0
            || self.items > self.slots
            || self.id_bytes != (1 + self.address_bits).div_ceil(8)
            || self.address_bits >= 64
            || (self.items as u64) > (1u64 << self.address_bits)
            || self.payload_bytes == 0
            || self.frame == 0
        {
            return Err(Gkk12Error::Misuse("a gather that does not fit its slots"));
        }
        Ok(())
    }
}

/// The batches of a network's switches: whole networks' worth of OTs and corrections in
/// pieces of at most [`PART_SWITCHES`] switches and [`PART_BYTES`] bytes.
fn parts(switches: usize, eb: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per = (PART_BYTES / eb.max(1)).clamp(1, PART_SWITCHES);
    (0..switches.div_ceil(per)).map(move |k| k * per..((k + 1) * per).min(switches))
}

/// The holder's side of one network on all the slots (`w`, this party's shares), part by part.
fn hold(
    session: &mut Session,
    p: PartyId,
    ot: &mut impl CotExtSender,
    net: &BlockNet,
    (w, eb): (&mut [u8], usize),
    frame: usize,
    scratch: &mut NetScratch,
) -> Result<(), Gkk12Error> {
    // One buffer for every part, its frame a copy: a fresh 4 MiB vector a part, handed to the
    // transport, cost more (the allocator maps and unmaps it each time: system time 5.3 →
    // 9.5 s in the 2^20 load) than the copy saves.
    let mut out = Vec::new();
    for part in parts(net.switches(), eb) {
        let cot = cot_send(session, ot, part.len())?;
        // Every byte is written by `hold_part`.
        out.resize(part.len() * eb, 0);
        net.hold_part(w, part, (&cot.q, cot.delta, cot.first), &mut out, scratch);
        send_framed(session, p, &out, frame)?;
    }
    Ok(())
}

/// The permuter's side of one network on all the slots (`a`, this party's shares), set by
/// `controls` ([`route_halves`]). Each part's OT extension goes before the part before it is
/// switched, so that the holder never waits for it.
#[allow(clippy::too_many_arguments)]
fn permute(
    session: &mut Session,
    p: PartyId,
    ot: &mut impl CotExtReceiver,
    net: &BlockNet,
    (a, eb): (&mut [u8], usize),
    controls: &[bool],
    frame: usize,
    scratch: &mut NetScratch,
) -> Result<(), Gkk12Error> {
    let parts: Vec<_> = parts(net.switches(), eb).collect();
    let mut keys = match parts.first() {
        Some(r) => Some(cot_receive(session, ot, &controls[r.clone()])?),
        None => None,
    };
    for (k, part) in parts.iter().enumerate() {
        let next = match parts.get(k + 1) {
            Some(r) => Some(cot_receive(session, ot, &controls[r.clone()])?),
            None => None,
        };
        let Some(cur) = keys.take() else {
            return Err(Gkk12Error::Misuse("a network part without its OTs"));
        };
        let corr = recv_framed(session, p, "switch corrections", part.len() * eb, frame)?;
        net.permute_part(
            a,
            part.clone(),
            (&cur.t, cur.first),
            &cur.choices,
            &corr,
            scratch,
        );
        keys = next;
    }
    Ok(())
}

/// What a gather needs before its first message: the network on all the slots
/// ([`BlockNet::halves`]) and, at a party that permutes, the settings of its π. Building them
/// takes seconds at millions of slots (the looping algorithm's walks miss the caches), so the
/// load builds them in a thread beside the placement ([`prepare`]).
pub(crate) struct Prepared {
    slots: usize,
    /// Its switches in their forward order; out while a gather runs.
    net: Option<BlockNet>,
    controls: Option<Vec<bool>>,
}

impl Prepared {
    fn take_net(&mut self, slots: usize) -> Result<BlockNet, Gkk12Error> {
        match self.net.take() {
            Some(net) if self.slots == slots => Ok(net),
            _ => Err(Gkk12Error::Misuse("a gather prepared for other slots")),
        }
    }
}

/// [`Prepared`] for `slots` slots; with `seed`, π drawn from an AES-CTR stream under it
/// (this party permutes in a gather).
///
/// # Errors
/// [`Gkk12Error::Misuse`] for a network that does not fit.
pub(crate) fn prepare(slots: usize, seed: Option<Seed>) -> Result<Prepared, Gkk12Error> {
    let net = BlockNet::halves(slots, 1, 1)?;
    let controls = seed.map(|seed| {
        let mut pi = Vec::new();
        crate::binsort::shuffle_in_place(&mut pi, slots, &mut AesPrg::new(seed));
        let mut controls = Vec::new();
        route_halves(&pi, &mut controls, &mut RouteScratch::default());
        controls
    });
    Ok(Prepared {
        slots,
        net: Some(net),
        controls,
    })
}

/// The opener's side: `ids` this party's shares of every slot's id ([`Shape`]), `payloads`
/// its payload of every address (`payload_bytes` each, `items` of them), `prep` from
/// [`prepare`] on the same slots. Returns this party's XOR share of every slot's payload,
/// slot after slot (a dummy's payload is zero).
///
/// # Errors
/// Transport failures; the peer's malformed messages, or opened ids that are not every
/// address once among zeros ([`PeerFault`]); [`Gkk12Error::Misuse`] for sizes that do not fit.
pub(crate) fn open(
    session: &mut Session,
    ot: &mut impl CotExtSender,
    prep: &mut Prepared,
    ids: &[u8],
    payloads: &[u8],
    shape: &Shape,
) -> Result<Vec<u8>, Gkk12Error> {
    shape.check()?;
    let (s, ib, pb) = (shape.slots, shape.id_bytes, shape.payload_bytes);
    if ids.len() != s * ib || payloads.len() != shape.items * pb {
        return Err(Gkk12Error::Misuse("ids or payloads of the wrong size"));
    }
    let p = peer(session)?;
    let frame = shape.frame;
    let mut scratch = NetScratch::default();
    // [1] The ids through the network that moves slot x to π(x), then opened. (A failed
    // gather fails the load: the network goes back to `prep` only after a whole one.)
    let net = prep.take_net(s)?.for_entries(ib, ib)?;
    let mut w = ids.to_vec();
    hold(session, p, ot, &net, (&mut w, ib), frame, &mut scratch)?;
    let theirs = recv_framed(session, p, "shuffled slot ids", s * ib, frame)?;
    // [2] Every position's payload by the address opened there.
    let mut z = arrange(p, &w, &theirs, payloads, shape)?;
    // [3] Back to slot order through the same network run backwards: π⁻¹.
    let net = net.reversed().for_entries(pb, pb)?;
    hold(session, p, ot, &net, (&mut z, pb), frame, &mut scratch)?;
    prep.net = Some(net.reversed());
    Ok(z)
}

/// Step 2 of [`open`]: the payloads in the order of the ids opened from `mine` and `theirs`,
/// once they are checked to be every address once among zeros.
fn arrange(
    p: PartyId,
    mine: &[u8],
    theirs: &[u8],
    payloads: &[u8],
    shape: &Shape,
) -> Result<Vec<u8>, Gkk12Error> {
    let (ib, pb) = (shape.id_bytes, shape.payload_bytes);
    let mut z = zeroed(shape.slots * pb);
    let mut seen = vec![false; shape.items];
    let mut valid = 0usize;
    for (k, (x, y)) in mine
        .chunks_exact(ib)
        .zip(theirs.chunks_exact(ib))
        .enumerate()
    {
        let mut id = 0u64;
        for (j, (a, b)) in x.iter().zip(y).enumerate() {
            id |= u64::from(a ^ b) << (8 * j);
        }
        if id & 1 == 0 {
            if id != 0 {
                return Err(
                    PeerFault::malformed(p, "shuffled slot ids", "a dummy not zero").into(),
                );
            }
            continue;
        }
        let at = (id >> 1) as usize;
        if id >> (1 + shape.address_bits) != 0
            || at >= shape.items
            || std::mem::replace(&mut seen[at], true)
        {
            return Err(PeerFault::malformed(p, "shuffled slot ids", "not every item once").into());
        }
        valid += 1;
        z[k * pb..(k + 1) * pb].copy_from_slice(&payloads[at * pb..(at + 1) * pb]);
    }
    if valid != shape.items {
        return Err(PeerFault::malformed(p, "shuffled slot ids", "not every item once").into());
    }
    Ok(z)
}

/// The permuter's side, pairing with [`open`]: `ids` this party's shares of the slots' ids,
/// `prep` from [`prepare`] with a seed (π). Returns this party's XOR share of every slot's
/// payload.
///
/// # Errors
/// Transport failures; the peer's malformed messages; [`Gkk12Error::Misuse`] for sizes that
/// do not fit or a `prep` without π.
pub(crate) fn permute_for(
    session: &mut Session,
    ot: &mut impl CotExtReceiver,
    prep: &mut Prepared,
    ids: &[u8],
    shape: &Shape,
) -> Result<Vec<u8>, Gkk12Error> {
    shape.check()?;
    let (s, ib, pb) = (shape.slots, shape.id_bytes, shape.payload_bytes);
    let Some(mut controls) = prep.controls.take() else {
        return Err(Gkk12Error::Misuse("a permuter without its permutation"));
    };
    if ids.len() != s * ib {
        return Err(Gkk12Error::Misuse("ids of the wrong size"));
    }
    let p = peer(session)?;
    let frame = shape.frame;
    let mut scratch = NetScratch::default();
    // [1] The ids to π's order; this party's shares to the opener.
    let net = prep.take_net(s)?.for_entries(ib, ib)?;
    let mut a = ids.to_vec();
    let ids_part = (&mut a[..], ib);
    permute(
        session,
        p,
        ot,
        &net,
        ids_part,
        &controls,
        frame,
        &mut scratch,
    )?;
    send_framed_vec(session, p, a, frame)?;
    // [3] The opener's payloads back to slot order, from zeros: π⁻¹ is the same network
    // run backwards.
    let net = net.reversed().for_entries(pb, pb)?;
    controls.reverse();
    let mut z = zeroed(s * pb);
    permute(
        session,
        p,
        ot,
        &net,
        (&mut z, pb),
        &controls,
        frame,
        &mut scratch,
    )?;
    prep.net = Some(net.reversed());
    Ok(z)
}
