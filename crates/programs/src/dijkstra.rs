//! Dijkstra's single-source shortest paths with secret non-negative edge weights.
//!
//! **Inputs**: the data owner's weighted directed graph (V vertices, E edges, weights in
//! `0..=`[`MAX_WEIGHT`](crate::input::MAX_WEIGHT)), the querier's source s < V. **Output**:
//! for every vertex the length of a shortest path from s, `None` if unreachable (internally
//! the sentinel [`INF`] = 2^44, above every path of up to [`MAX_V`] − 1 edges of weight
//! < 2^32).
//!
//! **Algorithm**: the dense O(V²) form of Dijkstra, which is oblivious once its selection is
//! (every iteration touches every vertex). The engine holds the V × V weight matrix `W` (the
//! smallest weight among parallel edges, [`INF`] where there is no edge, self loops dropped),
//! the distance vector and the visited bits, all indexed publicly; no memory access is needed.
//! V iterations, each:
//! 1. the smallest key dist_j + visited_j·2^45 (unvisited vertices first) by a tournament:
//!    ⌈log₂ V⌉ levels of one batch of less-than and one of selects, keeping each level's
//!    comparison bits (ties go to the lower index);
//! 2. the winner u's one-hot vector h, top-down through the recorded bits (one product per
//!    tournament pair, ⌈log₂ V⌉ rounds); visited_j += h_j is linear;
//! 3. row u of `W` in one oblivious row access: W\[u\]\[k\] = Σ_j h_j·W\[j\]\[k\], V inner
//!    products of length V in one round (each costs the communication of one product);
//! 4. relax: dist_j := min(dist_j, du + W\[u\]\[j\]) (one batch of V less-than, one of
//!    selects).
//!
//! Visited vertices are never improved (du ≥ their distance), and an unreachable u has
//! du = INF, so INF + w is never below any distance. All keys and tentative distances stay
//! below 2^46, the comparisons' bit length [`DIST_BITS`].
//!
//! **Costs**: the owner inputs V² words (one round); 2V² − V less-than at 46 bits (per
//! iteration V − 1 in the tournament and V in the relaxation) and V equalities at ⌈log₂ V⌉
//! bits to place the source; per iteration 3V − 2 products and V inner products besides the
//! comparisons' own, and V² local products for the row; rounds per iteration:
//! ⌈log₂ V⌉·(6 + 1) for the tournament, ⌈log₂ V⌉ for the one-hot vector, 1 for the row,
//! 6 + 1 for the relaxation. No DORAM access. Time and communication depend on V only (E
//! is announced but not used).
//!
//! **Memory**: the row accesses read the owner's matrix transposed in place: a party holds
//! the V² shares once (32 bytes each: 512 MiB at V = 4096). Comparisons need no preprocessing.

use doram_core::Seed;
use doram_field::Fp;
use doram_net::Session;

use crate::bfs::Csr;
use crate::error::{InputError, ProgramError};
use crate::input::Edge;
use crate::machine::{Backend, Machine, Part, Plan, bits_for, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, announce_graph, check_graph_inputs};

/// The "no path" and "no edge" sentinel: 2^44, above every path of up to 2^12 − 1 edges of
/// weight below 2^32.
pub const INF: u64 = 1 << 44;

/// Added to the key of a visited vertex: 2^45.
const VISITED: u64 = 1 << 45;

/// Bit length of distance comparisons: keys and tentative distances are below 2^46.
pub const DIST_BITS: u32 = 46;

/// The largest vertex count the entry points accept (the matrix has V² words).
pub const MAX_V: u64 = 1 << 12;

/// The largest edge count the entry points accept.
pub const MAX_E: u64 = 1 << 24;

/// The weight matrix the owner loads: row-major V × V, INF where there is no edge.
pub fn matrix(vertices: u64, edges: &[Edge]) -> Result<Vec<u64>, InputError> {
    Csr::new(vertices, edges)?; // range checks
    let v = vertices as usize;
    let mut w = vec![INF; v * v];
    for e in edges {
        if e.from != e.to {
            let cell = &mut w[e.from as usize * v + e.to as usize];
            *cell = (*cell).min(e.weight);
        }
    }
    Ok(w)
}

/// Plaintext shortest-path lengths (the reference). Edges outside the graph are ignored.
pub fn plain(vertices: u64, edges: &[Edge], source: u64) -> Vec<Option<u64>> {
    let v = vertices as usize;
    let mut dist: Vec<Option<u64>> = vec![None; v];
    let mut done = vec![false; v];
    if (source as usize) < v {
        dist[source as usize] = Some(0);
    }
    loop {
        let u = (0..v)
            .filter(|&j| !done[j])
            .filter_map(|j| dist[j].map(|d| (d, j)))
            .min();
        let Some((du, u)) = u else { break };
        done[u] = true;
        for e in edges
            .iter()
            .filter(|e| e.from as usize == u && e.to < vertices)
        {
            let nd = du + e.weight;
            let t = e.to as usize;
            if dist[t].is_none_or(|d| nd < d) {
                dist[t] = Some(nd);
            }
        }
    }
    dist
}

/// Accesses, comparisons and random bits for V vertices.
pub fn plan(vertices: usize) -> Plan {
    let v = vertices;
    let lt = v * (v.saturating_sub(1) + v);
    let eq = v;
    Plan {
        accesses: 0,
        comparisons: lt + eq,
        bits: 0,
    }
}

/// The program: shortest-path lengths from the secret `source` over the secret weight matrix
/// `w` (V² words, row-major). Returns the distances (INF for unreachable vertices).
///
/// # Errors
/// The machine's errors.
pub fn dijkstra<R: Ram>(
    m: &mut R,
    w: &[R::Word],
    vertices: usize,
    source: R::Word,
) -> Result<Vec<R::Word>, ProgramError> {
    if w.len() != vertices * vertices {
        return Err(ProgramError::Misuse(
            "the weight matrix must have V² entries",
        ));
    }
    let mut cols = w.to_vec();
    transpose(&mut cols, vertices);
    dijkstra_columns(m, &cols, vertices, source)
}

/// Transposes the row-major `v` × `v` matrix `w` in place.
fn transpose<T>(w: &mut [T], v: usize) {
    for j in 0..v {
        for k in j + 1..v {
            w.swap(j * v + k, k * v + j);
        }
    }
}

/// [`dijkstra`] on the weight matrix's columns (`cols[k·V + j]` = W\[j\]\[k\]), which row
/// accesses read: the owner's matrix is transposed in place rather than copied, so a party
/// holds one V² array of shares.
fn dijkstra_columns<R: Ram>(
    m: &mut R,
    cols: &[R::Word],
    vertices: usize,
    source: R::Word,
) -> Result<Vec<R::Word>, ProgramError> {
    let v = vertices;
    if cols.len() != v * v {
        return Err(ProgramError::Misuse(
            "the weight matrix must have V² entries",
        ));
    }
    let b = bits_for(v.saturating_sub(1) as u64);
    let ids: Vec<R::Word> = (0..v as u64).map(|j| m.int(j)).collect();
    let inf = m.int(INF);
    // dist_j = INF·(1 − [j = s]).
    let pairs: Vec<_> = ids.iter().map(|&j| (j, source)).collect();
    let at = m.eq_many(&pairs, b)?;
    let mut dist: Vec<R::Word> = at
        .iter()
        .map(|&e| inf - R::value(e) * Fp::from_u64(INF))
        .collect();
    let zero = m.int(0);
    let mut visited = vec![zero; v];
    let one = m.int(1);
    for _ in 0..v {
        // Step 1: the tournament over dist + VISITED·visited.
        let items: Vec<R::Word> = (0..v)
            .map(|j| dist[j] + visited[j] * Fp::from_u64(VISITED))
            .collect();
        let (du, levels) = tournament(m, items)?;
        // Step 2: the winner u's one-hot vector [j = u]; visited += [j = u].
        let onehot = winner_onehot(m, &levels, one)?;
        for (vis, &h) in visited.iter_mut().zip(&onehot) {
            *vis += h;
        }
        // Step 3: row u of W, Σ_j [j = u]·W[j][k] for every k: V inner products in one round.
        let pairs: Vec<_> = cols.chunks_exact(v).map(|c| (&onehot[..], c)).collect();
        let row = m.dot_many(&pairs)?;
        // Step 4: relax.
        let nd: Vec<R::Word> = row.iter().map(|&x| du + x).collect();
        let pairs: Vec<_> = nd.iter().zip(&dist).map(|(&a, &b)| (a, b)).collect();
        let better = m.lt_many(&pairs, DIST_BITS)?;
        let sel: Vec<_> = better
            .iter()
            .zip(nd.iter().zip(&dist))
            .map(|(&f, (&a, &b))| (f, a, b))
            .collect();
        dist = m.select_many(&sel)?;
    }
    Ok(dist)
}

/// Step 1 of an iteration: the minimum of `items` by a tournament of comparisons, one level
/// per round of comparisons and selects; returns it with each level's length and comparison
/// bits ("the right one is smaller"), for [`winner_onehot`].
#[allow(clippy::type_complexity)]
fn tournament<R: Ram>(
    m: &mut R,
    mut items: Vec<R::Word>,
) -> Result<(R::Word, Vec<(usize, Vec<R::Bit>)>), ProgramError> {
    let mut levels = Vec::new();
    while items.len() > 1 {
        let pairs: Vec<_> = items.chunks_exact(2).map(|p| (p[1], p[0])).collect();
        let right_smaller = m.lt_many(&pairs, DIST_BITS)?;
        let sel: Vec<_> = items
            .chunks_exact(2)
            .zip(&right_smaller)
            .map(|(p, &r)| (r, p[1], p[0]))
            .collect();
        let mut next = m.select_many(&sel)?;
        if items.len() % 2 == 1 {
            next.push(items[items.len() - 1]);
        }
        levels.push((items.len(), right_smaller));
        items = next;
    }
    Ok((items[0], levels))
}

/// Step 2 of an iteration: the one-hot vector of the tournament's winner, top-down through the
/// recorded bits (one round of products per level, one product per pair).
fn winner_onehot<R: Ram>(
    m: &mut R,
    levels: &[(usize, Vec<R::Bit>)],
    one: R::Word,
) -> Result<Vec<R::Word>, ProgramError> {
    let mut onehot = vec![one];
    for (len, bits) in levels.iter().rev() {
        let pairs: Vec<_> = bits
            .iter()
            .zip(&onehot)
            .map(|(&b, &p)| (p, R::value(b)))
            .collect();
        let right = m.mul_many(&pairs)?;
        let mut down = Vec::with_capacity(*len);
        for (&p, r) in onehot.iter().zip(right) {
            down.push(p - r);
            down.push(r);
        }
        if len % 2 == 1 {
            down.push(onehot[bits.len()]);
        }
        onehot = down;
    }
    Ok(onehot)
}

/// Runs the program on the plaintext machine [`PlainRam`] (the memory access sequence of a
/// backend that hides the op type if `hides_op_type`): the distances, `None` for unreachable
/// vertices, and what the run did.
///
/// # Errors
/// [`InputError`]s of the graph; [`ProgramError::Misuse`] if the program breaks a bound
/// (a comparison operand beyond its bit length, an address outside the memory).
pub fn run_plain(
    vertices: u64,
    edges: &[Edge],
    source: u64,
    hides_op_type: bool,
) -> Result<(Vec<Option<u64>>, PlainCounts), ProgramError> {
    if vertices == 0 || source >= vertices {
        return Err(InputError::VertexOutOfRange {
            line: 0,
            vertex: source,
            vertices,
        }
        .into());
    }
    let weights = matrix(vertices, edges)?;
    let mut m = PlainRam::new(hides_op_type);
    let w: Vec<Fp> = weights.into_iter().map(Fp::from_u64).collect();
    let dist = dijkstra(&mut m, &w, vertices as usize, Fp::from_u64(source))?;
    let out = dist
        .into_iter()
        .map(|x| to_int(x, u128::from(INF) + 1, "distance").map(|d| (d < INF).then_some(d)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((out, m.counts()))
}

/// One party's run with the backend `D`: the owner passes `Some((V, edges))`, the querier
/// `Some(source)`, the others `None`. The owner announces V and E.
///
/// # Errors
/// As [`Program::run_with`], with the bounds [`MAX_V`],
/// [`MAX_E`].
fn run_with<D: Backend>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
) -> Result<PartyRun<Vec<Option<u64>>>, ProgramError> {
    check_graph_inputs(session.me(), &roles, graph, source, MAX_V)?;
    let weights = graph.map(|(v, edges)| matrix(v, edges)).transpose()?;
    let (v, _) = announce_graph(
        &mut session,
        "dijkstra",
        D::NAME,
        &roles,
        graph,
        source,
        [MAX_V, MAX_E],
    )?;
    let mut m = Machine::<D>::setup(session, seed)?;
    let source = m.input_scalar(roles.querier, source)?;
    let mut cols = m.input_vector(roles.owner, weights.as_deref(), v * v)?;
    drop(weights);
    transpose(&mut cols, v);
    let dist = dijkstra_columns(&mut m, &cols, v, source)?;
    drop(cols);
    let out = m.engine_in(Part::Output, |on| on.open_to(roles.receiver, &dist))?;
    let output = out
        .map(|vals| {
            vals.into_iter()
                .map(|x| to_int(x, u128::from(INF) + 1, "distance").map(|d| (d < INF).then_some(d)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(PartyRun::from_machine(&mut m, output))
}

/// Shortest-path lengths from a source ([`dijkstra`]). Owner: (V, edges); querier: the source; output: each vertex's
/// distance, `None` if unreachable.
#[derive(Clone, Copy, Debug)]
pub struct Dijkstra;

impl Program for Dijkstra {
    const NAME: &'static str = "dijkstra";
    type Data<'a> = (u64, &'a [Edge]);
    type Query = u64;
    type Output = Vec<Option<u64>>;

    fn reference((vertices, edges): (u64, &[Edge]), source: u64) -> Vec<Option<u64>> {
        plain(vertices, edges, source)
    }

    fn run_with<D: Backend>(
        session: Session,
        seed: Seed,
        roles: Roles,
        graph: Option<(u64, &[Edge])>,
        source: Option<u64>,
    ) -> Result<PartyRun<Vec<Option<u64>>>, ProgramError> {
        run_with::<D>(session, seed, roles, graph, source)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn transpose_in_place() {
        let mut w: Vec<u32> = (0..9).collect();
        transpose(&mut w, 3);
        assert_eq!(w, [0, 3, 6, 1, 4, 7, 2, 5, 8]);
    }
}
