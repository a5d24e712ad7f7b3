//! What a strategy is offered at a step holds only what it asked for: the engine reuses
//! one options buffer for every execution of a thread, and a strategy that asked for no
//! footprints or edges never finds those a previous strategy was given. And a call is
//! offered only where it may run before the next wake: its window may open at that
//! instant, not after it.

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::{Choice, Needs, Options, Strategy};
use mcsim::memcache::{Key, Memcache};
use mcsim::{Sim, Skew};

mod support;
use support::three_counting;

/// Runs the first call offered, at its earliest, and notes whether any call offered held
/// a footprint or edges, and the windows offered at its first choice, as (client,
/// earliest, latest) in microseconds.
struct Looking {
    footprints: bool,
    timing: bool,
    saw_footprints: bool,
    saw_edges: bool,
    first_windows: Option<Vec<(usize, u64, u64)>>,
}

impl Looking {
    /// Asks for footprints if `footprints`, for edges if `timing`.
    fn new(footprints: bool, timing: bool) -> Looking {
        Looking {
            footprints,
            timing,
            saw_footprints: false,
            saw_edges: false,
            first_windows: None,
        }
    }
}

impl Strategy for Looking {
    fn name(&self) -> &'static str {
        "looking"
    }

    fn begin(&mut self, _execution: u64) {}

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        if self.first_windows.is_none() {
            let windows = options.calls.iter();
            let windows = windows.map(|c| (c.client, c.earliest.micros(), c.latest.micros()));
            self.first_windows = Some(windows.collect());
        }
        for call in options.calls {
            self.saw_footprints |= call.footprint.is_some();
            self.saw_edges |= !call.edges.is_empty();
        }
        Some(Choice::Run {
            client: options.calls[0].client,
            delay: 0,
        })
    }

    fn needs(&self) -> Needs {
        Needs {
            footprints: self.footprints,
            timing: self.timing,
            ..Needs::NOTHING
        }
    }
}

/// What a strategy asking for footprints if `footprints` and for edges if `timing` was
/// offered in one execution on this thread's engine, with latency as wide as a second
/// and a half, so that the windows of calls span a tick edge and a strategy that
/// explores timing is given edges.
fn looked(footprints: bool, timing: bool) -> Looking {
    let config = ExecConfig {
        latency_max: std::time::Duration::from_millis(1500),
        ..ExecConfig::default()
    };
    let mut looking = Looking::new(footprints, timing);
    execute(&config, &three_counting, &mut looking, 0);
    looking
}

#[test]
fn a_strategy_that_asks_for_no_footprints_or_edges_finds_none_after_one_that_did() {
    let asking = looked(true, true);
    assert!(
        asking.saw_footprints,
        "the asking strategy got no footprints"
    );
    assert!(asking.saw_edges, "the asking strategy got no edges");
    let plain = looked(false, false);
    assert!(
        !plain.saw_footprints,
        "footprints left from the last strategy"
    );
    assert!(!plain.saw_edges, "edges left from the last strategy");
}

#[test]
fn a_strategy_gets_footprints_or_edges_when_it_asks_for_either_alone() {
    let footprints = looked(true, false);
    assert!(
        footprints.saw_footprints,
        "asked for footprints alone, got none"
    );
    assert!(!footprints.saw_edges, "asked for no edges, got some");
    let timing = looked(false, true);
    assert!(timing.saw_edges, "asked for edges alone, got none");
    assert!(!timing.saw_footprints, "asked for no footprints, got some");
}

/// Client 0 sleeps 5 ms, then reads; client 1 reads at once, its call taking at least
/// `latency_min_ms`. The windows offered at the first choice.
fn first_windows(latency_min_ms: u64) -> Vec<(usize, u64, u64)> {
    let config = ExecConfig {
        latency_min: std::time::Duration::from_millis(latency_min_ms),
        latency_max: std::time::Duration::from_millis(100),
        ..ExecConfig::default()
    };
    let setup = |sim: &mut Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.sleep(std::time::Duration::from_millis(5)).await;
            mc.get(&Key::new("k").unwrap()).await.ok();
            Ok(())
        });
        sim.client(Skew::default(), |mc| async move {
            mc.get(&Key::new("k").unwrap()).await.ok();
            Ok(())
        });
    };
    let mut looking = Looking::new(false, false);
    execute(&config, &setup, &mut looking, 0);
    looking
        .first_windows
        .expect("the strategy was asked to choose")
}

#[test]
fn a_call_may_run_at_the_instant_a_sleeper_wakes_and_not_after() {
    // Its window opens as the sleeper wakes: offered, closed at that instant (the
    // sleeper's wake comes first after it).
    assert_eq!(first_windows(5), vec![(1, 5000, 5000)]);
    // Its window opens after the sleeper wakes: offered only after the wake, beside the
    // sleeper's own call.
    assert_eq!(
        first_windows(6),
        vec![(0, 11000, 100000), (1, 6000, 100000)]
    );
}
