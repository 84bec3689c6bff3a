//! A short fuzzing run of every target (a fixed number of executions, from a fixed seed so a
//! failure replays), and a replay of every saved finding in `regressions/`.

use std::time::Duration;

use doram_fuzz::{Budget, check, fuzz, targets};

/// Executions per target: decoders are cheap, protocol runs take milliseconds.
fn execs(name: &str) -> u64 {
    if name.ends_with("-peer") { 150 } else { 4000 }
}

#[test]
fn every_target_survives_a_short_run() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let reports: Vec<_> = targets::ALL
        .iter()
        .map(|t| {
            let budget = Budget {
                execs: execs(t.name),
                time: Duration::from_secs(60),
            };
            fuzz(t, budget, 0x5eed)
        })
        .collect();
    std::panic::set_hook(hook);
    for r in &reports {
        eprintln!("{}: {} execs in {:?}", r.target, r.execs, r.elapsed);
        for f in &r.findings {
            eprintln!("  {} on {:02x?}", f.message, f.input);
        }
    }
    assert!(reports.iter().all(|r| r.findings.is_empty()));
}

#[test]
fn saved_findings_stay_fixed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut replayed = 0;
    for t in targets::ALL {
        let Ok(dir) = std::fs::read_dir(root.join(t.name)) else {
            continue;
        };
        for entry in dir {
            let path = entry.expect("a readable directory").path();
            let input = std::fs::read(&path).expect("a readable file");
            if let Err(e) = check(t, &input) {
                panic!("{}: {e}", path.display());
            }
            replayed += 1;
        }
    }
    eprintln!("{replayed} saved findings replayed");
}
