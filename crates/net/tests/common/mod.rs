//! Helpers shared by the integration tests: sessions over real sockets on loopback with short
//! timeouts and configurations of the tests' own (listeners, connecting and running the parties
//! come from [`doram_net::testkit`]), and a scripted fake peer for fault injection.
#![allow(dead_code, unused_imports)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, ConnectOptions, NetError, Session, Transport};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tempfile::TempDir;

pub use doram_net::testkit::{connect_all, listeners, run};

/// Short timeouts so that fault tests finish quickly.
pub const TIMEOUT: Duration = Duration::from_millis(500);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A TLS configuration (CA mode) for `n` parties in a fresh directory, with short timeouts.
pub fn tls_config(n: usize, addrs: Vec<String>) -> (TempDir, Config) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = generate_local(dir.path(), n, Addresses::Explicit(addrs)).expect("certs");
    let mut config = Config::load(path).expect("config");
    config.timeout = TIMEOUT;
    config.connect_timeout = CONNECT_TIMEOUT;
    (dir, config)
}

/// A CA deployment in `dir` for parties at `addrs`, made as on separate hosts (`generate_ca`,
/// then `request` and `sign` per party), with short timeouts; party `extra.0`'s request also
/// names the host of the address `extra.1`.
pub fn ca_deployment(dir: &std::path::Path, addrs: &[String], extra: (usize, &str)) -> Config {
    use doram_net::certs::{generate_ca, request, sign};
    generate_ca(dir, 30).expect("CA");
    let mut text = format!(
        "[session]\ntimeout_ms = {}\nconnect_timeout_ms = 2000\n[tls]\nca = \"ca.pem\"\n",
        TIMEOUT.as_millis()
    );
    for (i, address) in addrs.iter().enumerate() {
        let id = PartyId::ALL[i];
        let mut hosts = vec![address.as_str()];
        if i == extra.0 {
            hosts.push(extra.1);
        }
        let (_, csr) = request(dir, id, None, &hosts).expect("request");
        sign(dir, &csr, id, None, 30, &dir.join(format!("party{i}.pem"))).expect("sign");
        text.push_str(&format!(
            "[[party]]\nid = {i}\naddress = \"{address}\"\ncert = \"party{i}.pem\"\nkey = \"party{i}.key\"\n"
        ));
    }
    Config::from_toml_str(&text, dir).expect("config")
}

/// A plaintext configuration for `n` parties at `addrs`.
pub fn tcp_config(addrs: &[String], extra: &str) -> Config {
    let mut text = format!(
        "[session]\ntimeout_ms = {}\nconnect_timeout_ms = {}\n{extra}\n",
        TIMEOUT.as_millis(),
        CONNECT_TIMEOUT.as_millis()
    );
    for (i, a) in addrs.iter().enumerate() {
        text.push_str(&format!("[[party]]\nid = {i}\naddress = \"{a}\"\n"));
    }
    Config::from_toml_str(&text, std::path::Path::new(".")).expect("config")
}

/// Party `me` of `config` connecting with the pre-bound `listener`, on a thread of its own: the
/// real side of a test whose other side is a fake peer or a bare socket.
pub fn connect_in_thread(
    config: Config,
    me: PartyId,
    listener: TcpListener,
    transport: Transport,
) -> thread::JoinHandle<Result<Session, NetError>> {
    thread::spawn(move || {
        let options = ConnectOptions::new()
            .transport(transport)
            .listener(listener);
        Session::connect_with(&config, me, options)
    })
}

/// `n` connected TLS sessions (plus the directory holding their certificates).
pub fn tls_sessions(n: usize) -> (TempDir, Vec<Session>) {
    let (ls, addrs) = listeners(n);
    let (dir, config) = tls_config(n, addrs);
    let sessions = connect_all(&config, ls, Transport::Tls)
        .into_iter()
        .map(|r| r.expect("TLS session"))
        .collect();
    (dir, sessions)
}

/// `n` connected plaintext sessions.
pub fn tcp_sessions(n: usize, extra: &str) -> Vec<Session> {
    let (ls, addrs) = listeners(n);
    let config = tcp_config(&addrs, extra);
    connect_all(&config, ls, Transport::DangerousPlaintext)
        .into_iter()
        .map(|r| r.expect("TCP session"))
        .collect()
}

/// The first frame of a link as the transport writes it: 12-byte header (length, Lamport
/// timestamp, sequence number 0, phase 0), payload.
pub fn frame(ts: u64, payload: &[u8]) -> Vec<u8> {
    frame_at(ts, 0, 0, payload)
}

/// A frame as the transport writes it: 12-byte header (length as `u32`, Lamport timestamp in
/// 40 bits, sequence number, phase as `u16`), payload.
pub fn frame_at(ts: u64, seq: u8, phase: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(&ts.to_le_bytes()[..5]);
    v.push(seq);
    v.extend_from_slice(&phase.to_le_bytes());
    v.extend_from_slice(payload);
    v
}

fn hello(n: usize, from: usize, to: usize) -> [u8; 8] {
    [b'D', b'R', b'M', b'N', 1, n as u8, from as u8, to as u8]
}

fn ack_ok() -> [u8; 8] {
    [b'D', b'R', b'M', b'N', 1, 0, 0, 0]
}

/// TLS identity of a fake peer, read from a generated certificate directory.
pub struct FakeTls {
    pub client: Arc<rustls::ClientConfig>,
    pub server: Arc<rustls::ServerConfig>,
}

impl FakeTls {
    /// The identity of party `i` from `dir` (as written by `generate_local`).
    pub fn party(dir: &std::path::Path, i: usize) -> FakeTls {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(dir.join(format!("party{i}.pem")))
                .expect("cert")
                .collect::<Result<_, _>>()
                .expect("cert");
        let key = PrivateKeyDer::from_pem_file(dir.join(format!("party{i}.key"))).expect("key");
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(dir.join("ca.pem")).expect("ca") {
            roots.add(c.expect("ca")).expect("ca");
        }
        let roots = Arc::new(roots);
        let client = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots.clone())
            .with_client_auth_cert(chain.clone(), key.clone_key())
            .expect("client auth");
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .expect("verifier");
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .expect("server cert");
        FakeTls {
            client: Arc::new(client),
            server: Arc::new(server),
        }
    }
}

/// The connection a fake party dialled, plain or TLS (kept typed so tests can drive rustls).
pub enum FakeOut {
    /// Plaintext TCP.
    Plain(TcpStream),
    /// TLS through stock rustls.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Write for FakeOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            FakeOut::Plain(s) => s.write(buf),
            FakeOut::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            FakeOut::Plain(s) => s.flush(),
            FakeOut::Tls(s) => s.flush(),
        }
    }
}

impl FakeOut {
    /// The rustls connection (TLS only).
    pub fn tls(&mut self) -> &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
        match self {
            FakeOut::Tls(s) => s,
            FakeOut::Plain(_) => panic!("not a TLS connection"),
        }
    }
}

/// The two connections of a scripted fake party with one real party.
pub struct FakePeer {
    /// Writes to the real party (the connection the fake dialled).
    pub out: FakeOut,
    /// Reads what the real party sends (the connection the fake accepted).
    pub incoming: Box<dyn Read + Send>,
    /// The raw socket under `out` (to write bytes below TLS).
    pub out_raw: TcpStream,
}

/// Plays party `fake` (of `n`) towards the real party `real` listening at `real_addr`:
/// accepts the real party's connection on `listener`, dials it and completes the hellos.
pub fn fake_peer(
    n: usize,
    fake: usize,
    real: usize,
    listener: &TcpListener,
    real_addr: &str,
    tls: Option<&FakeTls>,
) -> FakePeer {
    let real_name = format!("party{real}.doram");
    // Dial on a separate thread while accepting here; the real party does both at once too.
    thread::scope(|s| {
        let dial = s.spawn(|| {
            let mut sock = loop {
                match TcpStream::connect(real_addr) {
                    Ok(s) => break s,
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            };
            sock.set_read_timeout(Some(CONNECT_TIMEOUT))
                .expect("timeout");
            let raw = sock.try_clone().expect("clone");
            let mut answer = [0u8; 8];
            let out = match tls {
                None => {
                    sock.write_all(&hello(n, fake, real)).expect("hello");
                    sock.read_exact(&mut answer).expect("ack");
                    FakeOut::Plain(sock)
                }
                Some(t) => {
                    let name = ServerName::try_from(real_name.clone()).expect("name");
                    let conn = rustls::ClientConnection::new(t.client.clone(), name).expect("conn");
                    let mut stream = rustls::StreamOwned::new(conn, sock);
                    stream.write_all(&hello(n, fake, real)).expect("hello");
                    stream.read_exact(&mut answer).expect("ack");
                    FakeOut::Tls(Box::new(stream))
                }
            };
            assert_eq!(answer, ack_ok(), "real party refused the fake peer");
            (out, raw)
        });
        let (mut sock, _) = listener.accept().expect("accept");
        sock.set_read_timeout(Some(CONNECT_TIMEOUT))
            .expect("timeout");
        let mut h = [0u8; 8];
        let incoming: Box<dyn Read + Send> = match tls {
            None => {
                sock.read_exact(&mut h).expect("hello");
                sock.write_all(&ack_ok()).expect("ack");
                Box::new(sock)
            }
            Some(t) => {
                let conn = rustls::ServerConnection::new(t.server.clone()).expect("conn");
                let mut stream = rustls::StreamOwned::new(conn, sock);
                stream.read_exact(&mut h).expect("hello");
                stream.write_all(&ack_ok()).expect("ack");
                Box::new(stream)
            }
        };
        assert_eq!(h, hello(n, real, fake));
        let (out, out_raw) = dial.join().expect("dial");
        FakePeer {
            out,
            incoming,
            out_raw,
        }
    })
}
