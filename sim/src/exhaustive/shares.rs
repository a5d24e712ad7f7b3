//! One exhaustive search on several threads: each runs a share of the tree
//! ([`Share`]), and together they give the verdict and the first counterexample the
//! search gives on one thread.
//!
//! The shares agree on who explores what without talking (a hash of each path at the
//! split), and talk only to stop: a share stops at its first sought violation, and
//! another stops once its search has passed that violation's place in depth-first order
//! ([`Dfs::frontier`]), since all it could still find comes later. The counterexample
//! reported is the earliest in that order, the one a single thread meets first; it is
//! shrunk once, on the calling thread. Counts add up over the shares; a share may run a
//! little that the single search would have cut (its cache holds only its own states),
//! so executions can be a few more than on one thread.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::dfs::Share;
use super::dfs::{Dfs, DfsStats};
use crate::exec::{Execution, Runs};
use crate::explore::Strategy;
use crate::scenario::{Portable, Scenario};

use super::exploration::{ExploreOptions, ExploreReport};
use super::tally::Tally;
use crate::run::{Found, failure};

/// The branching node where the shares part: deep enough that the subtrees outnumber
/// the threads many times over (for balance), shallow enough that few executions end
/// above it (those every share runs, and one counts). On `online-add` at 4 clients with
/// every client's whole memory, where the cache gives up (516096 executions, two threads): 4 took 44.8 s (one thread idle a third of the time), 6
/// 32.1 s, 8 29.7 s, 10 29.6 s, 16 30.2 s (23247 executions run by both); one thread
/// 60 s.
const SPLIT: u32 = 8;

/// What the shares tell each other.
struct Board {
    /// The earliest sought violation found so far, by its place in depth-first order.
    best: Mutex<Option<Vec<usize>>>,
    /// Stop now (the caller asked, or the execution cap is reached).
    stop: AtomicBool,
    /// Executions run (cut short ones included) over every share, for the cap.
    work: AtomicU64,
    /// Executions run to the end, for progress.
    executions: AtomicU64,
}

/// A failing execution, with its place and what finding it cost. Its execution is
/// shrunk on the calling thread, against the caller's scenario.
struct Failing {
    at: Vec<usize>,
    execution: Execution,
    cost: u64,
}

/// What one share did.
struct ShareRun {
    dfs: Dfs,
    tally: Tally,
    sought: Option<Failing>,
    other: Option<Failing>,
    /// Stopped before its share was covered.
    cut: bool,
}

/// [`super::explore`]'s search within bounds, on `options.jobs` threads.
pub(super) fn explore_shared(
    scenario: &Scenario,
    portable: &Portable,
    options: &ExploreOptions,
    dfs: &mut Dfs,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    let workers = options.jobs.clamp(1, 64) as u32;
    let board = Board {
        best: Mutex::new(None),
        stop: AtomicBool::new(false),
        work: AtomicU64::new(dfs.stats().work()),
        executions: AtomicU64::new(0),
    };
    let shares: Vec<Dfs> = (0..workers)
        .map(|worker| {
            dfs.share_of(Share {
                worker,
                workers,
                split: SPLIT,
            })
        })
        .collect();
    let runs: Vec<ShareRun> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let board = &board;
                scope.spawn(move || run_share(portable, options, share, seek, board))
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
            let stats = DfsStats {
                executions: board.executions.load(Ordering::Relaxed),
                ..dfs.stats()
            };
            if !progress(&stats) {
                board.stop.store(true, Ordering::Relaxed);
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a share of the search panicked"))
            .collect()
    });
    dfs.start_shares();
    let mut tally = Tally::default();
    let mut interrupted = board.stop.load(Ordering::Relaxed);
    let (mut sought, mut other): (Option<Failing>, Option<Failing>) = (None, None);
    for run in runs {
        dfs.absorb(&run.dfs);
        tally.absorb(run.tally);
        interrupted |= run.cut;
        sought = earliest(sought, run.sought);
        other = earliest(other, run.other);
    }
    let failure = sought.or(other).map(|f| {
        let found = Found {
            seed: None,
            cost: f.cost,
        };
        failure(scenario, found, &f.execution, true)
    });
    tally.report(options, dfs.stats(), failure, interrupted)
}

/// The earlier of two failures in depth-first order.
fn earliest(a: Option<Failing>, b: Option<Failing>) -> Option<Failing> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.at < a.at { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Runs one share to its end, to its first sought violation, or until it has passed the
/// earliest one another share found.
fn run_share(
    portable: &Portable,
    options: &ExploreOptions,
    mut dfs: Dfs,
    seek: Option<&str>,
    board: &Board,
) -> ShareRun {
    // Read again on this thread (the model's setup stays on the thread that made it),
    // with the caller's settings.
    let scenario = portable
        .build()
        .expect("a scenario read once reads again from the same text");
    let mut tally = Tally::default();
    let (mut sought, mut other) = (None, None);
    let mut cut = false;
    let setup = scenario.setup.clone();
    // One result, its buffers reused by every execution.
    let mut e = Execution::default();
    let runs = Runs::new(&scenario.config);
    for i in 0.. {
        if board.stop.load(Ordering::Relaxed) {
            cut = true;
            break;
        }
        let passed = {
            let best = board.best.lock().expect("the board is never poisoned");
            best.as_ref().is_some_and(|b| dfs.frontier() > *b)
        };
        if passed {
            cut = true;
            break;
        }
        runs.execute_into(&*setup, &mut dfs, i, &mut e);
        let owned = dfs.owns_execution();
        let failed = tally.add(&e, owned);
        // Its place in depth-first order, read before `end` moves the search on.
        let at = failed.then(|| dfs.position());
        let more = dfs.end(failed);
        board.work.fetch_add(1, Ordering::Relaxed);
        if owned && !e.pruned {
            board.executions.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(at) = at {
            let is_sought = seek.is_none_or(|l| e.verdict.label() == l);
            let slot = if is_sought { &mut sought } else { &mut other };
            if slot.is_none() {
                *slot = Some(Failing {
                    at: at.clone(),
                    execution: std::mem::take(&mut e),
                    cost: tally.steps,
                });
            }
            if is_sought && !options.keep_going {
                let mut best = board.best.lock().expect("the board is never poisoned");
                if best.as_ref().is_none_or(|b| at < *b) {
                    *best = Some(at);
                }
                cut = more;
                break;
            }
        }
        if !more {
            break;
        }
        if options
            .max_executions
            .is_some_and(|m| board.work.load(Ordering::Relaxed) >= m)
        {
            board.stop.store(true, Ordering::Relaxed);
            cut = true;
            break;
        }
    }
    ShareRun {
        dfs,
        tally,
        sought,
        other,
        cut,
    }
}
