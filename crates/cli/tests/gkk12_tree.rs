//! `--backend gkk12-tree`: the two-party machine over GKK12's tree ORAM, through `doram run`
//! (two threads) and `doram party run` (two processes over TLS, each given only its own
//! inputs), and in `doram bench program`.
#![allow(clippy::unwrap_used)]

mod common;

use common::run_json;

fn json_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("one JSON document")
}

#[test]
fn run_binary_search_and_bfs_on_the_tree_oram() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sorted.csv");
    std::fs::write(&data, "1\n4\n9\n16\n25\n36\n49\n50\n").unwrap();
    let data = data.to_str().unwrap();
    for (key, index, found) in [("16", 3, true), ("17", 4, false), ("99", 8, false)] {
        let v = run_json(&[
            "run",
            "binary-search",
            "--backend",
            "gkk12-tree",
            "--data",
            data,
            "--key",
            key,
        ]);
        assert_eq!(v["backend"], "gkk12-tree", "{v}");
        assert_eq!(v["output"]["index"], index, "{v}");
        assert_eq!(v["output"]["found"], found, "{v}");
    }
    let graph = dir.path().join("g.csv");
    std::fs::write(&graph, "0,1\n1,2\n2,3\n0,4\n").unwrap();
    let v = run_json(&[
        "run",
        "bfs",
        "--backend",
        "gkk12-tree",
        "--graph",
        graph.to_str().unwrap(),
        "--vertices",
        "6",
        "--source",
        "0",
    ]);
    let want = run_json(&[
        "run",
        "bfs",
        "--graph",
        graph.to_str().unwrap(),
        "--vertices",
        "6",
        "--source",
        "0",
    ]);
    assert_eq!(v["output"], want["output"], "{v}");
}

#[test]
fn party_run_on_the_tree_oram_as_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::certs(dir.path(), 2);
    let data = dir.path().join("sorted.csv");
    std::fs::write(&data, "2\n3\n5\n7\n11\n13\n17\n19\n23\n").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("doram");
    let spawn = |id: &str, extra: &[&str]| {
        std::process::Command::new(&bin)
            .args(["--json", "party", "--config", &config, "--id", id, "run"])
            .args(["binary-search", "--backend", "gkk12-tree"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let owner = spawn("0", &["--data", data.to_str().unwrap()]);
    let querier = spawn("1", &["--key", "13"]);
    let o = owner.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = querier.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    assert_eq!(v["output"]["index"], 5, "{v}");
    assert_eq!(v["output"]["found"], true, "{v}");
}

#[test]
fn bench_program_on_the_tree_oram_is_verified() {
    let v = run_json(&[
        "bench",
        "program",
        "--program",
        "binary-search",
        "--backend",
        "gkk12-tree",
        "--sizes",
        "40",
    ]);
    let s = v.to_string();
    assert!(s.contains("gkk12-tree"), "{v}");
    assert!(s.contains("\"verified\":true"), "{v}");
}
