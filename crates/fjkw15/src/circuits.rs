//! The circuits of Eviction (FJKW15 Alg. 5, steps 2–3; notes §5.6): F2FT, which picks two
//! moveable-or-empty slots of an internal bucket, and F2ET, which picks two empty slots of the
//! leaf node. [`f2ft`] and [`f2et`] follow the paper's rule
//! ([`plain::f2ft`](crate::plain::f2ft)); Eviction garbles [`f2ft_uniform`] and
//! [`f2et_uniform`], whose pick 2 restarts from a third offset when the second lands on pick 1
//! ([`plain::f2ft_uniform`](crate::plain::f2ft_uniform)), so that the pair D sees is uniformly
//! random whatever the bucket holds (2w more AND gates).
//!
//! Every input is a garbler input (E knows both labels of every input wire; see
//! [`crate::gc`] for how C's shares reach the evaluator D). Per slot ℓ the inputs are E's and
//! C's shares of fb and, for F2FT, of the direction bit — E's already XORed with
//! 1 ⊕ L_i\[j+1\] (Alg. 5, step 2: B = s_E\[L\[j+1\]\] ⊕ 1 ⊕ L_i\[j+1\]), so that
//! s_C ⊕ B = 1 exactly when the tuple's label agrees with the path. Then the offsets λ_0, λ_1
//! as one-hot vectors, E's private inputs (hidden from D, notes Q7). The output is one bit per
//! slot: two 1s, or fewer when the bucket overflows.
//!
//! **Cost.** A scan for the first candidate cyclically at or after a one-hot start walks the
//! slots twice with one "searching" flag and the one-hot result updated by XOR, one AND gate
//! per slot and pass. F2FT: w (moveable) + 4 scans (2w each) + 2w (excluding pick 1) + 2w (two
//! multiplexers) = 13w AND gates at most, below the "17 non-xor gates per bucket entry" of
//! FJKW15 §1 (a few fold into constants at the start of each scan). F2ET over n = 4w slots:
//! 2 scans + n (excluding pick 1) + 2n (multiplexers, whose preferred side is constant and
//! folds) ≤ 5n.

use doram_twopc::{Bit, Builder, Circuit};

/// Inputs per slot of F2FT: s_E\[fb\], s_C\[fb\], B, s_C\[L\[j+1\]\].
pub const F2FT_SLOT_INPUTS: usize = 4;

/// Inputs per slot of F2ET: s_E\[fb\], s_C\[fb\].
pub const F2ET_SLOT_INPUTS: usize = 2;

/// The one-hot vector of the first `cand` slot cyclically at or after the one-hot `start`,
/// and whether there was one. One flag, "searching", carries the scan: the start sets it (by
/// XOR: start is one-hot), a hit is `cand ∧ searching` (the only AND of a slot), and a hit
/// clears it (by XOR: a hit implies searching), so a scan costs one AND per slot per pass.
fn first_from(b: &mut Builder, cand: &[Bit], start: &[Bit]) -> (Vec<Bit>, Bit) {
    let n = cand.len();
    let mut picks = vec![Bit::ZERO; n];
    let (mut searching, mut found) = (Bit::ZERO, Bit::ZERO);
    for p in 0..2 * n {
        let l = p % n;
        if p < n {
            searching = b.xor(searching, start[l]);
        }
        let hit = b.and(cand[l], searching);
        // At most one hit overall: XOR records it and ends the search. `found` is the XOR of
        // the hits rather than ¬searching, so that it folds to a constant with `cand`.
        picks[l] = b.xor(picks[l], hit);
        searching = b.xor(searching, hit);
        found = b.xor(found, hit);
    }
    (picks, found)
}

/// Pick rule: the first `preferred` slot from `start`, else the first `fallback` one.
fn pick(b: &mut Builder, preferred: &[Bit], fallback: &[Bit], start: &[Bit]) -> Vec<Bit> {
    let (p, found) = first_from(b, preferred, start);
    let (f, _) = first_from(b, fallback, start);
    p.iter()
        .zip(&f)
        .map(|(&p, &f)| b.mux_bit(found, f, p))
        .collect()
}

/// `bits` with the slots of the one-hot `first` cleared.
fn without(b: &mut Builder, bits: &[Bit], first: &[Bit]) -> Vec<Bit> {
    bits.iter()
        .zip(first)
        .map(|(&x, &f)| {
            let nf = b.not(f);
            b.and(x, nf)
        })
        .collect()
}

/// Both picks as one output vector (they are distinct, so XOR is their union).
fn two_picks(
    b: &mut Builder,
    preferred: &[Bit],
    fallback: &[Bit],
    starts: [&[Bit]; 2],
) -> Vec<Bit> {
    let first = pick(b, preferred, fallback, starts[0]);
    with_second(b, preferred, fallback, &first, starts[1])
}

/// `first` and the pick other than it from `start`, as one output vector (they are distinct,
/// so XOR is their union).
fn with_second(
    b: &mut Builder,
    preferred: &[Bit],
    fallback: &[Bit],
    first: &[Bit],
    start: &[Bit],
) -> Vec<Bit> {
    let pref2 = without(b, preferred, first);
    let fall2 = without(b, fallback, first);
    let second = pick(b, &pref2, &fall2, start);
    first
        .iter()
        .zip(&second)
        .map(|(&x, &y)| b.xor(x, y))
        .collect()
}

/// Both picks by the rule of [`plain::f2ft_uniform`](crate::plain::f2ft_uniform): as
/// [`two_picks`], but pick 2's scan starts at λ_2 instead of λ_1 when λ_1 is pick 1's slot.
/// Whether it is costs one AND per slot (both are one-hot, so the XOR of the products is their
/// OR), the choice of start one more.
fn two_picks_uniform(
    b: &mut Builder,
    preferred: &[Bit],
    fallback: &[Bit],
    starts: [&[Bit]; 3],
) -> Vec<Bit> {
    let first = pick(b, preferred, fallback, starts[0]);
    let mut same = Bit::ZERO;
    for (&l, &f) in starts[1].iter().zip(&first) {
        let hit = b.and(l, f);
        same = b.xor(same, hit);
    }
    let start2: Vec<Bit> = starts[1]
        .iter()
        .zip(starts[2])
        .map(|(&l1, &l2)| b.mux_bit(same, l1, l2))
        .collect();
    with_second(b, preferred, fallback, &first, &start2)
}

/// The pick rule a circuit follows: the paper's two offsets, or the uniform rule's three.
#[derive(Clone, Copy)]
enum Rule {
    Paper,
    Uniform,
}

impl Rule {
    fn offsets(self) -> usize {
        match self {
            Rule::Paper => 2,
            Rule::Uniform => 3,
        }
    }

    /// Both picks from the offsets' one-hot inputs `starts`.
    fn picks(self, b: &mut Builder, pref: &[Bit], fall: &[Bit], starts: &[Vec<Bit>]) -> Vec<Bit> {
        match self {
            Rule::Paper => two_picks(b, pref, fall, [&starts[0], &starts[1]]),
            Rule::Uniform => two_picks_uniform(b, pref, fall, [&starts[0], &starts[1], &starts[2]]),
        }
    }
}

/// F2FT over `w` slots by `rule`.
fn f2ft_by(w: usize, rule: Rule) -> Circuit {
    let mut b = Builder::new();
    let inputs = b.garbler_bits(F2FT_SLOT_INPUTS * w);
    let starts: Vec<Vec<Bit>> = (0..rule.offsets()).map(|_| b.garbler_bits(w)).collect();
    let mut moveable = Vec::with_capacity(w);
    let mut empty = Vec::with_capacity(w);
    for slot in inputs.chunks_exact(F2FT_SLOT_INPUTS) {
        let fb = b.xor(slot[0], slot[1]);
        let agree = b.xor(slot[2], slot[3]);
        moveable.push(b.and(fb, agree));
        empty.push(b.not(fb));
    }
    let out = rule.picks(&mut b, &moveable, &empty, &starts);
    b.output_bits(&out);
    b.finish().expect("a circuit with inputs")
}

/// F2ET over `n` slots by `rule`.
fn f2et_by(n: usize, rule: Rule) -> Circuit {
    let mut b = Builder::new();
    let inputs = b.garbler_bits(F2ET_SLOT_INPUTS * n);
    let starts: Vec<Vec<Bit>> = (0..rule.offsets()).map(|_| b.garbler_bits(n)).collect();
    let empty: Vec<Bit> = inputs
        .chunks_exact(F2ET_SLOT_INPUTS)
        .map(|slot| {
            let fb = b.xor(slot[0], slot[1]);
            b.not(fb)
        })
        .collect();
    let none = vec![Bit::ZERO; n];
    let out = rule.picks(&mut b, &none, &empty, &starts);
    b.output_bits(&out);
    b.finish().expect("a circuit with inputs")
}

/// F2FT by the rule with exactly uniform picks
/// ([`plain::f2ft_uniform`](crate::plain::f2ft_uniform)), the one Eviction garbles: inputs as
/// [`f2ft`], then λ_0, λ_1 and λ_2 one-hot (λ_2 ≠ λ_1); outputs: w bits. 15w AND gates at
/// most.
///
/// # Panics
/// Never for w ≥ 1.
pub fn f2ft_uniform(w: usize) -> Circuit {
    f2ft_by(w, Rule::Uniform)
}

/// F2ET by the rule with exactly uniform picks
/// ([`plain::f2et_uniform`](crate::plain::f2et_uniform)), the one Eviction garbles: inputs as
/// [`f2et`], then λ_0, λ_1 and λ_2 one-hot (λ_2 ≠ λ_1); outputs: n bits.
///
/// # Panics
/// Never for n ≥ 1.
pub fn f2et_uniform(n: usize) -> Circuit {
    f2et_by(n, Rule::Uniform)
}

/// F2FT for a bucket of `w` slots by the paper's rule (inputs: [`F2FT_SLOT_INPUTS`] per slot,
/// slot by slot, then λ_0 and λ_1 one-hot; outputs: w bits).
///
/// # Panics
/// Never for w ≥ 1 (the circuit has inputs, so its outputs are wires).
pub fn f2ft(w: usize) -> Circuit {
    f2ft_by(w, Rule::Paper)
}

/// F2ET for a leaf node of `n` = 4w slots by the paper's rule (inputs: [`F2ET_SLOT_INPUTS`]
/// per slot, then λ_0 and λ_1 one-hot; outputs: n bits).
///
/// # Panics
/// Never for n ≥ 1.
pub fn f2et(n: usize) -> Circuit {
    f2et_by(n, Rule::Paper)
}

/// The one-hot encoding of `start` among `n` slots.
pub fn one_hot(start: usize, n: usize) -> Vec<bool> {
    (0..n).map(|k| k == start).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::plain;
    use rand::{Rng, SeedableRng};

    /// The output vector of a plaintext pick, or of an overflow (fewer than two 1s).
    fn ones(out: &[bool]) -> Vec<usize> {
        (0..out.len()).filter(|&k| out[k]).collect()
    }

    #[test]
    fn f2ft_matches_the_plaintext_rule_and_costs_13w() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(3);
        for w in [2, 3, 5, 8, 32] {
            let c = f2ft(w);
            assert!(c.and_gates() <= 13 * w, "w = {w}: {}", c.and_gates());
            if w == 32 {
                // Constants fold in the first slots of each scan.
                assert_eq!(c.and_gates(), 13 * 32);
            }
            for _ in 0..200 {
                let density = rng.random_range(0.0..1.0);
                let fb: Vec<bool> = (0..w).map(|_| rng.random_bool(density)).collect();
                let agree: Vec<bool> = (0..w).map(|_| rng.random()).collect();
                let lambda = [rng.random_range(0..w), rng.random_range(0..w)];
                let mut input = Vec::new();
                for l in 0..w {
                    let (e_fb, e_b): (bool, bool) = (rng.random(), rng.random());
                    input.extend([e_fb, e_fb ^ fb[l], e_b, e_b ^ agree[l]]);
                }
                input.extend(one_hot(lambda[0], w));
                input.extend(one_hot(lambda[1], w));
                let out = c.eval_plain(&input, &[]).unwrap();
                let moveable: Vec<bool> = (0..w).map(|l| fb[l] && agree[l]).collect();
                let empty: Vec<bool> = fb.iter().map(|f| !f).collect();
                match plain::f2ft(&moveable, &empty, lambda) {
                    Some(p) => assert_eq!(ones(&out), {
                        let mut v = p.to_vec();
                        v.sort();
                        v
                    }),
                    None => assert!(ones(&out).len() < 2),
                }
            }
        }
    }

    #[test]
    fn uniform_circuits_match_the_plaintext_rule_and_cost_15w() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(23);
        for w in [2usize, 3, 5, 8, 32] {
            let ft = f2ft_uniform(w);
            assert!(ft.and_gates() <= 15 * w, "w = {w}: {}", ft.and_gates());
            let et = f2et_uniform(w);
            assert!(et.and_gates() <= 7 * w, "n = {w}: {}", et.and_gates());
            for _ in 0..200 {
                let fb: Vec<bool> = (0..w).map(|_| rng.random_bool(0.6)).collect();
                let agree: Vec<bool> = (0..w).map(|_| rng.random_bool(0.4)).collect();
                let l1 = rng.random_range(0..w);
                let lambda = [
                    rng.random_range(0..w),
                    l1,
                    (l1 + 1 + rng.random_range(0..w - 1)) % w,
                ];
                let mut input = Vec::new();
                for l in 0..w {
                    let (e_fb, e_dir) = (rng.random_bool(0.5), rng.random_bool(0.5));
                    input.extend([e_fb, fb[l] ^ e_fb, e_dir, agree[l] ^ e_dir]);
                }
                for &x in &lambda {
                    input.extend(one_hot(x, w));
                }
                let moveable: Vec<bool> = fb.iter().zip(&agree).map(|(&f, &a)| f && a).collect();
                let empty: Vec<bool> = fb.iter().map(|&f| !f).collect();
                let got = ft.eval_plain(&input, &[]).unwrap();
                match plain::f2ft_uniform(&moveable, &empty, lambda) {
                    Some(p) => assert_eq!(ones(&got), sorted(p), "w = {w}"),
                    None => assert!(ones(&got).len() < 2),
                }
                let mut input = Vec::new();
                for &f in &fb {
                    let e_fb = rng.random_bool(0.5);
                    input.extend([e_fb, f ^ e_fb]);
                }
                for &x in &lambda {
                    input.extend(one_hot(x, w));
                }
                let got = et.eval_plain(&input, &[]).unwrap();
                match plain::f2et_uniform(&empty, lambda) {
                    Some(p) => assert_eq!(ones(&got), sorted(p), "w = {w}"),
                    None => assert!(ones(&got).len() < 2),
                }
            }
        }
    }

    fn sorted(p: [usize; 2]) -> Vec<usize> {
        let mut v = p.to_vec();
        v.sort_unstable();
        v
    }

    #[test]
    fn f2et_matches_the_plaintext_rule() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(4);
        for n in [2, 4, 9, 128] {
            let c = f2et(n);
            assert!(c.and_gates() <= 5 * n, "n = {n}: {}", c.and_gates());
            for _ in 0..100 {
                let density = rng.random_range(0.5..1.0);
                let fb: Vec<bool> = (0..n).map(|_| rng.random_bool(density)).collect();
                let lambda = [rng.random_range(0..n), rng.random_range(0..n)];
                let mut input = Vec::new();
                for &f in &fb {
                    let e: bool = rng.random();
                    input.extend([e, e ^ f]);
                }
                input.extend(one_hot(lambda[0], n));
                input.extend(one_hot(lambda[1], n));
                let out = c.eval_plain(&input, &[]).unwrap();
                let empty: Vec<bool> = fb.iter().map(|f| !f).collect();
                match plain::f2et(&empty, lambda) {
                    Some(p) => assert_eq!(ones(&out), {
                        let mut v = p.to_vec();
                        v.sort();
                        v
                    }),
                    None => assert!(ones(&out).len() < 2),
                }
            }
        }
    }
}
