//! Certificates, keys and configurations.
//!
//! # One host, for local runs
//! [`generate_local`] creates, in one directory:
//!
//! * `ca.pem` — a fresh CA certificate (ECDSA P-256). Its private key is used once and never
//!   written, so nobody can later issue further certificates under it;
//! * `party<i>.pem` / `party<i>.key` — each party's certificate, signed by the CA, with the
//!   subject alternative names `party<i>.doram` and the hosts of the party's configured
//!   addresses only, usable for both server and client authentication;
//! * `doram.toml` — a ready-to-use [`Config`](crate::Config) with relative paths.
//!
//! # Several hosts: no host holds another party's key
//! 1. The CA operator runs [`generate_ca`] (`ca.pem`, and `ca.key`, which stays on that host).
//! 2. Each party runs [`request`] on its own host: its key (`party<i>.key`) never leaves it;
//!    the certificate signing request (`party<i>.csr`) goes to the CA operator.
//! 3. The CA operator runs [`sign`], which checks the request's signature and names and
//!    returns `party<i>.pem`; every host gets `ca.pem` and the party certificates it needs.
//!
//! # Files
//! Every file is written atomically (a fresh temporary file renamed into place, so a symbolic
//! link at the destination is replaced, never followed); private keys are created with mode
//! 0600. [`read_private_key`] refuses a key file that is a symbolic link, not a regular file,
//! or readable or writable by group or others. Every certificate carries an expiry
//! ([`DEFAULT_VALID_DAYS`] unless told otherwise); [`check_validity`] refuses one that has
//! expired or is not yet valid, with the dates in the error.

use std::fs;
use std::io::{self, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use doram_core::PartyId;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::NetError;
use crate::config::{RawConfig, RawParty, RawSession, RawTls, default_party_name};
use crate::error::ConfigError;
use crate::mesh::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMEOUT};

/// Name of the configuration file written by [`generate_local`].
pub const CONFIG_FILE: &str = "doram.toml";

/// Where the parties of a generated configuration listen.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Addresses {
    /// `127.0.0.1` with ports that were free when the configuration was written, drawn at random
    /// below Linux's ephemeral range (see [`LOCAL_PORTS`]), so that no outgoing connection of
    /// this or another program takes one of them before the parties listen.
    FreeLocalPorts,
    /// `127.0.0.1` with ports `base, base + 1, …`.
    BasePort(u16),
    /// One `host:port` per party, in id order.
    Explicit(Vec<String>),
}

fn certs_error(e: rcgen::Error) -> NetError {
    NetError::Certs(e.to_string())
}

/// How long generated certificates are valid, from the moment they are made.
pub const DEFAULT_VALID_DAYS: u32 = 365;

/// Writes `contents` to `path` atomically: into a fresh file beside it (created exclusively,
/// mode 0600 if `private`, else 0644), flushed to disk, then renamed over `path`. A symbolic
/// link at `path` is replaced, never followed, and a reader never sees a partial file.
///
/// # Errors
/// [`ConfigError::Write`] naming `path`.
pub fn write_file_atomic(path: &Path, contents: &[u8], private: bool) -> Result<(), ConfigError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| ConfigError::write(path, io::Error::other("not a file name")))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp{:016x}", rand::random::<u64>()));
    let tmp = dir.join(tmp_name);
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let result = options.open(&tmp).and_then(|mut f| {
        f.write_all(contents)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    });
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(ConfigError::write(path, e));
    }
    Ok(())
}

fn write_file(path: &Path, contents: &str, private: bool) -> Result<(), NetError> {
    Ok(write_file_atomic(path, contents.as_bytes(), private)?)
}

/// Reads a private key (PEM) from `path`, refusing a symbolic link, anything but a regular
/// file, and a file that group or others may read or write (`chmod 600` it).
///
/// # Errors
/// [`ConfigError::Read`] if the file cannot be opened; [`ConfigError::Pem`] with the reason if
/// it is refused or holds no usable key.
pub fn read_private_key(path: &Path) -> Result<PrivateKeyDer<'static>, ConfigError> {
    let refuse = |reason: String| ConfigError::Pem {
        path: path.into(),
        reason,
    };
    let is_link = fs::symlink_metadata(path)
        .map_err(|e| ConfigError::read(path, e))?
        .file_type()
        .is_symlink();
    if is_link {
        return Err(refuse(
            "is a symbolic link; a private key must be a regular file".into(),
        ));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A link swapped in after the check above fails to open instead of being followed.
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = options.open(path).map_err(|e| ConfigError::read(path, e))?;
    let meta = f.metadata().map_err(|e| ConfigError::read(path, e))?;
    if !meta.is_file() {
        return Err(refuse("is not a regular file".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(refuse(format!(
                "private key is accessible to group or others (mode {mode:03o}); \
                 run `chmod 600 {}`",
                path.display()
            )));
        }
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut f, &mut bytes).map_err(|e| ConfigError::read(path, e))?;
    parse_private_key(&bytes, path)
}

/// Parses a private key (the first key block of a PEM file); `path` names the file in errors.
///
/// # Errors
/// [`ConfigError::Pem`] if no usable key is found.
pub fn parse_private_key(bytes: &[u8], path: &Path) -> Result<PrivateKeyDer<'static>, ConfigError> {
    PrivateKeyDer::from_pem_slice(bytes).map_err(|e| ConfigError::Pem {
        path: path.into(),
        reason: format!("no usable private key: {e}"),
    })
}

/// A party's own certificate chain and private key, as its `[[party]]` entry names them: the
/// key through [`read_private_key`] (no links, no group or world access), the certificate
/// checked with [`check_validity`], so that an expired one is reported at start with its
/// dates rather than as a peer's handshake alert. Returns the key's path for later errors.
///
/// # Errors
/// [`ConfigError`] naming the missing entry or the file at fault.
pub(crate) fn load_identity(
    own: &crate::PartyConfig,
) -> Result<
    (
        Vec<CertificateDer<'static>>,
        PrivateKeyDer<'static>,
        PathBuf,
    ),
    ConfigError,
> {
    let missing = |what: &str| {
        ConfigError::Invalid(format!(
            "party {} has no {what} in the configuration",
            own.id.index()
        ))
    };
    let cert_path = own.cert.as_ref().ok_or_else(|| missing("cert"))?;
    let key_path = own.key.as_ref().ok_or_else(|| missing("key"))?;
    let chain = crate::config::load_certs(cert_path)?;
    check_validity(&chain[0], cert_path)?;
    let key = read_private_key(key_path)?;
    Ok((chain, key, key_path.clone()))
}

/// Checks that `cert` (read from `path`) is valid now: not expired and not valid only from a
/// later date.
///
/// # Errors
/// [`ConfigError::Pem`] naming the file and the dates.
pub fn check_validity(cert: &CertificateDer<'_>, path: &Path) -> Result<(), ConfigError> {
    let refuse = |reason: String| ConfigError::Pem {
        path: path.into(),
        reason,
    };
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|e| refuse(format!("unparsable certificate: {e}")))?;
    let v = parsed.validity();
    let now = x509_parser::time::ASN1Time::now();
    if now < v.not_before {
        return Err(refuse(format!(
            "certificate is not valid before {} (now {now})",
            v.not_before
        )));
    }
    if now > v.not_after {
        return Err(refuse(format!(
            "certificate expired on {} (now {now})",
            v.not_after
        )));
    }
    Ok(())
}

/// Sets `params` to be valid from an hour ago (clock skew between hosts) for `days` days.
fn set_validity(params: &mut CertificateParams, days: u32) {
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::hours(1);
    params.not_after = now + time::Duration::days(i64::from(days));
}

/// The subject alternative names of a party certificate: its DNS name and the hosts of its
/// configured addresses, each once.
fn party_sans(name: &str, addresses: &[&str]) -> Vec<String> {
    let mut sans = vec![name.to_string()];
    for a in addresses {
        if let Some(host) = host_of(a)
            && !sans.iter().any(|s| s == host)
        {
            sans.push(host.to_string());
        }
    }
    sans
}

/// The host of `host:port` (without the brackets of an IPv6 address).
fn host_of(address: &str) -> Option<&str> {
    let (host, _port) = address.rsplit_once(':')?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    (!host.is_empty()).then_some(host)
}

/// The parameters of a party certificate for `name` with `sans`.
fn party_params(name: &str, sans: Vec<String>, days: u32) -> Result<CertificateParams, NetError> {
    let mut params = CertificateParams::new(sans).map_err(certs_error)?;
    params
        .distinguished_name
        .push(DnType::CommonName, name.to_string());
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    set_validity(&mut params, days);
    Ok(params)
}

/// The parameters and key of a fresh CA valid for `days` days.
fn new_ca(days: u32) -> Result<(CertificateParams, KeyPair), NetError> {
    let ca_key = KeyPair::generate().map_err(certs_error)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(certs_error)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    // A distinct name per CA, so that a certificate from another CA is reported as coming
    // from an unknown issuer rather than failing a signature check.
    let tag: String = ca_key
        .public_key_raw()
        .iter()
        .skip(1)
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("doram CA {tag}"));
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut ca_params, days);
    Ok((ca_params, ca_key))
}

/// Creates a CA for a deployment in `dir` (created if missing): `ca.pem`, which every host
/// needs, and `ca.key` (mode 0600), which stays on this host and signs the parties'
/// requests ([`sign`]). Both are valid for `days` days. Returns the two paths.
///
/// # Errors
/// A file cannot be written; [`NetError::Certs`] if `ca.key` already exists (a CA is never
/// overwritten).
pub fn generate_ca(dir: &Path, days: u32) -> Result<(PathBuf, PathBuf), NetError> {
    fs::create_dir_all(dir).map_err(|e| ConfigError::write(dir, e))?;
    let (cert_path, key_path) = (dir.join("ca.pem"), dir.join("ca.key"));
    if fs::symlink_metadata(&key_path).is_ok() {
        return Err(NetError::Certs(format!(
            "{} exists; refusing to replace a CA key",
            key_path.display()
        )));
    }
    let (params, key) = new_ca(days)?;
    let cert = params.self_signed(&key).map_err(certs_error)?;
    write_file(&key_path, &key.serialize_pem(), true)?;
    write_file(&cert_path, &cert.pem(), false)?;
    Ok((cert_path, key_path))
}

/// On a party's own host: creates its key `party<i>.key` (mode 0600; it never leaves the
/// host) and a certificate signing request `party<i>.csr` for its DNS `name` (default
/// `party<i>.doram`) and the hosts of `addresses` (`host:port`, e.g. its listen and service
/// addresses), in `dir`. Returns the paths of the key and the request.
///
/// # Errors
/// A bad name or address, a file that cannot be written; [`NetError::Certs`] if the key file
/// already exists (a key is never overwritten).
pub fn request(
    dir: &Path,
    id: PartyId,
    name: Option<&str>,
    addresses: &[&str],
) -> Result<(PathBuf, PathBuf), NetError> {
    let name = name.map_or_else(|| default_party_name(id), str::to_string);
    check_dns_name(&name)?;
    for a in addresses {
        crate::config::check_address(id.index() as u64, a)?;
    }
    fs::create_dir_all(dir).map_err(|e| ConfigError::write(dir, e))?;
    let i = id.index();
    let (key_path, csr_path) = (
        dir.join(format!("party{i}.key")),
        dir.join(format!("party{i}.csr")),
    );
    if fs::symlink_metadata(&key_path).is_ok() {
        return Err(NetError::Certs(format!(
            "{} exists; refusing to replace a private key",
            key_path.display()
        )));
    }
    let key = KeyPair::generate().map_err(certs_error)?;
    let params = party_params(&name, party_sans(&name, addresses), DEFAULT_VALID_DAYS)?;
    let csr = params.serialize_request(&key).map_err(certs_error)?;
    write_file(&key_path, &key.serialize_pem(), true)?;
    write_file(&csr_path, &csr.pem().map_err(certs_error)?, false)?;
    Ok((key_path, csr_path))
}

fn check_dns_name(name: &str) -> Result<(), NetError> {
    match rustls_pki_types::ServerName::try_from(name) {
        Ok(rustls_pki_types::ServerName::DnsName(_)) if !name.contains('*') => Ok(()),
        _ => Err(ConfigError::Invalid(format!("{name:?} is not a DNS name")).into()),
    }
}

/// On the CA's host: signs the request at `csr` for party `id` with the CA in `ca_dir`
/// (`ca.pem`, `ca.key`), valid for `days` days, and writes the certificate to `out`.
///
/// The request's signature must verify; its first name must be the party's DNS `name`
/// (default `party<i>.doram`), and every other name a host name or IP address (no wildcard).
/// The certificate takes only the names from the request; its subject, key usage and
/// validity are the CA's choice.
///
/// # Errors
/// A file cannot be read or written; [`NetError::Certs`] if the request is malformed, its
/// signature fails, or its names are not as above.
pub fn sign(
    ca_dir: &Path,
    csr: &Path,
    id: PartyId,
    name: Option<&str>,
    days: u32,
    out: &Path,
) -> Result<PathBuf, NetError> {
    let name = name.map_or_else(|| default_party_name(id), str::to_string);
    check_dns_name(&name)?;
    let ca_pem_path = ca_dir.join("ca.pem");
    let ca_pem =
        fs::read_to_string(&ca_pem_path).map_err(|e| ConfigError::read(&ca_pem_path, e))?;
    let ca_key_path = ca_dir.join("ca.key");
    let ca_key_der = read_private_key(&ca_key_path)?;
    let ca_key = KeyPair::try_from(&ca_key_der).map_err(certs_error)?;
    let issuer = Issuer::from_ca_cert_pem(&ca_pem, ca_key).map_err(certs_error)?;
    let text = fs::read_to_string(csr).map_err(|e| ConfigError::read(csr, e))?;
    let req = rcgen::CertificateSigningRequestParams::from_pem(&text)
        .map_err(|e| NetError::Certs(format!("{}: not a valid request: {e}", csr.display())))?;
    let sans: Vec<String> = req
        .params
        .subject_alt_names
        .iter()
        .map(|san| match san {
            rcgen::SanType::DnsName(d) if !d.as_str().contains('*') => Ok(d.to_string()),
            rcgen::SanType::IpAddress(ip) => Ok(ip.to_string()),
            other => Err(NetError::Certs(format!(
                "{}: name {other:?} is not allowed in a party certificate",
                csr.display()
            ))),
        })
        .collect::<Result<_, _>>()?;
    if sans.first() != Some(&name) {
        return Err(NetError::Certs(format!(
            "{}: the request's first name is {:?}, not party {}'s name {name:?}",
            csr.display(),
            sans.first(),
            id.index()
        )));
    }
    let signed = rcgen::CertificateSigningRequestParams {
        params: party_params(&name, sans, days)?,
        public_key: req.public_key,
    };
    let cert = signed.signed_by(&issuer).map_err(certs_error)?;
    write_file(out, &cert.pem(), false)?;
    Ok(out.to_path_buf())
}

/// Where [`Addresses::FreeLocalPorts`] draws ports: below the ephemeral range of Linux
/// (32768–60999 by default), from which the kernel picks the source ports of outgoing
/// connections and the ports of listeners bound to port 0. A port taken from that range by
/// binding port 0 and releasing it could be reused by any connection before the party listens
/// on it — concurrent local runs then collided ("address in use", or a party reaching another
/// run's listener and failing the TLS handshake).
pub const LOCAL_PORTS: std::ops::Range<u16> = 20_000..32_768;

/// A listener on a random free port of [`LOCAL_PORTS`] (a few dozen draws at most).
fn free_local_port() -> Result<TcpListener, NetError> {
    let mut last = None;
    for _ in 0..64 {
        let port = rand::random_range(LOCAL_PORTS);
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(NetError::Certs(format!(
        "cannot find a free port in {}..{}: {}",
        LOCAL_PORTS.start,
        LOCAL_PORTS.end,
        last.map_or_else(|| "no attempt".to_owned(), |e| e.to_string())
    )))
}

fn addresses(n: usize, spec: Addresses) -> Result<Vec<String>, NetError> {
    match spec {
        Addresses::FreeLocalPorts => {
            // Hold every listener until all ports are known, so that they are distinct.
            let listeners = (0..n)
                .map(|_| free_local_port())
                .collect::<Result<Vec<_>, _>>()?;
            listeners
                .iter()
                .map(|l| {
                    l.local_addr()
                        .map(|a| a.to_string())
                        .map_err(|e| NetError::Certs(format!("cannot find free ports: {e}")))
                })
                .collect()
        }
        Addresses::BasePort(base) => (0..n)
            .map(|i| {
                u16::try_from(usize::from(base) + i)
                    .map(|p| format!("127.0.0.1:{p}"))
                    .map_err(|_| ConfigError::Invalid(format!("base port {base} too high")).into())
            })
            .collect(),
        Addresses::Explicit(list) if list.len() == n => Ok(list),
        Addresses::Explicit(list) => Err(ConfigError::Invalid(format!(
            "{} addresses given for {n} parties",
            list.len()
        ))
        .into()),
    }
}

/// Creates a CA, a certificate and key per party, and a configuration for a local session of
/// `n_parties` in `dir` (created if missing); returns the configuration's path.
pub fn generate_local(dir: &Path, n_parties: usize, spec: Addresses) -> Result<PathBuf, NetError> {
    generate_local_with_services(dir, n_parties, spec, None)
}

/// [`generate_local`], and with `services` each party also gets a `service_address` where it
/// serves outside clients (e.g. PIR clients); with [`Addresses::FreeLocalPorts`] for both,
/// all `2 · n_parties` ports are distinct.
///
/// # Errors
/// As [`generate_local`].
pub fn generate_local_with_services(
    dir: &Path,
    n_parties: usize,
    spec: Addresses,
    services: Option<Addresses>,
) -> Result<PathBuf, NetError> {
    if !(2..=PartyId::MAX_PARTIES).contains(&n_parties) {
        return Err(ConfigError::PartyCount(n_parties).into());
    }
    let (addrs, service_addrs) = match (spec, services) {
        (Addresses::FreeLocalPorts, Some(Addresses::FreeLocalPorts)) => {
            let mut all = addresses(2 * n_parties, Addresses::FreeLocalPorts)?;
            let services = all.split_off(n_parties);
            (all, Some(services))
        }
        (spec, services) => (
            addresses(n_parties, spec)?,
            services.map(|s| addresses(n_parties, s)).transpose()?,
        ),
    };
    // Every address is checked before anything is written.
    let every = || addrs.iter().chain(service_addrs.iter().flatten());
    for (i, a) in every().enumerate() {
        crate::config::check_address((i % n_parties) as u64, a)?;
    }
    crate::config::check_distinct_addresses(every())?;
    let mut service_addrs = service_addrs.map(Vec::into_iter);
    fs::create_dir_all(dir).map_err(|e| ConfigError::write(dir, e))?;

    let (ca_params, ca_key) = new_ca(DEFAULT_VALID_DAYS)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(certs_error)?;
    let issuer = Issuer::new(ca_params, ca_key);
    write_file(&dir.join("ca.pem"), &ca_cert.pem(), false)?;

    let mut parties = Vec::with_capacity(n_parties);
    for (&id, address) in PartyId::first(n_parties).iter().zip(addrs) {
        let i = id.index();
        let name = default_party_name(id);
        let service_address = service_addrs.as_mut().and_then(Iterator::next);
        let mut hosts = vec![address.as_str()];
        hosts.extend(service_address.as_deref());
        let params = party_params(&name, party_sans(&name, &hosts), DEFAULT_VALID_DAYS)?;
        let key = KeyPair::generate().map_err(certs_error)?;
        let cert = params.signed_by(&key, &issuer).map_err(certs_error)?;
        let (cert_file, key_file) = (format!("party{i}.pem"), format!("party{i}.key"));
        write_file(&dir.join(&cert_file), &cert.pem(), false)?;
        write_file(&dir.join(&key_file), &key.serialize_pem(), true)?;
        parties.push(RawParty {
            id: i as u64,
            address,
            name: None,
            cert: Some(cert_file.into()),
            key: Some(key_file.into()),
            service_address,
        });
    }

    let timeout_ms = DEFAULT_TIMEOUT.as_millis() as u64;
    let raw = RawConfig {
        session: RawSession {
            max_frame_bytes: Some(DEFAULT_MAX_FRAME_BYTES.into()),
            timeout_ms: Some(timeout_ms),
            connect_timeout_ms: Some(timeout_ms),
        },
        tls: Some(RawTls {
            ca: Some("ca.pem".into()),
        }),
        parties,
        shaping: None,
    };
    let body = toml::to_string(&raw).map_err(|e| NetError::Certs(e.to_string()))?;
    let text = format!(
        "# Local doram session: certificates and keys are in this directory.\n\
         # Each party needs its own key only; add a [shaping] section to emulate a network.\n\n{body}"
    );
    let path = dir.join(CONFIG_FILE);
    write_file(&path, &text, false)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn free_local_ports_are_distinct_and_outside_the_ephemeral_range() {
        for _ in 0..20 {
            let addrs = addresses(4, Addresses::FreeLocalPorts).unwrap();
            let ports: Vec<u16> = addrs
                .iter()
                .map(|a| a.rsplit(':').next().unwrap().parse().unwrap())
                .collect();
            for (i, p) in ports.iter().enumerate() {
                assert!(LOCAL_PORTS.contains(p), "{p}");
                assert!(!ports[..i].contains(p), "{ports:?}");
            }
        }
    }

    #[test]
    fn generated_config_with_service_addresses() {
        let dir = tempfile::tempdir().unwrap();
        let path = generate_local_with_services(
            dir.path(),
            3,
            Addresses::FreeLocalPorts,
            Some(Addresses::FreeLocalPorts),
        )
        .unwrap();
        let c = Config::load(&path).unwrap();
        let mut all: Vec<&str> = c.parties.iter().map(|p| p.address.as_str()).collect();
        all.extend(
            c.parties
                .iter()
                .map(|p| p.service_address.as_deref().unwrap()),
        );
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "six distinct ports");
        let path = generate_local_with_services(
            dir.path(),
            3,
            Addresses::BasePort(7100),
            Some(Addresses::BasePort(7200)),
        )
        .unwrap();
        let c = Config::load(&path).unwrap();
        assert_eq!(
            c.parties[1].service_address.as_deref(),
            Some("127.0.0.1:7201")
        );
        // A service address equal to the party's own address is refused.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("127.0.0.1:7201", "127.0.0.1:7101");
        assert!(Config::from_toml_str(&text, dir.path()).is_err());
        assert!(generate_local(dir.path(), 3, Addresses::BasePort(7100)).is_ok());
        assert!(
            Config::load(dir.path().join(CONFIG_FILE)).unwrap().parties[0]
                .service_address
                .is_none()
        );
    }

    fn sans_of(pem: &str) -> Vec<String> {
        let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        let (_, c) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
        let ext = c.subject_alternative_name().unwrap().unwrap();
        ext.value
            .general_names
            .iter()
            .map(|n| match n {
                x509_parser::extensions::GeneralName::DNSName(d) => d.to_string(),
                x509_parser::extensions::GeneralName::IPAddress(b) => match b.len() {
                    4 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(*b).unwrap()).to_string(),
                    _ => std::net::Ipv6Addr::from(<[u8; 16]>::try_from(*b).unwrap()).to_string(),
                },
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn local_certificates_name_only_the_configured_hosts_and_expire() {
        let dir = tempfile::tempdir().unwrap();
        generate_local_with_services(
            dir.path(),
            2,
            Addresses::Explicit(vec!["127.0.0.1:7000".into(), "[::1]:7001".into()]),
            Some(Addresses::Explicit(vec![
                "127.0.0.1:7100".into(),
                "svc.example:7101".into(),
            ])),
        )
        .unwrap();
        let pem = |f: &str| fs::read_to_string(dir.path().join(f)).unwrap();
        assert_eq!(sans_of(&pem("party0.pem")), ["party0.doram", "127.0.0.1"]);
        assert_eq!(
            sans_of(&pem("party1.pem")),
            ["party1.doram", "::1", "svc.example"]
        );
        let der = CertificateDer::from_pem_slice(pem("party0.pem").as_bytes()).unwrap();
        let (_, c) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
        let days =
            (c.validity().not_after.timestamp() - c.validity().not_before.timestamp()) / 86_400;
        assert_eq!(days, i64::from(DEFAULT_VALID_DAYS));
        check_validity(&der, Path::new("party0.pem")).unwrap();
        // One address for two parties is refused before anything is written.
        let again = tempfile::tempdir().unwrap();
        let e = generate_local(
            again.path(),
            2,
            Addresses::Explicit(vec!["127.0.0.1:7000".into(), "127.0.0.1:7000".into()]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
        assert!(!again.path().join("ca.pem").exists());
        // So is a malformed address, a party's or a service's.
        let e = generate_local_with_services(
            again.path(),
            2,
            Addresses::Explicit(vec!["127.0.0.1:7000".into(), "127.0.0.1:7001".into()]),
            Some(Addresses::Explicit(vec![
                "127.0.0.1:7100".into(),
                "no-port".into(),
            ])),
        )
        .unwrap_err();
        assert!(e.to_string().contains("no-port"), "{e}");
        assert!(!again.path().join("ca.pem").exists());
    }

    #[cfg(unix)]
    #[test]
    fn key_files_are_private_atomic_and_never_followed() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "keep me").unwrap();
        let key = dir.path().join("party0.key");
        symlink(&victim, &key).unwrap();
        // Reading through the link is refused.
        let e = read_private_key(&key).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // Writing replaces the link, never the file it points to.
        let pem = KeyPair::generate().unwrap().serialize_pem();
        write_file_atomic(&key, pem.as_bytes(), true).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
        let meta = fs::symlink_metadata(&key).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        read_private_key(&key).unwrap();
        // Group- or world-readable keys are refused, with the fix in the message.
        for mode in [0o640, 0o604, 0o660] {
            fs::set_permissions(&key, fs::Permissions::from_mode(mode)).unwrap();
            let e = read_private_key(&key).unwrap_err();
            assert!(e.to_string().contains("chmod 600"), "{mode:o}: {e}");
        }
        fs::set_permissions(&key, fs::Permissions::from_mode(0o400)).unwrap();
        read_private_key(&key).unwrap();
        // Not a regular file, not a key.
        assert!(read_private_key(dir.path()).is_err());
        fs::write(dir.path().join("bad.key"), "no key here").unwrap();
        fs::set_permissions(
            dir.path().join("bad.key"),
            fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let e = read_private_key(&dir.path().join("bad.key")).unwrap_err();
        assert!(e.to_string().contains("no usable private key"), "{e}");
        // No temporary files are left behind.
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
    }

    #[test]
    fn expired_and_future_certificates_are_refused() {
        let key = KeyPair::generate().unwrap();
        let mut p = party_params("party0.doram", vec!["party0.doram".into()], 1).unwrap();
        let now = time::OffsetDateTime::now_utc();
        p.not_before = now - time::Duration::days(10);
        p.not_after = now - time::Duration::days(1);
        let old = p.self_signed(&key).unwrap();
        let e = check_validity(old.der(), Path::new("old.pem")).unwrap_err();
        assert!(
            e.to_string().contains("old.pem: certificate expired on"),
            "{e}"
        );
        p.not_before = now + time::Duration::days(1);
        p.not_after = now + time::Duration::days(10);
        let early = p.self_signed(&key).unwrap();
        let e = check_validity(early.der(), Path::new("early.pem")).unwrap_err();
        assert!(e.to_string().contains("not valid before"), "{e}");
    }

    #[test]
    fn each_party_keeps_its_key_and_the_ca_signs_its_request() {
        let root = tempfile::tempdir().unwrap();
        let (ca_dir, p1_dir) = (root.path().join("ca"), root.path().join("p1"));
        let (ca_pem, ca_key) = generate_ca(&ca_dir, 30).unwrap();
        assert!(ca_pem.exists() && read_private_key(&ca_key).is_ok());
        assert!(
            generate_ca(&ca_dir, 30).is_err(),
            "a CA key is never replaced"
        );
        let (key, csr) = request(
            &p1_dir,
            PartyId::P1,
            None,
            &["10.1.2.3:7001", "p1.example:7101"],
        )
        .unwrap();
        assert!(read_private_key(&key).is_ok());
        assert!(
            request(&p1_dir, PartyId::P1, None, &[]).is_err(),
            "keys are never replaced"
        );
        let out = root.path().join("party1.pem");
        sign(&ca_dir, &csr, PartyId::P1, None, 30, &out).unwrap();
        let pem = fs::read_to_string(&out).unwrap();
        assert_eq!(sans_of(&pem), ["party1.doram", "10.1.2.3", "p1.example"]);
        // The certificate chains to the CA and holds the party's own public key.
        let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).unwrap();
        let ca_der = CertificateDer::from_pem_slice(fs::read(&ca_pem).unwrap().as_slice()).unwrap();
        let (_, ca) = x509_parser::parse_x509_certificate(ca_der.as_ref()).unwrap();
        cert.verify_signature(Some(ca.public_key())).unwrap();
        let party_key = KeyPair::try_from(&read_private_key(&key).unwrap()).unwrap();
        assert_eq!(
            cert.public_key().subject_public_key.data.as_ref(),
            party_key.public_key_raw()
        );
        // A request signed for another party's name, or a tampered one, is refused.
        let e = sign(&ca_dir, &csr, PartyId::P2, None, 30, &out).unwrap_err();
        assert!(e.to_string().contains("party2.doram"), "{e}");
        let mut bytes = fs::read(&csr).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
        let bad = root.path().join("bad.csr");
        fs::write(&bad, &bytes).unwrap();
        assert!(sign(&ca_dir, &bad, PartyId::P1, None, 30, &out).is_err());
        // A request for a wildcard name is refused at the source.
        assert!(request(&root.path().join("w"), PartyId::P0, Some("*.doram"), &[]).is_err());
    }

    #[test]
    fn generated_config_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = generate_local(dir.path(), 3, Addresses::BasePort(7100)).unwrap();
        let c = Config::load(&path).unwrap();
        assert_eq!(c.n_parties(), 3);
        assert_eq!(c.parties[2].address, "127.0.0.1:7102");
        assert_eq!(
            c.parties[1].key.as_deref(),
            Some(dir.path().join("party1.key").as_path())
        );
        assert_eq!(c.tls.as_ref().unwrap().ca_certs.len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("party0.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(generate_local(dir.path(), 5, Addresses::FreeLocalPorts).is_err());
        assert!(generate_local(dir.path(), 2, Addresses::Explicit(vec!["a:1".into()])).is_err());
        let path = generate_local(dir.path(), 2, Addresses::FreeLocalPorts).unwrap();
        let c = Config::load(path).unwrap();
        assert_ne!(c.parties[0].address, c.parties[1].address);
    }
}
