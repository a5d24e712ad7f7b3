//! `mcsim explore`: the exhaustive search of one scenario, and how its answer is said:
//! the bounds it covered, the states it kept, and what those bounds leave fixed.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;

use crate::cli::args::ExploreArgs;
use crate::cli::commands::load_set;
use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::model::Family;
use mcsim::report;
use mcsim::run::{self, RunOptions};
use mcsim::scenario::{Scenario, StrategyKind};

/// What a search without a counterexample covered: [`ExploreReport::covered`].
pub(crate) fn covered(s: &Scenario, r: &ExploreReport) -> String {
    r.covered(s)
}

/// What an exhaustive answer leaves fixed: [`ExploreReport::fixed`].
pub(crate) fn fixed(options: &ExploreOptions) -> String {
    ExploreReport::fixed(options)
}

pub(crate) fn explore(s: &Scenario, options: &ExploreOptions) -> Result<ExitCode> {
    let started = Instant::now();
    let mut last = Instant::now();
    // A broken variant's search looks for the violation its scenario expects: another
    // one reached first is said, and the search goes on.
    let seek = (s.expect != "pass").then_some(s.expect.as_str());
    // On a terminal a spinner counts executions; elsewhere a line a second.
    let spinner = crate::cli::progress::spinner("executions");
    let report = mcsim::exhaustive::explore_seeking(s, options, seek, &mut |stats| {
        if !spinner.is_hidden() {
            spinner.set_position(stats.executions);
            spinner.set_message(format!(
                "{} states, depth {}",
                stats.states, stats.max_depth
            ));
        } else if last.elapsed().as_secs() >= 1 {
            last = Instant::now();
            eprintln!(
                "  … {} executions, {} pruned, depth {} ({:.0?})",
                stats.executions,
                stats.pruned,
                stats.max_depth,
                started.elapsed()
            );
        }
        true
    });
    spinner.finish_and_clear();
    let st = report.stats;
    if options.keep_going {
        outln!("{} of the executions violate an invariant", report.failures);
    }
    outln!(
        "{}: {} executions explored ({} redundant interleavings cut short), {} distinct final states, {} calls, max depth {}, in {:.2?}",
        s.name,
        st.executions,
        st.pruned,
        report.distinct_states,
        report.calls,
        st.max_depth,
        started.elapsed()
    );
    if st.cache_given_up {
        outln!(
            "  visited-state cache: off after its first {} states cut nothing (every path reached states of its own)",
            st.states.max(mcsim::exhaustive::Dfs::CACHE_TRIAL)
        );
    } else if st.states > 0 {
        outln!(
            "  visited-state cache: {} distinct states, {} executions cut at a state already explored, fingerprint collision chance {:.1e}",
            st.states,
            st.revisits,
            st.collision_chance()
        );
    } else if options.cache {
        outln!(
            "  visited-state cache off: the model registers no ghost fingerprint (Sim::ghost), or memory pressure made the LRU order matter"
        );
    }
    let others: Vec<&String> = report
        .verdicts
        .iter()
        .filter(|v| *v != "pass" && Some(v.as_str()) != seek)
        .collect();
    if seek.is_some() && !others.is_empty() {
        let others: Vec<&str> = others.iter().map(|v| v.as_str()).collect();
        outln!(
            "  other violations reached on the way: {}",
            others.join(", ")
        );
    }
    match &report.failure {
        Some(f) => {
            if options.iterative {
                outln!(
                    "  found in the search of {}: none with fewer preemptions and faults breaks {}",
                    covered(s, &report),
                    f.execution.verdict.label()
                );
            }
            outln!();
            out!(
                "{}",
                report::kept::failure(
                    std::path::Path::new(report::kept::RUN_DIR),
                    s,
                    s.strategy,
                    f
                )
            );
            let ok = f.execution.verdict.label() == s.expect;
            outln!(
                "\nexpected {}, got {}: {}",
                s.expect,
                f.execution.verdict.label(),
                if ok { "as expected" } else { "MISMATCH" }
            );
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        None if report.interrupted => {
            outln!("stopped before covering every schedule: no violation so far (not a proof)");
            Ok(ExitCode::FAILURE)
        }
        None => {
            outln!(
                "no violation: {}; fixed: {}",
                covered(s, &report),
                fixed(options)
            );
            if options.reduce {
                outln!("  {}", mcsim::exhaustive::dfs::REDUCTION_CAVEAT);
            }
            no_violation(s)
        }
    }
}

/// What a "no violation" is followed by: random executions, free to run calls at any
/// instant of their windows (which the exhaustive search fixes), up to 500 of the
/// scenario's budget. A violation there makes the answer no proof.
pub(crate) fn beyond_bounds(s: &Scenario) -> run::RunReport {
    let sample = RunOptions {
        strategy: StrategyKind::Random,
        seed: s.seed,
        executions: s.executions.clamp(1, 500),
        keep_going: false,
        shrink: true,
        // Any failure beyond the bounds is worth reporting: stop at the first.
        expect: mcsim::scenario::Expectation::single("pass"),
    };
    run::run(s, &sample)
}

/// After "no violation": what the bounds fix is sampled.
fn no_violation(s: &Scenario) -> Result<ExitCode> {
    let sampled = beyond_bounds(s);
    let got = match &sampled.first_failure {
        Some(f) => {
            outln!(
                "\nbut random executions, free to run calls at other instants of their windows, found one outside those bounds:"
            );
            out!(
                "{}",
                report::kept::failure(
                    std::path::Path::new(report::kept::RUN_DIR),
                    s,
                    StrategyKind::Random,
                    f
                )
            );
            f.execution.verdict.label()
        }
        None => {
            outln!(
                "  and {} random executions beyond those bounds found none either",
                sampled.executions
            );
            "pass".to_string()
        }
    };
    let ok = got == s.expect;
    outln!(
        "expected {}, got {got}: {}",
        s.expect,
        if ok { "as expected" } else { "MISMATCH" }
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

impl ExploreArgs {
    /// The search the arguments ask for, at the scenario's `[explore]` bounds where they
    /// give none.
    pub(crate) fn explore(self, families: &[&'static dyn Family]) -> Result<ExitCode> {
        let ExploreArgs {
            scenario,
            clients,
            max_preemptions,
            max_faults,
            max_executions,
            no_reduction,
            no_cache,
            no_symmetry,
            whole_memory,
            no_timing,
            draws,
            no_iterative,
            max_phases,
            all,
            jobs,
            set,
        } = self;
        let s = load_set(&scenario, &set, families)?;
        let clients = clients.unwrap_or(s.bounds.clients);
        let s = s
            .with_clients(clients)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let options = ExploreOptions {
            max_preemptions: max_preemptions.map_or(s.bounds.preemptions, |b| b.0),
            max_faults: max_faults.map_or(s.bounds.faults, |b| b.0),
            reduce: !no_reduction,
            max_executions,
            keep_going: all,
            cache: !no_cache,
            symmetry: !no_symmetry,
            summaries: !whole_memory,
            timing: !no_timing,
            draws: draws.unwrap_or(s.bounds.draws),
            iterative: !no_iterative,
            max_phases: max_phases.or(s.bounds.phases),
            jobs: crate::cli::jobs_or_cores(jobs),
        };
        explore(&s, &options)
    }
}
