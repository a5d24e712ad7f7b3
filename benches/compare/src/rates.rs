//! Section 2: executions per second against shuttle, and the ceilings.

#[allow(unused_imports)]
use super::*;
use std::cell::RefCell;

use mcsim_compare::Budget;

/// One timed batch: how many executions, how many violated, how long it took.
pub(crate) struct Rate {
    pub(crate) executions: usize,
    pub(crate) violating: usize,
    pub(crate) elapsed: Duration,
}

impl Rate {
    pub(crate) fn per_sec(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64()
    }

    /// Nanoseconds per execution.
    fn ns(&self) -> f64 {
        1e9 / self.per_sec()
    }
}

/// Rounds the rows of one rate table are measured in. Many short rounds, not a few long
/// ones: the rows a ratio divides run closer together in time, so the machine's drift
/// between them is smaller, and the median has more rounds to reject. Of two
/// `--overhead-only` runs each, the executor overhead in time read 3.2× and 4.4× on
/// get/set with 7 rounds, 3.3× and 3.5× with 35.
pub(crate) const ROUNDS: u64 = 35;

/// One row's batch: `n` executions of round `round` (each round draws other seeds);
/// returns how many violated.
type Batch<'a> = Box<dyn FnMut(usize, u64) -> usize + 'a>;

/// What one row did in each round.
pub(crate) struct Rounds(pub(crate) Vec<Rate>);

impl Rounds {
    fn executions(&self) -> usize {
        self.0.iter().map(|r| r.executions).sum()
    }

    fn violating(&self) -> usize {
        self.0.iter().map(|r| r.violating).sum()
    }

    fn elapsed(&self) -> Duration {
        self.0.iter().map(|r| r.elapsed).sum()
    }

    /// The median of the rounds' executions per second.
    pub(crate) fn per_sec(&self) -> f64 {
        median(self.0.iter().map(Rate::per_sec).collect())
    }

    /// How many times faster than `other`: the median of the rounds' ratios (a round's
    /// two rates were measured moments apart, under the same load).
    pub(crate) fn over(&self, other: &Rounds) -> f64 {
        median(self.ratios(other))
    }

    /// The lowest and highest of the rounds' ratios over `other`.
    pub(crate) fn spread_over(&self, other: &Rounds) -> (f64, f64) {
        spread(&self.ratios(other))
    }

    /// Each round's per-execution times of this mcsim row against `shuttle`, with the
    /// shared work of `floor`: the three were measured moments apart in that round.
    fn budgets(&self, shuttle: &Rounds, floor: &Rounds) -> Vec<Budget> {
        self.0
            .iter()
            .zip(&shuttle.0)
            .zip(&floor.0)
            .map(|((m, s), f)| Budget {
                shared: f.ns(),
                shuttle: s.ns(),
                mcsim: m.ns(),
            })
            .collect()
    }

    /// The ratio this row would reach over `shuttle` if the shared work (`floor`) cost
    /// nothing: the median over rounds, and the lowest and highest round.
    fn bound_over(&self, shuttle: &Rounds, floor: &Rounds) -> (f64, f64, f64) {
        let bounds: Vec<f64> = self
            .budgets(shuttle, floor)
            .iter()
            .map(Budget::ratio_with_free_shared_work)
            .collect();
        let (min, max) = spread(&bounds);
        (median(bounds), min, max)
    }

    /// Each round's overheads over the shared work (`floor`), in ns per execution: this
    /// row's and `minimal`'s, the three measured moments apart in that round.
    fn overheads(&self, minimal: &Rounds, floor: &Rounds) -> Vec<(f64, f64)> {
        self.0
            .iter()
            .zip(&minimal.0)
            .zip(&floor.0)
            .map(|((a, m), f)| (a.ns() - f.ns(), m.ns() - f.ns()))
            .collect()
    }

    fn ratios(&self, other: &Rounds) -> Vec<f64> {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| a.per_sec() / b.per_sec())
            .collect()
    }
}

/// mcsim's overhead in units of the minimal scheduler's, from each round's two overheads
/// ([`Rounds::overheads`]): the median of the rounds' ratios, and the lowest and highest
/// round. A round in which the minimal scheduler ran no slower than the floor (the
/// machine's noise larger than its overhead) counts as unbounded, not as a small ratio.
fn overhead_ratio(mcsim_ns: &[f64], minimal_ns: &[f64]) -> (f64, f64, f64) {
    let ratios: Vec<f64> = mcsim_ns
        .iter()
        .zip(minimal_ns)
        .map(|(&a, &m)| if m > 0.0 { a / m } else { f64::INFINITY })
        .collect();
    let (min, max) = spread(&ratios);
    (median(ratios), min, max)
}

/// The lowest and highest of `xs`.
fn spread(xs: &[f64]) -> (f64, f64) {
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(0.0, f64::max);
    (min, max)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The `n` that makes one batch take about `target`: doubled from 50 until a batch takes
/// a tenth of it, then scaled.
fn calibrate(batch: &mut Batch<'_>, target: Duration) -> usize {
    let mut n = 50;
    loop {
        let t = Instant::now();
        batch(n, u64::MAX);
        let e = t.elapsed();
        if e >= target / 10 {
            return ((n as f64 * target.as_secs_f64() / e.as_secs_f64()) as usize).max(n);
        }
        n *= 2;
    }
}

/// Measures every batch in `rounds` interleaved rounds numbered from `first`, each of
/// about `RATE_TARGET / ROUNDS`: every round runs every row once (starting from a
/// different row each time), so a slow patch of a shared machine slows all rows alike
/// instead of whichever happened to run then.
pub(crate) fn interleaved(batches: &mut [Batch<'_>], first: u64, rounds: u64) -> Vec<Rounds> {
    let per_round = RATE_TARGET / ROUNDS as u32;
    let sizes: Vec<usize> = batches
        .iter_mut()
        .map(|b| calibrate(b, per_round))
        .collect();
    let mut out: Vec<Rounds> = batches.iter().map(|_| Rounds(Vec::new())).collect();
    for round in first..first + rounds {
        for k in 0..batches.len() {
            let i = (k + round as usize) % batches.len();
            let t = Instant::now();
            let violating = batches[i](sizes[i], round);
            out[i].0.push(Rate {
                executions: sizes[i],
                violating,
                elapsed: t.elapsed(),
            });
        }
    }
    out
}

/// The executions of round `round` of an mcsim strategy: a fresh strategy from `make`,
/// executions numbered from `round << 32`.
pub(crate) fn mcsim_batch<'a>(
    config: &'a ExecConfig,
    setup: &'a dyn Fn(&mut Sim),
    make: impl Fn() -> Box<dyn Strategy> + 'a,
) -> Batch<'a> {
    Box::new(move |n, round| {
        let mut strategy = make();
        let first = round << 32;
        // One result, its buffers reused by every execution, and the configuration applied
        // once, as `mcsim check` runs them.
        let mut e = Execution::default();
        let runs = Runs::new(config);
        (first..first + n as u64)
            .filter(|&i| {
                runs.execute_into(setup, &mut *strategy, i, &mut e);
                !e.verdict.is_pass()
            })
            .count()
    })
}

/// The shuttle model's workload under mcsim: `clients` clients incrementing once with
/// the recipe, and one end check (the counter equals the increments), without the
/// scenario harness's history, linearizability check and metrics.
pub(crate) fn bare_counter(variant: CounterVariant, clients: usize) -> impl Fn(&mut Sim) {
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

/// No clients and one end check that fails, as most get/set executions do: what an
/// execution costs before any step (set-up, the verdict, the result and the engine's
/// reset for the next execution).
fn no_clients(sim: &mut Sim) {
    sim.at_end("counter.no_lost_increments", |_| {
        Err(Failure::new("lost increments"))
    });
}

/// The executions of round `round` of the minimal scheduler on the 3-client counter, on
/// `server` (executions numbered from `round << 32`).
fn minimal_batch<'a>(variant: CounterVariant, server: &'a RefCell<&mut Server>) -> Batch<'a> {
    Box::new(move |n, round| {
        let mut server = server.borrow_mut();
        let first = round << 32;
        (first..first + n as u64)
            .filter(|&seed| !counter_minimal(variant, 3, &mut server, seed))
            .count()
    })
}

/// `n` runs of the 3-client counter with no checker (the floor), on `server`.
fn floor_batch<'a>(variant: CounterVariant, server: &'a RefCell<&mut Server>) -> Batch<'a> {
    Box::new(move |n, _| {
        let mut server = server.borrow_mut();
        (0..n)
            .filter(|_| !counter_direct(variant, 3, &mut server))
            .count()
    })
}

/// Each rate table's rows, in its order: [`measure`] builds their batches in this order.
pub(crate) const ROW_LABELS: [&str; 8] = [
    "mcsim `random`, same workload as shuttle",
    "mcsim `pct` (depth 3), same workload as shuttle",
    "mcsim `random`, scenario harness (+ history, linearizability check, metrics)",
    "shuttle `check_random` (`RandomScheduler`)",
    "shuttle `check_pct` (`PctScheduler`, depth 3)",
    "minimal scheduler: a uniform pick among parked calls, nothing else (see above)",
    "mcsim, an execution with no clients and one failing end check (the fixed cost)",
    "no checker: the clients one after another, every call executed at once (floor)",
];

/// Every row of the `name` counter's rate table ([`ROW_LABELS`]), measured in this
/// process in `rounds` interleaved rounds numbered from `first`.
pub(crate) fn measure(name: &str, first: u64, rounds: u64) -> Vec<Rounds> {
    let variant = variant_named(name);
    let s = counter_scenario(name);
    let bare = bare_counter(variant, 3);
    let mut server = Server::with_defaults();
    let server = RefCell::new(&mut server);
    let mut batches: Vec<Batch<'_>> = vec![
        mcsim_batch(&s.config, &bare, || Box::new(Random::new(0))),
        mcsim_batch(&s.config, &bare, || Box::new(Pct::new(0, 3, 6))),
        mcsim_batch(&s.config, &*s.setup, || Box::new(Random::new(0))),
        Box::new(|n, round| shuttle_run(RandomScheduler::new_from_seed(round, n), variant).1),
        Box::new(|n, round| shuttle_run(PctScheduler::new_from_seed(round, 3, n), variant).1),
        minimal_batch(variant, &server),
        mcsim_batch(&s.config, &no_clients, || Box::new(Random::new(0))),
        floor_batch(variant, &server),
    ];
    interleaved(&mut batches, first, rounds)
}

/// The counter variant a rate table's name (`get-set`, `incr-add`) stands for.
pub(crate) fn variant_named(name: &str) -> CounterVariant {
    if name.ends_with("incr-add") {
        CounterVariant::IncrAdd
    } else {
        CounterVariant::GetSet
    }
}

/// Each round's overheads over the shared work on a table's rows as [`measure`] returns
/// them, in ns per execution: mcsim `random`'s (row 0) and the minimal scheduler's
/// (row 5), both over the floor (row 7).
fn round_overheads(rows: &[Rounds]) -> (Vec<f64>, Vec<f64>) {
    rows[0].overheads(&rows[5], &rows[7]).into_iter().unzip()
}

/// mcsim `random`'s overhead over the shared work in units of the minimal scheduler's,
/// on a table's rows as [`measure`] returns them: the median of the rounds' ratios.
pub(crate) fn overhead_of(rows: &[Rounds]) -> f64 {
    let (mcsim_ns, minimal_ns) = round_overheads(rows);
    overhead_ratio(&mcsim_ns, &minimal_ns).0
}

/// A rate table's rows pooled over processes, and each process's overhead ratio (empty
/// when the rows were measured in this process instead).
pub(crate) struct Layouts {
    pub(crate) rows: Vec<Rounds>,
    pub(crate) overheads: Vec<f64>,
}

/// Executions per second on one 3-client counter, mcsim against shuttle, and the rates of
/// the same work under a minimal scheduler and with no checker at all, from its table
/// measured in several processes (`layouts::measure_in_processes`).
pub(crate) fn section_rate(md: &mut String, name: &str, layouts: Layouts) -> Rates {
    writeln!(
        md,
        "\n### counter/{name}\n\n\
         | checker | executions | violating | wall time | executions/s |\n\
         |---|---:|---:|---:|---:|"
    )
    .unwrap();
    let measured = layouts.rows;
    let labels = ROW_LABELS;
    for (label, r) in labels.iter().zip(&measured) {
        writeln!(
            md,
            "| {label} | {} | {} ({:.0}%) | {} | {:.0} |",
            r.executions(),
            r.violating(),
            100.0 * r.violating() as f64 / r.executions() as f64,
            ms(r.elapsed()),
            r.per_sec()
        )
        .unwrap();
    }
    let [random, pct, _full, sh_random, sh_pct, minimal, empty, floor] = &measured[..] else {
        unreachable!("one measurement per row");
    };
    let (random_spread, pct_spread) = (random.spread_over(sh_random), pct.spread_over(sh_pct));
    let ns = |r: &Rounds| 1e9 / r.per_sec();
    let budget = |mcsim: &Rounds, shuttle: &Rounds| Budget {
        shared: ns(floor),
        shuttle: ns(shuttle),
        mcsim: ns(mcsim),
    };
    let random_budget = budget(random, sh_random);
    let (random_bound, pct_bound) = (
        random.bound_over(sh_random, floor),
        pct.bound_over(sh_pct, floor),
    );
    let (mcsim_ns, minimal_ns) = round_overheads(&measured);
    let overhead = overhead_ratio(&mcsim_ns, &minimal_ns);
    let rates = Rates {
        random: random.over(sh_random),
        pct: pct.over(sh_pct),
        ceiling: floor.over(sh_random),
        minimal: minimal.over(sh_random),
        random_bound: random_bound.0,
        pct_bound: pct_bound.0,
        overhead: overhead.0,
        overhead_spread: (overhead.1, overhead.2),
        overhead_ns: (median(mcsim_ns), median(minimal_ns)),
    };
    writeln!(
        md,
        "\nSame workload: `random` {:.1}× shuttle's random scheduler (rounds {:.1}–{:.1}×), \
         `pct` {:.1}× its PCT scheduler (rounds {:.1}–{:.1}×). With no checker, the shared \
         work alone runs at {:.1}× shuttle's random scheduler; it takes {:.0}% of mcsim \
         `random`'s time. The minimal scheduler runs at {:.1}× shuttle's random scheduler.",
        rates.random,
        random_spread.0,
        random_spread.1,
        rates.pct,
        pct_spread.0,
        pct_spread.1,
        rates.ceiling,
        100.0 / floor.over(random),
        rates.minimal
    )
    .unwrap();
    writeln!(
        md,
        "\nWhere an execution of mcsim `random` goes ({:.0} ns): the shared work {:.0} ns, \
         an execution's fixed cost (set-up, verdict, result, reset) {:.0} ns, and the \
         executor's steps the remaining {:.0} ns. Scheduling alone, in the minimal \
         scheduler, costs {:.0} ns over the shared work (the median of the rounds' \
         differences, as in the table below). Round by round, mcsim `random`'s \
         overhead over the shared work is {} the minimal scheduler's (the median of the \
         rounds' ratios, rounds {} to {}; a round where the minimal scheduler ran no \
         slower than the floor counts as unbounded).",
        ns(random),
        ns(floor),
        ns(empty),
        (ns(random) - ns(floor) - ns(empty)).max(0.0),
        rates.overhead_ns.1,
        times(rates.overhead),
        times(rates.overhead_spread.0),
        times(rates.overhead_spread.1),
    )
    .unwrap();
    if !layouts.overheads.is_empty() {
        let each: Vec<String> = layouts.overheads.iter().map(|&r| times(r)).collect();
        writeln!(
            md,
            "\nThe same ratio in each of the {} processes the rounds ran in, each laid out \
             afresh by the system (the median of its own rounds): {}.",
            each.len(),
            each.join(", ")
        )
        .unwrap();
    }
    write_budget(
        md,
        &random_budget,
        &budget(minimal, sh_random),
        Bounds {
            random: random_bound,
            pct: pct_bound,
            minimal: minimal.bound_over(sh_random, floor).0,
        },
    );
    rates
}

/// The ratios over shuttle if the shared work cost nothing: `random`'s and `pct`'s as
/// (median, lowest, highest) over rounds, the minimal scheduler's median.
struct Bounds {
    random: (f64, f64, f64),
    pct: (f64, f64, f64),
    minimal: f64,
}

/// What 10× shuttle asks of mcsim's overhead and of the shared work, from `random`'s
/// and the minimal scheduler's budgets against shuttle's random scheduler (per-execution
/// times, each the median over rounds) and the bounds measured round by round.
fn write_budget(md: &mut String, random: &Budget, minimal: &Budget, bounds: Bounds) {
    const TARGET: f64 = 10.0;
    let shared_needed = |b: &Budget| match b.shared_work_allowed(TARGET) {
        Some(w) if w >= b.shared => format!("at most {w:.0} ns, which it already is"),
        Some(w) => format!("at most {w:.0} ns ({:.1}× faster)", b.shared / w),
        None => "less than nothing: no shared work is cheap enough".to_string(),
    };
    let overhead_needed = match random.overhead_allowed(TARGET) {
        Some(m) => format!(
            "its own overhead would have to fall from {:.0} to {m:.0} ns ({:.1}× less)",
            random.mcsim_overhead(),
            random.mcsim_overhead() / m
        ),
        None => "not even a checker that cost nothing would reach it".to_string(),
    };
    writeln!(
        md,
        "\nWhat {TARGET:.0}× asks: {:.0} ns per execution. Above the shared work, shuttle's \
         random scheduler spends {:.0} ns per execution, mcsim `random` {:.0} ns and the \
         minimal scheduler {:.0} ns. Both sides run the shared work, so making it cheaper \
         raises the ratio only towards the ratio of the overheads: {:.1}× for `random` \
         (rounds {:.1}–{:.1}×; {:.1}× for `pct` against shuttle's PCT, rounds {:.1}–{:.1}×), \
         reached if the recipe code and the server cost nothing. With the shared work as \
         it is, {overhead_needed}. With `random`'s overhead as it is, the shared work would \
         have to cost {}; with the minimal scheduler's ({:.1}× if the shared work were \
         free), {}.",
        random.shuttle / TARGET,
        random.shuttle_overhead(),
        random.mcsim_overhead(),
        minimal.mcsim_overhead(),
        bounds.random.0,
        bounds.random.1,
        bounds.random.2,
        bounds.pct.0,
        bounds.pct.1,
        bounds.pct.2,
        shared_needed(random),
        bounds.minimal,
        shared_needed(minimal),
    )
    .unwrap();
}

/// Executions-per-second ratios on one counter: mcsim over shuttle, and the no-checker
/// floor (the most any checker could reach) and the minimal scheduler over shuttle's
/// random scheduler.
pub(crate) struct Rates {
    pub(crate) random: f64,
    pub(crate) pct: f64,
    pub(crate) ceiling: f64,
    pub(crate) minimal: f64,
    /// `random`'s ratio over shuttle's random scheduler if the shared work cost nothing.
    pub(crate) random_bound: f64,
    /// The same for `pct` over shuttle's PCT scheduler.
    pub(crate) pct_bound: f64,
    /// mcsim `random`'s time over the shared work, in units of the minimal scheduler's:
    /// the median of the rounds' ratios.
    pub(crate) overhead: f64,
    /// The lowest and highest round of that ratio.
    pub(crate) overhead_spread: (f64, f64),
    /// The two overheads that ratio divides, in ns per execution, each the median over
    /// rounds: mcsim `random`'s and the minimal scheduler's, over the shared work.
    pub(crate) overhead_ns: (f64, f64),
}

/// Runs one rate row on the 3-client get/set or incr/add counter for about 3 s (or
/// exactly `executions`), for a profiler: mcsim `random` (`get-set`, `incr-add`), its
/// fixed cost (`fixed`: an execution with no clients), the minimal scheduler (`minimal`,
/// `minimal-incr-add`) or the floor with no checker (`floor`, `floor-incr-add`). Instructions per execution of
/// each, under callgrind, split mcsim's overhead from the shared work without the noise
/// of a timer.
pub(crate) fn profile_rate(row: &str, executions: Option<u64>) -> ExitCode {
    let v = variant_named(row);
    let name = if v == CounterVariant::IncrAdd {
        "incr-add"
    } else {
        "get-set"
    };
    let s = counter_scenario(name);
    let bare = bare_counter(v, 3);
    let mut server = Server::with_defaults();
    let server = RefCell::new(&mut server);
    let mut batch: Batch<'_> = match row {
        "get-set" | "incr-add" => mcsim_batch(&s.config, &bare, || Box::new(Random::new(0))),
        "fixed" => mcsim_batch(&s.config, &no_clients, || Box::new(Random::new(0))),
        "minimal" | "minimal-incr-add" => minimal_batch(v, &server),
        "floor" | "floor-incr-add" => floor_batch(v, &server),
        other => {
            eprintln!("compare: --profile-rate takes {PROFILE_ROWS}, not {other:?}");
            return ExitCode::FAILURE;
        }
    };
    // Batches of at most 10 000, each its own round (other seeds).
    const BATCH: u64 = 10_000;
    let (start, mut done, mut round) = (Instant::now(), 0u64, 0u64);
    loop {
        let n = match executions {
            Some(total) if done >= total => break,
            Some(total) => (total - done).min(BATCH),
            None if start.elapsed() >= Duration::from_secs(3) => break,
            None => BATCH,
        };
        batch(n as usize, round);
        done += n;
        round += 1;
    }
    let per = start.elapsed().as_secs_f64() * 1e9 / done as f64;
    println!("counter/{row}: {done} executions, {per:.0} ns each");
    ExitCode::SUCCESS
}

/// The rows `--profile-rate` runs.
pub(crate) const PROFILE_ROWS: &str =
    "get-set, incr-add, fixed, minimal, minimal-incr-add, floor or floor-incr-add";
