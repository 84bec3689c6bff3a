//! Every program between two parties on 2P-Duoram ([`Machine2Duoram`]) against its plaintext
//! reference: binary and linear search, BFS in both forms, Dijkstra and stable matching on
//! random inputs; transcripts of binary search that do not depend on the data.
#![allow(clippy::unwrap_used)]

mod common;

use doram_mpc::testkit::test_seed;
use doram_programs::Machine2Duoram;

#[test]
fn programs_match_plaintext() {
    common::every_program_two::<Machine2Duoram>(&[1, 7, 100], test_seed());
}

/// Each party's transcript of one binary search.
fn transcripts(data: &[u64], key: u64) -> Vec<doram_net::Transcript> {
    common::binary_search_transcripts_two::<Machine2Duoram>(data, key, test_seed())
}

#[test]
fn binary_search_transcripts_do_not_depend_on_the_data() {
    let a = transcripts(&[1, 5, 9, 12, 40, 41, 90], 0);
    let b = transcripts(&[0, 0, 0, 3, 3, 70, 99], 99);
    assert_eq!(a, b);
}
