//! Counterexamples in their own files: a failure report is a screenful where people read
//! it (the terminal, a test's panic, the JSON summary), and the whole of it, with every
//! step of its timeline, in a file the screenful names.

use std::path::{Path, PathBuf};

use crate::report::Row;
use crate::report::timeline::Timeline;

/// Timeline lines a screenful keeps from the start of a long timeline.
const HEAD: usize = 15;
/// … and from its end, where a failure shows itself.
const TAIL: usize = 30;

/// `whole` (a failure report) with its timeline cut to its first and last steps when it
/// is longer than a screen, naming `kept`, the file that holds the whole report.
pub fn screenful(whole: &str, kept: Option<&Path>) -> String {
    let lines: Vec<&str> = whole.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("timeline (")) else {
        return whole.to_string();
    };
    let end = lines[start..]
        .iter()
        .position(|l| l.is_empty())
        .map_or(lines.len(), |n| start + n);
    let steps = end - (start + 1);
    if steps <= HEAD + TAIL + 5 {
        return whole.to_string();
    }
    let omitted = steps - HEAD - TAIL;
    let where_ = kept.map_or(String::new(), |p| {
        format!("; the whole report: {}", p.display())
    });
    let mut out: Vec<String> = lines[..=start + HEAD]
        .iter()
        .map(|l| l.to_string())
        .collect();
    out.push(format!(
        "    … {omitted} lines of the timeline omitted{where_}"
    ));
    out.extend(lines[end - TAIL..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if whole.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A name safe for a file: the scenario's, with anything but `[A-Za-z0-9._-]` as `_`.
fn file_name(scenario: &str) -> String {
    scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes `whole` to `<dir>/<scenario>.txt` and returns the screenful naming it (the
/// whole text when the file cannot be written: nothing is lost). A short report is
/// returned whole and written all the same.
pub fn keep(dir: &Path, scenario: &str, whole: &str) -> String {
    let path = dir.join(format!("{}.txt", file_name(scenario)));
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, whole));
    match written {
        Ok(()) => screenful(whole, Some(&path)),
        Err(_) => whole.to_string(),
    }
}

/// The directory of the counterexamples of the JSON report at `json`: beside it, named
/// after it (`reports/check.json` → `reports/check/`).
pub fn beside(json: &Path) -> PathBuf {
    let stem = json
        .file_stem()
        .map_or("check".into(), |s| s.to_os_string());
    json.with_file_name(stem)
}

/// The rows as the JSON report holds them: each failure report a screenful and each
/// timeline out of the row, both whole in files under `dir` that the row names
/// (`counterexample`), so the summary stays small with every figure in it.
pub fn rows_for_json(rows: &[Row], dir: &Path) -> Vec<Row> {
    // A report replaces the previous one's counterexamples.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".txt") || name.ends_with(".timeline.json") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let _ = std::fs::create_dir_all(dir);
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            if r.detail.is_none() && r.timeline.is_none() {
                return r;
            }
            let name = file_name(&r.scenario);
            if let Some(detail) = &r.detail {
                r.detail = Some(keep(dir, &r.scenario, detail));
            }
            if let Some(t) = r.timeline.take() {
                let path = dir.join(format!("{name}.timeline.json"));
                match serde_json::to_string(&t)
                    .map_err(std::io::Error::other)
                    .and_then(|text| std::fs::write(&path, text))
                {
                    Ok(()) => r.counterexample = Some(path.display().to_string()),
                    Err(_) => r.timeline = Some(t),
                }
            }
            r
        })
        .collect()
}

/// A row read back from a JSON report: its timeline loaded from the file it names, when
/// that file is there (a merged page draws it again).
pub fn with_timeline(mut row: Row) -> Row {
    if row.timeline.is_none()
        && let Some(path) = &row.counterexample
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(t) = serde_json::from_str::<Timeline>(&text)
    {
        row.timeline = Some(t);
    }
    row
}

/// The failure report of `f` as a screenful, the whole of it kept in `dir`.
pub fn failure(
    dir: &Path,
    scenario: &crate::scenario::Scenario,
    strategy: crate::scenario::StrategyKind,
    f: &crate::run::Finding,
) -> String {
    keep(
        dir,
        &scenario.name,
        &crate::report::render_failure(scenario, strategy, f),
    )
}

/// Where `mcsim run` and `mcsim explore` keep the whole reports their screenfuls name.
pub const RUN_DIR: &str = "reports/counterexamples";

/// Where a check from a `#[test]` keeps them: `mcsim/` in the target directory its test
/// binary was built in (`target/<profile>/deps/<binary>` keeps them in `target/mcsim/`),
/// so that each crate's reports stay with it; under the system's temporary directory
/// for a binary built elsewhere.
pub fn test_dir() -> PathBuf {
    let target = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe.parent()?;
        let target = (deps.file_name()? == "deps").then(|| deps.parent()?.parent())??;
        Some(target.join("mcsim"))
    });
    target.unwrap_or_else(|| std::env::temp_dir().join("mcsim"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_timeline_is_cut_to_a_screenful_that_names_the_file() {
        let mut whole = String::from("FAILED x: stuck\n  found 1 client\n\ntimeline (step…):\n");
        for i in 0..500 {
            whole.push_str(&format!("  {i} c0 get k -> END\n"));
        }
        whole.push_str("\nreplay (each…):\n  mcsim replay x\n");
        let short = screenful(&whole, Some(Path::new("reports/check/x.txt")));
        assert!(short.lines().count() < 60, "{short}");
        assert!(short.contains("  0 c0 get"));
        assert!(short.contains("  499 c0 get"));
        assert!(short.contains(
            "… 455 lines of the timeline omitted; the whole report: reports/check/x.txt"
        ));
        assert!(short.ends_with("  mcsim replay x\n"));
        let small = "FAILED x\n\ntimeline (step…):\n  1 c0 get\n\nreplay:\n";
        assert_eq!(screenful(small, None), small);
    }
}
