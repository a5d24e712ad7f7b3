//! Programs that run many executions in one process under `mcsim test`, asking for each
//! on a control connection (`mcsim next`): the Python helper (helpers/python) and its
//! pytest plugin, with sleeps in virtual time. The same verdicts, shrinking and replay
//! lines as a program started afresh for each execution, and the same exhaustive search.

mod common;

use std::process::{Command, Output};

use common::{PYTHON, example, mcsim, python_with, replay_args, stdout};

/// `mcsim test ARGS -- python3 -m pytest … TEST` with the plugin, `env` set for pytest.
fn pytest(args: &[&str], test: &str, env: &[(&str, &str)]) -> Output {
    let file = example("examples/python-lock/test_lock_mcsim.py");
    let target = format!("{file}::{test}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcsim"));
    command
        .arg("test")
        .args(args)
        .args([
            "--",
            PYTHON,
            "-m",
            "pytest",
            "-q",
            "-p",
            "pytest_mcsim",
            &target,
        ])
        .env("PYTHONPATH", example("helpers/python"))
        .envs(env.iter().copied());
    command.output().unwrap()
}

fn ready() -> bool {
    python_with("pymemcache") && python_with("pytest")
}

#[test]
fn one_process_runs_every_execution_and_a_failure_replays_from_its_line() {
    if !ready() {
        return;
    }
    let program = example("examples/python-lock/lock_program.py");
    let run = |lock: &str| {
        let o = mcsim(&[
            "test",
            "--clients",
            "3",
            "--executions",
            "200",
            "--",
            PYTHON,
            &program,
            lock,
            "pymemcache",
            "--many",
        ]);
        (o.status.code(), stdout(&o))
    };
    let (code, out) = run("add");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("passed: 200 runs of"), "{out}");
    let (code, out) = run("get-set");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
    // The replay runs in a process of its own, given the one execution it asks for.
    let args = replay_args(&out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for _ in 0..3 {
        let again = mcsim(&args);
        assert_eq!(again.status.code(), Some(1), "{}", stdout(&again));
    }
}

#[test]
fn the_exhaustive_search_counts_the_same_schedules_in_one_process() {
    if !ready() {
        return;
    }
    let program = example("examples/python-lock/lock_program.py");
    let search = |extra: &[&str]| {
        let mut args = vec![
            "test",
            "--clients",
            "2",
            "--exhaustive",
            "--max-preemptions",
            "0",
            "--",
            PYTHON,
            &program,
            "add",
            "pymemcache",
        ];
        args.extend_from_slice(extra);
        let o = mcsim(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
        let out = stdout(&o);
        let runs = out.split("exited 0: ").nth(1).unwrap_or_default();
        runs.split(" runs").next().unwrap_or_default().to_string()
    };
    let apart = search(&[]);
    assert!(!apart.is_empty());
    assert_eq!(search(&["--many"]), apart);
}

#[test]
fn a_pytest_test_runs_its_executions_and_fails_when_one_does() {
    if !ready() {
        return;
    }
    let o = pytest(
        &["--clients", "3", "--executions", "100"],
        "test_add_lock",
        &[],
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.starts_with("passed: 100 runs of"), "{out}");
    let o = pytest(
        &["--clients", "3", "--executions", "100"],
        "test_get_set_lock",
        &[],
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAILED: run ") && out.contains("exclusion of section broken"),
        "{out}"
    );
    // Outside mcsim test, with no servers named, the test is skipped.
    let skipped = Command::new(PYTHON)
        .args(["-m", "pytest", "-q", "-p", "pytest_mcsim"])
        .arg(example("examples/python-lock/test_lock_mcsim.py"))
        .env("PYTHONPATH", example("helpers/python"))
        .env_remove("MCSIM_SERVERS")
        .env_remove("MCSIM_EXECUTION")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&skipped.stdout);
    assert!(text.contains("2 skipped"), "{text}");
}

#[test]
fn a_holder_that_sleeps_past_the_ttl_in_virtual_time_loses_the_lock() {
    if !ready() {
        return;
    }
    // Taking turns with half-second waits, the add lock holds while each holder keeps it
    // a second; one that keeps it six seconds outlasts its 5 s TTL and another gets in.
    let args = ["--clients", "3", "--executions", "20"];
    let short = pytest(&args, "test_add_lock", &[("MCSIM_HOLD_S", "1")]);
    assert_eq!(short.status.code(), Some(0), "{}", stdout(&short));
    let long = pytest(&args, "test_add_lock", &[("MCSIM_HOLD_S", "6")]);
    let out = stdout(&long);
    assert_eq!(long.status.code(), Some(1), "{out}");
    assert!(
        out.contains("sleep 6000 ms") && out.contains("woke"),
        "the timeline shows the sleep: {out}"
    );
    // The other holder entered five seconds of virtual time in.
    assert!(out.contains("entered at 5.0"), "{out}");
}

#[test]
fn next_and_sleep_outside_their_place_are_clear_errors() {
    use std::io::{BufRead, BufReader, Write};
    let mut serve = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(["serve", "--port", "0", "--lockstep", "1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let port = first.rsplit(':').next().unwrap().trim().to_string();
    let stream = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut say = |line: &str| {
        (&stream)
            .write_all(format!("{line}\r\n").as_bytes())
            .unwrap();
        let mut reply = String::new();
        reader.read_line(&mut reply).unwrap();
        reply
    };
    let next = say("mcsim next");
    let sleep = say("mcsim sleep 100 nobody");
    let bad = say("mcsim sleep soon");
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(
        next.starts_with("CLIENT_ERROR mcsim next: executions are given only under mcsim test"),
        "{next}"
    );
    assert!(
        sleep.starts_with("CLIENT_ERROR mcsim sleep: nobody is not a participant"),
        "{sleep}"
    );
    assert!(
        bad.starts_with("CLIENT_ERROR \"soon\" is not a number"),
        "{bad}"
    );
}

#[test]
fn a_program_that_asks_what_mcsim_cannot_do_is_not_judged() {
    if !ready() {
        return;
    }
    let helper = example("helpers/python");
    let script = |body: &str| {
        format!(
            "import sys\nsys.path.insert(0, {helper:?})\nfrom mcsim_control import Participant, servers\nfrom pymemcache.client.base import Client\n{body}"
        )
    };
    let run = |body: &str| {
        let script = script(body);
        let o = mcsim(&[
            "test",
            "--clients",
            "2",
            "--timeout",
            "10",
            "--",
            PYTHON,
            "-c",
            &script,
        ]);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // A control command mcsim does not know.
    let (code, err) = run(
        "me = Participant('t0')\nc = Client(me.server)\nc.get(me.name_key)\nme._say('frobnicate 3')\n",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("asked mcsim what it cannot do") && err.contains("mcsim frobnicate 3"),
        "{err}"
    );
    // Two connections under one participant's name.
    let (code, err) = run(
        "a = Client(servers()[0]); a.get('mcsim:name:t0')\nb = Client(servers()[0]); b.get('mcsim:name:t0')\na.set('k', 'v', noreply=False)\n",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the participant name t0 is taken twice"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // A participant's name with a space, sent by hand (the helpers refuse one).
    let (code, err) = run("me = Participant('t0')\nme._say('name a b')\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a participant's name is one word (no spaces): \"a b\""),
        "{err}"
    );
}

#[test]
fn expect_turns_a_known_verdict_into_a_pass_and_another_into_a_failure() {
    if !ready() {
        return;
    }
    let program = example("examples/python-lock/lock_program.py");
    let run = |lock: &str, expect: &str| {
        let o = mcsim(&[
            "test",
            "--clients",
            "3",
            "--executions",
            "50",
            "--expect",
            expect,
            "--",
            PYTHON,
            &program,
            lock,
            "pymemcache",
            "--many",
        ]);
        (o.status.code(), stdout(&o))
    };
    let (code, out) = run("get-set", "fail");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("as expected: fail\n"), "{out}");
    let (code, out) = run("add", "fail");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.ends_with("UNEXPECTED: the verdict is pass, fail was expected\n"),
        "{out}"
    );
    let (code, _) = run("add", "pass");
    assert_eq!(code, Some(0));
}
