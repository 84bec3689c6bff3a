//! A deployment's certificates made as on separate hosts: a CA, each party's own key and
//! request, the CA's signatures; three parties then run over them. An expired certificate is
//! refused with a clear error.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command as Process, Output, Stdio};

use assert_cmd::Command;

fn doram() -> Command {
    Command::cargo_bin("doram").expect("the doram binary is built with the tests")
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Three free local addresses (from the local generator, which picks them safely).
fn free_addresses(scratch: &Path) -> Vec<String> {
    let cfg =
        doram_net::certs::generate_local(scratch, 3, doram_net::certs::Addresses::FreeLocalPorts)
            .unwrap();
    let c = doram_net::Config::load(cfg).unwrap();
    c.parties.iter().map(|p| p.address.clone()).collect()
}

/// CA in `root/ca`, party i's key and request in `root/p<i>`, certificates signed for
/// `days[i]` days, and `root/doram.toml` naming them.
fn deployment(root: &Path, days: [u32; 3]) -> String {
    let addrs = free_addresses(&root.join("scratch"));
    let r = |p: &Path| p.to_str().unwrap().to_string();
    ok(
        &doram()
            .args(["certs", "ca", "--out", &r(&root.join("ca"))])
            .output()
            .unwrap(),
        "ca",
    );
    let mut parties = String::new();
    for i in 0..3 {
        let dir = root.join(format!("p{i}"));
        let out = doram()
            .args([
                "certs",
                "request",
                "--id",
                &i.to_string(),
                "--address",
                &addrs[i],
            ])
            .args(["--out", &r(&dir)])
            .output()
            .unwrap();
        ok(&out, "request");
        let cert = dir.join(format!("party{i}.pem"));
        let out = doram()
            .args([
                "certs",
                "sign",
                "--ca",
                &r(&root.join("ca")),
                "--id",
                &i.to_string(),
            ])
            .args(["--csr", &r(&dir.join(format!("party{i}.csr")))])
            .args(["--days", &days[i].to_string(), "--out", &r(&cert)])
            .output()
            .unwrap();
        ok(&out, "sign");
        parties.push_str(&format!(
            "[[party]]\nid = {i}\naddress = \"{}\"\ncert = \"p{i}/party{i}.pem\"\nkey = \"p{i}/party{i}.key\"\n",
            addrs[i]
        ));
    }
    let text = format!(
        "[session]\ntimeout_ms = 5000\nconnect_timeout_ms = 5000\n[tls]\nca = \"ca/ca.pem\"\n{parties}"
    );
    let path = root.join("doram.toml");
    std::fs::write(&path, text).unwrap();
    r(&path)
}

/// Runs the private lookup with parties 0 and 1 as servers and party 2 as client.
fn lookup(config: &str) -> Vec<Output> {
    let bin = assert_cmd::cargo::cargo_bin("doram");
    let spawn = |id: &str, extra: &[&str]| {
        Process::new(&bin)
            .args(["--json", "party", "--config", config, "--id", id, "lookup"])
            .args(["--log-n", "6", "--db-seed", "4", "--queries", "1"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [
        spawn("0", &[]),
        spawn("1", &[]),
        spawn("2", &["--index", "17"]),
    ];
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn parties_with_their_own_keys_run_over_ca_signed_certificates() {
    let root = tempfile::tempdir().unwrap();
    let config = deployment(root.path(), [30, 30, 30]);
    // No party's directory holds another party's key.
    for i in 0..3 {
        let keys: Vec<String> = std::fs::read_dir(root.path().join(format!("p{i}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".key"))
            .collect();
        assert_eq!(keys, [format!("party{i}.key")]);
    }
    let outs = lookup(&config);
    for (i, o) in outs.iter().enumerate() {
        ok(o, &format!("party {i}"));
    }
    let v: serde_json::Value = serde_json::from_slice(&outs[2].stdout).unwrap();
    let table = doram_services::lookup::Table::synthetic(64, 4);
    assert_eq!(v["values"], serde_json::json!([table.words()[17].0]));
}

#[test]
fn an_expired_certificate_is_refused_clearly() {
    let root = tempfile::tempdir().unwrap();
    // Party 1's certificate is valid for zero days: expired as soon as it is made.
    let config = deployment(root.path(), [30, 0, 30]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let outs = lookup(&config);
    assert!(outs.iter().all(|o| !o.status.success()));
    let p1 = String::from_utf8_lossy(&outs[1].stderr);
    assert!(p1.contains("expired"), "{p1}");
}

#[cfg(unix)]
#[test]
fn a_key_others_can_read_is_refused_clearly() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let config = deployment(root.path(), [30, 30, 30]);
    let key = root.path().join("p0/party0.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let outs = lookup(&config);
    assert!(!outs[0].status.success());
    let p0 = String::from_utf8_lossy(&outs[0].stderr);
    assert!(p0.contains("chmod 600"), "{p0}");
}

#[test]
fn sign_refuses_a_request_for_another_party() {
    let root = tempfile::tempdir().unwrap();
    let r = |p: &Path| p.to_str().unwrap().to_string();
    ok(
        &doram()
            .args(["certs", "ca", "--out", &r(&root.path().join("ca"))])
            .output()
            .unwrap(),
        "ca",
    );
    let dir = root.path().join("p1");
    ok(
        &doram()
            .args(["certs", "request", "--id", "1", "--out", &r(&dir)])
            .output()
            .unwrap(),
        "request",
    );
    let out = doram()
        .args([
            "certs",
            "sign",
            "--ca",
            &r(&root.path().join("ca")),
            "--id",
            "0",
        ])
        .args([
            "--csr",
            &r(&dir.join("party1.csr")),
            "--out",
            &r(&dir.join("x.pem")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("party0.doram"));
    // A second request on the same host does not replace the key.
    let out = doram()
        .args(["certs", "request", "--id", "1", "--out", &r(&dir)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to replace"));
    // Without --out or a subcommand, the error says what to give.
    let out = doram().args(["certs"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}
