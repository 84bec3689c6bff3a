//! PRGs shared by each pair of parties, and the correlated randomness they give for free:
//! zero-sharings among all parties and common or opposite values between two.
//!
//! # Setting the seeds up
//!
//! The network exchange is the caller's job; this module is the pure part around it.
//!
//! 1. Every party `i` calls [`PairwiseSeeds::sample_outgoing`], which draws one fresh seed
//!    `s_{i→j}` for each peer `j`, and sends `s_{i→j}` to `j` (e.g. over the authenticated channel
//!    between the two).
//! 2. Party `i` collects the seeds `s_{j→i}` it received into an array indexed by sender.
//! 3. [`PairwiseSeeds::from_exchange`] derives the seed of each pair `{i, j}` (with `i < j`) as
//!    `BLAKE3-derive-key(CONTEXT, [i, j] ‖ s_{i→j} ‖ s_{j→i})` truncated to 16 bytes. Both members
//!    of the pair feed the same bytes in the same order, so they get the same seed, and each
//!    contributed half of its entropy.
//!
//! [`PairwiseSeeds::into_prgs`] then keys one [`AesPrg`] per peer. The two members of a pair
//! must draw from their shared PRG in lockstep: the same calls, with the same types and counts,
//! in the same order. Every method of [`PairwisePrgs`] documents which streams it advances.

use crate::prg::AesPrg;
use doram_core::{PartyId, Seed};
use doram_field::Group;
use rand_core::{CryptoRng, RngCore};

/// BLAKE3 key-derivation context of the pair seeds.
pub const PAIR_SEED_CONTEXT: &str = "doram-prim 2025 pairwise PRG seed v1";

/// Why the pairwise seeds could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PairwiseError {
    /// The session size is not 2, 3 or 4, or `me` is not one of its parties.
    #[error("party {me} is not in a session of {n} parties (2..=4)")]
    BadSession {
        /// This party.
        me: PartyId,
        /// The session size.
        n: usize,
    },
    /// A peer's seed (sent or received) is missing.
    #[error("no seed {direction} party {peer}")]
    MissingSeed {
        /// The peer.
        peer: PartyId,
        /// "sent to" or "received from".
        direction: &'static str,
    },
    /// A seed was given for this party itself or for an index outside the session.
    #[error("unexpected seed at index {index}")]
    UnexpectedSeed {
        /// The offending array index.
        index: usize,
    },
}

fn check_session(me: PartyId, n: usize) -> Result<(), PairwiseError> {
    if (2..=PartyId::MAX_PARTIES).contains(&n) && me.index() < n {
        Ok(())
    } else {
        Err(PairwiseError::BadSession { me, n })
    }
}

/// The seed this party shares with each peer of an `n`-party session.
#[derive(Clone, Debug)]
pub struct PairwiseSeeds {
    me: PartyId,
    n: usize,
    shared: [Option<Seed>; PartyId::MAX_PARTIES],
}

impl PairwiseSeeds {
    /// Step 1: fresh seeds to send, `out[j]` to party `j` (`None` at `me` and beyond `n`).
    ///
    /// # Panics
    /// If `me` is not a party of an `n`-party session with `2 ≤ n ≤ 4` (protocol constants).
    pub fn sample_outgoing<R: RngCore + CryptoRng + ?Sized>(
        me: PartyId,
        n: usize,
        rng: &mut R,
    ) -> [Option<Seed>; PartyId::MAX_PARTIES] {
        assert!(
            check_session(me, n).is_ok(),
            "party {me} is not in a session of {n}"
        );
        std::array::from_fn(|j| (j < n && j != me.index()).then(|| Seed::random(rng)))
    }

    /// Step 3: the pair seeds from the seeds this party sent (`sent[j]` to party `j`) and the
    /// seeds it received (`received[j]` from party `j`). Entries at `me` and at `j ≥ n` must be
    /// `None`.
    pub fn from_exchange(
        me: PartyId,
        n: usize,
        sent: &[Option<Seed>; PartyId::MAX_PARTIES],
        received: &[Option<Seed>; PartyId::MAX_PARTIES],
    ) -> Result<Self, PairwiseError> {
        check_session(me, n)?;
        let mut shared = [None; PartyId::MAX_PARTIES];
        for j in 0..PartyId::MAX_PARTIES {
            if j >= n || j == me.index() {
                if sent[j].is_some() || received[j].is_some() {
                    return Err(PairwiseError::UnexpectedSeed { index: j });
                }
                continue;
            }
            let peer = PartyId::ALL[j];
            let mine = sent[j].ok_or(PairwiseError::MissingSeed {
                peer,
                direction: "sent to",
            })?;
            let theirs = received[j].ok_or(PairwiseError::MissingSeed {
                peer,
                direction: "received from",
            })?;
            let (lo, hi, from_lo, from_hi) = if me.index() < j {
                (me.index(), j, mine, theirs)
            } else {
                (j, me.index(), theirs, mine)
            };
            shared[j] = Some(combine(lo, hi, from_lo, from_hi));
        }
        Ok(PairwiseSeeds { me, n, shared })
    }

    /// The seed shared with `peer` (`None` for `me` itself and for parties outside the session).
    pub fn seed_with(&self, peer: PartyId) -> Option<Seed> {
        self.shared[peer.index()]
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// The session size.
    pub fn n(&self) -> usize {
        self.n
    }

    /// One PRG per peer, keyed with the pair seeds.
    pub fn into_prgs(self) -> PairwisePrgs {
        PairwisePrgs {
            me: self.me,
            n: self.n,
            with: self.shared.map(|s| s.map(AesPrg::new)),
        }
    }
}

fn combine(lo: usize, hi: usize, from_lo: Seed, from_hi: Seed) -> Seed {
    let mut material = [0u8; 34];
    material[0] = lo as u8;
    material[1] = hi as u8;
    material[2..18].copy_from_slice(&from_lo.0);
    material[18..].copy_from_slice(&from_hi.0);
    let k = blake3::derive_key(PAIR_SEED_CONTEXT, &material);
    let mut s = [0u8; 16];
    s.copy_from_slice(&k[..16]);
    Seed(s)
}

/// One AES-CTR PRG shared with each peer, and zero-sharing on top of them.
#[derive(Debug)]
pub struct PairwisePrgs {
    me: PartyId,
    n: usize,
    with: [Option<AesPrg>; PartyId::MAX_PARTIES],
}

impl PairwisePrgs {
    /// PRGs directly from pair seeds (`seeds[j]` shared with party `j`; `None` at `me` and beyond
    /// `n`). Mostly for tests and for callers that derive pair seeds themselves.
    pub fn from_seeds(
        me: PartyId,
        n: usize,
        seeds: [Option<Seed>; PartyId::MAX_PARTIES],
    ) -> Result<Self, PairwiseError> {
        check_session(me, n)?;
        for (j, s) in seeds.iter().enumerate() {
            let expected = j < n && j != me.index();
            match (expected, s.is_some()) {
                (true, false) => {
                    return Err(PairwiseError::MissingSeed {
                        peer: PartyId::ALL[j],
                        direction: "shared with",
                    });
                }
                (false, true) => return Err(PairwiseError::UnexpectedSeed { index: j }),
                _ => {}
            }
        }
        Ok(PairwisePrgs {
            me,
            n,
            with: seeds.map(|s| s.map(AesPrg::new)),
        })
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// The session size.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The PRG shared with `peer`, if `peer` is another party of the session.
    pub fn try_with(&mut self, peer: PartyId) -> Option<&mut AesPrg> {
        self.with[peer.index()].as_mut()
    }

    /// The PRG shared with `peer`.
    ///
    /// # Panics
    /// If `peer` is this party or outside the session (a protocol bug, not peer input).
    pub fn with(&mut self, peer: PartyId) -> &mut AesPrg {
        let me = self.me;
        self.try_with(peer)
            .unwrap_or_else(|| panic!("{me} shares no PRG with {peer}"))
    }

    /// A share of zero: the shares of all `n` parties sum to `G::ZERO`, and any `n − 1` of them
    /// are uniformly random to a party that does not know the remaining pair seeds.
    ///
    /// With `n ≥ 3` parties in a ring this is `F(seed with next) − F(seed with prev)`: each pair
    /// stream `{i, i+1}` is added by `i` and subtracted by `i+1`. With `n = 2` it is `+F` at `P0`
    /// and `−F` at `P1`. Advances the streams with `next` and `prev` by one element each (with
    /// `n = 2`: the one stream by one element). Every party must call it the same number of times.
    pub fn zero_share<G: Group>(&mut self) -> G {
        let (me, n) = (self.me, self.n);
        if n == 2 {
            let peer = me.next(2);
            let r: G = self.with(peer).random();
            return if me == PartyId::P0 { r } else { -r };
        }
        let a: G = self.with(me.next(n)).random();
        let b: G = self.with(me.prev(n)).random();
        a - b
    }

    /// `count` independent zero shares ([`zero_share`](Self::zero_share) `count` times).
    pub fn zero_shares<G: Group>(&mut self, count: usize) -> Vec<G> {
        (0..count).map(|_| self.zero_share()).collect()
    }

    /// A uniformly random element that `peer` obtains too (by calling this with `me` as the
    /// peer). Advances the stream with `peer` by one element.
    pub fn common<G: Group>(&mut self, peer: PartyId) -> G {
        self.with(peer).random()
    }

    /// A two-party sharing of zero with `peer`: a uniformly random `r` at the party with the
    /// smaller index and `−r` at the other. Advances the stream with `peer` by one element.
    pub fn pair_zero_share<G: Group>(&mut self, peer: PartyId) -> G {
        let r: G = self.with(peer).random();
        if self.me < peer { r } else { -r }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::{Fp, Z64};
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// Runs the exchange among `n` parties in memory.
    fn setup(n: usize, rng: &mut ChaCha12Rng) -> Vec<PairwiseSeeds> {
        let sent: Vec<_> = (0..n)
            .map(|i| PairwiseSeeds::sample_outgoing(PartyId::ALL[i], n, rng))
            .collect();
        (0..n)
            .map(|i| {
                let received = std::array::from_fn(|j| if j < n { sent[j][i] } else { None });
                PairwiseSeeds::from_exchange(PartyId::ALL[i], n, &sent[i], &received)
                    .expect("valid exchange")
            })
            .collect()
    }

    #[test]
    fn pairs_agree_and_differ() {
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        for n in 2..=4 {
            let seeds = setup(n, &mut rng);
            for i in 0..n {
                assert!(seeds[i].seed_with(PartyId::ALL[i]).is_none());
                for j in 0..n {
                    if i != j {
                        assert_eq!(
                            seeds[i].seed_with(PartyId::ALL[j]),
                            seeds[j].seed_with(PartyId::ALL[i])
                        );
                    }
                }
            }
            // Different pairs have different seeds.
            let mut all: Vec<[u8; 16]> = Vec::new();
            for (i, s) in seeds.iter().enumerate() {
                for j in i + 1..n {
                    all.push(s.seed_with(PartyId::ALL[j]).expect("peer").0);
                }
            }
            let len = all.len();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), len);
        }
    }

    #[test]
    fn zero_shares_sum_to_zero() {
        let mut rng = ChaCha12Rng::seed_from_u64(2);
        for n in 2..=4 {
            let mut prgs: Vec<PairwisePrgs> = setup(n, &mut rng)
                .into_iter()
                .map(PairwiseSeeds::into_prgs)
                .collect();
            let shares: Vec<Vec<Z64>> = prgs.iter_mut().map(|p| p.zero_shares(100)).collect();
            for k in 0..100 {
                let sum = shares.iter().fold(Z64(0), |acc, s| acc + s[k]);
                assert_eq!(sum, Z64(0), "n = {n}, k = {k}");
                // Shares are not trivially zero.
                assert!(shares.iter().all(|s| s[k] != Z64(0)));
            }
            // Consecutive shares differ.
            assert_ne!(shares[0][0], shares[0][1]);
        }
    }

    #[test]
    fn fp_zero_shares_sum_to_zero() {
        let mut rng = ChaCha12Rng::seed_from_u64(7);
        let mut prgs: Vec<PairwisePrgs> = setup(3, &mut rng)
            .into_iter()
            .map(PairwiseSeeds::into_prgs)
            .collect();
        for _ in 0..50 {
            let s: Vec<Fp> = prgs.iter_mut().map(|p| p.zero_share()).collect();
            assert_eq!(s[0] + s[1] + s[2], Fp::ZERO);
            assert_ne!(s[0], Fp::ZERO);
        }
    }

    #[test]
    fn common_and_pair_zero() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let mut prgs: Vec<PairwisePrgs> = setup(3, &mut rng)
            .into_iter()
            .map(PairwiseSeeds::into_prgs)
            .collect();
        let (p0, p2) = (PartyId::P0, PartyId::P2);
        let a: Z64 = prgs[0].common(p2);
        let b: Z64 = prgs[2].common(p0);
        assert_eq!(a, b);
        let a: Z64 = prgs[0].pair_zero_share(p2);
        let b: Z64 = prgs[2].pair_zero_share(p0);
        assert_eq!(a + b, Z64(0));
        assert_ne!(a, Z64(0));
        // P1's streams were untouched: its PRG with P0 is still at the start, like P0's view of
        // that pair.
        let x: Z64 = prgs[1].common(p0);
        let y: Z64 = prgs[0].common(PartyId::P1);
        assert_eq!(x, y);
    }

    #[test]
    fn bad_exchanges_are_errors() {
        let mut rng = ChaCha12Rng::seed_from_u64(4);
        let me = PartyId::P0;
        let sent = PairwiseSeeds::sample_outgoing(me, 3, &mut rng);
        assert!(sent[0].is_none() && sent[1].is_some() && sent[2].is_some() && sent[3].is_none());
        let mut received = [None; 4];
        received[1] = Some(Seed([1; 16]));
        assert!(matches!(
            PairwiseSeeds::from_exchange(me, 3, &sent, &received),
            Err(PairwiseError::MissingSeed {
                peer: PartyId::P2,
                ..
            })
        ));
        received[2] = Some(Seed([2; 16]));
        assert!(PairwiseSeeds::from_exchange(me, 3, &sent, &received).is_ok());
        received[0] = Some(Seed([0; 16]));
        assert!(matches!(
            PairwiseSeeds::from_exchange(me, 3, &sent, &received),
            Err(PairwiseError::UnexpectedSeed { index: 0 })
        ));
        assert!(matches!(
            PairwiseSeeds::from_exchange(PartyId::P3, 3, &sent, &received),
            Err(PairwiseError::BadSession { .. })
        ));
        assert!(PairwisePrgs::from_seeds(me, 2, [None, Some(Seed([1; 16])), None, None]).is_ok());
        assert!(PairwisePrgs::from_seeds(me, 2, [None, None, None, None]).is_err());
    }
}
