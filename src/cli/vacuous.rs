//! Why a pass is `vacuous`: the danger it was to survive never happened.

use std::collections::BTreeSet;

use mcsim::exec::Event;
use mcsim::run::{self, RunReport};
use mcsim::scenario::{Scenario, StrategyKind};

/// The conditions no execution met, with the fault figures behind them; when the plan
/// aims faults at keys the recipe never used, those keys and the ones it did use.
pub(crate) fn explain(s: &Scenario, strategy: StrategyKind, report: &RunReport) -> String {
    let unmet = s.expectation.unmet(&report.met);
    let mut out = headline(&format!("{} executions", report.executions), &unmet);
    for (kind, f) in &report.faults {
        out.push_str(&format!(
            "\n  {kind}: {} injected, {} bit",
            f.injected, f.bit
        ));
    }
    if report.faults.is_empty() {
        out.push_str("\n  no fault fired in any execution");
    }
    let aimed: BTreeSet<&String> = s
        .config
        .faults
        .rules
        .iter()
        .filter_map(|(_, r)| r.keys.as_ref())
        .flatten()
        .collect();
    if !aimed.is_empty() {
        let used = keys_used(s, strategy);
        let never: Vec<&str> = aimed
            .iter()
            .filter(|k| !used.contains(**k))
            .map(|k| k.as_str())
            .collect();
        if !never.is_empty() {
            let used: Vec<&str> = used.iter().map(String::as_str).collect();
            out.push_str(&format!(
                "\n  the plan aims faults at {}, which no call used; the keys used: {}",
                never.join(", "),
                used.join(", ")
            ));
        }
    }
    out
}

/// The first line of a `vacuous` report: over what (`100 executions`, or a sweep's
/// executions and points), the conditions none met.
pub(crate) fn headline(over: &str, unmet: &[&str]) -> String {
    format!(
        "vacuous: in {over} none met {} (each must happen at least once for a pass to mean something)",
        unmet.join(", ")
    )
}

/// Every key the calls of the scenario's first execution named.
fn keys_used(s: &Scenario, strategy: StrategyKind) -> BTreeSet<String> {
    let e = run::run_seed(s, strategy, s.seed);
    e.events
        .iter()
        .filter_map(|ev| match ev {
            Event::Call { request, .. } => Some(request),
            _ => None,
        })
        .flat_map(|r| r.keys().iter().map(|k| k.to_string()))
        .collect()
}
