//! [`Ram`]: what a RAM program sees — secret words with local linear arithmetic, batched
//! interactive operations (products, selects, comparisons) and a memory of [`OArray`]s indexed
//! by secrets. A program is written once against it and runs on the plaintext machine
//! [`PlainRam`] (the oracle and the cost counter) and on every secure [`Machine`] backend.
//!
//! The two implementations run the same public sequence of operations: the same accesses in
//! the same order, the same comparisons with the same bit lengths. [`PlainRam`] also checks
//! what the secure machine cannot: that every comparison operand fits its bit length and every
//! address lies in the memory, so a program bug shows up as an error in a plaintext run.

use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use doram_field::Fp;
use doram_mpc::{Additive, Secret, SecretBit};
use doram_oram::{InstructionShare, PlainMemory, SharedMemory};

use crate::error::ProgramError;
use crate::machine::{Backend, Machine, OArray};

/// A program's machine: see the [module documentation](self).
///
/// Interactive operations take batches; independent operations belong in one batch, which
/// costs the rounds of one operation on a secure machine.
pub trait Ram {
    /// A secret word: an element of F_p, shared on a secure machine.
    type Word: Copy
        + Debug
        + Add<Output = Self::Word>
        + Sub<Output = Self::Word>
        + Neg<Output = Self::Word>
        + Mul<Fp, Output = Self::Word>
        + AddAssign
        + SubAssign
        + Sum;
    /// A secret bit (a word known to be 0 or 1).
    type Bit: Copy + Debug;

    /// The public constant `x` as a word.
    fn constant(&self, x: Fp) -> Self::Word;

    /// The public integer `x` as a word.
    fn int(&self, x: u64) -> Self::Word {
        self.constant(Fp::from_u64(x))
    }

    /// The public bit `b`.
    fn public_bit(&self, b: bool) -> Self::Bit;

    /// A bit as a word (0 or 1).
    fn value(b: Self::Bit) -> Self::Word;

    /// A word the program knows to be 0 or 1, as a bit (nothing checks it on a secure machine).
    fn assume_bit(x: Self::Word) -> Self::Bit;

    /// ¬b (local).
    fn not(&self, b: Self::Bit) -> Self::Bit {
        Self::assume_bit(self.int(1) - Self::value(b))
    }

    /// x·y for each pair (one round on a secure machine).
    ///
    /// # Errors
    /// The engine's errors.
    fn mul_many(
        &mut self,
        pairs: &[(Self::Word, Self::Word)],
    ) -> Result<Vec<Self::Word>, ProgramError>;

    /// The inner product of each pair of equally long vectors (one round, as one product).
    ///
    /// # Errors
    /// Vectors of different lengths; the engine's errors.
    #[allow(clippy::type_complexity)]
    fn dot_many(
        &mut self,
        pairs: &[(&[Self::Word], &[Self::Word])],
    ) -> Result<Vec<Self::Word>, ProgramError>;

    /// `b ? x : y` for each triple (one round).
    ///
    /// # Errors
    /// The engine's errors.
    fn select_many(
        &mut self,
        triples: &[(Self::Bit, Self::Word, Self::Word)],
    ) -> Result<Vec<Self::Word>, ProgramError>;

    /// a ∧ b for each pair (one round).
    ///
    /// # Errors
    /// The engine's errors.
    fn and_many(
        &mut self,
        pairs: &[(Self::Bit, Self::Bit)],
    ) -> Result<Vec<Self::Bit>, ProgramError>;

    /// a ∨ b for each pair (one round).
    ///
    /// # Errors
    /// The engine's errors.
    fn or_many(&mut self, pairs: &[(Self::Bit, Self::Bit)])
    -> Result<Vec<Self::Bit>, ProgramError>;

    /// \[a < b\] for each pair of `k`-bit integers.
    ///
    /// # Errors
    /// [`PlainRam`]: an operand of `k` bits or more; the engine's errors.
    fn lt_many(
        &mut self,
        pairs: &[(Self::Word, Self::Word)],
        k: u32,
    ) -> Result<Vec<Self::Bit>, ProgramError>;

    /// \[a = b\] for each pair of `k`-bit integers.
    ///
    /// # Errors
    /// As [`lt_many`](Ram::lt_many).
    fn eq_many(
        &mut self,
        pairs: &[(Self::Word, Self::Word)],
        k: u32,
    ) -> Result<Vec<Self::Bit>, ProgramError>;

    /// (\[a < b\], \[a = b\]) for each pair of `k`-bit integers, for the cost of one comparison.
    ///
    /// # Errors
    /// As [`lt_many`](Ram::lt_many).
    #[allow(clippy::type_complexity)]
    fn cmp_many(
        &mut self,
        pairs: &[(Self::Word, Self::Word)],
        k: u32,
    ) -> Result<Vec<(Self::Bit, Self::Bit)>, ProgramError>;

    /// The one-hot vector (\[x = j\])_{j < len} of each `k`-bit integer x, for reading and
    /// updating a vector at a secret index by inner products and products: ⌈k/4⌉ units of
    /// pool bits per value and the rounds of
    /// [`Online::onehot_many`](doram_mpc::Online::onehot_many).
    ///
    /// # Errors
    /// [`PlainRam`]: an x of `k` bits or more, `len` outside 1..=2^k; the engine's errors.
    fn onehot_many(
        &mut self,
        xs: &[Self::Word],
        k: u32,
        len: usize,
    ) -> Result<Vec<Vec<Self::Word>>, ProgramError>;

    /// A secret permutation of `0..n` for [`shuffle`](Ram::shuffle).
    type Shuffle;

    /// A fresh secret uniform permutation π of `0..n` that no party knows
    /// ([`Online::new_shuffle`](doram_mpc::Online::new_shuffle); no communication).
    ///
    /// # Errors
    /// The engine's errors.
    fn new_shuffle(&mut self, n: usize) -> Result<Self::Shuffle, ProgramError>;

    /// Moves each vector by π (out\[π(i)\] = v\[i\]) and each row-major n × n matrix by π on
    /// rows and columns (π⁻¹ with `inverse`); three rounds on a secure machine
    /// ([`Online::shuffle`](doram_mpc::Online::shuffle)).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] or the engine's errors if a vector's length is not n or a
    /// matrix's not n².
    #[allow(clippy::type_complexity)]
    fn shuffle(
        &mut self,
        sh: &Self::Shuffle,
        vectors: Vec<Vec<Self::Word>>,
        matrices: Vec<Vec<Self::Word>>,
        inverse: bool,
    ) -> Result<(Vec<Vec<Self::Word>>, Vec<Vec<Self::Word>>), ProgramError>;

    /// Opens words to every party (one round). Only for values the program's design makes
    /// public, such as the position under a secret permutation of an item it visits once.
    ///
    /// # Errors
    /// The engine's errors.
    fn reveal_many(&mut self, xs: &[Self::Word]) -> Result<Vec<Fp>, ProgramError>;

    /// Whether the memory hides the type of each access (reads from writes).
    fn hides_op_type(&self) -> bool;

    /// Makes `bits` pool bits for later one-hot vectors, for a program that preprocesses in
    /// chunks rather than all at once (the count must depend on public sizes only). No-op on
    /// the plaintext machine.
    ///
    /// # Errors
    /// The engine's errors.
    fn preprocess_bits(&mut self, bits: usize) -> Result<(), ProgramError> {
        let _ = bits;
        Ok(())
    }

    /// Reads the words at the secret addresses of the memory, one access each.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] before boot; the memory's errors.
    fn read_addrs(&mut self, addrs: &[Self::Word]) -> Result<Vec<Self::Word>, ProgramError>;

    /// Writes `val` at the secret address `addr`: one access.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn write_addr(&mut self, addr: Self::Word, val: Self::Word) -> Result<(), ProgramError>;

    /// `if cond { M[addr] := val }` with the same public access sequence whatever `cond` is:
    /// one access with a secret op where the memory hides the op type; otherwise a read (unless
    /// the program passes the current value as `old`), a select and a write.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn cond_write_addr(
        &mut self,
        addr: Self::Word,
        cond: Self::Bit,
        val: Self::Word,
        old: Option<Self::Word>,
    ) -> Result<(), ProgramError>;

    /// The current contents of whole arrays (Get Memory).
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn snapshot(&mut self, arrays: &[OArray]) -> Result<Vec<Vec<Self::Word>>, ProgramError>;

    /// The secret address of `a[idx]` (local).
    fn addr(&self, a: OArray, idx: Self::Word) -> Self::Word {
        idx + self.int(a.base() as u64)
    }

    /// Reads the word at one secret address.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn read_addr(&mut self, addr: Self::Word) -> Result<Self::Word, ProgramError> {
        Ok(self.read_addrs(&[addr])?[0])
    }

    /// Reads `a[idx]` for a secret `idx < a.len()`: one access.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn read(&mut self, a: OArray, idx: Self::Word) -> Result<Self::Word, ProgramError> {
        let addr = self.addr(a, idx);
        self.read_addr(addr)
    }

    /// Reads several elements, one access each.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn read_many(
        &mut self,
        reads: &[(OArray, Self::Word)],
    ) -> Result<Vec<Self::Word>, ProgramError> {
        let addrs: Vec<Self::Word> = reads.iter().map(|&(a, i)| self.addr(a, i)).collect();
        self.read_addrs(&addrs)
    }

    /// Reads `a[i]` for a public `i` (still a full access: the memory lives in the DORAM).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if `i ≥ a.len()`; as [`read_addrs`](Ram::read_addrs).
    fn read_public(&mut self, a: OArray, i: usize) -> Result<Self::Word, ProgramError> {
        if i >= a.len() {
            return Err(ProgramError::Misuse("public index out of range"));
        }
        let addr = self.int((a.base() + i) as u64);
        self.read_addr(addr)
    }

    /// `a[idx] := val` for a secret `idx < a.len()`: one access.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn write(&mut self, a: OArray, idx: Self::Word, val: Self::Word) -> Result<(), ProgramError> {
        let addr = self.addr(a, idx);
        self.write_addr(addr, val)
    }

    /// `if cond { a[idx] := val }` (see [`cond_write_addr`](Ram::cond_write_addr)).
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn cond_write(
        &mut self,
        a: OArray,
        idx: Self::Word,
        cond: Self::Bit,
        val: Self::Word,
    ) -> Result<(), ProgramError> {
        let addr = self.addr(a, idx);
        self.cond_write_addr(addr, cond, val, None)
    }

    /// [`cond_write`](Ram::cond_write) when the program already holds the current value `old`
    /// of `a[idx]`: where the op type is revealed, the read is skipped.
    ///
    /// # Errors
    /// As [`read_addrs`](Ram::read_addrs).
    fn cond_write_known(
        &mut self,
        a: OArray,
        idx: Self::Word,
        cond: Self::Bit,
        val: Self::Word,
        old: Self::Word,
    ) -> Result<(), ProgramError> {
        let addr = self.addr(a, idx);
        self.cond_write_addr(addr, cond, val, Some(old))
    }
}

impl<D: Backend> Ram for Machine<D> {
    type Word = Secret;
    type Bit = SecretBit;

    fn constant(&self, x: Fp) -> Secret {
        Secret::public(x, self.me())
    }

    fn public_bit(&self, b: bool) -> SecretBit {
        SecretBit::public(b, self.me())
    }

    fn value(b: SecretBit) -> Secret {
        b.value()
    }

    fn assume_bit(x: Secret) -> SecretBit {
        SecretBit::assume_bit(x)
    }

    fn mul_many(&mut self, pairs: &[(Secret, Secret)]) -> Result<Vec<Secret>, ProgramError> {
        self.cpu(|on| on.mul_many(pairs))
    }

    fn dot_many(&mut self, pairs: &[(&[Secret], &[Secret])]) -> Result<Vec<Secret>, ProgramError> {
        self.cpu(|on| on.dot_many(pairs))
    }

    fn select_many(
        &mut self,
        triples: &[(SecretBit, Secret, Secret)],
    ) -> Result<Vec<Secret>, ProgramError> {
        self.cpu(|on| on.select_many(triples))
    }

    fn and_many(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
    ) -> Result<Vec<SecretBit>, ProgramError> {
        self.cpu(|on| on.and_many(pairs))
    }

    fn or_many(
        &mut self,
        pairs: &[(SecretBit, SecretBit)],
    ) -> Result<Vec<SecretBit>, ProgramError> {
        self.cpu(|on| on.or_many(pairs))
    }

    fn lt_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<SecretBit>, ProgramError> {
        self.cpu(|on| on.lt_many(pairs, k))
    }

    fn eq_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<SecretBit>, ProgramError> {
        self.cpu(|on| on.eq_many(pairs, k))
    }

    fn cmp_many(
        &mut self,
        pairs: &[(Secret, Secret)],
        k: u32,
    ) -> Result<Vec<(SecretBit, SecretBit)>, ProgramError> {
        let c = self.cpu(|on| on.cmp_many(pairs, k))?;
        Ok(c.into_iter().map(|c| (c.lt, c.eq)).collect())
    }

    fn onehot_many(
        &mut self,
        xs: &[Secret],
        k: u32,
        len: usize,
    ) -> Result<Vec<Vec<Secret>>, ProgramError> {
        self.cpu(|on| on.onehot_many(xs, k, len))
    }

    type Shuffle = doram_mpc::Shuffle;

    fn new_shuffle(&mut self, n: usize) -> Result<doram_mpc::Shuffle, ProgramError> {
        self.cpu(|on| on.new_shuffle(n))
    }

    fn shuffle(
        &mut self,
        sh: &doram_mpc::Shuffle,
        vectors: Vec<Vec<Secret>>,
        matrices: Vec<Vec<Secret>>,
        inverse: bool,
    ) -> Result<(Vec<Vec<Secret>>, Vec<Vec<Secret>>), ProgramError> {
        self.cpu(|on| on.shuffle(sh, vectors, matrices, inverse))
    }

    fn reveal_many(&mut self, xs: &[Secret]) -> Result<Vec<Fp>, ProgramError> {
        self.cpu(|on| on.open_many(xs))
    }

    fn hides_op_type(&self) -> bool {
        Machine::<D>::hides_op_type()
    }

    fn preprocess_bits(&mut self, bits: usize) -> Result<(), ProgramError> {
        Machine::preprocess_bits(self, bits)
    }

    fn read_addrs(&mut self, addrs: &[Secret]) -> Result<Vec<Secret>, ProgramError> {
        Machine::read_addrs(self, addrs)
    }

    fn write_addr(&mut self, addr: Secret, val: Secret) -> Result<(), ProgramError> {
        Machine::write_addr(self, addr, val)
    }

    fn cond_write_addr(
        &mut self,
        addr: Secret,
        cond: SecretBit,
        val: Secret,
        old: Option<Secret>,
    ) -> Result<(), ProgramError> {
        Machine::cond_write_addr(self, addr, cond, val, old)
    }

    fn snapshot(&mut self, arrays: &[OArray]) -> Result<Vec<Vec<Secret>>, ProgramError> {
        Machine::snapshot(self, arrays)
    }
}

/// What a [`PlainRam`] has done: the counts a program's [`Plan`](crate::Plan) predicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlainCounts {
    /// Memory accesses (a conditional write on a memory that reveals the op type counts its
    /// read, if any, and its write).
    pub accesses: usize,
    /// Comparisons (`lt`, `eq` or `cmp`, per pair) and one-hot conversions (per value).
    pub comparisons: usize,
}

/// The plaintext machine: words are F_p values, bits are bools, and the memory is a
/// [`PlainMemory`] driven through [`SharedMemory`] as a one-party sharing. It runs a program
/// exactly as a secure machine would — the same accesses, including the read-select-write of a
/// conditional write when `hides_op_type` is false — and counts them.
#[derive(Clone, Debug)]
pub struct PlainRam {
    cells: Vec<Fp>,
    memory: Option<PlainMemory<Fp>>,
    hides_op_type: bool,
    counts: PlainCounts,
    shuffles: u64,
}

impl PlainRam {
    /// An empty machine; `hides_op_type` chooses which access sequence conditional writes
    /// follow (that of Ramen and the linear scan, or that of Duoram).
    pub fn new(hides_op_type: bool) -> PlainRam {
        PlainRam {
            cells: Vec::new(),
            memory: None,
            hides_op_type,
            counts: PlainCounts::default(),
            shuffles: 0,
        }
    }

    /// A new array holding `values`.
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] after [`boot`](PlainRam::boot).
    pub fn alloc(&mut self, values: impl IntoIterator<Item = Fp>) -> Result<OArray, ProgramError> {
        if self.memory.is_some() {
            return Err(ProgramError::Misuse("arrays must be allocated before boot"));
        }
        let base = self.cells.len();
        self.cells.extend(values);
        Ok(OArray::new(base, self.cells.len() - base))
    }

    /// A new array holding the integers `values`.
    ///
    /// # Errors
    /// As [`alloc`](PlainRam::alloc).
    pub fn alloc_ints(&mut self, values: &[u64]) -> Result<OArray, ProgramError> {
        self.alloc(values.iter().map(|&v| Fp::from_u64(v)))
    }

    /// Creates the memory over every array allocated so far (at least one word).
    ///
    /// # Errors
    /// [`ProgramError::Misuse`] if already booted.
    pub fn boot(&mut self) -> Result<(), ProgramError> {
        if self.memory.is_some() {
            return Err(ProgramError::Misuse("boot runs once"));
        }
        let mut cells = std::mem::take(&mut self.cells);
        if cells.is_empty() {
            cells.push(Fp::ZERO);
        }
        self.memory = Some(PlainMemory::new(cells));
        Ok(())
    }

    /// The counts so far.
    pub fn counts(&self) -> PlainCounts {
        self.counts
    }

    fn memory(&mut self) -> Result<&mut PlainMemory<Fp>, ProgramError> {
        self.memory
            .as_mut()
            .ok_or(ProgramError::Misuse("the memory is not booted"))
    }

    fn fits(x: Fp, k: u32) -> Result<u128, ProgramError> {
        let v = x.to_u128();
        if k < 128 && v >> k != 0 {
            return Err(ProgramError::Misuse(
                "a comparison operand exceeds its bit length",
            ));
        }
        Ok(v)
    }

    fn compare(&mut self, pairs: &[(Fp, Fp)], k: u32) -> Result<Vec<(bool, bool)>, ProgramError> {
        if k == 0 || k > doram_mpc::engine::MAX_BITS {
            return Err(ProgramError::Misuse("comparison bit length out of range"));
        }
        self.counts.comparisons += pairs.len();
        pairs
            .iter()
            .map(|&(a, b)| Ok((Self::fits(a, k)? < Self::fits(b, k)?, a == b)))
            .collect()
    }
}

impl Ram for PlainRam {
    type Word = Fp;
    type Bit = bool;

    fn constant(&self, x: Fp) -> Fp {
        x
    }

    fn public_bit(&self, b: bool) -> bool {
        b
    }

    fn value(b: bool) -> Fp {
        Fp::from_u64(u64::from(b))
    }

    /// Any non-zero word counts as 1 (a program that passes a non-bit here has a bug the
    /// secure machine would turn into wrong results; tests compare the outputs).
    fn assume_bit(x: Fp) -> bool {
        x != Fp::ZERO
    }

    fn mul_many(&mut self, pairs: &[(Fp, Fp)]) -> Result<Vec<Fp>, ProgramError> {
        Ok(pairs.iter().map(|&(x, y)| x * y).collect())
    }

    fn dot_many(&mut self, pairs: &[(&[Fp], &[Fp])]) -> Result<Vec<Fp>, ProgramError> {
        pairs
            .iter()
            .map(|(x, y)| {
                if x.len() != y.len() {
                    return Err(ProgramError::Misuse(
                        "inner product of vectors of different lengths",
                    ));
                }
                Ok(x.iter().zip(y.iter()).map(|(&a, &b)| a * b).sum())
            })
            .collect()
    }

    fn select_many(&mut self, triples: &[(bool, Fp, Fp)]) -> Result<Vec<Fp>, ProgramError> {
        Ok(triples
            .iter()
            .map(|&(b, x, y)| if b { x } else { y })
            .collect())
    }

    fn and_many(&mut self, pairs: &[(bool, bool)]) -> Result<Vec<bool>, ProgramError> {
        Ok(pairs.iter().map(|&(a, b)| a && b).collect())
    }

    fn or_many(&mut self, pairs: &[(bool, bool)]) -> Result<Vec<bool>, ProgramError> {
        Ok(pairs.iter().map(|&(a, b)| a || b).collect())
    }

    fn lt_many(&mut self, pairs: &[(Fp, Fp)], k: u32) -> Result<Vec<bool>, ProgramError> {
        Ok(self.compare(pairs, k)?.into_iter().map(|c| c.0).collect())
    }

    fn eq_many(&mut self, pairs: &[(Fp, Fp)], k: u32) -> Result<Vec<bool>, ProgramError> {
        Ok(self.compare(pairs, k)?.into_iter().map(|c| c.1).collect())
    }

    fn cmp_many(&mut self, pairs: &[(Fp, Fp)], k: u32) -> Result<Vec<(bool, bool)>, ProgramError> {
        self.compare(pairs, k)
    }

    fn onehot_many(&mut self, xs: &[Fp], k: u32, len: usize) -> Result<Vec<Vec<Fp>>, ProgramError> {
        if k == 0 || k > doram_mpc::engine::MAX_BITS || len == 0 || len as u128 > 1u128 << k {
            return Err(ProgramError::Misuse(
                "one-hot bit length or length out of range",
            ));
        }
        self.counts.comparisons += xs.len();
        xs.iter()
            .map(|&x| {
                let v = Self::fits(x, k)?;
                Ok((0..len as u128)
                    .map(|j| Fp::from_u64(u64::from(v == j)))
                    .collect())
            })
            .collect()
    }

    /// The plaintext machine's permutations are fixed pseudo-random ones (the n-th call draws
    /// from a PRG keyed by n): programs must not depend on which permutation they get.
    type Shuffle = Vec<u32>;

    fn new_shuffle(&mut self, n: usize) -> Result<Vec<u32>, ProgramError> {
        let n32 = u32::try_from(n).map_err(|_| ProgramError::Misuse("shuffle of 2^32 or more"))?;
        self.shuffles += 1;
        let mut seed = [0u8; 16];
        seed[..8].copy_from_slice(&self.shuffles.to_le_bytes());
        let mut prg = doram_prim::AesPrg::new(doram_core::Seed(seed));
        let mut perm: Vec<u32> = (0..n32).collect();
        for i in (1..n).rev() {
            let j = (rand_core::RngCore::next_u64(&mut prg) % (i as u64 + 1)) as usize;
            perm.swap(i, j);
        }
        Ok(perm)
    }

    fn shuffle(
        &mut self,
        sh: &Vec<u32>,
        vectors: Vec<Vec<Fp>>,
        matrices: Vec<Vec<Fp>>,
        inverse: bool,
    ) -> Result<(Vec<Vec<Fp>>, Vec<Vec<Fp>>), ProgramError> {
        let n = sh.len();
        if vectors.iter().any(|v| v.len() != n) || matrices.iter().any(|m| m.len() != n * n) {
            return Err(ProgramError::Misuse(
                "shuffled vectors need n values, matrices n²",
            ));
        }
        // to[i] = where item i goes.
        let to: Vec<usize> = if inverse {
            let mut inv = vec![0usize; n];
            for (i, &p) in sh.iter().enumerate() {
                inv[p as usize] = i;
            }
            inv
        } else {
            sh.iter().map(|&p| p as usize).collect()
        };
        let vs = vectors
            .iter()
            .map(|v| {
                let mut out = vec![Fp::ZERO; n];
                for (i, &x) in v.iter().enumerate() {
                    out[to[i]] = x;
                }
                out
            })
            .collect();
        let ms = matrices
            .iter()
            .map(|m| {
                let mut out = vec![Fp::ZERO; n * n];
                for i in 0..n {
                    for j in 0..n {
                        out[to[i] * n + to[j]] = m[i * n + j];
                    }
                }
                out
            })
            .collect();
        Ok((vs, ms))
    }

    fn reveal_many(&mut self, xs: &[Fp]) -> Result<Vec<Fp>, ProgramError> {
        Ok(xs.to_vec())
    }

    fn hides_op_type(&self) -> bool {
        self.hides_op_type
    }

    fn read_addrs(&mut self, addrs: &[Fp]) -> Result<Vec<Fp>, ProgramError> {
        let shares: Vec<Additive<Fp>> = Additive::from_shares(addrs.to_vec());
        let out = self.memory()?.read_many(&shares)?;
        self.counts.accesses += addrs.len();
        Ok(Additive::shares(&out))
    }

    fn write_addr(&mut self, addr: Fp, val: Fp) -> Result<(), ProgramError> {
        let m = self.memory()?;
        SharedMemory::write(m, Additive::from_share(addr), Additive::from_share(val))?;
        self.counts.accesses += 1;
        Ok(())
    }

    fn cond_write_addr(
        &mut self,
        addr: Fp,
        cond: bool,
        val: Fp,
        old: Option<Fp>,
    ) -> Result<(), ProgramError> {
        if self.hides_op_type {
            let ins = InstructionShare::hidden(
                Additive::from_share(Self::value(cond)),
                Additive::from_share(addr),
                Additive::from_share(val),
            );
            SharedMemory::access(self.memory()?, &ins)?;
            self.counts.accesses += 1;
            return Ok(());
        }
        let old = match old {
            Some(o) => o,
            None => self.read_addr(addr)?,
        };
        let new = self.select_many(&[(cond, val, old)])?[0];
        self.write_addr(addr, new)
    }

    fn snapshot(&mut self, arrays: &[OArray]) -> Result<Vec<Vec<Fp>>, ProgramError> {
        let all = self.memory()?.as_slice();
        arrays
            .iter()
            .map(|a| {
                all.get(a.base()..a.base() + a.len())
                    .map(<[Fp]>::to_vec)
                    .ok_or(ProgramError::Misuse("array outside the memory"))
            })
            .collect()
    }
}
