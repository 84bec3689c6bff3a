//! 2P-Duoram's READ ([Duoram §5]) by symmetric PIR, one instance each way: each party holds
//! additive F_p shares `D_b` of the memory, and reads return additive shares of `D[i*]` for an
//! additively shared index `i*`, with no third party.
//!
//! Brief overview: [`ReadSetup`] holds this party's SPIRAL keys (for its own lookups) and the
//! peer's public parameters (to answer the peer's), made once per pair by [`setup_reads`];
//! [`prepare_reads`] makes [`ReadMaterial`]s (the input-independent part of a READ), each
//! consumed by one [`read`].
//!
//! # The protocol ([Duoram §5], "2P READ via CSPIR")
//! **Setup** (once): each party sends the public parameters of its SPIRAL keys
//! ([`doram_spir::Client`]; 2.1–2.3 MB).
//!
//! **Preprocessing** (per READ, each direction; the querying party `P_b`, the answering party
//! `P_{1−b}`):
//! 1. `d = log₂ N` random OTs, `P_{1−b}` sending: `P_{1−b}` gets the pairs `k_{j,0}, k_{j,1}`,
//!    `P_b` its random choice bits, which *are* its random index `ri_b ∈ [0, N)` (bit j = choice
//!    j), and `k_{j, bit j of ri_b}`. These are the keys of the PIR-to-SPIR transform
//!    ([`doram_spir::masks`], Naor–Pinkas).
//! 2. `P_b` sends a SPIRAL query for `ri_b`; `P_{1−b}` expands it (query expansion and GSW
//!    conversion do not depend on the database).
//! 3. `P_{1−b}` draws its blind `r_{1−b} ∈ F_p`.
//!
//! **Online** (two flights):
//! 1. `P_b` sends `o_b = i*_b − ri_b mod N`.
//! 2. `P_{1−b}` computes `T = i*_{1−b} + o_b mod N` and answers `P_b`'s query on the database
//!    `D'[x] = (D_{1−b}[x + T mod N] + r_{1−b}) ⊕ m_x` (16-byte records, `m_x` the SPIR mask
//!    of record x), i.e. the paper's blinded rotation, masked. `D'[ri_b]` is
//!    `(D_{1−b}[i*] + r_{1−b}) ⊕ m_{ri_b}`.
//! 3. `P_b` decodes record `ri_b`, removes its mask and gets `c_b = D_{1−b}[i*] + r_{1−b}`; its
//!    output is `c_b − r_b`. The two outputs sum to `D_0[i*] + D_1[i*]` (Lemma 4).
//!
//! Both directions run at once: one message each way per flight.
//!
//! # What each party sees
//! `P_{1−b}` sees `o_b`, uniform because `ri_b` is (and unknown to it: it only sent OT pairs),
//! and `P_b`'s SPIRAL query (semantically secure). `P_b` sees the SPIRAL response, from which
//! it can decrypt the 512 records of the item holding `ri_b`; all but `ri_b`'s are masked by
//! masks it cannot compute, and `ri_b`'s is `D_{1−b}[i*] + r_{1−b}`, uniform by `r_{1−b}`.
//! Semi-honest security, as for the rest of the two-party engine.
//!
//! # Costs (per READ, per party, N = padded domain)
//! Setup: the public parameters once. Preprocessing: `d` random OTs each way, one query
//! (16 416 bytes) each way, one query expansion, and the N record masks (`2N` hashes; the
//! material holds them, 16 bytes per word of the memory, until the READ). Online: 8 bytes and
//! one response (20 480 bytes) each way; encoding and answering over the whole rotated memory
//! (one NTT per 128 words, consumed at once by SPIRAL's first dimension, and the folding).
//!
//! [Duoram §5]: crate

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_field::{Fp, Z64};
use doram_net::Session;
use doram_prim::aes::Block;
use doram_spir::{Client, Expanded, RECORD_BYTES, Server, Shape, SpirError, masks};
use doram_twopc::arith::Arith2;
use doram_twopc::driver::{peer, rot_receive, rot_send};
use rand_core::{CryptoRng, RngCore};

use super::{MemoryShare, MemoryShare64, check_size, field_mod_n, masked_field_offset, mod_n};
use crate::error::DuoramError;

const PUBLIC_PARAMS: &str = "SPIR public parameters";
const QUERY: &str = "SPIR query";
const RESPONSE: &str = "SPIR response";
const OFFSET: &str = "READ offset";

fn spir_fault(peer: PartyId, what: &'static str, e: SpirError) -> DuoramError {
    DuoramError::Peer(PeerFault::malformed(peer, what, e.to_string()))
}

/// The per-pair state of 2P-Duoram reads at one party: its own SPIRAL keys and the peer's
/// public parameters. `Debug` shows only the shape.
pub struct ReadSetup {
    shape: Shape,
    client: Client,
    server: Server,
}

impl core::fmt::Debug for ReadSetup {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ReadSetup {{ N: {} }}", self.shape.records())
    }
}

impl ReadSetup {
    /// The padded domain N the reads run on.
    pub fn padded_len(&self) -> usize {
        self.shape.records()
    }
}

/// Makes the read state for a memory of `n` words: fresh SPIRAL keys (OS entropy), public
/// parameters exchanged (one message each way).
///
/// # Errors
/// [`DuoramError::InvalidSize`] unless `1 ≤ n ≤ 2^26` (before anything is sent);
/// [`DuoramError::Twopc`] for a session that does not have two parties; transport failures and
/// the peer's malformed parameters, naming it.
pub fn setup_reads(session: &mut Session, n: usize) -> Result<ReadSetup, DuoramError> {
    setup_reads_with(session, n, RECORD_BYTES)
}

/// [`setup_reads`] for a memory of 64-bit words ([`read_u64`]): SPIRAL over 8-byte records,
/// 1024 to an item, half the items and half the online work of F_p words.
///
/// # Errors
/// As [`setup_reads`].
pub fn setup_reads_u64(session: &mut Session, n: usize) -> Result<ReadSetup, DuoramError> {
    setup_reads_with(session, n, 8)
}

fn setup_reads_with(
    session: &mut Session,
    n: usize,
    record_bytes: usize,
) -> Result<ReadSetup, DuoramError> {
    let big = check_size(n)?;
    let shape =
        Shape::with_record_bytes(big, record_bytes).map_err(|_| DuoramError::InvalidSize {
            n,
            reason: "2P-Duoram reads support n ≤ 2^26",
        })?;
    let other = peer(session)?;
    let (client, pp) = Client::new(shape);
    session.send_bytes(other, &pp)?;
    let theirs = session.recv_bytes(other)?;
    let server = Server::new(shape, &theirs).map_err(|e| spir_fault(other, PUBLIC_PARAMS, e))?;
    Ok(ReadSetup {
        shape,
        client,
        server,
    })
}

/// The answering party's blind `r_b` of one READ, in the memory's word type.
#[derive(Clone, Copy)]
enum Blind {
    Field(Fp),
    Word(u64),
}

/// One READ's preprocessed material at one party ([module documentation](self)): its random
/// index and SPIR keys as the querying party, the peer's expanded query, its SPIR key pairs and
/// its blind as the answering party. Single use: [`read`] takes it by value. `Debug` shows only
/// the domain.
pub struct ReadMaterial {
    big: usize,
    /// `ri_b`.
    ri: u64,
    /// `k_{j, bit j of ri_b}`.
    chosen: Vec<Block>,
    /// The peer's query, expanded.
    expanded: Expanded,
    /// The masks of the N records of the peer's lookup, from `k_{j,0}, k_{j,1}`.
    masks: Vec<Block>,
    /// `r_b`: in F_p, or in Z_2^64 for a 64-bit-word setup ([`setup_reads_u64`]).
    blind: Blind,
}

impl core::fmt::Debug for ReadMaterial {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ReadMaterial {{ N: {}, .. }}", self.big)
    }
}

impl ReadMaterial {
    /// The padded domain N the material was made for.
    pub fn padded_len(&self) -> usize {
        self.big
    }
}

/// Preprocessing step 1: `count · d` random OTs each way, `P0` sending first.
#[allow(clippy::type_complexity)]
fn key_ots<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    m: usize,
    rng: &mut R,
) -> Result<(Vec<[Block; 2]>, Vec<bool>, Vec<Block>), DuoramError> {
    let me_first = session.me() == PartyId::P0;
    let (sender, receiver) = engine.ots_mut();
    let (sent, got) = if me_first {
        let s = rot_send(session, sender, m)?;
        let r = rot_receive(session, receiver, m, rng)?;
        (s, r)
    } else {
        let r = rot_receive(session, receiver, m, rng)?;
        let s = rot_send(session, sender, m)?;
        (s, r)
    };
    Ok((sent.msgs, got.choices, got.msgs))
}

/// Makes `count` READs' material (all steps of the preprocessing; `3 + OT` rounds for the whole
/// batch).
///
/// # Errors
/// [`DuoramError::Twopc`] for a session that does not have two parties; transport failures and
/// the peer's malformed queries, naming it.
pub fn prepare_reads<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    setup: &ReadSetup,
    count: usize,
    rng: &mut R,
) -> Result<Vec<ReadMaterial>, DuoramError> {
    let other = peer(session)?;
    let big = setup.padded_len();
    let d = big.trailing_zeros() as usize;
    if count == 0 {
        return Ok(Vec::new());
    }
    // Step 1.
    let (pairs, choices, chosen) = key_ots(session, engine, count * d, rng)?;
    let indices: Vec<u64> = (0..count)
        .map(|k| {
            choices[k * d..(k + 1) * d]
                .iter()
                .enumerate()
                .fold(0u64, |acc, (j, &c)| acc | (u64::from(c) << j))
        })
        .collect();
    // Step 2: one query message per READ each way.
    for &ri in &indices {
        let q = setup
            .client
            .query(usize::try_from(ri).unwrap_or(usize::MAX))
            .map_err(|_| DuoramError::ApiMisuse("a random index outside the domain"))?;
        session.send_bytes(other, &q)?;
    }
    let mut out = Vec::with_capacity(count);
    for (k, &ri) in indices.iter().enumerate() {
        let q = session.recv_bytes(other)?;
        let expanded = setup
            .server
            .expand(&q)
            .map_err(|e| spir_fault(other, QUERY, e))?;
        let mut masks = Vec::new();
        masks::sender_masks(&pairs[k * d..(k + 1) * d], &mut masks);
        out.push(ReadMaterial {
            big,
            ri,
            chosen: chosen[k * d..(k + 1) * d].to_vec(),
            expanded,
            masks,
            // Step 3.
            blind: if setup.shape.record_bytes() == RECORD_BYTES {
                Blind::Field(Fp::random(rng))
            } else {
                Blind::Word(rng.next_u64())
            },
        });
    }
    Ok(out)
}

/// Reads `D[i*]`: returns this party's additive share ([module documentation](self)).
/// `i_share` is this party's additive share of i* mod N (reduced mod N if larger); the peer
/// calls it with its share and its material of the same position. Two flights; the first
/// message is 8 bytes.
///
/// # Errors
/// [`DuoramError::ApiMisuse`] if the material or the setup was made for another domain than
/// the memory's, or for 64-bit words (before anything is sent); [`DuoramError::Twopc`] for a
/// session that does not have two parties; transport failures and a malformed peer message
/// ([`DuoramError::Peer`], naming it).
pub fn read(
    session: &mut Session,
    memory: &MemoryShare,
    setup: &mut ReadSetup,
    material: ReadMaterial,
    i_share: u64,
) -> Result<Fp, DuoramError> {
    let big = check_domain(memory.padded_len(), setup, &material)?;
    let blind = field_blind(&material)?;
    let mine = mod_n(i_share.wrapping_sub(material.ri), big);
    let c: Fp = read_inner(
        session,
        setup,
        material,
        &mine.to_le_bytes(),
        offset_mod_n(i_share, big),
        |src| (memory.words[src] + blind).to_le_bytes(),
    )?;
    Ok(c - blind)
}

/// [`read`] on a memory of 64-bit words shared additively mod 2^64, with a setup from
/// [`setup_reads_u64`]; returns this party's share of `D[i*]` mod 2^64.
///
/// # Errors
/// As [`read`]; [`DuoramError::ApiMisuse`] also if the material is for F_p words.
pub fn read_u64(
    session: &mut Session,
    memory: &MemoryShare64,
    setup: &mut ReadSetup,
    material: ReadMaterial,
    i_share: u64,
) -> Result<Z64, DuoramError> {
    let big = check_domain(memory.padded_len(), setup, &material)?;
    let Blind::Word(blind) = material.blind else {
        return Err(DuoramError::ApiMisuse(
            "READ material for F_p words used on 64-bit words",
        ));
    };
    let mine = mod_n(i_share.wrapping_sub(material.ri), big);
    let c: [u8; 8] = read_inner(
        session,
        setup,
        material,
        &mine.to_le_bytes(),
        offset_mod_n(i_share, big),
        |src| memory.words[src].0.wrapping_add(blind).to_le_bytes(),
    )?;
    Ok(Z64(u64::from_le_bytes(c).wrapping_sub(blind)))
}

/// The peer's first message for an index shared mod N: its offset `o < N`, giving the rotation
/// `T = i_share + o mod N`.
fn offset_mod_n(
    i_share: u64,
    big: usize,
) -> impl FnOnce(PartyId, &[u8]) -> Result<usize, PeerFault> {
    move |other, bytes| {
        wire::exact_len(other, OFFSET, bytes, 8)?;
        let mut o = [0u8; 8];
        o.copy_from_slice(bytes);
        let theirs = u64::from_le_bytes(o);
        if theirs >= big as u64 {
            return Err(PeerFault::malformed(other, OFFSET, "an offset not below N"));
        }
        Ok(usize::try_from(mod_n(i_share.wrapping_add(theirs), big)).unwrap_or_default())
    }
}

/// [`read`] for an index shared additively in F_p (as a
/// [`SharedMemory`](doram_oram::SharedMemory) program holds it): the first message is the
/// statistically masked offset `i_b − ri_b + N·q_b` (16 bytes; see
/// [`update_field_many`](super::update_field_many)). An index of N or more reads an
/// unspecified cell.
///
/// # Errors
/// As [`read`].
pub fn read_field<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    memory: &MemoryShare,
    setup: &mut ReadSetup,
    material: ReadMaterial,
    i_share: Fp,
    rng: &mut R,
) -> Result<Fp, DuoramError> {
    let big = check_domain(memory.padded_len(), setup, &material)?;
    let blind = field_blind(&material)?;
    let mine = masked_field_offset(i_share, material.ri, big, rng);
    let c: Fp = read_inner(
        session,
        setup,
        material,
        &mine.to_le_bytes(),
        |other, bytes| {
            wire::exact_len(other, OFFSET, bytes, 16)?;
            let mut e = [0u8; 16];
            e.copy_from_slice(bytes);
            let theirs =
                Fp::from_le_bytes(e).map_err(|fault| PeerFault::new(other, OFFSET, fault))?;
            Ok(field_mod_n(i_share + theirs, big))
        },
        |src| (memory.words[src] + blind).to_le_bytes(),
    )?;
    Ok(c - blind)
}

fn check_domain(
    big: usize,
    setup: &ReadSetup,
    material: &ReadMaterial,
) -> Result<usize, DuoramError> {
    if material.big != big || setup.padded_len() != big {
        return Err(DuoramError::ApiMisuse(
            "READ material was made for another memory size",
        ));
    }
    Ok(big)
}

fn field_blind(material: &ReadMaterial) -> Result<Fp, DuoramError> {
    match material.blind {
        Blind::Field(r) => Ok(r),
        Blind::Word(_) => Err(DuoramError::ApiMisuse(
            "READ material for 64-bit words used on F_p words",
        )),
    }
}

/// Record bytes of a word type the READ carries: F_p (16 bytes) or 64-bit words (8).
trait Record<const B: usize>: Sized {
    fn from_record(peer: PartyId, bytes: [u8; B]) -> Result<Self, PeerFault>;
}

impl Record<RECORD_BYTES> for Fp {
    fn from_record(peer: PartyId, bytes: [u8; RECORD_BYTES]) -> Result<Fp, PeerFault> {
        Fp::from_le_bytes(bytes).map_err(|fault| PeerFault::new(peer, RESPONSE, fault))
    }
}

impl Record<8> for [u8; 8] {
    fn from_record(_: PartyId, bytes: [u8; 8]) -> Result<[u8; 8], PeerFault> {
        Ok(bytes)
    }
}

/// The online steps around the offset message `mine`; `rotation` parses the peer's offset
/// message into the rotation T of this party's share, and `blinded(src)` is this party's
/// blinded word at source index `src` (`D_b[src] + r_b`) as record bytes. Returns
/// `c_b = D_{1−b}[i*] + r_{1−b}`.
fn read_inner<T: Record<B>, const B: usize>(
    session: &mut Session,
    setup: &ReadSetup,
    material: ReadMaterial,
    mine: &[u8],
    rotation: impl FnOnce(PartyId, &[u8]) -> Result<usize, PeerFault>,
    blinded: impl Fn(usize) -> [u8; B],
) -> Result<T, DuoramError> {
    let big = material.big;
    let other = peer(session)?;
    // Online step 1.
    session.send_bytes(other, mine)?;
    let t = rotation(other, &session.recv_bytes(other)?)?;
    // Online step 2: the peer's lookup, on this party's blinded, rotated, masked share.
    let m = &material.masks;
    let response = setup.server.answer_records(&material.expanded, |x| {
        let mut rec = blinded((x + t) & (big - 1));
        xor_mask(&mut rec, m[x]);
        rec
    });
    session.send_bytes(other, &response)?;
    // Online step 3.
    let theirs = session.recv_bytes(other)?;
    let ri = usize::try_from(material.ri).unwrap_or_default();
    let mut rec: [u8; B] = setup
        .client
        .decode_record(&theirs, ri)
        .map_err(|e| spir_fault(other, RESPONSE, e))?;
    xor_mask(&mut rec, masks::receiver_mask(&material.chosen));
    Ok(T::from_record(other, rec)?)
}

/// XORs the first `B` bytes of `mask` onto `rec` (a one-time pad; 8-byte records take the
/// low half of the 16-byte mask).
fn xor_mask<const B: usize>(rec: &mut [u8; B], mask: Block) {
    let mask = mask.to_le_bytes();
    rec.iter_mut().zip(mask).for_each(|(r, k)| *r ^= k);
}
