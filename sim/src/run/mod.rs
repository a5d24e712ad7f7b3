//! Running a scenario: many executions, stop (or not) at the first failure, replay the
//! failure with its timeline, summarize metrics.

use std::collections::BTreeMap;

use crate::exec::{Execution, Runs, execute};
use crate::explore::{Replay, Schedule};
use crate::invariant::Verdict;
use crate::scenario::{Expectation, Judgement, Scenario, StrategyKind};
use crate::shrink::{self, Size};

/// How to run a scenario.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The strategy.
    pub strategy: StrategyKind,
    /// First seed: execution `i` uses seed `seed + i`.
    pub seed: u64,
    /// Executions.
    pub executions: u64,
    /// Keep going after a failure (to measure how often a recipe breaks).
    pub keep_going: bool,
    /// Shrink the first failure before reporting it.
    pub shrink: bool,
    /// What the run looks for: without `keep_going` it stops once it has found every
    /// verdict that must be found, or one that is not allowed (a `pass` expectation:
    /// at the first failure).
    pub expect: Expectation,
}

impl RunOptions {
    /// The scenario's own strategy and budget.
    pub fn from_scenario(s: &Scenario) -> RunOptions {
        RunOptions {
            strategy: s.strategy,
            seed: s.seed,
            executions: s.executions,
            keep_going: false,
            shrink: true,
            expect: s.expectation.clone(),
        }
    }
}

/// A metric over executions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// Executions that recorded it.
    pub count: u64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sum (for the mean).
    pub sum: f64,
    /// How the values spread (the report draws it).
    pub histogram: crate::histogram::Histogram,
}

impl Summary {
    /// The mean.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Counts one value.
    pub fn add(&mut self, v: f64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += v;
        self.histogram.add(v);
    }

    /// Adds every value of `other` (another run of the same metric).
    pub fn merge(&mut self, other: &Summary) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
        self.histogram.merge(&other.histogram);
    }
}

/// A failing execution, with what it takes to replay it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The seed that produced it (none for exhaustive exploration: replay the schedule).
    pub seed: Option<u64>,
    /// The size of the execution as found, when it was shrunk.
    pub original: Option<Size>,
    /// Clients in the shrunk execution (may be fewer than the scenario's).
    pub clients: usize,
    /// The execution, replayed with its timeline.
    pub execution: Execution,
    /// The trace hash of the execution as found, replayed from its seed (what
    /// `mcsim replay --seed` prints).
    pub found_hash: Option<u64>,
    /// True if shrinking stopped at its budget (a smaller counterexample may exist).
    pub cut_short: bool,
}

impl Finding {
    /// Its size as shown: the execution's, replayed on `scenario` with the clients it
    /// was shrunk to (its preemptions are counted on a replay).
    pub fn size(&self, scenario: &Scenario) -> Size {
        let smaller = (self.clients != scenario.clients)
            .then(|| scenario.with_clients(self.clients).ok())
            .flatten();
        Size {
            clients: self.clients,
            ..shrink::size(smaller.as_ref().unwrap_or(scenario), &self.execution)
        }
    }
}

/// The outcome of running a scenario.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// Executions run.
    pub executions: u64,
    /// Executions per verdict label.
    pub verdicts: BTreeMap<String, u64>,
    /// The first failure, if any.
    pub first_failure: Option<Finding>,
    /// Metrics over all executions.
    pub metrics: BTreeMap<String, Summary>,
    /// Calls the servers executed, over all executions.
    pub calls: u64,
    /// Steps over all executions.
    pub steps: u64,
    /// Every failing verdict found, with the executions that showed it: each invariant an
    /// execution violated (not only the first), and every other failure by its label.
    pub found: BTreeMap<String, u64>,
    /// Per fault kind: injections over all executions, and how many of them bit.
    pub faults: BTreeMap<String, FaultFigures>,
    /// Per invariant: the times it was evaluated over all executions.
    pub checks: BTreeMap<String, u64>,
    /// Per condition a scenario may ask for in `sometimes` (`faults.KIND.injected`,
    /// `faults.KIND.bit`, each metric): the executions that met it.
    pub met: BTreeMap<String, u64>,
    /// The numbers of each violation over the executions that broke an invariant, by
    /// `invariant.number` (`counter.no_lost_increments.lost`): by how much it broke.
    pub at_violation: BTreeMap<String, Summary>,
}

/// How often a kind of fault fired over a run, and how often it bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct FaultFigures {
    /// Times it fired.
    pub injected: u64,
    /// Times it changed what a later call saw.
    pub bit: u64,
}

impl std::ops::AddAssign for FaultFigures {
    fn add_assign(&mut self, other: FaultFigures) {
        self.injected += other.injected;
        self.bit += other.bit;
    }
}

impl RunReport {
    /// Adds an execution's fault, check and condition figures.
    pub(crate) fn count(&mut self, e: &Execution) {
        for (kind, injected, bit) in &e.faults {
            let f = self.faults.entry(kind.name().to_string()).or_default();
            f.injected += u64::from(*injected);
            f.bit += u64::from(*bit);
            for (what, n) in [("injected", injected), ("bit", bit)] {
                if *n > 0 {
                    *self
                        .met
                        .entry(format!("faults.{}.{what}", kind.name()))
                        .or_insert(0) += 1;
                }
            }
        }
        for (name, n) in &e.checks {
            *self.checks.entry(name.to_string()).or_insert(0) += n;
        }
        for (name, v) in &e.metrics {
            let met = self.met.entry(name.clone()).or_insert(0);
            if *v > 0.0 {
                *met += 1;
            }
        }
    }
}

impl RunReport {
    /// The same report with its first failure.
    pub fn with_failure(self, failure: Finding) -> RunReport {
        RunReport {
            first_failure: Some(failure),
            ..self
        }
    }

    /// The run judged against what its scenario expects.
    pub fn judge(&self, expect: &Expectation) -> Judgement {
        expect.judge(&self.found, &self.met)
    }

    /// Executions whose verdict was not `pass`.
    pub fn failing(&self) -> u64 {
        self.executions - self.verdicts.get("pass").copied().unwrap_or(0)
    }

    /// Adds the executions, verdicts, faults and distributions of `other` (another point
    /// of a sweep); the first failure, checks and conditions stay this run's.
    pub fn absorb(&mut self, other: &RunReport) {
        self.executions += other.executions;
        for (k, v) in &other.verdicts {
            *self.verdicts.entry(k.clone()).or_insert(0) += v;
        }
        for (k, f) in &other.faults {
            *self.faults.entry(k.clone()).or_default() += *f;
        }
        for (into, from) in [
            (&mut self.metrics, &other.metrics),
            (&mut self.at_violation, &other.at_violation),
        ] {
            for (k, s) in from {
                into.entry(k.clone()).or_default().merge(s);
            }
        }
    }

    /// The verdict label of the run: the first failure's, or `pass`.
    pub fn label(&self) -> String {
        self.first_failure
            .as_ref()
            .map(|f| f.execution.verdict.label())
            .unwrap_or_else(|| "pass".into())
    }
}

/// Runs executions of a scenario.
pub fn run(scenario: &Scenario, options: &RunOptions) -> RunReport {
    run_observed(scenario, options, &mut |_| {})
}

/// Executions between two calls of a run's progress callback.
pub const PROGRESS_EVERY: u64 = 1024;

/// [`run`], calling `progress` with the executions done every [`PROGRESS_EVERY`] of them
/// and at the end (for a progress bar).
pub fn run_observed(
    scenario: &Scenario,
    options: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> RunReport {
    let mut report = RunReport {
        executions: 0,
        verdicts: BTreeMap::new(),
        first_failure: None,
        metrics: BTreeMap::new(),
        calls: 0,
        steps: 0,
        found: BTreeMap::new(),
        faults: BTreeMap::new(),
        checks: BTreeMap::new(),
        met: BTreeMap::new(),
        at_violation: BTreeMap::new(),
    };
    let expect = &options.expect;
    let allowed = |l: &String| expect.must.contains(l) || expect.may.contains(l);
    // The first failure showing nothing the run looks for, kept in case nothing better
    // comes.
    let mut fallback: Option<(u64, Execution)> = None;
    // True while the failure shown breaks something not allowed.
    let mut shown_unexpected = false;
    // Execution `i` as a finding, shrunk when asked; `cost`: the steps spent finding it.
    let package = |i: u64, e: &Execution, cost: u64| {
        let found = Found {
            seed: Some((options.strategy, options.seed.wrapping_add(i))),
            cost,
        };
        failure(scenario, found, e, options.shrink)
    };
    let mut strategy = options.strategy.make(options.seed);
    let setup = scenario.setup.clone();
    // One result, its buffers reused by every execution.
    let mut e = Execution::default();
    let runs = Runs::new(&scenario.config);
    for i in 0..options.executions {
        runs.execute_into(&*setup, &mut *strategy, i, &mut e);
        report.executions += 1;
        if report.executions.is_multiple_of(PROGRESS_EVERY) {
            progress(report.executions);
        }
        report.calls += e.calls;
        report.steps += e.steps;
        report.count(&e);
        *report.verdicts.entry(e.verdict.label()).or_insert(0) += 1;
        for (k, v) in &e.metrics {
            report.metrics.entry(k.clone()).or_default().add(*v);
        }
        if e.verdict.is_pass() {
            continue;
        }
        if let Verdict::Violation(v) = &e.verdict {
            for (name, n) in &v.failure.numbers {
                let key = format!("{}.{name}", v.invariant);
                report.at_violation.entry(key).or_default().add(*n as f64);
            }
        }
        let labels = failing_labels(&e);
        for l in &labels {
            *report.found.entry(l.clone()).or_insert(0) += 1;
        }
        let unexpected = labels.iter().any(|l| !allowed(l));
        let sought = labels.iter().any(|l| expect.must.contains(l));
        // The failure shown: the first that is not allowed, else the first that was
        // sought, else the first of any.
        if (unexpected && !shown_unexpected) || (sought && report.first_failure.is_none()) {
            report.first_failure = Some(package(i, &e, report.steps));
            shown_unexpected = unexpected;
        } else if report.first_failure.is_none() && fallback.is_none() {
            fallback = Some((i, std::mem::take(&mut e)));
        }
        if !options.keep_going && (unexpected || expect.satisfied_by(&report.found)) {
            break;
        }
    }
    if report.first_failure.is_none()
        && let Some((i, e)) = fallback
    {
        report.first_failure = Some(package(i, &e, report.steps));
    }
    progress(report.executions);
    report
}

/// Every failing label of an execution: each invariant it violated, or its verdict's label.
pub fn failing_labels(e: &Execution) -> Vec<String> {
    match &e.verdict {
        Verdict::Pass => Vec::new(),
        Verdict::Violation(_) if !e.violated.is_empty() => {
            let mut v: Vec<String> = e.violated.iter().map(|n| n.to_string()).collect();
            v.dedup();
            v
        }
        other => vec![other.label()],
    }
}

/// A failure found without shrinking, shrunk now as [`run`] shrinks its own (the step
/// budget tied to `cost`, the steps its run spent): for the one failure a sweep shows. An
/// already shrunk one, or a divergence, is returned as it is.
pub fn shrink_finding(
    scenario: &Scenario,
    strategy: StrategyKind,
    finding: &Finding,
    cost: u64,
) -> Finding {
    if finding.original.is_some() {
        return finding.clone();
    }
    let found = Found {
        seed: finding.seed.map(|seed| (strategy, seed)),
        cost,
    };
    failure(scenario, found, &finding.execution, true)
}

/// Where a failure came from: its seed (for random strategies) and the steps spent
/// finding it.
pub(crate) struct Found {
    pub(crate) seed: Option<(StrategyKind, u64)>,
    pub(crate) cost: u64,
}

/// The steps shrinking may spend: a few times what finding cost, within bounds, so a
/// failure found in one short execution is not followed by seconds of shrinking.
pub fn shrink_budget(finding_cost: u64) -> u64 {
    finding_cost.saturating_mul(4).clamp(100_000, 1_000_000)
}

/// Packages a failing execution: shrunk (when asked and when it is a violation, livelock
/// or panic) and replayed with its timeline.
pub(crate) fn failure(scenario: &Scenario, found: Found, e: &Execution, shrink: bool) -> Finding {
    let found_hash = found
        .seed
        .map(|(kind, seed)| run_seed(scenario, kind, seed).trace.hash());
    let seed = found.seed.map(|(_, seed)| seed);
    if shrink && !matches!(e.verdict, Verdict::Diverged { .. }) {
        let budget = shrink_budget(found.cost);
        let shrunk = shrink::shrink(scenario, e, scenario.executions.min(2000), budget);
        return Finding {
            seed,
            original: Some(shrunk.before),
            clients: shrunk.subject.scenario().clients,
            execution: shrunk.run,
            found_hash,
            cut_short: shrunk.cut_short,
        };
    }
    Finding {
        seed,
        original: None,
        clients: scenario.clients,
        execution: replay(scenario, &e.schedule),
        found_hash,
        cut_short: false,
    }
}

/// Replays a schedule with the timeline on.
pub fn replay(scenario: &Scenario, schedule: &Schedule) -> Execution {
    let mut config = scenario.config.clone();
    config.trace = true;
    let mut strategy = Replay::new(schedule.clone());
    execute(&config, &*scenario.setup, &mut strategy, 0)
}

/// Runs the single execution a seed identifies, with the timeline on.
pub fn run_seed(scenario: &Scenario, strategy: StrategyKind, seed: u64) -> Execution {
    let mut config = scenario.config.clone();
    config.trace = true;
    let mut s = strategy.make(seed);
    execute(&config, &*scenario.setup, s.as_mut(), 0)
}

/// The outcome of a determinism check on one seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Determinism {
    /// Both runs gave the same trace hash.
    Same(u64),
    /// They differ from this line on.
    Differs {
        /// Index of the first differing timeline line.
        line: usize,
        /// That line in the first run.
        first: String,
        /// And in the second.
        second: String,
    },
}

/// Runs the execution of `seed` twice and compares the timelines.
pub fn check_determinism(scenario: &Scenario, strategy: StrategyKind, seed: u64) -> Determinism {
    let a = run_seed(scenario, strategy, seed);
    let b = run_seed(scenario, strategy, seed);
    match a.trace.first_divergence(&b.trace) {
        None if a.verdict == b.verdict => Determinism::Same(a.trace.hash()),
        None => Determinism::Differs {
            line: a.trace.lines.len(),
            first: a.verdict.to_string(),
            second: b.verdict.to_string(),
        },
        Some(line) => {
            let show = |e: &Execution| {
                e.trace
                    .lines
                    .get(line)
                    .map(|l| format!("{l:?}"))
                    .unwrap_or_else(|| "(end)".into())
            };
            Determinism::Differs {
                line,
                first: show(&a),
                second: show(&b),
            }
        }
    }
}

/// True if a run's outcome matches the scenario's expectation.
pub fn matches_expectation(expect: &str, verdict: &Verdict) -> bool {
    verdict.label() == expect
}

/// The machine's cores, at least 1: how many threads `mcsim explore` shares a search
/// over and how many scenarios `mcsim check` runs at once unless told (`--jobs`).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
