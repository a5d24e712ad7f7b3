//! `mcsim confirm`: the counterexample of a scenario, replayed on a real memcached; with
//! `--all`, every counterexample of a directory of scenarios.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use mcsim::exec::Execution;
use mcsim::explore::Schedule;
use mcsim::model::Family;
use mcsim::run::{self, RunOptions};
use mcsim::scenario::Scenario;
use mcsim_real::{ConfirmOptions, Confirmation, Outcome};

use crate::cli::args::ConfirmArgs;
use crate::cli::commands::load;

/// Which execution to confirm.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Which<'a> {
    pub seed: Option<u64>,
    pub schedule: Option<&'a str>,
    pub clients: Option<usize>,
}

/// A scenario's counterexample replayed on memcached, or why there was none to replay.
struct Confirmed {
    /// What was replayed: "its first failure, shrunk to N clients", "seed 3", …
    what: String,
    /// The invariant the simulation broke.
    label: String,
    calls: u64,
    result: Result<Confirmation, String>,
}

/// The execution to confirm and what it is; `Err` with why there is none.
fn counterexample(s: &Scenario, which: Which<'_>) -> Result<Result<(Execution, String), String>> {
    let s = match which.clients {
        Some(n) => s.with_clients(n).map_err(|e| anyhow::anyhow!("{e}"))?,
        None => s.clone(),
    };
    let (execution, what) = match (which.seed, which.schedule) {
        (Some(seed), _) => (run::run_seed(&s, s.strategy, seed), format!("seed {seed}")),
        (None, Some(text)) => {
            let schedule = Schedule::parse(text).context("reading --schedule")?;
            (run::replay(&s, &schedule), "the schedule given".to_string())
        }
        (None, None) => {
            let report = run::run(&s, &RunOptions::from_scenario(&s));
            let Some(f) = report.first_failure else {
                return Ok(Err(format!(
                    "no failure in {} executions: nothing to confirm",
                    report.executions
                )));
            };
            let clients = f.clients;
            let s2 = s
                .with_clients(clients)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            (
                run::replay(&s2, &f.execution.schedule),
                format!(
                    "its first failure, shrunk to {clients} client{}",
                    if clients == 1 { "" } else { "s" }
                ),
            )
        }
    };
    if execution.verdict.is_pass() {
        return Ok(Err(format!(
            "{what} passes in simulation: nothing to confirm"
        )));
    }
    Ok(Ok((execution, what)))
}

fn confirm_scenario(
    s: &Scenario,
    which: Which<'_>,
    base: &ConfirmOptions,
) -> Result<Result<Confirmed, String>> {
    let (execution, what) = match counterexample(s, which)? {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let options = ConfirmOptions {
        phase: execution
            .phase
            .or_else(|| s.config.servers.first().map(|c| c.phase))
            .unwrap_or_default(),
        ..base.clone()
    };
    let result = mcsim_real::confirm(&execution, &s.config, &options).map_err(|e| e.to_string());
    Ok(Ok(Confirmed {
        what,
        label: execution.verdict.label(),
        calls: execution.calls,
        result,
    }))
}

pub(crate) fn check_wait(max_wait_s: f64) -> Result<Duration> {
    if !(max_wait_s.is_finite() && (0.0..=3600.0).contains(&max_wait_s)) {
        bail!("--max-wait-s {max_wait_s}: give 0 to 3600 seconds");
    }
    Ok(Duration::from_secs_f64(max_wait_s))
}

/// Replays `confirm` runs of a counterexample at most by default, while one diverges
/// after a call memcached's clock did not hold in its simulated second.
pub(crate) const ATTEMPTS: u32 = 3;

/// The options from the command line (the phase is each execution's own).
pub(crate) fn options(
    servers: &[std::net::SocketAddr],
    max_wait_s: f64,
    attempts: u32,
) -> Result<ConfirmOptions> {
    Ok(ConfirmOptions {
        servers: servers.to_vec(),
        max_wait: check_wait(max_wait_s)?,
        phase: Duration::ZERO,
        attempts,
    })
}

/// The replays before the last, which diverged where the real clock did not follow the
/// simulation's: "on replay 2; replay 1 diverged: …", or nothing.
fn retried_note(c: &Confirmation) -> Option<String> {
    (!c.retried.is_empty()).then(|| {
        let earlier = c.retried.iter().enumerate();
        let earlier = earlier.map(|(i, d)| format!("replay {} diverged: {d}", i + 1));
        format!(
            "on replay {}; {}",
            c.retried.len() + 1,
            earlier.collect::<Vec<_>>().join("; ")
        )
    })
}

pub(crate) fn confirm(
    s: &Scenario,
    which: Which<'_>,
    options: &ConfirmOptions,
) -> Result<ExitCode> {
    let max_wait_s = options.max_wait.as_secs_f64();
    let c = match confirm_scenario(s, which, options)? {
        Ok(c) => c,
        Err(why) => {
            outln!("{}: {why}", s.name);
            return Ok(ExitCode::FAILURE);
        }
    };
    outln!(
        "{}: {} breaks {} in simulation; replaying its {} calls on memcached",
        s.name,
        c.what,
        c.label,
        c.calls
    );
    let c2 = c.result.map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(note) = retried_note(&c2) {
        outln!("({note})");
    }
    for line in &c2.lines {
        outln!("{line}");
    }
    if !c2.shortened.is_zero() {
        outln!(
            "(virtual waits longer than the {max_wait_s} s cap: {:.3} s of them were not waited)",
            c2.shortened.as_secs_f64()
        );
    }
    if let Some(note) = waits_shortened(&c2, options.max_wait) {
        outln!("{note}");
        return Ok(ExitCode::from(SHORTENED));
    }
    match c2.outcome {
        Outcome::Confirmed { version } => {
            outln!(
                "confirmed on memcached {version}: every reply as in the simulation, so the recipe sees the same and {} breaks the same way",
                c.label
            );
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Diverged { detail, .. } => {
            outln!("diverged: {detail}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Exit status of a replay that diverged after waits were shortened to the cap: not a
/// divergence of the simulation, a replay that did not wait what it asked.
pub(crate) const SHORTENED: u8 = 3;

/// A replay that diverged after waits were cut to the cap: `not confirmed: waits
/// shortened (N s asked, M s allowed); rerun with --max-wait-s N`. `None` when it
/// confirmed or diverged with every wait waited.
fn waits_shortened(c: &Confirmation, allowed: Duration) -> Option<String> {
    if c.shortened.is_zero() || matches!(c.outcome, Outcome::Confirmed { .. }) {
        return None;
    }
    let asked = (allowed + c.shortened).as_secs_f64().ceil();
    Some(format!(
        "not confirmed: waits shortened ({asked} s asked, {} s allowed); rerun with --max-wait-s {asked}",
        allowed.as_secs_f64()
    ))
}

/// Scenarios `confirm --all` confirms at once by default, each against its own memcached.
pub(crate) const ALL_JOBS: usize = 8;

/// Real seconds one confirm lets a counterexample's virtual waits take in all by
/// default, alone or with `--all`: a replay waits what its counterexample asks up to this.
pub(crate) const MAX_WAIT_S: f64 = 120.0;

/// One line of `confirm --all`: a scenario, the memcached version that confirmed it (if
/// one did), and what happened.
pub(crate) struct Line {
    pub name: String,
    pub confirmed: Option<String>,
    pub text: String,
}

fn confirm_path(
    path: &std::path::Path,
    families: &[&'static dyn Family],
    options: &ConfirmOptions,
) -> Option<Line> {
    let points = match mcsim::scenario::load_points(path, families) {
        Ok(p) => p,
        Err(e) => {
            return Some(Line {
                name: path.display().to_string(),
                confirmed: None,
                text: format!("not read: {e:#}"),
            });
        }
    };
    // A sweep's verdict is over its points, and a passing scenario has no
    // counterexample.
    let [s] = &points[..] else { return None };
    if s.expect == "pass" {
        return None;
    }
    let name = s.name.clone();
    let (confirmed, text) = match confirm_scenario(s, Which::default(), options) {
        Err(e) => (None, format!("error: {e:#}")),
        Ok(Err(why)) => (None, why),
        Ok(Ok(c)) => match c.result {
            Err(e) => (None, format!("not replayed: {e}")),
            Ok(r) => {
                let retried = retried_note(&r)
                    .map(|n| format!("; {n}"))
                    .unwrap_or_default();
                match r.outcome {
                    Outcome::Confirmed { version } => (
                        Some(version),
                        format!(
                            "{} confirmed ({}, {} calls{retried})",
                            c.label, c.what, c.calls
                        ),
                    ),
                    Outcome::Diverged { .. }
                        if let Some(note) = waits_shortened(&r, options.max_wait) =>
                    {
                        (None, note)
                    }
                    Outcome::Diverged { detail, .. } => {
                        (None, format!("diverged: {detail}{retried}"))
                    }
                }
            }
        },
    };
    Some(Line {
        name,
        confirmed,
        text,
    })
}

/// The counterexample of every scenario of `paths` that is not a sweep and expects a
/// violation, confirmed `jobs` at a time (each against its own memcached), in the order
/// of `paths`.
pub(crate) fn confirm_lines(
    families: &[&'static dyn Family],
    paths: &[PathBuf],
    jobs: usize,
    options: &ConfirmOptions,
) -> Vec<Line> {
    crate::cli::parallel(paths, jobs, |path| confirm_path(path, families, options))
        .into_iter()
        .flatten()
        .collect()
}

/// `confirm --all`: [`confirm_lines`], one line each, then `N of M counterexamples
/// confirmed on memcached …`. Fails unless all are.
pub(crate) fn confirm_all(
    families: &[&'static dyn Family],
    inputs: &[PathBuf],
    jobs: usize,
    options: &ConfirmOptions,
) -> Result<ExitCode> {
    let paths = crate::cli::gate::scenario_paths(inputs)?;
    let lines = confirm_lines(families, &paths, jobs, options);
    let width = lines.iter().map(|l| l.name.len()).max().unwrap_or(0);
    for l in &lines {
        let mark = if l.confirmed.is_some() {
            "ok  "
        } else {
            "NOT "
        };
        outln!("{mark}{:width$}  {}", l.name, l.text);
    }
    let confirmed = lines.iter().filter(|l| l.confirmed.is_some()).count();
    let version = lines
        .iter()
        .find_map(|l| l.confirmed.clone())
        .unwrap_or_else(|| "(none answered)".into());
    outln!(
        "\n{confirmed} of {} counterexamples confirmed on memcached {version}",
        lines.len()
    );
    Ok(if confirmed == lines.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

impl ConfirmArgs {
    /// One scenario's counterexample on a real memcached, or with `--all` every
    /// scenario's.
    pub(crate) fn confirm(self, families: &[&'static dyn Family]) -> Result<ExitCode> {
        if self.all {
            let inputs = if self.scenario.is_empty() {
                vec![PathBuf::from("scenarios")]
            } else {
                self.scenario
            };
            let wait = self.max_wait_s.unwrap_or(MAX_WAIT_S);
            let options = options(&[], wait, self.attempts)?;
            return confirm_all(families, &inputs, self.jobs, &options);
        }
        let [path] = &self.scenario[..] else {
            bail!("give one scenario file (or --all for several)");
        };
        let which = Which {
            seed: self.seed,
            schedule: self.schedule.as_deref(),
            clients: self.clients,
        };
        let options = options(
            &self.servers,
            self.max_wait_s.unwrap_or(MAX_WAIT_S),
            self.attempts,
        )?;
        confirm(&load(path, families)?, which, &options)
    }
}
