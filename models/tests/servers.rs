//! Every scenario of the suite on three servers with ketama distribution: a recipe that is
//! right on one server stays right on a cluster (multi-key reads are split by server and
//! merged, as client libraries do), and one that is wrong shows no other verdict than its
//! own.

mod support;

use std::collections::BTreeSet;

use mcsim::Verdict;
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

fn on_three_servers(s: &Scenario) -> Scenario {
    s.with_set(&[
        "servers.count=3".into(),
        "servers.distribution=ketama".into(),
    ])
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_family_keeps_its_verdict_on_three_servers() {
    let mut families = BTreeSet::new();
    for path in support::all_scenarios() {
        let base = Scenario::load(&path, RECIPES).unwrap_or_else(|e| panic!("{e}"));
        if base.config.servers.len() > 1 {
            continue;
        }
        let s = on_three_servers(&base);
        let report = support::quick(&s, s.executions.min(300), false);
        let got = report.label();
        families.insert(s.recipe.clone());
        if s.expect == "pass" {
            assert_eq!(
                got,
                "pass",
                "{} on 3 servers: {}",
                s.name,
                report
                    .first_failure
                    .map(|f| f.execution.verdict.to_string())
                    .unwrap_or_default()
            );
        } else {
            assert!(
                got == s.expect || got == "pass",
                "{} on 3 servers: expected {} or pass, got {got}",
                s.name,
                s.expect
            );
        }
    }
    assert!(families.len() >= 11, "families covered: {families:?}");
}

/// The report's own example: the chunk-keys event log reads its chunks with one
/// multi-key get; on three servers each server must answer for its own keys.
#[test]
fn chunk_keys_event_log_reads_every_chunk_across_servers() {
    let s = on_three_servers(&support::load("eventlog-chunk-keys"));
    let e = mcsim::run::run_seed(&s, s.strategy, s.seed);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
    let spread = e
        .trace
        .lines
        .iter()
        .any(|l| l.text.starts_with("get ") && l.text.contains(",s"));
    assert!(spread, "no multi-key get spanned several servers");
    assert!(!matches!(e.verdict, Verdict::Violation(_)));
}
