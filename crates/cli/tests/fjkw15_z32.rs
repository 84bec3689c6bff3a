//! FJKW15 on 4-byte words (`fjkw15-z32`, the authors' record size) through `bench oram`, as
//! three processes over TLS, and as its own series in `bench compare`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{doram, run_json};

#[test]
fn bench_oram_runs_fjkw15_on_4_byte_words_as_processes() {
    for (flag, name) in [
        (None, "fjkw15-z32"),
        (
            Some("--insecure-dealt-load"),
            "fjkw15-z32-insecure-dealt-load",
        ),
    ] {
        let mut args = vec![
            "bench",
            "oram",
            "--protocol",
            "fjkw15-z32",
            "--n",
            "37",
            "--accesses",
            "6",
            "--processes",
        ];
        args.extend(flag);
        let v = run_json(&args);
        assert_eq!(v["protocol"], name);
        assert_eq!(v["word"], "Z32");
        assert_eq!(v["parties_as"], "processes");
        assert_eq!(v["verified"], true);
    }
    for word in ["z64", "fp"] {
        let args = ["bench", "oram", "--protocol", "fjkw15-z32", "--word", word];
        let out = doram().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Z/2^32"));
    }
}

#[test]
fn bench_compare_has_4_and_8_byte_fjkw15_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "fjkw15,fjkw15-z32",
        "--log-n",
        "5",
        "--net",
        "none",
        "--accesses",
        "4",
        "--verify",
        "--insecure-dealt-load",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fjkw15-insecure-dealt-load",
            "fjkw15-z32-insecure-dealt-load"
        ]
    );
    assert!(rows.iter().all(|r| r["verified"] == true), "{rows:?}");
    // The 4-byte records make a smaller access than the 8-byte ones.
    let bytes = |i: usize| rows[i]["online_bytes"].as_f64().unwrap();
    assert!(bytes(1) < bytes(0), "{rows:?}");
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    assert!(
        csv.contains("\nfjkw15-z32-insecure-dealt-load,none,5,4,"),
        "{csv}"
    );
}
