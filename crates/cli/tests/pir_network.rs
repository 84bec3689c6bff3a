//! `doram pir query` when a server is unreachable: by default it fails closed, naming the
//! server and blaming nobody; with `--assume-synchronous-network` another server answers in
//! the clear.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn doram() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("doram"))
}

/// Kills the servers even when an assertion fails.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for s in &mut self.0 {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

#[test]
fn an_unreachable_server_fails_closed_unless_synchrony_is_assumed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let out = doram()
        .args(["--json", "certs", "--out"])
        .arg(d.join("c"))
        .arg("--services")
        .output()
        .expect("doram runs");
    assert!(out.status.success());
    let cfg: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let config = cfg["config"].as_str().expect("a config path").to_string();
    let csv = d.join("v.csv");
    let values: String = (0..100u64).map(|i| format!("{}\n", 3 * i + 2)).collect();
    std::fs::write(&csv, values).expect("writable");
    let db = d.join("v.db");
    let built = doram()
        .args(["pir", "build-db", "--in"])
        .arg(&csv)
        .arg("--out")
        .arg(&db)
        .output()
        .expect("doram runs");
    assert!(built.status.success());
    let mut servers = Servers(
        (0..3)
            .map(|i| {
                doram()
                    .args(["pir", "serve", "--config", &config, "--id", &i.to_string()])
                    .arg("--db")
                    .arg(&db)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("a server starts")
            })
            .collect(),
    );
    let text = std::fs::read_to_string(&config).expect("the config");
    let services: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("service_address = "))
        .map(|a| a.trim_matches('"').to_string())
        .collect();
    assert_eq!(services.len(), 3);
    let query = |extra: &[&str]| {
        let start = Instant::now();
        let out = doram()
            .args([
                "--json", "pir", "query", "--config", &config, "--index", "7",
            ])
            .args(["--timeout", "3"])
            .args(extra)
            .output()
            .expect("doram runs");
        (out, start.elapsed())
    };
    // All three up: an honest query.
    let start = Instant::now();
    loop {
        let (out, _) = query(&[]);
        if out.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(v["record_u64"], 23);
            assert!(v["fallback"].is_null(), "{v}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "servers did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // S1 goes away.
    servers.0[1].kill().expect("kill S1");
    servers.0[1].wait().expect("S1 ends");
    let (out, took) = query(&[]);
    assert!(!out.status.success(), "a record without S1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("S1 was unreachable"), "{err}");
    assert!(err.contains("Nobody is blamed"), "{err}");
    assert!(
        took < Duration::from_secs(6) + Duration::from_secs(2),
        "{took:?}"
    );
    let (out, _) = query(&["--assume-synchronous-network"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["record_u64"], 23);
    assert_eq!(v["fallback"]["trusted"], "S2", "{v}");
    assert!(v["blamed"].is_null(), "{v}");
    assert_eq!(v["network"], "assume-synchronous");
}
