//! Two-server private lookup from a distributed point function (Boyle–Gilboa–Ishai PIR).
//!
//! Roles: the servers [`SERVER_0`] and [`SERVER_1`] hold the same public table `D` of `n` words
//! in Z_2^64; the client [`CLIENT`] wants `D[i]` for secret indices `i`. For each query the
//! client generates DPF keys for the point function `f(x) = [x = i]` and sends one key to each
//! server; server `b` answers `y_b = Σ_x D[x]·f_b(x)` and the client outputs `y_0 + y_1 = D[i]`.
//! A single server sees only a pseudorandom key, so it learns nothing about `i` as long as the
//! two servers do not collude.
//!
//! Messages, for a batch of `q` queries (`q` and `n` are public and agreed beforehand):
//! 1. client → server b: `q` DPF keys, one frame (`q · key_bytes(n)` bytes);
//! 2. server b → client: `q` words of Z_2^64, one frame (`8q` bytes).
//!
//! Two rounds in all, whatever the indices; the message sizes depend only on `n` and `q`.

use doram_core::PartyId;
use doram_core::wire::{self, Blame, PeerFault};
use doram_dpf::{DpfKey, HalfTree, SinglePointDpf};
use doram_field::{Group, Z64};
use doram_net::{NetError, Session};
use doram_prim::AesPrg;
use rand_core::{CryptoRng, RngCore};

/// The first server.
pub const SERVER_0: PartyId = PartyId::P0;
/// The second server.
pub const SERVER_1: PartyId = PartyId::P1;
/// The client.
pub const CLIENT: PartyId = PartyId::P2;

/// The DPF used for queries.
pub type QueryDpf = HalfTree;

/// Why a lookup failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// The transport failed (a peer closed, timed out, or sent a malformed frame).
    #[error(transparent)]
    Net(#[from] NetError),
    /// A peer's message had the wrong size or did not decode.
    #[error(transparent)]
    Peer(#[from] PeerFault),
    /// The caller's arguments do not fit the protocol.
    #[error("invalid lookup: {0}")]
    Invalid(String),
}

/// The public parameters both servers and the client agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LookupParams {
    /// Table length `n ≥ 1`.
    pub n: usize,
    /// Queries per batch `q ≥ 1`.
    pub queries: usize,
}

impl LookupParams {
    /// Checks the parameters.
    pub fn new(n: usize, queries: usize) -> Result<LookupParams, LookupError> {
        if n == 0 || queries == 0 {
            return Err(LookupError::Invalid(format!(
                "table length and query count must be positive (n = {n}, q = {queries})"
            )));
        }
        Ok(LookupParams { n, queries })
    }
}

/// A public table of `n` words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    words: Vec<Z64>,
}

impl Table {
    /// A table with the given words.
    pub fn new(words: Vec<Z64>) -> Table {
        Table { words }
    }

    /// A deterministic pseudorandom table of `n` words from a public `seed` (for demos and
    /// benchmarks: every server builds the same table without a data file).
    pub fn synthetic(n: usize, seed: u64) -> Table {
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        let mut prg = AesPrg::new(doram_core::Seed(s));
        Table {
            words: (0..n).map(|_| Z64::random_from(&mut prg)).collect(),
        }
    }

    /// The words.
    pub fn words(&self) -> &[Z64] {
        &self.words
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

/// Server side: answers one batch of queries from the client.
pub fn serve(
    session: &mut Session,
    params: LookupParams,
    table: &Table,
) -> Result<(), LookupError> {
    let me = session.me();
    if me != SERVER_0 && me != SERVER_1 {
        return Err(LookupError::Invalid(format!("{me} is not a lookup server")));
    }
    if table.len() != params.n {
        return Err(LookupError::Invalid(format!(
            "the table has {} words but the session agreed on n = {}",
            table.len(),
            params.n
        )));
    }
    let key_len = <QueryDpf as SinglePointDpf<Z64>>::key_size(params.n);
    // [step 1] client → server: q keys in one frame; the length is fixed by (n, q).
    let bytes = session.recv_bytes(CLIENT)?;
    let expected = key_len * params.queries;
    wire::exact_len(CLIENT, "query batch", &bytes, expected)?;
    let mut answers = Vec::with_capacity(params.queries);
    let mut shares = vec![Z64::ZERO; params.n];
    for chunk in bytes.chunks_exact(key_len) {
        let key = <QueryDpf as SinglePointDpf<Z64>>::key_from_bytes(chunk, params.n)
            .blame(CLIENT, "DPF key")?;
        <QueryDpf as SinglePointDpf<Z64>>::eval_all_into(&key, &mut shares);
        // y_b = Σ_x D[x] · f_b(x) in Z_2^64.
        let y = table
            .words()
            .iter()
            .zip(&shares)
            .fold(Z64::ZERO, |acc, (d, f)| acc + *d * *f);
        answers.push(y);
    }
    // [step 2] server → client: q answer shares.
    session.send_elems(CLIENT, &answers)?;
    Ok(())
}

/// Client side: looks up `indices` (all `< n`, exactly `params.queries` of them).
pub fn query<R: RngCore + CryptoRng + ?Sized>(
    session: &mut Session,
    params: LookupParams,
    indices: &[usize],
    rng: &mut R,
) -> Result<Vec<Z64>, LookupError> {
    if session.me() != CLIENT {
        return Err(LookupError::Invalid(format!(
            "{} is not the lookup client",
            session.me()
        )));
    }
    if indices.len() != params.queries {
        return Err(LookupError::Invalid(format!(
            "{} indices given for a batch of {}",
            indices.len(),
            params.queries
        )));
    }
    if let Some(&bad) = indices.iter().find(|&&i| i >= params.n) {
        return Err(LookupError::Invalid(format!(
            "index {bad} is outside the table (n = {})",
            params.n
        )));
    }
    let key_len = <QueryDpf as SinglePointDpf<Z64>>::key_size(params.n);
    let mut batch = [
        Vec::with_capacity(key_len * params.queries),
        Vec::with_capacity(key_len * params.queries),
    ];
    for &i in indices {
        let (k0, k1) = <QueryDpf as SinglePointDpf<Z64>>::gen_keys(params.n, i, Z64::ONE, rng);
        batch[0].extend_from_slice(&k0.to_bytes());
        batch[1].extend_from_slice(&k1.to_bytes());
    }
    // [step 1] client → both servers.
    session.send_bytes(SERVER_0, &batch[0])?;
    session.send_bytes(SERVER_1, &batch[1])?;
    // [step 2] answers; the count is the batch size, never read from the wire.
    let y0: Vec<Z64> = session.recv_elems(SERVER_0, params.queries)?;
    let y1: Vec<Z64> = session.recv_elems(SERVER_1, params.queries)?;
    Ok(y0.into_iter().zip(y1).map(|(a, b)| a + b).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_dpf::{HalfTree, SinglePointDpf};
    use doram_field::Fp;
    use rand::SeedableRng;

    /// The README's library example, kept compiling and true.
    #[test]
    fn readme_dpf_example() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let (k0, k1) = HalfTree::gen_keys(1 << 12, 1234, Fp::from_u64(7), &mut rng);
        let (y0, y1) = (HalfTree::eval_all(&k0), HalfTree::eval_all(&k1));
        assert_eq!(y0[1234] + y1[1234], Fp::from_u64(7));
        assert_eq!(y0[999] + y1[999], Fp::ZERO);
    }

    fn run3<T: Send>(sessions: Vec<Session>, f: impl Fn(&mut Session) -> T + Sync) -> Vec<T> {
        doram_net::testkit::run(sessions, |mut s| f(&mut s))
    }

    #[test]
    fn lookup_matches_the_table_for_odd_sizes() {
        for (n, q) in [(1usize, 1usize), (7, 3), (100, 5), (1 << 10, 2)] {
            let params = LookupParams::new(n, q).unwrap();
            let table = Table::synthetic(n, n as u64);
            let indices: Vec<usize> = (0..q).map(|j| (j * 37 + 5) % n).collect();
            let (t, idx) = (table.clone(), indices.clone());
            let out = run3(Session::local_mesh(3), move |s| {
                if s.me() == CLIENT {
                    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
                    query(s, params, &idx, &mut rng).map(Some)
                } else {
                    serve(s, params, &t).map(|()| None)
                }
            });
            let mut results = out.into_iter();
            assert!(results.next().unwrap().unwrap().is_none());
            assert!(results.next().unwrap().unwrap().is_none());
            let got = results.next().unwrap().unwrap().unwrap();
            let want: Vec<Z64> = indices.iter().map(|&i| table.words()[i]).collect();
            assert_eq!(got, want, "n = {n}");
        }
    }

    #[test]
    fn transcript_shape_does_not_depend_on_the_indices() {
        let shape = |indices: Vec<usize>| {
            let params = LookupParams::new(64, 2).unwrap();
            let table = Table::synthetic(64, 3);
            run3(Session::local_mesh(3), move |s| {
                s.record_transcript(true);
                if s.me() == CLIENT {
                    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
                    query(s, params, &indices, &mut rng).unwrap();
                } else {
                    serve(s, params, &table).unwrap();
                }
                s.take_transcript().unwrap()
            })
        };
        assert_eq!(shape(vec![0, 1]), shape(vec![63, 17]));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(LookupParams::new(0, 1).is_err());
        assert!(LookupParams::new(4, 0).is_err());
        // A client asking outside the table is stopped before anything is sent.
        let out = run3(Session::local_mesh(3), |s| {
            let params = LookupParams::new(8, 1).unwrap();
            if s.me() == CLIENT {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
                Some(query(s, params, &[8], &mut rng).is_err())
            } else {
                None
            }
        });
        assert_eq!(out[2], Some(true));
        // A server given a malformed batch reports the client by name.
        let out = run3(Session::local_mesh(3), |s| {
            let params = LookupParams::new(8, 1).unwrap();
            if s.me() == CLIENT {
                s.send_bytes(SERVER_0, &[1, 2, 3]).unwrap();
                s.send_bytes(SERVER_1, &[1, 2, 3]).unwrap();
                None
            } else {
                Some(
                    serve(s, params, &Table::synthetic(8, 1))
                        .unwrap_err()
                        .to_string(),
                )
            }
        });
        assert!(out[0].as_ref().unwrap().contains("P2"), "{:?}", out[0]);
    }
}
