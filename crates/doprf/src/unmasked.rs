//! Ramen Fig. 22 (Π_DOPRF, unmasked): on an additively shared input ⟨x⟩, R2 learns
//! PRF(k, x); K and R1 learn nothing.
//!
//! Notation as in the figure: ⟨x⟩ is x_1 at K, x_2 at R1, x_3 at R2 (x = x_1 + x_2 + x_3);
//! s ∈ F_p^ℓ comes from the K–R1 stream, m, b ∈ F_p and d, c_3 ∈ F_p^ℓ from the R1–R2 stream.
//!
//! # Preprocessing (steps 1–3, input independent), one round
//! Per evaluation, the K–R1 stream yields s_0 … s_{ℓ−1} (each non-zero: zero draws are
//! rejected); the R1–R2 stream yields m, b, d_0 … d_{ℓ−1}, c_{3,0} … c_{3,ℓ−1}.
//!
//! * K ([`KeyHolder::unmasked_preprocess_start`]): stores s∘s, waits for c_1.
//! * R1 ([`Receiver1::unmasked_preprocess`]): a = s∘s − d, c_1 = b·a − c_3, sends c_1 to K;
//!   stores m.
//! * R2 ([`Receiver2::unmasked_preprocess`]): stores m + b and the input-independent part of
//!   step 7, z_3 = d·y_3 + c_3 − d·e = b·d + c_3 (since y_3 − e = b). No message.
//!
//! # Online (steps 4–9), two rounds
//! 1. R1 sends y_2 = x_2 + m to K (step 4); R2 sends e = x_3 − m − b to K (step 5).
//! 2. K sends z_1 = (s∘s)∘(k + x_1 + y_2 + e) + c_1 to R2 (step 6; the figure's
//!    e·(s∘s) + c_1 + (s∘s)·(k + x_1 + y_2) regrouped).
//! 3. R2: z = z_1 + z_3 = (s∘s)∘(k + x), o_j = [Legendre(z_j) = 1] (steps 7–9).

use doram_field::Fp;
use doram_mpc::Additive;

use crate::error::DoprfError;
use crate::msgs::{UnmaskedC1, UnmaskedE, UnmaskedY2, UnmaskedZ1};
use crate::params::Params;
use crate::party::{KeyHolder, Receiver1, Receiver2, check_msg, nonzero};
use crate::prf::{LegendreKey, legendre_bits_vartime};

/// K during unmasked preprocessing: s∘s is drawn, c_1 from R1 is awaited.
pub struct AwaitingC1 {
    count: usize,
    s2: Vec<Fp>,
}

/// K during an unmasked evaluation: waits for y_2 from R1 and e from R2.
pub struct AwaitingY2AndE {
    params: Params,
    roles: crate::params::Roles,
    key: LegendreKey,
    x: Vec<Fp>,
    s2: Vec<Fp>,
    c1: Vec<Fp>,
}

/// R2 during an unmasked evaluation: waits for z_1 from K.
pub struct AwaitingZ1 {
    params: Params,
    roles: crate::params::Roles,
    z3: Vec<Fp>,
}

impl KeyHolder {
    /// Ramen Fig. 22, steps 1–3 at K: draws s for `count` evaluations and waits for c_1.
    /// Advances the K–R1 unmasked stream by ℓ (non-zero) elements per evaluation.
    pub fn unmasked_preprocess_start(&mut self, count: usize) -> AwaitingC1 {
        let prg = &mut self.with_r1.unmasked;
        // [Ramen Fig. 22, step 1] K and R1 compute s ← PRG(k_{k,1}); K keeps s∘s.
        let s2 = (0..count * self.params.bits())
            .map(|_| nonzero(prg).square())
            .collect();
        AwaitingC1 { count, s2 }
    }

    /// Ramen Fig. 22, step 3 at K: stores c_1 from R1 with s∘s; the evaluations are now
    /// available.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming R1 if c_1 does not have count·ℓ elements.
    pub fn unmasked_preprocess_finish(
        &mut self,
        pending: AwaitingC1,
        c1: UnmaskedC1,
    ) -> Result<(), DoprfError> {
        check_msg(&c1, self.roles.r1(), &self.params, pending.count)?;
        self.unmasked
            .push(pending.count, [pending.s2, c1.c1], Vec::new());
        Ok(())
    }

    /// Ramen Fig. 22, steps 4–6 at K: takes one preprocessed evaluation per input share and
    /// waits for y_2 and e.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn unmasked_eval_start(
        &mut self,
        x: &[Additive<Fp>],
    ) -> Result<AwaitingY2AndE, DoprfError> {
        let [s2, c1] = self.unmasked.take(x.len())?.cols;
        Ok(AwaitingY2AndE {
            params: self.params,
            roles: self.roles,
            key: self.key.clone(),
            x: Additive::shares(x),
            s2,
            c1,
        })
    }
}

impl AwaitingY2AndE {
    /// Ramen Fig. 22, step 6 at K: z_1 = (s∘s)∘(k + x_1 + y_2 + e) + c_1, for R2.
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming the sender if y_2 or e has the wrong length.
    pub fn finish(self, y2: UnmaskedY2, e: UnmaskedE) -> Result<UnmaskedZ1, DoprfError> {
        let count = self.x.len();
        check_msg(&y2, self.roles.r1(), &self.params, count)?;
        check_msg(&e, self.roles.r2(), &self.params, count)?;
        let l = self.params.bits();
        let k = self.key.elements();
        let mut z1 = Vec::with_capacity(count * l);
        for i in 0..count {
            // [Ramen Fig. 22, step 6] w = (s∘s)·(k + ⟨x⟩ + y_2), z_1 = e·(s∘s) + c_1 + w.
            let u = self.x[i] + y2.y2[i] + e.e[i];
            let s2 = &self.s2[i * l..(i + 1) * l];
            let c1 = &self.c1[i * l..(i + 1) * l];
            z1.extend(
                s2.iter()
                    .zip(c1)
                    .zip(k)
                    .map(|((&s2, &c1), &k)| s2 * (k + u) + c1),
            );
        }
        Ok(UnmaskedZ1 { z1 })
    }
}

impl Receiver1 {
    /// Ramen Fig. 22, steps 1–3 at R1: c_1 for `count` evaluations, for K. Advances the K–R1
    /// unmasked stream by ℓ (non-zero) elements and the R1–R2 unmasked stream by 2 + 2ℓ
    /// elements per evaluation.
    pub fn unmasked_preprocess(&mut self, count: usize) -> UnmaskedC1 {
        let l = self.params.bits();
        let mut m = Vec::with_capacity(count);
        let mut c1 = Vec::with_capacity(count * l);
        for _ in 0..count {
            // [Ramen Fig. 22, step 1] K and R1 compute s ← PRG(k_{k,1}).
            let s: Vec<Fp> = (0..l).map(|_| nonzero(&mut self.with_k.unmasked)).collect();
            // [Ramen Fig. 22, step 2] R1 and R2 compute m, b, d, c_3 ← PRG(k_{1,2}).
            let prg = &mut self.with_r2.unmasked;
            let mi: Fp = prg.random();
            let b: Fp = prg.random();
            let d: Vec<Fp> = prg.expand(l);
            let c3: Vec<Fp> = prg.expand(l);
            // [Ramen Fig. 22, step 3] a = s∘s − d, c_1 = b·a − c_3, sent to K.
            c1.extend(
                s.iter()
                    .zip(&d)
                    .zip(&c3)
                    .map(|((&s, &d), &c3)| b * (s.square() - d) - c3),
            );
            m.push(mi);
        }
        self.unmasked.push(count, [m], Vec::new());
        UnmaskedC1 { c1 }
    }

    /// Ramen Fig. 22, step 4 at R1: y_2 = x_2 + m, for K. R1 has no output.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn unmasked_eval(&mut self, x: &[Additive<Fp>]) -> Result<UnmaskedY2, DoprfError> {
        let [m] = self.unmasked.take(x.len())?.cols;
        // [Ramen Fig. 22, step 4] R1 computes and sends y_2 := ⟨x⟩ + m to K.
        let y2 = x.iter().zip(m).map(|(x, m)| x.share() + m).collect();
        Ok(UnmaskedY2 { y2 })
    }
}

impl Receiver2 {
    /// Ramen Fig. 22, step 2 at R2 (and the input-independent part of step 7): stores m + b
    /// and b·d + c_3 for `count` evaluations. No message. Advances the R1–R2 unmasked stream by
    /// 2 + 2ℓ elements per evaluation.
    pub fn unmasked_preprocess(&mut self, count: usize) {
        let l = self.params.bits();
        let mut mb = Vec::with_capacity(count);
        let mut z3 = Vec::with_capacity(count * l);
        for _ in 0..count {
            // [Ramen Fig. 22, step 2] R1 and R2 compute m, b, d, c_3 ← PRG(k_{1,2}).
            let prg = &mut self.with_r1.unmasked;
            let m: Fp = prg.random();
            let b: Fp = prg.random();
            let d: Vec<Fp> = prg.expand(l);
            let c3: Vec<Fp> = prg.expand(l);
            // [Ramen Fig. 22, step 7] z_3 = d·y_3 + c_3 − d·e = b·d + c_3, as y_3 − e = b.
            z3.extend(d.iter().zip(&c3).map(|(&d, &c3)| b * d + c3));
            mb.push(m + b);
        }
        self.unmasked.push(count, [mb, z3], Vec::new());
    }

    /// Ramen Fig. 22, step 5 at R2: e = x_3 − m − b, for K; then waits for z_1.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (consuming nothing) if fewer than `x.len()`
    /// evaluations are preprocessed.
    pub fn unmasked_eval_start(
        &mut self,
        x: &[Additive<Fp>],
    ) -> Result<(AwaitingZ1, UnmaskedE), DoprfError> {
        let [mb, z3] = self.unmasked.take(x.len())?.cols;
        // [Ramen Fig. 22, step 5] y_3 := ⟨x⟩ − m, e := y_3 − b, sent to K.
        let e = x.iter().zip(mb).map(|(x, mb)| x.share() - mb).collect();
        let pending = AwaitingZ1 {
            params: self.params,
            roles: self.roles,
            z3,
        };
        Ok((pending, UnmaskedE { e }))
    }
}

impl AwaitingZ1 {
    /// Ramen Fig. 22, steps 7–9 at R2: z = z_1 + z_3 and the output PRF(k, x) of each
    /// evaluation, o_j = [Legendre(z_j) = 1].
    ///
    /// # Errors
    /// [`DoprfError::Peer`] naming K if z_1 has the wrong length.
    pub fn finish(self, z1: UnmaskedZ1) -> Result<Vec<u128>, DoprfError> {
        let count = self.z3.len() / self.params.bits();
        check_msg(&z1, self.roles.key_holder(), &self.params, count)?;
        // [Ramen Fig. 22, step 7] z := z_1 + z_3 = (s∘s)∘(k + x).
        let z: Vec<Fp> = z1.z1.iter().zip(&self.z3).map(|(&a, &b)| a + b).collect();
        // [Ramen Fig. 22, steps 8–9] o[j] := (1/2)((z[j]/p) + 1): bit j is [Legendre(z_j) = 1].
        Ok(legendre_bits_vartime(&z, &self.params))
    }
}

// Pending rounds hold secrets: print their size only.
macro_rules! redacted_pending {
    ($($ty:ident => |$s:ident| $count:expr),*) => {$(
        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                let $s = self;
                write!(f, "{}(count = {}, ..)", stringify!($ty), $count)
            }
        }
    )*};
}
pub(crate) use redacted_pending;

redacted_pending!(
    AwaitingC1 => |s| s.count,
    AwaitingY2AndE => |s| s.x.len(),
    AwaitingZ1 => |s| s.z3.len() / s.params.bits()
);
