//! The `--net` option: a network to emulate on every link.

use std::time::Duration;

use doram_net::Shaping;

/// Parses `--net`: `none`, `lan`, `wan` or `latency=MS,bandwidth=MBIT`.
pub fn parse_net(s: &str) -> Result<Shaping, String> {
    match s {
        "none" => return Ok(Shaping::NONE),
        "lan" => return Ok(Shaping::lan()),
        "wan" => return Ok(Shaping::wan()),
        _ => {}
    }
    let mut shaping = Shaping::NONE;
    for part in s.split(',') {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            format!("expected none, lan, wan or latency=MS,bandwidth=MBIT, got {s:?}")
        })?;
        let x: f64 = v.parse().map_err(|_| format!("{k}: not a number: {v:?}"))?;
        if !(x.is_finite() && x >= 0.0) {
            return Err(format!("{k} must be a non-negative number"));
        }
        match k {
            "latency" => shaping.latency = Duration::from_secs_f64(x / 1e3),
            "bandwidth" if x > 0.0 => shaping.bandwidth_bits_per_sec = Some(x * 1e6),
            "bandwidth" => return Err("bandwidth must be positive".into()),
            _ => {
                return Err(format!(
                    "unknown network setting {k:?} (latency, bandwidth)"
                ));
            }
        }
    }
    Ok(shaping)
}
