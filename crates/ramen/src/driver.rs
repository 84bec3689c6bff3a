//! The I/O of Ramen: [`Channel`] sends and receives the typed messages of [`crate::msgs`], of the
//! DOPRF (`doram_doprf::msgs`) and of the three-party engine (`doram_mpc::msgs`) over a
//! [`Session`]. This is the only module that touches the transport.
//!
//! Every frame starts with a one-byte sequence number per directed link, so that a lost,
//! duplicated or reordered frame is detected by the very next receive
//! ([`RamenError::Peer`] naming the sender) rather than being misread as the next message of
//! the same size. Every receive knows the exact size it expects (from the parameters), rejects
//! any other naming the sender before decoding, and reports an undecodable payload likewise.
//!
//! The protocol modules ([`crate::stash`], [`crate::read`], [`crate::refresh`]) compute messages
//! and consume them without I/O; [`crate::doram`] calls these functions round by round, sending
//! every message of a round before receiving any (sends never block), so that independent
//! sub-protocols share rounds.

use doram_core::PartyId;
use doram_core::wire::{self, Blame, PeerFault};
use doram_doprf::msgs::WireMessage;
use doram_field::{Fp, Group};
use doram_mpc::{Expected, Inbound, Outgoing};
use doram_net::Session;

use crate::error::RamenError;
use crate::msgs::Message;

/// A [`Session`] with per-link sequence numbers.
pub(crate) struct Channel {
    session: Session,
    sent: [u8; 3],
    received: [u8; 3],
}

impl Channel {
    /// Wraps `session` (three parties).
    pub(crate) fn new(session: Session) -> Channel {
        Channel {
            session,
            sent: [0; 3],
            received: [0; 3],
        }
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

    /// A frame for `to`, starting with the link's next sequence number.
    fn frame(&mut self, to: PartyId, capacity: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + capacity);
        let seq = &mut self.sent[to.index() % 3];
        out.push(*seq);
        *seq = seq.wrapping_add(1);
        out
    }

    /// Receives a frame from `from` and checks its sequence number; returns the frame, whose
    /// payload is `frame[1..]`.
    fn receive(&mut self, from: PartyId, what: &'static str) -> Result<Vec<u8>, RamenError> {
        let bytes = self.session.recv_bytes(from)?;
        let expected = &mut self.received[from.index() % 3];
        match bytes.first() {
            Some(&seq) if seq == *expected => {
                *expected = expected.wrapping_add(1);
                Ok(bytes)
            }
            Some(_) => Err(PeerFault::malformed(
                from,
                what,
                "a frame out of sequence (a message was lost, repeated or reordered)",
            )
            .into()),
            None => Err(PeerFault::wrong_length(from, what, 1, 0).into()),
        }
    }

    /// Sends `msg` to `to`.
    pub(crate) fn send<M: Message>(&mut self, to: PartyId, msg: &M) -> Result<(), RamenError> {
        let mut out = self.frame(to, 0);
        msg.encode_into(&mut out);
        self.session.send_bytes(to, &out)?;
        Ok(())
    }

    /// Receives an `M` of shape `shape` from `from`.
    pub(crate) fn recv<M: Message>(
        &mut self,
        from: PartyId,
        shape: M::Shape,
    ) -> Result<M, RamenError> {
        let frame = self.receive(from, M::WHAT)?;
        let bytes = &frame[1..];
        if let Some(expected) = M::wire_len(shape)
            && bytes.len() != expected
        {
            return Err(PeerFault::wrong_length(from, M::WHAT, expected, bytes.len()).into());
        }
        Ok(M::decode(bytes, shape).blame(from, M::WHAT)?)
    }

    /// Sends a DOPRF message to `to`.
    pub(crate) fn send_doprf<M: WireMessage>(
        &mut self,
        to: PartyId,
        msg: &M,
    ) -> Result<(), RamenError> {
        let body = msg.encode();
        let mut out = self.frame(to, body.len());
        out.extend_from_slice(&body);
        self.session.send_bytes(to, &out)?;
        Ok(())
    }

    /// Receives the DOPRF message `M` for `count` evaluations under `params` from `from`.
    pub(crate) fn recv_doprf<M: WireMessage>(
        &mut self,
        from: PartyId,
        params: &doram_doprf::Params,
        count: usize,
    ) -> Result<M, RamenError> {
        let frame = self.receive(from, M::WHAT)?;
        let bytes = &frame[1..];
        let expected = M::wire_len(params, count);
        wire::exact_len(from, M::WHAT, bytes, expected)?;
        Ok(M::decode(bytes, params, count).blame(from, M::WHAT)?)
    }

    /// Sends the engine's outgoing messages of one round.
    pub(crate) fn send_mpc(&mut self, out: &[Outgoing<Fp>]) -> Result<(), RamenError> {
        for m in out {
            let mut frame = self.frame(m.to, m.elems.len() * Fp::BYTES);
            for x in &m.elems {
                frame.extend_from_slice(&x.to_le_bytes());
            }
            self.session.send_bytes(m.to, &frame)?;
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
                let frame = self.receive(e.from, what)?;
                let elems = doram_field::decode_vec(&frame[1..], e.count).blame(e.from, what)?;
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
        let mut out = self.frame(to, bytes.len());
        out.extend_from_slice(bytes);
        self.session.send_bytes(to, &out)?;
        Ok(())
    }

    /// Receives exactly `len` raw bytes from `from`.
    pub(crate) fn recv_raw(
        &mut self,
        from: PartyId,
        len: usize,
        what: &'static str,
    ) -> Result<Vec<u8>, RamenError> {
        let mut frame = self.receive(from, what)?;
        if frame.len() != len + 1 {
            return Err(PeerFault::wrong_length(from, what, len, frame.len() - 1).into());
        }
        frame.remove(0);
        Ok(frame)
    }
}
