//! Times the linear-scan baseline: `cargo run --release -p doram-gkk12 --example scan -- LOG_N D
//! COUNT [read|search]`. The server's data enters as its garbled input once (not timed); `read`
//! (the default) times COUNT accesses (the client's address by OT, one scan each), `search`
//! COUNT binary searches for random keys over entries whose first 64 bits are their address
//! (`gkk12::search` on the scan memory, ⌊log₂ n⌋ + 1 scans each, every result checked). Both
//! parties are threads of this process over in-memory links.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use doram_gkk12::OT_CHUNK;
use doram_gkk12::driver::{AccessLabels, garbler_input, garbler_input_labels};
use doram_gkk12::scan::{ScanCircuits, ScanClient, ScanSearchClient, ScanSearchServer, ScanServer};
use doram_gkk12::search::{KEY_BITS, Shape, search};
use doram_net::{LocalMesh, Session};
use doram_twopc::driver::{
    cot_receive, cot_send, softspoken_receiver_setup, softspoken_sender_setup,
};
use doram_twopc::gc::{Evaluator, Garbler, random_delta};
use doram_twopc::os_rng;
use rand::Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nums: Vec<usize> = args
        .iter()
        .take(3)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let [log_n, d, count] = nums[..] else {
        return Err("usage: scan LOG_N D COUNT [read|search]".into());
    };
    let searching = args.get(3).is_some_and(|m| m == "search");
    if searching && d < KEY_BITS {
        return Err("a search needs entries of at least 64 bits".into());
    }
    let n = 1usize << log_n;
    let circuits = ScanCircuits::new(n, d, log_n)?;
    println!(
        "n = 2^{log_n}, d = {d}: AND per access {}",
        circuits.and_gates()
    );
    let delta = random_delta(&mut os_rng());
    let upper = if searching { n as u64 + 1 } else { n as u64 };
    let probes: Vec<u64> = (0..count)
        .map(|_| rand::rng().random_range(0..upper))
        .collect();
    let shape = Shape {
        items: n as u64,
        address_bits: log_n,
        payload_bits: d,
    };
    let circuits = Mutex::new(Some((circuits.clone(), circuits)));
    let mesh = LocalMesh::new(2).timeout(Duration::from_secs(3600));
    let out = doram_net::testkit::run(mesh.build(), |mut s: Session| -> Vec<f64> {
        let (cs, cc) = circuits.lock().expect("lock").clone().expect("circuits");
        let mut times = Vec::new();
        if s.me().index() == 0 {
            let mut rng = os_rng();
            let mut ot = softspoken_sender_setup(&mut s, OT_CHUNK, delta, &mut rng).expect("setup");
            // Entry v: its address in the first 64 bits, then a pattern.
            let bits: Vec<bool> = (0..n * d)
                .map(|k| {
                    let (v, j) = (k / d, k % d);
                    if j < 64 {
                        (v >> j) & 1 == 1
                    } else {
                        (v + j) % 3 == 0
                    }
                })
                .collect();
            let memory = garbler_input(&mut s, delta, &bits, &mut rng).expect("load");
            let zero = garbler_input(&mut s, delta, &[false], &mut rng).expect("zero")[0];
            let mut server = ScanServer::new(cs, memory, zero).expect("server");
            let mut garbler = Garbler::new(delta, 0).expect("garbler");
            for _ in &probes {
                let width = if searching { KEY_BITS } else { log_n + 1 + d };
                let q = cot_send(&mut s, &mut ot, width).expect("ot").q;
                let t = Instant::now();
                if searching {
                    let mut party = ScanSearchServer {
                        scan: &mut server,
                        garbler: &mut garbler,
                    };
                    let pos = search(&mut party, &mut s, &shape, &q).expect("search");
                    let lsbs: Vec<u8> = pos.iter().map(|&w| (w & 1) as u8).collect();
                    s.send_bytes(doram_core::PartyId::P1, &lsbs)
                        .expect("reveal");
                } else {
                    let labels = AccessLabels {
                        addr: q[..log_n].to_vec(),
                        write: q[log_n],
                        data: q[log_n + 1..].to_vec(),
                    };
                    server
                        .access(&mut s, &mut garbler, &labels)
                        .expect("access");
                }
                times.push(t.elapsed().as_secs_f64());
            }
        } else {
            let mut ot = softspoken_receiver_setup(&mut s, OT_CHUNK, &mut os_rng()).expect("setup");
            let memory = garbler_input_labels(&mut s, n * d).expect("load");
            let zero = garbler_input_labels(&mut s, 1).expect("zero")[0];
            let mut client = ScanClient::new(cc, memory, zero).expect("client");
            let mut evaluator = Evaluator::new(0);
            for &v in &probes {
                if searching {
                    let key: Vec<bool> = (0..KEY_BITS).map(|k| (v >> k) & 1 == 1).collect();
                    let t = cot_receive(&mut s, &mut ot, &key).expect("ot").t;
                    let mut party = ScanSearchClient {
                        scan: &mut client,
                        evaluator: &mut evaluator,
                    };
                    let pos = search(&mut party, &mut s, &shape, &t).expect("search");
                    let lsbs = s.recv_bytes(doram_core::PartyId::P0).expect("reveal");
                    let got = pos
                        .iter()
                        .zip(&lsbs)
                        .enumerate()
                        .fold(0u64, |a, (k, (&w, &l))| {
                            a | (u64::from((w & 1) as u8 ^ l) << k)
                        });
                    assert_eq!(got, v, "search result");
                    continue;
                }
                let mut input: Vec<bool> = (0..log_n).map(|k| (v >> k) & 1 == 1).collect();
                input.push(false);
                input.extend(std::iter::repeat_n(false, d));
                let t = cot_receive(&mut s, &mut ot, &input).expect("ot").t;
                let labels = AccessLabels {
                    addr: t[..log_n].to_vec(),
                    write: t[log_n],
                    data: t[log_n + 1..].to_vec(),
                };
                client
                    .access(&mut s, &mut evaluator, &labels)
                    .expect("access");
            }
        }
        times
    });
    let mut t = out[0].clone();
    t.sort_by(f64::total_cmp);
    if let (Some(min), Some(med)) = (t.first(), t.get(t.len() / 2)) {
        println!(
            "per {}: median {med:.3} s, min {min:.3} s over {}",
            if searching { "search" } else { "access" },
            t.len()
        );
    }
    Ok(())
}
