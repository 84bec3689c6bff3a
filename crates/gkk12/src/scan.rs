//! The paper's baseline (GKK12 §5, "Yao linear scan"): the whole memory held as wire labels,
//! every access a circuit over every entry. No ORAM, no storage on either side beyond the
//! labels; an access costs 2·n·w + n AND gates (select the entry, overwrite it on a write, and
//! the address decoding), so it wins only for small memories.
//!
//! The memory is processed in chunks of [`CHUNK`] entries by one reused circuit, so neither
//! party builds a circuit the size of the memory (the paper's Yao baseline ran out of memory
//! at 2^20 entries for that reason, §5.2).

use doram_net::Session;
use doram_prim::aes::Block;
use doram_twopc::builder::{Bit, Builder, compact_wires};
use doram_twopc::driver::{evaluate_on_labels, garble_on_labels};
use doram_twopc::gc::{Evaluator, Garbler};
use doram_twopc::{Circuit, TwopcError};

use crate::driver::{AccessLabels, Gkk12Error};
use crate::search::SearchParty;

/// Entries per chunk circuit.
pub const CHUNK: usize = 64;

/// The circuits of a scan over `entries` entries of `width` bits.
#[derive(Clone, Debug)]
pub struct ScanCircuits {
    entries: usize,
    width: usize,
    addr_bits: usize,
    /// Address → one-hot vector over the entries.
    decode: Circuit,
    /// One chunk: inputs hot (CHUNK), entries (CHUNK·w), write, data (w), acc (w); outputs
    /// entries' (CHUNK·w), acc' (w).
    chunk: Circuit,
}

fn decode_circuit(entries: usize, addr_bits: usize) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let addr = b.evaluator_bits(addr_bits);
    let mut level = vec![Bit::ONE];
    for &bit in addr.iter().rev() {
        let nb = b.not(bit);
        let mut next = Vec::with_capacity(level.len() * 2);
        for &e in &level {
            next.push(b.and(e, nb));
            next.push(b.and(e, bit));
        }
        level = next;
    }
    level.truncate(entries);
    b.output_bits(&level);
    Ok(compact_wires(&b.finish()?))
}

fn chunk_circuit(width: usize) -> Result<Circuit, TwopcError> {
    let mut b = Builder::new();
    let hot = b.evaluator_bits(CHUNK);
    let entries = b.evaluator_bits(CHUNK * width);
    let write = b.evaluator_bit();
    let data = b.evaluator_bits(width);
    let mut acc = b.evaluator_bits(width);
    let mut out = Vec::with_capacity(CHUNK * width);
    for (k, &h) in hot.iter().enumerate() {
        let e = &entries[k * width..(k + 1) * width];
        for (a, &x) in acc.iter_mut().zip(e) {
            let t = b.and(h, x);
            *a = b.xor(*a, t);
        }
        let sel = b.and(h, write);
        for (&x, &d) in e.iter().zip(&data) {
            out.push(b.mux_bit(sel, x, d));
        }
    }
    b.output_bits(&out);
    b.output_bits(&acc);
    Ok(compact_wires(&b.finish()?))
}

impl ScanCircuits {
    /// The circuits for `entries` entries of `width` bits, addressed by `addr_bits` bits.
    ///
    /// # Errors
    /// Only if a circuit cannot be built.
    pub fn new(entries: usize, width: usize, addr_bits: usize) -> Result<ScanCircuits, TwopcError> {
        Ok(ScanCircuits {
            entries,
            width,
            addr_bits,
            decode: decode_circuit(entries, addr_bits)?,
            chunk: chunk_circuit(width)?,
        })
    }

    /// AND gates of one access.
    pub fn and_gates(&self) -> usize {
        self.decode.and_gates() + self.entries.div_ceil(CHUNK) * self.chunk.and_gates()
    }

    /// Runs one access with `run` garbling or evaluating each circuit (for a memory whose
    /// circuits run beside others under one garbler); `memory` holds the entries' labels (zero
    /// or active), `zero` the constant-0 label. Returns the labels of the entry before the
    /// access.
    ///
    /// # Errors
    /// [`Gkk12Error::Misuse`] for labels that do not fit; `run`'s errors.
    pub fn run_access(
        &self,
        memory: &mut [Block],
        zero: Block,
        input: &AccessLabels,
        mut run: impl FnMut(&Circuit, &[Block]) -> Result<Vec<Block>, TwopcError>,
    ) -> Result<Vec<Block>, Gkk12Error> {
        if input.addr.len() != self.addr_bits || input.data.len() != self.width {
            return Err(Gkk12Error::Misuse(
                "the access labels do not fit the scan memory",
            ));
        }
        let w = self.width;
        let hot = run(&self.decode, &input.addr)?;
        let mut acc = vec![zero; w];
        for (c, hot) in hot.chunks(CHUNK).enumerate() {
            let first = c * CHUNK;
            let n = hot.len();
            let mut inputs = Vec::with_capacity(CHUNK * (w + 1) + 2 * w + 1);
            inputs.extend_from_slice(hot);
            inputs.resize(CHUNK, zero);
            inputs.extend_from_slice(&memory[first * w..(first + n) * w]);
            inputs.resize(CHUNK + CHUNK * w, zero);
            inputs.push(input.write);
            inputs.extend_from_slice(&input.data);
            inputs.extend_from_slice(&acc);
            let out = run(&self.chunk, &inputs)?;
            memory[first * w..(first + n) * w].copy_from_slice(&out[..n * w]);
            acc.copy_from_slice(&out[CHUNK * w..]);
        }
        Ok(acc)
    }
}

/// The garbler's side of a scan memory: the entries' zero labels.
#[derive(Debug)]
pub struct ScanServer {
    circuits: ScanCircuits,
    memory: Vec<Block>,
    zero: Block,
}

/// The evaluator's side: the entries' active labels.
#[derive(Debug)]
pub struct ScanClient {
    circuits: ScanCircuits,
    memory: Vec<Block>,
    zero: Block,
}

impl ScanServer {
    /// A memory whose entries' zero labels are `memory` (`entries·width` labels, entry after
    /// entry), `zero` the constant-0 label both parties hold.
    ///
    /// # Errors
    /// [`Gkk12Error::Misuse`] for a memory of the wrong size.
    pub fn new(
        circuits: ScanCircuits,
        memory: Vec<Block>,
        zero: Block,
    ) -> Result<ScanServer, Gkk12Error> {
        if memory.len() != circuits.entries * circuits.width {
            return Err(Gkk12Error::Misuse(
                "the memory labels do not fit the scan circuits",
            ));
        }
        Ok(ScanServer {
            circuits,
            memory,
            zero,
        })
    }

    /// One access: the zero labels of the entry before it.
    ///
    /// # Errors
    /// Transport and engine failures; labels of the wrong shape.
    pub fn access(
        &mut self,
        session: &mut Session,
        garbler: &mut Garbler,
        input: &AccessLabels,
    ) -> Result<Vec<Block>, Gkk12Error> {
        self.circuits
            .run_access(&mut self.memory, self.zero, input, |c, x| {
                garble_on_labels(session, garbler, c, x)
            })
    }
}

impl ScanClient {
    /// The client's side of [`ScanServer::new`].
    ///
    /// # Errors
    /// As [`ScanServer::new`].
    pub fn new(
        circuits: ScanCircuits,
        memory: Vec<Block>,
        zero: Block,
    ) -> Result<ScanClient, Gkk12Error> {
        if memory.len() != circuits.entries * circuits.width {
            return Err(Gkk12Error::Misuse(
                "the memory labels do not fit the scan circuits",
            ));
        }
        Ok(ScanClient {
            circuits,
            memory,
            zero,
        })
    }

    /// One access: the active labels of the entry before it.
    ///
    /// # Errors
    /// As [`ScanServer::access`].
    pub fn access(
        &mut self,
        session: &mut Session,
        evaluator: &mut Evaluator,
        input: &AccessLabels,
    ) -> Result<Vec<Block>, Gkk12Error> {
        self.circuits
            .run_access(&mut self.memory, self.zero, input, |c, x| {
                evaluate_on_labels(session, evaluator, c, x)
            })
    }
}

/// The server's side of a binary search over the scan memory ([`crate::search`]): the paper's
/// baseline for Figure 5.
#[derive(Debug)]
pub struct ScanSearchServer<'a> {
    /// The memory.
    pub scan: &'a mut ScanServer,
    /// The garbler (its Δ is the memory's).
    pub garbler: &'a mut Garbler,
}

/// The client's side of [`ScanSearchServer`].
#[derive(Debug)]
pub struct ScanSearchClient<'a> {
    /// The memory.
    pub scan: &'a mut ScanClient,
    /// The evaluator.
    pub evaluator: &'a mut Evaluator,
}

impl SearchParty for ScanSearchServer<'_> {
    fn circuit(
        &mut self,
        s: &mut Session,
        c: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(garble_on_labels(s, self.garbler, c, inputs)?)
    }

    fn read(&mut self, s: &mut Session, addr: Vec<Block>) -> Result<Vec<Block>, Gkk12Error> {
        let read = AccessLabels::read(addr, self.scan.zero, self.scan.circuits.width);
        self.scan.access(s, self.garbler, &read)
    }

    fn public(&self, bits: &[bool]) -> Vec<Block> {
        let (zero, delta) = (self.scan.zero, self.garbler.delta());
        bits.iter()
            .map(|&b| if b { zero ^ delta } else { zero })
            .collect()
    }
}

impl SearchParty for ScanSearchClient<'_> {
    fn circuit(
        &mut self,
        s: &mut Session,
        c: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        Ok(evaluate_on_labels(s, self.evaluator, c, inputs)?)
    }

    fn read(&mut self, s: &mut Session, addr: Vec<Block>) -> Result<Vec<Block>, Gkk12Error> {
        let read = AccessLabels::read(addr, self.scan.zero, self.scan.circuits.width);
        self.scan.access(s, self.evaluator, &read)
    }

    fn public(&self, bits: &[bool]) -> Vec<Block> {
        vec![self.scan.zero; bits.len()]
    }
}
