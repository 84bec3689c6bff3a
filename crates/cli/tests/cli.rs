//! The `doram` binary end to end: certificates, the demo over TLS (threads and processes), and
//! clear errors for bad arguments and files.

use assert_cmd::Command;

fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

fn json_of(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("--json prints one JSON document")
}

/// Runs `doram --json ARGS`, requires success and returns the JSON it printed.
fn run_json(args: &[&str]) -> serde_json::Value {
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
    json_of(&out.stdout)
}

#[test]
fn help_lists_the_commands() {
    let out = doram().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["certs", "party", "demo", "run", "bench"] {
        assert!(text.contains(cmd), "--help does not mention {cmd}");
    }
}

#[test]
fn demo_over_tls_threads_is_correct() {
    let v = run_json(&["demo", "--log-n", "10", "--queries", "3"]);
    assert_eq!(v["correct"], true);
    assert_eq!(v["transport"], "tls1.3-mutual");
    let parties = v["parties"].as_array().unwrap();
    assert_eq!(parties.len(), 3);
    // Two rounds: keys to the servers, answers back.
    for p in parties {
        assert!(p["figures"]["rounds"].as_u64().unwrap() <= 2);
    }
    // Each server answers 3 words of 8 bytes.
    assert_eq!(parties[0]["figures"]["bytes_sent"], 24);
    assert_eq!(parties[1]["figures"]["bytes_sent"], 24);
    // The second act: a binary search on 3P-Duoram; only P2 gets the answer.
    let s = &v["search"];
    assert_eq!(s["correct"], true);
    assert_eq!(s["backend"], "duoram");
    let searchers = s["parties"].as_array().unwrap();
    assert!(searchers[0]["output"].is_null() && searchers[1]["output"].is_null());
    assert!(!searchers[2]["output"].is_null());
}

#[test]
fn demo_as_three_processes_is_correct() {
    let v = run_json(&[
        "demo",
        "--log-n",
        "8",
        "--queries",
        "2",
        "--processes",
        "--search-n",
        "77",
    ]);
    assert_eq!(v["correct"], true);
    assert_eq!(v["search"]["correct"], true);
    assert_eq!(v["search"]["n"], 77);
}

#[test]
fn certs_then_parties_as_processes() {
    let dir = tempfile::tempdir().unwrap();
    let out = doram()
        .args(["--json", "certs", "--parties", "3", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = json_of(&out.stdout)["config"].as_str().unwrap().to_string();
    let bin = assert_cmd::cargo::cargo_bin("doram");
    let spawn = |id: &str, extra: &[&str]| {
        std::process::Command::new(&bin)
            .args([
                "--json", "party", "--config", &config, "--id", id, "lookup", "--log-n", "6",
            ])
            .args(["--db-seed", "9", "--queries", "2"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let s0 = spawn("0", &[]);
    let s1 = spawn("1", &[]);
    let c = spawn("2", &["--index", "5,63"]);
    for child in [s0, s1] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    assert_eq!(v["indices"], serde_json::json!([5, 63]));
    let table = doram_services::lookup::Table::synthetic(64, 9);
    let expect: Vec<u64> = [5, 63].iter().map(|&i| table.words()[i].0).collect();
    assert_eq!(v["values"], serde_json::json!(expect));
}

#[test]
fn bad_arguments_give_clear_errors() {
    let out = doram()
        .args([
            "party",
            "--config",
            "/nonexistent/parties.toml",
            "--id",
            "0",
            "lookup",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));

    let dir = tempfile::tempdir().unwrap();
    let out = doram()
        .args(["--json", "certs", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let config = json_of(&out.stdout)["config"].as_str().unwrap().to_string();
    let out = doram()
        .args(["party", "--config", &config, "--id", "7", "lookup"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--id 7"));

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "this is [not toml").unwrap();
    let out = doram()
        .args(["party", "--config"])
        .arg(&bad)
        .args(["--id", "0", "lookup"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"));

    let out = doram()
        .args(["certs", "--parties", "9", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = doram().args(["demo", "--queries", "0"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn bench_dpf_and_net_report_json() {
    let v = run_json(&["bench", "dpf", "--log-n", "10", "--repeat", "3"]);
    assert!(v["eval_all_ms"].as_f64().unwrap() >= 0.0);
    assert!(v["key_bytes"].as_u64().unwrap() > 0);

    for backend in ["local", "tcp", "tls"] {
        let v = run_json(&[
            "bench",
            "net",
            "--backend",
            backend,
            "--mib",
            "4",
            "--round-trips",
            "10",
        ]);
        assert_eq!(
            v["parties"][0]["bytes_sent"].as_u64().unwrap(),
            4 * 1024 * 1024 + 10 * 8
        );
    }
}

/// `bench ot` and `bench gc` report the traffic the protocols define: IKNP 16 bytes per OT,
/// SoftSpoken 128/k bits, half-gates 32 bytes per AND gate plus the inputs and outputs.
#[test]
fn bench_ot_and_gc_report_the_protocols_traffic() {
    for (ext, k, want) in [
        ("iknp", "4", 16.0),
        ("softspoken", "4", 4.0),
        ("softspoken", "8", 2.0),
    ] {
        let v = run_json(&[
            "bench",
            "ot",
            "--ext",
            ext,
            "--k",
            k,
            "--log-count",
            "12",
            "--repeat",
            "1",
        ]);
        assert_eq!(v["count"], 4096);
        assert_eq!(v["bytes_per_ot"].as_f64().unwrap(), want, "{ext} k={k}");
        assert!(v["ots_per_s"].as_f64().unwrap() > 0.0);
    }
    let v = run_json(&[
        "bench",
        "gc",
        "--log-ands",
        "10",
        "--repeat",
        "1",
        "--backend",
        "local",
    ]);
    assert_eq!(v["and_gates"], 1024);
    let per_and = v["bytes_per_and"].as_f64().unwrap();
    // 32 bytes of tables per AND gate; the rest (the garbler's input label, one extension
    // batch of correlated OTs for the evaluator's input, decoding bits, output) under 1 KiB.
    assert!(
        (32.0..33.0).contains(&per_and),
        "{per_and} bytes per AND gate"
    );
    // Three-halves: 197 bits of tables per AND gate.
    let three = [
        "bench",
        "gc",
        "--scheme",
        "three-halves",
        "--log-ands",
        "10",
        "--repeat",
        "1",
    ];
    let v = run_json(&[&three[..], &["--backend", "local"]].concat());
    assert_eq!(v["scheme"], "three-halves");
    assert_eq!(v["table_bytes_per_and"].as_f64().unwrap(), 24.625);
    let per_and_3h = v["bytes_per_and"].as_f64().unwrap();
    assert!(
        (24.625..25.625).contains(&per_and_3h),
        "{per_and_3h} bytes per AND gate"
    );
    // The scheme reaches both `doram party` processes.
    let v = run_json(&[&three[..], &["--processes"]].concat());
    assert_eq!(v["bytes_per_and"].as_f64().unwrap(), per_and_3h);
    let aes = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../twopc/tests/data/aes_128.txt"
    );
    let v = run_json(&[
        "bench",
        "gc",
        "--circuit",
        "bristol",
        "--file",
        aes,
        "--repeat",
        "1",
    ]);
    assert_eq!(v["and_gates"], 6400);
    // The same between two `doram party` processes over TLS: the same traffic.
    let v = run_json(&[
        "bench",
        "ot",
        "--log-count",
        "12",
        "--repeat",
        "1",
        "--processes",
    ]);
    assert_eq!(v["bytes_per_ot"].as_f64().unwrap(), 4.0);
    assert_eq!(v["parties_as"], "processes over TLS");
    let v = run_json(&[
        "bench",
        "gc",
        "--log-ands",
        "10",
        "--repeat",
        "2",
        "--processes",
    ]);
    assert_eq!(v["bytes_per_and"].as_f64().unwrap(), per_and);
    // A circuit file that is not Bristol Fashion is refused with the line at fault.
    let out = doram()
        .args([
            "bench",
            "gc",
            "--circuit",
            "bristol",
            "--file",
            env!("CARGO_MANIFEST_DIR"),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// `bench gkk12` loads securely, reads and searches with every result checked, over TLS: the
/// per-access bytes are the garbled tables (32 bytes per AND gate) and the client's OTs and
/// re-encryptions; the load's bytes do not depend on the data.
#[test]
fn bench_gkk12_loads_reads_and_searches() {
    let v = run_json(&[
        "bench",
        "gkk12",
        "--log-n",
        "6,9",
        "--payload-bits",
        "64",
        "--accesses",
        "3",
        "--searches",
        "2",
    ]);
    assert_eq!(v["schema"], "doram-gkk12-bench/1");
    let sizes = v["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 2);
    for s in sizes {
        assert_eq!(s["verified"], true);
        assert_eq!(s["access"]["count"], 3);
        assert_eq!(s["search"]["count"], 2);
        let and = s["and_per_access"].as_f64().unwrap();
        let server = s["access_bytes"][0].as_f64().unwrap();
        assert!(server >= 32.0 * and, "{server} bytes for {and} AND gates");
        assert!(
            s["load_bytes_sent"][2].as_u64().unwrap() > 0,
            "the helper deals"
        );
    }
    assert_eq!(sizes[1]["reads_per_search"], 10);
    // Entries shorter than a key are refused before anything runs.
    let out = doram()
        .args(["bench", "gkk12", "--payload-bits", "32"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// `bench gkk12 --load two-parties`: the server and the client load the array alone (no
/// helper bytes), then every read and search is checked against it.
#[test]
fn bench_gkk12_loads_by_the_two_parties_alone() {
    let v = run_json(&[
        "bench",
        "gkk12",
        "--log-n",
        "7",
        "--payload-bits",
        "100",
        "--accesses",
        "3",
        "--searches",
        "1",
        "--load",
        "two-parties",
    ]);
    let s = &v["sizes"][0];
    assert_eq!(s["verified"], true);
    assert_eq!(s["load_by"], "two-parties");
    assert_eq!(s["access"]["count"], 3);
    assert_eq!(s["search"]["count"], 1);
    let bytes = &s["load_bytes_sent"];
    assert!(bytes[0].as_u64().unwrap() > 0 && bytes[1].as_u64().unwrap() > 0);
    assert_eq!(bytes[2], 0, "no helper");
    assert!(s["load_ms"].as_f64().unwrap() > 0.0);
}

/// `bench ramen` is `bench oram --protocol ramen` with Ramen's defaults: the generic report,
/// with Ramen's step times in each party's `steps`.
#[test]
fn bench_ramen_reports_the_generic_fields_and_its_steps() {
    let v = run_json(&["bench", "ramen", "--n", "40", "--accesses", "9"]);
    assert_eq!(v["schema"], "doram-oram-bench/1");
    assert_eq!(v["protocol"], "ramen");
    assert_eq!(v["verified"], true);
    for field in ["amortized_ms", "bytes"] {
        assert!(v["per_access"][field].as_f64().unwrap() > 0.0, "{field}");
    }
    for phase in ["online", "preprocessing"] {
        assert!(
            v["per_access"][phase]["ms"].as_f64().unwrap() > 0.0,
            "{phase}"
        );
    }
    let parties = v["parties"].as_array().unwrap();
    assert_eq!(parties.len(), 3);
    for p in parties {
        assert!(p["online"]["bytes_sent"].as_u64().unwrap() > 0);
        assert!(p["peak_memory_bytes"].as_u64().unwrap() > 0);
        let steps = p["steps"].as_array().unwrap();
        let stash_read = steps.iter().find(|s| s["name"] == "stash-read").unwrap();
        assert!(stash_read["ms"].as_f64().is_some());
        assert!(stash_read["bytes_sent"].as_u64().unwrap() > 0);
    }
}

#[test]
fn bench_ramen_as_processes_over_tls() {
    let v = run_json(&[
        "bench",
        "ramen",
        "--n",
        "20",
        "--accesses",
        "6",
        "--verify",
        "--processes",
        "--net",
        "latency=0.2,bandwidth=1000",
    ]);
    assert_eq!(v["parties_as"], "processes");
    assert_eq!(v["verified"], true);
    assert_eq!(v["bandwidth_mbit"], 1000.0);
}

#[test]
fn bench_ramen_rejects_bad_options() {
    for args in [
        vec!["bench", "ramen", "--n", "3"],
        vec!["bench", "ramen", "--net", "fast"],
        vec!["bench", "ramen", "--net", "latency=-1"],
        vec!["bench", "ramen", "--threads", "0"],
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}

#[test]
fn bench_duoram_verifies_and_reports_per_kind() {
    let v = run_json(&[
        "bench",
        "duoram",
        "--n",
        "37",
        "--accesses",
        "12",
        "--verify",
    ]);
    assert_eq!(v["protocol"], "duoram");
    assert_eq!(v["verified"], true);
    for field in ["amortized_ms", "online_ms", "preprocessing_ms"] {
        assert!(v[field].as_f64().unwrap() > 0.0, "{field}");
    }
    let counted: u64 = ["read", "update", "write"]
        .iter()
        .map(|k| v[k]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 12);
    assert_eq!(v["parties"].as_array().unwrap().len(), 3);
    // Only writes: every write sends the same online bytes.
    let w = run_json(&[
        "bench",
        "duoram",
        "--log-n",
        "6",
        "--accesses",
        "4",
        "--mix",
        "writes",
        "--preprocess",
    ]);
    assert_eq!(w["write"]["count"], 4);
    assert_eq!(w["read"]["count"], 0);
    assert!(w["write"]["bytes"].as_f64().unwrap() > 0.0);
}

/// Issue "One shape for every protocol": `bench duoram`'s `bytes_per_access` included the
/// 32·n-byte Init. It now covers preprocessing and online only, with Init in `init_bytes`.
#[test]
fn bench_duoram_bytes_per_access_leave_init_out() {
    let v = run_json(&[
        "bench",
        "duoram",
        "--log-n",
        "12",
        "--accesses",
        "4",
        "--mix",
        "writes",
    ]);
    let parties = v["parties"].as_array().unwrap();
    let sum = |f: &str| -> u64 { parties.iter().map(|p| p[f].as_u64().unwrap()).sum() };
    let init = v["init_bytes"].as_u64().unwrap();
    assert_eq!(init, sum("init_bytes_sent"));
    // Init sends the memory: at least one 8-byte word per cell.
    assert!(init >= 8 << 12, "{init}");
    let per_access = v["bytes_per_access"].as_f64().unwrap();
    assert_eq!(per_access, sum("bytes_sent") as f64 / 4.0);
    assert!(
        per_access * 4.0 < init as f64,
        "{per_access} per access, Init {init}"
    );
}

#[test]
fn bench_duoram_as_processes_over_tls() {
    let v = run_json(&[
        "bench",
        "duoram",
        "--log-n",
        "7",
        "--accesses",
        "5",
        "--verify",
        "--processes",
    ]);
    assert_eq!(v["parties_as"], "processes");
    assert_eq!(v["verified"], true);
}

#[test]
fn bench_duoram_rejects_bad_options() {
    for args in [
        vec!["bench", "duoram", "--n", "0"],
        vec!["bench", "duoram", "--accesses", "0"],
        vec!["bench", "duoram", "--threads", "2"],
        vec!["bench", "duoram", "--mix", "deletes"],
        vec!["bench", "duoram", "--net", "fast"],
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}

#[test]
fn bench_compare_writes_csv_json_plots_and_crossovers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "ramen,duoram",
        "--log-n",
        "4..6:2",
        "--net",
        "none,latency=0.1,bandwidth=10000",
        "--accesses",
        "4",
        "--verify",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * 2);
    assert!(rows.iter().all(|r| r["verified"] == true));
    // Two networks × {online, total}.
    assert_eq!(v["crossovers"].as_array().unwrap().len(), 4);
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows.len());
    assert!(csv.contains("\"latency=0.1,bandwidth=10000\""));
    for svg in [
        "compare-none.svg",
        "compare-latency-0-1-bandwidth-10000.svg",
    ] {
        let text = std::fs::read_to_string(out.join(svg)).unwrap();
        assert!(
            text.contains("ramen total") && text.contains("duoram online"),
            "{svg}"
        );
    }
    assert!(out.join("compare.json").is_file());
}

#[test]
fn bench_compare_runs_the_linear_scan_through_the_same_runner() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "linear-scan,duoram",
        "--log-n",
        "5",
        "--net",
        "none",
        "--accesses",
        "3",
        "--verify",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().any(|r| r["protocol"] == "linear-scan"));
    assert!(rows.iter().all(|r| r["verified"] == true));
    // Init is not part of the per-access bytes: Duoram's whole-memory Init would dominate.
    assert!(
        rows.iter()
            .all(|r| r["total_bytes"].as_f64().unwrap() > 0.0)
    );
}

/// The two-party Duoram and FJKW15 (with the insecure dealt load, which its rows name) in one
/// sweep, every result verified; the flag is refused without FJKW15.
#[test]
fn bench_compare_runs_duoram2p_and_fjkw15() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "duoram2p,fjkw15",
        "--log-n",
        "5",
        "--net",
        "none",
        "--accesses",
        "2",
        "--verify",
        "--insecure-dealt-load",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().any(|r| r["protocol"] == "duoram2p"));
    assert!(
        rows.iter()
            .any(|r| r["protocol"] == "fjkw15-insecure-dealt-load")
    );
    assert!(rows.iter().all(|r| r["verified"] == true));
    assert_eq!(v["crossovers"].as_array().unwrap().len(), 2);
    let refused = doram()
        .args([
            "bench",
            "compare",
            "--protocols",
            "duoram",
            "--insecure-dealt-load",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

#[test]
fn bench_compare_rejects_bad_ranges() {
    for args in [
        vec!["bench", "compare", "--log-n", "24..10"],
        vec!["bench", "compare", "--log-n", "2..8"],
        vec!["bench", "compare", "--net", "lan,lan"],
        vec!["bench", "compare", "--protocols", "pathoram"],
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}

/// Writes `text` to `name` in `dir` and returns the path as a string.
fn file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("the temporary directory is writable");
    p.to_str().expect("temporary paths are UTF-8").to_string()
}

#[test]
fn run_programs_give_the_plaintext_answers() {
    let dir = tempfile::tempdir().unwrap();
    let sorted: String = (0..100).map(|i| format!("{}\n", 3 * i)).collect();
    let data = file(dir.path(), "sorted.csv", &sorted);
    for (key, index, found) in [(42u64, 14u64, true), (43, 15, false), (1000, 100, false)] {
        let v = run_json(&[
            "run",
            "binary-search",
            "--data",
            &data,
            "--key",
            &key.to_string(),
        ]);
        assert_eq!(v["output"]["index"], index, "key {key}");
        assert_eq!(v["output"]["found"], found, "key {key}");
        // Only the receiver (P2 by default) reports the output.
        let parties = v["parties"].as_array().unwrap();
        assert!(parties[0]["output"].is_null() && parties[1]["output"].is_null());
    }
    let edges = file(dir.path(), "e.csv", "0,1\n1,2\n2,3\n3,0\n4,5\n");
    let v = run_json(&[
        "run",
        "bfs",
        "--graph",
        &edges,
        "--source",
        "1",
        "--backend",
        "linear-scan",
    ]);
    assert_eq!(
        v["output"]["distances"],
        serde_json::json!([3, 0, 1, 2, null, null])
    );
    let weighted = file(dir.path(), "w.csv", "0,1,4\n0,2,1\n2,1,2\n1,3,1\n");
    let v = run_json(&["run", "dijkstra", "--graph", &weighted, "--source", "0"]);
    assert_eq!(v["output"]["distances"], serde_json::json!([0, 3, 1, 4]));
    let prefs = file(
        dir.path(),
        "p.json",
        r#"{"proposers": [[0,1,2],[1,0,2],[0,2,1]], "acceptors": [[1,0,2],[0,1,2],[2,1,0]]}"#,
    );
    let v = run_json(&[
        "run",
        "stable-matching",
        "--prefs",
        &prefs,
        "--receiver",
        "0",
    ]);
    assert_eq!(
        v["output"]["proposer_partner"],
        serde_json::json!([0, 1, 2])
    );
    assert!(!v["parties"][0]["output"].is_null());
}

/// Issue 21: many keys in one run, one result per key in input order (threads and processes).
#[test]
fn run_binary_search_with_a_keys_file() {
    let dir = tempfile::tempdir().unwrap();
    let sorted: String = (0..100).map(|i| format!("{}\n", 3 * i)).collect();
    let data = file(dir.path(), "sorted.csv", &sorted);
    // A header, a comment, a blank line, keys in any order, below and above the array.
    let keys = file(
        dir.path(),
        "keys.csv",
        "key,comment\n43,x\n# skipped\n\n0\n1000\n42\n18446744073709551615\n",
    );
    let expect = serde_json::json!([
        {"index": 15, "found": false},
        {"index": 0, "found": true},
        {"index": 100, "found": false},
        {"index": 14, "found": true},
        {"index": 100, "found": false},
    ]);
    let v = run_json(&["run", "binary-search", "--data", &data, "--keys", &keys]);
    assert_eq!(v["output"]["results"], expect);
    let parties = v["parties"].as_array().unwrap();
    assert!(parties[0]["output"].is_null() && parties[1]["output"].is_null());
    let v = run_json(&[
        "run",
        "--processes",
        "binary-search",
        "--data",
        &data,
        "--keys",
        &keys,
        "--backend",
        "linear-scan",
        "--querier",
        "2",
        "--receiver",
        "0",
    ]);
    assert_eq!(v["output"]["results"], expect);
    // One key: the list and the single-key fields.
    let one = file(dir.path(), "one.txt", "43\n");
    let v = run_json(&["run", "binary-search", "--data", &data, "--keys", &one]);
    assert_eq!(
        v["output"]["results"],
        serde_json::json!([{"index": 15, "found": false}])
    );
    assert_eq!(v["output"]["index"], 15);
}

/// Issue 21: bad key files and flag combinations fail before any party starts.
#[test]
fn run_binary_search_rejects_bad_key_files() {
    let dir = tempfile::tempdir().unwrap();
    let data = file(dir.path(), "s.csv", "1\n2\n3\n");
    let neg = file(dir.path(), "neg.txt", "5\n-1\n");
    let dec = file(dir.path(), "dec.txt", "1.5\n");
    let empty = file(dir.path(), "empty.txt", "# nothing\n\n");
    let many: String = (0..5000).map(|i| format!("{i}\n")).collect();
    let many = file(dir.path(), "many.txt", &many);
    let missing = dir.path().join("absent.txt");
    let missing = missing.to_str().unwrap();
    for (args, expect) in [
        (vec!["--keys", &neg], "line 2"),
        (vec!["--keys", &dec], "not an integer"),
        (vec!["--keys", &empty], "no keys"),
        (vec!["--keys", &many], "more than the supported 4096"),
        (vec!["--keys", missing], "absent.txt"),
        (vec!["--keys", &neg, "--key", "3"], "cannot be used with"),
        (vec![], "--keys"),
    ] {
        let mut all = vec!["run", "binary-search", "--data", &data];
        all.extend(args.iter().copied());
        let out = doram().args(&all).output().unwrap();
        assert!(!out.status.success(), "{all:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{all:?}: {err}");
        // Nothing ran: no party reported.
        assert!(out.stdout.is_empty(), "{all:?}");
    }
}

#[test]
fn run_as_processes_gives_each_party_only_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = file(dir.path(), "sorted.csv", "1\n5\n9\n13\n");
    let v = run_json(&[
        "run",
        "--processes",
        "binary-search",
        "--data",
        &data,
        "--key",
        "9",
        "--owner",
        "2",
        "--querier",
        "0",
        "--receiver",
        "1",
    ]);
    assert_eq!(v["output"]["index"], 2);
    assert_eq!(v["output"]["found"], true);
    assert!(!v["parties"][1]["output"].is_null());
}

/// Decimal weights in fixed point: distances come back in the weights' units, in threads and
/// in processes; a flag BFS does not use is refused.
#[test]
fn dijkstra_reads_decimal_weights_in_fixed_point() {
    let dir = tempfile::tempdir().unwrap();
    let g = file(
        dir.path(),
        "g.txt",
        "u v w\n0 1 2.5\n1 2 0.25\n0 2 3\n2 3 1.125\n",
    );
    for processes in [false, true] {
        let mut args = vec!["run"];
        if processes {
            args.push("--processes");
        }
        args.extend([
            "dijkstra",
            "--graph",
            &g,
            "--source",
            "0",
            "--weight-decimals",
            "3",
        ]);
        let v = run_json(&args);
        let out = v["parties"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|p| p["output"].as_object().cloned())
            .unwrap();
        let d: Vec<f64> = out["distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(d, vec![0.0, 2.5, 2.75, 3.875], "processes: {processes}");
        assert_eq!(out["weight_decimals"], 3);
    }
    let out = doram()
        .args([
            "run",
            "bfs",
            "--graph",
            &g,
            "--source",
            "0",
            "--weight-decimals",
            "2",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Named vertices: the edge file and `--source` use the names of `--vertex-names`, and the
/// distances come back per name, in threads and in processes.
#[test]
fn graphs_with_named_vertices() {
    let dir = tempfile::tempdir().unwrap();
    let names = file(dir.path(), "names.txt", "alice\nbob\ncarol\ndave\nerin\n");
    let g = file(
        dir.path(),
        "g.txt",
        "source target weight\nalice bob 2\nbob carol 1\nalice carol 4\ncarol dave 3\n",
    );
    for processes in [false, true] {
        let mut args = vec!["run"];
        if processes {
            args.push("--processes");
        }
        args.extend([
            "dijkstra",
            "--graph",
            &g,
            "--vertex-names",
            &names,
            "--source",
            "alice",
        ]);
        let v = run_json(&args);
        let out = v["parties"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|p| p["output"].as_object().cloned())
            .unwrap();
        let d = &out["distances"];
        assert_eq!(
            (&d["alice"], &d["bob"], &d["carol"], &d["dave"], &d["erin"]),
            (
                &serde_json::json!(0),
                &serde_json::json!(2),
                &serde_json::json!(3),
                &serde_json::json!(6),
                &serde_json::Value::Null
            ),
            "processes: {processes}"
        );
    }
    // A name that is not in the list, as the source or in the file, is named in the error; a
    // named file without the list says how to give one.
    for (args, expect) in [
        (
            vec![
                "run",
                "bfs",
                "--graph",
                &g,
                "--vertex-names",
                &names,
                "--source",
                "zed",
            ],
            "\"zed\" is not one of the vertex names",
        ),
        (
            vec!["run", "bfs", "--graph", &g, "--source", "0"],
            "--vertex-names",
        ),
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    let bad = file(dir.path(), "bad.txt", "alice bob 1\nbob zed 1\n");
    let out = doram()
        .args([
            "run",
            "bfs",
            "--graph",
            &bad,
            "--vertex-names",
            &names,
            "--source",
            "bob",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("\"zed\""), "{err}");
}

#[test]
fn run_rejects_malformed_inputs_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let unsorted = file(dir.path(), "u.csv", "5\n3\n");
    let sorted = file(dir.path(), "s.csv", "3\n5\n");
    let neg = file(dir.path(), "n.csv", "0,1,-4\n");
    let edges = file(dir.path(), "e.csv", "0,1\n1,2\n");
    let decimal = file(dir.path(), "d.txt", "0 1 2.5\n");
    let path: String = (0..4100).map(|i| format!("{i} {} 1\n", i + 1)).collect();
    let big = file(dir.path(), "big.txt", &path);
    let prefs = file(
        dir.path(),
        "p.json",
        r#"{"proposers": [[0,1],[1]], "acceptors": [[1,0],[0,1]]}"#,
    );
    for (args, expect) in [
        (
            vec!["run", "binary-search", "--data", &unsorted, "--key", "1"],
            "smaller than",
        ),
        (vec!["run", "binary-search", "--data", &sorted], "--key"),
        (
            vec!["run", "dijkstra", "--graph", &neg, "--source", "0"],
            "negative",
        ),
        (
            vec!["run", "bfs", "--graph", &edges, "--source", "7"],
            "not a vertex",
        ),
        (
            vec![
                "run",
                "bfs",
                "--graph",
                &edges,
                "--source",
                "0",
                "--vertices",
                "2",
            ],
            "out of range",
        ),
        (
            vec!["run", "stable-matching", "--prefs", &prefs],
            "expected 2",
        ),
        (
            vec!["run", "binary-search", "--data", &sorted, "--key", "-1"],
            "not an unsigned integer",
        ),
        (
            vec!["run", "bfs", "--graph", &edges, "--source", "-3"],
            "not an unsigned integer",
        ),
        (
            vec!["run", "dijkstra", "--graph", &decimal, "--source", "0"],
            "--weight-decimals 1",
        ),
        (
            vec!["run", "dijkstra", "--graph", &big, "--source", "0"],
            "at most 4096 vertices",
        ),
        (
            vec![
                "run",
                "stable-matching",
                "--prefs",
                &prefs,
                "--querier",
                "1",
            ],
            "--querier",
        ),
        (
            vec!["run", "bfs", "--graph", &edges, "--source", "5"],
            "give --vertices",
        ),
        (
            vec![
                "run",
                "binary-search",
                "--data",
                &sorted,
                "--key",
                "1",
                "--owner",
                "3",
            ],
            "3",
        ),
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn pir_build_serve_and_query_over_tls_with_a_misbehaving_server() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = run_json(&[
        "certs",
        "--out",
        d.join("c").to_str().unwrap(),
        "--services",
    ]);
    let config = cfg["config"].as_str().unwrap().to_string();
    let values: String = (0..300u64).map(|i| format!("{}\n", i * i + 1)).collect();
    let csv = file(d, "v.csv", &values);
    let db = d.join("v.db");
    let built = run_json(&[
        "pir",
        "build-db",
        "--in",
        &csv,
        "--out",
        db.to_str().unwrap(),
    ]);
    assert_eq!(built["records"], 300);
    // S1 answers every query with a wrong share of z.
    let servers: Vec<_> = (0..3)
        .map(|i| {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("doram"));
            c.args(["pir", "serve", "--config", &config, "--id", &i.to_string()])
                .args(["--db", db.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            if i == 1 {
                c.args(["--misbehave", "wrong-z"]);
            }
            c.spawn().unwrap()
        })
        .collect();
    // Wait until every server listens for clients (a query that finds a server absent would
    // fall back without it).
    let text = std::fs::read_to_string(&config).unwrap();
    let services: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("service_address = "))
        .map(|a| a.trim_matches('"'))
        .collect();
    assert_eq!(services.len(), 3);
    let start = std::time::Instant::now();
    while !services
        .iter()
        .all(|a| std::net::TcpStream::connect(a).is_ok())
    {
        assert!(start.elapsed().as_secs() < 60, "servers did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for index in [17u64, 299] {
        let v = run_json(&[
            "pir",
            "query",
            "--config",
            &config,
            "--index",
            &index.to_string(),
        ]);
        assert_eq!(v["record_u64"], index * index + 1, "index {index}");
        // The MAC check fails: S0 or S1 deviated, so S2 (certainly honest) answered in the clear.
        assert!(!v["fallback"].is_null(), "index {index}: {v}");
        assert_eq!(v["fallback"]["trusted"], "S2", "{v}");
    }
    // The servers serve until stopped; every one must still be running (none crashed).
    for mut s in servers {
        assert!(s.try_wait().unwrap().is_none(), "a server exited early");
        s.kill().unwrap();
        s.wait().unwrap();
    }
}

#[test]
fn pir_rejects_bad_inputs_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = run_json(&["certs", "--out", d.join("c").to_str().unwrap()]);
    let config = cfg["config"].as_str().unwrap().to_string();
    // With service addresses, so that `serve` gets as far as reading the database.
    let served = run_json(&[
        "certs",
        "--out",
        d.join("s").to_str().unwrap(),
        "--services",
    ]);
    let served = served["config"].as_str().unwrap().to_string();
    let bad_csv = file(d, "bad.csv", "1\nminus one\n");
    let db = file(d, "not.db", "not a database");
    for (args, expect) in [
        (
            vec!["pir", "build-db", "--in", &bad_csv, "--out", "x.db"],
            "bad.csv",
        ),
        (
            vec![
                "pir", "serve", "--config", &served, "--id", "0", "--db", &db,
            ],
            "not a doram PIR database",
        ),
        (
            vec!["pir", "query", "--config", &config, "--index", "1"],
            "service_address",
        ),
        (
            vec![
                "pir", "serve", "--config", &config, "--id", "3", "--db", &db,
            ],
            "3",
        ),
        (vec!["bench", "pir", "--queries", "0"], "--queries"),
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.is_empty() && err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn bench_pir_matches_the_formulas() {
    let v = run_json(&["bench", "pir", "--log-n", "10", "--queries", "2"]);
    let r = &v[0];
    assert_eq!(r["verified"], true);
    let (online, formula) = (
        r["online_total"].as_f64().unwrap(),
        r["online_formula"].as_f64().unwrap(),
    );
    assert!(
        (online / formula - 1.0).abs() < 0.10,
        "{online} vs {formula}"
    );
}

/// `doram run` on two-party Duoram: the receiver (P1 by default) learns the right index.
#[test]
fn run_binary_search_on_two_party_duoram() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sorted.csv");
    std::fs::write(&data, "1\n4\n9\n16\n25\n36\n49\n").unwrap();
    let v = run_json(&[
        "run",
        "binary-search",
        "--backend",
        "duoram2p",
        "--data",
        data.to_str().unwrap(),
        "--key",
        "16",
    ]);
    assert_eq!(v["output"]["index"], 3, "{v}");
    assert_eq!(v["output"]["found"], true, "{v}");
}

/// Two-party Duoram through the same runner and report, as threads and as two processes over
/// TLS: two parties, every result verified.
#[test]
fn bench_oram_runs_two_party_duoram() {
    for processes in [false, true] {
        let mut args = vec![
            "bench",
            "oram",
            "--protocol",
            "duoram2p",
            "--n",
            "37",
            "--accesses",
            "3",
        ];
        if processes {
            args.push("--processes");
        }
        let v = run_json(&args);
        assert_eq!(v["protocol"], "duoram2p");
        assert_eq!(v["ops"], "hidden");
        assert_eq!(v["word"], "Fp");
        assert_eq!(v["verified"], true);
        assert_eq!(
            v["parties"].as_array().unwrap().len(),
            2,
            "processes: {processes}"
        );
        assert!(v["per_access"]["online"]["bytes"].as_f64().unwrap() > 0.0);
    }
    let out = doram()
        .args(["bench", "oram", "--protocol", "duoram2p", "--word", "z64"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Fp only"), "{err}");
}

#[test]
fn bench_oram_runs_every_protocol_through_one_report() {
    for (proto, ops, word) in [
        ("ramen", "hidden", "Fp"),
        ("duoram", "public", "Z64"),
        ("linear-scan", "hidden", "Fp"),
    ] {
        let v = run_json(&[
            "bench",
            "oram",
            "--protocol",
            proto,
            "--n",
            "37",
            "--accesses",
            "7",
            "--insecure-seed",
            "5",
        ]);
        assert_eq!(v["schema"], "doram-oram-bench/1");
        assert_eq!(
            (v["protocol"].as_str(), v["ops"].as_str()),
            (Some(proto), Some(ops))
        );
        assert_eq!(v["word"], word);
        assert_eq!(v["verified"], true);
        assert_eq!(v["randomness"], "insecure-seed 5");
        assert!(v["command"].as_str().unwrap().contains("--protocol"));
        assert!(v["per_access"]["online"]["bytes"].as_f64().unwrap() > 0.0);
        assert!(v["per_access"]["preprocessing"]["bytes"].as_f64().unwrap() > 0.0);
        let parties = v["parties"].as_array().unwrap();
        assert_eq!(parties.len(), 3);
        for p in parties {
            for phase in ["setup", "init", "preprocessing", "online"] {
                assert!(p[phase]["ms"].as_f64().is_some(), "{proto} {phase}");
                assert!(p[phase]["bytes_received"].as_u64().is_some());
            }
        }
    }
    let v = run_json(&[
        "bench",
        "oram",
        "--protocol",
        "linear-scan",
        "--word",
        "z64",
        "--n",
        "9",
        "--accesses",
        "3",
        "--preprocess",
        "--writes-only",
        "--zero-memory",
    ]);
    assert_eq!(
        (v["word"].as_str(), v["preprocess_first"].as_bool()),
        (Some("Z64"), Some(true))
    );
}

#[test]
fn bench_oram_as_processes_over_tls() {
    for proto in ["ramen", "linear-scan"] {
        let v = run_json(&[
            "bench",
            "oram",
            "--protocol",
            proto,
            "--n",
            "20",
            "--accesses",
            "6",
            "--processes",
            "--net",
            "latency=0.2,bandwidth=1000",
        ]);
        assert_eq!(v["parties_as"], "processes");
        assert_eq!(v["verified"], true);
        assert_eq!(v["bandwidth_mbit"], 1000.0);
        assert_eq!(v["parties"].as_array().unwrap().len(), 3);
    }
}

/// Issue 19: FJKW15 through `bench oram`, three processes over TLS, the secure shared load by
/// default and the insecure dealt load only when asked for, under a name that says so.
#[test]
fn bench_oram_runs_fjkw15_as_processes() {
    for (flag, name) in [
        (None, "fjkw15"),
        (Some("--insecure-dealt-load"), "fjkw15-insecure-dealt-load"),
    ] {
        let mut args = vec![
            "bench",
            "oram",
            "--protocol",
            "fjkw15",
            "--n",
            "37",
            "--accesses",
            "6",
            "--processes",
        ];
        args.extend(flag);
        let v = run_json(&args);
        assert_eq!(v["protocol"], name);
        assert_eq!(
            (v["word"].as_str(), v["ops"].as_str()),
            (Some("Z64"), Some("public"))
        );
        assert_eq!(v["parties_as"], "processes");
        assert_eq!(v["verified"], true);
        assert!(v["per_access"]["online"]["bytes"].as_f64().unwrap() > 0.0);
    }
    for args in [
        vec!["bench", "oram", "--protocol", "fjkw15", "--word", "fp"],
        vec![
            "bench",
            "oram",
            "--protocol",
            "duoram",
            "--insecure-dealt-load",
        ],
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}

#[test]
fn bench_oram_rejects_bad_options() {
    for args in [
        vec!["bench", "oram", "--log-n", "4"],
        vec!["bench", "oram", "--protocol", "ramen", "--n", "3"],
        vec!["bench", "oram", "--protocol", "ramen", "--word", "z64"],
        vec!["bench", "oram", "--protocol", "duoram", "--n", "0"],
        vec!["bench", "oram", "--protocol", "duoram", "--accesses", "0"],
        vec![
            "bench",
            "oram",
            "--protocol",
            "linear-scan",
            "--threads",
            "0",
        ],
        vec!["bench", "oram", "--protocol", "path", "--n", "8"],
        vec!["bench", "oram", "--protocol", "duoram", "--net", "fast"],
    ] {
        let out = doram().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}

#[test]
fn bench_report_turns_reports_into_markdown_rows() {
    let dir = tempfile::tempdir().unwrap();
    for proto in ["duoram", "linear-scan"] {
        let out = doram()
            .args(["--json", "bench", "oram", "--protocol", proto, "--n", "32"])
            .args(["--accesses", "3"])
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::write(dir.path().join(format!("oram-{proto}.json")), &out.stdout).unwrap();
    }
    // A file of another shape is skipped with a note.
    std::fs::write(dir.path().join("other.json"), "[1, 2]").unwrap();
    let out = doram()
        .args(["bench", "report"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[1].starts_with("| duoram (Z64) | 2^5 | 3 |"), "{text}");
    assert!(
        rows[2].contains("`doram --json bench oram --protocol linear-scan --n 32 --accesses 3`")
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipping"));
    let out = doram()
        .args(["bench", "report", "/nonexistent/x.json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn bench_report_figures_computes_each_value_from_its_files() {
    let dir = tempfile::tempdir().unwrap();
    for (i, ms) in [3.0, 1.0, 2.0].iter().enumerate() {
        let run = format!(r#"{{"x": {{"ms": {ms}}}, "y": [{{"k": "a", "v": null}}]}}"#);
        std::fs::write(dir.path().join(format!("r-run{i}.json")), run).unwrap();
    }
    let manifest = dir.path().join("figures.toml");
    let write = |extra: &str| {
        std::fs::write(
            &manifest,
            format!(
                r#"
[[table]]
name = "t"
header = ["", "figure"]
[[table.row]]
cells = ["median / max", "{{0}} / {{1}} ms"]
[[table.row.value]]
files = "r-run*.json"
field = "x.ms"
digits = 1
[[table.row.value]]
files = "r-run*.json"
field = "x.ms"
stat = "max"
{extra}
"#
            ),
        )
        .unwrap();
    };
    write("");
    let out = doram()
        .args(["bench", "report", "--figures"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "| | figure |\n|---|---|\n| median / max | 2.0 / 3 ms |\n"
    );
    // A null field needs a `missing` text; a row without values needs a note.
    let null_row = "[[table.row]]\ncells = [\"n\", \"{0}\"]\n[[table.row.value]]\n\
                    files = \"r-run*.json\"\nfield = \"y.k=a.v\"\n";
    write(null_row);
    let bad = doram()
        .args(["bench", "report", "--figures"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("missing"));
    write(&format!("{null_row}missing = \"none\"\n"));
    let out = doram()
        .args(["bench", "report", "--figures"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("| n | none |\n"));
    write("[[table.row]]\ncells = [\"kept\", \"as recorded\"]\n");
    let bad = doram()
        .args(["bench", "report", "--figures"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("note"));
    // Paths and a manifest do not mix; neither is an error too.
    let both = doram()
        .args(["bench", "report", "x.json", "--figures"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(!both.status.success());
    assert!(
        !doram()
            .args(["bench", "report"])
            .output()
            .unwrap()
            .status
            .success()
    );
}

#[test]
fn programs_between_two_parties() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sorted.csv");
    std::fs::write(&data, "3\n8\n8\n20\n41\n").unwrap();
    let data = data.to_str().unwrap();
    // Threads, then two `doram party` processes over TLS: the same answer, only P1 learns it.
    for extra in [&[][..], &["--processes"][..]] {
        let v = run_json(
            &[
                &["run"][..],
                extra,
                &[
                    "binary-search",
                    "--protocol",
                    "gkk12",
                    "--data",
                    data,
                    "--key",
                    "8",
                ][..],
            ]
            .concat(),
        );
        assert_eq!(v["backend"], "gkk12");
        assert_eq!(v["output"]["index"], 1);
        assert_eq!(v["output"]["found"], true);
        let parties = v["parties"].as_array().unwrap();
        assert_eq!(parties.len(), 2);
        assert!(parties[0]["output"].is_null() && !parties[1]["output"].is_null());
    }
    let graph = dir.path().join("g.csv");
    std::fs::write(&graph, "0,1,4\n1,2,1\n0,2,9\n2,3,2\n").unwrap();
    let v = run_json(&[
        "run",
        "dijkstra",
        "--backend",
        "gkk12",
        "--graph",
        graph.to_str().unwrap(),
        "--source",
        "0",
        "--owner",
        "1",
        "--querier",
        "0",
        "--receiver",
        "0",
    ]);
    assert_eq!(v["output"]["distances"], serde_json::json!([0, 4, 5, 7]));
    // A role outside the two parties is refused before anything runs.
    let out = doram()
        .args(["run", "binary-search", "--backend", "gkk12", "--data", data])
        .args(["--key", "8", "--receiver", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("parties 0 or 1"));
}

/// Issue 19: the RAM programs on FJKW15 (over Fp) through `doram run` (threads, and three
/// processes over TLS) and `doram bench program`, with the plaintext answers.
#[test]
fn programs_run_and_bench_on_fjkw15() {
    let dir = tempfile::tempdir().unwrap();
    let sorted: String = (0..40).map(|i| format!("{}\n", 3 * i)).collect();
    let data = file(dir.path(), "sorted.csv", &sorted);
    for (flag, key, index, found) in [
        (None, 42u64, 14u64, true),
        (Some("--processes"), 43, 15, false),
    ] {
        let mut args = vec!["run"];
        args.extend(flag);
        let key = key.to_string();
        args.extend([
            "binary-search",
            "--backend",
            "fjkw15",
            "--data",
            &data,
            "--key",
            &key,
        ]);
        let v = run_json(&args);
        assert_eq!(v["backend"], "fjkw15", "{v}");
        assert_eq!(v["output"]["index"], index, "{args:?}");
        assert_eq!(v["output"]["found"], found, "{args:?}");
    }
    let edges = file(dir.path(), "e.csv", "0,1\n1,2\n2,3\n3,0\n4,5\n");
    let v = run_json(&[
        "run",
        "bfs",
        "--graph",
        &edges,
        "--source",
        "1",
        "--protocol",
        "fjkw15",
    ]);
    assert_eq!(
        v["output"]["distances"],
        serde_json::json!([3, 0, 1, 2, null, null])
    );
    for program in ["binary-search", "bfs", "dijkstra", "stable-matching"] {
        let v = run_json(&[
            "bench",
            "program",
            "--program",
            program,
            "--backend",
            "fjkw15",
            "--sizes",
            "5,9",
        ]);
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{program}");
        for r in runs {
            assert_eq!(r["backend"], "fjkw15", "{program}");
            assert_eq!(r["verified"], true, "{program}: {r}");
        }
    }
}
