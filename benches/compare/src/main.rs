//! `compare`: mcsim, loom and shuttle side by side on the same recipes, in one run.
//!
//! ```text
//! cargo build --release && cargo run --release -p mcsim-compare --bin compare \
//!     [-- --no-loom] [--seeds N] [--out PATH] [--gate-budget N] [--serve-commands N]
//!     [--verdicts-only | --hard-only | --samplers-only | --gate-only | --full-size-only | --serve-only
//!      | --instructions-only | --overhead-only | --profile-hunt SCENARIO | --profile-rate ROW [--executions N]
//!      | --soak-only [--soak-seconds N]]
//! ```
//!
//! `--profile-rate` runs one rate row for about 3 s (or exactly `--executions N`), for
//! callgrind: `get-set`, `incr-add` (mcsim `random`), `fixed` (an execution with no
//! clients), `minimal`, `minimal-incr-add` (the minimal scheduler), `floor`,
//! `floor-incr-add` (no checker). §2 counts the instructions of each this way.
//! `--rate-rounds NAME [--first-round N] [--rounds N]` measures one rate table's rows
//! and prints each round: §2 runs its rounds in child processes this way.
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
//! 5. The simulated server alone, commands per second; 6. peak memory across seeds.
//! 7. Time to the first violation on the bug corpus ([`mcsim_compare::corpus`]): mcsim's
//!    strategies against shuttle's schedulers on the same bugs, with the geometric mean;
//!    7b. the same on the bugs `random` needs at least 10,000 executions for
//!    (`--hard-only`).
//! 8. The gate at a multiple of its budget on one job and on every core, and four shards
//!    merged (runs the `mcsim` binary beside this one: `cargo build --release` first).
//! 9. `mcsim explore` of every scenario at its full client count, 30 s each.
//! 10. `mcsim serve` against memcached under load: RSS over a long pipelined run, large
//!     multi-gets with a small get timed meanwhile, connection churn, memcslap
//!     (`--serve-only`, `--serve-commands N`).
//! 11. The sampling strategies (`swarm`, `random`, `pct`, `pos`) on every bug of the suite:
//!     how many executions of 2000 each fails (`--samplers-only`).
//! 12. `mcsim test` on a real Python program: a command's time released in turn against
//!     the same program uncontrolled on memcached, the pytest add lock's executions per
//!     second, a lost reply's reconnect (`--program-only`).
//! 13. `mcsim serve` against memcached at `-m 64` over ten rounds of memcslap and of
//!     mixed-size evicting stores (the resident set each round), and a framing soak that
//!     must leave serve answering (`--soak-only`, `--soak-seconds N`; not in the full run).
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

use mcsim::exec::{ExecConfig, Execution, Runs, Sim};
use mcsim::exhaustive::Dfs;
use mcsim::exhaustive::{ExploreOptions, explore};
use mcsim::explore::{Pct, Random, Strategy};
use mcsim::scenario::Scenario;
use mcsim::{Failure, Server, Skew};
use mcsim_compare::{counter_direct, counter_minimal, counter_model};
use mcsim_models::RECIPES;
use mcsim_models::counter::{Counter, CounterVariant};
use shuttle::scheduler::{DfsScheduler, PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

/// The command that regenerates the report.
pub(crate) const COMMAND: &str =
    "cargo build --release && cargo run --release -p mcsim-compare --bin compare";

/// The loom part, as the binary runs it.
pub(crate) const LOOM_COMMAND: &str = "RUSTFLAGS=\"--cfg loom\" CARGO_TARGET_DIR=target/loom \
     cargo test -p mcsim-models --test loom --release -- --nocapture --test-threads=1";

/// Executions after which shuttle's `DfsScheduler` (which has no partial-order reduction)
/// is stopped.
pub(crate) const SHUTTLE_DFS_CAP: usize = 1_000_000;

/// Seeds of each time-to-violation median.
pub(crate) const VERDICT_SEEDS: u64 = 21;

/// Seeds of each time-to-violation median on the hard bugs (§7b): each hunt runs tens of
/// thousands of executions.
pub(crate) const HARD_SEEDS: u64 = 7;

/// Wall time each throughput measurement aims for.
pub(crate) const RATE_TARGET: Duration = Duration::from_secs(2);

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The scenario the loom test builds for the same workload.
pub(crate) fn counter_scenario(variant: &str) -> Scenario {
    let text = format!(
        "recipe = \"counter\"\nvariant = \"{variant}\"\nclients = 3\n[params]\n\
         increments = 1\n[timing]\nlatency_us = [100, 100000]\n[expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("compare.toml"), &text, RECIPES).expect("valid scenario")
}

/// Every scenario file in `scenarios/` that is not a sweep, sorted.
pub(crate) fn single_scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.retain(|p| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        !text.lines().any(|l| l.trim() == "[sweep]")
    });
    files.sort();
    files
}

/// The scenario in `path`, or `None` once a row of a table of `columns` columns says it
/// does not load (`name` in the first cell, the error in the second, the rest blank): a
/// scenario that no longer loads stays a row of every section, not a silent gap.
pub(crate) fn load_or_row(
    md: &mut String,
    path: &Path,
    name: impl std::fmt::Display,
    columns: usize,
) -> Option<Scenario> {
    match Scenario::load(path, RECIPES) {
        Ok(s) => Some(s),
        Err(e) => {
            let blanks = " |".repeat(columns.saturating_sub(2));
            writeln!(md, "| {name} | (does not load: {e}) |{blanks}").unwrap();
            None
        }
    }
}

pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A ratio as the report prints it: `3.4×`, or `unbounded` for a round whose divisor
/// read zero or less.
pub(crate) fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}×")
    } else {
        "unbounded".into()
    }
}

pub(crate) fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// Runs `f` repeatedly (at least 5 times, up to 200 or half a second) and returns its last
/// result with the median time.
pub(crate) fn timed<T>(mut f: impl FnMut() -> T) -> (T, Duration) {
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

mod args;
mod exhaust;
mod fullsize;
mod gate;
mod instructions;
mod layouts;
mod memory;
mod program;
mod rates;
mod samplers;
mod serve_load;
mod server;
mod soak;
mod verdict;
mod violations;
mod xcheck;

use args::*;
#[allow(unused_imports)]
use exhaust::*;
#[allow(unused_imports)]
use fullsize::*;
#[allow(unused_imports)]
use gate::*;
#[allow(unused_imports)]
use instructions::*;
#[allow(unused_imports)]
use memory::*;
#[allow(unused_imports)]
use program::*;
use rates::*;
use samplers::*;
#[allow(unused_imports)]
use serve_load::*;
#[allow(unused_imports)]
use server::*;
use soak::*;
#[allow(unused_imports)]
use verdict::*;
#[allow(unused_imports)]
use violations::*;
#[allow(unused_imports)]
use xcheck::*;

/// The target lines of the report at `path` before it is overwritten (the speed lines
/// only), so a regenerated report shows the figures it replaced.
fn previous_targets(path: &Path) -> Option<String> {
    let old = std::fs::read_to_string(path).ok()?;
    let targets = old.split("\n## Targets\n").nth(1)?;
    let lines: Vec<&str> = targets
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| {
            l.starts_with("- `random`")
                || l.starts_with("- `pct`")
                || l.starts_with("- The simulated server")
                || l.starts_with("- Time to first violation")
                || l.starts_with("- Executor overhead")
                || l.starts_with("- Proofs at full size")
                || l.starts_with("- The gate at")
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n") + "\n")
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
    if let Some(name) = &args.profile_hunt {
        return profile_hunt(name);
    }
    if args.executions.is_some() && args.profile_rate.is_none() {
        eprintln!("compare: --executions counts the executions of --profile-rate ROW");
        return ExitCode::from(2);
    }
    if let Some((name, first, rounds)) = &args.rate_rounds {
        return layouts::print_rounds(name, *first, *rounds);
    }
    if let Some(variant) = &args.profile_rate {
        return profile_rate(variant, args.executions);
    }
    if args.gate_only {
        let mut md = String::new();
        if let Err(e) = section_gate(&mut md, args.gate_budget.max(1)) {
            eprintln!("compare: {e}");
            return ExitCode::FAILURE;
        }
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.serve_only {
        let mut md = String::new();
        if let Err(e) = section_serve(&mut md, args.serve_commands) {
            eprintln!("compare: {e}");
            return ExitCode::FAILURE;
        }
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.full_size_only {
        let mut md = String::new();
        section_full_size(&mut md);
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.overhead_only {
        let mut md = String::new();
        let gs = section_rate(&mut md, "get-set", layouts::measure_in_processes("get-set"));
        let ia = section_rate(
            &mut md,
            "incr-add",
            layouts::measure_in_processes("incr-add"),
        );
        section_instructions(&mut md, Some([gs.overhead_ns, ia.overhead_ns]));
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.instructions_only {
        let mut md = String::new();
        section_instructions(&mut md, None);
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.program_only {
        let mut md = String::new();
        if let Err(e) = section_program(&mut md) {
            eprintln!("compare: {e}");
            return ExitCode::FAILURE;
        }
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.soak_only {
        let mut md = String::new();
        match section_soak(&mut md, args.soak_seconds) {
            Ok(met) => {
                println!("{md}");
                return if met {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                };
            }
            Err(e) => {
                eprintln!("compare: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if args.samplers_only {
        let mut md = String::new();
        section_samplers(&mut md);
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.verdicts_only {
        let mut md = String::new();
        section_time_to_violation(&mut md, VERDICT_SEEDS);
        println!("{md}");
        return ExitCode::SUCCESS;
    }
    if args.hard_only {
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let mut md = format!(
            "# Bugs only a search finds: mcsim and shuttle\n\n\
             Regenerate with:\n\n```\n{COMMAND} -- --hard-only\n```\n\n\
             §7b of the full report (`reports/bench.md`), run alone. Wall-clock times on a \
             machine with {cores} cores: compare rows against each other, not against other \
             machines. Versions: shuttle 0.9.\n"
        );
        section_hard_bugs(&mut md, HARD_SEEDS);
        let out = root().join("reports/hard-bugs.md");
        if let Err(e) = std::fs::write(&out, &md) {
            eprintln!("compare: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
        println!("{md}");
        eprintln!("wrote {}", out.display());
        return ExitCode::SUCCESS;
    }
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
         Each row runs about {} s in all, single-threaded, in {} interleaved rounds: every \
         round runs every row once (each sized by a calibration run, each round on other \
         seeds), so a slow patch of a shared machine slows every row alike. The rounds run \
         in {} child processes of this binary, a share each: where the system lays out a \
         process's memory moves these times from one process to the next more than the \
         rounds of one process differ, so every figure pools the rounds of several \
         layouts. Executions/s \
         is the median over rounds, and every ratio below is the median of the rounds' \
         ratios. Shuttle runs its threads as coroutines on one OS thread. \"Same \
         workload\": the recipe code, three clients incrementing once, and one \
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
        RATE_TARGET.as_secs(),
        ROUNDS,
        layouts::PROCESSES
    )
    .unwrap();
    let gs_rates = section_rate(&mut md, "get-set", layouts::measure_in_processes("get-set"));
    let ia_rates = section_rate(
        &mut md,
        "incr-add",
        layouts::measure_in_processes("incr-add"),
    );
    let instructions =
        section_instructions(&mut md, Some([gs_rates.overhead_ns, ia_rates.overhead_ns]));
    let (random_ratio, pct_ratio) = (gs_rates.random, gs_rates.pct);
    let random_ratio_ia = ia_rates.random;
    section_first_violation(&mut md, args.seeds);
    let agree = match &loom {
        Some(lines) => section_xcheck(&mut md, lines),
        None => true,
    };
    let server_rate = section_server(&mut md);
    section_memory(&mut md);
    let (ttv, bugs) = section_time_to_violation(&mut md, VERDICT_SEEDS);
    let hard = section_hard_bugs(&mut md, HARD_SEEDS);
    let gate = if args.gate_budget > 0 {
        match section_gate(&mut md, args.gate_budget) {
            Ok(g) => Some(g),
            Err(e) => {
                writeln!(md, "\n## 8. The gate at scale\n\nNot measured: {e}").unwrap();
                None
            }
        }
    } else {
        None
    };
    let (proved, provable) = section_full_size(&mut md);
    let serve = match section_serve(&mut md, args.serve_commands) {
        Ok(s) => Some(s),
        Err(e) => {
            writeln!(md, "\n## 10. `mcsim serve` under load\n\nNot measured: {e}").unwrap();
            None
        }
    };
    section_samplers(&mut md);
    if let Err(e) = section_program(&mut md) {
        writeln!(
            md,
            "\n## 12. `mcsim test` on a real program\n\nNot measured: {e}"
        )
        .unwrap();
    }
    let overhead = gs_rates.overhead.max(ia_rates.overhead);
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
         with none of mcsim's checking reaches {:.1}× ({:.1}× on incr/add). Were the \
         recipe code and the server free, mcsim's own overhead would still hold `random` \
         at {:.1}× on get/set ({:.1}× on incr/add): see \"What 10× asks\" in §2.\n\
         - `pct` ≥ 10× shuttle's PCT scheduler: {pct_ratio:.1}× → **{}**; at most \
         {:.1}× with free shared work.\n\
         - The simulated server ≥ 2 M commands/s on one core, realistic mix: {:.2} M → **{}**.\n{}\
         - Time to first violation: mcsim is {ttv:.1}× faster than shuttle (geometric mean \
         over {bugs} bugs); target ≥ 10× → **{}** (§7).\n\
         - Time to first violation on hard bugs: mcsim is {:.1}× faster than shuttle \
         (geometric mean over {} bugs; {:.1}× with mcsim's fastest strategy for each), \
         `random` needing ≥ {HARD} executions on {} of {}; target ≥ 10× on ≥ 5 hard bugs → \
         **{}** (§7b).\n\
         - Executor overhead: {} the minimal scheduler's (get/set {}, rounds {} to {}; \
         incr/add {}, rounds {} to {}{}); target ≤ 2× → **{}** (§2).\n\
         - Proofs at full size: {proved} of {provable} scenarios reach their verdict within \
         {} s → **{}** (§9).\n{}{}\
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
        gs_rates.random_bound,
        ia_rates.random_bound,
        if pct_ratio >= 10.0 { "met" } else { "not met" },
        gs_rates.pct_bound,
        server_rate / 1e6,
        if server_rate >= 2e6 { "met" } else { "not met" },
        match &loom {
            Some(_) if agree => "- Loom and `mcsim explore` agree on every cross-check case.\n",
            Some(_) => "- Loom and `mcsim explore` **disagree** on some case (see §4).\n",
            None => "",
        },
        if ttv >= 10.0 { "met" } else { "not met" },
        hard.default,
        hard.bugs,
        hard.best,
        hard.hard,
        hard.of,
        if hard.default >= 10.0 && hard.hard >= 5 {
            "met"
        } else {
            "not met"
        },
        times(overhead),
        times(gs_rates.overhead),
        times(gs_rates.overhead_spread.0),
        times(gs_rates.overhead_spread.1),
        times(ia_rates.overhead),
        times(ia_rates.overhead_spread.0),
        times(ia_rates.overhead_spread.1),
        instructions.map(|i| i.summary()).unwrap_or_default(),
        if overhead <= 2.0 { "met" } else { "not met" },
        FULL_SIZE_LIMIT.as_secs(),
        if proved == provable { "met" } else { "not met" },
        match gate {
            Some((speedup, _)) => format!(
                "- The gate at {}× its budget on every core: {speedup:.2}× faster than on one \
                 job; target ≥ 1.8× → **{}** (§8).\n",
                args.gate_budget,
                if speedup >= 1.8 { "met" } else { "not met" }
            ),
            None => String::new(),
        },
        match serve {
            Some([memory, multiget, churn, slap]) => {
                let met = |b: bool| if b { "met" } else { "not met" };
                format!(
                    "- `mcsim serve`: memory flat over the long run → **{}**; large multi-gets \
                     and a small get meanwhile within 3× memcached → **{}**; connection churn \
                     within 3× → **{}**; memcslap within 1.1× → **{}** (§10).\n",
                    met(memory),
                    met(multiget),
                    met(churn),
                    met(slap)
                )
            }
            None => String::new(),
        },
        started.elapsed().as_secs_f64()
    )
    .unwrap();
    if let Some(before) = previous_targets(&args.out) {
        writeln!(
            md,
            "\n## Before this run\n\nThe targets as the report this run replaced gave them:\n\n{before}"
        )
        .unwrap();
    }
    if let Err(e) = std::fs::write(&args.out, &md) {
        eprintln!("compare: cannot write {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    println!("{md}");
    eprintln!("wrote {}", args.out.display());
    ExitCode::SUCCESS
}
