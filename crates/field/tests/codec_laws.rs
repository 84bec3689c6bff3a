//! Group and ring laws, encodings, random sampling and serde for every element type.

use doram_core::CodecError;
use doram_field::{
    Bit, Bits128, BlockSource, Fp, Group, Ring, Vector, Z64, decode_vec, encode_vec,
};
use proptest::prelude::*;

const P: u128 = 0xffff_ffff_ffff_ffe4_0000_0000_0000_0001;

/// A deterministic block source: a counter, or replayed fixed blocks.
struct Blocks {
    queue: Vec<[u8; 16]>,
    counter: u128,
    drawn: usize,
}

impl Blocks {
    fn counter() -> Self {
        Blocks {
            queue: Vec::new(),
            counter: 0,
            drawn: 0,
        }
    }
    fn fixed(mut blocks: Vec<[u8; 16]>) -> Self {
        blocks.reverse();
        Blocks {
            queue: blocks,
            counter: 0,
            drawn: 0,
        }
    }
}

impl BlockSource for Blocks {
    fn next_block(&mut self) -> [u8; 16] {
        self.drawn += 1;
        if let Some(b) = self.queue.pop() {
            return b;
        }
        self.counter = self
            .counter
            .wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
            + 1;
        self.counter.to_le_bytes()
    }
}

fn check_group_laws<G: Group>(a: G, b: G, c: G) {
    assert_eq!(a + G::ZERO, a);
    assert_eq!(a + b, b + a);
    assert_eq!((a + b) + c, a + (b + c));
    assert_eq!(a + (-a), G::ZERO);
    assert_eq!(a - b, a + (-b));
    let mut x = a;
    x += b;
    x -= b;
    assert_eq!(x, a);
    assert_eq!(G::default(), G::ZERO);
}

fn check_ring_laws<R: Ring>(a: R, b: R, c: R) {
    check_group_laws(a, b, c);
    assert_eq!(a * R::ONE, a);
    assert_eq!(a * b, b * a);
    assert_eq!((a * b) * c, a * (b * c));
    assert_eq!(a * (b + c), a * b + a * c);
    assert_eq!(R::from_u64(0), R::ZERO);
    assert_eq!(R::from_u64(1), R::ONE);
    assert_eq!(R::from_u64(2), R::ONE + R::ONE);
    let mut x = a;
    x *= b;
    assert_eq!(x, a * b);
}

fn check_roundtrip<G: Group>(x: G) {
    let mut buf = vec![0u8; G::BYTES];
    x.write_le(&mut buf);
    assert_eq!(G::read_le(&buf), Ok(x));
    let v = vec![x, G::ZERO, x];
    let enc = encode_vec(&v);
    assert_eq!(enc.len(), 3 * G::BYTES);
    assert_eq!(decode_vec::<G>(&enc, 3), Ok(v));
    // Wrong lengths are rejected, never truncated or padded.
    assert_eq!(
        decode_vec::<G>(&enc, 2),
        Err(CodecError::WrongLength {
            expected: 2 * G::BYTES,
            got: 3 * G::BYTES
        })
    );
    assert!(G::read_le(&buf[..G::BYTES - 1]).is_err());
    let mut long = buf.clone();
    long.push(0);
    assert!(G::read_le(&long).is_err());
}

fn fp_strategy() -> impl Strategy<Value = Fp> {
    prop_oneof![
        Just(Fp::ZERO),
        Just(Fp::ONE),
        Just(Fp::from_u128(P - 1)),
        any::<u128>().prop_map(Fp::from_u128),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn fp_laws(a in fp_strategy(), b in fp_strategy(), c in fp_strategy()) {
        check_ring_laws(a, b, c);
        check_roundtrip(a);
    }

    #[test]
    fn z64_laws(a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
        let (x, y, z) = (Z64(a), Z64(b), Z64(c));
        check_ring_laws(x, y, z);
        check_roundtrip(x);
        prop_assert_eq!((x + y).0, a.wrapping_add(b));
        prop_assert_eq!((x - y).0, a.wrapping_sub(b));
        prop_assert_eq!((x * y).0, a.wrapping_mul(b));
        prop_assert_eq!((-x).0, a.wrapping_neg());
        prop_assert_eq!(x.pow(c % 200), Z64((0..c % 200).fold(1u64, |acc, _| acc.wrapping_mul(a))));
    }

    #[test]
    fn bit_laws(a in any::<bool>(), b in any::<bool>(), c in any::<bool>()) {
        let (x, y, z) = (Bit(a), Bit(b), Bit(c));
        check_ring_laws(x, y, z);
        check_roundtrip(x);
        prop_assert_eq!(-x, x);
        prop_assert_eq!(x + y, Bit(a ^ b));
        prop_assert_eq!(x * y, Bit(a & b));
        prop_assert_eq!(x + x, Bit::ZERO);
    }

    #[test]
    fn bits128_laws(a in any::<u128>(), b in any::<u128>(), c in any::<u128>()) {
        let (x, y, z) = (Bits128(a), Bits128(b), Bits128(c));
        check_ring_laws(x, y, z);
        check_roundtrip(x);
        prop_assert_eq!(-x, x);
        prop_assert_eq!(x + y, Bits128(a ^ b));
        prop_assert_eq!(x * y, Bits128(a & b));
        prop_assert_eq!(x.to_bytes(), a.to_le_bytes());
        prop_assert_eq!(x.get(5), (a >> 5) & 1 == 1);
    }

    #[test]
    fn vector_laws(a in any::<[u128; 3]>(), b in any::<[u128; 3]>(), c in any::<[u128; 3]>()) {
        let f = |v: [u128; 3]| Vector(v.map(Fp::from_u128));
        let (x, y, z) = (f(a), f(b), f(c));
        check_ring_laws(x, y, z);
        check_roundtrip(x);
        prop_assert_eq!((x + y)[1], x[1] + y[1]);
        prop_assert_eq!((x * y)[2], x[2] * y[2]);
        prop_assert_eq!(x.scale(y[0])[1], x[1] * y[0]);
        let bits = |v: [u128; 3]| Vector(v.map(|w| Bit(w & 1 == 1)));
        check_ring_laws(bits(a), bits(b), bits(c));
        check_roundtrip(bits(a));
    }
}

#[test]
fn fp_rejects_non_canonical() {
    for v in [P, P + 1, P + 12345, u128::MAX] {
        assert_eq!(
            Fp::read_le(&v.to_le_bytes()),
            Err(CodecError::OutOfRange {
                what: "field element is not below p"
            })
        );
        assert!(Fp::try_from(v).is_err());
    }
    assert_eq!(
        Fp::read_le(&(P - 1).to_le_bytes()),
        Ok(Fp::from_u128(P - 1))
    );
    assert_eq!(
        Fp::read_le(&[0u8; 15]),
        Err(CodecError::WrongLength {
            expected: 16,
            got: 15
        })
    );
    // One bad element spoils the whole vector.
    let mut enc = encode_vec(&[Fp::ONE, Fp::ONE]);
    enc[16..].copy_from_slice(&P.to_le_bytes());
    assert!(decode_vec::<Fp>(&enc, 2).is_err());
    // Vectors too.
    let mut bytes = [0u8; 32];
    bytes[16..].copy_from_slice(&u128::MAX.to_le_bytes());
    assert!(Vector::<Fp, 2>::read_le(&bytes).is_err());
    assert_eq!(Vector::<Fp, 2>::BYTES, 32);
}

#[test]
fn bit_rejects_other_bytes() {
    assert_eq!(Bit::read_le(&[0]), Ok(Bit(false)));
    assert_eq!(Bit::read_le(&[1]), Ok(Bit(true)));
    for b in [2u8, 3, 0x80, 0xff] {
        assert_eq!(
            Bit::read_le(&[b]),
            Err(CodecError::OutOfRange {
                what: "bit byte is neither 0 nor 1"
            })
        );
    }
    assert_eq!(
        Bit::read_le(&[]),
        Err(CodecError::WrongLength {
            expected: 1,
            got: 0
        })
    );
    assert_eq!(
        Bit::read_le(&[0, 0]),
        Err(CodecError::WrongLength {
            expected: 1,
            got: 2
        })
    );
    assert!(decode_vec::<Bit>(&[1, 0, 7], 3).is_err());
}

#[test]
fn random_from_blocks() {
    // Fp: blocks ≥ p are skipped.
    let mut src = Blocks::fixed(vec![
        u128::MAX.to_le_bytes(),
        P.to_le_bytes(),
        5u128.to_le_bytes(),
    ]);
    assert_eq!(Fp::random_from(&mut src), Fp::from_u64(5));
    assert_eq!(src.drawn, 3);
    // Fp: p − 1 is accepted.
    let mut src = Blocks::fixed(vec![(P - 1).to_le_bytes()]);
    assert_eq!(Fp::random_from(&mut src), Fp::from_u128(P - 1));

    // Z64: the low 8 bytes of one block.
    let block = 0x1111_2222_3333_4444_5555_6666_7777_8888u128;
    let mut src = Blocks::fixed(vec![block.to_le_bytes()]);
    assert_eq!(Z64::random_from(&mut src), Z64(0x5555_6666_7777_8888));
    assert_eq!(src.drawn, 1);

    // Bit: the low bit of the first byte.
    let mut src = Blocks::fixed(vec![[3u8; 16], [2u8; 16]]);
    assert_eq!(Bit::random_from(&mut src), Bit(true));
    assert_eq!(Bit::random_from(&mut src), Bit(false));

    // Bits128: the whole block.
    let mut src = Blocks::fixed(vec![block.to_le_bytes()]);
    assert_eq!(Bits128::random_from(&mut src), Bits128(block));

    // Vectors draw their components in order.
    let mut src = Blocks::fixed(vec![
        7u128.to_le_bytes(),
        P.to_le_bytes(),
        9u128.to_le_bytes(),
    ]);
    let v = Vector::<Fp, 2>::random_from(&mut src);
    assert_eq!(v, Vector([Fp::from_u64(7), Fp::from_u64(9)]));

    // A counter source gives distinct values.
    let mut src = Blocks::counter();
    let xs: Vec<Fp> = (0..100).map(|_| Fp::random_from(&mut src)).collect();
    let mut ys: Vec<u128> = xs.iter().map(|x| x.to_u128()).collect();
    ys.sort_unstable();
    ys.dedup();
    assert_eq!(ys.len(), 100);
}

#[test]
fn serde_round_trips() {
    let x = Fp::from_u128(P - 1);
    let json = serde_json::to_string(&x).expect("serialize");
    assert_eq!(json, "\"340282366920938462946865773367900766208\"");
    assert_eq!(serde_json::from_str::<Fp>(&json).expect("deserialize"), x);
    assert!(serde_json::from_str::<Fp>("\"340282366920938462946865773367900766209\"").is_err());

    let bin = postcard::to_allocvec(&x).expect("serialize");
    assert_eq!(bin, x.to_le_bytes());
    assert_eq!(postcard::from_bytes::<Fp>(&bin).expect("deserialize"), x);
    assert!(postcard::from_bytes::<Fp>(&u128::MAX.to_le_bytes()).is_err());

    let v = Vector([Fp::ONE, x]);
    let bin = postcard::to_allocvec(&v).expect("serialize");
    assert_eq!(bin.len(), 32);
    assert_eq!(
        postcard::from_bytes::<Vector<Fp, 2>>(&bin).expect("deserialize"),
        v
    );
    let json = serde_json::to_string(&v).expect("serialize");
    assert_eq!(
        serde_json::from_str::<Vector<Fp, 2>>(&json).expect("deserialize"),
        v
    );
    assert!(serde_json::from_str::<Vector<Fp, 2>>("[\"1\"]").is_err());
    assert!(serde_json::from_str::<Vector<Fp, 2>>("[\"1\",\"2\",\"3\"]").is_err());

    for z in [Z64(0), Z64(u64::MAX)] {
        let j = serde_json::to_string(&z).expect("serialize");
        assert_eq!(serde_json::from_str::<Z64>(&j).expect("deserialize"), z);
    }
    let b = Bits128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
    let bin = postcard::to_allocvec(&b).expect("serialize");
    assert_eq!(
        postcard::from_bytes::<Bits128>(&bin).expect("deserialize"),
        b
    );
    let bit = Bit(true);
    let j = serde_json::to_string(&bit).expect("serialize");
    assert_eq!(serde_json::from_str::<Bit>(&j).expect("deserialize"), bit);
}

#[test]
fn display_formats() {
    assert_eq!(Z64(42).to_string(), "42");
    assert_eq!(Bit(true).to_string(), "1");
    assert_eq!(Bits128(1).to_string(), "00000000000000000000000000000001");
    assert_eq!(
        format!("{:?}", Vector([Z64(1), Z64(2)])),
        "[Z64(1), Z64(2)]"
    );
}
