//! The cuckoo-hashing multi-point DPF against a plaintext oracle.

use doram_core::{CodecError, Seed};
use doram_dpf::mpdpf::MpDpfKey;
use doram_dpf::{
    BgiMpDpf, CuckooMpDpf, DpfError, DpfKey, HalfTreeMpDpf, MultiPointDpf, SinglePointDpf, TwoParty,
};
use doram_field::{Bit, Fp, Group, Z64};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn random_points(r: &mut ChaCha12Rng, n: usize, t: usize, ends: bool) -> Vec<usize> {
    let mut pts: Vec<usize> = Vec::with_capacity(t);
    if ends && t >= 2 {
        pts.push(n - 1);
        pts.push(0);
    }
    while pts.len() < t {
        let p = r.random_range(0..n);
        if !pts.contains(&p) {
            pts.push(p);
        }
    }
    pts
}

fn oracle<G: Group>(n: usize, points: &[usize], values: &[G]) -> Vec<G> {
    let mut v = vec![G::ZERO; n];
    for (&p, &b) in points.iter().zip(values) {
        v[p] = b;
    }
    v
}

/// Full-domain shares sum to the oracle; spot evaluations, the table-based evaluation and the
/// parallel evaluation agree; keys round-trip through bytes.
fn check<G: Group, D>(n: usize, points: &[usize], values: &[G], r: &mut ChaCha12Rng)
where
    D: SinglePointDpf<G>,
    CuckooMpDpf<D>: MultiPointDpf<G, Key = MpDpfKey<D::Key>>,
{
    let (k0, k1) = CuckooMpDpf::<D>::gen_keys(n, points, values, r).expect("gen");
    assert_eq!((k0.party(), k1.party()), (TwoParty::P0, TwoParty::P1));
    assert_eq!(k0.num_points(), points.len());
    let a = CuckooMpDpf::<D>::eval_all(&k0);
    let b = CuckooMpDpf::<D>::eval_all(&k1);
    let expected = oracle(n, points, values);
    for x in 0..n {
        assert_eq!(
            a[x] + b[x],
            expected[x],
            "n = {n}, t = {}, x = {x}",
            points.len()
        );
    }
    assert_eq!(CuckooMpDpf::<D>::eval_all_par(&k0), a);
    assert_eq!(CuckooMpDpf::<D>::eval_all_par(&k1), b);
    let mut probes: Vec<usize> = points.iter().copied().take(5).collect();
    probes.extend([0, n - 1, n / 2]);
    for &x in &probes {
        assert_eq!(CuckooMpDpf::<D>::eval(&k0, x), a[x]);
        assert_eq!(CuckooMpDpf::<D>::eval(&k1, x), b[x]);
    }
    if let Some(table) = k0.simple_hash_table() {
        let step = (n / 300).max(1);
        for x in (0..n).step_by(step).chain(probes.iter().copied()) {
            assert_eq!(CuckooMpDpf::<D>::eval_with_table(&k0, &table, x), a[x]);
            assert_eq!(CuckooMpDpf::<D>::eval_with_table(&k1, &table, x), b[x]);
        }
    }
    for k in [&k0, &k1] {
        let bytes = k.to_bytes();
        assert_eq!(bytes.len(), k.size_bytes());
        let back = CuckooMpDpf::<D>::key_from_bytes(&bytes, n, points.len()).expect("round trip");
        assert_eq!(&back, k);
    }
}

#[test]
fn small_domains_all_sizes() {
    let mut r = ChaCha12Rng::seed_from_u64(1);
    for n in [1usize, 2, 3, 7, 16, 33, 100] {
        for t in [0, 1, 2, 3, n / 2, n] {
            let t = t.min(n);
            let pts = random_points(&mut r, n, t, true);
            let vals: Vec<Fp> = (0..t).map(|_| Fp::random(&mut r)).collect();
            check::<Fp, doram_dpf::HalfTree>(n, &pts, &vals, &mut r);
            check::<Fp, doram_dpf::Bgi>(n, &pts, &vals, &mut r);
        }
    }
}

#[test]
fn medium_domains() {
    let mut r = ChaCha12Rng::seed_from_u64(2);
    for (n, t) in [
        (1000usize, 50usize),
        (1 << 12, 300),
        (1 << 14, 128),
        ((1 << 16) - 5, 256),
    ] {
        let pts = random_points(&mut r, n, t, true);
        let vals: Vec<Fp> = (0..t).map(|_| Fp::random(&mut r)).collect();
        check::<Fp, doram_dpf::HalfTree>(n, &pts, &vals, &mut r);
    }
    let pts = random_points(&mut r, 5000, 40, true);
    let vals: Vec<Z64> = (0..40).map(|_| Z64(r.random())).collect();
    check::<Z64, doram_dpf::Bgi>(5000, &pts, &vals, &mut r);
    let vals: Vec<Bit> = (0..40).map(|_| Bit(true)).collect();
    check::<Bit, doram_dpf::HalfTree>(5000, &pts, &vals, &mut r);
}

#[test]
fn spot_check_2_pow_20() {
    let mut r = ChaCha12Rng::seed_from_u64(3);
    let n = 1 << 20;
    let t = 1024;
    let pts = random_points(&mut r, n, t, true);
    let vals: Vec<Fp> = (0..t).map(|_| Fp::random(&mut r)).collect();
    let (k0, k1) = HalfTreeMpDpf::gen_keys(n, &pts, &vals, &mut r).expect("gen");
    let a = HalfTreeMpDpf::eval_all_par(&k0);
    let b = HalfTreeMpDpf::eval_all(&k1);
    let expected = oracle(n, &pts, &vals);
    let wrong = (0..n).filter(|&x| a[x] + b[x] != expected[x]).count();
    assert_eq!(wrong, 0);
}

#[test]
fn empty_point_set_is_all_zero() {
    let mut r = ChaCha12Rng::seed_from_u64(4);
    let (k0, k1) = HalfTreeMpDpf::gen_keys::<_>(50, &[], &[] as &[Fp], &mut r).expect("gen");
    assert_eq!(k0.num_buckets(), 0);
    assert_eq!(k0.to_bytes().len(), 17);
    assert!(
        HalfTreeMpDpf::eval_all(&k0)
            .iter()
            .all(|y: &Fp| *y == Fp::ZERO)
    );
    assert_eq!(HalfTreeMpDpf::eval(&k1, 49), Fp::ZERO);
}

#[test]
fn buckets_cover_points_and_bucket_keys_have_bucket_domains() {
    let mut r = ChaCha12Rng::seed_from_u64(5);
    let n = 3000;
    let pts = random_points(&mut r, n, 100, false);
    let vals: Vec<Fp> = (0..100).map(|_| Fp::ONE).collect();
    let (k0, _) = HalfTreeMpDpf::gen_keys(n, &pts, &vals, &mut r).expect("gen");
    assert_eq!(k0.num_buckets(), doram_prim::num_buckets(100));
    let table = k0.simple_hash_table().expect("t > 0");
    let mut total = 0;
    for b in 0..k0.num_buckets() {
        assert_eq!(k0.bucket_size(b), table.bucket_len(b));
        match k0.bucket_key(b) {
            Some(k) => assert_eq!(k.domain_size(), table.bucket_len(b)),
            None => assert_eq!(table.bucket_len(b), 0),
        }
        total += table.bucket_len(b);
    }
    // Every point is in up to three buckets; on average just under three.
    assert!(total <= 3 * n && total > 2 * n, "{total}");
}

#[test]
fn gen_errors() {
    let mut r = ChaCha12Rng::seed_from_u64(6);
    let v = [Fp::ONE, Fp::ONE];
    assert_eq!(
        HalfTreeMpDpf::gen_keys(10, &[1, 1], &v, &mut r).err(),
        Some(DpfError::DuplicatePoint { point: 1 })
    );
    assert_eq!(
        HalfTreeMpDpf::gen_keys(10, &[1, 10], &v, &mut r).err(),
        Some(DpfError::PointOutOfRange {
            point: 10,
            domain_size: 10
        })
    );
    assert_eq!(
        HalfTreeMpDpf::gen_keys(10, &[1], &v, &mut r).err(),
        Some(DpfError::LengthMismatch {
            points: 1,
            values: 2
        })
    );
    assert_eq!(
        HalfTreeMpDpf::gen_keys(0, &[], &[] as &[Fp], &mut r).err(),
        Some(DpfError::BadDomain { domain_size: 0 })
    );
}

#[test]
fn decoding_rejects_bad_bytes() {
    let mut r = ChaCha12Rng::seed_from_u64(7);
    let n = 500;
    let pts = random_points(&mut r, n, 20, true);
    let vals: Vec<Fp> = (0..20).map(|_| Fp::random(&mut r)).collect();
    let (k0, k1) = BgiMpDpf::gen_keys(n, &pts, &vals, &mut r).expect("gen");
    let good = k0.to_bytes();
    let dec = |b: &[u8], n, t| <BgiMpDpf as MultiPointDpf<Fp>>::key_from_bytes(b, n, t).map(|_| ());
    assert!(dec(&good, n, 20).is_ok());
    assert!(matches!(
        dec(&good[..good.len() - 1], n, 20),
        Err(CodecError::WrongLength { .. })
    ));
    let mut longer = good.clone();
    longer.push(0);
    assert!(matches!(
        dec(&longer, n, 20),
        Err(CodecError::WrongLength { .. })
    ));
    assert!(dec(&good[..10], n, 20).is_err());
    // The protocol's point count or domain size differs from the dealer's.
    assert!(dec(&good, n, 21).is_err());
    assert!(dec(&good, 4 * n, 20).is_err());
    // A bucket key of the other party spliced in.
    let other = k1.to_bytes();
    let mut mixed = good.clone();
    mixed[17..].copy_from_slice(&other[17..]);
    assert!(dec(&mixed, n, 20).is_err());
    // A bad party byte.
    let mut bad = good.clone();
    bad[0] = 7;
    assert!(dec(&bad, n, 20).is_err());
}

#[test]
fn deterministic_with_seed() {
    let pts = [3usize, 9, 200, 999];
    let vals = [Fp::ONE, Fp::from_u64(2), Fp::from_u64(3), Fp::from_u64(4)];
    let a = HalfTreeMpDpf::gen_with_seed(1000, &pts, &vals, Seed([9; 16])).expect("gen");
    let b = HalfTreeMpDpf::gen_with_seed(1000, &pts, &vals, Seed([9; 16])).expect("gen");
    assert_eq!(a, b);
    let c = HalfTreeMpDpf::gen_with_seed(1000, &pts, &vals, Seed([8; 16])).expect("gen");
    assert_ne!(a.0.to_bytes(), c.0.to_bytes());
}
