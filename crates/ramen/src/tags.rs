//! Memory tags and the tag → position map of one epoch (Ramen Fig. 6, Init steps 1–7).
//!
//! # Tags
//! The key holder K = P_{i−1} of memory key k_i evaluates the Legendre PRF on every cell,
//! L_i\[j\] = PRF(k_i, j) for j ∈ \[m\] (Fig. 6, Init step 3): m·ℓ Legendre symbols, the dominant
//! cost of Ramen. [`memory_tags`] computes them in chunks of consecutive j (k_t + j is one
//! field addition from k_t + j − 1), spread over a rayon pool. [`sample_memory_key`] draws keys
//! until the m tags are pairwise distinct (see [`crate::params`] for why this lets ℓ shrink).
//!
//! # Positions instead of sorting
//! Ramen stores P_i's masked memory M'_i "sorted by PRF(k_i, j)" and has P_i map a tag to its
//! rank L_i^{−1}(tag) (Fig. 6, Init steps 5(b)–7, Access step 2(c)). The rank only serves as a
//! position that hides j. Here the position of cell j is σ_i(j) for a uniformly random
//! permutation σ_i of \[m\] that K shares with the other key holder P_{i+1} (both derive it from
//! their pairwise PRG, so P_{i+1} needs neither the key nor the tags, and only K computes
//! Legendre symbols), and P_i receives, instead of the m sorted tags, a compact map
//! ([`PositionMap`]) that sends each tag L_i\[j\] to σ_i(j): a three-hash XOR retrieval table
//! ("Bloomier filter"/XOR filter without fingerprints) of 1.23·m + 32 entries of ⌈log2 m⌉ bits,
//! about 2.6 bytes per cell for n = 2^16 instead of 8 for a tag.
//!
//! What P_i can do with the map: evaluate it on any 64-bit value, getting σ_i(j) for a tag of
//! cell j and an arbitrary value otherwise. It never learns the tag set itself, let alone
//! which tag belongs to which j. The map is a function of the tag set (pseudorandom), σ_i
//! (uniform) and a hash seed, so the simulator of Ramen's Theorem 5 builds it from random
//! distinct tags and a random permutation, as it samples L_2 in Fig. 19.

use doram_doprf::LegendreKey;
use doram_field::{Fp, legendre_batch_vartime};
use doram_prim::AesPrg;
use rayon::prelude::*;

use crate::error::RamenError;
use crate::params::Params;

/// Cells per task when computing tags.
const TAG_CHUNK: usize = 1 << 12;

/// Keys drawn before giving up (each is redrawn with probability below 2^−9).
const MAX_KEY_DRAWS: usize = 64;

/// Hash seeds tried when building a [`PositionMap`] (each fails with small probability).
const MAX_MAP_ATTEMPTS: usize = 256;

/// tags\[j\] = PRF(k, j) for j ∈ \[m\]: bit t of tags\[j\] is [Legendre(k_t + j) = 1]
/// (Ramen Fig. 6, Init step 3; the PRF of §4.5 with symbol 0 mapped to bit 0, as in
/// `doram_doprf::LegendrePrf`). Runs on `pool` (parallel over chunks of cells) if given.
///
/// # Panics
/// If the key has more than 64 elements (a local invariant: [`Params`] caps ℓ at 64).
pub fn memory_tags(key: &LegendreKey, m: usize, pool: Option<&rayon::ThreadPool>) -> Vec<u64> {
    let k = key.elements();
    assert!(k.len() <= 64, "memory tags have at most 64 bits");
    let mut tags = vec![0u64; m];
    let fill = |(c, chunk): (usize, &mut [u64])| {
        let j0 = Fp::from_u64((c * TAG_CHUNK) as u64);
        let mut xs = vec![Fp::ZERO; chunk.len()];
        let mut symbols = vec![0i8; chunk.len()];
        for (bit, &kt) in k.iter().enumerate() {
            // x = k_t + j, one field addition per cell; the symbols in one lock-step batch.
            let mut x = kt + j0;
            for slot in xs.iter_mut() {
                *slot = x;
                x += Fp::ONE;
            }
            legendre_batch_vartime(&xs, &mut symbols);
            for (tag, &sym) in chunk.iter_mut().zip(&symbols) {
                *tag |= u64::from(sym == 1) << bit;
            }
        }
    };
    match pool {
        Some(pool) if pool.current_num_threads() > 1 => pool.install(|| {
            tags.par_chunks_mut(TAG_CHUNK).enumerate().for_each(fill);
        }),
        _ => tags.chunks_mut(TAG_CHUNK).enumerate().for_each(fill),
    }
    tags
}

/// Whether `tags` has two equal entries.
pub fn has_duplicates(tags: &[u64]) -> bool {
    let mut sorted = tags.to_vec();
    radix_sort(&mut sorted);
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// LSD radix sort of 64-bit values, 16 bits per pass (skipping passes whose digit is constant).
fn radix_sort(v: &mut Vec<u64>) {
    const BITS: u32 = 16;
    const BUCKETS: usize = 1 << BITS;
    let mut tmp = vec![0u64; v.len()];
    let mut counts = vec![0usize; BUCKETS];
    for pass in 0..(64 / BITS) {
        let shift = pass * BITS;
        counts.iter_mut().for_each(|c| *c = 0);
        for &x in v.iter() {
            counts[((x >> shift) as usize) & (BUCKETS - 1)] += 1;
        }
        if counts.contains(&v.len()) {
            continue;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for &x in v.iter() {
            let d = ((x >> shift) as usize) & (BUCKETS - 1);
            tmp[counts[d]] = x;
            counts[d] += 1;
        }
        std::mem::swap(v, &mut tmp);
    }
}

/// Ramen Fig. 6, Init step 1 (KeyGen, done by the key holder alone) and step 3: a fresh key
/// k ∈ F_p^ℓ from `rng` and its m tags, redrawing the key until the tags are distinct.
///
/// # Errors
/// [`RamenError::Local`] if 64 keys in a row collide (probability below
/// 2^−576 with the default parameters).
pub fn sample_memory_key(
    params: &Params,
    rng: &mut AesPrg,
    pool: Option<&rayon::ThreadPool>,
) -> Result<(LegendreKey, Vec<u64>), RamenError> {
    for _ in 0..MAX_KEY_DRAWS {
        let elements: Vec<Fp> = (0..params.tag_bits()).map(|_| rng.random()).collect();
        let key = LegendreKey::from_elements(elements)?;
        let tags = memory_tags(&key, params.memory(), pool);
        if !has_duplicates(&tags) {
            return Ok((key, tags));
        }
    }
    Err(RamenError::Local(
        "every memory key drawn had colliding tags",
    ))
}

/// A uniformly random permutation of [0, m) (Fisher–Yates with unbiased bounded draws from
/// `rng`): σ_i of the [module docs](self), and the PRP of the p-OT ([`crate::pot`]).
pub fn random_permutation(m: usize, rng: &mut AesPrg) -> Vec<u32> {
    let mut p: Vec<u32> = (0..m as u32).collect();
    for i in (1..m).rev() {
        let j = uniform_below(rng, (i + 1) as u64) as usize;
        p.swap(i, j);
    }
    p
}

/// A uniform value in [0, bound) for 1 ≤ bound (Lemire's multiply-and-reject).
pub(crate) fn uniform_below(rng: &mut AesPrg, bound: u64) -> u64 {
    loop {
        let x = rng.next_u64_le();
        let wide = u128::from(x) * u128::from(bound);
        let low = wide as u64;
        if low >= bound || low >= bound.wrapping_neg() % bound {
            return (wide >> 64) as u64;
        }
    }
}

/// Little helper: the next 8 bytes of an [`AesPrg`] as a little-endian `u64`.
pub(crate) trait NextU64 {
    /// The next 8 bytes of the stream, little-endian.
    fn next_u64_le(&mut self) -> u64;
}

impl NextU64 for AesPrg {
    fn next_u64_le(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        u64::from_le_bytes(b)
    }
}

/// The finaliser of MurmurHash3: a bijective 64-bit mixer.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z ^= z >> 33;
    z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
    z ^= z >> 33;
    z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

/// The folded 128-bit product of `a` and `b` (a multiply-mix as in wyhash).
#[inline]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// The three table slots of `tag` (one per segment of length `seg`), under hash seed `seed`.
#[inline]
fn slots(tag: u64, seed: u64, seg: usize) -> [usize; 3] {
    let x = mix64(tag ^ seed);
    let a = mum(x ^ 0xa076_1d64_78bd_642f, 0xe703_7ed1_a0b4_28db);
    let b = mum(x ^ 0x8ebc_6af0_9c88_c6e3, 0x5899_65cc_7537_4cc3);
    let c = mum(x ^ 0x1d8e_4e27_c47d_124f, 0x9e37_79b9_7f4a_7c15);
    let reduce = |h: u64| ((u128::from(h) * seg as u128) >> 64) as usize;
    [reduce(a), seg + reduce(b), 2 * seg + reduce(c)]
}

/// The segment length for m keys: 3·seg ≥ 1.23·m + 32 (an XOR table of that size is built by
/// peeling with high probability).
pub fn segment_len(m: usize) -> usize {
    (m * 123 / 100 + 32).div_ceil(3)
}

/// The tag → position map P_i receives from K (see the [module docs](self)): a table `T` of
/// 3·seg entries of ⌈log2 m⌉ bits and a hash seed, such that
/// `T[h_0(tag)] ⊕ T[h_1(tag)] ⊕ T[h_2(tag)] = σ(j)` for the tag of every cell j.
#[derive(Clone, PartialEq, Eq)]
pub struct PositionMap {
    seed: u64,
    seg: usize,
    table: Vec<u32>,
}

impl std::fmt::Debug for PositionMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PositionMap(entries = {}, ..)", self.table.len())
    }
}

impl PositionMap {
    /// Builds the map sending `tags[j]` to `positions[j]` (K's side of Ramen Fig. 6, Init
    /// step 5, with positions σ(j) instead of ranks). The tags must be distinct, and positions
    /// below 2^32.
    ///
    /// # Errors
    /// [`RamenError::Local`] if every hash seed tried fails (negligible for distinct tags);
    /// [`RamenError::ApiMisuse`] if the slices differ in length.
    pub fn build(
        tags: &[u64],
        positions: &[u32],
        rng: &mut AesPrg,
    ) -> Result<PositionMap, RamenError> {
        if tags.len() != positions.len() {
            return Err(RamenError::ApiMisuse("one position per tag"));
        }
        let m = tags.len();
        let seg = segment_len(m);
        let len = 3 * seg;
        // Per slot, the number of keys hashed to it (high 32 bits) and the XOR of their indices
        // (low 32 bits), in one word so that an update touches one cache line.
        const ONE: u64 = 1 << 32;
        let mut hashed = vec![[0u32; 3]; m];
        let mut slot = vec![0u64; len];
        let mut queue: Vec<u32> = Vec::new();
        let mut order: Vec<(u32, u32)> = Vec::with_capacity(m);
        'attempt: for _ in 0..MAX_MAP_ATTEMPTS {
            let seed = rng.next_u64_le();
            slot.iter_mut().for_each(|c| *c = 0);
            for (e, (&t, h)) in tags.iter().zip(hashed.iter_mut()).enumerate() {
                // Slots are below 3·seg < 2^32 for m ≤ 2^27.
                *h = slots(t, seed, seg).map(|x| x as u32);
                for &x in h.iter() {
                    let c = &mut slot[x as usize];
                    *c = (*c + ONE) ^ e as u64;
                }
            }
            queue.clear();
            queue.extend((0..len as u32).filter(|&x| slot[x as usize] >> 32 == 1));
            order.clear();
            while let Some(x) = queue.pop() {
                let c = slot[x as usize];
                if c >> 32 != 1 {
                    continue;
                }
                let e = c as u32;
                order.push((e, x));
                for &x2 in &hashed[e as usize] {
                    let c2 = &mut slot[x2 as usize];
                    *c2 = (*c2 - ONE) ^ u64::from(e);
                    if *c2 >> 32 == 1 {
                        queue.push(x2);
                    }
                }
            }
            if order.len() != m {
                continue 'attempt;
            }
            let mut table = vec![0u32; len];
            for &(e, x) in order.iter().rev() {
                let h = hashed[e as usize];
                let others = h
                    .iter()
                    .filter(|&&y| y != x)
                    .fold(0u32, |a, &y| a ^ table[y as usize]);
                table[x as usize] = positions[e as usize] ^ others;
            }
            return Ok(PositionMap { seed, seg, table });
        }
        Err(RamenError::Local("no hash seed built a position map"))
    }

    /// The position stored for `tag` (P_i's side of Ramen Fig. 6, Access step 2(c)):
    /// σ(j) if `tag` is the tag of cell j, an unspecified value below 2^width otherwise.
    #[inline]
    pub fn position(&self, tag: u64) -> u32 {
        let [a, b, c] = slots(tag, self.seed, self.seg);
        self.table[a] ^ self.table[b] ^ self.table[c]
    }

    /// The encoded length for `m` cells with positions of `width` bits.
    pub fn wire_len(m: usize, width: u32) -> usize {
        8 + (3 * segment_len(m) * width as usize).div_ceil(8)
    }

    /// The encoding: the seed (8 bytes, little-endian), then the entries of `width` bits each,
    /// packed least-significant bit first.
    pub fn encode(&self, width: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::wire_len(self.table.len() / 3, width));
        out.extend_from_slice(&self.seed.to_le_bytes());
        let mut acc: u64 = 0;
        let mut have = 0u32;
        for &v in &self.table {
            acc |= u64::from(v) << have;
            have += width;
            while have >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                have -= 8;
            }
        }
        if have > 0 {
            out.push(acc as u8);
        }
        out
    }

    /// Decodes a map for `m` cells with positions of `width` bits (both from the parameters).
    /// Returns `None` for a wrong length or set padding bits; the caller names the sender.
    pub fn decode(bytes: &[u8], m: usize, width: u32) -> Option<PositionMap> {
        if bytes.len() != Self::wire_len(m, width) || width == 0 || width > 32 {
            return None;
        }
        let seg = segment_len(m);
        let len = 3 * seg;
        let mut seed = [0u8; 8];
        seed.copy_from_slice(&bytes[..8]);
        let mut table = Vec::with_capacity(len);
        let mask = if width == 32 {
            u64::from(u32::MAX)
        } else {
            (1u64 << width) - 1
        };
        let mut acc: u64 = 0;
        let mut have = 0u32;
        let mut it = bytes[8..].iter();
        for _ in 0..len {
            while have < width {
                acc |= u64::from(*it.next()?) << have;
                have += 8;
            }
            table.push((acc & mask) as u32);
            acc >>= width;
            have -= width;
        }
        if acc != 0 || it.next().is_some() {
            return None;
        }
        Some(PositionMap {
            seed: u64::from_le_bytes(seed),
            seg,
            table,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;
    use doram_doprf::LegendrePrf;

    #[test]
    fn tags_match_the_plain_prf() {
        let mut rng = AesPrg::new(Seed([1; 16]));
        let key = LegendreKey::from_elements((0..37).map(|_| rng.random()).collect()).unwrap();
        let prf = LegendrePrf::new(key.clone());
        let m = 3 * TAG_CHUNK + 17;
        let tags = memory_tags(&key, m, None);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(memory_tags(&key, m, Some(&pool)), tags);
        for j in [0, 1, 2, TAG_CHUNK - 1, TAG_CHUNK, m - 1] {
            assert_eq!(
                u128::from(tags[j]),
                prf.eval(Fp::from_u64(j as u64)),
                "j = {j}"
            );
        }
    }

    #[test]
    fn duplicates_and_sorting() {
        let mut rng = AesPrg::new(Seed([6; 16]));
        let mut v: Vec<u64> = (0..5000u64).map(|i| rng.next_u64_le() >> (i % 7)).collect();
        let mut w = v.clone();
        radix_sort(&mut v);
        w.sort_unstable();
        assert_eq!(v, w);
        assert!(!has_duplicates(&w));
        w.push(w[17]);
        assert!(has_duplicates(&w));
    }

    #[test]
    fn keys_have_distinct_tags() {
        let params = Params::new(100).unwrap().with_tag_bits(15).unwrap();
        let mut rng = AesPrg::new(Seed([2; 16]));
        let (key, tags) = sample_memory_key(&params, &mut rng, None).unwrap();
        assert_eq!(key.bits(), 15);
        assert_eq!(tags.len(), 110);
        assert!(!has_duplicates(&tags));
    }

    #[test]
    fn permutations_are_permutations() {
        let mut rng = AesPrg::new(Seed([3; 16]));
        for m in [1, 2, 20, 1000] {
            let mut p = random_permutation(m, &mut rng);
            p.sort_unstable();
            assert_eq!(p, (0..m as u32).collect::<Vec<_>>());
        }
    }

    #[test]
    fn position_maps_round_trip() {
        let mut rng = AesPrg::new(Seed([4; 16]));
        for m in [1usize, 2, 20, 1056, 70_000] {
            let width = crate::params::ceil_log2(m as u128).max(1);
            let tags: Vec<u64> = (0..m as u64).map(|j| mix64(j ^ 0xabc) | 1).collect();
            let pos = random_permutation(m, &mut rng);
            let map = PositionMap::build(&tags, &pos, &mut rng).unwrap();
            for (t, p) in tags.iter().zip(&pos) {
                assert_eq!(map.position(*t), *p);
            }
            let bytes = map.encode(width);
            assert_eq!(bytes.len(), PositionMap::wire_len(m, width));
            assert_eq!(PositionMap::decode(&bytes, m, width), Some(map));
            assert!(PositionMap::decode(&bytes[1..], m, width).is_none());
        }
        assert!(PositionMap::build(&[1, 2], &[0], &mut rng).is_err());
        // Duplicate tags with different positions cannot be stored.
        assert!(PositionMap::build(&[5, 5, 6], &[0, 1, 2], &mut rng).is_err());
    }
}
