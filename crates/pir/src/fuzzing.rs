//! Entry points for the fuzz harnesses (`doram-fuzz`): every decoder of a PIR message or file,
//! with inputs that decode correctly to start from.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::Database;
use crate::dpf::{self, Holder};
use crate::merkle;
use crate::proto::{self, Request, ServerId};

/// What a server reads from a client or another server: the requests, and S2's partial views
/// (then regenerated into a full view, as a key holder does) for a domain of `bits` bits.
pub fn server_input(bytes: &[u8], bits: u8) {
    let _ = proto::decode_request(bytes);
    let n = usize::from(bits.clamp(1, 12));
    if let Ok((_, partial)) = proto::decode_offline(bytes, n) {
        let _ = dpf::regenerate(Holder::Zero, partial);
    }
}

/// What a client reads from a server: the database description, S2's pair of views, a
/// holder's view, an answer and a record in the clear (whose Merkle path is then checked),
/// for a domain of `bits` bits and records of `record_size` bytes.
pub fn client_input(bytes: &[u8], bits: u8, record_size: usize) {
    let n = usize::from(bits.clamp(1, 12));
    let _ = proto::reply_nonce(bytes);
    let _ = proto::decode_info(bytes);
    if let Ok(proto::Reply::Ok((_, views))) = proto::decode_pair(bytes, n) {
        let _ = dpf::check_g([&views[0], &views[1]]);
    }
    let _ = proto::decode_view(bytes, n);
    let _ = proto::decode_answer(bytes, record_size.div_ceil(8).max(1));
    if let Ok(proto::Reply::Ok(r)) = proto::decode_record(bytes, record_size, 40) {
        let _ = merkle::verify(&[7; 32], bits, r.index, &r.record, &r.path);
    }
}

/// A database file.
pub fn database_file(bytes: &[u8]) {
    if let Ok(db) = Database::from_file_bytes(bytes) {
        let _ = db.info();
        let last = db.len().saturating_sub(1);
        let _ = db.record_with_path(last);
        let _ = db.record(db.len());
    }
}

/// Valid encodings of every message for a domain of `bits` bits and 8-byte records.
pub fn message_seeds(bits: u8) -> Vec<Vec<u8>> {
    let mut rng = ChaCha20Rng::seed_from_u64(u64::from(bits));
    let g = dpf::generate(bits.clamp(1, 12), &mut rng);
    let [v0, v1] = &g.views;
    let partial = v0.partial();
    let mut seeds = vec![
        proto::encode_request(Request::Begin { nonce: 9 }),
        proto::encode_request(Request::Fetch {
            nonce: 9,
            id: 77,
            hold_ms: 500,
        }),
        proto::encode_request(Request::Shift { nonce: 9, delta: 3 }),
        proto::encode_request(Request::Clear { nonce: 9, index: 3 }),
        proto::encode_offline(77, &partial),
        proto::encode_pair(9, 77, [v0, v1]),
        proto::encode_view(9, v1),
        proto::encode_answer(9, &[doram_field::Fp64::ZERO, doram_field::Fp64::ZERO]),
        proto::encode_refused(9, proto::Refusal::NotFetched),
    ];
    if let Ok(db) = Database::from_u64s(&[1, 2, 3, 4, 5]) {
        seeds.push(proto::encode_info(ServerId::S0, &db.info()));
        if let Some((record, path)) = db.record_with_path(3) {
            seeds.push(proto::encode_record(9, 3, &record, &path));
        }
    }
    seeds
}

/// Valid database files.
pub fn database_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for count in [1u64, 5, 33] {
        let values: Vec<u64> = (0..count).collect();
        if let Ok(db) = Database::from_u64s(&values) {
            out.push(db.to_file_bytes());
        }
    }
    out
}
