//! Faults of `mcsim test` as a program's participants meet them: a pause holds only the
//! paused participant while the others go on in virtual time; lost messages, a crash and
//! skipped seconds meet stock clients as a real memcached's would.
//!
//! The programs need `/usr/bin/python3` with pymemcache (CI installs it); without it
//! these tests say so and pass.

mod common;

use common::{PYTHON, example, python_with, replay_of, stdout, with_stderr};
use std::process::Command;

/// `mcsim test ARGS -- python3 tests/programs/PROGRAM`, with the Python helper on its path.
fn test_program(args: &[&str], program: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .arg("test")
        .args(args)
        .args(["--", PYTHON, &example(&format!("tests/programs/{program}"))])
        .env("PYTHONPATH", example("helpers/python"))
        .output()
        .unwrap();
    (out.status.code(), with_stderr(&out))
}

#[test]
fn a_paused_participant_waits_alone_and_the_others_keep_their_cadence() {
    if !python_with("pymemcache") {
        return;
    }
    // w0 sleeps 0.5 s twelve times while w1 is paused 6 s before its first command: w0's
    // wakes stay half a second apart and w1's command runs after 6 s (the program
    // checks both and fails the run otherwise), in every order the strategy picks.
    let (code, out) = test_program(
        &["--clients", "2", "--executions", "30"],
        "pause_cadence.py",
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("passed: 30 runs"), "{out}");
    // The timeline names the paused participant, when its pause began and when its
    // command ran.
    let (code, out) = test_program(&["--clients", "2", "--replay", "mc1:0"], "pause_cadence.py");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "0 0.000000  w1  FAULT pause w1 for 6000 ms (its command waits until 6.000000; the others go on)"
        ),
        "{out}"
    );
    assert!(
        out.contains("6.000001  w1  set k \"w1\" -> STORED"),
        "{out}"
    );
    assert!(out.contains("5.500011  w0  get k -> MISS"), "{out}");
}

/// `mcsim test ARGS -- CMD…` twice: the exit code and the output, which must be the same.
fn twice(args: &[&str], command: &[&str]) -> (Option<i32>, String) {
    let once = || {
        let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .arg("test")
            .args(args)
            .arg("--")
            .args(command)
            .env("PYTHONPATH", example("helpers/python"))
            .output()
            .unwrap();
        (out.status.code(), stdout(&out))
    };
    let first = once();
    let second = once();
    assert_eq!(first, second, "the same command gave another output");
    first
}

#[test]
fn a_lost_reply_breaks_the_connection_and_the_client_that_reconnects_stays_its_participant() {
    if !python_with("pymemcache") {
        return;
    }
    let program = example("examples/python-recipes/counter_program.py");
    let faults = ["--clients", "3", "--executions", "100", "--timeout", "10"];
    // pymemcache: the counter that makes an increment again after an error counts one
    // twice when the increment had reached the server; the thread's new connection takes
    // its place in the schedule, and the same command prints the same output.
    let args = [&faults[..], &["--lose-reply", "0.02"]].concat();
    let (code, out) = twice(&args, &[PYTHON, &program, "incr-retry", "3"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("increments counted twice"), "{out}");
    assert!(
        out.contains("(reply lost: FAULT; the connection breaks)"),
        "{out}"
    );
    assert!(out.contains("reconnected: connection c"), "{out}");
    // The counter that gives up on an error fails too, named with the thread and its
    // exception.
    let (code, out) = twice(&args, &[PYTHON, &program, "incr-add", "3"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("raised MemcacheUnexpectedCloseError"), "{out}");
    // A lost request never reached the server: making it again is right.
    let args = [&faults[..], &["--lose-request", "0.05"]].concat();
    let (code, out) = twice(&args, &[PYTHON, &program, "incr-retry", "3"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(" injected, "), "{out}");
    // pylibmc (libmemcached) in both protocols reconnects on its own.
    if python_with("pylibmc") {
        let program = example("tests/programs/pylibmc_retry_counter.py");
        let args = [&faults[..], &["--lose-reply", "0.05"]].concat();
        for protocol in ["text", "binary"] {
            let (code, out) = twice(&args, &[PYTHON, &program, protocol]);
            assert_eq!(code, Some(1), "{protocol}:\n{out}");
            assert!(out.contains("the counter holds 7, 6 increments"), "{out}");
            assert!(out.contains("reconnected: connection c"), "{out}");
        }
    }
}

#[test]
fn a_php_counter_under_lost_replies_gets_a_verdict_in_both_protocols() {
    if !php_with_memcached() {
        eprintln!("skipped: no php with php-memcached");
        return;
    }
    let program = example("examples/php-recipes/counter.php");
    let args = [
        "--clients",
        "3",
        "--executions",
        "100",
        "--timeout",
        "10",
        "--lose-reply",
        "0.02",
    ];
    for protocol in ["text", "binary"] {
        let (code, out) = twice(&args, &["php", &program, "incr-retry", protocol]);
        assert_eq!(code, Some(1), "{protocol}:\n{out}");
        assert!(out.contains("increments counted twice"), "{out}");
        assert!(out.contains("reconnected: connection c"), "{out}");
        let (code, out) = twice(&args, &["php", &program, "incr-add", protocol]);
        assert_eq!(code, Some(1), "{protocol}:\n{out}");
        assert!(out.contains("lost increments"), "{out}");
    }
}

#[test]
fn a_program_that_exits_non_zero_fails_with_its_status_in_words_and_replays() {
    if !python_with("pymemcache") {
        return;
    }
    let (code, out) = test_program(&["--clients", "2"], "exit_after_threads.py");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("FAILED: run 0 of `")
            && out
                .lines()
                .next()
                .unwrap()
                .ends_with("): the program exited 3"),
        "{out}"
    );
    assert!(out.contains("# shrunk"), "{out}");
    // An exit at a moment of real time, its threads running: the same verdict every
    // time, never NOT DETERMINISTIC nor a participant's sleep refused as it ends. (Each
    // run lasts its moment of real time: shrinking is cut to a few runs.)
    for _ in 0..3 {
        let (code, out) = test_program(
            &["--clients", "3", "--executions", "5", "--shrink-runs", "10"],
            "exit_at_a_moment.py",
        );
        assert_eq!(code, Some(1), "{out}");
        // (with who still ran, when the servers saw it before the connections closed)
        assert!(
            out.lines()
                .next()
                .unwrap()
                .contains("): the program exited 3"),
            "{out}"
        );
    }
}

/// A server that crashes and restarts empty, and one whose clock skips seconds, as a
/// stock client meets them: the `add` lock whose client tries again after an error is
/// found broken under each (its key lost with the crash; its TTL ended under a holder
/// that kept 4.5 s of 5), the same output twice, and each failure replays from both of
/// its lines. Without the faults the same program passes.
#[test]
fn a_crash_or_a_skipped_second_breaks_the_add_lock_and_the_failure_replays() {
    if !python_with("pymemcache") {
        return;
    }
    let program = example("tests/programs/retry_add_lock.py");
    for (fault, hold, seen) in [
        (
            ["--crash", "0.05"],
            "0",
            "FAULT server 0 crashed before this command (restarted empty): its connections close",
        ),
        (
            ["--skip-second", "0.2"],
            "3.9",
            "FAULT server 0's clock skipped a second",
        ),
    ] {
        let args = [&["--clients", "2"][..], &fault[..]].concat();
        let (code, out) = twice(&args, &[PYTHON, &program, hold]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("exclusion of section broken"), "{out}");
        assert!(out.contains(seen), "{out}");
        assert!(
            out.contains(&format!(" {} {} ", fault[0], fault[1])),
            "{out}"
        );
        for which in ["shrunk", "as found"] {
            let again = Command::new(env!("CARGO_BIN_EXE_mcsim"))
                .args(replay_of(&out, which))
                .env("PYTHONPATH", example("helpers/python"))
                .output()
                .unwrap();
            let replayed = stdout(&again);
            assert_eq!(again.status.code(), Some(1), "{which}:\n{replayed}");
            assert!(!replayed.contains("TRACE DIFFERS"), "{replayed}");
        }
    }
    let (code, out) = twice(
        &["--clients", "2", "--executions", "20"],
        &[PYTHON, &program, "3.9"],
    );
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn a_ttl_edge_only_some_tick_phases_reach_is_found_and_its_phase_replays() {
    if !python_with("pymemcache") {
        return;
    }
    // Holding 4.5 s of a 5 s TTL: memcached's whole-second clock ends the TTL between 4
    // and 5 s after the `add`, by where in its second the clock ticks. Each run draws the
    // servers' tick phase from its seed; the replay line names it (`mc1:@…`).
    let program = example("tests/programs/retry_add_lock.py");
    let (code, out) = twice(
        &["--clients", "2", "--executions", "40"],
        &[PYTHON, &program, "4.5"],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
    for which in ["shrunk", "as found"] {
        let replay = replay_of(&out, which);
        let schedule = replay.iter().find(|a| a.starts_with("mc1:")).unwrap();
        assert!(schedule.starts_with("mc1:@"), "{which}: {schedule}");
        let again = Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .args(&replay)
            .env("PYTHONPATH", example("helpers/python"))
            .output()
            .unwrap();
        let replayed = stdout(&again);
        assert_eq!(again.status.code(), Some(1), "{which}:\n{replayed}");
    }
}

/// `--exhaustive` searches the tick-phase classes the runs reveal, one search each: the
/// hold of 4.5 s that passes at phase 0 is found broken at another class, and its replay
/// line names that phase; 3.9 s passes at every class, and the proof names them.
#[test]
fn the_exhaustive_search_covers_every_tick_phase_class() {
    if !python_with("pymemcache") {
        return;
    }
    let search = |hold: &str| {
        let args = ["--clients", "2", "--exhaustive", "--max-preemptions", "0"];
        let program = format!("retry_add_lock.py {hold}");
        let mut o = Command::new(env!("CARGO_BIN_EXE_mcsim"));
        o.arg("test").args(args).args(["--", PYTHON]);
        o.arg(example("tests/programs/retry_add_lock.py")).arg(hold);
        let o = o
            .env("PYTHONPATH", example("helpers/python"))
            .output()
            .unwrap();
        (o.status.code(), stdout(&o), program)
    };
    let (code, out, _) = search("4.5");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("strategy dfs") && out.contains("exclusion of section broken"),
        "{out}"
    );
    let replay = replay_of(&out, "as found");
    let schedule = replay.iter().find(|a| a.starts_with("mc1:")).unwrap();
    assert!(
        schedule.starts_with("mc1:@") && !schedule.starts_with("mc1:@0."),
        "{schedule}"
    );
    let (code, out, _) = search("3.9");
    assert_eq!(code, Some(0), "{out}");
    let classes = out.split("; all ").nth(1).unwrap_or_default();
    let n: usize = classes
        .split(' ')
        .next()
        .unwrap_or_default()
        .parse()
        .unwrap_or(0);
    assert!(
        n > 1 && classes.contains(" tick-phase classes (phases 0, "),
        "{out}"
    );
}

/// A program that stores a random value is not deterministic under a fixed schedule:
/// its failing run is replayed, gives another trace, and is reported as such (exit 2,
/// the first line that differs shown from both runs), never judged.
#[test]
fn a_program_not_deterministic_is_said_so_and_not_judged() {
    if !python_with("pymemcache") {
        return;
    }
    let (code, out) = test_program(&["--clients", "2"], "random_value.py");
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.starts_with("NOT DETERMINISTIC: run 0 (seed 0) of `"),
        "{out}"
    );
    assert!(out.contains("line 1 differs; the first run:"), "{out}");
    assert!(out.contains("  its replay:"), "{out}");
    assert!(!out.contains("FAILED"), "{out}");
}

/// A program deterministic for its first two runs only: its failing run replays the
/// same, but the runs shrinking makes do not, and the shrunk run's replay shows it. It
/// is said so on the standard output, exit 2 as for any program not deterministic,
/// never judged nor an error.
#[test]
fn a_program_that_drifts_while_shrunk_is_said_not_deterministic() {
    if !python_with("pymemcache") {
        return;
    }
    let counter = std::env::temp_dir().join(format!("mcsim-drifts-{}", std::process::id()));
    let _ = std::fs::remove_file(&counter);
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(["test", "--clients", "2", "--shrink-runs", "5", "--", PYTHON])
        .arg(example("tests/programs/drifts_later.py"))
        .arg(&counter)
        .env("PYTHONPATH", example("helpers/python"))
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&counter);
    let (code, out) = (out.status.code(), with_stderr(&out));
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.starts_with("NOT DETERMINISTIC: run 0 (seed 0) of `")
            && out.contains("a shrunk run of it gave another trace"),
        "{out}"
    );
    assert!(out.contains("line 1 differs; the first run:"), "{out}");
    assert!(!out.contains("FAILED") && !out.contains("error"), "{out}");
}

/// A setup client's `version` and `quit`, sent at a moment of real time while the
/// participants run, change nothing they see: not traced and taking no instant, they
/// leave the failing run's replay the same trace wherever they land (libmemcached's
/// binary QUIT of a setup client once made a deterministic program NOT DETERMINISTIC).
#[test]
fn a_setup_client_quitting_at_any_moment_leaves_the_run_deterministic() {
    if !python_with("pymemcache") {
        return;
    }
    for _ in 0..4 {
        let (code, out) = test_program(&["--clients", "2"], "setup_quits_late.py");
        assert_eq!(code, Some(1), "{out}");
        assert!(out.starts_with("FAILED: run 0 of `"), "{out}");
        assert!(
            !out.contains("  version -> ") && !out.contains("  quit -> "),
            "{out}"
        );
    }
}

#[test]
fn a_leader_lease_under_pauses_and_lost_replies_gets_a_verdict_in_python_and_php() {
    let pause = [
        "--clients",
        "3",
        "--executions",
        "60",
        "--pause",
        "0.02",
        "--pause-ms",
        "6000",
    ];
    let lose = [
        "--clients",
        "3",
        "--executions",
        "100",
        "--lose-reply",
        "0.02",
    ];
    let mut programs: Vec<Vec<String>> = Vec::new();
    if python_with("pymemcache") {
        let program = example("examples/python-recipes/lease_program.py");
        programs.push(vec![PYTHON.into(), program]);
    }
    if php_with_memcached() {
        let program = example("examples/php-recipes/lease.php");
        programs.push(vec!["php".into(), program]);
    }
    for program in programs {
        let with = |variant: &str| -> Vec<String> {
            let mut c = program.clone();
            c.push(variant.into());
            if c[0] == "php" {
                c.push("binary".into());
            }
            c
        };
        // A leader paused past its lease's TTL renews its successor's lease with `touch`,
        // and both lead.
        let touch = with("touch");
        let (code, out) = twice(&pause, &strs(&touch));
        assert_eq!(code, Some(1), "{touch:?}:\n{out}");
        assert!(out.contains("exclusion of leader broken"), "{out}");
        assert!(out.contains("mcsim test"), "the replay line: {out}");
        // The lease that renews only its own and counts its time from before it asked
        // holds under pauses and under lost replies (its reconnects included).
        let checked = with("checked");
        let (code, out) = twice(&pause, &strs(&checked));
        assert_eq!(code, Some(0), "{checked:?}:\n{out}");
        assert!(out.contains(" injected, "), "{out}");
        let (code, out) = twice(&lose, &strs(&checked));
        assert_eq!(code, Some(0), "{checked:?}:\n{out}");
        assert!(out.contains(" injected, "), "{out}");
    }
}

/// True if `php` runs with the memcached extension (CI installs it).
fn php_with_memcached() -> bool {
    Command::new("php")
        .args(["-r", "exit(extension_loaded('memcached') ? 0 : 1);"])
        .status()
        .is_ok_and(|s| s.success())
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
