//! Single-server symmetric PIR for doram: the SPIRAL scheme (Menon–Wu, IEEE S&P 2022) through
//! the `spiral-rs` crate, with the database laid out for 16-byte records, and the keys of a
//! Naor–Pinkas style PIR-to-SPIR transform ([`masks`]) derived from random OTs.
//!
//! Brief overview: a [`Shape`] fixes the number of records (a power of two) and the SPIRAL
//! parameters; the querying party holds a [`Client`] (its secret keys; its public parameters go
//! to the answering party once), the answering party a [`Server`] built from those public
//! parameters. Per lookup the client sends [`Client::query`] (input-independent: it depends only
//! on the index), the server expands it ([`Server::expand`], also input-independent, so both
//! can run in preprocessing), encodes its current records into a [`Database`] and answers
//! ([`Server::answer`]); [`Client::decode`] returns the record. SPIRAL alone lets the client
//! learn the other records of the plaintext item it retrieved (512 records of 16 bytes): the
//! caller masks every record with [`masks::sender_masks`] before encoding, and the client can
//! remove only its own record's mask ([`masks::receiver_mask`]).
//!
//! # Parameters (decision, documented for the 2P-Duoram READ)
//! Ring dimension 2048, two 28-bit NTT primes (q ≈ 2^56), plaintext modulus p = 256 (one byte
//! per coefficient), n = 2 (a plaintext item is 2 × 2 polynomials = 8 KiB = 512 records),
//! q₂ = 2^20 for the response's first row, gadget lengths t_GSW = 8, t_conv = 4,
//! t_exp = 8 on both sides of the query expansion: the "fast expansion" set of `spiral-rs`'s
//! own tests, which decoded every record correctly in our runs up to 2^24 records of 16 bytes
//! (the crate's tests up to 2^13 records; the 2P-Duoram READ runs of `docs/notes/duoram2p.md`
//! up to 2^24, every result checked). With 8 on the right of the expansion
//! instead of SPIRAL's 56 the public parameters shrink from 6.8 MB to 2.1–2.3 MB and the
//! expansion runs 1.5–2× faster, at the cost of more noise, which these sizes tolerate. The
//! database has `2^t` items, `t = max(3, log₂ ⌈records / 512⌉)`: `ν₁ = t − 1` clamped to
//! `2..=7` first-dimension bits (the expansion's cost doubles with each more) and `ν₂ = t − ν₁
//! ≥ 1` folded by GSW.
//!
//! Sizes: public parameters [`Shape::public_params_len`] (once per pair of parties), query
//! [`Shape::query_len`] = 16 416 bytes, response [`Shape::response_len`] = 20 480 bytes,
//! whatever the number of records.
//!
//! # Security notes
//! * Keys and query randomness come from OS entropy inside `spiral-rs`
//!   (`ChaCha20Rng::from_entropy`); there is no deterministic mode.
//! * Everything a peer sends is length-checked before `spiral-rs` parses it (its parsers assume
//!   well-formed input), and the parsing runs under `catch_unwind`, so a malformed message is an
//!   error, never a panic of the caller. A malicious server can make the client decode garbage
//!   (semi-honest security only, as for the rest of the two-party engine).
//! * `spiral-rs` compiles its AVX2 kernels only when the build enables the `avx2` target
//!   feature (the workspace's `.cargo/config.toml` does, for x86-64); without it the same code
//!   runs about 3× slower.

#![deny(missing_docs)]

pub mod masks;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};

use spiral_rs::aligned_memory::AlignedMemory64;
use spiral_rs::arith::recenter_mod;
use spiral_rs::client::{Client as SpiralClient, PublicParameters, Query};
use spiral_rs::params::Params;
use spiral_rs::poly::{PolyMatrix, PolyMatrixNTT, PolyMatrixRaw, from_ntt, to_ntt};
use spiral_rs::server::{
    PACKED_OFFSET_2, encode, expand_query, fold_ciphertexts, get_v_folding_neg,
    multiply_reg_by_database, pack,
};
use spiral_rs::util::params_from_json;

/// Bytes per record.
pub const RECORD_BYTES: usize = 16;

/// The largest number of records a [`Shape`] takes (2^26, 1 GiB of records).
pub const MAX_RECORDS: usize = 1 << 26;

/// Polynomial length of the parameter set.
const POLY_LEN: usize = 2048;
/// Plaintext polynomials per item (n × n).
const TRIALS: usize = 4;
/// Bytes of one plaintext polynomial (one byte per coefficient).
const CHUNK_BYTES: usize = POLY_LEN;
/// Records per item.
const PER_ITEM: usize = TRIALS * CHUNK_BYTES / RECORD_BYTES;
/// Records per plaintext polynomial.
const PER_CHUNK: usize = CHUNK_BYTES / RECORD_BYTES;
/// Items NTT'd together when encoding (one cache line of the layout).
const BLOCK: usize = 8;
/// First-dimension items at most (2^ν₁).
const MAX_NU1: usize = 7;

/// Errors of this crate.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum SpirError {
    /// A number of records that is not a power of two in `1..=MAX_RECORDS`.
    #[error("unsupported number of records {0} (a power of two up to 2^26)")]
    InvalidSize(usize),
    /// An index at or beyond the number of records.
    #[error("index {index} out of range for {records} records")]
    IndexOutOfRange {
        /// The index.
        index: usize,
        /// The number of records.
        records: usize,
    },
    /// A peer's message of the wrong length or that does not parse.
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// Which message.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// The number of records and the SPIRAL parameters for them.
#[derive(Clone, Copy)]
pub struct Shape {
    records: usize,
    params: &'static Params,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shape")
            .field("records", &self.records)
            .field("nu_1", &self.params.db_dim_1)
            .field("nu_2", &self.params.db_dim_2)
            .finish()
    }
}

/// The interned parameters: one `Params` per `(ν₁, ν₂)`, made once and kept for the life of the
/// process (`spiral-rs`'s keys and queries borrow them); at most a few dozen exist.
fn interned(nu1: usize, nu2: usize) -> &'static Params {
    static CACHE: OnceLock<Mutex<HashMap<(usize, usize), &'static Params>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry((nu1, nu2)).or_insert_with(|| {
        let json = format!(
            r#"{{"n":2,"nu_1":{nu1},"nu_2":{nu2},"p":256,"q2_bits":20,"t_gsw":8,"t_conv":4,"t_exp_left":8,"t_exp_right":8,"instances":1}}"#
        );
        Box::leak(Box::new(params_from_json(&json)))
    })
}

impl Shape {
    /// The shape for `records` records of [`RECORD_BYTES`] bytes.
    ///
    /// # Errors
    /// [`SpirError::InvalidSize`] unless `records` is a power of two in `1..=MAX_RECORDS`.
    pub fn new(records: usize) -> Result<Shape, SpirError> {
        if !records.is_power_of_two() || records > MAX_RECORDS {
            return Err(SpirError::InvalidSize(records));
        }
        let items = records.div_ceil(PER_ITEM);
        let total = (items.trailing_zeros() as usize).max(3);
        let nu1 = total.saturating_sub(1).clamp(2, MAX_NU1);
        let nu2 = total - nu1;
        Ok(Shape {
            records,
            params: interned(nu1, nu2),
        })
    }

    /// The number of records.
    pub fn records(&self) -> usize {
        self.records
    }

    /// The number of plaintext items (each [`Self::records_per_item`] records).
    pub fn items(&self) -> usize {
        self.params.num_items()
    }

    /// Records per plaintext item: 512.
    pub fn records_per_item(&self) -> usize {
        PER_ITEM
    }

    /// `(ν₁, ν₂)`: log₂ of the first dimension and the number of folded dimensions.
    pub fn dims(&self) -> (usize, usize) {
        (self.params.db_dim_1, self.params.db_dim_2)
    }

    /// Bytes of the client's public parameters.
    pub fn public_params_len(&self) -> usize {
        self.params.setup_bytes()
    }

    /// Bytes of one query.
    pub fn query_len(&self) -> usize {
        self.params.query_bytes()
    }

    /// Bytes of one response.
    pub fn response_len(&self) -> usize {
        let p = self.params;
        let q1_bits = (4 * p.pt_modulus).next_power_of_two().trailing_zeros() as usize;
        let bits = p.instances
            * (p.q2_bits as usize * p.n * p.poly_len + q1_bits * p.n * p.n * p.poly_len);
        bits.div_ceil(64) * 8
    }

    fn check_index(&self, index: usize) -> Result<(), SpirError> {
        if index < self.records {
            Ok(())
        } else {
            Err(SpirError::IndexOutOfRange {
                index,
                records: self.records,
            })
        }
    }
}

/// Runs `f` on peer data, turning a panic of the parser into [`SpirError::Malformed`].
fn guarded<T>(what: &'static str, f: impl FnOnce() -> T) -> Result<T, SpirError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| SpirError::Malformed {
        what,
        reason: "rejected by the parser".into(),
    })
}

fn check_len(what: &'static str, got: usize, want: usize) -> Result<(), SpirError> {
    if got == want {
        Ok(())
    } else {
        Err(SpirError::Malformed {
            what,
            reason: format!("{got} bytes, expected {want}"),
        })
    }
}

/// The querying side: the SPIRAL secret keys.
pub struct Client {
    shape: Shape,
    inner: SpiralClient<'static>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("shape", &self.shape)
            .finish()
    }
}

impl Client {
    /// Fresh keys (OS entropy) and the public parameters for the answering party
    /// ([`Shape::public_params_len`] bytes).
    pub fn new(shape: Shape) -> (Client, Vec<u8>) {
        let mut inner = SpiralClient::init(shape.params);
        let pp = inner.generate_keys().serialize();
        (Client { shape, inner }, pp)
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// A query for the item holding record `index` ([`Shape::query_len`] bytes; fresh
    /// randomness from OS entropy).
    ///
    /// # Errors
    /// [`SpirError::IndexOutOfRange`].
    pub fn query(&self, index: usize) -> Result<Vec<u8>, SpirError> {
        self.shape.check_index(index)?;
        Ok(self.inner.generate_query(index / PER_ITEM).serialize())
    }

    /// Record `index` from the server's response to this client's query for it.
    ///
    /// # Errors
    /// [`SpirError::IndexOutOfRange`]; [`SpirError::Malformed`] for a response of the wrong
    /// length or that does not decode.
    pub fn decode(&self, response: &[u8], index: usize) -> Result<[u8; RECORD_BYTES], SpirError> {
        self.shape.check_index(index)?;
        check_len("SPIR response", response.len(), self.shape.response_len())?;
        let item = guarded("SPIR response", || self.inner.decode_response(response))?;
        let at = (index % PER_ITEM) * RECORD_BYTES;
        item.get(at..at + RECORD_BYTES)
            .and_then(|s| <[u8; RECORD_BYTES]>::try_from(s).ok())
            .ok_or_else(|| SpirError::Malformed {
                what: "SPIR response",
                reason: "decoded item too short".into(),
            })
    }
}

/// The answering side: the client's public parameters.
pub struct Server {
    shape: Shape,
    pp: PublicParameters<'static>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("shape", &self.shape)
            .finish()
    }
}

/// A query expanded by the server (input-independent; a few MB, see [`Server::expand`]).
pub struct Expanded {
    reg: AlignedMemory64,
    folding: Vec<PolyMatrixNTT<'static>>,
    folding_neg: Vec<PolyMatrixNTT<'static>>,
}

impl std::fmt::Debug for Expanded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expanded").finish_non_exhaustive()
    }
}

impl Server {
    /// The server for the client whose public parameters are `public_params`.
    ///
    /// # Errors
    /// [`SpirError::Malformed`] for the wrong length or data that does not parse.
    pub fn new(shape: Shape, public_params: &[u8]) -> Result<Server, SpirError> {
        check_len(
            "SPIR public parameters",
            public_params.len(),
            shape.public_params_len(),
        )?;
        let pp = guarded("SPIR public parameters", || {
            PublicParameters::deserialize(shape.params, public_params)
        })?;
        Ok(Server { shape, pp })
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Expands a query (the part of the answer that does not depend on the records: query
    /// expansion and the GSW conversion of SPIRAL).
    ///
    /// # Errors
    /// [`SpirError::Malformed`] for the wrong length or data that does not parse.
    pub fn expand(&self, query: &[u8]) -> Result<Expanded, SpirError> {
        let params = self.shape.params;
        check_len("SPIR query", query.len(), self.shape.query_len())?;
        guarded("SPIR query", || {
            let q = Query::deserialize(params, query);
            let (reg, folding) = expand_query(params, &self.pp, &q);
            let folding_neg = get_v_folding_neg(params, &folding);
            Expanded {
                reg,
                folding,
                folding_neg,
            }
        })
    }

    /// The response to an expanded query over `db` ([`Shape::response_len`] bytes).
    pub fn answer(&self, q: &Expanded, db: &Database) -> Vec<u8> {
        let params = self.shape.params;
        let dim0 = 1 << params.db_dim_1;
        let num_per = 1 << params.db_dim_2;
        let slice = dim0 * num_per * POLY_LEN;
        let mut intermediate: Vec<PolyMatrixNTT> = (0..num_per)
            .map(|_| PolyMatrixNTT::zero(params, 2, 1))
            .collect();
        let mut raw: Vec<PolyMatrixRaw> = (0..num_per)
            .map(|_| PolyMatrixRaw::zero(params, 2, 1))
            .collect();
        let mut cts = Vec::with_capacity(TRIALS);
        for trial in 0..TRIALS {
            let cur = &db.data.as_slice()[trial * slice..(trial + 1) * slice];
            multiply_reg_by_database(
                &mut intermediate,
                cur,
                q.reg.as_slice(),
                params,
                dim0,
                num_per,
            );
            for (r, i) in raw.iter_mut().zip(&intermediate) {
                from_ntt(r, i);
            }
            fold_ciphertexts(params, &mut raw, &q.folding, &q.folding_neg);
            cts.push(raw[0].clone());
        }
        let packed = pack(params, &cts, &self.pp.v_packing);
        encode(params, &vec![packed.raw()])
    }
}

/// The records in SPIRAL's plaintext layout, NTT'd (8 bytes of memory per record byte).
pub struct Database {
    shape: Shape,
    data: AlignedMemory64,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// An all-zero database (allocated once; [`Database::encode`] overwrites it).
    pub fn new(shape: Shape) -> Database {
        let words = TRIALS * shape.items() * POLY_LEN;
        Database {
            shape,
            data: AlignedMemory64::new(words),
        }
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Encodes `record(x)` at every index `x < records` (records beyond, up to the capacity of
    /// the items, are zero). `record` is called once per index, in no particular order.
    pub fn encode(&mut self, mut record: impl FnMut(usize) -> [u8; RECORD_BYTES]) {
        let params = self.shape.params;
        let records = self.shape.records;
        let dim0 = 1usize << params.db_dim_1;
        let num_per = 1usize << params.db_dim_2;
        let items = dim0 * num_per;
        // Centred lifts of the bytes into Z_q.
        let lift: [u64; 256] =
            std::array::from_fn(|b| recenter_mod(b as u64, params.pt_modulus, params.modulus));
        let mut raw = PolyMatrixRaw::zero(params, 1, 1);
        // A block of items adjacent in the layout (consecutive first-dimension indices j), so
        // that the transposed writes fill whole cache lines.
        let block = dim0.min(BLOCK);
        let mut ntts: Vec<PolyMatrixNTT> = (0..block)
            .map(|_| PolyMatrixNTT::zero(params, 1, 1))
            .collect();
        let out = self.data.as_mut_slice();
        for trial in 0..TRIALS {
            for ii in 0..num_per {
                for j0 in (0..dim0).step_by(block) {
                    for (k, ntt) in ntts.iter_mut().enumerate() {
                        let item = (j0 + k) * num_per + ii;
                        let first = item * PER_ITEM + trial * PER_CHUNK;
                        let coeffs = raw.data.as_mut_slice();
                        for (r, c) in coeffs.chunks_exact_mut(RECORD_BYTES).enumerate() {
                            let x = first + r;
                            if x < records {
                                for (ci, b) in c.iter_mut().zip(record(x)) {
                                    *ci = lift[b as usize];
                                }
                            } else {
                                c.fill(0);
                            }
                        }
                        to_ntt(ntt, &raw);
                    }
                    // [trial][z][ii][j] over [TRIALS][POLY_LEN][num_per][dim0].
                    let base = trial * POLY_LEN * items + ii * dim0 + j0;
                    for z in 0..POLY_LEN {
                        let row = &mut out[base + z * items..base + z * items + block];
                        for (o, ntt) in row.iter_mut().zip(&ntts) {
                            let n = ntt.data.as_slice();
                            *o = n[z] | (n[POLY_LEN + z] << PACKED_OFFSET_2);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shapes() {
        for (records, dims) in [
            (1, (2, 1)),
            (512, (2, 1)),
            (1 << 12, (2, 1)),
            (1 << 13, (3, 1)),
            (1 << 16, (6, 1)),
            (1 << 20, (7, 4)),
            (1 << 24, (7, 8)),
        ] {
            let s = Shape::new(records).unwrap();
            assert_eq!(s.dims(), dims, "{records}");
            assert!(s.items() * s.records_per_item() >= records);
            assert_eq!(s.query_len(), 16_416);
            assert_eq!(s.response_len(), 20_480);
        }
        assert_eq!(Shape::new(3).unwrap_err(), SpirError::InvalidSize(3));
        assert!(Shape::new(MAX_RECORDS * 2).is_err());
    }
}
