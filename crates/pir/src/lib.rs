//! Three-server private information retrieval with guaranteed output ("PIR-GOD", spec
//! `shared/specs/pir-god.md`, paper `shared/papers/003_*.txt`).
//!
//! Three servers S_0, S_1, S_2 hold the same database of fixed-size records; at most one of
//! them is malicious. A client retrieves record i so that the corrupt server learns nothing
//! about i, and it never outputs a wrong record: every deviation it has *evidence* of (a
//! failed check, a malformed or contradictory authenticated message) names a server that is
//! certainly honest, which then supplies the record in the clear (the paper's step 18; the
//! honest server learns i, as the security definition allows), checked against the Merkle
//! root the servers announce ([`merkle`]). Silence is not evidence — the network may delay or
//! drop anything — so a query that needs a silent or late server fails closed
//! ([`PirError::Unreachable`]) unless the caller assumes a synchronous network
//! ([`client::Network::AssumeSynchronous`], the paper's rule). See `docs/notes/pir-network.md`.
//!
//! # How it works
//! * **Offline** (per query, before it): S_2 samples r and a MAC key α and runs the
//!   Doerner–shelat two-party DPF key generation for the point function at r with payload
//!   (1, α) "in its head" ([`dpf::generate`]); it sends S_0 and S_1 their *partial views*
//!   (inputs, seed, G-oracle outputs; 377 bytes at N = 2^20). Each S_b rebuilds its full view
//!   and evaluates its key on the whole domain in one pass ([`dpf::regenerate`]).
//! * **Online**: all servers send views; the client compares them, re-runs the cheap G-oracle
//!   ([`dpf::check_g`]) and checks that the payload is (1, α); it sends Δ = i − r to S_0 and
//!   S_1 only; they answer ⟨z⟩_b = Σ_x ⟨z^x⟩_b·D[x + Δ] and ⟨y⟩_b likewise
//!   ([`answer::answer`]); the client accepts z when α·z = y on every chunk.
//!
//! # API
//! * [`Database`]: records from bytes, `u64`s, lines, CSV or a file ([`Database::from_file`],
//!   format with magic, version, record size, count and a BLAKE3 digest in [`db`]).
//! * [`Server`] with [`ServerConfig`] and a [`Behaviour`] (honest or one of the deviations of
//!   the adversarial tests): [`server::serve_tls`] runs a networked server (mutually
//!   authenticated TLS mesh with the other servers from `doram.toml`, server-authenticated TLS
//!   for clients on a client-facing address) until its [`ShutdownHandle`] or a query limit
//!   stops it; [`Server::serve`] does the same over any [`server::Acceptor`].
//! * [`Client::connect`] / [`client::query`]: a client over TLS (it pins the configuration's
//!   CA and checks each server's name, and connects to the three in parallel);
//!   [`client::ClientOptions`] set the whole-query deadline and what silence means;
//!   [`Client::query`] returns a [`QueryOutcome`]: the record, the [`Fallback`] taken if any
//!   (the [`Deviation`], the [`Suspects`] it implicates, the trusted server), timings and
//!   bytes per server.
//! * [`local::LocalCluster`]: the three servers on threads with in-process sessions.
//! * [`bench::run`]: offline, online and client time and bytes per party, with
//!   [`bench::BenchReport::to_json`]; `examples/pir_bench.rs` sweeps sizes.
//!
//! ```
//! use std::sync::Arc;
//! use doram_pir::{Database, local::{LocalCluster, LocalOptions}};
//!
//! let db = Arc::new(Database::from_u64s(&[10, 20, 30, 40, 50])?);
//! let cluster = LocalCluster::honest(db, LocalOptions::default())?;
//! let mut client = cluster.client()?;
//! let out = client.query(3)?;
//! assert_eq!(out.value, 40u64.to_le_bytes());
//! assert!(out.fallback.is_none());
//! cluster.shutdown();
//! # Ok::<(), doram_pir::PirError>(())
//! ```
//!
//! # Step map
//! `grep -rn 'Algorithm 2, step 14'` and the like find each step.
//!
//! | paper | what | here |
//! |---|---|---|
//! | Algorithm 1, steps 1–11; Functionality 2 | distributed keygen, G-oracle | [`dpf::generate`], [`dpf::g_level`], [`dpf::g_final`] |
//! | Proposition 3.5, Remark | full view from partial view = full-domain evaluation | [`dpf::regenerate`] |
//! | Algorithm 2, steps 1–4 | S_2's offline phase | [`Server::deal_one`] |
//! | Algorithm 2, steps 5–10 | S_b's offline phase | [`Server::receive_one`] |
//! | Algorithm 2, step 11 | views to the client | `Server::handle_client` (begin, fetch) |
//! | Algorithm 2, steps 12–14, 16–18 | checks, shift, MAC, fallback | [`Client::query`] |
//! | Algorithm 2, step 15; §4.3 | inner products per chunk | [`answer::answer`] |
//!
//! # Blame (spec §8) as implemented
//! | observation | suspects | trusted (gets i) |
//! |---|---|---|
//! Evidence (authenticated by TLS, so only the sending server can cause it):
//!
//! | observation | suspects | trusted (gets i) |
//! |---|---|---|
//! | a server's database description malformed or different from the two agreeing ones | that server | S_2, or S_0 if the odd one is S_2 |
//! | S_2's views malformed, or a refusal an honest S_2 never sends | S_2 | S_0 |
//! | S_b's view malformed, for another instance, or a refusal an honest S_b never sends | S_b or S_2 | S_{1−b} |
//! | S_b reports that its partial view replays an earlier one | S_b or S_2 | S_{1−b} |
//! | view_b (from S_2) ≠ S_b's view (checked for b = 0, then 1, before G) | S_b or S_2 | S_{1−b} |
//! | a G output does not match its inputs | S_2 | S_0 |
//! | payload's first component ≠ 1 (spec §11 P1) | S_2 | S_0 |
//! | S_b's answer malformed, for another instance, or a refusal an honest S_b never sends | S_b | S_2 |
//! | α·z ≠ y on some chunk, or the chunks are no valid record | S_0 or S_1 | S_2 |
//! | a reply carrying a nonce the client never sent on that link, an oversized frame | the sender | as for its stage |
//! | the record in the clear fails its Merkle path | the trusted server | (see below) |
//!
//! Silence (no reply before the deadline, a closed, cut or corrupted connection, "instance not
//! ready") is not evidence: by default the query fails closed with
//! [`PirError::Unreachable`] naming the server. Under [`client::Network::AssumeSynchronous`]
//! the paper's rule applies: the silent server is presumed corrupt ([`Suspects::Presumed`],
//! never [`QueryOutcome::blamed`]) and S_0 (for a silent S_2), S_{1−b} (for S_b silent at the
//! views) or S_2 (for S_b silent later, or unreachable from the start) gets i; if that
//! server's record then fails its Merkle check it is proven corrupt and the remaining server
//! is asked.
//!
//! [`QueryOutcome::blamed`] is `Some` only when the evidence pins down one server; with two
//! suspects it is `None` and [`Fallback::suspects`] lists both. Errors other than
//! [`PirError::Unreachable`] need two misbehaving servers (no two agree on the database, or
//! the server the evidence proved honest returns a record that fails its check).
//!
//! # Costs
//! Field F_p, p = 2^64 − 59 ([`doram_field::Fp64`]); λ = 127-bit seeds plus a control bit in
//! one AES block. Per query, with n = log2 N and m' chunks per record:
//!
//! | | bytes (payload) | computation |
//! |---|---|---|
//! | offline S_2 → each S_b | 17 + 16n + ⌈n/4⌉ + 52 | S_2 ≈ 6N node expansions (it re-walks the tree per level, memory O(2^10)); S_b 2N + N AES |
//! | online S_2 → C | 25 + 16n + ⌈n/4⌉ + 16 + 2(32n + 56) | — |
//! | online S_b → C | 9 + 48n + ⌈n/4⌉ + 72, then 9 + 16m' | 2m'N multiply-adds, lazily reduced |
//! | online C → servers | 9 + 2·(29 + 13) | O(n) field operations and comparisons |
//!
//! The 8-byte nonce in every request and reply and the 16-byte instance ids (freshness, see
//! [`proto`]) cost 64 B online and 16 B offline per query: at n = 20 with 8-byte records that
//! is 3,993 B online (spec formula 3,862 B, +3.4 %) and 788 B offline (formula 751 B, +4.9 %);
//! at n = 24, 4,700 B and 918 B. A fallback adds the clear request and the record with its
//! n-hash Merkle path.
//!
//! The online phase is memory-bound at large N: each holder streams its shares and the
//! records (at 2^24 × 8 B, 256 MiB and 128 MiB per query), and both holders share the
//! machine's memory bandwidth; with 1 KiB records each holder reads the whole database per
//! query. Measured times, with the commands that reproduce them, are in BENCHMARKS.md (PIR
//! section) and the README's table; this documentation does not repeat them.
//!
//! # Deliberate decisions
//! 1. **64-bit prime field with overflow masks** ([`db`]): records are cut into 8-byte words
//!    as in the paper, but a word may exceed p (spec §11 P6). Words are stored reduced, and
//!    only if some word of the database is ≥ p, ⌈m/63⌉ extra *mask chunks* (stored sparsely)
//!    carry the overflow bits; the client rebuilds `w = (w mod p) + p·bit`. Exact for all
//!    data, free for typical data, one DPF and one α for all chunks.
//! 2. **Instance coordination** (spec §2 leaves it open): S_2 picks the instance (a random
//!    128-bit id) and tells the client, which tells S_0 and S_1 (one extra round trip: 4 client
//!    rounds in an honest query instead of the paper's 3). Offline material is single-use by
//!    construction: it moves out of the pool into the connection that fetched it and the
//!    answer consumes it; a second request is refused ([`PirError::InstanceReused`]), and a
//!    partial view that repeats an earlier seed is refused as a replay by S_2.
//! 3. **Canonical view encoding** ([`codec`]): fixed layout, non-canonical values rejected, so
//!    comparing decoded views is comparing bytes (spec §11 P4); packed level XORs carry ẑ in
//!    bit 0 (1,037 B per full view at n = 20 against the formula's 1,042 B).
//! 4. **S_2 simulates both parties literally** rather than deriving party 1 from party 0's
//!    tree: about twice the AES work of the optimised variant, but no second code path for a
//!    security-critical computation (spec §11 P2).
//! 5. **Fail closed on silence, and a Merkle-checked fallback** (beyond the paper, whose step
//!    18 trusts the clear record and whose blame table treats a missing message as proof):
//!    see [`client`] and `docs/notes/pir-network.md`. The Merkle tree costs the servers one
//!    pass of BLAKE3 over the records when the database is loaded and the upper levels in
//!    memory (2^(n−8) × 64 B); a path is rebuilt from a 256-leaf subtree per fallback.
//!
//! # Limitations
//! * Guaranteed output holds against one malicious server on a network that delivers honest
//!   messages within the client's deadline. On a network that does not, the client still
//!   never outputs a wrong record, never blames an honest server and never sends i to a server
//!   the evidence shows may be corrupt; it fails closed instead. The deadline must exceed what
//!   an honest server may take (S_2 refilling an empty pool, the inner product), or honest
//!   slowness makes queries fail (or, under the synchronous assumption, sends i to the server
//!   the paper's rule names).
//! * S_2 sends the partial views to S_0 and S_1 from one thread over one mesh session and pools
//!   an instance only after both sends returned. A corrupt holder that stops reading its
//!   socket can therefore stall production, once the TCP buffers are full, for up to the mesh
//!   send timeout (`timeout_ms` of `doram.toml`); after that its link is marked failed and
//!   production continues. The guarantee needs the timeouts ordered: mesh timeout + one key
//!   generation < [`ServerConfig::instance_wait`] < the client's deadline ≤ the servers'
//!   handshake deadline, idle timeout and instance hold; otherwise a client may time out on
//!   an honest S_2 while the pool is stalled.
//!   [`server::serve_tls`] warns when the first inequality does not hold.
//! * The fallback reveals i to an honest server (allowed by the definition); the 4-server
//!   variant of footnote 1 is not implemented.

pub mod answer;
pub mod behaviour;
pub mod bench;
pub mod client;
pub mod codec;
pub mod db;
pub mod dpf;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod local;
pub mod merkle;
mod prg;
pub mod proto;
pub mod server;

pub use behaviour::{Behaviour, Stage};
pub use client::{Client, Deviation, Fallback, QueryOutcome, Suspects};
pub use db::{Database, DbInfo};
pub use error::PirError;
pub use proto::ServerId;
pub use server::{Server, ServerConfig, ShutdownHandle};
