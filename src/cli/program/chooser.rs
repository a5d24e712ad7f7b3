//! The strategy's side of a run of the program: each participant a client, its held
//! command a call that may run now, and what the strategy chose.

use std::sync::{Arc, Mutex};

use mcsim::clock::VirtualTime;
use mcsim::explore::{CallOption, Choice, Options, Replay, Strategy};
use mcsim_serve::{Chooser, Held};

/// The choices a run's chooser made, read after the run.
#[derive(Default)]
pub(super) struct Record {
    /// The participants, by client number: numbered in the order of their names when the
    /// first command is released, later ones after them.
    pub(super) names: Vec<String>,
    pub(super) choices: Vec<Choice>,
    /// Where a replayed schedule could not be followed before the program began to end.
    pub(super) diverged: Option<String>,
    /// The step from which the program may be ending (a participant's connection closed
    /// before it said it was done): a schedule not followed from there on is the ending,
    /// which is no step of the schedule, not a divergence.
    pub(super) ending: Option<u64>,
    /// Choices that ran another participant while the last one to run was waiting too.
    pub(super) preemptions: usize,
    /// The strategy cut the run short (an exhaustive search whose every continuation
    /// from here is covered by runs of its own): the program runs on, its participants
    /// released first by name, and the run counts as pruned.
    pub(super) cut_short: bool,
}

impl Record {
    /// The client number of the participant `name`.
    fn client(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }
}

/// The strategy of a run, kept by the caller across runs (an exhaustive search follows
/// its tree over them) and lent to the run's chooser.
pub(super) type SharedStrategy = Arc<Mutex<Box<dyn Strategy + Send>>>;

pub(super) fn shared(strategy: Box<dyn Strategy + Send>) -> SharedStrategy {
    Arc::new(Mutex::new(strategy))
}

/// A strategy choosing among the waiting participants: each participant is a client
/// ([`Record::names`]), its held step a call that may run now, with what it touches.
#[derive(Clone)]
pub(super) struct StrategyChooser {
    pub(super) strategy: SharedStrategy,
    pub(super) record: Arc<Mutex<Record>>,
}

impl Chooser for StrategyChooser {
    fn choose(&mut self, waiting: &[Held<'_>]) -> usize {
        let mut record = self.record.lock().expect("the record is never poisoned");
        let step = record.choices.len() as u64;
        let index = if record.cut_short {
            0
        } else {
            self.ask(&mut record, step, waiting)
        };
        let client = record.client(waiting[index].name);
        if let Some(Choice::Run { client: last, .. }) = record.choices.last()
            && *last != client
            && waiting.iter().any(|w| w.name == record.names[*last])
        {
            record.preemptions += 1;
        }
        record.choices.push(Choice::Run { client, delay: 0 });
        index
    }

    fn ending(&mut self) {
        let mut record = self.record.lock().expect("the record is never poisoned");
        let step = record.choices.len() as u64;
        record.ending.get_or_insert(step);
    }
}

impl StrategyChooser {
    /// The strategy's pick among `waiting` at `step`, by index (the first where the
    /// strategy cut the run short or picked none of them).
    fn ask(&self, record: &mut Record, step: u64, waiting: &[Held<'_>]) -> usize {
        let mut calls: Vec<CallOption> = waiting
            .iter()
            .map(|held| {
                let at = VirtualTime(step);
                CallOption {
                    client: record.client(held.name),
                    earliest: at,
                    latest: at,
                    footprint: Some(held.footprint.clone()),
                    edges: Vec::new(),
                }
            })
            .collect();
        calls.sort_by_key(|c| c.client);
        let options = Options {
            step,
            clients: record.names.len(),
            calls: &calls,
            faults: &[],
            eviction_possible: false,
            state: None,
            ranks: None,
            summarized: false,
        };
        let mut strategy = self.strategy.lock().expect("never poisoned");
        let choice = match strategy.decided() {
            Some(decided) => Some(decided.choice),
            None => strategy.choose(&options),
        };
        drop(strategy);
        let client = match choice {
            Some(Choice::Run { client, .. }) => client,
            _ => {
                record.cut_short = true;
                return 0;
            }
        };
        let picked =
            (record.names.get(client)).and_then(|name| waiting.iter().position(|w| w.name == name));
        picked.unwrap_or_else(|| {
            if record.diverged.is_none() && record.ending.is_none() {
                let names: Vec<&str> = waiting.iter().map(|w| w.name).collect();
                record.diverged = Some(format!(
                    "step {step}: the schedule runs client {client}, but only {} wait",
                    names.join(", ")
                ));
            }
            0
        })
    }
}

/// A replay lent to runs of the program and read after each (where it preempted, which
/// participants each step offered): what the shrinker needs of a candidate's run.
pub(super) struct Lent(pub(super) Arc<Mutex<Replay>>);

impl Lent {
    fn replay(&self) -> std::sync::MutexGuard<'_, Replay> {
        self.0.lock().expect("never poisoned")
    }
}

impl Strategy for Lent {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn begin(&mut self, execution: u64) {
        self.replay().begin(execution);
    }

    fn tick_phase(&mut self, free: bool) -> Option<std::time::Duration> {
        self.replay().tick_phase(free)
    }

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        self.replay().choose(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcsim::explore::{Footprint, Schedule};

    /// A chooser replaying `t0, t1, t1`, and a step offering the participants `names`.
    fn replaying() -> (StrategyChooser, Arc<Mutex<Record>>) {
        let run = |client| Choice::Run { client, delay: 0 };
        let mut replay = Replay::new(Schedule {
            phase: None,
            choices: vec![run(0), run(1), run(1)],
        });
        replay.begin(0);
        let record = Arc::new(Mutex::new(Record::default()));
        let chooser = StrategyChooser {
            strategy: shared(Box::new(replay)),
            record: record.clone(),
        };
        (chooser, record)
    }

    fn step(chooser: &mut StrategyChooser, names: &[&str]) -> usize {
        let footprint = Footprint {
            server: 0,
            keys: vec![1],
            read_only: false,
        };
        let held: Vec<Held<'_>> = (names.iter())
            .map(|name| Held {
                name,
                footprint: &footprint,
            })
            .collect();
        chooser.choose(&held)
    }

    #[test]
    fn a_schedule_not_followed_diverges_until_the_program_begins_to_end() {
        let (mut chooser, record) = replaying();
        assert_eq!(step(&mut chooser, &["t0", "t1"]), 0);
        assert_eq!(step(&mut chooser, &["t0", "t1"]), 1);
        // t1 is not there: the run diverged.
        assert_eq!(step(&mut chooser, &["t0"]), 0);
        let diverged = record.lock().unwrap().diverged.clone();
        assert_eq!(
            diverged.as_deref(),
            Some("step 2: the schedule runs client 1, but only t0 wait")
        );

        // The same, once a connection closed before its participant said it was done:
        // the program is ending, and t1 gone is its ending.
        let (mut chooser, record) = replaying();
        assert_eq!(step(&mut chooser, &["t0", "t1"]), 0);
        assert_eq!(step(&mut chooser, &["t0", "t1"]), 1);
        chooser.ending();
        assert_eq!(step(&mut chooser, &["t0"]), 0);
        let record = record.lock().unwrap();
        assert_eq!((record.diverged.clone(), record.ending), (None, Some(2)));
    }
}
