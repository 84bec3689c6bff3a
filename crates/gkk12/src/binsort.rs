//! Oblivious bin placement between two parties, the core of a fast two-party load
//! (docs/notes/gkk12.md, "Two parties alone"): XOR-shared records, each with a secret label,
//! end up in `2^L` bins of `Z` slots, every real record in the bin its label names, every
//! other slot a dummy (all zero), and neither party learns a label, a load or where a record
//! went. It is the butterfly of bucket oblivious sort (Asharov, Chan, Nayak, Pass, Ren, Shi,
//! SOSA 2020) with merge-splits made of oblivious transfers, OT shuffles and a small garbled
//! circuit per batch of blocks.
//!
//! # Records
//! A record is `bytes` bytes, XOR-shared; bit `valid` says whether it is real and bits
//! `label .. label + L` hold its label (least significant first). Record `i` starts in bin
//! `i mod 2^L`, slot `i / 2^L`: public, so `⌈n / 2^L⌉ ≤ Z` is required. Empty slots are dummies
//! (both shares zero).
//!
//! # One stage s of L
//! Bins `b` and `b + 2^s` (bit s of b clear) form a block of 2Z entries; every real record of
//! the block moves to the first bin if bit s of its label is 0 and to the second if it is 1,
//! and dummies fill the rest, so after stage s every record's bin agrees with its label on
//! bits 0 … s. Per block:
//! 1. **Destinations.** Each entry is of one class: real with bit 0 (`u`), dummy (`v`) or
//!    real with bit 1 (`w`). Its class as additive shares modulo 2^16 comes from a
//!    one-out-of-four OT on `P1`'s two XOR-shared bits (two random OTs; `P0` sends the four
//!    answers, each masked by slices of the two keys that choose it). With `U`, `V`, `W` the
//!    counts of each class before the entry and `T_U` the block's real records with bit 0,
//!    all local sums of shares, the entry goes to `U` (class `u`), `T_U + V` (`v`) or
//!    `2Z − 1 − W` (`w`): real records with bit 0 first, then dummies, then real records with
//!    bit 1 from the end, a permutation of the block. As `U + v·A + w·B` with
//!    `A = T_U + V − U` and `B = 2Z − 1 − W − U`, the products of a party's shares of `A` and
//!    `B` with the classes are again one-out-of-four OTs, one each way. The destinations are
//!    additive shares modulo 256 (2Z ≤ 256). About 34 bytes and four random OTs an entry,
//!    where a garbled circuit for the same took about 60 AND gates (1.9 KB).
//! 2. **Overflow.** A garbled circuit per batch of blocks adds the two parties' shares of
//!    each block's two counts and outputs whether any exceeds Z; the bit is opened. It
//!    depends only on the labels, which are fresh random bits; the caller draws new ones on
//!    an overflow ([`Gkk12Error::LoadOverflow`]).
//! 3. **Shuffle.** Each block, with its destinations, goes through a random permutation drawn
//!    by `P0` and then one drawn by `P1` (the switches of [`crate::shuffle`], with the
//!    destination byte re-shared additively): neither party knows the composition.
//! 4. **Open and move.** The shuffled destinations are opened: the order of the block
//!    composed with a uniform permutation nobody knows, so a uniform permutation whatever the
//!    labels. Both parties move their shares by it.
//!
//! Every block of a stage goes through each step together: a stage costs the rounds of one
//! block. Messages depend on n, the record size, L and Z only, and none is longer than
//! [`FRAME_BYTES`] (or the `frame` of [`place_framed`]): a batch longer than that (a shuffle
//! stage's corrections, the opened destinations, the overflow bits) goes as several frames
//! back to back, every one checked to be of its exact length.
//!
//! Semi-honest: a peer's opened destinations are checked to be a permutation of each block
//! before they are used; anything else is refused, not trusted.

use doram_core::wire::PeerFault;
use doram_net::Session;
use doram_prim::aes::Block;
use doram_twopc::Circuit;
use doram_twopc::builder::{Bit, Builder, compact_wires};
use doram_twopc::driver::{cot_receive, cot_send, evaluate_on_labels, garble_on_labels, peer};
use doram_twopc::gc::{Evaluator, Garbler};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use rand_core::RngCore;

use crate::driver::Gkk12Error;
use crate::shuffle::{
    FRAME_BYTES, Shares, check_frame, hold_mixed, permute_mixed, recv_framed, route_blocks,
    send_framed,
};

/// Where the bins go and what a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// L: there are 2^L bins, and labels have L bits.
    pub log_bins: u32,
    /// log₂ Z: every bin has Z = 2^log_slots slots (Z ≤ 128).
    pub log_slots: u32,
    /// Bytes per record.
    pub bytes: usize,
    /// The bit of a record that says it is real.
    pub valid: usize,
    /// The first bit of a record's label.
    pub label: usize,
}

impl Layout {
    /// Bins: 2^L.
    pub fn bins(&self) -> usize {
        1 << self.log_bins
    }

    /// Slots per bin: Z.
    pub fn slots(&self) -> usize {
        1 << self.log_slots
    }

    fn check(&self, records: usize) -> Result<(), Gkk12Error> {
        let bits = 8 * self.bytes;
        if self.log_slots > 7
            || self.log_bins > 24
            || self.valid >= bits
            || self.label + self.log_bins as usize > bits
            || records.div_ceil(self.bins()) > self.slots()
        {
            return Err(Gkk12Error::Misuse(
                "a bin layout that does not fit its records",
            ));
        }
        Ok(())
    }
}

/// This party's side of the two-party computation: the garbler (`P0`) or the evaluator.
pub enum Role<'a> {
    /// `P0`: garbles under its OT sender's Δ.
    Garbler(&'a mut Garbler),
    /// `P1`: evaluates.
    Evaluator(&'a mut Evaluator),
}

fn bit_of(bytes: &[u8], k: usize) -> bool {
    (bytes[k / 8] >> (k % 8)) & 1 == 1
}

/// `x + y` modulo 2^n: a ripple adder with one AND per bit.
fn add(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Vec<Bit> {
    let mut carry = Bit::ZERO;
    x.iter()
        .zip(y)
        .map(|(&a, &c)| {
            let t = b.xor(a, c);
            let s = b.xor(t, carry);
            let p = b.xor(a, carry);
            let q = b.xor(c, carry);
            let g = b.and(p, q);
            carry = b.xor(carry, g);
            s
        })
        .collect()
}

/// Blocks per overflow circuit: its garbled tables (about 3(log₂ Z + 2) AND gates a block)
/// stay under 32 KiB.
const OVERFLOW_BATCH: usize = 32;

/// The overflow circuit of `blocks` blocks ([module docs](self), step 2). Inputs, per block,
/// `w = log₂ Z + 2` bits each: `P0`'s additive share of the block's count of real records
/// with bit 0, `P1`'s, then the same for bit 1 (modulo 2^w; a count is at most 2Z < 2^w).
/// Output: one bit, whether some block has more than Z on a side.
fn overflow_circuit(log_slots: u32, blocks: usize) -> Result<Circuit, Gkk12Error> {
    let w = log_slots as usize + 2;
    let mut b = Builder::new();
    let inputs = b.evaluator_bits(4 * w * blocks);
    // More than Z: bit log Z + 1 set, or bit log Z and a lower one.
    let over = |b: &mut Builder, n: &[Bit]| {
        let low = b.or_all(&n[..w - 2]);
        let mid = b.and(n[w - 2], low);
        b.or(n[w - 1], mid)
    };
    let mut any = Bit::ZERO;
    for x in inputs.chunks(4 * w) {
        let zero = add(&mut b, &x[..w], &x[w..2 * w]);
        let one = add(&mut b, &x[2 * w..3 * w], &x[3 * w..]);
        let oz = over(&mut b, &zero);
        let oo = over(&mut b, &one);
        let o = b.or(oz, oo);
        any = b.or(any, o);
    }
    b.output(any);
    Ok(compact_wires(&b.finish()?))
}

/// Places `records` (this party's XOR shares, `layout.bytes` each) into `2^L` bins of Z slots
/// ([module docs](self)); returns this party's shares of the bins, bin after bin. `ot_send`
/// and `ot_recv` are this party's OT extensions with the peer in each direction (`P0`'s sender
/// Δ is its garbler's); `rng` draws this party's permutations.
///
/// # Errors
/// [`Gkk12Error::Misuse`] for a layout that does not fit; [`Gkk12Error::LoadOverflow`]
/// (with `tree`) if a bin would overflow; transport failures; the peer's malformed messages.
#[allow(clippy::too_many_arguments)]
pub fn place<R: RngCore + ?Sized>(
    session: &mut Session,
    role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    layout: &Layout,
    tree: usize,
    rng: &mut R,
) -> Result<Shares, Gkk12Error> {
    place_framed(
        session,
        role,
        ot_send,
        ot_recv,
        records,
        layout,
        tree,
        rng,
        FRAME_BYTES,
    )
}

/// [`place`] with messages of at most `frame` bytes (not zero; [`place`] uses
/// [`FRAME_BYTES`]); the peer must use the same `frame`.
///
/// # Errors
/// As [`place`]; [`Gkk12Error::Misuse`] if `frame` is zero.
#[allow(clippy::too_many_arguments)]
pub fn place_framed<R: RngCore + ?Sized>(
    session: &mut Session,
    mut role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    layout: &Layout,
    tree: usize,
    rng: &mut R,
    frame: usize,
) -> Result<Shares, Gkk12Error> {
    check_frame(frame)?;
    let n = records.data.len().checked_div(records.bytes).unwrap_or(0);
    if records.bytes != layout.bytes {
        return Err(Gkk12Error::Misuse(
            "records of another size than the layout's",
        ));
    }
    layout.check(n)?;
    if let Role::Garbler(g) = &role
        && g.delta() != ot_send.delta()
    {
        // The evaluator's input labels come by OT under `ot_send`'s Δ: any other Δ would
        // garble circuits whose outputs decode to garbage.
        return Err(Gkk12Error::Misuse(
            "the garbler's Δ must be its OT sender's",
        ));
    }
    let (bins, z, rb) = (layout.bins(), layout.slots(), layout.bytes);
    // One byte more per entry for the destination's share.
    let eb = rb + 1;
    let mut v = vec![0u8; bins * z * eb];
    for i in 0..n {
        let (bin, slot) = (i % bins, i / bins);
        let at = (bin * z + slot) * eb;
        v[at..at + rb].copy_from_slice(&records.data[i * rb..(i + 1) * rb]);
    }
    let circuit = overflow_circuit(layout.log_slots, (bins / 2).clamp(1, OVERFLOW_BATCH))?;
    let p = peer(session)?;
    for s in 0..layout.log_bins {
        // Blocks: bins b and b + 2^s for every b with bit s clear, in increasing b.
        let order: Vec<usize> = (0..bins)
            .filter(|b| (b >> s) & 1 == 0)
            .flat_map(|b| [b, b | (1 << s)])
            .collect();
        let mut blocks = Vec::with_capacity(v.len());
        for &b in &order {
            blocks.extend_from_slice(&v[b * z * eb..(b + 1) * z * eb]);
        }
        stage(
            session,
            p,
            &mut role,
            ot_send,
            ot_recv,
            &circuit,
            &mut blocks,
            layout,
            s,
            tree,
            rng,
            frame,
        )?;
        for (k, &b) in order.iter().enumerate() {
            v[b * z * eb..(b + 1) * z * eb].copy_from_slice(&blocks[k * z * eb..(k + 1) * z * eb]);
        }
    }
    let data = v
        .chunks_exact(eb)
        .flat_map(|e| e[..rb].iter().copied())
        .collect();
    Ok(Shares { bytes: rb, data })
}

/// One stage on `blocks` (consecutive blocks of 2Z entries of `bytes + 1` bytes), in
/// messages of at most `frame` bytes.
#[allow(clippy::too_many_arguments)]
fn stage<R: RngCore + ?Sized>(
    session: &mut Session,
    p: doram_core::PartyId,
    role: &mut Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    circuit: &Circuit,
    blocks: &mut [u8],
    layout: &Layout,
    s: u32,
    tree: usize,
    rng: &mut R,
    frame: usize,
) -> Result<(), Gkk12Error> {
    let z = layout.slots();
    let m = 2 * z;
    let eb = layout.bytes + 1;
    let entries = blocks.len() / eb;
    let count = entries / m;
    // [1] This party's shares of (valid, label bit s) of every entry.
    let bits: Vec<(bool, bool)> = blocks
        .chunks_exact(eb)
        .map(|e| {
            (
                bit_of(e, layout.valid),
                bit_of(e, layout.label + s as usize),
            )
        })
        .collect();
    let garbler = matches!(role, Role::Garbler(_));
    let (dests, totals) = if garbler {
        destinations_p0(session, p, ot_send, ot_recv, &bits, m, rng, frame)?
    } else {
        destinations_p1(session, p, ot_send, ot_recv, &bits, m, rng, frame)?
    };
    for (e, d) in blocks.chunks_exact_mut(eb).zip(dests) {
        e[eb - 1] = d;
    }
    // [2] Whether a block overflows, a bit per batch of blocks, opened.
    let w = layout.log_slots as usize + 2;
    let mine: Vec<bool> = totals
        .iter()
        .flat_map(|&(zero, one)| {
            let wires = |x: u16| (0..w).map(move |k| (x >> k) & 1 == 1);
            let none = || std::iter::repeat_n(false, w);
            // P0's shares on P0's wires, P1's on P1's; the other party's bits are 0.
            let (z0, z1, o0, o1): (Vec<bool>, Vec<bool>, Vec<bool>, Vec<bool>) = if garbler {
                (
                    wires(zero).collect(),
                    none().collect(),
                    wires(one).collect(),
                    none().collect(),
                )
            } else {
                (
                    none().collect(),
                    wires(zero).collect(),
                    none().collect(),
                    wires(one).collect(),
                )
            };
            [z0, z1, o0, o1].into_iter().flatten()
        })
        .collect();
    let labels: Vec<Block> = match role {
        Role::Garbler(_) => {
            let delta = ot_send.delta();
            cot_send(session, ot_send, mine.len())?
                .q
                .into_iter()
                .zip(&mine)
                .map(|(q, &x)| if x { q ^ delta } else { q })
                .collect()
        }
        Role::Evaluator(_) => cot_receive(session, ot_recv, &mine)?.t,
    };
    let per = circuit.garbler_inputs() + circuit.evaluator_inputs();
    let mut overflow = Vec::with_capacity(count.div_ceil(OVERFLOW_BATCH));
    for inputs in labels.chunks(per) {
        let out = match role {
            Role::Garbler(g) => garble_on_labels(session, g, circuit, inputs)?,
            Role::Evaluator(e) => evaluate_on_labels(session, e, circuit, inputs)?,
        };
        overflow.push(out[0] & 1 == 1);
    }
    let batches = overflow.len();
    let packed = crate::storage::pack(overflow.iter().copied());
    send_framed(session, p, &packed, frame)?;
    let theirs = recv_framed(session, p, "overflow bits", batches.div_ceil(8), frame)?;
    if (0..batches).any(|k| overflow[k] ^ bit_of(&theirs, k)) {
        return Err(Gkk12Error::LoadOverflow { tree });
    }
    // [3] P0's permutations, then P1's; the destinations (the last byte) stay additive.
    let mut shares = Shares {
        bytes: eb,
        data: blocks.to_vec(),
    };
    for permuter_is_p0 in [true, false] {
        let me_permutes = matches!(role, Role::Garbler(_)) == permuter_is_p0;
        if me_permutes {
            let dests: Vec<Vec<usize>> = (0..count).map(|_| random_perm(m, rng)).collect();
            let controls = route_blocks(&dests)?;
            permute_mixed(
                session,
                ot_recv,
                &mut shares,
                m,
                &controls,
                false,
                frame,
                eb - 1,
            )?;
        } else {
            hold_mixed(session, ot_send, &mut shares, m, false, frame, eb - 1)?;
        }
    }
    // [4] Open the destinations and move.
    let my_dest: Vec<u8> = shares.data.chunks_exact(eb).map(|e| e[eb - 1]).collect();
    send_framed(session, p, &my_dest, frame)?;
    let their = recv_framed(session, p, "destination shares", entries, frame)?;
    for k in 0..count {
        let mut seen = vec![false; m];
        let mut moved = vec![0u8; m * eb];
        for j in 0..m {
            let d = usize::from(my_dest[k * m + j].wrapping_add(their[k * m + j]));
            if d >= m || std::mem::replace(&mut seen[d], true) {
                return Err(PeerFault::malformed(p, "destinations", "not a permutation").into());
            }
            let from = (k * m + j) * eb;
            moved[d * eb..(d + 1) * eb].copy_from_slice(&shares.data[from..from + eb]);
        }
        blocks[k * m * eb..(k + 1) * m * eb].copy_from_slice(&moved);
    }
    Ok(())
}

/// An entry's classes by its valid bit and label bit, as counts: (real with bit 0, dummy,
/// real with bit 1).
fn classes(valid: bool, bit: bool) -> [u16; 3] {
    [
        u16::from(valid && !bit),
        u16::from(!valid),
        u16::from(valid && bit),
    ]
}

/// `len` bytes of a random OT's message from byte `at`: the mask one message of a
/// one-out-of-four OT takes from one of its two random OTs (every slice of a key masks one
/// message only).
fn key_bytes(key: Block, at: usize, len: usize) -> impl Iterator<Item = u8> {
    key.to_le_bytes().into_iter().skip(at).take(len)
}

/// This party's shares of the counts of each class before every entry of its block of `m`,
/// and of each block's totals.
type Counts = (Vec<[u16; 3]>, Vec<[u16; 3]>);

fn prefix_counts(shares: &[[u16; 3]], m: usize) -> Counts {
    let mut before = Vec::with_capacity(shares.len());
    let mut totals = Vec::with_capacity(shares.len() / m);
    for block in shares.chunks(m) {
        let mut acc = [0u16; 3];
        for x in block {
            before.push(acc);
            for (a, y) in acc.iter_mut().zip(x) {
                *a = a.wrapping_add(*y);
            }
        }
        totals.push(acc);
    }
    (before, totals)
}

/// The shares of an entry's destination that its classes select: with `U`, `V`, `W` the
/// counts before it and `T_U` its block's real records with bit 0, a real record with bit 0
/// goes to `U`, a dummy to `T_U + V`, a real record with bit 1 to `2Z − 1 − W`; written as
/// `U + v·A + w·B` with `A = T_U + V − U` and `B = 2Z − 1 − W − U`, this party's shares of
/// `A` and `B` (`P0` adds the constant).
fn offsets(before: [u16; 3], total_zero: u16, constant: u16) -> (u8, u8) {
    let [u, v, w] = before;
    let a = total_zero.wrapping_add(v).wrapping_sub(u);
    let b = constant.wrapping_sub(w).wrapping_sub(u);
    (a as u8, b as u8)
}

/// `v·A + w·B − y` modulo 256 for the classes `[_, v, w]`.
fn product(classes: [u16; 3], a: u8, b: u8, y: u8) -> u8 {
    let [_, v, w] = classes;
    (v as u8)
        .wrapping_mul(a)
        .wrapping_add((w as u8).wrapping_mul(b))
        .wrapping_sub(y)
}

/// This party's additive shares modulo 256 of every entry's destination, and of each
/// block's counts of real records with bit 0 and with bit 1 (modulo 2^16).
type Destinations = (Vec<u8>, Vec<(u16, u16)>);

/// `P0`'s side of the destinations ([module docs](self), step 1): its additive shares modulo
/// 256 of every entry's destination, and of each block's counts of real records with bit 0
/// and with bit 1 (modulo 2^16).
///
/// 1. `P1`'s bits (valid, label bit) choose in two random OTs per entry; `P0` sends, for each
///    of the four choices, `P1`'s share of the entry's classes (real with bit 0, real with bit
///    1, as `P0`'s random shares subtracted from the classes that choice gives) and `P1`'s
///    share of `v·A₀ + w·B₀` (`P0`'s `A₀`, `B₀`, [`offsets`]), each message masked by a slice of
///    each of the two keys it is chosen by: a one-out-of-four OT.
/// 2. The same the other way round for `v·A₁ + w·B₁`, `P0`'s bits choosing.
///
/// Both parties' counts are linear in their shares of the classes, so they cost nothing.
#[allow(clippy::too_many_arguments)]
fn destinations_p0<R: RngCore + ?Sized>(
    session: &mut Session,
    p: doram_core::PartyId,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    bits: &[(bool, bool)],
    m: usize,
    rng: &mut R,
    frame: usize,
) -> Result<Destinations, Gkk12Error> {
    let n = bits.len();
    let keys = cot_send(session, ot_send, 2 * n)?.into_random().msgs;
    let mine: Vec<[u16; 3]> = (0..n)
        .map(|_| {
            let (u, w) = (rng.next_u32() as u16, rng.next_u32() as u16);
            [u, 1u16.wrapping_sub(u).wrapping_sub(w), w]
        })
        .collect();
    let (before, totals) = prefix_counts(&mine, m);
    let mut y = vec![0u8; n];
    rng.fill_bytes(&mut y);
    let mut msg = Vec::with_capacity(20 * n);
    for e in 0..n {
        let (r0, c0) = bits[e];
        let [xu, _, xw] = mine[e];
        let (a0, b0) = offsets(before[e], totals[e / m][0], (m - 1) as u16);
        let ([k10, k11], [k20, k21]) = (keys[2 * e], keys[2 * e + 1]);
        for (b1, k1) in [(false, k10), (true, k11)] {
            for (b2, k2) in [(false, k20), (true, k21)] {
                let cl = classes(r0 ^ b1, c0 ^ b2);
                let mut out = [0u8; 5];
                out[..2].copy_from_slice(&cl[0].wrapping_sub(xu).to_le_bytes());
                out[2..4].copy_from_slice(&cl[2].wrapping_sub(xw).to_le_bytes());
                out[4] = product(cl, a0, b0, y[e]);
                let masks = key_bytes(k1, 5 * usize::from(b2), 5).zip(key_bytes(
                    k2,
                    5 * usize::from(b1),
                    5,
                ));
                for (o, (x1, x2)) in out.iter_mut().zip(masks) {
                    *o ^= x1 ^ x2;
                }
                msg.extend_from_slice(&out);
            }
        }
    }
    send_framed(session, p, &msg, frame)?;
    let choices: Vec<bool> = bits.iter().flat_map(|&(r, c)| [r, c]).collect();
    let got = cot_receive(session, ot_recv, &choices)?.into_random().msgs;
    let theirs = recv_framed(session, p, "destination messages", 4 * n, frame)?;
    let dests = (0..n)
        .map(|e| {
            let (r0, c0) = bits[e];
            let at = 2 * usize::from(r0) + usize::from(c0);
            let mut z = theirs[4 * e + at];
            for (x1, x2) in key_bytes(got[2 * e], usize::from(c0), 1).zip(key_bytes(
                got[2 * e + 1],
                usize::from(r0),
                1,
            )) {
                z ^= x1 ^ x2;
            }
            (before[e][0] as u8).wrapping_add(y[e]).wrapping_add(z)
        })
        .collect();
    Ok((dests, totals.iter().map(|t| (t[0], t[2])).collect()))
}

/// `P1`'s side of [`destinations_p0`].
#[allow(clippy::too_many_arguments)]
fn destinations_p1<R: RngCore + ?Sized>(
    session: &mut Session,
    p: doram_core::PartyId,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    bits: &[(bool, bool)],
    m: usize,
    rng: &mut R,
    frame: usize,
) -> Result<Destinations, Gkk12Error> {
    let n = bits.len();
    let choices: Vec<bool> = bits.iter().flat_map(|&(r, c)| [r, c]).collect();
    let got = cot_receive(session, ot_recv, &choices)?.into_random().msgs;
    let theirs = recv_framed(session, p, "destination messages", 20 * n, frame)?;
    let mut mine = Vec::with_capacity(n);
    let mut t0 = Vec::with_capacity(n);
    for e in 0..n {
        let (r1, c1) = bits[e];
        let at = 20 * e + 5 * (2 * usize::from(r1) + usize::from(c1));
        let mut out = [0u8; 5];
        out.copy_from_slice(&theirs[at..at + 5]);
        let masks = key_bytes(got[2 * e], 5 * usize::from(c1), 5).zip(key_bytes(
            got[2 * e + 1],
            5 * usize::from(r1),
            5,
        ));
        for (o, (x1, x2)) in out.iter_mut().zip(masks) {
            *o ^= x1 ^ x2;
        }
        let u = u16::from_le_bytes([out[0], out[1]]);
        let w = u16::from_le_bytes([out[2], out[3]]);
        mine.push([u, 0u16.wrapping_sub(u).wrapping_sub(w), w]);
        t0.push(out[4]);
    }
    let (before, totals) = prefix_counts(&mine, m);
    let keys = cot_send(session, ot_send, 2 * n)?.into_random().msgs;
    let mut y = vec![0u8; n];
    rng.fill_bytes(&mut y);
    let mut msg = Vec::with_capacity(4 * n);
    for e in 0..n {
        let (r1, c1) = bits[e];
        let (a1, b1) = offsets(before[e], totals[e / m][0], 0);
        let ([k10, k11], [k20, k21]) = (keys[2 * e], keys[2 * e + 1]);
        for (s0, k1) in [(false, k10), (true, k11)] {
            for (s1, k2) in [(false, k20), (true, k21)] {
                let mut t = product(classes(s0 ^ r1, s1 ^ c1), a1, b1, y[e]);
                for (x1, x2) in
                    key_bytes(k1, usize::from(s1), 1).zip(key_bytes(k2, usize::from(s0), 1))
                {
                    t ^= x1 ^ x2;
                }
                msg.push(t);
            }
        }
    }
    send_framed(session, p, &msg, frame)?;
    let dests = (0..n)
        .map(|e| (before[e][0] as u8).wrapping_add(t0[e]).wrapping_add(y[e]))
        .collect();
    Ok((dests, totals.iter().map(|t| (t[0], t[2])).collect()))
}

/// A uniformly random permutation of `0..m`.
fn random_perm<R: RngCore + ?Sized>(m: usize, rng: &mut R) -> Vec<usize> {
    let mut d: Vec<usize> = (0..m).collect();
    for i in (1..m).rev() {
        let j = crate::tree::uniform_below(rng, i as u64 + 1) as usize;
        d.swap(i, j);
    }
    d
}
