//! The step loop compiled for a strategy's own type gives, execution for execution, what
//! the loop over a `dyn Strategy` (as `mcsim check` runs it) gives.

use mcsim::exec::{ExecConfig, Execution, Runs};
use mcsim::exhaustive::Dfs;
use mcsim::explore::{Pct, Pos, Random, Strategy, Swarm};
use mcsim::fault::FaultPlan;
use mcsim::scenario::StrategyKind;

mod support;
use support::three_counting;

fn faulty() -> ExecConfig {
    ExecConfig {
        faults: FaultPlan::lost_replies()
            .and(FaultPlan::evictions())
            .probability(0.3),
        trace: true,
        ..ExecConfig::default()
    }
}

/// Runs 200 executions of `concrete` (the step loop compiled for its type) and of the
/// same strategy as `StrategyKind::make` gives it (a `dyn Strategy`), comparing them.
fn same_as_dyn<S: Strategy>(mut concrete: S, kind: StrategyKind) {
    let config = faulty();
    let mut dynamic = kind.make(7);
    let runs = Runs::new(&config);
    let (mut a, mut b) = (Execution::default(), Execution::default());
    let mut failed = 0;
    for i in 0..200 {
        runs.execute_into(&three_counting, &mut concrete, i, &mut a);
        runs.execute_into(&three_counting, dynamic.as_mut(), i, &mut b);
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{} execution {i}",
            kind.name()
        );
        failed += usize::from(!a.verdict.is_pass());
    }
    // The comparison covers failing executions, not only passing ones.
    assert!(failed > 0, "{} found no lost increment", kind.name());
}

#[test]
fn every_sampling_strategy_runs_the_same_executions_compiled_for_its_type() {
    same_as_dyn(Random::new(7), StrategyKind::Random);
    same_as_dyn(Swarm::new(7), StrategyKind::Swarm);
    same_as_dyn(Pos::new(7), StrategyKind::Pos);
    let steps = StrategyKind::DEFAULT_STEPS;
    same_as_dyn(Pct::new(7, 3, steps), StrategyKind::Pct { depth: 3, steps });
}

#[test]
fn the_exhaustive_search_explores_the_same_tree_compiled_for_its_type() {
    let config = ExecConfig::default();
    let search = || Dfs::new(Some(2), true).with_cache(true);
    let (mut compiled, mut dynamic) = (search(), search());
    let (mut a, mut b) = (Execution::default(), Execution::default());
    let mut i = 0;
    loop {
        Runs::new(&config).execute_into(&three_counting, &mut compiled, i, &mut a);
        let dynamic_ref: &mut dyn Strategy = &mut dynamic;
        Runs::new(&config).execute_into(&three_counting, dynamic_ref, i, &mut b);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "execution {i}");
        let (more, more_too) = (
            compiled.end(!a.verdict.is_pass()),
            dynamic.end(!b.verdict.is_pass()),
        );
        assert_eq!(more, more_too);
        i += 1;
        if !more {
            break;
        }
    }
    // Up to two preemptions, reduced: 42 executions.
    assert!(i > 10, "the search explored {i} executions");
}
