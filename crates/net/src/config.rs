//! The session description read from a TOML file (see [`Config`]).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use doram_core::PartyId;
use rustls_pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::mesh::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMEOUT};
use crate::shaping::Shaping;

/// Largest accepted `max_frame_bytes` (2 GiB).
pub const MAX_FRAME_LIMIT: u32 = 1 << 31;

/// A validated session description, read from a TOML file:
///
/// ```toml
/// [session]                     # optional; defaults shown
/// max_frame_bytes = 268435456   # largest frame payload accepted or sent (1 ..= 2^31)
/// timeout_ms = 30000            # silence from a peer beyond this → NetError::Timeout
/// connect_timeout_ms = 30000    # how long Session::connect keeps trying to reach everybody
///
/// [tls]                         # omit only for the explicitly insecure plaintext transport
/// ca = "ca.pem"                 # trust anchor; without it each peer is pinned by its `cert`
///
/// [[party]]                     # one per party, ids 0..n with 2 ≤ n ≤ 4
/// id = 0
/// address = "127.0.0.1:7000"    # host:port this party listens on
/// name = "party0.doram"         # optional DNS name its certificate must carry (default party<id>.doram)
/// cert = "party0.pem"           # its certificate chain (PEM)
/// key = "party0.key"            # its private key (PEM); only needed on its own host
///
/// [shaping]                     # optional, applied to every link
/// latency_ms = 0.5              # added one-way latency
/// bandwidth_mbit = 10000        # per-link bandwidth cap
/// ```
///
/// Relative paths are resolved against the directory of the configuration file. Loading checks
/// the structure, the ids, the addresses and the CA certificate; each party's own certificate
/// and key (and, when pinning, the peers' certificates) are read by
/// [`Session::connect`](crate::Session::connect).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Largest frame payload, in bytes.
    pub max_frame_bytes: u32,
    /// Receive (and send) timeout per peer.
    pub timeout: Duration,
    /// How long connection setup may take.
    pub connect_timeout: Duration,
    /// TLS settings; `None` if the file has no `[tls]` section.
    pub tls: Option<TlsConfig>,
    /// The parties, indexed by id (`parties[i].id == P_i`).
    pub parties: Vec<PartyConfig>,
    /// Traffic shaping applied to every link.
    pub shaping: Shaping,
}

/// The `[tls]` section: how peers are authenticated.
///
/// * **CA** (`ca` set): the CA certificate signs every party certificate. A dialling party
///   checks that the listener's certificate chains to the CA and is valid for the listener's
///   DNS name ([`PartyConfig::name`]); the listener checks the client's chain and, once the
///   client's hello claims to be `P_j`, that its certificate is valid for `P_j`'s name.
/// * **Pinned** (no `ca`): each party's own certificate (its `[[party]] cert`) is the only
///   certificate accepted for it, byte for byte; validity dates are not checked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsConfig {
    /// The CA certificate file that signs every party certificate. `None` pins each peer by its
    /// own certificate (every `[[party]]` must then list `cert`).
    pub ca: Option<PathBuf>,
    /// The CA certificates read from `ca` (DER), loaded and checked with the configuration.
    pub ca_certs: Vec<CertificateDer<'static>>,
}

/// One `[[party]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartyConfig {
    /// The party.
    pub id: PartyId,
    /// `host:port` it listens on.
    pub address: String,
    /// The DNS name its certificate carries and peers check (`party<id>.doram` by default).
    pub name: String,
    /// Its certificate chain (PEM), resolved against the configuration's directory.
    pub cert: Option<PathBuf>,
    /// Its private key (PEM), resolved against the configuration's directory.
    pub key: Option<PathBuf>,
    /// `host:port` where it serves outside clients (server-authenticated TLS), for services
    /// such as PIR; `None` if it serves none.
    pub service_address: Option<String>,
}

/// The default DNS name of party `id` in certificates: `party<i>.doram`.
pub fn default_party_name(id: PartyId) -> String {
    format!("party{}.doram", id.index())
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    #[serde(default)]
    pub session: RawSession,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<RawTls>,
    #[serde(rename = "party", default)]
    pub parties: Vec<RawParty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shaping: Option<RawShaping>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSession {
    pub max_frame_bytes: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub connect_timeout_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTls {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawParty {
    pub id: u64,
    pub address: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_address: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawShaping {
    pub latency_ms: Option<f64>,
    pub bandwidth_mbit: Option<f64>,
}

/// Reads every certificate in a PEM file.
pub(crate) fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let bytes = std::fs::read(path).map_err(|e| ConfigError::read(path, e))?;
    parse_certs(&bytes, path)
}

/// Parses every certificate in PEM text; `path` names the file in errors.
///
/// # Errors
/// [`ConfigError::Pem`] if the text is not PEM or holds no certificate.
pub fn parse_certs(bytes: &[u8], path: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::Pem {
            path: path.into(),
            reason: format!("bad PEM: {e}"),
        })?;
    if certs.is_empty() {
        return Err(ConfigError::Pem {
            path: path.into(),
            reason: "no CERTIFICATE block found".into(),
        });
    }
    Ok(certs)
}

pub(crate) fn check_address(id: u64, address: &str) -> Result<(), ConfigError> {
    let bad = |reason: &str| ConfigError::BadAddress {
        id,
        address: address.into(),
        reason: reason.into(),
    };
    if address.parse::<SocketAddr>().is_ok() {
        return Ok(());
    }
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err(bad("expected host:port"));
    };
    if host.is_empty() {
        return Err(bad("empty host"));
    }
    if host.contains(':') || host.contains('[') || host.contains(']') {
        return Err(bad("not a valid IPv6 socket address (write [addr]:port)"));
    }
    if ServerName::try_from(host).is_err() {
        return Err(bad("invalid host name"));
    }
    port.parse::<u16>()
        .map_err(|_| bad("port must be a number in 0..=65535"))?;
    Ok(())
}

/// Refuses a list of addresses in which one appears twice (two parties, or a party's listen
/// and service addresses, on one `host:port`).
pub(crate) fn check_distinct_addresses<'a>(
    addresses: impl Iterator<Item = &'a String>,
) -> Result<(), ConfigError> {
    let mut seen = BTreeSet::new();
    for a in addresses {
        if !seen.insert(a.as_str()) {
            return Err(ConfigError::Invalid(format!(
                "address {a} is listed twice: every party and service needs its own"
            )));
        }
    }
    Ok(())
}

fn millis(what: &str, v: Option<u64>, default: Duration) -> Result<Duration, ConfigError> {
    match v {
        None => Ok(default),
        Some(0) => Err(ConfigError::Invalid(format!("{what} must be at least 1"))),
        Some(ms) => Ok(Duration::from_millis(ms)),
    }
}

/// Checks the raw party list: the count, the ids (each in range, none twice) and the
/// addresses (well formed, each party's service address apart from its own, all distinct).
fn check_raw_parties(parties: &[RawParty]) -> Result<(), ConfigError> {
    let n = parties.len();
    if !(2..=PartyId::MAX_PARTIES).contains(&n) {
        return Err(ConfigError::PartyCount(n));
    }
    let mut seen = BTreeSet::new();
    for p in parties {
        if p.id >= n as u64 {
            return Err(ConfigError::PartyOutOfRange {
                id: p.id,
                n_parties: n,
            });
        }
        if !seen.insert(p.id) {
            return Err(ConfigError::DuplicateParty { id: p.id });
        }
        check_address(p.id, &p.address)?;
        if let Some(a) = &p.service_address {
            check_address(p.id, a)?;
            if *a == p.address {
                return Err(ConfigError::Invalid(format!(
                    "party {}: service_address must differ from address {a}",
                    p.id
                )));
            }
        }
    }
    check_distinct_addresses(
        parties
            .iter()
            .flat_map(|p| std::iter::once(&p.address).chain(&p.service_address)),
    )
}

/// The parties in id order (the raw list is checked), each with its DNS name (checked, and
/// distinct from the others') and resolved paths.
fn party_configs(
    mut raw: Vec<RawParty>,
    resolve: &impl Fn(PathBuf) -> PathBuf,
) -> Result<Vec<PartyConfig>, ConfigError> {
    let n = raw.len();
    raw.sort_by_key(|p| p.id);
    let parties = raw
        .into_iter()
        .zip(PartyId::first(n))
        .map(|(p, &id)| {
            let name = p.name.unwrap_or_else(|| default_party_name(id));
            match ServerName::try_from(name.as_str()) {
                Ok(ServerName::DnsName(_)) => {}
                _ => {
                    return Err(ConfigError::Invalid(format!(
                        "party {}: name {name:?} is not a DNS name",
                        p.id
                    )));
                }
            }
            Ok(PartyConfig {
                id,
                address: p.address,
                name,
                cert: p.cert.map(resolve),
                key: p.key.map(resolve),
                service_address: p.service_address,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut names = BTreeSet::new();
    if let Some(p) = parties.iter().find(|p| !names.insert(p.name.as_str())) {
        return Err(ConfigError::Invalid(format!(
            "party {}: name {:?} is already another party's: certificates could not tell them apart",
            p.id.index(),
            p.name
        )));
    }
    Ok(parties)
}

/// `max_frame_bytes`: the default, or a value in `1..=MAX_FRAME_LIMIT`.
fn max_frame_bytes(v: Option<u64>) -> Result<u32, ConfigError> {
    match v {
        None => Ok(DEFAULT_MAX_FRAME_BYTES),
        Some(v) if (1..=u64::from(MAX_FRAME_LIMIT)).contains(&v) => Ok(v as u32),
        Some(v) => Err(ConfigError::Invalid(format!(
            "max_frame_bytes = {v} is outside 1..={MAX_FRAME_LIMIT}"
        ))),
    }
}

/// The `[tls]` section: a CA whose certificates load and are valid, or, without one, a
/// certificate listed for every party (each is pinned by it).
fn tls_config(
    raw: RawTls,
    parties: &[PartyConfig],
    resolve: &impl Fn(PathBuf) -> PathBuf,
) -> Result<TlsConfig, ConfigError> {
    match raw {
        RawTls { ca: Some(ca) } => {
            let ca = resolve(ca);
            let ca_certs = load_certs(&ca)?;
            for c in &ca_certs {
                crate::certs::check_validity(c, &ca)?;
            }
            Ok(TlsConfig {
                ca: Some(ca),
                ca_certs,
            })
        }
        RawTls { ca: None } => {
            if let Some(p) = parties.iter().find(|p| p.cert.is_none()) {
                return Err(ConfigError::Invalid(format!(
                    "[tls] has no ca, so every party is pinned by its certificate, but party {} lists no cert",
                    p.id.index()
                )));
            }
            Ok(TlsConfig {
                ca: None,
                ca_certs: Vec::new(),
            })
        }
    }
}

/// The `[shaping]` section: a non-negative latency and a positive bandwidth, both optional.
fn shaping(s: RawShaping) -> Result<Shaping, ConfigError> {
    let latency = match s.latency_ms {
        None => Duration::ZERO,
        Some(ms) if ms.is_finite() && (0.0..1e9).contains(&ms) => {
            Duration::from_secs_f64(ms / 1000.0)
        }
        Some(ms) => {
            return Err(ConfigError::Invalid(format!(
                "shaping.latency_ms = {ms} must be a non-negative number"
            )));
        }
    };
    let bandwidth_bits_per_sec = match s.bandwidth_mbit {
        None => None,
        Some(m) if m.is_finite() && m > 0.0 => Some(m * 1e6),
        Some(m) => {
            return Err(ConfigError::Invalid(format!(
                "shaping.bandwidth_mbit = {m} must be a positive number"
            )));
        }
    };
    Ok(Shaping {
        latency,
        bandwidth_bits_per_sec,
    })
}

impl Config {
    /// Reads and validates a configuration file.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::read(path, e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, base, &path.display().to_string())
    }

    /// Parses and validates configuration text; relative paths are resolved against
    /// `base_dir`.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Config, ConfigError> {
        Config::parse(text, base_dir, "configuration")
    }

    fn parse(text: &str, base: &Path, origin: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.into(),
            reason: e.to_string(),
        })?;
        let resolve = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
        check_raw_parties(&raw.parties)?;
        let parties = party_configs(raw.parties, &resolve)?;
        let max_frame_bytes = max_frame_bytes(raw.session.max_frame_bytes)?;
        let timeout = millis("timeout_ms", raw.session.timeout_ms, DEFAULT_TIMEOUT)?;
        let connect_timeout = millis(
            "connect_timeout_ms",
            raw.session.connect_timeout_ms,
            DEFAULT_TIMEOUT,
        )?;
        let tls = match raw.tls {
            None => None,
            Some(t) => Some(tls_config(t, &parties, &resolve)?),
        };
        let shaping = match raw.shaping {
            None => Shaping::NONE,
            Some(s) => shaping(s)?,
        };
        Ok(Config {
            max_frame_bytes,
            timeout,
            connect_timeout,
            tls,
            parties,
            shaping,
        })
    }

    /// Number of parties.
    pub fn n_parties(&self) -> usize {
        self.parties.len()
    }

    /// The entry of party `id`, if it is in the session.
    pub fn party(&self, id: PartyId) -> Option<&PartyConfig> {
        self.parties.get(id.index())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
[[party]]
id = 1
address = "127.0.0.1:7001"
[[party]]
id = 0
address = "localhost:7000"
"#;

    fn err(text: &str) -> ConfigError {
        Config::from_toml_str(text, Path::new("/tmp")).unwrap_err()
    }

    #[test]
    fn minimal_plaintext_config() {
        let c = Config::from_toml_str(TWO, Path::new("/x")).unwrap();
        assert_eq!(c.n_parties(), 2);
        assert_eq!(c.parties[0].id, PartyId::P0);
        assert_eq!(c.parties[0].address, "localhost:7000");
        assert_eq!(c.parties[1].name, "party1.doram");
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        assert_eq!(c.max_frame_bytes, DEFAULT_MAX_FRAME_BYTES);
        assert!(c.tls.is_none());
        assert!(c.shaping.is_none());
    }

    #[test]
    fn full_config_with_shaping_and_paths() {
        let text = format!(
            "[session]\nmax_frame_bytes = 1024\ntimeout_ms = 500\nconnect_timeout_ms = 700\n\
             [shaping]\nlatency_ms = 0.5\nbandwidth_mbit = 100\n\
             [tls]\n{TWO}cert = \"p0.pem\"\nkey = \"/abs/p0.key\"\n"
        );
        // Without a CA every party needs a certificate.
        let e = Config::from_toml_str(&text, Path::new("/base")).unwrap_err();
        assert!(e.to_string().contains("party 1 lists no cert"), "{e}");
        let text = text.replace("id = 1\n", "id = 1\ncert = \"p1.pem\"\n");
        let c = Config::from_toml_str(&text, Path::new("/base")).unwrap();
        assert_eq!(c.max_frame_bytes, 1024);
        assert_eq!(c.timeout, Duration::from_millis(500));
        assert_eq!(c.connect_timeout, Duration::from_millis(700));
        assert_eq!(c.shaping.latency, Duration::from_micros(500));
        assert_eq!(c.shaping.bandwidth_bits_per_sec, Some(100e6));
        assert_eq!(
            c.parties[0].cert.as_deref(),
            Some(Path::new("/base/p0.pem"))
        );
        assert_eq!(c.parties[0].key.as_deref(), Some(Path::new("/abs/p0.key")));
        assert_eq!(
            c.parties[1].cert.as_deref(),
            Some(Path::new("/base/p1.pem"))
        );
        assert_eq!(c.tls.unwrap().ca, None);
    }

    #[test]
    fn structural_errors_are_clear() {
        assert!(matches!(err(""), ConfigError::PartyCount(0)));
        assert!(matches!(
            err(&TWO.replace("id = 1", "id = 0")),
            ConfigError::DuplicateParty { id: 0 }
        ));
        assert!(matches!(
            err(&TWO.replace("id = 1", "id = 2")),
            ConfigError::PartyOutOfRange {
                id: 2,
                n_parties: 2
            }
        ));
        for bad in ["127.0.0.1", "127.0.0.1:99999", ":80", "::1:80", "a b:1"] {
            let e = err(&TWO.replace("127.0.0.1:7001", bad));
            assert!(
                matches!(e, ConfigError::BadAddress { id: 1, .. }),
                "{bad}: {e}"
            );
        }
        assert!(matches!(
            err(&format!("{TWO}colour = 1")),
            ConfigError::Parse { .. }
        ));
        assert!(matches!(
            err(&format!("[session]\ntimeout_ms = 0\n{TWO}")),
            ConfigError::Invalid(_)
        ));
        assert!(matches!(
            err(&format!("[session]\nmax_frame_bytes = 4294967296\n{TWO}")),
            ConfigError::Invalid(_)
        ));
        assert!(matches!(
            err(&format!("[shaping]\nbandwidth_mbit = 0\n{TWO}")),
            ConfigError::Invalid(_)
        ));
        assert!(matches!(
            err(&TWO.replace("id = 0", "id = 0\nname = \"127.0.0.1\"")),
            ConfigError::Invalid(_)
        ));
        // IPv6 with brackets is fine.
        Config::from_toml_str(&TWO.replace("127.0.0.1:7001", "[::1]:7001"), Path::new("/"))
            .unwrap();
    }

    #[test]
    fn duplicate_names_and_addresses_are_refused() {
        let e = err(&TWO.replace("localhost:7000", "127.0.0.1:7001"));
        assert!(e.to_string().contains("listed twice"), "{e}");
        let e = err(&TWO.replace("id = 0", "id = 0\nservice_address = \"127.0.0.1:7001\""));
        assert!(e.to_string().contains("listed twice"), "{e}");
        let named = TWO
            .replace("id = 0", "id = 0\nname = \"same.example\"")
            .replace("id = 1", "id = 1\nname = \"same.example\"");
        let e = err(&named);
        assert!(e.to_string().contains("already another party's"), "{e}");
        // A party named like another party's default name is refused too.
        let e = err(&TWO.replace("id = 1", "id = 1\nname = \"party0.doram\""));
        assert!(e.to_string().contains("already another party's"), "{e}");
    }

    #[test]
    fn ca_file_is_checked_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("[tls]\nca = \"ca.pem\"\n{TWO}");
        let e = Config::from_toml_str(&text, dir.path()).unwrap_err();
        assert!(matches!(e, ConfigError::Read { .. }), "{e}");
        assert!(e.to_string().contains("ca.pem"));
        std::fs::write(dir.path().join("ca.pem"), "not a certificate\n").unwrap();
        let e = Config::from_toml_str(&text, dir.path()).unwrap_err();
        assert!(matches!(e, ConfigError::Pem { .. }), "{e}");
        std::fs::write(
            dir.path().join("ca.pem"),
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = Config::from_toml_str(&text, dir.path()).unwrap_err();
        assert!(matches!(e, ConfigError::Pem { .. }), "{e}");
    }

    #[test]
    fn load_reports_missing_file() {
        let e = Config::load("/nonexistent/doram.toml").unwrap_err();
        assert!(matches!(e, ConfigError::Read { .. }));
        assert!(e.to_string().contains("/nonexistent/doram.toml"));
    }
}
