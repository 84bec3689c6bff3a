//! Breadth-first search: hop distances from a secret source in a secret directed graph.
//!
//! **Inputs**: the data owner's graph (V vertices, E directed edges as [`Edge`]s; list both
//! directions for an undirected graph), the querier's source s < V. **Output**: for every
//! vertex its distance from s in edges, `None` if unreachable.
//!
//! **Two forms**, chosen from the public V and E by [`form`] (both give the same output):
//!
//! **Dense** ([`Form::Dense`], V ≤ [`DENSE_MAX_V`]): Dijkstra's shuffled dense form
//! ([`crate::dijkstra`]) on the matrix with weight 1 for an edge and the sentinel V
//! elsewhere; no memory access. Comparisons at ⌈log₂(2V + 1)⌉ bits (relaxation) and
//! ⌈log₂(V + 1)⌉ + ⌈log₂ V⌉ bits (tournament keys): V² in all; the owner inputs V² words.
//!
//! **Queue** ([`Form::Queue`]): the queue-based BFS made oblivious with a fixed number of uniform steps
//! (the "V + E steps" formulation: every step either pops a vertex or scans one edge, so
//! V + E steps always suffice — each vertex is popped at most once and each edge scanned at
//! most once — and steps beyond the real work are idle). The memory holds, in one DORAM:
//! the queue `Q` (V + 1 words, Q\[0\] = s), the distances `D` (V words, initially the sentinel
//! V; D\[s\] is set to 0 by one write), the CSR offsets `OFF` (V + 1 words) and targets `T`
//! (E + 1 words, the last a padding 0). Registers in the engine: head, tail, the edge pointer
//! ptr and end of the current vertex, and its distance du. Each step:
//! 1. is_end = [ptr = end], empty = [head = tail] (one batch of equalities);
//!    pop = is_end ∧ ¬empty, edge = ¬is_end (idle when both are 0);
//! 2. w = read(pop ? Q + head : T + ptr) — one access whose address is selected between two
//!    arrays of the same memory;
//! 3. dw = D\[w\], sw = OFF\[w\], ew = OFF[w + 1] (three reads, one conversion round);
//! 4. visit = edge ∧ [dw = V]; on pop: ptr, end, du := sw, ew, dw and head += 1; on edge:
//!    ptr += 1;
//! 5. if visit: D\[w\] := du + 1, Q\[tail\] := w, tail += 1 (two conditional writes).
//!
//! **Costs of the queue form**, with b = bits of max(V, E):
//! * DORAM accesses: 1 + 6·(V + E) on a backend that hides the op type (two conditional writes
//!   are one access each), 1 + 7·(V + E) on one that reveals it (a read before the queue
//!   write; the distance write knows its old value);
//! * comparisons: 3·(V + E) equalities at b bits;
//! * rounds per step: two comparison batches, 4 for products and selects, 2 conversions, plus
//!   the accesses' own (and 2 more on a revealing backend).
//!
//! Time and access pattern depend on V and E only.

use doram_core::Seed;
use doram_field::Fp;
use doram_net::Session;

use crate::error::{InputError, ProgramError};
use crate::host::Host;
use crate::input::Edge;
use crate::machine::{OArray, Plan, bits_for, to_int};
use crate::program::Program;
use crate::ram::{PlainCounts, PlainRam, Ram};
use crate::roles::{PartyRun, Roles, announce_graph, check_graph_inputs};

/// The largest vertex count the entry points accept.
pub const MAX_V: u64 = 1 << 20;
/// The largest vertex count of the dense form (its matrix has V² words).
pub const DENSE_MAX_V: u64 = 1 << 12;
/// The dense form is chosen while V² ≤ this × (V + E): measured on two cores with three local
/// parties, a queue step costs about 2000 times a dense run's time per V² (4.7 ms per step
/// at V = 300, E = 3000 on Duoram; 2.1 s for V² = 10^6 at V = 1000).
pub const DENSE_RATIO: usize = 2000;

/// How a BFS run is computed (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Shuffled dense Dijkstra on unit weights: O(V²) comparisons, no memory access.
    Dense,
    /// The oblivious queue over a DORAM: O(V + E) accesses.
    Queue,
}

/// The form for V vertices and E edges: dense while V ≤ [`DENSE_MAX_V`] and
/// V² ≤ [`DENSE_RATIO`]·(V + E).
pub fn form(vertices: usize, edges: usize) -> Form {
    let dense = vertices as u64 <= DENSE_MAX_V
        && vertices.saturating_mul(vertices) <= DENSE_RATIO.saturating_mul(vertices + edges);
    if dense { Form::Dense } else { Form::Queue }
}
/// The largest edge count the entry points accept.
pub const MAX_E: u64 = 1 << 22;

/// Compressed sparse rows of a directed graph: the edges of u are
/// `targets[offsets[u]..offsets[u + 1]]`, in input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr {
    /// V + 1 offsets.
    pub offsets: Vec<u64>,
    /// E targets.
    pub targets: Vec<u64>,
    /// E weights, parallel to `targets`.
    pub weights: Vec<u64>,
}

impl Csr {
    /// The CSR form of `edges` over `vertices` vertices (edges must be in range, as
    /// [`parse_edges`](crate::input::parse_edges) guarantees).
    ///
    /// # Errors
    /// [`InputError::VertexOutOfRange`] for an edge outside the graph.
    pub fn new(vertices: u64, edges: &[Edge]) -> Result<Csr, InputError> {
        let v = vertices as usize;
        let mut count = vec![0u64; v + 1];
        for (i, e) in edges.iter().enumerate() {
            for x in [e.from, e.to] {
                if x >= vertices {
                    return Err(InputError::VertexOutOfRange {
                        line: i + 1,
                        vertex: x,
                        vertices,
                    });
                }
            }
            count[e.from as usize + 1] += 1;
        }
        for i in 0..v {
            count[i + 1] += count[i];
        }
        let mut next = count.clone();
        let mut targets = vec![0; edges.len()];
        let mut weights = vec![0; edges.len()];
        for e in edges {
            let slot = &mut next[e.from as usize];
            targets[*slot as usize] = e.to;
            weights[*slot as usize] = e.weight;
            *slot += 1;
        }
        Ok(Csr {
            offsets: count,
            targets,
            weights,
        })
    }
}

/// Plaintext BFS distances (the reference). Edges outside the graph are ignored.
pub fn plain(vertices: u64, edges: &[Edge], source: u64) -> Vec<Option<u64>> {
    let v = vertices as usize;
    let mut adj = vec![Vec::new(); v];
    for e in edges
        .iter()
        .filter(|e| e.from < vertices && e.to < vertices)
    {
        adj[e.from as usize].push(e.to as usize);
    }
    let mut dist = vec![None; v];
    let mut queue = std::collections::VecDeque::new();
    if (source as usize) < v {
        dist[source as usize] = Some(0);
        queue.push_back(source as usize);
    }
    while let Some(u) = queue.pop_front() {
        let du = dist[u].unwrap_or(0);
        for &w in &adj[u] {
            if dist[w].is_none() {
                dist[w] = Some(du + 1);
                queue.push_back(w);
            }
        }
    }
    dist
}

/// Accesses, comparisons and random bits for V vertices and E edges in `form`, on a backend
/// that hides the op type (`hides_op`) or not.
pub fn plan(vertices: usize, edges: usize, hides_op: bool, form: Form) -> Plan {
    if form == Form::Dense {
        return crate::dijkstra::plan(vertices);
    }
    let steps = vertices + edges;
    let per_step = if hides_op { 6 } else { 7 };
    Plan {
        accesses: 1 + per_step * steps,
        comparisons: 3 * steps,
        bits: 0,
    }
}

/// The dense form's matrix: row-major V × V, 1 for an edge, V (the sentinel) elsewhere and on
/// the diagonal.
pub fn dense_matrix(vertices: u64, edges: &[Edge]) -> Result<Vec<u64>, InputError> {
    Csr::new(vertices, edges)?; // range checks
    let v = vertices as usize;
    let mut w = vec![vertices; v * v];
    for e in edges.iter().filter(|e| e.from != e.to) {
        w[e.from as usize * v + e.to as usize] = 1;
    }
    Ok(w)
}

/// The dense form: hop distances from `source` over the matrix of [`dense_matrix`] (V² words),
/// V for unreachable vertices.
///
/// # Errors
/// The machine's errors.
pub fn bfs_dense<R: Ram>(
    m: &mut R,
    w: Vec<R::Word>,
    vertices: usize,
    source: R::Word,
) -> Result<Vec<R::Word>, ProgramError> {
    let bounds = crate::dijkstra::Bounds {
        inf: vertices as u64,
        dist_bits: bits_for(2 * vertices as u64),
    };
    crate::dijkstra::shortest_paths(m, w, vertices, source, bounds)
}

/// The memory of a BFS run.
#[derive(Clone, Copy, Debug)]
pub struct BfsMemory {
    /// The queue, V + 1 words, Q\[0\] = source.
    pub queue: OArray,
    /// Distances, V words, initially V (the sentinel).
    pub dist: OArray,
    /// CSR offsets, V + 1 words.
    pub offsets: OArray,
    /// CSR targets and a padding word, E + 1 words.
    pub targets: OArray,
}

/// The program: runs V + E steps over `mem` from the secret `source`; the distances are in
/// `mem.dist` afterwards (the sentinel V for unreachable vertices).
///
/// # Errors
/// The machine's errors.
pub fn bfs<R: Ram>(m: &mut R, mem: &BfsMemory, source: R::Word) -> Result<(), ProgramError> {
    let v = mem.dist.len();
    let e = mem.targets.len().saturating_sub(1);
    let b = bits_for(v.max(e) as u64);
    // D[s] := 0.
    let zero = m.int(0);
    m.write(mem.dist, source, zero)?;
    let (mut head, mut tail) = (m.int(0), m.int(1));
    let (mut ptr, mut end, mut du) = (m.int(0), m.int(0), m.int(0));
    let inf = m.int(v as u64);
    let one = m.int(1);
    for _ in 0..v + e {
        // Step 1.
        let f = m.eq_many(&[(ptr, end), (head, tail)], b)?;
        let not_empty = m.not(f[1]);
        let pop = m.and_many(&[(f[0], not_empty)])?[0];
        let edge = m.not(f[0]);
        // Step 2.
        let (at_head, at_ptr) = (m.addr(mem.queue, head), m.addr(mem.targets, ptr));
        let addr = m.select_many(&[(pop, at_head, at_ptr)])?[0];
        let w = m.read_addr(addr)?;
        // Step 3.
        let r = m.read_many(&[(mem.dist, w), (mem.offsets, w), (mem.offsets, w + one)])?;
        let (dw, sw, ew) = (r[0], r[1], r[2]);
        // Step 4.
        let unvisited = m.eq_many(&[(dw, inf)], b)?[0];
        let p = m.mul_many(&[
            (R::value(edge), R::value(unvisited)),
            (R::value(pop), sw - ptr),
            (R::value(pop), ew - end),
            (R::value(pop), dw - du),
        ])?;
        let visit = R::assume_bit(p[0]);
        // Step 5 (du is still the current vertex's distance).
        m.cond_write_known(mem.dist, w, visit, du + one, dw)?;
        m.cond_write(mem.queue, tail, visit, w)?;
        ptr = ptr + R::value(edge) + p[1];
        end += p[2];
        du += p[3];
        head += R::value(pop);
        tail += R::value(visit);
    }
    Ok(())
}

/// Runs the program on the plaintext machine [`PlainRam`] (the memory access sequence of a
/// backend that hides the op type if `hides_op_type`), with the memory layout of
/// [`Program::run_with`]: the distances, `None` for unreachable vertices, and what the run did.
///
/// # Errors
/// [`InputError`]s of the graph and source; [`ProgramError::Misuse`] if the program breaks a
/// bound (a comparison operand beyond its bit length, an address outside the memory).
pub fn run_plain(
    vertices: u64,
    edges: &[Edge],
    source: u64,
    hides_op_type: bool,
    form: Form,
) -> Result<(Vec<Option<u64>>, PlainCounts), ProgramError> {
    if vertices == 0 || source >= vertices {
        return Err(InputError::VertexOutOfRange {
            line: 0,
            vertex: source,
            vertices,
        }
        .into());
    }
    let v = vertices as usize;
    let mut m = PlainRam::new(hides_op_type);
    if form == Form::Dense {
        let w: Vec<Fp> = dense_matrix(vertices, edges)?
            .into_iter()
            .map(Fp::from_u64)
            .collect();
        let d = bfs_dense(&mut m, w, v, Fp::from_u64(source))?;
        return Ok((distances(d, v)?, m.counts()));
    }
    let csr = Csr::new(vertices, edges)?;
    let queue = m.alloc_ints(&[source])?;
    let queue = queue
        .join(m.alloc_ints(&vec![0; v])?)
        .ok_or(ProgramError::Misuse("layout"))?;
    let dist = m.alloc_ints(&vec![v as u64; v])?;
    let offsets = m.alloc_ints(&csr.offsets)?;
    let targets = m.alloc_ints(&csr.targets)?;
    let targets = targets
        .join(m.alloc_ints(&[0])?)
        .ok_or(ProgramError::Misuse("layout"))?;
    let mem = BfsMemory {
        queue,
        dist,
        offsets,
        targets,
    };
    m.boot()?;
    bfs(&mut m, &mem, Fp::from_u64(source))?;
    let d = m.snapshot(&[mem.dist])?.remove(0);
    Ok((distances(d, v)?, m.counts()))
}

/// Opened distances with the sentinel V as `None`.
fn distances(d: Vec<Fp>, v: usize) -> Result<Vec<Option<u64>>, ProgramError> {
    d.into_iter()
        .map(|x| to_int(x, v as u128 + 1, "distance").map(|d| (d < v as u64).then_some(d)))
        .collect()
}

/// One party's run with the backend `D`: the owner passes `Some((V, edges))`, the querier
/// `Some(source)`, the others `None`. The owner announces V and E; the receiver gets the
/// distances. `form`: `None` for [`form`]'s choice.
///
/// # Errors
/// [`ProgramError::Input`] for a wrong role input, V = 0 or a source ≥ V (at the party that
/// holds it, before it sends); [`ProgramError::BadSizes`] for announced sizes above
/// [`MAX_V`], [`MAX_E`] (or V above [`DENSE_MAX_V`] for the dense form); transport, engine
/// and DORAM errors.
fn run_on<H: Host>(
    mut session: Session,
    seed: Seed,
    roles: Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
    (name, form_wanted): (&str, Option<Form>),
) -> Result<PartyRun<Vec<Option<u64>>>, ProgramError> {
    check_graph_inputs(session.me(), &roles, graph, source, MAX_V, H::PARTIES)?;
    let (v, e) = announce_graph(
        &mut session,
        name,
        H::BACKEND,
        &roles,
        graph,
        source,
        [MAX_V, MAX_E],
    )?;
    let form = form_wanted.unwrap_or_else(|| form(v, e));
    if form == Form::Dense && v as u64 > DENSE_MAX_V {
        return Err(ProgramError::BadSizes {
            peer: roles.owner,
            reason: format!("V = {v} is above the dense form's {DENSE_MAX_V}"),
        });
    }
    let mut m = H::setup(session, seed)?;
    let d = match form {
        Form::Dense => {
            let w = graph
                .map(|(vv, edges)| dense_matrix(vv, edges))
                .transpose()?;
            let source = m.input_scalar(roles.querier, source)?;
            let w = m.input_vector(roles.owner, w.as_deref(), v * v)?;
            bfs_dense(&mut m, w, v, source)?
        }
        Form::Queue => run_queue(&mut m, &roles, graph, source, (v, e))?,
    };
    let out = m.open_to(roles.receiver, &d)?;
    let output = out.map(|vals| distances(vals, v)).transpose()?;
    Ok(m.finish(output))
}

/// The queue form on the machine: lays out and loads the memory, runs [`bfs`], and returns
/// the distances as secrets.
fn run_queue<H: Host>(
    m: &mut H,
    roles: &Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
    (v, e): (usize, usize),
) -> Result<Vec<H::Word>, ProgramError> {
    let csr = graph.map(|(v, edges)| Csr::new(v, edges)).transpose()?;
    let p = plan(v, e, m.hides_op_type(), Form::Queue);
    m.preprocess_bits(p.bits)?;
    let source = m.input_scalar(roles.querier, source)?;
    let q0 = m.alloc_secret(&[source])?;
    let q_rest = m.alloc_fill(v, 0)?;
    let queue = q0.join(q_rest).ok_or(ProgramError::Misuse("layout"))?;
    let dist = m.alloc_fill(v, v as u64)?;
    let offsets = m.alloc_input(roles.owner, csr.as_ref().map(|c| &c.offsets[..]), v + 1)?;
    let t = m.alloc_input(roles.owner, csr.as_ref().map(|c| &c.targets[..]), e)?;
    let pad = m.alloc_fill(1, 0)?;
    let targets = t.join(pad).ok_or(ProgramError::Misuse("layout"))?;
    let mem = BfsMemory {
        queue,
        dist,
        offsets,
        targets,
    };
    m.boot(p.accesses)?;
    bfs(m, &mem, source)?;
    Ok(m.snapshot(&[mem.dist])?.remove(0))
}

/// Breadth-first search from a source, in the [`form`] chosen from V and E. Owner: (V,
/// edges); querier: the source; output: each vertex's distance, `None` if unreachable.
#[derive(Clone, Copy, Debug)]
pub struct Bfs;

/// [`Bfs`] always in the queue form (for tests and benchmarks of that form).
#[derive(Clone, Copy, Debug)]
pub struct BfsQueue;

/// [`Bfs`] always in the dense form (V ≤ [`DENSE_MAX_V`]).
#[derive(Clone, Copy, Debug)]
pub struct BfsDense;

macro_rules! bfs_program {
    ($ty:ty, $name:literal, $form:expr) => {
        impl Program for $ty {
            const NAME: &'static str = $name;
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
                run_on::<H>(session, seed, roles, graph, source, ($name, $form))
            }
        }
    };
}

bfs_program!(Bfs, "bfs", None);
bfs_program!(BfsQueue, "bfs-queue", Some(Form::Queue));
bfs_program!(BfsDense, "bfs-dense", Some(Form::Dense));
