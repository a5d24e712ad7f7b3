//! `mcsim run` and `mcsim replay`: a scenario's executions, judged, or one of them again
//! with its timeline.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::cli::args::{ReplayArgs, RunArgs};
use crate::cli::commands::{load_points, load_set};
use mcsim::explore::Schedule;
use mcsim::model::Family;
use mcsim::report;
use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::{Scenario, StrategyKind};

impl RunArgs {
    /// Runs the scenario's executions (each point of a sweep) and judges them.
    pub(crate) fn run(self, families: &[&'static dyn Family]) -> Result<ExitCode> {
        let RunArgs {
            scenario,
            seed,
            seeds,
            strategy,
            all,
            check_determinism,
            set,
            html,
        } = self;
        let points = if set.is_empty() {
            load_points(&scenario, families)?
        } else {
            vec![load_set(&scenario, &set, families)?]
        };
        let mut ok = true;
        let sweep = points.len() > 1;
        let mut row = mcsim::report::Row::new(&scenario);
        let mut labels = Vec::new();
        let per_point =
            |s: &Scenario| seeds.unwrap_or(if seed.is_some() { 1 } else { s.executions });
        let total: u64 = points.iter().map(per_point).sum();
        let bar = crate::cli::progress::bar(total, "executions");
        let started_all = Instant::now();
        for s in &points {
            let kind = strategy.resolve(s);
            let mut options = RunOptions::from_scenario(s);
            options.strategy = kind;
            options.seed = seed.unwrap_or(s.seed);
            options.executions = per_point(s);
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
            let base = bar.position();
            let report = run::run_observed(s, &options, &mut |done| bar.set_position(base + done));
            bar.set_position(base + options.executions);
            // The page's row, only for a page: it renders the failure a second time.
            if html.is_some() {
                labels.push(crate::cli::gate::record(&mut row, s, kind, &report, sweep));
            }
            bar.suspend(|| {
                out!("{}", report::render_run(s, &report));
                outln!("  wall time {:.2?}", started.elapsed());
                if let Some(f) = &report.first_failure {
                    outln!();
                    out!(
                        "{}",
                        report::kept::failure(
                            std::path::Path::new(report::kept::RUN_DIR),
                            s,
                            kind,
                            f
                        )
                    );
                }
            });
            if points.len() == 1 {
                let judged = report.judge(&s.expectation);
                let (got, matched) = (judged.got, judged.ok);
                outln!(
                    "\nexpected {}, got {got}: {}",
                    s.expect,
                    if matched { "as expected" } else { "MISMATCH" }
                );
                ok &= matched;
            }
        }
        bar.finish_and_clear();
        if points.len() > 1 && !check_determinism {
            let names: Vec<String> = points.iter().map(|p| p.name.clone()).collect();
            outln!("\n{} sweep points: {}", points.len(), names.join(" "));
        }
        if let Some(page) = &html
            && !check_determinism
        {
            crate::cli::gate::conclude_points(&mut row, &labels);
            let elapsed = started_all.elapsed();
            row.millis = elapsed.as_millis() as u64;
            let heading = crate::html::Heading {
                title: format!("mcsim run {}", scenario.display()),
                facts: vec![format!("{elapsed:.1?}")],
            };
            crate::cli::gate::write_report(
                page,
                &crate::html::page(&heading, std::slice::from_ref(&row)),
            )?;
            outln!("HTML report: {}", page.display());
        }
        Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

impl ReplayArgs {
    /// Replays one execution, from its seed or its schedule, and prints its timeline.
    pub(crate) fn replay(self, families: &[&'static dyn Family]) -> Result<ExitCode> {
        let ReplayArgs {
            clients,
            scenario,
            seed,
            schedule,
            expect_hash,
            strategy,
            set,
        } = self;
        let expect_hash = expect_hash
            .map(|h| {
                u64::from_str_radix(&h, 16).with_context(|| {
                    format!("--expect-hash {h:?} is not a trace hash (16 hex digits)")
                })
            })
            .transpose()?;
        let mut s = load_set(&scenario, &set, families)?;
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
        let hash = execution.trace.hash();
        outln!("trace hash: {hash:016x}");
        // A schedule that does not fit the scenario is bad input, not a finding.
        if matches!(execution.verdict, mcsim::Verdict::Diverged { .. }) {
            eprintln!(
                "error: the schedule does not fit this scenario: {}",
                execution.verdict
            );
            return Ok(ExitCode::from(2));
        }
        if let Some(want) = expect_hash.filter(|&want| want != hash) {
            eprintln!(
                "error: this replay gives trace hash {hash:016x}, not the expected \
                 {want:016x}: it is not the execution that was reported (a line printed \
                 by another version of mcsim, or the scenario file or the recipe changed \
                 since)"
            );
            return Ok(ExitCode::FAILURE);
        }
        Ok(ExitCode::SUCCESS)
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
