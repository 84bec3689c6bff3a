//! The multi-point DPF of Schoppmann, Gascón, Reichert and Raykova ("Distributed Vector-OLE:
//! Improved Constructions and Implementation", CCS 2019, §5), over any single-point DPF.
//!
//! # Construction
//!
//! For `t` distinct points on `[0, n)`, with `B = doram_prim::num_buckets(t)` buckets (cuckoo
//! hashing with 3 hash functions at statistical security 40, see [`doram_prim::cuckoo`]):
//!
//! 1. Gen picks a random hash key and cuckoo-hashes the `t` points, so each point `α_i` sits
//!    alone in a bucket `b_i` (a new key is drawn if insertion fails, which happens with
//!    probability about 2^−40; after [`MAX_HASH_ATTEMPTS`] failures gen gives up).
//! 2. Simple hashing puts every `x ∈ [0, n)` into each of its distinct buckets; bucket `b` is the
//!    sorted list `D_b`, a sub-domain of `|D_b|` points (about `3n/B`).
//! 3. For each bucket with `|D_b| > 0` the key holds a single-point DPF key on `[0, |D_b|)`:
//!    for `b = b_i` with point `pos_b(α_i)` (the position of `α_i` in `D_b`) and value `β_i`;
//!    for an empty bucket with a random point and value 0.
//! 4. Eval at `x`: the sum over `x`'s distinct buckets `b` of the bucket DPF at `pos_b(x)`. Since
//!    every bucket DPF is zero except at its own point, and `α_i` is that point only in `b_i`,
//!    this is `β_i` at `α_i` and 0 elsewhere.
//!
//! Full-domain evaluation hashes the domain once (one AES call per point), evaluates every bucket
//! DPF over its sub-domain into one buffer, then walks `x = 0, 1, …` with a cursor per bucket and
//! sums `x`'s (at most three) entries: reads stream forward within each bucket and the output is
//! written in order.
//!
//! # Key layout (`to_bytes`)
//!
//! `party (1 byte) ‖ hash key (16) ‖` the single-point keys of the non-empty buckets in bucket
//! order. The bucket sizes follow from the hash key, `n` and `t`, so decoding recomputes them
//! (one hashing pass over the domain) and then knows the exact length:
//! `17 + Σ_{b : |D_b| > 0} D::key_size(|D_b|)`.

use crate::{
    Bgi, DpfError, DpfKey, HalfTree, MAX_DOMAIN, MultiPointDpf, SinglePointDpf, TwoParty, check_len,
};
use doram_core::{CodecError, Seed};
use doram_field::Group;
use doram_prim::cuckoo::{self, CuckooError, CuckooHasher, NUM_HASHES, SimpleHashTable};
use doram_prim::prg::AesPrg;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use std::marker::PhantomData;

/// Hash keys gen tries before reporting [`DpfError::CuckooFailed`].
pub const MAX_HASH_ATTEMPTS: usize = 8;

/// Simple hashing stores positions as `u32`: the largest supported domain.
pub const MAX_MP_DOMAIN: usize = 1 << 32;

/// The cuckoo-hashing multi-point DPF over the single-point DPF `D` (marker type; see the
/// [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct CuckooMpDpf<D>(PhantomData<D>);

/// The multi-point DPF over [`HalfTree`].
pub type HalfTreeMpDpf = CuckooMpDpf<HalfTree>;

/// The multi-point DPF over [`Bgi`].
pub type BgiMpDpf = CuckooMpDpf<Bgi>;

/// One party's multi-point key: the hash key and one single-point key per non-empty bucket.
#[derive(Clone, PartialEq, Eq)]
pub struct MpDpfKey<K> {
    party: TwoParty,
    domain_size: usize,
    num_points: usize,
    hash_key: Seed,
    /// `|D_b|` for every bucket.
    bucket_sizes: Vec<u32>,
    /// The key of every bucket (`None` for the empty ones).
    keys: Vec<Option<K>>,
}

impl<K> std::fmt::Debug for MpDpfKey<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpDpfKey")
            .field("party", &self.party)
            .field("domain_size", &self.domain_size)
            .field("num_points", &self.num_points)
            .field("buckets", &self.bucket_sizes.len())
            .finish_non_exhaustive()
    }
}

impl<K: DpfKey> MpDpfKey<K> {
    /// The number of points `t` the key was generated for.
    pub fn num_points(&self) -> usize {
        self.num_points
    }

    /// The number of buckets `B`.
    pub fn num_buckets(&self) -> usize {
        self.bucket_sizes.len()
    }

    /// The cuckoo hash functions of this key (`None` for `t = 0`).
    pub fn hasher(&self) -> Option<CuckooHasher> {
        (!self.bucket_sizes.is_empty())
            .then(|| CuckooHasher::new(self.hash_key, self.bucket_sizes.len()))
    }

    /// The simple-hash table of the domain, for repeated [`CuckooMpDpf::eval_with_table`] calls
    /// (`None` for `t = 0`).
    pub fn simple_hash_table(&self) -> Option<SimpleHashTable> {
        self.hasher().map(|h| {
            h.simple_hash(self.domain_size)
                .expect("domain size was checked at construction")
        })
    }

    /// The single-point key of bucket `b` (`None` if no domain point hashes to `b`).
    pub fn bucket_key(&self, b: usize) -> Option<&K> {
        self.keys[b].as_ref()
    }

    /// The sub-domain size `|D_b|` of bucket `b`.
    pub fn bucket_size(&self, b: usize) -> usize {
        self.bucket_sizes[b] as usize
    }

    fn key_of(&self, b: usize) -> &K {
        self.keys[b]
            .as_ref()
            .expect("a bucket holding a domain point has a key")
    }
}

impl<K: DpfKey> DpfKey for MpDpfKey<K> {
    fn party(&self) -> TwoParty {
        self.party
    }

    fn domain_size(&self) -> usize {
        self.domain_size
    }

    fn size_bytes(&self) -> usize {
        17 + self
            .keys
            .iter()
            .flatten()
            .map(DpfKey::size_bytes)
            .sum::<usize>()
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes());
        out.push(self.party.to_byte());
        out.extend_from_slice(&self.hash_key.0);
        for k in self.keys.iter().flatten() {
            out.extend_from_slice(&k.to_bytes());
        }
        out
    }
}

/// A uniform value in `[0, bound)` (rejection sampling; `bound ≥ 1`).
fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    // The largest multiple of `bound` that fits: values below it reduce uniformly.
    let limit = u64::MAX - u64::MAX % bound;
    loop {
        let v = rng.next_u64();
        if v < limit {
            return v % bound;
        }
    }
}

fn check_points<G>(domain_size: usize, points: &[usize], values: &[G]) -> Result<(), DpfError> {
    if domain_size == 0 || domain_size > MAX_MP_DOMAIN.min(MAX_DOMAIN) {
        return Err(DpfError::BadDomain { domain_size });
    }
    if points.len() != values.len() {
        return Err(DpfError::LengthMismatch {
            points: points.len(),
            values: values.len(),
        });
    }
    if let Some(&point) = points.iter().find(|&&p| p >= domain_size) {
        return Err(DpfError::PointOutOfRange { point, domain_size });
    }
    let mut sorted = points.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(DpfError::DuplicatePoint { point: w[0] });
    }
    Ok(())
}

/// Hashes `[start, start + out.len())` and replaces repeated buckets of a point by `u32::MAX`.
fn hash_distinct(h: &CuckooHasher, start: usize, out: &mut [[u32; NUM_HASHES]]) {
    h.hash_range(start as u64, out);
    for e in out.iter_mut() {
        if e[1] == e[0] {
            e[1] = u32::MAX;
        }
        if e[2] == e[0] || e[2] == e[1] {
            e[2] = u32::MAX;
        }
    }
}

impl<D> CuckooMpDpf<D> {
    /// [`MultiPointDpf::eval`] with a precomputed [`MpDpfKey::simple_hash_table`]: three
    /// single-point evaluations instead of a pass over the domain.
    ///
    /// # Panics
    /// If `x ≥ domain_size` or the table belongs to another hash key or domain.
    pub fn eval_with_table<G: Group>(key: &MpDpfKey<D::Key>, table: &SimpleHashTable, x: usize) -> G
    where
        D: SinglePointDpf<G>,
    {
        assert!(
            x < key.domain_size,
            "input {x} outside domain of {} points",
            key.domain_size
        );
        let Some(h) = key.hasher() else {
            return G::ZERO;
        };
        assert_eq!(
            table.num_buckets(),
            key.bucket_sizes.len(),
            "table of another key"
        );
        let (bs, cnt) = cuckoo::distinct(h.hash(x as u64));
        let mut acc = G::ZERO;
        for &b in &bs[..cnt] {
            let b = b as usize;
            let pos = table.position(b, x as u64).expect("x hashes to b");
            acc += D::eval(key.key_of(b), pos);
        }
        acc
    }
}

/// Shared by the serial and parallel full-domain evaluations: the per-point buckets, the bucket
/// DPF outputs (all buckets back to back), and the final gather.
fn gather<G: Group>(hashes: &[[u32; NUM_HASHES]], sizes: &[u32], buf: &[G], out: &mut [G]) {
    let mut cursor = Vec::with_capacity(sizes.len());
    let mut off = 0usize;
    for &s in sizes {
        cursor.push(off);
        off += s as usize;
    }
    for (y, h) in out.iter_mut().zip(hashes) {
        let mut acc = buf[cursor[h[0] as usize]];
        cursor[h[0] as usize] += 1;
        for &b in &h[1..] {
            if b != u32::MAX {
                acc += buf[cursor[b as usize]];
                cursor[b as usize] += 1;
            }
        }
        *y = acc;
    }
}

impl<G: Group, D: SinglePointDpf<G>> MultiPointDpf<G> for CuckooMpDpf<D> {
    type Key = MpDpfKey<D::Key>;

    fn gen_keys<R: RngCore + CryptoRng + ?Sized>(
        domain_size: usize,
        points: &[usize],
        values: &[G],
        rng: &mut R,
    ) -> Result<(Self::Key, Self::Key), DpfError> {
        check_points(domain_size, points, values)?;
        let t = points.len();
        let nb = cuckoo::num_buckets(t);
        let key = |party, hash_key, sizes: &Vec<u32>, keys| MpDpfKey {
            party,
            domain_size,
            num_points: t,
            hash_key,
            bucket_sizes: sizes.clone(),
            keys,
        };
        if t == 0 {
            let hash_key = Seed::random(rng);
            return Ok((
                key(TwoParty::P0, hash_key, &vec![], vec![]),
                key(TwoParty::P1, hash_key, &vec![], vec![]),
            ));
        }
        // Step 1: cuckoo hashing, with a fresh hash key on the rare failure.
        let items: Vec<u64> = points.iter().map(|&p| p as u64).collect();
        let mut placed = None;
        for _ in 0..MAX_HASH_ATTEMPTS {
            let hasher = CuckooHasher::new(Seed::random(rng), nb);
            match hasher.insert(&items) {
                Ok(table) => {
                    placed = Some((hasher, table));
                    break;
                }
                Err(CuckooError::InsertionFailed { .. }) => continue,
                Err(e) => unreachable!("cuckoo parameters are valid: {e}"),
            }
        }
        let Some((hasher, table)) = placed else {
            return Err(DpfError::CuckooFailed {
                attempts: MAX_HASH_ATTEMPTS,
            });
        };
        // Step 2: bucket sizes and the points' positions, in one pass over the domain.
        let queries: Vec<(u64, usize)> = items
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, table.bucket_of(i)))
            .collect();
        let (sizes, positions) = hasher
            .bucket_sizes_and_positions(domain_size, &queries)
            .expect("each point is in its cuckoo bucket");
        // Step 3: one single-point DPF per non-empty bucket.
        let mut k0 = Vec::with_capacity(nb);
        let mut k1 = Vec::with_capacity(nb);
        for (b, &size) in sizes.iter().enumerate() {
            if size == 0 {
                k0.push(None);
                k1.push(None);
                continue;
            }
            let (alpha, beta) = match table.item_in(b) {
                Some(i) => (positions[i] as usize, values[i]),
                None => (uniform_below(rng, u64::from(size)) as usize, G::ZERO),
            };
            let (a, c) = D::gen_keys(size as usize, alpha, beta, rng);
            k0.push(Some(a));
            k1.push(Some(c));
        }
        let hk = hasher.key();
        Ok((
            key(TwoParty::P0, hk, &sizes, k0),
            key(TwoParty::P1, hk, &sizes, k1),
        ))
    }

    fn gen_with_seed(
        domain_size: usize,
        points: &[usize],
        values: &[G],
        seed: Seed,
    ) -> Result<(Self::Key, Self::Key), DpfError> {
        Self::gen_keys(domain_size, points, values, &mut AesPrg::new(seed))
    }

    /// Costs one hashing pass over `[0, x]` to find `x`'s positions in its buckets; for many
    /// evaluations build [`MpDpfKey::simple_hash_table`] once and use
    /// [`CuckooMpDpf::eval_with_table`].
    fn eval(key: &Self::Key, x: usize) -> G {
        assert!(
            x < key.domain_size,
            "input {x} outside domain of {} points",
            key.domain_size
        );
        let Some(h) = key.hasher() else {
            return G::ZERO;
        };
        let (bs, cnt) = cuckoo::distinct(h.hash(x as u64));
        let queries: Vec<(u64, usize)> =
            bs[..cnt].iter().map(|&b| (x as u64, b as usize)).collect();
        let (_, positions) = h
            .bucket_sizes_and_positions(x + 1, &queries)
            .expect("x hashes to its buckets");
        queries
            .iter()
            .zip(positions)
            .map(|(&(_, b), pos)| D::eval(key.key_of(b), pos as usize))
            .fold(G::ZERO, |a, y| a + y)
    }

    fn eval_all_into(key: &Self::Key, out: &mut [G]) {
        assert_eq!(
            out.len(),
            key.domain_size,
            "output length must equal the domain size"
        );
        let Some(h) = key.hasher() else {
            out.fill(G::ZERO);
            return;
        };
        let mut hashes = vec![[0u32; NUM_HASHES]; key.domain_size];
        for (i, chunk) in hashes.chunks_mut(1 << 12).enumerate() {
            hash_distinct(&h, i << 12, chunk);
        }
        let total: usize = key.bucket_sizes.iter().map(|&s| s as usize).sum();
        let mut buf = vec![G::ZERO; total];
        let mut rest = &mut buf[..];
        for (&s, k) in key.bucket_sizes.iter().zip(&key.keys) {
            let (mine, tail) = rest.split_at_mut(s as usize);
            if let Some(k) = k {
                D::eval_all_into(k, mine);
            }
            rest = tail;
        }
        gather(&hashes, &key.bucket_sizes, &buf, out);
    }

    fn eval_all_par(key: &Self::Key) -> Vec<G> {
        let mut out = vec![G::ZERO; key.domain_size];
        let Some(h) = key.hasher() else { return out };
        let mut hashes = vec![[0u32; NUM_HASHES]; key.domain_size];
        hashes
            .par_chunks_mut(1 << 12)
            .enumerate()
            .for_each(|(i, c)| hash_distinct(&h, i << 12, c));
        let total: usize = key.bucket_sizes.iter().map(|&s| s as usize).sum();
        let mut buf = vec![G::ZERO; total];
        let mut jobs = Vec::with_capacity(key.keys.len());
        let mut rest = &mut buf[..];
        for (&s, k) in key.bucket_sizes.iter().zip(&key.keys) {
            let (mine, tail) = rest.split_at_mut(s as usize);
            if let Some(k) = k {
                jobs.push((mine, k));
            }
            rest = tail;
        }
        jobs.into_par_iter()
            .for_each(|(s, k)| D::eval_all_into(k, s));
        gather(&hashes, &key.bucket_sizes, &buf, &mut out);
        out
    }

    fn key_from_bytes(
        bytes: &[u8],
        domain_size: usize,
        num_points: usize,
    ) -> Result<Self::Key, CodecError> {
        if domain_size == 0 || domain_size > MAX_MP_DOMAIN.min(MAX_DOMAIN) {
            return Err(CodecError::OutOfRange {
                what: "multi-point DPF domain size",
            });
        }
        if num_points > domain_size {
            return Err(CodecError::OutOfRange {
                what: "more DPF points than domain points",
            });
        }
        if bytes.len() < 17 {
            return Err(CodecError::WrongLength {
                expected: 17,
                got: bytes.len(),
            });
        }
        let party = TwoParty::from_byte(bytes[0])?;
        let mut hk = [0u8; 16];
        hk.copy_from_slice(&bytes[1..17]);
        let hash_key = Seed(hk);
        let nb = cuckoo::num_buckets(num_points);
        let sizes = if nb == 0 {
            vec![]
        } else {
            CuckooHasher::new(hash_key, nb)
                .bucket_sizes(domain_size)
                .map_err(|_| CodecError::OutOfRange {
                    what: "multi-point DPF domain size",
                })?
        };
        let expected = 17
            + sizes
                .iter()
                .filter(|&&s| s > 0)
                .map(|&s| D::key_size(s as usize))
                .sum::<usize>();
        check_len(bytes, expected)?;
        let mut pos = 17;
        let mut keys = Vec::with_capacity(sizes.len());
        for &s in &sizes {
            if s == 0 {
                keys.push(None);
                continue;
            }
            let len = D::key_size(s as usize);
            let k = D::key_from_bytes(&bytes[pos..pos + len], s as usize)?;
            if k.party() != party {
                return Err(CodecError::OutOfRange {
                    what: "bucket key of the other party",
                });
            }
            keys.push(Some(k));
            pos += len;
        }
        Ok(MpDpfKey {
            party,
            domain_size,
            num_points,
            hash_key,
            bucket_sizes: sizes,
            keys,
        })
    }
}
