//! `mcsim test -- CMD`: a program in any language, run again and again against simulated
//! memcached servers (`mcsim serve`'s, reset before each run), with the commands of its
//! participating connections released one at a time in the order a strategy picks, the
//! same strategies `run` uses. A connection takes part by naming itself (`mcsim name X`,
//! or a read of `mcsim:name:X` in whatever form its client library sends it); the
//! others run as soon as no participant has a command on its way.
//!
//! A program either runs one execution and exits, or asks for its executions one after
//! another on a control connection (`mcsim next`), as a test framework's helper does:
//! [`under_test`] keeps it running and resets the servers between them.
//!
//! A run passes when the program exits 0 and declared no failure (`mcsim fail MESSAGE`, or
//! a section it said it entered, `mcsim enter SECTION`, while another participant was
//! inside: see `helpers/python/mcsim_control`). The first failing run is replayed from its
//! schedule at once: a replay that gives another trace means the program is not
//! deterministic under a fixed schedule, which is reported as such and never judged.
//! Otherwise the failure is printed with its timeline and the line that replays it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use mcsim::exhaustive::{Dfs, PhaseClasses, PhaseLimit};
use mcsim::explore::Strategy;
use mcsim::explore::{Replay, Schedule};
use mcsim::trace::fnv1a;
use mcsim_serve::{ClockMode, ServeConfig, Unscheduled};

mod chooser;
mod coverage;
mod determinism;
mod html;
mod options;
mod process;
mod report;
mod shrink;
mod under_test;

use chooser::shared;
use determinism::{diverges, not_deterministic};
use html::{Drawn, write_html};
pub(crate) use options::TestOptions;
use report::{Bitten, FailureReport, Report, Size, fault_line, write_json, write_junit};
use shrink::shrink;
use under_test::Program;

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
    /// The search cut the run short: past some step, every order was covered by other
    /// runs (the program ran on, its participants released first by name).
    cut_short: bool,
    /// Where in a second (µs since the servers' boot) its commands read the clock.
    phase_points: Vec<u32>,
    /// Commands released in turn.
    released: usize,
    /// The faults the servers injected: where each one's line is in the trace (`None`:
    /// it left the window).
    faults: Vec<Option<usize>>,
    /// What its timeline draws: the participants' commands and replies, the faults, and
    /// when the first failure was declared or found.
    drawn: (
        Vec<mcsim_serve::Exchange>,
        Vec<mcsim_serve::FaultMark>,
        Option<u64>,
    ),
    /// By kind the policy allows, how many faults fired and how many the program met.
    fault_counts: Vec<(mcsim::fault::FaultKind, mcsim_serve::FaultCount)>,
    /// Of those, the ones that preempted the participant that ran before (it was waiting
    /// too).
    preemptions: usize,
    /// Every participant that named itself, in the order it did.
    participants: Vec<String>,
    /// Commands of connections that never named themselves, run while the participants
    /// ran: outside the schedule.
    unscheduled: Vec<Unscheduled>,
    /// Where in the trace a participant's connection first closed before it said it was
    /// done: past it, the program may be ending.
    vanished: Option<usize>,
    /// Where in the trace the program's first failure was declared or found.
    failed_at: Option<usize>,
    /// How the run ended ("the program exited 0 after 0.02 s").
    ended: String,
    /// The last lines the program wrote, if it exited or was killed (indented, each
    /// after a line end).
    output: String,
    /// The participants the run waited for (`MCSIM_CLIENTS`).
    clients: usize,
    /// What the program declared: its figures and the dangers it saw.
    metrics: Vec<(String, f64)>,
    sometimes: Vec<String>,
}

impl Outcome {
    /// True if every participant the run waited for named itself: only then is the run
    /// one of the program's recipe, to be judged.
    fn took_part(&self) -> bool {
        self.participants.len() >= self.clients
    }

    /// Why the run cannot be judged, if its participants did not all take part.
    fn absent(&self, run: u64) -> Option<String> {
        if self.took_part() {
            return None;
        }
        let who = match self.participants.as_slice() {
            [] => String::new(),
            named => format!(": {}", named.join(", ")),
        };
        Some(format!(
            "run {run}: {} of {} participants named themselves{who} ({})",
            self.participants.len(),
            self.clients,
            self.ended
        ))
    }

    /// How large the run is, as shrinking counts it.
    fn size(&self) -> Size {
        let (exchanges, _, failed_at) = &self.drawn;
        Size {
            clients: self.clients,
            commands_to_failure: exchanges
                .iter()
                .filter(|e| failed_at.is_none_or(|at| e.at_us <= at))
                .count(),
            preemptions: self.preemptions,
            steps: self.schedule.choices.len(),
        }
    }

    fn hash(&self) -> String {
        format!("{:016x}", fnv1a(self.trace.join("\n").as_bytes()))
    }
}

/// Starts the servers `mcsim test` runs the program against.
fn start(options: &TestOptions) -> Result<Program> {
    let config = ServeConfig {
        port: options.port.unwrap_or(0),
        servers: options.servers,
        server: options.server.clone(),
        clock: ClockMode::Manual,
        faults: options.faults.clone(),
        latency: options.latency,
        seed: options.seed,
        lockstep: Some(options.clients),
        lockstep_wait: options.timeout,
        trace: None,
        trace_window: mcsim_serve::DEFAULT_TRACE_WINDOW,
        name_key: Some(NAME_KEY.into()),
        threads: mcsim_serve::DEFAULT_THREADS,
    };
    let running = mcsim_serve::start(&config).context("cannot start the simulated servers")?;
    Ok(Program::new(running))
}

/// The command line that replays `outcome`, run with `seed` against servers from `port`
/// on (named when there are two or more: a client that spreads keys over servers hashes
/// their addresses).
fn replay_line(options: &TestOptions, port: u16, seed: u64, outcome: &Outcome) -> String {
    let (schedule, hash) = (&outcome.schedule, outcome.hash());
    let command: Vec<String> = options
        .command
        .iter()
        .map(|a| mcsim::report::shell_word(a))
        .collect();
    let mut world: Vec<String> = (options.world_args.iter())
        .map(|a| mcsim::report::shell_word(a))
        .collect();
    if options.servers > 1 {
        world.extend(["--port".to_string(), port.to_string()]);
    }
    format!(
        "mcsim test --clients {} {} --seed {seed} --replay '{schedule}' --expect-hash {hash} -- {}",
        outcome.clients,
        world.join(" "),
        command.join(" ")
    )
}

fn print_trace(trace: &[String]) {
    outln!("timeline (command, virtual time, connection, command -> reply):");
    for line in trace {
        outln!("  {line}");
    }
}

/// Lines of a failure's timeline printed: a screenful.
const SCREENFUL: usize = 40;

/// Faults of a failing run shown above its screenful when their lines are left out (the
/// last ones).
const EARLIER_FAULTS: usize = 8;

/// A failure's timeline, a screenful of it around where the failure was (the end, if
/// it was not declared: the program's exit), with a line saying how much was left out
/// and where the whole of it is; the whole, with `--timeline FILE`, to that file.
fn print_failure_trace(options: &TestOptions, outcome: &Outcome) -> Result<()> {
    let trace = &outcome.trace;
    if let Some(path) = &options.timeline {
        let mut text = trace.join("\n");
        text.push('\n');
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if trace.len() <= SCREENFUL {
        print_trace(trace);
        return Ok(());
    }
    let focus = outcome
        .failed_at
        .unwrap_or(trace.len() - 1)
        .min(trace.len() - 1);
    let end = (focus + SCREENFUL / 4).clamp(SCREENFUL, trace.len());
    let start = end - SCREENFUL;
    let whole = match &options.timeline {
        Some(path) => format!("the whole timeline is in {}", path.display()),
        None => "the whole timeline: --timeline FILE, or failure.timeline in --json".into(),
    };
    outln!(
        "timeline (command, virtual time, connection, command -> reply), lines {} to {} of {}; {whole}:",
        start + 1,
        end,
        trace.len()
    );
    if start > 0 {
        outln!("  … {start} earlier lines left out");
    }
    // The faults among them: what the run met before what is shown.
    let earlier: Vec<usize> = (outcome.faults.iter().flatten())
        .copied()
        .filter(|&at| at < start)
        .collect();
    if !earlier.is_empty() {
        outln!("  … of those, the faults:");
        let shown = earlier.len().min(EARLIER_FAULTS);
        for &at in &earlier[earlier.len() - shown..] {
            outln!("  {}", trace[at]);
        }
        if earlier.len() > shown {
            outln!("  … and {} earlier faults", earlier.len() - shown);
        }
        outln!("  … then:");
    }
    for line in &trace[start..end] {
        outln!("  {line}");
    }
    if end < trace.len() {
        outln!("  … {} later lines left out", trace.len() - end);
    }
    Ok(())
}

/// Exit statuses of `mcsim test`: every run passed, a run failed (or a danger never
/// happened), or the program could not be judged.
const PASSED: u8 = 0;
const FAILED: u8 = 1;
const NOT_JUDGED: u8 = 2;

/// `mcsim test`.
pub(crate) fn test(options: &TestOptions) -> Result<ExitCode> {
    if options.command.is_empty() {
        bail!("give the program to test after `--`: mcsim test [OPTIONS] -- CMD [ARGS…]");
    }
    let mut program = start(options)?;
    let (status, verdict) = match &options.replay {
        Some(schedule) => replay(&mut program, options, schedule)?,
        None => search(&mut program, options)?,
    };
    // A program that asked for its executions is told the verdict, and exits.
    let told = if status == PASSED { "pass" } else { "fail" };
    if let Some(after) = program.finish(told, options.timeout) {
        outln!(
            "NOT JUDGED: after its last execution (told `done {told}`), the program exited badly: {after}"
        );
        return Ok(ExitCode::from(NOT_JUDGED));
    }
    match &options.expect {
        Some(want) if status != NOT_JUDGED => {
            if *want == verdict {
                outln!("as expected: {verdict}");
                Ok(ExitCode::from(PASSED))
            } else {
                outln!("UNEXPECTED: the verdict is {verdict}, {want} was expected");
                Ok(ExitCode::from(FAILED))
            }
        }
        _ => Ok(ExitCode::from(status)),
    }
}

/// Runs the program as many times as asked, or until it fails; the exit status and the
/// verdict.
fn search(program: &mut Program, options: &TestOptions) -> Result<(u8, &'static str)> {
    let started = Instant::now();
    let shown = options.command.join(" ");
    let (mut released, mut faults) = (0, 0);
    // Commands released per run: a pass says how many, so that none can hide.
    let mut per_run = mcsim::run::Summary::default();
    let mut report = Report {
        command: &options.command,
        clients: options.clients,
        servers: options.servers,
        strategy: options.strategy_name(),
        seed: options.seed,
        runs: 0,
        complete: None,
        tick_phases: None,
        failing: None,
        rate_interval: None,
        metrics: BTreeMap::new(),
        sometimes: options.sometimes.iter().map(|n| (n.clone(), 0)).collect(),
        verdict: "pass",
        commands_released: 0,
        commands_per_run: mcsim::run::Summary::default(),
        faults_injected: 0,
        faults: (options.faults.kinds().into_iter())
            .map(|k| (k.name(), Bitten::default()))
            .collect(),
        scenario: (options.scenario.as_ref()).map(|s| s.path.display().to_string()),
        coverage: None,
        failure: None,
    };
    let mut coverage = coverage::Coverage::default();
    if let Some(scenario) = &options.scenario {
        outln!("{}", surroundings_note(options, scenario));
    }
    // An exhaustive search runs once per tick-phase class, unless the scenario pins the
    // phase: at phase 0 first, then at a phase of each class the runs revealed.
    let pinned = options.scenario.as_ref().is_some_and(|s| !s.phase_free);
    let mut phases = (options.exhaustive.is_some() && !pinned).then(PhaseClasses::new);
    let mut at_phase = phases.as_ref().and_then(PhaseClasses::next);
    let search = |preemptions: u32, phase: Option<u32>| -> Box<dyn Strategy + Send> {
        let phase = phase.map(|us| Duration::from_micros(u64::from(us)));
        Box::new(Dfs::new(Some(preemptions), options.reduce).with_phase(phase))
    };
    let strategy = shared(match options.exhaustive {
        Some(preemptions) => search(preemptions, at_phase),
        None => options.strategy.make(options.seed),
    });
    let (mut runs, mut complete, mut warned, mut pruned) = (0, false, false, 0);
    // With `--all`: failing runs, and the first failure's message, report, shrunk run and
    // replay lines (shrunk, as found).
    let mut failing = 0;
    let mut first: Option<(String, String, Outcome, [String; 2])> = None;
    for i in 0..options.executions {
        if i > 0
            && let Some(preemptions) = options.exhaustive
        {
            // The search's next schedule, or the end of its tree: then the search at the
            // next tick-phase class, if one is left.
            let mut dfs = strategy.lock().expect("never poisoned");
            if !dfs.end(false) {
                let next = phases.as_mut().and_then(|classes| {
                    classes.searched(at_phase.expect("searched at a phase"));
                    classes.next()
                });
                if next.is_none() {
                    complete = true;
                    break;
                }
                at_phase = next;
                *dfs = search(preemptions, at_phase);
            }
        }
        runs = i + 1;
        let seed = options.seed.wrapping_add(i);
        let outcome = program.run(options, &strategy, (i, seed))?;
        if let Some(absent) = outcome.absent(i) {
            return Ok(not_judged(&absent, &outcome.output));
        }
        released += outcome.released;
        pruned += u64::from(outcome.cut_short);
        if let Some(classes) = &mut phases {
            classes.met(outcome.phase_points.iter().copied());
        }
        per_run.add(outcome.released as f64);
        faults += outcome.faults.len() as u64;
        coverage.add(&outcome.drawn.0);
        for (kind, count) in &outcome.fault_counts {
            report.faults.entry(kind.name()).or_default().add(*count);
        }
        for (name, v) in &outcome.metrics {
            report.metrics.entry(name.clone()).or_default().add(*v);
        }
        for name in &outcome.sometimes {
            *report.sometimes.entry(name.clone()).or_default() += 1;
        }
        if !warned && !outcome.unscheduled.is_empty() {
            warned = true;
            outln!("{}", unscheduled_note(i, &outcome.unscheduled));
        }
        if outcome.failure.is_none() {
            continue;
        }
        failing += 1;
        if first.is_some() {
            // `--all`: the first failure is reported; the others are counted.
            continue;
        }
        // The same schedule again: the same trace, or the program is not deterministic.
        let replay = Replay::new(outcome.schedule.clone());
        let again = program.run(options, &shared(Box::new(replay)), (i, seed))?;
        if let Some(line) = diverges(&outcome, &again) {
            let run = format!("run {i} (seed {seed}) of `{shown}`");
            return Ok(not_deterministic(&run, &line));
        }
        let port = program.running.addrs()[0].port();
        let found_replay = replay_line(options, port, seed, &outcome);
        let (outcome, tried) = match shrink(program, options, (i, seed), &outcome)? {
            Ok(shrunk) => shrunk,
            Err(difference) => {
                let run =
                    format!("run {i} (seed {seed}) of `{shown}` failed, but a shrunk run of it");
                return Ok(not_deterministic(&run, &difference));
            }
        };
        let failure = outcome.failure.as_ref().expect("a shrunk run still fails");
        let hash = outcome.hash();
        outln!(
            "FAILED: run {i} of `{shown}` (seed {seed}, {} clients, strategy {}): {failure}",
            options.clients,
            options.strategy_name()
        );
        let (shrunk, found) = (outcome.size(), again.size());
        outln!("  shrunk by {tried} more runs to {shrunk} (as found: {found})");
        print_failure_trace(options, &outcome)?;
        let replay = replay_line(options, port, seed, &outcome);
        outln!("replay (each gives its trace again, checked by its hash):");
        outln!("  {replay}   # shrunk");
        outln!("  {found_replay}   # as found");
        report.runs = i + 1;
        (report.commands_released, report.faults_injected) = (released, faults);
        report.commands_per_run = per_run.clone();
        report.verdict = "fail";
        report.failure = Some(FailureReport {
            run: i,
            seed,
            message: failure.clone(),
            shrunk,
            found,
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
        let shrunk_replay = report
            .failure
            .as_ref()
            .map_or(String::new(), |f| f.replay.clone());
        if !options.all {
            write_junit(options, started, Some((failure, &detail)), "")?;
            let drawn = Drawn {
                outcome: &outcome,
                message: failure,
                replays: [("shrunk", &shrunk_replay), ("as found", &found_replay)],
            };
            write_html(options, &report, started, Some(drawn), "")?;
            return Ok((FAILED, "fail"));
        }
        let message = failure.clone();
        first = Some((message, detail, outcome, [shrunk_replay, found_replay]));
    }
    if let Some((failure, detail, outcome, [shrunk, found])) = &first {
        // `--all`: how often the program failed, with a 95% interval.
        let (lo, hi) = crate::findings::interval::wilson(failing, runs);
        let rate = format!(
            "failed in {failing} of {runs} runs: rate {:.3}, 95% interval [{lo:.3}, {hi:.3}] (the first failure above)",
            failing as f64 / runs as f64
        );
        outln!("{rate}");
        report.runs = runs;
        report.failing = Some(failing);
        report.commands_per_run = per_run.clone();
        report.rate_interval = Some((lo, hi));
        write_json(options, &report)?;
        write_junit(
            options,
            started,
            Some((failure, &format!("{rate}\n{detail}"))),
            "",
        )?;
        let drawn = Drawn {
            outcome,
            message: failure,
            replays: [("shrunk", shrunk), ("as found", found)],
        };
        write_html(options, &report, started, Some(drawn), &rate)?;
        return Ok((FAILED, "fail"));
    }
    if options.exhaustive.is_some() && !complete {
        complete = !strategy.lock().expect("never poisoned").end(false);
    }
    report.runs = runs;
    (report.commands_released, report.faults_injected) = (released, faults);
    report.commands_per_run = per_run.clone();
    report.complete = options.exhaustive.map(|_| complete);
    let covered = coverage.figure();
    report.coverage = Some(covered);
    // A danger that must happen and never did: the pass shows nothing about it.
    let missing: Vec<&String> = options
        .sometimes
        .iter()
        .filter(|n| report.sometimes.get(*n).is_none_or(|&k| k == 0))
        .collect();
    // A fault kind the program never met: the pass shows nothing about it.
    let unbitten: Vec<&str> = (report.faults.iter())
        .filter(|(_, b)| b.bit == 0)
        .map(|(kind, _)| *kind)
        .collect();
    // Where the servers' whole-second clocks tick within a second, which decides when a
    // TTL ends: pinned by the scenario, searched class by class, or drawn per run.
    let phase = match &phases {
        _ if pinned => format!(
            "tick phase {} ms, as the scenario pins it",
            options.server.phase.as_millis()
        ),
        Some(classes) => {
            let stopped = (!complete).then_some(PhaseLimit::Executions(options.executions));
            classes.coverage(stopped).describe()
        }
        None => "tick phase drawn per run".to_string(),
    };
    report.tick_phases = options.exhaustive.map(|_| phase.clone());
    if !missing.is_empty() || !unbitten.is_empty() {
        report.verdict = "vacuous";
    }
    write_json(options, &report)?;
    let injected = if report.faults.is_empty() {
        String::new()
    } else {
        format!("; faults: {}", fault_line(&report.faults))
    };
    let released_text = format!(
        "{released} commands released in turn, {:.0} to {:.0} a run (mean {:.1})",
        per_run.min,
        per_run.max,
        per_run.mean()
    );
    let bound = |p: u32| format!("at most {p} preemption{}", if p == 1 { "" } else { "s" });
    let passed = match options.exhaustive {
        _ if report.verdict == "vacuous" => String::new(),
        Some(p) if complete => format!(
            "passed: every schedule of `{shown}` with {} exited 0: {runs} runs, {} clients, {}{injected} ({}; {phase})",
            bound(p),
            options.clients,
            released_text,
            reduction(options, pruned),
        ),
        Some(p) => format!(
            "passed, not a proof: {runs} runs of `{shown}` exited 0, but the cap (--executions {}) stopped the search of every schedule with {} before its end ({phase})",
            options.executions,
            bound(p),
        ),
        None => format!(
            "passed: {runs} runs of `{shown}` exited 0 ({} clients, strategy {}, seeds {}..{}, {phase}, {}{injected})",
            options.clients,
            options.strategy.name(),
            options.seed,
            options.seed.wrapping_add(runs - 1),
            released_text,
        ),
    };
    let passed = if passed.is_empty() {
        passed
    } else {
        format!("{passed}\n  covered: {}", covered.line())
    };
    if !passed.is_empty() {
        outln!("{passed}");
    }
    for (name, f) in &report.metrics {
        outln!(
            "  metric {name}: mean {:.3} (min {}, max {}) over {} runs",
            f.mean(),
            f.min,
            f.max,
            f.count
        );
    }
    for (name, k) in &report.sometimes {
        outln!("  sometimes {name}: in {k} of {runs} runs");
    }
    if report.verdict == "vacuous" {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        let mut unmet = Vec::new();
        if !names.is_empty() {
            unmet.push(format!(
                "the danger {} never happened in them",
                names.join(", ")
            ));
        }
        if !unbitten.is_empty() {
            unmet.push(format!(
                "no {} fault bit in them (a fault bites when the program meets it: an evicted key read or written again, a command to a server after it crashed, left or skipped a second; faults: {})",
                unbitten.join(", no "),
                fault_line(&report.faults)
            ));
        }
        let vacuous = format!(
            "VACUOUS: {runs} runs of `{shown}` exited 0, but {}: the pass shows nothing about it",
            unmet.join(", and ")
        );
        outln!("{vacuous}");
        write_junit(options, started, Some((&vacuous, "")), "")?;
        write_html(options, &report, started, None, &vacuous)?;
        return Ok((FAILED, "vacuous"));
    }
    write_junit(options, started, None, &passed)?;
    write_html(options, &report, started, None, &passed)?;
    Ok((PASSED, "pass"))
}

/// What a scenario file gave the runs, and what of it is its model's and not used.
fn surroundings_note(options: &TestOptions, s: &mcsim::scenario::Surroundings) -> String {
    let (least, most) = s.latency;
    let latency = if least == most {
        format!("{} µs", least.as_micros())
    } else {
        format!("{} to {} µs", least.as_micros(), most.as_micros())
    };
    let plan = &options.faults.plan;
    let faults: Vec<String> = (options.faults.kinds().into_iter())
        .filter_map(|k| Some((k, plan.rule(k)?)))
        .map(|(k, r)| {
            let max = if r.max == u32::MAX {
                String::new()
            } else {
                format!("at most {} a run, ", r.max)
            };
            let keys = r
                .keys
                .as_ref()
                .map_or(String::new(), |k| format!(", on {}", k.join(", ")));
            format!("{} ({max}chance {}{keys})", k.name(), r.probability)
        })
        .collect();
    let faults = if faults.is_empty() {
        "no faults".to_string()
    } else {
        format!("faults {}", faults.join(", "))
    };
    let unused = if s.recipe_fields.is_empty() {
        String::new()
    } else {
        format!(
            "; not used (the in-process model's): {}",
            s.recipe_fields.join(", ")
        )
    };
    format!(
        "scenario {}: {} server{}, each command {latency}, {faults}{unused}",
        s.path.display(),
        options.servers,
        if options.servers == 1 { "" } else { "s" },
    )
}

/// A run in which not every participant took part is not judged, nor is the program:
/// says why (`absent`), with the last lines the program wrote.
fn not_judged(absent: &str, output: &str) -> (u8, &'static str) {
    outln!("NOT JUDGED: {absent}");
    if !output.is_empty() {
        outln!("  the program's last lines:{output}");
    }
    (NOT_JUDGED, "not judged")
}

/// Replays one schedule and prints its run.
fn replay(
    program: &mut Program,
    options: &TestOptions,
    schedule: &Schedule,
) -> Result<(u8, &'static str)> {
    let replay = shared(Box::new(Replay::new(schedule.clone())));
    let outcome = program.run(options, &replay, (0, options.seed))?;
    if let Some(absent) = outcome.absent(0) {
        return Ok(not_judged(&absent, &outcome.output));
    }
    print_trace(&outcome.trace);
    let hash = outcome.hash();
    match &outcome.failure {
        Some(f) => outln!("FAILED: {f}"),
        None => outln!("passed: the program exited 0"),
    }
    outln!("trace hash {hash}");
    if let Some(detail) = &outcome.diverged {
        outln!("DIVERGED: the program did not follow the schedule: {detail}");
        return Ok((NOT_JUDGED, "not judged"));
    }
    if let Some(want) = &options.expect_hash
        && *want != hash
    {
        outln!("TRACE DIFFERS: expected hash {want}, got {hash}");
        return Ok((NOT_JUDGED, "not judged"));
    }
    Ok(match outcome.failure {
        Some(_) => (FAILED, "fail"),
        None => (PASSED, "pass"),
    })
}

/// What an exhaustive search's proof assumed of the orders it left out, `pruned` runs
/// of it cut short as covered by others.
fn reduction(options: &TestOptions, pruned: u64) -> String {
    if options.reduce {
        format!(
            "reduction: sleep sets, {pruned} run{} cut short as covered by others; two steps are taken to give the same outcome in either order when they touch different keys or both read, or one is a sleep or a section of another participant's, though each order runs them at its own virtual instants (a TTL boundary between those instants is explored only with --no-reduction); an order whose subtree the preemption bound cut is never taken as covered",
            if pruned == 1 { "" } else { "s" }
        )
    } else if options.faults.any() {
        "no reduction: the faults are drawn per run, so every interleaving of the participants' steps is run apart".to_string()
    } else {
        "no reduction (--no-reduction): every interleaving of the participants' steps run apart"
            .to_string()
    }
}

/// The note on commands that ran outside the schedule in run `run`: which connection sent
/// what and when, and how to bring it into the schedule.
fn unscheduled_note(run: u64, outside: &[Unscheduled]) -> String {
    let each: Vec<String> = (outside.iter())
        .map(|u| {
            let more = match u.count {
                0 | 1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            format!("{} sent `{}` at {} s{more}", u.who, u.command, u.at)
        })
        .collect();
    format!(
        "note: in run {run}, connections that never named themselves ran commands while the participants ran: {}. \
         Their place among the participants' commands is the threads' timing, not the schedule's, so a replay may put them elsewhere. \
         To schedule such a command, send it from a participant (name the connection: `mcsim name NAME`, or the helper's Participant, and count it in --clients); \
         a setup or a final check belongs before the participants start or after they are done.",
        each.join("; ")
    )
}
