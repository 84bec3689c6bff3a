//! Conversions between the three-party additive shares of doram's memory interface (words of
//! Z/2^64, held by C, D and E) and FJKW15's XOR shares (our design; FJKW15 §1 takes XOR-shared
//! inputs as given). Both are one GC\[F\](E, C, D) of [`crate::gc`], built on a ripple-carry
//! adder with one AND gate per bit.
//!
//! * [`A2b`], additive → XOR between D and E (addresses of m bits, records of 64 bits):
//!   1. D → C: x_D + s, with s from the D–E PRG; E keeps x_E − s. Now C holds
//!      a = x_C + x_D + s and E holds b = x_E − s, a + b = x, and C's a is uniform to C.
//!   2. E garbles F(a, b, r) = (a + b mod 2^k) ⊕ r with r from its own PRG, sends C the label
//!      pairs of a's wires and D the tables and its own active labels; E's XOR share is r.
//!   3. C → D: the labels of a; D evaluates and its XOR share is F's output.
//! * [`B2a`], XOR between C and E (a record read, FJKW15 Access at i = h) → additive among
//!   all three: E garbles F(y_C, y_E, r) = (y_C ⊕ y_E) − r mod 2^64 with r from its own PRG,
//!   C forwards the labels of y_C, D evaluates: D's share is F's output, E's is r, C's is 0;
//!   then each adds its part of a fresh sharing of zero from the pairwise PRGs
//!   (C: z_CD − z_CE, D: z_DE − z_CD, E: z_CE − z_DE).
//!
//! Views (one passive corruption): D sees garbled values and F's output, which r masks; C sees
//! x_D + s (s is D's and E's) and label pairs; E sees nothing of the others. Each conversion
//! takes one instance from the pairwise PRGs it uses, in the same call at both ends
//! ([`crate::party`], "Lockstep").
//!
//! Messages (bytes, k-bit values, v values): A2B: D → C 8v, E → C 32·Σk, E → D
//! 32·(Σk − v) + Σk/8 + 32·Σk, C → D 16·Σk; B2A over 64-bit values: E → C 2048v, E → D
//! 32·63v + 8v + 2048v, C → D 1024v.

use doram_core::CodecError;
use doram_twopc::{Bit, Builder, Circuit};
use rand_core::RngCore;

use crate::error::Fjkw15Error;
use crate::gc::{GcFromC, GcFromE, GcPairs, GcShape};
use crate::msgs::{WireMessage, check, length};
use crate::party::{C, D, E, Role, instance};

fn bits_of(v: u64, k: usize) -> impl Iterator<Item = bool> {
    (0..k).map(move |j| (v >> j) & 1 == 1)
}

fn value_of(bits: &[bool]) -> u64 {
    bits.iter()
        .enumerate()
        .fold(0, |v, (j, &b)| v | (u64::from(b) << j))
}

fn mask(k: usize) -> u64 {
    if k >= 64 { u64::MAX } else { (1 << k) - 1 }
}

/// a + b + carry (bit slices of one length, least significant first), mod 2^len: one AND per
/// bit but the last (c_{j+1} = c_j ⊕ (a_j ⊕ c_j) ∧ (b_j ⊕ c_j)).
fn ripple_add(bld: &mut Builder, a: &[Bit], b: &[Bit], mut carry: Bit) -> Vec<Bit> {
    let mut sum = Vec::with_capacity(a.len());
    for (j, (&x, &y)) in a.iter().zip(b).enumerate() {
        let xy = bld.xor(x, y);
        sum.push(bld.xor(xy, carry));
        if j + 1 < a.len() {
            let xc = bld.xor(x, carry);
            let yc = bld.xor(y, carry);
            let t = bld.and(xc, yc);
            carry = bld.xor(carry, t);
        }
    }
    sum
}

fn misfit(_: doram_twopc::TwopcError) -> Fjkw15Error {
    Fjkw15Error::InvalidInput("a conversion circuit could not be built")
}

/// Additive (Z/2^64, three parties) → XOR between D and E, of values of the given widths
/// ([module docs](self)).
#[derive(Clone, Debug)]
pub struct A2b {
    widths: Vec<usize>,
    circuit: Circuit,
    shape: GcShape,
}

impl A2b {
    /// A conversion of values of `widths` bits (each 1..=64), in this order.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values or a width out of range.
    pub fn new(widths: &[usize]) -> Result<A2b, Fjkw15Error> {
        if widths.is_empty() || widths.iter().any(|&k| k == 0 || k > 64) {
            return Err(Fjkw15Error::InvalidInput(
                "A2B converts values of 1 to 64 bits",
            ));
        }
        let mut bld = Builder::new();
        let mut c_wires = Vec::new();
        let mut next = 0;
        let mut outs = Vec::new();
        for &k in widths {
            // Inputs per value: a (C's), then b and r (E's).
            let a = bld.garbler_bits(k);
            c_wires.extend(next..next + k);
            let b = bld.garbler_bits(k);
            let r = bld.garbler_bits(k);
            next += 3 * k;
            let sum = ripple_add(&mut bld, &a, &b, Bit::ZERO);
            for (s, r) in sum.into_iter().zip(r) {
                outs.push(bld.xor(s, r));
            }
        }
        bld.output_bits(&outs);
        let circuit = bld.finish().map_err(misfit)?;
        let shape = GcShape::new(&circuit, &c_wires)?;
        Ok(A2b {
            widths: widths.to_vec(),
            circuit,
            shape,
        })
    }

    /// The number of values converted.
    pub fn values(&self) -> usize {
        self.widths.len()
    }

    /// The shape of the garbled circuit's messages.
    pub fn gc_shape(&self) -> &GcShape {
        &self.shape
    }

    fn check_len(&self, x: &[u64]) -> Result<(), Fjkw15Error> {
        if x.len() == self.widths.len() {
            Ok(())
        } else {
            Err(Fjkw15Error::InvalidInput("one share per value"))
        }
    }
}

/// A2B, step 1: D → C, x_D + s per value (8 little-endian bytes each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2bFromD {
    words: Vec<u64>,
}

impl WireMessage for A2bFromD {
    /// The number of values.
    type Shape = usize;
    const WHAT: &'static str = "A2B: D's masked additive shares";

    fn wire_len(count: &usize) -> usize {
        8 * count
    }

    fn fits(&self, count: &usize) -> bool {
        self.words.len() == *count
    }

    fn encode(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8], count: &usize) -> Result<Self, CodecError> {
        length(bytes, 8 * count)?;
        let words = bytes
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        Ok(A2bFromD { words })
    }
}

impl D {
    /// A2B, step 1 (D): x_D + s for C, s from the D–E PRG.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn a2b_send(&mut self, a: &A2b, x_d: &[u64]) -> Result<A2bFromD, Fjkw15Error> {
        a.check_len(x_d)?;
        let mut de = instance(&mut self.with_e);
        // [A2B, step 1] D → C: x_D + s.
        let words = x_d.iter().map(|&x| x.wrapping_add(de.next_u64())).collect();
        Ok(A2bFromD { words })
    }

    /// A2B, step 4 (D): evaluates the circuit; D's XOR shares of the values.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape.
    pub fn a2b_finish(
        &self,
        a: &A2b,
        from_e: &GcFromE,
        from_c: &GcFromC,
    ) -> Result<Vec<u64>, Fjkw15Error> {
        let out = self.gc_evaluate(&a.circuit, &a.shape, from_e, from_c)?;
        let mut pos = 0;
        Ok(a.widths
            .iter()
            .map(|&k| {
                pos += k;
                value_of(&out[pos - k..pos])
            })
            .collect())
    }
}

impl E {
    /// A2B, step 2 (E): b = x_E − s (s from the D–E PRG), a fresh mask r; garbles
    /// (a + b) ⊕ r. Returns E's XOR shares r and the messages to D and to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn a2b_garble(
        &mut self,
        a: &A2b,
        x_e: &[u64],
    ) -> Result<(Vec<u64>, GcFromE, GcPairs), Fjkw15Error> {
        a.check_len(x_e)?;
        let mut de = instance(&mut self.with_d);
        let mut masks = Vec::with_capacity(x_e.len());
        let mut e_bits = Vec::new();
        for (&x, &k) in x_e.iter().zip(&a.widths) {
            let b = x.wrapping_sub(de.next_u64());
            let r = self.local.next_u64() & mask(k);
            e_bits.extend(bits_of(b, k));
            e_bits.extend(bits_of(r, k));
            masks.push(r);
        }
        // [A2B, step 2] E → D: tables and E's labels; E → C: the label pairs of a.
        let (to_d, to_c) = self.gc_garble(&a.circuit, &a.shape, &e_bits)?;
        Ok((masks, to_d, to_c))
    }
}

impl C {
    /// A2B, step 3 (C): a = x_C + (x_D + s); the labels a selects, for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming D or E for messages of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn a2b_choose(
        &self,
        a: &A2b,
        x_c: &[u64],
        from_d: &A2bFromD,
        pairs: &GcPairs,
    ) -> Result<GcFromC, Fjkw15Error> {
        a.check_len(x_c)?;
        check(from_d, self.roles.party(Role::D), &a.values())?;
        let c_bits: Vec<bool> = x_c
            .iter()
            .zip(&from_d.words)
            .zip(&a.widths)
            .flat_map(|((&x, &m), &k)| bits_of(x.wrapping_add(m), k))
            .collect();
        // [A2B, step 3] C → D: the labels of a.
        self.gc_choose(&a.shape, pairs, &c_bits)
    }
}

/// XOR between C and E → additive among C, D and E, of `count` 64-bit values ([module
/// docs](self)).
#[derive(Clone, Debug)]
pub struct B2a {
    count: usize,
    circuit: Circuit,
    shape: GcShape,
}

impl B2a {
    /// A conversion of `count` ≥ 1 values of 64 bits.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values.
    pub fn new(count: usize) -> Result<B2a, Fjkw15Error> {
        if count == 0 {
            return Err(Fjkw15Error::InvalidInput("B2A converts at least one value"));
        }
        let mut bld = Builder::new();
        let mut c_wires = Vec::new();
        let mut outs = Vec::new();
        for v in 0..count {
            // Inputs per value: y_C (C's), then y_E and r (E's).
            let yc = bld.garbler_bits(64);
            c_wires.extend(192 * v..192 * v + 64);
            let ye = bld.garbler_bits(64);
            let r = bld.garbler_bits(64);
            let y: Vec<Bit> = yc.iter().zip(&ye).map(|(&a, &b)| bld.xor(a, b)).collect();
            // y − r = y + ¬r + 1.
            let not_r: Vec<Bit> = r.iter().map(|&b| bld.not(b)).collect();
            outs.extend(ripple_add(&mut bld, &y, &not_r, Bit::ONE));
        }
        bld.output_bits(&outs);
        let circuit = bld.finish().map_err(misfit)?;
        let shape = GcShape::new(&circuit, &c_wires)?;
        Ok(B2a {
            count,
            circuit,
            shape,
        })
    }

    /// The shape of the garbled circuit's messages.
    pub fn gc_shape(&self) -> &GcShape {
        &self.shape
    }

    fn check_len(&self, y: &[u64]) -> Result<(), Fjkw15Error> {
        if y.len() == self.count {
            Ok(())
        } else {
            Err(Fjkw15Error::InvalidInput("one share per value"))
        }
    }
}

impl E {
    /// B2A (E): garbles (y_C ⊕ y_E) − r; returns E's additive shares r + z_CE − z_DE and the
    /// messages to D and to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn b2a_garble(
        &mut self,
        b: &B2a,
        y_e: &[u64],
    ) -> Result<(Vec<u64>, GcFromE, GcPairs), Fjkw15Error> {
        b.check_len(y_e)?;
        let (mut ce, mut de) = (instance(&mut self.with_c), instance(&mut self.with_d));
        let mut shares = Vec::with_capacity(y_e.len());
        let mut e_bits = Vec::with_capacity(128 * y_e.len());
        for &y in y_e {
            let r = self.local.next_u64();
            e_bits.extend(bits_of(y, 64));
            e_bits.extend(bits_of(r, 64));
            shares.push(r.wrapping_add(ce.next_u64()).wrapping_sub(de.next_u64()));
        }
        // [B2A] E → D: tables and E's labels; E → C: the label pairs of y_C.
        let (to_d, to_c) = self.gc_garble(&b.circuit, &b.shape, &e_bits)?;
        Ok((shares, to_d, to_c))
    }
}

impl C {
    /// B2A (C): the labels y_C selects, for D, and C's additive shares z_CD − z_CE.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E for pairs of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn b2a_choose(
        &mut self,
        b: &B2a,
        y_c: &[u64],
        pairs: &GcPairs,
    ) -> Result<(Vec<u64>, GcFromC), Fjkw15Error> {
        b.check_len(y_c)?;
        let (mut cd, mut ce) = (instance(&mut self.with_d), instance(&mut self.with_e));
        let c_bits: Vec<bool> = y_c.iter().flat_map(|&y| bits_of(y, 64)).collect();
        // [B2A] C → D: the labels of y_C.
        let to_d = self.gc_choose(&b.shape, pairs, &c_bits)?;
        let shares = (0..b.count)
            .map(|_| ce.next_u64().wrapping_neg().wrapping_add(cd.next_u64()))
            .collect();
        Ok((shares, to_d))
    }
}

impl D {
    /// B2A (D): evaluates (y_C ⊕ y_E) − r; D's additive shares, plus z_DE − z_CD.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape.
    pub fn b2a_finish(
        &mut self,
        b: &B2a,
        from_e: &GcFromE,
        from_c: &GcFromC,
    ) -> Result<Vec<u64>, Fjkw15Error> {
        let out = self.gc_evaluate(&b.circuit, &b.shape, from_e, from_c)?;
        let (mut cd, mut de) = (instance(&mut self.with_c), instance(&mut self.with_e));
        Ok(out
            .chunks_exact(64)
            .map(|bits| {
                let cd_z = cd.next_u64();
                value_of(bits)
                    .wrapping_add(de.next_u64())
                    .wrapping_sub(cd_z)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::party::{Roles, setup_in_process};
    use doram_core::Entropy;
    use rand_core::RngCore;

    #[test]
    fn a2b_then_b2a_round_trip() {
        let (mut c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(9));
        let mut rng = doram_prim::AesPrg::new(doram_core::Seed([5; 16]));
        for widths in [vec![64], vec![5, 64], vec![1, 13, 64, 64]] {
            let a = A2b::new(&widths).unwrap();
            let x: Vec<u64> = widths.iter().map(|_| rng.next_u64()).collect();
            let x_c: Vec<u64> = x.iter().map(|_| rng.next_u64()).collect();
            let x_d: Vec<u64> = x.iter().map(|_| rng.next_u64()).collect();
            let x_e: Vec<u64> = (0..x.len())
                .map(|v| x[v].wrapping_sub(x_c[v]).wrapping_sub(x_d[v]))
                .collect();
            let to_c = d.a2b_send(&a, &x_d).unwrap();
            let (at_e, gc_d, pairs) = e.a2b_garble(&a, &x_e).unwrap();
            let gc_c = c.a2b_choose(&a, &x_c, &to_c, &pairs).unwrap();
            let at_d = d.a2b_finish(&a, &gc_d, &gc_c).unwrap();
            for (v, &k) in widths.iter().enumerate() {
                assert_eq!(at_d[v] ^ at_e[v], x[v] & mask(k), "{widths:?}, value {v}");
            }
            // Back: XOR shares between C and E of the 64-bit values.
            let b = B2a::new(x.len()).unwrap();
            let y_c: Vec<u64> = x.iter().map(|_| rng.next_u64()).collect();
            let y_e: Vec<u64> = x.iter().zip(&y_c).map(|(a, b)| a ^ b).collect();
            let (s_e, gc_d, pairs) = e.b2a_garble(&b, &y_e).unwrap();
            let (s_c, gc_c) = c.b2a_choose(&b, &y_c, &pairs).unwrap();
            let s_d = d.b2a_finish(&b, &gc_d, &gc_c).unwrap();
            for v in 0..x.len() {
                let sum = s_c[v].wrapping_add(s_d[v]).wrapping_add(s_e[v]);
                assert_eq!(sum, x[v], "{widths:?}, value {v}");
            }
        }
    }
}
