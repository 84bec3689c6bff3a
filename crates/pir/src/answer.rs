//! The online inner product (PIR-GOD Algorithm 2, step 15; §4.3 for several chunks):
//! ⟨z⟩^j_b = Σ_x ⟨z^x⟩_b · D_j[(x + Δ) mod N] and likewise ⟨y⟩^j_b.
//!
//! The loop is one 64×64→128 multiplication and one 128-bit addition per term and share,
//! with a carry counter instead of a reduction ([`Fp64Acc`]); each block of rows reduces once.
//! The rotation is handled by splitting each block into at most two contiguous runs of rows.

use doram_field::{Fp64, Fp64Acc};
use rayon::prelude::*;

use crate::db::Database;

/// Rows per parallel task.
const BLOCK: usize = 1 << 13;
/// Rows per column pass when a record has several chunks.
const ROWS: usize = 32;

/// Adds `Σ zy[2x]·rows[x·m + j]` (and the y half) into `acc[2j]`, `acc[2j + 1]`.
#[inline]
fn kernel(zy: &[u64], rows: &[u64], m: usize, acc: &mut [Fp64Acc]) {
    if m == 1 {
        let (mut a, mut b) = (acc[0], acc[1]);
        for (s, &d) in zy.chunks_exact(2).zip(rows) {
            a.add_mul(s[0], d);
            b.add_mul(s[1], d);
        }
        acc[0] = a;
        acc[1] = b;
    } else {
        // Several chunks: column by column over a few rows at a time, so that the two
        // accumulators stay in registers and the rows stay in L1/L2.
        // Each block is first copied in one sequential read (which the hardware prefetcher
        // streams from memory) and then read column-wise from the cache.
        let count = zy.len() / 2;
        let mut buf = vec![0u64; ROWS * m];
        for r0 in (0..count).step_by(ROWS) {
            let r1 = (r0 + ROWS).min(count);
            let shares = &zy[2 * r0..2 * r1];
            let block = &mut buf[..(r1 - r0) * m];
            block.copy_from_slice(&rows[r0 * m..r1 * m]);
            let block = &*block;
            for (j, pair) in acc.chunks_exact_mut(2).enumerate() {
                let (mut a, mut b) = (Fp64Acc::new(), Fp64Acc::new());
                for (s, &d) in shares.chunks_exact(2).zip(block[j..].iter().step_by(m)) {
                    a.add_mul(s[0], d);
                    b.add_mul(s[1], d);
                }
                pair[0].merge(a);
                pair[1].merge(b);
            }
        }
    }
}

/// S_b's answer for shift `delta`: `[z_0, y_0, z_1, y_1, …]` over all chunks (words, then
/// mask chunks). `shares` are S_b's interleaved full-domain shares (length 2·2^n).
///
/// # Panics
/// If `shares` does not match the database's domain (a caller bug, not peer input).
pub fn answer(db: &Database, shares: &[u64], delta: u64) -> Vec<Fp64> {
    let info = db.info();
    let n_rows = 1usize << info.domain_bits;
    assert_eq!(shares.len(), 2 * n_rows, "shares do not match the domain");
    let m = info.words();
    let rows = db.rows();
    let delta = (delta as usize) & (n_rows - 1);
    let block = |x0: usize, acc: &mut [Fp64Acc]| {
        let x1 = (x0 + BLOCK).min(n_rows);
        let start = (x0 + delta) & (n_rows - 1);
        let len = x1 - x0;
        let first = len.min(n_rows - start);
        kernel(
            &shares[2 * x0..2 * (x0 + first)],
            &rows[start * m..(start + first) * m],
            m,
            acc,
        );
        if first < len {
            kernel(
                &shares[2 * (x0 + first)..2 * x1],
                &rows[..(len - first) * m],
                m,
                acc,
            );
        }
    };
    let starts: Vec<usize> = (0..n_rows).step_by(BLOCK).collect();
    let acc = if starts.len() > 1 {
        starts
            .par_iter()
            .fold(
                || vec![Fp64Acc::new(); 2 * m],
                |mut acc, &x0| {
                    block(x0, &mut acc);
                    acc
                },
            )
            .reduce(
                || vec![Fp64Acc::new(); 2 * m],
                |mut a, b| {
                    for (u, v) in a.iter_mut().zip(b) {
                        u.merge(v);
                    }
                    a
                },
            )
    } else {
        let mut acc = vec![Fp64Acc::new(); 2 * m];
        block(0, &mut acc);
        acc
    };
    let mut out: Vec<Fp64> = acc.into_iter().map(Fp64Acc::finish).collect();
    // Mask chunks: the sparse overflow rows, at x = (row − Δ) mod N.
    let mc = db.mask_chunks();
    if mc > 0 {
        let mut macc = vec![Fp64Acc::new(); 2 * mc];
        let (over_rows, masks) = db.overflow();
        for (k, &row) in over_rows.iter().enumerate() {
            let x = (row as usize + n_rows - delta) & (n_rows - 1);
            for (c, pair) in macc.chunks_exact_mut(2).enumerate() {
                let mask = masks[k * mc + c];
                pair[0].add_mul(shares[2 * x], mask);
                pair[1].add_mul(shares[2 * x + 1], mask);
            }
        }
        out.extend(macc.into_iter().map(Fp64Acc::finish));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::reconstruct_record;
    use crate::dpf::{Holder, generate, regenerate};
    use rand::{RngCore, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn query(db: &Database, i: u64, rng: &mut ChaCha20Rng) -> Vec<u8> {
        let info = db.info();
        let n = info.domain_bits;
        let g = generate(n, rng);
        let e = Holder::BOTH.map(|h| regenerate(h, g.views[h.index()].partial()));
        let mask = (1u64 << n) - 1;
        let delta = i.wrapping_sub(u64::from(g.r)) & mask;
        let a0 = answer(db, &e[0].shares, delta);
        let a1 = answer(db, &e[1].shares, delta);
        let zy: Vec<Fp64> = a0.iter().zip(&a1).map(|(u, v)| *u + *v).collect();
        let z: Vec<Fp64> = zy.chunks_exact(2).map(|c| c[0]).collect();
        for c in zy.chunks_exact(2) {
            assert_eq!(g.alpha * c[0], c[1], "MAC holds for every chunk");
        }
        reconstruct_record(&info, &z).expect("valid encoding")
    }

    #[test]
    fn every_index_small_domains() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        for count in [1u64, 2, 3, 5, 8, 13] {
            let values: Vec<u64> = (0..count).map(|_| rng.next_u64()).collect();
            let db = Database::from_u64s(&values).expect("db");
            for i in 0..count {
                assert_eq!(query(&db, i, &mut rng), values[i as usize].to_le_bytes());
            }
        }
    }

    #[test]
    fn chunks_at_and_above_p_and_large_records() {
        let p = Fp64::MODULUS;
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        // Words ≥ p in several positions, including beyond the first mask chunk (m > 63).
        let record_size = 8 * 70 + 3;
        let count = 9;
        let mut bytes = vec![0u8; record_size * count];
        rng.fill_bytes(&mut bytes);
        for (r, w, v) in [(0, 0, p), (1, 5, u64::MAX), (3, 64, p + 7), (8, 69, p + 58)] {
            let off = r * record_size + 8 * w;
            bytes[off..off + 8].copy_from_slice(&v.to_le_bytes());
        }
        let db = Database::from_bytes(record_size, &bytes).expect("db");
        assert_eq!(db.info().mask_chunks, 2);
        for i in 0..count {
            assert_eq!(
                query(&db, i as u64, &mut rng),
                bytes[i * record_size..(i + 1) * record_size]
            );
        }
    }

    #[test]
    fn parallel_blocks_and_wraparound() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let count = (1u64 << 15) - 3;
        let values: Vec<u64> = (0..count).map(|_| rng.next_u64()).collect();
        let db = Database::from_u64s(&values).expect("db");
        for i in [0, 1, count / 2, count - 1] {
            assert_eq!(query(&db, i, &mut rng), values[i as usize].to_le_bytes());
        }
    }
}
