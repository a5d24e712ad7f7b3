//! Section 1: exhausting the counters with mcsim, loom and shuttle.

#[allow(unused_imports)]
use super::*;

/// Executions, pruned executions and violating executions of one exhaustive dfs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exhausted {
    pub(crate) executions: u64,
    pub(crate) pruned: u64,
    pub(crate) violating: u64,
}

/// The bare exploration loop: what `mcsim::exhaustive::explore` does without replaying and
/// shrinking the first counterexample.
pub(crate) fn dfs_loop(s: &Scenario, reduce: bool) -> Exhausted {
    let mut dfs = Dfs::new(None, reduce);
    let mut violating = 0;
    let mut e = Execution::default();
    let runs = Runs::new(&s.config);
    for i in 0.. {
        runs.execute_into(&*s.setup, &mut dfs, i, &mut e);
        let failed = !e.pruned && !e.verdict.is_pass();
        violating += u64::from(failed);
        if !dfs.end(failed) {
            break;
        }
    }
    let stats = dfs.stats();
    Exhausted {
        executions: stats.executions,
        pruned: stats.pruned,
        violating,
    }
}

/// The numbers the loom test prints on one line, by key.
pub(crate) fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

/// Runs the loom test in a child cargo; returns its `xcheck` and `exhaust` lines.
pub(crate) fn run_loom() -> Result<Vec<String>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = root();
    eprintln!("loom: {LOOM_COMMAND}");
    let out = Command::new(cargo)
        .current_dir(&root)
        .env("RUSTFLAGS", "--cfg loom")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", root.join("target/loom"))
        .args([
            "test",
            "-p",
            "mcsim-models",
            "--test",
            "loom",
            "--release",
            "--",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        return Err(format!(
            "the loom test failed ({}):\n{stdout}\n{}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    // Test names and results share lines with the printed rows.
    Ok(stdout
        .lines()
        .filter_map(|l| {
            l.find("xcheck ")
                .or_else(|| l.find("exhaust "))
                .map(|i| l[i..].to_string())
        })
        .collect())
}

/// Shuttle iterations in one run of `scheduler`, and the violating ones.
pub(crate) fn shuttle_run<S: shuttle::scheduler::Scheduler + 'static>(
    scheduler: S,
    variant: CounterVariant,
) -> (usize, usize) {
    let violations = Arc::new(AtomicUsize::new(0));
    let n = Runner::new(scheduler, Config::default()).run(counter_model(
        variant,
        3,
        violations.clone(),
    ));
    (n, violations.load(Ordering::Relaxed))
}

pub(crate) fn section_exhaust(md: &mut String, loom: Option<&[String]>) {
    writeln!(
        md,
        "## 1. Exhausting the 3-client counters\n\n\
         Every interleaving of 3 clients incrementing once (`increments = 1`, latency window \
         `[100, 100000]` µs, no faults), every execution run to the end (violations counted, \
         not stopping at the first). mcsim times are the median of repeated runs of the bare \
         dfs loop (`execute_into` + `Dfs`); `explore()` adds replaying and shrinking the first \
         counterexample. Loom and shuttle explore thread interleavings at every \
         synchronization operation (spawn, each lock attempt, yield, join), not only at \
         memcached calls.\n\n\
         | workload | checker | executions | cut short | violating | wall time |\n\
         |---|---|---:|---:|---:|---:|"
    )
    .unwrap();
    for (name, variant) in [
        ("get-set", CounterVariant::GetSet),
        ("incr-add", CounterVariant::IncrAdd),
    ] {
        let s = counter_scenario(name);
        for (label, reduce) in [
            ("mcsim dfs, sleep-set reduction", true),
            ("mcsim dfs, no reduction", false),
        ] {
            eprintln!("exhaust counter/{name}: {label}");
            let (x, t) = timed(|| dfs_loop(&s, reduce));
            writeln!(
                md,
                "| counter/{name} | {label} | {} | {} | {} | {} |",
                x.executions,
                x.pruned,
                x.violating,
                ms(t)
            )
            .unwrap();
            let options = ExploreOptions {
                reduce,
                keep_going: true,
                ..ExploreOptions::default()
            };
            let (r, t) = timed(|| explore(&s, &options, &mut |_| true));
            writeln!(
                md,
                "| counter/{name} | mcsim `explore()`, reduction {} | {} | {} | {} | {} |",
                if reduce { "on" } else { "off" },
                r.stats.executions,
                r.stats.pruned,
                r.failures,
                ms(t)
            )
            .unwrap();
        }
        match loom.and_then(|lines| {
            lines.iter().find(|l| {
                l.starts_with("exhaust ") && field(l, "exhaust").is_none() && {
                    l.split_whitespace().nth(1) == Some(&format!("counter/{name}"))
                }
            })
        }) {
            Some(l) => writeln!(
                md,
                "| counter/{name} | loom 0.7 (`--cfg loom`, `models/tests/loom.rs`) | {} | – | {} | {} ms |",
                field(l, "loom_executions").unwrap_or("?"),
                field(l, "loom_violating").unwrap_or("?"),
                field(l, "loom_ms").unwrap_or("?"),
            )
            .unwrap(),
            None => writeln!(
                md,
                "| counter/{name} | loom 0.7 | not run | | | |"
            )
            .unwrap(),
        }
        eprintln!("exhaust counter/{name}: shuttle dfs");
        let t = Instant::now();
        let (n, bad) = shuttle_run(DfsScheduler::new(Some(SHUTTLE_DFS_CAP), false), variant);
        let t = t.elapsed();
        let n = if n >= SHUTTLE_DFS_CAP {
            format!("stopped at {n}, not exhausted")
        } else {
            n.to_string()
        };
        writeln!(
            md,
            "| counter/{name} | shuttle 0.9 `DfsScheduler` | {n} | – | {bad} | {} |",
            ms(t)
        )
        .unwrap();
    }
}
