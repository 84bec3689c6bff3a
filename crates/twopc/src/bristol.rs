//! Bristol Fashion circuits: import and export.
//!
//! Bristol Fashion is the text format of the Bristol Fashion MPC circuit collection (David
//! Archer, Nigel Smart et al.: AES, SHA-256, arithmetic, …):
//!
//! ```text
//! ngates nwires
//! niv n_1 … n_niv          (input values and their widths in bits)
//! nov m_1 … m_nov          (output values and their widths)
//!
//! 2 1 a b out XOR          (also AND)
//! 1 1 a out INV            (also EQW: out = a)
//! 1 1 c out EQ             (out = the constant c ∈ {0, 1})
//! ```
//!
//! Input value `k` occupies the next `n_k` wires from wire 0 on; the outputs are the last
//! `m_1 + … + m_nov` wires, in order. Gates are in evaluation order, and every wire is set
//! once.
//!
//! **Bit order.** In the collection's circuits (AES-128, SHA-256, checked by the known-answer
//! tests in `tests/bristol.rs`) a value's first wire is its *least* significant bit, where
//! the value is the usual byte string read as a big-endian number: the key, block or digest
//! `B_0 B_1 … B_{k-1}` is the integer `B_0·256^{k-1} + … + B_{k-1}`, so wire 0 is the low bit
//! of the *last* byte and the last wire the high bit of the first byte. That is the
//! [`Word`](crate::builder::Word) order of the builder; [`le_bits`](crate::builder::le_bits)
//! of the big-endian integer gives the wire values.
//!
//! [`parse`] reads a file into a [`BristolCircuit`] through the [`Builder`], so `EQ`/`EQW`
//! gates fold away (constants and copies need no gate) and every other gate becomes one gate,
//! unless an `EQ` constant among its inputs folds it too. It is written for untrusted input:
//! every count is checked against [`ParseLimits`] and against the input's size before
//! anything is allocated, and a malformed file is a [`BristolError`] naming the line, never a
//! panic. [`export`] writes any [`Circuit`] in the format; importing an export gives a circuit
//! with the same gates up to the numbering of wires, whose export is the same text.

use crate::TwopcError;
use crate::builder::{Bit, Builder, gate_output};
use crate::gc::{Circuit, Gate, WireId};

/// Bounds on what [`parse`] accepts, checked before it allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseLimits {
    /// Most wires (`nwires`).
    pub max_wires: usize,
    /// Most gates (`ngates`).
    pub max_gates: usize,
    /// Most input values (`niv`) and most output values (`nov`).
    pub max_values: usize,
}

impl Default for ParseLimits {
    /// 2^24 wires and gates (a few hundred MB for the parser at most), 2^16 values.
    fn default() -> Self {
        ParseLimits {
            max_wires: 1 << 24,
            max_gates: 1 << 24,
            max_values: 1 << 16,
        }
    }
}

/// A Bristol Fashion file that could not be read: the line (counted from 1) and the fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Bristol circuit, line {line}: {kind}")]
pub struct BristolError {
    /// The line at fault (1-based); for a missing line, the last line's number plus one.
    pub line: usize,
    /// What was wrong.
    pub kind: BristolErrorKind,
}

/// What was wrong with a Bristol Fashion file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BristolErrorKind {
    /// The file ended before the header or all gates were read.
    #[error("unexpected end of file: expected {0}")]
    UnexpectedEnd(&'static str),
    /// A token is not a decimal number that fits the machine's word.
    #[error("not a number: {0:?}")]
    NotANumber(String),
    /// A line has the wrong number of tokens.
    #[error("{what}: expected {expected} tokens, got {got}")]
    WrongTokenCount {
        /// Which line.
        what: &'static str,
        /// Tokens expected.
        expected: usize,
        /// Tokens found.
        got: usize,
    },
    /// A count is beyond the parser's limits or beyond what the file could hold.
    #[error("{what} = {got} is more than the limit {limit}")]
    TooLarge {
        /// Which count.
        what: &'static str,
        /// Its value.
        got: usize,
        /// The largest accepted.
        limit: usize,
    },
    /// A gate type this parser does not know, or a known one with the wrong arity.
    #[error("unsupported gate {name:?} with {inputs} inputs and {outputs} outputs")]
    UnsupportedGate {
        /// The gate's name.
        name: String,
        /// Its number of inputs.
        inputs: usize,
        /// Its number of outputs.
        outputs: usize,
    },
    /// An `EQ` gate's constant is neither 0 nor 1.
    #[error("EQ constant {0} is not 0 or 1")]
    BadConstant(usize),
    /// A wire number is not below `nwires`.
    #[error("wire {wire} out of range (nwires = {wires})")]
    WireOutOfRange {
        /// The wire.
        wire: usize,
        /// `nwires`.
        wires: usize,
    },
    /// A gate reads a wire that is neither an input nor set by an earlier gate.
    #[error("wire {0} is used before it is assigned")]
    UsedBeforeAssigned(usize),
    /// A gate sets a wire that is an input or was set before.
    #[error("wire {0} is assigned twice")]
    AssignedTwice(usize),
    /// An output wire is never set.
    #[error("output wire {0} is never assigned")]
    OutputNotAssigned(usize),
    /// There are more gate lines than the header says.
    #[error("more gates than the {0} in the header")]
    TooManyGates(usize),
    /// The circuit cannot be built (e.g. a constant output and no input wire to derive it).
    #[error("{0}")]
    Build(String),
}

/// A circuit read from a Bristol Fashion file: the [`Circuit`] (all inputs counted as the
/// garbler's until [`two_party`](BristolCircuit::two_party) splits them) and the widths of
/// the input and output values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BristolCircuit {
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    circuit: Circuit,
}

impl BristolCircuit {
    /// The widths of the input values, in wire order.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// The widths of the output values, in wire order.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The circuit with every input the garbler's.
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// The circuit for two parties: the first `garbler_values` input values are the garbler's,
    /// the rest the evaluator's.
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if there are fewer than `garbler_values` input values.
    pub fn two_party(&self, garbler_values: usize) -> Result<Circuit, TwopcError> {
        let g: usize = self
            .inputs
            .get(..garbler_values)
            .ok_or(TwopcError::ApiMisuse(
                "more garbler values than input values",
            ))?
            .iter()
            .sum();
        let c = &self.circuit;
        let all = c.garbler_inputs() + c.evaluator_inputs();
        Circuit::new(
            g,
            all - g,
            c.wires(),
            c.gates().to_vec(),
            c.outputs().to_vec(),
        )
    }
}

/// One non-blank line: its number and its tokens.
struct Line<'a> {
    number: usize,
    tokens: Vec<&'a [u8]>,
}

type SplitLines<'a> = std::slice::Split<'a, u8, fn(&u8) -> bool>;

struct Lines<'a> {
    inner: std::iter::Enumerate<SplitLines<'a>>,
    last: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a [u8]) -> Self {
        // A final newline ends the last line; it does not start another.
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let newline: fn(&u8) -> bool = |&b| b == b'\n';
        let mut inner = text.split(newline).enumerate();
        if text.is_empty() {
            // An empty file has no lines, not one empty line.
            inner.next();
        }
        Lines { inner, last: 0 }
    }

    /// The next non-blank line, or an error naming what was expected.
    fn next_line(&mut self, what: &'static str) -> Result<Line<'a>, BristolError> {
        self.next_nonblank().ok_or(BristolError {
            line: self.last + 1,
            kind: BristolErrorKind::UnexpectedEnd(what),
        })
    }

    fn next_nonblank(&mut self) -> Option<Line<'a>> {
        for (i, l) in self.inner.by_ref() {
            self.last = i + 1;
            let tokens: Vec<&[u8]> = l
                .split(|b| b.is_ascii_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            if !tokens.is_empty() {
                return Some(Line {
                    number: i + 1,
                    tokens,
                });
            }
        }
        None
    }
}

impl Line<'_> {
    fn err(&self, kind: BristolErrorKind) -> BristolError {
        BristolError {
            line: self.number,
            kind,
        }
    }

    fn number(&self, i: usize) -> Result<usize, BristolError> {
        let t = self.tokens.get(i).copied().unwrap_or_default();
        let not_a_number = || {
            self.err(BristolErrorKind::NotANumber(
                String::from_utf8_lossy(t).into_owned(),
            ))
        };
        if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
            return Err(not_a_number());
        }
        t.iter().try_fold(0usize, |acc, &d| {
            acc.checked_mul(10)
                .and_then(|a| a.checked_add(usize::from(d - b'0')))
                .ok_or_else(not_a_number)
        })
    }

    fn expect_tokens(&self, what: &'static str, expected: usize) -> Result<(), BristolError> {
        if self.tokens.len() == expected {
            Ok(())
        } else {
            Err(self.err(BristolErrorKind::WrongTokenCount {
                what,
                expected,
                got: self.tokens.len(),
            }))
        }
    }

    fn at_most(&self, what: &'static str, got: usize, limit: usize) -> Result<usize, BristolError> {
        if got <= limit {
            Ok(got)
        } else {
            Err(self.err(BristolErrorKind::TooLarge { what, got, limit }))
        }
    }

    /// A value-count line `n w_1 … w_n`: the widths, whose sum is at most `wires`.
    fn widths(
        &self,
        what: &'static str,
        limits: &ParseLimits,
        wires: usize,
    ) -> Result<Vec<usize>, BristolError> {
        let n = self.at_most(what, self.number(0)?, limits.max_values)?;
        self.expect_tokens(what, n + 1)?;
        let widths = (1..=n)
            .map(|i| self.number(i))
            .collect::<Result<Vec<_>, _>>()?;
        let total = widths.iter().try_fold(0usize, |a, &w| a.checked_add(w));
        self.at_most("total width", total.unwrap_or(usize::MAX), wires)?;
        Ok(widths)
    }
}

/// Reads a Bristol Fashion circuit with the default [`ParseLimits`].
///
/// # Errors
/// [`BristolError`] naming the line at fault, for any malformed input.
pub fn parse(text: &[u8]) -> Result<BristolCircuit, BristolError> {
    parse_with_limits(text, &ParseLimits::default())
}

/// Reads a Bristol Fashion circuit within `limits`.
///
/// # Errors
/// [`BristolError`] naming the line at fault, for any malformed input or a count beyond
/// `limits`.
pub fn parse_with_limits(
    text: &[u8],
    limits: &ParseLimits,
) -> Result<BristolCircuit, BristolError> {
    let mut lines = Lines::new(text);
    let head = Head::parse(&mut lines, text.len(), limits)?;
    let mut b = Builder::new();
    let mut wires: Vec<Option<Bit>> = vec![None; head.n_wires];
    for w in wires.iter_mut().take(head.n_in()) {
        *w = Some(b.garbler_bit());
    }
    for _ in 0..head.n_gates {
        let l = lines.next_line("a gate")?;
        gate_line(&l, &mut wires, &mut b)?;
    }
    if let Some(l) = lines.next_nonblank() {
        return Err(l.err(BristolErrorKind::TooManyGates(head.n_gates)));
    }
    let first_out = head.n_wires - head.outputs.iter().sum::<usize>();
    for (w, bit) in (first_out..).zip(&wires[first_out..]) {
        match bit {
            Some(bit) => b.output(*bit),
            None => return Err(head.out_line.err(BristolErrorKind::OutputNotAssigned(w))),
        }
    }
    let circuit = b.finish().map_err(|e| BristolError {
        line: lines.last,
        kind: BristolErrorKind::Build(e.to_string()),
    })?;
    Ok(BristolCircuit {
        inputs: head.inputs,
        outputs: head.outputs,
        circuit,
    })
}

/// The three lines before the gates: counts and value widths, checked against the limits
/// and against the size of the file.
struct Head<'a> {
    n_gates: usize,
    n_wires: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// The output line, named by an error about an output wire no gate sets.
    out_line: Line<'a>,
}

impl<'a> Head<'a> {
    /// Reads the header `ngates nwires`, the input line and the output line; `text_len` is
    /// the file's size in bytes.
    fn parse(
        lines: &mut Lines<'a>,
        text_len: usize,
        limits: &ParseLimits,
    ) -> Result<Self, BristolError> {
        let header = lines.next_line("the header \"ngates nwires\"")?;
        header.expect_tokens("header", 2)?;
        // A gate line has at least 5 tokens and a newline: ≥ 10 bytes.
        let gate_room = limits.max_gates.min(text_len / 10);
        let (n_gates, n_wires) = (header.number(0)?, header.number(1)?);
        let n_gates = header.at_most("ngates", n_gates, gate_room)?;
        let n_wires = header.at_most("nwires", n_wires, limits.max_wires)?;
        let in_line = lines.next_line("the input line")?;
        let inputs = in_line.widths("input line", limits, n_wires)?;
        let out_line = lines.next_line("the output line")?;
        let outputs = out_line.widths("output line", limits, n_wires)?;
        let n_in: usize = inputs.iter().sum();
        // Every wire is an input or set by a gate, so this bounds the wire table by the file.
        header.at_most("nwires", n_wires, n_in.saturating_add(n_gates))?;
        Ok(Head {
            n_gates,
            n_wires,
            inputs,
            outputs,
            out_line,
        })
    }

    /// The number of input wires.
    fn n_in(&self) -> usize {
        self.inputs.iter().sum()
    }
}

/// One gate line `nin nout in… out NAME`: builds the gate on the values of its input wires
/// and sets its output wire, which no earlier gate may have set.
fn gate_line(l: &Line<'_>, wires: &mut [Option<Bit>], b: &mut Builder) -> Result<(), BristolError> {
    use BristolErrorKind as K;
    let nin = l.number(0)?;
    let nout = l.number(1)?;
    let unsupported = |name: &[u8]| {
        l.err(K::UnsupportedGate {
            name: String::from_utf8_lossy(name).into_owned(),
            inputs: nin,
            outputs: nout,
        })
    };
    if nin > 2 || nout != 1 {
        return Err(unsupported(l.tokens.last().copied().unwrap_or_default()));
    }
    l.expect_tokens("gate", nin + nout + 3)?;
    let name = l.tokens[nin + nout + 2];
    let read = |i: usize| -> Result<Bit, BristolError> {
        let w = l.number(2 + i)?;
        match wires.get(w) {
            None => Err(l.err(K::WireOutOfRange {
                wire: w,
                wires: wires.len(),
            })),
            Some(None) => Err(l.err(K::UsedBeforeAssigned(w))),
            Some(Some(bit)) => Ok(*bit),
        }
    };
    let value = match (name, nin) {
        (b"XOR", 2) => {
            let (x, y) = (read(0)?, read(1)?);
            b.xor(x, y)
        }
        (b"AND", 2) => {
            let (x, y) = (read(0)?, read(1)?);
            b.and(x, y)
        }
        (b"INV", 1) => {
            let x = read(0)?;
            b.not(x)
        }
        (b"EQW", 1) => read(0)?,
        (b"EQ", 1) => match l.number(2)? {
            c @ (0 | 1) => Bit::constant(c == 1),
            c => return Err(l.err(K::BadConstant(c))),
        },
        _ => return Err(unsupported(name)),
    };
    set_wire(l, wires, l.number(2 + nin)?, value)
}

/// Sets wire `out` of the gate on line `l` to `value`; no earlier gate may have set it.
fn set_wire(
    l: &Line<'_>,
    wires: &mut [Option<Bit>],
    out: usize,
    value: Bit,
) -> Result<(), BristolError> {
    let n_wires = wires.len();
    match wires.get_mut(out) {
        None => Err(l.err(BristolErrorKind::WireOutOfRange {
            wire: out,
            wires: n_wires,
        })),
        Some(Some(_)) => Err(l.err(BristolErrorKind::AssignedTwice(out))),
        Some(slot) => {
            *slot = Some(value);
            Ok(())
        }
    }
}

/// Where a wire's current value comes from, while exporting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Unset,
    Input(WireId),
    Gate(usize),
}

/// Writes `circuit` in Bristol Fashion, its inputs split into values of `inputs` bits and its
/// outputs into values of `outputs` bits.
///
/// Inputs keep their wires (garbler's then evaluator's). Every gate gets a fresh output wire,
/// so a circuit that sets a wire twice is still exported with each wire set once; each output
/// is the gate that computes it, moved to its place among the last wires, or — for an input,
/// or a value output twice — an `EQW` copy at the end.
///
/// # Errors
/// [`TwopcError::LengthMismatch`] if the widths do not add up to the circuit's inputs or
/// outputs.
pub fn export(
    circuit: &Circuit,
    inputs: &[usize],
    outputs: &[usize],
) -> Result<String, TwopcError> {
    use std::fmt::Write;
    let n_in = circuit.garbler_inputs() + circuit.evaluator_inputs();
    crate::error::same_len("Bristol input widths", n_in, inputs.iter().sum())?;
    let outs = circuit.outputs();
    crate::error::same_len("Bristol output widths", outs.len(), outputs.iter().sum())?;
    let layout = Layout::of(circuit, n_in);
    let mut s = String::with_capacity(24 * layout.n_gates + 64);
    // Writing to a String cannot fail.
    let _ = writeln!(s, "{} {}", layout.n_gates, layout.n_wires);
    let _ = writeln!(s, "{}", width_line(inputs));
    let _ = writeln!(s, "{}", width_line(outputs));
    let _ = writeln!(s);
    layout.write_gates(&mut s, circuit, n_in);
    Ok(s)
}

/// A value-count line `n w_1 … w_n`.
fn width_line(widths: &[usize]) -> String {
    let mut l = widths.len().to_string();
    for x in widths {
        l.push(' ');
        l.push_str(&x.to_string());
    }
    l
}

/// The exported wire numbering: each gate's fresh output wire, and the outputs that need an
/// `EQW` copy.
struct Layout {
    /// The Bristol wire of gate t's output.
    id: Vec<usize>,
    /// (output index, source) of each output that is not the gate computing it.
    copies: Vec<(usize, Source)>,
    n_gates: usize,
    n_wires: usize,
    /// The first output wire.
    first_out: usize,
}

impl Layout {
    /// Numbers `circuit`'s gates in static single assignment: each output is the gate that
    /// computes it, moved to its place among the last wires, unless an earlier output already
    /// took that gate or the output is an input; the other gates take the wires after the
    /// inputs in order.
    fn of(circuit: &Circuit, n_in: usize) -> Layout {
        let gates = circuit.gates();
        let outs = circuit.outputs();
        // What each wire holds at the end, gate by gate.
        let mut cur = vec![Source::Unset; circuit.wires()];
        for (w, s) in (0..).zip(cur.iter_mut().take(n_in)) {
            *s = Source::Input(w);
        }
        for (t, g) in gates.iter().enumerate() {
            cur[gate_output(g) as usize] = Source::Gate(t);
        }
        // Which output each gate is, if it is one; the rest are copies.
        let mut claimed: Vec<Option<usize>> = vec![None; gates.len()];
        let mut copies = Vec::new();
        for (k, &w) in outs.iter().enumerate() {
            match cur[w as usize] {
                Source::Gate(t) if claimed[t].is_none() => claimed[t] = Some(k),
                s => copies.push((k, s)),
            }
        }
        let n_gates = gates.len() + copies.len();
        let n_wires = n_in + n_gates;
        let first_out = n_wires - outs.len();
        let mut next = n_in;
        let id: Vec<usize> = claimed
            .iter()
            .map(|c| match c {
                Some(k) => first_out + k,
                None => {
                    next += 1;
                    next - 1
                }
            })
            .collect();
        Layout {
            id,
            copies,
            n_gates,
            n_wires,
            first_out,
        }
    }

    /// Writes the gate lines: `circuit`'s gates reading the wires their inputs hold at that
    /// point, then the `EQW` copies.
    fn write_gates(&self, s: &mut String, circuit: &Circuit, n_in: usize) {
        use std::fmt::Write;
        let id = &self.id;
        let mut now = vec![Source::Unset; circuit.wires()];
        for (w, s) in (0..).zip(now.iter_mut().take(n_in)) {
            *s = Source::Input(w);
        }
        let name = |src: Source| match src {
            Source::Input(w) => w as usize,
            Source::Gate(t) => id[t],
            // Circuit::new checked that every gate reads a set wire.
            Source::Unset => usize::MAX,
        };
        // Writing to a String cannot fail.
        for (t, g) in circuit.gates().iter().enumerate() {
            let _ = match *g {
                Gate::Xor { a, b, .. } => writeln!(
                    s,
                    "2 1 {} {} {} XOR",
                    name(now[a as usize]),
                    name(now[b as usize]),
                    id[t]
                ),
                Gate::And { a, b, .. } => writeln!(
                    s,
                    "2 1 {} {} {} AND",
                    name(now[a as usize]),
                    name(now[b as usize]),
                    id[t]
                ),
                Gate::Inv { a, .. } => writeln!(s, "1 1 {} {} INV", name(now[a as usize]), id[t]),
            };
            now[gate_output(g) as usize] = Source::Gate(t);
        }
        for &(k, src) in &self.copies {
            let _ = writeln!(s, "1 1 {} {} EQW", name(src), self.first_out + k);
        }
    }
}

/// [`export`] with one input value per party (the garbler's, then the evaluator's; a party
/// without inputs has none) and one output value.
pub fn export_two_party(circuit: &Circuit) -> String {
    let inputs: Vec<usize> = [circuit.garbler_inputs(), circuit.evaluator_inputs()]
        .into_iter()
        .filter(|&n| n > 0)
        .collect();
    let outputs: Vec<usize> = [circuit.outputs().len()]
        .into_iter()
        .filter(|&n| n > 0)
        .collect();
    // The widths add up by construction.
    export(circuit, &inputs, &outputs).unwrap_or_default()
}
