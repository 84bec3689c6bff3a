//! Permuting an XOR-shared vector by one party's secret permutation (the building block of a
//! secure load, docs/notes/gkk12.md): a Beneš network whose switches the permuting party
//! controls, each switch re-sharing its pair by one random OT.
//!
//! # The network
//! The Beneš network on n = 2^k positions (2k − 1 stages), its routing by the looping
//! algorithm ([`route`]), its stages ([`stage_bits`]) and its plain application
//! ([`apply_plain`]) are those of [`doram_twopc::shuffle`], re-exported here; that module also
//! runs the same switch over additive F_p shares. [`hold_blocks`] and [`permute_blocks`] run
//! independent networks on consecutive blocks of one vector (settings by [`route_blocks`]), all
//! blocks' switches of a stage in one batch: a batch of small shuffles in the rounds of one.
//! The bin sort's merge-splits ([`crate::binsort`]) use a faster variant inside this crate
//! (`BlockNet`, on blocks of any size): every switch of a block before the next block, so
//! that a block stays in cache, batches of whole blocks pipelined between the parties, and one
//! correction per switch instead of two (both outputs re-shared with the same pad; its rustdoc
//! says why that hides as much), its pads hashed straight from correlated OTs.
//!
//! # Frames
//! A stage's corrections (`2s` bits per switch) go as frames of at most [`FRAME_BYTES`] bytes
//! (or the `frame` of [`hold_blocks_framed`] and [`permute_blocks_framed`]), back to back in
//! one direction, so a stage still costs one round whatever the batch's size. How many frames
//! and how long each is follow from the size, the entry size and the frame size alone; the
//! permuter checks every frame's exact length and routes each switch as soon as its
//! corrections are in.
//!
//! # One switch, shared
//! The vector is shared as `w ⊕ a` (holder's `w`, permuter's `a`). For the pair `(x, x')` with
//! the permuter's control c, a random OT gives the holder `(k0, k1)` and the permuter `k_c`; G
//! and G' are the two halves of a PRG on the key. The holder's new shares are
//! `w_x ⊕ G(k0)`, `w_x' ⊕ G'(k0)`; it sends `u = δ ⊕ G(k0) ⊕ G(k1)` and
//! `u' = δ ⊕ G'(k0) ⊕ G'(k1)`, δ = w_x ⊕ w_x'. The permuter's new shares are
//! `a_x ⊕ G(k0)`, `a_x' ⊕ G'(k0)` if c = 0, and `a_x' ⊕ u ⊕ G(k1)`, `a_x ⊕ u' ⊕ G'(k1)` if
//! c = 1. The holder learns nothing (its view is OT messages); the permuter sees u, u' masked
//! by G(k_(1−c)), which it does not know. Cost per switch: one OT and 2s bits for s-bit
//! entries.
//!
//! The same switch works in any group: with `+` and `−` for `⊕`, the holder's new shares are
//! `w_x + G(k0)`, `w_x' + G'(k0)`, it sends `u = w_x' − w_x − G(k0) + G(k1)` and
//! `u' = w_x − w_x' − G'(k0) + G'(k1)`, and the permuter's new shares are `a_x − G(k0)`,
//! `a_x' − G'(k0)` or `a_x' + u − G(k1)`, `a_x + u' − G'(k1)`. The bin sort keeps its
//! destinations as additive shares in the last byte or two of each entry and moves them this
//! way, with the rest of the entry XOR-shared.

use doram_core::{PartyId, wire};
use doram_net::Session;
use doram_prim::aes::{Block, fixed_key};
use doram_twopc::driver::{cot_receive, cot_send, peer};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use doram_twopc::shuffle::switches;
pub use doram_twopc::shuffle::{apply_plain, route, stage_bits};

use crate::driver::Gkk12Error;

/// The largest message of a shuffle stage, and of the bin sort's other batches
/// ([`crate::binsort`]): a larger batch goes as several frames of this many bytes, the last
/// one shorter, in order. 8 MiB, the size of the chunks in which the loads send buckets
/// ([`crate::load`], [`crate::sortload`]), so that the sorted load's largest message is 8 MiB
/// whatever its size (its OT extension messages and garbled tables are at most 1 MiB): a
/// transport cap of 8 MiB or more, such as the default 256 MiB, always lets it through, while
/// a frame's fixed costs (a 12-byte header, one send and one receive) are negligible next to
/// its payload.
pub const FRAME_BYTES: usize = 8 << 20;

/// A frame size must be at least one byte.
pub(crate) fn check_frame(frame: usize) -> Result<(), Gkk12Error> {
    if frame == 0 {
        return Err(Gkk12Error::Misuse("frames of zero bytes"));
    }
    Ok(())
}

/// The lengths of the frames that carry `len` bytes in frames of at most `frame` bytes (not
/// zero): all full but the last, and one empty frame for no bytes. Public sizes only.
pub(crate) fn frame_sizes(len: usize, frame: usize) -> impl Iterator<Item = usize> {
    let count = len.div_ceil(frame).max(1);
    (0..count).map(move |i| (len - i * frame).min(frame))
}

/// `n` zero bytes, written rather than taken zeroed from the allocator. A large `vec![0; n]`
/// is fresh pages that the kernel maps to its shared zero page on a first read; the first
/// write to such a page is then a copy-on-write fault that flushes the page from every core
/// running this process (an interrupt to the peer's core when both parties are threads here),
/// and buffers that are read before they are written (shares XORed in place) took one per
/// 4 KiB: 3 % of the load's CPU at 2^20 items. Writing the zeros first maps every page
/// writable at once.
// `vec![0; n]` is what this avoids.
#[allow(clippy::slow_vector_initialization)]
pub(crate) fn zeroed(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0);
    v
}

/// Sends `bytes` to `to` as the frames of [`frame_sizes`], in order.
pub(crate) fn send_framed(
    session: &mut Session,
    to: PartyId,
    bytes: &[u8],
    frame: usize,
) -> Result<(), Gkk12Error> {
    let mut at = 0;
    for k in frame_sizes(bytes.len(), frame) {
        session.send_bytes(to, &bytes[at..at + k])?;
        at += k;
    }
    Ok(())
}

/// [`send_framed`] of a vector the caller no longer needs: one frame goes as the vector
/// itself, without a copy.
pub(crate) fn send_framed_vec(
    session: &mut Session,
    to: PartyId,
    bytes: Vec<u8>,
    frame: usize,
) -> Result<(), Gkk12Error> {
    if bytes.len() <= frame {
        session.send_vec(to, bytes)?;
        Ok(())
    } else {
        send_framed(session, to, &bytes, frame)
    }
}

/// Receives the `len` bytes `what` from `from`, sent by [`send_framed`]: every frame must be
/// exactly as long as [`frame_sizes`] says, or it is `from`'s fault.
pub(crate) fn recv_framed(
    session: &mut Session,
    from: PartyId,
    what: &'static str,
    len: usize,
    frame: usize,
) -> Result<Vec<u8>, Gkk12Error> {
    if len <= frame {
        // One frame: the message itself, no copy.
        let c = session.recv_bytes(from)?;
        wire::exact_len(from, what, &c, len)?;
        return Ok(c);
    }
    let mut out = Vec::with_capacity(len);
    for k in frame_sizes(len, frame) {
        let c = session.recv_bytes(from)?;
        wire::exact_len(from, what, &c, k)?;
        out.extend_from_slice(&c);
    }
    Ok(out)
}

/// Switches whose keys are expanded together: one pass of the cipher over all their blocks
/// keeps its pipeline full, and the scratch space stays small (a few hundred KB).
const EXPAND_BATCH: usize = 1024;

/// G ‖ G' of each of `keys`, `len` bytes each, one after another in `out`. A key is a random
/// OT's message (the hash of an OT extension row), uniform to the party that did not receive
/// it, so when `len` fits in one block a key's bytes are its own; longer outputs come from
/// fixed-key AES as a PRG, block i the correlation-robust hash (MMO) of `key ⊕ i`. `tmp` is
/// scratch space, kept by the caller across batches so that nothing is allocated per switch.
fn expand(keys: impl Iterator<Item = Block>, len: usize, tmp: &mut Vec<Block>, out: &mut Vec<u8>) {
    expand_blocks(keys, len, tmp);
    let stride = 16 * len.div_ceil(16).max(1);
    let pads: &[u8] = bytemuck::cast_slice(tmp);
    out.clear();
    for pad in pads.chunks_exact(stride) {
        out.extend_from_slice(&pad[..len]);
    }
}

/// The pads G of `keys` for `len`-byte entries ([`expand`]), left where the cipher puts them:
/// `len.div_ceil(16)` blocks per key (at least one), one key after another in `out`; a pad is
/// its blocks' bytes (little-endian, in order), those past `len` unused.
fn expand_blocks(keys: impl Iterator<Item = Block>, len: usize, out: &mut Vec<Block>) {
    out.clear();
    let blocks = len.div_ceil(16).max(1);
    if blocks == 1 {
        out.extend(keys);
        return;
    }
    for k in keys {
        push_counted(out, k, blocks);
    }
    fixed_key().cr_in_place(out);
}

/// Appends `base ⊕ i` for `i < blocks` to `out`: a pad's hash inputs ([`expand_blocks`],
/// [`expand_cot`]). Up to 32 blocks from a table rather than a range of u128: 15-25 % faster
/// in isolation (6.7 against 7.9 ns per key of five blocks;
/// bench-results/2026-11-28-gkk12-chunk/counters.txt).
fn push_counted(out: &mut Vec<Block>, base: Block, blocks: usize) {
    match COUNTERS.get(..blocks) {
        Some(ctr) => out.extend(ctr.iter().map(|&i| base ^ i)),
        None => out.extend((0..blocks as Block).map(|i| base ^ i)),
    }
}

/// The counters of [`push_counted`] for pads of up to 32 blocks (512 bytes).
const COUNTERS: [Block; 32] = {
    let mut c = [0; 32];
    let mut i = 0;
    while i < c.len() {
        c[i] = i as Block;
        i += 1;
    }
    c
};

/// The pads of [`BlockNet`]'s switches, straight from correlated OTs: for each of `keys` (the
/// OT's message for one choice: `t = q ⊕ cΔ` at the receiver, or `q` at the sender) and its
/// OT index `o` (`first`, `first + 1`, … for consecutive OTs), the pad of `x = key`, and with
/// `delta` (the sender's Δ) then that of `x = key ⊕ Δ`: `len.div_ceil(16)` blocks each (at
/// least one), block `i` the hash `CCR(x ⊕ T(o, i))` of [`tweak`], left where the cipher puts
/// them as in [`expand_blocks`].
///
/// `CCR(y) = π(σ(y)) ⊕ σ(y)`, σ linear, so `CCR(x ⊕ T) = π(σ(x) ⊕ σ(T)) ⊕ σ(x) ⊕ σ(T)`: the
/// tweakable circular correlation-robust hash that half-gates garbling uses (GKWY20 §7.3),
/// with the tweak `σ(T)` and a public value added. Every tweak belongs to one OT and one
/// block, used with that OT's two messages only (as a garbled gate's tweak is used with a
/// label and the label ⊕ Δ). So the pads of the choice a receiver did not make look random to
/// it, although the two messages differ by Δ (for `P0` the garbler's Δ); no hash of the OT
/// first, which cost the holder two more calls of π per switch and the permuter one more.
fn expand_cot(keys: &[Block], delta: Option<Block>, first: u64, len: usize, out: &mut Vec<Block>) {
    let blocks = len.div_ceil(16).max(1);
    let copies = 1 + usize::from(delta.is_some());
    let d = delta.unwrap_or(0);
    if blocks <= 8 {
        // Sized once and then overwritten (the same size chunk after chunk): no per-key
        // growth checks on the hot path.
        out.resize(keys.len() * blocks * copies, 0);
    }
    match blocks {
        1 => counted::<1>(keys, d, copies, first, out),
        2 => counted::<2>(keys, d, copies, first, out),
        3 => counted::<3>(keys, d, copies, first, out),
        4 => counted::<4>(keys, d, copies, first, out),
        5 => counted::<5>(keys, d, copies, first, out),
        6 => counted::<6>(keys, d, copies, first, out),
        7 => counted::<7>(keys, d, copies, first, out),
        8 => counted::<8>(keys, d, copies, first, out),
        _ => {
            out.clear();
            for (n, &k) in keys.iter().enumerate() {
                let base = k ^ tweak(first + n as u64, 0);
                push_counted(out, base, blocks);
                if copies == 2 {
                    push_counted(out, base ^ d, blocks);
                }
            }
        }
    }
    fixed_key().ccr_in_place(out);
}

/// [`expand_cot`]'s hash inputs for pads of `B` blocks, written into `out` (exactly
/// `keys.len() · B · copies` blocks): `B` a constant, so that each key's blocks are a few
/// straight stores.
fn counted<const B: usize>(keys: &[Block], d: Block, copies: usize, first: u64, out: &mut [Block]) {
    for (n, (&k, dst)) in keys
        .iter()
        .zip(out.chunks_exact_mut(B * copies))
        .enumerate()
    {
        // T(o, i) = T(o, 0) ⊕ i: the block's number is in the tweak's low 16 bits.
        let base = k ^ tweak(first + n as u64, 0);
        let (d0, d1) = dst.split_at_mut(B);
        for (i, o) in d0.iter_mut().enumerate() {
            *o = base ^ i as Block;
        }
        for (i, o) in d1.iter_mut().enumerate() {
            *o = base ^ d ^ i as Block;
        }
    }
}

/// The tweak `T(o, i)` of block `i < 2^16` of OT `o`'s pads ([`expand_cot`]): distinct for
/// distinct `(o, i)`, and with its top bit set, so that `σ(T)` is never a small integer like
/// the tweaks of garbled gates and of the OT hash ([`doram_twopc::hash`]).
fn tweak(o: u64, i: usize) -> Block {
    (1 << 127) | (Block::from(o) << 16) | i as Block
}

/// An entry's bytes: the first `xor` are XOR-shared, the rest (at most eight) one additive
/// share of a little-endian integer modulo 2^(8·(len − xor)) (the bin sort's destinations,
/// [`crate::binsort`]). A switch re-shares both kinds the same way, with the group's own
/// addition and subtraction ([module docs](self)).
#[derive(Clone, Copy)]
struct Mixed {
    xor: usize,
}

impl Mixed {
    /// The additive tail of `x` as an integer, `t` bytes (at most eight) little-endian.
    fn tail(x: &[u8]) -> u64 {
        match *x {
            [] => 0,
            [a] => u64::from(a),
            [a, b] => u64::from(u16::from_le_bytes([a, b])),
            _ => {
                let mut w = [0u8; 8];
                w[..x.len()].copy_from_slice(x);
                u64::from_le_bytes(w)
            }
        }
    }

    fn put_tail(dst: &mut [u8], v: u64) {
        let bytes = v.to_le_bytes();
        for (d, b) in dst.iter_mut().zip(bytes) {
            *d = b;
        }
    }

    /// Appends `to − from − g0 + g1` to `out` (a switch's correction).
    fn correction(self, out: &mut Vec<u8>, to: &[u8], from: &[u8], g0: &[u8], g1: &[u8]) {
        let x = self.xor;
        out.extend(
            to[..x]
                .iter()
                .zip(&from[..x])
                .zip(&g0[..x])
                .zip(&g1[..x])
                .map(|(((a, b), c), d)| a ^ b ^ c ^ d),
        );
        let v = Self::tail(&to[x..])
            .wrapping_sub(Self::tail(&from[x..]))
            .wrapping_sub(Self::tail(&g0[x..]))
            .wrapping_add(Self::tail(&g1[x..]));
        let at = out.len();
        out.resize(at + to.len() - x, 0);
        Self::put_tail(&mut out[at..], v);
    }

    /// A [`BlockNet`] switch at the holder: writes the correction `v = (w_y − w_x) − g0 − g1`
    /// to `v` and re-shares `w_x + g0`, `w_y − g0`, in one pass.
    fn hold_switch(self, v: &mut [u8], wx: &mut [u8], wy: &mut [u8], g0: &[u8], g1: &[u8]) {
        let n = self.xor;
        let (vx, wxx, wyx) = (&mut v[..n], &mut wx[..n], &mut wy[..n]);
        let (g0x, g1x) = (&g0[..n], &g1[..n]);
        for j in 0..n {
            let r = g0x[j];
            vx[j] = wyx[j] ^ wxx[j] ^ r ^ g1x[j];
            wxx[j] ^= r;
            wyx[j] ^= r;
        }
        if wx.len() == n + 1 {
            // A one-byte tail (the common case): bytes modulo 2^8.
            let (x, y, r) = (wx[n], wy[n], g0[n]);
            v[n] = y.wrapping_sub(x).wrapping_sub(r).wrapping_sub(g1[n]);
            wx[n] = x.wrapping_add(r);
            wy[n] = y.wrapping_sub(r);
        } else if n < wx.len() {
            let (x, y, r) = (
                Self::tail(&wx[n..]),
                Self::tail(&wy[n..]),
                Self::tail(&g0[n..]),
            );
            let t = y
                .wrapping_sub(x)
                .wrapping_sub(r)
                .wrapping_sub(Self::tail(&g1[n..]));
            Self::put_tail(&mut v[n..], t);
            Self::put_tail(&mut wx[n..], x.wrapping_add(r));
            Self::put_tail(&mut wy[n..], y.wrapping_sub(r));
        }
    }

    /// A [`BlockNet`] switch at the permuter, `g = G(k_c)` and the correction `v`: control 0
    /// gives `a_x − g`, `a_y + g`; control 1, with `e = v + g`, gives `a_y + e`, `a_x − e`.
    fn permute_switch(self, ax: &mut [u8], ay: &mut [u8], g: &[u8], v: &[u8], swap: bool) {
        let n = self.xor;
        let (axx, ayx, gx, vx) = (&mut ax[..n], &mut ay[..n], &g[..n], &v[..n]);
        // Without branches on the control (random, so unpredictable): with t = x ⊕ y ⊕ v
        // where the control is 1 and 0 where it is 0, the new shares are x ⊕ g ⊕ t and
        // y ⊕ g ⊕ t.
        let mask = 0u8.wrapping_sub(u8::from(swap));
        for j in 0..n {
            let (x, y) = (axx[j], ayx[j]);
            let t = (x ^ y ^ vx[j]) & mask;
            axx[j] = x ^ gx[j] ^ t;
            ayx[j] = y ^ gx[j] ^ t;
        }
        if ax.len() == n + 1 {
            let (x, y, r) = (ax[n], ay[n], g[n]);
            let e = v[n].wrapping_add(r);
            let (swapped, kept) = (
                (y.wrapping_add(e), x.wrapping_sub(e)),
                (x.wrapping_sub(r), y.wrapping_add(r)),
            );
            (ax[n], ay[n]) = if swap { swapped } else { kept };
        } else if n < ax.len() {
            let (x, y, r) = (
                Self::tail(&ax[n..]),
                Self::tail(&ay[n..]),
                Self::tail(&g[n..]),
            );
            let (nx, ny) = if swap {
                let e = Self::tail(&v[n..]).wrapping_add(r);
                (y.wrapping_add(e), x.wrapping_sub(e))
            } else {
                (x.wrapping_sub(r), y.wrapping_add(r))
            };
            Self::put_tail(&mut ax[n..], nx);
            Self::put_tail(&mut ay[n..], ny);
        }
    }

    /// `dst = dst + plus − minus` (`plus` none: `dst − minus`; `minus` none: `dst + plus`).
    fn update(self, dst: &mut [u8], plus: Option<&[u8]>, minus: Option<&[u8]>) {
        let x = self.xor;
        let (dx, da) = dst.split_at_mut(x);
        match (plus, minus) {
            (Some(p), Some(m)) => {
                for ((d, a), b) in dx.iter_mut().zip(&p[..x]).zip(&m[..x]) {
                    *d ^= a ^ b;
                }
            }
            (Some(o), None) | (None, Some(o)) => {
                for (d, a) in dx.iter_mut().zip(&o[..x]) {
                    *d ^= a;
                }
            }
            (None, None) => {}
        }
        if !da.is_empty() {
            let mut v = Self::tail(da);
            if let Some(p) = plus {
                v = v.wrapping_add(Self::tail(&p[x..]));
            }
            if let Some(m) = minus {
                v = v.wrapping_sub(Self::tail(&m[x..]));
            }
            Self::put_tail(da, v);
        }
    }
}

/// Blocks of `block` entries (a power of two, at least 1) tile `n` entries exactly.
fn check_blocks(n: usize, block: usize) -> Result<(), Gkk12Error> {
    if !block.is_power_of_two() || !n.is_multiple_of(block) {
        return Err(Gkk12Error::Misuse(
            "Beneš blocks must be a power of two that divides the size",
        ));
    }
    Ok(())
}

/// The settings of independent networks on consecutive blocks, `dests[j]` the permutation of
/// block j (each of the same power-of-two size), stage by stage in the order
/// [`hold_blocks`] and [`permute_blocks`] take them (block 0's switches of a stage first).
///
/// # Errors
/// [`Gkk12Error::Misuse`] unless every block is a permutation of the same power-of-two size.
pub fn route_blocks(dests: &[Vec<usize>]) -> Result<Vec<Vec<bool>>, Gkk12Error> {
    let m = dests.first().map_or(1, Vec::len);
    let mut out: Vec<Vec<bool>> = Vec::new();
    for d in dests {
        if d.len() != m {
            return Err(Gkk12Error::Misuse("blocks of different sizes"));
        }
        let c = route(d).map_err(|_| Gkk12Error::Misuse("a block that is not a permutation"))?;
        if out.is_empty() {
            out = vec![Vec::with_capacity(dests.len() * m / 2); c.len()];
        }
        for (stage, bits) in out.iter_mut().zip(c) {
            stage.extend(bits);
        }
    }
    Ok(out)
}

/// Entries of `bytes` bytes each in one flat vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shares {
    /// Bytes per entry.
    pub bytes: usize,
    /// The entries, one after another.
    pub data: Vec<u8>,
}

impl Shares {
    fn len(&self) -> usize {
        self.data.len().checked_div(self.bytes).unwrap_or(0)
    }

    fn pair(&mut self, x: usize, y: usize) -> (&mut [u8], &mut [u8]) {
        let (lo, hi) = self.data.split_at_mut(y * self.bytes);
        (
            &mut lo[x * self.bytes..(x + 1) * self.bytes],
            &mut hi[..self.bytes],
        )
    }
}

/// The holder's side: its shares `w` re-shared through every stage (backwards if `inverse`).
///
/// # Errors
/// Transport failures; a malformed OT message; [`Gkk12Error::Misuse`] for a size that is not
/// a power of two.
pub fn hold(
    session: &mut Session,
    ot: &mut impl CotExtSender,
    w: &mut Shares,
    inverse: bool,
) -> Result<(), Gkk12Error> {
    let n = w.len();
    if !n.is_power_of_two() {
        return Err(Gkk12Error::Misuse(
            "a Beneš network needs a power-of-two size",
        ));
    }
    hold_blocks(session, ot, w, n, inverse)
}

/// [`hold`] for independent networks on consecutive blocks of `block` entries (a power of
/// two dividing the size), all blocks' switches of a stage in one batch of frames of at most
/// [`FRAME_BYTES`] bytes: what a batch of small shuffles (a bucket sort's merge-splits) needs,
/// in the rounds of one.
///
/// # Errors
/// As [`hold`]; [`Gkk12Error::Misuse`] if `block` does not divide the size.
pub fn hold_blocks(
    session: &mut Session,
    ot: &mut impl CotExtSender,
    w: &mut Shares,
    block: usize,
    inverse: bool,
) -> Result<(), Gkk12Error> {
    hold_blocks_framed(session, ot, w, block, inverse, FRAME_BYTES)
}

/// [`hold_blocks`] with frames of at most `frame` bytes ([module docs](self), "Frames"); the
/// permuter must use the same `frame`.
///
/// # Errors
/// As [`hold_blocks`]; [`Gkk12Error::Misuse`] if `frame` is zero.
pub fn hold_blocks_framed(
    session: &mut Session,
    ot: &mut impl CotExtSender,
    w: &mut Shares,
    block: usize,
    inverse: bool,
    frame: usize,
) -> Result<(), Gkk12Error> {
    let xor = w.bytes;
    hold_mixed(session, ot, w, block, inverse, frame, xor)
}

/// [`hold_blocks_framed`] on entries whose bytes from `xor` on are an additive share of a
/// little-endian integer ([`Mixed`]); the permuter must run [`permute_mixed`] with the same
/// `xor`.
pub(crate) fn hold_mixed(
    session: &mut Session,
    ot: &mut impl CotExtSender,
    w: &mut Shares,
    block: usize,
    inverse: bool,
    frame: usize,
    xor: usize,
) -> Result<(), Gkk12Error> {
    let peer = peer(session)?;
    let n = w.len();
    check_blocks(n, block)?;
    check_frame(frame)?;
    let mut bits = stage_bits(block.trailing_zeros());
    if inverse {
        bits.reverse();
    }
    let sb = w.bytes;
    let mix = Mixed { xor };
    let total = n * sb;
    let (mut tmp, mut pads) = (Vec::new(), Vec::new());
    let mut msg = Vec::with_capacity(frame.min(total) + 2 * sb);
    for b in bits {
        let keys = cot_send(session, ot, n / 2)?.into_random().msgs;
        msg.clear();
        let mut xs = switches(n, b);
        for batch in keys.chunks(EXPAND_BATCH) {
            // G(k0) ‖ G'(k0) ‖ G(k1) ‖ G'(k1) for every switch of the batch.
            expand(batch.iter().flatten().copied(), 2 * sb, &mut tmp, &mut pads);
            // The pads first: `zip` then stops without taking a switch from `xs`.
            for (g, x) in pads.chunks_exact(4 * sb).zip(xs.by_ref()) {
                let (e0, e1) = g.split_at(2 * sb);
                let (wx, wy) = w.pair(x, x | (1 << b));
                // u = w_y − w_x − G(k0) + G(k1), u' = w_x − w_y − G'(k0) + G'(k1).
                let (g0, g0p) = e0.split_at(sb);
                let (g1, g1p) = e1.split_at(sb);
                mix.correction(&mut msg, wy, wx, g0, g1);
                mix.correction(&mut msg, wx, wy, g0p, g1p);
                mix.update(wx, Some(g0), None);
                mix.update(wy, Some(g0p), None);
                // Every full frame goes as soon as it is: the stream cut every `frame` bytes.
                while msg.len() >= frame {
                    session.send_bytes(peer, &msg[..frame])?;
                    msg.drain(..frame);
                }
            }
        }
        // The short last frame, or the one empty frame of a stage without switches.
        if !msg.is_empty() || total == 0 {
            session.send_bytes(peer, &msg)?;
        }
    }
    Ok(())
}

/// The permuter's side: its shares `a` re-shared through the stages set by `controls`
/// (from [`route`]; backwards if `inverse`).
///
/// # Errors
/// Transport failures; a message of the wrong size; [`Gkk12Error::Misuse`] if `controls` do
/// not fit the size.
pub fn permute(
    session: &mut Session,
    ot: &mut impl CotExtReceiver,
    a: &mut Shares,
    controls: &[Vec<bool>],
    inverse: bool,
) -> Result<(), Gkk12Error> {
    let n = a.len();
    if !n.is_power_of_two() {
        return Err(Gkk12Error::Misuse(
            "switch settings that do not fit the network",
        ));
    }
    permute_blocks(session, ot, a, n, controls, inverse)
}

/// [`permute`] for independent networks on consecutive blocks of `block` entries, pairing with
/// [`hold_blocks`]; `controls` from [`route_blocks`].
///
/// # Errors
/// As [`permute`]; [`Gkk12Error::Misuse`] if `block` does not divide the size.
pub fn permute_blocks(
    session: &mut Session,
    ot: &mut impl CotExtReceiver,
    a: &mut Shares,
    block: usize,
    controls: &[Vec<bool>],
    inverse: bool,
) -> Result<(), Gkk12Error> {
    permute_blocks_framed(session, ot, a, block, controls, inverse, FRAME_BYTES)
}

/// [`permute_blocks`] with frames of at most `frame` bytes, pairing with
/// [`hold_blocks_framed`] on the same `frame`: every frame must be exactly as long as the
/// sizes say ([module docs](self), "Frames"), or it is the holder's fault.
///
/// # Errors
/// As [`permute_blocks`]; [`Gkk12Error::Misuse`] if `frame` is zero.
pub fn permute_blocks_framed(
    session: &mut Session,
    ot: &mut impl CotExtReceiver,
    a: &mut Shares,
    block: usize,
    controls: &[Vec<bool>],
    inverse: bool,
    frame: usize,
) -> Result<(), Gkk12Error> {
    let xor = a.bytes;
    permute_mixed(session, ot, a, block, controls, inverse, frame, xor)
}

/// [`permute_blocks_framed`] on entries whose bytes from `xor` on are an additive share of a
/// little-endian integer ([`Mixed`]), pairing with [`hold_mixed`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn permute_mixed(
    session: &mut Session,
    ot: &mut impl CotExtReceiver,
    a: &mut Shares,
    block: usize,
    controls: &[Vec<bool>],
    inverse: bool,
    frame: usize,
    xor: usize,
) -> Result<(), Gkk12Error> {
    let peer = peer(session)?;
    let n = a.len();
    check_blocks(n, block)?;
    check_frame(frame)?;
    let mut stages: Vec<(u32, &Vec<bool>)> = stage_bits(block.trailing_zeros())
        .into_iter()
        .zip(controls)
        .collect();
    if controls.len() != stages.len() || controls.iter().any(|c| c.len() != n / 2) {
        return Err(Gkk12Error::Misuse(
            "switch settings that do not fit the network",
        ));
    }
    if inverse {
        stages.reverse();
    }
    let sb = a.bytes;
    let mix = Mixed { xor };
    let total = n * sb;
    let (mut tmp, mut pads) = (Vec::new(), Vec::new());
    // The corrections not yet used; `base` is the offset of `buf[0]` in the stage's stream.
    let mut buf: Vec<u8> = Vec::with_capacity(frame.min(total) + 2 * sb);
    for (b, c) in stages {
        let keys = cot_receive(session, ot, c)?.into_random().msgs;
        let mut sizes = frame_sizes(total, frame);
        buf.clear();
        let mut base = 0;
        let mut xs = switches(n, b).zip(c.iter()).enumerate();
        for batch in keys.chunks(EXPAND_BATCH) {
            expand(batch.iter().copied(), 2 * sb, &mut tmp, &mut pads);
            for (e, (t, (x, &swap))) in pads.chunks_exact(2 * sb).zip(xs.by_ref()) {
                let (start, end) = (2 * t * sb, (2 * t + 2) * sb);
                while base + buf.len() < end {
                    let want = sizes
                        .next()
                        .ok_or(Gkk12Error::Misuse("more switches than the network has"))?;
                    let msg = session.recv_bytes(peer)?;
                    wire::exact_len(peer, "switch corrections", &msg, want)?;
                    buf.drain(..start - base);
                    base = start;
                    buf.extend_from_slice(&msg);
                }
                let (ax, ay) = a.pair(x, x | (1 << b));
                let (g, gp) = e.split_at(sb);
                if swap {
                    ax.swap_with_slice(ay);
                    let (u, up) = buf[start - base..end - base].split_at(sb);
                    mix.update(ax, Some(u), Some(g));
                    mix.update(ay, Some(up), Some(gp));
                } else {
                    mix.update(ax, None, Some(g));
                    mix.update(ay, None, Some(gp));
                }
            }
        }
        // The frames no switch needed: the one empty frame of a stage without switches.
        for want in sizes {
            let msg = session.recv_bytes(peer)?;
            wire::exact_len(peer, "switch corrections", &msg, want)?;
        }
    }
    Ok(())
}

/// Beneš networks on consecutive blocks of `m` entries (any `m ≥ 1`), one block at a time and
/// one correction per switch: what the bin sort's merge-splits run ([`crate::binsort`]). A
/// block of a few hundred KB at most stays in cache through all its switches, and the
/// switches' OTs can come in batches of whole blocks, each batch's corrections one message.
///
/// # The network on any number of entries
/// On `n` entries at positions `P[0] < … < P[n − 1]` of the block: nothing for one entry, one
/// switch for two; otherwise `h = ⌊n/2⌋` input switches on `(P[2i], P[2i + 1])`, a network on
/// the `h` positions `P[2i]` (the top), one on the `P[2i + 1]` and, for odd `n`, `P[n − 1]`
/// (the bottom, `⌈n/2⌉` entries), and `h` output switches on `(P[2j], P[2j + 1])`. A switch
/// swaps its two entries or not, in place; every position stays where it is. With the top
/// network's output `j` at `P[2j]` and the bottom's at `P[2j + 1]` (`P[n − 1]` for `j = h`),
/// every permutation is routed by the looping algorithm ([`route_any`]): the two entries of an
/// input switch take different networks, and so do the two bound for one output switch; for
/// odd `n` the last entry and the one bound for the last output take the bottom network, the
/// two ends of one path of these constraints. For `n = 2^k` this is the Beneš network of
/// `(2k − 1)·2^(k − 1)` switches; in general `⌊n/2⌋` more than the two halves' together
/// ([`switch_count`]), about `n (log₂ n − 1/2)`. Switches run in the order of that recursion
/// (input switches, top network, bottom network, output switches), each after those it reads.
///
/// # One switch, one correction
/// Shares `w ⊕ a` as in the [module docs](self); the holder's new shares are `w_x ⊕ R` and
/// `w_x' ⊕ R` with the same `R = G(k0)` for both, so that the permuter needs one value,
/// `R` (control 0: new shares `a_x ⊕ R`, `a_x' ⊕ R`) or `e = δ ⊕ R` with `δ = w_x ⊕ w_x'`
/// (control 1: new shares `a_x' ⊕ e`, `a_x ⊕ e`). The holder sends `v = δ ⊕ G(k0) ⊕ G(k1)`;
/// with `k1` the permuter gets `e = v ⊕ G(k1)`. Over an additive tail ([`Mixed`]) the holder's
/// new shares are `w_x + R` and `w_x' − R`, `δ = w_x' − w_x`, `e = δ − R`, `v = δ − G(k0) −
/// G(k1)`, and the permuter's `a_x − R`, `a_x' + R` (control 0) or `a_x' + e`, `a_x − e`
/// (control 1).
///
/// Why this hides everything: the permuter learns, per switch, `R` or `δ ⊕ R` (`v` is masked by
/// `G(k_(1−c))`); each contains that switch's own fresh `R`, and `δ` depends on the holder's
/// shares and earlier switches' `R` only. In switch order the map from the `R`s to what the
/// permuter sees is triangular with identity diagonal, so for any data and any controls its
/// view is uniform; the holder's view is OT messages. Cost per switch: one correlated OT and
/// `s` bits for `s`-bit entries, half of the layer-by-layer switch's `2s`.
///
/// The keys are a correlated OT's messages, `k0 = q` and `k1 = q ⊕ Δ`, not hashed into a
/// random OT first: `G` is then a tweakable circular correlation-robust hash of the key, a
/// tweak per OT and block ([`expand_cot`]), which hides `G(k_(1−c))` from a permuter who
/// knows `k_c` as a random OT's hash would.
pub(crate) struct BlockNet {
    m: usize,
    /// The switches' positions in the block, `x < y`, in the order they run.
    pairs: Vec<(u32, u32)>,
    eb: usize,
    mix: Mixed,
    kernel: Kernel,
}

/// Switches whose pads are expanded at once: their pads (two per switch at the holder) stay
/// in the first-level cache.
const PAD_CHUNK: usize = 128;

/// Scratch space of [`BlockNet`], kept across blocks so that nothing is allocated per switch.
#[derive(Default)]
pub(crate) struct NetScratch {
    pads: Vec<Block>,
}

/// Switches of the network on `n` entries ([`BlockNet`]): `S(1) = 0`, `S(2) = 1` and
/// `S(n) = 2⌊n/2⌋ + S(⌊n/2⌋) + S(⌈n/2⌉)`.
pub(crate) fn switch_count(n: usize) -> usize {
    // (S(n), S(n + 1)) from (S(a), S(a + 1)), a = ⌊n/2⌋: both halves of n and n + 1 are a or
    // a + 1.
    fn two(n: usize) -> (usize, usize) {
        if n <= 2 {
            let s = [0, 0, 1, 3];
            return (s[n], s[n + 1]);
        }
        let a = n / 2;
        let (sa, sb) = two(a);
        if n.is_multiple_of(2) {
            (2 * a + 2 * sa, 2 * a + sa + sb)
        } else {
            (2 * a + sa + sb, 2 * (a + 1) + 2 * sb)
        }
    }
    two(n).0
}

/// Appends the switches of the network on the positions `pos` ([`BlockNet`]) to `out`.
fn network_pairs(pos: &[u32], out: &mut Vec<(u32, u32)>) {
    let n = pos.len();
    if n < 2 {
        return;
    }
    if n == 2 {
        out.push((pos[0], pos[1]));
        return;
    }
    let outer = pos[..n / 2 * 2].chunks_exact(2).map(|p| (p[0], p[1]));
    out.extend(outer.clone());
    let top: Vec<u32> = pos.iter().step_by(2).take(n / 2).copied().collect();
    let bottom: Vec<u32> = pos
        .iter()
        .skip(1)
        .step_by(2)
        .copied()
        .chain((n % 2 == 1).then(|| pos[n - 1]))
        .collect();
    network_pairs(&top, out);
    network_pairs(&bottom, out);
    out.extend(outer);
}

/// Appends the switches of the network of [`BlockNet::halves`] on positions `lo .. lo + n`.
fn halves_pairs(lo: u32, n: u32, out: &mut Vec<(u32, u32)>) {
    if n < 2 {
        return;
    }
    if n == 2 {
        out.push((lo, lo + 1));
        return;
    }
    let h = n / 2;
    let outer = (lo..lo + h).map(|x| (x, x + h));
    out.extend(outer.clone());
    halves_pairs(lo, h, out);
    halves_pairs(lo + h, n - h, out);
    out.extend(outer);
}

/// A block network has at least one entry and positions that fit in a `u32`.
fn check_block(m: usize) -> Result<(), Gkk12Error> {
    if m == 0 || m > u32::MAX as usize {
        return Err(Gkk12Error::Misuse("a block network that does not fit"));
    }
    Ok(())
}

/// Two distinct entries of `block` (`eb` bytes each), `x < y`, both mutable.
fn two(block: &mut [u8], x: usize, y: usize, eb: usize) -> (&mut [u8], &mut [u8]) {
    let (lo, hi) = block.split_at_mut(y * eb);
    (&mut lo[x * eb..(x + 1) * eb], &mut hi[..eb])
}

impl BlockNet {
    /// Networks on blocks of `m ≥ 1` entries of `eb` bytes, the bytes from `xor` on an
    /// additive tail.
    pub(crate) fn new(m: usize, eb: usize, xor: usize) -> Result<BlockNet, Gkk12Error> {
        check_block(m)?;
        let positions: Vec<u32> = (0..m as u32).collect();
        let mut pairs = Vec::with_capacity(switch_count(m));
        network_pairs(&positions, &mut pairs);
        BlockNet::with_pairs(m, pairs, eb, xor)
    }

    /// The same network with its positions named so that every sub-network is a run of
    /// consecutive positions: on positions `lo .. lo + n`, input and output switches pair
    /// `x` and `x + ⌊n/2⌋`, the top network is the first `⌊n/2⌋` positions and the bottom one
    /// the rest (an odd `n`'s last position bypasses the outer switches, as in
    /// [`BlockNet::new`]). Routed by [`route_halves`]. Each switch layer of a large block then
    /// reads two sequential streams, and a sub-network small enough for a cache is a block of
    /// memory rather than entries spread over the whole block: what a network on millions of
    /// entries needs ([`crate::gather`]).
    pub(crate) fn halves(m: usize, eb: usize, xor: usize) -> Result<BlockNet, Gkk12Error> {
        check_block(m)?;
        let mut pairs = Vec::with_capacity(switch_count(m));
        halves_pairs(0, m as u32, &mut pairs);
        BlockNet::with_pairs(m, pairs, eb, xor)
    }

    /// A network on `m` entries with the switches `pairs`, for entries of `eb` bytes whose
    /// bytes from `xor` on are an additive tail; pads of at most 2^16 blocks, each with its
    /// own tweak ([`tweak`]).
    fn with_pairs(
        m: usize,
        pairs: Vec<(u32, u32)>,
        eb: usize,
        xor: usize,
    ) -> Result<BlockNet, Gkk12Error> {
        if xor > eb || eb - xor > 8 || eb > 16 << 16 {
            return Err(Gkk12Error::Misuse("a block network that does not fit"));
        }
        Ok(BlockNet {
            m,
            pairs,
            eb,
            mix: Mixed { xor },
            kernel: Kernel::for_entry(eb, xor),
        })
    }

    /// Switches per block, in the order [`BlockNet::hold`] and [`BlockNet::permute`] take
    /// their OTs and [`route_any`] gives their settings.
    pub(crate) fn switches(&self) -> usize {
        self.pairs.len()
    }

    /// The network with its switches in the opposite order: with the same settings (in the
    /// opposite order too) it realises the inverse permutation, each switch undoing itself.
    pub(crate) fn reversed(mut self) -> BlockNet {
        self.pairs.reverse();
        self
    }

    /// The same network for entries of `eb` bytes, the bytes from `xor` on an additive tail:
    /// the switches kept, not computed again (a network on millions of entries has a hundred
    /// million).
    pub(crate) fn for_entries(self, eb: usize, xor: usize) -> Result<BlockNet, Gkk12Error> {
        BlockNet::with_pairs(self.m, self.pairs, eb, xor)
    }

    /// The holder's side of one block (`w`, `m` entries): writes the block's corrections to
    /// `out` (`eb` bytes per switch, [`BlockNet::switches`] of them) and re-shares `w`. `q`
    /// are the block's correlated OTs as the sender (one per switch, choice 0's message; choice
    /// 1's is `q ⊕ delta`), the first of them OT number `first`.
    pub(crate) fn hold(
        &self,
        w: &mut [u8],
        cot: (&[Block], Block, u64),
        out: &mut [u8],
        s: &mut NetScratch,
    ) {
        self.hold_part(w, 0..self.pairs.len(), cot, out, s);
    }

    /// [`BlockNet::hold`] on the switches `part` of the block only (those before it done
    /// already): `q`, `first` and `out` are the part's. A network on a large block runs
    /// part by part, each part's OTs and corrections one batch.
    pub(crate) fn hold_part(
        &self,
        w: &mut [u8],
        part: std::ops::Range<usize>,
        (q, delta, first): (&[Block], Block, u64),
        out: &mut [u8],
        s: &mut NetScratch,
    ) {
        let (eb, mix) = (self.eb, self.mix);
        debug_assert_eq!(w.len(), self.m * eb);
        let stride = 16 * eb.div_ceil(16).max(1);
        let chunks = self.pairs[part].chunks(PAD_CHUNK).zip(q.chunks(PAD_CHUNK));
        for (c, ((ps, qs), vs)) in chunks.zip(out.chunks_mut(PAD_CHUNK * eb)).enumerate() {
            let at = first + (c * PAD_CHUNK) as u64;
            expand_cot(qs, Some(delta), at, eb, &mut s.pads);
            let pads: &[u8] = bytemuck::cast_slice(&s.pads);
            let run = HoldRun {
                w,
                eb,
                stride,
                ps,
                pads,
                vs,
            };
            match self.kernel {
                Kernel::Bytes => {
                    run.switches(|v, wx, wy, g0, g1| mix.hold_switch(v, wx, wy, g0, g1))
                }
                Kernel::Wide { chunks, tail } => {
                    let xor = mix.xor;
                    wide!(chunks, tail, |N, T| run.switches(|v, wx, wy, g0, g1| {
                        hold_wide::<N, T>(xor, v, wx, wy, g0, g1)
                    }))
                }
            }
        }
    }

    /// The permuter's side of one block (`a`): `t` the block's correlated OTs as the receiver
    /// (`q ⊕ cΔ` for control c), the first of them OT number `first`, `controls` the switch
    /// settings (from [`route_any`]), `corr` the holder's corrections of the block.
    pub(crate) fn permute(
        &self,
        a: &mut [u8],
        ot: (&[Block], u64),
        controls: &[bool],
        corr: &[u8],
        s: &mut NetScratch,
    ) {
        self.permute_part(a, 0..self.pairs.len(), ot, controls, corr, s);
    }

    /// [`BlockNet::permute`] on the switches `part` of the block only, pairing with
    /// [`BlockNet::hold_part`]: `t`, `first`, `controls` and `corr` are the part's.
    pub(crate) fn permute_part(
        &self,
        a: &mut [u8],
        part: std::ops::Range<usize>,
        (t, first): (&[Block], u64),
        controls: &[bool],
        corr: &[u8],
        s: &mut NetScratch,
    ) {
        let (eb, mix) = (self.eb, self.mix);
        debug_assert_eq!(a.len(), self.m * eb);
        let stride = 16 * eb.div_ceil(16).max(1);
        let chunks = self.pairs[part]
            .chunks(PAD_CHUNK)
            .zip(t.chunks(PAD_CHUNK))
            .zip(controls.chunks(PAD_CHUNK))
            .zip(corr.chunks(PAD_CHUNK * eb));
        for (c, (((ps, ts), cs), vs)) in chunks.enumerate() {
            let at = first + (c * PAD_CHUNK) as u64;
            expand_cot(ts, None, at, eb, &mut s.pads);
            let pads: &[u8] = bytemuck::cast_slice(&s.pads);
            let run = PermuteRun {
                a,
                eb,
                stride,
                ps,
                pads,
                cs,
                vs,
            };
            match self.kernel {
                Kernel::Bytes => {
                    run.switches(|ax, ay, g, v, c| mix.permute_switch(ax, ay, g, v, c))
                }
                Kernel::Wide { chunks, tail } => {
                    let xor = mix.xor;
                    wide!(chunks, tail, |N, T| run.switches(|ax, ay, g, v, c| {
                        permute_wide::<N, T>(xor, ax, ay, g, v, c)
                    }))
                }
            }
        }
    }
}

/// How [`BlockNet`]'s switches treat an entry's bytes: byte by byte ([`Mixed`]), or, for an
/// XOR part of 32 to 128 bytes and an additive tail of at most two, as `chunks` 32-byte
/// vectors (the last one overlapping the one before where the length is not a multiple of
/// 32) and a tail of a fixed length: no loop with a run-time trip count, no byte-by-byte
/// remainder ([`hold_wide`], [`permute_wide`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Bytes,
    Wide { chunks: usize, tail: usize },
}

impl Kernel {
    fn for_entry(eb: usize, xor: usize) -> Kernel {
        if (32..=128).contains(&xor) && eb - xor <= 2 {
            Kernel::Wide {
                chunks: xor.div_ceil(32),
                tail: eb - xor,
            }
        } else {
            Kernel::Bytes
        }
    }
}

/// Runs `$body` with the constants `N` = `$chunks` (1 to 4) and `T` = `$tail` (0 to 2) of a
/// [`Kernel::Wide`].
macro_rules! wide {
    ($chunks:expr, $tail:expr, |$n:ident, $t:ident| $body:expr) => {{
        macro_rules! with {
            ($nv:literal, $tv:literal) => {{
                const $n: usize = $nv;
                const $t: usize = $tv;
                $body
            }};
        }
        match ($chunks, $tail) {
            (1, 0) => with!(1, 0),
            (1, 1) => with!(1, 1),
            (1, _) => with!(1, 2),
            (2, 0) => with!(2, 0),
            (2, 1) => with!(2, 1),
            (2, _) => with!(2, 2),
            (3, 0) => with!(3, 0),
            (3, 1) => with!(3, 1),
            (3, _) => with!(3, 2),
            (_, 0) => with!(4, 0),
            (_, 1) => with!(4, 1),
            (_, _) => with!(4, 2),
        }
    }};
}
use wide;

/// One chunk of a [`Kernel::Wide`] entry.
type Chunk = [u8; 32];

/// Where chunk `i` of an XOR part of `xor ≥ 32` bytes starts: every 32 bytes, the last one
/// ending at `xor`.
#[inline(always)]
fn chunk_at(i: usize, xor: usize) -> usize {
    (32 * i).min(xor - 32)
}

#[inline(always)]
fn load(s: &[u8], at: usize) -> Chunk {
    let mut c = [0u8; 32];
    c.copy_from_slice(&s[at..at + 32]);
    c
}

#[inline(always)]
fn store(d: &mut [u8], at: usize, c: &Chunk) {
    d[at..at + 32].copy_from_slice(c);
}

/// The additive tail (`T` ≤ 2 bytes after `xor`) of `x` as an integer.
#[inline(always)]
fn tail_of<const T: usize>(x: &[u8], xor: usize) -> u16 {
    match T {
        0 => 0,
        1 => u16::from(x[xor]),
        _ => u16::from_le_bytes([x[xor], x[xor + 1]]),
    }
}

#[inline(always)]
fn put_tail_of<const T: usize>(d: &mut [u8], xor: usize, v: u16) {
    let b = v.to_le_bytes();
    d[xor..xor + T].copy_from_slice(&b[..T]);
}

/// [`Mixed::hold_switch`] for a [`Kernel::Wide`] entry (`N` chunks, a `T`-byte tail). The
/// last chunk may overlap the one before: its inputs are read before that one is written,
/// and both write the same values where they overlap.
#[inline(always)]
fn hold_wide<const N: usize, const T: usize>(
    xor: usize,
    v: &mut [u8],
    wx: &mut [u8],
    wy: &mut [u8],
    g0: &[u8],
    g1: &[u8],
) {
    let last = chunk_at(N - 1, xor);
    let (lx, ly) = (load(wx, last), load(wy, last));
    let (ta, tb, tr, ts) = (
        tail_of::<T>(wx, xor),
        tail_of::<T>(wy, xor),
        tail_of::<T>(g0, xor),
        tail_of::<T>(g1, xor),
    );
    for i in 0..N {
        let at = chunk_at(i, xor);
        let (mut x, mut y) = if i + 1 == N {
            (lx, ly)
        } else {
            (load(wx, at), load(wy, at))
        };
        let (r, s) = (load(g0, at), load(g1, at));
        let mut c = [0u8; 32];
        for j in 0..32 {
            c[j] = x[j] ^ y[j] ^ r[j] ^ s[j];
            x[j] ^= r[j];
            y[j] ^= r[j];
        }
        store(v, at, &c);
        store(wx, at, &x);
        store(wy, at, &y);
    }
    if T > 0 {
        let d = tb.wrapping_sub(ta).wrapping_sub(tr).wrapping_sub(ts);
        put_tail_of::<T>(v, xor, d);
        put_tail_of::<T>(wx, xor, ta.wrapping_add(tr));
        put_tail_of::<T>(wy, xor, tb.wrapping_sub(tr));
    }
}

/// [`Mixed::permute_switch`] for a [`Kernel::Wide`] entry, as [`hold_wide`].
#[inline(always)]
fn permute_wide<const N: usize, const T: usize>(
    xor: usize,
    ax: &mut [u8],
    ay: &mut [u8],
    g: &[u8],
    v: &[u8],
    swap: bool,
) {
    let last = chunk_at(N - 1, xor);
    let (lx, ly) = (load(ax, last), load(ay, last));
    let (ta, tb, tr, tv) = (
        tail_of::<T>(ax, xor),
        tail_of::<T>(ay, xor),
        tail_of::<T>(g, xor),
        tail_of::<T>(v, xor),
    );
    let mask = 0u8.wrapping_sub(u8::from(swap));
    for i in 0..N {
        let at = chunk_at(i, xor);
        let (mut x, mut y) = if i + 1 == N {
            (lx, ly)
        } else {
            (load(ax, at), load(ay, at))
        };
        let (r, c) = (load(g, at), load(v, at));
        for j in 0..32 {
            let t = (x[j] ^ y[j] ^ c[j]) & mask;
            x[j] ^= r[j] ^ t;
            y[j] ^= r[j] ^ t;
        }
        store(ax, at, &x);
        store(ay, at, &y);
    }
    if T > 0 {
        let e = tv.wrapping_add(tr);
        let (nx, ny) = if swap {
            (tb.wrapping_add(e), ta.wrapping_sub(e))
        } else {
            (ta.wrapping_sub(tr), tb.wrapping_add(tr))
        };
        put_tail_of::<T>(ax, xor, nx);
        put_tail_of::<T>(ay, xor, ny);
    }
}

/// One pad chunk's switches at the holder: the block, its entry size, the pads' stride, the
/// switches, their pads and their corrections.
struct HoldRun<'a> {
    w: &'a mut [u8],
    eb: usize,
    stride: usize,
    ps: &'a [(u32, u32)],
    pads: &'a [u8],
    vs: &'a mut [u8],
}

impl HoldRun<'_> {
    #[inline(always)]
    fn switches(self, mut f: impl FnMut(&mut [u8], &mut [u8], &mut [u8], &[u8], &[u8])) {
        let (eb, stride) = (self.eb, self.stride);
        let sw = self
            .pads
            .chunks_exact(2 * stride)
            .zip(self.vs.chunks_exact_mut(eb));
        for ((g, v), &(x, y)) in sw.zip(self.ps) {
            let (wx, wy) = two(self.w, x as usize, y as usize, eb);
            f(v, wx, wy, &g[..eb], &g[stride..stride + eb]);
        }
    }
}

/// One pad chunk's switches at the permuter, as [`HoldRun`] with the controls.
struct PermuteRun<'a> {
    a: &'a mut [u8],
    eb: usize,
    stride: usize,
    ps: &'a [(u32, u32)],
    pads: &'a [u8],
    cs: &'a [bool],
    vs: &'a [u8],
}

impl PermuteRun<'_> {
    #[inline(always)]
    fn switches(self, mut f: impl FnMut(&mut [u8], &mut [u8], &[u8], &[u8], bool)) {
        let (eb, stride) = (self.eb, self.stride);
        let sw = self
            .pads
            .chunks_exact(stride)
            .zip(self.cs)
            .zip(self.vs.chunks_exact(eb));
        for (((g, &swap), v), &(x, y)) in sw.zip(self.ps) {
            let (ax, ay) = two(self.a, x as usize, y as usize, eb);
            f(ax, ay, &g[..eb], v, swap);
        }
    }
}

/// The switch settings of [`BlockNet`]'s network on `dest.len()` entries that moves the entry
/// at position x to `dest[x]` (a permutation of `0..n`), appended to `out` in the network's
/// switch order: the looping algorithm ([`BlockNet`]'s docs), with scratch space kept across
/// calls so that routing allocates nothing once it has seen the size. `dest` must be a
/// permutation (not checked here: the caller draws it).
pub(crate) fn route_any(dest: &[usize], out: &mut Vec<bool>, scratch: &mut RouteScratch) {
    route_as::<false>(dest, out, scratch);
}

/// [`route_any`] for the network of [`BlockNet::halves`].
pub(crate) fn route_halves(dest: &[usize], out: &mut Vec<bool>, scratch: &mut RouteScratch) {
    route_as::<true>(dest, out, scratch);
}

/// [`route_any`] (`HALVES` false) or [`route_halves`].
fn route_as<const HALVES: bool>(dest: &[usize], out: &mut Vec<bool>, scratch: &mut RouteScratch) {
    let n = dest.len();
    let depth = usize::BITS as usize - n.leading_zeros() as usize + 1;
    if scratch.levels.len() < depth {
        scratch.levels.resize_with(depth, RouteLevel::default);
    }
    // Positions as u32 (a block has at most 2^32 entries, [`BlockNet::new`]): half the
    // footprint of usize, so that a level's arrays stay in the first-level cache longer.
    scratch.top.clear();
    scratch.top.extend(dest.iter().map(|&d| d as u32));
    out.reserve(switch_count(n));
    route_level_as::<HALVES>(&scratch.top, out, &mut scratch.levels);
}

/// Scratch space of [`route_any`], kept across calls: one level per depth of the recursion.
#[derive(Default)]
pub(crate) struct RouteScratch {
    top: Vec<u32>,
    levels: Vec<RouteLevel>,
}

#[derive(Default)]
struct RouteLevel {
    inv: Vec<u32>,
    /// 0: not yet decided, 1: the top network, 2: the bottom one.
    side: Vec<u8>,
    top: Vec<u32>,
    bottom: Vec<u32>,
    outputs: Vec<bool>,
}

/// [`route_any`] on one network of the recursion, with `levels[0]` its scratch space: for
/// the network whose switches pair positions `2i` and `2i + 1` (`HALVES` false:
/// [`BlockNet::new`]) or `i` and `i + ⌊n/2⌋` (`HALVES` true: [`BlockNet::halves`]); the
/// looping algorithm is the same with the partners and the sub-networks' positions renamed.
fn route_level_as<const HALVES: bool>(d: &[u32], out: &mut Vec<bool>, levels: &mut [RouteLevel]) {
    let n = d.len();
    if n < 2 {
        return;
    }
    if n == 2 {
        out.push(d[0] == 1);
        return;
    }
    let Some((me, deeper)) = levels.split_first_mut() else {
        // `route_any` gives every depth a level.
        return;
    };
    let h = n / 2;
    // The other position of a switch (input or output) and a position's index in its
    // sub-network; with halves the last position of an odd `n` is index h of the bottom.
    let partner = |x: usize| {
        if !HALVES {
            x ^ 1
        } else if x < h {
            x + h
        } else {
            x - h
        }
    };
    let index = |y: u32| {
        if !HALVES {
            y >> 1
        } else if (y as usize) < h {
            y
        } else {
            y - h as u32
        }
    };
    let first = |i: usize| if HALVES { i } else { 2 * i };
    let second = |i: usize| if HALVES { i + h } else { 2 * i + 1 };
    me.inv.resize(n, 0);
    for (x, &y) in (0u32..).zip(d) {
        me.inv[y as usize] = x;
    }
    let inv = &me.inv[..n];
    me.side.clear();
    me.side.resize(n, 0);
    let side = &mut me.side[..];
    let at = |i: u32| i as usize;
    if n % 2 == 1 {
        // The path from the last entry (bottom, no input switch) by output and input
        // partners, to the entry bound for the last output (bottom, no output switch).
        let mut x = n - 1;
        side[x] = 2;
        while at(d[x]) != n - 1 {
            let y = at(inv[partner(at(d[x]))]);
            side[y] = 3 - side[x];
            let z = partner(y);
            side[z] = side[x];
            x = z;
        }
    }
    // The cycles: every other entry has both partners.
    for start in 0..2 * h {
        if side[start] != 0 {
            continue;
        }
        side[start] = 1;
        let mut x = start;
        loop {
            let p = partner(x);
            side[p] = 3 - side[x];
            let q = at(inv[partner(at(d[p]))]);
            if side[q] != 0 {
                break;
            }
            side[q] = side[x];
            x = q;
        }
    }
    // Input switch i swaps when its first entry goes to the bottom network; output switch
    // j when the entry bound for its first position comes from it.
    out.extend((0..h).map(|i| side[first(i)] == 2));
    me.top.clear();
    me.bottom.clear();
    for i in 0..h {
        let (a, b) = (d[first(i)], d[second(i)]);
        let (t, u) = if side[first(i)] == 1 { (a, b) } else { (b, a) };
        me.top.push(index(t));
        me.bottom.push(index(u));
    }
    if n % 2 == 1 {
        me.bottom.push(index(d[n - 1]));
    }
    me.outputs.clear();
    me.outputs
        .extend((0..h).map(|j| side[at(inv[first(j)])] == 2));
    route_level_as::<HALVES>(&me.top, out, deeper);
    route_level_as::<HALVES>(&me.bottom, out, deeper);
    out.extend_from_slice(&me.outputs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn random_permutation(n: usize, rng: &mut ChaCha12Rng) -> Vec<usize> {
        let mut d: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            d.swap(i, rng.random_range(0..=i));
        }
        d
    }

    /// The network on any number of entries, with the settings [`route_any`] gives, moves
    /// every entry to its destination: every size from 1 to 130 and some larger ones, odd and
    /// even; the switch count is [`switch_count`], the Beneš count at powers of two.
    /// The same for the network whose sub-networks are runs of positions
    /// ([`BlockNet::halves`], [`route_halves`]): the same switch count, every sub-network's
    /// switches within its run.
    #[test]
    fn the_halves_router_moves_every_entry_of_any_size_to_its_place() {
        let mut rng = ChaCha12Rng::seed_from_u64(41);
        let mut scratch = RouteScratch::default();
        let sizes = (1..=130).chain([255, 256, 257, 431, 1000, 1024, 2543, 5086, 70001]);
        for n in sizes {
            let net = BlockNet::halves(n, 1, 1).unwrap();
            assert_eq!(net.switches(), switch_count(n), "n = {n}");
            assert!(net.pairs.iter().all(|&(x, y)| x < y && (y as usize) < n));
            for _ in 0..3 {
                let d = random_permutation(n, &mut rng);
                let mut controls = vec![false];
                route_halves(&d, &mut controls, &mut scratch);
                assert_eq!(controls.len(), 1 + net.switches(), "n = {n}");
                let mut v: Vec<usize> = (0..n).collect();
                let switched = net.pairs.iter().zip(&controls[1..]);
                let swap = |v: &mut Vec<usize>, (&(x, y), &c): (&(u32, u32), &bool)| {
                    if c {
                        v.swap(x as usize, y as usize);
                    }
                };
                switched.clone().for_each(|s| swap(&mut v, s));
                let moved = d.iter().enumerate().all(|(x, &to)| v[to] == x);
                assert!(moved, "n = {n}: not every entry at its place");
                // Backwards, the same settings undo it.
                switched.rev().for_each(|s| swap(&mut v, s));
                assert!(v.iter().enumerate().all(|(x, &e)| x == e), "n = {n}");
            }
        }
    }

    #[test]
    fn the_router_moves_every_entry_of_any_size_to_its_place() {
        let mut rng = ChaCha12Rng::seed_from_u64(40);
        let mut scratch = RouteScratch::default();
        let sizes = (1..=130).chain([255, 256, 257, 431, 1000, 1024, 2543, 5086]);
        for n in sizes {
            let net = BlockNet::new(n, 1, 1).unwrap();
            assert_eq!(net.switches(), switch_count(n), "n = {n}");
            if n.is_power_of_two() {
                let k = n.trailing_zeros() as usize;
                assert_eq!(net.switches(), (2 * k).saturating_sub(1) * n / 2, "n = {n}");
            }
            assert!(net.pairs.iter().all(|&(x, y)| x < y && (y as usize) < n));
            for _ in 0..4 {
                let d = random_permutation(n, &mut rng);
                let mut controls = vec![true];
                route_any(&d, &mut controls, &mut scratch);
                assert!(controls[0], "appended after what was there");
                assert_eq!(controls.len(), 1 + net.switches(), "n = {n}");
                let mut v: Vec<usize> = (0..n).collect();
                for (&(x, y), &c) in net.pairs.iter().zip(&controls[1..]) {
                    if c {
                        v.swap(x as usize, y as usize);
                    }
                }
                for (x, &to) in d.iter().enumerate() {
                    assert_eq!(v[to], x, "n = {n}: entry {x}");
                }
            }
        }
    }

    /// The pads of [`expand_cot`] depend on the OT's index and the block, not only on the key:
    /// the same key at two indices, or at two blocks of one index, gives unrelated blocks, and
    /// the holder's pair at one index is the receiver's pad of either choice.
    #[test]
    fn cot_pads_are_tweaked_per_ot_and_block() {
        let mut rng = ChaCha12Rng::seed_from_u64(42);
        let (k, delta) = (rng.random::<u128>(), rng.random::<u128>());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        expand_cot(&[k, k], None, 7, 40, &mut a);
        assert_eq!(a.len(), 6);
        assert_ne!(a[..3], a[3..], "OT 7 and OT 8");
        assert!(a[0] != a[1] && a[1] != a[2], "blocks of one pad");
        expand_cot(&[k], Some(delta), 7, 40, &mut b);
        assert_eq!(b[..3], a[..3], "choice 0 at OT 7");
        let mut c = Vec::new();
        expand_cot(&[k ^ delta], None, 7, 40, &mut c);
        assert_eq!(b[3..], c[..], "choice 1 at OT 7");
    }

    /// [`expand_cot`] gives, for every pad length (the lengths with a fixed block count and
    /// the longer ones alike), block `i` of key `n`'s pads as `CCR(x ⊕ T(first + n, i))` for
    /// `x` the key and, with Δ, the key ⊕ Δ, in that order.
    #[test]
    fn cot_pads_are_the_tweaked_hashes_at_every_length() {
        let mut rng = ChaCha12Rng::seed_from_u64(43);
        let keys: Vec<Block> = (0..5).map(|_| rng.random()).collect();
        let (delta, first) = (rng.random::<u128>(), 1000);
        let mut out = vec![7; 3];
        for len in [1usize, 9, 16, 17, 40, 72, 80, 128, 129, 200] {
            let blocks = len.div_ceil(16);
            for d in [None, Some(delta)] {
                expand_cot(&keys, d, first, len, &mut out);
                let mut want = Vec::new();
                for (n, &k) in keys.iter().enumerate() {
                    for x in [Some(k), d.map(|d| k ^ d)].into_iter().flatten() {
                        let o = first + n as u64;
                        want.extend((0..blocks).map(|i| fixed_key().ccr(x ^ tweak(o, i))));
                    }
                }
                assert_eq!(out, want, "len {len}, Δ {}", d.is_some());
            }
        }
    }

    /// The wide kernels ([`Kernel::Wide`]) write exactly what the byte-by-byte ones do, for
    /// XOR parts that are and are not multiples of 32 bytes, every pair of chunk count and
    /// tail length, at both parties.
    #[test]
    fn wide_switches_match_the_byte_switches() {
        let mut rng = ChaCha12Rng::seed_from_u64(44);
        let mut scratch = RouteScratch::default();
        let shapes = [
            (64usize, 72usize, 70usize),
            (33, 71, 70),
            (17, 32, 32),
            (20, 34, 32),
            (9, 35, 33),
            (40, 130, 128),
            (9, 100, 99),
            (50, 45, 45),
            (12, 64, 63),
            (7, 97, 96),
            (11, 33, 32),
            (10, 96, 96),
            (6, 128, 128),
        ];
        for (m, eb, xor) in shapes {
            let wide = BlockNet::new(m, eb, xor).unwrap();
            assert!(matches!(wide.kernel, Kernel::Wide { .. }), "{eb}, {xor}");
            let mut bytes = BlockNet::new(m, eb, xor).unwrap();
            bytes.kernel = Kernel::Bytes;
            let w: Vec<u8> = (0..m * eb).map(|_| rng.random()).collect();
            let a: Vec<u8> = (0..m * eb).map(|_| rng.random()).collect();
            let d = random_permutation(m, &mut rng);
            let mut controls = Vec::new();
            route_any(&d, &mut controls, &mut scratch);
            let delta = rng.random::<u128>();
            let q: Vec<Block> = (0..wide.switches()).map(|_| rng.random()).collect();
            let t: Vec<Block> = q
                .iter()
                .zip(&controls)
                .map(|(&q, &c)| if c { q ^ delta } else { q })
                .collect();
            let mut s = NetScratch::default();
            let mut out = Vec::new();
            for net in [&wide, &bytes] {
                let (mut w2, mut a2) = (w.clone(), a.clone());
                let mut corr = vec![0; net.switches() * eb];
                net.hold(&mut w2, (&q, delta, 5), &mut corr, &mut s);
                net.permute(&mut a2, (&t, 5), &controls, &corr, &mut s);
                out.push((w2, a2, corr));
            }
            assert!(out[0] == out[1], "m {m}, eb {eb}, xor {xor}");
        }
        assert_eq!(BlockNet::new(4, 33, 31).unwrap().kernel, Kernel::Bytes);
        assert_eq!(BlockNet::new(4, 132, 129).unwrap().kernel, Kernel::Bytes);
        assert_eq!(BlockNet::new(4, 40, 37).unwrap().kernel, Kernel::Bytes);
    }

    /// Entries whose pads would need more blocks than a tweak numbers (2^16, 1 MiB) are
    /// refused, as are empty blocks and additive tails beyond eight bytes; the largest entry
    /// is taken.
    #[test]
    fn a_block_network_refuses_what_its_pads_cannot_number() {
        assert!(BlockNet::new(2, 16 << 16, 16 << 16).is_ok());
        assert!(matches!(
            BlockNet::new(2, (16 << 16) + 1, 16 << 16),
            Err(Gkk12Error::Misuse(_))
        ));
        assert!(matches!(BlockNet::new(0, 8, 8), Err(Gkk12Error::Misuse(_))));
        assert!(matches!(
            BlockNet::new(2, 18, 9),
            Err(Gkk12Error::Misuse(_))
        ));
    }

    /// Blocks through [`BlockNet`] with OTs dealt in the clear: the sum of the two parties'
    /// shares is every block permuted by its own permutation, the XOR part bit for bit and
    /// the tail modulo 2^(8·t).
    #[test]
    fn a_block_network_permutes_the_shared_entries() {
        let mut rng = ChaCha12Rng::seed_from_u64(41);
        let mut scratch = RouteScratch::default();
        for (m, eb, xor) in [
            (2usize, 5usize, 5usize),
            (8, 9, 8),
            (16, 18, 16),
            (64, 71, 70),
            (1, 9, 8),
            (3, 9, 8),
            (131, 71, 70),
        ] {
            let blocks = 3;
            let net = BlockNet::new(m, eb, xor).unwrap();
            let total = blocks * m * eb;
            let w: Vec<u8> = (0..total).map(|_| rng.random()).collect();
            let a: Vec<u8> = (0..total).map(|_| rng.random()).collect();
            let (mut w2, mut a2) = (w.clone(), a.clone());
            let mut corr = Vec::new();
            let mut s = NetScratch::default();
            let mut dests = Vec::new();
            for k in 0..blocks {
                let d = random_permutation(m, &mut rng);
                let mut controls = Vec::new();
                route_any(&d, &mut controls, &mut scratch);
                // Correlated OTs in the clear: the sender's q and Δ, the receiver's q ⊕ cΔ.
                let (delta, first) = (rng.random::<u128>(), rng.random::<u64>() >> 1);
                let q: Vec<Block> = (0..net.switches()).map(|_| rng.random()).collect();
                let t: Vec<Block> = q
                    .iter()
                    .zip(&controls)
                    .map(|(&q, &c)| if c { q ^ delta } else { q })
                    .collect();
                corr.clear();
                corr.resize(net.switches() * eb, 0);
                let at = k * m * eb..(k + 1) * m * eb;
                net.hold(&mut w2[at.clone()], (&q, delta, first), &mut corr, &mut s);
                net.permute(&mut a2[at], (&t, first), &controls, &corr, &mut s);
                dests.push(d);
            }
            let tail = |x: &[u8]| Mixed::tail(&x[xor..]);
            let mask = if eb - xor == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * (eb - xor))) - 1
            };
            for (k, d) in dests.iter().enumerate() {
                for (x, &to) in d.iter().enumerate() {
                    let src = (k * m + x) * eb..(k * m + x + 1) * eb;
                    let dst = (k * m + to) * eb..(k * m + to + 1) * eb;
                    let (vw, va) = (&w[src.clone()], &a[src]);
                    let (ow, oa) = (&w2[dst.clone()], &a2[dst]);
                    for j in 0..xor {
                        assert_eq!(ow[j] ^ oa[j], vw[j] ^ va[j], "m {m}: byte {j}");
                    }
                    let want = tail(vw).wrapping_add(tail(va)) & mask;
                    assert_eq!(tail(ow).wrapping_add(tail(oa)) & mask, want, "m {m}: tail");
                }
            }
            // Every entry's shares are re-randomised (a block of one has no switch).
            if m > 1 {
                assert_ne!(w, w2);
                assert_ne!(a, a2);
            }
        }
    }
}
