//! Bristol Fashion: the collection's AES-128 and SHA-256 circuits against FIPS known answers,
//! in plaintext and in 2PC; export/import round trips; malformed files give typed errors
//! naming the line, and arbitrary bytes never panic the parser.
#![allow(clippy::unwrap_used)]

mod common;

use common::{mesh, random_bits, run2, test_rng};
use doram_twopc::bristol::{
    self, BristolCircuit, BristolErrorKind as K, ParseLimits, export, export_two_party,
};
use doram_twopc::builder::{Bit, Builder, GateCounts, Word, compact_wires, le_bits};
use doram_twopc::gc::{Circuit, Evaluator, Garbler, Gate, random_delta};
use doram_twopc::{driver, insecure_rng_for_tests};
use proptest::prelude::*;
use rand::Rng;

const AES_128: &[u8] = include_bytes!("data/aes_128.txt");
const SHA_256: &[u8] = include_bytes!("data/sha256.txt");

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The wire values of a byte string in the collection's bit order: the bytes read as a
/// big-endian number, least significant bit first (wire 0 = low bit of the last byte).
fn wires_of(bytes: &[u8]) -> Vec<bool> {
    let n = bytes.len();
    (0..8 * n)
        .map(|i| (bytes[n - 1 - i / 8] >> (i % 8)) & 1 == 1)
        .collect()
}

fn bytes_of(wires: &[bool]) -> Vec<u8> {
    let n = wires.len() / 8;
    (0..n)
        .map(|j| {
            (0..8).fold(0u8, |acc, k| {
                acc | (u8::from(wires[8 * (n - 1 - j) + k]) << k)
            })
        })
        .collect()
}

fn aes() -> BristolCircuit {
    bristol::parse(AES_128).unwrap()
}

fn sha() -> BristolCircuit {
    bristol::parse(SHA_256).unwrap()
}

/// FIPS-197 Appendix C.1 (AES-128).
const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const AES_PLAIN: &str = "00112233445566778899aabbccddeeff";
const AES_CIPHER: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

/// FIPS 180-4 §5.3.3: the initial hash value H(0) of SHA-256.
const SHA_IV: &str = "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19";

/// The padded one-block message "abc" (FIPS 180-4 §5.1.1).
fn abc_block() -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"abc\x80");
    b[63] = 24;
    b
}

/// SHA-256("abc"), FIPS 180-4 example (one block).
const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[test]
fn collection_gate_counts() {
    let a = aes();
    assert_eq!(a.inputs(), &[128, 128]);
    assert_eq!(a.outputs(), &[128]);
    assert_eq!(
        GateCounts::of(a.circuit()),
        GateCounts {
            and: 6400,
            xor: 28176,
            inv: 2087
        }
    );
    assert_eq!(a.circuit().and_gates(), 6400);
    let s = sha();
    assert_eq!(s.inputs(), &[512, 256]);
    assert_eq!(s.outputs(), &[256]);
    assert_eq!(
        GateCounts::of(s.circuit()),
        GateCounts {
            and: 22573,
            xor: 110644,
            inv: 1856
        }
    );
}

#[test]
fn aes_128_known_answer_in_plaintext() {
    let c = aes().two_party(1).unwrap();
    let out = c
        .eval_plain(&wires_of(&hex(AES_KEY)), &wires_of(&hex(AES_PLAIN)))
        .unwrap();
    assert_eq!(bytes_of(&out), hex(AES_CIPHER));
}

#[test]
fn aes_128_matches_the_aes_crate_on_random_blocks() {
    use aes::cipher::{BlockEncrypt, KeyInit};
    let mut rng = test_rng("AES against the aes crate");
    let c = aes().two_party(1).unwrap();
    for _ in 0..8 {
        let key: [u8; 16] = rng.random();
        let block: [u8; 16] = rng.random();
        let mut want = aes::Block::from(block);
        aes::Aes128::new(&key.into()).encrypt_block(&mut want);
        let out = c.eval_plain(&wires_of(&key), &wires_of(&block)).unwrap();
        assert_eq!(bytes_of(&out), want.to_vec());
    }
}

#[test]
fn sha_256_known_answers_in_plaintext() {
    let c = sha().two_party(1).unwrap();
    let out = c
        .eval_plain(&wires_of(&abc_block()), &wires_of(&hex(SHA_IV)))
        .unwrap();
    assert_eq!(bytes_of(&out), hex(SHA_ABC));

    // FIPS 180-4's two-block example: the chaining value of the first block feeds the second.
    let msg = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    let mut padded = msg.to_vec();
    padded.push(0x80);
    padded.resize(120, 0);
    padded.extend_from_slice(&(8 * msg.len() as u64).to_be_bytes());
    let mut h = hex(SHA_IV);
    for block in padded.chunks(64) {
        h = bytes_of(&c.eval_plain(&wires_of(block), &wires_of(&h)).unwrap());
    }
    assert_eq!(
        h,
        hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    );
}

/// Runs `c` in 2PC: the garbler's input `x`, the evaluator's `y`; both parties' outputs.
fn two_pc(c: &Circuit, x: &[bool], y: &[bool]) -> (Vec<bool>, Vec<bool>) {
    run2(
        mesh(),
        |mut s| {
            let mut rng = insecure_rng_for_tests(60);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
            let mut g = Garbler::new(delta, c.wires()).unwrap();
            driver::garble(&mut s, &mut ot, &mut g, c, x, &mut rng).unwrap()
        },
        |mut s| {
            let mut rng = insecure_rng_for_tests(61);
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
            let mut e = Evaluator::new(c.wires());
            driver::evaluate(&mut s, &mut ot, &mut e, c, y).unwrap()
        },
    )
}

/// [`two_pc`] with three-halves garbling.
fn two_pc_three_halves(c: &Circuit, x: &[bool], y: &[bool]) -> (Vec<bool>, Vec<bool>) {
    use doram_twopc::three_halves;
    run2(
        mesh(),
        |mut s| {
            let mut rng = insecure_rng_for_tests(62);
            let delta = random_delta(&mut rng);
            let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
            let mut g = three_halves::Garbler::new(delta, c.wires(), &mut rng).unwrap();
            driver::garble(&mut s, &mut ot, &mut g, c, x, &mut rng).unwrap()
        },
        |mut s| {
            let mut rng = insecure_rng_for_tests(63);
            let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
            let mut e = three_halves::Evaluator::new(c.wires());
            driver::evaluate(&mut s, &mut ot, &mut e, c, y).unwrap()
        },
    )
}

#[test]
fn aes_128_and_sha_256_known_answers_with_three_halves_garbling() {
    let c = aes().two_party(1).unwrap();
    let (g, e) = two_pc_three_halves(&c, &wires_of(&hex(AES_KEY)), &wires_of(&hex(AES_PLAIN)));
    assert_eq!(bytes_of(&e), hex(AES_CIPHER));
    assert_eq!(g, e);
    let c = sha().two_party(1).unwrap();
    let (g, e) = two_pc_three_halves(&c, &wires_of(&abc_block()), &wires_of(&hex(SHA_IV)));
    assert_eq!(bytes_of(&e), hex(SHA_ABC));
    assert_eq!(g, e);
}

#[test]
fn aes_128_known_answer_in_two_party_computation() {
    // The garbler holds the key, the evaluator the plaintext.
    let c = aes().two_party(1).unwrap();
    assert_eq!((c.garbler_inputs(), c.evaluator_inputs()), (128, 128));
    let (g, e) = two_pc(&c, &wires_of(&hex(AES_KEY)), &wires_of(&hex(AES_PLAIN)));
    assert_eq!(bytes_of(&e), hex(AES_CIPHER));
    assert_eq!(g, e);
}

#[test]
fn sha_256_known_answer_in_two_party_computation() {
    // The garbler holds the message block, the evaluator the chaining value.
    let c = sha().two_party(1).unwrap();
    assert_eq!((c.garbler_inputs(), c.evaluator_inputs()), (512, 256));
    let (g, e) = two_pc(&c, &wires_of(&abc_block()), &wires_of(&hex(SHA_IV)));
    assert_eq!(bytes_of(&e), hex(SHA_ABC));
    assert_eq!(g, e);
}

#[test]
fn collection_circuits_survive_export_and_import() {
    let c = aes();
    let text = export(c.circuit(), c.inputs(), c.outputs()).unwrap();
    let back = bristol::parse(text.as_bytes()).unwrap();
    assert_eq!(back.inputs(), c.inputs());
    assert_eq!(back.outputs(), c.outputs());
    assert_eq!(GateCounts::of(back.circuit()), GateCounts::of(c.circuit()));
    let out = back
        .circuit()
        .eval_plain(
            &[wires_of(&hex(AES_KEY)), wires_of(&hex(AES_PLAIN))].concat(),
            &[],
        )
        .unwrap();
    assert_eq!(bytes_of(&out), hex(AES_CIPHER));
    // Exporting what was imported from an export gives the same text.
    let again = export(back.circuit(), back.inputs(), back.outputs()).unwrap();
    assert!(again == text, "export is not a fixed point");
}

/// A builder circuit with the awkward cases of export: an output that is an input, a value
/// output twice, constant outputs.
fn awkward_circuit() -> Circuit {
    let mut b = Builder::new();
    let x: Word<8> = b.garbler_word();
    let y: Word<8> = b.evaluator_word();
    let s = b.add(&x, &y);
    let l = b.lt(&x, &y);
    b.output_word(&s);
    b.output(l);
    b.output(x.bits()[3]);
    b.output(l);
    b.output(Bit::ONE);
    b.output(Bit::ZERO);
    b.output_word(&s.rotl(3));
    b.finish().unwrap()
}

fn same_function(a: &Circuit, b: &Circuit, rng: &mut impl Rng) {
    assert_eq!(a.garbler_inputs(), b.garbler_inputs());
    assert_eq!(a.evaluator_inputs(), b.evaluator_inputs());
    for _ in 0..32 {
        let x = random_bits(rng, a.garbler_inputs());
        let y = random_bits(rng, a.evaluator_inputs());
        assert_eq!(a.eval_plain(&x, &y).unwrap(), b.eval_plain(&x, &y).unwrap());
    }
}

#[test]
fn builder_circuits_round_trip() {
    let mut rng = test_rng("round trip");
    let c = awkward_circuit();
    let text = export_two_party(&c);
    let back = bristol::parse(text.as_bytes()).unwrap();
    assert_eq!(back.inputs(), &[8, 8]);
    assert_eq!(back.outputs(), &[c.outputs().len()]);
    let back2 = back.two_party(1).unwrap();
    same_function(&c, &back2, &mut rng);
    assert_eq!(GateCounts::of(&back2).and, GateCounts::of(&c).and);
    // Import then export is the identity on exported text.
    assert_eq!(export_two_party(&back2), text);
    // Other value splits.
    let split = export(&c, &[3, 5, 8], &[8, 4, 4, 5]).unwrap();
    let back3 = bristol::parse(split.as_bytes()).unwrap();
    assert_eq!(back3.inputs(), &[3, 5, 8]);
    same_function(&c, &back3.two_party(2).unwrap(), &mut rng);
    assert!(export(&c, &[8, 7], &[21]).is_err());
    assert!(export(&c, &[8, 8], &[20]).is_err());
    assert!(back3.two_party(4).is_err());
}

#[test]
fn export_handles_reassigned_wires() {
    // Wire 2 is set twice; Bristol Fashion sets each wire once, so the export renames.
    let c = Circuit::new(
        1,
        1,
        3,
        vec![
            Gate::And { a: 0, b: 1, out: 2 },
            Gate::Xor { a: 2, b: 0, out: 2 },
            Gate::Inv { a: 2, out: 2 },
        ],
        vec![2, 0],
    )
    .unwrap();
    let text = export_two_party(&c);
    let back = bristol::parse(text.as_bytes())
        .unwrap()
        .two_party(1)
        .unwrap();
    same_function(&c, &back, &mut test_rng("reassigned"));
}

#[test]
fn constants_and_copies_fold_on_import() {
    // Wire 2 = 1, wire 3 = a ∧ 1, wire 4 = ¬(a ∧ 1), wire 5 = b, wire 6 = 0, wire 7 = wire 6.
    let text = "6 8\n2 1 1\n1 3\n\n1 1 1 2 EQ\n2 1 0 2 3 AND\n1 1 3 4 INV\n1 1 1 5 EQW\n\
                1 1 0 6 EQ\n1 1 6 7 EQW\n";
    // Outputs are wires 5, 6, 7: b, 0, 0.
    let c = bristol::parse(text.as_bytes()).unwrap();
    assert_eq!(GateCounts::of(c.circuit()).and, 0, "a ∧ 1 folds");
    let c = c.two_party(1).unwrap();
    for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
        assert_eq!(c.eval_plain(&[a], &[b]).unwrap(), vec![b, false, false]);
    }
}

fn err(text: &str) -> (usize, K) {
    let e = bristol::parse(text.as_bytes()).unwrap_err();
    assert!(e.to_string().contains(&format!("line {}", e.line)));
    eprintln!("{text:?}: {e}");
    (e.line, e.kind)
}

#[test]
fn malformed_files_are_typed_errors_naming_the_line() {
    let good = "2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n";
    assert!(bristol::parse(good.as_bytes()).is_ok());
    assert_eq!(
        err(""),
        (1, K::UnexpectedEnd("the header \"ngates nwires\""))
    );
    assert!(matches!(err("0 4\n"), (2, K::UnexpectedEnd(_))));
    assert!(matches!(err("2 x\n"), (1, K::NotANumber(t)) if t == "x"));
    assert!(matches!(err("2 -4\n"), (1, K::NotANumber(_))));
    assert!(matches!(
        err("2 99999999999999999999999999\n"),
        (1, K::NotANumber(_))
    ));
    assert!(matches!(
        err("2 4 5\n"),
        (
            1,
            K::WrongTokenCount {
                expected: 2,
                got: 3,
                ..
            }
        )
    ));
    assert!(matches!(
        err("0 4\n3 1 1\n1 1\n"),
        (
            2,
            K::WrongTokenCount {
                expected: 4,
                got: 3,
                ..
            }
        )
    ));
    assert!(matches!(
        err("0 4\n2 3 3\n1 1\n"),
        (
            2,
            K::TooLarge {
                what: "total width",
                ..
            }
        )
    ));
    assert!(matches!(
        err("0 4\n2 1 1\n\n\n1 5\n"),
        (
            5,
            K::TooLarge {
                what: "total width",
                ..
            }
        )
    ));
    // More gates than the file could hold, more wires than inputs and gates can set.
    assert!(matches!(
        err("999999 4\n2 1 1\n1 1\n"),
        (1, K::TooLarge { what: "ngates", .. })
    ));
    assert!(matches!(
        err("2 9\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n"),
        (1, K::TooLarge { what: "nwires", .. })
    ));
    // Gates.
    let gates = |g: &str| format!("2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n{g}\n");
    assert!(matches!(
        err(&gates("1 1 2 4 INV")),
        (6, K::WireOutOfRange { wire: 4, wires: 4 })
    ));
    assert!(matches!(
        err(&gates("1 1 7 3 INV")),
        (6, K::WireOutOfRange { wire: 7, .. })
    ));
    assert!(matches!(
        err(&gates("1 1 3 3 INV")),
        (6, K::UsedBeforeAssigned(3))
    ));
    assert!(matches!(
        err(&gates("1 1 2 2 INV")),
        (6, K::AssignedTwice(2))
    ));
    assert!(matches!(
        err(&gates("1 1 2 0 INV")),
        (6, K::AssignedTwice(0))
    ));
    assert!(matches!(
        err(&gates("1 1 2 3 NOT")),
        (6, K::UnsupportedGate { .. })
    ));
    assert!(matches!(
        err(&gates("2 1 2 0 3 INV")),
        (6, K::UnsupportedGate { .. })
    ));
    assert!(matches!(
        err(&gates("3 1 0 1 2 3 MAND")),
        (6, K::UnsupportedGate { .. })
    ));
    assert!(matches!(
        err(&gates("1 2 2 3 INV")),
        (6, K::UnsupportedGate { .. })
    ));
    assert!(matches!(
        err(&gates("1 1 2 INV")),
        (6, K::WrongTokenCount { .. })
    ));
    assert!(matches!(err(&gates("1 1 2 3 EQ")), (6, K::BadConstant(2))));
    assert!(matches!(
        err("2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n"),
        (6, K::UnexpectedEnd("a gate"))
    ));
    assert!(matches!(
        err("2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n\n1 1 3 2 INV\n"),
        (8, K::TooManyGates(2))
    ));
    assert!(matches!(
        err("2 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n1 1 0 2 INV\n"),
        (6, K::AssignedTwice(2))
    ));
    assert!(matches!(
        err("1 4\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n"),
        (1, K::TooLarge { what: "nwires", .. })
    ));
    // A constant output and no input to derive it from.
    assert!(matches!(
        err("1 1\n0\n1 1\n\n1 1 1 0 EQ\n"),
        (_, K::Build(_))
    ));
    // Limits.
    let tight = ParseLimits {
        max_wires: 3,
        max_gates: 1,
        max_values: 1,
    };
    let e = bristol::parse_with_limits(good.as_bytes(), &tight).unwrap_err();
    assert!(matches!(e.kind, K::TooLarge { what: "ngates", .. }), "{e}");
    // Windows line ends and stray spaces are fine.
    assert!(bristol::parse(good.replace('\n', " \r\n").as_bytes()).is_ok());
}

fn small_limits() -> ParseLimits {
    ParseLimits {
        max_wires: 1 << 12,
        max_gates: 1 << 12,
        max_values: 64,
    }
}

/// Tokens of gate lines and numbers, to reach past the header more often than bytes do.
fn token_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        (0usize..12).prop_map(|n| n.to_string()),
        Just("XOR".to_string()),
        Just("AND".to_string()),
        Just("INV".to_string()),
        Just("EQ".to_string()),
        Just("EQW".to_string()),
        Just("\n".to_string()),
        Just("99999999999999999999999".to_string()),
    ];
    prop::collection::vec(token, 0..80).prop_map(|t| t.join(" "))
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = bristol::parse_with_limits(&bytes, &small_limits());
    }

    #[test]
    fn token_soup_never_panics(text in token_soup()) {
        let _ = bristol::parse_with_limits(text.as_bytes(), &small_limits());
    }

    #[test]
    fn mutated_circuits_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut text = export_two_party(&awkward_circuit()).into_bytes();
        for (i, b) in edits {
            let i = i.index(text.len());
            let alphabet = b"0123456789 \nXORANDINVEQW";
            text[i] = alphabet[usize::from(b) % alphabet.len()];
        }
        let text = &text[..cut.index(text.len() + 1)];
        if let Ok(c) = bristol::parse_with_limits(text, &small_limits()) {
            // Whatever parses is a well-formed circuit that evaluates and exports.
            let all = c.circuit().garbler_inputs();
            let out = c.circuit().eval_plain(&vec![false; all], &[]).unwrap();
            prop_assert_eq!(out.len(), c.outputs().iter().sum::<usize>());
            let again = export(c.circuit(), c.inputs(), c.outputs()).unwrap();
            prop_assert!(bristol::parse(again.as_bytes()).is_ok());
        }
    }
}

#[test]
fn words_in_the_collection_bit_order() {
    // The builder's little-endian words are the collection's wire order: a 16-bit value
    // 0x1234 is the bytes 12 34.
    assert_eq!(le_bits(0x1234, 16), wires_of(&[0x12, 0x34]));
}

#[test]
fn aes_transcripts_do_not_depend_on_key_or_plaintext() {
    let c = aes().two_party(1).unwrap();
    let run = |key: &[u8], block: &[u8], seed: u64| {
        let (x, y) = (wires_of(key), wires_of(block));
        run2(
            mesh(),
            |mut s| {
                s.record_transcript(true);
                let mut rng = insecure_rng_for_tests(seed);
                let delta = random_delta(&mut rng);
                let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
                let mut g = Garbler::new(delta, c.wires()).unwrap();
                driver::garble(&mut s, &mut ot, &mut g, &c, &x, &mut rng).unwrap();
                s.take_transcript().unwrap()
            },
            |mut s| {
                s.record_transcript(true);
                let mut rng = insecure_rng_for_tests(seed + 1);
                let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
                let mut e = Evaluator::new(c.wires());
                driver::evaluate(&mut s, &mut ot, &mut e, &c, &y).unwrap();
                s.take_transcript().unwrap()
            },
        )
    };
    let (g1, e1) = run(&hex(AES_KEY), &hex(AES_PLAIN), 70);
    let (g2, e2) = run(&[0xff; 16], &[0; 16], 72);
    assert_eq!(g1, g2);
    assert_eq!(e1, e2);
    // At the garbler: base OT (32 received, 128 points sent), the scheme tag and the key's
    // labels 1 + 128·16, the COT for the plaintext's 128 bits, tables 6400·32, decoding bits and
    // output 128/8 each.
    let bytes: Vec<u64> = g1.events.iter().map(|e| e.bytes).collect();
    assert_eq!(bytes, [32, 4096, 1 + 2048, 2048, 6400 * 32, 16, 16]);
}

#[test]
fn aes_inlined_in_a_builder_circuit() {
    // Counter mode on two blocks: E_k(n) ‖ E_k(n + 1), the key the garbler's, the counter
    // block n the evaluator's (as a 128-bit word: the circuit's wire order).
    use aes::cipher::{BlockEncrypt, KeyInit};
    let aes_c = aes().two_party(1).unwrap();
    let mut b = Builder::new();
    let key: Word<128> = b.garbler_word();
    let n: Word<128> = b.evaluator_word();
    let n1 = b.add(&n, &Word::constant(1));
    let mut outs = Vec::new();
    for block in [n, n1] {
        let inputs = [key.bits().as_slice(), block.bits().as_slice()].concat();
        outs.extend(b.inline(&aes_c, &inputs).unwrap());
    }
    // n + 1: the constant folds the first carry, 126 ANDs remain.
    assert_eq!(b.counts().and, 2 * 6400 + 126);
    b.output_bits(&outs);
    assert!(b.inline(&aes_c, &outs[..10]).is_err());
    let c = b.finish().unwrap();

    let mut rng = test_rng("AES inlined");
    let k: [u8; 16] = rng.random();
    let ctr: u128 = rng.random();
    let want: Vec<u8> = [ctr, ctr.wrapping_add(1)]
        .iter()
        .flat_map(|v| {
            let mut blk = aes::Block::from(v.to_be_bytes());
            aes::Aes128::new(&k.into()).encrypt_block(&mut blk);
            blk.to_vec()
        })
        .collect();
    let (x, y) = (wires_of(&k), le_bits(ctr, 128));
    let plain = c.eval_plain(&x, &y).unwrap();
    let got: Vec<u8> = plain.chunks(128).flat_map(bytes_of).collect();
    assert_eq!(got, want);
    let (g, e) = two_pc(&c, &x, &y);
    assert_eq!(e, plain);
    assert_eq!(g, plain);
}

#[test]
fn compacted_collection_circuits_keep_their_answers() {
    let a = aes().two_party(1).unwrap();
    let ac = compact_wires(&a);
    assert_eq!(GateCounts::of(&ac), GateCounts::of(&a));
    assert!(
        ac.wires() < 2000,
        "AES-128 compacted to {} wires",
        ac.wires()
    );
    let (k, p) = (wires_of(&hex(AES_KEY)), wires_of(&hex(AES_PLAIN)));
    assert_eq!(bytes_of(&ac.eval_plain(&k, &p).unwrap()), hex(AES_CIPHER));
    let (g, e) = two_pc(&ac, &k, &p);
    assert_eq!(bytes_of(&e), hex(AES_CIPHER));
    assert_eq!(g, e);

    let s = sha().two_party(1).unwrap();
    let sc = compact_wires(&s);
    eprintln!(
        "wires: AES-128 {} → {}, SHA-256 {} → {}",
        a.wires(),
        ac.wires(),
        s.wires(),
        sc.wires()
    );
    assert_eq!(GateCounts::of(&sc), GateCounts::of(&s));
    assert!(
        sc.wires() < 3000,
        "SHA-256 compacted to {} wires",
        sc.wires()
    );
    let out = sc
        .eval_plain(&wires_of(&abc_block()), &wires_of(&hex(SHA_IV)))
        .unwrap();
    assert_eq!(bytes_of(&out), hex(SHA_ABC));
    // Compacted circuits set wires more than once; export renames them.
    let back = bristol::parse(export_two_party(&ac).as_bytes()).unwrap();
    same_function(
        &ac,
        &back.two_party(1).unwrap(),
        &mut test_rng("compacted export"),
    );
}

#[test]
fn compacting_keeps_the_function_of_awkward_circuits() {
    let mut rng = test_rng("compact");
    let c = awkward_circuit();
    let cc = compact_wires(&c);
    same_function(&c, &cc, &mut rng);
    assert!(cc.wires() <= c.wires());
    // A circuit that already reuses a wire, and outputs an input.
    let r = Circuit::new(
        1,
        1,
        3,
        vec![
            Gate::And { a: 0, b: 1, out: 2 },
            Gate::Xor { a: 2, b: 0, out: 2 },
            Gate::Inv { a: 2, out: 2 },
            Gate::And { a: 2, b: 2, out: 1 },
        ],
        vec![2, 0, 1, 1],
    )
    .unwrap();
    same_function(&r, &compact_wires(&r), &mut rng);
    assert_eq!(compact_wires(&compact_wires(&c)), compact_wires(&c));
}
