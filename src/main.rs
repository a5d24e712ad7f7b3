//! The `mcsim` command line: parse, call the library, print.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use mcsim::explore::Schedule;
use mcsim::report::{self, PointRow, Row};
use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::{Scenario, StrategyKind};
use mcsim_models::Recipes;

/// Deterministic simulation and model checking of memcached recipes.
#[derive(Parser)]
#[command(name = "mcsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    Random,
    Pct,
}

#[derive(clap::Args)]
struct StrategyOpts {
    /// Strategy (default: the scenario's).
    #[arg(long, value_enum)]
    strategy: Option<StrategyArg>,
    /// PCT depth.
    #[arg(long, default_value_t = 3)]
    depth: usize,
}

impl StrategyOpts {
    fn resolve(&self, scenario: &Scenario) -> StrategyKind {
        let steps = match scenario.strategy {
            StrategyKind::Pct { steps, .. } => steps,
            StrategyKind::Random => 100,
        };
        match self.strategy {
            None => scenario.strategy,
            Some(StrategyArg::Random) => StrategyKind::Random,
            Some(StrategyArg::Pct) => StrategyKind::Pct {
                depth: self.depth,
                steps,
            },
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario's executions; on a failure print the timeline and the replay command.
    Run {
        /// The scenario file.
        scenario: PathBuf,
        /// First seed (default: the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Number of executions (default: the scenario's budget).
        #[arg(long)]
        seeds: Option<u64>,
        #[command(flatten)]
        strategy: StrategyOpts,
        /// Keep going after a failure and count verdicts.
        #[arg(long)]
        all: bool,
        /// Run each of the first seeds twice and compare trace hashes instead.
        #[arg(long)]
        check_determinism: bool,
        /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
        /// (repeatable; a sweep file then runs as this one point).
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
    /// Replay one execution from its seed or its schedule and print its timeline.
    Replay {
        /// The scenario file.
        scenario: PathBuf,
        /// The seed that produced the execution.
        #[arg(
            long,
            conflicts_with = "schedule",
            required_unless_present = "schedule"
        )]
        seed: Option<u64>,
        /// A schedule string (`mc1:…`).
        #[arg(long)]
        schedule: Option<String>,
        /// Run with this many clients instead of the scenario's (a shrunk counterexample
        /// may need fewer).
        #[arg(long)]
        clients: Option<usize>,
        #[command(flatten)]
        strategy: StrategyOpts,
        /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
        /// (repeatable; a sweep file then runs as this one point).
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
    /// Explore every schedule of a scenario within bounds (exhaustive, with partial-order
    /// reduction); print the first counterexample or "no violation within bounds".
    Explore {
        /// The scenario file.
        scenario: PathBuf,
        /// At most this many preemptions per execution.
        #[arg(long)]
        max_preemptions: Option<u32>,
        /// Stop after this many executions (then the result is not exhaustive).
        #[arg(long)]
        max_executions: Option<u64>,
        /// Turn the partial-order reduction off (explore every interleaving).
        #[arg(long)]
        no_reduction: bool,
        /// Keep exploring after a violation and count the failing executions.
        #[arg(long)]
        all: bool,
        /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
        /// (repeatable; a sweep file then runs as this one point).
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
    /// Run the whole scenario suite as a gate: exit non-zero if any verdict differs from
    /// the one its scenario expects.
    Check {
        /// Directory of scenario files.
        #[arg(default_value = "scenarios")]
        dir: PathBuf,
        /// Parallel jobs (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Multiplier of every scenario's execution budget.
        #[arg(long, default_value_t = 1.0)]
        budget: f64,
        /// Where to write the JSON results.
        #[arg(long, default_value = "reports/check.json")]
        json: PathBuf,
        /// Also write a JUnit XML report.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Also check that each scenario's first seed replays to the same trace hash.
        #[arg(long)]
        check_determinism: bool,
        /// Run only shard I of N (`--shard 2/4`): scenario files are dealt out by their
        /// sorted position, so N machines together run the suite once.
        #[arg(long, value_parser = parse_shard)]
        shard: Option<(usize, usize)>,
    },
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s.split_once('/').ok_or("expected I/N, e.g. 2/4")?;
    let i: usize = i.parse().map_err(|_| format!("bad shard index {i:?}"))?;
    let n: usize = n.parse().map_err(|_| format!("bad shard count {n:?}"))?;
    if n == 0 || i == 0 || i > n {
        return Err(format!("shard {i}/{n}: need 1 <= I <= N"));
    }
    Ok((i, n))
}

fn load(path: &Path) -> Result<Scenario> {
    Scenario::load(path, &Recipes).map_err(|e| anyhow::anyhow!("{e}"))
}

fn load_points(path: &Path) -> Result<Vec<Scenario>> {
    mcsim::scenario::load_points(path, &Recipes).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The scenario of a file with `--set` fields applied (a sweep file gives its base).
fn load_set(path: &Path, set: &[String]) -> Result<Scenario> {
    let s = load(path)?;
    if set.is_empty() {
        return Ok(s);
    }
    s.with_set(set).map_err(|e| anyhow::anyhow!("{e}"))
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode> {
    match Cli::parse().command {
        Command::Run {
            scenario,
            seed,
            seeds,
            strategy,
            all,
            check_determinism,
            set,
        } => {
            let points = if set.is_empty() {
                load_points(&scenario)?
            } else {
                vec![load_set(&scenario, &set)?]
            };
            let mut ok = true;
            for s in &points {
                let kind = strategy.resolve(s);
                let mut options = RunOptions::from_scenario(s);
                options.strategy = kind;
                options.seed = seed.unwrap_or(s.seed);
                options.executions = seeds.unwrap_or(if seed.is_some() { 1 } else { s.executions });
                options.keep_going = all || points.len() > 1;
                if check_determinism {
                    if determinism(s, kind, options.seed, options.executions.min(100))?
                        != ExitCode::SUCCESS
                    {
                        ok = false;
                    }
                    continue;
                }
                let started = Instant::now();
                let report = run::run(s, &options);
                print!("{}", report::render_run(s, &report));
                println!("  wall time {:.2?}", started.elapsed());
                if let Some(f) = &report.first_failure {
                    println!();
                    print!("{}", report::render_failure(s, kind, f));
                }
                if points.len() == 1 {
                    let got = report.label();
                    let matched = got == s.expect;
                    println!(
                        "\nexpected {}, got {got}: {}",
                        s.expect,
                        if matched { "as expected" } else { "MISMATCH" }
                    );
                    ok &= matched;
                }
            }
            if points.len() > 1 && !check_determinism {
                let labels: Vec<String> = points.iter().map(|p| p.name.clone()).collect();
                println!("\n{} sweep points: {}", points.len(), labels.join(" "));
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Replay {
            clients,
            scenario,
            seed,
            schedule,
            strategy,
            set,
        } => {
            let mut s = load_set(&scenario, &set)?;
            if let Some(n) = clients {
                s = s.with_clients(n).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            let execution = match (seed, schedule) {
                (Some(seed), _) => run::run_seed(&s, strategy.resolve(&s), seed),
                (None, Some(text)) => {
                    let schedule = Schedule::parse(&text).context("reading --schedule")?;
                    run::replay(&s, &schedule)
                }
                (None, None) => bail!("give --seed or --schedule"),
            };
            print!("{}", execution.trace.render());
            println!("\nverdict: {}", execution.verdict.label());
            println!("  {}", execution.verdict);
            println!("schedule: {}", execution.schedule);
            println!("trace hash: {:016x}", execution.trace.hash());
            Ok(ExitCode::SUCCESS)
        }
        Command::Explore {
            scenario,
            max_preemptions,
            max_executions,
            no_reduction,
            all,
            set,
        } => {
            let s = load_set(&scenario, &set)?;
            let options = run::ExploreOptions {
                max_preemptions,
                reduce: !no_reduction,
                max_executions,
                keep_going: all,
            };
            explore(&s, &options)
        }
        Command::Check {
            dir,
            jobs,
            budget,
            json,
            junit,
            check_determinism,
            shard,
        } => check(
            &dir,
            jobs,
            budget,
            &json,
            junit.as_deref(),
            check_determinism,
            shard,
        ),
    }
}

fn explore(s: &Scenario, options: &run::ExploreOptions) -> Result<ExitCode> {
    let started = Instant::now();
    let mut last = Instant::now();
    let report = run::explore(s, options, &mut |stats| {
        if last.elapsed().as_secs() >= 1 {
            last = Instant::now();
            eprintln!(
                "  … {} executions, {} pruned, depth {} ({:.0?})",
                stats.executions,
                stats.pruned,
                stats.max_depth,
                started.elapsed()
            );
        }
        true
    });
    let st = report.stats;
    if options.keep_going {
        println!("{} of the executions violate an invariant", report.failures);
    }
    println!(
        "{}: {} executions explored ({} redundant interleavings cut short), {} distinct final states, {} calls, max depth {}, in {:.2?}",
        s.name,
        st.executions,
        st.pruned,
        report.distinct_states,
        report.calls,
        st.max_depth,
        started.elapsed()
    );
    match &report.failure {
        Some(f) => {
            println!();
            print!("{}", report::render_failure(s, s.strategy, f));
            let ok = f.execution.verdict.label() == s.expect;
            println!(
                "\nexpected {}, got {}: {}",
                s.expect,
                f.execution.verdict.label(),
                if ok { "as expected" } else { "MISMATCH" }
            );
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        None if report.interrupted => {
            println!("stopped before covering every schedule: no violation so far (not a proof)");
            Ok(ExitCode::FAILURE)
        }
        None => {
            let bound = match options.max_preemptions {
                Some(p) => format!("at most {p} preemptions and the fault plan's budgets"),
                None => "the fault plan's budgets, unbounded preemptions".into(),
            };
            println!(
                "no violation within bounds ({} clients, {bound})",
                s.clients
            );
            let ok = s.expect == "pass";
            println!(
                "expected {}, got pass: {}",
                s.expect,
                if ok { "as expected" } else { "MISMATCH" }
            );
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

fn determinism(s: &Scenario, kind: StrategyKind, seed: u64, n: u64) -> Result<ExitCode> {
    for i in 0..n.max(1) {
        match run::check_determinism(s, kind, seed + i) {
            Determinism::Same(_) => {}
            Determinism::Differs {
                line,
                first,
                second,
            } => {
                println!(
                    "NONDETERMINISTIC: seed {} differs at timeline line {line}",
                    seed + i
                );
                println!("  first run:  {first}\n  second run: {second}");
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    println!(
        "deterministic: {} seeds from {seed} replay to identical traces",
        n.max(1)
    );
    Ok(ExitCode::SUCCESS)
}

fn run_one(path: &Path, budget: f64, check_determinism: bool) -> Row {
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
    let points = match load_points(path) {
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

fn check(
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
                    let row = run_one(&path, budget, det);
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
    println!("{}", report::render_table(&rows));
    for r in rows.iter().filter(|r| !r.points.is_empty()) {
        println!("{}", report::render_points(&r.scenario, &r.points));
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| !r.ok()).collect();
    for r in &failed {
        println!(
            "MISMATCH {}: expected {}, got {}",
            r.scenario,
            r.expected,
            if r.error.is_some() { "error" } else { &r.got }
        );
        if let Some(e) = &r.error {
            println!("  {e}");
        }
        if let Some(d) = &r.detail {
            println!("{d}");
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
    println!(
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
