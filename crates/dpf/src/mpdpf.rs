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
//! Full-domain evaluation goes through the domain in windows of 2^12 points: it hashes the
//! window (one AES call per point), gathers each bucket's next outputs (as many as the bucket
//! has points in the window) into one window array, and sums for each point the next entry of
//! each of its (at most three) buckets. Each bucket's DPF is evaluated in order by a
//! [`LeafStream`], a batch at a time, so the working set is one window plus one batch per bucket
//! rather than all `≈ 3n` bucket outputs. The parallel variant splits the domain into
//! ranges of windows, after a counting pass that tells each range where every bucket's stream
//! starts.
//!
//! # Key layout (`to_bytes`)
//!
//! `party (1 byte) ‖ hash key (16) ‖` the single-point keys of the non-empty buckets in bucket
//! order. The bucket sizes follow from the hash key, `n` and `t`, so decoding recomputes them
//! (one hashing pass over the domain) and then knows the exact length:
//! `17 + Σ_{b : |D_b| > 0} D::key_size(|D_b|)`.

use crate::tree::{LeafStream, STREAM_BATCH_BITS, StreamScratch};
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

/// Points per window of the full-domain evaluation (the window's ≈ 3·2^12 bucket outputs,
/// 192 KiB of `Fp`, stay in L2; larger windows measured slower).
const WINDOW: usize = 1 << 12;

/// Points hashed per chunk in the counting pass of the parallel evaluation.
const HASH_CHUNK: usize = 1024;

/// Evaluates `[start, start + out.len())` of the domain. `first[b]` is the number of points
/// below `start` in bucket `b`, i.e. where bucket `b`'s stream starts.
///
/// Window by window: hash the window's points and count them per bucket; copy each bucket's next
/// outputs (as many as it has points in the window) from its [`LeafStream`] into one contiguous
/// window array, bucket after bucket; then walk the window's points in order, each summing the
/// next unread entry of each of its distinct buckets. Every bucket output is produced once, in
/// order; the working set is one window (its hashes and the ≈ 3·2^12 bucket outputs it needs)
/// plus one stream batch per bucket, which is read contiguously.
fn eval_range<G: Group, D: SinglePointDpf<G>>(
    key: &MpDpfKey<D::Key>,
    h: &CuckooHasher,
    start: usize,
    first: &[u32],
    out: &mut [G],
) {
    let nb = key.bucket_sizes.len();
    let mut streams: Vec<Option<LeafStream<'_, G>>> = key
        .keys
        .iter()
        .zip(first)
        .map(|(k, &f)| k.as_ref().map(|k| D::stream(k, f as usize)))
        .collect();
    let batch = 1usize << STREAM_BATCH_BITS;
    let mut bufs = vec![G::ZERO; nb * batch];
    // Per bucket: outputs left in its stream buffer, and where the next one is.
    let mut left = vec![0usize; nb];
    let mut next = vec![0usize; nb];
    let mut scratch = StreamScratch::new();
    let w = WINDOW.min(out.len());
    let mut hashes = vec![[0u32; NUM_HASHES]; w];
    let mut cursor = vec![0usize; nb];
    let mut window = vec![G::ZERO; NUM_HASHES * w];
    for (wi, ys) in out.chunks_mut(WINDOW).enumerate() {
        let hs = &mut hashes[..ys.len()];
        h.hash_range((start + wi * WINDOW) as u64, hs);
        // Replace repeated buckets of a point by u32::MAX and count points per bucket.
        let mut count = std::mem::take(&mut cursor);
        count.fill(0);
        for hx in hs.iter_mut() {
            if hx[1] == hx[0] {
                hx[1] = u32::MAX;
            }
            if hx[2] == hx[0] || hx[2] == hx[1] {
                hx[2] = u32::MAX;
            }
            for &b in hx.iter().filter(|&&b| b != u32::MAX) {
                count[b as usize] += 1;
            }
        }
        // Each bucket's next `count[b]` outputs, buckets back to back; cursor[b] = where its
        // stretch starts.
        let mut filled = 0;
        for b in 0..nb {
            let mut need = count[b];
            count[b] = filled;
            while need > 0 {
                if left[b] == 0 {
                    let stream = streams[b]
                        .as_mut()
                        .expect("a bucket holding a point has a key");
                    left[b] =
                        stream.next_batch(&mut bufs[b * batch..(b + 1) * batch], &mut scratch);
                    next[b] = 0;
                }
                let take = left[b].min(need);
                let from = b * batch + next[b];
                window[filled..filled + take].copy_from_slice(&bufs[from..from + take]);
                filled += take;
                next[b] += take;
                left[b] -= take;
                need -= take;
            }
        }
        cursor = count;
        for (y, hx) in ys.iter_mut().zip(hs.iter()) {
            let b0 = hx[0] as usize;
            let mut acc = window[cursor[b0]];
            cursor[b0] += 1;
            for &b in &hx[1..] {
                if b != u32::MAX {
                    acc += window[cursor[b as usize]];
                    cursor[b as usize] += 1;
                }
            }
            *y = acc;
        }
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
        eval_range::<G, D>(key, &h, 0, &vec![0; key.bucket_sizes.len()], out);
    }

    /// Splits the domain into windows, one rayon task each: a first parallel pass counts each
    /// bucket's points per window (so every window knows where each bucket's stream starts), a
    /// second evaluates the windows.
    fn eval_all_par(key: &Self::Key) -> Vec<G> {
        let n = key.domain_size;
        let mut out = vec![G::ZERO; n];
        let Some(h) = key.hasher() else { return out };
        let nb = key.bucket_sizes.len();
        let windows = (rayon::current_num_threads() * 4)
            .min(n.div_ceil(1 << 14))
            .max(1);
        let width = n.div_ceil(windows);
        let mut starts: Vec<Vec<u32>> = (0..windows)
            .into_par_iter()
            .map(|w| {
                let (lo, hi) = ((w * width).min(n), ((w + 1) * width).min(n));
                let mut count = vec![0u32; nb];
                let mut hs = [[0u32; NUM_HASHES]; HASH_CHUNK];
                let mut x = lo;
                while x < hi {
                    let len = HASH_CHUNK.min(hi - x);
                    h.hash_range(x as u64, &mut hs[..len]);
                    for hx in &hs[..len] {
                        let (bs, cnt) = cuckoo::distinct(*hx);
                        for &b in &bs[..cnt] {
                            count[b as usize] += 1;
                        }
                    }
                    x += len;
                }
                count
            })
            .collect();
        // Exclusive prefix sums over the windows.
        let mut acc = vec![0u32; nb];
        for s in starts.iter_mut() {
            for (a, c) in acc.iter_mut().zip(s.iter_mut()) {
                let here = *c;
                *c = *a;
                *a += here;
            }
        }
        out.par_chunks_mut(width)
            .zip(starts.par_iter())
            .enumerate()
            .for_each(|(w, (ys, first))| eval_range::<G, D>(key, &h, w * width, first, ys));
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
