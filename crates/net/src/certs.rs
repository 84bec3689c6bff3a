//! Certificates and configurations for local runs.
//!
//! [`generate_local`] creates, in one directory:
//!
//! * `ca.pem` — a fresh CA certificate (ECDSA P-256). Its private key is used once and never
//!   written, so nobody can later issue further certificates under it;
//! * `party<i>.pem` / `party<i>.key` — each party's certificate, signed by the CA, with the
//!   subject alternative names `party<i>.doram`, `localhost`, `127.0.0.1` and `::1`, usable for
//!   both server and client authentication; the key file is readable by its owner only;
//! * `doram.toml` — a ready-to-use [`Config`](crate::Config) with relative paths.
//!
//! Certificates are valid from 1975 to 4096: they are for local runs and tests, generated fresh
//! each time and never committed.

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use doram_core::PartyId;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

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

fn write_file(path: &Path, contents: &str, private: bool) -> Result<(), NetError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut f = options
        .open(path)
        .map_err(|e| ConfigError::write(path, e))?;
    f.write_all(contents.as_bytes())
        .map_err(|e| ConfigError::write(path, e))?;
    Ok(())
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
    let mut service_addrs = service_addrs.map(Vec::into_iter);
    fs::create_dir_all(dir).map_err(|e| ConfigError::write(dir, e))?;

    let ca_key = KeyPair::generate().map_err(certs_error)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(certs_error)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    // A distinct name per CA, so that a certificate from another local CA is reported as
    // coming from an unknown issuer rather than failing a signature check.
    let tag: String = ca_key
        .public_key_raw()
        .iter()
        .skip(1)
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("doram local CA {tag}"));
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(certs_error)?;
    let issuer = Issuer::new(ca_params, ca_key);
    write_file(&dir.join("ca.pem"), &ca_cert.pem(), false)?;

    let mut parties = Vec::with_capacity(n_parties);
    for (&id, address) in PartyId::first(n_parties).iter().zip(addrs) {
        let i = id.index();
        let name = default_party_name(id);
        let mut params = CertificateParams::new(vec![
            name.clone(),
            "localhost".into(),
            "127.0.0.1".into(),
            "::1".into(),
        ])
        .map_err(certs_error)?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
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
            service_address: service_addrs.as_mut().and_then(Iterator::next),
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
