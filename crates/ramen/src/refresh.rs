//! Ramen Fig. 7 (Π_w-M): writing the stash back into the memory with multi-point DPFs, and
//! the material one epoch consumes ([`EpochPrep`]), prepared before the epoch starts.
//!
//! # Write-back
//! P_i knows the positions (in its masked memory M'_i) of the s cells read during the epoch and
//! holds a share of val − val_old for each. It generates a multi-point DPF key pair (Schoppmann
//! et al.'s cuckoo construction over Half-Tree, [`doram_dpf::HalfTreeMpDpf`]) on the domain
//! \[m\] with these values at these positions ([`write_back_keys`], Fig. 7, step 1(c)), and sends
//! one key to each neighbour. P_{i−1} and P_{i+1} both know σ_i, evaluate the key on the whole
//! domain and add the output at σ_i(j) to their share of cell j < n ([`apply_write_back`],
//! step 1(d)). Then all shares are re-randomised with F_Zero(n) (steps 2–3).
//!
//! If an address out of range made two accesses read the same position (never the case for
//! in-range addresses: each access reads a fresh cell), the values of the duplicates are merged
//! and fresh unused positions with value 0 stand in for them, so that the key still has the
//! public number of points and nobody can tell.
//!
//! # Refresh
//! The next epoch's Init (Fig. 6, Init, via Fig. 14's Refresh) is split: everything that does
//! not depend on the memory — keys, tags, position maps, p-OT vectors, DOPRF and DPF
//! preprocessing — is prepared ahead ([`EpochPrep`], `Ramen::preprocess`); only the masked
//! memory M'_i itself is sent when the epoch starts.

use doram_doprf::msgs::{KeyShare1, KeyShare2};
use doram_dpf::{HalfTreeKey, HalfTreeMpDpf, MultiPointDpf};
use doram_field::Fp;
use doram_prim::AesPrg;
use std::collections::HashSet;

use crate::error::RamenError;
use crate::msgs::{LocOut, WriteBackKey};
use crate::params::Params;
use crate::pot;
use crate::read::{HelperEpoch, KeyHolderEpoch};
use crate::stash::{FlagDealt, LocDealt, StashShares};
use crate::tags::{PositionMap, uniform_below};

/// The flag-DPF material of one epoch: P_1 (our P0) deals, P_2 and P_3 hold keys.
pub enum FlagMaterial {
    /// Our P0: the random points.
    Dealer(FlagDealt),
    /// Our P1 and P2: one key per access.
    Holder(Vec<HalfTreeKey<Fp>>),
}

/// Everything one party needs for one epoch that does not depend on the memory or the
/// instructions (Ramen Fig. 14, "preprocess"), in the order the epoch consumes it. The DOPRF
/// preprocessing is kept in the DOPRF states' own queues.
pub struct EpochPrep {
    /// As key holder of the successor's reads (Fig. 6, P_{i−1}).
    pub holder: KeyHolderEpoch,
    /// As reader (Fig. 6, P_i): the map received from the predecessor.
    pub map: PositionMap,
    /// As reader: the p-OT chooser.
    pub chooser: pot::Chooser,
    /// As helper of the predecessor's reads (Fig. 6, P_{i+1}).
    pub helper: HelperEpoch,
    /// Fig. 4, step 4.
    pub flag: FlagMaterial,
    /// Fig. 4, step 10, own DPFs: points and ρ^{−1}.
    pub loc_dealt: LocDealt,
    /// Fig. 4, step 10, the successor's keys for this party.
    pub loc_from_next: Vec<HalfTreeKey<LocOut>>,
    /// Fig. 4, step 10, the predecessor's keys for this party.
    pub loc_from_prev: Vec<HalfTreeKey<LocOut>>,
    /// Fig. 4, step 1, at the stash key holder: the key shares for this epoch's k_stash.
    pub stash_key: Option<(KeyShare1, KeyShare2)>,
}

impl std::fmt::Debug for EpochPrep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EpochPrep(..)")
    }
}

/// Ramen Fig. 7, step 1(c) at P_i: the multi-point DPF keys for the successor and the
/// predecessor, with value ⟨stash\[c\].val⟩_i − ⟨stash\[c\].val_old⟩_i at the position read in
/// access c, for every access c so far.
///
/// # Errors
/// [`RamenError::Dpf`] if cuckoo hashing fails with every hash key (negligible).
pub fn write_back_keys(
    params: &Params,
    positions: &[u32],
    stash: &StashShares,
    rng: &mut AesPrg,
) -> Result<(WriteBackKey, WriteBackKey), RamenError> {
    let m = params.memory();
    let mut points: Vec<usize> = Vec::with_capacity(positions.len());
    let mut values: Vec<Fp> = Vec::with_capacity(positions.len());
    let mut index = std::collections::HashMap::with_capacity(positions.len());
    let mut duplicates = 0;
    for ((&p, &v), &o) in positions.iter().zip(&stash.val).zip(&stash.old) {
        // [Ramen Fig. 7, step 1(c)] f_i(L_i^{−1}(adr_i^read[c])) := ⟨val⟩ − ⟨val_old⟩.
        match index.entry(p as usize) {
            std::collections::hash_map::Entry::Occupied(e) => {
                values[*e.get()] += v - o;
                duplicates += 1;
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(points.len());
                points.push(p as usize);
                values.push(v - o);
            }
        }
    }
    if duplicates > 0 {
        let used: HashSet<usize> = points.iter().copied().collect();
        let mut fresh = HashSet::new();
        while fresh.len() < duplicates {
            let p = uniform_below(rng, m as u64) as usize;
            if !used.contains(&p) {
                fresh.insert(p);
            }
        }
        for p in fresh {
            points.push(p);
            values.push(Fp::ZERO);
        }
    }
    let (k0, k1) = <HalfTreeMpDpf as MultiPointDpf<Fp>>::gen_keys(m, &points, &values, rng)?;
    Ok((WriteBackKey { key: k0 }, WriteBackKey { key: k1 }))
}

/// The full-domain evaluation of a write-back key, on the pool if there is one.
fn eval_all(key: &WriteBackKey, pool: Option<&rayon::ThreadPool>) -> Vec<Fp> {
    match pool {
        Some(pool) if pool.current_num_threads() > 1 => {
            pool.install(|| <HalfTreeMpDpf as MultiPointDpf<Fp>>::eval_all_par(&key.key))
        }
        _ => <HalfTreeMpDpf as MultiPointDpf<Fp>>::eval_all(&key.key),
    }
}

/// Ramen Fig. 7, step 1(d) at P_t for both neighbours' keys: for j ∈ \[n\],
/// ⟨M\[j\]⟩ += Eval(mk_{i,t}, σ_i(j)) for the successor's key (positions σ of the reads this party
/// holds the key for) and the predecessor's key (positions σ of the reads it helps with).
pub fn apply_write_back(
    memory: &mut [Fp],
    from_next: &WriteBackKey,
    holder: &KeyHolderEpoch,
    from_prev: &WriteBackKey,
    helper: &HelperEpoch,
    pool: Option<&rayon::ThreadPool>,
) {
    let out_next = eval_all(from_next, pool);
    let out_prev = eval_all(from_prev, pool);
    for ((x, &a), &b) in memory.iter_mut().zip(&holder.sigma).zip(&helper.sigma) {
        // [Ramen Fig. 7, step 1(d)] ⟨M[j].val⟩ += Φ.Eval(mk_{i,t}, L_i^{−1}(PRF(k_i, j))).
        *x += out_next[a as usize] + out_prev[b as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;

    #[test]
    fn duplicate_positions_are_merged() {
        let params = Params::new(30).unwrap();
        let mut rng = AesPrg::new(Seed([3; 16]));
        let stash = StashShares {
            val: vec![Fp::from_u64(5), Fp::from_u64(7), Fp::from_u64(9)],
            old: vec![Fp::ONE, Fp::ONE, Fp::ONE],
        };
        let positions = [4u32, 10, 4];
        let (a, b) = write_back_keys(&params, &positions, &stash, &mut rng).unwrap();
        let ya = <HalfTreeMpDpf as MultiPointDpf<Fp>>::eval_all(&a.key);
        let yb = <HalfTreeMpDpf as MultiPointDpf<Fp>>::eval_all(&b.key);
        for x in 0..params.memory() {
            let expect = match x {
                4 => Fp::from_u64(12),
                10 => Fp::from_u64(6),
                _ => Fp::ZERO,
            };
            assert_eq!(ya[x] + yb[x], expect, "x = {x}");
        }
    }
}
