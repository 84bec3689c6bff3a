//! Ramen: a three-party distributed ORAM (Braun, Pancholi, Rachuri, Simkin, "Ramen: Souper Fast
//! Three-Party Computation for RAM Programs", ePrint 2023/310; figures numbered as in
//! `shared/papers/000_*.txt`).
//!
//! Three parties hold an additively shared memory of n words of F_p (p = 2^128 − 28·2^64 + 1)
//! and execute instructions (op, adr, val) whose op, address and value are secret-shared:
//! every access returns shares of the value at adr (before the access) and a write stores val.
//! Reads and writes exchange exactly the same messages. One passive corruption, honest
//! majority; O(1) rounds (nine) and O(√n·log n) communication and computation per access,
//! amortized.
//!
//! Brief overview: [`Ramen`] is one party's endpoint (setup, [`Ramen::prepare`],
//! [`Ramen::load`], [`Ramen::access_shared`], [`Ramen::memory_shares`]) and implements
//! `doram_oram::DistributedOram` (hidden ops, word type `Fp`). [`Params`] fixes the sizes;
//! [`Step`] names the timed steps; [`RamenError`] names the peer at fault. Ramen implements
//! `doram_oram::Protocol`, so `doram_oram::bench` runs its benchmarks (with the step times).
//!
//! # How it works (square-root ORAM)
//! The memory is extended by s = round(√n) dummy cells to m = n + s. An *epoch* is s accesses.
//! For each i, the share ⟨M⟩_{i−1} is masked and permuted by P_{i−1} under a fresh Legendre-PRF
//! key k_i and handed to P_i (Fig. 6, Init). An access first looks the address up in the
//! secret-shared stash (Fig. 4), then reads from memory either the address or — if it is in
//! the stash — the next unused dummy (Fig. 6, with the DOPRF revealing the cell's tag
//! PRF(k_i, adr) to P_i and the p-OT of Fig. 2 unmasking it), and appends the cell to the stash
//! and updates the stash for a write (Fig. 5). Every memory cell is read at most once per
//! epoch, so P_i sees s distinct random tags. After s accesses the stash is written back with
//! multi-point DPFs (Fig. 7) and the next epoch starts with fresh keys (Fig. 14).
//!
//! # Figure map
//!
//! | Ramen | what | here |
//! |---|---|---|
//! | Fig. 1 | F_3-OT | [`ideal::IdealPot`] |
//! | Fig. 2 | Π_3-OT: three-party random OT | [`pot`]: [`pot::Sender`], [`pot::Chooser`], [`pot::Receiver`] |
//! | Fig. 4 | Π_Stash, read | [`stash`] (local steps), [`doram`] rounds R1–R4 |
//! | Fig. 5 | Π_Stash, write | [`stash`], [`doram`] rounds R7–R9 |
//! | Fig. 6 | Π_r-M: memory read via DOPRF tags and p-OT | [`read`], [`tags`], [`doram`] rounds R5–R7 |
//! | Fig. 7 | Π_w-M: write-back with multi-point DPFs | [`refresh`] |
//! | Fig. 8, 9, 22 | F_DOPRF, masked and unmasked DOPRF | the `doram-doprf` crate |
//! | Fig. 13 | F_DORAM | [`ideal::IdealDoram`]; `doram_oram::PlainMemory` |
//! | Fig. 14 | Π_DORAM: Init, Access, Refresh, Get Memory | [`doram`]: [`Ramen`] |
//! | Fig. 16, 18, 20 | F_Stash, F_r-M, F_w-M | [`ideal`] |
//! | Fig. 23, 25 | F_Select, F_Zero | the `doram-mpc` crate |
//! | §4.5 | PRF output length | [`params`] |
//!
//! `grep -rn 'Ramen Fig. 4'` lists every step of the stash read, and likewise for the other
//! figures. The paper's P_1, P_2, P_3 are our `P0`, `P1`, `P2`.
//!
//! # Costs
//! Per access, with c the number of stash entries (0 … s − 1, s/2 on average), ℓ the memory-tag
//! length, ℓ_s the stash-tag length, elements of 16 bytes; bytes are payload bytes (each frame
//! also carries the transport's 12-byte header):
//!
//! | phase | rounds | bytes sent, all parties together | computation per party |
//! |---|---|---|---|
//! | access (Fig. 4, 5, 6, 14) | 9 (the result is known after 8) | 48c + 48ℓ + 48ℓ_s + ≈1000 | O(c·ℓ_s) AES (P1, P2), O(s) DPF leaves, O(ℓ) Legendre symbols |
//! | refresh, per epoch (Fig. 6, Init step 5) | 1 | 48m | O(m) |
//! | write-back, per epoch (Fig. 7) | 1 | 6 multi-point DPF keys of s points on \[m\] | O(m) DPF leaves |
//! | preprocessing, per epoch | 1 | ≈ 3·(2.6m + 16sℓ) + 2s·key(2^ℓ_s) + 6s·key(s) + 32sℓ_s | m·ℓ Legendre symbols (the key holder only), O(m) AES |
//! | setup | 1 | O(ℓ + ℓ_s) | — |
//!
//! Amortized over an epoch that is O(√n·log n) bytes and O(√n·ℓ) Legendre symbols per access.
//! Measured times and bytes, with the commands that reproduce them, are in BENCHMARKS.md
//! (Ramen section) and the README's table; this documentation does not repeat them.
//!
//! # Deliberate decisions where the paper is underspecified or leaves room
//! 1. **Fewer PRF bits for memory tags** ([`params`]): ℓ = ⌈log2 m²⌉ + 8 instead of
//!    2⌈log2 m⌉ + 40; the key holder redraws a key whose tags collide, which keeps
//!    correctness certain and the distribution the simulator needs.
//! 2. **Only the key holder computes tags; positions are a shared random permutation**
//!    ([`tags`]): P_{i−1} and P_{i+1} share σ_i through their pairwise PRG, so P_{i+1} needs
//!    neither k_i nor the m·ℓ Legendre symbols, and P_i receives a compact tag → position map
//!    (≈ 2.6 bytes per cell) instead of the sorted tag list.
//! 3. **Input-independent DPF keys** ([`stash`]): the flag DPF of Fig. 4, step 4 and the
//!    location DPFs of Fig. 4, step 10 / Fig. 5, step 7 are dealt in preprocessing for random
//!    points; online only a shift is revealed (a XOR shift for the flag, a masked difference
//!    opened with a 40-bit statistical mask for the location, as the reference implementation
//!    converts indices). The stash write reuses the read's location DPF, whose second output
//!    carries a random ρ_i, by sending γ_i = ⟨Δ⟩_i/ρ_i instead of fresh keys.
//! 4. **Linear selects where one input is public** ([`stash`]): Select(flag, loc, c) is
//!    loc + c(1 − flag), since loc = 0 when flag = 0. The op·flag product is computed next to
//!    the address select, so the two selects of Fig. 5, step 5 and the output select of
//!    Fig. 14, step 5 take one round.
//! 5. **The key holder draws memory keys alone** (Fig. 6, Init step 1): DOPRF KeyGen has R1
//!    and R2 send key shares; any uniformly random key unknown to R2 is as good, and the key
//!    holder needs to redraw colliding keys without a round.
//! 6. **Stash addresses are not stored** (Fig. 5, step 3 stores ⟨adr_M⟩, which nothing reads),
//!    and the zero-sharings of Fig. 5, steps 8–11 are dropped: stash shares are always
//!    re-randomised before they are sent (Fig. 4, step 8).
//! 7. **Lazy epochs**: Init only loads the shares; an epoch (its M'_i transfer) starts at the
//!    first access after Init or after a write-back, and its preprocessing runs then if
//!    [`Ramen::prepare`] did not run it before. Get Memory writes the pending stash back into a
//!    copy, so the ORAM stays usable afterwards (the paper's Get Memory ends the run).
//! 8. **Out-of-range addresses** are not detectable (addresses are shared). Such an access
//!    reads an unspecified cell and may write an unspecified cell; nothing panics or hangs,
//!    and the messages keep their sizes (the write-back merges duplicate positions).
//! 9. **Framing**: every message is one frame whose size follows from the parameters; a lost,
//!    repeated or reordered frame is detected at once by the transport's per-link sequence
//!    number (`doram_net::NetError::OutOfSequence`); the masked
//!    memory goes in chunks of 4 MiB (below the transport's frame limit for any n ≤ 2^27).
//!
//! # Example
//! Three parties in one process, one thread each:
//! ```
//! use doram_core::Seed;
//! use doram_field::Fp;
//! use doram_mpc::Additive;
//! use doram_net::Session;
//! use doram_ramen::{Params, Ramen};
//!
//! let params = Params::new(16)?;
//! let results = std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(3)
//!         .into_iter()
//!         .map(|session| {
//!             s.spawn(move || -> Result<_, doram_ramen::RamenError> {
//!                 let me = session.me();
//!                 let mut ramen = Ramen::new(session, params, Seed([me.index() as u8; 16]))?;
//!                 // Cell j holds 10·j, shared as (10·j, 0, 0); constants are public sharings.
//!                 let c = |v: u64| Additive::public(Fp::from_u64(v), me);
//!                 let memory: Vec<_> = (0..16).map(|j| c(10 * j)).collect();
//!                 ramen.load(&memory)?;
//!                 // op = 1 (write) 99 to cell 3, then op = 0 (read) cell 3.
//!                 let old = ramen.access_shared(c(1), c(3), c(99))?;
//!                 let new = ramen.access_shared(c(0), c(3), c(0))?;
//!                 Ok([old, new])
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<_>, _>>()
//! })?;
//! let open = |t: usize| results.iter().map(|r| r[t].share()).sum::<Fp>();
//! assert_eq!(open(0), Fp::from_u64(30));
//! assert_eq!(open(1), Fp::from_u64(99));
//! # Ok::<(), doram_ramen::RamenError>(())
//! ```

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
pub mod stash;
pub mod steps;
pub mod tags;

pub use doram::{Probe, Ramen};
pub use error::RamenError;
pub use params::Params;
pub use steps::{Step, StepTimes};
