//! Single-server symmetric PIR for doram: the SPIRAL scheme (Menon–Wu, IEEE S&P 2022) through
//! the `spiral-rs` crate, with the database laid out for records of 16 or 8 bytes, and the
//! keys of a Naor–Pinkas style PIR-to-SPIR transform ([`masks`]) derived from random OTs.
//!
//! Brief overview: a [`Shape`] fixes the number of records (a power of two) and the SPIRAL
//! parameters; the querying party holds a [`Client`] (its secret keys; its public parameters go
//! to the answering party once), the answering party a [`Server`] built from those public
//! parameters. Per lookup the client sends [`Client::query`] (input-independent: it depends only
//! on the index), the server expands it ([`Server::expand`], also input-independent, so both
//! can run in preprocessing), and answers over its current records: [`Server::answer_records`]
//! encodes them and answers in one pass, or [`Database::encode`] then [`Server::answer`] keep
//! the encoding for several answers; [`Client::decode`] returns the record. SPIRAL alone lets
//! the client learn the other records of the plaintext item it retrieved (8 KiB of them): the
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
//! database has `2^t` items, `t = max(3, log₂ ⌈records / records per item⌉)`: `ν₁ = t − 1`
//! clamped to `2..=7` first-dimension bits (the expansion's cost doubles with each more, for a
//! small saving in the folding) and
//! `ν₂ = t − ν₁ ≥ 1` folded by GSW. Records of 8 bytes ([`Shape::with_record_bytes`]; 1024 to an
//! item) halve the items, and so the online work, for the same number of records.
//!
//! # Online work (the answer)
//! Per answer the server lifts every record byte into both CRT residues, runs a forward NTT
//! per plaintext polynomial (2048 bytes of records), SPIRAL's first dimension (a `2^ν₁`-term
//! inner product per coefficient) and the folding. `spiral-rs`'s own kernels for these run
//! four 64-bit lanes per AVX2 step and its first dimension runs scalar with 128-bit sums, so
//! this crate has its own: a forward NTT on eight 32-bit lanes (the last three layers by lane
//! shuffles; it matches `spiral-rs`'s output, tested), and a first dimension with 64-bit sums
//! (each product of two residues is below 2^56 and at most 2^8 are added) over a database laid
//! out in blocks of 64 coefficients, so that the query's block stays in cache.
//! [`Server::answer_records`] encodes 16 items at a time and consumes them at once, never
//! writing the 8-bytes-per-record-byte encoding to memory. Measurements are in
//! `docs/notes/duoram2p.md` (`cargo bench -p doram-spir`).
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
mod ntt;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};

use spiral_rs::aligned_memory::AlignedMemory64;
use spiral_rs::client::{Client as SpiralClient, PublicParameters, Query};
use spiral_rs::gadget::gadget_invert;
use spiral_rs::params::Params;
use spiral_rs::poly::{PolyMatrix, PolyMatrixNTT, PolyMatrixRaw, add_into, from_ntt, multiply};
use spiral_rs::server::{encode, expand_query, get_v_folding_neg, pack};
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
const ITEM_BYTES: usize = TRIALS * CHUNK_BYTES;
/// Items NTT'd together when encoding (one cache line of the layout).
/// The width of the coefficient blocks of the database's layout (see [`first_dimension`]).
const ZW: usize = 64;
/// Items encoded at a time by [`Server::answer_records`] (their polynomials stay in L2).
const FUSED_BLOCK: usize = 16;
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
    /// A record width other than 8 or 16 bytes, or a call with records of another width than
    /// the shape's.
    #[error("records of {got} bytes where {want} are expected (8 or 16 supported)")]
    RecordWidth {
        /// The width asked for.
        got: usize,
        /// The shape's width (or 16 for a new shape).
        want: usize,
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
    record_bytes: usize,
    params: &'static Params,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shape")
            .field("records", &self.records)
            .field("record_bytes", &self.record_bytes)
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
        Shape::with_record_bytes(records, RECORD_BYTES)
    }

    /// The shape for `records` records of `record_bytes` bytes (8 or 16): an item holds
    /// 8192 / `record_bytes` records, so 8-byte records halve the items, and the work, for the
    /// same number of records.
    ///
    /// # Errors
    /// [`SpirError::InvalidSize`] unless `records` is a power of two in `1..=MAX_RECORDS`;
    /// [`SpirError::RecordWidth`] for another width.
    pub fn with_record_bytes(records: usize, record_bytes: usize) -> Result<Shape, SpirError> {
        if !records.is_power_of_two() || records > MAX_RECORDS {
            return Err(SpirError::InvalidSize(records));
        }
        if record_bytes != 8 && record_bytes != 16 {
            return Err(SpirError::RecordWidth {
                got: record_bytes,
                want: RECORD_BYTES,
            });
        }
        let items = records.div_ceil(ITEM_BYTES / record_bytes);
        let total = (items.trailing_zeros() as usize).max(3);
        let nu1 = total.saturating_sub(1).clamp(2, MAX_NU1);
        let nu2 = total - nu1;
        Ok(Shape {
            records,
            record_bytes,
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

    /// Bytes per record: 8 or 16.
    pub fn record_bytes(&self) -> usize {
        self.record_bytes
    }

    /// Records per plaintext item: 512 of 16 bytes, 1024 of 8.
    pub fn records_per_item(&self) -> usize {
        ITEM_BYTES / self.record_bytes
    }

    /// Records per plaintext polynomial of an item.
    fn records_per_poly(&self) -> usize {
        CHUNK_BYTES / self.record_bytes
    }

    /// [`SpirError::RecordWidth`] unless the shape's records are `B` bytes.
    fn check_width<const B: usize>(&self) -> Result<(), SpirError> {
        if B == self.record_bytes {
            Ok(())
        } else {
            Err(SpirError::RecordWidth {
                got: B,
                want: self.record_bytes,
            })
        }
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
        Ok(self
            .inner
            .generate_query(index / self.shape.records_per_item())
            .serialize())
    }

    /// Record `index` from the server's response to this client's query for it.
    ///
    /// # Errors
    /// [`SpirError::IndexOutOfRange`]; [`SpirError::Malformed`] for a response of the wrong
    /// length or that does not decode.
    pub fn decode(&self, response: &[u8], index: usize) -> Result<[u8; RECORD_BYTES], SpirError> {
        self.decode_record(response, index)
    }

    /// [`Client::decode`] for records of `B` bytes (the shape's width).
    ///
    /// # Errors
    /// As [`Client::decode`]; [`SpirError::RecordWidth`] for another width than the shape's.
    pub fn decode_record<const B: usize>(
        &self,
        response: &[u8],
        index: usize,
    ) -> Result<[u8; B], SpirError> {
        self.shape.check_width::<B>()?;
        self.shape.check_index(index)?;
        check_len("SPIR response", response.len(), self.shape.response_len())?;
        let item = guarded("SPIR response", || self.inner.decode_response(response))?;
        let at = (index % self.shape.records_per_item()) * B;
        item.get(at..at + B)
            .and_then(|s| <[u8; B]>::try_from(s).ok())
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
    /// The first dimension's ciphertexts, `[z block][j][row][z in block]`, each word both CRT
    /// residues (low and high 32 bits).
    first: Vec<u64>,
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
                first: relayout_first(reg.as_slice(), 1 << params.db_dim_1),
                folding,
                folding_neg,
            }
        })
    }

    /// The response to an expanded query over `db` ([`Shape::response_len`] bytes).
    pub fn answer(&self, q: &Expanded, db: &Database) -> Vec<u8> {
        let params = self.shape.params;
        let ntt = ntt_tables(params);
        let (dim0, num_per) = (1 << params.db_dim_1, 1 << params.db_dim_2);
        let slice = dim0 * num_per * POLY_LEN;
        self.finish(q, |trial, intermediate| {
            let cur = &db.data.as_slice()[trial * slice..(trial + 1) * slice];
            first_dimension(ntt, cur, &q.first, dim0, num_per, intermediate);
        })
    }

    /// The response to an expanded query over the records `record(x)` of `B` bytes (as
    /// [`Database::encode`] then [`Server::answer`], with the same response, but without storing
    /// the encoded database: each item is encoded into cache and consumed by the first
    /// dimension at once). `record` is called once per index, in no particular order.
    ///
    /// # Panics
    /// If `B` is not the shape's record width (a programming error).
    pub fn answer_records<const B: usize>(
        &self,
        q: &Expanded,
        mut record: impl FnMut(usize) -> [u8; B],
    ) -> Vec<u8> {
        let shape = self.shape;
        assert_eq!(B, shape.record_bytes, "records of the shape's width");
        let params = shape.params;
        let ntt = ntt_tables(params);
        let (dim0, num_per) = (1usize << params.db_dim_1, 1usize << params.db_dim_2);
        assert!(dim0 <= 1 << 8, "64-bit sums of at most 2^8 products");
        let block = dim0.min(FUSED_BLOCK);
        let mut poly = ItemPoly::new(params);
        // `block` items' polynomials in the `[z block][j][z in block]` layout, and the sums.
        let mut buf = vec![0u64; block * POLY_LEN];
        let mut acc = vec![[[0u64; ZW]; 4]; POLY_LEN / ZW];
        let (q0, q1) = (u64::from(ntt.modulus(0)), u64::from(ntt.modulus(1)));
        let (m0, m1) = (u64::MAX / q0, u64::MAX / q1);
        self.finish(q, |trial, intermediate| {
            for (ii, out) in intermediate.iter_mut().enumerate() {
                acc.iter_mut().for_each(|a| *a = [[0; ZW]; 4]);
                for j0 in (0..dim0).step_by(block) {
                    for b in 0..block {
                        let packed =
                            poly.encode(shape, (j0 + b) * num_per + ii, trial, &mut record);
                        for (zb, run) in packed.chunks_exact(ZW).enumerate() {
                            buf[(zb * block + b) * ZW..][..ZW].copy_from_slice(run);
                        }
                    }
                    for (zb, a) in acc.iter_mut().enumerate() {
                        let qb = &q.first[(zb * dim0 + j0) * 2 * ZW..][..block * 2 * ZW];
                        let s = inner_products(&buf[zb * block * ZW..][..block * ZW], qb);
                        for (ar, sr) in a.iter_mut().zip(&s) {
                            ar.iter_mut().zip(sr).for_each(|(x, &y)| *x += y);
                        }
                    }
                }
                let data = out.data.as_mut_slice();
                for (zb, a) in acc.iter().enumerate() {
                    let z = zb * ZW;
                    for l in 0..ZW {
                        data[z + l] = reduce_u64(a[0][l], q0, m0);
                        data[POLY_LEN + z + l] = reduce_u64(a[1][l], q1, m1);
                        data[2 * POLY_LEN + z + l] = reduce_u64(a[2][l], q0, m0);
                        data[3 * POLY_LEN + z + l] = reduce_u64(a[3][l], q1, m1);
                    }
                }
            }
        })
    }

    /// Runs `first(trial, outputs)` (the first dimension of plaintext polynomial `trial` of
    /// every item, one output per fold index), folds, packs and serialises the response.
    fn finish(
        &self,
        q: &Expanded,
        mut first: impl FnMut(usize, &mut [PolyMatrixNTT<'static>]),
    ) -> Vec<u8> {
        let params = self.shape.params;
        let ntt = ntt_tables(params);
        let num_per = 1 << params.db_dim_2;
        let mut intermediate: Vec<PolyMatrixNTT> = (0..num_per)
            .map(|_| PolyMatrixNTT::zero(params, 2, 1))
            .collect();
        let mut raw: Vec<PolyMatrixRaw> = (0..num_per)
            .map(|_| PolyMatrixRaw::zero(params, 2, 1))
            .collect();
        let mut cts = Vec::with_capacity(TRIALS);
        for trial in 0..TRIALS {
            first(trial, &mut intermediate);
            for (r, i) in raw.iter_mut().zip(&intermediate) {
                from_ntt(r, i);
            }
            fold(ntt, params, &mut raw, &q.folding, &q.folding_neg);
            cts.push(raw[0].clone());
        }
        let packed = pack(params, &cts, &self.pp.v_packing);
        encode(params, &vec![packed.raw()])
    }
}

/// `spiral-rs`'s first-dimension ciphertexts (`[z][j][row]`) in [`first_dimension`]'s layout.
fn relayout_first(reg: &[u64], dim0: usize) -> Vec<u64> {
    let mut out = vec![0u64; POLY_LEN * dim0 * 2];
    for z in 0..POLY_LEN {
        let (zb, zz) = (z / ZW, z % ZW);
        for j in 0..dim0 {
            for row in 0..2 {
                out[((zb * dim0 + j) * 2 + row) * ZW + zz] = reg[(z * dim0 + j) * 2 + row];
            }
        }
    }
    out
}

/// Barrett reduction of `x < 2^64` modulo a prime `q < 2^32` (`m = ⌊2^64 / q⌋`).
#[inline(always)]
fn reduce_u64(x: u64, q: u64, m: u64) -> u64 {
    let quot = ((u128::from(x) * u128::from(m)) >> 64) as u64;
    let r = x - quot * q;
    if r >= q { r - q } else { r }
}

/// SPIRAL's first dimension over one plaintext polynomial of every item ([SPIRAL §4], as
/// `spiral_rs::server::multiply_reg_by_database`): for every fold index `ii`, the
/// `2^ν₁`-term inner product of the query's first-dimension ciphertexts (2 rows) with the
/// items `(j, ii)`, coefficient-wise in the NTT domain and per CRT prime. The database's
/// `[z block][ii][j][z in block]` layout keeps each block of the query in cache; the sums stay
/// in 64 bits (each product is below 2^56, and at most 2^8 are added).
fn first_dimension(
    ntt: &ntt::Ntt,
    db: &[u64],
    first: &[u64],
    dim0: usize,
    num_per: usize,
    out: &mut [PolyMatrixNTT],
) {
    assert!(dim0 <= 1 << 8, "64-bit sums of at most 2^8 products");
    let items = dim0 * num_per;
    let (q0, q1) = (u64::from(ntt.modulus(0)), u64::from(ntt.modulus(1)));
    let (m0, m1) = (u64::MAX / q0, u64::MAX / q1);
    for zb in 0..POLY_LEN / ZW {
        let qb = &first[zb * dim0 * 2 * ZW..(zb + 1) * dim0 * 2 * ZW];
        for (ii, o) in out.iter_mut().enumerate().take(num_per) {
            let dbb = &db[(zb * items + ii * dim0) * ZW..][..dim0 * ZW];
            let data = o.data.as_mut_slice();
            let acc = inner_products(dbb, qb);
            // Row r, CRT prime c of coefficient z at (2r + c) · 2048 + z.
            let z = zb * ZW;
            for l in 0..ZW {
                data[z + l] = reduce_u64(acc[0][l], q0, m0);
                data[POLY_LEN + z + l] = reduce_u64(acc[1][l], q1, m1);
                data[2 * POLY_LEN + z + l] = reduce_u64(acc[2][l], q0, m0);
                data[3 * POLY_LEN + z + l] = reduce_u64(acc[3][l], q1, m1);
            }
        }
    }
}

/// The `[row][CRT prime]` sums over j of one block of [`first_dimension`] (scalar).
#[cfg_attr(target_feature = "avx2", allow(dead_code))]
fn inner_products_scalar(dbb: &[u64], qb: &[u64]) -> [[u64; ZW]; 4] {
    const LOW: u64 = 0xffff_ffff;
    let mut acc = [[0u64; ZW]; 4];
    for (d, qj) in dbb.chunks_exact(ZW).zip(qb.chunks_exact(2 * ZW)) {
        for l in 0..ZW {
            let (x, r0, r1) = (d[l], qj[l], qj[ZW + l]);
            let (dl, dh) = (x & LOW, x >> 32);
            acc[0][l] += dl * (r0 & LOW);
            acc[1][l] += dh * (r0 >> 32);
            acc[2][l] += dl * (r1 & LOW);
            acc[3][l] += dh * (r1 >> 32);
        }
    }
    acc
}

#[cfg(not(target_feature = "avx2"))]
use inner_products_scalar as inner_products;

/// [`inner_products_scalar`] on AVX2: `VPMULUDQ` multiplies the low 32 bits of 64-bit lanes,
/// so each packed word gives its two CRT residues' products with one shift. The database is
/// read in order; the sums stay in L1.
#[cfg(target_feature = "avx2")]
fn inner_products(dbb: &[u64], qb: &[u64]) -> [[u64; ZW]; 4] {
    use safe_arch::{add_i64_m256i, m256i, mul_u64_low_bits_m256i, shr_imm_u64_m256i};
    const W: usize = 4;
    const V: usize = ZW / W;
    #[inline(always)]
    fn load(a: &[u64]) -> m256i {
        let v: [u64; W] = a[..W].try_into().unwrap_or_default();
        m256i::from(v)
    }
    let zero = m256i::from([0u64; W]);
    let mut acc = [[zero; V]; 4];
    #[allow(clippy::needless_range_loop)] // Four arrays indexed in step.
    for (d, qj) in dbb.chunks_exact(ZW).zip(qb.chunks_exact(2 * ZW)) {
        let (q0, q1) = qj.split_at(ZW);
        for h in 0..V {
            let o = h * W;
            let x = load(&d[o..]);
            let (r0, r1) = (load(&q0[o..]), load(&q1[o..]));
            let xh = shr_imm_u64_m256i::<32>(x);
            let p00 = mul_u64_low_bits_m256i(x, r0);
            let p01 = mul_u64_low_bits_m256i(xh, shr_imm_u64_m256i::<32>(r0));
            let p10 = mul_u64_low_bits_m256i(x, r1);
            let p11 = mul_u64_low_bits_m256i(xh, shr_imm_u64_m256i::<32>(r1));
            acc[0][h] = add_i64_m256i(acc[0][h], p00);
            acc[1][h] = add_i64_m256i(acc[1][h], p01);
            acc[2][h] = add_i64_m256i(acc[2][h], p10);
            acc[3][h] = add_i64_m256i(acc[3][h], p11);
        }
    }
    acc.map(|row| {
        let mut out = [0u64; ZW];
        for (chunk, v) in out.chunks_exact_mut(W).zip(row) {
            let v: [u64; W] = v.into();
            chunk.copy_from_slice(&v);
        }
        out
    })
}

/// SPIRAL's folding of the first dimension's `2^ν₂` outputs by the query's GSW ciphertexts (as
/// `spiral_rs::server::fold_ciphertexts`, with this crate's NTT for the gadget-decomposed
/// ciphertexts).
fn fold(
    ntt: &ntt::Ntt,
    params: &'static Params,
    cts: &mut [PolyMatrixRaw<'static>],
    folding: &[PolyMatrixNTT<'static>],
    folding_neg: &[PolyMatrixNTT<'static>],
) {
    let dims = cts.len().trailing_zeros() as usize;
    if dims == 0 {
        return;
    }
    let ell = folding[0].cols / 2;
    let mut ginv = PolyMatrixRaw::zero(params, 2 * ell, 1);
    let mut ginv_ntt = PolyMatrixNTT::zero(params, 2 * ell, 1);
    let mut prod = PolyMatrixNTT::zero(params, 2, 1);
    let mut sum = PolyMatrixNTT::zero(params, 2, 1);
    let mut half = cts.len();
    for dim in 0..dims {
        half /= 2;
        for i in 0..half {
            gadget_invert(&mut ginv, &cts[i]);
            to_ntt_small(ntt, &mut ginv_ntt, &ginv);
            multiply(&mut prod, &folding_neg[dims - 1 - dim], &ginv_ntt);
            gadget_invert(&mut ginv, &cts[half + i]);
            to_ntt_small(ntt, &mut ginv_ntt, &ginv);
            multiply(&mut sum, &folding[dims - 1 - dim], &ginv_ntt);
            add_into(&mut sum, &prod);
            from_ntt(&mut cts[i], &sum);
        }
    }
}

/// `spiral_rs::poly::to_ntt` for a matrix of small coefficients (below 2^30, as the gadget
/// digits are), with this crate's NTT.
fn to_ntt_small(ntt: &ntt::Ntt, out: &mut PolyMatrixNTT, inp: &PolyMatrixRaw) {
    let mut buf = [0u32; POLY_LEN];
    for r in 0..inp.rows {
        let src = inp.get_poly(r, 0);
        let dst = out.get_poly_mut(r, 0);
        for c in 0..ntt.primes() {
            for (b, &x) in buf.iter_mut().zip(src) {
                *b = x as u32;
            }
            ntt.forward(c, &mut buf);
            for (d, &x) in dst[c * POLY_LEN..(c + 1) * POLY_LEN].iter_mut().zip(&buf) {
                *d = u64::from(x);
            }
        }
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
    ///
    /// # Panics
    /// If `B` is not the shape's record width (a programming error).
    pub fn encode<const B: usize>(&mut self, mut record: impl FnMut(usize) -> [u8; B]) {
        let shape = self.shape;
        assert_eq!(B, shape.record_bytes, "records of the shape's width");
        let params = shape.params;
        let (dim0, num_per) = (1usize << params.db_dim_1, 1usize << params.db_dim_2);
        let items = dim0 * num_per;
        let mut poly = ItemPoly::new(params);
        let out = self.data.as_mut_slice();
        for trial in 0..TRIALS {
            let slice = &mut out[trial * POLY_LEN * items..(trial + 1) * POLY_LEN * items];
            for ii in 0..num_per {
                for j in 0..dim0 {
                    let packed = poly.encode(shape, j * num_per + ii, trial, &mut record);
                    // [z block][ii][j][z in block].
                    let at = ii * dim0 + j;
                    for (zb, run) in packed.chunks_exact(ZW).enumerate() {
                        slice[(zb * items + at) * ZW..][..ZW].copy_from_slice(run);
                    }
                }
            }
        }
    }
}

/// One plaintext polynomial of an item, lifted and NTT'd, with its buffers.
struct ItemPoly {
    ntt: &'static ntt::Ntt,
    /// `p/2`, and `q_c − p` for each CRT prime: the centred lift of a byte b is b for
    /// `b ≤ p/2`, else `q_c − p + b` (as `spiral-rs`'s `recenter_mod`, reduced per prime).
    half: u32,
    up: [u32; 2],
    a: [[u32; POLY_LEN]; 2],
    packed: [u64; POLY_LEN],
}

impl ItemPoly {
    fn new(params: &Params) -> ItemPoly {
        let ntt = ntt_tables(params);
        let p = params.pt_modulus as u32;
        ItemPoly {
            ntt,
            half: p / 2,
            up: [ntt.modulus(0) - p, ntt.modulus(1) - p],
            a: [[0; POLY_LEN]; 2],
            packed: [0; POLY_LEN],
        }
    }

    /// Plaintext polynomial `trial` of item `item` (its 2048 / B records from `record`, zero beyond
    /// the shape's records) in the NTT domain, both CRT residues packed per coefficient (low
    /// and high 32 bits).
    fn encode<const B: usize>(
        &mut self,
        shape: Shape,
        item: usize,
        trial: usize,
        record: &mut impl FnMut(usize) -> [u8; B],
    ) -> &[u64; POLY_LEN] {
        let first = item * shape.records_per_item() + trial * shape.records_per_poly();
        let (half, [up0, up1]) = (self.half, self.up);
        let [a0, a1] = &mut self.a;
        let chunks = a0.chunks_exact_mut(B).zip(a1.chunks_exact_mut(B));
        for (r, (c0, c1)) in chunks.enumerate() {
            let x = first + r;
            let bytes = if x < shape.records { record(x) } else { [0; B] };
            for ((l0, l1), b) in c0.iter_mut().zip(c1.iter_mut()).zip(bytes) {
                let (b, neg) = (u32::from(b), u32::from(u32::from(b) > half));
                *l0 = b + up0 * neg;
                *l1 = b + up1 * neg;
            }
        }
        self.ntt.forward(0, a0);
        self.ntt.forward(1, a1);
        for ((o, &x0), &x1) in self.packed.iter_mut().zip(a0.iter()).zip(a1.iter()) {
            *o = u64::from(x0) | (u64::from(x1) << 32);
        }
        &self.packed
    }
}

/// The NTT tables (the same for every parameter set here: ring dimension 2048 and the same two
/// CRT primes), made once.
fn ntt_tables(params: &Params) -> &'static ntt::Ntt {
    static TABLES: OnceLock<ntt::Ntt> = OnceLock::new();
    let t = TABLES.get_or_init(|| ntt::Ntt::new(params));
    debug_assert!((0..t.primes()).all(|c| u64::from(t.modulus(c)) == params.moduli[c]));
    t
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn inner_products_agree_with_the_scalar_sums() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let dim0 = 256;
        // Residues below 2^28 in both halves: the largest sums the kernel must hold.
        let mut word = || rng.random_range(0..1u64 << 28) | (rng.random_range(0..1u64 << 28) << 32);
        let db: Vec<u64> = (0..dim0 * ZW).map(|_| word()).collect();
        let q: Vec<u64> = (0..dim0 * 2 * ZW).map(|_| word()).collect();
        assert_eq!(inner_products(&db, &q), inner_products_scalar(&db, &q));
    }

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
