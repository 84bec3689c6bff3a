//! Bit-matrix transposition for OT extension.
//!
//! A 128×128 bit matrix is 128 rows of one [`Block`] each, bit `c` of row `r` (bit 0 = least
//! significant) being entry `(r, c)`. [`transpose128`] transposes it in place with the
//! recursive block swap: at step `j = 64, 32, …, 1` every pair of rows `(k, k + j)` with
//! `k & j = 0` exchanges the `j × j` sub-blocks above and below the diagonal, with one shift,
//! two XORs and a mask per row pair — 7 · 64 row operations in all, no per-bit loop.
//!
//! IKNP (IKNP03 §3) needs the transpose of a 128 × m matrix given by its 128 columns; with the
//! columns cut into 128-bit blocks, [`transpose_columns`] transposes block by block.

use doram_prim::aes::Block;

/// Transposes the 128×128 bit matrix `rows` in place.
pub fn transpose128(rows: &mut [Block; 128]) {
    let mut j = 64usize;
    // The low `j` bits of every 2j-bit group.
    let mut mask: Block = Block::from(u64::MAX);
    while j != 0 {
        let mut k = 0;
        while k < 128 {
            for r in k..k + j {
                // Bits (r, c + j) and (r + j, c) for the c with c mod 2j < j trade places.
                let t = ((rows[r] >> j) ^ rows[r + j]) & mask;
                rows[r + j] ^= t;
                rows[r] ^= t << j;
            }
            k += 2 * j;
        }
        j >>= 1;
        mask ^= mask << j;
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
    debug_assert_eq!(cols.len(), 128 * blocks);
    let mut rows = vec![0 as Block; 128 * blocks];
    let mut tile = [0 as Block; 128];
    for (b, out) in rows.chunks_exact_mut(128).enumerate() {
        for (c, t) in tile.iter_mut().enumerate() {
            *t = cols[c * blocks + b];
        }
        transpose128(&mut tile);
        out.copy_from_slice(&tile);
    }
    rows
}
