//! The networked service end to end on loopback: generates a CA and certificates, starts the
//! three servers (TLS mesh between them, TLS listeners for clients), runs a few queries from a
//! client that trusts only the CA, and shuts down. Pass `--corrupt 0|1|2` to make that server
//! add an error to its shares (S_0/S_1) or tamper with its views (S_2).
//!
//! ```text
//! cargo run --release -p doram-pir --example tls_service -- [--corrupt 1]
//! ```

use std::net::TcpListener;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use doram_net::Config;
use doram_net::certs::{Addresses, generate_local};
use doram_pir::server::serve_tls_on;
use doram_pir::{Behaviour, Client, Database, Server, ServerConfig, ServerId};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut corrupt: Option<usize> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corrupt" => corrupt = Some(args.next().ok_or("--corrupt needs 0, 1 or 2")?.parse()?),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let dir = std::env::temp_dir().join(format!("doram-pir-demo-{}", std::process::id()));
    let mut net = Config::load(generate_local(&dir, 3, Addresses::FreeLocalPorts)?)?;
    net.timeout = Duration::from_secs(5);
    let values: Vec<u64> = (0..1u64 << 16).map(|x| x * x).collect();
    let db = Arc::new(Database::from_u64s(&values)?);
    let mut servers = Vec::new();
    let mut threads = Vec::new();
    let mut addresses = Vec::new();
    for id in ServerId::ALL {
        let behaviour = match (corrupt, id) {
            (Some(2), ServerId::S2) => Behaviour::TamperView,
            (Some(c), s) if c == s.index() => Behaviour::WrongZ,
            _ => Behaviour::Honest,
        };
        let listener = TcpListener::bind("127.0.0.1:0")?;
        addresses.push(listener.local_addr()?.to_string());
        let mut config = ServerConfig::new(id);
        config.instance_wait = Duration::from_secs(8);
        let server = Server::new(config, db.clone(), behaviour);
        servers.push(server.clone());
        let net = net.clone();
        threads.push(thread::spawn(move || serve_tls_on(&server, &net, listener)));
    }
    let addrs = [
        addresses[0].as_str(),
        addresses[1].as_str(),
        addresses[2].as_str(),
    ];
    let mut client = Client::connect(&net, addrs, Duration::from_secs(15))?;
    for i in [0u64, 12345, 65535] {
        // Lets the background refill of the previous query finish (2 vCPUs), so the time
        // shown is the online phase alone.
        thread::sleep(Duration::from_millis(300));
        let out = client.query(i)?;
        assert_eq!(out.value, values[i as usize].to_le_bytes());
        println!(
            "D[{i}] = {} in {:.2} ms, {} bytes; {}",
            u64::from_le_bytes(out.value.clone().try_into().map_err(|_| "8 bytes")?),
            out.timings.total.as_secs_f64() * 1e3,
            out.total_bytes(),
            match &out.fallback {
                None => "no fallback".to_string(),
                Some(f) => format!(
                    "fell back to {} after {:?} (suspects {:?})",
                    f.trusted, f.deviation, f.suspects
                ),
            }
        );
    }
    drop(client);
    for s in &servers {
        s.shutdown_handle().shutdown();
    }
    for t in threads {
        let report = t.join().map_err(|_| "server panicked")??;
        println!("{report:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}
