//! `mcsim test -- CMD` on a Python program (examples/python-lock/lock_program.py): the
//! get+set lock found broken in every client and protocol, its printed replay line giving
//! the same trace again; the `add` lock passing; bad input a clear error with exit 2.
//!
//! The programs need `/usr/bin/python3` with pymemcache and pylibmc, and `php` with
//! php-memcached (CI installs them); without them these tests say so and pass.

mod common;

use common::{PYTHON, example, mcsim, python_with, replay_args, replay_of, stdout};
use std::process::Command;

fn program() -> String {
    example("examples/python-lock/lock_program.py")
}

#[test]
fn the_get_set_lock_is_found_broken_in_every_client_and_replays_from_its_line() {
    if !python_with("pymemcache") || !python_with("pylibmc") {
        return;
    }
    let program = program();
    for client in ["pymemcache", "pylibmc", "pylibmc-binary"] {
        let found = mcsim(&[
            "test",
            "--clients",
            "3",
            "--executions",
            "50",
            "--",
            PYTHON,
            &program,
            "get-set",
            client,
        ]);
        let out = stdout(&found);
        assert_eq!(found.status.code(), Some(1), "{client}:\n{out}");
        // The program's own check (its exit status) and mcsim's, from the sections the
        // threads said they entered and left.
        assert!(out.contains("exclusion broken"), "{client}:\n{out}");
        assert!(
            out.contains("exclusion of section broken: t"),
            "{client}:\n{out}"
        );
        assert!(out.contains("  ENTER section"), "{out}");
        // Shrunk to the two threads and the few preemptions the failure needs: both read
        // the lock free before either takes it, and their log entries interleave.
        assert!(out.contains("to 2 clients, "), "{client}:\n{out}");
        assert!(out.contains("  t0  ") && !out.contains("  t2  "), "{out}");
        let shrunk: usize = out
            .split(" preemption")
            .next()
            .and_then(|head| head.rsplit(", ").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no shrunk preemptions in:\n{out}"));
        assert!(shrunk <= 3, "{client}: {shrunk} preemptions left:\n{out}");
        for which in ["shrunk", "as found"] {
            let args = replay_of(&out, which);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            for _ in 0..5 {
                let again = mcsim(&args);
                let replayed = stdout(&again);
                assert_eq!(
                    again.status.code(),
                    Some(1),
                    "{client} {which}:\n{replayed}"
                );
                assert!(!replayed.contains("TRACE DIFFERS"), "{replayed}");
            }
        }
    }
}

#[test]
fn the_add_lock_passes_every_run() {
    if !python_with("pymemcache") {
        return;
    }
    let program = program();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (json, junit) = (dir.join("add-pass.json"), dir.join("add-pass.xml"));
    let (json_path, junit_path) = (json.display().to_string(), junit.display().to_string());
    let passed = mcsim(&[
        "test",
        "--clients",
        "3",
        "--executions",
        "40",
        "--json",
        &json_path,
        "--junit",
        &junit_path,
        "--",
        PYTHON,
        &program,
        "add",
    ]);
    let out = stdout(&passed);
    assert_eq!(passed.status.code(), Some(0), "{out}");
    assert!(out.starts_with("passed: 40 runs"), "{out}");
    // What the runs covered, in the text, the JSON and the JUnit report alike: the orders
    // of conflicting command pairs seen, out of two for each pair seen.
    let covered = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("covered: "))
        .unwrap_or_else(|| panic!("no coverage line: {out}"));
    assert!(
        covered.contains(" orders of conflicting command pairs ("),
        "{covered}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (seen, possible) = (
        report["coverage"]["orders_seen"].as_u64().unwrap(),
        report["coverage"]["orders_possible"].as_u64().unwrap(),
    );
    assert!(0 < seen && seen <= possible, "{report}");
    assert!(
        covered.starts_with(&format!("{seen} of {possible} ")),
        "{covered}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(covered), "{xml}");
}

#[test]
fn the_add_lock_breaks_when_its_key_is_evicted_and_the_json_says_so() {
    if !python_with("pymemcache") {
        return;
    }
    let program = program();
    let json = std::env::temp_dir().join(format!("mcsim-test-{}.json", std::process::id()));
    let json_path = json.display().to_string();
    let junit = json.with_extension("xml");
    let junit_path = junit.display().to_string();
    let found = mcsim(&[
        "test",
        "--clients",
        "3",
        "--executions",
        "300",
        "--evict",
        "0.05",
        "--json",
        &json_path,
        "--junit",
        &junit_path,
        "--",
        PYTHON,
        &program,
        "add",
    ]);
    let out = stdout(&found);
    assert_eq!(found.status.code(), Some(1), "{out}");
    assert!(out.contains("FAULT evict lock_x"), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
    // The replay line carries the run's seed and the fault policy.
    let args = replay_args(&out);
    assert!(args.iter().any(|a| a == "--evict"), "{args:?}");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(mcsim(&args).status.code(), Some(1));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(report["verdict"], "fail");
    assert!(report["faults_injected"].as_u64().unwrap() >= 1);
    let replay = report["failure"]["replay"].as_str().unwrap();
    assert!(out.contains(replay), "{replay}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    std::fs::remove_file(&junit).unwrap();
    assert!(xml.contains(r#"tests="1" failures="1""#), "{xml}");
    assert!(
        xml.contains("<failure message=\"exclusion of section broken"),
        "{xml}"
    );
    assert!(
        xml.contains("--replay") && xml.contains("# shrunk"),
        "{xml}"
    );
}

#[test]
fn the_exhaustive_search_proves_the_add_lock_within_its_bound_and_finds_the_get_set_race() {
    if !python_with("pymemcache") {
        return;
    }
    let program = program();
    let search = |lock: &str, preemptions: &str, reduction: bool| {
        let mut args = vec!["test", "--clients", "2", "--exhaustive"];
        if !reduction {
            args.push("--no-reduction");
        }
        args.extend([
            "--max-preemptions",
            preemptions,
            "--",
            PYTHON,
            &program,
            lock,
        ]);
        let o = mcsim(&args);
        (o.status.code(), stdout(&o))
    };
    let runs = |out: &str| -> u64 {
        let after = out.split(" exited 0: ").nth(1).unwrap_or_default();
        let runs = after.split(" runs").next().unwrap_or_default();
        runs.parse().unwrap_or_else(|_| panic!("{out}"))
    };
    let covered = |out: &str| out.split("covered: ").nth(1).map(str::to_string);
    let (code, out) = search("add", "0", true);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("passed: every schedule of `")
            && out.contains("with at most 0 preemptions exited 0: ")
            && out.contains("(reduction: sleep sets, "),
        "{out}"
    );
    let (code, apart) = search("add", "0", false);
    assert_eq!(code, Some(0), "{apart}");
    assert!(
        apart.contains("(no reduction (--no-reduction): "),
        "{apart}"
    );
    assert_eq!(covered(&out), covered(&apart));
    // Threads on keys of their own: every order gives the same outcome, so the reduced
    // search runs one and cuts the others short.
    let counters = |reduction: bool| {
        let mut o = Command::new(env!("CARGO_BIN_EXE_mcsim"));
        o.args(["test", "--clients", "2", "--exhaustive"]);
        if !reduction {
            o.arg("--no-reduction");
        }
        let program = example("tests/programs/own_counters.py");
        let o = (o.args(["--", PYTHON, &program]))
            .env("PYTHONPATH", example("helpers/python"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
        stdout(&o)
    };
    let (reduced, apart) = (counters(true), counters(false));
    assert!(runs(&reduced) < runs(&apart) / 4, "{reduced}\n{apart}");
    let cut = runs(&reduced) - 1;
    assert!(
        reduced.contains(&format!(
            "(reduction: sleep sets, {cut} runs cut short as covered by others; "
        )),
        "{reduced}"
    );
    // The get+set race needs two preemptions: within one, every schedule passes; within
    // two, the reduced search finds it (one that took a step's orders as covered where
    // the bound had cut them missed it).
    let (code, out) = search("get-set", "1", true);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = search("get-set", "2", true);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("strategy dfs") && out.contains("exclusion of section broken"),
        "{out}"
    );
    // The add lock holds its exclusion within every schedule, but not when a pause
    // outlasts its 5 s TTL.
    let paused = mcsim(&[
        "test",
        "--clients",
        "3",
        "--pause",
        "0.1",
        "--pause-ms",
        "6000",
        "--",
        PYTHON,
        &program,
        "add",
    ]);
    let out = stdout(&paused);
    assert_eq!(paused.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAULT pause t") && out.contains("exclusion of section broken"),
        "{out}"
    );
    let args = replay_args(&out);
    assert!(args.iter().any(|a| a == "--pause-ms"), "{args:?}");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(mcsim(&args).status.code(), Some(1));
    // A cap that stops the search is said to stop it.
    let capped = mcsim(&[
        "test",
        "--clients",
        "2",
        "--exhaustive",
        "--executions",
        "3",
        "--",
        PYTHON,
        &program,
        "add",
    ]);
    assert!(
        stdout(&capped).starts_with("passed, not a proof: 3 runs"),
        "{}",
        stdout(&capped)
    );
}

#[test]
fn all_counts_the_failing_runs_with_an_interval() {
    if !python_with("pymemcache") {
        return;
    }
    let program = example("examples/python-recipes/counter_program.py");
    let o = mcsim(&[
        "test",
        "--clients",
        "3",
        "--executions",
        "40",
        "--all",
        "--",
        PYTHON,
        &program,
        "get-set",
        "1",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("lost increments"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("failed in "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(" of 40 runs: rate ") && line.contains("95% interval ["),
        "{line}"
    );
}

#[test]
fn a_replay_that_gives_another_trace_says_so() {
    if !python_with("pymemcache") {
        return;
    }
    let program = program();
    let found = mcsim(&["test", "--clients", "3", "--", PYTHON, &program, "get-set"]);
    let args = replay_args(&stdout(&found));
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    let at = args.iter().position(|a| *a == "--expect-hash").unwrap();
    args[at + 1] = "0123456789abcdef";
    let replayed = mcsim(&args);
    let out = stdout(&replayed);
    assert_eq!(replayed.status.code(), Some(2), "{out}");
    assert!(
        out.contains("TRACE DIFFERS: expected hash 0123456789abcdef"),
        "{out}"
    );
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    // A program that does not exist.
    let missing = mcsim(&["test", "--clients", "2", "--", "/nonexistent/program"]);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("cannot run \"/nonexistent/program\""), "{err}");
    // A program that fails before any client takes part: nothing to judge.
    let early = mcsim(&[
        "test",
        "--clients",
        "2",
        "--",
        "/bin/sh",
        "-c",
        "echo boom >&2; exit 3",
    ]);
    assert_eq!(early.status.code(), Some(2));
    let out = stdout(&early);
    assert!(
        out.contains(
            "NOT JUDGED: run 0: 0 of 2 participants named themselves (the program exited 3 after "
        ),
        "{out}"
    );
    assert!(out.contains("boom"), "{out}");
    // No program at all, a bad schedule, a bad timeout.
    assert_eq!(mcsim(&["test", "--clients", "2"]).status.code(), Some(2));
    let bad = mcsim(&[
        "test",
        "--clients",
        "2",
        "--replay",
        "xx",
        "--",
        "/bin/true",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--replay"));
    let bad = mcsim(&[
        "test",
        "--clients",
        "2",
        "--timeout",
        "0",
        "--",
        "/bin/true",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    // Chances outside 0..1 and a pause of no time: one line each, naming the flag.
    for (flag, value) in [
        ("--lose-request", "1.5"),
        ("--lose-reply", "-0.1"),
        ("--pause", "2"),
        ("--pause-ms", "0"),
    ] {
        let bad = mcsim(&["test", "--clients", "2", flag, value, "--", "/bin/true"]);
        let err = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(2), "{flag} {value}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{flag} {value}: {err}");
    }
}

#[test]
fn commands_of_a_connection_that_never_named_itself_are_pointed_out() {
    if !python_with("pymemcache") {
        return;
    }
    // Each thread names one connection and writes on a second one it never names.
    let script = "import os,threading\nfrom pymemcache.client.base import Client\nh,p=os.environ['MCSIM_SERVERS'].rsplit(':',1)\ns=(h,int(p))\ndef w(i):\n    c=Client(s); c.get(f'mcsim:name:t{i}')\n    other=Client(s)\n    for r in range(3):\n        c.get('n')\n        other.set(f'side{i}',str(r),noreply=False)\nts=[threading.Thread(target=w,args=(i,)) for i in range(2)]\n[t.start() for t in ts]\n[t.join() for t in ts]\n";
    let run = |script: &str| {
        let o = mcsim(&[
            "test",
            "--clients",
            "2",
            "--executions",
            "2",
            "--",
            PYTHON,
            "-c",
            script,
        ]);
        (o.status.code(), stdout(&o))
    };
    let (code, out) = run(script);
    assert_eq!(code, Some(0), "{out}");
    // The note names each connection's command and when it ran, and says how to bring it
    // into the schedule.
    let note = out
        .lines()
        .find(|l| l.starts_with("note:"))
        .unwrap_or_default();
    assert!(
        note.contains(
            "connections that never named themselves ran commands while the participants ran"
        ),
        "{out}"
    );
    assert!(note.contains("sent `set side"), "{note}");
    assert!(note.contains(" s"), "{note}");
    assert!(note.contains("To schedule such a command"), "{note}");
    // A second connection that only asks the server's version and stats touches nothing a
    // participant sees: no note.
    let quiet = script.replace(
        "other.set(f'side{i}',str(r),noreply=False)",
        "other.version(); other.stats()",
    );
    let (code, out) = run(&quiet);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("note:"), "{out}");
}

#[test]
fn declared_figures_are_summed_up_and_a_danger_that_never_happens_makes_a_pass_vacuous() {
    if !python_with("pymemcache") {
        return;
    }
    let helper = example("helpers/python");
    // One participant: it counts its gets as a figure, and says `sometimes seen` only
    // when its first get finds the key (never, here: nothing stores it).
    let script = format!(
        "import sys\nsys.path.insert(0, {:?})\nfrom mcsim_control import Participant, servers\nfrom pymemcache.client.base import Client\nme = Participant('t0')\nc = Client(servers()[0])\nc.get(me.name_key)\nif c.get('k') is not None:\n    me.sometimes('seen')\nme.metric('gets', 2)\nme.close()\n",
        helper
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["test", "--clients", "1", "--executions", "4"];
        args.extend_from_slice(extra);
        args.extend(["--", PYTHON, "-c", &script]);
        let o = mcsim(&args);
        (o.status.code(), stdout(&o))
    };
    let (code, out) = run(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("metric gets: mean 2.000 (min 2, max 2) over 4 runs"),
        "{out}"
    );
    let (code, out) = run(&["--sometimes", "seen"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("VACUOUS: 4 runs of `"), "{out}");
    assert!(out.contains("sometimes seen: in 0 of 4 runs"), "{out}");
}

#[test]
fn a_program_that_hangs_is_stuck_after_its_timeout_and_killed() {
    if !python_with("pymemcache") {
        return;
    }
    // One client names itself and then waits forever for a second that never comes.
    let script = "import os,time\nfrom pymemcache.client.base import Client\nh,p=os.environ['MCSIM_SERVERS'].rsplit(':',1)\nc=Client((h,int(p)))\nc.get('mcsim:name:t0')\nc.get('k')\ntime.sleep(60)\n";
    let started = std::time::Instant::now();
    let stuck = mcsim(&[
        "test",
        "--clients",
        "1",
        "--executions",
        "1",
        "--timeout",
        "1",
        "--",
        PYTHON,
        "-c",
        script,
    ]);
    let out = stdout(&stuck);
    assert_eq!(stuck.status.code(), Some(1), "{out}");
    assert!(
        out.contains("stuck: still running after 1s (killed)"),
        "{out}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// True if `php` runs here with the memcached and pcntl extensions.
fn php() -> bool {
    let ok = Command::new("php")
        .args([
            "-r",
            "exit(extension_loaded('memcached') && function_exists('pcntl_fork') ? 0 : 1);",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no php with the memcached and pcntl extensions");
    }
    ok
}

#[test]
fn a_php_lock_through_php_memcached_is_found_broken_and_its_fix_passes() {
    if !php() {
        return;
    }
    let program = example("examples/php-lock/lock.php");
    for protocol in ["text", "binary"] {
        let broken = mcsim(&[
            "test",
            "--clients",
            "3",
            "--",
            "php",
            &program,
            "get-set",
            protocol,
        ]);
        let out = stdout(&broken);
        assert_eq!(broken.status.code(), Some(1), "{protocol}:\n{out}");
        assert!(
            out.contains("exclusion of section broken"),
            "{protocol}:\n{out}"
        );
        let args = replay_args(&out);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(
            mcsim(&args).status.code(),
            Some(1),
            "{protocol}: the replay"
        );
        let fixed = mcsim(&[
            "test",
            "--clients",
            "3",
            "--executions",
            "30",
            "--",
            "php",
            &program,
            "add",
            protocol,
        ]);
        assert_eq!(
            fixed.status.code(),
            Some(0),
            "{protocol}:\n{}",
            stdout(&fixed)
        );
        // A holder that sleeps 6 s of virtual time (McsimParticipant::sleep) outlasts the
        // add lock's 5 s TTL; one that sleeps 1 s does not.
        let held = |seconds: &str| {
            let o = mcsim(&[
                "test",
                "--clients",
                "3",
                "--executions",
                "20",
                "--",
                "php",
                &program,
                "add",
                protocol,
                seconds,
            ]);
            (o.status.code(), stdout(&o))
        };
        let (code, out) = held("1");
        assert_eq!(code, Some(0), "{protocol}:\n{out}");
        let (code, out) = held("6");
        assert_eq!(code, Some(1), "{protocol}:\n{out}");
        assert!(out.contains("sleep 6000 ms"), "{protocol}:\n{out}");
    }
}

/// A program whose participants never name themselves (a typo, a skipped fixture, the
/// wrong interpreter) gets no pass: its first run is not judged, in one line, exit 2.
#[test]
fn a_program_that_never_takes_part_is_not_judged() {
    let quiet = mcsim(&["test", "--clients", "3", "--", PYTHON, "-c", "print(1)"]);
    let out = stdout(&quiet);
    assert_eq!(quiet.status.code(), Some(2), "{out}");
    assert!(
        out.starts_with(
            "NOT JUDGED: run 0: 0 of 3 participants named themselves (the program exited 0 after "
        ),
        "{out}"
    );
    // Then what the program wrote, to see why.
    assert_eq!(out.lines().nth(2), Some("    1"), "{out}");
    // One participant of two: named, then gone; the other never comes.
    let one = r#"
import os, socket
host, port = os.environ["MCSIM_SERVERS"].split(",")[0].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"mcsim name w0\r\n")
s.recv(100)
s.close()
"#;
    let half = mcsim(&["test", "--clients", "2", "--", PYTHON, "-c", one]);
    let out = stdout(&half);
    assert_eq!(half.status.code(), Some(2), "{out}");
    assert!(
        out.starts_with("NOT JUDGED: run 0: 1 of 2 participants named themselves: w0 (the program exited 0 after "),
        "{out}"
    );
    // A program that cannot start its script shows what it said (PHP says it on its
    // standard output).
    if std::process::Command::new("php").arg("-v").output().is_ok() {
        let missing = mcsim(&["test", "--clients", "2", "--", "php", "nosuchfile.php"]);
        let out = stdout(&missing);
        assert_eq!(missing.status.code(), Some(2), "{out}");
        assert!(out.contains("(the program exited 1 after "), "{out}");
        assert!(
            out.contains("Could not open input file: nosuchfile.php"),
            "{out}"
        );
    }
}

/// A failure with a long timeline prints a screenful of it, says how much it left out
/// and where the whole one is (`--timeline FILE`).
#[test]
fn a_long_failure_prints_a_screenful_and_says_where_the_rest_is() {
    if !python_with("pymemcache") {
        return;
    }
    let program = example("examples/python-recipes/counter_program.py");
    let file = std::env::temp_dir().join(format!("mcsim-timeline-{}.txt", std::process::id()));
    let path = file.display().to_string();
    let run = mcsim(&[
        "test",
        "--clients",
        "3",
        "--timeline",
        &path,
        "--",
        PYTHON,
        &program,
        "get-set",
        "30",
    ]);
    let out = stdout(&run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(out.lines().count() <= 50, "{out}");
    assert!(
        out.contains(&format!("; the whole timeline is in {path}:")),
        "{out}"
    );
    assert!(out.contains("earlier lines left out"), "{out}");
    let whole = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(whole.lines().count() > 100, "{whole}");
}
