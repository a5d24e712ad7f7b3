//! The `mcsim` command line: parse, call the library, print.

#[macro_use]
mod out;
mod gate;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use mcsim::explore::Schedule;
use mcsim::report;
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
                out!("{}", report::render_run(s, &report));
                outln!("  wall time {:.2?}", started.elapsed());
                if let Some(f) = &report.first_failure {
                    outln!();
                    out!("{}", report::render_failure(s, kind, f));
                }
                if points.len() == 1 {
                    let got = report.label();
                    let matched = got == s.expect;
                    outln!(
                        "\nexpected {}, got {got}: {}",
                        s.expect,
                        if matched { "as expected" } else { "MISMATCH" }
                    );
                    ok &= matched;
                }
            }
            if points.len() > 1 && !check_determinism {
                let labels: Vec<String> = points.iter().map(|p| p.name.clone()).collect();
                outln!("\n{} sweep points: {}", points.len(), labels.join(" "));
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
            out!("{}", execution.trace.render());
            outln!("\nverdict: {}", execution.verdict.label());
            outln!("  {}", execution.verdict);
            outln!("schedule: {}", execution.schedule);
            outln!("trace hash: {:016x}", execution.trace.hash());
            // A schedule that does not fit the scenario is bad input, not a finding.
            if matches!(execution.verdict, mcsim::Verdict::Diverged { .. }) {
                eprintln!(
                    "error: the schedule does not fit this scenario: {}",
                    execution.verdict
                );
                return Ok(ExitCode::from(2));
            }
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
        } => gate::check(
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
        outln!("{} of the executions violate an invariant", report.failures);
    }
    outln!(
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
            outln!();
            out!("{}", report::render_failure(s, s.strategy, f));
            let ok = f.execution.verdict.label() == s.expect;
            outln!(
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
            outln!("stopped before covering every schedule: no violation so far (not a proof)");
            Ok(ExitCode::FAILURE)
        }
        None => {
            let bound = match options.max_preemptions {
                Some(p) => format!("at most {p} preemptions and the fault plan's budgets"),
                None => "the fault plan's budgets, unbounded preemptions".into(),
            };
            outln!(
                "no violation within bounds ({} clients, {bound})",
                s.clients
            );
            let ok = s.expect == "pass";
            outln!(
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
                outln!(
                    "NONDETERMINISTIC: seed {} differs at timeline line {line}",
                    seed + i
                );
                outln!("  first run:  {first}\n  second run: {second}");
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    outln!(
        "deterministic: {} seeds from {seed} replay to identical traces",
        n.max(1)
    );
    Ok(ExitCode::SUCCESS)
}
