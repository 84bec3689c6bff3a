//! `doram bench compare`: one sweep of several DORAM protocols over memory sizes and network
//! settings, written as CSV and JSON, drawn as one SVG per network setting (online and total
//! time per access against log n, like Ramen's Fig. 10), with the crossover sizes of every
//! pair of protocols named.
//!
//! Every point runs the three parties as threads of this process over in-process channels with
//! the network setting's shaping on every link, every protocol on the one bench runner of
//! `doram-oram` with preprocessing apart (up front, or per access where the protocol's
//! material for all accesses would exceed its bound), so that online and total
//! (preprocessing + online, amortised; Init apart) time per access are measured separately.
//! Results are appended to the CSV as they come, so an interrupted sweep keeps what it
//! measured.

use crate::randomness::Randomness;
use anyhow::{Context, Result, bail};
use clap::Args;
use plotters::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::report::{NamedNet, PointArgs, Row, print_json};

/// The DORAM protocols the sweep can run: those of `doram bench oram`.
pub use crate::oram::ProtocolArg as Protocol;

/// Network settings named on the command line.
#[derive(Debug, Clone)]
pub struct NetList(pub Vec<NamedNet>);

/// Parses `--net lan,wan` or `--net none,latency=5,bandwidth=1000`: a comma-separated list in
/// which `key=value` items continue the custom setting before them.
fn parse_nets(s: &str) -> Result<NetList, String> {
    let mut names: Vec<String> = Vec::new();
    for item in s.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("empty network setting in {s:?}"));
        }
        match names.last_mut() {
            Some(last) if item.contains('=') && last.contains('=') => {
                last.push(',');
                last.push_str(item);
            }
            _ => names.push(item.to_string()),
        }
    }
    let mut nets = Vec::with_capacity(names.len());
    for name in names {
        if nets.iter().any(|n: &NamedNet| n.name == name) {
            return Err(format!("network setting {name:?} named twice"));
        }
        let shaping = crate::netarg::parse_net(&name)?;
        nets.push(NamedNet { name, shaping });
    }
    Ok(NetList(nets))
}

/// An inclusive range of log2 memory sizes with a step: `10..24`, `10..24:2` or `16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRange {
    /// First log n.
    pub from: u32,
    /// Last log n (inclusive).
    pub to: u32,
    /// Step.
    pub step: u32,
}

impl LogRange {
    fn values(self) -> Vec<u32> {
        (self.from..=self.to).step_by(self.step as usize).collect()
    }
}

fn parse_log_range(s: &str) -> Result<LogRange, String> {
    let (range, step) = match s.split_once(':') {
        Some((r, st)) => (
            r,
            st.parse::<u32>()
                .map_err(|_| format!("step: not a positive integer: {st:?}"))?,
        ),
        None => (s, 1),
    };
    let num = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("not an integer: {t:?} (expected e.g. 10..24 or 10..24:2)"))
    };
    let (from, to) = match range.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.trim_start_matches('='))?),
        None => (num(range)?, num(range)?),
    };
    if step == 0 {
        return Err("step must be at least 1".into());
    }
    if from > to {
        return Err(format!("empty range: {from} > {to}"));
    }
    if from < 4 || to > 26 {
        return Err(format!(
            "log n must lie in 4..=26 (memories of 16 to 2^26 words), got {from}..{to}"
        ));
    }
    Ok(LogRange { from, to, step })
}

/// Arguments of `doram bench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Protocols to compare, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "ramen,duoram"
    )]
    pub protocols: Vec<Protocol>,
    /// Memory sizes 2^N: an inclusive range `A..B`, optionally with a step `A..B:S`, or one N.
    #[arg(long, default_value = "10..20:2", value_parser = parse_log_range)]
    pub log_n: LogRange,
    /// Network settings, comma-separated: `none`, `lan` (1 ms RTT, 10 Gbit/s), `wan` (30 ms one
    /// way, 100 Mbit/s) or a custom `latency=MS,bandwidth=MBIT`.
    #[arg(long, default_value = "lan,wan", value_parser = parse_nets)]
    pub net: NetList,
    /// Accesses per point (default: one Ramen epoch, √n, at most 1024, for Ramen; 128 writes
    /// for Duoram, as in Ramen's comparison, and for the linear scan).
    #[arg(long)]
    pub accesses: Option<usize>,
    /// Threads per party for preprocessing.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Check every result against a plaintext mirror (outside the measured phases).
    #[arg(long)]
    pub verify: bool,
    /// Public seed of the synthetic workloads (benchmark data, not secret).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where each party's own secret randomness comes from (the OS by default).
    #[command(flatten)]
    pub randomness: Randomness,
    /// FJKW15 only, **insecure**: its points build the forest from the memory opened to two
    /// parties instead of the secure load (n accesses, impractical beyond 2^14); its rows are
    /// named `fjkw15-insecure-dealt-load` (`fjkw15-z32-insecure-dealt-load`).
    #[arg(long)]
    pub insecure_dealt_load: bool,
    /// Directory for compare.csv, compare.json and compare-<net>.svg.
    #[arg(long, default_value = "compare")]
    pub out: PathBuf,
}

const CSV_HEADER: &str = "protocol,net,log_n,accesses,online_ms,preprocessing_ms,total_ms,online_bytes,total_bytes,online_rounds,online_messages,verified";

impl Row {
    fn csv(&self) -> String {
        format!(
            "{},{},{},{},{:.4},{:.4},{:.4},{:.1},{:.1},{:.2},{:.1},{}",
            self.protocol,
            csv_field(&self.net),
            self.log_n,
            self.accesses,
            self.online_ms,
            self.preprocessing_ms,
            self.total_ms,
            self.online_bytes,
            self.total_bytes,
            self.online_rounds,
            self.online_messages,
            self.verified
        )
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Where one protocol overtakes another.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Crossover {
    /// Network setting name.
    pub net: String,
    /// `online` or `total`.
    pub metric: &'static str,
    /// The protocol faster at the smallest size measured by both.
    pub faster_small: &'static str,
    /// The other protocol.
    pub other: &'static str,
    /// The smallest log n from which `other` is faster at every larger size measured, if any.
    pub other_faster_from: Option<u32>,
    /// One sentence for people.
    pub summary: String,
}

/// Whether `r` is a row of protocol `p` (FJKW15's rows carry the name of an insecure load).
fn row_is(r: &Row, p: Protocol) -> bool {
    r.protocol == p.name() || p.insecure_name() == Some(r.protocol)
}

/// The crossovers between protocols `a` and `b` in `rows`, per network and metric.
pub fn crossovers(rows: &[Row], a: Protocol, b: Protocol, nets: &[String]) -> Vec<Crossover> {
    let mut out = Vec::new();
    for net in nets {
        for metric in ["online", "total"] {
            let value = |r: &Row| {
                if metric == "online" {
                    r.online_ms
                } else {
                    r.total_ms
                }
            };
            let pick = |p: Protocol, log_n: u32| {
                rows.iter()
                    .find(|r| row_is(r, p) && &r.net == net && r.log_n == log_n)
                    .map(value)
            };
            let mut sizes: Vec<u32> = rows
                .iter()
                .filter(|r| &r.net == net)
                .map(|r| r.log_n)
                .collect();
            sizes.sort_unstable();
            sizes.dedup();
            // Sizes measured by both, with whether `a` is faster there.
            let both: Vec<(u32, bool)> = sizes
                .into_iter()
                .filter_map(|s| Some((s, pick(a, s)? < pick(b, s)?)))
                .collect();
            let Some(&(first, a_first)) = both.first() else {
                continue;
            };
            let (small, other) = if a_first { (a, b) } else { (b, a) };
            // The smallest size from which `other` wins at every larger measured size.
            let mut from = None;
            for &(s, a_wins) in both.iter().rev() {
                if a_wins == a_first {
                    break;
                }
                from = Some(s);
            }
            let last = both.last().map_or(first, |x| x.0);
            let summary = match from {
                Some(f) => {
                    let before = both
                        .iter()
                        .take_while(|x| x.0 < f)
                        .last()
                        .map_or(first, |x| x.0);
                    format!(
                        "{net}, {metric}: {} faster up to 2^{before}, {} faster from 2^{f} (measured 2^{first}..2^{last})",
                        small.name(),
                        other.name()
                    )
                }
                None => format!(
                    "{net}, {metric}: {} faster at the largest size measured; no crossover to {} in 2^{first}..2^{last}",
                    if both.last().is_some_and(|x| x.1) {
                        a.name()
                    } else {
                        b.name()
                    },
                    other.name()
                ),
            };
            out.push(Crossover {
                net: net.clone(),
                metric,
                faster_small: small.name(),
                other: other.name(),
                other_faster_from: from,
                summary,
            });
        }
    }
    out
}

/// Draws one network setting's plot: online (dashed) and total (solid) ms per access against
/// log n, on a log scale, one colour per protocol.
pub fn plot(rows: &[Row], net: &str, path: &Path) -> Result<()> {
    let mine: Vec<&Row> = rows.iter().filter(|r| r.net == net).collect();
    if mine.is_empty() {
        bail!("nothing measured for network {net}");
    }
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for r in &mine {
        for v in [r.online_ms, r.total_ms] {
            if v > 0.0 {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if !lo.is_finite() {
        lo = 1e-3;
        hi = 1.0;
    }
    let (y0, y1) = (lo / 1.5, hi * 1.5);
    let xmin = mine.iter().map(|r| r.log_n).min().unwrap_or(0);
    let xmax = mine
        .iter()
        .map(|r| r.log_n)
        .max()
        .unwrap_or(0)
        .max(xmin + 1);
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Time per access, network: {net}"),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d(xmin..xmax, (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("log2 n (memory words)")
            .y_desc("ms per access")
            .x_labels((xmax - xmin + 1) as usize)
            .light_line_style(RGBColor(238, 238, 238))
            .draw()?;
        let colours = [
            RGBColor(200, 40, 40),
            RGBColor(30, 90, 200),
            RGBColor(40, 150, 60),
        ];
        let mut protocols: Vec<&'static str> = mine.iter().map(|r| r.protocol).collect();
        protocols.sort_unstable();
        protocols.dedup();
        for (k, p) in protocols.iter().enumerate() {
            let colour = colours[k % colours.len()];
            let mut pts: Vec<&&Row> = mine.iter().filter(|r| r.protocol == *p).collect();
            pts.sort_by_key(|r| r.log_n);
            let total: Vec<(u32, f64)> = pts.iter().map(|r| (r.log_n, r.total_ms)).collect();
            let online: Vec<(u32, f64)> = pts.iter().map(|r| (r.log_n, r.online_ms)).collect();
            chart
                .draw_series(LineSeries::new(total.clone(), colour.stroke_width(2)))?
                .label(format!("{p} total"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                total
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, colour.filled())),
            )?;
            chart
                .draw_series(DashedLineSeries::new(
                    online.clone(),
                    6,
                    4,
                    colour.stroke_width(2),
                ))?
                .label(format!("{p} online"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 8, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                online
                    .iter()
                    .map(|&(x, y)| TriangleMarker::new((x, y), 4, colour)),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))
}

/// Measures one point.
fn measure(p: Protocol, log_n: u32, net: &NamedNet, args: &CompareArgs) -> Result<Row> {
    let point = PointArgs {
        accesses: args.accesses,
        threads: args.threads,
        verify: args.verify,
        seed: args.seed,
        randomness: args.randomness,
        insecure_dealt_load: args.insecure_dealt_load,
    };
    crate::oram::compare_point(p, log_n, net, &point)
}

/// The summary `doram bench compare --json` prints.
#[derive(Debug, Serialize)]
struct CompareReport<'a> {
    /// Where the parties' randomness came from (`os` or `insecure-seed N`).
    randomness: String,
    /// How the inputs were shared.
    dealer: &'static str,
    rows: &'a [Row],
    /// Every pair of protocols, per network and metric.
    crossovers: &'a [Crossover],
    files: Vec<String>,
}

/// Runs `doram bench compare`.
pub fn run(args: &CompareArgs, json: bool, quiet: bool) -> Result<()> {
    let mut protocols = args.protocols.clone();
    protocols.sort_unstable();
    protocols.dedup();
    if protocols.is_empty() {
        bail!("--protocols: name at least one protocol");
    }
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if args.accesses == Some(0) {
        bail!("--accesses must be at least 1");
    }
    if args.insecure_dealt_load && !protocols.iter().any(|p| p.is_fjkw15()) {
        bail!("--insecure-dealt-load is for --protocols with fjkw15 or fjkw15-z32 only");
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let csv_path = args.out.join("compare.csv");
    let mut csv = std::fs::File::create(&csv_path)
        .with_context(|| format!("creating {}", csv_path.display()))?;
    writeln!(csv, "{CSV_HEADER}")?;
    let mut rows = Vec::new();
    for net in &args.net.0 {
        for log_n in args.log_n.values() {
            for &p in &protocols {
                if !quiet {
                    eprintln!("measuring {} at 2^{log_n}, network {}…", p.name(), net.name);
                }
                let row = measure(p, log_n, net, args)
                    .with_context(|| format!("{} at 2^{log_n} on {}", p.name(), net.name))?;
                if !quiet {
                    eprintln!(
                        "  {:.3} ms online, {:.3} ms total per access",
                        row.online_ms, row.total_ms
                    );
                }
                writeln!(csv, "{}", row.csv())?;
                csv.flush()?;
                rows.push(row);
            }
        }
    }
    let nets: Vec<String> = args.net.0.iter().map(|n| n.name.clone()).collect();
    // Every pair of protocols, in the order of `protocols`.
    let mut cross = Vec::new();
    for (i, &a) in protocols.iter().enumerate() {
        for &b in &protocols[i + 1..] {
            cross.extend(crossovers(&rows, a, b, &nets));
        }
    }
    let mut files = vec![csv_path.display().to_string()];
    for net in &nets {
        let path = args.out.join(format!("compare-{}.svg", file_stem(net)));
        plot(&rows, net, &path)?;
        files.push(path.display().to_string());
    }
    let json_path = args.out.join("compare.json");
    let mut report = CompareReport {
        randomness: args.randomness.label(),
        dealer: doram_core::SYNTHETIC_DEALER,
        rows: &rows,
        crossovers: &cross,
        files,
    };
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    report.files.push(json_path.display().to_string());
    if json {
        print_json(&report)?;
    } else {
        println!(
            "randomness: {}; inputs: {}",
            report.randomness, report.dealer
        );
        let w = rows
            .iter()
            .map(|r| r.protocol.len())
            .max()
            .unwrap_or(0)
            .max(8);
        println!(
            "{:<w$} {:<10} {:>5} {:>12} {:>12} {:>14} {:>8} {:>8}",
            "protocol", "net", "log n", "online ms", "total ms", "online B/acc", "rounds", "msgs"
        );
        for r in &rows {
            println!(
                "{:<w$} {:<10} {:>5} {:>12.3} {:>12.3} {:>14.0} {:>8.1} {:>8.1}",
                r.protocol,
                r.net,
                r.log_n,
                r.online_ms,
                r.total_ms,
                r.online_bytes,
                r.online_rounds,
                r.online_messages
            );
        }
        for c in &cross {
            println!("{}", c.summary);
        }
        println!("wrote {}", report.files.join(", "));
    }
    Ok(())
}

fn file_stem(net: &str) -> String {
    net.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_net::Shaping;

    fn row(p: Protocol, log_n: u32, online: f64, total: f64) -> Row {
        Row {
            protocol: p.name(),
            net: "lan".into(),
            log_n,
            accesses: 1,
            online_ms: online,
            preprocessing_ms: total - online,
            total_ms: total,
            online_bytes: 1.0,
            total_bytes: 2.0,
            online_rounds: 1.0,
            online_messages: 2.0,
            verified: false,
        }
    }

    #[test]
    fn log_ranges() {
        assert_eq!(
            parse_log_range("10..24").unwrap(),
            LogRange {
                from: 10,
                to: 24,
                step: 1
            }
        );
        assert_eq!(
            parse_log_range("10..=20:2").unwrap().values(),
            vec![10, 12, 14, 16, 18, 20]
        );
        assert_eq!(parse_log_range("16").unwrap().values(), vec![16]);
        for bad in [
            "", "a..b", "20..10", "10..30", "2..8", "10..20:0", "10..20:x",
        ] {
            assert!(parse_log_range(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn network_lists() {
        let n = parse_nets("lan,wan").unwrap().0;
        assert_eq!(n.len(), 2);
        assert_eq!(n[1].shaping, Shaping::wan());
        let n = parse_nets("none,latency=5,bandwidth=1000").unwrap().0;
        assert_eq!(n.len(), 2);
        assert_eq!(n[1].name, "latency=5,bandwidth=1000");
        assert_eq!(n[1].shaping.latency, std::time::Duration::from_millis(5));
        for bad in ["", "lan,,wan", "lan,lan", "moon", "latency=x"] {
            assert!(parse_nets(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn crossover_found_and_named() {
        let mut rows = Vec::new();
        for (s, r, d) in [
            (10, 5.0, 1.0),
            (12, 6.0, 3.0),
            (14, 7.0, 9.0),
            (16, 8.0, 30.0),
        ] {
            rows.push(row(Protocol::Ramen, s, r, r));
            rows.push(row(Protocol::Duoram, s, d, d * 2.0));
        }
        let c = crossovers(&rows, Protocol::Ramen, Protocol::Duoram, &["lan".into()]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].metric, "online");
        assert_eq!(c[0].faster_small, "duoram");
        assert_eq!(c[0].other_faster_from, Some(14));
        assert!(
            c[0].summary
                .contains("duoram faster up to 2^12, ramen faster from 2^14")
        );
        // Total: duoram 2, 6, 18, 60 against ramen 5, 6, 7, 8. The tie at 2^12 does not count
        // as ramen being faster, so ramen wins from 2^14.
        assert_eq!(c[1].other_faster_from, Some(14));
    }

    #[test]
    fn no_crossover_when_one_protocol_always_wins() {
        let rows = vec![
            row(Protocol::Ramen, 10, 1.0, 1.0),
            row(Protocol::Duoram, 10, 2.0, 2.0),
            row(Protocol::Ramen, 12, 1.0, 1.0),
            row(Protocol::Duoram, 12, 2.0, 2.0),
        ];
        let c = crossovers(&rows, Protocol::Ramen, Protocol::Duoram, &["lan".into()]);
        assert_eq!(c[0].faster_small, "ramen");
        assert_eq!(c[0].other_faster_from, None);
        assert!(c[0].summary.contains("no crossover"));
    }

    #[test]
    fn a_crossover_that_reverts_is_not_reported_as_final() {
        let mut rows = Vec::new();
        for (s, r, d) in [(10, 5.0, 1.0), (12, 1.0, 3.0), (14, 7.0, 6.0)] {
            rows.push(row(Protocol::Ramen, s, r, r));
            rows.push(row(Protocol::Duoram, s, d, d));
        }
        let c = crossovers(&rows, Protocol::Ramen, Protocol::Duoram, &["lan".into()]);
        assert_eq!(c[0].other_faster_from, None);
    }

    #[test]
    fn plots_are_svg_with_both_protocols() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.svg");
        let rows = vec![
            row(Protocol::Ramen, 10, 1.0, 2.0),
            row(Protocol::Duoram, 10, 0.5, 3.0),
            row(Protocol::Ramen, 12, 1.5, 2.5),
            row(Protocol::Duoram, 12, 2.0, 9.0),
        ];
        plot(&rows, "lan", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("ramen total") && svg.contains("duoram online"));
        assert!(plot(&rows, "wan", &path).is_err());
    }
}
