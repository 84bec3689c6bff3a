//! 3P-Duoram: a three-party distributed ORAM with constant online communication (Vadapalli,
//! Henry, Goldberg, "DUORAM: A Bandwidth-Efficient Distributed ORAM for 2- and 3-Party
//! Computation", USENIX Security 2023; sections, protocols and appendices numbered as in
//! `shared/papers/001_*.txt`).
//!
//! Three parties hold a memory of `n` words of a ring `W` ([`DuoWord`]: `Z64`, the paper's
//! words and the benchmarked case, or `Fp`). Addresses and values are additively shared; the
//! type of each operation (READ, UPDATE, WRITE) is public. In the paper the primaries P0 and P1
//! hold additive shares `D_0, D_1` of the memory, each with a blinded copy of the other's share
//! (`D̃_{1−b} = D_{1−b} + ζ_{1−b}`) and its own blind `ζ_b`; the helper P2 holds both blinds.
//! Here each primary keeps the sum `D_b + D̃_{1−b} + ζ_b` and `ζ_b` (decision 6). One passive
//! corruption, no collusion.
//!
//! Brief overview: [`Duoram`] is one party's endpoint ([`Duoram::setup`],
//! [`Duoram::preprocess`], [`Duoram::init`], [`Duoram::read`], [`Duoram::update`],
//! [`Duoram::write`], [`Duoram::memory`]) and implements `doram_oram::DistributedOram` with
//! public operation types; [`Role`] and [`Side`] are the party roles; [`run_local`] /
//! [`run_party`] run benchmarks ([`BenchOutcome`]); [`DuoramError`] names the peer at fault.
//! [`two_party`] is 2P-Duoram (§5): two parties, no helper — UPDATE with the DPF keys made
//! between them by OT, READ by symmetric PIR both ways (`doram-spir`), and the memory backend
//! [`two_party::Duoram2`] (its module documentation has the protocol, its decisions and its
//! costs).
//!
//! # How it works
//! * **Preprocessing** ([`Duoram::preprocess`], module `prep`): for every future operation,
//!   P0 and P1 generate three DPFs at one random index `ri` with P2 as the dealer of correlated
//!   randomness (App. C), convert them to additive words (§4.1.1, App. D) and send P2 one half
//!   each (Protocol 1, steps 1–4). All DPFs of a batch are generated in parallel, so a batch
//!   costs `⌈log2 n⌉ + 1` rounds (for n > 4) whatever its size, and O(log n) bytes per DPF.
//! * **READ** (Protocol 1, steps 5–10): everybody reveals its share of `i* − ri` (mod `2^h`),
//!   and everybody rotates its DPF vectors by the offset `S` — a rotation that is never
//!   materialised: the dot products run over two contiguous slices each. P2 sends
//!   `γ_b = −⟨ζ_b, t_{1−b}^(k)⟩ ± ρ`, and
//!   `read_b = ⟨D_b + D̃_{1−b}, t^(1)⟩ − ⟨ζ_b, t^(k') − t^(1)⟩ + γ_b`. Two sequential messages.
//! * **UPDATE** (Protocol 2 with REFRESHBLINDS, §3.1.2): the offset and the masked deltas
//!   `M_b + F_b^(k)` in one message; every party adds `V^(k) = v^(k) + F^(k)·t^(k)` (shifted)
//!   to its state: `D_b += V^(1)`, `ζ_b −= V^(blind)`, `D̃_{1−b} += V^(cross) − V^(1)` (here:
//!   `ζ_b −= V^(blind)` and `D_b + D̃_{1−b} + ζ_b += V^(cross) − V^(blind)`), and P2 refreshes
//!   both blinds. One message.
//! * **WRITE**: READ, then UPDATE by `value − old` (three sequential messages).
//! * **Independent reads** ([`Duoram::read_batch`]): `k` READs whose addresses are known
//!   together share their two messages (Table 2, "k Ind Reads"); dependent reads are `k`
//!   calls of [`Duoram::read`], two messages each.
//!
//! `grep -rn 'Protocol 1'` (or `'App. C'`, `'Protocol 2'`, …) lists every step.
//!
//! # Costs
//! Online, per operation, for `Z64` (payload words of 8 bytes; each message also carries the
//! transport's 12-byte header); `tests/costs.rs` measures every row:
//!
//! | operation | P0, P1: messages / words sent | P2 | sequential messages |
//! |---|---|---|---|
//! | READ | 2 / 2 | 4 / 4 | 2 |
//! | UPDATE | 2 / 6 | 2 / 4 | 1 |
//! | WRITE | 4 / 6 | 6 / 6 | 3 |
//! | READ + WRITE (interleaved) | 6 / 8 | 10 / 10 | 5 |
//!
//! The primaries' READ is Table 2's (2 words in 2 messages), and every row has Table 2's number
//! of sequential messages. P2 sends two words more per READ and UPDATE than in the paper
//! because the interface shares addresses and values among all three parties: P2 sends its
//! share to both primaries in the first flight. An UPDATE sends 6 words per primary instead of
//! 7 (`M_b + F_b^(1)` is not needed, decision 6) and a WRITE 6 instead of Table 2's 9 (its
//! UPDATE also reuses the READ's offset and material, decision 5). Local work is O(n) word
//! operations per operation and party.
//!
//! Preprocessing, per batch of `m` operations (`3m` DPFs), `h = ⌈log2 n⌉`, `o = min(4, h)`:
//! `h − o + 4` rounds; per DPF `17(h − o) + 56·2^o + 24` bytes from each primary to the other
//! and `16(h − o) + 40·2^o` from P2 to P1, plus one key half of `16(h − o) + 16·2^o + 16`
//! bytes per operation from each primary to P2, in two messages (`Z64`;
//! about 11 KiB per operation in total at `2^20`). Computation per DPF at each holder (three
//! DPFs per operation at P0 and P1, two at P2): about `2^{h−o}` fixed-key AES calls for the tree
//! and, for `Z64`, `2^{h−o}` ChaCha12 keystreams of four blocks (two for DPF #1) for the
//! leaves, and one pass writing two words per leaf. `tests/costs.rs` checks the message counts
//! and sizes.
//!
//! Memory: the state is `2·2^h` words per party. One operation's material is `5·2^h + 4` words
//! at a primary (DPF #1 keeps no value words) and `4·2^h` at P2 (40 MiB and 32 MiB for
//! `2^h = 2^20` and `Z64`), plus one flag byte per output node: each DPF half is kept as the
//! output stage's raw words with its output corrections and decoded on the fly, in L1-sized chunks, by the online
//! loops. A READ needs only the `t` vectors, but an operation's type is not known when it is
//! preprocessed. A preprocessing batch holds at most `2^20` leaves per DPF position (one
//! operation per batch from `2^20` on, at most 1024 operations for small memories), and the
//! vectors of consumed operations are kept for reuse by the next preprocessing: up to 64 MiB,
//! at least one operation's worth, and as many as the largest preprocessing call so far asked
//! for (so preprocessing in equal chunks reuses the last chunk's memory instead of faulting in
//! fresh pages, and never holds more than one chunk did).
//!
//! Where the time goes: the preprocessing is the ChaCha12 output stage (decision 2: four
//! ChaCha blocks per output node of DPFs #2 and #3, two of DPF #1, at every holder; most of the
//! preprocessing's CPU time), the tree levels (one fixed-key AES call per node), and storing two
//! words per leaf; the online phase streams the stored words once per operation. Preprocessing
//! in batches ahead of time (`--preprocess --chunk C`, as PRAC measures its preprocessing)
//! shares a batch's `h` rounds, but its material has left the caches when the online phase
//! reads it. Preprocessing costs about 11 KiB and `h` rounds per batch; online bytes per
//! operation (all parties): READ 96, UPDATE 152, WRITE 200. Timings, and the comparison with
//! PRAC, are in BENCHMARKS.md ("3P-Duoram"), measured with `doram bench duoram`.
//!
//! # Deliberate decisions (the spec's "underspecified items", §7, and other choices)
//! 1. **DPFs: Half-Tree, with the last four levels folded into a distributed output stage**
//!    (U5). The paper builds BGI tree DPFs with an AES PRG. Here the tree is Half-Tree's (one
//!    fixed-key CCR call per node, children `H(s) ⊕ t·CW` and that `⊕ s`; the DPF crate's
//!    construction and level code), and the generation is App. C's: per level the holders XOR
//!    the hashes of all their nodes and compute `CW = A_0 ⊕ A_1 ⊕ (1 ⊕ α)·Δ` with one
//!    Du–Atallah AND of the shared path bit and the shared `Δ = root_0 ⊕ root_1`. Half-Tree needs
//!    one AND per level and no separate flag corrections (the flag is the label's lsb). The last
//!    `o = 4` levels are not expanded: each node at depth `h − 4` yields its 16 leaves directly
//!    (decision 2), with one output correction per slot, as the DPF crate's Half-Tree does with
//!    8: `2^h / 16` AES calls for the tree instead of BGI's `2·2^h` expansion calls. Folding
//!    four levels rather than three halves the tree's hashing and saves a round for `16·2^o`
//!    more bytes per DPF; with its output words summed in registers it measured 3–27 % less
//!    preprocessing CPU time than three levels (more at larger n).
//! 2. **Leaf words and the XOR → additive flag conversion (U2, U6)**: slot `j` of an output
//!    node `s` gives two words `a_j(s), v_j(s)`, pseudorandom in the ring — raw label bits
//!    would not do: 127 of the 128 bits are left once the flag is removed, and on the path the
//!    two labels differ by the secret `Δ`. For `Z64` they are words `j` and `16 + j` of ChaCha12
//!    keyed by `s` (`doram_prim::chacha`: a PRF keyed by the label, so the other party's on-path
//!    label `s ⊕ Δ` is simply an unknown key; sixteen nodes per call in AVX-512 lanes, no key
//!    schedule); this replaced one fixed-key AES call per slot, `CCR(s ⊕ T(j, 0))`, and took
//!    about a fifth off the preprocessing (`docs/notes/benchmark-history.md`). For `Fp` they
//!    come from two tweaked CCR streams by rejection sampling. App. D's conversion needs, per
//!    converted flag vector, `(v, F)` of *another* DPF at the same index, plus one product and
//!    two openings. Instead each DPF's own output stage is corrected: with
//!    `pm = Σt̂_0 − Σt̂_1 = ±1` and `C_j = Σa_j(s_0) − Σa_j(s_1)` (additively shared sums over all
//!    output nodes), `OCW_j = pm·(E_j − C_j)` makes `t_b = ±(a_j + t̂·OCW_j)` additive shares of
//!    `e_ri`, where `E = e_{ri mod 2^o}` is additively shared from the XOR-shared low bits by one
//!    bilinear product with dealer masks; likewise `OCW'_j = pm·(ρE_j − C'_j)` makes the value
//!    words sum to `ρ·e_ri` for a shared random `ρ`, i.e. the paper's `v_b` with
//!    `F_b = −Σ v_b`. These are exactly BGI's output correction words (computed in MPC:
//!    one Beaver scalar-times-vector product dealt by P2 and one opening); the flag words `a`
//!    are never used for anything else, so revealing `±(E_j − C_j)` reveals nothing, and `v`
//!    (revealed through `F^(k)` in UPDATE) is independent of `a`. So three DPFs per operation,
//!    and P2 gets its additive vectors by evaluating the key halves it receives (root,
//!    correction words, output corrections) — it never holds both halves of a DPF.
//! 3. **B2A for ri (U1)**: option B of the spec, `ri_b = Σ_i i·t_b^(1)[i]` mod the ring: no
//!    communication, and `ri_{1−b} = ri − ri_b` with `ri` uniform and unknown to either party.
//! 4. **Init with arbitrary shares** (pitfall 14): the blinds start random, not zero (a zero
//!    blind would hand P0 the plaintext). `ζ_0` comes from the PRG P0 shares with P2 and `ζ_1`
//!    from the one P1 shares with P2; P2's input share is folded into the primaries' shares
//!    under masks from the same PRGs, and each primary receives the other's blinded share —
//!    one round, `n` words on each of four links.
//! 5. **WRITE = READ + UPDATE on one triple.** The UPDATE of a WRITE uses the READ's DPFs and
//!    offset: the address is the same, so revealing the offset once reveals everything a second
//!    triple's offset would, and a READ reveals nothing about `v` or `F`. So every operation —
//!    READ, UPDATE or WRITE — consumes exactly one triple, and `preprocess(k)` covers `k`
//!    accesses of the `DistributedOram` interface whatever their types.
//! 6. **State: `A = D_b + D̃_{1−b} + ζ_b` and `ζ_b` at each primary.** READ only uses
//!    `D_b + D̃_{1−b}` and `ζ_b` (`⟨D_b + D̃_{1−b}, t^(1)⟩ − ⟨ζ_b, t^(k') − t^(1)⟩
//!    = ⟨A, t^(1)⟩ − ⟨ζ_b, t^(k')⟩`), and on `A` UPDATE's three changes sum to
//!    `V^(cross) − V^(blind)`: DPF #1's vector cancels. So a primary keeps two vectors instead
//!    of three (`A = D + ζ_0 + ζ_1` is the same vector at both primaries — what each could
//!    compute from its paper state anyway), an UPDATE touches two state vectors and two DPFs
//!    instead of three and three, `M_b + F_b^(1)` is never sent, and DPF #1 keeps no value
//!    words. Get Memory returns `A − ζ_0` at P0 and `−ζ_1` at P1 (plus a zero-sharing).
//! 7. **Non-power-of-two n (U8)**: the DPF domain and the state vectors have `2^h ≥ n` entries
//!    and ri is uniform in `0..2^h`; the offset is taken mod `2^h`. Cells `n..2^h` are padding:
//!    zero, never returned by [`Duoram::memory`]. Padding costs up to a factor 2 in work and
//!    memory for `n` just above a power of two.
//! 8. **Opening the offset.** For `Z64` each party reduces its share mod `2^h` (a homomorphism
//!    since `2^h` divides `2^64`): exact. For `Fp` the primaries add `2^h·q_b` with `q_b` uniform
//!    in `1..=2^40` and the integer `i* − ri + 2^h(q_0 + q_1)` is opened: the offset is
//!    `mod 2^h` of it, and the carry it leaks is statistically hidden (2^−40), as in the
//!    linear-scan DORAM. This needs `h + 43` bits of integer capacity (any `n ≤ 2^40` for `Fp`).
//! 9. **Outputs are fresh three-party sharings**: every READ output and [`Duoram::memory`] add
//!    a zero-sharing from the pairwise PRGs (P2's share of a READ is its zero-share).
//! 10. **Material is consumed once and in step**: every message is sent in the transport
//!     phase of the material it belongs to (the low 16 bits of its id, [`msgs`]), which the
//!     receiver's transport checks, so pools out of step (e.g. [`Duoram::discard_preprocessed`]
//!     at one party only) fail at once with `NetError::WrongPhase`, and a lost, repeated or
//!     reordered frame with `NetError::OutOfSequence`, both naming the sender; the pool refuses
//!     to hand out an id twice ([`DuoramError::MaterialReused`]).
//! 11. **P2 works while the primaries do**: P2 sends the correlations of all batches of a
//!     preprocessing run first; each primary sends the tree of its key half (root and
//!     correction words) as soon as the levels are done and the output corrections at the end,
//!     so P2 expands its two halves while the primaries run their output stage, and finishes
//!     them while they generate the next batch.
//! 12. **Out-of-range addresses** are not detectable (addresses are shared): an address `a ≥ n`
//!     reads and writes cell `a mod 2^h` (a padding cell if `n ≤ a mod 2^h`), for `Fp` as long
//!     as `a + 2^{h+41}` stays below p; the opened offset then no longer hides it. Nothing
//!     panics or hangs, and message sizes do not change.
//!
//! # Example
//! Three parties in one process, one thread each:
//! ```
//! use doram_core::Seed;
//! use doram_field::Z64;
//! use doram_mpc::Additive;
//! use doram_net::Session;
//! use doram_duoram::Duoram;
//!
//! let results = std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(3)
//!         .into_iter()
//!         .map(|session| {
//!             s.spawn(move || -> Result<_, doram_duoram::DuoramError> {
//!                 let me = session.me();
//!                 let mut oram = Duoram::<Z64>::setup(session, 10, Seed([me.index() as u8; 16]))?;
//!                 oram.preprocess(3)?;
//!                 // Cell j holds 10·j, shared as (10·j, 0, 0); constants are public sharings.
//!                 let c = |v: u64| Additive::public(Z64(v), me);
//!                 oram.init(&(0..10).map(|j| c(10 * j)).collect::<Vec<_>>())?;
//!                 let old = oram.write(c(3), c(99))?; // returns the old value
//!                 oram.update(c(3), c(1))?; // adds 1
//!                 let new = oram.read(c(3))?;
//!                 Ok([old, new])
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<_>, _>>()
//! })?;
//! let open = |t: usize| results.iter().map(|r| r[t].share()).fold(Z64(0), |a, b| a + b);
//! assert_eq!(open(0), Z64(30));
//! assert_eq!(open(1), Z64(100));
//! # Ok::<(), doram_duoram::DuoramError>(())
//! ```

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
pub mod two_party;
pub mod word;

pub use duoram::{BATCH_LEAVES, BATCH_OPS, Duoram, MAX_LOG_N, READ_BATCH_LEAVES};
pub use error::DuoramError;
pub use role::{Role, Side};
pub use runner::{
    BenchConfig, BenchOutcome, Comm, Kind, OpMix, PartyReport, SYNTHETIC_DEALER, run_local,
    run_party, thread_cpu_time,
};
pub use word::DuoWord;
