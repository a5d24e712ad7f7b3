//! The suite summary: one [`Row`] per scenario file, as a table, JSON and JUnit.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::histogram::Histogram;
use crate::invariant::Verdict;
use crate::report::ReplayLine;
use crate::report::junit;
use crate::report::timeline::Timeline;
use crate::run::{Finding, RunReport};
use crate::scenario::{Scenario, StrategyKind};

/// One row of the suite summary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Scenario name.
    pub scenario: String,
    /// Its file.
    pub file: String,
    /// Expected verdict.
    pub expected: String,
    /// Verdict found.
    pub got: String,
    /// Executions run.
    pub executions: u64,
    /// Calls executed.
    pub calls: u64,
    /// The key numbers: violation numbers, or metric means.
    pub numbers: String,
    /// Wall time in milliseconds.
    pub millis: u64,
    /// The replay command of the failure found, if any (the first of `replays`).
    pub replay: Option<String>,
    /// Every command that replays the failure found, with the trace hash each prints.
    pub replays: Vec<ReplayLine>,
    /// The failure report, if any.
    pub detail: Option<String>,
    /// An error that kept the scenario from running.
    pub error: Option<String>,
    /// For a sweep, one entry per point.
    pub points: Vec<PointRow>,
    /// With `check --exhaustive`: what the search covered ("every schedule with at most
    /// 2 preemptions and at most 1 fault, 3 clients"); `None` for a sampled verdict.
    pub exhaustive: Option<String>,
    /// The counterexample of the failure found, as the HTML timeline draws it (in the
    /// JSON report, in its own file: `counterexample`).
    #[serde(default)]
    pub timeline: Option<Timeline>,
    /// The file holding the counterexample's timeline, beside the JSON report (whose
    /// `detail` is then a screenful naming the whole report's file).
    #[serde(default)]
    pub counterexample: Option<String>,
    /// Every metric over the executions, with its histogram (for a sweep: over all
    /// points).
    #[serde(default)]
    pub metrics: BTreeMap<String, MetricRow>,
    /// The shard of the suite this row was judged in (`--shard 2/4`), if any.
    #[serde(default)]
    pub shard: Option<(usize, usize)>,
    /// Every failing verdict its executions showed (each invariant violated, not only
    /// the first of an execution), with how many executions showed it.
    #[serde(default)]
    pub found: BTreeMap<String, u64>,
    /// Per fault kind: injections, and how many bit.
    #[serde(default)]
    pub faults: BTreeMap<String, crate::run::FaultFigures>,
    /// Per invariant: the times it was evaluated.
    #[serde(default)]
    pub checks: BTreeMap<String, u64>,
    /// Per `sometimes` condition the scenario asks for: the executions that met it.
    #[serde(default)]
    pub dangers: BTreeMap<String, u64>,
    /// What the run covered, in one line: faults injected and bitten, invariants
    /// evaluated, dangers met.
    #[serde(default)]
    pub coverage: String,
}

/// A metric over a scenario's executions.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MetricRow {
    /// Executions that recorded it.
    pub count: u64,
    /// The mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// How the values spread.
    pub histogram: Histogram,
}

impl MetricRow {
    /// Adds the values of `other` (another point or shard of the same metric).
    pub fn merge(&mut self, other: &MetricRow) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        let count = self.count + other.count;
        self.mean =
            (self.mean * self.count as f64 + other.mean * other.count as f64) / count as f64;
        self.count = count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.histogram.merge(&other.histogram);
    }
}

impl Row {
    /// An empty row for the scenario file `file`.
    pub fn new(file: &std::path::Path) -> Row {
        Row {
            scenario: file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            file: file.display().to_string(),
            expected: String::new(),
            got: String::new(),
            executions: 0,
            calls: 0,
            numbers: String::new(),
            millis: 0,
            replay: None,
            replays: Vec::new(),
            detail: None,
            error: None,
            points: Vec::new(),
            exhaustive: None,
            timeline: None,
            metrics: BTreeMap::new(),
            shard: None,
            found: BTreeMap::new(),
            faults: BTreeMap::new(),
            checks: BTreeMap::new(),
            dangers: BTreeMap::new(),
            coverage: String::new(),
            counterexample: None,
        }
    }

    /// Records a failure found in scenario `s` with `strategy`: its replay lines, its
    /// text report and its timeline. The headline replay is the first replay line: the
    /// seed's when there is one, else an exhaustive search's schedule.
    pub fn record_failure(&mut self, s: &Scenario, strategy: StrategyKind, f: &Finding) {
        self.replays = crate::report::replay_lines(s, strategy, f);
        self.replay = self.replays.first().map(|l| l.command.clone());
        self.detail = Some(crate::report::render_failure(s, strategy, f));
        self.timeline = Some(Timeline::of(&f.execution, f.clients));
    }

    /// Adds a run's metrics to the row's.
    pub fn add_metrics(&mut self, report: &RunReport) {
        for (name, s) in &report.metrics {
            let m = MetricRow {
                count: s.count,
                mean: s.mean(),
                min: s.min,
                max: s.max,
                histogram: s.histogram.clone(),
            };
            self.metrics.entry(name.clone()).or_default().merge(&m);
        }
    }
}

/// One point of a sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointRow {
    /// The swept values, e.g. `rate_per_s=5,phase_ms=250`.
    pub point: String,
    /// The point's verdict (its first failure, or `pass`).
    pub got: String,
    /// Executions run.
    pub executions: u64,
    /// Executions per verdict.
    pub verdicts: BTreeMap<String, u64>,
    /// Mean of every metric over the point's executions.
    pub metrics: BTreeMap<String, f64>,
}

/// A sweep's points as a table: one line per point, one column per metric (means).
pub fn render_points(scenario: &str, points: &[PointRow]) -> String {
    let mut names: Vec<&String> = points.iter().flat_map(|p| p.metrics.keys()).collect();
    names.sort();
    names.dedup();
    // A column that is zero at every point says nothing; the JSON keeps it.
    names.retain(|n| {
        points
            .iter()
            .any(|p| p.metrics.get(*n).is_some_and(|v| *v != 0.0))
    });
    let mut out = format!(
        "{scenario}:\n  {:<32} {:>6} {:>8}",
        "point", "execs", "failing"
    );
    for n in &names {
        let _ = write!(out, " {:>14}", short_name(n));
    }
    out.push('\n');
    for p in points {
        let _ = write!(
            out,
            "  {:<32} {:>6} {:>8}",
            p.point,
            p.executions,
            p.failing()
        );
        for n in &names {
            match p.metrics.get(*n) {
                Some(v) => {
                    let _ = write!(out, " {v:>14.3}");
                }
                None => {
                    let _ = write!(out, " {:>14}", "-");
                }
            }
        }
        out.push('\n');
    }
    out
}

impl PointRow {
    /// Executions whose verdict was not `pass`.
    pub fn failing(&self) -> u64 {
        self.verdicts
            .iter()
            .filter(|(k, _)| *k != "pass")
            .map(|(_, n)| n)
            .sum()
    }
}

impl Row {
    /// True if the verdict is the expected one.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.expected == self.got
    }

    /// Adds a run's fault, check and danger figures (`sometimes`: the conditions its
    /// scenario asks for), and says them again in [`Row::coverage`].
    pub fn add_coverage(&mut self, report: &RunReport, sometimes: &[String]) {
        for (k, f) in &report.faults {
            *self.faults.entry(k.clone()).or_default() += *f;
        }
        for (k, n) in &report.checks {
            *self.checks.entry(k.clone()).or_insert(0) += n;
        }
        for c in sometimes {
            *self.dangers.entry(c.clone()).or_insert(0) += report.met.get(c).copied().unwrap_or(0);
        }
        let mut parts = Vec::new();
        if !self.faults.is_empty() {
            let f: Vec<String> = self
                .faults
                .iter()
                .map(|(k, f)| format!("{k} {} injected, {} bit", f.injected, f.bit))
                .collect();
            parts.push(format!("faults: {}", f.join(", ")));
        }
        if !self.dangers.is_empty() {
            let d: Vec<String> = self
                .dangers
                .iter()
                .map(|(c, n)| format!("{c} in {n} executions"))
                .collect();
            parts.push(format!("dangers met: {}", d.join(", ")));
        }
        if !self.checks.is_empty() {
            let c: Vec<String> = self
                .checks
                .iter()
                .map(|(k, n)| format!("{k} {n}×"))
                .collect();
            parts.push(format!("invariants evaluated: {}", c.join(", ")));
        }
        self.coverage = parts.join("; ");
    }

    /// The faults in a few characters for the table: `evict 41/97 bit`.
    pub fn faults_short(&self) -> String {
        self.faults
            .iter()
            .map(|(k, f)| format!("{k} {}/{} bit", f.bit, f.injected))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The key numbers of a run for the summary table.
pub fn key_numbers(report: &RunReport) -> String {
    if let Some(f) = &report.first_failure
        && let Verdict::Violation(v) = &f.execution.verdict
    {
        let mut parts: Vec<String> = v
            .failure
            .numbers
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        parts.push(format!("(execution {})", f.execution.index + 1));
        return parts.join(" ");
    }
    report
        .metrics
        .iter()
        .take(4)
        .map(|(k, s)| format!("{}={:.2}", short_name(k), s.mean()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A metric's or field's last part: `params.rate_per_s` → `rate_per_s`.
pub fn short_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Columns the summary table fits in.
pub const TABLE_WIDTH: usize = 100;

/// `text` cut to `width` characters, with `…` where it was cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The summary table, aligned, in at most [`TABLE_WIDTH`] columns: one verdict column
/// (the one found; on a mismatch, the expected one after it), the key numbers cut to
/// the room left (the JSON and HTML reports keep them whole).
pub fn render_table(rows: &[Row]) -> String {
    let headers = ["", "scenario", "verdict", "execs", "ms", "numbers"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let got = if r.error.is_some() { "error" } else { &r.got };
            [
                if r.ok() { "ok".into() } else { "FAIL".into() },
                r.scenario.clone(),
                if r.ok() {
                    got.to_string()
                } else {
                    format!("{got} ≠ {}", r.expected)
                },
                r.executions.to_string(),
                r.millis.to_string(),
                r.error.clone().unwrap_or_else(|| {
                    let faults = r.faults_short();
                    if faults.is_empty() || !r.points.is_empty() {
                        r.numbers.clone()
                    } else {
                        format!("{faults} · {}", r.numbers)
                    }
                }),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for c in &cells {
        for (w, s) in widths.iter_mut().zip(c.iter()) {
            *w = (*w).max(s.chars().count());
        }
    }
    // The first columns keep their width (cut only if a name is absurdly long); the
    // numbers get what is left.
    widths[1] = widths[1].min(32);
    widths[2] = widths[2].min(34);
    let fixed: usize = widths[..5].iter().map(|w| w + 2).sum();
    widths[5] = TABLE_WIDTH.saturating_sub(fixed).max(8);
    let mut out = String::new();
    let line = |out: &mut String, c: &[&str]| {
        let mut s = String::new();
        for (i, cell) in c.iter().enumerate() {
            let cell = fit(cell, widths[i]);
            if i + 1 == c.len() {
                s.push_str(&cell);
            } else if i == 3 || i == 4 {
                let _ = write!(s, "{:>w$}  ", cell, w = widths[i]);
            } else {
                let _ = write!(s, "{:<w$}  ", cell, w = widths[i]);
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut out, &headers);
    for c in &cells {
        line(&mut out, &c.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out
}

/// The rows as a JUnit XML report, one test case per scenario (its coverage said when
/// it passed).
pub fn render_junit(rows: &[Row]) -> String {
    let messages: Vec<Option<String>> = (rows.iter())
        .map(|r| {
            (!r.ok()).then(|| match &r.error {
                Some(e) => e.clone(),
                None => format!("expected {} but got {}", r.expected, r.got),
            })
        })
        .collect();
    let cases: Vec<junit::Case<'_>> = (rows.iter().zip(&messages))
        .map(|(r, message)| junit::Case {
            class: &r.file,
            name: &r.scenario,
            seconds: r.millis as f64 / 1000.0,
            outcome: match message {
                None => junit::Outcome::Passed(&r.coverage),
                Some(message) => junit::Outcome::Failed {
                    message,
                    detail: r.detail.as_deref().unwrap_or(""),
                },
            },
        })
        .collect();
    junit::render("mcsim", &cases)
}
