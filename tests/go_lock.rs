//! A Go program under `mcsim test`: the lock of `examples/go-lock`, with gomemcache and
//! the Go helper (`helpers/go/src/mcsimcontrol`), built in GOPATH mode from Debian's
//! packages (no module proxy needed). The `get`+`set` lock is found broken and replays;
//! the `add` lock passes.
//!
//! Needs `go` and gomemcache in /usr/share/gocode (Debian's `golang-go` and
//! `golang-github-bradfitz-gomemcache-dev`, which CI installs); without them the test says
//! so and passes.

mod common;

use common::{example, replay_of, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the example into the test's own directory; `None` if Go or gomemcache is
/// missing.
fn build() -> Option<PathBuf> {
    let gomemcache = Path::new("/usr/share/gocode/src/github.com/bradfitz/gomemcache");
    let go = Command::new("go").arg("version").output();
    if !go.is_ok_and(|o| o.status.success()) || !gomemcache.is_dir() {
        eprintln!("skipped: no go, or no gomemcache in /usr/share/gocode");
        return None;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("go-lock");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg("./examples/go-lock")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("GO111MODULE", "off")
        .env(
            "GOCACHE",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("go-cache"),
        )
        .env(
            "GOPATH",
            format!("/usr/share/gocode:{}", example("helpers/go")),
        )
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "go build: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    Some(out)
}

#[test]
fn a_go_lock_with_gomemcache_is_found_broken_and_its_fix_passes() {
    let Some(program) = build() else {
        return;
    };
    let program = program.display().to_string();
    let mcsim = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mcsim"))
            .args(args)
            .output()
            .unwrap()
    };
    let broken = mcsim(&["test", "--clients", "3", "--", &program, "get-set"]);
    let out = stdout(&broken);
    assert_eq!(broken.status.code(), Some(1), "{out}");
    assert!(out.contains("exclusion of section broken"), "{out}");
    assert!(out.contains("gets lock_x -> MISS"), "{out}");
    let replayed = mcsim(
        &replay_of(&out, "shrunk")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let again = stdout(&replayed);
    assert_eq!(replayed.status.code(), Some(1), "{again}");
    assert!(!again.contains("TRACE DIFFERS"), "{again}");
    let fixed = mcsim(&[
        "test",
        "--clients",
        "3",
        "--executions",
        "100",
        "--",
        &program,
        "add",
    ]);
    let out = stdout(&fixed);
    assert_eq!(fixed.status.code(), Some(0), "{out}");
    assert!(out.starts_with("passed: 100 runs"), "{out}");
}
