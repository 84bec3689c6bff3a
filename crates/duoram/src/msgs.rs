//! Wire format of Duoram's messages.
//!
//! Every message is one transport frame whose payload length follows exactly from the public
//! parameters (memory size, batch size, word type). The receiver checks the length before
//! decoding anything, then each element (words must be canonical, index shares below `2^h`,
//! bits 0 or 1), and reports the first violation as a typed error naming the sender.
//!
//! Which message a frame is, and which preprocessing material it belongs to, is checked by the
//! transport, not here: every frame carries its per-link sequence number and the sender's
//! [`Phase`], which Duoram sets to the low 16 bits of the id of the material a step consumes
//! (the batch's first id while preprocessing, the operation's id online; [`Phase::DEFAULT`] for
//! setup and Init). So a lost, repeated or reordered frame is `NetError::OutOfSequence`, and
//! parties whose pools are out of step (e.g. material discarded at one party only) are
//! `NetError::WrongPhase` at the first message of the operation — both naming the sender —
//! instead of a message of the right size being taken for another.
//!
//! With `h` the depth of the DPF tree, `L = h − min(4, h)` its expanded levels and
//! `K = 2^min(4, h)` the leaves per output node (bytes; a word is `W::BYTES`):
//!
//! | message | arrow | payload |
//! |---|---|---|
//! | dealer correlations | preprocessing, P2 → P1 | `16·L` bytes + `5K` words per DPF (Z₁ of each level's AND; the bilinear and Beaver correlations) |
//! | masked AND inputs | preprocessing, P_b → P_{1−b} | `L` bytes + 16 + `3K` words per DPF |
//! | level share | preprocessing, P_b → P_{1−b}, once per level | 16 per DPF |
//! | Beaver openings | preprocessing, P_b → P_{1−b} | `1 + 2K` words per DPF |
//! | output-correction shares | preprocessing, P_b → P_{1−b} | `2K` words per DPF |
//! | key half: tree | preprocessing, P_b → P2 | `16 + 16·L` per operation |
//! | key half: output corrections | preprocessing, P_b → P2 | `2K` words per operation |
//! | offset | READ/UPDATE, everyone → everyone | 1 word (+ delta words for UPDATE) |
//! | γ | READ, P2 → P_b | 1 word |

use doram_core::wire::{self, PeerFault};
use doram_core::{CodecError, PartyId};
use doram_field::Group;
use doram_net::Phase;
use doram_prim::aes::Block;

use crate::error::DuoramError;

/// The transport phase of the steps that consume material `id`: its low 16 bits, so that pools
/// out of step by fewer than 2^16 operations fail at once.
pub(crate) fn material_phase(id: u64) -> Phase {
    Phase(id as u16)
}

/// A message being built.
pub(crate) struct Out {
    pub(crate) buf: Vec<u8>,
}

impl Out {
    pub(crate) fn new(payload: usize) -> Out {
        Out {
            buf: Vec::with_capacity(payload),
        }
    }

    pub(crate) fn word<W: Group>(&mut self, w: W) {
        let start = self.buf.len();
        self.buf.resize(start + W::BYTES, 0);
        w.write_le(&mut self.buf[start..]);
    }

    pub(crate) fn block(&mut self, b: Block) {
        self.buf.extend_from_slice(&b.to_le_bytes());
    }

    pub(crate) fn bit(&mut self, b: bool) {
        self.buf.push(u8::from(b));
    }
}

/// A received message being parsed; every accessor is bounds-safe because the length was checked
/// up front.
pub(crate) struct In {
    bytes: Vec<u8>,
    pos: usize,
    peer: PartyId,
    what: &'static str,
}

impl In {
    /// Checks the exact length.
    pub(crate) fn open(
        bytes: Vec<u8>,
        peer: PartyId,
        what: &'static str,
        payload: usize,
    ) -> Result<In, DuoramError> {
        wire::exact_len(peer, what, &bytes, payload)?;
        Ok(In {
            bytes,
            pos: 0,
            peer,
            what,
        })
    }

    fn malformed(&self, source: CodecError) -> DuoramError {
        PeerFault::new(self.peer, self.what, source).into()
    }

    pub(crate) fn word<W: Group>(&mut self) -> Result<W, DuoramError> {
        let r = W::read_le(&self.bytes[self.pos..self.pos + W::BYTES]);
        self.pos += W::BYTES;
        r.map_err(|e| self.malformed(e))
    }

    pub(crate) fn block(&mut self) -> Block {
        let mut b = [0u8; 16];
        b.copy_from_slice(&self.bytes[self.pos..self.pos + 16]);
        self.pos += 16;
        u128::from_le_bytes(b)
    }

    pub(crate) fn bit(&mut self) -> Result<bool, DuoramError> {
        let b = self.bytes[self.pos];
        self.pos += 1;
        match b {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.malformed(CodecError::OutOfRange {
                what: "a bit byte is neither 0 nor 1",
            })),
        }
    }

    /// Fails with a malformed-message error unless `ok`.
    pub(crate) fn check(&self, ok: bool, what: &'static str) -> Result<(), DuoramError> {
        if ok {
            Ok(())
        } else {
            Err(self.malformed(CodecError::OutOfRange { what }))
        }
    }

    /// An index share that must lie below `bound`.
    pub(crate) fn bounded(&mut self, value: u128, bound: u128) -> Result<u128, DuoramError> {
        if value < bound {
            Ok(value)
        } else {
            Err(self.malformed(CodecError::OutOfRange {
                what: "an index share is not below the domain size",
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Z64;

    #[test]
    fn round_trip_and_rejections() {
        let mut o = Out::new(8 + 16 + 1);
        o.word(Z64(5));
        o.block(99);
        o.bit(true);
        let bytes = o.buf.clone();
        let mut i = In::open(bytes.clone(), PartyId::P1, "x", 25).unwrap();
        assert_eq!(i.word::<Z64>().unwrap(), Z64(5));
        assert_eq!(i.block(), 99);
        assert!(i.bit().unwrap());
        assert!(matches!(
            In::open(bytes.clone(), PartyId::P1, "x", 24),
            Err(DuoramError::Peer(PeerFault {
                fault: CodecError::WrongLength {
                    expected: 24,
                    got: 25
                },
                ..
            }))
        ));
        assert_eq!(material_phase(0x1_0007), Phase(7));
        let mut bad = bytes;
        *bad.last_mut().unwrap() = 2;
        let mut i = In::open(bad, PartyId::P2, "x", 25).unwrap();
        i.word::<Z64>().unwrap();
        i.block();
        assert!(matches!(
            i.bit(),
            Err(DuoramError::Peer(PeerFault {
                peer: PartyId::P2,
                ..
            }))
        ));
        assert!(i.bounded(3, 4).is_ok() && i.bounded(4, 4).is_err());
    }
}
