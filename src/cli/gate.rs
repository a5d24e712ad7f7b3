//! `mcsim check`: every scenario file of a directory as a gate, in parallel, with the
//! summary table, the JSON and JUnit reports and one exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::cli::progress;
use crate::html;
use anyhow::{Context, Result, bail};
use mcsim::model::Family;
use mcsim::report::{self, PointRow, Row};
use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::StrategyKind;

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
    /// Start every scenario at this seed instead of its own `[explore] seed`.
    pub seed: Option<u64>,
}

/// Executions an exhaustive search may take (times the budget) before the gate calls
/// the scenario unproved.
const EXHAUSTIVE_CAP: f64 = 200_000.0;

/// How a row's numbers begin when its search hit [`EXHAUSTIVE_CAP`] with no violation:
/// the summary counts those rows by it.
const NOT_PROVED: &str = "not proved";

/// Proves `s` at its `[explore]` bounds: the row's verdict is the first violation
/// found, `pass` when every schedule within the bounds was covered, or, when the search
/// hit its cap first, `pass` said not proved for a scenario expected to pass (no search
/// found a violation, as a sample finds none), `unproved` for one expected to fail.
fn prove(s: &mcsim::scenario::Scenario, budget: f64, row: &mut Row) -> String {
    let s = match s.with_clients(s.bounds.clients) {
        Ok(s) => s,
        Err(e) => {
            row.error = Some(e.to_string());
            return "error".into();
        }
    };
    let options = mcsim::exhaustive::ExploreOptions {
        max_executions: Some((EXHAUSTIVE_CAP * budget).ceil().max(1.0) as u64),
        ..mcsim::exhaustive::ExploreOptions::for_scenario(&s)
    };
    let seek = (s.expect != "pass").then_some(s.expect.as_str());
    let r = mcsim::exhaustive::explore_seeking(&s, &options, seek, &mut |_| true);
    row.executions += r.stats.executions;
    row.calls += r.calls;
    let covered = crate::cli::explore::covered(&s, &r);
    match &r.failure {
        Some(f) => {
            row.record_failure(&s, s.strategy, f);
            row.numbers = format!("found in {covered}");
            row.exhaustive = Some(covered);
            f.execution.verdict.label()
        }
        None if r.interrupted && s.expect == "pass" => {
            row.numbers = format!(
                "{NOT_PROVED}: no violation in {} executions, the search's cap",
                r.stats.executions
            );
            "pass".into()
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
                row.record_failure(&s, StrategyKind::Random, f);
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
        seed,
    } = judging;
    let started = Instant::now();
    let mut row = Row::new(path);
    let points = match mcsim::scenario::load_points(path, families) {
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
        options.seed = seed.unwrap_or(s.seed);
        options.keep_going = sweep;
        // A sweep is read for its numbers; only its first failure is shown, shrunk when
        // it is recorded (`record`), not every point's.
        options.shrink = !sweep;
        let report = run::run(s, &options);
        let got = record(&mut row, s, s.strategy, &report, sweep);
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
    conclude_points(&mut row, &labels);
    row.millis = started.elapsed().as_millis() as u64;
    row
}

/// Adds one run of scenario `s` (a sweep's point, when `sweep`) to its file's row: its
/// executions, metrics, point and first failure. Returns the run's verdict label.
pub(crate) fn record(
    row: &mut Row,
    s: &mcsim::scenario::Scenario,
    strategy: StrategyKind,
    report: &run::RunReport,
    sweep: bool,
) -> String {
    row.expected = s.expect.clone();
    // A sweep's dangers are judged over all its points (a point may leave a fault out on
    // purpose, as a baseline): in `conclude_points`.
    let got = if sweep {
        let mut expect = s.expectation.clone();
        expect.sometimes.clear();
        report.judge(&expect).got
    } else {
        report.judge(&s.expectation).got
    };
    for (label, n) in &report.found {
        *row.found.entry(label.clone()).or_insert(0) += n;
    }
    row.add_coverage(report, &s.expectation.sometimes);
    if got == "vacuous" && row.detail.is_none() {
        row.detail = Some(crate::cli::vacuous::explain(s, strategy, report));
    }
    row.add_metrics(report);
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
        row.numbers = report::key_numbers(report);
    }
    if let Some(f) = &report.first_failure
        && row.detail.is_none()
    {
        let shrunk = run::shrink_finding(s, strategy, f, report.steps);
        row.record_failure(s, strategy, &shrunk);
    }
    got
}

/// A row's verdict from its points' labels (one label: that verdict).
pub(crate) fn conclude_points(row: &mut Row, labels: &[String]) {
    row.got = sweep_verdict(&row.expected, labels);
    let unmet: Vec<&String> = row
        .dangers
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(c, _)| c)
        .collect();
    if labels.len() > 1 && row.got == "pass" && !unmet.is_empty() {
        row.got = "vacuous".into();
        let unmet: Vec<&str> = unmet.iter().map(|c| c.as_str()).collect();
        let over = format!("{} executions over {} points", row.executions, labels.len());
        row.detail = Some(crate::cli::vacuous::headline(&over, &unmet));
    }
    if labels.len() > 1 {
        let found = labels.iter().filter(|l| **l == row.expected).count();
        row.numbers = format!("{} points, {found} with {}", labels.len(), row.expected);
    }
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

/// Where `check` and `merge` write their reports.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Outputs {
    /// Where to write the JSON results.
    #[arg(long, default_value = "reports/check.json")]
    pub json: PathBuf,
    /// Also write a JUnit XML report.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Also write one self-contained HTML report: the suite table, each counterexample
    /// as a timeline, sweeps as plots, metrics as histograms.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

/// Writes `text` to `path`, creating its directory.
pub(crate) fn write_report(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Prints the summary of `rows` (in at most 100 columns, every mismatch in full after
/// it), writes the reports and returns the gate's exit code.
pub(crate) fn conclude(
    rows: &[Row],
    outputs: &Outputs,
    heading: &html::Heading,
    closing: &str,
) -> Result<ExitCode> {
    outln!("{}", report::render_table(rows));
    let kept = report::kept::rows_for_json(rows, &report::kept::beside(&outputs.json));
    let failed: Vec<&Row> = kept.iter().filter(|r| !r.ok()).collect();
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
    write_report(&outputs.json, &serde_json::to_string(&kept)?)?;
    let mut written = vec![format!("JSON {}", outputs.json.display())];
    if let Some(junit) = &outputs.junit {
        write_report(junit, &report::render_junit(rows))?;
        written.push(format!("JUnit {}", junit.display()));
    }
    if let Some(page) = &outputs.html {
        write_report(page, &html::page(heading, rows))?;
        written.push(format!("HTML {}", page.display()));
    }
    outln!(
        "{} scenarios, {} as expected, {} mismatched; {} executions{closing}",
        rows.len(),
        rows.len() - failed.len(),
        failed.len(),
        rows.iter().map(|r| r.executions).sum::<u64>(),
    );
    outln!("reports: {}", written.join(", "));
    // 2: a scenario could not run (its file is bad), which no verdict can stand for.
    Ok(if rows.iter().any(|r| r.error.is_some()) {
        ExitCode::from(2)
    } else if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub(crate) fn check(
    families: &[&'static dyn Family],
    inputs: &[PathBuf],
    jobs: Option<usize>,
    judging: Judging,
    outputs: &Outputs,
    shard: Option<(usize, usize)>,
) -> Result<ExitCode> {
    let mut paths = scenario_paths(inputs)?;
    if let Some((i, n)) = shard {
        paths = paths
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, p)| p)
            .collect();
    }
    let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    let shown = shown.join(" ");
    if paths.is_empty() {
        bail!("no scenario files (*.toml) in {shown}");
    }
    let started = Instant::now();
    let jobs = crate::cli::jobs_or_cores(jobs);
    let bar = progress::bar(paths.len() as u64, "scenarios");
    let executions = std::sync::atomic::AtomicU64::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let heartbeat = Mutex::new(started);
    let mut rows = crate::cli::parallel(&paths, jobs, |path| {
        let mut row = run_one(path, families, judging);
        row.shard = shard;
        let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        // On a terminal each scenario shows above the bar as it ends; off one, the table
        // names every scenario once, and a long suite says only how far it got, every
        // 10 s.
        if !bar.is_hidden() {
            let mark = if row.ok() { "ok  " } else { "FAIL" };
            bar.println(format!("{mark} {} ({} ms)", row.scenario, row.millis));
        } else if let Ok(mut last) = heartbeat.lock()
            && last.elapsed() >= Duration::from_secs(10)
        {
            *last = Instant::now();
            eprintln!(
                "… {finished} of {} scenarios run ({})",
                paths.len(),
                fmt_secs(started.elapsed().as_secs_f64())
            );
        }
        let total = executions.fetch_add(row.executions, std::sync::atomic::Ordering::Relaxed)
            + row.executions;
        let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!("· {rate:.0} executions/s"));
        bar.inc(1);
        row
    });
    bar.finish_and_clear();
    rows.sort_by(|a, b| a.file.cmp(&b.file));
    if judging.exhaustive {
        let proved = rows.iter().filter(|r| r.exhaustive.is_some()).count();
        let capped = (rows.iter())
            .filter(|r| r.numbers.starts_with(NOT_PROVED))
            .map(|r| r.scenario.clone())
            .collect::<Vec<_>>();
        let capped = match capped.len() {
            0 => String::new(),
            n => format!(
                "; {n} passed without a proof, the search's cap stopping it first ({})",
                capped.join(", ")
            ),
        };
        outln!(
            "exhaustive: {proved} scenarios decided by a search at their [explore] bounds{capped}"
        );
    }
    let elapsed = started.elapsed();
    let mut facts = vec![
        format!("{} on {jobs} jobs", fmt_secs(elapsed.as_secs_f64())),
        if inputs.len() == 1 {
            format!("scenarios from {shown}")
        } else {
            format!("{} scenario files and folders named", inputs.len())
        },
    ];
    if let Some((i, n)) = shard {
        facts.push(format!("shard {i}/{n}"));
    }
    if judging.exhaustive {
        facts.push("exhaustive".into());
    }
    let heading = html::Heading {
        title: "mcsim check".into(),
        facts,
    };
    conclude(
        &rows,
        outputs,
        &heading,
        &format!(" in {:.1?} on {jobs} jobs", elapsed),
    )
}

/// Seconds for a heading: `12.3 s`, `4 min 5 s`.
fn fmt_secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else {
        format!("{} min {} s", (s / 60.0) as u64, (s % 60.0) as u64)
    }
}

/// The scenario files among `inputs`, files or directories of them (every `*.toml`
/// inside), sorted and without repeats.
pub(crate) fn scenario_paths(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for input in inputs {
        if input.is_dir() {
            paths.extend(
                std::fs::read_dir(input)
                    .with_context(|| format!("reading {}", input.display()))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "toml")),
            );
        } else if input.is_file() {
            paths.push(input.clone());
        } else if input.exists() {
            bail!(
                "{}: not a regular file (a scenario is a TOML file)",
                input.display()
            );
        } else {
            bail!("{}: no such scenario file or directory", input.display());
        }
    }
    paths.sort();
    paths.dedup();
    Ok(paths)
}
