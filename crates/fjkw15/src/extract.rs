//! Get Memory without accesses (our design): the records of OT_h, shuffled by a permutation
//! no party knows, then opened where full, by address.
//!
//! 1. **Shuffle** (one round, two messages of OT_h's size): with the rows X of OT_h
//!    XOR-shared by D and E, and σ_a (D–E PRG), σ_b (C–D PRG), σ_c (C–E PRG):
//!    * E → C: σ_a(X_E) ⊕ z, with z from the D–E PRG (uniform to C); D holds σ_a(X_D) ⊕ z;
//!    * D → E: σ_b(σ_a(X_D) ⊕ z) ⊕ y, with y from the C–D PRG (uniform to E); C holds
//!      σ_b(σ_a(X_E) ⊕ z) ⊕ y;
//!    * C and E apply σ_c: they now share σ_c(σ_b(σ_a(X))). C misses σ_a, D misses σ_c, E
//!      misses σ_b, so the shuffle is uniform to each party.
//! 2. **Open the full bits** of the shuffled rows (C and E send their shares to the other two):
//!    exactly n rows are full, which is public.
//! 3. **Open the addresses N of the full rows** (likewise): a uniformly random arrangement of
//!    0..n, since the shuffle is secret. Empty rows' fields are never opened.
//! 4. The records of the full rows, XOR-shared by C and E, become additive shares
//!    ([`crate::convert::B2a`]), which each party puts in address order.
//!
//! The forest is not changed: the shuffled copy is discarded, and what was opened — n full
//! rows in a random order — says nothing about where the rows are in the tree.

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::msgs::WireMessage;
use crate::params::Params;
use crate::party::{C, D, E, instance};
use crate::plain::tree_slots;
use crate::sample::permutation;

/// Rows per [`Rows`] message: larger shuffles go in several.
pub const ROWS_PER_MESSAGE: usize = 1 << 15;

/// The public shape of an extraction: OT_h's rows and the memory size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExtractShape {
    params: Params,
    rows: usize,
    items: usize,
}

impl ExtractShape {
    /// The extraction of `items` records from a forest under `params`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless 1 ≤ `items` ≤ 2^m.
    pub fn new(params: Params, items: usize) -> Result<ExtractShape, Fjkw15Error> {
        if items == 0 || items as u64 > 1 << params.m() {
            return Err(Fjkw15Error::InvalidInput("1 ≤ items ≤ 2^m"));
        }
        let h = params.h();
        Ok(ExtractShape {
            params,
            rows: tree_slots(params.depth(h), params.w()),
            items,
        })
    }

    /// Rows of OT_h.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Records.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Bits per row, |T_h|.
    pub fn width(&self) -> usize {
        self.params.tuple_bits(self.params.h())
    }

    /// The shapes of the [`Rows`] messages carrying `count` rows of `width` bits.
    pub fn chunks(count: usize, width: usize) -> Vec<(usize, usize)> {
        (0..count.div_ceil(ROWS_PER_MESSAGE).max(1))
            .map(|k| ((count - k * ROWS_PER_MESSAGE).min(ROWS_PER_MESSAGE), width))
            .collect()
    }

    fn layout(&self) -> TupleLayout {
        TupleLayout::new(&self.params, self.params.h())
    }
}

/// Some rows of a shuffle step or of an opening (step 1: `|T_h|`-bit rows; step 2: the full
/// bits, 1-bit rows; step 3: addresses, m-bit rows). Shape: (rows, bits per row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rows {
    x: Strings,
}

impl Rows {
    /// The message carrying `x`.
    pub fn new(x: Strings) -> Rows {
        Rows { x }
    }

    /// The rows.
    pub fn rows(&self) -> &Strings {
        &self.x
    }
}

impl WireMessage for Rows {
    type Shape = (usize, usize);
    const WHAT: &'static str = "memory extraction: rows";

    fn wire_len((count, width): &(usize, usize)) -> usize {
        count * width.div_ceil(8)
    }

    fn fits(&self, (count, width): &(usize, usize)) -> bool {
        self.x.count() == *count && self.x.width() == *width
    }

    fn encode(&self) -> Vec<u8> {
        self.x.as_bytes().to_vec()
    }

    fn decode(
        bytes: &[u8],
        (count, width): &(usize, usize),
    ) -> Result<Self, doram_core::CodecError> {
        Ok(Rows {
            x: Strings::decode(bytes, *count, *width)?,
        })
    }
}

/// After step 1: this party's share of the shuffled rows (C and E).
#[derive(Clone, Debug)]
pub struct Shuffled {
    x: Strings,
}

impl Shuffled {
    /// The full bits of this share, as 1-bit rows (step 2's message).
    pub fn full_bits(&self) -> Strings {
        let mut out = Strings::zeros(self.x.count(), 1);
        for k in 0..self.x.count() {
            out.set_field(k, 0, 1, self.x.field(k, 0, 1));
        }
        out
    }

    /// The addresses of the rows `full`, as m-bit rows (step 3's message).
    pub fn addresses(&self, s: &ExtractShape, full: &[usize]) -> Strings {
        let (off, m) = (s.layout().prefix_offset(), s.params.m() as usize);
        let mut out = Strings::zeros(full.len(), m);
        for (j, &k) in full.iter().enumerate() {
            out.set_field(j, 0, m, self.x.field(k, off, m));
        }
        out
    }

    /// The record shares of the rows `full` (step 4's input).
    pub fn records(&self, s: &ExtractShape, full: &[usize]) -> Vec<u64> {
        let off = s.layout().a_offset();
        let bits = s.params.record_bits().min(64);
        full.iter().map(|&k| self.x.field(k, off, bits)).collect()
    }

    /// The record shares of the rows `full`, up to their first 128 bits.
    pub fn records_wide(&self, s: &ExtractShape, full: &[usize]) -> Vec<u128> {
        let off = s.layout().a_offset();
        let bits = s.params.record_bits().min(128);
        let (lo, hi) = (bits.min(64), bits.saturating_sub(64));
        full.iter()
            .map(|&k| {
                let low = u128::from(self.x.field(k, off, lo));
                let high = if hi > 0 {
                    u128::from(self.x.field(k, off + 64, hi))
                } else {
                    0
                };
                low | high << 64
            })
            .collect()
    }
}

/// Step 2: the full rows from the two openings of the full bits, checked to be n.
///
/// # Errors
/// [`Fjkw15Error::Inconsistent`] if the shares do not have n full rows.
pub fn full_rows(s: &ExtractShape, a: &Strings, b: &Strings) -> Result<Vec<usize>, Fjkw15Error> {
    let full: Vec<usize> = (0..s.rows)
        .filter(|&k| a.field(k, 0, 1) != b.field(k, 0, 1))
        .collect();
    if full.len() != s.items {
        return Err(Fjkw15Error::Inconsistent(
            "the opened full bits do not count n rows",
        ));
    }
    Ok(full)
}

/// Step 3: the address of each full row, from the two openings, checked to be a permutation
/// of 0..n.
///
/// # Errors
/// [`Fjkw15Error::Inconsistent`] if they are not.
pub fn addresses(s: &ExtractShape, a: &Strings, b: &Strings) -> Result<Vec<usize>, Fjkw15Error> {
    let m = s.params.m() as usize;
    let mut seen = vec![false; s.items];
    let mut out = Vec::with_capacity(s.items);
    for j in 0..s.items {
        let n = (a.field(j, 0, m) ^ b.field(j, 0, m)) as usize;
        if n >= s.items || seen[n] {
            return Err(Fjkw15Error::Inconsistent(
                "the opened addresses are not 0..n",
            ));
        }
        seen[n] = true;
        out.push(n);
    }
    Ok(out)
}

fn apply(sigma: &[usize], x: &Strings) -> Strings {
    x.gather(sigma)
}

impl E {
    /// Step 1 (E): the message σ_a(X_E) ⊕ z for C, from E's rows of OT_h.
    pub fn extract_send(&mut self, s: &ExtractShape, x_e: &Strings) -> Strings {
        let mut de = instance(&mut self.with_d);
        let sigma_a = permutation(s.rows, &mut de);
        let z = Strings::random(s.rows, s.width(), &mut de);
        apply(&sigma_a, x_e).xor(&z)
    }

    /// Step 1 (E): E's share of the shuffled rows, from D's message.
    pub fn extract_finish(&mut self, s: &ExtractShape, from_d: Strings) -> Shuffled {
        let mut ce = instance(&mut self.with_c);
        let sigma_c = permutation(s.rows, &mut ce);
        Shuffled {
            x: apply(&sigma_c, &from_d),
        }
    }
}

impl D {
    /// Step 1 (D): the message σ_b(σ_a(X_D) ⊕ z) ⊕ y for E, from D's rows of OT_h.
    pub fn extract_send(&mut self, s: &ExtractShape, x_d: &Strings) -> Strings {
        let mut de = instance(&mut self.with_e);
        let sigma_a = permutation(s.rows, &mut de);
        let z = Strings::random(s.rows, s.width(), &mut de);
        let mut cd = instance(&mut self.with_c);
        let sigma_b = permutation(s.rows, &mut cd);
        let y = Strings::random(s.rows, s.width(), &mut cd);
        apply(&sigma_b, &apply(&sigma_a, x_d).xor(&z)).xor(&y)
    }
}

impl C {
    /// Step 1 (C): C's share of the shuffled rows, from E's message.
    pub fn extract_finish(&mut self, s: &ExtractShape, from_e: Strings) -> Shuffled {
        let mut cd = instance(&mut self.with_d);
        let sigma_b = permutation(s.rows, &mut cd);
        let y = Strings::random(s.rows, s.width(), &mut cd);
        let mut ce = instance(&mut self.with_e);
        let sigma_c = permutation(s.rows, &mut ce);
        Shuffled {
            x: apply(&sigma_c, &apply(&sigma_b, &from_e).xor(&y)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::party::{Roles, setup_in_process};
    use doram_core::Entropy;

    #[test]
    fn the_shuffle_moves_whole_rows_and_the_openings_check_their_counts() {
        let params = Params::new(6, 3, 4, 64).unwrap();
        let s = ExtractShape::new(params, 5).unwrap();
        let (mut c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(4));
        let mut rng = doram_prim::AesPrg::new(doram_core::Seed([7; 16]));
        let x = Strings::random(s.rows(), s.width(), &mut rng);
        let x_d = Strings::random(s.rows(), s.width(), &mut rng);
        let x_e = x.xor(&x_d);
        let to_c = e.extract_send(&s, &x_e);
        let to_e = d.extract_send(&s, &x_d);
        let at_c = c.extract_finish(&s, to_c);
        let at_e = e.extract_finish(&s, to_e);
        let mut got: Vec<Vec<u8>> = (0..s.rows())
            .map(|k| at_c.x.xor(&at_e.x).get(k).to_vec())
            .collect();
        let mut want: Vec<Vec<u8>> = (0..s.rows()).map(|k| x.get(k).to_vec()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        // Random rows are full about half the time, not exactly 5 of them.
        let fb = (at_c.full_bits(), at_e.full_bits());
        assert!(matches!(
            full_rows(&s, &fb.0, &fb.1),
            Err(Fjkw15Error::Inconsistent(_))
        ));
        let twice = Strings::zeros(5, 6);
        assert!(matches!(
            addresses(&s, &twice, &twice),
            Err(Fjkw15Error::Inconsistent(_))
        ));
    }
}
