//! Section 9: `mcsim explore` of every scenario at its full client count, within a time
//! limit each.

#[allow(unused_imports)]
use super::*;

use mcsim::exhaustive::explore_seeking;

/// Each search's time limit.
pub(crate) const FULL_SIZE_LIMIT: Duration = Duration::from_secs(30);

/// One scenario's search: its verdict (or `None` when stopped at the limit), executions,
/// states and time.
struct FullSize {
    name: String,
    clients: usize,
    expect: String,
    verdict: Option<String>,
    executions: u64,
    states: u64,
    wall: Duration,
}

fn search(s: &Scenario) -> FullSize {
    let full = s.with_clients(s.clients).expect("its own client count");
    // Each search shared over every core, as `mcsim explore` does by default.
    let options = ExploreOptions {
        jobs: mcsim::run::cores(),
        ..ExploreOptions::for_scenario(&full)
    };
    let seek = (full.expect != "pass").then_some(full.expect.as_str());
    let t = Instant::now();
    let r = explore_seeking(&full, &options, seek, &mut |_| {
        t.elapsed() < FULL_SIZE_LIMIT
    });
    let wall = t.elapsed();
    let verdict = match &r.failure {
        Some(f) => Some(f.execution.verdict.label()),
        None if r.interrupted => None,
        None => Some("pass".to_string()),
    };
    FullSize {
        name: s.name.clone(),
        clients: s.clients,
        expect: s.expect.clone(),
        verdict,
        executions: r.stats.executions,
        states: r.stats.states,
        wall,
    }
}

/// Writes the section; returns how many scenarios reached their expected verdict, of
/// how many.
pub(crate) fn section_full_size(md: &mut String) -> (usize, usize) {
    writeln!(
        md,
        "\n## 9. Proofs at full size\n\n\
         `mcsim explore` of every scenario that is not a sweep, at the client count its \
         file gives (not the smaller `[explore] clients` of the gate's proofs), with the \
         file's bounds (preemptions, faults, draws, tick-phase classes) and iterative \
         deepening, stopped after {} s, on {} threads as `mcsim explore` runs by default \
         (the tick-phase classes after phase 0 are searched in batches, a batch's phases \
         taken in turn by a pool of threads, one phase to a thread; \
         a search at one phase is shared over both threads where the visited-state cache \
         is off or gave up, `mcsim::exhaustive::explore`'s shares). A broken variant's \
         search looks for the violation its scenario expects.\n\n\
         | scenario | clients | expects | verdict | executions | states | wall time |\n\
         |---|---:|---|---|---:|---:|---:|",
        FULL_SIZE_LIMIT.as_secs(),
        mcsim::run::cores()
    )
    .unwrap();
    let (mut reached, mut total) = (0, 0);
    for path in single_scenarios() {
        let Ok(s) = Scenario::load(&path, RECIPES) else {
            continue;
        };
        eprintln!("full size: {}", s.name);
        let r = search(&s);
        total += 1;
        let ok = r.verdict.as_deref() == Some(r.expect.as_str());
        reached += usize::from(ok);
        writeln!(
            md,
            "| {} | {} | `{}` | {} | {} | {} | {} |",
            r.name,
            r.clients,
            r.expect,
            match (&r.verdict, ok) {
                (Some(v), true) => format!("`{v}`"),
                (Some(v), false) => format!("**`{v}`**"),
                (None, _) => format!("**stopped at {} s**", FULL_SIZE_LIMIT.as_secs()),
            },
            r.executions,
            r.states,
            ms(r.wall)
        )
        .unwrap();
    }
    writeln!(
        md,
        "\nProofs at full size: {reached} of {total} scenarios reach their expected verdict \
         within {} s each.",
        FULL_SIZE_LIMIT.as_secs()
    )
    .unwrap();
    (reached, total)
}
