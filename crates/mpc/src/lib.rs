//! Three-party secret sharing for doram: the engine under the Ramen DORAM, its distributed
//! Legendre OPRF and RAM-program computation.
//!
//! Brief overview: three parties `P0, P1, P2` in a ring (`P_{i+1}` is the successor of `P_i`,
//! indices mod 3), an honest majority and one passive corruption. Values of any [`Ring`]
//! (`Fp` first, `Z64` too) are held as [`Additive`] shares ⟨x⟩ (`P_i` holds x_i, Σ x_i = x) or
//! [`Replicated`] shares ⟦x⟧ (`P_i` holds (x_i, x_{i−1}), the paper's convention; see
//! [`share`]). [`Party`] is one party's I/O-free engine: pairwise PRGs set up by [`Setup`],
//! local operations, and one-round operations as round functions (`*_start` →
//! [`Round::finish`]). [`Mpc3`] drives a [`Party`] over a [`doram_net::Session`]; only
//! [`driver`] does I/O. Errors are [`MpcError`]; peer faults name the peer.
//!
//! [`Ring`]: doram_field::Ring
//!
//! # Operations and costs
//!
//! All operations are batched: a slice of `k` operations costs the rounds of one. "Elements"
//! are ring elements (16 bytes for `Fp`, 8 for `Z64`), sent as one message per arrow with no
//! length prefix (plus the transport's 12-byte frame header). A batch of length 0 sends
//! nothing. The last column is what the operation realises in the Ramen paper
//! (ePrint 2023/310; figures numbered as in `shared/papers/000_*.txt`).
//!
//! | operation | rounds | elements sent per party | Ramen |
//! |---|---|---|---|
//! | [`Mpc3::setup`] | 1 | 16 bytes to each neighbour | Fig. 9, Init (pairwise PRG seeds) |
//! | [`zero`](Party::zero) | 0 | 0 | F_Zero, Fig. 25 |
//! | [`reshare`](Party::reshare) | 0 | 0 | "randomize additive shares" with F_Zero: Fig. 4 steps 7, 11; Fig. 5 steps 8–11; Fig. 7 steps 2–3 |
//! | [`random_additive`](Party::random_additive), [`random_replicated`](Party::random_replicated) | 0 | 0 | — |
//! | [`input_additive`](Party::input_additive) | 0 | 0 | — |
//! | linear ops (`+`, `−`, `·c`, [`add_public`](Additive::add_public)) | 0 | 0 | e.g. ⟨c+n⟩ in Fig. 14, Access step 2 |
//! | [`to_additive`](Replicated::to_additive) (⟦x⟧ → ⟨x⟩) | 0 | 0 | — |
//! | [`mul_local`](Party::mul_local) (⟦x⟧·⟦y⟧ → ⟨xy⟩) | 0 | 0 | F_MPC (Fig. 24), f = product |
//! | [`select_local`](Party::select_local) (⟦·⟧ → ⟨·⟩) | 0 | 0 | F_Select, Fig. 23 |
//! | [`to_replicated`](Mpc3::to_replicated) (⟨x⟩ → ⟦x⟧) | 1 | k, to the successor | Fig. 4, step 8 |
//! | [`input_replicated`](Mpc3::input_replicated) | 1 | dealer: k to each other party; others: 0 | — |
//! | [`mul`](Mpc3::mul) (⟦x⟧·⟦y⟧ → ⟦xy⟧) | 1 | k, to the successor | F_MPC (Fig. 24), f = product |
//! | [`mul_additive`](Mpc3::mul_additive) (⟨x⟩·⟨y⟩ → ⟨xy⟩) | 1 | 2k, to the successor | F_MPC (Fig. 24), f = product |
//! | [`select`](Mpc3::select) (⟨·⟩ → ⟨·⟩) | 1 | 2k, to the successor | F_Select, Fig. 23 (Fig. 4 step 6; Fig. 5 step 5; Fig. 14 steps 2, 5) |
//! | [`select_replicated`](Mpc3::select_replicated) (⟦·⟧ → ⟦·⟧) | 1 | k, to the successor | F_Select, Fig. 23 |
//! | [`open`](Mpc3::open) (⟨x⟩ to all) | 1 | k to each other party (2k) | — |
//! | [`open_to`](Mpc3::open_to) (⟨x⟩ to `P_t`) | 1 | non-receivers: k to `P_t`; `P_t`: 0 | — |
//! | [`open_replicated`](Mpc3::open_replicated) (⟦x⟧ to all) | 1 | k, to the predecessor | — |
//! | [`open_replicated_to`](Mpc3::open_replicated_to) (⟦x⟧ to `P_t`) | 1 (0 at the idle `P_{t−1}`) | `P_{t+1}`: k to `P_t`; others: 0 | — |
//!
//! Rounds are what [`doram_net::Session::rounds`] counts (a Lamport clock), measured from a
//! state in which the three parties' clocks agree (e.g. right after [`Mpc3::setup`]); the
//! `costs` test checks every row at every party, for `Fp` and `Z64` and k = 0, 1, 7, 1000. A
//! party that only sends in an operation (the openings to one party, replicated input) does not
//! advance its clock by receiving, so the Lamport count may treat its next message as
//! concurrent with that operation — correctly, since it does not depend on it.
//!
//! Every message size depends only on the operation and `k`, never on the values: the tests
//! compare the per-party transcripts of runs on different inputs.
//!
//! # Security notes
//! * Additive openings first add a zero-sharing, so the opened shares reveal x and nothing else
//!   about how it was shared. Replicated openings need no mask: the missing component is
//!   determined by x and the two the receiver holds.
//! * Every one-round operation that sends additive shares re-randomises them with F_Zero first,
//!   and every product adds a zero-sharing, so outputs are fresh sharings.
//! * Setup seeds are the only randomness that crosses the wire; all other randomness comes from
//!   the caller's `seed` through AES-CTR PRGs ([`doram_prim::AesPrg`]).
//!
//! # Example
//! Three parties, one thread each, on an in-process mesh:
//! ```
//! use doram_core::{PartyId, Seed};
//! use doram_field::Fp;
//! use doram_mpc::{Input, Mpc3};
//! use doram_net::Session;
//!
//! let results: Vec<Vec<Fp>> = std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(3)
//!         .into_iter()
//!         .map(|session| {
//!             s.spawn(move || -> Result<Vec<Fp>, doram_mpc::MpcError> {
//!                 let me = session.me();
//!                 let mut mpc = Mpc3::setup(session, Seed([me.index() as u8; 16]))?;
//!                 // P0 inputs x = 5 and y = 7 (additively, no communication).
//!                 let input = match me {
//!                     PartyId::P0 => Input::Own(&[Fp::from_u64(5), Fp::from_u64(7)]),
//!                     _ => Input::Peer { dealer: PartyId::P0, count: 2 },
//!                 };
//!                 let v = mpc.input_additive(input)?;
//!                 let (x, y) = (&v[..1], &v[1..]);
//!                 // flag = 1 (a public constant as a sharing) selects x.
//!                 let flag = [doram_mpc::Additive::public(Fp::ONE, me)];
//!                 let chosen = mpc.select(&flag, x, y)?;
//!                 let product = mpc.mul_additive(x, y)?;
//!                 mpc.open(&[chosen[0], product[0]])
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
//! });
//! for r in results {
//!     assert_eq!(r, vec![Fp::from_u64(5), Fp::from_u64(35)]);
//! }
//! ```
//!
//! With the `testkit` feature, `testkit::run_mpc3` does the threading and seeding.
//!
//! # The compute engine
//! [`Engine`] ([`engine`]) is the CPU step of RAM programs on top of these operations: secret
//! `Fp` values in replicated shares, batched products, selects, bit operations (AND, OR, XOR,
//! NOT), openings to all or to one party, oblivious shuffles ([`shuffle`]), and less-than and
//! equality of `k`-bit integers (k ≤ 80) by masked opening and a logarithmic-depth bitwise
//! comparison whose randomness `P2` deals ([`compare`]; 3 + ⌈log₂⌈k/8⌉⌉ rounds per batch). It
//! borrows a session per batch ([`Engine::on`]), so it can share a party's connections with a
//! distributed ORAM.

pub mod compare;
pub mod driver;
pub mod engine;
pub mod error;
pub mod msgs;
pub mod party;
pub mod rounds;
pub mod share;
pub mod shuffle;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use driver::{
    MAX_FRAME_BYTES, Mpc3, finish_round, frames, recv_framed, run_round, send_framed,
    send_outgoing, setup_party,
};
pub use engine::{Comparison, Counters, Engine, Online, Secret, SecretBit};
pub use error::MpcError;
pub use msgs::{Expected, Inbound, MsgKind, Outgoing};
pub use party::{Input, N_PARTIES, Party, SeedMsg, Setup, Start};
pub use rounds::{InputRound, OpenRound, OpenToRound, ProductRound, Rereplicate, Round};
pub use share::{
    Additive, Replicated, deal_additive, deal_replicated, random_element, reconstruct_additive,
    reconstruct_replicated, replicate,
};
pub use shuffle::Shuffle;
