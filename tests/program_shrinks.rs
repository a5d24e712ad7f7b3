//! A program under `mcsim test` shrinks as small as `mcsim run` shrinks the same recipe's
//! scenario: the same clients, preemptions and commands up to the failure, though each
//! candidate is a run of the real program and the engine's a run of its model (three
//! recipes: the `get`+`set` counter and lock, the look-aside cache's stale set).
//!
//! The programs need `/usr/bin/python3` with pymemcache (CI installs it); without it
//! these tests say so and pass.

mod common;

use common::{PYTHON, example, mcsim, python_with, stdout, with_stderr};
use std::process::Command;

/// How large a shrunk failure is: clients, commands (calls) up to the failure,
/// preemptions.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
struct Size {
    clients: u64,
    commands: u64,
    preemptions: u64,
}

/// `mcsim run SCENARIO`'s shrunk counterexample, from its `shrunk to` line (`2 clients,
/// 4 steps, 4 calls, 1 preemption, 0 faults`).
fn engine(scenario: &str) -> Size {
    let out = mcsim(&["run", &example(scenario)]);
    let out = stdout(&out);
    let line = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("shrunk to"))
        .unwrap_or_else(|| panic!("no shrunk counterexample in:\n{out}"));
    let count = |unit: &str| -> u64 {
        line.split(',')
            .map(str::trim)
            .find_map(|part| {
                part.strip_suffix(unit)
                    .or(part.strip_suffix(&format!("{unit}s")))
            })
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {unit} in {line:?}"))
    };
    Size {
        clients: count(" client"),
        commands: count(" call"),
        preemptions: count(" preemption"),
    }
}

/// `mcsim test --clients CLIENTS -- python3 PROGRAM ARGS…`'s shrunk failing run, from
/// its JSON report.
fn program(clients: &str, program: &str, args: &[&str]) -> Size {
    let json = std::env::temp_dir().join(format!(
        "mcsim-shrinks-{}-{}.json",
        std::process::id(),
        program.replace('/', "-")
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(["test", "--clients", clients, "--json"])
        .arg(&json)
        .args(["--", PYTHON, &example(program)])
        .args(args)
        .env("PYTHONPATH", example("helpers/python"))
        .output()
        .unwrap();
    let text = with_stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let shrunk = &report["failure"]["shrunk"];
    let field = |name: &str| {
        shrunk[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no {name} in {shrunk}:\n{text}"))
    };
    Size {
        clients: field("clients"),
        commands: field("commands_to_failure"),
        preemptions: field("preemptions"),
    }
}

/// The scenario's counterexample shrinks to `smallest`, and the program's failing run
/// to the same.
fn shrink_alike(scenario: &str, smallest: Size, clients: &str, program_path: &str, args: &[&str]) {
    let engine = engine(scenario);
    assert_eq!(engine, smallest, "{scenario}");
    assert_eq!(
        program(clients, program_path, args),
        engine,
        "{program_path}"
    );
}

/// Two clients, 4 commands up to the failure, 1 preemption.
const TWO_READS_THEN_TWO_WRITES: Size = Size {
    clients: 2,
    commands: 4,
    preemptions: 1,
};

/// Read, add one, write back, three clients: both shrink to two clients that read the
/// counter before either writes.
#[test]
fn the_get_set_counter_shrinks_as_its_scenario_does() {
    if python_with("pymemcache") {
        shrink_alike(
            "scenarios/counter-get-set.toml",
            TWO_READS_THEN_TWO_WRITES,
            "3",
            "examples/python-recipes/counter_program.py",
            &["get-set", "1"],
        );
    }
}

/// The get+set lock, two clients holding it 5 ms twice: both shrink to the two reads
/// that see it free, then the two sets, though the program runs on past the failure to
/// its end.
#[test]
fn the_get_set_lock_shrinks_as_its_scenario_does() {
    if python_with("pymemcache") {
        shrink_alike(
            "scenarios/lock-get-set.toml",
            TWO_READS_THEN_TWO_WRITES,
            "2",
            "tests/programs/get_set_lock.py",
            &[],
        );
    }
}

/// The look-aside cache filled with `set`: both shrink to a reader and the writer, with
/// no preemption (the database read is slower than the two writes): the reader's miss,
/// the writer's two deletes, the late fill, a hit, and the last read's hit on the old
/// version (6 commands).
#[test]
fn the_look_aside_stale_set_shrinks_as_its_scenario_does() {
    if python_with("pymemcache") {
        shrink_alike(
            "scenarios/lookaside-as-written.toml",
            Size {
                clients: 2,
                commands: 6,
                preemptions: 0,
            },
            "3",
            "examples/python-recipes/lookaside_program.py",
            &["set"],
        );
    }
}
