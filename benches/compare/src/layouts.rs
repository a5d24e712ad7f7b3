//! §2's rate tables measured in several processes, each laid out afresh.
//!
//! Where the system places a process's heap, stack and libraries changes from one run to
//! the next (address-space layout randomization), and with it which of the engine's
//! buffers and code share cache sets. On this workload that alone moved the executor's
//! overhead over the minimal scheduler from 1.7× to 3.0× between runs of the same binary,
//! while the rounds within one run agreed far more closely: a figure from one process
//! is the figure of one layout. So each table's [`ROUNDS`] rounds run in [`PROCESSES`]
//! child processes of this binary (`compare --rate-rounds NAME`), each a share of the
//! rounds on other seeds, and the tables pool every round of every process. Each
//! process's own figure is kept beside the pooled one, so the spread across layouts
//! shows.

#[allow(unused_imports)]
use super::*;
use std::process::Stdio;

use crate::rates::{Layouts, ROW_LABELS, Rate, Rounds, measure, overhead_of};

/// Child processes (layouts) each rate table is measured in.
pub(crate) const PROCESSES: u64 = 5;

/// The `name` counter's rate table measured in [`PROCESSES`] child processes, or in this
/// one (said on stderr) if a child cannot be run or answers what cannot be read.
pub(crate) fn measure_in_processes(name: &str) -> Layouts {
    eprintln!(
        "rates counter/{name}: {} rows in {ROUNDS} interleaved rounds over {PROCESSES} processes",
        ROW_LABELS.len(),
    );
    let share = ROUNDS / PROCESSES;
    let mut pooled = Layouts {
        rows: Vec::new(),
        overheads: Vec::new(),
    };
    for p in 0..PROCESSES {
        match in_child(name, p * share, share) {
            Ok(rows) => {
                pooled.overheads.push(overhead_of(&rows));
                if pooled.rows.is_empty() {
                    pooled.rows = rows;
                } else {
                    for (all, more) in pooled.rows.iter_mut().zip(rows) {
                        all.0.extend(more.0);
                    }
                }
            }
            Err(e) => {
                eprintln!("compare: rates counter/{name} measured in this process: {e}");
                return Layouts {
                    rows: measure(name, 0, ROUNDS),
                    overheads: Vec::new(),
                };
            }
        }
    }
    pooled
}

/// The table's rows measured by a child process in `rounds` rounds from `first`.
fn in_child(name: &str, first: u64, rounds: u64) -> Result<Vec<Rounds>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("no path to this binary: {e}"))?;
    let out = Command::new(exe)
        .args(["--rate-rounds", name])
        .args(["--first-round", &first.to_string()])
        .args(["--rounds", &rounds.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run a child: {e}"))?;
    if !out.status.success() {
        return Err(format!("the child ended with {}", out.status));
    }
    parse_rounds(&String::from_utf8_lossy(&out.stdout))
}

/// Reads what [`print_rounds`] wrote.
fn parse_rounds(text: &str) -> Result<Vec<Rounds>, String> {
    let mut rows: Vec<Rounds> = Vec::new();
    for line in text.lines() {
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("a child wrote {line:?}: {e}"))?;
        let [row, executions, violating, nanos] = fields[..] else {
            return Err(format!("a child wrote {line:?}, not four numbers"));
        };
        let row = row as usize;
        if row >= ROW_LABELS.len() {
            return Err(format!("a child wrote {line:?}: there is no row {row}"));
        }
        while rows.len() <= row {
            rows.push(Rounds(Vec::new()));
        }
        rows[row].0.push(Rate {
            executions: executions as usize,
            violating: violating as usize,
            elapsed: Duration::from_nanos(nanos),
        });
    }
    if rows.len() != ROW_LABELS.len() || rows.iter().any(|r| r.0.is_empty()) {
        return Err(format!(
            "a child measured {} rows, not every row",
            rows.len()
        ));
    }
    Ok(rows)
}

/// `compare --rate-rounds NAME --first-round N --rounds N`: the child's side. Measures
/// the table's rows in this process and prints each round of each row as `row
/// executions violating nanoseconds`.
pub(crate) fn print_rounds(name: &str, first: u64, rounds: u64) -> ExitCode {
    for (row, r) in measure(name, first, rounds).iter().enumerate() {
        for rate in &r.0 {
            println!(
                "{row} {} {} {}",
                rate.executions,
                rate.violating,
                rate.elapsed.as_nanos()
            );
        }
    }
    ExitCode::SUCCESS
}
