//! The initial load by the two parties alone, in O(n log n) OTs and O(n log n log B)
//! OT-switched bits (and garbled gates only to check a batch of bins for overflow) rather than
//! GKK12 Figure 1's n accesses (each O(log² n) gates times the slot width): every item of every tree gets a leaf of random bits neither
//! party knows and is placed by [`crate::binsort`] into the bucket of its leaf's path at
//! one level of the tree (or one of two, step 3), among dummies, so that neither party learns a
//! leaf, a bucket's load or where an item went.
//!
//! # Steps, tree by tree (data tree first)
//! 1. Each party draws its XOR share of every item's leaf (h bits): the leaf is uniform and
//!    unknown to both.
//! 2. Each party builds its share of every item's slot (valid ‖ address ‖ leaf ‖ payload, as
//!    [`SlotCodec`] lays it out): the valid bit and the address are public (the server holds
//!    them, the client zeros), the payload is this party's share of the 16 leaves of the tree
//!    below (position-map trees). The data tree's records stop before the payload: its
//!    placement sorts 6-byte records instead of 70-byte ones (at 2^20 items of 512 bits), and
//!    the payloads come after it (step 4).
//! 3. [`binsort::place_bins`] puts each slot into the bin of its leaf's top ℓ bits
//!    ([`sort_placement`]): either bins of Z = B slots (the bucket size) at the shallowest
//!    level ℓ where they overflow with probability at most 2^−64; or, when cheaper, bins of
//!    Z > B slots that are then split ([`binsort::Split`]) by the leaf's next bit, their first
//!    and last `edge ≤ B/2` slots to their children's buckets at level ℓ + 1 and the middle
//!    `Z − 2·edge ≤ B` to their own (at 2^20 items in buckets of 40: bins of 72 at level 16,
//!    edges of 16, 38 % less work than bins of 64 at level 17 through phases of powers of
//!    two). An overflow (opened; it depends on the fresh leaves only) draws the tree's leaves
//!    again.
//! 4. Data tree: [`crate::gather`] brings every item's payload to its slot (two networks
//!    on all the placement's slots, once for data the server holds, [`Holding::Server`], and
//!    once more for the client's share of shared data) and the slots are completed.
//! 5. The client sends every bucket the placement fills as its share XOR its pad (nonces 1, 2,
//!    … in order), the server adds its share: `Enc(m; r)` under the client's key, the rest of
//!    each bucket's slots empty, every other bucket never written.
//!
//! Then the top tree's leaves become the base map's labels under the ORAM's Δ (one correlated
//! OT per bit), and the server sends the constant 0's label.
//!
//! What either party sees: OT messages, garbled tables, uniformly random opened permutations,
//! the overflow bits and, at the server, ciphertexts. Sizes follow from the parameters.

use doram_core::{Seed, wire};
use doram_net::Session;
use doram_twopc::driver::{cot_receive, cot_send, peer};
use doram_twopc::gc::{Evaluator, Garbler};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use rand_core::{CryptoRng, RngCore};

use crate::binsort::{self, Bins, Role, Split};
use crate::circuits::SlotCodec;
use crate::driver::{ClientState, Gkk12Error, ServerState};
use crate::empty::{recv_zero, send_zero};
use crate::gather;
use crate::load::{log2_overflow, recv_chunked, send_chunked};
use crate::params::{Params, RADIX, TreeGeometry};
use crate::shuffle::{FRAME_BYTES, Shares, zeroed};
use crate::storage::{EncTree, PadKey};
use crate::tree::bucket_at;

/// How unlikely an overflow of a bin must be, in bits.
const OVERFLOW_BITS: f64 = 64.0;

/// How often a tree's leaves are drawn again after an overflow before giving up.
const RETRIES: usize = 16;

/// Where the sorted load puts a tree's items ([`sort_placement`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortPlacement {
    /// The bins' level ℓ: 2^ℓ bins, one per bucket of that level.
    pub level: u32,
    /// Z: slots per bin (at most 128).
    pub slots: usize,
    /// With `Some(edge)`, every bin is then split ([`binsort::Split`]) by the next bit of the
    /// leaf: its first and last `edge` slots go to its children's buckets (level ℓ + 1), the
    /// middle `Z − 2·edge` to its own; without, a bin is its bucket's first Z slots.
    pub edge: Option<usize>,
}

impl SortPlacement {
    fn bins(&self, g: &TreeGeometry, bytes: usize) -> Bins {
        Bins {
            log_bins: self.level,
            slots: self.slots,
            bytes,
            valid: 0,
            label: 1 + 2 * g.height as usize - self.level as usize,
        }
    }
}

/// Where tree `g`'s items are placed: the cheapest ([`binsort::cost`]) of
/// - bins of Z = B slots (the bucket size, at most 128), at the shallowest level where no bin
///   overflows but with probability at most 2^−64, and
/// - at each level ℓ, the smallest bins of Z > B slots split into their bucket (the middle
///   `Z − 2·edge ≤ B` slots) and their children's (`edge ≤ B/2` slots each, so that a child's
///   bucket starts at most half full, the rest free for the evictions of the first
///   accesses), where neither a bin nor a child's side overflows but with probability at
///   most 2^−64 together.
///
/// At 2^20 items in buckets of 40: bins of 72 at level 16, edges of 16 (items at levels 16
/// and 17), where the bins of 64 at level 17 with edges of 12 (levels 17 and 18) that powers
/// of two allowed cost about a third more.
pub fn sort_placement(g: &TreeGeometry) -> SortPlacement {
    let b = g.bucket.clamp(1, 128);
    let fits = |t: u32, z: usize| g.items.div_ceil(1 << t) <= z as u64;
    let plain = {
        let level = (0..=g.height)
            .find(|&t| log2_overflow(g.items, t, b) <= -OVERFLOW_BITS && fits(t, b))
            .unwrap_or(g.height);
        SortPlacement {
            level,
            slots: b,
            edge: None,
        }
    };
    let splits = (0..g.height).filter_map(|level| {
        let z = (b + 1..=(b + 2 * (b / 2)).min(128)).find(|&z| {
            let edge = (z - b).div_ceil(2);
            let (bin, side) = (
                log2_overflow(g.items, level, z),
                log2_overflow(g.items, level + 1, z - edge),
            );
            (bin.exp2() + side.exp2()).log2() <= -OVERFLOW_BITS && fits(level, z)
        })?;
        Some(SortPlacement {
            level,
            slots: z,
            edge: Some((z - b).div_ceil(2)),
        })
    });
    // The record size does not change the cost.
    let cost = |p: &SortPlacement| binsort::cost(g.items as usize, &p.bins(g, 1), p.edge.is_some());
    let mut best = (cost(&plain), plain);
    for s in splits {
        let c = cost(&s);
        if c < best.0 {
            best = (c, s);
        }
    }
    best.1
}

fn put_bits(dst: &mut [u8], at: usize, v: u64, n: usize) {
    for k in 0..n {
        if (v >> k) & 1 == 1 {
            dst[(at + k) / 8] ^= 1 << ((at + k) % 8);
        }
    }
}

/// XORs bits `0..n` of `src` into `dst` from bit `dst_at` on, a byte of `src` at a time.
fn copy_bits(dst: &mut [u8], dst_at: usize, src: &[u8], n: usize) {
    let (full, rest) = (n / 8, n % 8);
    let (at, sh) = (dst_at / 8, (dst_at % 8) as u32);
    // Eight bytes at a time while the ninth they may spill into is in `dst`.
    let mut done = 0;
    while done + 8 <= full && at + done + 9 <= dst.len() {
        let mut x = [0u8; 8];
        x.copy_from_slice(&src[done..done + 8]);
        let wide = (u128::from(u64::from_le_bytes(x)) << sh).to_le_bytes();
        for (d, w) in dst[at + done..at + done + 9].iter_mut().zip(wide) {
            *d ^= w;
        }
        done += 8;
    }
    let mut put = |k: usize, x: u8| {
        let wide = u16::from(x) << sh;
        dst[at + k] ^= wide as u8;
        if wide >> 8 != 0 {
            dst[at + k + 1] ^= (wide >> 8) as u8;
        }
    };
    for (k, &x) in src[..full].iter().enumerate().skip(done) {
        put(k, x);
    }
    if rest > 0 {
        put(full, src[full] & ((1u8 << rest) - 1));
    }
}

fn random_below<R: RngCore + ?Sized>(rng: &mut R, bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        rng.next_u64() >> (64 - bits)
    }
}

/// Who holds the data tree's payloads when the load starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holding {
    /// Each party passes its XOR share of every payload.
    Shared,
    /// The server passes the payloads themselves and the client passes none (an empty
    /// slice): one gather instead of two ([`crate::gather`]). Both parties must say the same.
    Server,
}

/// Which side of the load this party is, with what it holds.
enum Side<'a> {
    Server(&'a mut Garbler),
    Client(&'a mut Evaluator, &'a PadKey),
}

/// This party's share of every slot of tree `i`: `payload(item)` its share of the item's
/// payload bits (packed), `leaves` its share of every item's leaf.
fn records(
    params: &Params,
    i: usize,
    server: bool,
    leaves: &[u64],
    payload: &dyn Fn(u64) -> Vec<u8>,
) -> Shares {
    let g = params.tree(i);
    let h = g.height as usize;
    let bits = SlotCodec::new(params, i).slot_bits();
    let bytes = bits.div_ceil(8);
    let mut out = heads(&g, server, leaves, bytes);
    for (v, rec) in out.data.chunks_exact_mut(bytes).enumerate() {
        copy_bits(rec, 1 + 2 * h, &payload(v as u64), g.payload_bits);
    }
    out
}

/// This party's share of every data-tree slot's `valid ‖ address ‖ leaf` without the
/// payload, which [`crate::gather`] brings after the placement: `⌈(1 + 2h)/8⌉` bytes each.
fn meta_records(g: &TreeGeometry, server: bool, leaves: &[u64]) -> Shares {
    heads(g, server, leaves, (1 + 2 * g.height as usize).div_ceil(8))
}

/// Records of `bytes` bytes, each item's `valid ‖ address ‖ leaf` (this party's share) first
/// and the rest zero.
fn heads(g: &TreeGeometry, server: bool, leaves: &[u64], bytes: usize) -> Shares {
    let h = g.height as usize;
    let mut data = zeroed(g.items as usize * bytes);
    for (v, rec) in data.chunks_exact_mut(bytes).enumerate() {
        if server {
            put_bits(rec, 0, 1, 1);
            put_bits(rec, 1, v as u64, h);
        }
        put_bits(rec, 1 + h, leaves[v], h);
    }
    Shares { bytes, data }
}

/// Every placed slot's id for [`crate::gather`]: its `valid ‖ address` bits (the first
/// `1 + h`), the leaf's bits after them cleared.
fn ids_of(bins: &Shares, h: usize) -> Vec<u8> {
    let ib = (1 + h).div_ceil(8);
    let keep = (1 + h) % 8;
    let mut out = Vec::with_capacity(bins.data.len() / bins.bytes.max(1) * ib);
    for rec in bins.data.chunks_exact(bins.bytes) {
        out.extend_from_slice(&rec[..ib]);
        if keep != 0 {
            let last = out.len() - 1;
            out[last] &= (1u8 << keep) - 1;
        }
    }
    out
}

/// The buckets a placement fills, in order (`pl`'s level, then with a split its children's
/// level), and their plaintext shares one after another (`bucket_bytes` each, slot `s` at bit
/// `s · sb`): a bin's Z slots go to its bucket, or with a split its first and last `edge`
/// to its children's buckets and the middle to its own. The buckets' other slots are empty.
/// With `gathered = Some((payloads, head))` the placed records are a slot's first `head` bits
/// only (`valid ‖ address ‖ leaf`) and its other `sb − head` come from `payloads`, one
/// payload of `⌈(sb − head)/8⌉` bytes per slot of the placement ([`crate::gather`]).
fn fill_buckets(
    bins: &Shares,
    gathered: Option<(&[u8], usize)>,
    pl: &SortPlacement,
    bucket_bytes: usize,
    sb: usize,
) -> (Vec<usize>, Vec<u8>) {
    let z = pl.slots;
    let nb = 1u64 << pl.level;
    let rb = bins.bytes;
    let slot = |b: usize, s: usize| &bins.data[(b * z + s) * rb..(b * z + s + 1) * rb];
    // (bucket, bin, first slot of the bin, slots)
    let mut parts: Vec<(usize, usize, usize, usize)> = Vec::new();
    match pl.edge {
        None => parts.extend((0..nb).map(|v| (bucket_at(pl.level, v), v as usize, 0, z))),
        Some(a) => {
            parts.extend((0..nb).map(|v| (bucket_at(pl.level, v), v as usize, a, z - 2 * a)));
            parts.extend((0..2 * nb).map(|c| {
                let from = if c % 2 == 0 { 0 } else { z - a };
                (bucket_at(pl.level + 1, c), (c / 2) as usize, from, a)
            }));
        }
    }
    let mut out = zeroed(parts.len() * bucket_bytes);
    for (dst, &(_, bin, from, len)) in out.chunks_exact_mut(bucket_bytes).zip(&parts) {
        for s in 0..len {
            match gathered {
                None => copy_bits(dst, s * sb, slot(bin, from + s), sb),
                Some((pay, head)) => {
                    let pb = (sb - head).div_ceil(8);
                    let k = bin * z + from + s;
                    copy_bits(dst, s * sb, slot(bin, from + s), head);
                    copy_bits(dst, s * sb + head, &pay[k * pb..(k + 1) * pb], sb - head);
                }
            }
        }
    }
    (parts.into_iter().map(|p| p.0).collect(), out)
}

/// One party's side of the load: the trees (the server's; none at the client), the last
/// nonce and the top tree's leaf shares.
#[allow(clippy::too_many_arguments)]
fn run<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: &Params,
    (data, holding): (&[u8], Holding),
    side: &mut Side<'_>,
    send: &mut impl CotExtSender,
    recv: &mut impl CotExtReceiver,
    rng: &mut R,
) -> Result<(Vec<EncTree>, u64, Vec<u64>), Gkk12Error> {
    let p = peer(session)?;
    let db = params.payload_bits().div_ceil(8);
    let server = matches!(side, Side::Server(_));
    let holds = server || holding == Holding::Shared;
    if data.len()
        != if holds {
            params.items() as usize * db
        } else {
            0
        }
    {
        return Err(Gkk12Error::Misuse(
            "one payload share per item (none at a client when the server holds the data)",
        ));
    }
    let mut trees = Vec::with_capacity(params.trees());
    let mut nonce = 0u64;
    let mut lower: Vec<u64> = Vec::new();
    for i in 0..params.trees() {
        let g = params.tree(i);
        let h = g.height;
        let codec = SlotCodec::new(params, i);
        let sb = codec.slot_bits();
        let pl = sort_placement(&g);
        // The data tree's placement sorts `valid ‖ address ‖ leaf` only; its payloads come
        // after it ([`crate::gather`]).
        let gathered = i == 0;
        let record_bits = if gathered { 1 + 2 * h as usize } else { sb };
        let layout = pl.bins(&g, record_bits.div_ceil(8));
        let entry = params.tree(i.saturating_sub(1)).height as usize;
        // A position-map item's payload: this party's shares of the 16 leaves below.
        let payload = |v: u64| -> Vec<u8> {
            let mut out = vec![0u8; g.payload_bits.div_ceil(8)];
            for j in 0..RADIX {
                if let Some(&l) = lower.get(v as usize * RADIX + j) {
                    put_bits(&mut out, j * entry, l, entry);
                }
            }
            out
        };
        // The gather's network on all the placement's slots, and this party's π if it
        // permutes in a gather, built beside the placement: they depend on sizes only.
        let prep = gathered.then(|| {
            let permutes = !server || holding == Holding::Shared;
            let seed = permutes.then(|| {
                let mut s = [0u8; 16];
                rng.fill_bytes(&mut s);
                Seed(s)
            });
            let slots = pl.slots << pl.level;
            std::thread::Builder::new()
                .name("doram-gather-prep".into())
                .spawn(move || gather::prepare(slots, seed))
        });
        let mut placed = None;
        let mut leaves = Vec::new();
        for _ in 0..RETRIES {
            leaves = (0..g.items).map(|_| random_below(rng, h)).collect();
            let recs = if gathered {
                meta_records(&g, server, &leaves)
            } else {
                records(params, i, server, &leaves, &payload)
            };
            let role = match side {
                Side::Server(gb) => Role::Garbler(gb),
                Side::Client(ev, _) => Role::Evaluator(ev),
            };
            // The leaf bit just below the label: the level ℓ + 1 bit.
            let split = pl.edge.map(|edge| Split {
                bit: layout.label - 1,
                edge,
            });
            let placed_now =
                binsort::place_bins(session, role, send, recv, &recs, &layout, split, i, rng);
            match placed_now {
                Ok(b) => {
                    placed = Some(b);
                    break;
                }
                Err(Gkk12Error::LoadOverflow { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        let bins = placed.ok_or(Gkk12Error::LoadOverflow { tree: i })?;
        let mut pay = Vec::new();
        if let Some(prep) = prep {
            let mut prep = prep
                .map_err(|_| Gkk12Error::Misuse("no thread for the gather's network"))?
                .join()
                .map_err(|_| Gkk12Error::Misuse("the gather's network failed to build"))??;
            let hb = h as usize;
            let ids = ids_of(&bins, hb);
            let shape = gather::Shape {
                slots: bins.data.len() / bins.bytes,
                id_bytes: (1 + hb).div_ceil(8),
                address_bits: hb,
                items: g.items as usize,
                payload_bytes: db,
                frame: FRAME_BYTES,
            };
            // `P0` opens first: its payloads with `P0`'s sender and `P1`'s receiver.
            pay = if server {
                gather::open(session, send, &mut prep, &ids, data, &shape)?
            } else {
                gather::permute_for(session, recv, &mut prep, &ids, &shape)?
            };
            if holding == Holding::Shared {
                let more = if server {
                    gather::permute_for(session, recv, &mut prep, &ids, &shape)?
                } else {
                    gather::open(session, send, &mut prep, &ids, data, &shape)?
                };
                for (x, y) in pay.iter_mut().zip(&more) {
                    *x ^= y;
                }
            }
        }
        // [5] The buckets the placement fills, encrypted under the client's pads.
        let bucket_bits = g.bucket * sb;
        let bucket_bytes = bucket_bits.div_ceil(8);
        let head = 1 + 2 * h as usize;
        let with = gathered.then_some((&pay[..], head));
        let (targets, mut level_bytes) = fill_buckets(&bins, with, &pl, bucket_bytes, sb);
        let first = nonce + 1;
        nonce += targets.len() as u64;
        match side {
            Side::Client(_, key) => {
                let mut pad = Vec::with_capacity(bucket_bytes);
                for (b, out) in level_bytes.chunks_exact_mut(bucket_bytes).enumerate() {
                    pad.clear();
                    key.pad_bytes(i, first + b as u64, bucket_bits, &mut pad);
                    for (o, x) in out.iter_mut().zip(&pad) {
                        *o ^= x;
                    }
                }
                send_chunked(session, p, &level_bytes)?;
            }
            Side::Server(_) => {
                // Only the server stores trees.
                let mut tree = EncTree::new(g.buckets(), bucket_bits);
                let theirs = recv_chunked(session, p, "encrypted buckets", level_bytes.len())?;
                for (b, ((mine, t), &at)) in level_bytes
                    .chunks_exact(bucket_bytes)
                    .zip(theirs.chunks_exact(bucket_bytes))
                    .zip(&targets)
                    .enumerate()
                {
                    if !bucket_bits.is_multiple_of(8)
                        && t.last().is_some_and(|&x| x >> (bucket_bits % 8) != 0)
                    {
                        let e = wire::PeerFault::malformed(p, "encrypted bucket", "padding bits");
                        return Err(e.into());
                    }
                    let cipher: Vec<u8> = mine.iter().zip(t).map(|(x, y)| x ^ y).collect();
                    tree.store(at, first + b as u64, &cipher);
                }
                trees.push(tree);
            }
        }
        lower = leaves;
    }
    Ok((trees, nonce, lower))
}

/// The base map's labels (its bits XOR-shared as `shares`): the server's zero labels and the
/// client's active labels under the ORAM's Δ, one correlated OT per bit.
fn base_bits(params: &Params, top: &[u64]) -> Vec<bool> {
    let w = params.base_entry_bits() as usize;
    top.iter()
        .flat_map(|&l| (0..w).map(move |k| (l >> k) & 1 == 1))
        .collect()
}

/// The server's side of the load: `data` its XOR share of every item's payload
/// (`⌈d/8⌉` bytes each) with [`Holding::Shared`], or the payloads themselves with
/// [`Holding::Server`] (the client then passes none, and the load gathers them once),
/// `oram_ot` the ORAM's OT extension (its Δ is the ORAM garbler's: pass it to
/// [`Server::new`](crate::driver::Server::new)), `send`/`recv` the load's own OT extensions
/// with the client (`send`'s Δ fresh: the load garbles under it; SoftSpoken with
/// [`crate::OT_CHUNK`] is the fastest of the chunk sizes measured). Pairs with [`load_client`].
///
/// # Errors
/// Transport failures; the client's malformed messages; [`Gkk12Error::LoadOverflow`] if a
/// tree's bins keep overflowing; [`Gkk12Error::Misuse`] for a payload of the wrong size.
#[allow(clippy::too_many_arguments)]
pub fn load_server<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: &Params,
    data: &[u8],
    holding: Holding,
    oram_ot: &mut impl CotExtSender,
    send: &mut impl CotExtSender,
    recv: &mut impl CotExtReceiver,
    rng: &mut R,
) -> Result<ServerState, Gkk12Error> {
    let mut garbler = Garbler::new(send.delta(), 0)?;
    let mut side = Side::Server(&mut garbler);
    let (trees, nonce, top) = run(session, params, (data, holding), &mut side, send, recv, rng)?;
    let bits = base_bits(params, &top);
    let delta = oram_ot.delta();
    let base = if bits.is_empty() {
        Vec::new()
    } else {
        cot_send(session, oram_ot, bits.len())?
            .q
            .into_iter()
            .zip(&bits)
            .map(|(q, &b)| if b { q ^ delta } else { q })
            .collect()
    };
    let zero = send_zero(session, rng)?;
    Ok(ServerState {
        params: *params,
        trees,
        base,
        zero,
        next_nonce: nonce + 1,
        sparse: false,
    })
}

/// The client's side of the load (see [`load_server`]): a fresh pad key from `rng`.
///
/// # Errors
/// As [`load_server`].
#[allow(clippy::too_many_arguments)]
pub fn load_client<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: &Params,
    data: &[u8],
    holding: Holding,
    oram_ot: &mut impl CotExtReceiver,
    send: &mut impl CotExtSender,
    recv: &mut impl CotExtReceiver,
    rng: &mut R,
) -> Result<ClientState, Gkk12Error> {
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let key = PadKey::new(key);
    let mut evaluator = Evaluator::new(0);
    let mut side = Side::Client(&mut evaluator, &key);
    let (_, nonce, top) = run(session, params, (data, holding), &mut side, send, recv, rng)?;
    let bits = base_bits(params, &top);
    let base = if bits.is_empty() {
        Vec::new()
    } else {
        cot_receive(session, oram_ot, &bits)?.t
    };
    let zero = recv_zero(session)?;
    Ok(ClientState {
        params: *params,
        key,
        base,
        zero,
        last_nonce: nonce,
        sparse: false,
    })
}

#[cfg(test)]
mod tests {
    use super::copy_bits;

    #[test]
    fn bits_land_where_one_at_a_time_puts_them() {
        let src: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(97) ^ 0x5a).collect();
        for at in [0usize, 1, 3, 7, 8, 13, 41] {
            for n in [0usize, 1, 5, 8, 9, 63, 64, 65, 100, 317] {
                // A roomy destination, and one that ends with the last bit.
                for len in [48, (at + n).div_ceil(8)] {
                    let mut fast = vec![0xa5u8; len];
                    let mut slow = fast.clone();
                    copy_bits(&mut fast, at, &src, n);
                    for k in 0..n {
                        if (src[k / 8] >> (k % 8)) & 1 == 1 {
                            slow[(at + k) / 8] ^= 1 << ((at + k) % 8);
                        }
                    }
                    assert_eq!(fast, slow, "at {at}, {n} bits, {len} bytes");
                }
            }
        }
    }
}
