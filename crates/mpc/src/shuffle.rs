//! Oblivious shuffle of replicated shares: a secret uniform permutation π of `0..n` that no
//! single party knows, applied to vectors and to square matrices (rows and columns alike).
//!
//! # Protocol
//! The three-party resharing shuffle (as in Laur, Willemson and Zhang, ISC 2011, and Araki et
//! al., CCS 2021): π = σ₂ ∘ σ₁ ∘ σ₀, where σ_t is drawn from the PRG that the pair
//! (`P_t`, `P_{t+1}`) shares, so each party knows two of the three and π is uniform to it.
//! Step t, with A = `P_t`, B = `P_{t+1}` and C = `P_{t+2}`, one round:
//! 1. A and B turn ⟦x⟧ into two-party shares (A: x_t + x_{t+2}, B: x_{t+1}) and both apply
//!    σ_t;
//! 2. the new components y_{t+1} (PRG of B and C) and y_{t+2} (PRG of C and A) are drawn by
//!    the parties that hold them; A sends its share − y_{t+2} to B and B sends its share −
//!    y_{t+1} to A, and both take y_t as the sum. C neither sends nor receives.
//!
//! Each message is masked by a component the receiver does not know, and C's new components
//! are fresh, so the views are uniform; the two parties that know σ_t see only masked values.
//! The inverse applies σ₂⁻¹, σ₁⁻¹, σ₀⁻¹ by the same steps in reverse order.
//!
//! Costs: 3 rounds; in each step A and B send one element per shared value (n per vector,
//! n² per matrix) and C nothing, so each party sends 2·(values) elements over the three steps.

use doram_core::PartyId;
use doram_field::Fp;
use doram_net::Session;
use rand::seq::SliceRandom;

use crate::driver::{recv_framed, send_framed};
use crate::error::MpcError;
use crate::party::Party;
use crate::share::Replicated;

/// A secret permutation of `0..n` as one party holds it: the two of σ₀, σ₁, σ₂ it knows
/// (`sigma[t]` for the pairs it belongs to). `Debug` shows only n.
pub struct Shuffle {
    n: usize,
    sigma: [Option<Vec<u32>>; 3],
}

impl core::fmt::Debug for Shuffle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Shuffle(n = {})", self.n)
    }
}

impl Shuffle {
    /// Draws this party's two permutations from its pairwise PRGs (no communication). Every
    /// party calls it at the same point of the protocol with the same `n`.
    ///
    /// # Errors
    /// [`MpcError::ApiMisuse`] if n ≥ 2^32.
    pub fn new(party: &mut Party, n: usize) -> Result<Shuffle, MpcError> {
        if u32::try_from(n).is_err() {
            return Err(MpcError::ApiMisuse("shuffle length must be below 2^32"));
        }
        let me = party.me();
        let mut sigma: [Option<Vec<u32>>; 3] = [None, None, None];
        // Pair t is (P_t, P_{t+1}); draw in pair order so both members draw alike.
        for (t, slot) in sigma.iter_mut().enumerate() {
            let a = PartyId::ALL[t];
            let b = PartyId::ALL[(t + 1) % 3];
            let peer = if me == a {
                b
            } else if me == b {
                a
            } else {
                continue;
            };
            let mut perm: Vec<u32> = (0..n as u32).collect();
            perm.shuffle(party.pairwise().with(peer));
            *slot = Some(perm);
        }
        Ok(Shuffle { n, sigma })
    }

    /// The length of the permuted vectors.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether n = 0.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// Where element i of a vector goes under σ (out\[σ(i)\] = v\[i\]), or under σ⁻¹.
fn permute_vector(v: &[Fp], sigma: &[u32], inverse: bool) -> Vec<Fp> {
    let mut out = vec![Fp::ZERO; v.len()];
    for (i, &s) in sigma.iter().enumerate() {
        if inverse {
            out[i] = v[s as usize];
        } else {
            out[s as usize] = v[i];
        }
    }
    out
}

/// out\[σ(i)\]\[σ(j)\] = m\[i\]\[j\] (or the inverse) for a row-major n × n matrix.
fn permute_matrix(m: &[Fp], sigma: &[u32], inverse: bool) -> Vec<Fp> {
    let n = sigma.len();
    let mut out = vec![Fp::ZERO; m.len()];
    for (i, &si) in sigma.iter().enumerate() {
        for (j, &sj) in sigma.iter().enumerate() {
            let (si, sj) = (si as usize, sj as usize);
            if inverse {
                out[i * n + j] = m[si * n + sj];
            } else {
                out[si * n + sj] = m[i * n + j];
            }
        }
    }
    out
}

/// The values of one call: vectors of length n and n × n matrices, flattened in order.
pub(crate) struct Layout {
    pub(crate) vectors: usize,
    pub(crate) matrices: usize,
}

impl Layout {
    fn total(&self, n: usize) -> usize {
        self.vectors * n + self.matrices * n * n
    }
}

fn apply(shares: &[Fp], layout: &Layout, n: usize, sigma: &[u32], inverse: bool) -> Vec<Fp> {
    let mut out = Vec::with_capacity(shares.len());
    let (vecs, mats) = shares.split_at(layout.vectors * n);
    for v in vecs.chunks_exact(n.max(1)).take(layout.vectors) {
        out.extend(permute_vector(v, sigma, inverse));
    }
    for m in mats.chunks_exact((n * n).max(1)).take(layout.matrices) {
        out.extend(permute_matrix(m, sigma, inverse));
    }
    out
}

/// Applies π (or π⁻¹) to the flattened `values` laid out as `layout`: three rounds.
pub(crate) fn run(
    session: &mut Session,
    party: &mut Party,
    sh: &Shuffle,
    values: Vec<Replicated<Fp>>,
    layout: &Layout,
    inverse: bool,
) -> Result<Vec<Replicated<Fp>>, MpcError> {
    let n = sh.n;
    if values.len() != layout.total(n) {
        return Err(MpcError::ApiMisuse(
            "shuffle values do not match the layout",
        ));
    }
    let order: [usize; 3] = if inverse { [2, 1, 0] } else { [0, 1, 2] };
    let mut cur = values;
    for t in order {
        cur = step(session, party, sh, cur, layout, t, inverse)?;
    }
    Ok(cur)
}

/// Step t of the shuffle (see the [module documentation](self)).
fn step(
    session: &mut Session,
    party: &mut Party,
    sh: &Shuffle,
    x: Vec<Replicated<Fp>>,
    layout: &Layout,
    t: usize,
    inverse: bool,
) -> Result<Vec<Replicated<Fp>>, MpcError> {
    let me = party.me();
    let a = PartyId::ALL[t];
    let b = PartyId::ALL[(t + 1) % 3];
    let c = PartyId::ALL[(t + 2) % 3];
    let len = x.len();
    if me == c {
        // y_{t+2} (own, shared with A) and y_{t+1} (prev, shared with B).
        let own: Vec<Fp> = party.pairwise().with(a).expand(len);
        let prev: Vec<Fp> = party.pairwise().with(b).expand(len);
        return Ok(own
            .into_iter()
            .zip(prev)
            .map(|(o, p)| Replicated::from_parts(o, p))
            .collect());
    }
    let sigma = sh.sigma[t]
        .as_deref()
        .ok_or(MpcError::ApiMisuse("shuffle permutation missing"))?;
    let (peer, mask_with) = if me == a { (b, c) } else { (a, c) };
    let two_party: Vec<Fp> = x
        .iter()
        .map(|s| if me == a { s.own() + s.prev() } else { s.own() })
        .collect();
    drop(x);
    let mut masked = apply(&two_party, layout, sh.n, sigma, inverse);
    drop(two_party);
    // A: y_{t+2} = own's prev slot later; B: y_{t+1} = its own component.
    let mine: Vec<Fp> = party.pairwise().with(mask_with).expand(len);
    for (u, &y) in masked.iter_mut().zip(&mine) {
        *u -= y;
    }
    send_framed(session, peer, &masked)?;
    let theirs: Vec<Fp> = recv_framed(session, peer, len, "shuffle re-sharing")?;
    Ok(masked
        .iter()
        .zip(&theirs)
        .zip(&mine)
        .map(|((&p, &q), &y)| {
            let yt = p + q;
            if me == a {
                // A = P_t holds (y_t, y_{t−1} = y_{t+2}).
                Replicated::from_parts(yt, y)
            } else {
                // B = P_{t+1} holds (y_{t+1}, y_t).
                Replicated::from_parts(y, yt)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_and_vector_permutations_invert() {
        let sigma = [2u32, 0, 3, 1];
        let v: Vec<Fp> = (0..4).map(Fp::from_u64).collect();
        let p = permute_vector(&v, &sigma, false);
        assert_eq!(p, [1, 3, 0, 2].map(Fp::from_u64));
        assert_eq!(permute_vector(&p, &sigma, true), v);
        let m: Vec<Fp> = (0..16).map(Fp::from_u64).collect();
        let pm = permute_matrix(&m, &sigma, false);
        // out[σ(i)][σ(j)] = m[i][j]: m[0][1] = 1 goes to [2][0].
        assert_eq!(pm[2 * 4], Fp::from_u64(1));
        assert_eq!(permute_matrix(&pm, &sigma, true), m);
    }
}
