//! The distributed oblivious Legendre PRF of Ramen (Braun, Pancholi, Rachuri, Simkin; ePrint
//! 2023/310, §4.5 and Appendix B; figures numbered as in `shared/papers/000_*.txt`).
//!
//! Brief overview: three parties hold additive shares ⟨x⟩ of an input x ∈ F_p. One of them,
//! the key holder K, holds a key k ∈ F_p^ℓ of the Legendre PRF ([`LegendrePrf`]:
//! bit i of PRF(k, x) is [Legendre(k_i + x) = 1]). The two others are the receivers R1 and R2
//! ([`Roles`] says who is who). Two evaluation types exist:
//!
//! * **unmasked** (Fig. 22): R2 learns PRF(k, x); K and R1 learn nothing;
//! * **masked** (Fig. 9): R1 and R2 learn a random r ∈ {0, 1}^ℓ, K learns PRF(k, x) ⊕ r.
//!
//! Both are split into input-independent **preprocessing**, produced in batches and queued
//! ([`Doprf::preprocess`]), and a two-round **online** phase that consumes one preprocessed
//! unit per evaluation ([`Doprf::eval_unmasked`], [`Doprf::eval_masked`]); asking for more
//! evaluations than are preprocessed is [`DoprfError::PreprocessingExhausted`], raised at every
//! party before anything is sent.
//!
//! The protocol logic is I/O-free: each role is a type ([`KeyHolder`], [`Receiver1`],
//! [`Receiver2`]) whose methods are the figure's steps, taking and returning the named
//! messages of [`msgs`] (one type per arrow); a step that has to wait returns a pending state
//! named for what it waits for (e.g. [`masked::AwaitingZ3`]). [`Doprf`] ([`driver`]) runs them
//! over a [`doram_net::Session`]; it is the only I/O. All randomness derives from the
//! [`doram_core::Seed`] given at setup.
//!
//! # Figure map
//!
//! | Ramen | what | here |
//! |---|---|---|
//! | §4.5, PRF(k, x) = Σ 2^i·L_p(k_i + x) | Legendre PRF | [`prf`]: [`LegendrePrf`], [`legendre_bits_vartime`] |
//! | Fig. 8 | F_DOPRF, ideal functionality | [`ideal`]: [`ideal::IdealDoprf`] (tests) |
//! | Fig. 9/22, KeyGen and Init | key shares k_1 + k_2, PRG seeds | [`party`]: `*::setup_start`, `*::rekey` |
//! | Fig. 9 | Π^m_DOPRF, masked | [`masked`] |
//! | Fig. 22 | Π_DOPRF, unmasked | [`unmasked`] |
//! | Fig. 4, step 1; Fig. 5, step 1 | stash key: K = P_1, R1 = P_2, R2 = P_3 | [`Roles::ramen_stash`] |
//! | Fig. 6, step 2(a) | memory key k_i: K = P_{i−1}, R1 = P_{i+1}, R2 = P_i | [`Roles::ramen_memory`] |
//!
//! Every step is marked in the code with its figure, e.g. `// [Ramen Fig. 9, step 7]`, so
//! `grep 'Ramen Fig. 9'` lists the masked protocol step by step. The paper's parties P_1, P_2,
//! P_3 are [`PartyId::P0`](doram_core::PartyId::P0), `P1`, `P2` here.
//!
//! # Costs
//!
//! Per batch of `c` evaluations with output length ℓ. "Elements" are field elements of 16
//! bytes; each arrow is one message (plus the transport's 12-byte frame header), whatever `c`
//! is, and a batch of 0 sends nothing. Rounds are the length of the protocol's longest chain of
//! dependent messages. Every size is a function of ℓ and `c` only; the tests check that the
//! transcripts of runs on different keys and inputs are identical.
//!
//! | phase | rounds | K sends | R1 sends | R2 sends | Legendre symbols |
//! |---|---|---|---|---|---|
//! | setup (Init + KeyGen) | 1 | 16 bytes → R1 | 16 bytes → R2, ℓ → K | ℓ → K | — |
//! | rekey (KeyGen) | 1 | — | ℓ → K | ℓ → K | — |
//! | unmasked preprocessing | 1 | — | cℓ → K | — | — |
//! | unmasked online | 2 | cℓ → R2 | c → K | c → K | cℓ at R2 |
//! | masked preprocessing | 1 | — | cℓ + c·⌈ℓ/8⌉ bytes → R2 | — | — |
//! | masked online | 2 | cℓ → R2 | c → R2 | cℓ → K | cℓ at K |
//!
//! For ℓ = 80 (memories of up to 2^20 elements) one evaluation costs online 82 elements
//! (1312 bytes) unmasked and 161 elements (2576 bytes) masked, and 80 elements (1280 bytes) or
//! 1290 bytes of preprocessing. The computation is dominated by the cℓ Legendre symbols of the
//! last step (Fig. 22, step 8; Fig. 9, step 10), which [`Params::with_threads`] spreads over
//! several threads; everything else is O(cℓ) field multiplications and AES blocks.
//!
//! # Optimisations and their security
//! The protocols are those of the figures, with these changes; none alters what a single
//! (passively) corrupted party sees beyond what is argued here.
//!
//! 1. **Preprocessing is split off** — Fig. 22, steps 1–3 and Fig. 9, steps 1–5, which §4.5
//!    names as precomputable. It is also independent of the key, so KeyGen can be repeated
//!    ([`Doprf::rekey`], once per Ramen epoch) without discarding it.
//! 2. **Input-independent terms are folded into the preprocessing**: R2's
//!    z_3 = d·y_3 + c_3 − d·e of Fig. 22, step 7 equals b·d + c_3 (since y_3 − e = b), and K's
//!    z_1 = e∘(k + y_1) + c_1 − d∘e of Fig. 9, step 9 equals c_1 + a∘e (since
//!    k + y_1 − d = a). These are algebraic identities: every message is bit-for-bit the one
//!    the figure computes.
//! 3. **R1 samples the mask r alone** (Fig. 9, step 3) and sends it to R2 together with c_3,
//!    instead of R1 and R2 exchanging r_1, r_2 and using r_1 ⊕ r_2. Against a passive
//!    adversary r is uniform either way (R1 follows the protocol), and the views keep the form
//!    the proof of Theorem 8 simulates: K never sees r (it is only on the R1–R2 link); a
//!    corrupted R2 receives r from R1 as its output, so the simulator sends the r it gets from
//!    F_DOPRF; a corrupted R1 sampled r with its own coins, which the simulator sets to the r
//!    it gets from F_DOPRF (a uniform value, as the coins are). This saves R2's message and a
//!    round of preprocessing (R1 needs r before it can compute c_3). r is drawn from R1's
//!    private randomness, not from the R1–R2 PRG, so that the simulator can still program it.
//! 4. **No seed k_{2,k} from R2 to K**: Init in both figures sets it up but neither protocol
//!    uses it; the message carries independent randomness that nobody reads.
//! 5. **s is sampled non-zero** (rejection sampling from the PRG). With s_j = 0 the product
//!    s_j²·(k_j + x) would be 0 and the output bit wrong (the failure case of the correctness
//!    proof of Theorem 7); the change moves the distribution of s by at most 1/p per element,
//!    and makes s²(k + x) exactly uniform over its coset of squares or non-squares when
//!    k + x ≠ 0, which is what the simulators need.
//! 6. **Two PRG streams per shared seed**, one per mode (derived from the figure's seed by the
//!    AES PRG), so that masked and unmasked preprocessing can interleave freely. Sub-seeds of a
//!    PRG seed are pseudorandom and independent, as the figure's one stream is.
//! 7. **Key holder's key**: KeyGen is the figures' (K sets k = k_1 + k_2 from the receivers'
//!    shares); no output bits are dropped. ℓ is a parameter; [`Params::for_domain`] gives
//!    Ramen's ℓ = 2·⌈log2 m⌉ + 40 for tags of m inputs. The PRF's security does not depend on
//!    ℓ, only the absence of tag collisions does (probability below 2^−40).
//!
//! # Symbol zero
//! If k_i + x = 0 the Legendre symbol is 0, which the plaintext PRF and the unmasked protocol
//! map to bit 0 (as Ramen's reference implementation does; the paper's L_p would give
//! (p + 1)/2). In the masked protocol K then computes bit 0 too, so the XOR of the shares is
//! r_i instead of 0: the masked output differs from the plaintext PRF in that bit. For inputs
//! chosen independently of the key this happens with probability at most ℓ/p < 2^−121 per
//! evaluation, and the protocols cannot avoid it without revealing x (Ramen, proof of
//! Theorem 7, reduces an environment that provokes it to the shifted Legendre symbol problem).
//!
//! # Example
//! All three parties in one process, each on its own thread (the roles of Ramen's memory
//! instance whose key P1 holds):
//! ```
//! use doram_core::{PartyId, Seed};
//! use doram_doprf::{Doprf, LegendrePrf, Mode, Params, Roles};
//! use doram_field::Fp;
//! use doram_mpc::Additive;
//! use doram_net::Session;
//!
//! let params = Params::new(80)?;
//! let roles = Roles::ramen_memory(PartyId::P1)?;
//! // x = 42, shared as 40 + 1 + 1.
//! let share = |p: PartyId| Additive::from_share(Fp::from_u64(if p == PartyId::P0 { 40 } else { 1 }));
//! let results = std::thread::scope(|s| {
//!     let handles: Vec<_> = Session::local_mesh(3)
//!         .into_iter()
//!         .map(|mut session| {
//!             s.spawn(move || -> Result<_, doram_doprf::DoprfError> {
//!                 let me = session.me();
//!                 let mut doprf = Doprf::setup(&mut session, params, roles, Seed([me.index() as u8; 16]))?;
//!                 doprf.preprocess(&mut session, Mode::Unmasked, 1)?;
//!                 doprf.preprocess(&mut session, Mode::Masked, 1)?;
//!                 let x = [share(me)];
//!                 let unmasked = doprf.eval_unmasked(&mut session, &x)?;
//!                 let masked = doprf.eval_masked(&mut session, &x)?;
//!                 Ok((doprf.key().cloned(), unmasked, masked))
//!             })
//!         })
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<Vec<_>, _>>()
//! })?;
//! let key = results[roles.key_holder().index()].0.clone().unwrap();
//! let y = LegendrePrf::new(key).eval(Fp::from_u64(42));
//! // Unmasked: R2 learns PRF(k, 42).
//! assert_eq!(results[roles.r2().index()].1, Some(vec![y]));
//! // Masked: K's output XOR the receivers' mask is PRF(k, 42).
//! let (k_out, r) = (&results[roles.key_holder().index()].2, &results[roles.r1().index()].2);
//! assert_eq!(r, &results[roles.r2().index()].2);
//! assert_eq!(k_out[0] ^ r[0], y);
//! # Ok::<(), doram_doprf::DoprfError>(())
//! ```

#![deny(missing_docs)]

pub mod driver;
pub mod error;
pub mod ideal;
pub mod masked;
pub mod msgs;
pub mod params;
pub mod party;
mod pool;
pub mod prf;
pub mod unmasked;

pub use driver::{Doprf, RoleState};
pub use error::DoprfError;
pub use params::{ALPHA, MAX_BITS, Mode, Params, Role, Roles, STAT_SEC};
pub use party::{KeyHolder, Receiver1, Receiver2};
pub use prf::{LegendreKey, LegendrePrf, legendre_bits_vartime};

#[cfg(test)]
mod tests;
