//! The search over tick-phase classes ([`PhaseCoverage`]): phase 0 first, then the classes
//! its executions revealed, in batches, each batch's phases shared by a pool of threads
//! where there are several.
//!
//! Which phases are searched does not depend on the threads: after phase 0, a batch takes
//! the classes farthest from every phase searched (each as if the ones taken before it
//! were searched too), as many as the cap on classes leaves (or, without one, as many as
//! the budget of executions left pays for at the searches' cost so far, at least one), so
//! that a search stopped early has spread its phases over the second; then it adds the
//! instants the batch's searches met, and another batch takes the classes those revealed
//! if the cap or the budget leaves room. A batch's searches run on a pool of threads when
//! the caller allows several jobs and sets no execution cap, each thread taking the next
//! phase when it is free, otherwise one after the other; either way their reports are read in batch order, and a search that stops
//! the whole (the sought violation, or an interruption) drops what comes after it, as one
//! thread would never have run it. A phase's search is deterministic, so the report is the
//! same on any number of threads: the phases, the verdict, the counterexample and the
//! figures (each search of a batch runs on one thread, where phase 0's search alone may
//! share itself over all of them: [`super::explore`]'s shares).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::dfs::DfsStats;
use crate::scenario::Scenario;

use super::at_phase::search_at_phase;
use super::exploration::{ExploreOptions, ExploreReport};
use super::phases::{PhaseClasses, PhaseLimit, farthest};

/// [`super::explore_seeking`] over the tick-phase classes of a scenario that leaves the
/// phase free.
pub(super) fn search_phases(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    let cap = options.max_phases.map_or(usize::MAX, |c| c.max(1));
    // Without a cap on classes, the budget of executions bounds the search.
    let budget = options.max_phases.is_none().then_some(super::PHASE_BUDGET);
    let mut stopped = None;
    let mut classes = PhaseClasses::new();
    let mut total: Option<ExploreReport> = None;
    let stops = |r: &ExploreReport| {
        let sought = r
            .failure
            .as_ref()
            .is_some_and(|f| seek.is_none_or(|l| f.execution.verdict.label() == l));
        (sought && !options.keep_going) || r.interrupted
    };
    let mut batch = vec![0];
    'batches: while !batch.is_empty() {
        let spent = total.as_ref().map_or(0, |t| t.stats.work());
        let reports = search_batch(scenario, options, seek, &batch, spent, &stops, progress);
        let ran = reports.len();
        for (&phase, r) in batch.iter().zip(reports) {
            classes.met(r.phase_points.iter().copied());
            classes.searched(phase);
            let stop = stops(&r);
            total = Some(match total {
                None => r,
                Some(t) => t.merge(r),
            });
            if stop {
                break 'batches;
            }
        }
        if ran < batch.len() {
            // The execution cap ran out before the batch's last search.
            if let Some(t) = &mut total {
                t.interrupted = true;
            }
            break;
        }
        let searched = classes.searched.len();
        if searched >= cap {
            stopped = Some(PhaseLimit::Classes(cap));
            break;
        }
        let mut room = cap - searched;
        if let (Some(budget), Some(t)) = (budget, &total) {
            let spent = t.stats.work();
            let floor = super::PHASE_FLOOR.saturating_sub(searched);
            if spent >= budget && floor == 0 {
                stopped = Some(PhaseLimit::Executions(budget));
                break;
            }
            // The floor's classes, and as many more as the searches so far say the
            // budget left pays for, at least one: the same batch on any number of
            // threads.
            let each = (spent / searched as u64).max(1);
            let paid = (budget.saturating_sub(spent) / each) as usize;
            room = room.min(floor.max(paid).max(1));
        }
        batch = farthest(&classes.points, &classes.searched, room);
    }
    let mut total = total.expect("at least one phase searched");
    total.phases = classes.coverage(stopped);
    total.phase_points = classes.points;
    total
}

/// The searches of one batch, in batch order, up to the first that `stops` the whole (the
/// ones after it are not returned) or until the execution cap runs out.
///
/// With more than one job and no execution cap, the batch's phases are searched by a
/// pool of threads, each taking the next phase not yet taken when it is free; the
/// reports are read in batch order all the same. A search that stops the whole tells
/// the searches of later phases to stop (their reports are dropped, as one thread would
/// never have run them) and lets the earlier ones finish.
fn search_batch(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    batch: &[u32],
    spent: u64,
    stops: &(dyn Fn(&ExploreReport) -> bool + Sync),
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> Vec<ExploreReport> {
    let at = |phase: u32| Some(Duration::from_micros(u64::from(phase)));
    let portable = (batch.len() > 1 && options.jobs > 1 && options.max_executions.is_none())
        .then(|| scenario.portable())
        .flatten();
    let Some(portable) = portable else {
        // One after the other: the execution cap holds over every phase.
        let mut spent = spent;
        let mut out = Vec::new();
        for &phase in batch {
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
    // Each phase's search on one thread, the pool's threads taking phases in batch order.
    let single = ExploreOptions {
        jobs: 1,
        ..*options
    };
    let pool = Pool::new(batch.len());
    let helpers = options.jobs.min(batch.len()) - 1;
    std::thread::scope(|scope| {
        let (pool, portable) = (&pool, &portable);
        let workers: Vec<_> = (0..helpers)
            .map(|_| {
                scope.spawn(move || {
                    // Read again on this thread (the model's setup stays on the thread
                    // that made it), with the caller's settings.
                    let again = portable
                        .build()
                        .expect("a scenario read once reads again from the same text");
                    pool.work(stops, &mut |i, stop| {
                        search_at_phase(&again, &single, seek, at(batch[i]), &mut |_| !stop())
                    });
                })
            })
            .collect();
        // This thread searches too, and reports its progress to the caller.
        let mut last = DfsStats::default();
        pool.work(stops, &mut |i, stop| {
            search_at_phase(scenario, &single, seek, at(batch[i]), &mut |s| {
                last = *s;
                if !progress(s) {
                    pool.interrupted.store(true, Ordering::Relaxed);
                }
                !stop()
            })
        });
        while workers.iter().any(|w| !w.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
            if !progress(&last) {
                pool.interrupted.store(true, Ordering::Relaxed);
            }
        }
        for w in workers {
            w.join().expect("a phase's search panicked");
        }
    });
    pool.reports()
}

/// The searches of a batch shared by a pool of threads: what each reports (`T`, an
/// [`ExploreReport`] but in tests) by its place in the batch.
struct Pool<T> {
    /// Places in the batch.
    len: usize,
    /// The place of the next search to run.
    next: AtomicUsize,
    /// The earliest place whose search stops the whole.
    first_stop: AtomicUsize,
    /// The caller asked to stop (its progress callback said no).
    interrupted: AtomicBool,
    /// Each place's report, once searched.
    reports: Mutex<Vec<Option<T>>>,
}

impl<T> Pool<T> {
    fn new(len: usize) -> Pool<T> {
        Pool {
            len,
            next: AtomicUsize::new(0),
            first_stop: AtomicUsize::new(usize::MAX),
            interrupted: AtomicBool::new(false),
            reports: Mutex::new((0..len).map(|_| None).collect()),
        }
    }

    /// Runs searches one at a time until no place is left or a search at an earlier
    /// place than the next stopped the whole: `search(i, stop)` searches place `i`,
    /// asking `stop` after each execution whether to give up (the caller asked, or a
    /// search at an earlier place stopped the whole).
    fn work(
        &self,
        stops: &(dyn Fn(&T) -> bool + Sync),
        search: &mut dyn FnMut(usize, &dyn Fn() -> bool) -> T,
    ) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.len || i > self.first_stop.load(Ordering::Relaxed) {
                return;
            }
            let stop = || {
                self.interrupted.load(Ordering::Relaxed)
                    || self.first_stop.load(Ordering::Relaxed) < i
            };
            let r = search(i, &stop);
            if stops(&r) {
                self.first_stop.fetch_min(i, Ordering::Relaxed);
            }
            self.reports.lock().expect("no search panicked")[i] = Some(r);
        }
    }

    /// The reports in batch order, up to the first that stops the whole: what one
    /// thread running the searches in turn would have.
    fn reports(self) -> Vec<T> {
        let first_stop = self.first_stop.into_inner();
        let reports = self.reports.into_inner().expect("no search panicked");
        reports
            .into_iter()
            .take(first_stop.saturating_add(1))
            .map_while(|r| r)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of `len` searches on `threads` threads, place `i` taking `cost(i)` ms and
    /// stopping the whole when `stopping(i)`: what the pool reports, each search's
    /// report being its place and whether it was told to stop.
    fn pooled(
        len: usize,
        threads: usize,
        cost: fn(usize) -> u64,
        stopping: fn(usize) -> bool,
    ) -> Vec<(usize, bool)> {
        let pool = Pool::new(len);
        let stops = |r: &(usize, bool)| stopping(r.0) || r.1;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    pool.work(&stops, &mut |i, stop| {
                        for _ in 0..cost(i) {
                            if stop() {
                                return (i, true);
                            }
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        (i, false)
                    })
                });
            }
        });
        pool.reports()
    }

    #[test]
    fn a_pool_reports_every_place_in_order() {
        for threads in 1..=3 {
            let r = pooled(7, threads, |i| (7 - i as u64) * 3, |_| false);
            assert_eq!(
                r,
                (0..7).map(|i| (i, false)).collect::<Vec<_>>(),
                "{threads}"
            );
        }
    }

    #[test]
    fn a_search_that_stops_the_whole_keeps_the_ones_before_it_and_drops_the_rest() {
        // Place 3 stops the whole quickly while place 1 is still running: place 1 must
        // still finish, and the places after 3 are dropped, run or told to stop.
        for threads in 1..=3 {
            let r = pooled(7, threads, |i| if i == 1 { 40 } else { 2 }, |i| i == 3);
            assert_eq!(
                r,
                vec![(0, false), (1, false), (2, false), (3, false)],
                "{threads}"
            );
        }
    }
}
