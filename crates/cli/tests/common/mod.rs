//! What the CLI's test files share: the `doram` binary and running it for one JSON report.
#![allow(dead_code)]

use assert_cmd::Command;

/// The `doram` binary built with the tests.
pub fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

/// Runs `doram --json ARGS`, which must succeed, and parses its one JSON document.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = doram()
        .arg("--json")
        .args(args)
        .output()
        .expect("doram runs");
    assert!(
        out.status.success(),
        "doram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// Runs `doram certs --parties N --out DIR`, which must succeed; returns the config's path.
pub fn certs(dir: &std::path::Path, parties: usize) -> String {
    let v = run_json(&[
        "certs",
        "--parties",
        &parties.to_string(),
        "--out",
        dir.to_str().expect("a UTF-8 temporary path"),
    ]);
    v["config"].as_str().expect("the config's path").to_string()
}
