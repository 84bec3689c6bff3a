//! SPIRAL with masks, by parts: query, expansion (input-independent), encoding and answer
//! (online; `answer_records` is both at once, without storing the encoding), decoding. One
//! thread.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use doram_spir::{Client, Database, Server, Shape};

fn parts(c: &mut Criterion) {
    for log in [16u32, 20] {
        let shape = Shape::new(1 << log).unwrap();
        let (client, pp) = Client::new(shape);
        let server = Server::new(shape, &pp).unwrap();
        let mut db = Database::new(shape);
        let query = client.query(12345).unwrap();
        let expanded = server.expand(&query).unwrap();
        db.encode(|x| (x as u128).to_le_bytes());
        let response = server.answer(&expanded, &db);
        let mut g = c.benchmark_group(format!("spir_2^{log}"));
        g.sample_size(10);
        g.bench_function("query", |b| b.iter(|| client.query(12345).unwrap()));
        g.bench_function("expand", |b| b.iter(|| server.expand(&query).unwrap()));
        g.bench_function("encode", |b| {
            b.iter(|| db.encode(|x| (x as u128).to_le_bytes()))
        });
        g.bench_function("answer", |b| b.iter(|| server.answer(&expanded, &db)));
        g.bench_function("answer_records", |b| {
            b.iter(|| server.answer_records(&expanded, |x| (x as u128).to_le_bytes()))
        });
        g.bench_function("decode", |b| {
            b.iter(|| client.decode(&response, 12345).unwrap())
        });
        g.finish();
    }
}

/// The online part for 8-byte records (1024 to an item, half the items).
fn eight_byte(c: &mut Criterion) {
    for log in [16u32, 20] {
        let shape = Shape::with_record_bytes(1 << log, 8).unwrap();
        let (client, pp) = Client::new(shape);
        let server = Server::new(shape, &pp).unwrap();
        let expanded = server.expand(&client.query(12345).unwrap()).unwrap();
        let mut g = c.benchmark_group(format!("spir_8B_2^{log}"));
        g.sample_size(10);
        g.bench_function("answer_records", |b| {
            b.iter(|| server.answer_records(&expanded, |x| (x as u64).to_le_bytes()))
        });
        g.finish();
    }
}

criterion_group!(benches, parts, eight_byte);
criterion_main!(benches);
