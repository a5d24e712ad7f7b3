//! Every replay command mcsim prints reproduces what it claims: run every scenario of the
//! suite that fails (and every sweep), take each `mcsim replay …` line from the terminal
//! output, the JSON report and the JUnit report, run it in a shell, and compare the
//! verdict and the trace hash it prints with the ones printed beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `mcsim` with arguments from the project root.
fn mcsim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("mcsim runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a printed command line in a shell, with `mcsim` being the binary under test.
fn shell(command: &str) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_mcsim"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("PATH", path)
        .current_dir(root())
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A printed replay line: the command, the verdict label of its failure, the hash.
#[derive(Debug, Clone)]
struct Claim {
    command: String,
    label: String,
    hash: String,
}

/// The replay lines of a failure report, each with the label of the `FAILED` line above.
fn claims(report: &str) -> Vec<Claim> {
    let mut label = String::new();
    let mut out = Vec::new();
    for line in report.lines() {
        if let Some(rest) = line.strip_prefix("FAILED ") {
            label = rest.rsplit(": ").next().unwrap_or_default().to_string();
        }
        let line = line.trim();
        if line.starts_with("mcsim replay")
            && let Some((command, _)) = line.split_once("   # ")
        {
            let hash = command.rsplit("--expect-hash ").next().unwrap().to_string();
            out.push(Claim {
                command: command.to_string(),
                label: label.clone(),
                hash,
            });
        }
    }
    out
}

fn check_claim(c: &Claim, from: &str) {
    let out = shell(&c.command);
    let verdict = out
        .lines()
        .find_map(|l| l.strip_prefix("verdict: "))
        .unwrap_or_else(|| panic!("{from}: no verdict from {}", c.command));
    let hash = out
        .lines()
        .find_map(|l| l.strip_prefix("trace hash: "))
        .unwrap_or_default();
    assert_eq!(hash, c.hash, "{from}: {} prints another trace", c.command);
    let label = verdict.trim();
    assert_eq!(label, c.label, "{from}: {} gives {verdict}", c.command);
}

fn unescape_xml(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[test]
fn every_printed_replay_line_reproduces_its_verdict_and_trace() {
    let dir = std::env::temp_dir().join(format!("mcsim-replays-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("check.json");
    let junit = dir.join("junit.xml");
    mcsim(&[
        "check",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut checked = 0;
    let mut files = Vec::new();
    for row in rows.as_array().unwrap() {
        let got = row["got"].as_str().unwrap_or_default().to_string();
        for r in row["replays"].as_array().unwrap() {
            let c = Claim {
                command: r["command"].as_str().unwrap().to_string(),
                label: got.clone(),
                hash: r["trace_hash"].as_str().unwrap().to_string(),
            };
            check_claim(&c, "json");
            checked += 1;
        }
        if row["expected"] != "pass" || !row["points"].as_array().unwrap().is_empty() {
            files.push(row["file"].as_str().unwrap().to_string());
        }
    }
    let xml = unescape_xml(&std::fs::read_to_string(&junit).unwrap());
    for c in claims(&xml) {
        check_claim(&c, "junit");
        checked += 1;
    }
    // The terminal: `mcsim run` of every scenario that fails, and every sweep (each
    // failing point prints its own lines).
    for file in &files {
        for c in claims(&mcsim(&["run", file])) {
            check_claim(&c, "terminal");
            checked += 1;
        }
    }
    eprintln!("{checked} replay lines reproduced");
    assert!(checked > 80, "only {checked} replay lines");
    std::fs::remove_dir_all(&dir).ok();
}
