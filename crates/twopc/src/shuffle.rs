//! A secret shuffle of additively shared F_p vectors between two parties, on Beneš networks
//! whose switches one party controls: [`shuffle_shares`] moves every entry i to π(i) for
//! π = σ₁ ∘ σ₀, where `P0` alone knows σ₀ and `P1` alone knows σ₁ ([`Perm`]), and returns
//! fresh shares. Neither party learns π, nor anything about the values.
//!
//! # The network
//! For n = 2^k positions, 2k − 1 stages; stage j conditionally swaps every pair of positions
//! `(x, x | 2^b)` with bit b of x clear, where b runs k − 1, …, 1, 0, 1, …, k − 1
//! ([`stage_bits`]). Any permutation can be routed (Beneš 1964); [`route`] finds the switch
//! settings by the looping algorithm, O(n log n). Running the stages backwards with the same
//! settings applies the inverse. A size that is not a power of two is padded to
//! 2^⌈log₂ n⌉ with entries the permutation leaves in place.
//!
//! # One switch over additive shares
//! The group version of the XOR switch of `doram-gkk12`'s shuffle. Values are shared as
//! v = w + a, the holder's w and the permuter's a. For the switch on `(x, y)` with the
//! permuter's control c, one random OT gives the holder `(k₀, k₁)` and the permuter `k_c`;
//! G and G' are the two halves (each `width` elements) of a PRG on a key. The holder keeps
//!
//! ```text
//! w'_x = w_x + G(k₀)                w'_y = w_y + G'(k₀)
//! ```
//!
//! and sends u = (w_y − w_x) − G(k₀) + G(k₁) and u' = (w_x − w_y) − G'(k₀) + G'(k₁). The
//! permuter takes
//!
//! ```text
//! c = 0:  a'_x = a_x − G(k₀)            a'_y = a_y − G'(k₀)
//! c = 1:  a'_x = a_y + u − G(k₁)        a'_y = a_x + u' − G'(k₁)
//! ```
//!
//! For c = 0, w'_x + a'_x = v_x and w'_y + a'_y = v_y. For c = 1,
//! w'_x + a'_x = w_x + G(k₀) + a_y + w_y − w_x − G(k₀) = v_y and likewise w'_y + a'_y = v_x:
//! the pair is swapped. The permuter sees u, u' masked by G(k₁) (c = 0) or −G(k₀) (c = 1), the
//! key it does not hold; the holder sees only its side of the OTs. (A unit test checks the
//! algebra for both settings.)
//!
//! The PRG is fixed-key AES as the tweakable circular correlation-robust hash of GKWY20
//! (G_i(k) = π(π(k) ⊕ i) ⊕ π(k), element i of G ‖ G'), as the OT extension itself hashes
//! its keys. A 128-bit output lands outside F_p with probability (2^128 − p)/2^128 < 2^−59
//! (p = 2^128 − 28·2^64 + 1), so reducing it mod p would skew each element by 2^−59 in
//! statistical distance, which adds up over the millions of elements of a large shuffle.
//! Instead an output ≥ p is rejected and replaced by the next one of the stream (index 2·width
//! and on): the elements are uniform in F_p, exactly if the hash outputs are. Which outputs
//! are rejected depends only on the key, and a rejection happens about once per 2^59
//! elements, so the extra block changes nothing observable.
//!
//! # A pass, and the shuffle
//! In a pass one party permutes (the OT receiver, choices = its control bits) and the other
//! holds (the OT sender). Each stage takes n/2 random OTs and one message of u ‖ u' (per
//! switch, u then u': n·width elements, 16 bytes each, holder → permuter, cut into frames of
//! 4096 elements). The permuter knows all its choices in advance and the holder's messages
//! depend on nothing from the permuter but the OTs, so the OTs of several stages are drawn
//! together (up to [`OTS_PER_BATCH`]): for n/2 · (2k − 1) ≤ 2^20 a pass is one OT extension
//! flow and one flow of corrections. A pass costs (2k − 1)·n/2 random OTs and
//! (2k − 1)·n·width elements; the shuffle is two passes: σ₀ with `P0` permuting, then σ₁ with
//! `P1` permuting (for the inverse, σ₁⁻¹ then σ₀⁻¹, each network run backwards).
//!
//! # Who learns what (semi-honest)
//! The holder receives nothing but OT extension messages; the permuter receives corrections
//! each masked by a PRG output on a key it lacks. Every share either party ends with is masked
//! by PRG outputs, so each party's view is independent of the values. Each party knows its
//! own σ only; π = σ₁ ∘ σ₀ is uniform given σ₀ (σ₁ is uniform and independent of it) and
//! given σ₁, so to either party π is uniform and unknown. Semi-honest only, as the OT
//! extension: a malicious permuter or holder can make the output wrong (but not make the other
//! party panic: every received message is length-checked and every element must be a
//! canonical encoding, else [`TwopcError::Peer`] names the sender).

use doram_core::PartyId;
use doram_field::Fp;
use doram_net::Session;
use doram_prim::aes::{Block, fixed_key};
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;
use crate::driver::{cot_receive, cot_send, peer};
use crate::error::same_len;
use crate::ot_ext::{CotExtReceiver, CotExtSender};
use crate::triples::{recv_ring, send_ring};

/// The bit each stage of the network on 2^k positions swaps across.
pub fn stage_bits(k: u32) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    (1..k).rev().chain(0..k).collect()
}

/// The switch settings that move the entry at position x to `dest[x]`, stage by stage (each
/// stage's switches in increasing order of their lower position, as [`switches`] lists them).
///
/// # Errors
/// [`TwopcError::ApiMisuse`] unless `dest` is a permutation of `0..2^k`.
pub fn route(dest: &[usize]) -> Result<Vec<Vec<bool>>, TwopcError> {
    let n = dest.len();
    if !n.is_power_of_two() {
        return Err(TwopcError::ApiMisuse(
            "a Beneš network needs a power-of-two size",
        ));
    }
    let mut seen = vec![false; n];
    for &d in dest {
        if d >= n || std::mem::replace(&mut seen[d], true) {
            return Err(TwopcError::ApiMisuse("not a permutation"));
        }
    }
    Ok(route_checked(dest))
}

fn route_checked(dest: &[usize]) -> Vec<Vec<bool>> {
    let n = dest.len();
    if n <= 1 {
        return Vec::new();
    }
    if n == 2 {
        return vec![vec![dest[0] == 1]];
    }
    let half = n / 2;
    let mut inv = vec![0; n];
    for (x, &y) in dest.iter().enumerate() {
        inv[y] = x;
    }
    // The looping algorithm: the two entries of an input switch go to different halves, and
    // so do the two entries bound for an output switch.
    let mut side: Vec<Option<bool>> = vec![None; n];
    for start in 0..half {
        if side[start].is_some() {
            continue;
        }
        let mut x = start;
        loop {
            side[x] = Some(false);
            side[x ^ half] = Some(true);
            let next = inv[dest[x ^ half] ^ half];
            if side[next].is_some() {
                break;
            }
            x = next;
        }
    }
    let side: Vec<bool> = side.into_iter().map(|s| s.unwrap_or(false)).collect();
    let first: Vec<bool> = (0..half).map(|x| side[x]).collect();
    let last: Vec<bool> = (0..half).map(|y| side[inv[y]]).collect();
    let mut sub = [vec![0; half], vec![0; half]];
    for x in 0..n {
        sub[usize::from(side[x])][x & (half - 1)] = dest[x] & (half - 1);
    }
    let top = route_checked(&sub[0]);
    let bottom = route_checked(&sub[1]);
    let mut out = Vec::with_capacity(top.len() + 2);
    out.push(first);
    for (t, b) in top.into_iter().zip(bottom) {
        out.push(t.into_iter().chain(b).collect());
    }
    out.push(last);
    out
}

/// The lower positions of the switches of stage bit `b` on n positions, in increasing order:
/// the x with bit b clear, each paired with `x | 2^b`.
pub fn switches(n: usize, b: u32) -> impl Iterator<Item = usize> {
    (0..n).filter(move |x| (x >> b) & 1 == 0)
}

/// Applies the network with settings `controls` (from [`route`]) in the clear (`inverse`:
/// the stages backwards).
pub fn apply_plain<T>(values: &mut [T], controls: &[Vec<bool>], inverse: bool) {
    let k = values.len().trailing_zeros();
    let bits = stage_bits(k);
    let mut stages: Vec<(u32, &Vec<bool>)> = bits.into_iter().zip(controls).collect();
    if inverse {
        stages.reverse();
    }
    for (b, c) in stages {
        for (x, &swap) in switches(values.len(), b).zip(c) {
            if swap {
                values.swap(x, x | (1 << b));
            }
        }
    }
}

/// The most random OTs a pass draws in one go (several stages' worth when they fit, one stage
/// otherwise): bounds the keys held at once (32 bytes each at the holder).
pub const OTS_PER_BATCH: usize = 1 << 20;

/// A uniform value below `bound` (> 0): Lemire's multiply-and-reject, exactly uniform.
fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(bound);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// This party's part of a secret permutation π = σ₁ ∘ σ₀ of `0..n`: its own uniform σ (drawn
/// from the caller's rng, no communication) and the switch settings that route it on the
/// padded size 2^⌈log₂ n⌉ (identity on the padding). `Debug` shows only n.
#[derive(Clone)]
pub struct Perm {
    own: Vec<usize>,
    controls: Vec<Vec<bool>>,
}

impl core::fmt::Debug for Perm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Perm {{ n: {}, .. }}", self.own.len())
    }
}

impl Perm {
    /// A uniformly random σ of `0..n` (Fisher–Yates on `rng`), routed.
    pub fn random<R: RngCore + CryptoRng + ?Sized>(n: usize, rng: &mut R) -> Perm {
        let mut own: Vec<usize> = (0..n).collect();
        for j in (1..n).rev() {
            let k = uniform_below(rng, j as u64 + 1) as usize;
            own.swap(j, k);
        }
        let controls = route_checked(&padded(&own));
        Perm { own, controls }
    }

    /// The given σ (entry i moves to `own[i]`), routed. For callers that draw σ themselves,
    /// and for tests.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] unless `own` is a permutation of `0..own.len()`.
    pub fn from_own(own: Vec<usize>) -> Result<Perm, TwopcError> {
        let controls = route(&padded(&own))?;
        Ok(Perm { own, controls })
    }

    /// n.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    /// Whether n = 0.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// This party's own σ: entry i moves to `own()[i]`. For tests.
    pub fn own(&self) -> &[usize] {
        &self.own
    }
}

/// σ on `0..n` extended by the identity to `0..2^⌈log₂ n⌉` (values ≥ n, which no permutation
/// of `0..n` holds, make [`route`] refuse it).
fn padded(own: &[usize]) -> Vec<usize> {
    let size = own.len().next_power_of_two();
    own.iter().copied().chain(own.len()..size).collect()
}

/// G(k) ‖ G'(k): `2·width` elements of F_p into `out` (cleared first); `blocks` is scratch.
/// Element i is tccr(i, k) = π(π(k) ⊕ i) ⊕ π(k), an output ≥ p replaced by the next unused
/// index (see the [module documentation](self)).
fn expand(key: Block, width: usize, blocks: &mut Vec<Block>, out: &mut Vec<Fp>) {
    let aes = fixed_key();
    let pk = aes.pi(key);
    let m = 2 * width;
    blocks.clear();
    blocks.extend((0..m as u128).map(|i| pk ^ i));
    aes.pi_in_place(blocks);
    out.clear();
    let mut next = m as u128;
    let mut more = || {
        let x = aes.pi(pk ^ next) ^ pk;
        next += 1;
        x
    };
    out.extend(blocks.iter().map(|&b| below_p(b ^ pk, &mut more)));
}

/// `x` as an element of F_p if it is below p, else the first value of `more` that is.
fn below_p(mut x: Block, mut more: impl FnMut() -> Block) -> Fp {
    while x >= Fp::MODULUS {
        x = more();
    }
    Fp::from_u128(x)
}

/// Entries x and y > x (of `width` elements each) of `data`, both mutable.
fn pair(data: &mut [Fp], width: usize, x: usize, y: usize) -> (&mut [Fp], &mut [Fp]) {
    let (lo, hi) = data.split_at_mut(y * width);
    (&mut lo[x * width..(x + 1) * width], &mut hi[..width])
}

/// The holder's side of one stage (swap bit `b`, one key pair per switch): re-shares `w`
/// in place and appends u ‖ u' of every switch to `msg`.
fn hold_stage(w: &mut [Fp], width: usize, b: u32, keys: &[[Block; 2]], msg: &mut Vec<Fp>) {
    let n = w.len().checked_div(width).unwrap_or(0);
    let (mut g0, mut g1, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    for (x, &[k0, k1]) in switches(n, b).zip(keys) {
        expand(k0, width, &mut scratch, &mut g0);
        expand(k1, width, &mut scratch, &mut g1);
        let (wx, wy) = pair(w, width, x, x | (1 << b));
        msg.extend((0..width).map(|i| wy[i] - wx[i] - g0[i] + g1[i]));
        msg.extend((0..width).map(|i| wx[i] - wy[i] - g0[width + i] + g1[width + i]));
        for i in 0..width {
            wx[i] += g0[i];
            wy[i] += g0[width + i];
        }
    }
}

/// The permuter's side of one stage: re-shares (and, where `controls` say, swaps) `a` in
/// place with its keys and the holder's u ‖ u' (`msg`, `width·n` elements).
fn permute_stage(
    a: &mut [Fp],
    width: usize,
    b: u32,
    controls: &[bool],
    keys: &[Block],
    msg: &[Fp],
) {
    let n = a.len().checked_div(width).unwrap_or(0);
    let (mut g, mut scratch) = (Vec::new(), Vec::new());
    let switch_msgs = msg.chunks_exact(2 * width.max(1));
    for (((x, &swap), &k), u) in switches(n, b).zip(controls).zip(keys).zip(switch_msgs) {
        expand(k, width, &mut scratch, &mut g);
        let (ax, ay) = pair(a, width, x, x | (1 << b));
        if swap {
            ax.swap_with_slice(ay);
            for i in 0..width {
                ax[i] += u[i] - g[i];
                ay[i] += u[width + i] - g[width + i];
            }
        } else {
            for i in 0..width {
                ax[i] -= g[i];
                ay[i] -= g[width + i];
            }
        }
    }
}

/// The public shape of a pass: `size` (a power of two) entries of `width` elements, the
/// network run forwards or backwards, at most `ots_per_batch` OTs drawn at once
/// ([`OTS_PER_BATCH`] but in tests).
#[derive(Clone, Copy)]
struct Pass {
    size: usize,
    width: usize,
    inverse: bool,
    ots_per_batch: usize,
}

impl Pass {
    /// The stages in the order they run, (swap bit, index into the settings), in groups
    /// whose OTs are drawn together.
    fn batches(self) -> Vec<Vec<(u32, usize)>> {
        let mut stages: Vec<(u32, usize)> = stage_bits(self.size.trailing_zeros())
            .into_iter()
            .zip(0..)
            .collect();
        if self.inverse {
            stages.reverse();
        }
        let per_batch = (self.ots_per_batch / (self.size / 2).max(1)).max(1);
        stages.chunks(per_batch).map(<[_]>::to_vec).collect()
    }
}

/// The holder's side of a pass over `w`.
fn hold_pass(
    session: &mut Session,
    to: PartyId,
    sender: &mut impl CotExtSender,
    w: &mut [Fp],
    pass: Pass,
) -> Result<(), TwopcError> {
    let Pass { size, width, .. } = pass;
    let half = size / 2;
    let mut msg = Vec::with_capacity(size * width);
    for batch in pass.batches() {
        let keys = cot_send(session, sender, batch.len() * half)?
            .into_random()
            .msgs;
        for (&(b, _), keys) in batch.iter().zip(keys.chunks_exact(half)) {
            msg.clear();
            hold_stage(w, width, b, keys, &mut msg);
            send_ring(session, to, &msg)?;
        }
    }
    Ok(())
}

/// The permuter's side of a pass over `a` with the switch settings `controls`.
fn permute_pass(
    session: &mut Session,
    from: PartyId,
    receiver: &mut impl CotExtReceiver,
    a: &mut [Fp],
    pass: Pass,
    controls: &[Vec<bool>],
) -> Result<(), TwopcError> {
    let Pass { size, width, .. } = pass;
    let half = size / 2;
    for batch in pass.batches() {
        let choices: Vec<bool> = batch
            .iter()
            .flat_map(|&(_, j)| controls[j].iter().copied())
            .collect();
        let keys = cot_receive(session, receiver, &choices)?.into_random().msgs;
        for (&(b, j), keys) in batch.iter().zip(keys.chunks_exact(half)) {
            let msg: Vec<Fp> = recv_ring(session, from, size * width, "switch corrections")?;
            permute_stage(a, width, b, &controls[j], keys, &msg);
        }
    }
    Ok(())
}

/// Moves additively shared entries by π = σ₁ ∘ σ₀ (σ₀ of `P0`'s `perm`, σ₁ of `P1`'s): out
/// entry π(i) = entry i, or by π⁻¹ if `inverse`. Entries have `width` shares each, entry i
/// = `entries[i·width..(i+1)·width]`. `P0`'s σ is applied first, then `P1`'s (for the
/// inverse, `P1`'s σ⁻¹ first, each network run backwards). Both parties call it with their
/// own `Perm` of the same n and the same `width`; `sender` and `receiver` are this party's
/// two OT extension instances, paired with the peer's receiver and sender (e.g. from
/// [`softspoken_both_setup`](crate::driver::softspoken_both_setup)). The output shares are
/// fresh. For n ≤ 1 nothing is sent and the shares are returned as they are.
///
/// Cost per pass on N = 2^⌈log₂ n⌉ positions (see the [module documentation](self)):
/// (2·log₂ N − 1)·N/2 random OTs and (2·log₂ N − 1)·N·width elements from the holder.
///
/// # Errors
/// [`TwopcError::WrongPartyCount`] unless the session has two parties;
/// [`TwopcError::LengthMismatch`] unless `entries` holds n·width elements
/// ([`TwopcError::ApiMisuse`] if that overflows), both before anything is sent; transport
/// failures; the peer's messages of the wrong size or with non-canonical elements
/// ([`TwopcError::Peer`], naming it).
pub fn shuffle_shares(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    receiver: &mut impl CotExtReceiver,
    perm: &Perm,
    mut entries: Vec<Fp>,
    width: usize,
    inverse: bool,
) -> Result<Vec<Fp>, TwopcError> {
    let other = peer(session)?;
    let n = perm.len();
    let elems = n
        .checked_mul(width)
        .ok_or(TwopcError::ApiMisuse("n·width overflows"))?;
    same_len("shuffled entries", elems, entries.len())?;
    let size = n.next_power_of_two();
    if size <= 1 {
        return Ok(entries);
    }
    entries.resize(size * width, Fp::ZERO);
    let me = session.me();
    let order = if inverse {
        [PartyId::P1, PartyId::P0]
    } else {
        [PartyId::P0, PartyId::P1]
    };
    let pass = Pass {
        size,
        width,
        inverse,
        ots_per_batch: OTS_PER_BATCH,
    };
    for permuter in order {
        if permuter == me {
            permute_pass(session, other, receiver, &mut entries, pass, &perm.controls)?;
        } else {
            hold_pass(session, other, sender, &mut entries, pass)?;
        }
    }
    entries.truncate(elems);
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_fps(rng: &mut impl RngCore, m: usize) -> Vec<Fp> {
        (0..m).map(|_| Fp::random(rng)).collect()
    }

    fn block(rng: &mut impl RngCore) -> Block {
        u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
    }

    /// One switch of each setting on made-up OTs: the sum of the new shares is the pair, kept
    /// or swapped, and the shares changed.
    #[test]
    fn the_additive_switch_keeps_or_swaps_the_pair() {
        let mut rng = crate::insecure_rng_for_tests(11);
        for width in [1, 3] {
            for swap in [false, true] {
                let w = random_fps(&mut rng, 2 * width);
                let a = random_fps(&mut rng, 2 * width);
                let v: Vec<Fp> = w.iter().zip(&a).map(|(&x, &y)| x + y).collect();
                let keys = [block(&mut rng), block(&mut rng)];
                let mut w1 = w.clone();
                let mut msg = Vec::new();
                hold_stage(&mut w1, width, 0, &[keys], &mut msg);
                assert_eq!(msg.len(), 2 * width);
                let mut a1 = a.clone();
                let kc = keys[usize::from(swap)];
                permute_stage(&mut a1, width, 0, &[swap], &[kc], &msg);
                let v1: Vec<Fp> = w1.iter().zip(&a1).map(|(&x, &y)| x + y).collect();
                let want: Vec<Fp> = if swap {
                    v[width..].iter().chain(&v[..width]).copied().collect()
                } else {
                    v.clone()
                };
                assert_eq!(v1, want, "width {width}, swap {swap}");
                assert_ne!(w1, w);
                assert_ne!(a1, a);
            }
        }
    }

    /// Passes whose OTs come in several batches (one stage, two stages) route as the network.
    #[test]
    fn passes_with_small_ot_batches_route_as_the_network() {
        use doram_net::{LocalMesh, run_parties};
        let (size, width) = (8usize, 2usize);
        let mut rng = crate::insecure_rng_for_tests(14);
        let v = random_fps(&mut rng, size * width);
        let w = random_fps(&mut rng, size * width);
        let a: Vec<Fp> = v.iter().zip(&w).map(|(&x, &y)| x - y).collect();
        let own = Perm::random(size, &mut rng);
        for (ots_per_batch, inverse) in [(3, false), (8, false), (8, true)] {
            let pass = Pass {
                size,
                width,
                inverse,
                ots_per_batch,
            };
            assert_eq!(pass.batches().len(), if ots_per_batch == 3 { 5 } else { 3 });
            let out = run_parties(LocalMesh::new(2).build(), "pass", |mut s: Session| {
                let mut rng = crate::insecure_rng_for_tests(15 + s.me().index() as u64);
                let (mut snd, mut rcv) =
                    crate::driver::softspoken_both_setup(&mut s, Default::default(), &mut rng)?;
                let other = peer(&s)?;
                if s.me() == PartyId::P0 {
                    let mut a = a.clone();
                    permute_pass(&mut s, other, &mut rcv, &mut a, pass, &own.controls)?;
                    Ok::<_, TwopcError>(a)
                } else {
                    let mut w = w.clone();
                    hold_pass(&mut s, other, &mut snd, &mut w, pass)?;
                    Ok(w)
                }
            });
            let mut out = out.into_iter().map(|r| r.unwrap().unwrap());
            let (a1, w1) = (out.next().unwrap(), out.next().unwrap());
            let opened: Vec<Fp> = a1.iter().zip(&w1).map(|(&x, &y)| x + y).collect();
            let mut want: Vec<Vec<Fp>> = v.chunks(width).map(<[Fp]>::to_vec).collect();
            apply_plain(&mut want, &own.controls, inverse);
            assert_eq!(opened, want.concat(), "{ots_per_batch} OTs per batch");
        }
    }

    #[test]
    fn outputs_above_p_are_replaced_not_reduced() {
        let mut rest = [Fp::MODULUS, u128::MAX, 5].into_iter();
        assert_eq!(
            below_p(Fp::MODULUS + 1, || rest.next().unwrap()),
            Fp::from_u64(5)
        );
        assert_eq!(rest.next(), None);
        assert_eq!(below_p(Fp::MODULUS - 1, || unreachable!()), -Fp::ONE);
    }

    #[test]
    fn expansion_is_deterministic_per_key() {
        let (mut s, mut x, mut y) = (Vec::new(), Vec::new(), Vec::new());
        expand(5, 4, &mut s, &mut x);
        expand(5, 4, &mut s, &mut y);
        assert_eq!(x.len(), 8);
        assert_eq!(x, y);
        expand(6, 4, &mut s, &mut y);
        assert_ne!(x, y);
        // The first elements do not depend on the width.
        expand(5, 1, &mut s, &mut y);
        assert_eq!(y[..2], x[..2]);
    }

    #[test]
    fn uniform_below_stays_below() {
        let mut rng = crate::insecure_rng_for_tests(12);
        for bound in [1u64, 2, 3, 7, 1 << 40, u64::MAX] {
            for _ in 0..100 {
                assert!(uniform_below(&mut rng, bound) < bound);
            }
        }
    }

    #[test]
    fn perm_routes_its_own_sigma_with_padding() {
        let mut rng = crate::insecure_rng_for_tests(13);
        for n in [0usize, 1, 2, 3, 5, 8, 100] {
            let p = Perm::random(n, &mut rng);
            assert_eq!(p.len(), n);
            let mut v: Vec<usize> = (0..n.next_power_of_two()).collect();
            apply_plain(&mut v, &p.controls, false);
            for (i, &d) in p.own().iter().enumerate() {
                assert_eq!(v[d], i);
            }
            assert!((n..v.len()).all(|i| v[i] == i));
        }
        assert!(Perm::from_own(vec![0, 2]).is_err());
        assert!(Perm::from_own(vec![1, 1, 0]).is_err());
        assert_eq!(Perm::from_own(vec![2, 0, 1]).unwrap().own(), &[2, 0, 1]);
    }
}
