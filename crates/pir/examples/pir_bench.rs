//! Measures offline, online and client time and communication per query.
//!
//! ```text
//! cargo run --release -p doram-pir --example pir_bench -- [--bits 16,18,20] [--record 8] [--queries 5] [--lan|--wan]
//! ```
//! Prints one table row and one JSON line per size.

use doram_net::Shaping;
use doram_pir::bench::{BenchConfig, run};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut bits: Vec<u8> = vec![16, 18, 20];
    let mut record = 8usize;
    let mut queries = 5usize;
    let mut shaping = Shaping::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bits" => {
                bits = args
                    .next()
                    .ok_or("--bits needs a list")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--record" => record = args.next().ok_or("--record needs a size")?.parse()?,
            "--queries" => queries = args.next().ok_or("--queries needs a count")?.parse()?,
            "--lan" => shaping = Shaping::lan(),
            "--wan" => shaping = Shaping::wan(),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    println!(
        "{:>4} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9}",
        "n",
        "record",
        "offline",
        "dealer",
        "holder",
        "online",
        "client",
        "on bytes",
        "formula",
        "off B",
        "formula"
    );
    let mut json = Vec::new();
    for n in bits {
        let mut c = BenchConfig::new(n, record, queries);
        c.shaping = shaping;
        let r = run(c)?;
        println!(
            "{:>4} {:>7} {:>8.1}ms {:>7.1}ms {:>7.1}ms {:>7.2}ms {:>7.3}ms {:>10} {:>10.0} {:>9} {:>9.0}{}",
            r.domain_bits,
            r.record_size,
            r.offline_ms,
            r.dealer_ms,
            r.holder_ms,
            r.online_ms,
            r.client_ms,
            r.online_total,
            r.online_formula,
            r.offline_total,
            r.offline_formula,
            if r.verified { "" } else { "  NOT VERIFIED" }
        );
        json.push(r.to_json());
    }
    for j in json {
        println!("{j}");
    }
    Ok(())
}
