//! Shrinking a failing run of the program by running it again on smaller schedules.

use anyhow::{Result, bail};

use super::chooser::{SharedStrategy, shared};
use super::under_test::Program;
use super::{Outcome, TestOptions, diverges};
use mcsim::explore::{Choice, Replay, Schedule};

/// Runs of the strategy tried with each smaller number of participants.
const FEWER_RUNS: u64 = 20;

/// Runs tried to shrink a failure at most.
const SHRINK_RUNS: usize = 200;

/// Shrinks a failing run: first to fewer participants, where the program reads
/// `MCSIM_CLIENTS` (the fewest with which the run's schedule, without the choices of the
/// participants left out, or one of a few runs of the strategy, fails the same way), then
/// its schedule.
pub(super) fn shrink(
    program: &mut Program,
    options: &TestOptions,
    run: (u64, u64),
    found: Outcome,
) -> Result<(Outcome, usize)> {
    let kind = found.kind;
    let mut best = found;
    let mut fewest = options.clone();
    let mut tried = 0;
    for fewer in 1..options.clients {
        let choices: Vec<Choice> = (best.schedule.choices.iter())
            .filter(|c| matches!(c, Choice::Run { client, .. } if *client < fewer))
            .cloned()
            .collect();
        let schedule = Schedule {
            phase: best.schedule.phase,
            choices,
        };
        let with_fewer = TestOptions {
            clients: fewer,
            ..options.clone()
        };
        // The run's own schedule first, then a few runs of the strategy (the same seed,
        // so faults and the program's draws stay those of the run; the executions
        // numbered on from the run's).
        let mut tries: Vec<(SharedStrategy, u64)> =
            vec![(shared(Box::new(Replay::lenient(schedule))), run.0)];
        let strategy = shared(options.strategy.make(run.1));
        tries.extend((1..=FEWER_RUNS).map(|k| (strategy.clone(), run.0.wrapping_add(k))));
        let mut found = None;
        for (strategy, execution) in tries {
            tried += 1;
            let candidate = program.run(&with_fewer, &strategy, (execution, run.1))?;
            // Only a program that started that many participants ran with fewer (one that
            // does not read `MCSIM_CLIENTS` starts as many as ever).
            let fewer_ran = candidate.participants.len() == fewer;
            if candidate.failure.is_some() && candidate.kind == kind && fewer_ran {
                found = Some(candidate);
                break;
            }
        }
        if let Some(candidate) = found {
            (best, fewest) = (candidate, with_fewer);
            break;
        }
    }
    let (best, more) = shrink_schedule(program, &fewest, run, best)?;
    Ok((best, tried + more))
}

/// Shrinks a failing run's schedule: the shortest prefix of its schedule that still fails (past it,
/// the lowest-numbered waiting participant runs at each step), then each choice dropped in
/// turn where the run still fails the same way (stuck, its exit status, what it declared:
/// each as in the run found) with fewer preemptions (a
/// participant run while the one before it was waiting too), or as many and fewer
/// commands. Every candidate is one more run of the program;
/// the result is replayed once more and kept only if it gives its trace again. Returns
/// the smallest failing run and the runs tried.
fn shrink_schedule(
    program: &mut Program,
    options: &TestOptions,
    run: (u64, u64),
    found: Outcome,
) -> Result<(Outcome, usize)> {
    // The same failure: stuck, or the program's exit status, or what it declared, as found.
    let kind = found.kind;
    let fails_alike = |o: &Outcome| {
        o.failure.is_some() && o.kind == kind && o.diverged.is_none() && o.took_part()
    };
    let smaller = |a: &Outcome, b: &Outcome| {
        (a.preemptions, a.schedule.choices.len()) < (b.preemptions, b.schedule.choices.len())
    };
    let mut tried = 0;
    let mut best = found;
    let phase = best.schedule.phase;
    let mut try_schedule = |choices: &[Choice], lenient: bool, tried: &mut usize| {
        *tried += 1;
        let schedule = Schedule {
            phase,
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
    if let Some(difference) = diverges(&best, &again) {
        bail!(
            "a shrunk run of the program gave another trace when replayed: the program is not deterministic under a fixed schedule; not judged\n{difference}"
        );
    }
    Ok((best, tried))
}
