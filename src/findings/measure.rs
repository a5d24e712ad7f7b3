//! Measuring one scenario file for the findings report: every execution of a fixed
//! budget run to its end (no stop at the first failure), so the violation rate is a
//! rate; the numbers of each violation and each metric as distributions; the first
//! failure shrunk, as the counterexample.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use mcsim::model::Family;
use mcsim::report::timeline::Timeline;
use mcsim::run::{self, FaultFigures, RunOptions, RunReport, Summary};
use mcsim::scenario::{Scenario, StrategyKind};

/// Executions each measurement runs.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    /// Per scenario that is not a sweep (at least the scenario's own budget).
    pub executions: u64,
    /// Per point of a sweep (at least the scenario's own budget).
    pub point_executions: u64,
    /// Per client count of a variant's client sweep.
    pub client_executions: u64,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            executions: 1000,
            point_executions: 200,
            client_executions: 200,
        }
    }
}

/// A distribution: a metric over executions, or a violation's number over the
/// executions that broke the invariant.
#[derive(Debug, Clone, Serialize)]
pub struct Distribution {
    /// `counter.lost`, or `invariant.number` for a violation's number.
    pub name: String,
    /// True for a violation's number (counted over failing executions only).
    pub at_violation: bool,
    /// Values counted.
    pub count: u64,
    /// Mean, median, 90th percentile, largest.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest.
    pub max: f64,
    /// Each value (rounded when there were many) with its count.
    pub histogram: Vec<(f64, u64)>,
}

impl Distribution {
    fn of(name: &str, at_violation: bool, s: &Summary) -> Distribution {
        Distribution {
            name: name.to_string(),
            at_violation,
            count: s.count,
            mean: s.mean(),
            p50: s.histogram.quantile(0.5).unwrap_or(0.0),
            p90: s.histogram.quantile(0.9).unwrap_or(0.0),
            max: s.max,
            histogram: s.histogram.counts().collect(),
        }
    }

    /// Which executions it is over: `over the 12 violating executions`, `over all 1000
    /// executions`, or, for a figure only some executions record (how long two holders
    /// overlapped, recorded where they did), `over the 12 executions that recorded it`.
    pub fn over(&self, executions: u64) -> String {
        if self.at_violation {
            format!("over the {} violating executions", self.count)
        } else if self.count == executions {
            format!("over all {} executions", self.count)
        } else {
            format!("over the {} executions that recorded it", self.count)
        }
    }

    /// `mean 1.54, median 2, p90 2, max 2`.
    pub fn brief(&self) -> String {
        format!(
            "mean {}, median {}, p90 {}, max {}",
            short(self.mean),
            short(self.p50),
            short(self.p90),
            short(self.max)
        )
    }
}

/// A number as the report prints it: at most three decimals, no trailing zeros.
pub fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// A shrunk counterexample.
#[derive(Debug, Clone, Serialize)]
pub struct Counterexample {
    /// Its verdict.
    pub label: String,
    /// The command that replays it.
    pub replay: String,
    /// Clients, steps, calls and faults after shrinking.
    pub size: String,
    /// The swimlane's data.
    pub timeline: Timeline,
}

/// One scenario, or one point of a sweep, measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The point's swept values (`rate_per_s=0.5`); empty for a whole scenario.
    pub point: Vec<String>,
    /// Executions run.
    pub executions: u64,
    /// Executions whose verdict was not `pass`.
    pub failing: u64,
    /// Executions per verdict label.
    pub verdicts: BTreeMap<String, u64>,
    /// Per fault kind: injected, and how many bit.
    pub faults: BTreeMap<String, FaultFigures>,
    /// Each metric and each violation's numbers.
    pub distributions: Vec<Distribution>,
    /// Why it ran fewer executions than asked ([`SCENARIO_CAP`]), or none.
    pub cut: Option<String>,
}

impl Measured {
    fn of(point: Vec<String>, r: &RunReport) -> Measured {
        let mut distributions: Vec<Distribution> = r
            .at_violation
            .iter()
            .map(|(n, s)| Distribution::of(n, true, s))
            .collect();
        distributions.extend(r.metrics.iter().map(|(n, s)| Distribution::of(n, false, s)));
        Measured {
            point,
            executions: r.executions,
            failing: r.failing(),
            verdicts: r.verdicts.clone(),
            faults: r.faults.clone(),
            distributions,
            cut: None,
        }
    }

    fn cut(self, cut: Option<String>) -> Measured {
        Measured { cut, ..self }
    }

    /// The executions run, with why they are fewer than asked if they are.
    pub fn executions_text(&self) -> String {
        match &self.cut {
            Some(cut) => format!("{} ({cut})", self.executions),
            None => self.executions.to_string(),
        }
    }

    /// The distribution named `name`, if it was recorded.
    pub fn distribution(&self, name: &str) -> Option<&Distribution> {
        self.distributions.iter().find(|d| d.name == name)
    }
}

/// One scenario file measured.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioFindings {
    /// Its name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// What it shows.
    pub description: String,
    /// Recipe family and variant.
    pub recipe: String,
    /// Variant.
    pub variant: String,
    /// Clients.
    pub clients: usize,
    /// The verdict its file expects.
    pub expect: String,
    /// True for a sweep.
    pub sweep: bool,
    /// The whole run (a sweep's points summed).
    pub total: Measured,
    /// A sweep's points.
    pub points: Vec<Measured>,
    /// The first failure, shrunk.
    pub counterexample: Option<Counterexample>,
    /// Whether its counterexample replayed on a real memcached: `Ok(version)` or the
    /// reason it did not; `None` when not tried (a sweep, a pass, or no server).
    pub confirmed: Option<Result<String, String>>,
    /// A file that could not be read.
    pub error: Option<String>,
}

impl ScenarioFindings {
    /// A scenario file that could not be read, and why.
    fn unread(name: String, file: String, error: String) -> ScenarioFindings {
        ScenarioFindings {
            name,
            file,
            description: String::new(),
            recipe: String::new(),
            variant: String::new(),
            clients: 0,
            expect: String::new(),
            sweep: false,
            total: Measured::of(Vec::new(), &RunReport::default()),
            points: Vec::new(),
            counterexample: None,
            confirmed: None,
            error: Some(error),
        }
    }

    /// True when some execution broke it.
    pub fn breaks(&self) -> bool {
        self.total.failing > 0
    }

    /// Each fault kind as `kind injected/bit`, or `–`.
    pub fn faults_text(&self) -> String {
        let faults: Vec<String> = self
            .total
            .faults
            .iter()
            .map(|(k, f)| format!("{k} {}/{}", f.injected, f.bit))
            .collect();
        if faults.is_empty() {
            "–".into()
        } else {
            faults.join(", ")
        }
    }

    /// Whether its counterexample was confirmed on memcached, in words.
    pub fn memcached_text(&self) -> String {
        match &self.confirmed {
            Some(Ok(version)) => format!("confirmed ({version})"),
            Some(Err(why)) => format!("not confirmed: {why}"),
            None => "–".into(),
        }
    }
}

/// Wall time the executions of one scenario, or of one point of a sweep, may take: one
/// whose executions are long (a livelock spun to its detector, an event log of
/// thousands of events) runs fewer, and the report says so.
pub const SCENARIO_CAP: std::time::Duration = std::time::Duration::from_secs(20);

/// Executions run between two looks at the clock against [`SCENARIO_CAP`].
const BETWEEN_LOOKS: u64 = 25;

/// Every execution of the budget (or as many as [`SCENARIO_CAP`] allows: the second
/// value says where it stopped), each run on past its first violation to its end, so
/// the end checks record by how much it broke ([`ExecConfig::past_violation`]); the
/// first failure, shrunk when asked, is taken again from the same execution stopped at
/// its violation, as `mcsim replay` runs it.
///
/// [`ExecConfig::past_violation`]: mcsim::ExecConfig::past_violation
fn run_all(s: &Scenario, executions: u64, shrink: bool) -> (RunReport, Option<String>) {
    let mut options = RunOptions::from_scenario(s);
    // Rates under the plan's own fault probabilities: `random`, not the search default.
    options.strategy = StrategyKind::Random;
    options.keep_going = true;
    options.shrink = false;
    let first_seed = options.seed;
    let wanted = executions.max(s.executions).max(1);
    let mut measuring = s.clone();
    measuring.config.past_violation = true;
    // Execution `i` runs from seed `first_seed + i` whatever the slices: the same
    // executions as one run of the whole budget.
    let started = std::time::Instant::now();
    let (mut report, mut cut) = (RunReport::default(), None);
    while report.executions < wanted {
        if report.executions > 0 && started.elapsed() > SCENARIO_CAP {
            cut = Some(format!(
                "stopped after {} executions at the {} s cap",
                report.executions,
                SCENARIO_CAP.as_secs()
            ));
            break;
        }
        options.seed = first_seed.wrapping_add(report.executions);
        options.executions = BETWEEN_LOOKS.min(wanted - report.executions);
        let slice = run::run(&measuring, &options);
        if report.first_failure.is_none() {
            report.first_failure = slice.first_failure.clone();
        }
        report.absorb(&slice);
    }
    let first = report.first_failure.as_ref().and_then(|f| f.seed);
    if let (true, Some(seed)) = (shrink, first) {
        // The executions up to it again, stopping at violations: the same first failure.
        options.seed = first_seed;
        options.executions = seed.wrapping_sub(first_seed) + 1;
        options.shrink = true;
        report.first_failure = run::run(s, &options).first_failure;
    }
    (report, cut)
}

fn counterexample(s: &Scenario, r: &RunReport) -> Option<Counterexample> {
    let f = r.first_failure.as_ref()?;
    Some(Counterexample {
        label: f.execution.verdict.label(),
        replay: mcsim::report::replay_lines(s, StrategyKind::Random, f)
            .last()
            .map(|l| l.command.clone())
            .unwrap_or_default(),
        size: f.size(s).to_string(),
        timeline: Timeline::of(&f.execution, f.clients),
    })
}

/// Measures the scenario file `path`: each point at its budget, every execution run.
pub fn scenario(path: &Path, families: &[&'static dyn Family], b: Budgets) -> ScenarioFindings {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = path.display().to_string();
    let points = match mcsim::scenario::load_points(path, families) {
        Ok(p) => p,
        Err(e) => return ScenarioFindings::unread(stem, file, format!("{e:#}")),
    };
    let sweep = points.len() > 1;
    let budget = if sweep {
        b.point_executions
    } else {
        b.executions
    };
    let mut total = RunReport::default();
    let mut measured = Vec::new();
    let mut shown = None;
    let mut cuts = Vec::new();
    for s in &points {
        let (r, cut) = run_all(s, budget, shown.is_none());
        if shown.is_none() {
            shown = counterexample(s, &r);
        }
        if sweep {
            measured.push(Measured::of(s.point.clone(), &r).cut(cut.clone()));
        }
        cuts.extend(cut);
        total.absorb(&r);
    }
    let cut = match cuts.as_slice() {
        [] => None,
        [one] if !sweep => Some(one.clone()),
        many => Some(format!(
            "{} of {} points stopped at the {} s cap",
            many.len(),
            points.len(),
            SCENARIO_CAP.as_secs()
        )),
    };
    let first = &points[0];
    ScenarioFindings {
        // A sweep's points are named after their values; the sweep, after its file.
        name: if sweep { stem } else { first.name.clone() },
        file,
        description: first.description.clone(),
        recipe: first.recipe.clone(),
        variant: first.variant.clone(),
        clients: first.clients,
        expect: first.expect.clone(),
        sweep,
        total: Measured::of(Vec::new(), &total).cut(cut),
        points: measured,
        counterexample: shown,
        confirmed: None,
        error: None,
    }
}

/// One client count of a variant's client sweep.
#[derive(Debug, Clone, Serialize)]
pub struct ClientPoint {
    /// Clients.
    pub clients: usize,
    /// Executions run.
    pub executions: u64,
    /// Executions that failed.
    pub failing: u64,
    /// Why it ran fewer executions than asked, or none.
    pub cut: Option<String>,
}

/// The client counts of a client sweep.
pub const CLIENT_COUNTS: [usize; 4] = [2, 4, 8, 16];

/// Wall time one client count may take. Some invariants (linearizability) cost
/// exponentially more with clients: a count that reaches it runs fewer executions, and
/// the larger counts are not run.
pub const CLIENT_POINT_CAP: std::time::Duration = std::time::Duration::from_secs(10);

/// A count runs only if one execution at the count before it took at most this long:
/// doubling the clients can cost an invariant's check a thousandfold, time and memory.
pub const NEXT_COUNT_MAX_COST: std::time::Duration = std::time::Duration::from_millis(2);

/// Runs the scenario file `path` (not a sweep) at each of [`CLIENT_COUNTS`] clients,
/// from the scenario's seed, up to the budget or [`CLIENT_POINT_CAP`] per count.
pub fn clients(
    path: &Path,
    families: &[&'static dyn Family],
    b: Budgets,
) -> Result<Vec<ClientPoint>, String> {
    let s = Scenario::load(path, families).map_err(|e| format!("{e:#}"))?;
    let mut out: Vec<ClientPoint> = Vec::new();
    // The last count that ran, and whether it was cut short.
    let mut last_run: Option<(usize, bool)> = None;
    // The mean wall time of one execution at that count.
    let mut last_cost = std::time::Duration::ZERO;
    for n in CLIENT_COUNTS {
        if let Some((prev, was_cut)) = last_run
            && (was_cut || last_cost > NEXT_COUNT_MAX_COST)
        {
            out.push(ClientPoint {
                clients: n,
                executions: 0,
                failing: 0,
                cut: Some(format!(
                    "not run: at {prev} clients one execution took {:.1} ms",
                    last_cost.as_secs_f64() * 1e3
                )),
            });
            continue;
        }
        let s = match s.with_clients(n) {
            Ok(s) => s,
            // A count the family refuses (too few clients for its roles): said, and the
            // next count tried.
            Err(e) => {
                out.push(ClientPoint {
                    clients: n,
                    executions: 0,
                    failing: 0,
                    cut: Some(format!("not run: {e:#}")),
                });
                continue;
            }
        };
        let started = std::time::Instant::now();
        let (mut executions, mut failing) = (0, 0);
        let mut cut = None;
        while executions < b.client_executions.max(1) {
            if started.elapsed() > CLIENT_POINT_CAP {
                cut = Some(format!(
                    "stopped after {executions} executions at the {} s cap",
                    CLIENT_POINT_CAP.as_secs()
                ));
                break;
            }
            let mut options = RunOptions::from_scenario(&s);
            // Rates under the plan's fault probabilities, as every other figure here.
            options.strategy = StrategyKind::Random;
            options.seed = s.seed.wrapping_add(executions);
            options.executions = 1;
            options.keep_going = true;
            options.shrink = false;
            let r = run::run(&s, &options);
            executions += r.executions;
            failing += r.failing();
        }
        last_cost = started.elapsed() / executions.max(1) as u32;
        last_run = Some((n, cut.is_some()));
        out.push(ClientPoint {
            clients: n,
            executions,
            failing,
            cut,
        });
    }
    Ok(out)
}
