//! [`Program`]: one shape for every program's entry points. A program type says what the data
//! owner and the querier bring, what the receiver gets, what the plaintext reference answers,
//! and how one party runs it on a backend; [`run_party`] (one party) and [`run_local`] /
//! [`run_local_on`] (three parties as threads) are written once for all of them, generic over
//! the [`Backend`]. Choosing the backend at run time, by name, is the facade's job (the `doram`
//! crate's `BackendKind`), so that this crate depends on no particular protocol.

use doram_core::{Entropy, Seed};
use doram_net::{LocalMesh, Session};

use crate::error::ProgramError;
use crate::host::Host;
use crate::machine::{Backend, Machine};
use crate::roles::{PartyRun, Roles};
use crate::two::Machine2;

/// A secure RAM program with its roles' inputs and output.
pub trait Program {
    /// The program's name, as the parties agree on it before running.
    const NAME: &'static str;
    /// What the data owner brings (the sorted array, the graph, the preference lists).
    type Data<'a>: Copy + Send + Sync;
    /// What the querier brings (a key, a source vertex; `()` if the program has no query).
    type Query: Copy + Send + Sync;
    /// What the receiver learns.
    type Output: Send;

    /// The plaintext reference: an independent implementation in the clear, the oracle the
    /// secure runs are checked against.
    fn reference(data: Self::Data<'_>, query: Self::Query) -> Self::Output;

    /// One party's run on the machine `H` (the three-party [`Machine`] over a backend, or the
    /// two-party [`Machine2`]): the owner passes `Some(data)`, the querier `Some(query)`,
    /// everybody else `None`; the receiver's run has `Some(output)`.
    ///
    /// # Errors
    /// Input errors at the party that holds the input (before it sends anything); announced
    /// sizes out of bounds; transport, engine and memory errors.
    fn run_on<H: Host>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<Self::Data<'_>>,
        query: Option<Self::Query>,
    ) -> Result<PartyRun<Self::Output>, ProgramError>;

    /// One party's run on the three-party machine over the backend `D`.
    ///
    /// # Errors
    /// As [`run_on`](Program::run_on).
    fn run_with<D: Backend>(
        session: Session,
        seed: Seed,
        roles: Roles,
        data: Option<Self::Data<'_>>,
        query: Option<Self::Query>,
    ) -> Result<PartyRun<Self::Output>, ProgramError> {
        Self::run_on::<Machine<D>>(session, seed, roles, data, query)
    }
}

/// One party's run of `P` on the backend `B`, with this party's `seed` (uniform and known to
/// nobody else: [`Seed::from_os_entropy`] for a real run): the owner passes `Some(data)`, the
/// querier `Some(query)`, everybody else `None`.
///
/// # Errors
/// As [`Program::run_with`].
pub fn run_party<P: Program, B: Backend>(
    session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<P::Data<'_>>,
    query: Option<P::Query>,
) -> Result<PartyRun<P::Output>, ProgramError> {
    P::run_with::<B>(session, seed, roles, data, query)
}

/// Runs `P` on the backend `B` on three threads over an in-process mesh, each party's seed
/// from `entropy`; the owner gets `data`, the querier `query`. Returns the three runs (the
/// receiver's has the output).
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local<P: Program, B: Backend>(
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    run_local_on::<P, B>(LocalMesh::new(3), roles, data, query, entropy)
}

/// [`run_local`] on the given mesh (e.g. with traffic shaping or a tamper hook).
///
/// # Errors
/// As [`run_local`].
pub fn run_local_on<P: Program, B: Backend>(
    mesh: LocalMesh,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 3], ProgramError> {
    let runs = run_local_host::<P, Machine<B>>(mesh, roles, data, query, entropy)?;
    <[PartyRun<P::Output>; 3]>::try_from(runs).map_err(|_| ProgramError::Misuse("missing party"))
}

/// One party's run of `P` between two parties ([`Machine2`]): `session` has two parties.
///
/// # Errors
/// As [`Program::run_on`].
pub fn run_party2<P: Program>(
    session: Session,
    seed: Seed,
    roles: Roles,
    data: Option<P::Data<'_>>,
    query: Option<P::Query>,
) -> Result<PartyRun<P::Output>, ProgramError> {
    P::run_on::<Machine2>(session, seed, roles, data, query)
}

/// Runs `P` between two parties on two threads over an in-process mesh, each party's seed from
/// `entropy`. Returns the two runs (the receiver's has the output).
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local2<P: Program>(
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<[PartyRun<P::Output>; 2], ProgramError> {
    let runs = run_local_host::<P, Machine2>(LocalMesh::new(2), roles, data, query, entropy)?;
    <[PartyRun<P::Output>; 2]>::try_from(runs).map_err(|_| ProgramError::Misuse("missing party"))
}

/// Runs `P` on the machine `H` with one thread per party over `mesh` (of `H::PARTIES`
/// parties), each party's seed from `entropy`. Returns the runs in party order.
///
/// # Errors
/// The first party's error, in party order.
pub fn run_local_host<P: Program, H: Host>(
    mesh: LocalMesh,
    roles: Roles,
    data: P::Data<'_>,
    query: P::Query,
    entropy: Entropy,
) -> Result<Vec<PartyRun<P::Output>>, ProgramError> {
    let results = doram_net::run_parties(mesh.build(), "program", |session| {
        let me = session.me();
        let seed = entropy.party_seed(me, "program");
        let d = (me == roles.owner).then_some(data);
        let q = (me == roles.querier).then_some(query);
        P::run_on::<H>(session, seed, roles, d, q)
    });
    // All threads have ended: a panic is passed on as it was, before any party's error.
    let mut runs = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok(r) => runs.push(r),
            Err(p) => std::panic::resume_unwind(p),
        }
    }
    runs.into_iter().collect()
}
