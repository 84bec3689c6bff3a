//! Cuckoo hashing with three hash functions, and the matching "simple hashing" of a whole domain,
//! as used by the multi-point DPF of Schoppmann, Gascón, Reichert and Raykova (CCS 2019, §5).
//!
//! * [`num_buckets`] picks the table size for `t` items so that insertion fails with probability
//!   about 2^−40 (statistical security 40), by the formula of cryptoTools' `CuckooIndex` (see
//!   there).
//! * [`CuckooHasher`] holds the three hash functions, all derived from one AES-128 call on the
//!   item under a random hash key, [`CuckooHasher::insert`] places `t` items so that every bucket
//!   holds at most one item (random-walk insertion with a bounded number of evictions, returning
//!   [`CuckooError`] on failure), and [`CuckooHasher::simple_hash`] puts every point of a domain
//!   `[0, n)` into each of its (distinct) buckets, in increasing order.
//!
//! An item `x` placed in bucket `b` by cuckoo hashing is therefore always found in bucket `b` of
//! the simple-hash table of any domain containing `x`, at position
//! [`SimpleHashTable::position`]`(b, x)`.

use crate::aes::{Aes128Cipher, AesKernel, BATCH, WithAes, batches, batches_mut};
use doram_core::Seed;

/// Number of hash functions.
pub const NUM_HASHES: usize = 3;

/// The statistical security parameter the default table size targets.
pub const STATISTICAL_SECURITY: u32 = 40;

/// Bits of the AES output used for each hash function (3 × 42 = 126 ≤ 128).
const HASH_BITS: u32 = 42;
const HASH_MASK: u64 = (1u64 << HASH_BITS) - 1;

/// Why cuckoo or simple hashing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CuckooError {
    /// More items than buckets.
    #[error("{items} items do not fit into {buckets} buckets")]
    TooManyItems {
        /// Items to insert.
        items: usize,
        /// Buckets available.
        buckets: usize,
    },
    /// An item could not be placed within the eviction bound (a cycle, in all likelihood).
    #[error("cuckoo insertion of item {item_index} failed after {evictions} evictions")]
    InsertionFailed {
        /// Index (into the input) of the item being inserted when the bound was hit.
        item_index: usize,
        /// The eviction bound.
        evictions: usize,
    },
    /// Simple hashing supports domains of at most 2^32 points (positions are stored as `u32`).
    #[error("domain of {domain_size} points is larger than 2^32")]
    DomainTooLarge {
        /// The requested domain size.
        domain_size: usize,
    },
    /// A queried point does not hash to the queried bucket, or lies outside the domain.
    #[error("point {point} is not in bucket {bucket} of the domain")]
    NotInBucket {
        /// The point.
        point: u64,
        /// The bucket.
        bucket: usize,
    },
}

/// The error function, accurate to about 1e−15 everywhere (pure arithmetic plus one `exp`, so
/// that every party computes the same table size).
fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x >= 6.0 {
        return 1.0;
    }
    let two_over_sqrt_pi = 2.0 / std::f64::consts::PI.sqrt();
    if x < 2.5 {
        // Maclaurin series: erf(x) = 2/√π · Σ (−1)^k x^(2k+1) / (k! (2k+1)).
        let x2 = x * x;
        let mut term = x; // (−1)^k x^(2k+1) / k!
        let mut sum = x;
        for k in 1..200 {
            term *= -x2 / k as f64;
            let t = term / (2 * k + 1) as f64;
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        two_over_sqrt_pi * sum
    } else {
        // Continued fraction: erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))).
        let mut f = x;
        for k in (1..=60).rev() {
            f = x + (k as f64 / 2.0) / f;
        }
        1.0 - (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
    }
}

/// The number of buckets for cuckoo hashing `num_items` items with 3 hash functions and no stash
/// at statistical security `stat_sec`.
///
/// This is the experimentally fitted formula of cryptoTools' `CuckooIndex::selectParams` (stash
/// size 0, 3 hash functions): with `ℓ = log2(num_items)`,
///
/// ```text
/// a = 123.5 / 2 · (1 + erf((ℓ − 6.3)  / (2.3  · √2)))        (slope)
/// b = −130  / 2 · (1 + erf((ℓ − 6.45) / (2.18 · √2))) − ℓ    (intercept)
/// e = (stat_sec − b) / a                                      (expansion factor)
/// buckets = ⌈e · num_items⌉
/// ```
///
/// (cryptoTools truncates `e · n`; rounding up only adds room, and the result is never below
/// `num_items`.) For `stat_sec = 40` this gives, for `t` items: 1 → 106 buckets, 2 → 64,
/// 16 → 50, 64 → 117, 256 → 396, 2^10 → 1519 (e = 1.48), 2^16 → 98 703, 2^20 → 1 613 194
/// (e = 1.54); for large `t`, `e → (170 + ℓ) / 123.5`. Zero items need zero buckets.
pub fn num_buckets_for(num_items: usize, stat_sec: u32) -> usize {
    if num_items == 0 {
        return 0;
    }
    let l = (num_items as f64).log2();
    let sqrt2 = std::f64::consts::SQRT_2;
    let a = 123.5 / 2.0 * (1.0 + erf((l - 6.3) / (2.3 * sqrt2)));
    let b = -130.0 / 2.0 * (1.0 + erf((l - 6.45) / (2.18 * sqrt2))) - l;
    let e = (f64::from(stat_sec) - b) / a;
    let buckets = (e * num_items as f64).ceil() as usize;
    buckets.max(num_items)
}

/// [`num_buckets_for`] at statistical security [`STATISTICAL_SECURITY`] (40).
pub fn num_buckets(num_items: usize) -> usize {
    num_buckets_for(num_items, STATISTICAL_SECURITY)
}

/// The distinct buckets among an item's three hashes, in hash-function order: `(buckets, count)`
/// with `buckets[..count]` meaningful.
#[inline]
pub fn distinct(h: [u32; NUM_HASHES]) -> ([u32; NUM_HASHES], usize) {
    let mut out = [h[0]; NUM_HASHES];
    let mut k = 1;
    if h[1] != h[0] {
        out[k] = h[1];
        k += 1;
    }
    if h[2] != h[0] && h[2] != h[1] {
        out[k] = h[2];
        k += 1;
    }
    (out, k)
}

/// [`CuckooHasher::hash_many`]'s loop.
struct HashMany<'a> {
    hasher: &'a CuckooHasher,
    xs: &'a [u64],
    out: &'a mut [[u32; NUM_HASHES]],
}

impl WithAes for HashMany<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        let (xc, xr) = batches(self.xs);
        let (oc, or) = batches_mut(self.out);
        for (x, o) in xc.zip(oc) {
            let mut blk = x.map(u128::from);
            aes.encrypt8(&mut blk);
            for (oi, c) in o.iter_mut().zip(blk) {
                *oi = self.hasher.split(c);
            }
        }
        for (x, o) in xr.iter().zip(or.iter_mut()) {
            *o = self.hasher.split(aes.encrypt(u128::from(*x)));
        }
    }
}

/// [`CuckooHasher::hash_range`]'s loop.
struct HashRange<'a> {
    hasher: &'a CuckooHasher,
    start: u64,
    out: &'a mut [[u32; NUM_HASHES]],
}

impl WithAes for HashRange<'_> {
    type Output = ();

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) {
        let (oc, or) = batches_mut(self.out);
        let mut x = u128::from(self.start);
        for o in oc {
            let mut blk: [u128; BATCH] = std::array::from_fn(|i| x + i as u128);
            x += BATCH as u128;
            aes.encrypt8(&mut blk);
            for (oi, c) in o.iter_mut().zip(blk) {
                *oi = self.hasher.split(c);
            }
        }
        for o in or {
            *o = self.hasher.split(aes.encrypt(x));
            x += 1;
        }
    }
}

/// Three hash functions `[0, 2^64) → [0, B)` derived from one AES-128 call under a hash key.
///
/// `h_j(x)` for `j = 0, 1, 2` takes bits `42j .. 42j + 42` of `c = AES_key(x)` (with `x` as a
/// little-endian block) and maps them to a bucket with a multiply-shift, `⌊c_j · B / 2^42⌋`; the
/// bias against an exactly uniform bucket is below `B / 2^42` per bucket.
#[derive(Clone, Debug)]
pub struct CuckooHasher {
    key: Seed,
    cipher: Aes128Cipher,
    num_buckets: u32,
}

impl CuckooHasher {
    /// The hash functions with key `key` into `num_buckets` buckets.
    ///
    /// # Panics
    /// If `num_buckets` is 0 or above `u32::MAX` (protocol parameters, not peer input).
    pub fn new(key: Seed, num_buckets: usize) -> Self {
        assert!(num_buckets > 0, "cuckoo hashing needs at least one bucket");
        let num_buckets = u32::try_from(num_buckets).expect("at most 2^32 - 1 buckets");
        CuckooHasher {
            key,
            cipher: Aes128Cipher::new(key.0),
            num_buckets,
        }
    }

    /// The hash key.
    pub fn key(&self) -> Seed {
        self.key
    }

    /// The number of buckets `B`.
    pub fn num_buckets(&self) -> usize {
        self.num_buckets as usize
    }

    #[inline(always)]
    fn split(&self, c: u128) -> [u32; NUM_HASHES] {
        let b = u64::from(self.num_buckets);
        std::array::from_fn(|j| {
            let cj = ((c >> (HASH_BITS * j as u32)) as u64) & HASH_MASK;
            ((u128::from(cj) * u128::from(b)) >> HASH_BITS) as u32
        })
    }

    /// The buckets `[h_0(x), h_1(x), h_2(x)]` (not necessarily distinct).
    pub fn hash(&self, x: u64) -> [u32; NUM_HASHES] {
        self.split(self.cipher.encrypt(u128::from(x)))
    }

    /// The hashes of `xs`, batched.
    ///
    /// # Panics
    /// If `out.len() != xs.len()`.
    pub fn hash_many(&self, xs: &[u64], out: &mut [[u32; NUM_HASHES]]) {
        assert_eq!(xs.len(), out.len(), "one output per item");
        self.cipher.with_aes(HashMany {
            hasher: self,
            xs,
            out,
        })
    }

    /// The hashes of the consecutive items `start, start + 1, …, start + out.len() − 1`.
    pub fn hash_range(&self, start: u64, out: &mut [[u32; NUM_HASHES]]) {
        self.cipher.with_aes(HashRange {
            hasher: self,
            start,
            out,
        })
    }

    /// The eviction bound of [`insert`](Self::insert) for `num_items` items: each insertion may
    /// evict at most `100 + num_items` times before giving up.
    pub fn max_evictions(num_items: usize) -> usize {
        100 + num_items
    }

    /// Cuckoo-hashes `items` into the buckets: every item lands in one of its three buckets and
    /// every bucket holds at most one item.
    ///
    /// Insertion is the random walk of cryptoTools' `CuckooIndex`: an item first tries `h_0`;
    /// whoever it evicts moves on to its next hash function (cyclically). Items should be
    /// distinct (a repeated item occupies several buckets).
    pub fn insert(&self, items: &[u64]) -> Result<CuckooTable, CuckooError> {
        let nb = self.num_buckets();
        if items.len() > nb {
            return Err(CuckooError::TooManyItems {
                items: items.len(),
                buckets: nb,
            });
        }
        let mut hashes = vec![[0u32; NUM_HASHES]; items.len()];
        self.hash_many(items, &mut hashes);
        // bucket -> (item index, hash function index used)
        let mut table: Vec<Option<(u32, u8)>> = vec![None; nb];
        let bound = Self::max_evictions(items.len());
        for start in 0..items.len() {
            let mut cur = start as u32;
            let mut hidx = 0u8;
            let mut evictions = 0;
            loop {
                let b = hashes[cur as usize][usize::from(hidx)] as usize;
                match table[b].replace((cur, hidx)) {
                    None => break,
                    Some((other, other_h)) => {
                        evictions += 1;
                        if evictions > bound {
                            return Err(CuckooError::InsertionFailed {
                                item_index: start,
                                evictions: bound,
                            });
                        }
                        cur = other;
                        hidx = (other_h + 1) % NUM_HASHES as u8;
                    }
                }
            }
        }
        let mut placement = vec![(0u32, 0u8); items.len()];
        for (b, slot) in table.iter().enumerate() {
            if let Some((i, h)) = slot {
                placement[*i as usize] = (b as u32, *h);
            }
        }
        Ok(CuckooTable { table, placement })
    }

    fn check_domain(domain_size: usize) -> Result<(), CuckooError> {
        if domain_size as u64 > 1u64 << 32 {
            Err(CuckooError::DomainTooLarge { domain_size })
        } else {
            Ok(())
        }
    }

    /// Calls `f(start, hashes)` for consecutive chunks of the domain `[0, domain_size)`.
    fn for_each_chunk(&self, domain_size: usize, mut f: impl FnMut(u64, &[[u32; NUM_HASHES]])) {
        const CHUNK: usize = 1024;
        let mut buf = [[0u32; NUM_HASHES]; CHUNK];
        let mut start = 0usize;
        while start < domain_size {
            let len = CHUNK.min(domain_size - start);
            self.hash_range(start as u64, &mut buf[..len]);
            f(start as u64, &buf[..len]);
            start += len;
        }
    }

    /// The size of every bucket of the simple-hash table of `[0, domain_size)`, without building
    /// the table.
    pub fn bucket_sizes(&self, domain_size: usize) -> Result<Vec<u32>, CuckooError> {
        Ok(self.bucket_sizes_and_positions(domain_size, &[])?.0)
    }

    /// Bucket sizes of the simple-hash table of `[0, domain_size)`, and for each query
    /// `(point, bucket)` the position of `point` in that bucket, in one pass over the domain
    /// and without building the table.
    pub fn bucket_sizes_and_positions(
        &self,
        domain_size: usize,
        queries: &[(u64, usize)],
    ) -> Result<(Vec<u32>, Vec<u32>), CuckooError> {
        Self::check_domain(domain_size)?;
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_unstable_by_key(|&i| queries[i].0);
        if let Some(&last) = order.last() {
            let (p, b) = queries[last];
            if p >= domain_size as u64 {
                return Err(CuckooError::NotInBucket {
                    point: p,
                    bucket: b,
                });
            }
        }
        let mut sizes = vec![0u32; self.num_buckets()];
        let mut positions = vec![0u32; queries.len()];
        let mut q = 0;
        self.for_each_chunk(domain_size, |start, hs| {
            for (k, h) in hs.iter().enumerate() {
                let x = start + k as u64;
                let (d, cnt) = distinct(*h);
                while q < order.len() && queries[order[q]].0 == x {
                    let b = queries[order[q]].1;
                    if d[..cnt].iter().all(|&db| db as usize != b) {
                        // Reported after the pass.
                        positions[order[q]] = u32::MAX;
                    } else {
                        positions[order[q]] = sizes[b];
                    }
                    q += 1;
                }
                for &b in &d[..cnt] {
                    sizes[b as usize] += 1;
                }
            }
        });
        for (i, &pos) in positions.iter().enumerate() {
            if pos == u32::MAX {
                let (point, bucket) = queries[i];
                return Err(CuckooError::NotInBucket { point, bucket });
            }
        }
        Ok((sizes, positions))
    }

    /// Simple hashing of the domain `[0, domain_size)`: every point goes into each of its
    /// distinct buckets; each bucket lists its points in increasing order.
    pub fn simple_hash(&self, domain_size: usize) -> Result<SimpleHashTable, CuckooError> {
        Self::check_domain(domain_size)?;
        let nb = self.num_buckets();
        let mut hashes = vec![[0u32; NUM_HASHES]; domain_size];
        let mut offsets = vec![0usize; nb + 1];
        for (start, chunk) in hashes.chunks_mut(1024).enumerate() {
            self.hash_range((start * 1024) as u64, chunk);
            for h in chunk.iter() {
                let (d, cnt) = distinct(*h);
                for &b in &d[..cnt] {
                    offsets[b as usize + 1] += 1;
                }
            }
        }
        for b in 0..nb {
            offsets[b + 1] += offsets[b];
        }
        let mut fill = offsets[..nb].to_vec();
        let mut points = vec![0u32; offsets[nb]];
        for (x, h) in hashes.iter().enumerate() {
            let (d, cnt) = distinct(*h);
            for &b in &d[..cnt] {
                points[fill[b as usize]] = x as u32;
                fill[b as usize] += 1;
            }
        }
        Ok(SimpleHashTable {
            domain_size,
            offsets,
            points,
        })
    }
}

/// The result of cuckoo hashing: at most one item per bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuckooTable {
    table: Vec<Option<(u32, u8)>>,
    placement: Vec<(u32, u8)>,
}

impl CuckooTable {
    /// The number of buckets.
    pub fn num_buckets(&self) -> usize {
        self.table.len()
    }

    /// The number of items placed.
    pub fn num_items(&self) -> usize {
        self.placement.len()
    }

    /// The index (into the inserted slice) of the item in bucket `b`, if any.
    pub fn item_in(&self, b: usize) -> Option<usize> {
        self.table[b].map(|(i, _)| i as usize)
    }

    /// The bucket holding item `i`.
    pub fn bucket_of(&self, i: usize) -> usize {
        self.placement[i].0 as usize
    }

    /// Which hash function (0, 1 or 2) placed item `i`.
    pub fn hash_index_of(&self, i: usize) -> usize {
        usize::from(self.placement[i].1)
    }
}

/// Simple hashing of a domain `[0, n)` into `B` buckets: bucket `b` lists, in increasing order
/// and without repetition, every point `x < n` with `b ∈ {h_0(x), h_1(x), h_2(x)}`. Stored as
/// one array of points with `B + 1` offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleHashTable {
    domain_size: usize,
    offsets: Vec<usize>,
    points: Vec<u32>,
}

impl SimpleHashTable {
    /// The domain size `n`.
    pub fn domain_size(&self) -> usize {
        self.domain_size
    }

    /// The number of buckets `B`.
    pub fn num_buckets(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The points of bucket `b`, in increasing order.
    pub fn bucket(&self, b: usize) -> &[u32] {
        &self.points[self.offsets[b]..self.offsets[b + 1]]
    }

    /// The size of bucket `b`.
    pub fn bucket_len(&self, b: usize) -> usize {
        self.offsets[b + 1] - self.offsets[b]
    }

    /// Where bucket `b` starts in [`all_points`](Self::all_points); `offset(B)` is the total.
    pub fn offset(&self, b: usize) -> usize {
        self.offsets[b]
    }

    /// All buckets back to back.
    pub fn all_points(&self) -> &[u32] {
        &self.points
    }

    /// The position of `x` in bucket `b`, if `x` hashes to `b`.
    pub fn position(&self, b: usize, x: u64) -> Option<usize> {
        let x = u32::try_from(x).ok()?;
        self.bucket(b).binary_search(&x).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    #[test]
    fn erf_reference_values() {
        // Values of erf from a high-precision reference.
        let cases = [
            (0.0, 0.0),
            (0.1, 0.1124629160182849),
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (-1.5, -0.9661051464753108),
            (2.0, 0.9953222650189527),
            (2.49, 0.9995707121322661),
            (2.51, 0.9996142945182758),
            (3.0, 0.9999779095030014),
            (4.0, 0.9999999845827421),
            (5.5, 0.9999999999999927),
        ];
        for (x, y) in cases {
            assert!((erf(x) - y).abs() < 1e-14, "erf({x}) = {} ≠ {y}", erf(x));
        }
    }

    #[test]
    fn bucket_counts() {
        assert_eq!(num_buckets(0), 0);
        // Expansion factors follow CuckooIndex's curve: large for tiny sets, → ~1.5 for big ones.
        let e = |t: usize| num_buckets(t) as f64 / t as f64;
        assert!(e(1) > 50.0 && e(1) < 200.0, "{}", e(1));
        assert!(e(16) > 2.5 && e(16) < 6.0, "{}", e(16));
        assert!(e(256) > 1.45 && e(256) < 1.7, "{}", e(256));
        assert!(e(1 << 10) > 1.4 && e(1 << 10) < 1.6, "{}", e(1 << 10));
        assert!(e(1 << 20) > 1.4 && e(1 << 20) < 1.7, "{}", e(1 << 20));
        // Never fewer buckets than items; the fitted curve is not monotone for tiny t (106
        // buckets for one item, 58 for two), but it is from a few dozen items on.
        for t in 1..3000 {
            assert!(num_buckets(t) >= t);
        }
        for t in 64..3000 {
            assert!(num_buckets(t + 1) >= num_buckets(t), "t = {t}");
        }
        for t in [
            1usize,
            2,
            4,
            8,
            16,
            32,
            64,
            128,
            256,
            1 << 10,
            1 << 12,
            1 << 16,
            1 << 20,
        ] {
            println!("t = {t}: {} buckets, e = {:.3}", num_buckets(t), e(t));
        }
        // Higher security, more buckets.
        assert!(num_buckets_for(1000, 60) > num_buckets(1000));
    }

    #[test]
    fn hashes_are_in_range_and_batched_consistently() {
        let h = CuckooHasher::new(Seed([7; 16]), 37);
        let xs: Vec<u64> = (0..100).map(|i| i * 7919 + 3).collect();
        let mut out = vec![[0u32; 3]; xs.len()];
        h.hash_many(&xs, &mut out);
        for (x, o) in xs.iter().zip(&out) {
            assert_eq!(*o, h.hash(*x));
            assert!(o.iter().all(|&b| b < 37));
        }
        let mut r = vec![[0u32; 3]; 21];
        h.hash_range(1000, &mut r);
        for (i, o) in r.iter().enumerate() {
            assert_eq!(*o, h.hash(1000 + i as u64));
        }
        // A different key gives different functions.
        let g = CuckooHasher::new(Seed([8; 16]), 37);
        assert!((0..20).any(|x| g.hash(x) != h.hash(x)));
    }

    #[test]
    fn hashes_look_uniform() {
        // 3 · 2^14 hashes into 16 buckets: each count is ≈ 3072 ± 53; allow 6 sd.
        let h = CuckooHasher::new(Seed([1; 16]), 16);
        let mut counts = [0usize; 16];
        let mut out = vec![[0u32; 3]; 1 << 14];
        h.hash_range(0, &mut out);
        for o in &out {
            for &b in o {
                counts[b as usize] += 1;
            }
        }
        for c in counts {
            assert!((c as f64 - 3072.0).abs() < 6.0 * 53.0, "{counts:?}");
        }
    }

    fn random_items(rng: &mut ChaCha12Rng, t: usize, below: u64) -> Vec<u64> {
        let mut v = Vec::with_capacity(t);
        while v.len() < t {
            let x = rng.random_range(0..below);
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    }

    #[test]
    fn every_item_placed_once() {
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        for t in [1usize, 2, 3, 10, 100, 1000, 5000] {
            let items = random_items(&mut rng, t, 1 << 40);
            let key = Seed::random(&mut rng);
            let h = CuckooHasher::new(key, num_buckets(t));
            let table = h.insert(&items).expect("cuckoo hashing succeeds");
            assert_eq!(table.num_items(), t);
            let mut seen = vec![false; t];
            for b in 0..table.num_buckets() {
                if let Some(i) = table.item_in(b) {
                    assert!(!seen[i], "item {i} twice");
                    seen[i] = true;
                    assert_eq!(table.bucket_of(i), b);
                    let hashes = h.hash(items[i]);
                    assert_eq!(hashes[table.hash_index_of(i)] as usize, b);
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn failure_is_an_error() {
        // Ten items, three buckets.
        let h = CuckooHasher::new(Seed([2; 16]), 3);
        let items: Vec<u64> = (0..10).collect();
        assert_eq!(
            h.insert(&items),
            Err(CuckooError::TooManyItems {
                items: 10,
                buckets: 3
            })
        );
        // Three items, two buckets.
        let h = CuckooHasher::new(Seed([3; 16]), 2);
        let r = h.insert(&[1, 2, 3]);
        assert!(matches!(r, Err(CuckooError::TooManyItems { .. })), "{r:?}");
        // A tight table: 40 items into 40 buckets fails (3-way cuckoo hashing tops out at a load
        // of ~0.92); every outcome is an error value, never a panic.
        let mut failures = 0;
        for k in 0..20u8 {
            let h = CuckooHasher::new(Seed([k; 16]), 40);
            let items: Vec<u64> = (0..40).map(|i| i * 1000 + u64::from(k)).collect();
            match h.insert(&items) {
                Err(CuckooError::InsertionFailed { evictions, .. }) => {
                    assert_eq!(evictions, CuckooHasher::max_evictions(40));
                    failures += 1;
                }
                Err(e) => panic!("unexpected {e}"),
                Ok(_) => {}
            }
        }
        assert!(failures > 10, "only {failures} failures");
    }

    #[test]
    fn simple_hash_consistency() {
        let mut rng = ChaCha12Rng::seed_from_u64(6);
        for (n, t) in [
            (1usize, 1usize),
            (7, 3),
            (100, 10),
            (1000, 64),
            (1 << 14, 300),
        ] {
            let h = CuckooHasher::new(Seed::random(&mut rng), num_buckets(t));
            let sh = h.simple_hash(n).expect("small domain");
            assert_eq!(sh.domain_size(), n);
            assert_eq!(sh.num_buckets(), h.num_buckets());
            // Every point appears exactly in its distinct buckets, buckets strictly increasing.
            let mut count = vec![0usize; n];
            for b in 0..sh.num_buckets() {
                let pts = sh.bucket(b);
                assert_eq!(pts.len(), sh.bucket_len(b));
                assert!(pts.windows(2).all(|w| w[0] < w[1]));
                for (pos, &x) in pts.iter().enumerate() {
                    assert!(h.hash(u64::from(x)).contains(&(b as u32)));
                    assert_eq!(sh.position(b, u64::from(x)), Some(pos));
                    count[x as usize] += 1;
                }
            }
            for (x, &c) in count.iter().enumerate() {
                let (_, k) = distinct(h.hash(x as u64));
                assert_eq!(c, k);
                for j in 0..NUM_HASHES {
                    let b = h.hash(x as u64)[j] as usize;
                    assert!(sh.position(b, x as u64).is_some());
                }
            }
            assert_eq!(sh.offset(sh.num_buckets()), sh.all_points().len());

            // Sizes and positions without the table agree with the table.
            let items = random_items(&mut rng, t.min(n), n as u64);
            let table = h.insert(&items).expect("cuckoo hashing succeeds");
            let queries: Vec<(u64, usize)> = items
                .iter()
                .enumerate()
                .map(|(i, &x)| (x, table.bucket_of(i)))
                .collect();
            let (sizes, positions) = h
                .bucket_sizes_and_positions(n, &queries)
                .expect("items are in their buckets");
            for (b, &size) in sizes.iter().enumerate() {
                assert_eq!(size as usize, sh.bucket_len(b));
            }
            for (i, &(x, b)) in queries.iter().enumerate() {
                assert_eq!(Some(positions[i] as usize), sh.position(b, x));
            }
            assert_eq!(h.bucket_sizes(n).expect("ok"), sizes);
        }
    }

    #[test]
    fn bad_queries_are_errors() {
        let h = CuckooHasher::new(Seed([4; 16]), 10);
        let x = 5u64;
        let hs = h.hash(x);
        let not_b = (0..10)
            .find(|b| !hs.contains(&(*b as u32)))
            .expect("10 > 3");
        assert_eq!(
            h.bucket_sizes_and_positions(100, &[(x, not_b)]),
            Err(CuckooError::NotInBucket {
                point: x,
                bucket: not_b
            })
        );
        assert!(
            h.bucket_sizes_and_positions(3, &[(x, hs[0] as usize)])
                .is_err()
        );
        assert!(matches!(
            h.bucket_sizes((1usize << 32) + 1),
            Err(CuckooError::DomainTooLarge { .. })
        ));
    }
}
