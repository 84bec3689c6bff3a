//! The geometry of the benchmark points (FJKW15 §2, "Notation"): per tree, the height d_i,
//! the tuple and path sizes, and the total path size P one access retrieves. Usage:
//! `cargo run -p doram-fjkw15 --example sizes [-- M TAU W D]` (no arguments: the benchmark
//! points 2^12, 2^20 and 2^24 with 4-byte records and w = 32).

use doram_fjkw15::Params;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let points = match args.as_slice() {
        [] => Params::bench_points().to_vec(),
        &[m, tau, w, d] => vec![Params::new(m as u32, tau as u32, w as usize, d as usize)?],
        _ => return Err("usage: sizes [M TAU W D]".into()),
    };
    for p in points {
        println!(
            "m = {}, τ = {}, h = {}, w = {}, d = {} bits: P = {} bits ({} bytes on the wire)",
            p.m(),
            p.tau(),
            p.h(),
            p.w(),
            p.record_bits(),
            p.total_path_bits(),
            (0..p.trees()).map(|i| p.path_bytes(i)).sum::<usize>()
        );
        println!("  i\td_i\t|T_i| bits\tpath tuples\t|P_i| bits\ttree bits");
        for i in 0..p.trees() {
            println!(
                "  {i}\t{}\t{}\t{}\t{}\t{}",
                p.depth(i),
                p.tuple_bits(i),
                p.path_tuples(i),
                p.path_bits(i),
                p.tree_bits(i)
            );
        }
    }
    Ok(())
}
