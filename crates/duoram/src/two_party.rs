//! 2P-Duoram ([Duoram §5]), UPDATE here, READ in [`mod@read`] and the memory backend in
//! [`backend`]: two parties `P0` and `P1` hold additive F_p shares of a memory and add a
//! secret-shared δ at a secret-shared index i*, with no third party. "The
//! online phase of the 2-party UPDATE protocol is then the same as the online phase of the
//! 3-party protocol, but without the additional REFRESHBLINDS operation": one flight of two
//! words each way and O(n) local work, after a preprocessing that makes the DPF keys between
//! the two parties by OT ([`doram_twopc::dpf_gen`], [Duoram App. C]).
//!
//! Brief overview: [`MemoryShare`] is one party's share of the memory; [`prepare`] makes a
//! batch of [`UpdateMaterial`]s, each consumed by one [`update`] (or several together by
//! [`update_many`], in one flight), which hands back its buffers ([`SpentMaterial`]) for
//! [`prepare_reusing`]; [`MaskedUpdate`] is the one online message; [`open_memory`] reveals the
//! memory and [`check_against_plain`] compares it with a plaintext array (for tests and
//! examples). The types are the same at both parties; where the two roles differ (the
//! conversion of the random index), the driver picks the role from the session. READ, by
//! symmetric PIR in both directions, is in [`mod@read`] ([`setup_reads`], [`prepare_reads`],
//! [`read()`]); it works on the same [`MemoryShare`].
//!
//! # The protocol
//! Words are in F_p ([`MemoryShare`]) or in Z_2^64 ([`MemoryShare64`], the paper's 8-byte
//! words: [`prepare_u64`] makes keys with Z_2^64 outputs, [`read_u64`] reads over 8-byte SPIR
//! records); [`update`], [`update_many`] and [`open_memory`] take either ([`TwoPartyWord`]).
//! The memory has `n ≥ 1` words; everything runs on the padded domain `N = 2^⌈log₂ n⌉`
//! (decision 2).
//!
//! **Preprocessing** ([`prepare`], per UPDATE, all of a batch together):
//! 1. Each party draws its XOR share `a_b` of a random index `r ∈ [0, N)` (its `log₂ N` bits)
//!    and its additive share `ρ_b` of a random `ρ ∈ F_p`.
//! 2. [`doram_twopc::dpf_gen::gen_many_with_outputs`] makes two BGI keys at `α = r`: the
//!    *value key* with `β = ρ` and the *unit key* with `β = 1` (decision 1), and hands each
//!    party both keys' evaluations on the whole domain, from the generation's own leaves:
//!    `v_b` and `u_b` with `v_0 + v_1 = ρ·e_r` and `u_0 + u_1 = e_r`.
//! 3. Additive shares of r mod N from the XOR shares ([Duoram §2.7]'s "share conversion"):
//!    `r = Σ_j 2^j (a_{0,j} ⊕ a_{1,j}) = Σ_j 2^j (a_{0,j} + a_{1,j} − 2·a_{0,j}·a_{1,j})`;
//!    each cross term comes from one chosen-message OT, `P0` sending `(c_j, c_j + a_{0,j})`
//!    for a random `c_j` mod N and `P1` choosing with `a_{1,j}`, so that
//!    `−c_j + (c_j + a_{0,j}·a_{1,j}) = a_{0,j}·a_{1,j}`. Then
//!    `r_0 = a_0 + 2·Σ_j 2^j c_j` and `r_1 = a_1 − 2·Σ_j 2^j m_j` (mod N), `m_j` what `P1`
//!    received. Since N divides 2^64, the sums are computed with wrapping `u64` arithmetic and
//!    reduced at the end.
//!
//! **Online UPDATE** ([`update`]) of `(i*, δ)`, `i*` shared additively mod N (`i*_b`), δ
//! additively in F_p (`δ_b`):
//! 1. `P_b` sends `(i*_b − r_b mod N, δ_b − ρ_b)` ([`MaskedUpdate`]): one flight, two words
//!    each way.
//! 2. Both compute the offset `S = Σ_b (i*_b − r_b) mod N = i* − r` and `F = Σ_b (δ_b − ρ_b)
//!    = δ − ρ`.
//! 3. `P_b` adds `D_b[x] += v_b[x − S] + F·u_b[x − S]` for every x (the cyclic shift of
//!    [Duoram §4.2.1], in two contiguous segments, never materialised). The sum over the two
//!    parties is `ρ·[x − S = r] + (δ − ρ)·[x − S = r] = δ·[x = i*]`.
//!
//! # Deliberate decisions
//! 1. **Two keys per UPDATE (open point U3 of the implementer's notes).** The paper says one
//!    DPF per UPDATE, but the final correction needs the unit vector as *additive* shares,
//!    and the conversion of XOR-shared flags ([Duoram App. D]) itself needs `(v, F)` of a
//!    second DPF at the same index, plus a product and two openings. Here the second DPF is a
//!    unit key (`β = 1`) from the same [`gen_many_with_outputs`] batch: it costs no extra
//!    round (all keys of a batch share the rounds of one), about 1.1 KiB and one Beaver
//!    product more per UPDATE, and `4N` fixed-key AES calls more at each party (`2N` for the
//!    tree, `N` for the sums of the output correction, `N` for the outputs), and the online
//!    work is one multiply-add per word either
//!    way. The value key's `β = ρ` is the paper's deferred final correction: `δ_b − ρ_b`
//!    plays the part of `M_b + F_b`. **Keys per UPDATE: 2.** (A single key would do if the
//!    value vector came from a second, independent PRG output of the unit key's leaves, whose
//!    on-path difference is random and unknown to both parties; that needs changes to the DPF
//!    crate and its own security argument, and is not done here.)
//! 2. **Non-power-of-two n (U8): the memory runs on the padded domain N.** The DPFs are on
//!    `[0, N)`, r is uniform in `[0, N)`, and the offset and the shift are mod N, so S is
//!    uniform and independent of i*. Cells `n..N` are never addressed by a valid index and stay
//!    zero; [`MemoryShare::words`] shows the first n. The cost is up to a factor 2 in work and
//!    memory for n just above a power of two. (Running the shift mod n instead would need r
//!    uniform mod n, i.e. shares of `r mod n` from shares of r, a comparison circuit.) An
//!    index `i* ≥ n` (shares summing to it mod N) updates a padding cell, and its offset is
//!    still uniform; nothing fails.
//! 3. **The material holds the evaluated vectors**, not the keys: the full-domain evaluation
//!    of both keys happens in preprocessing, so the online phase is one pass over the memory
//!    and two stored vectors. One UPDATE's material is `2N` field elements (32 MiB at
//!    `N = 2^20`); callers preprocess in batches sized to their memory, and recycle the
//!    buffers of consumed material ([`prepare_reusing`]), as 3P-Duoram does.
//! 4. **Material is single use by construction**: [`update`] takes it by value. Reusing r
//!    would reveal the difference of two indices through the offsets.
//!
//! # Costs (per party, K UPDATEs in one batch, d = log₂ N)
//! * Preprocessing: [`gen_many_with_outputs`] for 2K keys (2d + 3 rounds plus the OT
//!   extension; two level messages of about 32K bytes each way per level; 2K Beaver
//!   products, with triples made inline if the engine's pool is short, about 2.5 KiB each way
//!   per triple), then dK chosen-message OTs of 16-byte messages (three flows); about `8N`
//!   fixed-key AES calls per UPDATE, the evaluations coming from the generation's leaves.
//!   Measured by the `update2p` example: `2d + 6` rounds per batch whatever its size (38 at
//!   `N = 2^16`, 46 at `2^20`, triples made inline), and 6.4–7.7 KB sent per party and UPDATE,
//!   most of it for the two triples.
//! * Online: one message of [`MaskedUpdate::LEN`] = 24 bytes each way, one round; N
//!   multiply-adds. k UPDATEs known together ([`update_many`]): one message of `24k` bytes
//!   each way, still one round.
//!
//! # Who learns what (semi-honest)
//! A party sees the dpf_gen transcript (which hides r and ρ, see its module), the B2A OT
//! messages (the receiver's chosen message is masked by a uniform `c_j`), and per UPDATE the
//! peer's `i*_{1−b} − r_{1−b}` and `δ_{1−b} − ρ_{1−b}`, i.e. `S = i* − r` and `F = δ − ρ`
//! given its own shares: S is uniform because r is uniform and used once, F because ρ is.
//! Message sizes depend only on K and N. A malicious peer can corrupt the memory but not make
//! a party panic: every message has an exact length fixed by public sizes, an offset must be
//! below N and a field element canonical, and a fault is a [`PeerFault`] naming the peer.
//!
//! # Example
//! Two parties in one process, one thread each, add 5 at index 3 and 7 at index 9 of a zero
//! memory of 10 words (`P0` holds the index and the value, `P1` zeros: public constants):
//! ```
//! use doram_duoram::two_party::{MemoryShare, check_against_plain, prepare, update};
//! use doram_duoram::DuoramError;
//! use doram_field::Fp;
//! use doram_net::Session;
//! use doram_twopc::arith::Arith2;
//!
//! let n = 10;
//! std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(2)
//!         .into_iter()
//!         .map(|mut session| {
//!             s.spawn(move || -> Result<(), DuoramError> {
//!                 let me = session.me().index();
//!                 // OS entropy (doram_twopc::os_rng) in real use.
//!                 let mut rng = doram_twopc::insecure_rng_for_tests(me as u64);
//!                 let mut engine = Arith2::setup(&mut session, &mut rng)?;
//!                 let mut memory = MemoryShare::zeros(n)?;
//!                 let batch = prepare(&mut session, &mut engine, 2, n, &mut rng)?;
//!                 for (material, (i, d)) in batch.into_iter().zip([(3, 5), (9, 7)]) {
//!                     let (i, d) = if me == 0 { (i, Fp::from_u64(d)) } else { (0, Fp::ZERO) };
//!                     update(&mut session, &mut memory, material, i, d)?;
//!                 }
//!                 let mut plain = vec![Fp::ZERO; n];
//!                 plain[3] = Fp::from_u64(5);
//!                 plain[9] = Fp::from_u64(7);
//!                 check_against_plain(&mut session, &memory, &plain)
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<()>, _>>()
//! })?;
//! # Ok::<(), DuoramError>(())
//! ```
//!
//! [Duoram §5]: crate
//! [Duoram §2.7]: crate
//! [Duoram §4.2.1]: crate
//! [Duoram App. C]: crate
//! [Duoram App. D]: crate

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_field::fp::add_axpy;
use doram_field::{Fp, Group, Ring, Z64, decode_vec, encode_vec};
use doram_net::Session;
use doram_prim::aes::Block;
use doram_twopc::arith::{Arith2, Share};
use doram_twopc::dpf_gen::{
    PointShare, gen_many_with_outputs, gen_many_with_outputs_z64, path_bits,
};
use doram_twopc::driver::{ot_receive, ot_send, peer};
use rand_core::{CryptoRng, RngCore};

pub mod backend;
pub mod read;

pub use backend::{BackendWord, Duoram2, Duoram2Of, Duoram2Z64};

pub use read::{
    ReadMaterial, ReadSetup, prepare_reads, read, read_field, read_u64, setup_reads,
    setup_reads_u64,
};

use crate::duoram::MAX_LOG_N;
use crate::error::DuoramError;

/// The padded domain `N = 2^⌈log₂ n⌉` of a memory of `n ≥ 1` words ([decision 2](self)).
pub fn padded_len(n: usize) -> usize {
    n.next_power_of_two()
}

/// Checks a memory size: `1 ≤ n ≤ 2^40`.
fn check_size(n: usize) -> Result<usize, DuoramError> {
    if n == 0 || n > 1 << MAX_LOG_N {
        return Err(DuoramError::InvalidSize {
            n,
            reason: "2P-Duoram supports 1 ≤ n ≤ 2^40",
        });
    }
    Ok(padded_len(n))
}

/// The word rings 2P-Duoram runs over: F_p ([`MemoryShare`], the words of the two-party
/// engine and of [`Duoram2`]) and Z_2^64 ([`MemoryShare64`], the paper's 8-byte words). Sealed:
/// implemented for [`Fp`] and [`Z64`] only.
pub trait TwoPartyWord: Ring + sealed::Sealed {
    /// A uniformly random word.
    fn random_word<R: RngCore + ?Sized>(rng: &mut R) -> Self;

    /// This party's share of the constant 1 (`P0` holds it).
    fn one_share(me: PartyId) -> Self {
        if me == PartyId::P0 {
            Self::ONE
        } else {
            Self::ZERO
        }
    }

    /// `memory[x] += v[x] + f·u[x]` for every x (the three slices of equal length).
    fn add_axpy(memory: &mut [Self], f: Self, u: &[Self], v: &[Self]);

    /// The UPDATE's two keys per draw (value key β = ρ, unit key β = 1, both at r) with their
    /// full-domain evaluations into `outputs` ([decision 1](self)).
    #[doc(hidden)]
    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        session: &mut Session,
        engine: &mut Arith2,
        points: &[(Vec<bool>, Self)],
        big: usize,
        outputs: &mut [Vec<Self>],
        rng: &mut R,
    ) -> Result<(), DuoramError>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for doram_field::Fp {}
    impl Sealed for doram_field::Z64 {}
}

impl TwoPartyWord for Fp {
    fn random_word<R: RngCore + ?Sized>(rng: &mut R) -> Fp {
        Fp::random(rng)
    }

    fn add_axpy(memory: &mut [Fp], f: Fp, u: &[Fp], v: &[Fp]) {
        add_axpy(memory, f, u, v);
    }

    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        session: &mut Session,
        engine: &mut Arith2,
        points: &[(Vec<bool>, Fp)],
        big: usize,
        outputs: &mut [Vec<Fp>],
        rng: &mut R,
    ) -> Result<(), DuoramError> {
        let points: Vec<PointShare> = points
            .iter()
            .map(|(bits, beta)| PointShare::new(bits.clone(), Share::from_raw(*beta)))
            .collect();
        gen_many_with_outputs(session, engine, &points, big, outputs, rng)?;
        Ok(())
    }
}

impl TwoPartyWord for Z64 {
    fn random_word<R: RngCore + ?Sized>(rng: &mut R) -> Z64 {
        Z64(rng.next_u64())
    }

    fn add_axpy(memory: &mut [Z64], f: Z64, u: &[Z64], v: &[Z64]) {
        for ((m, &u), &v) in memory.iter_mut().zip(u).zip(v) {
            *m = *m + v + f * u;
        }
    }

    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        session: &mut Session,
        engine: &mut Arith2,
        points: &[(Vec<bool>, Z64)],
        big: usize,
        outputs: &mut [Vec<Z64>],
        rng: &mut R,
    ) -> Result<(), DuoramError> {
        let (bits, betas): (Vec<Vec<bool>>, Vec<Z64>) = points.iter().cloned().unzip();
        gen_many_with_outputs_z64(session, engine, &bits, &betas, big, outputs, rng)?;
        Ok(())
    }
}

/// This party's additive share of a memory of `n` words of `W`, kept on the padded domain N.
/// `Debug` shows only the sizes.
#[derive(Clone)]
pub struct MemoryShareOf<W> {
    n: usize,
    /// `N` words; cells `n..N` are padding.
    words: Vec<W>,
}

/// A share of a memory of F_p words.
pub type MemoryShare = MemoryShareOf<Fp>;

/// A share of a memory of 64-bit words (additive mod 2^64): READ by [`read_u64`], UPDATE by
/// [`update`] with [`prepare_u64`]'s material.
pub type MemoryShare64 = MemoryShareOf<Z64>;

impl<W> core::fmt::Debug for MemoryShareOf<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "MemoryShare {{ n: {}, N: {} }}",
            self.n,
            self.words.len()
        )
    }
}

impl<W: TwoPartyWord> MemoryShareOf<W> {
    /// A share of the all-zero memory of `n` words (both parties hold zeros).
    ///
    /// # Errors
    /// [`DuoramError::InvalidSize`] unless `1 ≤ n ≤ 2^40`.
    pub fn zeros(n: usize) -> Result<MemoryShareOf<W>, DuoramError> {
        let big = check_size(n)?;
        Ok(MemoryShareOf {
            n,
            words: vec![W::ZERO; big],
        })
    }

    /// This party's share `shares` of a memory of `shares.len()` words (padded with zeros).
    ///
    /// # Errors
    /// [`DuoramError::InvalidSize`] unless `1 ≤ shares.len() ≤ 2^40`.
    pub fn from_shares(mut shares: Vec<W>) -> Result<MemoryShareOf<W>, DuoramError> {
        let n = shares.len();
        let big = check_size(n)?;
        shares.resize(big, W::ZERO);
        Ok(MemoryShareOf { n, words: shares })
    }
}

impl<W> MemoryShareOf<W> {
    /// The memory size n.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a memory has at least one word.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The padded domain N.
    pub fn padded_len(&self) -> usize {
        self.words.len()
    }

    /// This party's shares of the n words.
    pub fn words(&self) -> &[W] {
        &self.words[..self.n]
    }
}

/// One UPDATE's preprocessed material at one party ([Duoram §5], [decision 3](self)):
/// additive shares `r_b` of the random index mod N and `ρ_b` of the random value, and the
/// full-domain evaluations `v_b` (of `ρ·e_r`) and `u_b` (of `e_r`). Consumed by [`update`].
/// `Debug` shows only the domain.
///
/// [Duoram §5]: crate
pub struct UpdateMaterialOf<W> {
    /// `r_b ∈ [0, N)`.
    r: u64,
    /// `ρ_b`.
    rho: W,
    /// `v_b`, N words.
    v: Vec<W>,
    /// `u_b`, N words.
    u: Vec<W>,
}

/// One UPDATE's material for F_p words ([`prepare`]).
pub type UpdateMaterial = UpdateMaterialOf<Fp>;

/// One UPDATE's material for 64-bit words ([`prepare_u64`]).
pub type UpdateMaterial64 = UpdateMaterialOf<Z64>;

impl<W> core::fmt::Debug for UpdateMaterialOf<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "UpdateMaterial {{ N: {}, .. }}", self.v.len())
    }
}

impl<W> UpdateMaterialOf<W> {
    /// The padded domain N it was made for.
    pub fn padded_len(&self) -> usize {
        self.v.len()
    }
}

/// `x mod N` for a power of two `N ≤ 2^40`.
fn mod_n(x: u64, big: usize) -> u64 {
    x & (big as u64 - 1)
}

/// Bits of the statistical mask on an index shared in F_p ([`update_field_many`],
/// [`read_field`]).
const INDEX_MASK_BITS: u32 = 40;

/// This party's masked offset for an index shared in F_p: `i_b − r_b + N·q_b` with `q_b`
/// uniform in `1..=2^40`. The sum of the two parties' offsets (or of one offset and the other
/// party's index share) is then, for an index `i* < N`, the integer
/// `i* − r + N·(q_0 + q_1)` with no reduction mod p (it lies in `[0, N·2^42)`), so its value
/// mod N is `i* − r mod N`, and the carry of the sum is hidden except with probability 2^−40
/// (as for 3P-Duoram over F_p, the crate documentation's decision 8).
fn masked_field_offset<R: RngCore + ?Sized>(i_share: Fp, r: u64, big: usize, rng: &mut R) -> Fp {
    let q = 1 + (rng.next_u64() & ((1u64 << INDEX_MASK_BITS) - 1));
    i_share - Fp::from_u64(r) + Fp::from_u128(big as u128 * u128::from(q))
}

/// `v mod N` for the integer in `[0, p)` that `v` stands for.
fn field_mod_n(v: Fp, big: usize) -> usize {
    // N ≤ 2^40, so the residue fits a usize on the supported targets.
    usize::try_from(v.to_u128() & (big as u128 - 1)).unwrap_or_default()
}

/// Bits of the index on the padded domain: `log₂ N`.
fn index_bits(big: usize) -> usize {
    big.trailing_zeros() as usize
}

/// Preprocessing step 1: this party's XOR share of r, uniform in `[0, N)`.
fn draw_index_share<R: RngCore + ?Sized>(rng: &mut R, big: usize) -> u64 {
    mod_n(rng.next_u64(), big)
}

/// The bits of an index share, least significant first.
fn bits_lsb_first(a: u64, d: usize) -> Vec<bool> {
    (0..d).map(|j| (a >> j) & 1 == 1).collect()
}

/// Preprocessing step 3 at `P0` ([Duoram §2.7], B2A by OT): the OT inputs
/// `(c_j, c_j + a_{0,j})` mod N for the bits of `a0` (least significant first).
///
/// [Duoram §2.7]: crate
fn b2a_offers(a0: u64, masks: &[u64], big: usize) -> Vec<[Block; 2]> {
    masks
        .iter()
        .enumerate()
        .map(|(j, &c)| {
            let bit = (a0 >> j) & 1;
            [Block::from(c), Block::from(mod_n(c + bit, big))]
        })
        .collect()
}

/// Preprocessing step 3 at `P0`: `r_0 = a_0 + 2·Σ_j 2^j c_j` mod N.
fn b2a_share_p0(a0: u64, masks: &[u64], big: usize) -> u64 {
    let cross = masks.iter().enumerate().fold(0u64, |acc, (j, &c)| {
        acc.wrapping_add(c.wrapping_shl(j as u32))
    });
    mod_n(a0.wrapping_add(cross.wrapping_mul(2)), big)
}

/// Preprocessing step 3 at `P1`: `r_1 = a_1 − 2·Σ_j 2^j m_j` mod N, `m_j` the received OT
/// messages.
fn b2a_share_p1(a1: u64, received: &[u64], big: usize) -> u64 {
    let cross = received.iter().enumerate().fold(0u64, |acc, (j, &m)| {
        acc.wrapping_add(m.wrapping_shl(j as u32))
    });
    mod_n(a1.wrapping_sub(cross.wrapping_mul(2)), big)
}

const B2A_OT: &str = "index conversion OT message";

/// The received OT messages as residues mod N: each must be below N.
fn parse_received(peer: PartyId, blocks: &[Block], big: usize) -> Result<Vec<u64>, PeerFault> {
    blocks
        .iter()
        .map(|&b| {
            u64::try_from(b)
                .ok()
                .filter(|&m| m < big as u64)
                .ok_or_else(|| PeerFault::malformed(peer, B2A_OT, "a residue not below N"))
        })
        .collect()
}

/// What one party draws for one UPDATE before any message.
struct Draw<W> {
    /// XOR share of r.
    a: u64,
    /// Additive share of ρ.
    rho: W,
}

/// The two points of one UPDATE for [`gen_many_with_outputs`]: the value key (`β = ρ`) and
/// the unit key (`β = 1`), both at r ([decision 1](self)). Path bits are read most significant
/// first.
fn key_points<W: TwoPartyWord>(me: PartyId, draw: &Draw<W>, big: usize) -> [(Vec<bool>, W); 2] {
    let a = usize::try_from(draw.a).unwrap_or_default(); // a < N ≤ 2^40 fits
    let bits = path_bits(a, big);
    [(bits.clone(), draw.rho), (bits, W::one_share(me))]
}

/// The buffers of a consumed [`UpdateMaterial`], returned by [`update`] and [`update_many`] so
/// that [`prepare_reusing`] can evaluate the next keys into them: `2N` field elements whose
/// pages are already mapped (at `N = 2^20`, allocating and first touching 32 MiB takes longer
/// than the UPDATE itself, and freeing them a third of it). `Debug` shows only the size.
pub struct SpentMaterialOf<W> {
    v: Vec<W>,
    u: Vec<W>,
}

/// The buffers of a consumed [`UpdateMaterial`].
pub type SpentMaterial = SpentMaterialOf<Fp>;

/// The buffers of a consumed [`UpdateMaterial64`].
pub type SpentMaterial64 = SpentMaterialOf<Z64>;

impl<W> core::fmt::Debug for SpentMaterialOf<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SpentMaterial {{ N: {} }}", self.v.len())
    }
}

/// Preprocesses `count` UPDATEs on a memory of `n` words ([Duoram §5] preprocessing, see the
/// [module documentation](self)), together with the peer, which calls it with the same
/// `count` and `n`. `engine` is the parties' arithmetic engine (its OT extensions and triple
/// pool are used); this party's randomness comes from `rng` (OS entropy in real use).
///
/// # Errors
/// [`DuoramError::InvalidSize`] for an unsupported n (before anything is sent);
/// [`DuoramError::Twopc`] for a session that does not have two parties; transport failures and
/// the peer's malformed messages, naming it.
///
/// [Duoram §5]: crate
pub fn prepare<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    count: usize,
    n: usize,
    rng: &mut R,
) -> Result<Vec<UpdateMaterial>, DuoramError> {
    prepare_reusing(session, engine, count, n, &mut Vec::new(), rng)
}

/// [`prepare`], evaluating the keys into the buffers of consumed material taken from `spare`
/// (as many as it has, up to `count`; the rest are allocated).
///
/// # Errors
/// As [`prepare`].
pub fn prepare_reusing<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    count: usize,
    n: usize,
    spare: &mut Vec<SpentMaterial>,
    rng: &mut R,
) -> Result<Vec<UpdateMaterial>, DuoramError> {
    prepare_words(session, engine, count, n, spare, rng)
}

/// [`prepare`] for a memory of 64-bit words ([`MemoryShare64`]): the same preprocessing with
/// keys whose outputs are in Z_2^64 ([`gen_many_with_outputs_z64`]); one UPDATE's material is
/// `2N` words of 8 bytes.
///
/// # Errors
/// As [`prepare`].
pub fn prepare_u64<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    count: usize,
    n: usize,
    rng: &mut R,
) -> Result<Vec<UpdateMaterial64>, DuoramError> {
    prepare_words(session, engine, count, n, &mut Vec::new(), rng)
}

/// [`prepare_reusing`] for 64-bit words.
///
/// # Errors
/// As [`prepare`].
pub fn prepare_reusing_u64<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    count: usize,
    n: usize,
    spare: &mut Vec<SpentMaterial64>,
    rng: &mut R,
) -> Result<Vec<UpdateMaterial64>, DuoramError> {
    prepare_words(session, engine, count, n, spare, rng)
}

pub(crate) fn prepare_words<W: TwoPartyWord, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    engine: &mut Arith2,
    count: usize,
    n: usize,
    spare: &mut Vec<SpentMaterialOf<W>>,
    rng: &mut R,
) -> Result<Vec<UpdateMaterialOf<W>>, DuoramError> {
    let big = check_size(n)?;
    let other = peer(session)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let d = index_bits(big);
    // Step 1.
    let draws: Vec<Draw<W>> = (0..count)
        .map(|_| Draw {
            a: draw_index_share(rng, big),
            rho: W::random_word(rng),
        })
        .collect();
    // Step 2: two keys per UPDATE in one batch.
    let me = session.me();
    let points: Vec<(Vec<bool>, W)> = draws
        .iter()
        .flat_map(|dr| key_points(me, dr, big))
        .collect();
    // The evaluations land in the buffers of consumed material where there are some.
    let mut outputs: Vec<Vec<W>> = Vec::with_capacity(2 * count);
    for _ in 0..count {
        let buf = spare.pop().unwrap_or(SpentMaterialOf {
            v: Vec::new(),
            u: Vec::new(),
        });
        outputs.extend([buf.v, buf.u]);
    }
    W::gen_keys(session, engine, &points, big, &mut outputs, rng)?;
    // Step 3: one OT per index bit, P0 sending, P1 choosing.
    let shares: Vec<u64> = if d == 0 {
        vec![0; count]
    } else if session.me() == PartyId::P0 {
        let masks: Vec<Vec<u64>> = (0..count)
            .map(|_| (0..d).map(|_| draw_index_share(rng, big)).collect())
            .collect();
        let offers: Vec<[Block; 2]> = draws
            .iter()
            .zip(&masks)
            .flat_map(|(dr, m)| b2a_offers(dr.a, m, big))
            .collect();
        let (sender, _) = engine.ots_mut();
        ot_send(session, sender, &offers)?;
        draws
            .iter()
            .zip(&masks)
            .map(|(dr, m)| b2a_share_p0(dr.a, m, big))
            .collect()
    } else {
        let choices: Vec<bool> = draws
            .iter()
            .flat_map(|dr| bits_lsb_first(dr.a, d))
            .collect();
        let (_, receiver) = engine.ots_mut();
        let got = ot_receive(session, receiver, &choices, rng)?;
        let got = parse_received(other, &got, big)?;
        draws
            .iter()
            .zip(got.chunks_exact(d))
            .map(|(dr, m)| b2a_share_p1(dr.a, m, big))
            .collect()
    };
    let mut outputs = outputs.into_iter();
    Ok(draws
        .iter()
        .zip(shares)
        .map(|(dr, r)| UpdateMaterialOf {
            r,
            rho: dr.rho,
            v: outputs.next().unwrap_or_default(), // two outputs per draw
            u: outputs.next().unwrap_or_default(),
        })
        .collect())
}

/// The online message, `P_b → P_{1−b}` ([Duoram §5], online step 1): `i*_b − r_b mod N` (8
/// bytes, little-endian, below N) and `δ_b − ρ_b` (16 bytes, a canonical field element).
///
/// [Duoram §5]: crate
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MaskedUpdateOf<W> {
    offset: u64,
    delta: W,
}

/// The online message over F_p words (24 bytes).
pub type MaskedUpdate = MaskedUpdateOf<Fp>;

impl<W> core::fmt::Debug for MaskedUpdateOf<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MaskedUpdate(..)")
    }
}

const MASKED_UPDATE: &str = "masked UPDATE (offset and delta)";

impl<W: TwoPartyWord> MaskedUpdateOf<W> {
    /// This party's message for the UPDATE of its shares `i_share` (mod N) and `delta_share`
    /// with `material` (online step 1).
    fn new(material: &UpdateMaterialOf<W>, i_share: u64, delta_share: W) -> MaskedUpdateOf<W> {
        let big = material.padded_len();
        MaskedUpdateOf {
            offset: mod_n(i_share.wrapping_sub(material.r), big),
            delta: delta_share - material.rho,
        }
    }
}

impl MaskedUpdate {
    /// Bytes on the wire.
    pub const LEN: usize = 24;

    /// The wire bytes.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut out = [0u8; Self::LEN];
        encode_masked(self.offset, self.delta, &mut out);
        out
    }

    /// Parses `peer`'s message for a padded domain of `big` words.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` for a length other than [`Self::LEN`], an offset not below
    /// `big`, or a non-canonical field element.
    pub fn decode(peer: PartyId, bytes: &[u8], big: usize) -> Result<MaskedUpdate, PeerFault> {
        wire::exact_len(peer, MASKED_UPDATE, bytes, Self::LEN)?;
        let (offset, delta) = decode_masked(peer, bytes, big)?;
        Ok(MaskedUpdate { offset, delta })
    }
}

/// The wire form of one UPDATE's message over words `W`: the offset `i*_b − r_b mod N` (8
/// bytes, little-endian) and `δ_b − ρ_b` (`W::BYTES`, little-endian), into `out` of exactly
/// `8 + W::BYTES` bytes.
fn encode_masked<W: Group>(offset: u64, delta: W, out: &mut [u8]) {
    out[..8].copy_from_slice(&offset.to_le_bytes());
    delta.write_le(&mut out[8..]);
}

/// Parses one UPDATE's message over words `W` (exactly `8 + W::BYTES` bytes): the offset must
/// be below `big`, the word canonical.
fn decode_masked<W: Group>(peer: PartyId, bytes: &[u8], big: usize) -> Result<(u64, W), PeerFault> {
    wire::exact_len(peer, MASKED_UPDATE, bytes, 8 + W::BYTES)?;
    let mut o = [0u8; 8];
    o.copy_from_slice(&bytes[..8]);
    let offset = u64::from_le_bytes(o);
    if offset >= big as u64 {
        return Err(PeerFault::malformed(
            peer,
            MASKED_UPDATE,
            "an offset not below N",
        ));
    }
    let delta =
        W::read_le(&bytes[8..]).map_err(|fault| PeerFault::new(peer, MASKED_UPDATE, fault))?;
    Ok((offset, delta))
}

/// Online step 2: the public offset `S = Σ(i*_b − r_b) mod N` and `F = Σ(δ_b − ρ_b)`.
fn combine<W: TwoPartyWord>(
    mine: MaskedUpdateOf<W>,
    theirs: MaskedUpdateOf<W>,
    big: usize,
) -> (usize, W) {
    let s = mod_n(mine.offset + theirs.offset, big);
    // s < N ≤ 2^40 fits a usize on the supported targets.
    (
        usize::try_from(s).unwrap_or_default(),
        mine.delta + theirs.delta,
    )
}

/// Online step 3 ([Duoram §4.2.1] shift, §5 update): `D_b[x] += v_b[x − S] + F·u_b[x − S]`
/// over the two contiguous segments of the shift: memory `S..N` with material `0..N − S`, and
/// memory `0..S` with material `N − S..N`, one multiply-add per word (one reduction per word
/// for F_p).
///
/// [Duoram §4.2.1]: crate
fn apply<W: TwoPartyWord>(memory: &mut [W], material: &UpdateMaterialOf<W>, s: usize, f: W) {
    let big = memory.len();
    let (v, u) = (&material.v, &material.u);
    for (mem, mat) in [(s..big, 0..big - s), (0..s, big - s..big)] {
        W::add_axpy(&mut memory[mem], f, &u[mat.clone()], &v[mat]);
    }
}

/// Adds δ at index i* to the memory ([Duoram §5] online UPDATE, see the [module
/// documentation](self)): `i_share` is this party's additive share of i* mod N (reduced mod N
/// if larger), `delta_share` its share of δ; the peer calls it with its own shares and its
/// material of the same position in the batch. One message each way. Returns the material's
/// buffers for [`prepare_reusing`] (or to be dropped).
///
/// # Errors
/// [`DuoramError::ApiMisuse`] if the material was made for another domain than the memory's
/// (before anything is sent); [`DuoramError::Twopc`] for a session that does not have two
/// parties; transport failures and a malformed peer message ([`DuoramError::Peer`], naming
/// it). On an error after sending the memory is unchanged, but the parties may be out of step.
///
/// [Duoram §5]: crate
pub fn update<W: TwoPartyWord>(
    session: &mut Session,
    memory: &mut MemoryShareOf<W>,
    material: UpdateMaterialOf<W>,
    i_share: u64,
    delta_share: W,
) -> Result<SpentMaterialOf<W>, DuoramError> {
    let mut spent = update_many(session, memory, vec![material], &[(i_share, delta_share)])?;
    spent
        .pop()
        .ok_or(DuoramError::ApiMisuse("one UPDATE hands back one material"))
}

/// The misuse checks of [`update_many`] and [`update_field_many`]: one pair of shares per
/// material, every material made for the memory's domain. Returns the domain N.
fn check_materials<W>(
    memory: &MemoryShareOf<W>,
    materials: &[UpdateMaterialOf<W>],
    shares: usize,
) -> Result<usize, DuoramError> {
    let big = memory.padded_len();
    if materials.len() != shares {
        return Err(DuoramError::ApiMisuse(
            "UPDATEs need one pair of shares per material",
        ));
    }
    if materials.iter().any(|m| m.padded_len() != big) {
        return Err(DuoramError::ApiMisuse(
            "UPDATE material was made for another memory size",
        ));
    }
    Ok(big)
}

/// Several UPDATEs whose indices and values are known together, in one flight ([Duoram §1.2]:
/// "doing k updates in parallel requires one message being exchanged"): `shares[j]` is this
/// party's `(i*, δ)` shares for `materials[j]`; one message of `24·k` bytes each way (`16·k`
/// for 64-bit words), then the UPDATEs applied in order. [`update`] is the case k = 1, with the
/// same message.
///
/// # Errors
/// [`DuoramError::ApiMisuse`] unless there is one pair of shares per material and every
/// material was made for the memory's domain (before anything is sent); otherwise as
/// [`update`].
///
/// [Duoram §1.2]: crate
pub fn update_many<W: TwoPartyWord>(
    session: &mut Session,
    memory: &mut MemoryShareOf<W>,
    materials: Vec<UpdateMaterialOf<W>>,
    shares: &[(u64, W)],
) -> Result<Vec<SpentMaterialOf<W>>, DuoramError> {
    let big = check_materials(memory, &materials, shares.len())?;
    let other = peer(session)?;
    if materials.is_empty() {
        return Ok(Vec::new());
    }
    // Online step 1.
    let mine: Vec<MaskedUpdateOf<W>> = materials
        .iter()
        .zip(shares)
        .map(|(m, &(i, d))| MaskedUpdateOf::new(m, i, d))
        .collect();
    let len = 8 + W::BYTES;
    let mut bytes = vec![0u8; len * mine.len()];
    for (m, out) in mine.iter().zip(bytes.chunks_exact_mut(len)) {
        encode_masked(m.offset, m.delta, out);
    }
    session.send_bytes(other, &bytes)?;
    let got = session.recv_bytes(other)?;
    wire::exact_len(other, MASKED_UPDATE, &got, len * mine.len())?;
    let theirs: Vec<MaskedUpdateOf<W>> = got
        .chunks_exact(len)
        .map(|c| {
            let (offset, delta) = decode_masked(other, c, big)?;
            Ok(MaskedUpdateOf { offset, delta })
        })
        .collect::<Result<_, PeerFault>>()?;
    // Online steps 2 and 3.
    Ok(materials
        .into_iter()
        .zip(mine.into_iter().zip(theirs))
        .map(|(material, (a, b))| {
            let (s, f) = combine(a, b, big);
            apply(&mut memory.words, &material, s, f);
            SpentMaterialOf {
                v: material.v,
                u: material.u,
            }
        })
        .collect())
}

const MASKED_FIELD_UPDATE: &str = "masked UPDATE (field offset and delta)";

/// [`update_many`] for indices shared additively in F_p (as a
/// [`SharedMemory`](doram_oram::SharedMemory) program holds them): `shares[j]` is this party's
/// `(i*, δ)` for `materials[j]`, with `i*` an F_p share of an index below N. Each party sends
/// its statistically masked offset (see `masked_field_offset`) and `δ_b − ρ_b`: one message
/// of `32·k` bytes each way, then the same local update. An index of N or more updates an
/// unspecified cell.
///
/// # Errors
/// As [`update_many`].
pub fn update_field_many<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    memory: &mut MemoryShare,
    materials: Vec<UpdateMaterial>,
    shares: &[(Fp, Fp)],
    rng: &mut R,
) -> Result<Vec<SpentMaterial>, DuoramError> {
    let big = check_materials(memory, &materials, shares.len())?;
    let other = peer(session)?;
    if materials.is_empty() {
        return Ok(Vec::new());
    }
    let mine: Vec<[Fp; 2]> = materials
        .iter()
        .zip(shares)
        .map(|(m, &(i, d))| [masked_field_offset(i, m.r, big, rng), d - m.rho])
        .collect();
    let bytes: Vec<u8> = mine
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    session.send_bytes(other, &bytes)?;
    let got = session.recv_bytes(other)?;
    wire::exact_len(other, MASKED_FIELD_UPDATE, &got, 32 * mine.len())?;
    let theirs: Vec<Fp> = got
        .chunks_exact(16)
        .map(|c| {
            let mut e = [0u8; 16];
            e.copy_from_slice(c);
            Fp::from_le_bytes(e).map_err(|fault| PeerFault::new(other, MASKED_FIELD_UPDATE, fault))
        })
        .collect::<Result<_, _>>()?;
    Ok(materials
        .into_iter()
        .zip(mine.into_iter().zip(theirs.chunks_exact(2)))
        .map(|(material, (a, b))| {
            let s = field_mod_n(a[0] + b[0], big);
            apply(&mut memory.words, &material, s, a[1] + b[1]);
            SpentMaterial {
                v: material.v,
                u: material.u,
            }
        })
        .collect())
}

/// Words per message when [`open_memory`] sends a share (4 MiB).
const OPEN_CHUNK: usize = 1 << 18;

const OPENED: &str = "memory share being opened";

/// Reveals the memory to both parties: each sends its n shares and adds the peer's. For tests
/// and examples that check a run against a plaintext array; it reveals everything.
///
/// # Errors
/// [`DuoramError::Twopc`] for a session that does not have two parties; transport failures
/// and the peer's malformed shares (wrong length, non-canonical elements), naming it.
pub fn open_memory<W: TwoPartyWord>(
    session: &mut Session,
    memory: &MemoryShareOf<W>,
) -> Result<Vec<W>, DuoramError> {
    let other = peer(session)?;
    let mine = memory.words();
    let mut out = Vec::with_capacity(mine.len());
    for chunk in mine.chunks(OPEN_CHUNK) {
        session.send_bytes(other, &encode_vec(chunk))?;
        let theirs = session.recv_bytes(other)?;
        let theirs: Vec<W> = decode_vec(&theirs, chunk.len())
            .map_err(|fault| PeerFault::new(other, OPENED, fault))?;
        out.extend(chunk.iter().zip(theirs).map(|(&x, y)| x + y));
    }
    Ok(out)
}

/// Opens the memory ([`open_memory`]) and compares it with `plain`, the plaintext array the
/// same UPDATEs give: for tests and examples; it reveals everything.
///
/// # Errors
/// [`DuoramError::VerificationFailed`] naming the first cell that differs (or index `n` if
/// `plain` has another length); as [`open_memory`].
pub fn check_against_plain<W: TwoPartyWord>(
    session: &mut Session,
    memory: &MemoryShareOf<W>,
    plain: &[W],
) -> Result<(), DuoramError> {
    let opened = open_memory(session, memory)?;
    let bad = opened
        .iter()
        .zip(plain)
        .position(|(a, b)| a != b)
        .or((opened.len() != plain.len()).then_some(opened.len().min(plain.len())));
    match bad {
        Some(index) => Err(DuoramError::VerificationFailed {
            what: "a memory cell",
            index,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use doram_prim::AesPrg;

    fn rng(seed: u8) -> AesPrg {
        AesPrg::new(doram_core::Seed([seed; 16]))
    }

    /// Dealt material for both parties: shares of `ρ·e_r` and `e_r`, of r mod N and of ρ.
    fn dealt(big: usize, r: usize, rho: Fp, g: &mut AesPrg) -> [UpdateMaterial; 2] {
        let split = |x: Fp, g: &mut AesPrg| {
            let a = Fp::random(g);
            (a, x - a)
        };
        let mut m = [(); 2].map(|_| UpdateMaterial {
            r: 0,
            rho: Fp::ZERO,
            v: vec![Fp::ZERO; big],
            u: vec![Fp::ZERO; big],
        });
        for x in 0..big {
            let at = |c: Fp| if x == r { c } else { Fp::ZERO };
            let (v0, v1) = split(at(rho), g);
            let (u0, u1) = split(at(Fp::ONE), g);
            (m[0].v[x], m[1].v[x], m[0].u[x], m[1].u[x]) = (v0, v1, u0, u1);
        }
        let r0 = draw_index_share(g, big);
        m[0].r = r0;
        m[1].r = mod_n((r as u64).wrapping_sub(r0), big);
        let (p0, p1) = split(rho, g);
        (m[0].rho, m[1].rho) = (p0, p1);
        m
    }

    /// δ·[x = i*] = ρ·[x − S = r] + F·[x − S = r]: the two parties' updates sum to δ at i*
    /// and to 0 elsewhere, for every i* (and padding cells past n stay 0).
    #[test]
    fn masked_updates_sum_to_delta_at_the_index() {
        let mut g = rng(1);
        for big in [1usize, 2, 4, 8, 64] {
            for i in 0..big {
                let r = usize::try_from(draw_index_share(&mut g, big)).unwrap();
                let (rho, delta) = (Fp::random(&mut g), Fp::random(&mut g));
                let [m0, m1] = dealt(big, r, rho, &mut g);
                let i0 = draw_index_share(&mut g, big);
                let i1 = mod_n((i as u64).wrapping_sub(i0), big);
                let d0 = Fp::random(&mut g);
                let msg = [
                    MaskedUpdate::new(&m0, i0, d0),
                    MaskedUpdate::new(&m1, i1, delta - d0),
                ];
                let (s, f) = combine(msg[0], msg[1], big);
                assert_eq!(combine(msg[1], msg[0], big), (s, f));
                assert_eq!(s, (i + big - r) % big, "S = i* − r mod N");
                assert_eq!(f, delta - rho);
                let mut mem = [vec![Fp::ZERO; big], vec![Fp::ZERO; big]];
                apply(&mut mem[0], &m0, s, f);
                apply(&mut mem[1], &m1, s, f);
                for x in 0..big {
                    let want = if x == i { delta } else { Fp::ZERO };
                    assert_eq!(mem[0][x] + mem[1][x], want, "N = {big}, i* = {i}, x = {x}");
                }
            }
        }
    }

    /// The B2A by OT gives additive shares of r mod N for every pair of XOR shares.
    #[test]
    fn index_conversion_gives_additive_shares() {
        let mut g = rng(2);
        for big in [2usize, 4, 8, 1 << 20, 1 << 40] {
            let d = index_bits(big);
            for _ in 0..50 {
                let (a0, a1) = (draw_index_share(&mut g, big), draw_index_share(&mut g, big));
                let masks: Vec<u64> = (0..d).map(|_| draw_index_share(&mut g, big)).collect();
                let offers = b2a_offers(a0, &masks, big);
                let got: Vec<Block> = (0..d)
                    .map(|j| offers[j][usize::from((a1 >> j) & 1 == 1)])
                    .collect();
                let got = parse_received(PartyId::P0, &got, big).unwrap();
                let r0 = b2a_share_p0(a0, &masks, big);
                let r1 = b2a_share_p1(a1, &got, big);
                assert!(r0 < big as u64 && r1 < big as u64);
                assert_eq!(mod_n(r0 + r1, big), a0 ^ a1, "N = {big}");
            }
        }
    }

    #[test]
    fn masked_update_round_trips_and_refuses_bad_input() {
        let m = MaskedUpdate {
            offset: 5,
            delta: Fp::from_u64(77),
        };
        let bytes = m.encode();
        assert_eq!(MaskedUpdate::decode(PartyId::P1, &bytes, 8).unwrap(), m);
        let short = MaskedUpdate::decode(PartyId::P1, &bytes[..23], 8).unwrap_err();
        assert_eq!((short.peer, short.lengths()), (PartyId::P1, Some((24, 23))));
        assert_eq!(
            MaskedUpdate::decode(PartyId::P0, &bytes, 4)
                .unwrap_err()
                .peer,
            PartyId::P0
        );
        let mut big_delta = bytes;
        big_delta[8..].copy_from_slice(&[0xff; 16]);
        assert!(MaskedUpdate::decode(PartyId::P1, &big_delta, 8).is_err());
        let refused = parse_received(PartyId::P0, &[Block::from(8u64)], 8).unwrap_err();
        assert_eq!(refused.peer, PartyId::P0);
    }

    #[test]
    fn sizes_pad_to_a_power_of_two() {
        assert_eq!(
            [1, 2, 3, 5, 64, 100, 1000].map(padded_len),
            [1, 2, 4, 8, 64, 128, 1024]
        );
        assert!(MemoryShare::zeros(0).is_err());
        let m = MemoryShare::from_shares(vec![Fp::ONE; 5]).unwrap();
        assert_eq!((m.len(), m.padded_len(), m.words().len()), (5, 8, 5));
        assert_eq!(format!("{m:?}"), "MemoryShare { n: 5, N: 8 }");
    }
}
