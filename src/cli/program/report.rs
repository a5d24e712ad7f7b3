//! What `mcsim test` writes for other programs: the JSON result and the JUnit report.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Context;

use mcsim::run::Summary;

use super::TestOptions;

/// What `--json` writes.
#[derive(serde::Serialize)]
pub(super) struct Report<'a> {
    pub(super) command: &'a [String],
    pub(super) clients: usize,
    pub(super) servers: usize,
    pub(super) strategy: &'static str,
    pub(super) seed: u64,
    /// Runs made (up to and with the first failing one).
    pub(super) runs: u64,
    /// `pass` or `fail`.
    pub(super) verdict: &'static str,
    pub(super) commands_released: usize,
    /// Commands released per run: min, mean, max over the runs.
    #[serde(serialize_with = "figure")]
    pub(super) commands_per_run: Summary,
    pub(super) faults_injected: u64,
    /// By fault kind the policy allows (by its scenario name), how many fired and how
    /// many of those the program met, over the runs.
    pub(super) faults: BTreeMap<&'static str, Bitten>,
    /// The scenario file the servers, faults and latency came from.
    pub(super) scenario: Option<String>,
    /// What the runs covered (a pass's): the orders of conflicting command pairs seen.
    pub(super) coverage: Option<super::coverage::Figure>,
    /// With `--exhaustive`: whether the search covered every schedule within its bound.
    pub(super) complete: Option<bool>,
    /// With `--exhaustive`: the tick-phase classes it searched ("all 2 tick-phase classes
    /// (phases 0, 0.000401 s)").
    pub(super) tick_phases: Option<String>,
    /// With `--all`: the failing runs, and the 95% interval of the failure rate.
    pub(super) failing: Option<u64>,
    pub(super) rate_interval: Option<(f64, f64)>,
    /// By name, the figures the program declared: runs, min, mean, max.
    #[serde(serialize_with = "figures")]
    pub(super) metrics: BTreeMap<String, Summary>,
    /// By name, the runs in which the program saw the danger.
    pub(super) sometimes: BTreeMap<String, u64>,
    pub(super) failure: Option<FailureReport>,
}

/// Faults of one kind over the runs: how many fired, and how many the program met.
#[derive(serde::Serialize, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Bitten {
    pub(super) injected: u64,
    pub(super) bit: u64,
}

impl Bitten {
    /// Adds a run's count.
    pub(super) fn add(&mut self, count: mcsim_serve::FaultCount) {
        self.injected += count.fired;
        self.bit += count.bit;
    }
}

/// The fault counts in a line: `crash 3 injected, 2 bit; evict 9 injected, 4 bit`.
pub(super) fn fault_line(faults: &BTreeMap<&'static str, Bitten>) -> String {
    (faults.iter())
        .map(|(kind, b)| format!("{kind} {} injected, {} bit", b.injected, b.bit))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The declared figures, each as its runs, min, mean and max.
fn figures<S: serde::Serializer>(
    metrics: &BTreeMap<String, Summary>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(metrics.iter().map(|(name, s)| (name, Figure::from(s))))
}

/// One figure over runs, as its runs, min, mean and max.
fn figure<S: serde::Serializer>(summary: &Summary, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&Figure::from(summary), serializer)
}

/// A declared figure over runs, as the report shows it.
#[derive(serde::Serialize)]
struct Figure {
    pub(super) runs: u64,
    min: f64,
    mean: f64,
    max: f64,
}

impl From<&Summary> for Figure {
    fn from(s: &Summary) -> Figure {
        Figure {
            runs: s.count,
            min: s.min,
            mean: s.mean(),
            max: s.max,
        }
    }
}

#[derive(serde::Serialize)]
pub(super) struct FailureReport {
    pub(super) run: u64,
    pub(super) seed: u64,
    pub(super) message: String,
    /// The failing run shrunk, and as found.
    pub(super) shrunk: Size,
    pub(super) found: Size,
    pub(super) schedule: String,
    pub(super) trace_hash: String,
    pub(super) replay: String,
    pub(super) timeline: Vec<String>,
}

/// How large a failing run is: what shrinking makes smaller.
#[derive(serde::Serialize)]
pub(super) struct Size {
    pub(super) clients: usize,
    /// The participants' commands up to the failure (all of them, for a failure the
    /// program found only as it ended).
    pub(super) commands_to_failure: usize,
    pub(super) preemptions: usize,
    /// The steps released in turn over the whole run: commands, sleeps and the
    /// section's `enter` and `leave`, up to the program's end.
    pub(super) steps: usize,
}

impl std::fmt::Display for Size {
    /// `2 clients, 4 commands to the failure, 1 preemption, 24 steps released in turn`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} client{}, {} command{} to the failure, {} preemption{}, {} step{} released in turn",
            self.clients,
            s(self.clients),
            self.commands_to_failure,
            s(self.commands_to_failure),
            self.preemptions,
            s(self.preemptions),
            self.steps,
            s(self.steps),
        )
    }
}

/// Writes the JUnit report of the test, when asked: one test case, the program, failed
/// with `failure` (its message and its timeline and replay lines) or passed with `passed`.
pub(super) fn write_junit(
    options: &TestOptions,
    started: Instant,
    failure: Option<(&str, &str)>,
    passed: &str,
) -> anyhow::Result<()> {
    let Some(path) = &options.junit else {
        return Ok(());
    };
    use mcsim::report::junit::{Case, Outcome, render};
    let name = options.command.join(" ");
    let case = Case {
        class: "test",
        name: &name,
        seconds: started.elapsed().as_secs_f64(),
        outcome: match failure {
            Some((message, detail)) => Outcome::Failed { message, detail },
            None => Outcome::Passed(passed),
        },
    };
    let text = render("mcsim test", &[case]);
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub(super) fn write_json(options: &TestOptions, report: &Report<'_>) -> anyhow::Result<()> {
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
