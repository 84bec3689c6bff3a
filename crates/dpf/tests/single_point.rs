//! Correctness, key format and pseudorandomness checks of the single-point DPFs.

use doram_core::{CodecError, Seed};
use doram_dpf::{Bgi, DpfKey, HalfTree, SinglePointDpf, StreamScratch, TwoParty};
use doram_field::{Bit, Bits128, Fp, Group, Vector, Z64};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

fn rng(seed: u64) -> ChaCha12Rng {
    ChaCha12Rng::seed_from_u64(seed)
}

fn depth(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

/// The documented key sizes.
fn half_tree_size(n: usize, g: usize) -> usize {
    match n {
        1 => 1 + g,
        2 => 17 + 2 * g,
        3 | 4 => 17 + 4 * g,
        _ => 16 * depth(n) + 8 * g - 31,
    }
}

fn bgi_size(n: usize, g: usize) -> usize {
    if n == 1 {
        1 + g
    } else {
        17 + 16 * depth(n) + depth(n).div_ceil(4) + g
    }
}

/// Every x: the shares sum to β at α and to zero elsewhere; eval_all and its parallel twin
/// agree with eval; keys round-trip through bytes.
fn check_pair<G: Group, D: SinglePointDpf<G>>(
    n: usize,
    alpha: usize,
    beta: G,
    k0: &D::Key,
    k1: &D::Key,
) {
    assert_eq!(k0.party(), TwoParty::P0);
    assert_eq!(k1.party(), TwoParty::P1);
    assert_eq!(k0.domain_size(), n);
    let all0 = D::eval_all(k0);
    let all1 = D::eval_all(k1);
    assert_eq!(all0.len(), n);
    for x in 0..n {
        let expected = if x == alpha { beta } else { G::ZERO };
        assert_eq!(
            all0[x] + all1[x],
            expected,
            "n = {n}, alpha = {alpha}, x = {x}"
        );
        assert_eq!(
            D::eval(k0, x),
            all0[x],
            "eval vs eval_all, n = {n}, x = {x}"
        );
        assert_eq!(
            D::eval(k1, x),
            all1[x],
            "eval vs eval_all, n = {n}, x = {x}"
        );
    }
    assert_eq!(D::eval_all_par(k0), all0);
    assert_eq!(D::eval_all_par(k1), all1);
    for k in [k0, k1] {
        let bytes = k.to_bytes();
        assert_eq!(bytes.len(), D::key_size(n));
        assert_eq!(bytes.len(), k.size_bytes());
        assert_eq!(&D::key_from_bytes(&bytes, n).expect("round trip"), k);
    }
}

fn exhaustive<G: Group, D: SinglePointDpf<G>>(
    sizes: &[usize],
    mut beta: impl FnMut(&mut ChaCha12Rng) -> G,
) {
    let mut r = rng(1);
    for &n in sizes {
        for alpha in 0..n {
            let b = beta(&mut r);
            let (k0, k1) = D::gen_keys(n, alpha, b, &mut r);
            check_pair::<G, D>(n, alpha, b, &k0, &k1);
        }
    }
}

const SMALL: [usize; 12] = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 100];

#[test]
fn half_tree_exhaustive_fp() {
    exhaustive::<Fp, HalfTree>(&SMALL, Fp::random);
}

#[test]
fn bgi_exhaustive_fp() {
    exhaustive::<Fp, Bgi>(&SMALL, Fp::random);
}

#[test]
fn other_output_groups() {
    let sizes = [1, 2, 3, 5, 16, 33];
    exhaustive::<Z64, HalfTree>(&sizes, |r| Z64(r.random()));
    exhaustive::<Z64, Bgi>(&sizes, |r| Z64(r.random()));
    exhaustive::<Bit, HalfTree>(&sizes, |_| Bit(true));
    exhaustive::<Bit, Bgi>(&sizes, |_| Bit(true));
    exhaustive::<Bits128, HalfTree>(&sizes, |r| Bits128(r.random()));
    exhaustive::<Vector<Fp, 2>, HalfTree>(&sizes, |r| Vector([Fp::random(r), Fp::random(r)]));
    exhaustive::<Vector<Fp, 2>, Bgi>(&sizes, |r| Vector([Fp::random(r), Fp::random(r)]));
}

#[test]
fn beta_zero_and_beta_one() {
    let mut r = rng(2);
    for n in [1, 6, 64] {
        for beta in [Fp::ZERO, Fp::ONE, -Fp::ONE] {
            let alpha = r.random_range(0..n);
            let (k0, k1) = HalfTree::gen_keys(n, alpha, beta, &mut r);
            check_pair::<Fp, HalfTree>(n, alpha, beta, &k0, &k1);
            let (k0, k1) = Bgi::gen_keys(n, alpha, beta, &mut r);
            check_pair::<Fp, Bgi>(n, alpha, beta, &k0, &k1);
        }
    }
}

fn check_large<D: SinglePointDpf<Fp>>(n: usize, alpha: usize, r: &mut ChaCha12Rng) {
    let beta = Fp::random(r);
    let (k0, k1) = D::gen_keys(n, alpha, beta, r);
    let a = D::eval_all(&k0);
    let b = D::eval_all_par(&k1);
    let mut hits = 0;
    for (x, (y0, y1)) in a.iter().zip(&b).enumerate() {
        let y = *y0 + *y1;
        if x == alpha {
            assert_eq!(y, beta);
        } else if y != Fp::ZERO {
            hits += 1;
        }
    }
    assert_eq!(
        hits, 0,
        "non-zero outputs off the point, n = {n}, alpha = {alpha}"
    );
    for x in [0, alpha, n - 1, alpha ^ 1, n / 2] {
        if x < n {
            assert_eq!(D::eval(&k0, x), a[x]);
            assert_eq!(D::eval(&k1, x), b[x]);
        }
    }
}

#[test]
fn large_domains() {
    let mut r = rng(3);
    let n = 1 << 16;
    for alpha in [
        0,
        1,
        n / 2,
        n - 1,
        r.random_range(0..n),
        r.random_range(0..n),
    ] {
        check_large::<HalfTree>(n, alpha, &mut r);
        check_large::<Bgi>(n, alpha, &mut r);
    }
    // Sizes around chunk boundaries (subtrees hold 2^10 output nodes).
    for n in [(1 << 12) - 1, (1 << 12) + 1, (1 << 13) + 4, 50_000] {
        let alpha = r.random_range(0..n);
        check_large::<HalfTree>(n, alpha, &mut r);
        check_large::<Bgi>(n, alpha, &mut r);
        check_large::<HalfTree>(n, n - 1, &mut r);
    }
}

#[test]
fn spot_check_2_pow_20() {
    let mut r = rng(4);
    let n = 1 << 20;
    let alpha = r.random_range(0..n);
    check_large::<HalfTree>(n, alpha, &mut r);
    check_large::<Bgi>(n - 3, n - 4, &mut r);
}

/// Streams from any start reproduce the full-domain evaluation.
fn check_stream<G: Group, D: SinglePointDpf<G>>(key: &D::Key, r: &mut ChaCha12Rng) {
    let all = D::eval_all(key);
    let n = all.len();
    let mut scratch = StreamScratch::new();
    let mut starts = vec![0, n - 1, n / 2, n / 3];
    starts.extend((0..4).map(|_| r.random_range(0..n)));
    for start in starts {
        let mut s = D::stream(key, start);
        assert_eq!(s.remaining(), n - start);
        let mut got = Vec::with_capacity(n - start);
        let mut buf = vec![G::ZERO; s.batch_len()];
        loop {
            let k = s.next_batch(&mut buf, &mut scratch);
            if k == 0 {
                break;
            }
            assert!(k <= s.batch_len());
            got.extend_from_slice(&buf[..k]);
        }
        assert_eq!(got, all[start..], "n = {n}, start = {start}");
        assert_eq!(s.remaining(), 0);
    }
}

#[test]
fn streams_match_eval_all() {
    let mut r = rng(10);
    for n in [1usize, 2, 3, 5, 8, 9, 63, 64, 65, 100, 1000, 4097] {
        let alpha = r.random_range(0..n);
        let (k0, k1) = HalfTree::gen_keys(n, alpha, Fp::random(&mut r), &mut r);
        check_stream::<Fp, HalfTree>(&k0, &mut r);
        check_stream::<Fp, HalfTree>(&k1, &mut r);
        let (k0, k1) = Bgi::gen_keys(n, alpha, Z64(5), &mut r);
        check_stream::<Z64, Bgi>(&k0, &mut r);
        check_stream::<Z64, Bgi>(&k1, &mut r);
    }
}

#[test]
fn key_sizes_follow_the_formulas() {
    let mut r = rng(5);
    for n in [1usize, 2, 3, 4, 5, 8, 9, 1000, 1 << 16, (1 << 16) + 1] {
        let alpha = n - 1;
        assert_eq!(
            <HalfTree as SinglePointDpf<Fp>>::key_size(n),
            half_tree_size(n, 16)
        );
        assert_eq!(
            <HalfTree as SinglePointDpf<Bit>>::key_size(n),
            half_tree_size(n, 1)
        );
        assert_eq!(<Bgi as SinglePointDpf<Fp>>::key_size(n), bgi_size(n, 16));
        assert_eq!(<Bgi as SinglePointDpf<Z64>>::key_size(n), bgi_size(n, 8));
        let (k0, k1) = HalfTree::gen_keys(n, alpha, Fp::ONE, &mut r);
        assert_eq!(k0.to_bytes().len(), half_tree_size(n, 16));
        assert_eq!(k1.to_bytes().len(), half_tree_size(n, 16));
        let (k0, _) = Bgi::gen_keys(n, alpha, Z64(3), &mut r);
        assert_eq!(k0.to_bytes().len(), bgi_size(n, 8));
        // Every alpha gives the same length.
        let (k0, _) = HalfTree::gen_keys(n, 0, Fp::ONE, &mut r);
        assert_eq!(k0.to_bytes().len(), half_tree_size(n, 16));
    }
    // 2^20 points into Fp: 16·20 + 128 − 31 = 417 bytes (Half-Tree), 17 + 320 + 5 + 16 = 358 (BGI).
    assert_eq!(<HalfTree as SinglePointDpf<Fp>>::key_size(1 << 20), 417);
    assert_eq!(<Bgi as SinglePointDpf<Fp>>::key_size(1 << 20), 358);
}

#[test]
fn decoding_rejects_bad_bytes() {
    let mut r = rng(6);
    let n = 100;
    let (k0, _) = HalfTree::gen_keys(n, 17, Fp::from_u64(5), &mut r);
    let good = k0.to_bytes();
    for len in [0, good.len() - 1, good.len() + 1] {
        let mut b = good.clone();
        b.resize(len, 0);
        assert_eq!(
            HalfTree::key_from_bytes(&b, n).map(|_: doram_dpf::HalfTreeKey<Fp>| ()),
            Err(CodecError::WrongLength {
                expected: good.len(),
                got: len
            })
        );
    }
    // Domain size from the protocol that does not match the key.
    assert!(<HalfTree as SinglePointDpf<Fp>>::key_from_bytes(&good, 200).is_err());
    assert!(<HalfTree as SinglePointDpf<Fp>>::key_from_bytes(&good, 0).is_err());
    // Bad party byte.
    let mut b = good.clone();
    b[0] = 2;
    assert!(<HalfTree as SinglePointDpf<Fp>>::key_from_bytes(&b, n).is_err());
    // An output correction word ≥ p.
    let mut b = good.clone();
    let l = b.len();
    b[l - 16..].fill(0xff);
    assert!(matches!(
        <HalfTree as SinglePointDpf<Fp>>::key_from_bytes(&b, n),
        Err(CodecError::OutOfRange { .. })
    ));

    let (k0, _) = Bgi::gen_keys(n, 17, Fp::from_u64(5), &mut r);
    let good = k0.to_bytes();
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&good, n).is_ok());
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&good[1..], n).is_err());
    // Seed with lsb set.
    let mut b = good.clone();
    b[1] |= 1;
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&b, n).is_err());
    // Correction word with lsb set.
    let mut b = good.clone();
    b[17] |= 1;
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&b, n).is_err());
    // A padding bit of the control-bit corrections (d = 7: 14 of 16 bits used).
    let mut b = good.clone();
    b[17 + 16 * 7 + 1] |= 0x80;
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&b, n).is_err());
    // A used control bit may be anything.
    let mut b = good.clone();
    b[17 + 16 * 7] ^= 1;
    assert!(<Bgi as SinglePointDpf<Fp>>::key_from_bytes(&b, n).is_ok());
    // Domain of one point.
    let (k0, _) = Bgi::gen_keys(1, 0, Bit(true), &mut r);
    assert_eq!(k0.to_bytes().len(), 2);
    assert!(<Bgi as SinglePointDpf<Bit>>::key_from_bytes(&[0, 2], 1).is_err());
}

#[test]
fn gen_with_seeds_is_deterministic() {
    let seeds = [Seed([1; 16]), Seed([2; 16])];
    let a = HalfTree::gen_with_seeds(1000, 999, Fp::from_u64(7), seeds);
    let b = HalfTree::gen_with_seeds(1000, 999, Fp::from_u64(7), seeds);
    assert_eq!(a, b);
    let c = HalfTree::gen_with_seeds(1000, 998, Fp::from_u64(7), seeds);
    assert_ne!(a.0.to_bytes(), c.0.to_bytes());
    // The root seeds are the given seed and the seed xor Δ (lsb forced to 1).
    let b0 = a.0.to_bytes();
    let b1 = a.1.to_bytes();
    assert_eq!(&b0[1..17], &[1; 16]);
    let mut delta = [2u8; 16];
    delta[0] |= 1;
    let x: Vec<u8> = b0[1..17]
        .iter()
        .zip(&b1[1..17])
        .map(|(a, b)| a ^ b)
        .collect();
    assert_eq!(x, delta);
    let d = Bgi::gen_with_seeds(1000, 3, Z64(9), seeds);
    assert_eq!(d, Bgi::gen_with_seeds(1000, 3, Z64(9), seeds));
}

/// Known answers pin the key format and the hash definitions: a digest of both keys' bytes.
#[test]
fn known_answers() {
    let seeds = [Seed(*b"0123456789abcdef"), Seed(*b"fedcba9876543210")];
    let digest = |a: &[u8], b: &[u8]| {
        let mut h = blake3::Hasher::new();
        h.update(a);
        h.update(b);
        h.finalize().to_hex()[..16].to_string()
    };
    let (k0, k1) = HalfTree::gen_with_seeds(1000, 123, Fp::from_u64(42), seeds);
    let ht = digest(&k0.to_bytes(), &k1.to_bytes());
    let (k0, k1) = Bgi::gen_with_seeds(1000, 123, Fp::from_u64(42), seeds);
    let bgi = digest(&k0.to_bytes(), &k1.to_bytes());
    assert_eq!((ht.as_str(), bgi.as_str()), (HALF_TREE_KAT, BGI_KAT));
}

const HALF_TREE_KAT: &str = "4d6505d02e6cb9ed";
const BGI_KAT: &str = "776a97db9115ccca";

/// Counts, for each of the 128 bit positions, how often it is one among `blocks`, and checks
/// every count against Binomial(N, 1/2) with a 5.5 sd margin (false alarm ≈ 128 · 4e−8).
fn assert_bits_balanced(blocks: &[[u8; 16]], what: &str) {
    let n = blocks.len() as f64;
    let sd = (n / 4.0).sqrt();
    for bit in 0..128 {
        let ones = blocks
            .iter()
            .filter(|b| (b[bit / 8] >> (bit % 8)) & 1 == 1)
            .count() as f64;
        assert!(
            (ones - n / 2.0).abs() < 5.5 * sd,
            "{what}: bit {bit} is one {ones} times of {n}"
        );
    }
}

fn block(bytes: &[u8]) -> [u8; 16] {
    bytes.try_into().expect("16 bytes")
}

#[test]
fn keys_look_random() {
    let mut r = rng(7);
    let n = 1 << 10; // Half-Tree: 7 levels with a correction word, 8 output words
    let samples = 2000;
    let mut seeds0 = Vec::new();
    let mut seeds1 = Vec::new();
    let mut cws = vec![Vec::new(); 3];
    let mut ocw = Vec::new();
    let mut bgi_cw = Vec::new();
    for i in 0..samples {
        // Alternate between two very different points: the statistics must not care.
        let alpha = if i % 2 == 0 { 0 } else { n - 1 };
        let (k0, k1) = HalfTree::gen_keys(n, alpha, Fp::ONE, &mut r);
        let (b0, b1) = (k0.to_bytes(), k1.to_bytes());
        assert_eq!(b0.len(), b1.len());
        assert_ne!(b0[1..17], b1[1..17], "root seeds differ");
        assert_eq!(b0[17..], b1[17..], "correction words are common");
        seeds0.push(block(&b0[1..17]));
        seeds1.push(block(&b1[1..17]));
        for (l, v) in cws.iter_mut().enumerate() {
            v.push(block(&b0[17 + 16 * l..33 + 16 * l]));
        }
        ocw.push(block(&b0[b0.len() - 16..]));
        let (k0, _) = Bgi::gen_keys(n, alpha, Fp::ONE, &mut r);
        let b = k0.to_bytes();
        // The seed correction of the last level, without its always-zero lsb.
        let mut c = block(&b[17 + 16 * 9..17 + 16 * 10]);
        c[0] |= (i & 1) as u8;
        bgi_cw.push(c);
    }
    assert_bits_balanced(&seeds0, "party 0 root seed");
    assert_bits_balanced(&seeds1, "party 1 root seed");
    for (l, v) in cws.iter().enumerate() {
        assert_bits_balanced(v, &format!("correction word {l}"));
    }
    // Uniform in Fp is within 2^−59 of uniform on 128 bits (p = 2^128 − 28·2^64 + 1).
    assert_bits_balanced(&ocw, "output correction word");
    assert_bits_balanced(&bgi_cw, "BGI seed correction");
}

#[test]
fn one_share_alone_looks_random() {
    let mut r = rng(8);
    let n = 1 << 12;
    let (k0, k1) = HalfTree::gen_keys(n, 77, Fp::ONE, &mut r);
    for k in [&k0, &k1] {
        let v: Vec<Fp> = HalfTree::eval_all(k);
        // Shares are uniform field elements: no zeros, no repeats, balanced low bits.
        let mut lows: Vec<u128> = v.iter().map(|y| y.to_u128()).collect();
        assert!(lows.iter().all(|&y| y != 0));
        let ones = lows.iter().filter(|&&y| y & 1 == 1).count() as f64;
        assert!((ones - n as f64 / 2.0).abs() < 5.0 * (n as f64 / 4.0).sqrt());
        lows.sort_unstable();
        lows.dedup();
        assert_eq!(lows.len(), n);
    }
}

#[test]
#[should_panic(expected = "outside domain")]
fn alpha_outside_domain_panics() {
    let _ = HalfTree::gen_keys(10, 10, Fp::ONE, &mut rng(9));
}

#[test]
#[should_panic(expected = "outside domain")]
fn eval_outside_domain_panics() {
    let (k0, _) = Bgi::gen_keys(10, 3, Fp::ONE, &mut rng(9));
    let _ = Bgi::eval(&k0, 10);
}
