//! The command line with unusual readers: a closed pipe ends it quietly, bad input is a
//! clean error with exit code 2, never a panic.

use std::io::Read;
use std::process::{Command, Stdio};

fn mcsim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcsim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A directory of its own under the system's temporary one, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mcsim-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }

    /// `mcsim check --json <here>/out.json ARGS…`: its exit code, its standard output and
    /// the JSON rows it wrote (`Null` when it wrote none).
    fn check<I: AsRef<std::ffi::OsStr>>(
        &self,
        args: impl IntoIterator<Item = I>,
    ) -> (Option<i32>, String, serde_json::Value) {
        let json = self.file("out.json");
        std::fs::remove_file(&json).ok();
        let out = mcsim()
            .args(["check", "--json"])
            .arg(&json)
            .args(args)
            .output()
            .unwrap();
        let rows = std::fs::read_to_string(&json)
            .ok()
            .map_or(serde_json::Value::Null, |t| {
                serde_json::from_str(&t).unwrap()
            });
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), text, rows)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let mut child = mcsim()
        .args(["run", "scenarios/array2-fixed-full.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe, as `| head -c 1` does.
    let mut out = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    out.read_exact(&mut byte).unwrap();
    drop(out);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        status.code().is_some_and(|c| c == 0 || c == 1),
        "{status:?}"
    );
}

#[test]
fn a_bad_scenario_value_is_exit_code_2_with_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("mcsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cluster-rehash.toml"),
    )
    .unwrap()
    .replace("leave_server = 0", "leave_server = 7");
    std::fs::write(&path, text).unwrap();
    let out = mcsim().arg("run").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml:8:") && err.contains("params.leave_server"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    for args in [
        &["replay", "scenarios/lock-add.toml", "--schedule", "mc1:$"][..],
        &["replay", "scenarios/lock-add.toml", "--schedule", "mc1:Z"],
        &[
            "replay",
            "scenarios/lock-add.toml",
            "--seed",
            "0",
            "--set",
            "nope",
        ],
        &["run", "scenarios/lock-add.toml", "--set", "clients=0"],
    ] {
        let out = mcsim().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_replay_that_gives_another_trace_than_expected_fails_and_says_so() {
    let replay = |hash: &str| {
        mcsim()
            .args(["replay", "scenarios/counter-get-set.toml", "--seed", "0"])
            .args(["--expect-hash", hash])
            .output()
            .unwrap()
    };
    let first = mcsim()
        .args(["replay", "scenarios/counter-get-set.toml", "--seed", "0"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&first.stdout);
    let hash = out
        .lines()
        .find_map(|l| l.strip_prefix("trace hash: "))
        .expect("replay prints its trace hash")
        .to_string();
    assert_eq!(replay(&hash).status.code(), Some(0));
    // Another hash, as a line printed by another version would carry.
    let other = format!("{:016x}", u64::from_str_radix(&hash, 16).unwrap() ^ 1);
    let wrong = replay(&other);
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "gives trace hash {hash}, not the expected {other}"
        )),
        "{err}"
    );
    // Not a hash at all: bad input.
    let bad = replay("xyz");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--expect-hash") && !err.contains("panicked"),
        "{err}"
    );
}

/// The gate judges each scenario on every invariant its run found, so where its seeds
/// start does not change a verdict: the scenarios whose executions break several
/// invariants at once, from three starting seeds.
#[test]
fn the_gate_gives_the_same_verdicts_from_any_starting_seed() {
    let scratch = Scratch::new("seeds");
    let scenarios = [
        "scenarios/eventlog-as-written-large.toml",
        "scenarios/cluster-rehash.toml",
        "scenarios/set-compact-set.toml",
        "scenarios/table-as-written-expire.toml",
        "scenarios/lock-add-holder-pause.toml",
    ];
    let mut verdicts = Vec::new();
    for seed in ["0", "1000", "987654321"] {
        let (code, text, rows) = scratch.check(["--seed", seed].iter().chain(&scenarios));
        assert_eq!(code, Some(0), "seed {seed}:\n{text}");
        let got: Vec<(String, String)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["scenario"].to_string(), r["got"].to_string()))
            .collect();
        verdicts.push(got);
    }
    assert_eq!(verdicts[0], verdicts[1]);
    assert_eq!(verdicts[0], verdicts[2]);
}

/// A fault plan aimed at a key the recipe never uses cannot bite: the pass it gives is
/// `vacuous`, a gate failure that says which danger never happened and which keys the
/// recipe did use.
#[test]
fn a_fault_that_never_bites_makes_the_gate_fail_vacuous() {
    let scratch = Scratch::new("vacuous");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/tags-time-evict.toml"),
    )
    .unwrap()
    .replace(r#"keys = ["tag_0", "tag_1"]"#, r#"keys = ["no_such_key"]"#);
    let path = scratch.file("aimed-elsewhere.toml");
    std::fs::write(&path, text).unwrap();
    let (code, text, _) = scratch.check([&path]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("vacuous ≠ pass"), "{text}");
    assert!(text.contains("none met faults.evict.bit"), "{text}");
    assert!(
        text.contains(
            "aims faults at no_such_key, which no call used; the keys used: posts, tag_0, tag_1"
        ),
        "{text}"
    );
}

#[test]
fn an_unknown_strategy_is_one_line_that_names_the_known_ones() {
    let out = mcsim()
        .args(["run", "scenarios/lock-add.toml", "--strategy", "posix"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("'posix'") && err.contains("[possible values: swarm, random, pct, pos]"),
        "{err}"
    );
}

/// Hostile values for every numeric or structured flag of every command: each call ends
/// fast, never panics, and a refusal is exit code 2 with one line on stderr.
#[test]
fn hostile_arguments_get_one_line_and_exit_code_2_never_a_panic() {
    let commands = ["run", "explore", "replay", "check", "confirm"];
    let flags = [
        "--seed",
        "--seeds",
        "--depth",
        "--strategy",
        "--budget",
        "--jobs",
        "--max-preemptions",
        "--max-faults",
        "--draws",
        "--max-phases",
        "--clients",
        "--max-executions",
        "--shard",
        "--schedule",
        "--set",
        "--max-wait-s",
        "--expect-hash",
    ];
    // Values a user may mistype; none asks for more work than a scenario's own budget.
    let values = [
        "",
        "-1",
        "nan",
        "inf",
        "x",
        "18446744073709551616",
        "1e300",
        "0",
        "3/2",
    ];
    let mut refused = 0;
    for command in commands {
        for flag in flags {
            for value in values {
                let started = std::time::Instant::now();
                let out = mcsim()
                    .args([command, "scenarios/lock-add.toml", flag, value])
                    .output()
                    .unwrap();
                let what = format!("{command} {flag} {value:?}");
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(!err.contains("panicked"), "{what}: {err}");
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(30),
                    "{what} took {:?}",
                    started.elapsed()
                );
                if out.status.code() == Some(2) {
                    refused += 1;
                    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
                }
            }
        }
    }
    assert!(refused > 300, "{refused}");
}

#[test]
fn a_fifo_a_directory_or_a_device_is_refused_at_once() {
    let dir = std::env::temp_dir().join(format!("mcsim-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("scenario.toml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut inputs = vec![dir.clone(), std::path::PathBuf::from("/dev/zero")];
    if made.is_ok_and(|s| s.success()) {
        inputs.push(fifo);
    }
    for input in inputs {
        for command in ["run", "explore", "replay", "check"] {
            let started = std::time::Instant::now();
            let out = mcsim().arg(command).arg(&input).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} {}: {err}",
                input.display()
            );
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_file_makes_check_exit_2_and_names_the_missing_field() {
    let scratch = Scratch::new("malformed");
    let path = scratch.file("no-variant.toml");
    std::fs::write(
        &path,
        "recipe = \"lock\"\nclients = 2\n[expect]\nverdict = \"pass\"\n",
    )
    .unwrap();
    let (code, text, _) = scratch.check([&path]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("field `variant`: missing field `variant`"),
        "{text}"
    );
}

/// A sweep's counterexample in check's reports is shrunk as run's are.
#[test]
fn a_sweeps_counterexample_in_the_gate_is_shrunk() {
    let scratch = Scratch::new("sweep");
    let (code, text, rows) = scratch.check(["scenarios/visitor-as-written-sweep.toml"]);
    assert_eq!(code, Some(0), "{text}");
    let detail = rows[0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("shrunk to"), "{detail}");
    let replays = rows[0]["replays"].as_array().unwrap();
    assert!(
        replays.iter().any(|r| r.to_string().contains("--schedule")),
        "{replays:?}"
    );
}

/// The whole suite off a terminal: each scenario named once (the table, not also a
/// progress line), the JSON report under 1 MB with every figure whole, each
/// counterexample a screenful there and whole in the file it names.
#[test]
fn the_gate_off_a_terminal_names_each_scenario_once_and_keeps_its_json_small() {
    let scratch = Scratch::new("whole-gate");
    let json = scratch.file("check.json");
    let html = scratch.file("check.html");
    let out = mcsim()
        .args(["check", "--json"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let size = std::fs::metadata(&json).unwrap().len();
    assert!(size <= 1_000_000, "check.json is {size} bytes");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(rows.len() > 80);
    for r in rows {
        let name = r["scenario"].as_str().unwrap();
        assert!(
            !stderr
                .lines()
                .any(|l| l.split_whitespace().any(|w| w == name)),
            "{name} on stderr too:\n{stderr}"
        );
    }
    let table_rows = stdout.lines().filter(|l| l.starts_with("ok  ")).count();
    assert_eq!(table_rows, rows.len(), "{stdout}");
    let page = std::fs::read_to_string(&html).unwrap();
    for r in rows {
        let numbers = r["numbers"].as_str().unwrap();
        assert!(!numbers.contains('…'), "cut in the JSON: {numbers}");
        let escaped = numbers
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(page.contains(&escaped), "not whole in the HTML: {numbers}");
        if let Some(detail) = r["detail"].as_str() {
            assert!(detail.lines().count() <= 70, "{detail}");
            if let Some((_, file)) = detail.split_once("the whole report: ") {
                let file = file.lines().next().unwrap().trim();
                let whole = std::fs::read_to_string(file).unwrap();
                assert!(whole.lines().count() > detail.lines().count());
            }
        }
        if let Some(file) = r["counterexample"].as_str() {
            assert!(std::path::Path::new(file).exists(), "{file}");
        }
    }

    // Four shards in four processes, merged: the same verdicts, and a page that draws
    // every counterexample again from the files their JSON rows name.
    let shards: Vec<(std::path::PathBuf, std::process::Child)> = (1..=4)
        .map(|i| {
            let json = scratch.file(&format!("shard-{i}.json"));
            let child = mcsim()
                .args(["check", "--shard", &format!("{i}/4"), "--json"])
                .arg(&json)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (json, child)
        })
        .collect();
    let mut jsons = Vec::new();
    for (json, mut child) in shards {
        assert!(child.wait().unwrap().success(), "shard {}", json.display());
        jsons.push(json);
    }
    let merged = scratch.file("merged.json");
    let merged_html = scratch.file("merged.html");
    let out = mcsim()
        .arg("merge")
        .args(&jsons)
        .arg("--json")
        .arg(&merged)
        .arg("--html")
        .arg(&merged_html)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let verdicts = |rows: &serde_json::Value| -> Vec<(String, String)> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| (r["scenario"].to_string(), r["got"].to_string()))
            .collect()
    };
    let merged_rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let mut one = verdicts(&serde_json::Value::Array(rows.clone()));
    let mut four = verdicts(&merged_rows);
    one.sort();
    four.sort();
    assert_eq!(one, four);
    let merged_page = std::fs::read_to_string(&merged_html).unwrap();
    assert_eq!(
        merged_page.matches("<svg").count(),
        page.matches("<svg").count(),
        "the merged page draws every timeline and plot the single run's does"
    );
}

/// A missing argument is named with what it is for, a typo gets clap's "did you mean",
/// and the hint is the subcommand's own help, in one line.
#[test]
fn a_missing_or_mistyped_argument_is_named_with_the_subcommands_help() {
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["test", "--", "php", "counter.php"],
            &["mcsim test needs --clients <N> (how many participants the program starts)"],
        ),
        (
            &["test", "--clients", "3"],
            &["mcsim test needs -- <CMD>… (the program to test"],
        ),
        (
            &["run"],
            &["mcsim run needs <SCENARIO> (the scenario file)"],
        ),
        (
            &["test", "--client", "3", "--", "true"],
            &["'--client'", "a similar argument exists: '--clients'"],
        ),
        (&["check", "--junit"], &["'--junit <JUNIT>'"]),
        (&[], &["mcsim needs a command (run, replay, explore"]),
    ];
    for (args, wanted) in cases {
        let out = mcsim().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{args:?}: {w:?} not in {err}");
        }
        let help = match args.first() {
            Some(sub) if *sub != "--" => format!("see mcsim {sub} --help"),
            _ => "see mcsim --help".to_string(),
        };
        assert!(err.trim_end().ends_with(&help), "{args:?}: {err}");
    }
}
