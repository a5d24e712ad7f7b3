//! The command line's arguments (clap).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use mcsim::scenario::{Scenario, StrategyKind};

/// Deterministic simulation and model checking of memcached recipes.
#[derive(Parser)]
#[command(name = "mcsim", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(clap::Args)]
pub(crate) struct StrategyOpts {
    /// Strategy (default: the scenario's).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(StrategyKind::NAMES))]
    strategy: Option<String>,
    /// PCT depth (1 to 64, as in a scenario file).
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    depth: usize,
}

impl StrategyOpts {
    pub(crate) fn resolve(&self, scenario: &Scenario) -> StrategyKind {
        match &self.strategy {
            None => scenario.strategy,
            // clap took only a name of `StrategyKind::NAMES`, which all parse.
            Some(name) => StrategyKind::parse(name, self.depth, scenario.strategy.pct_steps())
                .expect("clap accepts only the names StrategyKind parses"),
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scenario's executions; on a failure print the timeline and the replay command.
    Run(RunArgs),
    /// Replay one execution from its seed or its schedule and print its timeline.
    Replay(ReplayArgs),
    /// Explore every schedule of a scenario within bounds (exhaustive, with partial-order
    /// reduction); print the first counterexample or "no violation within bounds".
    Explore(ExploreArgs),
    /// Replay a counterexample against a real memcached (started on a free port, or
    /// `--server`): the same calls in the same order, faults as a real server allows;
    /// prints "confirmed on memcached …" or where the real run diverged and why.
    Confirm(ConfirmArgs),
    /// Test a program in any language: run it again and again against simulated
    /// memcached servers, releasing its named connections' commands one at a time in the
    /// order the strategy picks; a run passes when the program exits 0. The first
    /// failing run is printed with its timeline and the line that replays it.
    Test(Box<TestArgs>),
    /// Serve the simulated memcached on TCP, with injected faults, for clients in any
    /// language; prints `listening on 127.0.0.1:PORT` per server, then serves until
    /// stopped. Control commands (`mcsim evict KEY`, `mcsim advance 30`, …) go over the
    /// same connections.
    Serve(ServeArgs),
    /// Run the whole scenario suite as a gate: exit non-zero if any verdict differs from
    /// the one its scenario expects.
    Check {
        /// Scenario files, or directories of them (every `*.toml` inside).
        #[arg(default_value = "scenarios")]
        dir: Vec<PathBuf>,
        /// Parallel jobs (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Multiplier of every scenario's execution budget (above 0, at most 10000).
        #[arg(long, default_value_t = 1.0, value_parser = parse_budget)]
        budget: f64,
        #[command(flatten)]
        outputs: crate::cli::gate::Outputs,
        /// Also check that each scenario's first seed replays to the same trace hash.
        #[arg(long)]
        check_determinism: bool,
        /// Prove each scenario (not a sweep) by an exhaustive search at its `[explore]`
        /// bounds (clients, preemptions, faults) instead of sampling it.
        #[arg(long)]
        exhaustive: bool,
        /// Start every scenario at seed N instead of its own `[explore] seed` (the
        /// verdicts must not change: each is judged on every invariant its run found).
        #[arg(long)]
        seed: Option<u64>,
        /// Run only shard I of N (`--shard 2/4`): scenario files are dealt out by their
        /// sorted position, so N machines together run the suite once.
        #[arg(long, value_parser = parse_shard)]
        shard: Option<(usize, usize)>,
    },
    /// Measure every recipe's claims and write the findings report (`findings.md`,
    /// `findings.html`, `findings.json`): per variant its verdict, violation rates with
    /// 95% intervals, magnitudes, sweeps, a 2-to-16-client sweep, the shrunk
    /// counterexample, and whether it breaks a real memcached the same way.
    Findings {
        /// Scenario files, or directories of them.
        #[arg(default_value = "scenarios")]
        dir: Vec<PathBuf>,
        /// Where to write the reports.
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// Parallel jobs (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Executions per scenario (at least the scenario's own budget).
        #[arg(long, default_value_t = 1000)]
        executions: u64,
        /// Executions per point of a sweep (at least the scenario's own budget).
        #[arg(long, default_value_t = 200)]
        point_executions: u64,
        /// Executions per client count of each variant's client sweep (0: no sweep).
        #[arg(long, default_value_t = 200)]
        client_executions: u64,
        /// Do not replay the counterexamples on a real memcached.
        #[arg(long)]
        no_confirm: bool,
    },
    /// Combine the results of `check --shard i/n` runs into one summary, one set of
    /// reports and one exit code (every shard must be there, each once).
    Merge {
        /// The shards' JSON reports (`check --json`), and/or their JUnit reports
        /// (`check --junit`, `*.xml`).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// (`--junit` is merged from the JUnit inputs if any are given, else written
        /// from the JSON rows.)
        #[command(flatten)]
        outputs: crate::cli::gate::Outputs,
    },
}

/// The arguments of `mcsim run`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The scenario file.
    pub(crate) scenario: PathBuf,
    /// First seed (default: the scenario's).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Number of executions (default: the scenario's budget; at least 1).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) seeds: Option<u64>,
    #[command(flatten)]
    pub(crate) strategy: StrategyOpts,
    /// Keep going after a failure and count verdicts.
    #[arg(long)]
    pub(crate) all: bool,
    /// Run each of the first seeds twice and compare trace hashes instead.
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
    /// (repeatable; a sweep file then runs as this one point).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub(crate) set: Vec<String>,
    /// Also write one self-contained HTML report of the run (its counterexample as
    /// a timeline, a sweep as plots, metrics as histograms).
    #[arg(long)]
    pub(crate) html: Option<PathBuf>,
}

/// The arguments of `mcsim replay`.
#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// The scenario file.
    pub(crate) scenario: PathBuf,
    /// The seed that produced the execution.
    #[arg(
        long,
        conflicts_with = "schedule",
        required_unless_present = "schedule"
    )]
    pub(crate) seed: Option<u64>,
    /// A schedule string (`mc1:…`).
    #[arg(long)]
    pub(crate) schedule: Option<String>,
    /// Run with this many clients instead of the scenario's (a shrunk counterexample
    /// may need fewer).
    #[arg(long)]
    pub(crate) clients: Option<usize>,
    /// The trace hash the replay must give (printed replay lines carry it): exit 1 with
    /// an error if it gives another, as a line from another mcsim version or kept after
    /// the scenario or the recipe changed would.
    #[arg(long, value_name = "HASH")]
    pub(crate) expect_hash: Option<String>,
    #[command(flatten)]
    pub(crate) strategy: StrategyOpts,
    /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
    /// (repeatable; a sweep file then runs as this one point).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub(crate) set: Vec<String>,
}

/// The arguments of `mcsim explore`.
#[derive(clap::Args)]
pub(crate) struct ExploreArgs {
    /// The scenario file.
    pub(crate) scenario: PathBuf,
    /// Explore with this many clients (default: the file's `[explore] clients`, else
    /// its own count, at most 3).
    #[arg(long)]
    pub(crate) clients: Option<usize>,
    /// At most this many preemptions per execution, or `all` (default: the file's
    /// `[explore] preemptions`, else 2).
    #[arg(long, value_name = "N|all")]
    pub(crate) max_preemptions: Option<Bound>,
    /// At most this many faults per execution, or `all` for only the fault plan's
    /// budgets (default: the file's `[explore] faults`, else 2).
    #[arg(long, value_name = "N|all")]
    pub(crate) max_faults: Option<Bound>,
    /// Stop after this many executions (then the result is not exhaustive; at least 1).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) max_executions: Option<u64>,
    /// Turn the partial-order reduction off (explore every interleaving).
    #[arg(long)]
    pub(crate) no_reduction: bool,
    /// Turn the visited-state cache off (expand a state every time it is reached).
    #[arg(long)]
    pub(crate) no_cache: bool,
    /// Keep every state apart even where the model declares its clients
    /// interchangeable (no symmetry reduction).
    #[arg(long)]
    pub(crate) no_symmetry: bool,
    /// Tell a client's states apart by everything it observed, even where its code
    /// declares it remembers less (`Client::remember_only`).
    #[arg(long)]
    pub(crate) whole_memory: bool,
    /// Run each call only at the earliest instant of its latency window, not also
    /// where the window crosses a second on its server or its client's clock.
    #[arg(long)]
    pub(crate) no_timing: bool,
    /// Search this many draws of the workload, one after the other: in draw k of N
    /// each client's first call runs at k/N of its latency window, which seeds what
    /// workloads draw from their start time (default: the file's `[explore] draws`,
    /// else 1).
    #[arg(long)]
    pub(crate) draws: Option<u32>,
    /// Search at the bounds at once instead of with at most 0, then 1, then 2
    /// preemptions and faults first (the smallest counterexample first).
    #[arg(long)]
    pub(crate) no_iterative: bool,
    /// Search at most this many tick-phase classes when the scenario does not pin
    /// `servers.phase_ms` (each class is a search of its own).
    /// (default: the scenario's `[explore] phases`, else at least 8 and every class
    /// while the searches so far took fewer than 20,000 executions; 1 to 1000)
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub(crate) max_phases: Option<usize>,
    /// Keep exploring after a violation and count the failing executions.
    #[arg(long)]
    pub(crate) all: bool,
    /// Threads sharing the search (default: the number of cores); the verdict and
    /// the first counterexample are the same on any number.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub(crate) jobs: Option<usize>,
    /// Set a field of the scenario file, e.g. `--set params.rate_per_s=5`
    /// (repeatable; a sweep file then runs as this one point).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub(crate) set: Vec<String>,
}

/// The arguments of `mcsim confirm`.
#[derive(clap::Args)]
pub(crate) struct ConfirmArgs {
    /// The scenario file; with `--all`, scenario files or directories of them
    /// (default `scenarios`).
    #[arg(required_unless_present = "all")]
    pub(crate) scenario: Vec<PathBuf>,
    /// Confirm the counterexample of every scenario that is not a sweep and expects a
    /// violation, and end with `N of M counterexamples confirmed on memcached …`
    /// (exit status 1 unless all are).
    #[arg(long, conflicts_with_all = ["seed", "schedule", "clients", "servers"])]
    pub(crate) all: bool,
    /// With `--all`: scenarios confirmed at once, each against its own memcached.
    #[arg(long, default_value_t = crate::cli::confirm::ALL_JOBS)]
    pub(crate) jobs: usize,
    /// The execution of this seed (default: the scenario's first failure, shrunk).
    #[arg(long, conflicts_with = "schedule")]
    pub(crate) seed: Option<u64>,
    /// The execution of this schedule (as `replay` prints it).
    #[arg(long)]
    pub(crate) schedule: Option<String>,
    /// Clients, as in the replay line the schedule came from.
    #[arg(long)]
    pub(crate) clients: Option<usize>,
    /// A memcached to use instead of starting one (repeat for each simulated server).
    #[arg(long = "server", value_name = "HOST:PORT")]
    pub(crate) servers: Vec<std::net::SocketAddr>,
    /// Real seconds all virtual waits together may take (default 120); longer ones are
    /// shortened, and a replay that then diverges ends `not confirmed: waits shortened`
    /// with exit status 3.
    #[arg(long)]
    pub(crate) max_wait_s: Option<f64>,
    /// Replays in all, each on freshly started servers, while one diverges after a
    /// call memcached's clock did not hold in its simulated second (its timer skipped
    /// that second, or the answer came after the next one could have begun); every
    /// replay that ran is reported. With `--server`, one.
    #[arg(long, default_value_t = crate::cli::confirm::ATTEMPTS, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) attempts: u32,
}

/// The arguments of `mcsim test`.
#[derive(clap::Args)]
pub(crate) struct TestArgs {
    /// How many participants the program starts. Each run waits for this many
    /// connections to name themselves before it releases a command (the program
    /// reads it as `MCSIM_CLIENTS`); a run in which fewer did is not judged.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub(crate) clients: usize,
    /// Simulated servers (`MCSIM_SERVERS` lists them; default 1, or the scenario's).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=16))]
    pub(crate) servers: Option<usize>,
    /// Run in the surroundings a scenario file sets: its `[servers]` (count and
    /// settings), its `[faults]` (each kind's chance, budget per run and keys, and the
    /// delays) and its `timing.latency_us` (how long each command takes in virtual
    /// time). The fields of its recipe are the in-process model's and are not used; a
    /// flag given here overrides the file.
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,
    /// The first server's port, the others on the ports after it (default: free ones).
    /// A client that spreads its keys over servers hashes their addresses, so a replay
    /// line with two servers or more names the first port its run had.
    #[arg(long, value_name = "PORT")]
    pub(crate) port: Option<u16>,
    /// Runs of the program (at least 1; default 100, or a cap of 10,000 with
    /// `--exhaustive`).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) executions: Option<u64>,
    /// Search every schedule of the participants' commands with at most
    /// `--max-preemptions` preemptions, one schedule a run, instead of sampling.
    #[arg(long, conflicts_with = "strategy")]
    pub(crate) exhaustive: bool,
    /// With `--exhaustive`: the preemption bound.
    #[arg(long, default_value_t = 2, requires = "exhaustive")]
    pub(crate) max_preemptions: u32,
    /// With `--exhaustive`: run every interleaving of the participants' steps apart,
    /// not one of each set of orders that differ only in steps that commute (two
    /// commands on different keys, or two reads).
    #[arg(long, requires = "exhaustive")]
    pub(crate) no_reduction: bool,
    /// First seed: run `i` draws from seed + i (`MCSIM_SEED`).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Strategy.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(StrategyKind::NAMES))]
    pub(crate) strategy: Option<String>,
    /// PCT depth (1 to 64).
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub(crate) depth: usize,
    /// Replay one run from its schedule (`mc1:…`, as a failure prints it).
    #[arg(long)]
    pub(crate) replay: Option<String>,
    /// With `--replay`: the trace hash the replay must give (exit 2 otherwise).
    #[arg(long, requires = "replay")]
    pub(crate) expect_hash: Option<String>,
    /// Seconds a run may take before it is stuck and its program is killed.
    #[arg(long, allow_negative_numbers = true, default_value_t = 30.0)]
    pub(crate) timeout: f64,
    /// Runs of the program a failure's shrinking may make at most (0: the failure is
    /// shown as found, after the run that checks it replays).
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub(crate) shrink_runs: u64,
    /// Before each command, evict one live key of its server with this chance
    /// (drawn from the run's seed).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) evict: f64,
    /// Lose a participant's reply with this chance: the server applies the command,
    /// and the connection breaks before the reply arrives (the client sees the error
    /// at once and reconnects: the participant is awaited on its new connection).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) lose_reply: f64,
    /// Lose a participant's request with this chance: the server never sees the
    /// command, and the connection breaks (the client reconnects, as above).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) lose_request: f64,
    /// Before a participant's command, crash its server with this chance: it loses its
    /// items and every connection to it closes (the command's before it runs; each
    /// client sees the error and reconnects, as above); it restarts empty after
    /// `--restart-after-ms` (at once by default), refusing connections meanwhile.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) crash: f64,
    /// How long a crashed server stays down, in milliseconds of virtual time (default 0,
    /// or the scenario's `restart_after_ms`).
    #[arg(long, value_name = "MS")]
    pub(crate) restart_after_ms: Option<u64>,
    /// Before a participant's command, its server leaves with this chance (needs two
    /// servers or more): its connections close and new ones are refused until it is
    /// back, after `--rejoin-after-ms`, with the items it had (a client that dropped a
    /// dead server from its list and took it back).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) leave: f64,
    /// How long a server that left stays away, in milliseconds of virtual time
    /// (default 1000, or the scenario's `rejoin_after_ms`).
    #[arg(long, value_name = "MS")]
    pub(crate) rejoin_after_ms: Option<u64>,
    /// Before a participant's command, its server's clock skips a second with this
    /// chance (a late clock tick: its TTLs end a second early).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) skip_second: f64,
    /// Keep going after the first failure (reported and shrunk as without it) and
    /// count the failing runs: the failure rate with its 95% interval.
    #[arg(long)]
    pub(crate) all: bool,
    /// A danger that must happen in some run for a pass to count: the program says
    /// `mcsim sometimes NAME` when it does (repeatable); none: `vacuous`, exit 1.
    #[arg(long = "sometimes", value_name = "NAME")]
    pub(crate) sometimes: Vec<String>,
    /// Before a participant's command, pause it with this chance (a GC pause, a slow
    /// disk): its command waits `--pause-ms` of virtual time while the others go on
    /// (its TTLs may run out meanwhile).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub(crate) pause: f64,
    /// How long a pause lasts, in milliseconds (default 6000, or the scenario's
    /// `pause_ms`).
    #[arg(long, value_name = "MS")]
    pub(crate) pause_ms: Option<u64>,
    /// Also write a JUnit report: one test case, the program, failed with its timeline
    /// and replay lines, or passed with what the runs covered.
    #[arg(long)]
    pub(crate) junit: Option<PathBuf>,
    /// Also write the result as the HTML page `check` writes: one row, and a failure's
    /// shrunk run as a swimlane (a lane per participant, a box per command, the faults
    /// and the failure marked) with its replay lines.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Also write the result as JSON: the runs, the verdict, and the failure with its
    /// schedule, replay line and timeline.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Write a failure's whole timeline to this file (the output shows a screenful
    /// of it around the failure).
    #[arg(long)]
    pub(crate) timeline: Option<PathBuf>,
    /// The verdict the program must get (`pass`, `fail` or `vacuous`): exit 0 when it
    /// does, 1 when it gets another (a broken variant kept as a test that mcsim finds
    /// it).
    #[arg(long, value_parser = ["pass", "fail", "vacuous"])]
    pub(crate) expect: Option<String>,
    /// The program to test and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(crate) command: Vec<String>,
}

/// The arguments of `mcsim serve`.
#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// The first server's port; `0` picks free ports (printed).
    #[arg(long, default_value_t = mcsim_serve::DEFAULT_PORT)]
    pub(crate) port: u16,
    /// Servers, on consecutive ports.
    #[arg(long, default_value_t = 1)]
    pub(crate) servers: usize,
    /// `real`: the clock follows real time; `manual`: it moves only with
    /// `mcsim advance` (default in lockstep).
    #[arg(long, value_parser = ["real", "manual"])]
    pub(crate) clock: Option<String>,
    /// Chance that a command's reply is dropped after the server applied it.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) lose_reply: f64,
    /// Chance that a key of the server is evicted before a command.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) evict: f64,
    /// Hold every reply this many milliseconds.
    #[arg(long, default_value_t = 0)]
    pub(crate) delay_ms: u64,
    /// Seeds the fault policy and the lockstep order.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Release the commands of N client connections one at a time, in an order drawn
    /// from the seed (name connections with `mcsim name X` for identical traces).
    #[arg(long, value_name = "N")]
    pub(crate) lockstep: Option<usize>,
    /// In lockstep, pass over a participant that sends nothing for this long.
    #[arg(long, default_value_t = 2000)]
    pub(crate) lockstep_wait_ms: u64,
    /// Write the trace here as it happens (one line per command, fault and control
    /// command, in the timeline format).
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// Let a read of a key starting with PREFIX name the connection (for lockstep),
    /// for client libraries that cannot send `mcsim name X`: `--name-key mcsim:name:`
    /// and `get mcsim:name:t1`, as `get`, `gets`, `gat`, `mg` or a binary GET or GAT of
    /// any kind, answered as a miss. Pick a prefix none of the recipe's keys start
    /// with; without it no read is intercepted.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) name_key: Option<String>,
    /// Trace lines kept in memory for `mcsim trace` (the oldest leave first; the file
    /// of `--trace` has every line).
    #[arg(long, default_value_t = mcsim_serve::DEFAULT_TRACE_WINDOW)]
    pub(crate) trace_window: usize,
    /// Memory limit per server, MiB (memcached's -m).
    #[arg(long, default_value_t = 64)]
    pub(crate) memory_mb: u64,
    /// Largest item, bytes (memcached's -I).
    #[arg(long, default_value_t = 1024 * 1024)]
    pub(crate) item_size_max: u32,
    /// Largest slab chunk, bytes (memcached's -o slab_chunk_max); an --item-size-max
    /// below 512 KiB needs it as low. Settings memcached refuses are refused in its
    /// words, with its exit status 64.
    #[arg(long, default_value_t = mcsim::server::SLAB_CHUNK_MAX_DEFAULT)]
    pub(crate) slab_chunk_max: u32,
    /// Event-loop workers serving the connections (memcached's -t); under
    /// --lockstep or --delay-ms each connection has a thread of its own instead.
    #[arg(long, default_value_t = mcsim_serve::DEFAULT_THREADS as u64, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub(crate) threads: u64,
}

pub(crate) fn parse_budget(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 && b <= 10_000.0 => Ok(b),
        Ok(_) => Err(format!("{s} is not above 0 and at most 10000")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

pub(crate) fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s.split_once('/').ok_or("expected I/N, e.g. 2/4")?;
    let i: usize = i.parse().map_err(|_| format!("bad shard index {i:?}"))?;
    let n: usize = n.parse().map_err(|_| format!("bad shard count {n:?}"))?;
    if n == 0 || i == 0 || i > n {
        return Err(format!("shard {i}/{n}: need 1 <= I <= N"));
    }
    Ok((i, n))
}

/// A bound on the command line: a number, or `all` for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound(pub Option<u32>);

impl std::str::FromStr for Bound {
    type Err = String;

    fn from_str(s: &str) -> Result<Bound, String> {
        if s == "all" {
            return Ok(Bound(None));
        }
        s.parse()
            .map(|n| Bound(Some(n)))
            .map_err(|_| format!("{s:?} is not a bound: give a number, or `all`"))
    }
}
