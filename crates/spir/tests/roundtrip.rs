//! SPIRAL lookups with Naor–Pinkas masks, end to end in one process: every record the client
//! asks for comes back, masked records are recovered only with the right keys, and malformed
//! messages are errors.
#![allow(clippy::unwrap_used)]

use doram_prim::Block;
use doram_spir::{Client, Database, RECORD_BYTES, Server, Shape, SpirError, masks};
use rand::{Rng, SeedableRng};

fn record_of(x: usize, salt: u64) -> [u8; RECORD_BYTES] {
    let v = (x as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ salt as u128;
    v.to_le_bytes()
}

#[test]
fn lookups_at_several_sizes() {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
    for records in [1usize, 8, 1 << 10, 1 << 13] {
        let shape = Shape::new(records).unwrap();
        let (client, pp) = Client::new(shape);
        assert_eq!(pp.len(), shape.public_params_len());
        let server = Server::new(shape, &pp).unwrap();
        let mut db = Database::new(shape);
        let d = records.trailing_zeros() as usize;
        for round in 0..3u64 {
            let index = rng.random_range(0..records);
            let pairs: Vec<[Block; 2]> = (0..d).map(|_| [rng.random(), rng.random()]).collect();
            let chosen: Vec<Block> = (0..d).map(|j| pairs[j][(index >> j) & 1]).collect();
            let mut m = Vec::new();
            masks::sender_masks(&pairs, &mut m);
            let query = client.query(index).unwrap();
            assert_eq!(query.len(), shape.query_len());
            let expanded = server.expand(&query).unwrap();
            db.encode(|x| (u128::from_le_bytes(record_of(x, round)) ^ m[x]).to_le_bytes());
            let response = server.answer(&expanded, &db);
            assert_eq!(response.len(), shape.response_len());
            let got = client.decode(&response, index).unwrap();
            let unmasked = u128::from_le_bytes(got) ^ masks::receiver_mask(&chosen);
            assert_eq!(
                unmasked.to_le_bytes(),
                record_of(index, round),
                "{records} {index}"
            );
        }
    }
}

#[test]
fn malformed_messages_are_errors() {
    let shape = Shape::new(1 << 10).unwrap();
    let (client, pp) = Client::new(shape);
    assert!(matches!(
        Server::new(shape, &pp[..pp.len() - 1]),
        Err(SpirError::Malformed { .. })
    ));
    let server = Server::new(shape, &pp).unwrap();
    assert!(matches!(
        server.expand(&[0u8; 17]),
        Err(SpirError::Malformed { .. })
    ));
    // Right length, garbage content: no panic.
    let junk = vec![0xa5u8; shape.query_len()];
    let _ = server.expand(&junk);
    assert!(matches!(
        client.decode(&[1u8; 9], 0),
        Err(SpirError::Malformed { .. })
    ));
    let junk = vec![0xffu8; shape.response_len()];
    let _ = client.decode(&junk, 3);
    assert!(matches!(
        client.query(1 << 10),
        Err(SpirError::IndexOutOfRange { .. })
    ));
}

#[test]
fn answering_from_records_matches_the_encoded_database() {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
    for records in [8usize, 1 << 12, 1 << 15] {
        let shape = Shape::new(records).unwrap();
        let (client, pp) = Client::new(shape);
        let server = Server::new(shape, &pp).unwrap();
        let index = rng.random_range(0..records);
        let expanded = server.expand(&client.query(index).unwrap()).unwrap();
        let mut db = Database::new(shape);
        db.encode(|x| record_of(x, 9));
        let stored = server.answer(&expanded, &db);
        let mut calls = 0;
        let fused = server.answer_records(&expanded, |x| {
            calls += 1;
            record_of(x, 9)
        });
        assert_eq!(calls, records, "each record once");
        assert_eq!(fused, stored);
        assert_eq!(client.decode(&fused, index).unwrap(), record_of(index, 9));
    }
}

#[test]
fn eight_byte_records() {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(4);
    assert!(matches!(
        Shape::with_record_bytes(8, 12),
        Err(SpirError::RecordWidth { got: 12, .. })
    ));
    for records in [1usize, 1 << 10, 1 << 14] {
        let shape = Shape::with_record_bytes(records, 8).unwrap();
        assert_eq!(shape.records_per_item(), 1024);
        assert_eq!(
            shape.items(),
            Shape::new(records).unwrap().items().div_ceil(2).max(8)
        );
        let (client, pp) = Client::new(shape);
        let server = Server::new(shape, &pp).unwrap();
        let value = |x: usize| (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes();
        for _ in 0..2 {
            let index = rng.random_range(0..records);
            let expanded = server.expand(&client.query(index).unwrap()).unwrap();
            let response = server.answer_records(&expanded, value);
            assert_eq!(
                client.decode_record::<8>(&response, index).unwrap(),
                value(index)
            );
            assert!(matches!(
                client.decode(&response, index),
                Err(SpirError::RecordWidth { got: 16, want: 8 })
            ));
        }
    }
}
