//! The figures every `doram bench` and `doram demo` report shares.
//!
//! JSON field names are stable (documented in BENCHMARKS.md): per party `bytes_sent`,
//! `bytes_received`, `messages_sent`, `rounds` and `peak_memory_bytes`.

use doram_core::{Entropy, PartyId};
use doram_net::{Shaping, Stats};
use serde::{Deserialize, Serialize};

/// Communication and memory figures of one party.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartyFigures {
    /// `P0`, `P1`, …
    pub party: String,
    /// Payload bytes this party sent, all peers and phases.
    pub bytes_sent: u64,
    /// Payload bytes this party received.
    pub bytes_received: u64,
    /// Messages this party sent.
    pub messages_sent: u64,
    /// Rounds: the party's Lamport clock at the end.
    pub rounds: u64,
    /// Peak resident memory of the process running this party (the whole process when parties
    /// run as threads of one process), if the OS reports it.
    pub peak_memory_bytes: Option<u64>,
}

impl PartyFigures {
    /// Figures from a party's session statistics.
    pub fn from_stats(me: PartyId, stats: &Stats) -> PartyFigures {
        let total = stats.total();
        let sum = total.sum();
        PartyFigures {
            party: me.to_string(),
            bytes_sent: sum.bytes_sent,
            bytes_received: sum.bytes_received,
            messages_sent: sum.msgs_sent,
            rounds: total.rounds,
            peak_memory_bytes: peak_memory_bytes(),
        }
    }
}

/// Peak resident set size of this process (`VmHWM`), where the OS reports it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Formats a byte count for people.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// One party's figures in `doram bench duoram` (and its `duoram` job of `doram party`); the
/// other DORAM benchmarks report `doram_oram::bench::PartyBench`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OramParty {
    /// `P0`, `P1`, `P2`.
    pub party: String,
    /// Payload bytes sent in preprocessing and online (Init and setup apart).
    pub bytes_sent: u64,
    /// Of which online.
    pub online_bytes_sent: u64,
    /// Messages sent (preprocessing and online).
    pub messages_sent: u64,
    /// Rounds (preprocessing and online).
    pub rounds: u64,
    /// Of which online.
    pub online_rounds: u64,
    /// Wall time of preprocessing and online, ms (Init apart).
    pub elapsed_ms: f64,
    /// Payload bytes sent in Init (once, not per access).
    pub init_bytes_sent: u64,
    /// Init time, ms.
    pub init_ms: f64,
    /// Online time, ms.
    pub online_ms: f64,
    /// Preprocessing time, ms.
    pub preprocessing_ms: f64,
    /// Peak resident memory of the process that ran the party.
    pub peak_memory_bytes: Option<u64>,
}

impl OramParty {
    /// Prints the party's line of a text report.
    pub fn print(&self) {
        println!(
            "  {}: sent {} in {} messages, {} rounds ({} online), peak memory {}",
            self.party,
            human_bytes(self.bytes_sent),
            self.messages_sent,
            self.rounds,
            self.online_rounds,
            self.peak_memory_bytes.map_or("?".into(), human_bytes)
        );
    }
}

/// The figures every DORAM benchmark report shares: per access, the slowest party's times and
/// all parties' bytes.
#[derive(Debug, Clone, Serialize)]
pub struct OramSummary {
    /// `threads` or `processes`.
    pub parties_as: &'static str,
    /// Emulated one-way latency, ms.
    pub latency_ms: f64,
    /// Emulated bandwidth, Mbit/s (absent: unlimited).
    pub bandwidth_mbit: Option<f64>,
    /// Time per access: preprocessing and online, Init apart (slowest party), ms.
    pub amortized_ms: f64,
    /// Online time per access (slowest party), ms.
    pub online_ms: f64,
    /// Preprocessing time per access (slowest party), ms.
    pub preprocessing_ms: f64,
    /// Online payload bytes per access, summed over the parties.
    pub online_bytes_per_access: f64,
    /// Preprocessing and online payload bytes per access, summed over the parties (Init apart:
    /// it is `init_bytes`).
    pub bytes_per_access: f64,
    /// Init payload bytes, all of it, summed over the parties.
    pub init_bytes: u64,
    /// Where the parties' secret randomness came from: `os` or `insecure-seed N`.
    pub randomness: String,
    /// How the inputs were shared: by a synthetic dealer keyed by the public workload seed.
    pub dealer: &'static str,
}

impl OramSummary {
    /// The summary of `parties` over `accesses` accesses.
    pub fn of<'a>(
        parties: impl Iterator<Item = &'a OramParty> + Clone,
        accesses: usize,
        shaping: Shaping,
        processes: bool,
        entropy: Entropy,
    ) -> OramSummary {
        let k = accesses.max(1) as f64;
        let worst = |f: fn(&OramParty) -> f64| parties.clone().map(f).fold(0.0, f64::max) / k;
        let sum = |f: fn(&OramParty) -> u64| parties.clone().map(f).sum::<u64>() as f64 / k;
        OramSummary {
            parties_as: if processes { "processes" } else { "threads" },
            latency_ms: shaping.latency.as_secs_f64() * 1e3,
            bandwidth_mbit: shaping.bandwidth_bits_per_sec.map(|b| b / 1e6),
            amortized_ms: worst(|p| p.elapsed_ms),
            online_ms: worst(|p| p.online_ms),
            preprocessing_ms: worst(|p| p.preprocessing_ms),
            online_bytes_per_access: sum(|p| p.online_bytes_sent),
            bytes_per_access: sum(|p| p.bytes_sent),
            init_bytes: parties.clone().map(|p| p.init_bytes_sent).sum(),
            randomness: entropy.to_string(),
            dealer: doram_core::SYNTHETIC_DEALER,
        }
    }

    /// Prints the time and bytes line of a text report (`unit`: `access` or `op`).
    pub fn print(&self, unit: &str) {
        println!(
            "  {:.3} ms/{unit} amortized ({:.3} online + {:.3} preprocessing), {}/{unit} online, {}/{unit} in all, Init {} once",
            self.amortized_ms,
            self.online_ms,
            self.preprocessing_ms,
            human_bytes(self.online_bytes_per_access as u64),
            human_bytes(self.bytes_per_access as u64),
            human_bytes(self.init_bytes)
        );
        println!("  randomness: {}; inputs: {}", self.randomness, self.dealer);
    }
}

/// Prints one party's figures as JSON with where its randomness came from and how the inputs
/// were dealt (`randomness`, `dealer`), as `doram party … ramen|duoram` reports them.
pub fn print_party_json<T: Serialize>(figures: &T, entropy: Entropy) -> anyhow::Result<()> {
    let mut v = serde_json::to_value(figures)?;
    if let Some(m) = v.as_object_mut() {
        m.insert("randomness".into(), entropy.to_string().into());
        m.insert("dealer".into(), doram_core::SYNTHETIC_DEALER.into());
    }
    print_json(&v)
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
    }

    #[test]
    fn peak_memory_is_reported_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_memory_bytes().unwrap_or(0) > 0);
        }
    }
}

/// A named network setting.
#[derive(Debug, Clone)]
pub struct NamedNet {
    /// As given on the command line (`lan`, `wan`, `none`, `latency=..,bandwidth=..`).
    pub name: String,
    /// The shaping it stands for.
    pub shaping: Shaping,
}

/// One measured point.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `ramen`, `duoram` or `linear-scan`.
    pub protocol: &'static str,
    /// Network setting name.
    pub net: String,
    /// log2 of the memory size.
    pub log_n: u32,
    /// Accesses measured.
    pub accesses: usize,
    /// Online time per access (slowest party), ms.
    pub online_ms: f64,
    /// Preprocessing time per access (slowest party), ms.
    pub preprocessing_ms: f64,
    /// Total time per access: preprocessing and online (refreshes included; Init and setup
    /// apart), slowest party, ms.
    pub total_ms: f64,
    /// Online payload bytes per access, all parties.
    pub online_bytes: f64,
    /// Preprocessing and online payload bytes per access (Init and setup apart), all parties.
    pub total_bytes: f64,
    /// Online rounds per access (the most of any party).
    pub online_rounds: f64,
    /// Online messages per access, all parties.
    pub online_messages: f64,
    /// Whether every result was checked against the plaintext mirror.
    pub verified: bool,
}

/// What one point of `doram bench compare` runs with (the options every protocol shares).
#[derive(Debug, Clone, Copy)]
pub struct PointArgs {
    /// Accesses per point (the protocol's default if `None`).
    pub accesses: Option<usize>,
    /// Threads per party for preprocessing.
    pub threads: usize,
    /// Check every result against a plaintext mirror.
    pub verify: bool,
    /// Public seed of the synthetic workload.
    pub seed: u64,
    /// Where each party's secret randomness comes from.
    pub randomness: crate::randomness::Randomness,
    /// FJKW15 only, insecure: build the forest from the opened memory instead of the secure
    /// load.
    pub insecure_dealt_load: bool,
}
