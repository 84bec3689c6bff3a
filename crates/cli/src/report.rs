//! The figures every `doram bench` and `doram demo` report shares.
//!
//! JSON field names are stable (documented in BENCHMARKS.md): per party `bytes_sent`,
//! `bytes_received`, `messages_sent`, `rounds` and `peak_memory_bytes`.

use doram_core::PartyId;
use doram_net::Stats;
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
