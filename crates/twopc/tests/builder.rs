//! The circuit builder: every gadget against plaintext arithmetic on random inputs, with its
//! AND count; constant folding; a sample of gadgets in 2PC over the in-process mesh.
#![allow(clippy::unwrap_used)]

mod common;

use common::{mesh, run2, test_rng};
use doram_twopc::builder::{Bit, Builder, GateCounts, Word, le_bits, le_value};
use doram_twopc::gc::{Circuit, Evaluator, Garbler, random_delta};
use doram_twopc::{TwopcError, driver, insecure_rng_for_tests};
use rand::Rng;
use rand_chacha::ChaCha12Rng;

const SAMPLES: usize = 40;

fn mask(n: usize) -> u128 {
    if n >= 128 { u128::MAX } else { (1 << n) - 1 }
}

/// The two's complement value of the low `n` bits of `x`.
fn signed(x: u128, n: usize) -> i128 {
    let x = x & mask(n);
    if n > 0 && n < 128 && (x >> (n - 1)) & 1 == 1 {
        x as i128 - (1i128 << n)
    } else {
        x as i128
    }
}

fn rotl(x: u128, k: usize, n: usize) -> u128 {
    let k = k % n;
    if k == 0 {
        x
    } else {
        ((x << k) | (x >> (n - k))) & mask(n)
    }
}

fn ceil_log2(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as usize
}

/// Interesting values first (0, 1, all ones, the sign bit), then random ones.
fn samples(rng: &mut ChaCha12Rng, n: usize) -> Vec<u128> {
    let mut v = vec![0, 1, mask(n), 1 << (n - 1), mask(n) >> 1];
    v.extend((0..SAMPLES).map(|_| rng.random::<u128>() & mask(n)));
    v.into_iter().map(|x| x & mask(n)).collect()
}

/// A circuit of `f` on a garbler word and an evaluator word, and its gate counts.
fn two_words<const N: usize, const M: usize>(
    f: impl Fn(&mut Builder, &Word<N>, &Word<N>) -> Word<M>,
) -> (Circuit, GateCounts) {
    let mut b = Builder::new();
    let x: Word<N> = b.garbler_word();
    let y: Word<N> = b.evaluator_word();
    let z = f(&mut b, &x, &y);
    b.output_word(&z);
    let counts = b.counts();
    let c = b.finish().unwrap();
    // `finish` adds at most an XOR and an INV for constant outputs.
    let total = GateCounts::of(&c);
    assert_eq!(total.and, counts.and);
    assert!(total.xor - counts.xor <= 1 && total.inv - counts.inv <= 1);
    (c, counts)
}

fn eval(c: &Circuit, x: u128, y: u128) -> u128 {
    let g = c.garbler_inputs();
    let e = c.evaluator_inputs();
    le_value(&c.eval_plain(&le_bits(x, g), &le_bits(y, e)).unwrap()).unwrap()
}

/// Checks a two-word gadget against `want` on sample pairs, and its AND count.
fn check<const N: usize, const M: usize>(
    rng: &mut ChaCha12Rng,
    what: &str,
    ands: usize,
    f: impl Fn(&mut Builder, &Word<N>, &Word<N>) -> Word<M>,
    want: impl Fn(u128, u128) -> u128,
) {
    let (c, counts) = two_words(f);
    assert_eq!(counts.and, ands, "{what} on {N} bits: AND gates");
    let xs = samples(rng, N);
    let ys = samples(rng, N);
    for &x in &xs {
        for &y in ys.iter().take(8) {
            assert_eq!(
                eval(&c, x, y),
                want(x, y) & mask(M),
                "{what}({x}, {y}) on {N} bits"
            );
        }
    }
    for (&x, &y) in xs.iter().zip(ys.iter().rev()) {
        assert_eq!(
            eval(&c, x, y),
            want(x, y) & mask(M),
            "{what}({x}, {y}) on {N} bits"
        );
    }
}

fn bit(b: Bit) -> Word<1> {
    Word::from([b])
}

fn arithmetic<const N: usize>(rng: &mut ChaCha12Rng) {
    let m = mask(N);
    check::<N, N>(rng, "add", N - 1, |b, x, y| b.add(x, y), |x, y| x + y);
    check::<N, N>(
        rng,
        "sub",
        N - 1,
        |b, x, y| b.sub(x, y),
        |x, y| x.wrapping_sub(y),
    );
    check::<N, N>(
        rng,
        "mul",
        N * N - N + 1,
        |b, x, y| b.mul(x, y),
        |x, y| x.wrapping_mul(y),
    );
    check::<N, N>(rng, "xor", 0, |b, x, y| b.xor_word(x, y), |x, y| x ^ y);
    check::<N, N>(rng, "and", N, |b, x, y| b.and_word(x, y), |x, y| x & y);
    check::<N, N>(rng, "or", N, |b, x, y| b.or_word(x, y), |x, y| x | y);
    check::<N, N>(rng, "not", 0, |b, x, _| b.not_word(x), |x, _| !x & m);

    // Carry in from the garbler's top input bit, carry out as the top output bit.
    let mut b = Builder::new();
    let x: Word<N> = b.garbler_word();
    let cin = b.garbler_bit();
    let y: Word<N> = b.evaluator_word();
    let (s, cout) = b.add_with_carry(&x, &y, cin);
    assert_eq!(b.counts().and, N, "add_with_carry on {N} bits");
    b.output_word(&s);
    b.output(cout);
    let c = b.finish().unwrap();
    for (&x, &y) in samples(rng, N).iter().zip(&samples(rng, N)) {
        for cin in [0, 1] {
            let got = eval(&c, x | (cin << N), y);
            assert_eq!(got, x + y + cin, "{x} + {y} + {cin} on {N} bits");
        }
    }
}

type Cmp<const N: usize> = fn(&mut Builder, &Word<N>, &Word<N>) -> Bit;
type UnsignedCase<const N: usize> = (&'static str, Cmp<N>, fn(u128, u128) -> bool);
type SignedCase<const N: usize> = (&'static str, Cmp<N>, fn(i128, i128) -> bool);
type Shift<const N: usize, const K: usize> = fn(&mut Builder, &Word<N>, &Word<K>) -> Word<N>;
type ShiftCase<const N: usize, const K: usize> =
    (&'static str, Shift<N, K>, usize, fn(u128, usize) -> u128);

fn comparisons<const N: usize>(rng: &mut ChaCha12Rng) {
    let unsigned: [UnsignedCase<N>; 4] = [
        ("lt", Builder::lt, |x, y| x < y),
        ("gt", Builder::gt, |x, y| x > y),
        ("le", Builder::le, |x, y| x <= y),
        ("ge", Builder::ge, |x, y| x >= y),
    ];
    for (what, f, want) in unsigned {
        check::<N, 1>(
            rng,
            what,
            N,
            |b, x, y| bit(f(b, x, y)),
            |x, y| u128::from(want(x, y)),
        );
    }
    let signed_cmps: [SignedCase<N>; 4] = [
        ("lt_signed", Builder::lt_signed, |x, y| x < y),
        ("gt_signed", Builder::gt_signed, |x, y| x > y),
        ("le_signed", Builder::le_signed, |x, y| x <= y),
        ("ge_signed", Builder::ge_signed, |x, y| x >= y),
    ];
    for (what, f, want) in signed_cmps {
        check::<N, 1>(
            rng,
            what,
            N,
            |b, x, y| bit(f(b, x, y)),
            |x, y| u128::from(want(signed(x, N), signed(y, N))),
        );
    }
    check::<N, 1>(
        rng,
        "eq",
        N - 1,
        |b, x, y| bit(b.eq(x, y)),
        |x, y| u128::from(x == y),
    );
    check::<N, 1>(
        rng,
        "ne",
        N - 1,
        |b, x, y| bit(b.ne(x, y)),
        |x, y| u128::from(x != y),
    );
    // Equality is rare on random inputs: compare each sample with itself too.
    let (c, _) = two_words::<N, 1>(|b, x, y| bit(b.eq(x, y)));
    for x in samples(rng, N) {
        assert_eq!(eval(&c, x, x), 1, "{x} = {x} on {N} bits");
        assert_eq!(eval(&c, x, x ^ 1), 0, "{x} = {x} ^ 1 on {N} bits");
    }
}

fn selection<const N: usize>(rng: &mut ChaCha12Rng) {
    // The select bit is the evaluator's lowest bit; the words are the garbler's two halves.
    let mut b = Builder::new();
    let x: Word<N> = b.garbler_word();
    let y: Word<N> = b.garbler_word();
    let s = b.evaluator_bit();
    let z = b.mux(s, &x, &y);
    assert_eq!(b.counts().and, N, "mux on {N} bits");
    b.output_word(&z);
    let c = b.finish().unwrap();
    for (&x, &y) in samples(rng, N).iter().zip(&samples(rng, N)) {
        let xy = x | (y << N);
        assert_eq!(eval(&c, xy, 0), x);
        assert_eq!(eval(&c, xy, 1), y);
    }
}

fn constant_shifts<const N: usize>(rng: &mut ChaCha12Rng) {
    for k in [0, 1, N / 2, N - 1, N, N + 3] {
        check::<N, N>(
            rng,
            "shl",
            0,
            |_, x, _| x.shl(k),
            |x, _| {
                if k >= 128 { 0 } else { x << k }
            },
        );
        check::<N, N>(
            rng,
            "shr",
            0,
            |_, x, _| x.shr(k),
            |x, _| x.checked_shr(k as u32).unwrap_or(0),
        );
        check::<N, N>(
            rng,
            "sar",
            0,
            |_, x, _| x.sar(k),
            |x, _| (signed(x, N) >> k.min(127)) as u128,
        );
        check::<N, N>(rng, "rotl", 0, |_, x, _| x.rotl(k), |x, _| rotl(x, k, N));
        check::<N, N>(
            rng,
            "rotr",
            0,
            |_, x, _| x.rotr(k),
            |x, _| rotl(x, N - k % N, N),
        );
    }
}

/// The AND count of `shl_var`/`shr_var` on N bits by a K-bit amount (module docs).
fn shift_ands(n: usize, k: usize) -> usize {
    let l = ceil_log2(n);
    n * k.min(l) + if k > l { k - l - 1 + n } else { 0 }
}

fn rotate_ands(n: usize, k: usize) -> usize {
    n * (0..k)
        .filter(|&j| !(1u128 << j).is_multiple_of(n as u128))
        .count()
}

/// Secret shifts and rotations: the garbler's word, the evaluator's K-bit amount.
fn variable_shifts<const N: usize, const K: usize>(rng: &mut ChaCha12Rng) {
    let cases: [ShiftCase<N, K>; 4] = [
        ("shl_var", Builder::shl_var, shift_ands(N, K), |x, a| {
            x.checked_shl(a as u32).unwrap_or(0) & mask(N)
        }),
        ("shr_var", Builder::shr_var, shift_ands(N, K), |x, a| {
            x.checked_shr(a as u32).unwrap_or(0)
        }),
        ("rotl_var", Builder::rotl_var, rotate_ands(N, K), |x, a| {
            rotl(x, a % N, N)
        }),
        ("rotr_var", Builder::rotr_var, rotate_ands(N, K), |x, a| {
            rotl(x, N - a % N, N)
        }),
    ];
    for (what, f, ands, want) in cases {
        let mut b = Builder::new();
        let x: Word<N> = b.garbler_word();
        let a: Word<K> = b.evaluator_word();
        let z = f(&mut b, &x, &a);
        assert_eq!(b.counts().and, ands, "{what} on {N} bits by {K} bits");
        b.output_word(&z);
        let c = b.finish().unwrap();
        let amounts: Vec<u128> = if K <= 8 {
            (0..1u128 << K).collect()
        } else {
            samples(rng, K)
        };
        for x in samples(rng, N).into_iter().take(12) {
            for &a in &amounts {
                assert_eq!(
                    eval(&c, x, a),
                    want(x, a as usize),
                    "{what}({x}, {a}) on {N} bits"
                );
            }
        }
    }
}

/// Secret lookup: M entries of N bits from the garbler, a K-bit index from the evaluator.
fn lookup<const N: usize, const K: usize>(rng: &mut ChaCha12Rng, m: usize) {
    let mut b = Builder::new();
    let table: Vec<Word<N>> = (0..m).map(|_| b.garbler_word()).collect();
    let i: Word<K> = b.evaluator_word();
    let z = b.lookup(&table, &i);
    assert_eq!(
        b.counts().and,
        (m.max(1) - 1) * N,
        "lookup of {m} × {N} bits"
    );
    b.output_word(&z);
    let c = b.finish().unwrap();
    for _ in 0..5 {
        let entries: Vec<u128> = (0..m).map(|_| rng.random::<u128>() & mask(N)).collect();
        let bits: Vec<bool> = entries.iter().flat_map(|&e| le_bits(e, N)).collect();
        for (i, &e) in entries.iter().enumerate() {
            let out = c.eval_plain(&bits, &le_bits(i as u128, K)).unwrap();
            assert_eq!(le_value(&out), Some(e), "entry {i} of {m}");
        }
        // Beyond the table, some entry (which one the tree fixes).
        for i in m..1 << K {
            let out = le_value(&c.eval_plain(&bits, &le_bits(i as u128, K)).unwrap()).unwrap();
            assert!(entries.contains(&out) || m == 0, "index {i} of {m}");
        }
    }
}

macro_rules! widths {
    ($name:ident: $($n:literal),*) => {
        #[test]
        fn $name() {
            let mut rng = test_rng(stringify!($name));
            $(
                arithmetic::<$n>(&mut rng);
                comparisons::<$n>(&mut rng);
                selection::<$n>(&mut rng);
                constant_shifts::<$n>(&mut rng);
            )*
        }
    };
}

widths!(gadgets_small_widths: 1, 2, 3, 5, 8);
widths!(gadgets_wide_widths: 13, 16, 31, 32, 63);

#[test]
fn barrel_shifters() {
    let mut rng = test_rng("barrel shifters");
    variable_shifts::<1, 2>(&mut rng);
    variable_shifts::<5, 3>(&mut rng);
    variable_shifts::<5, 4>(&mut rng);
    variable_shifts::<8, 3>(&mut rng);
    variable_shifts::<8, 2>(&mut rng);
    variable_shifts::<8, 6>(&mut rng);
    variable_shifts::<12, 4>(&mut rng);
    variable_shifts::<16, 4>(&mut rng);
    variable_shifts::<32, 5>(&mut rng);
    variable_shifts::<64, 6>(&mut rng);
    variable_shifts::<64, 8>(&mut rng);
    // The documented figure: N·log₂ N for a power of two and a log₂ N-bit amount.
    assert_eq!(shift_ands(32, 5), 32 * 5);
    assert_eq!(rotate_ands(32, 5), 32 * 5);
    assert_eq!(rotate_ands(32, 7), 32 * 5);
}

#[test]
fn table_lookups() {
    let mut rng = test_rng("lookup");
    lookup::<8, 0>(&mut rng, 1);
    lookup::<8, 1>(&mut rng, 2);
    lookup::<8, 2>(&mut rng, 3);
    lookup::<8, 2>(&mut rng, 4);
    lookup::<16, 3>(&mut rng, 5);
    lookup::<16, 4>(&mut rng, 16);
    lookup::<32, 5>(&mut rng, 20);
    lookup::<1, 6>(&mut rng, 64);
}

#[test]
fn constants_fold_without_gates() {
    let mut b = Builder::new();
    let x: Word<16> = b.garbler_word();
    let k = Word::<16>::constant(0xbeef);
    let zero = Word::<16>::constant(0);
    let ones = Word::<16>::constant(0xffff);
    // Operations on constants only: no gates at all.
    let s = b.add(&k, &Word::constant(0x1111));
    assert_eq!(s.as_constant(), Some(0xd000));
    let p = b.mul(&k, &Word::constant(3));
    assert_eq!(p.as_constant(), Some((0xbeef * 3) & 0xffff));
    let l = b.lt(&k, &ones);
    assert_eq!(l.as_constant(), Some(true));
    let t = b.lookup(&[zero, k, ones], &Word::<2>::constant(1));
    assert_eq!(t.as_constant(), Some(0xbeef));
    assert_eq!(b.counts(), GateCounts::default());
    // With one secret operand, constant bits fold: x ∧ 0, x ⊕ 0 and x · 1 cost nothing.
    let a = b.and_word(&x, &zero);
    assert_eq!(a.as_constant(), Some(0));
    let same = b.xor_word(&x, &zero);
    assert_eq!(same, x);
    let one = b.mul(&x, &Word::constant(1));
    assert_eq!(b.counts().and, 0, "x · 1");
    b.output_word(&one);
    // x ⊕ 1 is one INV, still no AND.
    let nx = b.xor_word(&x, &ones);
    assert_eq!(
        b.counts(),
        GateCounts {
            and: 0,
            xor: 0,
            inv: 16
        }
    );
    // An adder with a constant: cheaper than with a secret (bits where the constant is 0
    // and the carry is known fold).
    let before = b.counts().and;
    let inc = b.add(&x, &Word::constant(1));
    assert!(b.counts().and - before < 15, "x + 1");
    b.output_word(&nx);
    b.output_word(&inc);
    b.output(Bit::ONE);
    b.output(Bit::ZERO);
    let c = b.finish().unwrap();
    for v in [0u128, 1, 0x7fff, 0xffff, 0x1234] {
        let out = c.eval_plain(&le_bits(v, 16), &[]).unwrap();
        assert_eq!(le_value(&out[..16]), Some(v));
        assert_eq!(le_value(&out[16..32]), Some(!v & 0xffff));
        assert_eq!(le_value(&out[32..48]), Some((v + 1) & 0xffff));
        assert_eq!(&out[48..], &[true, false]);
    }
}

#[test]
fn inputs_are_numbered_per_party_in_declaration_order() {
    let mut b = Builder::new();
    let g0 = b.garbler_bit();
    let e0 = b.evaluator_bit();
    let t = b.and(g0, e0);
    let g1 = b.garbler_bit();
    let e1 = b.evaluator_bit();
    let u = b.xor(g1, e1);
    b.output_bits(&[g0, g1, e0, e1, t, u]);
    let c = b.finish().unwrap();
    assert_eq!((c.garbler_inputs(), c.evaluator_inputs()), (2, 2));
    let out = c.eval_plain(&[true, false], &[true, true]).unwrap();
    assert_eq!(out, vec![true, false, true, true, true, true]);
}

#[test]
fn constant_outputs_need_an_input_and_foreign_bits_are_refused() {
    let mut b = Builder::new();
    b.output(Bit::ONE);
    assert!(matches!(b.finish(), Err(TwopcError::ApiMisuse(_))));

    let mut other = Builder::new();
    let _ = other.garbler_word::<8>();
    let foreign = other.garbler_bit();
    let mut b = Builder::new();
    let x = b.garbler_bit();
    let y = b.xor(x, foreign);
    b.output(y);
    assert!(matches!(b.finish(), Err(TwopcError::ApiMisuse(_))));
}

#[test]
fn word_conversions() {
    let w = Word::<8>::constant(0x9c);
    assert_eq!(w.resize::<16>().as_constant(), Some(0x9c));
    assert_eq!(w.sign_extend::<16>().as_constant(), Some(0xff9c));
    assert_eq!(w.resize::<4>().as_constant(), Some(0xc));
    assert_eq!(w.msb().as_constant(), Some(true));
    assert_eq!(Word::<200>::constant(5).as_constant(), None);
    assert_eq!(le_value(&le_bits(u128::MAX, 130)), Some(u128::MAX));
    let mut high = le_bits(0, 130);
    high[129] = true;
    assert_eq!(le_value(&high), None);
}

/// Several gadgets on 16-bit words in one circuit: the garbler's x and table, the
/// evaluator's y, a select bit and a shift amount.
fn sample_circuit() -> Circuit {
    let mut b = Builder::new();
    let x: Word<16> = b.garbler_word();
    let table: Vec<Word<16>> = (0..5).map(|_| b.garbler_word()).collect();
    let y: Word<16> = b.evaluator_word();
    let s = b.evaluator_bit();
    let amount: Word<4> = b.evaluator_word();
    let index: Word<3> = b.evaluator_word();
    let outs = [
        b.add(&x, &y),
        b.sub(&x, &y),
        b.mul(&x, &y),
        b.mux(s, &x, &y),
        b.shl_var(&x, &amount),
        b.rotr_var(&y, &amount),
        b.lookup(&table, &index),
    ];
    for o in &outs {
        b.output_word(o);
    }
    let bits = [b.lt(&x, &y), b.lt_signed(&x, &y), b.eq(&x, &y)];
    b.output_bits(&bits);
    b.finish().unwrap()
}

fn plain_sample(
    x: u128,
    table: &[u128],
    y: u128,
    s: bool,
    amount: u128,
    index: usize,
) -> Vec<bool> {
    let m = mask(16);
    let words = [
        (x + y) & m,
        x.wrapping_sub(y) & m,
        x.wrapping_mul(y) & m,
        if s { y } else { x },
        (x << amount) & m,
        rotl(y, 16 - amount as usize, 16),
        table[index.min(4)],
    ];
    let mut out: Vec<bool> = words.iter().flat_map(|&w| le_bits(w, 16)).collect();
    out.extend([x < y, signed(x, 16) < signed(y, 16), x == y]);
    out
}

#[test]
fn gadgets_in_two_party_computation() {
    let mut rng = test_rng("gadgets in 2PC");
    let c = sample_circuit();
    for round in 0..4 {
        let x = rng.random::<u128>() & 0xffff;
        let y = if round == 0 {
            x
        } else {
            rng.random::<u128>() & 0xffff
        };
        let table: Vec<u128> = (0..5).map(|_| rng.random::<u128>() & 0xffff).collect();
        let (s, amount, index) = (
            rng.random::<bool>(),
            rng.random_range(0..16),
            rng.random_range(0..5),
        );
        let mut g_in = le_bits(x, 16);
        g_in.extend(table.iter().flat_map(|&t| le_bits(t, 16)));
        let mut e_in = le_bits(y, 16);
        e_in.push(s);
        e_in.extend(le_bits(amount, 4));
        e_in.extend(le_bits(index as u128, 3));
        let want = plain_sample(x, &table, y, s, amount, index);
        assert_eq!(
            c.eval_plain(&g_in, &e_in).unwrap(),
            want,
            "plaintext, round {round}"
        );
        let (g_out, e_out) = run2(
            mesh(),
            |mut sess| {
                let mut rng = insecure_rng_for_tests(40 + round);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut sess, delta, &mut rng).unwrap();
                let mut g = Garbler::new(delta, c.wires()).unwrap();
                driver::garble(&mut sess, &mut ot, &mut g, &c, &g_in, &mut rng).unwrap()
            },
            |mut sess| {
                let mut rng = insecure_rng_for_tests(50 + round);
                let mut ot = driver::iknp_receiver_setup(&mut sess, &mut rng).unwrap();
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut sess, &mut ot, &mut e, &c, &e_in).unwrap()
            },
        );
        assert_eq!(e_out, want, "2PC, round {round}");
        assert_eq!(g_out, want);
    }
}

#[test]
fn compacted_random_circuits_compute_the_same() {
    use doram_twopc::builder::compact_wires;
    let mut rng = test_rng("compact random");
    for round in 0..100 {
        let mut b = Builder::new();
        let mut bits: Vec<Bit> = Vec::new();
        let (g, e) = (rng.random_range(1..6), rng.random_range(0..6));
        bits.extend(b.garbler_bits(g));
        bits.extend(b.evaluator_bits(e));
        bits.push(Bit::ONE);
        for _ in 0..rng.random_range(1..200) {
            let x = bits[rng.random_range(0..bits.len())];
            let y = bits[rng.random_range(0..bits.len())];
            let z = match rng.random_range(0..4) {
                0 => b.and(x, y),
                1 => b.xor(x, y),
                2 => b.or(x, y),
                _ => b.not(x),
            };
            bits.push(z);
        }
        for _ in 0..rng.random_range(1..12) {
            b.output(bits[rng.random_range(0..bits.len())]);
        }
        let c = b.finish().unwrap();
        let cc = compact_wires(&c);
        assert_eq!(GateCounts::of(&cc), GateCounts::of(&c));
        assert!(cc.wires() <= c.wires());
        for _ in 0..8 {
            let x: Vec<bool> = (0..g).map(|_| rng.random()).collect();
            let y: Vec<bool> = (0..e).map(|_| rng.random()).collect();
            assert_eq!(
                cc.eval_plain(&x, &y).unwrap(),
                c.eval_plain(&x, &y).unwrap(),
                "circuit {round}"
            );
        }
    }
}
