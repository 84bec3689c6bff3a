//! Known-answer and reference tests of the hashes and the bit-matrix transpose.
#![allow(clippy::unwrap_used)]

mod common;

use aes::Aes128;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};
use doram_prim::aes::{BATCH, Block, FIXED_KEY, fixed_key};
use doram_twopc::hash::{gc_hash, gc_hash8, orthomorphism, ot_hash, ot_hash_in_place};
use doram_twopc::transpose::{
    column_stride, transpose_columns, transpose_columns_into, transpose_strided_into, transpose128,
    transpose128_naive, transpose128_portable,
};
use rand::Rng;

/// π from the `aes` crate directly: an implementation independent of doram-prim's.
fn reference_pi(x: Block) -> Block {
    let c = Aes128::new(&GenericArray::from(FIXED_KEY));
    let mut b = GenericArray::from(x.to_le_bytes());
    c.encrypt_block(&mut b);
    Block::from_le_bytes(b.into())
}

#[test]
fn orthomorphism_known_answers() {
    // σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi on 64-bit halves.
    let x: Block = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
    assert_eq!(orthomorphism(x), 0xffff_ffff_ffff_ffff_0123_4567_89ab_cdef);
    assert_eq!(orthomorphism(1), 0x0000_0000_0000_0001_0000_0000_0000_0000);
    assert_eq!(
        orthomorphism(1 << 64),
        0x0000_0000_0000_0001_0000_0000_0000_0001
    );
    // Linear: σ(a ⊕ b) = σ(a) ⊕ σ(b).
    let mut rng = common::test_rng("orthomorphism");
    for _ in 0..100 {
        let (a, b): (Block, Block) = (rng.random(), rng.random());
        assert_eq!(orthomorphism(a ^ b), orthomorphism(a) ^ orthomorphism(b));
    }
}

#[test]
fn hashes_match_their_definitions_on_the_reference_cipher() {
    let aes = fixed_key();
    let mut rng = common::test_rng("hashes");
    for _ in 0..50 {
        let (x, i): (Block, u64) = (rng.random(), rng.random());
        let s = orthomorphism(x);
        assert_eq!(
            gc_hash(aes, Block::from(i), x),
            reference_pi(s ^ Block::from(i)) ^ s
        );
        let p = reference_pi(x);
        assert_eq!(ot_hash(aes, i, x), reference_pi(p ^ Block::from(i)) ^ p);
    }
}

#[test]
fn hashes_pinned_values() {
    // Values computed once with the definitions above; they catch any change of byte order,
    // key or construction.
    let aes = fixed_key();
    let x: Block = 0x0011_2233_4455_6677_8899_aabb_ccdd_eeff;
    let got = (
        gc_hash(aes, 0, x),
        gc_hash(aes, 7, x),
        ot_hash(aes, 0, x),
        ot_hash(aes, 7, x),
    );
    let s = orthomorphism(x);
    let p = reference_pi(x);
    let want = (
        reference_pi(s) ^ s,
        reference_pi(s ^ 7) ^ s,
        reference_pi(p) ^ p,
        reference_pi(p ^ 7) ^ p,
    );
    assert_eq!(got, want);
    assert_eq!(got.0, PINNED[0]);
    assert_eq!(got.1, PINNED[1]);
    assert_eq!(got.2, PINNED[2]);
    assert_eq!(got.3, PINNED[3]);
}

const PINNED: [Block; 4] = [
    0xec84258b0d84b10c52e2e0a953c94db2,
    0x2421c32d4b39dcee828513f156bd8792,
    0x7f5130f711958d19f64a67d66220730b,
    0xa9efd47a463314949c703f6b2835bec2,
];

#[test]
fn batch_hashes_match_single() {
    let aes = fixed_key();
    let mut rng = common::test_rng("batch hashes");
    let xs: [Block; BATCH] = std::array::from_fn(|_| rng.random());
    let tw: [Block; BATCH] = std::array::from_fn(|_| rng.random());
    let mut ys = xs;
    gc_hash8(aes, &tw, &mut ys);
    for k in 0..BATCH {
        assert_eq!(ys[k], gc_hash(aes, tw[k], xs[k]));
    }
    for n in [0, 1, 7, 8, 9, 100] {
        let xs: Vec<Block> = (0..n).map(|_| rng.random()).collect();
        let mut ys = xs.clone();
        ot_hash_in_place(aes, 1000, &mut ys);
        for (k, (x, y)) in xs.iter().zip(&ys).enumerate() {
            assert_eq!(*y, ot_hash(aes, 1000 + k as u64, *x));
        }
    }
}

#[test]
fn transpose_matches_naive_on_random_matrices() {
    let mut rng = common::test_rng("transpose");
    for _ in 0..20 {
        let m: [Block; 128] = std::array::from_fn(|_| rng.random());
        let mut t = m;
        transpose128(&mut t);
        assert_eq!(t, transpose128_naive(&m));
        transpose128(&mut t);
        assert_eq!(t, m);
    }
    // The identity and a single bit.
    let mut id: [Block; 128] = std::array::from_fn(|i| 1 << i);
    transpose128(&mut id);
    assert_eq!(id, std::array::from_fn(|i| 1 << i));
    let mut one = [0 as Block; 128];
    one[3] = 1 << 100;
    transpose128(&mut one);
    let mut want = [0 as Block; 128];
    want[100] = 1 << 3;
    assert_eq!(one, want);
}

/// The portable transpose on its own (where the CPU has AVX-512 and GFNI, `transpose128`
/// takes the other one).
#[test]
fn portable_transpose_matches_naive() {
    let mut rng = common::test_rng("transpose portable");
    for _ in 0..20 {
        let m: [Block; 128] = std::array::from_fn(|_| rng.random());
        let mut t = m;
        transpose128_portable(&mut t);
        assert_eq!(t, transpose128_naive(&m));
    }
}

#[test]
fn column_transpose_matches_naive() {
    let mut rng = common::test_rng("transpose columns");
    for blocks in [1, 3] {
        let cols: Vec<Block> = (0..128 * blocks).map(|_| rng.random()).collect();
        let rows = transpose_columns(&cols, blocks);
        for (i, row) in rows.iter().enumerate() {
            for j in 0..128 {
                let col_bit = (cols[j * blocks + i / 128] >> (i % 128)) & 1;
                assert_eq!((row >> j) & 1, col_bit, "entry ({i}, {j})");
            }
        }
    }
}

#[test]
fn transpose_columns_into_appends_the_first_rows() {
    let mut rng = common::test_rng("transpose columns into");
    for blocks in [1, 3] {
        let cols: Vec<Block> = (0..128 * blocks).map(|_| rng.random()).collect();
        let all = transpose_columns(&cols, blocks);
        for keep in [0, 1, 127, 128, 129, 200, 128 * blocks, 128 * blocks + 5] {
            let mut rows = vec![7 as Block; 3];
            transpose_columns_into(&cols, blocks, keep, &mut rows);
            let kept = keep.min(128 * blocks);
            assert_eq!(rows.len(), 3 + kept, "keep {keep}");
            assert_eq!(rows[..3], [7; 3], "keep {keep}: earlier rows untouched");
            assert_eq!(rows[3..], all[..kept], "keep {keep}");
        }
    }
}

#[test]
fn columns_apart_transpose_as_columns_side_by_side() {
    let mut rng = common::test_rng("transpose strided");
    for blocks in [1, 2, 5] {
        let cols: Vec<Block> = (0..128 * blocks).map(|_| rng.random()).collect();
        let all = transpose_columns(&cols, blocks);
        for stride in [blocks, column_stride(blocks), blocks + 3] {
            // Column c at c·stride, the gaps filled with values that must not show.
            let mut apart = vec![0xdead_beef as Block; 127 * stride + blocks];
            for (c, col) in cols.chunks_exact(blocks).enumerate() {
                apart[c * stride..c * stride + blocks].copy_from_slice(col);
            }
            for keep in [0, 1, 128, 129, 128 * blocks] {
                let mut rows = vec![9 as Block];
                transpose_strided_into(&apart, stride, blocks, keep, &mut rows);
                assert_eq!(rows[0], 9, "blocks {blocks}, stride {stride}, keep {keep}");
                let kept = keep.min(128 * blocks);
                assert_eq!(
                    rows[1..],
                    all[..kept],
                    "blocks {blocks}, stride {stride}, keep {keep}"
                );
            }
        }
    }
}

#[test]
fn ot_hash_pairs_match_single_hashes() {
    let aes = doram_prim::aes::fixed_key();
    let delta: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
    for n in [0usize, 1, 7, 8, 9, 29] {
        let q: Vec<u128> = (0..n as u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let pairs = doram_twopc::hash::ot_hash_pairs(aes, 1000, delta, &q);
        assert_eq!(pairs.len(), n);
        for (i, (p, &x)) in pairs.iter().zip(&q).enumerate() {
            let t = 1000 + i as u64;
            assert_eq!(p[0], doram_twopc::hash::ot_hash(aes, t, x));
            assert_eq!(p[1], doram_twopc::hash::ot_hash(aes, t, x ^ delta));
        }
    }
}
