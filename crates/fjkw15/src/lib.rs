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
//!   reference the three-party protocol is checked against, and an overflow experiment.
//!
//! **Not yet here**: the sub-protocols of FJKW15 §3, Access\[i\] (Alg. 3), PostProcessT\[i\]
//! (Alg. 4), Eviction\[i\] (Alg. 5) with its garbled circuits F2FT and F2ET, the drivers over a
//! `doram_net::Session`, the secret-shared initial load (the paper leaves it open, notes Q15),
//! and benchmarks.
//!
//! # Figure map
//!
//! | FJKW15 | what | here |
//! |---|---|---|
//! | §2, "ORAM Forest", "Notation" | m, τ, h, d_i, tuples, paths | [`params`] |
//! | §2, "Access Procedure", "Constrained Eviction Strategy" | the client-server ORAM | [`plain`] |
//! | §5, Lemma 1, Lemma 2, Markov chain | bucket size w | [`params::w_lemma1`], [`params::w_lemma2`], [`plain::overflow_experiment`] |

#![deny(missing_docs)]

pub mod params;
pub mod plain;
pub mod sample;

pub use params::{Params, ParamsError};
