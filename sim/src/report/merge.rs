//! `mcsim merge`: the results of a suite judged in shards (`check --shard i/n`, one CI
//! job each) combined into one set of rows, one report and one exit code.
//!
//! Each shard's JSON carries its rows, their counterexamples and metrics, and which shard
//! it was; the merge checks that every shard of the split is there exactly once and that
//! no scenario was judged twice, so a shard whose job died cannot turn the gate green by
//! its absence. JUnit files written by `check --junit` merge into one test suite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::report::Row;

/// Why shard results do not merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not a check report.
    #[error("{path} is not a JSON report of mcsim check: {detail}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// Shards of different splits, or one missing, or one given twice.
    #[error("{0}")]
    Shards(String),
    /// A scenario judged in two inputs.
    #[error("{scenario} is in both {first} and {second}")]
    Twice {
        /// The scenario file.
        scenario: String,
        /// One input.
        first: String,
        /// The other.
        second: String,
    },
}

/// Reads one shard's JSON rows.
pub fn read_rows(path: &Path) -> Result<Vec<Row>, MergeError> {
    let text = std::fs::read_to_string(path).map_err(|source| MergeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let rows: Vec<Row> = serde_json::from_str(&text).map_err(|e| MergeError::Format {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    Ok(rows
        .into_iter()
        .map(crate::report::kept::with_timeline)
        .collect())
}

/// The rows of every input in one list, sorted by file, after checking that the inputs
/// are the shards of one split, each once (or unsharded runs of distinct scenarios).
pub fn merge(inputs: &[(PathBuf, Vec<Row>)]) -> Result<Vec<Row>, MergeError> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut shards: BTreeMap<usize, String> = BTreeMap::new();
    let mut split: Option<usize> = None;
    let mut rows = Vec::new();
    for (path, input) in inputs {
        let name = path.display().to_string();
        let mut input_shard = None;
        for r in input {
            if let Some((i, n)) = r.shard {
                if split.is_some_and(|m| m != n) {
                    return Err(MergeError::Shards(format!(
                        "{name} is shard {i}/{n}, but other inputs split the suite in {}",
                        split.unwrap_or(0)
                    )));
                }
                split = Some(n);
                input_shard = Some(i);
            }
            if let Some(first) = seen.insert(r.file.clone(), name.clone()) {
                return Err(MergeError::Twice {
                    scenario: r.file.clone(),
                    first,
                    second: name,
                });
            }
            rows.push(r.clone());
        }
        if let Some(i) = input_shard
            && let Some(other) = shards.insert(i, name.clone())
        {
            return Err(MergeError::Shards(format!(
                "{other} and {name} are both shard {i}"
            )));
        }
    }
    if let Some(n) = split {
        let missing: Vec<String> = (1..=n)
            .filter(|i| !shards.contains_key(i))
            .map(|i| format!("{i}/{n}"))
            .collect();
        if !missing.is_empty() {
            return Err(MergeError::Shards(format!(
                "missing shard {}: every shard of the split must be merged",
                missing.join(", ")
            )));
        }
    }
    rows.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(rows)
}

/// JUnit reports written by `check --junit`, merged into one `<testsuite>` with the
/// totals recounted.
pub fn merge_junit(files: &[(PathBuf, String)]) -> Result<String, MergeError> {
    let mut cases = String::new();
    let (mut tests, mut failures) = (0usize, 0usize);
    for (path, text) in files {
        let bad = |detail: &str| MergeError::Format {
            path: path.clone(),
            detail: detail.to_string(),
        };
        let start = text
            .find("<testsuite")
            .ok_or_else(|| bad("no <testsuite>"))?;
        let open_end = text[start..]
            .find('>')
            .map(|i| start + i + 1)
            .ok_or_else(|| bad("unterminated <testsuite>"))?;
        let body = match text.rfind("</testsuite>") {
            Some(end) if end >= open_end => &text[open_end..end],
            _ if text[..open_end].ends_with("/>") => "",
            _ => return Err(bad("no </testsuite>")),
        };
        tests += body.matches("<testcase").count();
        failures += body.matches("<failure").count();
        cases.push_str(body.trim_matches('\n'));
        cases.push('\n');
    }
    Ok(super::junit::suite(
        "mcsim",
        tests,
        failures,
        cases.trim_start_matches('\n'),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(file: &str, shard: Option<(usize, usize)>) -> Row {
        let mut r = Row::new(Path::new(file));
        r.expected = "pass".into();
        r.got = "pass".into();
        r.shard = shard;
        r
    }

    #[test]
    fn every_shard_once_merges_in_file_order() {
        let a = (PathBuf::from("1.json"), vec![row("b.toml", Some((1, 2)))]);
        let b = (PathBuf::from("2.json"), vec![row("a.toml", Some((2, 2)))]);
        let rows = merge(&[a, b]).unwrap();
        let files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
        assert_eq!(files, ["a.toml", "b.toml"]);
    }

    #[test]
    fn a_missing_or_repeated_shard_is_an_error() {
        let a = (PathBuf::from("1.json"), vec![row("a.toml", Some((1, 3)))]);
        let b = (PathBuf::from("2.json"), vec![row("b.toml", Some((2, 3)))]);
        let e = merge(&[a.clone(), b]).unwrap_err().to_string();
        assert!(e.contains("missing shard 3/3"), "{e}");
        let again = (PathBuf::from("1b.json"), vec![row("c.toml", Some((1, 3)))]);
        let e = merge(&[a.clone(), again]).unwrap_err().to_string();
        assert!(e.contains("both shard 1"), "{e}");
        let e = merge(&[a.clone(), a]).unwrap_err().to_string();
        assert!(e.contains("a.toml is in both"), "{e}");
    }

    #[test]
    fn junit_suites_merge_with_recounted_totals() {
        let one = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"mcsim\" tests=\"1\" failures=\"0\">\n  <testcase classname=\"mcsim.a\" name=\"a\" time=\"0.1\"/>\n</testsuite>\n";
        let two = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"mcsim\" tests=\"1\" failures=\"1\">\n  <testcase classname=\"mcsim.b\" name=\"b\" time=\"0.1\">\n    <failure message=\"x\">y</failure>\n  </testcase>\n</testsuite>\n";
        let merged =
            merge_junit(&[("1.xml".into(), one.into()), ("2.xml".into(), two.into())]).unwrap();
        assert!(merged.contains("tests=\"2\" failures=\"1\""), "{merged}");
        assert_eq!(merged.matches("<testcase").count(), 2);
    }
}
