//! `doram bench report --figures MANIFEST`: tables of figures, each number computed from
//! recorded bench-results JSON as a manifest says, so that README and BENCHMARKS.md print the
//! same number for the same fact.
//!
//! A manifest is a TOML file of tables; each row is a list of cell templates in which `{i}`
//! stands for the row's `i`-th value. A value names its JSON files (paths relative to the
//! manifest; one `*` allowed in the file name), the field to read in each file (or several, to
//! add up), the statistic over the files (the median by default: the upper median for an even
//! count, as `doram bench report` takes it), a scale and the decimal places. A row with no
//! values is text kept as recorded; its `note` says why no JSON backs it.
//!
//! ```toml
//! [[table]]
//! name = "readme"
//! header = ["", "doram", "reference point"]
//!
//! [[table.row]]
//! cells = ["Ramen per access at 2^16", "{0} ms", "authors' code: 37.6 ms"]
//! source = "the reference point's source"
//! [[table.row.value]]
//! files = "2026-11-26-portable/oram/oram-ramen-log-n-16-run*.json"
//! field = "per_access.amortized_ms"
//! digits = 2
//! ```

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::report::print_json;

/// A manifest: tables of figures.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// The tables, in the order `--table` looks them up.
    table: Vec<Table>,
}

/// One markdown table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    /// What `--table` calls it.
    name: String,
    /// Column headings.
    header: Vec<String>,
    /// Rows, in order.
    #[serde(default)]
    row: Vec<Row>,
}

/// One row: cell templates and the values they take.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    /// One template per column; `{i}` is replaced by the `i`-th value.
    cells: Vec<String>,
    /// The values, in order.
    #[serde(default)]
    value: Vec<ValueSpec>,
    /// Where the row's reference point comes from (in `--json` output only).
    source: Option<String>,
    /// Why a row has no values, or what else a reader should know (in `--json` output only).
    note: Option<String>,
}

/// The statistic over a value's files.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Stat {
    /// The median (the upper one for an even count).
    #[default]
    Median,
    /// The smallest.
    Min,
    /// The largest.
    Max,
}

/// How the numbers found under a `*` of a field path are combined within one file.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Reduce {
    /// Their sum (the parts of a run).
    Sum,
    /// The largest (the slowest party).
    Max,
    /// The smallest.
    Min,
}

/// How one number of a row is computed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValueSpec {
    /// JSON files relative to the manifest; one `*` may stand for any part of the file name.
    files: String,
    /// The field read in each file: keys and array indices separated by dots; `key=text`
    /// picks the first array element whose `key` is the string or number `text` (several
    /// joined by `&` must all hold); `*` takes
    /// every element, combined as `each` says.
    field: Option<String>,
    /// Fields added up in each file, instead of `field`.
    sum: Option<Vec<String>>,
    /// How the numbers under each `*` of a field are combined, outermost first.
    #[serde(default)]
    each: Vec<Reduce>,
    /// The statistic over the files.
    #[serde(default)]
    stat: Stat,
    /// Factor applied to the statistic (units).
    #[serde(default = "one")]
    scale: f64,
    /// When given, the number printed is `numerator` divided by the scaled statistic (a
    /// speed-up against a reference figure).
    numerator: Option<f64>,
    /// Decimal places printed.
    #[serde(default)]
    digits: usize,
    /// Text around the number; `{}` is the number.
    #[serde(default = "bare")]
    format: String,
    /// The text printed when the field is null in every file (absent: an error).
    missing: Option<String>,
}

fn one() -> f64 {
    1.0
}

fn bare() -> String {
    "{}".into()
}

/// A computed value, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Computed {
    /// The statistic, scaled; `None` where the field is null and `missing` stands in.
    number: Option<f64>,
    /// How it is printed.
    text: String,
    /// The statistic taken.
    stat: Stat,
    /// The files it was taken over.
    files: Vec<String>,
}

/// A rendered row, as `--json` prints it.
#[derive(Debug, Serialize)]
struct RenderedRow {
    cells: Vec<String>,
    values: Vec<Computed>,
    source: Option<String>,
    note: Option<String>,
}

/// The files `pattern` names, relative to `base`, in name order.
fn matching_files(base: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
    let path = base.join(pattern);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("no file name in {pattern}"))?;
    let Some((prefix, suffix)) = name.split_once('*') else {
        return Ok(vec![path]);
    };
    if suffix.contains('*') {
        bail!("{pattern}: at most one `*` in a file name");
    }
    let dir = path.parent().unwrap_or(base);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.len() >= prefix.len() + suffix.len()
                    && n.starts_with(prefix)
                    && n.ends_with(suffix)
            })
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no file matches {}", path.display());
    }
    Ok(files)
}

/// Whether `v` (a string or a number) reads as `want`.
fn field_is(v: &Value, want: &str) -> bool {
    match v {
        Value::String(s) => s == want,
        Value::Number(n) => n.to_string() == want,
        _ => false,
    }
}

/// Whether `x` has every `key=text` of `conditions` (joined by `&`).
fn picks(x: &Value, conditions: &str) -> bool {
    conditions.split('&').all(|c| {
        c.split_once('=')
            .is_some_and(|(k, want)| x.get(k).is_some_and(|v| field_is(v, want)))
    })
}

/// The field at `path` in `v`: `None` where it is null. A `*` segment stands for every element
/// of an array (or every value of an object); the numbers found under it are combined by the
/// matching entry of `each`, outermost `*` first.
fn lookup(v: &Value, path: &str, each: &[Reduce]) -> Result<Option<f64>> {
    let segments: Vec<&str> = path.split('.').collect();
    let stars = segments.iter().filter(|s| **s == "*").count();
    if stars != each.len() {
        bail!(
            "`{path}` has {stars} `*` but `each` names {} reductions",
            each.len()
        );
    }
    descend(v, &segments, each).with_context(|| format!("`{path}`"))
}

/// [`lookup`] below one node.
fn descend(at: &Value, segments: &[&str], each: &[Reduce]) -> Result<Option<f64>> {
    let Some((&key, rest)) = segments.split_first() else {
        return match at {
            Value::Null => Ok(None),
            x => x.as_f64().map(Some).context("not a number"),
        };
    };
    let next = match (at, key.split_once('=')) {
        (Value::Array(items), _) if key == "*" => {
            return reduce(items.iter(), rest, each);
        }
        (Value::Object(map), _) if key == "*" => return reduce(map.values(), rest, each),
        (Value::Array(items), Some(_)) => items
            .iter()
            .find(|x| picks(x, key))
            .with_context(|| format!("no element with {key}"))?,
        (Value::Array(items), None) => {
            let i: usize = key
                .parse()
                .with_context(|| format!("`{key}` indexes an array"))?;
            items
                .get(i)
                .with_context(|| format!("index {i} past the array's end"))?
        }
        (Value::Object(map), _) => map.get(key).with_context(|| format!("no field `{key}`"))?,
        _ => bail!("`{key}` looks into a number or a string"),
    };
    descend(next, rest, each)
}

/// Combines the numbers below each of `items` by `each[0]`; `None` if any is null.
fn reduce<'a>(
    items: impl Iterator<Item = &'a Value>,
    rest: &[&str],
    each: &[Reduce],
) -> Result<Option<f64>> {
    let (op, inner) = each.split_first().context("a `*` without a reduction")?;
    let mut xs = Vec::new();
    for item in items {
        match descend(item, rest, inner)? {
            Some(x) => xs.push(x),
            None => return Ok(None),
        }
    }
    if xs.is_empty() {
        bail!("`*` over nothing");
    }
    Ok(Some(match op {
        Reduce::Sum => xs.iter().sum(),
        Reduce::Max => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Reduce::Min => xs.iter().copied().fold(f64::INFINITY, f64::min),
    }))
}

/// The statistic `stat` of `xs` (not empty).
fn statistic(mut xs: Vec<f64>, stat: Stat) -> f64 {
    xs.sort_by(f64::total_cmp);
    match stat {
        Stat::Median => xs[xs.len() / 2],
        Stat::Min => xs[0],
        Stat::Max => xs[xs.len() - 1],
    }
}

/// One file's number for `spec`: its field, or the sum of its fields.
fn per_file(spec: &ValueSpec, json: &Value) -> Result<Option<f64>> {
    let fields: Vec<&str> = match (&spec.field, &spec.sum) {
        (Some(f), None) => vec![f.as_str()],
        (None, Some(s)) if !s.is_empty() => s.iter().map(String::as_str).collect(),
        _ => bail!("a value needs exactly one of `field` and `sum` (not empty)"),
    };
    let mut total = Some(0.0);
    for f in fields {
        let x = lookup(json, f, &spec.each).with_context(|| format!("field `{f}`"))?;
        total = match (total, x) {
            (Some(t), Some(x)) => Some(t + x),
            _ => None,
        };
    }
    Ok(total)
}

/// Computes one value over its files.
fn compute(base: &Path, spec: &ValueSpec) -> Result<Computed> {
    let files = matching_files(base, &spec.files)?;
    let mut numbers = Vec::new();
    let mut nulls = 0;
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let json: Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", f.display()))?;
        match per_file(spec, &json).with_context(|| format!("in {}", f.display()))? {
            Some(x) => numbers.push(x),
            None => nulls += 1,
        }
    }
    let names = files.iter().map(|f| f.display().to_string()).collect();
    if nulls > 0 {
        return match (&spec.missing, numbers.is_empty()) {
            (Some(text), true) => Ok(Computed {
                number: None,
                text: text.clone(),
                stat: spec.stat,
                files: names,
            }),
            (Some(_), false) => bail!("{}: null in some files, not in others", spec.files),
            (None, _) => bail!(
                "{}: the field is null and no `missing` text is given",
                spec.files
            ),
        };
    }
    let scaled = statistic(numbers, spec.stat) * spec.scale;
    let number = spec.numerator.map_or(scaled, |k| k / scaled);
    let digits = format!("{number:.*}", spec.digits);
    Ok(Computed {
        number: Some(number),
        text: spec.format.replacen("{}", &digits, 1),
        stat: spec.stat,
        files: names,
    })
}

/// `template` with each `{i}` replaced by the `i`-th value's text; `used[i]` set for each.
fn fill(template: &str, values: &[Computed], used: &mut [bool]) -> Result<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .with_context(|| format!("unclosed `{{` in {template:?}"))?;
        let index = &rest[open + 1..open + close];
        let i: usize = index
            .parse()
            .with_context(|| format!("`{{{index}}}` in {template:?} is not a value's index"))?;
        let v = values.get(i).with_context(|| {
            format!("{template:?} uses value {i}; the row has {}", values.len())
        })?;
        out.push_str(&v.text);
        used[i] = true;
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Renders one row of a table with `columns` columns.
fn render_row(base: &Path, row: &Row, columns: usize) -> Result<RenderedRow> {
    if row.cells.len() != columns {
        bail!("{} cells where the header has {columns}", row.cells.len());
    }
    if row.value.is_empty() && row.note.is_none() {
        bail!("a row with no values needs a `note` saying why no JSON backs it");
    }
    let values = row
        .value
        .iter()
        .enumerate()
        .map(|(i, spec)| compute(base, spec).with_context(|| format!("value {i}")))
        .collect::<Result<Vec<_>>>()?;
    let mut used = vec![false; values.len()];
    let cells = row
        .cells
        .iter()
        .map(|c| fill(c, &values, &mut used))
        .collect::<Result<Vec<_>>>()?;
    if let Some(i) = used.iter().position(|u| !u) {
        bail!("value {i} is used by no cell");
    }
    Ok(RenderedRow {
        cells,
        values,
        source: row.source.clone(),
        note: row.note.clone(),
    })
}

/// One markdown table line of `cells`.
fn markdown_line(cells: &[String]) -> String {
    let mut line = String::from("|");
    for c in cells {
        if c.is_empty() {
            line.push_str(" |");
        } else {
            line.push_str(&format!(" {c} |"));
        }
    }
    line
}

/// Runs `doram bench report --figures MANIFEST [--table NAME]`: the table (the manifest's first
/// unless named) as markdown, or with `--json` its cells and the values behind them.
pub fn print(manifest: &Path, table: Option<&str>, json: bool) -> Result<()> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let m: Manifest =
        toml::from_str(&text).with_context(|| format!("{} is no manifest", manifest.display()))?;
    let t = match table {
        Some(name) => m
            .table
            .iter()
            .find(|t| t.name == name)
            .with_context(|| format!("{} has no table {name:?}", manifest.display()))?,
        None => m
            .table
            .first()
            .with_context(|| format!("{} has no table", manifest.display()))?,
    };
    let base = manifest.parent().unwrap_or(Path::new("."));
    let rows = t
        .row
        .iter()
        .enumerate()
        .map(|(i, r)| {
            render_row(base, r, t.header.len())
                .with_context(|| format!("table {:?}, row {}", t.name, i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    if json {
        return print_json(&rows);
    }
    println!("{}", markdown_line(&t.header));
    println!("|{}", "---|".repeat(t.header.len()));
    for r in &rows {
        println!("{}", markdown_line(&r.cells));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_index_arrays_and_pick_by_key() {
        let v = json!([{ "xs": [{ "metric": "online", "at": 18 }, { "metric": "total", "at": null }] }]);
        assert_eq!(
            lookup(&v, "0.xs.metric=online.at", &[]).unwrap(),
            Some(18.0)
        );
        assert_eq!(lookup(&v, "0.xs.1.at", &[]).unwrap(), None);
        assert!(lookup(&v, "0.xs.metric=other.at", &[]).is_err());
        assert!(lookup(&v, "0.ys", &[]).is_err());
        let n = json!([{ "bits": 16, "ms": 1 }, { "bits": 20, "p": "a", "ms": 2 }, { "bits": 20, "p": "b", "ms": 3 }]);
        assert_eq!(lookup(&n, "bits=20.ms", &[]).unwrap(), Some(2.0));
        assert_eq!(lookup(&n, "bits=20&p=b.ms", &[]).unwrap(), Some(3.0));
        assert!(lookup(&n, "bits=16&p=b.ms", &[]).is_err());
    }

    #[test]
    fn stars_combine_within_a_file() {
        let v = json!({ "parties": [
            { "parts": [{ "ms": 1 }, { "ms": 2 }] },
            { "parts": [{ "ms": 4 }, { "ms": 0.5 }] },
            { "parts": [{ "ms": 3 }] },
        ] });
        let path = "parties.*.parts.*.ms";
        assert_eq!(
            lookup(&v, path, &[Reduce::Max, Reduce::Sum]).unwrap(),
            Some(4.5)
        );
        assert_eq!(
            lookup(&v, path, &[Reduce::Min, Reduce::Sum]).unwrap(),
            Some(3.0)
        );
        assert_eq!(
            lookup(&v, path, &[Reduce::Sum, Reduce::Max]).unwrap(),
            Some(9.0)
        );
        assert!(lookup(&v, path, &[Reduce::Max]).is_err());
        assert!(lookup(&v, "parties.*.none", &[Reduce::Max]).is_err());
    }

    #[test]
    fn medians_are_upper_for_even_counts() {
        assert_eq!(statistic(vec![3.0, 1.0, 2.0], Stat::Median), 2.0);
        assert_eq!(statistic(vec![4.0, 1.0, 3.0, 2.0], Stat::Median), 3.0);
        assert_eq!(statistic(vec![4.0, 1.0, 3.0], Stat::Min), 1.0);
        assert_eq!(statistic(vec![4.0, 1.0, 3.0], Stat::Max), 4.0);
    }

    #[test]
    fn templates_take_values_by_index() {
        let v = |t: &str| Computed {
            number: None,
            text: t.into(),
            stat: Stat::Median,
            files: vec![],
        };
        let values = [v("1.5"), v("2")];
        let mut used = [false; 2];
        assert_eq!(
            fill("{1} / {0} ms", &values, &mut used).unwrap(),
            "2 / 1.5 ms"
        );
        assert_eq!(used, [true, true]);
        assert!(fill("{2}", &values, &mut used).is_err());
        assert!(fill("{x}", &values, &mut used).is_err());
    }

    #[test]
    fn lines_leave_empty_cells_empty() {
        let cells = ["".to_string(), "doram".into()];
        assert_eq!(markdown_line(&cells), "| | doram |");
    }
}
