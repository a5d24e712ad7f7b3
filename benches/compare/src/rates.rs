//! Section 2: executions per second against shuttle, and the ceilings.

#[allow(unused_imports)]
use super::*;

/// Executions per second: runs `batch(n)` (which returns the violating executions) with
/// growing `n` until one run takes a tenth of [`RATE_TARGET`], then once sized to take it.
pub(crate) struct Rate {
    pub(crate) executions: usize,
    pub(crate) violating: usize,
    pub(crate) elapsed: Duration,
}

impl Rate {
    pub(crate) fn per_sec(&self) -> f64 {
        self.executions as f64 / self.elapsed.as_secs_f64()
    }
}

pub(crate) fn rate(mut batch: impl FnMut(usize) -> usize) -> Rate {
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

pub(crate) fn mcsim_rate(
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
/// execution costs before any step (set-up, the verdict, the result and the hand-back of
/// the spare parts).
fn no_clients(sim: &mut Sim) {
    sim.at_end("counter.no_lost_increments", |_| {
        Err(Failure::new("lost increments"))
    });
}

/// Executions per second on one 3-client counter, mcsim against shuttle, and the rates of
/// the same work under a minimal scheduler and with no checker at all.
pub(crate) fn section_rate(md: &mut String, name: &str, variant: CounterVariant) -> Rates {
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
    eprintln!("rate counter/{name}: mcsim, an execution with no clients");
    let empty = mcsim_rate(&s.config, &no_clients, || Box::new(Random::new(0)));
    row(
        "mcsim, an execution with no clients and one failing end check (the fixed cost)",
        &empty,
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
    let ns = |r: &Rate| 1e9 / r.per_sec();
    writeln!(
        md,
        "\nWhere an execution of mcsim `random` goes ({:.0} ns): the shared work {:.0} ns, \
         an execution's fixed cost (set-up, verdict, result, hand-back) {:.0} ns, and the \
         executor's steps the remaining {:.0} ns. Scheduling alone, in the minimal \
         scheduler, costs {:.0} ns over the shared work.",
        ns(&random),
        ns(&floor),
        ns(&empty),
        (ns(&random) - ns(&floor) - ns(&empty)).max(0.0),
        (ns(&minimal) - ns(&floor)).max(0.0)
    )
    .unwrap();
    rates
}

/// Executions-per-second ratios on one counter: mcsim over shuttle, and the no-checker
/// floor (the most any checker could reach) and the minimal scheduler over shuttle's
/// random scheduler.
pub(crate) struct Rates {
    pub(crate) random: f64,
    pub(crate) pct: f64,
    pub(crate) ceiling: f64,
    pub(crate) minimal: f64,
}
