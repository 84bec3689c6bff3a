//! Beneš networks: the switch settings that route a permutation ([`route`]), the stages' swap
//! bits ([`stage_bits`]) and their switches ([`switches`]), and the network applied in the
//! clear ([`apply_plain`]).
//!
//! # The network
//! For n = 2^k positions, 2k − 1 stages; stage j conditionally swaps every pair of positions
//! `(x, x | 2^b)` with bit b of x clear, where b runs k − 1, …, 1, 0, 1, …, k − 1
//! ([`stage_bits`]). Any permutation can be routed (Beneš 1964); [`route`] finds the switch
//! settings by the looping algorithm, O(n log n). Running the stages backwards with the same
//! settings applies the inverse.

use crate::TwopcError;

/// The bit each stage of the network on 2^k positions swaps across.
pub fn stage_bits(k: u32) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    (1..k).rev().chain(0..k).collect()
}

/// The switch settings that move the entry at position x to `dest[x]`, stage by stage (each
/// stage's switches in increasing order of their lower position, as [`switches`] lists them).
///
/// # Errors
/// [`TwopcError::ApiMisuse`] unless `dest` is a permutation of `0..2^k`.
pub fn route(dest: &[usize]) -> Result<Vec<Vec<bool>>, TwopcError> {
    let n = dest.len();
    if !n.is_power_of_two() {
        return Err(TwopcError::ApiMisuse(
            "a Beneš network needs a power-of-two size",
        ));
    }
    let mut seen = vec![false; n];
    for &d in dest {
        if d >= n || std::mem::replace(&mut seen[d], true) {
            return Err(TwopcError::ApiMisuse("not a permutation"));
        }
    }
    Ok(route_checked(dest))
}

fn route_checked(dest: &[usize]) -> Vec<Vec<bool>> {
    let n = dest.len();
    if n <= 1 {
        return Vec::new();
    }
    if n == 2 {
        return vec![vec![dest[0] == 1]];
    }
    let half = n / 2;
    let mut inv = vec![0; n];
    for (x, &y) in dest.iter().enumerate() {
        inv[y] = x;
    }
    // The looping algorithm: the two entries of an input switch go to different halves, and
    // so do the two entries bound for an output switch.
    let mut side: Vec<Option<bool>> = vec![None; n];
    for start in 0..half {
        if side[start].is_some() {
            continue;
        }
        let mut x = start;
        loop {
            side[x] = Some(false);
            side[x ^ half] = Some(true);
            let next = inv[dest[x ^ half] ^ half];
            if side[next].is_some() {
                break;
            }
            x = next;
        }
    }
    let side: Vec<bool> = side.into_iter().map(|s| s.unwrap_or(false)).collect();
    let first: Vec<bool> = (0..half).map(|x| side[x]).collect();
    let last: Vec<bool> = (0..half).map(|y| side[inv[y]]).collect();
    let mut sub = [vec![0; half], vec![0; half]];
    for x in 0..n {
        sub[usize::from(side[x])][x & (half - 1)] = dest[x] & (half - 1);
    }
    let top = route_checked(&sub[0]);
    let bottom = route_checked(&sub[1]);
    let mut out = Vec::with_capacity(top.len() + 2);
    out.push(first);
    for (t, b) in top.into_iter().zip(bottom) {
        out.push(t.into_iter().chain(b).collect());
    }
    out.push(last);
    out
}

/// The lower positions of the switches of stage bit `b` on n positions, in increasing order:
/// the x with bit b clear, each paired with `x | 2^b`.
pub fn switches(n: usize, b: u32) -> impl Iterator<Item = usize> {
    (0..n).filter(move |x| (x >> b) & 1 == 0)
}

/// Applies the network with settings `controls` (from [`route`]) in the clear (`inverse`:
/// the stages backwards).
pub fn apply_plain<T>(values: &mut [T], controls: &[Vec<bool>], inverse: bool) {
    let k = values.len().trailing_zeros();
    let bits = stage_bits(k);
    let mut stages: Vec<(u32, &Vec<bool>)> = bits.into_iter().zip(controls).collect();
    if inverse {
        stages.reverse();
    }
    for (b, c) in stages {
        for (x, &swap) in switches(values.len(), b).zip(c) {
            if swap {
                values.swap(x, x | (1 << b));
            }
        }
    }
}
