//! What runs print and write: a failure report a person can act on, the suite summary
//! table, and their JSON and JUnit forms.

use std::fmt::Write as _;

use serde::Serialize;

use crate::invariant::Verdict;
use crate::run::{Finding, RunReport};
use crate::scenario::{Origin, Scenario, StrategyKind};

/// A word for a shell: quoted when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,/:=+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `mcsim replay FILE` with the fields the scenario sets over its file (a sweep point's
/// values), so the command rebuilds exactly this scenario.
fn replay_prefix(scenario: &Scenario) -> String {
    let mut out = format!(
        "{} replay {}",
        crate::cli::program(),
        shell_word(&scenario.path.display().to_string())
    );
    for setting in scenario.settings() {
        let _ = write!(out, " --set {}", shell_word(&setting));
    }
    out
}

/// The command that replays a failure from its seed.
pub fn replay_seed_command(
    scenario: &Scenario,
    strategy: StrategyKind,
    seed: Option<u64>,
) -> String {
    let Some(seed) = seed else {
        return format!(
            "{} --schedule <the schedule below>",
            replay_prefix(scenario)
        );
    };
    let extra = match strategy {
        StrategyKind::Random => String::new(),
        StrategyKind::Pct { depth, .. } => format!(" --strategy pct --depth {depth}"),
    };
    format!("{} --seed {seed}{extra}", replay_prefix(scenario))
}

/// The command that replays a failure from its schedule alone.
pub fn replay_schedule_command(scenario: &Scenario, failure: &Finding) -> String {
    let clients = if failure.clients == scenario.clients {
        String::new()
    } else {
        format!(" --clients {}", failure.clients)
    };
    format!(
        "{}{clients} --schedule {}",
        replay_prefix(scenario),
        failure.execution.schedule
    )
}

/// A command that replays a failure, with the trace hash it prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayLine {
    /// The command, ready to paste into a shell.
    pub command: String,
    /// The `trace hash:` it prints.
    pub trace_hash: String,
    /// `as found` (from the seed) or `shrunk` (from the schedule).
    pub what: String,
}

/// Every command that replays a failure: from its seed (the execution as found) and from
/// its schedule (the shrunk one), each with the trace hash it reproduces.
pub fn replay_lines(
    scenario: &Scenario,
    strategy: StrategyKind,
    failure: &Finding,
) -> Vec<ReplayLine> {
    let mut out = Vec::new();
    if let Origin::Code { tag, test, .. } = &scenario.origin {
        let token = format!("{tag}:{}:{}", failure.clients, failure.execution.schedule);
        let test = test
            .as_deref()
            .map(|t| format!(" -- --exact {}", shell_word(t)))
            .unwrap_or_default();
        out.push(ReplayLine {
            command: format!("MCSIM_REPLAY={} cargo test{test}", shell_word(&token)),
            trace_hash: format!("{:016x}", failure.execution.trace.hash()),
            what: if failure.original.is_some() {
                "shrunk".into()
            } else {
                "as found".into()
            },
        });
        return out;
    }
    if let (Some(seed), Some(hash)) = (failure.seed, failure.found_hash) {
        out.push(ReplayLine {
            command: replay_seed_command(scenario, strategy, Some(seed)),
            trace_hash: format!("{hash:016x}"),
            what: "as found".into(),
        });
    }
    out.push(ReplayLine {
        command: replay_schedule_command(scenario, failure),
        trace_hash: format!("{:016x}", failure.execution.trace.hash()),
        what: if failure.original.is_some() {
            "shrunk".into()
        } else {
            "as found".into()
        },
    });
    out
}

/// A failure: the verdict, the numbers, the faults, the timeline, how to replay it.
pub fn render_failure(scenario: &Scenario, strategy: StrategyKind, failure: &Finding) -> String {
    let e = &failure.execution;
    let mut out = String::new();
    let _ = writeln!(out, "FAILED {}: {}", scenario.name, e.verdict.label());
    let _ = writeln!(out, "  {}", e.verdict);
    if let Verdict::Violation(v) = &e.verdict {
        for (k, n) in &v.failure.numbers {
            let _ = writeln!(out, "  {k:<12} {n}");
        }
        let _ = writeln!(out, "  cause        {}", v.cause());
    }
    match &failure.original {
        Some(before) => {
            let after = crate::shrink::Size {
                clients: failure.clients,
                ..crate::shrink::size(scenario, e)
            };
            let _ = writeln!(out, "  found        {before}");
            let _ = writeln!(out, "  shrunk to    {after}");
            if failure.cut_short {
                let _ = writeln!(
                    out,
                    "  (shrinking stopped at its step budget: a smaller one may exist)"
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  schedule     {} choices, {} faults",
                e.schedule.len(),
                e.schedule.faults()
            );
        }
    }
    let _ = writeln!(
        out,
        "\ntimeline (step, virtual time, client, call -> reply):"
    );
    out.push_str(&e.trace.render());
    let _ = writeln!(
        out,
        "\nreplay (each command prints this verdict and trace hash):"
    );
    for line in replay_lines(scenario, strategy, failure) {
        let _ = writeln!(
            out,
            "  {}   # {}, trace hash {}",
            line.command, line.what, line.trace_hash
        );
    }
    out
}

/// A run's outcome in one paragraph.
pub fn render_run(scenario: &Scenario, report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} executions, {} calls; verdicts: {}",
        scenario.name,
        report.executions,
        report.calls,
        report
            .verdicts
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, s) in &report.metrics {
        let _ = writeln!(
            out,
            "  {k:<28} mean {:>10.3}  min {:>8}  max {:>8}",
            s.mean(),
            s.min,
            s.max
        );
    }
    out
}

/// One row of the suite summary.
#[derive(Debug, Clone, Serialize)]
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
    /// The replay command of the failure found, if any (from its seed).
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
}

/// One point of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct PointRow {
    /// The swept values, e.g. `rate_per_s=5,phase_ms=250`.
    pub point: String,
    /// The point's verdict (its first failure, or `pass`).
    pub got: String,
    /// Executions run.
    pub executions: u64,
    /// Executions per verdict.
    pub verdicts: std::collections::BTreeMap<String, u64>,
    /// Mean of every metric over the point's executions.
    pub metrics: std::collections::BTreeMap<String, f64>,
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
        let _ = write!(out, " {:>14}", n.rsplit('.').next().unwrap_or(n));
    }
    out.push('\n');
    for p in points {
        let failing: u64 = p
            .verdicts
            .iter()
            .filter(|(k, _)| *k != "pass")
            .map(|(_, n)| n)
            .sum();
        let _ = write!(out, "  {:<32} {:>6} {:>8}", p.point, p.executions, failing);
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

impl Row {
    /// True if the verdict is the expected one.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.expected == self.got
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
        .map(|(k, s)| format!("{}={:.2}", k.rsplit('.').next().unwrap_or(k), s.mean()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The summary table, aligned.
pub fn render_table(rows: &[Row]) -> String {
    let headers = ["", "scenario", "expected", "got", "execs", "ms", "numbers"];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                if r.ok() { "ok".into() } else { "FAIL".into() },
                r.scenario.clone(),
                r.expected.clone(),
                if r.error.is_some() {
                    "error".into()
                } else {
                    r.got.clone()
                },
                r.executions.to_string(),
                r.millis.to_string(),
                r.error.clone().unwrap_or_else(|| r.numbers.clone()),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for c in &cells {
        for (w, s) in widths.iter_mut().zip(c.iter()) {
            *w = (*w).max(s.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, c: &[&str]| {
        let mut s = String::new();
        for (i, cell) in c.iter().enumerate() {
            if i + 1 == c.len() {
                s.push_str(cell);
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

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The rows as a JUnit XML report, one test case per scenario.
pub fn render_junit(rows: &[Row]) -> String {
    let failures = rows.iter().filter(|r| !r.ok()).count();
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<testsuite name="mcsim" tests="{}" failures="{failures}">"#,
        rows.len()
    );
    for r in rows {
        let _ = write!(
            out,
            r#"  <testcase classname="mcsim.{}" name="{}" time="{:.3}""#,
            xml_escape(&r.file),
            xml_escape(&r.scenario),
            r.millis as f64 / 1000.0
        );
        if r.ok() {
            out.push_str("/>\n");
        } else {
            let message = match &r.error {
                Some(e) => e.clone(),
                None => format!("expected {} but got {}", r.expected, r.got),
            };
            let _ = writeln!(
                out,
                ">\n    <failure message=\"{}\">{}</failure>\n  </testcase>",
                xml_escape(&message),
                xml_escape(r.detail.as_deref().unwrap_or(""))
            );
        }
    }
    out.push_str("</testsuite>\n");
    out
}
