//! Ramen Fig. 6 (Π_r-M): reading the memory at a secret address through DOPRF tags and the
//! p-OT. The rounds are sequenced in [`crate::doram`]; this module holds each role's epoch state
//! and the local steps.
//!
//! For each i ∈ {1, 2, 3} the share ⟨M⟩_{i−1} is read by P_i, with three roles:
//! * **key holder** P_{i−1} ([`KeyHolderEpoch`]): key k_i, the positions σ_i, the p-OT sender
//!   vector r_i; computes and sends M'_i (Init step 5);
//! * **reader** P_i ([`ReaderEpoch`]): learns the tag PRF(k_i, adr_M) (DOPRF R2), maps it to
//!   its position, takes ⟨x⟩ = M'_i\[pos\] and reveals the mask's index through the p-OT
//!   (chooser);
//! * **helper** P_{i+1} ([`HelperEpoch`]): DOPRF R1; knows σ_i for the write-back; receives
//!   r_i\[pos\] (p-OT receiver) and sets ⟨x⟩ = −r_i\[pos\].
//!
//! Every party plays all three roles, for three different i. Positions: see [`crate::tags`]
//! (σ_i instead of the sorted order, and a compact tag → position map instead of the sorted
//! tag list).

use doram_doprf::LegendreKey;
use doram_field::Fp;
use doram_prim::AesPrg;

use crate::error::RamenError;
use crate::msgs::{
    MASKED_MEMORY_CHUNK, MaskedMemory, PositionMapMsg, PotChooserKeys, PotReceiverKey,
};
use crate::params::Params;
use crate::pot;
use crate::tags::{PositionMap, random_permutation, sample_memory_key};

/// The key holder's material for one epoch (as P_{i−1} of Ramen Fig. 6).
pub struct KeyHolderEpoch {
    /// k_i.
    pub key: LegendreKey,
    /// σ_i: cell j sits at position σ_i(j) of M'_i.
    pub sigma: Vec<u32>,
    /// The p-OT sender: r_i.
    pub sender: pot::Sender,
}

/// The reader's material for one epoch (as P_i of Ramen Fig. 6).
pub struct ReaderEpoch {
    /// Tag → position map of M'_i.
    pub map: PositionMap,
    /// The p-OT chooser.
    pub chooser: pot::Chooser,
    /// M'_i (received at the start of the epoch).
    pub m_prime: Vec<Fp>,
    /// The position read in each access so far (the adr_i^read of Fig. 6, as positions).
    pub positions: Vec<u32>,
}

/// The helper's material for one epoch (as P_{i+1} of Ramen Fig. 6).
pub struct HelperEpoch {
    /// σ_i (shared with the key holder).
    pub sigma: Vec<u32>,
    /// The p-OT receiver.
    pub receiver: pot::Receiver,
}

macro_rules! redacted {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($t), "(..)"))
            }
        }
    )*};
}
redacted!(KeyHolderEpoch, ReaderEpoch, HelperEpoch);

/// Ramen Fig. 6, Init steps 1, 3, 4 and the map of step 5, at the key holder P_{i−1}: a fresh
/// key with distinct tags (drawn from `rng`), the positions σ_i (from `sigma_rng`, the PRG
/// shared with the helper P_{i+1}), the p-OT sender, and the messages for the reader P_i
/// (map and p-OT keys) and for the helper (p-OT key). Input-independent.
///
/// # Errors
/// [`RamenError::Local`] if key or map generation fails (negligible).
pub fn prepare_key_holder(
    params: &Params,
    rng: &mut AesPrg,
    sigma_rng: &mut AesPrg,
    pool: Option<&rayon::ThreadPool>,
) -> Result<
    (
        KeyHolderEpoch,
        PositionMapMsg,
        PotChooserKeys,
        PotReceiverKey,
    ),
    RamenError,
> {
    let m = params.memory();
    let sigma_seed = sigma_rng.next_seed();
    let pot_seed = rng.next_seed();
    // The tags (the bulk of the work, parallel on the pool) and, independently, σ_i and the
    // p-OT vector: on the pool side by side if there is one.
    let others = || {
        let sigma = random_permutation(m, &mut AesPrg::new(sigma_seed));
        // [Ramen Fig. 6, Init step 4] F_3-OT Init with P_{i−1} as S.
        let pot = pot::Sender::init(m, &mut AesPrg::new(pot_seed));
        (sigma, pot)
    };
    // [Ramen Fig. 6, Init steps 1 and 3] k_i and the tags L_i[j] = PRF(k_i, j), j ∈ [m].
    let (keyed, (sigma, (sender, to_chooser, to_receiver))) = match pool {
        Some(p) if p.current_num_threads() > 1 => {
            p.join(|| sample_memory_key(params, rng, pool), others)
        }
        _ => (sample_memory_key(params, rng, pool), others()),
    };
    let (key, tags) = keyed?;
    // [Ramen Fig. 6, Init step 5(b)] the "sorted" tag column becomes a tag → position map.
    let map = PositionMap::build(&tags, &sigma, rng)?;
    let msg = PositionMapMsg {
        map,
        width: params.position_bits(),
    };
    Ok((
        KeyHolderEpoch { key, sigma, sender },
        msg,
        to_chooser,
        to_receiver,
    ))
}

/// The helper's positions σ_i for one epoch, from the PRG it shares with the key holder.
pub fn helper_sigma(params: &Params, sigma_rng: &mut AesPrg) -> Vec<u32> {
    random_permutation(params.memory(), &mut AesPrg::new(sigma_rng.next_seed()))
}

/// Ramen Fig. 6, Init step 5(a) at P_{i−1}: M'_i[σ_i(j)] = ⟨M⟩_{i−1}\[j\] + r_i[σ_i(j)] for
/// j ∈ \[m\], where the n cells of `share` are followed by s dummy cells holding 0.
pub fn masked_memory(share: &[Fp], holder: &KeyHolderEpoch) -> Vec<Fp> {
    let r = holder.sender.r();
    let mut values = r.to_vec();
    for (&x, &p) in share.iter().zip(&holder.sigma) {
        values[p as usize] += x;
    }
    values
}

/// Ramen Fig. 6, Init step 5(c): M'_i as the messages that carry it.
pub fn masked_memory_messages(values: &[Fp]) -> impl Iterator<Item = MaskedMemory> + '_ {
    values
        .chunks(MASKED_MEMORY_CHUNK)
        .map(|c| MaskedMemory { values: c.to_vec() })
}

/// The lengths of the messages that carry M'_i for a memory of `m` cells.
pub fn masked_memory_chunks(m: usize) -> impl Iterator<Item = usize> {
    (0..m.div_ceil(MASKED_MEMORY_CHUNK))
        .map(move |c| MASKED_MEMORY_CHUNK.min(m - c * MASKED_MEMORY_CHUNK))
}

impl ReaderEpoch {
    /// Ramen Fig. 6, Access step 2(c)–(d) at P_i: the position of the cell with tag `tag` and
    /// this party's share ⟨x⟩ = M'_i\[position\]. Records the position (step 2(b)).
    ///
    /// For the tag of an in-range address the position is that cell's; for anything else
    /// (only possible for an out-of-range address) it is an unspecified position.
    pub fn read(&mut self, tag: u64) -> (usize, Fp) {
        let m = self.m_prime.len();
        let pos = self.map.position(tag) as usize % m.max(1);
        self.positions.push(pos as u32);
        (pos, self.m_prime[pos])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::{PartyId, Seed};
    use doram_doprf::LegendrePrf;

    #[test]
    fn a_reader_and_a_helper_reconstruct_the_key_holders_share() {
        let params = Params::new(40).unwrap();
        let (n, m) = (params.n(), params.memory());
        let mut rng = AesPrg::new(Seed([1; 16]));
        let mut shared = AesPrg::new(Seed([2; 16]));
        let mut shared_copy = AesPrg::new(Seed([2; 16]));
        let (holder, map, to_c, to_r) =
            prepare_key_holder(&params, &mut rng, &mut shared, None).unwrap();
        let sigma = helper_sigma(&params, &mut shared_copy);
        assert_eq!(sigma, holder.sigma);
        let share: Vec<Fp> = (0..n as u64).map(|j| Fp::from_u64(j * j + 3)).collect();
        let mm = masked_memory(&share, &holder);
        let chunks: Vec<MaskedMemory> = masked_memory_messages(&mm).collect();
        assert_eq!(
            chunks.iter().map(|c| c.values.len()).collect::<Vec<_>>(),
            masked_memory_chunks(m).collect::<Vec<_>>()
        );
        assert_eq!(masked_memory_chunks(3 * MASKED_MEMORY_CHUNK + 1).count(), 4);
        let mut reader = ReaderEpoch {
            map: map.map,
            chooser: pot::Chooser::new(m, &to_c),
            m_prime: mm,
            positions: Vec::new(),
        };
        let helper = HelperEpoch {
            sigma,
            receiver: pot::Receiver::new(m, &to_r),
        };
        let prf = LegendrePrf::new(holder.key.clone());
        for j in [0usize, 7, n - 1, n, m - 1] {
            let tag = prf.eval(Fp::from_u64(j as u64)) as u64;
            let (pos, x) = reader.read(tag);
            assert_eq!(pos, helper.sigma[j] as usize);
            let msg = reader.chooser.access(pos).unwrap();
            let r = helper.receiver.receive(PartyId::P0, &msg).unwrap();
            let expect = if j < n { share[j] } else { Fp::ZERO };
            assert_eq!(x - r, expect, "cell {j}");
        }
    }
}
