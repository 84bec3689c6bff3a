//! Symmetric-key primitives for doram: fixed-key AES hashing, an AES-CTR PRG, a BLAKE3 PRF,
//! pairwise-shared PRGs with zero-sharing, and cuckoo hashing for multi-point DPFs.
//!
//! Brief overview:
//! * [`aes`]: AES-128 on `u128` blocks (hardware AES detected at run time, batched 8 blocks at a
//!   time) and the correlation-robust hashes of Guo–Katz–Wang–Yu 2020 on fixed-key AES:
//!   `π(x) ⊕ x`, `π(σ(x)) ⊕ σ(x)` and `π(π(x) ⊕ i) ⊕ π(x)`.
//! * [`chacha`]: ChaCha12 keyed by a DPF output node's seed, expanding sixteen nodes at a time
//!   into 64-bit words (AVX-512 where the machine has it).
//! * [`prg`]: [`AesPrg`], AES-128-CTR keyed by a [`doram_core::Seed`]; a
//!   [`doram_field::BlockSource`] and a [`rand_core::RngCore`].
//! * [`prf`]: [`Prf`], keyed BLAKE3 with output in any [`doram_field::Group`] (rejection sampling
//!   for `Fp`).
//! * [`pairwise`]: seeds shared by each pair of parties ([`PairwiseSeeds`]), PRGs keyed by them
//!   ([`PairwisePrgs`]), zero-sharing and two-party correlated randomness.
//! * [`cuckoo`]: three-function cuckoo hashing sized for statistical security 40 and simple
//!   hashing of a whole domain, for the multi-point DPF of Schoppmann et al. (CCS 2019).

pub mod aes;
pub mod chacha;
pub mod cuckoo;
pub mod pairwise;
pub mod prf;
pub mod prg;

pub use crate::aes::{Aes128Cipher, Block, FixedKeyAes, fixed_key};
pub use crate::cuckoo::{
    CuckooError, CuckooHasher, CuckooTable, SimpleHashTable, num_buckets, num_buckets_for,
};
pub use crate::pairwise::{PairwiseError, PairwisePrgs, PairwiseSeeds};
pub use crate::prf::Prf;
pub use crate::prg::AesPrg;
