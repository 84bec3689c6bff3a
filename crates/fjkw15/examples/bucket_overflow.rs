//! The overflow experiment of FJKW15 §5 on one tree: for a tree of height d holding 2^k tuples,
//! the share of trials that ended in an overflow, by bucket size, with the load histograms.
//! Usage:
//! `cargo run --release -p doram-fjkw15 --example bucket_overflow -- D LOG_TUPLES ACCESSES TRIALS W...`
//! (each trial loads every tuple on a random leaf, then makes ACCESSES accesses to random
//! tuples; the tree of OT_i with w = 2^k' has d = iτ − k' and 2^(iτ) tuples).

use doram_fjkw15::plain::{Arrivals, markov_overflow, markov_overflow_sided, overflow_experiment};
use rand::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [d, log_tuples, accesses, trials, ws @ ..] = args.as_slice() else {
        return Err("usage: overflow D LOG_TUPLES ACCESSES TRIALS W...".into());
    };
    let d: u32 = d.parse()?;
    let tuples = 1u64 << log_tuples.parse::<u32>()?;
    let (accesses, trials): (u64, u64) = (accesses.parse()?, trials.parse()?);
    let mut rng = rand_chacha::ChaCha12Rng::from_os_rng();
    println!(
        "d\ttuples\tw\ttrials\taccesses run\tinternal overflows\tleaf overflows\tmax internal load\tmax leaf load"
    );
    for w in ws {
        let w: usize = w.parse()?;
        let r = overflow_experiment(d, w, tuples, accesses, trials, &mut rng);
        let max = |h: &[u64]| h.iter().rposition(|&c| c > 0).unwrap_or(0);
        println!(
            "{d}\t{tuples}\t{w}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.trials,
            r.accesses,
            r.internal_overflows,
            r.leaf_overflows,
            max(&r.stats.internal_loads),
            max(&r.stats.leaf_loads)
        );
        let tail: Vec<String> = r.stats.internal_loads.iter().map(u64::to_string).collect();
        println!("#\tinternal load histogram (0..=w): {}", tail.join(" "));
        let depths: Vec<String> = r.internal_by_depth.iter().map(u64::to_string).collect();
        println!("#\tinternal overflows by depth: {}", depths.join(" "));
        let visits = r.accesses * u64::from(d);
        let per_visit = r.internal_overflows as f64 / visits.max(1) as f64;
        let chain = markov_overflow(w, 1 << 16, Arrivals::ZeroOrTwo) / 65536.0;
        let sided = markov_overflow_sided(w, 1 << 14, Arrivals::ZeroOrTwo) / 16384.0;
        println!(
            "#\tper internal visit: measured {per_visit:.3e}, Markov chain (0 or 2) \
             {chain:.3e}, sided chain (0 or 2) {sided:.3e}"
        );
    }
    Ok(())
}
