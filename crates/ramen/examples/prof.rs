//! `cargo run --release -p doram-ramen --example prof -- <log2 n>`: times the local parts of one
//! epoch's preparation at one party (one thread), to see where the preprocessing goes.

use doram_core::Seed;
use doram_prim::AesPrg;
use doram_ramen::{Params, pot, read, stash, tags};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log_n: u32 = std::env::args().nth(1).map_or(Ok(20), |a| a.parse())?;
    let params = Params::new(1 << log_n)?;
    let m = params.memory();
    let mut rng = AesPrg::new(Seed([1; 16]));
    let key = doram_doprf::LegendreKey::from_elements(
        (0..params.tag_bits()).map(|_| rng.random()).collect(),
    )?;
    let t = Instant::now();
    let tg = tags::memory_tags(&key, m, None);
    let symbols = m as f64 * f64::from(params.tag_bits());
    println!(
        "tags: {:?} ({:.1} ns per Legendre symbol)",
        t.elapsed(),
        t.elapsed().as_nanos() as f64 / symbols
    );
    let t = Instant::now();
    let dup = tags::has_duplicates(&tg);
    println!("duplicate check: {:?} (duplicates: {dup})", t.elapsed());
    let t = Instant::now();
    let sigma = tags::random_permutation(m, &mut rng);
    println!("permutation: {:?}", t.elapsed());
    let t = Instant::now();
    tags::PositionMap::build(&tg, &sigma, &mut rng)?;
    println!("position map: {:?}", t.elapsed());
    let t = Instant::now();
    pot::Sender::init(m, &mut rng);
    println!("p-OT init: {:?}", t.elapsed());
    let t = Instant::now();
    stash::deal_loc_keys(params.stash(), params.stash(), &mut rng);
    stash::deal_flag_keys(params.stash(), params.stash_tag_bits(), &mut rng);
    println!("stash DPF keys: {:?}", t.elapsed());
    let mut shared = AesPrg::new(Seed([2; 16]));
    let t = Instant::now();
    read::prepare_key_holder(&params, &mut rng, &mut shared, None)?;
    println!("key holder, total: {:?}", t.elapsed());
    Ok(())
}
