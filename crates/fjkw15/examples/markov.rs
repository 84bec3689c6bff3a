//! The Markov chains of FJKW15 §5 for an internal bucket, by bucket size: the paper's (each
//! tuple moveable with probability 1/2 afresh at every visit) and the sided refinement (each
//! tuple's direction fixed on arrival), as overflow probability per visit over VISITS visits
//! from an empty bucket, with worst-case arrivals (0 or 2 per visit). Usage:
//! `cargo run --release -p doram-fjkw15 --example markov -- VISITS W...`

use doram_fjkw15::plain::{Arrivals, markov_overflow, markov_overflow_sided};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [visits, ws @ ..] = args.as_slice() else {
        return Err("usage: markov VISITS W...".into());
    };
    let visits: u64 = visits.parse()?;
    println!("w\tpaper chain per visit\tlog2\tsided chain per visit\tlog2");
    for w in ws {
        let w: usize = w.parse()?;
        let paper = markov_overflow(w, visits, Arrivals::ZeroOrTwo) / visits as f64;
        let sided = markov_overflow_sided(w, visits, Arrivals::ZeroOrTwo) / visits as f64;
        println!(
            "{w}\t{paper:.3e}\t{:.1}\t{sided:.3e}\t{:.1}",
            paper.log2(),
            sided.log2()
        );
    }
    Ok(())
}
