//! The messages of the engine: one [`MsgKind`] per arrow, and the envelopes the I/O-free round
//! functions exchange with the driver ([`Outgoing`], [`Expected`], [`Inbound`]).
//!
//! On the wire every message is a raw little-endian vector of ring elements
//! ([`doram_field::encode_vec`]) with no length prefix; the receiver knows the element count
//! from the operation and the batch length (`k`), and rejects any other size with
//! [`MpcError::Peer`](crate::MpcError::Peer). Batches of length 0 send nothing.

use doram_core::PartyId;
use doram_field::Group;

/// Which arrow of which operation a message is. `k` is the batch length, `i` the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MsgKind {
    /// Setup: `P_i → P_{i±1}`, this party's 16-byte contribution to the pair's PRG seed.
    SetupSeed,
    /// ⟨x⟩ → ⟦x⟧ (Ramen Fig. 4, step 8): `P_i → P_{i+1}`, the re-randomised shares
    /// x_i + z_i, `k` elements.
    ReplicateShares,
    /// ⟦x⟧·⟦y⟧ → ⟦xy⟧ and replicated select: `P_i → P_{i+1}`, the masked local products
    /// c_i = x_i·y_i + x_i·y_{i−1} + x_{i−1}·y_i + z_i, `k` elements.
    ProductShares,
    /// ⟨x⟩·⟨y⟩ and F_Select (Ramen Fig. 23): `P_i → P_{i+1}`, the re-randomised shares of both
    /// operands, `2k` elements (the `k` left ones, then the `k` right ones).
    OperandShares,
    /// Opening ⟨x⟩: `P_i → P_j` (to every other party, or to the one receiver), the
    /// re-randomised shares x_i + z_i, `k` elements.
    OpenAdditive,
    /// Opening ⟦x⟧: `P_i → P_{i−1}`, the component x_i that the receiver lacks, `k` elements.
    OpenReplicated,
    /// Replicated input from dealer `P_d`: `P_d → P_{d±1}`, the component x_{d+1}, `k` elements.
    InputShares,
}

impl MsgKind {
    /// A short name for errors and logs.
    pub const fn name(self) -> &'static str {
        match self {
            MsgKind::SetupSeed => "setup seed",
            MsgKind::ReplicateShares => "replicate shares",
            MsgKind::ProductShares => "product shares",
            MsgKind::OperandShares => "operand shares",
            MsgKind::OpenAdditive => "additive opening",
            MsgKind::OpenReplicated => "replicated opening",
            MsgKind::InputShares => "input shares",
        }
    }
}

/// A message a round function wants sent.
#[derive(Clone, PartialEq, Eq)]
pub struct Outgoing<F> {
    /// The receiver.
    pub to: PartyId,
    /// What it is.
    pub kind: MsgKind,
    /// The payload.
    pub elems: Vec<F>,
}

/// A message a pending round waits for: from whom, what, and exactly how many elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The sender.
    pub from: PartyId,
    /// What it is.
    pub kind: MsgKind,
    /// The element count the protocol prescribes.
    pub count: usize,
}

impl Expected {
    /// The size of the message on the wire.
    pub const fn bytes<F: Group>(&self) -> usize {
        self.count * F::BYTES
    }
}

/// A received message, decoded, handed to a pending round.
#[derive(Clone, PartialEq, Eq)]
pub struct Inbound<F> {
    /// The sender.
    pub from: PartyId,
    /// What it is.
    pub kind: MsgKind,
    /// The payload.
    pub elems: Vec<F>,
}

// Payloads are shares (or masked values): print the envelope only.
impl<F> core::fmt::Debug for Outgoing<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Outgoing")
            .field("to", &self.to)
            .field("kind", &self.kind)
            .field("len", &self.elems.len())
            .finish_non_exhaustive()
    }
}

impl<F> core::fmt::Debug for Inbound<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Inbound")
            .field("from", &self.from)
            .field("kind", &self.kind)
            .field("len", &self.elems.len())
            .finish_non_exhaustive()
    }
}

impl<F> Outgoing<F> {
    /// The message as the receiver gets it.
    pub fn deliver(self, from: PartyId) -> Inbound<F> {
        Inbound {
            from,
            kind: self.kind,
            elems: self.elems,
        }
    }
}
