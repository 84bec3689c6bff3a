//! Gordon, Katz, Kolesnikov, Krell, Malkin, Raykova, Vahlis, "Secure Two-Party Computation in
//! Sublinear (Amortized) Time", ACM CCS 2012 (GKK12): a server holding a large array and a
//! client holding a small input run RAM programs on both, the array stored in Shi et al.'s
//! binary-tree ORAM on the server and the ORAM client run inside garbled circuits.
//!
//! What is here:
//! * [`params`]: the recursion's geometry (trees, heights, bucket sizes, slot widths) and the
//!   paper's parameter choice;
//! * [`tree`]: one tree's layout, paths, insertion and the eviction schedule;
//! * [`plain`]: the whole recursive ORAM in plaintext — the reference for the two-party
//!   protocol — and the paper's bucket-overflow experiment (Figure 4);
//! * [`circuits`]: the client's steps as Boolean circuits, with their gate counts;
//! * [`bits`]: those circuits evaluated in the clear on the ORAM held as bits, which must
//!   agree bit for bit with [`plain`];
//! * [`storage`] and [`driver`]: the two-party access — the server stores the trees encrypted
//!   under the client's pads and garbles, the client evaluates, and the ORAM client's state
//!   stays in wire labels between circuits;
//! * [`load`]: the secure initial load, with a setup helper that never sees the data: every
//!   item starts on a uniformly random leaf that neither the server nor the client knows;
//! * [`empty`]: an ORAM that starts empty, set up by the two parties alone (every address
//!   reads 0 until written; GKK12's Figure 1 then loads an array by one write per item);
//! * [`scan`]: the paper's baseline, a linear scan over a memory held as labels;
//! * [`shuffle`]: permuting a shared vector by one party's secret permutation (a Beneš
//!   network of OT-resharing switches);
//! * [`binsort`]: oblivious bin placement of shared records by secret labels (bucket
//!   oblivious sort's butterfly in phases of shrinking bins, merge-splits from OTs and OT
//!   shuffles), the core of a fast two-party load;
//! * [`sortload`]: the initial load by the two parties alone, every tree placed by
//!   [`binsort`];
//! * [`persist`]: each party's state written to a file and resumed in a later run, so that
//!   one load serves many programs.
//!
//! The two-party RAM machine that runs the shared RAM programs (`doram_programs::two`) holds
//! its memory in [`scan`] (`doram run --backend gkk12`) or in the tree ORAM (`--backend
//! gkk12-tree`), loaded by [`sortload`] or, for few words, started [`empty`] and written word by
//! word. [`load`] (with its helper) remains the fastest load and the one `doram bench gkk12`
//! measures by default (`--load two-parties` measures [`sortload`], whose data tree is sorted
//! without its payloads and then filled by [`gather`]). `testkit`'s dealer, which sees every secret, remains for tests only.

pub mod binsort;
pub mod bits;
pub mod circuits;
pub mod driver;
pub mod empty;
pub mod gather;
pub mod load;
pub mod params;
pub mod persist;
pub mod plain;
pub mod scan;
pub mod search;
pub mod shuffle;
pub mod sortload;
pub mod storage;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod tree;

pub use driver::OT_CHUNK;
pub use params::{Params, ParamsError, TreeGeometry};
pub use plain::{AccessError, Op, Overflow, OverflowReport, PlainTreeOram, overflow_experiment};
