//! A field that could not be read, before the file it came from is known, and the helpers
//! that point at it: the nearest known name, the key on a line of TOML, a line and column.
//! Parameters are read here, in the model API; scenario files add their path and line.

use std::ops::Range;

/// A problem found while reading a value, before the file is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's dotted path.
    pub field: String,
    /// Where its value is in the file, if known.
    pub span: Option<Range<usize>>,
    /// What is wrong.
    pub message: String,
}

impl FieldError {
    /// An error about `field` at `span`.
    pub fn new(
        field: impl Into<String>,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> FieldError {
        FieldError {
            field: field.into(),
            span,
            message: message.into(),
        }
    }
}

/// `; did you mean "x"?` when one of `known` is a few edits from `name`, else nothing.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (name.chars().count() / 3).max(2);
    known
        .into_iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| format!("; did you mean {k:?}?"))
        .unwrap_or_default()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Line and column (1-based) of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

/// The key written on the line holding `offset` (`key = value`), with its table header.
pub fn key_at(source: &str, offset: usize) -> Option<String> {
    let offset = offset.min(source.len());
    let line_start = source[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = source[line_start..].lines().next()?;
    let key = line.split_once('=')?.0.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let table = source[..line_start]
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')))
        .map(|t| t.trim().to_string());
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    })
}
