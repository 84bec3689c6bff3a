//! `doram bench compare` names the crossovers of every pair of protocols it ran, not only of
//! the first two.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;

#[test]
fn bench_compare_reports_crossovers_for_every_pair() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let run = Command::cargo_bin("doram")
        .unwrap()
        .args(["--json", "--quiet", "bench", "compare"])
        .args(["--protocols", "ramen,duoram,fjkw15", "--log-n", "4..5"])
        .args(["--net", "none", "--accesses", "3", "--insecure-dealt-load"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let cross = v["crossovers"].as_array().unwrap();
    // Three pairs × {online, total} on one network.
    assert_eq!(cross.len(), 6, "{cross:?}");
    let mut pairs: Vec<(String, String)> = cross
        .iter()
        .map(|c| {
            let mut p = [
                c["faster_small"].as_str().unwrap().to_owned(),
                c["other"].as_str().unwrap().to_owned(),
            ];
            p.sort();
            (p[0].clone(), p[1].clone())
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    let want: Vec<(String, String)> = [
        ("duoram", "fjkw15"),
        ("duoram", "ramen"),
        ("fjkw15", "ramen"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pairs, want);
}
