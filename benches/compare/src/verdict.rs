//! Time to the first violation on the bug corpus ([`mcsim_compare::corpus`]): mcsim's
//! strategies on the scenario files against shuttle's schedulers on the same bugs written
//! as a shuttle user writes them.

#[allow(unused_imports)]
use super::*;

use mcsim::exhaustive::explore_seeking;
use mcsim::scenario::StrategyKind;
use mcsim_compare::corpus::{BUGS, Bug, Found, HARD_BUGS, ShuttleTest};
use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

/// Times `explore` (deterministic) is repeated for its median time.
const EXPLORE_REPEATS: usize = 5;

/// Executions after which a search counts as not finding the bug.
const CAP: usize = 200_000;

/// A shuttle scheduler that stops before the execution after the one that raised `found`.
struct UntilFound<S> {
    inner: S,
    found: Found,
}

impl<S: Scheduler> Scheduler for UntilFound<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.found.load(Ordering::Relaxed) {
            return None;
        }
        self.inner.new_execution()
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        self.inner.next_task(runnable, current, is_yielding)
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}

/// One search until the first violation: its executions (`None`: not within the cap) and
/// wall time.
#[derive(Clone, Copy)]
struct Hunt {
    executions: Option<u64>,
    wall: Duration,
}

fn shuttle_hunt<S: Scheduler + 'static>(
    test: fn(Found) -> ShuttleTest,
    make: impl FnOnce() -> S,
) -> Hunt {
    let found = Found::default();
    let t = Instant::now();
    let scheduler = UntilFound {
        inner: make(),
        found: found.clone(),
    };
    let mut config = Config::default();
    config.silence_warnings = true;
    let n = Runner::new(scheduler, config).run(test(found.clone()));
    let wall = t.elapsed();
    Hunt {
        executions: found.load(Ordering::Relaxed).then_some(n as u64),
        wall,
    }
}

fn mcsim_hunt(s: &Scenario, mut strategy: Box<dyn Strategy>) -> Hunt {
    let t = Instant::now();
    let mut e = Execution::default();
    let runs = Runs::new(&s.config);
    let hit = (0..CAP as u64).find(|&i| {
        runs.execute_into(&*s.setup, &mut *strategy, i, &mut e);
        !e.verdict.is_pass()
    });
    Hunt {
        executions: hit.map(|i| i + 1),
        wall: t.elapsed(),
    }
}

/// `mcsim explore` with the scenario's bounds, to its verdict (replay and shrinking of
/// the counterexample included).
fn explore_hunt(s: &Scenario) -> Hunt {
    let options = ExploreOptions::for_scenario(s);
    let t = Instant::now();
    let r = explore_seeking(s, &options, Some(&s.expect), &mut |_| true);
    Hunt {
        executions: r
            .failure
            .is_some()
            .then(|| r.stats.executions + r.stats.pruned),
        wall: t.elapsed(),
    }
}

/// The medians of a strategy's hunts over seeds.
struct Medians {
    found: usize,
    seeds: usize,
    executions: Option<u64>,
    wall: Duration,
}

fn medians(hunts: &[Hunt]) -> Medians {
    let mut execs: Vec<u64> = hunts
        .iter()
        .map(|h| h.executions.unwrap_or(u64::MAX))
        .collect();
    execs.sort();
    // A hunt that found nothing counts as slower than every one that did.
    let mut walls: Vec<Duration> = hunts
        .iter()
        .map(|h| h.executions.map_or(Duration::MAX, |_| h.wall))
        .collect();
    walls.sort();
    let mid = hunts.len() / 2;
    Medians {
        found: hunts.iter().filter(|h| h.executions.is_some()).count(),
        seeds: hunts.len(),
        executions: (execs[mid] != u64::MAX).then_some(execs[mid]),
        wall: walls[mid],
    }
}

fn cell(m: &Medians) -> String {
    if m.wall == Duration::MAX {
        return format!("not found ({}/{})", m.found, m.seeds);
    }
    let found = if m.found < m.seeds {
        format!(", {}/{} found", m.found, m.seeds)
    } else {
        String::new()
    };
    format!(
        "{} ({} ex.{found})",
        us(m.wall),
        m.executions.map_or("–".into(), |e| e.to_string())
    )
}

fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        ms(d)
    }
}

/// One bug's row: the medians of every checker.
struct Row {
    default: Medians,
    random: Medians,
    pct: Medians,
    explore: Medians,
    shuttle_random: Medians,
    shuttle_pct: Medians,
}

fn hunt_bug(bug: &Bug, s: &Scenario, seeds: u64) -> Row {
    let pct = StrategyKind::Pct {
        depth: 3,
        steps: 100,
    };
    // Interleaved per seed, so a slow patch of the machine slows every checker alike.
    let mut hunts: [Vec<Hunt>; 5] = Default::default();
    // The order rotates from seed to seed, so no checker always runs first. Each timed
    // hunt comes right after an untimed one of the same checker on another seed, so it
    // finds the caches as its own work leaves them, not as the checker before it did.
    for k in 0..seeds {
        let seed = k << 32;
        for j in 0..hunts.len() {
            let i = (j + k as usize) % hunts.len();
            let hunt = |seed: u64| match i {
                0 => mcsim_hunt(s, s.strategy.make(seed)),
                1 => mcsim_hunt(s, StrategyKind::Random.make(seed)),
                2 => mcsim_hunt(s, pct.make(seed)),
                3 => shuttle_hunt(bug.shuttle, || RandomScheduler::new_from_seed(seed, CAP)),
                _ => shuttle_hunt(bug.shuttle, || PctScheduler::new_from_seed(seed, 3, CAP)),
            };
            hunt(!seed);
            hunts[i].push(hunt(seed));
        }
    }
    // `explore` is deterministic: repeated for its time only.
    let explore: Vec<Hunt> = (0..EXPLORE_REPEATS).map(|_| explore_hunt(s)).collect();
    Row {
        default: medians(&hunts[0]),
        random: medians(&hunts[1]),
        pct: medians(&hunts[2]),
        explore: medians(&explore),
        shuttle_random: medians(&hunts[3]),
        shuttle_pct: medians(&hunts[4]),
    }
}

/// What a corpus's rows add up to.
pub(crate) struct Summary {
    /// Geometric mean of shuttle's better time over mcsim's default strategy's.
    pub(crate) default: f64,
    /// Geometric mean of shuttle's better time over mcsim's best strategy's for each bug
    /// (`explore` included).
    pub(crate) best: f64,
    /// Bugs both means are over (those both sides found).
    pub(crate) bugs: usize,
    /// Bugs whose `random` median reached `HARD`'s executions (or never found).
    pub(crate) hard: usize,
    /// Bugs of the corpus.
    pub(crate) of: usize,
}

/// Executions of `random` (median) that make a bug hard.
pub(crate) const HARD: u64 = 10_000;

/// A ratio of shuttle's time over mcsim's: `None` when mcsim found nothing, infinite when
/// shuttle found nothing.
fn ratio(shuttle: Duration, mcsim: Duration) -> Option<f64> {
    if mcsim == Duration::MAX {
        None
    } else if shuttle == Duration::MAX {
        Some(f64::INFINITY)
    } else {
        Some(shuttle.as_secs_f64() / mcsim.as_secs_f64())
    }
}

fn shown(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => format!("{r:.1}×"),
        Some(_) => "shuttle found nothing".into(),
        None => "mcsim found nothing".into(),
    }
}

/// The table of a corpus: one row per bug, every checker's median.
fn corpus_table(md: &mut String, bugs: &[Bug], seeds: u64) -> Summary {
    writeln!(
        md,
        "| bug | needs | mcsim default | mcsim `random` | mcsim `pct` | mcsim `explore` | \
         shuttle random | shuttle PCT | shuttle better / mcsim default | \
         shuttle better / mcsim best |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    let (mut default_logs, mut best_logs, mut hard) = (Vec::new(), Vec::new(), 0);
    for bug in bugs {
        let path = root()
            .join("scenarios")
            .join(format!("{}.toml", bug.scenario));
        let Some(s) = load_or_row(md, &path, bug.scenario, 10) else {
            continue;
        };
        eprintln!("time to first violation: {}", bug.scenario);
        let row = hunt_bug(bug, &s, seeds);
        if row.random.executions.is_none_or(|e| e >= HARD) {
            hard += 1;
        }
        let shuttle = row.shuttle_random.wall.min(row.shuttle_pct.wall);
        let best = [&row.default, &row.random, &row.pct, &row.explore]
            .iter()
            .map(|m| m.wall)
            .min()
            .unwrap_or(Duration::MAX);
        let (by_default, by_best) = (ratio(shuttle, row.default.wall), ratio(shuttle, best));
        if let (Some(d), Some(b)) = (by_default, by_best)
            && d.is_finite()
        {
            default_logs.push(d.ln());
            best_logs.push(b.ln());
        }
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            bug.scenario,
            bug.needs,
            cell(&row.default),
            cell(&row.random),
            cell(&row.pct),
            cell(&row.explore),
            cell(&row.shuttle_random),
            cell(&row.shuttle_pct),
            shown(by_default),
            shown(by_best),
        )
        .unwrap();
    }
    let mean = |logs: &[f64]| (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp();
    Summary {
        default: mean(&default_logs),
        best: mean(&best_logs),
        bugs: default_logs.len(),
        hard,
        of: bugs.len(),
    }
}

/// How every checker was run, for both corpus sections.
fn method(seeds: u64) -> String {
    format!(
        "Each bug twice: as its mcsim scenario file (`scenarios/<name>.toml`) and as a \
         shuttle user writes the same test (`benches/compare/src/corpus.rs`): threads, a \
         memcached mock behind a `shuttle::sync::Mutex` with a logical clock (shuttle has no \
         time of its own): one clock every sleep advances, or, for a bug of time (a pause, \
         a tick edge), time kept in order, a sleeper waking only once no client runs and \
         none wakes earlier (`benches/compare/src/shuttle_server.rs`), faults drawn by shuttle random choices in the mock with the scenario's \
         probabilities and budgets, and the invariant checked by the test. Each port also \
         has a fixed twin that never fails (a test in that file), so a port finds the bug \
         the scenario names, not an artefact. Wall time from the first execution to the \
         end of the first violating one (scenario files already loaded; shuttle's `Runner` \
         built inside the timing, and with it what shuttle prints on a failure: its random \
         scheduler writes the failing seed to stderr when it is dropped), median over {seeds} \
         seeds (`k << 32`, the same for every checker, the checkers interleaved per seed in \
         an order that rotates, each timed hunt right after an untimed one of the same \
         checker on another seed, so that it finds the caches as its own work leaves them), \
         with the median executions; a search that finds nothing in {CAP} executions counts \
         as slower than all. mcsim's default strategy is the scenario's own (`swarm` unless \
         the file names another: the plan's fault probabilities scaled per execution and \
         faults aimed where they can matter, `mcsim::explore::swarm`); `random` keeps the \
         plan's probabilities; `pct` at depth 3 with 100 steps estimated on both sides. \
         `explore` is mcsim's exhaustive search with the scenario's bounds, iterative \
         deepening, to its verdict including the replay and shrinking of the counterexample \
         (deterministic: the median is over {EXPLORE_REPEATS} repeats). The ratios divide \
         shuttle's better strategy for that bug by mcsim's default, and by mcsim's fastest \
         strategy for that bug (`explore` included)."
    )
}

/// Writes the section on the corpus of bugs a few executions find; returns the geometric
/// mean of shuttle's better time over mcsim's default strategy's, and the number of bugs
/// it is over.
pub(crate) fn section_time_to_violation(md: &mut String, seeds: u64) -> (f64, usize) {
    writeln!(
        md,
        "\n## 7. Time to the first violation: the bug corpus against shuttle\n\n{}\n",
        method(seeds)
    )
    .unwrap();
    let sum = corpus_table(md, BUGS, seeds);
    writeln!(
        md,
        "\nTime to first violation: mcsim is {:.1}× faster than shuttle (geometric mean \
         over {} bugs)",
        sum.default, sum.bugs
    )
    .unwrap();
    (sum.default, sum.bugs)
}

/// Writes the section on the bugs only a search finds ([`HARD_BUGS`]); returns what the
/// table adds up to.
pub(crate) fn section_hard_bugs(md: &mut String, seeds: u64) -> Summary {
    writeln!(
        md,
        "\n## 7b. Time to the first violation: bugs only a search finds\n\n\
         The bugs of §7 fall in 1 to 10 executions to every checker, so their ratio mostly \
         measures the cost of an execution. These need at least {HARD} executions of \
         `random` (median over seeds): a fault at a production rate (one call in 100,000 or \
         rarer) that must land where it bites, or a period's first add crossing a tick edge \
         in its flight (`scenarios/slow/`: its budget would be most of the gate's time). \
         {}\n",
        method(seeds)
    )
    .unwrap();
    let sum = corpus_table(md, HARD_BUGS, seeds);
    writeln!(
        md,
        "\n`random` needs at least {HARD} executions (median) on {} of {} bugs.\n\n\
         Time to first violation on hard bugs: mcsim is {:.1}× faster than shuttle \
         (geometric mean over {} bugs); with mcsim's fastest strategy for each bug, {:.1}×",
        sum.hard, sum.of, sum.default, sum.bugs, sum.best
    )
    .unwrap();
    sum
}

/// Hunts the corpus scenario `name` with its default strategy on seed after seed for
/// about 3 s, for a profiler.
pub(crate) fn profile_hunt(name: &str) -> ExitCode {
    let path = root().join("scenarios").join(format!("{name}.toml"));
    let s = match Scenario::load(&path, RECIPES) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("compare: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (start, mut hunts, mut executions) = (Instant::now(), 0u64, 0u64);
    while start.elapsed() < Duration::from_secs(3) {
        let h = mcsim_hunt(&s, s.strategy.make(hunts << 32));
        executions += h.executions.unwrap_or(CAP as u64);
        hunts += 1;
    }
    let per = start.elapsed() / hunts as u32;
    println!(
        "{name}: {hunts} hunts, {:.1} executions and {} each",
        executions as f64 / hunts as f64,
        us(per)
    );
    ExitCode::SUCCESS
}
