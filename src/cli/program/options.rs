//! What `mcsim test` is asked: its options, from the command line's arguments checked
//! first (each bad one a one-line error).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use mcsim::explore::Schedule;
use mcsim::fault::{FaultKind, FaultPlan};
use mcsim::scenario::{StrategyKind, Surroundings};
use mcsim::server::ServerConfig;
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
    /// The search runs one order of each set that differ only in steps that commute
    /// (sleep sets): `--exhaustive` without `--no-reduction` or faults, whose draws
    /// depend on the run.
    pub(crate) reduce: bool,
    /// Replay this schedule instead of searching.
    pub(crate) replay: Option<Schedule>,
    /// The trace hash a replay must give.
    pub(crate) expect_hash: Option<String>,
    /// How long a run may take before it is `stuck` and its program is killed.
    pub(crate) timeout: Duration,
    /// Runs a failure's shrinking may make at most.
    pub(crate) shrink_runs: u64,
    /// Faults by policy, drawn per command from the run's seed.
    pub(crate) faults: FaultPolicy,
    /// Each server's settings.
    pub(crate) server: ServerConfig,
    /// The first server's port (`None`: free ones).
    pub(crate) port: Option<u16>,
    /// How long each command takes in virtual time, at least and at most.
    pub(crate) latency: (Duration, Duration),
    /// The scenario file the servers, faults and latency come from, if one was given.
    pub(crate) scenario: Option<Surroundings>,
    /// The arguments that set the servers and the faults, as a replay line repeats them
    /// (`--scenario FILE --crash 0.1 …`).
    pub(crate) world_args: Vec<String>,
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
    /// Where to write the result as the HTML page `check` writes.
    pub(crate) html: Option<PathBuf>,
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
            scenario,
            port,
            executions,
            exhaustive,
            max_preemptions,
            no_reduction,
            seed,
            strategy,
            depth,
            replay,
            expect_hash,
            timeout,
            shrink_runs,
            evict,
            lose_reply,
            lose_request,
            crash,
            restart_after_ms,
            leave,
            rejoin_after_ms,
            skip_second,
            pause,
            pause_ms,
            sometimes,
            all,
            json,
            timeline,
            junit,
            html,
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
        let scenario = match &scenario {
            Some(path) => Some(Surroundings::load(path)?),
            None => None,
        };
        let (faults, world_args) = fault_policy(
            scenario.as_ref(),
            &[
                (FaultKind::Evict, evict),
                (FaultKind::ReplyLost, lose_reply),
                (FaultKind::RequestLost, lose_request),
                (FaultKind::Crash, crash),
                (FaultKind::SkipSecond, skip_second),
                (FaultKind::Leave, leave),
                (FaultKind::Pause, pause),
            ],
            [restart_after_ms, rejoin_after_ms, pause_ms],
        )?;
        let servers = servers.unwrap_or(scenario.as_ref().map_or(1, |s| s.servers));
        if servers > 16 {
            bail!(
                "{}: {servers} servers; mcsim test runs at most 16",
                scenario
                    .as_ref()
                    .map_or(String::new(), |s| s.path.display().to_string())
            );
        }
        if faults.rule(FaultKind::Leave).is_some() && servers < 2 {
            match &scenario {
                Some(s)
                    if faults.plan.rule(FaultKind::Leave) == s.faults.rule(FaultKind::Leave) =>
                {
                    bail!(
                        "{}",
                        s.error("faults.leave", "a server leaving needs two servers or more (the program runs with 1: give --servers 2)")
                    )
                }
                _ => bail!("--leave: a server leaving needs two servers or more: give --servers 2"),
            }
        }
        let mut world_args = world_args;
        world_args.splice(0..0, ["--servers".to_string(), servers.to_string()]);
        let (server, latency) = match &scenario {
            Some(s) => (s.server.clone(), s.latency),
            None => (ServerConfig::default(), mcsim_serve::COMMAND_TIME),
        };
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
            reduce: exhaustive && !no_reduction && !faults.any(),
            replay,
            expect_hash,
            timeout: Duration::from_secs_f64(timeout),
            shrink_runs,
            faults,
            server,
            port,
            latency,
            scenario,
            world_args,
            sometimes,
            all,
            json,
            timeline,
            junit,
            html,
            expect,
            command,
        })
    }
}

/// The fault policy of a run: a scenario's `[faults]` (or none), each kind given by a flag
/// with a chance above 0 allowed with that chance and no budget (over the file's rule),
/// and the delays given by flags over the file's (or the defaults); with the arguments
/// that give the same policy again. A kind the servers cannot inject is an error at its
/// line of the file.
fn fault_policy(
    scenario: Option<&Surroundings>,
    chances: &[(FaultKind, f64)],
    [restart, rejoin, pause]: [Option<u64>; 3],
) -> Result<(FaultPolicy, Vec<String>)> {
    let mut args = Vec::new();
    let mut plan = match scenario {
        Some(s) => {
            for (kind, _) in &s.faults.rules {
                if !FaultPolicy::KINDS.contains(kind) {
                    let why = match kind {
                        FaultKind::Die => "a client's process dying",
                        _ => "a value over the item limit",
                    };
                    bail!(
                        "{}",
                        s.error(
                            &format!("faults.{}", kind.name()),
                            format!("{why} happens in the client's own process: mcsim test cannot inject it into a program (remove it to run the other faults)")
                        )
                    );
                }
            }
            args.extend(["--scenario".to_string(), s.path.display().to_string()]);
            s.faults.clone()
        }
        // A crash restarts at once unless told otherwise; pauses last 6 s.
        None => FaultPlan {
            restart_after: Duration::ZERO,
            pause_for: Duration::from_millis(6000),
            ..FaultPlan::none()
        },
    };
    for &(kind, p) in chances {
        let flag = FaultPolicy::flag(kind);
        if !(0.0..=1.0).contains(&p) {
            bail!("{flag} {p}: give a chance from 0 to 1");
        }
        if p > 0.0 {
            plan = plan.allow(kind, u32::MAX, p);
            args.extend([flag.to_string(), p.to_string()]);
        }
    }
    if pause == Some(0) {
        bail!("--pause-ms 0: give a pause of at least 1 ms");
    }
    for (flag, ms, delay) in [
        ("--restart-after-ms", restart, &mut plan.restart_after),
        ("--rejoin-after-ms", rejoin, &mut plan.rejoin_after),
        ("--pause-ms", pause, &mut plan.pause_for),
    ] {
        let Some(ms) = ms else { continue };
        *delay = Duration::from_millis(ms);
        args.extend([flag.to_string(), ms.to_string()]);
    }
    if plan.rule(FaultKind::Pause).is_some() && pause.is_none() && scenario.is_none() {
        // The pause's length is part of the replay line even when it is the default.
        args.extend([
            "--pause-ms".to_string(),
            plan.pause_for.as_millis().to_string(),
        ]);
    }
    let policy = FaultPolicy {
        plan,
        delay: Duration::ZERO,
    };
    Ok((policy, args))
}
