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
use anyhow::{Context, Result, bail};

fn run_one(
    path: &Path,
    families: &[&'static dyn Family],
    budget: f64,
    check_determinism: bool,
) -> Row {
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

#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    families: &[&'static dyn Family],
    dir: &Path,
    jobs: Option<usize>,
    budget: f64,
    json: &Path,
    junit: Option<&Path>,
    det: bool,
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
                    let row = run_one(&path, families, budget, det);
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
