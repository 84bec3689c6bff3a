//! 3P-Duoram (Vadapalli, Henry, Goldberg, "DUORAM: A Bandwidth-Efficient Distributed ORAM for
//! 2- and 3-Party Computation", USENIX Security 2023; sections and protocols numbered as in
//! `shared/papers/001_*.txt`).

#![deny(missing_docs)]
// Index loops over several parallel arrays follow the protocols' formulas term by term.
#![allow(clippy::needless_range_loop)]

pub mod duoram;
pub mod error;
mod interface;
pub(crate) mod material;
pub mod msgs;
pub(crate) mod prep;
pub mod role;
pub mod runner;
pub mod word;

pub use duoram::{BATCH_LEAVES, Duoram, MAX_LOG_N};
pub use error::DuoramError;
pub use role::{Role, Side};
pub use runner::{BenchConfig, BenchOutcome, Comm, Kind, OpMix, PartyReport, run_local, run_party};
pub use word::DuoWord;
