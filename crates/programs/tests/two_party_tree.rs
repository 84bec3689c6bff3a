//! Every program between two parties on GKK12's tree ORAM ([`Machine2Tree`]) against its
//! plaintext reference, the ORAM loaded by the two parties alone (started empty and written
//! cell by cell when at most `FIGURE1_MAX_WRITES` cells are not publicly 0, by the sorted load
//! otherwise); transcripts that depend neither on the data nor on the key.
#![allow(clippy::unwrap_used)]

mod common;

use doram_core::{Entropy, PartyId};
use doram_mpc::testkit::test_seed;
use doram_programs::{BinarySearch, Machine2Tree, Part, Program as _, Roles};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

#[test]
fn programs_match_plaintext_on_the_tree_oram() {
    common::every_program_two::<Machine2Tree>(&[1, 7, 70], test_seed());
}

fn transcripts(data: &[u64], key: u64) -> Vec<doram_net::Transcript> {
    common::binary_search_transcripts_two::<Machine2Tree>(data, key, test_seed())
}

#[test]
fn tree_binary_search_transcripts_do_not_depend_on_the_data_or_key() {
    let a = transcripts(&[1, 5, 9, 12, 40, 41, 90, 91, 95], 0);
    let b = transcripts(&[0, 0, 0, 3, 3, 70, 99, 99, 99], 99);
    assert_eq!(a, b);
}

/// Random reads, writes and conditional writes at secret addresses on the tree memory,
/// against a plain array; odd sizes, and one of 5 003 words (two trees, so position-map blocks
/// that do not exist yet are read) that is mostly the public 0 and so costs almost no load;
/// the owned array compared at the end (a snapshot reads every word it returns).
#[test]
fn tree_memory_matches_an_array() {
    use doram_field::Fp;
    use doram_programs::Ram;
    use doram_programs::two_tree::FIGURE1_MAX_WRITES;
    let seed = test_seed();
    // Figure 1 for few cells not publicly 0, the sorted load for more (one tree, and two).
    for (zeros, owned) in [(0usize, 1usize), (0, 2), (0, 65), (5000, 3), (4000, 200)] {
        let n = zeros + owned;
        let mut rng = ChaCha12Rng::seed_from_u64(seed ^ n as u64);
        let init: Vec<u64> = (0..owned).map(|_| rng.random()).collect();
        // (op, address, value, condition): 0 read, 1 write, 2 conditional write.
        let ops: Vec<(u8, usize, u64, bool)> = (0..30)
            .map(|_| {
                (
                    rng.random_range(0..3),
                    rng.random_range(0..n),
                    rng.random(),
                    rng.random(),
                )
            })
            .collect();
        let mut plain = vec![0u64; zeros];
        plain.extend_from_slice(&init);
        let mut want_reads = Vec::new();
        for &(op, a, v, c) in &ops {
            match op {
                0 => want_reads.push(Fp::from_u64(plain[a])),
                1 => plain[a] = v,
                _ if c => plain[a] = v,
                _ => {}
            }
        }
        let runs = doram_net::run_parties(doram_net::LocalMesh::new(2).build(), "mem", |s| {
            let me = s.me();
            let mut m =
                Machine2Tree::setup(s, Entropy::InsecureSeed(seed).party_seed(me, "mem")).unwrap();
            m.alloc_fill(zeros, 0).unwrap();
            let own = (me == PartyId::P0).then_some(&init[..]);
            let array = m.alloc_input(PartyId::P0, own, owned).unwrap();
            m.boot().unwrap();
            let load = m.meter().get(Part::Init);
            // Addresses and values are P1's secret inputs.
            let flat: Vec<u64> = ops.iter().flat_map(|&(_, a, v, _)| [a as u64, v]).collect();
            let mine = (me == PartyId::P1).then_some(&flat[..]);
            let secret = m.input_vector(PartyId::P1, mine, flat.len()).unwrap();
            let mut reads = Vec::new();
            for (k, &(op, _, _, c)) in ops.iter().enumerate() {
                let (addr, val) = (secret[2 * k], secret[2 * k + 1]);
                match op {
                    0 => reads.push(m.read_addr(addr).unwrap()),
                    1 => m.write_addr(addr, val).unwrap(),
                    _ => {
                        let c = m.public_bit(c);
                        m.cond_write_addr(addr, c, val, None).unwrap();
                    }
                }
            }
            let all = m.snapshot(&[array]).unwrap().remove(0);
            reads.extend(all);
            (m.open_to(PartyId::P1, &reads).unwrap(), load)
        });
        let mut runs = runs.into_iter().map(Result::unwrap);
        let (_, load0) = runs.next().unwrap();
        let (got, _) = runs.next().unwrap();
        let mut want = want_reads;
        want.extend(plain[zeros..].iter().map(|&x| Fp::from_u64(x)));
        assert_eq!(got.unwrap(), want, "n = {n}");
        // Loaded by Figure 1, the load wrote the owned cells only: its messages grow with
        // them, not with the zeros (a write is a few dozen messages; 5 000 writes would be far
        // above this).
        if owned <= FIGURE1_MAX_WRITES {
            assert!(load0.msgs_sent < 200 * (owned as u64 + 1), "{load0:?}");
        }
    }
}

/// A frame one byte short at several points of a binary search on the tree memory (the ORAM's
/// set-up, its load and its accesses), in each direction: the receiving party's run ends
/// with an error naming the sender (or the closed link), never a panic, a hang or an output.
#[test]
fn a_short_frame_in_the_tree_memory_is_named() {
    let sorted = [1u64, 3, 3, 12, 40, 41, 90, 91, 95];
    let roles = Roles::two_party();
    let cases = common::short_frames_two(&[5, 10, 25, 50, 80], |session| {
        let me = session.me();
        let s = Entropy::InsecureSeed(9).party_seed(me, "program");
        let d = (me == roles.owner).then_some(&sorted[..]);
        let q = (me == roles.querier).then_some(12);
        BinarySearch::run_on::<Machine2Tree>(session, s, roles, d, q).map(|r| r.output.is_some())
    });
    assert_eq!(cases, 10);
}
