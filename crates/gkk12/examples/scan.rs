//! Times accesses to the linear-scan baseline: `cargo run --release -p doram-gkk12 --example
//! scan -- LOG_N D ACCESSES`. The server's data enters as its garbled input once (not timed);
//! each access is the client's address by OT and one scan. Both parties are threads of this
//! process over in-memory links.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use doram_gkk12::driver::{AccessLabels, garbler_input, garbler_input_labels};
use doram_gkk12::scan::{ScanCircuits, ScanClient, ScanServer};
use doram_net::{LocalMesh, Session};
use doram_twopc::driver::{
    cot_receive, cot_send, softspoken_receiver_setup, softspoken_sender_setup,
};
use doram_twopc::gc::{Evaluator, Garbler, random_delta};
use doram_twopc::os_rng;
use doram_twopc::softspoken::ChunkBits;
use rand::Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let [log_n, d, accesses] = args[..] else {
        return Err("usage: scan LOG_N D ACCESSES".into());
    };
    let n = 1usize << log_n;
    let circuits = ScanCircuits::new(n, d, log_n)?;
    println!(
        "n = 2^{log_n}, d = {d}: AND per access {}",
        circuits.and_gates()
    );
    let delta = random_delta(&mut os_rng());
    let addrs: Vec<u64> = (0..accesses)
        .map(|_| rand::rng().random_range(0..n as u64))
        .collect();
    let circuits = Mutex::new(Some((circuits.clone(), circuits)));
    let mesh = LocalMesh::new(2).timeout(Duration::from_secs(3600));
    let out = doram_net::testkit::run(mesh.build(), |mut s: Session| -> Vec<f64> {
        let (cs, cc) = circuits.lock().expect("lock").clone().expect("circuits");
        let mut times = Vec::new();
        if s.me().index() == 0 {
            let mut rng = os_rng();
            let mut ot = softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng)
                .expect("setup");
            let bits: Vec<bool> = (0..n * d).map(|k| (k / d + k) % 3 == 0).collect();
            let memory = garbler_input(&mut s, delta, &bits, &mut rng).expect("load");
            let zero = garbler_input(&mut s, delta, &[false], &mut rng).expect("zero")[0];
            let mut server = ScanServer::new(cs, memory, zero).expect("server");
            let mut garbler = Garbler::new(delta, 0).expect("garbler");
            for _ in &addrs {
                let q = cot_send(&mut s, &mut ot, log_n + 1 + d).expect("ot").q;
                let labels = AccessLabels {
                    addr: q[..log_n].to_vec(),
                    write: q[log_n],
                    data: q[log_n + 1..].to_vec(),
                };
                let t = Instant::now();
                server
                    .access(&mut s, &mut garbler, &labels)
                    .expect("access");
                times.push(t.elapsed().as_secs_f64());
            }
        } else {
            let mut ot = softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut os_rng())
                .expect("setup");
            let memory = garbler_input_labels(&mut s, n * d).expect("load");
            let zero = garbler_input_labels(&mut s, 1).expect("zero")[0];
            let mut client = ScanClient::new(cc, memory, zero).expect("client");
            let mut evaluator = Evaluator::new(0);
            for &v in &addrs {
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
    println!(
        "per access: median {:.3} s, min {:.3} s over {}",
        t[t.len() / 2],
        t[0],
        t.len()
    );
    Ok(())
}
