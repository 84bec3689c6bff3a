//! The plaintext Legendre PRF (Ramen §4.5): the oracle for the distributed protocols and what
//! the key holder evaluates locally (e.g. the memory tags PRF(k_i, j), j ∈ \[m\], of Ramen
//! Fig. 6, Init step 3).
//!
//! # Definition
//! Key k = (k_0, …, k_{ℓ−1}) ∈ F_p^ℓ; the output is an ℓ-bit string, returned as a `u128`
//! whose bit i is
//!
//! ```text
//!   PRF(k, x)_i = 1  if  Legendre(k_i + x) = 1   (k_i + x a non-zero square)
//!                 0  otherwise                    (a non-square, or k_i + x = 0)
//! ```
//!
//! so PRF(k, x) = Σ_i 2^i · [Legendre(k_i + x) = 1]. Ramen writes L_p(a) = ((a/p) + 1)/2 mod p,
//! which maps the symbol 0 to (p + 1)/2, not a bit; we map it to 0, as the reference
//! implementation does. For an input chosen independently of the key the symbol 0 occurs with
//! probability at most ℓ/p < 2^−121 per evaluation (and whoever computed that symbol would
//! learn x = −k_i; Ramen's proof of Theorem 7 argues that an environment causing it breaks the
//! shifted Legendre symbol assumption). See the crate documentation for how the distributed
//! protocols treat it.
//!
//! # Speed
//! Symbols are computed with [`legendre_batch_vartime`] (binary-GCD Jacobi symbols, sixteen
//! in lock-step on AVX-512; about four times the throughput of single
//! [`Fp::legendre_vartime`] calls, which are in turn several times faster than Euler's
//! criterion). Every entry point, a single [`LegendrePrf::eval`] included, gathers its values
//! into blocks of at most [`BLOCK_SYMBOLS`] and hands each block to that kernel, so even one
//! evaluation of ℓ = 80 symbols runs as five full groups of sixteen. Batches are split into up
//! to [`Params::threads`] chunks that run on the ambient rayon pool
//! ([`legendre_bits_vartime`], [`LegendrePrf::eval_batch`], [`LegendrePrf::eval_range`]); a
//! caller that keeps its own pool (as Ramen's preprocessing does) runs the protocol inside
//! `pool.install(..)`.
//!
//! Variable time is acceptable here: the value whose symbol is computed is one the computing
//! party may know (the key holder's own k_i + x; the masked products t∘(k + x) and s²∘(k + x)
//! of the protocols, which are uniformly random in their coset of squares or non-squares given
//! the output bit), so the time reveals nothing about other parties' secrets.

use core::fmt;

use doram_field::{Fp, legendre_batch_vartime};
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;

use crate::error::DoprfError;
use crate::params::{MAX_BITS, MIN_SYMBOLS_PER_THREAD, Params};

/// A Legendre-PRF key k ∈ F_p^ℓ, 1 ≤ ℓ ≤ [`MAX_BITS`].
///
/// A secret: `Debug` prints the length only, and there is no `PartialEq` (compare
/// [`elements`](LegendreKey::elements) in tests).
#[derive(Clone)]
pub struct LegendreKey(Vec<Fp>);

impl fmt::Debug for LegendreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LegendreKey(bits = {}, ..)", self.0.len())
    }
}

impl LegendreKey {
    /// A uniformly random key of ℓ = `params.bits()` elements.
    pub fn random<R: RngCore + CryptoRng + ?Sized>(params: &Params, rng: &mut R) -> LegendreKey {
        LegendreKey((0..params.bits()).map(|_| Fp::random(rng)).collect())
    }

    /// The key with these elements (e.g. known-answer tests).
    ///
    /// # Errors
    /// [`DoprfError::InvalidParams`] unless 1 ≤ `elements.len()` ≤ [`MAX_BITS`].
    pub fn from_elements(elements: Vec<Fp>) -> Result<LegendreKey, DoprfError> {
        Params::new(elements.len())?;
        Ok(LegendreKey(elements))
    }

    /// k_0, …, k_{ℓ−1}.
    pub fn elements(&self) -> &[Fp] {
        &self.0
    }

    /// ℓ.
    pub fn bits(&self) -> usize {
        self.0.len()
    }

    /// The key k_1 + k_2 (Ramen Fig. 9/22, KeyGen: "K sets k := k_1 + k_2").
    pub(crate) fn sum(a: &[Fp], b: &[Fp]) -> LegendreKey {
        LegendreKey(a.iter().zip(b).map(|(&a, &b)| a + b).collect())
    }
}

/// The plaintext Legendre PRF x ↦ PRF(k, x) ∈ {0, 1}^ℓ (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct LegendrePrf {
    key: LegendreKey,
    threads: usize,
}

impl LegendrePrf {
    /// The PRF under `key`, evaluated on one thread.
    pub fn new(key: LegendreKey) -> LegendrePrf {
        LegendrePrf { key, threads: 1 }
    }

    /// A PRF with a fresh random key of `params.bits()` elements, batches evaluated on
    /// `params.threads()` threads.
    pub fn random<R: RngCore + CryptoRng + ?Sized>(params: &Params, rng: &mut R) -> LegendrePrf {
        LegendrePrf::new(LegendreKey::random(params, rng)).with_threads(params.threads())
    }

    /// The same PRF with [`eval_batch`](LegendrePrf::eval_batch) on up to `threads` threads.
    #[must_use]
    pub fn with_threads(self, threads: usize) -> LegendrePrf {
        LegendrePrf {
            threads: threads.max(1),
            ..self
        }
    }

    /// The key.
    pub fn key(&self) -> &LegendreKey {
        &self.key
    }

    /// ℓ.
    pub fn bits(&self) -> usize {
        self.key.bits()
    }

    /// PRF(k, x): bit i is [Legendre(k_i + x) = 1].
    ///
    /// Variable time in k + x (see the [module docs](self)): for the key holder's own use.
    pub fn eval(&self, x: Fp) -> u128 {
        let mut out = [0u128];
        self.fill(&mut out, |_| x);
        out[0]
    }

    /// PRF(k, x) for every x in `xs`, in order; equal to calling [`eval`](LegendrePrf::eval)
    /// on each.
    pub fn eval_batch(&self, xs: &[Fp]) -> Vec<u128> {
        map_evals(xs.len(), self.bits(), self.threads, |first, out| {
            self.fill(out, |j| xs[first + j]);
        })
    }

    /// PRF(k, start + j) for j = 0, …, `count` − 1: the tags of a whole domain, e.g. the list
    /// L_i\[j\] = PRF(k_i, j), j ∈ \[m\], of Ramen Fig. 6, Init step 3 (with `start` = 0, or 1
    /// for the paper's 1-based indices). Equal to [`eval_batch`](LegendrePrf::eval_batch) on
    /// those inputs.
    pub fn eval_range(&self, start: u64, count: usize) -> Vec<u128> {
        let start = Fp::from_u64(start);
        map_evals(count, self.bits(), self.threads, |first, out| {
            self.fill(out, |j| start + Fp::from_u64((first + j) as u64));
        })
    }

    /// `out[j] = PRF(k, x(j))` for every `j`, block by block through the batch kernel.
    fn fill(&self, out: &mut [u128], x: impl Fn(usize) -> Fp) {
        let key = &self.key.0;
        pack_blocks(out, key.len(), |j, values| {
            let x = x(j);
            values.extend(key.iter().map(|&k| k + x));
        });
    }
}

/// The bit of one Legendre symbol: 1 for a non-zero square, 0 for a non-square or zero.
#[inline]
pub fn symbol_bit(symbol: i8) -> bool {
    symbol == 1
}

/// At most this many symbols go to the batch kernel at once, so that a block's values (16 bytes
/// each) and symbols stay in the L1 and L2 caches.
pub const BLOCK_SYMBOLS: usize = 4096;

/// `out[j]` = the symbol bits of the `bits` values that `values(j, buffer)` appends, value `i`
/// in bit `i`; the values of up to [`BLOCK_SYMBOLS`] / `bits` outputs at a time go through
/// [`legendre_batch_vartime`] together.
fn pack_blocks(out: &mut [u128], bits: usize, values: impl Fn(usize, &mut Vec<Fp>)) {
    debug_assert!((1..=MAX_BITS).contains(&bits));
    let per_block = (BLOCK_SYMBOLS / bits).max(1);
    let room = per_block.min(out.len()) * bits;
    let mut xs = Vec::with_capacity(room);
    let mut symbols = vec![0i8; room];
    for (b, outs) in out.chunks_mut(per_block).enumerate() {
        xs.clear();
        for j in 0..outs.len() {
            values(b * per_block + j, &mut xs);
        }
        debug_assert_eq!(xs.len(), outs.len() * bits);
        let symbols = &mut symbols[..xs.len()];
        legendre_batch_vartime(&xs, symbols);
        for (o, group) in outs.iter_mut().zip(symbols.chunks_exact(bits)) {
            *o = group
                .iter()
                .enumerate()
                .fold(0u128, |acc, (i, &s)| acc | (u128::from(symbol_bit(s)) << i));
        }
    }
}

/// The symbol bits of a batch: `values` holds `values.len() / params.bits()` consecutive
/// groups of ℓ elements, and output `j` packs the bits of group `j` (element `i` of the group
/// in bit `i`). Computed on up to `params.threads()` threads.
///
/// This is the last step of both protocols (Ramen Fig. 9, step 10; Fig. 22, step 8) and the
/// bulk of their computation.
///
/// # Panics
/// If `values.len()` is not a multiple of ℓ (a local invariant: the protocol functions build
/// these vectors from the parameters).
pub fn legendre_bits_vartime(values: &[Fp], params: &Params) -> Vec<u128> {
    let bits = params.bits();
    assert!(
        values.len().is_multiple_of(bits),
        "legendre_bits_vartime: {} values do not form groups of ℓ = {bits}",
        values.len()
    );
    debug_assert!(bits <= MAX_BITS);
    let count = values.len() / bits;
    map_evals(count, bits, params.threads(), |first, out| {
        pack_blocks(out, bits, |j, xs| {
            let j = first + j;
            xs.extend_from_slice(&values[j * bits..(j + 1) * bits]);
        });
    })
}

/// A vector of `count` outputs filled by `fill(first, part)`, which writes outputs `first ..
/// first + part.len()`: one call for the whole vector, or, with more than one chunk, one per
/// chunk on the ambient rayon pool (the global pool, or the one the caller entered with
/// `rayon::ThreadPool::install`). At most `threads` chunks, each of at least
/// [`MIN_SYMBOLS_PER_THREAD`] symbols (of `bits` per output).
fn map_evals(
    count: usize,
    bits: usize,
    threads: usize,
    fill: impl Fn(usize, &mut [u128]) + Sync,
) -> Vec<u128> {
    let by_work = (count * bits) / MIN_SYMBOLS_PER_THREAD;
    let chunks = threads.min(by_work).min(count).max(1);
    let mut out = vec![0u128; count];
    if chunks == 1 {
        fill(0, &mut out);
    } else {
        let chunk = count.div_ceil(chunks);
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, part)| fill(c * chunk, part));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// The known-answer vectors of `shared/specs/ramen.md`: inputs and their Legendre symbols.
    const KAT: [(u128, i8); 20] = [
        (0, 0),
        (1, 1),
        (2, 1),
        (35122421919063474048031845924062067909, 1),
        (61212839083344548205786527436063227216, 1),
        (108886203898319005744174078164860101674, 1),
        (112160854746794802432264095652132979488, -1),
        (142714630766673706362679167860844911107, 1),
        (144328356835331043954321695814395383527, 1),
        (149714699338443771695584577213555322897, -1),
        (162837698983268132975860461485836731565, 1),
        (185920817468766357617527011469055960606, -1),
        (207479253861772423381237297118907360324, 1),
        (220976947578297059190439898234224764278, 1),
        (225624737240143795963751467909724695007, 1),
        (230022448309092634504744292546382561960, -1),
        (284649339713848098295138218361935151979, -1),
        (293856596737329296797721884860187281734, 1),
        (315840344961299616831836711745928570660, 1),
        (340282366920938462946865773367900766208, 1),
    ];

    fn kat_expected() -> u128 {
        KAT.iter()
            .enumerate()
            .fold(0, |acc, (i, &(_, s))| acc | (u128::from(s == 1) << i))
    }

    #[test]
    fn known_answers_at_zero() {
        let key = LegendreKey::from_elements(KAT.map(|(v, _)| Fp::from_u128(v)).to_vec()).unwrap();
        let prf = LegendrePrf::new(key);
        assert_eq!(prf.eval(Fp::ZERO), kat_expected());
    }

    #[test]
    fn known_answers_shifted() {
        // k_i = v_i − x, so k_i + x = v_i for any x.
        let x = Fp::from_u64(123_456_789);
        let key: Vec<Fp> = KAT.iter().map(|&(v, _)| Fp::from_u128(v) - x).collect();
        let prf = LegendrePrf::new(LegendreKey::from_elements(key).unwrap());
        assert_eq!(prf.eval(x), kat_expected());
        // Bit 0 has k_0 + x = 0: symbol 0 maps to bit 0.
        assert_eq!(prf.eval(x) & 1, 0);
    }

    #[test]
    fn eval_matches_euler_and_batch_matches_single() {
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        for bits in [1, 7, 80, 128] {
            let params = Params::new(bits).unwrap();
            let prf = LegendrePrf::random(&params, &mut rng);
            let xs: Vec<Fp> = (0..300).map(|_| Fp::random(&mut rng)).collect();
            for &x in &xs[..20] {
                let want = prf
                    .key()
                    .elements()
                    .iter()
                    .enumerate()
                    .fold(0u128, |acc, (i, &k)| {
                        acc | (u128::from((k + x).legendre() == 1) << i)
                    });
                assert_eq!(prf.eval(x), want);
                assert_eq!(prf.eval(x) & !params.output_mask(), 0);
            }
            let single: Vec<u128> = xs.iter().map(|&x| prf.eval(x)).collect();
            let range: Vec<Fp> = (0..50u64).map(|j| Fp::from_u64(1000 + j)).collect();
            assert_eq!(prf.eval_range(1000, 50), prf.eval_batch(&range));
            assert_eq!(prf.eval_batch(&xs), single);
            // Several threads, and enough work to use them.
            let threaded = prf.clone().with_threads(3);
            assert_eq!(threaded.eval_batch(&xs), single);
            assert!(prf.eval_batch(&[]).is_empty());
        }
    }

    #[test]
    fn legendre_bits_groups() {
        let mut rng = ChaCha12Rng::seed_from_u64(6);
        let params = Params::new(80).unwrap().with_threads(4);
        let values: Vec<Fp> = (0..80 * 200).map(|_| Fp::random(&mut rng)).collect();
        let got = legendre_bits_vartime(&values, &params);
        assert_eq!(got.len(), 200);
        for (j, &g) in got.iter().enumerate() {
            for i in 0..80 {
                let bit = (g >> i) & 1 == 1;
                assert_eq!(bit, values[j * 80 + i].legendre() == 1);
            }
        }
        assert!(legendre_bits_vartime(&[], &params).is_empty());
    }

    #[test]
    fn blocks_match_single_symbols() {
        // Output counts across several kernel blocks with a partial last block, ℓ that leave
        // scalar remainders (1, 3), padded lock-step groups (7, 17) or whole groups (80, 128),
        // and zeros among the values (symbol 0, bit 0) at every position of a group.
        let mut rng = ChaCha12Rng::seed_from_u64(7);
        for bits in [1, 3, 7, 17, 80, 128] {
            let count = 2 * (BLOCK_SYMBOLS / bits) + 3;
            let mut values: Vec<Fp> = (0..count * bits).map(|_| Fp::random(&mut rng)).collect();
            for z in (0..values.len()).step_by(37) {
                values[z] = Fp::ZERO;
            }
            let want: Vec<u128> = values
                .chunks_exact(bits)
                .map(|g| {
                    g.iter().enumerate().fold(0u128, |acc, (i, v)| {
                        acc | (u128::from(v.legendre() == 1) << i)
                    })
                })
                .collect();
            for threads in [1, 3] {
                let params = Params::new(bits).unwrap().with_threads(threads);
                assert_eq!(legendre_bits_vartime(&values, &params), want, "ℓ = {bits}");
            }
            // The same through the PRF: key = the first group, inputs 0, 1, …, count − 1.
            let prf =
                LegendrePrf::new(LegendreKey::from_elements(values[..bits].to_vec()).unwrap());
            assert_eq!(prf.eval(Fp::ZERO), want[0], "ℓ = {bits}");
            let xs: Vec<Fp> = (0..count as u64).map(Fp::from_u64).collect();
            let single: Vec<u128> = xs.iter().map(|&x| prf.eval(x)).collect();
            assert_eq!(prf.eval_batch(&xs), single, "ℓ = {bits}");
            assert_eq!(prf.eval_range(0, count), single, "ℓ = {bits}");
            assert_eq!(prf.clone().with_threads(3).eval_range(0, count), single);
        }
    }

    #[test]
    fn map_evals_splits_evenly() {
        for count in [0, 1, 2, 5, 1000, 1001] {
            for threads in [1, 2, 3, 8] {
                let got = map_evals(count, MIN_SYMBOLS_PER_THREAD, threads, |first, part| {
                    for (j, o) in part.iter_mut().enumerate() {
                        *o = (first + j) as u128 * 3;
                    }
                });
                let want: Vec<u128> = (0..count).map(|i| i as u128 * 3).collect();
                assert_eq!(got, want, "count {count}, threads {threads}");
            }
        }
    }

    #[test]
    fn key_debug_is_redacted() {
        let key = LegendreKey::from_elements(vec![Fp::from_u64(42); 3]).unwrap();
        assert_eq!(format!("{key:?}"), "LegendreKey(bits = 3, ..)");
        assert!(LegendreKey::from_elements(Vec::new()).is_err());
    }
}
