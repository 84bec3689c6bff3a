//! Plaintext ideal functionalities of Ramen, the oracles of the layer tests: F_3-OT (Fig. 1),
//! F_DORAM (Fig. 13), F_Stash (Fig. 16), F_r-M (Fig. 18) and F_w-M (Fig. 20).
//!
//! Each is the figure's functionality on reconstructed values. The tests of this module run
//! the real protocol with three parties, record every party's shares of each sub-protocol's
//! outputs (flag, loc, val_st after the stash read; adr_M; val_M after the memory read; the
//! stash after the write; the memory after each write-back), reconstruct them, and check them
//! against these functionalities step by step — so a fault is located in the sub-protocol that
//! causes it, not only in the end result.

use doram_field::Fp;
use doram_prim::AesPrg;

/// Ramen Fig. 1, F_3-OT: Init gives S a random vector r; each Access reveals r\[indx\] to R at the
/// index C chose.
#[derive(Clone, Debug)]
pub struct IdealPot {
    r: Vec<Fp>,
}

impl IdealPot {
    /// Init: samples r ∈ F_p^len; returns the functionality and S's output r.
    pub fn init(len: usize, rng: &mut AesPrg) -> (IdealPot, Vec<Fp>) {
        let r: Vec<Fp> = (0..len).map(|_| rng.random()).collect();
        (IdealPot { r: r.clone() }, r)
    }

    /// Access with C's input `index`: R's output r\[index\] (`None` outside the vector).
    pub fn access(&self, index: usize) -> Option<Fp> {
        self.r.get(index).copied()
    }
}

/// Ramen Fig. 13, F_DORAM on plaintext: a memory of n words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdealDoram {
    memory: Vec<Fp>,
}

impl IdealDoram {
    /// Init with `memory`.
    pub fn new(memory: Vec<Fp>) -> IdealDoram {
        IdealDoram { memory }
    }

    /// Access (op, adr, val): returns M\[adr\] and, for a write, sets M\[adr\] := val.
    ///
    /// # Panics
    /// If `adr` is out of range (test inputs only).
    pub fn access(&mut self, write: bool, adr: usize, val: Fp) -> Fp {
        let old = self.memory[adr];
        if write {
            self.memory[adr] = val;
        }
        old
    }

    /// Get Memory.
    pub fn memory(&self) -> &[Fp] {
        &self.memory
    }
}

/// One stash entry (adr, val, val_old).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StashEntry {
    /// The address.
    pub adr: u64,
    /// The current value.
    pub val: Fp,
    /// The value at the start of the epoch.
    pub old: Fp,
}

/// The output of F_Stash Read: (flag, loc, val_st).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StashState {
    /// Whether the address is in the stash.
    pub flag: bool,
    /// Its index in the stash, or c if it is not there.
    pub loc: usize,
    /// Its value in the stash, or 0.
    pub val_st: Fp,
}

/// Ramen Fig. 16, F_Stash: the stash of the current epoch, entry c written by access c.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdealStash {
    entries: Vec<StashEntry>,
}

impl IdealStash {
    /// An empty stash (start of an epoch).
    pub fn new() -> IdealStash {
        IdealStash::default()
    }

    /// The entries.
    pub fn entries(&self) -> &[StashEntry] {
        &self.entries
    }

    /// Read Stash at access `c` for address `adr` (Fig. 16, Read, steps 2–3).
    pub fn read(&self, c: usize, adr: u64) -> StashState {
        match self.entries.iter().position(|e| e.adr == adr) {
            Some(j) => StashState {
                flag: true,
                loc: j,
                val_st: self.entries[j].val,
            },
            None => StashState {
                flag: false,
                loc: c,
                val_st: Fp::ZERO,
            },
        }
    }

    /// Write in Stash (Fig. 16, Write, steps 2–3): stash\[c\] := (adr_M, val_M, val_M), then for
    /// a write stash\[loc\].val := val.
    pub fn write(&mut self, val_m: Fp, adr_m: u64, st: StashState, write: bool, val: Fp) {
        self.entries.push(StashEntry {
            adr: adr_m,
            val: val_m,
            old: val_m,
        });
        if write {
            self.entries[st.loc].val = val;
        }
    }
}

/// Ramen Fig. 18, F_r-M Access: M\[adr_M\] of the memory with the s dummy cells (0) appended.
///
/// # Panics
/// If `adr_m ≥ n + s` (test inputs only).
pub fn ideal_read(memory: &[Fp], s: usize, adr_m: u64) -> Fp {
    let adr = adr_m as usize;
    assert!(adr < memory.len() + s, "F_r-M: address outside the memory");
    memory.get(adr).copied().unwrap_or(Fp::ZERO)
}

/// Ramen Fig. 20, F_w-M Update: M\[stash[j\].adr] := stash\[j\].val for every entry whose address
/// is a real cell (dummy cells are dropped).
pub fn ideal_update(memory: &[Fp], stash: &IdealStash) -> Vec<Fp> {
    let mut m = memory.to_vec();
    for e in &stash.entries {
        if let Some(cell) = m.get_mut(e.adr as usize) {
            *cell = e.val;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doram::{Probe, Ramen};
    use crate::params::Params;
    use crate::pot;
    use doram_core::{PartyId, Seed};
    use doram_mpc::{Additive, deal_additive, testkit};

    #[test]
    fn pot_realises_f_3ot() {
        let mut rng = AesPrg::new(Seed([4; 16]));
        for len in [1usize, 2, 100, 4097] {
            let (s, to_c, to_r) = pot::Sender::init(len, &mut rng);
            let c = pot::Chooser::new(len, &to_c);
            let r = pot::Receiver::new(len, &to_r);
            // F_3-OT's S output is the sender's r; the functionality then answers with it.
            let f = IdealPot { r: s.r().to_vec() };
            let mut seen = std::collections::HashSet::new();
            for idx in (0..len).step_by((len / 7).max(1)) {
                let msg = c.access(idx).unwrap();
                // R only sees π(indx): distinct indices give distinct permuted indices.
                assert!(seen.insert(msg.index));
                assert_eq!(r.receive(PartyId::P1, &msg).ok(), f.access(idx));
            }
        }
        // The ideal functionality itself.
        let (f, r) = IdealPot::init(5, &mut rng);
        assert_eq!(f.access(3), Some(r[3]));
        assert_eq!(f.access(5), None);
    }

    /// Runs `ops` (write?, adr, val) on a memory of n words with probes on, and returns the
    /// reconstructed probes of each access.
    fn probed_run(n: usize, initial: &[Fp], ops: &[(bool, u64, Fp)], seed: u64) -> Vec<[Probe; 3]> {
        let params = Params::new(n).unwrap();
        let mut rng = AesPrg::new(Seed([9; 16]));
        let mut mem: [Vec<Additive<Fp>>; 3] = Default::default();
        for &x in initial {
            for (v, s) in mem.iter_mut().zip(deal_additive(x, &mut rng)) {
                v.push(s);
            }
        }
        let dealt: Vec<[[Additive<Fp>; 3]; 3]> = ops
            .iter()
            .map(|&(w, a, v)| {
                [
                    deal_additive(Fp::from(w), &mut rng),
                    deal_additive(Fp::from_u64(a), &mut rng),
                    deal_additive(v, &mut rng),
                ]
            })
            .collect();
        let runs = testkit::run3(|session| {
            let me = session.me();
            let i = me.index();
            let mut r = Ramen::new(session, params, testkit::party_seed(seed, me)).unwrap();
            r.record_probes(true);
            r.load(&mem[i]).unwrap();
            for d in &dealt {
                r.access_shared(d[0][i], d[1][i], d[2][i]).unwrap();
            }
            r.probes().to_vec()
        });
        (0..ops.len())
            .map(|t| std::array::from_fn(|p| runs[p][t].clone()))
            .collect()
    }

    fn open(p: &[Probe; 3], f: impl Fn(&Probe) -> Fp) -> Fp {
        f(&p[0]) + f(&p[1]) + f(&p[2])
    }

    fn open_vec(p: &[Probe; 3], f: impl Fn(&Probe) -> &Vec<Fp>) -> Vec<Fp> {
        let (a, b, c) = (f(&p[0]), f(&p[1]), f(&p[2]));
        a.iter()
            .zip(b)
            .zip(c)
            .map(|((x, y), z)| *x + *y + *z)
            .collect()
    }

    /// Every sub-protocol's outputs against its functionality, access by access, over three
    /// epochs with repeated addresses, reads and writes.
    fn check_layers(n: usize, seed: u64) {
        let params = Params::new(n).unwrap();
        let s = params.stash();
        let mut rng = AesPrg::new(Seed([seed as u8; 16]));
        let initial: Vec<Fp> = (0..n).map(|_| rng.random()).collect();
        let ops: Vec<(bool, u64, Fp)> = (0..3 * s + 2)
            .map(|t| {
                let adr = if t % 3 == 0 {
                    1
                } else {
                    crate::tags::uniform_below(&mut rng, n as u64)
                };
                (rng.random::<Fp>().to_u128() & 1 == 1, adr, rng.random())
            })
            .collect();
        let probes = probed_run(n, &initial, &ops, seed);
        let mut doram = IdealDoram::new(initial.clone());
        let mut epoch_memory = initial;
        let mut stash = IdealStash::new();
        for (t, (&(write, adr, val), p)) in ops.iter().zip(&probes).enumerate() {
            let c = t % s;
            // F_Stash Read (Fig. 16).
            let st = stash.read(c, adr);
            assert_eq!(open(p, |q| q.flag), Fp::from(st.flag), "access {t}: flag");
            assert_eq!(
                open(p, |q| q.loc),
                Fp::from_u64(st.loc as u64),
                "access {t}: loc"
            );
            assert_eq!(open(p, |q| q.val_st), st.val_st, "access {t}: val_st");
            // Fig. 14, step 2: a fresh dummy n + c if adr is in the stash.
            let adr_m = if st.flag { (n + c) as u64 } else { adr };
            assert_eq!(
                open(p, |q| q.adr_m),
                Fp::from_u64(adr_m),
                "access {t}: adr_M"
            );
            // F_r-M (Fig. 18) on the memory of the epoch's start.
            let val_m = ideal_read(&epoch_memory, s, adr_m);
            assert_eq!(open(p, |q| q.val_m), val_m, "access {t}: val_M");
            // F_Stash Write (Fig. 16).
            stash.write(val_m, adr_m, st, write, val);
            let vals: Vec<Fp> = stash.entries().iter().map(|e| e.val).collect();
            let olds: Vec<Fp> = stash.entries().iter().map(|e| e.old).collect();
            assert_eq!(open_vec(p, |q| &q.stash_val), vals, "access {t}: stash.val");
            assert_eq!(
                open_vec(p, |q| &q.stash_old),
                olds,
                "access {t}: stash.val_old"
            );
            // F_DORAM (Fig. 13) agrees with what the layers computed.
            let d = doram.access(write, adr as usize, val);
            assert_eq!(
                if st.flag { st.val_st } else { val_m },
                d,
                "access {t}: output"
            );
            // F_w-M (Fig. 20) at the end of the epoch.
            if c == s - 1 {
                epoch_memory = ideal_update(&epoch_memory, &stash);
                let got = p[0].written_back.as_ref().map(|_| {
                    open_vec(p, |q| {
                        q.written_back.as_ref().expect("all parties wrote back")
                    })
                });
                assert_eq!(
                    got.as_deref(),
                    Some(epoch_memory.as_slice()),
                    "write-back {t}"
                );
                assert_eq!(epoch_memory, doram.memory());
                stash = IdealStash::new();
            } else {
                assert!(p.iter().all(|q| q.written_back.is_none()));
            }
        }
    }

    #[test]
    fn layers_realise_their_functionalities() {
        let seed = testkit::test_seed();
        check_layers(16, seed);
        check_layers(23, seed ^ 1);
        check_layers(130, seed ^ 2);
    }

    #[test]
    fn ideal_stash_semantics() {
        let mut st = IdealStash::new();
        let s0 = st.read(0, 7);
        assert_eq!(
            s0,
            StashState {
                flag: false,
                loc: 0,
                val_st: Fp::ZERO
            }
        );
        st.write(Fp::from_u64(5), 7, s0, true, Fp::from_u64(9));
        let s1 = st.read(1, 7);
        assert_eq!(
            s1,
            StashState {
                flag: true,
                loc: 0,
                val_st: Fp::from_u64(9)
            }
        );
        st.write(Fp::ZERO, 100, s1, false, Fp::ONE);
        assert_eq!(
            st.entries()[1],
            StashEntry {
                adr: 100,
                val: Fp::ZERO,
                old: Fp::ZERO
            }
        );
        let m = ideal_update(&[Fp::ONE; 10], &st);
        assert_eq!(m[7], Fp::from_u64(9));
        assert_eq!(ideal_read(&m, 4, 12), Fp::ZERO);
        assert_eq!(ideal_read(&m, 4, 7), Fp::from_u64(9));
    }
}
