//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Mutex;
use std::time::Duration;

use doram_gkk12::plain::words_for;
use doram_net::{LocalMesh, Session};
use rand::Rng;

/// Runs the server (`p0`, party 0) and the client (`p1`) on a two-party in-process mesh.
pub fn run2<A: Send, B: Send>(
    p0: impl FnOnce(Session) -> A + Send,
    p1: impl FnOnce(Session) -> B + Send,
) -> (A, B) {
    let p0 = Mutex::new(Some(p0));
    let p1 = Mutex::new(Some(p1));
    let mesh = LocalMesh::new(2).timeout(Duration::from_secs(60));
    let mut out = doram_net::testkit::run(mesh.build(), |s| {
        if s.me().index() == 0 {
            (Some(p0.lock().unwrap().take().unwrap()(s)), None)
        } else {
            (None, Some(p1.lock().unwrap().take().unwrap()(s)))
        }
    })
    .into_iter();
    (
        out.next().unwrap().0.unwrap(),
        out.next().unwrap().1.unwrap(),
    )
}

/// A random payload of `bits` bits (bits beyond them clear), in words.
pub fn random_words(rng: &mut impl Rng, bits: usize) -> Vec<u64> {
    (0..words_for(bits))
        .map(|k| {
            let used = bits - 64 * k;
            let w: u64 = rng.random();
            if used >= 64 { w } else { w & ((1 << used) - 1) }
        })
        .collect()
}
