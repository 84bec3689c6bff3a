//! Ramen Fig. 9 (Π^m_DOPRF, masked): on an additively shared input ⟨x⟩, R1 and R2 learn a
//! random r ∈ {0, 1}^ℓ and K learns PRF(k, x) ⊕ r.
//!
//! Notation as in the figure: ⟨x⟩ is x_1 at K, x_2 at R1, x_3 at R2; m ∈ F_p and
//! a, c_1, e ∈ F_p^ℓ come from the K–R1 stream, s ∈ F_p^ℓ from the R1–R2 stream; α = 7 is a
//! fixed quadratic non-residue ([`ALPHA`]).
//!
//! # Preprocessing (steps 1–5, input independent), one round
//! Per evaluation, the K–R1 stream yields m, a_0 … a_{ℓ−1}, c_{1,0} … c_{1,ℓ−1},
//! e_0 … e_{ℓ−1}; the R1–R2 stream yields s_0 … s_{ℓ−1} (each non-zero: zero draws are
//! rejected).
//!
//! * K ([`KeyHolder::masked_preprocess`]): stores a + m and the input-independent step 9,
//!   z_1 = e∘(k + y_1) + c_1 − d∘e = c_1 + a∘e (since k + y_1 − d = a). No message.
//! * R1 ([`Receiver1::masked_preprocess`]): samples r (step 3, see below), sets
//!   t_j = s_j² · α^{r_j} (step 4), b = t − e and c_3 = a∘b − c_1 (step 5), and sends (r, c_3)
//!   to R2; stores m and r.
//! * R2 ([`Receiver2::masked_preprocess_start`], [`Receiver2::masked_preprocess_finish`]):
//!   derives s, receives (r, c_3), computes t; stores t, c_3 and r.
//!
//! Step 3 in the figure has R1 and R2 exchange random r_1, r_2 and use r = r_1 ⊕ r_2; here R1
//! samples r alone and sends it along with c_3 (one message instead of three and one round
//! instead of two; see "Optimisations" in the crate documentation for why this is as secure).
//!
//! # Online (steps 6–11), two rounds
//! 1. R1 sends y_2 = x_2 + m to R2 (step 6); K sends d = k + (x_1 − m) − a to R2 (steps 6–7).
//!    R1 outputs r (step 11).
//! 2. R2 sends z_3 = t∘(d + y_2 + x_3) + c_3 to K (step 8; the figure's d∘t + c_3 + w with
//!    w = t·(y_2 + y_3) regrouped) and outputs r (step 11).
//! 3. K: z = z_1 + z_3 = t∘(k + x), o_j = [Legendre(z_j) = 1] = PRF(k, x)_j ⊕ r_j
//!    (steps 9–11).

use doram_field::Fp;
use doram_mpc::Additive;

use crate::error::DoprfError;
use crate::msgs::{MaskedC3, MaskedD, MaskedY2, MaskedZ3};
use crate::params::{ALPHA, Params, Roles};
use crate::party::{KeyHolder, Receiver1, Receiver2, check_msg, nonzero};
use crate::prf::legendre_bits_vartime;
use crate::unmasked::redacted_pending;

/// K during a masked evaluation: waits for z_3 from R2.
pub struct AwaitingZ3 {
    params: Params,
    roles: Roles,
    z1: Vec<Fp>,
}

/// R2 during masked preprocessing: s∘s is drawn, (r, c_3) from R1 is awaited.
pub struct AwaitingC3 {
    count: usize,
    s2: Vec<Fp>,
}

/// R2 during a masked evaluation: waits for y_2 from R1 and d from K.
pub struct AwaitingY2AndD {
    params: Params,
    roles: Roles,
    x: Vec<Fp>,
    t: Vec<Fp>,
    c3: Vec<Fp>,
    r: Vec<u128>,
}

/// t_j = s_j² if bit j of r is 0, s_j²·α otherwise (Ramen Fig. 9, step 4).
fn twist(s2: &[Fp], r: u128) -> impl Iterator<Item = Fp> + '_ {
    s2.iter()
        .enumerate()
        .map(move |(j, &s2)| if (r >> j) & 1 == 1 { s2 * ALPHA } else { s2 })
}

impl KeyHolder {
    /// Ramen Fig. 9, step 1 at K (and the input-independent part of step 9): stores a + m and
    /// z_1 = c_1 + a∘e for `count` evaluations. No message. Advances the K–R1 masked stream by
    /// 1 + 3ℓ elements per evaluation.
    pub fn masked_preprocess(&mut self, count: usize) {
        let l = self.params.bits();
        let prg = &mut self.with_r1.masked;
        let mut am = Vec::with_capacity(count * l);
        let mut z1 = Vec::with_capacity(count * l);
        for _ in 0..count {
            // [Ramen Fig. 9, step 1] K and R1 compute m, a, c_1, e ← PRG(k_{k,1}).
            let m: Fp = prg.random();
            let a: Vec<Fp> = prg.expand(l);
            let c1: Vec<Fp> = prg.expand(l);
            let e: Vec<Fp> = prg.expand(l);
            // [Ramen Fig. 9, step 7] d = k + y_1 − a = k + ⟨x⟩ − (a + m): keep a + m.
            am.extend(a.iter().map(|&a| a + m));
            // [Ramen Fig. 9, step 9] z_1 = e∘(k + y_1) + c_1 − d∘e = c_1 + a∘e.
            z1.extend(a.iter().zip(&c1).zip(&e).map(|((&a, &c1), &e)| c1 + a * e));
        }
        self.masked.push(count, [am, z1], Vec::new());
    }

    /// Ramen Fig. 9, steps 6–7 at K: d = k + (x_1 − m) − a for R2; then waits for z_3.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn masked_eval_start(
        &mut self,
        x: &[Additive<Fp>],
    ) -> Result<(AwaitingZ3, MaskedD), DoprfError> {
        let l = self.params.bits();
        let [am, z1] = self.masked.take(x.len())?.cols;
        let k = self.key.elements();
        let mut d = Vec::with_capacity(x.len() * l);
        for (i, x) in x.iter().enumerate() {
            // [Ramen Fig. 9, step 6] K computes y_1 := ⟨x⟩ − m.
            // [Ramen Fig. 9, step 7] K computes and sends d := k + y_1 − a to R2.
            let am = &am[i * l..(i + 1) * l];
            d.extend(k.iter().zip(am).map(|(&k, &am)| k + x.share() - am));
        }
        let pending = AwaitingZ3 {
            params: self.params,
            roles: self.roles,
            z1,
        };
        Ok((pending, MaskedD { d }))
    }
}

impl AwaitingZ3 {
    /// Ramen Fig. 9, steps 9–11 at K: z = z_1 + z_3 and K's output of each evaluation,
    /// o_j = [Legendre(z_j) = 1] = PRF(k, x)_j ⊕ r_j.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming R2 if z_3 has the wrong length.
    pub fn finish(self, z3: MaskedZ3) -> Result<Vec<u128>, DoprfError> {
        let count = self.z1.len() / self.params.bits();
        check_msg(&z3, self.roles.r2(), &self.params, count)?;
        // [Ramen Fig. 9, step 9] z := z_1 + z_3 = t∘(k + x).
        let z: Vec<Fp> = self.z1.iter().zip(&z3.z3).map(|(&a, &b)| a + b).collect();
        // [Ramen Fig. 9, steps 10–11] o[j] := (1/2)((z[j]/p) + 1); K outputs o.
        Ok(legendre_bits_vartime(&z, &self.params))
    }
}

impl Receiver1 {
    /// Ramen Fig. 9, steps 1–5 at R1: (r, c_3) for `count` evaluations, for R2. Advances the
    /// K–R1 masked stream by 1 + 3ℓ elements and the R1–R2 masked stream by ℓ (non-zero)
    /// elements per evaluation, and draws r from R1's local PRG.
    pub fn masked_preprocess(&mut self, count: usize) -> MaskedC3 {
        let l = self.params.bits();
        let mut m = Vec::with_capacity(count);
        let mut rs = Vec::with_capacity(count);
        let mut c3 = Vec::with_capacity(count * l);
        for _ in 0..count {
            // [Ramen Fig. 9, step 1] K and R1 compute m, a, c_1, e ← PRG(k_{k,1}).
            let prg = &mut self.with_k.masked;
            let mi: Fp = prg.random();
            let a: Vec<Fp> = prg.expand(l);
            let c1: Vec<Fp> = prg.expand(l);
            let e: Vec<Fp> = prg.expand(l);
            // [Ramen Fig. 9, step 2] R1 and R2 compute s ← PRG(k_{1,2}).
            let s2: Vec<Fp> = (0..l)
                .map(|_| nonzero(&mut self.with_r2.masked).square())
                .collect();
            // [Ramen Fig. 9, step 3] r ← {0, 1}^ℓ, sampled by R1 alone and sent to R2.
            let r = self.local.next_u128() & self.params.output_mask();
            // [Ramen Fig. 9, step 4] t_j := s_j² if r_j = 0, s_j²·α otherwise.
            // [Ramen Fig. 9, step 5] b := t − e, c_3 := a∘b − c_1, sent to R2.
            c3.extend(
                twist(&s2, r)
                    .zip(&a)
                    .zip(&c1)
                    .zip(&e)
                    .map(|(((t, &a), &c1), &e)| a * (t - e) - c1),
            );
            m.push(mi);
            rs.push(r);
        }
        self.masked.push(count, [m], rs.clone());
        MaskedC3 { r: rs, c3 }
    }

    /// Ramen Fig. 9, steps 6 and 11 at R1: y_2 = x_2 + m for R2, and R1's output r of each
    /// evaluation.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn masked_eval(&mut self, x: &[Additive<Fp>]) -> Result<(Vec<u128>, MaskedY2), DoprfError> {
        let taken = self.masked.take(x.len())?;
        let [m] = taken.cols;
        // [Ramen Fig. 9, step 6] R1 computes y_2 := ⟨x⟩ + m and sends it to R2.
        let y2 = x.iter().zip(m).map(|(x, m)| x.share() + m).collect();
        // [Ramen Fig. 9, step 11] R1 outputs r.
        Ok((taken.masks, MaskedY2 { y2 }))
    }
}

impl Receiver2 {
    /// Ramen Fig. 9, step 2 at R2: draws s for `count` evaluations and waits for (r, c_3).
    /// Advances the R1–R2 masked stream by ℓ (non-zero) elements per evaluation.
    pub fn masked_preprocess_start(&mut self, count: usize) -> AwaitingC3 {
        let prg = &mut self.with_r1.masked;
        // [Ramen Fig. 9, step 2] R1 and R2 compute s ← PRG(k_{1,2}); R2 keeps s∘s.
        let s2 = (0..count * self.params.bits())
            .map(|_| nonzero(prg).square())
            .collect();
        AwaitingC3 { count, s2 }
    }

    /// Ramen Fig. 9, steps 3–5 at R2: receives (r, c_3) from R1 and computes t; the
    /// evaluations are now available.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming R1 if the message has the wrong shape.
    pub fn masked_preprocess_finish(
        &mut self,
        pending: AwaitingC3,
        c3: MaskedC3,
    ) -> Result<(), DoprfError> {
        check_msg(&c3, self.roles.r1(), &self.params, pending.count)?;
        let l = self.params.bits();
        let mut t = Vec::with_capacity(pending.count * l);
        for (i, &r) in c3.r.iter().enumerate() {
            // [Ramen Fig. 9, step 4] t_j := s_j² if r_j = 0, s_j²·α otherwise.
            t.extend(twist(&pending.s2[i * l..(i + 1) * l], r));
        }
        self.masked.push(pending.count, [t, c3.c3], c3.r);
        Ok(())
    }

    /// Ramen Fig. 9, step 6 at R2 (y_3 := x_3): takes one preprocessed evaluation per input
    /// share and waits for y_2 and d.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn masked_eval_start(&mut self, x: &[Additive<Fp>]) -> Result<AwaitingY2AndD, DoprfError> {
        let taken = self.masked.take(x.len())?;
        let [t, c3] = taken.cols;
        Ok(AwaitingY2AndD {
            params: self.params,
            roles: self.roles,
            x: Additive::shares(x),
            t,
            c3,
            r: taken.masks,
        })
    }
}

impl AwaitingY2AndD {
    /// Ramen Fig. 9, steps 8 and 11 at R2: z_3 = t∘(d + y_2 + x_3) + c_3 for K, and R2's
    /// output r of each evaluation.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming the sender if y_2 or d has the wrong length.
    pub fn finish(self, y2: MaskedY2, d: MaskedD) -> Result<(Vec<u128>, MaskedZ3), DoprfError> {
        let count = self.x.len();
        check_msg(&y2, self.roles.r1(), &self.params, count)?;
        check_msg(&d, self.roles.key_holder(), &self.params, count)?;
        let l = self.params.bits();
        let mut z3 = Vec::with_capacity(count * l);
        for i in 0..count {
            // [Ramen Fig. 9, step 8] w := t·(y_2 + y_3), z_3 := d∘t + c_3 + w, sent to K.
            let u = y2.y2[i] + self.x[i];
            let range = i * l..(i + 1) * l;
            z3.extend(
                self.t[range.clone()]
                    .iter()
                    .zip(&d.d[range.clone()])
                    .zip(&self.c3[range])
                    .map(|((&t, &d), &c3)| t * (d + u) + c3),
            );
        }
        // [Ramen Fig. 9, step 11] R2 outputs r.
        Ok((self.r, MaskedZ3 { z3 }))
    }
}

redacted_pending!(
    AwaitingZ3 => |s| s.z1.len() / s.params.bits(),
    AwaitingC3 => |s| s.count,
    AwaitingY2AndD => |s| s.x.len()
);
