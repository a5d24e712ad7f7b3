//! Steps a search replays on its way to where it branches: the engine builds neither
//! their faults nor their phase points, and must still reach what building them gives.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::{Choice, Dfs, Options, Strategy};
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
    fn choose(&mut self, options: &Options<'_>) -> Choice {
        self.1.push(match (self.0.replaying(), self.0.repeating()) {
            (true, true) => 'r',
            (true, false) => 'b',
            (false, false) => 'n',
            (false, true) => panic!("repeating a step it does not replay"),
        });
        self.0.choose(options)
    }
    fn tick_phase(&mut self, free: bool) -> Option<Duration> {
        self.0.tick_phase(free)
    }
    fn wants_states(&self) -> bool {
        self.0.wants_states()
    }
    fn needs_footprints(&self) -> bool {
        self.0.needs_footprints()
    }
    fn explores_timing(&self) -> bool {
        self.0.explores_timing()
    }
    fn replaying(&self) -> bool {
        self.0.replaying()
    }
    fn symmetry(&self) -> bool {
        self.0.symmetry()
    }
    fn summaries(&self) -> bool {
        self.0.summaries()
    }
    fn wants_final_state(&self) -> bool {
        self.0.wants_final_state()
    }
    fn end(&mut self, failed: bool) -> bool {
        self.0.end(failed)
    }
    fn stop_requested(&self) -> bool {
        self.0.stop_requested()
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

/// Replays the choices it is given, saying it replays every one of them: the engine
/// then builds no fault options for it.
struct Replaying(Vec<Choice>);

impl Strategy for Replaying {
    fn name(&self) -> &'static str {
        "replaying"
    }
    fn begin(&mut self, _execution: u64) {}
    fn choose(&mut self, options: &Options<'_>) -> Choice {
        assert!(
            options.faults.is_empty(),
            "faults built for a replayed step"
        );
        if self.0.is_empty() {
            Choice::Run {
                client: options.calls[0].client,
                delay: 0,
            }
        } else {
            self.0.remove(0)
        }
    }
    fn replaying(&self) -> bool {
        true
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
