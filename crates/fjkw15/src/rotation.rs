//! The data rotations of Access (FJKW15 §4, "Data rotations"; Alg. 3, step 1; notes §5.2) and
//! their inverse, the map Shift applies in Eviction (Alg. 5, step 1; notes Q1).
//!
//! D and E pick, per access and per tree, σ ∈ \[d_i + 4\], δ ∈ \[w\] and ρ ∈ {0,1}^τ (0-based
//! here) and apply Rot[σ, δ, ρ] to their shares of the retrieved path:
//! * σ rotates the d_i + 4 buckets "clock-wise": bucket b moves to position (b + σ) mod n,
//!   the four leaf buckets taking part in the ring like the others;
//! * δ rotates the w tuples of every bucket the same way: slot ℓ moves to (ℓ + δ) mod w;
//! * ρ flips every A field: cell t moves to t ⊕ ρ (not in OT_h, whose A field is the record).
//!
//! [`Rotation::inverse`] undoes all three, so that Shift returns the path exactly as it was
//! read (undoing δ is optional, notes §4.6, since Eviction permutes every bucket next; it
//! costs nothing here, as Shift moves whole tuples anyway).

use rand_core::RngCore;

use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::params::Params;
use crate::sample::uniform_below;
use crate::shift::ShiftMap;

/// The shifts (σ, δ, ρ) of one tree in one access, with the path's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rotation {
    sigma: usize,
    delta: usize,
    rho: usize,
    buckets: usize,
    w: usize,
    layout: TupleLayout,
}

impl Rotation {
    /// The rotation of a path of OT_i by σ buckets, δ tuples and ρ.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless σ < d_i + 4, δ < w and ρ < 2^τ (for OT_0, whose
    /// path is one tuple, σ = δ = 0).
    pub fn new(
        params: &Params,
        i: usize,
        sigma: usize,
        delta: usize,
        rho: usize,
    ) -> Result<Rotation, Fjkw15Error> {
        let (buckets, w) = (params.path_buckets(i), params.bucket_tuples(i));
        if sigma >= buckets || delta >= w || rho >= params.fanout() {
            return Err(Fjkw15Error::InvalidInput(
                "σ, δ and ρ must be below d_i + 4, w and 2^τ",
            ));
        }
        let layout = TupleLayout::new(params, i);
        Ok(Rotation {
            sigma,
            delta,
            rho,
            buckets,
            w,
            layout,
        })
    }

    /// FJKW15 Alg. 3, pre-computation: (σ, δ, ρ) uniform, drawn from `rng` (the PRG D and E
    /// share).
    pub fn random<R: RngCore + ?Sized>(params: &Params, i: usize, rng: &mut R) -> Rotation {
        let (buckets, w) = (params.path_buckets(i), params.bucket_tuples(i));
        let sigma = uniform_below(rng, buckets as u64) as usize;
        let delta = uniform_below(rng, w as u64) as usize;
        let rho = uniform_below(rng, params.fanout() as u64) as usize;
        Rotation::new(params, i, sigma, delta, rho).expect("drawn in range")
    }

    /// σ, δ and ρ.
    pub fn shifts(&self) -> (usize, usize, usize) {
        (self.sigma, self.delta, self.rho)
    }

    /// ρ: C learns j_2 = N^(i+1) ⊕ ρ in Access, and PostProcess works on the flipped A field.
    pub fn rho(&self) -> usize {
        self.rho
    }

    /// The item map that moves tuple (b, ℓ) to ((b + s_b) mod n, (ℓ + s_ℓ) mod w).
    fn moving(&self, s_b: usize, s_l: usize) -> Vec<usize> {
        let (n, w) = (self.buckets, self.w);
        (0..n * w)
            .map(|j| {
                let (b, l) = (j / w, j % w);
                ((b + n - s_b) % n) * w + (l + w - s_l) % w
            })
            .collect()
    }

    fn with_flip(&self, map: Vec<usize>) -> ShiftMap {
        let map = ShiftMap::new(map).expect("a rotation is a permutation");
        match self.layout.a_flip(self.rho) {
            Some(flip) => map.with_flip(flip),
            None => map,
        }
    }

    /// Rot[σ, δ, ρ] (FJKW15 Alg. 3, step 1), as a map on the path's tuples.
    pub fn forward(&self) -> ShiftMap {
        self.with_flip(self.moving(self.sigma, self.delta))
    }

    /// The inverse of [`Rotation::forward`]: the Π of Shift in Eviction (Alg. 5, step 1),
    /// buckets back by σ, tuples back by δ, A fields flipped by ρ again.
    pub fn inverse(&self) -> ShiftMap {
        let (n, w) = (self.buckets, self.w);
        self.with_flip(self.moving((n - self.sigma) % n, (w - self.delta) % w))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bits::Strings;
    use rand::SeedableRng;

    #[test]
    fn inverse_undoes_forward_and_forward_moves_as_the_paper_says() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(5);
        let params = Params::new(12, 3, 4, 20).unwrap();
        for i in 0..params.trees() {
            let rot = Rotation::random(&params, i, &mut rng);
            let layout = TupleLayout::new(&params, i);
            let (n, w) = (params.path_buckets(i), params.bucket_tuples(i));
            let path = Strings::random(n * w, layout.bits(), &mut rng);
            let rotated = rot.forward().apply(&path);
            assert_eq!(rot.inverse().apply(&rotated), path, "tree {i}");
            let (sigma, delta, rho) = rot.shifts();
            for j in 0..n * w {
                let (b, l) = (j / w, j % w);
                let to = ((b + sigma) % n) * w + (l + delta) % w;
                let (before, after) = (layout.decode(path.get(j)), layout.decode(rotated.get(to)));
                assert_eq!(
                    (before.fb, before.n, before.label),
                    (after.fb, after.n, after.label)
                );
                if i < params.h() {
                    assert!((0..params.fanout()).all(|t| after.a[t ^ rho] == before.a[t]));
                } else {
                    assert_eq!(after.a, before.a);
                }
            }
        }
        assert!(Rotation::new(&params, 2, params.path_buckets(2), 0, 0).is_err());
        assert!(Rotation::new(&params, 0, 0, 1, 0).is_err());
        assert!(Rotation::new(&params, 1, 0, 0, 8).is_err());
    }
}
