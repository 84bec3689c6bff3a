//! Shift(A, B, H): re-sharing a secret-shared sequence under a permutation Π that B and H know
//! (FJKW15 §3, "Shifting a Secret-Shared Sequence"; notes §4.6).
//!
//! **This design is ours.** The paper only says that D, as helper, prepares "correlated random
//! inputs for E and C, which allows for an on-line protocol which consists of a few xor
//! operations and a transmission of a single |P_{L_i}|-bit message from C to E", and omits the
//! protocol. FJKW15 uses it in Eviction (Alg. 5, step 1) as Shift(C, E, D): A = C, B = E,
//! H = D, to rotate the buckets of the retrieved path back by σ_i; the A fields must also be
//! flipped back by ρ_i (notes Q1 and §4.6: otherwise a later lookup reads A[t ⊕ ρ]).
//!
//! For a C/E sharing (X_C, X_E) of a sequence X and a bit permutation Π known to D and E
//! ([`ShiftMap`]: a permutation of the items, then optionally the cell flip t → t ⊕ ρ inside
//! every item):
//!
//! 1. pre-computation: D and C draw q, q′ (random sequences of X's shape) from a fresh sub-seed
//!    of their shared PRG; D sends Π(q) ⊕ q′ to E ([`D::shift_prepare`]);
//! 2. online: C sends u = X_C ⊕ q to E and keeps q′ as its new share ([`C::shift_send`]);
//! 3. E's new share is Π(u ⊕ X_E) ⊕ Π(q) ⊕ q′ = Π(X) ⊕ q′ ([`E::shift_finish`]).
//!
//! Π is linear over XOR (it moves bits), which is all the correctness argument needs. Security
//! against one passive party: E sees u (X_C padded by q, which E never sees) and
//! Π(q) ⊕ q′ (padded by q′); C sees nothing; D sees nothing online. The new sharing is fresh:
//! q′ is uniform and independent of everything E holds. One message online, one in
//! pre-computation, each items × ⌈ℓ/8⌉ bytes.

use doram_prim::AesPrg;

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::msgs::{ShiftFromC, ShiftFromD, check};
use crate::party::{C, D, E, Role, instance};
use crate::sample::is_permutation;

/// The public parameters of one Shift instance: a sequence of `items` strings of ℓ bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShiftParams {
    items: usize,
    item_bits: usize,
}

impl ShiftParams {
    /// `items` strings of `item_bits` bits.
    pub fn new(items: usize, item_bits: usize) -> ShiftParams {
        ShiftParams { items, item_bits }
    }

    /// Number of items.
    pub fn items(&self) -> usize {
        self.items
    }

    /// ℓ, bits per item.
    pub fn item_bits(&self) -> usize {
        self.item_bits
    }
}

/// The cell flip of FJKW15 §4, "ρ flips A fields": inside every item, the `cells` cells of
/// `cell_bits` bits from bit `offset` on are treated as a τ-dimensional cube, and cell t moves
/// to t ⊕ ρ (an involution: flipping twice by ρ is the identity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellFlip {
    /// First bit of cell 0 inside an item.
    pub offset: usize,
    /// Bits per cell (at most 64).
    pub cell_bits: usize,
    /// Number of cells: a power of two, 2^τ.
    pub cells: usize,
    /// ρ, below `cells`.
    pub rho: usize,
}

impl CellFlip {
    /// Applies the flip to item `i` of `x`.
    fn apply(&self, x: &mut Strings, i: usize) {
        let at = |c: usize| self.offset + c * self.cell_bits;
        let cells: Vec<u64> = (0..self.cells)
            .map(|c| x.field(i, at(c), self.cell_bits))
            .collect();
        for (c, v) in cells.iter().enumerate() {
            x.set_field(i, at(c ^ self.rho), self.cell_bits, *v);
        }
    }
}

/// Π: item j of Π(X) is item `source[j]` of X, then (optionally) every item's cells flipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShiftMap {
    source: Vec<usize>,
    flip: Option<CellFlip>,
}

impl ShiftMap {
    /// The item permutation `source` (item j of the result is item `source[j]`), no flip.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `source` is not a permutation of 0..len.
    pub fn new(source: Vec<usize>) -> Result<ShiftMap, Fjkw15Error> {
        if !is_permutation(&source) {
            return Err(Fjkw15Error::InvalidInput(
                "a Shift map must permute the items",
            ));
        }
        Ok(ShiftMap { source, flip: None })
    }

    /// Rotation back by σ blocks of `block` items each: block b of the result is block
    /// (b + σ) mod `blocks` of the input. With blocks = buckets and block = w this undoes
    /// Access's clockwise rotation of the buckets by σ (FJKW15 Alg. 5, step 1: "buckets shifted
    /// back by σ positions"), in which bucket b moves to position (b + σ) mod n.
    pub fn rotate_back(blocks: usize, block: usize, sigma: usize) -> ShiftMap {
        let source = (0..blocks * block)
            .map(|j| ((j / block + sigma) % blocks) * block + j % block)
            .collect();
        ShiftMap { source, flip: None }
    }

    /// The same map on `extra` more items appended at the end, which stay in place (the flip,
    /// if any, still applies to them): Eviction shifts the path and the tuple (T_i)′ together,
    /// so that ρ is undone in both (notes Q1).
    #[must_use]
    pub fn append_fixed(mut self, extra: usize) -> ShiftMap {
        let n = self.source.len();
        self.source.extend(n..n + extra);
        self
    }

    /// The same map followed by `flip` in every item.
    #[must_use]
    pub fn with_flip(self, flip: CellFlip) -> ShiftMap {
        ShiftMap {
            flip: Some(flip),
            ..self
        }
    }

    /// Π(x).
    ///
    /// # Panics
    /// If `x` does not have as many items as the map (a caller's bug; the round functions check
    /// first).
    pub fn apply(&self, x: &Strings) -> Strings {
        let mut y = x.gather(&self.source);
        if let Some(flip) = &self.flip {
            for i in 0..y.count() {
                flip.apply(&mut y, i);
            }
        }
        y
    }

    fn check(&self, params: &ShiftParams) -> Result<(), Fjkw15Error> {
        let flip_ok = self.flip.is_none_or(|f| {
            f.cells.is_power_of_two()
                && f.rho < f.cells
                && f.cell_bits <= 64
                && f.offset + f.cells * f.cell_bits <= params.item_bits
        });
        if self.source.len() != params.items || !flip_ok {
            return Err(Fjkw15Error::InvalidInput(
                "the Shift map does not fit the items",
            ));
        }
        Ok(())
    }
}

/// q then q′, drawn by C and D from their shared PRG.
fn correlated(mut prg: AesPrg, params: &ShiftParams) -> (Strings, Strings) {
    let q = Strings::random(params.items, params.item_bits, &mut prg);
    let q_prime = Strings::random(params.items, params.item_bits, &mut prg);
    (q, q_prime)
}

fn check_share(params: &ShiftParams, x: &Strings) -> Result<(), Fjkw15Error> {
    if x.count() != params.items || x.width() != params.item_bits {
        return Err(Fjkw15Error::InvalidInput(
            "a Shift share is `items` strings of ℓ bits",
        ));
    }
    Ok(())
}

impl D {
    /// Shift, pre-computation at H = D (our design, [module docs](self), step 1): sends
    /// Π(q) ⊕ q′ to E.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `map` does not fit `params`; nothing is consumed then.
    pub fn shift_prepare(
        &mut self,
        params: &ShiftParams,
        map: &ShiftMap,
    ) -> Result<ShiftFromD, Fjkw15Error> {
        map.check(params)?;
        let (q, q_prime) = correlated(instance(&mut self.with_c), params);
        // [FJKW15 §3, Shift (our design), step 1] D → E: Π(q) ⊕ q′.
        let mut x = map.apply(&q);
        x.xor_assign(&q_prime);
        Ok(ShiftFromD { x })
    }
}

impl C {
    /// Shift, online at A = C (our design, step 2): returns C's new share q′ and the message
    /// u = X_C ⊕ q for E.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `x_c` does not have the shape of `params`.
    pub fn shift_send(
        &mut self,
        params: &ShiftParams,
        x_c: &Strings,
    ) -> Result<(Strings, ShiftFromC), Fjkw15Error> {
        check_share(params, x_c)?;
        let (q, q_prime) = correlated(instance(&mut self.with_d), params);
        // [FJKW15 §3, Shift (our design), step 2] C → E: u = X_C ⊕ q; C keeps q′.
        Ok((q_prime, ShiftFromC { x: x_c.xor(&q) }))
    }
}

impl E {
    /// Shift, online at B = E (our design, step 3): E's new share Π(u ⊕ X_E) ⊕ (Π(q) ⊕ q′).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `x_e` or `map` does not fit `params`;
    /// [`Fjkw15Error::Peer`] naming D or C for a message of the wrong shape.
    pub fn shift_finish(
        &self,
        params: &ShiftParams,
        map: &ShiftMap,
        x_e: &Strings,
        from_d: &ShiftFromD,
        from_c: &ShiftFromC,
    ) -> Result<Strings, Fjkw15Error> {
        check_share(params, x_e)?;
        map.check(params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        check(from_c, self.roles.party(Role::C), params)?;
        // [FJKW15 §3, Shift (our design), step 3] Π(u ⊕ X_E) ⊕ Π(q) ⊕ q′ = Π(X) ⊕ q′.
        let mut y = map.apply(&from_c.x.xor(x_e));
        y.xor_assign(&from_d.x);
        Ok(y)
    }
}

/// C's Shift correlation (q, q′), drawn in pre-computation ([`C::shift_keys`]) for an online
/// [`C::shift_send_keyed`]; q′ is C's new share.
#[derive(Clone, Debug)]
pub struct ShiftKeys {
    q: Strings,
    q_prime: Strings,
}

impl ShiftKeys {
    /// q′, C's share after the Shift.
    pub fn share(&self) -> &Strings {
        &self.q_prime
    }
}

impl C {
    /// Shift, pre-computation at A = C: draws (q, q′) as [`C::shift_send`] would, from the
    /// same sub-seed of the C–D PRG that [`D::shift_prepare`] takes.
    pub fn shift_keys(&mut self, params: &ShiftParams) -> ShiftKeys {
        let (q, q_prime) = correlated(instance(&mut self.with_d), params);
        ShiftKeys { q, q_prime }
    }

    /// Shift, online at A = C with pre-computed `keys`: the message u = X_C ⊕ q for E.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `x_c` or `keys` does not have the shape of `params`.
    pub fn shift_send_keyed(
        &self,
        params: &ShiftParams,
        keys: &ShiftKeys,
        x_c: &Strings,
    ) -> Result<ShiftFromC, Fjkw15Error> {
        check_share(params, x_c)?;
        check_share(params, &keys.q)?;
        // [FJKW15 §3, Shift (our design), step 2] C → E: u = X_C ⊕ q; C keeps q′.
        Ok(ShiftFromC {
            x: x_c.xor(&keys.q),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rotation_back_and_flip() {
        // Three blocks of two items: back by 1 means block 0 ← block 1, 1 ← 2, 2 ← 0.
        let map = ShiftMap::rotate_back(3, 2, 1);
        assert_eq!(map.source, [2, 3, 4, 5, 0, 1]);
        assert!(ShiftMap::new(vec![1, 1]).is_err());
        let mut x = Strings::zeros(1, 20);
        for c in 0..4 {
            x.set_field(0, 4 + 3 * c, 3, c as u64);
        }
        let flip = CellFlip {
            offset: 4,
            cell_bits: 3,
            cells: 4,
            rho: 2,
        };
        let y = ShiftMap::new(vec![0]).unwrap().with_flip(flip).apply(&x);
        let cells: Vec<u64> = (0..4).map(|c| y.field(0, 4 + 3 * c, 3)).collect();
        assert_eq!(cells, [2, 3, 0, 1]);
        assert_eq!(y.field(0, 0, 4), 0);
        let bad = ShiftMap::new(vec![0])
            .unwrap()
            .with_flip(CellFlip { rho: 4, ..flip });
        assert!(bad.check(&ShiftParams::new(1, 20)).is_err());
    }
}
