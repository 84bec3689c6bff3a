//! Preprocessed material: a first-in, first-out pool of per-evaluation values, each used
//! exactly once.

use std::collections::VecDeque;

use doram_field::Fp;

use crate::error::DoprfError;
use crate::params::Mode;

/// The material for some number of evaluations: `N` columns of field elements, column `c`
/// holding `widths[c]` elements per evaluation, plus (for the masked receivers) one ℓ-bit mask
/// per evaluation.
pub(crate) struct Pool<const N: usize> {
    mode: Mode,
    widths: [usize; N],
    cols: [VecDeque<Fp>; N],
    masks: VecDeque<u128>,
    with_masks: bool,
    evals: usize,
}

/// Material taken from a [`Pool`] for a batch of evaluations.
pub(crate) struct Taken<const N: usize> {
    /// The columns, `widths[c]` elements per evaluation, evaluation after evaluation.
    pub(crate) cols: [Vec<Fp>; N],
    /// The masks (empty for a pool without masks).
    pub(crate) masks: Vec<u128>,
}

impl<const N: usize> Pool<N> {
    /// An empty pool for `mode` with the given column widths.
    pub(crate) fn new(mode: Mode, widths: [usize; N], with_masks: bool) -> Self {
        Pool {
            mode,
            widths,
            cols: std::array::from_fn(|_| VecDeque::new()),
            masks: VecDeque::new(),
            with_masks,
            evals: 0,
        }
    }

    /// Evaluations available.
    pub(crate) fn available(&self) -> usize {
        self.evals
    }

    /// Appends the material of `count` evaluations.
    ///
    /// The round functions build every column from the parameters and check peer messages
    /// before calling this, so the lengths always agree.
    pub(crate) fn push(&mut self, count: usize, cols: [Vec<Fp>; N], masks: Vec<u128>) {
        for ((col, new), width) in self.cols.iter_mut().zip(cols).zip(self.widths) {
            debug_assert_eq!(new.len(), count * width);
            col.extend(new);
        }
        debug_assert_eq!(masks.len(), if self.with_masks { count } else { 0 });
        self.masks.extend(masks);
        self.evals += count;
    }

    /// Removes and returns the material of the next `count` evaluations.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] (taking nothing) if fewer are available.
    pub(crate) fn take(&mut self, count: usize) -> Result<Taken<N>, DoprfError> {
        if count > self.evals {
            return Err(DoprfError::PreprocessingExhausted {
                mode: self.mode,
                requested: count,
                available: self.evals,
            });
        }
        let mut i = 0;
        let cols = std::array::from_fn(|_| {
            let width = self.widths[i];
            let col = self.cols[i].drain(..count * width).collect();
            i += 1;
            col
        });
        let masks = if self.with_masks {
            self.masks.drain(..count).collect()
        } else {
            Vec::new()
        };
        self.evals -= count;
        Ok(Taken { cols, masks })
    }
}

impl<const N: usize> core::fmt::Debug for Pool<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Pool({}, {} evaluations, ..)", self.mode, self.evals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_exhaustion() {
        let mut pool = Pool::<2>::new(Mode::Masked, [1, 3], true);
        let f = |v: u64| Fp::from_u64(v);
        pool.push(2, [vec![f(1), f(2)], (10..16).map(f).collect()], vec![7, 8]);
        pool.push(1, [vec![f(3)], (16..19).map(f).collect()], vec![9]);
        assert_eq!(pool.available(), 3);
        let t = pool.take(2).unwrap();
        assert_eq!(t.cols[0], vec![f(1), f(2)]);
        assert_eq!(t.cols[1], (10..16).map(f).collect::<Vec<_>>());
        assert_eq!(t.masks, vec![7, 8]);
        assert!(matches!(
            pool.take(2),
            Err(DoprfError::PreprocessingExhausted {
                mode: Mode::Masked,
                requested: 2,
                available: 1
            })
        ));
        // A failed take consumes nothing.
        let t = pool.take(1).unwrap();
        assert_eq!(t.cols[0], vec![f(3)]);
        assert_eq!(t.masks, vec![9]);
        assert_eq!(pool.available(), 0);
        assert!(pool.take(0).is_ok());
    }
}
