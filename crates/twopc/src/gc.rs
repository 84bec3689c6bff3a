//! Half-gates garbling (ZRE15) with free-XOR and point-and-permute, over a simple circuit
//! representation, gate by gate.
//!
//! ZRE15 = Zahur, Rosulek, Evans, "Two Halves Make a Whole: Reducing Data Transfer in Garbled
//! Circuits using Half Gates", EUROCRYPT 2015 (ePrint 2014/756), Fig. 2. With κ = 128:
//!
//! * Every wire `w` has a zero label `W⁰` (held by the [`Garbler`]); its one label is
//!   `W¹ = W⁰ ⊕ Δ` (free-XOR, Kolesnikov–Schneider 2008). `lsb(Δ) = 1`, so the labels of a wire
//!   differ in their last bit, the *permute bit* (point-and-permute): the [`Evaluator`], holding
//!   one label `W`, sees `lsb(W)` and nothing else about the value.
//! * XOR gates: `C⁰ = A⁰ ⊕ B⁰`; INV (NOT): `C⁰ = A⁰ ⊕ Δ`; the evaluator XORs or copies labels.
//!   Neither sends anything.
//! * AND gate number `j` (counted over the garbler's lifetime, so tweaks never repeat under
//!   one Δ), with `p_a = lsb(A⁰)`, `p_b = lsb(B⁰)` and the hash `H` = [`gc_hash`](crate::hash::gc_hash)
//!   (GKWY20 §7.3), tweaks `2j` and `2j + 1`:
//!   - garbler half gate: `T_G = H(A⁰, 2j) ⊕ H(A¹, 2j) ⊕ p_b·Δ`,
//!     `W_G⁰ = H(A⁰, 2j) ⊕ p_a·T_G`;
//!   - evaluator half gate: `T_E = H(B⁰, 2j+1) ⊕ H(B¹, 2j+1) ⊕ A⁰`,
//!     `W_E⁰ = H(B⁰, 2j+1) ⊕ p_b·(T_E ⊕ A⁰)`;
//!   - `C⁰ = W_G⁰ ⊕ W_E⁰`; the table is `T_G ‖ T_E`: exactly 32 bytes ([`AND_TABLE_BYTES`]).
//!   - The evaluator, with `s_a = lsb(A)`, `s_b = lsb(B)`:
//!     `C = H(A, 2j) ⊕ s_a·T_G ⊕ H(B, 2j+1) ⊕ s_b·(T_E ⊕ A)`.
//! * Output decoding: the garbler reveals `lsb(W⁰)` of each output wire; the value is
//!   `lsb(W) ⊕ lsb(W⁰)`.
//!
//! The garbler and evaluator hold one label per wire and process one gate at a time; tables are
//! appended to (garbler) or read from (evaluator) a byte buffer of any size, so the driver can
//! stream them in chunks. Both refuse gates whose wires are out of range
//! ([`TwopcError::ApiMisuse`]), never panic on them.

use doram_prim::FixedKeyAes;
use doram_prim::aes::{AesKernel, Block, WithAes, fixed_key, lsb, mask};
use rand_core::{CryptoRng, RngCore};

use crate::TwopcError;

/// Bytes of one garbled AND gate: two 128-bit ciphertexts.
pub const AND_TABLE_BYTES: usize = 32;

/// A wire's index in a [`Circuit`].
pub type WireId = u32;

/// One gate. Wires are indices below [`Circuit::wires`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `out = a ⊕ b` (free).
    Xor {
        /// First input.
        a: WireId,
        /// Second input.
        b: WireId,
        /// Output.
        out: WireId,
    },
    /// `out = a ∧ b` (one half-gates table).
    And {
        /// First input.
        a: WireId,
        /// Second input.
        b: WireId,
        /// Output.
        out: WireId,
    },
    /// `out = ¬a` (free; Bristol's INV).
    Inv {
        /// Input.
        a: WireId,
        /// Output.
        out: WireId,
    },
}

/// A Boolean circuit: wires `0..garbler_inputs` are the garbler's inputs, the next
/// `evaluator_inputs` wires the evaluator's, gates are in topological order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    garbler_inputs: usize,
    evaluator_inputs: usize,
    wires: usize,
    gates: Vec<Gate>,
    outputs: Vec<WireId>,
    and_gates: usize,
}

impl Circuit {
    /// The benchmark circuit `w ← (w ⊕ y) ∧ x`, `ands` times (`ands ≥ 1`): one AND and one XOR
    /// gate per step, each AND depending on the one before; one garbler input `x`, one
    /// evaluator input `y`, one output.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] for zero AND gates or more wires than wire ids hold.
    pub fn and_chain(ands: usize) -> Result<Circuit, TwopcError> {
        if ands == 0 {
            return Err(TwopcError::ApiMisuse(
                "an AND chain needs at least one AND gate",
            ));
        }
        let too_long = TwopcError::ApiMisuse("an AND chain longer than wire ids allow");
        let last = u32::try_from(2 * ands).map_err(|_| too_long)?;
        let mut gates = Vec::with_capacity(2 * ands);
        gates.push(Gate::And { a: 0, b: 1, out: 2 });
        for w in (2..last).step_by(2) {
            gates.push(Gate::Xor {
                a: w,
                b: 1,
                out: w + 1,
            });
            gates.push(Gate::And {
                a: w + 1,
                b: 0,
                out: w + 2,
            });
        }
        Circuit::new(1, 1, last as usize + 1, gates, vec![last])
    }

    /// A circuit, checked: every gate reads wires that are inputs or were written by an earlier
    /// gate, and every output wire is written.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if the circuit is not well formed.
    pub fn new(
        garbler_inputs: usize,
        evaluator_inputs: usize,
        wires: usize,
        gates: Vec<Gate>,
        outputs: Vec<WireId>,
    ) -> Result<Circuit, TwopcError> {
        let inputs = garbler_inputs + evaluator_inputs;
        if inputs > wires || u32::try_from(wires).is_err() {
            return Err(TwopcError::ApiMisuse("more input wires than wires"));
        }
        let mut set = vec![false; wires];
        set[..inputs].fill(true);
        let ready = |set: &[bool], w: WireId| set.get(w as usize).copied().unwrap_or(false);
        let mut and_gates = 0;
        for g in &gates {
            let (ins_ok, out) = match *g {
                Gate::Xor { a, b, out } => (ready(&set, a) && ready(&set, b), out),
                Gate::And { a, b, out } => {
                    and_gates += 1;
                    (ready(&set, a) && ready(&set, b), out)
                }
                Gate::Inv { a, out } => (ready(&set, a), out),
            };
            if !ins_ok {
                return Err(TwopcError::ApiMisuse("a gate reads a wire not yet set"));
            }
            match set.get_mut(out as usize) {
                Some(s) => *s = true,
                None => return Err(TwopcError::ApiMisuse("a gate writes a wire out of range")),
            }
        }
        if outputs.iter().any(|&w| !ready(&set, w)) {
            return Err(TwopcError::ApiMisuse("an output wire is never set"));
        }
        Ok(Circuit {
            garbler_inputs,
            evaluator_inputs,
            wires,
            gates,
            outputs,
            and_gates,
        })
    }

    /// Garbler input wires (the first ones).
    pub fn garbler_inputs(&self) -> usize {
        self.garbler_inputs
    }
    /// Evaluator input wires (after the garbler's).
    pub fn evaluator_inputs(&self) -> usize {
        self.evaluator_inputs
    }
    /// Number of wires.
    pub fn wires(&self) -> usize {
        self.wires
    }
    /// The gates, in evaluation order.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }
    /// The output wires.
    pub fn outputs(&self) -> &[WireId] {
        &self.outputs
    }
    /// Number of AND gates (each costs [`AND_TABLE_BYTES`]).
    pub fn and_gates(&self) -> usize {
        self.and_gates
    }

    /// What the driver must know before the gates: the circuit without its gates.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            garbler_inputs: self.garbler_inputs,
            evaluator_inputs: self.evaluator_inputs,
            wires: self.wires,
            and_gates: self.and_gates,
            outputs: self.outputs.clone(),
        }
    }

    /// Evaluates the circuit in the clear: the plaintext oracle for the garbled evaluation.
    ///
    /// # Errors
    /// [`TwopcError::LengthMismatch`] if an input has the wrong number of bits.
    pub fn eval_plain(
        &self,
        garbler: &[bool],
        evaluator: &[bool],
    ) -> Result<Vec<bool>, TwopcError> {
        crate::error::same_len("garbler input", self.garbler_inputs, garbler.len())?;
        crate::error::same_len("evaluator input", self.evaluator_inputs, evaluator.len())?;
        let mut v = vec![false; self.wires];
        v[..garbler.len()].copy_from_slice(garbler);
        v[garbler.len()..garbler.len() + evaluator.len()].copy_from_slice(evaluator);
        for g in &self.gates {
            match *g {
                Gate::Xor { a, b, out } => v[out as usize] = v[a as usize] ^ v[b as usize],
                Gate::And { a, b, out } => v[out as usize] = v[a as usize] & v[b as usize],
                Gate::Inv { a, out } => v[out as usize] = !v[a as usize],
            }
        }
        Ok(self.outputs.iter().map(|&w| v[w as usize]).collect())
    }
}

/// The public description of a circuit that both parties need before its gates: with it, the
/// gates themselves can be produced on the fly and streamed (see
/// [`driver::garble_stream`](crate::driver::garble_stream)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitShape {
    /// Garbler input wires (the first ones).
    pub garbler_inputs: usize,
    /// Evaluator input wires (after the garbler's).
    pub evaluator_inputs: usize,
    /// Number of wires.
    pub wires: usize,
    /// Number of AND gates the gates will contain: it fixes the table messages' sizes.
    pub and_gates: usize,
    /// The output wires.
    pub outputs: Vec<WireId>,
}

/// A random Δ for free-XOR garbling: uniform with `lsb(Δ) = 1`.
pub fn random_delta<R: RngCore + CryptoRng + ?Sized>(rng: &mut R) -> Block {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    Block::from_le_bytes(b) | 1
}

// The errors below are built only on the failing path (`let … else`): an eager `ok_or` built
// and dropped one per label in the gather loops, a measurable share of an ORAM access.

pub(crate) fn wire(labels: &[Block], w: WireId) -> Result<Block, TwopcError> {
    let Some(&x) = labels.get(w as usize) else {
        return Err(TwopcError::ApiMisuse("gate wire out of range"));
    };
    Ok(x)
}

/// Checks once per batch that every wire the gates touch is below `wires`, so the gate loops
/// index without checks that could fail.
pub(crate) fn check_wires(gates: &[Gate], wires: usize) -> Result<(), TwopcError> {
    let max = gates
        .iter()
        .map(|g| match *g {
            Gate::Xor { a, b, out } | Gate::And { a, b, out } => a.max(b).max(out),
            Gate::Inv { a, out } => a.max(out),
        })
        .max();
    match max {
        Some(m) if m as usize >= wires => Err(TwopcError::ApiMisuse("gate wire out of range")),
        _ => Ok(()),
    }
}

/// Copies `labels` into `wires[at ..]`.
fn labels_at(wires: &mut [Block], at: usize, labels: &[Block]) -> Result<(), TwopcError> {
    let Some(to) = at
        .checked_add(labels.len())
        .and_then(|end| wires.get_mut(at..end))
    else {
        return Err(TwopcError::ApiMisuse("more input labels than wires"));
    };
    to.copy_from_slice(labels);
    Ok(())
}

/// `out[k] = wires[ids[k]]`.
fn gather(wires: &[Block], ids: &[WireId], out: &mut [Block]) -> Result<(), TwopcError> {
    if ids.len() != out.len() {
        return Err(TwopcError::ApiMisuse("output buffer of the wrong length"));
    }
    for (o, &w) in out.iter_mut().zip(ids) {
        let Some(&x) = wires.get(w as usize) else {
            return Err(TwopcError::ApiMisuse("wire out of range"));
        };
        *o = x;
    }
    Ok(())
}

pub(crate) fn set_wire(labels: &mut [Block], w: WireId, x: Block) -> Result<(), TwopcError> {
    let Some(to) = labels.get_mut(w as usize) else {
        return Err(TwopcError::ApiMisuse("gate wire out of range"));
    };
    *to = x;
    Ok(())
}

/// The garbler: Δ and the zero label of every wire.
pub struct Garbler {
    aes: &'static FixedKeyAes,
    delta: Block,
    zero: Vec<Block>,
    next_and: u64,
}

impl std::fmt::Debug for Garbler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Garbler")
            .field("wires", &self.zero.len())
            .field("next_and", &self.next_and)
            .finish_non_exhaustive()
    }
}

impl Garbler {
    /// A garbler with global offset `delta` for a circuit of `wires` wires.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `lsb(delta) = 0` (point-and-permute needs it set).
    pub fn new(delta: Block, wires: usize) -> Result<Garbler, TwopcError> {
        if !lsb(delta) {
            return Err(TwopcError::ApiMisuse("garbling Δ must have its lsb set"));
        }
        Ok(Garbler {
            aes: fixed_key(),
            delta,
            zero: vec![0; wires],
            next_and: 0,
        })
    }

    /// Δ.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// AND gates garbled so far: the next gate's tweak index.
    pub fn and_gates(&self) -> u64 {
        self.next_and
    }

    /// Continues the AND counter from `next_and`, for a Δ that has garbled `next_and` gates
    /// before (in an earlier run): every gate under one Δ needs a tweak of its own, or two
    /// garbled tables of the same input labels may reveal Δ.
    pub fn resume_at(&mut self, next_and: u64) {
        self.next_and = next_and;
    }

    /// Starts a new circuit of `wires` wires with the same Δ; the AND counter runs on. Labels
    /// left from an earlier circuit are not cleared (a well-formed circuit writes every wire
    /// before reading it), so starting many circuits costs nothing per wire.
    pub fn reset_wires(&mut self, wires: usize) {
        self.zero.truncate(wires);
        self.zero.resize(wires, 0);
    }

    /// Sets the zero labels of the first `labels.len()` wires (the inputs).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if there are fewer wires.
    pub fn set_input_labels(&mut self, labels: &[Block]) -> Result<(), TwopcError> {
        self.set_labels_at(0, labels)
    }

    /// Sets the zero labels of wires `at .. at + labels.len()` (inputs).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if there are fewer wires.
    pub fn set_labels_at(&mut self, at: usize, labels: &[Block]) -> Result<(), TwopcError> {
        labels_at(&mut self.zero, at, labels)
    }

    /// The zero labels of `wires`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn zero_labels(&self, wires: &[WireId]) -> Result<Vec<Block>, TwopcError> {
        let mut out = vec![0; wires.len()];
        self.zero_labels_into(wires, &mut out)?;
        Ok(out)
    }

    /// The zero labels of `wires`, written into `out` (of the same length).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range or the lengths differ.
    pub fn zero_labels_into(&self, wires: &[WireId], out: &mut [Block]) -> Result<(), TwopcError> {
        gather(&self.zero, wires, out)
    }

    /// Sets the zero label of wire `w` (an input wire).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn set_zero_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        set_wire(&mut self.zero, w, label)
    }

    /// The zero label of wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn zero_label(&self, w: WireId) -> Result<Block, TwopcError> {
        wire(&self.zero, w)
    }

    /// The label encoding `bit` on wire `w`: `W⁰ ⊕ bit·Δ`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn label(&self, w: WireId, bit: bool) -> Result<Block, TwopcError> {
        Ok(wire(&self.zero, w)? ^ (mask(bit) & self.delta))
    }

    /// Garbles one gate; an AND gate appends its [`AND_TABLE_BYTES`]-byte table to `tables`.
    /// (For many gates, [`Garbler::garble_batch`] is faster.)
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn garble(&mut self, gate: &Gate, tables: &mut Vec<u8>) -> Result<(), TwopcError> {
        self.garble_batch(std::slice::from_ref(gate), tables)
    }

    /// Garbles `gates` in order, appending the AND gates' tables to `tables`, with the cipher
    /// in hand for the whole slice (one entry into the AES code, not one per hash).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range (the gates before it are garbled).
    pub fn garble_batch(&mut self, gates: &[Gate], tables: &mut Vec<u8>) -> Result<(), TwopcError> {
        let aes = self.aes;
        aes.with_aes(GarbleBatch {
            garbler: self,
            gates,
            tables,
        })
    }

    /// One gate with the cipher in hand; its wires are in range ([`check_wires`]).
    #[inline(always)]
    fn garble_with<K: AesKernel>(&mut self, aes: &mut K, gate: &Gate, tables: &mut Vec<u8>) {
        match *gate {
            Gate::Xor { a, b, out } => {
                self.zero[out as usize] = aes.xor(self.zero[a as usize], self.zero[b as usize]);
            }
            Gate::Inv { a, out } => {
                self.zero[out as usize] = aes.xor(self.zero[a as usize], self.delta);
            }
            Gate::And { a, b, out } => {
                let (a0, b0) = (self.zero[a as usize], self.zero[b as usize]);
                let [c, tg, te] = aes.garble_and(a0, b0, self.delta, self.next_and);
                self.next_and += 1;
                self.zero[out as usize] = c;
                tables.extend_from_slice(&tg.to_le_bytes());
                tables.extend_from_slice(&te.to_le_bytes());
            }
        }
    }

    /// [ZRE15 Fig. 2, GbAnd] The output zero label and the table `(T_G, T_E)` of the next AND
    /// gate, with input zero labels `a0`, `b0` (the kernel's [`AesKernel::garble_and`], as in
    /// [`Garbler::garble_batch`]).
    pub fn and_table(&mut self, a0: Block, b0: Block) -> (Block, [Block; 2]) {
        struct One(Block, Block, Block, u64);
        impl WithAes for One {
            type Output = [Block; 3];
            #[inline(always)]
            fn run<K: AesKernel>(self, aes: &mut K) -> [Block; 3] {
                aes.garble_and(self.0, self.1, self.2, self.3)
            }
        }
        let [c, tg, te] = self.aes.with_aes(One(a0, b0, self.delta, self.next_and));
        self.next_and += 1;
        (c, [tg, te])
    }

    /// The decoding bits `lsb(W⁰)` of `outputs`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn decoding_bits(&self, outputs: &[WireId]) -> Result<Vec<bool>, TwopcError> {
        outputs
            .iter()
            .map(|&w| Ok(lsb(wire(&self.zero, w)?)))
            .collect()
    }
}

/// The evaluator: one (active) label per wire.
pub struct Evaluator {
    aes: &'static FixedKeyAes,
    labels: Vec<Block>,
    next_and: u64,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("wires", &self.labels.len())
            .field("next_and", &self.next_and)
            .finish_non_exhaustive()
    }
}

impl Evaluator {
    /// An evaluator for a circuit of `wires` wires.
    pub fn new(wires: usize) -> Evaluator {
        Evaluator {
            aes: fixed_key(),
            labels: vec![0; wires],
            next_and: 0,
        }
    }

    /// AND gates evaluated so far (equal to the garbler's [`Garbler::and_gates`]).
    pub fn and_gates(&self) -> u64 {
        self.next_and
    }

    /// Continues the AND counter from `next_and`, as the garbler does
    /// ([`Garbler::resume_at`]).
    pub fn resume_at(&mut self, next_and: u64) {
        self.next_and = next_and;
    }

    /// Starts a new circuit of `wires` wires; the AND counter runs on, as the garbler's does.
    /// Labels left from an earlier circuit are not cleared, as with
    /// [`Garbler::reset_wires`].
    pub fn reset_wires(&mut self, wires: usize) {
        self.labels.truncate(wires);
        self.labels.resize(wires, 0);
    }

    /// Sets the labels of the first `labels.len()` wires (the inputs).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if there are fewer wires.
    pub fn set_input_labels(&mut self, labels: &[Block]) -> Result<(), TwopcError> {
        self.set_labels_at(0, labels)
    }

    /// Sets the labels of wires `at .. at + labels.len()` (inputs).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if there are fewer wires.
    pub fn set_labels_at(&mut self, at: usize, labels: &[Block]) -> Result<(), TwopcError> {
        labels_at(&mut self.labels, at, labels)
    }

    /// The labels of `wires`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn labels(&self, wires: &[WireId]) -> Result<Vec<Block>, TwopcError> {
        let mut out = vec![0; wires.len()];
        self.labels_into(wires, &mut out)?;
        Ok(out)
    }

    /// The labels of `wires`, written into `out` (of the same length).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range or the lengths differ.
    pub fn labels_into(&self, wires: &[WireId], out: &mut [Block]) -> Result<(), TwopcError> {
        gather(&self.labels, wires, out)
    }

    /// Sets the label of wire `w` (an input wire).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn set_label(&mut self, w: WireId, label: Block) -> Result<(), TwopcError> {
        set_wire(&mut self.labels, w, label)
    }

    /// The label of wire `w`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if `w` is out of range.
    pub fn label(&self, w: WireId) -> Result<Block, TwopcError> {
        wire(&self.labels, w)
    }

    /// Evaluates one gate; an AND gate consumes the next [`AND_TABLE_BYTES`] of `tables`,
    /// starting at `*pos`, and advances `*pos`. (For many gates, [`Evaluator::eval_batch`] is
    /// faster.)
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range or `tables` has no table left (the
    /// driver sizes the buffer from the circuit, so this is a caller's mistake).
    pub fn eval(&mut self, gate: &Gate, tables: &[u8], pos: &mut usize) -> Result<(), TwopcError> {
        match self.eval_batch(std::slice::from_ref(gate), tables, pos)? {
            1 => Ok(()),
            _ => Err(TwopcError::ApiMisuse(
                "no garbled table left for an AND gate",
            )),
        }
    }

    /// Evaluates `gates` in order, the AND gates consuming tables from `tables[*pos..]`, with
    /// the cipher in hand for the whole slice; stops before the first AND gate that finds no
    /// whole table left. Returns how many gates it evaluated.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range.
    pub fn eval_batch(
        &mut self,
        gates: &[Gate],
        tables: &[u8],
        pos: &mut usize,
    ) -> Result<usize, TwopcError> {
        let aes = self.aes;
        aes.with_aes(EvalBatch {
            evaluator: self,
            gates,
            tables,
            pos,
        })
    }

    /// One gate with the cipher in hand; `Ok(false)` if it is an AND gate without a table.
    #[inline(always)]
    fn eval_with<K: AesKernel>(
        &mut self,
        aes: &mut K,
        gate: &Gate,
        tables: &[u8],
        pos: &mut usize,
    ) -> bool {
        match *gate {
            Gate::Xor { a, b, out } => {
                self.labels[out as usize] =
                    aes.xor(self.labels[a as usize], self.labels[b as usize]);
            }
            Gate::Inv { a, out } => {
                self.labels[out as usize] = self.labels[a as usize];
            }
            Gate::And { a, b, out } => {
                let Some(table) = tables
                    .get(*pos..*pos + AND_TABLE_BYTES)
                    .and_then(|t| <&[u8; AND_TABLE_BYTES]>::try_from(t).ok())
                else {
                    return false;
                };
                *pos += AND_TABLE_BYTES;
                let (la, lb) = (self.labels[a as usize], self.labels[b as usize]);
                self.labels[out as usize] = aes.eval_and(la, lb, table, self.next_and);
                self.next_and += 1;
            }
        }
        true
    }

    /// [ZRE15 Fig. 2, EvAnd] The output label of the next AND gate from the input labels and
    /// the table (the kernel's [`AesKernel::eval_and`], as in [`Evaluator::eval_batch`]).
    pub fn and_eval(&mut self, a: Block, b: Block, [tg, te]: [Block; 2]) -> Block {
        struct One(Block, Block, [u8; AND_TABLE_BYTES], u64);
        impl WithAes for One {
            type Output = Block;
            #[inline(always)]
            fn run<K: AesKernel>(self, aes: &mut K) -> Block {
                aes.eval_and(self.0, self.1, &self.2, self.3)
            }
        }
        let mut table = [0u8; AND_TABLE_BYTES];
        table[..16].copy_from_slice(&tg.to_le_bytes());
        table[16..].copy_from_slice(&te.to_le_bytes());
        let out = self.aes.with_aes(One(a, b, table, self.next_and));
        self.next_and += 1;
        out
    }

    /// The output bits `lsb(W) ⊕ d` for the garbler's decoding bits `d`.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if a wire is out of range; [`TwopcError::LengthMismatch`] if
    /// `decoding` does not have one bit per output.
    pub fn decode(&self, outputs: &[WireId], decoding: &[bool]) -> Result<Vec<bool>, TwopcError> {
        crate::error::same_len("decoding bits", outputs.len(), decoding.len())?;
        outputs
            .iter()
            .zip(decoding)
            .map(|(&w, &d)| Ok(lsb(wire(&self.labels, w)?) ^ d))
            .collect()
    }
}

/// [`Garbler::garble_batch`]'s loop, run with the cipher in hand.
struct GarbleBatch<'a> {
    garbler: &'a mut Garbler,
    gates: &'a [Gate],
    tables: &'a mut Vec<u8>,
}

impl WithAes for GarbleBatch<'_> {
    type Output = Result<(), TwopcError>;

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        check_wires(self.gates, self.garbler.zero.len())?;
        self.tables
            .reserve(AND_TABLE_BYTES * self.gates.len().min(1 << 16));
        for gate in self.gates {
            self.garbler.garble_with(aes, gate, self.tables);
        }
        Ok(())
    }
}

/// [`Evaluator::eval_batch`]'s loop, run with the cipher in hand.
struct EvalBatch<'a> {
    evaluator: &'a mut Evaluator,
    gates: &'a [Gate],
    tables: &'a [u8],
    pos: &'a mut usize,
}

impl WithAes for EvalBatch<'_> {
    type Output = Result<usize, TwopcError>;

    #[inline(always)]
    fn run<K: AesKernel>(self, aes: &mut K) -> Self::Output {
        check_wires(self.gates, self.evaluator.labels.len())?;
        for (i, gate) in self.gates.iter().enumerate() {
            if !self.evaluator.eval_with(aes, gate, self.tables, self.pos) {
                return Ok(i);
            }
        }
        Ok(self.gates.len())
    }
}
