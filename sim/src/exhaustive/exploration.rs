//! What an exploration is asked ([`ExploreOptions`]: its bounds) and what it reports
//! ([`ExploreReport`]: its figures, verdicts and counterexample, and the phases it
//! covered).

use super::dfs::DfsStats;
use crate::plural::plural;
use crate::scenario::Scenario;

use super::phases::PhaseCoverage;
use crate::run::Finding;

/// Bounds of an exhaustive exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExploreOptions {
    /// At most this many preemptions per execution (`None`: unbounded).
    pub max_preemptions: Option<u32>,
    /// At most this many faults per execution (`None`: only the plan's budgets).
    pub max_faults: Option<u32>,
    /// Sleep-set partial-order reduction.
    pub reduce: bool,
    /// Stop after this many executions (the result is then not exhaustive).
    pub max_executions: Option<u64>,
    /// Keep exploring after a failure, counting failing executions.
    pub keep_going: bool,
    /// Expand each state once ([`Dfs::with_cache`](crate::exhaustive::Dfs::with_cache)).
    pub cache: bool,
    /// Keep states up to a permutation of interchangeable clients when the model
    /// declares them so ([`Dfs::with_symmetry`](crate::exhaustive::Dfs::with_symmetry), [`crate::Sim::symmetric`]).
    pub symmetry: bool,
    /// Tell a client's states apart by the summary of its memory it declares
    /// ([`Dfs::with_summaries`](crate::exhaustive::Dfs::with_summaries), [`crate::Client::remember_only`]).
    pub summaries: bool,
    /// Try each call also where its window crosses a second ([`Dfs::with_timing`](crate::exhaustive::Dfs::with_timing)).
    pub timing: bool,
    /// Draws of the workload searched, one after the other ([`Dfs::set_draw`](crate::exhaustive::Dfs::set_draw)).
    pub draws: u32,
    /// Search with at most 0, then 1, then 2 preemptions and faults (each capped by
    /// `max_preemptions` and `max_faults`), then at those bounds, until a counterexample
    /// turns up (the one with fewest preemptions and faults comes first) or a bound cuts
    /// nothing (then every schedule was covered).
    pub iterative: bool,
    /// When the scenario leaves the tick phase free: search at most this many phase
    /// classes (see [`PhaseCoverage`]); `None`, every class while the searches so far
    /// took fewer than [`PHASE_BUDGET`](super::PHASE_BUDGET) executions.
    pub max_phases: Option<usize>,
    /// Threads each search runs on, sharing its tree (see
    /// [`Share`](crate::exhaustive::dfs::Share)): the same verdict and the same first
    /// counterexample as one thread. 1: one thread.
    pub jobs: usize,
}

impl Default for ExploreOptions {
    fn default() -> ExploreOptions {
        ExploreOptions {
            max_preemptions: None,
            max_faults: None,
            reduce: true,
            max_executions: None,
            keep_going: false,
            cache: true,
            symmetry: true,
            summaries: true,
            timing: true,
            draws: 1,
            iterative: false,
            max_phases: None,
            jobs: 1,
        }
    }
}

impl ExploreOptions {
    /// The search a scenario's `[explore]` table asks for: its preemption and fault
    /// bounds, draws and tick-phase classes, with iterative bounding (the smallest
    /// counterexample first), on one thread.
    pub fn for_scenario(scenario: &Scenario) -> ExploreOptions {
        let b = &scenario.bounds;
        ExploreOptions {
            max_preemptions: b.preemptions,
            max_faults: b.faults,
            draws: b.draws,
            max_phases: b.phases,
            iterative: true,
            ..ExploreOptions::default()
        }
    }
}

/// The outcome of an exhaustive exploration.
#[derive(Debug, Clone)]
pub struct ExploreReport {
    /// Executions, pruning and completeness.
    pub stats: DfsStats,
    /// Distinct final server states among complete executions.
    pub distinct_states: usize,
    /// The verdict of every complete execution, as labels (`pass` and each violation).
    pub verdicts: std::collections::BTreeSet<String>,
    /// The preemption bound of the last search (`None`: unbounded, or the bounds cut
    /// nothing, so every schedule was covered).
    pub preemptions_searched: Option<u32>,
    /// The fault bound of the last search (`None`: only the plan's budgets, or the bounds
    /// cut nothing).
    pub faults_searched: Option<u32>,
    /// Draws of the workload searched ([`ExploreOptions::draws`]).
    pub draws_searched: u32,
    /// The first counterexample, if any.
    pub failure: Option<Finding>,
    /// Complete executions that failed (all of them with `keep_going`).
    pub failures: u64,
    /// Calls executed.
    pub calls: u64,
    /// True if stopped by the caller or the execution cap before covering everything.
    pub interrupted: bool,
    /// The tick phases searched.
    pub phases: PhaseCoverage,
    /// Where in a second the explored executions could depend on the tick phase (µs
    /// after a server's boot): the class boundaries.
    pub phase_points: std::collections::BTreeSet<u32>,
}

impl ExploreReport {
    /// Two searches of the same scenario at different phases, as one: counts add up, the
    /// weaker bounds hold, the first counterexample (the sought one first) is kept.
    pub(super) fn merge(self, b: ExploreReport) -> ExploreReport {
        let a = self;
        let weaker = |x: Option<u32>, y: Option<u32>| match (x, y) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let mut stats = b.stats;
        stats.executions += a.stats.executions;
        stats.pruned += a.stats.pruned;
        stats.revisits += a.stats.revisits;
        stats.states += a.stats.states;
        stats.max_depth = stats.max_depth.max(a.stats.max_depth);
        stats.complete = a.stats.complete && b.stats.complete;
        stats.cut_by_bound += a.stats.cut_by_bound;
        stats.symmetric |= a.stats.symmetric;
        stats.summarized |= a.stats.summarized;
        let mut verdicts = a.verdicts;
        verdicts.extend(b.verdicts);
        let mut phase_points = a.phase_points;
        phase_points.extend(b.phase_points);
        ExploreReport {
            stats,
            distinct_states: a.distinct_states + b.distinct_states,
            verdicts,
            preemptions_searched: weaker(a.preemptions_searched, b.preemptions_searched),
            faults_searched: weaker(a.faults_searched, b.faults_searched),
            draws_searched: a.draws_searched.min(b.draws_searched),
            failure: a.failure.or(b.failure),
            failures: a.failures + b.failures,
            calls: a.calls + b.calls,
            interrupted: a.interrupted || b.interrupted,
            phases: PhaseCoverage::default(),
            phase_points,
        }
    }

    /// What the search covered, as one sentence that names every bound it holds under:
    /// "every schedule with at most 2 preemptions and at most 1 fault (evict), 3 clients,
    /// all 4 tick-phase classes (…)". With [`ExploreReport::fixed`], the whole statement
    /// a "no violation" makes; the command line, the reports and the model API print it.
    pub fn covered(&self, scenario: &Scenario) -> String {
        let plan = &scenario.config.faults;
        let kinds: Vec<&str> = plan
            .rules
            .iter()
            .filter(|(_, r)| r.max > 0)
            .map(|(k, _)| k.name())
            .collect();
        let faults_of = |n: String| {
            if kinds.is_empty() {
                n
            } else {
                format!("{n} ({})", kinds.join(", "))
            }
        };
        let bounds = match (self.preemptions_searched, self.faults_searched) {
            (None, None) if kinds.is_empty() => String::new(),
            (None, None) => format!(
                " with {}",
                faults_of("the fault plan's budgets of faults".into())
            ),
            (p, f) => {
                let p = p.map_or("any number of preemptions".into(), |p| {
                    format!("at most {p} preemption{}", plural(p.into()))
                });
                let f = match f {
                    _ if kinds.is_empty() => "no faults in the plan".to_string(),
                    None => faults_of("the fault plan's budgets of faults".into()),
                    Some(f) => faults_of(format!("at most {f} fault{}", plural(f.into()))),
                };
                format!(" with {p} and {f}")
            }
        };
        let draws = match self.draws_searched {
            0 | 1 => String::new(),
            n => format!(", {n} draws of the workload"),
        };
        let mut notes = Vec::new();
        if self.stats.symmetric {
            notes.push(
                "interchangeable: schedules that differ only by which client is which counted once",
            );
        }
        if self.stats.summarized {
            notes.push("each client's past kept as the summary its code declares");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        format!(
            "every schedule{bounds}, {} clients{notes}{draws}, {}",
            scenario.clients,
            self.phases.describe()
        )
    }

    /// What the search left fixed: the instants calls run at, and the workload's draws.
    pub fn fixed(options: &ExploreOptions) -> String {
        let timing = if options.timing {
            format!(
                "each call at the earliest instant of its latency window or the first of each second the window crosses (at most {})",
                crate::exec::MAX_EDGES
            )
        } else {
            "each call at the earliest instant of its latency window".into()
        };
        match options.draws {
            0 | 1 => format!("{timing}, the workload's own draws fixed by when it starts"),
            n => format!(
                "{timing}, {n} draws of the workload (each client's first call at k/{n} of its window)"
            ),
        }
    }
}
