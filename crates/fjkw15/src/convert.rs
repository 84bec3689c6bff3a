//! Conversions between the three-party additive shares of doram's memory interface (words of
//! Z/2^64 or F_p, held by C, D and E; [`ShareRing`]) and FJKW15's XOR shares (our design;
//! FJKW15 §1 takes XOR-shared inputs as given). Both are one GC\[F\](E, C, D) of
//! [`crate::gc`], built on a ripple-carry adder with one AND gate per bit; over F_p the adder
//! works mod p (a + b on 129 bits, then − p unless that borrows: three ANDs per bit) and the
//! shares are the canonical 128-bit representatives.
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
//! * Range check ([`A2b::build`] with a bound n, F_p addresses): the circuit also outputs
//!   [x ≥ n] unmasked to D, over the whole value x; D tells C and E ([`RangeStatus`]) and
//!   all stop with [`Fjkw15Error::AddressOutOfRange`] if it is 1. The bit is 0 in a correct
//!   run, so D learns nothing then.
//!
//! Messages over Z/2^64 (bytes, k-bit values, v values): A2B: D → C 8v, E → C 32·Σk, E → D
//! 32·(Σk − v) + Σk/8 + 32·Σk, C → D 16·Σk; B2A over 64-bit values: E → C 2048v, E → D
//! 32·63v + 8v + 2048v, C → D 1024v.

use core::fmt::Debug;
use core::marker::PhantomData;

use doram_core::CodecError;
use doram_field::Fp;
use doram_twopc::{Bit, Builder, Circuit};
use rand_core::RngCore;

use crate::error::Fjkw15Error;
use crate::gc::{GcFromC, GcFromE, GcPairs, GcShape};
use crate::msgs::{WireMessage, check, length};
use crate::party::{C, D, E, Role, instance};

fn bits_of(v: impl Into<u128>, k: usize) -> impl Iterator<Item = bool> {
    let v: u128 = v.into();
    (0..k).map(move |j| (v >> j) & 1 == 1)
}

fn value_of(bits: &[bool]) -> u128 {
    bits.iter()
        .enumerate()
        .fold(0, |v, (j, &b)| v | (u128::from(b) << j))
}

fn mask(k: usize) -> u64 {
    if k >= 64 { u64::MAX } else { (1 << k) - 1 }
}

fn mask128(k: usize) -> u128 {
    if k >= 128 { u128::MAX } else { (1 << k) - 1 }
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

/// The `len` bits of the public constant ¬c (c's bits above the 128th are 0).
fn not_const(c: u128, len: usize) -> Vec<Bit> {
    (0..len)
        .map(|j| Bit::constant(j >= 128 || (c >> j) & 1 == 0))
        .collect()
}

/// a + b mod p for a, b < p (128 bits each, least significant first): s = a + b exactly
/// (129 bits), d = s − p mod 2^129, whose top bit is the borrow [s < p] (s − p ≥ −p > −2^128),
/// and the result s if it borrowed, d otherwise: 128 + 128 + 128 ANDs.
fn add_mod_p(bld: &mut Builder, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
    let wide = |x: &[Bit]| x.iter().copied().chain([Bit::ZERO]).collect::<Vec<Bit>>();
    let s = ripple_add(bld, &wide(a), &wide(b), Bit::ZERO);
    let d = ripple_add(bld, &s, &not_const(Fp::MODULUS, 129), Bit::ONE);
    let borrow = d[128];
    (0..128).map(|j| bld.mux_bit(borrow, d[j], s[j])).collect()
}

/// [x < c] for a public c ≤ 2^len (x's `len` bits least significant first): the top bit of
/// x − c mod 2^(len+1), which is 1 exactly when it borrowed; `len` ANDs.
fn less_than(bld: &mut Builder, x: &[Bit], c: u128) -> Bit {
    let w = x.len();
    let x1: Vec<Bit> = x.iter().copied().chain([Bit::ZERO]).collect();
    ripple_add(bld, &x1, &not_const(c, w + 1), Bit::ONE)[w]
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for doram_field::Fp {}
}

/// A ring of the three parties' additive shares that [`A2b`] and [`B2a`] convert: Z/2^32
/// (`u32`, wrapping), Z/2^64 (`u64`, wrapping) or F_p ([`Fp`], p = 2^128 − 28·2^64 + 1). Elements are handled by their
/// canonical representatives, [`BITS`](ShareRing::BITS) bits wide; XOR shares of them are
/// [`Xor`](ShareRing::Xor) bit strings.
pub trait ShareRing:
    sealed::Sealed + Copy + Default + PartialEq + Eq + Debug + Send + Sync + 'static
{
    /// XOR shares of up to [`BITS`](ShareRing::BITS) bits.
    type Xor: Copy
        + Default
        + PartialEq
        + Eq
        + Debug
        + core::ops::BitXor<Output = Self::Xor>
        + Into<u128>
        + Send
        + Sync
        + 'static;
    /// Bits of a canonical representative: 32, 64 or 128.
    const BITS: usize;
    /// Bytes of an element on the wire (little endian).
    const BYTES: usize;
    /// `self + o` in the ring.
    fn plus(self, o: Self) -> Self;
    /// `self − o` in the ring.
    fn minus(self, o: Self) -> Self;
    /// A uniform element from `rng` (one `next_u64` for Z/2^64; rejection sampling over two
    /// for F_p).
    fn draw<G: RngCore + ?Sized>(rng: &mut G) -> Self;
    /// The canonical representative.
    fn canonical(self) -> u128;
    /// The element with canonical representative `v` (reduced if `v` is not canonical).
    fn from_bits(v: u128) -> Self;
    /// The low [`BITS`](ShareRing::BITS) bits of `v` as an XOR share.
    fn xor_of(v: u128) -> Self::Xor;
    /// `k` uniform bits from `rng` (a mask).
    fn draw_mask<G: RngCore + ?Sized>(rng: &mut G, k: usize) -> u128;
    /// The little-endian encoding ([`BYTES`](ShareRing::BYTES) bytes).
    fn write_le(self, out: &mut Vec<u8>);
    /// Reads [`BYTES`](ShareRing::BYTES) bytes, rejecting a non-canonical encoding.
    ///
    /// # Errors
    /// [`CodecError`] for a wrong length or a non-canonical value.
    fn read_le(bytes: &[u8]) -> Result<Self, CodecError>;
    /// How many low bits of the shares A2B's circuit needs for the low `k` bits of the sum:
    /// `k` in Z/2^32 and Z/2^64, all 128 in F_p (the reduction mod p depends on every bit).
    fn input_bits(k: usize) -> usize;
    /// The circuit of a + b in the ring on `input_bits` bits (canonical inputs): the low
    /// `a.len()` bits of the sum.
    fn sum_circuit(bld: &mut Builder, a: &[Bit], b: &[Bit]) -> Vec<Bit>;
    /// E's circuit input in B2A for its additive share r.
    fn b2a_input(r: Self) -> u128;
    /// B2A's circuit: y − r in the ring from y ([`BITS`](ShareRing::BITS) bits) and E's input
    /// [`b2a_input`](ShareRing::b2a_input)(r).
    fn b2a_circuit(bld: &mut Builder, y: &[Bit], e_in: &[Bit]) -> Vec<Bit>;
}

/// Z/2^k for an unsigned integer type of k bits, wrapping: the rings of doram's `Z32` and
/// `Z64` words.
macro_rules! wrapping_share_ring {
    ($t:ty, $bits:expr, $draw:ident, $doc:literal) => {
        #[doc = $doc]
        impl ShareRing for $t {
            type Xor = $t;
            const BITS: usize = $bits;
            const BYTES: usize = $bits / 8;

            fn plus(self, o: $t) -> $t {
                self.wrapping_add(o)
            }

            fn minus(self, o: $t) -> $t {
                self.wrapping_sub(o)
            }

            fn draw<G: RngCore + ?Sized>(rng: &mut G) -> $t {
                rng.$draw()
            }

            fn canonical(self) -> u128 {
                u128::from(self)
            }

            fn from_bits(v: u128) -> $t {
                v as $t
            }

            fn xor_of(v: u128) -> $t {
                v as $t
            }

            fn draw_mask<G: RngCore + ?Sized>(rng: &mut G, k: usize) -> u128 {
                u128::from(u64::from(rng.$draw()) & mask(k))
            }

            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn read_le(bytes: &[u8]) -> Result<$t, CodecError> {
                length(bytes, $bits / 8)?;
                let mut b = [0u8; $bits / 8];
                b.copy_from_slice(bytes);
                Ok(<$t>::from_le_bytes(b))
            }

            fn input_bits(k: usize) -> usize {
                k
            }

            fn sum_circuit(bld: &mut Builder, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
                ripple_add(bld, a, b, Bit::ZERO)
            }

            fn b2a_input(r: $t) -> u128 {
                u128::from(r)
            }

            fn b2a_circuit(bld: &mut Builder, y: &[Bit], r: &[Bit]) -> Vec<Bit> {
                // y − r = y + ¬r + 1.
                let not_r: Vec<Bit> = r.iter().map(|&b| bld.not(b)).collect();
                ripple_add(bld, y, &not_r, Bit::ONE)
            }
        }
    };
}

wrapping_share_ring!(
    u32,
    32,
    next_u32,
    "Z/2^32: the ring of doram's `Z32` words (4-byte records)."
);
wrapping_share_ring!(
    u64,
    64,
    next_u64,
    "Z/2^64: the ring of doram's `Z64` words."
);

/// F_p: the field of doram's `Fp` words (the three-party program machine's).
impl ShareRing for Fp {
    type Xor = u128;
    const BITS: usize = 128;
    const BYTES: usize = 16;

    fn plus(self, o: Fp) -> Fp {
        self + o
    }

    fn minus(self, o: Fp) -> Fp {
        self - o
    }

    fn draw<G: RngCore + ?Sized>(rng: &mut G) -> Fp {
        Fp::random(rng)
    }

    fn canonical(self) -> u128 {
        self.to_u128()
    }

    fn from_bits(v: u128) -> Fp {
        Fp::from_u128(v)
    }

    fn xor_of(v: u128) -> u128 {
        v
    }

    fn draw_mask<G: RngCore + ?Sized>(rng: &mut G, k: usize) -> u128 {
        let lo = u128::from(rng.next_u64());
        let hi = if k > 64 {
            u128::from(rng.next_u64())
        } else {
            0
        };
        (lo | hi << 64) & mask128(k)
    }

    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }

    fn read_le(bytes: &[u8]) -> Result<Fp, CodecError> {
        length(bytes, 16)?;
        let mut b = [0u8; 16];
        b.copy_from_slice(bytes);
        Fp::from_le_bytes(b)
    }

    fn input_bits(_k: usize) -> usize {
        128
    }

    fn sum_circuit(bld: &mut Builder, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        add_mod_p(bld, a, b)
    }

    fn b2a_input(r: Fp) -> u128 {
        (-r).to_u128()
    }

    fn b2a_circuit(bld: &mut Builder, y: &[Bit], minus_r: &[Bit]) -> Vec<Bit> {
        add_mod_p(bld, y, minus_r)
    }
}

fn misfit(_: doram_twopc::TwopcError) -> Fjkw15Error {
    Fjkw15Error::InvalidInput("a conversion circuit could not be built")
}

/// Additive (Z/2^64 or F_p, three parties) → XOR between D and E, of values of the given
/// widths ([module docs](self)), optionally with a range check of the first value.
#[derive(Clone, Debug)]
pub struct A2b<R: ShareRing = u64> {
    widths: Vec<usize>,
    bound: Option<u128>,
    circuit: Circuit,
    shape: GcShape,
    ring: PhantomData<R>,
}

impl A2b {
    /// A conversion of values of Z/2^64 of `widths` bits (each 1..=64), in this order.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values or a width out of range.
    pub fn new(widths: &[usize]) -> Result<A2b, Fjkw15Error> {
        A2b::build(widths, None)
    }
}

impl<R: ShareRing> A2b<R> {
    /// A conversion of values of `R` of `widths` bits (each 1..=[`ShareRing::BITS`]), in
    /// this order; with a `bound`, the circuit also tells D whether the first value (whole,
    /// not only its low bits) is at least `bound` — an address outside the memory — and
    /// [`D::a2b_finish`] fails with [`Fjkw15Error::AddressOutOfRange`] if it is.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values, a width out of range or a bound above
    /// 2^[`ShareRing::BITS`] − 1.
    pub fn build(widths: &[usize], bound: Option<u128>) -> Result<A2b<R>, Fjkw15Error> {
        if widths.is_empty() || widths.iter().any(|&k| k == 0 || k > R::BITS) {
            return Err(Fjkw15Error::InvalidInput(
                "A2B converts values of 1 to the ring's bits",
            ));
        }
        if bound.is_some_and(|b| b > mask128(R::BITS)) {
            return Err(Fjkw15Error::InvalidInput("A2B's bound fits the ring"));
        }
        let mut bld = Builder::new();
        let mut c_wires = Vec::new();
        let mut next = 0;
        let mut outs = Vec::new();
        let mut flag = None;
        for (v, &k) in widths.iter().enumerate() {
            let check = if v == 0 { bound } else { None };
            let w = A2b::<R>::input_width(k, check.is_some());
            // Inputs per value: a (C's), then b and r (E's).
            let a = bld.garbler_bits(w);
            c_wires.extend(next..next + w);
            let b = bld.garbler_bits(w);
            let r = bld.garbler_bits(k);
            next += 2 * w + k;
            let sum = R::sum_circuit(&mut bld, &a, &b);
            if let Some(c) = check {
                let below = less_than(&mut bld, &sum, c);
                flag = Some(bld.not(below));
            }
            for (s, r) in sum.into_iter().zip(r) {
                outs.push(bld.xor(s, r));
            }
        }
        // The range flag goes out unmasked, last: D learns [x ≥ bound], 0 in a correct run.
        outs.extend(flag);
        bld.output_bits(&outs);
        let circuit = bld.finish().map_err(misfit)?;
        let shape = GcShape::new(&circuit, &c_wires)?;
        Ok(A2b {
            widths: widths.to_vec(),
            bound,
            circuit,
            shape,
            ring: PhantomData,
        })
    }

    /// The circuit's input width of a `k`-bit value: the whole element when it is checked.
    fn input_width(k: usize, checked: bool) -> usize {
        if checked { R::BITS } else { R::input_bits(k) }
    }

    fn width(&self, v: usize) -> usize {
        let k = self.widths[v];
        A2b::<R>::input_width(k, v == 0 && self.bound.is_some())
    }

    /// The number of values converted.
    pub fn values(&self) -> usize {
        self.widths.len()
    }

    /// The range checked on the first value, if any.
    pub fn bound(&self) -> Option<u128> {
        self.bound
    }

    /// The shape of the garbled circuit's messages.
    pub fn gc_shape(&self) -> &GcShape {
        &self.shape
    }

    fn check_len(&self, x: &[R]) -> Result<(), Fjkw15Error> {
        if x.len() == self.widths.len() {
            Ok(())
        } else {
            Err(Fjkw15Error::InvalidInput("one share per value"))
        }
    }
}

/// A2B, step 1: D → C, x_D + s per value ([`ShareRing::BYTES`] little-endian bytes each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct A2bFromD<R: ShareRing = u64> {
    words: Vec<R>,
}

impl<R: ShareRing> WireMessage for A2bFromD<R> {
    /// The number of values.
    type Shape = usize;
    const WHAT: &'static str = "A2B: D's masked additive shares";

    fn wire_len(count: &usize) -> usize {
        R::BYTES * count
    }

    fn fits(&self, count: &usize) -> bool {
        self.words.len() == *count
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(R::BYTES * self.words.len());
        for w in &self.words {
            w.write_le(&mut out);
        }
        out
    }

    fn decode(bytes: &[u8], count: &usize) -> Result<Self, CodecError> {
        length(bytes, R::BYTES * count)?;
        let words = bytes
            .chunks_exact(R::BYTES)
            .map(R::read_le)
            .collect::<Result<_, _>>()?;
        Ok(A2bFromD { words })
    }
}

impl D {
    /// A2B, step 1 (D): x_D + s for C, s from the D–E PRG.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn a2b_send<R: ShareRing>(
        &mut self,
        a: &A2b<R>,
        x_d: &[R],
    ) -> Result<A2bFromD<R>, Fjkw15Error> {
        a.check_len(x_d)?;
        let mut de = instance(&mut self.with_e);
        // [A2B, step 1] D → C: x_D + s.
        let words = x_d.iter().map(|&x| x.plus(R::draw(&mut de))).collect();
        Ok(A2bFromD { words })
    }

    /// A2B, step 4 (D): evaluates the circuit; D's XOR shares of the values.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape;
    /// [`Fjkw15Error::AddressOutOfRange`] if `a` checks a bound and the first value is not
    /// below it.
    pub fn a2b_finish<R: ShareRing>(
        &self,
        a: &A2b<R>,
        from_e: &GcFromE,
        from_c: &GcFromC,
    ) -> Result<Vec<R::Xor>, Fjkw15Error> {
        let out = self.gc_evaluate(&a.circuit, &a.shape, from_e, from_c)?;
        let mut pos = 0;
        let values = a
            .widths
            .iter()
            .map(|&k| {
                pos += k;
                R::xor_of(value_of(&out[pos - k..pos]))
            })
            .collect();
        if a.bound.is_some() && out.get(pos).copied().unwrap_or(true) {
            return Err(Fjkw15Error::AddressOutOfRange);
        }
        Ok(values)
    }
}

impl E {
    /// A2B, step 2 (E): b = x_E − s (s from the D–E PRG), a fresh mask r; garbles
    /// (a + b) ⊕ r. Returns E's XOR shares r and the messages to D and to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless there is one share per value.
    pub fn a2b_garble<R: ShareRing>(
        &mut self,
        a: &A2b<R>,
        x_e: &[R],
    ) -> Result<(Vec<R::Xor>, GcFromE, GcPairs), Fjkw15Error> {
        a.check_len(x_e)?;
        let mut de = instance(&mut self.with_d);
        let mut masks = Vec::with_capacity(x_e.len());
        let mut e_bits = Vec::new();
        for (v, (&x, &k)) in x_e.iter().zip(&a.widths).enumerate() {
            let b = x.minus(R::draw(&mut de));
            let r = R::draw_mask(&mut self.local, k);
            e_bits.extend(bits_of(b.canonical(), a.width(v)));
            e_bits.extend(bits_of(r, k));
            masks.push(R::xor_of(r));
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
    pub fn a2b_choose<R: ShareRing>(
        &self,
        a: &A2b<R>,
        x_c: &[R],
        from_d: &A2bFromD<R>,
        pairs: &GcPairs,
    ) -> Result<GcFromC, Fjkw15Error> {
        a.check_len(x_c)?;
        check(from_d, self.roles.party(Role::D), &a.values())?;
        let c_bits: Vec<bool> = x_c
            .iter()
            .zip(&from_d.words)
            .enumerate()
            .flat_map(|(v, (&x, &m))| bits_of(x.plus(m).canonical(), a.width(v)))
            .collect();
        // [A2B, step 3] C → D: the labels of a.
        self.gc_choose(&a.shape, pairs, &c_bits)
    }
}

/// XOR between C and E → additive among C, D and E, of `count` values of Z/2^64 or F_p
/// ([module docs](self)).
#[derive(Clone, Debug)]
pub struct B2a<R: ShareRing = u64> {
    count: usize,
    circuit: Circuit,
    shape: GcShape,
    ring: PhantomData<R>,
}

impl B2a {
    /// A conversion of `count` ≥ 1 values of Z/2^64.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values.
    pub fn new(count: usize) -> Result<B2a, Fjkw15Error> {
        B2a::build(count)
    }
}

impl<R: ShareRing> B2a<R> {
    /// A conversion of `count` ≥ 1 values of `R` (records of [`ShareRing::BITS`] bits).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] for no values.
    pub fn build(count: usize) -> Result<B2a<R>, Fjkw15Error> {
        if count == 0 {
            return Err(Fjkw15Error::InvalidInput("B2A converts at least one value"));
        }
        let k = R::BITS;
        let mut bld = Builder::new();
        let mut c_wires = Vec::new();
        let mut outs = Vec::new();
        for v in 0..count {
            // Inputs per value: y_C (C's), then y_E and E's input for r (E's).
            let yc = bld.garbler_bits(k);
            c_wires.extend(3 * k * v..3 * k * v + k);
            let ye = bld.garbler_bits(k);
            let r = bld.garbler_bits(k);
            let y: Vec<Bit> = yc.iter().zip(&ye).map(|(&a, &b)| bld.xor(a, b)).collect();
            outs.extend(R::b2a_circuit(&mut bld, &y, &r));
        }
        bld.output_bits(&outs);
        let circuit = bld.finish().map_err(misfit)?;
        let shape = GcShape::new(&circuit, &c_wires)?;
        Ok(B2a {
            count,
            circuit,
            shape,
            ring: PhantomData,
        })
    }

    /// The shape of the garbled circuit's messages.
    pub fn gc_shape(&self) -> &GcShape {
        &self.shape
    }

    fn check_len<T>(&self, y: &[T]) -> Result<(), Fjkw15Error> {
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
    pub fn b2a_garble<R: ShareRing>(
        &mut self,
        b: &B2a<R>,
        y_e: &[R::Xor],
    ) -> Result<(Vec<R>, GcFromE, GcPairs), Fjkw15Error> {
        b.check_len(y_e)?;
        let (mut ce, mut de) = (instance(&mut self.with_c), instance(&mut self.with_d));
        let mut shares = Vec::with_capacity(y_e.len());
        let mut e_bits = Vec::with_capacity(2 * R::BITS * y_e.len());
        for &y in y_e {
            let r = R::draw(&mut self.local);
            e_bits.extend(bits_of(y, R::BITS));
            e_bits.extend(bits_of(R::b2a_input(r), R::BITS));
            let z_ce = R::draw(&mut ce);
            shares.push(r.plus(z_ce).minus(R::draw(&mut de)));
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
    pub fn b2a_choose<R: ShareRing>(
        &mut self,
        b: &B2a<R>,
        y_c: &[R::Xor],
        pairs: &GcPairs,
    ) -> Result<(Vec<R>, GcFromC), Fjkw15Error> {
        b.check_len(y_c)?;
        let (mut cd, mut ce) = (instance(&mut self.with_d), instance(&mut self.with_e));
        let c_bits: Vec<bool> = y_c.iter().flat_map(|&y| bits_of(y, R::BITS)).collect();
        // [B2A] C → D: the labels of y_C.
        let to_d = self.gc_choose(&b.shape, pairs, &c_bits)?;
        let shares = (0..b.count)
            .map(|_| {
                let z_ce = R::draw(&mut ce);
                R::draw(&mut cd).minus(z_ce)
            })
            .collect();
        Ok((shares, to_d))
    }
}

impl D {
    /// B2A (D): evaluates (y_C ⊕ y_E) − r; D's additive shares, plus z_DE − z_CD.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape.
    pub fn b2a_finish<R: ShareRing>(
        &mut self,
        b: &B2a<R>,
        from_e: &GcFromE,
        from_c: &GcFromC,
    ) -> Result<Vec<R>, Fjkw15Error> {
        let out = self.gc_evaluate(&b.circuit, &b.shape, from_e, from_c)?;
        let (mut cd, mut de) = (instance(&mut self.with_c), instance(&mut self.with_e));
        Ok(out
            .chunks_exact(R::BITS)
            .map(|bits| {
                let cd_z = R::draw(&mut cd);
                R::from_bits(value_of(bits))
                    .plus(R::draw(&mut de))
                    .minus(cd_z)
            })
            .collect())
    }
}

/// A2B with a bound, after step 4: D → C and D → E, whether the first value (an address)
/// was below the bound — one byte, 0 (in range) or 1 (out of range, all parties stop with
/// [`Fjkw15Error::AddressOutOfRange`]). Always 0 in a correct run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeStatus {
    in_range: bool,
}

impl RangeStatus {
    /// The status D found.
    pub fn new(in_range: bool) -> RangeStatus {
        RangeStatus { in_range }
    }

    /// `Ok` if the address was in range.
    ///
    /// # Errors
    /// [`Fjkw15Error::AddressOutOfRange`] if it was not.
    pub fn check(self) -> Result<(), Fjkw15Error> {
        if self.in_range {
            Ok(())
        } else {
            Err(Fjkw15Error::AddressOutOfRange)
        }
    }
}

impl WireMessage for RangeStatus {
    type Shape = ();
    const WHAT: &'static str = "A2B: D's range status";

    fn wire_len(_: &()) -> usize {
        1
    }

    fn fits(&self, _: &()) -> bool {
        true
    }

    fn encode(&self) -> Vec<u8> {
        vec![u8::from(!self.in_range)]
    }

    fn decode(bytes: &[u8], _: &()) -> Result<Self, CodecError> {
        length(bytes, 1)?;
        match bytes[0] {
            0 => Ok(RangeStatus::new(true)),
            1 => Ok(RangeStatus::new(false)),
            _ => Err(CodecError::OutOfRange {
                what: "a range status is 0 or 1",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::party::{Roles, setup_in_process};
    use doram_core::Entropy;
    use doram_field::Fp;
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

    #[test]
    fn a2b_then_b2a_round_trip_over_z32() {
        let (mut c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(4));
        let mut rng = doram_prim::AesPrg::new(doram_core::Seed([6; 16]));
        for widths in [vec![32], vec![5, 32], vec![1, 13, 31, 32]] {
            let a = A2b::<u32>::build(&widths, None).unwrap();
            let edge = [u32::MAX, 0, 1 << 31];
            let x: Vec<u32> = (0..widths.len())
                .map(|v| edge.get(v).copied().unwrap_or_else(|| rng.next_u32()))
                .collect();
            let x_c: Vec<u32> = x.iter().map(|_| rng.next_u32()).collect();
            let x_d: Vec<u32> = x.iter().map(|_| rng.next_u32()).collect();
            let x_e: Vec<u32> = (0..x.len())
                .map(|v| x[v].wrapping_sub(x_c[v]).wrapping_sub(x_d[v]))
                .collect();
            let to_c = d.a2b_send(&a, &x_d).unwrap();
            let (at_e, gc_d, pairs) = e.a2b_garble(&a, &x_e).unwrap();
            let gc_c = c.a2b_choose(&a, &x_c, &to_c, &pairs).unwrap();
            let at_d = d.a2b_finish(&a, &gc_d, &gc_c).unwrap();
            for (v, &k) in widths.iter().enumerate() {
                let want = u64::from(x[v]) & mask(k);
                assert_eq!(u64::from(at_d[v] ^ at_e[v]), want, "{widths:?}, {v}");
            }
            let b = B2a::<u32>::build(x.len()).unwrap();
            let y_c: Vec<u32> = x.iter().map(|_| rng.next_u32()).collect();
            let y_e: Vec<u32> = x.iter().zip(&y_c).map(|(a, b)| a ^ b).collect();
            let (s_e, gc_d, pairs) = e.b2a_garble(&b, &y_e).unwrap();
            let (s_c, gc_c) = c.b2a_choose(&b, &y_c, &pairs).unwrap();
            let s_d = d.b2a_finish(&b, &gc_d, &gc_c).unwrap();
            for v in 0..x.len() {
                let sum = s_c[v].wrapping_add(s_d[v]).wrapping_add(s_e[v]);
                assert_eq!(sum, x[v], "{widths:?}, value {v}");
            }
        }
    }

    /// Additive shares of `x` in F_p among C, D and E.
    fn share_fp(x: Fp, rng: &mut doram_prim::AesPrg) -> (Fp, Fp, Fp) {
        let (c, d) = (Fp::random(rng), Fp::random(rng));
        (c, d, x - c - d)
    }

    #[test]
    fn a2b_then_b2a_round_trip_over_fp() {
        let (mut c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(3));
        let mut rng = doram_prim::AesPrg::new(doram_core::Seed([7; 16]));
        let edge = [
            Fp::ZERO,
            Fp::ONE,
            -Fp::ONE,
            Fp::from_u128(1 << 64),
            -Fp::from_u64(5),
        ];
        for widths in [vec![128], vec![5, 128], vec![1, 13, 64, 128, 128]] {
            let a = A2b::<Fp>::build(&widths, None).unwrap();
            let x: Vec<Fp> = (0..widths.len())
                .map(|v| edge.get(v).copied().unwrap_or_else(|| Fp::random(&mut rng)))
                .collect();
            let sh: Vec<(Fp, Fp, Fp)> = x.iter().map(|&v| share_fp(v, &mut rng)).collect();
            let x_c: Vec<Fp> = sh.iter().map(|s| s.0).collect();
            let x_d: Vec<Fp> = sh.iter().map(|s| s.1).collect();
            let x_e: Vec<Fp> = sh.iter().map(|s| s.2).collect();
            let to_c = d.a2b_send(&a, &x_d).unwrap();
            let (at_e, gc_d, pairs) = e.a2b_garble(&a, &x_e).unwrap();
            let gc_c = c.a2b_choose(&a, &x_c, &to_c, &pairs).unwrap();
            let at_d = d.a2b_finish(&a, &gc_d, &gc_c).unwrap();
            for (v, &k) in widths.iter().enumerate() {
                assert_eq!(
                    at_d[v] ^ at_e[v],
                    x[v].to_u128() & mask128(k),
                    "{widths:?}, {v}"
                );
            }
            // Back: XOR shares between C and E of the canonical 128-bit values.
            let b = B2a::<Fp>::build(x.len()).unwrap();
            let y_c: Vec<u128> = x.iter().map(|_| Fp::random(&mut rng).to_u128()).collect();
            let y_e: Vec<u128> = x.iter().zip(&y_c).map(|(a, b)| a.to_u128() ^ b).collect();
            let (s_e, gc_d, pairs) = e.b2a_garble(&b, &y_e).unwrap();
            let (s_c, gc_c) = c.b2a_choose(&b, &y_c, &pairs).unwrap();
            let s_d = d.b2a_finish(&b, &gc_d, &gc_c).unwrap();
            for v in 0..x.len() {
                assert_eq!(s_c[v] + s_d[v] + s_e[v], x[v], "{widths:?}, value {v}");
            }
        }
    }

    #[test]
    fn a2b_with_a_bound_stops_d_exactly_outside_it() {
        let (c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::InsecureSeed(4));
        let mut rng = doram_prim::AesPrg::new(doram_core::Seed([8; 16]));
        let n = 13u64;
        let a = A2b::<Fp>::build(&[4, 128], Some(u128::from(n))).unwrap();
        // Out of range: n, above, 2^4 + 3 (whose low 4 bits are in range) and −1 (= p − 1).
        let cases = [0, 12, 13, 14, 19, 1 << 40].map(Fp::from_u64);
        for addr in cases.into_iter().chain([-Fp::ONE]) {
            let (ac, ad, ae) = share_fp(addr, &mut rng);
            let (vc, vd, ve) = share_fp(Fp::from_u64(99), &mut rng);
            let to_c = d.a2b_send(&a, &[ad, vd]).unwrap();
            let (at_e, gc_d, pairs) = e.a2b_garble(&a, &[ae, ve]).unwrap();
            let gc_c = c.a2b_choose(&a, &[ac, vc], &to_c, &pairs).unwrap();
            match d.a2b_finish(&a, &gc_d, &gc_c) {
                Ok(at_d) => {
                    assert!(addr.to_u128() < u128::from(n), "{addr:?} passed");
                    assert_eq!(at_d[0] ^ at_e[0], addr.to_u128());
                    assert_eq!(at_d[1] ^ at_e[1], 99);
                }
                Err(err) => {
                    assert!(addr.to_u128() >= u128::from(n), "{addr:?} failed");
                    assert_eq!(err, Fjkw15Error::AddressOutOfRange);
                }
            }
        }
    }

    #[test]
    fn the_fp_adder_costs_three_ands_per_bit() {
        let a = A2b::<Fp>::build(&[128], None).unwrap();
        let ands = doram_twopc::GateCounts::of(&a.circuit).and;
        assert!(ands <= 3 * 128, "{ands} ANDs");
    }
}
