//! The `run`, `replay` and `explore` commands: parse, call the library, print.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::cli::args::Command;
use mcsim::explore::Schedule;
use mcsim::model::Family;
use mcsim::report;
use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::{Scenario, StrategyKind};

fn load(path: &Path, families: &[&'static dyn Family]) -> Result<Scenario> {
    Scenario::load(path, families).map_err(|e| anyhow::anyhow!("{e}"))
}

pub(crate) fn load_points(path: &Path, families: &[&'static dyn Family]) -> Result<Vec<Scenario>> {
    mcsim::scenario::load_points(path, families).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The scenario of a file with `--set` fields applied (a sweep file gives its base).
fn load_set(path: &Path, set: &[String], families: &[&'static dyn Family]) -> Result<Scenario> {
    let s = load(path, families)?;
    if set.is_empty() {
        return Ok(s);
    }
    s.with_set(set).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs one command against `families`.
pub(crate) fn dispatch(command: Command, families: &[&'static dyn Family]) -> Result<ExitCode> {
    match command {
        Command::Run {
            scenario,
            seed,
            seeds,
            strategy,
            all,
            check_determinism,
            set,
            html,
        } => {
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
                let report =
                    run::run_observed(s, &options, &mut |done| bar.set_position(base + done));
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
        Command::Replay {
            clients,
            scenario,
            seed,
            schedule,
            expect_hash,
            strategy,
            set,
        } => {
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
        Command::Explore {
            scenario,
            clients,
            max_preemptions,
            max_faults,
            max_executions,
            no_reduction,
            no_cache,
            no_symmetry,
            whole_memory,
            no_timing,
            draws,
            no_iterative,
            max_phases,
            all,
            jobs,
            set,
        } => {
            let s = load_set(&scenario, &set, families)?;
            let clients = clients.unwrap_or(s.bounds.clients);
            let s = s
                .with_clients(clients)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let options = mcsim::exhaustive::ExploreOptions {
                max_preemptions: max_preemptions.map_or(s.bounds.preemptions, |b| b.0),
                max_faults: max_faults.map_or(s.bounds.faults, |b| b.0),
                reduce: !no_reduction,
                max_executions,
                keep_going: all,
                cache: !no_cache,
                symmetry: !no_symmetry,
                summaries: !whole_memory,
                timing: !no_timing,
                draws: draws.unwrap_or(s.bounds.draws),
                iterative: !no_iterative,
                max_phases: max_phases.unwrap_or(s.bounds.phases),
                jobs: crate::cli::jobs_or_cores(jobs),
            };
            crate::cli::explore::explore(&s, &options)
        }
        Command::Confirm {
            scenario,
            all: true,
            jobs,
            max_wait_s,
            attempts,
            ..
        } => {
            let inputs = if scenario.is_empty() {
                vec![PathBuf::from("scenarios")]
            } else {
                scenario
            };
            let options = crate::cli::confirm::options(
                &[],
                max_wait_s.unwrap_or(crate::cli::confirm::ALL_MAX_WAIT_S),
                attempts,
            )?;
            crate::cli::confirm::confirm_all(families, &inputs, jobs, &options)
        }
        Command::Confirm {
            scenario,
            seed,
            schedule,
            clients,
            servers,
            max_wait_s,
            attempts,
            ..
        } => {
            let [path] = &scenario[..] else {
                bail!("give one scenario file (or --all for several)");
            };
            let which = crate::cli::confirm::Which {
                seed,
                schedule: schedule.as_deref(),
                clients,
            };
            let options =
                crate::cli::confirm::options(&servers, max_wait_s.unwrap_or(15.0), attempts)?;
            crate::cli::confirm::confirm(&load(path, families)?, which, &options)
        }
        Command::Serve {
            port,
            servers,
            clock,
            lose_reply,
            evict,
            delay_ms,
            seed,
            lockstep,
            lockstep_wait_ms,
            trace,
            trace_window,
            name_key,
            memory_mb,
            item_size_max,
            slab_chunk_max,
            threads,
        } => {
            for (name, p) in [("--lose-reply", lose_reply), ("--evict", evict)] {
                if !(0.0..=1.0).contains(&p) {
                    bail!("{name} {p}: give a chance from 0 to 1");
                }
            }
            if servers == 0 || servers > 64 {
                bail!("--servers {servers}: give 1 to 64");
            }
            if let Some(p) = &name_key
                && (p.is_empty() || p.len() > 200 || p.bytes().any(|b| b <= b' ' || b == 0x7f))
            {
                bail!("--name-key {p:?}: give a key prefix of 1 to 200 printable bytes");
            }
            if lockstep == Some(0) {
                bail!("--lockstep 0: give the number of client connections");
            }
            let server = mcsim::server::ServerConfig::default()
                .memory_mb(memory_mb)
                .item_size_max(item_size_max)
                .slab_chunk_max(slab_chunk_max);
            if let Some(refusal) = server.refusal() {
                // As memcached: its message alone, and EX_USAGE.
                eprintln!("{refusal}");
                return Ok(ExitCode::from(64));
            }
            let clock = match clock.as_deref() {
                Some("real") => mcsim_serve::ClockMode::Real,
                Some(_) => mcsim_serve::ClockMode::Manual,
                None if lockstep.is_some() => mcsim_serve::ClockMode::Manual,
                None => mcsim_serve::ClockMode::Real,
            };
            let config = mcsim_serve::ServeConfig {
                port,
                servers,
                server,
                clock,
                faults: mcsim_serve::FaultPolicy {
                    lose_reply,
                    evict,
                    delay: std::time::Duration::from_millis(delay_ms),
                    ..Default::default()
                },
                seed,
                lockstep,
                lockstep_wait: std::time::Duration::from_millis(lockstep_wait_ms),
                trace,
                trace_window,
                name_key,
                threads: threads as usize,
            };
            mcsim_serve::serve(&config, |addrs| {
                // Whoever started it may stop reading after the ports: serving goes on.
                use std::io::Write;
                let mut out = std::io::stdout();
                for a in addrs {
                    let _ = writeln!(out, "listening on {a}");
                }
                let clock = if clock == mcsim_serve::ClockMode::Real {
                    "real"
                } else {
                    "manual"
                };
                let steps =
                    lockstep.map_or(String::new(), |n| format!("; lockstep over {n} clients"));
                let _ = writeln!(out, "clock {clock}; seed {seed}{steps}");
                let _ = out.flush();
            })
            .context("serving")?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            dir,
            jobs,
            budget,
            outputs,
            check_determinism,
            exhaustive,
            seed,
            shard,
        } => crate::cli::gate::check(
            families,
            &dir,
            jobs,
            crate::cli::gate::Judging {
                budget,
                determinism: check_determinism,
                exhaustive,
                seed,
            },
            &outputs,
            shard,
        ),
        Command::Findings {
            dir,
            out,
            jobs,
            executions,
            point_executions,
            client_executions,
            no_confirm,
        } => crate::cli::findings::run(
            families,
            &dir,
            &out,
            jobs,
            crate::findings::Budgets {
                executions,
                point_executions,
                client_executions,
            },
            !no_confirm,
        ),
        Command::Merge { inputs, outputs } => crate::cli::merge::run(&inputs, &outputs),
        Command::Test {
            clients,
            servers,
            executions,
            exhaustive,
            max_preemptions,
            seed,
            strategy,
            depth,
            replay,
            expect_hash,
            timeout,
            evict,
            lose_reply,
            lose_request,
            pause,
            pause_ms,
            sometimes,
            all,
            json,
            timeline,
            junit,
            expect,
            command,
        } => {
            let replay = match replay {
                Some(text) => {
                    Some(Schedule::parse(&text).map_err(|e| anyhow::anyhow!("--replay: {e}"))?)
                }
                None => None,
            };
            if !(timeout.is_finite() && timeout > 0.0) {
                bail!("--timeout {timeout}: give a number of seconds above 0");
            }
            for (flag, p) in [
                ("--evict", evict),
                ("--lose-reply", lose_reply),
                ("--lose-request", lose_request),
                ("--pause", pause),
            ] {
                if !(0.0..=1.0).contains(&p) {
                    bail!("{flag} {p}: give a chance from 0 to 1");
                }
            }
            if pause_ms == 0 {
                bail!("--pause-ms 0: give a pause of at least 1 ms");
            }
            let options = crate::cli::test::TestOptions {
                clients,
                servers,
                executions: executions.unwrap_or(if exhaustive { 10_000 } else { 100 }),
                seed,
                strategy: StrategyKind::parse(
                    strategy.as_deref().unwrap_or("random"),
                    depth,
                    StrategyKind::DEFAULT_STEPS,
                )
                .expect("clap accepts only the names StrategyKind parses"),
                exhaustive: exhaustive.then_some(max_preemptions),
                replay,
                expect_hash,
                timeout: std::time::Duration::from_secs_f64(timeout),
                faults: mcsim_serve::FaultPolicy {
                    evict,
                    lose_reply,
                    lose_request,
                    delay: std::time::Duration::ZERO,
                    pause,
                    pause_for: std::time::Duration::from_millis(pause_ms),
                },
                sometimes,
                all,
                json,
                timeline,
                junit,
                expect,
                command,
            };
            crate::cli::test::test(&options)
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
