//! TLS 1.3 with mutual authentication (rustls, ring provider) and the binding between
//! certificates and party ids.
//!
//! Every party presents its certificate both as a server (to the peers that connect to it) and
//! as a client (when it connects to them). Peers are trusted in one of two ways:
//!
//! * **CA**: the `[tls] ca` certificate signs every party certificate. A connecting party checks
//!   that the listener's certificate chains to the CA and is valid for the listener's DNS name
//!   (`party<i>.doram` unless the config names it otherwise); the listener checks the client's
//!   chain and, after the client's hello claims to be `P_j`, that its certificate is valid for
//!   `P_j`'s name.
//! * **Pinned**: without a CA, each party's own certificate (from its `[[party]] cert`) is the
//!   only certificate accepted for it, byte for byte; its validity dates are checked when the
//!   configuration is loaded.
//!
//! Only TLS 1.3 is offered, with AES-128-GCM preferred (AES-NI makes it the fastest suite on
//! x86-64), then AES-256-GCM and ChaCha20-Poly1305. rustls performs the handshake, the hello
//! exchange of [`crate::connect`] and every record after them ([`crate::stream`]).

use std::io::{self, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doram_core::PartyId;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use rustls::{
    CertificateError, ClientConfig, ClientConnection, Connection, DigitallySignedStruct,
    DistinguishedName, OtherError, RootCertStore, ServerConfig, ServerConnection, SignatureScheme,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::NetError;
use crate::config::{Config, TlsConfig, load_certs};
use crate::error::ConfigError;
use crate::stream::{DuplexReader, DuplexWriter, TlsWriter};

/// Socket read buffer during the handshake.
const READ_BUFFER: usize = 16 << 10;
/// Ciphertext a link's reader takes from the socket at once (within a core's L2 cache).
const LINK_READ_PIECE: usize = 256 << 10;

/// The crypto provider: ring, TLS 1.3 suites with AES-128-GCM first.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    use rustls::crypto::ring::cipher_suite as cs;
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites = vec![
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
    ];
    Arc::new(p)
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct PinError(String);

fn pin_mismatch(what: String) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(PinError(
        what,
    )))))
}

/// Accepts exactly one pinned certificate from the server we connect to.
#[derive(Debug)]
struct PinnedServer {
    peer: PartyId,
    expected: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(pin_mismatch(format!(
                "not the certificate pinned for {}",
                self.peer
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Accepts a client certificate if it is pinned for some peer; which peer is checked after
/// the hello (see [`TlsSetup::check_identity`]).
#[derive(Debug)]
struct PinnedClients {
    pinned: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for PinnedClients {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if self
            .pinned
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(pin_mismatch(
                "not the pinned certificate of any peer".into(),
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// How a peer's certificate is tied to its id.
#[derive(Debug)]
enum PeerAuth {
    /// Certificates signed by the CA, identified by DNS name.
    Ca,
    /// Certificates pinned per party (indexed by party).
    Pinned(Vec<CertificateDer<'static>>),
}

/// Everything one party needs for TLS: its server configuration, a client configuration per
/// peer and the rule that ties certificates to party ids.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    server: Arc<ServerConfig>,
    clients: Vec<Option<Arc<ClientConfig>>>,
    names: Vec<String>,
    auth: PeerAuth,
}

/// The configuration error for a certificate or key that rustls refuses.
pub(crate) fn rustls_config_error(path: &std::path::Path, e: rustls::Error) -> NetError {
    let reason = match e {
        rustls::Error::InconsistentKeys(_) => {
            "the private key does not match the certificate".into()
        }
        e => format!("unusable certificate or key: {e}"),
    };
    ConfigError::Pem {
        path: path.into(),
        reason,
    }
    .into()
}

/// This party's certificate chain, its private key and the key's path (for errors).
struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    key_path: std::path::PathBuf,
}

/// How peers are authenticated: by the CA of `[tls]`, or, without one, each by its own
/// certificate (checked valid), pinned.
fn peer_auth(config: &Config, tls: &TlsConfig) -> Result<PeerAuth, NetError> {
    if tls.ca.is_some() {
        return Ok(PeerAuth::Ca);
    }
    let mut pinned = Vec::with_capacity(config.n_parties());
    for p in &config.parties {
        let path = p.cert.as_ref().ok_or_else(|| {
            ConfigError::Invalid(format!("party {} has no cert to pin", p.id.index()))
        })?;
        let mut certs = load_certs(path)?;
        crate::certs::check_validity(&certs[0], path)?;
        pinned.push(certs.swap_remove(0));
    }
    Ok(PeerAuth::Pinned(pinned))
}

/// The trust anchors of `[tls]`'s CA.
pub(crate) fn ca_roots(tls: &TlsConfig) -> Result<Arc<RootCertStore>, NetError> {
    let mut roots = RootCertStore::empty();
    for c in &tls.ca_certs {
        roots.add(c.clone()).map_err(|e| ConfigError::Pem {
            path: tls.ca.clone().unwrap_or_default(),
            reason: format!("unusable CA certificate: {e}"),
        })?;
    }
    Ok(Arc::new(roots))
}

/// The listener's configuration: TLS 1.3 only, client certificates required (by the CA or
/// pinned: every party but `me`), no resumption and no tickets.
fn server_config(
    tls: &TlsConfig,
    auth: &PeerAuth,
    me: PartyId,
    provider: &Arc<CryptoProvider>,
    id: &Identity,
) -> Result<ServerConfig, NetError> {
    let client_verifier: Arc<dyn ClientCertVerifier> = match auth {
        PeerAuth::Ca => {
            WebPkiClientVerifier::builder_with_provider(ca_roots(tls)?, provider.clone())
                .build()
                .map_err(|e| ConfigError::Invalid(format!("CA certificate: {e}")))?
        }
        PeerAuth::Pinned(pinned) => Arc::new(PinnedClients {
            pinned: pinned
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != me.index())
                .map(|(_, c)| c.clone())
                .collect(),
            provider: provider.clone(),
        }),
    };
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?
        .with_client_cert_verifier(client_verifier)
        .with_single_cert(id.chain.clone(), id.key.clone_key())
        .map_err(|e| rustls_config_error(&id.key_path, e))?;
    // Nothing is resumed, and the listener never sends after the handshake (see `connect`).
    server.send_tls13_tickets = 0;
    server.session_storage = Arc::new(NoServerSessionStorage {});
    Ok(server)
}

/// The dialler's configuration for each party (`None` for `me`): TLS 1.3 only, the peer's
/// certificate checked by the CA or against its pinned one, our certificate sent, no
/// resumption.
fn client_configs(
    config: &Config,
    tls: &TlsConfig,
    auth: &PeerAuth,
    me: PartyId,
    provider: &Arc<CryptoProvider>,
    id: &Identity,
) -> Result<Vec<Option<Arc<ClientConfig>>>, NetError> {
    let ca_verifier = match auth {
        PeerAuth::Ca => Some(
            WebPkiServerVerifier::builder_with_provider(ca_roots(tls)?, provider.clone())
                .build()
                .map_err(|e| ConfigError::Invalid(format!("CA certificate: {e}")))?,
        ),
        PeerAuth::Pinned(_) => None,
    };
    let mut clients = Vec::with_capacity(config.n_parties());
    for (i, _) in config.parties.iter().enumerate() {
        if i == me.index() {
            clients.push(None);
            continue;
        }
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?;
        let builder =
            match (auth, &ca_verifier) {
                (PeerAuth::Pinned(pinned), _) => builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(PinnedServer {
                        peer: PartyId::ALL[i],
                        expected: pinned[i].clone(),
                        provider: provider.clone(),
                    })),
                (PeerAuth::Ca, Some(v)) => builder.with_webpki_verifier(v.clone()),
                (PeerAuth::Ca, None) => {
                    return Err(ConfigError::Invalid("CA verifier missing".into()).into());
                }
            };
        let mut client = builder
            .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
            .map_err(|e| rustls_config_error(&id.key_path, e))?;
        client.resumption = Resumption::disabled();
        clients.push(Some(Arc::new(client)));
    }
    Ok(clients)
}

impl TlsSetup {
    /// Loads this party's certificate and key and builds the rustls configurations.
    pub fn new(config: &Config, me: PartyId) -> Result<TlsSetup, NetError> {
        let tls = config.tls.as_ref().ok_or(ConfigError::NoTls)?;
        let own = config
            .party(me)
            .ok_or_else(|| ConfigError::Invalid(format!("{me} is not in the configuration")))?;
        let (chain, key, key_path) = crate::certs::load_identity(own)?;
        let id = Identity {
            chain,
            key,
            key_path,
        };
        let provider = provider();
        let names: Vec<String> = config.parties.iter().map(|p| p.name.clone()).collect();
        let auth = peer_auth(config, tls)?;
        let server = server_config(tls, &auth, me, &provider, &id)?;
        let clients = client_configs(config, tls, &auth, me, &provider, &id)?;
        Ok(TlsSetup {
            server: Arc::new(server),
            clients,
            names,
            auth,
        })
    }

    /// A client connection to `peer`, expecting its configured DNS name.
    pub fn client(&self, peer: PartyId) -> Result<ClientConnection, NetError> {
        let fail = |reason: String| NetError::Handshake { peer, reason };
        let config = self
            .clients
            .get(peer.index())
            .and_then(Option::clone)
            .ok_or_else(|| fail("not a peer".into()))?;
        let name = ServerName::try_from(self.names[peer.index()].clone())
            .map_err(|e| fail(format!("bad server name: {e}")))?;
        ClientConnection::new(config, name).map_err(|e| fail(e.to_string()))
    }

    /// A server connection for an incoming peer.
    pub fn server(&self) -> Result<ServerConnection, rustls::Error> {
        ServerConnection::new(Arc::clone(&self.server))
    }

    /// Checks that `cert` (already verified by the handshake) belongs to `claimed`.
    pub fn check_identity(
        &self,
        cert: &CertificateDer<'_>,
        claimed: PartyId,
    ) -> Result<(), String> {
        match &self.auth {
            PeerAuth::Pinned(pinned) => match pinned.get(claimed.index()) {
                Some(p) if p.as_ref() == cert.as_ref() => Ok(()),
                _ => Err(format!(
                    "the certificate is not the one pinned for {claimed}"
                )),
            },
            PeerAuth::Ca => check_sole_name(cert, &self.names, claimed),
        }
    }
}

/// Checks that `cert` is valid for `claimed`'s name in `names` (indexed by party) and for no
/// other party's: a certificate that names two parties (e.g. one's name as an extra host of
/// another's request) must not let either stand in for the other.
pub(crate) fn check_sole_name(
    cert: &CertificateDer<'_>,
    names: &[String],
    claimed: PartyId,
) -> Result<(), String> {
    let cert = webpki::EndEntityCert::try_from(cert)
        .map_err(|e| format!("unparsable certificate: {e}"))?;
    let valid_for = |name: &str| {
        ServerName::try_from(name)
            .is_ok_and(|subject| cert.verify_is_valid_for_subject_name(&subject).is_ok())
    };
    let name = names
        .get(claimed.index())
        .ok_or_else(|| format!("{claimed} is not in the configuration"))?;
    if !valid_for(name) {
        return Err(format!(
            "the certificate is not valid for {claimed}'s name {name}"
        ));
    }
    match names
        .iter()
        .enumerate()
        .find(|&(i, other)| i != claimed.index() && valid_for(other))
    {
        Some((i, other)) => Err(format!(
            "the certificate for {claimed} is also valid for P{i}'s name {other}"
        )),
        None => Ok(()),
    }
}

/// A TLS connection over a socket during setup; afterwards the listener side becomes a frame
/// reader and the connecting side a [`TlsWriter`] (see [`crate::stream`]).
pub(crate) struct TlsIo {
    pub conn: Connection,
    sock: BufReader<TcpStream>,
    /// If set, every socket read and write during setup is bounded by what is left until this
    /// instant, so the whole exchange (not each read) has a deadline: a peer that trickles
    /// bytes cannot stretch it.
    deadline: Option<Instant>,
    /// A link's reader, once set up, takes ciphertext from the socket in pieces of this size
    /// (empty during setup): rustls asks for one record (16 KiB) at a time, and a system call
    /// per record costs more than copying it from here. `piece[fed..got]` is not yet given to
    /// rustls.
    piece: Vec<u8>,
    fed: usize,
    got: usize,
}

impl TlsIo {
    pub fn new(conn: impl Into<Connection>, sock: TcpStream) -> TlsIo {
        TlsIo {
            conn: conn.into(),
            sock: BufReader::with_capacity(READ_BUFFER, sock),
            deadline: None,
            piece: Vec::new(),
            fed: 0,
            got: 0,
        }
    }

    /// Bounds all later socket I/O of the setup by `deadline` (see the field).
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// Before a blocking socket operation: sets the socket timeouts to the time left, or fails
    /// with `TimedOut` once the deadline has passed.
    fn arm(&mut self) -> io::Result<()> {
        let Some(deadline) = self.deadline else {
            return Ok(());
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the setup deadline passed",
            ));
        }
        // A zero timeout means "block forever" to the OS: never pass one.
        let left = left.max(Duration::from_millis(1));
        let sock = self.sock.get_ref();
        sock.set_read_timeout(Some(left))?;
        sock.set_write_timeout(Some(left))
    }

    /// Reads TLS records from the socket within the deadline: what setup read ahead first,
    /// then (for a link's reader) from a piece read at once.
    fn read_tls(&mut self) -> io::Result<usize> {
        self.arm()?;
        if self.piece.is_empty() || !self.sock.buffer().is_empty() {
            return self.conn.read_tls(&mut self.sock);
        }
        if self.fed == self.got {
            // 0 at the end of the stream: rustls is then given an empty piece, which marks it.
            self.got = self.sock.get_mut().read(&mut self.piece)?;
            self.fed = 0;
        }
        let mut rest = &self.piece[self.fed..self.got];
        let n = self.conn.read_tls(&mut rest)?;
        self.fed += n;
        Ok(n)
    }

    /// Calls `take` on rustls's plaintext until it has some (or an end or error to report),
    /// reading and opening records in between.
    pub(crate) fn with_plaintext<T>(
        &mut self,
        mut take: impl FnMut(&mut rustls::Reader<'_>) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            match take(&mut self.conn.reader()) {
                Ok(x) => return Ok(x),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // `read_tls` returning 0 marks the end of the stream; the next `take` then
            // reports it (an error unless the peer sent close_notify).
            self.read_tls()?;
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.flush();
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            if self.conn.wants_write() {
                self.flush()?;
            }
        }
    }

    /// Writes all pending TLS records to the socket.
    fn flush(&mut self) -> io::Result<()> {
        self.arm()?;
        flush_tls(&mut self.conn, self.sock.get_mut())
    }

    /// Runs the handshake to completion. rustls errors are returned inside the `io::Error`
    /// (kind `InvalidData`) after the alert has been sent.
    pub fn handshake(&mut self) -> io::Result<()> {
        while self.conn.is_handshaking() {
            self.flush()?;
            if !self.conn.is_handshaking() {
                break;
            }
            if self.read_tls()? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed during the TLS handshake",
                ));
            }
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.flush();
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
        self.flush()
    }

    /// Sends application data.
    pub fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.conn.writer().write_all(data)?;
        self.flush()
    }

    /// The socket.
    pub fn socket(&self) -> &TcpStream {
        self.sock.get_ref()
    }

    /// The connecting side's sending direction, records sealed by rustls.
    pub fn into_writer(self) -> TlsWriter {
        let (conn, sock) = self.into_parts();
        TlsWriter::new(conn, sock.into_inner())
    }

    /// The listening side's receiving direction: this connection, reading application data
    /// through rustls, with no setup deadline any more.
    pub fn into_reader(mut self) -> TlsIo {
        self.deadline = None;
        self.piece = vec![0; LINK_READ_PIECE];
        self
    }

    /// Both directions of a client–server connection (see [`crate::service`]).
    pub fn into_duplex(self) -> io::Result<(DuplexWriter, DuplexReader)> {
        crate::stream::duplex(self)
    }

    /// The rustls connection and the socket (with what was read ahead of the connection).
    pub(crate) fn into_parts(self) -> (Connection, BufReader<TcpStream>) {
        (self.conn, self.sock)
    }
}

impl Read for TlsIo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.with_plaintext(|r| r.read(buf))
    }
}

/// Writes every record rustls has sealed to `sock`.
pub(crate) fn flush_tls(conn: &mut Connection, sock: &mut impl Write) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(sock) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Describes a handshake failure for the error message.
pub(crate) fn describe_handshake_error(err: &io::Error) -> String {
    match err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(e)) => {
            format!("the peer's certificate was rejected (wrong or unknown certificate): {e:?}")
        }
        Some(rustls::Error::AlertReceived(alert)) => {
            format!(
                "the peer aborted the TLS handshake (alert {alert:?}); it does not trust our certificate or identity"
            )
        }
        Some(rustls::Error::NoCertificatesPresented) => "the peer presented no certificate".into(),
        Some(e) => format!("TLS handshake failed: {e}"),
        None => match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                "timed out during the handshake".into()
            }
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe => {
                format!("the peer closed the connection during the handshake ({err})")
            }
            _ => format!("handshake I/O error: {err}"),
        },
    }
}
