//! Decoders of bytes that arrive whole: frames, configuration, certificates and keys, DPF
//! keys, field vectors, 2P-Duoram's online message, and the RAM programs' input files.

use std::path::Path;

use doram_dpf::{Bgi, BgiKey, DpfKey, HalfTree, HalfTreeKey, SinglePointDpf};
use doram_duoram::two_party::MaskedUpdate;
use doram_field::{Bit, Fp, Group, Z64};
use doram_programs::input::{parse_edges, parse_prefs, parse_sorted};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::Target;

fn u16_at(data: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([
        data.get(i).copied().unwrap_or(0),
        data.get(i + 1).copied().unwrap_or(0),
    ])
}

/// Frames as a socket or the in-process backend delivers them: `limit: u16 ‖ three piece
/// sizes ‖ stream`.
pub const FRAMES: Target = Target {
    name: "frames",
    what: "the frame decoder (header, length limit, truncation) over a stream cut into pieces",
    run: |data| {
        let limit = u32::from(u16_at(data, 0)) + 1;
        let pieces: Vec<usize> = data
            .iter()
            .skip(2)
            .take(3)
            .map(|&b| usize::from(b))
            .collect();
        let stream = data.get(5..).unwrap_or(&[]);
        let a = doram_net::fuzzing::stream_decoder(stream, &pieces, limit);
        let b = doram_net::fuzzing::read_frames(stream, limit);
        if a == b {
            Ok(())
        } else {
            Err(format!(
                "the stream decoder found {a} frames, the socket reader {b}"
            ))
        }
    },
    seeds: || {
        let frame = |payload: &[u8], ts: u64| {
            let mut f = (payload.len() as u32).to_le_bytes().to_vec();
            f.extend(ts.to_le_bytes());
            f.extend(payload);
            f
        };
        let mut two = vec![0xff, 0x00, 3, 7, 1];
        two.extend(frame(b"hello", 1));
        two.extend(frame(&[], 2));
        two.extend(frame(&[9; 40], 2));
        let mut one = vec![16, 0, 0, 0, 0];
        one.extend(frame(&[1, 2, 3], 5));
        vec![two, one]
    },
};

/// A session configuration, as `doram.toml` text.
pub const CONFIG: Target = Target {
    name: "config",
    what: "the TOML session configuration",
    run: |data| {
        let text = String::from_utf8_lossy(data);
        // Paths in a configuration are read when it loads; keep the harness off devices.
        if text.contains("/dev") || text.contains("/proc") || text.contains("/sys") {
            return Ok(());
        }
        let _ = doram_net::Config::from_toml_str(&text, Path::new("/nonexistent-doram-fuzz"));
        Ok(())
    },
    seeds: || {
        vec![
            b"[session]\nmax_frame_bytes = 1024\ntimeout_ms = 500\n[shaping]\nlatency_ms = 0.5\n\
              bandwidth_mbit = 100\n[[party]]\nid = 1\naddress = \"127.0.0.1:7001\"\n\
              service_address = \"127.0.0.1:7101\"\n[[party]]\nid = 0\naddress = \"[::1]:7000\"\n\
              name = \"p0.example\"\n"
                .to_vec(),
            b"[tls]\n[[party]]\nid = 0\naddress = \"a.example:1\"\ncert = \"p0.pem\"\n\
              key = \"p0.key\"\n[[party]]\nid = 1\naddress = \"b.example:2\"\ncert = \"p1.pem\"\n"
                .to_vec(),
        ]
    },
};

/// Certificates and keys as PEM files.
pub const PEM: Target = Target {
    name: "pem",
    what: "PEM certificate files (with their validity dates) and private key files",
    run: |data| {
        let path = Path::new("fuzz.pem");
        if let Ok(certs) = doram_net::parse_certs(data, path) {
            for c in &certs {
                let _ = doram_net::certs::check_validity(c, path);
            }
        }
        let _ = doram_net::certs::parse_private_key(data, path);
        Ok(())
    },
    seeds: || {
        let dir = std::env::temp_dir().join(format!("doram-fuzz-pem-{}", std::process::id()));
        let mut out = Vec::new();
        if doram_net::certs::generate_local(&dir, 2, doram_net::certs::Addresses::BasePort(7000))
            .is_ok()
        {
            for f in ["ca.pem", "party0.pem", "party0.key"] {
                if let Ok(b) = std::fs::read(dir.join(f)) {
                    out.push(b);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        out
    },
};

fn keys_of<G: Group, D: SinglePointDpf<G>>(log_n: u32, rng: &mut ChaCha8Rng) -> Vec<u8>
where
    D::Key: DpfKey,
{
    let n = 1usize << log_n;
    let mut one = vec![0u8; G::BYTES];
    one[0] = 1;
    let beta = G::read_le(&one).unwrap_or(G::ZERO);
    let (k0, _) = D::gen_keys(n, n / 3, beta, rng);
    k0.to_bytes()
}

fn eval_some<G: Group, D: SinglePointDpf<G>>(key: &D::Key, n: usize) {
    for x in [0, n / 2, n - 1] {
        let _ = D::eval(key, x);
    }
    if n <= 1 << 10 {
        let _ = D::eval_all(key);
    }
}

/// DPF keys as a peer sends them: `log n ‖ construction ‖ key`.
pub const DPF_KEYS: Target = Target {
    name: "dpf-keys",
    what: "BGI and Half-Tree DPF keys over F_p and Z_2^64, decoded then evaluated",
    run: |data| {
        let log_n = u32::from(data.first().copied().unwrap_or(0) % 17);
        let n = 1usize << log_n;
        let key = data.get(2..).unwrap_or(&[]);
        match data.get(1).copied().unwrap_or(0) % 4 {
            0 => {
                if let Ok(k) = HalfTreeKey::<Fp>::from_bytes(key, n) {
                    eval_some::<Fp, HalfTree>(&k, n);
                }
            }
            1 => {
                if let Ok(k) = HalfTreeKey::<Z64>::from_bytes(key, n) {
                    eval_some::<Z64, HalfTree>(&k, n);
                }
            }
            2 => {
                if let Ok(k) = BgiKey::<Fp>::from_bytes(key, n) {
                    eval_some::<Fp, Bgi>(&k, n);
                }
            }
            _ => {
                if let Ok(k) = BgiKey::<Z64>::from_bytes(key, n) {
                    eval_some::<Z64, Bgi>(&k, n);
                }
            }
        }
        Ok(())
    },
    seeds: || {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut out = Vec::new();
        for log_n in [0u32, 1, 5, 10] {
            for kind in 0u8..4 {
                let mut v = vec![log_n as u8, kind];
                v.extend(match kind {
                    0 => keys_of::<Fp, HalfTree>(log_n, &mut rng),
                    1 => keys_of::<Z64, HalfTree>(log_n, &mut rng),
                    2 => keys_of::<Fp, Bgi>(log_n, &mut rng),
                    _ => keys_of::<Z64, Bgi>(log_n, &mut rng),
                });
                out.push(v);
            }
        }
        out
    },
};

/// Vectors of field and ring elements as `recv_elems` decodes them: `type ‖ count ‖ bytes`.
pub const FIELD_VECTORS: Target = Target {
    name: "field-vectors",
    what: "raw little-endian vectors of F_p, Z_2^64 and bits",
    run: |data| {
        let count = usize::from(u16_at(data, 1));
        let bytes = data.get(3..).unwrap_or(&[]);
        match data.first().copied().unwrap_or(0) % 3 {
            0 => drop(doram_field::decode_vec::<Fp>(bytes, count)),
            1 => drop(doram_field::decode_vec::<Z64>(bytes, count)),
            _ => drop(doram_field::decode_vec::<Bit>(bytes, count)),
        }
        Ok(())
    },
    seeds: || {
        let mut fp = vec![0, 2, 0];
        fp.extend([0xff; 16]);
        fp.extend([1; 16]);
        let mut z = vec![1, 1, 0];
        z.extend([7; 8]);
        vec![fp, z, vec![2, 3, 0, 1, 0, 1]]
    },
};

/// 2P-Duoram's online UPDATE message as the peer sends it: `log₂ N ‖ message`. A message that
/// decodes must encode back to the same bytes; one that does not must name the sender.
pub const DUORAM2P_UPDATE: Target = Target {
    name: "duoram2p-update",
    what: "2P-Duoram's masked UPDATE (offset below N, canonical field element, exact length)",
    run: |data| {
        let big = 1usize << (data.first().copied().unwrap_or(0) % 41);
        let bytes = data.get(1..).unwrap_or(&[]);
        let peer = doram_core::PartyId::P1;
        match MaskedUpdate::decode(peer, bytes, big) {
            Ok(m) if m.encode()[..] != *bytes => {
                Err("a decoded message re-encodes differently".into())
            }
            Err(f) if f.peer != peer => Err(format!("the fault names {}, not the sender", f.peer)),
            _ => Ok(()),
        }
    },
    seeds: || {
        let mut ok = vec![20];
        ok.extend(5u64.to_le_bytes());
        ok.extend([3; 16]);
        let mut edge = vec![0];
        edge.extend([0; 24]);
        vec![ok, edge]
    },
};

/// The RAM programs' input files: `kind ‖ vertices ‖ text`.
pub const PROGRAM_INPUTS: Target = Target {
    name: "program-inputs",
    what: "sorted arrays, edge lists and preference files of doram run",
    run: |data| {
        let vertices = u64::from(u16_at(data, 1));
        let text = String::from_utf8_lossy(data.get(3..).unwrap_or(&[]));
        match data.first().copied().unwrap_or(0) % 4 {
            0 => drop(parse_sorted(&text)),
            1 => drop(parse_edges(&text, vertices, false)),
            2 => drop(parse_edges(&text, vertices, true)),
            _ => drop(parse_prefs(&text)),
        }
        Ok(())
    },
    seeds: || {
        vec![
            b"\x00\x00\x00# sorted\n1\n5,x\n9\n".to_vec(),
            b"\x01\x05\x00u,v\n0,1\n1,2\n2,3\n".to_vec(),
            b"\x02\x04\x000,1,4\n0,2,1\n2,1,2\n1,3,1\n".to_vec(),
            [
                &[3u8, 0, 0][..],
                br#"{"proposers": [[0,1],[1,0]], "acceptors": [[1,0],[0,1]]}"#,
            ]
            .concat(),
        ]
    },
};
