//! A long random run of the whole plaintext forest against a plain array: random reads and
//! writes of 4-byte records, every result checked, until ACCESSES or the first overflow; then
//! the largest bucket loads per tree. Usage:
//! `cargo run --release -p doram-fjkw15 --example forest -- M TAU W ACCESSES`

use doram_fjkw15::Params;
use doram_fjkw15::plain::{Op, PlainForest};
use rand::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [m, tau, w, accesses] = args.as_slice() else {
        return Err("usage: forest M TAU W ACCESSES".into());
    };
    let params = Params::new(m.parse()?, tau.parse()?, w.parse()?, 32)?;
    let accesses: u64 = accesses.parse()?;
    let items = 1u64 << params.m();
    let mut rng = rand_chacha::ChaCha12Rng::from_os_rng();
    let mut array: Vec<u64> = (0..items).map(|_| rng.random::<u32>().into()).collect();
    let mut oram = PlainForest::load(params, items, |n| vec![array[n as usize]], &mut rng)?;
    let mut done = 0;
    let mut failure = None;
    while done < accesses {
        let addr = rng.random_range(0..items);
        let write = rng.random_bool(0.5).then(|| u64::from(rng.random::<u32>()));
        let op = match &write {
            Some(v) => Op::Write(std::slice::from_ref(v)),
            None => Op::Read,
        };
        match oram.access(addr, op, &mut rng) {
            Ok(old) => assert_eq!(old, vec![array[addr as usize]], "access {done} to {addr}"),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
        if let Some(v) = write {
            array[addr as usize] = v;
        }
        done += 1;
    }
    println!("{params:?}: {done} accesses, all checked; failure: {failure:?}");
    println!("tree\td_i\tevictions\tmax internal load\tmax leaf load");
    let max = |h: &[u64]| h.iter().rposition(|&c| c > 0).unwrap_or(0);
    for i in 1..params.trees() {
        let s = oram.tree(i).stats();
        let internal = if params.depth(i) == 0 {
            0
        } else {
            max(&s.internal_loads)
        };
        println!(
            "{i}\t{}\t{}\t{internal}\t{}",
            params.depth(i),
            s.evictions,
            max(&s.leaf_loads)
        );
    }
    Ok(())
}
