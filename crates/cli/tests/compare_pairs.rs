//! `doram bench compare` names the crossovers of every pair of protocols it ran, not only of
//! the first two.
#![allow(clippy::unwrap_used)]

mod common;

use common::run_json;

#[test]
fn bench_compare_reports_crossovers_for_every_pair() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "ramen,duoram,fjkw15",
        "--log-n",
        "4..5",
        "--net",
        "none",
        "--accesses",
        "3",
        "--insecure-dealt-load",
        "--out",
        out.to_str().unwrap(),
    ]);
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
