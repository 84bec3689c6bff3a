//! Ramen Fig. 2: the three-party random OT Π_3-OT, with one type per role — [`Sender`] (S),
//! [`Chooser`] (C) and [`Receiver`] (R).
//!
//! Init: S samples PRF keys k_C, k_R and a PRP key k_PRP, sends (k_C, k_PRP) to C and k_R to R,
//! and defines r\[j\] = PRF(k_C, π(j)) + PRF(k_R, π(j)) for j ∈ \[ℓ\]. Access (up to ℓ times, at
//! distinct indices in Ramen): C sends (π(indx), PRF(k_C, π(indx))) to R, which outputs
//! r\[indx\] = PRF(k_R, π(indx)) + a. R learns r at the indices C chose and, since it only sees
//! π(indx), nothing about the indices; C learns nothing about r (it lacks k_R).
//!
//! Instantiation (Ramen §5.1 uses "AES-CTR as a PRG and Blake3 to instantiate a PRF into F_p"):
//! * PRF(k, x) ([`PotPrf`]): AES-128 under k on the block x + 2^64·t for t = 0, 1, …, the first
//!   output below p (rejection sampling; a block is rejected with probability about 2^−59).
//!   S evaluates it 2ℓ times at Init, eight blocks per AES call.
//! * PRP(k_PRP, ·): a uniformly random permutation of \[ℓ\] drawn by Fisher–Yates from AES-CTR
//!   under k_PRP ([`crate::tags::random_permutation`]); S and C both expand it (O(ℓ) each per
//!   Init), which is cheaper than a small-domain block cipher at Ramen's sizes.
//!
//! In Ramen (Fig. 6) S = P_{i−1}, C = P_i and R = P_{i+1}, ℓ = m, and one p-OT is initialised
//! per memory key and epoch.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_field::Fp;
use doram_prim::{Aes128Cipher, AesPrg};

use crate::error::RamenError;
use crate::msgs::{PotAccess, PotChooserKeys, PotReceiverKey};
use crate::tags::random_permutation;

/// Blocks per batch when S expands r.
const CHUNK: usize = 1024;

/// PRF: [u32] → F_p of the p-OT, AES-128 with rejection sampling (see the [module docs](self)).
#[derive(Clone)]
pub struct PotPrf(Aes128Cipher);

impl std::fmt::Debug for PotPrf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PotPrf(..)")
    }
}

impl PotPrf {
    /// The PRF under `key`.
    pub fn new(key: [u8; 16]) -> Self {
        PotPrf(Aes128Cipher::new(key))
    }

    /// The first AES output on x + 2^64·t, t ≥ 1, below p (the rare fallback).
    fn retry(&self, x: u32) -> Fp {
        let mut t: u128 = 1;
        loop {
            if let Some(v) = Fp::from_canonical(self.0.encrypt(u128::from(x) | (t << 64))) {
                return v;
            }
            t += 1;
        }
    }

    /// PRF(k, x).
    pub fn eval(&self, x: u32) -> Fp {
        Fp::from_canonical(self.0.encrypt(u128::from(x))).unwrap_or_else(|| self.retry(x))
    }

    /// `out[i] += PRF(k, xs[i])`, eight AES blocks per call.
    fn add_evals(&self, xs: &[u32], out: &mut [Fp]) {
        let mut blocks = [0u128; CHUNK];
        for (xs, out) in xs.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let b = &mut blocks[..xs.len()];
            for (b, &x) in b.iter_mut().zip(xs) {
                *b = u128::from(x);
            }
            self.0.encrypt_in_place(b);
            for ((o, &b), &x) in out.iter_mut().zip(b.iter()).zip(xs) {
                *o += Fp::from_canonical(b).unwrap_or_else(|| self.retry(x));
            }
        }
    }
}

/// S: holds the random vector r (Ramen Fig. 2, Init step 4).
pub struct Sender {
    r: Vec<Fp>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pot::Sender(len = {}, ..)", self.r.len())
    }
}

impl Sender {
    /// Ramen Fig. 2, Init steps 1–4 at S: keys from `rng`, the messages to C and R, and r.
    ///
    /// # Panics
    /// If `len` exceeds 2^32 (a local invariant: Ramen's memories are smaller).
    pub fn init(len: usize, rng: &mut AesPrg) -> (Sender, PotChooserKeys, PotReceiverKey) {
        assert!(
            u32::try_from(len).is_ok(),
            "p-OT vectors have at most 2^32 entries"
        );
        // [Ramen Fig. 2, Init step 1] S samples k_C, k_R and k_PRP.
        let k_c = rng.next_seed();
        let k_r = rng.next_seed();
        let k_prp = rng.next_seed();
        // [Ramen Fig. 2, Init step 3] r[j] = PRF(k_C, π(j)) + PRF(k_R, π(j)).
        let pi = random_permutation(len, &mut AesPrg::new(k_prp));
        let mut r = vec![Fp::ZERO; len];
        PotPrf::new(k_c.0).add_evals(&pi, &mut r);
        PotPrf::new(k_r.0).add_evals(&pi, &mut r);
        // [Ramen Fig. 2, Init step 2] S → C: (k_C, k_PRP); S → R: k_R.
        (
            Sender { r },
            PotChooserKeys { k_c, k_prp },
            PotReceiverKey { k_r },
        )
    }

    /// The vector r (Ramen Fig. 2, Init step 4: "S outputs r").
    pub fn r(&self) -> &[Fp] {
        &self.r
    }

    /// ℓ, the length of r.
    pub fn len(&self) -> usize {
        self.r.len()
    }

    /// Whether r is empty.
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }
}

/// C: the PRF key k_C and the permutation π.
pub struct Chooser {
    k_c: PotPrf,
    pi: Vec<u32>,
}

impl std::fmt::Debug for Chooser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pot::Chooser(len = {}, ..)", self.pi.len())
    }
}

impl Chooser {
    /// Ramen Fig. 2, Init at C: keeps k_C and expands π from k_PRP.
    pub fn new(len: usize, keys: &PotChooserKeys) -> Chooser {
        Chooser {
            k_c: PotPrf::new(keys.k_c.0),
            pi: random_permutation(len, &mut AesPrg::new(keys.k_prp)),
        }
    }

    /// Ramen Fig. 2, Access steps 1–2 at C: the message (π(indx), PRF(k_C, π(indx))) to R.
    ///
    /// # Errors
    /// [`RamenError::ApiMisuse`] if `index` is outside the vector.
    pub fn access(&self, index: usize) -> Result<PotAccess, RamenError> {
        // [Ramen Fig. 2, Access step 1] π(indx) and a := PRF(k_C, π(indx)).
        let permuted = *self
            .pi
            .get(index)
            .ok_or(RamenError::ApiMisuse("p-OT index outside the vector"))?;
        let a = self.k_c.eval(permuted);
        // [Ramen Fig. 2, Access step 2] C → R: (π(indx), a).
        Ok(PotAccess { index: permuted, a })
    }
}

/// R: the PRF key k_R.
pub struct Receiver {
    k_r: PotPrf,
    len: usize,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pot::Receiver(len = {}, ..)", self.len)
    }
}

impl Receiver {
    /// Ramen Fig. 2, Init at R: keeps k_R.
    pub fn new(len: usize, key: &PotReceiverKey) -> Receiver {
        Receiver {
            k_r: PotPrf::new(key.k_r.0),
            len,
        }
    }

    /// Ramen Fig. 2, Access step 3 at R: x = PRF(k_R, π(indx)) + a = r\[indx\], for the message
    /// that C (`chooser`) sent.
    ///
    /// # Errors
    /// [`RamenError::Peer`] naming C if π(indx) is outside the vector.
    pub fn receive(&self, chooser: PartyId, msg: &PotAccess) -> Result<Fp, RamenError> {
        if msg.index as usize >= self.len {
            return Err(PeerFault::new(
                chooser,
                "a p-OT index (Ramen Fig. 2, Access step 2)",
                doram_core::CodecError::OutOfRange {
                    what: "an index outside the vector",
                },
            )
            .into());
        }
        // [Ramen Fig. 2, Access step 3] x := PRF(k_R, π(indx)) + a.
        Ok(self.k_r.eval(msg.index) + msg.a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;

    #[test]
    fn receiver_learns_r_at_the_chosen_index() {
        let mut rng = AesPrg::new(Seed([9; 16]));
        for len in [1usize, 5, 3000] {
            let (s, to_c, to_r) = Sender::init(len, &mut rng);
            let c = Chooser::new(len, &to_c);
            let r = Receiver::new(len, &to_r);
            for idx in [0, len / 2, len - 1] {
                let msg = c.access(idx).unwrap();
                assert_eq!(r.receive(PartyId::P0, &msg).unwrap(), s.r()[idx]);
            }
            assert!(c.access(len).is_err());
            let bad = PotAccess {
                index: len as u32,
                a: Fp::ONE,
            };
            assert!(matches!(
                r.receive(PartyId::P1, &bad),
                Err(RamenError::Peer(PeerFault {
                    peer: PartyId::P1,
                    ..
                }))
            ));
        }
    }

    #[test]
    fn batch_prf_matches_single() {
        let prf = PotPrf::new([7; 16]);
        let xs: Vec<u32> = (0..2500).map(|i| i * 7 + 3).collect();
        let mut out = vec![Fp::ZERO; xs.len()];
        prf.add_evals(&xs, &mut out);
        for (x, o) in xs.iter().zip(&out) {
            assert_eq!(prf.eval(*x), *o);
        }
    }
}
