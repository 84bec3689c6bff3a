//! Instructions: the plaintext [`Instruction`] the oracle executes, and one party's
//! [`InstructionShare`] a distributed ORAM executes; dealer-side helpers that share them.
//!
//! An instruction is the triple (op, addr, val) of Ramen Fig. 13 (F_DORAM, Access). Addresses and
//! values are elements of the protocol's word ring `W` (addresses are the integers `0..n`, i.e.
//! `W::from_u64(addr)`). The operation is either secret-shared as a bit (0 = read, 1 = write),
//! for protocols that hide it, or public.

use doram_core::PartyId;
use doram_field::{Group, Ring};
use doram_mpc::{Additive, deal_additive};
use rand_core::{CryptoRng, RngCore};

/// The type of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Return the value at the address; leave the memory unchanged.
    Read,
    /// Return the value at the address, then overwrite it with the instruction's value.
    Write,
}

impl Op {
    /// The operation as a ring element: 0 for [`Op::Read`], 1 for [`Op::Write`] (the encoding
    /// of [`OpShare::Hidden`]).
    pub fn bit<W: Ring>(self) -> W {
        match self {
            Op::Read => W::ZERO,
            Op::Write => W::ONE,
        }
    }
}

/// Whether a protocol hides the type of each access from the parties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpVisibility {
    /// Reads and writes look the same to every party (Ramen, [`LinearScanOram`]). Such a
    /// protocol accepts both [`OpShare::Hidden`] and [`OpShare::Public`]; a public op is treated
    /// as a constant sharing and costs the same.
    ///
    /// [`LinearScanOram`]: crate::LinearScanOram
    Hidden,
    /// The parties learn whether each access is a read or a write (Duoram: "the requirement that
    /// reads and writes be indistinguishable from each other is relaxed"). Such a protocol only
    /// accepts [`OpShare::Public`] and rejects [`OpShare::Hidden`] with
    /// [`OramError::HiddenOpUnsupported`](crate::OramError::HiddenOpUnsupported), before
    /// anything is sent — it never opens a secret op bit behind the caller's back.
    Public,
}

/// One party's view of the operation of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpShare<W> {
    /// An additive share of the op bit (0 = read, 1 = write). Only protocols with
    /// [`OpVisibility::Hidden`] accept it. A shared value other than 0 or 1 is undefined
    /// behaviour of the protocol (an unspecified value is written), never an error: it cannot be
    /// detected on shares.
    Hidden(Additive<W>),
    /// A public operation, known to (and passed identically by) all three parties.
    Public(Op),
}

impl<W: Ring> OpShare<W> {
    /// This party's additive share of the op bit: the share itself for [`OpShare::Hidden`], the
    /// constant sharing of [`Op::bit`] for [`OpShare::Public`].
    pub fn to_additive(self, me: PartyId) -> Additive<W> {
        match self {
            OpShare::Hidden(s) => s,
            OpShare::Public(op) => Additive::public(op.bit(), me),
        }
    }

    /// The public operation, if it is public.
    pub fn public(self) -> Option<Op> {
        match self {
            OpShare::Public(op) => Some(op),
            OpShare::Hidden(_) => None,
        }
    }
}

/// One party's share of an instruction (op, addr, val) (Ramen Fig. 13, Access): the op as an
/// [`OpShare`], the address and the value as additive shares in the word ring.
///
/// `Debug` prints no share contents (see [`Additive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstructionShare<W> {
    /// Read or write, shared or public.
    pub op: OpShare<W>,
    /// The address, an integer in `0..n` embedded in `W`.
    pub addr: Additive<W>,
    /// The value to write; ignored by reads (any share may be passed).
    pub value: Additive<W>,
}

impl<W: Ring> InstructionShare<W> {
    /// A read of `addr` with a public op (the value share is 0).
    pub fn read(addr: Additive<W>) -> Self {
        InstructionShare {
            op: OpShare::Public(Op::Read),
            addr,
            value: Additive::ZERO,
        }
    }

    /// A write of `value` to `addr` with a public op.
    pub fn write(addr: Additive<W>, value: Additive<W>) -> Self {
        InstructionShare {
            op: OpShare::Public(Op::Write),
            addr,
            value,
        }
    }

    /// An instruction whose op is a shared bit (0 = read, 1 = write).
    pub fn hidden(op: Additive<W>, addr: Additive<W>, value: Additive<W>) -> Self {
        InstructionShare {
            op: OpShare::Hidden(op),
            addr,
            value,
        }
    }
}

/// A plaintext instruction, as the oracle [`PlainMemory`](crate::PlainMemory) executes it and
/// as tests generate them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction<W> {
    /// Read or write.
    pub op: Op,
    /// The address.
    pub addr: u64,
    /// The value written (ignored by reads).
    pub value: W,
}

impl<W: Group> Instruction<W> {
    /// A read of `addr` (value 0).
    pub fn read(addr: u64) -> Self {
        Instruction {
            op: Op::Read,
            addr,
            value: W::ZERO,
        }
    }

    /// A write of `value` to `addr`.
    pub fn write(addr: u64, value: W) -> Self {
        Instruction {
            op: Op::Write,
            addr,
            value,
        }
    }
}

/// Dealer-side: fresh shares of `ins` for the three parties (element `i` for `P_i`), with the op
/// secret-shared ([`OpVisibility::Hidden`]) or public ([`OpVisibility::Public`]).
///
/// For tests, benchmarks and trusted-dealer inputs; inside a protocol, instructions come out of
/// the program's own secure computation.
pub fn deal_instruction<W: Ring, R: RngCore + CryptoRng + ?Sized>(
    ins: &Instruction<W>,
    visibility: OpVisibility,
    rng: &mut R,
) -> [InstructionShare<W>; 3] {
    let op: [OpShare<W>; 3] = match visibility {
        OpVisibility::Hidden => deal_additive(ins.op.bit(), rng).map(OpShare::Hidden),
        OpVisibility::Public => [OpShare::Public(ins.op); 3],
    };
    let addr = deal_additive(W::from_u64(ins.addr), rng);
    let value = deal_additive(ins.value, rng);
    std::array::from_fn(|i| InstructionShare {
        op: op[i],
        addr: addr[i],
        value: value[i],
    })
}

/// The sum of two parties' instruction shares (op shares added when hidden; a public op is
/// kept): how a dealer's three-party sharing becomes a two-party one, `P0` taking
/// `x₀ + x₂`.
pub fn merge_instruction_shares<W: Ring>(
    a: InstructionShare<W>,
    b: InstructionShare<W>,
) -> InstructionShare<W> {
    InstructionShare {
        op: match (a.op, b.op) {
            (OpShare::Hidden(x), OpShare::Hidden(y)) => OpShare::Hidden(x + y),
            (op, _) => op,
        },
        addr: a.addr + b.addr,
        value: a.value + b.value,
    }
}

/// Dealer-side: fresh additive shares of a whole memory, one vector per party.
pub fn deal_memory<W: Group, R: RngCore + CryptoRng + ?Sized>(
    memory: &[W],
    rng: &mut R,
) -> [Vec<Additive<W>>; 3] {
    let mut out: [Vec<Additive<W>>; 3] = Default::default();
    for &x in memory {
        for (v, s) in out.iter_mut().zip(deal_additive(x, rng)) {
            v.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_core::Seed;
    use doram_field::{Fp, Z64};
    use doram_mpc::reconstruct_additive;
    use doram_prim::AesPrg;

    const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

    #[test]
    fn dealt_instructions_reconstruct() {
        let mut rng = AesPrg::new(Seed([3; 16]));
        let ins = Instruction::write(5, Fp::from_u64(77));
        let s = deal_instruction(&ins, OpVisibility::Hidden, &mut rng);
        let op: [Additive<Fp>; 3] = std::array::from_fn(|i| s[i].op.to_additive(ALL[i]));
        assert_eq!(reconstruct_additive(&op), Fp::ONE);
        assert_eq!(
            reconstruct_additive(&[s[0].addr, s[1].addr, s[2].addr]),
            Fp::from_u64(5)
        );
        assert_eq!(
            reconstruct_additive(&[s[0].value, s[1].value, s[2].value]),
            Fp::from_u64(77)
        );
        let p = deal_instruction(&Instruction::<Z64>::read(3), OpVisibility::Public, &mut rng);
        assert!(p.iter().all(|s| s.op == OpShare::Public(Op::Read)));
        let op: [Additive<Z64>; 3] = std::array::from_fn(|i| p[i].op.to_additive(ALL[i]));
        assert_eq!(reconstruct_additive(&op), Z64::ZERO);
    }

    #[test]
    fn dealt_memory_reconstructs() {
        let mut rng = AesPrg::new(Seed([4; 16]));
        let m: Vec<Z64> = (0..9).map(|i| Z64(i * 1000 + 7)).collect();
        let [a, b, c] = deal_memory(&m, &mut rng);
        for i in 0..m.len() {
            assert_eq!(reconstruct_additive(&[a[i], b[i], c[i]]), m[i]);
        }
        assert_eq!(
            InstructionShare::<Fp>::read(Additive::ZERO).op.public(),
            Some(Op::Read)
        );
    }
}
