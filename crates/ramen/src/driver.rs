//! The I/O of Ramen: [`Channel`] sends and receives the typed messages of [`crate::msgs`], of the
//! DOPRF (`doram_doprf::msgs`) and of the three-party engine (`doram_mpc::msgs`) over a
//! [`Session`]. This is the only module that touches the transport.
//!
//! Every message is one frame whose payload is exactly the message's encoding. A lost,
//! repeated or reordered frame is caught by the transport's per-link sequence number at the
//! very next receive ([`doram_net::NetError::OutOfSequence`], as [`RamenError::Net`] naming the
//! sender), so it is never misread as the next message of the same size. Every receive knows
//! the exact size it expects (from the parameters), rejects any other naming the sender before
//! decoding, and reports an undecodable payload likewise ([`RamenError::Peer`]). Ramen declares
//! no [`doram_net::Phase`]s: its parties run the same rounds in the same order, and the
//! sequence check already ties every frame to its place in that order.
//!
//! The protocol modules ([`crate::stash`], [`crate::read`], [`crate::refresh`]) compute messages
//! and consume them without I/O; [`crate::doram`] calls these functions round by round, sending
//! every message of a round before receiving any (sends never block), so that independent
//! sub-protocols share rounds.

use doram_core::PartyId;
use doram_core::wire::{self, Blame};
use doram_doprf::msgs::WireMessage;
use doram_field::Fp;
use doram_mpc::{Expected, Inbound, Outgoing};
use doram_net::Session;

use crate::error::RamenError;
use crate::msgs::Message;

/// A [`Session`] that sends and receives Ramen's typed messages.
pub(crate) struct Channel {
    session: Session,
}

impl Channel {
    /// Wraps `session` (three parties).
    pub(crate) fn new(session: Session) -> Channel {
        Channel { session }
    }

    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    pub(crate) fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    pub(crate) fn me(&self) -> PartyId {
        self.session.me()
    }

    /// Sends `msg` to `to`.
    pub(crate) fn send<M: Message>(&mut self, to: PartyId, msg: &M) -> Result<(), RamenError> {
        self.session.send_bytes(to, &msg.encode())?;
        Ok(())
    }

    /// Receives an `M` of shape `shape` from `from`.
    pub(crate) fn recv<M: Message>(
        &mut self,
        from: PartyId,
        shape: M::Shape,
    ) -> Result<M, RamenError> {
        let bytes = self.session.recv_bytes(from)?;
        if let Some(expected) = M::wire_len(shape) {
            wire::exact_len(from, M::WHAT, &bytes, expected)?;
        }
        Ok(M::decode(&bytes, shape).blame(from, M::WHAT)?)
    }

    /// Sends a DOPRF message to `to`.
    pub(crate) fn send_doprf<M: WireMessage>(
        &mut self,
        to: PartyId,
        msg: &M,
    ) -> Result<(), RamenError> {
        self.session.send_bytes(to, &msg.encode())?;
        Ok(())
    }

    /// Receives the DOPRF message `M` for `count` evaluations under `params` from `from`.
    pub(crate) fn recv_doprf<M: WireMessage>(
        &mut self,
        from: PartyId,
        params: &doram_doprf::Params,
        count: usize,
    ) -> Result<M, RamenError> {
        let bytes = self.session.recv_bytes(from)?;
        let expected = M::wire_len(params, count);
        wire::exact_len(from, M::WHAT, &bytes, expected)?;
        Ok(M::decode(&bytes, params, count).blame(from, M::WHAT)?)
    }

    /// Sends the engine's outgoing messages of one round.
    pub(crate) fn send_mpc(&mut self, out: &[Outgoing<Fp>]) -> Result<(), RamenError> {
        for m in out {
            self.session.send_elems(m.to, &m.elems)?;
        }
        Ok(())
    }

    /// Receives the engine's expected messages of one round, in order.
    pub(crate) fn recv_mpc(
        &mut self,
        expected: &[Expected],
    ) -> Result<Vec<Inbound<Fp>>, RamenError> {
        expected
            .iter()
            .map(|e| {
                let what = e.kind.name();
                let bytes = self.session.recv_bytes(e.from)?;
                let elems = doram_field::decode_vec(&bytes, e.count).blame(e.from, what)?;
                Ok(Inbound {
                    from: e.from,
                    kind: e.kind,
                    elems,
                })
            })
            .collect()
    }

    /// Sends raw bytes (setup seeds) to `to`.
    pub(crate) fn send_raw(&mut self, to: PartyId, bytes: &[u8]) -> Result<(), RamenError> {
        self.session.send_bytes(to, bytes)?;
        Ok(())
    }

    /// Receives exactly `len` raw bytes from `from`.
    pub(crate) fn recv_raw(
        &mut self,
        from: PartyId,
        len: usize,
        what: &'static str,
    ) -> Result<Vec<u8>, RamenError> {
        let bytes = self.session.recv_bytes(from)?;
        wire::exact_len(from, what, &bytes, len)?;
        Ok(bytes)
    }
}
