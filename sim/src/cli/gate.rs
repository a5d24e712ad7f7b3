//! `mcsim check`: every scenario file of a directory as a gate, in parallel, with the
//! summary table, the JSON and JUnit reports and one exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::cli::commands::load_points;
use crate::model::Family;
use crate::report::{self, PointRow, Row};
use crate::run::{self, Determinism, RunOptions};
use crate::scenario::StrategyKind;
use anyhow::{Context, Result, bail};

/// How `check` judges each scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judging {
    /// Multiplier of every scenario's execution budget.
    pub budget: f64,
    /// Also check that the first seed replays to the same trace.
    pub determinism: bool,
    /// Prove each scenario that is not a sweep at its `[explore]` bounds instead of
    /// sampling it.
    pub exhaustive: bool,
}

/// Executions an exhaustive search may take (times the budget) before the gate calls
/// the scenario unproved.
const EXHAUSTIVE_CAP: f64 = 200_000.0;

/// Proves `s` at its `[explore]` bounds: the row's verdict is the first violation
/// found, `pass` when every schedule within the bounds was covered, or `unproved` when
/// the search hit its cap first.
fn prove(s: &crate::scenario::Scenario, budget: f64, row: &mut Row) -> String {
    let s = match s.with_clients(s.bounds.clients) {
        Ok(s) => s,
        Err(e) => {
            row.error = Some(e.to_string());
            return "error".into();
        }
    };
    let options = run::ExploreOptions {
        max_preemptions: s.bounds.preemptions,
        max_faults: s.bounds.faults,
        draws: s.bounds.draws,
        max_executions: Some((EXHAUSTIVE_CAP * budget).ceil().max(1.0) as u64),
        iterative: true,
        ..run::ExploreOptions::default()
    };
    let seek = (s.expect != "pass").then_some(s.expect.as_str());
    let r = run::explore_seeking(&s, &options, seek, &mut |_| true);
    row.executions += r.stats.executions;
    row.calls += r.calls;
    let covered = crate::cli::explore::covered(&s, &r);
    match &r.failure {
        Some(f) => {
            row.replays = report::replay_lines(&s, s.strategy, f);
            row.replay = row.replays.first().map(|l| l.command.clone());
            row.detail = Some(report::render_failure(&s, s.strategy, f));
            row.numbers = format!("found in {covered}");
            row.exhaustive = Some(covered);
            f.execution.verdict.label()
        }
        None if r.interrupted => {
            row.numbers = format!("stopped after {} executions", r.stats.executions);
            "unproved".into()
        }
        None => {
            let sampled = crate::cli::explore::beyond_bounds(&s);
            row.executions += sampled.executions;
            row.calls += sampled.calls;
            if let Some(f) = &sampled.first_failure {
                // Outside what the search fixes: the verdict is the sample's, not a proof.
                row.replay = Some(report::replay_seed_command(
                    &s,
                    StrategyKind::Random,
                    f.seed,
                ));
                row.replays = report::replay_lines(&s, StrategyKind::Random, f);
                row.detail = Some(report::render_failure(&s, StrategyKind::Random, f));
                row.numbers = format!("none in {covered}; found by random timing");
                return f.execution.verdict.label();
            }
            row.numbers = format!(
                "{} executions, {} states, and {} random beyond",
                r.stats.executions, r.stats.states, sampled.executions
            );
            row.exhaustive = Some(covered);
            "pass".into()
        }
    }
}

fn run_one(path: &Path, families: &[&'static dyn Family], judging: Judging) -> Row {
    let Judging {
        budget,
        determinism: check_determinism,
        exhaustive,
    } = judging;
    let started = Instant::now();
    let mut row = Row {
        scenario: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        file: path.display().to_string(),
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
    };
    let points = match load_points(path, families) {
        Ok(p) => p,
        Err(e) => {
            row.error = Some(format!("{e:#}"));
            return row;
        }
    };
    let sweep = points.len() > 1;
    let mut labels = Vec::new();
    if exhaustive && !sweep {
        let s = &points[0];
        row.expected = s.expect.clone();
        row.got = prove(s, budget, &mut row);
        row.millis = started.elapsed().as_millis() as u64;
        return row;
    }
    for s in &points {
        row.expected = s.expect.clone();
        let mut options = RunOptions::from_scenario(s);
        options.executions = ((s.executions as f64) * budget).ceil().max(1.0) as u64;
        options.keep_going = sweep;
        // A sweep is read for its numbers; only its first failure is shown, unshrunk.
        options.shrink = !sweep;
        let report = run::run(s, &options);
        let got = report.label();
        row.executions += report.executions;
        row.calls += report.calls;
        if sweep {
            row.points.push(PointRow {
                point: s.point.join(","),
                got: got.clone(),
                executions: report.executions,
                verdicts: report.verdicts.clone(),
                metrics: report
                    .metrics
                    .iter()
                    .map(|(k, m)| (k.clone(), m.mean()))
                    .collect(),
            });
        } else {
            row.numbers = report::key_numbers(&report);
        }
        if let Some(f) = &report.first_failure
            && row.detail.is_none()
        {
            row.replay = Some(report::replay_seed_command(s, s.strategy, f.seed));
            row.replays = report::replay_lines(s, s.strategy, f);
            row.detail = Some(report::render_failure(s, s.strategy, f));
        }
        if check_determinism
            && let Determinism::Differs { line, .. } = run::check_determinism(s, s.strategy, s.seed)
        {
            row.error = Some(format!(
                "nondeterministic: {} seed {} differs at timeline line {line}",
                s.name, s.seed
            ));
        }
        labels.push(got);
    }
    row.got = sweep_verdict(&row.expected, &labels);
    if sweep {
        let found = labels.iter().filter(|l| **l == row.expected).count();
        row.numbers = format!("{} points, {found} with {}", labels.len(), row.expected);
    }
    row.millis = started.elapsed().as_millis() as u64;
    row
}

/// A sweep's verdict: `pass` if every point passes; otherwise the expected violation if any
/// point shows it, else the first point's failure.
fn sweep_verdict(expected: &str, labels: &[String]) -> String {
    if labels.iter().all(|l| l == "pass") {
        return "pass".into();
    }
    if expected != "pass" && labels.iter().any(|l| l == expected) {
        return expected.to_string();
    }
    labels
        .iter()
        .find(|l| *l != "pass")
        .cloned()
        .unwrap_or_else(|| "pass".into())
}

pub(crate) fn check(
    families: &[&'static dyn Family],
    dir: &Path,
    jobs: Option<usize>,
    judging: Judging,
    json: &Path,
    junit: Option<&Path>,
    shard: Option<(usize, usize)>,
) -> Result<ExitCode> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if let Some((i, n)) = shard {
        paths = paths
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, p)| p)
            .collect();
    }
    if paths.is_empty() {
        bail!("no scenario files (*.toml) in {}", dir.display());
    }
    let started = Instant::now();
    let jobs = jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let queue = Arc::new(Mutex::new(paths.clone()));
    let rows = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(paths.len()) {
            let (queue, rows) = (queue.clone(), rows.clone());
            scope.spawn(move || {
                loop {
                    let next = queue.lock().map(|mut q| q.pop()).unwrap_or(None);
                    let Some(path) = next else { break };
                    let row = run_one(&path, families, judging);
                    let mark = if row.ok() { "ok  " } else { "FAIL" };
                    eprintln!("{mark} {} ({} ms)", row.scenario, row.millis);
                    if let Ok(mut r) = rows.lock() {
                        r.push(row);
                    }
                }
            });
        }
    });
    let mut rows = Arc::try_unwrap(rows)
        .map_err(|_| anyhow::anyhow!("worker still running"))?
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
    rows.sort_by(|a, b| a.file.cmp(&b.file));
    outln!("{}", report::render_table(&rows));
    for r in rows.iter().filter(|r| !r.points.is_empty()) {
        outln!("{}", report::render_points(&r.scenario, &r.points));
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| !r.ok()).collect();
    for r in &failed {
        outln!(
            "MISMATCH {}: expected {}, got {}",
            r.scenario,
            r.expected,
            if r.error.is_some() { "error" } else { &r.got }
        );
        if let Some(e) = &r.error {
            outln!("  {e}");
        }
        if let Some(d) = &r.detail {
            outln!("{d}");
        }
    }
    if let Some(parent) = json.parent() {
        std::fs::create_dir_all(parent).ok();
    }
    std::fs::write(json, serde_json::to_string_pretty(&rows)?)
        .with_context(|| format!("writing {}", json.display()))?;
    if let Some(junit) = junit {
        std::fs::write(junit, report::render_junit(&rows))
            .with_context(|| format!("writing {}", junit.display()))?;
    }
    if judging.exhaustive {
        let proved = rows.iter().filter(|r| r.exhaustive.is_some()).count();
        outln!(
            "exhaustive: {proved} scenarios decided by an exhaustive search at their [explore] bounds (shown per row in the JSON), sweeps sampled"
        );
    }
    outln!(
        "{} scenarios, {} as expected, {} mismatched; {} executions in {:.1?} on {jobs} jobs; JSON in {}",
        rows.len(),
        rows.len() - failed.len(),
        failed.len(),
        rows.iter().map(|r| r.executions).sum::<u64>(),
        started.elapsed(),
        json.display()
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
