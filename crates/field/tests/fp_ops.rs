//! Fp arithmetic checked against an independent big-integer oracle.

use doram_field::fp::{self, DotAccumulator, SumAccumulator};
use doram_field::{Fp, Group, Ring};
use num_bigint::BigUint;
use proptest::prelude::*;

const P: u128 = 0xffff_ffff_ffff_ffe4_0000_0000_0000_0001;

fn big(x: u128) -> BigUint {
    BigUint::from(x)
}

fn p() -> BigUint {
    big(P)
}

/// Converts a reduced big integer back to u128.
fn small(x: &BigUint) -> u128 {
    let digits = x.to_u64_digits();
    assert!(digits.len() <= 2);
    digits
        .iter()
        .rev()
        .fold(0u128, |acc, d| (acc << 64) | *d as u128)
}

fn fp(x: u128) -> Fp {
    Fp::from_u128(x)
}

/// Canonical values biased towards the edges: 0, 1, p − 1, near 2^64, near p, random.
fn canonical() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(0u128),
        Just(1u128),
        Just(P - 1),
        Just(P - 2),
        Just(1u128 << 64),
        Just((1u128 << 64) - 1),
        Just(P >> 1),
        (0u128..1 << 20).prop_map(|d| P - 1 - d),
        (0u128..1 << 20),
        any::<u128>().prop_map(|x| x % P),
        any::<u128>().prop_filter("below p", |x| *x < P),
    ]
}

/// Any 128-bit value, including the 28·2^64 − 1 values in [p, 2^128).
fn any_u128() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(P),
        Just(P + 1),
        Just(u128::MAX),
        (0u128..(28u128 << 64) - 1).prop_map(|d| P + d),
        any::<u128>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn from_u128_reduces(x in any_u128()) {
        let r = Fp::from_u128(x);
        prop_assert_eq!(r.to_u128(), small(&(big(x) % p())));
        prop_assert!(r.to_u128() < P);
    }

    #[test]
    fn add_matches_oracle(a in canonical(), b in canonical()) {
        let want = small(&((big(a) + big(b)) % p()));
        prop_assert_eq!((fp(a) + fp(b)).to_u128(), want);
        let mut c = fp(a);
        c += fp(b);
        prop_assert_eq!(c.to_u128(), want);
    }

    #[test]
    fn sub_matches_oracle(a in canonical(), b in canonical()) {
        let want = small(&((big(a) + p() - big(b)) % p()));
        prop_assert_eq!((fp(a) - fp(b)).to_u128(), want);
        let mut c = fp(a);
        c -= fp(b);
        prop_assert_eq!(c.to_u128(), want);
    }

    #[test]
    fn neg_matches_oracle(a in canonical()) {
        let want = small(&((p() - big(a)) % p()));
        prop_assert_eq!((-fp(a)).to_u128(), want);
        prop_assert_eq!(fp(a) + (-fp(a)), Fp::ZERO);
    }

    #[test]
    fn mul_matches_oracle(a in canonical(), b in canonical()) {
        let want = small(&((big(a) * big(b)) % p()));
        prop_assert_eq!((fp(a) * fp(b)).to_u128(), want);
        let mut c = fp(a);
        c *= fp(b);
        prop_assert_eq!(c.to_u128(), want);
    }

    #[test]
    fn square_and_double_match_oracle(a in canonical()) {
        prop_assert_eq!(fp(a).square().to_u128(), small(&((big(a) * big(a)) % p())));
        prop_assert_eq!(fp(a).double().to_u128(), small(&((big(a) * 2u32) % p())));
    }

    #[test]
    fn pow_matches_oracle(a in canonical(), e in any::<u128>()) {
        prop_assert_eq!(fp(a).pow(e).to_u128(), small(&big(a).modpow(&big(e), &p())));
    }

    #[test]
    fn inverse_times_x_is_one(a in canonical()) {
        match fp(a).inverse() {
            None => prop_assert_eq!(a, 0),
            Some(inv) => {
                prop_assert_eq!(inv * fp(a), Fp::ONE);
                // Fermat, computed independently.
                prop_assert_eq!(inv.to_u128(), small(&big(a).modpow(&big(P - 2), &p())));
            }
        }
    }

    #[test]
    fn from_u64_and_i64(v in any::<u64>(), w in any::<i64>()) {
        prop_assert_eq!(Fp::from_u64(v).to_u128(), v as u128);
        prop_assert_eq!(<Fp as Ring>::from_u64(v), Fp::from_u64(v));
        let want = if w < 0 { P - w.unsigned_abs() as u128 } else { w as u128 };
        prop_assert_eq!(Fp::from_i64(w).to_u128(), want);
    }

    #[test]
    fn dot_and_sum_match_oracle(
        pairs in proptest::collection::vec((canonical(), canonical()), 0..70)
    ) {
        let a: Vec<Fp> = pairs.iter().map(|(x, _)| fp(*x)).collect();
        let b: Vec<Fp> = pairs.iter().map(|(_, y)| fp(*y)).collect();
        let want_dot = pairs.iter().fold(BigUint::from(0u32), |acc, (x, y)| acc + big(*x) * big(*y));
        let want_sum = pairs.iter().fold(BigUint::from(0u32), |acc, (x, _)| acc + big(*x));
        prop_assert_eq!(fp::dot(&a, &b).to_u128(), small(&(want_dot % p())));
        prop_assert_eq!(fp::sum(&a).to_u128(), small(&(want_sum.clone() % p())));
        prop_assert_eq!(a.iter().sum::<Fp>().to_u128(), small(&(want_sum % p())));
        let naive = a.iter().zip(&b).fold(Fp::ZERO, |acc, (x, y)| acc + *x * *y);
        prop_assert_eq!(fp::dot(&a, &b), naive);
        let prod: Fp = a.iter().product();
        prop_assert_eq!(prod, a.iter().fold(Fp::ONE, |acc, x| acc * *x));
    }

    #[test]
    fn batch_inverse_matches(xs in proptest::collection::vec(canonical(), 0..40)) {
        let mut v: Vec<Fp> = xs.iter().map(|x| fp(*x)).collect();
        Fp::batch_inverse(&mut v);
        for (x, inv) in xs.iter().zip(&v) {
            prop_assert_eq!(*inv, fp(*x).inverse().unwrap_or(Fp::ZERO));
        }
    }

    #[test]
    fn ring_laws(a in canonical(), b in canonical(), c in canonical()) {
        let (a, b, c) = (fp(a), fp(b), fp(c));
        prop_assert_eq!(a * (b + c), a * b + a * c);
        prop_assert_eq!((a * b) * c, a * (b * c));
        prop_assert_eq!(a * b, b * a);
        prop_assert_eq!(a - b, -(b - a));
    }
}

#[test]
fn edge_cases() {
    let m1 = Fp::from_u128(P - 1);
    assert_eq!(m1 + Fp::ONE, Fp::ZERO);
    assert_eq!(Fp::ZERO - Fp::ONE, m1);
    assert_eq!(m1 * m1, Fp::ONE);
    assert_eq!(-Fp::ZERO, Fp::ZERO);
    assert_eq!(m1 + m1, Fp::from_u128(P - 2));
    assert_eq!(Fp::from_u128(P), Fp::ZERO);
    assert_eq!(Fp::from_u128(u128::MAX).to_u128(), u128::MAX - P);
    assert_eq!(Fp::from_canonical(P), None);
    assert_eq!(Fp::from_canonical(P - 1), Some(m1));
    assert_eq!(Fp::ZERO.inverse(), None);
    assert_eq!(Fp::ONE.inverse(), Some(Fp::ONE));
    assert_eq!(Fp::ZERO.inverse_or_zero(), Fp::ZERO);
    // 2^128 mod p = 28·2^64 − 1, as a product of two canonical values.
    let two64 = Fp::from_u128(1 << 64);
    assert_eq!((two64 * two64).to_u128(), (28u128 << 64) - 1);
    assert_eq!(Fp::ZERO.pow(0), Fp::ONE);
    assert_eq!(Fp::GENERATOR.pow(P - 1), Fp::ONE);
    // 7 generates F_p^*: it is not an m-th power residue for the prime factors m of p − 1
    // that we can check cheaply (2), and 7^((p−1)/2) = −1.
    assert_eq!(Fp::GENERATOR.pow((P - 1) / 2), m1);
}

#[test]
fn display_and_parse() {
    let x = Fp::from_u128(P - 1);
    assert_eq!(x.to_string(), "340282366920938462946865773367900766208");
    assert_eq!(
        format!("{x:?}"),
        "Fp(340282366920938462946865773367900766208)"
    );
    assert_eq!(
        "340282366920938462946865773367900766208".parse::<Fp>(),
        Ok(x)
    );
    assert!(
        "340282366920938462946865773367900766209"
            .parse::<Fp>()
            .is_err()
    );
    assert!("-1".parse::<Fp>().is_err());
    assert!("abc".parse::<Fp>().is_err());
}

#[test]
fn accumulators_handle_many_carries() {
    // 10 000 copies of p − 1: the lazy accumulators overflow their 128-bit words many times.
    let m1 = Fp::from_u128(P - 1);
    let mut s = SumAccumulator::new();
    let mut d = DotAccumulator::new();
    for _ in 0..10_000 {
        s.add(m1);
        d.add_product(m1, m1);
        d.add(m1);
    }
    // Σ(p − 1) = −10 000; Σ(p − 1)² + (p − 1) = 10 000 − 10 000 = 0.
    assert_eq!(s.finish(), -Fp::from_u64(10_000));
    assert_eq!(d.finish(), Fp::ZERO);
}

#[test]
fn random_is_canonical_and_varied() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let xs: Vec<Fp> = (0..1000).map(|_| Fp::random(&mut rng)).collect();
    assert!(xs.iter().all(|x| x.to_u128() < P));
    // Top bits should be set about half of the time.
    let high = xs.iter().filter(|x| x.to_u128() >> 127 == 1).count();
    assert!((400..600).contains(&high), "{high}");
    let mut dedup = xs.clone();
    dedup.sort_by_key(|x| x.to_u128());
    dedup.dedup();
    assert_eq!(dedup.len(), xs.len());
    assert_eq!(<Fp as Group>::BYTES, 16);
}
