//! Ramen Fig. 8 (F_DOPRF): the ideal functionality, as a plaintext trusted party, for tests.
//!
//! It reconstructs x from the three shares and computes y = PRF(k, x) with [`LegendrePrf`].
//! The protocols must give outputs with the same joint distribution: in the unmasked mode R2's
//! output equals y; in the masked mode R1 and R2 output the same uniformly random r and K
//! outputs y ⊕ r.

use doram_core::PartyId;
use doram_field::Fp;
use rand_core::{CryptoRng, RngCore};

use crate::error::DoprfError;
use crate::params::{Mode, Params, Roles};
use crate::prf::{LegendreKey, LegendrePrf};

/// What each party receives from one Eval call, indexed by [`PartyId::index`]: `None` for a
/// party that gets no output.
pub type IdealOutputs = [Option<Vec<u128>>; 3];

/// F_DOPRF of Ramen Fig. 8 for one role assignment.
#[derive(Debug)]
pub struct IdealDoprf {
    params: Params,
    roles: Roles,
    prf: Option<LegendrePrf>,
}

impl IdealDoprf {
    /// The functionality for `params` and `roles`, before KeyGen.
    pub fn new(params: Params, roles: Roles) -> IdealDoprf {
        IdealDoprf {
            params,
            roles,
            prf: None,
        }
    }

    /// Ramen Fig. 8, KeyGen: samples k and outputs it to K.
    pub fn keygen<R: RngCore + CryptoRng + ?Sized>(&mut self, rng: &mut R) -> &LegendreKey {
        self.prf
            .insert(LegendrePrf::new(LegendreKey::random(&self.params, rng)))
            .key()
    }

    /// KeyGen with a given key (e.g. the key a protocol run produced, to compare outputs).
    ///
    /// # Errors
    /// [`DoprfError::InvalidParams`] if the key does not have ℓ elements.
    pub fn set_key(&mut self, key: LegendreKey) -> Result<(), DoprfError> {
        if key.bits() != self.params.bits() {
            return Err(DoprfError::InvalidParams("the key must have ℓ elements"));
        }
        self.prf = Some(LegendrePrf::new(key));
        Ok(())
    }

    /// Ramen Fig. 8, Eval: `shares[i]` are party `P_i`'s input shares (one per evaluation).
    ///
    /// 1. Reconstruct x, compute y = PRF(k, x).
    /// 2. Sample r ← {0, 1}^ℓ.
    /// 3. Masked: r to R1 and R2, y ⊕ r to K. 4. Unmasked: y to R2.
    ///
    /// # Errors
    /// [`DoprfError::ApiMisuse`] before KeyGen or if the parties' batches differ in length.
    pub fn eval<R: RngCore + CryptoRng + ?Sized>(
        &self,
        mode: Mode,
        shares: [&[Fp]; 3],
        rng: &mut R,
    ) -> Result<IdealOutputs, DoprfError> {
        let prf = self
            .prf
            .as_ref()
            .ok_or(DoprfError::ApiMisuse("Eval before KeyGen"))?;
        let count = shares[0].len();
        if shares.iter().any(|s| s.len() != count) {
            return Err(DoprfError::ApiMisuse("input batches of different lengths"));
        }
        // [Ramen Fig. 8, Eval, step 1] Reconstruct x. Compute y := PRF(k, x).
        let x: Vec<Fp> = (0..count)
            .map(|i| shares[0][i] + shares[1][i] + shares[2][i])
            .collect();
        let y = prf.eval_batch(&x);
        let mut out: IdealOutputs = [None, None, None];
        let at = |p: PartyId| p.index();
        match mode {
            Mode::Masked => {
                // [Ramen Fig. 8, Eval, step 2] Sample r ← {0, 1}^ℓ.
                let r: Vec<u128> = (0..count)
                    .map(|_| {
                        let mut b = [0u8; 16];
                        rng.fill_bytes(&mut b);
                        u128::from_le_bytes(b) & self.params.output_mask()
                    })
                    .collect();
                // [Ramen Fig. 8, Eval, step 3] r to R1, R2; y ⊕ r to K.
                out[at(self.roles.key_holder())] =
                    Some(y.iter().zip(&r).map(|(y, r)| y ^ r).collect());
                out[at(self.roles.r1())] = Some(r.clone());
                out[at(self.roles.r2())] = Some(r);
            }
            Mode::Unmasked => {
                // [Ramen Fig. 8, Eval, step 4] y to R2.
                out[at(self.roles.r2())] = Some(y);
            }
        }
        Ok(out)
    }
}

/// Checks that three outputs of the real protocol have the shape and the relations of
/// [`IdealDoprf::eval`] for the PRF values `y`: in the unmasked mode R2 holds `y` and the others
/// nothing; in the masked mode R1 and R2 hold the same r (below 2^ℓ) and K holds `y ⊕ r`.
pub fn consistent(
    mode: Mode,
    roles: &Roles,
    params: &Params,
    y: &[u128],
    outputs: &IdealOutputs,
) -> bool {
    let get = |p: PartyId| outputs[p.index()].as_ref();
    match mode {
        Mode::Unmasked => {
            get(roles.key_holder()).is_none()
                && get(roles.r1()).is_none()
                && get(roles.r2()).is_some_and(|o| o == y)
        }
        Mode::Masked => match (get(roles.key_holder()), get(roles.r1()), get(roles.r2())) {
            (Some(k), Some(r1), Some(r2)) => {
                r1 == r2
                    && k.len() == y.len()
                    && r1.len() == y.len()
                    && r1.iter().all(|&r| r & !params.output_mask() == 0)
                    && k.iter().zip(r1).zip(y).all(|((k, r), y)| k ^ r == *y)
            }
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    #[test]
    fn ideal_outputs_are_consistent() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let params = Params::new(40).unwrap();
        for roles in Roles::all() {
            let mut f = IdealDoprf::new(params, roles);
            assert!(
                f.eval(Mode::Masked, [&[], &[], &[]], &mut rng).is_err(),
                "Eval before KeyGen"
            );
            let prf = LegendrePrf::new(f.keygen(&mut rng).clone());
            let shares: [Vec<Fp>; 3] =
                std::array::from_fn(|_| (0..5).map(|_| Fp::random(&mut rng)).collect());
            let x: Vec<Fp> = (0..5)
                .map(|i| shares[0][i] + shares[1][i] + shares[2][i])
                .collect();
            let y = prf.eval_batch(&x);
            let refs = [&shares[0][..], &shares[1][..], &shares[2][..]];
            for mode in [Mode::Masked, Mode::Unmasked] {
                let out = f.eval(mode, refs, &mut rng).unwrap();
                assert!(consistent(mode, &roles, &params, &y, &out));
                // A flipped bit is caught.
                let mut bad = out.clone();
                if let Some(v) = bad[roles.r2().index()].as_mut() {
                    v[0] ^= 1;
                }
                assert!(!consistent(mode, &roles, &params, &y, &bad));
            }
            assert!(f.eval(Mode::Masked, [&x, &x, &x[..1]], &mut rng).is_err());
        }
    }
}
