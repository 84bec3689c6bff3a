//! Honest runs end to end (in-process): correct records, no fallback, no index in the clear.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use doram_pir::local::{Direction, LocalCluster, LocalOptions};
use doram_pir::{Database, ServerId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

#[test]
fn honest_queries_return_records_without_fallback() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for (count, record_size) in [(1usize, 8usize), (37, 8), (300, 8), (64, 1024), (50, 13)] {
        let mut bytes = vec![0u8; count * record_size];
        rng.fill_bytes(&mut bytes);
        // Some words ≥ p when there is room.
        if record_size >= 8 {
            bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        }
        let db = Arc::new(Database::from_bytes(record_size, &bytes).unwrap());
        let cluster = LocalCluster::honest(db.clone(), LocalOptions::default()).unwrap();
        let mut client = cluster.client().unwrap();
        assert!(client.distrusted().is_none());
        for _ in 0..6 {
            let i = rng.next_u64() % count as u64;
            let out = client.query(i).unwrap();
            assert_eq!(out.value, db.record(i).unwrap(), "count {count}, i {i}");
            assert!(out.fallback.is_none(), "{:?}", out.fallback);
            assert!(out.blamed().is_none());
        }
        assert!(client.query(count as u64).is_err());
        let reports = cluster.shutdown();
        for r in reports {
            assert_eq!(r.unwrap().clear_answers, 0);
        }
    }
}

#[test]
fn servers_never_see_the_index() {
    // Taps every client–server message of honest runs.
    type Log = Vec<(ServerId, Direction, Vec<u8>)>;
    let log: Arc<Mutex<Log>> = Arc::default();
    let sink = log.clone();
    let options = LocalOptions {
        tap: Some(Arc::new(move |s, d, b: &[u8]| {
            sink.lock().unwrap().push((s, d, b.to_vec()))
        })),
        ..LocalOptions::default()
    };
    let values: Vec<u64> = (0..256u64).map(|x| x * 7 + 1).collect();
    let db = Arc::new(Database::from_u64s(&values).unwrap());
    let cluster = LocalCluster::honest(db, options).unwrap();
    let mut client = cluster.client().unwrap();
    // The same index many times, then others.
    let queries: Vec<u64> = std::iter::repeat_n(77, 40).chain([0, 255, 128]).collect();
    for &i in &queries {
        assert_eq!(
            client.query(i).unwrap().value,
            values[i as usize].to_le_bytes()
        );
    }
    cluster.shutdown();
    let log = log.lock().unwrap();
    let mut deltas = HashSet::new();
    let mut shifts = [0usize; 2];
    for (server, dir, bytes) in log.iter() {
        if *dir != Direction::ToServer {
            continue;
        }
        // Only hello (0x01), begin (0x02, S2 only), fetch (0x03) and shift (0x04, S0/S1 only);
        // never clear (0x05, which carries i).
        match (bytes[0], server) {
            (0x01, _) => assert_eq!(bytes.len(), 2),
            // Tag, nonce (8), then: — / instance id (16), hold (4) / Δ (4).
            (0x02, ServerId::S2) => assert_eq!(bytes.len(), 9),
            (0x03, ServerId::S0 | ServerId::S1) => assert_eq!(bytes.len(), 29),
            (0x04, ServerId::S0 | ServerId::S1) => {
                assert_eq!(bytes.len(), 13);
                shifts[server.index()] += 1;
                if *server == ServerId::S0 {
                    deltas.insert(u32::from_le_bytes(bytes[9..13].try_into().unwrap()));
                }
            }
            (tag, s) => panic!("{s} received message {tag:#x} in an honest run"),
        }
    }
    assert_eq!(shifts, [queries.len(); 2]);
    // Δ = i − r with fresh r: 40 queries of the same index give (almost surely) many shifts.
    assert!(deltas.len() > 30, "only {} distinct shifts", deltas.len());
}

#[test]
fn concurrent_clients_do_not_block_each_other() {
    let values: Vec<u64> = (0..512u64).map(|x| x ^ 0xabcdef).collect();
    let db = Arc::new(Database::from_u64s(&values).unwrap());
    let cluster = LocalCluster::honest(db, LocalOptions::default()).unwrap();
    // A client that connects and then stays silent mid-query holds nothing up.
    let idle = cluster.client().unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let mut client = cluster.client().unwrap();
            let values = &values;
            s.spawn(move || {
                for k in 0..5u64 {
                    let i = (t * 97 + k * 31) % 512;
                    let out = client.query(i).unwrap();
                    assert_eq!(out.value, values[i as usize].to_le_bytes());
                    assert!(out.fallback.is_none());
                }
            });
        }
    });
    drop(idle);
    let reports = cluster.shutdown();
    // S2 began 20 queries, each holder answered 20, each with its own instance.
    let r: Vec<_> = reports.into_iter().map(Result::unwrap).collect();
    assert_eq!(r[2].queries, 20);
    assert_eq!(r[0].queries, 20);
    assert_eq!(r[1].queries, 20);
    assert!(r[2].instances >= 20);
}
