//! A typed circuit builder: bits, fixed-width words and the standard gadgets, producing a
//! [`Circuit`] and counting what garbling it costs.
//!
//! # Bits, words and bit order
//! A [`Bit`] is a wire of the circuit under construction or a constant. A [`Word<N>`] is `N`
//! bits, an unsigned integer (or two's complement, for the signed gadgets) in
//! **little-endian bit order**: `bits()[0]` is the least significant bit, `bits()[N - 1]` the
//! most significant (the sign bit). Input words are fed and outputs read in the same order:
//! [`le_bits`] and [`le_value`] convert.
//!
//! # Cost
//! AND gates cost one half-gates table, [`AND_TABLE_BYTES`](crate::gc::AND_TABLE_BYTES) = 32
//! bytes; XOR and INV gates are free (free-XOR). The builder counts all three
//! ([`Builder::counts`]). Constants fold: an operation with a constant operand emits no AND
//! gate (`x ∧ 0 = 0`, `x ∧ 1 = x`, `x ⊕ 0 = x`, `x ⊕ 1 = ¬x`, one INV), and an operation on
//! constants only emits nothing. Apart from that, the builder emits exactly one gate per
//! primitive operation (it does not spot `x ⊕ x` or common subexpressions), so the
//! [Bristol importer](crate::bristol) keeps the counts of the circuits it reads.
//!
//! # Gadgets and their AND counts
//! For `N`-bit words with secret (non-constant) bits:
//!
//! | gadget | ANDs |
//! |---|---|
//! | [`add`](Builder::add), [`sub`](Builder::sub) (mod 2^N, ripple carry) | N − 1 |
//! | [`add_with_carry`](Builder::add_with_carry) (carry in and out) | N |
//! | [`lt`](Builder::lt), [`gt`](Builder::gt), [`le`](Builder::le), [`ge`](Builder::ge), and their `_signed` forms | N |
//! | [`eq`](Builder::eq), [`ne`](Builder::ne) | N − 1 |
//! | [`mux`](Builder::mux) | N |
//! | [`Word::shl`], [`Word::shr`], [`Word::sar`], [`Word::rotl`], [`Word::rotr`] by a constant | 0 |
//! | [`shl_var`](Builder::shl_var), [`shr_var`](Builder::shr_var) by a K-bit secret, L = ⌈log₂ N⌉ | N·min(K, L), plus K − L − 1 + N if K > L |
//! | [`rotl_var`](Builder::rotl_var), [`rotr_var`](Builder::rotr_var) by a K-bit secret | N·#{j < K : 2^j mod N ≠ 0} (N·log₂ N for N = 2^K) |
//! | [`mul`](Builder::mul) (schoolbook, mod 2^N) | N² − N + 1 |
//! | [`lookup`](Builder::lookup) of an M-entry table, index of ⌈log₂ M⌉ bits | (M − 1)·N |
//!
//! # Composing and compacting
//! [`Builder::inline`] copies a finished circuit (say AES-128 read from a
//! [Bristol file](crate::bristol)) into the one being built, on any bits. [`compact_wires`]
//! renumbers a circuit so that wires are reused once their values are dead: the garbler's
//! and evaluator's memory is one label per wire, and a compacted circuit's wires are only
//! the values live at once.
//!
//! Bits belong to the builder that made them. A bit of another builder is a caller's
//! mistake: one whose wire number this builder has not reached makes [`Builder::finish`]
//! fail; one whose number it has reached cannot be told apart and silently names that wire.
//!
//! ```
//! use doram_twopc::builder::{Builder, Word, le_bits, le_value};
//!
//! let mut b = Builder::new();
//! let x: Word<8> = b.garbler_word();
//! let y: Word<8> = b.evaluator_word();
//! let sum = b.add(&x, &y);
//! let less = b.lt(&x, &y);
//! b.output_word(&sum);
//! b.output(less);
//! assert_eq!(b.counts().and, 7 + 8);
//! let c = b.finish().unwrap();
//! let out = c.eval_plain(&le_bits(200, 8), &le_bits(100, 8)).unwrap();
//! assert_eq!(le_value(&out[..8]), Some(44)); // 300 mod 256
//! assert!(!out[8]);
//! ```

use crate::TwopcError;
use crate::gc::{Circuit, Gate, WireId};

/// One bit of a circuit under construction: a wire or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bit(Repr);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Repr {
    Const(bool),
    Wire(WireId),
}

impl Bit {
    /// The constant 0.
    pub const ZERO: Bit = Bit(Repr::Const(false));
    /// The constant 1.
    pub const ONE: Bit = Bit(Repr::Const(true));

    /// The constant `b`.
    pub const fn constant(b: bool) -> Bit {
        Bit(Repr::Const(b))
    }

    /// The value, if this bit is a constant.
    pub fn as_constant(self) -> Option<bool> {
        match self.0 {
            Repr::Const(b) => Some(b),
            Repr::Wire(_) => None,
        }
    }
}

/// An `N`-bit word, least significant bit first (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Word<const N: usize> {
    bits: [Bit; N],
}

impl<const N: usize> Default for Word<N> {
    fn default() -> Self {
        Word::constant(0)
    }
}

impl<const N: usize> From<[Bit; N]> for Word<N> {
    fn from(bits: [Bit; N]) -> Self {
        Word { bits }
    }
}

impl<const N: usize> Word<N> {
    /// The constant `value` mod 2^N (bits above the 128th are 0).
    pub fn constant(value: u128) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| Bit::constant(i < 128 && (value >> i) & 1 == 1)),
        }
    }

    /// The word's bits, least significant first.
    pub fn bits(&self) -> &[Bit; N] {
        &self.bits
    }

    /// The most significant bit (the sign bit of a signed word); constant 0 if `N = 0`.
    pub fn msb(&self) -> Bit {
        self.bits.last().copied().unwrap_or(Bit::ZERO)
    }

    /// The value, if every bit is a constant and `N ≤ 128`.
    pub fn as_constant(&self) -> Option<u128> {
        if N > 128 {
            return None;
        }
        self.bits.iter().enumerate().try_fold(0u128, |acc, (i, b)| {
            b.as_constant().map(|v| acc | (u128::from(v) << i))
        })
    }

    /// `self · 2^k mod 2^N`: free.
    pub fn shl(&self, k: usize) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| i.checked_sub(k).map_or(Bit::ZERO, |j| self.bits[j])),
        }
    }

    /// `⌊self / 2^k⌋` (logical shift right): free.
    pub fn shr(&self, k: usize) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| {
                i.checked_add(k)
                    .and_then(|j| self.bits.get(j).copied())
                    .unwrap_or(Bit::ZERO)
            }),
        }
    }

    /// Arithmetic shift right (the sign bit fills in): free.
    pub fn sar(&self, k: usize) -> Word<N> {
        let sign = self.msb();
        Word {
            bits: std::array::from_fn(|i| {
                i.checked_add(k)
                    .and_then(|j| self.bits.get(j).copied())
                    .unwrap_or(sign)
            }),
        }
    }

    /// Rotation towards the most significant bit by `k` places: free.
    pub fn rotl(&self, k: usize) -> Word<N> {
        if N == 0 {
            return *self;
        }
        let k = k % N;
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + N - k) % N]),
        }
    }

    /// Rotation towards the least significant bit by `k` places: free.
    pub fn rotr(&self, k: usize) -> Word<N> {
        if N == 0 {
            return *self;
        }
        self.rotl(N - k % N)
    }

    /// The word zero-extended or truncated to `M` bits: free.
    pub fn resize<const M: usize>(&self) -> Word<M> {
        Word {
            bits: std::array::from_fn(|i| self.bits.get(i).copied().unwrap_or(Bit::ZERO)),
        }
    }

    /// The word sign-extended or truncated to `M` bits: free.
    pub fn sign_extend<const M: usize>(&self) -> Word<M> {
        let sign = self.msb();
        Word {
            bits: std::array::from_fn(|i| self.bits.get(i).copied().unwrap_or(sign)),
        }
    }
}

/// The little-endian bits of `value` mod 2^n (bits above the 128th are 0): a word's input
/// encoding.
pub fn le_bits(value: u128, n: usize) -> Vec<bool> {
    (0..n).map(|i| i < 128 && (value >> i) & 1 == 1).collect()
}

/// The value of little-endian `bits`; `None` if a bit above the 128th is set.
pub fn le_value(bits: &[bool]) -> Option<u128> {
    if bits.iter().skip(128).any(|&b| b) {
        return None;
    }
    Some(
        bits.iter()
            .take(128)
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (u128::from(b) << i)),
    )
}

/// Gate counts of a circuit: what garbling it costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GateCounts {
    /// AND gates: 32 bytes of garbled table each.
    pub and: usize,
    /// XOR gates: free.
    pub xor: usize,
    /// INV (NOT) gates: free.
    pub inv: usize,
}

impl GateCounts {
    /// The counts of `circuit`'s gates.
    pub fn of(circuit: &Circuit) -> GateCounts {
        let mut c = GateCounts::default();
        for g in circuit.gates() {
            c.add(g);
        }
        c
    }

    fn add(&mut self, g: &Gate) {
        match g {
            Gate::Xor { .. } => self.xor += 1,
            Gate::And { .. } => self.and += 1,
            Gate::Inv { .. } => self.inv += 1,
        }
    }

    /// Bytes of garbled tables: [`AND_TABLE_BYTES`](crate::gc::AND_TABLE_BYTES) per AND gate.
    pub fn table_bytes(&self) -> usize {
        self.and * crate::gc::AND_TABLE_BYTES
    }
}

/// `circuit` with its wires reused: the same gates in the same order computing the same
/// outputs, but a gate's output takes the wire of a value no longer needed, so the circuit
/// has as many wires as values live at once (plus the inputs). The garbler and evaluator
/// keep one label per wire, so this is their memory: for the Bristol AES-128 circuit it falls
/// from 36,919 wires to 1,493 (SHA-256: from 135,841 to 1,502), and the labels stay in cache.
///
/// Inputs keep their wires until their last use; outputs keep theirs to the end.
pub fn compact_wires(circuit: &Circuit) -> Circuit {
    let n_in = circuit.garbler_inputs() + circuit.evaluator_inputs();
    let last = last_reads(circuit, n_in);
    let mut alloc = WireAlloc::new(n_in, last);
    // `cur` maps each wire of `circuit` to the value it holds as the gates run.
    let mut cur: Vec<usize> = (0..circuit.wires()).collect();
    let mut out = Vec::with_capacity(circuit.gates().len());
    for (t, g) in circuit.gates().iter().enumerate() {
        let read = |w: WireId| cur.get(w as usize).copied().unwrap_or(0);
        let [a, b] = gate_ins(g).map(|w| w.map(read));
        out.push(alloc.gate(t, g, a, b));
        if let Some(c) = cur.get_mut(gate_output(g) as usize) {
            *c = n_in + t;
        }
    }
    let outputs = circuit
        .outputs()
        .iter()
        .map(|&w| alloc.slot[cur.get(w as usize).copied().unwrap_or(0)])
        .collect();
    // The result reads only wires set before, like `circuit`.
    Circuit::new(
        circuit.garbler_inputs(),
        circuit.evaluator_inputs(),
        alloc.wires as usize,
        out,
        outputs,
    )
    .unwrap_or_else(|_| circuit.clone())
}

/// The last reader of an output: it keeps its wire to the end.
const LIVE_TO_END: usize = usize::MAX;

/// The wires a gate reads (an INV reads one).
fn gate_ins(g: &Gate) -> [Option<WireId>; 2] {
    match *g {
        Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => [Some(a), Some(b)],
        Gate::Inv { a, .. } => [Some(a), None],
    }
}

/// The wire a gate sets.
pub(crate) fn gate_output(g: &Gate) -> WireId {
    match *g {
        Gate::Xor { out, .. } | Gate::And { out, .. } | Gate::Inv { out, .. } => out,
    }
}

/// For each value of `circuit` — the inputs `0..n_in`, then gate t's output as value
/// `n_in + t` — the index of the last gate that reads it ([`LIVE_TO_END`] for an output).
fn last_reads(circuit: &Circuit, n_in: usize) -> Vec<usize> {
    let gates = circuit.gates();
    // Each wire's current value as the gates run.
    let mut cur: Vec<usize> = (0..circuit.wires()).collect();
    let mut last = vec![0usize; n_in + gates.len()];
    for (t, g) in gates.iter().enumerate() {
        for w in gate_ins(g).into_iter().flatten() {
            // `Circuit::new` checked the wires; the gate's own index is the lower bound.
            if let Some(&v) = cur.get(w as usize) {
                last[v] = t;
            }
        }
        last[n_in + t] = t;
        if let Some(c) = cur.get_mut(gate_output(g) as usize) {
            *c = n_in + t;
        }
    }
    for &w in circuit.outputs() {
        if let Some(&v) = cur.get(w as usize) {
            last[v] = LIVE_TO_END;
        }
    }
    last
}

/// Assigns compacted wires to values: the inputs keep theirs; a gate's output takes a wire
/// freed by a value past its last read, if any, or a new one.
struct WireAlloc {
    n_in: usize,
    /// Each value's last reader, as [`last_reads`] found it (rewritten once it is freed).
    last: Vec<usize>,
    /// Each value's compacted wire.
    slot: Vec<WireId>,
    free: Vec<WireId>,
    /// Wires used so far.
    wires: WireId,
}

impl WireAlloc {
    fn new(n_in: usize, last: Vec<usize>) -> WireAlloc {
        let mut slot = vec![0 as WireId; last.len()];
        for (v, s) in slot.iter_mut().enumerate().take(n_in) {
            *s = v as WireId;
        }
        WireAlloc {
            n_in,
            last,
            slot,
            free: Vec::new(),
            wires: n_in as WireId,
        }
    }

    /// Gate `t` of the circuit, reading values `a` and `b`, on compacted wires: frees the
    /// wires of the values it reads last, then gives its output a wire.
    fn gate(&mut self, t: usize, g: &Gate, a: Option<usize>, b: Option<usize>) -> Gate {
        for v in [a, b].into_iter().flatten() {
            if self.last[v] == t {
                self.last[v] = LIVE_TO_END - 1; // freed once, even if read twice here
                self.free.push(self.slot[v]);
            }
        }
        let v = self.n_in + t;
        let s = self.free.pop().unwrap_or_else(|| {
            self.wires += 1;
            self.wires - 1
        });
        self.slot[v] = s;
        if self.last[v] == t {
            self.free.push(s);
        }
        let slot = &self.slot;
        match (*g, a, b) {
            (Gate::Xor { .. }, Some(a), Some(b)) => Gate::Xor {
                a: slot[a],
                b: slot[b],
                out: s,
            },
            (Gate::And { .. }, Some(a), Some(b)) => Gate::And {
                a: slot[a],
                b: slot[b],
                out: s,
            },
            (_, Some(a), _) => Gate::Inv { a: slot[a], out: s },
            // Every gate has a first input.
            _ => Gate::Inv { a: 0, out: s },
        }
    }
}

/// Builds a [`Circuit`] from bits and words; see the [module docs](self).
#[derive(Debug, Default)]
pub struct Builder {
    /// Wires are numbered in creation order here and renumbered by `finish`.
    next: WireId,
    garbler: Vec<WireId>,
    evaluator: Vec<WireId>,
    gates: Vec<Gate>,
    outputs: Vec<Bit>,
    counts: GateCounts,
    /// Set by a misuse that cannot be reported where it happens (too many wires, a wire of
    /// another builder); `finish` reports it.
    misuse: Option<&'static str>,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Builder {
        Builder::default()
    }

    fn fresh(&mut self) -> WireId {
        let w = self.next;
        match self.next.checked_add(1) {
            Some(n) => self.next = n,
            None => self.misuse = Some("more than 2^32 wires"),
        }
        w
    }

    fn check(&mut self, w: WireId) -> WireId {
        if w >= self.next {
            self.misuse = Some("a bit of another builder");
        }
        w
    }

    fn push(&mut self, g: Gate) {
        self.counts.add(&g);
        self.gates.push(g);
    }

    /// A one-bit input of the garbler.
    pub fn garbler_bit(&mut self) -> Bit {
        let w = self.fresh();
        self.garbler.push(w);
        Bit(Repr::Wire(w))
    }

    /// A one-bit input of the evaluator.
    pub fn evaluator_bit(&mut self) -> Bit {
        let w = self.fresh();
        self.evaluator.push(w);
        Bit(Repr::Wire(w))
    }

    /// `n` input bits of the garbler.
    pub fn garbler_bits(&mut self, n: usize) -> Vec<Bit> {
        (0..n).map(|_| self.garbler_bit()).collect()
    }

    /// `n` input bits of the evaluator.
    pub fn evaluator_bits(&mut self, n: usize) -> Vec<Bit> {
        (0..n).map(|_| self.evaluator_bit()).collect()
    }

    /// An `N`-bit input word of the garbler (its input bits, least significant first).
    pub fn garbler_word<const N: usize>(&mut self) -> Word<N> {
        Word {
            bits: std::array::from_fn(|_| self.garbler_bit()),
        }
    }

    /// An `N`-bit input word of the evaluator (its input bits, least significant first).
    pub fn evaluator_word<const N: usize>(&mut self) -> Word<N> {
        Word {
            bits: std::array::from_fn(|_| self.evaluator_bit()),
        }
    }

    /// Appends `b` to the outputs.
    pub fn output(&mut self, b: Bit) {
        if let Repr::Wire(w) = b.0 {
            self.check(w);
        }
        self.outputs.push(b);
    }

    /// Appends `bits` to the outputs.
    pub fn output_bits(&mut self, bits: &[Bit]) {
        for &b in bits {
            self.output(b);
        }
    }

    /// Appends the bits of `w` to the outputs, least significant first.
    pub fn output_word<const N: usize>(&mut self, w: &Word<N>) {
        self.output_bits(&w.bits);
    }

    /// What the gates so far cost.
    pub fn counts(&self) -> GateCounts {
        self.counts
    }

    /// `a ⊕ b`: free.
    pub fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        match (a.0, b.0) {
            (Repr::Const(x), Repr::Const(y)) => Bit::constant(x ^ y),
            (Repr::Const(false), _) => b,
            (_, Repr::Const(false)) => a,
            (Repr::Const(true), _) => self.not(b),
            (_, Repr::Const(true)) => self.not(a),
            (Repr::Wire(x), Repr::Wire(y)) => {
                let (a, b) = (self.check(x), self.check(y));
                let out = self.fresh();
                self.push(Gate::Xor { a, b, out });
                Bit(Repr::Wire(out))
            }
        }
    }

    /// `a ∧ b`: one AND gate unless an operand is constant.
    pub fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a.0, b.0) {
            (Repr::Const(x), Repr::Const(y)) => Bit::constant(x & y),
            (Repr::Const(false), _) | (_, Repr::Const(false)) => Bit::ZERO,
            (Repr::Const(true), _) => b,
            (_, Repr::Const(true)) => a,
            (Repr::Wire(x), Repr::Wire(y)) => {
                let (a, b) = (self.check(x), self.check(y));
                let out = self.fresh();
                self.push(Gate::And { a, b, out });
                Bit(Repr::Wire(out))
            }
        }
    }

    /// `¬a`: free (one INV gate unless `a` is constant).
    pub fn not(&mut self, a: Bit) -> Bit {
        match a.0 {
            Repr::Const(x) => Bit::constant(!x),
            Repr::Wire(x) => {
                let a = self.check(x);
                let out = self.fresh();
                self.push(Gate::Inv { a, out });
                Bit(Repr::Wire(out))
            }
        }
    }

    /// `a ∨ b = a ⊕ b ⊕ (a ∧ b)`: one AND gate unless an operand is constant.
    pub fn or(&mut self, a: Bit, b: Bit) -> Bit {
        let ab = self.and(a, b);
        let x = self.xor(a, b);
        self.xor(x, ab)
    }

    /// `¬(a ⊕ b)`: free.
    pub fn xnor(&mut self, a: Bit, b: Bit) -> Bit {
        let x = self.xor(a, b);
        self.not(x)
    }

    /// `if0` if `s = 0`, `if1` if `s = 1`: `if0 ⊕ s ∧ (if0 ⊕ if1)`, one AND gate unless an
    /// operand is constant or `if0` and `if1` are the same bit.
    pub fn mux_bit(&mut self, s: Bit, if0: Bit, if1: Bit) -> Bit {
        if if0 == if1 {
            return if0;
        }
        let d = self.xor(if0, if1);
        let t = self.and(s, d);
        self.xor(if0, t)
    }

    /// The AND of all `bits` (1 if empty), as a balanced tree: `len − 1` ANDs.
    pub fn and_all(&mut self, bits: &[Bit]) -> Bit {
        self.tree(bits, Bit::ONE, Builder::and)
    }

    /// The OR of all `bits` (0 if empty), as a balanced tree: `len − 1` ANDs.
    pub fn or_all(&mut self, bits: &[Bit]) -> Bit {
        self.tree(bits, Bit::ZERO, Builder::or)
    }

    fn tree(&mut self, bits: &[Bit], empty: Bit, op: fn(&mut Builder, Bit, Bit) -> Bit) -> Bit {
        let mut level = bits.to_vec();
        if level.is_empty() {
            return empty;
        }
        while level.len() > 1 {
            let next = level
                .chunks(2)
                .map(|p| match p.get(1) {
                    Some(&b) => op(self, p[0], b),
                    None => p[0],
                })
                .collect();
            level = next;
        }
        level[0]
    }

    /// Bitwise `a ⊕ b`: free.
    pub fn xor_word<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        self.zip(a, b, Builder::xor)
    }

    /// Bitwise `a ∧ b`: N ANDs.
    pub fn and_word<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        self.zip(a, b, Builder::and)
    }

    /// Bitwise `a ∨ b`: N ANDs.
    pub fn or_word<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        self.zip(a, b, Builder::or)
    }

    /// Bitwise `¬a`: free.
    pub fn not_word<const N: usize>(&mut self, a: &Word<N>) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| self.not(a.bits[i])),
        }
    }

    fn zip<const N: usize>(
        &mut self,
        a: &Word<N>,
        b: &Word<N>,
        op: fn(&mut Builder, Bit, Bit) -> Bit,
    ) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| op(self, a.bits[i], b.bits[i])),
        }
    }

    /// Ripple-carry addition of the bit slices `a` and `b` (same length) with carry `c`: the
    /// sum bits and, if `carry_out`, the carry out (else 0). Carry `c_{i+1} = maj(a_i, b_i,
    /// c_i) = c_i ⊕ (a_i ⊕ c_i) ∧ (b_i ⊕ c_i)`: one AND per carry computed.
    fn ripple_add(&mut self, a: &[Bit], b: &[Bit], mut c: Bit, carry_out: bool) -> (Vec<Bit>, Bit) {
        let n = a.len().min(b.len());
        let mut sum = Vec::with_capacity(n);
        for i in 0..n {
            let ab = self.xor(a[i], b[i]);
            sum.push(self.xor(ab, c));
            if i + 1 < n || carry_out {
                let ac = self.xor(a[i], c);
                let bc = self.xor(b[i], c);
                let t = self.and(ac, bc);
                c = self.xor(c, t);
            } else {
                c = Bit::ZERO;
            }
        }
        (sum, c)
    }

    /// The borrow out of `a − b` − `br` (bit slices of one length): borrow
    /// `br_{i+1} = maj(¬a_i, b_i, br_i) = b_i ⊕ ¬(a_i ⊕ b_i) ∧ (b_i ⊕ br_i)`, one AND per bit;
    /// with the difference bits if `diff`.
    fn borrow_chain(
        &mut self,
        a: &[Bit],
        b: &[Bit],
        mut br: Bit,
        diff: bool,
        borrow_out: bool,
    ) -> (Vec<Bit>, Bit) {
        let n = a.len().min(b.len());
        let mut d = Vec::with_capacity(if diff { n } else { 0 });
        for i in 0..n {
            let ab = self.xor(a[i], b[i]);
            if diff {
                d.push(self.xor(ab, br));
            }
            if i + 1 < n || borrow_out {
                let nab = self.not(ab);
                let bb = self.xor(b[i], br);
                let t = self.and(nab, bb);
                br = self.xor(b[i], t);
            } else {
                br = Bit::ZERO;
            }
        }
        (d, br)
    }

    fn word<const N: usize>(bits: Vec<Bit>) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| bits.get(i).copied().unwrap_or(Bit::ZERO)),
        }
    }

    /// `a + b mod 2^N`, ripple carry: N − 1 ANDs (the last carry is not needed).
    pub fn add<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        let (s, _) = self.ripple_add(&a.bits, &b.bits, Bit::ZERO, false);
        Builder::word(s)
    }

    /// `a + b + carry_in`: the sum mod 2^N and the carry out, N ANDs.
    pub fn add_with_carry<const N: usize>(
        &mut self,
        a: &Word<N>,
        b: &Word<N>,
        carry_in: Bit,
    ) -> (Word<N>, Bit) {
        let (s, c) = self.ripple_add(&a.bits, &b.bits, carry_in, true);
        (Builder::word(s), c)
    }

    /// `a − b mod 2^N`, ripple borrow: N − 1 ANDs.
    pub fn sub<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        let (d, _) = self.borrow_chain(&a.bits, &b.bits, Bit::ZERO, true, false);
        Builder::word(d)
    }

    /// Unsigned `a < b` (the borrow out of `a − b`): N ANDs.
    pub fn lt<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        self.borrow_chain(&a.bits, &b.bits, Bit::ZERO, false, true)
            .1
    }

    /// Unsigned `a > b`: N ANDs.
    pub fn gt<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        self.lt(b, a)
    }

    /// Unsigned `a ≤ b`: N ANDs.
    pub fn le<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let g = self.gt(a, b);
        self.not(g)
    }

    /// Unsigned `a ≥ b`: N ANDs.
    pub fn ge<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let l = self.lt(a, b);
        self.not(l)
    }

    /// Flips the sign bits: signed order on the words is unsigned order on the results.
    fn bias<const N: usize>(&mut self, a: &Word<N>) -> Word<N> {
        let mut a = *a;
        if let Some(m) = a.bits.last_mut() {
            *m = self.not(*m);
        }
        a
    }

    /// Two's complement `a < b`: N ANDs.
    pub fn lt_signed<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let (a, b) = (self.bias(a), self.bias(b));
        self.lt(&a, &b)
    }

    /// Two's complement `a > b`: N ANDs.
    pub fn gt_signed<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        self.lt_signed(b, a)
    }

    /// Two's complement `a ≤ b`: N ANDs.
    pub fn le_signed<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let g = self.gt_signed(a, b);
        self.not(g)
    }

    /// Two's complement `a ≥ b`: N ANDs.
    pub fn ge_signed<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let l = self.lt_signed(a, b);
        self.not(l)
    }

    /// `a = b`: the AND of `¬(a_i ⊕ b_i)`, N − 1 ANDs.
    pub fn eq<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let same: Vec<Bit> = (0..N).map(|i| self.xnor(a.bits[i], b.bits[i])).collect();
        self.and_all(&same)
    }

    /// `a ≠ b`: N − 1 ANDs.
    pub fn ne<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Bit {
        let e = self.eq(a, b);
        self.not(e)
    }

    /// `if0` if `s = 0`, `if1` if `s = 1`: N ANDs (fewer where the words share bits).
    pub fn mux<const N: usize>(&mut self, s: Bit, if0: &Word<N>, if1: &Word<N>) -> Word<N> {
        Word {
            bits: std::array::from_fn(|i| self.mux_bit(s, if0.bits[i], if1.bits[i])),
        }
    }

    /// A barrel shifter: stage `j` replaces `x` by `step(x, 2^j)` where bit `j` of `amount`
    /// is 1. Stages whose shift is `N` or more (only for shifts; `None` from `step`) are
    /// gathered: if any of their amount bits is 1, the result is 0.
    fn barrel<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
        step: impl Fn(&Word<N>, usize) -> Option<Word<N>>,
    ) -> Word<N> {
        let mut x = *x;
        let mut overflow = Vec::new();
        let mut shift = Some(1usize);
        for &s in &amount.bits {
            match shift.and_then(|k| step(&x, k)) {
                Some(y) => x = self.mux(s, &x, &y),
                None => overflow.push(s),
            }
            shift = shift.and_then(|k| k.checked_mul(2));
        }
        if !overflow.is_empty() {
            let any = self.or_all(&overflow);
            x = self.mux(any, &x, &Word::constant(0));
        }
        x
    }

    /// `x · 2^amount mod 2^N` for a secret `K`-bit `amount` (a barrel shifter): see the
    /// [module docs](self) for the AND count, N·⌈log₂ N⌉ if `K = ⌈log₂ N⌉`.
    pub fn shl_var<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
    ) -> Word<N> {
        self.barrel(x, amount, |x, k| (k < N).then(|| x.shl(k)))
    }

    /// `⌊x / 2^amount⌋` for a secret `K`-bit `amount` (a barrel shifter): as
    /// [`shl_var`](Builder::shl_var).
    pub fn shr_var<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
    ) -> Word<N> {
        self.barrel(x, amount, |x, k| (k < N).then(|| x.shr(k)))
    }

    /// Rotation of `x` towards the most significant bit by a secret `K`-bit `amount` (mod N):
    /// a barrel shifter whose stages rotate by `2^j mod N`; stages rotating by 0 are skipped.
    pub fn rotl_var<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
    ) -> Word<N> {
        self.rotate(x, amount, Word::rotl)
    }

    /// Rotation of `x` towards the least significant bit by a secret `K`-bit `amount` (mod N):
    /// as [`rotl_var`](Builder::rotl_var).
    pub fn rotr_var<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
    ) -> Word<N> {
        self.rotate(x, amount, Word::rotr)
    }

    fn rotate<const N: usize, const K: usize>(
        &mut self,
        x: &Word<N>,
        amount: &Word<K>,
        rot: fn(&Word<N>, usize) -> Word<N>,
    ) -> Word<N> {
        let mut x = *x;
        if N == 0 {
            return x;
        }
        let mut r = 1 % N; // 2^j mod N
        for &s in &amount.bits {
            if r != 0 {
                let y = rot(&x, r);
                x = self.mux(s, &x, &y);
            }
            r = (2 * r) % N;
        }
        x
    }

    /// `a · b mod 2^N`, schoolbook: the partial products `a_i ∧ b_j` for `i + j < N`
    /// (N(N+1)/2 ANDs) summed row by row, row `j` into bits `j..N` with an (N − j)-bit adder
    /// ((N−1)(N−2)/2 ANDs in all): N² − N + 1 ANDs.
    pub fn mul<const N: usize>(&mut self, a: &Word<N>, b: &Word<N>) -> Word<N> {
        let mut acc: Vec<Bit> = (0..N).map(|i| self.and(a.bits[i], b.bits[0])).collect();
        for j in 1..N {
            let row: Vec<Bit> = (0..N - j).map(|i| self.and(a.bits[i], b.bits[j])).collect();
            let (s, _) = self.ripple_add(&acc[j..], &row, Bit::ZERO, false);
            acc[j..].copy_from_slice(&s);
        }
        Builder::word(acc)
    }

    /// `table[index]` for a secret `index`: a tree of multiplexers, bit `j` of the index
    /// choosing between neighbours at level `j` (an odd one out moves up unchosen):
    /// `(len − 1)·N` ANDs if `index` has at least ⌈log₂ len⌉ bits. An index beyond the table
    /// selects one of its entries (which one is fixed by the tree); entries beyond `2^K` are
    /// unreachable. An empty table gives 0.
    pub fn lookup<const N: usize, const K: usize>(
        &mut self,
        table: &[Word<N>],
        index: &Word<K>,
    ) -> Word<N> {
        let mut level = table.to_vec();
        for &s in &index.bits {
            if level.len() <= 1 {
                break;
            }
            level = level
                .chunks(2)
                .map(|p| match p.get(1) {
                    Some(b) => self.mux(s, &p[0], b),
                    None => p[0],
                })
                .collect();
        }
        level.first().copied().unwrap_or_default()
    }

    /// Inlines `circuit` on the bits `inputs` (its garbler inputs, then its evaluator
    /// inputs): its output bits. Every gate goes through [`xor`](Builder::xor),
    /// [`and`](Builder::and) and [`not`](Builder::not), so constants among `inputs` fold and
    /// otherwise the gate counts are `circuit`'s. This is how a circuit read from a file (AES,
    /// SHA-256) becomes part of a larger one.
    ///
    /// # Errors
    /// [`TwopcError::LengthMismatch`] unless `inputs` has one bit per input of `circuit`.
    pub fn inline(&mut self, circuit: &Circuit, inputs: &[Bit]) -> Result<Vec<Bit>, TwopcError> {
        let n_in = circuit.garbler_inputs() + circuit.evaluator_inputs();
        crate::error::same_len("inlined circuit inputs", n_in, inputs.len())?;
        // `Circuit::new` checked that gates read only wires set before, so the zeros are
        // never read.
        let mut v = vec![Bit::ZERO; circuit.wires()];
        v[..n_in].copy_from_slice(inputs);
        let at = |v: &[Bit], w: WireId| v.get(w as usize).copied().unwrap_or(Bit::ZERO);
        for g in circuit.gates() {
            let (out, bit) = match *g {
                Gate::Xor { a, b, out } => (out, self.xor(at(&v, a), at(&v, b))),
                Gate::And { a, b, out } => (out, self.and(at(&v, a), at(&v, b))),
                Gate::Inv { a, out } => (out, self.not(at(&v, a))),
            };
            if let Some(slot) = v.get_mut(out as usize) {
                *slot = bit;
            }
        }
        Ok(circuit.outputs().iter().map(|&w| at(&v, w)).collect())
    }

    /// The circuit: garbler inputs first, in the order declared, then the evaluator's, then
    /// the gates' outputs in the order built. A constant output is read from a wire set by
    /// two extra gates (`z = i ⊕ i` on the first input `i`, and `¬z` for 1).
    ///
    /// # Errors
    /// [`TwopcError::ApiMisuse`] if an output is constant and there are no inputs, if a bit of
    /// another builder was used, or if the circuit has more than 2^32 wires.
    pub fn finish(mut self) -> Result<Circuit, TwopcError> {
        let first_input = self.garbler.first().or(self.evaluator.first()).copied();
        let mut consts = [None::<WireId>; 2];
        let outputs = std::mem::take(&mut self.outputs);
        let mut out_wires = Vec::with_capacity(outputs.len());
        for b in outputs {
            let w = match b.0 {
                Repr::Wire(w) => w,
                Repr::Const(v) => {
                    let i = first_input.ok_or(TwopcError::ApiMisuse(
                        "a constant output needs at least one input wire",
                    ))?;
                    let zero = match consts[0] {
                        Some(z) => z,
                        None => {
                            let z = self.fresh();
                            self.push(Gate::Xor { a: i, b: i, out: z });
                            consts[0] = Some(z);
                            z
                        }
                    };
                    match (v, consts[1]) {
                        (false, _) => zero,
                        (true, Some(one)) => one,
                        (true, None) => {
                            let one = self.fresh();
                            self.push(Gate::Inv { a: zero, out: one });
                            consts[1] = Some(one);
                            one
                        }
                    }
                }
            };
            out_wires.push(w);
        }
        if let Some(m) = self.misuse {
            return Err(TwopcError::ApiMisuse(m));
        }
        // Renumber: inputs first, then the gates' outputs.
        let mut map = vec![WireId::MAX; self.next as usize];
        let mut n: WireId = 0;
        for &w in self.garbler.iter().chain(&self.evaluator) {
            map[w as usize] = n;
            n += 1;
        }
        let mut gates = self.gates;
        for g in &mut gates {
            let out = match g {
                Gate::Xor { out, .. } | Gate::And { out, .. } | Gate::Inv { out, .. } => out,
            };
            map[*out as usize] = n;
            *out = n;
            n += 1;
            match g {
                Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => {
                    *a = map[*a as usize];
                    *b = map[*b as usize];
                }
                Gate::Inv { a, .. } => *a = map[*a as usize],
            }
        }
        let outputs = out_wires.iter().map(|&w| map[w as usize]).collect();
        Circuit::new(
            self.garbler.len(),
            self.evaluator.len(),
            n as usize,
            gates,
            outputs,
        )
    }
}
