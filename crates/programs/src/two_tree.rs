//! GKK12's binary-tree ORAM ([`doram_gkk12::driver`]) as the memory of the two-party machine:
//! programs run between two parties alone, the memory stored encrypted at `P0` (the ORAM's
//! server, who garbles) under `P1`'s pads (the ORAM's client, who evaluates), every access
//! polylogarithmic (GKK12 §4).
//!
//! # Load
//! By the two parties alone, in one of two ways:
//! * **Sorted** ([`doram_gkk12::sortload`]), when more than [`FIGURE1_MAX_WRITES`] cells are
//!   not publicly 0: every cell's word becomes XOR shares (A2B), every item of every tree gets
//!   a leaf of random bits neither party knows, and an oblivious bin placement
//!   ([`doram_gkk12::binsort`]) puts it into the bucket of its leaf's path at one level, among
//!   dummies. O(n log n) random OTs and OT-switched bits.
//! * **GKK12 Figure 1** otherwise: the ORAM starts empty ([`doram_gkk12::empty`]: every
//!   address reads 0, nobody placed anything) and every cell that is not publicly 0 is written,
//!   one ORAM access each; arrays filled with 0 cost nothing.
//!
//! # One access
//! The machine's words are additive F_p shares under its engine ([`doram_twopc::arith`]),
//! whose garbling Δ is not the ORAM's. They meet through XOR shares, which both hold for free
//! as the permute bits of their labels:
//! 1. the address (and, for a write, the condition and the value) become labels under the
//!    engine (A2B, one adder mod p each), whose permute bits are XOR shares;
//! 2. `P1`'s XOR shares enter the ORAM by correlated OT under the ORAM's Δ, `P0` folds its own
//!    into the zero labels: the ORAM's labels of the same bits;
//! 3. one ORAM access ([`Server::access`], [`Client::access`]); the word before it leaves as
//!    labels whose permute bits are again XOR shares;
//! 4. `P1`'s shares enter the engine by correlated OT, `P0` folds its own, and B2A (one
//!    circuit) makes the word an additive share.
//!
//! Every access reads and writes back, the write bit an input of the circuits, so the
//! operation type stays hidden ([`Ram::hides_op_type`](crate::Ram::hides_op_type) is true).
//! Sizes, message counts and rounds follow from the memory's size and from which cells are
//! publicly 0 (both public).
//!
//! Addresses must lie below the memory's length, as for every memory of the machine: the ORAM
//! covers addresses up to the next power of two, but an access beyond the length reads 0 and
//! may reveal the leaf 0 instead of a random one, which tells that it was out of range.

use doram_core::PartyId;
use doram_gkk12::OT_CHUNK;
use doram_gkk12::Params;
use doram_gkk12::driver::{AccessLabels, Client, Server};
use doram_gkk12::persist::{StateError, read_client, read_server};
use doram_gkk12::{empty, sortload};
use doram_prim::aes::Block;
use doram_twopc::arith::Share;
use doram_twopc::driver::{
    cot_receive, cot_send, softspoken_receiver_setup, softspoken_sender_setup,
};
use doram_twopc::gc::random_delta;
use doram_twopc::softspoken::{SoftSpokenReceiver, SoftSpokenSender};

use crate::binary_search::AccessWork;
use crate::error::ProgramError;
use crate::machine::OArray;
use crate::two::{Ctx, Machine2With, Memory2, ShareBit};

/// The two-party machine with GKK12's tree ORAM as its memory.
pub type Machine2Tree = Machine2With<TreeMemory>;

/// Bits of a word in memory: a whole element of F_p.
const WORD_BITS: usize = 128;

/// Words converted per batch while the memory is loaded (bounds the labels in flight).
const LOAD_CHUNK: usize = 1024;

/// The most words GKK12 Figure 1 loads (one ORAM write each, into an ORAM started empty);
/// a memory with more words not publicly 0 is loaded by the sorted load instead.
pub const FIGURE1_MAX_WRITES: usize = 64;

/// This party's side of the ORAM.
enum Side {
    Server(Box<Server<SoftSpokenSender>>),
    Client(Box<Client<SoftSpokenReceiver>>),
}

/// The ORAM at one party: the server's encrypted trees or the client's key, each with the
/// base map's labels and the ORAM's own OT extension and garbling.
pub struct TreeMemory {
    side: Side,
    len: usize,
    addr_bits: usize,
}

/// The labels of one access's inputs as XOR shares: address, write bit, data.
struct Inputs {
    bits: Vec<bool>,
}

impl TreeMemory {
    /// The ORAM's labels of the bits whose XOR shares this party holds (`P1`'s enter by
    /// correlated OT under the ORAM's Δ; `P0` folds its own into the zero labels).
    fn oram_labels(
        &mut self,
        ctx: &mut Ctx<'_>,
        shares: &[bool],
    ) -> Result<Vec<Block>, ProgramError> {
        let (_, session, _) = ctx.parts();
        Ok(match &mut self.side {
            Side::Server(s) => {
                let delta = s.delta();
                s.peer_input(session, shares.len())?
                    .into_iter()
                    .zip(shares)
                    .map(|(q, &b)| if b { q ^ delta } else { q })
                    .collect()
            }
            Side::Client(c) => c.input(session, shares)?,
        })
    }

    /// The engine's labels of the bits whose XOR shares this party holds (as
    /// [`oram_labels`](TreeMemory::oram_labels), under the engine's Δ).
    fn engine_labels(ctx: &mut Ctx<'_>, shares: &[bool]) -> Result<Vec<Block>, ProgramError> {
        let (arith, session, _) = ctx.parts();
        let me = arith.me();
        let (sender, receiver) = arith.ots_mut();
        Ok(if me == PartyId::P0 {
            let delta = doram_twopc::ot_ext::CotExtSender::delta(sender);
            cot_send(session, sender, shares.len())?
                .q
                .into_iter()
                .zip(shares)
                .map(|(q, &b)| if b { q ^ delta } else { q })
                .collect()
        } else {
            cot_receive(session, receiver, shares)?.t
        })
    }

    /// One ORAM access on this party's XOR shares of its inputs; returns its XOR shares of the
    /// word before the access.
    fn access(&mut self, ctx: &mut Ctx<'_>, input: &Inputs) -> Result<Vec<bool>, ProgramError> {
        let labels = self.oram_labels(ctx, &input.bits)?;
        let a = self.addr_bits;
        let access = AccessLabels {
            addr: labels[..a].to_vec(),
            write: labels[a],
            data: labels[a + 1..].to_vec(),
        };
        let (_, session, _) = ctx.parts();
        let out = match &mut self.side {
            Side::Server(s) => s.access(session, &access)?,
            Side::Client(c) => c.access(session, &access)?,
        };
        Ok(out.iter().map(|&w| w & 1 == 1).collect())
    }

    /// This party's XOR shares of the low `bits` bits of each value (A2B in the engine).
    fn xor_shares(
        ctx: &mut Ctx<'_>,
        values: &[Share],
        bits: usize,
    ) -> Result<Vec<bool>, ProgramError> {
        let (arith, session, _) = ctx.parts();
        Ok(arith
            .to_labels(session, values, bits)?
            .iter()
            .map(|&w| w & 1 == 1)
            .collect())
    }

    /// Additive shares of the 128-bit words whose XOR shares this party holds (B2A).
    fn from_xor_shares(ctx: &mut Ctx<'_>, shares: &[bool]) -> Result<Vec<Share>, ProgramError> {
        let labels = TreeMemory::engine_labels(ctx, shares)?;
        let (arith, session, _) = ctx.parts();
        Ok(arith.from_labels(session, &labels)?)
    }

    /// A public bit as this party's XOR share (`P0` holds it, `P1` holds 0).
    fn public(ctx: &mut Ctx<'_>, b: bool) -> bool {
        let (arith, _, _) = ctx.parts();
        b && arith.me() == PartyId::P0
    }

    /// This party's XOR shares of the public address `v`.
    fn public_addr(&self, ctx: &mut Ctx<'_>, v: usize) -> Vec<bool> {
        (0..self.addr_bits)
            .map(|k| TreeMemory::public(ctx, (v >> k) & 1 == 1))
            .collect()
    }

    /// The sorted load ([`doram_gkk12::sortload`]) of every cell: its XOR shares (A2B in
    /// batches), the load's own OT extensions both ways (the load garbles under a fresh Δ),
    /// and the ORAM's.
    fn sorted(ctx: &mut Ctx<'_>, cells: &[Share], params: Params) -> Result<Self, ProgramError> {
        let len = params.items() as usize;
        let mut data = vec![0u8; len * WORD_BITS / 8];
        for (k, chunk) in cells.chunks(LOAD_CHUNK).enumerate() {
            let bits = TreeMemory::xor_shares(ctx, chunk, WORD_BITS)?;
            let at = k * LOAD_CHUNK * WORD_BITS / 8;
            for (j, &b) in bits.iter().enumerate() {
                if b {
                    data[at + j / 8] |= 1 << (j % 8);
                }
            }
        }
        let (arith, session, rng) = ctx.parts();
        let side = if arith.me() == PartyId::P0 {
            let mut ot = softspoken_sender_setup(session, OT_CHUNK, random_delta(rng), rng)?;
            let mut send = softspoken_sender_setup(session, OT_CHUNK, random_delta(rng), rng)?;
            let mut recv = softspoken_receiver_setup(session, OT_CHUNK, rng)?;
            let state = sortload::load_server(
                session,
                &params,
                &data,
                sortload::Holding::Shared,
                &mut ot,
                &mut send,
                &mut recv,
                rng,
            )?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Server(Box::new(Server::new(state, ot, prg)?))
        } else {
            let mut ot = softspoken_receiver_setup(session, OT_CHUNK, rng)?;
            let mut recv = softspoken_receiver_setup(session, OT_CHUNK, rng)?;
            let mut send = softspoken_sender_setup(session, OT_CHUNK, random_delta(rng), rng)?;
            let state = sortload::load_client(
                session,
                &params,
                &data,
                sortload::Holding::Shared,
                &mut ot,
                &mut send,
                &mut recv,
                rng,
            )?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Client(Box::new(Client::new(state, ot, prg)?))
        };
        Ok(TreeMemory {
            side,
            len,
            addr_bits: params.address_bits(),
        })
    }

    /// Writes this party's side of the ORAM ([`doram_gkk12::persist`]).
    pub(crate) fn save(&self, out: &mut dyn std::io::Write) -> Result<(), StateError> {
        match &self.side {
            Side::Server(s) => s.save(out),
            Side::Client(c) => c.save(out),
        }
    }

    /// The ORAM of `len` words resumed from this party's saved side in `input`, over fresh OT
    /// extensions (`P0`'s under the saved Δ).
    ///
    /// # Errors
    /// [`ProgramError::Store`] for a state that does not read or is not an ORAM of `len`
    /// words; transport failures.
    pub(crate) fn resume(
        ctx: &mut Ctx<'_>,
        input: &mut dyn std::io::Read,
        len: usize,
    ) -> Result<TreeMemory, ProgramError> {
        let params = Params::paper(len.max(1) as u64, WORD_BITS)
            .map_err(|_| ProgramError::Misuse("the tree ORAM holds at most 2^32 words"))?;
        let store = |e: StateError| ProgramError::Store(format!("the ORAM's state: {e}"));
        let (arith, session, rng) = ctx.parts();
        let side = if arith.me() == PartyId::P0 {
            let saved = read_server(input).map_err(store)?;
            if *saved.params() != params {
                return Err(ProgramError::Store(
                    "the ORAM's size is not the database's".into(),
                ));
            }
            let ot = softspoken_sender_setup(session, OT_CHUNK, saved.delta(), rng)?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Server(Box::new(Server::resume(saved, ot, prg)?))
        } else {
            let saved = read_client(input).map_err(store)?;
            if *saved.params() != params {
                return Err(ProgramError::Store(
                    "the ORAM's size is not the database's".into(),
                ));
            }
            let ot = softspoken_receiver_setup(session, OT_CHUNK, rng)?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Client(Box::new(Client::resume(saved, ot, prg)?))
        };
        Ok(TreeMemory {
            side,
            len: len.max(1),
            addr_bits: params.address_bits(),
        })
    }

    /// Reads the words at the addresses whose XOR shares are `addr_shares`, in order.
    fn read_shared(
        &mut self,
        ctx: &mut Ctx<'_>,
        addr_shares: &[Vec<bool>],
    ) -> Result<Vec<Share>, ProgramError> {
        let zero_write = TreeMemory::public(ctx, false);
        let mut words = Vec::with_capacity(addr_shares.len() * WORD_BITS);
        for a in addr_shares {
            let mut bits = a.clone();
            bits.push(zero_write);
            bits.extend(std::iter::repeat_n(false, WORD_BITS));
            words.extend(self.access(ctx, &Inputs { bits })?);
        }
        TreeMemory::from_xor_shares(ctx, &words)
    }
}

impl Memory2 for TreeMemory {
    const BACKEND: &'static str = "gkk12-tree";
    const ACCESS_WORK: AccessWork = AccessWork::Sublinear;

    fn boot(ctx: &mut Ctx<'_>, cells: Vec<Share>, accesses: usize) -> Result<Self, ProgramError> {
        let zero = vec![false; cells.len()];
        TreeMemory::boot_cells(ctx, cells, &zero, accesses)
    }

    /// Starts the ORAM empty and writes every cell not publicly 0 (GKK12 Figure 1).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] for a memory beyond the ORAM's range; transport failures; the
    /// peer's malformed messages; a bucket overflow (the ORAM then refuses every access).
    fn boot_cells(
        ctx: &mut Ctx<'_>,
        cells: Vec<Share>,
        public_zero: &[bool],
        _accesses: usize,
    ) -> Result<Self, ProgramError> {
        let len = cells.len().max(1);
        let params = Params::paper(len as u64, WORD_BITS)
            .map_err(|_| ProgramError::Misuse("the tree ORAM holds at most 2^32 words"))?;
        let written: Vec<usize> = (0..cells.len())
            .filter(|&i| !public_zero.get(i).copied().unwrap_or(false))
            .collect();
        if written.len() > FIGURE1_MAX_WRITES {
            return TreeMemory::sorted(ctx, &cells, params);
        }
        let (arith, session, rng) = ctx.parts();
        let side = if arith.me() == PartyId::P0 {
            let delta = random_delta(rng);
            let mut ot = softspoken_sender_setup(session, OT_CHUNK, delta, rng)?;
            let state = empty::server_state(session, &params, &mut ot, rng)?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Server(Box::new(Server::new(state, ot, prg)?))
        } else {
            let mut ot = softspoken_receiver_setup(session, OT_CHUNK, rng)?;
            let state = empty::client_state(session, &params, &mut ot, rng)?;
            let prg = doram_prim::AesPrg::new(rng.next_seed());
            Side::Client(Box::new(Client::new(state, ot, prg)?))
        };
        let mut memory = TreeMemory {
            side,
            len,
            addr_bits: params.address_bits(),
        };
        let write = TreeMemory::public(ctx, true);
        for chunk in written.chunks(LOAD_CHUNK) {
            let values: Vec<Share> = chunk.iter().map(|&i| cells[i]).collect();
            let data = TreeMemory::xor_shares(ctx, &values, WORD_BITS)?;
            for (&i, d) in chunk.iter().zip(data.chunks(WORD_BITS)) {
                let mut bits = memory.public_addr(ctx, i);
                bits.push(write);
                bits.extend_from_slice(d);
                memory.access(ctx, &Inputs { bits })?;
            }
        }
        Ok(memory)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn read(&mut self, ctx: &mut Ctx<'_>, addrs: &[Share]) -> Result<Vec<Share>, ProgramError> {
        let shares = TreeMemory::xor_shares(ctx, addrs, self.addr_bits)?;
        let per: Vec<Vec<bool>> = if self.addr_bits == 0 {
            vec![Vec::new(); addrs.len()]
        } else {
            shares
                .chunks(self.addr_bits)
                .map(<[bool]>::to_vec)
                .collect()
        };
        self.read_shared(ctx, &per)
    }

    /// One access whose write bit is the condition (1 without one): the same messages
    /// whether it writes or not.
    fn write(
        &mut self,
        ctx: &mut Ctx<'_>,
        addr: Share,
        cond: Option<ShareBit>,
        val: Share,
        _old: Option<Share>,
    ) -> Result<(), ProgramError> {
        let mut bits = TreeMemory::xor_shares(ctx, &[addr], self.addr_bits)?;
        match cond {
            Some(c) => bits.extend(TreeMemory::xor_shares(ctx, &[c.value()], 1)?),
            None => bits.push(TreeMemory::public(ctx, true)),
        }
        bits.extend(TreeMemory::xor_shares(ctx, &[val], WORD_BITS)?);
        self.access(ctx, &Inputs { bits })?;
        Ok(())
    }

    /// Reads every word of `arrays` (one ORAM access each).
    fn snapshot(
        &mut self,
        ctx: &mut Ctx<'_>,
        arrays: &[OArray],
    ) -> Result<Vec<Vec<Share>>, ProgramError> {
        let mut out = Vec::with_capacity(arrays.len());
        for a in arrays {
            let addrs: Vec<Vec<bool>> = (a.base()..a.base() + a.len())
                .map(|v| self.public_addr(ctx, v))
                .collect();
            out.push(self.read_shared(ctx, &addrs)?);
        }
        Ok(out)
    }
}
