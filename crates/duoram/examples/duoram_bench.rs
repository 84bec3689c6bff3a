//! `cargo run --release -p doram-duoram --example duoram_bench -- <log2 n> [ops] [reads|updates|writes|random] [--prep] [--chunk K] [--verify]`:
//! three parties in one process (one thread each); prints a summary to stderr and the outcome
//! as JSON to stdout.

use doram_duoram::{BenchConfig, Kind, OpMix, run_local};
use doram_net::Shaping;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log_n: u32 = args.first().map_or(Ok(16), |a| a.parse())?;
    let ops = args.get(1).map_or(Ok(16), |a| a.parse())?;
    let mut cfg = BenchConfig::new(1 << log_n, ops);
    cfg.mix = match args.get(2).map(String::as_str) {
        Some("reads") => OpMix::Reads,
        Some("updates") => OpMix::Updates,
        Some("writes") => OpMix::Writes,
        _ => OpMix::Random,
    };
    cfg.preprocess_first = args.iter().any(|a| a == "--prep");
    cfg.verify = args.iter().any(|a| a == "--verify");
    if let Some(i) = args.iter().position(|a| a == "--chunk") {
        cfg.chunk = args.get(i + 1).map_or(Ok(0), |a| a.parse())?;
    }
    let out = run_local(&cfg, Shaping::NONE)?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let kind = |k: Kind| {
        out.online_per_op(k)
            .map_or("-".to_owned(), |d| format!("{:.3}", ms(d)))
    };
    eprintln!(
        "n = 2^{log_n}, {ops} ops ({}): preprocessing {:.3} ms/op ({:.1} KiB/op); online ms/op: \
         read {}, update {}, write {}",
        cfg.mix.name(),
        ms(out.preprocessing_per_op()),
        out.preprocessing_bytes_per_op() / 1024.0,
        kind(Kind::Read),
        kind(Kind::Update),
        kind(Kind::Write),
    );
    let (prep_cpu, online_cpu) = out.cpu_per_op();
    let cpu =
        |d: Option<std::time::Duration>| d.map_or("-".to_owned(), |d| format!("{:.3}", ms(d)));
    eprintln!(
        "  CPU ms/op summed over the parties: preprocessing {:.3}; read {}, update {}, write {}",
        ms(prep_cpu),
        cpu(online_cpu[0]),
        cpu(online_cpu[1]),
        cpu(online_cpu[2]),
    );
    let per_party: Vec<String> = out
        .parties
        .iter()
        .map(|p| {
            format!(
                "{} {:.3}",
                p.party,
                ms(p.preprocessing_cpu) / cfg.ops.max(1) as f64
            )
        })
        .collect();
    eprintln!(
        "  preprocessing CPU ms/op per party: {}",
        per_party.join(", ")
    );
    println!("{}", out.to_json());
    Ok(())
}
