//! The code one execution runs, in bytes: the 64-byte lines of machine code an execution
//! runs at least once on average, counted by callgrind (`--dump-instr=yes`). Set beside
//! the size of the processor's level-1 instruction cache, it says whether a row's code
//! can stay in that cache from one execution to the next: what §2's instruction-cache
//! misses, and so the gap between the overhead in time and in instructions, come from.

use std::collections::BTreeMap;
use std::process::Command;

/// The size of a cache line, the unit the instruction cache holds code in.
const LINE: u64 = 64;

/// Runs the running binary (`compare`) with `--profile-rate row --executions n` under
/// `valgrind --tool=callgrind` with `options`; returns valgrind's report (its stderr).
pub fn callgrind(options: &[&str], row: &str, n: u64) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .args(options)
        .arg(&exe)
        .args(["--profile-rate", row, "--executions", &n.to_string()])
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("valgrind on row {row} failed: {stderr}"));
    }
    Ok(stderr)
}

/// How many times each 64-byte line of code ran, by object and line, in one run of the
/// running binary (`compare`) with `--profile-rate row --executions n` under callgrind.
fn line_counts(row: &str, n: u64) -> Result<BTreeMap<(u32, u64), u64>, String> {
    let file = std::env::temp_dir().join(format!(
        "mcsim-compare-{}-{row}-{n}.callgrind",
        std::process::id()
    ));
    let out_file = format!("--callgrind-out-file={}", file.display());
    let ran = callgrind(
        &["--dump-instr=yes", "--compress-pos=no", &out_file],
        row,
        n,
    );
    let text = ran.and_then(|_| {
        std::fs::read_to_string(&file).map_err(|e| format!("callgrind's output for row {row}: {e}"))
    });
    std::fs::remove_file(&file).ok();
    Ok(parse(&text?))
}

/// The counts in callgrind's output (`positions: instr line`, uncompressed positions):
/// each cost line's instructions added to the line of code its address falls in, within
/// its object (`ob=`). The cost line after a `calls=` line is the call's inclusive cost,
/// which the callee's own lines count already, so it is skipped.
fn parse(text: &str) -> BTreeMap<(u32, u64), u64> {
    let mut counts = BTreeMap::new();
    let (mut object, mut after_call) = (0u32, false);
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("ob=(") {
            object = id
                .split(')')
                .next()
                .and_then(|id| id.parse().ok())
                .unwrap_or(0);
        } else if line.starts_with("calls=") {
            after_call = true;
        } else if let Some(hex) = line.strip_prefix("0x") {
            if std::mem::take(&mut after_call) {
                continue;
            }
            let mut fields = hex.split_whitespace();
            let address = fields.next().and_then(|a| u64::from_str_radix(a, 16).ok());
            let cost = fields.last().and_then(|c| c.parse::<u64>().ok());
            if let (Some(address), Some(cost)) = (address, cost) {
                *counts.entry((object, address / LINE)).or_insert(0) += cost;
            }
        }
    }
    counts
}

/// The bytes of code `row` runs per execution: the lines whose count grows by at least
/// half an execution's worth from `n` to `2n` executions (so that the program's start,
/// run once, is not counted).
pub fn code_per_execution(row: &str, n: u64) -> Result<u64, String> {
    let (once, twice) = (line_counts(row, n)?, line_counts(row, 2 * n)?);
    let lines = twice
        .iter()
        .filter(|&(line, &count)| {
            let before = once.get(line).copied().unwrap_or(0);
            2 * count.saturating_sub(before) >= n
        })
        .count() as u64;
    Ok(lines * LINE)
}

/// The level-1 instruction cache of the first processor, in bytes, as Linux reports it
/// (`/sys/devices/system/cpu/cpu0/cache`), or `None` where it does not.
pub fn instruction_cache() -> Option<u64> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    std::fs::read_dir(dir).ok()?.flatten().find_map(|index| {
        let read = |name: &str| std::fs::read_to_string(index.path().join(name)).ok();
        let (level, kind, size) = (read("level")?, read("type")?, read("size")?);
        if level.trim() != "1" || kind.trim() != "Instruction" {
            return None;
        }
        let size = size.trim();
        let kib = size.strip_suffix('K')?.parse::<u64>().ok()?;
        Some(kib * 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_added_by_line_within_their_object_and_calls_are_skipped() {
        let text = "positions: instr line\nevents: Ir\n\
                    ob=(1) /bin/a\nfn=(1) f\n0x1000 3 2\n0x103f 3 1\n0x1040 4 5\n\
                    calls=1 0x2000 9\n0x1044 4 100\n0x1048 4 1\n\
                    ob=(2) /lib/b\nfn=(2) g\n0x1000 7 4\n";
        let counts = parse(text);
        assert_eq!(counts.get(&(1, 0x1000 / 64)), Some(&3));
        assert_eq!(counts.get(&(1, 0x1040 / 64)), Some(&6));
        assert_eq!(counts.get(&(2, 0x1000 / 64)), Some(&4));
        assert_eq!(counts.len(), 3);
    }
}
