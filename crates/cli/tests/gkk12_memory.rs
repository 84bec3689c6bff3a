//! `bench gkk12` checks the memory a size will make resident before it runs anything: the
//! trees' placement levels, the load's buffers and what the accesses write, not whole trees.

use assert_cmd::Command;

fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// 2^22 entries of 4096 bits need well over 100 GB: refused at once, with the reason.
#[test]
fn a_size_that_cannot_fit_is_refused_before_anything_runs() {
    let Some(have) = available_memory() else {
        return;
    };
    if have > 150_000_000_000 {
        // This host could hold it; the check is not what would stop it.
        return;
    }
    let out = doram()
        .args(["bench", "gkk12", "--log-n", "22", "--payload-bits", "4096"])
        .args(["--accesses", "1", "--searches", "0"])
        .output()
        .expect("doram runs");
    assert!(!out.status.success());
    // Refused before setting anything up: no report, and no progress of a load.
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    for part in ["2^22", "GB", "during the load", "available"] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// A small size runs, and its report gives the estimate beside the measured peak.
#[test]
fn the_report_gives_the_estimate_it_checked() {
    let out = doram()
        .args(["--json", "-q", "bench", "gkk12", "--log-n", "8"])
        .args(["--payload-bits", "64", "--accesses", "2", "--searches", "1"])
        .output()
        .expect("doram runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let size = &v["sizes"][0];
    let need = size["memory_needed_bytes"].as_u64().expect("the estimate");
    // At least the margin for circuits and the process, and what this small run used.
    assert!(need >= 1 << 30, "{need}");
    if let Some(peak) = size["peak_memory_bytes"].as_u64() {
        assert!(peak < need, "peak {peak} above the estimate {need}");
    }
}
