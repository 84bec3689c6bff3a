//! The two-party engine for doram: base OT, IKNP and SoftSpoken OT extension and half-gates
//! garbled circuits, semi-honest.
//!
//! Brief overview: two parties on a [`doram_net::Session`] of two, in roles that are types —
//! [`BaseOtSender`]/[`BaseOtReceiver`] for base OT, [`IknpSender`]/[`IknpReceiver`] and
//! [`SoftSpokenSender`]/[`SoftSpokenReceiver`] for OT extension (either one through the
//! [`CotExtSender`]/[`CotExtReceiver`] traits the driver takes), [`Garbler`]/[`Evaluator`]
//! for half-gates garbled circuits and [`three_halves::Garbler`]/[`three_halves::Evaluator`]
//! for three-halves ones (either through the [`GcGarbler`]/[`GcEvaluator`] traits the driver
//! takes; [`GarblingScheme`] names them). The protocol modules are I/O-free; [`driver`] runs them over a
//! session. Circuits are built with the typed [`Builder`] (bits, words, gadgets, gate counts)
//! or read from Bristol Fashion files ([`bristol`]). Errors are [`TwopcError`]; peer faults
//! name the peer. Randomness is passed in (`rng`): [`os_rng`] for
//! real use, [`insecure_rng_for_tests`] for reproducible tests.
//!
//! | paper | what | module |
//! |---|---|---|
//! | Chou–Orlandi 2015, Fig. 1, with transcript-bound keys (Hauck–Loss 2017) | 128 base OTs over ristretto255, one message each way | [`base_ot`] |
//! | IKNP03 Fig. 1 (semi-honest) | correlated OT with global Δ, random OT, chosen-message OT (Beaver derandomisation) | [`iknp`], [`transpose`] |
//! | Roy 2022 (SoftSpoken, ePrint 2022/192), semi-honest | punctured GGM trees, small-field subspace VOLE with the repetition code, conversion to the same correlated/random/chosen OTs with `128/k` bits per OT | [`softspoken`], [`ot_ext`] |
//! | ZRE15 Fig. 2 | half-gates, free-XOR, point-and-permute, 32 bytes per AND | [`gc`] |
//! | RR21 (ePrint 2021/749) §5, Eq. 4–5, Eq. 10, Fig. 3–4 | three-halves: sliced labels, randomized control bits, 1.5κ + 5 bits per AND | [`three_halves`], [`scheme`] |
//! | GKWY20 §7.3–7.4 | (tweakable) circular correlation-robust hashes from fixed-key AES | [`hash`] |
//! | Beaver 1991 | two-party arithmetic over F_p: inputs without messages, batched products on pooled triples, openings | [`arith`] |
//! | Beaver 1991; Gilboa 1999 | XOR-shared AND triples (two random OTs each) and additively shared F_p triples (Gilboa's product, 256 OTs each), OT extension in both directions | [`triples`] |
//! | Beneš 1964 (looping algorithm); the re-sharing switch of doram-gkk12's shuffle over F_p | secret shuffle of additive F_p shares, π = σ₁ ∘ σ₀ with each σ known to one party: two passes of 2k − 1 stages, n/2 random OTs and n·width elements per stage | [`shuffle`] |
//! | Doerner–shelat 2017 (Floram's distributed Gen), as in Duoram (USENIX Security 2023) App. C | BGI DPF keys made by the two key holders: each expands its whole tree level by level, the correction words come from two random OTs and one exchange per level, the output correction word from one Beaver product; any number of keys in 2⌈log₂ n⌉ + O(1) rounds | [`dpf_gen`] |
//! | — | typed circuit builder: bits, little-endian words, adders, comparators, multiplexers, barrel shifters, multiplier, table lookup; gate counts; inlining and wire compaction | [`builder`] |
//! | Bristol Fashion circuit collection (Archer, Smart et al.) | circuit import (bounded, typed errors) and export | [`bristol`] |
//!
//! Garbled tables stream: [`driver::garble_stream`] and [`driver::evaluate_stream`] take the
//! gates from any iterator and send the tables in fixed-size chunks, so neither the circuit
//! nor its tables need be held whole; each party keeps one 16-byte label per wire.
//!
//! # Security notes
//! * Semi-honest only: IKNP without the KOS consistency check, SoftSpoken without its
//!   malicious-security check, half-gates and three-halves without any check of the garbler. A malicious peer
//!   can make a party compute a wrong result; it cannot make it panic or read out of bounds
//!   (peer input is length-checked and decoded into typed errors).
//! * The garbler's Δ is also the OT extension sender's correlation: the evaluator's input
//!   labels are the correlated OTs' outputs (`q_i` and `t_i = q_i ⊕ y_i·Δ`), which saves the
//!   hashing and the 32 bytes per input of chosen-message OT.
//!
//! ```
//! use doram_net::{LocalMesh, run_parties};
//! use doram_twopc::{driver, gc::{Circuit, Gate, Garbler, Evaluator, random_delta}, insecure_rng_for_tests};
//!
//! // out = x ∧ y, x from the garbler (P0), y from the evaluator (P1).
//! let c = Circuit::new(1, 1, 3, vec![Gate::And { a: 0, b: 1, out: 2 }], vec![2]).unwrap();
//! let out = run_parties(LocalMesh::new(2).build(), "gc", |mut s| {
//!     let mut rng = insecure_rng_for_tests(s.me().index() as u64);
//!     if s.me().index() == 0 {
//!         let delta = random_delta(&mut rng);
//!         let mut ot = driver::iknp_sender_setup(&mut s, delta, &mut rng).unwrap();
//!         let mut g = Garbler::new(delta, c.wires()).unwrap();
//!         driver::garble(&mut s, &mut ot, &mut g, &c, &[true], &mut rng).unwrap()
//!     } else {
//!         let mut ot = driver::iknp_receiver_setup(&mut s, &mut rng).unwrap();
//!         let mut e = Evaluator::new(c.wires());
//!         driver::evaluate(&mut s, &mut ot, &mut e, &c, &[true]).unwrap()
//!     }
//! });
//! for o in out {
//!     assert_eq!(o.unwrap(), vec![true]);
//! }
//! ```

#![deny(missing_docs)]

pub mod arith;
pub mod base_ot;
pub mod bristol;
pub mod builder;
pub mod dpf_gen;
pub mod driver;
mod error;
pub mod gc;
pub mod hash;
pub mod iknp;
pub mod ot_ext;
pub mod scheme;
pub mod shuffle;
pub mod softspoken;
pub mod three_halves;
pub mod transpose;
pub mod triples;

pub use base_ot::{BaseOtReceiver, BaseOtSender};
pub use bristol::{BristolCircuit, BristolError};
pub use builder::{Bit, Builder, GateCounts, Word};
pub use error::{TheirScheme, TwopcError};
pub use gc::{Circuit, CircuitShape, Evaluator, Garbler, Gate};
pub use iknp::{IknpReceiver, IknpSender};
pub use ot_ext::{CotExtReceiver, CotExtSender};
pub use scheme::{GarblingScheme, GcEvaluator, GcGarbler};
pub use softspoken::{ChunkBits, SoftSpokenReceiver, SoftSpokenSender};

use doram_core::Seed;
use doram_prim::prg::AesPrg;

/// A cryptographic generator seeded from the operating system's entropy: the one to pass as
/// `rng` outside tests.
pub fn os_rng() -> AesPrg {
    AesPrg::new(Seed::from_os_entropy())
}

/// **Insecure**: a generator whose seed is the public number `n`. For reproducible tests and
/// benchmarks only; anyone who knows `n` knows every secret drawn from it.
pub fn insecure_rng_for_tests(n: u64) -> AesPrg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[8..].copy_from_slice(b"twopc-t!");
    AesPrg::new(Seed(s))
}
