//! `doram bench compare` reports online messages per access beside bytes and rounds, in its
//! JSON and as a CSV column.
#![allow(clippy::unwrap_used)]

mod common;

use common::run_json;

#[test]
fn bench_compare_reports_online_messages() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp");
    let v = run_json(&[
        "--quiet",
        "bench",
        "compare",
        "--protocols",
        "duoram,fjkw15",
        "--log-n",
        "4",
        "--net",
        "none",
        "--accesses",
        "4",
        "--insecure-dealt-load",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let (msgs, rounds) = (
            r["online_messages"].as_f64().unwrap(),
            r["online_rounds"].as_f64().unwrap(),
        );
        // Every round carries at least one message.
        assert!(msgs >= rounds && rounds > 0.0, "{r}");
    }
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "online_messages").unwrap();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len());
        assert!(cells[col].parse::<f64>().unwrap() > 0.0);
    }
}
