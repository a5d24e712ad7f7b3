//! What a check measured, for a test to assert on.

use std::collections::BTreeMap;

use crate::exec::Execution;
use crate::run::{Finding, RunReport, Summary};
use crate::scenario::did_you_mean;

/// A failing execution replayed from its schedule, as a finding of `clients` clients.
pub(super) fn replayed(clients: usize, execution: Execution) -> Finding {
    Finding {
        seed: None,
        original: None,
        clients,
        execution,
        found_hash: None,
        cut_short: false,
    }
}

/// The report of a run of one execution (a replay).
pub(super) fn one_execution(e: &Execution) -> RunReport {
    let mut verdicts = BTreeMap::new();
    verdicts.insert(e.verdict.label(), 1);
    let mut report = RunReport {
        executions: 1,
        verdicts,
        first_failure: None,
        metrics: e
            .metrics
            .iter()
            .map(|(k, v)| {
                let mut s = Summary::default();
                s.add(*v);
                (k.clone(), s)
            })
            .collect(),
        calls: e.calls,
        steps: e.steps,
        found: crate::run::failing_labels(e)
            .into_iter()
            .map(|l| (l, 1))
            .collect(),
        ..RunReport::default()
    };
    report.count(e);
    report
}

/// What a check measured, for a test to assert on.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Executions run.
    pub executions: u64,
    /// Executions per verdict label.
    pub verdicts: BTreeMap<String, u64>,
    /// Every metric the model recorded, over the executions.
    pub metrics: BTreeMap<String, Summary>,
    /// The failure found, when one was expected ([`Check::expect`](super::Check::expect)).
    pub failure: Option<Finding>,
    /// Calls the servers executed.
    pub calls: u64,
    /// For [`Check::dfs`](super::Check::dfs): every schedule within the bounds was covered.
    pub exhaustive: bool,
    /// Every failing verdict found, each invariant an execution violated counted.
    pub found: BTreeMap<String, u64>,
    /// Per fault kind: injections, and how many bit (changed what a later call saw). A
    /// pass whose faults never bit could not have failed on them.
    pub faults: BTreeMap<String, crate::run::FaultFigures>,
    /// Per invariant: the times it was evaluated.
    pub checks: BTreeMap<String, u64>,
    /// For [`Check::dfs`](super::Check::dfs) without a counterexample: what the search
    /// proved, printed as one sentence.
    pub proof: Option<Proof>,
}

impl Figures {
    /// The figures of a run (`exhaustive`: it covered every schedule within its bounds).
    pub(crate) fn of(report: RunReport, exhaustive: bool) -> Figures {
        Figures {
            executions: report.executions,
            verdicts: report.verdicts,
            metrics: report.metrics,
            failure: report.first_failure,
            calls: report.calls,
            exhaustive,
            found: report.found,
            faults: report.faults,
            checks: report.checks,
            proof: None,
        }
    }

    /// The share of the executions that broke `verdict` (an invariant, `stuck`, …; `pass`:
    /// those that kept every one), from 0 to 1: with [`Check::measure`](super::Check::measure),
    /// the rate under the plan's probabilities.
    pub fn rate(&self, verdict: &str) -> f64 {
        let n = if verdict == "pass" {
            self.verdicts.get("pass")
        } else {
            self.found.get(verdict)
        };
        n.copied().unwrap_or(0) as f64 / self.executions.max(1) as f64
    }

    /// A metric over the executions; panics, naming the known ones, if the model never
    /// recorded it.
    pub fn metric(&self, name: &str) -> Summary {
        match self.metrics.get(name) {
            Some(s) => s.clone(),
            None => panic!(
                "mcsim: no metric {name:?}{}; recorded: {}",
                did_you_mean(name, self.metrics.keys().map(String::as_str)),
                self.metrics.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// What an exhaustive search ([`Check::dfs`](super::Check::dfs)) proved: no violation in
/// every schedule of `clients` clients within these bounds. Displays as the one sentence
/// `mcsim explore` prints (what was covered, what stayed fixed, what was visited).
#[derive(Debug, Clone, PartialEq)]
pub struct Proof {
    /// Clients.
    pub clients: usize,
    /// At most this many preemptions per execution (`None`: any number).
    pub preemptions: Option<u32>,
    /// At most this many faults per execution (`None`: the plan's budgets).
    pub faults: Option<u32>,
    /// The fault kinds the plan allows.
    pub fault_kinds: Vec<crate::fault::FaultKind>,
    /// Tick-phase classes searched, of those the executions distinguish.
    pub phases: crate::exhaustive::PhaseCoverage,
    /// Draws of the workload searched.
    pub draws: u32,
    /// Executions run to the end.
    pub executions: u64,
    /// Distinct states visited.
    pub states: u64,
    /// The sentence.
    pub statement: String,
}

impl std::fmt::Display for Proof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.statement)
    }
}
