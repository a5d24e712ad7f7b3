//! The seed recipes written in Python (examples/python-recipes, examples/python-lock) under
//! `mcsim test` agree with the Rust models' scenarios: each program is found broken
//! exactly where its scenario expects a violation, and passes where it expects a pass,
//! with the scenario's clients and its kind of fault.
//!
//! Needs `/usr/bin/python3` with pymemcache (CI installs it); without it the test says so
//! and passes.

use std::path::Path;
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";

/// A Python program and the scenario it stands beside.
struct Case {
    scenario: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    /// `mcsim test` flags for the scenario's fault.
    faults: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        scenario: "counter-get-set",
        program: "examples/python-recipes/counter_program.py",
        args: &["get-set", "1"],
        faults: &[],
    },
    Case {
        scenario: "counter-incr-add",
        program: "examples/python-recipes/counter_program.py",
        args: &["incr-add", "3"],
        faults: &[],
    },
    Case {
        scenario: "counter-incr-add-evict",
        program: "examples/python-recipes/counter_program.py",
        args: &["incr-add", "3"],
        faults: &["--evict", "0.05"],
    },
    Case {
        scenario: "set-as-written",
        program: "examples/python-recipes/set_program.py",
        args: &["as-written"],
        faults: &[],
    },
    Case {
        scenario: "set-retry",
        program: "examples/python-recipes/set_program.py",
        args: &["retry"],
        faults: &[],
    },
    Case {
        scenario: "visitor-as-written",
        program: "examples/python-recipes/visitor_program.py",
        args: &[],
        faults: &[],
    },
    Case {
        scenario: "lock-get-set",
        program: "examples/python-lock/lock_program.py",
        args: &["get-set"],
        faults: &[],
    },
    Case {
        scenario: "lock-add",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        faults: &[],
    },
    Case {
        scenario: "lock-add-evict",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        faults: &["--evict", "0.05"],
    },
    Case {
        scenario: "lock-add-holder-pause",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        faults: &["--pause", "0.1", "--pause-ms", "6000"],
    },
];

/// A field `name = value` of a scenario file's text (the first one).
fn field<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix('='))
        .unwrap_or_else(|| panic!("no {name} in the scenario"))
        .trim()
        .trim_matches('"')
}

#[test]
fn the_python_seed_recipes_agree_with_the_rust_scenarios() {
    let ok = Command::new(PYTHON)
        .args(["-c", "import pymemcache"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: {PYTHON} has no pymemcache");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut table = String::from(
        "| scenario | Rust model expects | Python program under mcsim test |\n|---|---|---|\n",
    );
    let mut disagree = Vec::new();
    for case in CASES {
        let text = std::fs::read_to_string(
            root.join("scenarios")
                .join(format!("{}.toml", case.scenario)),
        )
        .unwrap();
        let expected = field(&text, "verdict");
        // Eight clients for the add lock would make each run long; three show the same.
        let clients = field(&text, "clients")
            .parse::<usize>()
            .unwrap()
            .min(3)
            .to_string();
        let program = root.join(case.program).display().to_string();
        let mut args = vec!["test", "--clients", &clients, "--executions", "300"];
        args.extend_from_slice(case.faults);
        args.extend(["--", PYTHON, &program]);
        args.extend_from_slice(case.args);
        let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .args(&args)
            .output()
            .unwrap();
        let got = match out.status.code() {
            Some(0) => "pass",
            Some(1) => "fail",
            other => panic!(
                "{}: exit {other:?}: {}",
                case.scenario,
                String::from_utf8_lossy(&out.stderr)
            ),
        };
        let want = if expected == "pass" { "pass" } else { "fail" };
        table.push_str(&format!("| {} | {expected} | {got} |\n", case.scenario));
        if got != want {
            disagree.push(case.scenario);
        }
    }
    eprintln!("{table}");
    assert!(disagree.is_empty(), "disagree: {disagree:?}\n{table}");
}
