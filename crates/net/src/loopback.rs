//! [`loopback_mesh`]: every party of a session in this process, connected over loopback
//! sockets with the real transport — for tests, benchmarks and demos that want TLS (or TCP)
//! without separate hosts or processes.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use doram_core::PartyId;

use crate::certs::{Addresses, generate_local};
use crate::{Config, ConnectOptions, NetError, Session, Transport};

/// `n` sessions (element `i` is party `i`) connected over 127.0.0.1 with `transport`, each
/// receive waiting at most `timeout`: listeners on free ports, then a fresh CA, certificates
/// and `doram.toml` written under `dir` (needed only during the setup), then every party
/// connecting from a thread of its own.
///
/// ```
/// use doram_core::PartyId;
/// use doram_net::{Transport, loopback_mesh};
/// use std::time::Duration;
///
/// let dir = std::env::temp_dir().join(format!("doram-doc-{}", std::process::id()));
/// let mut s = loopback_mesh(&dir, 2, Transport::Tls, Duration::from_secs(10))?;
/// s[0].send_bytes(PartyId::P1, b"over TLS")?;
/// assert_eq!(s[1].recv_bytes(PartyId::P0)?, b"over TLS");
/// # drop(s);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), doram_net::NetError>(())
/// ```
///
/// # Errors
/// A listener that cannot be bound, the certificates or the configuration, or the first
/// party (in id order) whose setup failed.
///
/// # Panics
/// If `n` is not 2, 3 or 4.
pub fn loopback_mesh(
    dir: &Path,
    n: usize,
    transport: Transport,
    timeout: Duration,
) -> Result<Vec<Session>, NetError> {
    assert!((2..=PartyId::MAX_PARTIES).contains(&n), "2 to 4 parties");
    let (listeners, addrs) = bind_loopback(n)?;
    let path = generate_local(dir, n, Addresses::Explicit(addrs))?;
    let mut config = Config::load(path)?;
    config.timeout = timeout;
    connect_each(&config, listeners, transport)
        .into_iter()
        .collect()
}

/// `n` listeners on 127.0.0.1, each on a free port, and their addresses.
pub(crate) fn bind_loopback(n: usize) -> Result<(Vec<TcpListener>, Vec<String>), NetError> {
    let listen_error = |e| NetError::Listen {
        address: "127.0.0.1:0".into(),
        source: Arc::new(e),
    };
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(listen_error)?;
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(listen_error)?;
    Ok((listeners, addrs))
}

/// Connects party `i` of `config` with the pre-bound `listeners[i]`, every party from a thread
/// of its own; returns each party's outcome in id order.
pub(crate) fn connect_each(
    config: &Config,
    listeners: Vec<TcpListener>,
    transport: Transport,
) -> Vec<Result<Session, NetError>> {
    let n = listeners.len();
    std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .zip(PartyId::first(n))
            .map(|(l, &me)| {
                s.spawn(move || {
                    let options = ConnectOptions::new().transport(transport).listener(l);
                    Session::connect_with(config, me, options)
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(PartyId::first(n))
            .map(|(h, &me)| {
                h.join().unwrap_or_else(|_| {
                    Err(NetError::Io {
                        peer: me,
                        source: Arc::new(std::io::Error::other(
                            "the party's setup thread panicked",
                        )),
                    })
                })
            })
            .collect()
    })
}
