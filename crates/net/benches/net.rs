//! Transport benchmarks on loopback: small-message round trip latency and bulk throughput
//! (16 MiB in 1 MiB frames) for the in-process, plaintext TCP and TLS backends.

use std::hint::black_box;
use std::net::TcpListener;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_main};
use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, ConnectOptions, Session, Transport};

const P0: PartyId = PartyId::P0;
const P1: PartyId = PartyId::P1;
const FRAME: usize = 1 << 20;
const FRAMES: usize = 16;

#[derive(Clone, Copy)]
enum Backend {
    InProcess,
    Tcp,
    Tls,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::InProcess => "in-process",
            Backend::Tcp => "tcp",
            Backend::Tls => "tls",
        }
    }
}

/// A connected pair of sessions (and the directory holding TLS material, if any).
fn pair(backend: Backend) -> (Session, Session, Option<tempfile::TempDir>) {
    if let Backend::InProcess = backend {
        let mut s = Session::local_mesh(2);
        let p1 = s.pop().expect("two sessions");
        let p0 = s.pop().expect("two sessions");
        return (p0, p1, None);
    }
    let ls: Vec<TcpListener> = (0..2)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind"))
        .collect();
    let addrs: Vec<String> = ls
        .iter()
        .map(|l| l.local_addr().expect("addr").to_string())
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = generate_local(dir.path(), 2, Addresses::Explicit(addrs)).expect("certs");
    let config = Config::load(path).expect("config");
    let transport = match backend {
        Backend::Tls => Transport::Tls,
        _ => Transport::DangerousPlaintext,
    };
    let mut sessions = thread::scope(|s| {
        let hs: Vec<_> = ls
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let config = &config;
                s.spawn(move || {
                    Session::connect_with(
                        config,
                        PartyId::ALL[i],
                        ConnectOptions::new().transport(transport).listener(l),
                    )
                    .expect("connect")
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("thread"))
            .collect::<Vec<_>>()
    });
    let p1 = sessions.pop().expect("two sessions");
    let p0 = sessions.pop().expect("two sessions");
    (p0, p1, Some(dir))
}

/// P1 echoes every message until it gets an empty one.
fn echo(mut p1: Session) -> JoinHandle<()> {
    thread::spawn(move || {
        loop {
            let m = p1.recv_bytes(P0).expect("echo recv");
            if m.is_empty() {
                break;
            }
            p1.send_bytes(P0, &m).expect("echo send");
        }
    })
}

/// P1 receives batches of `FRAMES` frames and acknowledges each batch with one byte, until it
/// gets an empty message.
fn sink(mut p1: Session) -> JoinHandle<()> {
    thread::spawn(move || {
        loop {
            let m = p1.recv_bytes(P0).expect("sink recv");
            if m.is_empty() {
                break;
            }
            for _ in 1..FRAMES {
                black_box(p1.recv_bytes(P0).expect("sink recv"));
            }
            p1.send_bytes(P0, &[1]).expect("ack");
        }
    })
}

fn round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("round_trip_8B");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for backend in [Backend::InProcess, Backend::Tcp, Backend::Tls] {
        let (mut p0, p1, _dir) = pair(backend);
        let h = echo(p1);
        g.bench_function(backend.name(), |b| {
            b.iter(|| {
                p0.send_bytes(P1, &[7u8; 8]).expect("send");
                black_box(p0.recv_bytes(P1).expect("recv"));
            })
        });
        p0.send_bytes(P1, &[]).expect("stop");
        h.join().expect("echo thread");
    }
    g.finish();
}

fn bulk(c: &mut Criterion) {
    let mut g = c.benchmark_group("bulk_16MiB");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Bytes((FRAME * FRAMES) as u64));
    let data = vec![0x5au8; FRAME];
    for backend in [Backend::InProcess, Backend::Tcp, Backend::Tls] {
        let (mut p0, p1, _dir) = pair(backend);
        let h = sink(p1);
        g.bench_function(backend.name(), |b| {
            b.iter(|| {
                for _ in 0..FRAMES {
                    p0.send_bytes(P1, &data).expect("send");
                }
                black_box(p0.recv_bytes(P1).expect("ack"));
            })
        });
        p0.send_bytes(P1, &[]).expect("stop");
        h.join().expect("sink thread");
    }
    g.finish();
}

mod group {
    // The macro defines an undocumented public function.
    #![allow(missing_docs)]
    criterion::criterion_group!(benches, super::round_trip, super::bulk);
}
criterion_main!(group::benches);
