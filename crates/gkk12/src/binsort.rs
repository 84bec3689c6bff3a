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
//!    additive shares modulo 2^8 (2Z ≤ 256) or 2^16. Four random OTs and 24 bytes of answers an
//!    entry (32 with two-byte destinations), where a garbled circuit for the same took about 60
//!    AND gates (1.9 KB). Blocks go in batches of about 2^15 entries, pipelined (`P0` answers
//!    batch b while `P1` answers batch b − 1), so that both parties work at once and the OT
//!    keys held at once stay bounded.
//! 2. **Overflow.** A garbled circuit per batch of blocks adds the two parties' shares of
//!    each block's two counts and outputs whether any exceeds Z; the bit is opened. It
//!    depends only on the labels, which are fresh random bits; the caller draws new ones on
//!    an overflow ([`Gkk12Error::LoadOverflow`]).
//! 3. **Shuffle.** Each block, with its destinations, goes through a random permutation drawn
//!    by `P0` and then one drawn by `P1` (Beneš networks of OT switches run block by block,
//!    one correction per switch, the destination bytes re-shared additively:
//!    `shuffle::BlockNet`): neither party knows the composition.
//! 4. **Open and move.** The shuffled destinations are opened: the order of the block
//!    composed with a uniform permutation nobody knows, so a uniform permutation whatever the
//!    labels. Both parties move their shares by it.
//!
//! Steps 3 and 4 run in batches of whole blocks (about 2^14 switches), pipelined so that both
//! parties compute at once: `P0` works on batch b's networks while `P1` already holds batch
//! b + 1 through `P0`'s.
//!
//! # Phases
//! The layout's bins are sized for the tree's buckets and are mostly dummies (at 2^20 items
//! of 128 bits, 2^19 bins of 32 slots for a mean load of 2), and every stage moves every
//! slot. Larger bins can be fuller and still overflow with probability at most 2^−64, so the
//! records may first go through butterflies of fewer, larger bins ([`phases`]): after a phase
//! ending at 2^ℓ bins, each bin holds the records whose label's low ℓ bits are its own; its
//! slots are dealt round-robin over the 2^d bins it splits into in the next phase, and that
//! phase's stages run on every bin's bins side by side, sorting by the next d bits. At 2^20
//! items the phases of powers of two ([`place`], [`phases`]) end at (2^12 bins of 512),
//! (2^15 of 128), (2^17 of 64) and the layout's (2^19 of 32): 2.5·10^9 slot moves through
//! switch layers instead of 7.0·10^9. Bins of any size ([`place_bins`], [`bin_phases`]) pad
//! less: a block of 2Z entries goes through a Beneš network on 2Z entries whatever Z is
//! (`shuffle::BlockNet`), and at 2^20 the phases end at (2^9 of 2560), (2^10 of 1408), (2^11
//! of 768), … (2^15 of 108). The sorted load ends there at 2^16 bins of 72 and splits them
//! ([`Split`]): 1.2·10^9 slot moves, where powers of two took 1.96·10^9.
//! Destinations take two bytes when a phase's blocks have more than 256 entries.
//!
//! Every block of a stage goes through steps 1 and 2 together (step 1 in pipelined batches),
//! then through steps 3 and 4 batch by batch. Messages depend
//! on n, the record size, L and Z only, and none is longer than
//! [`FRAME_BYTES`] (or the `frame` of [`place_framed`]): a batch longer than that (a shuffle
//! stage's corrections, the opened destinations, the overflow bits) goes as several frames
//! back to back, every one checked to be of its exact length.
//!
//! # A last split
//! [`place_split`] runs one more stage whose blocks are single bins: real records with a
//! further bit clear go to the bin's start, those with it set to its end, dummies between
//! ([`Split`]). The same destinations, with the block a bin and the overflow limit Z − edge
//! a side: for a tree, bins whose middle is the node's bucket and whose ends are its
//! children's ([`crate::sortload`]), so that bins larger than a bucket still fit.
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
    BlockNet, FRAME_BYTES, NetScratch, RouteScratch, Shares, check_frame, recv_framed, route_any,
    send_framed, send_framed_vec, switch_count,
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

    /// The same bins as [`Bins`].
    pub fn bins_of(&self) -> Bins {
        Bins {
            log_bins: self.log_bins,
            slots: self.slots(),
            bytes: self.bytes,
            valid: self.valid,
            label: self.label,
        }
    }
}

/// Bins of any number of slots: [`Layout`] with Z not necessarily a power of two, for
/// [`place_bins`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bins {
    /// L: there are 2^L bins, and labels have L bits.
    pub log_bins: u32,
    /// Z: slots per bin (1 ≤ Z ≤ 128).
    pub slots: usize,
    /// Bytes per record.
    pub bytes: usize,
    /// The bit of a record that says it is real.
    pub valid: usize,
    /// The first bit of a record's label.
    pub label: usize,
}

impl Bins {
    /// Bins: 2^L.
    pub fn bins(&self) -> usize {
        1 << self.log_bins
    }

    fn check(&self, records: usize) -> Result<(), Gkk12Error> {
        let bits = 8 * self.bytes;
        if !(1..=128).contains(&self.slots)
            || self.log_bins > 24
            || self.valid >= bits
            || self.label + self.log_bins as usize > bits
            || records.div_ceil(self.bins()) > self.slots
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

/// Entries whose destinations are computed together (whole blocks; one block if larger): a
/// batch of the destinations' pipeline.
const DEST_BATCH: usize = 1 << 15;

/// Blocks per overflow circuit: its garbled tables (about 3(log₂ Z + 2) AND gates a block)
/// stay under 32 KiB.
const OVERFLOW_BATCH: usize = 32;

/// The overflow circuit of `blocks` blocks ([module docs](self), step 2): inputs as in
/// [`counts_circuit`], a side overflowing when it has more than `limit` real records (Z in a
/// butterfly, Z − edge in a [`Split`]).
fn limit_circuit(w: usize, limit: usize, blocks: usize) -> Result<Circuit, Gkk12Error> {
    counts_circuit(w, blocks, |b, n| {
        // n > limit, from the least significant bit up: where the limit has a 0, a 1 of n
        // makes it larger; where it has a 1, n is larger only with a 1 and larger below.
        let mut gt = Bit::ZERO;
        for (k, &x) in n.iter().enumerate() {
            gt = if (limit >> k) & 1 == 0 {
                b.or(x, gt)
            } else {
                b.and(x, gt)
            };
        }
        if limit >> n.len() != 0 { Bit::ZERO } else { gt }
    })
}

/// A circuit that adds the parties' shares of each block's two counts and outputs whether
/// `over` holds for any of them. Inputs, per block, `w` bits each: `P0`'s additive share of
/// the block's count of real records with bit 0, `P1`'s, then the same for bit 1 (modulo
/// 2^w; a count is at most the block's entries, below 2^w).
fn counts_circuit(
    w: usize,
    blocks: usize,
    over: impl Fn(&mut Builder, &[Bit]) -> Bit,
) -> Result<Circuit, Gkk12Error> {
    let mut b = Builder::new();
    let inputs = b.evaluator_bits(4 * w * blocks);
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

/// The butterflies `n` records go through when placed into `layout`, each as (log₂ of its
/// bins, log₂ of their slots), the last the layout's own: one when they go straight into the
/// layout's bins, more when larger bins first save work ([module docs](self), "Phases").
/// Both parties derive it from public sizes. [`place`] runs these, every bin a power of two.
pub fn phases(n: usize, layout: &Layout) -> Vec<(u32, u32)> {
    Plan::new(n, &layout.bins_of(), Sizes::PowersOfTwo)
        .phases
        .iter()
        .map(|&(level, slots)| (level, slots.trailing_zeros()))
        .collect()
}

/// The butterflies of [`place_bins`], each as (log₂ of its bins, their slots): as [`phases`],
/// with bins of any size before the last (at 2^20 records, 2^9 bins of 2560 slots first
/// rather than 2^12 of 512).
pub fn bin_phases(n: usize, bins: &Bins) -> Vec<(u32, usize)> {
    Plan::new(n, bins, Sizes::Any).phases
}

/// What placing `n` records into `bins` by [`place_bins`] costs by the measure the phases
/// minimise (entries times switches, over every stage), with a [`Split`] stage if `split`:
/// for choosing between layouts.
pub fn cost(n: usize, bins: &Bins, split: bool) -> f64 {
    let last = if split {
        stage_cost(bins.bins() * bins.slots, bins.slots)
    } else {
        0.0
    };
    Plan::new(n, bins, Sizes::Any).cost + last
}

/// One stage over `entries` entries in blocks of `block`: every block through two networks
/// of [`switch_count`]`(block)` switches, each moving two entries: `4 (2 log₂ block − 1)`
/// per entry for a power of two.
fn stage_cost(entries: usize, block: usize) -> f64 {
    (entries / block.max(1)) as f64 * 4.0 * switch_count(block) as f64
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
    role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    layout: &Layout,
    tree: usize,
    rng: &mut R,
    frame: usize,
) -> Result<Shares, Gkk12Error> {
    let to = Target {
        layout: layout.bins_of(),
        sizes: Sizes::PowersOfTwo,
        split: None,
        tree,
        frame,
    };
    place_inner(session, role, ot_send, ot_recv, records, &to, rng)
}

/// A last stage after the butterflies that splits every bin in two by one more bit of the
/// label, keeping a middle: in each bin, the real records with bit `bit` clear fill it from
/// its first slot, those with the bit set from its last, and dummies the rest, so that the
/// first `edge` slots hold records with the bit clear only, the last `edge` records with it
/// set only, and the middle either. For a tree: a bin of level ℓ whose middle goes to the
/// node's own bucket and whose edges go to its children's. A side with more than Z − `edge`
/// real records overflows ([`Gkk12Error::LoadOverflow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// The record bit the bins split by.
    pub bit: usize,
    /// Slots at each end of a bin for one side only (at most Z / 2).
    pub edge: usize,
}

/// [`place`] followed by a [`Split`] of every bin.
///
/// # Errors
/// As [`place`]; [`Gkk12Error::Misuse`] for a split bit that is the valid bit, a label bit or
/// beyond the record, or an edge beyond half a bin.
#[allow(clippy::too_many_arguments)]
pub fn place_split<R: RngCore + ?Sized>(
    session: &mut Session,
    role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    layout: &Layout,
    split: Split,
    tree: usize,
    rng: &mut R,
) -> Result<Shares, Gkk12Error> {
    let to = Target {
        layout: layout.bins_of(),
        sizes: Sizes::PowersOfTwo,
        split: Some(split),
        tree,
        frame: FRAME_BYTES,
    };
    place_inner(session, role, ot_send, ot_recv, records, &to, rng)
}

/// [`place`] into bins of any size Z ≤ 128, through phases whose bins may have any size
/// ([`bin_phases`]), then a [`Split`] of every bin if `split` is given: the placement of the
/// sorted load ([`crate::sortload`]).
///
/// # Errors
/// As [`place_split`].
#[allow(clippy::too_many_arguments)]
pub fn place_bins<R: RngCore + ?Sized>(
    session: &mut Session,
    role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    bins: &Bins,
    split: Option<Split>,
    tree: usize,
    rng: &mut R,
) -> Result<Shares, Gkk12Error> {
    let to = Target {
        layout: *bins,
        sizes: Sizes::Any,
        split,
        tree,
        frame: FRAME_BYTES,
    };
    place_inner(session, role, ot_send, ot_recv, records, &to, rng)
}

/// Where [`place_inner`] puts the records, and how it talks.
struct Target {
    layout: Bins,
    sizes: Sizes,
    split: Option<Split>,
    tree: usize,
    frame: usize,
}

fn place_inner<R: RngCore + ?Sized>(
    session: &mut Session,
    role: Role<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    records: &Shares,
    to: &Target,
    rng: &mut R,
) -> Result<Shares, Gkk12Error> {
    let (layout, tree, frame) = (&to.layout, to.tree, to.frame);
    check_frame(frame)?;
    let n = records.data.len().checked_div(records.bytes).unwrap_or(0);
    if records.bytes != layout.bytes {
        return Err(Gkk12Error::Misuse(
            "records of another size than the layout's",
        ));
    }
    layout.check(n)?;
    if let Some(split) = to.split {
        let labels = layout.label..layout.label + layout.log_bins as usize;
        if split.bit == layout.valid
            || labels.contains(&split.bit)
            || split.bit >= 8 * layout.bytes
            || 2 * split.edge > layout.slots
        {
            return Err(Gkk12Error::Misuse("a split that does not fit the layout"));
        }
    }
    if let Role::Garbler(g) = &role
        && g.delta() != ot_send.delta()
    {
        // The evaluator's input labels come by OT under `ot_send`'s Δ: any other Δ would
        // garble circuits whose outputs decode to garbage.
        return Err(Gkk12Error::Misuse(
            "the garbler's Δ must be its OT sender's",
        ));
    }
    let p = peer(session)?;
    let mut ctx = Ctx {
        session,
        p,
        role,
        tree,
        frame,
    };
    let rb = layout.bytes;
    // `v`: the entries of the last pass, bin after bin (`eb` bytes each, the record first);
    // `labels[g]`: the label bits its bin `g` stands for so far. Two buffers serve every
    // stage of every pass, each stage moving `v` into `spare`.
    let (mut v, mut spare) = (Vec::new(), Vec::new());
    let (mut labels, mut prev, mut eb) = (vec![0usize], (0u32, 0usize), rb);
    let phases = Plan::new(n, layout, to.sizes).phases;
    for (k, &(level, slots)) in phases.iter().enumerate() {
        let pass = Pass::new(layout, slots, prev.0, level - prev.0);
        if k == 0 {
            pass.start(&records.data, n, &mut spare);
        } else {
            pass.spread(&v, eb, prev.1, &mut spare);
        }
        std::mem::swap(&mut v, &mut spare);
        pass.run(&mut ctx, ot_send, ot_recv, (&mut v, &mut spare), rng)?;
        if let Some(sp) = to.split.filter(|_| k + 1 == phases.len()) {
            pass.split(&mut ctx, ot_send, ot_recv, (&mut v, &mut spare), sp, rng)?;
        }
        // Bin g·2^d + j stands for its large bin's bits and then bits j.
        let d = level - prev.0;
        labels = labels
            .iter()
            .flat_map(|&l| (0..1usize << d).map(move |j| l | (j << prev.0)))
            .collect();
        prev = (level, slots);
        eb = pass.eb;
    }
    let z = layout.slots;
    let mut out = vec![0u8; labels.len() * z * rb];
    for (bin, &label) in v.chunks_exact(z * eb).zip(&labels) {
        let to = &mut out[label * z * rb..(label + 1) * z * rb];
        for (dst, e) in to.chunks_exact_mut(rb).zip(bin.chunks_exact(eb)) {
            dst.copy_from_slice(&e[..rb]);
        }
    }
    Ok(Shares {
        bytes: rb,
        data: out,
    })
}

/// What every stage needs besides its data.
struct Ctx<'s, 'r> {
    session: &'s mut Session,
    p: doram_core::PartyId,
    role: Role<'r>,
    tree: usize,
    frame: usize,
}

/// How the records are placed: a sequence of butterflies (phases), each ending at
/// `(level, slots)`: 2^level bins of Z slots, sorted by the label's low `level` bits. The
/// last is the layout's own bins.
///
/// The layout's bins are sized for the tree's buckets and are mostly dummies (at 2^20 items of
/// 128 bits, 2^19 bins of 32 slots for a mean load of 2), and every stage of a butterfly moves
/// every slot. Larger bins can be fuller and still overflow with probability at most 2^−64
/// (2^12 bins of 512 slots for a mean of 256, or 2^9 of 2543 for a mean of 2048): the first
/// stages run on those, and only the last ones on the layout's bins. Phases are chosen by
/// their cost, stages times entries times switches per entry (two networks on blocks of 2Z,
/// [`stage_cost`]), over every sequence whose bins never overflow (a binomial tail with a
/// union bound over bins and stages) and where a bin's slots, dealt round-robin over the bins
/// it splits into, fit there. Bin sizes before the last are powers of two ([`place`]) or any
/// of [`any_sizes`] ([`place_bins`]).
struct Plan {
    phases: Vec<Phase>,
    cost: f64,
}

/// Where a phase ends: (log₂ of its bins, their slots).
type Phase = (u32, usize);

/// Which bin sizes the phases before the last may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sizes {
    PowersOfTwo,
    Any,
}

/// Bins of a phase before the last overflow with probability at most 2^−OVERFLOW_BITS.
const OVERFLOW_BITS: f64 = 64.0;

/// The largest bins of a phase: destinations in two bytes, counts in the overflow circuit's
/// 16-bit adders.
const MAX_SLOTS: usize = 1 << 14;

/// The bin sizes a phase of [`place_bins`] may have: every size up to 32, then sixteen per
/// octave up to [`MAX_SLOTS`] (within 6 % of any size).
fn any_sizes() -> impl Iterator<Item = usize> {
    let octaves = (5..14usize).flat_map(|k| (17..=32).map(move |j| j << (k - 4)));
    (2..=32).chain(octaves)
}

impl Plan {
    fn new(n: usize, bins: &Bins, sizes: Sizes) -> Plan {
        let (l, lz) = (bins.log_bins, bins.slots);
        // Blocks of two bins.
        let cost = |stages: u32, level: u32, slots: usize| {
            f64::from(stages) * stage_cost(slots << level, 2 * slots)
        };
        let direct = Plan {
            phases: vec![(l, lz)],
            cost: cost(l, l, lz),
        };
        if l == 0 {
            return direct;
        }
        let candidates: Vec<usize> = match sizes {
            Sizes::PowersOfTwo => (1..=MAX_SLOTS.trailing_zeros()).map(|k| 1 << k).collect(),
            Sizes::Any => any_sizes().collect(),
        };
        // The states a phase before the last may end at, each with its overflow bound,
        // computed once: the sizes where the records fit and that are not far beyond their
        // mean load μ. Bins of μ + 10√μ + 30 are below 2^−64 already, so the cheapest safe
        // size of the grid is at most 2μ + 128 and a power of two at most twice that (powers
        // of two are searched up to four times it).
        let factor = match sizes {
            Sizes::PowersOfTwo => 4.0,
            Sizes::Any => 1.0,
        };
        let states: Vec<Vec<(usize, f64)>> = (0..l)
            .map(|level| {
                let mean = n as f64 / f64::from(level).exp2();
                let cap = factor * (2.0 * mean + 128.0);
                candidates
                    .iter()
                    .filter(|&&z| n.div_ceil(1 << level) <= z && z as f64 <= cap)
                    .map(|&z| (z, crate::load::log2_overflow(n as u64, level, z)))
                    .collect()
            })
            .collect();
        let safe = |bound: f64, stages: u32| bound + f64::from(stages).log2() <= -OVERFLOW_BITS;
        // best[(level, z)]: the cheapest cost and the phase before.
        // An ordered map: both parties must break ties between equal costs alike.
        let mut best: std::collections::BTreeMap<Phase, (f64, Option<Phase>)> =
            std::collections::BTreeMap::new();
        for lv in 1..=l {
            let here_states: Vec<(usize, Option<f64>)> = if lv == l {
                vec![(lz, None)]
            } else {
                states[lv as usize]
                    .iter()
                    .map(|&(z, b)| (z, Some(b)))
                    .collect()
            };
            for (z, bound) in here_states {
                let ok = |stages: u32| bound.is_none_or(|b| safe(b, stages));
                let mut here: Option<(f64, Option<Phase>)> = None;
                if n.div_ceil(1 << lv) <= z && ok(lv) {
                    here = Some((cost(lv, lv, z), None));
                }
                for (&(pl, pz), &(pc, _)) in best.range(..(lv, 0)) {
                    let stages = lv - pl;
                    if pz as u64 <= (z as u64) << stages && ok(stages) {
                        let c = pc + cost(stages, lv, z);
                        if here.is_none_or(|(h, _)| c < h) {
                            here = Some((c, Some((pl, pz))));
                        }
                    }
                }
                if let Some(h) = here {
                    best.insert((lv, z), h);
                }
            }
        }
        let mut phases = Vec::new();
        let mut at = Some((l, lz));
        let total = best.get(&(l, lz)).map_or(direct.cost, |b| b.0);
        while let Some(k) = at {
            let Some(&(_, before)) = best.get(&k) else {
                return direct;
            };
            phases.push(k);
            at = before;
        }
        phases.reverse();
        Plan {
            phases,
            cost: total,
        }
    }
}

/// One butterfly: `stages` stages over bins of Z entries, stage s moving each record by its
/// bit `label + s` ([module docs](self)). Entries are the record's bytes and then `db` bytes
/// of the destination's share.
struct Pass {
    slots: usize,
    bins: usize,
    stages: u32,
    rb: usize,
    db: usize,
    eb: usize,
    valid: usize,
    label: usize,
}

impl Pass {
    /// A pass over the layout's records, sorting by label bits `first ..` for `stages` stages
    /// into bins of Z = `slots` (2^(first + stages) of them: the bins of several independent
    /// butterflies side by side when `first > 0`). Destinations (below 2Z) take one byte up
    /// to 2Z = 256, two beyond.
    fn new(layout: &Bins, slots: usize, first: u32, stages: u32) -> Pass {
        let db = if 2 * slots > 256 { 2 } else { 1 };
        Pass {
            slots,
            bins: 1 << (first + stages),
            stages,
            rb: layout.bytes,
            db,
            eb: layout.bytes + db,
            valid: layout.valid,
            label: layout.label + first as usize,
        }
    }

    /// This pass's entries, all zero (dummies), in `v`.
    fn zeros(&self, v: &mut Vec<u8>) {
        v.clear();
        v.resize(self.bins * self.slots * self.eb, 0);
    }

    /// Into `v`, the entries with record `i` in bin `i mod bins`, slot `i / bins`.
    fn start(&self, records: &[u8], n: usize, v: &mut Vec<u8>) {
        let (z, eb, rb) = (self.slots, self.eb, self.rb);
        self.zeros(v);
        for i in 0..n {
            let (bin, slot) = (i % self.bins, i / self.bins);
            let at = (bin * z + slot) * eb;
            v[at..at + rb].copy_from_slice(&records[i * rb..(i + 1) * rb]);
        }
    }

    /// Into `v`, the entries from those of a previous phase (`prev`, entries of `peb` bytes
    /// with the record first, its bins of `big` slots one after another): large bin c's slot k
    /// in bin `c·2^d + (k mod 2^d)`, slot `k / 2^d`, with 2^d = this pass's bins over the
    /// previous phase's.
    fn spread(&self, prev: &[u8], peb: usize, big: usize, v: &mut Vec<u8>) {
        let (z, eb, rb) = (self.slots, self.eb, self.rb);
        let d = self.stages;
        self.zeros(v);
        for (i, e) in prev.chunks_exact(peb).enumerate() {
            let (c, k) = (i / big, i % big);
            let (bin, slot) = ((c << d) + k % (1 << d), k >> d);
            let at = (bin * z + slot) * eb;
            v[at..at + rb].copy_from_slice(&e[..rb]);
        }
    }

    /// A stage of this pass on blocks of `m` entries (two bins, or one for a [`Split`]).
    fn shape(&self, m: usize) -> Shape {
        Shape {
            m,
            eb: self.eb,
            db: self.db,
            valid: self.valid,
            w: (usize::BITS - (2 * self.slots).leading_zeros()) as usize,
        }
    }

    /// The [`Split`] stage on the pass's bins (each one block of Z entries).
    fn split<R: RngCore + ?Sized>(
        &self,
        ctx: &mut Ctx<'_, '_>,
        ot_send: &mut impl CotExtSender,
        ot_recv: &mut impl CotExtReceiver,
        (v, out): (&mut Vec<u8>, &mut Vec<u8>),
        split: Split,
        rng: &mut R,
    ) -> Result<(), Gkk12Error> {
        let shape = self.shape(self.slots);
        let blocks = self.bins.clamp(1, OVERFLOW_BATCH);
        let circuit = limit_circuit(shape.w, self.slots - split.edge, blocks)?;
        // Every entry of `out` is written: the destinations are a permutation of each block.
        out.resize(v.len(), 0);
        let into = (&mut out[..], Next::Bins { z: self.slots });
        stage(
            ctx, ot_send, ot_recv, &circuit, v, into, &shape, split.bit, rng,
        )?;
        std::mem::swap(v, out);
        Ok(())
    }

    fn run<R: RngCore + ?Sized>(
        &self,
        ctx: &mut Ctx<'_, '_>,
        ot_send: &mut impl CotExtSender,
        ot_recv: &mut impl CotExtReceiver,
        (v, out): (&mut Vec<u8>, &mut Vec<u8>),
        rng: &mut R,
    ) -> Result<(), Gkk12Error> {
        let bins = self.bins;
        let shape = self.shape(2 * self.slots);
        let circuit = limit_circuit(shape.w, self.slots, (bins / 2).clamp(1, OVERFLOW_BATCH))?;
        // `v` is in stage 0's block order (bins b and b + 1 side by side: bin order); each stage
        // moves its entries straight into the next stage's block order, the last into bin
        // order.
        // Every entry of `out` is written: the destinations are a permutation of each block.
        out.resize(v.len(), 0);
        for s in 0..self.stages {
            let next = Next::Butterfly {
                s,
                z: self.slots,
                last: s + 1 == self.stages,
            };
            let bit = self.label + s as usize;
            let into = (&mut out[..], next);
            stage(ctx, ot_send, ot_recv, &circuit, v, into, &shape, bit, rng)?;
            std::mem::swap(v, out);
        }
        Ok(())
    }
}

/// Where a stage moves an entry: `place(k, d)`, the entry of the output that destination `d`
/// of block `k` goes to.
#[derive(Clone, Copy, Debug)]
enum Next {
    /// Blocks are bins b and b + 2^s, every b with bit s clear in increasing order; the output
    /// is in the next stage's block order, or in bin order after the `last` stage.
    Butterfly { s: u32, z: usize, last: bool },
    /// Blocks are bins, and so is the output ([`Split`]).
    Bins { z: usize },
}

impl Next {
    /// Where block `k`'s destinations go: `place(k, d)` is `first + d` for `d` below Z and
    /// `second + d − Z` from Z on, as `(first, second, Z)` (a bin's slots are consecutive).
    fn bases(self, k: usize) -> (usize, usize, usize) {
        match self {
            Next::Bins { z } => (k * z, k * z, z),
            Next::Butterfly { s, z, last } => {
                // Block k's bins: b (destinations below Z) and b + 2^s.
                let b = ((k >> s) << (s + 1)) | (k & ((1 << s) - 1));
                let start = |bin: usize| {
                    if last {
                        return bin * z;
                    }
                    // Bin c is in stage s + 1's block of c without bit s + 1, in its half.
                    let t = s + 1;
                    let block = ((bin >> (t + 1)) << t) | (bin & ((1 << t) - 1));
                    (2 * block + ((bin >> t) & 1)) * z
                };
                (start(b), start(b | (1 << s)), z)
            }
        }
    }
}

/// What a stage works on: blocks of `m` entries of `eb` bytes, the last `db` of each the share
/// of its destination; the bit that says a record is real; the width `w` of the counts in the
/// overflow circuit (a count is at most `m` < 2^(w − 1)).
struct Shape {
    m: usize,
    eb: usize,
    db: usize,
    valid: usize,
    w: usize,
}

/// One stage on `blocks` (consecutive blocks of `shape.m` entries), moving records by their
/// bit `bit`; `circuit` tells whether a block's counts overflow.
#[allow(clippy::too_many_arguments)]
fn stage<R: RngCore + ?Sized>(
    ctx: &mut Ctx<'_, '_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    circuit: &Circuit,
    blocks: &mut [u8],
    out: (&mut [u8], Next),
    shape: &Shape,
    bit: usize,
    rng: &mut R,
) -> Result<(), Gkk12Error> {
    let (session, p, frame) = (&mut *ctx.session, ctx.p, ctx.frame);
    let role = &mut ctx.role;
    let (m, eb, db) = (shape.m, shape.eb, shape.db);
    let entries = blocks.len() / eb;
    let count = entries / m;
    // [1] This party's shares of (valid, label bit s) of every entry.
    let bits: Vec<(bool, bool)> = blocks
        .chunks_exact(eb)
        .map(|e| (bit_of(e, shape.valid), bit_of(e, bit)))
        .collect();
    let garbler = matches!(role, Role::Garbler(_));
    let link = Link { session, p, frame };
    let (dests, totals) = if garbler {
        destinations_p0(link, ot_send, ot_recv, &bits, m, db, rng)?
    } else {
        destinations_p1(link, ot_send, ot_recv, &bits, m, db, rng)?
    };
    for (e, d) in blocks.chunks_exact_mut(eb).zip(dests) {
        e[eb - db..].copy_from_slice(&d.to_le_bytes()[..db]);
    }
    let session = &mut *ctx.session;
    let role = &mut ctx.role;
    // [2] Whether a block overflows, a bit per batch of blocks, opened.
    let w = shape.w;
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
        return Err(Gkk12Error::LoadOverflow { tree: ctx.tree });
    }
    // [3] and [4]: P0's permutations, then P1's, then open the destinations and move.
    shuffle_and_move(ctx, ot_send, ot_recv, blocks, out, shape, rng)
}

/// Switches per batch of a stage's networks: a batch is whole blocks, their OTs one
/// extension and their corrections one message (about 1 MB for 64-byte entries).
const NET_BATCH: usize = 1 << 14;

/// Steps 3 and 4 of a stage on `blocks` (blocks of `shape.m` entries of `shape.eb` bytes, the
/// last `shape.db` the destination's additive share): every block through a random permutation drawn by `P0`
/// (network A) and one drawn by `P1` (network B), both [`BlockNet`]s, then the destinations
/// opened and every block moved by them.
///
/// In batches of whole blocks, pipelined so that both parties work at once: `P0` permutes
/// batch b through A and holds it through B while `P1` holds batch b + 1 through A; each party
/// sends a batch's destination shares as soon as they are final and moves the batch when the
/// peer's arrive (`P0` one batch later, so that it never waits for them); each permuter's OT
/// extension for batch b + 1 goes before it works on batch b. Every message's size follows
/// from the sizes alone.
#[allow(clippy::too_many_arguments)]
fn shuffle_and_move<R: RngCore + ?Sized>(
    ctx: &mut Ctx<'_, '_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    blocks: &mut [u8],
    (out, to): (&mut [u8], Next),
    shape: &Shape,
    rng: &mut R,
) -> Result<(), Gkk12Error> {
    let (m, eb, db) = (shape.m, shape.eb, shape.db);
    let net = BlockNet::new(m, eb, eb - db)?;
    let per = net.switches();
    let blk = m * eb;
    let count = blocks.len() / blk;
    let bpb = (NET_BATCH / per.max(1)).max(1);
    let batches = count.div_ceil(bpb);
    let span = |b: usize| (b * bpb * blk)..((b + 1) * bpb).min(count) * blk;
    let mut run = Batches {
        session: &mut *ctx.session,
        p: ctx.p,
        frame: ctx.frame,
        net,
        m,
        eb,
        db,
        scratch: NetScratch::default(),
        out: Vec::new(),
        perm: Vec::new(),
        route: RouteScratch::default(),
    };
    if matches!(ctx.role, Role::Garbler(_)) {
        // The destination shares sent for the batch before, moved one batch later.
        let mut sent: Option<Vec<u8>> = None;
        let mut keys = run.extend(ot_recv, span(0).len() / blk, rng)?;
        for b in 0..batches {
            let next = if b + 1 < batches {
                Some(run.extend(ot_recv, span(b + 1).len() / blk, rng)?)
            } else {
                None
            };
            let region = &mut blocks[span(b)];
            run.permute(&keys, region)?;
            run.hold(ot_send, region)?;
            let mine = run.send_dests(region)?;
            if let Some(before) = sent.replace(mine) {
                let at = span(b - 1);
                run.open_and_move(&before, &blocks[at.clone()], at.start / blk, out, to)?;
            }
            if let Some(k) = next {
                keys = k;
            }
        }
        if let Some(before) = sent {
            let at = span(batches - 1);
            run.open_and_move(&before, &blocks[at.clone()], at.start / blk, out, to)?;
        }
    } else {
        // What P1 sends is in the order P0 takes it: A's corrections of a batch, then B's
        // extension for it, then the destination shares of the batch before.
        if batches > 0 {
            run.hold(ot_send, &mut blocks[span(0)])?;
        }
        let mut keys = run.extend(ot_recv, span(0).len() / blk, rng)?;
        for b in 0..batches {
            let next = if b + 1 < batches {
                run.hold(ot_send, &mut blocks[span(b + 1)])?;
                Some(run.extend(ot_recv, span(b + 1).len() / blk, rng)?)
            } else {
                None
            };
            let region = &mut blocks[span(b)];
            run.permute(&keys, region)?;
            let mine = run.send_dests(region)?;
            run.open_and_move(&mine, region, span(b).start / blk, out, to)?;
            if let Some(k) = next {
                keys = k;
            }
        }
    }
    Ok(())
}

/// What [`shuffle_and_move`] needs for every batch.
struct Batches<'s> {
    session: &'s mut Session,
    p: doram_core::PartyId,
    frame: usize,
    net: BlockNet,
    m: usize,
    eb: usize,
    db: usize,
    scratch: NetScratch,
    /// The buffer the next batch's corrections are written into: the peer's corrections of
    /// the batch before, once used (the same size but for a stage's last batch), so that
    /// a batch's megabyte is neither allocated nor zeroed before the kernels overwrite it.
    out: Vec<u8>,
    perm: Vec<usize>,
    route: RouteScratch,
}

impl Batches<'_> {
    /// This party's settings for `blocks` blocks (a random permutation of each, routed) and
    /// their correlated OTs as the receiver: the extension goes to the peer now.
    fn extend<R: RngCore + ?Sized>(
        &mut self,
        ot: &mut impl CotExtReceiver,
        blocks: usize,
        rng: &mut R,
    ) -> Result<doram_twopc::iknp::CotReceiver, Gkk12Error> {
        let mut controls = Vec::with_capacity(blocks * self.net.switches());
        for _ in 0..blocks {
            shuffle_in_place(&mut self.perm, self.m, rng);
            route_any(&self.perm, &mut controls, &mut self.route);
        }
        Ok(cot_receive(self.session, ot, &controls)?)
    }

    /// Holds `region`'s blocks through the peer's network: their OTs as the sender, then the
    /// corrections.
    fn hold(&mut self, ot: &mut impl CotExtSender, region: &mut [u8]) -> Result<(), Gkk12Error> {
        let per = self.net.switches();
        let n = region.len() / (self.m * self.eb) * per;
        let cot = cot_send(self.session, ot, n)?;
        // Every byte is written by `BlockNet::hold` below.
        self.out.resize(n * self.eb, 0);
        let blocks = region.chunks_exact_mut(self.m * self.eb);
        for (k, ((blk, qs), out)) in blocks
            .zip(cot.q.chunks(per))
            .zip(self.out.chunks_mut(per * self.eb))
            .enumerate()
        {
            let first = cot.first + (k * per) as u64;
            self.net
                .hold(blk, (qs, cot.delta, first), out, &mut self.scratch);
        }
        send_framed_vec(
            self.session,
            self.p,
            std::mem::take(&mut self.out),
            self.frame,
        )
    }

    /// Permutes `region`'s blocks by this party's settings (`keys.choices`) once the peer's
    /// corrections arrive.
    fn permute(
        &mut self,
        keys: &doram_twopc::iknp::CotReceiver,
        region: &mut [u8],
    ) -> Result<(), Gkk12Error> {
        let (per, eb) = (self.net.switches(), self.eb);
        let corr = recv_framed(
            self.session,
            self.p,
            "switch corrections",
            keys.t.len() * eb,
            self.frame,
        )?;
        let it = region
            .chunks_exact_mut(self.m * eb)
            .zip(keys.t.chunks(per))
            .zip(keys.choices.chunks(per))
            .zip(corr.chunks(per * eb));
        for (k, (((blk, ts), cs), v)) in it.enumerate() {
            let first = keys.first + (k * per) as u64;
            self.net.permute(blk, (ts, first), cs, v, &mut self.scratch);
        }
        if self.out.capacity() < corr.len() {
            self.out = corr;
        }
        Ok(())
    }

    /// Sends this party's shares of the destinations in `region` (`db` bytes each), final
    /// once both networks are through; returns them.
    fn send_dests(&mut self, region: &[u8]) -> Result<Vec<u8>, Gkk12Error> {
        let mine: Vec<u8> = region
            .chunks_exact(self.eb)
            .flat_map(|e| e[self.eb - self.db..].iter().copied())
            .collect();
        send_framed(self.session, self.p, &mine, self.frame)?;
        Ok(mine)
    }

    /// Receives the peer's shares of `region`'s destinations (blocks `first ..` of the stage;
    /// this party's are `mine`, as [`Batches::send_dests`] sent them), opens them and moves every entry of `region` to its place in `out` ([`Next`]), once
    /// they are checked to be a permutation of each block.
    fn open_and_move(
        &mut self,
        mine: &[u8],
        region: &[u8],
        first: usize,
        out: &mut [u8],
        next: Next,
    ) -> Result<(), Gkk12Error> {
        let (m, eb, db, p) = (self.m, self.eb, self.db, self.p);
        let entries = region.len() / eb;
        let their = recv_framed(
            self.session,
            p,
            "destination shares",
            entries * db,
            self.frame,
        )?;
        let dest = |j: usize| {
            let sum = from_le(&mine[j * db..(j + 1) * db])
                .wrapping_add(from_le(&their[j * db..(j + 1) * db]));
            usize::from(if db == 1 { sum & 0xff } else { sum })
        };
        let mut seen = vec![false; m];
        let mut ds = vec![0usize; m];
        for (k, blk) in region.chunks_exact(m * eb).enumerate() {
            seen.fill(false);
            for (j, d) in ds.iter_mut().enumerate() {
                *d = dest(k * m + j);
                if *d >= m || std::mem::replace(&mut seen[*d], true) {
                    return Err(PeerFault::malformed(p, "destinations", "not a permutation").into());
                }
            }
            let (lo, hi, z) = next.bases(first + k);
            for (e, &d) in blk.chunks_exact(eb).zip(&ds) {
                let at = if d < z { lo + d } else { hi + d - z } * eb;
                out[at..at + eb].copy_from_slice(e);
            }
        }
        Ok(())
    }
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
fn offsets(before: [u16; 3], total_zero: u16, constant: u16) -> (u16, u16) {
    let [u, v, w] = before;
    let a = total_zero.wrapping_add(v).wrapping_sub(u);
    let b = constant.wrapping_sub(w).wrapping_sub(u);
    (a, b)
}

/// `v·A + w·B − y` modulo 2^16 for the classes `[_, v, w]`.
fn product(classes: [u16; 3], a: u16, b: u16, y: u16) -> u16 {
    let [_, v, w] = classes;
    v.wrapping_mul(a)
        .wrapping_add(w.wrapping_mul(b))
        .wrapping_sub(y)
}

/// XORs into `out` the mask of one answer of a one-out-of-four OT: `out.len()` bytes of
/// each of its two keys, from `at1` and `at2`.
fn unmask(out: &mut [u8], k1: Block, at1: usize, k2: Block, at2: usize) {
    let (k1, k2) = (k1.to_le_bytes(), k2.to_le_bytes());
    for (j, o) in out.iter_mut().enumerate() {
        *o ^= k1[at1 + j] ^ k2[at2 + j];
    }
}

/// A value modulo 2^(8·db) from its `db` little-endian bytes.
fn from_le(bytes: &[u8]) -> u16 {
    let mut x = [0u8; 2];
    x[..bytes.len()].copy_from_slice(bytes);
    u16::from_le_bytes(x)
}

/// This party's additive shares of every entry's destination (modulo 2^(8·db)), and of each
/// block's counts of real records with bit 0 and with bit 1 (modulo 2^16).
type Destinations = (Vec<u16>, Vec<(u16, u16)>);

/// The session, the peer and the frame size.
struct Link<'s> {
    session: &'s mut Session,
    p: doram_core::PartyId,
    frame: usize,
}

/// The batches of the destinations' pipeline: ranges of whole blocks of `m` entries, about
/// [`DEST_BATCH`] entries each (one block if larger).
fn dest_batches(n: usize, m: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let batch = (DEST_BATCH / m).max(1) * m;
    (0..n.div_ceil(batch)).map(move |b| b * batch..((b + 1) * batch).min(n))
}

/// A batch `P0` has answered but not yet finished: its range, the count U before each entry,
/// its random shares y, its keys of the second OTs.
type Answered = (std::ops::Range<usize>, Vec<u16>, Vec<u16>, Vec<Block>);

/// `P0`'s side of the destinations ([module docs](self), step 1), in blocks of `m` entries,
/// destinations in `db` bytes.
///
/// 1. `P1`'s bits (valid, label bit) choose in two random OTs per entry; `P0` sends, for each
///    of the four choices, `P1`'s share of the entry's classes (real with bit 0, real with bit
///    1, as `P0`'s random shares subtracted from the classes that choice gives) and `P1`'s
///    share of `v·A₀ + w·B₀` (`P0`'s `A₀`, `B₀`, [`offsets`]), each answer masked by a slice of
///    each of the two keys it is chosen by (every slice masks one answer only): a
///    one-out-of-four OT.
/// 2. The same the other way round for `v·A₁ + w·B₁`, `P0`'s bits choosing.
///
/// Both parties' counts are linear in their shares of the classes, so they cost nothing.
/// Batches of whole blocks ([`dest_batches`]) go through a pipeline: `P0` answers batch b while
/// `P1` answers batch b − 1, and `P1` sends its OT extension for batch b + 1 ahead.
fn destinations_p0<R: RngCore + ?Sized>(
    link: Link<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    bits: &[(bool, bool)],
    m: usize,
    db: usize,
    rng: &mut R,
) -> Result<Destinations, Gkk12Error> {
    let Link { session, p, frame } = link;
    let n = bits.len();
    let ab = 4 + db;
    let mut dests = Vec::with_capacity(n);
    let mut totals_out = Vec::with_capacity(n / m);
    let mut pending: Option<Answered> = None;
    let mut finish =
        |session: &mut Session, (r, before_u, y, got): Answered| -> Result<(), Gkk12Error> {
            let theirs = recv_framed(session, p, "destination messages", 4 * db * r.len(), frame)?;
            for (k, e) in r.enumerate() {
                let (r0, c0) = (usize::from(bits[e].0), usize::from(bits[e].1));
                let at = (4 * k + 2 * r0 + c0) * db;
                let mut z = [0u8; 2];
                z[..db].copy_from_slice(&theirs[at..at + db]);
                unmask(&mut z[..db], got[2 * k], db * c0, got[2 * k + 1], db * r0);
                dests.push(
                    before_u[k]
                        .wrapping_add(y[k])
                        .wrapping_add(from_le(&z[..db])),
                );
            }
            Ok(())
        };
    for r in dest_batches(n, m) {
        let bits = &bits[r.clone()];
        let n = bits.len();
        let keys = cot_send(session, ot_send, 2 * n)?.into_random().msgs;
        let mine: Vec<[u16; 3]> = (0..n)
            .map(|_| {
                let (u, w) = (rng.next_u32() as u16, rng.next_u32() as u16);
                [u, 1u16.wrapping_sub(u).wrapping_sub(w), w]
            })
            .collect();
        let (before, totals) = prefix_counts(&mine, m);
        let y: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        let mut msg = Vec::with_capacity(4 * ab * n);
        for e in 0..n {
            let (r0, c0) = bits[e];
            let [xu, _, xw] = mine[e];
            let (a0, b0) = offsets(before[e], totals[e / m][0], (m - 1) as u16);
            let ([k10, k11], [k20, k21]) = (keys[2 * e], keys[2 * e + 1]);
            for (b1, k1) in [(0, k10), (1, k11)] {
                for (b2, k2) in [(0, k20), (1, k21)] {
                    let cl = classes(r0 ^ (b1 == 1), c0 ^ (b2 == 1));
                    let mut out = [0u8; 6];
                    out[..2].copy_from_slice(&cl[0].wrapping_sub(xu).to_le_bytes());
                    out[2..4].copy_from_slice(&cl[2].wrapping_sub(xw).to_le_bytes());
                    out[4..].copy_from_slice(&product(cl, a0, b0, y[e]).to_le_bytes());
                    unmask(&mut out[..ab], k1, ab * b2, k2, ab * b1);
                    msg.extend_from_slice(&out[..ab]);
                }
            }
        }
        send_framed_vec(session, p, msg, frame)?;
        let choices: Vec<bool> = bits.iter().flat_map(|&(r, c)| [r, c]).collect();
        let got = cot_receive(session, ot_recv, &choices)?.into_random().msgs;
        totals_out.extend(totals.iter().map(|t| (t[0], t[2])));
        if let Some(prev) = pending.take() {
            finish(session, prev)?;
        }
        pending = Some((r, before.iter().map(|b| b[0]).collect(), y, got));
    }
    if let Some(prev) = pending.take() {
        finish(session, prev)?;
    }
    Ok((dests, totals_out))
}

/// `P1`'s side of [`destinations_p0`].
fn destinations_p1<R: RngCore + ?Sized>(
    link: Link<'_>,
    ot_send: &mut impl CotExtSender,
    ot_recv: &mut impl CotExtReceiver,
    bits: &[(bool, bool)],
    m: usize,
    db: usize,
    rng: &mut R,
) -> Result<Destinations, Gkk12Error> {
    let Link { session, p, frame } = link;
    let n = bits.len();
    let ab = 4 + db;
    let choices = |r: &std::ops::Range<usize>| -> Vec<bool> {
        bits[r.clone()].iter().flat_map(|&(r, c)| [r, c]).collect()
    };
    let batches: Vec<std::ops::Range<usize>> = dest_batches(n, m).collect();
    let mut dests = Vec::with_capacity(n);
    let mut totals_out = Vec::with_capacity(n / m);
    let mut next = match batches.first() {
        Some(r) => Some(
            cot_receive(session, ot_recv, &choices(r))?
                .into_random()
                .msgs,
        ),
        None => None,
    };
    for (b, r) in batches.iter().enumerate() {
        let got = next.take().unwrap_or_default();
        if let Some(r1) = batches.get(b + 1) {
            next = Some(
                cot_receive(session, ot_recv, &choices(r1))?
                    .into_random()
                    .msgs,
            );
        }
        let bits = &bits[r.clone()];
        let n = bits.len();
        let theirs = recv_framed(session, p, "destination messages", 4 * ab * n, frame)?;
        let mut mine = Vec::with_capacity(n);
        let mut t0 = Vec::with_capacity(n);
        for e in 0..n {
            let (r1, c1) = (usize::from(bits[e].0), usize::from(bits[e].1));
            let at = (4 * e + 2 * r1 + c1) * ab;
            let mut out = [0u8; 6];
            out[..ab].copy_from_slice(&theirs[at..at + ab]);
            unmask(&mut out[..ab], got[2 * e], ab * c1, got[2 * e + 1], ab * r1);
            let u = u16::from_le_bytes([out[0], out[1]]);
            let w = u16::from_le_bytes([out[2], out[3]]);
            mine.push([u, 0u16.wrapping_sub(u).wrapping_sub(w), w]);
            t0.push(from_le(&out[4..ab]));
        }
        let (before, totals) = prefix_counts(&mine, m);
        let keys = cot_send(session, ot_send, 2 * n)?.into_random().msgs;
        let y: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        let mut msg = Vec::with_capacity(4 * db * n);
        for e in 0..n {
            let (r1, c1) = bits[e];
            let (a1, b1) = offsets(before[e], totals[e / m][0], 0);
            let ([k10, k11], [k20, k21]) = (keys[2 * e], keys[2 * e + 1]);
            for (s0, k1) in [(0, k10), (1, k11)] {
                for (s1, k2) in [(0, k20), (1, k21)] {
                    let t = product(classes(r1 ^ (s0 == 1), c1 ^ (s1 == 1)), a1, b1, y[e]);
                    let mut out = t.to_le_bytes();
                    unmask(&mut out[..db], k1, db * s1, k2, db * s0);
                    msg.extend_from_slice(&out[..db]);
                }
            }
        }
        send_framed_vec(session, p, msg, frame)?;
        dests.extend((0..n).map(|e| before[e][0].wrapping_add(t0[e]).wrapping_add(y[e])));
        totals_out.extend(totals.iter().map(|t| (t[0], t[2])));
    }
    Ok((dests, totals_out))
}

/// `d` set to a uniformly random permutation of `0..m` (Fisher–Yates).
pub(crate) fn shuffle_in_place<R: RngCore + ?Sized>(d: &mut Vec<usize>, m: usize, rng: &mut R) {
    d.clear();
    d.extend(0..m);
    for i in (1..m).rev() {
        let j = crate::tree::uniform_below(rng, i as u64 + 1) as usize;
        d.swap(i, j);
    }
}
