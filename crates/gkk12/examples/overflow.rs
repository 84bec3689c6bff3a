//! GKK12 Figure 4's experiment: for a tree of 2^k items, the share of trials in which an
//! eviction finds its child full, by bucket size. Usage:
//! `cargo run --release -p doram-gkk12 --example overflow -- LOG_ITEMS TRIALS B...`
//! (each trial loads every item, then makes as many accesses to random addresses).

use doram_gkk12::overflow_experiment;
use rand::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [log_items, trials, buckets @ ..] = args.as_slice() else {
        return Err("usage: overflow LOG_ITEMS TRIALS B...".into());
    };
    let items = 1u64 << log_items.parse::<u32>()?;
    let trials: u64 = trials.parse()?;
    let mut rng = rand_chacha::ChaCha12Rng::from_os_rng();
    println!("items\tB\ttrials\tstuck\tlost\tmax load");
    for b in buckets {
        let b: usize = b.parse()?;
        let r = overflow_experiment(items, b, items, trials, &mut rng)?;
        println!(
            "{items}\t{b}\t{}\t{}\t{}\t{}",
            r.trials, r.trials_with_stuck, r.trials_with_loss, r.max_load
        );
    }
    Ok(())
}
