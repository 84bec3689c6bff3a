//! The garbling schemes the driver runs, as a choice ([`GarblingScheme`]) and as the roles it
//! needs of each ([`GcGarbler`], [`GcEvaluator`]): half-gates ([`gc`], the
//! default) and three-halves ([`three_halves`]).
//!
//! Both schemes share free-XOR with one Δ (`lsb(Δ) = 1`), the input labels (the evaluator's
//! from correlated OTs whose Δ is the garbler's) and the output decoding by permute bits; they
//! differ in the AND gates' tables. The garbler's first message names its scheme
//! ([`GarblingScheme::tag`]), and an evaluator of another scheme stops with
//! [`TwopcError::SchemeMismatch`] before reading any table.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_prim::aes::Block;

use crate::TwopcError;
use crate::gc::{self, AND_TABLE_BYTES, Gate, WireId};
use crate::three_halves;

/// A garbling scheme for AND gates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GarblingScheme {
    /// Half-gates (ZRE15): 32 bytes per AND gate ([`gc`]).
    #[default]
    HalfGates,
    /// Three-halves (RR21): 1.5κ + 5 = 197 bits per AND gate, in groups of 8
    /// ([`three_halves`]).
    ThreeHalves,
}

impl GarblingScheme {
    /// The byte that names the scheme in the garbler's first message.
    pub const fn tag(self) -> u8 {
        match self {
            GarblingScheme::HalfGates => 1,
            GarblingScheme::ThreeHalves => 2,
        }
    }

    /// The scheme a tag names.
    pub const fn from_tag(tag: u8) -> Option<GarblingScheme> {
        match tag {
            1 => Some(GarblingScheme::HalfGates),
            2 => Some(GarblingScheme::ThreeHalves),
            _ => None,
        }
    }

    /// The scheme's name, as `doram bench gc --scheme` spells it.
    pub const fn name(self) -> &'static str {
        match self {
            GarblingScheme::HalfGates => "half-gates",
            GarblingScheme::ThreeHalves => "three-halves",
        }
    }

    /// Bytes of the tables of `ands` AND gates sent as one message.
    pub const fn table_bytes(self, ands: usize) -> usize {
        match self {
            GarblingScheme::HalfGates => AND_TABLE_BYTES * ands,
            GarblingScheme::ThreeHalves => three_halves::table_bytes(ands),
        }
    }
}

impl std::fmt::Display for GarblingScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the driver needs of a garbler. The table messages leave in whole groups of
/// [`three_halves::GROUP`] AND gates (or all at once); the driver's chunks are a multiple of
/// it.
pub trait GcGarbler {
    /// The scheme.
    const SCHEME: GarblingScheme;
    /// Garbled tables not yet sent.
    type Tables;

    /// No tables, with room for `ands` of them.
    fn tables_with_capacity(ands: usize) -> Self::Tables;

    /// Δ.
    fn delta(&self) -> Block;
    /// Starts a new circuit of `wires` wires (the AND counter runs on).
    fn reset_wires(&mut self, wires: usize);
    /// Sets the false label of input wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    fn set_zero_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError>;
    /// The label encoding `bit` on wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    fn label(&self, w: WireId, bit: bool) -> Result<Block, TwopcError>;
    /// Garbles `gates`, appending the AND gates' tables to `tables`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    fn garble_batch(&mut self, gates: &[Gate], tables: &mut Self::Tables)
    -> Result<(), TwopcError>;
    /// The decoding bits of `outputs`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    fn decoding_bits(&self, outputs: &[WireId]) -> Result<Vec<bool>, TwopcError>;
    /// AND gates in `tables`.
    fn tables_held(tables: &Self::Tables) -> usize;
    /// The message of the first `k` tables (`k` a multiple of [`three_halves::GROUP`], or all).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for another `k`.
    fn tables_front(tables: &mut Self::Tables, k: usize) -> Result<&[u8], TwopcError>;
    /// Drops the first `k` tables, as [`GcGarbler::tables_front`] gave them.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for another `k`.
    fn drop_tables_front(tables: &mut Self::Tables, k: usize) -> Result<(), TwopcError>;
    /// The message of the first `k` tables, taken out of `tables`: [`GcGarbler::tables_front`]
    /// then [`GcGarbler::drop_tables_front`], without the copy where the scheme can hand its
    /// buffer over.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for another `k`.
    fn take_tables_front(tables: &mut Self::Tables, k: usize) -> Result<Vec<u8>, TwopcError> {
        let msg = Self::tables_front(tables, k)?.to_vec();
        Self::drop_tables_front(tables, k)?;
        Ok(msg)
    }
}

/// What the driver needs of an evaluator.
pub trait GcEvaluator {
    /// The scheme.
    const SCHEME: GarblingScheme;
    /// Received garbled tables.
    type Tables: Default;

    /// Starts a new circuit of `wires` wires (the AND counter runs on).
    fn reset_wires(&mut self, wires: usize);
    /// Sets the label of input wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    fn set_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError>;
    /// Reads the tables of `ands` AND gates from `peer`'s message `bytes`.
    ///
    /// # Errors
    /// [`PeerFault`] if the message has the wrong size or encoding.
    fn read_tables(peer: PartyId, bytes: Vec<u8>, ands: usize) -> Result<Self::Tables, PeerFault>;
    /// Evaluates `gates`, the AND gates taking tables from position `*pos` of `tables`; stops
    /// before an AND gate without a table. Returns how many gates it evaluated.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    fn eval_batch(
        &mut self,
        gates: &[Gate],
        tables: &Self::Tables,
        pos: &mut usize,
    ) -> Result<usize, TwopcError>;
    /// Whether every table of `tables` was used once `pos` is reached.
    fn tables_used(tables: &Self::Tables, pos: usize) -> bool;
    /// The output bits of `outputs`, given the garbler's decoding bits.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range; [`TwopcError::LengthMismatch`] if
    /// `decoding` does not have one bit per output.
    fn decode(&self, outputs: &[WireId], decoding: &[bool]) -> Result<Vec<bool>, TwopcError>;
}

impl GcGarbler for gc::Garbler {
    const SCHEME: GarblingScheme = GarblingScheme::HalfGates;
    type Tables = Vec<u8>;

    fn tables_with_capacity(ands: usize) -> Vec<u8> {
        Vec::with_capacity(AND_TABLE_BYTES * ands)
    }
    fn delta(&self) -> Block {
        gc::Garbler::delta(self)
    }
    fn reset_wires(&mut self, wires: usize) {
        gc::Garbler::reset_wires(self, wires)
    }
    fn set_zero_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        gc::Garbler::set_zero_label(self, w, label)
    }
    fn label(&self, w: WireId, bit: bool) -> Result<Block, TwopcError> {
        gc::Garbler::label(self, w, bit)
    }
    fn garble_batch(&mut self, gates: &[Gate], tables: &mut Vec<u8>) -> Result<(), TwopcError> {
        gc::Garbler::garble_batch(self, gates, tables)
    }
    fn decoding_bits(&self, outputs: &[WireId]) -> Result<Vec<bool>, TwopcError> {
        gc::Garbler::decoding_bits(self, outputs)
    }
    fn tables_held(tables: &Vec<u8>) -> usize {
        tables.len() / AND_TABLE_BYTES
    }
    fn tables_front(tables: &mut Vec<u8>, k: usize) -> Result<&[u8], TwopcError> {
        tables
            .get(..AND_TABLE_BYTES * k)
            .ok_or(TwopcError::ApiMisuse("more tables asked for than held"))
    }
    fn drop_tables_front(tables: &mut Vec<u8>, k: usize) -> Result<(), TwopcError> {
        if AND_TABLE_BYTES * k > tables.len() {
            return Err(TwopcError::ApiMisuse("more tables dropped than held"));
        }
        tables.drain(..AND_TABLE_BYTES * k);
        Ok(())
    }
    /// The buffer itself, the tables after the first `k` (if any) copied to a new one of the
    /// same capacity (at most a batch of gates is left over when the driver sends).
    fn take_tables_front(tables: &mut Vec<u8>, k: usize) -> Result<Vec<u8>, TwopcError> {
        let n = AND_TABLE_BYTES * k;
        if n > tables.len() {
            return Err(TwopcError::ApiMisuse("more tables taken than held"));
        }
        if n == tables.len() {
            return Ok(std::mem::take(tables));
        }
        let mut rest = Vec::with_capacity(tables.capacity());
        rest.extend_from_slice(&tables[n..]);
        tables.truncate(n);
        Ok(std::mem::replace(tables, rest))
    }
}

impl GcEvaluator for gc::Evaluator {
    const SCHEME: GarblingScheme = GarblingScheme::HalfGates;
    type Tables = Vec<u8>;

    fn reset_wires(&mut self, wires: usize) {
        gc::Evaluator::reset_wires(self, wires)
    }
    fn set_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        gc::Evaluator::set_label(self, w, label)
    }
    fn read_tables(peer: PartyId, bytes: Vec<u8>, ands: usize) -> Result<Vec<u8>, PeerFault> {
        wire::exact_len(peer, "garbled tables", &bytes, AND_TABLE_BYTES * ands)?;
        Ok(bytes)
    }
    fn eval_batch(
        &mut self,
        gates: &[Gate],
        tables: &Vec<u8>,
        pos: &mut usize,
    ) -> Result<usize, TwopcError> {
        gc::Evaluator::eval_batch(self, gates, tables, pos)
    }
    fn tables_used(tables: &Vec<u8>, pos: usize) -> bool {
        pos == tables.len()
    }
    fn decode(&self, outputs: &[WireId], decoding: &[bool]) -> Result<Vec<bool>, TwopcError> {
        gc::Evaluator::decode(self, outputs, decoding)
    }
}

impl GcGarbler for three_halves::Garbler {
    const SCHEME: GarblingScheme = GarblingScheme::ThreeHalves;
    type Tables = three_halves::Tables;

    fn tables_with_capacity(ands: usize) -> three_halves::Tables {
        three_halves::Tables::with_capacity(ands)
    }
    fn delta(&self) -> Block {
        three_halves::Garbler::delta(self)
    }
    fn reset_wires(&mut self, wires: usize) {
        three_halves::Garbler::reset_wires(self, wires)
    }
    fn set_zero_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        three_halves::Garbler::set_zero_label(self, w, label)
    }
    fn label(&self, w: WireId, bit: bool) -> Result<Block, TwopcError> {
        three_halves::Garbler::label(self, w, bit)
    }
    fn garble_batch(
        &mut self,
        gates: &[Gate],
        tables: &mut three_halves::Tables,
    ) -> Result<(), TwopcError> {
        three_halves::Garbler::garble_batch(self, gates, tables)
    }
    fn decoding_bits(&self, outputs: &[WireId]) -> Result<Vec<bool>, TwopcError> {
        three_halves::Garbler::decoding_bits(self, outputs)
    }
    fn tables_held(tables: &three_halves::Tables) -> usize {
        tables.ands()
    }
    fn tables_front(tables: &mut three_halves::Tables, k: usize) -> Result<&[u8], TwopcError> {
        tables.front(k)
    }
    fn drop_tables_front(tables: &mut three_halves::Tables, k: usize) -> Result<(), TwopcError> {
        tables.drop_front(k)
    }
}

impl GcEvaluator for three_halves::Evaluator {
    const SCHEME: GarblingScheme = GarblingScheme::ThreeHalves;
    type Tables = three_halves::Tables;

    fn reset_wires(&mut self, wires: usize) {
        three_halves::Evaluator::reset_wires(self, wires)
    }
    fn set_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        three_halves::Evaluator::set_label(self, w, label)
    }
    fn read_tables(
        peer: PartyId,
        bytes: Vec<u8>,
        ands: usize,
    ) -> Result<three_halves::Tables, PeerFault> {
        three_halves::Tables::decode(peer, "garbled tables", bytes, ands)
    }
    fn eval_batch(
        &mut self,
        gates: &[Gate],
        tables: &three_halves::Tables,
        pos: &mut usize,
    ) -> Result<usize, TwopcError> {
        three_halves::Evaluator::eval_batch(self, gates, tables, pos)
    }
    fn tables_used(tables: &three_halves::Tables, pos: usize) -> bool {
        pos == tables.ands()
    }
    fn decode(&self, outputs: &[WireId], decoding: &[bool]) -> Result<Vec<bool>, TwopcError> {
        three_halves::Evaluator::decode(self, outputs, decoding)
    }
}
