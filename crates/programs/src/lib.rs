//! Secure three-party RAM programs for doram: a [`Machine`] that runs the CPU step of a RAM
//! program in generic MPC (the compute engine [`doram_mpc::Engine`]) and keeps its memory in a
//! distributed ORAM, and four programs on it — [`binary_search`], [`bfs`], [`dijkstra`] and
//! stable [`matching`] — with entry points for distrustful parties and benchmarks.
//!
//! This is the architecture of Ramen §1 and Fig. 11 ("a next-step function in generic MPC plus
//! a DORAM") and of Gordon et al. §3 (the RAM model: one memory, a small state, a
//! next-instruction function; running time fixed in advance).
//!
//! | item | what it is |
//! |---|---|
//! | [`Ram`] | what a program is written against: secret words, batched products, selects and comparisons, reads and (conditional) writes of arrays at secret indices |
//! | [`Machine`] | one party's secure machine: engine + one DORAM memory of arrays; per-part costs |
//! | [`PlainRam`] | the plaintext machine: the same program in the clear, with bound checks and access counts |
//! | [`OArray`] | an array in the machine's memory, indexed by secrets |
//! | [`Backend`] | the DORAMs a machine runs on: any [`Protocol`](doram_oram::Protocol) over F_p words — [`LinearScanOram<Fp>`](doram_oram::LinearScanOram), Ramen, `Duoram<Fp>`, `Fjkw15FpMemory` |
//! | [`binary_search`], [`bfs`], [`dijkstra`], [`matching`] | the programs: plaintext reference, cost [`Plan`], the program over any [`Ram`], `run_plain`; binary search also for a batch of keys over one setup ([`binary_search::run_many_with`]) |
//! | [`Program`], [`run_party`], [`run_local`] | one shape of entry points: each program is a type ([`BinarySearch`], [`Bfs`], [`Dijkstra`], [`StableMatching`], [`LinearSearch`]) run by the same functions, generic over the backend |
//! | [`input`] | parsers for sorted arrays, edge lists and preference lists |
//! | [`Roles`], [`PartyRun`] | who owns the data, who queries, who learns the output; what a party's run produced |
//! | [`bench`](mod@bench) | benchmarks with the ORAM/CPU split and JSON output |
//!
//! # The security model
//! Three parties, honest majority, one passive corruption. Secrets are replicated shares in
//! the engine and additive shares in the DORAM. What every party learns: the public sizes the
//! data owner announces (n; V and E; k), the program, and — on a backend that reveals it — the
//! type of each access, which every program here fixes in advance (it is part of the program
//! text, not of the data). The messages each party sends and receives (count, sizes, rounds)
//! are a function of the sizes only; the tests check this on transcripts for every program and
//! backend. Only the receiver learns the output.
//!
//! # How to write a program
//! A program is an ordinary Rust function generic over a [`Ram`], written once: it runs in the
//! clear on [`PlainRam`] (which checks comparison bounds and addresses and counts accesses, so
//! the program's plan and output are tested cheaply on many inputs) and securely on a
//! [`Machine`] over any backend. Its control flow may depend on
//! public values only (sizes, loop counters); everything that depends on secrets is computed
//! with the engine — arithmetic on shares, comparisons, selects — so that running time and the
//! sequence of operations are fixed by the public sizes (Gordon et al. §2.1: the running time
//! "on x, D is exactly t"). The steps:
//!
//! 1. **Set up** the machine on the party's session: [`Machine::setup`].
//! 2. **Plan**: compute from the public sizes how many comparisons, one-hot vectors (their
//!    random bits) and DORAM accesses the program makes, and preprocess the bits
//!    ([`Machine::preprocess_bits`]; comparisons need none, and DORAM preprocessing happens in
//!    [`Machine::boot`]). The tests check that the plan is exact.
//! 3. **Input** the small secrets into the engine ([`doram_mpc::Online::input`], via
//!    [`Machine::engine_in`]) and **lay out the memory**: one array per table
//!    ([`Machine::alloc_input`] shares the owner's data without any message,
//!    [`Machine::alloc_fill`] for public initial values, [`Machine::alloc_secret`] for engine
//!    values). Then [`Machine::boot`] creates the DORAM over all arrays and loads them.
//! 4. **Run** the steps, generic over [`Ram`]: [`Ram::read`] / [`Ram::read_many`] with secret
//!    indices, [`Ram::lt_many`], [`Ram::select_many`], [`Ram::mul_many`] and friends for the
//!    CPU step (put independent operations in one batch: a batch costs the rounds of one
//!    operation), [`Ram::write`] when the new value is computed anyway and [`Ram::cond_write`]
//!    when whether to write is secret. Never branch on an opened value.
//! 5. **Output**: open the results to the receiver only ([`doram_mpc::Online::open_to`];
//!    [`Machine::snapshot`] for whole arrays).
//!
//! Which op type a backend hides matters in step 4: [`Ram::hides_op_type`] says whether
//! the DORAM hides reads from writes. `cond_write` is one hidden-op access on Ramen and the
//! linear scan, and a read, a select and a write on Duoram — the same public sequence whatever
//! the condition — so a program written with it is correct and oblivious on every backend.
//!
//! ## Worked example: binary search
//! The search of [`binary_search::search`], simplified to its core (the library version also
//! computes "found" and keeps every address in range): the window length `len` is public and
//! shrinks the same way whatever the comparisons say, and the secret `base` moves by a linear
//! function of the comparison bit, so no select is needed.
//! ```
//! use doram_core::{Entropy, PartyId};
//! use doram_field::Fp;
//! use doram_mpc::Input;
//! use doram_oram::LinearScanOram;
//! use doram_programs::{Machine, OArray, Part, PlainRam, ProgramError, Ram, run_three, to_int};
//!
//! /// The number of entries below `key` in the sorted, non-empty `array` (its partition
//! /// point), on any machine.
//! fn lower_bound<R: Ram>(m: &mut R, array: OArray, key: R::Word) -> Result<R::Word, ProgramError> {
//!     // The answer is in [base, base + len], and base + len ≤ n.
//!     let mut base = m.int(0);
//!     let mut len = array.len();
//!     while len > 1 {
//!         let half = len / 2;
//!         let probe = base + m.int(half as u64 - 1);
//!         let v = m.read(array, probe)?; // one memory access at a secret address
//!         let below = m.lt_many(&[(v, key)], 64)?[0];
//!         // base += half·[v < key]: linear in the bit, no round.
//!         base += R::value(below) * Fp::from_u64(half as u64);
//!         // The same public length whichever way the comparison went.
//!         len -= half;
//!     }
//!     let v = m.read(array, base)?;
//!     let below = m.lt_many(&[(v, key)], 64)?[0];
//!     Ok(base + R::value(below))
//! }
//!
//! let data = [3u64, 5, 5, 8, 13, 21, 34];
//! let key = 9u64;
//! let expected = data.partition_point(|&x| x < key) as u64;
//!
//! // In the clear, on the plaintext machine.
//! let mut plain = PlainRam::new(true);
//! let array = plain.alloc_ints(&data)?;
//! plain.boot()?;
//! assert_eq!(lower_bound(&mut plain, array, Fp::from_u64(key))?, Fp::from_u64(expected));
//!
//! // Securely: P0 owns the array, P1 the key, P2 learns the result.
//! let results = run_three(Entropy::Os, |session, seed| {
//!     let me = session.me();
//!     let mut m = Machine::<LinearScanOram<Fp>>::setup(session, seed)?;
//!     let k = [key];
//!     let key = m.engine_in(Part::Input, |on| {
//!         on.input(match me {
//!             PartyId::P1 => Input::Own(&k[..]),
//!             _ => Input::Peer { dealer: PartyId::P1, count: 1 },
//!         })
//!     })?[0];
//!     let owned = (me == PartyId::P0).then_some(&data[..]);
//!     let array = m.alloc_input(PartyId::P0, owned, data.len())?;
//!     m.boot(0)?; // accesses preprocess inline
//!     let index = lower_bound(&mut m, array, key)?;
//!     let out = m.engine_in(Part::Output, |on| on.open_to(PartyId::P2, &[index]))?;
//!     out.map(|v| to_int(v[0], data.len() as u128 + 1, "index")).transpose()
//! });
//! let [p0, p1, p2] = results.map(|r| r.unwrap());
//! assert_eq!((p0, p1), (None, None));
//! assert_eq!(p2, Some(expected));
//! # Ok::<(), ProgramError>(())
//! ```
//! The library's [`BinarySearch`] (run by [`run_party`]) adds the rest: the owner announces n
//! ([`announce_sizes`]), inputs are checked before anything is sent, the DORAM is
//! preprocessed for the exact access count ([`binary_search::plan`]), and the backend is a type
//! parameter (`run_party::<BinarySearch, Ramen>`), or a run-time choice through the `doram`
//! facade's `BackendKind`.
//!
//! # Sessions and shares
//! A party has one session; the DORAM owns it and the engine borrows it between accesses (see
//! [`machine`] for why that is safe, and how shares convert between the engine's replicated
//! and the DORAM's additive form). The engine computes in F_p, so all backends run with F_p
//! words — Duoram as the generic `Duoram<Fp>` rather than over Z_2^64 with a conversion per
//! access.
//!
//! # Choosing a backend
//! This crate is generic over the [`Backend`] and names no protocol; the `doram` facade lists
//! the backends (`BackendKind`) and chooses one at run time.
//! * **Duoram** (`Duoram<Fp>`): Init is essentially free (the memory is just
//!   re-shared), an access costs O(log n) communication and O(n) local work (DPF evaluation),
//!   and its DPF preprocessing runs inline per access when the material would not fit in
//!   memory. The op type is public. This is the backend for large memories searched a few
//!   times: a binary search over 2^20 secret 64-bit entries (sharing, Init, 8 DORAM accesses
//!   after 14 probes from engine tables, output) takes seconds end to end (README's table);
//!   Ramen takes about ten times as long for the same search, almost all of it in its first
//!   epoch's preprocessing (see [`bench`](mod@bench)).
//! * **Ramen** (`Ramen`): O(√n·log n) per access amortised over an epoch of
//!   √n accesses, hides the op type — the backend for long programs with many accesses
//!   (BFS); its first epoch (the tags of the whole memory) makes a single search
//!   over 2^20 entries expensive.
//! * **Linear scan** ([`LinearScanOram<Fp>`](doram_oram::LinearScanOram)): O(n) per access,
//!   2 online rounds; the baseline and second oracle for small memories.
//! * **FJKW15** (`Fjkw15FpMemory`, the three-party tree ORAM over F_p words): polylogarithmic
//!   communication and work per access (a few ms and a few hundred kB at 2^10–2^12), no
//!   preprocessing, the op type public; Init is a secure shared load of n accesses, which
//!   dominates a single program run (docs/notes/fjkw15.md). An address outside the memory
//!   stops every party with a typed error.
//!
//! Stable [`matching`] makes no DORAM access (its arrays live in the engine, indexed by
//! one-hot vectors), so its cost is the same whichever backend is named.
//!
//! # Errors
//! [`ProgramError`]: inputs are parsed and checked with typed [`InputError`]s before a party
//! sends anything; peer faults (closed links, timeouts, malformed messages, announced sizes
//! out of bounds) name the peer; nothing panics on peer input.

pub mod bench;
pub mod bfs;
pub mod binary_search;
pub mod dijkstra;
pub mod error;
pub mod host;
pub mod input;
pub mod machine;
pub mod matching;
pub mod program;
pub mod ram;
pub mod roles;
pub mod stored;
pub mod two;
pub mod two_duoram;
pub mod two_tree;

pub use bfs::{Bfs, BfsDense, BfsQueue};
pub use binary_search::{BinarySearch, LinearSearch};
pub use dijkstra::Dijkstra;
pub use error::{InputError, ProgramError};
pub use host::Host;
pub use machine::{Backend, Cost, Machine, Meter, OArray, Part, Plan, bits_for, to_int};
pub use matching::StableMatching;
pub use program::{
    Program, run_local, run_local_host, run_local_on, run_local2, run_party, run_party2,
};
pub use ram::{PlainCounts, PlainRam, Ram};
pub use roles::{
    PartyRun, Roles, agree_on_run, all_ok, announce_size, announce_sizes, run_three, run_three_on,
};
pub use two::{Machine2, Machine2With, Memory2, ScanMemory};
pub use two_duoram::{DuoramMemory, Machine2Duoram};
pub use two_tree::{Machine2Tree, TreeMemory};
