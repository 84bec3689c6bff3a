//! Less-than and equality of `k`-bit integers with `P2` as the helper: the engine's comparison.
//!
//! # Protocol
//! The masked-opening comparison of Catrina and de Hoogh (SCN 2010: Mod2m with the bitwise
//! comparison BitLT), with its correlated randomness dealt by `P2` and its bitwise part on
//! XOR-shared bits between `P0` and `P1`, as three-party protocols with one helper do (e.g.
//! SecureNN, PoPETs 2019; Falcon, PoPETs 2021). `P2` derives everything it deals from the PRG
//! it shares with `P0` (side A) and the one it shares with `P1` (side B), so `P0` needs no
//! message from it and `P1` only the corrections of the correlated values: for a batch, one
//! message, sent in the first round and used from the second on. For pairs (a, b) of `k`-bit
//! integers:
//!
//! 1. z = a − b + 2^k ∈ [1, 2^{k+1}) as two-party shares: `P0` takes x₀ + x₂ of its replicated
//!    share, `P1` takes x₁. Each side draws a mask R_A, R_B ∈ [0, 2^{k+σ}) (σ =
//!    [`STAT_SEC`]) from its PRG; `P0` and `P1` open c = z + R_A + R_B to each other (one
//!    round). Over the integers c < 2^{k+σ+2} < p. To `P0`, R_B hides z statistically
//!    (distance ≤ 2^{1−σ}), and R_A does the same to `P1`; `P2` sees nothing.
//! 2. With R = R_A + R_B, r = R mod 2^k, H = ⌊R / 2^k⌋ = ⌊R_A / 2^k⌋ + ⌊R_B / 2^k⌋ + carry
//!    and c' = c mod 2^k: ⌊z / 2^k⌋ = (c − c') / 2^k − H − \[c' < r\], so
//!    \[a < b\] = 1 − (c − c') / 2^k + H + \[c' < r\] and \[a = b\] = \[c' = r\]. `P2` knows r
//!    and the carry.
//! 3. \[c' < r\] and \[c' = r\] by BitLT on groups of [`LEAF_BITS`] = 8 bits: for each group
//!    `P2` deals XOR shares of the 256 monomials Π_{i∈S} r_i (i.e. of the indicator of
//!    S ⊆ r_g); for the public digit c'_g, \[c'_g < r_g\] and \[c'_g = r_g\] are Boolean
//!    functions of r_g whose algebraic normal forms select monomials, so each party's leaf
//!    share is the parity of its monomial shares under a public mask (no round).
//! 4. The groups combine in a balanced tree, (l_H ⊕ e_H·l_L, e_H·e_L), ⌈log₂⌈k/8⌉⌉ rounds of
//!    AND gates on Beaver triples dealt by `P2`.
//! 5. Each wanted root bit x becomes a two-party share of x in F_p through a dealt random bit
//!    b (XOR shares and F_p shares): `P0` and `P1` open v = x ⊕ b (one round) and take
//!    v + (1 − 2v)·b.
//! 6. Two-party shares u₀ + u₁ of the result become a replicated sharing in one round with no
//!    message to or from `P2`: x₂ and x₁ are drawn from the side A and side B PRGs, `P0` sends
//!    u₀ − x₂ and `P1` sends u₁ − x₁, and both take x₀ as their sum.
//!
//! # Costs
//! For `m` comparisons of `k`-bit values, G = ⌈k/8⌉ groups, A = AND gates of the tree
//! ([`and_gates`]), O = outputs per comparison (1 for `lt` or `eq`, 2 for both):
//!
//! | | rounds | `P0` sends | `P1` sends | `P2` sends |
//! |---|---|---|---|---|
//! | all | 3 + ⌈log₂ G⌉ ([`rounds`]) | m + m·O elements, 2A + m·O bits | the same | to `P1`: 32·m·G bytes, A bits, m·O (+ m for `lt`) elements |
//!
//! Elements are 16-byte `F_p` values; bits are packed in 64-bit words per message.
//!
//! # Security
//! Semi-honest, one corruption, as the rest of the engine. `P2` receives nothing. `P0`'s view
//! (c, the other side's AND openings, its opened v, and u₁ − x₁) is masked by R_B and the
//! side B PRG stream it does not know; `P1`'s view, including the corrections from `P2`, by
//! R_A and the side A stream; so each is simulated by uniform values, up to the 2^{1−σ} of
//! step 1. The two dealer PRGs are keyed at engine set-up from the pairwise PRGs, so the
//! streams are independent of everything else the parties draw.

use std::sync::OnceLock;

use doram_core::PartyId;
use doram_field::{Fp, Z64};
use doram_net::Session;
use doram_prim::AesPrg;
use rand_core::RngCore;

use crate::driver::{recv_framed, send_framed};
use crate::error::MpcError;
use crate::party::Party;
use crate::share::Replicated;

/// Statistical security parameter of the comparison masks, in bits.
pub const STAT_SEC: u32 = 40;

/// The largest bit length `k` of a comparison: c < 2^{k+σ+2} must stay below p > 2^127.
pub const MAX_BITS: u32 = 80;

/// Bits per leaf group of the comparison tree.
pub const LEAF_BITS: usize = 8;

/// 64-bit words of one group's monomial vector (2^8 bits).
const MONO_WORDS: usize = (1 << LEAF_BITS) / 64;

/// One group's monomials: bit S set iff the monomial Π_{i∈S} r_i is 1.
type Monomials = [u64; MONO_WORDS];

/// Which outputs a comparison needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    Lt,
    Eq,
    Both,
}

impl Want {
    pub(crate) fn lt(self) -> bool {
        matches!(self, Want::Lt | Want::Both)
    }
    pub(crate) fn eq(self) -> bool {
        matches!(self, Want::Eq | Want::Both)
    }
    fn outputs(self) -> usize {
        usize::from(self.lt()) + usize::from(self.eq())
    }
}

/// AND gates of the tree over `n` leaves.
fn tree_ands(n: usize, want: Want) -> usize {
    let mut n = n;
    let mut total = 0;
    while n > 1 {
        let next = n.div_ceil(2);
        let e = next != 1 || want.eq();
        total += n / 2 * (usize::from(want.lt()) + usize::from(e));
        n = next;
    }
    total
}

/// Leaf groups of a `k`-bit comparison.
fn groups(k: u32) -> usize {
    (k as usize).div_ceil(LEAF_BITS)
}

/// AND gates of one comparison of `k`-bit values: for `lt` alone, `eq` alone, both.
pub fn and_gates(k: u32) -> [usize; 3] {
    [Want::Lt, Want::Eq, Want::Both].map(|w| tree_ands(groups(k), w))
}

/// Rounds of one batch of comparisons of `k`-bit values at `P0` and `P1`: the opening, one
/// per tree level, the bit conversion and the re-replication. `P2` sends in the first only.
pub fn rounds(k: u32) -> u64 {
    3 + u64::from(groups(k).next_power_of_two().trailing_zeros())
}

/// The two sides of the dealt randomness: A is known to `P0` and `P2`, B to `P1` and `P2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    A,
    B,
}

/// The dealer PRGs of one party: side A at `P0` and `P2`, side B at `P1` and `P2`.
pub(crate) struct DealerPrgs {
    a: Option<AesPrg>,
    b: Option<AesPrg>,
}

impl core::fmt::Debug for DealerPrgs {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DealerPrgs(..)")
    }
}

impl DealerPrgs {
    /// Keys the dealer PRGs from the pairwise PRGs with `P2` (at `P2`: with `P0` and `P1`).
    /// Every party calls it once, at the same point of its pairwise streams.
    pub(crate) fn new(party: &mut Party) -> DealerPrgs {
        let pw = party.pairwise();
        let key = |pw: &mut doram_prim::PairwisePrgs, peer| AesPrg::new(pw.with(peer).next_seed());
        match pw.me() {
            PartyId::P0 => DealerPrgs {
                a: Some(key(pw, PartyId::P2)),
                b: None,
            },
            PartyId::P1 => DealerPrgs {
                a: None,
                b: Some(key(pw, PartyId::P2)),
            },
            _ => DealerPrgs {
                a: Some(key(pw, PartyId::P0)),
                b: Some(key(pw, PartyId::P1)),
            },
        }
    }
}

/// The shape of one batch: all three parties derive it from the public call.
#[derive(Clone, Copy, Debug)]
struct Shape {
    m: usize,
    k: u32,
    groups: usize,
    ands: usize,
    want: Want,
}

impl Shape {
    fn new(m: usize, k: u32, want: Want) -> Shape {
        let g = groups(k);
        Shape {
            m,
            k,
            groups: g,
            ands: m * tree_ands(g, want),
            want,
        }
    }
    fn outputs(&self) -> usize {
        self.m * self.want.outputs()
    }
    fn carries(&self) -> usize {
        if self.want.lt() { self.m } else { 0 }
    }
    fn low_mask(&self) -> u128 {
        (1u128 << self.k) - 1
    }
}

/// What one side draws from its dealer PRG for a batch, in this order. Side B leaves the
/// corrected values (`mono`, `c`, `gamma`, `beta`) empty: `P1` receives them from `P2`.
struct Draw {
    /// The masks R ∈ [0, 2^{k+σ}).
    r: Vec<u128>,
    /// Monomial shares, `groups` per comparison.
    mono: Vec<Monomials>,
    /// Triple shares, packed.
    ta: Vec<u64>,
    tb: Vec<u64>,
    tc: Vec<u64>,
    /// XOR shares of the random bits of step 5, packed.
    dabit: Vec<u64>,
    /// F_p shares of the carries (lt only) and of the random bits.
    gamma: Vec<Fp>,
    beta: Vec<Fp>,
    /// The re-replication's component of this side (x₂ for A, x₁ for B).
    rerep: Vec<Fp>,
}

fn words(bits: usize) -> usize {
    bits.div_ceil(64)
}

fn draw_words(prg: &mut AesPrg, n: usize) -> Vec<u64> {
    (0..n).map(|_| prg.next_u64()).collect()
}

fn draw(prg: &mut AesPrg, side: Side, s: &Shape) -> Draw {
    let r_mask = (1u128 << (s.k + STAT_SEC)) - 1;
    let r = (0..s.m).map(|_| prg.next_u128() & r_mask).collect();
    let full = side == Side::A;
    let mono = if full {
        (0..s.m * s.groups)
            .map(|_| std::array::from_fn(|_| prg.next_u64()))
            .collect()
    } else {
        Vec::new()
    };
    let ta = draw_words(prg, words(s.ands));
    let tb = draw_words(prg, words(s.ands));
    let tc = if full {
        draw_words(prg, words(s.ands))
    } else {
        Vec::new()
    };
    let dabit = draw_words(prg, words(s.outputs()));
    let (gamma, beta) = if full {
        (prg.expand(s.carries()), prg.expand(s.outputs()))
    } else {
        (Vec::new(), Vec::new())
    };
    let rerep = prg.expand(s.outputs());
    Draw {
        r,
        mono,
        ta,
        tb,
        tc,
        dabit,
        gamma,
        beta,
        rerep,
    }
}

fn bit(words: &[u64], i: usize) -> u8 {
    ((words[i / 64] >> (i % 64)) & 1) as u8
}

fn pack(bits: &[u8]) -> Vec<u64> {
    let mut w = vec![0u64; words(bits.len())];
    for (i, &b) in bits.iter().enumerate() {
        w[i / 64] |= u64::from(b & 1) << (i % 64);
    }
    w
}

fn unpack(words: &[u64], n: usize) -> Vec<u8> {
    (0..n).map(|i| bit(words, i)).collect()
}

/// For every 8-bit digit c the algebraic normal forms of r ↦ \[c < r\] and r ↦ \[c = r\]:
/// bit S of the mask is the coefficient of Π_{i∈S} r_i.
fn anf_tables() -> &'static [[Monomials; 2]; 1 << LEAF_BITS] {
    static TABLES: OnceLock<Box<[[Monomials; 2]; 1 << LEAF_BITS]>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let n = 1usize << LEAF_BITS;
        let mut out = Box::new([[[0u64; MONO_WORDS]; 2]; 1 << LEAF_BITS]);
        for c in 0..n {
            for (which, f) in [|c: usize, r: usize| c < r, |c: usize, r: usize| c == r]
                .iter()
                .enumerate()
            {
                // Truth table, then the Möbius transform over GF(2).
                let mut t: Vec<u8> = (0..n).map(|r| u8::from(f(c, r))).collect();
                for i in 0..LEAF_BITS {
                    for set in 0..n {
                        if set & (1 << i) != 0 {
                            t[set] ^= t[set ^ (1 << i)];
                        }
                    }
                }
                out[c][which] = pack_mono(&t);
            }
        }
        out
    })
}

fn pack_mono(bits: &[u8]) -> Monomials {
    let mut m = [0u64; MONO_WORDS];
    for (i, &b) in bits.iter().enumerate() {
        m[i / 64] |= u64::from(b) << (i % 64);
    }
    m
}

/// The monomials of the digit r: bit S set iff S ⊆ r.
fn monomials_of(r: usize) -> &'static Monomials {
    static TABLE: OnceLock<Box<[Monomials; 1 << LEAF_BITS]>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = Box::new([[0u64; MONO_WORDS]; 1 << LEAF_BITS]);
        for (digit, mono) in t.iter_mut().enumerate() {
            let bits: Vec<u8> = (0..1usize << LEAF_BITS)
                .map(|set| u8::from(set & !digit == 0))
                .collect();
            *mono = pack_mono(&bits);
        }
        t
    });
    &table[r & ((1 << LEAF_BITS) - 1)]
}

fn parity(a: &Monomials, b: &Monomials) -> u8 {
    let ones: u32 = a.iter().zip(b).map(|(x, y)| (x & y).count_ones()).sum();
    (ones & 1) as u8
}

/// One comparison batch at `P2`, the helper: deals the batch's correlated randomness, sends
/// `P1`'s corrections (`[step 1–5]`), and returns its components of the results (step 6).
pub(crate) fn help(
    session: &mut Session,
    dealer: &mut DealerPrgs,
    m: usize,
    k: u32,
    want: Want,
) -> Result<Vec<Replicated<Fp>>, MpcError> {
    let s = Shape::new(m, k, want);
    let (Some(pa), Some(pb)) = (dealer.a.as_mut(), dealer.b.as_mut()) else {
        return Err(MpcError::ApiMisuse("only P2 helps a comparison"));
    };
    let a = draw(pa, Side::A, &s);
    let b = draw(pb, Side::B, &s);
    let low = s.low_mask();
    // Steps 2–3: r, the carries and the monomials of r's digits.
    let mut mono_b = Vec::with_capacity(s.m * s.groups * MONO_WORDS);
    let mut carries = Vec::with_capacity(s.m);
    for j in 0..s.m {
        let (ra, rb) = (a.r[j] & low, b.r[j] & low);
        let r = (ra + rb) & low;
        carries.push(Fp::from_u128((ra + rb) >> s.k));
        for g in 0..s.groups {
            let digit = (r >> (g * LEAF_BITS)) as usize & ((1 << LEAF_BITS) - 1);
            let mono = monomials_of(digit);
            let share_a = &a.mono[j * s.groups + g];
            mono_b.extend(mono.iter().zip(share_a).map(|(x, y)| x ^ y));
        }
    }
    // Step 4: triples c_B = (a_A ⊕ a_B)(b_A ⊕ b_B) ⊕ c_A.
    let tc_b: Vec<u64> = (0..a.ta.len())
        .map(|i| ((a.ta[i] ^ b.ta[i]) & (a.tb[i] ^ b.tb[i])) ^ a.tc[i])
        .collect();
    // Step 5: F_p shares of the random bits, and of the carries.
    let mut fps: Vec<Fp> = Vec::with_capacity(s.carries() + s.outputs());
    if want.lt() {
        fps.extend(carries.iter().zip(&a.gamma).map(|(&c, &g)| c - g));
    }
    for i in 0..s.outputs() {
        let rb = bit(&a.dabit, i) ^ bit(&b.dabit, i);
        fps.push(Fp::from_u64(u64::from(rb)) - a.beta[i]);
    }
    let mut ws: Vec<Z64> = mono_b.into_iter().map(Z64).collect();
    ws.extend(tc_b.into_iter().map(Z64));
    send_framed(session, PartyId::P1, &ws)?;
    send_framed(session, PartyId::P1, &fps)?;
    // Step 6: P2 holds (x₂, x₁).
    Ok(a.rerep
        .iter()
        .zip(&b.rerep)
        .map(|(&x2, &x1)| Replicated::from_parts(x2, x1))
        .collect())
}

/// One comparison batch at `P0` or `P1`: returns the results as replicated shares, in the
/// order of `diffs` (per comparison: lt, then eq, as wanted).
pub(crate) fn evaluate(
    session: &mut Session,
    dealer: &mut DealerPrgs,
    diffs: &[Replicated<Fp>],
    k: u32,
    want: Want,
) -> Result<Vec<Replicated<Fp>>, MpcError> {
    let me = session.me();
    let s = Shape::new(diffs.len(), k, want);
    let (side, other) = match me {
        PartyId::P0 => (Side::A, PartyId::P1),
        PartyId::P1 => (Side::B, PartyId::P0),
        _ => return Err(MpcError::ApiMisuse("P2 helps, it does not evaluate")),
    };
    let prg = match side {
        Side::A => dealer.a.as_mut(),
        Side::B => dealer.b.as_mut(),
    }
    .ok_or(MpcError::ApiMisuse("dealer PRG missing"))?;
    let mut d = draw(prg, side, &s);
    // [Step 1] Open c = z + R_A + R_B between P0 and P1.
    let two_k = Fp::from_u128(1u128 << k);
    let mine: Vec<Fp> = diffs
        .iter()
        .zip(&d.r)
        .map(|(z, &r)| {
            let share = match side {
                Side::A => z.own() + z.prev() + two_k,
                Side::B => z.own(),
            };
            share + Fp::from_u128(r)
        })
        .collect();
    send_framed(session, other, &mine)?;
    if side == Side::B {
        receive_corrections(session, &s, &mut d)?;
    }
    let theirs: Vec<Fp> = recv_framed(session, other, s.m, "comparison opening")?;
    let c: Vec<u128> = mine
        .iter()
        .zip(&theirs)
        .map(|(&x, &y)| (x + y).to_u128())
        .collect();
    // [Step 3] Leaves, [step 4] the tree.
    let mut level = leaves(&s, &c, &d.mono);
    let mut triples = Triples::new(&d, s.ands);
    let mut width = s.groups;
    while width > 1 {
        level = tree_level(session, other, side, &mut triples, &level, s.m, width, want)?;
        width = width.div_ceil(2);
    }
    // [Step 5] Convert the root bits.
    let roots: Vec<u8> = level
        .iter()
        .flat_map(|&(l, e)| {
            let mut v = Vec::with_capacity(2);
            if want.lt() {
                v.push(l);
            }
            if want.eq() {
                v.push(e);
            }
            v
        })
        .collect();
    let opened = exchange_bits(
        session,
        other,
        &roots
            .iter()
            .enumerate()
            .map(|(i, &x)| x ^ bit(&d.dabit, i))
            .collect::<Vec<u8>>(),
        "comparison output bits",
    )?;
    let shares = two_party_results(&s, side, &d, &c, &opened);
    // [Step 6] Re-replicate without P2.
    let masked: Vec<Fp> = shares.iter().zip(&d.rerep).map(|(&u, &x)| u - x).collect();
    send_framed(session, other, &masked)?;
    let back: Vec<Fp> = recv_framed(session, other, s.outputs(), "comparison re-sharing")?;
    Ok(masked
        .iter()
        .zip(&back)
        .zip(&d.rerep)
        .map(|((&x, &y), &mine)| {
            let x0 = x + y;
            match side {
                Side::A => Replicated::from_parts(x0, mine),
                Side::B => Replicated::from_parts(mine, x0),
            }
        })
        .collect())
}

/// `P1` receives the corrections from `P2` (sent in the first round): its monomials, its
/// triples' third shares and its F_p shares.
fn receive_corrections(session: &mut Session, s: &Shape, d: &mut Draw) -> Result<(), MpcError> {
    let n_mono = s.m * s.groups * MONO_WORDS;
    let n_tc = words(s.ands);
    let ws: Vec<Z64> = recv_framed(session, PartyId::P2, n_mono + n_tc, "comparison dealing")?;
    d.mono = ws[..n_mono]
        .chunks_exact(MONO_WORDS)
        .map(|c| std::array::from_fn(|i| c[i].0))
        .collect();
    d.tc = ws[n_mono..].iter().map(|w| w.0).collect();
    let fps: Vec<Fp> = recv_framed(
        session,
        PartyId::P2,
        s.carries() + s.outputs(),
        "comparison dealing",
    )?;
    d.gamma = fps[..s.carries()].to_vec();
    d.beta = fps[s.carries()..].to_vec();
    Ok(())
}

/// \[Step 3\] Each comparison's leaves (\[c'_g < r_g\], \[c'_g = r_g\]) as this side's XOR
/// shares: parities of its monomial shares under the digits' normal forms.
fn leaves(s: &Shape, c: &[u128], mono: &[Monomials]) -> Vec<(u8, u8)> {
    let tables = anf_tables();
    let low = s.low_mask();
    let mut out = Vec::with_capacity(s.m * s.groups);
    for (j, &cj) in c.iter().enumerate() {
        let c_low = cj & low;
        for g in 0..s.groups {
            let digit = (c_low >> (g * LEAF_BITS)) as usize & ((1 << LEAF_BITS) - 1);
            let share = &mono[j * s.groups + g];
            out.push((
                parity(&tables[digit][0], share),
                parity(&tables[digit][1], share),
            ));
        }
    }
    out
}

/// The dealt AND triples of a batch, used in order.
struct Triples {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    next: usize,
}

impl Triples {
    fn new(d: &Draw, n: usize) -> Triples {
        Triples {
            a: unpack(&d.ta, n),
            b: unpack(&d.tb, n),
            c: unpack(&d.tc, n),
            next: 0,
        }
    }
}

/// Exchanges packed bits with the other evaluator; returns the XOR of both sides' bits.
fn exchange_bits(
    session: &mut Session,
    other: PartyId,
    bits: &[u8],
    what: &'static str,
) -> Result<Vec<u8>, MpcError> {
    let packed: Vec<Z64> = pack(bits).into_iter().map(Z64).collect();
    send_framed(session, other, &packed)?;
    let got: Vec<Z64> = recv_framed(session, other, packed.len(), what)?;
    let got: Vec<u64> = got.into_iter().map(|w| w.0).collect();
    Ok(bits
        .iter()
        .enumerate()
        .map(|(i, &b)| b ^ bit(&got, i))
        .collect())
}

/// A batch of AND gates on XOR shares (one round): open x ⊕ a and y ⊕ b, then
/// z = c ⊕ d·b ⊕ e·a (⊕ d·e at side A).
fn and_round(
    session: &mut Session,
    other: PartyId,
    side: Side,
    t: &mut Triples,
    xs: &[u8],
    ys: &[u8],
) -> Result<Vec<u8>, MpcError> {
    let n = xs.len();
    let base = t.next;
    if base + n > t.a.len() {
        return Err(MpcError::ApiMisuse("comparison triple count"));
    }
    t.next += n;
    let mut masked = Vec::with_capacity(2 * n);
    masked.extend((0..n).map(|i| xs[i] ^ t.a[base + i]));
    masked.extend((0..n).map(|i| ys[i] ^ t.b[base + i]));
    let open = exchange_bits(session, other, &masked, "comparison AND openings")?;
    Ok((0..n)
        .map(|i| {
            let (d, e) = (open[i], open[n + i]);
            let z = t.c[base + i] ^ (d & t.b[base + i]) ^ (e & t.a[base + i]);
            if side == Side::A { z ^ (d & e) } else { z }
        })
        .collect())
}

/// \[Step 4\] One tree level: adjacent (l, e) pairs of each comparison combine as
/// (l_H ⊕ e_H·l_L, e_H·e_L) in one round; an odd last group passes up unchanged. Only the
/// gates the result needs are evaluated.
#[allow(clippy::too_many_arguments)]
fn tree_level(
    session: &mut Session,
    other: PartyId,
    side: Side,
    t: &mut Triples,
    level: &[(u8, u8)],
    m: usize,
    width: usize,
    want: Want,
) -> Result<Vec<(u8, u8)>, MpcError> {
    let pairs = width / 2;
    let next_width = width.div_ceil(2);
    let need_l = want.lt();
    let need_e = next_width != 1 || want.eq();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for j in 0..m {
        for p in 0..pairs {
            let (l_lo, e_lo) = level[j * width + 2 * p];
            let (_, e_hi) = level[j * width + 2 * p + 1];
            if need_l {
                xs.push(e_hi);
                ys.push(l_lo);
            }
            if need_e {
                xs.push(e_hi);
                ys.push(e_lo);
            }
        }
    }
    let prods = and_round(session, other, side, t, &xs, &ys)?;
    let mut it = prods.into_iter();
    let mut next = Vec::with_capacity(m * next_width);
    for j in 0..m {
        for p in 0..pairs {
            let (l_hi, _) = level[j * width + 2 * p + 1];
            let mut gate = |needed: bool| -> Result<u8, MpcError> {
                if needed {
                    it.next()
                        .ok_or(MpcError::ApiMisuse("comparison gate count"))
                } else {
                    Ok(0)
                }
            };
            let l = l_hi ^ gate(need_l)?;
            let e = gate(need_e)?;
            next.push((l, e));
        }
        if width % 2 == 1 {
            next.push(level[j * width + width - 1]);
        }
    }
    Ok(next)
}

/// \[Steps 2 and 5\] This side's F_p shares of the results from the opened bits v = x ⊕ b:
/// \[x\] = v + (1 − 2v)·b, and for lt 1 − (c − c')/2^k + H + \[c' < r\].
fn two_party_results(s: &Shape, side: Side, d: &Draw, c: &[u128], opened: &[u8]) -> Vec<Fp> {
    let outs = s.want.outputs();
    let low = s.low_mask();
    let mut shares = Vec::with_capacity(s.outputs());
    for (j, &cj) in c.iter().enumerate() {
        for o in 0..outs {
            let i = j * outs + o;
            let v = Fp::from_u64(u64::from(opened[i]));
            let mut x = (Fp::ONE - v.double()) * d.beta[i];
            if side == Side::A {
                x += v;
            }
            if o == 0 && s.want.lt() {
                let high = Fp::from_u128(d.r[j] >> s.k) + d.gamma[j];
                x += high;
                if side == Side::A {
                    let top = Fp::from_u128((cj - (cj & low)) >> s.k);
                    x += Fp::ONE - top;
                }
            }
            shares.push(x);
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms_compare_every_digit() {
        for (c, forms) in anf_tables().iter().enumerate() {
            for r in 0..256usize {
                let m = monomials_of(r);
                assert_eq!(parity(&forms[0], m), u8::from(c < r), "{c} < {r}");
                assert_eq!(parity(&forms[1], m), u8::from(c == r), "{c} = {r}");
            }
        }
    }

    #[test]
    fn gate_and_round_counts() {
        assert_eq!(tree_ands(1, Want::Both), 0);
        assert_eq!(tree_ands(2, Want::Lt), 1);
        assert_eq!(tree_ands(2, Want::Eq), 1);
        assert_eq!(tree_ands(8, Want::Lt), 13);
        assert_eq!(tree_ands(8, Want::Both), 14);
        assert_eq!(and_gates(64), [13, 7, 14]);
        assert_eq!(and_gates(8), [0, 0, 0]);
        assert_eq!(rounds(8), 3);
        assert_eq!(rounds(9), 4);
        assert_eq!(rounds(46), 6);
        assert_eq!(rounds(80), 7);
    }

    #[test]
    fn packing_round_trips() {
        let bits: Vec<u8> = (0..130).map(|i| u8::from(i % 3 == 0)).collect();
        assert_eq!(unpack(&pack(&bits), bits.len()), bits);
    }
}
