//! Times the secure load and two-party accesses or binary searches:
//! `cargo run --release -p doram-gkk12 --example access -- LOG_N D COUNT [load|sorted|dealer] [read|search] [local|tcp|tls]`.
//! `load` (the default) runs the three-party load (server, client, helper); `sorted` the load
//! by the two parties alone (`doram_gkk12::sortload`, the server holding the data); `dealer`
//! builds the state with the **insecure** test dealer instead, for comparison. `read` (the default) times
//! COUNT reads of random addresses, `search` COUNT binary searches for random keys (entry v
//! holds the key v); every result is checked. The parties run as threads of this process over
//! in-memory links (`local`, the default), or TCP or TLS on loopback between the two parties
//! (the three-party load's links are in-memory in every case).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use doram_gkk12::driver::{AccessLabels, Client, ClientState, Server, ServerState};
use doram_gkk12::load::{self, ClientLoad, ServerLoad};
use doram_gkk12::search::{lower_bound, serve_search};
use doram_gkk12::sortload::{Holding, load_client, load_server};
use doram_gkk12::testkit::deal_random_insecurely;
use doram_gkk12::{OT_CHUNK, Params};
use doram_net::{LocalMesh, Session, Transport, loopback_mesh};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::os_rng;
use rand::{Rng, SeedableRng};

const USAGE: &str =
    "usage: access LOG_N D COUNT [load|sorted|dealer] [read|search] [local|tcp|tls]";

/// One party's starting point: a dealt state, its part of the three-party load, or the load
/// by the two parties alone, still to run.
enum Start<D, L> {
    Dealt(D),
    Loaded(L),
    Sorted,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nums: Vec<u64> = args
        .iter()
        .take(3)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let [log_n, d, accesses] = nums[..] else {
        return Err(USAGE.into());
    };
    let dealer = args.get(3).is_some_and(|m| m == "dealer");
    let sorted = args.get(3).is_some_and(|m| m == "sorted");
    let search = args.get(4).is_some_and(|m| m == "search");
    let transport = match args.get(5).map(String::as_str) {
        None | Some("local") => None,
        Some("tcp") => Some(Transport::DangerousPlaintext),
        Some("tls") => Some(Transport::Tls),
        Some(_) => return Err(USAGE.into()),
    };
    let params = Params::paper(1 << log_n, d as usize)?;
    println!(
        "{params:?}; AND per access {}",
        doram_gkk12::bits::Circuits::new(&params)?.per_access().and
    );
    let mut rng = rand_chacha::ChaCha12Rng::from_os_rng();
    let t = Instant::now();
    let words = (d as usize).div_ceil(64);
    let delta = random_delta(&mut os_rng());
    let (ss, cs) = if sorted {
        (Start::Sorted, Start::Sorted)
    } else if dealer {
        let (ss, cs) = deal_random_insecurely(params, |v| vec![v; words], delta, &mut rng)?;
        println!(
            "dealt (insecure dealer) in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        (Start::Dealt(ss), Start::Dealt(cs))
    } else {
        let (sl, cl) = secure_load(params, words)?;
        println!(
            "loaded (three parties) in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        (Start::Loaded(sl), Start::Loaded(cl))
    };
    let addrs: Vec<u64> = (0..accesses)
        .map(|_| rng.random_range(0..=(1u64 << log_n)))
        .collect();
    let ss = Mutex::new(Some(ss));
    let cs = Mutex::new(Some(cs));
    let timeout = Duration::from_secs(600);
    // The parties' keys go to a fresh private directory (random name, owner only), removed
    // when `dir` is dropped.
    let dir = tempfile::tempdir()?;
    let sessions = match transport {
        None => LocalMesh::new(2).timeout(timeout).build(),
        Some(t) => loopback_mesh(dir.path(), 2, t, timeout)?,
    };
    let out = doram_net::testkit::run(sessions, |mut s: Session| -> Vec<f64> {
        if s.me().index() == 0 {
            let start = ss.lock().expect("lock").take().expect("state");
            run_server(&mut s, start, &params, words, delta, addrs.len(), search)
        } else {
            let start = cs.lock().expect("lock").take().expect("state");
            run_client(&mut s, start, &params, &addrs, search);
            Vec::new()
        }
    });
    let mut t = out[0].clone();
    t.sort_by(f64::total_cmp);
    if let (Some(min), Some(med)) = (t.first(), t.get(t.len() / 2)) {
        println!(
            "per {}: median {med:.3} s, min {min:.3} s over {}",
            if search { "search" } else { "access" },
            t.len()
        );
    }
    Ok(())
}

/// The server: finishes its state, then serves `n` accesses (or searches); returns their
/// times.
fn run_server(
    s: &mut Session,
    start: Start<ServerState, ServerLoad>,
    params: &Params,
    words: usize,
    delta: u128,
    n: usize,
    search: bool,
) -> Vec<f64> {
    let mut ot = softspoken_sender_setup(s, OT_CHUNK, delta, &mut os_rng()).expect("setup");
    let state = match start {
        Start::Dealt(state) => state,
        Start::Loaded(l) => l.finish(s, &mut ot, &mut os_rng()).expect("finish"),
        Start::Sorted => {
            let t = Instant::now();
            let before = s.stats().total().sum().bytes_sent;
            let load_delta = random_delta(&mut os_rng());
            let mut send =
                softspoken_sender_setup(s, OT_CHUNK, load_delta, &mut os_rng()).expect("setup");
            let mut recv = softspoken_receiver_setup(s, OT_CHUNK, &mut os_rng()).expect("setup");
            // The server holds the data, item v the words (v, v, …).
            let db = params.payload_bits().div_ceil(8);
            let data: Vec<u8> = (0..params.items())
                .flat_map(|v| {
                    let mut bytes: Vec<u8> = std::iter::repeat_n(v, words)
                        .flat_map(u64::to_le_bytes)
                        .collect();
                    bytes.resize(db, 0);
                    bytes
                })
                .collect();
            let state = load_server(
                s,
                params,
                &data,
                Holding::Server,
                &mut ot,
                &mut send,
                &mut recv,
                &mut os_rng(),
            )
            .expect("load");
            println!(
                "loaded (two parties alone) in {:.1} s; server sent {} bytes",
                t.elapsed().as_secs_f64(),
                s.stats().total().sum().bytes_sent - before
            );
            state
        }
    };
    let mut server = Server::new(state, ot, os_rng()).expect("server");
    let (abits, bits) = (
        server.params().address_bits(),
        server.params().payload_bits(),
    );
    let before = s.stats().total().sum().bytes_sent;
    let mut times = Vec::new();
    for _ in 0..n {
        if search {
            let t = Instant::now();
            serve_search(&mut server, s).expect("search");
            times.push(t.elapsed().as_secs_f64());
            continue;
        }
        let inputs = server.peer_input(s, abits + 1 + bits).expect("input");
        let labels = AccessLabels {
            addr: inputs[..abits].to_vec(),
            write: inputs[abits],
            data: inputs[abits + 1..].to_vec(),
        };
        let t = Instant::now();
        let out = server.access(s, &labels).expect("access");
        times.push(t.elapsed().as_secs_f64());
        server.reveal_to_client(s, &out).expect("reveal");
    }
    println!(
        "server sent {} bytes after the setup",
        s.stats().total().sum().bytes_sent - before
    );
    times
}

/// The client: finishes its state, then reads `addrs` (or searches for them), checking each
/// result.
fn run_client(
    s: &mut Session,
    start: Start<ClientState, ClientLoad>,
    params: &Params,
    addrs: &[u64],
    search: bool,
) {
    let mut ot = softspoken_receiver_setup(s, OT_CHUNK, &mut os_rng()).expect("setup");
    let state = match start {
        Start::Dealt(state) => state,
        Start::Loaded(l) => l.finish(s, &mut ot).expect("finish"),
        Start::Sorted => {
            let before = s.stats().total().sum().bytes_sent;
            let mut recv = softspoken_receiver_setup(s, OT_CHUNK, &mut os_rng()).expect("setup");
            let mut send =
                softspoken_sender_setup(s, OT_CHUNK, random_delta(&mut os_rng()), &mut os_rng())
                    .expect("setup");
            // The server holds the data: the client passes none.
            let state = load_client(
                s,
                params,
                &[],
                Holding::Server,
                &mut ot,
                &mut send,
                &mut recv,
                &mut os_rng(),
            )
            .expect("load");
            println!(
                "client sent {} bytes in the load",
                s.stats().total().sum().bytes_sent - before
            );
            state
        }
    };
    let mut client = Client::new(state, ot, os_rng()).expect("client");
    let (abits, bits) = (
        client.params().address_bits(),
        client.params().payload_bits(),
    );
    let before = s.stats().total().sum().bytes_sent;
    let n = client.params().items();
    for &v in addrs {
        if search {
            let got = lower_bound(&mut client, s, v).expect("search");
            assert_eq!(got, v.min(n), "search result");
            continue;
        }
        let v = v % n;
        let mut input: Vec<bool> = (0..abits).map(|k| (v >> k) & 1 == 1).collect();
        input.push(false);
        input.extend(std::iter::repeat_n(false, bits));
        let labels = client.input(s, &input).expect("input");
        let labels = AccessLabels {
            addr: labels[..abits].to_vec(),
            write: labels[abits],
            data: labels[abits + 1..].to_vec(),
        };
        let out = client.access(s, &labels).expect("access");
        let got = client.reveal(s, &out).expect("reveal");
        let word = got
            .iter()
            .take(64)
            .enumerate()
            .fold(0u64, |a, (k, &b)| a | (u64::from(b) << k));
        assert_eq!(word, v, "read back");
    }
    println!(
        "client sent {} bytes after the setup",
        s.stats().total().sum().bytes_sent - before
    );
}

/// The three-party load of `v ↦ (v, v, …)`; prints each party's bytes sent.
fn secure_load(
    params: Params,
    words: usize,
) -> Result<(ServerLoad, ClientLoad), Box<dyn std::error::Error>> {
    let mesh = LocalMesh::new(3).timeout(Duration::from_secs(600));
    let (s, c, sent) = load::run_threads(mesh.build(), &params, |v| vec![v; words], |_| os_rng())?;
    println!(
        "load bytes sent: server {}, client {}, helper {}",
        sent[0], sent[1], sent[2]
    );
    Ok((s, c))
}
