//! **Insecure** fixtures for tests and test benches: a dealer that sees the whole plaintext
//! forest and XOR-shares it between D and E. The three-party initial load is not built yet
//! (the paper leaves it open, notes Q15); this stands in for it where the secret does not
//! matter.

use rand_core::RngCore;

use crate::bits::Strings;
use crate::layout::TupleLayout;
use crate::plain::{PlainForest, Tuple};
use crate::storage::{ForestShare, TreeShare};

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

/// **Insecure**: D's and E's shares of `forest`, a uniformly random XOR-sharing of every tree
/// in the protocols' layout, dealt by someone who sees it all.
pub fn deal<R: RngCore + ?Sized>(forest: &PlainForest, rng: &mut R) -> (ForestShare, ForestShare) {
    let params = *forest.params();
    let mut shares = |i: usize| {
        let plain = encode_tree(forest, i);
        let d = Strings::random(plain.count(), plain.width(), rng);
        let e = plain.xor(&d);
        (d, e)
    };
    let (root_d, root_e) = shares(0);
    let (mut trees_d, mut trees_e) = (Vec::new(), Vec::new());
    for i in 1..=params.h() {
        let (d, e) = shares(i);
        let tree = |rows| TreeShare::from_rows(&params, i, rows).expect("OT_i's shape");
        trees_d.push(tree(d));
        trees_e.push(tree(e));
    }
    let forest = |root, trees| ForestShare::new(params, root, trees).expect("the forest's shape");
    (forest(root_d, trees_d), forest(root_e, trees_e))
}
