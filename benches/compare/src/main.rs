//! `compare`: mcsim, loom and shuttle side by side on the same recipes, in one run.
//!
//! ```text
//! cargo run --release -p mcsim-compare --bin compare [-- --no-loom] [--seeds N] [--out PATH]
//! ```
//!
//! 1. Exhausting the 3-client get/set and incr/add counters: mcsim `dfs` with and without
//!    reduction (timed here), loom (the `exhaust_counters` case of `models/tests/loom.rs`,
//!    run as a child `cargo test` with `--cfg loom`; its printed counts and times are read
//!    back), shuttle's `DfsScheduler`.
//! 2. Executions per second on the 3-client get/set and incr/add counters, one thread:
//!    mcsim `random` and `pct` against shuttle's random and PCT schedulers, and the same
//!    recipe code and server calls run with no checker at all
//!    ([`mcsim_compare::counter_direct`]), the ceiling for any checker on the workload,
//!    and under a minimal scheduler ([`mcsim_compare::counter_minimal`]).
//! 3. Executions until the first violation, over many seeds, for every scenario in
//!    `scenarios/` that expects a violation (mcsim `random`).
//! 4. The loom cross-check table: every case of `models/tests/loom.rs`, loom's verdict and
//!    executions next to `mcsim explore`'s.
//!
//! Writes `reports/bench.md` (or `--out`) and prints it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use std::cell::Cell;
use std::rc::Rc;

use mcsim::exec::{ExecConfig, Sim, execute};
use mcsim::explore::{Dfs, Pct, Random, Strategy};
use mcsim::run::{ExploreOptions, explore};
use mcsim::scenario::Scenario;
use mcsim::{Failure, Server, Skew};
use mcsim_compare::{counter_direct, counter_minimal, counter_model};
use mcsim_models::RECIPES;
use mcsim_models::counter::{Counter, CounterVariant};
use shuttle::scheduler::{DfsScheduler, PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

/// The command that regenerates the report.
const COMMAND: &str = "cargo run --release -p mcsim-compare --bin compare";

/// The loom part, as the binary runs it.
const LOOM_COMMAND: &str = "RUSTFLAGS=\"--cfg loom\" CARGO_TARGET_DIR=target/loom \
     cargo test -p mcsim-models --test loom --release -- --nocapture --test-threads=1";

/// Executions after which shuttle's `DfsScheduler` (which has no partial-order reduction)
/// is stopped.
const SHUTTLE_DFS_CAP: usize = 1_000_000;

/// Wall time each throughput measurement aims for.
const RATE_TARGET: Duration = Duration::from_secs(2);

struct Args {
    loom: bool,
    seeds: u64,
    out: PathBuf,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        loom: true,
        seeds: 100,
        out: root().join("reports/bench.md"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-loom" => args.loom = false,
            "--seeds" => {
                args.seeds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seeds takes a number")?
            }
            "--out" => args.out = it.next().ok_or("--out takes a path")?.into(),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}

/// The scenario the loom test builds for the same workload.
fn counter_scenario(variant: &str) -> Scenario {
    let text = format!(
        "recipe = \"counter\"\nvariant = \"{variant}\"\nclients = 3\n[params]\n\
         increments = 1\n[timing]\nlatency_us = [100, 100000]\n[expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("compare.toml"), &text, RECIPES).expect("valid scenario")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// Runs `f` repeatedly (at least 5 times, up to 200 or half a second) and returns its last
/// result with the median time.
fn timed<T>(mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut times = Vec::new();
    let start = Instant::now();
    loop {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        if times.len() >= 200 || (times.len() >= 5 && start.elapsed() > Duration::from_millis(500))
        {
            return (out, median(times));
        }
    }
}

/// Executions, pruned executions and violating executions of one exhaustive dfs.
#[derive(Debug, Clone, Copy)]
struct Exhausted {
    executions: u64,
    pruned: u64,
    violating: u64,
}

/// The bare exploration loop: what `mcsim::run::explore` does without replaying and
/// shrinking the first counterexample.
fn dfs_loop(s: &Scenario, reduce: bool) -> Exhausted {
    let mut dfs = Dfs::new(None, reduce);
    let mut violating = 0;
    for i in 0.. {
        let e = execute(&s.config, &*s.setup, &mut dfs, i);
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
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

/// Runs the loom test in a child cargo; returns its `xcheck` and `exhaust` lines.
fn run_loom() -> Result<Vec<String>, String> {
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
fn shuttle_run<S: shuttle::scheduler::Scheduler + 'static>(
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

/// Executions per second: runs `batch(n)` (which returns the violating executions) with
/// growing `n` until one run takes a tenth of [`RATE_TARGET`], then once sized to take it.
struct Rate {
    executions: usize,
    violating: usize,
    elapsed: Duration,
}

impl Rate {
    fn per_sec(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64()
    }
}

fn rate(mut batch: impl FnMut(usize) -> usize) -> Rate {
    let mut n = 50;
    loop {
        let t = Instant::now();
        batch(n);
        let e = t.elapsed();
        if e >= RATE_TARGET / 10 {
            let scaled = (n as f64 * RATE_TARGET.as_secs_f64() / e.as_secs_f64()) as usize;
            let t = Instant::now();
            let violating = batch(scaled.max(n));
            return Rate {
                executions: scaled.max(n),
                violating,
                elapsed: t.elapsed(),
            };
        }
        n *= 2;
    }
}

fn mcsim_rate(
    config: &ExecConfig,
    setup: &dyn Fn(&mut Sim),
    mut make: impl FnMut() -> Box<dyn Strategy>,
) -> Rate {
    rate(|n| {
        let mut strategy = make();
        (0..n as u64)
            .filter(|&i| {
                !execute(config, setup, strategy.as_mut(), i)
                    .verdict
                    .is_pass()
            })
            .count()
    })
}

/// The shuttle model's workload under mcsim: `clients` clients incrementing once with
/// the recipe, and one end check (the counter equals the increments), without the
/// scenario harness's history, linearizability check and metrics.
fn bare_counter(variant: CounterVariant, clients: usize) -> impl Fn(&mut Sim) {
    move |sim: &mut Sim| {
        for _ in 0..clients {
            sim.client(Skew::default(), move |mc| async move {
                let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
                counter.increment(&mc, 1).await
            });
        }
        let key = Counter::new("views", variant, Rc::default()).key().clone();
        sim.at_end("counter.no_lost_increments", move |view| {
            let value = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
            if value == clients as u64 {
                Ok(())
            } else {
                Err(Failure::new("lost increments"))
            }
        });
    }
}

/// Executions until the first violation for one seed, or `None` within `cap`.
fn first_violation(s: &Scenario, seed: u64, cap: u64) -> Option<(u64, String)> {
    let mut strategy = Random::new(seed);
    (0..cap).find_map(|i| {
        let e = execute(&s.config, &*s.setup, &mut strategy, i);
        (!e.verdict.is_pass()).then(|| (i + 1, e.verdict.label()))
    })
}

fn section_exhaust(md: &mut String, loom: Option<&[String]>) {
    writeln!(
        md,
        "## 1. Exhausting the 3-client counters\n\n\
         Every interleaving of 3 clients incrementing once (`increments = 1`, latency window \
         `[100, 100000]` µs, no faults), every execution run to the end (violations counted, \
         not stopping at the first). mcsim times are the median of repeated runs of the bare \
         dfs loop (`execute` + `Dfs`); `explore()` adds replaying and shrinking the first \
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

/// Executions per second on one 3-client counter, mcsim against shuttle, and the rates of
/// the same work under a minimal scheduler and with no checker at all.
fn section_rate(md: &mut String, name: &str, variant: CounterVariant) -> Rates {
    writeln!(
        md,
        "\n### counter/{name}\n\n\
         | checker | executions | violating | wall time | executions/s |\n\
         |---|---:|---:|---:|---:|"
    )
    .unwrap();
    let s = counter_scenario(name);
    let mut row = |label: &str, r: &Rate| {
        writeln!(
            md,
            "| {label} | {} | {} ({:.0}%) | {} | {:.0} |",
            r.executions,
            r.violating,
            100.0 * r.violating as f64 / r.executions as f64,
            ms(r.elapsed),
            r.per_sec()
        )
        .unwrap();
    };
    let bare = bare_counter(variant, 3);
    eprintln!("rate counter/{name}: mcsim random");
    let random = mcsim_rate(&s.config, &bare, || Box::new(Random::new(0)));
    row("mcsim `random`, same workload as shuttle", &random);
    eprintln!("rate counter/{name}: mcsim pct");
    let pct = mcsim_rate(&s.config, &bare, || Box::new(Pct::new(0, 3, 6)));
    row("mcsim `pct` (depth 3), same workload as shuttle", &pct);
    eprintln!("rate counter/{name}: mcsim random, scenario harness");
    let full = mcsim_rate(&s.config, &*s.setup, || Box::new(Random::new(0)));
    row(
        "mcsim `random`, scenario harness (+ history, linearizability check, metrics)",
        &full,
    );
    eprintln!("rate counter/{name}: shuttle random");
    let sh_random = rate(|n| shuttle_run(RandomScheduler::new_from_seed(0, n), variant).1);
    row("shuttle `check_random` (`RandomScheduler`)", &sh_random);
    eprintln!("rate counter/{name}: shuttle pct");
    let sh_pct = rate(|n| shuttle_run(PctScheduler::new_from_seed(0, 3, n), variant).1);
    row("shuttle `check_pct` (`PctScheduler`, depth 3)", &sh_pct);
    eprintln!("rate counter/{name}: minimal scheduler");
    let mut server = Server::with_defaults();
    let mut seed = 0;
    let minimal = rate(|n| {
        (0..n)
            .filter(|_| {
                seed += 1;
                !counter_minimal(variant, 3, &mut server, seed)
            })
            .count()
    });
    row(
        "minimal scheduler: a uniform pick among parked calls, nothing else (see above)",
        &minimal,
    );
    eprintln!("rate counter/{name}: no checker");
    let floor = rate(|n| {
        (0..n)
            .filter(|_| !counter_direct(variant, 3, &mut server))
            .count()
    });
    row(
        "no checker: the clients one after another, every call executed at once (floor)",
        &floor,
    );
    let rates = Rates {
        random: random.per_sec() / sh_random.per_sec(),
        pct: pct.per_sec() / sh_pct.per_sec(),
        ceiling: floor.per_sec() / sh_random.per_sec(),
        minimal: minimal.per_sec() / sh_random.per_sec(),
    };
    writeln!(
        md,
        "\nSame workload: `random` {:.1}× shuttle's random scheduler, `pct` {:.1}× its PCT \
         scheduler. With no checker, the shared work alone runs at {:.1}× shuttle's random \
         scheduler; it takes {:.0}% of mcsim `random`'s time. The minimal scheduler runs at \
         {:.1}× shuttle's random scheduler.",
        rates.random,
        rates.pct,
        rates.ceiling,
        100.0 * random.per_sec() / floor.per_sec(),
        rates.minimal
    )
    .unwrap();
    rates
}

/// Executions-per-second ratios on one counter: mcsim over shuttle, and the no-checker
/// floor (the most any checker could reach) and the minimal scheduler over shuttle's
/// random scheduler.
struct Rates {
    random: f64,
    pct: f64,
    ceiling: f64,
    minimal: f64,
}

fn section_first_violation(md: &mut String, seeds: u64) {
    writeln!(
        md,
        "\n## 3. Executions until the first violation (mcsim `random`)\n\n\
         Every scenario in `scenarios/` that expects a violation (sweep files are skipped: \
         their verdict is over several points). For each of {seeds} seeds `k` (strategy \
         `Random::new(k << 32)`, so seeds share no executions) the executions up to and \
         including the first one whose verdict is not `pass`, capped at the scenario's own \
         budget (`[explore] executions`). Median and 90th percentile over seeds; a seed \
         that finds nothing within the cap counts as more than the cap. `label ok`: seeds \
         whose first failure is the verdict the scenario expects.\n\n\
         | scenario | expects | cap | found | label ok | median | p90 | mean (found) | wall time |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.lines().any(|l| l.trim() == "[sweep]") {
            continue;
        }
        let s = match Scenario::load(&path, RECIPES) {
            Ok(s) => s,
            Err(e) => {
                writeln!(
                    md,
                    "| {} | (does not load: {e}) | | | | | | | |",
                    path.display()
                )
                .unwrap();
                continue;
            }
        };
        if s.expect == "pass" {
            continue;
        }
        eprintln!("first violation: {}", s.name);
        let cap = s.executions.max(1);
        let t = Instant::now();
        let runs: Vec<Option<(u64, String)>> = (0..seeds)
            .map(|k| first_violation(&s, k << 32, cap))
            .collect();
        let wall = t.elapsed();
        let found: Vec<u64> = runs.iter().flatten().map(|(n, _)| *n).collect();
        let label_ok = runs
            .iter()
            .flatten()
            .filter(|(_, l)| *l == s.expect)
            .count();
        let mut all: Vec<u64> = runs
            .iter()
            .map(|r| r.as_ref().map_or(u64::MAX, |(n, _)| *n))
            .collect();
        all.sort();
        let at = |q: f64| {
            let v = all[((all.len() as f64 - 1.0) * q).round() as usize];
            if v == u64::MAX {
                format!("> {cap}")
            } else {
                v.to_string()
            }
        };
        let mean = if found.is_empty() {
            "–".to_string()
        } else {
            format!(
                "{:.1}",
                found.iter().sum::<u64>() as f64 / found.len() as f64
            )
        };
        writeln!(
            md,
            "| {} | `{}` | {cap} | {}/{seeds} | {label_ok} | {} | {} | {mean} | {} |",
            s.name,
            s.expect,
            found.len(),
            at(0.5),
            at(0.9),
            ms(wall)
        )
        .unwrap();
    }
}

fn section_xcheck(md: &mut String, loom: &[String]) -> bool {
    writeln!(
        md,
        "\n## 4. Loom cross-check (`models/tests/loom.rs`)\n\n\
         The same recipe code as loom threads over `mcsim::loom::LoomServer` and as \
         `mcsim explore` of the equivalent scenario (latency window `[100, 100000]` µs, no \
         faults). Both stop at the first violation; executions are those run up to it (or \
         all of them, for a pass).\n\n\
         | case | clients | expected | loom | loom executions | loom time | explore | explore executions (reduction / none) | explore time | agree |\n\
         |---|---:|---|---|---:|---:|---|---:|---:|---|"
    )
    .unwrap();
    let mut all_agree = true;
    for l in loom.iter().filter(|l| l.starts_with("xcheck ")) {
        let f = |k| field(l, k).unwrap_or("?");
        let agree = f("loom") == f("explore");
        all_agree &= agree;
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} ms | {} | {} / {} | {} ms | {} |",
            l.split_whitespace().nth(1).unwrap_or("?"),
            f("clients"),
            f("expect"),
            f("loom"),
            f("loom_executions"),
            f("loom_ms"),
            f("explore"),
            f("explore_executions"),
            f("explore_noreduction_executions"),
            f("explore_ms"),
            if agree { "yes" } else { "**no**" }
        )
        .unwrap();
    }
    all_agree
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("compare: {e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let loom = if args.loom {
        match run_loom() {
            Ok(lines) => Some(lines),
            Err(e) => {
                eprintln!("compare: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut md = format!(
        "# mcsim, loom and shuttle on the same recipes\n\n\
         Regenerate with:\n\n```\n{COMMAND}\n```\n\n\
         It measures everything below in one run: mcsim and shuttle in-process (release \
         build, one thread), and loom by running `{LOOM_COMMAND}` from the workspace root and \
         reading the lines that test prints (`--no-loom` skips it). Times are wall-clock on a \
         machine with {cores} cores shared with other jobs: compare rows against each other, \
         not against other machines. Versions: loom 0.7, shuttle 0.9.\n\n"
    );
    section_exhaust(&mut md, loom.as_deref());
    writeln!(
        md,
        "\n## 2. Executions per second, 3-client counters, one thread\n\n\
         Each checker runs as many executions as fit in about {} s (sized from a \
         calibration run), single-threaded; shuttle runs its threads as coroutines on one OS \
         thread. \"Same workload\": the recipe code, three clients incrementing once, and one \
         end check (the counter equals the increments), nothing else, as the shuttle model \
         runs it. PCT at depth 3 on both sides (mcsim: 6 steps estimated). The last row of \
         each table runs that recipe code and its server calls with no checker at all: the \
         clients one after another, every call executed the moment it is made. Every checker \
         repeats that work, so its rate bounds what any of them can reach. A sequential run \
         makes the fewest calls (on incr/add, interleavings add misses and retries), so the \
         bound is loose there. The row before it runs the workload under a minimal \
         scheduler (`counter_minimal` in `benches/compare/src/floor.rs`): at each step one \
         parked call, picked uniformly, executes a tick later and its client is polled, \
         with none of the latency windows, faults, invariant checks, panic catching, \
         livelock budget or replayable schedule record that mcsim's executor carries: what \
         scheduling alone costs.",
        RATE_TARGET.as_secs()
    )
    .unwrap();
    let gs_rates = section_rate(&mut md, "get-set", CounterVariant::GetSet);
    let ia_rates = section_rate(&mut md, "incr-add", CounterVariant::IncrAdd);
    let (random_ratio, pct_ratio) = (gs_rates.random, gs_rates.pct);
    let random_ratio_ia = ia_rates.random;
    section_first_violation(&mut md, args.seeds);
    let agree = match &loom {
        Some(lines) => section_xcheck(&mut md, lines),
        None => true,
    };
    let gs = counter_scenario("get-set");
    let (x, t) = timed(|| dfs_loop(&gs, true));
    writeln!(
        md,
        "\n## Targets\n\n\
         - Exhaust the 3-client get/set counter in ≤ 90 executions and < 10 ms: {} \
         executions ({} more cut short), {} → **{}**.\n\
         - `random` ≥ 10× shuttle's executions per second on one core: {random_ratio:.1}× \
         on the get/set counter ({random_ratio_ia:.1}× on incr/add; `pct` vs shuttle PCT: \
         {pct_ratio:.1}×) → **{}**. With no checker at all, the same work runs at \
         {:.1}× shuttle's random scheduler on get/set ({:.1}× on incr/add): the most any \
         scheduler could reach with this recipe code and this server. A minimal scheduler \
         with none of mcsim's checking reaches {:.1}× ({:.1}× on incr/add).\n{}\
         \nWhole run: {:.0} s.",
        x.executions,
        x.pruned,
        ms(t),
        if x.executions + x.pruned <= 90 && t < Duration::from_millis(10) {
            "met"
        } else {
            "not met"
        },
        if random_ratio >= 10.0 {
            "met"
        } else {
            "not met"
        },
        gs_rates.ceiling,
        ia_rates.ceiling,
        gs_rates.minimal,
        ia_rates.minimal,
        match &loom {
            Some(_) if agree => "- Loom and `mcsim explore` agree on every cross-check case.\n",
            Some(_) => "- Loom and `mcsim explore` **disagree** on some case (see §4).\n",
            None => "",
        },
        started.elapsed().as_secs_f64()
    )
    .unwrap();
    if let Err(e) = std::fs::write(&args.out, &md) {
        eprintln!("compare: cannot write {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    println!("{md}");
    eprintln!("wrote {}", args.out.display());
    ExitCode::SUCCESS
}
