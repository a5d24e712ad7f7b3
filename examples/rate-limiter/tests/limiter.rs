//! The rate limiter under mcsim: the version people first write is caught, the fixed one
//! passes under evictions and lost replies, and the crate's own binary runs its scenario
//! files through the whole mcsim command line.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcsim::prelude::*;
use rate_limiter::RateLimit;

fn evictions_and_lost_replies() -> FaultPlan {
    FaultPlan::evictions().and(FaultPlan::lost_replies())
}

#[test]
fn the_limiter_as_written_overruns_its_limit() {
    let figures = check(RateLimit::AsWritten)
        .clients(3)
        .expect("ratelimit.within_limit")
        .random(2_000);
    let failure = figures.failure.expect("an overrun");
    // Shrunk to the smallest race: two clients read the same count.
    assert_eq!(failure.clients, 2);
    assert!(failure.execution.schedule.faults() == 0);
}

#[test]
fn the_limiter_as_written_is_caught_by_exhaustive_search_too() {
    let figures = check(RateLimit::AsWritten)
        .clients(2)
        .with(|p| {
            p.limit = Count(1);
            p.requests = Count(1);
        })
        .expect("ratelimit.within_limit")
        .dfs(None);
    assert!(figures.failure.is_some());
}

#[test]
fn the_fixed_limiter_holds_under_evictions_and_lost_replies() {
    let figures = check(RateLimit::Fixed)
        .clients(3)
        .with(|p| p.requests = Count(4))
        .faults(evictions_and_lost_replies())
        .random(2_000);
    assert_eq!(figures.verdicts.get("pass"), Some(&2_000));
    // The faults did bite: counters were lost and the limiter saw it every time it
    // admitted more than the limit.
    assert!(figures.metric("ratelimit.resets_seen").max >= 1.0);
    assert!(figures.metric("ratelimit.overrun").max >= 1.0);
}

#[test]
fn the_fixed_limiter_never_overruns_without_faults() {
    let figures = check(RateLimit::Fixed).clients(3).random(1_000);
    assert_eq!(figures.metric("ratelimit.overrun").max, 0.0);
    assert_eq!(figures.metric("ratelimit.admitted").min, 3.0);
}

#[test]
fn the_fixed_limiter_is_proved_for_two_clients() {
    let figures = check(RateLimit::Fixed)
        .clients(2)
        .with(|p| {
            p.limit = Count(1);
            p.requests = Count(2);
        })
        .dfs(None);
    assert!(figures.exhaustive);
}

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn binary(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rate-limiter"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn its_own_binary_runs_its_scenario_files_as_a_gate() {
    let json = std::env::temp_dir().join(format!("rate-limiter-{}.json", std::process::id()));
    let dir = scenarios();
    let (ok, out, err) = binary(&[
        "check",
        dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("2 scenarios, 2 as expected, 0 mismatched"),
        "{out}"
    );
    std::fs::remove_file(json).ok();
}

#[test]
fn the_replay_line_its_binary_prints_replays() {
    let file = scenarios().join("ratelimit-as-written.toml");
    let (ok, out, _) = binary(&["run", file.to_str().unwrap()]);
    assert!(ok, "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("# shrunk"))
        .unwrap_or_else(|| panic!("no shrunk replay line in {out}"));
    let (command, _) = line.split_once("   # shrunk").unwrap();
    let hash = command.rsplit("--expect-hash ").next().unwrap();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "rate-limiter", "{line}");
    // The line checks its own trace hash: it succeeds only if it reproduces it.
    let (ok, replayed, err) = binary(&words[1..]);
    assert!(ok, "{replayed}\n{err}");
    assert!(
        replayed.contains(&format!("trace hash: {}", hash.trim())),
        "{replayed}"
    );
    assert!(
        replayed.contains("verdict: ratelimit.within_limit"),
        "{replayed}"
    );
}

#[test]
fn a_wrong_parameter_names_the_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("rate-limiter-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "recipe = \"ratelimit\"\nvariant = \"fixed\"\nclients = 2\n\n[params]\nlimt = 3\n\n\
         [expect]\nverdict = \"pass\"\n",
    )
    .unwrap();
    let (ok, _, err) = binary(&["run", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("bad.toml:6:8: field `params.limt`"), "{err}");
    assert!(err.contains("did you mean \"limit\""), "{err}");
    std::fs::remove_dir_all(dir).ok();
}
