//! Shrinking: a failing execution made as small as possible while the same invariant
//! still breaks, so the counterexample a person reads is short.
//!
//! One shrinker serves every [`Subject`]: anything that runs a schedule under a
//! [`Replay`] and says what the run gave. A scenario of the engine is one
//! ([`shrink`], [`Scenarios`]); `mcsim test`'s program, run against the simulated servers
//! once per candidate, is another.
//!
//! Fewer clients come first, the largest cut and the one that makes every later run
//! cheaper: the failing schedule with the choices of the clients left out (one run for
//! each smaller count), then runs of the subject's own strategy with fewer
//! ([`Subject::search`]). What fails the same way is shrunk and kept if it ends no larger
//! than the run given on any measure; failing that, the run given is shrunk with its own
//! clients.
//!
//! The shrinker works on the schedule, replayed leniently (a choice that is no longer
//! possible is skipped, and past the end the lowest client runs at the earliest instant):
//! it drops faults, drops chunks of choices (delta debugging), zeroes delays (all, or one
//! by one), and removes preemptions by letting the client a preemption switched away
//! from run on; where none of those helps, it drops one client's turns between two
//! switches whole, or tries the shortest prefix that still fails (a lenient replay's
//! defaults past it drop every later switch at once), and the passes again on what they
//! give. A candidate is kept only if the verdict's label is the same and it improves on
//! the best so far ([`Size::improves_on`]).
//!
//! A counterexample of never finishing (`stuck`, `livelock`) runs on past the choices
//! that got it there, until a budget runs out or its spin or cycle is told; its schedule
//! is cut to the choices a replay needs (the rest are what a replay makes by itself past
//! a schedule's end, [`Offered::needed`]), its steps and preemptions are counted on
//! what is left, and its calls are shown but not kept down: running every call at the
//! earliest instant fits more calls into the time budget, and is still the smaller
//! counterexample.
//!
//! Preemptions are counted the way `explore`'s bound on them counts them: a switch away
//! from a client that was asleep or done is forced, not a preemption, so a recipe whose
//! clients sleep between calls shows the few switches that made its interleaving, not one
//! per call.
//!
//! Most candidates need no replay. One built before is answered from what its replay
//! gave; one that a lenient replay would follow choice for choice back to the
//! best counterexample (dropping a choice that only a sleeping client's turn forced,
//! say) is known to be the best itself, from the calls each of the best's steps offered
//! ([`Offered::leads_to`]). Both are charged to the step budget as if replayed, so the
//! counterexample a shrink ends with is what replaying every candidate gives; on the
//! scenario suite's gate they spare three replays in four.

mod scenario;
mod shrinker;
mod tried;

use std::fmt;

use crate::explore::replay::Offered;
use crate::explore::{Choice, Replay, Schedule};
use crate::plural::plural;
use shrinker::Shrinker;

pub use scenario::{Scenarios, shrink, size};

/// What the shrinker shrinks: runs of schedules of something under test, with as many
/// clients as it is asked for.
pub trait Subject {
    /// What one run gave.
    type Run: Outcome;
    /// Why a run could not be made (the engine's runs always can:
    /// [`std::convert::Infallible`]).
    type Error;

    /// The clients each run has now.
    fn clients(&self) -> usize;

    /// Runs with `clients` clients from now on; false (and unchanged) if it cannot.
    fn set_clients(&mut self, clients: usize) -> bool;

    /// One run following `replay` (exact or lenient; with its timeline if `trace`), which
    /// the shrinker reads afterwards for where the run preempted and what each step
    /// offered.
    fn run(&mut self, replay: &mut Replay, trace: bool) -> Result<Self::Run, Self::Error>;

    /// True if the choices a schedule made for the clients numbered below a smaller count
    /// are worth a run with that count before the clients as given are shrunk: where a
    /// run is dear and one with fewer clients, if it fails the same way, is the one to
    /// shrink. False by default: where runs are cheap, shrinking first with the clients as
    /// given ends smaller.
    fn projects(&self) -> bool {
        false
    }

    /// Looks for a run failing as `label` says with the clients it has now, in at most
    /// `tries` runs of its own strategy, each charged to `budget` ([`Budget::ran`]) and
    /// none once it is spent.
    fn search(
        &mut self,
        label: &str,
        tries: u64,
        budget: &mut Budget,
    ) -> Result<Option<Self::Run>, Self::Error>;
}

/// What the shrinker reads of a run.
pub trait Outcome {
    /// The choices the run made.
    fn schedule(&self) -> &Schedule;
    /// The same, to cut a run that never finishes to the choices a replay needs.
    fn schedule_mut(&mut self) -> &mut Schedule;
    /// What it gave, in a form two runs that fail the same way share (`pass` when it did
    /// not fail): the shrinker keeps a candidate only if its label is the failure's.
    fn label(&self) -> String;
    /// What it cost, charged to the shrinker's budget (steps, or one a run).
    fn cost(&self) -> u64;
    /// Calls (commands) the servers executed.
    fn calls(&self) -> u64;
    /// True if its failure is one of never finishing: its length says little, the choices
    /// that led there are the counterexample.
    fn never_finishes(&self) -> bool;
    /// Faults injected.
    fn faults(&self) -> usize {
        self.schedule().faults()
    }
}

/// What shrinking may spend, in the cost of runs ([`Outcome::cost`]), and what it spent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// Spent so far, over every attempt and search (a candidate answered from memory
    /// included, as if run again, so that where the budget stops shrinking does not
    /// depend on what was remembered).
    spent: u64,
    /// Where shrinking stops.
    limit: u64,
    /// The runs actually made.
    runs: u64,
}

impl Budget {
    /// True once it is spent.
    pub fn exhausted(&self) -> bool {
        self.spent >= self.limit
    }

    /// Charges a run made.
    pub fn ran(&mut self, cost: u64) {
        self.spent += cost;
        self.runs += 1;
    }

    /// Charges a run answered without being made.
    fn charge(&mut self, cost: u64) {
        self.spent += cost;
    }
}

/// How big a counterexample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Faults injected.
    pub faults: usize,
    /// Clients in the scenario.
    pub clients: usize,
    /// Preemptions: switches away from a client that could have run on
    /// ([`Replay::preempted`]).
    pub preemptions: usize,
    /// Late calls: calls run later than the earliest instant of their latency window.
    /// Each is a choice off the default path, as a preemption is.
    pub late: usize,
    /// Choices in the schedule.
    pub steps: usize,
    /// Calls the servers executed.
    pub calls: u64,
    /// The verdict is one of never finishing ([`crate::Verdict::never_finishes`]): the steps
    /// are the choices a replay needs, and the calls are not kept down.
    pub never_finishes: bool,
    /// Microseconds of delay chosen inside latency windows (last tie-breaker).
    pub delay: u64,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Late calls are named only when there are any.
        let late = (self.late > 0).then_some((self.late as u64, "late call"));
        let counts = [
            Some((self.clients as u64, "client")),
            Some((self.steps as u64, "step")),
            Some((self.calls, "call")),
            Some((self.preemptions as u64, "preemption")),
            late,
            Some((self.faults as u64, "fault")),
        ];
        for (i, (n, noun)) in counts.into_iter().flatten().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{n} {noun}{}", plural(n))?;
        }
        Ok(())
    }
}

impl Size {
    /// True if this is a real improvement on `other`: no measure shrinking keeps down
    /// ([`Size::no_larger_than`]) is larger, and one of them, or the chosen delays, is
    /// smaller. Shrinking moves only to such a size (or to fewer clients no larger than
    /// what it was given), so what it returns is never larger than what it was given on
    /// any of those measures.
    pub fn improves_on(&self, other: &Size) -> bool {
        self.no_larger_than(other) && (self.kept() != other.kept() || self.delay < other.delay)
    }

    /// True if no measure shrinking keeps down is larger than `other`'s: clients, steps,
    /// calls, faults, and the choices off the default path (preemptions and late calls
    /// together, so that a late call may give way to a preemption: a timeline at round
    /// instants, with the switch that breaks the recipe, reads more easily than one of
    /// odd delays that avoid it).
    pub fn no_larger_than(&self, other: &Size) -> bool {
        self.kept().iter().zip(other.kept()).all(|(&a, b)| a <= b)
    }

    /// The measures shrinking keeps down.
    fn kept(&self) -> [u64; 5] {
        [
            self.clients as u64,
            self.steps as u64,
            if self.never_finishes { 0 } else { self.calls },
            (self.preemptions + self.late) as u64,
            self.faults as u64,
        ]
    }
}

/// A run the shrinker made, with where it preempted ([`Replay::preempted`]) and the
/// calls each of its steps offered ([`Replay::offered`]).
struct Replayed<R> {
    run: R,
    preempted: Vec<u32>,
    offered: Offered,
}

impl<R: Outcome> Replayed<R> {
    /// `schedule` run on `subject` (replayed leniently if `lenient`; with its timeline if
    /// `trace`), its schedule cut to the choices a replay needs when it never finishes.
    fn new<S: Subject<Run = R>>(
        subject: &mut S,
        schedule: Schedule,
        lenient: bool,
        trace: bool,
    ) -> Result<Replayed<R>, S::Error> {
        let mut replay = if lenient {
            Replay::lenient(schedule)
        } else {
            Replay::new(schedule)
        };
        let mut run = subject.run(&mut replay, trace)?;
        let mut preempted = replay.preempted().to_vec();
        let offered = replay.offered().clone();
        if run.never_finishes() {
            let needed = offered.needed(&run.schedule().choices);
            run.schedule_mut().choices.truncate(needed);
            preempted.retain(|&i| (i as usize) < needed);
        }
        Ok(Replayed {
            run,
            preempted,
            offered,
        })
    }

    /// Its size, with `clients` clients.
    fn size(&self, clients: usize) -> Size {
        measured(clients, &self.run, self.preempted.len())
    }
}

/// The size of `run`, with `clients` clients, which preempted `preemptions` times.
fn measured(clients: usize, run: &impl Outcome, preemptions: usize) -> Size {
    let delays = run.schedule().choices.iter().filter_map(|c| match c {
        Choice::Run { delay, .. } => Some(*delay),
        Choice::Fault(_) => None,
    });
    let (delay, late) = delays.fold((0, 0), |(sum, late), d| {
        (sum + d, late + usize::from(d > 0))
    });
    Size {
        faults: run.faults(),
        clients,
        preemptions,
        late,
        steps: run.schedule().len(),
        calls: run.calls(),
        never_finishes: run.never_finishes(),
        delay,
    }
}

/// A shrunk counterexample.
#[derive(Debug, Clone)]
pub struct Shrunk<S: Subject> {
    /// What it fails in, set to the clients it fails with (fewer than given, perhaps).
    pub subject: S,
    /// The run, replayed exactly from its schedule with its timeline.
    pub run: S::Run,
    /// Size before shrinking.
    pub before: Size,
    /// Size after.
    pub after: Size,
    /// True if shrinking stopped at its budget (a smaller one may exist).
    pub cut_short: bool,
    /// The runs shrinking made (candidates, searches with fewer clients, the last replay).
    pub runs: u64,
}

/// Shrinks `failing`, a failing run of `subject`. Fewer clients are the largest cut, and
/// make every later run cheaper: where the subject [`projects`](Subject::projects), first
/// the failing schedule with only the choices of fewer clients (one run for each smaller
/// count); if one fails the same way, it is shrunk, and kept if it ends no larger than
/// the run given on any measure. Failing that,
/// the run given is shrunk with its own clients, then the same failure is looked for in
/// at most `search` runs of each smaller count ([`Subject::search`]) and shrunk in turn.
/// `limit` is what shrinking may spend in all, in the cost of runs ([`Outcome::cost`]):
/// half of it for the clients as given.
pub fn shrink_subject<S: Subject>(
    mut subject: S,
    failing: &S::Run,
    search: u64,
    limit: u64,
) -> Result<Shrunk<S>, S::Error> {
    let label = failing.label();
    let given = subject.clients();
    // Replayed to find where it preempted (the search that found it did not note it).
    let found = Replayed::new(&mut subject, failing.schedule().clone(), false, false)?;
    let before = found.size(given);
    let mut budget = Budget {
        limit: limit / 2,
        runs: 1,
        ..Budget::default()
    };
    let fewer = projected(&label, &mut subject, &found, &mut budget)?;
    let (mut best, mut best_clients) = match kept(&label, &mut subject, fewer, before, &mut budget)?
    {
        Some(smaller) => (smaller, subject.clients()),
        None => {
            subject.set_clients(given);
            let (best, _) = Shrinker::new(&label, &mut subject, found, &mut budget).run()?;
            (best, given)
        }
    };
    // Its half of the budget spent: this phase stopped early even if the next is cheap.
    let first_cut_short = budget.exhausted();
    budget.limit = limit;
    if best_clients < given {
        // Stopped at its half of the budget: on with the rest.
        if first_cut_short {
            best = Shrinker::new(&label, &mut subject, best, &mut budget)
                .run()?
                .0;
        }
    } else {
        // Fewer clients again, from what the clients as given shrank to, then by search.
        let mut fewer = projected(&label, &mut subject, &best, &mut budget)?;
        if fewer.is_none() {
            fewer = searched(&label, &mut subject, given, search, &mut budget)?;
        }
        if let Some(smaller) = kept(&label, &mut subject, fewer, before, &mut budget)? {
            (best, best_clients) = (smaller, subject.clients());
        }
    }
    let cut_short = first_cut_short || budget.exhausted();
    subject.set_clients(best_clients);
    let last = Replayed::new(&mut subject, best.run.schedule().clone(), false, true)?;
    budget.runs += 1;
    Ok(Shrunk {
        after: last.size(best_clients),
        run: last.run,
        subject,
        before,
        cut_short,
        runs: budget.runs,
    })
}

/// `fewer`, a run failing as `label` says with the clients the subject is set to (fewer
/// than given), shrunk: kept if it is no larger than `before`, the
/// run given, on any measure. Fewer clients is worth more than a few steps or
/// preemptions, so it need not be smaller than what the clients as given shrink to (what
/// is smaller than that is no larger than `before` either).
fn kept<S: Subject>(
    label: &str,
    subject: &mut S,
    fewer: Option<Replayed<S::Run>>,
    before: Size,
    budget: &mut Budget,
) -> Result<Option<Replayed<S::Run>>, S::Error> {
    let Some(fewer) = fewer else {
        return Ok(None);
    };
    let (smaller, size) = Shrinker::new(label, subject, fewer, budget).run()?;
    Ok(size.no_larger_than(&before).then_some(smaller))
}

/// The failure of `label` found by the subject's own search ([`Subject::search`], at most
/// `tries` runs) with the fewest clients below `given` that gives it, replayed to find
/// where it preempted. The subject is left set to its clients.
fn searched<S: Subject>(
    label: &str,
    subject: &mut S,
    given: usize,
    tries: u64,
    budget: &mut Budget,
) -> Result<Option<Replayed<S::Run>>, S::Error> {
    for clients in 1..given {
        if budget.exhausted() {
            break;
        }
        if !subject.set_clients(clients) {
            continue;
        }
        if let Some(run) = subject.search(label, tries, budget)? {
            let r = Replayed::new(subject, run.schedule().clone(), false, false)?;
            budget.runs += 1;
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// The failure `found` (of `label`) replayed with the choices of fewer clients only, for
/// each smaller count in turn, where the subject [`projects`](Subject::projects): the
/// first run of them that fails the same way. The subject is left set to its clients.
fn projected<S: Subject>(
    label: &str,
    subject: &mut S,
    found: &Replayed<S::Run>,
    budget: &mut Budget,
) -> Result<Option<Replayed<S::Run>>, S::Error> {
    if !subject.projects() {
        return Ok(None);
    }
    for clients in 1..subject.clients() {
        if budget.exhausted() {
            break;
        }
        if !subject.set_clients(clients) {
            continue;
        }
        let schedule = found.run.schedule().of_clients_below(clients);
        let r = Replayed::new(subject, schedule, true, false)?;
        budget.ran(r.run.cost());
        if r.run.label() == label {
            return Ok(Some(r));
        }
    }
    Ok(None)
}
