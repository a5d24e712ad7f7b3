//! What `mcsim test` is asked: its options, from the command line's arguments checked
//! first (each bad one a one-line error).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use mcsim::explore::Schedule;
use mcsim::scenario::StrategyKind;
use mcsim_serve::FaultPolicy;

/// What `mcsim test` is asked.
#[derive(Clone)]
pub(crate) struct TestOptions {
    /// Participants each run waits for before it releases a command.
    pub(crate) clients: usize,
    /// Simulated servers.
    pub(crate) servers: usize,
    /// Runs (a replay runs once).
    pub(crate) executions: u64,
    /// Run `i` draws from seed `seed + i`.
    pub(crate) seed: u64,
    pub(crate) strategy: StrategyKind,
    /// Search every schedule with at most this many preemptions instead (by re-running
    /// the program, one schedule a run).
    pub(crate) exhaustive: Option<u32>,
    /// Replay this schedule instead of searching.
    pub(crate) replay: Option<Schedule>,
    /// The trace hash a replay must give.
    pub(crate) expect_hash: Option<String>,
    /// How long a run may take before it is `stuck` and its program is killed.
    pub(crate) timeout: Duration,
    /// Faults by policy, drawn per command from the run's seed.
    pub(crate) faults: FaultPolicy,
    /// Dangers that must happen in some run for a pass to count (`mcsim sometimes`).
    pub(crate) sometimes: Vec<String>,
    /// Keep going after the first failure and count the failing runs.
    pub(crate) all: bool,
    /// Where to write a failure's whole timeline (the output shows a screenful).
    pub(crate) timeline: Option<PathBuf>,
    /// Where to write the result as JSON.
    pub(crate) json: Option<PathBuf>,
    /// Where to write the result as a JUnit report (one test case: the program).
    pub(crate) junit: Option<PathBuf>,
    /// The verdict the program must get (`pass`, `fail`, `vacuous`).
    pub(crate) expect: Option<String>,
    /// The program and its arguments.
    pub(crate) command: Vec<String>,
}

impl TestOptions {
    /// The strategy's name as reports show it (`dfs` for `--exhaustive`).
    pub(super) fn strategy_name(&self) -> &'static str {
        match self.exhaustive {
            Some(_) => "dfs",
            None => self.strategy.name(),
        }
    }
}

impl crate::cli::args::TestArgs {
    /// The options these arguments ask for, or the first argument that is wrong.
    pub(crate) fn options(self) -> Result<TestOptions> {
        let crate::cli::args::TestArgs {
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
            crash,
            skip_second,
            pause,
            pause_ms,
            sometimes,
            all,
            json,
            timeline,
            junit,
            expect,
            command,
        } = self;
        let replay = match replay {
            Some(text) => {
                Some(Schedule::parse(&text).map_err(|e| anyhow::anyhow!("--replay: {e}"))?)
            }
            None => None,
        };
        if !(timeout.is_finite() && timeout > 0.0) {
            bail!("--timeout {timeout}: give a number of seconds above 0");
        }
        let faults = FaultPolicy {
            evict,
            lose_reply,
            lose_request,
            delay: Duration::ZERO,
            pause,
            pause_for: Duration::from_millis(pause_ms),
            crash,
            skip_second,
        };
        for (flag, p) in faults.chances() {
            if !(0.0..=1.0).contains(&p) {
                bail!("{flag} {p}: give a chance from 0 to 1");
            }
        }
        if pause_ms == 0 {
            bail!("--pause-ms 0: give a pause of at least 1 ms");
        }
        Ok(TestOptions {
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
            timeout: Duration::from_secs_f64(timeout),
            faults,
            sometimes,
            all,
            json,
            timeline,
            junit,
            expect,
            command,
        })
    }
}
