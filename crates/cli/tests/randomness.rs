//! Every command that runs parties draws their secret randomness from the OS unless
//! `--insecure-seed N` is given, which warns on stderr and is recorded in the JSON output.

use assert_cmd::Command;

fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

/// Runs `doram --json ARGS`; returns the JSON document and stderr.
fn run(args: &[&str]) -> (serde_json::Value, String) {
    let out = doram()
        .arg("--json")
        .args(args)
        .output()
        .expect("doram runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "doram {args:?}: {err}");
    let v = serde_json::from_slice(&out.stdout).expect("--json prints one JSON document");
    (v, err)
}

fn sorted_file(dir: &std::path::Path) -> String {
    let p = dir.join("sorted.csv");
    std::fs::write(&p, "1\n5\n9\n13\n21\n").expect("the temporary directory is writable");
    p.to_str().expect("temporary paths are UTF-8").to_string()
}

#[test]
fn run_uses_os_randomness_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let data = sorted_file(dir.path());
    for processes in [false, true] {
        let mut args = vec!["run"];
        if processes {
            args.push("--processes");
        }
        args.extend(["binary-search", "--data", &data, "--key", "9"]);
        let (v, err) = run(&args);
        assert_eq!(v["output"]["index"], 2);
        assert_eq!(v["randomness"], "os");
        for p in v["parties"].as_array().unwrap() {
            assert_eq!(p["randomness"], "os", "processes: {processes}");
        }
        assert!(!err.contains("insecure"), "{err}");

        args.extend(["--insecure-seed", "5"]);
        let (v, err) = run(&args);
        assert_eq!(v["output"]["index"], 2);
        assert_eq!(v["randomness"], "insecure-seed 5");
        for p in v["parties"].as_array().unwrap() {
            assert_eq!(p["randomness"], "insecure-seed 5", "processes: {processes}");
        }
        assert!(err.contains("warning: --insecure-seed 5"), "{err}");
    }
}

#[test]
fn the_public_seed_option_of_run_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let data = sorted_file(dir.path());
    let out = doram()
        .args([
            "run",
            "binary-search",
            "--data",
            &data,
            "--key",
            "9",
            "--seed",
            "1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--seed"));
}

#[test]
fn benchmarks_say_how_they_dealt_and_where_randomness_came_from() {
    for proto in ["ramen", "duoram"] {
        let base = ["bench", proto, "--n", "16", "--accesses", "4", "--verify"];
        let (v, err) = run(&base);
        assert_eq!(v["verified"], true);
        assert_eq!(v["randomness"], "os");
        assert_eq!(v["dealer"], "synthetic dealer, not secure");
        assert!(!err.contains("insecure"), "{err}");
        let mut args = base.to_vec();
        args.extend(["--insecure-seed", "2"]);
        let (v, err) = run(&args);
        assert_eq!(v["verified"], true);
        assert_eq!(v["randomness"], "insecure-seed 2");
        assert!(err.contains("warning: --insecure-seed 2"), "{err}");
    }
    // As separate processes, each party draws its own (or derives it from the flag).
    let (v, err) = run(&[
        "bench",
        "duoram",
        "--n",
        "16",
        "--accesses",
        "4",
        "--verify",
        "--processes",
        "--insecure-seed",
        "3",
    ]);
    assert_eq!(v["verified"], true);
    assert_eq!(v["randomness"], "insecure-seed 3");
    assert!(err.contains("warning: --insecure-seed 3"), "{err}");
    let (v, _) = run(&[
        "bench",
        "program",
        "--program",
        "binary-search",
        "--sizes",
        "8",
    ]);
    assert_eq!(v["runs"][0]["randomness"], "os");
}
