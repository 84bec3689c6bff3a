//! Test helpers (feature `testkit`) for this crate's tests and those of every crate built on the
//! transport: parties over real loopback sockets (listeners on port 0, certificates generated
//! per call, nothing committed), and one way to run every party of a session on a thread of its
//! own and collect the results.
//!
//! ```
//! use doram_core::PartyId;
//! use doram_net::Transport;
//! use doram_net::testkit::{loopback_sessions, run};
//!
//! let sessions = loopback_sessions(3, Transport::Tls);
//! let got = run(sessions, |mut s| {
//!     let me = s.me();
//!     s.send_bytes(me.next(3), &[me.index() as u8]).unwrap();
//!     s.recv_bytes(me.prev(3)).unwrap()
//! });
//! assert_eq!(got, [vec![2], vec![0], vec![1]]);
//! ```

use std::net::TcpListener;
use std::time::Duration;

use crate::loopback::{bind_loopback, connect_each};
use crate::{Config, NetError, Session, Transport, loopback_mesh, run_parties};

/// The receive timeout of [`loopback_sessions`]: long enough for a protocol run on a loaded
/// test machine, short enough that a hung peer fails the test.
pub const LOOPBACK_TIMEOUT: Duration = Duration::from_secs(20);

/// `n` listeners on 127.0.0.1, each on a free port, and their addresses.
///
/// # Panics
/// If a listener cannot be bound.
pub fn listeners(n: usize) -> (Vec<TcpListener>, Vec<String>) {
    bind_loopback(n).expect("loopback listeners")
}

/// Connects every party of `config` (party `i` with `listeners[i]`), each from a thread of
/// its own; returns each party's outcome in id order.
pub fn connect_all(
    config: &Config,
    listeners: Vec<TcpListener>,
    transport: Transport,
) -> Vec<Result<Session, NetError>> {
    connect_each(config, listeners, transport)
}

/// `n` sessions connected over loopback with `transport` ([`loopback_mesh`] with a temporary
/// certificate directory and [`LOOPBACK_TIMEOUT`]).
///
/// # Panics
/// If the sessions cannot be set up.
pub fn loopback_sessions(n: usize, transport: Transport) -> Vec<Session> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // The directory is needed only while the parties connect.
    loopback_mesh(dir.path(), n, transport, LOOPBACK_TIMEOUT).expect("loopback sessions")
}

/// Runs `f` at every party, each on a thread of its own ([`run_parties`]), and returns the
/// results in the order of `sessions`.
///
/// # Panics
/// If a party panicked: its panic is raised again once every party has ended (the panicking
/// party's session was dropped, so its peers saw a closed link rather than hang).
pub fn run<R: Send>(sessions: Vec<Session>, f: impl Fn(Session) -> R + Sync) -> Vec<R> {
    run_parties(sessions, "party", f)
        .into_iter()
        .map(|r| r.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .collect()
}
