//! `mcsim explore`: every schedule of a scenario within bounds, by iterative deepening of
//! preemption and fault bounds, over the workload's draws and the servers' tick-phase
//! classes.

use crate::exec::{Execution, execute};
use crate::explore::{Dfs, DfsStats, Strategy};
use crate::scenario::Scenario;

use super::{Finding, Found, failure};

pub use super::phases::{DEFAULT_MAX_PHASES, PhaseCoverage};

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
    /// Keep states up to a permutation of interchangeable clients when the model
    /// declares them so ([`Dfs::with_symmetry`], [`crate::Sim::symmetric`]).
    pub symmetry: bool,
    /// Tell a client's states apart by the summary of its memory it declares
    /// ([`Dfs::with_summaries`], [`crate::Client::remember_only`]).
    pub summaries: bool,
    /// Try each call also where its window crosses a second ([`Dfs::with_timing`]).
    pub timing: bool,
    /// Draws of the workload searched, one after the other ([`Dfs::set_draw`]).
    pub draws: u32,
    /// Search with at most 0, then 1, then 2 preemptions and faults (each capped by
    /// `max_preemptions` and `max_faults`), then at those bounds, until a counterexample
    /// turns up (the one with fewest preemptions and faults comes first) or a bound cuts
    /// nothing (then every schedule was covered).
    pub iterative: bool,
    /// When the scenario leaves the tick phase free: search at most this many phase
    /// classes (see [`PhaseCoverage`]).
    pub max_phases: usize,
    /// Threads each search runs on, sharing its tree (see
    /// [`Share`](crate::explore::dfs::Share)): the same verdict and the same first
    /// counterexample as one thread. 1: one thread.
    pub jobs: usize,
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
            symmetry: true,
            summaries: true,
            timing: true,
            draws: 1,
            iterative: false,
            max_phases: DEFAULT_MAX_PHASES,
            jobs: 1,
        }
    }
}

impl ExploreOptions {
    /// The search a scenario's `[explore]` table asks for: its preemption and fault
    /// bounds, draws and tick-phase classes, with iterative bounding (the smallest
    /// counterexample first), on one thread.
    pub fn for_scenario(scenario: &Scenario) -> ExploreOptions {
        let b = &scenario.bounds;
        ExploreOptions {
            max_preemptions: b.preemptions,
            max_faults: b.faults,
            draws: b.draws,
            max_phases: b.phases,
            iterative: true,
            ..ExploreOptions::default()
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
    /// The tick phases searched.
    pub phases: PhaseCoverage,
    /// Where in a second the explored executions could depend on the tick phase (µs
    /// after a server's boot): the class boundaries.
    pub phase_points: std::collections::BTreeSet<u32>,
}

impl ExploreReport {
    /// What the search covered, as one sentence that names every bound it holds under:
    /// "every schedule with at most 2 preemptions and at most 1 fault (evict), 3 clients,
    /// all 4 tick-phase classes (…)". With [`ExploreReport::fixed`], the whole statement
    /// a "no violation" makes; the command line, the reports and the model API print it.
    pub fn covered(&self, scenario: &Scenario) -> String {
        let plan = &scenario.config.faults;
        let kinds: Vec<&str> = plan
            .rules
            .iter()
            .filter(|(_, r)| r.max > 0)
            .map(|(k, _)| k.name())
            .collect();
        let faults_of = |n: String| {
            if kinds.is_empty() {
                n
            } else {
                format!("{n} ({})", kinds.join(", "))
            }
        };
        let bounds = match (self.preemptions_searched, self.faults_searched) {
            (None, None) if kinds.is_empty() => String::new(),
            (None, None) => format!(
                " with {}",
                faults_of("the fault plan's budgets of faults".into())
            ),
            (p, f) => {
                let p = p.map_or("any number of preemptions".into(), |p| {
                    format!("at most {p} preemption{}", plural(p))
                });
                let f = match f {
                    _ if kinds.is_empty() => "no faults in the plan".to_string(),
                    None => faults_of("the fault plan's budgets of faults".into()),
                    Some(f) => faults_of(format!("at most {f} fault{}", plural(f))),
                };
                format!(" with {p} and {f}")
            }
        };
        let draws = match self.draws_searched {
            0 | 1 => String::new(),
            n => format!(", {n} draws of the workload"),
        };
        let mut notes = Vec::new();
        if self.stats.symmetric {
            notes.push(
                "interchangeable: schedules that differ only by which client is which counted once",
            );
        }
        if self.stats.summarized {
            notes.push("each client's past kept as the summary its code declares");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        format!(
            "every schedule{bounds}, {} clients{notes}{draws}, {}",
            scenario.clients,
            self.phases.describe()
        )
    }

    /// What the search left fixed: the instants calls run at, and the workload's draws.
    pub fn fixed(options: &ExploreOptions) -> String {
        let timing = if options.timing {
            format!(
                "each call at the earliest instant of its latency window or the first of each second the window crosses (at most {})",
                crate::exec::MAX_EDGES
            )
        } else {
            "each call at the earliest instant of its latency window".into()
        };
        match options.draws {
            0 | 1 => format!("{timing}, the workload's own draws fixed by when it starts"),
            n => format!(
                "{timing}, {n} draws of the workload (each client's first call at k/{n} of its window)"
            ),
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
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
///
/// When the scenario leaves the tick phase free, the search runs once per tick-phase
/// class ([`PhaseCoverage`]), two classes at a time on two jobs, with the report one job
/// gives; otherwise at the pinned phase.
pub fn explore_seeking(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    if !scenario.config.phase_free {
        let mut r = search_at_phase(scenario, options, seek, None, progress);
        let pinned = scenario
            .config
            .servers
            .first()
            .map_or(0, |c| c.phase.as_micros() as u32);
        r.phases = PhaseCoverage {
            pinned: Some(pinned),
            searched: vec![pinned],
            classes: 1,
            all: true,
            capped: false,
        };
        return r;
    }
    super::phase_search::search_phases(scenario, options, seek, progress)
}

/// [`explore_seeking`] at one tick phase (`None`: the scenario's).
pub(super) fn search_at_phase(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    phase: Option<std::time::Duration>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    let fresh = || {
        Dfs::new(options.max_preemptions, options.reduce)
            .with_max_faults(options.max_faults)
            .with_cache(options.cache)
            .with_symmetry(options.symmetry)
            .with_summaries(options.summaries)
            .with_timing(options.timing)
            .with_phase(phase)
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
                r.phase_points.extend(before.phase_points.iter().copied());
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

/// What the executions of one search add up to: one thread's, or one share's of a search
/// shared over threads.
#[derive(Default)]
pub(super) struct Tally {
    states: std::collections::BTreeSet<u64>,
    verdicts: std::collections::BTreeSet<String>,
    phase_points: std::collections::BTreeSet<u32>,
    calls: u64,
    /// Steps of every execution run, cut short ones included: what finding cost.
    pub(super) steps: u64,
    pub(super) failures: u64,
}

impl Tally {
    /// Counts execution `e`, which is this tally's when `owned` (a shared search runs
    /// some executions on every thread and counts them on one). Where it could depend on
    /// the tick phase always counts: it decides which phases are searched next. Returns
    /// true if it ran to the end and failed.
    pub(super) fn add(&mut self, e: &Execution, owned: bool) -> bool {
        self.phase_points.extend(e.phase_points.iter().copied());
        self.steps += e.steps;
        if !owned {
            return false;
        }
        self.calls += e.calls;
        if e.pruned {
            return false;
        }
        if let Some(hash) = e.state_hash {
            self.states.insert(hash);
        }
        self.verdicts.insert(e.verdict.label());
        let failed = !e.verdict.is_pass();
        self.failures += u64::from(failed);
        failed
    }

    /// Takes in another tally (a share's).
    pub(super) fn absorb(&mut self, other: Tally) {
        self.states.extend(other.states);
        self.verdicts.extend(other.verdicts);
        self.phase_points.extend(other.phase_points);
        self.calls += other.calls;
        self.steps += other.steps;
        self.failures += other.failures;
    }

    /// The report of a search within `options`' bounds that ended with `stats`.
    pub(super) fn report(
        self,
        options: &ExploreOptions,
        stats: DfsStats,
        failure: Option<Finding>,
        interrupted: bool,
    ) -> ExploreReport {
        ExploreReport {
            stats,
            distinct_states: self.states.len(),
            verdicts: self.verdicts,
            preemptions_searched: options.max_preemptions,
            faults_searched: options.max_faults,
            draws_searched: 1,
            failure,
            failures: self.failures,
            calls: self.calls,
            interrupted,
            phases: PhaseCoverage::default(),
            phase_points: self.phase_points,
        }
    }
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
    // Shared over threads only where the visited-state cache is off or gave up: each
    // thread's cache would hold only its own states, and a search the cache cuts short
    // gains less from a second thread than it loses.
    let portable = (options.jobs > 1).then(|| scenario.portable()).flatten();
    if let Some(portable) = &portable
        && (!options.cache || dfs.stats().cache_given_up)
    {
        return super::shares::explore_shared(scenario, portable, options, dfs, seek, progress);
    }
    // A cache still on trial may give up during this search: then the search starts
    // again from here, shared.
    let mut restart = portable
        .as_ref()
        .filter(|_| dfs.stats().states < Dfs::CACHE_TRIAL)
        .map(|p| (p, dfs.clone()));
    let mut tally = Tally::default();
    // A violation other than the one sought: kept in case the sought one never comes.
    let mut other = None;
    let mut failure = None;
    let mut interrupted = false;
    let setup = scenario.setup.clone();
    for i in 0.. {
        let e = execute(&scenario.config, &*setup, dfs, i);
        let failed = tally.add(&e, true);
        let more = dfs.end(failed);
        if dfs.stats().cache_given_up
            && tally.failures == 0
            && more
            && let Some((portable, before)) = restart.take()
        {
            *dfs = before;
            dfs.give_up_cache();
            return super::shares::explore_shared(scenario, portable, options, dfs, seek, progress);
        }
        if failed {
            // The sought violation (any, without `seek`), or another kept aside.
            let sought = seek.is_none_or(|l| e.verdict.label() == l);
            let slot = if sought { &mut failure } else { &mut other };
            if slot.is_none() {
                let found = Found {
                    seed: None,
                    cost: tally.steps,
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
    tally.report(options, dfs.stats(), failure.or(other), interrupted)
}
