//! Bulk throughput of one link on loopback, for each backend.
//!
//! `cargo run --release -p doram-net --example throughput [MiB]` sends the given amount
//! (default 1024 MiB) in 1 MiB frames from P0 to P1 and prints the wall-clock rate. On Linux it
//! also prints the CPU time of the sending and the receiving thread, and the rate the slower of
//! the two would allow on a core of its own — a figure that does not depend on what else the
//! machine is running (the two parties of a real deployment run on different hosts).

use std::net::TcpListener;
use std::thread;
use std::time::Instant;

use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, ConnectOptions, NetError, Session, Transport};

const FRAME: usize = 1 << 20;

/// Thread name and CPU seconds from a `/proc/.../stat` file (Linux).
fn parse_stat(stat: &str) -> Option<(String, f64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // Clock ticks are 1/100 s on Linux.
    Some((name, (utime + stime) / 100.0))
}

/// CPU seconds used so far by the calling thread.
fn thread_cpu_seconds() -> Option<f64> {
    parse_stat(&std::fs::read_to_string("/proc/thread-self/stat").ok()?).map(|(_, t)| t)
}

/// CPU seconds used so far by the thread of this process whose name starts with `prefix`.
fn named_thread_cpu_seconds(prefix: &str) -> Option<f64> {
    std::fs::read_dir("/proc/self/task").ok()?.find_map(|task| {
        let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
        let (name, t) = parse_stat(&stat)?;
        name.starts_with(prefix).then_some(t)
    })
}

fn pair(transport: Option<Transport>) -> Result<(Session, Session, tempfile::TempDir), NetError> {
    let dir = tempfile::tempdir().map_err(|e| NetError::Certs(e.to_string()))?;
    if transport.is_none() {
        let mut s = Session::local_mesh(2);
        let p1 = s.pop().ok_or(NetError::Certs("mesh".into()))?;
        let p0 = s.pop().ok_or(NetError::Certs("mesh".into()))?;
        return Ok((p0, p1, dir));
    }
    let bind = || TcpListener::bind("127.0.0.1:0").map_err(|e| NetError::Certs(e.to_string()));
    let ls = [bind()?, bind()?];
    let addrs = ls
        .iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.to_string())
                .map_err(|e| NetError::Certs(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let config = Config::load(generate_local(dir.path(), 2, Addresses::Explicit(addrs))?)?;
    let transport = transport.unwrap_or_default();
    let [l0, l1] = ls;
    let c1 = config.clone();
    let h = thread::spawn(move || {
        Session::connect_with(
            &c1,
            PartyId::P1,
            ConnectOptions::new().transport(transport).listener(l1),
        )
    });
    let p0 = Session::connect_with(
        &config,
        PartyId::P0,
        ConnectOptions::new().transport(transport).listener(l0),
    )?;
    let p1 = h
        .join()
        .map_err(|_| NetError::Certs("connect thread panicked".into()))??;
    Ok((p0, p1, dir))
}

fn main() -> Result<(), NetError> {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1024);
    let data = vec![0x5au8; FRAME];
    for (name, transport) in [
        ("in-process", None),
        ("tcp", Some(Transport::DangerousPlaintext)),
        ("tls", Some(Transport::Tls)),
    ] {
        let (mut p0, mut p1, _dir) = pair(transport)?;
        let receiver = thread::spawn(move || -> Result<(Session, Option<f64>), NetError> {
            let cpu0 = thread_cpu_seconds();
            for _ in 0..mib {
                std::hint::black_box(p1.recv_bytes(PartyId::P0)?);
            }
            p1.send_bytes(PartyId::P0, &[1])?;
            // The session is returned so that its reader thread is still there to be measured.
            Ok((p1, cpu0.zip(thread_cpu_seconds()).map(|(a, b)| b - a)))
        });
        // Socket links decode in the receiving session's reader thread.
        let reader = "doram-net P1<-P";
        let reader0 = named_thread_cpu_seconds(reader);
        let cpu0 = thread_cpu_seconds();
        let start = Instant::now();
        for _ in 0..mib {
            p0.send_bytes(PartyId::P1, &data)?;
        }
        p0.recv_bytes(PartyId::P1)?;
        let wall = start.elapsed().as_secs_f64();
        let send_cpu = cpu0.zip(thread_cpu_seconds()).map(|(a, b)| b - a);
        let (_p1, recv_cpu) = receiver
            .join()
            .map_err(|_| NetError::Certs("receiver panicked".into()))??;
        let reader_cpu = reader0
            .zip(named_thread_cpu_seconds(reader))
            .map(|(a, b)| b - a)
            .unwrap_or(0.0);
        let bytes = (mib * FRAME) as f64;
        print!("{name:>10}: {:6.2} GB/s wall", bytes / wall / 1e9);
        if let (Some(s), Some(r)) = (send_cpu, recv_cpu) {
            let r = r + reader_cpu;
            print!(
                "; CPU: sender {s:.2} s, receiver {r:.2} s; {:.2} GB/s with a core per side",
                bytes / s.max(r) / 1e9
            );
        }
        println!();
    }
    Ok(())
}
