//! `mcsim confirm`: the counterexample of a scenario, replayed on a real memcached.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::explore::Schedule;
use crate::real::{ConfirmOptions, Outcome};
use crate::run::{self, RunOptions};
use crate::scenario::Scenario;

pub(crate) fn confirm(
    s: &Scenario,
    seed: Option<u64>,
    schedule: Option<&str>,
    clients: Option<usize>,
    servers: &[std::net::SocketAddr],
    max_wait_s: f64,
) -> Result<ExitCode> {
    if !(max_wait_s.is_finite() && (0.0..=3600.0).contains(&max_wait_s)) {
        bail!("--max-wait-s {max_wait_s}: give 0 to 3600 seconds");
    }
    let s = match clients {
        Some(n) => s.with_clients(n).map_err(|e| anyhow::anyhow!("{e}"))?,
        None => s.clone(),
    };
    let (execution, what) = match (seed, schedule) {
        (Some(seed), _) => (run::run_seed(&s, s.strategy, seed), format!("seed {seed}")),
        (None, Some(text)) => {
            let schedule = Schedule::parse(text).context("reading --schedule")?;
            (run::replay(&s, &schedule), "the schedule given".to_string())
        }
        (None, None) => {
            let report = run::run(&s, &RunOptions::from_scenario(&s));
            let Some(f) = report.first_failure else {
                outln!(
                    "{}: no failure in {} executions: nothing to confirm",
                    s.name,
                    report.executions
                );
                return Ok(ExitCode::FAILURE);
            };
            let clients = f.clients;
            let s2 = s
                .with_clients(clients)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            (
                run::replay(&s2, &f.execution.schedule),
                format!("its first failure, shrunk to {clients} clients"),
            )
        }
    };
    if execution.verdict.is_pass() {
        outln!(
            "{}: {what} passes in simulation: nothing to confirm",
            s.name
        );
        return Ok(ExitCode::FAILURE);
    }
    let label = execution.verdict.label();
    outln!(
        "{}: {what} breaks {label} in simulation; replaying its {} calls on memcached",
        s.name,
        execution.calls
    );
    let options = ConfirmOptions {
        servers: servers.to_vec(),
        max_wait: Duration::from_secs_f64(max_wait_s),
        phase: execution
            .phase
            .or_else(|| s.config.servers.first().map(|c| c.phase))
            .unwrap_or_default(),
    };
    let c = crate::real::confirm(&execution, &s.config, &options)?;
    for line in &c.lines {
        outln!("{line}");
    }
    if !c.shortened.is_zero() {
        outln!(
            "(virtual waits longer than the {max_wait_s} s cap: {:.3} s of them were not waited)",
            c.shortened.as_secs_f64()
        );
    }
    match c.outcome {
        Outcome::Confirmed { version } => {
            outln!(
                "confirmed on memcached {version}: every reply as in the simulation, so the recipe sees the same and {label} breaks the same way"
            );
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Diverged { detail, .. } => {
            outln!("diverged: {detail}");
            Ok(ExitCode::FAILURE)
        }
    }
}
