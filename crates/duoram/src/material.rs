//! Preprocessing material: what one operation consumes, and the pool that hands it out exactly
//! once.
//!
//! Per operation (one *triple* of DPFs, all three at the same random index ri):
//!
//! | party | holds | words |
//! |---|---|---|
//! | P_b (b = 0, 1) | ri_b; for k = 1, 2, 3: additive flags t_b^(k), final-correction share F_b^(k); for k = 2, 3: leaf words v_b^(k) (DPF #1 serves only READs) | `5·2^h + 4` |
//! | P2 | P0's half of DPF #2 and P1's half of DPF #3: (t, v) of each | `4·2^h` |
//!
//! plus one flag byte per output node of each half. With `Z64` words that is 40 MiB per
//! operation at each primary and 32 MiB at P2 for `2^h = 2^20`; a READ uses only the t vectors,
//! but an operation's type is not known when it is preprocessed.

use std::collections::VecDeque;

use crate::error::DuoramError;
use crate::prep::OUT_BITS;
use crate::word::DuoWord;

/// Output slots per node, at most.
const SLOTS: usize = 1 << OUT_BITS;

/// One party's half of one DPF, converted to words: the additive flags `t`
/// (`t_0 + t_1 = e_ri`) and value words `v` (`v_0 + v_1 = −(F_0 + F_1)·e_ri`), both of length
/// `2^h`, kept as the output stage's raw words plus the output corrections:
/// `t[j] = ±(a[j] + t̂_q·OCW_{j mod 2^o})` and `v[j] = ±(v_raw[j] + t̂_q·OCW'_{j mod 2^o})` with
/// `q = j >> o` the output node and `t̂_q` its flag (negated at P1). Decoding on the fly (in
/// cache-sized chunks, inside the online loops) saves the preprocessing a pass over both
/// vectors.
pub(crate) struct Half<W> {
    /// The raw flag words a (one per leaf).
    pub(crate) a: Vec<W>,
    /// The raw value words (one per leaf).
    pub(crate) v: Vec<W>,
    /// The output-node flags t̂ (one per 2^o leaves).
    pub(crate) flags: Vec<u8>,
    /// `sel_t[f][j]`: the flag-word correction of slot `j` for flag `f` (0 or OCW_j).
    pub(crate) sel_t: [[W; SLOTS]; 2],
    /// `sel_v[f][j]`: the value-word correction (0 or OCW'_j).
    pub(crate) sel_v: [[W; SLOTS]; 2],
    /// Output bits o (leaves per output node: 2^o).
    pub(crate) o: u32,
    /// Whether the words are negated (P1's halves).
    pub(crate) negate: bool,
}

impl<W: DuoWord> Half<W> {
    /// A half from the output stage's raw words, flags and corrections (`ocw` = the `2^o` flag
    /// corrections, then the `2^o` value corrections).
    pub(crate) fn new(
        a: Vec<W>,
        v: Vec<W>,
        flags: Vec<u8>,
        o: usize,
        ocw: &[W],
        negate: bool,
    ) -> Half<W> {
        let k = 1usize << o;
        let mut sel_t = [[W::ZERO; SLOTS]; 2];
        let mut sel_v = [[W::ZERO; SLOTS]; 2];
        sel_t[1][..k].copy_from_slice(&ocw[..k]);
        sel_v[1][..k].copy_from_slice(&ocw[k..2 * k]);
        Half {
            a,
            v,
            flags,
            sel_t,
            sel_v,
            o: o as u32,
            negate,
        }
    }

    fn decode(&self, raw: &[W], sel: &[[W; SLOTS]; 2], j0: usize, out: &mut [W]) {
        // Trees of at most 8 leaves (o < OUT_BITS) go word by word.
        if self.o as usize == OUT_BITS {
            self.decode_nodes::<SLOTS>(raw, sel, j0, out)
        } else {
            self.decode_each(raw, sel, j0, out)
        }
    }

    /// [`decode`](Self::decode) for `2^o = K` slots per node: whole output nodes take one
    /// K-word correction each; the partial nodes at either end (the shifted segments of the
    /// online loops start anywhere) go word by word.
    fn decode_nodes<const K: usize>(
        &self,
        raw: &[W],
        sel: &[[W; SLOTS]; 2],
        j0: usize,
        out: &mut [W],
    ) {
        let len = out.len();
        let head = ((K - j0 % K) % K).min(len);
        let whole = (len - head) / K * K;
        let (out_head, rest) = out.split_at_mut(head);
        let (out_mid, out_tail) = rest.split_at_mut(whole);
        self.decode_each(raw, sel, j0, out_head);
        let start = j0 + head;
        let raw_mid = &raw[start..start + whole];
        let flags = &self.flags[start / K..(start + whole) / K];
        // sel[0] is zero: a node's correction is sel[1] or nothing, a select per word rather
        // than a table lookup (which the compiler would turn into gathers across nodes).
        let on: [W; K] = std::array::from_fn(|k| sel[1][k]);
        for ((y, x), &f) in out_mid
            .chunks_exact_mut(K)
            .zip(raw_mid.chunks_exact(K))
            .zip(flags)
        {
            let flagged = f & 1 == 1;
            for k in 0..K {
                let c = if flagged { on[k] } else { W::ZERO };
                y[k] = if self.negate { -(x[k] + c) } else { x[k] + c };
            }
        }
        self.decode_each(raw, sel, start + whole, out_tail);
    }

    /// [`decode`](Self::decode) word by word.
    fn decode_each(&self, raw: &[W], sel: &[[W; SLOTS]; 2], j0: usize, out: &mut [W]) {
        let (o, mask) = (self.o, (1usize << self.o) - 1);
        let raw = &raw[j0..j0 + out.len()];
        for (i, (y, &x)) in out.iter_mut().zip(raw).enumerate() {
            let j = j0 + i;
            *y = x + sel[usize::from(self.flags[j >> o] & 1)][j & mask];
        }
        if self.negate {
            for y in out.iter_mut() {
                *y = -*y;
            }
        }
    }

    /// `t[j0..j0 + out.len()]` into `out`.
    pub(crate) fn decode_t(&self, j0: usize, out: &mut [W]) {
        self.decode(&self.a, &self.sel_t, j0, out);
    }

    /// `v[j0..j0 + out.len()]` into `out`.
    pub(crate) fn decode_v(&self, j0: usize, out: &mut [W]) {
        self.decode(&self.v, &self.sel_v, j0, out);
    }

    /// `t[j]`.
    #[cfg(test)]
    pub(crate) fn t_at(&self, j: usize) -> W {
        let mut y = [W::ZERO];
        self.decode_t(j, &mut y);
        y[0]
    }

    /// `v[j]`.
    #[cfg(test)]
    pub(crate) fn v_at(&self, j: usize) -> W {
        let mut y = [W::ZERO];
        self.decode_v(j, &mut y);
        y[0]
    }
}

/// The material of one operation at one party.
pub(crate) enum Material<W> {
    /// At P0 or P1.
    Primary {
        /// The material id (the same at all three parties).
        id: u64,
        /// This party's additive share of ri.
        ri: W,
        /// Its halves of DPFs #1, #2, #3.
        dpf: [Half<W>; 3],
        /// Its shares F_b^(k) of the final correction words.
        f: [W; 3],
    },
    /// At P2.
    Helper {
        /// The material id.
        id: u64,
        /// P0's half of DPF #2 (pairs with ζ1 in READ, refreshes ζ0 in UPDATE).
        from0: Half<W>,
        /// P1's half of DPF #3 (pairs with ζ0 in READ, refreshes ζ1 in UPDATE).
        from1: Half<W>,
    },
}

impl<W> Material<W> {
    pub(crate) fn id(&self) -> u64 {
        match self {
            Material::Primary { id, .. } | Material::Helper { id, .. } => *id,
        }
    }
}

/// Preprocessed material in the order it was made; each entry is handed out once, in order.
pub(crate) struct Pool<W> {
    queue: VecDeque<Material<W>>,
    /// The id of the last entry handed out or discarded.
    consumed: Option<u64>,
    /// The id the next preprocessed entry gets.
    next_id: u64,
}

impl<W> Pool<W> {
    pub(crate) fn new() -> Self {
        Pool {
            queue: VecDeque::new(),
            consumed: None,
            next_id: 0,
        }
    }

    /// Entries available.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Reserves `count` consecutive ids for a preprocessing batch; returns the first.
    pub(crate) fn reserve(&mut self, count: usize) -> u64 {
        let first = self.next_id;
        self.next_id += count as u64;
        first
    }

    /// Adds a preprocessed entry.
    pub(crate) fn push(&mut self, m: Material<W>) {
        self.queue.push_back(m);
    }

    /// Checks that `id` was never handed out before (ids are handed out in increasing order).
    fn check_fresh(&self, id: u64) -> Result<(), DuoramError> {
        match self.consumed {
            Some(last) if id <= last => Err(DuoramError::MaterialReused { id, last }),
            _ => Ok(()),
        }
    }

    /// Takes the next entry, if any, marking it consumed.
    ///
    /// # Errors
    /// [`DuoramError::MaterialReused`] if its id is not above the last consumed id.
    pub(crate) fn take(&mut self) -> Result<Option<Material<W>>, DuoramError> {
        let Some(m) = self.queue.pop_front() else {
            return Ok(None);
        };
        self.check_fresh(m.id())?;
        self.consumed = Some(m.id());
        Ok(Some(m))
    }

    /// Puts an entry back at the front (only for an entry whose operation failed before
    /// anything was sent).
    #[cfg(test)]
    pub(crate) fn push_front_for_test(&mut self, m: Material<W>) {
        self.queue.push_front(m);
    }

    /// Drops up to `count` entries without using them; returns how many were dropped.
    pub(crate) fn discard(&mut self, count: usize) -> usize {
        let k = count.min(self.queue.len());
        for m in self.queue.drain(..k) {
            self.consumed = Some(m.id());
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Z64;

    fn helper(id: u64) -> Material<Z64> {
        let h = || Half::new(vec![], vec![], vec![], 0, &[Z64(0), Z64(0)], false);
        Material::Helper {
            id,
            from0: h(),
            from1: h(),
        }
    }

    #[test]
    fn node_wise_decoding_matches_word_wise() {
        let w = |i: u64| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i >> 3));
        let n = 200usize;
        let raw: Vec<Z64> = (0..n as u64).map(w).collect();
        let v: Vec<Z64> = (0..n as u64).map(|i| w(i + 1000)).collect();
        for o in 0..=OUT_BITS {
            let k = 1usize << o;
            let flags: Vec<u8> = (0..n.div_ceil(k)).map(|q| (q * 7 % 3 == 0) as u8).collect();
            let ocw: Vec<Z64> = (0..2 * k as u64).map(|j| w(j + 5000)).collect();
            for negate in [false, true] {
                let h = Half::new(raw.clone(), v.clone(), flags.clone(), o, &ocw, negate);
                for (j0, len) in [
                    (0, 200),
                    (0, 8),
                    (3, 5),
                    (5, 37),
                    (8, 64),
                    (13, 150),
                    (16, 184),
                    (199, 1),
                ] {
                    let what = format!("o = {o}, negate {negate}, from {j0}, {len} words");
                    let mut fast = vec![Z64(0); len];
                    let mut slow = vec![Z64(0); len];
                    // The flag words (corrections ocw[..k]), then the value words (ocw[k..]).
                    for (name, words, sel, at) in [("t", &raw, &h.sel_t, 0), ("v", &v, &h.sel_v, k)]
                    {
                        if at == 0 {
                            h.decode_t(j0, &mut fast);
                        } else {
                            h.decode_v(j0, &mut fast);
                        }
                        h.decode_each(words, sel, j0, &mut slow);
                        assert_eq!(fast, slow, "{name}, {what}");
                        for (i, &y) in fast.iter().enumerate() {
                            let j = j0 + i;
                            let c = if flags[j / k] == 1 {
                                ocw[at + j % k]
                            } else {
                                Z64(0)
                            };
                            let want = words[j] + c;
                            assert_eq!(y, if negate { -want } else { want }, "{name}, {what}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn entries_are_consumed_once_and_in_order() {
        let mut pool = Pool::new();
        let first = pool.reserve(3);
        assert_eq!(first, 0);
        for id in first..first + 3 {
            pool.push(helper(id));
        }
        assert_eq!(pool.len(), 3);
        let a = pool.take().unwrap().unwrap();
        assert_eq!(a.id(), 0);
        // Handing the same entry out again is refused, whatever path it took back.
        pool.push_front_for_test(a);
        assert!(matches!(
            pool.take(),
            Err(DuoramError::MaterialReused { id: 0, last: 0 })
        ));
        assert_eq!(pool.discard(1), 1);
        assert_eq!(pool.take().unwrap().unwrap().id(), 2);
        assert!(pool.take().unwrap().is_none());
        assert_eq!(pool.reserve(1), 3);
    }
}
