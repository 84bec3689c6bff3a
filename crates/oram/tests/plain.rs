//! The plaintext oracle as the one-party case of the shared-memory trait: the kit's standard
//! and batch plans through `SharedMemory` match its inherent, plaintext methods — so a program
//! written against the trait runs on it unchanged.
#![allow(clippy::unwrap_used)]

use doram_field::{Fp, Z64};
use doram_mpc::Additive;
use doram_oram::testkit::{run_shared, test_seed};
use doram_oram::{Counting, PlainMemory, SharedMemory};

#[test]
fn plain_memory_is_a_one_party_shared_memory() {
    let seed = test_seed();
    for n in [1, 2, 3, 5, 13, 16, 17, 100] {
        run_shared(PlainMemory::<Z64>::zeroed, n, 60, seed);
        run_shared(PlainMemory::<Fp>::zeroed, n, 60, seed);
        run_shared(|n| Counting::new(PlainMemory::<Fp>::zeroed(n)), n, 60, seed);
    }
}

#[test]
fn counting_counts_batches_and_updates() {
    let mut m = Counting::new(PlainMemory::<Z64>::zeroed(4));
    let c = |v: u64| Additive::from_share(Z64(v));
    SharedMemory::init(&mut m, &[c(1), c(2), c(3), c(4)]).unwrap();
    assert_eq!(m.read_many(&[c(0), c(3)]).unwrap(), vec![c(1), c(4)]);
    m.update(c(2), c(10)).unwrap();
    assert_eq!(SharedMemory::write(&mut m, c(2), c(7)).unwrap(), c(13));
    let counts = m.counts();
    assert_eq!((counts.reads, counts.writes, counts.updates), (2, 1, 1));
    assert_eq!(counts.inits, 1);
}

#[test]
fn plain_memory_reports_addresses_out_of_range() {
    let mut m = PlainMemory::<Z64>::zeroed(3);
    let c = |v: u64| Additive::from_share(Z64(v));
    assert!(SharedMemory::read(&mut m, c(3)).is_err());
    assert!(m.update(c(u64::MAX), c(1)).is_err());
    assert_eq!(m.as_slice(), &[Z64(0); 3]);
}
