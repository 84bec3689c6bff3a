//! Three-halves garbling (RR21) with free-XOR: an AND gate costs three half-length ciphertexts
//! and five control bits, `1.5κ + 5 = 197` bits at κ = 128, where half-gates ([`gc`]) needs
//! `2κ = 256`.
//!
//! RR21 = Rosulek, Roy, "Three Halves Make a Whole? Beating the Half-Gates Lower Bound for
//! Garbled Circuits", CRYPTO 2021, ePrint 2021/749. The scheme is RR21's construction for
//! AND gates ("odd-parity" gates, where one row of the truth table differs). The figure and
//! equation numbers below refer to the ePrint version and have not been checked against its
//! text; the matrices have been checked by the tests, which run every row of every gate
//! against plaintext. The garbler makes six hash calls per AND gate, the evaluator three.
//!
//! [`gc`]: crate::gc
//!
//! # Labels, slices and colours
//!
//! A label is a 128-bit [`Block`] `W = W_L ‖ W_R`, sliced into halves of κ/2 = 64 bits: `W_L`
//! is the low 64 bits, `W_R` the high 64 bits. Free-XOR as in [`gc`]: the labels of a wire are
//! `W⁰` (false, held by the [`Garbler`]) and `W¹ = W⁰ ⊕ Δ`, `Δ = Δ_L ‖ Δ_R` with `lsb(Δ) = 1`,
//! so a label's colour (point-and-permute bit) `lsb(W) = lsb(W_L)` tells the two apart. XOR
//! and NOT gates are as in [`gc`] and send nothing.
//!
//! For an AND gate with input wires `A`, `B`, write `A_i` for the label of colour `i`
//! (`A_0 = A⁰ ⊕ lsb(A⁰)·Δ`, `A_1 = A_0 ⊕ Δ`), likewise `B_j`, and `(a, b)` for the colours of
//! the true labels (`a = 1 ⊕ lsb(A⁰)`): the row `(i, j) = (a, b)` of the gate is the one whose
//! output is true.
//!
//! # Evaluating (RR21 §5, Eq. 4, Fig. 3–4)
//!
//! The evaluator holds `A = A_i`, `B = B_j` and sees `i = lsb(A)`, `j = lsb(B)`. With the hash
//! `H` below and the AND gate's tweaks `τ_A, τ_B, τ_AB`, it computes `h_A = H(A, τ_A)`,
//! `h_B = H(B, τ_B)`, `h_AB = H(A ⊕ B, τ_AB)`; `pad(h)` is the low 64 bits of a hash and
//! `bit(h)` its bit 64. From the gate's ciphertexts `G_0, G_1, G_2` (64 bits each) and control
//! bits `z_0..z_4`:
//!
//! 1. `[RR21 §5.2]` decrypt the row's control bits (the "dice"):
//!    `r_1 = z_0 ⊕ i·z_2 ⊕ (i⊕j)·z_4 ⊕ bit(h_A) ⊕ bit(h_AB)`,
//!    `r_2 = z_1 ⊕ j·z_3 ⊕ (i⊕j)·z_4 ⊕ bit(h_B) ⊕ bit(h_AB)`;
//! 2. `[RR21 Fig. 3–4]` the row's control matrix `R_ij = r_1·S_1 ⊕ r_2·S_2 ⊕ R_p,ij`, a 2×4
//!    matrix over `(A_L, A_R, B_L, B_R)` with
//!    `S_1 = [1 1 1 0; 1 0 0 1]`, `S_2 = [1 0 0 1; 0 1 1 1]` and the public part of
//!    odd-parity gates `R_p,ij = [0 0 (1⊕i) 0; 0 (1⊕j) 0 0]`;
//! 3. `[RR21 Eq. 4]` the output label, the row `(i, j)` of `V·[C; G] = M·H ⊕ R·[A; B; Δ]`:
//!    `C_L = pad(h_A) ⊕ pad(h_AB) ⊕ i·G_0 ⊕ (i⊕j)·G_2 ⊕ R_ij,0·(A_L, A_R, B_L, B_R)`,
//!    `C_R = pad(h_B) ⊕ pad(h_AB) ⊕ j·G_1 ⊕ (i⊕j)·G_2 ⊕ R_ij,1·(A_L, A_R, B_L, B_R)`.
//!
//! # Garbling (RR21 §5, Eq. 4–5, Fig. 3, Fig. 6)
//!
//! The garbler picks the control matrices and solves Eq. 4 for `[C; G]`:
//!
//! 1. `[RR21 Fig. 3]` two fresh secret random bits `(s_1, s_2)` (the `R_$` part), and for each
//!    row the compressed control bits `r̄_ij = (s_1, s_2) ⊕ a·R̄_a,ij ⊕ b·R̄_b,ij` with
//!    `R̄_a = ((0,0), (1,1), (0,1), (1,0))`, `R̄_b = ((0,0), (1,0), (1,1), (0,1))` for
//!    `ij = 00, 01, 10, 11`: every row's pair is uniform on its own, and together they satisfy
//!    `K·R = K·[0 0 t]` (Eq. 5), which makes Eq. 4 solvable;
//! 2. `[RR21 Eq. 4]` the right-hand side of row `ij`:
//!    `L_ij = pad(H(A_i, τ_A)) ⊕ pad(H(A_i ⊕ B_j, τ_AB)) ⊕ R_ij,0·(A_i, B_j) ⊕ t_ij·Δ_L`,
//!    `R_ij = pad(H(B_j, τ_B)) ⊕ pad(H(A_i ⊕ B_j, τ_AB)) ⊕ R_ij,1·(A_i, B_j) ⊕ t_ij·Δ_R`,
//!    `t_ij = [ij = ab]`: six hashes, as `A_1 ⊕ B_1 = A_0 ⊕ B_0` and `A_1 ⊕ B_0 = A_0 ⊕ B_1`;
//! 3. `[RR21 Eq. 10]` the left inverse `V⁻¹` of `V`: the output's false label
//!    `C = L_00 ‖ R_00`, and `G_0 = L_00 ⊕ R_00 ⊕ L_10 ⊕ R_10`,
//!    `G_1 = L_00 ⊕ R_00 ⊕ L_01 ⊕ R_01`, `G_2 = L_10 ⊕ L_11`;
//! 4. `[RR21 §5.2]` the same `V⁻¹` on the bit rows `r̄_ij,1 ⊕ bit(H(A_i)) ⊕ bit(H(A_i ⊕ B_j))`
//!    and `r̄_ij,2 ⊕ bit(H(B_j)) ⊕ bit(H(A_i ⊕ B_j))` gives `z_0..z_4`.
//!
//! The evaluator of row `ij` then obtains `C ⊕ t_ij·Δ`: the false label in three rows, the
//! true one in row `(a, b)`. Its view of the control bits of one row is uniform, so the
//! coefficients it applies reveal nothing about `(a, b)`.
//!
//! # The hash and its tweaks
//!
//! RR21 prove the scheme secure when `H` (with `κ/2 + 1` output bits) is a *randomized
//! tweakable circular correlation-robust* hash, and give a one-call instantiation from an ideal
//! permutation whose linear map must mix each 64-bit half on its own (multiplication in
//! GF(2^64)). The half-gates hash of [`hash::gc_hash`](crate::hash::gc_hash), `π(σ(x) ⊕ i) ⊕ σ(x)`,
//! is not that: its orthomorphism `σ(hi ‖ lo) = (hi ⊕ lo) ‖ hi` moves whole halves, so a
//! sliced output `pad(H(X ⊕ Δ)) ⊕ (a linear combination of Δ_L, Δ_R)` can lose the Δ-dependent
//! mask that keeps π from being inverted on it. This module therefore uses the two-call
//! tweakable circular correlation-robust hash of GKWY20 §7.4 (the TMMO construction),
//! `H(x, τ) = π(π(x) ⊕ τ) ⊕ π(x)` over the fixed-key permutation π of
//! [`doram_prim::aes`] ([`FixedKeyAes::tccr`]): its output on an input the evaluator cannot
//! compute is `π` of a point it cannot compute, uniform whatever linear term of Δ is added to
//! it. It costs two AES calls per hash (twelve per garbled AND gate, six per evaluated one).
//!
//! Tweaks: AND gate number `g` (counted over the garbler's or evaluator's lifetime, so tweaks
//! never repeat under one Δ) uses `τ_A = T + 3g`, `τ_B = T + 3g + 1`, `τ_AB = T + 3g + 2`
//! (RR21 uses `3g`, `3g + 1`, `3g + 2` for its gate `g`), where `T = 0x3_2 << 64` separates
//! these tweaks from those of other uses of the same hash under the same Δ (the OT extension's
//! hashes are tweaked by OT indices below `2^64`).
//!
//! GKWY20 = Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from Fixed-Key
//! Block Ciphers", IEEE S&P 2020.
//!
//! # Table encoding
//!
//! A gate's table is `G_0, G_1, G_2` (little-endian, 8 bytes each: 24 bytes) and its control
//! bits `z_0..z_4`. [`Tables`] hold them in groups of [`GROUP`] = 8 AND gates: the group's
//! 8 × 24 ciphertext bytes, then its 40 control bits in 5 bytes, LSB first, gate `k` of the
//! group at bits `5k..5k + 5` (`z_m` at bit `5k + m`). A group is 197 bytes: exactly
//! `1.5κ + 5` bits per gate. A last group of `r < 8` gates takes `24r + ⌈5r/8⌉` bytes, its
//! padding bits zero ([`table_bytes`]).
//!
//! # Output decoding
//!
//! As in [`gc`]: the garbler reveals `lsb(W⁰)` of each output wire. (RR21 decodes through a
//! hash of the output labels instead, for the privacy-free and authenticity notions of a
//! garbling scheme; the two-party protocol here only needs the permute bits.)
//!
//! # Example
//!
//! Two parties over the driver, as with half-gates; only the garbler and evaluator types
//! change (and the garbler takes a generator for its random bits):
//!
//! ```
//! use doram_net::{LocalMesh, run_parties};
//! use doram_twopc::gc::{Circuit, Gate, random_delta};
//! use doram_twopc::three_halves::{Evaluator, Garbler};
//! use doram_twopc::{driver, insecure_rng_for_tests};
//!
//! // out = x ∧ y, x from the garbler (P0), y from the evaluator (P1).
//! let c = Circuit::new(1, 1, 3, vec![Gate::And { a: 0, b: 1, out: 2 }], vec![2]).unwrap();
//! let out = run_parties(LocalMesh::new(2).build(), "gc", |mut s| {
//!     let mut rng = insecure_rng_for_tests(s.me().index() as u64);
//!     if s.me().index() == 0 {
//!         let delta = random_delta(&mut rng);
//!         let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
//!         let mut g = Garbler::new(delta, c.wires(), &mut rng).unwrap();
//!         driver::garble(&mut s, &mut ot, &mut g, &c, &[true], &mut rng).unwrap()
//!     } else {
//!         let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
//!         let mut e = Evaluator::new(c.wires());
//!         driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true]).unwrap()
//!     }
//! });
//! for o in out {
//!     assert_eq!(o.unwrap(), vec![true]);
//! }
//! ```

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_prim::FixedKeyAes;
use doram_prim::aes::{AesKernel, Block, WithAes, fixed_key, lsb, mask};
use doram_prim::prg::AesPrg;
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::gc::{Gate, WireId, set_wire, wire};

/// Bytes of one AND gate's three ciphertext halves.
pub const CIPHERTEXT_BYTES: usize = 24;

/// Control bits per AND gate.
pub const CONTROL_BITS: usize = 5;

/// AND gates per group of the table encoding: a whole number of bytes (197).
pub const GROUP: usize = 8;

/// Bytes of a whole group of [`GROUP`] tables.
pub const GROUP_BYTES: usize = GROUP * CIPHERTEXT_BYTES + GROUP * CONTROL_BITS / 8;

/// The high 64 bits of every tweak of this scheme (see the module docs).
const TWEAK_TAG: Block = 0x32 << 64;

/// Bytes of the encoded tables of `ands` AND gates: `24·ands + ⌈5·ands/8⌉`.
pub const fn table_bytes(ands: usize) -> usize {
    CIPHERTEXT_BYTES * ands + (CONTROL_BITS * ands).div_ceil(8)
}

/// One AND gate's garbled table: three half-length ciphertexts and five control bits (bit `m`
/// of `z` is `z_m`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AndTable {
    /// `G_0, G_1, G_2`.
    pub g: [u64; 3],
    /// `z_0..z_4` in bits 0–4.
    pub z: u8,
}

/// Garbled tables in their wire encoding (module docs, "Table encoding"): the garbler appends
/// to them, the driver sends them in whole groups, the evaluator reads them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    /// Whole groups, then the ciphertexts of the unfinished group.
    bytes: Vec<u8>,
    /// Tables held.
    ands: usize,
    /// The control bits of the unfinished group (garbler side).
    pending: u64,
    /// Whether the encoding is finished: its last group, if short, has its control bits
    /// written (decoded tables, or all of the garbler's tables given out by [`Tables::front`]).
    sealed: bool,
}

impl Tables {
    /// No tables.
    pub fn new() -> Tables {
        Tables::default()
    }

    /// Room for `ands` tables.
    pub fn with_capacity(ands: usize) -> Tables {
        Tables {
            bytes: Vec::with_capacity(table_bytes(ands)),
            ..Tables::default()
        }
    }

    /// Tables held.
    pub fn ands(&self) -> usize {
        self.ands
    }

    /// Drops every table.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ands = 0;
        self.pending = 0;
        self.sealed = false;
    }

    /// Appends a table.
    #[inline(always)]
    pub(crate) fn push(&mut self, t: AndTable) {
        let mut c = [0u8; CIPHERTEXT_BYTES];
        c[..8].copy_from_slice(&t.g[0].to_le_bytes());
        c[8..16].copy_from_slice(&t.g[1].to_le_bytes());
        c[16..].copy_from_slice(&t.g[2].to_le_bytes());
        self.bytes.extend_from_slice(&c);
        let k = self.ands % GROUP;
        self.pending |= u64::from(t.z & 0x1f) << (CONTROL_BITS * k);
        self.ands += 1;
        if k == GROUP - 1 {
            self.bytes
                .extend_from_slice(&self.pending.to_le_bytes()[..GROUP * CONTROL_BITS / 8]);
            self.pending = 0;
        }
    }

    /// The encoding of the first `k` tables, `k` a multiple of [`GROUP`] or all of them:
    /// [`table_bytes`]`(k)` bytes, one message.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for another `k`.
    pub fn front(&mut self, k: usize) -> Result<&[u8], TwopcError> {
        self.check_front(k)?;
        if k == self.ands && !k.is_multiple_of(GROUP) && !self.sealed {
            // The short last group leaves now: write out its control bits. No table may be
            // appended after this until the tables are dropped.
            let bits = (CONTROL_BITS * (k % GROUP)).div_ceil(8);
            self.bytes
                .extend_from_slice(&self.pending.to_le_bytes()[..bits]);
            self.pending = 0;
            self.sealed = true;
        }
        Ok(&self.bytes[..table_bytes(k)])
    }

    /// Drops the first `k` tables, `k` a multiple of [`GROUP`] or all of them (after
    /// [`Tables::front`] of them if they were all and not a whole number of groups).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for another `k`.
    pub fn drop_front(&mut self, k: usize) -> Result<(), TwopcError> {
        self.check_front(k)?;
        if k == self.ands {
            self.clear();
        } else {
            self.bytes.drain(..k / GROUP * GROUP_BYTES);
            self.ands -= k;
        }
        Ok(())
    }

    fn check_front(&self, k: usize) -> Result<(), TwopcError> {
        if k > self.ands
            || (k != self.ands && !k.is_multiple_of(GROUP))
            || (self.sealed && k != self.ands)
        {
            return Err(TwopcError::ApiMisuse(
                "tables leave in whole groups of 8, or all at once",
            ));
        }
        Ok(())
    }

    /// Reads `ands` tables from a message of `peer`'s (`what`): exactly [`table_bytes`]`(ands)`
    /// bytes, padding bits zero.
    ///
    /// # Errors
    /// [`PeerFault`] for another length or nonzero padding bits.
    pub fn decode(
        peer: PartyId,
        what: &'static str,
        bytes: Vec<u8>,
        ands: usize,
    ) -> Result<Tables, PeerFault> {
        doram_core::wire::exact_len(peer, what, &bytes, table_bytes(ands))?;
        let r = ands % GROUP;
        if r != 0 {
            let used = CONTROL_BITS * r;
            let last = bytes[bytes.len() - 1];
            if !used.is_multiple_of(8) && last >> (used % 8) != 0 {
                return Err(PeerFault::malformed(peer, what, "nonzero padding bits"));
            }
        }
        Ok(Tables {
            bytes,
            ands,
            pending: 0,
            sealed: true,
        })
    }

    /// Table number `n` (below [`Tables::ands`], in a finished encoding).
    #[inline(always)]
    fn get(&self, n: usize) -> AndTable {
        let (q, k) = (n / GROUP, n % GROUP);
        let base = q * GROUP_BYTES;
        let in_group = (self.ands - q * GROUP).min(GROUP);
        let c = base + CIPHERTEXT_BYTES * k;
        let g = [
            word(&self.bytes, c),
            word(&self.bytes, c + 8),
            word(&self.bytes, c + 16),
        ];
        let bits_at = base + CIPHERTEXT_BYTES * in_group;
        let first = CONTROL_BITS * k;
        let lo = self.bytes[bits_at + first / 8];
        let hi = self
            .bytes
            .get(bits_at + first / 8 + 1)
            .copied()
            .unwrap_or(0);
        let z = ((u16::from(lo) | (u16::from(hi) << 8)) >> (first % 8)) as u8 & 0x1f;
        AndTable { g, z }
    }

    /// Whether table `n` can be read (`n < ands`, and the tables' encoding finished).
    #[inline(always)]
    fn readable(&self, n: usize) -> bool {
        n < self.ands && (self.sealed || self.ands.is_multiple_of(GROUP))
    }
}

/// The little-endian word at `bytes[at..at + 8]`.
#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The low (left) half of a block.
#[inline(always)]
fn left(x: Block) -> u64 {
    x as u64
}

/// The high (right) half of a block.
#[inline(always)]
fn right(x: Block) -> u64 {
    (x >> 64) as u64
}

/// `l ‖ r` as a block.
#[inline(always)]
fn join(l: u64, r: u64) -> Block {
    Block::from(l) | (Block::from(r) << 64)
}

/// The 64-bit mask of a bit.
#[inline(always)]
fn m64(bit: bool) -> u64 {
    0u64.wrapping_sub(u64::from(bit))
}

/// The κ/2-bit pad of a hash output.
#[inline(always)]
fn pad(h: Block) -> u64 {
    h as u64
}

/// The extra output bit of a hash, which masks a control bit.
#[inline(always)]
fn bit(h: Block) -> bool {
    (h >> 64) & 1 == 1
}

/// `[RR21 Eq. 10]` the gate's table from the right-hand sides of its four rows (halves L, R and
/// the two control bits of row ij): [C; G] = V⁻¹·(right-hand side), on the halves and on the bits.
#[inline(always)]
fn solve_rows(rows: [(u64, u64, bool, bool); 4]) -> (Block, AndTable) {
    let [r00, r01, r10, r11] = rows;
    let c = join(r00.0, r00.1);
    let g = [
        r00.0 ^ r00.1 ^ r10.0 ^ r10.1,
        r00.0 ^ r00.1 ^ r01.0 ^ r01.1,
        r10.0 ^ r11.0,
    ];
    let z = [
        r00.2,
        r00.3,
        r00.2 ^ r00.3 ^ r10.2 ^ r10.3,
        r00.2 ^ r00.3 ^ r01.2 ^ r01.3,
        r10.2 ^ r11.2,
    ];
    let mut zb = 0u8;
    for (m, &zm) in z.iter().enumerate() {
        zb |= u8::from(zm) << m;
    }
    (c, AndTable { g, z: zb })
}

/// `[RR21 Fig. 3–4]` `R_ij·(A_L, A_R, B_L, B_R)` for `R_ij = r_1·S_1 ⊕ r_2·S_2 ⊕ R_p,ij`: the
/// (left, right) halves it adds to row `ij`'s output.
#[inline(always)]
fn control_terms(r1: bool, r2: bool, i: bool, j: bool, a: Block, b: Block) -> (u64, u64) {
    let (al, ar, bl, br) = (left(a), right(a), left(b), right(b));
    let (m1, m2) = (m64(r1), m64(r2));
    // S_1 = [1 1 1 0; 1 0 0 1], S_2 = [1 0 0 1; 0 1 1 1].
    let l = (m1 & (al ^ ar ^ bl)) ^ (m2 & (al ^ br)) ^ (m64(!i) & bl);
    let r = (m1 & (al ^ br)) ^ (m2 & (ar ^ bl ^ br)) ^ (m64(!j) & ar);
    (l, r)
}

/// `[RR21 §5.2]` The control bits `(r_1, r_2)` of row `(i, j)` from the gate's `z_0..z_4` and
/// the evaluator's hashes `[h_A, h_B, h_AB]`.
#[inline(always)]
fn row_control_bits(z: u8, i: bool, j: bool, [ha, hb, hab]: [Block; 3]) -> (bool, bool) {
    let z = [z & 1 == 1, z & 2 == 2, z & 4 == 4, z & 8 == 8, z & 16 == 16];
    let r1 = z[0] ^ (i & z[2]) ^ ((i ^ j) & z[4]) ^ bit(ha) ^ bit(hab);
    let r2 = z[1] ^ (j & z[3]) ^ ((i ^ j) & z[4]) ^ bit(hb) ^ bit(hab);
    (r1, r2)
}

/// `[RR21 Fig. 3]` `R̄_a,ij` and `R̄_b,ij` for `ij = 2i + j`: the control bits that the
/// true row's position `(a, b)` adds to row `ij`.
const R_BAR_A: [(bool, bool); 4] = [(false, false), (true, true), (false, true), (true, false)];
const R_BAR_B: [(bool, bool); 4] = [(false, false), (true, false), (true, true), (false, true)];

/// The tweaks `(τ_A, τ_B, τ_AB)` of AND gate `g`.
#[inline(always)]
fn tweaks(g: u64) -> [Block; 3] {
    let t = TWEAK_TAG + 3 * Block::from(g);
    [t, t + 1, t + 2]
}

/// `H(x_k, τ_k) = π(π(x_k) ⊕ τ_k) ⊕ π(x_k)` (GKWY20 §7.4) on a few blocks, the calls of each
/// round interleaved.
#[inline(always)]
fn hash_n<K: AesKernel, const N: usize>(aes: &mut K, xs: [Block; N], ts: [Block; N]) -> [Block; N] {
    let mut p = [0 as Block; N];
    for (p, x) in p.iter_mut().zip(xs) {
        *p = aes.encrypt(x);
    }
    let mut h = [0 as Block; N];
    for ((h, p), t) in h.iter_mut().zip(p).zip(ts) {
        *h = aes.encrypt(p ^ t) ^ p;
    }
    h
}

/// The three-halves garbler: Δ, the false label of every wire, and the generator of the
/// control matrices' secret random bits.
pub struct Garbler {
    aes: &'static FixedKeyAes,
    delta: Block,
    zero: Vec<Block>,
    next_and: u64,
    prg: AesPrg,
    /// Unused random bits, and how many are left.
    coins: Block,
    coins_left: u32,
}

impl std::fmt::Debug for Garbler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Garbler")
            .field("wires", &self.zero.len())
            .field("next_and", &self.next_and)
            .finish_non_exhaustive()
    }
}

impl Garbler {
    /// A garbler with global offset `delta` for a circuit of `wires` wires; the random bits of
    /// the control matrices come from a generator seeded from `rng`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `lsb(delta) = 0` (point-and-permute needs it set).
    pub fn new<R: RngCore + CryptoRng + ?Sized>(
        delta: Block,
        wires: usize,
        rng: &mut R,
    ) -> Result<Garbler, TwopcError> {
        if !lsb(delta) {
            return Err(TwopcError::ApiMisuse("garbling Δ must have its lsb set"));
        }
        Ok(Garbler {
            aes: fixed_key(),
            delta,
            zero: vec![0; wires],
            next_and: 0,
            prg: AesPrg::from_rng(rng),
            coins: 0,
            coins_left: 0,
        })
    }

    /// Δ.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// Starts a new circuit of `wires` wires with the same Δ; the AND counter runs on.
    pub fn reset_wires(&mut self, wires: usize) {
        self.zero.clear();
        self.zero.resize(wires, 0);
    }

    /// Sets the false label of wire `w` (an input wire).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn set_zero_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        set_wire(&mut self.zero, w, label)
    }

    /// The false label of wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn zero_label(&self, w: WireId) -> Result<Block, TwopcError> {
        wire(&self.zero, w)
    }

    /// The label encoding `bit` on wire `w`: `W⁰ ⊕ bit·Δ`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn label(&self, w: WireId, bit: bool) -> Result<Block, TwopcError> {
        Ok(wire(&self.zero, w)? ^ (mask(bit) & self.delta))
    }

    /// Garbles one gate; an AND gate appends its table to `tables`. (For many gates,
    /// [`Garbler::garble_batch`] is faster.)
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn garble(&mut self, gate: &Gate, tables: &mut Tables) -> Result<(), TwopcError> {
        self.garble_batch(std::slice::from_ref(gate), tables)
    }

    /// Garbles `gates` in order, appending the AND gates' tables to `tables`, with the cipher
    /// in hand for the whole slice.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range (the gates before it are garbled),
    /// or if `tables` ends with a short group already given out by [`Tables::front`].
    pub fn garble_batch(&mut self, gates: &[Gate], tables: &mut Tables) -> Result<(), TwopcError> {
        if tables.sealed {
            return Err(TwopcError::ApiMisuse(
                "tables given out with a short last group take no more gates",
            ));
        }
        tables.bytes.reserve(table_bytes(gates.len().min(1 << 16)));
        let aes = self.aes;
        aes.with_aes(GarbleBatch {
            garbler: self,
            gates,
            tables,
        })
    }

    /// Two fresh secret random bits.
    #[inline(always)]
    fn coins(&mut self) -> (bool, bool) {
        if self.coins_left == 0 {
            self.coins = self.prg.next_u128();
            self.coins_left = 64;
        }
        let c = self.coins;
        self.coins >>= 2;
        self.coins_left -= 1;
        (c & 1 == 1, c & 2 == 2)
    }

    /// One gate with the cipher in hand.
    #[inline(always)]
    fn garble_with<K: AesKernel>(
        &mut self,
        aes: &mut K,
        gate: &Gate,
        tables: &mut Tables,
    ) -> Result<(), TwopcError> {
        match *gate {
            Gate::Xor { a, b, out } => {
                let c = wire(&self.zero, a)? ^ wire(&self.zero, b)?;
                set_wire(&mut self.zero, out, c)
            }
            Gate::Inv { a, out } => {
                let c = wire(&self.zero, a)? ^ self.delta;
                set_wire(&mut self.zero, out, c)
            }
            Gate::And { a, b, out } => {
                let (a0, b0) = (wire(&self.zero, a)?, wire(&self.zero, b)?);
                let coins = self.coins();
                let (c, t) = self.and_with(aes, a0, b0, coins);
                set_wire(&mut self.zero, out, c)?;
                tables.push(t);
                Ok(())
            }
        }
    }

    /// `[RR21 §5]` The output's false label and the table of the next AND gate, with input
    /// false labels `a0`, `b0` and the random bits `s` of the control matrices. `s` must be
    /// secret and uniformly random, fresh for every gate, as [`Garbler::garble_batch`] draws
    /// them; it is a parameter here for tests that run through its four values.
    pub fn and_table(&mut self, a0: Block, b0: Block, s: (bool, bool)) -> (Block, AndTable) {
        struct One<'a>(&'a mut Garbler, Block, Block, (bool, bool));
        impl WithAes for One<'_> {
            type Output = (Block, AndTable);
            #[inline(always)]
            fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
                let One(g, a0, b0, s) = self;
                g.and_with(aes, a0, b0, s)
            }
        }
        let aes = self.aes;
        aes.with_aes(One(self, a0, b0, s))
    }

    /// `[RR21 §5, Eq. 4, Eq. 10]` the garbling of one AND gate; counts the gate.
    #[inline(always)]
    fn and_with<K: AesKernel>(
        &mut self,
        aes: &mut K,
        a0: Block,
        b0: Block,
        (s1, s2): (bool, bool),
    ) -> (Block, AndTable) {
        let d = self.delta;
        let [ta, tb, tab] = tweaks(self.next_and);
        self.next_and += 1;
        // Colour-indexed labels: A_i has colour i; the true label has colour a = 1 ⊕ lsb(A⁰).
        let (pa, pb) = (lsb(a0), lsb(b0));
        let a_col0 = a0 ^ (mask(pa) & d);
        let b_col0 = b0 ^ (mask(pb) & d);
        let (ab_a, ab_b) = (!pa, !pb);
        let labels_a = [a_col0, a_col0 ^ d];
        let labels_b = [b_col0, b_col0 ^ d];
        // [RR21 Eq. 4] the six hashes: H(A_0), H(A_1), H(B_0), H(B_1), H(A_0⊕B_0), H(A_0⊕B_1).
        let h = hash_n(
            aes,
            [
                labels_a[0],
                labels_a[1],
                labels_b[0],
                labels_b[1],
                a_col0 ^ b_col0,
                a_col0 ^ b_col0 ^ d,
            ],
            [ta, ta, tb, tb, tab, tab],
        );
        let (ha, hb, hx) = ([h[0], h[1]], [h[2], h[3]], [h[4], h[5]]);
        let (dl, dr) = (left(d), right(d));
        // [RR21 Eq. 4] right-hand side of row ij: halves (L, R) and control-bit rows.
        let mut rows = [(0u64, 0u64, false, false); 4];
        for (ij, row) in rows.iter_mut().enumerate() {
            let (i, j) = (ij >> 1 == 1, ij & 1 == 1);
            // [RR21 Fig. 3] r̄_ij = R̄_$ ⊕ a·R̄_a ⊕ b·R̄_b.
            let r1 = s1 ^ (ab_a & R_BAR_A[ij].0) ^ (ab_b & R_BAR_B[ij].0);
            let r2 = s2 ^ (ab_a & R_BAR_A[ij].1) ^ (ab_b & R_BAR_B[ij].1);
            let (hai, hbj, hxij) = (
                ha[usize::from(i)],
                hb[usize::from(j)],
                hx[usize::from(i ^ j)],
            );
            let (cl, cr) = control_terms(
                r1,
                r2,
                i,
                j,
                labels_a[usize::from(i)],
                labels_b[usize::from(j)],
            );
            let t = m64(i == ab_a && j == ab_b);
            *row = (
                pad(hai) ^ pad(hxij) ^ cl ^ (t & dl),
                pad(hbj) ^ pad(hxij) ^ cr ^ (t & dr),
                r1 ^ bit(hai) ^ bit(hxij),
                r2 ^ bit(hbj) ^ bit(hxij),
            );
        }
        solve_rows(rows)
    }

    /// The decoding bits `lsb(W⁰)` of `outputs`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn decoding_bits(&self, outputs: &[WireId]) -> Result<Vec<bool>, TwopcError> {
        outputs
            .iter()
            .map(|&w| Ok(lsb(wire(&self.zero, w)?)))
            .collect()
    }
}

/// The three-halves evaluator: one (active) label per wire.
pub struct Evaluator {
    aes: &'static FixedKeyAes,
    labels: Vec<Block>,
    next_and: u64,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("wires", &self.labels.len())
            .field("next_and", &self.next_and)
            .finish_non_exhaustive()
    }
}

impl Evaluator {
    /// An evaluator for a circuit of `wires` wires.
    pub fn new(wires: usize) -> Evaluator {
        Evaluator {
            aes: fixed_key(),
            labels: vec![0; wires],
            next_and: 0,
        }
    }

    /// Starts a new circuit of `wires` wires; the AND counter runs on, as the garbler's does.
    pub fn reset_wires(&mut self, wires: usize) {
        self.labels.clear();
        self.labels.resize(wires, 0);
    }

    /// Sets the label of wire `w` (an input wire).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn set_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        set_wire(&mut self.labels, w, label)
    }

    /// The label of wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn label(&self, w: WireId) -> Result<Block, TwopcError> {
        wire(&self.labels, w)
    }

    /// Evaluates one gate; an AND gate consumes table number `*pos` of `tables` and advances
    /// `*pos`. (For many gates, [`Evaluator::eval_batch`] is faster.)
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range or `tables` has no table left.
    pub fn eval(
        &mut self,
        gate: &Gate,
        tables: &Tables,
        pos: &mut usize,
    ) -> Result<(), TwopcError> {
        match self.eval_batch(std::slice::from_ref(gate), tables, pos)? {
            1 => Ok(()),
            _ => Err(TwopcError::ApiMisuse(
                "no garbled table left for an AND gate",
            )),
        }
    }

    /// Evaluates `gates` in order, the AND gates consuming the tables from number `*pos` on,
    /// with the cipher in hand for the whole slice; stops before the first AND gate that finds
    /// no table left. Returns how many gates it evaluated.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn eval_batch(
        &mut self,
        gates: &[Gate],
        tables: &Tables,
        pos: &mut usize,
    ) -> Result<usize, TwopcError> {
        let aes = self.aes;
        aes.with_aes(EvalBatch {
            evaluator: self,
            gates,
            tables,
            pos,
        })
    }

    /// One gate with the cipher in hand; `Ok(false)` if it is an AND gate without a table.
    #[inline(always)]
    fn eval_with<K: AesKernel>(
        &mut self,
        aes: &mut K,
        gate: &Gate,
        tables: &Tables,
        pos: &mut usize,
    ) -> Result<bool, TwopcError> {
        match *gate {
            Gate::Xor { a, b, out } => {
                let c = wire(&self.labels, a)? ^ wire(&self.labels, b)?;
                set_wire(&mut self.labels, out, c)?;
            }
            Gate::Inv { a, out } => {
                let c = wire(&self.labels, a)?;
                set_wire(&mut self.labels, out, c)?;
            }
            Gate::And { a, b, out } => {
                if !tables.readable(*pos) {
                    return Ok(false);
                }
                let t = tables.get(*pos);
                *pos += 1;
                let (la, lb) = (wire(&self.labels, a)?, wire(&self.labels, b)?);
                let c = self.and_with(aes, la, lb, t);
                set_wire(&mut self.labels, out, c)?;
            }
        }
        Ok(true)
    }

    /// `[RR21 §5]` The output label of the next AND gate from the input labels and the table.
    pub fn and_eval(&mut self, a: Block, b: Block, t: AndTable) -> Block {
        struct One<'a>(&'a mut Evaluator, Block, Block, AndTable);
        impl WithAes for One<'_> {
            type Output = Block;
            #[inline(always)]
            fn run<K: AesKernel>(self, aes: &mut K) -> Block {
                let One(e, a, b, t) = self;
                e.and_with(aes, a, b, t)
            }
        }
        let aes = self.aes;
        aes.with_aes(One(self, a, b, t))
    }

    /// `[RR21 §5, Eq. 4]` the evaluation of one AND gate; counts the gate.
    #[inline(always)]
    fn and_with<K: AesKernel>(&mut self, aes: &mut K, a: Block, b: Block, t: AndTable) -> Block {
        let [ta, tb, tab] = tweaks(self.next_and);
        self.next_and += 1;
        let [ha, hb, hab] = hash_n(aes, [a, b, a ^ b], [ta, tb, tab]);
        let (i, j) = (lsb(a), lsb(b));
        let (r1, r2) = row_control_bits(t.z, i, j, [ha, hb, hab]);
        let (cl, cr) = control_terms(r1, r2, i, j, a, b);
        let (mi, mj, mij) = (m64(i), m64(j), m64(i ^ j));
        let [g0, g1, g2] = t.g;
        let l = pad(ha) ^ pad(hab) ^ (mi & g0) ^ (mij & g2) ^ cl;
        let r = pad(hb) ^ pad(hab) ^ (mj & g1) ^ (mij & g2) ^ cr;
        join(l, r)
    }

    /// The output bits `lsb(W) ⊕ d` for the garbler's decoding bits `d`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range; [`TwopcError::LengthMismatch`] if
    /// `decoding` does not have one bit per output.
    pub fn decode(&self, outputs: &[WireId], decoding: &[bool]) -> Result<Vec<bool>, TwopcError> {
        crate::error::same_len("decoding bits", outputs.len(), decoding.len())?;
        outputs
            .iter()
            .zip(decoding)
            .map(|(&w, &d)| Ok(lsb(wire(&self.labels, w)?) ^ d))
            .collect()
    }
}

/// [`Garbler::garble_batch`]'s loop, run with the cipher in hand.
struct GarbleBatch<'a> {
    garbler: &'a mut Garbler,
    gates: &'a [Gate],
    tables: &'a mut Tables,
}

impl WithAes for GarbleBatch<'_> {
    type Output = Result<(), TwopcError>;

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        for gate in self.gates {
            self.garbler.garble_with(aes, gate, self.tables)?;
        }
        Ok(())
    }
}

/// [`Evaluator::eval_batch`]'s loop, run with the cipher in hand.
struct EvalBatch<'a> {
    evaluator: &'a mut Evaluator,
    gates: &'a [Gate],
    tables: &'a Tables,
    pos: &'a mut usize,
}

impl WithAes for EvalBatch<'_> {
    type Output = Result<usize, TwopcError>;

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        for (i, gate) in self.gates.iter().enumerate() {
            if !self.evaluator.eval_with(aes, gate, self.tables, self.pos)? {
                return Ok(i);
            }
        }
        Ok(self.gates.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `[RR21 Fig. 3]` The control bits an evaluator decrypts in any one row are uniform over
    /// the garbler's random bits, whatever the permute bits: they say nothing of which row is
    /// the true one.
    #[test]
    fn each_rows_control_bits_are_uniform() {
        let aes = fixed_key();
        let mut rng = AesPrg::new(doram_core::Seed([7; 16]));
        for _ in 0..16 {
            let delta = rng.next_u128() | 1;
            let (a0, b0) = (rng.next_u128(), rng.next_u128());
            for (i, j) in [(false, false), (false, true), (true, false), (true, true)] {
                // The evaluator's labels of colours (i, j).
                let a = if lsb(a0) == i { a0 } else { a0 ^ delta };
                let b = if lsb(b0) == j { b0 } else { b0 ^ delta };
                let [ta, tb, tab] = tweaks(0);
                let h = [aes.tccr(ta, a), aes.tccr(tb, b), aes.tccr(tab, a ^ b)];
                let mut seen = [false; 4];
                for s in [(false, false), (false, true), (true, false), (true, true)] {
                    let mut g = Garbler::new(delta, 0, &mut rng).unwrap();
                    let (_, t) = g.and_table(a0, b0, s);
                    let (r1, r2) = row_control_bits(t.z, i, j, h);
                    seen[usize::from(r1) << 1 | usize::from(r2)] = true;
                }
                assert_eq!(seen, [true; 4], "row ({i}, {j})");
            }
        }
    }

    /// The garbling hash is GKWY20's TCCR of [`FixedKeyAes::tccr`], with the tweaks of the
    /// module docs.
    #[test]
    fn the_hash_is_the_tccr_of_the_fixed_key_permutation() {
        struct Run([Block; 3], [Block; 3]);
        impl WithAes for Run {
            type Output = [Block; 3];
            fn run<K: AesKernel>(self, aes: &mut K) -> [Block; 3] {
                hash_n(aes, self.0, self.1)
            }
        }
        let aes = fixed_key();
        let xs = [1u128, 0x0123_4567_89ab_cdef << 70, u128::MAX];
        let ts = tweaks(5);
        assert_eq!(
            ts,
            [(0x32 << 64) + 15, (0x32 << 64) + 16, (0x32 << 64) + 17]
        );
        let want = [
            aes.tccr(ts[0], xs[0]),
            aes.tccr(ts[1], xs[1]),
            aes.tccr(ts[2], xs[2]),
        ];
        assert_eq!(aes.with_aes(Run(xs, ts)), want);
    }
}
