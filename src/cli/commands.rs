//! One function a subcommand: [`dispatch`] hands each to the file that runs it (`run.rs`,
//! `explore.rs`, `confirm.rs`, `test/`, `serve.rs`, `gate.rs`, `findings.rs`,
//! `merge.rs`), and the scenario loading they share.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::args::Command;
use mcsim::model::Family;
use mcsim::scenario::Scenario;

pub(crate) fn load(path: &Path, families: &[&'static dyn Family]) -> Result<Scenario> {
    Scenario::load(path, families).map_err(|e| anyhow::anyhow!("{e}"))
}

pub(crate) fn load_points(path: &Path, families: &[&'static dyn Family]) -> Result<Vec<Scenario>> {
    mcsim::scenario::load_points(path, families).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The scenario of a file with `--set` fields applied (a sweep file gives its base).
pub(crate) fn load_set(
    path: &Path,
    set: &[String],
    families: &[&'static dyn Family],
) -> Result<Scenario> {
    let s = load(path, families)?;
    if set.is_empty() {
        return Ok(s);
    }
    s.with_set(set).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs one command against `families`.
pub(crate) fn dispatch(command: Command, families: &[&'static dyn Family]) -> Result<ExitCode> {
    match command {
        Command::Run(args) => args.run(families),
        Command::Replay(args) => args.replay(families),
        Command::Explore(args) => args.explore(families),
        Command::Confirm(args) => args.confirm(families),
        Command::Test(args) => crate::cli::program::test(&(*args).options()?),
        Command::Serve(args) => args.serve(),
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
    }
}
