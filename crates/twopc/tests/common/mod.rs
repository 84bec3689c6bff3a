//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use doram_net::{LocalMesh, Session, Tamper};
use doram_prim::aes::Block;
use doram_twopc::TwopcError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// The test seed: `DORAM_TEST_SEED` or a fixed default; printed so failures can be replayed.
pub fn test_rng(label: &str) -> ChaCha12Rng {
    let seed = std::env::var("DORAM_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7770_6f63_u64);
    eprintln!("{label}: DORAM_TEST_SEED={seed}");
    ChaCha12Rng::seed_from_u64(seed)
}

pub fn random_bits(rng: &mut impl Rng, n: usize) -> Vec<bool> {
    (0..n).map(|_| rng.random()).collect()
}

pub fn random_block(rng: &mut impl Rng) -> Block {
    rng.random()
}

/// Runs `p0` and `p1` on a two-party in-process mesh (optionally tampered).
pub fn run2<A: Send, B: Send>(
    mesh: LocalMesh,
    p0: impl Fn(Session) -> A + Sync,
    p1: impl Fn(Session) -> B + Sync,
) -> (A, B) {
    enum Either<A, B> {
        L(A),
        R(B),
    }
    let out = doram_net::testkit::run(mesh.build(), |s| {
        if s.me().index() == 0 {
            Either::L(p0(s))
        } else {
            Either::R(p1(s))
        }
    });
    let mut it = out.into_iter();
    match (it.next().unwrap(), it.next().unwrap()) {
        (Either::L(a), Either::R(b)) => (a, b),
        _ => unreachable!("party order is P0, P1"),
    }
}

pub fn mesh() -> LocalMesh {
    LocalMesh::new(2).timeout(std::time::Duration::from_secs(20))
}

pub fn tampered(
    f: impl Fn(doram_core::PartyId, doram_core::PartyId, u64, &mut Vec<u8>) -> Tamper
    + Send
    + Sync
    + 'static,
) -> LocalMesh {
    mesh().tamper(f)
}

/// The peer a peer fault names, if the error is one.
pub fn blamed(e: &TwopcError) -> Option<doram_core::PartyId> {
    match e {
        TwopcError::Peer(f) => Some(f.peer),
        _ => None,
    }
}
