//! The ORAM client's steps as Boolean circuits (GKK12 §4.1 and §4.2; spec §6.2): the base-map
//! scan, the path lookup of every tree and the eviction of one bucket.
//!
//! # Wires and where their labels come from
//! Every input of these circuits is declared as an input wire in a fixed layout ([`Layout`]);
//! the two-party protocol supplies its label, never a Yao input in the usual sense: path
//! slots are XORs of the server's ciphertext and the client's pad (the pad enters by
//! correlated OT and the server folds its ciphertext into the zero label, so a slot costs one
//! OT per bit and no garbled input), and everything else (addresses, fresh leaves, the base
//! map, the operation, data) is state already held as labels from earlier circuits. Outputs
//! likewise stay labels, are revealed to the server (the next leaf, the overflow bit), or are
//! re-encrypted for it (rewritten slots). That choice is the protocol's; the circuits only fix
//! what is computed.
//!
//! # Slot layout
//! A slot of a tree of height h is `valid ‖ addr ‖ leaf ‖ payload`, each field least significant
//! bit first: bit 0 the valid bit, bits 1 … h the address, h + 1 … 2h the leaf, then the
//! payload (tree 0: d bits, bit k being bit k mod 64 of word k / 64; tree i ≥ 1: 16 leaf
//! labels of the tree below, h_(i−1) bits each). [`SlotCodec`] converts.
//!
//! # Gadgets and their AND gates (B slots per bucket, s bits per slot, h the height)
//! * take from a path of P slots by address: P·(h + s − 1 − h) for the address comparisons and
//!   the selection of leaf and payload; the found slot's valid bit is cleared for free (items
//!   are unique, so at most one slot matches);
//! * insert into a bucket's first empty slot: 2B + B·s (a prefix chain and one multiplexer per
//!   bit);
//! * evict from one bucket (take its first valid item, insert it into the child on the path
//!   to its leaf, leave it if that child is full): about 3·B·s, the paper's
//!   "6B log N (log N + d) for 2 log N evictions" (GKK12 §5.3).

use doram_twopc::builder::{Bit, Builder, compact_wires};
use doram_twopc::{Circuit, TwopcError};

use crate::params::{Params, RADIX, TreeGeometry};
use crate::tree::Slot;

/// A slot's bits as circuit wires.
#[derive(Clone, Debug)]
struct SlotWires {
    valid: Bit,
    addr: Vec<Bit>,
    leaf: Vec<Bit>,
    payload: Vec<Bit>,
}

impl SlotWires {
    fn of(bits: &[Bit], h: usize) -> SlotWires {
        SlotWires {
            valid: bits[0],
            addr: bits[1..1 + h].to_vec(),
            leaf: bits[1 + h..1 + 2 * h].to_vec(),
            payload: bits[1 + 2 * h..].to_vec(),
        }
    }

    fn bits(&self) -> Vec<Bit> {
        let mut out = Vec::with_capacity(1 + self.addr.len() * 2 + self.payload.len());
        out.push(self.valid);
        out.extend_from_slice(&self.addr);
        out.extend_from_slice(&self.leaf);
        out.extend_from_slice(&self.payload);
        out
    }
}

/// The bit encoding of tree `tree`'s slots ([module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCodec {
    height: u32,
    payload_bits: usize,
    /// Bits per leaf label in a position-map payload; `None` for the data tree.
    entry_bits: Option<usize>,
}

impl SlotCodec {
    /// The codec of `params`' tree `tree`.
    pub fn new(params: &Params, tree: usize) -> SlotCodec {
        let g = params.tree(tree);
        SlotCodec {
            height: g.height,
            payload_bits: g.payload_bits,
            entry_bits: (tree > 0).then(|| params.tree(tree - 1).height as usize),
        }
    }

    /// Bits of one slot.
    pub fn slot_bits(&self) -> usize {
        1 + 2 * self.height as usize + self.payload_bits
    }

    /// A slot's bits; `payload` is 64 payload bits per word (data tree) or one leaf label per
    /// word (position-map trees), as [`PlainTree`](crate::tree::PlainTree) stores them.
    pub fn encode(&self, slot: &Slot, payload: &[u64], out: &mut Vec<bool>) {
        let h = self.height as usize;
        out.push(slot.valid);
        out.extend((0..h).map(|k| (slot.addr >> k) & 1 == 1));
        out.extend((0..h).map(|k| (slot.leaf >> k) & 1 == 1));
        match self.entry_bits {
            None => {
                out.extend((0..self.payload_bits).map(|k| (payload[k / 64] >> (k % 64)) & 1 == 1))
            }
            Some(w) => {
                for &e in payload {
                    out.extend((0..w).map(|k| (e >> k) & 1 == 1));
                }
            }
        }
    }

    /// The inverse of [`SlotCodec::encode`].
    pub fn decode(&self, bits: &[bool]) -> (Slot, Vec<u64>) {
        let h = self.height as usize;
        let slot = Slot {
            valid: bits[0],
            addr: value(&bits[1..1 + h]),
            leaf: value(&bits[1 + h..1 + 2 * h]),
        };
        let payload = &bits[1 + 2 * h..];
        let payload = match self.entry_bits {
            None => payload.chunks(64).map(value).collect(),
            Some(0) => vec![0; RADIX],
            Some(w) => payload.chunks(w).map(value).collect(),
        };
        (slot, payload)
    }
}

/// The little-endian value of up to 64 bits.
pub fn value(bits: &[bool]) -> u64 {
    bits.iter()
        .enumerate()
        .fold(0u64, |acc, (k, &b)| acc | (u64::from(b) << k))
}

/// `a = b` over equal-length bit strings: `len − 1` ANDs.
fn eq_bits(b: &mut Builder, x: &[Bit], y: &[Bit]) -> Bit {
    let diff: Vec<Bit> = x.iter().zip(y).map(|(&p, &q)| b.xor(p, q)).collect();
    let any = b.or_all(&diff);
    b.not(any)
}

/// `x ⊕ s·(x ⊕ y)` bitwise: `s ? y : x`.
fn mux_bits(b: &mut Builder, s: Bit, x: &[Bit], y: &[Bit]) -> Vec<Bit> {
    x.iter().zip(y).map(|(&p, &q)| b.mux_bit(s, p, q)).collect()
}

/// `acc ⊕= s ∧ x` bitwise.
fn accumulate(b: &mut Builder, acc: &mut [Bit], s: Bit, x: &[Bit]) {
    for (a, &v) in acc.iter_mut().zip(x) {
        let t = b.and(s, v);
        *a = b.xor(*a, t);
    }
}

/// The one-hot vector of the first set bit of `bits` (all zero if none), and whether one was
/// set: `2·len − 1` ANDs.
fn first_set(b: &mut Builder, bits: &[Bit]) -> (Vec<Bit>, Bit) {
    let mut seen = Bit::ZERO;
    let mut out = Vec::with_capacity(bits.len());
    for &x in bits {
        let not_seen = b.not(seen);
        out.push(b.and(x, not_seen));
        seen = b.or(seen, x);
    }
    (out, seen)
}

/// The one-hot decoding of `index` (little-endian bits) into `n` outputs: output k is
/// `[index = k]`; indices ≥ n give all zeros.
fn decode(b: &mut Builder, index: &[Bit], n: usize) -> Vec<Bit> {
    let mut level = vec![Bit::ONE];
    for &bit in index.iter().rev() {
        // Most significant bit first: each entry splits into (¬bit, bit).
        let nb = b.not(bit);
        let mut next = Vec::with_capacity(level.len() * 2);
        for &e in &level {
            next.push(b.and(e, nb));
            next.push(b.and(e, bit));
        }
        level = next;
    }
    level.truncate(n);
    level.resize(n, Bit::ZERO);
    level
}

/// [GKK12 §4.1, step 5d; §5.3]: writes `item` (valid) into the first empty slot of `bucket`
/// if `enable`; returns whether it was written.
fn insert_first_empty(
    b: &mut Builder,
    bucket: &mut [SlotWires],
    item: &SlotWires,
    enable: Bit,
) -> Bit {
    let free: Vec<Bit> = bucket.iter().map(|s| b.not(s.valid)).collect();
    let (first, any) = first_set(b, &free);
    let new = SlotWires {
        valid: Bit::ONE,
        ..item.clone()
    };
    let new_bits = new.bits();
    for (slot, f) in bucket.iter_mut().zip(first) {
        let sel = b.and(f, enable);
        let bits = mux_bits(b, sel, &slot.bits(), &new_bits);
        *slot = SlotWires::of(&bits, slot.addr.len());
    }
    b.and(any, enable)
}

/// Input and output positions of one circuit, as bit ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Named input fields in wire order: (name, first wire, bits).
    pub inputs: Vec<(&'static str, usize, usize)>,
    /// Named output fields in output order: (name, first output, bits).
    pub outputs: Vec<(&'static str, usize, usize)>,
}

impl Layout {
    fn field(fields: &[(&'static str, usize, usize)], name: &str) -> std::ops::Range<usize> {
        let &(_, at, len) = fields
            .iter()
            .find(|f| f.0 == name)
            .unwrap_or_else(|| panic!("no field {name}"));
        at..at + len
    }

    /// The input wires of field `name`.
    ///
    /// # Panics
    /// If the circuit has no such input (a caller's bug).
    pub fn input(&self, name: &str) -> std::ops::Range<usize> {
        Layout::field(&self.inputs, name)
    }

    /// The outputs of field `name`.
    ///
    /// # Panics
    /// If the circuit has no such output (a caller's bug).
    pub fn output(&self, name: &str) -> std::ops::Range<usize> {
        Layout::field(&self.outputs, name)
    }
}

/// Declares inputs and outputs while recording the layout.
struct Io {
    b: Builder,
    layout: Layout,
    inputs: usize,
    outputs: usize,
}

impl Io {
    fn new() -> Io {
        Io {
            b: Builder::new(),
            layout: Layout::default(),
            inputs: 0,
            outputs: 0,
        }
    }

    fn input(&mut self, name: &'static str, n: usize) -> Vec<Bit> {
        self.layout.inputs.push((name, self.inputs, n));
        self.inputs += n;
        self.b.evaluator_bits(n)
    }

    fn output(&mut self, name: &'static str, bits: &[Bit]) {
        self.layout.outputs.push((name, self.outputs, bits.len()));
        self.outputs += bits.len();
        self.b.output_bits(bits);
    }

    /// The circuit, its wires reused ([`compact_wires`]): the parties keep one label per wire.
    fn finish(self) -> Result<(Circuit, Layout), TwopcError> {
        Ok((compact_wires(&self.b.finish()?), self.layout))
    }
}

/// A circuit with its layout.
#[derive(Clone, Debug)]
pub struct StepCircuit {
    /// The gates.
    pub circuit: Circuit,
    /// Where each input and output field is.
    pub layout: Layout,
}

/// [GKK12 §4.1, step 4]: the base map scan. Inputs `map` (E entries of w bits), `addr`
/// (⌈log₂ E⌉ bits), `fresh` (w bits); outputs `leaf` (the entry at `addr`, to be revealed to
/// the server) and `map` (with `fresh` at `addr`). ANDs: the decoding, then 2·E·w.
///
/// # Errors
/// Only if the circuit cannot be built (more than 2^32 wires).
pub fn base_circuit(params: &Params) -> Result<StepCircuit, TwopcError> {
    let entries = params.base_entries() as usize;
    let w = params.base_entry_bits() as usize;
    let abits = params.tree(params.trees() - 1).height as usize;
    let mut io = Io::new();
    let map = io.input("map", entries * w);
    let addr = io.input("addr", abits);
    let fresh = io.input("fresh", w);
    let b = &mut io.b;
    let hot = decode(b, &addr, entries);
    let mut leaf = vec![Bit::ZERO; w];
    let mut new_map = Vec::with_capacity(map.len());
    for (e, &h) in map.chunks(w.max(1)).zip(&hot) {
        accumulate(b, &mut leaf, h, e);
        new_map.extend(mux_bits(b, h, e, &fresh));
    }
    if w == 0 {
        new_map.clear();
    }
    io.output("leaf", &leaf);
    io.output("map", &new_map);
    let (circuit, layout) = io.finish()?;
    Ok(StepCircuit { circuit, layout })
}

/// [GKK12 §4.1, steps 5–6]: one tree's path lookup. Inputs: `path` (the (h + 1)·B slots root
/// first), `addr` (h bits), `fresh` (h bits: the item's new leaf); for a position-map tree
/// (i ≥ 1) `entry` (4 bits) and `below` (h_(i−1) bits: the new leaf of the next tree's item);
/// for the data tree `write` (1 bit) and `data` (d bits). Outputs: `path` (rewritten: the item
/// taken out and put, with its fresh leaf, into the root's first empty slot), `overflow` (1
/// bit: the root was full, to be revealed), and `leaf` (i ≥ 1: the next tree's leaf, to be
/// revealed to the server) or `data` (i = 0: the payload before the access).
///
/// # Errors
/// Only if the circuit cannot be built.
pub fn lookup_circuit(params: &Params, tree: usize) -> Result<StepCircuit, TwopcError> {
    lookup_circuit_with(params, tree, false)
}

/// [`lookup_circuit`] for an ORAM whose blocks may be absent (`sparse`: it started empty,
/// [`crate::empty`]). A position-map tree's circuit then takes one more input, `default` (the
/// payload's bits, fresh random bits neither party knows), and reads it in place of the
/// block's payload when no slot on the path holds the block: a block never written reads as
/// 16 fresh uniform leaves, so the leaf revealed next is uniform whether or not the block
/// existed. Cost: one multiplexer per payload bit (the hits are exclusive, so whether one
/// happened is their XOR, free). The data tree's absent item reads as 0, as before.
///
/// # Errors
/// Only if the circuit cannot be built.
pub fn lookup_circuit_with(
    params: &Params,
    tree: usize,
    sparse: bool,
) -> Result<StepCircuit, TwopcError> {
    let g = params.tree(tree);
    let h = g.height as usize;
    let s = g.slot_bits();
    let mut io = Io::new();
    let path_bits = io.input("path", g.path_slots() * s);
    let addr = io.input("addr", h);
    let fresh = io.input("fresh", h);
    let (entry, below, default, write, data) = if tree > 0 {
        let e = io.input("entry", 4);
        let w = params.tree(tree - 1).height as usize;
        let below = io.input("below", w);
        let default = if sparse {
            Some(io.input("default", g.payload_bits))
        } else {
            None
        };
        (e, below, default, Vec::new(), Vec::new())
    } else {
        let wr = io.input("write", 1);
        let d = io.input("data", g.payload_bits);
        (Vec::new(), Vec::new(), None, wr, d)
    };
    let b = &mut io.b;
    let mut path: Vec<SlotWires> = path_bits.chunks(s).map(|c| SlotWires::of(c, h)).collect();
    // Take the item out: at most one slot matches.
    let mut item_payload = vec![Bit::ZERO; g.payload_bits];
    let mut found = Bit::ZERO;
    for slot in &mut path {
        let same = eq_bits(b, &slot.addr, &addr);
        let hit = b.and(slot.valid, same);
        accumulate(b, &mut item_payload, hit, &slot.payload);
        slot.valid = b.xor(slot.valid, hit);
        if default.is_some() {
            found = b.xor(found, hit);
        }
    }
    if let Some(default) = &default {
        item_payload = mux_bits(b, found, default, &item_payload);
    }
    let (new_payload, out_name, out_bits) = if tree > 0 {
        // [step 5b, 5c]: read entry `entry`, replace it by `below`.
        let w = below.len();
        let hot = decode(b, &entry, RADIX);
        let mut leaf = vec![Bit::ZERO; w];
        let mut new_payload = Vec::with_capacity(item_payload.len());
        for (e, &hk) in item_payload.chunks(w.max(1)).zip(&hot) {
            accumulate(b, &mut leaf, hk, e);
            new_payload.extend(mux_bits(b, hk, e, &below));
        }
        if w == 0 {
            new_payload.clear();
        }
        (new_payload, "leaf", leaf)
    } else {
        // [step 6]: read the payload; a write replaces it.
        let new_payload = mux_bits(b, write[0], &item_payload, &data);
        (new_payload, "data", item_payload)
    };
    let item = SlotWires {
        valid: Bit::ONE,
        addr: addr.clone(),
        leaf: fresh.clone(),
        payload: new_payload,
    };
    let root = &mut path[..g.bucket];
    let inserted = insert_first_empty(b, root, &item, Bit::ONE);
    let overflow = b.not(inserted);
    let out_path: Vec<Bit> = path.iter().flat_map(SlotWires::bits).collect();
    io.output("path", &out_path);
    io.output("overflow", &[overflow]);
    io.output(out_name, &out_bits);
    let (circuit, layout) = io.finish()?;
    Ok(StepCircuit { circuit, layout })
}

/// [GKK12 §5.3]: eviction from one bucket at depth `level` < h of tree `g`. Inputs `parent`,
/// `left`, `right` (B slots each); outputs the three rewritten. The first valid item of the
/// parent moves into the first empty slot of the child on the path to its leaf (bit h − 1 −
/// level of the leaf: 0 left, 1 right); if that child is full, it stays.
///
/// # Errors
/// Only if the circuit cannot be built.
pub fn evict_circuit(g: &TreeGeometry, level: u32) -> Result<StepCircuit, TwopcError> {
    let h = g.height as usize;
    let s = g.slot_bits();
    let mut io = Io::new();
    let mut buckets: Vec<Vec<SlotWires>> = ["parent", "left", "right"]
        .into_iter()
        .map(|name| {
            io.input(name, g.bucket * s)
                .chunks(s)
                .map(|c| SlotWires::of(c, h))
                .collect()
        })
        .collect();
    let b = &mut io.b;
    let valid: Vec<Bit> = buckets[0].iter().map(|s| s.valid).collect();
    let (first, found) = first_set(b, &valid);
    let mut item_bits = vec![Bit::ZERO; s];
    for (slot, &f) in buckets[0].iter().zip(&first) {
        accumulate(b, &mut item_bits, f, &slot.bits());
    }
    let item = SlotWires::of(&item_bits, h);
    let dir = item.leaf[h - 1 - level as usize];
    let go_right = b.and(found, dir);
    let go_left = b.xor(found, go_right);
    let (parent, children) = buckets.split_at_mut(1);
    let (left, right) = children.split_at_mut(1);
    let in_left = insert_first_empty(b, &mut left[0], &item, go_left);
    let in_right = insert_first_empty(b, &mut right[0], &item, go_right);
    let moved = b.xor(in_left, in_right);
    for (slot, &f) in parent[0].iter_mut().zip(&first) {
        let clear = b.and(f, moved);
        slot.valid = b.xor(slot.valid, clear);
    }
    for (name, bucket) in ["parent", "left", "right"].into_iter().zip(&buckets) {
        let bits: Vec<Bit> = bucket.iter().flat_map(SlotWires::bits).collect();
        io.output(name, &bits);
    }
    let (circuit, layout) = io.finish()?;
    Ok(StepCircuit { circuit, layout })
}
