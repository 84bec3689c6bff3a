//! The two-party protocol: the server garbles, the client evaluates, and every access of the
//! tree ORAM runs as GKK12 §4.1 lays it out (spec §6.2), with the state the ORAM client keeps
//! held as wire labels from one circuit to the next. This is the crate's only module doing
//! I/O.
//!
//! # Labels as shared state
//! The garbler holds a zero label `W⁰` for every value, the evaluator the active label
//! `W⁰ ⊕ x·Δ`; their permute bits `lsb(W⁰)` and `lsb(W⁰) ⊕ x` are XOR shares of x (the
//! paper's XOR-shared client state, spec §6.3), kept at no cost between circuits. A value is
//! revealed to the server by the client's permute bits, to the client by the server's.
//!
//! # One access ([`Server::access`], [`Client::access`])
//! 1. Fresh leaves for every tree, random bits neither party knows: the client's random
//!    choices enter by correlated OT and the server adds its own random bits to the zero
//!    labels (spec P2: the paper lets the server pick them, which would let it recognise a
//!    leaf when it comes back). An ORAM started empty ([`crate::empty`]) draws, the same way,
//!    the default payload of every position-map tree's lookup: what a block that was never
//!    written reads as.
//! 2. [GKK12 §4.1, step 4] The base map circuit; the last tree's leaf is revealed to both.
//!    (The client learns which buckets it decrypts anyway, by the nonces, as in the paper,
//!    §4.2 footnote 2; a leaf is uniform and fresh for each access, like the server's view.)
//! 3. For each tree, last to first:
//!    - a. the server sends the eviction schedule it drew, the nonces of the buckets the step
//!      lists (the path, then the three buckets of each eviction: (h + 1) + 6h entries, a
//!      bucket listed again reusing the labels computed for it) and the first nonce it will
//!      write under. A bucket never written has nonce 0, a zero pad and a zero ciphertext
//!      ([`EncTree`]): it reads as the empty bucket. Write nonces are never 0 (the client
//!      refuses a first write nonce not above every nonce written before, which starts at 0);
//!      which buckets were never written is no news to either party, since the server sees
//!      every nonce and the client the nonces of what it reads;
//!    - b. the client computes the pads; they enter by correlated OT, one OT per bit, and
//!      the server folds its ciphertext bits into the zero labels (`Q ⊕ c·Δ`), so the
//!      client's labels are the plaintext's: no garbled input, no decryption gates;
//!    - c. [steps 5–6] the lookup circuit; the next tree's leaf (none on the data tree) and
//!      the overflow bit are revealed to both;
//!    - d. [§5.3] the 2h evictions, each on the labels of three buckets, chained in labels;
//!    - e. every entry is written back under its new nonce: the client sends
//!      `lsb(label) ⊕ pad'` per bit, the server adds `lsb(zero label)` and stores
//!      `m ⊕ pad'`.
//!
//! Consecutive trees' steps overlap, so that neither party waits while the other computes:
//! once tree i's lookup has revealed tree i − 1's leaf, tree i − 1's plan (3a) comes next,
//! then tree i's evictions (3d) and tree i − 1's pads (3b), the server garbling before it
//! folds, the client computing its pads before it evaluates; tree i's buckets go back (3e)
//! during tree i − 1's lookup, the client sending before it evaluates, the server storing
//! after it garbles. The messages are the same; only their order changes.
//!
//! A full root loses an item: both parties learn it at step 3c, finish the step, and then
//! fail with [`Gkk12Error::Overflow`]; the ORAM refuses every later access.
//!
//! Message sizes follow from public values (the parameters, the revealed leaves, the
//! schedule); each is checked before it is used.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_net::Session;
use doram_prim::aes::Block;
use doram_prim::prg::AesPrg;
use doram_twopc::driver::{
    cot_receive, cot_receive_into, cot_send, cot_send_into_with, evaluate_on_labels,
    evaluate_on_parts, garble_on_labels, garble_on_parts, peer,
};
use doram_twopc::gc::{Evaluator, Garbler, WireId};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use doram_twopc::softspoken::ChunkBits;
use std::io::Write;

use doram_twopc::{Circuit, TwopcError};
use rand_core::RngCore;
use thiserror::Error;

use crate::bits::Circuits;
use crate::circuits::{SlotCodec, StepCircuit};
use crate::params::Params;
use crate::persist::{Role, SavedClient, SavedServer, StateError, StateWriter};
use crate::storage::{EncTree, PadKey, bit};
use crate::tree::{eviction_schedule, path};

/// Why a two-party access failed.
#[derive(Debug, Error)]
pub enum Gkk12Error {
    /// The two-party engine or the transport failed.
    #[error(transparent)]
    Twopc(#[from] TwopcError),
    /// The root of a tree was full: an item is lost, the ORAM refuses further accesses.
    #[error("bucket overflow: the root of tree {tree} is full; the ORAM has lost an item")]
    Overflow {
        /// The tree (0 = data).
        tree: usize,
    },
    /// The load's helper drew a placement that overflowed a bucket, again and again.
    #[error("the load could not place tree {tree}'s items without overflowing a bucket")]
    LoadOverflow {
        /// The tree (0 = data).
        tree: usize,
    },
    /// An earlier access failed; the ORAM's state is no longer consistent between the parties.
    #[error("an earlier access failed; this ORAM can no longer be used")]
    Poisoned,
    /// The caller passed labels of the wrong shape.
    #[error("{0}")]
    Misuse(&'static str),
}

impl From<PeerFault> for Gkk12Error {
    fn from(f: PeerFault) -> Self {
        Gkk12Error::Twopc(TwopcError::Peer(f))
    }
}

impl From<doram_net::NetError> for Gkk12Error {
    fn from(e: doram_net::NetError) -> Self {
        Gkk12Error::Twopc(TwopcError::Net(e))
    }
}

/// The labels of one access's inputs: the address's bits (least significant first,
/// [`Params::address_bits`]), the write bit and the data written (payload bits; ignored on a
/// read). The server passes zero labels, the client active labels.
#[derive(Clone, Debug)]
pub struct AccessLabels {
    /// The address, least significant bit first.
    pub addr: Vec<Block>,
    /// 1 for a write.
    pub write: Block,
    /// The payload to write.
    pub data: Vec<Block>,
}

impl AccessLabels {
    /// A read of the address `addr`: the write bit and the `payload_bits` data bits are the
    /// constant 0, whose label is `zero` (the server's zero label, or the client's
    /// [`Client::zero`]).
    pub fn read(addr: Vec<Block>, zero: Block, payload_bits: usize) -> AccessLabels {
        AccessLabels {
            addr,
            write: zero,
            data: vec![zero; payload_bits],
        }
    }
}

/// The permute bits of `labels`, packed little-endian.
fn pack_lsbs(labels: &[Block]) -> Vec<u8> {
    labels
        .chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (k, &w)| acc | (((w & 1) as u8) << k))
        })
        .collect()
}

fn lsb(x: Block) -> bool {
    x & 1 == 1
}

fn u64s(peer: PartyId, what: &'static str, bytes: &[u8], n: usize) -> Result<Vec<u64>, PeerFault> {
    wire::exact_len(peer, what, bytes, 8 * n)?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

fn bits_msg(
    peer: PartyId,
    what: &'static str,
    bytes: &[u8],
    n: usize,
) -> Result<Vec<bool>, PeerFault> {
    wire::exact_len(peer, what, bytes, n.div_ceil(8))?;
    if !n.is_multiple_of(8) && bytes[n / 8] >> (n % 8) != 0 {
        return Err(PeerFault::malformed(peer, what, "nonzero padding bits"));
    }
    Ok((0..n).map(|k| bit(bytes, k)).collect())
}

/// The garbler's own bits as labels: fresh zero labels, the active ones sent to the evaluator
/// (16 bytes per bit, in messages of [`LABELS_PER_MSG`] labels), which receives them with
/// [`garbler_input_labels`].
///
/// # Errors
/// Transport failures.
pub fn garbler_input<G: RngCore + ?Sized>(
    session: &mut Session,
    delta: Block,
    bits: &[bool],
    rng: &mut G,
) -> Result<Vec<Block>, Gkk12Error> {
    let peer = peer(session)?;
    let mut zero = Vec::with_capacity(bits.len());
    for chunk in bits.chunks(LABELS_PER_MSG) {
        let mut msg = Vec::with_capacity(16 * chunk.len());
        for &b in chunk {
            let w = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            zero.push(w);
            let active = if b { w ^ delta } else { w };
            msg.extend_from_slice(&active.to_le_bytes());
        }
        session.send_bytes(peer, &msg)?;
    }
    Ok(zero)
}

/// Labels per message of [`garbler_input`] (1 MiB).
pub const LABELS_PER_MSG: usize = 1 << 16;

/// The evaluator's side of [`garbler_input`]: `n` active labels.
///
/// # Errors
/// Transport failures; a message of the wrong size.
pub fn garbler_input_labels(session: &mut Session, n: usize) -> Result<Vec<Block>, Gkk12Error> {
    let peer = peer(session)?;
    let mut out = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let k = left.min(LABELS_PER_MSG);
        let msg = session.recv_bytes(peer)?;
        wire::exact_len(peer, "input labels", &msg, 16 * k)?;
        out.extend(
            msg.chunks_exact(16)
                .map(|c| u128::from_le_bytes(c.try_into().unwrap_or([0; 16]))),
        );
        left -= k;
    }
    Ok(out)
}

/// Reveals `labels`' values to both parties: each sends its permute bits and adds the other's.
fn reveal_both(session: &mut Session, labels: &[Block]) -> Result<Vec<bool>, Gkk12Error> {
    let peer = peer(session)?;
    session.send_bytes(peer, &pack_lsbs(labels))?;
    let theirs = bits_msg(
        peer,
        "revealed bits",
        &session.recv_bytes(peer)?,
        labels.len(),
    )?;
    Ok(labels
        .iter()
        .zip(theirs)
        .map(|(&w, t)| lsb(w) ^ t)
        .collect())
}

fn value(bits: &[bool]) -> u64 {
    bits.iter()
        .enumerate()
        .fold(0, |acc, (k, &b)| acc | (u64::from(b) << k))
}

/// The buckets one tree step reads and writes back, in the order both parties list them: the
/// path, then the three buckets of each eviction — (h + 1) + 6h entries whatever the leaf and
/// the schedule, so that message sizes depend on the parameters only. A bucket listed twice
/// is read from storage once (its first entry) and its later entries reuse the labels the
/// step has computed; every entry is written back, so a repeated bucket is stored again, the
/// same plaintext under a fresh pad.
struct Entries {
    /// Entries of the path (the first ones): h + 1.
    path_len: usize,
    buckets: Vec<usize>,
    /// For each entry, the index of the bucket's first entry.
    first: Vec<usize>,
}

impl Entries {
    fn new(height: u32, leaf: u64, schedule: &[(u32, usize)]) -> Entries {
        let mut buckets: Vec<usize> = path(height, leaf).collect();
        let path_len = buckets.len();
        for &(_, b) in schedule {
            buckets.extend([b, 2 * b + 1, 2 * b + 2]);
        }
        let first = buckets
            .iter()
            .map(|b| buckets.iter().position(|x| x == b).unwrap_or(0))
            .collect();
        Entries {
            path_len,
            buckets,
            first,
        }
    }
}

/// One tree step's plan and labels, alike on both sides (the server holds zero labels, the
/// client active ones).
struct Step {
    tree: usize,
    bucket_bits: usize,
    schedule: Vec<(u32, usize)>,
    entries: Entries,
    first_new: u64,
    /// The entries' nonces, which the client's pads need (the server's is empty).
    nonces: Vec<u64>,
    /// The labels of each entry's bucket, `bucket_bits` per entry (meaningful at a bucket's
    /// first entry).
    labels: Vec<Block>,
}

/// The lookup circuit's outputs still to be revealed: the overflow bit, then the next tree's
/// leaf; and on the data tree the data's labels.
struct Looking {
    reveal: Vec<Block>,
    data: Option<Vec<Block>>,
}

/// What the lookup revealed: the overflow bit, then the next tree's leaf; and on the data tree
/// the data's labels.
struct Looked {
    revealed: Vec<bool>,
    data: Option<Vec<Block>>,
}

/// Keeps the larger of two buffers for the next step's labels: two steps are under way at
/// once, so each party's two label buffers take turns.
fn keep_larger(spare: &mut Vec<Block>, buf: Vec<Block>) {
    if buf.capacity() > spare.capacity() {
        *spare = buf;
    }
}

/// The garbler's or the evaluator's side of a circuit on labels.
trait OnLabels {
    /// Garbles or evaluates `c` on input labels given in parts, in order; the outputs' labels
    /// stay until the next circuit.
    fn run(
        &mut self,
        session: &mut Session,
        c: &Circuit,
        inputs: &[&[Block]],
    ) -> Result<(), TwopcError>;
    /// The labels of `wires`, written into `out`.
    fn labels_into(&self, wires: &[WireId], out: &mut [Block]) -> Result<(), TwopcError>;
    /// The labels of `c`'s outputs `range`, written into `out`.
    fn outputs_into(
        &self,
        c: &Circuit,
        range: std::ops::Range<usize>,
        out: &mut [Block],
    ) -> Result<(), TwopcError> {
        let wires = c.outputs().get(range);
        self.labels_into(wires.ok_or(TwopcError::ApiMisuse("output range"))?, out)
    }
    /// The labels of `c`'s outputs `range`.
    fn outputs(
        &self,
        c: &Circuit,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<Block>, TwopcError> {
        let mut out = vec![0; range.len()];
        self.outputs_into(c, range, &mut out)?;
        Ok(out)
    }
}

impl OnLabels for Garbler {
    fn run(&mut self, s: &mut Session, c: &Circuit, x: &[&[Block]]) -> Result<(), TwopcError> {
        garble_on_parts(s, self, c, x)
    }
    fn labels_into(&self, wires: &[WireId], out: &mut [Block]) -> Result<(), TwopcError> {
        self.zero_labels_into(wires, out)
    }
}

impl OnLabels for Evaluator {
    fn run(&mut self, s: &mut Session, c: &Circuit, x: &[&[Block]]) -> Result<(), TwopcError> {
        evaluate_on_parts(s, self, c, x)
    }
    fn labels_into(&self, wires: &[WireId], out: &mut [Block]) -> Result<(), TwopcError> {
        Evaluator::labels_into(self, wires, out)
    }
}

impl Step {
    fn new(
        params: &Params,
        tree: usize,
        schedule: Vec<(u32, usize)>,
        entries: Entries,
        first_new: u64,
    ) -> Step {
        let g = params.tree(tree);
        Step {
            tree,
            bucket_bits: g.bucket * SlotCodec::new(params, tree).slot_bits(),
            schedule,
            entries,
            first_new,
            nonces: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// [3c; GKK12 §4.1, steps 5–6] The lookup circuit on the path's labels and `rest`; the
    /// overflow bit and the next leaf are still to be revealed ([`Step::reveal`]).
    fn lookup(
        &mut self,
        session: &mut Session,
        c: &StepCircuit,
        rest: &LookupRest<'_>,
        gc: &mut impl OnLabels,
    ) -> Result<Looking, Gkk12Error> {
        // The path's entries come first and are all first entries: their labels lie together.
        let path = self.entries.path_len * self.bucket_bits;
        let circuit = &c.circuit;
        gc.run(session, circuit, &rest.parts(&self.labels[..path]))?;
        gc.outputs_into(circuit, c.layout.output("path"), &mut self.labels[..path])?;
        let mut reveal = gc.outputs(circuit, c.layout.output("overflow"))?;
        let data = if self.tree > 0 {
            reveal.extend(gc.outputs(circuit, c.layout.output("leaf"))?);
            None
        } else {
            Some(gc.outputs(circuit, c.layout.output("data"))?)
        };
        Ok(Looking { reveal, data })
    }

    /// The labels of entry `k`'s bucket.
    fn bucket(&self, k: usize) -> &[Block] {
        &self.labels[k * self.bucket_bits..(k + 1) * self.bucket_bits]
    }

    /// [3c] The overflow bit and the next leaf, revealed to both.
    fn reveal(session: &mut Session, looking: Looking) -> Result<Looked, Gkk12Error> {
        Ok(Looked {
            revealed: reveal_both(session, &looking.reveal)?,
            data: looking.data,
        })
    }

    /// [3d; GKK12 §5.3] The evictions, each on the labels of its three buckets.
    fn evict(
        &mut self,
        session: &mut Session,
        circuits: &[StepCircuit],
        gc: &mut impl OnLabels,
    ) -> Result<(), Gkk12Error> {
        let bits = self.bucket_bits;
        for (e, &(level, _)) in self.schedule.iter().enumerate() {
            let at = self.entries.path_len + 3 * e;
            let f = &self.entries.first;
            let three = [f[at], f[at + 1], f[at + 2]];
            let c = &circuits[level as usize];
            gc.run(session, &c.circuit, &three.map(|k| self.bucket(k)))?;
            for (&k, name) in three.iter().zip(["parent", "left", "right"]) {
                let out = &mut self.labels[k * bits..(k + 1) * bits];
                gc.outputs_into(&c.circuit, c.layout.output(name), out)?;
            }
        }
        Ok(())
    }

    /// The data tree's result: an overflow fails; otherwise the data's labels.
    fn finish(&self, looked: Looked) -> Result<Vec<Block>, Gkk12Error> {
        if looked.revealed[0] {
            return Err(Gkk12Error::Overflow { tree: self.tree });
        }
        looked
            .data
            .ok_or(Gkk12Error::Misuse("the data tree's lookup gave no data"))
    }
}

/// The input labels of tree `i`'s lookup circuit after the path's.
struct LookupRest<'a> {
    addr: Vec<Block>,
    fresh: &'a [Block],
    below: Option<(Vec<Block>, &'a [Block])>,
    /// A sparse ORAM's default payload of a position-map block.
    default: Option<&'a [Block]>,
    write: Block,
    data: &'a [Block],
}

impl LookupRest<'_> {
    /// The lookup circuit's inputs: `path`, then these, in wire order.
    fn parts<'s>(&'s self, path: &'s [Block]) -> Vec<&'s [Block]> {
        let mut parts = vec![path, &self.addr, self.fresh];
        match &self.below {
            Some((entry, below)) => {
                parts.extend([entry.as_slice(), below]);
                parts.extend(self.default);
            }
            None => parts.extend([std::slice::from_ref(&self.write), self.data]),
        }
        parts
    }
}

/// Bits `from .. from + n` of an address's labels, the constant-zero label beyond its end.
fn addr_bits(addr: &[Block], zero: Block, from: usize, n: usize) -> Vec<Block> {
    (from..from + n)
        .map(|k| addr.get(k).copied().unwrap_or(zero))
        .collect()
}

/// Slices the fresh-leaf labels per tree: tree i's h_i labels.
fn fresh_slices(params: &Params) -> Vec<std::ops::Range<usize>> {
    let mut at = 0;
    (0..params.trees())
        .map(|i| {
            let h = params.tree(i).height as usize;
            at += h;
            at - h..at
        })
        .collect()
}

/// Slices the default payloads of position-map trees 1, 2, … (a sparse ORAM's) out of the
/// fresh labels, from `from` on.
fn default_slices(params: &Params, from: usize) -> Vec<std::ops::Range<usize>> {
    let mut at = from;
    (1..params.trees())
        .map(|i| {
            let d = params.tree(i).payload_bits;
            at += d;
            at - d..at
        })
        .collect()
}

fn fresh_bits(params: &Params) -> usize {
    (0..params.trees())
        .map(|i| params.tree(i).height as usize)
        .sum()
}

/// What differs between the two sides of an access; [`drive_access`] runs the steps both
/// share.
trait Side {
    fn params(&self) -> Params;
    fn sparse(&self) -> bool;
    fn zero(&self) -> Block;
    fn poisoned(&mut self) -> &mut bool;
    /// Step 1: `n` fresh random bits neither party knows, as labels.
    fn fresh(&mut self, session: &mut Session, n: usize) -> Result<Vec<Block>, Gkk12Error>;
    /// Step 2: the base-map circuit on this side's map labels followed by `tail`; keeps the
    /// new map, returns the leaf's labels.
    fn base(&mut self, session: &mut Session, tail: &[Block]) -> Result<Vec<Block>, Gkk12Error>;
    /// [3a] Tree `i`'s plan for the path to `leaf`: sent by the server, checked by the client.
    fn plan(&mut self, session: &mut Session, i: usize, leaf: u64) -> Result<Step, Gkk12Error>;
    /// [3b] The step's labels, by correlated OT.
    fn labels(&mut self, session: &mut Session, step: &mut Step) -> Result<(), Gkk12Error>;
    /// [3c] The step's lookup circuit, and [3e] the tree before's buckets written back: the
    /// server garbles first, the client sends its buckets first, so that neither waits for
    /// the other.
    fn lookup(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        rest: &LookupRest<'_>,
        before: Option<Step>,
    ) -> Result<Looking, Gkk12Error>;
    /// [3d] The step's evictions, and [3b] the next tree's labels: the server garbles first,
    /// the client computes its pads first, so that each works while the other does.
    fn evict(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        next: Option<&mut Step>,
    ) -> Result<(), Gkk12Error>;
    /// [3e] The step's buckets written back; its label buffer is kept for a later step.
    fn store(&mut self, session: &mut Session, step: Step) -> Result<(), Gkk12Error>;
}

/// One access on either side ([module docs](self)); an error leaves the ORAM poisoned.
fn drive_access<P: Side>(
    p: &mut P,
    session: &mut Session,
    input: &AccessLabels,
) -> Result<Vec<Block>, Gkk12Error> {
    if *p.poisoned() {
        return Err(Gkk12Error::Poisoned);
    }
    let params = p.params();
    check_shape(&params, input)?;
    *p.poisoned() = true;
    let last = params.trees() - 1;
    let zero = p.zero();
    let leaf_bits = fresh_bits(&params);
    // A sparse ORAM's default payloads of the position-map trees follow the fresh leaves.
    let defaults = if p.sparse() {
        default_slices(&params, leaf_bits)
    } else {
        Vec::new()
    };
    let total = defaults.last().map_or(leaf_bits, |r| r.end);
    let fresh = p.fresh(session, total)?;
    let slices = fresh_slices(&params);
    let mut tail = addr_bits(
        &input.addr,
        zero,
        4 * last,
        params.tree(last).height as usize,
    );
    tail.extend_from_slice(&fresh[slices[last].clone()]);
    let leaf_labels = p.base(session, &tail)?;
    let mut leaf = value(&reveal_both(session, &leaf_labels)?);
    // Consecutive trees overlap: tree i − 1's plan and labels come before tree i's evictions
    // end, and tree i's buckets go back during tree i − 1's lookup ([`Side::lookup`],
    // [`Side::evict`]). The leaf of tree i − 1 is known after tree i's lookup.
    let mut step = p.plan(session, last, leaf)?;
    p.labels(session, &mut step)?;
    let mut before = None;
    for i in (0..=last).rev() {
        let below = (i > 0).then(|| {
            let entry = addr_bits(&input.addr, zero, 4 * (i - 1), 4);
            (entry, &fresh[slices[i - 1].clone()])
        });
        let rest = LookupRest {
            addr: addr_bits(&input.addr, zero, 4 * i, params.tree(i).height as usize),
            fresh: &fresh[slices[i].clone()],
            below,
            default: (i > 0 && !defaults.is_empty()).then(|| &fresh[defaults[i - 1].clone()]),
            write: input.write,
            data: &input.data,
        };
        let looking = p.lookup(session, &mut step, &rest, before.take())?;
        let looked = Step::reveal(session, looking)?;
        let next = match i.checked_sub(1) {
            // An overflow finishes the step before it fails.
            Some(below) if !looked.revealed[0] => {
                leaf = value(&looked.revealed[1..]);
                Some(p.plan(session, below, leaf)?)
            }
            _ => None,
        };
        let Some(mut next) = next else {
            p.evict(session, &mut step, None)?;
            let done = step.finish(looked);
            p.store(session, step)?;
            let data = done?;
            *p.poisoned() = false;
            return Ok(data);
        };
        p.evict(session, &mut step, Some(&mut next))?;
        before = Some(std::mem::replace(&mut step, next));
    }
    Err(Gkk12Error::Misuse("an ORAM without trees"))
}

impl<S: CotExtSender> Side for Server<S> {
    fn params(&self) -> Params {
        self.params
    }
    fn sparse(&self) -> bool {
        self.sparse
    }
    fn zero(&self) -> Block {
        self.zero
    }
    fn poisoned(&mut self) -> &mut bool {
        &mut self.poisoned
    }
    fn fresh(&mut self, session: &mut Session, n: usize) -> Result<Vec<Block>, Gkk12Error> {
        self.joint_random(session, n)
    }
    fn base(&mut self, session: &mut Session, tail: &[Block]) -> Result<Vec<Block>, Gkk12Error> {
        let c = &self.circuits.base;
        let mut inputs = self.base.clone();
        inputs.extend_from_slice(tail);
        let out = garble_on_labels(session, &mut self.garbler, &c.circuit, &inputs)?;
        self.base = out[c.layout.output("map")].to_vec();
        Ok(out[c.layout.output("leaf")].to_vec())
    }
    fn plan(&mut self, session: &mut Session, i: usize, leaf: u64) -> Result<Step, Gkk12Error> {
        self.announce(session, i, leaf)
    }
    fn labels(&mut self, session: &mut Session, step: &mut Step) -> Result<(), Gkk12Error> {
        self.fold_pads(session, step)
    }
    fn lookup(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        rest: &LookupRest<'_>,
        before: Option<Step>,
    ) -> Result<Looking, Gkk12Error> {
        let c = &self.circuits.lookup[step.tree];
        let looking = step.lookup(session, c, rest, &mut self.garbler)?;
        if let Some(before) = before {
            self.store_back(session, before)?;
        }
        Ok(looking)
    }
    fn evict(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        next: Option<&mut Step>,
    ) -> Result<(), Gkk12Error> {
        step.evict(session, &self.circuits.evict[step.tree], &mut self.garbler)?;
        if let Some(next) = next {
            self.fold_pads(session, next)?;
        }
        Ok(())
    }
    fn store(&mut self, session: &mut Session, step: Step) -> Result<(), Gkk12Error> {
        self.store_back(session, step)
    }
}

impl<R: CotExtReceiver> Side for Client<R> {
    fn params(&self) -> Params {
        self.params
    }
    fn sparse(&self) -> bool {
        self.sparse
    }
    fn zero(&self) -> Block {
        self.zero
    }
    fn poisoned(&mut self) -> &mut bool {
        &mut self.poisoned
    }
    /// The client's random choices by correlated OT (the server shifts them by its own).
    fn fresh(&mut self, session: &mut Session, n: usize) -> Result<Vec<Block>, Gkk12Error> {
        let choices: Vec<bool> = (0..n).map(|_| self.rng.next_u32() & 1 == 1).collect();
        self.input(session, &choices)
    }
    fn base(&mut self, session: &mut Session, tail: &[Block]) -> Result<Vec<Block>, Gkk12Error> {
        let c = &self.circuits.base;
        let mut inputs = self.base.clone();
        inputs.extend_from_slice(tail);
        let out = evaluate_on_labels(session, &mut self.evaluator, &c.circuit, &inputs)?;
        self.base = out[c.layout.output("map")].to_vec();
        Ok(out[c.layout.output("leaf")].to_vec())
    }
    fn plan(&mut self, session: &mut Session, i: usize, leaf: u64) -> Result<Step, Gkk12Error> {
        self.receive_plan(session, i, leaf)
    }
    fn labels(&mut self, session: &mut Session, step: &mut Step) -> Result<(), Gkk12Error> {
        self.pads(session, step)
    }
    fn lookup(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        rest: &LookupRest<'_>,
        before: Option<Step>,
    ) -> Result<Looking, Gkk12Error> {
        if let Some(before) = before {
            self.send_back(session, before)?;
        }
        let c = &self.circuits.lookup[step.tree];
        step.lookup(session, c, rest, &mut self.evaluator)
    }
    fn evict(
        &mut self,
        session: &mut Session,
        step: &mut Step,
        next: Option<&mut Step>,
    ) -> Result<(), Gkk12Error> {
        if let Some(next) = next {
            self.pads(session, next)?;
        }
        step.evict(
            session,
            &self.circuits.evict[step.tree],
            &mut self.evaluator,
        )
    }
    fn store(&mut self, session: &mut Session, step: Step) -> Result<(), Gkk12Error> {
        self.send_back(session, step)
    }
}

/// The SoftSpoken chunk size for this crate's OT extensions, the ORAM's (passed to
/// [`Server::new`] and [`Client::new`]) and the sorted load's own
/// ([`crate::sortload::load_server`]): k = 2 ([`ChunkBits::LIGHT`]), 8 bytes per OT where the
/// default k = 4 sends 4, for less computation.
///
/// An access's bytes are mostly garbled tables (about 8 times its OT extension messages at
/// k = 4), and nearly every OT of the load carries a Beneš switch's correction of a whole
/// slot, so the extension's bytes matter little next to its computation on a host where both
/// parties share two cores. Measured (2026-11-28, Intel Xeon, alternating runs): accesses at
/// 2^16 × 512 bits took 0.219 s against 0.259 s at k = 4 (medians of 3 runs of 61 accesses),
/// and a load of 2^14 items with one access ran 6.5 % fewer instructions (callgrind). Over a
/// slow link, where bytes bound the speed, the default k = 4 sends about 10 % fewer bytes per
/// access (188 MB against 209 MB at 2^20).
pub const OT_CHUNK: ChunkBits = ChunkBits::LIGHT;

/// The server: stores the encrypted trees and garbles.
pub struct Server<S> {
    params: Params,
    sparse: bool,
    circuits: Circuits,
    trees: Vec<EncTree>,
    base: Vec<Block>,
    zero: Block,
    garbler: Garbler,
    ot: S,
    rng: AesPrg,
    next_nonce: u64,
    poisoned: bool,
    /// A spare buffer for a step's correlated OTs, which become its labels; a stored step
    /// gives its buffer back.
    ots: Vec<Block>,
}

/// The client: holds the pad key and evaluates.
pub struct Client<R> {
    params: Params,
    sparse: bool,
    circuits: Circuits,
    key: PadKey,
    base: Vec<Block>,
    zero: Block,
    evaluator: Evaluator,
    ot: R,
    rng: AesPrg,
    last_nonce: u64,
    poisoned: bool,
    /// A spare buffer for a step's correlated OTs, which become its labels; a stored step
    /// gives its buffer back.
    ots: Vec<Block>,
}

impl<S> std::fmt::Debug for Server<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl<R> std::fmt::Debug for Client<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// The state both parties hold after a load: the server's trees and base-map zero labels, the
/// client's key and base-map labels. Produced by a load protocol (or by the test dealer).
pub struct ServerState {
    /// The parameters.
    pub params: Params,
    /// The encrypted trees.
    pub trees: Vec<EncTree>,
    /// Zero labels of the base map's bits.
    pub base: Vec<Block>,
    /// The zero label of a constant-0 wire (the client holds the same label).
    pub zero: Block,
    /// The next nonce to write under (at least 1: nonce 0 marks a bucket never written).
    pub next_nonce: u64,
    /// Whether blocks may be absent: the ORAM started empty ([`crate::empty`]), and a
    /// position-map block never written reads as fresh random leaves
    /// ([`lookup_circuit_with`](crate::circuits::lookup_circuit_with)). Both parties agree.
    pub sparse: bool,
}

/// The client's part of a loaded ORAM.
pub struct ClientState {
    /// The parameters.
    pub params: Params,
    /// The pad key.
    pub key: PadKey,
    /// Active labels of the base map's bits.
    pub base: Vec<Block>,
    /// The label of a constant-0 wire.
    pub zero: Block,
    /// The largest nonce written so far (0 if none).
    pub last_nonce: u64,
    /// As [`ServerState::sparse`].
    pub sparse: bool,
}

impl<S: CotExtSender> Server<S> {
    /// The server of a loaded ORAM; `ot`'s Δ is the garbler's.
    ///
    /// # Errors
    /// [`Gkk12Error::Twopc`] if a circuit cannot be built.
    pub fn new(state: ServerState, ot: S, rng: AesPrg) -> Result<Server<S>, Gkk12Error> {
        let circuits = Circuits::with_sparse(&state.params, state.sparse)?;
        Ok(Server {
            params: state.params,
            sparse: state.sparse,
            circuits,
            trees: state.trees,
            base: state.base,
            zero: state.zero,
            garbler: Garbler::new(ot.delta(), 0)?,
            ot,
            rng,
            // Nonce 0 marks a bucket never written (storage.rs): no write uses it.
            next_nonce: state.next_nonce.max(1),
            poisoned: false,
            ots: Vec::new(),
        })
    }

    /// Resumes a server from its saved state ([`read_server`](crate::persist::read_server)) with a fresh OT
    /// extension `ot` set up under the saved Δ ([`SavedServer::delta`]); the AND counter runs
    /// on from the saved one, so no tweak is used twice under Δ.
    ///
    /// # Errors
    /// [`Gkk12Error::Misuse`] if `ot`'s Δ is not the saved one; as [`Server::new`].
    pub fn resume(saved: SavedServer, ot: S, rng: AesPrg) -> Result<Server<S>, Gkk12Error> {
        if ot.delta() != saved.delta {
            return Err(Gkk12Error::Misuse(
                "a resumed server's OT extension must use the saved Δ",
            ));
        }
        let mut server = Server::new(saved.state, ot, rng)?;
        server.garbler.resume_at(saved.and_gates);
        Ok(server)
    }

    /// Writes this party's state to `out` ([`crate::persist`]'s format) so that a later run resumes
    /// it ([`Server::resume`]); the server may go on with accesses after saving.
    ///
    /// # Errors
    /// [`StateError::Poisoned`] after a failed access; write failures.
    pub fn save(&self, out: &mut dyn Write) -> Result<(), StateError> {
        if self.poisoned {
            return Err(StateError::Poisoned);
        }
        let mut w = StateWriter::new(out, Role::Server, &self.params, self.sparse)?;
        w.block(self.delta())?;
        w.u64(self.garbler.and_gates())?;
        w.u64(self.next_nonce)?;
        w.block(self.zero)?;
        w.blocks(&self.base)?;
        for t in &self.trees {
            t.write_state(&mut w)?;
        }
        Ok(w.finish()?)
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The encrypted trees.
    pub fn trees(&self) -> &[EncTree] {
        &self.trees
    }

    /// Zero labels of the base map's bits.
    pub fn base_labels(&self) -> &[Block] {
        &self.base
    }

    /// The circuits one access garbles.
    pub fn circuits(&self) -> &Circuits {
        &self.circuits
    }

    /// Δ.
    pub fn delta(&self) -> Block {
        self.garbler.delta()
    }

    /// The label of the constant 0.
    pub fn zero(&self) -> Block {
        self.zero
    }

    /// The server's own bits as labels: it draws zero labels and sends the active ones
    /// (16 bytes per bit). Pairs with [`Client::peer_input`].
    ///
    /// # Errors
    /// Transport failures.
    pub fn input(
        &mut self,
        session: &mut Session,
        bits: &[bool],
    ) -> Result<Vec<Block>, Gkk12Error> {
        let delta = self.delta();
        garbler_input(session, delta, bits, &mut self.rng)
    }

    /// The client's bits as labels, by correlated OT. Pairs with [`Client::input`].
    ///
    /// # Errors
    /// Transport failures; a malformed OT message.
    pub fn peer_input(
        &mut self,
        session: &mut Session,
        n: usize,
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(cot_send(session, &mut self.ot, n)?.q)
    }

    /// Random bits unknown to either party: the client's random choices by correlated OT,
    /// shifted by the server's random bits.
    fn joint_random(&mut self, session: &mut Session, n: usize) -> Result<Vec<Block>, Gkk12Error> {
        let delta = self.delta();
        let q = self.peer_input(session, n)?;
        Ok(q.into_iter()
            .map(|w| {
                if self.rng.next_u32() & 1 == 1 {
                    w ^ delta
                } else {
                    w
                }
            })
            .collect())
    }

    /// Garbles `circuit` on the zero labels `inputs` (garbler inputs first, then evaluator
    /// inputs, as the circuit declares them) and returns its outputs' zero labels: a step of a
    /// program between ORAM accesses. Pairs with [`Client::evaluate`].
    ///
    /// # Errors
    /// Transport failures; `inputs` of the wrong length.
    pub fn garble(
        &mut self,
        session: &mut Session,
        circuit: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(garble_on_labels(
            session,
            &mut self.garbler,
            circuit,
            inputs,
        )?)
    }

    /// The zero labels of public bits: the label of the constant 0 for a 0, shifted by Δ for
    /// a 1 (the client holds [`Client::zero`] for each).
    pub fn public_bits(&self, bits: &[bool]) -> Vec<Block> {
        let delta = self.delta();
        bits.iter()
            .map(|&b| if b { self.zero ^ delta } else { self.zero })
            .collect()
    }

    /// Reveals `labels`' values to the client only (its permute bits).
    ///
    /// # Errors
    /// Transport failures.
    pub fn reveal_to_client(
        &mut self,
        session: &mut Session,
        labels: &[Block],
    ) -> Result<(), Gkk12Error> {
        let peer = peer(session)?;
        session.send_bytes(peer, &pack_lsbs(labels))?;
        Ok(())
    }

    /// One ORAM access on the labels `input` ([module docs](self)): the zero labels of the
    /// payload held before the access.
    ///
    /// # Errors
    /// [`Gkk12Error`]; after any error the ORAM refuses further accesses.
    pub fn access(
        &mut self,
        session: &mut Session,
        input: &AccessLabels,
    ) -> Result<Vec<Block>, Gkk12Error> {
        drive_access(self, session, input)
    }

    /// [3a] Draws the eviction schedule and sends it with the nonces of the step's entries and
    /// the first nonce it writes under.
    fn announce(&mut self, session: &mut Session, i: usize, leaf: u64) -> Result<Step, Gkk12Error> {
        let peer = peer(session)?;
        let g = self.params.tree(i);
        let schedule = eviction_schedule(g.height, &mut self.rng);
        let entries = Entries::new(g.height, leaf, &schedule);
        let first_new = self.next_nonce;
        self.next_nonce += entries.buckets.len() as u64;
        let mut msg = Vec::with_capacity(4 * schedule.len() + 8 * (entries.buckets.len() + 1));
        for &(_, b) in &schedule {
            msg.extend_from_slice(&(b as u32).to_le_bytes());
        }
        for &b in &entries.buckets {
            msg.extend_from_slice(&self.trees[i].nonce(b).to_le_bytes());
        }
        msg.extend_from_slice(&first_new.to_le_bytes());
        session.send_bytes(peer, &msg)?;
        Ok(Step::new(&self.params, i, schedule, entries, first_new))
    }

    /// [3b] The client's pads by correlated OT, this party's ciphertext folded into the zero
    /// labels.
    fn fold_pads(&mut self, session: &mut Session, step: &mut Step) -> Result<(), Gkk12Error> {
        let bits = step.bucket_bits;
        let buckets = &step.entries.buckets;
        let n = buckets.len() * bits;
        // The buffer a stored step gave back, if any.
        let mut labels = std::mem::take(&mut self.ots);
        let delta = self.delta();
        let tree = &self.trees[step.tree];
        // Each extension message's labels are folded while they are still in cache.
        let fold = |start: usize, mut q: &mut [Block]| {
            let mut j = start;
            while !q.is_empty() && bits > 0 {
                let (e, k0) = (j / bits, j % bits);
                let Some(&b) = buckets.get(e) else { break };
                let c = tree.bucket(b);
                let (now, rest) = q.split_at_mut((bits - k0).min(q.len()));
                for (k, w) in (k0..).zip(now.iter_mut()) {
                    // Branch-free: the ciphertext's bits are random.
                    *w ^= delta & Block::from(bit(c, k)).wrapping_neg();
                }
                j += now.len();
                q = rest;
            }
        };
        cot_send_into_with(session, &mut self.ot, n, &mut labels, fold)?;
        step.labels = labels;
        Ok(())
    }

    /// [3e] Stores every entry's bucket as the client re-encrypted it.
    fn store_back(&mut self, session: &mut Session, step: Step) -> Result<(), Gkk12Error> {
        let peer = peer(session)?;
        let bits = step.bucket_bits;
        let bytes = bits.div_ceil(8);
        let buckets = &step.entries.buckets;
        let back = session.recv_bytes(peer)?;
        wire::exact_len(peer, "re-encrypted buckets", &back, buckets.len() * bytes)?;
        for (k, (&b, chunk)) in buckets.iter().zip(back.chunks(bytes.max(1))).enumerate() {
            if !bits.is_multiple_of(8) && chunk.last().is_some_and(|&x| x >> (bits % 8) != 0) {
                let e = PeerFault::malformed(peer, "re-encrypted bucket", "nonzero padding bits");
                return Err(e.into());
            }
            let mut cipher = pack_lsbs(step.bucket(step.entries.first[k]));
            for (c, x) in cipher.iter_mut().zip(chunk) {
                *c ^= x;
            }
            self.trees[step.tree].store(b, step.first_new + k as u64, &cipher);
        }
        keep_larger(&mut self.ots, step.labels);
        Ok(())
    }
}

fn check_shape(params: &Params, input: &AccessLabels) -> Result<(), Gkk12Error> {
    if input.addr.len() != params.address_bits() {
        return Err(Gkk12Error::Misuse(
            "the address labels must have Params::address_bits bits",
        ));
    }
    if input.data.len() != params.payload_bits() {
        return Err(Gkk12Error::Misuse(
            "the data labels must have the payload's bits",
        ));
    }
    Ok(())
}

impl<R: CotExtReceiver> Client<R> {
    /// The client of a loaded ORAM.
    ///
    /// # Errors
    /// [`Gkk12Error::Twopc`] if a circuit cannot be built.
    pub fn new(state: ClientState, ot: R, rng: AesPrg) -> Result<Client<R>, Gkk12Error> {
        let circuits = Circuits::with_sparse(&state.params, state.sparse)?;
        Ok(Client {
            params: state.params,
            sparse: state.sparse,
            circuits,
            key: state.key,
            base: state.base,
            zero: state.zero,
            evaluator: Evaluator::new(0),
            ot,
            rng,
            last_nonce: state.last_nonce,
            poisoned: false,
            ots: Vec::new(),
        })
    }

    /// Resumes a client from its saved state ([`read_client`](crate::persist::read_client)) with a fresh OT
    /// extension `ot`; the AND counter runs on from the saved one, as the server's does.
    ///
    /// # Errors
    /// As [`Client::new`].
    pub fn resume(saved: SavedClient, ot: R, rng: AesPrg) -> Result<Client<R>, Gkk12Error> {
        let mut client = Client::new(saved.state, ot, rng)?;
        client.evaluator.resume_at(saved.and_gates);
        Ok(client)
    }

    /// Writes this party's state to `out` ([`crate::persist`]'s format) so that a later run resumes
    /// it ([`Client::resume`]).
    ///
    /// # Errors
    /// [`StateError::Poisoned`] after a failed access; write failures.
    pub fn save(&self, out: &mut dyn Write) -> Result<(), StateError> {
        if self.poisoned {
            return Err(StateError::Poisoned);
        }
        let mut w = StateWriter::new(out, Role::Client, &self.params, self.sparse)?;
        w.bytes(&self.key.key_bytes())?;
        w.u64(self.evaluator.and_gates())?;
        w.u64(self.last_nonce)?;
        w.block(self.zero)?;
        w.blocks(&self.base)?;
        Ok(w.finish()?)
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The label of the constant 0.
    pub fn zero(&self) -> Block {
        self.zero
    }

    /// Active labels of the base map's bits.
    pub fn base_labels(&self) -> &[Block] {
        &self.base
    }

    /// **Insecure**: the pad key, for test fixtures that open the server's trees.
    #[cfg(any(test, feature = "testkit"))]
    pub fn key_insecurely(&self) -> &PadKey {
        &self.key
    }

    /// The server's bits as labels. Pairs with [`Server::input`].
    ///
    /// # Errors
    /// Transport failures; a message of the wrong size.
    pub fn peer_input(
        &mut self,
        session: &mut Session,
        n: usize,
    ) -> Result<Vec<Block>, Gkk12Error> {
        garbler_input_labels(session, n)
    }

    /// The client's own bits as labels, by correlated OT. Pairs with [`Server::peer_input`].
    ///
    /// # Errors
    /// Transport failures.
    pub fn input(
        &mut self,
        session: &mut Session,
        bits: &[bool],
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(cot_receive(session, &mut self.ot, bits)?.t)
    }

    /// Evaluates `circuit` on the active labels `inputs`; returns its outputs' active labels.
    /// Pairs with [`Server::garble`].
    ///
    /// # Errors
    /// Transport failures; `inputs` of the wrong length; the server's tables of the wrong size.
    pub fn evaluate(
        &mut self,
        session: &mut Session,
        circuit: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(evaluate_on_labels(
            session,
            &mut self.evaluator,
            circuit,
            inputs,
        )?)
    }

    /// The active labels of public bits (see [`Server::public_bits`]).
    pub fn public_bits(&self, bits: &[bool]) -> Vec<Block> {
        vec![self.zero; bits.len()]
    }

    /// The values of `labels`, revealed by the server ([`Server::reveal_to_client`]).
    ///
    /// # Errors
    /// Transport failures; a message of the wrong size.
    pub fn reveal(
        &mut self,
        session: &mut Session,
        labels: &[Block],
    ) -> Result<Vec<bool>, Gkk12Error> {
        let peer = peer(session)?;
        let theirs = bits_msg(
            peer,
            "decoding bits",
            &session.recv_bytes(peer)?,
            labels.len(),
        )?;
        Ok(labels
            .iter()
            .zip(theirs)
            .map(|(&w, t)| lsb(w) ^ t)
            .collect())
    }

    /// One ORAM access: the client's side of [`Server::access`], on active labels; returns
    /// the active labels of the payload held before the access.
    ///
    /// # Errors
    /// As [`Server::access`]; also [`PeerFault`]s for nonces that would reuse a pad or an
    /// eviction schedule out of range.
    pub fn access(
        &mut self,
        session: &mut Session,
        input: &AccessLabels,
    ) -> Result<Vec<Block>, Gkk12Error> {
        drive_access(self, session, input)
    }

    /// [3a] The schedule and the nonces, checked: every bucket on its level, write nonces
    /// never used before.
    fn receive_plan(
        &mut self,
        session: &mut Session,
        i: usize,
        leaf: u64,
    ) -> Result<Step, Gkk12Error> {
        let peer = peer(session)?;
        let g = self.params.tree(i);
        let h = g.height as usize;
        let msg = session.recv_bytes(peer)?;
        if msg.len() < 4 * 2 * h {
            return Err(PeerFault::malformed(peer, "eviction schedule", "too short").into());
        }
        let (sched, nonces) = msg.split_at(4 * 2 * h);
        let mut schedule = Vec::with_capacity(2 * h);
        for (k, c) in sched.chunks_exact(4).enumerate() {
            let b = u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as usize;
            let level = (k / 2) as u32;
            let lo = (1usize << level) - 1;
            if b < lo || b > 2 * lo {
                let e = PeerFault::malformed(peer, "eviction schedule", "bucket off its level");
                return Err(e.into());
            }
            schedule.push((level, b));
        }
        let entries = Entries::new(g.height, leaf, &schedule);
        let n = entries.buckets.len();
        let mut nonces = u64s(peer, "bucket nonces", nonces, n + 1)?;
        let first_new = nonces.pop().unwrap_or(0);
        // Above every nonce written so far, hence never 0 (the nonce of buckets never written).
        if first_new <= self.last_nonce {
            let e = PeerFault::malformed(peer, "bucket nonces", "a write nonce used before");
            return Err(e.into());
        }
        // The step writes under first_new … first_new + n − 1: a range that wrapped around
        // would reuse pads.
        let Some(last) = first_new.checked_add(n as u64 - 1) else {
            let e = PeerFault::malformed(peer, "bucket nonces", "write nonces past 2^64");
            return Err(e.into());
        };
        self.last_nonce = last;
        let mut step = Step::new(&self.params, i, schedule, entries, first_new);
        step.nonces = nonces;
        Ok(step)
    }

    /// [3b] The pads of the entries' buckets, into labels by correlated OT.
    fn pads(&mut self, session: &mut Session, step: &mut Step) -> Result<(), Gkk12Error> {
        let nonces = std::mem::take(&mut step.nonces);
        let bits = step.bucket_bits;
        let bytes = bits.div_ceil(8);
        let mut pads = Vec::with_capacity(nonces.len() * bytes);
        for &nonce in &nonces {
            self.key.pad_bytes(step.tree, nonce, bits, &mut pads);
        }
        let mut choices = Vec::with_capacity(nonces.len() * bits);
        for pad in pads.chunks(bytes.max(1)) {
            choices.extend((0..bits).map(|j| bit(pad, j)));
        }
        // The buffer a stored step gave back, if any.
        let mut labels = std::mem::take(&mut self.ots);
        cot_receive_into(session, &mut self.ot, &choices, &mut labels)?;
        step.labels = labels;
        Ok(())
    }

    /// [3e] Re-encrypts every entry's bucket under its new nonce: `lsb(label) ⊕ pad'` per bit.
    fn send_back(&mut self, session: &mut Session, step: Step) -> Result<(), Gkk12Error> {
        let peer = peer(session)?;
        let bits = step.bucket_bits;
        let n = step.entries.buckets.len();
        let mut back = Vec::with_capacity(n * bits.div_ceil(8));
        let mut pad = Vec::with_capacity(bits.div_ceil(8));
        for k in 0..n {
            pad.clear();
            let nonce = step.first_new + k as u64;
            self.key.pad_bytes(step.tree, nonce, bits, &mut pad);
            let mut bytes = pack_lsbs(step.bucket(step.entries.first[k]));
            for (x, p) in bytes.iter_mut().zip(&pad) {
                *x ^= p;
            }
            back.extend_from_slice(&bytes);
        }
        session.send_bytes(peer, &back)?;
        keep_larger(&mut self.ots, step.labels);
        Ok(())
    }
}
