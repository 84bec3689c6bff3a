//! Multiplication triples from OT extension in both directions: every triple multiplies
//! correctly once both parties' shares are added, for AND triples and F_p triples, at sizes
//! around the message batching; the message counts and sizes depend on the count only.
#![allow(clippy::unwrap_used)]

use doram_net::{LocalMesh, Session, run_parties};
use doram_twopc::driver::softspoken_both_setup;
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::softspoken::ChunkBits;
use doram_twopc::triples::{BitTriples, FpTriples, bit_triples, fp_triples};

/// Both parties set up OT extension in both directions and make `bits` AND triples and `fps`
/// F_p triples; returns each party's triples and (messages, bytes) sent.
fn run(seed: u64, bits: usize, fps: usize) -> Vec<(BitTriples, FpTriples, (u64, u64))> {
    run_parties(LocalMesh::new(2).build(), "triples", |mut s: Session| {
        let mut rng = insecure_rng_for_tests(seed * 2 + s.me().index() as u64);
        let (mut snd, mut rcv) =
            softspoken_both_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
        let before = s.stats().total().sum();
        let b = bit_triples(&mut s, &mut snd, &mut rcv, bits, &mut rng).unwrap();
        let f = fp_triples(&mut s, &mut snd, &mut rcv, fps, &mut rng).unwrap();
        let after = s.stats().total().sum();
        (
            b,
            f,
            (
                after.msgs_sent - before.msgs_sent,
                after.bytes_sent - before.bytes_sent,
            ),
        )
    })
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn triples_multiply() {
    for (bits, fps) in [(0usize, 0usize), (1, 1), (1000, 37), (70_000, 300)] {
        let r = run(bits as u64 + fps as u64, bits, fps);
        let (b0, f0, _) = &r[0];
        let (b1, f1, _) = &r[1];
        assert_eq!(b0.a.len(), bits);
        assert_eq!(f1.c.len(), fps);
        for i in 0..bits {
            let a = b0.a[i] ^ b1.a[i];
            let b = b0.b[i] ^ b1.b[i];
            assert_eq!(b0.c[i] ^ b1.c[i], a & b, "AND triple {i}");
        }
        for i in 0..fps {
            let a = f0.a[i] + f1.a[i];
            let b = f0.b[i] + f1.b[i];
            assert_eq!(f0.c[i] + f1.c[i], a * b, "F_p triple {i}");
        }
        if bits >= 1000 {
            // Random-looking: both values occur among the shared a's.
            let ones = (0..bits).filter(|&i| b0.a[i] ^ b1.a[i]).count();
            assert!(ones > bits / 3 && ones < 2 * bits / 3, "{ones} of {bits}");
        }
    }
}

#[test]
fn traffic_depends_on_the_counts_only() {
    let a = run(1, 5000, 20);
    let b = run(2, 5000, 20);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.2, y.2);
    }
    // Gilboa: 128 corrections of 16 bytes per triple from each party, besides the OTs.
    assert!(a[0].2.1 >= 20 * 128 * 16);
}
