//! `doram bench fjkw15`: the FJKW15 access on XOR-shared records over TLS, each read checked,
//! its pre-computation counted apart; the bytes do not depend on the addresses read, and the
//! anchors appear only at their own parameters.
#![allow(clippy::unwrap_used)]

mod common;

use common::{doram, run_json};

#[test]
fn bench_fjkw15_reads_with_pre_computation_apart() {
    let args = |seed: &str| {
        run_json(&[
            "bench",
            "fjkw15",
            "--log-n",
            "6,12",
            "--record-bytes",
            "4,8",
            "--accesses",
            "4",
            "--insecure-seed",
            seed,
        ])
    };
    let (v, w) = (args("1"), args("2"));
    assert_eq!(v["schema"], "doram-fjkw15-bench/1");
    let (pv, pw) = (
        v["points"].as_array().unwrap(),
        w["points"].as_array().unwrap(),
    );
    assert_eq!(pv.len(), 4);
    for (p, q) in pv.iter().zip(pw) {
        assert_eq!(p["verified"], true);
        assert_eq!(p["accesses"], 4);
        assert!(p["online_bytes"].as_f64().unwrap() > 0.0);
        assert!(p["pre_bytes"].as_f64().unwrap() > p["online_bytes"].as_f64().unwrap());
        // Other addresses and coins, the same bytes.
        for k in ["online_bytes", "pre_bytes", "online_msgs", "online_rounds"] {
            assert_eq!(p[k], q[k], "{k}");
        }
    }
    // The anchors only at w = 32, 4-byte records, 2^12.
    assert!(pv[0]["anchor_kb"].is_null());
    assert_eq!(pv[2]["anchor_kb"], 129.0);
    assert!(pv[3]["anchor_kb"].is_null());
    // Wider records cost more online bytes.
    assert!(pv[3]["online_bytes"].as_f64().unwrap() > pv[2]["online_bytes"].as_f64().unwrap());
}

#[test]
fn bench_fjkw15_refuses_unsupported_parameters() {
    for args in [
        &["bench", "fjkw15", "--log-n", "13"][..],
        &["bench", "fjkw15", "--record-bytes", "0"],
        &["bench", "fjkw15", "--w", "1"],
    ] {
        let out = doram().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
    }
}
