//! Ramen.
#![deny(missing_docs)]

pub mod doram;
mod driver;
pub mod error;
pub mod ideal;
mod interface;
pub mod msgs;
pub mod params;
pub mod pot;
pub mod read;
pub mod refresh;
pub mod runner;
pub mod stash;
pub mod steps;
pub mod tags;

pub use doram::{Probe, Ramen};
pub use error::RamenError;
pub use params::Params;
pub use runner::{BenchConfig, BenchOutcome, Comm, PartyReport, run_local, run_party};
pub use steps::{Step, StepTimes};
