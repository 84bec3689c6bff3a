//! **Insecure** test fixtures: a dealer that turns a plaintext ORAM into both parties' states,
//! and the inverse. The dealer sees every secret; it exists so that the access protocol can be
//! tested apart from the load. Nothing outside tests and test benches may use it.

use doram_prim::aes::Block;
use rand_core::RngCore;

use crate::circuits::SlotCodec;
use crate::driver::{ClientState, ServerState};
use crate::params::Params;
use crate::plain::PlainTreeOram;
use crate::storage::{EncTree, PadKey, bit, pack};
use crate::tree::Slot;

fn block<R: RngCore + ?Sized>(rng: &mut R) -> Block {
    (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())
}

/// Both parties' states holding `plain`'s contents, under the garbler's `delta`.
pub fn deal_insecurely<R: RngCore + ?Sized>(
    plain: &PlainTreeOram,
    delta: Block,
    rng: &mut R,
) -> (ServerState, ClientState) {
    let params = *plain.params();
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let key = PadKey::new(key);
    let mut nonce = 0u64;
    let mut trees = Vec::with_capacity(params.trees());
    for i in 0..params.trees() {
        let g = params.tree(i);
        let codec = SlotCodec::new(&params, i);
        let tree = plain.tree(i);
        let bucket_bits = g.bucket * codec.slot_bits();
        let mut enc = EncTree::new(g.buckets(), bucket_bits);
        for b in 0..g.buckets() {
            let mut bits = Vec::with_capacity(bucket_bits);
            for s in b * g.bucket..(b + 1) * g.bucket {
                codec.encode(&tree.slots()[s], tree.payload(s), &mut bits);
            }
            nonce += 1;
            let mut pad = Vec::new();
            key.pad_bytes(i, nonce, bucket_bits, &mut pad);
            let cipher = pack(bits.iter().enumerate().map(|(k, &m)| m ^ bit(&pad, k)));
            enc.store(b, nonce, &cipher);
        }
        trees.push(enc);
    }
    let w = params.base_entry_bits() as usize;
    let (mut server_base, mut client_base) = (Vec::new(), Vec::new());
    for &leaf in plain.base() {
        for k in 0..w {
            let z = block(rng);
            server_base.push(z);
            client_base.push(if (leaf >> k) & 1 == 1 { z ^ delta } else { z });
        }
    }
    let zero = block(rng);
    (
        ServerState {
            params,
            trees,
            base: server_base,
            zero,
            next_nonce: nonce + 1,
            sparse: false,
        },
        ClientState {
            params,
            key,
            base: client_base,
            zero,
            last_nonce: nonce,
            sparse: false,
        },
    )
}

/// The plaintext slots of every tree (`(slot, payload)` per slot) and the base map, from the
/// server's trees and the client's key.
pub fn open_insecurely(
    params: &Params,
    trees: &[EncTree],
    key: &PadKey,
) -> Vec<Vec<(Slot, Vec<u64>)>> {
    (0..params.trees())
        .map(|i| {
            let g = params.tree(i);
            let codec = SlotCodec::new(params, i);
            let s = codec.slot_bits();
            let t = &trees[i];
            (0..g.buckets())
                .flat_map(|b| {
                    let mut pad = Vec::new();
                    key.pad_bytes(i, t.nonce(b), t.bucket_bits(), &mut pad);
                    let bits: Vec<bool> = (0..t.bucket_bits())
                        .map(|k| t.bit(b, k) ^ bit(&pad, k))
                        .collect();
                    bits.chunks(s).map(|c| codec.decode(c)).collect::<Vec<_>>()
                })
                .collect()
        })
        .collect()
}

/// Both parties' states for `params` holding `data(v)` at every address, every item on a
/// uniformly random leaf and placed as low as possible on its path — what
/// [`PlainTreeOram::load`] does, built straight into ciphertexts bucket by bucket so that 2^20
/// items of 512 bits fit in memory (about 6 GB of ciphertext and a slot table).
///
/// # Errors
/// [`crate::plain::Overflow`] if a path fills up during placement.
pub fn deal_random_insecurely<R: RngCore + ?Sized>(
    params: Params,
    mut data: impl FnMut(u64) -> Vec<u64>,
    delta: Block,
    rng: &mut R,
) -> Result<(ServerState, ClientState), crate::plain::Overflow> {
    use crate::params::RADIX;
    use crate::tree::{path, uniform_below};
    const EMPTY: u32 = u32::MAX;
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let key = PadKey::new(key);
    let mut nonce = 0u64;
    let mut trees = Vec::with_capacity(params.trees());
    let mut below: Vec<u64> = Vec::new();
    for i in 0..params.trees() {
        let g = params.tree(i);
        let codec = SlotCodec::new(&params, i);
        let leaves: Vec<u64> = (0..g.items)
            .map(|_| uniform_below(rng, g.leaves()))
            .collect();
        // Place: the slot of each item, lowest bucket with room on its path.
        let mut slots = vec![EMPTY; g.slots()];
        let mut load = vec![0usize; g.buckets()];
        for (item, &leaf) in leaves.iter().enumerate() {
            let bucket = path(g.height, leaf)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .find(|&b| load[b] < g.bucket)
                .ok_or(crate::plain::Overflow { tree: i })?;
            slots[bucket * g.bucket + load[bucket]] = item as u32;
            load[bucket] += 1;
        }
        let bucket_bits = g.bucket * codec.slot_bits();
        let mut enc = EncTree::new(g.buckets(), bucket_bits);
        let empty_payload = vec![
            0u64;
            if i == 0 {
                params.payload_bits().div_ceil(64)
            } else {
                RADIX
            }
        ];
        let mut bits = Vec::with_capacity(bucket_bits);
        let mut pad = Vec::new();
        for b in 0..g.buckets() {
            bits.clear();
            for &item in &slots[b * g.bucket..(b + 1) * g.bucket] {
                if item == EMPTY {
                    codec.encode(&Slot::default(), &empty_payload, &mut bits);
                    continue;
                }
                let addr = u64::from(item);
                let payload = if i == 0 {
                    data(addr)
                } else {
                    (0..RADIX as u64)
                        .map(|j| {
                            below
                                .get((addr * RADIX as u64 + j) as usize)
                                .copied()
                                .unwrap_or(0)
                        })
                        .collect()
                };
                let slot = Slot {
                    valid: true,
                    addr,
                    leaf: leaves[item as usize],
                };
                codec.encode(&slot, &payload, &mut bits);
            }
            nonce += 1;
            pad.clear();
            key.pad_bytes(i, nonce, bucket_bits, &mut pad);
            let cipher = pack(bits.iter().enumerate().map(|(k, &m)| m ^ bit(&pad, k)));
            enc.store(b, nonce, &cipher);
        }
        trees.push(enc);
        below = leaves;
    }
    let w = params.base_entry_bits() as usize;
    let (mut server_base, mut client_base) = (Vec::new(), Vec::new());
    for &leaf in &below {
        for k in 0..w {
            let z = block(rng);
            server_base.push(z);
            client_base.push(if (leaf >> k) & 1 == 1 { z ^ delta } else { z });
        }
    }
    let zero = block(rng);
    Ok((
        ServerState {
            params,
            trees,
            base: server_base,
            zero,
            next_nonce: nonce + 1,
            sparse: false,
        },
        ClientState {
            params,
            key,
            base: client_base,
            zero,
            last_nonce: nonce,
            sparse: false,
        },
    ))
}
