//! SS-COT\[N\](S, R, H), Secret-Shared Conditional OT (FJKW15 §3, Algorithm 1; notes §4.2): S
//! holds messages m_1..m_N and keys a_1..a_N, H holds keys b_1..b_N, and R learns (t, m_t) for
//! every t with a_t = b_t, and nothing else.
//!
//! FJKW15 uses it in Access\[i\] (Alg. 3, step 3) with S = E, R = C and H = D, so the round
//! functions are methods of those types: [`E::cot_send`], [`D::cot_help`] and
//! [`C::cot_receive`]. One round: E → C and D → C, both independent.
//!
//! * Pre-computation: S and H share PRF keys k, k′ and κ-bit nonces r_1..r_N, all drawn from a
//!   fresh sub-seed of the E–D PRG ([`crate::party`]); no message.
//! * F_k is AES-128 under k; G^ℓ(s) is the first ℓ bits of AES-128-CTR keyed by s
//!   ([`doram_prim::AesPrg`]); FJKW15 §3: "both F and G are implemented using counter-mode AES".
//! * The κ-bit block [a_t | 0^(κ−ℓ′)] is a_t in the low ℓ′ bits of the block and zeros above
//!   (any fixed injective padding works; both ends use the same one).
//!
//! A false match needs a collision of F_k′ on distinct inputs, probability 2^−128 per pair.
//!
//! **Tagged SS-COT** (our variant, used by Access): H sends only p_t = F_k(y_t), and S sends
//! e_t = m_t ⊕ pad_t with a 64-bit tag_t, where tag_t ‖ pad_t = G^(64+ℓ)(F_k(x_t)); R takes
//! the t whose G^(64+ℓ)(p_t) begins with tag_t. This drops k′ and the two κ-bit values
//! F_k′(x_t), F_k′(y_t): per t, 24 bytes instead of 48 besides e_t ([`E::cot_send_tagged`],
//! [`D::cot_help_tagged`], [`C::cot_receive_tagged_one`]). For a_t ≠ b_t, F_k(x_t) is
//! independent of everything R sees (x_t differs from every y input, but with probability
//! 2^−128 over the nonces), so tag_t and pad_t are pseudorandom to R as e_t and v_t were; a
//! false match needs two 64-bit tags to agree, probability 2^−64 per t, and then R sees two
//! matches and fails ([`Fjkw15Error::Matches`]) rather than output a wrong tuple.

use doram_prim::{Aes128Cipher, AesPrg};

use crate::bits::{Strings, xor_into};
use crate::error::Fjkw15Error;
use doram_core::CodecError;

use crate::msgs::{CotFromD, CotFromE, WireMessage, check, decode_blocks, length};
use crate::params::KAPPA;
use crate::party::{C, D, E, Role, instance};

/// The public parameters of one SS-COT\[N\] instance: N, ℓ = |m_t| and ℓ′ = |a_t| = |b_t| ≤ κ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CotParams {
    n: usize,
    msg_bits: usize,
    key_bits: usize,
}

impl CotParams {
    /// N messages of ℓ = `msg_bits` bits and keys of ℓ′ = `key_bits` ≤ κ bits.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if ℓ′ > κ = 128.
    pub fn new(n: usize, msg_bits: usize, key_bits: usize) -> Result<CotParams, Fjkw15Error> {
        if key_bits > KAPPA {
            return Err(Fjkw15Error::InvalidInput(
                "SS-COT keys have at most κ = 128 bits",
            ));
        }
        Ok(CotParams {
            n,
            msg_bits,
            key_bits,
        })
    }

    /// N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// ℓ, bits per message.
    pub fn msg_bits(&self) -> usize {
        self.msg_bits
    }

    /// ℓ′, bits per key.
    pub fn key_bits(&self) -> usize {
        self.key_bits
    }

    fn check_keys(&self, keys: &[u128]) -> Result<(), Fjkw15Error> {
        let fits = self.key_bits == KAPPA || keys.iter().all(|&k| k >> self.key_bits == 0);
        if keys.len() != self.n || !fits {
            return Err(Fjkw15Error::InvalidInput(
                "SS-COT needs N keys of ℓ′ bits each",
            ));
        }
        Ok(())
    }
}

/// The PRF pair (F_k, F_k′) of SS-COT and SS-IOT.
pub(crate) struct PrfPair {
    k: Aes128Cipher,
    k_prime: Aes128Cipher,
}

impl PrfPair {
    /// k and k′, the first two sub-seeds of an instance PRG.
    pub(crate) fn draw(prg: &mut AesPrg) -> PrfPair {
        PrfPair {
            k: Aes128Cipher::new(prg.next_seed().0),
            k_prime: Aes128Cipher::new(prg.next_seed().0),
        }
    }

    /// (F_k(x), F_k′(x)) for every x, in batches.
    pub(crate) fn eval(&self, xs: &[u128]) -> (Vec<u128>, Vec<u128>) {
        let mut f = xs.to_vec();
        let mut f_prime = xs.to_vec();
        self.k.encrypt_in_place(&mut f);
        self.k_prime.encrypt_in_place(&mut f_prime);
        (f, f_prime)
    }
}

/// G^ℓ(s): the first ℓ bits of AES-128-CTR keyed by the κ-bit seed s, as ⌈ℓ/8⌉ bytes with the
/// bits above ℓ clear.
pub(crate) fn prg_bits(seed: u128, bits: usize) -> Vec<u8> {
    let mut out = vec![0u8; bits.div_ceil(8)];
    AesPrg::new(doram_core::Seed(seed.to_le_bytes())).fill(&mut out);
    if !bits.is_multiple_of(8)
        && let Some(last) = out.last_mut()
    {
        *last &= (1u8 << (bits % 8)) - 1;
    }
    out
}

/// The nonces r_1..r_N, drawn after k and k′.
fn nonces(prg: &mut AesPrg, n: usize) -> Vec<u128> {
    (0..n).map(|_| prg.next_u128()).collect()
}

/// Tagged SS-COT (module docs), S → R: e_t = m_t ⊕ pad_t and the 64-bit tag_t, t = 1..N.
#[derive(Clone, PartialEq, Eq)]
pub struct TagCotFromE {
    e: Strings,
    tag: Vec<u64>,
}

/// Tagged SS-COT (module docs), H → R: p_t = F_k(y_t), t = 1..N.
#[derive(Clone, PartialEq, Eq)]
pub struct TagCotFromD {
    p: Vec<u128>,
}

impl core::fmt::Debug for TagCotFromE {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "TagCotFromE({:?}, ..)", self.e)
    }
}

impl core::fmt::Debug for TagCotFromD {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "TagCotFromD({} keys, ..)", self.p.len())
    }
}

impl WireMessage for TagCotFromE {
    type Shape = CotParams;
    const WHAT: &'static str = "tagged SS-COT (e_t, tag_t)";

    fn wire_len(p: &CotParams) -> usize {
        p.n * (p.msg_bits.div_ceil(8) + 8)
    }

    fn fits(&self, p: &CotParams) -> bool {
        self.e.count() == p.n && self.e.width() == p.msg_bits && self.tag.len() == p.n
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = self.e.as_bytes().to_vec();
        out.extend(self.tag.iter().flat_map(|t| t.to_le_bytes()));
        out
    }

    fn decode(bytes: &[u8], p: &CotParams) -> Result<Self, CodecError> {
        length(bytes, Self::wire_len(p))?;
        let (e, tags) = bytes.split_at(p.n * p.msg_bits.div_ceil(8));
        Ok(TagCotFromE {
            e: Strings::decode(e, p.n, p.msg_bits)?,
            tag: tags
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        })
    }
}

impl WireMessage for TagCotFromD {
    type Shape = CotParams;
    const WHAT: &'static str = "tagged SS-COT p_t";

    fn wire_len(p: &CotParams) -> usize {
        16 * p.n
    }

    fn fits(&self, p: &CotParams) -> bool {
        self.p.len() == p.n
    }

    fn encode(&self) -> Vec<u8> {
        self.p.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8], p: &CotParams) -> Result<Self, CodecError> {
        length(bytes, Self::wire_len(p))?;
        Ok(TagCotFromD {
            p: decode_blocks(bytes),
        })
    }
}

/// tag ‖ pad = G^(64+ℓ)(seed): the first 64 bits as the tag, the next ℓ as ⌈ℓ/8⌉ bytes.
fn tag_and_pad(seed: u128, bits: usize) -> (u64, Vec<u8>) {
    let mut out = prg_bits(seed, 64 + bits);
    let pad = out.split_off(8);
    let mut tag = [0u8; 8];
    tag.copy_from_slice(&out);
    (u64::from_le_bytes(tag), pad)
}

/// k and r_1..r_N of a tagged instance.
fn tagged_pre(prg: &mut AesPrg, n: usize) -> (Aes128Cipher, Vec<u128>) {
    let k = Aes128Cipher::new(prg.next_seed().0);
    (k, nonces(prg, n))
}

impl E {
    /// Tagged SS-COT at S = E (module docs): e_t = m_t ⊕ pad_t and tag_t for C, where
    /// tag_t ‖ pad_t = G^(64+ℓ)(F_k(r_t ⊕ [a_t | 0])).
    ///
    /// # Errors
    /// As [`E::cot_send`].
    pub fn cot_send_tagged(
        &mut self,
        params: &CotParams,
        m: &Strings,
        a: &[u128],
    ) -> Result<TagCotFromE, Fjkw15Error> {
        if m.count() != params.n || m.width() != params.msg_bits {
            return Err(Fjkw15Error::InvalidInput(
                "SS-COT needs N messages of ℓ bits each",
            ));
        }
        params.check_keys(a)?;
        // [FJKW15 Alg. 1, pre-computation] k and r_1..r_N, shared with D.
        let (k, r) = tagged_pre(&mut instance(&mut self.with_d), params.n);
        // [FJKW15 Alg. 1, line 1] x_t = r_t ⊕ [a_t | 0^(κ−ℓ′)]; here F_k(x_t) feeds G only.
        let mut f: Vec<u128> = r.iter().zip(a).map(|(r, a)| r ^ a).collect();
        k.encrypt_in_place(&mut f);
        let mut e = m.clone();
        let tag = f
            .iter()
            .enumerate()
            .map(|(t, &f)| {
                let (tag, pad) = tag_and_pad(f, params.msg_bits);
                e.xor_row(t, &pad);
                tag
            })
            .collect();
        Ok(TagCotFromE { e, tag })
    }
}

impl D {
    /// Tagged SS-COT at H = D (module docs): p_t = F_k(r_t ⊕ [b_t | 0]) for C.
    ///
    /// # Errors
    /// As [`D::cot_help`].
    pub fn cot_help_tagged(
        &mut self,
        params: &CotParams,
        b: &[u128],
    ) -> Result<TagCotFromD, Fjkw15Error> {
        params.check_keys(b)?;
        // [FJKW15 Alg. 1, pre-computation] k and r_1..r_N, shared with E.
        let (k, r) = tagged_pre(&mut instance(&mut self.with_e), params.n);
        // [FJKW15 Alg. 1, line 2] y_t = r_t ⊕ [b_t | 0^(κ−ℓ′)], p_t = F_k(y_t).
        let mut p: Vec<u128> = r.iter().zip(b).map(|(r, b)| r ^ b).collect();
        k.encrypt_in_place(&mut p);
        Ok(TagCotFromD { p })
    }
}

impl C {
    /// Tagged SS-COT at R = C (module docs): the one t whose G^(64+ℓ)(p_t) begins with tag_t,
    /// and m_t = e_t ⊕ pad_t.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or D for a message of the wrong shape;
    /// [`Fjkw15Error::Matches`] for zero or several matches.
    pub fn cot_receive_tagged_one(
        &self,
        params: &CotParams,
        from_e: &TagCotFromE,
        from_d: &TagCotFromD,
    ) -> Result<(usize, Vec<u8>), Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        // [FJKW15 Alg. 1, line 3] m_t = e_t ⊕ pad_t where the tags agree.
        let mut found: Vec<(usize, Vec<u8>)> = Vec::new();
        for (t, &p) in from_d.p.iter().enumerate() {
            let (tag, pad) = tag_and_pad(p, params.msg_bits);
            if tag == from_e.tag[t] {
                let mut m = from_e.e.get(t).to_vec();
                xor_into(&mut m, &pad);
                found.push((t, m));
            }
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            n => Err(Fjkw15Error::Matches { found: n }),
        }
    }
}

impl E {
    /// FJKW15 Alg. 1, line 1, at S = E: sends (e_t, v_t) = (G^ℓ(F_k(x_t)) ⊕ m_t, F_k′(x_t))
    /// with x_t = r_t ⊕ [a_t | 0^(κ−ℓ′)], t = 1..N, to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `m` is not N strings of ℓ bits or `a` not N keys of
    /// ℓ′ bits; nothing is consumed then.
    pub fn cot_send(
        &mut self,
        params: &CotParams,
        m: &Strings,
        a: &[u128],
    ) -> Result<CotFromE, Fjkw15Error> {
        if m.count() != params.n || m.width() != params.msg_bits {
            return Err(Fjkw15Error::InvalidInput(
                "SS-COT needs N messages of ℓ bits each",
            ));
        }
        params.check_keys(a)?;
        // [FJKW15 Alg. 1, pre-computation] k, k′ and r_1..r_N, shared with D.
        let mut prg = instance(&mut self.with_d);
        let prf = PrfPair::draw(&mut prg);
        let r = nonces(&mut prg, params.n);
        // [FJKW15 Alg. 1, line 1] x_t = r_t ⊕ [a_t | 0^(κ−ℓ′)].
        let x: Vec<u128> = r.iter().zip(a).map(|(r, a)| r ^ a).collect();
        let (fk, v) = prf.eval(&x);
        let mut e = m.clone();
        for (t, f) in fk.iter().enumerate() {
            e.xor_row(t, &prg_bits(*f, params.msg_bits));
        }
        Ok(CotFromE { e, v })
    }
}

impl D {
    /// FJKW15 Alg. 1, line 2, at H = D: sends (p_t, w_t) = (F_k(y_t), F_k′(y_t)) with
    /// y_t = r_t ⊕ [b_t | 0^(κ−ℓ′)], t = 1..N, to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `b` is not N keys of ℓ′ bits; nothing is consumed then.
    pub fn cot_help(&mut self, params: &CotParams, b: &[u128]) -> Result<CotFromD, Fjkw15Error> {
        params.check_keys(b)?;
        // [FJKW15 Alg. 1, pre-computation] k, k′ and r_1..r_N, shared with E.
        let mut prg = instance(&mut self.with_e);
        let prf = PrfPair::draw(&mut prg);
        let r = nonces(&mut prg, params.n);
        // [FJKW15 Alg. 1, line 2] y_t = r_t ⊕ [b_t | 0^(κ−ℓ′)].
        let y: Vec<u128> = r.iter().zip(b).map(|(r, b)| r ^ b).collect();
        let (p, w) = prf.eval(&y);
        Ok(CotFromD { p, w })
    }
}

impl C {
    /// FJKW15 Alg. 1, line 3, at R = C: every (t, m_t) with v_t = w_t, where
    /// m_t = e_t ⊕ G^ℓ(p_t); t counts from 0.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or D if its message does not have the instance's shape.
    pub fn cot_receive(
        &self,
        params: &CotParams,
        from_e: &CotFromE,
        from_d: &CotFromD,
    ) -> Result<Vec<(usize, Vec<u8>)>, Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        // [FJKW15 Alg. 1, line 3] for each t with v_t = w_t: m_t = e_t ⊕ G^ℓ(p_t).
        let out = (0..params.n)
            .filter(|&t| from_e.v[t] == from_d.w[t])
            .map(|t| {
                let mut m = from_e.e.get(t).to_vec();
                xor_into(&mut m, &prg_bits(from_d.p[t], params.msg_bits));
                (t, m)
            })
            .collect();
        Ok(out)
    }

    /// [`C::cot_receive`] where exactly one t must match, as in Access (FJKW15 Alg. 3, step 3:
    /// the unique tuple with fb = 1 and N = N_i).
    ///
    /// # Errors
    /// As [`C::cot_receive`], and [`Fjkw15Error::Matches`] for zero or several matches.
    pub fn cot_receive_one(
        &self,
        params: &CotParams,
        from_e: &CotFromE,
        from_d: &CotFromD,
    ) -> Result<(usize, Vec<u8>), Fjkw15Error> {
        let mut all = self.cot_receive(params, from_e, from_d)?;
        match all.len() {
            1 => Ok(all.remove(0)),
            found => Err(Fjkw15Error::Matches { found }),
        }
    }
}
