//! §2's instruction counts: the rate rows of the two counters run under callgrind, so
//! the executor's overhead over the shared work is counted in instructions, a figure
//! that other jobs on a shared machine do not move (the wall-clock ratio swings by a
//! third between runs, most of it in the minimal scheduler's few hundred nanoseconds).

use std::process::Command;

use super::*;

/// Executions per counted run. A row is run twice, with this many executions and with
/// twice as many; the difference, divided by this, is one execution's instructions
/// without the program's start and end.
const EXECUTIONS: u64 = 10_000;

/// The rows, as `--profile-rate` names them: mcsim `random`, the minimal scheduler and
/// the floor of each counter, and mcsim's fixed cost.
const ROWS: [(&str, &str, &str); 2] = [
    ("get-set", "minimal", "floor"),
    ("incr-add", "minimal-incr-add", "floor-incr-add"),
];

/// The instructions `valgrind --tool=callgrind` counts for this binary running
/// `--profile-rate row --executions n`.
fn counted(row: &str, n: u64) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(&exe)
        .args(["--profile-rate", row, "--executions", &n.to_string()])
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("valgrind on row {row} failed: {stderr}"));
    }
    stderr
        .lines()
        .find_map(|l| {
            let (_, after) = l.split_once("Collected :")?;
            after.trim().parse().ok()
        })
        .ok_or_else(|| format!("no instruction count in valgrind's output for row {row}"))
}

/// One execution's instructions in `row`.
fn per_execution(row: &str) -> Result<f64, String> {
    let (once, twice) = (counted(row, EXECUTIONS)?, counted(row, 2 * EXECUTIONS)?);
    Ok(twice.saturating_sub(once) as f64 / EXECUTIONS as f64)
}

/// Writes the instruction table; returns mcsim's overhead over the floor in units of the
/// minimal scheduler's, for get/set and incr/add (`None` without valgrind).
pub(crate) fn section_instructions(md: &mut String) -> Option<(f64, f64)> {
    writeln!(
        md,
        "\n### Instructions per execution\n\n\
         The same rows counted by callgrind (`valgrind --tool=callgrind`): each row runs \
         {EXECUTIONS} and then {} executions (`compare --profile-rate ROW --executions N`), \
         and the difference is divided by {EXECUTIONS}, so the program's start is not \
         counted. Instructions are not time (a stall costs cycles, not instructions), but \
         they do not move with the machine's load: the overhead ratio below is the one to \
         compare between runs.\n",
        2 * EXECUTIONS
    )
    .unwrap();
    let probe = Command::new("valgrind").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        writeln!(md, "Not measured: `valgrind` is not installed.").unwrap();
        return None;
    }
    eprintln!("instructions: {} rows under callgrind", 3 * ROWS.len() + 1);
    let measure = || -> Result<(String, (f64, f64)), String> {
        let mut table = String::from(
            "| counter | mcsim `random` | minimal scheduler | no checker (floor) | mcsim over the floor | minimal over the floor | overhead |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut ratios = [0.0; 2];
        for (i, (mcsim, minimal, floor)) in ROWS.iter().enumerate() {
            let (m, s, f) = (
                per_execution(mcsim)?,
                per_execution(minimal)?,
                per_execution(floor)?,
            );
            ratios[i] = (m - f) / (s - f);
            writeln!(
                table,
                "| {mcsim} | {m:.0} | {s:.0} | {f:.0} | {:.0} | {:.0} | {:.2}× |",
                m - f,
                s - f,
                ratios[i]
            )
            .unwrap();
        }
        let fixed = per_execution("fixed")?;
        writeln!(
            table,
            "\nAn execution with no clients and one failing end check (mcsim's fixed cost): \
             {fixed:.0} instructions."
        )
        .unwrap();
        Ok((table, (ratios[0], ratios[1])))
    };
    match measure() {
        Ok((table, ratios)) => {
            md.push_str(&table);
            Some(ratios)
        }
        Err(e) => {
            writeln!(md, "Not measured: {e}").unwrap();
            None
        }
    }
}
