//! What the tests of `mcsim test` share: running mcsim and Python, and reading the
//! replay lines a failure prints.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub const PYTHON: &str = "/usr/bin/python3";

/// The path of an example file of the repository.
pub fn example(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

/// True if the Python program can run here.
pub fn python_with(module: &str) -> bool {
    let ok = Command::new(PYTHON)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: {PYTHON} has no {module}");
    }
    ok
}

pub fn mcsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(args)
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard output, then standard error under a rule when there is any: what an assertion
/// shows when a run ended otherwise than expected.
pub fn with_stderr(o: &Output) -> String {
    let mut text = stdout(o);
    if !o.stderr.is_empty() {
        text.push_str("\n--- stderr ---\n");
        text.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    text
}

/// The replay line a failure printed for `which` (`shrunk` or `as found`), as arguments.
pub fn replay_of(out: &str, which: &str) -> Vec<String> {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("mcsim test ") && l.ends_with(&format!("# {which}")))
        .unwrap_or_else(|| panic!("no replay line in:\n{out}"));
    let line = line.rsplit_once('#').unwrap().0.trim_end();
    let (schedule_start, schedule_end) = (line.find('\'').unwrap(), line.rfind('\'').unwrap());
    let schedule = &line[schedule_start + 1..schedule_end];
    let mut args: Vec<String> = line[..schedule_start]
        .split_whitespace()
        .skip(1)
        .map(String::from)
        .collect();
    args.push(schedule.to_string());
    args.extend(
        line[schedule_end + 1..]
            .split_whitespace()
            .map(String::from),
    );
    args
}

/// The shrunk failure's replay line, as arguments.
pub fn replay_args(out: &str) -> Vec<String> {
    replay_of(out, "shrunk")
}
