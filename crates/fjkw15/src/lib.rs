//! Faber, Jarecki, Kentros, Wei, "Three-Party ORAM for Secure Computation", ASIACRYPT 2015
//! (FJKW15; `shared/papers/004_*.txt`, implementer's notes `shared/specs/3pc-oram.md`): three
//! parties C, D and E, one of them passively corrupted, keep a memory XOR-shared in a forest
//! of binary-tree ORAMs and access it with OT variants that need no public-key operations and
//! one small garbled circuit per bucket.
//!
//! Brief overview of what is here — the foundation the access protocols build on:
//! * [`params`]: the forest's geometry (m, τ, h, d_i, w, tuple and path sizes) and the
//!   bucket-size bounds of FJKW15 §5, with the benchmark points;
//! * [`plain`]: the client-server binary-tree ORAM of FJKW15 §2 in plaintext — forest
//!   OT_0..OT_h, Access with fresh labels, the constrained two-per-bucket eviction — the
//!   reference the three-party protocol is checked against, and an overflow experiment;
//! * [`layout`]: a tuple's bit layout (fb, N_i, L_i, A_i) as the protocols carry it, its
//!   SS-COT key and the A-field flip by ρ;
//! * [`rotation`]: Access's data rotations Rot[σ, δ, ρ] of a path and their inverse, the map
//!   Shift applies in Eviction;
//! * [`party`]: the parties as types ([`C`], [`D`], [`E`]), the role assignment and the
//!   one-round setup of pairwise PRG seeds;
//! * the sub-protocols of FJKW15 §3, as I/O-free round functions over the typed messages of
//!   [`msgs`]: [`ss_cot`], [`ss_iot`], [`xot`] (XOT and SS-XOT) and [`shift`];
//! * [`storage`]: one party's share of the forest, tree by tree in the tuple layout, with
//!   path reads and write-backs;
//! * [`access`]: Access\[i\] (Alg. 3) as round functions of D, E and C, built on SS-COT,
//!   SS-IOT and the rotations;
//! * [`postprocess`]: PostProcessT\[i\] (Alg. 4), the fresh labels, T_h's relabelling and
//!   writes (our design: the paper gives none);
//! * [`circuits`] and [`gc`]: the pick circuits F2FT and F2ET, and Yao's garbled circuits on
//!   inputs shared between E and C, evaluated by D;
//! * [`eviction`]: Eviction\[i\] (Alg. 5): Shift and the bucket permutations, the circuits,
//!   D's index list from their picks, SS-XOT, the pad ξ and the write-back;
//! * [`load`]: the shared initial load (our design; the paper leaves it open): a public,
//!   data-independent forest holding D's and E's record shares, then a refresh pass that reads
//!   every address once in an order π no party knows;
//! * [`convert`]: additive shares of Z/2^64 or F_p among the three parties to XOR shares
//!   between D and E and back (one small garbled adder each, mod 2^64 or mod p; our design),
//!   with an optional range check of an address;
//! * [`driver`]: the only I/O — setup, the load, the conversions and one whole access per
//!   party over a `doram_net::Session`;
//! * [`extract`]: Get Memory by a three-party shuffle of OT_h and openings of the full rows'
//!   addresses (our design);
//! * [`backend`]: [`Fjkw15Oram`], the doram shared memory (`doram_oram::SharedMemory`,
//!   `DistributedOram`, `Protocol`) over words of Z/2^64 ([`Fjkw15Memory`]) or of F_p
//!   ([`Fjkw15FpMemory`], the three-party program machine's backend, addresses
//!   range-checked): conversions around the load and every access;
//! * [`ideal`]: the sub-protocols' functionalities in plaintext, for tests; `testkit` (feature
//!   `testkit`): an insecure dealer that shares a plaintext forest between D and E.
//!
//! **Not yet here**: pipelining of trees in the driver (notes Q12): the trees' Access rounds
//! run one after the other, then PostProcess and Eviction tree by tree.
//!
//! # Figure map
//!
//! | FJKW15 | what | here |
//! |---|---|---|
//! | §2, "ORAM Forest", "Notation" | m, τ, h, d_i, tuples, paths | [`params`] |
//! | §2, "Access Procedure", "Constrained Eviction Strategy" | the client-server ORAM | [`plain`] |
//! | §5, Lemma 1, Lemma 2, Markov chain | bucket size w | [`params::w_lemma1`], [`params::w_lemma2`], [`plain::markov_overflow`], [`plain::overflow_experiment`] |
//! | Alg. 1 | SS-COT\[N\](S = E, R = C, H = D) | [`ss_cot`] |
//! | §3, SS-IOT | SS-IOT[2^τ](S = E, R = C, H = D) | [`ss_iot`] |
//! | Alg. 2 | XOT[N choose k](S ∈ {C, E}, R, I = D) | [`xot`] |
//! | §3, SS-XOT | SS-XOT[N choose k](A = C, B = E, I = D) | [`xot`] |
//! | §3, Shift (omitted in the paper; our design) | Shift(A = C, B = E, H = D) | [`shift`] |
//! | §4, "Data rotations"; Alg. 3, step 1; Alg. 5, step 1 | Rot[σ, δ, ρ] and its inverse | [`rotation`] |
//! | Alg. 3 | Access\[i\](sender E, receiver C, helper D) | [`access`] |
//! | Alg. 4 | PostProcessT\[i\] | [`postprocess`] |
//! | §3, "Yao's Garbled Circuit on Secret-Shared Inputs" | GC\[F\](A = E, B = C, R = D) | [`gc`] |
//! | §4 and Alg. 5, steps 2–3 (circuits described in prose) | F2FT, F2ET | [`circuits`] |
//! | Alg. 5 | Eviction\[i\] | [`eviction`] |
//! | — (open, notes Q15; our design) | the shared initial load | [`load`] |
//! | — (§1 takes XOR-shared inputs; our design) | additive ↔ XOR shares (Z/2^64, F_p) | [`convert`] |
//!
//! Every step is marked in the code with its algorithm and line, e.g.
//! `// [FJKW15 Alg. 1, line 2]`, so `grep 'FJKW15 Alg. 1'` lists SS-COT step by step.
//!
//! # Example
//! SS-COT among the three parties in one process: E holds messages and keys a_t, D holds keys
//! b_t, and C learns the messages whose keys agree.
//! ```
//! use doram_core::Entropy;
//! use doram_fjkw15::bits::Strings;
//! use doram_fjkw15::party::{Roles, setup_in_process};
//! use doram_fjkw15::ss_cot::CotParams;
//!
//! let (c, mut d, mut e) = setup_in_process(Roles::default(), Entropy::Os);
//! let params = CotParams::new(3, 12, 8)?;
//! let m = Strings::from_rows(12, [&[1u8, 0][..], &[2, 0][..], &[3, 0][..]]);
//! let from_e = e.cot_send(&params, &m, &[5, 6, 7])?;
//! let from_d = d.cot_help(&params, &[9, 6, 0])?;
//! assert_eq!(c.cot_receive(&params, &from_e, &from_d)?, vec![(1, vec![2, 0])]);
//! # Ok::<(), doram_fjkw15::Fjkw15Error>(())
//! ```

#![deny(missing_docs)]

pub mod access;
pub mod backend;
pub mod bits;
pub mod circuits;
pub mod convert;
pub mod driver;
pub mod error;
pub mod eviction;
pub mod extract;
pub mod gc;
pub mod ideal;
pub mod layout;
pub mod load;
pub mod msgs;
pub mod params;
pub mod party;
pub mod plain;
pub mod postprocess;
pub mod rotation;
pub mod sample;
pub mod shift;
pub mod ss_cot;
pub mod ss_iot;
pub mod storage;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod xot;

pub use backend::{Fjkw15FpMemory, Fjkw15Memory, Fjkw15Oram, Fjkw15Z32Memory};
pub use error::Fjkw15Error;
pub use params::{Params, ParamsError};
pub use party::{C, D, E, Role, Roles};
