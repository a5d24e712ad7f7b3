//! The passes that shrink one failing run of a subject with a fixed number of clients:
//! faults dropped, chunks of choices dropped, delays zeroed, preemptions removed (and
//! where none helps, a client's turns dropped whole or the shortest prefix), each
//! candidate replayed leniently and kept only if it fails the same way and improves on
//! the best so far ([`Size::improves_on`]).

use crate::explore::{Choice, Schedule};

use super::tried::{Known, Tried};
use super::{Budget, Outcome, Replayed, Size, Subject, measured};

/// Shrinks one failing run of `subject`.
pub(super) struct Shrinker<'a, S: Subject> {
    label: &'a str,
    subject: &'a mut S,
    /// The best run so far, with where it preempted and the calls each step offered.
    best: Replayed<S::Run>,
    best_size: Size,
    budget: &'a mut Budget,
    /// The candidates replayed so far, with what each gave.
    tried: Tried,
}

impl<'a, S: Subject> Shrinker<'a, S> {
    /// A shrinker of `found`, a run of `subject` failing as `label` says, spending from
    /// `budget`.
    pub(super) fn new(
        label: &'a str,
        subject: &'a mut S,
        found: Replayed<S::Run>,
        budget: &'a mut Budget,
    ) -> Self {
        let best_size = found.size(subject.clients());
        Shrinker {
            label,
            subject,
            best: found,
            best_size,
            budget,
            tried: Tried::default(),
        }
    }

    /// Runs the passes until none makes progress or the budget is spent; the smallest
    /// run found and its size.
    pub(super) fn run(mut self) -> Result<(Replayed<S::Run>, Size), S::Error> {
        loop {
            let mut progress = self.drop_faults()?;
            progress |= self.drop_chunks()?;
            progress |= self.zero_delays()?;
            progress |= self.fewer_preemptions()?;
            // Where no pass helps: one client's turns between two switches dropped, or
            // the shortest prefix, then the passes again on what they give.
            if !progress && !self.exhausted() {
                progress = self.drop_turns()? || self.shortest_prefix()?;
            }
            if !progress || self.exhausted() {
                break;
            }
        }
        Ok((self.best, self.best_size))
    }

    fn exhausted(&self) -> bool {
        self.budget.exhausted()
    }

    fn schedule(&self) -> &Schedule {
        self.best.run.schedule()
    }

    fn choices(&self) -> Vec<Choice> {
        self.schedule().choices.clone()
    }

    /// Tries `choices` (at the best's phase): true if they became the best.
    fn attempt(&mut self, choices: Vec<Choice>) -> Result<bool, S::Error> {
        if self.exhausted() {
            return Ok(false);
        }
        let phase = self.schedule().phase;
        // A candidate that did not improve on an earlier best cannot improve on a
        // smaller one; should one, it is replayed for its run.
        if let Some(known) = self.tried.get(phase, &choices)
            && !known.size.is_some_and(|s| s.improves_on(&self.best_size))
        {
            // Charged as if replayed again, so that where the budget stops shrinking,
            // and so the counterexample it ends with, do not depend on what was
            // remembered.
            self.budget.charge(known.cost);
            return Ok(false);
        }
        // A candidate whose every choice, taken as a lenient replay takes it, is the
        // best's own replays to the best: no step of it needs running.
        if (self.best.offered).leads_to(&choices, &self.schedule().choices) {
            let cost = self.best.run.cost();
            self.budget.charge(cost);
            let known = Known {
                cost,
                size: Some(self.best_size),
            };
            self.tried.note(phase, choices, known);
            return Ok(false);
        }
        let candidate = choices.clone();
        let schedule = Schedule { phase, choices };
        let r = Replayed::new(self.subject, schedule, true, false)?;
        self.budget.ran(r.run.cost());
        let same = r.run.label() == self.label;
        let size = same.then(|| measured(self.subject.clients(), &r.run, r.preempted.len()));
        let known = Known {
            cost: r.run.cost(),
            size,
        };
        self.tried.note(phase, candidate, known);
        match size {
            Some(s) if s.improves_on(&self.best_size) => {
                (self.best, self.best_size) = (r, s);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The shortest prefix of the schedule that still fails the same way (past it, a
    /// lenient replay runs the lowest client offered at each step, so a prefix drops
    /// every switch after it at once), if it is smaller.
    fn shortest_prefix(&mut self) -> Result<bool, S::Error> {
        for k in 0..self.schedule().len() {
            if self.exhausted() {
                break;
            }
            let prefix = self.schedule().choices[..k].to_vec();
            if self.attempt(prefix)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Drops each client's run of turns between two switches whole: the turns of the
    /// clients before and after it join, one switch (or two) fewer, however the run lies
    /// against the halves [`Self::drop_chunks`] cuts.
    fn drop_turns(&mut self) -> Result<bool, S::Error> {
        let mut start = 0;
        while start < self.schedule().len() && !self.exhausted() {
            let choices = &self.schedule().choices;
            let client = |c: &Choice| match c {
                Choice::Run { client, .. } => Some(*client),
                Choice::Fault(_) => None,
            };
            let first = client(&choices[start]);
            let end = start
                + (choices[start..].iter())
                    .take_while(|c| client(c) == first)
                    .count();
            let mut candidate = choices.clone();
            candidate.drain(start..end);
            if self.attempt(candidate)? {
                return Ok(true);
            }
            start = end;
        }
        Ok(false)
    }

    fn drop_faults(&mut self) -> Result<bool, S::Error> {
        let mut progress = false;
        let mut i = 0;
        while i < self.schedule().choices.len() && !self.exhausted() {
            if matches!(self.schedule().choices[i], Choice::Fault(_)) {
                let mut c = self.choices();
                c.remove(i);
                if self.attempt(c)? {
                    progress = true;
                    continue;
                }
            }
            i += 1;
        }
        Ok(progress)
    }

    fn drop_chunks(&mut self) -> Result<bool, S::Error> {
        let mut progress = false;
        let mut chunk = (self.schedule().len() / 2).max(1);
        loop {
            let mut start = 0;
            // Checked before each candidate is built: a candidate copies the schedule,
            // and a long one (a livelock's) copied at every position for nothing once
            // the budget is spent costs minutes.
            while start < self.schedule().len() && !self.exhausted() {
                let mut c = self.choices();
                let end = (start + chunk).min(c.len());
                c.drain(start..end);
                if self.attempt(c)? {
                    progress = true;
                } else {
                    start += chunk;
                }
            }
            if chunk == 1 || self.exhausted() {
                return Ok(progress);
            }
            chunk /= 2;
        }
    }

    /// Runs every call at the earliest instant of its window, or failing that, each late
    /// call in turn.
    fn zero_delays(&mut self) -> Result<bool, S::Error> {
        let zeroed = |c: &Choice| match c {
            Choice::Run { client, .. } => Choice::Run {
                client: *client,
                delay: 0,
            },
            other => other.clone(),
        };
        let all: Vec<Choice> = self.schedule().choices.iter().map(zeroed).collect();
        if all == self.schedule().choices {
            return Ok(false);
        }
        if self.attempt(all)? {
            return Ok(true);
        }
        let mut progress = false;
        let mut i = 0;
        while i < self.schedule().choices.len() && !self.exhausted() {
            if let Choice::Run { client, delay } = self.schedule().choices[i]
                && delay > 0
            {
                let mut candidate = self.choices();
                candidate[i] = Choice::Run { client, delay: 0 };
                progress |= self.attempt(candidate)?;
            }
            i += 1;
        }
        Ok(progress)
    }

    /// Lets the client a preemption switched away from run on instead, at each
    /// preemption in turn. Forced switches (away from a client that was asleep, done or
    /// had nothing to run) are not tried: running that client there is not possible.
    fn fewer_preemptions(&mut self) -> Result<bool, S::Error> {
        let mut progress = false;
        // The first preemption not tried yet, by position in the best schedule.
        let mut from = 0;
        while !self.exhausted() {
            let Some(&at) = (self.best.preempted.iter()).find(|&&i| i as usize >= from) else {
                break;
            };
            let i = at as usize;
            from = i + 1;
            let choices = &self.schedule().choices;
            let prev = choices[..i].iter().rev().find_map(|x| match x {
                Choice::Run { client, .. } => Some(*client),
                Choice::Fault(_) => None,
            });
            if let (Some(p), Choice::Run { delay, .. }) = (prev, &choices[i]) {
                let mut candidate = choices.clone();
                candidate[i] = Choice::Run {
                    client: p,
                    delay: *delay,
                };
                progress |= self.attempt(candidate)?;
            }
        }
        Ok(progress)
    }
}
