//! Secure three-party RAM programs (work in progress).

pub mod bench;
pub mod bfs;
pub mod binary_search;
pub mod dijkstra;
pub mod error;
pub mod input;
pub mod machine;
pub mod matching;
pub mod roles;

pub use error::{InputError, ProgramError};
pub use machine::{
    Backend, BackendKind, Cost, Machine, Meter, OArray, Part, Plan, bits_for, to_int,
};
pub use roles::{PartyRun, Roles, RunConfig, all_ok, announce_sizes, run_three};
