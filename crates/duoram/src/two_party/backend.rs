//! 2P-Duoram as a [`SharedMemory`] backend ([`Duoram2`] on F_p words, [`Duoram2Z64`] on the
//! paper's 64-bit words): two parties, hidden operation types, no third party.
//!
//! Every access is one READ ([`read_field`]) of the old value and one UPDATE
//! ([`update_field_many`]) by `δ = op·(v − old)` — one Beaver product on the two-party engine
//! ([`Arith2::mul_many`]) between them — so reads and writes send the same messages and the
//! operation type stays hidden ([`OpVisibility::Hidden`]); a public read is the same access
//! with `op = 0`. [`SharedMemory::update`] is the native UPDATE alone. Per access: 4 flights
//! (the READ's two, the product's one, the UPDATE's one).
//!
//! Preprocessing ([`SharedMemory::preprocess`]): per access, one READ's material
//! ([`prepare_reads`]), one UPDATE's ([`prepare`](super::prepare)) and one triple of the word
//! ring. UPDATE material holds `2N` words (32 MiB at `N = 2^20` for F_p, 16 MiB for 64-bit
//! words), so a driver preprocesses in batches sized to its memory
//! ([`Protocol::preprocess_upfront`]); an access without material makes its own inline.
//!
//! On 64-bit words ([`Duoram2Z64`]) an index shared additively mod 2^64 is already shared mod
//! N (N divides 2^64), so the READ and the UPDATE send the offset as it is ([`read_u64`],
//! [`update_many`]); on F_p words they send it under a 2^-40 statistical mask
//! ([`read_field`], [`update_field_many`]). The READ's records are 8 bytes instead of 16, half
//! the online work.
//!
//! Secrets: the engine's and the indices' randomness come from the setup seed (OS entropy in
//! real use); SPIRAL's keys and query randomness always come from OS entropy inside
//! `spiral-rs`, so runs are not byte-for-byte reproducible even under a fixed seed.

use std::collections::VecDeque;

use doram_core::Seed;
use doram_field::{Fp, Z64};
use doram_mpc::Additive;
use doram_net::Session;
use doram_oram::{
    DistributedOram, InstructionShare, OpVisibility, OramError, Protocol, SharedMemory,
};
use doram_prim::AesPrg;
use doram_twopc::arith::{Arith2, Share};
use doram_twopc::driver::peer;
use rand_core::RngCore;

use super::read::{
    ReadMaterial, ReadSetup, prepare_reads, read_field, read_u64, setup_reads, setup_reads_u64,
};
use super::{
    MemoryShareOf, SpentMaterialOf, TwoPartyWord, UpdateMaterialOf, prepare_words,
    update_field_many, update_many,
};
use crate::error::DuoramError;

/// The frame limit of an instance. Its largest fixed-size message is SPIRAL's public
/// parameters (2.1–2.4 MB up to 2^26 words); the engine chunks its messages (chosen OTs by
/// 2^15, 1 MiB; triple corrections by 4096 elements, 64 KiB), and the DPF generation's level
/// messages grow with the batch, about 32 bytes per key: 32 MiB leaves room for batches of
/// hundreds of thousands of UPDATEs, far beyond what their material lets a party hold.
const MAX_MESSAGE: usize = 32 << 20;

/// The word rings of the backend: what a READ, an UPDATE and the product δ = op·(v − old) are
/// in each ([module documentation](self)). Implemented for [`Fp`] and [`Z64`].
pub trait BackendWord: TwoPartyWord {
    /// The protocol's name in reports.
    const NAME: &'static str;

    /// The READ set-up for this word size.
    #[doc(hidden)]
    fn setup_reads(session: &mut Session, n: usize) -> Result<ReadSetup, DuoramError>;

    /// One READ at the shared index `addr`.
    #[doc(hidden)]
    fn read(
        session: &mut Session,
        memory: &MemoryShareOf<Self>,
        setup: &mut ReadSetup,
        material: ReadMaterial,
        addr: Self,
        rng: &mut AesPrg,
    ) -> Result<Self, DuoramError>;

    /// UPDATEs by `(addr, δ)` shares.
    #[doc(hidden)]
    fn update(
        session: &mut Session,
        memory: &mut MemoryShareOf<Self>,
        materials: Vec<UpdateMaterialOf<Self>>,
        shares: &[(Self, Self)],
        rng: &mut AesPrg,
    ) -> Result<Vec<SpentMaterialOf<Self>>, DuoramError>;

    /// Triples pooled in the engine for this ring.
    #[doc(hidden)]
    fn pooled(engine: &Arith2) -> usize;

    /// Makes `count` triples of this ring.
    #[doc(hidden)]
    fn make_triples(
        engine: &mut Arith2,
        session: &mut Session,
        count: usize,
    ) -> Result<(), DuoramError>;

    /// x·y of shares (one Beaver product).
    #[doc(hidden)]
    fn product(
        engine: &mut Arith2,
        session: &mut Session,
        x: Self,
        y: Self,
    ) -> Result<Self, DuoramError>;
}

impl BackendWord for Fp {
    const NAME: &'static str = "duoram2p";

    fn setup_reads(session: &mut Session, n: usize) -> Result<ReadSetup, DuoramError> {
        setup_reads(session, n)
    }

    fn read(
        session: &mut Session,
        memory: &MemoryShareOf<Fp>,
        setup: &mut ReadSetup,
        material: ReadMaterial,
        addr: Fp,
        rng: &mut AesPrg,
    ) -> Result<Fp, DuoramError> {
        read_field(session, memory, setup, material, addr, rng)
    }

    fn update(
        session: &mut Session,
        memory: &mut MemoryShareOf<Fp>,
        materials: Vec<UpdateMaterialOf<Fp>>,
        shares: &[(Fp, Fp)],
        rng: &mut AesPrg,
    ) -> Result<Vec<SpentMaterialOf<Fp>>, DuoramError> {
        update_field_many(session, memory, materials, shares, rng)
    }

    fn pooled(engine: &Arith2) -> usize {
        engine.pool_len()
    }

    fn make_triples(
        engine: &mut Arith2,
        session: &mut Session,
        count: usize,
    ) -> Result<(), DuoramError> {
        Ok(engine.preprocess(session, count)?)
    }

    fn product(
        engine: &mut Arith2,
        session: &mut Session,
        x: Fp,
        y: Fp,
    ) -> Result<Fp, DuoramError> {
        let z = engine.mul_many(session, &[(Share::from_raw(x), Share::from_raw(y))])?;
        Ok(z.first().map_or(Fp::ZERO, |d| d.raw()))
    }
}

impl BackendWord for Z64 {
    const NAME: &'static str = "duoram2p-z64";

    fn setup_reads(session: &mut Session, n: usize) -> Result<ReadSetup, DuoramError> {
        setup_reads_u64(session, n)
    }

    fn read(
        session: &mut Session,
        memory: &MemoryShareOf<Z64>,
        setup: &mut ReadSetup,
        material: ReadMaterial,
        addr: Z64,
        _rng: &mut AesPrg,
    ) -> Result<Z64, DuoramError> {
        read_u64(session, memory, setup, material, addr.0)
    }

    fn update(
        session: &mut Session,
        memory: &mut MemoryShareOf<Z64>,
        materials: Vec<UpdateMaterialOf<Z64>>,
        shares: &[(Z64, Z64)],
        _rng: &mut AesPrg,
    ) -> Result<Vec<SpentMaterialOf<Z64>>, DuoramError> {
        let shares: Vec<(u64, Z64)> = shares.iter().map(|&(a, d)| (a.0, d)).collect();
        update_many(session, memory, materials, &shares)
    }

    fn pooled(engine: &Arith2) -> usize {
        engine.pool_len_z64()
    }

    fn make_triples(
        engine: &mut Arith2,
        session: &mut Session,
        count: usize,
    ) -> Result<(), DuoramError> {
        Ok(engine.preprocess_z64(session, count)?)
    }

    fn product(
        engine: &mut Arith2,
        session: &mut Session,
        x: Z64,
        y: Z64,
    ) -> Result<Z64, DuoramError> {
        let z = engine.mul_many_z64(session, &[(x, y)])?;
        Ok(z.first().copied().unwrap_or(Z64::ZERO))
    }
}

/// One party's endpoint of 2P-Duoram over words `W` ([module documentation](self)). `Debug`
/// shows the sizes.
pub struct Duoram2Of<W> {
    session: Session,
    engine: Arith2,
    rng: AesPrg,
    n: usize,
    memory: Option<MemoryShareOf<W>>,
    reads: ReadSetup,
    read_mats: VecDeque<ReadMaterial>,
    update_mats: VecDeque<UpdateMaterialOf<W>>,
    spare: Vec<SpentMaterialOf<W>>,
    poisoned: bool,
}

/// 2P-Duoram on F_p words (the words of the two-party engine and of its programs).
pub type Duoram2 = Duoram2Of<Fp>;

/// 2P-Duoram on 64-bit words (additive mod 2^64), the paper's setting.
pub type Duoram2Z64 = Duoram2Of<Z64>;

impl<W: BackendWord> core::fmt::Debug for Duoram2Of<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "Duoram2 {{ n: {}, preprocessed: {} }}",
            self.n,
            self.preprocessed()
        )
    }
}

impl<W: BackendWord> Duoram2Of<W> {
    /// Sets up this party's endpoint over a session of two parties for a memory of `n` words:
    /// the two-party engine (base OTs, OT extension both ways) and the SPIRAL keys (public
    /// parameters exchanged). `seed` is this party's secret randomness (OS entropy in real use).
    ///
    /// # Errors
    /// [`DuoramError::InvalidSize`] unless `1 ≤ n ≤ 2^26`; [`DuoramError::Twopc`] for a session
    /// that does not have two parties; transport failures and the peer's malformed messages.
    pub fn setup(mut session: Session, n: usize, seed: Seed) -> Result<Duoram2Of<W>, DuoramError> {
        peer(&session)?;
        let reads_size_ok = (1..=doram_spir::MAX_RECORDS).contains(&n);
        if !reads_size_ok {
            return Err(DuoramError::InvalidSize {
                n,
                reason: "2P-Duoram supports 1 ≤ n ≤ 2^26",
            });
        }
        let mut rng = AesPrg::new(seed);
        let engine = Arith2::setup(&mut session, &mut rng)?;
        let reads = W::setup_reads(&mut session, n)?;
        Ok(Duoram2Of {
            session,
            engine,
            rng,
            n,
            memory: None,
            reads,
            read_mats: VecDeque::new(),
            update_mats: VecDeque::new(),
            spare: Vec::new(),
            poisoned: false,
        })
    }

    fn check(&self) -> Result<(), OramError> {
        if self.poisoned {
            Err(OramError::Poisoned)
        } else {
            Ok(())
        }
    }

    /// Runs `f`, poisoning the instance if it fails after messages may have been sent.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Duoram2Of<W>) -> Result<T, DuoramError>,
    ) -> Result<T, OramError> {
        self.check()?;
        f(self).map_err(|e| {
            if !matches!(e, DuoramError::ApiMisuse(_)) {
                self.poisoned = true;
            }
            e.into()
        })
    }

    /// Material for `k` more accesses: READs, UPDATEs and triples.
    fn prepare_more(&mut self, k: usize) -> Result<(), DuoramError> {
        if k == 0 {
            return Ok(());
        }
        let reads = prepare_reads(
            &mut self.session,
            &mut self.engine,
            &self.reads,
            k,
            &mut self.rng,
        )?;
        self.read_mats.extend(reads);
        let updates = prepare_words(
            &mut self.session,
            &mut self.engine,
            k,
            self.n,
            &mut self.spare,
            &mut self.rng,
        )?;
        self.update_mats.extend(updates);
        // One triple per queued access (the product δ = op·(v − old)).
        let missing = self.preprocessed().saturating_sub(W::pooled(&self.engine));
        if missing > 0 {
            W::make_triples(&mut self.engine, &mut self.session, missing)?;
        }
        Ok(())
    }

    /// One access: READ, δ = op·(v − old), UPDATE.
    fn access_inner(&mut self, op: Additive<W>, addr: W, value: W) -> Result<W, DuoramError> {
        if self.read_mats.is_empty() || self.update_mats.is_empty() {
            self.prepare_more(1)?;
        }
        let (Some(rm), Some(um)) = (self.read_mats.pop_front(), self.update_mats.pop_front())
        else {
            return Err(DuoramError::ApiMisuse("no material after preprocessing"));
        };
        let memory = self.memory.as_mut().ok_or(DuoramError::NotInitialized)?;
        let old = W::read(
            &mut self.session,
            memory,
            &mut self.reads,
            rm,
            addr,
            &mut self.rng,
        )?;
        let delta = W::product(&mut self.engine, &mut self.session, op.share(), value - old)?;
        let spent = W::update(
            &mut self.session,
            memory,
            vec![um],
            &[(addr, delta)],
            &mut self.rng,
        )?;
        self.spare.extend(spent);
        Ok(old)
    }
}

impl<W: BackendWord> SharedMemory for Duoram2Of<W> {
    type Word = W;

    const OP_VISIBILITY: OpVisibility = OpVisibility::Hidden;

    fn parties(&self) -> usize {
        2
    }

    fn len(&self) -> usize {
        self.n
    }

    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.guarded(|me| me.prepare_more(accesses))
    }

    fn preprocessed(&self) -> usize {
        self.read_mats.len().min(self.update_mats.len())
    }

    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
        self.check()?;
        if self.memory.is_some() {
            return Err(OramError::AlreadyInitialized);
        }
        if memory.len() != self.n {
            return Err(OramError::WrongMemoryLength {
                expected: self.n,
                got: memory.len(),
            });
        }
        let shares = memory.iter().map(|a| a.share()).collect();
        self.memory = Some(MemoryShareOf::from_shares(shares).map_err(OramError::from)?);
        Ok(())
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        self.check()?;
        if self.memory.is_none() {
            return Err(OramError::NotInitialized);
        }
        let me = self.session.me();
        let op = ins.op.to_additive(me);
        let (addr, value) = (ins.addr.share(), ins.value.share());
        self.guarded(|s| s.access_inner(op, addr, value))
            .map(Additive::from_share)
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        self.check()?;
        if self.memory.is_none() {
            return Err(OramError::NotInitialized);
        }
        self.guarded(|s| {
            // Fresh shares: P0 adds a mask vector from a seed it sends, P1 subtracts it.
            let other = peer(&s.session)?;
            let seed = if s.session.me().index() == 0 {
                let mut b = [0u8; 16];
                s.rng.fill_bytes(&mut b);
                s.session.send_bytes(other, &b)?;
                b
            } else {
                let got = s.session.recv_bytes(other)?;
                doram_core::wire::exact_len(other, "memory re-sharing seed", &got, 16)?;
                let mut b = [0u8; 16];
                b.copy_from_slice(&got);
                b
            };
            let mut mask = AesPrg::new(Seed(seed));
            let sign = s.session.me().index() == 0;
            let words = s.memory.as_ref().map_or(&[][..], MemoryShareOf::words);
            Ok(words
                .iter()
                .map(|&w| {
                    let z = W::random_word(&mut mask);
                    Additive::from_share(if sign { w + z } else { w - z })
                })
                .collect())
        })
    }

    /// 2P-Duoram's native UPDATE: one flight, one UPDATE's material.
    fn update(&mut self, addr: Additive<W>, delta: Additive<W>) -> Result<(), OramError> {
        self.check()?;
        if self.memory.is_none() {
            return Err(OramError::NotInitialized);
        }
        self.guarded(|s| {
            if s.update_mats.is_empty() {
                let u = prepare_words(
                    &mut s.session,
                    &mut s.engine,
                    1,
                    s.n,
                    &mut s.spare,
                    &mut s.rng,
                )?;
                s.update_mats.extend(u);
            }
            let um = s
                .update_mats
                .pop_front()
                .ok_or(DuoramError::ApiMisuse("no UPDATE material"))?;
            let memory = s.memory.as_mut().ok_or(DuoramError::NotInitialized)?;
            let spent = W::update(
                &mut s.session,
                memory,
                vec![um],
                &[(addr.share(), delta.share())],
                &mut s.rng,
            )?;
            s.spare.extend(spent);
            Ok(())
        })
    }
}

impl<W: BackendWord> DistributedOram for Duoram2Of<W> {
    fn max_message_bytes(&self) -> usize {
        MAX_MESSAGE
    }

    fn session(&self) -> &Session {
        &self.session
    }

    fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

/// 2P-Duoram for the generic drivers (one thread per party; `threads` is ignored).
impl<W: BackendWord> Protocol for Duoram2Of<W> {
    const NAME: &'static str = W::NAME;

    const PARTIES: usize = 2;

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        Duoram2Of::setup(session, n, seed).map_err(Into::into)
    }

    /// An access's material is dominated by the UPDATE's `2N` field elements: keep it under
    /// 2^24 elements (256 MiB).
    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        n.next_power_of_two()
            .saturating_mul(2)
            .saturating_mul(accesses)
            <= 1 << 24
    }
}
