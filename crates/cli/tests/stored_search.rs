//! `--store`: a binary-search database loaded once and searched in later runs, through
//! `doram run` (two threads) and `doram party run` (two processes over TLS); refusals named.
#![allow(clippy::unwrap_used)]

mod common;

use common::{doram, run_json};

#[test]
fn run_loads_once_and_searches_the_stored_database() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sorted.csv");
    // 100 entries: more than Figure 1's 64 writes, so the sorted load runs.
    let entries: Vec<String> = (0..100).map(|i| (3 * i).to_string()).collect();
    std::fs::write(&data, entries.join("\n")).unwrap();
    let store = dir.path().join("db");
    let store = store.to_str().unwrap();
    let base = [
        "run",
        "binary-search",
        "--backend",
        "gkk12-tree",
        "--store",
        store,
    ];
    let first = [
        &base[..],
        &["--data", data.to_str().unwrap(), "--key", "30"],
    ]
    .concat();
    let v = run_json(&first);
    assert_eq!(v["output"]["index"], 10, "{v}");
    assert_eq!(v["output"]["found"], true, "{v}");
    for (key, index, found) in [("31", 11, false), ("297", 99, true), ("1000", 100, false)] {
        let args = [&base[..], &["--key", key]].concat();
        let v = run_json(&args);
        assert_eq!(v["output"]["index"], index, "{v}");
        assert_eq!(v["output"]["found"], found, "{v}");
    }
    // The owner's array again: refused, the stored database untouched.
    let out = doram().args(&first).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a database is stored"), "{err}");
    let v = run_json(&[&base[..], &["--key", "3"]].concat());
    assert_eq!(v["output"]["index"], 1, "{v}");
    // Another backend.
    let out = doram()
        .args(["run", "binary-search", "--store", store, "--key", "3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("gkk12-tree"));
}

#[test]
fn party_run_with_a_store_as_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::certs(dir.path(), 2);
    let data = dir.path().join("sorted.csv");
    std::fs::write(&data, "2\n3\n5\n7\n11\n13\n17\n19\n23\n").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("doram");
    let spawn = |id: &str, extra: &[&str]| {
        let store = dir.path().join(format!("store{id}"));
        std::process::Command::new(&bin)
            .args(["--json", "party", "--config", &config, "--id", id, "run"])
            .args(["binary-search", "--backend", "gkk12-tree"])
            .args(["--store", store.to_str().unwrap()])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for (owner_args, key, index) in [
        (vec!["--data", data.to_str().unwrap()], "13", 5),
        (vec![], "20", 8),
        (vec![], "1", 0),
    ] {
        let owner = spawn("0", &owner_args);
        let querier = spawn("1", &["--key", key]);
        let o = owner.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = querier.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["output"]["index"], index, "{v}");
    }
}
