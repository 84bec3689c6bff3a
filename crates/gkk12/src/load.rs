//! The secure initial load, with a setup helper: the server (P0, holds the array), the client
//! (P1) and a helper (P2) that never sees the data turn the server's array into the two
//! parties' ORAM state, every item of every tree on a uniformly random leaf.
//!
//! # Why a helper
//! The tree ORAM is only as oblivious as its leaves are independent and unknown: a party that
//! knew where items start — or only how many start under each leaf — could tell a first access
//! from a repeated one by the leaves revealed. GKK12's own load (Figure 1, one ORAM write per
//! item) takes days at 2^20, and its experiments placed items insecurely (spec P16). Every
//! two-party placement we weighed that keeps the leaves independent needs an oblivious routing
//! of the whole padded layout (docs/notes/gkk12.md). With a third party that does not collude
//! with either, the routing is two masked permutations, each known to one party only.
//!
//! # What each party learns
//! * The helper draws every item's leaf and the layout, and deals correlated randomness. It
//!   knows where each item starts, sees no data (no message reaches it) and takes no part in
//!   the accesses. It must not collude with the server or the client.
//! * The server knows `L1`, a uniformly random injection of its items into the slots of one
//!   level of the data tree, and random masks.
//! * The client knows `L2`, a permutation of those slots with `L2 ∘ L1` = the layout, which is
//!   uniformly random whatever the layout (a uniform `L1` matched to the layout, and the other
//!   slots matched at random), the masked array (`x ⊕ a`) and masked shares.
//!
//! # Steps
//! 1. Helper → server: the seeds of `L1`, of the masks `a`, `b` and of the server's shares of
//!    what the helper knows (slot headers, the position maps, the base map).
//! 2. Helper → client: `L2`, `Δ = L2(a) ⊕ b` and the client's shares of what the helper knows.
//! 3. Server → client: `y = L1(x) ⊕ a`; the client computes `L2(y) ⊕ Δ = L2(L1(x)) ⊕ b`, its
//!    share of the laid-out array; the server's is `b`.
//! 4. Client → server: every bucket of each tree's placement level as its share XOR its pad
//!    (nonces 1, 2, … in order); the server adds its share, which gives `Enc(m; r)` under the
//!    client's key. Every other bucket holds no item and stays never written: nonce 0, which
//!    [`EncTree`] reads as the empty bucket (zero pad, zero ciphertext) without storing it.
//!    Both parties know which buckets those are from the public parameters, so this reveals
//!    nothing; only the placement levels are sent and kept in memory.
//! 5. Server and client alone ([`ServerLoad::finish`], [`ClientLoad::finish`]): the base map's
//!    bits become wire labels by one correlated OT per bit.
//!
//! Items start at one level of each tree ([`placement`]): the deepest whose buckets overflow
//! with probability below 2^−64 over the whole level (a binomial tail). The helper draws again
//! on an overflow.
//!
//! Messages: 64 bytes to the server; to the client 4 + ⌈d/8⌉ bytes per slot of the data tree's
//! level, plus the header shares; `⌈d/8⌉` bytes per slot from server to client; the placement
//! levels' ciphertexts from client to server. Sizes depend on the parameters only.

use doram_core::{PartyId, Seed, wire};
use doram_net::Session;
use doram_prim::AesPrg;
use doram_prim::aes::Block;
use doram_twopc::driver::{cot_receive, cot_send};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use rand_core::RngCore;

use crate::circuits::SlotCodec;
use crate::driver::{ClientState, Gkk12Error, ServerState};
use crate::params::{Params, RADIX, TreeGeometry};
use crate::shuffle::{recv_framed, send_framed};
use crate::storage::{EncTree, PadKey};
use crate::tree::{Slot, bucket_at, path, uniform_below};

/// The server's role in a load.
pub const SERVER: PartyId = PartyId::P0;
/// The client's role in a load.
pub const CLIENT: PartyId = PartyId::P1;
/// The helper's role in a load.
pub const HELPER: PartyId = PartyId::P2;

/// Largest message of a load, in bytes: the frame of the sorted load's shuffles.
const CHUNK: usize = crate::shuffle::FRAME_BYTES;

/// How unlikely an overflow of the placement level must be, in bits.
const OVERFLOW_BITS: f64 = 64.0;

/// How often the helper draws again after an overflow before giving up.
const RETRIES: usize = 16;

/// Where a tree's items start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The level (0 = root).
    pub level: u32,
    /// Its first bucket in heap order.
    pub first_bucket: usize,
    /// Its buckets.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket: usize,
}

impl Placement {
    /// Slots of the level.
    pub fn slots(&self) -> usize {
        self.buckets * self.bucket
    }
}

/// The level where `g`'s items start: the shallowest (fewest slots) at which some bucket
/// overflows with probability at most 2^−64 (the least risk if none is that safe).
pub fn placement(g: &TreeGeometry) -> Placement {
    let level = (0..=g.height)
        .find(|&t| log2_overflow(g.items, t, g.bucket) <= -OVERFLOW_BITS)
        .unwrap_or_else(|| {
            (0..=g.height)
                .min_by(|&x, &y| {
                    log2_overflow(g.items, x, g.bucket)
                        .total_cmp(&log2_overflow(g.items, y, g.bucket))
                })
                .unwrap_or(0)
        });
    Placement {
        level,
        first_bucket: bucket_at(level, 0),
        buckets: 1 << level,
        bucket: g.bucket,
    }
}

/// log₂ of a union bound on some bucket of level `level` receiving more than `bucket` of
/// `items` items thrown uniformly at its 2^level buckets: 2^level · P[Bin(items, 2^−level) >
/// bucket].
pub fn log2_overflow(items: u64, level: u32, bucket: usize) -> f64 {
    let b = bucket as u64;
    if items <= b {
        return f64::NEG_INFINITY;
    }
    if level == 0 {
        return 0.0;
    }
    let p = (-f64::from(level)).exp2();
    let n = items as f64;
    if n * p >= b as f64 {
        // The mean load is at least a bucket: overflow is likely, and the terms below would
        // start far left of the mode.
        return 0.0;
    }
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    // ln C(n, k) for k = b + 1, then term by term.
    let mut ln_c: f64 = (0..=b)
        .map(|j| (n - j as f64).ln() - (j as f64 + 1.0).ln())
        .sum();
    let mut terms = Vec::new();
    let mut k = b + 1;
    while k <= items && terms.len() < 4096 {
        let kf = k as f64;
        let t = ln_c + kf * ln_p + (n - kf) * ln_q;
        terms.push(t);
        if terms.len() > 8 && t < terms[0] - 80.0 {
            break;
        }
        ln_c += (n - kf).ln() - (kf + 1.0).ln();
        k += 1;
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ln_tail = top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln();
    (ln_tail / std::f64::consts::LN_2 + f64::from(level)).min(0.0)
}

/// What a load and the accesses after it make resident, in bytes: estimates for a caller that
/// must refuse sizes this host cannot hold before anything runs. Only the placement levels are
/// ever written by the load; every other bucket stays unallocated until an access writes it
/// ([`EncTree`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// The server's ciphertexts right after the load: every tree's placement level.
    pub placement: u64,
    /// The load's peak with its three parties in one process, the placement levels included.
    pub load_peak: u64,
    /// What one access can add at most: a page (4 KiB) or more for every bucket it writes that
    /// no access wrote before, and the page of its nonce.
    pub per_access: u64,
}

/// Page size assumed by [`memory`].
const PAGE: u64 = 4096;

/// [`Memory`] for `params`.
///
/// The load's peak counts: the placement levels twice (the server's trees and, at worst, the
/// client's ciphertext messages queued before the server reads them); the data tree's routed
/// array (⌈d/8⌉ bytes a slot of its placement level) three times (the server's share `b`, the
/// client's `u`, and the helper's `Δ` or the server's `y` on their way); its slot maps (4
/// bytes a slot) three times (`L2` at the helper, on its way and at the client); the known-bit
/// and base-map shares twice; 12 bytes per item of every tree (the helper's leaves and slots);
/// every tree's nonces (8 bytes a bucket).
pub fn memory(params: &Params) -> Memory {
    let mut placement_bytes = 0u64;
    let mut shares = packed(base_len(params)) as u64;
    let mut items = 0u64;
    let mut nonces = 0u64;
    let mut per_access = 0u64;
    for i in 0..params.trees() {
        let g = params.tree(i);
        let pl = placement(&g);
        let bucket_bytes = (g.bucket * SlotCodec::new(params, i).slot_bits()).div_ceil(8) as u64;
        placement_bytes += pl.buckets as u64 * bucket_bytes;
        shares += packed(pl.slots() * known_bits(params, i)) as u64;
        items += g.items;
        nonces += 8 * g.buckets() as u64;
        // The path and three buckets per eviction: (h + 1) + 6h writes.
        let writes = 7 * u64::from(g.height) + 1;
        per_access += writes * (bucket_bytes.div_ceil(PAGE) + 2) * PAGE;
    }
    let slots = placement(&params.tree(0)).slots() as u64;
    let routed = slots * params.payload_bits().div_ceil(8) as u64;
    Memory {
        placement: placement_bytes,
        load_peak: 2 * placement_bytes
            + 3 * routed
            + 3 * 4 * slots
            + 2 * shares
            + 12 * items
            + nonces,
        per_access,
    }
}

/// The helper's draw for one tree: each item's leaf and its slot in the placement level.
struct Layout {
    leaves: Vec<u64>,
    slot: Vec<u32>,
}

/// `[GKK12 §4.2]` every item on a uniformly random leaf, in its level-`pl.level` bucket.
fn draw_layout<R: RngCore + ?Sized>(
    g: &TreeGeometry,
    pl: &Placement,
    tree: usize,
    rng: &mut R,
) -> Result<Layout, Gkk12Error> {
    for _ in 0..RETRIES {
        let leaves: Vec<u64> = (0..g.items)
            .map(|_| uniform_below(rng, g.leaves()))
            .collect();
        let mut load = vec![0usize; pl.buckets];
        let mut slot = Vec::with_capacity(leaves.len());
        let mut full = false;
        for &leaf in &leaves {
            let b = path(g.height, leaf)
                .nth(pl.level as usize)
                .map_or(0, |b| b - pl.first_bucket);
            if load[b] == pl.bucket {
                full = true;
                break;
            }
            slot.push((b * pl.bucket + load[b]) as u32);
            load[b] += 1;
        }
        if !full {
            return Ok(Layout { leaves, slot });
        }
    }
    Err(Gkk12Error::LoadOverflow { tree })
}

/// A uniformly random permutation of `0..n` drawn from `seed` (Fisher–Yates).
fn permutation(seed: Seed, n: usize) -> Vec<u32> {
    let mut rng = AesPrg::new(seed);
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = uniform_below(&mut rng, i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// `L2`: a permutation of the level's slots with `L2[L1[a]] = layout[a]` for every item, the
/// other slots matched uniformly at random.
fn second_map<R: RngCore + ?Sized>(
    l1: &[u32],
    layout: &[u32],
    slots: usize,
    rng: &mut R,
) -> Vec<u32> {
    const FREE: u32 = u32::MAX;
    let mut l2 = vec![FREE; slots];
    let mut taken = vec![false; slots];
    for (&from, &to) in l1.iter().zip(layout) {
        l2[from as usize] = to;
        taken[to as usize] = true;
    }
    let mut rest: Vec<u32> = (0..slots as u32).filter(|&s| !taken[s as usize]).collect();
    for i in (1..rest.len()).rev() {
        let j = uniform_below(rng, i as u64 + 1) as usize;
        rest.swap(i, j);
    }
    let mut rest = rest.into_iter();
    for to in l2.iter_mut().filter(|t| **t == FREE) {
        *to = rest.next().unwrap_or(FREE);
    }
    l2
}

/// The bits of a slot the helper knows: the header (valid, address, leaf) in the data tree,
/// the whole slot in a position-map tree (whose payload is leaves of the tree below).
fn known_bits(params: &Params, tree: usize) -> usize {
    let g = params.tree(tree);
    if tree == 0 {
        1 + 2 * g.height as usize
    } else {
        SlotCodec::new(params, tree).slot_bits()
    }
}

/// The seeds the helper deals the server.
struct ServerSeeds {
    l1: Seed,
    a: Seed,
    b: Seed,
    shares: Seed,
}

impl ServerSeeds {
    const BYTES: usize = 64;

    fn draw<R: RngCore + ?Sized>(rng: &mut R) -> ServerSeeds {
        let mut seed = || {
            let mut s = [0u8; 16];
            rng.fill_bytes(&mut s);
            Seed(s)
        };
        ServerSeeds {
            l1: seed(),
            a: seed(),
            b: seed(),
            shares: seed(),
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        [self.l1, self.a, self.b, self.shares]
            .iter()
            .flat_map(|s| s.0)
            .collect()
    }

    fn from_bytes(bytes: &[u8]) -> Result<ServerSeeds, Gkk12Error> {
        wire::exact_len(HELPER, "load seeds", bytes, Self::BYTES)?;
        let at = |k: usize| {
            let mut s = [0u8; 16];
            s.copy_from_slice(&bytes[16 * k..16 * (k + 1)]);
            Seed(s)
        };
        Ok(ServerSeeds {
            l1: at(0),
            a: at(1),
            b: at(2),
            shares: at(3),
        })
    }
}

/// Packed little-endian bits, appended one value at a time.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    len: usize,
}

impl BitWriter {
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit && let Some(last) = self.bytes.last_mut() {
            *last |= 1 << (self.len % 8);
        }
        self.len += 1;
    }
}

/// Up to 56 bits of `src` from bit `at`, little-endian.
fn load_bits(src: &[u8], at: usize, n: usize) -> u64 {
    let i = at / 8;
    let mut w = [0u8; 8];
    let end = (i + 8).min(src.len());
    w[..end - i].copy_from_slice(&src[i..end]);
    (u64::from_le_bytes(w) >> (at % 8)) & ((1u64 << n) - 1)
}

/// XORs the `n ≤ 56` low bits of `v` into `dst` from bit `at`.
fn xor_store_bits(dst: &mut [u8], at: usize, v: u64) {
    let i = at / 8;
    let w = (v << (at % 8)).to_le_bytes();
    let end = (i + 8).min(dst.len());
    for (d, s) in dst[i..end].iter_mut().zip(w) {
        *d ^= s;
    }
}

/// XORs bits `src_at..src_at + n` of `src` into `dst` from bit `dst_at`.
fn xor_bits(dst: &mut [u8], dst_at: usize, src: &[u8], src_at: usize, n: usize) {
    let mut k = 0;
    while k < n {
        let m = (n - k).min(56);
        xor_store_bits(dst, dst_at + k, load_bits(src, src_at + k, m));
        k += m;
    }
}

/// Sends `bytes` to `to` in messages of at most [`CHUNK`] bytes (none for no bytes).
pub(crate) fn send_chunked(
    session: &mut Session,
    to: PartyId,
    bytes: &[u8],
) -> Result<(), Gkk12Error> {
    if bytes.is_empty() {
        return Ok(());
    }
    send_framed(session, to, bytes, CHUNK)
}

/// Receives `len` bytes from `from`, sent by [`send_chunked`].
pub(crate) fn recv_chunked(
    session: &mut Session,
    from: PartyId,
    what: &'static str,
    len: usize,
) -> Result<Vec<u8>, Gkk12Error> {
    if len == 0 {
        return Ok(Vec::new());
    }
    recv_framed(session, from, what, len, CHUNK)
}

/// `n` bytes of the stream `prg`.
fn stream(prg: &mut AesPrg, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    prg.fill(&mut v);
    v
}

/// The helper's side of a load: draws the leaves and the layout, deals, and is done.
///
/// # Errors
/// Transport failures; [`Gkk12Error::LoadOverflow`] if the placement keeps overflowing (it
/// does not for the parameters of [`placement`]).
pub fn help<R: RngCore + ?Sized>(
    session: &mut Session,
    params: &Params,
    rng: &mut R,
) -> Result<(), Gkk12Error> {
    let seeds = ServerSeeds::draw(rng);
    session.send_bytes(SERVER, &seeds.to_bytes())?;
    let mut shares = AesPrg::new(seeds.shares);
    let mut layouts = Vec::with_capacity(params.trees());
    for i in 0..params.trees() {
        let g = params.tree(i);
        layouts.push(draw_layout(&g, &placement(&g), i, rng)?);
    }
    send_routing(session, params, &seeds, &layouts[0], rng)?;
    for (i, layout) in layouts.iter().enumerate() {
        let known = known_region(params, i, layout, (i > 0).then(|| &layouts[i - 1]));
        let mut mine = stream(&mut shares, known.bytes.len());
        for (m, k) in mine.iter_mut().zip(&known.bytes) {
            *m ^= k;
        }
        send_chunked(session, CLIENT, &mine)?;
    }
    let base = base_bits(params, &layouts[layouts.len() - 1].leaves);
    let mut mine = stream(&mut shares, base.bytes.len());
    for (m, k) in mine.iter_mut().zip(&base.bytes) {
        *m ^= k;
    }
    send_chunked(session, CLIENT, &mine)?;
    Ok(())
}

/// Helper → client: `L2` and `Δ = L2(a) ⊕ b` over the data tree's placement level.
fn send_routing<R: RngCore + ?Sized>(
    session: &mut Session,
    params: &Params,
    seeds: &ServerSeeds,
    layout: &Layout,
    rng: &mut R,
) -> Result<(), Gkk12Error> {
    let g = params.tree(0);
    let slots = placement(&g).slots();
    let db = params.payload_bits().div_ceil(8);
    let l1 = permutation(seeds.l1, slots);
    let l2 = second_map(&l1[..layout.slot.len()], &layout.slot, slots, rng);
    let l2_bytes: Vec<u8> = l2.iter().flat_map(|s| s.to_le_bytes()).collect();
    send_chunked(session, CLIENT, &l2_bytes)?;
    drop(l2_bytes);
    let mut delta = stream(&mut AesPrg::new(seeds.b), slots * db);
    let mut a = AesPrg::new(seeds.a);
    let mut aj = vec![0u8; db];
    for &to in &l2 {
        a.fill(&mut aj);
        let at = to as usize * db;
        for (d, x) in delta[at..at + db].iter_mut().zip(&aj) {
            *d ^= x;
        }
    }
    send_chunked(session, CLIENT, &delta)
}

/// What the helper knows of tree `i`'s placement level, slot after slot, [`known_bits`] each;
/// `lower` is the layout of tree `i − 1`, whose leaves tree `i`'s payloads hold.
fn known_region(params: &Params, i: usize, layout: &Layout, lower: Option<&Layout>) -> BitWriter {
    let g = params.tree(i);
    let pl = placement(&g);
    let codec = SlotCodec::new(params, i);
    let k = known_bits(params, i);
    let mut item_at = vec![u32::MAX; pl.slots()];
    for (a, &s) in layout.slot.iter().enumerate() {
        item_at[s as usize] = a as u32;
    }
    let words = if i == 0 {
        params.payload_bits().div_ceil(64)
    } else {
        RADIX
    };
    let mut out = BitWriter::default();
    let mut bits = Vec::new();
    let mut payload = vec![0u64; words];
    for &a in &item_at {
        bits.clear();
        if a == u32::MAX {
            out.bytes.resize((out.len + k).div_ceil(8), 0);
            out.len += k;
            continue;
        }
        let addr = u64::from(a);
        if let Some(lower) = lower {
            for (j, p) in payload.iter_mut().enumerate() {
                *p = lower
                    .leaves
                    .get((addr * RADIX as u64) as usize + j)
                    .copied()
                    .unwrap_or(0);
            }
        }
        let slot = Slot {
            valid: true,
            addr,
            leaf: layout.leaves[a as usize],
        };
        codec.encode(&slot, &payload, &mut bits);
        for &b in &bits[..k] {
            out.push(b);
        }
    }
    out
}

/// The base map's bits: each last-tree item's leaf, [`Params::base_entry_bits`] bits each.
fn base_bits(params: &Params, leaves: &[u64]) -> BitWriter {
    let w = params.base_entry_bits();
    let mut out = BitWriter::default();
    for &leaf in leaves {
        for k in 0..w {
            out.push((leaf >> k) & 1 == 1);
        }
    }
    out
}

/// The bytes of a packed stream of `bits` bits.
fn packed(bits: usize) -> usize {
    bits.div_ceil(8)
}

/// One party's share of tree `i`'s placement level, bucket by bucket: from the known-bit
/// shares `known` and, for the data tree, the payload shares `payload` (⌈d/8⌉ bytes a slot).
/// Computed a bucket at a time, so that neither side holds a second copy of the level.
struct Region<'a> {
    /// Slots per bucket.
    bucket: usize,
    /// Bits per slot.
    slot_bits: usize,
    /// Known bits per slot.
    known_bits: usize,
    /// Payload bits per slot (data tree).
    payload_bits: usize,
    known: &'a [u8],
    payload: Option<&'a [u8]>,
}

impl<'a> Region<'a> {
    fn new(params: &Params, i: usize, known: &'a [u8], payload: Option<&'a [u8]>) -> Region<'a> {
        Region {
            bucket: params.tree(i).bucket,
            slot_bits: SlotCodec::new(params, i).slot_bits(),
            known_bits: known_bits(params, i),
            payload_bits: params.payload_bits(),
            known,
            payload,
        }
    }

    /// XORs the share of the level's bucket `r` into `bucket` (one bucket's bytes).
    fn xor_into(&self, r: usize, bucket: &mut [u8]) {
        let (s, k, d) = (self.slot_bits, self.known_bits, self.payload_bits);
        let db = d.div_ceil(8);
        for j in 0..self.bucket {
            let slot = r * self.bucket + j;
            xor_bits(bucket, j * s, self.known, slot * k, k);
            if let Some(p) = self.payload {
                xor_bits(bucket, j * s + k, &p[slot * db..(slot + 1) * db], 0, d);
            }
        }
    }
}

/// The server's part of a load, before the base map's labels ([`ServerLoad::finish`]).
pub struct ServerLoad {
    params: Params,
    trees: Vec<EncTree>,
    base_share: Vec<u8>,
    next_nonce: u64,
}

/// The client's part of a load, before the base map's labels ([`ClientLoad::finish`]).
pub struct ClientLoad {
    params: Params,
    key: PadKey,
    base_share: Vec<u8>,
    last_nonce: u64,
}

impl std::fmt::Debug for ServerLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerLoad").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ClientLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLoad").finish_non_exhaustive()
    }
}

/// The buckets of one ciphertext message starting at bucket `first` of a level of `buckets`.
fn chunk_buckets(bucket_bytes: usize, first: usize, buckets: usize) -> usize {
    (CHUNK / bucket_bytes.max(1)).max(1).min(buckets - first)
}

/// The server's side of a load of `data(v)` (payload words of address `v`). It waits on a
/// silent peer for the session's timeout plus an allowance for the others' bulk work (5 µs
/// per placement slot of the data tree).
///
/// # Errors
/// Transport failures; a peer's message of the wrong size.
pub fn serve(
    session: &mut Session,
    params: &Params,
    data: impl FnMut(u64) -> Vec<u64>,
) -> Result<ServerLoad, Gkk12Error> {
    with_allowance(session, params, |s| serve_within(s, params, data))
}

/// How long a party of the load may wait on a silent peer beyond the session's timeout: the
/// helper draws and routes every tree's layout, and the client routes the server's array,
/// before either sends on (the server waits on the client's first ciphertexts meanwhile).
/// 5 µs per slot of the data tree's placement level: 46 s at 2^20, 3.8 min at 2^22 entries,
/// where that silent stretch outlasted the 30 s default.
fn load_allowance(params: &Params) -> std::time::Duration {
    let slots = placement(&params.tree(0)).slots() as u64;
    std::time::Duration::from_micros(slots.saturating_mul(5))
}

/// Runs `f` with the session's receive timeout extended by [`load_allowance`], then restores
/// it.
fn with_allowance<T>(
    session: &mut Session,
    params: &Params,
    f: impl FnOnce(&mut Session) -> Result<T, Gkk12Error>,
) -> Result<T, Gkk12Error> {
    let timeout = session.timeout();
    session.set_timeout(timeout.saturating_add(load_allowance(params)));
    let r = f(session);
    session.set_timeout(timeout);
    r
}

fn serve_within(
    session: &mut Session,
    params: &Params,
    mut data: impl FnMut(u64) -> Vec<u64>,
) -> Result<ServerLoad, Gkk12Error> {
    let seeds = ServerSeeds::from_bytes(&session.recv_bytes(HELPER)?)?;
    let g0 = params.tree(0);
    let slots = placement(&g0).slots();
    let d = params.payload_bits();
    let db = d.div_ceil(8);
    // [step 3] y = L1(x) ⊕ a, slot after slot, sent as it is computed.
    let l1 = permutation(seeds.l1, slots);
    let mut item_at = vec![u32::MAX; slots];
    for (v, &to) in l1.iter().take(g0.items as usize).enumerate() {
        item_at[to as usize] = v as u32;
    }
    drop(l1);
    let mut a = AesPrg::new(seeds.a);
    let mut yj = vec![0u8; db];
    let mut msg = Vec::with_capacity(CHUNK.min(slots * db));
    for &v in &item_at {
        a.fill(&mut yj);
        if v != u32::MAX {
            let words = data(u64::from(v));
            for (k, byte) in yj.iter_mut().enumerate() {
                *byte ^= (words.get(k / 8).copied().unwrap_or(0) >> (8 * (k % 8))) as u8;
            }
        }
        let mut rest = &yj[..];
        while !rest.is_empty() {
            let take = (CHUNK - msg.len()).min(rest.len());
            msg.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if msg.len() == CHUNK {
                session.send_bytes(CLIENT, &msg)?;
                msg.clear();
            }
        }
    }
    if !msg.is_empty() {
        session.send_bytes(CLIENT, &msg)?;
    }
    drop(item_at);
    let b = stream(&mut AesPrg::new(seeds.b), slots * db);
    let mut shares = AesPrg::new(seeds.shares);
    let mut trees = Vec::with_capacity(params.trees());
    let mut nonce = 0u64;
    for i in 0..params.trees() {
        let k = known_bits(params, i);
        let pl = placement(&params.tree(i));
        let known = stream(&mut shares, packed(pl.slots() * k));
        let region = Region::new(params, i, &known, (i == 0).then_some(&b[..]));
        trees.push(receive_tree(session, params, i, &region, &mut nonce)?);
    }
    let base_share = stream(&mut shares, packed(base_len(params)));
    Ok(ServerLoad {
        params: *params,
        trees,
        base_share,
        next_nonce: nonce + 1,
    })
}

/// Bits of the base map.
fn base_len(params: &Params) -> usize {
    params.base_entries() as usize * params.base_entry_bits() as usize
}

/// `[step 4]` tree `i` from the client's masked shares of its placement level and the
/// server's share `region`; every other bucket stays never written (nonce 0, the empty bucket).
fn receive_tree(
    session: &mut Session,
    params: &Params,
    i: usize,
    region: &Region<'_>,
    nonce: &mut u64,
) -> Result<EncTree, Gkk12Error> {
    let g = params.tree(i);
    let pl = placement(&g);
    let bucket_bits = g.bucket * SlotCodec::new(params, i).slot_bits();
    let bucket_bytes = bucket_bits.div_ceil(8);
    let mut tree = EncTree::new(g.buckets(), bucket_bits);
    let mut first = 0;
    while first < pl.buckets {
        let m = chunk_buckets(bucket_bytes, first, pl.buckets);
        let c = session.recv_bytes(CLIENT)?;
        wire::exact_len(CLIENT, "masked buckets", &c, m * bucket_bytes)?;
        for (j, masked) in c.chunks(bucket_bytes.max(1)).enumerate() {
            let r = first + j;
            *nonce += 1;
            let bucket = tree.bucket_mut(pl.first_bucket + r, *nonce);
            bucket.copy_from_slice(masked);
            region.xor_into(r, bucket);
        }
        first += m;
    }
    Ok(tree)
}

/// The client's side of a load; its pad key comes from `rng`. It waits on a silent peer as
/// [`serve`] does.
///
/// # Errors
/// Transport failures; a peer's message of the wrong size; a helper's `L2` that is not a
/// permutation.
pub fn fetch<R: RngCore + ?Sized>(
    session: &mut Session,
    params: &Params,
    rng: &mut R,
) -> Result<ClientLoad, Gkk12Error> {
    with_allowance(session, params, |s| fetch_within(s, params, rng))
}

fn fetch_within<R: RngCore + ?Sized>(
    session: &mut Session,
    params: &Params,
    rng: &mut R,
) -> Result<ClientLoad, Gkk12Error> {
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let key = PadKey::new(key);
    let g0 = params.tree(0);
    let slots = placement(&g0).slots();
    let db = params.payload_bits().div_ceil(8);
    let l2 = read_permutation(session, slots)?;
    // [step 3] u = L2(y) ⊕ Δ, with Δ received in place.
    let mut u = recv_chunked(session, HELPER, "Δ", slots * db)?;
    let mut known = Vec::with_capacity(params.trees());
    for i in 0..params.trees() {
        let pl = placement(&params.tree(i));
        known.push(recv_chunked(
            session,
            HELPER,
            "header shares",
            packed(pl.slots() * known_bits(params, i)),
        )?);
    }
    let base_share = recv_chunked(session, HELPER, "base shares", packed(base_len(params)))?;
    // y arrives in messages of CHUNK bytes; each slot is routed as soon as it is whole.
    let len = slots * db;
    let (mut got, mut j) = (0, 0);
    let mut pending: Vec<u8> = Vec::new();
    while got < len {
        let c = session.recv_bytes(SERVER)?;
        wire::exact_len(SERVER, "masked array", &c, CHUNK.min(len - got))?;
        got += c.len();
        pending.extend_from_slice(&c);
        let whole = pending.len() / db * db;
        for y in pending[..whole].chunks_exact(db) {
            let at = l2[j] as usize * db;
            for (x, z) in u[at..at + db].iter_mut().zip(y) {
                *x ^= z;
            }
            j += 1;
        }
        pending.drain(..whole);
    }
    let mut nonce = 0u64;
    for (i, known) in known.iter().enumerate() {
        let region = Region::new(params, i, known, (i == 0).then_some(&u[..]));
        send_tree(session, params, i, &key, &region, &mut nonce)?;
    }
    Ok(ClientLoad {
        params: *params,
        key,
        base_share,
        last_nonce: nonce,
    })
}

/// `L2` from the helper, checked to be a permutation of `0..slots`.
fn read_permutation(session: &mut Session, slots: usize) -> Result<Vec<u32>, Gkk12Error> {
    let bytes = recv_chunked(session, HELPER, "L2", 4 * slots)?;
    let l2: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut seen = vec![false; slots];
    for &s in &l2 {
        match seen.get_mut(s as usize) {
            Some(x) if !*x => *x = true,
            _ => {
                return Err(wire::PeerFault::malformed(HELPER, "L2", "not a permutation").into());
            }
        }
    }
    Ok(l2)
}

/// `[step 4]` the placement level's buckets of tree `i`, each the client's share (`region`)
/// XOR its pad under the next nonce. The other buckets are never written: nonce 0, which both
/// parties know from the public parameters.
fn send_tree(
    session: &mut Session,
    params: &Params,
    i: usize,
    key: &PadKey,
    region: &Region<'_>,
    nonce: &mut u64,
) -> Result<(), Gkk12Error> {
    let g = params.tree(i);
    let pl = placement(&g);
    let bucket_bits = g.bucket * SlotCodec::new(params, i).slot_bits();
    let bucket_bytes = bucket_bits.div_ceil(8);
    let mut first = 0;
    let mut pad = Vec::with_capacity(bucket_bytes);
    while first < pl.buckets {
        let m = chunk_buckets(bucket_bytes, first, pl.buckets);
        let mut msg = Vec::with_capacity(m * bucket_bytes);
        for r in first..first + m {
            *nonce += 1;
            pad.clear();
            key.pad_bytes(i, *nonce, bucket_bits, &mut pad);
            region.xor_into(r, &mut pad);
            msg.extend_from_slice(&pad);
        }
        session.send_bytes(SERVER, &msg)?;
        first += m;
    }
    Ok(())
}

/// Bit `k` of packed `bytes`.
fn bit_of(bytes: &[u8], k: usize) -> bool {
    (bytes[k / 8] >> (k % 8)) & 1 == 1
}

impl ServerLoad {
    /// `[step 5]` the server's state: the base map's zero labels by correlated OT with the
    /// client (`ot`'s Δ is the garbler's: pass the same `ot` to
    /// [`Server::new`](crate::driver::Server::new)), and the label of the constant 0, over a
    /// two-party session.
    ///
    /// # Errors
    /// Transport failures; malformed OT messages.
    pub fn finish<S: CotExtSender, R: RngCore + ?Sized>(
        self,
        session: &mut Session,
        ot: &mut S,
        rng: &mut R,
    ) -> Result<ServerState, Gkk12Error> {
        let n = base_len(&self.params);
        let delta = ot.delta();
        let base = if n == 0 {
            Vec::new()
        } else {
            let q = cot_send(session, ot, n)?.q;
            q.into_iter()
                .enumerate()
                .map(|(k, z)| {
                    if bit_of(&self.base_share, k) {
                        z ^ delta
                    } else {
                        z
                    }
                })
                .collect()
        };
        let zero = block(rng);
        session.send_bytes(doram_twopc::driver::peer(session)?, &zero.to_le_bytes())?;
        Ok(ServerState {
            params: self.params,
            trees: self.trees,
            base,
            zero,
            next_nonce: self.next_nonce,
            sparse: false,
        })
    }
}

impl ClientLoad {
    /// `[step 5]` the client's state: the base map's active labels by correlated OT, and the
    /// label of the constant 0, over a two-party session.
    ///
    /// # Errors
    /// Transport failures; malformed messages.
    pub fn finish<R: CotExtReceiver>(
        self,
        session: &mut Session,
        ot: &mut R,
    ) -> Result<ClientState, Gkk12Error> {
        let n = base_len(&self.params);
        let base = if n == 0 {
            Vec::new()
        } else {
            let choices: Vec<bool> = (0..n).map(|k| bit_of(&self.base_share, k)).collect();
            cot_receive(session, ot, &choices)?.t
        };
        let peer = doram_twopc::driver::peer(session)?;
        let z = session.recv_bytes(peer)?;
        wire::exact_len(peer, "constant-zero label", &z, 16)?;
        let zero = Block::from_le_bytes(z.try_into().unwrap_or([0; 16]));
        Ok(ClientState {
            params: self.params,
            key: self.key,
            base,
            zero,
            last_nonce: self.last_nonce,
            sparse: false,
        })
    }
}

/// One party's part of a load run by [`run_threads`].
enum Part {
    Server(ServerLoad),
    Client(Box<ClientLoad>),
    Helper,
}

/// The loaded parts of a load run on threads, and the bytes each party sent.
pub type ThreeParts = (ServerLoad, ClientLoad, [u64; 3]);

/// Runs the whole load on `sessions` (server, client and helper, in that order), each party on
/// a thread of this process, with `data` the server's array and `rng(party)` each party's
/// randomness; returns the server's and the client's parts and the bytes server, client and
/// helper sent.
///
/// # Errors
/// The first party's error in that order; [`Gkk12Error::Misuse`] if a party's thread panicked
/// or the sessions are not three.
pub fn run_threads(
    sessions: Vec<Session>,
    params: &Params,
    data: impl Fn(u64) -> Vec<u64> + Sync,
    rng: impl Fn(PartyId) -> AesPrg + Sync,
) -> Result<ThreeParts, Gkk12Error> {
    if sessions.len() != 3 {
        return Err(Gkk12Error::Misuse("a load needs three sessions"));
    }
    let parts = doram_net::run_parties_ok(
        sessions,
        "load",
        |mut s| {
            let me = s.me();
            let mut r = rng(me);
            let part = if me == SERVER {
                Part::Server(serve(&mut s, params, &data)?)
            } else if me == CLIENT {
                Part::Client(Box::new(fetch(&mut s, params, &mut r)?))
            } else {
                help(&mut s, params, &mut r)?;
                Part::Helper
            };
            Ok((part, s.stats().total().sum().bytes_sent))
        },
        || Gkk12Error::Misuse("a party of the load panicked"),
    )?;
    let (mut server, mut client, mut sent) = (None, None, [0u64; 3]);
    for (k, (part, bytes)) in parts.into_iter().enumerate() {
        sent[k] = bytes;
        match part {
            Part::Server(p) => server = Some(p),
            Part::Client(p) => client = Some(p),
            Part::Helper => {}
        }
    }
    match (server, client) {
        (Some(s), Some(c)) => Ok((s, *c, sent)),
        _ => Err(Gkk12Error::Misuse(
            "the sessions are not a server, a client and a helper",
        )),
    }
}

/// A random 128-bit block.
pub(crate) fn block<R: RngCore + ?Sized>(rng: &mut R) -> Block {
    (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    #[test]
    fn bit_copies_match_a_bit_loop() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        for _ in 0..200 {
            let mut src = vec![0u8; 40];
            rng.fill_bytes(&mut src);
            let mut dst = vec![0u8; 40];
            rng.fill_bytes(&mut dst);
            let n = (rng.next_u32() % 150) as usize;
            let sa = (rng.next_u32() % (320 - n as u32)) as usize;
            let da = (rng.next_u32() % (320 - n as u32)) as usize;
            let mut want = dst.clone();
            for k in 0..n {
                if bit_of(&src, sa + k) {
                    want[(da + k) / 8] ^= 1 << ((da + k) % 8);
                }
            }
            xor_bits(&mut dst, da, &src, sa, n);
            assert_eq!(dst, want);
        }
    }

    #[test]
    fn placement_levels_bound_the_overflow() {
        // 2^20 items in buckets of 40: level 18 (mean 4 a bucket), not 17 (mean 8: ≈ 2^−35),
        // and no deeper (more slots to route).
        let g = Params::paper(1 << 20, 512).unwrap().tree(0);
        assert_eq!(placement(&g).level, 18);
        assert!(log2_overflow(1 << 20, 17, 40) > -40.0);
        assert!(log2_overflow(1 << 20, 18, 40) < -64.0);
        // A tree that fits in its root starts there.
        assert_eq!(log2_overflow(3, 0, 4), f64::NEG_INFINITY);
    }

    #[test]
    fn the_second_map_completes_the_layout_to_a_permutation() {
        let mut rng = ChaCha12Rng::seed_from_u64(9);
        let l1 = [5u32, 0, 7];
        let layout = [2u32, 3, 0];
        let l2 = second_map(&l1, &layout, 9, &mut rng);
        for (f, t) in l1.iter().zip(layout) {
            assert_eq!(l2[*f as usize], t);
        }
        let mut sorted = l2.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..9).collect::<Vec<u32>>());
    }
}
