//! Shrinking a failing run of the program with the engine's shrinker
//! ([`mcsim::shrink`]): the program is its subject, each candidate schedule one more run
//! of the program against the servers, with as many participants as the shrinker asks
//! for (`MCSIM_CLIENTS`, which a program reads to start that many).

use std::sync::{Arc, Mutex};

use anyhow::Result;

use super::chooser::{Lent, shared};
use super::determinism::diverges;
use super::under_test::Program;
use super::{Outcome, TestOptions};
use mcsim::explore::{Replay, Schedule};
use mcsim::shrink::{Budget, Outcome as Shrinkable, Subject, shrink_subject};

/// Runs of the strategy tried with each smaller number of participants, once the
/// failure's own schedule without the choices of those left out did not fail so.
const FEWER_RUNS: u64 = 20;

impl Shrinkable for Outcome {
    fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    /// How it failed: stuck, its exit status, what it declared, and how many
    /// participants more than asked for it had (each as in the run found: a program
    /// that does not read `MCSIM_CLIENTS` has more with fewer asked for, and is not run
    /// with fewer). A run that diverged from its schedule, or in which not every
    /// participant took part, fails no way the shrinker keeps.
    fn label(&self) -> String {
        let (stuck, exited, declared) = self.kind;
        let more = self.participants.len().saturating_sub(self.clients);
        match () {
            _ if self.diverged.is_some() => "diverged".into(),
            _ if !self.took_part() => "absent".into(),
            _ if self.failure.is_none() => "pass".into(),
            _ => format!(
                "failed: stuck {stuck}, exited badly {exited}, declared {declared}, {more} more"
            ),
        }
    }

    /// One: a run of the program costs about the same whatever its length.
    fn cost(&self) -> u64 {
        1
    }

    fn calls(&self) -> u64 {
        self.released as u64
    }

    fn never_finishes(&self) -> bool {
        self.kind.0
    }

    fn faults(&self) -> usize {
        self.faults.len()
    }
}

/// The program as the shrinker's subject: runs of it with the seed of the run found.
struct Runs<'a> {
    program: &'a mut Program,
    options: TestOptions,
    /// The execution number and seed of the run found.
    run: (u64, u64),
}

impl Subject for Runs<'_> {
    type Run = Outcome;
    type Error = anyhow::Error;

    fn clients(&self) -> usize {
        self.options.clients
    }

    fn set_clients(&mut self, clients: usize) -> bool {
        self.options.clients = clients;
        true
    }

    /// Yes: a run of the program is dear, and its participants are numbered as they
    /// name themselves, the same with fewer.
    fn projects(&self) -> bool {
        true
    }

    /// A run numbered as the run found, lent `replay` and given it back after. The
    /// run's timeline is always kept: the servers record it anyway.
    fn run(&mut self, replay: &mut Replay, _trace: bool) -> Result<Outcome> {
        let lent = Arc::new(Mutex::new(std::mem::replace(
            replay,
            Replay::new(Schedule::default()),
        )));
        let strategy = shared(Box::new(Lent(lent.clone())));
        let outcome = self.program.run(&self.options, &strategy, self.run);
        *replay = std::mem::replace(
            &mut *lent.lock().expect("never poisoned"),
            Replay::new(Schedule::default()),
        );
        outcome
    }

    /// Runs of the strategy with the seed of the run found (so faults and the
    /// program's draws stay those of the run found), the executions numbered on from
    /// its.
    fn search(&mut self, label: &str, tries: u64, budget: &mut Budget) -> Result<Option<Outcome>> {
        let strategy = shared(self.options.strategy.make(self.run.1));
        for k in 1..=tries {
            if budget.exhausted() {
                break;
            }
            let execution = (self.run.0.wrapping_add(k), self.run.1);
            let candidate = self.program.run(&self.options, &strategy, execution)?;
            budget.ran(candidate.cost());
            if candidate.label() == label {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }
}

/// How a run ended, as the shrinker tells runs apart: its schedule not followed, its
/// participants not all there, or its failure.
fn how_it_ended(run: &Outcome) -> String {
    let failure = run.failure.as_deref().unwrap_or("passed");
    match &run.diverged {
        Some(diverged) => format!("{failure}, its schedule not followed ({diverged})"),
        None if !run.took_part() => format!(
            "{failure}, with {} of {} participants",
            run.participants.len(),
            run.clients
        ),
        None => failure.to_string(),
    }
}

/// Shrinks `found`, failing run `run` (execution number and seed) of the program: its
/// schedule, then to fewer participants. The shrunk run is replayed once more and kept
/// only if it gives its trace again. Returns it and the runs shrinking made, or where
/// its replay differed: the program is not deterministic under a fixed schedule.
pub(super) fn shrink(
    program: &mut Program,
    options: &TestOptions,
    run: (u64, u64),
    found: &Outcome,
) -> Result<Result<(Outcome, u64), String>> {
    let subject = Runs {
        program,
        options: options.clone(),
        run,
    };
    let shrunk = shrink_subject(subject, found, FEWER_RUNS, options.shrink_runs)?;
    let (mut subject, best) = (shrunk.subject, shrunk.run);
    let again = subject.run(&mut Replay::new(best.schedule.clone()), true)?;
    let difference = diverges(&best, &again).or_else(|| {
        (best.label() != found.label() || again.label() != found.label()).then(|| {
            format!(
                "  it ended otherwise: {} (as found: {})",
                how_it_ended(&again),
                how_it_ended(found)
            )
        })
    });
    Ok(match difference {
        Some(difference) => Err(difference),
        None => Ok((best, shrunk.runs + 1)),
    })
}
