//! The plaintext oracle [`PlainMemory`] (F_DORAM of Ramen Fig. 13 without the sharing) and the
//! counting wrapper [`Counting`].

use doram_field::Group;
use doram_mpc::Additive;
use doram_net::Session;

use crate::error::OramError;
use crate::instruction::{Instruction, InstructionShare, Op, OpVisibility};
use crate::interface::{DistributedOram, SharedMemory};
use crate::word::IntegerWord;

/// A plaintext memory with the semantics of [`SharedMemory`]: an access returns the value at
/// the address before the access, and a write then overwrites it. The oracle every protocol is
/// tested against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainMemory<W> {
    words: Vec<W>,
}

impl<W: Group> PlainMemory<W> {
    /// A memory holding `words`.
    pub fn new(words: Vec<W>) -> Self {
        PlainMemory { words }
    }

    /// A memory of `n` zero words.
    pub fn zeroed(n: usize) -> Self {
        PlainMemory {
            words: vec![W::ZERO; n],
        }
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the memory has no words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn index(&self, addr: u64) -> Result<usize, OramError> {
        usize::try_from(addr)
            .ok()
            .filter(|&i| i < self.words.len())
            .ok_or(OramError::AddressOutOfRange {
                addr,
                len: self.words.len(),
            })
    }

    /// Ramen Fig. 13, Access: returns the value at `ins.addr` before the access; a write then
    /// stores `ins.value` there.
    ///
    /// # Errors
    /// [`OramError::AddressOutOfRange`] if the address is not below [`len`](Self::len) (the
    /// memory is then unchanged).
    pub fn access(&mut self, ins: &Instruction<W>) -> Result<W, OramError> {
        let i = self.index(ins.addr)?;
        let old = self.words[i];
        if ins.op == Op::Write {
            self.words[i] = ins.value;
        }
        Ok(old)
    }

    /// The value at `addr`.
    ///
    /// # Errors
    /// [`OramError::AddressOutOfRange`].
    pub fn read(&self, addr: u64) -> Result<W, OramError> {
        Ok(self.words[self.index(addr)?])
    }

    /// Stores `value` at `addr` and returns the old value.
    ///
    /// # Errors
    /// [`OramError::AddressOutOfRange`] (the memory is then unchanged).
    pub fn write(&mut self, addr: u64, value: W) -> Result<W, OramError> {
        self.access(&Instruction {
            op: Op::Write,
            addr,
            value,
        })
    }

    /// The words.
    pub fn as_slice(&self) -> &[W] {
        &self.words
    }

    /// The words, by value.
    pub fn into_vec(self) -> Vec<W> {
        self.words
    }
}

/// What a [`Counting`] wrapper has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessCounts {
    /// Accesses with a public [`Op::Read`].
    pub reads: u64,
    /// Accesses with a public [`Op::Write`].
    pub writes: u64,
    /// Accesses whose op was secret-shared (neither counted as a read nor as a write).
    pub hidden: u64,
    /// Calls of `update`.
    pub updates: u64,
    /// Calls of `init`.
    pub inits: u64,
    /// Calls of `memory` (Get Memory).
    pub memory_reads: u64,
    /// Accesses requested from `preprocess`, summed over calls.
    pub preprocessed: u64,
}

impl AccessCounts {
    /// All accesses: reads, writes and hidden ones.
    pub fn accesses(&self) -> u64 {
        self.reads + self.writes + self.hidden
    }

    fn count_op(&mut self, op: Option<Op>) {
        match op {
            Some(Op::Read) => self.reads += 1,
            Some(Op::Write) => self.writes += 1,
            None => self.hidden += 1,
        }
    }
}

/// A memory wrapper that counts calls, like an "informer" backend: wrap a [`PlainMemory`] to
/// count what a program does in the clear, or a [`DistributedOram`] to count what it does under
/// a protocol (it implements the trait itself, forwarding every call). Counting happens only
/// for calls that succeed.
#[derive(Debug)]
pub struct Counting<M> {
    inner: M,
    counts: AccessCounts,
}

impl<M> Counting<M> {
    /// Wraps `inner` with zero counts.
    pub fn new(inner: M) -> Self {
        Counting {
            inner,
            counts: AccessCounts::default(),
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> AccessCounts {
        self.counts
    }

    /// The wrapped memory.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped memory, mutably (calls made on it directly are not counted).
    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// The wrapped memory and the counts.
    pub fn into_parts(self) -> (M, AccessCounts) {
        (self.inner, self.counts)
    }
}

impl<W: Group> Counting<PlainMemory<W>> {
    /// [`PlainMemory::access`], counted.
    ///
    /// # Errors
    /// As [`PlainMemory::access`].
    pub fn access(&mut self, ins: &Instruction<W>) -> Result<W, OramError> {
        let v = self.inner.access(ins)?;
        self.counts.count_op(Some(ins.op));
        Ok(v)
    }
}

impl<M: SharedMemory> SharedMemory for Counting<M> {
    type Word = M::Word;
    const OP_VISIBILITY: OpVisibility = M::OP_VISIBILITY;

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn preprocess(&mut self, accesses: usize) -> Result<(), OramError> {
        self.inner.preprocess(accesses)?;
        self.counts.preprocessed += accesses as u64;
        Ok(())
    }

    fn preprocessed(&self) -> usize {
        self.inner.preprocessed()
    }

    fn init(&mut self, memory: &[Additive<Self::Word>]) -> Result<(), OramError> {
        self.inner.init(memory)?;
        self.counts.inits += 1;
        Ok(())
    }

    fn access(
        &mut self,
        ins: &InstructionShare<Self::Word>,
    ) -> Result<Additive<Self::Word>, OramError> {
        let v = self.inner.access(ins)?;
        self.counts.count_op(ins.op.public());
        Ok(v)
    }

    fn access_many(
        &mut self,
        ins: &[InstructionShare<Self::Word>],
    ) -> Result<Vec<Additive<Self::Word>>, OramError> {
        let v = self.inner.access_many(ins)?;
        for i in ins {
            self.counts.count_op(i.op.public());
        }
        Ok(v)
    }

    fn update(
        &mut self,
        addr: Additive<Self::Word>,
        delta: Additive<Self::Word>,
    ) -> Result<(), OramError> {
        self.inner.update(addr, delta)?;
        self.counts.updates += 1;
        Ok(())
    }

    fn memory(&mut self) -> Result<Vec<Additive<Self::Word>>, OramError> {
        let m = self.inner.memory()?;
        self.counts.memory_reads += 1;
        Ok(m)
    }
}

impl<M: DistributedOram> DistributedOram for Counting<M> {
    fn me(&self) -> doram_core::PartyId {
        self.inner.me()
    }

    fn max_message_bytes(&self) -> usize {
        self.inner.max_message_bytes()
    }

    fn session(&self) -> &Session {
        self.inner.session()
    }

    fn session_mut(&mut self) -> &mut Session {
        self.inner.session_mut()
    }
}

/// The plaintext oracle as the one-party case of a [`SharedMemory`]: a share is the value
/// itself. It needs no preprocessing ([`preprocessed`](SharedMemory::preprocessed) is
/// `usize::MAX`), [`init`](SharedMemory::init) overwrites every word, an address outside the
/// memory is reported ([`OramError::AddressOutOfRange`], the memory unchanged), and a hidden op
/// `b` applies `M[addr] := M[addr] + b·(val − M[addr])` — the formula the protocols that hide
/// the op evaluate — so a bit selects between reading and writing.
impl<W: IntegerWord> SharedMemory for PlainMemory<W> {
    type Word = W;
    const OP_VISIBILITY: OpVisibility = OpVisibility::Hidden;

    fn parties(&self) -> usize {
        1
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    fn preprocess(&mut self, _accesses: usize) -> Result<(), OramError> {
        Ok(())
    }

    fn preprocessed(&self) -> usize {
        usize::MAX
    }

    fn init(&mut self, memory: &[Additive<W>]) -> Result<(), OramError> {
        if memory.len() != self.words.len() {
            return Err(OramError::WrongMemoryLength {
                expected: self.words.len(),
                got: memory.len(),
            });
        }
        for (w, s) in self.words.iter_mut().zip(memory) {
            *w = s.share();
        }
        Ok(())
    }

    fn access(&mut self, ins: &InstructionShare<W>) -> Result<Additive<W>, OramError> {
        let raw = ins.addr.share().to_u128();
        let addr = u64::try_from(raw).unwrap_or(u64::MAX);
        let i = self.index(addr)?;
        let old = self.words[i];
        let b = ins.op.to_additive(doram_core::PartyId::P0).share();
        self.words[i] = old + b * (ins.value.share() - old);
        Ok(Additive::from_share(old))
    }

    fn memory(&mut self) -> Result<Vec<Additive<W>>, OramError> {
        Ok(Additive::from_shares(self.words.clone()))
    }

    fn update(&mut self, addr: Additive<W>, delta: Additive<W>) -> Result<(), OramError> {
        let raw = addr.share().to_u128();
        let i = self.index(u64::try_from(raw).unwrap_or(u64::MAX))?;
        self.words[i] += delta.share();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::{Fp, Z64};

    #[test]
    fn reads_return_the_value_and_change_nothing() {
        let mut m = PlainMemory::new(vec![Z64(10), Z64(11), Z64(12)]);
        for a in 0..3 {
            assert_eq!(m.access(&Instruction::read(a)).unwrap(), Z64(10 + a));
        }
        assert_eq!(m.as_slice(), &[Z64(10), Z64(11), Z64(12)]);
        assert_eq!(m.read(2).unwrap(), Z64(12));
    }

    #[test]
    fn writes_return_the_old_value_and_store_the_new_one() {
        let mut m = PlainMemory::<Fp>::zeroed(4);
        assert_eq!(
            m.access(&Instruction::write(1, Fp::from_u64(5))).unwrap(),
            Fp::ZERO
        );
        assert_eq!(m.write(1, Fp::from_u64(6)).unwrap(), Fp::from_u64(5));
        assert_eq!(m.access(&Instruction::read(1)).unwrap(), Fp::from_u64(6));
        // A read carries a value, which is ignored.
        let read_with_value = Instruction {
            op: Op::Read,
            addr: 1,
            value: Fp::from_u64(99),
        };
        assert_eq!(m.access(&read_with_value).unwrap(), Fp::from_u64(6));
        assert_eq!(
            m.into_vec(),
            vec![Fp::ZERO, Fp::from_u64(6), Fp::ZERO, Fp::ZERO]
        );
    }

    #[test]
    fn out_of_range_addresses_are_errors_and_change_nothing() {
        let mut m = PlainMemory::new(vec![Z64(1); 3]);
        for addr in [3, 4, u64::MAX] {
            assert!(matches!(
                m.access(&Instruction::write(addr, Z64(9))),
                Err(OramError::AddressOutOfRange { addr: a, len: 3 }) if a == addr
            ));
            assert!(m.read(addr).is_err());
        }
        assert_eq!(m.as_slice(), &[Z64(1); 3]);
        let mut empty = PlainMemory::<Z64>::zeroed(0);
        assert!(empty.is_empty());
        assert!(empty.access(&Instruction::read(0)).is_err());
    }

    #[test]
    fn counting_counts_successful_accesses() {
        let mut m = Counting::new(PlainMemory::<Z64>::zeroed(2));
        m.access(&Instruction::write(0, Z64(3))).unwrap();
        m.access(&Instruction::read(0)).unwrap();
        m.access(&Instruction::read(1)).unwrap();
        assert!(m.access(&Instruction::read(2)).is_err());
        let c = m.counts();
        assert_eq!((c.reads, c.writes, c.hidden, c.accesses()), (2, 1, 0, 3));
        let (inner, counts) = m.into_parts();
        assert_eq!(inner.as_slice(), &[Z64(3), Z64(0)]);
        assert_eq!(counts, c);
    }
}
