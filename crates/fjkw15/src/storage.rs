//! One party's share of the forest ([`ForestShare`]): what D and E each store between accesses
//! (FJKW15 §4: the forest is "XOR-shared between D and E"; notes §2.2).
//!
//! Every tree is its tuples in the bit layout of [`TupleLayout`], one [`Strings`] row per slot,
//! slots in the order of [`PlainTree`] (internal buckets in heap order, then the leaf nodes of
//! 4w slots), so that a path is the rows [`path_slots`] lists, root first — the order in which
//! Access reads it and Eviction writes it back. OT_0 is its single tuple.
//!
//! [`PlainTree`]: crate::plain::PlainTree

use crate::bits::Strings;
use crate::error::Fjkw15Error;
use crate::layout::TupleLayout;
use crate::params::Params;
use crate::plain::{PlainForest, Tuple, path_slots, tree_slots};

/// One party's share of one tree OT_i, i ≥ 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeShare {
    depth: u32,
    w: usize,
    rows: Strings,
}

impl TreeShare {
    /// A share of OT_i that is all zeros (with an all-zero other share: the empty tree).
    pub fn zeros(params: &Params, i: usize) -> TreeShare {
        let (depth, w) = (params.depth(i), params.w());
        TreeShare::from_rows(
            params,
            i,
            Strings::zeros(tree_slots(depth, w), params.tuple_bits(i)),
        )
        .expect("the shape of OT_i")
    }

    /// A share of OT_i from its rows, one per slot.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless `rows` has one |T_i|-bit row per slot of OT_i.
    pub fn from_rows(params: &Params, i: usize, rows: Strings) -> Result<TreeShare, Fjkw15Error> {
        let (depth, w) = (params.depth(i), params.w());
        if i == 0 || rows.count() != tree_slots(depth, w) || rows.width() != params.tuple_bits(i) {
            return Err(Fjkw15Error::InvalidInput(
                "a tree share has one |T_i|-bit row per slot of OT_i, i ≥ 1",
            ));
        }
        Ok(TreeShare { depth, w, rows })
    }

    /// All rows, slot by slot.
    pub fn rows(&self) -> &Strings {
        &self.rows
    }

    fn slots(&self, leaf: u64) -> Result<Vec<usize>, Fjkw15Error> {
        if leaf >> self.depth != 0 {
            return Err(Fjkw15Error::InvalidInput("a leaf label has d_i bits"));
        }
        Ok(path_slots(self.depth, self.w, leaf))
    }

    /// The share of the path to `leaf`, root first ((d_i + 4)·w rows).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `leaf` ≥ 2^d_i.
    pub fn read_path(&self, leaf: u64) -> Result<Strings, Fjkw15Error> {
        Ok(self.rows.gather(&self.slots(leaf)?))
    }

    /// Replaces the share of the path to `leaf` by `path` (FJKW15 Alg. 5, step 7: "D and E
    /// insert their shares of P′_{L_i} into their shares of OT_i").
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if `leaf` ≥ 2^d_i or `path` is not a path of this tree;
    /// nothing is written then.
    pub fn write_path(&mut self, leaf: u64, path: &Strings) -> Result<(), Fjkw15Error> {
        let slots = self.slots(leaf)?;
        if path.count() != slots.len() || path.width() != self.rows.width() {
            return Err(Fjkw15Error::InvalidInput(
                "a path share is (d_i + 4)·w rows of |T_i| bits",
            ));
        }
        for (k, &s) in slots.iter().enumerate() {
            self.rows.set(s, path.get(k));
        }
        Ok(())
    }
}

/// One party's share of the forest OT_0..OT_h.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForestShare {
    params: Params,
    root: Strings,
    trees: Vec<TreeShare>,
}

impl ForestShare {
    /// A share from OT_0's tuple and the shares of OT_1..OT_h.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] unless `root` is one |T_0|-bit row and `trees` are h tree
    /// shares of OT_1..OT_h's shapes.
    pub fn new(
        params: Params,
        root: Strings,
        trees: Vec<TreeShare>,
    ) -> Result<ForestShare, Fjkw15Error> {
        let fits = root.count() == 1
            && root.width() == params.tuple_bits(0)
            && trees.len() == params.h()
            && trees.iter().enumerate().all(|(k, t)| {
                t.depth == params.depth(k + 1)
                    && t.w == params.w()
                    && t.rows.width() == params.tuple_bits(k + 1)
            });
        if !fits {
            return Err(Fjkw15Error::InvalidInput(
                "the shares do not fit the parameters",
            ));
        }
        Ok(ForestShare {
            params,
            root,
            trees,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The layout of OT_i's tuples.
    pub fn layout(&self, i: usize) -> TupleLayout {
        TupleLayout::new(&self.params, i)
    }

    /// The share of the path to `leaf` in OT_i: OT_0's single tuple for i = 0 (leaf 0).
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if i > h or `leaf` ≥ 2^d_i.
    pub fn read_path(&self, i: usize, leaf: u64) -> Result<Strings, Fjkw15Error> {
        match i {
            0 if leaf == 0 => Ok(self.root.clone()),
            0 => Err(Fjkw15Error::InvalidInput("OT_0 has the single leaf 0")),
            _ => self.tree(i)?.read_path(leaf),
        }
    }

    /// Replaces the share of the path to `leaf` in OT_i.
    ///
    /// # Errors
    /// As [`ForestShare::read_path`], and if `path` has the wrong shape; nothing is written
    /// then.
    pub fn write_path(&mut self, i: usize, leaf: u64, path: &Strings) -> Result<(), Fjkw15Error> {
        if i == 0 {
            if leaf != 0 || path.count() != 1 || path.width() != self.root.width() {
                return Err(Fjkw15Error::InvalidInput("OT_0's path is its one tuple"));
            }
            self.root = path.clone();
            return Ok(());
        }
        let i = self.check(i)?;
        self.trees[i - 1].write_path(leaf, path)
    }

    fn check(&self, i: usize) -> Result<usize, Fjkw15Error> {
        if i == 0 || i > self.params.h() {
            return Err(Fjkw15Error::InvalidInput("trees are OT_1..OT_h"));
        }
        Ok(i)
    }

    /// The share of OT_i, 1 ≤ i ≤ h.
    ///
    /// # Errors
    /// [`Fjkw15Error::InvalidInput`] if i is 0 or above h.
    pub fn tree(&self, i: usize) -> Result<&TreeShare, Fjkw15Error> {
        let i = self.check(i)?;
        Ok(&self.trees[i - 1])
    }
}

/// OT_i of `forest` in the protocols' layout, one row per slot (OT_0: its one tuple).
pub fn encode_tree(forest: &PlainForest, i: usize) -> Strings {
    let layout = TupleLayout::new(forest.params(), i);
    if i == 0 {
        let root = Tuple {
            fb: true,
            n: 0,
            label: 0,
            a: forest.root().to_vec(),
        };
        return Strings::from_rows(layout.bits(), [layout.encode(&root).as_slice()]);
    }
    let tree = forest.tree(i);
    let slots: Vec<usize> = (0..tree.slots()).collect();
    layout.encode_slots(tree, &slots)
}
