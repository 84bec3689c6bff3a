//! The two OT extensions behind one interface: [`CotExtSender`] and [`CotExtReceiver`] are
//! implemented by IKNP ([`crate::iknp`]) and SoftSpoken ([`crate::softspoken`]), so the
//! driver's correlated, random and chosen-message OT functions and the garbled-circuit driver
//! take either. Both produce the same outputs ([`CotSender`], [`CotReceiver`]) from one
//! receiver → sender message per batch.

use doram_core::PartyId;
use doram_core::wire::PeerFault;
use doram_prim::aes::Block;

use crate::iknp::{self, CotReceiver, CotSender, IknpReceiver, IknpSender};
use crate::softspoken::{SoftSpokenReceiver, SoftSpokenSender};

/// The sender of an OT extension with global correlation Δ, after setup.
pub trait CotExtSender {
    /// Δ, the global correlation.
    fn delta(&self) -> Block;

    /// Bytes of the receiver's extension message for `m` OTs.
    fn extend_msg_len(&self, m: usize) -> usize;

    /// Consumes the receiver's extension message for `m` OTs: the sender's side of `m`
    /// correlated OTs.
    ///
    /// # Errors
    /// [`PeerFault`] naming `peer` if `msg` is not [`extend_msg_len`](Self::extend_msg_len)`(m)`
    /// bytes.
    fn extend(&mut self, peer: PartyId, m: usize, msg: &[u8]) -> Result<CotSender, PeerFault>;

    /// [`extend`](Self::extend) with the outputs `q_i` appended to `q`; returns the index of
    /// the first OT.
    ///
    /// # Errors
    /// As [`extend`](Self::extend).
    fn extend_into(
        &mut self,
        peer: PartyId,
        m: usize,
        msg: &[u8],
        q: &mut Vec<Block>,
    ) -> Result<u64, PeerFault> {
        let part = self.extend(peer, m, msg)?;
        q.extend_from_slice(&part.q);
        Ok(part.first)
    }
}

/// The receiver of an OT extension, after setup.
pub trait CotExtReceiver {
    /// Bytes of the extension message for `m` OTs.
    fn extend_msg_len(&self, m: usize) -> usize;

    /// Extends to `choices.len()` correlated OTs: the receiver's outputs and the message for
    /// the sender.
    fn extend(&mut self, choices: &[bool]) -> (CotReceiver, Vec<u8>);

    /// [`extend`](Self::extend) with the outputs `t_i` appended to `t`: the index of the first
    /// OT and the message for the sender.
    fn extend_into(&mut self, choices: &[bool], t: &mut Vec<Block>) -> (u64, Vec<u8>) {
        let (part, msg) = self.extend(choices);
        t.extend_from_slice(&part.t);
        (part.first, msg)
    }
}

impl CotExtSender for IknpSender {
    fn delta(&self) -> Block {
        IknpSender::delta(self)
    }
    fn extend_msg_len(&self, m: usize) -> usize {
        iknp::extend_msg_len(m)
    }
    fn extend(&mut self, peer: PartyId, m: usize, msg: &[u8]) -> Result<CotSender, PeerFault> {
        IknpSender::extend(self, peer, m, msg)
    }
    fn extend_into(
        &mut self,
        peer: PartyId,
        m: usize,
        msg: &[u8],
        q: &mut Vec<Block>,
    ) -> Result<u64, PeerFault> {
        IknpSender::extend_into(self, peer, m, msg, q)
    }
}

impl CotExtReceiver for IknpReceiver {
    fn extend_msg_len(&self, m: usize) -> usize {
        iknp::extend_msg_len(m)
    }
    fn extend(&mut self, choices: &[bool]) -> (CotReceiver, Vec<u8>) {
        IknpReceiver::extend(self, choices)
    }
    fn extend_into(&mut self, choices: &[bool], t: &mut Vec<Block>) -> (u64, Vec<u8>) {
        IknpReceiver::extend_into(self, choices, t)
    }
}

impl CotExtSender for SoftSpokenSender {
    fn delta(&self) -> Block {
        SoftSpokenSender::delta(self)
    }
    fn extend_msg_len(&self, m: usize) -> usize {
        self.k().extend_msg_len(m)
    }
    fn extend(&mut self, peer: PartyId, m: usize, msg: &[u8]) -> Result<CotSender, PeerFault> {
        SoftSpokenSender::extend(self, peer, m, msg)
    }
    fn extend_into(
        &mut self,
        peer: PartyId,
        m: usize,
        msg: &[u8],
        q: &mut Vec<Block>,
    ) -> Result<u64, PeerFault> {
        SoftSpokenSender::extend_into(self, peer, m, msg, q)
    }
}

impl CotExtReceiver for SoftSpokenReceiver {
    fn extend_msg_len(&self, m: usize) -> usize {
        self.k().extend_msg_len(m)
    }
    fn extend(&mut self, choices: &[bool]) -> (CotReceiver, Vec<u8>) {
        SoftSpokenReceiver::extend(self, choices)
    }
    fn extend_into(&mut self, choices: &[bool], t: &mut Vec<Block>) -> (u64, Vec<u8>) {
        SoftSpokenReceiver::extend_into(self, choices, t)
    }
}
