//! 2P-Duoram ([`doram_duoram::two_party`]) as the memory of the two-party machine: programs run
//! between two parties with the memory held as additive F_p shares — the machine's own word
//! shares, so no conversion at either end — and every access a 2P-Duoram READ (symmetric PIR
//! both ways) or UPDATE.
//!
//! * A read is one READ ([`read_field`]); the READs of one call share their preprocessing.
//! * A write is a READ of the old value (unless the program passes it) and an UPDATE by
//!   `val − old`; a conditional write multiplies that difference by the condition first (the
//!   machine's select: two OTs for a comparison result, a Beaver product otherwise), so a
//!   conditional write sends the same messages whatever the condition. A write costs a READ
//!   and an UPDATE where a read costs a READ; which one a call is, is public in the program.
//! * Preprocessing runs just before each access (READ: random OTs, the query, its expansion;
//!   UPDATE: two DPF keys made by OT), so the machine's figures put it in the access.
//!
//! Memories up to 2^26 words ([`doram_spir::MAX_RECORDS`]).

use doram_duoram::two_party::{
    MemoryShare, ReadSetup, SpentMaterial, prepare_reads, prepare_reusing, read_field, setup_reads,
    update_field_many,
};
use doram_field::Fp;
use doram_twopc::arith::Share;

use crate::binary_search::AccessWork;
use crate::error::ProgramError;
use crate::machine::OArray;
use crate::two::{Ctx, Machine2With, Memory2, ShareBit};

/// The two-party machine with 2P-Duoram as its memory.
pub type Machine2Duoram = Machine2With<DuoramMemory>;

/// 2P-Duoram's state at one party: its memory share, its SPIRAL keys and the peer's public
/// parameters, and the buffers of consumed UPDATE material.
pub struct DuoramMemory {
    memory: MemoryShare,
    reads: ReadSetup,
    spare: Vec<SpentMaterial>,
}

impl DuoramMemory {
    fn read_many(
        &mut self,
        ctx: &mut Ctx<'_>,
        addrs: &[Share],
    ) -> Result<Vec<Share>, ProgramError> {
        let (arith, session, rng) = ctx.parts();
        let mats = prepare_reads(session, arith, &self.reads, addrs.len(), rng)?;
        let mut out = Vec::with_capacity(addrs.len());
        for (a, m) in addrs.iter().zip(mats) {
            let v = read_field(session, &self.memory, &mut self.reads, m, a.raw(), rng)?;
            out.push(Share::from_raw(v));
        }
        Ok(out)
    }
}

impl Memory2 for DuoramMemory {
    const BACKEND: &'static str = "duoram2p";
    const ACCESS_WORK: AccessWork = AccessWork::Linear;

    fn boot(ctx: &mut Ctx<'_>, cells: Vec<Share>, _accesses: usize) -> Result<Self, ProgramError> {
        let mut shares: Vec<Fp> = cells.into_iter().map(Share::raw).collect();
        if shares.is_empty() {
            shares.push(Fp::ZERO);
        }
        let n = shares.len();
        let memory = MemoryShare::from_shares(shares)?;
        let (_, session, _) = ctx.parts();
        let reads = setup_reads(session, n)?;
        Ok(DuoramMemory {
            memory,
            reads,
            spare: Vec::new(),
        })
    }

    fn len(&self) -> usize {
        self.memory.len()
    }

    fn read(&mut self, ctx: &mut Ctx<'_>, addrs: &[Share]) -> Result<Vec<Share>, ProgramError> {
        self.read_many(ctx, addrs)
    }

    fn write(
        &mut self,
        ctx: &mut Ctx<'_>,
        addr: Share,
        cond: Option<ShareBit>,
        val: Share,
        old: Option<Share>,
    ) -> Result<(), ProgramError> {
        let old = match old {
            Some(o) => o,
            None => self.read_many(ctx, &[addr])?[0],
        };
        let diff = val - old;
        let delta = match cond {
            None => diff,
            Some(c) => {
                let zero = Share::default();
                ctx.select(&[(c, diff, zero)])?[0]
            }
        };
        let n = self.memory.len();
        let (arith, session, rng) = ctx.parts();
        let mats = prepare_reusing(session, arith, 1, n, &mut self.spare, rng)?;
        let spent = update_field_many(
            session,
            &mut self.memory,
            mats,
            &[(addr.raw(), delta.raw())],
            rng,
        )?;
        self.spare.extend(spent);
        Ok(())
    }

    fn snapshot(
        &mut self,
        _ctx: &mut Ctx<'_>,
        arrays: &[OArray],
    ) -> Result<Vec<Vec<Share>>, ProgramError> {
        let words = self.memory.words();
        Ok(arrays
            .iter()
            .map(|a| {
                words[a.base()..a.base() + a.len()]
                    .iter()
                    .map(|&w| Share::from_raw(w))
                    .collect()
            })
            .collect())
    }
}
