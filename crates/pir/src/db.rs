//! The replicated database: fixed-size records, their split into field-sized chunks
//! (spec §7, "large entries"), the file format, and the description servers announce.
//!
//! # Chunks (spec §4.3, §11 P6)
//! A record of `k` bytes is read as `m = ⌈k/8⌉` little-endian 64-bit words (the last one
//! zero-padded). The field has p = 2^64 − 59 < 2^64, so a word w may not fit; since w < 2p,
//! `w = (w mod p) + p·[w ≥ p]`. The servers therefore hold, per record, the m reduced words
//! (chunk databases D_0..D_{m−1}) and, only if some word of the database is ≥ p,
//! `⌈m/63⌉` mask chunks whose bit `j mod 63` of mask `⌊j/63⌋` is the overflow bit of word j.
//! Mask chunks are stored sparsely (only the records with an overflowing word), so they cost
//! nothing for typical data and stay exact for any data. One DPF and one α serve all chunks;
//! the client checks the MAC on each.
//!
//! # File format (version 1)
//! | offset | field |
//! | --- | --- |
//! | 0 | magic `DORAMPIR` (8 bytes) |
//! | 8 | version, u32 LE = 1 |
//! | 12 | record size in bytes, u32 LE, 1..=2^20 |
//! | 16 | record count, u64 LE, 1..=2^28 |
//! | 24 | digest (32 bytes) |
//! | 56 | the records, back to back |
//!
//! The digest is BLAKE3 of `"doram-pir database v1"`, the record size (u32 LE), the count
//! (u64 LE) and the records; servers announce it so that clients (and operators) can tell
//! database versions apart. Reading a file recomputes and checks it.
//!
//! The description a server announces ([`DbInfo`]) also carries the root of a Merkle tree over
//! the records ([`crate::merkle`]), against which the client checks a record it receives in
//! the clear.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use doram_field::Fp64;

use crate::PirError;
use crate::codec::{Reader, Writer};
use crate::dpf::MAX_DOMAIN_BITS;

/// File magic.
pub const MAGIC: &[u8; 8] = b"DORAMPIR";
/// File format version.
pub const VERSION: u32 = 1;
/// Header length in bytes.
pub const HEADER_BYTES: usize = 56;
/// Largest record size (1 MiB).
pub const MAX_RECORD_BYTES: usize = 1 << 20;
/// Overflow bits per mask chunk (a mask must stay below p).
const MASK_BITS: usize = 63;
const DIGEST_CONTEXT: &[u8] = b"doram-pir database v1";

/// What a server announces about its database; all honest servers announce the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DbInfo {
    /// The database digest (see the module documentation).
    pub digest: [u8; 32],
    /// Bytes per record.
    pub record_size: u32,
    /// Number of records.
    pub count: u64,
    /// n: the DPF domain is 2^n ≥ count.
    pub domain_bits: u8,
    /// Number of mask chunks (0 when no word of the database is ≥ p).
    pub mask_chunks: u16,
    /// The root of the Merkle tree over the records ([`crate::merkle`]).
    pub root: [u8; 32],
}

/// Encoded size of a [`DbInfo`].
pub const DB_INFO_BYTES: usize = 79;

impl DbInfo {
    /// Words (value chunks) per record.
    pub fn words(&self) -> usize {
        (self.record_size as usize).div_ceil(8)
    }

    /// All chunks per record: words and mask chunks.
    pub fn chunks(&self) -> usize {
        self.words() + usize::from(self.mask_chunks)
    }

    pub(crate) fn put(&self, w: &mut Writer) {
        w.bytes(&self.digest)
            .u32(self.record_size)
            .u64(self.count)
            .u8(self.domain_bits)
            .u16(self.mask_chunks)
            .bytes(&self.root);
    }

    pub(crate) fn get(r: &mut Reader<'_>) -> Result<DbInfo, PirError> {
        let mut digest = [0u8; 32];
        digest.copy_from_slice(r.take(32)?);
        let info = DbInfo {
            digest,
            record_size: r.u32()?,
            count: r.u64()?,
            domain_bits: r.u8()?,
            mask_chunks: r.u16()?,
            root: {
                let mut root = [0u8; 32];
                root.copy_from_slice(r.take(32)?);
                root
            },
        };
        let words = info.words();
        let ok = (1..=MAX_RECORD_BYTES).contains(&(info.record_size as usize))
            && info.count >= 1
            && info.count <= 1u64 << MAX_DOMAIN_BITS
            && info.domain_bits == domain_bits_for(info.count)
            && (info.mask_chunks == 0
                || usize::from(info.mask_chunks) == words.div_ceil(MASK_BITS));
        if !ok {
            return Err(r.err("inconsistent database description"));
        }
        Ok(info)
    }
}

/// n = max(1, ⌈log2 count⌉).
pub fn domain_bits_for(count: u64) -> u8 {
    let n = 64 - count.saturating_sub(1).leading_zeros();
    n.max(1) as u8
}

/// A database of fixed-size records, prepared for the online inner products.
#[derive(Clone, Debug)]
pub struct Database {
    info: DbInfo,
    /// 2^n rows of `words` reduced words each (rows ≥ count are zero).
    data: Vec<u64>,
    /// Records with an overflowing word, ascending.
    over_rows: Vec<u32>,
    /// `mask_chunks` masks per entry of `over_rows`.
    over_masks: Vec<u64>,
    /// The Merkle tree over the records.
    tree: Arc<crate::merkle::Tree>,
}

/// The records as rows of `⌈record_size/8⌉` words of F_p64 (`rows` rows, zero-padded): a
/// little-endian 8-byte word at or above the modulus is stored minus the modulus, and its row
/// and position are returned so the client can add the modulus back.
#[allow(clippy::type_complexity)]
fn reduce_words(
    bytes: &[u8],
    record_size: usize,
    rows: usize,
) -> (Vec<u64>, Vec<(u32, Vec<bool>)>) {
    let words = record_size.div_ceil(8);
    let mut data = vec![0u64; rows * words];
    let mut over: Vec<(u32, Vec<bool>)> = Vec::new();
    for (i, (rec, row)) in bytes
        .chunks_exact(record_size)
        .zip(data.chunks_exact_mut(words))
        .enumerate()
    {
        let mut flags: Option<Vec<bool>> = None;
        for (j, (chunk, slot)) in rec.chunks(8).zip(row.iter_mut()).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            let w = u64::from_le_bytes(w);
            if w >= Fp64::MODULUS {
                flags.get_or_insert_with(|| vec![false; words])[j] = true;
                *slot = w - Fp64::MODULUS;
            } else {
                *slot = w;
            }
        }
        if let Some(f) = flags {
            over.push((i as u32, f));
        }
    }
    (data, over)
}

/// The rows with words above the modulus and their flags packed `MASK_BITS` to a mask word;
/// the number of mask words per row (0 if no word of the database is above the modulus).
fn pack_over_flags(over: Vec<(u32, Vec<bool>)>, words: usize) -> (Vec<u32>, Vec<u64>, usize) {
    let mask_chunks = if over.is_empty() {
        0
    } else {
        words.div_ceil(MASK_BITS)
    };
    let mut over_rows = Vec::with_capacity(over.len());
    let mut over_masks = Vec::with_capacity(over.len() * mask_chunks);
    for (row, flags) in over {
        over_rows.push(row);
        for k in 0..mask_chunks {
            let mut m = 0u64;
            for (b, &f) in flags.iter().skip(k * MASK_BITS).take(MASK_BITS).enumerate() {
                m |= u64::from(f) << b;
            }
            over_masks.push(m);
        }
    }
    (over_rows, over_masks, mask_chunks)
}

impl Database {
    /// A database of `bytes.len() / record_size` records laid out back to back.
    pub fn from_bytes(record_size: usize, bytes: &[u8]) -> Result<Database, PirError> {
        if !(1..=MAX_RECORD_BYTES).contains(&record_size) {
            return Err(PirError::Database(format!(
                "record size {record_size} outside 1..={MAX_RECORD_BYTES}"
            )));
        }
        if bytes.is_empty() || !bytes.len().is_multiple_of(record_size) {
            return Err(PirError::Database(format!(
                "{} bytes are not a positive whole number of {record_size}-byte records",
                bytes.len()
            )));
        }
        let count = (bytes.len() / record_size) as u64;
        if count > 1u64 << MAX_DOMAIN_BITS {
            return Err(PirError::Database(format!(
                "{count} records exceed the limit of 2^{MAX_DOMAIN_BITS}"
            )));
        }
        let n = domain_bits_for(count);
        let words = record_size.div_ceil(8);
        let (data, over) = reduce_words(bytes, record_size, 1usize << n);
        let (over_rows, over_masks, mask_chunks) = pack_over_flags(over, words);
        let digest = digest(record_size as u32, count, bytes);
        let record = |i: u64| {
            let at = i as usize * record_size;
            bytes[at..at + record_size].to_vec()
        };
        let tree = crate::merkle::Tree::build(n, count, &record);
        Ok(Database {
            info: DbInfo {
                digest,
                record_size: record_size as u32,
                count,
                domain_bits: n,
                mask_chunks: mask_chunks as u16,
                root: tree.root(),
            },
            data,
            over_rows,
            over_masks,
            tree: Arc::new(tree),
        })
    }

    /// A database of 8-byte records holding `values` (little-endian).
    pub fn from_u64s(values: &[u64]) -> Result<Database, PirError> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Database::from_bytes(8, &bytes)
    }

    /// One record per line: each line's UTF-8 bytes, zero-padded to `record_size` (a longer
    /// line is an error). Line terminators are not part of the record.
    pub fn from_lines<I, S>(lines: I, record_size: usize) -> Result<Database, PirError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut bytes = Vec::new();
        for (k, line) in lines.into_iter().enumerate() {
            let l = line.as_ref().as_bytes();
            if l.len() > record_size {
                return Err(PirError::Database(format!(
                    "line {} has {} bytes, more than the record size {record_size}",
                    k + 1,
                    l.len()
                )));
            }
            bytes.extend_from_slice(l);
            bytes.resize(bytes.len() + record_size - l.len(), 0);
        }
        Database::from_bytes(record_size, &bytes)
    }

    /// Reads CSV text with one value per line (the first column; further columns are ignored,
    /// empty lines skipped): a decimal unsigned integer, stored little-endian, or `0x` followed
    /// by hexadecimal bytes in record order. Each value must fit `record_size` bytes and is
    /// zero-padded to it.
    pub fn from_csv<R: BufRead>(reader: R, record_size: usize) -> Result<Database, PirError> {
        let mut bytes = Vec::new();
        for (k, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| PirError::Database(format!("CSV line {}: {e}", k + 1)))?;
            let field = line.split(',').next().unwrap_or("").trim();
            if field.is_empty() {
                continue;
            }
            let bad = |why: &str| PirError::Database(format!("CSV line {}: {why}", k + 1));
            let rec: Vec<u8> = if let Some(hex) = field.strip_prefix("0x") {
                if hex.len() % 2 != 0 {
                    return Err(bad("odd number of hex digits"));
                }
                (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad("not hexadecimal"))?
            } else {
                let v: u128 = field.parse().map_err(|_| bad("not an unsigned integer"))?;
                let le = v.to_le_bytes();
                let len = 16 - (v.leading_zeros() / 8) as usize;
                le[..len].to_vec()
            };
            if rec.len() > record_size {
                return Err(bad("value does not fit the record size"));
            }
            bytes.extend_from_slice(&rec);
            bytes.resize(bytes.len() + record_size - rec.len(), 0);
        }
        Database::from_bytes(record_size, &bytes)
    }

    /// Reads a database file (see the module documentation), checking its digest.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Database, PirError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| PirError::Io {
            path: path.to_path_buf(),
            source: Arc::new(e),
        })?;
        Database::from_file_bytes(&bytes)
    }

    /// Parses the contents of a database file.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Database, PirError> {
        let mut r = Reader::new(bytes, "database file");
        if r.take(8)? != MAGIC {
            return Err(PirError::Database(
                "not a doram PIR database (bad magic)".into(),
            ));
        }
        let version = r.u32()?;
        if version != VERSION {
            return Err(PirError::Database(format!(
                "unsupported format version {version}"
            )));
        }
        let record_size = r.u32()? as usize;
        let count = r.u64()?;
        let mut digest = [0u8; 32];
        digest.copy_from_slice(r.take(32)?);
        let body = bytes.get(HEADER_BYTES..).unwrap_or_default();
        let expected = (record_size as u64).checked_mul(count);
        if expected != Some(body.len() as u64) {
            return Err(PirError::Database(format!(
                "header announces {count} records of {record_size} bytes, the file holds {} bytes of records",
                body.len()
            )));
        }
        let db = Database::from_bytes(record_size, body)?;
        if db.info.digest != digest {
            return Err(PirError::Database(
                "digest mismatch: the file is corrupt".into(),
            ));
        }
        Ok(db)
    }

    /// The file representation (see the module documentation).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let body = self.records_bytes();
        let mut w = Writer::with_capacity(HEADER_BYTES + body.len());
        w.bytes(MAGIC)
            .u32(VERSION)
            .u32(self.info.record_size)
            .u64(self.info.count)
            .bytes(&self.info.digest)
            .bytes(&body);
        w.0
    }

    /// Writes the database to `path`.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), PirError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_file_bytes()).map_err(|e| PirError::Io {
            path: path.to_path_buf(),
            source: Arc::new(e),
        })
    }

    fn records_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.info.count as usize * self.record_size());
        for i in 0..self.info.count {
            out.extend_from_slice(&self.record_unchecked(i as usize));
        }
        out
    }

    /// What servers announce.
    pub fn info(&self) -> DbInfo {
        self.info
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.info.count
    }

    /// Whether the database is empty (never: a database has at least one record).
    pub fn is_empty(&self) -> bool {
        self.info.count == 0
    }

    /// Bytes per record.
    pub fn record_size(&self) -> usize {
        self.info.record_size as usize
    }

    /// The digest.
    pub fn digest(&self) -> [u8; 32] {
        self.info.digest
    }

    /// Record `i`, or `None` if out of range.
    pub fn record(&self, i: u64) -> Option<Vec<u8>> {
        (i < self.info.count).then(|| self.record_unchecked(i as usize))
    }

    /// Record `i` with its authentication path in the Merkle tree, or `None` if out of range.
    pub fn record_with_path(&self, i: u64) -> Option<(Vec<u8>, Vec<crate::merkle::Hash>)> {
        let rec = self.record(i)?;
        let get = |x: u64| self.record_unchecked(x as usize);
        Some((rec, self.tree.path(i, self.info.count, &get)))
    }

    fn record_unchecked(&self, i: usize) -> Vec<u8> {
        let words = self.info.words();
        let row = &self.data[i * words..(i + 1) * words];
        let masks = self
            .over_rows
            .binary_search(&(i as u32))
            .ok()
            .map(|k| &self.over_masks[k * self.mask_chunks()..(k + 1) * self.mask_chunks()]);
        let mut out = Vec::with_capacity(words * 8);
        for (j, &w) in row.iter().enumerate() {
            let over = masks.is_some_and(|m| m[j / MASK_BITS] >> (j % MASK_BITS) & 1 == 1);
            let w = if over { w + Fp64::MODULUS } else { w };
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.truncate(self.record_size());
        out
    }

    pub(crate) fn rows(&self) -> &[u64] {
        &self.data
    }

    pub(crate) fn mask_chunks(&self) -> usize {
        usize::from(self.info.mask_chunks)
    }

    pub(crate) fn overflow(&self) -> (&[u32], &[u64]) {
        (&self.over_rows, &self.over_masks)
    }
}

fn digest(record_size: u32, count: u64, records: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(DIGEST_CONTEXT);
    h.update(&record_size.to_le_bytes());
    h.update(&count.to_le_bytes());
    h.update(records);
    *h.finalize().as_bytes()
}

/// The client's reconstruction of a record from the opened chunk values z_0..z_{m'−1}
/// (words, then masks). `None` if the values are not a valid encoding (impossible when the
/// MAC check passed against honest key holders).
pub(crate) fn reconstruct_record(info: &DbInfo, z: &[Fp64]) -> Option<Vec<u8>> {
    let words = info.words();
    if z.len() != info.chunks() {
        return None;
    }
    let masks = &z[words..];
    for (k, m) in masks.iter().enumerate() {
        let used = (words - k * MASK_BITS).min(MASK_BITS);
        if m.value() >> used != 0 {
            return None;
        }
    }
    let mut out = Vec::with_capacity(words * 8);
    for (j, v) in z[..words].iter().enumerate() {
        let over = !masks.is_empty() && masks[j / MASK_BITS].value() >> (j % MASK_BITS) & 1 == 1;
        let w = if over {
            v.value().checked_add(Fp64::MODULUS)?
        } else {
            v.value()
        };
        out.extend_from_slice(&w.to_le_bytes());
    }
    let rs = info.record_size as usize;
    if out[rs..].iter().any(|&b| b != 0) {
        return None;
    }
    out.truncate(rs);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_bits() {
        assert_eq!(domain_bits_for(1), 1);
        assert_eq!(domain_bits_for(2), 1);
        assert_eq!(domain_bits_for(3), 2);
        assert_eq!(domain_bits_for(1 << 20), 20);
        assert_eq!(domain_bits_for((1 << 20) + 1), 21);
    }

    #[test]
    fn overflowing_words_round_trip() {
        let p = Fp64::MODULUS;
        let values = [0, 1, p - 1, p, p + 1, u64::MAX, 42];
        let db = Database::from_u64s(&values).expect("db");
        assert_eq!(db.info().mask_chunks, 1);
        for (i, v) in values.iter().enumerate() {
            assert_eq!(db.record(i as u64).expect("in range"), v.to_le_bytes());
        }
        let plain = Database::from_u64s(&[1, 2, 3]).expect("db");
        assert_eq!(plain.info().mask_chunks, 0);
        assert!(db.record(7).is_none());
    }

    #[test]
    fn file_round_trip_and_corruption() {
        let db = Database::from_lines(["alpha", "beta", "", "a longer line"], 13).expect("db");
        let bytes = db.to_file_bytes();
        let back = Database::from_file_bytes(&bytes).expect("reads");
        assert_eq!(back.info(), db.info());
        assert_eq!(back.record(1).expect("record")[..4], *b"beta");
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(
            Database::from_file_bytes(&bad),
            Err(PirError::Database(_))
        ));
        assert!(Database::from_file_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(Database::from_file_bytes(&bytes[..20]).is_err());
        assert!(Database::from_lines(["too long for it"], 4).is_err());
        let other = Database::from_lines(["alpha", "beta", "", "a longer linE"], 13).expect("db");
        assert_ne!(other.digest(), db.digest());
    }

    #[test]
    fn csv_values() {
        let text = "1,x\n0xff00\n\n18446744073709551615\n";
        let db = Database::from_csv(text.as_bytes(), 8).expect("csv");
        assert_eq!(db.len(), 3);
        assert_eq!(db.record(0).expect("r"), 1u64.to_le_bytes());
        assert_eq!(db.record(1).expect("r")[..2], [0xff, 0x00]);
        assert_eq!(db.record(2).expect("r"), u64::MAX.to_le_bytes());
        assert!(Database::from_csv("nope\n".as_bytes(), 8).is_err());
        assert!(Database::from_csv("0x0102030405060708090a\n".as_bytes(), 8).is_err());
    }
}

#[cfg(test)]
mod info_tests {
    use super::*;

    #[test]
    fn descriptions_are_bounded() {
        let db = Database::from_u64s(&[1, 2, 3]).expect("db");
        let mut w = Writer::default();
        db.info().put(&mut w);
        let mut r = Reader::new(&w.0, "info");
        assert_eq!(DbInfo::get(&mut r).expect("valid"), db.info());
        for (off, bytes) in [
            (36usize, u64::MAX.to_le_bytes().to_vec()), // count
            (44, vec![9]),                              // domain bits
            (32, 0u32.to_le_bytes().to_vec()),          // record size
            (45, 7u16.to_le_bytes().to_vec()),          // mask chunks
        ] {
            let mut bad = w.0.clone();
            bad[off..off + bytes.len()].copy_from_slice(&bytes);
            let mut r = Reader::new(&bad, "info");
            assert!(DbInfo::get(&mut r).is_err(), "offset {off}");
        }
    }
}
