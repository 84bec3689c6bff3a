//! Uniform sampling helpers: integers below a bound and permutations.

use rand_core::RngCore;

/// A uniform value below `bound` (> 0), by rejection.
///
/// # Panics
/// If `bound` is 0 (a caller's bug).
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    assert!(bound > 0, "no value is below 0");
    if bound.is_power_of_two() {
        return rng.next_u64() & (bound - 1);
    }
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// A uniformly random permutation of `0..n` (Fisher–Yates): `p[j]` is the image of `j`.
pub fn permutation<R: RngCore + ?Sized>(n: usize, rng: &mut R) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for j in (1..n).rev() {
        let k = uniform_below(rng, j as u64 + 1) as usize;
        p.swap(j, k);
    }
    p
}

/// The inverse of the permutation `p`.
pub fn inverse(p: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; p.len()];
    for (j, &pj) in p.iter().enumerate() {
        inv[pj] = j;
    }
    inv
}

/// Whether `p` is a permutation of `0..p.len()`.
pub fn is_permutation(p: &[usize]) -> bool {
    let mut seen = vec![false; p.len()];
    p.iter()
        .all(|&x| x < p.len() && !std::mem::replace(&mut seen[x], true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn permutations_are_permutations_and_cover_all_orders() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..600 {
            let p = permutation(3, &mut rng);
            assert!(is_permutation(&p));
            let inv = inverse(&p);
            assert!((0..3).all(|j| inv[p[j]] == j));
            seen.insert(p);
        }
        assert_eq!(seen.len(), 6);
        assert!(!is_permutation(&[0, 0]));
        assert!(!is_permutation(&[2, 0]));
        assert!(permutation(0, &mut rng).is_empty());
        assert!((0..100).all(|_| uniform_below(&mut rng, 7) < 7));
    }
}
