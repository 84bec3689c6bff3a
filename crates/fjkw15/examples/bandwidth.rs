//! Bytes per access of the whole protocol (doram-net's per-link counters: payload bytes,
//! without frame headers), per party and in total, against the paper's 1.18 MB at m = 18,
//! w = 128, d = 4 B (FJKW15 §1), and the time per access after set-up (the slowest party's
//! median). On an in-process mesh, or with a fifth argument `tls` over mutually authenticated
//! TLS on loopback. The forest is dealt by the testkit's insecure dealer. Usage:
//! `cargo run --release -p doram-fjkw15 --example bandwidth -- M TAU W ACCESSES [tls]`

use doram_core::{Entropy, PartyId};
use doram_fjkw15::Params;
use doram_fjkw15::driver::{Party, access_c, access_d, access_e, setup};
use doram_fjkw15::party::Roles;
use doram_fjkw15::plain::PlainForest;
use doram_fjkw15::testkit::deal;
use doram_net::{DEFAULT_TIMEOUT, LocalMesh, Transport, loopback_mesh};
use rand::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut raw: Vec<String> = std::env::args().skip(1).collect();
    let tls = raw.last().is_some_and(|a| a == "tls");
    if tls {
        raw.pop();
    }
    let args: Vec<u64> = raw.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    let &[m, tau, w, accesses] = args.as_slice() else {
        return Err("usage: bandwidth M TAU W ACCESSES [tls]".into());
    };
    let params = Params::new(m as u32, tau as u32, w as usize, 32)?;
    let mut rng = rand_chacha::ChaCha12Rng::from_os_rng();
    let items = 1u64 << m;
    let forest = PlainForest::load(params, items, |n| vec![n & 0xffff_ffff], &mut rng)?;
    let (fd, fe) = deal(&forest, &mut rng);
    let dir = std::env::temp_dir().join(format!("doram-fjkw15-bw-{}", std::process::id()));
    let sessions = if tls {
        loopback_mesh(&dir, 3, Transport::Tls, DEFAULT_TIMEOUT)?
    } else {
        LocalMesh::new(3).build()
    };
    let start = std::time::Instant::now();
    let results: Vec<(u64, Vec<std::time::Duration>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .map(|mut s| {
                let mut forest = match s.me() {
                    PartyId::P1 => Some(fd.clone()),
                    PartyId::P2 => Some(fe.clone()),
                    _ => None,
                };
                scope.spawn(move || {
                    let seed = Entropy::Os.party_seed(s.me(), "fjkw15");
                    let mut party = setup(&mut s, Roles::default(), seed).expect("setup");
                    s.reset_stats();
                    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
                    let mut times = Vec::new();
                    for _ in 0..accesses {
                        let t = std::time::Instant::now();
                        // Reads of random addresses; D's share of the address is 0 here.
                        let addr = rng.random_range(0..items);
                        match &mut party {
                            Party::C(c) => drop(access_c(&mut s, c, &params, false).expect("C")),
                            Party::D(d) => {
                                access_d(&mut s, d, forest.as_mut().expect("D's share"), 0, None)
                                    .expect("D")
                            }
                            Party::E(e) => drop(
                                access_e(
                                    &mut s,
                                    e,
                                    forest.as_mut().expect("E's share"),
                                    addr,
                                    None,
                                )
                                .expect("E"),
                            ),
                        }
                        times.push(t.elapsed());
                    }
                    (s.stats().total().sum().bytes_sent, times)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("party"))
            .collect()
    });
    std::fs::remove_dir_all(&dir).ok();
    let sent: Vec<u64> = results.iter().map(|r| r.0).collect();
    // Per access, the slowest party's time; then the median over the accesses.
    let mut per_access: Vec<std::time::Duration> = (0..accesses as usize)
        .map(|i| results.iter().map(|r| r.1[i]).max().unwrap_or_default())
        .collect();
    per_access.sort();
    let median = per_access
        .get(per_access.len() / 2)
        .copied()
        .unwrap_or_default();
    let per = |b: u64| b as f64 / accesses as f64 / 1e6;
    println!(
        "{params:?} ({}): {accesses} reads in {:.2?}, median {median:.2?} per read; MB sent per access: C {:.3}, D {:.3}, E {:.3}, total {:.3}; P = {:.3} MB",
        if tls { "TLS" } else { "in-process" },
        start.elapsed(),
        per(sent[0]),
        per(sent[1]),
        per(sent[2]),
        per(sent.iter().sum()),
        params.total_path_bits() as f64 / 8e6
    );
    Ok(())
}
