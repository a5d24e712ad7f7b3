//! Running a scenario: many executions, stop (or not) at the first failure, replay the
//! failure with its timeline, summarize metrics.

use std::collections::BTreeMap;

use crate::exec::{Execution, execute};
use crate::explore::{Dfs, DfsStats, Replay, Schedule, Strategy};
use crate::invariant::Verdict;
use crate::scenario::{Scenario, StrategyKind};
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

/// The outcome of running a scenario.
#[derive(Debug, Clone)]
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
}

impl RunReport {
    /// The same report with its first failure.
    pub fn with_failure(self, failure: Finding) -> RunReport {
        RunReport {
            first_failure: Some(failure),
            ..self
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
    };
    let mut strategy = options.strategy.make(options.seed);
    let setup = scenario.setup.clone();
    for i in 0..options.executions {
        let e = execute(&scenario.config, &*setup, strategy.as_mut(), i);
        report.executions += 1;
        if report.executions % PROGRESS_EVERY == 0 {
            progress(report.executions);
        }
        report.calls += e.calls;
        report.steps += e.steps;
        *report.verdicts.entry(e.verdict.label()).or_insert(0) += 1;
        for (k, v) in &e.metrics {
            report.metrics.entry(k.clone()).or_default().add(*v);
        }
        if !e.verdict.is_pass() && report.first_failure.is_none() {
            let seed = options.seed.wrapping_add(i);
            let found = Found {
                seed: Some((options.strategy, seed)),
                cost: report.steps,
            };
            report.first_failure = Some(failure(scenario, found, &e, options.shrink));
            if !options.keep_going {
                break;
            }
        }
    }
    progress(report.executions);
    report
}

/// Where a failure came from: its seed (for random strategies) and the steps spent
/// finding it.
struct Found {
    seed: Option<(StrategyKind, u64)>,
    cost: u64,
}

/// The steps shrinking may spend: a few times what finding cost, within bounds, so a
/// failure found in one short execution is not followed by seconds of shrinking.
pub fn shrink_budget(finding_cost: u64) -> u64 {
    finding_cost.saturating_mul(4).clamp(100_000, 1_000_000)
}

/// Packages a failing execution: shrunk (when asked and when it is a violation, livelock
/// or panic) and replayed with its timeline.
fn failure(scenario: &Scenario, found: Found, e: &Execution, shrink: bool) -> Finding {
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
            clients: shrunk.scenario.clients,
            execution: shrunk.execution,
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

/// Bounds of an exhaustive exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExploreOptions {
    /// At most this many preemptions per execution (`None`: unbounded).
    pub max_preemptions: Option<u32>,
    /// At most this many faults per execution (`None`: only the plan's budgets).
    pub max_faults: Option<u32>,
    /// Sleep-set partial-order reduction.
    pub reduce: bool,
    /// Stop after this many executions (the result is then not exhaustive).
    pub max_executions: Option<u64>,
    /// Keep exploring after a failure, counting failing executions.
    pub keep_going: bool,
    /// Expand each state once ([`Dfs::with_cache`]).
    pub cache: bool,
    /// Try each call also where its window crosses a second ([`Dfs::with_timing`]).
    pub timing: bool,
    /// Draws of the workload searched, one after the other ([`Dfs::set_draw`]).
    pub draws: u32,
    /// Search with at most 0, then 1, then 2 preemptions and faults (each capped by
    /// `max_preemptions` and `max_faults`), then at those bounds, until a counterexample
    /// turns up (the one with fewest preemptions and faults comes first) or a bound cuts
    /// nothing (then every schedule was covered).
    pub iterative: bool,
}

impl Default for ExploreOptions {
    fn default() -> ExploreOptions {
        ExploreOptions {
            max_preemptions: None,
            max_faults: None,
            reduce: true,
            max_executions: None,
            keep_going: false,
            cache: true,
            timing: true,
            draws: 1,
            iterative: false,
        }
    }
}

/// The outcome of an exhaustive exploration.
#[derive(Debug, Clone)]
pub struct ExploreReport {
    /// Executions, pruning and completeness.
    pub stats: DfsStats,
    /// Distinct final server states among complete executions.
    pub distinct_states: usize,
    /// The verdict of every complete execution, as labels (`pass` and each violation).
    pub verdicts: std::collections::BTreeSet<String>,
    /// The preemption bound of the last search (`None`: unbounded, or the bounds cut
    /// nothing, so every schedule was covered).
    pub preemptions_searched: Option<u32>,
    /// The fault bound of the last search (`None`: only the plan's budgets, or the bounds
    /// cut nothing).
    pub faults_searched: Option<u32>,
    /// Draws of the workload searched ([`ExploreOptions::draws`]).
    pub draws_searched: u32,
    /// The first counterexample, if any.
    pub failure: Option<Finding>,
    /// Complete executions that failed (all of them with `keep_going`).
    pub failures: u64,
    /// Calls executed.
    pub calls: u64,
    /// True if stopped by the caller or the execution cap before covering everything.
    pub interrupted: bool,
}

/// Explores every schedule of a scenario within bounds, stopping at the first failure.
/// `progress` is called after each execution; returning false stops the exploration.
pub fn explore(
    scenario: &Scenario,
    options: &ExploreOptions,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    explore_seeking(scenario, options, None, progress)
}

/// [`explore`], looking for the violation `seek` (a scenario's expected verdict): other
/// violations found on the way are counted in the report's verdicts and the search goes
/// on; it stops at the first `seek`. Without one, the first other violation is reported.
pub fn explore_seeking(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    let fresh = || {
        Dfs::new(options.max_preemptions, options.reduce)
            .with_max_faults(options.max_faults)
            .with_cache(options.cache)
            .with_timing(options.timing)
    };
    let mut dfs = fresh();
    let levels = bound_levels(options);
    // Executions run, cut short ones included (what caps and budgets count), and those
    // run to the end (what the report counts).
    let (mut spent, mut executions) = (0, 0);
    let mut report: Option<ExploreReport> = None;
    let mut earlier_bounds = None;
    let mut fallback = None;
    'draws: for draw in 0..options.draws.max(1) {
        dfs.set_draw(draw, options.draws);
        let spent_before_draw = spent;
        for (level, &(preemptions, faults)) in levels.iter().enumerate() {
            let at_bound = |p: Option<u32>, cap: Option<u64>| ExploreOptions {
                max_preemptions: p,
                max_faults: faults,
                max_executions: cap,
                ..*options
            };
            let left = options.max_executions.map(|m| m.saturating_sub(spent));
            let mut r = None;
            // Without a working cache (none, or given up) the search of every schedule
            // is never the cheaper one.
            let cache_works = options.cache && !dfs.stats().cache_given_up;
            if level + 1 == levels.len()
                && options.iterative
                && preemptions.is_some()
                && cache_works
            {
                // Every schedule may cost less than the bounded search (whose visited
                // states cover each other less): tried first, with a budget, and kept
                // when it finishes, as the stronger answer.
                let budget = UNBOUNDED_TRIAL.max(spent - spent_before_draw);
                let cap = Some(left.map_or(budget, |l| l.min(budget)));
                let mut trial = fresh();
                trial.set_draw(draw, options.draws);
                trial.deepen(None, faults);
                let t = explore_within(scenario, &at_bound(None, cap), &mut trial, seek, progress);
                spent += t.stats.work();
                executions += t.stats.executions;
                if !t.interrupted {
                    dfs = trial;
                    r = Some(t);
                }
            }
            let mut r = r.unwrap_or_else(|| {
                dfs.deepen(preemptions, faults);
                let left = options.max_executions.map(|m| m.saturating_sub(spent));
                let r = explore_within(
                    scenario,
                    &at_bound(preemptions, left),
                    &mut dfs,
                    seek,
                    progress,
                );
                spent += r.stats.work();
                executions += r.stats.executions;
                r
            });
            r.stats.executions = executions;
            if let Some(before) = &report {
                r.calls += before.calls;
                r.verdicts.extend(before.verdicts.iter().cloned());
                r.failures += before.failures;
                r.stats.pruned += before.stats.pruned;
                r.stats.max_depth = r.stats.max_depth.max(before.stats.max_depth);
                if level == 0 {
                    // Another draw: its final states are others. (Within a draw, each
                    // level's search reaches every state the one before it reached.)
                    r.distinct_states += before.distinct_states;
                }
            }
            r.draws_searched = draw + 1;
            let covered_all = r.stats.complete && r.stats.cut_by_bound == 0;
            // What the whole search covered: an earlier draw's bounds still hold.
            if let Some(b) = earlier_bounds.filter(|_| covered_all) {
                (r.preemptions_searched, r.faults_searched) = b;
            } else if covered_all {
                r.preemptions_searched = None;
                r.faults_searched = None;
            }
            let sought = r
                .failure
                .as_ref()
                .is_some_and(|f| seek.is_none_or(|l| f.execution.verdict.label() == l));
            if !sought && r.failure.is_some() {
                // Another violation: kept aside, reported if the sought one never comes.
                let f = r.failure.take();
                fallback = fallback.or(f);
            }
            let stop = (sought && !options.keep_going) || r.interrupted;
            report = Some(r);
            if stop {
                break 'draws;
            }
            if covered_all {
                break;
            }
        }
        earlier_bounds = report
            .as_ref()
            .map(|r| (r.preemptions_searched, r.faults_searched))
            .filter(|b| *b != (None, None));
    }
    let mut report = report.expect("at least one search ran");
    report.failure = report.failure.or(fallback);
    report
}

/// Executions the search of every schedule gets, at the least, before the last bounded
/// level is searched instead.
const UNBOUNDED_TRIAL: u64 = 10_000;

/// The bounds searched in turn: the bugs people meet need few preemptions (as CHESS
/// found) and few faults, so 0, 1 and 2 of each first, each a cheap search whose states
/// the next one keeps, then the bounds asked for. Without `iterative`, only those.
fn bound_levels(options: &ExploreOptions) -> Vec<(Option<u32>, Option<u32>)> {
    let last = (options.max_preemptions, options.max_faults);
    let mut levels = Vec::new();
    if options.iterative {
        for k in 0..=2u32 {
            let level = (
                Some(options.max_preemptions.map_or(k, |m| m.min(k))),
                Some(options.max_faults.map_or(k, |m| m.min(k))),
            );
            if levels.last() != Some(&level) && level != last {
                levels.push(level);
            }
        }
    }
    levels.push(last);
    levels
}

/// One exhaustive search within `options`' bounds, by `dfs` (which may keep the states
/// an earlier, tighter search explored).
fn explore_within(
    scenario: &Scenario,
    options: &ExploreOptions,
    dfs: &mut Dfs,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    // A violation other than the one sought: kept in case the sought one never comes.
    let mut other = None;
    let mut states = std::collections::BTreeSet::new();
    let mut calls = 0;
    let mut failure = None;
    let mut failures = 0;
    let mut verdicts = std::collections::BTreeSet::new();
    let mut interrupted = false;
    let setup = scenario.setup.clone();
    let mut steps = 0;
    for i in 0.. {
        let e = execute(&scenario.config, &*setup, dfs, i);
        calls += e.calls;
        steps += e.steps;
        let failed = !e.pruned && !e.verdict.is_pass();
        if !e.pruned
            && let Some(hash) = e.state_hash
        {
            states.insert(hash);
        }
        if !e.pruned {
            verdicts.insert(e.verdict.label());
        }
        let more = dfs.end(failed);
        if failed {
            failures += 1;
            // The sought violation (any, without `seek`), or another kept aside.
            let sought = seek.is_none_or(|l| e.verdict.label() == l);
            let slot = if sought { &mut failure } else { &mut other };
            if slot.is_none() {
                let found = Found {
                    seed: None,
                    cost: steps,
                };
                *slot = Some(self::failure(scenario, found, &e, true));
            }
            if sought && !options.keep_going {
                interrupted = more;
                break;
            }
        }
        if !more {
            break;
        }
        let stats = dfs.stats();
        if !progress(&stats) || options.max_executions.is_some_and(|m| stats.work() >= m) {
            interrupted = true;
            break;
        }
    }
    ExploreReport {
        stats: dfs.stats(),
        distinct_states: states.len(),
        verdicts,
        preemptions_searched: options.max_preemptions,
        faults_searched: options.max_faults,
        draws_searched: 1,
        failure: failure.or(other),
        failures,
        calls,
        interrupted,
    }
}
