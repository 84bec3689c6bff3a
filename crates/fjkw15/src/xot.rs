//! XOT[N choose k](S, R, I), Shuffle OT (FJKW15 §3, Algorithm 2; notes §4.4), and
//! SS-XOT[N choose k](A, B, I), Secret-Shared Shuffle OT (FJKW15 §3; notes §4.5).
//!
//! **XOT**: S holds m_1..m_N, the indicator I holds indices i_1..i_k and masks δ_1..δ_k, and R
//! learns z_σ = m_{i_σ} ⊕ δ_σ. In FJKW15 the indicator is always D and S, R are C and E in
//! either order, so S's round function is a method of [`C`] and of [`E`]
//! ([`C::xot_send`], [`E::xot_send`]), I's is [`D::xot_index`] (told which of C and E is the
//! sender), and R's is [`C::xot_receive`] / [`E::xot_receive`]. One round: S → R and I → R.
//!
//! **SS-XOT** (Eviction, Alg. 5, step 6: A = C, B = E, I = D): the messages are C/E-shared and
//! the output is a fresh C/E sharing of (m_{i_1}, …, m_{i_k}). D picks random masks δ and runs
//! two XOTs with the same (i, δ): one on C's shares with output to E, one on E's shares with
//! output to C; the outputs s_C[m_{i_σ}] ⊕ δ_σ (at E) and s_E[m_{i_σ}] ⊕ δ_σ (at C) XOR to
//! m_{i_σ}. Four messages in one round: C → E, E → C, D → E, D → C.
//!
//! Pre-computation: S and I share the permutation π and the pads r_1..r_N, drawn (π first)
//! from a fresh sub-seed of the S–D PRG; no message. Indices count from 0 here.
//!
//! **SS-XOT with the pads as D's share** (our variant, used by Eviction): I sends each R only
//! the positions j_σ, and R outputs a_{j_σ} = m_{i_σ} ⊕ r_{j_σ}, masked by the S–I pads instead
//! of by δ. Each pad row is known to I and to that instance's S only, so the two outputs
//! s_C[m_{i_σ}] ⊕ r¹_{j_σ} (at E) and s_E[m_{i_σ}] ⊕ r²_{j′_σ} (at C) and I's
//! r¹_{j_σ} ⊕ r²_{j′_σ} are a three-way XOR sharing of m_{i_σ}, each share uniform to the
//! others as with δ; Eviction folds I's into the write-back. It saves both pad vectors: two
//! messages of k indices ([`XotIndices`]) instead of k·(4 + ⌈ℓ/8⌉) bytes each
//! ([`D::ss_xot_positions`], [`C::xot_receive_positions`], [`E::xot_receive_positions`]).
//!
//! The indices given to I must be distinct (notes §4.4, \[INF\]): R sees the positions
//! j_σ = π^−1(i_σ), which are a uniformly random k-subset's arrangement only then; a repeated
//! index would show R which outputs are equal. [`D::xot_index`] refuses repeats.

use doram_prim::AesPrg;

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use doram_core::CodecError;

use crate::msgs::{WireMessage, XotFromIndicator, XotFromSender, check, length};
use crate::party::{C, D, E, Role, instance};
use crate::sample::{inverse, permutation};

/// The public parameters of one XOT or SS-XOT instance: N messages of ℓ bits, k outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct XotParams {
    n: usize,
    k: usize,
    msg_bits: usize,
}

impl XotParams {
    /// k of N messages of ℓ = `msg_bits` bits.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if k > N (indices must be distinct) or N ≥ 2^32.
    pub fn new(n: usize, k: usize, msg_bits: usize) -> Result<XotParams, Fjkw15Error> {
        if k > n {
            return Err(Fjkw15Error::InvalidInput(
                "XOT picks k distinct indices among N",
            ));
        }
        if u32::try_from(n).is_err() {
            return Err(Fjkw15Error::InvalidInput("XOT supports N < 2^32"));
        }
        Ok(XotParams { n, k, msg_bits })
    }

    /// N, the number of messages.
    pub fn n(&self) -> usize {
        self.n
    }

    /// k, the number of outputs.
    pub fn k(&self) -> usize {
        self.k
    }

    /// ℓ, bits per message.
    pub fn msg_bits(&self) -> usize {
        self.msg_bits
    }
}

/// What S and I share in pre-computation: π and r_1..r_N.
#[derive(Clone)]
struct Pads {
    pi: Vec<usize>,
    r: Strings,
}

impl Pads {
    fn draw(mut prg: AesPrg, params: &XotParams) -> Pads {
        let pi = permutation(params.n, &mut prg);
        let r = Strings::random(params.n, params.msg_bits, &mut prg);
        Pads { pi, r }
    }
}

/// [FJKW15 Alg. 2, line 1] S: (a_1..a_N) = (m_π(1) ⊕ r_1, …, m_π(N) ⊕ r_N).
fn sender(pads: &Pads, m: &Strings) -> XotFromSender {
    let mut a = m.gather(&pads.pi);
    a.xor_assign(&pads.r);
    XotFromSender { a }
}

/// [FJKW15 Alg. 2, line 2] I: j_σ = π^−1(i_σ) and p_σ = r_{j_σ} ⊕ δ_σ.
fn indicator(pads: &Pads, i: &[usize], delta: &Strings) -> XotFromIndicator {
    let j = positions(pads, i);
    let mut p = pads.r.gather(&j);
    p.xor_assign(delta);
    // Every j_σ < N < 2^32 (XotParams::new).
    let j = j.into_iter().map(|j| j as u32).collect();
    XotFromIndicator { j, p }
}

/// j_σ = π^−1(i_σ), the positions of the indices in S's permuted messages.
fn positions(pads: &Pads, i: &[usize]) -> Vec<usize> {
    let pi_inv = inverse(&pads.pi);
    i.iter().map(|&i| pi_inv[i]).collect()
}

/// [FJKW15 Alg. 2, line 3] R: z_σ = a_{j_σ} ⊕ p_σ.
fn receiver(from_s: &XotFromSender, from_i: &XotFromIndicator) -> Strings {
    let j: Vec<usize> = from_i.j.iter().map(|&j| j as usize).collect();
    let mut z = from_s.a.gather(&j);
    z.xor_assign(&from_i.p);
    z
}

fn check_messages(params: &XotParams, m: &Strings) -> Result<(), Fjkw15Error> {
    if m.count() != params.n || m.width() != params.msg_bits {
        return Err(Fjkw15Error::InvalidInput(
            "XOT needs N messages of ℓ bits each",
        ));
    }
    Ok(())
}

fn check_indices(params: &XotParams, i: &[usize]) -> Result<(), Fjkw15Error> {
    let mut seen = vec![false; params.n];
    let distinct = i
        .iter()
        .all(|&i| i < params.n && !std::mem::replace(&mut seen[i], true));
    if i.len() != params.k || !distinct {
        return Err(Fjkw15Error::InvalidInput(
            "XOT needs k distinct indices below N",
        ));
    }
    Ok(())
}

fn check_masks(params: &XotParams, delta: &Strings) -> Result<(), Fjkw15Error> {
    if delta.count() != params.k || delta.width() != params.msg_bits {
        return Err(Fjkw15Error::InvalidInput(
            "XOT needs k masks of ℓ bits each",
        ));
    }
    Ok(())
}

impl C {
    /// FJKW15 Alg. 2, line 1, with C as the sender S (and E as R): sends
    /// a_t = m_π(t) ⊕ r_t to E.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `m` is not N strings of ℓ bits.
    pub fn xot_send(
        &mut self,
        params: &XotParams,
        m: &Strings,
    ) -> Result<XotFromSender, Fjkw15Error> {
        check_messages(params, m)?;
        Ok(sender(&Pads::draw(instance(&mut self.with_d), params), m))
    }

    /// FJKW15 Alg. 2, line 3, with C as the receiver R (E the sender): z_σ = a_{j_σ} ⊕ p_σ.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or D for a message of the wrong shape.
    pub fn xot_receive(
        &self,
        params: &XotParams,
        from_e: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        Ok(receiver(from_e, from_d))
    }

    /// SS-XOT at A = C (FJKW15 §3; Alg. 5, step 6): the XOT instance on C's shares, whose
    /// output goes to E ([`C::xot_send`]).
    ///
    /// # Errors
    /// As [`C::xot_send`].
    pub fn ss_xot_send(
        &mut self,
        params: &XotParams,
        share: &Strings,
    ) -> Result<XotFromSender, Fjkw15Error> {
        self.xot_send(params, share)
    }

    /// SS-XOT at A = C: C's output share s_E[m_{i_σ}] ⊕ δ_σ, from the instance on E's shares
    /// ([`C::xot_receive`]).
    ///
    /// # Errors
    /// As [`C::xot_receive`].
    pub fn ss_xot_finish(
        &self,
        params: &XotParams,
        from_e: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<Strings, Fjkw15Error> {
        self.xot_receive(params, from_e, from_d)
    }
}

impl E {
    /// FJKW15 Alg. 2, line 1, with E as the sender S (and C as R): sends
    /// a_t = m_π(t) ⊕ r_t to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `m` is not N strings of ℓ bits.
    pub fn xot_send(
        &mut self,
        params: &XotParams,
        m: &Strings,
    ) -> Result<XotFromSender, Fjkw15Error> {
        check_messages(params, m)?;
        Ok(sender(&Pads::draw(instance(&mut self.with_d), params), m))
    }

    /// FJKW15 Alg. 2, line 3, with E as the receiver R (C the sender): z_σ = a_{j_σ} ⊕ p_σ.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming C or D for a message of the wrong shape.
    pub fn xot_receive(
        &self,
        params: &XotParams,
        from_c: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_c, self.roles.party(Role::C), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        Ok(receiver(from_c, from_d))
    }

    /// SS-XOT at B = E: the XOT instance on E's shares, whose output goes to C
    /// ([`E::xot_send`]).
    ///
    /// # Errors
    /// As [`E::xot_send`].
    pub fn ss_xot_send(
        &mut self,
        params: &XotParams,
        share: &Strings,
    ) -> Result<XotFromSender, Fjkw15Error> {
        self.xot_send(params, share)
    }

    /// SS-XOT at B = E: E's output share s_C[m_{i_σ}] ⊕ δ_σ ([`E::xot_receive`]).
    ///
    /// # Errors
    /// As [`E::xot_receive`].
    pub fn ss_xot_finish(
        &self,
        params: &XotParams,
        from_c: &XotFromSender,
        from_d: &XotFromIndicator,
    ) -> Result<Strings, Fjkw15Error> {
        self.xot_receive(params, from_c, from_d)
    }
}

impl D {
    /// FJKW15 Alg. 2, line 2, at the indicator I = D for the instance whose sender is
    /// `sender` (C or E): sends j_σ = π^−1(i_σ) and p_σ = r_{j_σ} ⊕ δ_σ to the other one.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `sender` is D, the indices are not k distinct values
    /// below N, or `delta` is not k strings of ℓ bits; nothing is consumed then.
    pub fn xot_index(
        &mut self,
        params: &XotParams,
        sender: Role,
        i: &[usize],
        delta: &Strings,
    ) -> Result<XotFromIndicator, Fjkw15Error> {
        check_indices(params, i)?;
        check_masks(params, delta)?;
        let pair = match sender {
            Role::C => &mut self.with_c,
            Role::E => &mut self.with_e,
            Role::D => {
                return Err(Fjkw15Error::InvalidInput(
                    "the XOT sender is C or E, never the indicator D",
                ));
            }
        };
        Ok(indicator(&Pads::draw(instance(pair), params), i, delta))
    }

    /// SS-XOT at I = D (FJKW15 §3): picks random masks δ_1..δ_k and runs the two XOT
    /// instances with (i, δ). Returns (message to E, for the instance on C's shares; message
    /// to C, for the instance on E's shares).
    ///
    /// # Errors
    /// As [`D::xot_index`].
    pub fn ss_xot_index(
        &mut self,
        params: &XotParams,
        i: &[usize],
    ) -> Result<(XotFromIndicator, XotFromIndicator), Fjkw15Error> {
        // [FJKW15 §3, SS-XOT] "The indicator I first chooses a sequence of random masks δ".
        check_indices(params, i)?;
        let delta = Strings::random(params.k, params.msg_bits, &mut self.local);
        let to_e = self.xot_index(params, Role::C, i, &delta)?;
        let to_c = self.xot_index(params, Role::E, i, &delta)?;
        Ok((to_e, to_c))
    }
}

impl core::fmt::Debug for Pads {
    /// Shape only: π and the pads are secret.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Pads({} items, ..)", self.pi.len())
    }
}

/// I's share of one XOT instance's pre-computation (π and the pads), drawn ahead of the
/// online round ([`D::xot_pads`]).
#[derive(Clone, Debug)]
pub struct XotPads {
    params: XotParams,
    pads: Pads,
}

impl D {
    /// XOT pre-computation at I = D for the instance whose sender is `sender`: draws π and
    /// the pads from the same sub-seed of the D–sender PRG that the sender's
    /// [`C::xot_send`] or [`E::xot_send`] takes, for a later [`D::ss_xot_positions`].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `sender` is D.
    pub fn xot_pads(&mut self, params: &XotParams, sender: Role) -> Result<XotPads, Fjkw15Error> {
        let pair = match sender {
            Role::C => &mut self.with_c,
            Role::E => &mut self.with_e,
            Role::D => {
                return Err(Fjkw15Error::InvalidInput(
                    "the XOT sender is C or E, never the indicator D",
                ));
            }
        };
        Ok(XotPads {
            params: *params,
            pads: Pads::draw(instance(pair), params),
        })
    }
}

/// Bytes per position on the wire: the fewest that hold N − 1.
fn index_bytes(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros())
        .div_ceil(8)
        .max(1) as usize
}

/// The unmasked SS-XOT's I → R message ([module docs](self)): the positions j_σ = π^−1(i_σ),
/// σ = 1..k, each in the fewest bytes that hold N − 1, little-endian.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XotIndices {
    j: Vec<u32>,
    width: usize,
}

impl WireMessage for XotIndices {
    type Shape = XotParams;
    const WHAT: &'static str = "SS-XOT positions j";

    fn wire_len(p: &XotParams) -> usize {
        p.k * index_bytes(p.n)
    }

    fn fits(&self, p: &XotParams) -> bool {
        self.j.len() == p.k
            && self.width == index_bytes(p.n)
            && self.j.iter().all(|&j| (j as usize) < p.n)
    }

    fn encode(&self) -> Vec<u8> {
        self.j
            .iter()
            .flat_map(|j| j.to_le_bytes().into_iter().take(self.width))
            .collect()
    }

    fn decode(bytes: &[u8], p: &XotParams) -> Result<Self, CodecError> {
        length(bytes, Self::wire_len(p))?;
        let w = index_bytes(p.n);
        let j: Vec<u32> = bytes
            .chunks_exact(w)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..w].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        if j.iter().any(|&j| j as usize >= p.n) {
            return Err(CodecError::OutOfRange {
                what: "an XOT position is not below N",
            });
        }
        Ok(XotIndices { j, width: w })
    }
}

/// R's output of the unmasked XOT: a_{j_σ} = m_{i_σ} ⊕ r_{j_σ}.
fn gather_positions(from_s: &XotFromSender, idx: &XotIndices) -> Strings {
    let j: Vec<usize> = idx.j.iter().map(|&j| j as usize).collect();
    from_s.a.gather(&j)
}

impl D {
    /// Unmasked SS-XOT at I = D ([module docs](self)) with the instance on C's shares
    /// pre-computed (`c_pads`, [`D::xot_pads`]; the instance on E's shares draws its sub-seed
    /// now): the positions for E and for C, and D's share r¹_{j_σ} ⊕ r²_{j′_σ} of the output.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if the indices are not k distinct values below N or
    /// `c_pads` is of other parameters; nothing is consumed then.
    pub fn ss_xot_positions(
        &mut self,
        params: &XotParams,
        c_pads: &XotPads,
        i: &[usize],
    ) -> Result<(XotIndices, XotIndices, Strings), Fjkw15Error> {
        check_indices(params, i)?;
        if c_pads.params != *params {
            return Err(Fjkw15Error::InvalidInput(
                "XOT pads of another instance's parameters",
            ));
        }
        let e_pads = Pads::draw(instance(&mut self.with_e), params);
        let (j1, j2) = (positions(&c_pads.pads, i), positions(&e_pads, i));
        let mut share = c_pads.pads.r.gather(&j1);
        share.xor_assign(&e_pads.r.gather(&j2));
        let width = index_bytes(params.n);
        // Every position is below N < 2^32 (XotParams::new).
        let msg = |j: Vec<usize>| XotIndices {
            j: j.into_iter().map(|j| j as u32).collect(),
            width,
        };
        Ok((msg(j1), msg(j2), share))
    }
}

impl C {
    /// Unmasked XOT at R = C (E the sender): a_{j_σ} = s_E[m_{i_σ}] ⊕ r²_{j_σ}.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or D for a message of the wrong shape.
    pub fn xot_receive_positions(
        &self,
        params: &XotParams,
        from_e: &XotFromSender,
        from_d: &XotIndices,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        Ok(gather_positions(from_e, from_d))
    }
}

impl E {
    /// Unmasked XOT at R = E (C the sender): a_{j_σ} = s_C[m_{i_σ}] ⊕ r¹_{j_σ}.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming C or D for a message of the wrong shape.
    pub fn xot_receive_positions(
        &self,
        params: &XotParams,
        from_c: &XotFromSender,
        from_d: &XotIndices,
    ) -> Result<Strings, Fjkw15Error> {
        check(from_c, self.roles.party(Role::C), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        Ok(gather_positions(from_c, from_d))
    }
}
