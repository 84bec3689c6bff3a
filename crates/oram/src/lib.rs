//! The secret-shared memory interface of doram: the transport-free [`SharedMemory`] trait that
//! the plaintext oracle [`PlainMemory`] and every DORAM protocol implement, [`DistributedOram`]
//! for a protocol party's endpoint with its session, a conformance/leakage/fault test kit
//! (feature `testkit`), and [`LinearScanOram`], a real three-party DORAM that scans the whole
//! memory on every access.
//!
//! Brief overview:
//!
//! | item | what it is |
//! |---|---|
//! | [`SharedMemory`] | one party's share of a memory (F_DORAM of Ramen Fig. 13): `preprocess`, `init`, `access`, `memory`, batches and `update`; no transport in the signatures |
//! | [`DistributedOram`] | a [`SharedMemory`] that is a protocol party's endpoint and owns its session |
//! | [`InstructionShare`], [`OpShare`], [`Op`] | one party's share of an instruction (op, addr, val); the op shared as a bit or public |
//! | [`OpVisibility`] | whether a protocol hides reads from writes (Ramen, linear scan) or reveals it (Duoram) |
//! | [`OramError`] | typed errors: peer faults naming the peer, misuse detected before sending, poisoning |
//! | [`PlainMemory`], [`Instruction`] | the plaintext oracle: the one-party [`SharedMemory`], and plaintext methods of its own |
//! | [`Counting`] | a wrapper counting reads, writes, hidden accesses and phases, for plain or shared memories |
//! | [`LinearScanOram`] | the baseline: O(n) work, 2 rounds and 6 ring elements per party per access |
//! | [`Protocol`], [`bench`](mod@bench) | a constructor by name, and the bench runner every protocol shares: one workload, phases timed and counted apart, results checked against [`PlainMemory`], one JSON report |
//! | [`testkit`] | `run_conformance`, `run_leakage`, `run_batches`, `run_misuse`, `run_fault`, `run_shared`, [`oram_conformance!`] |
//!
//! # The contract
//! A shared memory holds a secret memory `M` of `n` words of a ring `W` (`Fp` for Ramen, `Z64`
//! for Duoram), additively shared among its parties (three for today's protocols, one for the
//! oracle). The trait's documentation states the full
//! contract; in short:
//!
//! * **init** (Ramen Fig. 13, Init) loads `M` from one additive share per word, once;
//! * **access** (Fig. 13, Access) executes (op, addr, val) and returns fresh shares of
//!   `M[addr]` *before* the access — for reads and for writes, whose old value is returned as
//!   F_DORAM does — and a write then stores `val`;
//! * **access_many**, **read_many** run a batch of accesses in order (protocols may share
//!   rounds among them); **update** adds a shared delta to a word;
//! * **memory** (Fig. 13, Get Memory) returns fresh shares of the current `M`;
//! * **preprocess** runs input-independent work for a number of future accesses, separately
//!   from the online phase; accesses not preprocessed do it inline.
//!
//! Addresses are secret-shared, so an out-of-range address cannot be detected: what it reads,
//! writes and reveals is unspecified (each protocol documents its behaviour), and programs must
//! keep addresses in `0..n`.
//!
//! # What leaks
//! The public parameters and the call pattern: the memory size, the word type, how many
//! preprocess, init, access and memory calls are made and in which order, and — only for
//! protocols with [`OpVisibility::Public`] — whether each access is a read or a write. The
//! communication of every party (message count, sizes, rounds) is a function of these alone,
//! which the kit's leakage check tests on the transport's [`Transcript`](doram_net::Transcript).
//!
//! # Example
//! Three parties, one thread each, on an in-process mesh, running the linear-scan DORAM over
//! 8 words of `Z64`:
//! ```
//! use doram_core::{PartyId, Seed};
//! use doram_field::{Group, Z64};
//! use doram_mpc::{Additive, reconstruct_additive};
//! use doram_net::Session;
//! use doram_oram::{LinearScanOram, OramError, SharedMemory};
//!
//! let outputs: Vec<Vec<Additive<Z64>>> = std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(3)
//!         .into_iter()
//!         .map(|session| {
//!             s.spawn(move || -> Result<Vec<Additive<Z64>>, OramError> {
//!                 let me = session.me();
//!                 let mut oram = LinearScanOram::<Z64>::setup(session, 8, Seed([me.index() as u8; 16]))?;
//!                 oram.preprocess(2)?;
//!                 // P0 holds the memory 0, 10, 20, …; the others hold zero shares.
//!                 let memory: Vec<_> = (0..8).map(|i| Additive::public(Z64(10 * i), me)).collect();
//!                 oram.init(&memory)?;
//!                 // Public addresses and values, as constant sharings: write 99 to cell 3, read it.
//!                 let c = |v: u64| Additive::public(Z64(v), me);
//!                 let old = oram.write(c(3), c(99))?;
//!                 let new = oram.read(c(3))?;
//!                 Ok(vec![old, new])
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
//! });
//! let open = |t: usize| reconstruct_additive(&[outputs[0][t], outputs[1][t], outputs[2][t]]);
//! assert_eq!(open(0), Z64(30)); // a write returns the old value
//! assert_eq!(open(1), Z64(99));
//! ```
//!
//! # Testing a protocol
//! With the `testkit` feature, one line adds conformance, leakage, misuse and fault tests for a
//! protocol (put it in `tests/conformance.rs` of the protocol crate, with `doram-oram` as a
//! dev-dependency with `features = ["testkit"]`):
//! ```ignore
//! doram_oram::oram_conformance!(ramen, |session, _me, n, seed| {
//!     doram_ramen::Ramen::setup(session, n, seed).map_err(Into::into)
//! });
//! ```
//! The closure turns a fresh [`Session`](doram_net::Session), the party's id, the memory size and
//! the party's seed into an instance; the kit owns everything else. To add a protocol:
//! 1. implement [`SharedMemory`] and [`DistributedOram`] (choose [`OpVisibility`]; map the protocol's errors into
//!    [`OramError`], e.g. [`OramError::Protocol`] for its own kinds; poison the instance when an
//!    operation fails half-way);
//! 2. add the `oram_conformance!` line; set `sizes = [...]` and `ops = ...` to cover the
//!    protocol's boundaries (odd sizes, several epochs);
//! 3. replay a failure with `DORAM_TEST_SEED=<seed printed by the failing test> cargo test`.
//!
//! [`testkit::execute`] runs any custom [`testkit::Plan`] (initial memory, instructions,
//! preprocessing) and returns each party's outputs, transcript and statistics, e.g. for cost
//! measurements.

pub mod bench;
pub mod error;
pub mod instruction;
pub mod interface;
pub mod linear;
pub mod plain;
pub mod protocol;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod word;

pub use error::OramError;
pub use instruction::{
    Instruction, InstructionShare, Op, OpShare, OpVisibility, deal_instruction, deal_memory,
    merge_instruction_shares,
};
pub use interface::{DistributedOram, SharedMemory};
pub use linear::{LinearScanOram, STAT_SEC};
pub use plain::{AccessCounts, Counting, PlainMemory};
pub use protocol::Protocol;
pub use word::IntegerWord;

/// Re-exports for the expansion of [`oram_conformance!`]; not part of the API.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod __private {
    pub use doram_core::PartyId;
}
