//! `mcsim test -- CMD`: a program in any language, run again and again against simulated
//! memcached servers (`mcsim serve`'s, reset before each run), with the commands of its
//! participating connections released one at a time in the order a strategy picks, the
//! same strategies `run` uses. A connection takes part by naming itself (`mcsim name X`,
//! or a read of `mcsim:name:X` in whatever form its client library sends it); the
//! others run as soon as no participant has a command on its way.
//!
//! A run passes when the program exits 0 and declared no failure (`mcsim fail MESSAGE`, or
//! a section it said it entered, `mcsim enter SECTION`, while another participant was
//! inside: see `examples/python-lock/mcsim_control.py`). The first failing run is replayed from its
//! schedule at once: a replay that gives another trace means the program is not
//! deterministic under a fixed schedule, which is reported as such and never judged.
//! Otherwise the failure is printed with its timeline and the line that replays it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use mcsim::clock::VirtualTime;
use mcsim::exhaustive::Dfs;
use mcsim::explore::{CallOption, Choice, Options, Replay, Schedule, Strategy};
use mcsim::scenario::StrategyKind;
use mcsim::trace::fnv1a;
use mcsim_serve::{Chooser, ClockMode, FaultPolicy, Running, ServeConfig};

/// What `mcsim test` is asked.
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
    /// Where to write the result as JSON.
    pub(crate) json: Option<PathBuf>,
    /// Where to write the result as a JUnit report (one test case: the program).
    pub(crate) junit: Option<PathBuf>,
    /// The program and its arguments.
    pub(crate) command: Vec<String>,
}

impl TestOptions {
    /// The strategy's name as reports show it (`dfs` for `--exhaustive`).
    fn strategy_name(&self) -> &'static str {
        match self.exhaustive {
            Some(_) => "dfs",
            None => self.strategy.name(),
        }
    }
}

/// The prefix under which a read names a connection.
const NAME_KEY: &str = "mcsim:name:";

/// What one run of the program gave.
struct Outcome {
    /// `None`: it exited 0 and declared no failure.
    failure: Option<String>,
    /// What failed: (it was stuck, it exited non-zero, it declared a failure).
    kind: (bool, bool, bool),
    /// The serve trace of the run.
    trace: Vec<String>,
    /// The choices the strategy made, in order.
    schedule: Schedule,
    /// Where a replayed schedule could not be followed.
    diverged: Option<String>,
    /// Commands released in turn.
    released: usize,
    /// Of those, the ones that preempted the participant that ran before (it was waiting
    /// too).
    preemptions: usize,
    /// The participants' names.
    names: Vec<String>,
    /// What the program declared: its figures and the dangers it saw.
    metrics: Vec<(String, f64)>,
    sometimes: Vec<String>,
}

impl Outcome {
    /// Commands of connections that never named themselves, run while the participants
    /// were running (between the first participant's command and the last one's), by
    /// connection: they ran outside the schedule, so their place among the participants'
    /// is not the strategy's to choose, and a replay need not put them there again.
    fn unscheduled(&self) -> Vec<(String, usize)> {
        let who = |line: &String| line.split_whitespace().nth(2).map(str::to_string);
        let named = |w: &str| self.names.iter().any(|n| n == w);
        let positions: Vec<usize> = (0..self.trace.len())
            .filter(|&i| who(&self.trace[i]).is_some_and(|w| named(&w)))
            .collect();
        let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
            return Vec::new();
        };
        let mut out: Vec<(String, usize)> = Vec::new();
        for line in &self.trace[first..last] {
            let Some(w) = who(line) else { continue };
            let connection = w.starts_with('c') && w[1..].chars().all(|c| c.is_ascii_digit());
            if !connection || line.contains("  CONTROL ") {
                continue;
            }
            match out.iter_mut().find(|(c, _)| *c == w) {
                Some((_, n)) => *n += 1,
                None => out.push((w, 1)),
            }
        }
        out
    }

    fn hash(&self) -> String {
        format!("{:016x}", fnv1a(self.trace.join("\n").as_bytes()))
    }

    /// Faults the servers injected (their `FAULT` lines).
    fn faults(&self) -> usize {
        self.trace.iter().filter(|l| l.contains("  FAULT ")).count()
    }
}

/// The choices a run's chooser made, read after the run.
#[derive(Default)]
struct Record {
    /// The participants, by client number.
    names: Vec<String>,
    choices: Vec<Choice>,
    diverged: Option<String>,
    /// Choices that ran another participant while the last one to run was waiting too.
    preemptions: usize,
}

/// The strategy of a run, kept by the caller across runs (an exhaustive search follows
/// its tree over them) and lent to the run's chooser.
type SharedStrategy = Arc<Mutex<Box<dyn Strategy + Send>>>;

fn shared(strategy: Box<dyn Strategy + Send>) -> SharedStrategy {
    Arc::new(Mutex::new(strategy))
}

/// A strategy choosing among the waiting participants: each participant is a client
/// (numbered in the order of their names when the first command is released, later
/// ones after them), its held command a call that may run now.
struct StrategyChooser {
    strategy: SharedStrategy,
    names: Vec<String>,
    record: Arc<Mutex<Record>>,
}

impl StrategyChooser {
    fn client(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }
}

impl Chooser for StrategyChooser {
    fn choose(&mut self, waiting: &[&str]) -> usize {
        let record = Arc::clone(&self.record);
        let mut record = record.lock().expect("the record is never poisoned");
        let step = record.choices.len() as u64;
        let mut calls: Vec<CallOption> = waiting
            .iter()
            .map(|name| {
                let at = VirtualTime(step);
                CallOption {
                    client: self.client(name),
                    earliest: at,
                    latest: at,
                    footprint: None,
                    edges: Vec::new(),
                }
            })
            .collect();
        calls.sort_by_key(|c| c.client);
        let options = Options {
            step,
            clients: self.names.len(),
            calls: &calls,
            faults: &[],
            eviction_possible: false,
            state: None,
            ranks: None,
            summarized: false,
        };
        let mut strategy = self.strategy.lock().expect("never poisoned");
        let choice = match strategy.decided() {
            Some(decided) => Some(decided.choice),
            None => strategy.choose(&options),
        };
        drop(strategy);
        let client = match choice {
            Some(Choice::Run { client, .. }) => Some(client),
            _ => None,
        };
        let picked = client.and_then(|c| {
            let name = self.names.get(c)?;
            waiting.iter().position(|w| w == name)
        });
        let index = match picked {
            Some(i) => i,
            None => {
                if record.diverged.is_none() {
                    record.diverged = Some(format!(
                        "step {step}: the schedule runs {}, but only {} wait",
                        client.map_or("nothing".into(), |c| format!("client {c}")),
                        waiting.join(", ")
                    ));
                }
                0
            }
        };
        let client = self.client(waiting[index]);
        if let Some(Choice::Run { client: last, .. }) = record.choices.last()
            && *last != client
            && waiting.contains(&self.names[*last].as_str())
        {
            record.preemptions += 1;
        }
        record.choices.push(Choice::Run { client, delay: 0 });
        record.names.clone_from(&self.names);
        index
    }
}

/// Starts the servers `mcsim test` runs the program against.
fn start(options: &TestOptions) -> Result<Running> {
    let config = ServeConfig {
        port: 0,
        servers: options.servers,
        server: mcsim::server::ServerConfig::default(),
        clock: ClockMode::Manual,
        faults: options.faults,
        seed: options.seed,
        lockstep: Some(options.clients),
        lockstep_wait: options.timeout,
        trace: None,
        trace_window: mcsim_serve::DEFAULT_TRACE_WINDOW,
        name_key: Some(NAME_KEY.into()),
        threads: mcsim_serve::DEFAULT_THREADS,
    };
    mcsim_serve::start(&config).context("cannot start the simulated servers")
}

/// One run of the program, its commands released as `strategy` picks.
fn run_once(
    running: &Running,
    options: &TestOptions,
    strategy: &SharedStrategy,
    (execution, seed): (u64, u64),
) -> Result<Outcome> {
    strategy.lock().expect("never poisoned").begin(execution);
    let record = Arc::new(Mutex::new(Record::default()));
    let chooser = StrategyChooser {
        strategy: strategy.clone(),
        names: Vec::new(),
        record: record.clone(),
    };
    running.reset(seed, Some((options.clients, Box::new(chooser))));
    let servers: Vec<String> = running.addrs().iter().map(|a| a.to_string()).collect();
    let (program, args) = options.command.split_first().context("no command given")?;
    let mut child = Command::new(program)
        .args(args)
        .env("MCSIM_SERVERS", servers.join(","))
        .env("MCSIM_SEED", seed.to_string())
        .env("MCSIM_EXECUTION", execution.to_string())
        .env("MCSIM_CLIENTS", options.clients.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {program:?}"))?;
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > options.timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    // The program's connections close as it exits; their last lines follow.
    let quiet_by = Instant::now() + Duration::from_secs(2);
    while running.connections() > 0 && Instant::now() < quiet_by {
        std::thread::sleep(Duration::from_millis(1));
    }
    let kind_of_exit = (status.is_none(), status.is_some_and(|s| !s.success()));
    let exit = match status {
        Some(s) if s.success() => None,
        Some(s) => Some(format!("{s}{}", last_lines(&stderr))),
        None => Some(format!(
            "stuck: still running after {:?} (killed){}",
            options.timeout,
            last_lines(&stderr)
        )),
    };
    // What the program declared (`mcsim fail`, a section entered twice) fails it too.
    let declared = running.failures();
    let failure = match (exit, declared.is_empty()) {
        (exit, true) => exit,
        (exit, false) => Some(format!(
            "{}{}",
            declared.join("; "),
            exit.map_or(String::new(), |e| format!("; the program: {e}"))
        )),
    };
    let record = std::mem::take(&mut *record.lock().expect("never poisoned"));
    let (metrics, sometimes) = running.declared();
    Ok(Outcome {
        metrics,
        sometimes,
        failure,
        kind: (kind_of_exit.0, kind_of_exit.1, !declared.is_empty()),
        trace: running.trace(),
        released: record.choices.len(),
        preemptions: record.preemptions,
        names: record.names,
        schedule: Schedule {
            phase: None,
            choices: record.choices,
        },
        diverged: record.diverged,
    })
}

/// The last lines of what the program wrote on its standard error, indented.
fn last_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = &lines[lines.len().saturating_sub(8)..];
    tail.iter().map(|l| format!("\n    {l}")).collect()
}

/// The command line that replays `schedule`, run with `seed`.
fn replay_line(options: &TestOptions, seed: u64, schedule: &Schedule, hash: &str) -> String {
    let command: Vec<String> = options.command.iter().map(|a| quote(a)).collect();
    let mut faults = String::new();
    if options.faults.evict > 0.0 {
        faults.push_str(&format!(" --evict {}", options.faults.evict));
    }
    if options.faults.lose_reply > 0.0 {
        faults.push_str(&format!(" --lose-reply {}", options.faults.lose_reply));
    }
    if options.faults.pause > 0.0 {
        faults.push_str(&format!(
            " --pause {} --pause-ms {}",
            options.faults.pause,
            options.faults.pause_for.as_millis()
        ));
    }
    format!(
        "mcsim test --clients {} --servers {} --seed {seed}{faults} --replay '{schedule}' --expect-hash {hash} -- {}",
        options.clients,
        options.servers,
        command.join(" ")
    )
}

/// What `--json` writes.
#[derive(serde::Serialize)]
struct Report<'a> {
    command: &'a [String],
    clients: usize,
    servers: usize,
    strategy: &'static str,
    seed: u64,
    /// Runs made (up to and with the first failing one).
    runs: u64,
    /// `pass` or `fail`.
    verdict: &'static str,
    commands_released: usize,
    faults_injected: usize,
    /// With `--exhaustive`: whether the search covered every schedule within its bound.
    complete: Option<bool>,
    /// With `--all`: the failing runs, and the 95% interval of the failure rate.
    failing: Option<u64>,
    rate_interval: Option<(f64, f64)>,
    /// By name, the figures the program declared: runs, min, mean, max.
    metrics: BTreeMap<String, Figure>,
    /// By name, the runs in which the program saw the danger.
    sometimes: BTreeMap<String, u64>,
    failure: Option<FailureReport>,
}

/// A declared figure over runs.
#[derive(serde::Serialize, Default)]
struct Figure {
    runs: u64,
    min: f64,
    mean: f64,
    max: f64,
}

impl Figure {
    fn add(&mut self, v: f64) {
        if self.runs == 0 {
            (self.min, self.max) = (v, v);
        }
        (self.min, self.max) = (self.min.min(v), self.max.max(v));
        self.mean += (v - self.mean) / (self.runs + 1) as f64;
        self.runs += 1;
    }
}

#[derive(serde::Serialize)]
struct FailureReport {
    run: u64,
    seed: u64,
    message: String,
    schedule: String,
    trace_hash: String,
    replay: String,
    timeline: Vec<String>,
}

/// Writes the JUnit report of the test, when asked: one test case, the program, failed
/// with `failure` (its message and its timeline and replay lines) or passed with `passed`.
fn write_junit(
    options: &TestOptions,
    started: Instant,
    failure: Option<(&str, &str)>,
    passed: &str,
) -> Result<()> {
    let Some(path) = &options.junit else {
        return Ok(());
    };
    use mcsim::report::xml_escape;
    let name = xml_escape(&options.command.join(" "));
    let time = started.elapsed().as_secs_f64();
    let body = match failure {
        Some((message, detail)) => format!(
            "    <failure message=\"{}\">{}</failure>\n",
            xml_escape(message),
            xml_escape(detail)
        ),
        None => format!("    <system-out>{}</system-out>\n", xml_escape(passed)),
    };
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"mcsim test\" tests=\"1\" failures=\"{}\">\n  <testcase classname=\"mcsim.test\" name=\"{name}\" time=\"{time:.3}\">\n{body}  </testcase>\n</testsuite>\n",
        usize::from(failure.is_some())
    );
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn write_json(options: &TestOptions, report: &Report<'_>) -> Result<()> {
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `word` as a shell reads it back.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn print_trace(trace: &[String]) {
    outln!("timeline (command, virtual time, connection, command -> reply):");
    for line in trace {
        outln!("  {line}");
    }
}

/// `mcsim test`.
pub(crate) fn test(options: &TestOptions) -> Result<ExitCode> {
    if options.command.is_empty() {
        bail!("give the program to test after `--`: mcsim test [OPTIONS] -- CMD [ARGS…]");
    }
    let started = Instant::now();
    let running = start(options)?;
    if let Some(schedule) = &options.replay {
        return replay(&running, options, schedule);
    }
    let shown = options.command.join(" ");
    let (mut released, mut faults) = (0, 0);
    let mut report = Report {
        command: &options.command,
        clients: options.clients,
        servers: options.servers,
        strategy: options.strategy_name(),
        seed: options.seed,
        runs: 0,
        complete: None,
        failing: None,
        rate_interval: None,
        metrics: BTreeMap::new(),
        sometimes: options.sometimes.iter().map(|n| (n.clone(), 0)).collect(),
        verdict: "pass",
        commands_released: 0,
        faults_injected: 0,
        failure: None,
    };
    let strategy = shared(match options.exhaustive {
        Some(preemptions) => Box::new(Dfs::new(Some(preemptions), false)),
        None => options.strategy.make(options.seed),
    });
    let (mut runs, mut complete, mut warned) = (0, false, false);
    // With `--all`: failing runs, and the first failure's message and report.
    let (mut failing, mut first): (u64, Option<(String, String)>) = (0, None);
    for i in 0..options.executions {
        if i > 0 && options.exhaustive.is_some() {
            // The search's next schedule, or the end of its tree.
            let mut dfs = strategy.lock().expect("never poisoned");
            if !dfs.end(false) {
                complete = true;
                break;
            }
        }
        runs = i + 1;
        let seed = options.seed.wrapping_add(i);
        let outcome = run_once(&running, options, &strategy, (i, seed))?;
        released += outcome.released;
        faults += outcome.faults();
        for (name, v) in &outcome.metrics {
            report.metrics.entry(name.clone()).or_default().add(*v);
        }
        for name in &outcome.sometimes {
            *report.sometimes.entry(name.clone()).or_default() += 1;
        }
        let outside = outcome.unscheduled();
        if !outside.is_empty() && !warned {
            warned = true;
            let list: Vec<String> = outside.iter().map(|(c, n)| format!("{c} ({n})")).collect();
            outln!(
                "note: in run {i}, connections that never named themselves sent commands while the participants ran: {}; those ran outside the schedule, so their order among the participants' is not reproducible (name each connection a thread uses, or give it one)",
                list.join(", ")
            );
        }
        let Some(failure) = &outcome.failure else {
            continue;
        };
        failing += 1;
        if first.is_some() {
            // `--all`: the first failure is reported; the others are counted.
            continue;
        }
        if outcome.released == 0 {
            // Nothing of the program was scheduled: there is no run to judge.
            bail!(
                "run {i} of `{shown}` failed before any of its {} clients took part (none named itself with `mcsim name X` or a read of {NAME_KEY}X): {failure}",
                options.clients
            );
        }
        // The same schedule again: the same trace, or the program is not deterministic.
        let replay = Replay::new(outcome.schedule.clone());
        let again = run_once(&running, options, &shared(Box::new(replay)), (i, seed))?;
        if let Some(line) = first_difference(&outcome.trace, &again.trace) {
            outln!(
                "NOT DETERMINISTIC: run {i} (seed {seed}) of `{shown}` gave another trace when its schedule was replayed; not judged"
            );
            outln!("{line}");
            return Ok(ExitCode::from(2));
        }
        let found_replay = replay_line(options, seed, &outcome.schedule, &outcome.hash());
        let (outcome, tried) = shrink(&running, options, (i, seed), outcome)?;
        let failure = outcome.failure.as_ref().expect("a shrunk run still fails");
        let hash = outcome.hash();
        outln!(
            "FAILED: run {i} of `{shown}` (seed {seed}, {} clients, strategy {}): {failure}",
            options.clients,
            options.strategy_name()
        );
        outln!(
            "  shrunk by {tried} more runs to {} commands released in turn, {} preemption{} (found: {} and {})",
            outcome.schedule.choices.len(),
            outcome.preemptions,
            if outcome.preemptions == 1 { "" } else { "s" },
            again.schedule.choices.len(),
            again.preemptions,
        );
        print_trace(&outcome.trace);
        let replay = replay_line(options, seed, &outcome.schedule, &hash);
        outln!("replay (each gives its trace again, checked by its hash):");
        outln!("  {replay}   # shrunk");
        outln!("  {found_replay}   # as found");
        report.runs = i + 1;
        (report.commands_released, report.faults_injected) = (released, faults);
        report.verdict = "fail";
        report.failure = Some(FailureReport {
            run: i,
            seed,
            message: failure.clone(),
            schedule: outcome.schedule.to_string(),
            trace_hash: hash,
            replay,
            timeline: outcome.trace.clone(),
        });
        write_json(options, &report)?;
        let detail = format!(
            "{}\nreplay:\n  {} # shrunk\n  {found_replay} # as found\n",
            outcome.trace.join("\n"),
            report.failure.as_ref().map_or("", |f| f.replay.as_str())
        );
        if !options.all {
            write_junit(options, started, Some((failure, &detail)), "")?;
            return Ok(ExitCode::FAILURE);
        }
        first = Some((failure.clone(), detail));
    }
    if let Some((failure, detail)) = &first {
        // `--all`: how often the program failed, with a 95% interval.
        let (lo, hi) = wilson(failing, runs);
        let rate = format!(
            "failed in {failing} of {runs} runs: rate {:.3}, 95% interval [{lo:.3}, {hi:.3}] (the first failure above)",
            failing as f64 / runs as f64
        );
        outln!("{rate}");
        report.runs = runs;
        report.failing = Some(failing);
        report.rate_interval = Some((lo, hi));
        write_json(options, &report)?;
        write_junit(
            options,
            started,
            Some((failure, &format!("{rate}\n{detail}"))),
            "",
        )?;
        return Ok(ExitCode::FAILURE);
    }
    if options.exhaustive.is_some() && !complete {
        complete = !strategy.lock().expect("never poisoned").end(false);
    }
    report.runs = runs;
    (report.commands_released, report.faults_injected) = (released, faults);
    report.complete = options.exhaustive.map(|_| complete);
    // A danger that must happen and never did: the pass shows nothing about it.
    let missing: Vec<&String> = options
        .sometimes
        .iter()
        .filter(|n| report.sometimes.get(*n).is_none_or(|&k| k == 0))
        .collect();
    if !missing.is_empty() {
        report.verdict = "vacuous";
    }
    write_json(options, &report)?;
    let f = &options.faults;
    let injected = if f.evict > 0.0 || f.lose_reply > 0.0 || f.pause > 0.0 {
        format!(", {faults} faults injected")
    } else {
        String::new()
    };
    let bound = |p: u32| format!("at most {p} preemption{}", if p == 1 { "" } else { "s" });
    let passed = match options.exhaustive {
        _ if !missing.is_empty() => String::new(),
        Some(p) if complete => format!(
            "passed: every schedule of `{shown}` with {} exited 0: {runs} runs, {} clients, {released} commands released in turn{injected} (no reduction: every interleaving of the participants' commands run apart)",
            bound(p),
            options.clients,
        ),
        Some(p) => format!(
            "passed, not a proof: {runs} runs of `{shown}` exited 0, but the cap (--executions {}) stopped the search of every schedule with {} before its end",
            options.executions,
            bound(p),
        ),
        None => format!(
            "passed: {runs} runs of `{shown}` exited 0 ({} clients, strategy {}, seeds {}..{}, {released} commands released in turn{injected})",
            options.clients,
            options.strategy.name(),
            options.seed,
            options.seed.wrapping_add(runs - 1),
        ),
    };
    if !passed.is_empty() {
        outln!("{passed}");
    }
    for (name, f) in &report.metrics {
        outln!(
            "  metric {name}: mean {:.3} (min {}, max {}) over {} runs",
            f.mean,
            f.min,
            f.max,
            f.runs
        );
    }
    for (name, k) in &report.sometimes {
        outln!("  sometimes {name}: in {k} of {runs} runs");
    }
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        let vacuous = format!(
            "VACUOUS: {runs} runs of `{shown}` exited 0, but the danger {} never happened in them: the pass shows nothing about it",
            names.join(", ")
        );
        outln!("{vacuous}");
        write_junit(options, started, Some((&vacuous, "")), "")?;
        return Ok(ExitCode::FAILURE);
    }
    write_junit(options, started, None, &passed)?;
    Ok(ExitCode::SUCCESS)
}

/// The Wilson score interval, at 95%, of `k` failures in `n` runs.
fn wilson(k: u64, n: u64) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.96_f64);
    let p = k / n;
    let denominator = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// Runs tried to shrink a failure at most.
const SHRINK_RUNS: usize = 200;

/// Shrinks a failing run: the shortest prefix of its schedule that still fails (past it,
/// the lowest-numbered waiting participant runs at each step), then each choice dropped in
/// turn where the run still fails the same way (stuck, its exit status, what it declared:
/// each as in the run found) with fewer preemptions (a
/// participant run while the one before it was waiting too), or as many and fewer
/// commands. Every candidate is one more run of the program;
/// the result is replayed once more and kept only if it gives its trace again. Returns
/// the smallest failing run and the runs tried.
fn shrink(
    running: &Running,
    options: &TestOptions,
    run: (u64, u64),
    found: Outcome,
) -> Result<(Outcome, usize)> {
    // The same failure: stuck, or the program's exit status, or what it declared, as found.
    let kind = found.kind;
    let fails_alike = |o: &Outcome| o.failure.is_some() && o.kind == kind && o.diverged.is_none();
    let smaller = |a: &Outcome, b: &Outcome| {
        (a.preemptions, a.schedule.choices.len()) < (b.preemptions, b.schedule.choices.len())
    };
    let mut tried = 0;
    let mut best = found;
    let try_schedule = |choices: &[Choice], lenient: bool, tried: &mut usize| {
        *tried += 1;
        let schedule = Schedule {
            phase: None,
            choices: choices.to_vec(),
        };
        let replay = if lenient {
            Replay::lenient(schedule)
        } else {
            Replay::new(schedule)
        };
        run_once(running, options, &shared(Box::new(replay)), run)
    };
    // The shortest failing prefix: the choices that matter; past them, the defaults.
    let mut prefix = best.schedule.choices.clone();
    for k in 0..prefix.len() {
        if tried >= SHRINK_RUNS {
            break;
        }
        let candidate = try_schedule(&prefix[..k], false, &mut tried)?;
        if fails_alike(&candidate) {
            if smaller(&candidate, &best) {
                best = candidate;
            }
            prefix.truncate(k);
            break;
        }
    }
    // Each choice of the prefix dropped in turn, latest first (one no longer possible
    // where it comes is skipped), the defaults after it.
    let mut j = prefix.len();
    while j > 0 && tried < SHRINK_RUNS {
        j -= 1;
        let mut choices = prefix.clone();
        choices.remove(j);
        let candidate = try_schedule(&choices, true, &mut tried)?;
        if fails_alike(&candidate) && smaller(&candidate, &best) {
            prefix = choices;
            best = candidate;
        }
    }
    // The shrunk run's own schedule gives its trace again, or the run as found stands.
    let again = try_schedule(&best.schedule.choices.clone(), false, &mut tried)?;
    if first_difference(&best.trace, &again.trace).is_some() {
        bail!(
            "a shrunk run of the program gave another trace when replayed: the program is not deterministic under a fixed schedule; not judged"
        );
    }
    Ok((best, tried))
}

/// Replays one schedule and prints its run.
fn replay(running: &Running, options: &TestOptions, schedule: &Schedule) -> Result<ExitCode> {
    let replay = shared(Box::new(Replay::new(schedule.clone())));
    let outcome = run_once(running, options, &replay, (0, options.seed))?;
    print_trace(&outcome.trace);
    let hash = outcome.hash();
    match &outcome.failure {
        Some(f) => outln!("FAILED: {f}"),
        None => outln!("passed: the program exited 0"),
    }
    outln!("trace hash {hash}");
    if let Some(detail) = &outcome.diverged {
        outln!("DIVERGED: the program did not follow the schedule: {detail}");
        return Ok(ExitCode::from(2));
    }
    if let Some(want) = &options.expect_hash
        && *want != hash
    {
        outln!("TRACE DIFFERS: expected hash {want}, got {hash}");
        return Ok(ExitCode::from(2));
    }
    Ok(if outcome.failure.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The first line where two traces differ, shown from both.
fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    let n = a.len().max(b.len());
    (0..n).find_map(|i| {
        let (x, y) = (a.get(i), b.get(i));
        (x != y).then(|| {
            let show = |l: Option<&String>| l.map_or("(no line)".to_string(), |l| l.clone());
            format!(
                "  line {}:\n    first:  {}\n    replay: {}",
                i + 1,
                show(x),
                show(y)
            )
        })
    })
}
