//! Shrinking a failing run of the program by running it again on smaller schedules.

use anyhow::{Result, bail};

use super::chooser::shared;
use super::program::Program;
use super::{Outcome, TestOptions, first_difference};
use mcsim::explore::{Choice, Replay, Schedule};

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
pub(super) fn shrink(
    program: &mut Program,
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
    let mut try_schedule = |choices: &[Choice], lenient: bool, tried: &mut usize| {
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
        program.run(options, &shared(Box::new(replay)), run)
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
