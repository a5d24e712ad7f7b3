//! What runs print and write: a failure report a person can act on, the suite summary
//! table ([`Row`]), its JSON and JUnit forms, shard results merged ([`merge`]), the
//! counterexample as a timeline ([`timeline`]) (drawn as one HTML page by the `mcsim-cli` crate).

pub mod junit;
pub mod kept;
pub mod merge;
mod suite;
pub mod timeline;

pub use junit::xml_escape;
pub use suite::{
    MetricRow, PointRow, Row, TABLE_WIDTH, key_numbers, render_junit, render_points, render_table,
    short_name,
};

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::invariant::Verdict;
use crate::run::{Finding, RunReport};
use crate::scenario::{Origin, Scenario, StrategyKind};

static PROGRAM: OnceLock<String> = OnceLock::new();

/// The name replay lines give the command line: the running program's (`mcsim`, or a
/// downstream crate's own binary, as `mcsim_cli::main` found it).
pub fn program() -> &'static str {
    PROGRAM.get().map(String::as_str).unwrap_or("mcsim")
}

/// Names the program replay lines give (the first time only: one process, one name).
pub fn name_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// A word for a shell: quoted when it holds anything but plain characters.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,/:=+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `mcsim replay FILE` with the fields the scenario sets over its file (a sweep point's
/// values), so the command rebuilds exactly this scenario.
fn replay_prefix(scenario: &Scenario) -> String {
    let mut out = format!(
        "{} replay {}",
        program(),
        shell_word(&scenario.path.display().to_string())
    );
    for setting in scenario.settings() {
        let _ = write!(out, " --set {}", shell_word(&setting));
    }
    out
}

/// The command that replays a failure from its seed.
pub fn replay_seed_command(
    scenario: &Scenario,
    strategy: StrategyKind,
    seed: Option<u64>,
) -> String {
    let Some(seed) = seed else {
        return format!(
            "{} --schedule <the schedule below>",
            replay_prefix(scenario)
        );
    };
    // `replay` runs the scenario's own strategy unless told another.
    let extra = match strategy {
        s if s == scenario.strategy => String::new(),
        StrategyKind::Pct { depth, .. } => format!(" --strategy pct --depth {depth}"),
        other => format!(" --strategy {}", other.name()),
    };
    format!("{} --seed {seed}{extra}", replay_prefix(scenario))
}

/// The command that replays a failure from its schedule alone.
pub fn replay_schedule_command(scenario: &Scenario, failure: &Finding) -> String {
    let clients = if failure.clients == scenario.clients {
        String::new()
    } else {
        format!(" --clients {}", failure.clients)
    };
    format!(
        "{}{clients} --schedule {}",
        replay_prefix(scenario),
        failure.execution.schedule
    )
}

/// A command that replays a failure, with the trace hash it prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayLine {
    /// The command, ready to paste into a shell.
    pub command: String,
    /// The `trace hash:` it prints.
    pub trace_hash: String,
    /// `as found` (from the seed) or `shrunk` (from the schedule).
    pub what: String,
}

/// Every command that replays a failure: from its seed (the execution as found) and from
/// its schedule (the shrunk one), each with the trace hash it reproduces.
pub fn replay_lines(
    scenario: &Scenario,
    strategy: StrategyKind,
    failure: &Finding,
) -> Vec<ReplayLine> {
    let mut out = Vec::new();
    if let Origin::Code { tag, rerun, .. } = &scenario.origin {
        // The token ends with the trace hash, which the replay checks.
        let hash = format!("{:016x}", failure.execution.trace.hash());
        let token = format!(
            "{tag}:{}:{}#{hash}",
            failure.clients, failure.execution.schedule
        );
        out.push(ReplayLine {
            command: format!("MCSIM_REPLAY={} {rerun}", shell_word(&token)),
            trace_hash: hash,
            what: if failure.original.is_some() {
                "shrunk".into()
            } else {
                "as found".into()
            },
        });
        return out;
    }
    // Each command checks its own trace hash: a line printed by another version of
    // mcsim, or kept after the scenario file or the recipe changed, fails loudly instead
    // of showing another execution.
    if let (Some(seed), Some(hash)) = (failure.seed, failure.found_hash) {
        out.push(ReplayLine {
            command: format!(
                "{} --expect-hash {hash:016x}",
                replay_seed_command(scenario, strategy, Some(seed))
            ),
            trace_hash: format!("{hash:016x}"),
            what: "as found".into(),
        });
    }
    let hash = failure.execution.trace.hash();
    out.push(ReplayLine {
        command: format!(
            "{} --expect-hash {hash:016x}",
            replay_schedule_command(scenario, failure)
        ),
        trace_hash: format!("{hash:016x}"),
        what: if failure.original.is_some() {
            "shrunk".into()
        } else {
            "as found".into()
        },
    });
    out
}

/// A failure: the verdict, the numbers, the faults, the timeline, how to replay it.
pub fn render_failure(scenario: &Scenario, strategy: StrategyKind, failure: &Finding) -> String {
    let e = &failure.execution;
    let mut out = String::new();
    let _ = writeln!(out, "FAILED {}: {}", scenario.name, e.verdict.label());
    let _ = writeln!(out, "  {}", e.verdict);
    if let Verdict::Violation(v) = &e.verdict {
        for (k, n) in &v.failure.numbers {
            let _ = writeln!(out, "  {k:<12} {n}");
        }
        let _ = writeln!(out, "  cause        {}", v.cause());
    }
    if e.violated.len() > 1 {
        let _ = writeln!(out, "  also         {}", e.violated[1..].join(", "));
    }
    match &failure.original {
        Some(before) => {
            let after = failure.size(scenario);
            let _ = writeln!(out, "  found        {before}");
            let _ = writeln!(out, "  shrunk to    {after}");
            if failure.cut_short {
                let _ = writeln!(
                    out,
                    "  (shrinking stopped at its step budget: a smaller one may exist)"
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  schedule     {} choices, {} faults",
                e.schedule.len(),
                e.schedule.faults()
            );
        }
    }
    let _ = writeln!(
        out,
        "\ntimeline (step, virtual time, client, call -> reply):"
    );
    out.push_str(&e.trace.render());
    let _ = writeln!(
        out,
        "\nreplay (each command prints this verdict and checks its trace hash):"
    );
    // `mcsim replay` lines carry their hash as `--expect-hash`, a test's token
    // (`MCSIM_REPLAY=…#hash`) at its end.
    for line in replay_lines(scenario, strategy, failure) {
        let _ = writeln!(out, "  {}   # {}", line.command, line.what);
    }
    out
}

/// A run's outcome in one paragraph.
pub fn render_run(scenario: &Scenario, report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} executions, {} calls; verdicts: {}",
        scenario.name,
        report.executions,
        report.calls,
        report
            .verdicts
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, s) in &report.metrics {
        let _ = writeln!(
            out,
            "  {k:<28} mean {:>10.3}  min {:>8}  max {:>8}",
            s.mean(),
            s.min,
            s.max
        );
    }
    for (kind, f) in &report.faults {
        let _ = writeln!(
            out,
            "  fault {kind:<22} {} injected, {} bit",
            f.injected, f.bit
        );
    }
    for c in &scenario.expectation.sometimes {
        let n = report.met.get(c).copied().unwrap_or(0);
        let _ = writeln!(out, "  danger {c:<21} met in {n} executions");
    }
    if !report.found.is_empty() {
        let found: Vec<String> = report
            .found
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        let _ = writeln!(out, "  violated: {}", found.join(", "));
    }
    out
}
