//! Input files of the programs, parsed and bounded with typed errors ([`InputError`]):
//!
//! * sorted arrays ([`parse_sorted`]): one unsigned 64-bit integer per line, or the first
//!   column of a CSV file (an optional non-numeric header line is skipped); must be
//!   non-decreasing; search keys ([`parse_keys`]) the same, in any order;
//! * edge lists ([`parse_edges`], [`vertices_of`]): `u,v` or `u,v,w` per line (the weight
//!   required for Dijkstra, optional otherwise), vertex ids in `0..V`, weights integers in
//!   `0..=`[`MAX_WEIGHT`], or decimals in fixed point ([`parse_edges_fixed_point`]);
//! * preference lists ([`parse_prefs`]): JSON `{"proposers": [[...], ...], "acceptors":
//!   [[...], ...]}`, `k` lists per side, each a permutation of `0..k`.
//!
//! Blank lines and lines starting with `#` are ignored in the text formats.

use serde::Deserialize;

use crate::error::InputError;

/// The largest edge weight: weights are below 2^32 so that path lengths of up to 2^20 edges
/// stay below the programs' sentinel.
pub const MAX_WEIGHT: u64 = u32::MAX as u64;

/// The largest number of preference lists per side.
pub const MAX_PREFS: usize = 1 << 12;

/// One directed edge `from → to` with weight `weight` (1 for unweighted graphs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    /// Tail.
    pub from: u64,
    /// Head.
    pub to: u64,
    /// Weight.
    pub weight: u64,
}

impl Edge {
    /// The edge `from → to` with weight `weight`.
    pub const fn new(from: u64, to: u64, weight: u64) -> Edge {
        Edge { from, to, weight }
    }
}

/// Preference lists of a stable-matching instance: `proposers[p]` lists acceptors from most to
/// least preferred, `acceptors[a]` lists proposers likewise.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prefs {
    /// The proposers' lists.
    pub proposers: Vec<Vec<u64>>,
    /// The acceptors' lists.
    pub acceptors: Vec<Vec<u64>>,
}

impl Prefs {
    /// Number of proposers (= acceptors).
    pub fn k(&self) -> usize {
        self.proposers.len()
    }

    /// Checks that both sides have `k` lists, each a permutation of `0..k`.
    ///
    /// # Errors
    /// [`InputError::NotAPermutation`] or [`InputError::TooLarge`].
    pub fn validate(&self) -> Result<(), InputError> {
        let k = self.proposers.len();
        if k > MAX_PREFS {
            return Err(InputError::TooLarge {
                what: "the number of proposers",
                got: k as u64,
                max: MAX_PREFS as u64,
            });
        }
        if self.acceptors.len() != k {
            return Err(InputError::NotAPermutation {
                side: "acceptors",
                index: self.acceptors.len(),
                reason: format!("{} acceptor lists for {k} proposers", self.acceptors.len()),
            });
        }
        for (side, lists) in [("proposer", &self.proposers), ("acceptor", &self.acceptors)] {
            for (index, list) in lists.iter().enumerate() {
                check_permutation(list, k).map_err(|reason| InputError::NotAPermutation {
                    side,
                    index,
                    reason,
                })?;
            }
        }
        Ok(())
    }
}

fn check_permutation(list: &[u64], k: usize) -> Result<(), String> {
    if list.len() != k {
        return Err(format!("{} entries, expected {k}", list.len()));
    }
    let mut seen = vec![false; k];
    for &x in list {
        let slot = usize::try_from(x)
            .ok()
            .and_then(|i| seen.get_mut(i))
            .ok_or_else(|| format!("{x} is not in 0..{k}"))?;
        if *slot {
            return Err(format!("{x} appears twice"));
        }
        *slot = true;
    }
    Ok(())
}

/// Non-empty, non-comment lines with their 1-based numbers.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn integer(line: usize, field: &str, max: u64) -> Result<u64, InputError> {
    let f = field.trim();
    match f.parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(InputError::NotAnInteger {
            line,
            field: f.to_string(),
            max,
        }),
    }
}

/// The integers of the first column, with their line numbers: one integer per line or the
/// first CSV column; a first line whose first field is not a number is a header.
fn first_column(text: &str) -> impl Iterator<Item = Result<(usize, u64), InputError>> + '_ {
    lines(text).enumerate().filter_map(|(k, (line, l))| {
        let first = l.split(',').next().unwrap_or("").trim();
        let numeric = first.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
        if k == 0 && !numeric {
            return None; // a header
        }
        Some(integer(line, first, u64::MAX).map(|v| (line, v)))
    })
}

/// Parses a sorted array: one integer per line or the first CSV column; a first line whose
/// first field is not a number is a header.
///
/// # Errors
/// [`InputError::NotAnInteger`], [`InputError::Unsorted`].
pub fn parse_sorted(text: &str) -> Result<Vec<u64>, InputError> {
    let mut out: Vec<u64> = Vec::new();
    for item in first_column(text) {
        let (line, v) = item?;
        if let Some(&previous) = out.last()
            && v < previous
        {
            return Err(InputError::Unsorted {
                line,
                value: v,
                previous,
            });
        }
        out.push(v);
    }
    Ok(out)
}

/// Parses search keys, in the format of [`parse_sorted`] but in any order: one unsigned
/// 64-bit integer per line or the first CSV column, an optional header line, blank lines and
/// `#` comments ignored. Stops at the first key beyond `max` keys.
///
/// # Errors
/// [`InputError::NotAnInteger`]; [`InputError::TooLarge`] for more than `max` keys.
pub fn parse_keys(text: &str, max: u64) -> Result<Vec<u64>, InputError> {
    let mut out: Vec<u64> = Vec::new();
    for item in first_column(text) {
        let (_, v) = item?;
        if out.len() as u64 >= max {
            // Count the rest for the message, without keeping them.
            let got = out.len() as u64 + 1 + first_column(text).skip(out.len() + 1).count() as u64;
            return Err(InputError::TooLarge {
                what: "the number of keys",
                got,
                max,
            });
        }
        out.push(v);
    }
    Ok(out)
}

/// The fields of an edge line: comma-separated if the line has a comma, else separated by
/// spaces or tabs; a networkx attribute dictionary at the end (`{}` or `{'weight': 3}`, what
/// `networkx.write_edgelist` writes) counts as one field.
fn edge_fields(l: &str) -> Vec<&str> {
    if l.contains(',') && !l.contains('{') {
        return l.split(',').map(str::trim).collect();
    }
    match l.find('{') {
        Some(at) => {
            let mut f: Vec<&str> = l[..at].split_whitespace().collect();
            f.push(l[at..].trim());
            f
        }
        None => l.split_whitespace().collect(),
    }
}

/// The weight in a networkx attribute dictionary: `Some(None)` for `{}` (no weight),
/// `Some(Some(text))` for `{'weight': text}`, `None` if the field is not a dictionary.
fn dict_weight(field: &str) -> Option<Option<&str>> {
    let inner = field.strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.is_empty() {
        return Some(None);
    }
    let (key, value) = inner.split_once(':')?;
    let key = key.trim().trim_matches(|c| c == '\'' || c == '"');
    (key == "weight").then_some(Some(value.trim()))
}

/// Parses an edge list over `vertices` vertices: one edge `u v` or `u v w` per line, fields
/// separated by commas, spaces or tabs (a networkx `write_edgelist` file works as written,
/// with or without its `{'weight': w}` dictionaries). Weights are integers in
/// `0..=`[`MAX_WEIGHT`]; with `weighted` every line must have one, otherwise a missing weight
/// is 1. A first line that does not start with a number is a header; lines starting with `#`
/// are comments. Edges are directed; list both directions for an undirected graph.
///
/// # Errors
/// [`InputError::FieldCount`], [`InputError::NotAnInteger`], [`InputError::NegativeWeight`],
/// [`InputError::VertexOutOfRange`] — each naming the line.
pub fn parse_edges(text: &str, vertices: u64, weighted: bool) -> Result<Vec<Edge>, InputError> {
    parse_edges_fixed_point(text, vertices, weighted, 0)
}

/// [`parse_edges`] with weights in fixed point: a weight may have up to `decimals` decimal
/// places (`2.5`, `0.125`) and is stored as the integer `w · 10^decimals`, which must not
/// exceed [`MAX_WEIGHT`]. Distances computed over these weights are in the same units: divide
/// by `10^decimals` ([`format_fixed_point`]). `decimals` is at most [`MAX_DECIMALS`].
///
/// # Errors
/// As [`parse_edges`], and [`InputError::TooManyDecimals`] for a weight with more decimal
/// places than allowed.
pub fn parse_edges_fixed_point(
    text: &str,
    vertices: u64,
    weighted: bool,
    decimals: u32,
) -> Result<Vec<Edge>, InputError> {
    let is_header =
        |first: &str| !first.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    let vertex = |line: usize, f: &str| -> Result<u64, InputError> {
        let v = integer(line, f, u64::MAX)?;
        if v >= vertices {
            return Err(InputError::VertexOutOfRange {
                line,
                vertex: v,
                vertices,
            });
        }
        Ok(v)
    };
    parse_edges_with(text, weighted, decimals, is_header, vertex)
}

/// [`parse_edges_fixed_point`] over named vertices: the vertex fields are names from `names`
/// (their ids are their positions there). A first line whose first field is not a name is a
/// header.
///
/// # Errors
/// As [`parse_edges_fixed_point`], with [`InputError::UnknownVertex`] for a name that is not
/// in `names`.
pub fn parse_named_edges(
    text: &str,
    names: &VertexNames,
    weighted: bool,
    decimals: u32,
) -> Result<Vec<Edge>, InputError> {
    let vertex = |line: usize, f: &str| {
        names.id(f).ok_or_else(|| InputError::UnknownVertex {
            line,
            name: f.to_string(),
        })
    };
    parse_edges_with(text, weighted, decimals, |f| names.id(f).is_none(), vertex)
}

/// The edge-list parser behind [`parse_edges_fixed_point`] and [`parse_named_edges`]:
/// `is_header` decides on the first line's first field, `vertex` reads a vertex field.
fn parse_edges_with(
    text: &str,
    weighted: bool,
    decimals: u32,
    is_header: impl Fn(&str) -> bool,
    vertex: impl Fn(usize, &str) -> Result<u64, InputError>,
) -> Result<Vec<Edge>, InputError> {
    if decimals > MAX_DECIMALS {
        return Err(InputError::TooLarge {
            what: "the number of decimal places of weights",
            got: u64::from(decimals),
            max: u64::from(MAX_DECIMALS),
        });
    }
    let mut out = Vec::new();
    for (k, (line, l)) in lines(text).enumerate() {
        let fields = edge_fields(l);
        if k == 0 && fields.first().is_some_and(|f| is_header(f)) {
            continue; // a header
        }
        let weight_field = match fields.get(2).map(|f| (f, dict_weight(f))) {
            Some((_, Some(w))) => w,
            Some((f, None)) => Some(*f),
            None => None,
        };
        let ok = fields.len() == 3 || (fields.len() == 2 && !weighted);
        if !ok || (weighted && weight_field.is_none()) {
            return Err(InputError::FieldCount {
                line,
                expected: if weighted { "3" } else { "2 or 3" },
                got: fields.len(),
            });
        }
        let from = vertex(line, fields[0])?;
        let to = vertex(line, fields[1])?;
        let weight = match weight_field {
            Some(w) if w.starts_with('-') => {
                return Err(InputError::NegativeWeight {
                    line,
                    field: w.to_string(),
                });
            }
            Some(w) => fixed_point(line, w, decimals)?,
            None => 10u64.pow(decimals),
        };
        out.push(Edge { from, to, weight });
    }
    Ok(out)
}

/// The most vertex names a name list may hold.
pub const MAX_NAMES: usize = 1 << 20;

/// Vertex names, public like the vertex count: one per line of a names file, the vertex ids
/// their positions (from 0). Names are non-empty and hold no comma, space, tab or `#`; blank
/// lines and `#` comments are skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexNames {
    names: Vec<String>,
    ids: std::collections::HashMap<String, u64>,
}

impl VertexNames {
    /// Reads a names file.
    ///
    /// # Errors
    /// [`InputError::BadName`] for a name with a separator or one given twice;
    /// [`InputError::TooLarge`] beyond [`MAX_NAMES`] names.
    pub fn parse(text: &str) -> Result<VertexNames, InputError> {
        let mut names = Vec::new();
        let mut ids = std::collections::HashMap::new();
        for (line, l) in lines(text) {
            let name = l.trim();
            if name.contains([',', ' ', '\t', '{', '}']) {
                return Err(InputError::BadName {
                    line,
                    name: name.to_string(),
                    reason: "names hold no commas, spaces, tabs or braces",
                });
            }
            if names.len() == MAX_NAMES {
                return Err(InputError::TooLarge {
                    what: "the number of vertex names",
                    got: lines(text).count() as u64,
                    max: MAX_NAMES as u64,
                });
            }
            if ids.insert(name.to_string(), names.len() as u64).is_some() {
                return Err(InputError::BadName {
                    line,
                    name: name.to_string(),
                    reason: "the name is given twice",
                });
            }
            names.push(name.to_string());
        }
        Ok(VertexNames { names, ids })
    }

    /// The number of vertices.
    pub fn len(&self) -> u64 {
        self.names.len() as u64
    }

    /// Whether there are no names.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The id of `name`.
    pub fn id(&self, name: &str) -> Option<u64> {
        self.ids.get(name.trim()).copied()
    }

    /// The names in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// The most decimal places a fixed-point weight may have ([`parse_edges_fixed_point`]).
pub const MAX_DECIMALS: u32 = 9;

/// A non-negative decimal weight with at most `decimals` decimal places, as the integer
/// `w · 10^decimals` (at most [`MAX_WEIGHT`]).
fn fixed_point(line: usize, field: &str, decimals: u32) -> Result<u64, InputError> {
    let f = field.trim();
    let unsigned = f.strip_prefix('+').unwrap_or(f);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return Err(InputError::NotAnInteger {
            line,
            field: f.to_string(),
            max: MAX_WEIGHT,
        });
    }
    let places = frac.trim_end_matches('0').len() as u32;
    if places > decimals {
        return Err(InputError::TooManyDecimals {
            line,
            field: f.to_string(),
            places,
            allowed: decimals,
        });
    }
    let too_large = || InputError::WeightTooLarge {
        line,
        field: f.to_string(),
        decimals,
    };
    let scale = 10u64.pow(decimals);
    let int_part: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_large())?
    };
    let frac_digits = &frac[..(places as usize)];
    let frac_part: u64 = if frac_digits.is_empty() {
        0
    } else {
        frac_digits.parse::<u64>().map_err(|_| too_large())? * 10u64.pow(decimals - places)
    };
    let w = int_part
        .checked_mul(scale)
        .and_then(|x| x.checked_add(frac_part))
        .filter(|&w| w <= MAX_WEIGHT)
        .ok_or_else(too_large)?;
    Ok(w)
}

/// A fixed-point value `v / 10^decimals` as a decimal string with exactly `decimals` places
/// (`1250, 2` → `"12.50"`).
pub fn format_fixed_point(v: u64, decimals: u32) -> String {
    if decimals == 0 {
        return v.to_string();
    }
    let scale = 10u64.pow(decimals);
    format!(
        "{}.{:0width$}",
        v / scale,
        v % scale,
        width = decimals as usize
    )
}

/// The smallest vertex count that holds every edge: one more than the largest id (0 for no
/// edges), for edge files that do not state V.
pub fn vertices_of(edges: &[Edge]) -> u64 {
    edges
        .iter()
        .map(|e| e.from.max(e.to).saturating_add(1))
        .max()
        .unwrap_or(0)
}

/// Parses and validates preference lists.
///
/// # Errors
/// [`InputError::Json`] for malformed JSON or a wrong shape; as [`Prefs::validate`].
pub fn parse_prefs(json: &str) -> Result<Prefs, InputError> {
    let p: Prefs = serde_json::from_str(json).map_err(|e| InputError::Json(e.to_string()))?;
    p.validate()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_lists_in_the_formats_users_have() {
        let want = vec![Edge::new(0, 1, 4), Edge::new(1, 2, 1), Edge::new(2, 0, 7)];
        // Commas, spaces, tabs, a header, networkx's write_edgelist with and without data.
        for text in [
            "0,1,4\n1,2,1\n2,0,7\n",
            "from,to,weight\n0, 1, 4\n1,2,1\n2,0,7\n",
            "0 1 4\n1  2 1\n2\t0\t7\n",
            "source target weight\n0 1 4\n1 2 1\n2 0 7\n",
            "0 1 {'weight': 4}\n1 2 {'weight': 1}\n2 0 {\"weight\": 7}\n",
        ] {
            assert_eq!(parse_edges(text, 3, true).as_ref(), Ok(&want), "{text:?}");
        }
        let unit = vec![Edge::new(0, 1, 1), Edge::new(1, 2, 1)];
        assert_eq!(parse_edges("0 1 {}\n1 2 {}\n", 3, false), Ok(unit.clone()));
        assert_eq!(parse_edges("0 1\n1 2\n", 3, false), Ok(unit));
        // A weighted graph needs a weight on every line, whatever the separator.
        assert!(matches!(
            parse_edges("0 1 4\n1 2\n", 3, true),
            Err(InputError::FieldCount {
                line: 2,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            parse_edges("0 1 {}\n", 3, true),
            Err(InputError::FieldCount { line: 1, .. })
        ));
        // Errors name the line (the header counts) and say how to fix the input.
        let e = parse_edges("u v w\n0 1 2.5\n", 3, true).unwrap_err();
        assert!(matches!(
            e,
            InputError::TooManyDecimals {
                line: 2,
                places: 1,
                allowed: 0,
                ..
            }
        ));
        assert!(e.to_string().contains("allow more decimal places"), "{e}");
        let e = parse_edges("0 1 x\n", 3, true).unwrap_err();
        assert!(matches!(e, InputError::NotAnInteger { line: 1, .. }));
        let e = parse_edges("0;1;2\n", 3, true).unwrap_err();
        assert!(e.to_string().contains("commas, spaces or tabs"), "{e}");
        assert!(matches!(
            parse_edges("0 1 -3\n", 3, true),
            Err(InputError::NegativeWeight { line: 1, .. })
        ));
        assert!(matches!(
            parse_edges("0 5 3\n", 3, true),
            Err(InputError::VertexOutOfRange {
                line: 1,
                vertex: 5,
                ..
            })
        ));
    }

    #[test]
    fn named_vertices() {
        let names = VertexNames::parse("# people\nalice\nbob\n\ncarol\n").unwrap();
        assert_eq!(names.len(), 3);
        assert_eq!((names.id("bob"), names.id("dave")), (Some(1), None));
        let g = "source target weight\nalice bob 2\nbob,carol,1.5\ncarol alice {'weight': 3}\n";
        assert_eq!(
            parse_named_edges(g, &names, true, 1),
            Ok(vec![
                Edge::new(0, 1, 20),
                Edge::new(1, 2, 15),
                Edge::new(2, 0, 30)
            ])
        );
        assert_eq!(
            parse_named_edges("alice carol\n", &names, false, 0),
            Ok(vec![Edge::new(0, 2, 1)]),
            "a first line of names is data, not a header"
        );
        let e = parse_named_edges("alice bob 1\nbob dave 1\n", &names, true, 0).unwrap_err();
        assert!(
            matches!(e, InputError::UnknownVertex { line: 2, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("\"dave\""), "{e}");
        assert!(matches!(
            VertexNames::parse("a\nb\na\n"),
            Err(InputError::BadName { line: 3, .. })
        ));
        assert!(matches!(
            VertexNames::parse("a b\n"),
            Err(InputError::BadName { line: 1, .. })
        ));
    }

    #[test]
    fn fixed_point_weights() {
        let parse = |t: &str, d| parse_edges_fixed_point(t, 3, true, d);
        let w = |t: &str, d| parse(t, d).map(|e| e[0].weight);
        assert_eq!(w("0 1 2.5", 2), Ok(250));
        assert_eq!(w("0 1 .125", 3), Ok(125));
        assert_eq!(w("0 1 7", 2), Ok(700));
        assert_eq!(w("0 1 7.", 1), Ok(70));
        assert_eq!(
            w("0 1 +1.50", 1),
            Ok(15),
            "trailing zeros do not count as places"
        );
        assert_eq!(
            w("0 1 {'weight': 0.5}", 1),
            Ok(5),
            "networkx dictionaries too"
        );
        assert!(matches!(
            parse("0 1 1.255", 2),
            Err(InputError::TooManyDecimals {
                places: 3,
                allowed: 2,
                ..
            })
        ));
        // 2^32 − 1 is the largest weight after scaling.
        assert_eq!(w("0 1 42949672.95", 2), Ok(MAX_WEIGHT));
        assert!(matches!(
            parse("0 1 42949672.96", 2),
            Err(InputError::WeightTooLarge { line: 1, .. })
        ));
        assert!(matches!(
            parse("0 1 99999999999999999999999", 0),
            Err(InputError::WeightTooLarge { .. })
        ));
        for bad in ["0 1 .", "0 1 1.2.3", "0 1 1e3", "0 1 -0.5"] {
            assert!(parse(bad, 2).is_err(), "{bad}");
        }
        assert!(matches!(
            parse("0 1 1", MAX_DECIMALS + 1),
            Err(InputError::TooLarge { .. })
        ));
        // Unweighted lines (BFS) count 1 in the scaled unit.
        assert_eq!(
            parse_edges_fixed_point("0 1", 3, false, 2).map(|e| e[0].weight),
            Ok(100)
        );
        assert_eq!(format_fixed_point(1250, 2), "12.50");
        assert_eq!(format_fixed_point(5, 3), "0.005");
        assert_eq!(format_fixed_point(7, 0), "7");
    }

    #[test]
    fn sorted_files() {
        assert_eq!(parse_sorted("1\n2\n2\n\n# c\n10\n"), Ok(vec![1, 2, 2, 10]));
        assert_eq!(parse_sorted("key,name\n3,a\n4,b\n"), Ok(vec![3, 4]));
        assert_eq!(parse_sorted(""), Ok(vec![]));
        assert_eq!(parse_sorted("18446744073709551615\n"), Ok(vec![u64::MAX]));
        assert!(matches!(
            parse_sorted("1\n3\n2\n"),
            Err(InputError::Unsorted {
                line: 3,
                value: 2,
                previous: 3
            })
        ));
        assert!(matches!(
            parse_sorted("1\nx\n"),
            Err(InputError::NotAnInteger { line: 2, .. })
        ));
        assert!(matches!(
            parse_sorted("1\n-2\n"),
            Err(InputError::NotAnInteger { line: 2, .. })
        ));
        assert!(matches!(
            parse_sorted("18446744073709551616\n"),
            Err(InputError::NotAnInteger { line: 1, .. })
        ));
        assert!(matches!(
            parse_sorted("1.5\n"),
            Err(InputError::NotAnInteger { line: 1, .. })
        ));
    }

    #[test]
    fn key_files() {
        assert_eq!(parse_keys("key\n9\n2\n\n# c\n2\n", 10), Ok(vec![9, 2, 2]));
        assert_eq!(parse_keys("5,x\n1,y\n", 10), Ok(vec![5, 1]));
        assert_eq!(parse_keys("", 10), Ok(vec![]));
        assert!(matches!(
            parse_keys("1\n-2\n", 10),
            Err(InputError::NotAnInteger { line: 2, .. })
        ));
        assert!(matches!(
            parse_keys("1\n2\n3\n4\n", 3),
            Err(InputError::TooLarge { got: 4, max: 3, .. })
        ));
    }

    #[test]
    fn edge_files() {
        let e = parse_edges("0,1\n1, 2\n", 3, false).unwrap();
        assert_eq!(
            e[1],
            Edge {
                from: 1,
                to: 2,
                weight: 1
            }
        );
        let w = parse_edges("0,1,7\n# x\n2,0,0\n", 3, true).unwrap();
        assert_eq!(
            w,
            vec![
                Edge {
                    from: 0,
                    to: 1,
                    weight: 7
                },
                Edge {
                    from: 2,
                    to: 0,
                    weight: 0
                }
            ]
        );
        assert!(matches!(
            parse_edges("0,3\n", 3, false),
            Err(InputError::VertexOutOfRange {
                line: 1,
                vertex: 3,
                vertices: 3
            })
        ));
        assert!(matches!(
            parse_edges("0,1,-4\n", 3, true),
            Err(InputError::NegativeWeight { line: 1, .. })
        ));
        assert!(matches!(
            parse_edges("0,1,2.5\n", 3, true),
            Err(InputError::TooManyDecimals { line: 1, .. })
        ));
        assert!(matches!(
            parse_edges("0,1,4294967296\n", 3, true),
            Err(InputError::WeightTooLarge { line: 1, .. })
        ));
        assert!(matches!(
            parse_edges("0,1\n", 3, true),
            Err(InputError::FieldCount {
                line: 1,
                got: 2,
                ..
            })
        ));
        assert_eq!(
            parse_edges("0,1,5\n2,1\n", 3, false),
            Ok(vec![
                Edge {
                    from: 0,
                    to: 1,
                    weight: 5
                },
                Edge {
                    from: 2,
                    to: 1,
                    weight: 1
                }
            ])
        );
        assert!(matches!(
            parse_edges("0,1,1,1\n", 3, false),
            Err(InputError::FieldCount {
                line: 1,
                got: 4,
                ..
            })
        ));
        assert!(matches!(
            parse_edges("0,1,-1\n", 3, false),
            Err(InputError::NegativeWeight { line: 1, .. })
        ));
        assert_eq!(
            vertices_of(&parse_edges("0,4\n2,1\n", 9, false).unwrap()),
            5
        );
        assert_eq!(vertices_of(&[]), 0);
    }

    #[test]
    fn preference_files() {
        let ok = r#"{"proposers": [[1,0],[0,1]], "acceptors": [[0,1],[1,0]]}"#;
        assert_eq!(parse_prefs(ok).unwrap().k(), 2);
        let empty = r#"{"proposers": [], "acceptors": []}"#;
        assert_eq!(parse_prefs(empty).unwrap().k(), 0);
        for bad in [
            r#"{"proposers": [[1,1],[0,1]], "acceptors": [[0,1],[1,0]]}"#,
            r#"{"proposers": [[1],[0,1]], "acceptors": [[0,1],[1,0]]}"#,
            r#"{"proposers": [[1,2],[0,1]], "acceptors": [[0,1],[1,0]]}"#,
            r#"{"proposers": [[1,0],[0,1]], "acceptors": [[0,1]]}"#,
        ] {
            assert!(
                matches!(parse_prefs(bad), Err(InputError::NotAPermutation { .. })),
                "{bad}"
            );
        }
        for bad in [
            r#"{"proposers": [[1,0]]}"#,
            r#"{"proposers": [[-1]], "acceptors": [[0]]}"#,
            r#"{"proposers": [[0]], "acceptors": [[0]], "extra": 1}"#,
            "not json",
        ] {
            assert!(
                matches!(parse_prefs(bad), Err(InputError::Json(_))),
                "{bad}"
            );
        }
    }
}
