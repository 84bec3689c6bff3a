//! Two-party Duoram on 64-bit words (`--protocol duoram2p-z64`) through `doram bench oram`, as
//! threads and as two processes over TLS: two parties, hidden operations, every result
//! verified; the other word ring refused.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;

fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

#[test]
fn bench_oram_runs_two_party_duoram_on_64_bit_words() {
    for processes in [false, true] {
        let mut args = vec![
            "--json",
            "bench",
            "oram",
            "--protocol",
            "duoram2p-z64",
            "--n",
            "37",
            "--accesses",
            "3",
        ];
        if processes {
            args.push("--processes");
        }
        let out = doram().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], "duoram2p-z64");
        assert_eq!(v["ops"], "hidden");
        assert_eq!(v["word"], "Z64");
        assert_eq!(v["verified"], true);
        assert_eq!(v["parties"].as_array().unwrap().len(), 2);
        assert!(v["per_access"]["online"]["bytes"].as_f64().unwrap() > 0.0);
    }
    let out = doram()
        .args([
            "bench",
            "oram",
            "--protocol",
            "duoram2p-z64",
            "--word",
            "fp",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Z64 only"));
}
