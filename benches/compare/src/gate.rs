//! Section 8: the whole gate at a multiple of its budget, on one job and on every core,
//! and split in four shards merged back.

#[allow(unused_imports)]
use super::*;

use serde::Deserialize;

/// The figures `compare` reads back from a `check --json` report.
#[derive(Deserialize)]
struct GateRow {
    scenario: String,
    expected: String,
    got: String,
    executions: u64,
}

/// One run of the gate: its rows and wall time.
struct GateRun {
    rows: Vec<GateRow>,
    wall: Duration,
}

/// The `mcsim` binary beside this one (`cargo build --release` builds both).
fn mcsim_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.with_file_name("mcsim")
}

/// Runs `mcsim check` with `args`, its JSON report written to `json`.
fn gate(args: &[String], json: &Path) -> Result<GateRun, String> {
    let t = Instant::now();
    let out = Command::new(mcsim_binary())
        .arg("check")
        .args(args)
        .arg("--json")
        .arg(json)
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run mcsim ({}): {e}", mcsim_binary().display()))?;
    let wall = t.elapsed();
    // A verdict that differs from its scenario's exits non-zero and is counted below; a
    // run that wrote no report is an error.
    if !json.exists() {
        return Err(format!(
            "mcsim check {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" / ")
        ));
    }
    let text = std::fs::read_to_string(json).map_err(|e| e.to_string())?;
    let rows = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    Ok(GateRun { rows, wall })
}

fn verdicts(rows: &[GateRow]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.scenario.clone(), r.got.clone()))
        .collect();
    v.sort();
    v
}

pub(crate) fn section_gate(md: &mut String, budget: u32) -> Result<(f64, u64), String> {
    let dir = std::env::temp_dir().join(format!("mcsim-compare-gate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cores = mcsim::run::cores();
    let b = format!("{budget}");
    eprintln!("gate: --budget {budget} on one job");
    let one = gate(
        &["--budget".into(), b.clone(), "--jobs".into(), "1".into()],
        &dir.join("one.json"),
    )?;
    eprintln!("gate: --budget {budget} on {cores} jobs");
    let all = gate(
        &[
            "--budget".into(),
            b.clone(),
            "--jobs".into(),
            cores.to_string(),
        ],
        &dir.join("all.json"),
    )?;
    eprintln!("gate: four shards and merge");
    let mut shard_files = Vec::new();
    let mut shard_wall = Duration::ZERO;
    for i in 1..=4 {
        let json = dir.join(format!("shard{i}.json"));
        let run = gate(
            &[
                "--jobs".into(),
                "1".into(),
                "--shard".into(),
                format!("{i}/4"),
            ],
            &json,
        )?;
        shard_wall = shard_wall.max(run.wall);
        shard_files.push(json);
    }
    let merged_json = dir.join("merged.json");
    let out = Command::new(mcsim_binary())
        .arg("merge")
        .args(&shard_files)
        .arg("--json")
        .arg(&merged_json)
        .current_dir(root())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "mcsim merge failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let merged: Vec<GateRow> =
        serde_json::from_str(&std::fs::read_to_string(&merged_json).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let whole = gate(&["--jobs".into(), "1".into()], &dir.join("whole.json"))?;
    let _ = std::fs::remove_dir_all(&dir);

    let executions: u64 = all.rows.iter().map(|r| r.executions).sum();
    let speedup = one.wall.as_secs_f64() / all.wall.as_secs_f64();
    let rate = |r: &GateRun| executions as f64 / r.wall.as_secs_f64();
    let same = verdicts(&merged) == verdicts(&whole.rows);
    let same_budget = verdicts(&one.rows) == verdicts(&all.rows);
    let differ = |rows: &[GateRow]| rows.iter().filter(|r| r.got != r.expected).count();
    writeln!(
        md,
        "\n## 8. The gate at scale\n\n\
         `mcsim check --budget {budget}` (every scenario's budget times {budget}) run as a \
         child process, once with `--jobs 1` and once with `--jobs {cores}` (every core of \
         this machine), wall time from start to exit. Then the suite at its own budget in \
         four `--shard i/4` processes, merged with `mcsim merge`, against one run of the \
         whole suite.\n\n\
         | run | scenarios | executions | wall time | executions/s |\n\
         |---|---:|---:|---:|---:|\n\
         | `check --budget {budget} --jobs 1` | {} | {executions} | {:.1} s | {:.0} |\n\
         | `check --budget {budget} --jobs {cores}` | {} | {executions} | {:.1} s | {:.0} |\n\
         | `check --shard i/4` × 4, merged (slowest shard) | {} | | {:.1} s | |\n\
         | `check` (whole suite, one job) | {} | | {:.1} s | |\n\n\
         The gate at scale: {speedup:.2}× faster on {cores} cores than on one job \
         ({} executions/s for the whole suite); the same verdicts on one job and on {cores}: \
         {}; four shards merged give the same verdicts as one run: {}. Verdicts that \
         differ from their scenario's: {} at {budget}× the budget, {} at the budget.",
        one.rows.len(),
        one.wall.as_secs_f64(),
        rate(&one),
        all.rows.len(),
        all.wall.as_secs_f64(),
        rate(&all),
        merged.len(),
        shard_wall.as_secs_f64(),
        whole.rows.len(),
        whole.wall.as_secs_f64(),
        rate(&all).round(),
        if same_budget { "yes" } else { "**no**" },
        if same { "yes" } else { "**no**" },
        differ(&all.rows),
        differ(&whole.rows),
    )
    .unwrap();
    Ok((speedup, executions))
}
