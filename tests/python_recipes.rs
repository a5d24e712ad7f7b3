//! The seed recipes written in Python (examples/python-recipes, examples/python-lock) under
//! `mcsim test` agree with the Rust models' scenarios: each program is found broken
//! exactly where its scenario expects a violation, and passes where it expects a pass,
//! with the scenario's clients, run in its surroundings (`--scenario`: its servers, its
//! faults with their budgets and keys, its latency).
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
    /// Flags over the file's settings, where the program differs from the model.
    over: &'static [&'static str],
    /// Why the program's variant or settings differ from the model's, if they do.
    note: &'static str,
}

const CASES: &[Case] = &[
    Case {
        scenario: "counter-get-set",
        program: "examples/python-recipes/counter_program.py",
        args: &["get-set", "1"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "counter-incr-add",
        program: "examples/python-recipes/counter_program.py",
        args: &["incr-add", "3"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "counter-incr-add-evict",
        program: "examples/python-recipes/counter_program.py",
        args: &["incr-add", "3"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "counter-incr-add-crash",
        program: "examples/python-recipes/counter_program.py",
        args: &["incr-retry", "3"],
        over: &[],
        note: "incr-retry: the model's client sees a crash as a failed call and goes on",
    },
    Case {
        scenario: "set-as-written",
        program: "examples/python-recipes/set_program.py",
        args: &["as-written"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "set-retry",
        program: "examples/python-recipes/set_program.py",
        args: &["retry"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "visitor-as-written",
        program: "examples/python-recipes/visitor_program.py",
        args: &[],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lookaside-as-written",
        program: "examples/python-recipes/lookaside_program.py",
        args: &["set"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lookaside-add",
        program: "examples/python-recipes/lookaside_program.py",
        args: &["add"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lookaside-lease-cas",
        program: "examples/python-recipes/lookaside_program.py",
        args: &["lease-cas"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lookaside-lease-cas-evict",
        program: "examples/python-recipes/lookaside_program.py",
        args: &["lease-cas"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lock-get-set",
        program: "examples/python-lock/lock_program.py",
        args: &["get-set"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lock-add",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lock-add-evict",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        over: &[],
        note: "",
    },
    Case {
        scenario: "lock-add-holder-pause",
        program: "examples/python-lock/lock_program.py",
        args: &["add"],
        over: &["--pause", "0.1", "--pause-ms", "6000"],
        note: "`--pause 0.1 --pause-ms 6000`: the program's lock lives 5 s, not 2, and its waiters give up after 20 tries at once, so only a second pause of 6 s, of a waiter, outlasts it",
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
        let file = root
            .join("scenarios")
            .join(format!("{}.toml", case.scenario));
        let file = file.display().to_string();
        let mut args = vec!["test", "--clients", &clients, "--executions", "300"];
        args.extend(["--scenario", &file]);
        args.extend_from_slice(case.over);
        args.extend(["--", PYTHON, &program]);
        args.extend_from_slice(case.args);
        let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got = match out.status.code() {
            Some(0) => "pass",
            Some(1) if stdout.contains("VACUOUS") => "vacuous",
            Some(1) => "fail",
            other => panic!(
                "{}: exit {other:?}: {}",
                case.scenario,
                String::from_utf8_lossy(&out.stderr)
            ),
        };
        let want = if expected == "pass" { "pass" } else { "fail" };
        let note = if case.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", case.note)
        };
        table.push_str(&format!(
            "| {} | {expected} | {got}{note} |\n",
            case.scenario
        ));
        if got != want {
            disagree.push(case.scenario);
        }
    }
    eprintln!("{table}");
    assert!(disagree.is_empty(), "disagree: {disagree:?}\n{table}");
}
