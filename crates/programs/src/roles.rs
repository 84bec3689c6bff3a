//! Who plays which part in a program run ([`Roles`]), the public sizes the data owner
//! announces ([`announce_sizes`]), and the plumbing every program's
//! [`run_party`](crate::run_party) and [`run_local`](crate::run_local) share.

use doram_core::{Entropy, PartyId, Seed};
use doram_net::{Session, Transcript, run_parties};

use crate::error::{InputError, ProgramError};
use crate::input::Edge;
use crate::machine::{Backend, Machine, Meter};
use doram_mpc::Counters;

/// The parties of a run, by role. Roles may coincide (e.g. the data owner also receives the
/// output); every party of the session takes part in the computation whatever its roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roles {
    /// Holds the data (sorted array, graph, preference lists) and announces its public sizes.
    pub owner: PartyId,
    /// Holds the query (search key, source vertex); unused by stable matching.
    pub querier: PartyId,
    /// Learns the output; the other parties learn nothing but the public sizes.
    pub receiver: PartyId,
}

impl Default for Roles {
    /// `P0` owns the data, `P1` queries, `P2` receives.
    fn default() -> Self {
        Roles {
            owner: PartyId::P0,
            querier: PartyId::P1,
            receiver: PartyId::P2,
        }
    }
}

impl Roles {
    /// The two-party default: `P0` owns the data, `P1` queries and receives.
    pub fn two_party() -> Roles {
        Roles {
            owner: PartyId::P0,
            querier: PartyId::P1,
            receiver: PartyId::P1,
        }
    }

    /// Checks that every role names one of the three parties.
    ///
    /// # Errors
    /// [`ProgramError::BadRoles`].
    pub fn check(&self) -> Result<(), ProgramError> {
        self.check_for(3)
    }

    /// Checks that every role names one of the first `parties` parties.
    ///
    /// # Errors
    /// [`ProgramError::BadRoles`].
    pub fn check_for(&self, parties: usize) -> Result<(), ProgramError> {
        if [self.owner, self.querier, self.receiver]
            .iter()
            .all(|p| p.index() < parties)
        {
            Ok(())
        } else {
            Err(ProgramError::BadRoles)
        }
    }
}

/// What one party's run produced: its output (at the receiver) and its costs.
#[derive(Clone, Debug)]
pub struct PartyRun<T> {
    /// The output, at the receiver; `None` elsewhere.
    pub output: Option<T>,
    /// This party's costs, per part.
    pub meter: Meter,
    /// The engine's counters (comparisons, products, random bits).
    pub counters: Counters,
    /// The party's transcript, if the session was recording one when the run started
    /// ([`Session::record_transcript`]).
    pub transcript: Option<Transcript>,
    /// The digest of every byte the party sent, if the session was hashing them when the run
    /// started ([`Session::record_content_digest`]).
    pub content_digest: Option<[u8; 32]>,
}

impl<T> PartyRun<T> {
    pub(crate) fn from_machine<D: Backend>(m: &mut Machine<D>, output: Option<T>) -> Self {
        PartyRun {
            output,
            meter: m.meter().clone(),
            counters: m.engine().counters(),
            transcript: m.session_mut().and_then(|s| s.take_transcript()),
            content_digest: m.session().and_then(Session::content_digest),
        }
    }
}

/// Checks that all three parties run the same program on the same backend with the same
/// roles: each sends a short description to both others and compares (one round).
///
/// # Errors
/// [`ProgramError::ConfigMismatch`] naming the first peer that differs; a transport fault.
pub fn agree_on_run(
    session: &mut Session,
    program: &str,
    backend: &str,
    roles: &Roles,
) -> Result<(), ProgramError> {
    let ours = format!(
        "doram-programs/{program}/{backend}/owner={}/querier={}/receiver={}",
        roles.owner, roles.querier, roles.receiver
    );
    let peers = others(session);
    // Send to both even if one has already left (after finding a mismatch of its own), so
    // that the other learns about the mismatch rather than about a closed link.
    let mut send_failed = None;
    for &p in &peers {
        if let Err(e) = session.send_bytes(p, ours.as_bytes()) {
            send_failed.get_or_insert(e);
        }
    }
    for &p in &peers {
        let theirs = session.recv_bytes(p)?;
        if theirs != ours.as_bytes() {
            let shown = &theirs[..theirs.len().min(200)];
            return Err(ProgramError::ConfigMismatch {
                peer: p,
                ours,
                theirs: String::from_utf8_lossy(shown).into_owned(),
            });
        }
    }
    match send_failed {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// The other parties of the session: the successor first, then the predecessor (with two
/// parties, the one other).
fn others(session: &Session) -> Vec<PartyId> {
    let (me, n) = (session.me(), session.n_parties());
    if n == 2 {
        vec![me.next(2)]
    } else {
        vec![me.next(n), me.prev(n)]
    }
}

/// [`announce_sizes`] for a single size: `size` at `owner` (the length of its input), the
/// announced value everywhere.
///
/// # Errors
/// As [`announce_sizes`].
pub fn announce_size(
    session: &mut Session,
    owner: PartyId,
    size: Option<usize>,
    max: u64,
    name: &'static str,
) -> Result<usize, ProgramError> {
    let sizes = size.map(|s| [s as u64]);
    let got = announce_sizes(
        session,
        owner,
        sizes.as_ref().map(|s| &s[..]),
        &[max],
        &[name],
    )?;
    Ok(got[0] as usize)
}

/// The data owner sends the public sizes to both other parties, who check them against
/// `max` (element-wise) — one round; the owner passes `Some(sizes)`, the others `None`.
/// Returns the sizes at every party.
///
/// # Errors
/// [`ProgramError::BadSizes`] naming the owner if it announced a different number of sizes
/// or one above its bound; [`ProgramError::Input`] if the owner's own sizes are out of
/// bounds (before sending); a transport fault.
pub fn announce_sizes(
    session: &mut Session,
    owner: PartyId,
    sizes: Option<&[u64]>,
    max: &[u64],
    names: &[&'static str],
) -> Result<Vec<u64>, ProgramError> {
    let me = session.me();
    if me == owner {
        let sizes = sizes.ok_or(InputError::Role("the data owner must provide its data"))?;
        for ((&s, &m), &name) in sizes.iter().zip(max).zip(names) {
            if s > m {
                return Err(InputError::TooLarge {
                    what: name,
                    got: s,
                    max: m,
                }
                .into());
            }
        }
        for p in others(session) {
            session.send(p, &sizes.to_vec())?;
        }
        Ok(sizes.to_vec())
    } else {
        if sizes.is_some() {
            return Err(InputError::Role("only the data owner provides data").into());
        }
        let got: Vec<u64> = session.recv(owner)?;
        if got.len() != max.len() {
            return Err(ProgramError::BadSizes {
                peer: owner,
                reason: format!("{} sizes instead of {}", got.len(), max.len()),
            });
        }
        for ((&s, &m), &name) in got.iter().zip(max).zip(names) {
            if s > m {
                return Err(ProgramError::BadSizes {
                    peer: owner,
                    reason: format!("{name} = {s} > {m}"),
                });
            }
        }
        Ok(got)
    }
}

/// Runs `f` at each of three parties of a fresh in-process mesh, one thread each, each with its
/// own seed from `entropy` ([`Entropy::Os`]: fresh OS entropy per party); returns the three
/// results in party order. A panicking party is re-raised after the others have ended.
pub fn run_three<T: Send>(
    entropy: Entropy,
    f: impl Fn(Session, Seed) -> Result<T, ProgramError> + Sync,
) -> [Result<T, ProgramError>; 3] {
    run_three_on(Session::local_mesh(3), entropy, f)
}

/// [`run_three`] on the given three sessions (e.g. a [`LocalMesh`](doram_net::LocalMesh) with
/// traffic shaping).
pub fn run_three_on<T: Send>(
    sessions: Vec<Session>,
    entropy: Entropy,
    f: impl Fn(Session, Seed) -> Result<T, ProgramError> + Sync,
) -> [Result<T, ProgramError>; 3] {
    let results = run_parties(sessions, "program", |session| {
        let seed = entropy.party_seed(session.me(), "program");
        f(session, seed)
    });
    // All threads have ended: a panic is passed on as it was.
    let mut out: Vec<Result<T, ProgramError>> = Vec::with_capacity(3);
    for r in results {
        match r {
            Ok(r) => out.push(r),
            Err(p) => std::panic::resume_unwind(p),
        }
    }
    let mut it = out.into_iter();
    std::array::from_fn(|_| {
        it.next()
            .unwrap_or(Err(ProgramError::Misuse("missing party")))
    })
}

/// The three results if all are `Ok`, else the first error in party order.
///
/// # Errors
/// The first error.
pub fn all_ok<T>(results: [Result<T, ProgramError>; 3]) -> Result<[T; 3], ProgramError> {
    let [a, b, c] = results;
    Ok([a?, b?, c?])
}

/// The graph programs' checks at the party that holds the input, before anything is sent: the
/// owner, and only it, passes the graph (at least one vertex, at most `max_v`), the querier,
/// and only it, the source.
///
/// # Errors
/// [`InputError::Role`], [`InputError::TooLarge`].
pub(crate) fn check_graph_inputs(
    me: PartyId,
    roles: &Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
    max_v: u64,
    parties: usize,
) -> Result<(), ProgramError> {
    roles.check_for(parties)?;
    if (me == roles.querier) != source.is_some() || (me == roles.owner) != graph.is_some() {
        return Err(InputError::Role(
            "the owner provides the graph and the querier the source, nobody else",
        )
        .into());
    }
    match graph {
        Some((0, _)) => Err(InputError::Role("a graph needs at least one vertex").into()),
        Some((v, _)) if v > max_v => Err(InputError::TooLarge {
            what: "V",
            got: v,
            max: max_v,
        }
        .into()),
        _ => Ok(()),
    }
}

/// The graph programs' start on the wire: the run agreed, V and E announced by the owner
/// (bounded by `max`), V ≥ 1, and the querier's source below V (checked at the querier).
/// Returns (V, E).
///
/// # Errors
/// [`ProgramError::BadSizes`] naming the owner; [`InputError::VertexOutOfRange`] at the
/// querier; transport errors.
pub(crate) fn announce_graph(
    session: &mut Session,
    program: &str,
    backend: &str,
    roles: &Roles,
    graph: Option<(u64, &[Edge])>,
    source: Option<u64>,
    max: [u64; 2],
) -> Result<(usize, usize), ProgramError> {
    let sizes = graph.map(|(v, e)| [v, e.len() as u64]);
    agree_on_run(session, program, backend, roles)?;
    let s = announce_sizes(
        session,
        roles.owner,
        sizes.as_ref().map(|s| &s[..]),
        &max,
        &["V", "E"],
    )?;
    let (v, e) = (s[0] as usize, s[1] as usize);
    if v == 0 {
        return Err(ProgramError::BadSizes {
            peer: roles.owner,
            reason: "V = 0".into(),
        });
    }
    if let Some(src) = source
        && src >= v as u64
    {
        return Err(InputError::VertexOutOfRange {
            line: 0,
            vertex: src,
            vertices: v as u64,
        }
        .into());
    }
    Ok((v, e))
}
