//! The search over tick-phase classes ([`PhaseCoverage`]): phase 0 first, then the classes
//! its executions revealed, two at a time, on two threads where there are two.
//!
//! Which phases are searched does not depend on the threads: after phase 0, each round
//! takes the two classes farthest from every phase searched (the second as if the first
//! were searched too), so that a search the cap stops has spread its phases over the
//! second, and then adds the instants both searches met. A round's two searches run on
//! two threads when the caller allows two jobs and sets no execution cap, otherwise one
//! after the other; either way their reports are read in round order, and a search that
//! stops the whole (the sought violation, or an interruption) drops what comes after it,
//! as one thread would never have run it. A phase's search is deterministic, so the report
//! is the same on any number of threads: the phases, the verdict, the counterexample and
//! the figures (the two searches of a round each run on one thread, where one search alone
//! may share itself over both: [`super::explore`]'s shares).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::explore::DfsStats;
use crate::scenario::Scenario;

use super::at_phase::search_at_phase;
use super::exploration::{ExploreOptions, ExploreReport};
use super::phases::{PhaseCoverage, class_of, merge, representatives};

/// Phases a round searches after phase 0.
const ROUND: usize = 2;

/// [`super::explore_seeking`] over the tick-phase classes of a scenario that leaves the
/// phase free.
pub(super) fn search_phases(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    let cap = options.max_phases.max(1);
    let mut points = BTreeSet::new();
    let mut searched: Vec<u32> = Vec::new();
    let mut total: Option<ExploreReport> = None;
    let stops = |r: &ExploreReport| {
        let sought = r
            .failure
            .as_ref()
            .is_some_and(|f| seek.is_none_or(|l| f.execution.verdict.label() == l));
        (sought && !options.keep_going) || r.interrupted
    };
    let mut round = vec![0];
    'rounds: while !round.is_empty() {
        let spent = total.as_ref().map_or(0, |t| t.stats.work());
        let reports = search_round(scenario, options, seek, &round, spent, &stops, progress);
        let ran = reports.len();
        for (&phase, r) in round.iter().zip(reports) {
            points.extend(r.phase_points.iter().copied());
            searched.push(phase);
            let stop = stops(&r);
            total = Some(match total {
                None => r,
                Some(t) => merge(t, r),
            });
            if stop {
                break 'rounds;
            }
        }
        if ran < round.len() {
            // The execution cap ran out before the round's last search.
            if let Some(t) = &mut total {
                t.interrupted = true;
            }
            break;
        }
        if searched.len() >= cap {
            break;
        }
        round = farthest(&points, &searched, ROUND.min(cap - searched.len()));
    }
    let capped = searched.len() >= cap;
    let mut total = total.expect("at least one phase searched");
    let covered: BTreeSet<usize> = searched.iter().map(|&p| class_of(&points, p)).collect();
    let classes = representatives(&points)
        .into_iter()
        .map(|q| class_of(&points, q))
        .collect::<BTreeSet<_>>()
        .len();
    let all = covered.len() == classes;
    total.phases = PhaseCoverage {
        pinned: None,
        searched,
        classes,
        all,
        capped: capped && !all,
    };
    total.phase_points = points;
    total
}

/// Up to `n` phases of classes no phase in `searched` covers, each the farthest (around
/// the second) from every phase searched or taken before it; ties go to the earlier phase.
fn farthest(points: &BTreeSet<u32>, searched: &[u32], n: usize) -> Vec<u32> {
    let mut taken: Vec<u32> = searched.to_vec();
    let mut out = Vec::new();
    for _ in 0..n {
        let covered: BTreeSet<usize> = taken.iter().map(|&p| class_of(points, p)).collect();
        let distance = |q: u32| {
            taken
                .iter()
                .map(|&p| {
                    let d = q.abs_diff(p);
                    d.min(1_000_000 - d)
                })
                .min()
                .unwrap_or(0)
        };
        let Some(next) = representatives(points)
            .into_iter()
            .filter(|&q| !covered.contains(&class_of(points, q)))
            .max_by_key(|&q| (distance(q), std::cmp::Reverse(q)))
        else {
            break;
        };
        taken.push(next);
        out.push(next);
    }
    out
}

/// The searches of one round, in round order, up to the first that `stops` the whole
/// (the ones after it are not returned) or until the execution cap runs out.
fn search_round(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    round: &[u32],
    spent: u64,
    stops: &dyn Fn(&ExploreReport) -> bool,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> Vec<ExploreReport> {
    let at = |phase: u32| Some(Duration::from_micros(u64::from(phase)));
    let portable = (round.len() == 2 && options.jobs > 1 && options.max_executions.is_none())
        .then(|| scenario.portable())
        .flatten();
    let Some(portable) = portable else {
        // One after the other: the execution cap holds over every phase.
        let mut spent = spent;
        let mut out = Vec::new();
        for &phase in round {
            let within = ExploreOptions {
                max_executions: options.max_executions.map(|m| m.saturating_sub(spent)),
                ..*options
            };
            if within.max_executions == Some(0) {
                break;
            }
            let r = search_at_phase(scenario, &within, seek, at(phase), progress);
            spent += r.stats.work();
            let stop = stops(&r);
            out.push(r);
            if stop {
                break;
            }
        }
        return out;
    };
    // Side by side, each on one thread.
    let single = ExploreOptions {
        jobs: 1,
        ..*options
    };
    let stop = AtomicBool::new(false);
    let config = scenario.config.clone();
    std::thread::scope(|scope| {
        let (portable, stop) = (&portable, &stop);
        let second = scope.spawn(move || {
            // Read again on this thread (the model's setup stays on the thread that made
            // it), with the caller's settings.
            let mut again = portable
                .build()
                .expect("a scenario read once reads again from the same text");
            again.config = config;
            search_at_phase(&again, &single, seek, at(round[1]), &mut |_| {
                !stop.load(Ordering::Relaxed)
            })
        });
        let mut last = DfsStats::default();
        let first = search_at_phase(scenario, &single, seek, at(round[0]), &mut |s| {
            last = *s;
            let go = progress(s);
            if !go {
                stop.store(true, Ordering::Relaxed);
            }
            go
        });
        if stops(&first) {
            // One thread would not have searched the second phase.
            stop.store(true, Ordering::Relaxed);
            let _ = second.join();
            return vec![first];
        }
        while !second.is_finished() {
            std::thread::sleep(Duration::from_millis(10));
            if !progress(&last) {
                stop.store(true, Ordering::Relaxed);
            }
        }
        let second = second.join().expect("a phase's search panicked");
        vec![first, second]
    })
}
