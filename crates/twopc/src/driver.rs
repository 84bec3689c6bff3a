//! The driver: runs base OT, OT extension (IKNP or SoftSpoken, through [`CotExtSender`] and
//! [`CotExtReceiver`]) and garbled-circuit evaluation over a two-party [`Session`]. This is
//! the only module that performs I/O.
//!
//! Every message's size follows from public parameters (batch sizes, the circuit); the
//! receiver checks it before decoding, and a wrong size or an undecodable payload is
//! [`TwopcError::Peer`] naming the peer. Large messages are cut into frames whose sizes both
//! sides compute alike: extension messages cover at most [`MAX_OTS_PER_MSG`] OTs (1 MiB with
//! IKNP, `1/k` of that with SoftSpoken), chosen-message OTs run in batches of
//! [`CHOSEN_OTS_PER_MSG`], garbled tables go in chunks of [`ANDS_PER_MSG`] AND gates, so
//! neither party ever buffers a whole circuit's tables. The driver sets neither the session's
//! phase nor its wire phase.

use doram_core::PartyId;
use doram_core::wire::{self, PeerFault};
use doram_net::Session;
use doram_prim::aes::Block;
use rand_core::{CryptoRng, RngCore};

use crate::TheirScheme;
use crate::TwopcError;
use crate::base_ot::{BaseOtReceiver, BaseOtSender};
use crate::gc::{Circuit, CircuitShape, Evaluator, Garbler, Gate};
use crate::iknp::{
    self, CotReceiver, CotSender, IknpReceiver, IknpSender, KAPPA, MAX_OTS_PER_MSG, RotReceiver,
    RotSender,
};
use crate::ot_ext::{CotExtReceiver, CotExtSender};
use crate::scheme::{GarblingScheme, GcEvaluator, GcGarbler};
use crate::softspoken::{ChunkBits, SoftSpokenReceiver, SoftSpokenSender};

/// Chosen-message OTs per batch (the sender's answer is 32 bytes per OT: 1 MiB).
pub const CHOSEN_OTS_PER_MSG: usize = 1 << 15;

/// AND gates per garbled-table message (1 MiB with half-gates, 788 KiB with three-halves; a
/// multiple of the three-halves group of 8).
pub const ANDS_PER_MSG: usize = 1 << 15;

/// Gates taken from the stream at a time and garbled or evaluated with the cipher in hand
/// (bounded, so memory does not grow with the circuit).
const GATES_PER_BATCH: usize = 4096;

/// Where the garbler and evaluator take their gates from, a batch at a time.
trait GateSource {
    /// The next gates (at most [`GATES_PER_BATCH`]), or `None` at the end.
    fn next_batch(&mut self) -> Option<&[Gate]>;
}

/// A circuit's gates, batched in place (nothing copied).
struct SliceGates<'a>(&'a [Gate]);

impl GateSource for SliceGates<'_> {
    fn next_batch(&mut self) -> Option<&[Gate]> {
        if self.0.is_empty() {
            return None;
        }
        let (batch, rest) = self.0.split_at(self.0.len().min(GATES_PER_BATCH));
        self.0 = rest;
        Some(batch)
    }
}

/// A gate stream taken [`GATES_PER_BATCH`] gates at a time into one reused buffer.
struct GateBatches<I> {
    gates: I,
    batch: Vec<Gate>,
}

impl<I: Iterator<Item = Gate>> GateBatches<I> {
    fn new(gates: impl IntoIterator<IntoIter = I>) -> Self {
        GateBatches {
            gates: gates.into_iter(),
            batch: Vec::with_capacity(GATES_PER_BATCH),
        }
    }
}

impl<I: Iterator<Item = Gate>> GateSource for GateBatches<I> {
    fn next_batch(&mut self) -> Option<&[Gate]> {
        self.batch.clear();
        self.batch.extend(self.gates.by_ref().take(GATES_PER_BATCH));
        (!self.batch.is_empty()).then_some(&self.batch[..])
    }
}

/// The other party of a two-party session.
///
/// # Errors
/// [`TwopcError::WrongPartyCount`] unless the session has exactly two parties.
pub fn peer(session: &Session) -> Result<PartyId, TwopcError> {
    if session.n_parties() != 2 {
        return Err(TwopcError::WrongPartyCount {
            n_parties: session.n_parties(),
        });
    }
    Ok(match session.me() {
        PartyId::P0 => PartyId::P1,
        _ => PartyId::P0,
    })
}

/// Runs `n` base OTs as the sender: the key pairs.
///
/// # Errors
/// Transport failures, and the receiver's faults (wrong length, invalid or identity points).
pub fn base_ot_send<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    n: usize,
    rng: &mut R,
) -> Result<Vec<[Block; 2]>, TwopcError> {
    let peer = peer(session)?;
    let (sender, a) = BaseOtSender::start(n, rng);
    session.send_bytes(peer, &a)?;
    let reply = session.recv_bytes(peer)?;
    Ok(sender.finish(peer, &reply)?)
}

/// Runs base OTs as the receiver with `choices`: the chosen keys.
///
/// # Errors
/// Transport failures, and the sender's faults (wrong length, invalid or identity point).
pub fn base_ot_receive<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    choices: &[bool],
    rng: &mut R,
) -> Result<Vec<Block>, TwopcError> {
    let peer = peer(session)?;
    let a = session.recv_bytes(peer)?;
    let (keys, reply) = BaseOtReceiver::respond(peer, &a, choices, rng)?;
    session.send_bytes(peer, &reply)?;
    Ok(keys)
}

/// Sets up the IKNP sender with correlation `delta` (it runs [`KAPPA`] base OTs as their
/// receiver). `delta` must be secret and uniformly random, e.g. from
/// [`random_delta`](crate::gc::random_delta) when the OTs will carry garbled-circuit labels.
///
/// # Errors
/// As [`base_ot_receive`].
pub fn iknp_sender_setup<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    delta: Block,
    rng: &mut R,
) -> Result<IknpSender, TwopcError> {
    let keys = base_ot_receive(session, &iknp::delta_bits(delta), rng)?;
    Ok(IknpSender::new(delta, &keys))
}

/// Sets up the IKNP receiver (it runs [`KAPPA`] base OTs as their sender).
///
/// # Errors
/// As [`base_ot_send`].
pub fn iknp_receiver_setup<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    rng: &mut R,
) -> Result<IknpReceiver, TwopcError> {
    let keys = base_ot_send(session, KAPPA, rng)?;
    Ok(IknpReceiver::new(&keys))
}

/// Sets up the SoftSpoken sender with chunk size `k` and correlation `delta`: [`KAPPA`] base
/// OTs as their receiver, then the receiver's GGM tree corrections (none for `k = 1`). `delta`
/// must be secret and uniformly random, as for [`iknp_sender_setup`].
///
/// # Errors
/// As [`base_ot_receive`]; tree corrections of the wrong size.
pub fn softspoken_sender_setup<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    k: ChunkBits,
    delta: Block,
    rng: &mut R,
) -> Result<SoftSpokenSender, TwopcError> {
    let peer = peer(session)?;
    let keys = base_ot_receive(session, &iknp::delta_bits(delta), rng)?;
    let msg = if k.setup_msg_len() == 0 {
        Vec::new()
    } else {
        session.recv_bytes(peer)?
    };
    Ok(SoftSpokenSender::new(peer, k, delta, &keys, &msg)?)
}

/// Sets up the SoftSpoken receiver with chunk size `k`: [`KAPPA`] base OTs as their sender,
/// then the GGM tree corrections for the sender (not sent for `k = 1`, where they are empty).
///
/// # Errors
/// As [`base_ot_send`].
pub fn softspoken_receiver_setup<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    k: ChunkBits,
    rng: &mut R,
) -> Result<SoftSpokenReceiver, TwopcError> {
    let peer = peer(session)?;
    let keys = base_ot_send(session, KAPPA, rng)?;
    let (receiver, msg) = SoftSpokenReceiver::new(k, &keys);
    if !msg.is_empty() {
        session.send_bytes(peer, &msg)?;
    }
    Ok(receiver)
}

/// SoftSpoken in both directions, for protocols where each party is the sender of one
/// extension and the receiver of the other (triples, two-party arithmetic): `P0` sets up its
/// sender first, `P1` its receiver first. The sender's Δ is drawn from `rng` with its lsb set,
/// so it can also garble ([`crate::gc::random_delta`]).
///
/// # Errors
/// As [`softspoken_sender_setup`] and [`softspoken_receiver_setup`].
pub fn softspoken_both_setup<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    k: ChunkBits,
    rng: &mut R,
) -> Result<(SoftSpokenSender, SoftSpokenReceiver), TwopcError> {
    let delta = crate::gc::random_delta(rng);
    if session.me() == PartyId::P0 {
        let s = softspoken_sender_setup(session, k, delta, rng)?;
        Ok((s, softspoken_receiver_setup(session, k, rng)?))
    } else {
        let r = softspoken_receiver_setup(session, k, rng)?;
        Ok((softspoken_sender_setup(session, k, delta, rng)?, r))
    }
}

/// The OT counts of the extension messages for `m` OTs: at most [`MAX_OTS_PER_MSG`] each, and
/// one empty message for `m = 0` (so that both parties step through the same frames).
fn batch_sizes(m: usize) -> impl Iterator<Item = usize> {
    let n = m.div_ceil(MAX_OTS_PER_MSG).max(1);
    (0..n).map(move |i| (m - i * MAX_OTS_PER_MSG).min(MAX_OTS_PER_MSG))
}

/// Runs the sender's side of `m` OTs message by message, handing each batch's correlated OTs
/// to `each`.
fn extend_send(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    m: usize,
    mut each: impl FnMut(CotSender),
) -> Result<(), TwopcError> {
    let peer = peer(session)?;
    for k in batch_sizes(m) {
        let msg = session.recv_bytes(peer)?;
        each(sender.extend(peer, k, &msg)?);
    }
    Ok(())
}

/// Runs the receiver's side of OTs with `choices` message by message, handing each batch's
/// correlated OTs to `each`.
fn extend_receive(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    choices: &[bool],
    mut each: impl FnMut(CotReceiver),
) -> Result<(), TwopcError> {
    let peer = peer(session)?;
    let mut done = 0;
    for k in batch_sizes(choices.len()) {
        let (part, msg) = receiver.extend(&choices[done..done + k]);
        session.send_vec(peer, msg)?;
        each(part);
        done += k;
    }
    Ok(())
}

/// `m` correlated OTs, sender's side.
///
/// # Errors
/// Transport failures; an extension message of the wrong size.
pub fn cot_send(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    m: usize,
) -> Result<CotSender, TwopcError> {
    let mut q = Vec::new();
    let first = cot_send_into(session, sender, m, &mut q)?;
    Ok(CotSender {
        first,
        delta: sender.delta(),
        q,
    })
}

/// [`cot_send`]'s `q_i`, written into `q` (cleared first) so that a caller can keep one buffer
/// from call to call; returns the index of the first OT.
///
/// # Errors
/// As [`cot_send`].
pub fn cot_send_into(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    m: usize,
    q: &mut Vec<Block>,
) -> Result<u64, TwopcError> {
    cot_send_into_with(session, sender, m, q, |_, _| {})
}

/// [`cot_send_into`], calling `each(i, part)` on every extension message's `q_i …` as soon as
/// they are written (`part` is `q[i .. i + part.len()]`), while they are still in cache.
///
/// # Errors
/// As [`cot_send`].
pub fn cot_send_into_with(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    m: usize,
    q: &mut Vec<Block>,
    mut each: impl FnMut(usize, &mut [Block]),
) -> Result<u64, TwopcError> {
    let peer = peer(session)?;
    q.clear();
    q.reserve(m);
    let mut first = None;
    // As `extend_send`, each batch's OTs written straight after the last.
    for k in batch_sizes(m) {
        let msg = session.recv_bytes(peer)?;
        let at = q.len();
        let f = sender.extend_into(peer, k, &msg, q)?;
        first.get_or_insert(f);
        each(at, &mut q[at..]);
    }
    Ok(first.unwrap_or_default())
}

/// Correlated OTs with choice bits `choices`, receiver's side.
///
/// # Errors
/// Transport failures.
pub fn cot_receive(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    choices: &[bool],
) -> Result<CotReceiver, TwopcError> {
    let mut t = Vec::new();
    let first = cot_receive_into(session, receiver, choices, &mut t)?;
    Ok(CotReceiver {
        first,
        choices: choices.to_vec(),
        t,
    })
}

/// [`cot_receive`]'s `t_i`, written into `t` (cleared first) so that a caller can keep one
/// buffer from call to call; returns the index of the first OT.
///
/// # Errors
/// As [`cot_receive`].
pub fn cot_receive_into(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    choices: &[bool],
    t: &mut Vec<Block>,
) -> Result<u64, TwopcError> {
    let peer = peer(session)?;
    t.clear();
    t.reserve(choices.len());
    let mut first = None;
    let mut done = 0;
    // As `extend_receive`, each batch's OTs written straight after the last.
    for k in batch_sizes(choices.len()) {
        let (f, msg) = receiver.extend_into(&choices[done..done + k], t);
        session.send_vec(peer, msg)?;
        first.get_or_insert(f);
        done += k;
    }
    Ok(first.unwrap_or_default())
}

/// `m` random OTs, sender's side. Each extension message's OTs are hashed as soon as they
/// arrive, so that the hashing overlaps the receiver's work on the next message.
///
/// # Errors
/// As [`cot_send`].
pub fn rot_send(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    m: usize,
) -> Result<RotSender, TwopcError> {
    let mut msgs = Vec::with_capacity(m);
    extend_send(session, sender, m, |part| part.random_into(&mut msgs))?;
    Ok(RotSender { msgs })
}

/// `m` random OTs with uniformly random choice bits from `rng`, receiver's side. Each
/// extension message's OTs are hashed right after it is sent.
///
/// # Errors
/// As [`cot_receive`].
pub fn rot_receive<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    m: usize,
    rng: &mut R,
) -> Result<RotReceiver, TwopcError> {
    let mut bytes = vec![0u8; m.div_ceil(8)];
    rng.fill_bytes(&mut bytes);
    let choices: Vec<bool> = (0..m).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect();
    let mut msgs = Vec::with_capacity(m);
    extend_receive(session, receiver, &choices, |part| {
        msgs.extend(part.into_random().msgs);
    })?;
    Ok(RotReceiver { choices, msgs })
}

/// Chosen-message OTs, sender's side: the receiver learns `inputs[i][c_i]`. Random OTs are
/// derandomised (Beaver) in batches of [`CHOSEN_OTS_PER_MSG`].
///
/// # Errors
/// Transport failures; the receiver's messages of the wrong size.
pub fn ot_send(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    inputs: &[[Block; 2]],
) -> Result<(), TwopcError> {
    let peer = peer(session)?;
    for chunk in inputs.chunks(CHOSEN_OTS_PER_MSG) {
        let rot = rot_send(session, sender, chunk.len())?;
        let flips = session.recv_bytes(peer)?;
        let masked = rot.mask(peer, chunk, &flips)?;
        session.send_bytes(peer, &masked)?;
    }
    Ok(())
}

/// Chosen-message OTs, receiver's side: `inputs[i][choices[i]]` of the sender's inputs.
///
/// # Errors
/// Transport failures; the sender's answer of the wrong size.
pub fn ot_receive<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    choices: &[bool],
    rng: &mut R,
) -> Result<Vec<Block>, TwopcError> {
    let peer = peer(session)?;
    let mut out = Vec::with_capacity(choices.len());
    for chunk in choices.chunks(CHOSEN_OTS_PER_MSG) {
        let rot = rot_receive(session, receiver, chunk.len(), rng)?;
        session.send_bytes(peer, &rot.flip_bits(chunk)?)?;
        let masked = session.recv_bytes(peer)?;
        out.extend(rot.unmask(peer, chunk, &masked)?);
    }
    Ok(out)
}

fn pack(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(b) << (i % 8);
    }
    out
}

fn unpack(
    peer: PartyId,
    what: &'static str,
    bytes: &[u8],
    n: usize,
) -> Result<Vec<bool>, PeerFault> {
    wire::exact_len(peer, what, bytes, n.div_ceil(8))?;
    if !n.is_multiple_of(8) && bytes[n / 8] >> (n % 8) != 0 {
        return Err(PeerFault::malformed(peer, what, "nonzero padding bits"));
    }
    Ok((0..n).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect())
}

fn blocks_from(bytes: &[u8]) -> impl Iterator<Item = Block> + '_ {
    bytes.chunks_exact(16).map(|c| {
        let mut b = [0u8; 16];
        b.copy_from_slice(c);
        Block::from_le_bytes(b)
    })
}

/// Garbles `circuit` on the garbler's input bits `inputs` and streams it to the evaluator:
/// [`garble_stream`] with the circuit's shape and gates.
///
/// # Errors
/// As [`garble_stream`].
pub fn garble<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    garbler: &mut impl GcGarbler,
    circuit: &Circuit,
    inputs: &[bool],
    rng: &mut R,
) -> Result<Vec<bool>, TwopcError> {
    let gates = SliceGates(circuit.gates());
    garble_from(
        session,
        sender,
        garbler,
        &circuit.shape(),
        gates,
        inputs,
        rng,
    )
}

/// Garbles the circuit of shape `shape` whose gates `gates` yields, one at a time, on the
/// garbler's input bits `inputs`, and streams the tables to the evaluator; the evaluator's
/// input labels come from correlated OTs of `sender`, whose Δ must be the garbler's. Both
/// parties learn the output bits, which this returns. Neither the gates nor the tables are
/// held in memory beyond one table message.
///
/// The garbler's scheme is that of `garbler`: half-gates ([`gc::Garbler`](crate::gc::Garbler))
/// or three-halves ([`three_halves::Garbler`](crate::three_halves::Garbler)); the evaluator
/// must run the same one ([`GarblingScheme`]).
///
/// Messages, garbler → evaluator unless noted: the scheme's tag ([`GarblingScheme::tag`], one
/// byte) and the garbler's input labels (16 bytes per bit); the OT extension for the
/// evaluator's inputs (evaluator → garbler; 16 bytes per bit with IKNP, `16/k` with
/// SoftSpoken); the tables ([`GarblingScheme::table_bytes`]: 32 bytes per AND gate with
/// half-gates, 197 bytes per 8 with three-halves), in chunks of [`ANDS_PER_MSG`] gates; the
/// output decoding bits; the output (evaluator → garbler).
///
/// # Errors
/// [`TwopcError::ApiMisuse`] if Δs differ or `inputs` has the wrong length (before anything is
/// sent), or if `gates` holds more or fewer AND gates than `shape` says (detected once the
/// count is exceeded, or at the end; the evaluator then fails too); transport failures; the
/// evaluator's messages of the wrong size.
pub fn garble_stream<G: GcGarbler, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    garbler: &mut G,
    shape: &CircuitShape,
    gates: impl IntoIterator<Item = Gate>,
    inputs: &[bool],
    rng: &mut R,
) -> Result<Vec<bool>, TwopcError> {
    let gates = GateBatches::new(gates);
    garble_from(session, sender, garbler, shape, gates, inputs, rng)
}

/// [`garble_stream`] on gates from `gates`.
fn garble_from<G: GcGarbler, R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    sender: &mut impl CotExtSender,
    garbler: &mut G,
    shape: &CircuitShape,
    gates: impl GateSource,
    inputs: &[bool],
    rng: &mut R,
) -> Result<Vec<bool>, TwopcError> {
    let peer = peer(session)?;
    crate::error::same_len("garbler input", shape.garbler_inputs, inputs.len())?;
    if sender.delta() != garbler.delta() {
        return Err(TwopcError::ApiMisuse(
            "the OT extension sender's Δ is not the garbler's",
        ));
    }
    garbler.reset_wires(shape.wires);
    let mut msg = Vec::with_capacity(1 + 16 * inputs.len());
    msg.push(G::SCHEME.tag());
    for (w, &x) in (0..).zip(inputs) {
        let mut l = [0u8; 16];
        rng.fill_bytes(&mut l);
        garbler.set_zero_label(w, Block::from_le_bytes(l))?;
        msg.extend_from_slice(&garbler.label(w, x)?.to_le_bytes());
    }
    session.send_bytes(peer, &msg)?;
    let cot = cot_send(session, sender, shape.evaluator_inputs)?;
    let g = shape.garbler_inputs;
    for (i, q) in cot.q.iter().enumerate() {
        garbler.set_zero_label(wire_id(g + i)?, *q)?;
    }
    send_tables(session, peer, garbler, shape.and_gates, gates)?;
    session.send_bytes(peer, &pack(&garbler.decoding_bits(&shape.outputs)?))?;
    let out = session.recv_bytes(peer)?;
    Ok(unpack(peer, "circuit output", &out, shape.outputs.len())?)
}

/// Checks the scheme tag that opens the garbler's first message.
fn check_scheme(peer: PartyId, ours: GarblingScheme, msg: &[u8]) -> Result<(), TwopcError> {
    let Some(&tag) = msg.first() else {
        return Err(PeerFault::wrong_length(peer, "garbler input labels", 1, 0).into());
    };
    match GarblingScheme::from_tag(tag) {
        Some(s) if s == ours => Ok(()),
        theirs => Err(TwopcError::SchemeMismatch {
            peer,
            ours,
            theirs: theirs.map_or(TheirScheme::Unknown(tag), TheirScheme::Known),
        }),
    }
}

fn wire_id(i: usize) -> Result<u32, TwopcError> {
    u32::try_from(i).map_err(|_| TwopcError::ApiMisuse("wire index beyond u32"))
}

/// Evaluates the circuit the garbler streams on the evaluator's input bits `inputs`:
/// [`evaluate_stream`] with the circuit's shape and gates.
///
/// # Errors
/// As [`evaluate_stream`].
pub fn evaluate(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    evaluator: &mut impl GcEvaluator,
    circuit: &Circuit,
    inputs: &[bool],
) -> Result<Vec<bool>, TwopcError> {
    let gates = SliceGates(circuit.gates());
    evaluate_from(
        session,
        receiver,
        evaluator,
        &circuit.shape(),
        gates,
        inputs,
    )
}

/// Evaluates the circuit of shape `shape` and gates `gates` as the garbler streams its tables,
/// on the evaluator's input bits `inputs` (obtained as labels by correlated OTs of `receiver`):
/// the output bits, which the garbler learns too. The scheme is `evaluator`'s; the garbler's
/// first message must name the same one.
///
/// # Errors
/// [`TwopcError::LengthMismatch`] if `inputs` has the wrong length (before anything is sent);
/// [`TwopcError::SchemeMismatch`] if the garbler garbles with another scheme;
/// [`TwopcError::ApiMisuse`] if `gates` holds more or fewer AND gates than `shape` says;
/// transport failures; the garbler's messages of the wrong size.
pub fn evaluate_stream<E: GcEvaluator>(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    evaluator: &mut E,
    shape: &CircuitShape,
    gates: impl IntoIterator<Item = Gate>,
    inputs: &[bool],
) -> Result<Vec<bool>, TwopcError> {
    let gates = GateBatches::new(gates);
    evaluate_from(session, receiver, evaluator, shape, gates, inputs)
}

/// [`evaluate_stream`] on gates from `gates`.
fn evaluate_from<E: GcEvaluator>(
    session: &mut Session,
    receiver: &mut impl CotExtReceiver,
    evaluator: &mut E,
    shape: &CircuitShape,
    gates: impl GateSource,
    inputs: &[bool],
) -> Result<Vec<bool>, TwopcError> {
    let peer = peer(session)?;
    crate::error::same_len("evaluator input", shape.evaluator_inputs, inputs.len())?;
    evaluator.reset_wires(shape.wires);
    let g = shape.garbler_inputs;
    let labels = session.recv_bytes(peer)?;
    check_scheme(peer, E::SCHEME, &labels)?;
    wire::exact_len(peer, "garbler input labels", &labels, 1 + 16 * g)?;
    for (w, l) in (0..).zip(blocks_from(&labels[1..])) {
        evaluator.set_label(w, l)?;
    }
    let cot = cot_receive(session, receiver, inputs)?;
    for (i, t) in cot.t.iter().enumerate() {
        evaluator.set_label(wire_id(g + i)?, *t)?;
    }
    receive_tables(session, peer, evaluator, shape.and_gates, gates)?;
    let d = session.recv_bytes(peer)?;
    let decoding = unpack(peer, "output decoding bits", &d, shape.outputs.len())?;
    let out = evaluator.decode(&shape.outputs, &decoding)?;
    session.send_bytes(peer, &pack(&out))?;
    Ok(out)
}

/// Garbles the gates `gates` (holding `and_gates` AND gates) on the wires already labelled and
/// sends the tables in chunks of [`ANDS_PER_MSG`] AND gates.
fn send_tables<G: GcGarbler>(
    session: &mut Session,
    peer: PartyId,
    garbler: &mut G,
    and_gates: usize,
    mut gates: impl GateSource,
) -> Result<(), TwopcError> {
    let mut tables = G::tables_with_capacity(ANDS_PER_MSG.min(and_gates) + GATES_PER_BATCH);
    let mut ands = 0usize;
    while let Some(batch) = gates.next_batch() {
        // The batch's AND gates counted by the tables they added, not by a pass over the
        // gates of their own (which read every gate twice); too many are found before any of
        // the batch's tables is sent.
        let held = G::tables_held(&tables);
        garbler.garble_batch(batch, &mut tables)?;
        ands += G::tables_held(&tables) - held;
        if ands > and_gates {
            return Err(TwopcError::ApiMisuse("more AND gates than the shape says"));
        }
        while G::tables_held(&tables) >= ANDS_PER_MSG {
            session.send_vec(peer, G::take_tables_front(&mut tables, ANDS_PER_MSG)?)?;
        }
    }
    if ands != and_gates {
        return Err(TwopcError::ApiMisuse("fewer AND gates than the shape says"));
    }
    let rest = G::tables_held(&tables);
    if rest > 0 {
        session.send_vec(peer, G::take_tables_front(&mut tables, rest)?)?;
    }
    Ok(())
}

/// Evaluates the gates `gates` (holding `and_gates` AND gates) on the wires already labelled,
/// receiving the tables as [`send_tables`] sends them.
fn receive_tables<E: GcEvaluator>(
    session: &mut Session,
    peer: PartyId,
    evaluator: &mut E,
    and_gates: usize,
    mut gates: impl GateSource,
) -> Result<(), TwopcError> {
    let mut tables = E::Tables::default();
    let mut pos = 0;
    let mut ands_left = and_gates;
    while let Some(batch) = gates.next_batch() {
        let mut done = 0;
        while done < batch.len() {
            done += evaluator.eval_batch(&batch[done..], &tables, &mut pos)?;
            if done < batch.len() {
                // The next gate is an AND gate and this message's tables are used up.
                if ands_left == 0 {
                    return Err(TwopcError::ApiMisuse("more AND gates than the shape says"));
                }
                let k = ands_left.min(ANDS_PER_MSG);
                tables = E::read_tables(peer, session.recv_bytes(peer)?, k)?;
                ands_left -= k;
                pos = 0;
            }
        }
    }
    if ands_left != 0 || !E::tables_used(&tables, pos) {
        return Err(TwopcError::ApiMisuse("fewer AND gates than the shape says"));
    }
    Ok(())
}

/// Garbles `circuit` on input wires whose zero labels are `inputs` (all its input wires, in
/// wire order, whoever's they are) and streams the tables: the zero labels of its outputs.
/// Nothing is decoded and no input is sent, so values can stay labels from one circuit to the
/// next (the evaluator runs [`evaluate_on_labels`] on the matching labels).
///
/// # Errors
/// [`TwopcError::LengthMismatch`] unless `inputs` has one label per input wire; transport
/// failures.
pub fn garble_on_labels(
    session: &mut Session,
    garbler: &mut Garbler,
    circuit: &Circuit,
    inputs: &[Block],
) -> Result<Vec<Block>, TwopcError> {
    garble_on_parts(session, garbler, circuit, &[inputs])?;
    garbler.zero_labels(circuit.outputs())
}

/// Whether `inputs` hold one label per input wire of `circuit`, whoever's.
fn check_parts(circuit: &Circuit, inputs: &[&[Block]]) -> Result<(), TwopcError> {
    let n_in = circuit.garbler_inputs() + circuit.evaluator_inputs();
    let given = inputs.iter().map(|p| p.len()).sum();
    crate::error::same_len("input labels", n_in, given)
}

/// [`garble_on_labels`] on input labels given in parts, in order (so that labels kept in
/// several places need not be gathered first); the outputs' zero labels stay in `garbler`
/// until its next circuit ([`Garbler::zero_labels_into`]).
///
/// # Errors
/// As [`garble_on_labels`], for the parts' total length.
pub fn garble_on_parts(
    session: &mut Session,
    garbler: &mut Garbler,
    circuit: &Circuit,
    inputs: &[&[Block]],
) -> Result<(), TwopcError> {
    let peer = peer(session)?;
    check_parts(circuit, inputs)?;
    garbler.reset_wires(circuit.wires());
    let mut at = 0;
    for part in inputs {
        garbler.set_labels_at(at, part)?;
        at += part.len();
    }
    send_tables(
        session,
        peer,
        garbler,
        circuit.and_gates(),
        SliceGates(circuit.gates()),
    )
}

/// The evaluator's side of [`garble_on_labels`]: evaluates `circuit` on the active labels
/// `inputs` and returns its outputs' active labels.
///
/// # Errors
/// As [`garble_on_labels`]; the garbler's messages of the wrong size.
pub fn evaluate_on_labels(
    session: &mut Session,
    evaluator: &mut Evaluator,
    circuit: &Circuit,
    inputs: &[Block],
) -> Result<Vec<Block>, TwopcError> {
    evaluate_on_parts(session, evaluator, circuit, &[inputs])?;
    evaluator.labels(circuit.outputs())
}

/// The evaluator's side of [`garble_on_parts`]: the outputs' active labels stay in
/// `evaluator` until its next circuit ([`Evaluator::labels_into`]).
///
/// # Errors
/// As [`evaluate_on_labels`], for the parts' total length.
pub fn evaluate_on_parts(
    session: &mut Session,
    evaluator: &mut Evaluator,
    circuit: &Circuit,
    inputs: &[&[Block]],
) -> Result<(), TwopcError> {
    let peer = peer(session)?;
    check_parts(circuit, inputs)?;
    evaluator.reset_wires(circuit.wires());
    let mut at = 0;
    for part in inputs {
        evaluator.set_labels_at(at, part)?;
        at += part.len();
    }
    receive_tables(
        session,
        peer,
        evaluator,
        circuit.and_gates(),
        SliceGates(circuit.gates()),
    )
}
