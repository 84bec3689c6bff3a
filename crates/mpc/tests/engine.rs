//! The compute engine against plaintext on random inputs and boundaries (0, 2^k − 1, equal
//! values), for several bit lengths; its round counts; the pool; and transcripts that do not
//! depend on the values.

use doram_core::PartyId;
use doram_field::Fp;
use doram_mpc::engine::{
    MAX_BITS, and_gates, bits_per_onehot, rounds_per_comparison, rounds_per_onehot,
};
use doram_mpc::testkit::{party_seed, run3, test_seed};
use doram_mpc::{Additive, Engine, Input, MpcError, Online, Secret, SecretBit, deal_additive};
use doram_net::{Session, Transcript};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Runs `f` on an engine at each of three parties; returns their results.
fn run_engine<T: Send>(
    seed: u64,
    preprocess: usize,
    f: impl Fn(&mut Online<'_>) -> Result<T, MpcError> + Sync,
) -> [T; 3] {
    run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).expect("engine setup");
        engine
            .preprocess(&mut session, preprocess)
            .expect("preprocess");
        f(&mut engine.on(&mut session)).expect("engine run")
    })
}

/// Inputs `values` from `P0` (the others pass the count).
fn input_p0(on: &mut Online<'_>, values: &[u64]) -> Result<Vec<Secret>, MpcError> {
    let input = match on.me() {
        PartyId::P0 => Input::Own(values),
        _ => Input::Peer {
            dealer: PartyId::P0,
            count: values.len(),
        },
    };
    on.input(input)
}

fn to_u64(x: Fp) -> u64 {
    u64::try_from(x.to_u128()).expect("a value below 2^64")
}

/// Random k-bit pairs with boundaries and ties.
fn pairs_for(k: u32, rng: &mut ChaCha12Rng, count: usize) -> Vec<(u64, u64)> {
    let top = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
    let mut v = vec![
        (0, 0),
        (0, top),
        (top, 0),
        (top, top),
        (top - top / 2, top - top / 2),
    ];
    if top > 0 {
        v.push((top - 1, top));
        v.push((top, top - 1));
        v.push((1, 0));
    }
    while v.len() < count {
        let a = rng.random::<u64>() & top;
        let b = if rng.random_bool(0.3) {
            a
        } else {
            rng.random::<u64>() & top
        };
        v.push((a, b));
    }
    v
}

#[test]
fn comparisons_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    for k in [1u32, 2, 3, 7, 20, 33, 64] {
        let pairs = pairs_for(k, &mut rng, 40);
        let flat: Vec<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        let [r, _, _] = run_engine(seed ^ u64::from(k), 0, |on| {
            let x = input_p0(on, &flat)?;
            let sp: Vec<(Secret, Secret)> = x.chunks(2).map(|c| (c[0], c[1])).collect();
            let lt = on.lt_many(&sp, k)?;
            let eq = on.eq_many(&sp, k)?;
            let both = on.cmp_many(&sp, k)?;
            let mut all: Vec<Secret> = lt.iter().chain(&eq).map(|b| b.value()).collect();
            all.extend(both.iter().flat_map(|c| [c.lt.value(), c.eq.value()]));
            on.open_many(&all)
        });
        let m = pairs.len();
        for (j, &(a, b)) in pairs.iter().enumerate() {
            let (lt, eq) = (u64::from(a < b), u64::from(a == b));
            assert_eq!(to_u64(r[j]), lt, "lt({a}, {b}) at k = {k}");
            assert_eq!(to_u64(r[m + j]), eq, "eq({a}, {b}) at k = {k}");
            assert_eq!(to_u64(r[2 * m + 2 * j]), lt, "cmp.lt({a}, {b}) at k = {k}");
            assert_eq!(
                to_u64(r[2 * m + 2 * j + 1]),
                eq,
                "cmp.eq({a}, {b}) at k = {k}"
            );
        }
    }
}

#[test]
fn wide_comparisons_with_a_sentinel() {
    // 65-bit values: u64 entries against the sentinel 2^64 (as programs use it).
    let seed = test_seed();
    let sentinel = Fp::from_u128(1 << 64);
    let vals = [0u64, 1, u64::MAX - 1, u64::MAX];
    let [r, _, _] = run_engine(seed, 0, |on| {
        let x = input_p0(on, &vals)?;
        let s = on.constant_fp(sentinel);
        let mut pairs: Vec<(Secret, Secret)> = x.iter().map(|&v| (v, s)).collect();
        pairs.extend(x.iter().map(|&v| (s, v)));
        pairs.push((s, s));
        let c = on.cmp_many(&pairs, 65)?;
        let all: Vec<Secret> = c
            .iter()
            .flat_map(|c| [c.lt.value(), c.eq.value()])
            .collect();
        on.open_many(&all)
    });
    let got: Vec<u64> = r.into_iter().map(to_u64).collect();
    assert_eq!(
        got,
        vec![1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    );
}

#[test]
fn arithmetic_bits_and_openings_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let n = 37;
    let xs: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let ys: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let bs: Vec<u64> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let cs: Vec<u64> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let mut all = xs.clone();
    all.extend(&ys);
    all.extend(&bs);
    all.extend(&cs);
    let outs = run_engine(seed, 0, |on| {
        let v = input_p0(on, &all)?;
        let (x, rest) = v.split_at(n);
        let (y, rest) = rest.split_at(n);
        let (b, c) = rest.split_at(n);
        let b: Vec<SecretBit> = b.iter().map(|&v| SecretBit::assume_bit(v)).collect();
        let c: Vec<SecretBit> = c.iter().map(|&v| SecretBit::assume_bit(v)).collect();
        let xy: Vec<_> = x.iter().copied().zip(y.iter().copied()).collect();
        let bc: Vec<_> = b.iter().copied().zip(c.iter().copied()).collect();
        let prod = on.mul_many(&xy)?;
        let sel: Vec<_> = (0..n).map(|i| (b[i], x[i], y[i])).collect();
        let sel = on.select_many(&sel)?;
        let and = on.and_many(&bc)?;
        let or = on.or_many(&bc)?;
        let xor = on.xor_many(&bc)?;
        let not: Vec<SecretBit> = b.iter().map(|&b| on.not(b)).collect();
        let lin: Vec<Secret> = (0..n).map(|i| on.add_public(x[i] - y[i], 5)).collect();
        // Through additive shares and back.
        let add = on.to_additive(&prod);
        let back = on.from_additive(&add)?;
        let mut open: Vec<Secret> = prod.clone();
        open.extend(sel);
        open.extend(
            and.iter()
                .chain(&or)
                .chain(&xor)
                .chain(&not)
                .map(|b| b.value()),
        );
        open.extend(lin);
        open.extend(back);
        let to_p2 = on.open_to(PartyId::P2, &x[..3])?;
        Ok((on.open_many(&open)?, to_p2))
    });
    let [(r, none0), (r1, none1), (r2, to_p2)] = outs;
    assert_eq!(r, r1);
    assert_eq!(r, r2);
    assert!(none0.is_none() && none1.is_none());
    let f = |v: u64| Fp::from_u64(v);
    assert_eq!(
        to_p2.expect("P2 receives"),
        xs[..3].iter().map(|&v| f(v)).collect::<Vec<_>>()
    );
    for i in 0..n {
        let prod = f(xs[i]) * f(ys[i]);
        assert_eq!(r[i], prod);
        assert_eq!(r[n + i], if bs[i] == 1 { f(xs[i]) } else { f(ys[i]) });
        assert_eq!(r[2 * n + i], f(bs[i] & cs[i]));
        assert_eq!(r[3 * n + i], f(bs[i] | cs[i]));
        assert_eq!(r[4 * n + i], f(bs[i] ^ cs[i]));
        assert_eq!(r[5 * n + i], f(1 - bs[i]));
        assert_eq!(r[6 * n + i], f(xs[i]) - f(ys[i]) + f(5));
        assert_eq!(r[7 * n + i], prod);
    }
}

#[test]
fn empty_batches_send_nothing() {
    let seed = test_seed();
    let outs = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
        let before = session.stats().total().sum().msgs_sent;
        let mut on = engine.on(&mut session);
        assert!(on.lt_many(&[], 64).unwrap().is_empty());
        assert!(on.mul_many(&[]).unwrap().is_empty());
        assert!(on.and_many(&[]).unwrap().is_empty());
        assert!(on.open_many(&[]).unwrap().is_empty());
        engine.preprocess(&mut session, 0).unwrap();
        session.stats().total().sum().msgs_sent - before
    });
    assert_eq!(outs, [0, 0, 0]);
}

#[test]
fn bad_bit_lengths_are_misuse_before_sending() {
    let seed = test_seed();
    let outs = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
        let me = session.me();
        let mut on = engine.on(&mut session);
        let x = on.constant(1);
        let a = on.lt_many(&[(x, x)], 0);
        let b = on.eq_many(&[(x, x)], MAX_BITS + 1);
        let ok = on.lt_many(&[(x, x)], MAX_BITS);
        let ok = ok.and_then(|v| on.open_many(&[v[0].value()]));
        (
            matches!(a, Err(MpcError::ApiMisuse(_))),
            matches!(b, Err(MpcError::ApiMisuse(_))),
            ok.map(|v| v[0]).ok(),
            me,
        )
    });
    for (a, b, ok, me) in outs {
        assert!(a && b, "{me}");
        assert_eq!(ok, Some(Fp::ZERO), "{me}");
    }
}

/// Rounds, products and pool use of one batched comparison.
#[test]
fn onehot_vectors_match_plaintext_and_cost_one_comparison() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 11);
    for (k, len) in [
        (1u32, 2usize),
        (3, 5),
        (4, 16),
        (7, 102),
        (9, 300),
        (13, 40),
    ] {
        let mut xs: Vec<u64> = vec![0, len as u64 - 1, (1 << k) - 1];
        xs.extend((0..5).map(|_| rng.random_range(0..1u64 << k)));
        let bits = xs.len() * bits_per_onehot(k);
        let outs = run3(|mut session: Session| {
            let me = session.me();
            let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
            engine.preprocess(&mut session, bits).unwrap();
            let mut on = engine.on(&mut session);
            let x = input_p0(&mut on, &xs).unwrap();
            let r0 = on.session().rounds();
            let sent0 = on.session().stats().total().sum().bytes_sent;
            let hot = on.onehot_many(&x, k, len).unwrap();
            let rounds = on.session().rounds() - r0;
            let sent = on.session().stats().total().sum().bytes_sent - sent0;
            let flat: Vec<Secret> = hot.concat();
            let open = on.open_many(&flat).unwrap();
            (open, rounds, sent, engine.counters())
        });
        let groups = (k as usize).div_ceil(4);
        for (open, rounds, sent, c) in outs {
            for (v, &x) in xs.iter().enumerate() {
                for j in 0..len {
                    let want = u64::from(x == j as u64);
                    assert_eq!(to_u64(open[v * len + j]), want, "k = {k}, x = {x}, j = {j}");
                }
            }
            assert_eq!(rounds, rounds_per_onehot(k), "k = {k}");
            let products = xs.len() * len * (groups - 1);
            assert_eq!(sent, 16 * (2 * xs.len() + products) as u64, "k = {k}");
            assert_eq!(c.bits_used, bits as u64);
            assert_eq!(c.inline_refills, 0);
        }
    }
    // Misuse is caught before sending.
    let [r, _, _] = run_engine(seed, 0, |on| {
        let x = on.constant(1);
        Ok([
            on.onehot_many(&[x], 0, 1).is_err(),
            on.onehot_many(&[x], 2, 5).is_err(),
            on.onehot_many(&[x], 2, 0).is_err(),
        ])
    });
    assert_eq!(r, [true; 3]);
}

/// Bytes one batch of `m` less-than comparisons of `k`-bit values sends, at `P0` or `P1` and
/// at `P2`, from the protocol's description (crate::compare): the opening, one packed
/// message of AND openings per tree level, the packed output bits and the re-sharing; the
/// helper's monomial shares and triple bits, then its F_p corrections.
fn comparison_bytes(m: usize, k: u32) -> (u64, u64) {
    let words = |bits: usize| 8 * bits.div_ceil(64);
    let groups = (k as usize).div_ceil(8);
    let mut width = groups;
    let mut levels = 0;
    while width > 1 {
        let next = width.div_ceil(2);
        let gates = m * (width / 2) * (1 + usize::from(next != 1));
        levels += words(2 * gates);
        width = next;
    }
    let gates = m * and_gates(k)[0];
    let evaluator = 16 * m + levels + words(m) + 16 * m;
    let helper = 32 * m * groups + words(gates) + 16 * 2 * m;
    (evaluator as u64, helper as u64)
}

/// Rounds, bytes and AND gates of one batched comparison; comparisons take nothing from the
/// pool.
#[test]
fn comparison_costs_and_no_pool() {
    let seed = test_seed();
    for (k, m) in [
        (64u32, 5usize),
        (20, 1),
        (1, 3),
        (65, 2),
        (46, 100),
        (8, 70),
    ] {
        let outs = run3(|mut session: Session| {
            let me = session.me();
            let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
            engine.preprocess(&mut session, 8).unwrap();
            let r0 = session.rounds();
            let sent0 = session.stats().total().sum().bytes_sent;
            let mut on = engine.on(&mut session);
            let x = on.constant(3);
            let pairs = vec![(x, x); m];
            let _ = on.lt_many(&pairs, k).unwrap();
            let rounds = session.rounds() - r0;
            let sent = session.stats().total().sum().bytes_sent - sent0;
            (me, rounds, sent, engine.pool_len(), engine.counters())
        });
        let (evaluator, helper) = comparison_bytes(m, k);
        for (me, rounds, sent, pool, c) in outs {
            assert_eq!(pool, 8);
            assert_eq!((c.bits_used, c.inline_refills), (0, 0));
            if me == PartyId::P2 {
                assert!(rounds <= 1, "k = {k}: {rounds}");
                assert_eq!(sent, helper, "k = {k}");
                assert_eq!(c.ands, 0);
            } else {
                assert_eq!(rounds, rounds_per_comparison(k), "k = {k}");
                assert_eq!(sent, evaluator, "k = {k}");
                assert_eq!(c.ands, (m * and_gates(k)[0]) as u64);
            }
        }
    }
    // Without preprocessing, results are the same.
    let outs = run_engine(seed, 0, |on| {
        let x = on.constant(3);
        let y = on.constant(4);
        let lt = on.lt_many(&[(x, y), (y, x)], 8)?;
        on.open_many(&[lt[0].value(), lt[1].value()])
    });
    assert_eq!(outs[0], vec![Fp::ONE, Fp::ZERO]);
}

#[test]
fn pool_is_consumed_once() {
    let seed = test_seed();
    let outs = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
        engine.preprocess(&mut session, 300).unwrap();
        // 37 one-hot vectors of 8-bit values take 296 of the 300 bits; comparisons none.
        let mut on = engine.on(&mut session);
        let x = on.constant(0);
        let y = on.constant(255);
        let hot = on.onehot_many(&vec![x; 37], 8, 1).unwrap();
        let r = on.lt_many(&vec![(x, y); 5], 8).unwrap();
        let mut all: Vec<Secret> = hot.concat();
        all.extend(r.iter().map(|b| b.value()));
        let opened = on.open_many(&all).unwrap();
        (opened, engine.pool_len())
    });
    for (o, pool) in outs {
        assert!(o.iter().all(|&v| v == Fp::ONE));
        assert_eq!(pool, 300 - 37 * 8);
    }
}

/// The transcript of a batch of comparisons (and the arithmetic around it) is the same for
/// different secret values.
#[test]
fn transcripts_do_not_depend_on_values() {
    let seed = test_seed();
    let run = |vals: Vec<u64>| -> [Transcript; 3] {
        run3(|mut session: Session| {
            let me = session.me();
            let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
            session.record_transcript(true);
            engine.preprocess(&mut session, 64).unwrap();
            let mut on = engine.on(&mut session);
            let x = input_p0(&mut on, &vals).unwrap();
            let c = on.cmp_many(&[(x[0], x[1]), (x[2], x[3])], 40).unwrap();
            let s = on
                .select_many(&[(c[0].lt, x[0], x[1]), (c[1].eq, x[2], x[3])])
                .unwrap();
            let _ = on.open_to(PartyId::P1, &s).unwrap();
            session.take_transcript().unwrap()
        })
    };
    let a = run(vec![1, 2, 3, 3]);
    let b = run(vec![(1 << 40) - 1, 0, 17, 1 << 39]);
    assert_eq!(a, b);
}

#[test]
fn additive_inputs_from_dealt_shares() {
    // from_additive accepts any additive sharing, e.g. one dealt outside the engine.
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let shares = deal_additive(Fp::from_u64(42), &mut rng);
    let outs = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
        let mut on = engine.on(&mut session);
        let x = on
            .from_additive(&[shares[me.index()], Additive::public(Fp::ONE, me)])
            .unwrap();
        on.open_many(&x).unwrap()
    });
    assert!(outs.iter().all(|o| *o == vec![Fp::from_u64(42), Fp::ONE]));
}

#[test]
fn inner_products_match_plaintext() {
    let seed = test_seed();
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let lens = [0usize, 1, 5, 300];
    let xs: Vec<Vec<u64>> = lens
        .iter()
        .map(|&l| (0..l).map(|_| rng.random()).collect())
        .collect();
    let ys: Vec<Vec<u64>> = lens
        .iter()
        .map(|&l| (0..l).map(|_| rng.random()).collect())
        .collect();
    let flat: Vec<u64> = xs.iter().chain(&ys).flatten().copied().collect();
    let outs = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
        let sent0 = session.stats().total().sum().bytes_sent;
        let mut on = engine.on(&mut session);
        let v = input_p0(&mut on, &flat).unwrap();
        let total: usize = lens.iter().sum();
        let (x, y) = v.split_at(total);
        let mut pairs = Vec::new();
        let mut at = 0;
        for &l in &lens {
            pairs.push((&x[at..at + l], &y[at..at + l]));
            at += l;
        }
        let bad = on.dot_many(&[(&x[..2], &y[..3])]);
        assert!(matches!(bad, Err(MpcError::LengthMismatch { .. })));
        let d = on.dot_many(&pairs).unwrap();
        let opened = on.open_many(&d).unwrap();
        let sent = session.stats().total().sum().bytes_sent - sent0;
        (opened, sent, me)
    });
    for (opened, sent, me) in outs {
        for (j, o) in opened.iter().enumerate() {
            let want: Fp = xs[j]
                .iter()
                .zip(&ys[j])
                .map(|(&a, &b)| Fp::from_u64(a) * Fp::from_u64(b))
                .sum();
            assert_eq!(*o, want, "{me}, pair {j}");
        }
        // Input (P0 only: 2 elements per value), then one element per inner product and
        // one per opened value.
        let input = if me == PartyId::P0 {
            2 * 16 * flat.len() as u64
        } else {
            0
        };
        assert_eq!(sent, input + 16 * (lens.len() as u64) * 2, "{me}");
    }
}

#[test]
fn batches_beyond_one_frame_run_under_the_engine_frame_limit() {
    // 150 000 elements of 16 bytes: a message of the whole batch spans three frames of at
    // most 1 MiB.
    let seed = test_seed();
    let n = 150_000;
    let xs: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9) >> 3)
        .collect();
    let outs = run3(|mut session: Session| {
        session.limit_frame_bytes(doram_mpc::MAX_FRAME_BYTES as u32);
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).expect("setup");
        let mut on = engine.on(&mut session);
        let x = input_p0(&mut on, &xs).expect("input");
        let pairs: Vec<_> = x.iter().map(|&v| (v, v)).collect();
        let sq = on.mul_many(&pairs).expect("products");
        let opened = on.open_many(&sq).expect("open");
        let largest = session.stats().total().sum().largest_sent;
        (opened, largest, session.rounds())
    });
    for (opened, largest, _) in &outs {
        assert!(*largest <= doram_mpc::MAX_FRAME_BYTES as u64, "{largest}");
        for (i, v) in opened.iter().enumerate() {
            assert_eq!(*v, Fp::from_u64(xs[i]) * Fp::from_u64(xs[i]), "element {i}");
        }
    }
    // The frames of one message share a round: the same rounds as a small batch.
    let small = run3(|mut session: Session| {
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).expect("setup");
        let mut on = engine.on(&mut session);
        let x = input_p0(&mut on, &xs[..3]).expect("input");
        let pairs: Vec<_> = x.iter().map(|&v| (v, v)).collect();
        let sq = on.mul_many(&pairs).expect("products");
        on.open_many(&sq).expect("open");
        session.rounds()
    });
    for (i, (_, _, rounds)) in outs.iter().enumerate() {
        assert_eq!(*rounds, small[i]);
    }
}

/// A batch of comparisons whose messages span several frames (the helper's dealing is 32 bytes
/// per group and comparison): results still match plaintext under the engine's frame limit.
#[test]
fn comparison_batches_beyond_one_frame() {
    let seed = test_seed();
    let n = 40_000;
    let xs: Vec<u64> = (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a) & ((1 << 46) - 1))
        .collect();
    let outs = run3(|mut session: Session| {
        session.limit_frame_bytes(doram_mpc::MAX_FRAME_BYTES as u32);
        let me = session.me();
        let mut engine = Engine::setup(&mut session, party_seed(seed, me)).expect("setup");
        let mut on = engine.on(&mut session);
        let x = input_p0(&mut on, &xs).expect("input");
        let pairs: Vec<_> = (0..n).map(|i| (x[i], x[(i * 7 + 1) % n])).collect();
        let c = on.cmp_many(&pairs, 46).expect("comparisons");
        let bits: Vec<Secret> = c
            .iter()
            .flat_map(|c| [c.lt.value(), c.eq.value()])
            .collect();
        let opened = on.open_many(&bits).expect("open");
        let largest = session.stats().total().sum().largest_sent;
        (opened, largest)
    });
    for (opened, largest) in &outs {
        assert!(*largest <= doram_mpc::MAX_FRAME_BYTES as u64, "{largest}");
        for i in 0..n {
            let (a, b) = (xs[i], xs[(i * 7 + 1) % n]);
            assert_eq!(to_u64(opened[2 * i]), u64::from(a < b), "lt {i}");
            assert_eq!(to_u64(opened[2 * i + 1]), u64::from(a == b), "eq {i}");
        }
    }
}

/// The shuffle moves a vector and a matrix by one permutation (the same for rows and
/// columns), its inverse restores them, and its messages do not depend on the values.
#[test]
fn shuffle_permutes_consistently_and_inverts() {
    let seed = test_seed();
    let n = 20;
    let run = |vals: Vec<u64>| {
        run3(|mut session: Session| {
            let me = session.me();
            let mut engine = Engine::setup(&mut session, party_seed(seed, me)).unwrap();
            session.record_transcript(true);
            let mut on = engine.on(&mut session);
            let x = input_p0(&mut on, &vals).unwrap();
            let (v, m) = (x[..n].to_vec(), x[n..].to_vec());
            let sh = on.new_shuffle(n).unwrap();
            let r0 = on.session().rounds();
            let (pv, pm) = on.shuffle(&sh, vec![v], vec![m], false).unwrap();
            let rounds = on.session().rounds() - r0;
            let (bv, bm) = on.shuffle(&sh, pv.clone(), pm.clone(), true).unwrap();
            let all: Vec<Secret> = [&pv[0], &pm[0], &bv[0], &bm[0]]
                .into_iter()
                .flatten()
                .copied()
                .collect();
            let opened = on.open_many(&all).unwrap();
            (opened, rounds, session.take_transcript().unwrap())
        })
    };
    let vals: Vec<u64> = (0..(n + n * n) as u64).map(|i| 1000 + i).collect();
    let outs = run(vals.clone());
    let (opened, _, _) = &outs[0];
    let o: Vec<u64> = opened.iter().map(|&x| to_u64(x)).collect();
    let (pv, rest) = o.split_at(n);
    let (pm, rest) = rest.split_at(n * n);
    let (bv, bm) = rest.split_at(n);
    assert_eq!(bv, &vals[..n]);
    assert_eq!(bm, &vals[n..]);
    // π from the vector (its values are distinct), then the matrix must follow it.
    let pi: Vec<usize> = (0..n)
        .map(|i| pv.iter().position(|&y| y == vals[i]).unwrap())
        .collect();
    assert_ne!(
        pi,
        (0..n).collect::<Vec<_>>(),
        "a permutation of 20 is not the identity"
    );
    for i in 0..n {
        for j in 0..n {
            assert_eq!(pm[pi[i] * n + pi[j]], vals[n + i * n + j]);
        }
    }
    for (_, rounds, _) in &outs {
        assert!(*rounds <= 3);
    }
    let other = run(vals.iter().map(|v| v * 3 + 1).collect());
    for (a, b) in outs.iter().zip(&other) {
        assert_eq!(a.2, b.2, "transcripts depend on the values");
    }
}
