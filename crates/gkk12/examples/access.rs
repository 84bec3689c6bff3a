//! Times two-party accesses on a state made by the **insecure** test dealer (the secure load
//! is not written yet): `cargo run --release -p doram-gkk12 --example access -- LOG_N D ACCESSES`.
//! Both parties run as threads of this process over in-memory links.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use doram_gkk12::Params;
use doram_gkk12::driver::{AccessLabels, Client, Server};
use doram_gkk12::testkit::deal_random_insecurely;
use doram_net::{LocalMesh, Session};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::random_delta;
use doram_twopc::os_rng;
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let [log_n, d, accesses] = args[..] else {
        return Err("usage: access LOG_N D ACCESSES".into());
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
    let (ss, cs) = deal_random_insecurely(params, |v| vec![v; words], delta, &mut rng)?;
    println!("dealt in {:.1} s", t.elapsed().as_secs_f64());
    let addrs: Vec<u64> = (0..accesses)
        .map(|_| rng.random_range(0..1u64 << log_n))
        .collect();
    let abits = params.address_bits();
    let bits = params.payload_bits();
    let ss = Mutex::new(Some(ss));
    let cs = Mutex::new(Some(cs));
    let mesh = LocalMesh::new(2).timeout(Duration::from_secs(600));
    let out = doram_net::testkit::run(mesh.build(), |mut s: Session| -> Vec<f64> {
        let mut times = Vec::new();
        if s.me().index() == 0 {
            let ot = softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut os_rng())
                .expect("setup");
            let state = ss.lock().expect("lock").take().expect("state");
            let mut server = Server::new(state, ot, os_rng()).expect("server");
            for _ in &addrs {
                let inputs = server.peer_input(&mut s, abits + 1 + bits).expect("input");
                let labels = AccessLabels {
                    addr: inputs[..abits].to_vec(),
                    write: inputs[abits],
                    data: inputs[abits + 1..].to_vec(),
                };
                let t = Instant::now();
                let out = server.access(&mut s, &labels).expect("access");
                times.push(t.elapsed().as_secs_f64());
                server.reveal_to_client(&mut s, &out).expect("reveal");
            }
            println!("server sent {} bytes", s.stats().total().sum().bytes_sent);
        } else {
            let ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut os_rng())
                .expect("setup");
            let state = cs.lock().expect("lock").take().expect("state");
            let mut client = Client::new(state, ot, os_rng()).expect("client");
            for &v in &addrs {
                let mut input: Vec<bool> = (0..abits).map(|k| (v >> k) & 1 == 1).collect();
                input.push(false);
                input.extend(std::iter::repeat_n(false, bits));
                let labels = client.input(&mut s, &input).expect("input");
                let labels = AccessLabels {
                    addr: labels[..abits].to_vec(),
                    write: labels[abits],
                    data: labels[abits + 1..].to_vec(),
                };
                let out = client.access(&mut s, &labels).expect("access");
                let got = client.reveal(&mut s, &out).expect("reveal");
                let word = got
                    .iter()
                    .take(64)
                    .enumerate()
                    .fold(0u64, |a, (k, &b)| a | (u64::from(b) << k));
                assert_eq!(word, v, "read back");
            }
            println!("client sent {} bytes", s.stats().total().sum().bytes_sent);
        }
        times
    });
    let mut t = out[0].clone();
    t.sort_by(f64::total_cmp);
    println!(
        "per access: median {:.3} s, min {:.3} s over {}",
        t[t.len() / 2],
        t[0],
        t.len()
    );
    Ok(())
}
