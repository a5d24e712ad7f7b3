//! Parameter sweeps: a `[sweep]` table lists values for fields of the same file, and every
//! combination runs as its own point.
//!
//! ```toml
//! [sweep]
//! params.rate_per_s = [1, 5, 20]
//! servers.phase_ms = [0, 250, 500, 750]
//! ```
//!
//! The base file is checked first, so its errors point at its own lines; each point is the
//! base with the swept fields replaced, and an error in a point names the sweep field and
//! its line.

use std::path::Path;

use crate::model::Family;
use crate::scenario::{Scenario, ScenarioError, line_col};

/// One swept field and its values.
#[derive(Debug, Clone)]
struct Axis {
    path: Vec<String>,
    values: Vec<toml::Value>,
}

fn axes(prefix: &mut Vec<String>, table: &toml::Table, out: &mut Vec<Axis>) -> Result<(), String> {
    for (k, v) in table {
        prefix.push(k.clone());
        match v {
            toml::Value::Table(t) => axes(prefix, t, out)?,
            toml::Value::Array(values) if !values.is_empty() => out.push(Axis {
                path: prefix.clone(),
                values: values.clone(),
            }),
            _ => return Err(prefix.join(".")),
        }
        prefix.pop();
    }
    Ok(())
}

fn set(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let (last, parents) = path.split_last().expect("sweep paths are not empty");
    let mut t = table;
    for p in parents {
        let entry = t
            .entry(p.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        t = entry.as_table_mut().expect("just made a table");
    }
    t.insert(last.clone(), value);
}

/// One field set over a scenario file: a dotted path and a TOML value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    pub path: Vec<String>,
    pub value: toml::Value,
}

impl Setting {
    /// Reads `a.b.c=value`; a value that does not read as TOML is a string.
    pub fn parse(text: &str) -> Result<Setting, String> {
        let (path, value) = text
            .split_once('=')
            .ok_or_else(|| format!("{text:?}: expected FIELD=VALUE, e.g. servers.count=3"))?;
        let path: Vec<String> = path.trim().split('.').map(str::to_string).collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(format!("{text:?}: empty field name"));
        }
        let value = value.trim();
        let value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        Ok(Setting { path, value })
    }

    /// Sets the field in a scenario file's table.
    pub fn apply(&self, doc: &mut toml::Table) {
        set(doc, &self.path, self.value.clone());
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = show(&self.value);
        // A string that would read back as another type is written quoted.
        let plain = Setting::parse(&format!("x={shown}")).map(|s| s.value);
        if plain.as_ref() == Ok(&self.value) {
            write!(f, "{}={shown}", self.path.join("."))
        } else {
            write!(f, "{}={}", self.path.join("."), self.value)
        }
    }
}

fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every point of a scenario file: the scenario itself when it has no `[sweep]`.
pub fn load_points(
    path: &Path,
    catalog: &[&'static dyn Family],
) -> Result<Vec<Scenario>, ScenarioError> {
    let source = super::read_source(path)?;
    let base = Scenario::parse(path, &source, catalog)?;
    let mut doc: toml::Table = toml::from_str(&source).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        field: None,
        message: e.to_string(),
    })?;
    let Some(toml::Value::Table(sweep)) = doc.remove("sweep") else {
        return Ok(vec![base]);
    };
    let sweep_line = source
        .lines()
        .position(|l| l.trim() == "[sweep]")
        .map_or(0, |i| i + 1);
    let locate = |field: &str| -> (usize, usize) {
        let last = field.rsplit('.').next().unwrap_or(field);
        source
            .find(&format!("{field} ="))
            .or_else(|| source.find(&format!("{last} =")))
            .map(|off| line_col(&source, off))
            .unwrap_or((sweep_line, 1))
    };
    let mut list = Vec::new();
    axes(&mut Vec::new(), &sweep, &mut list).map_err(|field| {
        let (line, column) = locate(&field);
        ScenarioError {
            file: path.to_path_buf(),
            line,
            column,
            field: Some(format!("sweep.{field}")),
            message: "a swept field needs a non-empty list of values".into(),
        }
    })?;
    let mut points: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    for (a, axis) in list.iter().enumerate() {
        points = points
            .into_iter()
            .flat_map(|p| {
                (0..axis.values.len()).map(move |i| {
                    let mut q = p.clone();
                    q.push((a, i));
                    q
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for point in points {
        let mut d = doc.clone();
        let mut label = Vec::new();
        for &(a, i) in &point {
            let axis = &list[a];
            set(&mut d, &axis.path, axis.values[i].clone());
            let short = axis.path.last().cloned().unwrap_or_default();
            label.push(format!("{short}={}", show(&axis.values[i])));
        }
        let text = toml::to_string(&d).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: sweep_line,
            column: 1,
            field: Some("sweep".into()),
            message: e.to_string(),
        })?;
        let mut s = Scenario::parse(path, &text, catalog).map_err(|e| {
            let field = e.field.clone().unwrap_or_default();
            let (line, column) = locate(&field);
            ScenarioError {
                file: path.to_path_buf(),
                line,
                column,
                field: Some(format!("sweep.{field}")),
                message: format!("at point [{}]: {}", label.join(", "), e.message),
            }
        })?;
        s.name = format!("{}[{}]", base.name, label.join(","));
        s.point = label;
        s.settings = point
            .iter()
            .map(|&(a, i)| Setting {
                path: list[a].path.clone(),
                value: list[a].values[i].clone(),
            })
            .collect();
        out.push(s);
    }
    Ok(out)
}
