//! The candidates a shrinker already replayed, and what each gave.
//!
//! Shrinking builds the same candidate schedule more than once: dropping either of two
//! equal neighbouring choices (a client retrying, each retry run at once) leaves the
//! same schedule, and each round after an improvement tries again what the rounds before
//! tried. Replays are deterministic, so a candidate's outcome is known the second time.
//! On the scenario suite's gate, about two attempts in five are repeats.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use crate::exec::Fingerprint;
use crate::explore::Choice;

use super::Size;

/// What replaying a candidate gave.
#[derive(Debug, Clone, Copy)]
pub(super) struct Known {
    /// What the replay cost.
    pub cost: u64,
    /// Its size, if it broke the same invariant; `None` if it did not.
    pub size: Option<Size>,
}

/// Candidates replayed on one scenario, by fingerprint, each kept whole so that a
/// fingerprint shared by two candidates is told apart.
#[derive(Debug, Default)]
pub(super) struct Tried {
    by_print: BTreeMap<u64, Vec<Candidate>>,
}

/// One candidate replayed: its schedule and what it gave.
#[derive(Debug)]
struct Candidate {
    phase: Option<u32>,
    choices: Vec<Choice>,
    outcome: Known,
}

impl Candidate {
    fn is(&self, phase: Option<u32>, choices: &[Choice]) -> bool {
        self.phase == phase && self.choices == choices
    }
}

fn print(phase: Option<u32>, choices: &[Choice]) -> u64 {
    let mut h = Fingerprint::default();
    phase.hash(&mut h);
    choices.hash(&mut h);
    h.finish()
}

impl Tried {
    /// What `choices` at `phase` gave, if it was replayed before.
    pub fn get(&self, phase: Option<u32>, choices: &[Choice]) -> Option<Known> {
        self.by_print
            .get(&print(phase, choices))?
            .iter()
            .find(|c| c.is(phase, choices))
            .map(|c| c.outcome)
    }

    /// Notes what `choices` at `phase` gave.
    pub fn note(&mut self, phase: Option<u32>, choices: Vec<Choice>, outcome: Known) {
        let same = self.by_print.entry(print(phase, &choices)).or_default();
        match same.iter_mut().find(|c| c.is(phase, &choices)) {
            Some(known) => known.outcome = outcome,
            None => same.push(Candidate {
                phase,
                choices,
                outcome,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(client: usize, delay: u64) -> Choice {
        Choice::Run { client, delay }
    }

    #[test]
    fn a_candidate_is_known_by_its_phase_and_every_choice() {
        let mut tried = Tried::default();
        let a = vec![run(0, 0), run(1, 0)];
        let outcome = Known {
            cost: 7,
            size: None,
        };
        tried.note(None, a.clone(), outcome);
        assert_eq!(tried.get(None, &a).map(|o| o.cost), Some(7));
        assert!(tried.get(Some(5), &a).is_none(), "another phase");
        assert!(
            tried.get(None, &[run(1, 0), run(0, 0)]).is_none(),
            "another order"
        );
        assert!(
            tried.get(None, &[run(0, 0), run(1, 3)]).is_none(),
            "another delay"
        );
        assert!(tried.get(None, &a[..1]).is_none(), "a prefix");
        tried.note(None, a.clone(), Known { cost: 9, ..outcome });
        assert_eq!(tried.get(None, &a).map(|o| o.cost), Some(9), "noted again");
    }
}
