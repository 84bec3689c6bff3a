//! The I/O of Ramen: sending and receiving the typed messages of [`crate::msgs`], of the DOPRF
//! (`doram_doprf::msgs`) and of the three-party engine (`doram_mpc::msgs`) over a [`Session`].
//!
//! Every receive knows the exact size it expects (from the parameters), rejects any other with
//! [`RamenError::WrongLength`] naming the sender before decoding, and reports an undecodable
//! payload as [`RamenError::Malformed`]. The protocol modules ([`crate::stash`],
//! [`crate::read`], [`crate::refresh`]) compute messages and consume them without I/O; the
//! orchestration in [`crate::doram`] calls these functions round by round, sending every
//! message of a round before receiving any (sends never block), so independent sub-protocols
//! share rounds.

use doram_core::PartyId;
use doram_doprf::msgs::WireMessage;
use doram_field::Fp;
use doram_mpc::{Expected, Inbound, Outgoing};
use doram_net::Session;

use crate::error::RamenError;
use crate::msgs::Message;

/// Sends `msg` to `to`.
pub(crate) fn send<M: Message>(session: &mut Session, to: PartyId, msg: &M) -> Result<(), RamenError> {
    session.send_bytes(to, &msg.encode())?;
    Ok(())
}

/// Receives an `M` of shape `shape` from `from`.
pub(crate) fn recv<M: Message>(
    session: &mut Session,
    from: PartyId,
    shape: M::Shape,
) -> Result<M, RamenError> {
    let bytes = session.recv_bytes(from)?;
    if let Some(expected) = M::wire_len(shape)
        && bytes.len() != expected
    {
        return Err(RamenError::WrongLength {
            peer: from,
            what: M::WHAT,
            expected,
            got: bytes.len(),
        });
    }
    M::decode(&bytes, shape).map_err(|source| RamenError::Malformed {
        peer: from,
        what: M::WHAT,
        source,
    })
}

/// Sends a DOPRF message to `to`.
pub(crate) fn send_doprf<M: WireMessage>(
    session: &mut Session,
    to: PartyId,
    msg: &M,
) -> Result<(), RamenError> {
    session.send_bytes(to, &msg.encode())?;
    Ok(())
}

/// Receives the DOPRF message `M` for `count` evaluations under `params` from `from`.
pub(crate) fn recv_doprf<M: WireMessage>(
    session: &mut Session,
    from: PartyId,
    params: &doram_doprf::Params,
    count: usize,
) -> Result<M, RamenError> {
    let bytes = session.recv_bytes(from)?;
    let expected = M::wire_len(params, count);
    if bytes.len() != expected {
        return Err(RamenError::WrongLength {
            peer: from,
            what: M::WHAT,
            expected,
            got: bytes.len(),
        });
    }
    M::decode(&bytes, params, count).map_err(|source| RamenError::Malformed {
        peer: from,
        what: M::WHAT,
        source,
    })
}

/// Sends the engine's outgoing messages of one round.
pub(crate) fn send_mpc(session: &mut Session, out: &[Outgoing<Fp>]) -> Result<(), RamenError> {
    for m in out {
        session.send_elems(m.to, &m.elems)?;
    }
    Ok(())
}

/// Receives the engine's expected messages of one round, in order.
pub(crate) fn recv_mpc(
    session: &mut Session,
    expected: &[Expected],
) -> Result<Vec<Inbound<Fp>>, RamenError> {
    expected
        .iter()
        .map(|e| {
            let elems = session.recv_elems::<Fp>(e.from, e.count)?;
            Ok(Inbound {
                from: e.from,
                kind: e.kind,
                elems,
            })
        })
        .collect()
}
