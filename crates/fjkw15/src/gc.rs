//! GC\[F\](A, B, R), Yao's garbled circuit on inputs shared between A and B, evaluated by R
//! (FJKW15 §3, "Yao's Garbled Circuit on Secret-Shared Inputs"; notes §4.7). FJKW15 runs it
//! as GC\[F2FT\](E, C, D) and GC\[F2ET\](E, C, D) in Eviction: E garbles, C holds the other
//! shares, D evaluates and learns the output ([`crate::circuits`]).
//!
//! Garbling is doram's half-gates with free XOR ([`doram_twopc::Garbler`]). Every input wire
//! of the circuit carries one share: E's wires (its shares and its private inputs, the offsets
//! λ) and C's wires. The circuit XORs the two shares of a value itself (free), so that:
//! * E, which knows both labels of every wire, sends D the active labels of its own wires;
//! * for each of C's wires E gives C both labels, C forwards the one its bit selects.
//!
//! This replaces the paper's per-wire pads (A^a_i ⊕ B^b_i = K^(a⊕b)_i, no OT) by the XOR gate
//! the pads emulate; the views are the same: D gets one label per wire, C gets two labels of
//! its own wires only (their XOR is the garbling's Δ, which C cannot use without tables or
//! other labels; one passive corruption). No OT is needed either way. E draws Δ and every input
//! label from its own PRG, per instance.
//!
//! Messages: E → C the label pairs and E → D the tables, decoding bits and E's active labels;
//! C → D the chosen labels ([`E::gc_garble`], [`C::gc_choose`], [`D::gc_evaluate`]; the
//! conversions of [`crate::convert`] run it so). Eviction runs it garbled ahead
//! ([`E::gc_pregarble`]): C and E draw Δ and C's zero labels from their shared PRG, so no
//! pairs are sent; the tables with the labels of E's early inputs and C's labels go to D in
//! pre-computation, and only the labels of E's late inputs (its share bits) go online.

use doram_twopc::{Circuit, Evaluator, Garbler, gc::random_delta};

use crate::error::Fjkw15Error;
use crate::msgs::{WireMessage, check, decode_blocks, length};
use crate::party::{C, D, E, Role};

/// The public shape of one GC instance: the circuit's input, AND-gate and output counts and
/// which of its input wires are C's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GcShape {
    inputs: usize,
    and_gates: usize,
    outputs: usize,
    c_wire: Vec<bool>,
    late: Vec<bool>,
}

impl GcShape {
    /// The shape of `circuit` (all of whose inputs are garbler inputs) with C owning the input
    /// wires `c_wires`.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if the circuit has evaluator inputs or a wire of
    /// `c_wires` is not an input.
    pub fn new(circuit: &Circuit, c_wires: &[usize]) -> Result<GcShape, Fjkw15Error> {
        let inputs = circuit.garbler_inputs();
        if circuit.evaluator_inputs() != 0 || c_wires.iter().any(|&w| w >= inputs) {
            return Err(Fjkw15Error::InvalidInput(
                "GC on shared inputs: garbler-input circuits, C's wires among them",
            ));
        }
        let mut c_wire = vec![false; inputs];
        for &w in c_wires {
            c_wire[w] = true;
        }
        let (and_gates, outputs) = (circuit.and_gates(), circuit.outputs().len());
        Ok(GcShape {
            inputs,
            and_gates,
            outputs,
            c_wire,
            late: vec![false; inputs],
        })
    }

    /// As [`GcShape::new`] for a circuit garbled in pre-computation ([`E::gc_pregarble`]):
    /// `late_wires`, E's wires whose bits E learns only online, get their labels online
    /// ([`GcLate`]); E's other wires get theirs with the tables, C's with [`GcFromC`].
    ///
    /// # Errors
    /// As [`GcShape::new`]; [`Fjkw15Error::InvalidInput`] if a late wire is C's or not an
    /// input.
    pub fn pregarbled(
        circuit: &Circuit,
        c_wires: &[usize],
        late_wires: &[usize],
    ) -> Result<GcShape, Fjkw15Error> {
        let mut s = GcShape::new(circuit, c_wires)?;
        for &w in late_wires {
            if w >= s.inputs || s.c_wire[w] {
                return Err(Fjkw15Error::InvalidInput(
                    "GC on shared inputs: late wires are E's inputs",
                ));
            }
            s.late[w] = true;
        }
        Ok(s)
    }

    fn late_count(&self) -> usize {
        self.late.iter().filter(|&&l| l).count()
    }

    fn early_count(&self) -> usize {
        self.e_count() - self.late_count()
    }

    fn c_count(&self) -> usize {
        self.c_wire.iter().filter(|&&c| c).count()
    }

    fn e_count(&self) -> usize {
        self.inputs - self.c_count()
    }
}

/// E → D: the garbled tables, the output decoding bits and E's active input labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcFromE {
    tables: Vec<u8>,
    decoding: Vec<bool>,
    labels: Vec<u128>,
}

/// E → C: both labels of each of C's input wires, (zero, one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcPairs {
    pairs: Vec<[u128; 2]>,
}

/// C → D: the label of each of C's input wires that C's bit selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcFromC {
    labels: Vec<u128>,
}

impl WireMessage for GcFromE {
    type Shape = GcShape;
    const WHAT: &'static str = "GC tables, decoding bits and E's labels";

    fn wire_len(s: &GcShape) -> usize {
        s.and_gates * doram_twopc::gc::AND_TABLE_BYTES + s.outputs.div_ceil(8) + 16 * s.e_count()
    }

    fn fits(&self, s: &GcShape) -> bool {
        self.tables.len() == s.and_gates * doram_twopc::gc::AND_TABLE_BYTES
            && self.decoding.len() == s.outputs
            && self.labels.len() == s.e_count()
    }

    fn encode(&self) -> Vec<u8> {
        encode_tables(&self.tables, &self.decoding, &self.labels)
    }

    fn decode(bytes: &[u8], s: &GcShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let (tables, decoding, labels) = decode_tables(bytes, s)?;
        Ok(GcFromE {
            tables,
            decoding,
            labels,
        })
    }
}

/// Tables, then the decoding bits packed little-endian, then 16-byte labels.
fn encode_tables(tables: &[u8], decoding: &[bool], labels: &[u128]) -> Vec<u8> {
    let mut out = Vec::with_capacity(tables.len() + decoding.len().div_ceil(8) + 16 * labels.len());
    out.extend_from_slice(tables);
    let mut bits = vec![0u8; decoding.len().div_ceil(8)];
    for (k, &d) in decoding.iter().enumerate() {
        bits[k / 8] |= u8::from(d) << (k % 8);
    }
    out.extend_from_slice(&bits);
    out.extend(labels.iter().flat_map(|l| l.to_le_bytes()));
    out
}

/// The parts [`encode_tables`] joins, for a shape whose length the caller has checked.
type TableParts = (Vec<u8>, Vec<bool>, Vec<u128>);

fn decode_tables(bytes: &[u8], s: &GcShape) -> Result<TableParts, doram_core::CodecError> {
    let (tables, rest) = bytes.split_at(s.and_gates * doram_twopc::gc::AND_TABLE_BYTES);
    let (bits, labels) = rest.split_at(s.outputs.div_ceil(8));
    if !s.outputs.is_multiple_of(8) && bits[bits.len() - 1] >> (s.outputs % 8) != 0 {
        return Err(doram_core::CodecError::OutOfRange {
            what: "decoding bits beyond the outputs",
        });
    }
    let decoding = (0..s.outputs)
        .map(|k| (bits[k / 8] >> (k % 8)) & 1 == 1)
        .collect();
    Ok((tables.to_vec(), decoding, decode_blocks(labels)))
}

impl WireMessage for GcPairs {
    type Shape = GcShape;
    const WHAT: &'static str = "GC label pairs for C's wires";

    fn wire_len(s: &GcShape) -> usize {
        32 * s.c_count()
    }

    fn fits(&self, s: &GcShape) -> bool {
        self.pairs.len() == s.c_count()
    }

    fn encode(&self) -> Vec<u8> {
        self.pairs
            .iter()
            .flatten()
            .flat_map(|l| l.to_le_bytes())
            .collect()
    }

    fn decode(bytes: &[u8], s: &GcShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let b = decode_blocks(bytes);
        Ok(GcPairs {
            pairs: b.chunks_exact(2).map(|p| [p[0], p[1]]).collect(),
        })
    }
}

impl WireMessage for GcFromC {
    type Shape = GcShape;
    const WHAT: &'static str = "GC labels of C's wires";

    fn wire_len(s: &GcShape) -> usize {
        16 * s.c_count()
    }

    fn fits(&self, s: &GcShape) -> bool {
        self.labels.len() == s.c_count()
    }

    fn encode(&self) -> Vec<u8> {
        self.labels.iter().flat_map(|l| l.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8], s: &GcShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        Ok(GcFromC {
            labels: decode_blocks(bytes),
        })
    }
}

/// E → D in pre-computation ([`E::gc_pregarble`]): the garbled tables, the output decoding
/// bits and the labels of E's early wires (those whose bits E knows then).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcTables {
    tables: Vec<u8>,
    decoding: Vec<bool>,
    labels: Vec<u128>,
}

/// E → D online: the labels of E's late wires ([`E::gc_late`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcLate {
    labels: Vec<u128>,
}

/// What E keeps of a pre-garbled instance for its online message: Δ and the zero labels of
/// its late wires, in input order.
#[derive(Clone)]
pub struct GcLateKeys {
    delta: u128,
    zero: Vec<u128>,
}

impl core::fmt::Debug for GcLateKeys {
    /// Shape only: Δ and the labels are secret.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "GcLateKeys({} late wires, ..)", self.zero.len())
    }
}

impl WireMessage for GcTables {
    type Shape = GcShape;
    const WHAT: &'static str = "GC tables, decoding bits and E's early labels";

    fn wire_len(s: &GcShape) -> usize {
        s.and_gates * doram_twopc::gc::AND_TABLE_BYTES
            + s.outputs.div_ceil(8)
            + 16 * s.early_count()
    }

    fn fits(&self, s: &GcShape) -> bool {
        self.tables.len() == s.and_gates * doram_twopc::gc::AND_TABLE_BYTES
            && self.decoding.len() == s.outputs
            && self.labels.len() == s.early_count()
    }

    fn encode(&self) -> Vec<u8> {
        encode_tables(&self.tables, &self.decoding, &self.labels)
    }

    fn decode(bytes: &[u8], s: &GcShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        let (tables, decoding, labels) = decode_tables(bytes, s)?;
        Ok(GcTables {
            tables,
            decoding,
            labels,
        })
    }
}

impl WireMessage for GcLate {
    type Shape = GcShape;
    const WHAT: &'static str = "GC labels of E's late wires";

    fn wire_len(s: &GcShape) -> usize {
        16 * s.late_count()
    }

    fn fits(&self, s: &GcShape) -> bool {
        self.labels.len() == s.late_count()
    }

    fn encode(&self) -> Vec<u8> {
        self.labels.iter().flat_map(|l| l.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8], s: &GcShape) -> Result<Self, doram_core::CodecError> {
        length(bytes, Self::wire_len(s))?;
        Ok(GcLate {
            labels: decode_blocks(bytes),
        })
    }
}

/// Garbles `circuit` under `delta` with the input zero labels `zero`: its tables and output
/// decoding bits.
fn garble(
    circuit: &Circuit,
    s: &GcShape,
    delta: u128,
    zero: &[u128],
) -> Result<(Vec<u8>, Vec<bool>), Fjkw15Error> {
    let mut g = Garbler::new(delta, circuit.wires()).map_err(misfit)?;
    g.set_input_labels(zero).map_err(misfit)?;
    let mut tables = Vec::with_capacity(s.and_gates * doram_twopc::gc::AND_TABLE_BYTES);
    g.garble_batch(circuit.gates(), &mut tables)
        .map_err(misfit)?;
    let decoding = g.decoding_bits(circuit.outputs()).map_err(misfit)?;
    Ok((tables, decoding))
}

fn misfit(_: doram_twopc::TwopcError) -> Fjkw15Error {
    Fjkw15Error::InvalidInput("the circuit does not fit its shape")
}

impl E {
    /// GC\[F\] at A = E: garbles `circuit` under a fresh Δ and fresh input labels; returns the
    /// message to D (tables, decoding bits, the labels of `e_bits` on E's wires, in input
    /// order) and to C (both labels of each of C's wires).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `e_bits` has not one bit per wire of E's.
    pub fn gc_garble(
        &mut self,
        circuit: &Circuit,
        s: &GcShape,
        e_bits: &[bool],
    ) -> Result<(GcFromE, GcPairs), Fjkw15Error> {
        if e_bits.len() != s.e_count() || circuit.garbler_inputs() != s.inputs {
            return Err(Fjkw15Error::InvalidInput("one bit per wire of E's"));
        }
        let delta = random_delta(&mut self.local);
        let zero: Vec<u128> = (0..s.inputs).map(|_| self.local.next_u128()).collect();
        let (tables, decoding) = garble(circuit, s, delta, &zero)?;
        let mut e_bits = e_bits.iter();
        let (mut labels, mut pairs) = (Vec::new(), Vec::new());
        for (w, &is_c) in s.c_wire.iter().enumerate() {
            if is_c {
                pairs.push([zero[w], zero[w] ^ delta]);
            } else if let Some(&bit) = e_bits.next() {
                labels.push(if bit { zero[w] ^ delta } else { zero[w] });
            }
        }
        Ok((
            GcFromE {
                tables,
                decoding,
                labels,
            },
            GcPairs { pairs },
        ))
    }
}

impl C {
    /// GC\[F\] at B = C: the label of each of its wires that its bit selects, for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E for pairs of the wrong shape;
    /// [`Fjkw15Error::InvalidInput`] if `c_bits` has not one bit per wire of C's.
    pub fn gc_choose(
        &self,
        s: &GcShape,
        pairs: &GcPairs,
        c_bits: &[bool],
    ) -> Result<GcFromC, Fjkw15Error> {
        check(pairs, self.roles.party(Role::E), s)?;
        if c_bits.len() != s.c_count() {
            return Err(Fjkw15Error::InvalidInput("one bit per wire of C's"));
        }
        let labels = pairs
            .pairs
            .iter()
            .zip(c_bits)
            .map(|(p, &b)| p[usize::from(b)])
            .collect();
        Ok(GcFromC { labels })
    }
}

impl D {
    /// GC\[F\] at R = D: evaluates `circuit` on E's and C's labels and decodes the output.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape.
    pub fn gc_evaluate(
        &self,
        circuit: &Circuit,
        s: &GcShape,
        from_e: &GcFromE,
        from_c: &GcFromC,
    ) -> Result<Vec<bool>, Fjkw15Error> {
        check(from_e, self.roles.party(Role::E), s)?;
        check(from_c, self.roles.party(Role::C), s)?;
        let (mut e_labels, mut c_labels) = (from_e.labels.iter(), from_c.labels.iter());
        let inputs: Vec<u128> = s
            .c_wire
            .iter()
            .filter_map(|&is_c| {
                if is_c {
                    c_labels.next()
                } else {
                    e_labels.next()
                }
            })
            .copied()
            .collect();
        let mut ev = Evaluator::new(circuit.wires());
        ev.set_input_labels(&inputs).map_err(misfit)?;
        let mut pos = 0;
        ev.eval_batch(circuit.gates(), &from_e.tables, &mut pos)
            .map_err(misfit)?;
        ev.decode(circuit.outputs(), &from_e.decoding)
            .map_err(misfit)
    }
}

/// GC\[F\] with the garbling in pre-computation (our scheduling of FJKW15 §3's GC on shared
/// inputs, which sends the garbled circuit "off-line"): E and C draw Δ and the zero labels of
/// C's wires from a fresh sub-seed of their PRG (`ce`), so E sends C no label pairs; C, whose
/// bits are known in pre-computation too, sends D its labels then ([`C::gc_prelabels`]); E
/// sends D the tables with the labels of its early wires ([`E::gc_pregarble`]) and, online,
/// those of its late wires ([`E::gc_late`]). C knows Δ, as when E sends it both labels of its
/// wires ([`E::gc_garble`]); D's view is the same as there.
impl E {
    /// Pre-computation at A = E: garbles `circuit` under Δ from `ce`, with C's zero labels
    /// from `ce` and E's from its own PRG; returns the message to D (tables, decoding bits,
    /// the labels of `early_bits` on E's early wires, in input order) and what E keeps for
    /// [`E::gc_late`].
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `early_bits` has not one bit per early wire.
    pub fn gc_pregarble(
        &mut self,
        circuit: &Circuit,
        s: &GcShape,
        early_bits: &[bool],
        ce: &mut doram_prim::AesPrg,
    ) -> Result<(GcTables, GcLateKeys), Fjkw15Error> {
        if early_bits.len() != s.early_count() || circuit.garbler_inputs() != s.inputs {
            return Err(Fjkw15Error::InvalidInput("one bit per early wire of E's"));
        }
        let delta = random_delta(ce);
        let zero: Vec<u128> = s
            .c_wire
            .iter()
            .map(|&is_c| {
                if is_c {
                    ce.next_u128()
                } else {
                    self.local.next_u128()
                }
            })
            .collect();
        let (tables, decoding) = garble(circuit, s, delta, &zero)?;
        let mut early = early_bits.iter();
        let (mut labels, mut late) = (Vec::new(), Vec::new());
        for (w, (&is_c, &is_late)) in s.c_wire.iter().zip(&s.late).enumerate() {
            if is_late {
                late.push(zero[w]);
            } else if !is_c && let Some(&bit) = early.next() {
                labels.push(if bit { zero[w] ^ delta } else { zero[w] });
            }
        }
        Ok((
            GcTables {
                tables,
                decoding,
                labels,
            },
            GcLateKeys { delta, zero: late },
        ))
    }

    /// Online at A = E: the labels of `late_bits` on E's late wires, for D.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `late_bits` has not one bit per late wire.
    pub fn gc_late(&self, keys: &GcLateKeys, late_bits: &[bool]) -> Result<GcLate, Fjkw15Error> {
        if late_bits.len() != keys.zero.len() {
            return Err(Fjkw15Error::InvalidInput("one bit per late wire of E's"));
        }
        let labels = keys
            .zero
            .iter()
            .zip(late_bits)
            .map(|(&z, &b)| if b { z ^ keys.delta } else { z })
            .collect();
        Ok(GcLate { labels })
    }
}

impl C {
    /// Pre-computation at B = C: the label of each of its wires that `c_bits` selects, from
    /// Δ and the zero labels drawn from `ce` as [`E::gc_pregarble`] draws them.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `c_bits` has not one bit per wire of C's.
    pub fn gc_prelabels(
        &self,
        s: &GcShape,
        c_bits: &[bool],
        ce: &mut doram_prim::AesPrg,
    ) -> Result<GcFromC, Fjkw15Error> {
        if c_bits.len() != s.c_count() {
            return Err(Fjkw15Error::InvalidInput("one bit per wire of C's"));
        }
        let delta = random_delta(ce);
        let labels = c_bits
            .iter()
            .map(|&b| {
                let z = ce.next_u128();
                if b { z ^ delta } else { z }
            })
            .collect();
        Ok(GcFromC { labels })
    }
}

impl D {
    /// Online at R = D: evaluates a pre-garbled `circuit` on the labels of C's wires and E's
    /// early wires (pre-computation) and of E's late wires (online), and decodes the output.
    ///
    /// # Errors
    /// [`Fjkw15Error::Peer`] naming E or C for messages of the wrong shape.
    pub fn gc_evaluate_pre(
        &self,
        circuit: &Circuit,
        s: &GcShape,
        (tables, from_c): (&GcTables, &GcFromC),
        late: &GcLate,
    ) -> Result<Vec<bool>, Fjkw15Error> {
        let e = self.roles.party(Role::E);
        check(tables, e, s)?;
        check(late, e, s)?;
        check(from_c, self.roles.party(Role::C), s)?;
        let (mut early, mut c, mut l) = (
            tables.labels.iter(),
            from_c.labels.iter(),
            late.labels.iter(),
        );
        let inputs: Vec<u128> = s
            .c_wire
            .iter()
            .zip(&s.late)
            .filter_map(|(&is_c, &is_late)| match (is_c, is_late) {
                (true, _) => c.next(),
                (false, true) => l.next(),
                (false, false) => early.next(),
            })
            .copied()
            .collect();
        let mut ev = Evaluator::new(circuit.wires());
        ev.set_input_labels(&inputs).map_err(misfit)?;
        let mut pos = 0;
        ev.eval_batch(circuit.gates(), &tables.tables, &mut pos)
            .map_err(misfit)?;
        ev.decode(circuit.outputs(), &tables.decoding)
            .map_err(misfit)
    }
}
