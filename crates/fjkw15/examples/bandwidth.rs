//! Bytes per access of the whole protocol (doram-net's per-link counters: payload bytes,
//! without frame headers), per party and in total, online and in pre-computation (each access
//! pre-computes just before it runs, counted apart), against the paper's 1.18 MB at m = 18,
//! w = 128, d = 4 B (FJKW15 §1), and the time per access after set-up (the slowest party's
//! median, online and pre-computation apart). On an in-process mesh, or with a fifth argument
//! `tls` over mutually authenticated TLS on loopback. The forest is dealt by the testkit's
//! insecure dealer. Usage:
//! `cargo run --release -p doram-fjkw15 --example bandwidth -- M TAU W ACCESSES [tls]`

use doram_core::{Entropy, PartyId};
use doram_fjkw15::Params;
use doram_fjkw15::driver::{
    Party, Pre, access_c_with, access_d_with, access_e_with, precompute, setup,
};
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
    type Times = Vec<(std::time::Duration, std::time::Duration)>;
    let results: Vec<([u64; 2], Times, u64)> = std::thread::scope(|scope| {
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
                        s.set_phase("pre");
                        let pre = precompute(&mut s, &mut party, &params).expect("pre");
                        let t_pre = t.elapsed();
                        s.set_phase("online");
                        let t = std::time::Instant::now();
                        // Reads of random addresses; D's share of the address is 0 here.
                        let addr = rng.random_range(0..items);
                        match (&mut party, pre) {
                            (Party::C(c), Pre::C(pre)) => {
                                drop(access_c_with(&mut s, c, &params, false, pre).expect("C"))
                            }
                            (Party::D(d), Pre::D(pre)) => {
                                let f = forest.as_mut().expect("D's share");
                                access_d_with(&mut s, d, f, (0, None), pre).expect("D")
                            }
                            (Party::E(e), Pre::E(pre)) => {
                                let f = forest.as_mut().expect("E's share");
                                drop(
                                    access_e_with(&mut s, e, f, (addr, None), (pre, false))
                                        .expect("E"),
                                )
                            }
                            _ => unreachable!("one role per party"),
                        }
                        times.push((t_pre, t.elapsed()));
                    }
                    let sent = |ph: &str| s.stats().phase(ph).map_or(0, |p| p.sum().bytes_sent);
                    let rounds = s.stats().phase("online").map_or(0, |p| p.rounds);
                    ([sent("pre"), sent("online")], times, rounds)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("party"))
            .collect()
    });
    std::fs::remove_dir_all(&dir).ok();
    // Per access, the slowest party's time; then the median over the accesses.
    let median = |pick: fn(&(std::time::Duration, std::time::Duration)) -> std::time::Duration| {
        let mut v: Vec<std::time::Duration> = (0..accesses as usize)
            .map(|i| {
                results
                    .iter()
                    .map(|r| pick(&r.1[i]))
                    .max()
                    .unwrap_or_default()
            })
            .collect();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    let per = |b: u64| b as f64 / accesses as f64 / 1e3;
    let (pre, on) = (median(|t| t.0), median(|t| t.1));
    let rounds = results.iter().map(|r| r.2).max().unwrap_or(0) as f64 / accesses as f64;
    println!(
        "{params:?} ({}): {accesses} reads in {:.2?}; median per read: online {on:.2?}, pre-computation {pre:.2?}",
        if tls { "TLS" } else { "in-process" },
        start.elapsed(),
    );
    for (k, what) in [(1, "online"), (0, "pre-computation")] {
        let sent: Vec<u64> = results.iter().map(|r| r.0[k]).collect();
        println!(
            "  {what}: kB sent per access: C {:.1}, D {:.1}, E {:.1}, total {:.1}",
            per(sent[0]),
            per(sent[1]),
            per(sent[2]),
            per(sent.iter().sum()),
        );
    }
    println!(
        "  online rounds per access (largest party): {rounds:.1}; P = {:.1} kB",
        params.total_path_bits() as f64 / 8e3
    );
    Ok(())
}
