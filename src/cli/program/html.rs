//! `mcsim test --html FILE`: the page `check` writes ([`crate::html::page`]), for the
//! program: one row with its verdict, runs, commands, faults and coverage, and a failure's
//! shrunk run as a swimlane: a lane per participant, a box per command with its reply
//! under it, the faults marked across, the red line where the failure was declared or
//! found; with the lines that replay it.

use std::time::Instant;

use anyhow::Context;

use mcsim::report::timeline::{CallBox, MAX_CALLS, Mark, Timeline};
use mcsim::report::{ReplayLine, Row};
use mcsim::run::FaultFigures;

use super::report::Report;
use super::{Outcome, TestOptions};

/// The run a failure is drawn from: its timeline, message, replay lines (`shrunk`, `as
/// found`) and whole trace.
pub(super) struct Drawn<'a> {
    pub(super) outcome: &'a Outcome,
    pub(super) message: &'a str,
    pub(super) replays: [(&'a str, &'a str); 2],
}

/// Writes the page, when asked.
pub(super) fn write_html(
    options: &TestOptions,
    report: &Report<'_>,
    started: Instant,
    failure: Option<Drawn<'_>>,
    summary: &str,
) -> anyhow::Result<()> {
    let Some(path) = &options.html else {
        return Ok(());
    };
    let shown = options.command.join(" ");
    let timeline = failure.as_ref().map(|f| timeline(f.outcome, f.message));
    let replays: Vec<ReplayLine> = (failure.iter())
        .flat_map(|f| {
            f.replays.iter().map(|(what, line)| ReplayLine {
                command: line.to_string(),
                trace_hash: f.outcome.hash(),
                what: what.to_string(),
            })
        })
        .collect();
    let detail = failure.as_ref().map(|f| {
        let mut text = f.outcome.trace.join("\n");
        text.push('\n');
        text
    });
    let row = Row {
        scenario: shown.clone(),
        file: report.scenario.clone().unwrap_or_default(),
        expected: options.expect.clone().unwrap_or_else(|| "pass".into()),
        got: report.verdict.to_string(),
        executions: report.runs,
        calls: report.commands_released as u64,
        numbers: String::new(),
        millis: started.elapsed().as_millis() as u64,
        replay: replays.first().map(|r| r.command.clone()),
        replays,
        detail,
        error: None,
        points: Vec::new(),
        exhaustive: None,
        timeline,
        counterexample: None,
        metrics: Default::default(),
        shard: None,
        found: (failure.iter())
            .map(|f| (f.message.to_string(), 1))
            .collect(),
        faults: (report.faults.iter())
            .map(|(kind, b)| {
                let figures = FaultFigures {
                    injected: b.injected,
                    bit: b.bit,
                };
                (kind.to_string(), figures)
            })
            .collect(),
        checks: Default::default(),
        dangers: report.sometimes.clone(),
        coverage: summary.to_string(),
    };
    let heading = crate::html::Heading {
        title: format!("mcsim test -- {shown}"),
        facts: vec![
            format!("{} clients", options.clients),
            format!("{} servers", options.servers),
            format!("strategy {}", options.strategy_name()),
            format!("seed {}", options.seed),
        ],
    };
    let page = crate::html::page(&heading, &[row]);
    std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))
}

/// A run as the swimlane draws it: its participants' commands (the last
/// [`MAX_CALLS`]), its faults and where the failure fell.
fn timeline(outcome: &Outcome, message: &str) -> Timeline {
    let (exchanges, marks, failed_at) = &outcome.drawn;
    let lane = |who: &str| {
        (outcome.participants.iter())
            .position(|n| n == who)
            .unwrap_or(outcome.participants.len())
    };
    let omitted = exchanges.len().saturating_sub(MAX_CALLS);
    let calls: Vec<CallBox> = (exchanges.iter().enumerate().skip(omitted))
        .map(|(step, e)| CallBox {
            step: step as u64,
            client: lane(&e.who),
            issued_us: e.at_us,
            at_us: e.at_us,
            server: e.server,
            request: e.request.clone(),
            reply: e.reply.clone(),
            fault: e.lost.then(|| "reply lost".to_string()),
        })
        .collect();
    let from_us = calls.first().map_or(0, |c| c.at_us);
    let last = calls.last().map_or(0, |c| c.at_us);
    // A step for each mark: the number of commands that ran before it.
    let step_at = |at: u64| exchanges.iter().filter(|e| e.at_us < at).count() as u64;
    let faults = (marks.iter())
        .filter(|m| m.at_us >= from_us)
        .map(|m| Mark {
            step: step_at(m.at_us),
            at_us: m.at_us,
            text: m.text.clone(),
        })
        .collect();
    let at_us = failed_at.unwrap_or(last).max(from_us);
    Timeline {
        clients: outcome.participants.len().max(1),
        lanes: outcome.participants.clone(),
        end_us: at_us.max(last),
        calls,
        faults,
        keys: Vec::new(),
        verdict: Mark {
            step: step_at(at_us + 1),
            at_us,
            text: message.to_string(),
        },
        omitted,
        from_us: if omitted > 0 { from_us } else { 0 },
        keys_omitted: 0,
    }
}
