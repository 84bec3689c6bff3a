//! Times the online inner product of one key holder alone (no other party running):
//! `cargo run --release -p doram-pir --example inner_product -- BITS RECORD_BYTES [REPS]`.

use std::time::Instant;

use doram_field::Fp64;
use doram_pir::Database;
use doram_pir::answer::answer;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bits: u32 = args.first().map_or(Ok(20), |s| s.parse())?;
    let record: usize = args.get(1).map_or(Ok(8), |s| s.parse())?;
    let reps: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let n = 1usize << bits;
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let mut bytes = vec![0u8; n * record];
    rng.fill_bytes(&mut bytes);
    let db = Database::from_bytes(record, &bytes)?;
    drop(bytes);
    let shares: Vec<u64> = (0..2 * n).map(|_| rng.next_u64() % Fp64::MODULUS).collect();
    let mut times = Vec::new();
    for k in 0..reps {
        let t = Instant::now();
        let out = answer(&db, &shares, (k as u64) * 12345);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(out);
    }
    times.sort_by(f64::total_cmp);
    let touched = (16 + record.div_ceil(8) * 8) as f64 * n as f64;
    let med = times[times.len() / 2];
    println!(
        "2^{bits} x {record} B: median {med:.2} ms over {reps} (min {:.2}), {:.2} GB/s of shares and rows",
        times[0],
        touched / med / 1e6
    );
    Ok(())
}
