//! The step loop compiled for a strategy's own type (through `Drive`, as `mcsim check`
//! runs it) gives, execution for execution, what the loop over a `dyn Strategy` gives.

use mcsim::exec::{ExecConfig, Execution, execute_into};
use mcsim::explore::{Dfs, Strategy};
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

#[test]
fn every_sampling_strategy_runs_the_same_executions_compiled_for_its_type() {
    let config = faulty();
    let kinds = [
        StrategyKind::Random,
        StrategyKind::Swarm,
        StrategyKind::Pos,
        StrategyKind::Pct {
            depth: 3,
            steps: StrategyKind::DEFAULT_STEPS,
        },
    ];
    for kind in kinds {
        let (mut compiled, mut dynamic) = (kind.make(7), kind.make(7));
        let (mut a, mut b) = (Execution::default(), Execution::default());
        let mut failed = 0;
        for i in 0..200 {
            compiled.execute_into(&config, &three_counting, i, &mut a);
            let dynamic: &mut dyn Strategy = dynamic.as_mut();
            execute_into(&config, &three_counting, dynamic, i, &mut b);
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
}

#[test]
fn the_exhaustive_search_explores_the_same_tree_compiled_for_its_type() {
    let config = ExecConfig::default();
    let search = || Dfs::new(Some(2), true).with_cache(true);
    let (mut compiled, mut dynamic) = (search(), search());
    let (mut a, mut b) = (Execution::default(), Execution::default());
    let mut i = 0;
    loop {
        execute_into(&config, &three_counting, &mut compiled, i, &mut a);
        let dynamic_ref: &mut dyn Strategy = &mut dynamic;
        execute_into(&config, &three_counting, dynamic_ref, i, &mut b);
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
