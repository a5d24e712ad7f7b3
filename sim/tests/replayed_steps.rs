//! Steps a search replays on its way to where it branches: the engine builds neither
//! their faults nor their phase points, and must still reach what building them gives.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::exhaustive::Dfs;
use mcsim::explore::{Choice, Decided, Needs, Options, Strategy};
use mcsim::fault::Fault;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{FaultPlan, Skew, Verdict};

mod support;
use support::expiring;

/// A depth-first search that says it never repeats a step: the engine then looks for
/// every step's phase points, as it did before it skipped repeated ones. It notes, per
/// step of the current execution, what the search itself said: 'r' repeating, 'b'
/// replaying but not repeating (where it branches), 'n' neither.
struct NeverRepeating(Dfs, String);

impl Strategy for NeverRepeating {
    fn name(&self) -> &'static str {
        "never-repeating"
    }
    fn begin(&mut self, execution: u64) {
        self.1.clear();
        self.0.begin(execution);
    }
    fn decided(&mut self) -> Option<Decided> {
        let decided = self.0.decided()?;
        self.1.push(if decided.repeated { 'r' } else { 'b' });
        Some(Decided {
            repeated: false,
            ..decided
        })
    }
    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        self.1.push('n');
        self.0.choose(options)
    }
    fn needs(&self) -> Needs {
        self.0.needs()
    }
    fn tick_phase(&mut self, free: bool) -> Option<Duration> {
        self.0.tick_phase(free)
    }
    fn end(&mut self, failed: bool) -> bool {
        self.0.end(failed)
    }
}

/// A search records the same phase points, over all its executions, whether or not the
/// engine looks for them again at the steps it repeats; and it does skip some.
#[test]
fn a_search_records_the_same_phase_points_without_looking_again_at_repeated_steps() {
    use std::collections::BTreeSet;
    let config = ExecConfig {
        faults: FaultPlan::evictions().on_keys(&["k"]),
        ..ExecConfig::default()
    };
    let search = || Dfs::new(Some(2), false).with_timing(true);
    let mut repeating = search();
    let mut looking = NeverRepeating(search(), String::new());
    let (mut all, mut looked) = (BTreeSet::new(), BTreeSet::new());
    let (mut fewer, mut executions) = (0, 0);
    for i in 0.. {
        let e = execute(&config, &expiring, &mut repeating, i);
        let l = execute(&config, &expiring, &mut looking, i);
        // After the first, every execution repeats the last one's steps up to one where
        // it branches, then decides the rest.
        let steps = &looking.1;
        let branch = steps.trim_start_matches('r');
        let shape = if i == 0 {
            steps.chars().all(|c| c == 'n')
        } else {
            branch.starts_with('b') && branch[1..].chars().all(|c| c == 'n')
        };
        assert!(shape, "execution {i}: {steps}");
        // The same execution, but for the points it did not look for again.
        assert_eq!((&e.schedule, &e.verdict), (&l.schedule, &l.verdict), "{i}");
        assert!(e.phase_points.iter().all(|p| l.phase_points.contains(p)));
        fewer += usize::from(e.phase_points.len() < l.phase_points.len());
        all.extend(e.phase_points.iter().copied());
        looked.extend(l.phase_points.iter().copied());
        executions += 1;
        let more = repeating.end(!e.verdict.is_pass());
        assert_eq!(more, looking.end(!l.verdict.is_pass()));
        if !more {
            break;
        }
    }
    assert!(!all.is_empty(), "no phase point recorded");
    assert_eq!(all, looked);
    assert!(fewer > 0 && executions > 2, "{fewer} of {executions}");
}

/// Replays the choices it is given, each decided before the step's options are worked
/// out: the engine then builds no fault options for it and never asks it to choose.
struct Replaying(Vec<Choice>);

impl Strategy for Replaying {
    fn name(&self) -> &'static str {
        "replaying"
    }
    fn begin(&mut self, _execution: u64) {}
    fn decided(&mut self) -> Option<Decided> {
        let choice = if self.0.is_empty() {
            // The lowest client at the earliest time, as past a schedule's end.
            Choice::Run {
                client: 0,
                delay: 0,
            }
        } else {
            self.0.remove(0)
        };
        Some(Decided {
            choice,
            repeated: false,
        })
    }
    fn choose(&mut self, _options: &Options<'_>) -> Option<Choice> {
        panic!("asked to choose a step it decided")
    }
}

/// A replayed fault is checked as a decided one is: it fires where it may, and where it
/// may not (its key is not there), the execution diverged.
#[test]
fn a_replayed_fault_fires_where_it_may_and_diverges_where_it_may_not() {
    let config = ExecConfig {
        faults: FaultPlan::evictions().on_keys(&["k"]),
        ..ExecConfig::default()
    };
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("k").unwrap();
            mc.set(&k, Value::from(1u64), Exptime::NEVER).await?;
            mc.get(&k).await?;
            Ok(())
        });
    };
    let run = Choice::Run {
        client: 0,
        delay: 0,
    };
    let evict = Choice::Fault(Fault::Evict {
        server: 0,
        key: "k".to_string(),
    });
    // After the set, the key is there: the eviction fires and the read misses.
    let e = execute(
        &config,
        &setup,
        &mut Replaying(vec![run.clone(), evict.clone(), run.clone()]),
        0,
    );
    assert!(e.verdict.is_pass(), "{:?}", e.verdict);
    assert_eq!(e.schedule.faults(), 1);
    assert!(
        e.faults
            .iter()
            .any(|&(_, fired, bit)| fired == 1 && bit == 1)
    );
    // Before the set, nothing is there to evict.
    let e = execute(&config, &setup, &mut Replaying(vec![evict, run]), 0);
    match e.verdict {
        Verdict::Diverged { step: 0, detail } => {
            assert!(detail.contains("fault not possible here"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}
