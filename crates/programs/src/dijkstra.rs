//! Dijkstra's single-source shortest paths with secret non-negative edge weights.
//!
//! **Inputs**: the data owner's weighted directed graph (V vertices, E edges, weights in
//! `0..=`[`MAX_WEIGHT`](crate::input::MAX_WEIGHT)), the querier's source s < V. **Output**:
//! for every vertex the length of a shortest path from s, `None` if unreachable (internally
//! the sentinel [`INF`] = 2^44, above every path of up to [`MAX_V`] − 1 edges of weight
//! < 2^32).
//!
//! **Algorithm**: the dense O(V²) form of Dijkstra run under a secret permutation of the
//! vertices, so that the vertex each iteration settles can be revealed (the shuffle-and-reveal
//! technique of oblivious graph algorithms, e.g. Blanton, Steele and Aliasgari, ASIACCS 2013).
//! The engine holds the V × V weight matrix `W` (the smallest weight among parallel edges,
//! [`INF`] where there is no edge, self loops dropped) and the distances; no memory access is
//! needed.
//! 1. dist_j = INF·(1 − \[j = s\]) (V equalities), then one oblivious shuffle π moves
//!    dist, the vertex ids and the rows and columns of `W` (three rounds): vertex u sits at
//!    position π(u), which no party knows.
//! 2. V iterations over the positions not yet settled (a public set):
//!    1. the smallest key dist·2^b + id (b = ⌈log₂ V⌉ bits of id break ties by the original
//!       vertex id) by a tournament: ⌈log₂ c⌉ levels for c open positions, each one batch of
//!       less-than and one of selects of the key and the position;
//!    2. the winner's position p is opened (one round) and settled;
//!    3. relax every open position q: dist_q := min(dist_q, dist_p + W'\[p\]\[q\]) (one
//!       batch of less-than, one of selects) — W' is the shuffled matrix, read at the public
//!       p, so no product is needed for the row.
//! 3. The inverse shuffle puts the distances back in vertex order (three rounds).
//!
//! **Why opening p is safe**: keys are distinct (the ids), so the settling order σ is a
//! function of the graph and s alone, and the opened sequence π(σ(1)), …, π(σ(V)) is a uniform
//! random ordering of the positions whatever σ is, since π is uniform and independent of it.
//! Ties broken by position instead would leak: equal distances (e.g. every unreachable vertex)
//! would come out in increasing position order.
//!
//! Settled vertices are never improved (dist_p ≥ their distance), and an unreachable p has
//! dist_p = INF, so INF + w is never below any distance. Tentative distances stay below
//! 2^46 ([`DIST_BITS`]) and keys below 2^{45+b}.
//!
//! **Costs**: the owner inputs V² words (one round); V² − V less-than (V(V − 1)/2 at 45 + b
//! bits in tournaments, as many at 46 bits in relaxations) and V equalities at b bits; two
//! shuffles of V² + 2V and V values; per iteration with c open positions, 2(c − 1) + (c − 1)
//! selects; rounds per iteration ⌈log₂ c⌉·7 + 1 + 7 (a comparison batch is 6 rounds here). No
//! DORAM access; time and communication depend on V only (E is announced but not used).
//!
//! **Memory**: the matrix's V² shares (32 bytes each) are moved into the shuffle, whose steps
//! hold about 80 bytes per value at their peak, and the shuffled matrix stays: at V = 4096,
//! E = 40 960 a run took 24 s and 3.7 GB of peak RSS for the three parties together.

use doram_core::Seed;
use doram_field::Fp;
use doram_net::Session;

use crate::bfs::Csr;
use crate::error::{InputError, ProgramError};
use crate::host::Host;
use crate::input::Edge;
use crate::machine::{Plan, bits_for, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, announce_graph, check_graph_inputs};

/// The "no path" and "no edge" sentinel: 2^44, above every path of up to 2^12 − 1 edges of
/// weight below 2^32.
pub const INF: u64 = 1 << 44;

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
    Plan {
        accesses: 0,
        comparisons: v * v,
        bits: 0,
    }
}

/// The sentinel and bit length of a shortest-path run: distances are at most `inf` (no
/// path), and dist + w stays below 2^`dist_bits`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub(crate) inf: u64,
    pub(crate) dist_bits: u32,
}

/// Dijkstra's bounds: [`INF`] and [`DIST_BITS`].
const WEIGHTED: Bounds = Bounds {
    inf: INF,
    dist_bits: DIST_BITS,
};

/// Bits b of the vertex ids and of the tournament keys dist·2^b + id for V vertices.
fn key_bits(vertices: usize, bounds: Bounds) -> (u32, u32) {
    let b = bits_for(vertices.saturating_sub(1) as u64);
    (b, bits_for(bounds.inf) + b)
}

/// The program: shortest-path lengths from the secret `source` over the secret weight matrix
/// `w` (V² words, row-major). Returns the distances (INF for unreachable vertices).
///
/// # Errors
/// The machine's errors; [`ProgramError::BadOutput`] if an opened position is not an open one
/// (a peer deviated).
pub fn dijkstra<R: Ram>(
    m: &mut R,
    w: Vec<R::Word>,
    vertices: usize,
    source: R::Word,
) -> Result<Vec<R::Word>, ProgramError> {
    shortest_paths(m, w, vertices, source, WEIGHTED)
}

/// [`dijkstra`] for any [`Bounds`] (BFS's dense form uses it with unit weights).
pub(crate) fn shortest_paths<R: Ram>(
    m: &mut R,
    w: Vec<R::Word>,
    vertices: usize,
    source: R::Word,
    bounds: Bounds,
) -> Result<Vec<R::Word>, ProgramError> {
    let v = vertices;
    if w.len() != v * v {
        return Err(ProgramError::Misuse(
            "the weight matrix must have V² entries",
        ));
    }
    let (b, _) = key_bits(v, bounds);
    let ids: Vec<R::Word> = (0..v as u64).map(|j| m.int(j)).collect();
    let inf = m.int(bounds.inf);
    // Step 1: dist_j = INF·(1 − [j = s]), then the shuffle.
    let pairs: Vec<_> = ids.iter().map(|&j| (j, source)).collect();
    let at = m.eq_many(&pairs, b)?;
    let dist: Vec<R::Word> = at
        .iter()
        .map(|&e| inf - R::value(e) * Fp::from_u64(bounds.inf))
        .collect();
    let sh = m.new_shuffle(v)?;
    let (mut vecs, mut mats) = m.shuffle(&sh, vec![dist, ids], vec![w], false)?;
    let (Some(wp), Some(ids), Some(mut dist)) = (mats.pop(), vecs.pop(), vecs.pop()) else {
        return Err(ProgramError::Misuse("shuffle output"));
    };
    // Step 2: settle one position per iteration.
    let mut open: Vec<usize> = (0..v).collect();
    for _ in 0..v {
        let p = settle_next(m, &dist, &ids, &open, v, bounds)?;
        open.retain(|&q| q != p);
        relax(m, &mut dist, &wp[p * v..(p + 1) * v], p, &open, bounds)?;
    }
    // Step 3: back to vertex order.
    let (mut back, _) = m.shuffle(&sh, vec![dist], Vec::new(), true)?;
    back.pop().ok_or(ProgramError::Misuse("shuffle output"))
}

/// Steps 2.1–2.2: the open position with the smallest key dist·2^b + id, by a tournament of
/// comparisons carrying the positions, then opened.
fn settle_next<R: Ram>(
    m: &mut R,
    dist: &[R::Word],
    ids: &[R::Word],
    open: &[usize],
    v: usize,
    bounds: Bounds,
) -> Result<usize, ProgramError> {
    let (b, bits) = key_bits(v, bounds);
    let shift = Fp::from_u64(1 << b);
    let mut items: Vec<(R::Word, R::Word)> = open
        .iter()
        .map(|&p| (dist[p] * shift + ids[p], m.int(p as u64)))
        .collect();
    while items.len() > 1 {
        let pairs: Vec<_> = items.chunks_exact(2).map(|q| (q[1].0, q[0].0)).collect();
        let right = m.lt_many(&pairs, bits)?;
        let mut sel = Vec::with_capacity(2 * pairs.len());
        for (q, &r) in items.chunks_exact(2).zip(&right) {
            sel.push((r, q[1].0, q[0].0));
            sel.push((r, q[1].1, q[0].1));
        }
        let chosen = m.select_many(&sel)?;
        let mut next: Vec<_> = chosen.chunks_exact(2).map(|c| (c[0], c[1])).collect();
        if items.len() % 2 == 1 {
            next.push(items[items.len() - 1]);
        }
        items = next;
    }
    let (_, pos) = *items
        .first()
        .ok_or(ProgramError::Misuse("no open position"))?;
    let p = m.reveal_many(&[pos])?[0];
    let p = usize::try_from(to_int(p, v as u128, "settled position")?)
        .map_err(|_| ProgramError::BadOutput("settled position"))?;
    if !open.contains(&p) {
        return Err(ProgramError::BadOutput("settled position is not open"));
    }
    Ok(p)
}

/// Step 2.3: dist_q := min(dist_q, dist_p + row\[q\]) for every open q.
fn relax<R: Ram>(
    m: &mut R,
    dist: &mut [R::Word],
    row: &[R::Word],
    p: usize,
    open: &[usize],
    bounds: Bounds,
) -> Result<(), ProgramError> {
    let du = dist[p];
    let nd: Vec<R::Word> = open.iter().map(|&q| du + row[q]).collect();
    let pairs: Vec<_> = open.iter().zip(&nd).map(|(&q, &x)| (x, dist[q])).collect();
    let better = m.lt_many(&pairs, bounds.dist_bits)?;
    let sel: Vec<_> = open
        .iter()
        .zip(&nd)
        .zip(&better)
        .map(|((&q, &x), &f)| (f, x, dist[q]))
        .collect();
    let new = m.select_many(&sel)?;
    for (&q, x) in open.iter().zip(new) {
        dist[q] = x;
    }
    Ok(())
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
    let dist = dijkstra(&mut m, w, vertices as usize, Fp::from_u64(source))?;
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
fn run_on<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
) -> Result<PartyRun<Vec<Option<u64>>>, ProgramError> {
    check_graph_inputs(session.me(), &roles, graph, source, MAX_V, H::PARTIES)?;
    let weights = graph.map(|(v, edges)| matrix(v, edges)).transpose()?;
    let (v, _) = announce_graph(
        &mut session,
        "dijkstra",
        H::BACKEND,
        &roles,
        graph,
        source,
        [MAX_V, MAX_E],
    )?;
    let mut m = H::setup(session, seed)?;
    let source = m.input_scalar(roles.querier, source)?;
    let w = m.input_vector(roles.owner, weights.as_deref(), v * v)?;
    drop(weights);
    let dist = dijkstra(&mut m, w, v, source)?;
    let out = m.open_to(roles.receiver, &dist)?;
    let output = out
        .map(|vals| {
            vals.into_iter()
                .map(|x| to_int(x, u128::from(INF) + 1, "distance").map(|d| (d < INF).then_some(d)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(m.finish(output))
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

    fn run_on<H: Host>(
        session: Session,
        seed: Seed,
        roles: Roles,
        graph: Option<(u64, &[Edge])>,
        source: Option<u64>,
    ) -> Result<PartyRun<Vec<Option<u64>>>, ProgramError> {
        run_on::<H>(session, seed, roles, graph, source)
    }
}
