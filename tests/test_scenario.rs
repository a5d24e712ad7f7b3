//! `mcsim test --scenario FILE`: a program run in what a scenario file sets around its
//! recipe (servers, faults with budgets and keys, latency), the faults that bit counted,
//! and a file the servers cannot honour refused at its line.
//!
//! The programs need `/usr/bin/python3` with pymemcache (CI installs it); without it
//! these tests say so and pass. The errors need no Python.

mod common;

use common::{PYTHON, example, python_with, replay_of, stdout};
use std::path::PathBuf;
use std::process::Command;

/// A scenario file with `text`, in a folder of its own under the target directory.
fn scenario(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test_scenario");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `mcsim test ARGS -- python3 tests/programs/PROGRAM ARGS`: the exit code and the output
/// (stdout, then stderr).
fn run(args: &[&str], program: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .arg("test")
        .args(args)
        .arg("--")
        .arg(PYTHON)
        .arg(example(&format!("tests/programs/{}", program[0])))
        .args(&program[1..])
        .env("PYTHONPATH", example("helpers/python"))
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

#[test]
fn a_file_the_servers_cannot_honour_is_refused_at_its_line() {
    let cases = [
        (
            "die",
            "clients = 2\n\n[faults]\ndie = { max = 1, probability = 0.1 }\n",
            ":4:1: field `faults.die`: a client's process dying happens in the client's own process",
        ),
        (
            "leave-alone",
            "[faults]\nleave = { max = 1, probability = 0.1 }\n",
            ":2:1: field `faults.leave`: a server leaving needs two servers or more",
        ),
        (
            "misspelt",
            "[servers]\ncont = 2\n",
            ":2:1: field `servers.cont`: unknown field `cont`",
        ),
        (
            "swept",
            "[sweep]\nparams.hold_ms = [5, 50]\n",
            ":1:1: field `sweep`: a sweep runs many points",
        ),
        (
            "bad-chance",
            "[faults]\nevict = { max = 1, probability = 2.0 }\n",
            "field `faults.evict.probability`: 2 is not a probability",
        ),
    ];
    for (name, text, want) in cases {
        let path = scenario(name, text);
        let path = path.display().to_string();
        let out = common::mcsim(&["test", "--clients", "2", "--scenario", &path, "--", "true"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{path}{want}")) || err.contains(want),
            "{name}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
    }
    // A leave given as a flag needs two servers too.
    let out = common::mcsim(&["test", "--clients", "2", "--leave", "0.1", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--leave: a server leaving needs two servers or more")
    );
}

#[test]
fn a_crash_that_keeps_the_server_down_breaks_the_add_lock_and_replays() {
    if !python_with("pymemcache") {
        return;
    }
    // One crash a run at most; the server stays down 50 ms of virtual time, each command
    // taking 100 to 500 µs: the lock's key is lost while one holds it, and the other's
    // `add` wins once the server is back.
    let path = scenario(
        "crash-down",
        "[faults]\ncrash = { max = 1, probability = 0.1 }\nrestart_after_ms = 50\n",
    );
    let path = path.display().to_string();
    let args = ["--clients", "2", "--executions", "100", "--scenario", &path];
    let (code, out) = run(&args, &["retry_add_lock.py"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with(&format!("scenario {path}: 1 server, each command 100 to 500 µs, faults crash (at most 1 a run, chance 0.1)")), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
    let replay = replay_of(&out, "shrunk");
    assert!(replay.iter().any(|a| a == "--scenario"), "{replay:?}");
    let replayed = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(&replay)
        .env("PYTHONPATH", example("helpers/python"))
        .output()
        .unwrap();
    let text = stdout(&replayed);
    assert_eq!(replayed.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAULT server 0 crashed before this command (restarts empty at"),
        "{text}"
    );
    assert!(text.contains("--  server 0 restarted empty"), "{text}");
    assert!(
        text.contains("connection refused: server 0 crashed and is down until"),
        "{text}"
    );
}

#[test]
fn a_fault_that_never_bites_leaves_the_pass_vacuous() {
    if !python_with("pymemcache") {
        return;
    }
    // Evictions aimed at a key the lock never uses never fire: the pass shows nothing.
    let path = scenario(
        "evict-elsewhere",
        "[faults]\nevict = { max = 1, probability = 0.5, keys = [\"other\"] }\n",
    );
    let path = path.display().to_string();
    let args = ["--clients", "2", "--executions", "5", "--scenario", &path];
    let (code, out) = run(&args, &["retry_add_lock.py"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("VACUOUS: 5 runs of"), "{out}");
    assert!(out.contains("no evict fault bit in them"), "{out}");
    assert!(out.contains("faults: evict 0 injected, 0 bit"), "{out}");
    // Aimed at the lock's key, they fire, bite and break it.
    let path = scenario(
        "evict-lock",
        "[faults]\nevict = { max = 1, probability = 0.5, keys = [\"lock\"] }\n",
    );
    let path = path.display().to_string();
    let args = ["--clients", "2", "--executions", "50", "--scenario", &path];
    let (code, out) = run(&args, &["retry_add_lock.py", "0.1"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAULT evict lock from server 0"), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
}

#[test]
fn a_lock_whose_server_leaves_is_taken_twice_by_a_client_that_drops_dead_servers() {
    if !python_with("pymemcache") {
        return;
    }
    // The model's scenario, as it stands: three servers, one leave a run at most, back
    // after 5 s. The program's client (pymemcache's HashClient) has a connection to each
    // server, all of them the participant's; when the lock's server leaves, a waiter
    // meets the closed connection, then a refused one, drops the server, and takes the
    // lock on the server `lock_x` maps to next, while the holder is inside.
    let file = example("scenarios/lock-add-node-leave.toml");
    let args = ["--clients", "3", "--executions", "200", "--scenario", &file];
    let (code, out) = run(&args, &["hash_add_lock.py"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with(&format!("scenario {file}: 3 servers")),
        "{out}"
    );
    assert!(out.contains("exclusion of section broken"), "{out}");
    assert!(out.contains("left before this command (back at"), "{out}");
    assert!(out.contains("connection refused: server"), "{out}");
    for which in ["shrunk", "as found"] {
        let replayed = Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .args(replay_of(&out, which))
            .env("PYTHONPATH", example("helpers/python"))
            .output()
            .unwrap();
        let text = stdout(&replayed);
        assert_eq!(replayed.status.code(), Some(1), "{which}: {text}");
        assert!(
            text.contains("exclusion of section broken"),
            "{which}: {text}"
        );
    }
}
