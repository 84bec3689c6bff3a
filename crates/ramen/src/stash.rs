//! Ramen Fig. 4 (reading from the stash) and Fig. 5 (writing to the stash): the local
//! computations of Π_Stash. The rounds are sequenced in [`crate::doram`]; this module holds the
//! stash state and the functions that turn received messages into shares.
//!
//! # The stash
//! Entry c of the stash holds ⟨stash\[c\].val⟩ and ⟨stash\[c\].val_old⟩ (additive, all three
//! parties) — [`StashShares`] — and P_2, P_3 (our P1, P2) hold the list L_stash of the stash tags
//! PRF(k_stash, adr_M) of the addresses read so far. Ramen also stores ⟨stash\[c\].adr⟩ (Fig. 5,
//! step 3), which no step ever reads; we do not keep it.
//!
//! # Deliberate changes (all input-independent work moves to preprocessing)
//! 1. **Flag DPF with a preprocessed random point** (Fig. 4, steps 4–5). P_1 (our P0) deals,
//!    in preprocessing, one DPF key pair per access for the function that is 1 at a random
//!    α ∈ {0, 1}^ℓ_stash ([`FlagKeys`]). Online, after the masked DOPRF gave it
//!    adr' = PRF(k_stash, adr) ⊕ R, P_1 sends adr' ⊕ α ([`crate::msgs::FlagShift`]) to P_2, P_3, who
//!    evaluate their key at L_stash\[j\] ⊕ R ⊕ adr' ⊕ α, which is α exactly when
//!    L_stash\[j\] = PRF(k_stash, adr). P_2, P_3 learn PRF(k_stash, adr) ⊕ α, uniformly random;
//!    P_1 learns nothing new. This saves the DPF key generation and the key transfer (about a
//!    kilobyte each way) in the online phase.
//! 2. **F_Select for loc is linear** (Fig. 4, step 6). loc = Σ_j v_j·j is 0 whenever flag = 0,
//!    so Select(flag, loc, c) = flag·loc + (1 − flag)·c = loc + c·(1 − flag): no interaction.
//! 3. **Location DPFs with a preprocessed random point and a revealed shift** (Fig. 4, step 10;
//!    Fig. 5, step 7). For each i, P_i deals in preprocessing one key pair per access on the
//!    stash domain [0, s) with value (1, ρ_i) at a random point α_i ([`LocKeys`], two outputs
//!    in one tree). Online, the two evaluators P_{i±1} learn the shift δ_i = (loc − α_i) mod s
//!    instead of P_i learning loc + r_i: P_i sends its fresh share of loc masked as
//!    ⟨loc⟩_i − α_i + s·(μ + 1) with μ ← [0, 2^40), and the evaluators exchange their fresh
//!    shares ([`crate::msgs::LocOpening`]); the sum X = loc − α_i + s(μ + 1) < 2^64 reveals
//!    X mod s = δ_i (uniform, as α_i is) and, through ⌊X/s⌋, nothing about loc up to statistical
//!    distance 2^−40 (the "statistically hiding mask" the reference uses for index conversion).
//!    Evaluating at (j − δ_i) mod s gives shares of the unit vector at loc (first output) and of
//!    ρ_i times it (second output). One round instead of two, and no DPF generation online.
//! 4. **The write reuses the read's location keys** (Fig. 5, step 7). The write needs
//!    ⟨Δ⟩_i·e_loc shared by P_{i±1}; P_i sends γ_i = ⟨Δ⟩_i·ρ_i^{−1}
//!    ([`crate::msgs::WriteCorrection`], 16 bytes) and the evaluators scale their second
//!    outputs by it. γ_i is uniform to them (⟨Δ⟩_i is a fresh share, ρ_i is hidden by the DPF),
//!    so it reveals nothing; the key pair for the same point is used twice, which DPF security
//!    allows (a reduction generates the other key itself). Fig. 5, step 7's loc opening is the
//!    one of Fig. 4, step 10.
//! 5. **Fewer F_Zero calls** (Fig. 5, steps 8–11). Stash shares are never sent without being
//!    re-randomised first (the replication of Fig. 4, step 8 reshares), so the zero-sharings of
//!    Fig. 5, steps 8–11 are not needed.

use doram_dpf::{HalfTree, HalfTreeKey, SinglePointDpf};
use doram_field::{Fp, Vector};
use doram_mpc::Replicated;
use doram_prim::AesPrg;

use crate::msgs::{FlagKeys, LocKeys, LocOut};
use crate::params::{Params, STAT_SEC};
use crate::tags::{NextU64, uniform_below};

/// The additive stash shares of one party: entry c was written by access c of the epoch.
#[derive(Clone, Default)]
pub struct StashShares {
    /// ⟨stash\[c\].val⟩.
    pub val: Vec<Fp>,
    /// ⟨stash\[c\].val_old⟩.
    pub old: Vec<Fp>,
}

impl std::fmt::Debug for StashShares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StashShares(len = {}, ..)", self.val.len())
    }
}

impl StashShares {
    /// Entries written so far (the access counter c).
    pub fn len(&self) -> usize {
        self.val.len()
    }

    /// Whether the stash is empty.
    pub fn is_empty(&self) -> bool {
        self.val.is_empty()
    }

    /// Ramen Fig. 5, step 3: stash\[c\] := (adr_M, val_M, val_M) (without the address, see the
    /// [module docs](self)).
    pub fn push(&mut self, val_m: Fp) {
        self.val.push(val_m);
        self.old.push(val_m);
    }
}

/// P_1's (our P0's) side of the preprocessed flag DPFs: the random points α, one per access.
#[derive(Clone, Default)]
pub struct FlagDealt {
    /// α for each access of the epoch.
    pub alphas: Vec<u64>,
}

/// Ramen Fig. 4, step 4, preprocessed at P_1 (our P0): `count` key pairs on {0, 1}^bits, each
/// 1 at a fresh random point. Returns the points and the keys for P_2 and P_3 (our P1, P2).
pub fn deal_flag_keys(
    count: usize,
    bits: u32,
    rng: &mut AesPrg,
) -> (FlagDealt, FlagKeys, FlagKeys) {
    let domain = 1usize << bits;
    let mut alphas = Vec::with_capacity(count);
    let (mut to_p1, mut to_p2) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        let alpha = rng.next_u64_le() & (domain as u64 - 1);
        let (a, b) =
            <HalfTree as SinglePointDpf<Fp>>::gen_keys(domain, alpha as usize, Fp::ONE, rng);
        alphas.push(alpha);
        to_p1.push(a);
        to_p2.push(b);
    }
    (
        FlagDealt { alphas },
        FlagKeys { keys: to_p1 },
        FlagKeys { keys: to_p2 },
    )
}

/// Ramen Fig. 4, steps 4–5 at P_2, P_3: this party's shares of flag = Σ_j v_j and
/// loc = Σ_j v_j·j, where v_j = Eval(key, L_stash\[j\] ⊕ d) and `d` = PRF(k_stash, adr) ⊕ α (the
/// received shift ⊕ the DOPRF mask R). `list` holds L_stash[0..c].
pub fn flag_and_loc(key: &HalfTreeKey<Fp>, list: &[u64], d: u64) -> (Fp, Fp) {
    let mut flag = Fp::ZERO;
    let mut loc = Fp::ZERO;
    for (j, &tag) in list.iter().enumerate() {
        // [Ramen Fig. 4, step 5] ⟨flag⟩ += Eval(k, L_stash[j] ⊕ R), ⟨loc⟩ += Eval(…)·j.
        let v = <HalfTree as SinglePointDpf<Fp>>::eval(key, (tag ^ d) as usize);
        flag += v;
        loc += v * Fp::from_u64(j as u64);
    }
    (flag, loc)
}

/// P_i's side of its preprocessed location DPFs: per access, the random point α_i and ρ_i^{−1}.
#[derive(Clone, Default)]
pub struct LocDealt {
    /// α_i per access.
    pub alphas: Vec<usize>,
    /// ρ_i^{−1} per access.
    pub rho_inv: Vec<Fp>,
}

/// Ramen Fig. 4, step 10(c) and Fig. 5, step 7(d), preprocessed at P_i: `count` key pairs on
/// [0, s), each with value (1, ρ) at a fresh random point α, ρ ≠ 0. Returns the points and
/// ρ^{−1}, the keys for the successor and the keys for the predecessor.
pub fn deal_loc_keys(count: usize, s: usize, rng: &mut AesPrg) -> (LocDealt, LocKeys, LocKeys) {
    let mut dealt = LocDealt::default();
    let (mut to_next, mut to_prev) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        let alpha = uniform_below(rng, s as u64) as usize;
        let rho = loop {
            let r: Fp = rng.random();
            if !r.is_zero() {
                break r;
            }
        };
        let beta = Vector::new([Fp::ONE, rho]);
        let (a, b) = <HalfTree as SinglePointDpf<LocOut>>::gen_keys(s, alpha, beta, rng);
        dealt.alphas.push(alpha);
        // ρ ≠ 0, so the inverse exists.
        dealt.rho_inv.push(rho.inverse_or_zero());
        to_next.push(a);
        to_prev.push(b);
    }
    (dealt, LocKeys { keys: to_next }, LocKeys { keys: to_prev })
}

/// Ramen Fig. 4, step 10(b), generator side: ⟨loc⟩_i − α + s·(μ + 1), with the fresh share
/// `share`, this access's point `alpha` and a mask μ ← [0, 2^40) from `rng`.
pub fn masked_loc_share(share: Fp, alpha: usize, params: &Params, rng: &mut AesPrg) -> Fp {
    let s = params.stash() as u64;
    let mu = rng.next_u64_le() >> (64 - STAT_SEC);
    share - Fp::from_u64(alpha as u64) + Fp::from_u64(s) * Fp::from_u64(mu + 1)
}

/// Ramen Fig. 4, step 10(b), evaluator side: the shift δ = X mod s from the opened
/// X = loc − α + s·(μ + 1). (X is below 2^64 in an honest run; any other value only yields a
/// wrong shift, never a panic.)
pub fn loc_shift(opened: Fp, s: usize) -> usize {
    (opened.to_u128() % s as u128) as usize
}

/// Ramen Fig. 4, step 10(d) and Fig. 5, step 7(e): this evaluator's shares of the unit vector
/// at loc and of ρ times it, for the stash entries 0..len (len ≤ s), from a key for the point α
/// and the shift δ = (loc − α) mod s: entry j is the key's output at (j − δ) mod s.
pub fn shifted_outputs(
    key: &HalfTreeKey<LocOut>,
    shift: usize,
    s: usize,
    len: usize,
) -> Vec<LocOut> {
    let mut all = vec![LocOut::ZERO; s];
    <HalfTree as SinglePointDpf<LocOut>>::eval_all_into(key, &mut all);
    (0..len).map(|j| all[(j + s - shift) % s]).collect()
}

/// Ramen Fig. 4, step 10(d), both instances this party evaluates: its share of
/// val_st = stash\[loc\].val. `from_next` are its outputs for the successor's DPF, which it
/// evaluates on the component x_{i−1} it shares with the predecessor; `from_prev` those for
/// the predecessor's DPF, evaluated on its own component x_i.
pub fn read_value(from_next: &[LocOut], from_prev: &[LocOut], stash: &[Replicated<Fp>]) -> Fp {
    let mut acc = doram_field::fp::DotAccumulator::new();
    for ((n, p), x) in from_next.iter().zip(from_prev).zip(stash) {
        acc.add_product(n[0], x.prev());
        acc.add_product(p[0], x.own());
    }
    acc.finish()
}

/// Ramen Fig. 5, steps 7(e) and 9: adds γ_{i+1}·(second outputs of the successor's DPF) and
/// γ_{i−1}·(second outputs of the predecessor's DPF) to this party's stash shares.
pub fn apply_write(
    val: &mut [Fp],
    from_next: &[LocOut],
    from_prev: &[LocOut],
    gamma_next: Fp,
    gamma_prev: Fp,
) {
    for ((v, n), p) in val.iter_mut().zip(from_next).zip(from_prev) {
        *v += gamma_next * n[1] + gamma_prev * p[1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;

    #[test]
    fn flag_lookup_finds_the_tag() {
        let mut rng = AesPrg::new(Seed([1; 16]));
        let bits = 20;
        let (dealt, k1, k2) = deal_flag_keys(3, bits, &mut rng);
        let list = [5u64, 77, 1000, 123_456];
        let r_mask = 0x5_5555;
        for (c, &query) in [77u64, 9, 123_456].iter().enumerate() {
            // P0's masked DOPRF output, its shift, and what P1, P2 compute from it.
            let a = query ^ r_mask;
            let shift = a ^ dealt.alphas[c];
            let d = shift ^ r_mask;
            let (f1, l1) = flag_and_loc(&k1.keys[c], &list, d);
            let (f2, l2) = flag_and_loc(&k2.keys[c], &list, d);
            let found = list.iter().position(|&t| t == query);
            assert_eq!(f1 + f2, Fp::from_u64(found.is_some() as u64));
            assert_eq!(l1 + l2, Fp::from_u64(found.unwrap_or(0) as u64));
        }
    }

    #[test]
    fn location_dpfs_shift() {
        let mut rng = AesPrg::new(Seed([2; 16]));
        let params = Params::new(1000).unwrap();
        let s = params.stash();
        let (dealt, to_next, to_prev) = deal_loc_keys(2, s, &mut rng);
        for c in 0..2 {
            for loc in [0, 5, s - 1] {
                let x =
                    masked_loc_share(Fp::from_u64(loc as u64), dealt.alphas[c], &params, &mut rng);
                assert!(x.to_u128() < 1 << 64);
                let shift = loc_shift(x, s);
                let a = shifted_outputs(&to_next.keys[c], shift, s, s);
                let b = shifted_outputs(&to_prev.keys[c], shift, s, s);
                for j in 0..s {
                    let v = a[j] + b[j];
                    let rho = dealt.rho_inv[c].inverse_or_zero();
                    let (e, w) = if j == loc {
                        (Fp::ONE, rho)
                    } else {
                        (Fp::ZERO, Fp::ZERO)
                    };
                    assert_eq!((v[0], v[1]), (e, w), "loc {loc}, j {j}");
                }
            }
        }
    }
}
