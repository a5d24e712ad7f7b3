//! One search at one tick phase: iterative deepening of the preemption and fault bounds
//! over the workload's draws, each bound's search on one thread or shared over several.

use super::dfs::{Dfs, DfsStats};
use crate::exec::{Execution, Runs};
use crate::explore::Strategy;
use crate::scenario::Scenario;

use super::exploration::{ExploreOptions, ExploreReport};
use super::tally::Tally;
use crate::run::{Found, failure};

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
    // One result, its buffers reused by every execution.
    let mut e = Execution::default();
    let runs = Runs::new(&scenario.config);
    for i in 0.. {
        runs.execute_into(&*setup, dfs, i, &mut e);
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
