//! Bit-matrix transposition for OT extension.
//!
//! A 128×128 bit matrix is 128 rows of one [`Block`] each, bit `c` of row `r` (bit 0 = least
//! significant) being entry `(r, c)`. [`transpose128`] transposes it in place with the
//! recursive block swap: at step `j = 64, 32, …, 1` every pair of rows `(k, k + j)` with
//! `k & j = 0` exchanges the `j × j` sub-blocks above and below the diagonal, with one shift,
//! two XORs and a mask per row pair — 7 · 64 row operations in all, no per-bit loop.
//!
//! On a CPU with AVX-512 (VBMI) and GFNI the same transpose takes about a third of the
//! instructions ([`doram_arch::Gfni512`]: a byte shuffle gathers each 8 × 8 bit block into a
//! qword, one affine instruction per eight blocks transposes them, and qword and byte
//! shuffles put them in place); the functions here pick it when the CPU has it.
//!
//! IKNP (IKNP03 §3) needs the transpose of a 128 × m matrix given by its 128 columns; with the
//! columns cut into 128-bit blocks, [`transpose_columns`] transposes block by block.

use doram_prim::aes::Block;

/// The AVX-512 and GFNI transpose, if this CPU has it.
fn fast() -> Option<impl Fn(&[Block; 128], &mut [Block; 128])> {
    #[cfg(target_arch = "x86_64")]
    {
        doram_arch::Gfni512::detect()
            .map(|g| move |m: &[Block; 128], t: &mut [Block; 128]| g.transpose128(m, t))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None::<fn(&[Block; 128], &mut [Block; 128])>
    }
}

/// Transposes the 128×128 bit matrix `rows` in place: [`transpose128_portable`], or the same
/// with AVX-512 and GFNI where the CPU has them.
pub fn transpose128(rows: &mut [Block; 128]) {
    match fast() {
        Some(f) => {
            let m = *rows;
            f(&m, rows);
        }
        None => transpose128_portable(rows),
    }
}

/// [`transpose128`] without vector instructions beyond the build's baseline.
///
/// The step `j = 64` trades the high half of row `r` with the low half of row `r + 64`; the
/// steps `j ≤ 32` never move a bit across the middle of a row (a `2j`-bit group lies in one
/// half), so they run on the two 64-bit halves apart, which compiles to plain 64-bit shifts
/// rather than 128-bit ones.
pub fn transpose128_portable(rows: &mut [Block; 128]) {
    let mut lo = [0u64; 128];
    let mut hi = [0u64; 128];
    for ((l, h), &r) in lo.iter_mut().zip(hi.iter_mut()).zip(rows.iter()) {
        *l = r as u64;
        *h = (r >> 64) as u64;
    }
    // j = 64: bits (r, c + 64) and (r + 64, c) trade places.
    for r in 0..64 {
        let t = hi[r] ^ lo[r + 64];
        lo[r + 64] ^= t;
        hi[r] ^= t;
    }
    let mut j = 32usize;
    // The low `j` bits of every 2j-bit group of a half.
    let mut mask: u64 = u64::from(u32::MAX);
    while j != 0 {
        let mut k = 0;
        while k < 128 {
            for half in [&mut lo, &mut hi] {
                let (a, b) = half[k..k + 2 * j].split_at_mut(j);
                for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                    // Bits (r, c + j) and (r + j, c) for the c with c mod 2j < j.
                    let t = ((*x >> j) ^ *y) & mask;
                    *y ^= t;
                    *x ^= t << j;
                }
            }
            k += 2 * j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
    for ((r, &l), &h) in rows.iter_mut().zip(&lo).zip(&hi) {
        *r = Block::from(l) | (Block::from(h) << 64);
    }
}

/// The naive transpose, entry by entry: the reference the tests check [`transpose128`] against.
pub fn transpose128_naive(rows: &[Block; 128]) -> [Block; 128] {
    let mut out = [0 as Block; 128];
    for (r, row) in rows.iter().enumerate() {
        for (c, o) in out.iter_mut().enumerate() {
            *o |= ((row >> c) & 1) << r;
        }
    }
    out
}

/// Given the 128 columns of a 128 × `blocks·128` bit matrix (column `c` is
/// `cols[c·blocks .. (c+1)·blocks]`, bit `i` of block `b` being row `128b + i`), returns its
/// `blocks·128` rows, one [`Block`] each (bit `c` of row `i` is entry `(i, c)`).
pub fn transpose_columns(cols: &[Block], blocks: usize) -> Vec<Block> {
    let mut rows = Vec::with_capacity(128 * blocks);
    transpose_columns_into(cols, blocks, 128 * blocks, &mut rows);
    rows
}

/// Appends the first `keep` rows of [`transpose_columns`]`(cols, blocks)` to `rows` (all of
/// them if `keep` is larger), so that a caller collecting many matrices' rows copies none.
pub fn transpose_columns_into(cols: &[Block], blocks: usize, keep: usize, rows: &mut Vec<Block>) {
    debug_assert_eq!(cols.len(), 128 * blocks);
    transpose_strided_into(cols, blocks, blocks, keep, rows);
}

/// The distance between consecutive columns, in blocks, at which OT extension lays out its
/// 128 columns of `blocks` blocks each: one block more than a column. A transpose reads one
/// block of every column at a time; at a distance of a power of two (2^16 OTs make columns
/// of 8 KiB) those 128 reads fall into the same few cache sets and evict each other before
/// the next three blocks of each line are read. One block of padding spreads them: 185
/// against 272 ns per 128 × 128 tile for columns of 512 blocks, 243 against 382 for 2048
/// (Intel Xeon with GFNI, the fastest of 200 passes over the same matrix).
pub fn column_stride(blocks: usize) -> usize {
    blocks + 1
}

/// [`transpose_columns_into`] for columns `stride ≥ blocks` blocks apart: column `c` is
/// `cols[c·stride .. c·stride + blocks]` (see [`column_stride`]).
pub fn transpose_strided_into(
    cols: &[Block],
    stride: usize,
    blocks: usize,
    keep: usize,
    rows: &mut Vec<Block>,
) {
    debug_assert!(stride >= blocks && cols.len() >= 127 * stride + blocks);
    let keep = keep.min(128 * blocks);
    // Filled tile by tile rather than zeroed first: zeroing the rows took about a quarter of
    // this function's instructions (callgrind, a two-party load's OT extensions).
    rows.reserve(keep);
    let mut tile = [0 as Block; 128];
    let mut done = [0 as Block; 128];
    let fast = fast();
    for b in 0..keep.div_ceil(128) {
        let want = (keep - 128 * b).min(128);
        for (c, t) in tile.iter_mut().enumerate() {
            *t = cols[c * stride + b];
        }
        match &fast {
            Some(f) => {
                f(&tile, &mut done);
                rows.extend_from_slice(&done[..want]);
            }
            None => {
                transpose128_portable(&mut tile);
                rows.extend_from_slice(&tile[..want]);
            }
        }
    }
}
