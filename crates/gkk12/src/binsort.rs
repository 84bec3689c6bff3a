//! Oblivious bin placement between two parties, the core of a fast two-party load
//! (docs/notes/gkk12.md, "Two parties alone"): XOR-shared records, each with a secret label,
//! end up in `2^L` bins of `Z` slots, every real record in the bin its label names, every
//! other slot a dummy (all zero), and neither party learns a label, a load or where a record
//! went. It is the butterfly of bucket oblivious sort (Asharov, Chan, Nayak, Pass, Ren, Shi,
//! SOSA 2020) with merge-splits made of a small garbled circuit and OT shuffles.
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
//! 1. **Destinations.** A garbled circuit (`P0` garbles, `P1` evaluates; inputs are the XOR
//!    shares, `P1`'s by correlated OT, `P0`'s folded into the zero labels) orders the block as
//!    real records with bit 0, then dummies, then real records with bit 1, stably, and outputs
//!    each entry's position as XOR shares (the output labels' permute bits), and whether
//!    either side got more than Z real records.
//! 2. **Overflow.** The overflow bits are opened. They depend only on the labels, which are
//!    fresh random bits; the caller draws new ones on an overflow ([`Gkk12Error::LoadOverflow`]).
//! 3. **Shuffle.** Each block, with its destinations, goes through a random permutation drawn
//!    by `P0` and then one drawn by `P1` ([`crate::shuffle::hold_blocks`],
//!    [`crate::shuffle::permute_blocks`]): neither party knows the composition.
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
    FRAME_BYTES, Shares, check_frame, hold_blocks_framed, permute_blocks_framed, recv_framed,
    route_blocks, send_framed,
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

/// `n`-bit counter plus a bit: a half-adder chain (n ANDs).
fn increment(b: &mut Builder, x: &[Bit], inc: Bit) -> Vec<Bit> {
    let mut carry = inc;
    x.iter()
        .map(|&xi| {
            let s = b.xor(xi, carry);
            carry = b.and(xi, carry);
            s
        })
        .collect()
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

/// The merge-split circuit of one block of 2Z entries ([module docs](self), step 1). Inputs:
/// for each entry its valid bit then its label bit. Outputs: for each entry its destination
/// (log₂ Z + 1 bits), then the overflow bit.
fn merge_split_circuit(log_slots: u32) -> Result<Circuit, Gkk12Error> {
    let z = 1usize << log_slots;
    let w = log_slots as usize + 2;
    let mut b = Builder::new();
    let inputs = b.evaluator_bits(4 * z);
    let zero = vec![Bit::ZERO; w];
    let (mut cu, mut cv, mut cw) = (zero.clone(), zero.clone(), zero);
    let mut before = Vec::with_capacity(2 * z);
    for e in inputs.chunks(2) {
        let (r, c) = (e[0], e[1]);
        let nc = b.not(c);
        let u = b.and(r, nc);
        let wv = b.and(r, c);
        let v = b.not(r);
        before.push((r, c, cu.clone(), cv.clone(), cw.clone()));
        cu = increment(&mut b, &cu, u);
        cv = increment(&mut b, &cv, v);
        cw = increment(&mut b, &cw, wv);
    }
    // Real records with bit 0 first, then dummies (after N_u), then real records with bit 1
    // (after N_u + N_v).
    let t = add(&mut b, &cu, &cv);
    let mut out = Vec::with_capacity(2 * z * (w - 1) + 1);
    for (r, c, pu, pv, pw) in before {
        let real0 = &pu;
        let real1 = add(&mut b, &t, &pw);
        let dummy = add(&mut b, &cu, &pv);
        let real: Vec<Bit> = real0
            .iter()
            .zip(&real1)
            .map(|(&x, &y)| b.mux_bit(c, x, y))
            .collect();
        let dest: Vec<Bit> = dummy
            .iter()
            .zip(&real)
            .map(|(&x, &y)| b.mux_bit(r, x, y))
            .collect();
        out.extend_from_slice(&dest[..w - 1]);
    }
    // More than Z on a side: bit log Z + 1 set, or bit log Z and a lower one.
    let over = |b: &mut Builder, n: &[Bit]| {
        let low = b.or_all(&n[..w - 2]);
        let mid = b.and(n[w - 2], low);
        b.or(n[w - 1], mid)
    };
    let ou = over(&mut b, &cu);
    let ow = over(&mut b, &cw);
    let overflow = b.or(ou, ow);
    b.output_bits(&out);
    b.output(overflow);
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
    let circuit = merge_split_circuit(layout.log_slots)?;
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
    let dbits = layout.log_slots as usize + 1;
    // [1] This party's shares of (valid, label bit s) of every entry, as labels.
    let mine: Vec<bool> = blocks
        .chunks_exact(eb)
        .flat_map(|e| {
            [
                bit_of(e, layout.valid),
                bit_of(e, layout.label + s as usize),
            ]
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
    let mut overflow = Vec::with_capacity(count);
    for (k, inputs) in labels.chunks(2 * m).enumerate() {
        let out = match role {
            Role::Garbler(g) => garble_on_labels(session, g, circuit, inputs)?,
            Role::Evaluator(e) => evaluate_on_labels(session, e, circuit, inputs)?,
        };
        for (j, d) in out[..m * dbits].chunks(dbits).enumerate() {
            let byte = d
                .iter()
                .enumerate()
                .fold(0u8, |acc, (t, &w)| acc | (((w & 1) as u8) << t));
            blocks[(k * m + j) * eb + layout.bytes] = byte;
        }
        overflow.push(out[m * dbits] & 1 == 1);
    }
    // [2] The overflow bits, opened.
    let packed = crate::storage::pack(overflow.iter().copied());
    send_framed(session, p, &packed, frame)?;
    let theirs = recv_framed(session, p, "overflow bits", count.div_ceil(8), frame)?;
    if (0..count).any(|k| overflow[k] ^ bit_of(&theirs, k)) {
        return Err(Gkk12Error::LoadOverflow { tree });
    }
    // [3] P0's permutations, then P1's.
    let mut shares = Shares {
        bytes: eb,
        data: blocks.to_vec(),
    };
    for permuter_is_p0 in [true, false] {
        let me_permutes = matches!(role, Role::Garbler(_)) == permuter_is_p0;
        if me_permutes {
            let dests: Vec<Vec<usize>> = (0..count).map(|_| random_perm(m, rng)).collect();
            let controls = route_blocks(&dests)?;
            permute_blocks_framed(session, ot_recv, &mut shares, m, &controls, false, frame)?;
        } else {
            hold_blocks_framed(session, ot_send, &mut shares, m, false, frame)?;
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
            let d = usize::from(my_dest[k * m + j] ^ their[k * m + j]);
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

/// A uniformly random permutation of `0..m`.
fn random_perm<R: RngCore + ?Sized>(m: usize, rng: &mut R) -> Vec<usize> {
    let mut d: Vec<usize> = (0..m).collect();
    for i in (1..m).rev() {
        let j = crate::tree::uniform_below(rng, i as u64 + 1) as usize;
        d.swap(i, j);
    }
    d
}
