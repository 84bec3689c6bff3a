//! An ORAM that starts **empty**, set up by the two parties alone: every address reads 0
//! until it is written. This is the starting point of GKK12's own initialisation (Figure 1:
//! the array enters by one ORAM write per item), and of a memory whose contents a program
//! writes as it goes.
//!
//! # Why it stays oblivious
//! Nothing is placed, so nobody knows where anything starts. What must hold is that every
//! leaf revealed is fresh and uniform, also when the block it comes from was never written:
//! * the base map starts as random bits neither party knows (the client's random choices by
//!   correlated OT, shifted by the server's random bits);
//! * a position-map block that is not on its path reads as fresh random bits neither party
//!   knows (the sparse lookup, [`lookup_circuit_with`](crate::circuits::lookup_circuit_with)),
//!   and is then written back like any other, so the leaves it holds are fixed from then on;
//! * a data item that is not on its path reads as 0, and is written back with its fresh leaf.
//!
//! Whether a block existed stays inside the circuits; the access is the same sequence of
//! messages of the same sizes either way. Every bucket starts never written (nonce 0, which
//! [`EncTree`] reads as the empty bucket without storing it), so the trees take memory only as
//! accesses write them.
//!
//! Messages: the base map's bits by correlated OT (one per bit) and the constant 0's label,
//! 16 bytes from server to client.

use doram_core::wire;
use doram_net::Session;
use doram_prim::aes::Block;
use doram_twopc::driver::{cot_receive, cot_send, peer};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use rand_core::{CryptoRng, RngCore};

use crate::circuits::SlotCodec;
use crate::driver::{ClientState, Gkk12Error, ServerState};
use crate::load::block;
use crate::params::Params;
use crate::storage::{EncTree, PadKey};

/// The server's label of the constant 0, drawn and sent to the client ([`recv_zero`]).
pub(crate) fn send_zero<R: RngCore + ?Sized>(
    session: &mut Session,
    rng: &mut R,
) -> Result<Block, Gkk12Error> {
    let zero = block(rng);
    session.send_bytes(peer(session)?, &zero.to_le_bytes())?;
    Ok(zero)
}

/// The client's label of the constant 0, from the server ([`send_zero`]).
pub(crate) fn recv_zero(session: &mut Session) -> Result<Block, Gkk12Error> {
    let from = peer(session)?;
    let z = session.recv_bytes(from)?;
    wire::exact_len(from, "constant-zero label", &z, 16)?;
    Ok(Block::from_le_bytes(z.try_into().unwrap_or([0; 16])))
}

/// Bits of the base map.
fn base_len(params: &Params) -> usize {
    params.base_entries() as usize * params.base_entry_bits() as usize
}

/// Every tree, never written.
fn empty_trees(params: &Params) -> Vec<EncTree> {
    (0..params.trees())
        .map(|i| {
            let g = params.tree(i);
            EncTree::new(
                g.buckets(),
                g.bucket * SlotCodec::new(params, i).slot_bits(),
            )
        })
        .collect()
}

/// The server's state of an empty ORAM over the two-party `session`; `ot`'s Δ is the
/// garbler's (pass the same `ot` to [`Server::new`](crate::driver::Server::new)). Pairs with
/// [`client_state`].
///
/// # Errors
/// Transport failures; a malformed OT message.
pub fn server_state<S: CotExtSender, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: &Params,
    ot: &mut S,
    rng: &mut R,
) -> Result<ServerState, Gkk12Error> {
    let n = base_len(params);
    let delta = ot.delta();
    let base = if n == 0 {
        Vec::new()
    } else {
        cot_send(session, ot, n)?
            .q
            .into_iter()
            .map(|z| {
                if rng.next_u32() & 1 == 1 {
                    z ^ delta
                } else {
                    z
                }
            })
            .collect()
    };
    let zero = send_zero(session, rng)?;
    Ok(ServerState {
        params: *params,
        trees: empty_trees(params),
        base,
        zero,
        next_nonce: 1,
        sparse: true,
    })
}

/// The client's state of an empty ORAM: a fresh pad key from `rng`, the base map's labels by
/// correlated OT on random choices, the constant 0's label. Pairs with [`server_state`].
///
/// # Errors
/// Transport failures; a malformed message.
pub fn client_state<O: CotExtReceiver, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: &Params,
    ot: &mut O,
    rng: &mut R,
) -> Result<ClientState, Gkk12Error> {
    let mut key = [0u8; 16];
    rng.fill_bytes(&mut key);
    let n = base_len(params);
    let base = if n == 0 {
        Vec::new()
    } else {
        let choices: Vec<bool> = (0..n).map(|_| rng.next_u32() & 1 == 1).collect();
        cot_receive(session, ot, &choices)?.t
    };
    let zero = recv_zero(session)?;
    Ok(ClientState {
        params: *params,
        key: PadKey::new(key),
        base,
        zero,
        last_nonce: 0,
        sparse: true,
    })
}
