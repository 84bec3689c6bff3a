//! Benchmarks with `--processes`: `doram party` processes on this host (three, or two for the
//! two-party engine), connected by
//! mutually authenticated TLS over loopback with a freshly generated CA and config, each
//! printing its JSON report on stdout.

use anyhow::{Context, Result, bail};
use doram_core::PartyId;
use doram_net::certs::{Addresses, generate_local};
use doram_net::{Config, Shaping};
use serde::de::DeserializeOwned;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `doram --json party --config C --id I <job> <job_args>` for the three parties and
/// collects their reports, in party order.
///
/// # Errors
/// A party that cannot start, exits with a failure, or prints no readable report.
pub fn run_parties<T: DeserializeOwned>(
    job: &str,
    job_args: &[String],
    shaping: Shaping,
) -> Result<Vec<T>> {
    run_parties_with(job, |_| job_args.to_vec(), shaping)
}

/// [`run_parties`] with each party's own job arguments (e.g. only its own role's inputs).
///
/// # Errors
/// As [`run_parties`].
pub fn run_parties_with<T: DeserializeOwned>(
    job: &str,
    job_args: impl Fn(PartyId) -> Vec<String>,
    shaping: Shaping,
) -> Result<Vec<T>> {
    run_n_parties_with(3, job, job_args, shaping)
}

/// [`run_parties_with`] for `n` parties (two for the two-party engine's benchmarks).
///
/// # Errors
/// As [`run_parties`].
pub fn run_n_parties_with<T: DeserializeOwned>(
    n: usize,
    job: &str,
    job_args: impl Fn(PartyId) -> Vec<String>,
    shaping: Shaping,
) -> Result<Vec<T>> {
    let dir = tempfile::tempdir()?;
    let config = generate_local(dir.path(), n, Addresses::FreeLocalPorts)?;
    if shaping != Shaping::NONE {
        append_shaping(&config, shaping)?;
    }
    let exe = std::env::current_exe().context("cannot find the doram executable")?;
    let children: Vec<_> = PartyId::first(n)
        .iter()
        .map(|p| {
            let mut c = Command::new(&exe);
            c.args(["--json", "party", "--config"]).arg(&config);
            c.args(["--id", &p.index().to_string(), job]);
            c.args(job_args(*p));
            c.stdout(Stdio::piped())
                .spawn()
                .with_context(|| format!("cannot start {p}"))
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    let mut failed = None;
    for (i, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output()?;
        if !o.status.success() {
            failed.get_or_insert(format!("party {i} exited with {}", o.status));
            continue;
        }
        out.push(
            serde_json::from_slice(&o.stdout)
                .with_context(|| format!("party {i} printed no readable report"))?,
        );
    }
    if let Some(f) = failed {
        bail!(f);
    }
    Ok(out)
}

/// Adds a `[shaping]` section to a generated config.
fn append_shaping(config: &Path, s: Shaping) -> Result<()> {
    let mut text = std::fs::read_to_string(config)?;
    text.push_str(&format!(
        "\n[shaping]\nlatency_ms = {}\n",
        s.latency.as_secs_f64() * 1e3
    ));
    if let Some(b) = s.bandwidth_bits_per_sec {
        text.push_str(&format!("bandwidth_mbit = {}\n", b / 1e6));
    }
    std::fs::write(config, text)?;
    // Fail here, not in three children, if the section is not what the loader expects.
    Config::load(config).with_context(|| format!("shaped config {}", config.display()))?;
    Ok(())
}
