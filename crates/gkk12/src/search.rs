//! Binary search over the ORAM, the paper's benchmark program (GKK12 §5): the server's array
//! holds entries sorted by a 64-bit key (each entry's first 64 payload bits), the client has a
//! key, and the client learns how many entries are smaller than it (Python's
//! `bisect_left`) — nothing else; the server learns nothing.
//!
//! The search is branch-free: for b from the top bit of n down to 0, the candidate
//! `c = pos + 2^b − 1` is read if `c < n` (else address 0, read and ignored) and `pos` gains
//! 2^b if the entry there is smaller than the key. `pos`'s bits and the compare results stay in
//! wire labels; per step one ORAM read and two small circuits (the address: ≈ 2·⌈log₂ n⌉ AND
//! gates; the comparison: 65). ⌊log₂ n⌋ + 1 reads in all, whatever the key.

use doram_net::Session;
use doram_prim::aes::Block;
use doram_twopc::Circuit;
use doram_twopc::builder::{Bit, Builder, Word};
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};

use crate::driver::{AccessLabels, Client, Gkk12Error, Server};
use crate::params::Params;

/// Bits of a key.
pub const KEY_BITS: usize = 64;

/// The memory a search runs over: its entries, the bits of an address, the bits of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Entries (n).
    pub items: u64,
    /// Bits of an address the memory's reads take.
    pub address_bits: usize,
    /// Bits of an entry (d ≥ 64).
    pub payload_bits: usize,
}

impl From<&Params> for Shape {
    fn from(p: &Params) -> Shape {
        Shape {
            items: p.items(),
            address_bits: p.address_bits(),
            payload_bits: p.payload_bits(),
        }
    }
}

/// Steps of a search over `n` entries: the bits of n.
pub fn steps(n: u64) -> usize {
    (64 - n.leading_zeros()) as usize
}

/// `[GKK12 §5, binary search]` step `b`'s address circuit. Inputs: `pos`'s `k` bits (those at
/// and below `b` are zero). Outputs: the read address (`c` if `c < n`, else 0; the ORAM's
/// address bits) and `c < n`.
fn address_circuit(shape: &Shape, b: usize) -> Result<Circuit, Gkk12Error> {
    let n = shape.items;
    let k = steps(n);
    let mut g = Builder::new();
    let pos = g.garbler_bits(k);
    let c: Vec<Bit> = (0..k)
        .map(|j| match j.cmp(&b) {
            std::cmp::Ordering::Less => Bit::ONE,
            std::cmp::Ordering::Equal => Bit::ZERO,
            std::cmp::Ordering::Greater => pos[j],
        })
        .collect();
    let word: Word<64> = std::array::from_fn(|j| c.get(j).copied().unwrap_or(Bit::ZERO)).into();
    let inrange = g.lt(&word, &Word::constant(u128::from(n)));
    for &cj in c.iter().take(shape.address_bits) {
        let a = g.and(inrange, cj);
        g.output(a);
    }
    g.output(inrange);
    Ok(g.finish()?)
}

/// `[GKK12 §5, binary search]` the comparison circuit. Inputs: the entry's key, the search key,
/// `c < n`. Output: whether `pos` gains 2^b.
fn compare_circuit() -> Result<Circuit, Gkk12Error> {
    let mut g = Builder::new();
    let entry = g.garbler_word::<KEY_BITS>();
    let key = g.garbler_word::<KEY_BITS>();
    let inrange = g.garbler_bit();
    let lt = g.lt(&entry, &key);
    let gain = g.and(lt, inrange);
    g.output(gain);
    Ok(g.finish()?)
}

/// What a search needs of one party's memory: small circuits on labels (garbled by the
/// server, evaluated by the client), reads at an address held as labels, and the labels of
/// public bits. The ORAM's [`Server`] and [`Client`] are such parties, and so is the linear
/// scan (`crate::scan`), the paper's baseline.
pub trait SearchParty {
    /// Garbles or evaluates `c` on `inputs`; the outputs' labels.
    ///
    /// # Errors
    /// Transport and engine failures.
    fn circuit(
        &mut self,
        s: &mut Session,
        c: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error>;

    /// Reads the entry at `addr`; its labels.
    ///
    /// # Errors
    /// Transport and memory failures.
    fn read(&mut self, s: &mut Session, addr: Vec<Block>) -> Result<Vec<Block>, Gkk12Error>;

    /// The labels of public bits.
    fn public(&self, bits: &[bool]) -> Vec<Block>;
}

impl<S: CotExtSender> SearchParty for Server<S> {
    fn circuit(
        &mut self,
        s: &mut Session,
        c: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        self.garble(s, c, inputs)
    }

    fn read(&mut self, s: &mut Session, addr: Vec<Block>) -> Result<Vec<Block>, Gkk12Error> {
        let read = AccessLabels::read(addr, self.zero(), self.params().payload_bits());
        self.access(s, &read)
    }

    fn public(&self, bits: &[bool]) -> Vec<Block> {
        self.public_bits(bits)
    }
}

impl<R: CotExtReceiver> SearchParty for Client<R> {
    fn circuit(
        &mut self,
        s: &mut Session,
        c: &Circuit,
        inputs: &[Block],
    ) -> Result<Vec<Block>, Gkk12Error> {
        self.evaluate(s, c, inputs)
    }

    fn read(&mut self, s: &mut Session, addr: Vec<Block>) -> Result<Vec<Block>, Gkk12Error> {
        let read = AccessLabels::read(addr, self.zero(), self.params().payload_bits());
        self.access(s, &read)
    }

    fn public(&self, bits: &[bool]) -> Vec<Block> {
        self.public_bits(bits)
    }
}

/// The search on `key`'s labels ([`KEY_BITS`] of them) over a memory of `shape`: the labels
/// of the number of entries below the key, least significant first ([`steps`] of them).
///
/// # Errors
/// Transport and memory failures; [`Gkk12Error::Misuse`] for entries under 64 bits or a key
/// of the wrong length.
pub fn search<P: SearchParty>(
    p: &mut P,
    s: &mut Session,
    shape: &Shape,
    key: &[Block],
) -> Result<Vec<Block>, Gkk12Error> {
    if shape.payload_bits < KEY_BITS || key.len() != KEY_BITS {
        return Err(Gkk12Error::Misuse(
            "binary search needs entries of at least 64 bits and a 64-bit key",
        ));
    }
    let k = steps(shape.items);
    let compare = compare_circuit()?;
    let mut pos = p.public(&vec![false; k]);
    for b in (0..k).rev() {
        let out = p.circuit(s, &address_circuit(shape, b)?, &pos)?;
        let (addr, inrange) = out.split_at(shape.address_bits);
        let entry = p.read(s, addr.to_vec())?;
        let mut inputs = entry[..KEY_BITS].to_vec();
        inputs.extend_from_slice(key);
        inputs.extend_from_slice(inrange);
        pos[b] = p.circuit(s, &compare, &inputs)?[0];
    }
    Ok(pos)
}

/// The server's side of one search; the client learns the result.
///
/// # Errors
/// Transport and ORAM failures; [`Gkk12Error::Misuse`] for entries under 64 bits.
pub fn serve_search<S: CotExtSender>(
    server: &mut Server<S>,
    session: &mut Session,
) -> Result<(), Gkk12Error> {
    let shape = Shape::from(server.params());
    let key = server.peer_input(session, KEY_BITS)?;
    let pos = search(server, session, &shape, &key)?;
    server.reveal_to_client(session, &pos)
}

/// The client's side of one search for `key`: the number of entries whose key is below it.
///
/// # Errors
/// As [`serve_search`].
pub fn lower_bound<R: CotExtReceiver>(
    client: &mut Client<R>,
    session: &mut Session,
    key: u64,
) -> Result<u64, Gkk12Error> {
    let shape = Shape::from(client.params());
    let bits: Vec<bool> = (0..KEY_BITS).map(|j| (key >> j) & 1 == 1).collect();
    let key = client.input(session, &bits)?;
    let pos = search(client, session, &shape, &key)?;
    let bits = client.reveal(session, &pos)?;
    Ok(bits
        .iter()
        .enumerate()
        .fold(0, |a, (j, &x)| a | (u64::from(x) << j)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn steps_cover_every_answer() {
        assert_eq!(steps(1), 1);
        assert_eq!(steps(4), 3);
        assert_eq!(steps(5), 3);
        assert_eq!(steps(1 << 20), 21);
    }

    #[test]
    fn circuits_are_small() {
        let params = Params::paper(1 << 20, 512).unwrap();
        let a = address_circuit(&Shape::from(&params), 7).unwrap();
        assert!(a.and_gates() <= 2 * 21 + 64, "{}", a.and_gates());
        assert_eq!(compare_circuit().unwrap().and_gates(), 65);
    }
}
