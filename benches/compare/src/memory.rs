//! Section 6: peak memory of long runs, by the number of seeds.

#[allow(unused_imports)]
use super::*;

/// Runs `mcsim run FILE --seeds N --all` under `/usr/bin/time` and returns its peak
/// resident set (KB) and wall time, or why it could not.
fn peak_rss(mcsim: &Path, scenario: &str, seeds: u64) -> Result<(u64, f64), String> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M %e"])
        .arg(mcsim)
        .args(["run", scenario, "--seeds", &seeds.to_string(), "--all"])
        .current_dir(root())
        .env("CI", "true")
        .output()
        .map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    let mut parts = last.split_whitespace();
    let kb = parts.next().and_then(|v| v.parse().ok());
    let secs = parts.next().and_then(|v| v.parse().ok());
    match (kb, secs) {
        (Some(kb), Some(secs)) => Ok((kb, secs)),
        _ => Err(format!("unexpected output: {last}")),
    }
}

/// Builds the `mcsim` binary and measures peak memory at growing seed counts.
pub(crate) fn section_memory(md: &mut String) {
    writeln!(
        md,
        "\n## 6. Memory across seeds\n\n\
         Peak resident set of `mcsim run FILE --seeds N --all` (every execution run and \
         counted, metrics summarized as running sums and bounded histograms, nothing kept \
         per execution), read by `/usr/bin/time -f %M`.\n\n\
         | scenario | seeds | peak RSS | wall time |\n|---|---:|---:|---:|"
    )
    .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--release", "--bin", "mcsim"])
        .status();
    if !built.is_ok_and(|s| s.success()) {
        writeln!(md, "| (could not build the mcsim binary) | | | |").unwrap();
        return;
    }
    let mcsim = root().join("target/release/mcsim");
    for (scenario, counts) in [
        (
            "scenarios/counter-get-set.toml",
            &[10_000u64, 100_000, 1_000_000][..],
        ),
        ("scenarios/online-add.toml", &[10_000, 100_000][..]),
    ] {
        for &seeds in counts {
            eprintln!("memory: {scenario} × {seeds}");
            match peak_rss(&mcsim, scenario, seeds) {
                Ok((kb, secs)) => writeln!(
                    md,
                    "| `{scenario}` | {seeds} | {:.1} MB | {secs:.1} s |",
                    kb as f64 / 1024.0
                )
                .unwrap(),
                Err(e) => writeln!(md, "| `{scenario}` | {seeds} | not measured: {e} | |").unwrap(),
            }
        }
    }
}
