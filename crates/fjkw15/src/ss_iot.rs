//! SS-IOT[2^τ](S, R, H), Secret-Shared Index OT (FJKW15 §3; notes §4.3): S holds messages
//! m_0..m_{2^τ−1} and an index share j_S, H holds j_H, and R learns j = j_S ⊕ j_H and m_j.
//!
//! FJKW15 uses it in Access\[i\] (Alg. 3, step 4) with S = E, R = C and H = D: [`E::iot_send`],
//! [`D::iot_help`], [`C::iot_receive`]. One round: E → C and D → C.
//!
//! As SS-COT, but "H sends only two values, (p, v) = (F_k(j_H), F_k′(j_H)) and S's messages
//! are computed as e_t = G(F_k(j_S ⊕ t)) and v_t = F_k′(j_S ⊕ t)", both PRF inputs XORed with
//! "a single pre-shared random κ-bit nonce r". The text's e_t lacks "⊕ m_t" (notes §4.3,
//! \[INF\]); it is added here, or R would learn nothing. The match is at t = j_S ⊕ j_H, so R
//! learns j, which FJKW15 makes uniform by masking the index (j_2 = N^(i+1) ⊕ ρ_i).

use crate::bits::{Strings, xor_into};
use crate::error::Fjkw15Error;
use crate::msgs::{IotFromD, IotFromE, check};
use crate::party::{C, D, E, Role, instance};
use crate::ss_cot::{PrfPair, prg_bits};

/// The public parameters of one SS-IOT[2^τ] instance: τ and ℓ = |m_t|.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IotParams {
    tau: u32,
    msg_bits: usize,
}

impl IotParams {
    /// 2^τ messages of ℓ = `msg_bits` bits.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if τ > 16.
    pub fn new(tau: u32, msg_bits: usize) -> Result<IotParams, Fjkw15Error> {
        if tau > 16 {
            return Err(Fjkw15Error::InvalidInput("SS-IOT supports τ ≤ 16"));
        }
        Ok(IotParams { tau, msg_bits })
    }

    /// τ.
    pub fn tau(&self) -> u32 {
        self.tau
    }

    /// 2^τ, the number of messages.
    pub fn n(&self) -> usize {
        1 << self.tau
    }

    /// ℓ, bits per message.
    pub fn msg_bits(&self) -> usize {
        self.msg_bits
    }

    fn check_index(&self, j: usize) -> Result<(), Fjkw15Error> {
        if j < self.n() {
            Ok(())
        } else {
            Err(Fjkw15Error::InvalidInput(
                "an SS-IOT index share has τ bits",
            ))
        }
    }
}

impl E {
    /// SS-IOT at S = E: sends (e_t, v_t) = (G^ℓ(F_k(r ⊕ j_S ⊕ t)) ⊕ m_t, F_k′(r ⊕ j_S ⊕ t)),
    /// t = 0..2^τ − 1, to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `m` is not 2^τ strings of ℓ bits or `j_s ≥ 2^τ`;
    /// nothing is consumed then.
    pub fn iot_send(
        &mut self,
        params: &IotParams,
        m: &Strings,
        j_s: usize,
    ) -> Result<IotFromE, Fjkw15Error> {
        if m.count() != params.n() || m.width() != params.msg_bits {
            return Err(Fjkw15Error::InvalidInput(
                "SS-IOT needs 2^τ messages of ℓ bits each",
            ));
        }
        params.check_index(j_s)?;
        // [FJKW15 §3, SS-IOT, pre-computation] k, k′ and the single nonce r, shared with D.
        let mut prg = instance(&mut self.with_d);
        let prf = PrfPair::draw(&mut prg);
        let r = prg.next_u128();
        // [FJKW15 §3, SS-IOT] S's PRF inputs r ⊕ (j_S ⊕ t).
        let x: Vec<u128> = (0..params.n()).map(|t| r ^ (j_s ^ t) as u128).collect();
        let (fk, v) = prf.eval(&x);
        let mut e = m.clone();
        for (t, f) in fk.iter().enumerate() {
            e.xor_row(t, &prg_bits(*f, params.msg_bits));
        }
        Ok(IotFromE { e, v })
    }
}

impl D {
    /// SS-IOT at H = D: sends (p, v) = (F_k(r ⊕ j_H), F_k′(r ⊕ j_H)) to C.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `j_h ≥ 2^τ`; nothing is consumed then.
    pub fn iot_help(&mut self, params: &IotParams, j_h: usize) -> Result<IotFromD, Fjkw15Error> {
        params.check_index(j_h)?;
        // [FJKW15 §3, SS-IOT, pre-computation] k, k′ and r, shared with E.
        let mut prg = instance(&mut self.with_e);
        let prf = PrfPair::draw(&mut prg);
        let r = prg.next_u128();
        // [FJKW15 §3, SS-IOT] H sends (F_k(r ⊕ j_H), F_k′(r ⊕ j_H)).
        let (p, v) = prf.eval(&[r ^ j_h as u128]);
        Ok(IotFromD { p: p[0], v: v[0] })
    }
}

impl C {
    /// SS-IOT at R = C: the unique t with v_t = v is j = j_S ⊕ j_H; returns (j, e_j ⊕ G^ℓ(p)).
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or D for a message of the wrong shape;
    /// [`Fjkw15Error::Inconsistent`] if no t or several match (honest senders never cause it).
    pub fn iot_receive(
        &self,
        params: &IotParams,
        from_e: &IotFromE,
        from_d: &IotFromD,
    ) -> Result<(usize, Vec<u8>), Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), params)?;
        check(from_d, self.roles.party(Role::D), params)?;
        // [FJKW15 §3, SS-IOT] R finds the t with v_t = v.
        let mut hits = (0..params.n()).filter(|&t| from_e.v[t] == from_d.v);
        let (Some(j), None) = (hits.next(), hits.next()) else {
            return Err(Fjkw15Error::Inconsistent(
                "SS-IOT: not exactly one v_t equals H's v",
            ));
        };
        let mut m = from_e.e.get(j).to_vec();
        xor_into(&mut m, &prg_bits(from_d.p, params.msg_bits));
        Ok((j, m))
    }
}
