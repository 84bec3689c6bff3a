//! Two-party generation of BGI DPF keys without a dealer, after Doerner and shelat ("Scaling
//! ORAM for Secure Computation", CCS 2017, the distributed Gen of Floram), as 2P-Duoram's
//! preprocessing runs it (Vadapalli–Henry–Goldberg, USENIX Security 2023, App. C).
//!
//! # What it computes
//! `P0` and `P1` hold, per key, XOR shares of the ⌈log₂ n⌉ path bits of a point α (most
//! significant first, [`PointShare`]) and additive shares of β ∈ F_p ([`Share`]). Each ends
//! with its [`BgiKey<Fp>`]: an ordinary key of [`doram_dpf::bgi`] with
//! `eval(k₀, x) + eval(k₁, x) = β·[x = α]` for every x in `[0, n)`, so that
//! [`Bgi::eval`](doram_dpf::Bgi), `eval_all_into` and the rest evaluate it unchanged. In fact
//! the two keys are bit for bit those a dealer's `gen_with_seeds` makes from the two parties'
//! root seeds (the tests check this). [`gen_many`] makes any number of keys on one domain with
//! the rounds of one; [`gen_many_with_outputs`] also hands back each key's full-domain
//! evaluation, computed from the leaves the generation ends with (one output conversion per
//! point instead of a second expansion of the tree). [`gen_many_with_outputs_z64`] makes the
//! same keys with outputs in Z_2^64 (β additively shared mod 2^64): only the output
//! correction word's product and opening change ring.
//!
//! # The protocol
//! The notation of [`doram_dpf::bgi`]: node `s | t`, `G(s) = (MMO(s), MMO(s | 1))`, each half a
//! child seed and control bit. Each party draws its own root seed; the root control bit is
//! the party's index. Level by level ([Duoram App. C], after [Doerner–shelat]):
//!
//! 1. Each party b expands its *whole* current level with `G`, before correction
//!    ([`doram_dpf::bgi::expand_uncorrected`]), and XORs all left halves into `L_b` and all
//!    right halves into `R_b` (seed and control bit). Off the path to α the two trees'
//!    nodes are equal, so `L₀ ⊕ L₁` and `R₀ ⊕ R₁` are the XORs of the two on-path nodes'
//!    left and right children. Only nodes whose subtree meets `[0, n)` are kept, the same
//!    at both parties (the on-path node is among them, as α < n).
//! 2. Seed correction: bgi.rs takes the lose side, `s_CW = R₀ ⊕ R₁` for a = 0 and
//!    `L₀ ⊕ L₁` for a = 1 (seed bits only), i.e. `s_CW = (R₀ ⊕ R₁) ⊕ a·(X₀ ⊕ X₁)` with
//!    `X_b = L_b ⊕ R_b` and a = a₀ ⊕ a₁. The product `a·(X₀ ⊕ X₁)` is
//!    `a₀X₀ ⊕ a₁X₁ ⊕ a₀X₁ ⊕ a₁X₀`; each cross term `a_c·X_b` (c ≠ b) comes from one random OT
//!    with party c choosing a_c, made in advance for every level and key with the choices
//!    fixed (correlated OT from the extension, hashed): party b holds `(m₀, m₁)`, party c
//!    holds `m_{a_c}`. Party b sends `y = m₀ ⊕ m₁ ⊕ X_b` and keeps `m₀`; party c takes
//!    `m_{a_c} ⊕ a_c·y = m₀ ⊕ a_c·X_b`. Each party then sends its XOR share
//!    `z_b = R_b ⊕ a_b·X_b ⊕ m₀(its OT as sender) ⊕ (m_{a_b} ⊕ a_b·y)(its OT as receiver)`
//!    and both open `s_CW = z₀ ⊕ z₁`.
//! 3. Control-bit corrections are linear ([Duoram App. C, step 4]): bgi.rs's
//!    `t_CW^L = t₀^L ⊕ t₁^L ⊕ a ⊕ 1` and `t_CW^R = t₀^R ⊕ t₁^R ⊕ a`, where `t_b^L ⊕ …` over the
//!    level is `lsb(L₀ ⊕ L₁)`; so party b sends `lsb(L_b) ⊕ a_b` and `lsb(R_b) ⊕ a_b` (in the
//!    message that carries y) and both add `1` to the left one.
//! 4. Each party corrects its children as evaluation does,
//!    `child = G(s)_side ⊕ t·(s_CW | t_CW^side)` ([Duoram App. C, steps 5–6]).
//!
//! After the last level each party holds its leaves for `[0, n)`. With `C_b = Σ_x Convert(s_b(x))`
//! and `T_b = Σ_x t_b(x)` ([`doram_dpf::bgi::leaf_sums`]), off-path leaves cancel:
//! `C₀ − C₁ = Convert(s₀(α)) − Convert(s₁(α))` and `T₀ − T₁ = t₀(α) − t₁(α) = (−1)^{t₁(α)}`
//! (the on-path bits differ). bgi.rs's output correction word
//! `OCW = (−1)^{t₁}·(β − Convert(s₀) + Convert(s₁))` is therefore the product of
//! `T₀ − T₁` (shares `T₀`, `−T₁`) and `β − C₀ + C₁` (shares `β₀ − C₀`, `β₁ + C₁`): one
//! Beaver product ([`Arith2::mul_many`]) and one opening ([`Arith2::open_many`]). For n = 1
//! the key is a plain share and nothing is sent: `P0`'s key holds β₀ and `P1`'s −β₁ (party 1
//! outputs the negation).
//!
//! # Costs (per party, K keys on n points, d = ⌈log₂ n⌉)
//! * Local work: about 2n fixed-key AES calls per key for the tree (two per node of every
//!   level above the leaves) and n for the output conversion at the leaves, as a full-domain
//!   evaluation; each level is expanded in place, so a key takes n blocks (16n bytes), and
//!   1.5n bytes of control bits, at the widest.
//! * Communication: d·K random OTs in each direction, drawn in one extension flow at the
//!   start ([`crate::driver::cot_send`] on [`Arith2::ots_mut`]); per level one message of
//!   `16K + ⌈K/4⌉` bytes (y and the control-bit shares, [`offer_len`]) and one of `16K` bytes
//!   (the seed-correction shares, [`share_len`]) each way; then K Beaver products (with
//!   triples from the engine's pool, made inline if it runs short: 256 random OTs and 2 KiB
//!   of corrections each way per triple) and one opening of K elements.
//! * Rounds: 2d for the levels, plus one for the OT extension, two for the product and the
//!   opening, and the triple generation's if the pool is short — for any K.
//!
//! The `dpf_gen` example (`cargo run --release -p doram-twopc --example dpf_gen -- LOG_N
//! KEYS`, triples made beforehand) counts, per party: n = 2^16, one key: 1088 bytes in 35
//! messages and 35 rounds; n = 2^20, one key: 1220 bytes, 43 rounds; eight keys at 2^20:
//! 6568 bytes (821 per key), still 43 rounds; each triple adds 2560 bytes. The time goes to
//! the local expansion: with two in-process parties on a busy two-core machine, one key at
//! 2^20 took 22–24 ms against 15–18 ms for one full-domain evaluation of it, and a batch of
//! eight 34–40 ms per key (eight whole levels no longer fit in the caches).
//!
//! # Who learns what (semi-honest)
//! Both parties learn every correction word (`s_CW`, `t_CW^L`, `t_CW^R` per level, and OCW):
//! these are public parts of both keys, as with a dealer; each key alone hides α and β as
//! BGI keys do. Beyond its key, a party sees: the OT extension messages; the peer's `y`,
//! each masked by an OT message it does not hold; the peer's shares `z` and control-bit
//! shares, which follow from the opened correction word and its own shares; the Beaver
//! openings, masked by the triples; and the peer's share of OCW, which follows from OCW. Its
//! own level-by-level nodes are what evaluating its key gives. Semi-honest only: a malicious
//! peer can make the keys wrong (not make this party panic: every received message has an
//! exact length fixed by K and is checked, including its unused bits, before use; a fault is
//! [`TwopcError::Peer`] naming the peer). If the shares of α combine to a point outside
//! `[0, n)` (possible when n is not a power of two), the keys share the zero function on
//! `[0, n)`: no leaf lies on the path, so `T₀ − T₁ = 0` and OCW = 0.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_dpf::bgi::{expand_uncorrected, leaf_sums, outputs_from_leaves};
use doram_dpf::{BgiKey, MAX_DOMAIN, TwoParty};
use doram_field::{Fp, Ring, Z64};
use doram_net::Session;
use doram_prim::aes::{Block, lsb, mask};
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::arith::{Arith2, Share};
use crate::driver::{cot_receive, cot_send, peer};
use crate::error::same_len;

/// The seed bits of a block (the lsb is a node's control bit).
const SEED_MASK: Block = !1;

/// What one party brings for one key: its XOR shares of α's path bits and its additive share
/// of β. `Debug` shows only the number of bits.
#[derive(Clone)]
pub struct PointShare {
    alpha_bits: Vec<bool>,
    beta: Share,
}

impl core::fmt::Debug for PointShare {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PointShare {{ bits: {}, .. }}", self.alpha_bits.len())
    }
}

impl PointShare {
    /// XOR shares of α's ⌈log₂ n⌉ path bits, most significant (the root's) first, and a share
    /// of β.
    pub fn new(alpha_bits: Vec<bool>, beta: Share) -> PointShare {
        PointShare { alpha_bits, beta }
    }

    /// The path bits of an XOR share `alpha_share` of α (its low ⌈log₂ n⌉ bits, most
    /// significant first; higher bits are ignored) for a domain of `domain_size` points.
    pub fn from_xor_share(alpha_share: usize, domain_size: usize, beta: Share) -> PointShare {
        PointShare {
            alpha_bits: path_bits(alpha_share, domain_size),
            beta,
        }
    }

    /// The path bits.
    pub fn alpha_bits(&self) -> &[bool] {
        &self.alpha_bits
    }

    /// The share of β.
    pub fn beta(&self) -> Share {
        self.beta
    }
}

/// The path bits of an XOR share `alpha_share` of α (its low ⌈log₂ n⌉ bits, most significant
/// first; higher bits are ignored) for a domain of `domain_size` points.
pub fn path_bits(alpha_share: usize, domain_size: usize) -> Vec<bool> {
    let d = depth(domain_size);
    (0..d)
        .map(|i| (alpha_share >> (d - 1 - i)) & 1 == 1)
        .collect()
}

/// The tree depth ⌈log₂ n⌉ for a domain of `n ≥ 1` points (0 for n ≤ 1).
pub fn depth(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

/// Nodes kept at depth `i` of a tree of depth `d` on `n` points: those whose subtree meets
/// `[0, n)`.
fn kept(n: usize, d: usize, i: usize) -> usize {
    n.div_ceil(1 << (d - i))
}

/// Bytes of a level's first message for `keys` keys: per key `y` (16 bytes, lsb 0), then two
/// control-bit shares per key, packed least significant bit first (bit 2k: `t_CW^L`'s share
/// of key k, bit 2k + 1: `t_CW^R`'s), unused bits 0.
pub fn offer_len(keys: usize) -> usize {
    16 * keys + (2 * keys).div_ceil(8)
}

/// Bytes of a level's second message for `keys` keys: per key the share `z` of `s_CW` (16
/// bytes, lsb 0).
pub fn share_len(keys: usize) -> usize {
    16 * keys
}

const OFFER: &str = "DPF generation level offer";
const SHARES: &str = "DPF generation seed-correction shares";

/// A level's first message, party b → party 1 − b ([Duoram App. C, steps 3–4]): per key the
/// OT derandomisation `y = m₀ ⊕ m₁ ⊕ X_b` (seed bits) and the control-bit shares
/// `(lsb(L_b) ⊕ a_b, lsb(R_b) ⊕ a_b)`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Offer {
    masked: Vec<Block>,
    bits: Vec<[bool; 2]>,
}

impl Offer {
    fn encode(&self) -> Vec<u8> {
        let k = self.masked.len();
        let mut out = Vec::with_capacity(offer_len(k));
        for y in &self.masked {
            out.extend_from_slice(&y.to_le_bytes());
        }
        let mut packed = vec![0u8; (2 * k).div_ceil(8)];
        for (i, pair) in self.bits.iter().enumerate() {
            for (side, &b) in pair.iter().enumerate() {
                let j = 2 * i + side;
                packed[j / 8] |= u8::from(b) << (j % 8);
            }
        }
        out.extend_from_slice(&packed);
        out
    }

    fn decode(peer: PartyId, bytes: &[u8], keys: usize) -> Result<Offer, PeerFault> {
        wire::exact_len(peer, OFFER, bytes, offer_len(keys))?;
        let (blocks, packed) = bytes.split_at(16 * keys);
        let masked = seed_blocks(peer, OFFER, blocks)?;
        let bit = |j: usize| (packed[j / 8] >> (j % 8)) & 1 == 1;
        if (2 * keys..8 * packed.len()).any(bit) {
            return Err(PeerFault::malformed(peer, OFFER, "nonzero padding bits"));
        }
        let bits = (0..keys).map(|i| [bit(2 * i), bit(2 * i + 1)]).collect();
        Ok(Offer { masked, bits })
    }
}

/// 16-byte little-endian blocks whose lsb must be 0 (seed bits only).
fn seed_blocks(peer: PartyId, what: &'static str, bytes: &[u8]) -> Result<Vec<Block>, PeerFault> {
    bytes
        .chunks_exact(16)
        .map(|c| {
            let mut b = [0u8; 16];
            b.copy_from_slice(c);
            let x = Block::from_le_bytes(b);
            if lsb(x) {
                Err(PeerFault::malformed(
                    peer,
                    what,
                    "a seed block has its lsb set",
                ))
            } else {
                Ok(x)
            }
        })
        .collect()
}

fn encode_blocks(blocks: &[Block]) -> Vec<u8> {
    blocks.iter().flat_map(|b| b.to_le_bytes()).collect()
}

/// One key's tree at one party while it is generated: the current level and the correction
/// words so far.
struct KeyTree {
    root: Block,
    /// The kept nodes `s | t` of the current level; expanded in place.
    level: Vec<Block>,
    /// The control bits of the current level's nodes, kept for the correction after the
    /// expansion has overwritten the nodes.
    t: Vec<bool>,
    /// Scratch for the next level's control bits.
    t_next: Vec<bool>,
    cws: Vec<(Block, bool, bool)>,
}

/// What a party computes from one key's expanded level before any message
/// ([Duoram App. C, steps 1–2]).
#[derive(Clone, Copy)]
struct LevelSums {
    /// `X_b = L_b ⊕ R_b`, seed bits.
    x: Block,
    /// `R_b`, seed bits.
    r: Block,
    /// `lsb(L_b)`, `lsb(R_b)`.
    t: [bool; 2],
}

impl KeyTree {
    /// A tree on `n` points from its root seed, its level buffer allocated once for the
    /// widest level (the last expansion's children).
    fn new(root: Block, party: TwoParty, n: usize) -> KeyTree {
        let root = root & SEED_MASK;
        let top = party == TwoParty::P1;
        let mut level = Vec::with_capacity(2 * n.div_ceil(2));
        level.push(root | Block::from(top));
        KeyTree {
            root,
            level,
            t: vec![top],
            t_next: Vec::new(),
            cws: Vec::new(),
        }
    }

    /// Step 1: the uncorrected children of the whole level (in place) and their sums.
    fn expand(&mut self) -> LevelSums {
        let [l, r] = expand_uncorrected(&mut self.level);
        LevelSums {
            x: (l ^ r) & SEED_MASK,
            r: r & SEED_MASK,
            t: [lsb(l), lsb(r)],
        }
    }

    /// Step 4: corrects the children with the level's correction word (bgi.rs's evaluation:
    /// `G(s)_side ⊕ t·(s_CW | t_CW^side)`, t the parent's control bit) and keeps the first
    /// `keep` of them.
    fn correct(&mut self, cw: (Block, bool, bool), keep: usize) {
        let (s, tl, tr) = cw;
        let corr = [s | Block::from(tl), s | Block::from(tr)];
        self.t_next.clear();
        for (kids, &t) in self.level.chunks_exact_mut(2).zip(&self.t) {
            let m = mask(t);
            kids[0] ^= m & corr[0];
            kids[1] ^= m & corr[1];
            self.t_next.extend([lsb(kids[0]), lsb(kids[1])]);
        }
        self.level.truncate(keep);
        self.t_next.truncate(keep);
        std::mem::swap(&mut self.t, &mut self.t_next);
        self.cws.push(cw);
    }
}

/// This party's part of one key's level message: `y` and its control-bit shares.
fn offer(sums: LevelSums, a: bool, sent: [Block; 2]) -> (Block, [bool; 2]) {
    let y = (sent[0] ^ sent[1] ^ sums.x) & SEED_MASK;
    (y, [sums.t[0] ^ a, sums.t[1] ^ a])
}

/// This party's XOR share `z_b` of `s_CW` (step 2): its own terms `R_b ⊕ a_b·X_b`, its OT as
/// sender (`m₀`, against the peer's `a·X_b`) and its OT as receiver (`m_{a_b} ⊕ a_b·y`,
/// against the peer's `m₀`), seed bits.
fn seed_share(sums: LevelSums, a: bool, sent: [Block; 2], received: Block, y_peer: Block) -> Block {
    let m = mask(a);
    (sums.r ^ (m & sums.x) ^ sent[0] ^ received ^ (m & y_peer)) & SEED_MASK
}

/// The level's correction word from both parties' messages: `s_CW = z₀ ⊕ z₁`,
/// `t_CW^L = ⊕ shares ⊕ 1`, `t_CW^R = ⊕ shares` (step 3).
fn correction_word(z: [Block; 2], bits: [[bool; 2]; 2]) -> (Block, bool, bool) {
    (
        z[0] ^ z[1],
        bits[0][0] ^ bits[1][0] ^ true,
        bits[0][1] ^ bits[1][1],
    )
}

/// This party's raw contributions to the sign `T₀ − T₁` and to `−C₀ + C₁` from its leaves.
fn output_terms<G: Ring>(party: TwoParty, leaves: &[Block]) -> (G, G) {
    let (c, t): (G, u64) = leaf_sums(leaves);
    let t = G::from_u64(t);
    match party {
        TwoParty::P0 => (t, -c),
        TwoParty::P1 => (-t, c),
    }
}

/// Makes one key: [`gen_many`] with one point.
///
/// # Errors
/// As [`gen_many`].
pub fn gen_one<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    point: &PointShare,
    domain_size: usize,
    rng: &mut R,
) -> Result<BgiKey<Fp>, TwopcError> {
    let mut keys = gen_many(
        session,
        engine,
        std::slice::from_ref(point),
        domain_size,
        rng,
    )?;
    keys.pop()
        .ok_or(TwopcError::ApiMisuse("one point gives one key"))
}

/// Makes this party's BGI keys for the points `points` on `[0, domain_size)`, together with
/// the peer, which calls it with its own shares of the same number of points and the same
/// domain size (see the [module documentation](self)). Root seeds are drawn from `rng` (OS
/// entropy in real use, [`crate::os_rng`]). All keys' OTs of a level travel in one message, so
/// K keys take the rounds of one.
///
/// # Errors
/// [`TwopcError::WrongPartyCount`] unless the session has two parties;
/// [`TwopcError::ApiMisuse`] for a domain size of 0 or above 2^62;
/// [`TwopcError::LengthMismatch`] unless every point has ⌈log₂ domain_size⌉ path bits — all
/// before anything is sent; transport failures; the peer's messages of the wrong size or with
/// nonzero unused bits ([`TwopcError::Peer`], naming it).
pub fn gen_many<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    points: &[PointShare],
    domain_size: usize,
    rng: &mut R,
) -> Result<Vec<BgiKey<Fp>>, TwopcError> {
    let keys = gen_with_leaves(session, engine, points, domain_size, rng)?;
    Ok(keys.into_iter().map(|(key, _)| key).collect())
}

/// [`gen_many`], and each key's full-domain evaluation into `outputs` (one buffer per point,
/// resized to `domain_size`; existing buffers are reused). The generation ends with this
/// party's corrected leaves, so the evaluation costs one output conversion per point
/// ([`doram_dpf::bgi::outputs_from_leaves`]) instead of a second expansion of the tree.
///
/// # Errors
/// As [`gen_many`]; [`TwopcError::LengthMismatch`] unless there is one output buffer per
/// point (before anything is sent).
pub fn gen_many_with_outputs<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    points: &[PointShare],
    domain_size: usize,
    outputs: &mut [Vec<Fp>],
    rng: &mut R,
) -> Result<Vec<BgiKey<Fp>>, TwopcError> {
    same_len("DPF output buffers", points.len(), outputs.len())?;
    let keys = gen_with_leaves(session, engine, points, domain_size, rng)?;
    Ok(keys
        .into_iter()
        .zip(outputs)
        .map(|((key, leaves), out)| {
            out.resize(domain_size, Fp::ZERO);
            outputs_from_leaves(&key, &leaves, out);
            key
        })
        .collect())
}

/// A key and this party's final leaves of its tree (none for a one-point domain).
type KeyWithLeaves<G = Fp> = (BgiKey<G>, Vec<Block>);

/// [`gen_many`] with each key's final leaves.
fn gen_with_leaves<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    points: &[PointShare],
    domain_size: usize,
    rng: &mut R,
) -> Result<Vec<KeyWithLeaves>, TwopcError> {
    let bits: Vec<&[bool]> = points.iter().map(|p| p.alpha_bits.as_slice()).collect();
    let betas: Vec<Fp> = points.iter().map(|p| p.beta.raw()).collect();
    gen_generic(
        session,
        engine,
        &bits,
        &betas,
        domain_size,
        rng,
        |session, engine, pairs| {
            let pairs: Vec<(Share, Share)> = pairs
                .iter()
                .map(|&(x, y)| (Share::from_raw(x), Share::from_raw(y)))
                .collect();
            let products = engine.mul_many(session, &pairs)?;
            engine.open_many(session, &products)
        },
    )
}

/// The generation over any output group with a ring structure: the tree level by level, then
/// the output correction word `(T₀ − T₁)·(β − C₀ + C₁)` by `product` (which multiplies pairs
/// of additive shares and opens the products: one Beaver product and one opening).
#[allow(clippy::type_complexity)]
fn gen_generic<G: Ring, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    alpha_bits: &[&[bool]],
    betas: &[G],
    domain_size: usize,
    rng: &mut R,
    product: impl FnOnce(&mut Session, &mut Arith2, &[(G, G)]) -> Result<Vec<G>, TwopcError>,
) -> Result<Vec<KeyWithLeaves<G>>, TwopcError> {
    let other = peer(session)?;
    if domain_size == 0 || domain_size > MAX_DOMAIN {
        return Err(TwopcError::ApiMisuse("DPF domain size must be in 1..=2^62"));
    }
    let d = depth(domain_size);
    same_len("DPF shares of β", alpha_bits.len(), betas.len())?;
    for bits in alpha_bits {
        same_len("DPF path bits", d, bits.len())?;
    }
    let party = match session.me() {
        PartyId::P0 => TwoParty::P0,
        _ => TwoParty::P1,
    };
    let k = alpha_bits.len();
    if k == 0 {
        return Ok(Vec::new());
    }
    if d == 0 {
        // A one-point domain: the key is the share (party 1 outputs its negation).
        return Ok(betas
            .iter()
            .map(|&beta| {
                let share = match party {
                    TwoParty::P0 => beta,
                    TwoParty::P1 => -beta,
                };
                (BgiKey::from_parts(party, 1, 0, &[], share), Vec::new())
            })
            .collect());
    }
    let mut trees: Vec<KeyTree> = (0..k)
        .map(|_| {
            let mut b = [0u8; 16];
            rng.fill_bytes(&mut b);
            KeyTree::new(Block::from_le_bytes(b), party, domain_size)
        })
        .collect();
    // All random OTs up front, level-major (OT i·K + j is key j's at level i): this party
    // chooses its bits of α as receiver, and holds the pairs for the peer's bits as sender.
    let choices: Vec<bool> = (0..d)
        .flat_map(|i| alpha_bits.iter().map(move |bits| bits[i]))
        .collect();
    let (sender, receiver) = engine.ots_mut();
    let received = cot_receive(session, receiver, &choices)?.into_random().msgs;
    let sent = cot_send(session, sender, d * k)?.into_random().msgs;

    #[allow(clippy::needless_range_loop)] // i indexes the levels of every key's path bits.
    for i in 0..d {
        let keep = kept(domain_size, d, i + 1);
        let ots = i * k..(i + 1) * k;
        let (sent, received) = (&sent[ots.clone()], &received[ots]);
        let sums: Vec<LevelSums> = trees.iter_mut().map(KeyTree::expand).collect();
        let mut mine = Offer {
            masked: Vec::with_capacity(k),
            bits: Vec::with_capacity(k),
        };
        for (j, s) in sums.iter().enumerate() {
            let (y, t) = offer(*s, alpha_bits[j][i], sent[j]);
            mine.masked.push(y);
            mine.bits.push(t);
        }
        session.send_bytes(other, &mine.encode())?;
        let theirs = Offer::decode(other, &session.recv_bytes(other)?, k)?;
        let z: Vec<Block> = (0..k)
            .map(|j| {
                let a = alpha_bits[j][i];
                seed_share(sums[j], a, sent[j], received[j], theirs.masked[j])
            })
            .collect();
        session.send_bytes(other, &encode_blocks(&z))?;
        let bytes = session.recv_bytes(other)?;
        wire::exact_len(other, SHARES, &bytes, share_len(k))?;
        let z_peer = seed_blocks(other, SHARES, &bytes)?;
        for (j, tree) in trees.iter_mut().enumerate() {
            let cw = correction_word([z[j], z_peer[j]], [mine.bits[j], theirs.bits[j]]);
            tree.correct(cw, keep);
        }
    }

    // The output correction word: (T₀ − T₁)·(β − C₀ + C₁), one product and one opening.
    let pairs: Vec<(G, G)> = trees
        .iter()
        .zip(betas)
        .map(|(t, &beta)| {
            let (sign, value) = output_terms::<G>(party, &t.level);
            (sign, value + beta)
        })
        .collect();
    let ocws = product(session, engine, &pairs)?;
    same_len("output correction words", k, ocws.len())?;
    Ok(trees
        .into_iter()
        .zip(ocws)
        .map(|(t, ocw)| {
            let key = BgiKey::from_parts(party, domain_size, t.root, &t.cws, ocw);
            (key, t.level)
        })
        .collect())
}

/// [`gen_many_with_outputs`] for outputs in Z_2^64: `alpha_bits[j]` are this party's XOR
/// shares of point j's path bits (most significant first), `betas[j]` its additive share of
/// β_j mod 2^64. The tree and its messages are the same; the output correction word is one
/// Z_2^64 Beaver product ([`Arith2::mul_many_z64`], with triples made inline if the pool is
/// short: 128 random OTs and 512 bytes each way per triple) and one opening of 8-byte words.
///
/// # Errors
/// As [`gen_many_with_outputs`]; [`TwopcError::LengthMismatch`] unless there is one share of
/// β per point.
pub fn gen_many_with_outputs_z64<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    alpha_bits: &[Vec<bool>],
    betas: &[Z64],
    domain_size: usize,
    outputs: &mut [Vec<Z64>],
    rng: &mut R,
) -> Result<Vec<BgiKey<Z64>>, TwopcError> {
    same_len("DPF output buffers", alpha_bits.len(), outputs.len())?;
    let bits: Vec<&[bool]> = alpha_bits.iter().map(Vec::as_slice).collect();
    let keys = gen_generic(
        session,
        engine,
        &bits,
        betas,
        domain_size,
        rng,
        |session, engine, pairs| {
            let products = engine.mul_many_z64(session, pairs)?;
            engine.open_many_z64(session, &products)
        },
    )?;
    Ok(keys
        .into_iter()
        .zip(outputs)
        .map(|((key, leaves), out)| {
            out.resize(domain_size, Z64::ZERO);
            outputs_from_leaves(&key, &leaves, out);
            key
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(rng: &mut impl RngCore) -> Block {
        u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
    }

    /// One level's arithmetic on made-up OTs, for every pair of α shares: `z₀ ⊕ z₁` is the
    /// lose side's seed XOR and the control bits are bgi.rs's.
    #[test]
    fn level_shares_open_to_the_lose_side() {
        let mut rng = crate::insecure_rng_for_tests(31);
        for (a0, a1) in [(false, false), (false, true), (true, false), (true, true)] {
            let a = a0 ^ a1;
            let (l, r) = (
                [block(&mut rng), block(&mut rng)],
                [block(&mut rng), block(&mut rng)],
            );
            let sums = |b: usize| LevelSums {
                x: (l[b] ^ r[b]) & SEED_MASK,
                r: r[b] & SEED_MASK,
                t: [lsb(l[b]), lsb(r[b])],
            };
            // OT with P1 as sender (P0 chooses a0), and with P0 as sender (P1 chooses a1).
            let pair10 = [block(&mut rng), block(&mut rng)];
            let pair01 = [block(&mut rng), block(&mut rng)];
            let (y0, t0) = offer(sums(0), a0, pair01);
            let (y1, t1) = offer(sums(1), a1, pair10);
            let z0 = seed_share(sums(0), a0, pair01, pair10[usize::from(a0)], y1);
            let z1 = seed_share(sums(1), a1, pair10, pair01[usize::from(a1)], y0);
            let (s, tl, tr) = correction_word([z0, z1], [t0, t1]);
            let lose = if a { l[0] ^ l[1] } else { r[0] ^ r[1] };
            assert_eq!(s, lose & SEED_MASK, "a = {a0} ⊕ {a1}");
            assert_eq!(tl, lsb(l[0] ^ l[1]) ^ a ^ true);
            assert_eq!(tr, lsb(r[0] ^ r[1]) ^ a);
            assert!(!lsb(y0) && !lsb(z0));
        }
    }

    #[test]
    fn offers_round_trip_and_refuse_stray_bits() {
        for k in [1usize, 3, 4, 5] {
            let o = Offer {
                masked: (0..k as u128).map(|i| (i + 7) << 9).collect(),
                bits: (0..k).map(|i| [i % 2 == 0, i % 3 == 0]).collect(),
            };
            let bytes = o.encode();
            assert_eq!(bytes.len(), offer_len(k));
            assert_eq!(Offer::decode(PartyId::P1, &bytes, k).unwrap(), o);
            assert!(Offer::decode(PartyId::P1, &bytes[1..], k).is_err());
            let mut odd = bytes.clone();
            odd[0] |= 1;
            assert!(Offer::decode(PartyId::P1, &odd, k).is_err());
            if (2 * k) % 8 != 0 {
                let mut pad = bytes.clone();
                *pad.last_mut().unwrap() |= 0x80;
                assert!(Offer::decode(PartyId::P1, &pad, k).is_err());
            }
        }
    }

    #[test]
    fn depths_and_kept_nodes() {
        assert_eq!([1, 2, 3, 4, 5, 1000].map(depth), [0, 1, 2, 2, 3, 10]);
        // n = 5, d = 3: 1, 2, 3 and 5 nodes from the root down.
        assert_eq!(
            (0..=3).map(|i| kept(5, 3, i)).collect::<Vec<_>>(),
            [1, 2, 3, 5]
        );
    }
}
