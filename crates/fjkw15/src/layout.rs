//! The bit layout of a tuple T_i = (fb, N_i, L_i, A_i) as the three-party protocols carry it
//! (FJKW15 §2, "Notation"): |T_i| = 1 + iτ + d_i + |A_i| bits, in this order from bit 0 (bit
//! numbering of [`Strings`]):
//!
//! | field | bits |
//! |---|---|
//! | fb | 0 |
//! | N_i | 1 .. 1 + iτ |
//! | L_i | 1 + iτ .. 1 + iτ + d_i |
//! | A_i | 1 + iτ + d_i .. |T_i| — for i < h, 2^τ cells of d_{i+1} bits (cell t is the label for N^(i+1) = t); for i = h the d-bit record |
//!
//! With fb in bit 0 and N_i above it, the low 1 + iτ bits of a tuple are the SS-COT key
//! fb‖N_i of Access (FJKW15 Alg. 3, step 3): [`TupleLayout::key`]. The A field's cells are
//! where the flip by ρ acts ([`TupleLayout::a_flip`], a [`CellFlip`] for Shift).

use crate::bits::{Strings, get_bits, set_bits};
use crate::params::Params;
use crate::plain::{PlainTree, Tuple};
use crate::shift::CellFlip;

/// Where the fields of a tuple of one tree lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TupleLayout {
    prefix_bits: usize,
    label_bits: usize,
    cell_bits: usize,
    cells: usize,
    record: bool,
}

impl TupleLayout {
    /// The layout of OT_i's tuples (OT_0: no prefix, no label, 2^τ cells of d_1 bits).
    ///
    /// # Panics
    /// If i > h (a caller's bug).
    pub fn new(params: &Params, i: usize) -> TupleLayout {
        let record = i == params.h();
        TupleLayout {
            prefix_bits: params.prefix_bits(i) as usize,
            label_bits: params.depth(i) as usize,
            cell_bits: if record {
                params.record_bits()
            } else {
                params.depth(i + 1) as usize
            },
            cells: if record { 1 } else { params.fanout() },
            record,
        }
    }

    /// |T_i| in bits.
    pub fn bits(&self) -> usize {
        self.a_offset() + self.cells * self.cell_bits
    }

    /// First bit of N_i.
    pub fn prefix_offset(&self) -> usize {
        1
    }

    /// First bit of L_i.
    pub fn label_offset(&self) -> usize {
        1 + self.prefix_bits
    }

    /// First bit of A_i.
    pub fn a_offset(&self) -> usize {
        self.label_offset() + self.label_bits
    }

    /// The flip of the A field by ρ (FJKW15 §4, "ρ flips A fields"); `None` for OT_h, whose A
    /// field is the record.
    pub fn a_flip(&self, rho: usize) -> Option<CellFlip> {
        (!self.record).then_some(CellFlip {
            offset: self.a_offset(),
            cell_bits: self.cell_bits,
            cells: self.cells,
            rho,
        })
    }

    /// The SS-COT key fb‖N_i of an encoded tuple: its low 1 + iτ ≤ 63 bits (fb lowest;
    /// [`MAX_ADDRESS_BITS`](crate::params::MAX_ADDRESS_BITS) keeps iτ ≤ 62).
    pub fn key(&self, row: &[u8]) -> u128 {
        u128::from(get_bits(row, 0, 1 + self.prefix_bits))
    }

    /// `t` in this layout, ⌈|T_i|/8⌉ bytes. A is 2^τ labels (i < h) or the record's 64-bit
    /// words, least significant first (i = h).
    ///
    /// # Panics
    /// If `t.a` has the wrong number of words (a caller's bug).
    pub fn encode(&self, t: &Tuple) -> Vec<u8> {
        let mut row = vec![0u8; self.bits().div_ceil(8)];
        set_bits(&mut row, 0, 1, u64::from(t.fb));
        set_bits(&mut row, self.prefix_offset(), self.prefix_bits, t.n);
        set_bits(&mut row, self.label_offset(), self.label_bits, t.label);
        for (k, chunk) in self.a_chunks().enumerate() {
            set_bits(&mut row, chunk.0, chunk.1, t.a[k]);
        }
        row
    }

    /// The tuple encoded in `row`.
    pub fn decode(&self, row: &[u8]) -> Tuple {
        Tuple {
            fb: get_bits(row, 0, 1) == 1,
            n: get_bits(row, self.prefix_offset(), self.prefix_bits),
            label: get_bits(row, self.label_offset(), self.label_bits),
            a: self.a_chunks().map(|(o, l)| get_bits(row, o, l)).collect(),
        }
    }

    /// (offset, length) of each word of A: one per label, or one per 64 bits of the record.
    fn a_chunks(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let (count, width) = if self.record {
            (self.cell_bits.div_ceil(64), 64)
        } else {
            (self.cells, self.cell_bits)
        };
        (0..count).map(move |k| {
            let start = k * width;
            let len = if self.record {
                width.min(self.cell_bits - start)
            } else {
                width
            };
            (self.a_offset() + start, len)
        })
    }

    /// The tuples of `slots` of `tree`, encoded (e.g. a path, [`PlainTree::path`]).
    pub fn encode_slots(&self, tree: &PlainTree, slots: &[usize]) -> Strings {
        let rows: Vec<Vec<u8>> = slots.iter().map(|&s| self.encode(&tree.tuple(s))).collect();
        Strings::from_rows(self.bits(), rows.iter().map(Vec::as_slice))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::sample::uniform_below;
    use rand::{Rng, SeedableRng};

    #[test]
    fn tuples_round_trip_in_every_tree() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(11);
        for params in [
            Params::new(18, 6, 128, 32).unwrap(),
            Params::new(12, 3, 32, 130).unwrap(),
            Params::new(6, 6, 2, 1).unwrap(),
        ] {
            for i in 0..params.trees() {
                let l = TupleLayout::new(&params, i);
                assert_eq!(l.bits(), params.tuple_bits(i), "{params:?}, tree {i}");
                let mask = |len: usize| if len == 0 { 0 } else { u64::MAX >> (64 - len) };
                let a = l
                    .a_chunks()
                    .map(|(_, len)| rng.random::<u64>() & mask(len))
                    .collect();
                let t = Tuple {
                    fb: rng.random(),
                    n: uniform_below(&mut rng, 1 << params.prefix_bits(i)),
                    label: uniform_below(&mut rng, params.leaves(i)),
                    a,
                };
                let row = l.encode(&t);
                assert_eq!(row.len(), params.tuple_bytes(i));
                assert_eq!(l.decode(&row), t);
                assert_eq!(l.key(&row), u128::from(t.n) << 1 | u128::from(t.fb));
                assert_eq!(l.a_flip(1).is_none(), i == params.h());
            }
        }
    }
}
