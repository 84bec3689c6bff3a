//! Eviction's pick rule leaks nothing to D (notes §5.6, the caveat): over the uniformly random
//! order of a bucket's slots (π_j) and E's offsets, the two positions D sees are a uniformly
//! random pair of slots whatever the bucket holds. Checked exactly, by enumeration, for small
//! buckets of every composition; the paper's two-offset rule is shown not to be.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use doram_fjkw15::plain::{f2et, f2et_uniform, f2ft, f2ft_uniform};

/// Every arrangement of `m` moveable, `e` empty and `w − m − e` other slots.
fn arrangements(w: usize, m: usize, e: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = vec![2u8; w];
    fn rec(cur: &mut Vec<u8>, at: usize, m: usize, e: usize, out: &mut Vec<Vec<u8>>) {
        if at == cur.len() {
            if m == 0 && e == 0 {
                out.push(cur.clone());
            }
            return;
        }
        let rest = cur.len() - at;
        if m + e > rest {
            return;
        }
        for (kind, left) in [(0u8, m), (1, e), (2, rest - m - e)] {
            if left == 0 {
                continue;
            }
            cur[at] = kind;
            let (m2, e2) = match kind {
                0 => (m - 1, e),
                1 => (m, e - 1),
                _ => (m, e),
            };
            rec(cur, at + 1, m2, e2, out);
        }
        cur[at] = 2;
    }
    rec(&mut cur, 0, m, e, &mut out);
    out
}

/// A pick rule over all its offsets: the picks for a bucket's moveable and empty slots.
type Rule<'a> = &'a dyn Fn(&[bool], &[bool]) -> Vec<Option<[usize; 2]>>;

/// How often each unordered pair comes out of `rule` over all arrangements and offsets.
fn pair_counts(w: usize, m: usize, e: usize, rule: Rule<'_>) -> BTreeMap<(usize, usize), u64> {
    let mut counts = BTreeMap::new();
    for a in arrangements(w, m, e) {
        let moveable: Vec<bool> = a.iter().map(|&k| k == 0).collect();
        let empty: Vec<bool> = a.iter().map(|&k| k == 1).collect();
        for p in rule(&moveable, &empty) {
            let [x, y] = p.unwrap();
            *counts.entry((x.min(y), x.max(y))).or_insert(0) += 1;
        }
    }
    counts
}

fn uniform_rule(w: usize, leaf: bool) -> impl Fn(&[bool], &[bool]) -> Vec<Option<[usize; 2]>> {
    move |moveable, empty| {
        let mut out = Vec::new();
        for l0 in 0..w {
            for l1 in 0..w {
                for l2 in (0..w).filter(|&l| l != l1) {
                    out.push(if leaf {
                        f2et_uniform(empty, [l0, l1, l2])
                    } else {
                        f2ft_uniform(moveable, empty, [l0, l1, l2])
                    });
                }
            }
        }
        out
    }
}

fn is_uniform(counts: &BTreeMap<(usize, usize), u64>, w: usize) -> bool {
    counts.len() == w * (w - 1) / 2 && counts.values().all(|&c| c == counts[&(0, 1)])
}

#[test]
fn eviction_picks_are_a_uniform_pair_for_every_bucket_composition() {
    for w in [4, 6, 7] {
        for m in 0..=w {
            for e in 0..=w - m {
                if m + e < 2 {
                    continue;
                }
                let counts = pair_counts(w, m, e, &uniform_rule(w, false));
                assert!(
                    is_uniform(&counts, w),
                    "F2FT, w = {w}, {m} moveable, {e} empty: {counts:?}"
                );
            }
            // The leaf's rule: empty slots only.
            if m >= 2 {
                let counts = pair_counts(w, 0, m, &uniform_rule(w, true));
                assert!(
                    is_uniform(&counts, w),
                    "F2ET, w = {w}, {m} empty: {counts:?}"
                );
            }
        }
    }
}

#[test]
fn the_papers_two_offset_rule_is_not_uniform() {
    let w = 6;
    let paper = |moveable: &[bool], empty: &[bool]| {
        let mut out = Vec::new();
        for l0 in 0..w {
            for l1 in 0..w {
                out.push(f2ft(moveable, empty, [l0, l1]));
            }
        }
        out
    };
    // Every slot moveable: adjacent pairs come out more often than others.
    let all = pair_counts(w, w, 0, &paper);
    assert!(all[&(0, 1)] > all[&(0, 2)], "{all:?}");
    // One moveable slot among empties: the empty slot after it is favoured.
    let one = pair_counts(w, 1, w - 1, &paper);
    assert!(!is_uniform(&one, w), "{one:?}");
    let leaf = |_: &[bool], empty: &[bool]| {
        (0..w * w)
            .map(|k| f2et(empty, [k / w, k % w]))
            .collect::<Vec<_>>()
    };
    assert!(!is_uniform(&pair_counts(w, 0, w, &leaf), w));
}
