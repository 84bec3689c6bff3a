//! Legendre symbol: known-answer vectors, agreement of the two algorithms, and structure.

use doram_field::legendre::jacobi_vartime;
use doram_field::{Fp, legendre_batch_vartime};
use num_bigint::BigUint;
use proptest::prelude::*;

const P: u128 = 0xffff_ffff_ffff_ffe4_0000_0000_0000_0001;

/// (input in decimal, expected symbol).
const KAT: [(&str, i8); 20] = [
    ("0", 0),
    ("1", 1),
    ("2", 1),
    ("35122421919063474048031845924062067909", 1),
    ("61212839083344548205786527436063227216", 1),
    ("108886203898319005744174078164860101674", 1),
    ("112160854746794802432264095652132979488", -1),
    ("142714630766673706362679167860844911107", 1),
    ("144328356835331043954321695814395383527", 1),
    ("149714699338443771695584577213555322897", -1),
    ("162837698983268132975860461485836731565", 1),
    ("185920817468766357617527011469055960606", -1),
    ("207479253861772423381237297118907360324", 1),
    ("220976947578297059190439898234224764278", 1),
    ("225624737240143795963751467909724695007", 1),
    ("230022448309092634504744292546382561960", -1),
    ("284649339713848098295138218361935151979", -1),
    ("293856596737329296797721884860187281734", 1),
    ("315840344961299616831836711745928570660", 1),
    ("340282366920938462946865773367900766208", 1),
];

fn kat() -> Vec<(Fp, i8)> {
    KAT.iter()
        .map(|(s, l)| {
            (
                s.parse::<Fp>().expect("KAT input is a canonical element"),
                *l,
            )
        })
        .collect()
}

#[test]
fn known_answers_euler() {
    for (x, want) in kat() {
        assert_eq!(x.legendre(), want, "legendre({x})");
    }
}

#[test]
fn known_answers_vartime() {
    for (x, want) in kat() {
        assert_eq!(x.legendre_vartime(), want, "legendre_vartime({x})");
    }
}

#[test]
fn known_answers_batch() {
    let (xs, want): (Vec<Fp>, Vec<i8>) = kat().into_iter().unzip();
    let mut out = vec![0i8; xs.len()];
    legendre_batch_vartime(&xs, &mut out);
    assert_eq!(out, want);
}

#[test]
fn batch_of_every_length_up_to_50() {
    // Deterministic companion of the proptest below: every remainder size, each element at
    // every lane position.
    let pool: Vec<Fp> = kat()
        .into_iter()
        .map(|(x, _)| x)
        .chain((0..60u64).map(|i| Fp::from_u64(i * i + 3) * Fp::from_i64(-7)))
        .collect();
    for n in 0..=50 {
        for shift in [0, 5, 13] {
            let xs: Vec<Fp> = pool.iter().cycle().skip(shift).take(n).copied().collect();
            let mut out = vec![9i8; n];
            legendre_batch_vartime(&xs, &mut out);
            let want: Vec<i8> = xs.iter().map(|x| x.legendre()).collect();
            assert_eq!(out, want, "length {n}, shift {shift}");
        }
    }
}

#[test]
#[should_panic(expected = "different lengths")]
fn batch_rejects_mismatched_lengths() {
    legendre_batch_vartime(&[Fp::ONE; 3], &mut [0i8; 2]);
}

#[test]
fn known_answers_by_oracle() {
    // The vectors themselves, checked with Euler's criterion on big integers.
    let p = BigUint::from(P);
    let e = BigUint::from((P - 1) / 2);
    for (x, want) in kat() {
        let r = BigUint::from(x.to_u128()).modpow(&e, &p);
        let got = if r == BigUint::from(0u32) {
            0
        } else if r == BigUint::from(1u32) {
            1
        } else {
            assert_eq!(r, BigUint::from(P - 1));
            -1
        };
        assert_eq!(got, want, "oracle({x})");
    }
}

#[test]
fn small_values_and_generator() {
    // p ≡ 1 (mod 8): −1 and 2 are squares; 7 is a non-residue.
    assert_eq!(Fp::from_i64(-1).legendre_vartime(), 1);
    assert_eq!(Fp::from_u64(2).legendre_vartime(), 1);
    assert_eq!(Fp::GENERATOR.legendre_vartime(), -1);
    assert_eq!(Fp::GENERATOR.legendre(), -1);
    for v in 0..2000u64 {
        let x = Fp::from_u64(v);
        assert_eq!(x.legendre_vartime(), x.legendre(), "{v}");
        let y = -x;
        assert_eq!(y.legendre_vartime(), y.legendre(), "-{v}");
    }
}

/// Elements biased towards the edges: 0, ±1, small values, values near 2^64 and 2^127, values
/// sharing p's low word (x ≡ 1 mod 2^64), and uniformly random ones.
fn edgy() -> impl Strategy<Value = Fp> {
    prop_oneof![
        prop_oneof![Just(0u128), Just(1), Just(2), Just(P - 1), Just(P - 2)]
            .prop_map(Fp::from_u128),
        (0u128..1 << 16).prop_map(Fp::from_u128),
        (0u128..1 << 16).prop_map(|d| Fp::from_u128(P - 1 - d)),
        (0u128..1 << 20).prop_map(|d| Fp::from_u128(((1 << 64) + d - (1 << 19)) % P)),
        (0u128..1 << 20).prop_map(|d| Fp::from_u128((1 << 127) + d - (1 << 19))),
        (0u128..(P >> 64)).prop_map(|h| Fp::from_u128(h << 64 | 1)),
        any::<u128>().prop_map(Fp::from_u128),
        any::<u128>().prop_map(Fp::from_u128),
    ]
}

/// Batches of every interesting length: empty, shorter than one lock-step group, around the
/// group size of 16 and the scalar-remainder threshold, and longer ones.
fn batch() -> impl Strategy<Value = Vec<Fp>> {
    prop_oneof![
        prop::sample::select(vec![
            0usize, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 19, 20, 31, 32, 33, 100
        ])
        .prop_flat_map(|n| prop::collection::vec(edgy(), n)),
        prop::collection::vec(edgy(), 0..300),
    ]
}

fn nonzero() -> impl Strategy<Value = Fp> {
    prop_oneof![
        (1u128..1 << 70).prop_map(Fp::from_u128),
        (0u128..1 << 40).prop_map(|d| Fp::from_u128(P - 1 - d)),
        any::<u128>().prop_map(Fp::from_u128),
    ]
    .prop_filter("non-zero", |x| !x.is_zero())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn vartime_matches_euler(x in any::<u128>()) {
        let x = Fp::from_u128(x);
        prop_assert_eq!(x.legendre_vartime(), x.legendre());
    }

    #[test]
    fn squares_are_residues(x in nonzero()) {
        prop_assert_eq!(x.square().legendre_vartime(), 1);
        prop_assert_eq!(x.square().legendre(), 1);
        let y = Fp::GENERATOR * x.square();
        prop_assert_eq!(y.legendre_vartime(), -1);
        prop_assert_eq!(y.legendre(), -1);
    }

    #[test]
    fn multiplicative(x in nonzero(), y in nonzero()) {
        prop_assert_eq!((x * y).legendre_vartime(), x.legendre_vartime() * y.legendre_vartime());
    }

    #[test]
    fn batch_matches_single_and_euler(xs in batch()) {
        let mut out = vec![5i8; xs.len()];
        legendre_batch_vartime(&xs, &mut out);
        for (x, got) in xs.iter().zip(&out) {
            prop_assert_eq!(*got, x.legendre_vartime(), "batch vs single at {}", x);
            prop_assert_eq!(*got, x.legendre(), "batch vs Euler at {}", x);
        }
    }

    #[test]
    fn jacobi_matches_euler_for_any_operand(x in any::<u128>()) {
        // jacobi_vartime(x, p) also accepts non-reduced x ≥ p.
        prop_assert_eq!(jacobi_vartime(x, P), Fp::from_u128(x).legendre());
    }
}
